//! What the agent said or thought during a turn, as a host's hooks report
//! it (`turn_notes`): written by capture ([`crate::CaptureOp::Note`]) into
//! the session's current turn, read by the worker to tell a turn's why when
//! the host's transcript is not read.

use rusqlite::{Transaction, params};

use crate::{Result, Store};

/// One note of a turn.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TurnNote {
    pub text: String,
    /// A thinking block, not words addressed to the user.
    pub thought: bool,
    pub created_at: i64,
}

/// Adds a note to the session's current turn; a capture applied twice adds
/// it once (`uid`).
pub(crate) fn insert(
    tx: &Transaction<'_>,
    uid: &str,
    session_id: i64,
    text: &str,
    thought: bool,
    at: i64,
) -> rusqlite::Result<()> {
    tx.execute(
        "INSERT INTO turn_notes (uid, session_id, prompt_number, kind, text, created_at)
         SELECT ?1, id, prompt_count, ?3, ?4, ?5 FROM sessions WHERE id = ?2
         ON CONFLICT (uid) DO NOTHING",
        params![
            uid,
            session_id,
            if thought { "thought" } else { "said" },
            text,
            at
        ],
    )?;
    Ok(())
}

impl Store {
    /// The notes of a turn not yet told with an earlier piece of it: those
    /// after the turn's last compressed tool call, in order.
    pub fn turn_notes(&self, session_id: i64, prompt_number: i64) -> Result<Vec<TurnNote>> {
        let mut stmt = self
            .conn
            .prepare_cached(
                "SELECT text, kind = 'thought', created_at FROM turn_notes
                 WHERE session_id = ?1 AND prompt_number = ?2
                   AND created_at > COALESCE((SELECT max(created_at) FROM events
                                              WHERE session_id = ?1 AND prompt_number = ?2
                                                AND kind <> 'turn_end' AND status = 'done'), -1)
                 ORDER BY created_at, id",
            )
            .map_err(|e| crate::sql_err(&self.path, e))?;
        let rows = stmt
            .query_map(params![session_id, prompt_number], |r| {
                Ok(TurnNote {
                    text: r.get(0)?,
                    thought: r.get(1)?,
                    created_at: r.get(2)?,
                })
            })
            .and_then(|rows| rows.collect::<rusqlite::Result<Vec<_>>>())
            .map_err(|e| crate::sql_err(&self.path, e))?;
        Ok(rows)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::{Capture, CaptureOp, SessionRef};
    use mnemo_core::model::Platform;

    fn capture(id: &str, at: i64, op: CaptureOp) -> Capture {
        Capture {
            capture_id: id.into(),
            at_ms: at,
            session: SessionRef {
                platform: Platform::Cursor,
                platform_session_id: "c1".into(),
                project_root: None,
                project_name: None,
                cwd: None,
            },
            op,
        }
    }

    fn prompt(id: &str, at: i64, text: &str) -> Capture {
        capture(
            id,
            at,
            CaptureOp::Prompt {
                platform_prompt_id: None,
                text: Some(text.into()),
                origin: crate::PromptOrigin::User,
            },
        )
    }

    fn note(id: &str, at: i64, text: &str) -> Capture {
        capture(
            id,
            at,
            CaptureOp::Note {
                text: text.into(),
                thought: true,
            },
        )
    }

    #[test]
    fn notes_go_to_the_current_turn_once() {
        let tmp = tempfile::tempdir().unwrap();
        let mut store =
            Store::open(&tmp.path().join("m.db"), std::time::Duration::from_secs(5)).unwrap();
        store.apply(&prompt("p1", 10, "first")).unwrap();
        store.apply(&note("n1", 11, "the cache is cold")).unwrap();
        store
            .apply_once(&note("n1", 11, "the cache is cold"))
            .unwrap();
        store.apply(&prompt("p2", 20, "second")).unwrap();
        store.apply(&note("n2", 21, "retry is safe")).unwrap();
        let session: i64 = store
            .conn
            .query_row("SELECT id FROM sessions", [], |r| r.get(0))
            .unwrap();
        let first = store.turn_notes(session, 1).unwrap();
        assert_eq!(
            first,
            [TurnNote {
                text: "the cache is cold".into(),
                thought: true,
                created_at: 11
            }]
        );
        let second: Vec<String> = store
            .turn_notes(session, 2)
            .unwrap()
            .into_iter()
            .map(|n| n.text)
            .collect();
        assert_eq!(second, ["retry is safe"]);
    }
}
