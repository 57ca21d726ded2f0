//! Adapters: one per agent host, turning its payload into a [`HookInput`] and
//! a [`HookResponse`] back into the JSON it expects.
//!
//! Each adapter is a row of [`ADAPTERS`], keyed by the host's [`Platform`];
//! what the adapter needs to know about its host (environment variables, tool
//! names, context shape) comes from the host table, [`mnemo_core::host`].
//! Platforms without an adapter answer with a no-op, so that a misconfigured
//! host never sees an error from us, and each of their events is logged as
//! ignored (see [`is_supported`]), which `mnemo doctor` counts.
//!
//! Cursor also runs the hooks of `.claude/settings.json`: a Cursor payload
//! arriving on `mnemo hook claude-code` is recognised by its own fields
//! ([`cursor::is_cursor_payload`]) and read as Cursor's, so that the event
//! has the same session and tool ids whichever install delivered it.

pub mod claude_code;
pub mod codex;
pub mod cursor;
pub mod gemini;
pub mod opencode;

use mnemo_core::host::Host;
use mnemo_core::model::Platform;
use serde_json::Value;

use crate::event::{HookEvent, HookInput, HookResponse};

/// One host's adapter: plain functions, so the table is static and the hook
/// path pays for nothing it does not call.
pub struct Adapter {
    pub platform: Platform,
    /// A parsed payload (a JSON object) and the event named on the command
    /// line -> the event in mnemo's terms.
    pub parse: fn(&Value, Option<&str>, &Env) -> HookInput,
    /// A payload too large (or too broken) to parse: the identifiers found
    /// in its raw bytes, and the note saying so.
    pub parse_salvaged: fn(&[u8], Option<&str>, &Env, String) -> HookInput,
    /// mnemo's answer -> the JSON the host reads on stdout.
    pub render: fn(&HookEvent, &HookResponse) -> Value,
}

/// Every adapter. `raw` is the Claude Code shape, for scripts and other
/// hosts that speak it.
pub static ADAPTERS: &[Adapter] = &[
    claude_code::ADAPTER,
    Adapter {
        platform: Platform::Raw,
        ..claude_code::ADAPTER
    },
    codex::ADAPTER,
    gemini::ADAPTER,
    cursor::ADAPTER,
    opencode::ADAPTER,
];

/// The adapter of `platform`, if it has one.
pub fn adapter(platform: Platform) -> Option<&'static Adapter> {
    ADAPTERS.iter().find(|a| a.platform == platform)
}

/// What adapters read from the hook's environment.
#[derive(Debug, Clone, Default)]
pub struct Env {
    /// The host's stable project directory (`CLAUDE_PROJECT_DIR`): where the
    /// session started; stable across `cd`.
    pub project_dir: Option<String>,
    /// The host's session id variable (`CLAUDE_CODE_SESSION_ID`), for
    /// payloads that lack a session id.
    pub session_id: Option<String>,
}

impl Env {
    /// Claude Code's variables (what `raw` callers may set too).
    pub fn from_process() -> Env {
        Env::for_host(mnemo_core::host::host(Platform::ClaudeCode))
    }

    /// The variables the host row names, first set one wins.
    pub fn for_host(host: &Host) -> Env {
        let first = |names: &[&str]| {
            names
                .iter()
                .find_map(|k| std::env::var(k).ok().filter(|v| !v.trim().is_empty()))
        };
        Env {
            project_dir: first(host.project_dir_env),
            session_id: first(host.session_id_env),
        }
    }
}

/// The event a payload reports: its `hook_event_name`, else the event named
/// on the command line.
pub(crate) fn event_name(payload: &Value, event_arg: Option<&str>) -> String {
    lenient_string(payload.get("hook_event_name"))
        .or_else(|| event_arg.map(str::to_owned))
        .unwrap_or_default()
}

/// The tool a payload names in its field `key`; `unknown` when it names none.
pub(crate) fn tool_name(payload: &Value, key: &str) -> String {
    lenient_string(payload.get(key)).unwrap_or_else(|| "unknown".to_owned())
}

/// A boolean field; false when missing or not a boolean.
pub(crate) fn flag(payload: &Value, key: &str) -> bool {
    payload.get(key).and_then(Value::as_bool).unwrap_or(false)
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

/// The top-level string fields `keys` of a payload too large (or too broken)
/// to parse, found in its raw bytes (`from_end`: fields a host writes after
/// the possibly huge tool output), and `input_keys` gathered into a
/// `tool_input` object: enough for an adapter's own parser to keep the
/// event's identifiers.
pub(crate) fn salvaged_payload(
    raw: &[u8],
    keys: &[&str],
    from_end: &[&str],
    input_keys: &[&str],
) -> Value {
    let mut payload = serde_json::Map::new();
    for (key, last) in keys
        .iter()
        .map(|k| (k, false))
        .chain(from_end.iter().map(|k| (k, true)))
    {
        if let Some(v) = salvage_field(raw, key, last) {
            payload.insert((*key).to_owned(), Value::String(v));
        }
    }
    let mut input = serde_json::Map::new();
    for key in input_keys {
        if let Some(v) = salvage_field(raw, key, false) {
            input.insert((*key).to_owned(), Value::String(v));
        }
    }
    payload.insert("tool_input".to_owned(), Value::Object(input));
    Value::Object(payload)
}

/// An adapter's own `parse` over the fields salvaged from a payload too
/// large to parse ([`salvaged_payload`]), marked as oversized with `note`.
pub(crate) fn parse_salvaged_with(
    parse: fn(&Value, Option<&str>, &Env) -> HookInput,
    salvaged: &Value,
    event_arg: Option<&str>,
    env: &Env,
    note: String,
) -> HookInput {
    let mut input = parse(salvaged, event_arg, env);
    input.oversized = Some(note);
    input
}

/// Does this platform have an adapter? Events of the others are not
/// captured, and said so.
pub fn is_supported(platform: Platform) -> bool {
    adapter(platform).is_some()
}

/// Parses a payload for `platform`. Platforms without an adapter get an
/// inert input.
pub fn parse(platform: Platform, payload: &Value, event_arg: Option<&str>, env: &Env) -> HookInput {
    if platform == Platform::ClaudeCode && cursor::is_cursor_payload(payload) {
        let env = Env::for_host(mnemo_core::host::host(Platform::Cursor));
        return cursor::parse(payload, event_arg, &env);
    }
    match adapter(platform) {
        Some(a) => {
            let mut input = (a.parse)(payload, event_arg, env);
            input.platform = platform;
            input
        }
        None => inert(platform, event_arg),
    }
}

/// Identifiers salvaged from a payload that could not be parsed.
pub fn parse_salvaged(
    platform: Platform,
    raw: &[u8],
    event_arg: Option<&str>,
    env: &Env,
    note: String,
) -> HookInput {
    let parse = adapter(platform).map_or(claude_code::ADAPTER.parse_salvaged, |a| a.parse_salvaged);
    let mut input = parse(raw, event_arg, env, note);
    input.platform = platform;
    input
}

/// An input that does nothing: an event of a host without an adapter, or a
/// payload that is not an object.
pub fn inert(platform: Platform, event_arg: Option<&str>) -> HookInput {
    HookInput {
        platform,
        event: HookEvent::Other {
            name: event_arg.unwrap_or("unknown").to_owned(),
        },
        session_id: None,
        cwd: None,
        project_dir: None,
        transcript_path: None,
        oversized: None,
    }
}

/// The JSON to print for `input`'s platform.
pub fn render(input: &HookInput, response: &HookResponse) -> Value {
    let render = adapter(input.platform).map_or(claude_code::ADAPTER.render, |a| a.render);
    render(&input.event, response)
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
    fn lenient_readers() {
        assert_eq!(lenient_string(Some(&json!(3))), Some("3".into()));
        assert_eq!(lenient_string(Some(&json!(""))), None);
        assert_eq!(lenient_string(Some(&json!({}))), None);
        assert_eq!(lenient_i64(Some(&json!(2.9))), Some(2));
        assert_eq!(tool_input(Some(&json!("not json"))), json!("not json"));
        assert_eq!(tool_input(None), json!({}));
    }
}
