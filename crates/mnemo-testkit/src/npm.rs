//! A pinned npm package (an agent CLI), installed once per machine into a
//! cache directory under `target/` that survives between test runs and is
//! shared by parallel test processes.
//!
//! An exclusive file lock guards the install; a half-finished install never
//! sits at the cache path because it is built in a temporary directory and
//! renamed into place; an install this module made and that no longer works
//! is replaced, one made by hand is left alone with an error saying so.

use std::fs::{self, OpenOptions};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use anyhow::{Context, bail};

use crate::process::{describe, run_with_timeout, tail};

/// Written into a finished install by this module (and only by it).
const MARKER: &str = ".mnemo-testkit-install";

/// How long `npm install` may take.
const INSTALL_TIMEOUT: Duration = Duration::from_secs(20 * 60);

/// How long `<bin> --version` may take.
const VERSION_TIMEOUT: Duration = Duration::from_secs(60);

/// One pinned CLI from the npm registry.
#[derive(Debug, Clone, Copy)]
pub struct Pinned {
    /// What the user knows it as, for messages (`Claude Code`).
    pub title: &'static str,
    /// The npm package, without version (`@anthropic-ai/claude-code`).
    pub package: &'static str,
    /// The pinned version; `<bin> --version` must print it.
    pub version: &'static str,
    /// The executable under `node_modules/.bin`.
    pub bin: &'static str,
    /// The cache directory's name under `target/` (`claude-code`), suffixed
    /// with `-<version>`.
    pub dir_name: &'static str,
    /// The env var that overrides the cache directory.
    pub dir_env: &'static str,
    /// Extra environment for `--version` (to keep it offline and quiet).
    pub version_env: &'static [(&'static str, &'static str)],
}

impl Pinned {
    /// `package@version`.
    pub fn spec(&self) -> String {
        format!("{}@{}", self.package, self.version)
    }

    /// Where it is (or will be) installed: `$<dir_env>` if set, else
    /// `<workspace root>/target/<dir_name>-<version>`.
    pub fn dir(&self) -> PathBuf {
        match std::env::var_os(self.dir_env) {
            Some(dir) if !dir.is_empty() => PathBuf::from(dir),
            _ => workspace_root()
                .join("target")
                .join(format!("{}-{}", self.dir_name, self.version)),
        }
    }

    /// The executable inside the install directory `dir`.
    pub fn binary_in(&self, dir: &Path) -> PathBuf {
        dir.join("node_modules").join(".bin").join(self.bin)
    }

    /// The path of a working binary in `dir`, installing it first if needed.
    pub fn ensure_installed(&self, dir: &Path) -> anyhow::Result<PathBuf> {
        let bin = self.binary_in(dir);
        // Fast path: installed by an earlier run or by a parallel process.
        if self.check_version(&bin).is_ok() {
            return Ok(bin);
        }
        let name = dir
            .file_name()
            .with_context(|| format!("{} dir {} has no file name", self.dir_env, dir.display()))?
            .to_string_lossy()
            .into_owned();
        let parent = dir.parent().unwrap_or(Path::new("."));
        fs::create_dir_all(parent).with_context(|| format!("creating {}", parent.display()))?;

        let lock_path = parent.join(format!("{name}.lock"));
        let lock = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&lock_path)
            .with_context(|| format!("opening the install lock {}", lock_path.display()))?;
        lock.lock()
            .with_context(|| format!("locking {}", lock_path.display()))?;

        // Someone else may have installed it while we waited for the lock.
        if self.check_version(&bin).is_ok() {
            return Ok(bin);
        }
        if dir.exists() {
            if dir.join(MARKER).exists() {
                fs::remove_dir_all(dir)
                    .with_context(|| format!("removing the broken install {}", dir.display()))?;
            } else {
                let why = self.check_version(&bin).err().map(|e| format!("{e:#}"));
                bail!(
                    "{} exists but does not hold a working {} {} ({}), and this test kit did \
                     not make it; remove it (or point {} elsewhere) and run the tests again",
                    dir.display(),
                    self.title,
                    self.version,
                    why.unwrap_or_default(),
                    self.dir_env,
                );
            }
        }
        // Leftovers of installs that were killed: nobody else is installing now.
        let tmp_prefix = format!(".{name}.install-");
        if let Ok(entries) = fs::read_dir(parent) {
            for entry in entries.flatten() {
                if entry.file_name().to_string_lossy().starts_with(&tmp_prefix) {
                    let _ = fs::remove_dir_all(entry.path());
                }
            }
        }

        let tmp = tempfile::Builder::new()
            .prefix(&tmp_prefix)
            .tempdir_in(parent)
            .with_context(|| format!("creating a temporary install dir in {}", parent.display()))?;
        self.npm_install(tmp.path(), dir)?;
        self.check_version(&self.binary_in(tmp.path()))
            .with_context(|| format!("the freshly installed {} does not run", self.title))?;
        fs::write(tmp.path().join(MARKER), self.version).context("marking the install complete")?;
        let tmp = tmp.keep();
        if let Err(err) = fs::rename(&tmp, dir) {
            let _ = fs::remove_dir_all(&tmp);
            return Err(err).with_context(|| {
                format!("moving the install {} to {}", tmp.display(), dir.display())
            });
        }
        self.check_version(&bin)
            .with_context(|| format!("{} does not run after moving it into place", self.title))?;
        drop(lock);
        Ok(bin)
    }

    fn npm_install(&self, prefix: &Path, final_dir: &Path) -> anyhow::Result<()> {
        let spec = self.spec();
        let by_hand = format!(
            "To install it by hand: `npm install --prefix {dir} --no-audit --no-fund {spec}`, \
             then check that `{dir}/node_modules/.bin/{bin} --version` prints {version} \
             (or set {env} to a directory holding such an install).",
            dir = final_dir.display(),
            bin = self.bin,
            version = self.version,
            env = self.dir_env,
        );
        // npm (and a package's install scripts) write under HOME: a scratch
        // HOME, and npm's cache beside the installs in target/, keep the
        // user's home as it was.
        let beside = final_dir.parent().unwrap_or(prefix);
        let scratch_home = tempfile::Builder::new()
            .prefix(".npm-home-")
            .tempdir_in(beside)
            .context("creating npm's scratch HOME")?;
        let mut npm = npm_command(scratch_home.path(), &beside.join("npm-cache"));
        npm.arg("install")
            .arg("--prefix")
            .arg(prefix)
            .args(["--no-audit", "--no-fund", "--no-update-notifier", &spec])
            .current_dir(prefix);
        let shown = format!(
            "npm install --prefix {} --no-audit --no-fund {spec}",
            prefix.display()
        );
        let title = self.title;
        let done = match run_with_timeout(&mut npm, INSTALL_TIMEOUT) {
            Ok(done) => done,
            Err(err) => bail!(
                "installing {title} failed: could not run `{shown}`: {err} \
                 (is Node.js with npm on PATH?). {by_hand}"
            ),
        };
        if done.timed_out {
            bail!(
                "installing {title} failed: `{shown}` did not finish within {INSTALL_TIMEOUT:?} \
                 and was killed.\n--- npm stderr (end) ---\n{}\n{by_hand}",
                tail(&done.stderr, 4000)
            );
        }
        if !done.status.is_some_and(|s| s.success()) {
            bail!(
                "installing {title} failed: `{shown}` exited with {}.\n\
                 --- npm stdout (end) ---\n{}\n--- npm stderr (end) ---\n{}\n{by_hand}",
                describe(done.status),
                tail(&done.stdout, 2000),
                tail(&done.stderr, 4000)
            );
        }
        Ok(())
    }

    /// Runs `bin --version` in a clean environment (so that it cannot touch
    /// the real home) and checks that it reports the pinned version.
    pub fn check_version(&self, bin: &Path) -> anyhow::Result<()> {
        if !bin.exists() {
            bail!("{} does not exist", bin.display());
        }
        let home = tempfile::tempdir().context("creating a scratch HOME")?;
        let mut cmd = Command::new(bin);
        cmd.arg("--version")
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", home.path())
            .env("TERM", "dumb");
        for (key, value) in self.version_env {
            cmd.env(key, value);
        }
        let done = run_with_timeout(&mut cmd, VERSION_TIMEOUT)
            .with_context(|| format!("running {} --version", bin.display()))?;
        let stdout = String::from_utf8_lossy(&done.stdout);
        if done.timed_out || !done.status.is_some_and(|s| s.success()) {
            bail!(
                "`{} --version` failed ({}): {}",
                bin.display(),
                if done.timed_out {
                    "timed out".to_owned()
                } else {
                    describe(done.status)
                },
                tail(&done.stderr, 2000)
            );
        }
        if !stdout.contains(self.version) {
            bail!(
                "`{} --version` printed {:?}, expected {}",
                bin.display(),
                stdout.trim(),
                self.version
            );
        }
        Ok(())
    }
}

/// `npm` as the kit runs it: with `home` as its HOME (npm and a package's
/// install scripts write there), `cache` as its cache and logs folder, and
/// no XDG folder of the user's.
pub fn npm_command(home: &Path, cache: &Path) -> Command {
    let mut npm = Command::new("npm");
    npm.env("HOME", home)
        .env("USERPROFILE", home)
        .env("npm_config_cache", cache)
        .env("npm_config_userconfig", home.join(".npmrc"))
        .env_remove("XDG_CONFIG_HOME")
        .env_remove("XDG_CACHE_HOME")
        .env_remove("XDG_DATA_HOME")
        .env_remove("XDG_STATE_HOME");
    npm
}

/// The workspace root: two levels above this crate's manifest directory.
fn workspace_root() -> PathBuf {
    let manifest_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    manifest_dir
        .parent()
        .and_then(Path::parent)
        .unwrap_or(manifest_dir)
        .to_path_buf()
}

// The tests make executable shell scripts: Unix only.
#[cfg(all(test, unix))]
mod tests {
    use super::*;

    const FAKE: Pinned = Pinned {
        title: "Fake CLI",
        package: "fake-cli",
        version: "1.2.3",
        bin: "fake",
        dir_name: "fake-cli",
        dir_env: "MNEMO_TEST_FAKE_DIR",
        version_env: &[],
    };

    /// A directory laid out like an install, whose binary is a shell script
    /// with the given body.
    fn fake_install(script_body: &str) -> (tempfile::TempDir, PathBuf) {
        use std::os::unix::fs::PermissionsExt;
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("fake");
        let bin = FAKE.binary_in(&dir);
        fs::create_dir_all(bin.parent().unwrap()).unwrap();
        fs::write(&bin, format!("#!/bin/sh\n{script_body}\n")).unwrap();
        fs::set_permissions(&bin, fs::Permissions::from_mode(0o755)).unwrap();
        (root, dir)
    }

    #[test]
    fn a_working_install_is_used_as_is() {
        let (_root, dir) = fake_install("echo '1.2.3 (Fake CLI)'");
        assert_eq!(FAKE.ensure_installed(&dir).unwrap(), FAKE.binary_in(&dir));
    }

    #[test]
    fn a_broken_install_not_made_here_is_left_alone() {
        let (_root, dir) = fake_install("echo '9.9.9'");
        let err = format!("{:#}", FAKE.ensure_installed(&dir).unwrap_err());
        assert!(err.contains("this test kit did not make it"), "{err}");
        assert!(err.contains("expected 1.2.3"), "{err}");
        assert!(FAKE.binary_in(&dir).exists());
    }
}
