//! Claude Code: payloads in, hook JSON out.
//!
//! Claude Code sends one JSON object on stdin (`session_id`,
//! `hook_event_name`, `cwd`, and event fields such as `tool_name`,
//! `tool_input`, `tool_response`, `prompt`, `prompt_id`,
//! `last_assistant_message`). Any field may be missing or of the wrong type
//! in the wild (older versions, the VS Code dialect with `sessionId` /
//! `hookEventName`), so every read here is lenient.

use mnemo_core::model::Platform;
use serde_json::{Value, json};

use super::{Adapter, Env, flag, lenient_i64, lenient_string, salvage_field, tool_input};
use crate::event::{HookEvent, HookInput, HookResponse, ToolCall};

pub const ADAPTER: Adapter = Adapter {
    platform: Platform::ClaudeCode,
    parse,
    parse_salvaged: parse_oversized,
    render,
};

/// Parses a Claude Code payload. `event_arg` is the event named on the
/// command line; the payload's own `hook_event_name` wins when present.
pub fn parse(payload: &Value, event_arg: Option<&str>, env: &Env) -> HookInput {
    let field = |k: &str| lenient_string(payload.get(k));
    let event_name = field("hook_event_name")
        .or_else(|| field("hookEventName"))
        .or_else(|| event_arg.map(canonical_event_name))
        .unwrap_or_default();
    let prompt_id = field("prompt_id");
    let call = || ToolCall {
        name: field("tool_name")
            .or_else(|| field("toolName"))
            .unwrap_or_else(|| "unknown".to_owned()),
        input: tool_input(
            payload
                .get("tool_input")
                .or_else(|| payload.get("toolInput")),
        ),
        tool_use_id: field("tool_use_id"),
        prompt_id: prompt_id.clone(),
        duration_ms: lenient_i64(payload.get("duration_ms")),
    };
    let event = match event_name.as_str() {
        "SessionStart" => HookEvent::SessionStart {
            source: field("source"),
        },
        "UserPromptSubmit" => HookEvent::UserPrompt {
            prompt_id: prompt_id.clone(),
            prompt: field("prompt").unwrap_or_default(),
        },
        "PreToolUse" => HookEvent::PreToolUse(call()),
        "PostToolUse" => HookEvent::PostToolUse {
            call: call(),
            response: payload
                .get("tool_response")
                .or_else(|| payload.get("toolResponse"))
                .cloned()
                .unwrap_or(Value::Null),
        },
        "PostToolUseFailure" => HookEvent::PostToolUseFailure {
            call: call(),
            error: field("error").unwrap_or_else(|| "failed".to_owned()),
            interrupted: flag(payload, "is_interrupt"),
        },
        "Stop" => HookEvent::Stop {
            prompt_id: prompt_id.clone(),
            last_assistant_message: field("last_assistant_message"),
        },
        "SessionEnd" => HookEvent::SessionEnd {
            reason: field("reason"),
        },
        _ => HookEvent::Other { name: event_name },
    };
    HookInput {
        platform: Platform::ClaudeCode,
        event,
        session_id: field("session_id")
            .or_else(|| field("sessionId"))
            .or_else(|| env.session_id.clone()),
        cwd: field("cwd"),
        project_dir: env.project_dir.clone(),
        transcript_path: field("transcript_path"),
        oversized: None,
    }
}

/// Builds the input of a payload too large to parse, from identifiers found
/// in its raw bytes. Top-level fields that Claude Code writes before the tool
/// input are searched from the start; those it writes after the (possibly
/// huge) tool response, from the end.
pub fn parse_oversized(raw: &[u8], event_arg: Option<&str>, env: &Env, note: String) -> HookInput {
    let first = |k| salvage_field(raw, k, false);
    let last = |k| salvage_field(raw, k, true);
    let event_name = first("hook_event_name")
        .or_else(|| event_arg.map(canonical_event_name))
        .unwrap_or_default();
    let mut input = serde_json::Map::new();
    for key in ["file_path", "notebook_path", "command"] {
        if let Some(v) = first(key) {
            input.insert(key.to_owned(), Value::String(v));
        }
    }
    let call = ToolCall {
        name: first("tool_name").unwrap_or_else(|| "unknown".to_owned()),
        input: Value::Object(input),
        tool_use_id: last("tool_use_id"),
        prompt_id: first("prompt_id"),
        duration_ms: None,
    };
    let event = match event_name.as_str() {
        "PostToolUse" => HookEvent::PostToolUse {
            call,
            response: Value::Null,
        },
        "PostToolUseFailure" => HookEvent::PostToolUseFailure {
            call,
            error: "failed (payload too large to read)".to_owned(),
            interrupted: false,
        },
        "UserPromptSubmit" => HookEvent::UserPrompt {
            prompt_id: first("prompt_id"),
            prompt: String::new(),
        },
        "Stop" => HookEvent::Stop {
            prompt_id: first("prompt_id"),
            last_assistant_message: None,
        },
        "PreToolUse" => HookEvent::PreToolUse(call),
        _ => HookEvent::Other { name: event_name },
    };
    HookInput {
        platform: Platform::ClaudeCode,
        event,
        session_id: first("session_id").or_else(|| env.session_id.clone()),
        cwd: first("cwd"),
        project_dir: env.project_dir.clone(),
        transcript_path: None,
        oversized: Some(note),
    }
}

/// The JSON Claude Code expects on stdout for `event`. Only documented keys:
/// `hookSpecificOutput.additionalContext` where the event supports it, and
/// `systemMessage`. An empty object means "nothing to add".
pub fn render(event: &HookEvent, response: &HookResponse) -> Value {
    let mut out = json!({});
    let supports_context = matches!(
        event,
        HookEvent::SessionStart { .. }
            | HookEvent::UserPrompt { .. }
            | HookEvent::PreToolUse(_)
            | HookEvent::PostToolUse { .. }
            | HookEvent::PostToolUseFailure { .. }
    );
    if let Some(context) = response
        .additional_context
        .as_ref()
        .filter(|_| supports_context)
    {
        out["hookSpecificOutput"] = json!({
            "hookEventName": event.name(),
            "additionalContext": context,
        });
    }
    if let Some(message) = &response.system_message {
        out["systemMessage"] = json!(message);
    }
    out
}

/// Accepts the event name as Claude Code spells it or in kebab/snake case
/// (`post-tool-use`, `post_tool_use`).
pub fn canonical_event_name(arg: &str) -> String {
    const NAMES: &[&str] = &[
        "SessionStart",
        "UserPromptSubmit",
        "PreToolUse",
        "PostToolUse",
        "PostToolUseFailure",
        "Stop",
        "SessionEnd",
    ];
    let squashed: String = arg
        .chars()
        .filter(|c| *c != '-' && *c != '_')
        .collect::<String>()
        .to_ascii_lowercase();
    NAMES
        .iter()
        .find(|n| n.to_ascii_lowercase() == squashed)
        .map(|n| (*n).to_owned())
        .unwrap_or_else(|| arg.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env() -> Env {
        Env {
            project_dir: Some("/home/dev/src/demo".into()),
            session_id: None,
        }
    }

    #[test]
    fn reads_a_post_tool_use_payload() {
        let payload: Value = serde_json::from_str(include_str!(
            "../../tests/fixtures/claude-code/PostToolUse.Edit.json"
        ))
        .unwrap();
        let input = parse(&payload, Some("PostToolUse"), &env());
        assert_eq!(
            input.session_id.as_deref(),
            Some("1a496781-2e55-42d7-94f9-78b02582f5bf")
        );
        let HookEvent::PostToolUse { call, response } = input.event else {
            panic!("wrong event")
        };
        assert_eq!(call.name, "Edit");
        assert_eq!(call.duration_ms, Some(5));
        assert_eq!(call.input["file_path"], "/home/dev/src/demo/auth.py");
        assert!(response["structuredPatch"].is_array());
    }

    #[test]
    fn wrong_types_and_missing_fields_do_not_break_parsing() {
        let payload = json!({
            "session_id": 12345,
            "hook_event_name": "PostToolUse",
            "tool_name": ["Bash"],
            "tool_input": "{\"command\":\"ls\"}",
            "duration_ms": "7",
        });
        let input = parse(&payload, None, &env());
        assert_eq!(input.session_id.as_deref(), Some("12345"));
        let HookEvent::PostToolUse { call, response } = input.event else {
            panic!("wrong event")
        };
        assert_eq!(call.name, "unknown");
        assert_eq!(call.input["command"], "ls");
        assert_eq!(call.duration_ms, Some(7));
        assert_eq!(response, Value::Null);
    }

    #[test]
    fn event_name_comes_from_payload_then_argument() {
        let input = parse(&json!({"session_id": "s"}), Some("session-end"), &env());
        assert!(matches!(input.event, HookEvent::SessionEnd { .. }));
        let input = parse(
            &json!({"hook_event_name": "Stop"}),
            Some("SessionEnd"),
            &env(),
        );
        assert!(matches!(input.event, HookEvent::Stop { .. }));
        let input = parse(&json!({}), Some("Bogus"), &env());
        assert_eq!(
            input.event,
            HookEvent::Other {
                name: "Bogus".into()
            }
        );
    }

    #[test]
    fn vscode_dialect_aliases() {
        let input = parse(
            &json!({"sessionId": "v1", "hookEventName": "SessionStart"}),
            None,
            &env(),
        );
        assert_eq!(input.session_id.as_deref(), Some("v1"));
        assert!(matches!(input.event, HookEvent::SessionStart { .. }));
    }

    #[test]
    fn renders_only_documented_keys() {
        let start = HookEvent::SessionStart { source: None };
        assert_eq!(render(&start, &HookResponse::default()), json!({}));
        let r = HookResponse {
            additional_context: Some("memory".into()),
            system_message: Some("mnemo: 3 memories".into()),
        };
        assert_eq!(
            render(&start, &r),
            json!({
                "hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": "memory"},
                "systemMessage": "mnemo: 3 memories"
            })
        );
        let stop = HookEvent::Stop {
            prompt_id: None,
            last_assistant_message: None,
        };
        assert_eq!(
            render(
                &stop,
                &HookResponse {
                    additional_context: Some("x".into()),
                    system_message: None
                }
            ),
            json!({})
        );
    }

    #[test]
    fn oversized_payloads_keep_their_identifiers() {
        let big = "x".repeat(1000);
        let raw = format!(
            r#"{{"session_id":"s1","cwd":"/p","hook_event_name":"PostToolUse","tool_name":"Write","tool_input":{{"file_path":"/p/big.bin","content":"{big} \"tool_use_id\": \"fake\""}},"tool_response":{{}},"tool_use_id":"toolu_9"}}"#
        );
        let input = parse_oversized(raw.as_bytes(), None, &env(), "too big".into());
        assert_eq!(input.session_id.as_deref(), Some("s1"));
        let HookEvent::PostToolUse { call, .. } = input.event else {
            panic!("wrong event")
        };
        assert_eq!(call.name, "Write");
        assert_eq!(call.tool_use_id.as_deref(), Some("toolu_9"));
        assert_eq!(call.input, json!({"file_path": "/p/big.bin"}));
    }
}
