//! The Anthropic Messages wire format of an answer: a JSON `message`, or the
//! server-sent events Claude Code 2.1.328 accepted (the framing of
//! `shared/fixtures/platforms/anthropic-messages.stream.*.sse`).

use serde_json::{Value, json};

use super::{OutBlock, Outgoing};

/// `tool_use` if the message calls a tool, else `end_turn`.
pub(super) fn stop_reason(message: &Outgoing) -> &'static str {
    if message.has_tool_use() {
        "tool_use"
    } else {
        "end_turn"
    }
}

/// The non-streamed answer: one `message` object.
pub(super) fn message_json(message: &Outgoing) -> Value {
    let content: Vec<Value> = message
        .blocks
        .iter()
        .map(|block| match block {
            OutBlock::Text(text) => json!({"type": "text", "text": text}),
            OutBlock::ToolUse { id, name, input } => {
                json!({"type": "tool_use", "id": id, "name": name, "input": input})
            }
        })
        .collect();
    json!({
        "id": message.id,
        "type": "message",
        "role": "assistant",
        "model": message.model,
        "content": content,
        "stop_reason": stop_reason(message),
        "stop_sequence": null,
        "usage": {
            "input_tokens": message.input_tokens,
            "output_tokens": message.output_tokens,
        },
    })
}

/// The streamed answer: `message_start`, a `ping`, per block
/// `content_block_start` / `content_block_delta` (text split into up to two
/// `text_delta`s, tool input as `partial_json` in two or more
/// `input_json_delta`s) / `content_block_stop`, then `message_delta` with the
/// stop reason and usage, and `message_stop`.
pub(super) fn message_sse(message: &Outgoing) -> String {
    let mut out = String::new();
    let mut event = |name: &str, data: Value| {
        out.push_str("event: ");
        out.push_str(name);
        out.push_str("\ndata: ");
        out.push_str(&data.to_string());
        out.push_str("\n\n");
    };
    event(
        "message_start",
        json!({"type": "message_start", "message": {
            "id": message.id,
            "type": "message",
            "role": "assistant",
            "model": message.model,
            "content": [],
            "stop_reason": null,
            "stop_sequence": null,
            "usage": {"input_tokens": message.input_tokens, "output_tokens": 1},
        }}),
    );
    event("ping", json!({"type": "ping"}));
    for (index, block) in message.blocks.iter().enumerate() {
        match block {
            OutBlock::Text(text) => {
                event(
                    "content_block_start",
                    json!({"type": "content_block_start", "index": index,
                           "content_block": {"type": "text", "text": ""}}),
                );
                for piece in split_in_two(text) {
                    event(
                        "content_block_delta",
                        json!({"type": "content_block_delta", "index": index,
                               "delta": {"type": "text_delta", "text": piece}}),
                    );
                }
            }
            OutBlock::ToolUse { id, name, input } => {
                event(
                    "content_block_start",
                    json!({"type": "content_block_start", "index": index,
                           "content_block": {"type": "tool_use", "id": id, "name": name, "input": {}}}),
                );
                for piece in split_in_two(&input.to_string()) {
                    event(
                        "content_block_delta",
                        json!({"type": "content_block_delta", "index": index,
                               "delta": {"type": "input_json_delta", "partial_json": piece}}),
                    );
                }
            }
        }
        event(
            "content_block_stop",
            json!({"type": "content_block_stop", "index": index}),
        );
    }
    event(
        "message_delta",
        json!({"type": "message_delta",
               "delta": {"stop_reason": stop_reason(message), "stop_sequence": null},
               "usage": {"output_tokens": message.output_tokens}}),
    );
    event("message_stop", json!({"type": "message_stop"}));
    out
}

/// `text` cut in two at a character boundary near its middle (one piece if it
/// is a single character, none if empty), so that clients must reassemble.
pub(super) fn split_in_two(text: &str) -> Vec<&str> {
    if text.is_empty() {
        return Vec::new();
    }
    let mut mid = text.len() / 2;
    while !text.is_char_boundary(mid) {
        mid += 1;
    }
    if mid == 0 || mid == text.len() {
        return vec![text];
    }
    vec![&text[..mid], &text[mid..]]
}
