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

use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus};
use std::sync::OnceLock;
use std::time::Duration;

use anyhow::Context;
use serde_json::{Value, json};

use crate::npm::Pinned;
use crate::session::{Cli, Finished, Run, Session};

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

/// Gemini CLI's headless recipe.
#[derive(Debug, Clone)]
pub struct GeminiCli;

/// One headless Gemini CLI session, built up and then
/// [`run`](crate::session::Run::run).
///
/// Beyond [`Run`]'s environment: `GEMINI_API_KEY=test`,
/// `GOOGLE_GEMINI_BASE_URL` (the base URL), `GEMINI_CLI_TRUST_WORKSPACE=true`.
/// Arguments: `-p <prompt> --yolo -o json`. Hooks come from
/// `$HOME/.gemini/settings.json`; default timeout 120 s.
pub type GeminiRun = Run<GeminiCli>;

impl Cli for GeminiCli {
    const TITLE: &'static str = "Gemini CLI";
    const TIMEOUT: Duration = Duration::from_secs(120);
    type Output = GeminiOutput;

    fn binary() -> anyhow::Result<PathBuf> {
        gemini_binary()
    }

    fn recipe(session: &Session<'_>, cmd: &mut Command) -> anyhow::Result<()> {
        cmd.env("GEMINI_API_KEY", "test")
            .env("GOOGLE_GEMINI_BASE_URL", session.base_url)
            .env("GEMINI_CLI_TRUST_WORKSPACE", "true")
            .arg("-p")
            .arg(session.prompt)
            .arg("--yolo")
            .args(["-o", "json"]);
        Ok(())
    }

    fn output(finished: Finished) -> GeminiOutput {
        GeminiOutput {
            json: serde_json::from_str(finished.stdout.trim()).ok(),
            status: finished.status,
            stdout: finished.stdout,
            stderr: finished.stderr,
        }
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
