//! Files that are not what their names say: a FIFO or a symlink to
//! `/dev/zero` where a transcript, a subagent's file or a database's `-wal`
//! should be, a line or a row that does not parse. With the real `mnemo`
//! binary and real FIFOs, every import and the worker finish, read the rest,
//! and say what they skipped.
#![cfg(unix)]

mod common;
#[path = "common/worker.rs"]
mod worker_support;

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use common::Env;
use serde_json::json;
use worker_support::{Worker, hook, payload, project, session_start, turn, wait_all_done};

const T: Duration = Duration::from_secs(60);
const SPOTTER: &str = "258c7280-ae70-4798-800f-63464d01a85d";

fn spotter() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../mnemo-transcript/tests/fixtures/spotter")
}

fn mkfifo(path: &Path) {
    let c = std::ffi::CString::new(path.to_str().unwrap()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(
        unsafe { libc::mkfifo(c.as_ptr(), 0o600) },
        0,
        "mkfifo {path:?}"
    );
}

/// Runs `c` to completion, or kills it and fails if it outlives `limit`.
fn run_within(mut c: Command, limit: Duration) -> Output {
    let mut child = c
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let start = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > limit {
            child.kill().unwrap();
            let out = child.wait_with_output().unwrap();
            panic!(
                "still running after {limit:?}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    child.wait_with_output().unwrap()
}

fn text(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

#[test]
fn transcript_import_skips_fifos_devices_and_a_bad_line_and_reads_the_rest() {
    let env = Env::new();
    let dir = env.dir.path().join("projects/-home-u-spotter");
    std::fs::create_dir_all(dir.join(SPOTTER).join("subagents")).unwrap();
    std::fs::copy(
        spotter().join(format!("{SPOTTER}.jsonl")),
        dir.join(format!("{SPOTTER}.jsonl")),
    )
    .unwrap();
    // The subagent this session started is a FIFO nobody writes to.
    mkfifo(&dir.join(SPOTTER).join("subagents/agent-a881341.jsonl"));
    mkfifo(&dir.join("pipe.jsonl"));
    std::os::unix::fs::symlink("/dev/zero", dir.join("zero.jsonl")).unwrap();
    // A session whose middle line is torn: the lines around it still count.
    let short = std::fs::read_to_string(spotter().join("short.jsonl")).unwrap();
    let mut lines: Vec<&str> = short.lines().collect();
    let middle = lines.len() / 2;
    lines.insert(middle, "{\"type\":\"user\",\"message\":{\"content\":");
    std::fs::write(dir.join("short.jsonl"), lines.join("\n") + "\n").unwrap();

    let mut c = env.mnemo();
    c.args(["import", "--transcripts"])
        .arg(env.dir.path().join("projects"));
    let out = run_within(c, T);
    let said = text(&out);
    assert!(out.status.success(), "{said}");
    assert!(
        said.contains("pipe.jsonl") && said.contains("FIFO"),
        "{said}"
    );
    assert!(
        said.contains("zero.jsonl") && said.contains("device"),
        "{said}"
    );
    assert!(said.contains("1 subagent file"), "{said}");
    assert!(said.contains("3 files skipped"), "{said}");
    assert!(said.contains("1 line skipped"), "{said}");
    assert_eq!(env.count("SELECT count(*) FROM sessions"), 2, "{said}");
    assert!(env.count("SELECT count(*) FROM prompts") >= 2, "{said}");
}

/// A copy of the claude-mem fixture, in the test's directory.
fn claude_mem_copy(env: &Env) -> PathBuf {
    let dir = env.dir.path().join("claude-mem");
    std::fs::create_dir_all(&dir).unwrap();
    let to = dir.join("claude-mem.db");
    let from = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/claude-mem/claude-mem-13.25.3.db");
    std::fs::write(&to, std::fs::read(from).unwrap()).unwrap();
    to
}

#[test]
fn claude_mem_import_skips_a_fifo_wal_and_a_bad_row_and_imports_the_rest() {
    let env = Env::new();
    let db = claude_mem_copy(&env);
    let total: i64;
    {
        let conn = rusqlite::Connection::open(&db).unwrap();
        total = conn
            .query_row("SELECT count(*) FROM observations", [], |r| r.get(0))
            .unwrap();
        // SQLite keeps any type in any column: a text prompt number.
        conn.execute(
            "UPDATE observations SET prompt_number = 'three' WHERE id = (SELECT min(id) FROM observations)",
            [],
        )
        .unwrap();
    }
    let mut wal = db.as_os_str().to_owned();
    wal.push("-wal");
    mkfifo(Path::new(&wal));

    let mut c = env.mnemo();
    c.args(["import", "--from", "claude-mem"]).arg(&db);
    let out = run_within(c, T);
    let said = text(&out);
    assert!(said.contains("-wal") && said.contains("FIFO"), "{said}");
    assert!(said.contains("unreadable row of observations"), "{said}");
    assert_eq!(
        env.count("SELECT count(*) FROM observations"),
        total - 1,
        "{said}"
    );
}

#[test]
fn a_fifo_or_dev_zero_transcript_stalls_no_compression_and_sigterm_still_stops_the_worker() {
    let env = Env::new();
    let fifo = env.dir.path().join("held.jsonl");
    mkfifo(&fifo);
    let zero = env.dir.path().join("zero.jsonl");
    std::os::unix::fs::symlink("/dev/zero", &zero).unwrap();
    let proj = project(&env, "shop");
    let mut worker = Worker::start(&env, |_| {});
    for (session, transcript) in [
        ("11111111-0000-4000-8000-000000000001", &fifo),
        ("11111111-0000-4000-8000-000000000002", &zero),
    ] {
        hook(
            &env,
            "SessionStart",
            &payload("SessionStart.json", &proj, session, "", |v| {
                v["transcript_path"] = json!(transcript);
            }),
            |_| {},
        );
        hostile_turn(&env, &proj, session, transcript);
    }
    let ordinary = "11111111-0000-4000-8000-000000000003";
    session_start(&env, &proj, ordinary);
    turn(&env, &proj, ordinary, 1, &["c.rs"]);
    wait_all_done(&env, T);
    assert_eq!(
        env.count("SELECT count(DISTINCT session_id) FROM observations"),
        3
    );
    worker.signal(libc::SIGTERM);
    assert_eq!(worker.wait_exit(Duration::from_secs(15)), Some(0));
    let log = std::fs::read_to_string(env.data().join("logs/worker.log")).unwrap();
    assert!(log.contains("not a regular file"), "{log}");
}

/// A prompt and a Write whose payloads name `transcript` as the transcript.
fn hostile_turn(env: &Env, proj: &Path, session: &str, transcript: &Path) {
    let prompt_id = format!("prompt-{session}");
    let with_transcript = |v: &mut serde_json::Value| {
        v["transcript_path"] = json!(transcript);
    };
    hook(
        env,
        "UserPromptSubmit",
        &payload("UserPromptSubmit.json", proj, session, &prompt_id, |v| {
            with_transcript(v);
            v["prompt"] = json!("write a.rs");
        }),
        |_| {},
    );
    let path = proj.join("a.rs");
    hook(
        env,
        "PostToolUse",
        &payload("PostToolUse.Write.json", proj, session, &prompt_id, |v| {
            with_transcript(v);
            v["tool_use_id"] = json!(format!("toolu-{session}"));
            v["tool_input"]["file_path"] = json!(path);
            v["tool_input"]["content"] = json!("// a\n");
            v["tool_response"]["filePath"] = json!(path);
        }),
        |_| {},
    );
    hook(
        env,
        "Stop",
        &payload("Stop.json", proj, session, &prompt_id, |v| {
            with_transcript(v);
            v["last_assistant_message"] = json!("Wrote a.rs.");
        }),
        |_| {},
    );
}
