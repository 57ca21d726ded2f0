//! The real Codex CLI, pinned to [`CODEX_VERSION`], for end-to-end tests of
//! mnemo's Codex hooks and MCP registration.
//!
//! [`codex_binary`] installs `@openai/codex` from the npm registry once per
//! machine into `target/codex-<version>` (an exclusive file lock guards the
//! install; it is built in a temporary directory and renamed into place).
//! [`CodexRun`] runs `codex exec` headless against a [`StandIn`](crate::StandIn)
//! through a custom provider (`wire_api = "responses"`), the recipe of
//! `shared/docs/hook-protocols.md` §2.3. Codex reads its configuration from
//! `$CODEX_HOME` (here `$HOME/.codex`), so the hooks that run are exactly the
//! ones `mnemo install --platform codex` put there.

use std::ffi::OsString;
use std::fs::{self, OpenOptions};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus};
use std::sync::OnceLock;
use std::time::Duration;

use anyhow::{Context, bail};

use crate::process::{describe, run_with_timeout, tail};

/// The Codex CLI version the tests pin.
pub const CODEX_VERSION: &str = "0.169.0";

const PACKAGE: &str = "@openai/codex@0.169.0";

/// Env var that overrides the install directory.
const DIR_ENV: &str = "MNEMO_TEST_CODEX_DIR";

const INSTALL_TIMEOUT: Duration = Duration::from_secs(20 * 60);

/// Where Codex is (or will be) installed: `$MNEMO_TEST_CODEX_DIR`, else
/// `<workspace>/target/codex-0.169.0`; the binary is
/// `<dir>/node_modules/.bin/codex`.
pub fn codex_dir() -> PathBuf {
    match std::env::var_os(DIR_ENV) {
        Some(dir) if !dir.is_empty() => PathBuf::from(dir),
        _ => Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../target")
            .join(format!("codex-{CODEX_VERSION}")),
    }
}

/// A working Codex [`CODEX_VERSION`], installed first if needed (about
/// 400 MB); memoized per process.
pub fn codex_binary() -> anyhow::Result<PathBuf> {
    static BINARY: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    BINARY
        .get_or_init(|| ensure_installed(&codex_dir()).map_err(|e| format!("{e:#}")))
        .clone()
        .map_err(anyhow::Error::msg)
}

fn binary_in(dir: &Path) -> PathBuf {
    dir.join("node_modules").join(".bin").join("codex")
}

fn ensure_installed(dir: &Path) -> anyhow::Result<PathBuf> {
    let bin = binary_in(dir);
    if check_version(&bin).is_ok() {
        return Ok(bin);
    }
    let parent = dir.parent().unwrap_or(Path::new("."));
    fs::create_dir_all(parent).with_context(|| format!("creating {}", parent.display()))?;
    let lock_path = dir.with_extension("lock");
    let lock = OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&lock_path)
        .with_context(|| format!("opening {}", lock_path.display()))?;
    lock.lock()
        .with_context(|| format!("locking {}", lock_path.display()))?;
    if check_version(&bin).is_ok() {
        return Ok(bin);
    }
    if dir.exists() {
        fs::remove_dir_all(dir)
            .with_context(|| format!("removing the broken install {}", dir.display()))?;
    }
    let tmp = tempfile::Builder::new()
        .prefix(".codex.install-")
        .tempdir_in(parent)?;
    let mut npm = Command::new("npm");
    npm.arg("install")
        .arg("--prefix")
        .arg(tmp.path())
        .args(["--no-audit", "--no-fund", PACKAGE])
        .current_dir(tmp.path());
    let done = run_with_timeout(&mut npm, INSTALL_TIMEOUT)
        .context("running npm (is Node.js with npm on PATH?)")?;
    if done.timed_out || !done.status.is_some_and(|s| s.success()) {
        bail!(
            "`npm install {PACKAGE}` failed ({}): {}\nTo install it by hand: \
             `npm install --prefix {} --no-audit --no-fund {PACKAGE}`",
            describe(done.status),
            tail(&done.stderr, 4000),
            dir.display()
        );
    }
    check_version(&binary_in(tmp.path()))?;
    let tmp = tmp.keep();
    fs::rename(&tmp, dir)
        .with_context(|| format!("moving {} to {}", tmp.display(), dir.display()))?;
    drop(lock);
    Ok(bin)
}

fn check_version(bin: &Path) -> anyhow::Result<()> {
    if !bin.exists() {
        bail!("{} does not exist", bin.display());
    }
    let home = tempfile::tempdir()?;
    let mut cmd = Command::new(bin);
    cmd.arg("--version")
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", home.path())
        .env("CODEX_HOME", home.path().join(".codex"));
    let done = run_with_timeout(&mut cmd, Duration::from_secs(60))?;
    let stdout = String::from_utf8_lossy(&done.stdout);
    if !stdout.contains(CODEX_VERSION) {
        bail!(
            "`{} --version` printed {:?}, expected {CODEX_VERSION}",
            bin.display(),
            stdout.trim()
        );
    }
    Ok(())
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

/// One headless Codex session (`codex exec`), against a stand-in whose
/// provider block is in `$HOME/.codex/config.toml` (see [`provider_config`];
/// top-level keys must come before any table, so [`CodexRun::run`] writes the
/// file as provider keys first, then the rest).
#[derive(Debug, Clone)]
pub struct CodexRun {
    prompt: String,
    project_dir: PathBuf,
    home: PathBuf,
    base_url: String,
    env: Vec<(OsString, OsString)>,
    path_prepend: Vec<PathBuf>,
    timeout: Duration,
}

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

impl CodexRun {
    pub fn new(
        prompt: impl Into<String>,
        project_dir: impl Into<PathBuf>,
        home: impl Into<PathBuf>,
        base_url: impl Into<String>,
    ) -> CodexRun {
        CodexRun {
            prompt: prompt.into(),
            project_dir: project_dir.into(),
            home: home.into(),
            base_url: base_url.into(),
            env: Vec::new(),
            path_prepend: Vec::new(),
            timeout: Duration::from_secs(180),
        }
    }

    pub fn env(mut self, key: impl Into<OsString>, value: impl Into<OsString>) -> Self {
        self.env.push((key.into(), value.into()));
        self
    }

    pub fn path_prepend(mut self, dir: impl Into<PathBuf>) -> Self {
        self.path_prepend.push(dir.into());
        self
    }

    /// `$HOME/.codex/config.toml` with the stand-in provider first and the
    /// existing content (mnemo's MCP table) after it.
    fn write_provider(&self) -> anyhow::Result<()> {
        let config = self.home.join(".codex").join("config.toml");
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
                provider_config(&self.base_url).trim_start()
            ),
        )?;
        Ok(())
    }

    pub fn run(&self) -> anyhow::Result<CodexOutput> {
        self.write_provider()?;
        let bin = codex_binary()?;
        let mut path: Vec<PathBuf> = self.path_prepend.clone();
        if let Some(p) = std::env::var_os("PATH") {
            path.extend(std::env::split_paths(&p));
        }
        let mut cmd = Command::new(bin);
        cmd.args([
            "exec",
            "--skip-git-repo-check",
            "--dangerously-bypass-approvals-and-sandbox",
            "--dangerously-bypass-hook-trust",
            "--cd",
        ])
        .arg(&self.project_dir)
        .arg(&self.prompt)
        .current_dir(&self.project_dir)
        .env_clear()
        .env("PATH", std::env::join_paths(path)?)
        .env("HOME", &self.home)
        .env("CODEX_HOME", self.home.join(".codex"))
        .env("STANDIN_OPENAI_KEY", "sk-test")
        .env("TERM", "dumb");
        for (k, v) in &self.env {
            cmd.env(k, v);
        }
        let done = run_with_timeout(&mut cmd, self.timeout)?;
        if done.timed_out {
            bail!(
                "codex exec timed out after {:?}: {}",
                self.timeout,
                tail(&done.stderr, 4000)
            );
        }
        Ok(CodexOutput {
            status: done.status,
            stdout: String::from_utf8_lossy(&done.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&done.stderr).into_owned(),
        })
    }
}
