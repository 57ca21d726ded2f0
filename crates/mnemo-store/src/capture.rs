//! Applying a [`Capture`]: one short IMMEDIATE transaction per hook.
//!
//! IMMEDIATE takes the write lock up front, so parallel hooks queue on the
//! busy timeout instead of failing on a read-to-write upgrade. Every
//! operation first gets-or-creates its project and session, because hooks
//! arrive in any order (a PostToolUse may precede its SessionStart).

use mnemo_core::model::EventKind;
use rusqlite::{OptionalExtension, Transaction, TransactionBehavior, params};

use crate::record::{Capture, CaptureOp, EventRecord, PromptOrigin, SessionRef};
use crate::{Result, Store, json_list};

/// What applying a capture did, for tests and logs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Applied {
    Session {
        session_id: i64,
    },
    Prompt {
        session_id: i64,
        prompt_number: i64,
        stored: bool,
    },
    Event {
        session_id: i64,
        event_id: Option<i64>,
    },
    /// Already recorded: a spooled capture applied before, or the same
    /// prompt or turn end reported twice (hooks installed at two scopes).
    Duplicate,
}

impl Store {
    /// Writes one capture.
    pub fn apply(&mut self, capture: &Capture) -> Result<Applied> {
        let path = self.path.clone();
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(|e| crate::sql_err(&path, e))?;
        let applied = apply_in(&tx, capture).map_err(|e| crate::sql_err(&path, e))?;
        tx.commit().map_err(|e| crate::sql_err(&path, e))?;
        Ok(applied)
    }

    /// Writes captures in one transaction (an import's session at a time):
    /// all or none.
    pub fn apply_all(&mut self, captures: &[Capture]) -> Result<Vec<Applied>> {
        let path = self.path.clone();
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(|e| crate::sql_err(&path, e))?;
        let applied = captures
            .iter()
            .map(|c| apply_in(&tx, c))
            .collect::<rusqlite::Result<Vec<_>>>()
            .map_err(|e| crate::sql_err(&path, e))?;
        tx.commit().map_err(|e| crate::sql_err(&path, e))?;
        Ok(applied)
    }

    /// How far a host session is recorded: its number of turns, and whether
    /// the last one has ended; None when the session is unknown. An import
    /// of the session's transcript goes on from there.
    pub fn session_progress(
        &self,
        platform: &str,
        platform_session_id: &str,
    ) -> Result<Option<(i64, bool)>> {
        self.conn
            .query_row(
                "SELECT s.prompt_count,
                        EXISTS (SELECT 1 FROM events e WHERE e.session_id = s.id
                                AND e.kind = 'turn_end' AND e.prompt_number = s.prompt_count)
                 FROM sessions s WHERE s.platform = ?1 AND s.platform_session_id = ?2",
                params![platform, platform_session_id],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .optional()
            .map_err(|e| crate::sql_err(&self.path, e))
    }

    /// Writes one capture read back from the spool: at most once, however
    /// often the spool is replayed.
    pub(crate) fn apply_once(&mut self, capture: &Capture) -> Result<Applied> {
        let path = self.path.clone();
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(|e| crate::sql_err(&path, e))?;
        let fresh = tx
            .execute(
                "INSERT INTO applied_captures (capture_id, applied_at) VALUES (?1, ?2)
                 ON CONFLICT DO NOTHING",
                params![capture.capture_id, capture.at_ms],
            )
            .map_err(|e| crate::sql_err(&path, e))?;
        let applied = if fresh == 0 {
            Applied::Duplicate
        } else {
            apply_in(&tx, capture).map_err(|e| crate::sql_err(&path, e))?
        };
        tx.commit().map_err(|e| crate::sql_err(&path, e))?;
        Ok(applied)
    }
}

fn apply_in(tx: &Transaction<'_>, capture: &Capture) -> rusqlite::Result<Applied> {
    let at = capture.at_ms;
    let session_id = session_id(tx, &capture.session, at)?;
    match &capture.op {
        CaptureOp::SessionStart {
            source,
            transcript_path,
        } => session_start(
            tx,
            session_id,
            source.as_deref(),
            transcript_path.as_deref(),
            at,
        ),
        CaptureOp::Prompt {
            platform_prompt_id,
            text,
            origin,
        } => {
            let prompt = PromptCapture {
                uid: &capture.capture_id,
                platform_prompt_id: platform_prompt_id.as_deref(),
                text: text.as_deref(),
                origin: origin.as_str(),
                at,
            };
            apply_prompt(tx, session_id, &prompt)
        }
        CaptureOp::Event(event) => apply_event(tx, &capture.capture_id, session_id, event, at),
        CaptureOp::Note { text, thought } => {
            crate::notes::insert(tx, &capture.capture_id, session_id, text, *thought, at)?;
            Ok(Applied::Session { session_id })
        }
        CaptureOp::SessionEnd { reason } => {
            tx.execute(
                "UPDATE sessions SET status = 'ended', ended_at = ?2, end_reason = ?3, updated_at = ?2
                 WHERE id = ?1",
                params![session_id, at, reason],
            )?;
            Ok(Applied::Session { session_id })
        }
    }
}

/// A session (re)started: a resumed session is active again, and one
/// started by `/clear` or a compaction is linked to the one it continues.
fn session_start(
    tx: &Transaction<'_>,
    session_id: i64,
    source: Option<&str>,
    transcript_path: Option<&str>,
    at: i64,
) -> rusqlite::Result<Applied> {
    if start_repeated(tx, session_id, source, at)? {
        return Ok(Applied::Duplicate);
    }
    tx.execute(
        "UPDATE sessions SET source = COALESCE(?2, source),
                transcript_path = COALESCE(?3, transcript_path),
                status = 'active', ended_at = NULL, end_reason = NULL, updated_at = ?4
         WHERE id = ?1",
        params![session_id, source, transcript_path, at],
    )?;
    if matches!(source, Some("clear" | "compact")) {
        link_continued(tx, session_id, source)?;
    }
    Ok(Applied::Session { session_id })
}

/// A prompt as captured, for [`apply_prompt`].
struct PromptCapture<'c> {
    uid: &'c str,
    platform_prompt_id: Option<&'c str>,
    text: Option<&'c str>,
    origin: &'c str,
    at: i64,
}

/// A prompt: a new turn (its text stored unless private, the turn's early
/// events moved into it), or a repeat, or a message joining the running
/// turn.
fn apply_prompt(
    tx: &Transaction<'_>,
    session_id: i64,
    p: &PromptCapture<'_>,
) -> rusqlite::Result<Applied> {
    let seen = match (p.platform_prompt_id, p.text) {
        (Some(pid), _) => prompt_seen(tx, session_id, pid)?,
        (None, Some(text)) => prompt_repeated(tx, session_id, text, p.at)?,
        (None, None) => false,
    };
    if seen {
        return Ok(match (p.platform_prompt_id, p.text) {
            (Some(pid), Some(text)) => joined_turn(tx, session_id, pid, text)?,
            _ => None,
        }
        .unwrap_or(Applied::Duplicate));
    }
    let prompt_number: i64 = tx.query_row(
        "UPDATE sessions SET prompt_count = prompt_count + 1, current_prompt_id = ?2,
                updated_at = ?3
         WHERE id = ?1 RETURNING prompt_count",
        params![session_id, p.platform_prompt_id, p.at],
        |r| r.get(0),
    )?;
    if let Some(text) = p.text {
        crate::memory::insert_prompt(
            tx,
            &crate::memory::NewPrompt {
                uid: p.uid,
                session_id,
                prompt_number,
                platform_prompt_id: p.platform_prompt_id,
                origin: p.origin,
                text,
                created_at: p.at,
            },
        )?;
    }
    if p.platform_prompt_id.is_some() {
        // Events of this turn that arrived before their prompt.
        tx.execute(
            "UPDATE events SET prompt_number = ?3
             WHERE session_id = ?1 AND platform_prompt_id = ?2 AND prompt_number < ?3",
            params![session_id, p.platform_prompt_id, prompt_number],
        )?;
    }
    Ok(Applied::Prompt {
        session_id,
        prompt_number,
        stored: p.text.is_some(),
    })
}

/// A tool event or a turn's end, unless it was already stored.
fn apply_event(
    tx: &Transaction<'_>,
    uid: &str,
    session_id: i64,
    event: &EventRecord,
    at: i64,
) -> rusqlite::Result<Applied> {
    let seen = if event.kind == EventKind::TurnEnd {
        turn_end_seen(tx, session_id, event)?
    } else if event.tool_use_id.is_none() {
        tool_call_repeated(tx, session_id, event, at)?
    } else {
        adopted_live_copy(tx, session_id, event)?
    };
    if seen {
        return Ok(Applied::Duplicate);
    }
    let event_id = insert_event(tx, uid, session_id, event, at)?;
    Ok(Applied::Event {
        session_id,
        event_id,
    })
}

/// A message the user typed while a turn ran: Codex sends it with the
/// running turn's id, so it is part of that turn and joins its prompt.
/// None when the turn's prompt already holds it (a second delivery) or has
/// no stored row (a private prompt).
fn joined_turn(
    tx: &Transaction<'_>,
    session_id: i64,
    pid: &str,
    text: &str,
) -> rusqlite::Result<Option<Applied>> {
    let row: Option<(i64, i64)> = tx
        .query_row(
            "SELECT id, prompt_number FROM prompts
             WHERE session_id = ?1 AND platform_prompt_id = ?2
             ORDER BY prompt_number DESC LIMIT 1",
            params![session_id, pid],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .optional()?;
    let Some((id, prompt_number)) = row else {
        return Ok(None);
    };
    if !crate::memory::add_to_prompt(tx, id, text)? {
        return Ok(None);
    }
    Ok(Some(Applied::Prompt {
        session_id,
        prompt_number,
        stored: true,
    }))
}

/// Whether this platform prompt id already opened a turn of the session.
fn prompt_seen(tx: &Transaction<'_>, session_id: i64, pid: &str) -> rusqlite::Result<bool> {
    tx.query_row(
        "SELECT EXISTS (SELECT 1 FROM sessions WHERE id = ?1 AND current_prompt_id = ?2)
             OR EXISTS (SELECT 1 FROM prompts WHERE session_id = ?1 AND platform_prompt_id = ?2)",
        params![session_id, pid],
        |r| r.get(0),
    )
}

/// How far apart the two deliveries of one hook event can arrive (hooks
/// registered twice run in parallel, or one after the other, or one of them
/// is spooled and replayed with its original time) and still be one event.
const REPEAT_WINDOW_MS: i64 = 30_000;

/// How far apart the two deliveries of one SessionStart arrive when its hooks
/// are registered twice (by `mnemo install` and by the plugin): they run in
/// parallel, so well within this. A session that is started again (resumed)
/// with the same source this soon after its last activity is not a real case.
const START_REPEAT_WINDOW_MS: i64 = 10_000;

/// Whether this SessionStart is one already applied, delivered again: the
/// session is active, was last started with the same (known) source and has
/// not moved since, within [`START_REPEAT_WINDOW_MS`]. The hook then gives no
/// second copy of the memory index.
fn start_repeated(
    tx: &Transaction<'_>,
    session_id: i64,
    source: Option<&str>,
    at: i64,
) -> rusqlite::Result<bool> {
    let Some(source) = source else {
        return Ok(false);
    };
    tx.query_row(
        "SELECT EXISTS (SELECT 1 FROM sessions
                        WHERE id = ?1 AND status = 'active' AND source = ?2
                          AND abs(updated_at - ?3) <= ?4)",
        params![session_id, source, at, START_REPEAT_WINDOW_MS],
        |r| r.get(0),
    )
}

/// How long after its last activity a session can still be continued by a
/// session that Claude Code starts on `/clear` or compaction.
const CONTINUITY_WINDOW_MS: i64 = 6 * 3600 * 1000;

/// Whether a prompt the host gave no id is the session's current prompt
/// delivered again: same text, its turn not ended, within the window. The
/// user sending the same words again opens a new turn (the last one ended).
fn prompt_repeated(
    tx: &Transaction<'_>,
    session_id: i64,
    text: &str,
    at: i64,
) -> rusqlite::Result<bool> {
    tx.query_row(
        "SELECT EXISTS (SELECT 1 FROM prompts q JOIN sessions s ON s.id = q.session_id
                        WHERE q.session_id = ?1 AND q.prompt_number = s.prompt_count
                          AND q.text = ?2 AND abs(q.created_at - ?3) <= ?4
                          AND NOT EXISTS (SELECT 1 FROM events e
                                          WHERE e.session_id = ?1 AND e.kind = 'turn_end'
                                            AND e.prompt_number = q.prompt_number))",
        params![session_id, text, at, REPEAT_WINDOW_MS],
        |r| r.get(0),
    )
}

/// Whether a tool call the host gave no id is recorded already: the same
/// tool, input, response and error in the same session, within the window.
/// (Calls with an id are kept once by the `events_tool_use_once` index.)
fn tool_call_repeated(
    tx: &Transaction<'_>,
    session_id: i64,
    e: &EventRecord,
    at: i64,
) -> rusqlite::Result<bool> {
    tx.query_row(
        "SELECT EXISTS (SELECT 1 FROM events
                        WHERE session_id = ?1 AND created_at BETWEEN ?2 - ?3 AND ?2 + ?3
                          AND tool_use_id IS NULL AND kind = ?4 AND tool_name IS ?5
                          AND input IS ?6 AND response IS ?7 AND error IS ?8)",
        params![
            session_id,
            at,
            REPEAT_WINDOW_MS,
            e.kind.as_str(),
            e.tool_name,
            e.input,
            e.response,
            e.error
        ],
        |r| r.get(0),
    )
}

/// Whether a call that comes with an id (an imported recording's) was
/// captured already without one: a host whose hooks give calls no id
/// (Gemini CLI) recorded it live, in the same turn, with the same tool and
/// input. That row takes the id, so the call stays one and a later import
/// finds it by id.
fn adopted_live_copy(
    tx: &Transaction<'_>,
    session_id: i64,
    e: &EventRecord,
) -> rusqlite::Result<bool> {
    let adopted = tx.execute(
        "UPDATE events SET tool_use_id = ?5
         WHERE id = (SELECT id FROM events
                     WHERE session_id = ?1 AND tool_use_id IS NULL AND kind = ?2
                       AND tool_name IS ?3 AND input IS ?4
                       AND prompt_number = COALESCE(
                             (SELECT prompt_number FROM prompts
                              WHERE session_id = ?1 AND platform_prompt_id = ?6),
                             (SELECT prompt_count FROM sessions WHERE id = ?1))
                     ORDER BY id LIMIT 1)
           AND NOT EXISTS (SELECT 1 FROM events WHERE session_id = ?1 AND tool_use_id = ?5)",
        params![
            session_id,
            e.kind.as_str(),
            e.tool_name,
            e.input,
            e.tool_use_id,
            e.platform_prompt_id
        ],
    )?;
    Ok(adopted > 0)
}

/// Links a session started by `/clear` or compaction to the one it
/// continues: same project, same platform, started no later, active within
/// [`CONTINUITY_WINDOW_MS`] of it; the one that ended for the same reason
/// first, then the most recently active. Only a fresh session (no turn, no
/// event yet) is linked: Claude Code versions that keep the session id
/// across compaction send `compact` for a session with a history, which
/// continues nothing. Set once: a repeated SessionStart changes nothing.
fn link_continued(
    tx: &Transaction<'_>,
    session_id: i64,
    source: Option<&str>,
) -> rusqlite::Result<()> {
    tx.execute(
        "UPDATE sessions SET continues = (
             SELECT o.id FROM sessions o, sessions n
             WHERE n.id = ?1 AND o.project_id = n.project_id AND o.platform = n.platform
               AND o.id <> n.id AND o.continues IS NOT n.id AND o.started_at <= n.started_at
               AND max(o.updated_at, COALESCE((SELECT max(e.created_at) FROM events e
                                               WHERE e.session_id = o.id), 0))
                   >= n.started_at - ?3
             ORDER BY (o.end_reason IS ?2) DESC,
                      max(o.updated_at, COALESCE((SELECT max(e.created_at) FROM events e
                                                  WHERE e.session_id = o.id), 0)) DESC
             LIMIT 1)
         WHERE id = ?1 AND continues IS NULL AND project_id IS NOT NULL AND prompt_count = 0
           AND NOT EXISTS (SELECT 1 FROM events e WHERE e.session_id = ?1)",
        params![session_id, source, CONTINUITY_WINDOW_MS],
    )?;
    Ok(())
}

/// Whether this turn end is recorded already: the same one (same turn, same
/// last message); one without the last message once the turn has ended (a
/// host that fires two turn ends, as Cursor does with its Claude-style `stop`
/// beside `afterAgentResponse`); or one whose message fills in a turn end
/// recorded without it, which it then completes instead of adding another.
fn turn_end_seen(tx: &Transaction<'_>, session_id: i64, e: &EventRecord) -> rusqlite::Result<bool> {
    const THIS_TURN: &str = "session_id = ?1 AND kind = 'turn_end' AND platform_prompt_id IS ?2
         AND prompt_number = (SELECT prompt_count FROM sessions WHERE id = ?1)";
    let same = tx.query_row(
        &format!(
            "SELECT EXISTS (SELECT 1 FROM events WHERE {THIS_TURN}
                AND (response IS ?3 OR ?3 IS NULL))"
        ),
        params![session_id, e.platform_prompt_id, e.response],
        |r| r.get(0),
    )?;
    if same || e.response.is_none() {
        return Ok(same);
    }
    let completed = tx.execute(
        &format!("UPDATE events SET response = ?3 WHERE {THIS_TURN} AND response IS NULL"),
        params![session_id, e.platform_prompt_id, e.response],
    )?;
    Ok(completed > 0)
}

/// Inserts an event; None when the same tool call was recorded already.
fn insert_event(
    tx: &Transaction<'_>,
    uid: &str,
    session_id: i64,
    e: &EventRecord,
    at: i64,
) -> rusqlite::Result<Option<i64>> {
    // The turn: the prompt with the platform's prompt id when we stored it,
    // else the session's current turn.
    tx.query_row(
        "INSERT INTO events (uid, session_id, prompt_number, platform_prompt_id, kind, tool_name,
                             tool_use_id, input, response, error, files_read, files_modified,
                             priority, duration_ms, note, created_at)
         VALUES (?1, ?2,
                 COALESCE((SELECT prompt_number FROM prompts
                           WHERE session_id = ?2 AND platform_prompt_id = ?3),
                          (SELECT prompt_count FROM sessions WHERE id = ?2)),
                 ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15)
         ON CONFLICT (session_id, tool_use_id) WHERE tool_use_id IS NOT NULL DO NOTHING
         RETURNING id",
        params![
            uid,
            session_id,
            e.platform_prompt_id,
            e.kind.as_str(),
            e.tool_name,
            e.tool_use_id,
            e.input,
            e.response,
            e.error,
            json_list(&e.files_read),
            json_list(&e.files_modified),
            e.priority.as_i64(),
            e.duration_ms,
            e.note,
            at
        ],
        |r| r.get(0),
    )
    .optional()
}

/// Gets or creates the session (and its project). A session keeps the
/// project it started in: a later `cd` does not move it.
fn session_id(tx: &Transaction<'_>, s: &SessionRef, at: i64) -> rusqlite::Result<i64> {
    let existing: Option<(i64, Option<i64>)> = tx
        .query_row(
            "SELECT id, project_id FROM sessions WHERE platform = ?1 AND platform_session_id = ?2",
            params![s.platform.as_str(), s.platform_session_id],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .optional()?;
    match existing {
        Some((id, Some(_))) => Ok(id),
        Some((id, None)) => {
            if let Some(project_id) = project_id(tx, s, at)? {
                tx.execute(
                    "UPDATE sessions SET project_id = ?2, cwd = COALESCE(cwd, ?3) WHERE id = ?1",
                    params![id, project_id, s.cwd],
                )?;
            }
            Ok(id)
        }
        None => {
            let project_id = project_id(tx, s, at)?;
            tx.query_row(
                "INSERT INTO sessions (platform, platform_session_id, project_id, cwd,
                                       started_at, updated_at)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?5) RETURNING id",
                params![
                    s.platform.as_str(),
                    s.platform_session_id,
                    project_id,
                    s.cwd,
                    at
                ],
                |r| r.get(0),
            )
        }
    }
}

fn project_id(tx: &Transaction<'_>, s: &SessionRef, at: i64) -> rusqlite::Result<Option<i64>> {
    let Some(root) = &s.project_root else {
        return Ok(None);
    };
    if let Some(id) = tx
        .query_row("SELECT id FROM projects WHERE root = ?1", [root], |r| {
            r.get(0)
        })
        .optional()?
    {
        return Ok(Some(id));
    }
    let name = s.project_name.clone().unwrap_or_else(|| root.clone());
    tx.query_row(
        "INSERT INTO projects (root, name, created_at) VALUES (?1, ?2, ?3) RETURNING id",
        params![root, name, at],
        |r| r.get(0),
    )
    .map(Some)
}

impl PromptOrigin {
    /// Host-injected prompts are recognisable by their wrapper tag.
    pub fn of(text: &str) -> PromptOrigin {
        use mnemo_core::host_text::{HostText, host_text};
        match host_text(text) {
            Some(HostText::TaskNotification | HostText::LocalCommand) => PromptOrigin::System,
            _ => PromptOrigin::User,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::new_capture_id;
    use mnemo_core::model::{Platform, Priority};
    use std::time::Duration;

    fn session(id: &str, root: Option<&str>) -> SessionRef {
        SessionRef {
            platform: Platform::ClaudeCode,
            platform_session_id: id.to_owned(),
            project_root: root.map(str::to_owned),
            project_name: root.map(|r| r.rsplit('/').next().unwrap().to_owned()),
            cwd: root.map(str::to_owned),
        }
    }

    fn capture(s: &SessionRef, op: CaptureOp, at: i64) -> Capture {
        Capture {
            capture_id: new_capture_id(),
            at_ms: at,
            session: s.clone(),
            op,
        }
    }

    fn tool(id: &str, prompt: Option<&str>) -> CaptureOp {
        let mut e = EventRecord::new(EventKind::ToolUse, Priority::High);
        e.tool_name = Some("Write".into());
        e.tool_use_id = Some(id.into());
        e.platform_prompt_id = prompt.map(str::to_owned);
        CaptureOp::Event(e)
    }

    fn store() -> (tempfile::TempDir, Store) {
        let tmp = tempfile::tempdir().unwrap();
        let store = Store::open(&tmp.path().join("m.db"), Duration::from_secs(1)).unwrap();
        (tmp, store)
    }

    fn count(store: &Store, sql: &str) -> i64 {
        store.conn().query_row(sql, [], |r| r.get(0)).unwrap()
    }

    #[test]
    fn events_before_session_start_share_one_session() {
        let (_t, mut store) = store();
        let s = session("abc", Some("/p/shop"));
        store.apply(&capture(&s, tool("t1", None), 1)).unwrap();
        let start = CaptureOp::SessionStart {
            source: Some("startup".into()),
            transcript_path: None,
        };
        store.apply(&capture(&s, start.clone(), 2)).unwrap();
        store.apply(&capture(&s, start, 3)).unwrap();
        assert_eq!(count(&store, "SELECT count(*) FROM sessions"), 1);
        assert_eq!(count(&store, "SELECT count(*) FROM projects"), 1);
        assert_eq!(count(&store, "SELECT count(*) FROM events"), 1);
    }

    #[test]
    fn a_message_sent_during_a_turn_joins_that_turn() {
        let (_t, mut store) = store();
        let s = session("abc", Some("/p/shop"));
        let prompt = |id: &str, text: &str| CaptureOp::Prompt {
            platform_prompt_id: Some(id.into()),
            text: Some(text.into()),
            origin: PromptOrigin::User,
        };
        store
            .apply(&capture(&s, prompt("t1", "split the parser"), 1))
            .unwrap();
        let steer = store
            .apply(&capture(&s, prompt("t1", "keep the old entry point"), 2))
            .unwrap();
        assert_eq!(
            steer,
            Applied::Prompt {
                session_id: 1,
                prompt_number: 1,
                stored: true
            }
        );
        let again = store
            .apply(&capture(&s, prompt("t1", "keep the old entry point"), 3))
            .unwrap();
        assert_eq!(
            again,
            Applied::Duplicate,
            "the same message delivered twice"
        );
        let text: String = store
            .conn()
            .query_row("SELECT text FROM prompts", [], |r| r.get(0))
            .unwrap();
        assert_eq!(text, "split the parser\n\nkeep the old entry point");
        assert_eq!(count(&store, "SELECT prompt_count FROM sessions"), 1);
        let found = count(
            &store,
            "SELECT count(*) FROM prompts_fts WHERE prompts_fts MATCH 'entry'",
        );
        assert_eq!(found, 1, "the added message is searchable");
    }

    #[test]
    fn prompts_number_turns_and_private_ones_leave_no_text() {
        let (_t, mut store) = store();
        let s = session("abc", Some("/p/shop"));
        let prompt = |id: &str, text: Option<&str>| CaptureOp::Prompt {
            platform_prompt_id: Some(id.into()),
            text: text.map(str::to_owned),
            origin: PromptOrigin::User,
        };
        let a = store
            .apply(&capture(&s, prompt("p1", Some("first")), 1))
            .unwrap();
        store
            .apply(&capture(&s, tool("t1", Some("p1")), 2))
            .unwrap();
        let b = store.apply(&capture(&s, prompt("p2", None), 3)).unwrap();
        store
            .apply(&capture(&s, tool("t2", Some("p2")), 4))
            .unwrap();
        assert_eq!(
            a,
            Applied::Prompt {
                session_id: 1,
                prompt_number: 1,
                stored: true
            }
        );
        assert_eq!(
            b,
            Applied::Prompt {
                session_id: 1,
                prompt_number: 2,
                stored: false
            }
        );
        assert_eq!(count(&store, "SELECT prompt_count FROM sessions"), 2);
        assert_eq!(count(&store, "SELECT count(*) FROM prompts"), 1);
        assert_eq!(
            count(
                &store,
                "SELECT prompt_number FROM events WHERE tool_use_id = 't1'"
            ),
            1
        );
        assert_eq!(
            count(
                &store,
                "SELECT prompt_number FROM events WHERE tool_use_id = 't2'"
            ),
            2
        );
    }

    #[test]
    fn an_event_that_beats_its_prompt_is_relinked() {
        let (_t, mut store) = store();
        let s = session("abc", Some("/p/shop"));
        store
            .apply(&capture(&s, tool("t1", Some("p1")), 1))
            .unwrap();
        store
            .apply(&capture(
                &s,
                CaptureOp::Prompt {
                    platform_prompt_id: Some("p1".into()),
                    text: Some("do it".into()),
                    origin: PromptOrigin::User,
                },
                2,
            ))
            .unwrap();
        assert_eq!(count(&store, "SELECT prompt_number FROM events"), 1);
    }

    #[test]
    fn the_same_tool_call_is_recorded_once() {
        let (_t, mut store) = store();
        let s = session("abc", None);
        let first = store.apply(&capture(&s, tool("t1", None), 1)).unwrap();
        let again = store.apply(&capture(&s, tool("t1", None), 2)).unwrap();
        assert!(matches!(
            first,
            Applied::Event {
                event_id: Some(_),
                ..
            }
        ));
        assert_eq!(
            again,
            Applied::Event {
                session_id: 1,
                event_id: None
            }
        );
    }

    #[test]
    fn a_session_keeps_its_first_project() {
        let (_t, mut store) = store();
        let start = CaptureOp::SessionStart {
            source: None,
            transcript_path: None,
        };
        store
            .apply(&capture(&session("abc", Some("/p/a")), start.clone(), 1))
            .unwrap();
        store
            .apply(&capture(&session("abc", Some("/p/b")), tool("t", None), 2))
            .unwrap();
        assert_eq!(count(&store, "SELECT count(*) FROM projects"), 1);
        // A session first seen without a directory adopts the first one named.
        store
            .apply(&capture(&session("xyz", None), start, 3))
            .unwrap();
        store
            .apply(&capture(&session("xyz", Some("/p/c")), tool("u", None), 4))
            .unwrap();
        assert_eq!(
            count(
                &store,
                "SELECT p.root = '/p/c' FROM sessions s JOIN projects p ON p.id = s.project_id
                 WHERE s.platform_session_id = 'xyz'"
            ),
            1
        );
    }

    #[test]
    fn session_end_closes_and_start_reopens() {
        let (_t, mut store) = store();
        let s = session("abc", None);
        store
            .apply(&capture(
                &s,
                CaptureOp::SessionEnd {
                    reason: Some("other".into()),
                },
                5,
            ))
            .unwrap();
        assert_eq!(
            count(
                &store,
                "SELECT count(*) FROM sessions WHERE status = 'ended' AND ended_at = 5"
            ),
            1
        );
        store
            .apply(&capture(
                &s,
                CaptureOp::SessionStart {
                    source: Some("resume".into()),
                    transcript_path: None,
                },
                6,
            ))
            .unwrap();
        assert_eq!(
            count(
                &store,
                "SELECT count(*) FROM sessions WHERE status = 'active'"
            ),
            1
        );
    }

    #[test]
    fn apply_once_ignores_replays() {
        let (_t, mut store) = store();
        let s = session("abc", None);
        let c = capture(
            &s,
            CaptureOp::Prompt {
                platform_prompt_id: None,
                text: Some("x".into()),
                origin: PromptOrigin::User,
            },
            1,
        );
        store.apply_once(&c).unwrap();
        assert_eq!(store.apply_once(&c).unwrap(), Applied::Duplicate);
        assert_eq!(count(&store, "SELECT prompt_count FROM sessions"), 1);
    }

    fn start(source: &str) -> CaptureOp {
        CaptureOp::SessionStart {
            source: Some(source.into()),
            transcript_path: None,
        }
    }

    fn continues(store: &Store, sid: &str) -> Option<String> {
        store
            .conn()
            .query_row(
                "SELECT o.platform_session_id FROM sessions s
                 LEFT JOIN sessions o ON o.id = s.continues WHERE s.platform_session_id = ?1",
                [sid],
                |r| r.get(0),
            )
            .unwrap()
    }

    #[test]
    fn clear_and_compact_continue_the_last_active_session_of_the_project() {
        let (_t, mut store) = store();
        let hour = 3600 * 1000;
        let (a, other, b, c) = (
            session("a", Some("/p/shop")),
            session("o", Some("/p/elsewhere")),
            session("b", Some("/p/shop")),
            session("c", Some("/p/shop")),
        );
        store.apply(&capture(&a, start("startup"), hour)).unwrap();
        store
            .apply(&capture(&a, tool("t1", None), 2 * hour))
            .unwrap();
        // Another project is more recent, but not the same line of work.
        store
            .apply(&capture(&other, start("startup"), 3 * hour))
            .unwrap();
        let end = CaptureOp::SessionEnd {
            reason: Some("clear".into()),
        };
        store.apply(&capture(&a, end, 3 * hour)).unwrap();
        store
            .apply(&capture(&b, start("clear"), 3 * hour + 1))
            .unwrap();
        assert_eq!(continues(&store, "b").as_deref(), Some("a"));
        // A repeated SessionStart keeps the link; a plain startup makes none.
        store
            .apply(&capture(&b, start("clear"), 3 * hour + 2))
            .unwrap();
        assert_eq!(continues(&store, "b").as_deref(), Some("a"));
        store
            .apply(&capture(&c, start("startup"), 4 * hour))
            .unwrap();
        assert_eq!(continues(&store, "c"), None);
        // Compaction of c continues c's line, the most recently active.
        let d = session("d", Some("/p/shop"));
        store
            .apply(&capture(&d, start("compact"), 4 * hour + 5))
            .unwrap();
        assert_eq!(continues(&store, "d").as_deref(), Some("c"));
        // Nothing active in the window: no link.
        let e = session("e", Some("/p/shop"));
        store
            .apply(&capture(&e, start("clear"), 20 * hour))
            .unwrap();
        assert_eq!(continues(&store, "e"), None);
        // Compaction that keeps the session id: the session has a history
        // and continues nothing, though another session was active.
        let f = session("f", Some("/p/shop"));
        for (op, at) in [
            (start("startup"), 21 * hour),
            (tool("t-f", None), 21 * hour + 1),
            (start("compact"), 21 * hour + 3),
        ] {
            store.apply(&capture(&f, op, at)).unwrap();
        }
        assert_eq!(continues(&store, "f"), None);
    }

    #[test]
    fn a_session_start_delivered_twice_is_a_duplicate_but_a_resume_is_not() {
        let (_t, mut store) = store();
        let s = session("abc", Some("/p/shop"));
        let first = store.apply(&capture(&s, start("startup"), 1_000)).unwrap();
        assert!(matches!(first, Applied::Session { .. }), "{first:?}");
        let twin = store.apply(&capture(&s, start("startup"), 1_040)).unwrap();
        assert_eq!(twin, Applied::Duplicate);
        // Compaction in the same session is a start of its own.
        let compact = store.apply(&capture(&s, start("compact"), 2_000)).unwrap();
        assert!(matches!(compact, Applied::Session { .. }), "{compact:?}");
        // So is a resume after the session ended, however soon.
        let end = CaptureOp::SessionEnd {
            reason: Some("other".into()),
        };
        store.apply(&capture(&s, end, 3_000)).unwrap();
        let resumed = store.apply(&capture(&s, start("resume"), 3_100)).unwrap();
        assert!(matches!(resumed, Applied::Session { .. }), "{resumed:?}");
        // Without a source, nothing tells twins apart: both apply.
        let n = session("nosource", Some("/p/shop"));
        let bare = || CaptureOp::SessionStart {
            source: None,
            transcript_path: None,
        };
        for at in [5_000, 5_010] {
            let applied = store.apply(&capture(&n, bare(), at)).unwrap();
            assert!(matches!(applied, Applied::Session { .. }), "{applied:?}");
        }
    }

    #[test]
    fn a_prompt_without_an_id_delivered_twice_opens_one_turn() {
        let (_t, mut store) = store();
        let s = session("abc", Some("/p/shop"));
        let prompt = |text: &str| CaptureOp::Prompt {
            platform_prompt_id: None,
            text: Some(text.into()),
            origin: PromptOrigin::User,
        };
        store.apply(&capture(&s, prompt("go"), 1_000)).unwrap();
        let again = store.apply(&capture(&s, prompt("go"), 1_050)).unwrap();
        assert_eq!(again, Applied::Duplicate);
        // Once the turn ended, the same words are a new turn.
        let mut stop = EventRecord::new(EventKind::TurnEnd, Priority::High);
        stop.response = Some("\"done\"".into());
        store
            .apply(&capture(&s, CaptureOp::Event(stop), 2_000))
            .unwrap();
        store.apply(&capture(&s, prompt("go"), 3_000)).unwrap();
        assert_eq!(count(&store, "SELECT prompt_count FROM sessions"), 2);
        assert_eq!(count(&store, "SELECT count(*) FROM prompts"), 2);
    }

    #[test]
    fn a_tool_call_without_an_id_delivered_twice_is_one_event() {
        let (_t, mut store) = store();
        let s = session("abc", None);
        let call = |input: &str| {
            let mut e = EventRecord::new(EventKind::ToolUse, Priority::Normal);
            e.tool_name = Some("Shell".into());
            e.input = Some(input.into());
            e.response = Some("\"ok\"".into());
            CaptureOp::Event(e)
        };
        store.apply(&capture(&s, call("ls"), 1_000)).unwrap();
        let again = store.apply(&capture(&s, call("ls"), 1_200)).unwrap();
        assert_eq!(again, Applied::Duplicate);
        store.apply(&capture(&s, call("pwd"), 1_300)).unwrap();
        // The same call a minute later ran again.
        store.apply(&capture(&s, call("ls"), 61_000)).unwrap();
        assert_eq!(count(&store, "SELECT count(*) FROM events"), 3);
    }

    #[test]
    fn a_turn_has_one_turn_end_whichever_hook_says_it_first() {
        let (_t, mut store) = store();
        let s = session("abc", None);
        let prompt = CaptureOp::Prompt {
            platform_prompt_id: None,
            text: Some("go".into()),
            origin: PromptOrigin::User,
        };
        let end = |response: Option<&str>| {
            let mut e = EventRecord::new(EventKind::TurnEnd, Priority::High);
            e.response = response.map(str::to_owned);
            CaptureOp::Event(e)
        };
        // Message-less first, then the one with the message: one, completed.
        store.apply(&capture(&s, prompt.clone(), 1_000)).unwrap();
        store.apply(&capture(&s, end(None), 2_000)).unwrap();
        let with = store
            .apply(&capture(&s, end(Some("\"done\"")), 2_010))
            .unwrap();
        assert_eq!(with, Applied::Duplicate);
        // The message first, then the message-less one: still one.
        store.apply(&capture(&s, prompt, 3_000)).unwrap();
        store
            .apply(&capture(&s, end(Some("\"again\"")), 4_000))
            .unwrap();
        let without = store.apply(&capture(&s, end(None), 4_010)).unwrap();
        assert_eq!(without, Applied::Duplicate);
        assert_eq!(
            count(
                &store,
                "SELECT count(*) FROM events WHERE kind = 'turn_end'"
            ),
            2
        );
        assert_eq!(
            count(&store, "SELECT count(*) FROM events WHERE response IS NULL"),
            0
        );
    }

    #[test]
    fn host_injected_prompts_are_system() {
        assert_eq!(
            PromptOrigin::of("<task-notification>\n<task-id>x"),
            PromptOrigin::System
        );
        assert_eq!(PromptOrigin::of("fix the bug"), PromptOrigin::User);
    }
}
