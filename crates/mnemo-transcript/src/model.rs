//! The records a transcript is read into: one shape each, built by
//! [`crate::claude_code`] (Claude Code), [`crate::rollout`] (Codex) and
//! [`crate::gemini`] (Gemini CLI).

use serde_json::Value;

/// One host session, read from its transcript file (and its subagents').
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Session {
    /// The host's session id (the lines' `sessionId`, else the file stem).
    pub session_id: String,
    /// The working directory the session started in.
    pub cwd: Option<String>,
    /// The git branch the host saw checked out there (`gitBranch`): the
    /// directory was a git checkout, even if it is gone now.
    pub git_branch: Option<String>,
    /// Gemini CLI's `projectHash`: the SHA-256 of its project root's path.
    pub project_hash: Option<String>,
    pub turns: Vec<Turn>,
    pub stats: ReadStats,
}

/// What opened a turn.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Origin {
    /// The user typed a prompt (or a slash command that became one).
    #[default]
    User,
    /// A background task finished (`<task-notification>`).
    TaskNotification,
    /// The context was compacted and the agent went on with the same work.
    Compaction,
}

/// A turn: from what opened it to the next prompt, notification or
/// compaction.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Turn {
    pub origin: Origin,
    /// The prompt as the user wrote it (sanitized); for a notification its
    /// text; None for a compaction or a fully private prompt.
    pub prompt: Option<String>,
    /// For a notification or compaction: the user's request it continues.
    pub continues_request: Option<String>,
    /// The host's id of the message that opened the turn.
    pub uuid: Option<String>,
    pub started_at_ms: i64,
    pub ended_at_ms: i64,
    /// The user interrupted the turn.
    pub interrupted: bool,
    pub tool_calls: Vec<ToolCall>,
    /// The assistant's words between tool calls, in order (the final report
    /// is not repeated here).
    pub notes: Vec<Note>,
    pub questions: Vec<Question>,
    /// The assistant's last words, when nothing came after them.
    pub final_report: Option<String>,
}

impl Turn {
    /// Whether the assistant did or said anything in this turn.
    pub fn has_activity(&self) -> bool {
        !self.tool_calls.is_empty() || !self.notes.is_empty() || self.final_report.is_some()
    }

    /// The notes from `since` on (the words after the last tool call), taken
    /// out and joined as the turn's report.
    pub(crate) fn take_report(&mut self, since: usize) -> String {
        let report: Vec<String> = self.notes.drain(since..).map(|n| n.text).collect();
        report.join("\n\n")
    }
}

/// One tool call and its outcome.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ToolCall {
    pub id: String,
    pub name: String,
    /// Sanitized.
    pub input: Value,
    /// The structured result (`toolUseResult`), else the result's text;
    /// sanitized; None when withheld or not seen.
    pub result: Option<Value>,
    /// The error text, when the call failed.
    pub error: Option<String>,
    /// What privacy withheld, in words.
    pub withheld: Option<String>,
    pub at_ms: i64,
    /// For a subagent's call: the subagent's id.
    pub agent_id: Option<String>,
}

/// The assistant's words between tool calls.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Note {
    pub text: String,
    /// The tool call that came right after it, if any.
    pub before_tool_use_id: Option<String>,
}

/// A question the assistant asked, and the user's answer.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Question {
    pub question: String,
    pub options: Vec<String>,
    /// What each option meant (same order as `options`; empty when the
    /// question gave no descriptions).
    pub option_notes: Vec<String>,
    pub answer: String,
    /// The AskUserQuestion call that asked it; None when the turn before
    /// ended on the question and the prompt answered it.
    pub tool_use_id: Option<String>,
}

/// How a read went.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ReadStats {
    pub lines: u64,
    /// Lines that were not JSON objects.
    pub skipped: u64,
    pub bytes: u64,
    /// Files not read: not regular files (a FIFO, a device), or unreadable.
    pub unreadable_files: u64,
}

impl ReadStats {
    pub fn add(&mut self, other: ReadStats) {
        self.lines += other.lines;
        self.skipped += other.skipped;
        self.bytes += other.bytes;
        self.unreadable_files += other.unreadable_files;
    }
}
