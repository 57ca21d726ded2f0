//! Curation requests as every interface receives them (the CLI's `forget`,
//! `edit`, `pin`, `redact`, the HTTP API, the MCP `correct` tool): ids in the
//! one id grammar, a session or a project named as elsewhere, a type in the
//! one type vocabulary. Turns them into the store's requests
//! ([`mnemo_store::curate`]) and its errors into input errors.

use std::path::Path;

use mnemo_core::model::OBSERVATION_TYPES;
use mnemo_store::Store;
use mnemo_store::curate::{CurateError, Forget, Items};

use crate::ids::{ItemRef, Kind};
use crate::scope::{self, Resolved};
use crate::types::{self, Allowed};
use crate::{RecallError, Result};

/// What to forget, as asked: exactly one of the three.
#[derive(Debug, Clone, Default)]
pub struct ForgetRequest<'a> {
    pub ids: &'a [String],
    /// The platform's session id, exact.
    pub session: Option<&'a str>,
    /// A directory, a stored root or a project name (see [`scope`]).
    pub project: Option<&'a str>,
}

/// The store's forget request for `req`, or an input error when it names
/// nothing, more than one kind of thing, or something not stored.
pub fn forget_target(store: &Store, req: &ForgetRequest<'_>, cwd: &Path) -> Result<Forget> {
    let given = usize::from(!req.ids.is_empty())
        + usize::from(req.session.is_some())
        + usize::from(req.project.is_some());
    if given != 1 {
        return Err(RecallError::Input(
            "say what to forget: ids (#12 S3 P4), or a session, or a project (exactly one)"
                .to_owned(),
        ));
    }
    if let Some(session) = req.session {
        let ids = store
            .sessions_by_platform_id(session)
            .map_err(store_error)?;
        if ids.is_empty() {
            return Err(RecallError::Input(format!(
                "no session `{}`: give the platform's whole session id (`mnemo show` or the \
                 records' session.session_id)",
                session.trim()
            )));
        }
        return Ok(Forget::Sessions(ids));
    }
    if let Some(project) = req.project {
        return match scope::resolve_arg(store.conn(), project, cwd)? {
            Resolved::Found(p) => Ok(Forget::Project(p.id)),
            Resolved::Unknown(identity) => Err(RecallError::Input(format!(
                "nothing is recorded for the project at {}",
                identity.root.display()
            ))),
        };
    }
    Ok(Forget::Items(items(&ItemRef::parse_list(req.ids)?)))
}

/// Row ids by kind.
pub fn items(refs: &[ItemRef]) -> Items {
    let mut items = Items::default();
    for r in refs {
        match r.kind {
            Kind::Observation => items.observations.push(r.id),
            Kind::Summary => items.summaries.push(r.id),
            Kind::Prompt => items.prompts.push(r.id),
        }
    }
    items
}

/// The id of an observation to edit or pin: `#12` or `12` (a summary or a
/// prompt cannot be edited).
pub fn observation_id(text: &str) -> Result<i64> {
    let id = ItemRef::parse(text)?;
    if id.kind != Kind::Observation {
        return Err(RecallError::Input(format!(
            "`{}` is a {}: only observations (#12) can be edited or pinned",
            text.trim(),
            id.kind.as_str()
        )));
    }
    Ok(id.id)
}

/// The canonical observation type for an edit (`fix` is bugfix); a kind
/// (`observation`, `summary`) or an unknown name is an input error.
pub fn observation_type(store: &Store, t: &str) -> Result<String> {
    let name = types::canonical(t);
    let is_kind = name == types::ANY_OBSERVATION || types::OTHER_KINDS.contains(&name.as_str());
    // A type outside the vocabulary that stored observations carry (an
    // import's own) is accepted, as the filters accept it.
    let known = OBSERVATION_TYPES.contains(&name.as_str())
        || (!is_kind
            && types::check(
                store.conn(),
                std::slice::from_ref(&name),
                Allowed::Observations,
            )
            .is_ok());
    if known {
        return Ok(name);
    }
    Err(RecallError::Input(format!(
        "`{}` is not an observation type: use {}",
        t.trim(),
        types::accepted(Allowed::Observations).trim_start_matches("observation (obs), ")
    )))
}

/// The store's curation error as an input error (unknown ids, a bad edit)
/// or a database error.
pub fn curate_error(e: CurateError) -> RecallError {
    match e {
        CurateError::Unknown(ids) => RecallError::Input(format!(
            "no such item: {} (nothing was changed)",
            ids.join(", ")
        )),
        CurateError::Invalid(message) => RecallError::Input(message),
        CurateError::Store(e) => store_error(e),
    }
}

fn store_error(e: mnemo_store::StoreError) -> RecallError {
    match e {
        mnemo_store::StoreError::Sqlite { source, .. } => RecallError::Sql(source),
        other => RecallError::Input(other.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_observations_are_edited_and_types_are_checked() {
        assert_eq!(observation_id("#12").unwrap(), 12);
        assert_eq!(observation_id("12").unwrap(), 12);
        assert!(
            observation_id("S3")
                .unwrap_err()
                .to_string()
                .contains("summary")
        );
        let tmp = tempfile::tempdir().unwrap();
        let store =
            Store::open(&tmp.path().join("m.db"), std::time::Duration::from_secs(1)).unwrap();
        assert_eq!(observation_type(&store, "fix").unwrap(), "bugfix");
        assert_eq!(observation_type(&store, "[dec]").unwrap(), "decision");
        assert!(observation_type(&store, "observation").is_err());
        assert!(observation_type(&store, "nonsense").is_err());
    }

    #[test]
    fn forget_wants_exactly_one_selector() {
        let tmp = tempfile::tempdir().unwrap();
        let store =
            Store::open(&tmp.path().join("m.db"), std::time::Duration::from_secs(1)).unwrap();
        let ids = vec!["#1".to_owned(), "S2".to_owned()];
        let none = ForgetRequest::default();
        assert!(forget_target(&store, &none, tmp.path()).is_err());
        let two = ForgetRequest {
            ids: &ids,
            session: Some("abc"),
            project: None,
        };
        assert!(forget_target(&store, &two, tmp.path()).is_err());
        let items_only = ForgetRequest {
            ids: &ids,
            ..Default::default()
        };
        match forget_target(&store, &items_only, tmp.path()).unwrap() {
            Forget::Items(i) => {
                assert_eq!(i.observations, [1]);
                assert_eq!(i.summaries, [2]);
            }
            other => panic!("{other:?}"),
        }
        let unknown_session = ForgetRequest {
            session: Some("nope"),
            ..Default::default()
        };
        let err = forget_target(&store, &unknown_session, tmp.path()).unwrap_err();
        assert!(err.to_string().contains("no session `nope`"));
    }
}
