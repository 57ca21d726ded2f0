//! Shared helpers for the integration tests: the real `mnemo` binary, run as
//! a process with real stdin, against a real data directory.
#![allow(dead_code)]

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

pub const MNEMO: &str = env!("CARGO_BIN_EXE_mnemo");

/// A data directory and a fake HOME, removed on drop.
pub struct Env {
    pub dir: tempfile::TempDir,
}

impl Env {
    pub fn new() -> Env {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("home")).unwrap();
        Env { dir }
    }

    pub fn data(&self) -> PathBuf {
        self.dir.path().join("data")
    }

    pub fn home(&self) -> PathBuf {
        self.dir.path().join("home")
    }

    pub fn db_path(&self) -> PathBuf {
        self.data().join("mnemo.db")
    }

    /// `mnemo` with this environment only (no inherited MNEMO_* or CLAUDE_*).
    pub fn mnemo(&self) -> Command {
        let mut c = clean_mnemo();
        c.env("MNEMO_DATA_DIR", self.data())
            .env("HOME", self.home())
            .env("MNEMO_NO_WORKER", "1");
        c
    }

    /// Runs one hook with `payload` on stdin.
    pub fn hook(&self, event: &str, payload: &str) -> Output {
        self.hook_with(event, payload, |_| {})
    }

    pub fn hook_with(
        &self,
        event: &str,
        payload: &str,
        tweak: impl FnOnce(&mut Command),
    ) -> Output {
        let mut c = self.mnemo();
        c.args(["hook", "claude-code", event]);
        tweak(&mut c);
        run_with_stdin(c, payload.as_bytes())
    }

    pub fn db(&self) -> rusqlite::Connection {
        rusqlite::Connection::open(self.db_path()).unwrap()
    }

    pub fn count(&self, sql: &str) -> i64 {
        self.db().query_row(sql, [], |r| r.get(0)).unwrap()
    }

    /// The first column of every row `sql` returns, as text.
    pub fn strings(&self, sql: &str) -> Vec<String> {
        let db = self.db();
        let mut stmt = db.prepare(sql).unwrap();
        stmt.query_map([], |r| r.get(0))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap()
    }

    pub fn hook_log(&self) -> String {
        std::fs::read_to_string(self.data().join("logs/hook.log")).unwrap_or_default()
    }
}

/// The `mnemo` binary without the MNEMO_* and CLAUDE* variables of the
/// environment the tests run in.
pub fn clean_mnemo() -> Command {
    let mut c = Command::new(MNEMO);
    for (k, _) in std::env::vars_os() {
        let k = k.to_string_lossy().into_owned();
        if k.starts_with("MNEMO_") || k.starts_with("CLAUDE") {
            c.env_remove(k);
        }
    }
    c
}

/// `mnemo` as a user of a testkit sandbox runs it: its HOME, its data dir,
/// in its project.
pub fn sandbox_mnemo(sandbox: &mnemo_testkit::Sandbox) -> Command {
    let mut c = clean_mnemo();
    c.env("HOME", sandbox.home())
        .env("MNEMO_DATA_DIR", sandbox.data())
        .current_dir(sandbox.project());
    c
}

pub fn run_with_stdin(mut c: Command, stdin: &[u8]) -> Output {
    c.stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = c.spawn().expect("mnemo starts");
    let mut pipe = child.stdin.take().unwrap();
    let data = stdin.to_vec();
    // Write on a thread: a large payload must not deadlock against output.
    let writer = std::thread::spawn(move || {
        let _ = pipe.write_all(&data);
    });
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap();
    out
}

/// A command that must succeed: its output, or a panic with its stderr.
pub fn assert_success(out: &Output) {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The hook contract: exit 0 and exactly one JSON object on stdout.
pub fn assert_hook_ok(out: &Output) -> serde_json::Value {
    assert_eq!(
        out.status.code(),
        Some(0),
        "hook exit status; stderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8(out.stdout.clone()).expect("stdout is UTF-8");
    assert_eq!(
        stdout.matches('\n').count(),
        1,
        "one line on stdout: {stdout:?}"
    );
    let value: serde_json::Value = serde_json::from_str(stdout.trim())
        .unwrap_or_else(|e| panic!("stdout is JSON ({e}): {stdout:?}"));
    assert!(value.is_object(), "stdout is an object: {stdout}");
    value
}

pub fn fixture(name: &str) -> String {
    std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/claude-code")
            .join(name),
    )
    .unwrap_or_else(|e| panic!("fixture {name}: {e}"))
}

/// A fixture with its `cwd` pointed at `project` and its session id replaced.
pub fn fixture_for(name: &str, project: &Path, session: &str) -> String {
    let mut v: serde_json::Value = serde_json::from_str(&fixture(name)).unwrap();
    v["cwd"] = serde_json::json!(project);
    v["session_id"] = serde_json::json!(session);
    v.to_string()
}

/// Every byte of every file under `dir` (database, WAL, logs, spool...).
pub fn all_bytes_under(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_owned()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if let Ok(bytes) = std::fs::read(&p) {
                out.push((p, bytes));
            }
        }
    }
    out
}

pub fn contains_bytes(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}
