//! OpenCode: what mnemo's OpenCode plugin sends, and what it reads back.
//!
//! OpenCode has no hook commands; its plugins are JS modules that get
//! callbacks. mnemo's plugin (written by `mnemo install --platform opencode`)
//! forwards each callback as one JSON object on the stdin of
//! `mnemo hook opencode`, named after the OpenCode hook it came from:
//!
//! | `hook_event_name` | from OpenCode | fields |
//! |---|---|---|
//! | `session.start` | first `experimental.chat.system.transform` of a session | |
//! | `chat.message` | `chat.message` | `message_id`, `prompt` |
//! | `message.part` | the assistant's text and reasoning parts (`message.part.updated`), sent when a tool call starts | `text`, `reasoning` |
//! | `tool.execute.after` | `tool.execute.after` | `tool`, `call_id`, `args`, `title`, `output`, `error?` |
//! | `session.idle` | event `session.idle` | `last_assistant_message?` (the assistant's text parts after the turn's last tool call, from `message.part.updated`) |
//! | `session.deleted` | event `session.deleted` | |
//!
//! with `session_id`, `directory` (the project) and `opencode_version` on
//! every one. Tool names (`bash`, `edit`, `write`, ...) and arguments
//! (`filePath`, `oldString`, ...) are mapped to mnemo's vocabulary here.
//! The plugin adds what `session.start` answers (`additional_context`) to
//! the system prompt; every other event is answered with `{}`.

use mnemo_core::host::host;
use mnemo_core::model::Platform;
use serde_json::{Map, Value, json};

use super::{
    Adapter, Env, event_name, lenient_string, parse_salvaged_with, salvaged_payload, tool_input,
    tool_name,
};
use crate::event::{HookEvent, HookInput, HookResponse, ToolCall};

pub const ADAPTER: Adapter = Adapter {
    platform: Platform::OpenCode,
    parse,
    parse_salvaged,
    render,
};

/// Parses a payload from mnemo's OpenCode plugin.
pub fn parse(payload: &Value, event_arg: Option<&str>, env: &Env) -> HookInput {
    let field = |k: &str| lenient_string(payload.get(k));
    let event_name = event_name(payload, event_arg);
    let event = match event_name.as_str() {
        "session.start" | "session.created" => HookEvent::SessionStart {
            source: field("source"),
        },
        "chat.message" => HookEvent::UserPrompt {
            prompt_id: field("message_id"),
            prompt: field("prompt").unwrap_or_default(),
        },
        "tool.execute.before" => HookEvent::PreToolUse(tool_call(payload)),
        "message.part" => HookEvent::AgentText {
            text: field("text").unwrap_or_default(),
            thought: super::flag(payload, "reasoning"),
        },
        "tool.execute.after" => {
            let call = tool_call(payload);
            match field("error") {
                Some(error) => HookEvent::PostToolUseFailure {
                    call,
                    error,
                    interrupted: false,
                },
                None => HookEvent::PostToolUse {
                    call,
                    response: json!({
                        "title": field("title"),
                        "output": field("output").unwrap_or_default(),
                    }),
                },
            }
        }
        "session.idle" => HookEvent::Stop {
            prompt_id: None,
            last_assistant_message: field("last_assistant_message"),
        },
        "session.deleted" => HookEvent::SessionEnd {
            reason: Some("deleted".to_owned()),
        },
        _ => HookEvent::Other { name: event_name },
    };
    let directory = field("directory").or_else(|| field("worktree"));
    HookInput {
        platform: Platform::OpenCode,
        event,
        session_id: field("session_id").or_else(|| env.session_id.clone()),
        cwd: directory.clone(),
        project_dir: directory.or_else(|| env.project_dir.clone()),
        transcript_path: None,
        oversized: None,
    }
}

/// A payload too large to parse: its identifiers, and the command or file
/// of its tool call.
fn parse_salvaged(raw: &[u8], event_arg: Option<&str>, env: &Env, note: String) -> HookInput {
    let mut payload = salvaged_payload(
        raw,
        &[
            "hook_event_name",
            "session_id",
            "directory",
            "tool",
            "call_id",
        ],
        &[],
        &["filePath", "command"],
    );
    if let Some(args) = payload.get_mut("tool_input").map(Value::take) {
        payload["args"] = args;
    }
    parse_salvaged_with(parse, &payload, event_arg, env, note)
}

/// What the plugin reads: `additional_context` for the system prompt at the
/// start of a session, `{}` for everything else.
pub fn render(event: &HookEvent, response: &HookResponse) -> Value {
    match (event, &response.additional_context) {
        (HookEvent::SessionStart { .. }, Some(context)) => json!({ "additional_context": context }),
        _ => json!({}),
    }
}

fn tool_call(payload: &Value) -> ToolCall {
    let name = mnemo_tool_name(&tool_name(payload, "tool"));
    ToolCall {
        input: tool_arguments(&name, tool_input(payload.get("args"))),
        name,
        tool_use_id: lenient_string(payload.get("call_id")),
        prompt_id: None,
        duration_ms: None,
    }
}

/// OpenCode's built-in tools in mnemo's (Claude Code's) vocabulary, from
/// the host table; other tools (MCP tools are `<server>_<tool>`) keep their
/// name.
pub fn mnemo_tool_name(opencode: &str) -> String {
    host(Platform::OpenCode).canonical_tool(opencode).to_owned()
}

/// camelCase arguments in mnemo's snake_case: `filePath` -> `file_path`,
/// `oldString` -> `old_string`; a patch's text becomes its `command`, where
/// mnemo looks for the files a patch touches.
fn tool_arguments(name: &str, input: Value) -> Value {
    let Value::Object(args) = input else {
        return input;
    };
    let mut out = Map::new();
    for (key, value) in args {
        let key = match (name, key.as_str()) {
            ("apply_patch", "patchText") => "command".to_owned(),
            _ => snake_case(&key),
        };
        out.insert(key, value);
    }
    Value::Object(out)
}

fn snake_case(key: &str) -> String {
    let mut out = String::with_capacity(key.len() + 4);
    for c in key.chars() {
        if c.is_ascii_uppercase() {
            out.push('_');
            out.push(c.to_ascii_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tool_after(tool: &str, args: Value, output: &str) -> Value {
        json!({
            "hook_event_name": "tool.execute.after",
            "session_id": "ses_1",
            "directory": "/home/dev/projects/acme-billing",
            "opencode_version": "1.18.33",
            "tool": tool,
            "call_id": "call_1",
            "args": args,
            "title": "t",
            "output": output,
        })
    }

    #[test]
    fn edit_arguments_are_in_mnemo_vocabulary() {
        let payload = tool_after(
            "edit",
            json!({"filePath": "/p/a.py", "oldString": "a", "newString": "b"}),
            "Edit applied successfully.",
        );
        let input = parse(&payload, None, &Env::default());
        assert_eq!(input.platform, Platform::OpenCode);
        assert_eq!(input.session_id.as_deref(), Some("ses_1"));
        assert_eq!(
            input.project_dir.as_deref(),
            Some("/home/dev/projects/acme-billing")
        );
        let HookEvent::PostToolUse { call, response } = input.event else {
            panic!("not a tool use")
        };
        assert_eq!(call.name, "Edit");
        assert_eq!(call.tool_use_id.as_deref(), Some("call_1"));
        assert_eq!(
            call.input,
            json!({"file_path": "/p/a.py", "old_string": "a", "new_string": "b"})
        );
        assert_eq!(response["output"], "Edit applied successfully.");
    }

    #[test]
    fn patches_keep_their_text_where_files_are_found() {
        let payload = tool_after(
            "apply_patch",
            json!({"patchText": "*** Begin Patch\n*** Add File: x.py\n+1\n*** End Patch"}),
            "ok",
        );
        let HookEvent::PostToolUse { call, .. } = parse(&payload, None, &Env::default()).event
        else {
            panic!("not a tool use")
        };
        assert_eq!(call.name, "apply_patch");
        assert!(call.input["command"].as_str().unwrap().contains("Add File"));
    }

    #[test]
    fn errors_prompts_and_lifecycle() {
        let mut failed = tool_after("bash", json!({"command": "make"}), "");
        failed["error"] = json!("exit status 2");
        assert!(matches!(
            parse(&failed, None, &Env::default()).event,
            HookEvent::PostToolUseFailure { ref call, ref error, .. }
                if call.name == "Bash" && error == "exit status 2"
        ));
        let prompt = json!({"hook_event_name": "chat.message", "session_id": "s",
                            "message_id": "msg_1", "prompt": "fix it"});
        assert_eq!(
            parse(&prompt, None, &Env::default()).event,
            HookEvent::UserPrompt {
                prompt_id: Some("msg_1".into()),
                prompt: "fix it".into()
            }
        );
        let idle = json!({"hook_event_name": "session.idle", "session_id": "s"});
        assert!(matches!(
            parse(&idle, None, &Env::default()).event,
            HookEvent::Stop { .. }
        ));
        let start = json!({"hook_event_name": "session.start", "session_id": "s"});
        let start = parse(&start, None, &Env::default()).event;
        let context = HookResponse {
            additional_context: Some("memory".into()),
            system_message: None,
        };
        assert_eq!(
            render(&start, &context),
            json!({"additional_context": "memory"})
        );
        assert_eq!(
            render(&HookEvent::Other { name: "x".into() }, &context),
            json!({})
        );
    }
}
