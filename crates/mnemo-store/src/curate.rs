//! What the user does to their memory after the fact: forget, edit, pin,
//! redact, and the retention that drops raw tool payloads once compressed.
//!
//! Every operation keeps the full-text indexes in step in its own
//! transaction (external-content FTS5 tables must be told the old text to
//! delete it), and forgetting means gone from the bytes too: the FTS
//! indexes use `secure-delete` (set by the migration), every connection
//! zeroes the old bytes of rows it updates or deletes (`PRAGMA
//! secure_delete = FAST`, fully ON during a forget or a redaction) and the
//! WAL is checkpointed and truncated afterwards, so a forgotten string is
//! found neither in the database file nor in its `-wal`. Rows rewritten by
//! a mnemo older than that may have left copies in free space:
//! [`Store::vacuum`] (`mnemo forget --vacuum`) rewrites the whole file.
//!
//! A forgotten observation or summary leaves its uid in `forgotten`:
//! [`crate::memory`] never writes that uid again, so a batch redone after
//! the forget (a retry, a lease taken back) cannot bring it back.

use std::collections::{BTreeMap, BTreeSet, HashSet};

use std::path::Path;

use rusqlite::{
    Connection, OpenFlags, OptionalExtension, Transaction, TransactionBehavior, params,
};
use serde::Serialize;

use crate::idents::identifier_words;
use crate::{Result, Store, json_list, parse_json_list};

/// What the user asked to forget.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Forget {
    /// Stored items by row id.
    Items(Items),
    /// Sessions by row id (with everything recorded in them).
    Sessions(Vec<i64>),
    /// A project by row id: its sessions, its memory and the project itself.
    Project(i64),
}

/// Row ids of observations, summaries and prompts.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Items {
    pub observations: Vec<i64>,
    pub summaries: Vec<i64>,
    pub prompts: Vec<i64>,
}

/// How many rows of each kind a forget removed (or would remove).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Removed {
    pub observations: usize,
    pub summaries: usize,
    pub prompts: usize,
    pub events: usize,
    pub sessions: usize,
}

/// Why a curation request cannot be carried out as asked.
#[derive(Debug, thiserror::Error)]
pub enum CurateError {
    /// Ids that name nothing stored (`#12`, `S3`, `P4`); nothing was changed.
    #[error("no such item: {}", .0.join(", "))]
    Unknown(Vec<String>),
    /// A request that cannot be carried out (empty title, text too short).
    #[error("{0}")]
    Invalid(String),
    #[error(transparent)]
    Store(#[from] crate::StoreError),
}

/// The fields of an observation a user may change; None keeps the field.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Edit {
    pub title: Option<String>,
    pub subtitle: Option<String>,
    pub narrative: Option<String>,
    pub facts: Option<Vec<String>>,
    /// A canonical observation type (the interfaces validate it).
    pub obs_type: Option<String>,
}

impl Edit {
    pub fn is_empty(&self) -> bool {
        self == &Edit::default()
    }
}

/// What a redaction replaced: the number of places (one column of one row)
/// per table.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Redacted {
    pub replaced: usize,
    pub places: BTreeMap<String, usize>,
    /// Files outside the database rewritten, with the occurrences masked.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub files: BTreeMap<String, usize>,
    /// Where copies may remain, and why (nothing when all were reached).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub remaining: Vec<String>,
}

/// The store's size on disk, by kind of data and by project.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct StoreSize {
    /// The database file and its WAL.
    pub bytes: u64,
    /// Pages used per kind (`observations`, `events`, ... with their
    /// indexes), `free` for unused pages.
    pub by_kind: BTreeMap<String, u64>,
    /// Text stored per project, largest first.
    pub by_project: Vec<ProjectSize>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ProjectSize {
    /// The project's root directory.
    pub project: String,
    pub name: String,
    /// Bytes of text in its observations, summaries, prompts and events.
    pub bytes: u64,
    /// Of which raw tool inputs and outputs (what retention prunes).
    pub raw_bytes: u64,
    pub observations: u64,
    pub events: u64,
}

/// The replacement for redacted text.
pub const REDACTED: &str = "[REDACTED:manual]";

/// The shortest text `redact` accepts (a shorter one would hit everywhere).
pub const REDACT_MIN_CHARS: usize = 4;

impl Store {
    /// Forgets what `what` names, or with `dry_run` only counts it. Every
    /// id must exist (else nothing changes). The bytes are then wiped from
    /// the file and the WAL (see the module comment).
    pub fn forget(&mut self, what: &Forget, dry_run: bool) -> Result<Removed, CurateError> {
        Ok(self.forget_collecting(what, dry_run)?.0)
    }

    /// [`Store::forget`], with what the deleted rows held (for the copies
    /// outside the database, [`crate::scrub`]).
    pub(crate) fn forget_collecting(
        &mut self,
        what: &Forget,
        dry_run: bool,
    ) -> Result<(Removed, Gone), CurateError> {
        self.conn
            .execute_batch("PRAGMA secure_delete = ON")
            .map_err(|e| self.err(e))?;
        let path = self.path.clone();
        let outcome = (|| -> Result<(Removed, Gone), CurateError> {
            let tx = self
                .conn
                .transaction_with_behavior(TransactionBehavior::Immediate)
                .map_err(|e| crate::sql_err(&path, e))?;
            let mut gone = Gone::default();
            let removed = forget_in(&tx, what, &mut gone).map_err(|e| match e {
                Failed::Sql(e) => CurateError::Store(crate::sql_err(&path, e)),
                Failed::Unknown(ids) => CurateError::Unknown(ids),
            })?;
            if dry_run { tx.rollback() } else { tx.commit() }
                .map_err(|e| crate::sql_err(&path, e))?;
            Ok((removed, gone))
        })();
        let _ = self.conn.execute_batch("PRAGMA secure_delete = FAST");
        let outcome = outcome?;
        if !dry_run {
            self.truncate_wal()?;
        }
        Ok(outcome)
    }

    /// Rewrites the database into a fresh file (after a forget: the file
    /// shrinks by the freed pages), then empties the WAL.
    pub fn vacuum(&self) -> Result<()> {
        self.conn.execute_batch("VACUUM").map_err(|e| self.err(e))?;
        self.truncate_wal()
    }

    /// Copies the WAL into the database and truncates it to zero bytes (old
    /// page images of forgotten rows go with it). Waits for readers up to
    /// the busy timeout; a reader still holding a snapshot leaves it for
    /// the next checkpoint.
    pub fn truncate_wal(&self) -> Result<()> {
        self.conn
            .query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))
            .map_err(|e| self.err(e))
    }

    /// Changes the given fields of an observation, marks it edited and
    /// reindexes it; the row id when it exists.
    pub fn edit_observation(&mut self, id: i64, edit: &Edit) -> Result<(), CurateError> {
        if edit.title.as_deref().is_some_and(|t| t.trim().is_empty()) {
            return Err(CurateError::Invalid("the title cannot be empty".into()));
        }
        if edit
            .obs_type
            .as_deref()
            .is_some_and(|t| t.trim().is_empty())
        {
            return Err(CurateError::Invalid("the type cannot be empty".into()));
        }
        self.conn
            .execute_batch("PRAGMA secure_delete = ON")
            .map_err(|e| self.err(e))?;
        let outcome = self.edit_in(id, edit);
        let _ = self.conn.execute_batch("PRAGMA secure_delete = FAST");
        outcome?;
        // The old text must not outlive the edit in the WAL either.
        self.truncate_wal()?;
        Ok(())
    }

    fn edit_in(&mut self, id: i64, edit: &Edit) -> Result<(), CurateError> {
        let path = self.path.clone();
        let sql = |e| CurateError::Store(crate::sql_err(&path, e));
        let tx = self.conn.transaction().map_err(sql)?;
        if !exists(&tx, "observations", id).map_err(sql)? {
            return Err(CurateError::Unknown(vec![format!("#{id}")]));
        }
        fts_delete_observations(&tx, &[id]).map_err(sql)?;
        let facts = edit.facts.as_deref().map(json_list);
        tx.execute(
            "UPDATE observations SET title = coalesce(?2, title), subtitle = coalesce(?3, subtitle),
                    narrative = coalesce(?4, narrative), facts = coalesce(?5, facts),
                    type = coalesce(?6, type), edited_at = ?7
             WHERE id = ?1",
            params![
                id,
                edit.title.as_deref().map(str::trim),
                edit.subtitle,
                edit.narrative,
                facts,
                edit.obs_type.as_deref().map(str::trim),
                mnemo_core::time::now_ms()
            ],
        )
        .map_err(sql)?;
        refresh_observation_idents(&tx, &[id]).map_err(sql)?;
        fts_insert_observations(&tx, &[id]).map_err(sql)?;
        tx.commit().map_err(sql)
    }

    /// Pins or unpins an observation.
    pub fn pin_observation(&self, id: i64, pinned: bool) -> Result<(), CurateError> {
        let changed = self
            .conn
            .execute(
                "UPDATE observations SET pinned = ?2 WHERE id = ?1",
                params![id, pinned],
            )
            .map_err(|e| self.err(e))?;
        if changed == 0 {
            return Err(CurateError::Unknown(vec![format!("#{id}")]));
        }
        Ok(())
    }

    /// Replaces every stored occurrence of `text` (as written, and as JSON
    /// escapes it inside stored JSON) with [`REDACTED`], in every text
    /// column of every table, keeping the full-text indexes in step.
    pub fn redact(&mut self, text: &str) -> Result<Redacted, CurateError> {
        if text.trim().chars().count() < REDACT_MIN_CHARS {
            return Err(CurateError::Invalid(format!(
                "give the exact text to redact, at least {REDACT_MIN_CHARS} characters"
            )));
        }
        let needles = needles(text);
        self.conn
            .execute_batch("PRAGMA secure_delete = ON")
            .map_err(|e| self.err(e))?;
        let path = self.path.clone();
        let outcome = (|| {
            let tx = self
                .conn
                .transaction_with_behavior(TransactionBehavior::Immediate)?;
            let redacted = redact_in(&tx, &needles)?;
            tx.commit()?;
            Ok(redacted)
        })()
        .map_err(|e| CurateError::Store(crate::sql_err(&path, e)));
        let _ = self.conn.execute_batch("PRAGMA secure_delete = FAST");
        let redacted = outcome?;
        if redacted.replaced > 0 {
            self.truncate_wal()?;
        }
        Ok(redacted)
    }

    /// Drops the raw input and response of events compressed before
    /// `cutoff_ms` (a failure keeps its input and error: the recurring
    /// gotchas read them), and the hooks' notes of the agent's words from
    /// before it; the number of events pruned.
    pub fn prune_raw_payloads(&self, cutoff_ms: i64) -> Result<usize> {
        self.conn
            .execute(
                "DELETE FROM turn_notes WHERE created_at < ?1
                   AND NOT EXISTS (SELECT 1 FROM events e
                                   WHERE e.session_id = turn_notes.session_id
                                     AND e.prompt_number = turn_notes.prompt_number
                                     AND e.status <> 'done')",
                [cutoff_ms],
            )
            .map_err(|e| self.err(e))?;
        self.conn
            .execute(
                "UPDATE events SET response = NULL,
                        input = CASE WHEN kind = 'tool_failure' THEN input END,
                        pruned_at = ?2
                 WHERE status = 'done' AND pruned_at IS NULL
                   AND coalesce(compressed_at, created_at) < ?1
                   AND (input IS NOT NULL OR response IS NOT NULL)",
                params![cutoff_ms, mnemo_core::time::now_ms()],
            )
            .map_err(|e| self.err(e))
    }

    /// The store's size by kind (pages, from SQLite's `dbstat`) and by
    /// project (bytes of stored text).
    pub fn size(&self) -> Result<StoreSize> {
        let file = |suffix: &str| {
            let mut name = self.path.as_os_str().to_owned();
            name.push(suffix);
            std::fs::metadata(name).map_or(0, |m| m.len())
        };
        let by_kind = pages_by_kind(&self.conn).map_err(|e| self.err(e))?;
        let by_project = project_sizes(&self.conn).map_err(|e| self.err(e))?;
        Ok(StoreSize {
            bytes: file("") + file("-wal"),
            by_kind,
            by_project,
        })
    }

    /// Resolves a platform session id (exact) to its stored sessions.
    pub fn sessions_by_platform_id(&self, session: &str) -> Result<Vec<i64>> {
        let mut stmt = self
            .conn
            .prepare_cached("SELECT id FROM sessions WHERE platform_session_id = ?1")
            .map_err(|e| self.err(e))?;
        stmt.query_map([session.trim()], |r| r.get(0))
            .and_then(|rows| rows.collect())
            .map_err(|e| self.err(e))
    }

    /// Whether an observation is pinned (None when it does not exist).
    pub fn is_pinned(&self, id: i64) -> Result<Option<bool>> {
        self.conn
            .query_row("SELECT pinned FROM observations WHERE id = ?1", [id], |r| {
                r.get(0)
            })
            .optional()
            .map_err(|e| self.err(e))
    }
}

/// Forgets in another database file of ours (a repair copy `doctor --fix`
/// kept) the records a forget deleted, found there by uid, session and
/// project root; the number of rows deleted. Fails on a file SQLite cannot
/// read or write (the caller masks it instead).
pub(crate) fn forget_in_copy(path: &Path, gone: &Gone) -> rusqlite::Result<usize> {
    let mut conn = Connection::open_with_flags(path, OpenFlags::SQLITE_OPEN_READ_WRITE)?;
    conn.execute_batch("PRAGMA secure_delete = ON")?;
    let tx = conn.transaction()?;
    let in_copy = |sql: &str, keys: Vec<Vec<String>>| -> rusqlite::Result<Vec<i64>> {
        let mut stmt = tx.prepare(sql)?;
        let mut ids = Vec::new();
        for key in keys {
            ids.extend(
                stmt.query_row(rusqlite::params_from_iter(key), |r| r.get::<_, i64>(0))
                    .optional()?,
            );
        }
        Ok(ids)
    };
    let uids = || {
        gone.uids
            .iter()
            .map(|u| vec![u.clone()])
            .collect::<Vec<_>>()
    };
    let items = Items {
        observations: in_copy("SELECT id FROM observations WHERE uid = ?1", uids())?,
        summaries: in_copy("SELECT id FROM summaries WHERE uid = ?1", uids())?,
        prompts: in_copy("SELECT id FROM prompts WHERE uid = ?1", uids())?,
    };
    let sessions = in_copy(
        "SELECT id FROM sessions WHERE platform = ?1 AND platform_session_id = ?2",
        gone.sessions
            .iter()
            .map(|(p, s)| vec![p.clone(), s.clone()])
            .collect(),
    )?;
    let projects = in_copy(
        "SELECT id FROM projects WHERE root = ?1",
        gone.roots.iter().map(|r| vec![r.clone()]).collect(),
    )?;
    let mut what = vec![Forget::Items(items), Forget::Sessions(sessions)];
    what.extend(projects.into_iter().map(Forget::Project));
    let mut rows = 0;
    for what in &what {
        let removed = forget_in(&tx, what, &mut Gone::default()).map_err(|e| match e {
            Failed::Sql(e) => e,
            Failed::Unknown(_) => rusqlite::Error::QueryReturnedNoRows,
        })?;
        rows += removed.observations
            + removed.summaries
            + removed.prompts
            + removed.events
            + removed.sessions;
    }
    tx.commit()?;
    conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))?;
    Ok(rows)
}

enum Failed {
    Sql(rusqlite::Error),
    Unknown(Vec<String>),
}

impl From<rusqlite::Error> for Failed {
    fn from(e: rusqlite::Error) -> Self {
        Failed::Sql(e)
    }
}

fn forget_in(tx: &Transaction<'_>, what: &Forget, gone: &mut Gone) -> Result<Removed, Failed> {
    let removed = match what {
        Forget::Items(items) => forget_items(tx, items, gone),
        Forget::Sessions(ids) => forget_sessions(tx, ids, gone),
        Forget::Project(id) => forget_project(tx, *id, gone),
    }?;
    drop_knowledge_of_gone_records(tx)?;
    Ok(removed)
}

/// Deletes the project knowledge items (`crate::knowledge`) built from a
/// record that no longer exists, or of a project that no longer exists:
/// their text may quote what was just forgotten. The worker rebuilds a
/// project's items from the records that remain after its next batch. A
/// store (or repair copy) from before the knowledge table has none.
fn drop_knowledge_of_gone_records(tx: &Transaction<'_>) -> rusqlite::Result<usize> {
    let has_table = tx
        .prepare_cached("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'knowledge'")?
        .exists([])?;
    if !has_table {
        return Ok(0);
    }
    let rows: Vec<(i64, String, String, String)> = tx
        .prepare("SELECT project_id, kind, key, sources FROM knowledge")?
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))?
        .collect::<rusqlite::Result<_>>()?;
    let mut dropped = 0;
    for (project, kind, key, sources) in rows {
        if exists(tx, "projects", project)? && !names_a_gone_record(tx, &sources)? {
            continue;
        }
        dropped += tx.execute(
            "DELETE FROM knowledge WHERE project_id = ?1 AND kind = ?2 AND key = ?3",
            params![project, kind, key],
        )?;
    }
    Ok(dropped)
}

/// Whether a knowledge item's sources (`["#12", "S3", "P7"]`) name a
/// record that no longer exists.
fn names_a_gone_record(tx: &Transaction<'_>, sources: &str) -> rusqlite::Result<bool> {
    let sources = parse_json_list(sources);
    for source in &sources {
        let (table, id) = match source.split_at_checked(1) {
            Some(("#", id)) => ("observations", id),
            Some(("S", id)) => ("summaries", id),
            Some(("P", id)) => ("prompts", id),
            _ => continue,
        };
        let Ok(id) = id.parse::<i64>() else {
            continue;
        };
        if !exists(tx, table, id)? {
            return Ok(true);
        }
    }
    Ok(false)
}

fn forget_items(tx: &Transaction<'_>, items: &Items, gone: &mut Gone) -> Result<Removed, Failed> {
    let mut unknown = Vec::new();
    for (table, ids, prefix) in [
        ("observations", &items.observations, "#"),
        ("summaries", &items.summaries, "S"),
        ("prompts", &items.prompts, "P"),
    ] {
        for id in ids {
            if !exists(tx, table, *id)? {
                unknown.push(format!("{prefix}{id}"));
            }
        }
    }
    if !unknown.is_empty() {
        return Err(Failed::Unknown(unknown));
    }
    Ok(Removed {
        events: delete_source_events(tx, &items.observations, gone)?,
        observations: delete_observations(tx, &items.observations, gone)?,
        summaries: delete_summaries(tx, &items.summaries, gone)?,
        prompts: delete_prompts(tx, &items.prompts, gone)?,
        ..Removed::default()
    })
}

fn forget_sessions(
    tx: &Transaction<'_>,
    sessions: &[i64],
    gone: &mut Gone,
) -> Result<Removed, Failed> {
    let json = ids_json(sessions);
    // One indexed lookup per session: with `IN (json_each)` the planner
    // may scan the whole table instead of its `*_by_session` index.
    let in_sessions = |table: &str| -> rusqlite::Result<Vec<i64>> {
        let mut stmt = tx.prepare(&format!("SELECT id FROM {table} WHERE session_id = ?1"))?;
        let mut ids = Vec::new();
        for session in sessions {
            for id in stmt.query_map([session], |r| r.get(0))? {
                ids.push(id?);
            }
        }
        Ok(ids)
    };
    let mut removed = Removed {
        observations: delete_observations(tx, &in_sessions("observations")?, gone)?,
        summaries: delete_summaries(tx, &in_sessions("summaries")?, gone)?,
        prompts: delete_prompts(tx, &in_sessions("prompts")?, gone)?,
        ..Removed::default()
    };
    let by_session = "WHERE session_id IN (SELECT value FROM json_each(?1))";
    removed.events = gone.rows(
        tx,
        &format!("DELETE FROM events {by_session} {EVENT_TEXTS}"),
        &json,
    )?;
    for table in [
        "turn_pieces",
        "turn_notes",
        "file_context_shown",
        "recall_shown",
    ] {
        tx.execute(&format!("DELETE FROM {table} {by_session}"), [&json])?;
    }
    tx.execute(
        &format!("UPDATE llm_calls SET session_id = NULL {by_session}"),
        [&json],
    )?;
    removed.sessions = gone.sessions(
        tx,
        "DELETE FROM sessions WHERE id IN (SELECT value FROM json_each(?1))
         RETURNING platform, platform_session_id",
        &json,
    )?;
    Ok(removed)
}

fn forget_project(tx: &Transaction<'_>, project: i64, gone: &mut Gone) -> Result<Removed, Failed> {
    if !exists(tx, "projects", project)? {
        return Err(Failed::Unknown(vec![format!("project {project}")]));
    }
    let ids = |sql: &str| -> rusqlite::Result<Vec<i64>> {
        tx.prepare(sql)?
            .query_map([project], |r| r.get(0))?
            .collect()
    };
    let sessions = ids("SELECT id FROM sessions WHERE project_id = ?1")?;
    let mut removed = forget_sessions(tx, &sessions, gone)?;
    // Memory of the project outside its sessions (imported, saved).
    removed.observations += delete_observations(
        tx,
        &ids("SELECT id FROM observations WHERE project_id = ?1")?,
        gone,
    )?;
    removed.summaries += delete_summaries(
        tx,
        &ids("SELECT id FROM summaries WHERE project_id = ?1")?,
        gone,
    )?;
    tx.execute(
        "UPDATE llm_calls SET project_id = NULL WHERE project_id = ?1",
        [project],
    )?;
    let root: String = tx.query_row(
        "DELETE FROM projects WHERE id = ?1 RETURNING root",
        [project],
        |r| r.get(0),
    )?;
    gone.text(&root);
    gone.roots.insert(root);
    Ok(removed)
}

fn exists(conn: &Connection, table: &str, id: i64) -> rusqlite::Result<bool> {
    Ok(conn
        .prepare_cached(&format!("SELECT 1 FROM {table} WHERE id = ?1"))?
        .query_row([id], |_| Ok(()))
        .optional()?
        .is_some())
}

fn ids_json(ids: &[i64]) -> String {
    serde_json::to_string(ids).unwrap_or_else(|_| "[]".to_owned())
}

const IN_IDS: &str = "IN (SELECT value FROM json_each(?1))";

/// What a deleted event held, after its uid (see [`Gone::rows`]).
const EVENT_TEXTS: &str = "RETURNING uid, input, response, error";

/// The shortest text of a forgotten row looked for in the files outside
/// the database (a shorter one would hit unrelated text).
const GONE_TEXT_MIN_CHARS: usize = 8;

/// The most text of forgotten rows looked for in the files outside the
/// database (a project of years holds gigabytes of raw payloads, and the
/// search automaton grows with its texts); past it, [`Gone::partial`] says
/// the search was partial. A session of a thousand tool calls of 5 KB fits.
pub(crate) const GONE_TEXT_MAX_BYTES: usize = 8 << 20;

/// What a forget deleted, for the copies outside the database: the texts
/// of the deleted rows and the keys an export file names them by.
#[derive(Debug, Default)]
pub(crate) struct Gone {
    /// Titles, narratives, facts, prompts, raw inputs and responses, session
    /// ids, project roots (each at least [`GONE_TEXT_MIN_CHARS`]).
    pub texts: BTreeSet<String>,
    /// Uids of deleted observations, summaries, prompts and events.
    pub uids: HashSet<String>,
    /// (platform, platform session id) of deleted sessions.
    pub sessions: HashSet<(String, String)>,
    /// Roots of deleted projects.
    pub roots: HashSet<String>,
    /// Texts left out past [`GONE_TEXT_MAX_BYTES`].
    pub partial: bool,
    bytes: usize,
}

impl Gone {
    /// Runs a `DELETE ... RETURNING uid, text...`, keeping what each row
    /// held (a JSON list as its items); the number of rows deleted.
    fn rows(&mut self, conn: &Connection, sql: &str, json: &str) -> rusqlite::Result<usize> {
        let mut stmt = conn.prepare(sql)?;
        let columns = stmt.column_count();
        let mut rows = stmt.query([json])?;
        let mut count = 0;
        while let Some(row) = rows.next()? {
            count += 1;
            self.uids.insert(row.get(0)?);
            for i in 1..columns {
                let Some(text) = row.get::<_, Option<String>>(i)? else {
                    continue;
                };
                match serde_json::from_str::<Vec<String>>(&text) {
                    Ok(items) => items.iter().for_each(|t| self.text(t)),
                    Err(_) => self.text(&text),
                }
            }
        }
        Ok(count)
    }

    /// Runs a `DELETE FROM sessions ... RETURNING platform,
    /// platform_session_id`; the number of sessions deleted.
    fn sessions(&mut self, conn: &Connection, sql: &str, json: &str) -> rusqlite::Result<usize> {
        let mut stmt = conn.prepare(sql)?;
        let keys = stmt
            .query_map([json], |r| {
                Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?))
            })?
            .collect::<rusqlite::Result<Vec<_>>>()?;
        for (platform, session) in &keys {
            self.text(session);
            self.sessions.insert((platform.clone(), session.clone()));
        }
        Ok(keys.len())
    }

    fn text(&mut self, text: &str) {
        let text = text.trim();
        if text.chars().count() < GONE_TEXT_MIN_CHARS {
            return;
        }
        if self.bytes + text.len() > GONE_TEXT_MAX_BYTES {
            self.partial = true;
        } else if self.texts.insert(text.to_owned()) {
            self.bytes += text.len();
        }
    }
}

fn delete_observations(conn: &Connection, ids: &[i64], gone: &mut Gone) -> rusqlite::Result<usize> {
    if ids.is_empty() {
        return Ok(0);
    }
    let json = ids_json(ids);
    fts_delete_observations(conn, ids)?;
    conn.execute(
        &format!("DELETE FROM observation_files WHERE observation_id {IN_IDS}"),
        [&json],
    )?;
    conn.execute(
        &format!("DELETE FROM file_baselines WHERE observation_id {IN_IDS}"),
        [&json],
    )?;
    forget_shown(conn, "#", &json)?;
    tombstone(conn, "observations", &json)?;
    gone.rows(
        conn,
        &format!(
            "DELETE FROM observations WHERE id {IN_IDS}
             RETURNING uid, title, subtitle, narrative, facts"
        ),
        &json,
    )
}

/// Deletes the raw events an observation was compressed from (the done or
/// failed events of its turn; one still queued stays), with the partial
/// summaries of that turn; the number of events deleted.
fn delete_source_events(
    conn: &Connection,
    ids: &[i64],
    gone: &mut Gone,
) -> rusqlite::Result<usize> {
    if ids.is_empty() {
        return Ok(0);
    }
    let of_turn = |table: &str, extra: &str| {
        format!(
            "DELETE FROM {table} WHERE {extra} EXISTS (SELECT 1 FROM observations o
               WHERE o.id {IN_IDS} AND o.session_id = {table}.session_id
                 AND o.prompt_number = {table}.prompt_number)"
        )
    };
    let json = ids_json(ids);
    conn.execute(&of_turn("turn_pieces", ""), [&json])?;
    gone.rows(
        conn,
        &format!(
            "{} {EVENT_TEXTS}",
            of_turn("events", "status IN ('done', 'failed') AND")
        ),
        &json,
    )
}

fn delete_summaries(conn: &Connection, ids: &[i64], gone: &mut Gone) -> rusqlite::Result<usize> {
    if ids.is_empty() {
        return Ok(0);
    }
    let json = ids_json(ids);
    conn.execute(
        &format!(
            "INSERT INTO summaries_fts (summaries_fts, rowid, request, investigated, learned,
                    completed, next_steps, notes, idents)
             SELECT 'delete', id, request, investigated, learned, completed, next_steps, notes,
                    idents FROM summaries WHERE id {IN_IDS}"
        ),
        [&json],
    )?;
    forget_shown(conn, "S", &json)?;
    tombstone(conn, "summaries", &json)?;
    gone.rows(
        conn,
        &format!(
            "DELETE FROM summaries WHERE id {IN_IDS}
             RETURNING uid, request, investigated, learned, completed, next_steps, notes"
        ),
        &json,
    )
}

fn delete_prompts(conn: &Connection, ids: &[i64], gone: &mut Gone) -> rusqlite::Result<usize> {
    if ids.is_empty() {
        return Ok(0);
    }
    let json = ids_json(ids);
    conn.execute(
        &format!(
            "INSERT INTO prompts_fts (prompts_fts, rowid, text, idents)
             SELECT 'delete', id, text, idents FROM prompts WHERE id {IN_IDS}"
        ),
        [&json],
    )?;
    forget_shown(conn, "P", &json)?;
    gone.rows(
        conn,
        &format!("DELETE FROM prompts WHERE id {IN_IDS} RETURNING uid, text"),
        &json,
    )
}

/// Drops `recall_shown` rows naming the items (`#12`, `S3`, `P4`).
fn forget_shown(conn: &Connection, prefix: &str, json: &str) -> rusqlite::Result<()> {
    conn.execute(
        "DELETE FROM recall_shown WHERE item IN (SELECT ?2 || value FROM json_each(?1))",
        params![json, prefix],
    )?;
    Ok(())
}

/// Keeps the uids of rows about to be deleted (as [`forgotten_key`]), so
/// they are never written again.
fn tombstone(conn: &Connection, table: &str, json: &str) -> rusqlite::Result<()> {
    let uids: Vec<String> = conn
        .prepare(&format!("SELECT uid FROM {table} WHERE id {IN_IDS}"))?
        .query_map([json], |r| r.get(0))?
        .collect::<rusqlite::Result<_>>()?;
    let mut insert =
        conn.prepare_cached("INSERT OR IGNORE INTO forgotten (uid, forgotten_at) VALUES (?1, ?2)")?;
    let now = mnemo_core::time::now_ms();
    for uid in &uids {
        insert.execute(params![forgotten_key(uid), now])?;
    }
    Ok(())
}

/// How `forgotten` keeps a uid: a digest, so that the tombstone of a
/// forgotten record tells nothing of it (a uid can carry a session id).
/// Tombstones written before hold the uid itself; both are checked.
pub fn forgotten_key(uid: &str) -> String {
    use sha2::{Digest, Sha256};
    let digest = Sha256::digest(uid.as_bytes());
    let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
    format!("sha256:{hex}")
}

fn fts_delete_observations(conn: &Connection, ids: &[i64]) -> rusqlite::Result<()> {
    conn.execute(
        &format!(
            "INSERT INTO observations_fts (observations_fts, rowid, title, subtitle, narrative,
                    facts, concepts, files_read, files_modified, idents)
             SELECT 'delete', id, title, subtitle, narrative, facts, concepts, files_read,
                    files_modified, idents FROM observations WHERE id {IN_IDS}"
        ),
        [ids_json(ids)],
    )?;
    Ok(())
}

fn fts_insert_observations(conn: &Connection, ids: &[i64]) -> rusqlite::Result<()> {
    conn.execute(
        &format!(
            "INSERT INTO observations_fts (rowid, title, subtitle, narrative, facts, concepts,
                    files_read, files_modified, idents)
             SELECT id, title, subtitle, narrative, facts, concepts, files_read,
                    files_modified, idents FROM observations WHERE id {IN_IDS}"
        ),
        [ids_json(ids)],
    )?;
    Ok(())
}

/// Recomputes the `idents` column of observations from their text.
fn refresh_observation_idents(conn: &Connection, ids: &[i64]) -> rusqlite::Result<()> {
    let mut read = conn.prepare_cached(
        "SELECT title, subtitle, narrative, facts, concepts, files_read, files_modified
         FROM observations WHERE id = ?1",
    )?;
    let mut write = conn.prepare_cached("UPDATE observations SET idents = ?2 WHERE id = ?1")?;
    for id in ids {
        let texts: Vec<String> = read.query_row([id], |r| {
            let mut texts: Vec<String> =
                (0..3).map(|i| r.get(i)).collect::<rusqlite::Result<_>>()?;
            for i in 3..7 {
                texts.extend(parse_json_list(&r.get::<_, String>(i)?));
            }
            Ok(texts)
        })?;
        write.execute(params![
            id,
            identifier_words(texts.iter().map(String::as_str))
        ])?;
    }
    Ok(())
}

/// The forms in which `text` may be stored: as is, and JSON-escaped (inside
/// the JSON of tool inputs and lists) when that differs.
pub(crate) fn needles(text: &str) -> Vec<String> {
    let mut out = vec![text.to_owned()];
    let escaped = serde_json::to_string(text).unwrap_or_default();
    let escaped = escaped
        .strip_prefix('"')
        .and_then(|e| e.strip_suffix('"'))
        .unwrap_or_default();
    if escaped != text && !escaped.is_empty() {
        out.push(escaped.to_owned());
    }
    out
}

/// The tables with full-text indexes: their FTS table and indexed columns.
const INDEXED: &[(&str, &str, &str)] = &[
    (
        "observations",
        "observations_fts",
        "title, subtitle, narrative, facts, concepts, files_read, files_modified, idents",
    ),
    (
        "summaries",
        "summaries_fts",
        "request, investigated, learned, completed, next_steps, notes, idents",
    ),
    ("prompts", "prompts_fts", "text, idents"),
];

fn redact_in(tx: &Transaction<'_>, needles: &[String]) -> rusqlite::Result<Redacted> {
    let columns = text_columns(tx)?;
    // Indexed rows that will change: out of their index first, with the old text.
    let mut touched: Vec<(&str, Vec<i64>)> = Vec::new();
    for (table, fts, cols) in INDEXED {
        let ids = rows_containing(tx, table, &columns, needles)?;
        if !ids.is_empty() {
            tx.execute(
                &format!(
                    "INSERT INTO {fts} ({fts}, rowid, {cols}) SELECT 'delete', id, {cols}
                     FROM {table} WHERE id {IN_IDS}"
                ),
                [ids_json(&ids)],
            )?;
            touched.push((table, ids));
        }
    }
    let mut redacted = Redacted::default();
    for (table, cols) in &columns {
        let mut places = 0;
        for col in cols {
            for needle in needles {
                places += redact_column(tx, table, col, needle)?;
            }
        }
        if places > 0 {
            redacted.replaced += places;
            redacted.places.insert(table.clone(), places);
        }
    }
    for (table, ids) in &touched {
        refresh_idents(tx, table, ids)?;
        let (_, fts, cols) = INDEXED.iter().find(|(t, ..)| t == table).expect("indexed");
        tx.execute(
            &format!(
                "INSERT INTO {fts} (rowid, {cols}) SELECT id, {cols} FROM {table} WHERE id {IN_IDS}"
            ),
            [ids_json(ids)],
        )?;
    }
    Ok(redacted)
}

/// Replaces `needle` in one column. Where the replaced value would collide
/// with a unique key another row holds (two project roots that differ only
/// by the redacted text), a row that others may reference keeps its own
/// mark (`[REDACTED:manual]#<rowid>`); in a table without rowids the
/// duplicate row is merged into the one already there.
fn redact_column(
    tx: &Transaction<'_>,
    table: &str,
    col: &str,
    needle: &str,
) -> rusqlite::Result<usize> {
    let set = |conflict: &str, mark: &str| {
        format!(
            "UPDATE OR {conflict} \"{table}\" SET \"{col}\" = replace(\"{col}\", ?1, {mark})
             WHERE instr(\"{col}\", ?1) > 0"
        )
    };
    let mut places = tx.execute(&set("IGNORE", "?2"), params![needle, REDACTED])?;
    let left: i64 = tx.query_row(
        &format!("SELECT count(*) FROM \"{table}\" WHERE instr(\"{col}\", ?1) > 0"),
        [needle],
        |r| r.get(0),
    )?;
    if left > 0 {
        let statement = if has_rowid(tx, table)? {
            set("IGNORE", "?2 || '#' || rowid")
        } else {
            set("REPLACE", "?2")
        };
        places += tx.execute(&statement, params![needle, REDACTED])?;
    }
    Ok(places)
}

fn has_rowid(conn: &Connection, table: &str) -> rusqlite::Result<bool> {
    conn.query_row(
        "SELECT sql NOT LIKE '%WITHOUT ROWID%' FROM sqlite_master WHERE name = ?1",
        [table],
        |r| r.get(0),
    )
}

/// Gives the row `from` of an indexed table (observations, summaries,
/// prompts) the id `to`, which must be free, keeping its full-text index
/// entry and its files in step.
pub(crate) fn move_row_id(
    conn: &Connection,
    table: &str,
    from: i64,
    to: i64,
) -> rusqlite::Result<()> {
    let Some((_, fts, cols)) = INDEXED.iter().find(|(t, ..)| *t == table) else {
        return Ok(());
    };
    conn.execute(
        &format!("INSERT INTO {fts} ({fts}, rowid, {cols}) SELECT 'delete', id, {cols} FROM {table} WHERE id = ?1"),
        [from],
    )?;
    conn.execute(
        &format!("UPDATE {table} SET id = ?2 WHERE id = ?1"),
        [from, to],
    )?;
    if table == "observations" {
        conn.execute(
            "UPDATE observation_files SET observation_id = ?2 WHERE observation_id = ?1",
            [from, to],
        )?;
    }
    conn.execute(
        &format!("INSERT INTO {fts} (rowid, {cols}) SELECT id, {cols} FROM {table} WHERE id = ?1"),
        [to],
    )?;
    Ok(())
}

fn refresh_idents(conn: &Connection, table: &str, ids: &[i64]) -> rusqlite::Result<()> {
    match table {
        "observations" => refresh_observation_idents(conn, ids),
        _ => {
            let (_, _, cols) = INDEXED.iter().find(|(t, ..)| *t == table).expect("indexed");
            let text = cols
                .split(", ")
                .filter(|c| *c != "idents")
                .collect::<Vec<_>>()
                .join(" || ' ' || ");
            let mut read = conn.prepare(&format!("SELECT {text} FROM {table} WHERE id = ?1"))?;
            let mut write =
                conn.prepare(&format!("UPDATE {table} SET idents = ?2 WHERE id = ?1"))?;
            for id in ids {
                let text: String = read.query_row([id], |r| r.get(0))?;
                write.execute(params![id, identifier_words([text.as_str()])])?;
            }
            Ok(())
        }
    }
}

fn rows_containing(
    conn: &Connection,
    table: &str,
    columns: &[(String, Vec<String>)],
    needles: &[String],
) -> rusqlite::Result<Vec<i64>> {
    let Some((_, cols)) = columns.iter().find(|(t, _)| t == table) else {
        return Ok(Vec::new());
    };
    let mut out = Vec::new();
    for needle in needles {
        let any = cols
            .iter()
            .map(|c| format!("instr(\"{c}\", ?1) > 0"))
            .collect::<Vec<_>>()
            .join(" OR ");
        let ids: Vec<i64> = conn
            .prepare(&format!("SELECT id FROM {table} WHERE {any}"))?
            .query_map([needle], |r| r.get(0))?
            .collect::<rusqlite::Result<_>>()?;
        for id in ids {
            if !out.contains(&id) {
                out.push(id);
            }
        }
    }
    Ok(out)
}

/// Every ordinary table with its text columns (FTS tables and their shadow
/// tables excluded: they are rebuilt from the tables).
fn text_columns(conn: &Connection) -> rusqlite::Result<Vec<(String, Vec<String>)>> {
    let tables: Vec<String> = conn
        .prepare(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'
               AND sql NOT LIKE 'CREATE VIRTUAL%' AND name NOT LIKE '%_fts_%' ORDER BY name",
        )?
        .query_map([], |r| r.get(0))?
        .collect::<rusqlite::Result<_>>()?;
    let mut out = Vec::new();
    for table in tables {
        let cols: Vec<String> = conn
            .prepare("SELECT name FROM pragma_table_info(?1) WHERE upper(type) = 'TEXT'")?
            .query_map([&table], |r| r.get(0))?
            .collect::<rusqlite::Result<_>>()?;
        if !cols.is_empty() {
            out.push((table, cols));
        }
    }
    Ok(out)
}

/// Bytes of pages per kind of data, from `dbstat` (tables with their
/// indexes and full-text indexes).
fn pages_by_kind(conn: &Connection) -> rusqlite::Result<BTreeMap<String, u64>> {
    let mut out = BTreeMap::new();
    let mut stmt = conn.prepare(
        "SELECT coalesce(m.tbl_name, d.name), sum(d.pgsize) FROM dbstat d
         LEFT JOIN sqlite_master m ON m.name = d.name GROUP BY 1",
    )?;
    let rows = stmt.query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)?)))?;
    for row in rows {
        let (table, bytes) = row?;
        *out.entry(kind_of(&table).to_owned()).or_insert(0) += bytes.max(0) as u64;
    }
    let free: i64 = conn.query_row(
        "SELECT (SELECT freelist_count FROM pragma_freelist_count)
              * (SELECT page_size FROM pragma_page_size)",
        [],
        |r| r.get(0),
    )?;
    out.insert("free".to_owned(), free.max(0) as u64);
    Ok(out)
}

/// The kind of data a table holds, for [`StoreSize::by_kind`].
fn kind_of(table: &str) -> &'static str {
    const KINDS: &[(&str, &str)] = &[
        ("observation", "observations"),
        ("summar", "summaries"),
        ("turn_pieces", "summaries"),
        ("prompt", "prompts"),
        ("events", "events"),
        ("session", "sessions"),
        ("recall_shown", "sessions"),
        ("file_context_shown", "sessions"),
        ("llm_calls", "llm_calls"),
    ];
    KINDS
        .iter()
        .find(|(prefix, _)| table.starts_with(prefix))
        .map_or("other", |(_, kind)| kind)
}

/// Text bytes per project, largest first.
fn project_sizes(conn: &Connection) -> rusqlite::Result<Vec<ProjectSize>> {
    let mut stmt = conn.prepare(
        "SELECT p.root, p.name,
           coalesce((SELECT sum(length(o.title) + length(o.subtitle) + length(o.narrative)
                     + length(o.facts) + length(o.concepts) + length(o.files_read)
                     + length(o.files_modified)) FROM observations o WHERE o.project_id = p.id), 0),
           coalesce((SELECT sum(length(m.request) + length(m.investigated) + length(m.learned)
                     + length(m.completed) + length(m.next_steps) + length(m.notes))
                     FROM summaries m WHERE m.project_id = p.id), 0),
           coalesce((SELECT sum(length(q.text)) FROM prompts q JOIN sessions s ON s.id = q.session_id
                     WHERE s.project_id = p.id), 0),
           coalesce((SELECT sum(coalesce(length(e.input), 0) + coalesce(length(e.response), 0)
                     + coalesce(length(e.error), 0))
                     FROM events e JOIN sessions s ON s.id = e.session_id WHERE s.project_id = p.id), 0),
           (SELECT count(*) FROM observations o WHERE o.project_id = p.id),
           (SELECT count(*) FROM events e JOIN sessions s ON s.id = e.session_id
            WHERE s.project_id = p.id)
         FROM projects p",
    )?;
    let mut out: Vec<ProjectSize> = stmt
        .query_map([], |r| {
            let memory: i64 = r.get::<_, i64>(2)? + r.get::<_, i64>(3)? + r.get::<_, i64>(4)?;
            let raw: i64 = r.get(5)?;
            Ok(ProjectSize {
                project: r.get(0)?,
                name: r.get(1)?,
                bytes: (memory + raw).max(0) as u64,
                raw_bytes: raw.max(0) as u64,
                observations: r.get::<_, i64>(6)?.max(0) as u64,
                events: r.get::<_, i64>(7)?.max(0) as u64,
            })
        })?
        .collect::<rusqlite::Result<_>>()?;
    out.sort_by(|a, b| {
        b.bytes
            .cmp(&a.bytes)
            .then_with(|| a.project.cmp(&b.project))
    });
    Ok(out)
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::memory::{NewObservation, NewSummary, insert_observation, insert_summary};

    fn store() -> (tempfile::TempDir, Store) {
        let tmp = tempfile::tempdir().unwrap();
        let store = Store::open(&tmp.path().join("m.db"), Duration::from_secs(1)).unwrap();
        store
            .conn()
            .execute_batch(
                "INSERT INTO projects (id, root, name, created_at) VALUES (1, '/p', 'p', 0);
                 INSERT INTO sessions (id, platform, platform_session_id, project_id, started_at, updated_at)
                     VALUES (1, 'claude-code', 's1', 1, 0, 0), (2, 'claude-code', 's2', 1, 0, 0);
                 INSERT INTO events (uid, session_id, kind, tool_name, input, response, status, created_at)
                     VALUES ('e1', 1, 'tool_use', 'Bash', '{\"command\":\"echo \\\"q\\\"\"}', '\"out\"', 'done', 0),
                            ('e2', 1, 'tool_failure', 'Bash', '{\"command\":\"false\"}', '\"err\"', 'done', 0),
                            ('e3', 2, 'tool_use', 'Bash', '{}', '\"new\"', 'pending', 0);
                 INSERT INTO recall_shown (session_id, item, shown_at) VALUES (2, '#1', 0), (2, 'S1', 0);",
            )
            .unwrap();
        (tmp, store)
    }

    fn observation(store: &Store, uid: &str, session: i64, title: &str) -> i64 {
        insert_observation(
            store.conn(),
            &NewObservation {
                uid: uid.into(),
                project_id: Some(1),
                session_id: Some(session),
                kind: "change".into(),
                title: title.into(),
                files_modified: vec!["/p/src/lib.rs".into()],
                ..NewObservation::default()
            },
        )
        .unwrap()
        .unwrap()
    }

    fn matches(store: &Store, query: &str) -> i64 {
        store
            .conn()
            .query_row(
                "SELECT count(*) FROM observations_fts WHERE observations_fts MATCH ?1",
                [query],
                |r| r.get(0),
            )
            .unwrap()
    }

    fn count(store: &Store, sql: &str) -> i64 {
        store.conn().query_row(sql, [], |r| r.get(0)).unwrap()
    }

    fn fts_consistent(store: &Store) {
        assert!(store.check_fts().unwrap().is_empty());
    }

    #[test]
    fn forgetting_a_record_drops_the_knowledge_built_from_it() {
        let (_tmp, mut store) = store();
        let gone = observation(&store, "obs-k1", 1, "Chose sqlx over diesel");
        let kept = observation(&store, "obs-k2", 1, "Tests run with cargo nextest");
        store
            .conn()
            .execute_batch(&format!(
                "INSERT INTO projects (id, root, name, created_at) VALUES (2, '/q', 'q', 0);
                 INSERT INTO knowledge (project_id, kind, key, text, sources, updated_at) VALUES
                     (1, 'decision', 'db', 'Chose sqlx over diesel', '[\"#{gone}\"]', 0),
                     (1, 'command', 'test', 'cargo nextest', '[\"#{kept}\", \"S999\"]', 0),
                     (1, 'stack', 'stack', 'Rust', '[]', 0),
                     (2, 'stack', 'stack', 'Go (go.mod): q', '[]', 0);"
            ))
            .unwrap();
        let keys = |store: &Store| -> Vec<String> {
            let mut stmt = store
                .conn()
                .prepare("SELECT project_id || '/' || key FROM knowledge ORDER BY 1")
                .unwrap();
            stmt.query_map([], |r| r.get(0))
                .unwrap()
                .collect::<rusqlite::Result<_>>()
                .unwrap()
        };
        let what = Forget::Items(Items {
            observations: vec![gone],
            ..Items::default()
        });
        store.forget(&what, true).unwrap();
        assert_eq!(keys(&store).len(), 4, "a dry run changes nothing");
        store.forget(&what, false).unwrap();
        // The item quoting the forgotten decision is gone; an item naming a
        // summary that never existed here is gone too (it cannot be checked).
        assert_eq!(keys(&store), ["1/stack", "2/stack"]);
        store.forget(&Forget::Project(2), false).unwrap();
        assert_eq!(keys(&store), ["1/stack"]);
    }

    #[test]
    fn forgetting_items_removes_every_trace_and_the_uid_stays_dead() {
        let (_tmp, mut store) = store();
        let id = observation(&store, "obs-1", 1, "Parser rewrite with nom");
        let keep = observation(&store, "obs-2", 1, "Parser docs");
        let what = Forget::Items(Items {
            observations: vec![id],
            ..Items::default()
        });
        let dry = store.forget(&what, true).unwrap();
        assert_eq!(dry.observations, 1);
        assert_eq!(matches(&store, "nom"), 1, "a dry run changes nothing");

        assert_eq!(store.forget(&what, false).unwrap(), dry);
        assert_eq!(matches(&store, "nom"), 0);
        assert_eq!(matches(&store, "parser"), 1);
        assert_eq!(
            count(
                &store,
                &format!("SELECT count(*) FROM observation_files WHERE observation_id = {id}")
            ),
            0
        );
        assert_eq!(
            count(
                &store,
                &format!("SELECT count(*) FROM observation_files WHERE observation_id = {keep}")
            ),
            1
        );
        assert_eq!(
            count(
                &store,
                "SELECT count(*) FROM recall_shown WHERE item = '#1'"
            ),
            0
        );
        assert_eq!(
            count(
                &store,
                "SELECT count(*) FROM recall_shown WHERE item = 'S1'"
            ),
            1
        );
        fts_consistent(&store);
        // A redone batch writes the same uid: it is not stored again.
        let again = insert_observation(
            store.conn(),
            &NewObservation {
                uid: "obs-1".into(),
                title: "Parser rewrite with nom".into(),
                ..NewObservation::default()
            },
        )
        .unwrap();
        assert_eq!(again, None);

        let err = store
            .forget(
                &Forget::Items(Items {
                    observations: vec![keep],
                    summaries: vec![42],
                    ..Items::default()
                }),
                false,
            )
            .unwrap_err();
        assert!(
            matches!(err, CurateError::Unknown(ref ids) if ids == &["S42"]),
            "{err}"
        );
        assert_eq!(
            matches(&store, "docs"),
            1,
            "nothing changes when an id is unknown"
        );
    }

    #[test]
    fn forgetting_a_session_or_project_takes_everything_in_it() {
        let (_tmp, mut store) = store();
        observation(&store, "obs-1", 1, "One");
        observation(&store, "obs-2", 2, "Two");
        insert_summary(
            store.conn(),
            &NewSummary {
                uid: "sum-s1-1".into(),
                project_id: Some(1),
                session_id: Some(1),
                request: "do one".into(),
                ..NewSummary::default()
            },
        )
        .unwrap();
        let removed = store.forget(&Forget::Sessions(vec![1]), false).unwrap();
        assert_eq!(
            removed,
            Removed {
                observations: 1,
                summaries: 1,
                prompts: 0,
                events: 2,
                sessions: 1
            }
        );
        fts_consistent(&store);
        let removed = store.forget(&Forget::Project(1), false).unwrap();
        assert_eq!(
            (removed.observations, removed.events, removed.sessions),
            (1, 1, 1)
        );
        assert_eq!(count(&store, "SELECT count(*) FROM projects"), 0);
        assert_eq!(count(&store, "SELECT count(*) FROM forgotten"), 3);
        assert!(store.integrity_problem().unwrap().is_none());
    }

    #[test]
    fn an_edit_is_marked_and_reindexed() {
        let (_tmp, mut store) = store();
        let id = observation(&store, "obs-1", 1, "Cache uses LRU");
        let edit = Edit {
            title: Some("Cache uses ARC eviction".into()),
            facts: Some(vec!["evictionPolicy is arc".into()]),
            ..Edit::default()
        };
        store.edit_observation(id, &edit).unwrap();
        assert_eq!(matches(&store, "lru"), 0);
        assert_eq!(matches(&store, "arc"), 1);
        // The identifier words of the new text are indexed too.
        assert_eq!(matches(&store, "\"eviction policy\""), 1);
        fts_consistent(&store);
        assert_eq!(
            count(
                &store,
                "SELECT count(*) FROM observations WHERE edited_at IS NOT NULL"
            ),
            1
        );
        assert!(matches!(
            store.edit_observation(99, &edit),
            Err(CurateError::Unknown(_))
        ));
        let blank = Edit {
            title: Some("  ".into()),
            ..Edit::default()
        };
        assert!(matches!(
            store.edit_observation(id, &blank),
            Err(CurateError::Invalid(_))
        ));
        store.pin_observation(id, true).unwrap();
        assert_eq!(store.is_pinned(id).unwrap(), Some(true));
        assert!(store.pin_observation(99, true).is_err());
    }

    #[test]
    fn redaction_reaches_every_table_and_json_escaped_text() {
        let (_tmp, mut store) = store();
        observation(&store, "obs-1", 1, "Ran echo \"q\" against s2 secretive");
        let redacted = store.redact("echo \"q\"").unwrap();
        assert_eq!(redacted.places.get("observations"), Some(&1));
        assert_eq!(redacted.places.get("events"), Some(&1), "{redacted:?}");
        assert_eq!(redacted.replaced, 2);
        assert_eq!(matches(&store, "secretive"), 1);
        assert_eq!(matches(&store, "redacted"), 1);
        fts_consistent(&store);
        assert!(store.redact("abc").is_err());
        assert_eq!(store.redact("not stored anywhere").unwrap().replaced, 0);
    }

    #[test]
    fn retention_prunes_only_old_compressed_payloads() {
        let (_tmp, store) = store();
        assert_eq!(store.prune_raw_payloads(1).unwrap(), 2);
        assert_eq!(
            count(&store, "SELECT count(*) FROM events WHERE response IS NULL"),
            2
        );
        // The failure keeps its input (gotchas read it); the pending event keeps all.
        assert_eq!(
            count(
                &store,
                "SELECT count(*) FROM events WHERE input IS NOT NULL"
            ),
            2
        );
        assert_eq!(store.prune_raw_payloads(1).unwrap(), 0);
        let size = store.size().unwrap();
        assert!(size.bytes > 0);
        assert!(size.by_kind["events"] > 0);
        assert_eq!(size.by_project[0].project, "/p");
        assert_eq!(size.by_project[0].events, 3);
    }

    #[test]
    fn forgotten_texts_are_kept_up_to_a_bound_and_short_ones_not_at_all() {
        let mut gone = Gone::default();
        gone.text("short");
        assert!(gone.texts.is_empty());
        let big = "x".repeat(GONE_TEXT_MAX_BYTES / 2);
        gone.text(&big);
        gone.text(&format!("{big}y"));
        assert_eq!((gone.texts.len(), gone.partial), (1, true));
    }
}
