//! End to end with the real Codex CLI 0.169: `mnemo install --platform
//! codex` into a fresh HOME, then `codex exec` runs scripted sessions
//! against the stand-in Responses API. A session that writes and runs a file
//! is captured and compressed; the next session's first model request
//! carries the memory; and work a Claude Code session did in a repository
//! reaches a Codex session in the same repository. A command that exits
//! non-zero (Codex's hook does not say so; its rollout does) is remembered
//! as a failure. A multi-file `apply_patch` keeps every file; reads through
//! the shell are reads (and give the next read of a file its history), a
//! search with no match is no failure, and the why comes from the rollout.
//! A message typed during a turn joins that turn. With
//! `MNEMO_RECORD_ROLLOUT=dir` the sessions' rollouts are copied there (the
//! fixtures of `mnemo-transcript` were recorded so).

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

/// The kind and error of the captured command, and every stored
/// observation and summary as text.
fn remembered(sandbox: &Sandbox) -> anyhow::Result<(String, Option<String>, String)> {
    let db = rusqlite::Connection::open(sandbox.data().join("mnemo.db"))?;
    remembered_of(&db, "python3")
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

/// A patch of three files: the first updated, the second updated, the third
/// added.
fn three_file_patch(project: &std::path::Path) -> String {
    let p = |name: &str| project.join(name).to_string_lossy().into_owned();
    format!(
        "*** Begin Patch\n*** Update File: {}\n@@\n-pub fn parse(text: &str) -> Vec<String> {{\n\
         +pub fn parse(text: &str) -> Vec<crate::token::Token> {{\n\
         *** Update File: {}\n@@\n-pub fn lex(text: &str) -> Vec<String> {{\n\
         +pub fn lex(text: &str) -> Vec<crate::token::Token> {{\n\
         *** Add File: {}\n+pub struct Token(pub String);\n*** End Patch\n",
        p("src/parser.rs"),
        p("src/lexer.rs"),
        p("src/token.rs"),
    )
}

/// Every file of a multi-file `apply_patch` is kept; a file shown through
/// the shell is read (not "Ran …", not a change), and a search that found
/// nothing (exit 1) is no failure; the why said before the patch comes from
/// the rollout; the next session's shell read of a file gets its history.
#[test]
fn a_multi_file_patch_and_shell_reads_are_kept_as_codex_did_them() -> anyhow::Result<()> {
    let sandbox = Sandbox::new();
    let project = sandbox.project();
    git_init(&project)?;
    write_files(
        &project,
        &[
            (
                "src/parser.rs",
                "pub fn parse(text: &str) -> Vec<String> {\n    vec![text.to_owned()]\n}\n",
            ),
            (
                "src/lexer.rs",
                "pub fn lex(text: &str) -> Vec<String> {\n    vec![text.to_owned()]\n}\n",
            ),
        ],
    )?;
    install(&sandbox, "codex")?;
    let _stop = StopWorker(&sandbox);
    let server = StandIn::with_script([
        Step::bash("sed -n '1,20p' src/parser.rs").with_text("Reading the parser first."),
        Step::bash("rg -n 'no_such_symbol_anywhere' src"),
        Step::tool(
            "apply_patch",
            serde_json::json!({"patch": three_file_patch(&project)}),
        )
        .with_text("Tokens move to their own module so that parser and lexer share one type."),
        Step::text("Parser and lexer now share the Token type of src/token.rs."),
    ]);
    codex(
        &sandbox,
        &server,
        "give the parser and the lexer one token type",
    )
    .run()?
    .expect_success();
    assert!(
        project.join("src/token.rs").exists(),
        "the patch did not apply"
    );

    let db = rusqlite::Connection::open(sandbox.data().join("mnemo.db"))?;
    let patched: String = db.query_row(
        "SELECT files_modified FROM events WHERE tool_name = 'apply_patch'",
        [],
        |r| r.get(0),
    )?;
    let read: String = db.query_row(
        "SELECT files_read FROM events WHERE input LIKE '%sed -n%'",
        [],
        |r| r.get(0),
    )?;
    assert!(read.contains("parser.rs"), "{read}");
    wait_compressed(&sandbox)?;
    e2e::keep_transcript(&db, "MNEMO_RECORD_ROLLOUT", "multi_file_patch")?;

    let modified = column(&db, "SELECT files_modified FROM observations")?.join(" ");
    for name in ["parser.rs", "lexer.rs", "token.rs"] {
        assert!(patched.contains(name), "{patched}");
        assert!(modified.contains(name), "{name} not kept: {modified}");
    }
    let (kind, error, memory) = remembered_of(&db, "rg -n")?;
    assert_eq!(
        (kind.as_str(), error),
        ("tool_use", None),
        "no match is no failure"
    );
    assert!(!memory.contains("failed"), "{memory}");
    assert!(!memory.contains("Ran `sed"), "{memory}");
    assert!(
        memory.contains("share one type"),
        "the why is missing: {memory}"
    );

    shell_read_gets_history(&sandbox, "src/lexer.rs")
}

/// A next session that reads `file` through the shell is shown the file's
/// history (PreToolUse of the command).
fn shell_read_gets_history(sandbox: &Sandbox, file: &str) -> anyhow::Result<()> {
    let next = StandIn::with_script([Step::bash(&format!("cat {file}")), Step::text("Read it.")]);
    codex(sandbox, &next, "what does it return?")
        .run()?
        .expect_success();
    let after_read = responses(&next)
        .into_iter()
        .find(|r| r.body_contains("earlier work on"));
    assert!(
        after_read.is_some_and(|r| r.body_contains(file)),
        "no file history for the shell read: {:?}",
        responses(&next).iter().map(|r| &r.body).collect::<Vec<_>>()
    );
    Ok(())
}

/// Writes `files` (path relative to `project`, text).
fn write_files(project: &std::path::Path, files: &[(&str, &str)]) -> anyhow::Result<()> {
    for (name, text) in files {
        let path = project.join(name);
        std::fs::create_dir_all(path.parent().expect("a folder"))?;
        std::fs::write(path, text)?;
    }
    Ok(())
}

/// The first column of every row of `sql`, as text.
fn column(db: &rusqlite::Connection, sql: &str) -> anyhow::Result<Vec<String>> {
    Ok(db
        .prepare(sql)?
        .query_map([], |r| r.get::<_, String>(0))?
        .collect::<Result<_, _>>()?)
}

/// The kind and error of the first event whose input has `command`, and
/// every stored observation and summary as text.
fn remembered_of(
    db: &rusqlite::Connection,
    command: &str,
) -> anyhow::Result<(String, Option<String>, String)> {
    let (kind, error): (String, Option<String>) = db.query_row(
        "SELECT kind, error FROM events WHERE instr(input, ?1) > 0 ORDER BY id LIMIT 1",
        [command],
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

/// A patch that updates one file, moves (and edits) another, deletes a
/// third and adds a fourth.
fn moving_patch(project: &std::path::Path) -> String {
    let p = |name: &str| project.join(name).to_string_lossy().into_owned();
    format!(
        "*** Begin Patch\n*** Update File: {}\n@@\n-pub fn parse(t: &str) -> Vec<String> {{ lex(t) }}\n\
         +pub fn parse(t: &str) -> Vec<crate::token::Token> {{ lex(t) }}\n\
         *** Update File: {}\n*** Move to: {}\n@@\n-pub fn name() -> &'static str {{ \"old\" }}\n\
         +pub fn name() -> &'static str {{ \"new\" }}\n*** Delete File: {}\n\
         *** Add File: {}\n+pub struct Token(pub String);\n*** End Patch\n",
        p("src/parser.rs"),
        p("src/names.rs"),
        p("src/naming.rs"),
        p("src/old_util.rs"),
        p("src/token.rs"),
    )
}

/// Reads through the shell in the forms agents use (a quoted alternation, a
/// pipe into `sed -n`, `cat`, a pattern with `>` in it) are reads, never
/// runs; a patch that moves, deletes and adds keeps every file it touched.
#[test]
fn shell_reads_of_every_form_are_reads_and_a_patch_keeps_moves_and_deletes() -> anyhow::Result<()> {
    let sandbox = Sandbox::new();
    let project = sandbox.project();
    git_init(&project)?;
    let files = [
        ("README.md", "# tokens\nA parser and a lexer.\n"),
        (
            "src/parser.rs",
            "pub fn parse(t: &str) -> Vec<String> { lex(t) }\n",
        ),
        (
            "src/lexer.rs",
            "pub fn lex(t: &str) -> Vec<String> {\n    t.split(' ').map(|w| w.into()).collect()\n}\n",
        ),
        (
            "src/names.rs",
            "pub fn name() -> &'static str { \"old\" }\n",
        ),
        ("src/old_util.rs", "pub fn unused() {}\n"),
    ];
    write_files(&project, &files)?;
    let patch = moving_patch(&project);
    install(&sandbox, "codex")?;
    let _stop = StopWorker(&sandbox);
    let reads = [
        "rg -n \"fn (parse|lex)\" src",
        "nl -ba src/lexer.rs | sed -n '1,40p'",
        "cat README.md",
        "grep -rn '=> ' src 2>/dev/null",
    ];
    let mut script: Vec<Step> = reads.iter().map(|c| Step::bash(c)).collect();
    script[0] = Step::bash(reads[0]).with_text("Looking for the entry points first.");
    script.push(
        Step::tool("apply_patch", serde_json::json!({ "patch": patch }))
            .with_text("One token type for both; the old util is dead code, names become naming."),
    );
    script.push(Step::text(
        "Parser returns tokens; names.rs is naming.rs; old_util.rs is gone.",
    ));
    let server = StandIn::with_script(script);
    codex(&sandbox, &server, "tidy the parser module")
        .run()?
        .expect_success();
    assert!(
        project.join("src/naming.rs").exists(),
        "the patch did not apply"
    );
    wait_compressed(&sandbox)?;
    let db = rusqlite::Connection::open(sandbox.data().join("mnemo.db"))?;
    e2e::keep_transcript(&db, "MNEMO_RECORD_ROLLOUT", "shell_reads")?;

    let titles = column(&db, "SELECT title FROM observations")?;
    assert!(
        !titles.iter().any(|t| t.starts_with("Ran ")),
        "a read titled as a run: {titles:?}"
    );
    let kept = column(&db, "SELECT files_modified FROM observations")?.join(" ");
    for name in ["parser.rs", "naming.rs", "old_util.rs", "token.rs"] {
        assert!(kept.contains(name), "{name} not kept: {kept}");
    }
    let read = column(
        &db,
        "SELECT files_read FROM events WHERE tool_name = 'Bash'",
    )?
    .join(" ");
    for name in ["lexer.rs", "README.md"] {
        assert!(read.contains(name), "{name} not read: {read}");
    }
    let kinds = column(&db, "SELECT kind FROM events WHERE tool_name = 'Bash'")?;
    assert!(kinds.iter().all(|k| k == "tool_use"), "{kinds:?}");
    Ok(())
}

/// A message the user types while a Codex turn runs comes with the running
/// turn's id: the real hook keeps it as part of that turn (not a new turn,
/// not dropped), and the same message delivered twice is kept once.
#[test]
fn a_message_typed_during_a_codex_turn_joins_the_turn() {
    let env = common::Env::new();
    let project = env.dir.path().join("project");
    std::fs::create_dir_all(&project).unwrap();
    let prompt = |text: &str| {
        serde_json::json!({
            "session_id": "019a-mid-turn", "turn_id": "019a-turn-1",
            "hook_event_name": "UserPromptSubmit", "cwd": project,
            "transcript_path": null, "model": "gpt-5.5",
            "permission_mode": "default", "prompt": text,
        })
        .to_string()
    };
    for text in [
        "split the settings loader",
        "keep the old file name",
        "keep the old file name",
    ] {
        let mut c = env.mnemo();
        c.args(["hook", "codex", "UserPromptSubmit"])
            .current_dir(&project);
        common::assert_hook_ok(&common::run_with_stdin(c, prompt(text).as_bytes()));
    }
    assert_eq!(
        env.strings("SELECT text FROM prompts"),
        ["split the settings loader\n\nkeep the old file name"]
    );
    assert_eq!(env.count("SELECT prompt_count FROM sessions"), 1);
}

/// Per event of a store: tool call id, tool, kind, files read and modified
/// (tool calls only), and the sessions, turns and turn ends.
type Shape = (Vec<(String, String, String, String, String)>, [i64; 3]);

fn shape(db_path: &std::path::Path) -> anyhow::Result<Shape> {
    let db = rusqlite::Connection::open(db_path)?;
    let events = db
        .prepare(
            "SELECT tool_use_id, tool_name, kind, files_read, files_modified FROM events
             WHERE tool_use_id IS NOT NULL ORDER BY tool_use_id",
        )?
        .query_map([], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?))
        })?
        .collect::<Result<_, _>>()?;
    let count = |sql: &str| db.query_row(sql, [], |r| r.get::<_, i64>(0));
    let counts = [
        count("SELECT count(*) FROM sessions WHERE platform = 'codex'")?,
        count("SELECT count(*) FROM prompts")?,
        count("SELECT count(*) FROM events WHERE kind = 'turn_end'")?,
    ];
    Ok((events, counts))
}

/// The real Codex writes the rollout: `mnemo import --transcripts` finds it
/// under `~/.codex/sessions` and, into an empty store, gives what the live
/// hooks captured (every call with its tool, kind and files; the turn and
/// its end); imported over the live capture it adds nothing.
#[test]
fn a_real_codex_rollout_imports_as_its_hooks_captured_it() -> anyhow::Result<()> {
    let sandbox = Sandbox::new();
    let project = sandbox.project();
    git_init(&project)?;
    write_files(
        &project,
        &[
            (
                "src/parser.rs",
                "pub fn parse(text: &str) -> Vec<String> {\n    vec![text.to_owned()]\n}\n",
            ),
            (
                "src/lexer.rs",
                "pub fn lex(text: &str) -> Vec<String> {\n    vec![text.to_owned()]\n}\n",
            ),
        ],
    )?;
    install(&sandbox, "codex")?;
    let server = StandIn::with_script([
        Step::bash("cat src/lexer.rs"),
        Step::tool(
            "apply_patch",
            serde_json::json!({"patch": three_file_patch(&project)}),
        ),
        Step::bash("python3 -c 'import sys; sys.exit(2)'"),
        Step::text("Parser and lexer share src/token.rs."),
    ]);
    codex(
        &sandbox,
        &server,
        "give the parser and the lexer one token type",
    )
    .env("MNEMO_NO_WORKER", "1")
    .run()?
    .expect_success();
    let live = shape(&sandbox.data().join("mnemo.db"))?;
    assert_eq!(live.0.len(), 3, "{live:?}");
    assert_eq!(live.1, [1, 1, 1], "{live:?}");

    let import = |data: &std::path::Path| -> anyhow::Result<()> {
        let out = common::sandbox_mnemo(&sandbox)
            .env("MNEMO_DATA_DIR", data)
            .env("MNEMO_NO_WORKER", "1")
            .args(["import", "--transcripts"])
            .output()?;
        anyhow::ensure!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        Ok(())
    };
    let fresh = tempfile::tempdir()?;
    import(fresh.path())?;
    assert_eq!(shape(&fresh.path().join("mnemo.db"))?, live);
    import(&sandbox.data())?;
    assert_eq!(shape(&sandbox.data().join("mnemo.db"))?, live);
    Ok(())
}

/// The limiter project's files before the longer session.
const LIMITER: &[(&str, &str)] = &[
    (
        "limiter.py",
        "import time\n\n\nclass Limiter:\n    def __init__(self, rate):\n        self.rate = rate\n        self.tokens = rate\n        self.last = time.monotonic()\n\n    def allow(self):\n        now = time.monotonic()\n        self.tokens = min(self.rate, self.tokens + (now - self.last) * self.rate)\n        self.last = now\n        if self.tokens >= 1:\n            self.tokens -= 1\n            return True\n        return False\n",
    ),
    (
        "README.md",
        "# limiter\nRate limiting for the billing API.\n",
    ),
];

/// The patch that splits `limiter.py` into a clock and a bucket module.
fn split_patch(project: &std::path::Path) -> String {
    let p = |name: &str| project.join(name).to_string_lossy().into_owned();
    format!(
        "*** Begin Patch\n*** Add File: {}\n+import time\n+\n+\n+def now_ms():\n+    return int(time.monotonic() * 1000)\n\
         *** Add File: {}\n+from clock import now_ms\n+\n+\n+class TokenBucket:\n+    def __init__(self, capacity, per_second):\n\
         +        self.capacity = capacity\n+        self.per_second = per_second\n+        self.tokens = capacity\n+        self.last = now_ms()\n+\n\
         +    def refill(self, elapsed_ms):\n+        self.tokens = min(self.capacity, self.tokens + elapsed_ms * self.per_second)\n+\n\
         +    def take(self):\n+        now = now_ms()\n+        self.refill(now - self.last)\n+        self.last = now\n\
         +        if self.tokens >= 1:\n+            self.tokens -= 1\n+            return True\n+        return False\n\
         *** Update File: {}\n@@\n-import time\n+from bucket import TokenBucket\n*** End Patch\n",
        p("clock.py"),
        p("bucket.py"),
        p("limiter.py"),
    )
}

/// Records the Codex session of the quality bench's Codex question set
/// (`MNEMO_RECORD_ROLLOUT=dir cargo test -p mnemo --test e2e_codex --
/// --ignored longer`): four `codex exec` runs in one project against the
/// stand-in: a multi-file patch after shell reads, a failing then passing
/// test, a choice the user states between two approaches, and a question
/// answered from the code. Each run's rollout is copied to the directory.
#[test]
#[ignore = "records the quality bench's Codex session; run by hand"]
fn a_longer_codex_session_for_the_quality_bench() -> anyhow::Result<()> {
    let sandbox = Sandbox::new();
    let project = sandbox.project();
    git_init(&project)?;
    write_files(&project, LIMITER)?;
    install(&sandbox, "codex")?;
    let record = std::env::var_os("MNEMO_RECORD_ROLLOUT");
    for (i, (prompt, script)) in limiter_runs(&project).into_iter().enumerate() {
        let server = StandIn::with_script(script);
        codex(&sandbox, &server, prompt)
            .env("MNEMO_NO_WORKER", "1")
            .run()?
            .expect_success();
        let db = rusqlite::Connection::open(sandbox.data().join("mnemo.db"))?;
        let path: String = db.query_row(
            "SELECT transcript_path FROM sessions ORDER BY id DESC LIMIT 1",
            [],
            |r| r.get(0),
        )?;
        if let Some(dir) = &record {
            std::fs::copy(
                &path,
                std::path::Path::new(dir).join(format!("rollout.limiter{}.jsonl", i + 1)),
            )?;
        }
    }
    assert!(project.join("bucket.py").exists() && project.join("api_limits.py").exists());
    let db = rusqlite::Connection::open(sandbox.data().join("mnemo.db"))?;
    let sessions: i64 = db.query_row("SELECT count(*) FROM sessions", [], |r| r.get(0))?;
    assert_eq!(sessions, 4);
    Ok(())
}

/// Records four more runs of the same project for the Codex question set
/// (`MNEMO_RECORD_ROLLOUT=dir cargo test -p mnemo --test e2e_codex --
/// --ignored more_codex`): after the four runs above (not copied again), a
/// multi-file refactor in one patch (a package added, a file deleted, a
/// method renamed), a failing compile fixed, a choice the user states with
/// its reason, and a message sent later in the same session (`codex exec
/// resume --last`). Their rollouts are copied as `rollout.limiter5.jsonl`…
/// (stored with the sandbox's paths rewritten to `/home/dev/work/limiter`
/// and `/home/dev`, as the first four are).
#[test]
#[ignore = "records the quality bench's Codex session; run by hand"]
fn more_codex_sessions_for_the_quality_bench() -> anyhow::Result<()> {
    let sandbox = Sandbox::new();
    let project = sandbox.project();
    git_init(&project)?;
    write_files(&project, LIMITER)?;
    install(&sandbox, "codex")?;
    let record = std::env::var_os("MNEMO_RECORD_ROLLOUT");
    let runs = limiter_runs(&project)
        .into_iter()
        .map(|(prompt, script)| (prompt, script, false))
        .chain(more_limiter_runs(&project));
    for (i, (prompt, script, resume)) in runs.enumerate() {
        let server = StandIn::with_script(script);
        let run = if resume {
            // `codex exec … resume --last PROMPT`: the same session, later.
            codex(&sandbox, &server, "resume").args(["--last", prompt])
        } else {
            codex(&sandbox, &server, prompt)
        };
        run.env("MNEMO_NO_WORKER", "1").run()?.expect_success();
        let db = rusqlite::Connection::open(sandbox.data().join("mnemo.db"))?;
        let path: String = db.query_row(
            "SELECT transcript_path FROM sessions ORDER BY updated_at DESC, id DESC LIMIT 1",
            [],
            |r| r.get(0),
        )?;
        if let Some(dir) = record.as_ref().filter(|_| i >= 4) {
            // A resumed session's rollout replaces its first run's copy.
            let n = if resume { i } else { i + 1 };
            std::fs::copy(
                &path,
                std::path::Path::new(dir).join(format!("rollout.limiter{n}.jsonl")),
            )?;
        }
    }
    assert!(project.join("limits/search.py").exists() && !project.join("api_limits.py").exists());
    Ok(())
}

/// The later runs: (prompt, script, resumes the previous session).
fn more_limiter_runs(project: &std::path::Path) -> Vec<(&'static str, Vec<Step>, bool)> {
    let p = |name: &str| project.join(name).to_string_lossy().into_owned();
    let search = project.join("limits/search.py");
    vec![
        (
            "move the API limits into a limits package, one module per API, and rename TokenBucket.take to try_acquire",
            vec![
                Step::bash("sed -n '1,40p' bucket.py").with_text("Reading the bucket and the limits before moving them."),
                Step::bash("rg -n 'take' --glob '*.py' ."),
                Step::tool("apply_patch", serde_json::json!({"patch": format!(
                    "*** Begin Patch\n*** Add File: {}\n+from limits.billing import BILLING_API\n\
                     *** Add File: {}\n+from bucket import TokenBucket\n+\n+# Token bucket, not a fixed window: the nightly invoice export bursts.\n+BILLING_API = TokenBucket(capacity=50, per_second=5)\n\
                     *** Delete File: {}\n*** Update File: {}\n@@\n-    def take(self):\n+    def try_acquire(self):\n*** End Patch\n",
                    p("limits/__init__.py"), p("limits/billing.py"), p("api_limits.py"), p("bucket.py")
                )}))
                .with_text("One module per API under limits/ keeps each API's numbers beside their reason; try_acquire says the call may not get a token."),
                Step::bash("python3 -m unittest test_bucket"),
                Step::text("Moved BILLING_API to limits/billing.py (limits/__init__.py re-exports it), deleted api_limits.py, and renamed take to try_acquire in bucket.py; test_bucket passes."),
            ],
            false,
        ),
        (
            "add a limit for the search API: 20 requests per second with bursts of 40, and check that everything compiles",
            vec![
                Step::write(&search, "from bucket import TokenBucket\n\n# Search is interactive: short bursts, steady rate.\nSEARCH_API = TokenBucket(capacity=40, per_second=20\n"),
                Step::bash("python3 -m compileall -q limits"),
                Step::tool("apply_patch", serde_json::json!({"patch": format!(
                    "*** Begin Patch\n*** Update File: {}\n@@\n-SEARCH_API = TokenBucket(capacity=40, per_second=20\n+SEARCH_API = TokenBucket(capacity=40, per_second=20)\n*** End Patch\n",
                    search.display()
                )}))
                .with_text("compileall fails because search.py never closes the parenthesis of the TokenBucket call."),
                Step::bash("python3 -m compileall -q limits"),
                Step::text("limits/search.py adds SEARCH_API = TokenBucket(capacity=40, per_second=20); python3 -m compileall -q limits passes now that the parenthesis is closed."),
            ],
            false,
        ),
        (
            "when a bucket is empty raise RateLimited instead of returning False. We chose exceptions over return codes because the billing client only retries on exceptions",
            vec![
                Step::bash("grep -n 'return False' bucket.py"),
                Step::tool("apply_patch", serde_json::json!({"patch": format!(
                    "*** Begin Patch\n*** Update File: {}\n@@\n from clock import now_ms\n+\n+\n+class RateLimited(Exception):\n+    \"\"\"Raised when a bucket has no token left.\"\"\"\n@@\n             return True\n-        return False\n+        raise RateLimited()\n*** End Patch\n",
                    p("bucket.py")
                )})),
                Step::bash("python3 -m unittest test_bucket"),
                Step::text("try_acquire raises RateLimited (defined in bucket.py) when the bucket is empty instead of returning False, since the billing client retries on exceptions only; test_bucket passes."),
            ],
            false,
        ),
        (
            "document the limits package in the README",
            vec![
                Step::bash("cat README.md"),
                Step::tool("apply_patch", serde_json::json!({"patch": format!(
                    "*** Begin Patch\n*** Update File: {}\n@@\n Rate limiting for the billing API.\n+\n+## Limits\n+- billing: bursts of 50, 5 per second (limits/billing.py)\n*** End Patch\n",
                    p("README.md")
                )})),
                Step::text("README.md has a Limits section with the billing limit."),
            ],
            false,
        ),
        (
            "also list the search limit there, and say why billing uses a token bucket",
            vec![
                // The resumed conversation carries the two tool results of
                // the run before: the stand-in counts them as steps made.
                Step::bash("true"),
                Step::bash("true"),
                Step::tool("apply_patch", serde_json::json!({"patch": format!(
                    "*** Begin Patch\n*** Update File: {}\n@@\n - billing: bursts of 50, 5 per second (limits/billing.py)\n+- search: bursts of 40, 20 per second (limits/search.py)\n+\n+Billing uses a token bucket because the nightly invoice export sends bursts.\n*** End Patch\n",
                    p("README.md")
                )})),
                Step::text("The README's Limits section now lists the search limit (bursts of 40, 20 per second) and says billing uses a token bucket for the nightly export's bursts."),
            ],
            true,
        ),
    ]
}

/// The prompts and stand-in scripts of the longer session's four runs.
fn limiter_runs(project: &std::path::Path) -> Vec<(&'static str, Vec<Step>)> {
    let test_file = project.join("test_bucket.py");
    vec![
        (
            "split the limiter into a clock module and a token bucket module",
            vec![
                Step::bash("cat limiter.py").with_text("Reading the limiter before splitting it."),
                Step::bash("rg -n 'monotonic' ."),
                Step::tool("apply_patch", serde_json::json!({"patch": split_patch(project)}))
                    .with_text("The clock goes to clock.py so tests can fake time; the bucket logic goes to bucket.py."),
                Step::text("Split done: clock.py holds now_ms(), bucket.py holds TokenBucket, limiter.py imports it."),
            ],
        ),
        (
            "add a unit test for the refill rate and make it pass",
            vec![
                Step::write(
                    &test_file,
                    "import unittest\nfrom bucket import TokenBucket\n\n\nclass RefillTest(unittest.TestCase):\n    def test_refills_per_second(self):\n        b = TokenBucket(capacity=10, per_second=2)\n        b.tokens = 0\n        b.refill(1000)\n        self.assertEqual(b.tokens, 2)\n\n\nif __name__ == '__main__':\n    unittest.main()\n",
                ),
                Step::bash("python3 -m unittest test_bucket"),
                Step::bash("sed -n '1,20p' bucket.py").with_text(
                    "The refill multiplies milliseconds by a per-second rate, so one second adds 2000 tokens instead of 2.",
                ),
                Step::tool(
                    "apply_patch",
                    serde_json::json!({"patch": format!(
                        "*** Begin Patch\n*** Update File: {}\n@@\n-        self.tokens = min(self.capacity, self.tokens + elapsed_ms * self.per_second)\n+        self.tokens = min(self.capacity, self.tokens + elapsed_ms * self.per_second / 1000)\n*** End Patch\n",
                        project.join("bucket.py").display()
                    )}),
                ),
                Step::bash("python3 -m unittest test_bucket"),
                Step::text("test_bucket passes: refill now converts milliseconds to seconds."),
            ],
        ),
        (
            "for the billing API use the token bucket, not a fixed window counter: the nightly invoice export sends bursts that must get through",
            vec![
                Step::bash("grep -rn 'TokenBucket' --include=*.py ."),
                Step::write(
                    project.join("api_limits.py"),
                    "from bucket import TokenBucket\n\n# Token bucket, not a fixed window: the nightly invoice export bursts.\nBILLING_API = TokenBucket(capacity=50, per_second=5)\n",
                ),
                Step::text("api_limits.py gives the billing API a TokenBucket of capacity 50 refilling 5 per second, so the export's bursts pass."),
            ],
        ),
        (
            "how many requests per second does the billing api allow over time",
            vec![
                Step::bash("cat api_limits.py"),
                Step::text("Five per second on average, with bursts of up to 50 (BILLING_API in api_limits.py)."),
            ],
        ),
    ]
}
