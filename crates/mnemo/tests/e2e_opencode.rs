//! End to end with the real OpenCode 1.18.33: `mnemo install --platform
//! opencode` into a fresh HOME writes mnemo's plugin; a headless session
//! (`opencode run`) against the stand-in chat-completions API, whose model
//! answers `write` then `bash`, is captured through the plugin and
//! compressed, and the next session's first model request carries the memory
//! in its system prompt.

mod common;

use std::process::Command;
use std::time::{Duration, Instant};

use mnemo_testkit::{OpenCodeRun, Sandbox, StandIn, Step, git_init};
use serde_json::json;

fn mnemo(sandbox: &Sandbox) -> Command {
    common::sandbox_mnemo(sandbox)
}

fn session(sandbox: &Sandbox, server: &StandIn, prompt: &str) -> OpenCodeRun {
    OpenCodeRun::new(prompt)
        .project_dir(sandbox.project())
        .home(sandbox.home())
        .base_url(server.openai_base_url())
        .env("MNEMO_DATA_DIR", sandbox.data())
        .env("MNEMO_PORT", "0")
        .env("MNEMO_WORKER_IDLE_EXIT_SECS", "120")
}

/// Stops the sandbox's worker when the test ends, however it ends.
struct StopWorker<'a>(&'a Sandbox);

impl Drop for StopWorker<'_> {
    fn drop(&mut self) {
        let _ = mnemo(self.0).args(["worker", "stop"]).output();
    }
}

#[test]
fn a_real_opencode_session_is_captured_by_the_plugin_and_remembered() -> anyhow::Result<()> {
    let sandbox = Sandbox::new();
    let project = sandbox.project();
    git_init(&project)?;
    let install = mnemo(&sandbox)
        .args(["install", "--platform", "opencode", "--no-import"])
        .output()?;
    assert!(
        install.status.success(),
        "{}{}",
        String::from_utf8_lossy(&install.stdout),
        String::from_utf8_lossy(&install.stderr)
    );
    let _stop = StopWorker(&sandbox);

    let script = project.join("ledger.py");
    let session1 = StandIn::with_script([
        Step::tool(
            "write",
            json!({"filePath": script, "content": "def balance(entries):\n    return sum(entries)\n\nprint(balance([5, -2]))\n"}),
        ),
        Step::tool(
            "bash",
            json!({"command": "python3 ledger.py", "description": "run the ledger"}),
        ),
        Step::text("Added ledger.py; it prints 3."),
    ]);
    session(&sandbox, &session1, "add a ledger script that sums entries")
        .run()?
        .expect_success();

    // The plugin's captures are fire-and-forget: wait for the turn's end.
    let db = rusqlite::Connection::open(sandbox.data().join("mnemo.db"))?;
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let (turn_ends, observations, summaries, pending): (i64, i64, i64, i64) = db.query_row(
            "SELECT (SELECT count(*) FROM events WHERE kind = 'turn_end'),
                    (SELECT count(*) FROM observations), (SELECT count(*) FROM summaries),
                    (SELECT count(*) FROM events WHERE status != 'done')",
            [],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
        )?;
        if turn_ends > 0 && observations > 0 && summaries > 0 && pending == 0 {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "session 1 not captured and compressed: {turn_ends} turn ends, {observations} \
             observations, {pending} pending; worker log: {}",
            std::fs::read_to_string(sandbox.data().join("logs/worker.log")).unwrap_or_default()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    let (platform, prompt): (String, String) = db.query_row(
        "SELECT s.platform, p.text FROM sessions s JOIN prompts p ON p.session_id = s.id",
        [],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )?;
    assert_eq!(platform, "opencode");
    // `opencode run` sends the message to the model in quotes, and so it is
    // recorded.
    assert_eq!(prompt, "\"add a ledger script that sums entries\"");
    let tools: Vec<String> = db
        .prepare("SELECT tool_name FROM events WHERE kind = 'tool_use' ORDER BY tool_name")?
        .query_map([], |r| r.get(0))?
        .collect::<Result<_, _>>()?;
    assert_eq!(tools, ["Bash", "Write"]);
    let title: String = db.query_row(
        "SELECT title FROM observations WHERE files_modified LIKE '%ledger.py%'",
        [],
        |r| r.get(0),
    )?;

    // Session 2: the memory is in the system prompt of its first request.
    let session2 = StandIn::with_script([Step::text("We added ledger.py last time.")]);
    session(&sandbox, &session2, "what did we do last time?")
        .run()?
        .expect_success();
    let main: Vec<_> = session2
        .requests()
        .into_iter()
        .filter(|r| !r.is_side_request())
        .collect();
    let first = main.first().expect("a model request");
    let system = first.system_text();
    assert!(
        system.contains("<mnemo-context>") && system.contains(&title),
        "session 1's observation {title:?} missing from the system prompt: {system}"
    );
    Ok(())
}
