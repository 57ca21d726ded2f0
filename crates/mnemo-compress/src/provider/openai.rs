//! OpenAI-compatible chat completions (OpenAI, OpenRouter, Ollama, LM
//! Studio, vLLM): `POST {base}/chat/completions` with a strict
//! `json_schema` response format. Servers that reject the format (HTTP 400
//! naming it) are asked again without it, with the JSON shape in the system
//! prompt, and remembered so later batches skip the doomed first try.

use std::sync::atomic::{AtomicBool, Ordering};

use serde_json::{Value, json};

use super::{Answer, Http, Request};
use crate::LlmCall;

pub(crate) const DEFAULT_BASE: &str = "https://api.openai.com/v1";
pub(crate) const DEFAULT_MODEL: &str = "gpt-4o-mini";

#[derive(Debug)]
pub(crate) struct OpenAi {
    pub http: Http,
    pub base: String,
    pub max_tokens: u64,
    /// The server said no to `response_format: json_schema`.
    pub schema_rejected: AtomicBool,
}

fn usage(v: &Value) -> (u64, u64) {
    let u = |k: &str| {
        v.pointer(&format!("/usage/{k}"))
            .and_then(Value::as_u64)
            .unwrap_or(0)
    };
    (u("prompt_tokens"), u("completion_tokens"))
}

impl OpenAi {
    fn body(&self, req: &Request<'_>, with_schema: bool) -> Value {
        let mut body = json!({
            "model": self.http.model,
            "messages": [
                // The fixed instructions first and alone: a stable prefix
                // that servers with prompt caching reuse.
                {"role": "system", "content": req.task.system(!with_schema)},
                {"role": "user", "content": req.user},
            ],
        });
        // OpenAI's own API wants `max_completion_tokens` (newer models reject
        // `max_tokens`); the compatible servers know `max_tokens`.
        let limit_key = if self.base == DEFAULT_BASE {
            "max_completion_tokens"
        } else {
            "max_tokens"
        };
        body[limit_key] = json!(self.max_tokens);
        if with_schema {
            body["response_format"] = json!({
                "type": "json_schema",
                "json_schema": {
                    "name": req.task.tool().0,
                    "strict": true,
                    "schema": req.task.schema(),
                },
            });
        }
        body
    }

    pub async fn call(
        &self,
        req: &Request<'_>,
        calls: &mut Vec<LlmCall>,
    ) -> Result<Answer, String> {
        let url = format!("{}/chat/completions", self.base);
        let auth = format!("Bearer {}", self.http.key.expose());
        let mut headers: Vec<(&str, &str)> = Vec::new();
        if !self.http.key.is_empty() {
            headers.push(("authorization", &auth));
        }
        let with_schema = !self.schema_rejected.load(Ordering::Relaxed);
        let body = self.body(req, with_schema);
        let answer = match self
            .http
            .post(&url, &headers, &body, req.purpose, usage, calls)
            .await
        {
            Ok(a) => a,
            Err(f) if with_schema && f.status == Some(400) && rejects_format(&f.body) => {
                tracing::info!(
                    "the OpenAI-compatible server rejects json_schema response_format; \
                     asking for plain JSON from now on"
                );
                self.schema_rejected.store(true, Ordering::Relaxed);
                if let Some(last) = calls.last_mut() {
                    last.error = Some(format!(
                        "{} (retrying without response_format)",
                        last.error.as_deref().unwrap_or("rejected")
                    ));
                }
                let body = self.body(req, false);
                self.http
                    .post(&url, &headers, &body, req.purpose, usage, calls)
                    .await
                    .map_err(|f| f.message)?
            }
            Err(f) => return Err(f.message),
        };
        read_completion(&answer)
    }
}

fn rejects_format(body: &str) -> bool {
    let b = body.to_ascii_lowercase();
    b.contains("response_format") || b.contains("json_schema") || b.contains("response format")
}

/// The content of the first choice (or its first tool call's arguments).
fn read_completion(v: &Value) -> Result<Answer, String> {
    let message = v
        .pointer("/choices/0/message")
        .ok_or("the answer has no choices")?;
    if let Some(refusal) = message.get("refusal").and_then(Value::as_str)
        && !refusal.trim().is_empty()
    {
        return Err(format!(
            "the model refused: {}",
            crate::text::one_line(refusal, 160)
        ));
    }
    if let Some(content) = message.get("content").and_then(Value::as_str)
        && !content.trim().is_empty()
    {
        return Ok(Answer::Text(content.to_owned()));
    }
    if let Some(args) = message
        .pointer("/tool_calls/0/function/arguments")
        .and_then(Value::as_str)
    {
        return Ok(Answer::Text(args.to_owned()));
    }
    Err(
        match v
            .pointer("/choices/0/finish_reason")
            .and_then(Value::as_str)
        {
            Some("length") => "the answer was cut at the token limit before any content".into(),
            _ => "the answer is empty".into(),
        },
    )
}

#[cfg(test)]
mod tests {
    use super::super::Task;
    use super::*;
    use std::time::Duration;

    fn provider(base: &str) -> OpenAi {
        OpenAi {
            http: Http {
                client: super::super::client(Duration::from_secs(1)).unwrap(),
                key: super::super::Secret::new(String::new()),
                provider: "openai",
                model: "m".into(),
                timeout: Duration::from_secs(1),
            },
            base: base.into(),
            max_tokens: 99,
            schema_rejected: AtomicBool::new(false),
        }
    }

    #[test]
    fn token_limit_key_follows_the_server() {
        let req = Request {
            user: "u",
            task: Task::Turn { complete: false },
            purpose: "batch",
        };
        let own = provider(DEFAULT_BASE).body(&req, true);
        assert_eq!(own["max_completion_tokens"], 99);
        assert!(own.get("max_tokens").is_none());
        let local = provider("http://localhost:11434/v1").body(&req, false);
        assert_eq!(local["max_tokens"], 99);
        assert!(local.get("response_format").is_none());
        assert!(
            local["messages"][0]["content"]
                .as_str()
                .unwrap()
                .contains("{\"observations\"")
        );
    }

    #[test]
    fn completions_are_read_tolerantly() {
        let v = serde_json::json!({"choices": [{"message": {"content": null, "refusal": "no"}}]});
        assert!(read_completion(&v).unwrap_err().contains("refused"));
        let v = serde_json::json!({"choices": [{"message": {"content": null, "tool_calls": [
            {"function": {"arguments": "{\"observations\": []}"}}]}}]});
        assert!(matches!(read_completion(&v), Ok(Answer::Text(_))));
        let v = serde_json::json!({"choices": [{"message": {"content": ""}, "finish_reason": "length"}]});
        assert!(read_completion(&v).unwrap_err().contains("token limit"));
        assert!(read_completion(&serde_json::json!({})).is_err());
    }
}
