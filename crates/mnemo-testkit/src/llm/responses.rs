//! The OpenAI Responses wire format of an answer, as Codex CLI 0.169 reads
//! it: server-sent events `response.created`, per output item
//! `response.output_item.added` / `.done`, then `response.completed` with the
//! usage (the framing of `shared/fixtures/platforms/openai-responses.stream.function_call.sse`).
//!
//! Scripts are written with Claude Code's tool names; here they become the
//! tools Codex offers its model: `Bash {command}` is `exec_command {cmd}` (a
//! function call) and `Write {file_path, content}` is an `apply_patch`
//! custom tool call that adds the file; `apply_patch {patch}` is that
//! custom tool call with the patch as written. Other names pass through as
//! function calls with their input as arguments.

use serde_json::{Value, json};

use super::{OutBlock, Outgoing};

/// One output item of the response.
fn item(block: &OutBlock, index: usize) -> Value {
    match block {
        OutBlock::Text(text) => json!({
            "type": "message",
            "id": format!("msg_standin_{index}"),
            "role": "assistant",
            "status": "completed",
            "content": [{"type": "output_text", "text": text, "annotations": []}],
        }),
        OutBlock::ToolUse { id, name, input } => match name.as_str() {
            "Bash" => json!({
                "type": "function_call",
                "id": format!("fc_{id}"),
                "call_id": id,
                "name": "exec_command",
                "arguments": json!({"cmd": input["command"]}).to_string(),
                "status": "completed",
            }),
            "Write" => json!({
                "type": "custom_tool_call",
                "id": format!("ctc_{id}"),
                "call_id": id,
                "name": "apply_patch",
                "input": add_file_patch(
                    input["file_path"].as_str().unwrap_or_default(),
                    input["content"].as_str().unwrap_or_default(),
                ),
                "status": "completed",
            }),
            // A patch as Codex writes it (`*** Begin Patch` … of any
            // number of files), in `input.patch`.
            "apply_patch" => json!({
                "type": "custom_tool_call",
                "id": format!("ctc_{id}"),
                "call_id": id,
                "name": "apply_patch",
                "input": input["patch"].as_str().unwrap_or_default(),
                "status": "completed",
            }),
            _ => json!({
                "type": "function_call",
                "id": format!("fc_{id}"),
                "call_id": id,
                "name": name,
                "arguments": input.to_string(),
                "status": "completed",
            }),
        },
    }
}

/// The patch that creates `path` with `content`.
pub fn add_file_patch(path: &str, content: &str) -> String {
    let mut patch = format!("*** Begin Patch\n*** Add File: {path}\n");
    for line in content.lines() {
        patch.push('+');
        patch.push_str(line);
        patch.push('\n');
    }
    patch.push_str("*** End Patch\n");
    patch
}

/// The streamed answer.
pub(super) fn response_sse(message: &Outgoing) -> String {
    let mut out = String::new();
    let mut event = |data: Value| {
        out.push_str("event: ");
        out.push_str(data["type"].as_str().unwrap_or_default());
        out.push_str("\ndata: ");
        out.push_str(&data.to_string());
        out.push_str("\n\n");
    };
    let response = |status: &str| {
        json!({"id": message.id, "object": "response", "created_at": message.created,
               "model": message.model, "status": status, "output": []})
    };
    event(json!({"type": "response.created", "response": response("in_progress")}));
    for (index, block) in message.blocks.iter().enumerate() {
        let done = item(block, index);
        let mut added = done.clone();
        added["status"] = json!("in_progress");
        event(json!({"type": "response.output_item.added", "output_index": index, "item": added}));
        event(json!({"type": "response.output_item.done", "output_index": index, "item": done}));
    }
    let mut completed = response("completed");
    completed["usage"] = json!({
        "input_tokens": message.input_tokens,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": message.output_tokens,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": message.input_tokens + message.output_tokens,
    });
    event(json!({"type": "response.completed", "response": completed}));
    out
}
