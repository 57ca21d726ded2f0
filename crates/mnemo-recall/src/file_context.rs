//! A file's recent history, for the moment the agent is about to read or
//! edit it (PreToolUse).
//!
//! The lookup goes through `observation_files` (one index seek for the
//! file's absolute path and its path relative to the project root, since
//! imported observations may name files either way), so a file without
//! history costs next to nothing. `file_context_shown` keeps it to once per
//! file per session: the first tool call on a file gets its history, the
//! following ones get nothing.

use std::path::Path;

use rusqlite::{Connection, OptionalExtension, params};
use serde::Serialize;

use crate::Result;
use crate::context::type_marker;
use crate::ids::ItemRef;
use crate::text::{CONTEXT_CLOSE, CONTEXT_OPEN, display_path, js_len, one_line};
use crate::when::Clock;

/// At most this many observations are listed for one file.
pub const MAX_ENTRIES: usize = 8;

/// One observation about the file.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FileEntry {
    pub id: ItemRef,
    #[serde(rename = "type")]
    pub kind: String,
    pub title: String,
    pub created_at_ms: i64,
    /// The observation modified the file (rather than only reading it).
    pub modified: bool,
}

/// The two forms a stored observation may name `file` by: absolute, and
/// relative to the project root.
fn path_forms(root: &Path, file: &str) -> (String, String) {
    let path = Path::new(file);
    let absolute = if path.is_absolute() {
        path.to_owned()
    } else {
        root.join(path)
    };
    let relative = absolute
        .strip_prefix(root)
        .map(|p| p.to_string_lossy().into_owned())
        .unwrap_or_else(|_| file.to_owned());
    (absolute.to_string_lossy().into_owned(), relative)
}

/// True when any observation (of any project) names `file`: one primary-key
/// probe, so that the common case (no history) costs next to nothing.
pub fn any_history(conn: &Connection, root: &Path, file: &str) -> Result<bool> {
    let (absolute, relative) = path_forms(root, file);
    Ok(conn
        .prepare_cached("SELECT 1 FROM observation_files WHERE path IN (?1, ?2) LIMIT 1")?
        .query_row(params![absolute, relative], |_| Ok(()))
        .optional()?
        .is_some())
}

/// The newest observations of `project_id` that name `file` (an absolute
/// path, or one relative to `root`).
pub fn history(
    conn: &Connection,
    project_id: i64,
    root: &Path,
    file: &str,
    limit: usize,
) -> Result<Vec<FileEntry>> {
    let (absolute, relative) = path_forms(root, file);
    // CROSS JOIN: look the path up first (selective), never walk the project.
    let mut stmt = conn.prepare_cached(
        "SELECT o.id, o.type, o.title, o.created_at, max(f.modified)
         FROM observation_files f CROSS JOIN observations o ON o.id = f.observation_id
         WHERE f.path IN (?1, ?2) AND o.project_id = ?3
         GROUP BY o.id ORDER BY o.created_at DESC, o.id DESC LIMIT ?4",
    )?;
    let rows = stmt.query_map(
        params![
            absolute,
            relative,
            project_id,
            limit.min(MAX_ENTRIES) as i64
        ],
        |r| {
            Ok(FileEntry {
                id: ItemRef::observation(r.get(0)?),
                kind: r.get(1)?,
                title: r.get(2)?,
                created_at_ms: r.get(3)?,
                modified: r.get(4)?,
            })
        },
    )?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}

/// The additional context for `file`, within `budget_chars` (at least the
/// first entry is always shown).
pub fn render(
    file: &str,
    root: Option<&Path>,
    entries: &[FileEntry],
    clock: &Clock,
    budget_chars: usize,
) -> Option<String> {
    if entries.is_empty() {
        return None;
    }
    let head = format!(
        "{CONTEXT_OPEN}\nmnemo: earlier work on {} (newest first; full records: \
         mcp__mnemo__get_observations or `mnemo show ID`):\n",
        display_path(file, root)
    );
    let mut text = head;
    let close_len = js_len(CONTEXT_CLOSE);
    for (i, e) in entries.iter().enumerate() {
        let line = format!(
            "- {} {} {} {}{}\n",
            e.id,
            clock.age(e.created_at_ms),
            type_marker(&e.kind),
            one_line(&e.title, 100),
            if e.modified { "" } else { " (read)" }
        );
        if i > 0 && js_len(&text) + js_len(&line) + close_len > budget_chars {
            break;
        }
        text.push_str(&line);
    }
    text.push_str(CONTEXT_CLOSE);
    Some(text)
}

/// The row id of a session, by platform and the platform's session id.
pub fn session_row(conn: &Connection, platform: &str, session_id: &str) -> Result<Option<i64>> {
    Ok(conn
        .prepare_cached("SELECT id FROM sessions WHERE platform = ?1 AND platform_session_id = ?2")?
        .query_row(params![platform, session_id], |r| r.get(0))
        .optional()?)
}

/// True when the file's history was already shown in this session.
pub fn already_shown(conn: &Connection, session: i64, file: &str) -> Result<bool> {
    Ok(conn
        .prepare_cached("SELECT 1 FROM file_context_shown WHERE session_id = ?1 AND path = ?2")?
        .query_row(params![session, file], |_| Ok(()))
        .optional()?
        .is_some())
}

/// Records that the file's history is being shown; false when another hook
/// of the same session got there first (parallel tool calls on one file).
pub fn mark_shown(conn: &Connection, session: i64, file: &str, now_ms: i64) -> Result<bool> {
    let inserted = conn.execute(
        "INSERT INTO file_context_shown (session_id, path, shown_at) VALUES (?1, ?2, ?3)
         ON CONFLICT DO NOTHING",
        params![session, file, now_ms],
    )?;
    Ok(inserted == 1)
}
