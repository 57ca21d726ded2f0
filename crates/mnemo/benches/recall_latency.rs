//! Whole-process recall latency, measured beside `/bin/true` in the same run.
//!
//! What a user (or the agent host) pays is the time from spawning `mnemo …`
//! to its exit, so that is what this measures: spawn, payload written to a
//! real stdin pipe (hooks), wait. Scenarios are interleaved round-robin so a
//! burst of machine noise hits all of them alike; ratios to `/bin/true` are
//! the numbers to compare across runs.
//!
//! ```text
//! cargo bench -p mnemo --bench recall_latency
//! MNEMO_BENCH_BIN=path/to/static/mnemo cargo bench -p mnemo --bench recall_latency
//! MNEMO_BENCH_RUNS=300 …
//! ```
//!
//! Stores (built once per run with [`mnemo_recall::synth`], deterministic):
//! 10,000 observations for the hook paths, 100,000 in one project plus
//! 10,000 in another for search and `mnemo context`. Both are held open by
//! another connection for the whole run, as the worker does in production.

mod support;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::json;

struct Scenario {
    name: String,
    program: PathBuf,
    args: Vec<String>,
    cwd: PathBuf,
    data: Option<PathBuf>,
    payload: Option<Vec<u8>>,
    /// Runs before each timed run, untimed.
    prepare: Option<Box<dyn Fn()>>,
    samples: Vec<Duration>,
}

fn main() {
    let Some((bin, runs)) = support::settings(200) else {
        return;
    };
    let tmp = tempfile::tempdir().expect("temp dir");
    let root = tmp.path().canonicalize().expect("canonical temp dir");
    let (p10k, d10k) = (root.join("p10k"), root.join("d10k"));
    let (p100k, d100k) = (root.join("p100k"), root.join("d100k"));
    for p in [&p10k, &p100k] {
        std::fs::create_dir_all(p).expect("project dir");
        let ok = Command::new("git")
            .args(["init", "-q"])
            .current_dir(p)
            .status()
            .is_ok_and(|s| s.success());
        assert!(ok, "git init");
    }
    let started = Instant::now();
    mnemo_recall::synth::build(&d10k.join("mnemo.db"), &p10k, 10_000, 0).expect("10k store");
    mnemo_recall::synth::build(&d100k.join("mnemo.db"), &p100k, 100_000, 10_000)
        .expect("100k store");
    eprintln!("stores built in {:.1?}", started.elapsed());

    // The session the hooks belong to exists (SessionStart ran once).
    let session = json!({"session_id": "bench-session", "cwd": p10k});
    let start = merged(
        &session,
        json!({"hook_event_name": "SessionStart", "source": "startup"}),
    );
    run_once(
        &bin,
        &["hook", "claude-code", "SessionStart"],
        &p10k,
        Some(&d10k),
        Some(&start),
    );
    let held10 = rusqlite::Connection::open(d10k.join("mnemo.db")).expect("hold 10k");
    let held100 = rusqlite::Connection::open(d100k.join("mnemo.db")).expect("hold 100k");
    let (with_history,): (String,) = held10
        .query_row(
            "SELECT path FROM observation_files ORDER BY observation_id DESC LIMIT 1",
            [],
            |r| Ok((r.get(0)?,)),
        )
        .expect("a file with history");
    let read = |path: &str| {
        merged(
            &session,
            json!({"hook_event_name": "PreToolUse", "tool_name": "Read",
                   "tool_input": {"file_path": path}, "tool_use_id": "toolu_bench"}),
        )
    };
    let pre_none = read(&p10k.join("never/seen.rs").to_string_lossy());
    let pre_history = read(&with_history);
    let pre_bash = merged(
        &session,
        json!({"hook_event_name": "PreToolUse", "tool_name": "Bash",
               "tool_input": {"command": "ls"}, "tool_use_id": "toolu_bench"}),
    );
    let (uncommon,): (String,) = held100
        .query_row("SELECT title FROM observations WHERE id = 50000", [], |r| {
            Ok((r.get(0)?,))
        })
        .expect("a title");
    let uncommon = uncommon.split_whitespace().last().unwrap_or("x").to_owned();
    let matches = |q: &str| -> i64 {
        let fts: Vec<String> = q.split_whitespace().map(|w| format!("\"{w}\"")).collect();
        held100
            .query_row(
                "SELECT count(*) FROM observations_fts WHERE observations_fts MATCH ?1",
                [fts.join(" ")],
                |r| r.get(0),
            )
            .unwrap_or(0)
    };

    let hook = |name: &str, event: &str, payload: &[u8]| Scenario {
        name: name.to_owned(),
        program: bin.clone(),
        args: vec!["hook".into(), "claude-code".into(), event.into()],
        cwd: p10k.clone(),
        data: Some(d10k.clone()),
        payload: Some(payload.to_vec()),
        prepare: None,
        samples: vec![],
    };
    let cli = |name: String, args: &[&str]| Scenario {
        name,
        program: bin.clone(),
        args: args.iter().map(|a| (*a).to_owned()).collect(),
        cwd: p100k.clone(),
        data: Some(d100k.clone()),
        payload: None,
        prepare: None,
        samples: vec![],
    };
    let forget_shown = {
        let db = d10k.join("mnemo.db");
        move || {
            let c = rusqlite::Connection::open(&db).expect("open");
            c.execute("DELETE FROM file_context_shown", [])
                .expect("forget");
        }
    };
    let mut first_time = hook(
        "PreToolUse Read, history shown (first time)",
        "PreToolUse",
        &fresh_session(&pre_history),
    );
    first_time.prepare = Some(Box::new(forget_shown));

    // Prompt-time recall: a question about an older observation's subject
    // (its title's words and its file), and chatter that matches nothing.
    let (title, file): (String, String) = held10
        .query_row(
            "SELECT o.title, f.path FROM observations o
             JOIN observation_files f ON f.observation_id = o.id
             WHERE o.id = 5000 LIMIT 1",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .expect("an observation with a file");
    let name = Path::new(&file)
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let question = format!("what did we find about {title} in {name}?");
    let ask = |text: &str| {
        merged(
            &session,
            json!({"hook_event_name": "UserPromptSubmit", "prompt": text}),
        )
    };
    // A bug report pasted whole: many words, a path, symbols.
    let titles: Vec<String> = [100, 2_000, 7_000, 9_000]
        .iter()
        .map(|id| {
            held10
                .query_row("SELECT title FROM observations WHERE id = ?1", [id], |r| {
                    r.get(0)
                })
                .expect("a title")
        })
        .collect();
    let bug_report = format!(
        "After the last change this fails again: {}. Steps: open {file}, call `retry_timeout` \
         and `parseConfig`, then {}. Expected: {}. Actual: {}. Any idea why?",
        titles[0], titles[1], titles[2], titles[3]
    );
    let (prompt_recalled, prompt_chatter) = (ask(&question), ask("thanks, continue"));
    let prompt_report = fresh_session(&ask(&bug_report));
    let forget_given = forgetting_given(d10k.join("mnemo.db"));
    forget_given();
    let answer = hook_answer(&bin, &p10k, &d10k, &prompt_recalled);
    assert!(
        answer.contains("additionalContext"),
        "the question recalls something: {answer}"
    );
    eprintln!(
        "prompt recall answer: {} bytes for {question:?}",
        answer.len()
    );
    let mut recalled = hook(
        "UserPromptSubmit, memories recalled (first time)",
        "UserPromptSubmit",
        &fresh_session(&prompt_recalled),
    );
    recalled.prepare = Some(Box::new(forget_given.clone()));
    let mut pasted = hook(
        &format!(
            "UserPromptSubmit, a pasted bug report ({} words, first time)",
            bug_report.split_whitespace().count()
        ),
        "UserPromptSubmit",
        &prompt_report,
    );
    pasted.prepare = Some(Box::new(forget_given));
    let mut hooks = vec![
        Scenario {
            name: "/bin/true (baseline)".into(),
            program: PathBuf::from("/bin/true"),
            args: vec![],
            cwd: p10k.clone(),
            data: None,
            payload: Some(start.clone()),
            prepare: None,
            samples: vec![],
        },
        hook(
            "SessionStart (capture + index of 10,000)",
            "SessionStart",
            &fresh_session(&start),
        ),
        hook("PreToolUse Bash (not a file tool)", "PreToolUse", &pre_bash),
        hook(
            "PreToolUse Read, file without history",
            "PreToolUse",
            &pre_none,
        ),
        hook(
            "PreToolUse Read, history already shown",
            "PreToolUse",
            &pre_history,
        ),
        first_time,
        hook(
            "UserPromptSubmit, chatter (nothing recalled)",
            "UserPromptSubmit",
            &fresh_session(&prompt_chatter),
        ),
        hook(
            "UserPromptSubmit, same question again (all given already)",
            "UserPromptSubmit",
            &prompt_recalled,
        ),
        recalled,
        pasted,
    ];
    let mut hooks100 = hooks_at_100k(&bin, &p100k, &d100k, &held100);
    let typical = "timeout";
    const QUESTION: &str = "why does the login request time out when the cache is cold?";
    const BUG_REPORT: &str = "Since the last deploy some users cannot log in: the login \
        request hangs and then fails with a timeout after thirty seconds. It happens mostly in \
        the morning when the session cache is cold and many users sign in at the same time. \
        The server log shows the auth handler waiting on the database lock, then a retry, \
        then the token endpoint returning an error to the client. Restarting the worker \
        makes it go away for a while. We did not change the password hash or the cookie \
        settings. The queue of pending requests grows until the middleware gives up. Steps: \
        clear the cache, send two hundred login requests at once, watch the response times \
        and the error rate. Expected: every user logs in within a second.";
    /// What a pasted report adds past its first paragraph: environment,
    /// observations, questions (together over 300 words).
    const REPORT_DETAILS: &str = "Environment: production cluster with three api servers behind the load balancer, the \
        session cache in a shared redis instance, the database on a managed postgres with a pool \
        of forty connections per server. The config was not touched in this release; the only \
        change that shipped was the new token refresh handler and a migration that adds an index \
        on the sessions table. Observations so far: the first request after a cold start takes \
        about four seconds, the following ones are fast; the lock wait shows up in the database \
        metrics exactly when the queue starts to grow; the worker restarts clear the symptom \
        because they drop the pending jobs. When we disable the retry in the auth middleware the \
        timeouts turn into immediate errors instead, so the retry only hides the problem. Logs \
        from the router show the same request id being handled twice in a few cases, which \
        suggests the client retries on its own as well. We tried raising the pool size and the \
        timeout, which made it rarer but did not fix it. Questions: is the refresh handler holding \
        a transaction open while it waits for the cache? Should the migration have been run with a \
        concurrent index build? Is there a known problem with the cookie parser when the header is \
        large? Please look at the handler, the middleware and the cache client first.";
    let long_report = format!("{BUG_REPORT} {REPORT_DETAILS}");
    let mut searches = vec![
        Scenario {
            name: "/bin/true (baseline)".into(),
            program: PathBuf::from("/bin/true"),
            args: vec![],
            cwd: p100k.clone(),
            data: None,
            payload: None,
            prepare: None,
            samples: vec![],
        },
        cli(
            format!("search: an uncommon word ({} matches)", matches(&uncommon)),
            &["search", "-n", "10", &uncommon],
        ),
        cli(
            format!("search: one typical word ({} matches)", matches(typical)),
            &["search", "-n", "10", typical],
        ),
        cli(
            format!(
                "search: the most common word ({} matches)",
                matches("login")
            ),
            &["search", "-n", "10", "login"],
        ),
        cli(
            format!("search: two words ({} matches)", matches("timeout retry")),
            &["search", "-n", "10", "timeout retry"],
        ),
        cli(
            "search: a question (5 words once stop words are set aside)".into(),
            &["search", "-n", "10", QUESTION],
        ),
        cli(
            format!(
                "search: a pasted bug report ({} words)",
                BUG_REPORT.split_whitespace().count()
            ),
            &["search", "-n", "10", BUG_REPORT],
        ),
        cli(
            format!(
                "search: a pasted bug report ({} words)",
                long_report.split_whitespace().count()
            ),
            &["search", "-n", "10", &long_report],
        ),
        cli(
            format!("search: a file path ({} matches)", matches("src/api")),
            &["search", "-n", "10", "src/api"],
        ),
        cli(
            "search --all: one typical word".into(),
            &["search", "--all", "-n", "10", typical],
        ),
        cli(
            "search --json --type bugfix --since 30d".into(),
            &[
                "search", "--json", "-t", "bugfix", "--since", "30d", typical,
            ],
        ),
        cli("context (100,000 observations)".into(), &["context"]),
    ];

    println!("binary: {}", bin.display());
    println!("runs per scenario: {runs} (after 10 warm-up), interleaved\n");
    for (title, scenarios) in [
        ("Hooks, 10,000 observations, store held open", &mut hooks),
        (
            "Hooks, 100,000 observations in the project (+10,000 in another), store held open",
            &mut hooks100,
        ),
        (
            "CLI, 100,000 observations in the project (+10,000 in another), store held open",
            &mut searches,
        ),
    ] {
        measure(scenarios, runs);
        report(title, scenarios);
    }
    drop((held10, held100));

    for tokens in ["1500", "1000000"] {
        let out = Command::new(&bin)
            .args(["context", "--json"])
            .current_dir(&p100k)
            .env("MNEMO_DATA_DIR", &d100k)
            .env("MNEMO_CONTEXT_MAX_TOKENS", tokens)
            .output()
            .expect("context");
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("context JSON");
        println!(
            "context.max_tokens={tokens}: {} characters (UTF-16 units), {} of {} observations, {} summaries",
            v["chars"],
            v["observations_shown"].as_array().map_or(0, Vec::len),
            v["observations_total"],
            v["summaries_shown"].as_array().map_or(0, Vec::len)
        );
    }
}

/// SessionStart and prompt-time recall on the 100,000-observation project,
/// beside `/bin/true`, with the project's knowledge consolidated as the
/// worker leaves it (so the index carries its knowledge sections).
fn hooks_at_100k(
    bin: &Path,
    p100k: &Path,
    d100k: &Path,
    held: &rusqlite::Connection,
) -> Vec<Scenario> {
    let project: i64 = held
        .query_row(
            "SELECT id FROM projects WHERE root = ?1",
            [p100k.to_string_lossy()],
            |r| r.get(0),
        )
        .expect("the 100k project");
    let items = mnemo_worker::knowledge::refresh(held, project, mnemo_core::time::now_ms())
        .expect("knowledge of the 100k project");
    eprintln!("knowledge items of the 100k project: {items}");
    let session = json!({"session_id": "bench-session-100k", "cwd": p100k});
    let start = merged(
        &session,
        json!({"hook_event_name": "SessionStart", "source": "startup"}),
    );
    let question = merged(
        &session,
        json!({"hook_event_name": "UserPromptSubmit", "prompt": question_about(held, 50_000)}),
    );
    run_once(
        bin,
        &["hook", "claude-code", "SessionStart"],
        p100k,
        Some(d100k),
        Some(&start),
    );
    let scenario = |name: &str, program: &Path, event: &str, payload: &[u8]| Scenario {
        name: name.to_owned(),
        program: program.to_owned(),
        args: if event.is_empty() {
            vec![]
        } else {
            vec!["hook".into(), "claude-code".into(), event.into()]
        },
        cwd: p100k.to_owned(),
        data: Some(d100k.to_owned()),
        payload: Some(payload.to_vec()),
        prepare: None,
        samples: vec![],
    };
    let forget_given = forgetting_given(d100k.join("mnemo.db"));
    let mut recalled = scenario(
        "UserPromptSubmit, 100,000: memories recalled (first time)",
        bin,
        "UserPromptSubmit",
        &fresh_session(&question),
    );
    recalled.prepare = Some(Box::new(forget_given));
    vec![
        scenario("/bin/true (baseline)", Path::new("/bin/true"), "", &start),
        scenario(
            "SessionStart (capture + index of 100,000, with knowledge)",
            bin,
            "SessionStart",
            &fresh_session(&start),
        ),
        recalled,
    ]
}

/// Forgets what every session was given (prompt-time recall then recalls
/// again): run before each "first time" run.
fn forgetting_given(db: PathBuf) -> impl Fn() + Clone {
    move || {
        let c = rusqlite::Connection::open(&db).expect("open");
        c.execute("DELETE FROM recall_shown", []).expect("forget");
    }
}

/// A question about observation `id`: its title's words and its file's name.
fn question_about(held: &rusqlite::Connection, id: i64) -> String {
    let (title, file): (String, String) = held
        .query_row(
            "SELECT o.title, f.path FROM observations o
             JOIN observation_files f ON f.observation_id = o.id
             WHERE o.id = ?1 LIMIT 1",
            [id],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .expect("an observation with a file");
    let name = Path::new(&file)
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    format!("what did we find about {title} in {name}?")
}

/// One hook run's stdout, to check what a scenario answers.
fn hook_answer(bin: &Path, cwd: &Path, data: &Path, payload: &[u8]) -> String {
    use std::io::Write;
    use std::process::Stdio;
    let mut child = Command::new(bin)
        .args(["hook", "claude-code", "UserPromptSubmit"])
        .current_dir(cwd)
        .env("MNEMO_NO_WORKER", "1")
        .env("MNEMO_DATA_DIR", data)
        .env_remove("CLAUDE_PROJECT_DIR")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("spawn");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(payload)
        .expect("payload");
    let out = child.wait_with_output().expect("hook");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn merged(base: &serde_json::Value, extra: serde_json::Value) -> Vec<u8> {
    let mut v = base.clone();
    for (k, x) in extra.as_object().expect("object") {
        v[k] = x.clone();
    }
    serde_json::to_vec(&v).expect("JSON")
}

/// Where a payload's session id takes the run's number (see [`fresh_session`]).
const RUN_MARK: &str = "@RUN@";

/// The payload in a session of its own for every run: the same event
/// delivered again within seconds is a repeated delivery, which capture
/// drops and answers without memory, so a scenario that sent one payload
/// over and over measured that shortcut, not the index or the recall.
fn fresh_session(payload: &[u8]) -> Vec<u8> {
    let mut v: serde_json::Value = serde_json::from_slice(payload).expect("JSON payload");
    let id = v["session_id"].as_str().unwrap_or("bench").to_owned();
    v["session_id"] = json!(format!("{id}-{RUN_MARK}"));
    serde_json::to_vec(&v).expect("JSON")
}

fn measure(scenarios: &mut [Scenario], runs: usize) {
    let warmup = 10;
    let mut run = 0u64;
    for i in 0..warmup + runs {
        for s in scenarios.iter_mut() {
            if let Some(prepare) = &s.prepare {
                prepare();
            }
            let args: Vec<&str> = s.args.iter().map(String::as_str).collect();
            run += 1;
            let payload = s.payload.as_ref().map(|p| {
                String::from_utf8_lossy(p)
                    .replace(RUN_MARK, &run.to_string())
                    .into_bytes()
            });
            let elapsed = run_once(
                &s.program,
                &args,
                &s.cwd,
                s.data.as_deref(),
                payload.as_deref(),
            );
            if i >= warmup {
                s.samples.push(elapsed);
            }
        }
    }
}

fn report(title: &str, scenarios: &mut [Scenario]) {
    println!("{title}\n");
    support::print_table(
        scenarios
            .iter_mut()
            .map(|s| (s.name.as_str(), &mut s.samples)),
    );
    println!();
}

/// Runs the program once (stdin: the payload, or nothing); its wall time.
fn run_once(
    program: &Path,
    args: &[&str],
    cwd: &Path,
    data: Option<&Path>,
    payload: Option<&[u8]>,
) -> Duration {
    let mut cmd = Command::new(program);
    cmd.args(args)
        .current_dir(cwd)
        .env("MNEMO_NO_WORKER", "1")
        .env_remove("MNEMO_DISABLED")
        .env_remove("CLAUDE_PROJECT_DIR");
    if let Some(d) = data {
        cmd.env("MNEMO_DATA_DIR", d);
    }
    support::timed_run(&mut cmd, payload)
}
