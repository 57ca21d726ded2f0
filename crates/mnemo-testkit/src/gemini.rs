//! The real Gemini CLI, pinned to [`GEMINI_CLI_VERSION`], for end-to-end
//! tests of mnemo's Gemini hooks.
//!
//! [`gemini_binary`] installs `@google/gemini-cli` from the npm registry once
//! per machine into `target/gemini-cli-<version>` (see [`crate::npm`]).
//! [`GeminiRun`] runs it headless (`-p … --yolo -o json`) against a
//! [`StandIn`](crate::StandIn), which serves the Gemini API routes, with the
//! recipe verified in `shared/docs/hook-protocols.md` §4:
//! `GOOGLE_GEMINI_BASE_URL` pointing at the stand-in, `GEMINI_API_KEY`, and
//! `security.auth.selectedType = "gemini-api-key"` in
//! `$HOME/.gemini/settings.json` ([`write_base_settings`]; without it the
//! base URL selects an auth type this build rejects).
//!
//! Gemini CLI reads hooks from `$HOME/.gemini/settings.json`, so with a fake
//! `HOME` the hooks that run are the ones `mnemo install --platform gemini`
//! put there.

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus};
use std::sync::OnceLock;
use std::time::Duration;

use anyhow::{Context, bail};
use serde_json::{Value, json};

use crate::npm::Pinned;
use crate::process::{run_with_timeout, tail};

/// The Gemini CLI version the tests pin.
pub const GEMINI_CLI_VERSION: &str = "0.61.0";

const GEMINI_CLI: Pinned = Pinned {
    title: "Gemini CLI",
    package: "@google/gemini-cli",
    version: GEMINI_CLI_VERSION,
    bin: "gemini",
    dir_name: "gemini-cli",
    dir_env: "MNEMO_TEST_GEMINI_DIR",
    version_env: &[],
};

/// The path of a working Gemini CLI [`GEMINI_CLI_VERSION`], installing it
/// first if needed (`npm install --prefix target/gemini-cli-0.61.0
/// @google/gemini-cli@0.61.0`, about 100 MB). Memoized per process.
pub fn gemini_binary() -> anyhow::Result<PathBuf> {
    static BINARY: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    BINARY
        .get_or_init(|| {
            GEMINI_CLI
                .ensure_installed(&GEMINI_CLI.dir())
                .map_err(|e| format!("{e:#}"))
        })
        .clone()
        .map_err(anyhow::Error::msg)
}

/// Writes `$home/.gemini/settings.json` with what a headless run against a
/// stand-in needs: API-key auth, no telemetry, no update checks. Call it
/// before `mnemo install --platform gemini`, which merges into the file.
pub fn write_base_settings(home: &Path) -> anyhow::Result<PathBuf> {
    let dir = home.join(".gemini");
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    let path = dir.join("settings.json");
    let settings = json!({
        "security": {"auth": {"selectedType": "gemini-api-key"}},
        "privacy": {"usageStatisticsEnabled": false},
        "general": {"enableAutoUpdate": false, "enableAutoUpdateNotification": false},
    });
    std::fs::write(&path, serde_json::to_string_pretty(&settings)? + "\n")
        .with_context(|| format!("writing {}", path.display()))?;
    Ok(path)
}

/// One headless Gemini CLI session, built up and then [`run`](GeminiRun::run).
///
/// The process gets a cleared environment plus `PATH` (the directories given
/// to [`path_prepend`](GeminiRun::path_prepend) first), `HOME`, `TERM=dumb`,
/// `GEMINI_API_KEY=test`, `GOOGLE_GEMINI_BASE_URL`,
/// `GEMINI_CLI_TRUST_WORKSPACE=true`, then the extra [`env`](GeminiRun::env).
/// Arguments: `-p <prompt> --yolo -o json`.
#[derive(Debug, Clone)]
pub struct GeminiRun {
    prompt: String,
    project_dir: Option<PathBuf>,
    home: Option<PathBuf>,
    base_url: Option<String>,
    path_prepend: Vec<PathBuf>,
    env: Vec<(OsString, OsString)>,
    timeout: Duration,
}

impl GeminiRun {
    /// A session with this user prompt; project dir, `HOME` and base URL
    /// must be set before [`run`](Self::run).
    pub fn new(prompt: impl Into<String>) -> Self {
        GeminiRun {
            prompt: prompt.into(),
            project_dir: None,
            home: None,
            base_url: None,
            path_prepend: Vec::new(),
            env: Vec::new(),
            timeout: Duration::from_secs(120),
        }
    }

    /// The working directory of the session (the "project").
    pub fn project_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.project_dir = Some(dir.into());
        self
    }

    /// The fake `HOME` (its `.gemini/settings.json` holds the hooks).
    pub fn home(mut self, dir: impl Into<PathBuf>) -> Self {
        self.home = Some(dir.into());
        self
    }

    /// `GOOGLE_GEMINI_BASE_URL`, normally [`StandIn::base_url`](crate::StandIn::base_url).
    pub fn base_url(mut self, url: impl Into<String>) -> Self {
        self.base_url = Some(url.into());
        self
    }

    /// Put `dir` in front of `PATH`.
    pub fn path_prepend(mut self, dir: impl Into<PathBuf>) -> Self {
        self.path_prepend.insert(0, dir.into());
        self
    }

    /// An extra environment variable.
    pub fn env(mut self, key: impl AsRef<OsStr>, value: impl AsRef<OsStr>) -> Self {
        self.env
            .push((key.as_ref().to_owned(), value.as_ref().to_owned()));
        self
    }

    /// How long the session may take (default 120 s).
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// The command [`run`](Self::run) would spawn (installs Gemini CLI if
    /// needed).
    pub fn command(&self) -> anyhow::Result<Command> {
        let project = self
            .project_dir
            .as_ref()
            .context("GeminiRun: project_dir is not set")?;
        let home = self.home.as_ref().context("GeminiRun: home is not set")?;
        let base_url = self
            .base_url
            .as_ref()
            .context("GeminiRun: base_url is not set")?;
        let current_path = std::env::var_os("PATH").unwrap_or_default();
        let path = std::env::join_paths(
            self.path_prepend
                .iter()
                .cloned()
                .chain(std::env::split_paths(&current_path)),
        )
        .context("GeminiRun: a PATH entry contains ':'")?;
        let mut cmd = Command::new(gemini_binary()?);
        cmd.current_dir(project)
            .env_clear()
            .env("PATH", path)
            .env("HOME", home)
            .env("TERM", "dumb")
            .env("GEMINI_API_KEY", "test")
            .env("GOOGLE_GEMINI_BASE_URL", base_url)
            .env("GEMINI_CLI_TRUST_WORKSPACE", "true");
        for (key, value) in &self.env {
            cmd.env(key, value);
        }
        cmd.arg("-p")
            .arg(&self.prompt)
            .arg("--yolo")
            .args(["-o", "json"]);
        Ok(cmd)
    }

    /// Runs the session to its end. A non-zero exit is not an error (see
    /// [`GeminiOutput::status`]); failing to start and timing out are.
    pub fn run(&self) -> anyhow::Result<GeminiOutput> {
        let mut cmd = self.command()?;
        let done = run_with_timeout(&mut cmd, self.timeout)
            .with_context(|| format!("starting Gemini CLI: {cmd:?}"))?;
        let stdout = String::from_utf8_lossy(&done.stdout).into_owned();
        let stderr = String::from_utf8_lossy(&done.stderr).into_owned();
        let status = match (done.timed_out, done.status) {
            (false, Some(status)) => status,
            _ => bail!(
                "Gemini CLI did not finish within {:?}; its process group was killed.\n\
                 --- stdout ---\n{}\n--- stderr ---\n{}",
                self.timeout,
                tail(stdout.as_bytes(), 8000),
                tail(stderr.as_bytes(), 8000)
            ),
        };
        Ok(GeminiOutput {
            json: serde_json::from_str(stdout.trim()).ok(),
            status,
            stdout,
            stderr,
        })
    }
}

/// What a finished Gemini CLI session left behind.
#[derive(Debug, Clone)]
pub struct GeminiOutput {
    pub status: ExitStatus,
    pub stdout: String,
    pub stderr: String,
    /// stdout parsed as JSON (`-o json`: `{response, stats, error?}`).
    pub json: Option<Value>,
}

impl GeminiOutput {
    /// Panics with the whole output unless it exited 0 without an `error`.
    #[track_caller]
    pub fn expect_success(&self) -> &Self {
        let ok = self.status.success()
            && self
                .json
                .as_ref()
                .is_some_and(|j| j.get("error").is_none_or(Value::is_null));
        assert!(
            ok,
            "Gemini CLI failed ({}).\n--- stdout ---\n{}\n--- stderr ---\n{}",
            self.status, self.stdout, self.stderr
        );
        self
    }
}
