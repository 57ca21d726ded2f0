//! Handlers: pure functions from a [`HookInput`] to a [`Plan`] (what to store,
//! what to answer). They touch no stream, file or database; [`crate::persist`]
//! carries out the plan and [`crate::io`] answers the host.

use mnemo_core::config::{Config, glob_match};
use mnemo_core::model::{EventKind, Priority};
use mnemo_core::privacy::{Sanitizer, is_entirely_private};
use mnemo_core::project;
use mnemo_store::record::new_capture_id;
use mnemo_store::{Capture, CaptureOp, EventRecord, PromptOrigin, SessionRef};
use serde_json::Value;

use crate::event::{HookEvent, HookInput, HookResponse, ToolCall};
use crate::tool::{self, Policy, cut_middle};

pub struct Context<'a> {
    pub config: &'a Config,
    pub sanitizer: &'a Sanitizer,
    pub now_ms: i64,
}

/// What a hook should do.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Plan {
    /// The record to store, if any.
    pub capture: Option<Capture>,
    pub response: HookResponse,
}

/// Session id used when a payload names none, so that its events are kept
/// (and visible in doctor) rather than dropped.
pub const UNKNOWN_SESSION: &str = "unknown-session";

pub fn plan(input: &HookInput, ctx: &Context<'_>) -> Plan {
    let op = match &input.event {
        HookEvent::SessionStart { source } => CaptureOp::SessionStart {
            source: source.clone(),
            transcript_path: input.transcript_path.clone(),
        },
        HookEvent::UserPrompt { prompt_id, prompt } => {
            let clean = ctx.sanitizer.text(prompt);
            let text = if clean.trim().is_empty() || is_entirely_private(prompt, &clean) {
                None
            } else {
                Some(cap(clean.trim(), ctx))
            };
            CaptureOp::Prompt {
                platform_prompt_id: prompt_id.clone(),
                text,
                origin: PromptOrigin::of(prompt),
            }
        }
        HookEvent::PostToolUse { call, response } => {
            if skipped(call, ctx) {
                return Plan::default();
            }
            tool_event(input, call, Some(response), None, ctx)
        }
        HookEvent::PostToolUseFailure {
            call,
            error,
            interrupted,
        } => {
            if skipped(call, ctx) {
                return Plan::default();
            }
            let error = if *interrupted {
                format!("{error} (interrupted by the user)")
            } else {
                error.clone()
            };
            tool_event(input, call, None, Some(&error), ctx)
        }
        HookEvent::Stop {
            prompt_id,
            last_assistant_message,
        } => {
            let mut e = EventRecord::new(EventKind::TurnEnd, Priority::High);
            e.platform_prompt_id = prompt_id.clone();
            e.response = last_assistant_message
                .as_deref()
                .map(|m| Value::String(cap(&ctx.sanitizer.text(m), ctx)).to_string());
            e.note = input.oversized.clone();
            CaptureOp::Event(e)
        }
        HookEvent::SessionEnd { reason } => CaptureOp::SessionEnd {
            reason: reason.clone(),
        },
        HookEvent::AgentText { text, thought } => {
            let clean = ctx.sanitizer.text(text);
            if clean.trim().is_empty() || is_entirely_private(text, &clean) {
                return Plan::default();
            }
            CaptureOp::Note {
                text: cap(clean.trim(), ctx),
                thought: *thought,
            }
        }
        // Nothing to store before a tool runs (recall answers here later),
        // and nothing for events we do not know.
        HookEvent::PreToolUse(_) | HookEvent::Other { .. } => return Plan::default(),
    };
    Plan {
        capture: Some(Capture {
            capture_id: new_capture_id(),
            at_ms: ctx.now_ms,
            session: session_ref(input),
            op,
        }),
        response: HookResponse::default(),
    }
}

fn skipped(call: &ToolCall, ctx: &Context<'_>) -> bool {
    ctx.config
        .capture
        .skip_tools
        .iter()
        .any(|pattern| glob_match(pattern, &call.name))
}

fn tool_event(
    input: &HookInput,
    call: &ToolCall,
    response: Option<&Value>,
    error: Option<&str>,
    ctx: &Context<'_>,
) -> CaptureOp {
    let policy = Policy {
        sanitizer: ctx.sanitizer,
        max_field_bytes: ctx.config.capture.max_field_bytes as usize,
    };
    let shaped = tool::shape(call, response, error, input.cwd.as_deref(), &policy);
    let kind = if error.is_some() {
        EventKind::ToolFailure
    } else {
        EventKind::ToolUse
    };
    let note = match (&input.oversized, shaped.note) {
        (Some(a), Some(b)) => Some(format!("{a}; {b}")),
        (a, b) => a.clone().or(b),
    };
    CaptureOp::Event(EventRecord {
        kind,
        tool_name: Some(call.name.clone()),
        tool_use_id: call
            .tool_use_id
            .as_deref()
            .map(|id| ctx.sanitizer.identifier(id).into_owned()),
        platform_prompt_id: call.prompt_id.clone(),
        input: shaped.input,
        response: shaped.response,
        error: shaped.error,
        files_read: shaped.files_read,
        files_modified: shaped.files_modified,
        priority: shaped.priority,
        duration_ms: call.duration_ms,
        note,
    })
}

fn cap(text: &str, ctx: &Context<'_>) -> String {
    cut_middle(text, ctx.config.capture.max_field_bytes as usize)
}

fn session_ref(input: &HookInput) -> SessionRef {
    let project = project::resolve(input.project_dir.as_deref(), input.cwd.as_deref());
    SessionRef {
        platform: input.platform,
        platform_session_id: input
            .session_id
            .clone()
            .unwrap_or_else(|| UNKNOWN_SESSION.to_owned()),
        project_root: project
            .as_ref()
            .map(|p| p.root.to_string_lossy().into_owned()),
        project_name: project.map(|p| p.name),
        cwd: input.cwd.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::adapter::{Env, claude_code};
    use mnemo_core::config::PrivacyConfig;

    fn run(fixture: &str) -> Plan {
        let payload: Value = serde_json::from_str(fixture).unwrap();
        let input = claude_code::parse(&payload, None, &Env::default());
        let config = Config::default();
        let sanitizer = Sanitizer::new(&PrivacyConfig::default());
        plan(
            &input,
            &Context {
                config: &config,
                sanitizer: &sanitizer,
                now_ms: 42,
            },
        )
    }

    #[test]
    fn private_text_never_reaches_the_capture() {
        let plan = run(include_str!(
            "../tests/fixtures/claude-code/UserPromptSubmit.json"
        ));
        let capture = plan.capture.unwrap();
        let CaptureOp::Prompt { text, origin, .. } = &capture.op else {
            panic!("not a prompt")
        };
        assert_eq!(text.as_deref(), Some("fix login please"));
        assert_eq!(*origin, PromptOrigin::User);
        assert!(!serde_json::to_string(&capture).unwrap().contains("hunter2"));
        assert_eq!(capture.session.project_name.as_deref(), Some("demo"));
    }

    #[test]
    fn fully_private_prompt_is_counted_without_text() {
        let plan = run(
            r#"{"session_id":"s","hook_event_name":"UserPromptSubmit","prompt":"<private>all of it</private>"}"#,
        );
        assert!(matches!(
            plan.capture.unwrap().op,
            CaptureOp::Prompt { text: None, .. }
        ));
    }

    #[test]
    fn failures_are_high_priority_events_with_the_error() {
        let plan = run(include_str!(
            "../tests/fixtures/claude-code/PostToolUseFailure.Bash.json"
        ));
        let CaptureOp::Event(e) = plan.capture.unwrap().op else {
            panic!("not an event")
        };
        assert_eq!(e.kind, EventKind::ToolFailure);
        assert_eq!(e.error.as_deref(), Some("Exit code 3"));
        assert_eq!(e.priority, Priority::High);
        assert_eq!(
            e.platform_prompt_id.as_deref(),
            Some("fcb4cf24-74b2-437b-b68f-c0e0bf779db4")
        );
    }

    #[test]
    fn stop_keeps_the_last_assistant_message() {
        let plan = run(include_str!("../tests/fixtures/claude-code/Stop.json"));
        let CaptureOp::Event(e) = plan.capture.unwrap().op else {
            panic!("not an event")
        };
        assert_eq!(e.kind, EventKind::TurnEnd);
        assert_eq!(
            e.response.as_deref(),
            Some("\"Refactored login to use check_hash.\"")
        );
    }

    #[test]
    fn skipped_tools_and_pre_tool_use_store_nothing() {
        assert_eq!(
            run(
                r#"{"session_id":"s","hook_event_name":"PostToolUse","tool_name":"mcp__mnemo__search"}"#
            ),
            Plan::default()
        );
        assert_eq!(
            run(include_str!(
                "../tests/fixtures/claude-code/PreToolUse.Bash.json"
            )),
            Plan::default()
        );
        assert_eq!(
            run(r#"{"session_id":"s","hook_event_name":"Notification"}"#),
            Plan::default()
        );
    }

    #[test]
    fn payload_without_session_is_kept_under_a_visible_name() {
        let plan = run(r#"{"hook_event_name":"SessionEnd"}"#);
        assert_eq!(
            plan.capture.unwrap().session.platform_session_id,
            UNKNOWN_SESSION
        );
    }
}
