//! The real Claude Code CLI, pinned to [`CLAUDE_CODE_VERSION`], for
//! end-to-end tests of mnemo's hooks and MCP server.
//!
//! [`claude_binary`] installs `@anthropic-ai/claude-code` from the npm
//! registry once per machine into a cache directory ([`claude_dir`]) that
//! survives between test runs and is shared by parallel test processes (see
//! [`crate::npm`]). [`ClaudeRun`] runs it headless (`-p`) against a
//! [`StandIn`](crate::StandIn) with exactly the recipe of
//! `shared/docs/claude-code-e2e.md`.
//!
//! Claude Code reads hooks from `$HOME/.claude/settings.json`, so with a fake
//! `HOME` (see [`Sandbox`](crate::Sandbox)) the hooks that run are exactly the
//! ones the test (or `mnemo install` pointed at that `HOME`) put there.

use std::path::PathBuf;
use std::process::{Command, ExitStatus};
use std::sync::OnceLock;
use std::time::Duration;

use serde_json::Value;

use crate::npm::Pinned;
use crate::session::{Cli, Finished, Run, Session};

/// The Claude Code version the tests pin.
pub const CLAUDE_CODE_VERSION: &str = "2.1.328";

/// The pinned package.
const CLAUDE_CODE: Pinned = Pinned {
    title: "Claude Code",
    package: "@anthropic-ai/claude-code",
    version: CLAUDE_CODE_VERSION,
    bin: "claude",
    dir_name: "claude-code",
    dir_env: "MNEMO_TEST_CLAUDE_DIR",
    version_env: &[
        ("DISABLE_AUTOUPDATER", "1"),
        ("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1"),
    ],
};

/// Where Claude Code is (or will be) installed: `$MNEMO_TEST_CLAUDE_DIR` if
/// set, else `<workspace root>/target/claude-code-2.1.328`. The binary is
/// `<dir>/node_modules/.bin/claude`.
pub fn claude_dir() -> PathBuf {
    CLAUDE_CODE.dir()
}

/// The path of a working Claude Code [`CLAUDE_CODE_VERSION`] binary,
/// installing it first if needed (with `npm install --prefix <claude_dir()>
/// --no-audit --no-fund @anthropic-ai/claude-code@2.1.328`; the first time
/// this downloads about 370 MB). The outcome is memoized per process, so only
/// the first call pays for the install or the `--version` check.
pub fn claude_binary() -> anyhow::Result<PathBuf> {
    static BINARY: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    BINARY
        .get_or_init(|| {
            CLAUDE_CODE
                .ensure_installed(&claude_dir())
                .map_err(|e| format!("{e:#}"))
        })
        .clone()
        .map_err(anyhow::Error::msg)
}

/// Claude Code's headless recipe, `shared/docs/claude-code-e2e.md`.
#[derive(Debug, Clone)]
pub struct ClaudeCodeCli;

/// One headless Claude Code session (`claude -p`), built up and then
/// [`run`](crate::session::Run::run).
///
/// Beyond [`Run`]'s environment: `IS_SANDBOX=1` (needed for
/// `--dangerously-skip-permissions` as root), `ANTHROPIC_BASE_URL` (the base
/// URL), `ANTHROPIC_API_KEY=sk-test`,
/// `CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1`, `DISABLE_AUTOUPDATER=1`,
/// `DISABLE_TELEMETRY=1`, `DISABLE_ERROR_REPORTING=1`. Arguments: `-p
/// <prompt> --dangerously-skip-permissions --output-format json`, then the
/// extra args (`--max-turns N` among them, see
/// [`max_turns`](Run::max_turns)). Hooks come from
/// `$HOME/.claude/settings.json`; default timeout 120 s.
pub type ClaudeRun = Run<ClaudeCodeCli>;

impl Run<ClaudeCodeCli> {
    /// `--max-turns N`.
    pub fn max_turns(self, turns: u32) -> Self {
        self.arg("--max-turns").arg(turns.to_string())
    }
}

impl Cli for ClaudeCodeCli {
    const TITLE: &'static str = "Claude Code";
    const TIMEOUT: Duration = Duration::from_secs(120);
    type Output = ClaudeOutput;

    fn binary() -> anyhow::Result<PathBuf> {
        claude_binary()
    }

    fn recipe(session: &Session<'_>, cmd: &mut Command) -> anyhow::Result<()> {
        cmd.env("IS_SANDBOX", "1")
            .env("ANTHROPIC_BASE_URL", session.base_url)
            .env("ANTHROPIC_API_KEY", "sk-test")
            .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
            .env("DISABLE_AUTOUPDATER", "1")
            .env("DISABLE_TELEMETRY", "1")
            .env("DISABLE_ERROR_REPORTING", "1")
            .arg("-p")
            .arg(session.prompt)
            .arg("--dangerously-skip-permissions")
            .args(["--output-format", "json"]);
        Ok(())
    }

    fn output(finished: Finished) -> ClaudeOutput {
        ClaudeOutput {
            json: parse_output(&finished.stdout),
            status: finished.status,
            stdout: finished.stdout,
            stderr: finished.stderr,
            elapsed: finished.elapsed,
        }
    }
}

/// What a finished Claude Code session left behind.
#[derive(Debug, Clone)]
pub struct ClaudeOutput {
    /// Exit status.
    pub status: ExitStatus,
    /// Everything printed on stdout.
    pub stdout: String,
    /// Everything printed on stderr.
    pub stderr: String,
    /// stdout parsed as JSON (with `--output-format stream-json`, its last
    /// line: the `result` object).
    pub json: Option<Value>,
    /// How long it ran.
    pub elapsed: Duration,
}

impl ClaudeOutput {
    /// Exit 0 and a result object that is not `is_error`.
    pub fn success(&self) -> bool {
        self.status.success()
            && self
                .json
                .as_ref()
                .is_some_and(|j| j.get("is_error").and_then(Value::as_bool) != Some(true))
    }

    /// The `result` field: the session's final assistant text.
    pub fn result(&self) -> Option<&str> {
        self.json.as_ref()?.get("result")?.as_str()
    }

    /// Panics with the whole output unless [`success`](Self::success).
    #[track_caller]
    pub fn expect_success(&self) -> &Self {
        assert!(
            self.success(),
            "Claude Code failed ({}).\n--- stdout ---\n{}\n--- stderr ---\n{}",
            self.status,
            self.stdout,
            self.stderr
        );
        self
    }
}

fn parse_output(stdout: &str) -> Option<Value> {
    serde_json::from_str(stdout.trim()).ok().or_else(|| {
        stdout
            .lines()
            .rev()
            .find(|l| !l.trim().is_empty())
            .and_then(|l| serde_json::from_str(l).ok())
    })
}

// The tests drive shell scripts and process groups: Unix only.
#[cfg(all(test, unix))]
mod tests {
    use super::*;

    #[test]
    fn output_parses_json_and_stream_json() {
        let json = parse_output("{\"type\":\"result\",\"result\":\"hi\"}\n").unwrap();
        assert_eq!(json["result"], "hi");
        let stream =
            parse_output("{\"type\":\"system\"}\n{\"type\":\"result\",\"result\":\"x\"}\n")
                .unwrap();
        assert_eq!(stream["result"], "x");
        assert!(parse_output("not json").is_none());
    }
}
