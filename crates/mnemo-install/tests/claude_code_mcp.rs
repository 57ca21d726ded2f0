//! Registering mnemo's MCP server in `~/.claude.json`, Claude Code's own large state file.

mod common;

use std::time::Instant;

use common::value_of;
use mnemo_install::claude_code::{find_mcp_server, find_mcp_server_strict};
use mnemo_install::{ChangeKind, McpEntry, ParseErrorKind, plan_mcp_install, plan_mcp_uninstall};
use serde_json::json;

const MNEMO: &str = "/usr/local/bin/mnemo";

fn args() -> Vec<String> {
    vec!["mcp".to_string()]
}

/// A `~/.claude.json` the way Claude Code writes it (JSON.stringify with two spaces, no final
/// newline), with `projects` entries (each with its own `mcpServers`) to make it large.
fn claude_json(projects: usize, with_servers: bool) -> String {
    let mut text = String::from(
        "{\n  \"numStartups\": 212,\n  \"installMethod\": \"native\",\n  \"autoUpdates\": true,\n  \"tipsHistory\": {\n    \"new-user-warmup\": 7,\n    \"memory-command\": 190\n  },\n",
    );
    if with_servers {
        text.push_str(
            "  \"mcpServers\": {\n    \"github\": {\n      \"type\": \"http\",\n      \"url\": \"https://api.githubcopilot.com/mcp/\"\n    },\n    \"playwright\": {\n      \"type\": \"stdio\",\n      \"command\": \"npx\",\n      \"args\": [\n        \"@playwright/mcp@latest\"\n      ],\n      \"env\": {}\n    }\n  },\n",
        );
    }
    text.push_str("  \"projects\": {\n");
    for i in 0..projects {
        let comma = if i + 1 < projects { "," } else { "" };
        text.push_str(&format!(
            "    \"/home/me/src/project-{i}\": {{\n      \"allowedTools\": [],\n      \"history\": [\n        {{\n          \"display\": \"fix the \\\"flaky\\\" test in ünïcode.rs\",\n          \"pastedContents\": {{}}\n        }}\n      ],\n      \"mcpServers\": {{\n        \"mnemo\": {{\n          \"type\": \"stdio\",\n          \"command\": \"/project/local/mnemo\",\n          \"args\": []\n        }}\n      }},\n      \"enabledMcpjsonServers\": [],\n      \"hasTrustDialogAccepted\": true,\n      \"lastCost\": 0.1234{i}\n    }}{comma}\n"
        ));
    }
    text.push_str(
        "  },\n  \"userID\": \"3f1c0e5d9a\",\n  \"firstStartTime\": \"2025-06-01T08:00:00.000Z\",\n  \"hasCompletedOnboarding\": true\n}",
    );
    text
}

fn mnemo_entry() -> serde_json::Value {
    json!({ "type": "stdio", "command": MNEMO, "args": ["mcp"], "env": {} })
}

#[test]
fn adds_only_our_server_next_to_the_others() {
    let original = claude_json(3, true);
    let edit = plan_mcp_install(&original, "mnemo", MNEMO, &args()).unwrap();
    assert_eq!(edit.changes.len(), 1);
    assert_eq!(edit.changes[0].kind, ChangeKind::Added);
    assert_eq!(edit.changes[0].event, "mcpServers.mnemo");
    assert_eq!(edit.changes[0].command, "/usr/local/bin/mnemo mcp");

    let mut expected = value_of(&original);
    expected["mcpServers"]
        .as_object_mut()
        .unwrap()
        .insert("mnemo".into(), mnemo_entry());
    assert_eq!(value_of(&edit.new_text), expected);
    assert!(edit.new_text.contains(
        "    },\n    \"mnemo\": {\n      \"type\": \"stdio\",\n      \"command\": \"/usr/local/bin/mnemo\",\n      \"args\": [\"mcp\"],\n      \"env\": {}\n    }\n  },\n  \"projects\""
    ), "{}", &edit.new_text[..800]);
    // (The CST writes arrays of scalars on one line; Claude Code reformats on its next write.)
    // The per-project `mnemo` entries are not ours to touch.
    assert!(
        edit.new_text
            .contains("\"command\": \"/project/local/mnemo\"")
    );
}

#[test]
fn creates_mcp_servers_when_missing() {
    let original = claude_json(2, false);
    let edit = plan_mcp_install(&original, "mnemo", MNEMO, &args()).unwrap();
    assert_eq!(edit.changes[0].kind, ChangeKind::Added);
    assert!(edit.new_text.ends_with(
        "  \"hasCompletedOnboarding\": true,\n  \"mcpServers\": {\n    \"mnemo\": {\n      \"type\": \"stdio\",\n      \"command\": \"/usr/local/bin/mnemo\",\n      \"args\": [\"mcp\"],\n      \"env\": {}\n    }\n  }\n}"
    ));

    for missing in ["", "\n"] {
        let edit = plan_mcp_install(missing, "mnemo", MNEMO, &args()).unwrap();
        let value: serde_json::Value = serde_json::from_str(&edit.new_text).unwrap();
        assert_eq!(value, json!({ "mcpServers": { "mnemo": mnemo_entry() } }));
    }
}

#[test]
fn install_is_idempotent() {
    for original in [claude_json(2, true), claude_json(2, false), String::new()] {
        let first = plan_mcp_install(&original, "mnemo", MNEMO, &args()).unwrap();
        let second = plan_mcp_install(&first.new_text, "mnemo", MNEMO, &args()).unwrap();
        assert_eq!(second.new_text, first.new_text);
        assert!(second.is_noop());
        assert_eq!(second.changes[0].kind, ChangeKind::Unchanged);
    }
}

#[test]
fn an_older_entry_is_updated_field_by_field() {
    let original = r#"{
  "mcpServers": {
    "mnemo": {
      "type": "stdio",
      "command": "/home/me/.cargo/bin/mnemo",
      "args": ["serve"],
      "env": { "MNEMO_LOG": "debug" }
    }
  }
}"#;
    let edit = plan_mcp_install(original, "mnemo", MNEMO, &args()).unwrap();
    assert_eq!(edit.changes[0].kind, ChangeKind::Updated);
    assert_eq!(
        value_of(&edit.new_text)["mcpServers"]["mnemo"],
        json!({ "type": "stdio", "command": MNEMO, "args": ["mcp"], "env": { "MNEMO_LOG": "debug" } })
    );
    assert!(
        edit.new_text
            .contains("\"env\": { \"MNEMO_LOG\": \"debug\" }")
    );

    // An entry that is not an object at all is replaced.
    let edit = plan_mcp_install(
        r#"{"mcpServers": {"mnemo": "broken"}}"#,
        "mnemo",
        MNEMO,
        &args(),
    )
    .unwrap();
    assert_eq!(edit.changes[0].kind, ChangeKind::Updated);
    assert_eq!(
        value_of(&edit.new_text)["mcpServers"]["mnemo"],
        mnemo_entry()
    );
}

#[test]
fn uninstall_reverses_install_byte_for_byte() {
    for original in [
        claude_json(3, true),
        claude_json(3, false),
        format!("{}\n", claude_json(1, true)),
        "{}".to_string(),
        "{\n  \"mcpServers\": {\n    \"other\": { \"command\": \"x\" }\n  }\n}\n".to_string(),
    ] {
        let installed = plan_mcp_install(&original, "mnemo", MNEMO, &args()).unwrap();
        let uninstalled = plan_mcp_uninstall(&installed.new_text, "mnemo").unwrap();
        assert_eq!(uninstalled.new_text, original);
        assert_eq!(uninstalled.changes.len(), 1);
        assert_eq!(uninstalled.changes[0].kind, ChangeKind::Removed);
        assert_eq!(uninstalled.changes[0].command, "/usr/local/bin/mnemo mcp");
    }
}

#[test]
fn uninstall_drops_an_emptied_mcp_servers_and_nothing_else() {
    // `"mcpServers": {}` left by `claude mcp remove` does not come back: Claude Code reads a missing
    // key the same way, and a key mnemo created has to go for the round trip above.
    let original = "{\n  \"numStartups\": 3,\n  \"mcpServers\": {}\n}";
    let installed = plan_mcp_install(original, "mnemo", MNEMO, &args()).unwrap();
    let uninstalled = plan_mcp_uninstall(&installed.new_text, "mnemo").unwrap();
    assert_eq!(uninstalled.new_text, "{\n  \"numStartups\": 3\n}");
}

#[test]
fn uninstall_without_our_server_is_a_noop() {
    for original in [
        claude_json(2, true),
        claude_json(2, false),
        String::new(),
        "{}".into(),
    ] {
        let edit = plan_mcp_uninstall(&original, "mnemo").unwrap();
        assert_eq!(edit.new_text, original);
        assert!(edit.changes.is_empty() && edit.is_noop());
    }
}

#[test]
fn a_large_file_is_handled_quickly() {
    let original = claude_json(3000, true);
    assert!(original.len() > 1_000_000, "{} bytes", original.len());
    let started = Instant::now();
    let installed = plan_mcp_install(&original, "mnemo", MNEMO, &args()).unwrap();
    let uninstalled = plan_mcp_uninstall(&installed.new_text, "mnemo").unwrap();
    assert_eq!(uninstalled.new_text, original);
    // Generous for debug builds on a slow CI machine; a real file is far smaller.
    assert!(
        started.elapsed().as_secs() < 20,
        "took {:?}",
        started.elapsed()
    );
}

#[test]
fn shape_errors_leave_the_file_alone() {
    for (text, message) in [
        (
            "{\"mcpServers\": []}",
            "`mcpServers` must be an object, but it is an array",
        ),
        (
            "{\"mcpServers\": {}, \"mcpServers\": {}}",
            "`mcpServers` appears more than once",
        ),
        (
            "{\"mcpServers\": {\"mnemo\": {}, \"mnemo\": {}}}",
            "`mcpServers.mnemo` appears more than once",
        ),
        ("[1]", "must hold a JSON object"),
    ] {
        for result in [
            plan_mcp_install(text, "mnemo", MNEMO, &args()),
            plan_mcp_uninstall(text, "mnemo"),
        ] {
            let err = result.unwrap_err();
            assert_eq!(err.kind, ParseErrorKind::Shape);
            assert!(err.message.contains(message), "{text}: {}", err.message);
        }
    }
    let err = plan_mcp_install("{\"numStartups\": 1,}}", "mnemo", MNEMO, &args()).unwrap_err();
    assert_eq!(
        (err.kind, err.line, err.column),
        (ParseErrorKind::Syntax, 1, 20)
    );
}

#[test]
fn shown_command_is_quoted_for_the_shell() {
    let edit = plan_mcp_install("{}", "mnemo", "/opt/my dir/mnemo", &args()).unwrap();
    let expected = if cfg!(windows) {
        "\"/opt/my dir/mnemo\" mcp"
    } else {
        "'/opt/my dir/mnemo' mcp"
    };
    assert_eq!(edit.changes[0].command, expected);
    // The file itself holds the plain path.
    assert_eq!(
        value_of(&edit.new_text)["mcpServers"]["mnemo"]["command"],
        "/opt/my dir/mnemo"
    );
}

#[test]
fn claude_json_is_read_strictly_and_other_mcp_files_leniently() {
    let installed = plan_mcp_install(&claude_json(1, true), "mnemo", "/opt/mnemo", &args())
        .unwrap()
        .new_text;
    let wanted = Some(McpEntry {
        command: "/opt/mnemo".into(),
        args: args(),
    });
    assert_eq!(find_mcp_server_strict(&installed, "mnemo").unwrap(), wanted);
    let commented = installed.replacen('{', "{\n  // a note\n", 1);
    assert_eq!(find_mcp_server(&commented, "mnemo").unwrap(), wanted);
    let err = find_mcp_server_strict(&commented, "mnemo").unwrap_err();
    assert_eq!(err.kind, ParseErrorKind::Syntax);
    assert_eq!(err.line, 2, "{err}");
}
