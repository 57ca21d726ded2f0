//! Helpers for the end-to-end tests with a real agent CLI: mnemo installed
//! into a sandbox's `HOME`, sessions that may start the worker, the worker
//! stopped when the test ends, and waiting for the worker to compress.
//!
//! Include with `mod common;` and `#[path = "common/e2e.rs"] mod e2e;`.
#![allow(dead_code)]

use std::path::PathBuf;
use std::time::{Duration, Instant};

use mnemo_testkit::Sandbox;
use mnemo_testkit::session::{Cli, Run};

use crate::common;

/// Stops the sandbox's worker when the test ends, however it ends.
pub struct StopWorker<'a>(pub &'a Sandbox);

impl Drop for StopWorker<'_> {
    fn drop(&mut self) {
        let _ = common::sandbox_mnemo(self.0)
            .args(["worker", "stop"])
            .output();
    }
}

/// `mnemo install --platform <platforms> --no-import` into the sandbox; its
/// stdout, after checking it succeeded.
pub fn install(sandbox: &Sandbox, platforms: &str) -> anyhow::Result<String> {
    let out = common::sandbox_mnemo(sandbox)
        .args(["install", "--platform", platforms, "--no-import"])
        .output()?;
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    Ok(stdout)
}

/// A session of `C` in the sandbox whose hooks may start a worker (on any
/// free port, kept for two minutes of idleness).
pub fn session<C: Cli>(sandbox: &Sandbox, base_url: &str, prompt: &str) -> Run<C> {
    sandbox
        .session(base_url, prompt)
        .env("MNEMO_PORT", "0")
        .env("MNEMO_WORKER_IDLE_EXIT_SECS", "120")
}

/// The directory of the mnemo binary under test, for hooks that run `mnemo`
/// from `PATH`.
pub fn mnemo_dir() -> PathBuf {
    std::path::Path::new(common::MNEMO)
        .parent()
        .expect("the binary has a directory")
        .to_owned()
}

/// Waits until a turn has ended and the worker has compressed every captured
/// event into at least one observation and one summary.
pub fn wait_compressed(sandbox: &Sandbox) -> anyhow::Result<()> {
    let db = rusqlite::Connection::open(sandbox.data().join("mnemo.db"))?;
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let (turn_ends, pending, observations, summaries): (i64, i64, i64, i64) = db.query_row(
            "SELECT (SELECT count(*) FROM events WHERE kind = 'turn_end'),
                    (SELECT count(*) FROM events WHERE status != 'done'),
                    (SELECT count(*) FROM observations), (SELECT count(*) FROM summaries)",
            [],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
        )?;
        if turn_ends > 0 && pending == 0 && observations > 0 && summaries > 0 {
            return Ok(());
        }
        assert!(
            Instant::now() < deadline,
            "worker did not compress: {turn_ends} turn ends, {pending} pending, \
             {observations} observations, {summaries} summaries; log: {}",
            std::fs::read_to_string(sandbox.data().join("logs/worker.log")).unwrap_or_default()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Copies the session's transcript (`transcript_path`: Codex's rollout,
/// Gemini CLI's chat recording) to `$<var>/<name>.jsonl` when that variable
/// is set: how the fixtures of `mnemo-transcript` were recorded.
pub fn keep_transcript(db: &rusqlite::Connection, var: &str, name: &str) -> anyhow::Result<()> {
    let Some(dir) = std::env::var_os(var) else {
        return Ok(());
    };
    let path: String = db.query_row(
        "SELECT transcript_path FROM sessions WHERE transcript_path IS NOT NULL",
        [],
        |r| r.get(0),
    )?;
    std::fs::copy(
        path,
        std::path::Path::new(&dir).join(format!("{name}.jsonl")),
    )?;
    Ok(())
}
