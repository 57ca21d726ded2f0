//! The real Claude Code CLI, pinned to [`CLAUDE_CODE_VERSION`], for
//! end-to-end tests of mnemo's hooks and MCP server.
//!
//! [`claude_binary`] installs `@anthropic-ai/claude-code` from the npm
//! registry once per machine into a cache directory ([`claude_dir`]) that
//! survives between test runs and is shared by parallel test processes (an
//! exclusive file lock guards the install; a half-finished install never sits
//! at the cache path because it is built in a temporary directory and renamed
//! into place). [`ClaudeRun`] runs it headless (`-p`) against a
//! [`StandIn`](crate::StandIn) with exactly the recipe of
//! `shared/docs/claude-code-e2e.md`.
//!
//! Claude Code reads hooks from `$HOME/.claude/settings.json`, so with a fake
//! `HOME` (see [`Sandbox`](crate::Sandbox)) the hooks that run are exactly the
//! ones the test (or `mnemo install` pointed at that `HOME`) put there.

use std::ffi::{OsStr, OsString};
use std::fs::{self, OpenOptions};
use std::io::{self, Read};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::sync::{Arc, Mutex, OnceLock};
use std::thread;
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use serde_json::Value;

/// The Claude Code version the tests pin.
pub const CLAUDE_CODE_VERSION: &str = "2.1.328";

/// The npm package spec that is installed.
const PACKAGE: &str = "@anthropic-ai/claude-code@2.1.328";

/// Env var that overrides the install directory.
const DIR_ENV: &str = "MNEMO_TEST_CLAUDE_DIR";

/// Written into a finished install by this module (and only by it), so that a
/// broken install of ours can be replaced while one made by hand is left
/// alone.
const MARKER: &str = ".mnemo-testkit-install";

/// How long `npm install` may take (it downloads about 370 MB).
const INSTALL_TIMEOUT: Duration = Duration::from_secs(20 * 60);

/// How long `claude --version` may take.
const VERSION_TIMEOUT: Duration = Duration::from_secs(60);

/// Where Claude Code is (or will be) installed: `$MNEMO_TEST_CLAUDE_DIR` if
/// set, else `<workspace root>/target/claude-code-2.1.328`. The binary is
/// `<dir>/node_modules/.bin/claude`.
pub fn claude_dir() -> PathBuf {
    match std::env::var_os(DIR_ENV) {
        Some(dir) if !dir.is_empty() => PathBuf::from(dir),
        _ => workspace_root()
            .join("target")
            .join(format!("claude-code-{CLAUDE_CODE_VERSION}")),
    }
}

/// The path of a working Claude Code [`CLAUDE_CODE_VERSION`] binary,
/// installing it first if needed (with `npm install --prefix <claude_dir()>
/// --no-audit --no-fund @anthropic-ai/claude-code@2.1.328`; the first time
/// this downloads about 370 MB). The outcome is memoized per process, so only
/// the first call pays for the install or the `--version` check.
pub fn claude_binary() -> anyhow::Result<PathBuf> {
    static BINARY: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    BINARY
        .get_or_init(|| ensure_installed(&claude_dir()).map_err(|e| format!("{e:#}")))
        .clone()
        .map_err(anyhow::Error::msg)
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

fn binary_in(dir: &Path) -> PathBuf {
    dir.join("node_modules").join(".bin").join("claude")
}

fn ensure_installed(dir: &Path) -> anyhow::Result<PathBuf> {
    let bin = binary_in(dir);
    // Fast path: installed by an earlier run or by a parallel process.
    if check_version(&bin).is_ok() {
        return Ok(bin);
    }
    let name = dir
        .file_name()
        .with_context(|| format!("{DIR_ENV}/claude dir {} has no file name", dir.display()))?
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
    if check_version(&bin).is_ok() {
        return Ok(bin);
    }
    if dir.exists() {
        if dir.join(MARKER).exists() {
            fs::remove_dir_all(dir)
                .with_context(|| format!("removing the broken install {}", dir.display()))?;
        } else {
            let why = check_version(&bin).err().map(|e| format!("{e:#}"));
            bail!(
                "{} exists but does not hold a working Claude Code {CLAUDE_CODE_VERSION} \
                 ({}), and this test kit did not make it; remove it (or point {DIR_ENV} \
                 elsewhere) and run the tests again",
                dir.display(),
                why.unwrap_or_default()
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
    npm_install(tmp.path(), dir)?;
    check_version(&binary_in(tmp.path()))
        .context("the freshly installed Claude Code does not run")?;
    fs::write(tmp.path().join(MARKER), CLAUDE_CODE_VERSION)
        .context("marking the install complete")?;
    let tmp = tmp.keep();
    if let Err(err) = fs::rename(&tmp, dir) {
        let _ = fs::remove_dir_all(&tmp);
        return Err(err)
            .with_context(|| format!("moving the install {} to {}", tmp.display(), dir.display()));
    }
    check_version(&bin).context("Claude Code does not run after moving it into place")?;
    drop(lock);
    Ok(bin)
}

fn npm_install(prefix: &Path, final_dir: &Path) -> anyhow::Result<()> {
    let by_hand = format!(
        "To install it by hand: `npm install --prefix {dir} --no-audit --no-fund {PACKAGE}`, \
         then check that `{dir}/node_modules/.bin/claude --version` prints {CLAUDE_CODE_VERSION} \
         (or set {DIR_ENV} to a directory holding such an install).",
        dir = final_dir.display()
    );
    let mut npm = Command::new("npm");
    npm.arg("install")
        .arg("--prefix")
        .arg(prefix)
        .args(["--no-audit", "--no-fund", PACKAGE])
        .current_dir(prefix);
    let shown = format!(
        "npm install --prefix {} --no-audit --no-fund {PACKAGE}",
        prefix.display()
    );
    let done = match run_with_timeout(&mut npm, INSTALL_TIMEOUT) {
        Ok(done) => done,
        Err(err) => bail!(
            "installing Claude Code failed: could not run `{shown}`: {err} \
             (is Node.js with npm on PATH?). {by_hand}"
        ),
    };
    if done.timed_out {
        bail!(
            "installing Claude Code failed: `{shown}` did not finish within {INSTALL_TIMEOUT:?} \
             and was killed.\n--- npm stderr (end) ---\n{}\n{by_hand}",
            tail(&done.stderr, 4000)
        );
    }
    if !done.status.is_some_and(|s| s.success()) {
        bail!(
            "installing Claude Code failed: `{shown}` exited with {}.\n\
             --- npm stdout (end) ---\n{}\n--- npm stderr (end) ---\n{}\n{by_hand}",
            describe(done.status),
            tail(&done.stdout, 2000),
            tail(&done.stderr, 4000)
        );
    }
    Ok(())
}

/// Runs `bin --version` in a clean environment (so that it cannot touch the
/// real `~/.claude`) and checks that it reports [`CLAUDE_CODE_VERSION`].
fn check_version(bin: &Path) -> anyhow::Result<()> {
    if !bin.exists() {
        bail!("{} does not exist", bin.display());
    }
    let home = tempfile::tempdir().context("creating a scratch HOME")?;
    let mut cmd = Command::new(bin);
    cmd.arg("--version")
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", home.path())
        .env("TERM", "dumb")
        .env("DISABLE_AUTOUPDATER", "1")
        .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1");
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
    if !stdout.contains(CLAUDE_CODE_VERSION) {
        bail!(
            "`{} --version` printed {:?}, expected {CLAUDE_CODE_VERSION}",
            bin.display(),
            stdout.trim()
        );
    }
    Ok(())
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

/// How a child process ended.
struct Finished {
    status: Option<ExitStatus>,
    stdout: Vec<u8>,
    stderr: Vec<u8>,
    timed_out: bool,
    elapsed: Duration,
}

/// Runs `cmd` in its own process group with stdin closed and stdout/stderr
/// captured; after `timeout` the whole group is killed. Output that
/// grandchildren keep writing after the child exited is waited for only
/// briefly.
fn run_with_timeout(cmd: &mut Command, timeout: Duration) -> io::Result<Finished> {
    let started = Instant::now();
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    #[cfg(unix)]
    std::os::unix::process::CommandExt::process_group(cmd, 0);
    let mut child = cmd.spawn()?;
    let (done_tx, done_rx) = mpsc::channel();
    let stdout = collect(child.stdout.take(), done_tx.clone());
    let stderr = collect(child.stderr.take(), done_tx);

    let mut timed_out = false;
    let status = loop {
        if let Some(status) = child.try_wait()? {
            break Some(status);
        }
        if started.elapsed() >= timeout {
            timed_out = true;
            kill_group(&mut child);
            break child.wait().ok();
        }
        thread::sleep(Duration::from_millis(20));
    };
    let elapsed = started.elapsed();
    let grace = Instant::now() + Duration::from_secs(2);
    for _ in 0..2 {
        let left = grace.saturating_duration_since(Instant::now());
        if done_rx.recv_timeout(left).is_err() {
            break;
        }
    }
    let take = |buf: &Arc<Mutex<Vec<u8>>>| buf.lock().map(|b| b.clone()).unwrap_or_default();
    Ok(Finished {
        status,
        stdout: take(&stdout),
        stderr: take(&stderr),
        timed_out,
        elapsed,
    })
}

/// Copies `pipe` into a buffer on a thread; signals `done` at end of file.
fn collect(
    pipe: Option<impl Read + Send + 'static>,
    done: mpsc::Sender<()>,
) -> Arc<Mutex<Vec<u8>>> {
    let buffer = Arc::new(Mutex::new(Vec::new()));
    let Some(mut pipe) = pipe else {
        let _ = done.send(());
        return buffer;
    };
    let sink = buffer.clone();
    thread::spawn(move || {
        let mut chunk = [0u8; 8192];
        loop {
            match pipe.read(&mut chunk) {
                Ok(0) | Err(_) => break,
                Ok(n) => {
                    if let Ok(mut b) = sink.lock() {
                        b.extend_from_slice(&chunk[..n]);
                    }
                }
            }
        }
        let _ = done.send(());
    });
    buffer
}

/// SIGKILLs the child's process group (the child leads it, see
/// `process_group(0)`), falling back to the child alone.
fn kill_group(child: &mut Child) {
    let group = format!("-{}", child.id());
    let killed = Command::new("kill")
        .args(["-s", "KILL", "--", &group])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !killed {
        let _ = child.kill();
    }
}

fn describe(status: Option<ExitStatus>) -> String {
    status.map_or_else(|| "no exit status".to_owned(), |s| s.to_string())
}

/// The last `max` bytes of `bytes` as text.
fn tail(bytes: &[u8], max: usize) -> String {
    let text = String::from_utf8_lossy(bytes);
    if text.len() <= max {
        return text.into_owned();
    }
    let mut start = text.len() - max;
    while !text.is_char_boundary(start) {
        start += 1;
    }
    format!("...{}", &text[start..])
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

    #[test]
    fn timeout_kills_the_process_group() {
        let mut cmd = Command::new("sh");
        cmd.args(["-c", "sleep 30 & sleep 30; echo never"]);
        let done = run_with_timeout(&mut cmd, Duration::from_millis(300)).unwrap();
        assert!(done.timed_out);
        assert!(done.elapsed < Duration::from_secs(5), "{:?}", done.elapsed);
        assert!(done.stdout.is_empty());
    }

    /// A directory laid out like an install, whose `claude` is a shell
    /// script with the given body.
    fn fake_install(script_body: &str) -> tempfile::TempDir {
        use std::os::unix::fs::PermissionsExt;
        let root = tempfile::tempdir().unwrap();
        let bin = binary_in(&root.path().join("claude"));
        fs::create_dir_all(bin.parent().unwrap()).unwrap();
        fs::write(&bin, format!("#!/bin/sh\n{script_body}\n")).unwrap();
        fs::set_permissions(&bin, fs::Permissions::from_mode(0o755)).unwrap();
        root
    }

    #[test]
    fn a_working_install_is_used_as_is() {
        let root = fake_install("echo '2.1.328 (Claude Code)'");
        let dir = root.path().join("claude");
        assert_eq!(ensure_installed(&dir).unwrap(), binary_in(&dir));
    }

    #[test]
    fn a_broken_install_not_made_here_is_left_alone() {
        let root = fake_install("echo '9.9.9 (Claude Code)'");
        let dir = root.path().join("claude");
        let err = format!("{:#}", ensure_installed(&dir).unwrap_err());
        assert!(err.contains("this test kit did not make it"), "{err}");
        assert!(err.contains("expected 2.1.328"), "{err}");
        assert!(binary_in(&dir).exists());
    }

    #[test]
    fn tail_keeps_the_end() {
        assert_eq!(tail(b"abcdef", 3), "...def");
        assert_eq!(tail(b"abc", 3), "abc");
    }
}
