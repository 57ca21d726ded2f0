//! Codex's rollout file (`transcript_path` of its hooks): the exit code of
//! each tool call, by call id.
//!
//! Codex's PostToolUse gives a shell command's output but not its exit
//! status; the rollout has it, written just after the hook ran. A tool's
//! result is a `response_item` of type `function_call_output` (or
//! `custom_tool_call_output` for `apply_patch`) whose `output` opens with
//! lines such as `Process exited with code 3` or `Exit code: 3`; a
//! command's `item_completed` event carries `exit_code` too. The result
//! line wins where both are present.
//!
//! Reading is streaming and tolerant: lines that are not JSON, or of
//! another shape, are skipped; a missing file reads as no codes; at most
//! [`MAX_BYTES`] are read (a longer file gives the codes of its head).

use std::collections::HashMap;
use std::io::{self, BufRead, BufReader};
use std::path::Path;

use serde_json::Value;

/// Most bytes of a rollout read.
pub const MAX_BYTES: u64 = 64 * 1024 * 1024;
/// Lines of a tool's output searched for its exit code.
const HEADER_LINES: usize = 8;

/// Exit codes of the rollout's tool calls, by call id. A file that does not
/// exist has none; other I/O errors are returned.
pub fn exit_codes(path: &Path) -> io::Result<HashMap<String, i64>> {
    exit_codes_within(path, MAX_BYTES)
}

fn exit_codes_within(path: &Path, cap: u64) -> io::Result<HashMap<String, i64>> {
    let file = match mnemo_core::files::read_capped(path, cap) {
        Ok(f) => f,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(HashMap::new()),
        Err(e) => return Err(e),
    };
    read_exit_codes(BufReader::new(file))
}

/// [`exit_codes`] of any reader of rollout lines.
pub fn read_exit_codes(reader: impl BufRead) -> io::Result<HashMap<String, i64>> {
    let mut from_output = HashMap::new();
    let mut from_event = HashMap::new();
    for line in reader.split(b'\n') {
        let line = line?;
        // Cheap filter before parsing: most lines are messages and counts.
        if !contains(&line, b"_output\"") && !contains(&line, b"\"exit_code\"") {
            continue;
        }
        let Ok(value) = serde_json::from_slice::<Value>(&line) else {
            continue;
        };
        if let Some((id, code)) = output_code(&value) {
            from_output.insert(id, code);
        } else if let Some((id, code)) = event_code(&value) {
            from_event.insert(id, code);
        }
    }
    from_event.extend(from_output);
    Ok(from_event)
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

/// A `function_call_output` / `custom_tool_call_output` item's call id and
/// the exit code its output states.
fn output_code(line: &Value) -> Option<(String, i64)> {
    if line.get("type")?.as_str()? != "response_item" {
        return None;
    }
    let payload = line.get("payload")?;
    let kind = payload.get("type")?.as_str()?;
    if kind != "function_call_output" && kind != "custom_tool_call_output" {
        return None;
    }
    let id = payload.get("call_id")?.as_str()?;
    let output = match payload.get("output")? {
        Value::String(s) => s.as_str(),
        // Some versions wrap it: `{"content": "...", ...}`.
        other => other.get("content")?.as_str()?,
    };
    Some((id.to_owned(), stated_exit_code(output)?))
}

/// A command's `item_completed` event: its id and `exit_code`.
fn event_code(line: &Value) -> Option<(String, i64)> {
    if line.get("type")?.as_str()? != "event_msg" {
        return None;
    }
    let item = line.get("payload")?.get("item")?;
    let id = item.get("id")?.as_str()?;
    let code = item.get("exit_code")?.as_i64()?;
    Some((id.to_owned(), code))
}

/// The exit code a tool's output states in its first lines
/// (`Process exited with code 3`, `Exit code: 3`).
pub fn stated_exit_code(output: &str) -> Option<i64> {
    output.lines().take(HEADER_LINES).find_map(|line| {
        let line = line.trim();
        let rest = line
            .strip_prefix("Process exited with code")
            .or_else(|| line.strip_prefix("Exit code:"))?;
        rest.trim().parse().ok()
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const OBSERVED: &str = include_str!("../tests/fixtures/codex/rollout.observed.jsonl");

    fn codes(text: &str) -> HashMap<String, i64> {
        read_exit_codes(text.as_bytes()).unwrap()
    }

    fn output_line(kind: &str, id: &str, output: &str) -> String {
        json!({"timestamp": "t", "type": "response_item",
               "payload": {"type": kind, "call_id": id, "output": output}})
        .to_string()
    }

    #[test]
    fn the_observed_rollout_gives_both_calls_exit_codes() {
        let codes = codes(OBSERVED);
        assert_eq!(codes.get("call_5e323031214f"), Some(&0), "{codes:?}");
        assert_eq!(codes.get("call_9f4aab5a98bf"), Some(&0), "{codes:?}");
        assert_eq!(codes.len(), 2, "{codes:?}");
    }

    #[test]
    fn a_failed_command_and_a_failed_patch_have_their_codes() {
        let text = [
            output_line(
                "function_call_output",
                "c1",
                "Chunk ID: 1\nWall time: 0.1 seconds\nProcess exited with code 3\nOutput:\nboom\n",
            ),
            output_line(
                "custom_tool_call_output",
                "c2",
                "Exit code: 1\nWall time: 0 seconds\nOutput:\nverification failed\n",
            ),
        ]
        .join("\n");
        let codes = codes(&text);
        assert_eq!(codes.get("c1"), Some(&3));
        assert_eq!(codes.get("c2"), Some(&1));
    }

    #[test]
    fn the_result_line_wins_over_the_event_and_the_event_fills_in() {
        let text = [
            json!({"type": "event_msg", "payload": {"type": "item_completed",
                   "item": {"type": "CommandExecution", "id": "c1", "exit_code": 0}}})
            .to_string(),
            json!({"type": "event_msg", "payload": {"type": "item_completed",
                   "item": {"type": "CommandExecution", "id": "c2", "exit_code": 2}}})
            .to_string(),
            output_line("function_call_output", "c1", "Process exited with code 4\n"),
        ]
        .join("\n");
        let codes = codes(&text);
        assert_eq!(codes.get("c1"), Some(&4));
        assert_eq!(codes.get("c2"), Some(&2));
    }

    #[test]
    fn what_states_no_code_and_what_is_not_json_are_skipped() {
        let text = [
            "not json at all, \"_output\"".to_owned(),
            output_line(
                "function_call_output",
                "c1",
                "Output:\nProcess exited with code",
            ),
            output_line(
                "function_call_output",
                "c2",
                "a\nb\nc\nd\ne\nf\ng\nh\nExit code: 9",
            ),
            output_line("message", "c3", "Exit code: 1"),
            "{\"type\":\"response_item\",\"payload\":{\"type\":\"function_call_out".to_owned(),
        ]
        .join("\n");
        assert!(codes(&text).is_empty());
    }

    #[test]
    fn a_missing_file_has_no_codes_and_a_long_file_is_read_to_the_cap() {
        let tmp = tempfile::tempdir().unwrap();
        assert!(
            exit_codes(&tmp.path().join("gone.jsonl"))
                .unwrap()
                .is_empty()
        );
        let head = output_line("function_call_output", "c1", "Exit code: 5");
        let tail = output_line("function_call_output", "c2", "Exit code: 6");
        let path = tmp.path().join("long.jsonl");
        std::fs::write(&path, format!("{head}\n{}\n{tail}\n", "x".repeat(4096))).unwrap();
        let all = exit_codes(&path).unwrap();
        assert_eq!(all.get("c2"), Some(&6));
        let codes = exit_codes_within(&path, 4096).unwrap();
        assert_eq!(codes.get("c1"), Some(&5));
        assert_eq!(codes.get("c2"), None, "past the cap");
    }
}
