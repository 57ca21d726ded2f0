//! End to end with the real Gemini CLI 0.61.0: `mnemo install --platform
//! gemini` into a fresh HOME, then a scripted session against the stand-in
//! Gemini API (the model answers `write_file`, then `run_shell_command`) is
//! captured, compressed by the worker the hooks start, and the next
//! session's first model request carries the memory.

mod common;
#[path = "common/e2e.rs"]
mod e2e;

use e2e::{StopWorker, install, wait_compressed};
use mnemo_testkit::gemini::GeminiCli;
use mnemo_testkit::{GeminiRun, RecordedRequest, Sandbox, StandIn, Step, gemini, git_init};
use serde_json::json;

/// A Gemini CLI session in the sandbox, with a worker allowed to start.
fn session(sandbox: &Sandbox, server: &StandIn, prompt: &str) -> GeminiRun {
    e2e::session::<GeminiCli>(sandbox, &server.base_url(), prompt)
}

/// The requests of the main conversation (what the script answers).
fn main_requests(server: &StandIn) -> Vec<RecordedRequest> {
    server
        .requests()
        .into_iter()
        .filter(|r| r.route().ends_with(":streamGenerateContent"))
        .collect()
}

#[test]
fn a_real_gemini_session_is_captured_compressed_and_remembered() -> anyhow::Result<()> {
    let sandbox = Sandbox::new();
    let project = sandbox.project();
    git_init(&project)?;
    gemini::write_base_settings(&sandbox.home())?;
    install(&sandbox, "gemini")?;
    let _stop = StopWorker(&sandbox);

    // Session 1: write a file, run it.
    let script = project.join("tally.py");
    let session1 = StandIn::with_script([
        Step::tool(
            "write_file",
            json!({"file_path": script, "content": "def tally(xs):\n    return sum(xs)\n\nprint(tally([1, 2, 3]))\n"}),
        ),
        Step::tool(
            "run_shell_command",
            json!({"command": "python3 tally.py", "description": "run the tally"}),
        ),
        Step::text("Added tally.py; it prints 6."),
    ]);
    session(&sandbox, &session1, "add a script that tallies numbers")
        .run()?
        .expect_success();

    let db = rusqlite::Connection::open(sandbox.data().join("mnemo.db"))?;
    let (platform, prompts): (String, i64) =
        db.query_row("SELECT platform, prompt_count FROM sessions", [], |r| {
            Ok((r.get(0)?, r.get(1)?))
        })?;
    assert_eq!((platform.as_str(), prompts), ("gemini", 1));
    assert_eq!(
        db.query_row("SELECT text FROM prompts", [], |r| r.get::<_, String>(0))?,
        "add a script that tallies numbers"
    );
    let mut stmt =
        db.prepare("SELECT kind, COALESCE(tool_name, ''), files_modified FROM events ORDER BY id")?;
    let events: Vec<(String, String, String)> = stmt
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?
        .collect::<Result<_, _>>()?;
    drop(stmt);
    let kinds: Vec<(&str, &str)> = events
        .iter()
        .map(|(k, t, _)| (k.as_str(), t.as_str()))
        .collect();
    assert_eq!(
        kinds,
        [
            ("tool_use", "Write"),
            ("tool_use", "Bash"),
            ("turn_end", "")
        ]
    );
    assert!(events[0].2.contains("tally.py"), "{}", events[0].2);

    // The worker the hooks started turns the turn into observations and a
    // summary.
    wait_compressed(&sandbox)?;
    let title: String = db.query_row(
        "SELECT title FROM observations WHERE files_modified LIKE '%tally.py%'",
        [],
        |r| r.get(0),
    )?;

    // Session 2: its first model request carries session 1's work.
    let session2 = StandIn::with_script([Step::text("We wrote tally.py last time.")]);
    session(&sandbox, &session2, "what did we do last time?")
        .run()?
        .expect_success();
    let requests = main_requests(&session2);
    let first = requests.first().expect("a model request");
    // Gemini CLI escapes `<` and `>` in hook context (`&lt;mnemo-context&gt;`)
    // and wraps it in its own `<hook_context>`.
    assert!(
        first.body_contains("<hook_context>&lt;mnemo-context&gt;"),
        "no memory index in the first request: {}",
        first.body
    );
    assert!(
        first.body_contains(&title),
        "session 1's observation {title:?} missing from the first request: {}",
        first.body
    );
    assert!(
        first.body_contains("add a script that tallies numbers"),
        "session 1's request missing from the first request"
    );
    // What the user typed is stored without the injected context.
    let prompts: Vec<String> = db
        .prepare("SELECT text FROM prompts ORDER BY id")?
        .query_map([], |r| r.get(0))?
        .collect::<Result<_, _>>()?;
    assert_eq!(
        prompts.last().map(String::as_str),
        Some("what did we do last time?")
    );
    let log = std::fs::read_to_string(sandbox.data().join("logs/hook.log")).unwrap_or_default();
    assert!(!log.contains("ERROR") && !log.contains("WARN"), "{log}");
    Ok(())
}

/// Gemini CLI's hooks give a tool call no id and no words: the worker reads
/// the turn's narrative from the chat recording (`transcript_path`), pairs
/// its calls with the captured ones by order, name and arguments, and the
/// reason the model stated before a change is remembered with it.
#[test]
fn a_gemini_turn_is_remembered_with_the_reason_the_model_stated() -> anyhow::Result<()> {
    let sandbox = Sandbox::new();
    let project = sandbox.project();
    git_init(&project)?;
    let limits = project.join("limits.py");
    std::fs::write(
        &limits,
        "WINDOW_SECONDS = 60\nMAX_PER_WINDOW = 100\n\n\ndef allow(count):\n    return count < MAX_PER_WINDOW\n",
    )?;
    gemini::write_base_settings(&sandbox.home())?;
    install(&sandbox, "gemini")?;
    let _stop = StopWorker(&sandbox);
    let server = StandIn::with_script([
        Step::tool("read_file", json!({"file_path": limits}))
            .with_text("Reading the limiter before changing it."),
        Step::tool(
            "write_file",
            json!({"file_path": limits, "content": TOKEN_BUCKET}),
        )
        .with_text(
            "A token bucket replaces the window counter because a fixed window lets a double burst through at the window edge.",
        ),
        Step::tool(
            "run_shell_command",
            json!({"command": "python3 limits.py", "description": "check the limiter"}),
        ),
        Step::text("limits.py now refills a token bucket; the check prints ok."),
    ]);
    session(&sandbox, &server, "make the rate limiter smooth out bursts")
        .run()?
        .expect_success();
    wait_compressed(&sandbox)?;

    let db = rusqlite::Connection::open(sandbox.data().join("mnemo.db"))?;
    e2e::keep_transcript(&db, "MNEMO_RECORD_GEMINI", "token_bucket")?;
    let summary: String = db.query_row(
        "SELECT request || ' | ' || completed || ' | ' || learned || ' | ' || notes FROM summaries",
        [],
        |r| r.get(0),
    )?;
    let observations: String = db.query_row(
        "SELECT group_concat(title || ' ' || narrative || ' ' || facts, '\n') FROM observations",
        [],
        |r| r.get(0),
    )?;
    let memory = format!("{summary}\n{observations}");
    assert!(
        memory.contains("double burst through at the window edge"),
        "the stated reason is missing: {memory}"
    );
    assert!(
        summary.contains("window edge"),
        "the summary lacks the why: {summary}"
    );
    assert!(!memory.contains("hook_context"), "{memory}");
    Ok(())
}

const TOKEN_BUCKET: &str = "import time\n\nCAPACITY = 100\nPER_SECOND = 100 / 60\n\n\nclass Bucket:\n    def __init__(self):\n        self.tokens = CAPACITY\n        self.last = time.monotonic()\n\n    def allow(self):\n        now = time.monotonic()\n        self.tokens = min(CAPACITY, self.tokens + (now - self.last) * PER_SECOND)\n        self.last = now\n        if self.tokens >= 1:\n            self.tokens -= 1\n            return True\n        return False\n\n\nif __name__ == '__main__':\n    print('ok' if Bucket().allow() else 'limited')\n";
