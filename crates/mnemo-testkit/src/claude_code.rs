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

use std::ffi::{OsStr, OsString};
use std::path::PathBuf;
use std::process::{Command, ExitStatus};
use std::sync::OnceLock;
use std::time::Duration;

use anyhow::{Context, bail};
use serde_json::Value;

use crate::npm::Pinned;
use crate::process::{run_with_timeout, tail};

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

/// One headless Claude Code session (`claude -p`), built up and then
/// [`run`](ClaudeRun::run).
///
/// The process gets a cleared environment plus: `PATH` (the directories
/// given to [`path_prepend`](ClaudeRun::path_prepend), then the current
/// `PATH`, so that `node`, `git` and the binaries under test are found),
/// `HOME`, `TERM=dumb`, `IS_SANDBOX=1` (needed for
/// `--dangerously-skip-permissions` as root), `ANTHROPIC_BASE_URL`,
/// `ANTHROPIC_API_KEY=sk-test`, `CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1`,
/// `DISABLE_AUTOUPDATER=1`, `DISABLE_TELEMETRY=1`, `DISABLE_ERROR_REPORTING=1`,
/// then the extra [`env`](ClaudeRun::env) (which may override any of these).
/// Arguments: `-p <prompt> --dangerously-skip-permissions --output-format
/// json`, then `--max-turns N` if set, then the extra args. Hooks come from
/// `$HOME/.claude/settings.json`.
#[derive(Debug, Clone)]
pub struct ClaudeRun {
    prompt: String,
    project_dir: Option<PathBuf>,
    home: Option<PathBuf>,
    base_url: Option<String>,
    binary: Option<PathBuf>,
    path_prepend: Vec<PathBuf>,
    env: Vec<(OsString, OsString)>,
    args: Vec<OsString>,
    max_turns: Option<u32>,
    timeout: Duration,
}

impl ClaudeRun {
    /// A session with this user prompt. The project dir, `HOME` and base URL
    /// must be set before [`run`](Self::run).
    pub fn new(prompt: impl Into<String>) -> Self {
        ClaudeRun {
            prompt: prompt.into(),
            project_dir: None,
            home: None,
            base_url: None,
            binary: None,
            path_prepend: Vec::new(),
            env: Vec::new(),
            args: Vec::new(),
            max_turns: None,
            timeout: Duration::from_secs(120),
        }
    }

    /// The working directory of the session (the "project").
    pub fn project_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.project_dir = Some(dir.into());
        self
    }

    /// The fake `HOME` (its `.claude/settings.json` holds the hooks).
    pub fn home(mut self, dir: impl Into<PathBuf>) -> Self {
        self.home = Some(dir.into());
        self
    }

    /// `ANTHROPIC_BASE_URL`, normally [`StandIn::base_url`](crate::StandIn::base_url).
    pub fn base_url(mut self, url: impl Into<String>) -> Self {
        self.base_url = Some(url.into());
        self
    }

    /// Run this binary instead of [`claude_binary`]'s.
    pub fn binary(mut self, path: impl Into<PathBuf>) -> Self {
        self.binary = Some(path.into());
        self
    }

    /// Put `dir` in front of `PATH` (e.g. the directory of the mnemo binary
    /// under test). Later calls go in front of earlier ones.
    pub fn path_prepend(mut self, dir: impl Into<PathBuf>) -> Self {
        self.path_prepend.insert(0, dir.into());
        self
    }

    /// An extra environment variable (applied after the recipe's, so it may
    /// override them).
    pub fn env(mut self, key: impl AsRef<OsStr>, value: impl AsRef<OsStr>) -> Self {
        self.env
            .push((key.as_ref().to_owned(), value.as_ref().to_owned()));
        self
    }

    /// An extra argument, after the recipe's (e.g. `--mcp-config`).
    pub fn arg(mut self, arg: impl AsRef<OsStr>) -> Self {
        self.args.push(arg.as_ref().to_owned());
        self
    }

    /// Extra arguments, after the recipe's.
    pub fn args(mut self, args: impl IntoIterator<Item = impl AsRef<OsStr>>) -> Self {
        self.args
            .extend(args.into_iter().map(|a| a.as_ref().to_owned()));
        self
    }

    /// `--max-turns N`.
    pub fn max_turns(mut self, turns: u32) -> Self {
        self.max_turns = Some(turns);
        self
    }

    /// How long the session may take before its process group is killed
    /// (default 120 s).
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// The command [`run`](Self::run) would spawn (installs Claude Code if
    /// needed).
    pub fn command(&self) -> anyhow::Result<Command> {
        let project = self
            .project_dir
            .as_ref()
            .context("ClaudeRun: project_dir is not set")?;
        let home = self.home.as_ref().context("ClaudeRun: home is not set")?;
        let base_url = self
            .base_url
            .as_ref()
            .context("ClaudeRun: base_url is not set")?;
        let binary = match &self.binary {
            Some(binary) => binary.clone(),
            None => claude_binary()?,
        };
        let current_path = std::env::var_os("PATH").unwrap_or_default();
        let path = std::env::join_paths(
            self.path_prepend
                .iter()
                .cloned()
                .chain(std::env::split_paths(&current_path)),
        )
        .context("ClaudeRun: a PATH entry contains ':'")?;

        let mut cmd = Command::new(binary);
        cmd.current_dir(project)
            .env_clear()
            .env("PATH", path)
            .env("HOME", home)
            .env("TERM", "dumb")
            .env("IS_SANDBOX", "1")
            .env("ANTHROPIC_BASE_URL", base_url)
            .env("ANTHROPIC_API_KEY", "sk-test")
            .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
            .env("DISABLE_AUTOUPDATER", "1")
            .env("DISABLE_TELEMETRY", "1")
            .env("DISABLE_ERROR_REPORTING", "1");
        for (key, value) in &self.env {
            cmd.env(key, value);
        }
        cmd.arg("-p")
            .arg(&self.prompt)
            .arg("--dangerously-skip-permissions")
            .args(["--output-format", "json"]);
        if let Some(turns) = self.max_turns {
            cmd.arg("--max-turns").arg(turns.to_string());
        }
        cmd.args(&self.args);
        Ok(cmd)
    }

    /// Runs the session to its end. A non-zero exit is not an error (look at
    /// [`ClaudeOutput::status`]); failing to start and timing out are (the
    /// error carries what the process printed).
    pub fn run(&self) -> anyhow::Result<ClaudeOutput> {
        let mut cmd = self.command()?;
        let done = run_with_timeout(&mut cmd, self.timeout)
            .with_context(|| format!("starting Claude Code: {cmd:?}"))?;
        let stdout = String::from_utf8_lossy(&done.stdout).into_owned();
        let stderr = String::from_utf8_lossy(&done.stderr).into_owned();
        let status = match (done.timed_out, done.status) {
            (false, Some(status)) => status,
            _ => bail!(
                "Claude Code did not finish within {:?}; its process group was killed.\n\
                 --- stdout ---\n{}\n--- stderr ---\n{}",
                self.timeout,
                tail(stdout.as_bytes(), 8000),
                tail(stderr.as_bytes(), 8000)
            ),
        };
        Ok(ClaudeOutput {
            json: parse_output(&stdout),
            status,
            stdout,
            stderr,
            elapsed: done.elapsed,
        })
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
