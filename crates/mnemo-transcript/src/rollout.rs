//! Codex's rollout file (`transcript_path` of its hooks) read as a
//! [`Session`] of [`Turn`]s, the same shape as Claude Code's transcript, so
//! that a Codex turn gets its narrative and its why too.
//!
//! A rollout's lines are `{"timestamp", "type", "payload"}`. What is kept:
//! - the session's id, working directory and git branch (`session_meta`);
//! - the user's own messages: `event_msg` `item_completed` items of type
//!   `UserMessage` (older versions: `event_msg` `user_message`), each with
//!   its turn id. The first opens the turn; one sent while the turn ran
//!   (same turn id) joins its prompt as a paragraph, as the store keeps it.
//!   The user-role `response_item` messages are not read: they also carry
//!   what the host wrote (environment, instructions);
//! - the assistant's words (`response_item` `message`, role assistant) and
//!   its reasoning summaries (`reasoning` items' `summary`) between tool
//!   calls; its last words after the last call are the final report;
//! - tool calls (`function_call`, `custom_tool_call`) with their results and
//!   exit codes (`*_output`); `exec_command {cmd}` is told as `Bash
//!   {command}`, as the hooks name it.
//!
//! Encrypted reasoning is never read. Reading is streaming and tolerant, as
//! for Claude Code; privacy is applied with the same rules ([`crate::clean`]).

use std::collections::HashMap;
use std::io::{self, BufRead, BufReader};
use std::path::Path;

use mnemo_core::privacy::Sanitizer;
use serde_json::{Value, json};

use crate::claude_code::{content_text, line_time};
use crate::clean;
use crate::codex::{MAX_BYTES, stated_exit_code};
use crate::model::{Note, Origin, Session, ToolCall, Turn};

/// Reads a rollout file; at most [`MAX_BYTES`] of it, and only when it is
/// a regular file ([`mnemo_core::files`]).
pub fn read_rollout(path: &Path, sanitizer: &Sanitizer) -> io::Result<Session> {
    let file = mnemo_core::files::read_capped(path, MAX_BYTES)?;
    let stem = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    read_rollout_lines(BufReader::new(file), sanitizer, &stem)
}

/// Reads rollout lines from any reader; `fallback_id` names the session
/// when no line does.
pub fn read_rollout_lines(
    reader: impl BufRead,
    sanitizer: &Sanitizer,
    fallback_id: &str,
) -> io::Result<Session> {
    let mut builder = Builder {
        sanitizer,
        session: Session::default(),
        calls: HashMap::new(),
        turn_id: None,
        notes_since_call: 0,
        last_at: 0,
    };
    for line in reader.split(b'\n') {
        let line = line?;
        builder.session.stats.bytes += line.len() as u64 + 1;
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        builder.session.stats.lines += 1;
        match serde_json::from_slice::<Value>(&line) {
            Ok(v @ Value::Object(_)) => builder.line(&v),
            _ => builder.session.stats.skipped += 1,
        }
    }
    builder.close();
    if builder.session.session_id.is_empty() {
        builder.session.session_id = fallback_id.to_owned();
    }
    Ok(builder.session)
}

struct Builder<'a> {
    sanitizer: &'a Sanitizer,
    session: Session,
    /// Call id → (turn index, call index).
    calls: HashMap<String, (usize, usize)>,
    /// The host's id of the current turn.
    turn_id: Option<String>,
    /// Where the current turn's words since its last tool call begin.
    notes_since_call: usize,
    last_at: i64,
}

impl Builder<'_> {
    fn line(&mut self, v: &Value) {
        if let Some(at) = line_time(v) {
            self.last_at = at;
        }
        let Some(payload) = v.get("payload") else {
            return;
        };
        match v.get("type").and_then(Value::as_str) {
            Some("session_meta") => self.meta(payload),
            Some("event_msg") => self.event(payload),
            Some("response_item") if self.turn_id.is_some() => self.item(payload),
            _ => return,
        }
        if let Some(turn) = self.session.turns.last_mut() {
            turn.ended_at_ms = turn.ended_at_ms.max(self.last_at);
        }
    }

    fn meta(&mut self, payload: &Value) {
        if self.session.session_id.is_empty()
            && let Some(id) = str_at(payload, &["id", "session_id"])
        {
            self.session.session_id = id.to_owned();
        }
        if self.session.cwd.is_none() {
            self.session.cwd = str_at(payload, &["cwd"]).map(str::to_owned);
        }
        // `git: {branch, commit_hash}`: the directory was a git checkout.
        if self.session.git_branch.is_none() {
            self.session.git_branch = payload
                .get("git")
                .and_then(|g| str_at(g, &["branch"]))
                .map(str::to_owned);
        }
    }

    /// A user's message (`item_completed` of a `UserMessage`, or an older
    /// `user_message`) and the turn's end.
    fn event(&mut self, payload: &Value) {
        let turn_id = str_at(payload, &["turn_id"]).map(str::to_owned);
        match payload.get("type").and_then(Value::as_str) {
            Some("item_completed") => {
                let item = payload.get("item").unwrap_or(&Value::Null);
                if item.get("type").and_then(Value::as_str) == Some("UserMessage") {
                    self.user(&content_text(item.get("content")), turn_id);
                }
            }
            Some("user_message") => {
                let text = str_at(payload, &["message"]).unwrap_or_default().to_owned();
                self.user(&text, turn_id);
            }
            Some("turn_aborted") => {
                if let Some(turn) = self.session.turns.last_mut() {
                    turn.interrupted = true;
                }
            }
            _ => {}
        }
    }

    /// Opens a turn, or adds to the running one's prompt.
    fn user(&mut self, text: &str, turn_id: Option<String>) {
        let prompt = clean::text(self.sanitizer, text);
        let running = turn_id.is_some() && turn_id == self.turn_id;
        if running && let Some(turn) = self.session.turns.last_mut() {
            match (&mut turn.prompt, prompt) {
                (Some(p), Some(more)) if !p.contains(&more) => {
                    p.push_str("\n\n");
                    p.push_str(&more);
                }
                (p @ None, more) => *p = more,
                _ => {}
            }
            return;
        }
        self.close();
        self.session.turns.push(Turn {
            origin: Origin::User,
            prompt,
            uuid: turn_id.clone(),
            started_at_ms: self.last_at,
            ended_at_ms: self.last_at,
            ..Turn::default()
        });
        // A turn whose id is unknown still takes what follows.
        self.turn_id = turn_id.or_else(|| Some(String::new()));
        self.notes_since_call = 0;
    }

    /// The assistant's words, a reasoning summary, a tool call or its
    /// result.
    fn item(&mut self, payload: &Value) {
        match payload.get("type").and_then(Value::as_str) {
            Some("message") if payload.get("role").and_then(Value::as_str) == Some("assistant") => {
                self.note(&content_text(payload.get("content")));
            }
            Some("reasoning") => {
                let summary = payload
                    .get("summary")
                    .and_then(Value::as_array)
                    .map(|parts| {
                        parts
                            .iter()
                            .filter_map(|p| p.get("text").and_then(Value::as_str))
                            .collect::<Vec<_>>()
                            .join("\n")
                    })
                    .unwrap_or_default();
                self.note(&summary);
            }
            Some("function_call" | "custom_tool_call" | "local_shell_call") => self.call(payload),
            Some("function_call_output" | "custom_tool_call_output") => self.result(payload),
            _ => {}
        }
    }

    fn note(&mut self, text: &str) {
        let Some(text) = clean::text(self.sanitizer, text) else {
            return;
        };
        if let Some(turn) = self.session.turns.last_mut() {
            turn.notes.push(Note {
                text,
                before_tool_use_id: None,
            });
        }
    }

    fn call(&mut self, payload: &Value) {
        let Some(id) = str_at(payload, &["call_id", "id"]).map(str::to_owned) else {
            return;
        };
        let (name, mut input) = tool_of(payload);
        let withheld = clean::tool_input(self.sanitizer, &mut input);
        let Some(turn) = self.session.turns.last_mut() else {
            return;
        };
        for note in &mut turn.notes[self.notes_since_call..] {
            note.before_tool_use_id = Some(id.clone());
        }
        self.notes_since_call = turn.notes.len();
        turn.tool_calls.push(ToolCall {
            id: id.clone(),
            name,
            input,
            withheld,
            at_ms: self.last_at,
            ..ToolCall::default()
        });
        let call = turn.tool_calls.len() - 1;
        self.calls.insert(id, (self.session.turns.len() - 1, call));
    }

    fn result(&mut self, payload: &Value) {
        let Some(&(t, c)) = str_at(payload, &["call_id"]).and_then(|id| self.calls.get(id)) else {
            return;
        };
        let output = match payload.get("output") {
            Some(Value::String(s)) => s.clone(),
            Some(other) => content_text(other.get("content")),
            None => String::new(),
        };
        let call = &mut self.session.turns[t].tool_calls[c];
        if call.withheld.is_some() {
            return;
        }
        match stated_exit_code(&output) {
            Some(code) if code != 0 => call.error = clean::text(self.sanitizer, &output),
            _ => call.result = clean::tool_result(self.sanitizer, Value::String(output)),
        }
    }

    /// The current turn's last words, after its last call, are its report.
    fn close(&mut self) {
        let Some(turn) = self.session.turns.last_mut() else {
            return;
        };
        if turn.interrupted || self.notes_since_call >= turn.notes.len() {
            return;
        }
        turn.final_report = Some(turn.take_report(self.notes_since_call));
    }
}

/// A tool call's name and input as the hooks give them: `exec_command
/// {cmd}` as `Bash {command}`, `apply_patch`'s patch as its `command`.
fn tool_of(payload: &Value) -> (String, Value) {
    let name = str_at(payload, &["name"]).unwrap_or("shell").to_owned();
    let arguments = match payload.get("arguments") {
        Some(Value::String(s)) => serde_json::from_str(s).unwrap_or(json!({ "arguments": s })),
        Some(other) => other.clone(),
        None => payload.get("action").cloned().unwrap_or(Value::Null),
    };
    if let Some(patch) = payload.get("input").and_then(Value::as_str) {
        return (name, json!({ "command": patch }));
    }
    match name.as_str() {
        "exec_command" | "shell" | "local_shell" | "container.exec" => {
            let command = match arguments.get("cmd").or_else(|| arguments.get("command")) {
                Some(Value::Array(argv)) => argv
                    .iter()
                    .filter_map(Value::as_str)
                    .collect::<Vec<_>>()
                    .join(" "),
                Some(Value::String(s)) => s.clone(),
                _ => String::new(),
            };
            ("Bash".to_owned(), json!({ "command": command }))
        }
        _ => (name, arguments),
    }
}

/// The first of `keys` that holds a string.
pub(crate) fn str_at<'v>(value: &'v Value, keys: &[&str]) -> Option<&'v str> {
    keys.iter()
        .find_map(|k| value.get(*k).and_then(Value::as_str))
}

#[cfg(test)]
mod tests {
    use super::*;

    const OBSERVED: &str = include_str!("../tests/fixtures/codex/rollout.observed.jsonl");

    fn read(text: &str) -> Session {
        let sanitizer = Sanitizer::new(&mnemo_core::Config::default().privacy);
        read_rollout_lines(text.as_bytes(), &sanitizer, "f").unwrap()
    }

    fn line(kind: &str, payload: Value) -> String {
        json!({"timestamp": "2026-11-22T10:59:04.846Z", "type": kind, "payload": payload})
            .to_string()
    }

    fn user(turn: &str, text: &str) -> String {
        line(
            "event_msg",
            json!({"type": "item_completed", "turn_id": turn,
                   "item": {"type": "UserMessage", "content": [{"type": "text", "text": text}]}}),
        )
    }

    fn said(text: &str) -> String {
        line(
            "response_item",
            json!({"type": "message", "role": "assistant",
                   "content": [{"type": "output_text", "text": text}]}),
        )
    }

    #[test]
    fn the_observed_rollout_is_one_turn_with_its_calls_and_report() {
        let session = read(OBSERVED);
        assert_eq!(session.session_id, "01a202e8-dbf1-72f3-a124-f2541708f0fb");
        assert!(session.cwd.is_some());
        assert_eq!(session.turns.len(), 1, "{:?}", session.turns);
        let turn = &session.turns[0];
        assert_eq!(
            turn.prompt.as_deref(),
            Some("create hello.py with a greet function")
        );
        let names: Vec<&str> = turn.tool_calls.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["Bash", "apply_patch"]);
        assert!(
            turn.tool_calls[0].input["command"]
                .as_str()
                .unwrap()
                .starts_with("python3")
        );
        assert_eq!(
            turn.final_report.as_deref(),
            Some("Created hello.py with greet().")
        );
        assert!(turn.notes.is_empty());
    }

    #[test]
    fn words_reasoning_a_message_sent_mid_turn_and_a_failed_call() {
        let text = [
            user("t1", "make the cache bounded"),
            line("response_item", json!({"type": "reasoning", "encrypted_content": "zzz",
                 "summary": [{"type": "summary_text", "text": "The cache grows forever; an LRU bound fixes it."}]})),
            said("Switching to an LRU."),
            line("response_item", json!({"type": "function_call", "name": "exec_command",
                 "call_id": "c1", "arguments": "{\"cmd\":\"cargo test\"}"})),
            user("t1", "use 512 entries"),
            line("response_item", json!({"type": "function_call_output", "call_id": "c1",
                 "output": "Process exited with code 101\nOutput:\ntest cache ... FAILED\n"})),
            said("Bounded at 512; the test passes now."),
            user("t2", "thanks"),
        ]
        .join("\n");
        let session = read(&text);
        assert_eq!(session.turns.len(), 2);
        let turn = &session.turns[0];
        assert_eq!(turn.uuid.as_deref(), Some("t1"));
        assert_eq!(
            turn.prompt.as_deref(),
            Some("make the cache bounded\n\nuse 512 entries")
        );
        let notes: Vec<(&str, Option<&str>)> = turn
            .notes
            .iter()
            .map(|n| (n.text.as_str(), n.before_tool_use_id.as_deref()))
            .collect();
        assert_eq!(
            notes,
            [
                (
                    "The cache grows forever; an LRU bound fixes it.",
                    Some("c1")
                ),
                ("Switching to an LRU.", Some("c1"))
            ]
        );
        let call = &turn.tool_calls[0];
        assert_eq!(
            (call.name.as_str(), &call.input),
            ("Bash", &json!({"command": "cargo test"}))
        );
        assert!(call.error.as_deref().unwrap().contains("FAILED"));
        assert_eq!(
            turn.final_report.as_deref(),
            Some("Bounded at 512; the test passes now.")
        );
        assert!(!format!("{session:?}").contains("zzz"));
    }

    #[test]
    fn the_session_meta_gives_the_working_directory_and_the_git_branch() {
        let text = [
            line(
                "session_meta",
                json!({"id": "s1", "cwd": "/w/app", "git": {"commit_hash": "c0ffee", "branch": "fix-login"}}),
            ),
            user("t1", "go"),
        ]
        .join("\n");
        let session = read(&text);
        assert_eq!(session.session_id, "s1");
        assert_eq!(session.cwd.as_deref(), Some("/w/app"));
        assert_eq!(session.git_branch.as_deref(), Some("fix-login"));
    }

    #[test]
    fn lines_before_any_prompt_and_lines_not_json_are_harmless() {
        let text = [
            said("stray words"),
            "not json".to_owned(),
            user("t1", "go"),
            said("done"),
        ]
        .join("\n");
        let session = read(&text);
        assert_eq!(session.stats.skipped, 1);
        assert_eq!(session.turns.len(), 1);
        assert_eq!(session.turns[0].final_report.as_deref(), Some("done"));
    }
}
