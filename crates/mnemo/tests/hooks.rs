//! The hook path end to end: the real binary, real stdin, a real SQLite file.

mod common;

use common::*;
use serde_json::{Value, json};

const SESSION: &str = "1a496781-2e55-42d7-94f9-78b02582f5bf";

fn project(env: &Env) -> std::path::PathBuf {
    let p = env.dir.path().join("demo");
    std::fs::create_dir_all(&p).unwrap();
    p.canonicalize().unwrap()
}

#[test]
fn a_whole_session_is_recorded() {
    let env = Env::new();
    let proj = project(&env);
    for (event, file) in [
        ("SessionStart", "SessionStart.json"),
        ("UserPromptSubmit", "UserPromptSubmit.json"),
        ("PreToolUse", "PreToolUse.Write.json"),
        ("PostToolUse", "PostToolUse.Write.json"),
        ("PreToolUse", "PreToolUse.Edit.json"),
        ("PostToolUse", "PostToolUse.Edit.json"),
        ("PreToolUse", "PreToolUse.Bash.json"),
        ("PostToolUseFailure", "PostToolUseFailure.Bash.json"),
        ("Stop", "Stop.json"),
        ("SessionEnd", "SessionEnd.json"),
    ] {
        let out = env.hook(event, &fixture_for(file, &proj, SESSION));
        // SessionStart answers with the project's memory index (issue 4);
        // a fresh project has one short line.
        let expected = if event == "SessionStart" {
            json!({"hookSpecificOutput": {"hookEventName": "SessionStart",
                "additionalContext": "<mnemo-context>\nmnemo: nothing remembered for demo yet.\n</mnemo-context>"}})
        } else {
            json!({})
        };
        assert_eq!(assert_hook_ok(&out), expected, "{event}");
        assert!(
            out.stderr.is_empty(),
            "{event}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let db = env.db();
    let (status, prompts, root, reason): (String, i64, String, String) = db
        .query_row(
            "SELECT s.status, s.prompt_count, p.root, s.end_reason
             FROM sessions s JOIN projects p ON p.id = s.project_id",
            [],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
        )
        .unwrap();
    assert_eq!(
        (status.as_str(), prompts, reason.as_str()),
        ("ended", 1, "other")
    );
    assert_eq!(root, proj.to_string_lossy());
    let text: String = db
        .query_row("SELECT text FROM prompts", [], |r| r.get(0))
        .unwrap();
    assert_eq!(text, "fix login please");

    let mut stmt = db
        .prepare(
            "SELECT kind, tool_name, prompt_number, priority, status, files_modified, error
             FROM events ORDER BY id",
        )
        .unwrap();
    type EventRow = (
        String,
        Option<String>,
        i64,
        i64,
        String,
        String,
        Option<String>,
    );
    let rows: Vec<EventRow> = stmt
        .query_map([], |r| {
            Ok((
                r.get(0)?,
                r.get(1)?,
                r.get(2)?,
                r.get(3)?,
                r.get(4)?,
                r.get(5)?,
                r.get(6)?,
            ))
        })
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    let auth = r#"["/home/dev/src/demo/auth.py"]"#;
    assert_eq!(
        rows,
        [
            (
                "tool_use".into(),
                Some("Write".into()),
                1,
                0,
                "pending".into(),
                auth.into(),
                None
            ),
            (
                "tool_use".into(),
                Some("Edit".into()),
                1,
                0,
                "pending".into(),
                auth.into(),
                None
            ),
            (
                "tool_failure".into(),
                Some("Bash".into()),
                1,
                0,
                "pending".into(),
                "[]".into(),
                Some("Exit code 3".into())
            ),
            (
                "turn_end".into(),
                None,
                1,
                0,
                "pending".into(),
                "[]".into(),
                None
            ),
        ]
    );
    // The Write response does not repeat the file content the input holds.
    let response: String = db
        .query_row(
            "SELECT response FROM events WHERE tool_name = 'Write'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    let response: Value = serde_json::from_str(&response).unwrap();
    assert_eq!(response.get("content"), None);
    assert_eq!(response["type"], "create");

    for (path, bytes) in all_bytes_under(&env.data()) {
        assert!(
            !contains_bytes(&bytes, b"hunter2"),
            "private text in {}",
            path.display()
        );
    }
}

#[test]
fn hooks_may_arrive_in_any_order() {
    let env = Env::new();
    let proj = project(&env);
    for (event, file) in [
        ("PostToolUse", "PostToolUse.Edit.json"),
        ("Stop", "Stop.json"),
        ("SessionStart", "SessionStart.json"),
        ("UserPromptSubmit", "UserPromptSubmit.json"),
        ("PostToolUse", "PostToolUse.Write.json"),
    ] {
        assert_hook_ok(&env.hook(event, &fixture_for(file, &proj, SESSION)));
    }
    assert_eq!(env.count("SELECT count(*) FROM sessions"), 1);
    assert_eq!(env.count("SELECT count(*) FROM projects"), 1);
    // Events that beat their prompt are linked to it once it arrives.
    assert_eq!(
        env.count("SELECT count(*) FROM events WHERE prompt_number = 1"),
        3,
        "all events belong to the prompt's turn"
    );
}

#[test]
fn the_project_comes_from_claude_project_dir_then_the_git_work_tree() {
    let env = Env::new();
    let repo = env.dir.path().join("shop");
    std::fs::create_dir_all(repo.join("src/deep")).unwrap();
    let git = |args: &[&str]| {
        let ok = std::process::Command::new("git")
            .args(["-c", "user.name=t", "-c", "user.email=t@t"])
            .args(args)
            .current_dir(&repo)
            .output()
            .unwrap()
            .status
            .success();
        assert!(ok, "git {args:?}");
    };
    git(&["init", "-q"]);
    std::fs::write(repo.join("src/deep/x"), "x").unwrap();
    git(&["add", "."]);
    git(&["commit", "-qm", "x"]);
    let worktree = env.dir.path().join("shop-feature");
    git(&["worktree", "add", "-q", worktree.to_str().unwrap()]);

    // cwd deep inside the repo, no CLAUDE_PROJECT_DIR.
    assert_hook_ok(&env.hook(
        "SessionStart",
        &fixture_for("SessionStart.json", &repo.join("src/deep"), "s1"),
    ));
    // A linked worktree is the same project.
    assert_hook_ok(&env.hook(
        "SessionStart",
        &fixture_for("SessionStart.json", &worktree, "s2"),
    ));
    // CLAUDE_PROJECT_DIR wins over a cwd that wandered off.
    let elsewhere = env.dir.path().join("elsewhere");
    std::fs::create_dir_all(&elsewhere).unwrap();
    assert_hook_ok(&env.hook_with(
        "SessionStart",
        &fixture_for("SessionStart.json", &elsewhere, "s3"),
        |c| {
            c.env("CLAUDE_PROJECT_DIR", &repo);
        },
    ));
    assert_eq!(env.count("SELECT count(*) FROM projects"), 1);
    let root: String = env
        .db()
        .query_row("SELECT root FROM projects", [], |r| r.get(0))
        .unwrap();
    assert_eq!(root, repo.canonicalize().unwrap().to_string_lossy());
    assert_eq!(
        env.count("SELECT count(*) FROM sessions WHERE project_id = 1"),
        3
    );
}

#[test]
fn bad_payloads_get_exit_zero_json_and_a_logged_reason() {
    let env = Env::new();
    let cases: &[(&str, &[u8], &str)] = &[
        ("PostToolUse", b"{this is not json", "not valid JSON"),
        ("PostToolUse", b"", "empty payload"),
        ("PostToolUse", b"[1,2,3]", "not an object"),
        ("PostToolUse", &[0xff, 0xfe, 0x00, 0x41], "not valid JSON"),
    ];
    for (event, payload, logged) in cases {
        let mut c = env.mnemo();
        c.args(["hook", "claude-code", event]);
        let out = run_with_stdin(c, payload);
        assert_eq!(assert_hook_ok(&out), json!({}));
        assert!(
            env.hook_log().contains(logged),
            "log mentions {logged:?}: {}",
            env.hook_log()
        );
        assert!(String::from_utf8_lossy(&out.stderr).starts_with("mnemo: "));
    }
    // A truncated but identifiable payload keeps the fact of the event.
    let truncated = r#"{"session_id":"s-trunc","cwd":"/tmp","hook_event_name":"PostToolUse","tool_name":"Bash","tool_input":{"command":"make"#;
    assert_hook_ok(&env.hook("PostToolUse", truncated));
    let note: String = env
        .db()
        .query_row(
            "SELECT e.note FROM events e JOIN sessions s ON s.id = e.session_id
             WHERE s.platform_session_id = 's-trunc' AND e.tool_name = 'Bash'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert!(note.contains("not valid JSON"), "{note}");
}

#[test]
fn a_huge_payload_is_recorded_by_its_identifiers() {
    let env = Env::new();
    let proj = project(&env);
    let content = "A".repeat(3 * 1024 * 1024);
    // Claude Code's own key order: identifiers first, the tool use id last.
    let file = proj.join("big.txt");
    let payload = format!(
        r#"{{"session_id":"s-big","cwd":{cwd},"hook_event_name":"PostToolUse","tool_name":"Write","tool_input":{{"file_path":{file},"content":"{content}"}},"tool_response":{{"type":"create","filePath":{file},"content":"{content}"}},"tool_use_id":"toolu_big","duration_ms":3}}"#,
        cwd = json!(proj),
        file = json!(file),
    );
    let out = env.hook_with("PostToolUse", &payload, |c| {
        c.env("MNEMO_CAPTURE_MAX_PAYLOAD_BYTES", "1000000");
    });
    assert_hook_ok(&out);
    let (tool_use_id, input, note): (String, String, String) = env
        .db()
        .query_row("SELECT tool_use_id, input, note FROM events", [], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?))
        })
        .unwrap();
    assert_eq!(tool_use_id, "toolu_big");
    assert_eq!(
        serde_json::from_str::<Value>(&input).unwrap(),
        json!({"file_path": proj.join("big.txt")})
    );
    assert!(note.contains("exceeds capture.max_payload_bytes"), "{note}");
}

#[test]
fn large_fields_are_capped_and_the_row_says_so() {
    let env = Env::new();
    let proj = project(&env);
    let stdout = format!("first line\n{}\nlast line", "x".repeat(500_000));
    let payload = json!({
        "session_id": "s", "cwd": proj, "hook_event_name": "PostToolUse", "tool_name": "Bash",
        "tool_input": {"command": "make all"},
        "tool_response": {"stdout": stdout, "stderr": ""},
        "tool_use_id": "toolu_1",
    });
    assert_hook_ok(&env.hook("PostToolUse", &payload.to_string()));
    let (response, note): (String, String) = env
        .db()
        .query_row("SELECT response, note FROM events", [], |r| {
            Ok((r.get(0)?, r.get(1)?))
        })
        .unwrap();
    assert!(response.len() <= 64 * 1024, "{}", response.len());
    let v: Value = serde_json::from_str(&response).unwrap();
    let kept = v["stdout"].as_str().unwrap();
    assert!(kept.starts_with("first line") && kept.ends_with("last line"));
    assert!(note.starts_with("response cut from 500"), "{note}");
}

#[test]
fn unknown_events_disabled_and_skipped_tools_are_quick_no_ops() {
    let env = Env::new();
    let proj = project(&env);
    // Unknown event: no database is even created.
    assert_eq!(
        assert_hook_ok(&env.hook(
            "Notification",
            r#"{"session_id":"s","hook_event_name":"Notification"}"#
        )),
        json!({})
    );
    assert_eq!(
        assert_hook_ok(&env.hook("PreToolUse", &fixture("PreToolUse.Bash.json"))),
        json!({})
    );
    assert!(!env.db_path().exists());

    // ... but it is counted, for `mnemo doctor`.
    assert!(env.hook_log().contains("ignored: event `Notification`"));

    // MNEMO_DISABLED: nothing at all, not even the data directory.
    let quiet = Env::new();
    let out = quiet.hook_with(
        "PostToolUse",
        &fixture_for("PostToolUse.Write.json", &proj, "s"),
        |c| {
            c.env("MNEMO_DISABLED", "1");
        },
    );
    assert_eq!(assert_hook_ok(&out), json!({}));
    assert!(!quiet.data().exists());

    // Skip list: defaults and the environment override.
    let todo = json!({"session_id": "s", "cwd": proj, "hook_event_name": "PostToolUse",
                      "tool_name": "TodoWrite", "tool_input": {}, "tool_response": {}});
    assert_hook_ok(&env.hook("PostToolUse", &todo.to_string()));
    assert_hook_ok(&env.hook_with(
        "PostToolUse",
        &fixture_for("PostToolUse.Bash.json", &proj, "s"),
        |c| {
            c.env("MNEMO_CAPTURE_SKIP_TOOLS", "Bash,Glob");
        },
    ));
    assert_hook_ok(&env.hook(
        "PostToolUse",
        &fixture_for("PostToolUse.Read.json", &proj, "s"),
    ));
    assert_eq!(env.count("SELECT count(*) FROM events"), 1);
    assert_eq!(
        env.count("SELECT count(*) FROM events WHERE tool_name = 'Read'"),
        1
    );
}

#[test]
fn an_internal_panic_still_exits_zero_with_json() {
    let env = Env::new();
    let out = env.hook_with("SessionStart", &fixture("SessionStart.json"), |c| {
        c.env("MNEMO_FAULT_INJECT", "panic");
    });
    assert_eq!(assert_hook_ok(&out), json!({}));
    assert!(
        env.hook_log().contains("internal error"),
        "{}",
        env.hook_log()
    );
    assert!(env.hook_log().contains("fault injected"));
}

#[test]
fn a_broken_config_file_never_breaks_a_hook() {
    let env = Env::new();
    let proj = project(&env);
    std::fs::create_dir_all(env.data()).unwrap();
    std::fs::write(env.data().join("config.toml"), "[capture\nskip_tools = 3").unwrap();
    assert_hook_ok(&env.hook(
        "PostToolUse",
        &fixture_for("PostToolUse.Write.json", &proj, "s"),
    ));
    assert_eq!(env.count("SELECT count(*) FROM events"), 1);
    assert!(
        env.hook_log().contains("config.toml:1:"),
        "{}",
        env.hook_log()
    );
}

#[test]
fn the_same_tool_call_from_two_installs_is_recorded_once() {
    let env = Env::new();
    let proj = project(&env);
    for _ in 0..2 {
        assert_hook_ok(&env.hook(
            "UserPromptSubmit",
            &fixture_for("UserPromptSubmit.json", &proj, SESSION),
        ));
        assert_hook_ok(&env.hook(
            "PostToolUse",
            &fixture_for("PostToolUse.Write.json", &proj, SESSION),
        ));
        assert_hook_ok(&env.hook("Stop", &fixture_for("Stop.json", &proj, SESSION)));
    }
    assert_eq!(
        env.count("SELECT count(*) FROM events WHERE kind = 'tool_use'"),
        1
    );
    assert_eq!(env.count("SELECT prompt_count FROM sessions"), 1);
    assert_eq!(env.count("SELECT count(*) FROM prompts"), 1);
    assert_eq!(
        env.count("SELECT count(*) FROM events WHERE kind = 'turn_end'"),
        1
    );
}
