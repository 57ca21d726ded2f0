//! The worker as a process: start, status, stop, one per data directory,
//! graceful SIGTERM, idle exit and restart by a hook, SIGKILL in the middle
//! of a backlog, leases of a dead worker, failed events and their retry,
//! budgets. Real `mnemo` processes, a real database, hooks fed real
//! payloads, real HTTP on loopback.

mod common;
#[path = "common/worker.rs"]
mod worker_support;

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use common::*;
use serde_json::Value;
use worker_support::*;

const T: Duration = Duration::from_secs(30);

fn stdout(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn stderr(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn start_status_stop() {
    let env = Env::new();
    let _guard = DetachedGuard(env.data());
    let cli = |args: &[&str]| {
        let mut c = env.mnemo();
        c.args(args);
        worker_env(&mut c);
        c.output().unwrap()
    };

    let status = cli(&["worker", "status", "--json"]);
    assert_eq!(status.status.code(), Some(3), "{}", stdout(&status));
    let report: Value = serde_json::from_str(&stdout(&status)).unwrap();
    assert_eq!(report["running"], false);

    let started = cli(&["worker", "start"]);
    assert!(started.status.success(), "{}", stderr(&started));
    assert!(
        stdout(&started).contains("worker started"),
        "{}",
        stdout(&started)
    );
    let info = worker_json(&env).expect("worker.json");
    let (pid, port) = (
        info["pid"].as_u64().unwrap() as u32,
        info["port"].as_u64().unwrap() as u16,
    );
    assert!(alive(pid));
    assert_eq!(info["token"].as_str().unwrap().len(), 64);
    assert_eq!(info["version"], env!("CARGO_PKG_VERSION"));
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(env.data().join("worker.json"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600, "worker.json is private");
    }
    let (code, body) = get(port, "/api/health", None);
    assert_eq!(code, 200);
    let health: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(health["status"], "ok");
    assert_eq!(health["pid"], pid);
    assert_eq!(health["queue"]["pending"], 0);

    let again = cli(&["worker", "start"]);
    assert!(again.status.success());
    assert!(
        stdout(&again).contains("already running"),
        "{}",
        stdout(&again)
    );

    let status = cli(&["worker", "status", "--json"]);
    assert_eq!(status.status.code(), Some(0));
    let report: Value = serde_json::from_str(&stdout(&status)).unwrap();
    assert_eq!(
        (report["running"].clone(), report["pid"].clone()),
        (Value::Bool(true), pid.into())
    );
    let human = cli(&["worker", "status"]);
    assert!(
        stdout(&human).contains(&format!("pid {pid}")),
        "{}",
        stdout(&human)
    );

    let stopped = cli(&["worker", "stop"]);
    assert!(stopped.status.success(), "{}", stderr(&stopped));
    assert!(stdout(&stopped).contains("worker stopped"));
    assert!(
        !env.data().join("worker.json").exists(),
        "worker.json removed on exit"
    );
    wait_for("the worker process to end", T, || {
        (!alive(pid)).then_some(())
    });
    assert_eq!(cli(&["worker", "status"]).status.code(), Some(3));
    assert!(stdout(&cli(&["worker", "stop"])).contains("not running"));

    // restart from stopped: starts.
    let restarted = cli(&["worker", "restart"]);
    assert!(restarted.status.success(), "{}", stderr(&restarted));
    let new_pid = worker_json(&env).unwrap()["pid"].as_u64().unwrap() as u32;
    assert_ne!(new_pid, pid);
    assert!(cli(&["worker", "stop"]).status.success());
}

#[test]
fn one_worker_per_data_directory() {
    let env = Env::new();
    let first = Worker::start(&env, |_| {});
    let mut c = env.mnemo();
    c.args(["worker", "run"]);
    worker_env(&mut c);
    let second = c.output().unwrap();
    assert_eq!(second.status.code(), Some(1));
    let err = stderr(&second);
    assert!(err.contains("already running"), "{err}");
    assert!(err.contains(&format!("pid {}", first.pid)), "{err}");
    // The first one is unharmed, and still the one in worker.json.
    assert_eq!(get(first.port, "/api/health", None).0, 200);
    assert_eq!(worker_json(&env).unwrap()["pid"], first.pid);
}

#[test]
fn a_port_taken_by_another_program_is_named() {
    let env = Env::new();
    let squatter = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = squatter.local_addr().unwrap().port();
    let mut c = env.mnemo();
    c.args(["worker", "run"]);
    worker_env(&mut c);
    c.env("MNEMO_PORT", port.to_string());
    let out = c.output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(
        err.contains(&format!(
            "127.0.0.1:{port} is already in use by another program"
        )),
        "{err}"
    );
    assert!(!env.data().join("worker.json").exists());
    // And doctor says so from the log.
    let doctor = env.mnemo().arg("doctor").output().unwrap();
    assert!(
        stdout(&doctor).contains("already in use"),
        "{}",
        stdout(&doctor)
    );
}

#[test]
fn sigterm_stops_gracefully_and_removes_worker_json() {
    let env = Env::new();
    let mut worker = Worker::start(&env, |_| {});
    worker.signal(libc::SIGTERM);
    assert_eq!(worker.wait_exit(T), Some(0));
    assert!(!env.data().join("worker.json").exists());
    let log = std::fs::read_to_string(env.data().join("logs/worker.log")).unwrap();
    assert!(log.contains("SIGTERM received"), "{log}");
    assert!(log.contains("worker stopped"), "{log}");
}

#[test]
fn captured_turns_become_observations_and_one_summary_each() {
    let env = Env::new();
    let proj = project(&env, "shop");
    let worker = Worker::start(&env, |_| {});
    let session = "11111111-2222-3333-4444-555555555555";
    session_start(&env, &proj, session);
    turn(&env, &proj, session, 1, &["a.rs", "b.rs", "c.rs"]);
    turn(&env, &proj, session, 2, &["d.rs"]);
    wait_all_done(&env, T);

    let db = env.db();
    let (observations, summaries): (i64, i64) = db
        .query_row(
            "SELECT (SELECT count(*) FROM observations), (SELECT count(*) FROM summaries)",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    assert!(observations >= 2, "at least one observation per turn");
    assert_eq!(summaries, 2, "one summary per turn");
    // Every observation is linked to the session, its project and its turn.
    let unlinked: i64 = db
        .query_row(
            "SELECT count(*) FROM observations o JOIN sessions s ON s.id = o.session_id
             JOIN projects p ON p.id = o.project_id
             WHERE s.platform_session_id != ?1 OR p.root != ?2 OR o.prompt_number NOT IN (1, 2)",
            rusqlite::params![session, proj.to_string_lossy()],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(unlinked, 0);
    // One batch per turn: the observations of a turn share the uid prefix
    // of that turn's first event.
    let mut batches: BTreeMap<i64, BTreeSet<String>> = BTreeMap::new();
    let mut stmt = db
        .prepare("SELECT prompt_number, uid FROM observations")
        .unwrap();
    for row in stmt
        .query_map([], |r| Ok((r.get::<_, i64>(0)?, r.get::<_, String>(1)?)))
        .unwrap()
    {
        let (turn, uid) = row.unwrap();
        let prefix = uid.rsplit_once('-').unwrap().0.to_owned();
        batches.entry(turn).or_default().insert(prefix);
    }
    assert!(batches.values().all(|p| p.len() == 1), "{batches:?}");
    // Every written file is in some observation of its turn.
    for file in ["a.rs", "b.rs", "c.rs", "d.rs"] {
        let path = proj.join(file).to_string_lossy().into_owned();
        let found: i64 = db
            .query_row(
                "SELECT count(*) FROM observations WHERE files_modified LIKE ?1",
                [format!("%{path}%")],
                |r| r.get(0),
            )
            .unwrap();
        assert!(found >= 1, "{file} in an observation");
    }
    let request: String = db
        .query_row(
            "SELECT request FROM summaries WHERE prompt_number = 1",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert!(request.contains("turn 1"), "{request}");

    // The same through the API.
    let (code, list) = worker.get(&format!(
        "/api/observations?project={}&limit=100",
        proj.to_string_lossy()
    ));
    assert_eq!(code, 200, "{list}");
    assert_eq!(list["total"], observations);
    let (_, sums) = worker.get(&format!("/api/summaries?session={session}"));
    assert_eq!(sums["items"].as_array().unwrap().len(), 2);
    let (_, prompts) = worker.get("/api/prompts");
    assert_eq!(prompts["total"], 2);
    let (_, sessions) = worker.get("/api/sessions");
    assert_eq!(sessions["items"][0]["session_id"], session);
    assert_eq!(sessions["items"][0]["summaries"], 2);
}

#[test]
fn a_turn_leased_in_pieces_gets_one_summary_of_the_whole_turn() {
    let env = Env::new();
    let proj = project(&env, "pieces");
    let _worker = Worker::start(&env, |c| {
        c.env("MNEMO_WORKER_BATCH_MAX_EVENTS", "2");
    });
    let session = "99999999-2222-3333-4444-555555555555";
    session_start(&env, &proj, session);
    let files = ["alpha.rs", "beta.rs", "gamma.rs", "delta.rs", "omega.rs"];
    turn(&env, &proj, session, 1, &files);
    wait_all_done(&env, T);

    let db = env.db();
    let completed: String = db
        .query_row("SELECT completed FROM summaries", [], |r| r.get(0))
        .unwrap();
    for f in files {
        assert!(completed.contains(f), "{f} missing from {completed}");
    }
    let batches: BTreeSet<String> = db
        .prepare("SELECT uid FROM observations")
        .unwrap()
        .query_map([], |r| r.get::<_, String>(0))
        .unwrap()
        .map(|uid| uid.unwrap().rsplit_once('-').unwrap().0.to_owned())
        .collect();
    assert!(batches.len() >= 2, "the turn went in pieces: {batches:?}");
    // The pieces were merged into the summary, then forgotten.
    assert_eq!(env.count("SELECT count(*) FROM turn_pieces"), 0);
    assert_eq!(env.count("SELECT count(*) FROM summaries"), 1);
}

/// One tool call of a turn through the real hook: a Write of `file`, or a
/// Bash `command` that passes (`error` None) or fails with `error`.
enum Call<'a> {
    Write(&'a str),
    Bash(&'a str, Option<&'a str>),
}

/// A turn made of `calls` through the real hooks, then its Stop unless
/// `stop` is false (an interrupted turn).
fn turn_of_calls(
    env: &Env,
    proj: &std::path::Path,
    session: &str,
    n: usize,
    calls: &[Call],
    stop: bool,
) {
    let prompt_id = format!("prompt-{session}-{n}");
    let body = payload("UserPromptSubmit.json", proj, session, &prompt_id, |v| {
        v["prompt"] = serde_json::json!(format!("turn {n}: make the parser tests pass"));
    });
    hook(env, "UserPromptSubmit", &body, |_| {});
    for (i, call) in calls.iter().enumerate() {
        let id = serde_json::json!(format!("toolu-{session}-{n}-{i}"));
        let (event, body) = match call {
            Call::Write(file) => {
                let path = proj.join(file);
                let body = payload("PostToolUse.Write.json", proj, session, &prompt_id, |v| {
                    v["tool_use_id"] = id;
                    v["tool_input"]["file_path"] = serde_json::json!(path);
                    v["tool_input"]["content"] = serde_json::json!(format!("// {file} {i}\n"));
                    v["tool_response"]["filePath"] = serde_json::json!(path);
                    v["tool_response"]["content"] = serde_json::json!(format!("// {file} {i}\n"));
                });
                ("PostToolUse", body)
            }
            Call::Bash(command, None) => {
                let body = payload("PostToolUse.Bash.json", proj, session, &prompt_id, |v| {
                    v["tool_use_id"] = id;
                    v["tool_input"]["command"] = serde_json::json!(command);
                    v["tool_response"]["stdout"] =
                        serde_json::json!("test result: ok. 12 passed; 0 failed");
                });
                ("PostToolUse", body)
            }
            Call::Bash(command, Some(error)) => {
                let body = payload(
                    "PostToolUseFailure.Bash.json",
                    proj,
                    session,
                    &prompt_id,
                    |v| {
                        v["tool_use_id"] = id;
                        v["tool_input"]["command"] = serde_json::json!(command);
                        v["error"] = serde_json::json!(error);
                    },
                );
                ("PostToolUseFailure", body)
            }
        };
        hook(env, event, &body, |_| {});
    }
    if !stop {
        return;
    }
    let body = payload("Stop.json", proj, session, &prompt_id, |v| {
        v["last_assistant_message"] = serde_json::json!("Done.");
    });
    hook(env, "Stop", &body, |_| {});
}

/// (type, title) of every observation, oldest first.
fn observation_titles(env: &Env) -> Vec<(String, String)> {
    let db = env.db();
    let mut stmt = db
        .prepare("SELECT type, title FROM observations ORDER BY id")
        .unwrap();
    stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect()
}

const TEST_FAILURE: &str = "Exit code 101\nerror[E0425]: cannot find value `tokens` in this scope";

#[test]
fn a_check_that_fails_in_one_piece_and_passes_in_a_later_one_is_a_fix_not_a_failure() {
    let env = Env::new();
    let proj = project(&env, "pieces-fixed");
    let session = "99999999-2222-3333-4444-000000000001";
    session_start(&env, &proj, session);
    // Two events per piece: the failure is in the first, the fix in the second.
    let calls = [
        Call::Write("src/lexer.rs"),
        Call::Bash("cargo test -p parser", Some(TEST_FAILURE)),
        Call::Write("src/parser.rs"),
        Call::Bash("cargo test", None),
    ];
    turn_of_calls(&env, &proj, session, 1, &calls, true);
    let _worker = Worker::start(&env, |c| {
        c.env("MNEMO_WORKER_BATCH_MAX_EVENTS", "2");
    });
    wait_all_done(&env, T);

    let titles = observation_titles(&env);
    let failing: Vec<_> = titles
        .iter()
        .filter(|(_, t)| t.contains("cargo test") && !t.contains("then passed"))
        .collect();
    assert!(failing.is_empty(), "a settled failure stands: {titles:?}");
    let fixes: Vec<_> = titles
        .iter()
        .filter(|(kind, t)| kind == "bugfix" && t.contains("failed, then passed"))
        .collect();
    assert_eq!(fixes.len(), 1, "{titles:?}");
    assert!(
        fixes[0].1.contains("parser.rs"),
        "the fix names its edit: {titles:?}"
    );
    let next: String = env
        .db()
        .query_row("SELECT next_steps FROM summaries", [], |r| r.get(0))
        .unwrap();
    assert!(!next.contains("cargo test"), "{next}");
}

#[test]
fn a_check_no_piece_fixes_stands_once_at_the_turns_end() {
    let env = Env::new();
    let proj = project(&env, "pieces-open");
    let session = "99999999-2222-3333-4444-000000000002";
    session_start(&env, &proj, session);
    let calls = [
        Call::Write("src/lexer.rs"),
        Call::Bash("cargo test -p parser", Some(TEST_FAILURE)),
        Call::Write("src/parser.rs"),
        Call::Write("src/ast.rs"),
        Call::Write("README.md"),
    ];
    turn_of_calls(&env, &proj, session, 1, &calls, true);
    let _worker = Worker::start(&env, |c| {
        c.env("MNEMO_WORKER_BATCH_MAX_EVENTS", "2");
    });
    wait_all_done(&env, T);

    let titles = observation_titles(&env);
    let failing: Vec<_> = titles
        .iter()
        .filter(|(_, t)| t.contains("cargo test"))
        .collect();
    assert_eq!(failing.len(), 1, "{titles:?}");
    assert_eq!(failing[0].0, "discovery", "{titles:?}");
    assert!(failing[0].1.contains("cannot find value"), "{titles:?}");
    let next: String = env
        .db()
        .query_row("SELECT next_steps FROM summaries", [], |r| r.get(0))
        .unwrap();
    assert!(next.contains("cargo test"), "{next}");
}

#[test]
fn an_interrupted_turn_whose_pieces_all_went_out_is_finished_by_the_next_prompt() {
    let env = Env::new();
    let proj = project(&env, "pieces-interrupted");
    let session = "99999999-2222-3333-4444-000000000003";
    session_start(&env, &proj, session);
    let _worker = Worker::start(&env, |c| {
        c.env("MNEMO_WORKER_BATCH_MAX_EVENTS", "2");
    });
    // No Stop: the user interrupted. Every event goes out in full pieces.
    let calls = [
        Call::Write("src/lexer.rs"),
        Call::Bash("cargo test -p parser", Some(TEST_FAILURE)),
        Call::Write("src/parser.rs"),
        Call::Write("src/ast.rs"),
    ];
    turn_of_calls(&env, &proj, session, 1, &calls, false);
    wait_all_done(&env, T);
    assert_eq!(env.count("SELECT count(*) FROM turn_pieces"), 2);
    assert_eq!(env.count("SELECT count(*) FROM summaries"), 0);

    // The next prompt closes the turn: its summary and standing failure come out.
    turn_of_calls(&env, &proj, session, 2, &[Call::Write("src/main.rs")], true);
    wait_for("both turns summarized", T, || {
        (env.count("SELECT count(*) FROM summaries") == 2).then_some(())
    });
    wait_all_done(&env, T);
    assert_eq!(env.count("SELECT count(*) FROM turn_pieces"), 0);
    let titles = observation_titles(&env);
    let failing: Vec<_> = titles
        .iter()
        .filter(|(_, t)| t.contains("cargo test"))
        .collect();
    assert_eq!(failing.len(), 1, "{titles:?}");
    assert_eq!(failing[0].0, "discovery", "{titles:?}");
    let completed: String = env
        .db()
        .query_row(
            "SELECT completed FROM summaries WHERE prompt_number = 1",
            [],
            |r| r.get(0),
        )
        .unwrap();
    for f in ["lexer.rs", "parser.rs", "ast.rs"] {
        assert!(completed.contains(f), "{f} missing from {completed}");
    }
}

#[test]
fn sigkill_in_a_backlog_loses_nothing_and_duplicates_nothing() {
    let env = Env::new();
    let proj = project(&env, "big");
    // 40 turns of 8 writes each (320 tool events + 40 turn ends), captured
    // while no worker runs.
    let mut files = Vec::new();
    for s in 0..4 {
        let session = format!("00000000-0000-0000-0000-00000000000{s}");
        session_start(&env, &proj, &session);
        for n in 1..=10 {
            let names: Vec<String> = (0..8).map(|i| format!("s{s}_t{n}_f{i}.rs")).collect();
            let refs: Vec<&str> = names.iter().map(String::as_str).collect();
            turn(&env, &proj, &session, n, &refs);
            files.extend(names);
        }
    }
    let total: i64 = env.count("SELECT count(*) FROM events");
    assert_eq!(total, 360);

    // Kill the worker as soon as it has made some progress.
    let mut first = Worker::start(&env, |c| {
        c.env("MNEMO_WORKER_BATCH_MAX_EVENTS", "2");
    });
    wait_for("some progress", T, || {
        let q = queue(&env);
        (q.get("done").copied().unwrap_or(0) > 0).then_some(())
    });
    first.signal(libc::SIGKILL);
    assert_eq!(first.wait_exit(T), None, "killed by the signal");
    let at_kill = queue(&env);
    assert!(
        at_kill.get("done").copied().unwrap_or(0) < total,
        "the kill came before the end: {at_kill:?}"
    );

    let _second = Worker::start(&env, |c| {
        c.env("MNEMO_WORKER_BATCH_MAX_EVENTS", "2");
    });
    wait_all_done(&env, T);
    assert_eq!(
        env.count("SELECT count(*) FROM events WHERE status = 'done'"),
        total
    );

    let db = env.db();
    // Nothing lost: every written file is in an observation.
    let mut stmt = db
        .prepare("SELECT files_modified FROM observations")
        .unwrap();
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    for row in stmt.query_map([], |r| r.get::<_, String>(0)).unwrap() {
        let list: Vec<String> = serde_json::from_str(&row.unwrap()).unwrap();
        for f in list {
            *seen.entry(f).or_default() += 1;
        }
    }
    for f in &files {
        let path = proj.join(f).to_string_lossy().into_owned();
        // Nothing duplicated: each file (one write each) in exactly one observation.
        assert_eq!(seen.get(&path), Some(&1), "{f}");
    }
    assert_eq!(
        env.count("SELECT count(*) FROM summaries"),
        40,
        "one summary per turn"
    );
    assert_eq!(
        env.count(
            "SELECT count(*) FROM (SELECT session_id, prompt_number FROM summaries
             GROUP BY 1, 2 HAVING count(*) > 1)"
        ),
        0
    );
}

#[test]
fn leases_of_a_killed_worker_are_taken_back() {
    let env = Env::new();
    let proj = project(&env, "p");
    let session = "aaaaaaaa-0000-0000-0000-000000000001";
    session_start(&env, &proj, session);
    turn(&env, &proj, session, 1, &["x.rs", "y.rs"]);
    // As a worker killed mid-batch leaves them: leased for another 10 minutes.
    env.db()
        .execute(
            "UPDATE events SET status = 'leased', attempts = 1,
                    lease_until = (strftime('%s', 'now') + 600) * 1000",
            [],
        )
        .unwrap();
    let _worker = Worker::start(&env, |_| {});
    wait_all_done(&env, T);
    assert_eq!(env.count("SELECT count(*) FROM summaries"), 1);
    let log = std::fs::read_to_string(env.data().join("logs/worker.log")).unwrap();
    assert!(log.contains("took back 3 events"), "{log}");
}

#[test]
fn failed_events_show_in_doctor_and_the_api_and_retry_brings_them_back() {
    let env = Env::new();
    let proj = project(&env, "p");
    let session = "bbbbbbbb-0000-0000-0000-000000000001";
    session_start(&env, &proj, session);
    turn(&env, &proj, session, 1, &["x.rs"]);
    // As the queue leaves events that kept failing.
    env.db()
        .execute(
            "UPDATE events SET status = 'failed', attempts = 4, last_error = 'provider on fire'",
            [],
        )
        .unwrap();
    let doctor = env.mnemo().arg("doctor").output().unwrap();
    let text = stdout(&doctor);
    assert!(text.contains("2 failed"), "{text}");
    assert!(text.contains("provider on fire"), "{text}");
    assert!(text.contains("mnemo worker retry --all"), "{text}");

    let worker = Worker::start(&env, |_| {});
    let (code, q) = worker.get("/api/queue");
    assert_eq!(code, 200);
    assert_eq!(q["counts"]["failed"], 2);
    assert_eq!(q["failed"][0]["error"], "provider on fire");
    let (_, health) = get(worker.port, "/api/health", None);
    assert!(health.contains("\"failed\":2"), "{health}");
    // Failed events stay put until asked.
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(queue(&env).get("failed"), Some(&2));

    // One through the API, the other through the CLI.
    let id = q["failed"][0]["id"].as_i64().unwrap();
    let (code, r) = worker.post("/api/queue/retry", &serde_json::json!({ "ids": [id] }));
    assert_eq!((code, r["retried"].as_i64()), (200, Some(1)));
    let retry = env
        .mnemo()
        .args(["worker", "retry", "--all"])
        .output()
        .unwrap();
    assert!(
        stdout(&retry).contains("1 event back in the queue"),
        "{}",
        stdout(&retry)
    );
    wait_all_done(&env, T);
    assert_eq!(env.count("SELECT count(*) FROM summaries"), 1);
    let doctor = env.mnemo().arg("doctor").output().unwrap();
    assert!(stdout(&doctor).contains("0 failed"), "{}", stdout(&doctor));
}

#[test]
fn an_idle_worker_exits_and_the_next_hook_brings_it_back() {
    let env = Env::new();
    let _guard = DetachedGuard(env.data());
    let proj = project(&env, "p");
    let session = "cccccccc-0000-0000-0000-000000000001";
    let with_worker = |c: &mut std::process::Command| {
        c.env_remove("MNEMO_NO_WORKER")
            .env("MNEMO_WORKER_IDLE_EXIT_SECS", "1");
    };
    // SessionStart starts it (without waiting for it).
    hook(
        &env,
        "SessionStart",
        &payload("SessionStart.json", &proj, session, "", |_| {}),
        with_worker,
    );
    let first = wait_for("a worker started by SessionStart", T, || {
        worker_json(&env).and_then(|i| {
            let port = i["port"].as_u64()? as u16;
            (get(port, "/api/health", None).0 == 200).then(|| i["pid"].as_u64().unwrap() as u32)
        })
    });
    // Idle with an empty queue: it leaves by itself.
    wait_for("the idle worker to exit", T, || {
        (!alive(first) && !env.data().join("worker.json").exists()).then_some(())
    });
    let log = std::fs::read_to_string(env.data().join("logs/worker.log")).unwrap();
    assert!(log.contains("idle for"), "{log}");
    // The next prompt brings it back, and it compresses the turn.
    hook(
        &env,
        "UserPromptSubmit",
        &payload("UserPromptSubmit.json", &proj, session, "p1", |_| {}),
        with_worker,
    );
    let second = wait_for("a worker started by UserPromptSubmit", T, || {
        worker_json(&env)
            .and_then(|i| i["pid"].as_u64())
            .map(|p| p as u32)
    });
    assert_ne!(first, second);
    hook(
        &env,
        "Stop",
        &payload("Stop.json", &proj, session, "p1", |_| {}),
        |_| {},
    );
    wait_all_done(&env, T);
    assert_eq!(env.count("SELECT count(*) FROM summaries"), 1);
}

#[test]
fn hooks_do_not_start_a_worker_with_mnemo_no_worker() {
    let env = Env::new();
    let proj = project(&env, "p");
    // Env::mnemo sets MNEMO_NO_WORKER=1.
    session_start(&env, &proj, "dddddddd-0000-0000-0000-000000000001");
    std::thread::sleep(Duration::from_millis(300));
    assert!(!env.data().join("worker.json").exists());
}

#[test]
fn a_spent_budget_means_offline_and_says_so() {
    let env = Env::new();
    let stand_in = mnemo_testkit::StandIn::builder()
        .responder(|_| mnemo_testkit::Reply::text("{}"))
        .start();
    let proj = project(&env, "p");
    let session = "eeeeeeee-0000-0000-0000-000000000001";
    session_start(&env, &proj, session);
    // Today's spend already exceeds a one-token budget.
    env.db()
        .execute(
            "INSERT INTO llm_calls (provider, model, purpose, input_tokens, output_tokens,
                                    duration_ms, ok, created_at)
             VALUES ('anthropic', 'small', 'turn', 10, 5, 100, 1, strftime('%s', 'now') * 1000)",
            [],
        )
        .unwrap();
    let provider = |c: &mut std::process::Command| {
        c.env("MNEMO_PROVIDER", "anthropic")
            .env("MNEMO_PROVIDER_BASE_URL", stand_in.base_url())
            .env("MNEMO_PROVIDER_API_KEY", "test")
            .env("MNEMO_BUDGET_DAILY_TOKENS", "1");
    };
    let worker = Worker::start(&env, provider);
    turn(&env, &proj, session, 1, &["x.rs", "y.rs"]);
    wait_all_done(&env, T);
    assert_eq!(stand_in.requests().len(), 0, "no call past the budget");
    assert_eq!(
        env.count("SELECT count(*) FROM summaries"),
        1,
        "still compressed, offline"
    );

    let (_, stats) = worker.get("/api/stats");
    assert_eq!(stats["budget"]["exhausted"]["scope"], "daily", "{stats}");
    assert_eq!(stats["compressing_with"], "offline");
    assert!(
        stats["budget"]["exhausted"]["message"]
            .as_str()
            .unwrap()
            .contains("using the offline compressor until"),
        "{stats}"
    );
    let mut doctor = env.mnemo();
    doctor.arg("doctor");
    provider(&mut doctor);
    let text = stdout(&doctor.output().unwrap());
    assert!(text.contains("daily token budget exhausted"), "{text}");
    let mut stats_cli = env.mnemo();
    stats_cli.args(["stats"]);
    provider(&mut stats_cli);
    let text = stdout(&stats_cli.output().unwrap());
    assert!(text.contains("daily token budget exhausted"), "{text}");
    assert!(text.contains("anthropic/small"), "{text}");
    let mut json_cli = env.mnemo();
    json_cli.args(["stats", "--json", "--days", "2"]);
    provider(&mut json_cli);
    let report: Value = serde_json::from_str(&stdout(&json_cli.output().unwrap())).unwrap();
    assert_eq!(report["spend"]["by_day"][0]["calls"], 1);
    assert_eq!(report["spend"]["by_day"][0]["input_tokens"], 10);
    assert_eq!(report["spend"]["by_project"][0]["key"], "(no project)");
    assert_eq!(report["queue"]["done"], 3);
}

#[test]
fn a_provider_that_cannot_be_set_up_means_offline_and_says_why() {
    let env = Env::new();
    let no_key = |c: &mut std::process::Command| {
        c.env("MNEMO_PROVIDER", "anthropic")
            .env_remove("ANTHROPIC_API_KEY");
    };
    let worker = Worker::start(&env, no_key);
    let proj = project(&env, "p");
    let session = "ffffffff-0000-0000-0000-000000000001";
    session_start(&env, &proj, session);
    turn(&env, &proj, session, 1, &["x.rs"]);
    wait_all_done(&env, T);
    assert_eq!(
        env.count("SELECT count(*) FROM summaries WHERE source = 'offline'"),
        1
    );
    let (_, stats) = worker.get("/api/stats");
    assert_eq!(stats["provider"], "offline");
    assert!(
        stats["provider_error"]
            .as_str()
            .unwrap()
            .contains("API key"),
        "{stats}"
    );
    let status = env.mnemo().args(["worker", "status"]).output().unwrap();
    assert!(
        stdout(&status).contains("cannot be used"),
        "{}",
        stdout(&status)
    );
    let doctor = env.mnemo().arg("doctor").output().unwrap();
    assert!(
        stdout(&doctor).contains("compressing offline"),
        "{}",
        stdout(&doctor)
    );
}
