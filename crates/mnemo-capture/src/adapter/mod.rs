//! Adapters: one per agent host, turning its payload into a [`HookInput`] and
//! a [`HookResponse`] back into the JSON it expects.
//!
//! Only Claude Code (and `raw`, its payload shape) is wired so far; the other
//! platforms of the CLI contract answer with a no-op until their adapters
//! land, so that a misconfigured host never sees an error from us, and each
//! of their events is logged as ignored (see [`is_supported`]), which
//! `mnemo doctor` counts.

pub mod claude_code;

use serde_json::Value;

use crate::event::{HookEvent, HookInput, HookResponse};

/// What adapters read from the hook's environment.
#[derive(Debug, Clone, Default)]
pub struct Env {
    /// `CLAUDE_PROJECT_DIR`: where the session started; stable across `cd`.
    pub project_dir: Option<String>,
    /// `CLAUDE_CODE_SESSION_ID`, for payloads that lack a session id.
    pub session_id: Option<String>,
}

impl Env {
    pub fn from_process() -> Env {
        let var = |k: &str| std::env::var(k).ok().filter(|v| !v.trim().is_empty());
        Env {
            project_dir: var("CLAUDE_PROJECT_DIR"),
            session_id: var("CLAUDE_CODE_SESSION_ID"),
        }
    }
}

/// A string field, accepting numbers and booleans as their text; None for
/// anything else or an empty string.
pub(crate) fn lenient_string(v: Option<&Value>) -> Option<String> {
    match v? {
        Value::String(s) if !s.is_empty() => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}

pub(crate) fn lenient_i64(v: Option<&Value>) -> Option<i64> {
    match v? {
        Value::Number(n) => n.as_i64().or_else(|| n.as_f64().map(|f| f as i64)),
        Value::String(s) => s.trim().parse().ok(),
        _ => None,
    }
}

/// A tool input as an object: some hosts send it as a JSON string.
pub(crate) fn tool_input(v: Option<&Value>) -> Value {
    match v {
        Some(Value::String(s)) => match serde_json::from_str::<Value>(s) {
            Ok(parsed @ Value::Object(_)) => parsed,
            _ => Value::String(s.clone()),
        },
        Some(other) => other.clone(),
        None => Value::Object(Default::default()),
    }
}

/// Finds `"key": "<string>"` in raw JSON bytes without parsing the whole
/// document (for payloads too large to parse). Searches from the end when
/// `from_end`.
pub(crate) fn salvage_field(raw: &[u8], key: &str, from_end: bool) -> Option<String> {
    let needle = format!("\"{key}\"");
    let needle = needle.as_bytes();
    let positions: Box<dyn Iterator<Item = usize>> = if from_end {
        Box::new((0..raw.len().saturating_sub(needle.len() - 1)).rev())
    } else {
        Box::new(0..raw.len().saturating_sub(needle.len() - 1))
    };
    for start in positions {
        if &raw[start..start + needle.len()] != needle {
            continue;
        }
        let mut i = start + needle.len();
        while i < raw.len() && raw[i].is_ascii_whitespace() {
            i += 1;
        }
        if raw.get(i) != Some(&b':') {
            continue;
        }
        i += 1;
        while i < raw.len() && raw[i].is_ascii_whitespace() {
            i += 1;
        }
        if raw.get(i) != Some(&b'"') {
            continue;
        }
        // Find the closing quote (not escaped), within a sane length.
        let open = i;
        let mut j = i + 1;
        while j < raw.len() && j - open < 8192 {
            match raw[j] {
                b'\\' => j += 2,
                b'"' => {
                    return serde_json::from_slice::<String>(&raw[open..=j])
                        .ok()
                        .filter(|s| !s.is_empty());
                }
                _ => j += 1,
            }
        }
    }
    None
}

/// Does this platform have an adapter? Events of the others are not
/// captured, and said so.
pub fn is_supported(platform: mnemo_core::model::Platform) -> bool {
    use mnemo_core::model::Platform;
    matches!(platform, Platform::ClaudeCode | Platform::Raw)
}

/// The platform a payload really comes from. Cursor also runs the hooks of
/// `.claude/settings.json`, so its payloads (`cursor_version`,
/// `conversation_id`) can arrive on `mnemo hook claude-code`: they are read
/// as Cursor's, so that they get the same session and event keys as on
/// `mnemo hook cursor` and the store keeps one of the two.
pub fn recognise(
    platform: mnemo_core::model::Platform,
    payload: &Value,
) -> mnemo_core::model::Platform {
    use mnemo_core::model::Platform;
    let cursor = ["cursor_version", "conversation_id"]
        .iter()
        .any(|k| payload.get(k).is_some());
    match platform {
        Platform::ClaudeCode if cursor => Platform::Cursor,
        other => other,
    }
}

/// Parses a payload for `platform` (as [`recognise`]d). Unknown platforms
/// get an inert input.
pub fn parse(
    platform: mnemo_core::model::Platform,
    payload: &Value,
    event_arg: Option<&str>,
    env: &Env,
) -> HookInput {
    use mnemo_core::model::Platform;
    match recognise(platform, payload) {
        // `raw` is the Claude Code shape, for scripts and other hosts that
        // speak it.
        Platform::ClaudeCode | Platform::Raw => {
            let mut input = claude_code::parse(payload, event_arg, env);
            input.platform = platform;
            input
        }
        other => HookInput {
            platform: other,
            event: HookEvent::Other {
                name: event_arg.unwrap_or("unknown").to_owned(),
            },
            session_id: None,
            cwd: None,
            project_dir: None,
            transcript_path: None,
            oversized: None,
        },
    }
}

/// The JSON to print for `input`'s platform.
pub fn render(input: &HookInput, response: &HookResponse) -> Value {
    claude_code::render(&input.event, response)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn salvage_reads_escaped_strings_and_skips_non_strings() {
        let raw = br#"{"a": 1, "session_id" : "s\"1", "n": {"session_id": 5}}"#;
        assert_eq!(
            salvage_field(raw, "session_id", false).as_deref(),
            Some("s\"1")
        );
        assert_eq!(
            salvage_field(raw, "session_id", true).as_deref(),
            Some("s\"1")
        );
        assert_eq!(salvage_field(raw, "missing", false), None);
        assert_eq!(salvage_field(b"\"k\":\"unterminated", "k", false), None);
    }

    #[test]
    fn a_cursor_payload_on_the_claude_code_hook_is_cursors() {
        use mnemo_core::model::Platform;
        let cursor = json!({
            "conversation_id": "c1", "session_id": "c1", "cursor_version": "2026.11.14",
            "hook_event_name": "postToolUse", "workspace_roots": ["/p"], "tool_use_id": "t"
        });
        assert_eq!(recognise(Platform::ClaudeCode, &cursor), Platform::Cursor);
        assert_eq!(recognise(Platform::Cursor, &cursor), Platform::Cursor);
        let claude = json!({"session_id": "s", "hook_event_name": "Stop"});
        assert_eq!(
            recognise(Platform::ClaudeCode, &claude),
            Platform::ClaudeCode
        );
        assert_eq!(
            parse(Platform::ClaudeCode, &cursor, None, &Env::default()).platform,
            Platform::Cursor
        );
    }

    #[test]
    fn lenient_readers() {
        assert_eq!(lenient_string(Some(&json!(3))), Some("3".into()));
        assert_eq!(lenient_string(Some(&json!(""))), None);
        assert_eq!(lenient_string(Some(&json!({}))), None);
        assert_eq!(lenient_i64(Some(&json!(2.9))), Some(2));
        assert_eq!(tool_input(Some(&json!("not json"))), json!("not json"));
        assert_eq!(tool_input(None), json!({}));
    }
}
