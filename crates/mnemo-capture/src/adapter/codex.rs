//! Codex CLI: payloads in, hook JSON out.
//!
//! Codex's hooks are Claude-style (`session_id`, `hook_event_name`, `cwd`,
//! `tool_name`, `tool_input`, `tool_response`), with a `turn_id` on every
//! turn-scoped event, which stands in for Claude Code's `prompt_id` (a
//! message the user types while a turn runs carries the running turn's id:
//! the store joins it to that turn's prompt). Tool
//! names come through the host table (`exec_command` -> `Bash`); an
//! `apply_patch` keeps its name and gains the files it adds, updates and
//! deletes, and a one-line summary of the change.
//!
//! The legacy `notify` program gets one `agent-turn-complete` JSON as its
//! last argument (no stdin): it is read as the end of a turn.
//!
//! Codex validates hook output against schemas with
//! `additionalProperties: false`, so only `{}` or
//! `{"hookSpecificOutput": {"hookEventName", "additionalContext"}}` is printed.

use mnemo_core::host::{Host, host};
use mnemo_core::model::Platform;
use serde_json::{Map, Value, json};

use super::{Adapter, Env, claude_code, lenient_string};
use crate::event::{HookEvent, HookInput, HookResponse, ToolCall};

pub const ADAPTER: Adapter = Adapter {
    platform: Platform::Codex,
    parse,
    parse_salvaged,
    render,
};

/// Parses a Codex hook payload, or a `notify` message.
pub fn parse(payload: &Value, event_arg: Option<&str>, env: &Env) -> HookInput {
    if payload.get("type").and_then(Value::as_str) == Some("agent-turn-complete") {
        return parse_notify(payload, env);
    }
    let input = claude_code::parse(payload, event_arg, env);
    as_codex_hook(input, lenient_string(payload.get("turn_id")))
}

/// An event in Claude Code's terms (as the Claude-style parse, or an
/// imported rollout, gives it) made what Codex's hook of turn `turn_id`
/// yields: Codex's platform, tool names in the common vocabulary, patches
/// read, the turn id as prompt id, and a tool whose output states a
/// non-zero exit code a failure.
pub fn as_codex_hook(mut input: HookInput, turn_id: Option<String>) -> HookInput {
    input.platform = Platform::Codex;
    normalize_event(&mut input.event, host(Platform::Codex), turn_id);
    input.event = failure_of(input.event);
    input
}

/// Codex has no PostToolUseFailure: a tool whose output starts with
/// `Exit code: N` (N not 0, as `apply_patch` reports) failed. (A failed
/// `exec_command` carries no exit code in 0.169's hook payload.)
fn failure_of(event: HookEvent) -> HookEvent {
    let HookEvent::PostToolUse { call, response } = event else {
        return event;
    };
    let code = response
        .as_str()
        .and_then(|r| r.strip_prefix("Exit code: "))
        .and_then(|r| r.lines().next())
        .and_then(|n| n.trim().parse::<i64>().ok());
    match code {
        Some(code) if code != 0 => HookEvent::PostToolUseFailure {
            error: response.as_str().unwrap_or_default().to_owned(),
            call,
            interrupted: false,
        },
        _ => HookEvent::PostToolUse { call, response },
    }
}

fn parse_salvaged(raw: &[u8], event_arg: Option<&str>, env: &Env, note: String) -> HookInput {
    let mut input = claude_code::parse_oversized(raw, event_arg, env, note);
    input.platform = Platform::Codex;
    let turn_id = super::salvage_field(raw, "turn_id", false);
    normalize_event(&mut input.event, host(Platform::Codex), turn_id);
    input
}

/// Tool names into the common vocabulary, `apply_patch` read, and the turn
/// id wherever Claude Code would have a prompt id.
fn normalize_event(event: &mut HookEvent, host: &Host, turn_id: Option<String>) {
    let fix_call = |call: &mut ToolCall| {
        call.name = host.canonical_tool(&call.name).to_owned();
        if call.prompt_id.is_none() {
            call.prompt_id = turn_id.clone();
        }
        if call.name == "apply_patch" {
            describe_patch(&mut call.input);
        }
    };
    match event {
        HookEvent::PreToolUse(call)
        | HookEvent::PostToolUse { call, .. }
        | HookEvent::PostToolUseFailure { call, .. } => fix_call(call),
        HookEvent::UserPrompt { prompt_id, .. } | HookEvent::Stop { prompt_id, .. }
            if prompt_id.is_none() =>
        {
            *prompt_id = turn_id.clone();
        }
        _ => {}
    }
}

/// `notify`: `{"type": "agent-turn-complete", "thread-id", "turn-id", "cwd",
/// "input-messages": [...], "last-assistant-message"}`, kebab-case.
fn parse_notify(payload: &Value, env: &Env) -> HookInput {
    let field = |k: &str| lenient_string(payload.get(k));
    let prompts: Vec<&str> = payload
        .get("input-messages")
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let last = field("last-assistant-message");
    // The turn's prompt rides along with its answer: nothing else carries it
    // when only `notify` is configured.
    let message = match (prompts.is_empty(), last) {
        (true, last) => last,
        (false, last) => Some(format!(
            "{}\n\n(asked: {})",
            last.unwrap_or_default(),
            prompts.join(" / ")
        )),
    };
    HookInput {
        platform: Platform::Codex,
        event: HookEvent::Stop {
            prompt_id: field("turn-id"),
            last_assistant_message: message.map(|m| m.trim().to_owned()),
        },
        session_id: field("thread-id").or_else(|| env.session_id.clone()),
        cwd: field("cwd"),
        project_dir: env.project_dir.clone(),
        transcript_path: None,
        oversized: None,
    }
}

/// One file an `apply_patch` touches.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PatchFile {
    pub path: String,
    pub action: PatchAction,
    pub added_lines: usize,
    pub removed_lines: usize,
    /// `*** Move to:` of an update.
    pub moved_to: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PatchAction {
    Add,
    Update,
    Delete,
}

impl PatchAction {
    fn verb(self) -> &'static str {
        match self {
            PatchAction::Add => "added",
            PatchAction::Update => "updated",
            PatchAction::Delete => "deleted",
        }
    }
}

/// The files of a `*** Begin Patch` ... `*** End Patch` text, in order.
pub fn parse_patch(patch: &str) -> Vec<PatchFile> {
    let mut files: Vec<PatchFile> = Vec::new();
    for line in patch.lines() {
        let header = [
            ("*** Add File: ", PatchAction::Add),
            ("*** Update File: ", PatchAction::Update),
            ("*** Delete File: ", PatchAction::Delete),
        ]
        .into_iter()
        .find_map(|(prefix, action)| line.strip_prefix(prefix).map(|p| (p.trim(), action)));
        if let Some((path, action)) = header {
            files.push(PatchFile {
                path: path.to_owned(),
                action,
                added_lines: 0,
                removed_lines: 0,
                moved_to: None,
            });
            continue;
        }
        let Some(file) = files.last_mut() else {
            continue;
        };
        if let Some(to) = line.strip_prefix("*** Move to: ") {
            file.moved_to = Some(to.trim().to_owned());
        } else if line.starts_with("***") {
            continue;
        } else if line.starts_with('+') {
            file.added_lines += 1;
        } else if line.starts_with('-') {
            file.removed_lines += 1;
        }
    }
    files
}

/// Adds `files` ({added, updated, deleted}) and `summary` to an
/// `apply_patch` input, keeping the patch itself as `command`.
fn describe_patch(input: &mut Value) {
    let Some(patch) = input
        .get("command")
        .or_else(|| input.get("input"))
        .or_else(|| input.get("patch"))
        .and_then(Value::as_str)
        .map(str::to_owned)
    else {
        return;
    };
    let files = parse_patch(&patch);
    if files.is_empty() {
        return;
    }
    let mut by_action = Map::new();
    for action in [PatchAction::Add, PatchAction::Update, PatchAction::Delete] {
        let paths: Vec<Value> = files
            .iter()
            .filter(|f| f.action == action)
            .map(|f| json!(f.moved_to.as_deref().unwrap_or(&f.path)))
            .collect();
        if !paths.is_empty() {
            by_action.insert(action.verb().to_owned(), Value::Array(paths));
        }
    }
    let summary = files.iter().map(summary_of).collect::<Vec<_>>().join("; ");
    if let Value::Object(map) = input {
        if !map.contains_key("command") {
            map.insert("command".to_owned(), json!(patch));
        }
        map.insert("files".to_owned(), Value::Object(by_action));
        map.insert("summary".to_owned(), json!(summary));
    }
}

fn summary_of(file: &PatchFile) -> String {
    let name = file.path.as_str();
    match file.action {
        PatchAction::Add => format!("add {name} ({} lines)", file.added_lines),
        PatchAction::Delete => format!("delete {name}"),
        PatchAction::Update => {
            let moved = file
                .moved_to
                .as_deref()
                .map(|to| format!(" -> {to}"))
                .unwrap_or_default();
            format!(
                "update {name}{moved} (+{} -{})",
                file.added_lines, file.removed_lines
            )
        }
    }
}

/// Only what Codex's output schemas allow: `{}`, or the additionalContext
/// shape on the events that take it. No `systemMessage`: the practical rule
/// of the protocol notes is to print nothing else.
pub fn render(event: &HookEvent, response: &HookResponse) -> Value {
    let takes_context = matches!(
        event,
        HookEvent::SessionStart { .. }
            | HookEvent::UserPrompt { .. }
            | HookEvent::PreToolUse(_)
            | HookEvent::PostToolUse { .. }
    );
    match response
        .additional_context
        .as_ref()
        .filter(|c| takes_context && !c.is_empty())
    {
        Some(context) => json!({
            "hookSpecificOutput": {
                "hookEventName": event.name(),
                "additionalContext": context,
            }
        }),
        None => json!({}),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture(name: &str) -> Value {
        let path = format!("{}/tests/fixtures/codex/{name}", env!("CARGO_MANIFEST_DIR"));
        serde_json::from_str(&std::fs::read_to_string(&path).expect(&path)).unwrap()
    }

    #[test]
    fn apply_patch_becomes_files_and_a_summary() {
        let input = parse(
            &fixture("PostToolUse.apply_patch.json"),
            None,
            &Env::default(),
        );
        let HookEvent::PostToolUse { call, .. } = &input.event else {
            panic!("{input:?}");
        };
        assert_eq!(call.name, "apply_patch");
        assert_eq!(
            call.input["files"]["added"],
            json!(["/home/dev/projects/acme-billing/src/billing/late_fee.py"])
        );
        assert_eq!(
            call.input["summary"],
            "add /home/dev/projects/acme-billing/src/billing/late_fee.py (4 lines)"
        );
        assert!(
            call.input["command"]
                .as_str()
                .unwrap()
                .contains("*** Begin Patch")
        );
        assert_eq!(
            call.prompt_id.as_deref(),
            Some("019a4c2e-8f3a-7b21-a4c9-5e1d8b2f7c60")
        );
        assert_eq!(input.platform, Platform::Codex);
    }

    #[test]
    fn a_nonzero_exit_code_is_a_failure() {
        let mut payload = fixture("PostToolUse.apply_patch.json");
        payload["tool_response"] = json!(
            "Exit code: 1\nWall time: 0 seconds\nOutput:\nverification failed: no such file\n"
        );
        let input = parse(&payload, None, &Env::default());
        let HookEvent::PostToolUseFailure { call, error, .. } = &input.event else {
            panic!("{input:?}")
        };
        assert_eq!(call.name, "apply_patch");
        assert!(error.contains("verification failed"), "{error}");
        let ok = parse(
            &fixture("PostToolUse.apply_patch.json"),
            None,
            &Env::default(),
        );
        assert!(matches!(ok.event, HookEvent::PostToolUse { .. }));
    }

    #[test]
    fn patches_with_updates_moves_and_deletes() {
        let patch = "*** Begin Patch\n*** Update File: a.rs\n@@ fn x\n-old\n+new\n+more\n*** Move to: b.rs\n\
                     *** Delete File: gone.txt\n*** Add File: c.md\n+hi\n*** End Patch\n";
        let files = parse_patch(patch);
        assert_eq!(files.len(), 3);
        assert_eq!(files[0].action, PatchAction::Update);
        assert_eq!((files[0].added_lines, files[0].removed_lines), (2, 1));
        assert_eq!(files[0].moved_to.as_deref(), Some("b.rs"));
        assert_eq!(files[1].action, PatchAction::Delete);
        let mut input = json!({"command": patch});
        describe_patch(&mut input);
        assert_eq!(input["files"]["updated"], json!(["b.rs"]));
        assert_eq!(input["files"]["deleted"], json!(["gone.txt"]));
        assert_eq!(
            input["summary"],
            "update a.rs -> b.rs (+2 -1); delete gone.txt; add c.md (1 lines)"
        );
    }

    #[test]
    fn exec_command_is_bash_and_turn_id_is_the_prompt_id() {
        let mut payload = fixture("PostToolUse.Bash.json");
        payload["tool_name"] = json!("exec_command");
        let input = parse(&payload, None, &Env::default());
        let HookEvent::PostToolUse { call, .. } = &input.event else {
            panic!()
        };
        assert_eq!(call.name, "Bash");
        let stop = parse(&fixture("Stop.json"), None, &Env::default());
        assert_eq!(
            stop.event,
            HookEvent::Stop {
                prompt_id: Some("019a4c2e-8f3a-7b21-a4c9-5e1d8b2f7c60".into()),
                last_assistant_message: Some(
                    "Added late_fee() and wired it into compute_total(); 4 tests pass.".into()
                ),
            }
        );
    }

    #[test]
    fn notify_is_a_turn_end_with_its_prompt_and_answer() {
        let input = parse(&fixture("notify.json"), Some("notify"), &Env::default());
        assert_eq!(
            input.session_id.as_deref(),
            Some("019a4c2e-8f1b-7d3a-9c5e-2b7f4a1d6e83")
        );
        assert_eq!(
            input.cwd.as_deref(),
            Some("/home/dev/projects/acme-billing")
        );
        let HookEvent::Stop {
            prompt_id,
            last_assistant_message,
        } = &input.event
        else {
            panic!("{input:?}")
        };
        assert_eq!(
            prompt_id.as_deref(),
            Some("019a4c2e-8f3a-7b21-a4c9-5e1d8b2f7c60")
        );
        let message = last_assistant_message.as_deref().unwrap();
        assert!(message.starts_with("Added late_fee()"), "{message}");
        assert!(
            message.contains("asked: Add a late-fee calculation"),
            "{message}"
        );
    }

    #[test]
    fn output_is_empty_or_the_strict_context_shape() {
        let context = HookResponse {
            additional_context: Some("memory".into()),
            system_message: Some("for the human".into()),
        };
        let start = HookEvent::SessionStart { source: None };
        assert_eq!(
            render(&start, &context),
            json!({"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": "memory"}})
        );
        let stop = HookEvent::Stop {
            prompt_id: None,
            last_assistant_message: None,
        };
        assert_eq!(render(&stop, &context), json!({}));
        assert_eq!(render(&start, &HookResponse::default()), json!({}));
    }
}
