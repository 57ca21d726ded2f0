//! End to end with the real client: `mnemo install` into a fresh HOME, then
//! the real Claude Code 2.1.328 runs a scripted session against the stand-in
//! Messages API, and every hook it fires lands in the store.

mod common;

use std::process::Command;

use mnemo_testkit::{Sandbox, StandIn, Step, git_init};
use serde_json::{Value, json};

fn mnemo(sandbox: &Sandbox) -> Command {
    common::sandbox_mnemo(sandbox)
}

#[test]
fn a_real_claude_code_session_is_captured_completely_and_privately() -> anyhow::Result<()> {
    let sandbox = Sandbox::new();
    let project = sandbox.project();
    git_init(&project)?;

    let install = mnemo(&sandbox).arg("install").output()?;
    assert!(
        install.status.success(),
        "{}",
        String::from_utf8_lossy(&install.stderr)
    );
    let settings = std::fs::read_to_string(sandbox.home().join(".claude/settings.json"))?;
    assert!(
        settings.contains("hook claude-code PostToolUse"),
        "{settings}"
    );

    let auth = project.join("auth.py");
    let server = StandIn::with_script([
        Step::write(&auth, "def login(user, pw):\n    return user == 'admin'\n"),
        Step::tool(
            "Edit",
            json!({"file_path": auth, "old_string": "return user == 'admin'",
                   "new_string": "return check_hash(user, pw)"}),
        ),
        Step::bash("echo checking && ls"),
        Step::bash("python3 -c 'import sys; sys.exit(3)'"),
        Step::read(&auth),
        Step::text("Refactored login to use check_hash."),
    ]);
    let output = sandbox
        .claude(
            &server.base_url(),
            "fix login <private>my password is hunter2</private> please",
        )
        .env("MNEMO_NO_WORKER", "1")
        .max_turns(12)
        .run()?;
    output.expect_success();
    assert_eq!(output.result(), Some("Refactored login to use check_hash."));
    let session_id = output
        .json
        .as_ref()
        .and_then(|j| j["session_id"].as_str())
        .unwrap()
        .to_owned();

    let db = rusqlite::Connection::open(sandbox.data().join("mnemo.db"))?;
    let (sid, status, prompts, root): (String, String, i64, String) = db.query_row(
        "SELECT s.platform_session_id, s.status, s.prompt_count, p.root
         FROM sessions s JOIN projects p ON p.id = s.project_id",
        [],
        |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
    )?;
    assert_eq!(sid, session_id);
    assert_eq!(status, "ended", "SessionEnd closed the session");
    assert_eq!(prompts, 1);
    assert_eq!(root, project.canonicalize()?.to_string_lossy());
    let (text, prompt_id): (String, String) =
        db.query_row("SELECT text, platform_prompt_id FROM prompts", [], |r| {
            Ok((r.get(0)?, r.get(1)?))
        })?;
    assert_eq!(text, "fix login please");

    let mut stmt = db.prepare(
        "SELECT kind, tool_name, prompt_number, platform_prompt_id, input, error, files_read, files_modified
         FROM events ORDER BY id",
    )?;
    let events: Vec<Value> = stmt
        .query_map([], |r| {
            Ok(json!({
                "kind": r.get::<_, String>(0)?,
                "tool": r.get::<_, Option<String>>(1)?,
                "turn": r.get::<_, i64>(2)?,
                "prompt_id": r.get::<_, Option<String>>(3)?,
                "input": r.get::<_, Option<String>>(4)?.map(|t| serde_json::from_str::<Value>(&t).unwrap()),
                "error": r.get::<_, Option<String>>(5)?,
                "read": serde_json::from_str::<Value>(&r.get::<_, String>(6)?).unwrap(),
                "modified": serde_json::from_str::<Value>(&r.get::<_, String>(7)?).unwrap(),
            }))
        })?
        .collect::<Result<_, _>>()?;
    let summary: Vec<(String, Option<String>)> = events
        .iter()
        .map(|e| {
            (
                e["kind"].as_str().unwrap().to_owned(),
                e["tool"].as_str().map(str::to_owned),
            )
        })
        .collect();
    let s = |k: &str, t: Option<&str>| (k.to_owned(), t.map(str::to_owned));
    assert_eq!(
        summary,
        [
            s("tool_use", Some("Write")),
            s("tool_use", Some("Edit")),
            s("tool_use", Some("Bash")),
            s("tool_failure", Some("Bash")),
            s("tool_use", Some("Read")),
            s("turn_end", None),
        ]
    );
    for e in &events {
        assert_eq!(e["turn"], 1, "{e}");
        assert_eq!(e["prompt_id"], prompt_id.as_str(), "{e}");
    }
    let auth_text = auth.to_string_lossy();
    assert_eq!(events[0]["modified"], json!([auth_text]));
    assert_eq!(events[1]["modified"], json!([auth_text]));
    assert_eq!(events[4]["read"], json!([auth_text]));
    assert_eq!(events[2]["input"]["command"], "echo checking && ls");
    assert!(
        events[3]["error"].as_str().unwrap().contains("3"),
        "{}",
        events[3]
    );

    drop(stmt);
    drop(db);
    for (path, bytes) in common::all_bytes_under(&sandbox.data()) {
        assert!(
            !common::contains_bytes(&bytes, b"hunter2"),
            "private text in {}",
            path.display()
        );
    }
    let log = std::fs::read_to_string(sandbox.data().join("logs/hook.log")).unwrap_or_default();
    assert!(!log.contains("ERROR") && !log.contains("WARN"), "{log}");

    // The wiring checks out.
    let doctor = mnemo(&sandbox).arg("doctor").output()?;
    let report = String::from_utf8_lossy(&doctor.stdout);
    assert!(doctor.status.success(), "{report}");
    assert!(
        report.contains("all 7 events point at this binary"),
        "{report}"
    );
    Ok(())
}
