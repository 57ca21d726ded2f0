//! What the stand-in answers: [`Reply`] (one answer, provider-neutral),
//! [`Block`] (one piece of an assistant message) and [`Step`] (one turn of a
//! scripted Claude Code session), plus the rule that maps a request to its
//! step.

use std::time::Duration;

use serde_json::{Value, json};

use super::request::RecordedRequest;

/// One content block of an assistant message.
#[derive(Debug, Clone, PartialEq)]
pub enum Block {
    /// Plain text.
    Text(String),
    /// A tool call (Anthropic `tool_use`, OpenAI `tool_calls[]`).
    ToolUse {
        /// Tool name, e.g. `Write` or `mcp__mnemo__search`.
        name: String,
        /// Tool input object.
        input: Value,
    },
}

/// One answer of the stand-in, rendered in the wire format of the route that
/// was called (Anthropic Messages or OpenAI chat completions, streamed or
/// not).
#[derive(Debug, Clone, PartialEq)]
pub enum Reply {
    /// An assistant message with one text block; stop reason `end_turn` /
    /// `stop`.
    Text(String),
    /// An assistant message with one tool call (a forced tool call, when the
    /// stand-in plays a provider); stop reason `tool_use` / `tool_calls`. On
    /// the OpenAI route, when the request has `response_format`, the input is
    /// sent as the message content (a JSON string) instead.
    ToolUse {
        /// Tool name.
        name: String,
        /// Tool input object.
        input: Value,
    },
    /// An assistant message with any blocks; stop reason `tool_use` if one of
    /// them is a tool call, else `end_turn`.
    Message(Vec<Block>),
    /// A verbatim HTTP answer, for garbage, 500s, 429s and the like.
    Raw {
        /// HTTP status code.
        status: u16,
        /// `content-type` header.
        content_type: String,
        /// Body, sent as is.
        body: String,
        /// Extra headers, e.g. `("retry-after", "1")`.
        headers: Vec<(String, String)>,
    },
    /// The inner reply, sent after a delay (to test client timeouts).
    Delay(Duration, Box<Reply>),
    /// The inner reply with the reported token usage overridden (`None`
    /// keeps the default: body bytes / 4 in, reply text bytes / 4 out).
    WithUsage {
        /// Reported input tokens.
        input_tokens: Option<u64>,
        /// Reported output tokens.
        output_tokens: Option<u64>,
        /// The reply whose usage is overridden.
        reply: Box<Reply>,
    },
}

impl Reply {
    /// A text answer.
    pub fn text(text: impl Into<String>) -> Self {
        Reply::Text(text.into())
    }

    /// A single tool call.
    pub fn tool_use(name: impl Into<String>, input: Value) -> Self {
        Reply::ToolUse {
            name: name.into(),
            input,
        }
    }

    /// A message made of the given blocks.
    pub fn message(blocks: impl IntoIterator<Item = Block>) -> Self {
        Reply::Message(blocks.into_iter().collect())
    }

    /// A verbatim answer with the given status, content type and body.
    pub fn raw(status: u16, content_type: impl Into<String>, body: impl Into<String>) -> Self {
        Reply::Raw {
            status,
            content_type: content_type.into(),
            body: body.into(),
            headers: Vec::new(),
        }
    }

    /// An error answer with a body both SDK families parse:
    /// `{"type":"error","error":{"type":<kind>,"message":<message>}}`.
    pub fn error(status: u16, kind: &str, message: &str) -> Self {
        let body = json!({"type": "error", "error": {"type": kind, "message": message}});
        Reply::raw(status, "application/json", body.to_string())
    }

    /// `500 api_error`.
    pub fn server_error() -> Self {
        Reply::error(500, "api_error", "stand-in: internal server error")
    }

    /// `529 overloaded_error` (Anthropic's "try again later").
    pub fn overloaded() -> Self {
        Reply::error(529, "overloaded_error", "stand-in: overloaded")
    }

    /// `429 rate_limit_error` with a `retry-after` header in whole seconds.
    pub fn rate_limited(retry_after_secs: u64) -> Self {
        Reply::error(429, "rate_limit_error", "stand-in: rate limited")
            .with_header("retry-after", retry_after_secs.to_string())
    }

    /// `200 application/json` whose body is not JSON.
    pub fn malformed_json() -> Self {
        Reply::raw(200, "application/json", "{\"this is\": not json")
    }

    /// Adds a header to a [`Reply::Raw`] (through any wrappers); other replies
    /// are returned unchanged.
    pub fn with_header(self, name: impl Into<String>, value: impl Into<String>) -> Self {
        match self {
            Reply::Raw {
                status,
                content_type,
                body,
                mut headers,
            } => {
                headers.push((name.into(), value.into()));
                Reply::Raw {
                    status,
                    content_type,
                    body,
                    headers,
                }
            }
            Reply::Delay(d, inner) => Reply::Delay(d, Box::new(inner.with_header(name, value))),
            Reply::WithUsage {
                input_tokens,
                output_tokens,
                reply,
            } => Reply::WithUsage {
                input_tokens,
                output_tokens,
                reply: Box::new(reply.with_header(name, value)),
            },
            other => other,
        }
    }

    /// This reply, sent after `delay`.
    pub fn delayed(self, delay: Duration) -> Self {
        Reply::Delay(delay, Box::new(self))
    }

    /// This reply, reporting the given token usage instead of the computed one.
    pub fn with_usage(self, input_tokens: u64, output_tokens: u64) -> Self {
        Reply::WithUsage {
            input_tokens: Some(input_tokens),
            output_tokens: Some(output_tokens),
            reply: Box::new(self),
        }
    }

    /// This reply, reporting `input_tokens` instead of body bytes / 4.
    pub fn with_input_tokens(self, input_tokens: u64) -> Self {
        Reply::WithUsage {
            input_tokens: Some(input_tokens),
            output_tokens: None,
            reply: Box::new(self),
        }
    }
}

/// One turn of a scripted Claude Code session: what the model "says" in
/// answer to one request of the main conversation.
///
/// A script picks the step by the number of tool results the request's
/// conversation carries, which a retried request does not change: step `i`
/// answers the request carrying as many tool results as steps `0..i` made
/// tool calls (with one call per step: the N-th step answers the request
/// with N tool results). After the last step the script answers with its
/// final text and `end_turn`. A [`Step::Text`] ends the turn, so it belongs
/// last. A new session starts with no tool results and so replays the script
/// from the start. Side requests (see
/// [`RecordedRequest::is_side_request`]) never use a step.
#[derive(Debug, Clone, PartialEq)]
pub enum Step {
    /// Call one tool.
    Tool {
        /// Tool name, e.g. `Write`, `Bash`, `mcp__mnemo__search`.
        name: String,
        /// Tool input object.
        input: Value,
    },
    /// Call several tools in one message (Claude Code runs them all and
    /// answers with one `tool_result` each).
    Tools(Vec<(String, Value)>),
    /// Answer with text and end the turn.
    Text(String),
    /// Say `text` first, then do `step`.
    WithText {
        /// The leading text block.
        text: String,
        /// What follows it.
        step: Box<Step>,
    },
}

impl Step {
    /// Call one tool.
    pub fn tool(name: impl Into<String>, input: Value) -> Self {
        Step::Tool {
            name: name.into(),
            input,
        }
    }

    /// Call several tools in one message.
    pub fn tools<N: Into<String>>(calls: impl IntoIterator<Item = (N, Value)>) -> Self {
        Step::Tools(calls.into_iter().map(|(n, i)| (n.into(), i)).collect())
    }

    /// Answer with text and end the turn.
    pub fn text(text: impl Into<String>) -> Self {
        Step::Text(text.into())
    }

    /// Claude Code's `Write` tool: create or overwrite `file_path` (absolute).
    pub fn write(file_path: impl AsRef<std::path::Path>, content: &str) -> Self {
        Step::tool(
            "Write",
            json!({"file_path": file_path.as_ref().to_string_lossy(), "content": content}),
        )
    }

    /// Claude Code's `Bash` tool: run `command`.
    pub fn bash(command: &str) -> Self {
        Step::tool("Bash", json!({"command": command}))
    }

    /// Claude Code's `Read` tool: read `file_path` (absolute).
    pub fn read(file_path: impl AsRef<std::path::Path>) -> Self {
        Step::tool(
            "Read",
            json!({"file_path": file_path.as_ref().to_string_lossy()}),
        )
    }

    /// This step preceded by a text block.
    pub fn with_text(self, text: impl Into<String>) -> Self {
        Step::WithText {
            text: text.into(),
            step: Box::new(self),
        }
    }

    /// How many tool calls this step makes (and so how many tool results the
    /// following request carries).
    pub fn tool_count(&self) -> usize {
        match self {
            Step::Tool { .. } => 1,
            Step::Tools(calls) => calls.len(),
            Step::Text(_) => 0,
            Step::WithText { step, .. } => step.tool_count(),
        }
    }

    /// The content blocks of this step's message.
    pub fn blocks(&self) -> Vec<Block> {
        match self {
            Step::Tool { name, input } => vec![Block::ToolUse {
                name: name.clone(),
                input: input.clone(),
            }],
            Step::Tools(calls) => calls
                .iter()
                .map(|(name, input)| Block::ToolUse {
                    name: name.clone(),
                    input: input.clone(),
                })
                .collect(),
            Step::Text(text) => vec![Block::Text(text.clone())],
            Step::WithText { text, step } => {
                let mut blocks = vec![Block::Text(text.clone())];
                blocks.extend(step.blocks());
                blocks
            }
        }
    }
}

/// A scripted session: the steps, the final text after the last one and the
/// answer to side requests.
#[derive(Debug, Clone)]
pub(crate) struct Script {
    pub steps: Vec<Step>,
    pub final_text: String,
    pub side_text: String,
}

impl Script {
    /// The reply to `request`.
    ///
    /// Side requests (see [`RecordedRequest::is_side_request`]) get
    /// `side_text`. Otherwise the step is chosen by the number of tool results
    /// in the conversation, which a retried request does not change: step `i`
    /// answers the request that carries as many tool results as steps
    /// `0..i` made tool calls (for single-tool steps: the N-th step answers
    /// the request with N tool results). After the last step: `final_text`.
    /// A `Text` step ends the turn, so it belongs last: steps after it are
    /// never reached. A new session starts with no tool results and so
    /// replays the script from its first step.
    pub fn reply_to(&self, request: &RecordedRequest) -> Reply {
        if request.is_side_request() {
            return Reply::Text(self.side_text.clone());
        }
        let seen = request.tool_result_count();
        let mut made = 0;
        for step in &self.steps {
            if seen <= made {
                return Reply::Message(step.blocks());
            }
            made += step.tool_count();
        }
        Reply::Text(self.final_text.clone())
    }
}
