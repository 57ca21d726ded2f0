//! End to end with the real client: memory from earlier work reaches the
//! model in a new Claude Code 2.1.328 session, and the model uses mnemo's
//! MCP tools.
//!
//! The store holds observations of the project as session 1 would have left
//! them (imported here; the worker that turns a real session 1 into
//! observations is tested on its own). After `mnemo install` into a fresh
//! HOME (hooks in `~/.claude/settings.json`, the MCP server in
//! `~/.claude.json`, exactly as a user gets them), session 2 runs against
//! the stand-in Messages API, and the requests Claude Code sends show:
//! the SessionStart index (`<mnemo-context>`) in its first request; a
//! PreToolUse file history before it reads a file with history; and, when
//! the scripted model calls `mcp__mnemo__search` and then
//! `mcp__mnemo__get_observations`, tool results that carry the earlier work.

mod common;

use std::process::Command;

use mnemo_core::time::{format_rfc3339, now_ms};
use mnemo_testkit::{RecordedRequest, Sandbox, StandIn, Step, git_init};
use serde_json::{Value, json};

fn mnemo(sandbox: &Sandbox) -> Command {
    common::sandbox_mnemo(sandbox)
}

/// Requests of the main conversation (what the script answers).
fn main_requests(server: &StandIn) -> Vec<RecordedRequest> {
    server
        .requests()
        .into_iter()
        .filter(|r| r.route() == "/v1/messages" && !r.is_side_request())
        .collect()
}

#[test]
fn memory_reaches_the_next_session_and_the_model_uses_the_mcp_tools() -> anyhow::Result<()> {
    let sandbox = Sandbox::new();
    let project = sandbox.project();
    git_init(&project)?;
    let auth = project.join("auth.py");
    std::fs::write(
        &auth,
        "def login(user, pw):\n    return check_hash(user, pw)\n",
    )?;

    let install = mnemo(&sandbox).arg("install").output()?;
    assert!(
        install.status.success(),
        "{}",
        String::from_utf8_lossy(&install.stderr)
    );
    let claude_json: Value = serde_json::from_str(&std::fs::read_to_string(
        sandbox.home().join(".claude.json"),
    )?)?;
    assert_eq!(claude_json["mcpServers"]["mnemo"]["args"], json!(["mcp"]));

    // What session 1 left behind.
    let at = |ms: i64| format_rfc3339(now_ms() - ms);
    let records = [
        json!({"kind": "summary", "project": project, "request": "fix login",
               "learned": "passwords were compared in plain text",
               "completed": "login() now calls check_hash", "next_steps": "add a rate limiter",
               "created_at": at(3_000_000)}),
        json!({"kind": "observation", "project": project, "type": "bugfix",
               "title": "Login compares password hashes with check_hash",
               "narrative": "login() compared plain-text passwords; it now calls check_hash(user, pw). \
                             The salt comes from SALT_ROUNDS in settings.",
               "facts": ["check_hash is defined in crypto.py"],
               "files_modified": [auth], "created_at": at(3_600_000)}),
        json!({"kind": "observation", "project": project, "type": "decision",
               "title": "Rate limiting deferred to the gateway",
               "files_read": [project.join("gateway.yaml")], "created_at": at(3_500_000)}),
    ];
    let file = sandbox.root().join("session1.jsonl");
    std::fs::write(
        &file,
        records.iter().map(|r| format!("{r}\n")).collect::<String>(),
    )?;
    let import = mnemo(&sandbox).arg("import").arg(&file).output()?;
    assert!(
        import.status.success(),
        "{}",
        String::from_utf8_lossy(&import.stderr)
    );
    let bugfix_id: i64 = rusqlite::Connection::open(sandbox.data().join("mnemo.db"))?.query_row(
        "SELECT id FROM observations WHERE type = 'bugfix'",
        [],
        |r| r.get(0),
    )?;

    let server = StandIn::with_script([
        Step::tool("mcp__mnemo__search", json!({"query": "check_hash login"})),
        Step::tool(
            "mcp__mnemo__get_observations",
            json!({"ids": [format!("#{bugfix_id}")]}),
        ),
        Step::tool("mcp__mnemo__timeline", json!({"id": bugfix_id})),
        Step::read(&auth),
        Step::text("Login already hashes passwords; next is the rate limiter."),
    ]);
    let output = sandbox
        .claude(&server.base_url(), "what did we do about login last time?")
        .env("MNEMO_NO_WORKER", "1")
        .max_turns(12)
        .run()?;
    output.expect_success();
    assert_eq!(
        output.result(),
        Some("Login already hashes passwords; next is the rate limiter.")
    );

    let requests = main_requests(&server);
    assert!(requests.len() >= 5, "{} requests", requests.len());

    // 1. The first request carries the SessionStart index.
    let first = &requests[0];
    assert!(
        first.body_contains("SessionStart hook additional context: <mnemo-context>"),
        "first request: {}",
        first.body
    );
    for expected in [
        "mnemo memory of project: 2 observations",
        &format!("#{bugfix_id} 1h [fix] Login compares password hashes with check_hash (auth.py*)"),
        "[dec] Rate limiting deferred to the gateway",
        "asked: fix login | learned: passwords were compared in plain text",
        "mcp__mnemo__search",
    ] {
        assert!(
            first.body_contains(expected),
            "{expected:?} missing from {}",
            first.body
        );
    }

    // 2. The search tool ran in mnemo's MCP server and its answer came back.
    let results = requests[1].tool_result_texts();
    assert_eq!(results.len(), 1, "{:?}", results);
    assert!(
        results[0].contains(&format!(
            "#{bugfix_id} 1h [fix] Login compares password hashes with check_hash (auth.py)"
        )),
        "search result: {}",
        results[0]
    );
    // 3. get_observations returned the full record, 4. the timeline its neighbours.
    let full = &requests[2].tool_result_texts()[1];
    assert!(
        full.contains("The salt comes from SALT_ROUNDS in settings."),
        "{full}"
    );
    assert!(
        full.contains("check_hash is defined in crypto.py"),
        "{full}"
    );
    let timeline = &requests[3].tool_result_texts()[2];
    assert!(
        timeline.contains("Rate limiting deferred to the gateway"),
        "{timeline}"
    );
    assert!(timeline.contains("[turn] fix login"), "{timeline}");

    // 5. Reading a file with history brought that history along.
    assert!(
        requests[4].body_contains("PreToolUse:Read hook additional context: <mnemo-context>"),
        "file context: {}",
        requests[4].body
    );
    assert!(requests[4].body_contains("mnemo: earlier work on auth.py"));

    // Our own tools are not captured back into memory; the Read is.
    let db = rusqlite::Connection::open(sandbox.data().join("mnemo.db"))?;
    let tools: Vec<String> = db
        .prepare("SELECT tool_name FROM events WHERE tool_name IS NOT NULL ORDER BY id")?
        .query_map([], |r| r.get(0))?
        .collect::<Result<_, _>>()?;
    assert_eq!(tools, ["Read"]);
    let log = std::fs::read_to_string(sandbox.data().join("logs/hook.log")).unwrap_or_default();
    assert!(!log.contains("ERROR") && !log.contains("WARN"), "{log}");
    Ok(())
}

/// Stops the sandbox's worker when the test ends, however it ends.
struct StopWorker<'a>(&'a Sandbox);

impl Drop for StopWorker<'_> {
    fn drop(&mut self) {
        let _ = mnemo(self.0).args(["worker", "stop"]).output();
    }
}

#[test]
fn a_real_session_compressed_by_the_worker_reaches_the_next_session() -> anyhow::Result<()> {
    let sandbox = Sandbox::new();
    let project = sandbox.project();
    git_init(&project)?;
    let install = mnemo(&sandbox).arg("install").output()?;
    assert!(
        install.status.success(),
        "{}",
        String::from_utf8_lossy(&install.stderr)
    );
    let _stop = StopWorker(&sandbox);

    // Session 1: real work, with the worker started by the hooks themselves
    // (default provider: offline), on a free port.
    let ledger = project.join("ledger.py");
    let session1 = StandIn::with_script([
        Step::write(
            &ledger,
            "def settle_invoice(invoice):\n    return invoice.total - invoice.paid\n",
        ),
        Step::bash("python3 -c 'import ledger'"),
        Step::text("Added settle_invoice to ledger.py."),
    ]);
    sandbox
        .claude(
            &session1.base_url(),
            "add a function that settles an invoice",
        )
        .env("MNEMO_PORT", "0")
        .env("MNEMO_WORKER_IDLE_EXIT_SECS", "120")
        .max_turns(8)
        .run()?
        .expect_success();

    // The worker turns the turn into observations and a summary.
    let db = rusqlite::Connection::open(sandbox.data().join("mnemo.db"))?;
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    let (observations, summaries) = loop {
        let pending: i64 = db.query_row(
            "SELECT count(*) FROM events WHERE status != 'done'",
            [],
            |r| r.get(0),
        )?;
        let counts: (i64, i64) = db.query_row(
            "SELECT (SELECT count(*) FROM observations), (SELECT count(*) FROM summaries)",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )?;
        if pending == 0 && counts.0 > 0 && counts.1 > 0 {
            break counts;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "worker did not compress session 1: {pending} events not done, {counts:?}; log: {}",
            std::fs::read_to_string(sandbox.data().join("logs/worker.log")).unwrap_or_default()
        );
        std::thread::sleep(std::time::Duration::from_millis(100));
    };
    assert!(observations >= 1 && summaries == 1);
    let title: String = db.query_row(
        "SELECT title FROM observations WHERE files_modified LIKE '%ledger.py%'",
        [],
        |r| r.get(0),
    )?;
    assert!(title.contains("ledger.py"), "{title}");

    // Session 2: the index names session 1's work, and the search tool finds it.
    let session2 = StandIn::with_script([
        Step::tool("mcp__mnemo__search", json!({"query": "settle invoice"})),
        Step::text("We added settle_invoice last time."),
    ]);
    let output = sandbox
        .claude(&session2.base_url(), "what did we do last time?")
        .env("MNEMO_PORT", "0")
        .max_turns(8)
        .run()?;
    output.expect_success();
    let requests = main_requests(&session2);
    assert!(requests.len() >= 2, "{} requests", requests.len());
    let first = &requests[0];
    assert!(
        first.body_contains("<mnemo-context>") && first.body_contains(&title),
        "session 1's observation {title:?} missing from the first request: {}",
        first.body
    );
    assert!(
        first.body_contains("add a function that settles an invoice"),
        "session 1's summary missing from the first request: {}",
        first.body
    );
    let results = requests[1].tool_result_texts();
    assert_eq!(results.len(), 1, "{results:?}");
    assert!(
        results[0].contains("ledger.py"),
        "search result: {}",
        results[0]
    );
    Ok(())
}
