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

use std::path::PathBuf;
use std::process::{Command, ExitStatus};
use std::sync::OnceLock;
use std::time::Duration;

use anyhow::Context;
use serde_json::json;

use crate::npm::Pinned;
use crate::session::{Cli, Finished, Run, Session};

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

/// OpenCode's headless recipe.
#[derive(Debug, Clone)]
pub struct OpenCodeCli;

/// One headless OpenCode session (`opencode run <prompt>`), built up and
/// then [`run`](crate::session::Run::run).
///
/// Beyond [`Run`]'s environment: `OPENCODE_DISABLE_AUTOUPDATE=1` and
/// `OPENCODE_CONFIG`, the stand-in provider (whose `baseURL` is the
/// OpenAI-style base URL, [`StandIn::openai_base_url`](crate::StandIn::openai_base_url)),
/// written next to `HOME`. Plugins load from `$HOME/.config/opencode/plugins/`,
/// where the plugin finds `mnemo` on `PATH` at project scope; default
/// timeout 180 s.
pub type OpenCodeRun = Run<OpenCodeCli>;

impl Cli for OpenCodeCli {
    const TITLE: &'static str = "OpenCode";
    const TIMEOUT: Duration = Duration::from_secs(180);
    type Output = OpenCodeOutput;

    fn binary() -> anyhow::Result<PathBuf> {
        opencode_binary()
    }

    fn recipe(session: &Session<'_>, cmd: &mut Command) -> anyhow::Result<()> {
        let home = session.home;
        let config = home.parent().unwrap_or(home).join("opencode-standin.json");
        let provider = json!({
            "provider": {"standin": {
                "npm": "@ai-sdk/openai-compatible",
                "name": "Stand-in",
                "options": {"baseURL": session.base_url, "apiKey": "test"},
                "models": {"fake": {"name": "fake", "tool_call": true}},
            }},
            "model": "standin/fake",
            "small_model": "standin/fake",
            "autoupdate": false,
            "share": "disabled",
        });
        std::fs::write(&config, provider.to_string())
            .with_context(|| format!("writing {}", config.display()))?;
        cmd.env("OPENCODE_DISABLE_AUTOUPDATE", "1")
            .env("OPENCODE_CONFIG", &config)
            .arg("run")
            .arg(session.prompt);
        Ok(())
    }

    fn output(finished: Finished) -> OpenCodeOutput {
        OpenCodeOutput {
            status: finished.status,
            stdout: finished.stdout,
            stderr: finished.stderr,
        }
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
