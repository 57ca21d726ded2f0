//! What a hook hands to the store: one [`Capture`], already sanitized.
//!
//! A capture is self-contained (it names its session and project) so that it
//! can be written straight to SQLite, or, when the database cannot be
//! written, serialized to the spool file and applied later exactly as if it
//! had arrived then. Its `capture_id` (a time-ordered UUID) makes that replay
//! idempotent.

use mnemo_core::model::{EventKind, Platform, Priority};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Capture {
    /// Unique per hook invocation; time-ordered (UUID v7).
    pub capture_id: String,
    /// When the hook ran, epoch milliseconds.
    pub at_ms: i64,
    pub session: SessionRef,
    pub op: CaptureOp,
}

/// The session an operation belongs to, with what is known of its project.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SessionRef {
    pub platform: Platform,
    pub platform_session_id: String,
    /// Canonical project root; None when the payload named no directory.
    pub project_root: Option<String>,
    pub project_name: Option<String>,
    pub cwd: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum CaptureOp {
    SessionStart {
        source: Option<String>,
        transcript_path: Option<String>,
    },
    /// A prompt opens a turn. `text` is None when the prompt was entirely
    /// private: the turn is counted, the text is not stored.
    Prompt {
        platform_prompt_id: Option<String>,
        text: Option<String>,
        origin: PromptOrigin,
    },
    Event(EventRecord),
    /// Something the agent said or thought during the current turn, from a
    /// hook that carries it (already sanitized).
    Note {
        text: String,
        thought: bool,
    },
    SessionEnd {
        reason: Option<String>,
    },
}

/// Who wrote a prompt.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PromptOrigin {
    User,
    /// Injected by the host, e.g. Claude Code's `<task-notification>` when an
    /// asynchronous subagent finishes.
    System,
}

impl PromptOrigin {
    pub fn as_str(self) -> &'static str {
        match self {
            PromptOrigin::User => "user",
            PromptOrigin::System => "system",
        }
    }

    pub fn parse(text: &str) -> PromptOrigin {
        if text == "system" {
            PromptOrigin::System
        } else {
            PromptOrigin::User
        }
    }
}

/// A row of the events table: a tool use, a tool failure, or a turn's end.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EventRecord {
    pub kind: EventKind,
    pub tool_name: Option<String>,
    pub tool_use_id: Option<String>,
    pub platform_prompt_id: Option<String>,
    /// JSON text.
    pub input: Option<String>,
    /// JSON text (for a turn end: the last assistant message as a JSON string).
    pub response: Option<String>,
    pub error: Option<String>,
    pub files_read: Vec<String>,
    pub files_modified: Vec<String>,
    pub priority: Priority,
    pub duration_ms: Option<i64>,
    /// What was cut or withheld, in words.
    pub note: Option<String>,
}

impl EventRecord {
    pub fn new(kind: EventKind, priority: Priority) -> EventRecord {
        EventRecord {
            kind,
            tool_name: None,
            tool_use_id: None,
            platform_prompt_id: None,
            input: None,
            response: None,
            error: None,
            files_read: Vec::new(),
            files_modified: Vec::new(),
            priority,
            duration_ms: None,
            note: None,
        }
    }
}

/// A new capture id: UUID v7, so ids sort by creation time.
pub fn new_capture_id() -> String {
    uuid::Uuid::now_v7().to_string()
}
