//! Claude Code's JSONL transcript, line by line, into turns.
//!
//! Lines have a `type`: `user` (prompts, tool results, notifications,
//! compaction summaries), `assistant` (one content block per line: text,
//! thinking or tool_use), and `system`, `progress`, `summary`,
//! `file-history-snapshot`, `queue-operation` which carry nothing we keep.
//! A turn opens at a prompt, a `<task-notification>` or a compaction summary
//! (`isCompactSummary`); `isMeta` lines (skill expansions, reminders) and
//! local commands (`/model`, `/mcp`) open nothing.

use std::collections::HashMap;
use std::io::{self, BufRead, BufReader, Read};
use std::path::Path;

use mnemo_core::host_text::{HostText, host_text};
use mnemo_core::privacy::Sanitizer;
use mnemo_core::time::parse_rfc3339;
use serde_json::Value;

use crate::clean;
use crate::files::{MAX_LINE_BYTES, MAX_TRANSCRIPT_BYTES};
use crate::model::{Note, Origin, Question, Session, ToolCall, Turn};

/// Reads a session's transcript and its subagents' files
/// (`<file stem>/subagents/agent-*.jsonl`): a subagent's tool calls join
/// the turn that started the subagent.
pub fn read_session(path: &Path, sanitizer: &Sanitizer) -> io::Result<Session> {
    let (mut session, agents) = read_with_agents(path, sanitizer)?;
    let dir = path.with_extension("").join("subagents");
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return Ok(session);
    };
    let mut files: Vec<_> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .collect();
    files.sort();
    for file in files {
        let Some(agent_id) = agent_id_of(&file) else {
            continue;
        };
        let Some(&turn) = agents.get(&agent_id) else {
            continue;
        };
        let sub = match read_file(&file, sanitizer) {
            Ok(sub) => sub,
            Err(_) => {
                session.stats.unreadable_files += 1;
                continue;
            }
        };
        session.stats.add(sub.stats);
        let calls = &mut session.turns[turn].tool_calls;
        for mut call in sub.turns.into_iter().flat_map(|t| t.tool_calls) {
            call.agent_id = Some(agent_id.clone());
            calls.push(call);
        }
        calls.sort_by_key(|c| c.at_ms);
    }
    Ok(session)
}

/// Reads one transcript file, without its subagents.
pub fn read_file(path: &Path, sanitizer: &Sanitizer) -> io::Result<Session> {
    read_with_agents(path, sanitizer).map(|(s, _)| s)
}

/// Reads transcript lines from any reader; `fallback_id` names the session
/// when no line does.
pub fn read_lines<R: BufRead>(
    mut reader: R,
    sanitizer: &Sanitizer,
    fallback_id: &str,
) -> io::Result<Session> {
    Ok(read_lines_with_agents(&mut reader, sanitizer, fallback_id)?.0)
}

fn read_with_agents(
    path: &Path,
    sanitizer: &Sanitizer,
) -> io::Result<(Session, HashMap<String, usize>)> {
    let file = mnemo_core::files::read_capped(path, MAX_TRANSCRIPT_BYTES)?;
    let stem = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    read_lines_with_agents(
        &mut BufReader::with_capacity(256 * 1024, file),
        sanitizer,
        &stem,
    )
}

fn read_lines_with_agents<R: BufRead>(
    reader: &mut R,
    sanitizer: &Sanitizer,
    fallback_id: &str,
) -> io::Result<(Session, HashMap<String, usize>)> {
    let mut builder = Builder::new(sanitizer);
    let mut buf = Vec::with_capacity(64 * 1024);
    loop {
        buf.clear();
        let n = reader
            .by_ref()
            .take(MAX_LINE_BYTES)
            .read_until(b'\n', &mut buf)?;
        if n == 0 {
            break;
        }
        builder.session.stats.bytes += n as u64;
        if n as u64 == MAX_LINE_BYTES && buf.last() != Some(&b'\n') {
            // Longer than any real line: skip the rest of it, unread.
            builder.session.stats.bytes += reader.skip_until(b'\n')? as u64;
            builder.session.stats.lines += 1;
            builder.session.stats.skipped += 1;
            continue;
        }
        let line = trim_ascii(&buf);
        if line.is_empty() {
            continue;
        }
        builder.session.stats.lines += 1;
        match serde_json::from_slice::<Value>(line) {
            Ok(v @ Value::Object(_)) => builder.line(&v),
            _ => builder.session.stats.skipped += 1,
        }
    }
    Ok(builder.finish(fallback_id))
}

fn trim_ascii(b: &[u8]) -> &[u8] {
    let start = b
        .iter()
        .position(|c| !c.is_ascii_whitespace())
        .unwrap_or(b.len());
    let end = b
        .iter()
        .rposition(|c| !c.is_ascii_whitespace())
        .map_or(start, |e| e + 1);
    &b[start..end]
}

/// `agent-a881341.jsonl` → `a881341`; compaction helpers (`agent-acompact-…`)
/// are not subagents of a turn.
fn agent_id_of(path: &Path) -> Option<String> {
    let stem = path.file_stem()?.to_str()?;
    let id = stem.strip_prefix("agent-")?;
    (!id.starts_with("acompact")).then(|| id.to_owned())
}

/// Where a tool call sits: turn index, call index.
type CallAt = (usize, usize);

struct Builder<'a> {
    sanitizer: &'a Sanitizer,
    session: Session,
    /// Tool calls waiting for (or having had) their result.
    calls: HashMap<String, CallAt>,
    /// Subagent id → the turn whose tool call started it.
    agents: HashMap<String, usize>,
    /// Index in the current turn's notes where the words since the last
    /// tool call begin.
    notes_since_call: usize,
    /// The current turn opened with a slash command (a local one, such as
    /// `/model`, has no assistant activity and is dropped).
    slash_command: bool,
    /// The last thing the user asked (what notifications and compactions
    /// continue).
    last_request: Option<String>,
    /// The question the last finished turn ended on: the next prompt
    /// answers it.
    asked: Option<Asked>,
    last_at: i64,
}

impl<'a> Builder<'a> {
    fn new(sanitizer: &'a Sanitizer) -> Builder<'a> {
        Builder {
            sanitizer,
            session: Session::default(),
            calls: HashMap::new(),
            agents: HashMap::new(),
            notes_since_call: 0,
            slash_command: false,
            last_request: None,
            asked: None,
            last_at: 0,
        }
    }

    fn line(&mut self, v: &Value) {
        if let Some(at) = line_time(v) {
            self.last_at = at;
        }
        if self.session.session_id.is_empty()
            && let Some(id) = v.get("sessionId").and_then(Value::as_str)
        {
            self.session.session_id = id.to_owned();
        }
        if self.session.cwd.is_none()
            && let Some(cwd) = v.get("cwd").and_then(Value::as_str)
        {
            self.session.cwd = Some(cwd.to_owned());
        }
        if self.session.git_branch.is_none()
            && let Some(branch) = v.get("gitBranch").and_then(Value::as_str)
            && !branch.trim().is_empty()
        {
            self.session.git_branch = Some(branch.to_owned());
        }
        // A subagent's lines (inline in older transcripts, or a subagent's
        // own file): its tool calls count, its words and prompts do not.
        let sidechain = v.get("isSidechain").and_then(Value::as_bool) == Some(true);
        match v.get("type").and_then(Value::as_str) {
            Some("user") => self.user(v, sidechain),
            Some("assistant") => self.assistant(v, sidechain),
            _ => return,
        }
        if let Some(turn) = self.session.turns.last_mut() {
            turn.ended_at_ms = turn.ended_at_ms.max(self.last_at);
        }
    }

    fn user(&mut self, v: &Value, sidechain: bool) {
        if v.get("isMeta").and_then(Value::as_bool) == Some(true) {
            return;
        }
        let content = v.pointer("/message/content");
        if v.get("isCompactSummary").and_then(Value::as_bool) == Some(true) {
            self.open(Origin::Compaction, None, v);
            return;
        }
        match content {
            Some(Value::String(text)) if !sidechain => self.user_text(text, v),
            Some(Value::Array(blocks)) => {
                let mut texts = Vec::new();
                for block in blocks {
                    match block.get("type").and_then(Value::as_str) {
                        Some("tool_result") => self.result(block, v.get("toolUseResult")),
                        Some("text") => {
                            texts.extend(block.get("text").and_then(Value::as_str));
                        }
                        _ => {}
                    }
                }
                if !texts.is_empty() && !sidechain {
                    self.user_text(&texts.join("\n"), v);
                }
            }
            _ => {}
        }
    }

    fn user_text(&mut self, text: &str, v: &Value) {
        let t = text.trim_start();
        if t.starts_with("[Request interrupted") {
            if let Some(turn) = self.session.turns.last_mut() {
                turn.interrupted = true;
            }
        } else if host_text(t) == Some(HostText::TaskNotification) {
            let prompt = clean::text(self.sanitizer, t);
            self.open(Origin::TaskNotification, prompt, v);
        } else if matches!(
            host_text(t),
            Some(HostText::LocalCommand | HostText::SystemReminder)
        ) {
            // A local command's output or a reminder: not a turn.
        } else if let Some(command) = slash_command(t) {
            let prompt = clean::text(self.sanitizer, &command);
            self.open(Origin::User, prompt, v);
            self.slash_command = true;
        } else {
            let prompt = clean::text(self.sanitizer, t);
            self.open(Origin::User, prompt, v);
        }
    }

    /// Closes the current turn and opens a new one.
    fn open(&mut self, origin: Origin, prompt: Option<String>, v: &Value) {
        self.close();
        let mut turn = Turn {
            origin,
            uuid: v.get("uuid").and_then(Value::as_str).map(str::to_owned),
            started_at_ms: self.last_at,
            ended_at_ms: self.last_at,
            ..Turn::default()
        };
        if origin == Origin::User {
            if let (Some((question, options, option_notes)), Some(answer)) =
                (self.asked.take(), &prompt)
            {
                turn.questions.push(Question {
                    question,
                    options,
                    option_notes,
                    answer: answer.clone(),
                    tool_use_id: None,
                });
            }
            self.last_request = prompt.clone();
        } else {
            turn.continues_request = self.last_request.clone();
        }
        turn.prompt = prompt;
        self.session.turns.push(turn);
        self.notes_since_call = 0;
        self.slash_command = false;
    }

    /// Finishes the current turn: its final report (and the question it
    /// ends on), or its removal when it was a local command.
    fn close(&mut self) {
        let Some(turn) = self.session.turns.last_mut() else {
            return;
        };
        if !turn.has_activity() && (self.slash_command || turn.prompt.is_none()) {
            self.session.turns.pop();
            return;
        }
        self.asked = None;
        if turn.interrupted || self.notes_since_call >= turn.notes.len() {
            return;
        }
        let report = turn.take_report(self.notes_since_call);
        self.asked = ends_with_question(&report);
        turn.final_report = Some(report);
    }

    fn assistant(&mut self, v: &Value, sidechain: bool) {
        let blocks = match v.pointer("/message/content") {
            Some(Value::Array(blocks)) => blocks.as_slice(),
            Some(Value::String(text)) if !sidechain => {
                self.note(text);
                return;
            }
            _ => return,
        };
        for block in blocks {
            match block.get("type").and_then(Value::as_str) {
                Some("text") if !sidechain => {
                    if let Some(text) = block.get("text").and_then(Value::as_str) {
                        self.note(text);
                    }
                }
                Some("tool_use") => self.call(block),
                // Thinking is the model's private reasoning: never read.
                _ => {}
            }
        }
    }

    fn current(&mut self) -> &mut Turn {
        if self.session.turns.is_empty() {
            // Assistant output before any prompt (a subagent's file, a
            // resumed session): a turn with no known prompt.
            self.session.turns.push(Turn {
                started_at_ms: self.last_at,
                ended_at_ms: self.last_at,
                ..Turn::default()
            });
        }
        self.session.turns.last_mut().expect("a turn")
    }

    fn note(&mut self, text: &str) {
        if let Some(text) = clean::text(self.sanitizer, text) {
            self.current().notes.push(Note {
                text,
                before_tool_use_id: None,
            });
        }
    }

    fn call(&mut self, block: &Value) {
        let Some(id) = block.get("id").and_then(Value::as_str) else {
            return;
        };
        let mut input = block.get("input").cloned().unwrap_or(Value::Null);
        let withheld = clean::tool_input(self.sanitizer, &mut input);
        let at = self.last_at;
        let since = self.notes_since_call;
        let turn = self.current();
        for note in turn.notes.iter_mut().skip(since) {
            note.before_tool_use_id.get_or_insert_with(|| id.to_owned());
        }
        turn.tool_calls.push(ToolCall {
            id: id.to_owned(),
            name: block
                .get("name")
                .and_then(Value::as_str)
                .unwrap_or("unknown")
                .to_owned(),
            input,
            withheld,
            at_ms: at,
            ..ToolCall::default()
        });
        let (call_index, notes) = (turn.tool_calls.len() - 1, turn.notes.len());
        self.notes_since_call = notes;
        let at = (self.session.turns.len() - 1, call_index);
        self.calls.insert(id.to_owned(), at);
    }

    fn result(&mut self, block: &Value, structured: Option<&Value>) {
        let Some(&(t, c)) = block
            .get("tool_use_id")
            .and_then(Value::as_str)
            .and_then(|id| self.calls.get(id))
        else {
            return;
        };
        let failed = block.get("is_error").and_then(Value::as_bool) == Some(true);
        let text = content_text(block.get("content"));
        if let Some(agent) = structured
            .and_then(|s| s.get("agentId"))
            .and_then(Value::as_str)
        {
            self.agents.insert(agent.to_owned(), t);
        }
        let sanitizer = self.sanitizer;
        let turn = &mut self.session.turns[t];
        let call = &mut turn.tool_calls[c];
        if failed {
            call.error = clean::text(sanitizer, &text).or_else(|| Some("failed".to_owned()));
        } else if call.withheld.is_none() {
            let result = match structured {
                Some(s @ (Value::Object(_) | Value::Array(_))) => s.clone(),
                _ => Value::String(text.clone()),
            };
            call.result = clean::tool_result(sanitizer, result);
        }
        if call.name == "AskUserQuestion" && !failed {
            let mut asked = answered_questions(sanitizer, &call.input, structured, &text);
            for q in &mut asked {
                q.tool_use_id = Some(call.id.clone());
            }
            turn.questions.extend(asked);
        }
    }

    fn finish(mut self, fallback_id: &str) -> (Session, HashMap<String, usize>) {
        self.close();
        if self.session.session_id.is_empty() {
            self.session.session_id = fallback_id.to_owned();
        }
        (self.session, self.agents)
    }
}

/// `<command-name>/x</command-name>…<command-args>a b</command-args>` →
/// `/x a b`.
fn slash_command(text: &str) -> Option<String> {
    if !(text.starts_with("<command-name>") || text.starts_with("<command-message>")) {
        return None;
    }
    let name = between(text, "<command-name>", "</command-name>")?;
    let args = between(text, "<command-args>", "</command-args>").unwrap_or("");
    Some(format!("{} {}", name.trim(), args.trim()).trim().to_owned())
}

fn between<'t>(text: &'t str, open: &str, close: &str) -> Option<&'t str> {
    let start = text.find(open)? + open.len();
    let end = text[start..].find(close)? + start;
    Some(&text[start..end])
}

/// When a line was written (its `timestamp`), in ms.
pub(crate) fn line_time(v: &Value) -> Option<i64> {
    v.get("timestamp")
        .and_then(Value::as_str)
        .and_then(parse_rfc3339)
}

/// A tool result's text: a string, or the text blocks of an array.
pub(crate) fn content_text(content: Option<&Value>) -> String {
    match content {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(blocks)) => blocks
            .iter()
            .filter_map(|b| b.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

/// AskUserQuestion: the questions from the call's input, the answers from
/// the structured result (`answers`: question → answer), else from the
/// result text (`"question"="answer"`).
fn answered_questions(
    sanitizer: &Sanitizer,
    input: &Value,
    structured: Option<&Value>,
    text: &str,
) -> Vec<Question> {
    let Some(questions) = input.get("questions").and_then(Value::as_array) else {
        return Vec::new();
    };
    let answers = structured.and_then(|s| s.get("answers"));
    questions
        .iter()
        .filter_map(|q| {
            let question = q.get("question").and_then(Value::as_str)?;
            let answer = answers
                .and_then(|a| a.get(question))
                .and_then(Value::as_str)
                .map(str::to_owned)
                .or_else(|| answer_in_text(text, question))?;
            let (options, option_notes) = q
                .get("options")
                .and_then(Value::as_array)
                .map(|opts| {
                    opts.iter()
                        .filter_map(|o| {
                            let label = o
                                .get("label")
                                .and_then(Value::as_str)
                                .or_else(|| o.as_str())
                                .and_then(|l| clean::text(sanitizer, l))?;
                            let note = o
                                .get("description")
                                .and_then(Value::as_str)
                                .and_then(|d| clean::text(sanitizer, d))
                                .unwrap_or_default();
                            Some((label, note))
                        })
                        .unzip()
                })
                .unwrap_or_default();
            Some(Question {
                question: clean::text(sanitizer, question)?,
                options,
                option_notes,
                answer: clean::text(sanitizer, &answer)?,
                tool_use_id: None,
            })
        })
        .collect()
}

fn answer_in_text(text: &str, question: &str) -> Option<String> {
    let key = format!("\"{question}\"=\"");
    let start = text.find(&key)? + key.len();
    let end = text[start..].find('"')? + start;
    Some(text[start..end].to_owned())
}

/// A question a report ends on: its lines, the options listed with it and
/// what each option meant.
type Asked = (String, Vec<String>, Vec<String>);

/// When a report ends by asking the user something: the question (its
/// paragraph's question lines) and the options listed with it, in its own
/// paragraph or, numbered, in the paragraph right before it ("1. **Remove
/// it** - dead code" then "Which one?").
fn ends_with_question(report: &str) -> Option<Asked> {
    let paragraphs: Vec<&str> = report
        .split("\n\n")
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .collect();
    let tail = &paragraphs[paragraphs.len().saturating_sub(2)..];
    let at = tail.iter().rposition(|p| p.contains('?'))?;
    let question: Vec<&str> = tail[at]
        .lines()
        .map(str::trim)
        .filter(|l| l.ends_with('?') || l.ends_with("?**") || l.ends_with("?*"))
        .collect();
    if question.is_empty() {
        return None;
    }
    let mut items: Vec<&str> = tail[at..]
        .iter()
        .flat_map(|p| p.lines())
        .filter_map(list_item)
        .collect();
    if items.is_empty() && at > 0 {
        items = numbered_items(tail[at - 1]);
    }
    let (options, notes) = items.into_iter().map(option_and_note).unzip();
    Some((question.join(" "), options, notes))
}

/// The items of a numbered list (`1. x`, `2) x`) in `paragraph`.
fn numbered_items(paragraph: &str) -> Vec<&str> {
    paragraph
        .lines()
        .filter(|l| l.trim_start().starts_with(|c: char| c.is_ascii_digit()))
        .filter_map(list_item)
        .collect()
}

/// An option's label and what it meant: `**Remove it** - dead code` gives
/// ("Remove it", "dead code"); an item without a bold label is all label.
fn option_and_note(item: &str) -> (String, String) {
    let Some(rest) = item.strip_prefix("**") else {
        return (item.to_owned(), String::new());
    };
    let Some((label, after)) = rest.split_once("**") else {
        return (item.to_owned(), String::new());
    };
    let note = after.trim_start_matches([' ', '-', '—', '–', ':']).trim();
    (
        label.trim_end_matches(':').trim().to_owned(),
        note.to_owned(),
    )
}

/// The text of a list line (`- x`, `* x`, `1. x`, `2) x`).
fn list_item(line: &str) -> Option<&str> {
    let l = line.trim_start();
    if let Some(rest) = l.strip_prefix("- ").or_else(|| l.strip_prefix("* ")) {
        return Some(rest.trim());
    }
    let digits = l.len() - l.trim_start_matches(|c: char| c.is_ascii_digit()).len();
    if digits == 0 {
        return None;
    }
    l[digits..]
        .strip_prefix(". ")
        .or_else(|| l[digits..].strip_prefix(") "))
        .map(str::trim)
}
