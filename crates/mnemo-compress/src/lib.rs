//! Compression: one batch of captured events (usually one prompt turn) in,
//! typed observations and, when the turn is complete, its summary out.
//!
//! The worker builds a [`TurnBatch`] from the queue, asks a [`Compressor`]
//! (built from `[provider]` in the configuration) to compress it, and stores
//! what comes back. Whatever a provider answers, [`Compressor::compress`]
//! returns observations: a failed or unparsable answer falls back to the
//! offline compressor, and the error travels in [`Outcome::fallback_error`].
//!
//! - [`offline()`]: deterministic, no network; the default. A turn becomes a
//!   few observations (per commit or changed file, per failed-then-fixed
//!   command, per decision the user settled, per command that changed
//!   something, per failure left standing), with reads, searches and
//!   bookkeeping folded in, and the assistant's why when the narrative is
//!   known. A piece of a turn still running gets a partial summary
//!   ([`Outcome::piece_summary`]) that the last piece merges; a check still
//!   failing at a piece's end waits there for a later piece to fix it
//!   instead of standing as a failure.
//! - `anthropic` (forced `record_memory` tool call), `openai` and compatible
//!   servers (strict `json_schema`, plain JSON where refused), `claude-cli`
//!   (the user's `claude -p`): one call per batch, the batch rendered within
//!   a byte budget ([`DEFAULT_RENDER_BUDGET`], see
//!   [`Compressor::with_render_budget`]), the answer sanitized before it is
//!   trusted (types from [`VOCABULARY`], lengths clamped, paths mapped back
//!   to the batch's own).
//!
//! For the worker: [`Compressor::from_config`] fails on an unknown provider,
//! a missing API key or a missing `claude` (log it, use
//! [`Compressor::offline_only`]); every [`LlmCall`] in [`Outcome::calls`] is
//! one attempt for the cost ledger, with purpose [`PURPOSE_TURN`] or
//! [`PURPOSE_BATCH`]; [`sample::turn`] makes realistic batches for
//! benchmarks.
//!
//! Modules: `event` reads stored tool events, `command` and `code` know
//! shell commands and source text, `concrete` tells a title that names what
//! it acts on from one that only points at it, `filler` knows
//! conversational filler (acknowledgements, narration), `knowledge` asks
//! the model to consolidate a project's knowledge items ([`Compressor::consolidate`]), `narrative` reads what the assistant said
//! (explanations, questions, the report) and merges a long turn's pieces,
//! `offline` writes observations without a model, `render` writes what a
//! model is shown, `answer` reads what it says, `provider` talks to it,
//! `text` holds string tools.

mod answer;
mod code;
mod command;
mod common_tools;
mod concrete;
mod event;
mod filler;
mod knowledge;
mod narrative;
mod noise;
mod offline;
mod provider;
mod render;
pub mod sample;
mod text;
mod untrusted;

use std::ffi::OsString;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use mnemo_core::config::ProviderConfig;
use serde::{Deserialize, Serialize};

pub use command::{CommandClass, classify as classify_command};
pub use knowledge::{KnowledgeOutcome, KnowledgeRequest, PURPOSE_KNOWLEDGE, Revision, ShownItem};
pub use offline::offline;
pub use render::{DEFAULT_RENDER_BUDGET, answer_schema, render_batch, system_prompt};

use provider::anthropic::{self, Anthropic};
use provider::claude_cli::{self, ClaudeCli, CliOptions};
use provider::openai::{self, OpenAi};
use provider::{Answer, Http, Request, Task};

/// The observation types, in the order the schema lists them.
pub const VOCABULARY: [&str; 6] = [
    "bugfix",
    "feature",
    "refactor",
    "change",
    "discovery",
    "decision",
];

/// Ledger purpose of a call for a complete turn (observations and summary).
pub const PURPOSE_TURN: &str = "turn";
/// Ledger purpose of a call for a flushed piece of a turn still running.
pub const PURPOSE_BATCH: &str = "batch";

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
    /// What the host's transcript says about this turn beyond its tool
    /// calls (the why), when the transcript could be read; already
    /// sanitized with the capture's privacy rules.
    pub narrative: Option<TurnNarrative>,
    /// The summaries of the turn's earlier pieces, when a long turn was cut
    /// into several batches: the last piece's summary merges them, and a
    /// check they left failing is a fix in the piece that makes it pass, or
    /// a standing failure at the turn's end.
    pub earlier_pieces: Vec<SummaryDraft>,
}

/// How a turn began: what the "request" of its summary is.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TurnOrigin {
    /// The user typed a prompt.
    #[default]
    User,
    /// A background task finished (`<task-notification>`): the turn
    /// continues the request that started the task.
    TaskNotification,
    /// The context was compacted and the agent goes on with the same work.
    Compaction,
}

/// The turn as the host's transcript tells it, in the order it happened.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TurnNarrative {
    pub origin: TurnOrigin,
    /// For a continuation (`origin` not `User`): the request it continues.
    pub continues_request: Option<String>,
    /// The assistant's words between tool calls, in order.
    pub notes: Vec<AssistantNote>,
    /// Questions the assistant asked the user in this turn, with the answers.
    pub questions: Vec<QuestionAnswer>,
    /// The assistant's last message of the turn (its report).
    pub final_report: Option<String>,
}

/// Something the assistant said.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct AssistantNote {
    pub text: String,
    /// The tool call that came right after it, if any (the call it explains).
    pub before_tool_use_id: Option<String>,
}

/// A question the assistant put to the user, and what the user answered.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct QuestionAnswer {
    pub question: String,
    /// The options offered, when the question was multiple-choice.
    pub options: Vec<String>,
    /// What each option meant, as the question described it (same order as
    /// `options`; empty or shorter when the host gave no descriptions).
    #[serde(default)]
    pub option_notes: Vec<String>,
    pub answer: String,
}

/// One captured tool call, as stored (sanitized, size-capped).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct BatchEvent {
    /// The events table row id.
    pub id: i64,
    /// The host's id of the tool call (links it to the transcript).
    pub tool_use_id: Option<String>,
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
    /// Absolute paths, as the batch's events carry them.
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
    /// What the call was for: [`PURPOSE_TURN`] or [`PURPOSE_BATCH`].
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
    /// Present for a piece of a turn still running (not `turn_complete`)
    /// that did something: its partial summary, for the worker to keep and
    /// hand to the turn's last piece as [`TurnBatch::earlier_pieces`].
    pub piece_summary: Option<SummaryDraft>,
    /// Who wrote the result: `offline` or the provider's name.
    pub source: String,
    /// Every LLM call made (also the failed ones), one per HTTP attempt.
    pub calls: Vec<LlmCall>,
    /// Why the offline compressor was used instead of the configured provider.
    pub fallback_error: Option<String>,
    /// What was dropped or fixed in the provider's answer (unknown types,
    /// empty titles, paths not in the batch, a missing summary filled in
    /// offline). For logs; the outcome is usable as it is.
    pub repairs: Vec<String>,
}

#[derive(Debug, thiserror::Error)]
pub enum ProviderError {
    #[error("unknown provider `{0}` (expected offline, anthropic, openai or claude-cli)")]
    Unknown(String),
    #[error(
        "the {provider} provider needs an API key: set provider.api_key in config.toml, \
         or MNEMO_PROVIDER_API_KEY or {env_var} in the environment"
    )]
    MissingApiKey {
        provider: &'static str,
        env_var: &'static str,
    },
    #[error(
        "the claude-cli provider cannot find `{path}`: install Claude Code or set \
         provider.claude_path to the claude executable"
    )]
    ClaudeNotFound { path: String },
    #[error("the {provider} provider cannot start: {message}")]
    Setup {
        provider: &'static str,
        message: String,
    },
}

#[derive(Debug)]
enum Backend {
    Offline,
    Anthropic(Anthropic),
    OpenAi(OpenAi),
    ClaudeCli(ClaudeCli),
}

/// A configured compressor. Cheap to clone (the HTTP client is shared).
#[derive(Debug, Clone)]
pub struct Compressor {
    provider: String,
    model: String,
    backend: Arc<Backend>,
    render_budget: usize,
    cli: CliOptions,
}

impl Compressor {
    /// Builds the compressor `[provider]` asks for.
    ///
    /// Fails, with a message that says what to set, when the provider is
    /// unknown, when `anthropic` or `openai` on the vendor's own URL has no
    /// API key (config `api_key`, else `ANTHROPIC_API_KEY` /
    /// `OPENAI_API_KEY`), or when the `claude` executable cannot be found. A
    /// custom `base_url` (a proxy, Ollama, LM Studio, vLLM) may go without a
    /// key. The worker is expected to log the error and use
    /// [`Compressor::offline_only`].
    pub fn from_config(config: &ProviderConfig) -> Result<Compressor, ProviderError> {
        let name = config.name.trim().to_ascii_lowercase();
        let (backend, model) = Settings::of(config).backend(&name)?;
        let provider = match backend {
            Backend::Offline => "offline",
            _ => name.as_str(),
        };
        Ok(Compressor {
            provider: provider.to_owned(),
            model,
            backend: Arc::new(backend),
            render_budget: DEFAULT_RENDER_BUDGET,
            cli: CliOptions::default(),
        })
    }
    /// The offline compressor, for when the configured one cannot be built.
    pub fn offline_only() -> Compressor {
        Compressor {
            provider: "offline".into(),
            model: String::new(),
            backend: Arc::new(Backend::Offline),
            render_budget: DEFAULT_RENDER_BUDGET,
            cli: CliOptions::default(),
        }
    }

    /// The configured provider's name.
    pub fn provider(&self) -> &str {
        &self.provider
    }

    /// The model asked (empty for offline; for claude-cli a Claude Code
    /// model name or alias, `haiku` unless configured).
    pub fn model(&self) -> &str {
        &self.model
    }

    /// Caps the rendered batch at `bytes` (default
    /// [`DEFAULT_RENDER_BUDGET`]); the worker may tie it to
    /// `worker.batch_max_bytes`.
    pub fn with_render_budget(mut self, bytes: usize) -> Compressor {
        self.render_budget = bytes.max(2048);
        self
    }

    /// Extra environment for the `claude` child of the claude-cli provider
    /// (tests point it at a stand-in server this way).
    pub fn with_cli_env<K, V>(mut self, vars: impl IntoIterator<Item = (K, V)>) -> Compressor
    where
        K: Into<OsString>,
        V: Into<OsString>,
    {
        self.cli
            .env
            .extend(vars.into_iter().map(|(k, v)| (k.into(), v.into())));
        self
    }

    /// The working directory of the `claude` child (default: the system's
    /// temporary directory, away from any project's CLAUDE.md and hooks).
    pub fn with_cli_dir(mut self, dir: impl Into<PathBuf>) -> Compressor {
        self.cli.dir = Some(dir.into());
        self
    }

    /// Compresses one batch. `llm_allowed` is false when a token budget is
    /// spent: the offline compressor is used and no call is made.
    ///
    /// With a provider configured, one call is made per batch (two HTTP
    /// attempts at most, plus one for an OpenAI-compatible server that
    /// rejects `json_schema`), unless the batch has nothing to say (no
    /// events and no final message). Any failure falls back to
    /// [`offline()`], with the reason in `fallback_error` and every attempt
    /// in `calls`.
    pub async fn compress(&self, batch: &TurnBatch, llm_allowed: bool) -> Outcome {
        let batch = &*noise::worth_remembering(batch);
        if let Some(o) = self.offline_instead(batch, llm_allowed) {
            return o;
        }
        let user = render_batch(batch, self.render_budget);
        let request = Request {
            user: &user,
            task: Task::Turn {
                complete: batch.turn_complete,
            },
            purpose: if batch.turn_complete {
                PURPOSE_TURN
            } else {
                PURPOSE_BATCH
            },
        };
        let mut calls = Vec::new();
        let interpreted = self
            .ask(&request, &mut calls)
            .await
            .and_then(|answer| answer::interpret(answer_value(answer)?, batch, &user));
        if let Err(e) = &interpreted {
            mark_unusable(&mut calls, e);
        }
        match interpreted {
            Ok(parsed) => self.accepted(batch, parsed, calls),
            Err(e) => self.fell_back(batch, calls, &e),
        }
    }

    /// The offline outcome when no call is to be made: no provider, no
    /// budget left, or nothing to say (no events and no final message).
    fn offline_instead(&self, batch: &TurnBatch, llm_allowed: bool) -> Option<Outcome> {
        if matches!(*self.backend, Backend::Offline) {
            return Some(offline(batch));
        }
        if !llm_allowed {
            let mut o = offline(batch);
            o.fallback_error =
                Some("LLM calls not allowed for this batch (token budget spent)".into());
            return Some(o);
        }
        let nothing_said = batch
            .last_assistant_message
            .as_deref()
            .is_none_or(|m| m.trim().is_empty());
        (batch.events.is_empty() && nothing_said).then(|| offline(batch))
    }

    /// Asks the configured model, every attempt in `calls`.
    async fn ask(&self, request: &Request<'_>, calls: &mut Vec<LlmCall>) -> Result<Answer, String> {
        match &*self.backend {
            Backend::Offline => Err("no model configured".to_owned()),
            Backend::Anthropic(p) => p.call(request, calls).await,
            Backend::OpenAi(p) => p.call(request, calls).await,
            Backend::ClaudeCli(p) => p.call(request, &self.cli, calls).await,
        }
    }

    /// The outcome of a usable answer: its observations, and its summary
    /// for a complete turn (written offline when the answer has none).
    fn accepted(&self, batch: &TurnBatch, parsed: answer::Parsed, calls: Vec<LlmCall>) -> Outcome {
        let mut repairs = parsed.repairs;
        let summary = if batch.turn_complete {
            match parsed.summary {
                Some(s) => Some(narrative::backfill(batch, s)),
                None => {
                    repairs.push("summary written offline".into());
                    offline(batch).summary
                }
            }
        } else {
            None
        };
        if !repairs.is_empty() {
            tracing::debug!(provider = %self.provider, ?repairs, "answer repaired");
        }
        untrusted::keep_data_only(Outcome {
            observations: parsed.observations,
            summary,
            piece_summary: offline::piece_summary(batch),
            source: self.provider.clone(),
            calls,
            fallback_error: None,
            repairs,
        })
    }

    /// The offline outcome after a failed call or an unusable answer, with
    /// the calls made and why.
    fn fell_back(&self, batch: &TurnBatch, calls: Vec<LlmCall>, error: &str) -> Outcome {
        tracing::warn!(provider = %self.provider, error = %error, "falling back to offline");
        let mut o = offline(batch);
        o.calls = calls;
        o.fallback_error = Some(format!("{}: {error}", self.provider));
        o
    }
}

/// The JSON of an answer: as sent, or found in its text.
fn answer_value(answer: Answer) -> Result<serde_json::Value, String> {
    match answer {
        Answer::Json(v) => Ok(v),
        Answer::Text(t) => answer::json_in_text(&t).ok_or_else(|| {
            format!(
                "the answer holds no JSON object: {}",
                text::one_line(&t, 160)
            )
        }),
    }
}

/// Marks the last call failed when it went through but its answer is
/// unusable.
fn mark_unusable(calls: &mut [LlmCall], error: &str) {
    if let Some(last) = calls.last_mut()
        && last.ok
    {
        last.ok = false;
        last.error = Some(error.to_owned());
    }
}
/// A vendor's HTTP API: its provider name, the variable its key may be
/// in, its own URL and its default model.
#[derive(Clone, Copy)]
struct Vendor {
    provider: &'static str,
    env_var: &'static str,
    base: &'static str,
    model: &'static str,
}

const ANTHROPIC: Vendor = Vendor {
    provider: "anthropic",
    env_var: "ANTHROPIC_API_KEY",
    base: anthropic::DEFAULT_BASE,
    model: anthropic::DEFAULT_MODEL,
};

const OPENAI: Vendor = Vendor {
    provider: "openai",
    env_var: "OPENAI_API_KEY",
    base: openai::DEFAULT_BASE,
    model: openai::DEFAULT_MODEL,
};

/// What every backend is built from: the configuration, the timeout of a
/// call and the most tokens an answer may take.
struct Settings<'c> {
    config: &'c ProviderConfig,
    timeout: Duration,
    max_tokens: u64,
}

impl Settings<'_> {
    fn of(config: &ProviderConfig) -> Settings<'_> {
        Settings {
            config,
            timeout: Duration::from_secs(config.timeout_secs.max(1)),
            max_tokens: if config.max_output_tokens == 0 {
                2048
            } else {
                config.max_output_tokens
            },
        }
    }

    /// The backend the provider `name` (trimmed, lowercase) asks for, and
    /// the model it asks.
    fn backend(&self, name: &str) -> Result<(Backend, String), ProviderError> {
        match name {
            "offline" | "" => Ok((Backend::Offline, String::new())),
            "anthropic" => self.anthropic(),
            "openai" => self.openai(),
            "claude-cli" => self.claude_cli(),
            other => Err(ProviderError::Unknown(other.to_owned())),
        }
    }

    /// The configured model, else `default`.
    fn model_or(&self, default: &str) -> String {
        let m = self.config.model.trim();
        if m.is_empty() { default } else { m }.to_owned()
    }

    /// The HTTP side of a vendor's API (with the configured model, else
    /// the vendor's default) and its base URL. A key is required on the
    /// vendor's own URL only.
    fn http(&self, vendor: &Vendor) -> Result<(Http, String), ProviderError> {
        let Vendor {
            provider,
            env_var,
            base: default_base,
            model,
        } = *vendor;
        let key = provider::resolve_key(&self.config.api_key, env_var);
        let base = provider::base_or(&self.config.base_url, default_base);
        if key.is_empty() && base == default_base {
            return Err(ProviderError::MissingApiKey { provider, env_var });
        }
        let client = provider::client(self.timeout)
            .map_err(|message| ProviderError::Setup { provider, message })?;
        let http = Http {
            client,
            key,
            provider,
            model: self.model_or(model),
            timeout: self.timeout,
        };
        Ok((http, base))
    }

    fn anthropic(&self) -> Result<(Backend, String), ProviderError> {
        let (http, base) = self.http(&ANTHROPIC)?;
        let model = http.model.clone();
        let max_tokens = self.max_tokens;
        let backend = Backend::Anthropic(Anthropic {
            http,
            base,
            max_tokens,
        });
        Ok((backend, model))
    }

    fn openai(&self) -> Result<(Backend, String), ProviderError> {
        let (http, base) = self.http(&OPENAI)?;
        let model = http.model.clone();
        let backend = Backend::OpenAi(OpenAi {
            http,
            base,
            max_tokens: self.max_tokens,
            schema_rejected: AtomicBool::new(false),
        });
        Ok((backend, model))
    }

    /// The user's `claude` (the configured path, else found on `PATH`).
    fn claude_cli(&self) -> Result<(Backend, String), ProviderError> {
        let wanted = match self.config.claude_path.trim() {
            "" => "claude",
            path => path,
        };
        let path =
            claude_cli::find_executable(wanted).ok_or_else(|| ProviderError::ClaudeNotFound {
                path: wanted.to_owned(),
            })?;
        let model = self.model_or(claude_cli::DEFAULT_MODEL);
        let backend = Backend::ClaudeCli(ClaudeCli {
            path,
            model: model.clone(),
            timeout: self.timeout,
            max_tokens: self.max_tokens,
        });
        Ok((backend, model))
    }
}
#[cfg(test)]
mod tests {
    use super::*;

    fn assert_send<T: Send>(_: &T) {}

    #[test]
    fn compressors_and_their_futures_cross_threads() {
        let c = Compressor::offline_only();
        let batch = TurnBatch::default();
        let fut = c.compress(&batch, true);
        assert_send(&fut);
        assert_send(&c);
        fn sync<T: Sync>(_: &T) {}
        sync(&c);
    }
}
