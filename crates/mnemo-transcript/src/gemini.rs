//! Gemini CLI's chat recording (`transcript_path` of its hooks,
//! `~/.gemini/tmp/<project>/chats/session-*.jsonl`) read as a [`Session`]
//! of [`Turn`]s, the same shape as Claude Code's transcript, so that a
//! Gemini turn gets its narrative and its why too.
//!
//! The file (Gemini CLI 0.61) is JSON Lines: a header `{sessionId,
//! projectHash, startTime, …}`, then message lines `{id, timestamp, type:
//! "user" | "gemini" | "info" | …, content, displayContent?, thoughts?,
//! toolCalls?}` and `{"$set": {…}}` patches of the conversation's fields. A
//! message is written again, whole, each time it changes (a model answer
//! first without, then with its tool calls), so lines are read as upserts
//! by id; a `$set` of `messages` replaces the list. Older builds wrote one
//! JSON object `{sessionId, messages: [...]}` to `session-*.json`.
//!
//! What is kept:
//! - the user's prompts (`user` messages that are not tool results), without
//!   the `<hook_context>` blocks hooks added and without the environment
//!   preamble the host writes first (`<session_context>`);
//! - the model's words (`content`) and its thought summaries (`thoughts`:
//!   `{subject, description}`) before its tool calls; its words after the
//!   last call are the final report;
//! - tool calls (`toolCalls[]`: `id`, `name`, `args`, `result` as
//!   `functionResponse` parts, `status`, `resultDisplay`), named and argued
//!   in the common vocabulary from the host table (`write_file` → `Write`);
//!   a call's result is its response as Gemini's `AfterTool` hook carries
//!   it: `{llmContent}`, with `returnDisplay: {isNewFile}` when the call
//!   wrote a file, so a replay can tell a file created from one rewritten;
//! - the header's `projectHash`, which names the project's root.
//!
//! Reading is tolerant, as for Claude Code; privacy is applied with the same
//! rules ([`crate::clean`]).

use std::collections::HashMap;
use std::io::{self, BufRead, BufReader, Read};
use std::path::Path;

use mnemo_core::host::host;
use mnemo_core::model::Platform;
use mnemo_core::privacy::Sanitizer;
use serde_json::Value;

use crate::claude_code::line_time;
use crate::clean;
use crate::files::MAX_TRANSCRIPT_BYTES;
use crate::model::{Note, Origin, ReadStats, Session, ToolCall, Turn};
use crate::rollout::str_at;

/// The tag Gemini CLI wraps hook context in, inside the user's message.
const HOOK_CONTEXT: (&str, &str) = ("<hook_context>", "</hook_context>");
/// How the host's own first message (the environment preamble) opens.
const SESSION_CONTEXT: &str = "<session_context>";

/// Reads a chat recording: JSON Lines, or one JSON object for a `.json`
/// file of an older build. At most [`MAX_TRANSCRIPT_BYTES`] are read, and
/// only from a regular file ([`mnemo_core::files`]).
pub fn read_gemini(path: &Path, sanitizer: &Sanitizer) -> io::Result<Session> {
    let file = mnemo_core::files::read_capped(path, MAX_TRANSCRIPT_BYTES)?;
    let stem = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut reader = BufReader::with_capacity(256 * 1024, file);
    if path.extension().is_some_and(|x| x == "json") {
        let mut text = Vec::new();
        reader.read_to_end(&mut text)?;
        if let Ok(whole @ Value::Object(_)) = serde_json::from_slice::<Value>(&text) {
            let mut log = Log::default();
            log.stats.lines = 1;
            log.stats.bytes = text.len() as u64;
            log.whole(&whole);
            return Ok(log.session(sanitizer, &stem));
        }
        return read_gemini_lines(text.as_slice(), sanitizer, &stem);
    }
    read_gemini_lines(reader, sanitizer, &stem)
}

/// Reads chat-recording lines from any reader; `fallback_id` names the
/// session when no line does.
pub fn read_gemini_lines(
    reader: impl BufRead,
    sanitizer: &Sanitizer,
    fallback_id: &str,
) -> io::Result<Session> {
    let mut log = Log::default();
    for line in reader.split(b'\n') {
        let line = line?;
        log.stats.bytes += line.len() as u64 + 1;
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        log.stats.lines += 1;
        match serde_json::from_slice::<Value>(&line) {
            Ok(v @ Value::Object(_)) => log.line(v),
            _ => log.stats.skipped += 1,
        }
    }
    Ok(log.session(sanitizer, fallback_id))
}

/// The conversation as its lines leave it: messages in order, each in its
/// last version.
#[derive(Default)]
struct Log {
    session_id: Option<String>,
    project_hash: Option<String>,
    messages: Vec<Value>,
    /// Message id → index in `messages`.
    index: HashMap<String, usize>,
    stats: ReadStats,
}

impl Log {
    fn line(&mut self, v: Value) {
        if let Some(set) = v.get("$set") {
            if let Some(Value::Array(messages)) = set.get("messages") {
                self.replace(messages.clone());
            }
            return;
        }
        if v.get("type").is_none() {
            // The header (or a line of a shape we do not know).
            if self.session_id.is_none() {
                self.header(&v);
            }
            return;
        }
        self.upsert(v);
    }

    /// An older build's whole-file object.
    fn whole(&mut self, v: &Value) {
        self.header(v);
        if let Some(Value::Array(messages)) = v.get("messages") {
            self.replace(messages.clone());
        }
    }

    fn header(&mut self, v: &Value) {
        self.session_id = str_at(v, &["sessionId"]).map(str::to_owned);
        self.project_hash = str_at(v, &["projectHash"]).map(str::to_owned);
    }

    fn replace(&mut self, messages: Vec<Value>) {
        self.messages.clear();
        self.index.clear();
        for m in messages {
            self.upsert(m);
        }
    }

    fn upsert(&mut self, message: Value) {
        let id = str_at(&message, &["id"]).map(str::to_owned);
        match id.as_ref().and_then(|id| self.index.get(id)) {
            Some(&i) => self.messages[i] = message,
            None => {
                if let Some(id) = id {
                    self.index.insert(id, self.messages.len());
                }
                self.messages.push(message);
            }
        }
    }

    fn session(self, sanitizer: &Sanitizer, fallback_id: &str) -> Session {
        let mut builder = Builder {
            sanitizer,
            session: Session {
                session_id: self.session_id.unwrap_or_else(|| fallback_id.to_owned()),
                project_hash: self.project_hash,
                stats: self.stats,
                ..Session::default()
            },
            notes_since_call: 0,
        };
        for message in &self.messages {
            builder.message(message);
        }
        builder.close();
        builder.session
    }
}

struct Builder<'a> {
    sanitizer: &'a Sanitizer,
    session: Session,
    /// Where the current turn's words since its last tool call begin.
    notes_since_call: usize,
}

impl Builder<'_> {
    fn message(&mut self, m: &Value) {
        let at = line_time(m).unwrap_or(0);
        match str_at(m, &["type"]) {
            Some("user") => self.user(m, at),
            Some("gemini") => self.model(m, at),
            _ => return,
        }
        if let Some(turn) = self.session.turns.last_mut() {
            turn.ended_at_ms = turn.ended_at_ms.max(at);
        }
    }

    /// A prompt opens a turn; a message of tool results (`functionResponse`
    /// parts) or the host's preamble does not.
    fn user(&mut self, m: &Value, at: i64) {
        let content = m.get("content");
        let results = content
            .and_then(Value::as_array)
            .is_some_and(|parts| parts.iter().any(|p| p.get("functionResponse").is_some()));
        if results {
            return;
        }
        let shown = m.get("displayContent").or(content);
        let typed = without_hook_context(&parts_text(shown));
        if typed.is_empty() || typed.starts_with(SESSION_CONTEXT) {
            return;
        }
        self.close();
        self.session.turns.push(Turn {
            origin: Origin::User,
            prompt: clean::text(self.sanitizer, &typed),
            uuid: str_at(m, &["id"]).map(str::to_owned),
            started_at_ms: at,
            ended_at_ms: at,
            ..Turn::default()
        });
        self.notes_since_call = 0;
    }

    /// The model's thoughts and words, then its tool calls.
    fn model(&mut self, m: &Value, at: i64) {
        let sanitizer = self.sanitizer;
        let Some(turn) = self.session.turns.last_mut() else {
            return;
        };
        let said = thoughts(m.get("thoughts"))
            .into_iter()
            .chain(Some(parts_text(m.get("content"))));
        for text in said {
            if let Some(text) = clean::text(sanitizer, &text) {
                turn.notes.push(Note {
                    text,
                    before_tool_use_id: None,
                });
            }
        }
        let calls: Vec<ToolCall> = m
            .get("toolCalls")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|c| tool_call(sanitizer, c, at))
            .collect();
        let Some(first) = calls.first() else {
            return;
        };
        for note in &mut turn.notes[self.notes_since_call..] {
            note.before_tool_use_id = Some(first.id.clone());
        }
        self.notes_since_call = turn.notes.len();
        turn.tool_calls.extend(calls);
    }

    /// The current turn's last words, after its last call, are its report.
    fn close(&mut self) {
        let Some(turn) = self.session.turns.last_mut() else {
            return;
        };
        if self.notes_since_call < turn.notes.len() {
            turn.final_report = Some(turn.take_report(self.notes_since_call));
        }
    }
}

/// One entry of `toolCalls`, in the common vocabulary, sanitized.
fn tool_call(sanitizer: &Sanitizer, c: &Value, message_at: i64) -> Option<ToolCall> {
    let id = str_at(c, &["id"])?.to_owned();
    let gemini = host(Platform::Gemini);
    let name = gemini.canonical_tool(str_at(c, &["name"])?).to_owned();
    let mut input = gemini.canonical_arguments(&name, c.get("args").cloned().unwrap_or_default());
    let withheld = clean::tool_input(sanitizer, &mut input);
    let output = call_output(c);
    let failed = matches!(str_at(c, &["status"]), Some("error" | "cancelled"));
    let (result, error) = match (&withheld, failed) {
        (Some(_), _) => (None, None),
        (None, true) => (
            None,
            Some(clean::text(sanitizer, &output).unwrap_or_default()),
        ),
        (None, false) => (
            clean::tool_result(sanitizer, hook_response(c, output)),
            None,
        ),
    };
    Some(ToolCall {
        id,
        name,
        input,
        result,
        error: error.map(|e| if e.is_empty() { "failed".to_owned() } else { e }),
        withheld,
        at_ms: line_time(c).unwrap_or(message_at),
        agent_id: None,
    })
}

/// A successful call's response as the `AfterTool` hook gives it: the text
/// the model got, and whether a write made a new file when the recording
/// says so (`resultDisplay.isNewFile`).
fn hook_response(c: &Value, output: String) -> Value {
    let mut response = serde_json::json!({ "llmContent": output });
    let new_file = c.get("resultDisplay").and_then(|d| d.get("isNewFile"));
    if let Some(Value::Bool(new_file)) = new_file {
        response["returnDisplay"] = serde_json::json!({ "isNewFile": new_file });
    }
    response
}

/// What a call's `functionResponse` parts told the model: their `output`
/// or `error`, else the response as JSON.
fn call_output(c: &Value) -> String {
    let responses = c.get("result").and_then(Value::as_array);
    let texts: Vec<String> = responses
        .into_iter()
        .flatten()
        .filter_map(|r| r.get("functionResponse")?.get("response"))
        .map(|r| match r.get("output").or_else(|| r.get("error")) {
            Some(Value::String(s)) => without_hook_context(s),
            _ => r.to_string(),
        })
        .collect();
    texts.join("\n")
}

/// `thoughts`: `[{subject, description}]`, each as one sentence or two.
fn thoughts(value: Option<&Value>) -> Vec<String> {
    value
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|t| {
            let subject = str_at(t, &["subject"]).unwrap_or("").trim();
            let description = str_at(t, &["description"]).unwrap_or("").trim();
            match (subject.is_empty(), description.is_empty()) {
                (true, true) => None,
                (false, true) => Some(subject.to_owned()),
                (true, false) => Some(description.to_owned()),
                (false, false) => Some(format!("{subject}: {description}")),
            }
        })
        .collect()
}

/// A message's text: a string, or its parts' `text` (thought parts left
/// out), joined.
fn parts_text(content: Option<&Value>) -> String {
    match content {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(parts)) => parts
            .iter()
            .filter(|p| p.get("thought").and_then(Value::as_bool) != Some(true))
            .filter_map(|p| p.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

/// `text` without the `<hook_context>…</hook_context>` blocks hooks added
/// (an unclosed one is kept: it is not ours), trimmed.
fn without_hook_context(text: &str) -> String {
    let (open, close) = HOOK_CONTEXT;
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find(open) {
        let Some(len) = rest[start..].find(close) else {
            break;
        };
        out.push_str(&rest[..start]);
        rest = &rest[start + len + close.len()..];
    }
    out.push_str(rest);
    out.trim().to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const OBSERVED: &str = include_str!("../tests/fixtures/gemini/session.observed.jsonl");

    fn read(text: &str) -> Session {
        let sanitizer = Sanitizer::new(&mnemo_core::Config::default().privacy);
        read_gemini_lines(text.as_bytes(), &sanitizer, "f").unwrap()
    }

    fn lines(values: &[Value]) -> String {
        values.iter().map(|v| format!("{v}\n")).collect()
    }

    #[test]
    fn the_observed_recording_is_one_turn_with_its_calls_and_report() {
        let session = read(OBSERVED);
        assert_eq!(session.session_id, "100b0b18-30c1-41cc-a1ca-b1c9747b9edf");
        assert_eq!(
            session.project_hash.as_deref(),
            Some("b2d70f87dd75ca19d2f2a648539d7a85a2d4082b5f4cf5306e127126aa87f44b")
        );
        assert_eq!(session.stats.skipped, 0);
        assert_eq!(session.turns.len(), 1, "{:?}", session.turns);
        let turn = &session.turns[0];
        assert_eq!(turn.prompt.as_deref(), Some("change greet to say hello"));
        let names: Vec<&str> = turn.tool_calls.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["Write", "Edit", "Bash", "Read"]);
        assert_eq!(
            turn.tool_calls[0].id,
            "write_file__write_file_1795345102974_0"
        );
        let written = turn.tool_calls[0].result.as_ref().unwrap();
        assert_eq!(written["returnDisplay"], json!({"isNewFile": true}));
        let written = written["llmContent"].as_str().unwrap();
        assert!(written.contains("Successfully created"), "{written}");
        assert!(!written.contains("hook_context"), "{written}");
        assert_eq!(
            turn.final_report.as_deref(),
            Some("Done: greet() now says hello.")
        );
        assert!(turn.notes.is_empty());
    }

    #[test]
    fn words_and_thoughts_go_before_the_calls_they_explain() {
        let text = lines(&[
            json!({"sessionId": "s1", "projectHash": "h", "kind": "main"}),
            json!({"id": "u1", "timestamp": "2026-11-22T10:00:00Z", "type": "user",
                   "content": [{"text": "make the cache bounded"}]}),
            json!({"id": "m1", "timestamp": "2026-11-22T10:00:01Z", "type": "gemini", "content": ""}),
            json!({"$set": {"lastUpdated": "2026-11-22T10:00:01Z"}}),
            json!({"id": "m1", "timestamp": "2026-11-22T10:00:01Z", "type": "gemini",
                   "content": "The cache grows forever, so an LRU bound fixes it.",
                   "thoughts": [{"subject": "Sizing", "description": "512 entries fit the memory budget."}],
                   "toolCalls": [
                       {"id": "c1", "name": "replace", "status": "success",
                        "args": {"absolute_path": "/w/cache.rs", "old_string": "a", "new_string": "b"},
                        "result": [{"functionResponse": {"id": "c1", "name": "replace",
                                    "response": {"output": "ok"}}}]},
                       {"id": "c2", "name": "run_shell_command", "status": "error",
                        "args": {"command": "cargo test"},
                        "result": [{"functionResponse": {"id": "c2", "name": "run_shell_command",
                                    "response": {"error": "Exit Code: 101"}}}]}]}),
            json!({"id": "u2", "type": "user", "content": [
                   {"functionResponse": {"id": "c1", "name": "replace", "response": {"output": "ok"}}}]}),
            json!({"id": "m2", "type": "gemini", "content": [{"text": "Bounded at 512."}]}),
            json!({"id": "u3", "type": "user",
                   "content": [{"text": "<hook_context>memory</hook_context>\n\nthanks"}]}),
        ]);
        let session = read(&text);
        assert_eq!(session.session_id, "s1");
        assert_eq!(session.turns.len(), 2);
        let turn = &session.turns[0];
        let notes: Vec<(&str, Option<&str>)> = turn
            .notes
            .iter()
            .map(|n| (n.text.as_str(), n.before_tool_use_id.as_deref()))
            .collect();
        assert_eq!(
            notes,
            [
                ("Sizing: 512 entries fit the memory budget.", Some("c1")),
                (
                    "The cache grows forever, so an LRU bound fixes it.",
                    Some("c1")
                ),
            ]
        );
        assert_eq!(turn.tool_calls[0].name, "Edit");
        assert_eq!(turn.tool_calls[0].input["file_path"], "/w/cache.rs");
        assert_eq!(turn.tool_calls[1].error.as_deref(), Some("Exit Code: 101"));
        assert_eq!(turn.final_report.as_deref(), Some("Bounded at 512."));
        assert_eq!(session.turns[1].prompt.as_deref(), Some("thanks"));
    }

    #[test]
    fn a_set_of_messages_replaces_the_history_and_the_preamble_opens_no_turn() {
        let text = lines(&[
            json!({"id": "u0", "type": "user", "content": [{"text": "forgotten prompt"}]}),
            json!({"$set": {"messages": [{"id": "p", "type": "user",
                   "content": [{"text": "<session_context>\nThis is the Gemini CLI."}]}]}}),
            json!({"id": "u1", "type": "user", "content": "go",
                   "displayContent": [{"text": "go"}]}),
            json!({"id": "m1", "type": "gemini", "content": "done"}),
            "not json".into(),
        ]);
        let session = read(&text);
        assert_eq!(session.stats.skipped, 1);
        assert_eq!(session.session_id, "f");
        let prompts: Vec<Option<&str>> =
            session.turns.iter().map(|t| t.prompt.as_deref()).collect();
        assert_eq!(prompts, [Some("go")]);
        assert_eq!(session.turns[0].final_report.as_deref(), Some("done"));
    }

    #[test]
    fn an_older_whole_file_recording_reads_the_same() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("session-2025-01-01T10-00-abcd.json");
        let whole = json!({"sessionId": "old", "messages": [
            {"id": "u1", "type": "user", "content": [{"text": "list the files"}]},
            {"id": "m1", "type": "gemini", "content": "Listing them first.",
             "toolCalls": [{"id": "c1", "name": "list_directory", "args": {"dir_path": "src"},
                            "status": "success", "result": []}]},
            {"id": "m2", "type": "gemini", "content": "Two files."}]});
        std::fs::write(&path, serde_json::to_string_pretty(&whole).unwrap()).unwrap();
        let sanitizer = Sanitizer::new(&mnemo_core::Config::default().privacy);
        let session = read_gemini(&path, &sanitizer).unwrap();
        assert_eq!(session.session_id, "old");
        let turn = &session.turns[0];
        assert_eq!(turn.tool_calls[0].name, "LS");
        assert_eq!(turn.tool_calls[0].input, json!({"path": "src"}));
        assert_eq!(turn.notes[0].before_tool_use_id.as_deref(), Some("c1"));
        assert_eq!(turn.final_report.as_deref(), Some("Two files."));
    }

    #[test]
    fn secrets_and_private_spans_never_leave_the_reader() {
        let text = lines(&[
            json!({"id": "u1", "type": "user",
                   "content": [{"text": "deploy <private>my password is swordfish</private> now"}]}),
            json!({"id": "m1", "type": "gemini",
                   "content": "Using key sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123456789 here."}),
        ]);
        let rendered = format!("{:?}", read(&text));
        assert!(!rendered.contains("swordfish"), "{rendered}");
        assert!(
            !rendered.contains("abcdefghijklmnopqrstuvwxyz0123456789"),
            "{rendered}"
        );
    }

    #[test]
    fn hook_context_blocks_are_cut_wherever_they_are() {
        assert_eq!(
            without_hook_context(
                "<hook_context>a</hook_context>\n\nfix it\n<hook_context>b</hook_context>"
            ),
            "fix it"
        );
        assert_eq!(
            without_hook_context("<hook_context>open"),
            "<hook_context>open"
        );
    }
}
