//! Never lose an event: a locked, read-only, full or corrupt database sends
//! captures to the spool, and the next clean open stores them once, in order.
//! Also: many hook processes in parallel lose nothing.
//!
//! Read-only mounts and a full disk are real: the hooks run inside a private
//! mount namespace (`unshare`) with a read-only bind mount or a tiny tmpfs,
//! because permission bits alone do not stop root, which CI runs as.

mod common;

use std::path::Path;
use std::process::{Command, Output};

use common::*;
use serde_json::json;

fn payload(proj: &Path, session: &str, tool_use_id: &str, command: &str) -> String {
    json!({
        "session_id": session, "cwd": proj, "hook_event_name": "PostToolUse",
        "tool_name": "Bash",
        "tool_input": {"command": command}, "tool_response": {"stdout": "ok", "stderr": ""},
        "tool_use_id": tool_use_id,
    })
    .to_string()
}

fn prompt(proj: &Path, session: &str, text: &str) -> String {
    json!({"session_id": session, "cwd": proj, "hook_event_name": "UserPromptSubmit",
           "prompt_id": format!("pid-{text}"), "prompt": text})
    .to_string()
}

fn commands_in_order(env: &Env) -> Vec<String> {
    env.strings("SELECT json_extract(input, '$.command') FROM events ORDER BY id")
}

fn spool_lines(env: &Env) -> usize {
    std::fs::read_to_string(env.data().join("spool/pending.jsonl"))
        .map(|t| t.lines().count())
        .unwrap_or(0)
}

#[test]
fn a_locked_database_spools_and_the_next_hook_catches_up_in_order() {
    let env = Env::new();
    let proj = env.dir.path().to_owned();
    assert_hook_ok(&env.hook("UserPromptSubmit", &prompt(&proj, "s", "build it")));

    let holder = env.db();
    holder.execute_batch("BEGIN EXCLUSIVE").unwrap();
    for (id, cmd) in [("t1", "make one"), ("t2", "make two")] {
        let out = env.hook_with("PostToolUse", &payload(&proj, "s", id, cmd), |c| {
            c.env("MNEMO_STORE_BUSY_TIMEOUT_MS", "100");
        });
        assert_hook_ok(&out);
        assert!(String::from_utf8_lossy(&out.stderr).contains("event spooled"));
    }
    assert_eq!(spool_lines(&env), 2);
    holder.execute_batch("COMMIT").unwrap();
    drop(holder);

    assert_hook_ok(&env.hook("PostToolUse", &payload(&proj, "s", "t3", "make three")));
    assert_eq!(
        commands_in_order(&env),
        ["make one", "make two", "make three"]
    );
    assert_eq!(spool_lines(&env), 0);
    assert_eq!(
        env.count("SELECT count(*) FROM events WHERE prompt_number = 1"),
        3
    );
    assert_eq!(env.count("SELECT count(*) FROM applied_captures"), 0);

    // Nothing comes back twice.
    assert_hook_ok(&env.hook("PostToolUse", &payload(&proj, "s", "t4", "make four")));
    assert_eq!(env.count("SELECT count(*) FROM events"), 4);
}

/// Runs `script` with sh inside a private mount namespace; `$MNEMO` is the
/// binary and the environment is the test's.
fn in_mount_namespace(env: &Env, script: &str) -> Output {
    let root = unsafe { libc::geteuid() } == 0;
    let mut c = Command::new("unshare");
    c.args(if root {
        &["-m", "--propagation", "private"][..]
    } else {
        &["-rm"][..]
    });
    c.args(["sh", "-ec", script]);
    let template = env.mnemo();
    for (k, v) in template.get_envs() {
        match v {
            Some(v) => c.env(k, v),
            None => c.env_remove(k),
        };
    }
    c.env("MNEMO", MNEMO);
    let out = c.output().expect("unshare runs (util-linux)");
    assert!(
        out.status.success(),
        "namespace script failed: {}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

fn write_payload(env: &Env, name: &str, text: &str) -> std::path::PathBuf {
    let p = env.dir.path().join(name);
    std::fs::write(&p, text).unwrap();
    p
}

#[test]
fn a_read_only_database_file_spools() {
    let env = Env::new();
    let proj = env.dir.path().to_owned();
    assert_hook_ok(&env.hook("UserPromptSubmit", &prompt(&proj, "s", "go")));
    let p1 = write_payload(&env, "p1.json", &payload(&proj, "s", "t1", "make ro"));
    let out = in_mount_namespace(
        &env,
        &format!(
            "mount --bind '{db}' '{db}'; mount -o remount,bind,ro '{db}'; \
             \"$MNEMO\" hook claude-code PostToolUse < '{p1}'",
            db = env.db_path().display(),
            p1 = p1.display()
        ),
    );
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("readonly"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(spool_lines(&env), 1);
    assert_eq!(env.count("SELECT count(*) FROM events"), 0);

    assert_hook_ok(&env.hook("PostToolUse", &payload(&proj, "s", "t2", "make rw")));
    assert_eq!(commands_in_order(&env), ["make ro", "make rw"]);
    assert_eq!(spool_lines(&env), 0);
}

#[test]
fn an_unwritable_data_directory_spools_to_the_fallback() {
    let env = Env::new();
    let proj = env.dir.path().to_owned();
    assert_hook_ok(&env.hook("UserPromptSubmit", &prompt(&proj, "s", "go")));
    let p1 = write_payload(&env, "p1.json", &payload(&proj, "s", "t1", "make while ro"));
    let data = env.data();
    let out = in_mount_namespace(
        &env,
        &format!(
            "mount --bind '{d}' '{d}'; mount -o remount,bind,ro '{d}'; \
             \"$MNEMO\" hook claude-code PostToolUse < '{p1}'",
            d = data.display(),
            p1 = p1.display()
        ),
    );
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(
        stderr.contains("mnemo-spool-"),
        "spooled to the fallback: {stderr}"
    );
    let fallback = mnemo_core::DataDir::at(&data).fallback_spool_dir();
    assert_eq!(
        std::fs::read_to_string(fallback.join("pending.jsonl"))
            .unwrap()
            .lines()
            .count(),
        1
    );

    assert_hook_ok(&env.hook("PostToolUse", &payload(&proj, "s", "t2", "make after")));
    assert_eq!(commands_in_order(&env), ["make while ro", "make after"]);
    assert_eq!(
        std::fs::metadata(fallback.join("pending.jsonl"))
            .unwrap()
            .len(),
        0
    );
    let _ = std::fs::remove_dir_all(fallback);
}

#[test]
fn a_full_disk_spools_and_catches_up_once_space_returns() {
    let env = Env::new();
    let proj = env.dir.path().join("proj");
    std::fs::create_dir_all(&proj).unwrap();
    std::fs::create_dir_all(env.data()).unwrap();
    let payloads: Vec<_> = (1..=3)
        .map(|i| {
            write_payload(
                &env,
                &format!("p{i}.json"),
                &payload(&proj, "s", &format!("t{i}"), &format!("step {i}")),
            )
        })
        .collect();
    let start = write_payload(&env, "start.json", &prompt(&proj, "s", "fill the disk"));
    let export = env.dir.path().join("export.jsonl");
    let data = env.data();
    let out = in_mount_namespace(
        &env,
        &format!(
            // Room for a new store and its first WAL (the schema is about
            // 320 KiB now); dd then fills whatever is left.
            "mount -t tmpfs -o size=1536k,mode=0700 tmpfs '{d}'
             \"$MNEMO\" hook claude-code UserPromptSubmit < '{start}'
             \"$MNEMO\" hook claude-code PostToolUse < '{p1}'
             dd if=/dev/zero of='{d}/filler' bs=4096 2>/dev/null || true
             \"$MNEMO\" hook claude-code PostToolUse < '{p2}' 2> '{d}/../full.err' || true
             cp '{d}/../full.err' '{d}/../full.err.kept' 2>/dev/null || true
             rm '{d}/filler'
             \"$MNEMO\" hook claude-code PostToolUse < '{p3}'
             \"$MNEMO\" export > '{export}'",
            d = data.display(),
            start = start.display(),
            p1 = payloads[0].display(),
            p2 = payloads[1].display(),
            p3 = payloads[2].display(),
            export = export.display(),
        ),
    );
    let full_err = std::fs::read_to_string(env.dir.path().join("full.err")).unwrap();
    assert!(
        full_err.contains("event spooled"),
        "{full_err}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let exported = std::fs::read_to_string(&export).unwrap();
    let commands: Vec<String> = exported
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .filter(|v| v["kind"] == "event")
        .map(|v| v["input"]["command"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(commands, ["step 1", "step 2", "step 3"]);
    let _ = std::fs::remove_dir_all(mnemo_core::DataDir::at(&data).fallback_spool_dir());
}

#[test]
fn a_corrupt_database_spools_and_doctor_fix_recovers_capture() {
    let env = Env::new();
    let proj = env.dir.path().to_owned();
    assert_hook_ok(&env.hook("UserPromptSubmit", &prompt(&proj, "s", "go")));
    std::fs::write(env.db_path(), vec![0x42u8; 16 * 1024]).unwrap();
    let out = env.hook(
        "PostToolUse",
        &payload(&proj, "s", "t1", "make during corruption"),
    );
    assert_hook_ok(&out);
    assert!(String::from_utf8_lossy(&out.stderr).contains("event spooled"));
    assert_eq!(spool_lines(&env), 1);

    let doctor = env.mnemo().arg("doctor").output().unwrap();
    let report = String::from_utf8_lossy(&doctor.stdout);
    assert_eq!(doctor.status.code(), Some(2), "a failure: {report}");
    assert!(
        report.contains("not a database") || report.contains("malformed"),
        "{report}"
    );
    assert!(report.contains("mnemo doctor --fix"), "{report}");

    let fixed = env.mnemo().args(["doctor", "--fix"]).output().unwrap();
    let report = String::from_utf8_lossy(&fixed.stdout);
    assert!(report.contains("moved the corrupt database to"), "{report}");
    assert!(report.contains("ingested the spool: 1 stored"), "{report}");
    assert_eq!(commands_in_order(&env), ["make during corruption"]);
    let kept: Vec<_> = std::fs::read_dir(env.data())
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().contains(".corrupt-"))
        .collect();
    assert_eq!(kept.len(), 1, "the damaged file is kept");
}

/// The first open of a store is its creation: when eight hooks start at once
/// on a data directory with no database, the ones that lose the race wait for
/// the schema instead of spooling their event or reading an empty store.
/// Each round is a fresh store; the race is rare, so it runs many rounds.
#[test]
fn eight_hooks_creating_a_store_at_once_wait_for_its_schema() {
    for round in 0..25 {
        let env = Env::new();
        let proj = env.dir.path().to_owned();
        let outputs: Vec<Output> = std::thread::scope(|scope| {
            let handles: Vec<_> = (0..8)
                .map(|s| {
                    let (env, proj) = (&env, &proj);
                    scope.spawn(move || {
                        let session = format!("first-{s}");
                        env.hook(
                            "UserPromptSubmit",
                            &prompt(proj, &session, "how does the store get created"),
                        )
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        for out in &outputs {
            assert_eq!(out.status.code(), Some(0));
            assert!(
                out.stderr.is_empty(),
                "round {round}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        assert_eq!(spool_lines(&env), 0, "round {round}: nothing spooled");
        assert_eq!(
            env.count("SELECT count(*) FROM prompts"),
            8,
            "round {round}"
        );
        assert_eq!(env.hook_log(), "", "round {round}: no warnings");
    }
}

#[test]
fn eight_processes_times_five_hundred_hooks_lose_nothing() {
    let env = Env::new();
    let proj = env.dir.path().to_owned();
    const SESSIONS: usize = 8;
    const PER_SESSION: usize = 500;
    std::thread::scope(|scope| {
        for s in 0..SESSIONS {
            let env = &env;
            let proj = &proj;
            scope.spawn(move || {
                let session = format!("parallel-{s}");
                for i in 0..PER_SESSION {
                    let text = if i % 100 == 0 {
                        prompt(proj, &session, &format!("prompt {i}"))
                    } else {
                        payload(
                            proj,
                            &session,
                            &format!("t{s}-{i}"),
                            &format!("cmd {s} {i}"),
                        )
                    };
                    let event = if i % 100 == 0 {
                        "UserPromptSubmit"
                    } else {
                        "PostToolUse"
                    };
                    let out = env.hook(event, &text);
                    assert_eq!(out.status.code(), Some(0));
                    assert!(
                        out.stderr.is_empty(),
                        "{}",
                        String::from_utf8_lossy(&out.stderr)
                    );
                }
            });
        }
    });
    let expected_events = SESSIONS * (PER_SESSION - PER_SESSION / 100);
    assert_eq!(
        env.count("SELECT count(*) FROM events") as usize,
        expected_events
    );
    assert_eq!(
        env.count("SELECT count(DISTINCT tool_use_id) FROM events") as usize,
        expected_events
    );
    assert_eq!(
        env.count("SELECT count(*) FROM sessions") as usize,
        SESSIONS
    );
    assert_eq!(
        env.count("SELECT sum(prompt_count) FROM sessions") as usize,
        SESSIONS * 5
    );
    assert_eq!(spool_lines(&env), 0, "nothing needed the spool");
    assert_eq!(env.hook_log(), "", "no warnings or errors");
}
