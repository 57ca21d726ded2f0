//! The vocabulary of item types, shared by the CLI (`-t`), the MCP tools
//! (`type`) and the HTTP API (`?type=`): the observation types of
//! [`mnemo_core::model::OBSERVATION_TYPES`], `observation` for any of them,
//! `summary` and `prompt` where an interface lists every kind, and the short
//! names people type (`fix`,
//! `feat`, the index's `[disc]` markers). A type outside the vocabulary is
//! accepted only when stored observations carry it (an import may bring its
//! own); anything else is an input error that lists what is accepted.

use mnemo_core::model::OBSERVATION_TYPES;
use rusqlite::{Connection, OptionalExtension};

use crate::{RecallError, Result};

/// Short names and the type each stands for.
const ALIASES: &[(&str, &str)] = &[
    ("fix", "bugfix"),
    ("bug", "bugfix"),
    ("feat", "feature"),
    ("refac", "refactor"),
    ("chg", "change"),
    ("disc", "discovery"),
    ("find", "discovery"),
    ("dec", "decision"),
    ("mem", "memory"),
    ("summaries", "summary"),
    ("turn", "summary"),
    ("prompts", "prompt"),
    ("observations", "observation"),
    ("obs", "observation"),
];

/// Any observation, whatever its type.
pub const ANY_OBSERVATION: &str = "observation";

/// Kinds that are not observation types but may be asked for by type.
pub const OTHER_KINDS: &[&str] = &["summary", "prompt"];

/// The canonical name of `t` (`[fix]`, `Fix` and `bugfix` are `bugfix`);
/// an unknown name comes back lowercased.
pub fn canonical(t: &str) -> String {
    let t = t
        .trim()
        .trim_matches(|c| c == '[' || c == ']')
        .to_ascii_lowercase();
    ALIASES
        .iter()
        .find(|(alias, _)| *alias == t)
        .map_or(t, |(_, name)| (*name).to_owned())
}

/// Which kinds a request may name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Allowed {
    /// Observation types only (`/api/observations`).
    Observations,
    /// Observation types, `summary` and `prompt` (search).
    Everything,
}

/// The canonical names of `types` (comma-separated items allowed), or an
/// input error naming the first unknown one and listing what is accepted.
pub fn check(conn: &Connection, types: &[String], allowed: Allowed) -> Result<Vec<String>> {
    let mut out = Vec::new();
    for t in types.iter().flat_map(|t| t.split(',')) {
        if t.trim().is_empty() {
            continue;
        }
        let name = canonical(t);
        let known = name == ANY_OBSERVATION
            || OBSERVATION_TYPES.contains(&name.as_str())
            || (allowed == Allowed::Everything && OTHER_KINDS.contains(&name.as_str()))
            || stored(conn, &name)?;
        if !known {
            return Err(RecallError::Input(format!(
                "unknown type `{}`: use {}",
                t.trim(),
                accepted(allowed)
            )));
        }
        if !out.contains(&name) {
            out.push(name);
        }
    }
    Ok(out)
}

/// Whether some stored observation has this type.
fn stored(conn: &Connection, name: &str) -> Result<bool> {
    Ok(conn
        .prepare_cached("SELECT 1 FROM observations WHERE type = ?1 LIMIT 1")?
        .query_row([name], |_| Ok(()))
        .optional()?
        .is_some())
}

/// `bugfix (fix), feature (feat), ...` for messages.
pub fn accepted(allowed: Allowed) -> String {
    let mut names = vec![ANY_OBSERVATION];
    names.extend(OBSERVATION_TYPES);
    if allowed == Allowed::Everything {
        names.extend(OTHER_KINDS);
    }
    names
        .iter()
        .map(|name| {
            match ALIASES
                .iter()
                .find(|(alias, n)| n == name && alias.len() < name.len())
            {
                Some((alias, _)) => format!("{name} ({alias})"),
                None => (*name).to_owned(),
            }
        })
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn conn() -> Connection {
        let c = Connection::open_in_memory().unwrap();
        c.execute_batch(
            "CREATE TABLE observations (type TEXT); INSERT INTO observations VALUES ('custom');",
        )
        .unwrap();
        c
    }

    #[test]
    fn aliases_and_markers_are_canonical() {
        assert_eq!(canonical("[fix]"), "bugfix");
        assert_eq!(canonical("Feature"), "feature");
        assert_eq!(canonical("summaries"), "summary");
        assert_eq!(canonical("custom"), "custom");
    }

    #[test]
    fn unknown_types_are_errors_listing_the_vocabulary() {
        let c = conn();
        let ok = check(
            &c,
            &["fix,feat".into(), "custom".into()],
            Allowed::Observations,
        )
        .unwrap();
        assert_eq!(ok, ["bugfix", "feature", "custom"]);
        assert_eq!(
            check(&c, &["obs".into()], Allowed::Observations).unwrap(),
            ["observation"]
        );
        assert_eq!(
            check(&c, &["summary".into()], Allowed::Everything).unwrap(),
            ["summary"]
        );
        let err = check(&c, &["summary".into()], Allowed::Observations)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("unknown type `summary`") && !err.contains("prompt"),
            "{err}"
        );
        let err = check(&c, &["bogus".into()], Allowed::Everything)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("observation (obs), bugfix (fix), feature (feat)")
                && err.contains("summary (turn), prompt"),
            "{err}"
        );
    }
}
