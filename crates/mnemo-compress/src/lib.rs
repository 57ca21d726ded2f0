//! Compression: one batch of captured events (usually one prompt turn) in,
//! typed observations and, when the turn is complete, its summary out.
//!
//! The worker builds a [`TurnBatch`] from the queue, asks a [`Compressor`]
//! (built from `[provider]` in the configuration) to compress it, and stores
//! what comes back. Whatever a provider answers, [`Compressor::compress`]
//! returns observations: a failed or unparsable answer falls back to the
//! offline compressor, and the error travels in [`Outcome::fallback_error`].
//!
//! STUB: the real compressor and providers land with issue 3; this file fixes
//! the interface the worker codes against.

use mnemo_core::config::ProviderConfig;
use serde::{Deserialize, Serialize};

/// The events of one prompt turn (or a flushed piece of a long one).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct TurnBatch {
    pub project_root: String,
    pub project_name: String,
    /// The store's session row id.
    pub session_id: i64,
    pub prompt_number: i64,
    /// The user's prompt for this turn, already sanitized; None if private or unknown.
    pub prompt: Option<String>,
    /// Tool events in the order they happened.
    pub events: Vec<BatchEvent>,
    /// The Stop hook's last assistant message, when the turn has ended.
    pub last_assistant_message: Option<String>,
    /// True when the turn has ended (Stop seen): a summary is wanted.
    pub turn_complete: bool,
}

/// One captured tool call, as stored (sanitized, size-capped).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct BatchEvent {
    /// The events table row id.
    pub id: i64,
    pub tool_name: String,
    /// True for PostToolUseFailure.
    pub failed: bool,
    /// The tool input as stored (JSON).
    pub input: serde_json::Value,
    /// The tool response as stored (JSON), if any.
    pub response: Option<serde_json::Value>,
    pub error: Option<String>,
    pub files_read: Vec<String>,
    pub files_modified: Vec<String>,
    /// What capture cut or withheld (size caps, deny-listed files).
    pub note: Option<String>,
    pub created_at: i64,
}

/// An observation before it gets its ids.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ObservationDraft {
    /// bugfix, feature, refactor, change, discovery, decision.
    pub kind: String,
    pub title: String,
    pub subtitle: String,
    pub narrative: String,
    pub facts: Vec<String>,
    pub concepts: Vec<String>,
    pub files_read: Vec<String>,
    pub files_modified: Vec<String>,
}

/// A turn summary before it gets its ids.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SummaryDraft {
    pub request: String,
    pub investigated: String,
    pub learned: String,
    pub completed: String,
    pub next_steps: String,
    pub notes: String,
}

/// One LLM call, for the cost ledger (`llm_calls`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct LlmCall {
    pub provider: String,
    pub model: String,
    /// What the call was for, e.g. `turn`.
    pub purpose: String,
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub duration_ms: u64,
    pub ok: bool,
    pub error: Option<String>,
}

/// What compressing a batch produced.
#[derive(Debug, Clone, Default)]
pub struct Outcome {
    pub observations: Vec<ObservationDraft>,
    /// Present when the batch's turn is complete.
    pub summary: Option<SummaryDraft>,
    /// Who wrote the result: `offline` or the provider's name.
    pub source: String,
    /// Every LLM call made (also the failed ones).
    pub calls: Vec<LlmCall>,
    /// Why the offline compressor was used instead of the configured provider.
    pub fallback_error: Option<String>,
}

#[derive(Debug, thiserror::Error)]
pub enum ProviderError {
    #[error("unknown provider `{0}` (expected offline, anthropic, openai or claude-cli)")]
    Unknown(String),
}

/// A configured compressor.
#[derive(Debug, Clone)]
pub struct Compressor {
    provider: String,
}

impl Compressor {
    pub fn from_config(config: &ProviderConfig) -> Result<Compressor, ProviderError> {
        match config.name.as_str() {
            "offline" | "anthropic" | "openai" | "claude-cli" => Ok(Compressor {
                provider: config.name.clone(),
            }),
            other => Err(ProviderError::Unknown(other.to_owned())),
        }
    }

    /// The configured provider's name.
    pub fn provider(&self) -> &str {
        &self.provider
    }

    /// Compresses one batch. `llm_allowed` is false when a token budget is
    /// spent: the offline compressor is used and no call is made.
    pub async fn compress(&self, batch: &TurnBatch, llm_allowed: bool) -> Outcome {
        let _ = llm_allowed;
        offline(batch)
    }
}

/// The deterministic, network-free compressor.
pub fn offline(batch: &TurnBatch) -> Outcome {
    let observations = batch
        .events
        .iter()
        .map(|e| ObservationDraft {
            kind: "change".into(),
            title: e.tool_name.clone(),
            files_read: e.files_read.clone(),
            files_modified: e.files_modified.clone(),
            ..Default::default()
        })
        .collect();
    let summary = batch.turn_complete.then(|| SummaryDraft {
        request: batch.prompt.clone().unwrap_or_default(),
        ..Default::default()
    });
    Outcome {
        observations,
        summary,
        source: "offline".into(),
        ..Default::default()
    }
}
