//! The OpenAI-compatible chat-completions wire format of an answer: a
//! `chat.completion` object, or `data: {chunk}` lines ending with
//! `data: [DONE]`.

use serde_json::{Value, json};

use super::anthropic::split_in_two;
use super::{OutBlock, Outgoing};
use crate::RecordedRequest;

/// How the message is sent back: its text content, its tool calls, and the
/// finish reason.
struct Shape<'a> {
    content: Option<String>,
    tool_calls: Vec<(&'a str, &'a str, String)>,
    finish_reason: &'static str,
}

/// Text blocks become `content`; tool calls become `tool_calls` with the
/// input as a JSON string, unless the request asked for `response_format`,
/// in which case the first tool input is sent as the content instead (that is
/// how a structured answer arrives there).
fn shape<'a>(message: &'a Outgoing, request: &RecordedRequest) -> Shape<'a> {
    let wants_format = request
        .json
        .as_ref()
        .is_some_and(|j| j.get("response_format").is_some_and(|f| !f.is_null()));
    let text: Vec<&str> = message
        .blocks
        .iter()
        .filter_map(|b| match b {
            OutBlock::Text(t) => Some(t.as_str()),
            OutBlock::ToolUse { .. } => None,
        })
        .collect();
    let calls: Vec<(&str, &str, String)> = message
        .blocks
        .iter()
        .filter_map(|b| match b {
            OutBlock::ToolUse { id, name, input } => {
                Some((id.as_str(), name.as_str(), input.to_string()))
            }
            OutBlock::Text(_) => None,
        })
        .collect();
    if wants_format && let Some((_, _, arguments)) = calls.first() {
        return Shape {
            content: Some(arguments.clone()),
            tool_calls: Vec::new(),
            finish_reason: "stop",
        };
    }
    Shape {
        content: (!text.is_empty() || calls.is_empty()).then(|| text.concat()),
        finish_reason: if calls.is_empty() {
            "stop"
        } else {
            "tool_calls"
        },
        tool_calls: calls,
    }
}

fn usage(message: &Outgoing) -> Value {
    json!({
        "prompt_tokens": message.input_tokens,
        "completion_tokens": message.output_tokens,
        "total_tokens": message.input_tokens + message.output_tokens,
    })
}

/// The non-streamed answer: one `chat.completion` object.
pub(super) fn completion_json(message: &Outgoing, request: &RecordedRequest) -> Value {
    let shape = shape(message, request);
    let mut reply = json!({"role": "assistant", "content": shape.content});
    if !shape.tool_calls.is_empty() {
        reply["tool_calls"] = shape
            .tool_calls
            .iter()
            .map(|(id, name, arguments)| {
                json!({"id": id, "type": "function",
                       "function": {"name": name, "arguments": arguments}})
            })
            .collect();
    }
    json!({
        "id": message.id,
        "object": "chat.completion",
        "created": message.created,
        "model": message.model,
        "choices": [{"index": 0, "message": reply, "logprobs": null,
                     "finish_reason": shape.finish_reason}],
        "usage": usage(message),
    })
}

/// The streamed answer: a role chunk, content chunks, tool-call chunks (name
/// first, then the arguments in pieces), a chunk with the finish reason, a
/// usage chunk (`choices: []`) if `stream_options.include_usage` is set, and
/// `data: [DONE]`.
pub(super) fn completion_sse(message: &Outgoing, request: &RecordedRequest) -> String {
    let shape = shape(message, request);
    let include_usage = request
        .json
        .as_ref()
        .and_then(|j| j.pointer("/stream_options/include_usage"))
        .and_then(Value::as_bool)
        .unwrap_or(false);
    let mut out = String::new();
    let mut chunk = |choices: Value, usage: Option<Value>| {
        let mut data = json!({
            "id": message.id,
            "object": "chat.completion.chunk",
            "created": message.created,
            "model": message.model,
            "choices": choices,
        });
        if let Some(usage) = usage {
            data["usage"] = usage;
        }
        out.push_str("data: ");
        out.push_str(&data.to_string());
        out.push_str("\n\n");
    };
    let delta = |delta: Value| json!([{"index": 0, "delta": delta, "finish_reason": null}]);
    chunk(delta(json!({"role": "assistant", "content": ""})), None);
    if let Some(content) = &shape.content {
        for piece in split_in_two(content) {
            chunk(delta(json!({"content": piece})), None);
        }
    }
    for (index, (id, name, arguments)) in shape.tool_calls.iter().enumerate() {
        chunk(
            delta(
                json!({"tool_calls": [{"index": index, "id": id, "type": "function",
                                          "function": {"name": name, "arguments": ""}}]}),
            ),
            None,
        );
        for piece in split_in_two(arguments) {
            chunk(
                delta(json!({"tool_calls": [{"index": index,
                                              "function": {"arguments": piece}}]})),
                None,
            );
        }
    }
    chunk(
        json!([{"index": 0, "delta": {}, "finish_reason": shape.finish_reason}]),
        None,
    );
    if include_usage {
        chunk(json!([]), Some(usage(message)));
    }
    out.push_str("data: [DONE]\n\n");
    out
}
