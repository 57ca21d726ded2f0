//! Our own reader of a Claude Code transcript (JSON Lines), independent of
//! mnemo's code: it yields the hook events Claude Code would have fired, in
//! order, and the ground truth of each turn (files modified, commits,
//! questions answered, failed commands and whether they were resolved).
//!
//! Rules (what Claude Code does, as far as the transcript shows it):
//! - a turn starts with a user entry whose content is text: a typed prompt,
//!   a `<task-notification>` (fires UserPromptSubmit too), or a prompt-type
//!   slash command (`/name args`); local commands (answered by
//!   `<local-command-stdout>`), `isMeta` entries (skill expansions, caveats)
//!   and the compaction summary (`isCompactSummary`) are not prompts;
//! - `[Request interrupted …]` ends a turn without a Stop;
//! - a `compact_boundary` system entry is a SessionStart with source `compact`;
//! - a tool result is a PostToolUse (PostToolUseFailure when `is_error`),
//!   except a use the user rejected, which fires neither;
//! - a subagent's tool calls (its own transcript, `<session>/subagents/
//!   agent-<id>.jsonl`, found through the `agentId` of the Task result) are
//!   PostToolUse events of the parent session with `agent_id`, fired before
//!   the Task's own result;
//! - queue operations (prompts typed while the agent works) are not replayed:
//!   a message sent mid-turn reaches the model inside a system reminder and
//!   fires no UserPromptSubmit (anthropics/claude-code#31114).

use std::collections::HashMap;

use serde_json::Value;

/// One hook event, in the order Claude Code fires them.
#[derive(Debug, Clone)]
pub enum Step {
    /// `turn`: the turn under way (a compaction happens inside one).
    Start {
        source: &'static str,
        turn: Option<usize>,
    },
    Prompt {
        turn: usize,
    },
    Tool {
        call: usize,
    },
    Stop {
        turn: usize,
    },
    End,
}

#[derive(Debug, Clone)]
pub struct ToolCall {
    pub id: String,
    pub name: String,
    pub input: Value,
    /// `toolUseResult` of the line, else the tool_result content.
    pub response: Value,
    /// The error text when the result was an error.
    pub error: Option<String>,
    /// Index into `Session::turns`.
    pub turn: usize,
    /// (agent id, agent type) when a subagent made the call.
    pub agent: Option<(String, String)>,
}

#[derive(Debug, Clone, Default)]
pub struct Turn {
    /// 1-based, as the hook counts UserPromptSubmit.
    pub number: usize,
    pub prompt: String,
    pub tools: Vec<usize>,
    /// The last assistant text of the turn (Stop's `last_assistant_message`).
    pub final_text: String,
    pub interrupted: bool,
}

#[derive(Debug, Clone)]
pub struct Question {
    pub turn: usize,
    pub asked: String,
    pub answer: String,
}

#[derive(Debug, Clone)]
pub struct Failure {
    pub turn: usize,
    pub command: String,
    /// Program and subcommand (`git push`, `mix test`).
    pub intent: String,
    /// A later command with the same intent succeeded in this session.
    pub resolved: bool,
}

#[derive(Debug, Clone)]
pub struct Session {
    pub id: String,
    /// The transcript's first `cwd`, which the replay maps to the project.
    pub cwd: String,
    pub steps: Vec<Step>,
    pub turns: Vec<Turn>,
    pub calls: Vec<ToolCall>,
    pub first_timestamp: String,
}

/// Tools whose input names a file they modify.
const FILE_MUTATORS: &[(&str, &str)] = &[
    ("Edit", "file_path"),
    ("Write", "file_path"),
    ("MultiEdit", "file_path"),
    ("NotebookEdit", "notebook_path"),
];

impl Session {
    /// Reads a transcript's text. None when it has no session id or no prompt.
    pub fn parse(text: &str) -> Option<Session> {
        Session::parse_with(text, &HashMap::new())
    }

    /// Reads a transcript with its subagents' transcripts (agent id → text).
    pub fn parse_with(text: &str, subagents: &HashMap<String, String>) -> Option<Session> {
        let mut r = Reader {
            subagents: subagents.clone(),
            ..Reader::default()
        };
        r.read(text);
        r.finish()
    }

    /// The `prompt_id` the replay sends for a turn (Claude Code's is a UUID
    /// the transcript does not keep).
    pub fn prompt_id(&self, turn: usize) -> String {
        format!("{}-prompt-{}", self.id, turn + 1)
    }

    pub fn modified_files(&self, turn: usize) -> Vec<String> {
        let mut files: Vec<String> = Vec::new();
        for call in self.succeeded(turn) {
            if let Some((_, key)) = FILE_MUTATORS.iter().find(|(n, _)| *n == call.name)
                && let Some(path) = call.input[*key].as_str()
                && !files.iter().any(|f| f == path)
            {
                files.push(path.to_owned());
            }
        }
        files
    }

    /// Subjects of the commits this turn made (`git commit` that succeeded;
    /// the subject from git's `[branch hash] subject` line).
    pub fn commits(&self, turn: usize) -> Vec<String> {
        self.succeeded(turn)
            .filter(|c| c.name == "Bash" && command(c).contains("git commit"))
            .map(|c| {
                let out = c.response["stdout"].as_str().unwrap_or_default();
                out.lines()
                    .find_map(|l| l.strip_prefix('[').and_then(|l| l.split_once("] ")))
                    .map(|(_, subject)| subject.to_owned())
                    .unwrap_or_else(|| command(c).to_owned())
            })
            .collect()
    }

    /// Questions put to the user and answered: AskUserQuestion answers, and
    /// a turn whose final message ends with a question, answered by the next
    /// typed prompt. A yes to a bare go-ahead ("Shall I proceed?", "Ready to
    /// commit?") chooses nothing and is not counted.
    pub fn questions(&self) -> Vec<Question> {
        let mut out = Vec::new();
        for call in &self.calls {
            if call.name != "AskUserQuestion" || call.error.is_some() {
                continue;
            }
            if let Some(answers) = call.response["answers"].as_object() {
                for (asked, answer) in answers {
                    out.push(Question {
                        turn: call.turn,
                        asked: asked.clone(),
                        answer: answer.as_str().unwrap_or_default().to_owned(),
                    });
                }
            }
        }
        for (i, turn) in self.turns.iter().enumerate() {
            let Some(next) = self.turns.get(i + 1) else {
                continue;
            };
            // An answer that is itself a question, or host markup, settles
            // nothing: it is not counted as answered.
            let answers = is_typed(&next.prompt)
                && !next.prompt.contains('?')
                && !asks_back(&next.prompt)
                && !next.prompt.trim_start().starts_with(['<', '/']);
            if turn.final_text.trim_end().ends_with('?') && answers {
                let asked = turn.final_text.trim_end();
                let start = asked[..asked.len() - 1]
                    .rfind(['.', '\n', '!', '?'])
                    .map_or(0, |i| i + 1);
                let asked = asked[start..].trim();
                if !is_bare_go_ahead(asked, &next.prompt) {
                    out.push(Question {
                        turn: i,
                        asked: asked.to_owned(),
                        answer: next.prompt.clone(),
                    });
                }
            }
        }
        out
    }

    /// Failed shell commands (one per intent and turn) and whether a later
    /// one with the same intent succeeded in this session.
    pub fn failures(&self) -> Vec<Failure> {
        let mut out = Vec::new();
        for (i, call) in self.calls.iter().enumerate() {
            if call.name != "Bash" || call.error.is_none() {
                continue;
            }
            let wanted = intent(command(call));
            // The same intent failing again in the same turn is one case.
            if out
                .iter()
                .any(|f: &Failure| f.turn == call.turn && f.intent == wanted)
            {
                continue;
            }
            let resolved = self.calls[i + 1..]
                .iter()
                .any(|c| c.name == "Bash" && c.error.is_none() && intent(command(c)) == wanted);
            out.push(Failure {
                turn: call.turn,
                command: command(call).to_owned(),
                intent: wanted,
                resolved,
            });
        }
        out
    }

    /// Counts of what the replay sends: (prompts, tool events, stops).
    pub fn counts(&self) -> (usize, usize, usize) {
        let mut n = (0, 0, 0);
        for s in &self.steps {
            match s {
                Step::Prompt { .. } => n.0 += 1,
                Step::Tool { .. } => n.1 += 1,
                Step::Stop { .. } => n.2 += 1,
                _ => {}
            }
        }
        n
    }

    fn succeeded(&self, turn: usize) -> impl Iterator<Item = &ToolCall> {
        self.turns[turn]
            .tools
            .iter()
            .map(|&i| &self.calls[i])
            .filter(|c| c.error.is_none())
    }
}

/// A prompt the user typed (not a notification or a command).
/// True when a prompt asks the agent something, without its `?` ("can you
/// explain: …", "now could you …").
pub fn asks_back(prompt: &str) -> bool {
    let p = prompt.trim().to_lowercase();
    let p = p.strip_prefix("now ").unwrap_or(&p);
    ["can you ", "could you ", "would you "]
        .iter()
        .any(|o| p.starts_with(o))
}

/// Words of a question that only asks to go on ("Shall I proceed with the
/// implementation then?", "Ready to commit?").
const GO_AHEAD_ASKS: &[&str] = &[
    "shall",
    "should",
    "want",
    "would",
    "like",
    "you",
    "me",
    "proceed",
    "continue",
    "go",
    "ahead",
    "start",
    "ready",
    "commit",
    "push",
    "implementation",
    "with",
    "then",
    "now",
    "the",
    "this",
    "that",
    "can",
    "may",
    "let",
    "get",
    "started",
];

/// Words of an answer that only agree ("yes please", "ok go ahead").
const AGREES: &[&str] = &[
    "yes", "yeah", "yep", "sure", "ok", "okay", "please", "go", "ahead", "do", "it", "proceed",
    "lgtm", "sounds", "good", "great", "thanks", "let's", "lets", "fine", "y",
];

/// True when `asked` only asks to go on and `answer` only agrees (or says
/// the question's own verb: "commit" to "Ready to commit?").
pub fn is_bare_go_ahead(asked: &str, answer: &str) -> bool {
    let words = |t: &str| -> Vec<String> {
        t.to_lowercase()
            .split(|c: char| !c.is_alphanumeric() && c != '\'')
            .filter(|w| !w.is_empty())
            .map(str::to_owned)
            .collect()
    };
    let asked = words(asked);
    let only_go_on = asked
        .iter()
        .all(|w| GO_AHEAD_ASKS.contains(&w.as_str()) || w.len() <= 2);
    let only_agrees = words(answer)
        .iter()
        .all(|w| AGREES.contains(&w.as_str()) || asked.contains(w));
    only_go_on && only_agrees
}

pub fn is_typed(prompt: &str) -> bool {
    !prompt.starts_with("<task-notification>") && !prompt.starts_with('/')
}

pub fn command(call: &ToolCall) -> &str {
    call.input["command"].as_str().unwrap_or_default()
}

/// Program and subcommand of a shell command: the first segment that is not
/// a `cd`, without leading `VAR=value` assignments; the subcommand is the
/// next word unless it is an option or a path (`mix phx.server`,
/// `mix ash.codegen` and `mix test` are three intents).
pub fn intent(command: &str) -> String {
    let segment = command
        .split(['&', ';', '|', '\n'])
        .map(str::trim)
        .find(|s| !s.is_empty() && !s.starts_with("cd "))
        .unwrap_or_default();
    let mut words = segment
        .split_whitespace()
        .skip_while(|w| w.contains('=') && !w.starts_with('-'));
    let program = words.next().unwrap_or_default();
    let program = program.rsplit('/').next().unwrap_or(program);
    match words.next() {
        Some(sub)
            if sub
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "-_.:".contains(c))
                && !sub.starts_with('-') =>
        {
            format!("{program} {sub}")
        }
        _ => program.to_owned(),
    }
}

#[derive(Default)]
struct Reader {
    id: String,
    cwd: String,
    first_timestamp: String,
    steps: Vec<Step>,
    turns: Vec<Turn>,
    calls: Vec<ToolCall>,
    /// tool_use id → (name, input), waiting for its result.
    pending: HashMap<String, (String, Value)>,
    /// A slash command seen, not yet known to be a prompt or local.
    command: Option<String>,
    /// The current turn has had its Stop (or was interrupted).
    closed: bool,
    subagents: HashMap<String, String>,
    /// Reading a subagent's own transcript, where every entry is a sidechain.
    sidechain: bool,
}

impl Reader {
    fn read(&mut self, text: &str) {
        for line in text.lines() {
            if let Ok(v) = serde_json::from_str::<Value>(line) {
                self.entry(&v);
            }
        }
    }

    fn entry(&mut self, v: &Value) {
        if v["isSidechain"].as_bool() == Some(true) && !self.sidechain {
            return;
        }
        if self.id.is_empty()
            && let Some(id) = v["sessionId"].as_str()
        {
            self.id = id.to_owned();
        }
        if self.cwd.is_empty()
            && let Some(cwd) = v["cwd"].as_str()
        {
            self.cwd = cwd.to_owned();
            self.steps.push(Step::Start {
                source: "startup",
                turn: None,
            });
        }
        if self.first_timestamp.is_empty()
            && let Some(ts) = v["timestamp"].as_str()
        {
            self.first_timestamp = ts.to_owned();
        }
        match v["type"].as_str() {
            Some("user") => self.user(v),
            Some("assistant") => self.assistant(v),
            Some("system") if v["subtype"] == "compact_boundary" => {
                self.flush_command();
                self.steps.push(Step::Start {
                    source: "compact",
                    turn: self.turns.len().checked_sub(1),
                });
            }
            _ => {}
        }
    }

    fn user(&mut self, v: &Value) {
        let content = &v["message"]["content"];
        if let Some(blocks) = content.as_array()
            && blocks.iter().any(|b| b["type"] == "tool_result")
        {
            for b in blocks.iter().filter(|b| b["type"] == "tool_result") {
                self.tool_result(b, &v["toolUseResult"]);
            }
            return;
        }
        let text = match content {
            Value::String(s) => s.clone(),
            Value::Array(blocks) => blocks
                .iter()
                .filter_map(|b| b["text"].as_str())
                .collect::<Vec<_>>()
                .join("\n"),
            _ => return,
        };
        if v["isMeta"].as_bool() == Some(true) || v["isCompactSummary"].as_bool() == Some(true) {
            return;
        }
        if text.starts_with("<local-command") {
            // The command before it ran locally: not a prompt.
            self.command = None;
            return;
        }
        if text.starts_with("[Request interrupted") {
            self.flush_command();
            if let Some(turn) = self.turns.last_mut() {
                turn.interrupted = true;
            }
            self.closed = true;
            return;
        }
        self.flush_command();
        if text.contains("<command-name>") {
            let name = between(&text, "<command-name>", "</command-name>");
            let args = between(&text, "<command-args>", "</command-args>");
            self.command = Some(format!("{name} {args}").trim().to_owned());
            return;
        }
        self.prompt(text);
    }

    fn assistant(&mut self, v: &Value) {
        self.flush_command();
        let Some(blocks) = v["message"]["content"].as_array() else {
            return;
        };
        for b in blocks {
            match b["type"].as_str() {
                Some("text") => {
                    if let (Some(turn), Some(t)) = (self.turns.last_mut(), b["text"].as_str())
                        && !t.trim().is_empty()
                    {
                        turn.final_text = t.to_owned();
                    }
                }
                Some("tool_use") => {
                    if let Some(id) = b["id"].as_str() {
                        let name = b["name"].as_str().unwrap_or_default().to_owned();
                        self.pending
                            .insert(id.to_owned(), (name, b["input"].clone()));
                    }
                }
                _ => {}
            }
        }
    }

    fn tool_result(&mut self, block: &Value, line_result: &Value) {
        let Some(id) = block["tool_use_id"].as_str() else {
            return;
        };
        let Some((name, input)) = self.pending.remove(id) else {
            return;
        };
        if self.turns.is_empty() {
            return;
        }
        let content = match &block["content"] {
            Value::String(s) => s.clone(),
            Value::Array(parts) => parts
                .iter()
                .filter_map(|p| p["text"].as_str())
                .collect::<Vec<_>>()
                .join("\n"),
            _ => String::new(),
        };
        let rejected = content.contains("doesn't want to proceed")
            || content.starts_with("User rejected")
            || line_result.as_str() == Some("User rejected tool use");
        if rejected {
            return;
        }
        let error = (block["is_error"].as_bool() == Some(true)).then(|| content.clone());
        let response = if line_result.is_null() {
            Value::String(content)
        } else {
            line_result.clone()
        };
        if let Some(agent) = response["agentId"].as_str() {
            let kind = input["subagent_type"].as_str().unwrap_or_default();
            for call in self.subagent_calls(agent, kind) {
                self.push_call(call);
            }
        }
        let call = ToolCall {
            id: id.to_owned(),
            name,
            input,
            response,
            error,
            turn: 0,
            agent: None,
        };
        self.push_call(call);
    }

    /// The tool calls in a subagent's transcript, if we have it.
    fn subagent_calls(&self, agent: &str, kind: &str) -> Vec<ToolCall> {
        let Some(text) = self.subagents.get(agent) else {
            return Vec::new();
        };
        let mut sub = Reader {
            sidechain: true,
            ..Reader::default()
        };
        sub.read(text);
        sub.calls
            .into_iter()
            .map(|c| ToolCall {
                agent: Some((agent.to_owned(), kind.to_owned())),
                ..c
            })
            .collect()
    }

    fn push_call(&mut self, mut call: ToolCall) {
        let turn = self.turns.len() - 1;
        call.turn = turn;
        self.calls.push(call);
        self.turns[turn].tools.push(self.calls.len() - 1);
        self.steps.push(Step::Tool {
            call: self.calls.len() - 1,
        });
    }

    fn prompt(&mut self, text: String) {
        self.stop();
        self.turns.push(Turn {
            number: self.turns.len() + 1,
            prompt: text,
            ..Turn::default()
        });
        self.closed = false;
        self.steps.push(Step::Prompt {
            turn: self.turns.len() - 1,
        });
    }

    fn flush_command(&mut self) {
        if let Some(c) = self.command.take() {
            self.prompt(c);
        }
    }

    /// The Stop of the current turn, unless it already had one or was interrupted.
    fn stop(&mut self) {
        if !self.turns.is_empty() && !self.closed {
            self.steps.push(Step::Stop {
                turn: self.turns.len() - 1,
            });
        }
        self.closed = true;
    }

    fn finish(mut self) -> Option<Session> {
        self.command = None;
        self.stop();
        if self.id.is_empty() || self.turns.is_empty() {
            return None;
        }
        self.steps.push(Step::End);
        Some(Session {
            id: self.id,
            cwd: self.cwd,
            steps: self.steps,
            turns: self.turns,
            calls: self.calls,
            first_timestamp: self.first_timestamp,
        })
    }
}

fn between<'a>(text: &'a str, open: &str, close: &str) -> &'a str {
    text.split_once(open)
        .and_then(|(_, rest)| rest.split_once(close))
        .map_or("", |(inner, _)| inner.trim())
}
