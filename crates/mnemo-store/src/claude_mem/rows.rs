//! claude-mem's rows, read from whatever schema version wrote them.
//!
//! Columns came and went across claude-mem's migrations: the session ids
//! were once `claude_session_id` / `sdk_session_id` (later
//! `content_session_id` / `memory_session_id`), `tool_uses` (with each tool
//! call's `cwd`) exists only since 13.x, `user_prompts.session_db_id`,
//! `agent_type` and the sync columns are recent. So every query is built
//! from `PRAGMA table_info`: a missing column reads as NULL, and of two
//! spellings the one present is used. Times are taken from the `*_epoch`
//! columns (milliseconds), else parsed from the ISO text beside them.
//! A row that cannot be read (a value of the wrong type, bad text) is
//! skipped and named in [`Dump::skipped_rows`]; the other rows are read.

use std::collections::{HashMap, HashSet};
use std::path::Path;

use mnemo_core::paths::fnv1a;
use mnemo_core::time::parse_rfc3339;
use rusqlite::{Connection, Row};

use super::ClaudeMemError;

/// A claude-mem session (`sdk_sessions`).
#[derive(Debug, Clone)]
pub struct Session {
    pub id: i64,
    /// Claude Code's session id.
    pub content_id: String,
    /// The observer's session id; observations and summaries join on it.
    pub memory_id: Option<String>,
    pub project: String,
    pub status: String,
    pub started_ms: i64,
    pub ended_ms: Option<i64>,
    /// Working directories of its tool calls (`tool_uses.cwd`), most used first.
    pub cwds: Vec<String>,
}

impl Session {
    /// A memory saved by hand through claude-mem's API: not a real session.
    pub fn is_manual(&self) -> bool {
        self.content_id.starts_with("manual-")
            || self
                .memory_id
                .as_deref()
                .is_some_and(|m| m.starts_with("manual-"))
    }
}

#[derive(Debug, Clone)]
pub struct Prompt {
    pub id: i64,
    pub content_id: String,
    pub number: i64,
    pub text: String,
    pub created_ms: i64,
}

#[derive(Debug, Clone)]
pub struct Observation {
    pub id: i64,
    pub memory_id: String,
    pub project: String,
    pub kind: String,
    pub title: String,
    pub subtitle: String,
    pub narrative: String,
    /// The legacy free-text body (NULL in current versions).
    pub text: String,
    pub facts: Vec<String>,
    pub concepts: Vec<String>,
    pub files_read: Vec<String>,
    pub files_modified: Vec<String>,
    pub prompt_number: Option<i64>,
    pub created_ms: i64,
    /// The subagent that did the work (`Explore`, ...), when known.
    pub agent_type: Option<String>,
}

#[derive(Debug, Clone)]
pub struct Summary {
    pub id: i64,
    pub memory_id: String,
    pub project: String,
    pub request: String,
    pub investigated: String,
    pub learned: String,
    pub completed: String,
    pub next_steps: String,
    pub notes: String,
    pub files_read: Vec<String>,
    pub files_edited: Vec<String>,
    pub prompt_number: Option<i64>,
    pub created_ms: i64,
}

/// Everything the import takes from one claude-mem database.
#[derive(Debug, Clone, Default)]
pub struct Dump {
    /// Stable across runs and copies of the same database (see [`identity`]).
    pub identity: String,
    /// The newest claude-mem migration applied, when recorded.
    pub schema_version: Option<i64>,
    pub sessions: Vec<Session>,
    pub prompts: Vec<Prompt>,
    pub observations: Vec<Observation>,
    pub summaries: Vec<Summary>,
    /// Rows that could not be read, each as `table: why`.
    pub skipped_rows: Vec<String>,
}

/// Reads everything from an open claude-mem database.
pub fn read(conn: &Connection, source: &Path) -> Result<Dump, ClaudeMemError> {
    let sql = |e| ClaudeMemError::Sql {
        path: source.to_owned(),
        source: e,
    };
    let schema = Schema::load(conn).map_err(sql)?;
    let mut skipped = Vec::new();
    Ok(Dump {
        identity: identity(conn, &schema).map_err(sql)?,
        schema_version: schema_version(conn, &schema),
        sessions: sessions(conn, &schema, &mut skipped).map_err(sql)?,
        prompts: prompts(conn, &schema, &mut skipped).map_err(sql)?,
        observations: observations(conn, &schema, &mut skipped).map_err(sql)?,
        summaries: summaries(conn, &schema, &mut skipped).map_err(sql)?,
        skipped_rows: skipped,
    })
}

/// The rows that read; each one that did not is noted in `skipped`.
fn readable<T>(
    rows: impl Iterator<Item = rusqlite::Result<T>>,
    table: &str,
    skipped: &mut Vec<String>,
) -> Vec<T> {
    rows.filter_map(|row| row.map_err(|e| skipped.push(format!("{table}: {e}"))).ok())
        .collect()
}

/// The columns of each table.
struct Schema(HashMap<String, HashSet<String>>);

impl Schema {
    fn load(conn: &Connection) -> rusqlite::Result<Schema> {
        let mut tables = HashMap::new();
        let names: Vec<String> = conn
            .prepare("SELECT name FROM sqlite_master WHERE type = 'table'")?
            .query_map([], |r| r.get(0))?
            .collect::<rusqlite::Result<_>>()?;
        for name in names {
            let columns = conn
                .prepare(&format!("PRAGMA table_info(\"{}\")", name.replace('"', "")))?
                .query_map([], |r| r.get::<_, String>(1))?
                .collect::<rusqlite::Result<HashSet<_>>>()?;
            tables.insert(name, columns);
        }
        Ok(Schema(tables))
    }

    fn has_table(&self, table: &str) -> bool {
        self.0.contains_key(table)
    }

    /// The first of `spellings` that `table` has, as a SQL expression, else NULL.
    fn col(&self, table: &str, spellings: &[&str]) -> String {
        let columns = self.0.get(table);
        spellings
            .iter()
            .find(|c| columns.is_some_and(|cols| cols.contains(**c)))
            .map_or_else(|| "NULL".to_owned(), |c| format!("\"{c}\""))
    }
}

const CONTENT_ID: &[&str] = &["content_session_id", "claude_session_id"];
const MEMORY_ID: &[&str] = &["memory_session_id", "sdk_session_id"];

/// A hash of when the database was created (its first migration), else of
/// its first session: the same database keeps it, another gets another.
fn identity(conn: &Connection, schema: &Schema) -> rusqlite::Result<String> {
    let mut seed: Option<String> = None;
    if schema.has_table("schema_versions") {
        seed = conn.query_row(
            "SELECT CAST(min(applied_at) AS TEXT) FROM schema_versions",
            [],
            |r| r.get(0),
        )?;
    }
    if seed.is_none() {
        seed = conn.query_row(
            &format!(
                "SELECT coalesce(min(started_at_epoch), 0) || ':' || coalesce(min({}), '')
                 FROM sdk_sessions",
                schema.col("sdk_sessions", CONTENT_ID)
            ),
            [],
            |r| r.get(0),
        )?;
    }
    Ok(format!(
        "{:016x}",
        fnv1a(seed.unwrap_or_default().as_bytes())
    ))
}

fn schema_version(conn: &Connection, schema: &Schema) -> Option<i64> {
    if !schema.has_table("schema_versions") {
        return None;
    }
    conn.query_row("SELECT max(version) FROM schema_versions", [], |r| r.get(0))
        .ok()
        .flatten()
}

/// Epoch milliseconds from an `_epoch` column, else from ISO text.
fn time(epoch: Option<i64>, text: Option<String>) -> Option<i64> {
    match epoch {
        // Seconds, as some early rows have.
        Some(e) if e > 0 && e < 100_000_000_000 => Some(e * 1000),
        Some(e) if e > 0 => Some(e),
        _ => text.as_deref().and_then(parse_rfc3339),
    }
}

fn text(r: &Row<'_>, i: usize) -> rusqlite::Result<String> {
    Ok(r.get::<_, Option<String>>(i)?.unwrap_or_default())
}

/// A JSON array of strings as claude-mem stores it; plain text as one item.
fn list(r: &Row<'_>, i: usize) -> rusqlite::Result<Vec<String>> {
    let raw = text(r, i)?;
    let raw = raw.trim();
    if raw.is_empty() {
        return Ok(Vec::new());
    }
    Ok(match serde_json::from_str::<Vec<serde_json::Value>>(raw) {
        Ok(items) => items
            .into_iter()
            .filter_map(|v| match v {
                serde_json::Value::String(s) if !s.trim().is_empty() => Some(s),
                serde_json::Value::Null | serde_json::Value::String(_) => None,
                other => Some(other.to_string()),
            })
            .collect(),
        Err(_) => vec![raw.to_owned()],
    })
}

fn sessions(
    conn: &Connection,
    schema: &Schema,
    skipped: &mut Vec<String>,
) -> rusqlite::Result<Vec<Session>> {
    let t = "sdk_sessions";
    let content = schema.col(t, CONTENT_ID);
    let query = format!(
        "SELECT id, {content}, {}, {}, {}, {}, {}, {}, {}
         FROM sdk_sessions WHERE {content} IS NOT NULL ORDER BY id",
        schema.col(t, MEMORY_ID),
        schema.col(t, &["project"]),
        schema.col(t, &["status"]),
        schema.col(t, &["started_at_epoch"]),
        schema.col(t, &["started_at"]),
        schema.col(t, &["completed_at_epoch"]),
        schema.col(t, &["completed_at"]),
    );
    let mut stmt = conn.prepare(&query)?;
    let rows = stmt.query_map([], |r| {
        Ok(Session {
            id: r.get(0)?,
            content_id: r.get(1)?,
            memory_id: r.get(2)?,
            project: text(r, 3)?,
            status: text(r, 4)?,
            started_ms: time(r.get(5)?, r.get(6)?).unwrap_or(0),
            ended_ms: time(r.get(7)?, r.get(8)?),
            cwds: Vec::new(),
        })
    })?;
    let mut sessions = readable(rows, t, skipped);
    let cwds = tool_cwds(conn, schema, skipped)?;
    for s in &mut sessions {
        if let Some(c) = cwds.get(&s.content_id) {
            s.cwds = c.clone();
        }
    }
    Ok(sessions)
}

/// Each content session's tool-call working directories, most used first.
fn tool_cwds(
    conn: &Connection,
    schema: &Schema,
    skipped: &mut Vec<String>,
) -> rusqlite::Result<HashMap<String, Vec<String>>> {
    let mut out: HashMap<String, Vec<String>> = HashMap::new();
    let content = schema.col("tool_uses", CONTENT_ID);
    let cwd = schema.col("tool_uses", &["cwd"]);
    if !schema.has_table("tool_uses") || content == "NULL" || cwd == "NULL" {
        return Ok(out);
    }
    let mut stmt = conn.prepare(&format!(
        "SELECT {content}, {cwd}, count(*) AS n FROM tool_uses
         WHERE {cwd} IS NOT NULL AND {cwd} <> '' GROUP BY 1, 2 ORDER BY 1, n DESC, 2"
    ))?;
    let rows = stmt.query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?)))?;
    for (session, cwd) in readable(rows, "tool_uses", skipped) {
        out.entry(session).or_default().push(cwd);
    }
    Ok(out)
}

fn prompts(
    conn: &Connection,
    schema: &Schema,
    skipped: &mut Vec<String>,
) -> rusqlite::Result<Vec<Prompt>> {
    let t = "user_prompts";
    if !schema.has_table(t) {
        return Ok(Vec::new());
    }
    let content = schema.col(t, CONTENT_ID);
    let query = format!(
        "SELECT id, {content}, {}, {}, {}, {} FROM user_prompts
         WHERE {content} IS NOT NULL ORDER BY id",
        schema.col(t, &["prompt_number"]),
        schema.col(t, &["prompt_text"]),
        schema.col(t, &["created_at_epoch"]),
        schema.col(t, &["created_at"]),
    );
    let mut stmt = conn.prepare(&query)?;
    let rows = stmt.query_map([], |r| {
        Ok(Prompt {
            id: r.get(0)?,
            content_id: r.get(1)?,
            number: r.get::<_, Option<i64>>(2)?.unwrap_or(0),
            text: text(r, 3)?,
            created_ms: time(r.get(4)?, r.get(5)?).unwrap_or(0),
        })
    })?;
    Ok(readable(rows, "user_prompts", skipped))
}

fn observations(
    conn: &Connection,
    schema: &Schema,
    skipped: &mut Vec<String>,
) -> rusqlite::Result<Vec<Observation>> {
    let t = "observations";
    let memory = schema.col(t, MEMORY_ID);
    let cols = [
        "project",
        "type",
        "title",
        "subtitle",
        "narrative",
        "text",
        "facts",
        "concepts",
        "files_read",
        "files_modified",
        "prompt_number",
        "created_at_epoch",
        "created_at",
        "agent_type",
    ]
    .map(|c| schema.col(t, &[c]))
    .join(", ");
    let mut stmt = conn.prepare(&format!(
        "SELECT id, {memory}, {cols} FROM observations ORDER BY id"
    ))?;
    let rows = stmt.query_map([], |r| {
        Ok(Observation {
            id: r.get(0)?,
            memory_id: text(r, 1)?,
            project: text(r, 2)?,
            kind: text(r, 3)?,
            title: text(r, 4)?,
            subtitle: text(r, 5)?,
            narrative: text(r, 6)?,
            text: text(r, 7)?,
            facts: list(r, 8)?,
            concepts: list(r, 9)?,
            files_read: list(r, 10)?,
            files_modified: list(r, 11)?,
            prompt_number: r.get(12)?,
            created_ms: time(r.get(13)?, r.get(14)?).unwrap_or(0),
            agent_type: r.get(15)?,
        })
    })?;
    Ok(readable(rows, "observations", skipped))
}

fn summaries(
    conn: &Connection,
    schema: &Schema,
    skipped: &mut Vec<String>,
) -> rusqlite::Result<Vec<Summary>> {
    let t = "session_summaries";
    if !schema.has_table(t) {
        return Ok(Vec::new());
    }
    let memory = schema.col(t, MEMORY_ID);
    let cols = [
        "project",
        "request",
        "investigated",
        "learned",
        "completed",
        "next_steps",
        "notes",
        "files_read",
        "files_edited",
        "prompt_number",
        "created_at_epoch",
        "created_at",
    ]
    .map(|c| schema.col(t, &[c]))
    .join(", ");
    let mut stmt = conn.prepare(&format!(
        "SELECT id, {memory}, {cols} FROM session_summaries ORDER BY id"
    ))?;
    let rows = stmt.query_map([], |r| {
        Ok(Summary {
            id: r.get(0)?,
            memory_id: text(r, 1)?,
            project: text(r, 2)?,
            request: text(r, 3)?,
            investigated: text(r, 4)?,
            learned: text(r, 5)?,
            completed: text(r, 6)?,
            next_steps: text(r, 7)?,
            notes: text(r, 8)?,
            files_read: list(r, 9)?,
            files_edited: list(r, 10)?,
            prompt_number: r.get(11)?,
            created_ms: time(r.get(12)?, r.get(13)?).unwrap_or(0),
        })
    })?;
    Ok(readable(rows, "session_summaries", skipped))
}
