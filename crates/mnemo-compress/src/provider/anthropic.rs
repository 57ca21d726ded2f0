//! The Anthropic Messages API: `POST {base}/v1/messages`, with the answer
//! forced through a tool call (`record_memory`) whose input schema is the
//! answer's schema, so the model cannot answer in prose.

use serde_json::{Value, json};

use super::{Answer, Http, Request};
use crate::LlmCall;

pub(crate) const DEFAULT_BASE: &str = "https://api.anthropic.com";
pub(crate) const DEFAULT_MODEL: &str = "claude-haiku-4-5";
const VERSION: &str = "2023-06-01";

#[derive(Debug)]
pub(crate) struct Anthropic {
    pub http: Http,
    pub base: String,
    pub max_tokens: u64,
}

fn usage(v: &Value) -> (u64, u64) {
    let u = |k: &str| {
        v.pointer(&format!("/usage/{k}"))
            .and_then(Value::as_u64)
            .unwrap_or(0)
    };
    (
        u("input_tokens") + u("cache_creation_input_tokens") + u("cache_read_input_tokens"),
        u("output_tokens"),
    )
}

impl Anthropic {
    pub async fn call(
        &self,
        req: &Request<'_>,
        calls: &mut Vec<LlmCall>,
    ) -> Result<Answer, String> {
        let body = body(&self.http.model, self.max_tokens, req);
        let url = format!("{}/v1/messages", self.base);
        let mut headers = vec![("anthropic-version", VERSION)];
        if !self.http.key.is_empty() {
            headers.push(("x-api-key", self.http.key.expose()));
        }
        let answer = self
            .http
            .post(&url, &headers, &body, req.purpose, usage, calls)
            .await
            .map_err(|f| f.message)?;
        read_message(&answer)
    }
}

/// The Messages request: the answer forced through the task's tool; a
/// fixed system prompt worth caching is marked with `cache_control` (the
/// tools and the system prompt come before the messages, so they form the
/// cached prefix).
fn body(model: &str, max_tokens: u64, req: &Request<'_>) -> Value {
    let (tool, description) = req.task.tool();
    let text = req.task.system(false);
    let system = if req.task.cached() {
        json!([{"type": "text", "text": text, "cache_control": {"type": "ephemeral"}}])
    } else {
        json!(text)
    };
    json!({
        "model": model,
        "max_tokens": max_tokens,
        "system": system,
        "messages": [{"role": "user", "content": req.user}],
        "tools": [{
            "name": tool,
            "description": description,
            "input_schema": req.task.schema(),
        }],
        "tool_choice": {"type": "tool", "name": tool},
    })
}

/// The tool input of a Messages answer, else its text.
pub(crate) fn read_message(message: &Value) -> Result<Answer, String> {
    let stop = message.get("stop_reason").and_then(Value::as_str);
    if stop == Some("refusal") {
        return Err("the model refused to answer".into());
    }
    let blocks = message
        .get("content")
        .and_then(Value::as_array)
        .ok_or("the answer has no content")?;
    if let Some(input) = blocks
        .iter()
        .filter(|b| b.get("type").and_then(Value::as_str) == Some("tool_use"))
        .find_map(|b| b.get("input"))
    {
        return Ok(Answer::Json(input.clone()));
    }
    let text: String = blocks
        .iter()
        .filter_map(|b| b.get("text").and_then(Value::as_str))
        .collect::<Vec<_>>()
        .join("\n");
    if text.trim().is_empty() {
        return Err(match stop {
            Some("max_tokens") => "the answer was cut at max_tokens before any content".into(),
            _ => "the answer is empty".into(),
        });
    }
    Ok(Answer::Text(text))
}
