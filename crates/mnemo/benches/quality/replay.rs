//! Replays transcripts through the real hooks and the real worker: each
//! step becomes the payload Claude Code would have sent, fed on stdin to a
//! `mnemo hook claude-code` process; then `mnemo worker run` (offline
//! provider, port 0) drains the queue and is stopped.
//!
//! Everything lives in one temp directory: the data dir, a HOME, the project
//! (one for all transcripts, as they come from one repository) and copies of
//! the transcripts. Each transcript's own working directory is rewritten to
//! the project's path, in the copy and in the payloads alike, so that paths
//! inside the project stay inside it.

use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::transcript::{Session, Step, ToolCall};

pub struct Replay {
    pub dir: tempfile::TempDir,
    pub bin: PathBuf,
    pub sessions: Vec<Session>,
    /// Hooks run, and hooks that did not exit 0 with at most one JSON object.
    pub hooks: usize,
    pub bad_hooks: Vec<String>,
    pub drain_time: Duration,
}

impl Replay {
    /// A fresh replay of `bin` in a temporary directory, with its project,
    /// home, data and transcripts directories made.
    pub fn new(bin: &Path) -> Replay {
        let replay = Replay {
            dir: tempfile::tempdir().expect("temp dir"),
            bin: bin.to_owned(),
            sessions: Vec::new(),
            hooks: 0,
            bad_hooks: Vec::new(),
            drain_time: Duration::ZERO,
        };
        for dir in [
            replay.project(),
            replay.data(),
            replay.dir.path().join("home"),
            replay.dir.path().join("transcripts"),
        ] {
            std::fs::create_dir_all(dir).expect("replay dirs");
        }
        replay
    }

    pub fn project(&self) -> PathBuf {
        self.dir.path().join("project")
    }
    pub fn data(&self) -> PathBuf {
        self.dir.path().join("data")
    }
    pub fn db_path(&self) -> PathBuf {
        self.data().join("mnemo.db")
    }

    /// The database, read-only.
    pub fn db(&self) -> rusqlite::Connection {
        rusqlite::Connection::open_with_flags(
            self.db_path(),
            rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY,
        )
        .expect("open the replayed database read-only")
    }

    /// `mnemo` with this replay's environment only (no inherited MNEMO_* or
    /// CLAUDE* variables), run in the project.
    pub fn mnemo(&self) -> Command {
        let mut c = Command::new(&self.bin);
        for (k, _) in std::env::vars_os() {
            let k = k.to_string_lossy().into_owned();
            if k.starts_with("MNEMO_") || k.starts_with("CLAUDE") {
                c.env_remove(k);
            }
        }
        c.env("MNEMO_DATA_DIR", self.data())
            .env("HOME", self.dir.path().join("home"))
            .env("MNEMO_NO_WORKER", "1")
            .env("MNEMO_PROVIDER", "offline")
            .current_dir(self.project());
        c
    }
}

/// When the worker runs: after the replay (deterministic: every turn is
/// complete when it is compressed) or during it, as in real use (the worker
/// may compress a turn in pieces; results vary with timing).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Worker {
    After,
    Live,
}

/// Reads every transcript, oldest session first, replays them all, drains
/// the queue. Panics on a setup failure (a harness that cannot run measures
/// nothing).
pub fn run(bin: &Path, transcripts: &[PathBuf], worker: Worker) -> Replay {
    let mut replay = Replay::new(bin);
    let project = replay.project().display().to_string();
    let mut loaded = Vec::new();
    for path in transcripts {
        let raw = std::fs::read_to_string(path).expect("read transcript");
        let Some(first) = Session::parse(&raw) else {
            eprintln!(
                "quality: {} has no session or prompt, skipped",
                path.display()
            );
            continue;
        };
        let text = raw.replace(&first.cwd, &project);
        let subagents: HashMap<String, String> = subagents_of(path)
            .into_iter()
            .map(|(id, t)| (id, t.replace(&first.cwd, &project)))
            .collect();
        let session = Session::parse_with(&text, &subagents).expect("rewritten transcript parses");
        let copy = replay
            .dir
            .path()
            .join("transcripts")
            .join(format!("{}.jsonl", session.id));
        std::fs::write(&copy, &text).expect("write transcript copy");
        loaded.push((session, copy));
    }
    loaded.sort_by(|a, b| a.0.first_timestamp.cmp(&b.0.first_timestamp));
    let live = (worker == Worker::Live).then(|| start_worker(&replay));
    for (session, copy) in &loaded {
        replay_session(&mut replay, session, copy);
    }
    replay.sessions = loaded.into_iter().map(|(s, _)| s).collect();
    let started = Instant::now();
    let child = live.unwrap_or_else(|| start_worker(&replay));
    drain_and_stop(&replay, child);
    replay.drain_time = started.elapsed();
    replay
}

/// A transcript's subagent transcripts (`<stem>/subagents/agent-<id>.jsonl`),
/// by agent id.
fn subagents_of(transcript: &Path) -> HashMap<String, String> {
    let dir = transcript.with_extension("").join("subagents");
    std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            let id = name
                .strip_prefix("agent-")?
                .strip_suffix(".jsonl")?
                .to_owned();
            Some((id, std::fs::read_to_string(e.path()).ok()?))
        })
        .collect()
}

fn replay_session(replay: &mut Replay, s: &Session, transcript: &Path) {
    let base = json!({
        "session_id": s.id,
        "transcript_path": transcript,
        "cwd": replay.project(),
    });
    for step in &s.steps {
        let mut p = base.clone();
        merge(&mut p, event_fields(s, step));
        run_hook(replay, &p);
    }
}

/// The fields of one hook payload beyond the common ones, as Claude Code
/// sends them (the host's documented payloads: `tool_response` on success,
/// `error` on failure, `agent_id` inside a subagent).
fn event_fields(s: &Session, step: &Step) -> Value {
    match step {
        Step::Start { source, turn } => {
            let mut f = json!({"hook_event_name": "SessionStart", "source": source});
            if let Some(turn) = turn {
                f["prompt_id"] = s.prompt_id(*turn).into();
            }
            f
        }
        Step::Prompt { turn } => json!({
            "hook_event_name": "UserPromptSubmit",
            "prompt": s.turns[*turn].prompt,
            "prompt_id": s.prompt_id(*turn),
            "permission_mode": "default",
        }),
        Step::Tool { call } => tool_fields(s, &s.calls[*call]),
        Step::Stop { turn } => json!({
            "hook_event_name": "Stop",
            "stop_hook_active": false,
            "last_assistant_message": s.turns[*turn].final_text,
            "prompt_id": s.prompt_id(*turn),
        }),
        Step::End => json!({"hook_event_name": "SessionEnd", "reason": "other"}),
    }
}

fn tool_fields(s: &Session, c: &ToolCall) -> Value {
    let mut f = json!({
        "tool_name": c.name,
        "tool_input": c.input,
        "tool_use_id": c.id,
        "prompt_id": s.prompt_id(c.turn),
        "permission_mode": "default",
    });
    match &c.error {
        Some(e) => {
            f["hook_event_name"] = "PostToolUseFailure".into();
            f["error"] = e.clone().into();
        }
        None => {
            f["hook_event_name"] = "PostToolUse".into();
            f["tool_response"] = c.response.clone();
        }
    }
    if let Some((id, kind)) = &c.agent {
        f["agent_id"] = id.clone().into();
        f["agent_type"] = kind.clone().into();
    }
    f
}

fn merge(into: &mut Value, from: Value) {
    if let (Some(a), Value::Object(b)) = (into.as_object_mut(), from) {
        a.extend(b);
    }
}

fn run_hook(replay: &mut Replay, payload: &Value) {
    run_host_hook(replay, "claude-code", payload);
}

/// Runs `mnemo hook <host>` on `payload`, counting it and noting a hook that
/// did not exit 0 with at most one JSON object.
pub fn run_host_hook(replay: &mut Replay, host: &str, payload: &Value) {
    let mut c = replay.mnemo();
    c.args(["hook", host])
        .env("CLAUDE_PROJECT_DIR", replay.project())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    let mut child = c.spawn().expect("spawn mnemo hook");
    let body = serde_json::to_vec(payload).expect("payload serializes");
    let _ = child.stdin.take().expect("stdin").write_all(&body);
    let out = child.wait_with_output().expect("wait for mnemo hook");
    replay.hooks += 1;
    let stdout = String::from_utf8_lossy(&out.stdout);
    let json_ok = stdout.trim().is_empty() || serde_json::from_str::<Value>(stdout.trim()).is_ok();
    if !out.status.success() || !json_ok {
        replay.bad_hooks.push(format!(
            "{} exited {} with stdout {:?}",
            payload["hook_event_name"], out.status, stdout
        ));
    }
}

/// `mnemo worker run` on this replay's store, any free port.
pub fn start_worker(replay: &Replay) -> Child {
    replay
        .mnemo()
        .args(["worker", "run"])
        .env("MNEMO_PORT", "0")
        .env("MNEMO_WORKER_IDLE_EXIT_SECS", "600")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn mnemo worker run")
}

/// Lets the worker run until no event is pending or leased and the stored
/// memory stops changing, then stops it.
pub fn drain_and_stop(replay: &Replay, mut worker: Child) {
    let deadline = Instant::now() + Duration::from_secs(600);
    let mut last = None;
    loop {
        std::thread::sleep(Duration::from_millis(300));
        if let Ok(Some(status)) = worker.try_wait() {
            panic!("mnemo worker run exited early: {status}");
        }
        let now = progress(replay);
        if now.0 == 0 && last == Some(now) {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the worker did not drain the queue in 10 minutes: {now:?}"
        );
        last = Some(now);
    }
    let _ = replay
        .mnemo()
        .args(["worker", "stop"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status();
    let stop_deadline = Instant::now() + Duration::from_secs(10);
    while worker.try_wait().ok().flatten().is_none() {
        if Instant::now() > stop_deadline {
            let _ = worker.kill();
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let _ = worker.wait();
}

/// (events pending or leased, observations, summaries).
fn progress(replay: &Replay) -> (i64, i64, i64) {
    let Ok(db) = rusqlite::Connection::open_with_flags(
        replay.db_path(),
        rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY,
    ) else {
        return (-1, 0, 0);
    };
    let count = |sql: &str| db.query_row(sql, [], |r| r.get(0)).unwrap_or(-1);
    (
        count("SELECT count(*) FROM events WHERE status IN ('pending', 'leased')"),
        count("SELECT count(*) FROM observations"),
        count("SELECT count(*) FROM summaries"),
    )
}
