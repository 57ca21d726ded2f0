//! Observations, summaries and the full-text indexes that follow them.
//!
//! The FTS5 indexes are kept in step by the code that writes the rows, in the
//! same transaction, rather than by triggers: SQLite parses every trigger of
//! the schema when a connection first touches it, and nine triggers cost each
//! hook process about a fifth of a millisecond. Every write of these tables
//! goes through this module (and [`crate::capture`] for prompts), and
//! [`Store::check_fts`] / [`Store::rebuild_fts`] verify and repair the indexes.

use std::collections::BTreeSet;

use rusqlite::{Connection, OptionalExtension, params};
use serde::{Deserialize, Serialize};

use crate::idents::identifier_words;
use crate::{Result, Store, json_list};

/// An observation as written to the store.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct NewObservation {
    pub uid: String,
    pub project_id: Option<i64>,
    pub session_id: Option<i64>,
    pub prompt_number: Option<i64>,
    /// bugfix, feature, refactor, change, discovery, decision, memory...
    pub kind: String,
    pub title: String,
    pub subtitle: String,
    pub narrative: String,
    pub facts: Vec<String>,
    pub concepts: Vec<String>,
    pub files_read: Vec<String>,
    pub files_modified: Vec<String>,
    /// Who wrote it: `offline`, a provider name, `import`, `agent`.
    pub source: String,
    pub created_at: i64,
}

/// A per-turn summary as written to the store.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct NewSummary {
    pub uid: String,
    pub project_id: Option<i64>,
    pub session_id: Option<i64>,
    pub prompt_number: Option<i64>,
    pub request: String,
    pub investigated: String,
    pub learned: String,
    pub completed: String,
    pub next_steps: String,
    pub notes: String,
    pub source: String,
    pub created_at: i64,
}

/// Inserts an observation and indexes it; None when its uid is stored
/// already, or was forgotten (see [`crate::curate`]).
pub fn insert_observation(conn: &Connection, o: &NewObservation) -> rusqlite::Result<Option<i64>> {
    let id = insert_observation_row(conn, o)?;
    if let Some(id) = id {
        index_observation(conn, id)?;
    }
    Ok(id)
}

/// Inserts an observation's row and its file index, not its full-text row
/// ([`index_observation`] writes that). A batch writes all its table rows
/// first: FTS5 flushes the rows it holds at every statement that opens a
/// savepoint (as this insert, with its triggers, does), which would write
/// one tiny index segment per record and merge them over and over.
pub fn insert_observation_row(
    conn: &Connection,
    o: &NewObservation,
) -> rusqlite::Result<Option<i64>> {
    let facts = json_list(&o.facts);
    let concepts = json_list(&o.concepts);
    let files_read = json_list(&o.files_read);
    let files_modified = json_list(&o.files_modified);
    let idents = observation_idents(o);
    let id: Option<i64> = conn
        .prepare_cached(
            "INSERT INTO observations (uid, project_id, session_id, prompt_number, type, title,
                    subtitle, narrative, facts, concepts, files_read, files_modified, source,
                    created_at, idents)
             SELECT ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15
             WHERE NOT EXISTS (SELECT 1 FROM forgotten WHERE uid IN (?1, ?16))
             ON CONFLICT (uid) DO NOTHING RETURNING id",
        )?
        .query_row(
            params![
                o.uid,
                o.project_id,
                o.session_id,
                o.prompt_number,
                o.kind,
                o.title,
                o.subtitle,
                o.narrative,
                facts,
                concepts,
                files_read,
                files_modified,
                o.source,
                o.created_at,
                idents,
                crate::curate::forgotten_key(&o.uid)
            ],
            |r| r.get(0),
        )
        .optional()?;
    if let Some(id) = id {
        let paths = index_files(conn, id, o)?;
        crate::freshness::record_baselines(conn, id, o.project_id, o.created_at, paths)?;
    }
    Ok(id)
}

/// Writes an observation's full-text row (see [`insert_observation_row`]).
pub fn index_observation(conn: &Connection, id: i64) -> rusqlite::Result<()> {
    // Copied from the row just written: its identifier words are not
    // worked out a second time.
    conn.prepare_cached(
        "INSERT INTO observations_fts (rowid, title, subtitle, narrative, facts, concepts,
                                       files_read, files_modified, idents)
         SELECT id, title, subtitle, narrative, facts, concepts, files_read, files_modified,
                idents
         FROM observations WHERE id = ?1",
    )?
    .execute([id])?;
    Ok(())
}

/// Observations and summaries whose table rows are written and whose
/// full-text rows are not yet (see [`insert_observation_row`]): a batch
/// writes these after all its table rows, at most [`IndexBacklog::MAX`]
/// held at a time.
#[derive(Default)]
pub struct IndexBacklog {
    observations: Vec<i64>,
    summaries: Vec<i64>,
}

impl IndexBacklog {
    /// Rows held before they are written (a long batch stays small).
    pub const MAX: usize = 500;

    /// Observation `id`, whose row is written.
    pub fn observation(&mut self, id: i64) {
        self.observations.push(id);
    }

    /// Summary `id`, whose row is written.
    pub fn summary(&mut self, id: i64) {
        self.summaries.push(id);
    }

    /// Writes every full-text row held.
    pub fn write(&mut self, conn: &Connection) -> rusqlite::Result<()> {
        for id in self.observations.drain(..) {
            index_observation(conn, id)?;
        }
        for id in self.summaries.drain(..) {
            index_summary(conn, id)?;
        }
        Ok(())
    }

    /// Writes them when [`IndexBacklog::MAX`] are held.
    pub fn write_if_full(&mut self, conn: &Connection) -> rusqlite::Result<()> {
        if self.observations.len() + self.summaries.len() >= Self::MAX {
            self.write(conn)?;
        }
        Ok(())
    }
}

/// Records which files an observation names (see `observation_files` in the
/// schema); a file both read and modified counts as modified. The paths
/// named, each once.
fn index_files<'o>(
    conn: &Connection,
    id: i64,
    o: &'o NewObservation,
) -> rusqlite::Result<BTreeSet<&'o str>> {
    let mut stmt = conn.prepare_cached(
        "INSERT INTO observation_files (path, observation_id, modified) VALUES (?1, ?2, ?3)
         ON CONFLICT DO NOTHING",
    )?;
    let modified = o.files_modified.iter().map(|f| (f, true));
    let read = o.files_read.iter().map(|f| (f, false));
    let mut named = BTreeSet::new();
    for (path, is_modified) in modified.chain(read) {
        if !path.is_empty() {
            stmt.execute(params![path, id, is_modified])?;
            named.insert(path.as_str());
        }
    }
    Ok(named)
}

/// Inserts a summary and indexes it; None when its uid is stored already,
/// or was forgotten.
pub fn insert_summary(conn: &Connection, s: &NewSummary) -> rusqlite::Result<Option<i64>> {
    let id = insert_summary_row(conn, s)?;
    if let Some(id) = id {
        index_summary(conn, id)?;
    }
    Ok(id)
}

/// Inserts a summary's row, not its full-text row ([`index_summary`]; see
/// [`insert_observation_row`] for why a batch writes those last).
pub fn insert_summary_row(conn: &Connection, s: &NewSummary) -> rusqlite::Result<Option<i64>> {
    let idents = summary_idents(s);
    let id: Option<i64> = conn
        .prepare_cached(
            "INSERT INTO summaries (uid, project_id, session_id, prompt_number, request,
                    investigated, learned, completed, next_steps, notes, source, created_at,
                    idents)
             SELECT ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13
             WHERE NOT EXISTS (SELECT 1 FROM forgotten WHERE uid IN (?1, ?14))
             ON CONFLICT (uid) DO NOTHING RETURNING id",
        )?
        .query_row(
            params![
                s.uid,
                s.project_id,
                s.session_id,
                s.prompt_number,
                s.request,
                s.investigated,
                s.learned,
                s.completed,
                s.next_steps,
                s.notes,
                s.source,
                s.created_at,
                idents,
                crate::curate::forgotten_key(&s.uid)
            ],
            |r| r.get(0),
        )
        .optional()?;
    Ok(id)
}

/// Writes a summary's full-text row (see [`insert_summary_row`]).
pub fn index_summary(conn: &Connection, id: i64) -> rusqlite::Result<()> {
    conn.prepare_cached(
        "INSERT INTO summaries_fts (rowid, request, investigated, learned, completed,
                                    next_steps, notes, idents)
         SELECT id, request, investigated, learned, completed, next_steps, notes, idents
         FROM summaries WHERE id = ?1",
    )?
    .execute([id])?;
    Ok(())
}

/// A prompt row as written to the store.
pub(crate) struct NewPrompt<'a> {
    pub uid: &'a str,
    pub session_id: i64,
    pub prompt_number: i64,
    pub platform_prompt_id: Option<&'a str>,
    pub origin: &'a str,
    pub text: &'a str,
    pub created_at: i64,
}

/// Inserts a prompt row and indexes its text; None when the turn already has
/// a prompt.
pub(crate) fn insert_prompt(conn: &Connection, p: &NewPrompt<'_>) -> rusqlite::Result<Option<i64>> {
    let idents = identifier_words([p.text]);
    let id: Option<i64> = conn
        .query_row(
            "INSERT INTO prompts (uid, session_id, prompt_number, platform_prompt_id, origin,
                                  text, created_at, idents)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)
             ON CONFLICT DO NOTHING RETURNING id",
            params![
                p.uid,
                p.session_id,
                p.prompt_number,
                p.platform_prompt_id,
                p.origin,
                p.text,
                p.created_at,
                idents
            ],
            |r| r.get(0),
        )
        .optional()?;
    if let Some(id) = id {
        conn.execute(
            "INSERT INTO prompts_fts (rowid, text, idents) VALUES (?1, ?2, ?3)",
            params![id, p.text, idents],
        )?;
    }
    Ok(id)
}

/// Adds a message the user sent while the turn ran to the turn's prompt
/// (a paragraph after it), unless the prompt already holds it (the same
/// message delivered twice). True when it was added.
pub(crate) fn add_to_prompt(conn: &Connection, id: i64, message: &str) -> rusqlite::Result<bool> {
    let (text, idents): (String, String) = conn.query_row(
        "SELECT text, idents FROM prompts WHERE id = ?1",
        [id],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )?;
    let message = message.trim();
    if message.is_empty() || text.contains(message) {
        return Ok(false);
    }
    let joined = format!("{text}\n\n{message}");
    let joined_idents = identifier_words([joined.as_str()]);
    conn.execute(
        "INSERT INTO prompts_fts (prompts_fts, rowid, text, idents) VALUES ('delete', ?1, ?2, ?3)",
        params![id, text, idents],
    )?;
    conn.execute(
        "UPDATE prompts SET text = ?2, idents = ?3 WHERE id = ?1",
        params![id, joined, joined_idents],
    )?;
    conn.execute(
        "INSERT INTO prompts_fts (rowid, text, idents) VALUES (?1, ?2, ?3)",
        params![id, joined, joined_idents],
    )?;
    Ok(true)
}

/// The `idents` column of an observation (see [`crate::idents`]).
fn observation_idents(o: &NewObservation) -> String {
    let texts = [&o.title, &o.subtitle, &o.narrative]
        .into_iter()
        .chain(&o.facts)
        .chain(&o.concepts)
        .chain(&o.files_read)
        .chain(&o.files_modified);
    identifier_words(texts.map(String::as_str))
}

/// The `idents` column of a summary.
fn summary_idents(s: &NewSummary) -> String {
    identifier_words(
        [
            &s.request,
            &s.investigated,
            &s.learned,
            &s.completed,
            &s.next_steps,
            &s.notes,
        ]
        .map(String::as_str),
    )
}

/// Fills the `idents` column of rows stored before it existed, then
/// rebuilds the full-text indexes from the tables (run once, by the
/// migration that adds the column).
pub(crate) fn fill_idents(conn: &Connection) -> rusqlite::Result<()> {
    fill_table(
        conn,
        &format!(
            "SELECT id, title || ' ' || subtitle || ' ' || narrative || ' ' || {} || ' ' || {}
                    || ' ' || {} || ' ' || {} FROM observations",
            list_text("facts"),
            list_text("concepts"),
            list_text("files_read"),
            list_text("files_modified")
        ),
        "UPDATE observations SET idents = ?2 WHERE id = ?1",
    )?;
    fill_table(
        conn,
        "SELECT id, request || ' ' || investigated || ' ' || learned || ' ' || completed || ' ' ||
                next_steps || ' ' || notes FROM summaries",
        "UPDATE summaries SET idents = ?2 WHERE id = ?1",
    )?;
    fill_table(
        conn,
        "SELECT id, text FROM prompts",
        "UPDATE prompts SET idents = ?2 WHERE id = ?1",
    )?;
    for table in FTS_TABLES {
        conn.execute(
            &format!("INSERT INTO {table}({table}) VALUES ('rebuild')"),
            [],
        )?;
    }
    Ok(())
}

/// SQL for the items of a JSON list column joined by spaces ('' when not a list).
fn list_text(column: &str) -> String {
    format!(
        "coalesce((SELECT group_concat(j.value, ' ') FROM json_each(CASE WHEN json_valid({column})
                   THEN {column} ELSE '[]' END) j WHERE j.type = 'text'), '')"
    )
}

fn fill_table(conn: &Connection, select: &str, update: &str) -> rusqlite::Result<()> {
    let rows: Vec<(i64, String)> = conn
        .prepare(select)?
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?
        .collect::<rusqlite::Result<_>>()?;
    let mut stmt = conn.prepare(update)?;
    for (id, text) in rows {
        let idents = identifier_words([text.as_str()]);
        if !idents.is_empty() {
            stmt.execute(params![id, idents])?;
        }
    }
    Ok(())
}

/// The full-text indexes and the tables they follow.
const FTS_TABLES: &[&str] = &["observations_fts", "summaries_fts", "prompts_fts"];

impl Store {
    /// Verifies that every full-text index matches its table; the names of
    /// the ones that do not.
    pub fn check_fts(&self) -> Result<Vec<&'static str>> {
        let mut broken = Vec::new();
        for table in FTS_TABLES {
            let sql = format!("INSERT INTO {table}({table}, rank) VALUES ('integrity-check', 1)");
            if let Err(e) = self.conn.execute(&sql, []) {
                if e.sqlite_error_code() == Some(rusqlite::ErrorCode::DatabaseCorrupt) {
                    broken.push(*table);
                } else {
                    return Err(self.err(e));
                }
            }
        }
        Ok(broken)
    }

    /// Rebuilds every full-text index from its table.
    pub fn rebuild_fts(&self) -> Result<()> {
        for table in FTS_TABLES {
            self.conn
                .execute(
                    &format!("INSERT INTO {table}({table}) VALUES ('rebuild')"),
                    [],
                )
                .map_err(|e| self.err(e))?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    /// Takes a new database back to the schema before the idents migration.
    const UNDO_V4: &str = "
        DROP TRIGGER sync_observation_added; DROP TRIGGER sync_observation_changed;
        DROP TRIGGER sync_observation_removed; DROP TRIGGER sync_summary_added;
        DROP TRIGGER sync_summary_changed; DROP TRIGGER sync_summary_removed;
        DROP TABLE sync_changes; DROP TABLE sync_state; DROP TABLE sync_spaces;
        DROP TABLE sync_keys; DROP TABLE sync_outbox; DROP TABLE sync_records;
        DROP TABLE sync_seen;
        ALTER TABLE observations DROP COLUMN author; ALTER TABLE summaries DROP COLUMN author;
        DROP INDEX observations_superseded;
        ALTER TABLE observations DROP COLUMN superseded_by;
        DROP INDEX observations_pinned; DROP TABLE forgotten;
        ALTER TABLE observations DROP COLUMN edited_at;
        ALTER TABLE observations DROP COLUMN pinned;
        ALTER TABLE events DROP COLUMN compressed_at;
        ALTER TABLE events DROP COLUMN pruned_at;
        DROP INDEX events_by_session_time; ALTER TABLE sessions DROP COLUMN continues;
        DROP TABLE observations_fts; DROP TABLE summaries_fts; DROP TABLE prompts_fts;
        ALTER TABLE observations DROP COLUMN idents;
        ALTER TABLE summaries DROP COLUMN idents;
        ALTER TABLE prompts DROP COLUMN idents;
        CREATE VIRTUAL TABLE observations_fts USING fts5(
            title, subtitle, narrative, facts, concepts, files_read, files_modified,
            content='observations', content_rowid='id');
        CREATE VIRTUAL TABLE summaries_fts USING fts5(
            request, investigated, learned, completed, next_steps, notes,
            content='summaries', content_rowid='id');
        CREATE VIRTUAL TABLE prompts_fts USING fts5(
            text, content='prompts', content_rowid='id');";

    fn store() -> (tempfile::TempDir, Store) {
        let tmp = tempfile::tempdir().unwrap();
        let s = Store::open(&tmp.path().join("m.db"), Duration::from_secs(1)).unwrap();
        (tmp, s)
    }

    fn hits(store: &Store, table: &str, query: &str) -> i64 {
        store
            .conn()
            .query_row(
                &format!("SELECT count(*) FROM {table} WHERE {table} MATCH ?1"),
                [query],
                |r| r.get(0),
            )
            .unwrap()
    }

    #[test]
    fn inserts_are_indexed_once() {
        let (_t, store) = store();
        let o = NewObservation {
            uid: "o1".into(),
            kind: "bugfix".into(),
            title: "Login compares hashes".into(),
            files_modified: vec!["src/auth.py".into()],
            source: "offline".into(),
            ..Default::default()
        };
        assert!(insert_observation(store.conn(), &o).unwrap().is_some());
        assert!(insert_observation(store.conn(), &o).unwrap().is_none());
        assert_eq!(hits(&store, "observations_fts", "hashes"), 1);
        assert_eq!(hits(&store, "observations_fts", "auth"), 1);
        let s = NewSummary {
            uid: "s1".into(),
            request: "fix login".into(),
            learned: "passwords were compared in plain text".into(),
            ..Default::default()
        };
        assert!(insert_summary(store.conn(), &s).unwrap().is_some());
        assert_eq!(hits(&store, "summaries_fts", "plain"), 1);
        assert!(store.check_fts().unwrap().is_empty());
    }

    #[test]
    fn files_are_indexed_once_each_with_modified_winning() {
        let (_t, store) = store();
        let o = NewObservation {
            uid: "o1".into(),
            kind: "change".into(),
            title: "Touched auth".into(),
            files_read: vec!["src/auth.py".into(), "README".into()],
            files_modified: vec!["src/auth.py".into(), String::new()],
            ..Default::default()
        };
        let id = insert_observation(store.conn(), &o).unwrap().unwrap();
        let rows: Vec<(String, i64, bool)> = store
            .conn()
            .prepare("SELECT path, observation_id, modified FROM observation_files ORDER BY path")
            .unwrap()
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
            .unwrap()
            .collect::<rusqlite::Result<_>>()
            .unwrap();
        assert_eq!(
            rows,
            [
                ("README".into(), id, false),
                ("src/auth.py".into(), id, true)
            ]
        );
    }

    #[test]
    fn the_v3_migration_indexes_files_of_existing_observations() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("m.db");
        let store = Store::open(&path, Duration::from_secs(1)).unwrap();
        // A database as version 2 left it: observations, no file index.
        store.conn().execute_batch(UNDO_V4).unwrap();
        store
            .conn()
            .execute_batch(
                "DROP TABLE observation_files;
                 INSERT INTO observations (uid, type, title, files_read, files_modified, created_at)
                 VALUES ('a', 'change', 't', '[\"/p/r.rs\", 3]', '[\"/p/m.rs\"]', 1),
                        ('b', 'change', 'u', 'not json', '[]', 2);
                 PRAGMA user_version = 2;",
            )
            .unwrap();
        drop(store);
        let store = Store::open(&path, Duration::from_secs(1)).unwrap();
        let rows: Vec<(String, bool)> = store
            .conn()
            .prepare("SELECT path, modified FROM observation_files ORDER BY path")
            .unwrap()
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
            .unwrap()
            .collect::<rusqlite::Result<_>>()
            .unwrap();
        assert_eq!(rows, [("/p/m.rs".into(), true), ("/p/r.rs".into(), false)]);
    }

    #[test]
    fn compound_names_are_found_in_either_spelling() {
        let (_t, store) = store();
        for (uid, title) in [
            ("a", "Call parseConfig early"),
            ("b", "Rename load_user_file"),
        ] {
            let o = NewObservation {
                uid: uid.into(),
                kind: "change".into(),
                title: title.into(),
                ..Default::default()
            };
            insert_observation(store.conn(), &o).unwrap();
        }
        assert_eq!(hits(&store, "observations_fts", "parse config"), 1);
        assert_eq!(hits(&store, "observations_fts", "\"parse config\""), 1);
        assert_eq!(hits(&store, "observations_fts", "loadUserFile"), 1);
        assert_eq!(hits(&store, "observations_fts", "\"load user file\""), 1);
        assert!(store.check_fts().unwrap().is_empty());
    }

    #[test]
    fn the_idents_migration_fills_identifier_words_of_existing_rows() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("m.db");
        let store = Store::open(&path, Duration::from_secs(1)).unwrap();
        // A database as version 5 left it: no idents columns, indexes without them.
        store.conn().execute_batch(UNDO_V4).unwrap();
        store
            .conn()
            .execute_batch(
                "INSERT INTO observations (uid, type, title, facts, created_at)
                 VALUES ('a', 'change', 'Fixed parseConfig', '[\"see config_loader.rs\"]', 1);
                 INSERT INTO summaries (uid, request, created_at)
                 VALUES ('s', 'why does retryBackoff loop', 1);
                 PRAGMA user_version = 5;",
            )
            .unwrap();
        drop(store);
        let store = Store::open(&path, Duration::from_secs(1)).unwrap();
        assert_eq!(hits(&store, "observations_fts", "parse config"), 1);
        assert_eq!(hits(&store, "observations_fts", "configLoader"), 1);
        assert_eq!(hits(&store, "summaries_fts", "retry backoff"), 1);
        assert!(store.check_fts().unwrap().is_empty());
    }

    #[test]
    fn a_damaged_index_is_found_and_rebuilt() {
        let (_t, store) = store();
        let o = NewObservation {
            uid: "o1".into(),
            kind: "change".into(),
            title: "Cache added".into(),
            ..Default::default()
        };
        insert_observation(store.conn(), &o).unwrap();
        // A row written behind the module's back leaves the index stale.
        store
            .conn()
            .execute("UPDATE observations SET title = 'Queue added'", [])
            .unwrap();
        assert_eq!(store.check_fts().unwrap(), ["observations_fts"]);
        store.rebuild_fts().unwrap();
        assert!(store.check_fts().unwrap().is_empty());
        assert_eq!(hits(&store, "observations_fts", "queue"), 1);
    }

    #[test]
    fn a_backlog_indexes_rows_as_they_were_written() {
        let (_tmp, store) = store();
        let conn = store.conn();
        let mut backlog = IndexBacklog::default();
        for i in 0..3 {
            let o = NewObservation {
                uid: format!("o{i}"),
                kind: "change".into(),
                title: format!("Tuned parseHeaderBlock number {i}"),
                facts: vec!["the retryBudget halves".into()],
                files_modified: vec![format!("src/wire_{i}.rs")],
                created_at: 1,
                ..Default::default()
            };
            backlog.observation(insert_observation_row(conn, &o).unwrap().unwrap());
            let s = NewSummary {
                uid: format!("s{i}"),
                request: format!("speed up queueDrain {i}"),
                created_at: 1,
                ..Default::default()
            };
            backlog.summary(insert_summary_row(conn, &s).unwrap().unwrap());
        }
        assert_eq!(hits(&store, "observations_fts", "parse"), 0, "not yet");
        backlog.write(conn).unwrap();
        assert!(store.check_fts().unwrap().is_empty());
        // Identifier words and JSON lists reach the index as the row holds them.
        assert_eq!(hits(&store, "observations_fts", "header"), 3);
        assert_eq!(hits(&store, "observations_fts", "budget"), 3);
        assert_eq!(hits(&store, "observations_fts", "wire_1"), 1);
        assert_eq!(hits(&store, "summaries_fts", "drain"), 3);
    }
}
