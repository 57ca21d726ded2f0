//! Cursor: payloads in, hook JSON out.
//!
//! Cursor (hooks.json, version 1) names its events in camelCase and sends
//! `conversation_id` (the session), `generation_id`, `cursor_version` and
//! `workspace_roots` on every event; `cwd` is often `""`, so the project is
//! `workspace_roots[0]`. A tool's output arrives as a JSON-encoded string.
//!
//! Cursor also runs the hooks of `.claude/settings.json`, so a Cursor
//! payload can arrive on `mnemo hook claude-code`; [`is_cursor_payload`]
//! recognises it there (`cursor_version`, `conversation_id`) and it is read
//! here, as Cursor's, with the same session id and `tool_use_id` whichever
//! install delivered it. Event names are matched without regard to case for
//! the same reason (`postToolUse` / `PostToolUse`).
//!
//! `generation_id` is not a turn id: the CLI was seen sending the
//! conversation id there, which would make every prompt after the first look
//! like a repeat, so turns are counted by mnemo as for hosts without ids.
//!
//! `afterAgentThought` (a thinking block, per model step) is kept as the
//! turn's narrative: the worker puts it before the tool call that follows.
//!
//! Context goes back as `additional_context` on `sessionStart` and
//! `postToolUse`; `beforeSubmitPrompt` gets `{"continue": true}`; everything
//! else `{}`.

use mnemo_core::host::host;
use mnemo_core::model::Platform;
use serde_json::{Value, json};

use super::{
    Adapter, Env, event_name, flag, lenient_i64, lenient_string, parse_salvaged_with,
    salvaged_payload, tool_input, tool_name,
};
use crate::event::{HookEvent, HookInput, HookResponse, ToolCall};

pub const ADAPTER: Adapter = Adapter {
    platform: Platform::Cursor,
    parse,
    parse_salvaged,
    render,
};

/// Does this payload come from Cursor, whichever hook command received it?
pub fn is_cursor_payload(payload: &Value) -> bool {
    payload.get("cursor_version").is_some() || payload.get("conversation_id").is_some()
}

/// Parses a Cursor payload; the payload's `hook_event_name` wins over the
/// event named on the command line.
pub fn parse(payload: &Value, event_arg: Option<&str>, env: &Env) -> HookInput {
    let field = |k: &str| lenient_string(payload.get(k));
    let event_name = event_name(payload, event_arg);
    let event = match event_name.to_ascii_lowercase().as_str() {
        "sessionstart" => HookEvent::SessionStart { source: None },
        "beforesubmitprompt" | "userpromptsubmit" => HookEvent::UserPrompt {
            prompt_id: None,
            prompt: field("prompt").unwrap_or_default(),
        },
        "pretooluse" => HookEvent::PreToolUse(tool_call(payload)),
        "posttooluse" => HookEvent::PostToolUse {
            call: tool_call(payload),
            response: tool_output(payload),
        },
        "posttoolusefailure" => HookEvent::PostToolUseFailure {
            call: tool_call(payload),
            error: field("error_message")
                .or_else(|| field("failure_type"))
                .unwrap_or_else(|| "failed".to_owned()),
            interrupted: flag(payload, "is_interrupt"),
        },
        // Older builds (and installs that skip postToolUse) report shell
        // commands and edits with events of their own.
        "aftershellexecution" => HookEvent::PostToolUse {
            call: synthetic_call("Bash", json!({ "command": field("command") }), payload),
            response: json!({ "output": field("output").unwrap_or_default() }),
        },
        "afterfileedit" => HookEvent::PostToolUse {
            call: synthetic_call(
                "Edit",
                json!({ "file_path": field("file_path"), "edits": payload.get("edits") }),
                payload,
            ),
            response: Value::Null,
        },
        "afteragentthought" => HookEvent::AgentText {
            text: field("text").unwrap_or_default(),
            thought: true,
        },
        "afteragentresponse" | "stop" => HookEvent::Stop {
            prompt_id: None,
            last_assistant_message: field("text"),
        },
        "sessionend" => HookEvent::SessionEnd {
            reason: field("reason"),
        },
        _ => HookEvent::Other { name: event_name },
    };
    HookInput {
        platform: Platform::Cursor,
        event,
        session_id: field("conversation_id")
            .or_else(|| field("session_id"))
            .or_else(|| env.session_id.clone()),
        cwd: field("cwd").or_else(|| workspace_root(payload)),
        project_dir: workspace_root(payload).or_else(|| env.project_dir.clone()),
        transcript_path: field("transcript_path"),
        oversized: None,
    }
}

/// A payload too large to parse: its identifiers (the `tool_use_id` comes
/// after the tool output), and the file or command of its tool call; the
/// project then comes from `CURSOR_PROJECT_DIR`.
fn parse_salvaged(raw: &[u8], event_arg: Option<&str>, env: &Env, note: String) -> HookInput {
    let payload = salvaged_payload(
        raw,
        &[
            "conversation_id",
            "hook_event_name",
            "tool_name",
            "cursor_version",
        ],
        &["tool_use_id"],
        &["file_path", "command"],
    );
    parse_salvaged_with(parse, &payload, event_arg, env, note)
}

/// The JSON Cursor expects on stdout for `event`.
pub fn render(event: &HookEvent, response: &HookResponse) -> Value {
    match event {
        HookEvent::SessionStart { .. } | HookEvent::PostToolUse { .. } => {
            match &response.additional_context {
                Some(context) => json!({ "additional_context": context }),
                None => json!({}),
            }
        }
        HookEvent::UserPrompt { .. } => json!({ "continue": true }),
        _ => json!({}),
    }
}

fn workspace_root(payload: &Value) -> Option<String> {
    lenient_string(payload.get("workspace_roots")?.get(0))
}

fn tool_call(payload: &Value) -> ToolCall {
    ToolCall {
        name: mnemo_tool_name(&tool_name(payload, "tool_name")),
        input: tool_input(payload.get("tool_input")),
        tool_use_id: lenient_string(payload.get("tool_use_id")).map(|id| id.trim().to_owned()),
        prompt_id: None,
        duration_ms: lenient_i64(payload.get("duration")),
    }
}

fn synthetic_call(name: &str, input: Value, payload: &Value) -> ToolCall {
    ToolCall {
        name: name.to_owned(),
        input,
        tool_use_id: None,
        prompt_id: None,
        duration_ms: lenient_i64(payload.get("duration")),
    }
}

/// `tool_output` is a JSON-encoded string; decoded when it is JSON, kept as
/// text when it is not.
fn tool_output(payload: &Value) -> Value {
    match payload
        .get("tool_output")
        .or_else(|| payload.get("tool_response"))
    {
        Some(Value::String(s)) => {
            serde_json::from_str(s).unwrap_or_else(|_| json!({ "output": s }))
        }
        Some(other) => other.clone(),
        None => Value::Null,
    }
}

/// Cursor's tool names in mnemo's (Claude Code's) vocabulary, from the host
/// table; `MCP:<tool>` becomes `mcp__<tool>`, unknown tools keep their name.
pub fn mnemo_tool_name(cursor: &str) -> String {
    match cursor.strip_prefix("MCP:") {
        Some(tool) => format!("mcp__{}", tool.trim()),
        None => host(Platform::Cursor).canonical_tool(cursor).to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/cursor");
    const CONVERSATION: &str = "e4a1c7d2-5b8f-4e3a-9c6d-1f2b7a8e0d95";

    fn fixture(name: &str) -> Value {
        let text = std::fs::read_to_string(format!("{FIXTURES}/{name}.json")).unwrap();
        serde_json::from_str(&text).unwrap()
    }

    fn parsed(name: &str) -> HookInput {
        parse(&fixture(name), None, &Env::default())
    }

    #[test]
    fn every_event_carries_the_conversation_and_workspace() {
        for name in ["sessionStart", "postToolUse.Shell", "stop", "sessionEnd"] {
            let input = parsed(name);
            assert_eq!(input.platform, Platform::Cursor);
            assert_eq!(input.session_id.as_deref(), Some(CONVERSATION), "{name}");
            assert_eq!(
                input.project_dir.as_deref(),
                Some("/home/dev/projects/acme-billing"),
                "{name}"
            );
        }
        // `cwd` is "" on tool events: the workspace stands in.
        assert_eq!(
            parsed("postToolUse.Shell").cwd.as_deref(),
            Some("/home/dev/projects/acme-billing")
        );
        assert!(is_cursor_payload(&fixture("stop")));
        assert!(!is_cursor_payload(&json!({"session_id": "s"})));
    }

    #[test]
    fn shell_output_string_is_decoded() {
        let HookEvent::PostToolUse { call, response } = parsed("postToolUse.Shell").event else {
            panic!("not a tool use")
        };
        assert_eq!(call.name, "Bash");
        assert_eq!(
            call.tool_use_id.as_deref(),
            Some("3215f49c-7e2a-4b1d-9f6c-0a8e5d2b4c71")
        );
        assert_eq!(call.duration_ms, Some(1432));
        assert_eq!(
            call.input["command"],
            "python -m pytest tests/test_invoice.py -q"
        );
        assert_eq!(response["exitCode"], 0);
        assert!(response["output"].as_str().unwrap().contains("4 passed"));
    }

    #[test]
    fn write_and_failure() {
        let HookEvent::PostToolUse { call, .. } = parsed("postToolUse.Write").event else {
            panic!("not a tool use")
        };
        assert_eq!(call.name, "Write");
        assert_eq!(
            call.input["file_path"],
            "/home/dev/projects/acme-billing/src/billing/late_fee.py"
        );
        let HookEvent::PostToolUseFailure { call, error, .. } =
            parsed("postToolUseFailure.Shell").event
        else {
            panic!("not a failure")
        };
        assert_eq!(call.name, "Bash");
        assert_eq!(error, "Command timed out after 30s");
    }

    #[test]
    fn a_thought_is_the_turns_narrative() {
        let input = parsed("afterAgentThought");
        assert_eq!(input.session_id.as_deref(), Some(CONVERSATION));
        let HookEvent::AgentText { text, thought } = input.event else {
            panic!("not the agent's words")
        };
        assert!(thought);
        assert!(text.contains("needs a default"), "{text}");
        let event = parsed("afterAgentThought").event;
        assert_eq!(render(&event, &HookResponse::default()), json!({}));
    }

    #[test]
    fn prompt_turn_end_and_legacy_events() {
        let HookEvent::UserPrompt { prompt, .. } = parsed("beforeSubmitPrompt").event else {
            panic!("not a prompt")
        };
        assert!(prompt.starts_with("Add a late-fee"));
        let HookEvent::Stop {
            last_assistant_message,
            ..
        } = parsed("afterAgentResponse").event
        else {
            panic!("not a turn end")
        };
        assert!(last_assistant_message.unwrap().contains("4 tests pass"));
        let HookEvent::PostToolUse { call, .. } = parsed("afterFileEdit").event else {
            panic!("not a tool use")
        };
        assert_eq!(call.name, "Edit");
        assert_eq!(
            call.input["file_path"],
            "/home/dev/projects/acme-billing/src/billing/invoice.py"
        );
        let HookEvent::PostToolUse { call, response } = parsed("afterShellExecution").event else {
            panic!("not a tool use")
        };
        assert_eq!(call.name, "Bash");
        assert!(response["output"].as_str().unwrap().contains("4 passed"));
        assert!(matches!(
            parsed("preCompact").event,
            HookEvent::Other { .. }
        ));
    }

    #[test]
    fn claude_style_event_names_are_read_too() {
        let mut payload = fixture("postToolUse.Shell");
        payload["hook_event_name"] = json!("PostToolUse");
        assert!(matches!(
            parse(&payload, None, &Env::default()).event,
            HookEvent::PostToolUse { .. }
        ));
    }

    #[test]
    fn renders_what_cursor_reads() {
        let context = HookResponse {
            additional_context: Some("memory".into()),
            system_message: Some("not shown".into()),
        };
        assert_eq!(
            render(&parsed("sessionStart").event, &context),
            json!({"additional_context": "memory"})
        );
        assert_eq!(
            render(&parsed("postToolUse.Write").event, &HookResponse::default()),
            json!({})
        );
        assert_eq!(
            render(&parsed("beforeSubmitPrompt").event, &context),
            json!({"continue": true})
        );
        assert_eq!(render(&parsed("stop").event, &context), json!({}));
        assert_eq!(mnemo_tool_name("MCP:search"), "mcp__search");
    }
}
