//! The claude-cli provider with the real Claude Code binary (2.1.328, from
//! the npm registry through the test kit) talking to the stand-in server,
//! and the process-group handling on timeout and on drop.
#![cfg(unix)]

mod common;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use common::{fix_login_turn, good_answer};
use mnemo_compress::Compressor;
use mnemo_core::config::ProviderConfig;
use mnemo_testkit::{Reply, Sandbox, StandIn, claude_binary};

fn claude_config(path: &Path, timeout_secs: u64) -> ProviderConfig {
    ProviderConfig {
        name: "claude-cli".into(),
        claude_path: path.to_string_lossy().into_owned(),
        timeout_secs,
        ..Default::default()
    }
}

/// The real Claude Code, pointed at `stand_in` from a sandboxed HOME.
fn real_claude(stand_in: &StandIn, sandbox: &Sandbox, timeout_secs: u64) -> Compressor {
    let binary = claude_binary().expect("Claude Code 2.1.328 (installed by the test kit)");
    Compressor::from_config(&claude_config(&binary, timeout_secs))
        .unwrap()
        .with_cli_env([
            ("HOME", sandbox.home().into_os_string()),
            ("ANTHROPIC_BASE_URL", stand_in.base_url().into()),
            ("ANTHROPIC_API_KEY", "sk-test".into()),
            ("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1".into()),
            ("DISABLE_AUTOUPDATER", "1".into()),
            ("DISABLE_TELEMETRY", "1".into()),
            ("DISABLE_ERROR_REPORTING", "1".into()),
        ])
        .with_cli_dir(sandbox.project())
}

/// A live process: its pid, process group and state letter.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Proc {
    pid: i32,
    pgid: i32,
    state: char,
}

fn stat_of(pid: i32) -> Option<Proc> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // `pid (comm) state ppid pgrp ...`; comm may hold spaces and parens.
    let after = &stat[stat.rfind(')')? + 2..];
    let mut fields = after.split_whitespace();
    let state = fields.next()?.chars().next()?;
    let _ppid = fields.next()?;
    let pgid = fields.next()?.parse().ok()?;
    Some(Proc { pid, pgid, state })
}

fn all_pids() -> Vec<i32> {
    std::fs::read_dir("/proc")
        .map(|d| {
            d.flatten()
                .filter_map(|e| e.file_name().to_str()?.parse().ok())
                .collect()
        })
        .unwrap_or_default()
}

/// Processes (not zombies) whose environment contains `needle`.
fn processes_with_env(needle: &str) -> Vec<Proc> {
    all_pids()
        .into_iter()
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/environ"))
                .map(|env| env.split(|b| *b == 0).any(|kv| kv == needle.as_bytes()))
                .unwrap_or(false)
        })
        .filter_map(stat_of)
        .filter(|p| p.state != 'Z')
        .collect()
}

/// Live (not zombie) members of process group `pgid`.
fn group_members(pgid: i32) -> Vec<Proc> {
    all_pids()
        .into_iter()
        .filter_map(stat_of)
        .filter(|p| p.pgid == pgid && p.state != 'Z')
        .collect()
}

/// Waits until `f` returns something non-empty.
async fn wait_for<T>(limit: Duration, mut f: impl FnMut() -> Vec<T>) -> Vec<T> {
    let deadline = Instant::now() + limit;
    loop {
        let found = f();
        if !found.is_empty() || Instant::now() > deadline {
            return found;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Waits until group `pgid` has no live member.
async fn wait_group_gone(pgid: i32) -> Vec<Proc> {
    let deadline = Instant::now() + Duration::from_secs(3);
    loop {
        let left = group_members(pgid);
        if left.is_empty() || Instant::now() > deadline {
            return left;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test]
async fn real_claude_code_answers_through_the_stand_in() {
    let sandbox = Sandbox::new();
    let answer = good_answer();
    let stand_in = StandIn::with_responder(move |_| {
        Reply::text(format!(
            "Here is the memory record:\n```json\n{answer}\n```"
        ))
        .with_usage(700, 150)
    });
    let compressor = real_claude(&stand_in, &sandbox, 60);
    let out = compressor.compress(&fix_login_turn(), true).await;
    assert_eq!(
        out.source, "claude-cli",
        "{:?} {:?}",
        out.fallback_error, out.calls
    );
    assert_eq!(
        out.observations[0].title,
        "login() checks the password hash"
    );
    assert_eq!(out.summary.unwrap().request, "Fix login");
    assert_eq!(out.calls.len(), 1);
    let call = &out.calls[0];
    assert!(call.ok);
    assert_eq!(call.provider, "claude-cli");
    assert!(call.input_tokens >= 700, "{call:?}");
    assert!(call.output_tokens >= 150, "{call:?}");

    let requests = stand_in.requests();
    let main: Vec<_> = requests
        .iter()
        .filter(|r| r.route() == "/v1/messages")
        .collect();
    assert!(!main.is_empty(), "{requests:?}");
    let r = main.last().unwrap();
    // Our system prompt, no tools, the batch as the user message.
    assert!(
        r.system_text().contains("memory of a coding agent"),
        "{}",
        r.system_text()
    );
    assert!(r.tool_names().is_empty(), "{:?}", r.tool_names());
    // The small model, not Claude Code's default.
    assert!(r.model().unwrap().contains("haiku"), "{:?}", r.model());
    assert!(r.body_contains("fix login please"));
    // No session was saved under the sandboxed HOME.
    let projects = sandbox.home().join(".claude/projects");
    let saved = walk(&projects)
        .into_iter()
        .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
        .count();
    assert_eq!(saved, 0, "--no-session-persistence");
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    if let Ok(entries) = std::fs::read_dir(dir) {
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                out.extend(walk(&p));
            } else {
                out.push(p);
            }
        }
    }
    out
}

#[tokio::test]
async fn real_claude_code_timeout_kills_its_process_group() {
    let sandbox = Sandbox::new();
    let stand_in = StandIn::with_responder(|_| Reply::text("{}").delayed(Duration::from_secs(60)));
    let compressor = real_claude(&stand_in, &sandbox, 3);
    let marker = format!("HOME={}", sandbox.home().display());
    let batch = fix_login_turn();
    let run = tokio::spawn(async move { compressor.compress(&batch, true).await });

    // While it runs: find Claude Code by its sandboxed HOME.
    let running = wait_for(Duration::from_secs(20), || processes_with_env(&marker)).await;
    assert!(!running.is_empty(), "claude never started");
    let pgid = running[0].pgid;
    assert!(running.iter().all(|p| p.pgid == pgid));
    assert_eq!(
        running.iter().find(|p| p.pid == pgid).map(|p| p.pid),
        Some(pgid),
        "claude leads its own process group"
    );

    let out = run.await.unwrap();
    assert_eq!(out.source, "offline");
    assert!(
        out.fallback_error.as_deref().unwrap().contains("timed out"),
        "{:?}",
        out.fallback_error
    );
    assert!(!out.calls[0].ok);
    assert!(!out.observations.is_empty());
    let left = wait_group_gone(pgid).await;
    assert!(left.is_empty(), "left behind in group {pgid}: {left:?}");
    assert!(processes_with_env(&marker).is_empty());
}

/// A stand-in `claude`: records its stdin, arguments and environment, starts
/// a grandchild, says it is ready and sleeps.
fn fake_claude(dir: &Path) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let path = dir.join("fake-claude");
    let out = dir.display();
    std::fs::write(
        &path,
        format!(
            "#!/bin/sh\ncat > '{out}/stdin'\nprintf '%s\\n' \"$@\" > '{out}/args'\nenv > '{out}/env'\n\
             sleep 30 &\ntouch '{out}/ready'\nsleep 30\n"
        ),
    )
    .unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path
}

#[tokio::test]
async fn dropping_the_call_kills_the_whole_group() {
    let dir = tempfile::tempdir().unwrap();
    let fake = fake_claude(dir.path());
    let tag = format!("MNEMO_TEST_TAG={}", dir.path().display());
    let compressor = Compressor::from_config(&claude_config(&fake, 60))
        .unwrap()
        .with_cli_env([("MNEMO_TEST_TAG", dir.path().as_os_str())]);
    let batch = fix_login_turn();

    // The worker shutting down drops the future mid-call.
    let call = compressor.compress(&batch, true);
    let ready = dir.path().join("ready");
    let watch = wait_for(Duration::from_secs(10), || {
        // Once the grandchild is started, stdin has been read.
        if ready.exists() {
            processes_with_env(&tag)
        } else {
            Vec::new()
        }
    });
    let found = tokio::select! {
        out = call => panic!("the call ended first: {:?}", out.fallback_error),
        found = watch => found,
    };
    assert!(found.len() >= 2, "the script and its grandchild: {found:?}");
    let pgid = found[0].pgid;
    let left = wait_group_gone(pgid).await;
    assert!(left.is_empty(), "left behind in group {pgid}: {left:?}");

    // What the child got.
    let stdin = std::fs::read_to_string(dir.path().join("stdin")).unwrap();
    assert!(stdin.contains("fix login please"));
    let args = std::fs::read_to_string(dir.path().join("args")).unwrap();
    let args: Vec<&str> = args.lines().collect();
    for expected in [
        "-p",
        "--output-format",
        "json",
        "--tools",
        "--no-session-persistence",
        "--strict-mcp-config",
        "--system-prompt",
        "--model",
        "haiku",
        "--effort",
    ] {
        assert!(args.contains(&expected), "{expected}: {args:?}");
    }
    let tools_at = args.iter().position(|a| *a == "--tools").unwrap();
    assert_eq!(args[tools_at + 1], "", "no tools");
    assert!(!stdin.is_empty() && !args.iter().any(|a| a.contains("fix login please")));
    let env = std::fs::read_to_string(dir.path().join("env")).unwrap();
    assert!(env.lines().any(|l| l == "MNEMO_DISABLED=1"), "{env}");
    assert!(
        env.lines()
            .any(|l| l == "CLAUDE_CODE_MAX_OUTPUT_TOKENS=4096"),
        "{env}"
    );
}

#[tokio::test]
async fn a_crashing_cli_falls_back_with_its_message() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("broken-claude");
    std::fs::write(
        &path,
        "#!/bin/sh\ncat > /dev/null\necho 'Error: not logged in' >&2\nexit 1\n",
    )
    .unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    let compressor = Compressor::from_config(&claude_config(&path, 10)).unwrap();
    let out = compressor.compress(&fix_login_turn(), true).await;
    assert_eq!(out.source, "offline");
    let error = out.fallback_error.unwrap();
    assert!(error.contains("not logged in"), "{error}");
    assert_eq!(out.calls.len(), 1);
    assert!(!out.calls[0].ok);
}
