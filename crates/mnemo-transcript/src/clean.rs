//! The capture's privacy rules, applied to what a transcript yields: every
//! text through the sanitizer; a tool call's input sanitized, and its result
//! withheld when the call touches a deny-listed file.

use mnemo_core::privacy::{Sanitizer, is_entirely_private};
use serde_json::Value;

/// Sanitized text, None when nothing is left (all private or blank).
pub fn text(sanitizer: &Sanitizer, raw: &str) -> Option<String> {
    let clean = sanitizer.text(raw);
    let trimmed = clean.trim();
    if trimmed.is_empty() || is_entirely_private(raw, &clean) {
        None
    } else {
        Some(trimmed.to_owned())
    }
}

/// The tool input, sanitized in place; returns why the result must be
/// withheld, if it must.
pub fn tool_input(sanitizer: &Sanitizer, input: &mut Value) -> Option<String> {
    let withheld = denied_path(sanitizer, input);
    if withheld.is_some()
        && let Value::Object(map) = input
    {
        // A write to a deny-listed file carries its contents: keep the name.
        map.retain(|k, _| {
            matches!(
                k.as_str(),
                "file_path" | "notebook_path" | "path" | "command"
            )
        });
    }
    sanitizer.value(input);
    withheld
}

/// A tool result, sanitized; None when there is nothing.
pub fn tool_result(sanitizer: &Sanitizer, mut result: Value) -> Option<Value> {
    if result.is_null() {
        return None;
    }
    sanitizer.value(&mut result);
    Some(result)
}

fn denied_path(sanitizer: &Sanitizer, input: &Value) -> Option<String> {
    for key in ["file_path", "notebook_path", "path"] {
        if let Some(path) = input.get(key).and_then(Value::as_str)
            && let Some(pattern) = sanitizer.denied_file(path)
        {
            return Some(format!(
                "contents withheld: {path} matches the deny list (`{pattern}`)"
            ));
        }
    }
    let command = input.get("command").and_then(Value::as_str)?;
    let (word, pattern) = sanitizer.denied_file_in_command(command)?;
    Some(format!(
        "output withheld: the command names {word}, which matches the deny list (`{pattern}`)"
    ))
}
