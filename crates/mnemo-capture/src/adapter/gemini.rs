//! Gemini CLI: payloads in, hook JSON out.
//!
//! Gemini CLI (0.61) sends one JSON object on stdin with `session_id`,
//! `hook_event_name`, `cwd`, `transcript_path` and `timestamp`, plus the
//! event's fields. Its events map onto mnemo's: `BeforeAgent` is the prompt,
//! `AfterAgent` the end of the turn, `BeforeTool`/`AfterTool` the tool call
//! (a failed call is an `AfterTool` whose `tool_response.error` is set).
//! Its tool names and arguments (`run_shell_command`, `write_file`,
//! `replace`, `dir_path`, ...) are mapped to mnemo's vocabulary here, so
//! nothing downstream knows which host ran the tool.
//!
//! Context goes back as `hookSpecificOutput.additionalContext` on
//! `SessionStart`, `BeforeAgent` and `AfterTool`, the only events where
//! Gemini reads it; every other event gets `{}`.

use mnemo_core::host::host;
use mnemo_core::model::Platform;
use serde_json::{Value, json};

use super::{
    Adapter, Env, event_name, lenient_string, parse_salvaged_with, salvaged_payload, tool_input,
    tool_name,
};
use crate::event::{HookEvent, HookInput, HookResponse, ToolCall};

pub const ADAPTER: Adapter = Adapter {
    platform: Platform::Gemini,
    parse,
    parse_salvaged,
    render,
};

/// The tag Gemini wraps injected context in; a prompt that starts with it
/// carries the SessionStart context, which is not what the user typed.
const HOOK_CONTEXT_OPEN: &str = "<hook_context>";
const HOOK_CONTEXT_CLOSE: &str = "</hook_context>";

/// Parses a Gemini CLI payload; the payload's `hook_event_name` wins over
/// the event named on the command line.
pub fn parse(payload: &Value, event_arg: Option<&str>, env: &Env) -> HookInput {
    let field = |k: &str| lenient_string(payload.get(k));
    let event_name = event_name(payload, event_arg);
    let event = match event_name.as_str() {
        "SessionStart" => HookEvent::SessionStart {
            source: field("source"),
        },
        "BeforeAgent" => HookEvent::UserPrompt {
            prompt_id: None,
            prompt: strip_hook_context(&field("prompt").unwrap_or_default()).to_owned(),
        },
        "AfterAgent" => HookEvent::Stop {
            prompt_id: None,
            last_assistant_message: field("prompt_response"),
        },
        "BeforeTool" => HookEvent::PreToolUse(tool_call(payload)),
        "AfterTool" => after_tool(payload),
        "SessionEnd" => HookEvent::SessionEnd {
            reason: field("reason"),
        },
        _ => HookEvent::Other { name: event_name },
    };
    HookInput {
        platform: Platform::Gemini,
        event,
        session_id: field("session_id").or_else(|| env.session_id.clone()),
        cwd: field("cwd"),
        project_dir: env.project_dir.clone(),
        transcript_path: field("transcript_path"),
        oversized: None,
    }
}

/// A payload too large to parse: its identifiers, and the file or command
/// of its tool call.
fn parse_salvaged(raw: &[u8], event_arg: Option<&str>, env: &Env, note: String) -> HookInput {
    let payload = salvaged_payload(
        raw,
        &[
            "session_id",
            "transcript_path",
            "cwd",
            "hook_event_name",
            "tool_name",
        ],
        &[],
        &["file_path", "command", "dir_path"],
    );
    parse_salvaged_with(parse, &payload, event_arg, env, note)
}

/// The JSON Gemini CLI expects on stdout for `event`.
pub fn render(event: &HookEvent, response: &HookResponse) -> Value {
    let mut out = json!({});
    let gemini_event = match event {
        HookEvent::SessionStart { .. } => Some("SessionStart"),
        HookEvent::UserPrompt { .. } => Some("BeforeAgent"),
        HookEvent::PostToolUse { .. } | HookEvent::PostToolUseFailure { .. } => Some("AfterTool"),
        _ => None,
    };
    if let (Some(name), Some(context)) = (gemini_event, &response.additional_context) {
        out["hookSpecificOutput"] = json!({
            "hookEventName": name,
            "additionalContext": context,
        });
    }
    if let Some(message) = &response.system_message {
        out["systemMessage"] = json!(message);
    }
    out
}

/// The user's own words: Gemini prepends the SessionStart context as
/// `<hook_context>…</hook_context>\n\n` in non-interactive runs.
fn strip_hook_context(prompt: &str) -> &str {
    let trimmed = prompt.trim_start();
    match trimmed
        .strip_prefix(HOOK_CONTEXT_OPEN)
        .and_then(|rest| rest.find(HOOK_CONTEXT_CLOSE).map(|end| (rest, end)))
    {
        Some((rest, end)) => rest[end + HOOK_CONTEXT_CLOSE.len()..].trim_start(),
        None => prompt,
    }
}

fn after_tool(payload: &Value) -> HookEvent {
    let call = tool_call(payload);
    let response = payload.get("tool_response").cloned().unwrap_or(Value::Null);
    let error = response.get("error").filter(|e| !e.is_null()).map(|e| {
        lenient_string(e.get("message"))
            .or_else(|| lenient_string(Some(e)))
            .unwrap_or_else(|| "failed".to_owned())
    });
    match error {
        Some(error) => HookEvent::PostToolUseFailure {
            call,
            error,
            interrupted: false,
        },
        None => HookEvent::PostToolUse {
            response: tool_response(&call.name, &response),
            call,
        },
    }
}

fn tool_call(payload: &Value) -> ToolCall {
    let name = mnemo_tool_name(&tool_name(payload, "tool_name"), payload.get("mcp_context"));
    let input =
        host(Platform::Gemini).canonical_arguments(&name, tool_input(payload.get("tool_input")));
    ToolCall {
        name,
        input,
        // Gemini gives tool calls no id in hook payloads.
        tool_use_id: None,
        prompt_id: None,
        duration_ms: None,
    }
}

/// Gemini's tool names in mnemo's (Claude Code's) vocabulary, from the host
/// table; MCP tools (`mcp_<server>_<tool>`, ambiguous when a name holds an
/// underscore) become `mcp__<server>__<tool>` from the payload's
/// `mcp_context`; unknown tools keep their name.
pub fn mnemo_tool_name(gemini: &str, mcp_context: Option<&Value>) -> String {
    let mapped = host(Platform::Gemini).canonical_tool(gemini);
    if mapped != gemini {
        return mapped.to_owned();
    }
    let server = mcp_context.and_then(|c| lenient_string(c.get("server_name")));
    let tool = mcp_context.and_then(|c| lenient_string(c.get("tool_name")));
    match (server, tool) {
        (Some(server), Some(tool)) => format!("mcp__{server}__{tool}"),
        _ => gemini.to_owned(),
    }
}

/// Gemini's `{llmContent, returnDisplay}` as the response shapes mnemo
/// reads: a shell call's output (and exit code when Gemini reports one),
/// a file write's one-line outcome (the content is already in the input),
/// the model-facing text of anything else.
fn tool_response(name: &str, response: &Value) -> Value {
    let text = llm_text(response.get("llmContent"));
    match name {
        "Bash" => {
            let output = lenient_string(response.get("returnDisplay"))
                .or_else(|| text.clone())
                .unwrap_or_default();
            let mut out = json!({ "output": output });
            if let Some(code) = text.as_deref().and_then(exit_code) {
                out["exit_code"] = json!(code);
            }
            out
        }
        "Write" | "Edit" => write_outcome(text.as_deref(), response.get("returnDisplay")),
        _ => match text {
            Some(text) => json!({ "output": text }),
            None => response.clone(),
        },
    }
}

/// A file write's one-line outcome, and whether it made the file (`type`:
/// `create` | `update`, in Claude Code's words) when Gemini says so
/// (`returnDisplay.isNewFile`); when it does not, nothing is claimed.
fn write_outcome(text: Option<&str>, display: Option<&Value>) -> Value {
    let mut out = json!({ "output": text.and_then(|t| t.lines().next()).unwrap_or("") });
    match display.and_then(|d| d.get("isNewFile")) {
        Some(Value::Bool(true)) => out["type"] = json!("create"),
        Some(Value::Bool(false)) => out["type"] = json!("update"),
        _ => {}
    }
    out
}

/// An event in the common vocabulary, as an imported chat recording gives
/// it (its results in the `AfterTool` shape `{llmContent, returnDisplay}`),
/// made what Gemini's hook yields: Gemini's
/// platform and its responses read as [`after_tool`] reads them. The
/// recording's call ids are kept: they make a re-import add nothing.
pub fn as_gemini_hook(mut input: HookInput) -> HookInput {
    input.platform = Platform::Gemini;
    if let HookEvent::PostToolUse { call, response } = &mut input.event {
        *response = tool_response(&call.name, response);
    }
    input
}

/// `llmContent` is a string, or a list of parts with `text`.
fn llm_text(content: Option<&Value>) -> Option<String> {
    match content? {
        Value::String(s) => Some(s.clone()),
        Value::Array(parts) => {
            let texts: Vec<&str> = parts
                .iter()
                .filter_map(|p| p.get("text").and_then(Value::as_str))
                .collect();
            (!texts.is_empty()).then(|| texts.join("\n"))
        }
        _ => None,
    }
}

/// The `Exit Code: N` line Gemini adds to a shell call that did not exit 0.
fn exit_code(text: &str) -> Option<i64> {
    text.lines()
        .find_map(|l| l.trim().strip_prefix("Exit Code:"))
        .and_then(|n| n.trim().parse().ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/gemini-cli");

    fn fixture(name: &str) -> Value {
        let text = std::fs::read_to_string(format!("{FIXTURES}/{name}.json")).unwrap();
        serde_json::from_str(&text).unwrap()
    }

    fn parsed(name: &str) -> HookInput {
        parse(&fixture(name), None, &Env::default())
    }

    #[test]
    fn session_start_keeps_ids_and_source() {
        let input = parsed("SessionStart.startup");
        assert_eq!(input.platform, Platform::Gemini);
        assert_eq!(
            input.session_id.as_deref(),
            Some("7d1e4b2a-9c3f-4e8d-a6b5-2f0c1e9d8a74")
        );
        assert_eq!(
            input.cwd.as_deref(),
            Some("/home/dev/projects/acme-billing")
        );
        assert_eq!(
            input.event,
            HookEvent::SessionStart {
                source: Some("startup".into())
            }
        );
    }

    #[test]
    fn write_file_becomes_a_write_with_a_one_line_outcome() {
        let HookEvent::PostToolUse { call, response } = parsed("AfterTool.write_file").event else {
            panic!("not a tool use")
        };
        assert_eq!(call.name, "Write");
        assert_eq!(
            call.input["file_path"],
            "/home/dev/projects/acme-billing/src/billing/late_fee.py"
        );
        let output = response["output"].as_str().unwrap();
        assert!(output.starts_with("Successfully created"), "{output}");
        assert!(!output.contains('\n'));
        assert_eq!(response["type"], "create", "returnDisplay.isNewFile");
    }

    #[test]
    fn a_rewrite_is_an_update_and_an_unknown_write_claims_neither() {
        let mut payload = fixture("AfterTool.write_file");
        payload["tool_response"]["returnDisplay"]["isNewFile"] = json!(false);
        let HookEvent::PostToolUse { response, .. } = parse(&payload, None, &Env::default()).event
        else {
            panic!("not a tool use")
        };
        assert_eq!(response["type"], "update");
        payload["tool_response"]["returnDisplay"] = json!("Wrote the file.");
        let HookEvent::PostToolUse { response, .. } = parse(&payload, None, &Env::default()).event
        else {
            panic!("not a tool use")
        };
        assert!(response.get("type").is_none(), "{response}");
    }

    #[test]
    fn an_imported_call_reads_as_the_hook_would_give_it() {
        let mut imported = parsed("AfterTool.write_file");
        imported.platform = Platform::ClaudeCode;
        let HookEvent::PostToolUse { response, .. } = &mut imported.event else {
            panic!("not a tool use")
        };
        *response = json!({
            "llmContent": "Successfully overwrote file: /w/a.py. Here is the updated code:\nx = 1\n",
            "returnDisplay": {"isNewFile": false},
        });
        let input = as_gemini_hook(imported);
        assert_eq!(input.platform, Platform::Gemini);
        let HookEvent::PostToolUse { response, .. } = input.event else {
            panic!("not a tool use")
        };
        assert_eq!(
            response,
            json!({"output": "Successfully overwrote file: /w/a.py. Here is the updated code:",
                   "type": "update"})
        );
    }

    #[test]
    fn replace_becomes_an_edit() {
        let HookEvent::PostToolUse { call, .. } = parsed("AfterTool").event else {
            panic!("not a tool use")
        };
        assert_eq!(call.name, "Edit");
        assert!(
            call.input["new_string"]
                .as_str()
                .unwrap()
                .contains("late_fee")
        );
    }

    #[test]
    fn shell_output_is_what_the_user_saw() {
        let HookEvent::PostToolUse { call, response } = parsed("AfterTool.run_shell_command").event
        else {
            panic!("not a tool use")
        };
        assert_eq!(call.name, "Bash");
        assert_eq!(
            call.input["command"],
            "python -m pytest tests/test_invoice.py -q"
        );
        assert!(response["output"].as_str().unwrap().contains("4 passed"));
        assert!(response.get("exit_code").is_none());
        let failed = tool_response(
            "Bash",
            &json!({"llmContent": "Output: boom\nExit Code: 2", "returnDisplay": "boom"}),
        );
        assert_eq!(failed["exit_code"], 2);
    }

    #[test]
    fn a_tool_error_is_a_failure() {
        let HookEvent::PostToolUseFailure { call, error, .. } =
            parsed("AfterTool.read_file.error").event
        else {
            panic!("not a failure")
        };
        assert_eq!(call.name, "Read");
        assert!(error.starts_with("File not found"), "{error}");
    }

    #[test]
    fn mcp_tools_use_the_server_and_tool_names() {
        let HookEvent::PostToolUse { call, response } = parsed("AfterTool.mcp").event else {
            panic!("not a tool use")
        };
        assert_eq!(call.name, "mcp__memsys__search");
        assert!(response["output"].as_str().unwrap().contains("2 results"));
        assert_eq!(mnemo_tool_name("mcp_x_y", None), "mcp_x_y");
    }

    #[test]
    fn prompt_and_turn_end() {
        let input = parsed("BeforeAgent");
        let HookEvent::UserPrompt { prompt, .. } = input.event else {
            panic!("not a prompt")
        };
        assert!(prompt.starts_with("Add a late-fee"));
        let HookEvent::Stop {
            last_assistant_message,
            ..
        } = parsed("AfterAgent").event
        else {
            panic!("not a turn end")
        };
        assert!(last_assistant_message.unwrap().contains("4 tests pass"));
        assert!(matches!(
            parsed("SessionEnd.exit").event,
            HookEvent::SessionEnd { reason: Some(r) } if r == "exit"
        ));
        assert!(matches!(
            parsed("PreCompress.auto").event,
            HookEvent::Other { .. }
        ));
    }

    #[test]
    fn injected_session_context_is_not_part_of_the_prompt() {
        let payload = json!({
            "session_id": "s",
            "hook_event_name": "BeforeAgent",
            "prompt": "<hook_context>memory index\nmore</hook_context>\n\nfix the bug",
        });
        let HookEvent::UserPrompt { prompt, .. } = parse(&payload, None, &Env::default()).event
        else {
            panic!("not a prompt")
        };
        assert_eq!(prompt, "fix the bug");
        assert_eq!(
            strip_hook_context("<hook_context>open"),
            "<hook_context>open"
        );
    }

    #[test]
    fn argument_names_are_mapped() {
        let payload = json!({
            "hook_event_name": "BeforeTool",
            "tool_name": "list_directory",
            "tool_input": {"dir_path": "src"},
        });
        let HookEvent::PreToolUse(call) = parse(&payload, None, &Env::default()).event else {
            panic!("not a tool call")
        };
        assert_eq!(call.name, "LS");
        assert_eq!(call.input, json!({"path": "src"}));
    }

    #[test]
    fn renders_context_only_where_gemini_reads_it() {
        let with_context = HookResponse {
            additional_context: Some("memory".into()),
            system_message: None,
        };
        let prompt = HookEvent::UserPrompt {
            prompt_id: None,
            prompt: "x".into(),
        };
        assert_eq!(
            render(&prompt, &with_context),
            json!({"hookSpecificOutput": {"hookEventName": "BeforeAgent", "additionalContext": "memory"}})
        );
        let before_tool = parsed("BeforeTool.write_file").event;
        assert_eq!(render(&before_tool, &with_context), json!({}));
        let end = parsed("AfterAgent").event;
        assert_eq!(render(&end, &with_context), json!({}));
    }
}
