//! The real Codex CLI, pinned to [`CODEX_VERSION`], for end-to-end tests of
//! mnemo's Codex hooks and MCP registration.
//!
//! [`codex_binary`] installs `@openai/codex` from the npm registry once per
//! machine into `target/codex-<version>` (see [`crate::npm`]).
//! [`CodexRun`] runs `codex exec` headless against a [`StandIn`](crate::StandIn)
//! through a custom provider (`wire_api = "responses"`), the recipe of
//! `shared/docs/hook-protocols.md` §2.3. Codex reads its configuration from
//! `$CODEX_HOME` (here `$HOME/.codex`), so the hooks that run are exactly the
//! ones `mnemo install --platform codex` put there.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus};
use std::sync::OnceLock;
use std::time::Duration;

use crate::npm::Pinned;
use crate::process::describe;
use crate::session::{Cli, Finished, Run, Session};

/// The Codex CLI version the tests pin.
pub const CODEX_VERSION: &str = "0.169.0";

/// `--version` runs with a scratch `HOME`, so `CODEX_HOME` (`$HOME/.codex`)
/// is scratch too.
const CODEX: Pinned = Pinned {
    title: "Codex CLI",
    package: "@openai/codex",
    version: CODEX_VERSION,
    bin: "codex",
    dir_name: "codex",
    dir_env: "MNEMO_TEST_CODEX_DIR",
    version_env: &[],
};

/// Where Codex is (or will be) installed: `$MNEMO_TEST_CODEX_DIR`, else
/// `<workspace>/target/codex-0.169.0`; the binary is
/// `<dir>/node_modules/.bin/codex`.
pub fn codex_dir() -> PathBuf {
    CODEX.dir()
}

/// A working Codex [`CODEX_VERSION`], installed first if needed (about
/// 400 MB); memoized per process.
pub fn codex_binary() -> anyhow::Result<PathBuf> {
    static BINARY: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    BINARY
        .get_or_init(|| {
            CODEX
                .ensure_installed(&codex_dir())
                .map_err(|e| format!("{e:#}"))
        })
        .clone()
        .map_err(anyhow::Error::msg)
}

/// Ends the provider block in `config.toml`.
const PROVIDER_END: &str = "# end of the stand-in provider (mnemo-testkit)\n";

/// The provider block `codex exec` is pointed at a stand-in with: appended
/// to `$CODEX_HOME/config.toml` (after whatever `mnemo install` wrote).
pub fn provider_config(base_url: &str) -> String {
    format!(
        "\nmodel = \"gpt-5.5\"\nmodel_provider = \"standin\"\n\n[model_providers.standin]\n\
         name = \"standin\"\nbase_url = \"{base_url}\"\nenv_key = \"STANDIN_OPENAI_KEY\"\n\
         wire_api = \"responses\"\nrequest_max_retries = 0\nstream_max_retries = 0\n"
    )
}

/// Codex CLI's headless recipe.
#[derive(Debug, Clone)]
pub struct CodexCli;

/// One headless Codex session (`codex exec`), against a stand-in whose
/// provider block is in `$HOME/.codex/config.toml` (see [`provider_config`];
/// top-level keys must come before any table, so the run writes the file as
/// provider keys first, then the rest). The base URL is the stand-in's
/// OpenAI-style one.
///
/// Beyond [`Run`]'s environment: `CODEX_HOME=$HOME/.codex` and
/// `STANDIN_OPENAI_KEY=sk-test`. Arguments: `exec --skip-git-repo-check
/// --dangerously-bypass-approvals-and-sandbox --dangerously-bypass-hook-trust
/// --cd <project> <prompt>`; default timeout 180 s.
pub type CodexRun = Run<CodexCli>;

/// What a Codex run left.
#[derive(Debug)]
pub struct CodexOutput {
    pub status: Option<ExitStatus>,
    pub stdout: String,
    pub stderr: String,
}

impl CodexOutput {
    pub fn expect_success(&self) -> &Self {
        assert!(
            self.status.is_some_and(|s| s.success()),
            "codex exec failed ({}):\n--- stdout ---\n{}\n--- stderr ---\n{}",
            describe(self.status),
            self.stdout,
            self.stderr
        );
        self
    }
}

impl Cli for CodexCli {
    const TITLE: &'static str = "Codex CLI";
    const TIMEOUT: Duration = Duration::from_secs(180);
    type Output = CodexOutput;

    fn binary() -> anyhow::Result<PathBuf> {
        codex_binary()
    }

    fn recipe(session: &Session<'_>, cmd: &mut Command) -> anyhow::Result<()> {
        write_provider(session.home, session.base_url)?;
        cmd.args([
            "exec",
            "--skip-git-repo-check",
            "--dangerously-bypass-approvals-and-sandbox",
            "--dangerously-bypass-hook-trust",
            "--cd",
        ])
        .arg(session.project_dir)
        .arg(session.prompt)
        .env("CODEX_HOME", session.home.join(".codex"))
        .env("STANDIN_OPENAI_KEY", "sk-test");
        Ok(())
    }

    fn output(finished: Finished) -> CodexOutput {
        CodexOutput {
            status: Some(finished.status),
            stdout: finished.stdout,
            stderr: finished.stderr,
        }
    }
}

/// `$HOME/.codex/config.toml` with the stand-in provider first and the
/// existing content (mnemo's MCP table) after it.
fn write_provider(home: &Path, base_url: &str) -> anyhow::Result<()> {
    let config = home.join(".codex").join("config.toml");
    fs::create_dir_all(config.parent().expect("has a parent"))?;
    let existing = fs::read_to_string(&config).unwrap_or_default();
    // A provider block of an earlier run (another stand-in) goes.
    let rest = match existing.split_once(PROVIDER_END) {
        Some((_, rest)) => rest.trim_start().to_owned(),
        None => existing,
    };
    fs::write(
        &config,
        format!(
            "{}{PROVIDER_END}\n{rest}",
            provider_config(base_url).trim_start()
        ),
    )?;
    Ok(())
}
