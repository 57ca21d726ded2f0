//! Shared pieces of the integration tests: batches built from real Claude
//! Code payloads, a well-formed model answer, provider configurations.
#![allow(dead_code)]

pub mod transcript;

use std::path::PathBuf;

use mnemo_compress::{BatchEvent, TurnBatch};
use mnemo_core::config::ProviderConfig;
use serde_json::{Value, json};

/// The repository's captured Claude Code hook payloads.
pub fn fixture(name: &str) -> Value {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../mnemo/tests/fixtures/claude-code")
        .join(name);
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
    serde_json::from_str(&text).unwrap()
}

/// A stored event made from a PostToolUse / PostToolUseFailure payload, the
/// way capture files it (files touched as absolute paths).
pub fn event_from(payload: &Value) -> BatchEvent {
    let tool = payload["tool_name"].as_str().unwrap_or_default().to_owned();
    let input = payload["tool_input"].clone();
    let path = input
        .get("file_path")
        .and_then(Value::as_str)
        .map(str::to_owned);
    let (mut read, mut modified) = (Vec::new(), Vec::new());
    match tool.as_str() {
        "Read" => read.extend(path),
        "Write" | "Edit" | "MultiEdit" => modified.extend(path),
        _ => {}
    }
    BatchEvent {
        id: 1,
        tool_name: tool,
        failed: payload["hook_event_name"] == "PostToolUseFailure",
        input,
        response: payload.get("tool_response").cloned(),
        error: payload
            .get("error")
            .and_then(Value::as_str)
            .map(str::to_owned),
        files_read: read,
        files_modified: modified,
        note: None,
        created_at: 0,
        tool_use_id: payload
            .get("tool_use_id")
            .and_then(Value::as_str)
            .map(str::to_owned),
    }
}

pub const ROOT: &str = "/home/dev/src/demo";

/// A realistic turn: read, create auth.py, a test run that fails, a fix in
/// `login`, the same test run passing (the fixtures of Claude Code 2.1.328,
/// with the failing command made a test run).
pub fn fix_login_turn() -> TurnBatch {
    let read = {
        let mut p = fixture("PostToolUse.Read.json");
        p["tool_input"]["file_path"] = json!(format!("{ROOT}/config.py"));
        p["tool_response"]["file"]["filePath"] = json!(format!("{ROOT}/config.py"));
        event_from(&p)
    };
    let write = event_from(&fixture("PostToolUse.Write.json"));
    let fail = {
        let mut p = fixture("PostToolUseFailure.Bash.json");
        p["tool_input"]["command"] = json!("python -m pytest tests/test_auth.py -q");
        p["error"] = json!(
            "Exit code 1\nF\nE   AssertionError: login('admin', 'wrong') returned True\n1 failed in 0.05s"
        );
        event_from(&p)
    };
    let edit = event_from(&fixture("PostToolUse.Edit.json"));
    let pass = {
        let mut p = fixture("PostToolUse.Bash.json");
        p["tool_input"]["command"] = json!("python -m pytest tests/test_auth.py -q");
        p["tool_response"]["stdout"] = json!(".\n1 passed in 0.04s");
        event_from(&p)
    };
    let mut events = vec![read, write, fail, edit, pass];
    for (i, e) in events.iter_mut().enumerate() {
        e.id = i as i64 + 10;
    }
    TurnBatch {
        project_root: ROOT.into(),
        project_name: "demo".into(),
        session_id: 1,
        prompt_number: 1,
        prompt: Some("fix login please".into()),
        events,
        last_assistant_message: Some(
            "Refactored login to use check_hash. The bug was caused by comparing the user name \
             only. Next, consider adding rate limiting."
                .into(),
        ),
        turn_complete: true,
        ..Default::default()
    }
}

/// What a well-behaved model answers for [`fix_login_turn`].
pub fn good_answer() -> Value {
    json!({
        "observations": [{
            "type": "bugfix",
            "title": "login() checks the password hash",
            "subtitle": "auth.py compared only the user name",
            "narrative": "login accepted any password for admin. It now calls check_hash.",
            "facts": ["login() calls check_hash(user, pw)", "pytest tests/test_auth.py passes"],
            "concepts": ["auth", "python"],
            "files_read": ["config.py"],
            "files_modified": ["auth.py"]
        }],
        "summary": {
            "request": "Fix login",
            "investigated": "config.py and auth.py",
            "learned": "login compared only the user name",
            "completed": "login checks the password hash",
            "next_steps": "",
            "notes": ""
        }
    })
}

pub fn config(name: &str, base_url: &str, key: &str) -> ProviderConfig {
    ProviderConfig {
        name: name.into(),
        base_url: base_url.into(),
        api_key: key.into(),
        timeout_secs: 10,
        max_output_tokens: 1500,
        ..Default::default()
    }
}
