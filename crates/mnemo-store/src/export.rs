//! `mnemo export` / `mnemo import`: everything stored, as JSON Lines.
//!
//! One object per line, each with a `kind` (`project`, `session`, `prompt`,
//! `event`, `observation`, `summary`), parents before children. Records name
//! their project by root path and their session by platform and the
//! platform's session id, never by our row ids, so a file moves between
//! machines. Import is idempotent: records carry a `uid` (or, for hand-made
//! or claude-mem observations without one, a uid derived from their content),
//! and anything already present is skipped. Imported text passes through the
//! same privacy rules as captured text. A backup keeps what the user did: an
//! observation's pin and edit mark come back with it, and the row ids of
//! observations, summaries and prompts (`#12`, `S3`, `P4`) are kept wherever
//! they are free (always, when restoring into an empty store).

use std::io::{BufRead, Write};

use mnemo_core::model::{EventKind, Platform, Priority, QueueStatus};
use mnemo_core::paths::fnv1a;
use mnemo_core::privacy::Sanitizer;
use mnemo_core::time::{format_rfc3339, now_ms, parse_rfc3339};
use rusqlite::{OptionalExtension, Row, Transaction, params};
use serde_json::{Map, Value, json};

use crate::memory::{
    IndexBacklog, NewObservation, NewSummary, insert_observation, insert_observation_row,
    insert_summary, insert_summary_row,
};
use crate::shape::{
    OBSERVATION_FROM, OBSERVATION_SELECT, PROMPT_FROM, PROMPT_SELECT, SESSION_FROM, SESSION_SELECT,
    SUMMARY_FROM, SUMMARY_SELECT, observation_row, prompt_row, session_row, summary_row,
};
use crate::{Result, Store, json_list, parse_json_list};

#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct ExportCounts {
    pub projects: usize,
    pub sessions: usize,
    pub prompts: usize,
    pub events: usize,
    pub observations: usize,
    pub summaries: usize,
}

impl ExportCounts {
    pub fn total(&self) -> usize {
        self.projects
            + self.sessions
            + self.prompts
            + self.events
            + self.observations
            + self.summaries
    }
}

#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct ImportReport {
    pub inserted: ExportCounts,
    /// Records already present (same uid or natural key).
    pub skipped: usize,
    /// `(line number, what is wrong)` for lines that were not imported.
    pub invalid: Vec<(usize, String)>,
}

impl Store {
    /// Writes every record to `out`, one JSON object per line.
    pub fn export(&self, out: &mut dyn Write) -> Result<ExportCounts> {
        let mut counts = ExportCounts::default();
        let emit = |v: Value, out: &mut dyn Write| -> std::io::Result<()> {
            serde_json::to_writer(&mut *out, &v)?;
            out.write_all(b"\n")
        };
        let io = |e: std::io::Error| crate::StoreError::DataDir {
            path: "<stdout>".into(),
            source: e,
        };

        self.each(
            "SELECT root, name, created_at FROM projects ORDER BY id",
            |r| {
                Ok(json!({
                    "kind": "project",
                    "root": r.get::<_, String>(0)?,
                    "name": r.get::<_, String>(1)?,
                    "created_at": format_rfc3339(r.get(2)?),
                }))
            },
            |v| {
                counts.projects += 1;
                emit(v, out).map_err(io)
            },
        )?;
        self.each(
            &format!("SELECT {SESSION_SELECT} FROM {SESSION_FROM} ORDER BY s.id"),
            |r| Ok(to_value(session_row(r)?)),
            |v| {
                counts.sessions += 1;
                emit(v, out).map_err(io)
            },
        )?;
        self.each(
            &format!("SELECT {PROMPT_SELECT} FROM {PROMPT_FROM} ORDER BY q.id"),
            |r| Ok(to_value(prompt_row(r)?)),
            |v| {
                counts.prompts += 1;
                emit(v, out).map_err(io)
            },
        )?;
        self.each(
            &format!("SELECT {EVENT_SELECT} FROM events e JOIN sessions s ON s.id = e.session_id ORDER BY e.id"),
            event_value,
            |v| {
                counts.events += 1;
                emit(v, out).map_err(io)
            },
        )?;
        self.each(
            &format!(
                "SELECT {OBSERVATION_SELECT}, {OBSERVATION_CURATION} FROM {OBSERVATION_FROM}
                 ORDER BY o.id"
            ),
            |r| with_curation(to_value(observation_row(r)?), r),
            |v| {
                counts.observations += 1;
                emit(v, out).map_err(io)
            },
        )?;
        self.each(
            &format!("SELECT {SUMMARY_SELECT} FROM {SUMMARY_FROM} ORDER BY m.id"),
            |r| Ok(to_value(summary_row(r)?)),
            |v| {
                counts.summaries += 1;
                emit(v, out).map_err(io)
            },
        )?;
        out.flush().map_err(io)?;
        Ok(counts)
    }

    /// Runs `sql` and hands each row, converted by `row`, to `sink`.
    fn each(
        &self,
        sql: &str,
        row: impl Fn(&Row<'_>) -> rusqlite::Result<Value>,
        mut sink: impl FnMut(Value) -> Result<()>,
    ) -> Result<()> {
        let mut stmt = self.conn.prepare(sql).map_err(|e| self.err(e))?;
        let mut rows = stmt.query([]).map_err(|e| self.err(e))?;
        while let Some(r) = rows.next().map_err(|e| self.err(e))? {
            sink(row(r).map_err(|e| self.err(e))?)?;
        }
        Ok(())
    }

    /// Reads JSON Lines from `input` and stores every record not yet present.
    /// Observations and summaries without a project take `default_project`
    /// (a root directory), else are refused: nothing could ever find them.
    pub fn import(
        &mut self,
        input: &mut dyn BufRead,
        sanitizer: &Sanitizer,
        default_project: Option<&str>,
    ) -> Result<ImportReport> {
        let mut report = ImportReport::default();
        let path = self.path.clone();
        let tx = self
            .conn
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
            .map_err(|e| crate::sql_err(&path, e))?;
        let mut backlog = IndexBacklog::default();
        let mut line = String::new();
        let mut number = 0;
        loop {
            line.clear();
            number += 1;
            match input.read_line(&mut line) {
                Ok(0) => break,
                Ok(_) => {}
                Err(e) => {
                    report.invalid.push((number, format!("unreadable: {e}")));
                    break;
                }
            }
            if line.trim().is_empty() {
                continue;
            }
            let value = match serde_json::from_str(&line) {
                Ok(value) => value,
                Err(e) => {
                    report.invalid.push((number, format!("not JSON: {e}")));
                    continue;
                }
            };
            match import_one(&tx, value, sanitizer, default_project, &mut backlog)? {
                Outcome::Inserted(kind) => bump(&mut report.inserted, kind),
                Outcome::Present => report.skipped += 1,
                Outcome::Invalid(problem) => report.invalid.push((number, problem)),
            }
            backlog
                .write_if_full(&tx)
                .map_err(|e| crate::sql_err(&path, e))?;
        }
        backlog.write(&tx).map_err(|e| crate::sql_err(&path, e))?;
        restore_links(&tx).map_err(|e| crate::sql_err(&path, e))?;
        tx.commit().map_err(|e| crate::sql_err(&path, e))?;
        Ok(report)
    }

    /// Stores records already in the import shape (built by another reader,
    /// such as [`crate::claude_mem`]) in one transaction, handing each
    /// record's outcome to `each`; with `commit` false everything is rolled
    /// back (a dry run that still tells new from present).
    pub fn import_values(
        &mut self,
        records: impl IntoIterator<Item = Value>,
        sanitizer: &Sanitizer,
        commit: bool,
        mut each: impl FnMut(usize, &Outcome),
    ) -> Result<()> {
        let path = self.path.clone();
        let tx = self
            .conn
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
            .map_err(|e| crate::sql_err(&path, e))?;
        let mut backlog = IndexBacklog::default();
        for (i, value) in records.into_iter().enumerate() {
            let outcome = import_one(&tx, value, sanitizer, None, &mut backlog)?;
            each(i, &outcome);
            backlog
                .write_if_full(&tx)
                .map_err(|e| crate::sql_err(&path, e))?;
        }
        backlog.write(&tx).map_err(|e| crate::sql_err(&path, e))?;
        restore_links(&tx).map_err(|e| crate::sql_err(&path, e))?;
        if commit {
            tx.commit().map_err(|e| crate::sql_err(&path, e))?;
        }
        Ok(())
    }
}

/// Stores records already in the import shape inside the caller's
/// transaction (sync applies a page of pulled records and its own
/// bookkeeping in one commit): each record's outcome, in order.
pub fn import_in(
    tx: &Transaction<'_>,
    records: impl IntoIterator<Item = Value>,
    sanitizer: &Sanitizer,
) -> Result<Vec<Outcome>> {
    let mut backlog = IndexBacklog::default();
    let outcomes = records
        .into_iter()
        .map(|value| import_one(tx, value, sanitizer, None, &mut backlog))
        .collect::<Result<Vec<_>>>()?;
    let path = std::path::Path::new(tx.path().unwrap_or_default());
    backlog.write(tx).map_err(|e| crate::sql_err(path, e))?;
    Ok(outcomes)
}

/// What importing one record did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// Stored, with its kind (`session`, `observation`, ...).
    Inserted(&'static str),
    /// Already present (same uid or natural key).
    Present,
    /// Not imported, and why.
    Invalid(String),
}

/// Normalizes, sanitizes and stores one record.
fn import_one(
    tx: &Transaction<'_>,
    value: Value,
    sanitizer: &Sanitizer,
    default_project: Option<&str>,
    backlog: &mut IndexBacklog,
) -> Result<Outcome> {
    let record = match value {
        Value::Object(map) => match normalized(map, default_project) {
            Ok(map) => sanitized(Value::Object(map), sanitizer),
            Err(problem) => return Ok(Outcome::Invalid(problem)),
        },
        _ => return Ok(Outcome::Invalid("not a JSON object".into())),
    };
    match import_record(tx, &record, backlog) {
        Ok(Some(kind)) => Ok(Outcome::Inserted(kind)),
        Ok(None) => Ok(Outcome::Present),
        Err(ImportError::Invalid(msg)) => Ok(Outcome::Invalid(msg)),
        Err(ImportError::Sql(e)) => Err(crate::sql_err(
            std::path::Path::new(tx.path().unwrap_or_default()),
            e,
        )),
    }
}

/// Reads what export writes and what the README documents into the flat
/// fields [`import_record`] reads: `project` as `{root, name}` or a root,
/// `session` as `{platform, session_id}` or flat fields; a line without a
/// `kind` is an observation in the claude-mem shape. `default_project` is
/// the project of records that name none.
fn normalized(
    mut map: Map<String, Value>,
    default_project: Option<&str>,
) -> std::result::Result<Map<String, Value>, String> {
    if !map.contains_key("kind") {
        if !map.contains_key("title") {
            return Err(
                "no `kind` (project, session, prompt, event, observation, summary), \
                 and no `title` of a claude-mem observation"
                    .into(),
            );
        }
        map.insert("kind".into(), json!("observation"));
    }
    if let Some(Value::Object(project)) = map.get("project").cloned() {
        map.insert(
            "project".into(),
            project.get("root").cloned().unwrap_or(Value::Null),
        );
        if let Some(name) = project.get("name") {
            map.insert("project_name".into(), name.clone());
        }
    }
    if let Some(Value::Object(session)) = map.get("session").cloned() {
        for key in ["platform", "session_id"] {
            if let Some(v) = session.get(key) {
                map.insert(key.into(), v.clone());
            }
        }
    }
    let has_project = matches!(map.get("project"), Some(Value::String(p)) if !p.is_empty());
    if let (false, Some(root)) = (has_project, default_project) {
        map.insert("project".into(), json!(root));
    }
    Ok(map)
}

/// Sanitizes an imported record's text (not its identifiers and paths).
fn sanitized(mut record: Value, sanitizer: &Sanitizer) -> Value {
    if let Value::Object(map) = &mut record {
        for (key, value) in map.iter_mut() {
            if !matches!(
                key.as_str(),
                "kind"
                    | "uid"
                    | "platform"
                    | "session_id"
                    | "project"
                    | "project_name"
                    | "ref"
                    | "root"
                    | "cwd"
                    | "transcript_path"
                    | "created_at"
                    | "started_at"
                    | "ended_at"
            ) {
                sanitizer.value(value);
            }
        }
    }
    record
}

fn bump(c: &mut ExportCounts, kind: &str) {
    match kind {
        "project" => c.projects += 1,
        "session" => c.sessions += 1,
        "prompt" => c.prompts += 1,
        "event" => c.events += 1,
        "observation" => c.observations += 1,
        _ => c.summaries += 1,
    }
}

/// A record of [`crate::shape`] as a JSON object (they always serialize).
/// Columns of [`event_value`] (`e` an event, `s` its session).
const EVENT_SELECT: &str = "e.uid, s.platform, s.platform_session_id, e.prompt_number,
     e.platform_prompt_id, e.kind, e.tool_name, e.tool_use_id, e.input, e.response, e.error,
     e.files_read, e.files_modified, e.priority, e.duration_ms, e.note, e.status, e.attempts,
     e.last_error, e.created_at";

/// An exported event record.
fn event_value(r: &Row<'_>) -> rusqlite::Result<Value> {
    Ok(json!({
        "kind": "event",
        "uid": r.get::<_, String>(0)?,
        "platform": r.get::<_, String>(1)?,
        "session_id": r.get::<_, String>(2)?,
        "prompt_number": r.get::<_, i64>(3)?,
        "platform_prompt_id": r.get::<_, Option<String>>(4)?,
        "event_kind": r.get::<_, String>(5)?,
        "tool_name": r.get::<_, Option<String>>(6)?,
        "tool_use_id": r.get::<_, Option<String>>(7)?,
        "input": json_or_text(r.get(8)?),
        "response": json_or_text(r.get(9)?),
        "error": r.get::<_, Option<String>>(10)?,
        "files_read": parse_json_list(&r.get::<_, String>(11)?),
        "files_modified": parse_json_list(&r.get::<_, String>(12)?),
        "priority": Priority::from_i64(r.get(13)?).as_str(),
        "duration_ms": r.get::<_, Option<i64>>(14)?,
        "note": r.get::<_, Option<String>>(15)?,
        "status": r.get::<_, String>(16)?,
        "attempts": r.get::<_, i64>(17)?,
        "last_error": r.get::<_, Option<String>>(18)?,
        "created_at": format_rfc3339(r.get(19)?),
    }))
}

/// What an observation's record in the one shape does not carry but a
/// backup must: when it was edited, and the decision that replaced it (by
/// uid: its row id may differ in the store it is restored into).
const OBSERVATION_CURATION: &str = "o.edited_at AS backup_edited_at,
     (SELECT n.uid FROM observations n WHERE n.id = o.superseded_by) AS backup_superseded_by";

fn with_curation(mut record: Value, r: &Row<'_>) -> rusqlite::Result<Value> {
    let edited: Option<i64> = r.get("backup_edited_at")?;
    let successor: Option<String> = r.get("backup_superseded_by")?;
    if let Value::Object(map) = &mut record {
        if let Some(at) = edited {
            map.insert("edited_at_ms".into(), json!(at));
        }
        if let Some(uid) = successor {
            map.insert("superseded_by_uid".into(), json!(uid));
        }
    }
    Ok(record)
}

fn to_value(record: impl serde::Serialize) -> Value {
    serde_json::to_value(record).unwrap_or(Value::Null)
}

fn json_or_text(text: Option<String>) -> Value {
    match text {
        None => Value::Null,
        Some(t) => serde_json::from_str(&t).unwrap_or(Value::String(t)),
    }
}

enum ImportError {
    Invalid(String),
    Sql(rusqlite::Error),
}

impl From<rusqlite::Error> for ImportError {
    fn from(e: rusqlite::Error) -> Self {
        ImportError::Sql(e)
    }
}

type ImportResult<T> = std::result::Result<T, ImportError>;

/// Field access with clear messages for hand-written files.
struct Fields<'a>(&'a Map<String, Value>);

impl Fields<'_> {
    fn str(&self, key: &str) -> Option<String> {
        match self.0.get(key) {
            Some(Value::String(s)) if !s.is_empty() => Some(s.clone()),
            _ => None,
        }
    }

    fn required(&self, key: &str) -> ImportResult<String> {
        self.str(key)
            .ok_or_else(|| ImportError::Invalid(format!("missing or empty string field `{key}`")))
    }

    /// The project root an observation or a summary must name: without
    /// one, nothing could ever find it.
    fn project(&self) -> ImportResult<String> {
        self.str("project").ok_or_else(|| {
            ImportError::Invalid(
                "no `project`: nothing could find this record; add \"project\": \
                 \"/path/to/project\" or import with `--project DIR`"
                    .into(),
            )
        })
    }

    fn int(&self, key: &str) -> Option<i64> {
        self.0.get(key).and_then(Value::as_i64)
    }

    /// RFC 3339 text or epoch milliseconds; `now` when absent.
    fn time(&self, key: &str) -> ImportResult<i64> {
        match self.0.get(key) {
            None | Some(Value::Null) => Ok(now_ms()),
            Some(Value::Number(n)) => n
                .as_i64()
                .ok_or_else(|| ImportError::Invalid(format!("`{key}` is not a whole number"))),
            Some(Value::String(s)) => parse_rfc3339(s).ok_or_else(|| {
                ImportError::Invalid(format!("`{key}` is not an RFC 3339 time: {s}"))
            }),
            Some(_) => Err(ImportError::Invalid(format!("`{key}` is not a time"))),
        }
    }

    fn opt_time(&self, key: &str) -> ImportResult<Option<i64>> {
        match self.0.get(key) {
            None | Some(Value::Null) => Ok(None),
            _ => self.time(key).map(Some),
        }
    }

    /// A list of strings; a single string counts as a one-element list, and a
    /// JSON-encoded list inside a string (claude-mem stores them so) is unpacked.
    fn list(&self, key: &str) -> Vec<String> {
        match self.0.get(key) {
            Some(Value::Array(items)) => items
                .iter()
                .filter_map(|i| match i {
                    Value::String(s) => Some(s.clone()),
                    Value::Null => None,
                    other => Some(other.to_string()),
                })
                .collect(),
            Some(Value::String(s)) if s.trim_start().starts_with('[') => parse_json_list(s),
            Some(Value::String(s)) if !s.is_empty() => vec![s.clone()],
            _ => Vec::new(),
        }
    }

    fn json_text(&self, key: &str) -> Option<String> {
        match self.0.get(key) {
            None | Some(Value::Null) => None,
            Some(v) => Some(v.to_string()),
        }
    }
}

/// Stores one record; `Some(kind)` when inserted, None when already present.
fn import_record(
    tx: &Transaction<'_>,
    record: &Value,
    backlog: &mut IndexBacklog,
) -> ImportResult<Option<&'static str>> {
    let map = record.as_object().expect("checked by the caller");
    let f = Fields(map);
    let kind = f.required("kind")?;
    match kind.as_str() {
        "project" => import_project(tx, &f),
        "session" => import_session(tx, &f),
        "prompt" => import_prompt(tx, &f),
        "event" => import_event(tx, &f),
        "observation" => import_observation(tx, &f, backlog),
        "summary" => import_summary(tx, &f, backlog),
        other => Err(ImportError::Invalid(format!(
            "unknown kind `{other}` (expected project, session, prompt, event, observation or summary)"
        ))),
    }
}

/// A project record: its root, name and creation time.
fn import_project(tx: &Transaction<'_>, f: &Fields<'_>) -> ImportResult<Option<&'static str>> {
    let root = f.required("root")?;
    let existed = project_by_root(tx, &root)?.is_some();
    ensure_project(tx, &root, f.str("name"), f.time("created_at")?)?;
    Ok((!existed).then_some("project"))
}

/// A session record, keyed by platform and session id; the session it continues is linked once the whole file is read.
fn import_session(tx: &Transaction<'_>, f: &Fields<'_>) -> ImportResult<Option<&'static str>> {
    let (platform, sid) = session_key(f)?;
    if session_by_key(tx, &platform, &sid)?.is_some() {
        return Ok(None);
    }
    let project_id = match f.str("project") {
        Some(root) => Some(ensure_project(
            tx,
            &root,
            f.str("project_name"),
            f.time("started_at")?,
        )?),
        None => None,
    };
    let status = match f.str("status").as_deref() {
        Some("ended") => "ended",
        _ => "active",
    };
    let started = f.time("started_at")?;
    tx.execute(
        "INSERT INTO sessions (platform, platform_session_id, project_id, cwd, source,
                transcript_path, status, end_reason, prompt_count, started_at, updated_at,
                ended_at, id)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?10, ?11, ?12)",
        params![
            platform,
            sid,
            project_id,
            f.str("cwd"),
            f.str("source"),
            f.str("transcript_path"),
            status,
            f.str("end_reason"),
            f.int("prompt_count").unwrap_or(0),
            started,
            f.opt_time("ended_at")?,
            free_id(tx, "sessions", f.int("id"))?
        ],
    )?;
    if let Some(earlier) = f.str("continues") {
        link_later(tx, "session", &sid, &earlier, Some(&platform))?;
    }
    Ok(Some("session"))
}

/// A prompt record, in its session (made if missing), keeping its row id where free.
fn import_prompt(tx: &Transaction<'_>, f: &Fields<'_>) -> ImportResult<Option<&'static str>> {
    let uid = f.required("uid")?;
    if exists(tx, "prompts", &uid)? {
        return Ok(None);
    }
    let session_id = ensure_session(tx, f)?;
    let number = f
        .int("prompt_number")
        .ok_or_else(|| ImportError::Invalid("missing `prompt_number`".into()))?;
    let text = f.required("text")?;
    let inserted = crate::memory::insert_prompt(
        tx,
        &crate::memory::NewPrompt {
            uid: &uid,
            session_id,
            prompt_number: number,
            platform_prompt_id: f.str("platform_prompt_id").as_deref(),
            origin: &f.str("origin").unwrap_or_else(|| "user".into()),
            text: &text,
            created_at: f.time("created_at")?,
        },
    )?;
    tx.execute(
        "UPDATE sessions SET prompt_count = max(prompt_count, ?2) WHERE id = ?1",
        params![session_id, number],
    )?;
    if let Some(id) = inserted {
        keep_id(tx, "prompts", id, f)?;
    }
    Ok(inserted.map(|_| "prompt"))
}

/// A raw event record; a lease of the exporting machine becomes pending.
fn import_event(tx: &Transaction<'_>, f: &Fields<'_>) -> ImportResult<Option<&'static str>> {
    let uid = f.required("uid")?;
    if exists(tx, "events", &uid)? {
        return Ok(None);
    }
    let session_id = ensure_session(tx, f)?;
    let kind = f
        .str("event_kind")
        .and_then(|k| EventKind::parse(&k))
        .ok_or_else(|| {
            ImportError::Invalid("`event_kind` must be tool_use, tool_failure or turn_end".into())
        })?;
    let status = f
        .str("status")
        .and_then(|s| QueueStatus::parse(&s))
        .unwrap_or(QueueStatus::Pending);
    // A lease belonged to a worker of the exporting machine.
    let status = if status == QueueStatus::Leased {
        QueueStatus::Pending
    } else {
        status
    };
    let priority = f
        .str("priority")
        .and_then(|p| Priority::parse(&p))
        .unwrap_or(Priority::Normal);
    let inserted = tx.execute(
        "INSERT INTO events (uid, session_id, prompt_number, platform_prompt_id, kind,
                tool_name, tool_use_id, input, response, error, files_read,
                files_modified, priority, duration_ms, note, status, attempts,
                last_error, created_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16,
                 ?17, ?18, ?19)
         ON CONFLICT (session_id, tool_use_id) WHERE tool_use_id IS NOT NULL DO NOTHING",
        params![
            uid,
            session_id,
            f.int("prompt_number").unwrap_or(0),
            f.str("platform_prompt_id"),
            kind.as_str(),
            f.str("tool_name"),
            f.str("tool_use_id"),
            f.json_text("input"),
            f.json_text("response"),
            f.str("error"),
            json_list(&f.list("files_read")),
            json_list(&f.list("files_modified")),
            priority.as_i64(),
            f.int("duration_ms"),
            f.str("note"),
            status.as_str(),
            f.int("attempts").unwrap_or(0),
            f.str("last_error"),
            f.time("created_at")?
        ],
    )?;
    Ok((inserted > 0).then_some("event"))
}

/// An observation record, keeping its row id where free, with its pin, edit time, author and link.
fn import_observation(
    tx: &Transaction<'_>,
    f: &Fields<'_>,
    backlog: &mut IndexBacklog,
) -> ImportResult<Option<&'static str>> {
    let title = f.required("title")?;
    let project = Some(f.project()?);
    let kind = f.str("type").unwrap_or_else(|| "discovery".into());
    let created = f.time("created_at")?;
    let narrative = f.str("narrative").unwrap_or_default();
    let uid = f.str("uid").unwrap_or_else(|| {
        content_uid(&[
            "observation",
            project.as_deref().unwrap_or(""),
            &kind,
            &title,
            &narrative,
            &created.to_string(),
        ])
    });
    if exists(tx, "observations", &uid)? {
        return Ok(None);
    }
    let project_id = match &project {
        Some(root) => Some(ensure_project(tx, root, f.str("project_name"), created)?),
        None => None,
    };
    let observation = NewObservation {
        uid,
        project_id,
        session_id: optional_session(tx, f)?,
        prompt_number: f.int("prompt_number"),
        kind,
        title,
        subtitle: f.str("subtitle").unwrap_or_default(),
        narrative,
        facts: f.list("facts"),
        concepts: f.list("concepts"),
        files_read: f.list("files_read"),
        files_modified: f.list("files_modified"),
        source: f.str("source").unwrap_or_else(|| "import".into()),
        created_at: created,
    };
    // A kept row id moves the row, full-text row included: that one is
    // written now; the others after the batch's table rows.
    if f.int("id").is_some() {
        if let Some(id) = insert_observation(tx, &observation)? {
            let id = keep_id(tx, "observations", id, f)?;
            restore_curation(tx, id, f)?;
        }
    } else if let Some(id) = insert_observation_row(tx, &observation)? {
        restore_curation(tx, id, f)?;
        backlog.observation(id);
    }
    Ok(Some("observation"))
}

/// A summary record, keeping its row id where free, with its author.
fn import_summary(
    tx: &Transaction<'_>,
    f: &Fields<'_>,
    backlog: &mut IndexBacklog,
) -> ImportResult<Option<&'static str>> {
    let project = Some(f.project()?);
    let created = f.time("created_at")?;
    let text = |k: &str| f.str(k).unwrap_or_default();
    let uid = f.str("uid").unwrap_or_else(|| {
        content_uid(&[
            "summary",
            project.as_deref().unwrap_or(""),
            &text("request"),
            &text("completed"),
            &created.to_string(),
        ])
    });
    if exists(tx, "summaries", &uid)? {
        return Ok(None);
    }
    let project_id = match &project {
        Some(root) => Some(ensure_project(tx, root, f.str("project_name"), created)?),
        None => None,
    };
    let summary = NewSummary {
        uid,
        project_id,
        session_id: optional_session(tx, f)?,
        prompt_number: f.int("prompt_number"),
        request: text("request"),
        investigated: text("investigated"),
        learned: text("learned"),
        completed: text("completed"),
        next_steps: text("next_steps"),
        notes: text("notes"),
        source: f.str("source").unwrap_or_else(|| "import".into()),
        created_at: created,
    };
    let id = if f.int("id").is_some() {
        match insert_summary(tx, &summary)? {
            Some(id) => Some(keep_id(tx, "summaries", id, f)?),
            None => None,
        }
    } else {
        let id = insert_summary_row(tx, &summary)?;
        if let Some(id) = id {
            backlog.summary(id);
        }
        id
    };
    if let Some(id) = id {
        tx.execute(
            "UPDATE summaries SET author = ?2 WHERE id = ?1",
            params![id, f.str("author")],
        )?;
    }
    Ok(Some("summary"))
}

/// The record's exported row id when no row of `table` holds it (None:
/// the table numbers the row).
fn free_id(
    tx: &Transaction<'_>,
    table: &str,
    wanted: Option<i64>,
) -> rusqlite::Result<Option<i64>> {
    let Some(wanted) = wanted.filter(|&w| w > 0) else {
        return Ok(None);
    };
    let taken = tx
        .query_row(
            &format!("SELECT 1 FROM {table} WHERE id = ?1"),
            [wanted],
            |_| Ok(()),
        )
        .optional()?
        .is_some();
    Ok((!taken).then_some(wanted))
}

/// Moves the row just inserted as `id` to the record's exported `id` when
/// that one is free; the id the row ends with.
fn keep_id(tx: &Transaction<'_>, table: &str, id: i64, f: &Fields<'_>) -> rusqlite::Result<i64> {
    let wanted = f.int("id").filter(|&w| w != id);
    let Some(wanted) = free_id(tx, table, wanted)? else {
        return Ok(id);
    };
    crate::curate::move_row_id(tx, table, id, wanted)?;
    Ok(wanted)
}

/// An exported observation's pin, edit time and author, and the decision
/// that replaced it (linked once the whole file is read: it comes later).
fn restore_curation(tx: &Transaction<'_>, id: i64, f: &Fields<'_>) -> rusqlite::Result<()> {
    let flag = |k: &str| f.0.get(k).and_then(Value::as_bool).unwrap_or(false);
    let (pinned, edited) = (flag("pinned"), flag("edited"));
    let edited_at = edited.then(|| f.int("edited_at_ms").unwrap_or_else(now_ms));
    tx.execute(
        "UPDATE observations SET pinned = ?2, edited_at = ?3, author = ?4 WHERE id = ?1",
        params![id, pinned, edited_at, f.str("author")],
    )?;
    if let Some(successor) = f.str("superseded_by_uid") {
        let uid: String =
            tx.query_row("SELECT uid FROM observations WHERE id = ?1", [id], |r| {
                r.get(0)
            })?;
        link_later(tx, "observation", &uid, &successor, None)?;
    }
    Ok(())
}

/// Links an import restores once every record is stored (the record linked
/// to may come later in the file): `kind` `observation` (superseded by the
/// observation of uid `to`) or `session` (continues the session `to` of the
/// same platform).
const IMPORT_LINKS: &str = "CREATE TEMP TABLE IF NOT EXISTS import_links (
    kind TEXT NOT NULL, from_key TEXT NOT NULL, to_key TEXT NOT NULL, platform TEXT)";

fn link_later(
    tx: &Transaction<'_>,
    kind: &str,
    from: &str,
    to: &str,
    platform: Option<&str>,
) -> rusqlite::Result<()> {
    tx.execute(IMPORT_LINKS, [])?;
    tx.execute(
        "INSERT INTO temp.import_links (kind, from_key, to_key, platform) VALUES (?1, ?2, ?3, ?4)",
        params![kind, from, to, platform],
    )?;
    Ok(())
}

/// Restores the links [`link_later`] kept, to records now stored; a link
/// to a record the file did not hold is dropped.
fn restore_links(tx: &Transaction<'_>) -> rusqlite::Result<()> {
    tx.execute(IMPORT_LINKS, [])?;
    tx.execute(
        "UPDATE observations SET superseded_by = (
            SELECT n.id FROM temp.import_links l JOIN observations n ON n.uid = l.to_key
            WHERE l.kind = 'observation' AND l.from_key = observations.uid)
         WHERE uid IN (SELECT from_key FROM temp.import_links WHERE kind = 'observation')",
        [],
    )?;
    tx.execute(
        "UPDATE sessions SET continues = (
            SELECT c.id FROM temp.import_links l JOIN sessions c
              ON c.platform = l.platform AND c.platform_session_id = l.to_key
            WHERE l.kind = 'session' AND l.platform = sessions.platform
              AND l.from_key = sessions.platform_session_id)
         WHERE EXISTS (SELECT 1 FROM temp.import_links l WHERE l.kind = 'session'
              AND l.platform = sessions.platform AND l.from_key = sessions.platform_session_id)",
        [],
    )?;
    tx.execute("DROP TABLE temp.import_links", [])?;
    Ok(())
}

fn exists(tx: &Transaction<'_>, table: &str, uid: &str) -> rusqlite::Result<bool> {
    tx.prepare_cached(&format!("SELECT 1 FROM {table} WHERE uid = ?1"))?
        .exists([uid])
}

fn project_by_root(tx: &Transaction<'_>, root: &str) -> rusqlite::Result<Option<i64>> {
    tx.prepare_cached("SELECT id FROM projects WHERE root = ?1")?
        .query_row([root], |r| r.get(0))
        .optional()
}

fn ensure_project(
    tx: &Transaction<'_>,
    root: &str,
    name: Option<String>,
    at: i64,
) -> rusqlite::Result<i64> {
    if let Some(id) = project_by_root(tx, root)? {
        return Ok(id);
    }
    let name = name.unwrap_or_else(|| {
        let trimmed = root.trim_end_matches(['/', '\\']);
        trimmed
            .rsplit(['/', '\\'])
            .next()
            .filter(|n| !n.is_empty())
            .unwrap_or(root)
            .to_owned()
    });
    tx.query_row(
        "INSERT INTO projects (root, name, created_at) VALUES (?1, ?2, ?3) RETURNING id",
        params![root, name, at],
        |r| r.get(0),
    )
}

fn session_key(f: &Fields<'_>) -> ImportResult<(String, String)> {
    let platform = f.str("platform").unwrap_or_else(|| "claude-code".into());
    if Platform::parse(&platform).is_none() {
        return Err(ImportError::Invalid(format!(
            "unknown platform `{platform}`"
        )));
    }
    Ok((platform, f.required("session_id")?))
}

fn session_by_key(
    tx: &Transaction<'_>,
    platform: &str,
    sid: &str,
) -> rusqlite::Result<Option<i64>> {
    tx.prepare_cached("SELECT id FROM sessions WHERE platform = ?1 AND platform_session_id = ?2")?
        .query_row(params![platform, sid], |r| r.get(0))
        .optional()
}

/// The record's session, created bare when the file did not include it.
fn ensure_session(tx: &Transaction<'_>, f: &Fields<'_>) -> ImportResult<i64> {
    let (platform, sid) = session_key(f)?;
    if let Some(id) = session_by_key(tx, &platform, &sid)? {
        return Ok(id);
    }
    let at = f.time("created_at")?;
    Ok(tx.query_row(
        "INSERT INTO sessions (platform, platform_session_id, started_at, updated_at)
         VALUES (?1, ?2, ?3, ?3) RETURNING id",
        params![platform, sid, at],
        |r| r.get(0),
    )?)
}

fn optional_session(tx: &Transaction<'_>, f: &Fields<'_>) -> ImportResult<Option<i64>> {
    if f.str("session_id").is_none() {
        return Ok(None);
    }
    ensure_session(tx, f).map(Some)
}

/// A stable id for a record that came without one: 128 bits from two FNV
/// passes over its identifying fields.
fn content_uid(parts: &[&str]) -> String {
    let joined = parts.join("\u{1f}");
    let a = fnv1a(joined.as_bytes());
    let b = fnv1a(format!("mnemo\u{1f}{joined}").as_bytes());
    format!("imported-{a:016x}{b:016x}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::{
        Capture, CaptureOp, EventRecord, PromptOrigin, SessionRef, new_capture_id,
    };
    use mnemo_core::config::PrivacyConfig;
    use std::time::Duration;

    fn store(dir: &std::path::Path, name: &str) -> Store {
        Store::open(&dir.join(name), Duration::from_secs(1)).unwrap()
    }

    fn seed(store: &mut Store) {
        let session = SessionRef {
            platform: Platform::ClaudeCode,
            platform_session_id: "sess-1".into(),
            project_root: Some("/home/dev/shop".into()),
            project_name: Some("shop".into()),
            cwd: Some("/home/dev/shop".into()),
        };
        let mut e = EventRecord::new(EventKind::ToolUse, Priority::High);
        e.tool_name = Some("Edit".into());
        e.tool_use_id = Some("toolu_1".into());
        e.input = Some(r#"{"file_path":"/home/dev/shop/a.py"}"#.into());
        e.files_modified = vec!["/home/dev/shop/a.py".into()];
        for (i, op) in [
            CaptureOp::SessionStart {
                source: Some("startup".into()),
                transcript_path: None,
            },
            CaptureOp::Prompt {
                platform_prompt_id: Some("p1".into()),
                text: Some("fix login".into()),
                origin: PromptOrigin::User,
            },
            CaptureOp::Event(e),
        ]
        .into_iter()
        .enumerate()
        {
            store
                .apply(&Capture {
                    capture_id: new_capture_id(),
                    at_ms: 1_700_000_000_000 + i as i64,
                    session: session.clone(),
                    op,
                })
                .unwrap();
        }
    }

    fn export_text(store: &Store) -> String {
        let mut out = Vec::new();
        store.export(&mut out).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn export_import_round_trip_is_idempotent() {
        let tmp = tempfile::tempdir().unwrap();
        let mut a = store(tmp.path(), "a.db");
        seed(&mut a);
        let text = export_text(&a);
        let kinds: Vec<String> = text
            .lines()
            .map(|l| {
                serde_json::from_str::<Value>(l).unwrap()["kind"]
                    .as_str()
                    .unwrap()
                    .to_owned()
            })
            .collect();
        assert_eq!(kinds, ["project", "session", "prompt", "event"]);

        let sanitizer = Sanitizer::new(&PrivacyConfig::default());
        let mut b = store(tmp.path(), "b.db");
        let first = b.import(&mut text.as_bytes(), &sanitizer, None).unwrap();
        assert_eq!(first.inserted.total(), 4, "{first:?}");
        assert!(first.invalid.is_empty());
        let second = b.import(&mut text.as_bytes(), &sanitizer, None).unwrap();
        assert_eq!(second.inserted.total(), 0);
        assert_eq!(second.skipped, 4);
        assert_eq!(export_text(&b), text);
    }

    #[test]
    fn imports_claude_mem_style_observations_and_reports_bad_lines() {
        let tmp = tempfile::tempdir().unwrap();
        let mut s = store(tmp.path(), "m.db");
        let file = concat!(
            r#"{"kind":"observation","project":"/home/dev/shop","type":"bugfix","title":"Fixed login","subtitle":"hash check","narrative":"Login compared plain text.","facts":["login() uses check_hash"],"concepts":["auth"],"files_read":[],"files_modified":["/home/dev/shop/auth.py"],"created_at":"2026-11-02T10:00:00Z"}"#,
            "\n",
            r#"{"kind":"observation","project":"/home/dev/shop","type":"discovery","title":"Token","narrative":"key is AKIA","facts":"[\"a\",\"b\"]","created_at":"2026-11-02T10:01:00Z"}"#,
            "\n",
            "not json\n",
            r#"{"kind":"observation","title":"t","created_at":"last tuesday"}"#,
            "\n",
            r#"{"kind":"gadget"}"#,
            "\n"
        );
        let sanitizer = Sanitizer::new(&PrivacyConfig::default());
        let report = s.import(&mut file.as_bytes(), &sanitizer, None).unwrap();
        assert_eq!(report.inserted.observations, 2);
        assert_eq!(
            report.inserted.projects, 0,
            "projects come along implicitly"
        );
        let lines: Vec<usize> = report.invalid.iter().map(|(n, _)| *n).collect();
        assert_eq!(lines, [3, 4, 5], "{:?}", report.invalid);
        let facts: String = s
            .conn()
            .query_row(
                "SELECT facts FROM observations WHERE title = 'Token'",
                [],
                |r| r.get(0),
            )
            .unwrap();
        assert_eq!(facts, r#"["a","b"]"#);
        let again = s.import(&mut file.as_bytes(), &sanitizer, None).unwrap();
        assert_eq!(again.inserted.total(), 0);
        assert_eq!(again.skipped, 2);
    }

    #[test]
    fn the_readme_shape_imports_and_projectless_records_need_a_project() {
        let tmp = tempfile::tempdir().unwrap();
        let mut s = store(tmp.path(), "p.db");
        let file = concat!(
            r#"{"project":"/home/dev/shop","type":"bugfix","title":"No kind needed","created_at":"2026-11-02T10:00:00Z"}"#,
            "\n",
            r#"{"kind":"observation","project":{"root":"/home/dev/blog","name":"Blog"},"session":{"platform":"claude-code","session_id":"s-1"},"title":"Objects","created_at":"2026-11-02T10:00:00Z"}"#,
            "\n",
            r#"{"type":"decision","title":"Loose","created_at":"2026-11-02T10:00:00Z"}"#,
            "\n",
        );
        let sanitizer = Sanitizer::new(&PrivacyConfig::default());
        let report = s.import(&mut file.as_bytes(), &sanitizer, None).unwrap();
        assert_eq!(report.inserted.observations, 2, "{report:?}");
        assert_eq!(report.invalid.len(), 1);
        assert_eq!(report.invalid[0].0, 3);
        assert!(report.invalid[0].1.contains("--project"), "{report:?}");
        let (name, session): (String, String) = s
            .conn()
            .query_row(
                "SELECT p.name, x.platform_session_id FROM observations o
                 JOIN projects p ON p.id = o.project_id JOIN sessions x ON x.id = o.session_id
                 WHERE o.title = 'Objects'",
                [],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .unwrap();
        assert_eq!((name.as_str(), session.as_str()), ("Blog", "s-1"));

        let report = s
            .import(&mut file.as_bytes(), &sanitizer, Some("/home/dev/misc"))
            .unwrap();
        assert_eq!(report.inserted.observations, 1, "{report:?}");
        assert!(report.invalid.is_empty());
        let root: String = s
            .conn()
            .query_row(
                "SELECT p.root FROM observations o JOIN projects p ON p.id = o.project_id
                 WHERE o.title = 'Loose'",
                [],
                |r| r.get(0),
            )
            .unwrap();
        assert_eq!(root, "/home/dev/misc");
    }
}
