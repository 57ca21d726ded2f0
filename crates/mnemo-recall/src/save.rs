//! `save_memory`: something the agent decided is worth keeping.
//!
//! Stored as an observation of its own type, `memory`, with source `agent`,
//! in the project the agent works in, linked to its session when the host
//! said which one (Claude Code gives MCP servers `CLAUDE_CODE_SESSION_ID`).
//! The text passes through the same privacy rules as everything captured:
//! `<private>` spans and secrets never reach the store.

use mnemo_core::privacy::Sanitizer;
use mnemo_store::memory::{NewObservation, insert_observation};
use rusqlite::{Connection, OptionalExtension, params};

use crate::ids::ItemRef;
use crate::text::one_line;
use crate::{RecallError, Result};

/// The type and source of what the agent saves.
pub const MEMORY_TYPE: &str = "memory";
pub const AGENT_SOURCE: &str = "agent";

#[derive(Debug, Clone)]
pub struct SaveRequest<'a> {
    pub text: &'a str,
    /// A short title; the text's first line when None.
    pub title: Option<&'a str>,
    pub project_root: &'a str,
    pub project_name: &'a str,
    /// The host's platform name and session id, when known.
    pub session: Option<(&'a str, &'a str)>,
    pub sanitizer: &'a Sanitizer,
    pub now_ms: i64,
}

/// Stores the memory; its id.
pub fn save_memory(conn: &Connection, req: &SaveRequest<'_>) -> Result<ItemRef> {
    let text = req.sanitizer.text(req.text).trim().to_owned();
    if text.is_empty() {
        return Err(RecallError::Input(
            "nothing to save: the text is empty (or entirely <private>)".into(),
        ));
    }
    let title = req
        .title
        .map(|t| req.sanitizer.text(t).trim().to_owned())
        .filter(|t| !t.is_empty())
        .unwrap_or_else(|| {
            text.lines()
                .find(|l| !l.trim().is_empty())
                .unwrap_or("")
                .to_owned()
        });
    let title = one_line(&title, 120);

    let tx = conn.unchecked_transaction()?;
    tx.execute(
        "INSERT INTO projects (root, name, created_at) VALUES (?1, ?2, ?3)
         ON CONFLICT (root) DO NOTHING",
        params![req.project_root, req.project_name, req.now_ms],
    )?;
    let project_id: i64 = tx.query_row(
        "SELECT id FROM projects WHERE root = ?1",
        [req.project_root],
        |r| r.get(0),
    )?;
    let session = match req.session {
        Some((platform, sid)) => tx
            .query_row(
                "SELECT id, prompt_count FROM sessions
                 WHERE platform = ?1 AND platform_session_id = ?2",
                params![platform, sid],
                |r| Ok((r.get::<_, i64>(0)?, r.get::<_, i64>(1)?)),
            )
            .optional()?,
        None => None,
    };
    let observation = NewObservation {
        uid: uuid::Uuid::now_v7().to_string(),
        project_id: Some(project_id),
        session_id: session.map(|s| s.0),
        prompt_number: session.map(|s| s.1).filter(|n| *n > 0),
        kind: MEMORY_TYPE.to_owned(),
        title,
        subtitle: String::new(),
        narrative: text,
        facts: Vec::new(),
        concepts: Vec::new(),
        files_read: Vec::new(),
        files_modified: Vec::new(),
        source: AGENT_SOURCE.to_owned(),
        created_at: req.now_ms,
    };
    let id = insert_observation(&tx, &observation)?
        .ok_or_else(|| RecallError::Input("this memory is already stored".into()))?;
    tx.commit()?;
    Ok(ItemRef::observation(id))
}
