//! The LLM providers behind [`Compressor`](crate::Compressor): what they
//! share (the request to send, the answer that comes back, API keys that
//! never show, HTTP with a bounded retry and one ledger entry per attempt)
//! and the three backends in their own modules.

pub(crate) mod anthropic;
pub(crate) mod claude_cli;
pub(crate) mod openai;

use std::time::{Duration, Instant};

use reqwest::StatusCode;
use serde_json::Value;

use crate::LlmCall;
use crate::render;
use crate::text::one_line;

/// What every provider is asked.
pub(crate) struct Request<'a> {
    /// The rendered batch, or the project's knowledge and evidence.
    pub user: &'a str,
    pub task: Task,
    /// Ledger purpose: `turn`, `batch` or `knowledge`.
    pub purpose: &'static str,
}

/// What the model is asked to do, which fixes its instructions and the
/// shape of its answer.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Task {
    /// Observations (and, for a complete turn, its summary) of a batch.
    Turn { complete: bool },
    /// A project's knowledge items, consolidated ([`crate::knowledge`]).
    Knowledge,
}

impl Task {
    /// The system prompt; `text_answer`: with the JSON shape spelled out,
    /// for a model that cannot be held to a schema.
    pub fn system(self, text_answer: bool) -> String {
        match self {
            Task::Turn { complete } => render::system_prompt(complete, text_answer),
            Task::Knowledge => crate::knowledge::system_prompt(text_answer),
        }
    }

    pub fn schema(self) -> &'static Value {
        match self {
            Task::Turn { complete } => render::answer_schema(complete),
            Task::Knowledge => crate::knowledge::answer_schema(),
        }
    }

    /// The name and description of the tool (or schema) the answer goes through.
    pub fn tool(self) -> (&'static str, &'static str) {
        match self {
            Task::Turn { .. } => (
                "record_memory",
                "Store the observations (and summary) of this turn.",
            ),
            Task::Knowledge => (
                "record_knowledge",
                "Store the project's consolidated knowledge items.",
            ),
        }
    }

    /// Whether the fixed part of the prompt is worth caching: it is sent
    /// again, unchanged, for every project's consolidation.
    pub fn cached(self) -> bool {
        matches!(self, Task::Knowledge)
    }
}

/// An answer as it came: a tool input (already JSON) or text that should
/// hold JSON.
#[derive(Debug)]
pub(crate) enum Answer {
    Json(Value),
    Text(String),
}

/// An API key that never prints.
#[derive(Clone, Default)]
pub(crate) struct Secret(String);

impl Secret {
    pub fn new(key: String) -> Secret {
        Secret(key)
    }

    pub fn expose(&self) -> &str {
        &self.0
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// `text` with the key (if it appears) replaced by `***`.
    pub fn mask(&self, text: &str) -> String {
        if self.0.len() >= 4 && text.contains(&self.0) {
            text.replace(&self.0, "***")
        } else {
            text.to_owned()
        }
    }
}

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.0.is_empty() { "(none)" } else { "***" })
    }
}

/// The API key from the configuration, else from `env_var`.
pub(crate) fn resolve_key(configured: &str, env_var: &str) -> Secret {
    let key = if configured.trim().is_empty() {
        std::env::var(env_var).unwrap_or_default()
    } else {
        configured.to_owned()
    };
    Secret::new(key.trim().to_owned())
}

/// Longest `retry-after` we wait for; a server asking for more is not
/// retried (the batch falls back to offline instead of holding the worker).
const MAX_RETRY_WAIT: Duration = Duration::from_secs(10);
/// Wait before the retry when the server does not say.
const DEFAULT_RETRY_WAIT: Duration = Duration::from_millis(500);
/// How much of an error body travels in error messages.
const EXCERPT: usize = 200;

/// An HTTP client for one provider.
#[derive(Debug, Clone)]
pub(crate) struct Http {
    pub client: reqwest::Client,
    pub key: Secret,
    pub provider: &'static str,
    pub model: String,
    pub timeout: Duration,
}

/// A failed POST.
#[derive(Debug)]
pub(crate) struct HttpFailure {
    pub status: Option<u16>,
    pub message: String,
    /// The error body, for callers that look into it (OpenAI's
    /// `response_format` rejection).
    pub body: String,
}

/// Builds the shared client: rustls on ring, a timeout per request.
pub(crate) fn client(timeout: Duration) -> Result<reqwest::Client, String> {
    // Fails only when a provider is already installed, which is what we want.
    let _ = rustls::crypto::ring::default_provider().install_default();
    reqwest::Client::builder()
        .timeout(timeout)
        .connect_timeout(timeout.min(Duration::from_secs(10)))
        .user_agent(concat!("mnemo/", env!("CARGO_PKG_VERSION")))
        .build()
        .map_err(|e| format!("cannot build the HTTP client: {e}"))
}

impl Http {
    /// POSTs `body` to `url`, retrying once after a 429, a 5xx or a failed
    /// connection (honouring `retry-after` up to [`MAX_RETRY_WAIT`]). Every
    /// attempt lands in `calls`; `usage` reads (input, output) tokens from a
    /// successful answer.
    pub async fn post(
        &self,
        url: &str,
        headers: &[(&str, &str)],
        body: &Value,
        purpose: &str,
        usage: fn(&Value) -> (u64, u64),
        calls: &mut Vec<LlmCall>,
    ) -> Result<Value, HttpFailure> {
        let mut attempt = 0;
        loop {
            attempt += 1;
            let started = Instant::now();
            let result = self.once(url, headers, body).await;
            let mut call = LlmCall {
                provider: self.provider.to_owned(),
                model: self.model.clone(),
                purpose: purpose.to_owned(),
                duration_ms: started.elapsed().as_millis() as u64,
                ..Default::default()
            };
            match result {
                Ok(value) => {
                    let (input, output) = usage(&value);
                    call.input_tokens = input;
                    call.output_tokens = output;
                    call.ok = true;
                    calls.push(call);
                    return Ok(value);
                }
                Err((failure, retry_after)) => {
                    call.error = Some(failure.message.clone());
                    calls.push(call);
                    let retryable = match failure.status {
                        Some(s) => s == 429 || s >= 500,
                        None => failure.message.starts_with("cannot connect"),
                    };
                    let wait = retry_after.unwrap_or(DEFAULT_RETRY_WAIT);
                    if attempt >= 2 || !retryable || wait > MAX_RETRY_WAIT {
                        return Err(failure);
                    }
                    tracing::debug!(
                        provider = self.provider,
                        status = ?failure.status,
                        wait_ms = wait.as_millis() as u64,
                        "retrying the LLM call once"
                    );
                    tokio::time::sleep(wait).await;
                }
            }
        }
    }

    async fn once(
        &self,
        url: &str,
        headers: &[(&str, &str)],
        body: &Value,
    ) -> Result<Value, (HttpFailure, Option<Duration>)> {
        let mut request = self.client.post(url).json(body);
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        let response = request.send().await.map_err(|e| {
            let message = if e.is_timeout() {
                format!("timed out after {}s", self.timeout.as_secs())
            } else if e.is_connect() {
                format!("cannot connect to {}: {}", host_of(url), root_cause(&e))
            } else {
                format!("request failed: {}", root_cause(&e))
            };
            (
                HttpFailure {
                    status: None,
                    message: self.key.mask(&message),
                    body: String::new(),
                },
                None,
            )
        })?;
        let status = response.status();
        let retry_after = retry_after(response.headers());
        let text = match response.text().await {
            Ok(t) => t,
            Err(e) => {
                let message = if e.is_timeout() {
                    format!("timed out after {}s", self.timeout.as_secs())
                } else {
                    format!("reading the answer failed: {}", root_cause(&e))
                };
                return Err((
                    HttpFailure {
                        status: Some(status.as_u16()),
                        message,
                        body: String::new(),
                    },
                    None,
                ));
            }
        };
        if !status.is_success() {
            return Err((
                HttpFailure {
                    status: Some(status.as_u16()),
                    message: self.key.mask(&format!(
                        "HTTP {}: {}",
                        status.as_u16(),
                        error_excerpt(status, &text)
                    )),
                    body: self.key.mask(&text),
                },
                retry_after,
            ));
        }
        serde_json::from_str::<Value>(&text).map_err(|_| {
            (
                HttpFailure {
                    status: Some(status.as_u16()),
                    message: self.key.mask(&format!(
                        "the answer is not JSON: {}",
                        one_line(&text, EXCERPT)
                    )),
                    body: String::new(),
                },
                None,
            )
        })
    }
}

/// The message of a JSON error body (`{"error": {"message": …}}`), else the
/// start of the body.
fn error_excerpt(status: StatusCode, body: &str) -> String {
    let parsed: Option<Value> = serde_json::from_str(body).ok();
    let message = parsed.as_ref().and_then(|v| {
        v.pointer("/error/message")
            .or_else(|| v.get("message"))
            .or_else(|| v.get("error"))
            .and_then(Value::as_str)
            .map(str::to_owned)
    });
    match message {
        Some(m) => one_line(&m, EXCERPT),
        None if body.trim().is_empty() => status.canonical_reason().unwrap_or("").to_owned(),
        None => one_line(body, EXCERPT),
    }
}

/// `retry-after-ms` (milliseconds) or `retry-after` (seconds).
fn retry_after(headers: &reqwest::header::HeaderMap) -> Option<Duration> {
    let read = |name: &str| -> Option<f64> {
        headers.get(name)?.to_str().ok()?.trim().parse::<f64>().ok()
    };
    if let Some(ms) = read("retry-after-ms").filter(|v| v.is_finite() && *v >= 0.0) {
        return Some(Duration::from_millis(ms as u64));
    }
    read("retry-after")
        .filter(|v| v.is_finite() && *v >= 0.0)
        .map(|s| Duration::from_millis((s * 1000.0) as u64))
}

fn host_of(url: &str) -> &str {
    url.split("://")
        .nth(1)
        .and_then(|r| r.split('/').next())
        .unwrap_or(url)
}

/// The innermost cause of an error, which says what actually happened
/// (`Connection refused`) where the outer one only says where.
fn root_cause(e: &dyn std::error::Error) -> String {
    let mut cause: &dyn std::error::Error = e;
    while let Some(next) = cause.source() {
        cause = next;
    }
    one_line(&cause.to_string(), EXCERPT)
}

/// `base` without a trailing slash, or `default` when empty.
pub(crate) fn base_or(base: &str, default: &str) -> String {
    let b = base.trim();
    if b.is_empty() {
        default.to_owned()
    } else {
        b.trim_end_matches('/').to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_never_print() {
        let s = Secret::new("sk-very-secret".into());
        assert_eq!(format!("{s:?}"), "***");
        assert_eq!(s.mask("bad key sk-very-secret!"), "bad key ***!");
    }

    #[test]
    fn error_excerpts_prefer_the_message() {
        let body = r#"{"type":"error","error":{"type":"x","message":"model not found"}}"#;
        assert_eq!(
            error_excerpt(StatusCode::NOT_FOUND, body),
            "model not found"
        );
        assert_eq!(error_excerpt(StatusCode::BAD_GATEWAY, ""), "Bad Gateway");
        assert_eq!(
            error_excerpt(StatusCode::BAD_GATEWAY, "<html>oops</html>"),
            "<html>oops</html>"
        );
    }
}
