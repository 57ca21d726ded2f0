//! The `knowledge` table: a small set of durable items per project (what it
//! is, how to work in it, decisions in force, recurring problems, open
//! threads), each with the weight of its evidence, the records it comes from
//! (provenance) and the files it is anchored to.
//!
//! The worker derives the items from the records after each compressed batch
//! (`mnemo_worker::knowledge`) and [`replace`]s the project's set in place;
//! the SessionStart index reads them with [`items`], one indexed query.

use rusqlite::{Connection, params};
use serde::Serialize;

use crate::{json_list, parse_json_list};

/// The kinds of item, in the order the index shows them.
pub const KINDS: [&str; 7] = [STACK, LAYOUT, COMMAND, CONVENTION, DECISION, OPEN, PROBLEM];
/// A language or ecosystem, from its manifest files.
pub const STACK: &str = "stack";
/// The key of the stack item that says what the project is, in its README's
/// words.
pub const PURPOSE_KEY: &str = "purpose";
/// The directories most worked in.
pub const LAYOUT: &str = "layout";
/// A build, test, lint or run command that passed.
pub const COMMAND: &str = "command";
/// Something the user asked to be done always (or never).
pub const CONVENTION: &str = "convention";
/// A decision no later decision replaced.
pub const DECISION: &str = "decision";
/// Work left open.
pub const OPEN: &str = "open";
/// A failure that recurred across sessions, and what fixed it.
pub const PROBLEM: &str = "problem";
/// The model's revision of an item (`mnemo_worker::consolidate`), kept
/// beside the items so that every offline refresh applies it again: key
/// `kind<TAB>key` of the item revised (`kind<TAB>+N` for an item the model
/// added), text the new text, weight 1 when the item is dropped. Never
/// shown: [`items`] leaves these out, [`revisions`] reads them.
pub const REVISION: &str = "revision";

/// One durable item of a project's knowledge.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct KnowledgeItem {
    pub kind: String,
    /// What makes it the same item when the evidence changes.
    pub key: String,
    pub text: String,
    /// How much evidence: sessions, runs or files, by kind.
    pub weight: i64,
    /// Record refs it was derived from (`#12`, `S3`, `P7`).
    pub sources: Vec<String>,
    /// Files (or directories) it is about.
    pub files: Vec<String>,
    pub updated_at: i64,
}

impl KnowledgeItem {
    pub fn new(kind: &str, key: impl Into<String>, text: impl Into<String>) -> KnowledgeItem {
        KnowledgeItem {
            kind: kind.to_owned(),
            key: key.into(),
            text: text.into(),
            weight: 0,
            sources: Vec::new(),
            files: Vec::new(),
            updated_at: 0,
        }
    }
}

/// Makes `items` the project's knowledge: rows with the same (kind, key)
/// are updated in place (keeping their time when nothing changed), new ones
/// inserted, the rest deleted. One transaction.
pub fn replace(
    conn: &Connection,
    project: i64,
    items: &[KnowledgeItem],
    now_ms: i64,
) -> rusqlite::Result<()> {
    let tx = conn.unchecked_transaction()?;
    tx.execute(
        "CREATE TEMP TABLE IF NOT EXISTS knowledge_keep (kind TEXT, key TEXT)",
        [],
    )?;
    tx.execute("DELETE FROM temp.knowledge_keep", [])?;
    {
        let mut upsert = tx.prepare_cached(
            "INSERT INTO knowledge (project_id, kind, key, text, weight, sources, files, updated_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)
             ON CONFLICT (project_id, kind, key) DO UPDATE SET
                 text = excluded.text, weight = excluded.weight, sources = excluded.sources,
                 files = excluded.files, updated_at = excluded.updated_at
             WHERE text <> excluded.text OR weight <> excluded.weight
                OR sources <> excluded.sources OR files <> excluded.files",
        )?;
        let mut keep = tx.prepare_cached("INSERT INTO temp.knowledge_keep VALUES (?1, ?2)")?;
        for i in items {
            upsert.execute(params![
                project,
                i.kind,
                i.key,
                i.text,
                i.weight,
                json_list(&i.sources),
                json_list(&i.files),
                now_ms
            ])?;
            keep.execute(params![i.kind, i.key])?;
        }
    }
    tx.execute(
        "DELETE FROM knowledge WHERE project_id = ?1 AND NOT EXISTS
         (SELECT 1 FROM temp.knowledge_keep k WHERE k.kind = knowledge.kind AND k.key = knowledge.key)",
        [project],
    )?;
    tx.commit()
}

/// The project's items: by kind in [`KINDS`] order, then heaviest first.
pub fn items(conn: &Connection, project: i64) -> rusqlite::Result<Vec<KnowledgeItem>> {
    let mut all = read(conn, project, false)?;
    let rank = |k: &str| KINDS.iter().position(|x| *x == k).unwrap_or(KINDS.len());
    all.sort_by_key(|i| rank(&i.kind));
    Ok(all)
}

/// The model's revisions of the project's items ([`REVISION`]).
pub fn revisions(conn: &Connection, project: i64) -> rusqlite::Result<Vec<KnowledgeItem>> {
    read(conn, project, true)
}

/// The project's rows: the revisions, or everything else.
fn read(conn: &Connection, project: i64, revisions: bool) -> rusqlite::Result<Vec<KnowledgeItem>> {
    let mut stmt = conn.prepare_cached(
        "SELECT kind, key, text, weight, sources, files, updated_at FROM knowledge
         WHERE project_id = ?1 AND (kind = 'revision') = ?2 ORDER BY kind, weight DESC, key",
    )?;
    stmt.query_map(params![project, revisions], |r| {
        Ok(KnowledgeItem {
            kind: r.get(0)?,
            key: r.get(1)?,
            text: r.get(2)?,
            weight: r.get(3)?,
            sources: parse_json_list(&r.get::<_, String>(4)?),
            files: parse_json_list(&r.get::<_, String>(5)?),
            updated_at: r.get(6)?,
        })
    })?
    .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn store() -> (tempfile::TempDir, crate::Store) {
        let dir = tempfile::tempdir().unwrap();
        let store = crate::Store::open(&dir.path().join("m.db"), std::time::Duration::from_secs(1))
            .unwrap();
        (dir, store)
    }

    #[test]
    fn replacing_updates_in_place_and_drops_what_is_gone() {
        let (_d, store) = store();
        let conn = store.conn();
        let mut test = KnowledgeItem::new(COMMAND, "cargo test", "`cargo test` passed");
        test.weight = 2;
        let stack = KnowledgeItem::new(STACK, "Rust", "Rust (Cargo.toml)");
        replace(conn, 1, &[test.clone(), stack.clone()], 10).unwrap();
        let got = items(conn, 1).unwrap();
        assert_eq!(got[0].kind, STACK, "stack comes first");
        assert_eq!(got[1].updated_at, 10);

        // Same item: its time stands; the stack item went away.
        replace(conn, 1, std::slice::from_ref(&test), 20).unwrap();
        let got = items(conn, 1).unwrap();
        assert_eq!(got.len(), 1);
        assert_eq!(got[0].updated_at, 10);
        test.weight = 3;
        replace(conn, 1, &[test], 30).unwrap();
        assert_eq!(items(conn, 1).unwrap()[0].updated_at, 30);
        assert!(items(conn, 2).unwrap().is_empty(), "per project");
    }
}
