//! Codex tool calls that failed without saying so: Codex's PostToolUse
//! gives a command's output but not its exit status, so capture records
//! every call as a success. Before a batch of a Codex session is
//! compressed, the exit codes in its rollout (`transcript_path`, read by
//! [`mnemo_transcript::codex`]) turn each call that exited non-zero into a
//! failure shaped as a host-reported one: kind `tool_failure`, an error
//! opening with `Exit code N` and holding the output, no response.
//!
//! The last rollout read is kept while it is unchanged
//! ([`crate::last_read`]). A rollout that cannot be read changes nothing
//! (logged once per file).

use std::collections::HashMap;
use std::path::Path;

use mnemo_store::queue::{Lease, QueuedEvent};

use crate::last_read::LastRead;

/// The platform whose tool calls are checked.
const CODEX: &str = "codex";
/// Lines Codex puts before a tool's output (`Exit code: 0`, `Wall time: …`).
const HEADER_PREFIXES: &[&str] = &[
    "Chunk ID:",
    "Wall time:",
    "Process exited with code",
    "Exit code:",
    "Original token count:",
    "Output:",
];

/// Reads rollouts, remembering the last one read.
pub struct CodexExits {
    rollouts: LastRead<HashMap<String, i64>>,
}

impl Default for CodexExits {
    fn default() -> CodexExits {
        CodexExits {
            rollouts: LastRead::new("Codex rollout", "its tool calls are taken as reported"),
        }
    }
}

impl CodexExits {
    /// The lease's tool uses that exited non-zero, as `(event id, error)`;
    /// none for other hosts or without a readable rollout. Blocking (reads
    /// a file): call it off the async threads.
    pub fn failures(&self, lease: &Lease) -> Vec<(i64, String)> {
        if lease.turn.platform != CODEX {
            return Vec::new();
        }
        let Some(path) = lease.turn.transcript_path.as_deref() else {
            return Vec::new();
        };
        let Some(codes) = self
            .rollouts
            .get(Path::new(path), mnemo_transcript::codex::exit_codes)
        else {
            return Vec::new();
        };
        lease
            .events
            .iter()
            .filter(|e| e.kind == "tool_use")
            .filter_map(|e| {
                let code = *codes.get(e.tool_use_id.as_deref()?)?;
                (code != 0 && !found_nothing(e, code)).then(|| (e.id, failure_error(code, e)))
            })
            .collect()
    }
}

/// A search or comparison that exited 1 (`rg`, `grep`, `diff`): it found
/// nothing, it did not fail ([`mnemo_core::shell::is_no_match`]).
fn found_nothing(event: &QueuedEvent, code: i64) -> bool {
    let input = event
        .input
        .as_deref()
        .and_then(|i| serde_json::from_str::<serde_json::Value>(i).ok());
    input
        .as_ref()
        .and_then(|i| i.get("command").or_else(|| i.get("cmd")))
        .and_then(serde_json::Value::as_str)
        .is_some_and(|c| mnemo_core::shell::is_no_match(c, code))
}

/// The error of a call that exited with `code`: `Exit code N`, then its
/// output without Codex's header lines (as Claude Code reports a failed
/// command).
fn failure_error(code: i64, event: &QueuedEvent) -> String {
    let stored = event.response.as_deref().unwrap_or("");
    let text = match serde_json::from_str::<serde_json::Value>(stored) {
        Ok(serde_json::Value::String(s)) => s,
        Ok(serde_json::Value::Null) => String::new(),
        _ => stored.to_owned(),
    };
    let output: Vec<&str> = text
        .lines()
        .skip_while(|l| {
            let l = l.trim();
            HEADER_PREFIXES.iter().any(|p| l.starts_with(p))
        })
        .collect();
    let output = output.join("\n");
    let output = output.trim();
    if output.is_empty() {
        format!("Exit code {code}")
    } else {
        format!("Exit code {code}\n{output}")
    }
}

/// Applies what [`CodexExits::failures`] found to the leased events, once
/// the store has it too.
pub fn apply(lease: &mut Lease, failures: &[(i64, String)]) {
    for (id, error) in failures {
        if let Some(e) = lease.events.iter_mut().find(|e| e.id == *id) {
            e.kind = "tool_failure".to_owned();
            e.error = Some(error.clone());
            e.response = None;
            e.priority = e.priority.min(mnemo_core::model::Priority::High as i64);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mnemo_store::queue::TurnInfo;
    use serde_json::json;
    use std::path::PathBuf;

    fn event(id: i64, call: &str, response: &str) -> QueuedEvent {
        QueuedEvent {
            id,
            uid: format!("e{id}"),
            kind: "tool_use".into(),
            tool_name: Some("Bash".into()),
            input: Some(r#"{"command":"make"}"#.into()),
            response: Some(serde_json::to_string(response).unwrap()),
            error: None,
            files_read: vec![],
            files_modified: vec![],
            note: None,
            priority: 1,
            attempts: 0,
            created_at: 0,
            tool_use_id: Some(call.into()),
        }
    }

    fn lease(platform: &str, path: &Path, events: Vec<QueuedEvent>) -> Lease {
        Lease {
            turn: TurnInfo {
                session_id: 1,
                platform_session_id: "t-1".into(),
                prompt_number: 1,
                transcript_path: Some(path.display().to_string()),
                platform: platform.into(),
                ..TurnInfo::default()
            },
            events,
            turn_ends: vec![],
            turn_complete: true,
            lease_until: 0,
        }
    }

    fn rollout(dir: &Path, outputs: &[(&str, &str)]) -> PathBuf {
        let path = dir.join("rollout.jsonl");
        let text: String = outputs
            .iter()
            .map(|(id, out)| {
                format!(
                    "{}\n",
                    json!({"type": "response_item", "payload": {
                        "type": "function_call_output", "call_id": id, "output": out}})
                )
            })
            .collect();
        std::fs::write(&path, text).unwrap();
        path
    }

    #[test]
    fn a_codex_call_that_exited_non_zero_is_a_failure_with_its_output() {
        let tmp = tempfile::tempdir().unwrap();
        let path = rollout(
            tmp.path(),
            &[
                (
                    "c1",
                    "Chunk ID: a\nWall time: 0 seconds\nProcess exited with code 3\nOutput:\nboom\n",
                ),
                ("c2", "Process exited with code 0\nOutput:\nfine\n"),
            ],
        );
        let mut l = lease(
            "codex",
            &path,
            vec![
                event(1, "c1", "boom\n"),
                event(2, "c2", "fine\n"),
                event(3, "c9", ""),
            ],
        );
        let exits = CodexExits::default();
        let failures = exits.failures(&l);
        assert_eq!(failures, [(1, "Exit code 3\nboom".to_owned())]);
        apply(&mut l, &failures);
        assert_eq!(l.events[0].kind, "tool_failure");
        assert_eq!(l.events[0].response, None);
        assert_eq!(l.events[0].priority, 0);
        assert_eq!(l.events[1].kind, "tool_use");
        assert_eq!(l.events[2].kind, "tool_use");
    }

    #[test]
    fn a_search_that_found_nothing_is_no_failure() {
        let tmp = tempfile::tempdir().unwrap();
        let path = rollout(
            tmp.path(),
            &[
                ("c1", "Process exited with code 1\nOutput:\n"),
                (
                    "c2",
                    "Process exited with code 2\nOutput:\nrg: nope: No such file\n",
                ),
            ],
        );
        let mut miss = event(1, "c1", "");
        miss.input = Some(r#"{"command":"rg -n 'needle|pin' src"}"#.into());
        let mut broken = event(2, "c2", "rg: nope: No such file\n");
        broken.input = Some(r#"{"command":"rg -n needle nope"}"#.into());
        let l = lease("codex", &path, vec![miss, broken]);
        let failures = CodexExits::default().failures(&l);
        assert_eq!(failures.len(), 1, "{failures:?}");
        assert_eq!(failures[0].0, 2, "exit 2 of a search is an error");
    }

    #[test]
    fn other_hosts_and_missing_rollouts_change_nothing() {
        let tmp = tempfile::tempdir().unwrap();
        let path = rollout(tmp.path(), &[("c1", "Exit code: 2\nOutput:\nno\n")]);
        let exits = CodexExits::default();
        let claude = lease("claude-code", &path, vec![event(1, "c1", "no")]);
        assert!(exits.failures(&claude).is_empty());
        let gone = lease(
            "codex",
            &tmp.path().join("gone.jsonl"),
            vec![event(1, "c1", "")],
        );
        assert!(exits.failures(&gone).is_empty());
    }

    #[test]
    fn a_grown_rollout_is_read_again() {
        let tmp = tempfile::tempdir().unwrap();
        let path = rollout(tmp.path(), &[]);
        let exits = CodexExits::default();
        let l = lease("codex", &path, vec![event(1, "c1", "")]);
        assert!(exits.failures(&l).is_empty());
        rollout(
            tmp.path(),
            &[("c1", "Exit code: 1\nWall time: 0 seconds\nOutput:\n")],
        );
        assert_eq!(exits.failures(&l), [(1, "Exit code 1".to_owned())]);
    }
}
