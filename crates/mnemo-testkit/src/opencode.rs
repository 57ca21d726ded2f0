//! The real OpenCode, pinned to [`OPENCODE_VERSION`], for end-to-end tests
//! of mnemo's OpenCode plugin.
//!
//! [`opencode_binary`] installs `opencode-ai` from the npm registry once per
//! machine into `target/opencode-<version>` (see [`crate::npm`]).
//! [`OpenCodeRun`] runs it headless (`opencode run <prompt>`) against a
//! [`StandIn`](crate::StandIn) serving OpenAI-compatible chat completions:
//! the provider is a config file of its own, given with `OPENCODE_CONFIG`
//! (OpenCode merges it over `~/.config/opencode/opencode.json`, where
//! `mnemo install --platform opencode` registers the MCP server), with an
//! `@ai-sdk/openai-compatible` provider whose `baseURL` is the stand-in.
//! Plugins load from `$HOME/.config/opencode/plugins/`.

use std::ffi::{OsStr, OsString};
use std::path::PathBuf;
use std::process::{Command, ExitStatus};
use std::sync::OnceLock;
use std::time::Duration;

use anyhow::{Context, bail};
use serde_json::json;

use crate::npm::Pinned;
use crate::process::{run_with_timeout, tail};

/// The OpenCode version the tests pin.
pub const OPENCODE_VERSION: &str = "1.18.33";

const OPENCODE: Pinned = Pinned {
    title: "OpenCode",
    package: "opencode-ai",
    version: OPENCODE_VERSION,
    bin: "opencode",
    dir_name: "opencode",
    dir_env: "MNEMO_TEST_OPENCODE_DIR",
    version_env: &[("OPENCODE_DISABLE_AUTOUPDATE", "1")],
};

/// The path of a working OpenCode [`OPENCODE_VERSION`], installing it first
/// if needed (`npm install --prefix target/opencode-1.18.33
/// opencode-ai@1.18.33`, about 350 MB). Memoized per process.
pub fn opencode_binary() -> anyhow::Result<PathBuf> {
    static BINARY: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    BINARY
        .get_or_init(|| {
            OPENCODE
                .ensure_installed(&OPENCODE.dir())
                .map_err(|e| format!("{e:#}"))
        })
        .clone()
        .map_err(anyhow::Error::msg)
}

/// One headless OpenCode session (`opencode run <prompt>`).
///
/// The process gets a cleared environment plus `PATH` (the directories given
/// to [`path_prepend`](OpenCodeRun::path_prepend) first), `HOME`,
/// `TERM=dumb`, `OPENCODE_DISABLE_AUTOUPDATE=1`, `OPENCODE_CONFIG` (the
/// stand-in provider, written next to `HOME`), then the extra
/// [`env`](OpenCodeRun::env).
#[derive(Debug, Clone)]
pub struct OpenCodeRun {
    prompt: String,
    project_dir: Option<PathBuf>,
    home: Option<PathBuf>,
    base_url: Option<String>,
    path_prepend: Vec<PathBuf>,
    env: Vec<(OsString, OsString)>,
    timeout: Duration,
}

impl OpenCodeRun {
    /// A session with this user prompt; project dir, `HOME` and base URL
    /// must be set before [`run`](Self::run).
    pub fn new(prompt: impl Into<String>) -> Self {
        OpenCodeRun {
            prompt: prompt.into(),
            project_dir: None,
            home: None,
            base_url: None,
            path_prepend: Vec::new(),
            env: Vec::new(),
            timeout: Duration::from_secs(180),
        }
    }

    pub fn project_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.project_dir = Some(dir.into());
        self
    }

    pub fn home(mut self, dir: impl Into<PathBuf>) -> Self {
        self.home = Some(dir.into());
        self
    }

    /// The stand-in's OpenAI-style base URL ([`StandIn::openai_base_url`](crate::StandIn::openai_base_url)).
    pub fn base_url(mut self, url: impl Into<String>) -> Self {
        self.base_url = Some(url.into());
        self
    }

    /// Put `dir` in front of `PATH` (where the plugin finds `mnemo` at project scope).
    pub fn path_prepend(mut self, dir: impl Into<PathBuf>) -> Self {
        self.path_prepend.insert(0, dir.into());
        self
    }

    pub fn env(mut self, key: impl AsRef<OsStr>, value: impl AsRef<OsStr>) -> Self {
        self.env
            .push((key.as_ref().to_owned(), value.as_ref().to_owned()));
        self
    }

    /// How long the session may take (default 180 s).
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// Writes the provider config and returns the command [`run`](Self::run)
    /// would spawn (installs OpenCode if needed).
    pub fn command(&self) -> anyhow::Result<Command> {
        let project = self
            .project_dir
            .as_ref()
            .context("OpenCodeRun: project_dir is not set")?;
        let home = self.home.as_ref().context("OpenCodeRun: home is not set")?;
        let base_url = self
            .base_url
            .as_ref()
            .context("OpenCodeRun: base_url is not set")?;
        let config = home.parent().unwrap_or(home).join("opencode-standin.json");
        let provider = json!({
            "provider": {"standin": {
                "npm": "@ai-sdk/openai-compatible",
                "name": "Stand-in",
                "options": {"baseURL": base_url, "apiKey": "test"},
                "models": {"fake": {"name": "fake", "tool_call": true}},
            }},
            "model": "standin/fake",
            "small_model": "standin/fake",
            "autoupdate": false,
            "share": "disabled",
        });
        std::fs::write(&config, provider.to_string())
            .with_context(|| format!("writing {}", config.display()))?;
        let current_path = std::env::var_os("PATH").unwrap_or_default();
        let path = std::env::join_paths(
            self.path_prepend
                .iter()
                .cloned()
                .chain(std::env::split_paths(&current_path)),
        )
        .context("OpenCodeRun: a PATH entry contains ':'")?;
        let mut cmd = Command::new(opencode_binary()?);
        cmd.current_dir(project)
            .env_clear()
            .env("PATH", path)
            .env("HOME", home)
            .env("TERM", "dumb")
            .env("OPENCODE_DISABLE_AUTOUPDATE", "1")
            .env("OPENCODE_CONFIG", &config);
        for (key, value) in &self.env {
            cmd.env(key, value);
        }
        cmd.arg("run").arg(&self.prompt);
        Ok(cmd)
    }

    /// Runs the session to its end; failing to start or timing out is an error.
    pub fn run(&self) -> anyhow::Result<OpenCodeOutput> {
        let mut cmd = self.command()?;
        let done = run_with_timeout(&mut cmd, self.timeout)
            .with_context(|| format!("starting OpenCode: {cmd:?}"))?;
        let stdout = String::from_utf8_lossy(&done.stdout).into_owned();
        let stderr = String::from_utf8_lossy(&done.stderr).into_owned();
        let status = match (done.timed_out, done.status) {
            (false, Some(status)) => status,
            _ => bail!(
                "OpenCode did not finish within {:?}; its process group was killed.\n\
                 --- stdout ---\n{}\n--- stderr ---\n{}",
                self.timeout,
                tail(stdout.as_bytes(), 8000),
                tail(stderr.as_bytes(), 8000)
            ),
        };
        Ok(OpenCodeOutput {
            status,
            stdout,
            stderr,
        })
    }
}

/// What a finished OpenCode session left behind.
#[derive(Debug, Clone)]
pub struct OpenCodeOutput {
    pub status: ExitStatus,
    /// The session's text (`opencode run` prints the assistant's answer).
    pub stdout: String,
    pub stderr: String,
}

impl OpenCodeOutput {
    /// Panics with the whole output unless it exited 0.
    #[track_caller]
    pub fn expect_success(&self) -> &Self {
        assert!(
            self.status.success(),
            "OpenCode failed ({}).\n--- stdout ---\n{}\n--- stderr ---\n{}",
            self.status,
            self.stdout,
            self.stderr
        );
        self
    }
}
