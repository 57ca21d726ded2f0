//! What the stand-in received: one [`RecordedRequest`] per HTTP request, with
//! the accessors tests (and the script) use to look inside LLM request bodies.

use std::collections::BTreeMap;

use serde_json::Value;

/// One HTTP request as the stand-in received it, whatever its route.
#[derive(Debug, Clone, PartialEq)]
pub struct RecordedRequest {
    /// HTTP method, upper case (`POST`, `HEAD`, ...).
    pub method: String,
    /// Path with the query string, e.g. `/v1/messages?beta=true`.
    pub path: String,
    /// Headers by lower-case name; repeated headers are joined with `", "`.
    pub headers: BTreeMap<String, String>,
    /// The body as received (lossily decoded as UTF-8).
    pub body: String,
    /// The body parsed as JSON, if it is JSON.
    pub json: Option<Value>,
}

impl RecordedRequest {
    /// The value of a header, looked up case-insensitively.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .get(&name.to_ascii_lowercase())
            .map(String::as_str)
    }

    /// The path without its query string, e.g. `/v1/messages`.
    pub fn route(&self) -> &str {
        self.path.split('?').next().unwrap_or(&self.path)
    }

    /// The body size in bytes.
    pub fn body_len(&self) -> usize {
        self.body.len()
    }

    /// `true` if the raw body contains `needle` (handy for "did the memory
    /// reach the model" assertions).
    pub fn body_contains(&self, needle: &str) -> bool {
        self.body.contains(needle)
    }

    /// The `model` field of the body, if any.
    pub fn model(&self) -> Option<&str> {
        self.json.as_ref()?.get("model")?.as_str()
    }

    /// `true` if the body asks for a streamed answer (`"stream": true`).
    pub fn is_stream(&self) -> bool {
        self.json
            .as_ref()
            .and_then(|j| j.get("stream"))
            .and_then(Value::as_bool)
            .unwrap_or(false)
    }

    /// The `messages` array of the body (empty if there is none).
    pub fn messages(&self) -> &[Value] {
        self.json
            .as_ref()
            .and_then(|j| j.get("messages"))
            .and_then(Value::as_array)
            .map(Vec::as_slice)
            .unwrap_or(&[])
    }

    /// The `input` array of a Responses request (empty if there is none).
    pub fn input_items(&self) -> &[Value] {
        self.json
            .as_ref()
            .and_then(|j| j.get("input"))
            .and_then(Value::as_array)
            .map(Vec::as_slice)
            .unwrap_or(&[])
    }

    /// Names of the tools offered in the `tools` array (Anthropic `name` or
    /// OpenAI `function.name`).
    pub fn tool_names(&self) -> Vec<String> {
        let Some(tools) = self
            .json
            .as_ref()
            .and_then(|j| j.get("tools"))
            .and_then(Value::as_array)
        else {
            return Vec::new();
        };
        tools
            .iter()
            .filter_map(|t| {
                t.get("name")
                    .or_else(|| t.get("function").and_then(|f| f.get("name")))
                    .and_then(Value::as_str)
                    .map(str::to_owned)
            })
            .collect()
    }

    /// The system prompt as one string: Anthropic `system` (a string or text
    /// blocks joined by newlines), Gemini `systemInstruction` or the OpenAI
    /// `system` messages.
    pub fn system_text(&self) -> String {
        let Some(json) = self.json.as_ref() else {
            return String::new();
        };
        if let Some(parts) = json
            .get("systemInstruction")
            .and_then(|s| s.get("parts"))
            .and_then(Value::as_array)
        {
            return parts
                .iter()
                .filter_map(|p| p.get("text").and_then(Value::as_str))
                .collect::<Vec<_>>()
                .join("\n");
        }
        match json.get("system") {
            Some(Value::String(s)) => s.clone(),
            Some(Value::Array(blocks)) => blocks
                .iter()
                .filter_map(|b| b.get("text").and_then(Value::as_str))
                .collect::<Vec<_>>()
                .join("\n"),
            _ => self
                .messages()
                .iter()
                .filter(|m| m.get("role").and_then(Value::as_str) == Some("system"))
                .map(content_text)
                .collect::<Vec<_>>()
                .join("\n"),
        }
    }

    /// The tool results the conversation carries: Anthropic `tool_result`
    /// content blocks, OpenAI `role: "tool"` messages and Responses
    /// `function_call_output` / `custom_tool_call_output` input items, in order.
    pub fn tool_results(&self) -> Vec<&Value> {
        let mut out: Vec<&Value> = self
            .input_items()
            .iter()
            .filter(|i| {
                matches!(
                    i.get("type").and_then(Value::as_str),
                    Some("function_call_output" | "custom_tool_call_output")
                )
            })
            .collect();
        let gemini_contents = self
            .json
            .as_ref()
            .and_then(|j| j.get("contents"))
            .and_then(Value::as_array)
            .map(Vec::as_slice)
            .unwrap_or(&[]);
        for content in gemini_contents {
            if let Some(parts) = content.get("parts").and_then(Value::as_array) {
                out.extend(parts.iter().filter(|p| p.get("functionResponse").is_some()));
            }
        }
        for message in self.messages() {
            if message.get("role").and_then(Value::as_str) == Some("tool") {
                out.push(message);
                continue;
            }
            if let Some(blocks) = message.get("content").and_then(Value::as_array) {
                out.extend(
                    blocks
                        .iter()
                        .filter(|b| b.get("type").and_then(Value::as_str) == Some("tool_result")),
                );
            }
        }
        out
    }

    /// How many tool results the conversation carries (see [`Self::tool_results`]);
    /// this is what picks the script step.
    pub fn tool_result_count(&self) -> usize {
        self.tool_results().len()
    }

    /// The text of every tool result, in order (string content, or the text
    /// blocks of array content joined by newlines).
    pub fn tool_result_texts(&self) -> Vec<String> {
        self.tool_results().into_iter().map(content_text).collect()
    }

    /// `true` if this is not a turn of the main conversation that a script
    /// drives, and so must not consume a step.
    ///
    /// What Claude Code 2.1.328 was seen to send (`-p`, fake HOME, against
    /// this stand-in):
    /// - With `CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1` (as [`ClaudeRun`]
    ///   sets it): only `POST /v1/messages?beta=true`, streamed, with 12
    ///   tools, one per turn. No title/summary request, no quota probe, no
    ///   `count_tokens`.
    /// - Without it: the same plus one `HEAD /api/hello` (a connectivity
    ///   check; a 404 does not bother it).
    /// - An `Agent` tool call makes the subagent send its own streamed
    ///   requests with 10 tools, a system prompt whose first block (the
    ///   billing header) ends with `cc_is_subagent=true;`, and an
    ///   `x-claude-code-agent-id` header.
    ///
    /// So a request is a side request if it has no JSON body, no (or an empty)
    /// `tools` array, `max_tokens` of 1 (the quota probe older versions made),
    /// an `x-claude-code-agent-id` header, or `cc_is_subagent=true` in its
    /// system prompt.
    ///
    /// [`ClaudeRun`]: crate::ClaudeRun
    pub fn is_side_request(&self) -> bool {
        let Some(json) = self.json.as_ref() else {
            return true;
        };
        let has_tools = json
            .get("tools")
            .and_then(Value::as_array)
            .is_some_and(|t| !t.is_empty());
        let max_tokens = json.get("max_tokens").and_then(Value::as_u64);
        !has_tools
            || max_tokens == Some(1)
            || self.header("x-claude-code-agent-id").is_some()
            || self.system_text().contains("cc_is_subagent=true")
    }
}

/// The text of a message or tool result: a string `content`, or the `text`
/// of its content blocks joined by newlines.
fn content_text(value: &Value) -> String {
    if let Some(response) = value.get("functionResponse") {
        return response
            .get("response")
            .map(|r| match r.get("output") {
                Some(Value::String(s)) => s.clone(),
                _ => r.to_string(),
            })
            .unwrap_or_default();
    }
    if let Some(Value::String(output)) = value.get("output") {
        return output.clone();
    }
    match value.get("content") {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(blocks)) => blocks
            .iter()
            .filter_map(|b| b.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}
