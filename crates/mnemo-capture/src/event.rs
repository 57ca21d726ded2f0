//! A hook event in platform-neutral terms: what adapters produce and
//! handlers consume.

use mnemo_core::model::Platform;
use serde_json::Value;

/// One parsed hook invocation.
#[derive(Debug, Clone, PartialEq)]
pub struct HookInput {
    pub platform: Platform,
    pub event: HookEvent,
    /// The platform's session id (None when the payload had none).
    pub session_id: Option<String>,
    /// The payload's working directory.
    pub cwd: Option<String>,
    /// The platform's stable project directory (`CLAUDE_PROJECT_DIR`).
    pub project_dir: Option<String>,
    pub transcript_path: Option<String>,
    /// Set when the payload was too large to parse: only identifiers were
    /// salvaged, and this says so.
    pub oversized: Option<String>,
}

#[derive(Debug, Clone, PartialEq)]
pub enum HookEvent {
    SessionStart {
        source: Option<String>,
    },
    UserPrompt {
        prompt_id: Option<String>,
        prompt: String,
    },
    PreToolUse(ToolCall),
    PostToolUse {
        call: ToolCall,
        response: Value,
    },
    PostToolUseFailure {
        call: ToolCall,
        error: String,
        interrupted: bool,
    },
    Stop {
        prompt_id: Option<String>,
        last_assistant_message: Option<String>,
    },
    SessionEnd {
        reason: Option<String>,
    },
    /// Something the agent said or thought during the turn, for hosts whose
    /// hooks carry it (Cursor's `afterAgentThought`).
    AgentText {
        text: String,
        thought: bool,
    },
    /// An event we do not act on (yet); answered with a no-op.
    Other {
        name: String,
    },
}

impl HookEvent {
    /// The platform-neutral name, for logs.
    pub fn name(&self) -> &str {
        match self {
            HookEvent::SessionStart { .. } => "SessionStart",
            HookEvent::UserPrompt { .. } => "UserPromptSubmit",
            HookEvent::PreToolUse(_) => "PreToolUse",
            HookEvent::PostToolUse { .. } => "PostToolUse",
            HookEvent::PostToolUseFailure { .. } => "PostToolUseFailure",
            HookEvent::Stop { .. } => "Stop",
            HookEvent::SessionEnd { .. } => "SessionEnd",
            HookEvent::AgentText { .. } => "AgentText",
            HookEvent::Other { name } => name,
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct ToolCall {
    pub name: String,
    pub input: Value,
    pub tool_use_id: Option<String>,
    pub prompt_id: Option<String>,
    pub duration_ms: Option<i64>,
}

/// What a handler wants the agent (and the user) to see; adapters render it
/// in the platform's format.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct HookResponse {
    /// Text for the model (`additionalContext`).
    pub additional_context: Option<String>,
    /// A short line for the human (`systemMessage`).
    pub system_message: Option<String>,
}
