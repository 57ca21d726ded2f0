//! Installing and uninstalling mnemo's hooks in Claude Code settings files, against realistic
//! files: Claude Code's own output, hand-edited JSONC, other tools' hooks.

mod common;

use common::{BIN, commands, fixture, fixtures, groups, spec, specs, value_of};
use mnemo_install::{ChangeKind, ParseErrorKind, find_mnemo_hooks, plan_install, plan_uninstall};
use serde_json::json;

fn kinds(edit: &mnemo_install::SettingsEdit) -> Vec<(ChangeKind, String)> {
    edit.changes
        .iter()
        .map(|c| (c.kind, c.event.clone()))
        .collect()
}

// 1. Fresh, missing or empty file.

#[test]
fn empty_file_gets_every_hook_pretty_printed() {
    let hooks = vec![
        spec(BIN, "PostToolUse", Some("*"), 10),
        spec(BIN, "UserPromptSubmit", None, 10),
    ];
    let expected = r#"{
  "hooks": {
    "PostToolUse": [
      {
        "matcher": "*",
        "hooks": [
          {
            "type": "command",
            "command": "/usr/local/bin/mnemo hook claude-code PostToolUse",
            "timeout": 10
          }
        ]
      }
    ],
    "UserPromptSubmit": [
      {
        "hooks": [
          {
            "type": "command",
            "command": "/usr/local/bin/mnemo hook claude-code UserPromptSubmit",
            "timeout": 10
          }
        ]
      }
    ]
  }
}
"#;
    // A missing file is read as "".
    for existing in ["", "\n", "  \n\n"] {
        let edit = plan_install(existing, &hooks).unwrap();
        assert_eq!(edit.new_text.trim_start(), expected, "from {existing:?}");
        let value: serde_json::Value = serde_json::from_str(&edit.new_text).unwrap();
        assert_eq!(commands(&value, "PostToolUse").len(), 1);
        assert_eq!(
            kinds(&edit),
            [
                (ChangeKind::Added, "PostToolUse".to_string()),
                (ChangeKind::Added, "UserPromptSubmit".to_string())
            ]
        );
        assert!(!edit.is_noop());
    }
}

#[test]
fn empty_object_gets_every_hook_as_strict_json() {
    for existing in ["{}", "{}\n", "{ }"] {
        let edit = plan_install(existing, &specs(BIN)).unwrap();
        let value: serde_json::Value = serde_json::from_str(&edit.new_text).unwrap();
        for hook in specs(BIN) {
            assert_eq!(
                commands(&value, &hook.event),
                std::slice::from_ref(&hook.command)
            );
        }
        assert!(
            edit.new_text
                .starts_with("{\n  \"hooks\": {\n    \"SessionStart\": [")
        );
    }
}

#[test]
fn file_with_only_comments_keeps_them() {
    let edit = plan_install("// user settings go here\n", &specs(BIN)).unwrap();
    assert!(
        edit.new_text
            .starts_with("// user settings go here\n{\n  \"hooks\"")
    );
    value_of(&edit.new_text);
}

// 2. Comments, trailing commas, indentation and key order.

#[test]
fn comments_trailing_commas_and_indentation_are_kept() {
    let original = fixture("hand_edited.jsonc");
    let edit = plan_install(&original, &specs(BIN)).unwrap();
    assert_lines_kept_in_order(&original, &edit.new_text);
    // New content follows the file: four spaces, trailing commas.
    assert!(
        edit.new_text.contains(
            "\n            {\n                \"matcher\": \"*\",\n                \"hooks\": [\n                    {\n                        \"type\": \"command\",\n                        \"command\": \"/usr/local/bin/mnemo hook claude-code PostToolUse\",\n                        \"timeout\": 10,\n                    },\n                ],\n            },\n"
        ),
        "{}",
        edit.new_text
    );
    // Key order: hooks stays between model and statusLine.
    let model = edit.new_text.find("\"model\"").unwrap();
    let hooks = edit.new_text.find("\"hooks\"").unwrap();
    let status_line = edit.new_text.find("\"statusLine\"").unwrap();
    assert!(model < hooks && hooks < status_line);
}

#[test]
fn tabs_and_crlf_are_followed() {
    let original = fixture("tabs_crlf.json");
    assert!(original.contains("\r\n\t\"model\""));
    let edit = plan_install(&original, &specs(BIN)).unwrap();
    assert_lines_kept_in_order(&original, &edit.new_text);
    assert_eq!(
        edit.new_text.matches('\n').count(),
        edit.new_text.matches("\r\n").count()
    );
    assert!(
        edit.new_text
            .contains("\r\n\t\"hooks\": {\r\n\t\t\"SessionStart\": [\r\n\t\t\t{\r\n")
    );
    assert!(
        !edit.new_text.contains("  "),
        "no space indentation in a tab file"
    );
}

#[test]
fn byte_order_mark_is_kept() {
    let original = format!("\u{feff}{}", fixture("claude_written.json"));
    let edit = plan_install(&original, &specs(BIN)).unwrap();
    assert!(edit.new_text.starts_with("\u{feff}{\n"));
    assert_eq!(plan_uninstall(&edit.new_text).unwrap().new_text, original);
}

#[test]
fn new_events_follow_existing_ones_and_comments_stay_put() {
    let original = fixture("hooks_last_with_comment.jsonc");
    let edit = plan_install(&original, &specs(BIN)).unwrap();
    assert_lines_kept_in_order(&original, &edit.new_text);
    let pre_tool_use = edit.new_text.find("\"PreToolUse\"").unwrap();
    let session_start = edit.new_text.find("\"SessionStart\"").unwrap();
    let comment = edit.new_text.find("// more hooks later").unwrap();
    assert!(pre_tool_use < session_start && session_start < comment);
    assert!(edit.new_text.contains("  } // end of hooks\n}\n"));
}

// 3. Other tools' hooks stay, and ours go in groups of their own.

#[test]
fn other_hooks_are_untouched_and_ours_get_their_own_group() {
    let original = fixture("hand_edited.jsonc");
    let before = value_of(&original);
    let edit = plan_install(&original, &specs(BIN)).unwrap();
    let after = value_of(&edit.new_text);

    let prettier = json!({ "matcher": "Write|Edit", "hooks": [{ "type": "command", "command": "prettier --write" }] });
    let claude_mem = before["hooks"]["SessionStart"][0].clone();
    assert_eq!(groups(&after, "PostToolUse")[0], prettier);
    assert_eq!(groups(&after, "SessionStart")[0], claude_mem);
    assert_eq!(
        groups(&after, "PostToolUse")[1],
        json!({ "matcher": "*", "hooks": [{
            "type": "command",
            "command": "/usr/local/bin/mnemo hook claude-code PostToolUse",
            "timeout": 10
        }] })
    );
    assert_eq!(groups(&after, "PostToolUse").len(), 2);
    assert_eq!(groups(&after, "SessionStart").len(), 2);
    // Everything but `hooks` is exactly as it was.
    let without_hooks = |mut v: serde_json::Value| {
        v.as_object_mut().unwrap().remove("hooks");
        v
    };
    assert_eq!(without_hooks(after), without_hooks(before));
}

#[test]
fn unknown_handler_types_are_left_alone() {
    let original = fixture("other_handler_types.json");
    let edit = plan_install(&original, &specs(BIN)).unwrap();
    let after = value_of(&edit.new_text);
    // The http handler carries a command that looks like ours, but it is not a command handler.
    assert_eq!(
        groups(&after, "PostToolUse")[0],
        value_of(&original)["hooks"]["PostToolUse"][0]
    );
    assert_eq!(groups(&after, "PostToolUse").len(), 2);
    assert_eq!(groups(&after, "Stop")[0]["hooks"][0]["type"], "prompt");
    assert!(edit.changes.iter().all(|c| c.kind == ChangeKind::Added));

    let uninstall = plan_uninstall(&edit.new_text).unwrap();
    assert_eq!(uninstall.new_text, original);
    assert_eq!(plan_uninstall(&original).unwrap().new_text, original);
}

// 4. Idempotence.

#[test]
fn installing_twice_changes_nothing_the_second_time() {
    for (name, original) in fixtures() {
        let first = plan_install(&original, &specs(BIN)).unwrap();
        let second = plan_install(&first.new_text, &specs(BIN)).unwrap();
        assert_eq!(second.new_text, first.new_text, "{name}");
        assert!(second.is_noop(), "{name}: {:?}", second.changes);
        assert_eq!(second.changes.len(), specs(BIN).len());
        assert!(
            second
                .changes
                .iter()
                .all(|c| c.kind == ChangeKind::Unchanged)
        );
    }
}

// 5. Older entries of ours are updated in place; duplicates collapse.

const OLD_INSTALL: &str = r#"{
  "model": "opus",
  "hooks": {
    "PostToolUse": [
      {
        "matcher": "Write",
        "hooks": [{ "type": "command", "command": "prettier --write" }]
      },
      // mnemo, installed last year
      {
        "matcher": "Edit|Write",
        "hooks": [
          {
            "type": "command",
            "command": "/home/me/.cargo/bin/mnemo hook claude-code PostToolUse",
            "timeout": 5 // seconds
          }
        ]
      }
    ],
    "UserPromptSubmit": [
      {
        "hooks": [
          { "type": "command", "command": "'/opt/old dir/mnemo' hook claude-code UserPromptSubmit", "timeout": 10 }
        ]
      },
      {
        "hooks": [
          { "type": "command", "command": "/usr/local/bin/mnemo hook claude-code UserPromptSubmit", "timeout": 10 }
        ]
      }
    ]
  }
}
"#;

#[test]
fn older_entries_are_updated_in_place() {
    let hooks = vec![
        spec(BIN, "PostToolUse", Some("*"), 10),
        spec(BIN, "UserPromptSubmit", None, 10),
    ];
    let edit = plan_install(OLD_INSTALL, &hooks).unwrap();
    assert_eq!(
        kinds(&edit),
        [
            (ChangeKind::Updated, "PostToolUse".to_string()),
            // The entry that already matches wins; the other one is the duplicate.
            (ChangeKind::Unchanged, "UserPromptSubmit".to_string()),
            (ChangeKind::Removed, "UserPromptSubmit".to_string()),
        ]
    );
    assert_eq!(
        edit.changes[2].command,
        "'/opt/old dir/mnemo' hook claude-code UserPromptSubmit"
    );
    // The updated entry stays where it was, with its comments.
    let expected_group = r#"      // mnemo, installed last year
      {
        "matcher": "*",
        "hooks": [
          {
            "type": "command",
            "command": "/usr/local/bin/mnemo hook claude-code PostToolUse",
            "timeout": 10 // seconds
          }
        ]
      }
    ],"#;
    assert!(edit.new_text.contains(expected_group), "{}", edit.new_text);
    let after = value_of(&edit.new_text);
    assert_eq!(
        commands(&after, "PostToolUse"),
        ["prettier --write", hooks[0].command.as_str()]
    );
    assert_eq!(
        commands(&after, "UserPromptSubmit"),
        [hooks[1].command.as_str()]
    );
    assert_eq!(groups(&after, "UserPromptSubmit").len(), 1);

    let again = plan_install(&edit.new_text, &hooks).unwrap();
    assert!(again.is_noop());
    assert_eq!(again.new_text, edit.new_text);
}

#[test]
fn duplicates_in_one_group_collapse_and_missing_fields_are_added() {
    let original = r#"{
  "hooks": {
    "Stop": [
      {
        "hooks": [
          { "type": "command", "command": "/old/mnemo hook claude-code Stop" },
          { "type": "command", "command": "/older/mnemo hook claude-code Stop", "timeout": 1 }
        ]
      }
    ]
  }
}"#;
    let hook = spec(BIN, "Stop", None, 30);
    let edit = plan_install(original, std::slice::from_ref(&hook)).unwrap();
    assert_eq!(
        kinds(&edit),
        [
            (ChangeKind::Updated, "Stop".to_string()),
            (ChangeKind::Removed, "Stop".to_string())
        ]
    );
    let after = value_of(&edit.new_text);
    assert_eq!(
        after,
        json!({ "hooks": { "Stop": [{ "hooks": [
            { "type": "command", "command": hook.command, "timeout": 30 }
        ] }] } })
    );
}

#[test]
fn matcher_is_added_or_dropped_on_a_group_of_ours() {
    let original = r#"{ "hooks": {
  "PostToolUse": [ { "hooks": [ { "type": "command", "command": "mnemo hook claude-code PostToolUse", "timeout": 10 } ] } ],
  "UserPromptSubmit": [ { "matcher": "*", "hooks": [ { "type": "command", "command": "mnemo hook claude-code UserPromptSubmit", "timeout": 10 } ] } ]
} }"#;
    let hooks = vec![
        spec("mnemo", "PostToolUse", Some("*"), 10),
        spec("mnemo", "UserPromptSubmit", None, 10),
    ];
    let edit = plan_install(original, &hooks).unwrap();
    assert!(edit.changes.iter().all(|c| c.kind == ChangeKind::Updated));
    let after = value_of(&edit.new_text);
    assert_eq!(groups(&after, "PostToolUse")[0]["matcher"], "*");
    assert!(
        groups(&after, "UserPromptSubmit")[0]
            .get("matcher")
            .is_none()
    );
    assert!(plan_install(&edit.new_text, &hooks).unwrap().is_noop());
}

#[test]
fn entry_of_ours_in_a_shared_group_moves_out_when_its_matcher_changes() {
    let original = r#"{
  "hooks": {
    "PostToolUse": [
      {
        "matcher": "Write",
        "hooks": [
          { "type": "command", "command": "prettier --write" },
          { "type": "command", "command": "/old/mnemo hook claude-code PostToolUse", "timeout": 10 }
        ]
      }
    ]
  }
}
"#;
    let hook = spec(BIN, "PostToolUse", Some("*"), 10);
    let edit = plan_install(original, std::slice::from_ref(&hook)).unwrap();
    assert_eq!(
        kinds(&edit),
        [(ChangeKind::Updated, "PostToolUse".to_string())]
    );
    let after = value_of(&edit.new_text);
    assert_eq!(
        groups(&after, "PostToolUse"),
        [
            json!({ "matcher": "Write", "hooks": [{ "type": "command", "command": "prettier --write" }] }),
            json!({ "matcher": "*", "hooks": [{ "type": "command", "command": hook.command, "timeout": 10 }] }),
        ]
    );
    // With the same matcher it is updated where it is, and uninstall leaves the user's handler.
    let same_matcher = spec(BIN, "PostToolUse", Some("Write"), 10);
    let edit = plan_install(original, std::slice::from_ref(&same_matcher)).unwrap();
    assert_eq!(groups(&value_of(&edit.new_text), "PostToolUse").len(), 1);
    let uninstall = plan_uninstall(&edit.new_text).unwrap();
    assert_eq!(
        groups(&value_of(&uninstall.new_text), "PostToolUse"),
        [
            json!({ "matcher": "Write", "hooks": [{ "type": "command", "command": "prettier --write" }] })
        ]
    );
}

#[test]
fn events_mnemo_no_longer_hooks_are_removed() {
    let installed = plan_install("{}", &specs(BIN)).unwrap().new_text;
    let fewer: Vec<_> = specs(BIN)
        .into_iter()
        .filter(|s| s.event != "Stop")
        .collect();
    let edit = plan_install(&installed, &fewer).unwrap();
    assert_eq!(edit.changes.last().unwrap().kind, ChangeKind::Removed);
    assert_eq!(edit.changes.last().unwrap().event, "Stop");
    assert!(value_of(&edit.new_text)["hooks"].get("Stop").is_none());
}

// 6. Uninstall removes exactly what install added.

#[test]
fn uninstall_reverses_install_byte_for_byte() {
    let binaries = [
        "/usr/local/bin/mnemo",
        "/opt/my dir/mnemo",
        "/home/o'neil/bin/mnemo",
    ];
    let mut cases = fixtures();
    cases.push(("empty object".into(), "{}".into()));
    cases.push(("empty object, newline".into(), "{}\n".into()));
    // Someone else's hooks that look a lot like ours.
    cases.push((
        "lookalikes".into(),
        OLD_INSTALL.replace("claude-code", "codex"),
    ));
    for (name, original) in cases {
        for bin in binaries {
            let all = specs(bin);
            for hooks in [&all[..], &all[..1], &all[2..3]] {
                let installed = plan_install(&original, hooks).unwrap();
                assert_ne!(installed.new_text, original, "{name}");
                let uninstalled = plan_uninstall(&installed.new_text).unwrap();
                assert_eq!(uninstalled.new_text, original, "{name} with {bin}");
                assert_eq!(uninstalled.changes.len(), hooks.len());
                assert!(
                    uninstalled
                        .changes
                        .iter()
                        .all(|c| c.kind == ChangeKind::Removed)
                );
            }
        }
    }
}

#[test]
fn uninstall_without_our_hooks_is_a_noop() {
    let mut cases = fixtures();
    cases.push(("empty".into(), String::new()));
    cases.push(("comment".into(), "// nothing\n".into()));
    for (name, original) in cases {
        let edit = plan_uninstall(&original).unwrap();
        assert_eq!(edit.new_text, original, "{name}");
        assert!(edit.changes.is_empty() && edit.is_noop(), "{name}");
    }
}

#[test]
fn uninstall_removes_only_what_empties() {
    let edit = plan_uninstall(OLD_INSTALL).unwrap();
    assert_eq!(edit.changes.len(), 3);
    let after = value_of(&edit.new_text);
    assert_eq!(
        after,
        json!({ "model": "opus", "hooks": { "PostToolUse": [
            { "matcher": "Write", "hooks": [{ "type": "command", "command": "prettier --write" }] }
        ] } })
    );
    // The user's own hooks are still there byte for byte, and so is every comment: a comment is
    // the user's, even when it is about mnemo.
    let expected = r#"{
  "model": "opus",
  "hooks": {
    "PostToolUse": [
      {
        "matcher": "Write",
        "hooks": [{ "type": "command", "command": "prettier --write" }]
      }
      // mnemo, installed last year
    ]
  }
}
"#;
    assert_eq!(edit.new_text, expected);

    // With nothing else in `hooks`, `hooks` goes too.
    let only_ours = plan_install("{\n  \"model\": \"opus\"\n}\n", &specs(BIN))
        .unwrap()
        .new_text;
    assert_eq!(
        plan_uninstall(&only_ours).unwrap().new_text,
        "{\n  \"model\": \"opus\"\n}\n"
    );
}

#[test]
fn uninstall_never_removes_the_users_comments() {
    // Written by hand: nothing in `hooks` but ours, and comments around it.
    let original = r#"{
  /* before */ "hooks": { // managed by hand
    "Stop": [
      { "hooks": [ { "type": "command", "command": "mnemo hook claude-code Stop" } ] }
    ]
  }, // end of hooks
  "model": "opus"
}"#;
    let edit = plan_uninstall(original).unwrap();
    assert_eq!(
        edit.new_text,
        "{\n  /* before */ \"hooks\": { // managed by hand\n  }, // end of hooks\n  \"model\": \"opus\"\n}"
    );
    let in_the_array = "{\"hooks\": {\"Stop\": [\n  // mine\n  {\"hooks\": [{\"type\": \"command\", \"command\": \"mnemo hook claude-code Stop\"}]}\n]}}";
    let edit = plan_uninstall(in_the_array).unwrap();
    assert_eq!(edit.new_text, "{\"hooks\": {\"Stop\": [\n  // mine\n]}}");
}

/// Where install→uninstall cannot give back the very same bytes, it still gives back the same
/// settings, or settings Claude Code reads the same way. These are the cases to know about.
#[test]
fn round_trip_limits_keep_the_meaning() {
    let cases = [
        // A single-line object that gains a key is made multi-line by the CST's insert.
        (
            r#"{"model":"opus","hooks":{"PreToolUse":[]}}"#,
            json!({"model": "opus", "hooks": {"PreToolUse": []}}),
        ),
        // Blank lines directly inside the braces of an object that gains a key are trimmed.
        (
            "{\n\n  \"model\": \"opus\"\n\n}\n",
            json!({"model": "opus"}),
        ),
        // An empty event array or `hooks` object that mnemo filled is dropped once it empties again.
        ("{\n  \"hooks\": {\n    \"Stop\": []\n  }\n}\n", json!({})),
        ("{\n  \"hooks\": {}\n}\n", json!({})),
    ];
    for (original, expected) in cases {
        let installed = plan_install(original, &specs(BIN)).unwrap().new_text;
        let back = plan_uninstall(&installed).unwrap().new_text;
        assert_ne!(
            back, original,
            "now byte-identical; move this case to the byte-for-byte test"
        );
        assert_eq!(value_of(&back), expected, "{original}\n=>\n{back}");
    }
    // An empty file comes back as an empty object.
    let installed = plan_install("", &specs(BIN)).unwrap().new_text;
    assert_eq!(plan_uninstall(&installed).unwrap().new_text, "{}\n");
}

#[test]
fn find_lists_our_hooks_without_editing() {
    let found = find_mnemo_hooks(OLD_INSTALL).unwrap();
    assert_eq!(
        found,
        [
            (
                "PostToolUse".to_string(),
                "/home/me/.cargo/bin/mnemo hook claude-code PostToolUse".to_string()
            ),
            (
                "UserPromptSubmit".to_string(),
                "'/opt/old dir/mnemo' hook claude-code UserPromptSubmit".to_string()
            ),
            (
                "UserPromptSubmit".to_string(),
                "/usr/local/bin/mnemo hook claude-code UserPromptSubmit".to_string()
            ),
        ]
    );
    for (name, text) in fixtures() {
        assert_eq!(find_mnemo_hooks(&text).unwrap(), [], "{name}");
    }
    assert_eq!(find_mnemo_hooks("").unwrap(), []);
    assert_eq!(
        find_mnemo_hooks("{\"hooks\": []}").unwrap_err().kind,
        ParseErrorKind::Shape
    );
}

// 7. Files that cannot be edited safely.

#[test]
fn syntax_errors_are_reported_with_line_and_column() {
    let broken = "{\n  \"model\": \"opus\",\n  \"hooks\": {\n    \"PostToolUse\": [\n  }\n}\n";
    for result in [plan_install(broken, &specs(BIN)), plan_uninstall(broken)] {
        let err = result.unwrap_err();
        assert_eq!(err.kind, ParseErrorKind::Syntax);
        assert_eq!((err.line, err.column), (5, 3), "{err}");
    }
    for broken in [
        "{",
        "{\"a\": 1,, }",
        "{\"a\": 'single'}",
        "{model: \"opus\"}",
        "{\"a\": 1 \"b\": 2}",
        "{} {}",
        "/* unterminated",
    ] {
        let err = plan_install(broken, &specs(BIN)).unwrap_err();
        assert_eq!(err.kind, ParseErrorKind::Syntax, "{broken}");
        assert!(err.line >= 1 && err.column >= 1);
    }
}

#[test]
fn shape_errors_are_reported_where_the_value_is() {
    let cases = [
        ("[]", (1, 1), "must hold a JSON object"),
        (
            "// settings\n[{\"hooks\": {}}]\n",
            (2, 1),
            "must hold a JSON object",
        ),
        (
            "{\n  \"hooks\": []\n}",
            (2, 12),
            "`hooks` must be an object, but it is an array",
        ),
        (
            "{\n  \"hooks\": null\n}",
            (2, 12),
            "`hooks` must be an object, but it is null",
        ),
        (
            "{\n  \"hooks\": {\n    \"PostToolUse\": {\"matcher\": \"*\"}\n  }\n}",
            (3, 20),
            "`hooks.PostToolUse` must be an array of matcher groups, but it is an object",
        ),
        (
            "{\"hooks\": {}, \"hooks\": {}}",
            (1, 15),
            "`hooks` appears more than once",
        ),
        (
            "{\"hooks\": {\"Stop\": [], \"Stop\": []}}",
            (1, 24),
            "`hooks.Stop` appears more than once",
        ),
    ];
    for (text, (line, column), message) in cases {
        for result in [plan_install(text, &specs(BIN)), plan_uninstall(text)] {
            let err = result.unwrap_err();
            assert_eq!(err.kind, ParseErrorKind::Shape, "{text}");
            assert_eq!((err.line, err.column), (line, column), "{text}: {err}");
            assert!(err.message.contains(message), "{text}: {}", err.message);
        }
    }
}

#[test]
fn unexpected_shapes_inside_event_arrays_are_skipped() {
    let original = r#"{
  "hooks": {
    "PostToolUse": [
      "not a group",
      { "matcher": "*", "hooks": "not an array" },
      { "hooks": [ 42, null, { "type": "command" } ] }
    ]
  }
}"#;
    let edit = plan_install(original, &[spec(BIN, "PostToolUse", Some("*"), 10)]).unwrap();
    assert_eq!(
        kinds(&edit),
        [(ChangeKind::Added, "PostToolUse".to_string())]
    );
    assert_eq!(plan_uninstall(&edit.new_text).unwrap().new_text, original);
}

/// Every line of `before` appears in `after`, in the same order.
fn assert_lines_kept_in_order(before: &str, after: &str) {
    let mut after_lines = after.lines();
    for line in before.lines() {
        // A line that ended an object may have gained a comma.
        assert!(
            after_lines.any(|l| l == line || l == format!("{line},")),
            "line {line:?} missing or out of order in:\n{after}"
        );
    }
}
