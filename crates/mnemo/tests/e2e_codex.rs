//! End to end with the real Codex CLI 0.169: `mnemo install --platform
//! codex` into a fresh HOME, then `codex exec` runs scripted sessions
//! against the stand-in Responses API. A session that writes and runs a file
//! is captured and compressed; the next session's first model request
//! carries the memory; and work a Claude Code session did in a repository
//! reaches a Codex session in the same repository. A command that exits
//! non-zero (Codex's hook does not say so; its rollout does) is remembered
//! as a failure.

mod common;
#[path = "common/e2e.rs"]
mod e2e;

use e2e::{StopWorker, install, mnemo_dir, wait_compressed};
use mnemo_testkit::claude_code::ClaudeCodeCli;
use mnemo_testkit::codex::CodexCli;
use mnemo_testkit::{CodexRun, RecordedRequest, Sandbox, StandIn, Step, git_init};
use serde_json::Value;

fn codex(sandbox: &Sandbox, server: &StandIn, prompt: &str) -> CodexRun {
    e2e::session::<CodexCli>(sandbox, &server.openai_base_url(), prompt).path_prepend(mnemo_dir())
}

fn responses(server: &StandIn) -> Vec<RecordedRequest> {
    server
        .requests()
        .into_iter()
        .filter(|r| r.route().ends_with("/responses"))
        .collect()
}

#[test]
fn a_codex_session_is_captured_compressed_and_remembered_next_time() -> anyhow::Result<()> {
    let sandbox = Sandbox::new();
    let project = sandbox.project();
    git_init(&project)?;
    install(&sandbox, "codex")?;
    let _stop = StopWorker(&sandbox);
    let hooks = std::fs::read_to_string(sandbox.home().join(".codex/hooks.json"))?;
    assert!(hooks.contains("hook codex PostToolUse"), "{hooks}");

    let ledger = project.join("ledger.py");
    let session1 = StandIn::with_script([
        Step::write(
            &ledger,
            "def settle_invoice(invoice):\n    return invoice.total - invoice.paid\n",
        ),
        Step::bash("python3 -c 'import ledger; print(ledger.settle_invoice)'"),
        Step::text("Added settle_invoice to ledger.py."),
    ]);
    let out = codex(
        &sandbox,
        &session1,
        "add a function that settles an invoice",
    )
    .run()?;
    out.expect_success();
    assert!(ledger.exists(), "apply_patch did not run: {}", out.stderr);

    let db = rusqlite::Connection::open(sandbox.data().join("mnemo.db"))?;
    let (platform, prompts): (String, i64) =
        db.query_row("SELECT platform, prompt_count FROM sessions", [], |r| {
            Ok((r.get(0)?, r.get(1)?))
        })?;
    assert_eq!((platform.as_str(), prompts), ("codex", 1));
    let mut stmt = db.prepare("SELECT kind, tool_name, files_modified FROM events ORDER BY id")?;
    let events: Vec<(String, Option<String>, String)> = stmt
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?
        .collect::<Result<_, _>>()?;
    let tools: Vec<Option<&str>> = events.iter().map(|e| e.1.as_deref()).collect();
    assert_eq!(
        tools,
        [Some("apply_patch"), Some("Bash"), None],
        "{events:?}"
    );
    let modified: Value = serde_json::from_str(&events[0].2)?;
    assert_eq!(modified[0], ledger.to_string_lossy().as_ref());
    drop(stmt);

    wait_compressed(&sandbox)?;
    let title: String = db.query_row(
        "SELECT title FROM observations WHERE files_modified LIKE '%ledger.py%'",
        [],
        |r| r.get(0),
    )?;

    let session2 = StandIn::with_script([Step::text("We added settle_invoice last time.")]);
    codex(&sandbox, &session2, "what did we do last time?")
        .run()?
        .expect_success();
    let first = &responses(&session2)[0];
    assert!(
        first.body_contains("<mnemo-context>") && first.body_contains(&title),
        "session 1's observation {title:?} missing from the first request: {}",
        first.body
    );
    assert!(
        first.body_contains("add a function that settles an invoice"),
        "session 1's request missing from the first request: {}",
        first.body
    );
    Ok(())
}

#[test]
fn what_claude_code_did_in_a_repository_reaches_codex_there() -> anyhow::Result<()> {
    let sandbox = Sandbox::new();
    let project = sandbox.project();
    git_init(&project)?;
    let stdout = install(&sandbox, "claude-code,codex")?;
    assert!(
        stdout.contains("mnemo install: Claude Code")
            && stdout.contains("mnemo install: Codex CLI"),
        "{stdout}"
    );
    let _stop = StopWorker(&sandbox);

    // Claude Code works in the repository.
    let billing = project.join("billing.py");
    let claude = StandIn::with_script([
        Step::write(
            &billing,
            "def late_fee(amount_cents, days_late):\n    return amount_cents * min(days_late, 30) // 100\n",
        ),
        Step::bash("python3 -c 'import billing'"),
        Step::text("Added late_fee to billing.py, capped at 30 days."),
    ]);
    e2e::session::<ClaudeCodeCli>(
        &sandbox,
        &claude.base_url(),
        "add a late fee capped at 30 days",
    )
    .max_turns(8)
    .run()?
    .expect_success();
    wait_compressed(&sandbox)?;
    let db = rusqlite::Connection::open(sandbox.data().join("mnemo.db"))?;
    let title: String = db.query_row(
        "SELECT title FROM observations WHERE files_modified LIKE '%billing.py%'",
        [],
        |r| r.get(0),
    )?;

    // Codex, next, in the same repository: its first request has it.
    let server = StandIn::with_script([Step::text("Claude Code added late_fee earlier.")]);
    codex(&sandbox, &server, "what happened here before?")
        .run()?
        .expect_success();
    let first = &responses(&server)[0];
    assert!(
        first.body_contains("<mnemo-context>") && first.body_contains(&title),
        "Claude Code's observation {title:?} missing from Codex's first request: {}",
        first.body
    );
    assert!(
        first.body_contains("add a late fee capped at 30 days"),
        "Claude Code's request missing: {}",
        first.body
    );
    let projects: i64 = db.query_row("SELECT count(*) FROM projects", [], |r| r.get(0))?;
    assert_eq!(projects, 1, "one project, whichever agent ran there");
    let platforms: Vec<String> = db
        .prepare("SELECT platform FROM sessions ORDER BY id")?
        .query_map([], |r| r.get(0))?
        .collect::<Result<_, _>>()?;
    assert_eq!(platforms, ["claude-code", "codex"]);
    Ok(())
}

/// The kind and error of the captured Bash call, and every stored
/// observation and summary as text.
fn remembered(sandbox: &Sandbox) -> anyhow::Result<(String, Option<String>, String)> {
    let db = rusqlite::Connection::open(sandbox.data().join("mnemo.db"))?;
    let (kind, error): (String, Option<String>) = db.query_row(
        "SELECT kind, error FROM events WHERE tool_name = 'Bash'",
        [],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )?;
    let memory: String = db.query_row(
        "SELECT (SELECT group_concat(title || ' ' || narrative || ' ' || facts, '\n')
                 FROM observations)
                || '\n' ||
                (SELECT group_concat(request || ' ' || completed || ' ' || learned || ' '
                                     || next_steps || ' ' || notes, '\n') FROM summaries)",
        [],
        |r| r.get(0),
    )?;
    Ok((kind, error, memory))
}

/// Codex's PostToolUse carries no exit code; the worker reads it from the
/// rollout, so a command that exited 3 is remembered as failed, and one
/// that exited 0 is not.
#[test]
fn a_codex_command_that_exits_non_zero_is_remembered_as_a_failure() -> anyhow::Result<()> {
    for (code, failed) in [(3, true), (0, false)] {
        let sandbox = Sandbox::new();
        git_init(&sandbox.project())?;
        install(&sandbox, "codex")?;
        let _stop = StopWorker(&sandbox);
        let command =
            format!("python3 -c 'import sys; print(\"reconcile ledger: done\"); sys.exit({code})'");
        let server = StandIn::with_script([
            Step::bash(&command),
            Step::text("Ran the ledger reconciliation."),
        ]);
        codex(&sandbox, &server, "reconcile the ledger")
            .run()?
            .expect_success();
        wait_compressed(&sandbox)?;
        let (kind, error, memory) = remembered(&sandbox)?;
        let said_failed = memory.contains("failed");
        if failed {
            assert_eq!(kind, "tool_failure", "exit {code}: {error:?}");
            let error = error.unwrap_or_default();
            assert!(
                error.starts_with("Exit code 3") && error.contains("reconcile ledger: done"),
                "{error}"
            );
            assert!(
                said_failed && memory.contains("exit"),
                "exit {code}: {memory}"
            );
        } else {
            assert_eq!((kind.as_str(), error), ("tool_use", None));
            assert!(!said_failed, "exit {code}: {memory}");
        }
    }
    Ok(())
}
