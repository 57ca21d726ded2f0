//! Throw-away places for a test to run a client and mnemo in: [`Sandbox`]
//! (a temp dir with a fake `HOME`, a mnemo data dir and a project dir) and
//! [`git_init`] (a real git repository with one commit).
//!
//! They exist so that no test reads or writes the developer's real `~`,
//! `~/.claude` or mnemo data, and so that every test starts empty.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, bail};
use tempfile::TempDir;

use crate::claude_code::ClaudeRun;
use crate::session::{Cli, Run};

/// A temporary directory (removed on drop) holding `home/` (the fake
/// `HOME`), `data/` (for `MNEMO_DATA_DIR`) and `project/` (the working
/// directory of a session). Paths are canonical, so they compare equal to
/// what clients report as their `cwd`.
#[derive(Debug)]
pub struct Sandbox {
    dir: TempDir,
    root: PathBuf,
}

impl Sandbox {
    /// Creates the directory and its three subdirectories.
    ///
    /// # Panics
    /// If the temporary directory cannot be created.
    pub fn new() -> Sandbox {
        let dir = tempfile::Builder::new()
            .prefix("mnemo-test-")
            .tempdir()
            .expect("sandbox: create a temporary directory");
        let root = dir
            .path()
            .canonicalize()
            .expect("sandbox: canonicalize the temporary directory");
        for sub in ["home", "data", "project"] {
            std::fs::create_dir(root.join(sub)).expect("sandbox: create a subdirectory");
        }
        Sandbox { dir, root }
    }

    /// The sandbox itself.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The fake `HOME`.
    pub fn home(&self) -> PathBuf {
        self.root.join("home")
    }

    /// The mnemo data directory (`MNEMO_DATA_DIR`).
    pub fn data(&self) -> PathBuf {
        self.root.join("data")
    }

    /// The project directory.
    pub fn project(&self) -> PathBuf {
        self.root.join("project")
    }

    /// A session of the agent CLI `C` in this sandbox: project dir, `HOME`
    /// and `MNEMO_DATA_DIR` set, pointed at `base_url`.
    pub fn session<C: Cli>(&self, base_url: &str, prompt: &str) -> Run<C> {
        Run::new(prompt)
            .project_dir(self.project())
            .home(self.home())
            .base_url(base_url)
            .env("MNEMO_DATA_DIR", self.data())
    }

    /// A Claude Code [`session`](Self::session).
    pub fn claude(&self, base_url: &str, prompt: &str) -> ClaudeRun {
        self.session(base_url, prompt)
    }

    /// Keeps the directory on disk after the sandbox is dropped (to look at
    /// it after a failure) and returns its path.
    pub fn keep(self) -> PathBuf {
        let _ = self.dir.keep();
        self.root
    }
}

impl Default for Sandbox {
    fn default() -> Self {
        Sandbox::new()
    }
}

/// Makes `path` (created if missing) a git repository with one commit of
/// whatever it holds (an empty commit if nothing). The author is set with
/// `-c` flags and global/system git config is ignored, so it works on a
/// machine without git identity and does not depend on the user's config.
pub fn git_init(path: &Path) -> anyhow::Result<()> {
    std::fs::create_dir_all(path).with_context(|| format!("creating {}", path.display()))?;
    let git = |args: &[&str]| -> anyhow::Result<()> {
        let output = Command::new("git")
            .args([
                "-c",
                "user.name=mnemo test",
                "-c",
                "user.email=test@mnemo.invalid",
                "-c",
                "init.defaultBranch=main",
                "-c",
                "commit.gpgsign=false",
            ])
            .args(args)
            .current_dir(path)
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .output()
            .with_context(|| format!("running git {args:?} (is git installed?)"))?;
        if !output.status.success() {
            bail!(
                "git {args:?} in {} failed ({}): {}",
                path.display(),
                output.status,
                String::from_utf8_lossy(&output.stderr).trim()
            );
        }
        Ok(())
    };
    git(&["init", "-q"])?;
    git(&["add", "-A"])?;
    git(&["commit", "-q", "--allow-empty", "-m", "initial commit"])
}
