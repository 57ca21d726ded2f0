//! Small enums shared by capture, store, worker and recall, with their stored spellings.

use serde::{Deserialize, Serialize};

/// The agent host an event came from. The spelling is part of the CLI contract
/// (`mnemo hook <platform>`) and of the stored data.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Platform {
    ClaudeCode,
    Codex,
    Cursor,
    Gemini,
    #[serde(rename = "opencode")]
    OpenCode,
    Raw,
}

impl Platform {
    pub const ALL: [Platform; 6] = [
        Platform::ClaudeCode,
        Platform::Codex,
        Platform::Cursor,
        Platform::Gemini,
        Platform::OpenCode,
        Platform::Raw,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Platform::ClaudeCode => "claude-code",
            Platform::Codex => "codex",
            Platform::Cursor => "cursor",
            Platform::Gemini => "gemini",
            Platform::OpenCode => "opencode",
            Platform::Raw => "raw",
        }
    }

    pub fn parse(text: &str) -> Option<Platform> {
        Platform::ALL.into_iter().find(|p| p.as_str() == text)
    }
}

impl std::fmt::Display for Platform {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// How urgently the worker should look at a captured event. Stored as an
/// integer so that `ORDER BY priority` drains mutations first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Priority {
    /// Mutations (writes, edits, state-changing commands) and failures.
    High = 0,
    /// Everything that is neither clearly a mutation nor a plain read.
    Normal = 1,
    /// Reads and searches: context for the turn, rarely an observation alone.
    Low = 2,
}

impl Priority {
    pub fn as_i64(self) -> i64 {
        self as i64
    }

    pub fn from_i64(n: i64) -> Priority {
        match n {
            0 => Priority::High,
            1 => Priority::Normal,
            _ => Priority::Low,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Priority::High => "high",
            Priority::Normal => "normal",
            Priority::Low => "low",
        }
    }

    pub fn parse(text: &str) -> Option<Priority> {
        match text {
            "high" => Some(Priority::High),
            "normal" => Some(Priority::Normal),
            "low" => Some(Priority::Low),
            _ => None,
        }
    }
}

/// What a row of the events table records.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EventKind {
    /// A tool ran and answered (PostToolUse).
    ToolUse,
    /// A tool ran and failed (PostToolUseFailure).
    ToolFailure,
    /// The agent finished answering a prompt (Stop); closes the turn.
    TurnEnd,
}

impl EventKind {
    pub fn as_str(self) -> &'static str {
        match self {
            EventKind::ToolUse => "tool_use",
            EventKind::ToolFailure => "tool_failure",
            EventKind::TurnEnd => "turn_end",
        }
    }

    pub fn parse(text: &str) -> Option<EventKind> {
        match text {
            "tool_use" => Some(EventKind::ToolUse),
            "tool_failure" => Some(EventKind::ToolFailure),
            "turn_end" => Some(EventKind::TurnEnd),
            _ => None,
        }
    }
}

/// Where a captured event stands in the worker's queue.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum QueueStatus {
    Pending,
    /// Taken by a worker until its lease expires.
    Leased,
    Done,
    /// Kept failing; visible in doctor and the API, retried only on request.
    Failed,
}

impl QueueStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            QueueStatus::Pending => "pending",
            QueueStatus::Leased => "leased",
            QueueStatus::Done => "done",
            QueueStatus::Failed => "failed",
        }
    }

    pub fn parse(text: &str) -> Option<QueueStatus> {
        match text {
            "pending" => Some(QueueStatus::Pending),
            "leased" => Some(QueueStatus::Leased),
            "done" => Some(QueueStatus::Done),
            "failed" => Some(QueueStatus::Failed),
            _ => None,
        }
    }
}

/// The kinds of observation, as PRODUCT.md names them. `memory` is what the
/// agent saves on purpose through the MCP `save_memory` tool.
pub const OBSERVATION_TYPES: &[&str] = &[
    "bugfix",
    "feature",
    "refactor",
    "change",
    "discovery",
    "decision",
    "memory",
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spellings_round_trip() {
        for p in Platform::ALL {
            assert_eq!(Platform::parse(p.as_str()), Some(p));
        }
        for p in [Priority::High, Priority::Normal, Priority::Low] {
            assert_eq!(Priority::from_i64(p.as_i64()), p);
            assert_eq!(Priority::parse(p.as_str()), Some(p));
        }
        for k in [
            EventKind::ToolUse,
            EventKind::ToolFailure,
            EventKind::TurnEnd,
        ] {
            assert_eq!(EventKind::parse(k.as_str()), Some(k));
        }
        for s in [
            QueueStatus::Pending,
            QueueStatus::Leased,
            QueueStatus::Done,
            QueueStatus::Failed,
        ] {
            assert_eq!(QueueStatus::parse(s.as_str()), Some(s));
        }
        assert_eq!(Platform::parse("high"), None);
    }
}
