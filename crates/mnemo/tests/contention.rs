//! Bounded hooks, with real processes and files: whatever the contention on
//! the database or the spool, a hook answers within its deadline
//! (`capture.hook_deadline_ms`), and its event is stored or spooled, then
//! stored exactly once; whatever a project contains (a `.git` that is a
//! FIFO, a `HEAD` that is `/dev/zero`, a symlink loop) or whatever stdin
//! does (never closes), a hook neither blocks nor reads without bound.

mod common;
#[path = "common/worker.rs"]
mod worker_support;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use common::*;
use serde_json::json;
use worker_support::Worker;

/// A bound no healthy hook comes near, and a hung one always passes.
const GENEROUS: Duration = Duration::from_secs(3);

fn bash(proj: &Path, session: &str, tool_use_id: &str) -> String {
    json!({
        "session_id": session, "cwd": proj, "hook_event_name": "PostToolUse",
        "tool_name": "Bash",
        "tool_input": {"command": format!("run {tool_use_id}")},
        "tool_response": {"stdout": "ok", "stderr": ""},
        "tool_use_id": tool_use_id,
    })
    .to_string()
}

fn session_start(proj: &Path, session: &str) -> String {
    json!({"session_id": session, "cwd": proj, "hook_event_name": "SessionStart",
           "source": "startup"})
    .to_string()
}

/// Waits for `child` at most `limit`; kills it and fails past that.
fn finish_within(mut child: Child, limit: Duration, what: &str) -> (Output, Duration) {
    let started = Instant::now();
    loop {
        if child.try_wait().unwrap().is_some() {
            return (child.wait_with_output().unwrap(), started.elapsed());
        }
        if started.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{what}: the hook was still running after {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Runs a hook with `payload` on stdin (closed after it), bounded in time.
fn hook_bounded(mut c: Command, payload: &str, what: &str) -> (Output, Duration) {
    c.stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let started = Instant::now();
    let mut child = c.spawn().expect("mnemo starts");
    let mut pipe = child.stdin.take().unwrap();
    let _ = pipe.write_all(payload.as_bytes());
    drop(pipe);
    let (out, _) = finish_within(child, GENEROUS + GENEROUS, what);
    (out, started.elapsed())
}

fn hook_cmd(env: &Env, event: &str, deadline_ms: u64) -> Command {
    let mut c = env.mnemo();
    c.args(["hook", "claude-code", event])
        .env("MNEMO_CAPTURE_HOOK_DEADLINE_MS", deadline_ms.to_string());
    c
}

/// Spool files that still hold something (the main file or side files).
fn spooled(env: &Env) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(env.data().join("spool")) else {
        return Vec::new();
    };
    entries
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("pending"))
        })
        .filter(|p| std::fs::metadata(p).is_ok_and(|m| m.len() > 0))
        .collect()
}

/// (events, distinct tool_use_ids) in the database.
fn stored(env: &Env) -> (i64, i64) {
    (
        env.count("SELECT count(*) FROM events"),
        env.count("SELECT count(DISTINCT tool_use_id) FROM events"),
    )
}

// ---- contention ----

/// Before: a hook waited the whole busy timeout for the database, holding
/// the spool's lock while the others queued behind it, and ran far past
/// its deadline (here the busy timeout alone is 5 s).
#[test]
fn sixteen_hooks_against_a_held_write_lock_answer_in_time_and_lose_nothing() {
    let env = Env::new();
    let proj = env.dir.path().to_owned();
    assert_hook_ok(&env.hook("SessionStart", &session_start(&proj, "s0")));

    let holder = env.db();
    holder.execute_batch("BEGIN IMMEDIATE").unwrap();
    let locked_at = Instant::now();
    let runs: Vec<(Output, Duration)> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..16)
            .map(|i| {
                let (env, proj) = (&env, &proj);
                scope.spawn(move || {
                    let mut c = hook_cmd(env, "PostToolUse", 500);
                    c.env("MNEMO_STORE_BUSY_TIMEOUT_MS", "5000");
                    hook_bounded(
                        c,
                        &bash(proj, &format!("s{}", i % 4), &format!("t{i}")),
                        "16",
                    )
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let worst = runs.iter().map(|(_, took)| *took).max().unwrap();
    eprintln!("16 hooks against a held write lock: slowest {worst:?}");
    for (out, _) in &runs {
        assert_hook_ok(out);
        assert!(
            String::from_utf8_lossy(&out.stderr).contains("spooled"),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    assert!(worst < GENEROUS, "slowest hook took {worst:?}");
    assert!(!spooled(&env).is_empty());
    // The lock is held for about 5 s in all.
    std::thread::sleep(Duration::from_secs(5).saturating_sub(locked_at.elapsed()));
    holder.execute_batch("COMMIT").unwrap();
    drop(holder);

    assert_hook_ok(&env.hook("PostToolUse", &bash(&proj, "s0", "t16")));
    assert_eq!(stored(&env), (17, 17), "each event stored exactly once");
    assert!(spooled(&env).is_empty(), "{:?}", spooled(&env));
    assert_eq!(env.count("SELECT count(*) FROM applied_captures"), 0);
}

/// Hooks that answer with memory still answer, in time, while another
/// process holds the write lock: their note of what they gave (a write) is
/// skipped, not waited for. (A guard: their writes already failed fast on
/// the read-to-write upgrade; the hook also caps their busy timeout.)
#[test]
fn hooks_that_recall_answer_in_time_under_a_held_write_lock() {
    let env = Env::new();
    let proj = env.dir.path().join("app");
    std::fs::create_dir_all(proj.join("src")).unwrap();
    let import = env.dir.path().join("import.jsonl");
    let record = json!({"kind": "observation", "project": proj, "type": "bugfix",
        "title": "Token refresh retried forever on 401",
        "facts": ["refresh now gives up after three attempts"],
        "files_modified": [proj.join("src/refresh.rs")],
        "created_at": "2026-11-20T10:00:00Z"});
    std::fs::write(&import, format!("{record}\n")).unwrap();
    let out = env.mnemo().arg("import").arg(&import).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    let holder = env.db();
    holder.execute_batch("BEGIN IMMEDIATE").unwrap();
    let read = json!({"session_id": "r", "cwd": proj, "hook_event_name": "PreToolUse",
        "tool_name": "Read", "tool_use_id": "read-1",
        "tool_input": {"file_path": proj.join("src/refresh.rs")}});
    let ask = json!({"session_id": "r", "cwd": proj, "hook_event_name": "UserPromptSubmit",
        "prompt_id": "p1", "prompt": "why does the token refresh retry forever on 401?"});
    let mut answered = String::new();
    for (event, payload) in [
        ("SessionStart", session_start(&proj, "r")),
        ("UserPromptSubmit", ask.to_string()),
        ("PreToolUse", read.to_string()),
    ] {
        let mut c = hook_cmd(&env, event, 500);
        c.env("MNEMO_STORE_BUSY_TIMEOUT_MS", "5000");
        let (out, took) = hook_bounded(c, &payload, event);
        answered.push_str(&assert_hook_ok(&out).to_string());
        assert!(took < GENEROUS, "{event} took {took:?}");
    }
    assert!(
        answered.contains("Token refresh"),
        "memory still given: {answered}"
    );
    holder.execute_batch("COMMIT").unwrap();
}

/// A soak: 8 sessions × 100 hooks in parallel while the database's write
/// lock is taken for 600 ms every second (longer than a hook's deadline) and the worker (which writes too)
/// is killed and restarted; then nothing is lost and nothing is doubled,
/// and each session's events are in the order they were sent.
#[test]
fn soak_sessions_with_lock_contention_and_worker_restarts_lose_nothing() {
    const SESSIONS: usize = 8;
    const PER_SESSION: usize = 100;
    let env = Env::new();
    let proj = env.dir.path().to_owned();
    assert_hook_ok(&env.hook("SessionStart", &session_start(&proj, "soak-0")));
    let done = AtomicBool::new(false);
    std::thread::scope(|scope| {
        scope.spawn(|| {
            let holder = env.db();
            while !done.load(Ordering::Relaxed) {
                holder.execute_batch("BEGIN IMMEDIATE").unwrap();
                std::thread::sleep(Duration::from_millis(600));
                holder.execute_batch("COMMIT").unwrap();
                std::thread::sleep(Duration::from_millis(400));
            }
        });
        scope.spawn(|| {
            let mut worker = Some(Worker::start(&env, |_| {}));
            for _ in 0..3 {
                std::thread::sleep(Duration::from_millis(1500));
                if let Some(w) = worker.take() {
                    w.signal(libc::SIGKILL);
                    drop(w);
                }
                if done.load(Ordering::Relaxed) {
                    break;
                }
                worker = Some(Worker::start(&env, |_| {}));
            }
        });
        let sessions: Vec<_> = (0..SESSIONS)
            .map(|s| {
                let (env, proj) = (&env, &proj);
                scope.spawn(move || {
                    for i in 0..PER_SESSION {
                        let mut c = hook_cmd(env, "PostToolUse", 400);
                        c.env("MNEMO_STORE_BUSY_TIMEOUT_MS", "5000");
                        let payload = bash(proj, &format!("soak-{s}"), &format!("s{s}-{i:03}"));
                        let (out, took) = hook_bounded(c, &payload, "soak");
                        assert_hook_ok(&out);
                        assert!(took < GENEROUS, "a hook took {took:?}");
                    }
                })
            })
            .collect();
        for s in sessions {
            s.join().unwrap();
        }
        done.store(true, Ordering::Relaxed);
    });

    let log = env.hook_log();
    eprintln!(
        "soak: {} hooks spooled, {} ingests",
        log.matches("event spooled").count(),
        log.matches("ingested the spool").count()
    );
    assert!(log.contains("event spooled"), "the lock made hooks spool");
    assert_hook_ok(&env.hook("PostToolUse", &bash(&proj, "soak-0", "last")));
    let sent = (SESSIONS * PER_SESSION + 1) as i64;
    assert_eq!(stored(&env), (sent, sent), "zero lost, zero duplicated");
    assert!(spooled(&env).is_empty(), "{:?}", spooled(&env));
    for s in 0..SESSIONS {
        let db = env.db();
        let mut stmt = db
            .prepare(
                "SELECT e.tool_use_id FROM events e JOIN sessions x ON x.id = e.session_id
                 WHERE x.platform_session_id = ?1 AND e.tool_use_id != 'last' ORDER BY e.id",
            )
            .unwrap();
        let ids: Vec<String> = stmt
            .query_map([format!("soak-{s}")], |r| r.get(0))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        let mut sorted = ids.clone();
        sorted.sort();
        assert_eq!(ids.len(), PER_SESSION);
        assert_eq!(ids, sorted, "session soak-{s} kept its order");
    }
}

// ---- hostile filesystems ----

#[cfg(unix)]
fn mkfifo(path: &Path) {
    let status = Command::new("mkfifo").arg(path).status().unwrap();
    assert!(status.success());
}

/// Runs SessionStart then PostToolUse in `proj`; each must answer, within a
/// generous bound, and the event be stored under some project.
#[cfg(unix)]
fn hooks_survive(env: &Env, proj: &Path, what: &str) {
    let session = format!("hostile-{what}");
    for (event, payload) in [
        ("SessionStart", session_start(proj, &session)),
        ("PostToolUse", bash(proj, &session, &format!("t-{what}"))),
    ] {
        let (out, took) = hook_bounded(hook_cmd(env, event, 1000), &payload, what);
        assert_hook_ok(&out);
        assert!(took < GENEROUS, "{what}: {event} took {took:?}");
    }
    assert_eq!(
        env.count(&format!(
            "SELECT count(*) FROM events WHERE tool_use_id = 't-{what}'"
        )),
        1,
        "{what}"
    );
}

/// Before: opening a FIFO for reading waited for a writer forever, and
/// `/dev/zero` was read to the end of memory.
#[cfg(unix)]
#[test]
fn a_hostile_git_never_hangs_a_hook() {
    let env = Env::new();
    let root = env.dir.path().join("projects");

    let fifo_git = root.join("fifo-git");
    std::fs::create_dir_all(&fifo_git).unwrap();
    mkfifo(&fifo_git.join(".git"));
    hooks_survive(&env, &fifo_git, "fifo-git");

    let fifo_head = root.join("fifo-head");
    std::fs::create_dir_all(fifo_head.join(".git")).unwrap();
    mkfifo(&fifo_head.join(".git/HEAD"));
    hooks_survive(&env, &fifo_head, "fifo-head");

    let zero_head = root.join("zero-head");
    std::fs::create_dir_all(zero_head.join(".git")).unwrap();
    std::os::unix::fs::symlink("/dev/zero", zero_head.join(".git/HEAD")).unwrap();
    hooks_survive(&env, &zero_head, "zero-head");

    let zero_git = root.join("zero-git");
    std::fs::create_dir_all(&zero_git).unwrap();
    std::os::unix::fs::symlink("/dev/zero", zero_git.join(".git")).unwrap();
    hooks_survive(&env, &zero_git, "zero-git");

    // A worktree pointer whose git dir has a FIFO for HEAD and commondir.
    let elsewhere = root.join("elsewhere");
    std::fs::create_dir_all(&elsewhere).unwrap();
    mkfifo(&elsewhere.join("HEAD"));
    mkfifo(&elsewhere.join("commondir"));
    let pointer = root.join("pointer");
    std::fs::create_dir_all(&pointer).unwrap();
    std::fs::write(
        pointer.join(".git"),
        format!("gitdir: {}\n", elsewhere.display()),
    )
    .unwrap();
    hooks_survive(&env, &pointer, "pointer");

    let huge = root.join("huge");
    std::fs::create_dir_all(&huge).unwrap();
    let file = std::fs::File::create(huge.join(".git")).unwrap();
    file.set_len(4 << 30).unwrap(); // sparse: 4 GiB that cost no disk
    hooks_survive(&env, &huge, "huge");

    let looped = root.join("looped");
    std::fs::create_dir_all(&looped).unwrap();
    std::os::unix::fs::symlink(looped.join(".git2"), looped.join(".git")).unwrap();
    std::os::unix::fs::symlink(looped.join(".git"), looped.join(".git2")).unwrap();
    hooks_survive(&env, &looped, "looped");
}

/// Before: a host that never closed stdin kept the hook waiting forever.
#[test]
fn a_stdin_that_never_closes_ends_the_hook_at_its_deadline() {
    let env = Env::new();
    let proj = env.dir.path().to_owned();
    // The whole payload, then silence with the pipe still open: stored.
    for (what, payload, complete) in [
        ("whole", bash(&proj, "open", "t-whole"), true),
        (
            "half",
            bash(&proj, "open", "t-half")[..60].to_owned(),
            false,
        ),
    ] {
        let mut c = hook_cmd(&env, "PostToolUse", 600);
        c.stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = c.spawn().unwrap();
        let mut pipe = child.stdin.take().unwrap();
        pipe.write_all(payload.as_bytes()).unwrap();
        let (out, took) = finish_within(child, GENEROUS, what);
        drop(pipe);
        assert_hook_ok(&out);
        assert!(took < GENEROUS, "{what} took {took:?}");
        assert!(
            String::from_utf8_lossy(&out.stderr).contains("stdin was still open"),
            "{what}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let found = env.count(&format!(
            "SELECT count(*) FROM events WHERE tool_use_id = 't-{what}'"
        ));
        assert_eq!(found, i64::from(complete), "{what}");
    }
}
