//! Whole-process hook latency, measured beside `/bin/true` in the same run.
//!
//! A hook's cost to the user is the time from the host spawning `mnemo hook
//! …` to its exit, so that is what this measures: spawn, payload written to
//! a real pipe, wait. Start-up of any process is part of it, which is why
//! `/bin/true` (fed the same payload) runs in the same loop as the baseline:
//! these machines are noisy, and ratios survive noise better than absolutes.
//!
//! ```text
//! cargo bench -p mnemo --bench hook_latency
//! MNEMO_BENCH_BIN=~/.cargo/bin/mnemo cargo bench -p mnemo --bench hook_latency   # the installed binary
//! MNEMO_BENCH_RUNS=1000 …                                                         # more samples
//! ```
//!
//! Scenarios are interleaved round-robin (one run of each, repeated) so that
//! a burst of machine noise hits all of them alike.

mod support;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/claude-code");

struct Scenario {
    name: &'static str,
    program: PathBuf,
    args: Vec<&'static str>,
    env: Vec<(&'static str, String)>,
    /// Builds the payload for run `i` (unique ids where the store dedupes).
    payload: Box<dyn Fn(usize) -> Vec<u8>>,
    samples: Vec<Duration>,
}

fn main() {
    let Some((bin, runs)) = support::settings(400) else {
        return;
    };
    let tmp = tempfile::tempdir().expect("temp dir");
    let sole = tmp.path().join("sole");
    let held = tmp.path().join("held");

    let post = fixture("PostToolUse.Bash.json");
    let unique_tool_use = move |i: usize| {
        let mut v = post.clone();
        v["tool_use_id"] = format!("toolu_bench_{i}").into();
        serde_json::to_vec(&v).unwrap()
    };
    // Codex 0.169's PostToolUse of an `exec_command` (reaches hooks as Bash).
    let codex_post: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../mnemo-capture/tests/fixtures/codex/PostToolUse.Bash.json"
        ))
        .expect("the Codex fixture"),
    )
    .expect("JSON");
    let unique_codex = move |i: usize| {
        let mut v = codex_post.clone();
        v["tool_use_id"] = format!("call_bench_{i}").into();
        serde_json::to_vec(&v).unwrap()
    };
    // Gemini CLI 0.61's AfterTool of a shell command. Gemini gives calls no
    // id, so each run's command differs (the same call twice is one event).
    let gemini_post: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../mnemo-capture/tests/fixtures/gemini-cli/AfterTool.run_shell_command.json"
        ))
        .expect("the Gemini fixture"),
    )
    .expect("JSON");
    let unique_gemini = move |i: usize| {
        let mut v = gemini_post.clone();
        v["tool_input"]["command"] = format!("python -m pytest -q -k bench_{i}").into();
        serde_json::to_vec(&v).unwrap()
    };
    let skipped = {
        let mut v = fixture("PostToolUse.Bash.json");
        v["tool_name"] = "ToolSearch".into();
        serde_json::to_vec(&v).unwrap()
    };
    let pre = serde_json::to_vec(&fixture("PreToolUse.Bash.json")).unwrap();
    let prompt = fixture("UserPromptSubmit.json");
    let unique_prompt = move |i: usize| {
        let mut v = prompt.clone();
        v["prompt"] = format!("bench prompt {i}").into();
        v["prompt_id"] = format!("bench-{i}").into();
        serde_json::to_vec(&v).unwrap()
    };
    let start = serde_json::to_vec(&fixture("SessionStart.json")).unwrap();

    let hook = |event: &'static str| vec!["hook", "claude-code", event];
    let data = |dir: &Path| vec![("MNEMO_DATA_DIR", dir.display().to_string())];
    let mut scenarios = vec![
        Scenario {
            name: "/bin/true (baseline)",
            program: PathBuf::from("/bin/true"),
            args: vec![],
            env: vec![],
            payload: Box::new({
                let p = pre.clone();
                move |_| p.clone()
            }),
            samples: vec![],
        },
        Scenario {
            name: "PostToolUse, store held open (worker running)",
            program: bin.clone(),
            args: hook("PostToolUse"),
            env: data(&held),
            payload: Box::new(unique_tool_use.clone()),
            samples: vec![],
        },
        Scenario {
            name: "Codex PostToolUse, store held open",
            program: bin.clone(),
            args: vec!["hook", "codex", "PostToolUse"],
            env: data(&held),
            payload: Box::new(unique_codex),
            samples: vec![],
        },
        Scenario {
            name: "Gemini AfterTool, store held open",
            program: bin.clone(),
            args: vec!["hook", "gemini", "AfterTool"],
            env: data(&held),
            payload: Box::new(unique_gemini),
            samples: vec![],
        },
        Scenario {
            name: "PostToolUse, sole connection",
            program: bin.clone(),
            args: hook("PostToolUse"),
            env: data(&sole),
            payload: Box::new(unique_tool_use),
            samples: vec![],
        },
        Scenario {
            name: "UserPromptSubmit, store held open",
            program: bin.clone(),
            args: hook("UserPromptSubmit"),
            env: data(&held),
            payload: Box::new(unique_prompt),
            samples: vec![],
        },
        Scenario {
            name: "SessionStart, store held open",
            program: bin.clone(),
            args: hook("SessionStart"),
            env: data(&held),
            payload: Box::new(move |_| start.clone()),
            samples: vec![],
        },
        Scenario {
            name: "PreToolUse (no history)",
            program: bin.clone(),
            args: hook("PreToolUse"),
            env: data(&held),
            payload: Box::new({
                let p = pre.clone();
                move |_| p.clone()
            }),
            samples: vec![],
        },
        Scenario {
            name: "PostToolUse, skipped tool",
            program: bin.clone(),
            args: hook("PostToolUse"),
            env: data(&held),
            payload: Box::new(move |_| skipped.clone()),
            samples: vec![],
        },
        Scenario {
            name: "MNEMO_DISABLED=1",
            program: bin.clone(),
            args: hook("PostToolUse"),
            env: vec![("MNEMO_DISABLED", "1".into())],
            payload: Box::new(move |_| pre.clone()),
            samples: vec![],
        },
    ];

    // Create both stores (the first hook creates and migrates the database),
    // then hold one open the way the worker does in production.
    for dir in [&sole, &held] {
        run_once(&bin, &hook("SessionStart"), &data(dir), &[]);
    }
    let holder = rusqlite::Connection::open(held.join("mnemo.db")).expect("open held store");
    let _: i64 = holder
        .query_row("SELECT count(*) FROM sessions", [], |r| r.get(0))
        .expect("read held store");

    let warmup = 20;
    for i in 0..warmup + runs {
        for s in &mut scenarios {
            let elapsed = run_once(&s.program, &s.args, &s.env, &(s.payload)(i));
            if i >= warmup {
                s.samples.push(elapsed);
            }
        }
    }

    println!("binary: {}", bin.display());
    println!("runs per scenario: {runs} (after {warmup} warm-up), interleaved\n");
    support::print_table(scenarios.iter_mut().map(|s| (s.name, &mut s.samples)));
}

fn fixture(name: &str) -> serde_json::Value {
    let text = std::fs::read_to_string(Path::new(FIXTURES).join(name)).expect("fixture");
    serde_json::from_str(&text).expect("fixture JSON")
}

/// Runs the program once with the payload on stdin; its wall time.
fn run_once(program: &Path, args: &[&str], env: &[(&str, String)], payload: &[u8]) -> Duration {
    let mut cmd = Command::new(program);
    cmd.args(args)
        .env("MNEMO_NO_WORKER", "1")
        .env_remove("MNEMO_DISABLED")
        .envs(env.iter().map(|(k, v)| (k, v)));
    support::timed_run(&mut cmd, Some(payload))
}
