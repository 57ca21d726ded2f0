//! One version of one record as it travels (sealed) between machines: an
//! observation or a summary in the export shape of mnemo-store (minus row
//! ids and local marks, and minus the user's prompt unless `[sync] raw` is
//! on), or a forget. Reading a
//! version out of the store, and applying one to it: a new record is
//! imported (so it passes the local privacy rules), a newer version of a
//! known one is applied as an edit and a pin (last writer by clock wins),
//! a forget removes it for good. Applying a version twice changes nothing.

use std::collections::HashMap;

use mnemo_core::privacy::Sanitizer;
use mnemo_store::Store;
use mnemo_store::curate::{Edit, Forget, Items, REDACTED};
use mnemo_store::shape::{
    OBSERVATION_FROM, OBSERVATION_SELECT_STORED, SUMMARY_FROM, SUMMARY_SELECT, observation_row,
    summary_row,
};
use rusqlite::{Connection, OptionalExtension, params};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

pub const OBSERVATION: &str = "observation";
pub const SUMMARY: &str = "summary";
pub const FORGET: &str = "forget";

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Version {
    pub uid: String,
    /// `observation`, `summary` or `forget`.
    pub kind: String,
    /// The hybrid logical clock of this version (see [`crate::hlc`]).
    pub hlc: String,
    /// Who first wrote the record: a name and the start of their public key.
    pub author: String,
    /// The record (absent for a forget).
    pub body: Option<Value>,
}

/// Fields of the export shape that stay on this machine. `freshness` says
/// whether this checkout's files changed since the record was written: a
/// fact about this machine, computed again wherever the record is read.
const LOCAL_ONLY: &[&str] = &[
    "id",
    "ref",
    "created_at_ms",
    "edited",
    "prompt_host_text",
    "freshness",
];
/// The prompt of an observation's turn: sent only when the user turned
/// `[sync] raw` on.
const PROMPT: &str = "prompt";

/// A record as it would travel, with its local author (None: written here
/// or by this person).
pub type Stored = (Value, Option<String>);

/// The record `uid` of `kind` as it would travel (with its turn's prompt
/// when `prompts`); None when it is not stored.
pub fn read(
    conn: &Connection,
    kind: &str,
    uid: &str,
    prompts: bool,
) -> rusqlite::Result<Option<Stored>> {
    conn.prepare_cached(&select(kind, "= ?1"))?
        .query_row([uid], |r| travelling(kind, r, prompts))
        .optional()
        .map(Option::flatten)
}

/// The records of `kind` among `uids` that are stored, as they would
/// travel, by uid: one query for a whole page.
pub fn read_many(
    conn: &Connection,
    kind: &str,
    uids: &[&str],
    prompts: bool,
) -> rusqlite::Result<HashMap<String, Stored>> {
    let list = serde_json::to_string(uids).unwrap_or_else(|_| "[]".into());
    let mut stmt = conn.prepare_cached(&select(kind, "IN (SELECT value FROM json_each(?1))"))?;
    let rows = stmt.query_map([list], |r| {
        Ok((r.get::<_, String>(1)?, travelling(kind, r, prompts)?))
    })?;
    let mut found = HashMap::new();
    for row in rows {
        if let (uid, Some(stored)) = row? {
            found.insert(uid, stored);
        }
    }
    Ok(found)
}

/// The query of records of `kind` whose uid matches `filter`, without
/// freshness (it stays on this machine: computing it would `stat` every
/// file of every record sent).
fn select(kind: &str, filter: &str) -> String {
    match kind {
        OBSERVATION => {
            format!(
                "SELECT {OBSERVATION_SELECT_STORED} FROM {OBSERVATION_FROM} WHERE o.uid {filter}"
            )
        }
        _ => format!("SELECT {SUMMARY_SELECT} FROM {SUMMARY_FROM} WHERE m.uid {filter}"),
    }
}

/// One row of [`select`] without the fields that stay on this machine.
fn travelling(
    kind: &str,
    r: &rusqlite::Row<'_>,
    prompts: bool,
) -> rusqlite::Result<Option<Stored>> {
    let (value, author) = match kind {
        OBSERVATION => {
            let record = observation_row(r)?;
            (serde_json::to_value(&record), record.author)
        }
        _ => {
            let record = summary_row(r)?;
            (serde_json::to_value(&record), record.author)
        }
    };
    let Ok(Value::Object(mut map)) = value else {
        return Ok(None);
    };
    for field in LOCAL_ONLY {
        map.remove(*field);
    }
    if !prompts || map.get(PROMPT).is_some_and(Value::is_null) {
        map.remove(PROMPT);
    }
    Ok(Some((Value::Object(map), author)))
}

/// A digest of a record's content: an unchanged record is not sent again.
pub fn digest(body: Option<&Value>) -> String {
    let text = body.map_or_else(|| "forgotten".to_owned(), Value::to_string);
    Sha256::digest(text.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// The project a record belongs to (its root as stored here).
pub fn project_root(body: &Value) -> Option<&str> {
    body.get("project")?.get("root")?.as_str()
}

/// A shared space's records take this machine's directory of the project.
pub fn with_local_root(mut body: Value, root: Option<&str>) -> Value {
    if let (Some(root), Some(project)) = (root, body.get_mut("project"))
        && let Some(map) = project.as_object_mut()
    {
        map.insert("root".into(), json!(root));
    }
    body
}

fn row_id(conn: &Connection, table: &str, uid: &str) -> rusqlite::Result<Option<i64>> {
    conn.prepare_cached(&format!("SELECT id FROM {table} WHERE uid = ?1"))?
        .query_row([uid], |r| r.get(0))
        .optional()
}

fn table_of(kind: &str) -> &'static str {
    if kind == SUMMARY {
        "summaries"
    } else {
        "observations"
    }
}

/// Removes `uid` for good (it can never be written back); true when it was
/// stored here.
pub fn forget(store: &mut Store, uid: &str) -> anyhow::Result<bool> {
    let observation = row_id(store.conn(), "observations", uid)?;
    let summary = row_id(store.conn(), "summaries", uid)?;
    if observation.is_none() && summary.is_none() {
        store.conn().execute(
            "INSERT OR IGNORE INTO forgotten (uid, forgotten_at) VALUES (?1, ?2)",
            params![
                mnemo_store::curate::forgotten_key(uid),
                mnemo_core::time::now_ms()
            ],
        )?;
        return Ok(false);
    }
    let items = Items {
        observations: observation.into_iter().collect(),
        summaries: summary.into_iter().collect(),
        prompts: Vec::new(),
    };
    store.forget(&Forget::Items(items), false)?;
    Ok(true)
}

/// Stores new records (each body in the export shape, `kind` set) inside
/// the caller's transaction, through the local privacy rules.
pub fn insert(
    tx: &rusqlite::Transaction<'_>,
    bodies: impl IntoIterator<Item = Value>,
    sanitizer: &Sanitizer,
) -> anyhow::Result<()> {
    mnemo_store::export::import_in(tx, bodies, sanitizer)?;
    Ok(())
}

/// The prompt record of a new observation's turn when its version carries
/// the prompt (its author turned `[sync] raw` on); imported after the
/// observation, so its session exists.
pub fn prompt_of(body: &Value) -> Option<Value> {
    let text = body
        .get(PROMPT)?
        .as_str()
        .filter(|t| !t.trim().is_empty())?;
    let uid = body.get("uid")?.as_str()?;
    Some(json!({
        "kind": "prompt",
        "uid": format!("{uid}-prompt"),
        "session": body.get("session")?,
        "prompt_number": body.get("prompt_number")?.as_i64()?,
        "text": text,
        "created_at": body.get("created_at"),
    }))
}

/// Sets who wrote a record that came from another person.
pub fn set_author(
    conn: &Connection,
    kind: &str,
    uid: &str,
    author: Option<&str>,
) -> rusqlite::Result<()> {
    conn.prepare_cached(&format!(
        "UPDATE {} SET author = ?2 WHERE uid = ?1",
        table_of(kind)
    ))?
    .execute(params![uid, author])
    .map(drop)
}

/// Brings a stored record to the content of `body`: a redaction made
/// elsewhere is made here too (the secret is found in the local text, it
/// never travels), then an observation's edited fields and pin are set.
pub fn update(store: &mut Store, kind: &str, uid: &str, body: &Value) -> anyhow::Result<()> {
    let Some((current, _)) = read(store.conn(), kind, uid, true)? else {
        return Ok(());
    };
    for secret in redacted_here(&current, body) {
        store.redact(&secret)?;
    }
    let Some(id) = row_id(store.conn(), "observations", uid)?.filter(|_| kind == OBSERVATION)
    else {
        return Ok(());
    };
    let Some((current, _)) = read(store.conn(), kind, uid, true)? else {
        return Ok(());
    };
    let edit = edit_between(&current, body);
    if !edit.is_empty() {
        store.edit_observation(id, &edit)?;
    }
    let pinned = body.get("pinned").and_then(Value::as_bool);
    if pinned.is_some() && pinned != current.get("pinned").and_then(Value::as_bool) {
        store.pin_observation(id, pinned.unwrap_or(false))?;
    }
    Ok(())
}

/// The texts that `wanted` shows redacted where `current` still has them:
/// each marker of `wanted` stands for what lies between the same
/// neighbouring text in `current`.
fn redacted_here(current: &Value, wanted: &Value) -> Vec<String> {
    let mut found = Vec::new();
    match (current, wanted) {
        (Value::String(old), Value::String(new)) if new.contains(REDACTED) => {
            found.extend(hidden_by_markers(old, new));
        }
        (Value::Array(old), Value::Array(new)) => {
            for (o, n) in old.iter().zip(new) {
                found.extend(redacted_here(o, n));
            }
        }
        (Value::Object(old), Value::Object(new)) => {
            for (key, n) in new {
                if let Some(o) = old.get(key) {
                    found.extend(redacted_here(o, n));
                }
            }
        }
        _ => {}
    }
    found.retain(|s| s.trim().chars().count() >= mnemo_store::curate::REDACT_MIN_CHARS);
    found.sort();
    found.dedup();
    found
}

/// The pieces of `old` that `new` replaced by markers, when the rest of
/// the two texts agrees.
fn hidden_by_markers(old: &str, new: &str) -> Vec<String> {
    let pieces: Vec<&str> = new.split(REDACTED).collect();
    let Some(rest) = old.strip_prefix(pieces[0]) else {
        return Vec::new();
    };
    let mut rest = rest;
    let mut hidden = Vec::new();
    for (i, piece) in pieces.iter().enumerate().skip(1) {
        let last = i == pieces.len() - 1;
        let at = if last {
            rest.len()
                .checked_sub(piece.len())
                .filter(|&a| rest.is_char_boundary(a) && rest[a..] == **piece)
        } else if piece.is_empty() {
            None
        } else {
            rest.find(piece)
        };
        let Some(at) = at.filter(|&a| rest.is_char_boundary(a)) else {
            return Vec::new();
        };
        hidden.push(rest[..at].to_owned());
        rest = &rest[at + piece.len()..];
    }
    hidden.retain(|h| !h.is_empty() && h != REDACTED);
    hidden
}

/// The fields of `wanted` that differ from `current`.
fn edit_between(current: &Value, wanted: &Value) -> Edit {
    let text = |key: &str| {
        let want = wanted.get(key).and_then(Value::as_str)?;
        (current.get(key).and_then(Value::as_str) != Some(want)).then(|| want.to_owned())
    };
    let facts = wanted
        .get("facts")
        .filter(|f| current.get("facts") != Some(*f))
        .and_then(|f| serde_json::from_value(f.clone()).ok());
    Edit {
        title: text("title"),
        subtitle: text("subtitle"),
        narrative: text("narrative"),
        facts,
        obs_type: text("type"),
    }
}

/// True when the record is stored here.
pub fn exists(conn: &Connection, kind: &str, uid: &str) -> rusqlite::Result<bool> {
    row_id(conn, table_of(kind), uid).map(|id| id.is_some())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_edit_names_only_what_differs() {
        let current = json!({"title": "a", "subtitle": "s", "narrative": "n", "facts": ["f"], "type": "discovery"});
        let wanted = json!({"title": "b", "subtitle": "s", "narrative": "n", "facts": ["f", "g"], "type": "discovery"});
        let edit = edit_between(&current, &wanted);
        assert_eq!(edit.title.as_deref(), Some("b"));
        assert_eq!(edit.facts, Some(vec!["f".to_owned(), "g".to_owned()]));
        assert!(edit.subtitle.is_none() && edit.narrative.is_none() && edit.obs_type.is_none());
        assert!(edit_between(&current, &current).is_empty());
    }

    #[test]
    fn a_redaction_made_elsewhere_names_the_local_secret() {
        let current = json!({"narrative": "the token is abc-123-secret, keep it", "facts": ["x abc-123-secret"]});
        let wanted = json!({"narrative": "the token is [REDACTED:manual], keep it", "facts": ["x [REDACTED:manual]"]});
        assert_eq!(redacted_here(&current, &wanted), ["abc-123-secret"]);
        let unrelated = json!({"narrative": "another text [REDACTED:manual]"});
        assert!(
            redacted_here(&current, &unrelated).is_empty(),
            "the rest must agree"
        );
        assert!(
            redacted_here(&wanted, &wanted).is_empty(),
            "already redacted here"
        );
    }

    #[test]
    fn a_shared_record_takes_this_machines_checkout() {
        let body = json!({"project": {"root": "/home/a/app", "name": "app"}});
        let moved = with_local_root(body.clone(), Some("/work/app"));
        assert_eq!(project_root(&moved), Some("/work/app"));
        assert_eq!(with_local_root(body.clone(), None), body);
    }

    #[test]
    fn the_state_of_this_checkouts_files_does_not_travel() {
        let tmp = tempfile::tempdir().unwrap();
        let file = tmp.path().join("lib.rs");
        std::fs::write(&file, "fn a() {}\n").unwrap();
        let store =
            Store::open(&tmp.path().join("m.db"), std::time::Duration::from_secs(1)).unwrap();
        let root = tmp.path().to_string_lossy().into_owned();
        store
            .conn()
            .execute(
                "INSERT INTO projects (id, root, name, created_at) VALUES (1, ?1, 'p', 0)",
                [&root],
            )
            .unwrap();
        mnemo_store::memory::insert_observation(
            store.conn(),
            &mnemo_store::memory::NewObservation {
                uid: "obs-fresh".into(),
                project_id: Some(1),
                kind: "change".into(),
                title: "Rewrote a".into(),
                files_modified: vec![file.to_string_lossy().into_owned()],
                created_at: mnemo_core::time::now_ms(),
                ..Default::default()
            },
        )
        .unwrap();
        let travelling = |store: &Store| {
            read(store.conn(), OBSERVATION, "obs-fresh", false)
                .unwrap()
                .unwrap()
                .0
        };
        let before = travelling(&store);
        assert!(before.get("title").is_some(), "{before}");
        std::fs::write(&file, "fn a() { changed() }\n").unwrap();
        let after = travelling(&store);
        assert!(after.get("freshness").is_none(), "{after}");
        assert_eq!(digest(Some(&before)), digest(Some(&after)));
    }

    /// The shared record shape read with freshness, minus what stays here.
    fn shared_shape(conn: &Connection, uid: &str) -> Value {
        use mnemo_store::shape::OBSERVATION_SELECT;
        let sql = format!("SELECT {OBSERVATION_SELECT} FROM {OBSERVATION_FROM} WHERE o.uid = ?1");
        let record = conn.query_row(&sql, [uid], observation_row).unwrap();
        assert!(record.freshness.is_some(), "the files have baselines");
        let mut value = serde_json::to_value(&record).unwrap();
        let map = value.as_object_mut().unwrap();
        for field in LOCAL_ONLY {
            map.remove(*field);
        }
        map.remove(PROMPT);
        value
    }

    #[test]
    fn the_sync_read_is_the_shared_shape_without_freshness() {
        let tmp = tempfile::tempdir().unwrap();
        let (kept, changed, gone) = (
            tmp.path().join("kept.rs"),
            tmp.path().join("changed.rs"),
            tmp.path().join("gone.rs"),
        );
        for file in [&kept, &changed, &gone] {
            std::fs::write(file, "fn a() {}\n").unwrap();
        }
        let store =
            Store::open(&tmp.path().join("m.db"), std::time::Duration::from_secs(1)).unwrap();
        let conn = store.conn();
        let root = tmp.path().to_string_lossy().into_owned();
        conn.execute(
            "INSERT INTO projects (id, root, name, created_at) VALUES (1, ?1, 'p', 0)",
            [&root],
        )
        .unwrap();
        let name = |p: &std::path::Path| p.to_string_lossy().into_owned();
        for (uid, files) in [
            ("obs-1", vec![name(&kept)]),
            ("obs-2", vec![name(&changed), name(&kept)]),
            ("obs-3", vec![name(&gone), "relative/missing.rs".into()]),
        ] {
            let o = mnemo_store::memory::NewObservation {
                uid: uid.into(),
                project_id: Some(1),
                kind: "change".into(),
                title: format!("Rewrote {uid}"),
                facts: vec!["a fact".into()],
                files_read: files.clone(),
                files_modified: files,
                created_at: mnemo_core::time::now_ms(),
                ..Default::default()
            };
            mnemo_store::memory::insert_observation(conn, &o).unwrap();
        }
        std::fs::write(&changed, "fn a() { changed() }\n").unwrap();
        std::fs::remove_file(&gone).unwrap();
        let uids = ["obs-1", "obs-2", "obs-3"];
        let many = read_many(conn, OBSERVATION, &uids, false).unwrap();
        for uid in uids {
            let expected = shared_shape(conn, uid);
            let (one, _) = read(conn, OBSERVATION, uid, false).unwrap().unwrap();
            assert_eq!(one, expected, "{uid}");
            assert_eq!(many[uid].0, expected, "{uid}");
            assert_eq!(digest(Some(&one)), digest(Some(&expected)), "{uid}");
        }
    }

    #[test]
    fn digests_tell_content_apart_and_forgotten_from_empty() {
        assert_eq!(
            digest(Some(&json!({"a": 1}))),
            digest(Some(&json!({"a": 1})))
        );
        assert_ne!(
            digest(Some(&json!({"a": 1}))),
            digest(Some(&json!({"a": 2})))
        );
        assert_ne!(digest(None), digest(Some(&json!({}))));
    }
}
