//! Helpers shared by the integration tests: the hooks mnemo installs, the fixture files, and a
//! JSONC reader for checking what the planners produce.

#![allow(dead_code)] // each test binary uses a different subset

use std::path::Path;

use jsonc_parser::ParseOptions;
use mnemo_install::{HookSpec, shell_quote};
use serde_json::Value;

pub const BIN: &str = "/usr/local/bin/mnemo";

/// The hooks the CLI installs, for a mnemo binary at `bin`.
pub fn specs(bin: &str) -> Vec<HookSpec> {
    vec![
        spec(
            bin,
            "SessionStart",
            Some("startup|resume|clear|compact"),
            10,
        ),
        spec(bin, "UserPromptSubmit", None, 10),
        spec(bin, "PostToolUse", Some("*"), 10),
        spec(bin, "Stop", None, 30),
    ]
}

pub fn spec(bin: &str, event: &str, matcher: Option<&str>, timeout_secs: u32) -> HookSpec {
    HookSpec {
        event: event.to_string(),
        matcher: matcher.map(str::to_string),
        command: format!("{} hook claude-code {event}", shell_quote(bin)),
        timeout_secs,
    }
}

/// Every fixture under `tests/fixtures`, as (file name, text), sorted by name.
pub fn fixtures() -> Vec<(String, String)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.is_file())
        .map(|path| {
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            (name, std::fs::read_to_string(&path).unwrap())
        })
        .collect();
    files.sort();
    files
}

pub fn fixture(name: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name);
    std::fs::read_to_string(path).unwrap()
}

/// JSON with comments and trailing commas, nothing else: what the planners accept.
pub fn jsonc_options() -> ParseOptions {
    ParseOptions {
        allow_comments: true,
        allow_trailing_commas: true,
        allow_loose_object_property_names: false,
        allow_missing_commas: false,
        allow_single_quoted_strings: false,
        allow_hexadecimal_numbers: false,
        allow_unary_plus_numbers: false,
        allow_bare_decimal_point_numbers: false,
        allow_non_finite_numbers: false,
        allow_extended_string_escapes: false,
    }
}

/// The value a JSONC text holds; panics with the text when it does not parse.
pub fn value_of(text: &str) -> Value {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    jsonc_parser::parse_to_serde_value::<Value>(text, &jsonc_options())
        .unwrap_or_else(|err| panic!("does not parse: {err}\n{text}"))
}

/// The matcher groups of `event` in a settings value.
pub fn groups(settings: &Value, event: &str) -> Vec<Value> {
    settings["hooks"][event]
        .as_array()
        .cloned()
        .unwrap_or_default()
}

/// Every handler command under `event`, in order.
pub fn commands(settings: &Value, event: &str) -> Vec<String> {
    groups(settings, event)
        .iter()
        .flat_map(|group| group["hooks"].as_array().cloned().unwrap_or_default())
        .filter_map(|handler| handler["command"].as_str().map(str::to_string))
        .collect()
}
