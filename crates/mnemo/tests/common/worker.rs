//! Helpers for the worker tests: a real `mnemo worker run` process, raw HTTP
//! on loopback (so that tests can send any Host, Origin or token), a
//! server-sent-events reader, hooks fed real payloads, and polling with
//! deadlines instead of fixed sleeps.
//!
//! Include with `mod common;` and
//! `#[path = "common/worker.rs"] mod worker_support;`.
#![allow(dead_code)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::common::{Env, assert_hook_ok, fixture, run_with_stdin};

/// Polls `f` until it returns Some, or panics with `what` after `timeout`.
pub fn wait_for<T>(what: &str, timeout: Duration, mut f: impl FnMut() -> Option<T>) -> T {
    let deadline = Instant::now() + timeout;
    loop {
        if let Some(v) = f() {
            return v;
        }
        if Instant::now() >= deadline {
            panic!("timed out after {timeout:?} waiting for {what}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Worker settings every test wants: an ephemeral port (tests run in
/// parallel) and an idle exit as a backstop against a leaked worker.
pub fn worker_env(c: &mut Command) {
    c.env("MNEMO_WORKER_PORT", "0")
        .env("MNEMO_WORKER_IDLE_EXIT_SECS", "120");
}

/// `worker.json` of this data directory, parsed.
pub fn worker_json(env: &Env) -> Option<Value> {
    let text = std::fs::read_to_string(env.data().join("worker.json")).ok()?;
    serde_json::from_str(&text).ok()
}

/// A `mnemo worker run` child process; SIGKILLed on drop if still running.
pub struct Worker {
    pub child: Child,
    pub port: u16,
    pub token: String,
    pub pid: u32,
}

impl Worker {
    /// Starts `mnemo worker run` with `tweak` applied and waits until it answers.
    pub fn start(env: &Env, tweak: impl FnOnce(&mut Command)) -> Worker {
        let mut c = env.mnemo();
        c.args(["worker", "run"])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        worker_env(&mut c);
        tweak(&mut c);
        let mut child = c.spawn().expect("mnemo worker run starts");
        let pid = child.id();
        let info = wait_for(
            "worker.json of the new worker",
            Duration::from_secs(20),
            || {
                if let Ok(Some(status)) = child.try_wait() {
                    let mut err = String::new();
                    if let Some(mut e) = child.stderr.take() {
                        let _ = e.read_to_string(&mut err);
                    }
                    panic!("worker exited at start-up ({status}): {err}");
                }
                worker_json(env).filter(|i| i["pid"].as_u64() == Some(u64::from(pid)))
            },
        );
        let port = info["port"].as_u64().unwrap() as u16;
        let token = info["token"].as_str().unwrap().to_owned();
        wait_for("/api/health", Duration::from_secs(10), || {
            (get(port, "/api/health", None).0 == 200).then_some(())
        });
        Worker {
            child,
            port,
            token,
            pid,
        }
    }

    /// GET with the token; (status, JSON body).
    pub fn get(&self, path: &str) -> (u16, Value) {
        let (status, body) = get(self.port, path, Some(&self.token));
        (status, serde_json::from_str(&body).unwrap_or(Value::Null))
    }

    /// POST JSON with the token.
    pub fn post(&self, path: &str, body: &Value) -> (u16, Value) {
        let (status, _, text) = raw(
            self.port,
            &format!(
                "POST {path} HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nAuthorization: Bearer {}\r\n\
                 Content-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                self.port,
                self.token,
                body.to_string().len()
            ),
        );
        (status, serde_json::from_str(&text).unwrap_or(Value::Null))
    }

    pub fn signal(&self, signal: i32) {
        // SAFETY: kill has no memory-safety preconditions.
        unsafe {
            libc::kill(self.pid as i32, signal);
        }
    }

    /// Waits for the process to exit; its status code (None if killed by a signal).
    pub fn wait_exit(&mut self, timeout: Duration) -> Option<i32> {
        let child = &mut self.child;
        wait_for("the worker to exit", timeout, || {
            child.try_wait().ok().flatten()
        })
        .code()
    }

    pub fn stderr(&mut self) -> String {
        let mut err = String::new();
        if let Some(mut e) = self.child.stderr.take() {
            let _ = e.read_to_string(&mut err);
        }
        err
    }
}

impl Drop for Worker {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// Kills whatever worker `worker.json` names when dropped (for workers
/// started detached, by `mnemo worker start` or a hook).
pub struct DetachedGuard(pub PathBuf);

impl Drop for DetachedGuard {
    fn drop(&mut self) {
        if let Ok(text) = std::fs::read_to_string(self.0.join("worker.json"))
            && let Ok(v) = serde_json::from_str::<Value>(&text)
            && let Some(pid) = v["pid"].as_i64()
        {
            // SAFETY: kill has no memory-safety preconditions.
            unsafe {
                libc::kill(pid as i32, libc::SIGKILL);
            }
        }
    }
}

/// True when a process with this pid exists (and is not a zombie).
pub fn alive(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => {
            // The state follows the parenthesized command name.
            let state = stat.rsplit(')').next().unwrap_or("").trim_start();
            !state.starts_with('Z') && !state.starts_with('X')
        }
        Err(_) => false,
    }
}

/// Pids of live processes in process group `pgid`.
pub fn processes_in_group(pgid: u32) -> Vec<u32> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|s| s.parse::<u32>().ok())
        else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
            continue;
        };
        let fields: Vec<&str> = stat
            .rsplit(')')
            .next()
            .unwrap_or("")
            .split_whitespace()
            .collect();
        // After the name: state, ppid, pgrp.
        if fields.get(2).and_then(|g| g.parse::<u32>().ok()) == Some(pgid)
            && !fields[0].starts_with('Z')
        {
            out.push(pid);
        }
    }
    out
}

/// Pids of live processes whose environment holds `needle` (`KEY=value`).
pub fn processes_with_env(needle: &str) -> Vec<u32> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|s| s.parse::<u32>().ok())
        else {
            continue;
        };
        let Ok(environ) = std::fs::read(entry.path().join("environ")) else {
            continue;
        };
        if environ.split(|b| *b == 0).any(|kv| kv == needle.as_bytes()) && alive(pid) {
            out.push(pid);
        }
    }
    out
}

// ---- raw HTTP ----

/// Sends `request` as is; (status, head, body).
pub fn raw(port: u16, request: &str) -> (u16, String, String) {
    let mut s = TcpStream::connect(("127.0.0.1", port)).expect("connect to the worker");
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    s.write_all(request.as_bytes()).unwrap();
    let mut bytes = Vec::new();
    let _ = s.read_to_end(&mut bytes);
    let text = String::from_utf8_lossy(&bytes).into_owned();
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    let status = head
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    let body = if head
        .to_ascii_lowercase()
        .contains("transfer-encoding: chunked")
    {
        dechunk(body)
    } else {
        body.to_owned()
    };
    (status, head.to_owned(), body)
}

fn dechunk(mut body: &str) -> String {
    let mut out = String::new();
    while let Some((size, rest)) = body.split_once("\r\n") {
        let Ok(n) = usize::from_str_radix(size.trim(), 16) else {
            break;
        };
        if n == 0 || rest.len() < n {
            break;
        }
        out.push_str(&rest[..n]);
        body = rest[n..].trim_start_matches("\r\n");
    }
    out
}

/// GET with an optional token; (status, body).
pub fn get(port: u16, path: &str, token: Option<&str>) -> (u16, String) {
    let auth = token
        .map(|t| format!("Authorization: Bearer {t}\r\n"))
        .unwrap_or_default();
    let (status, _, body) = raw(
        port,
        &format!(
            "GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n{auth}Connection: close\r\n\r\n"
        ),
    );
    (status, body)
}

/// A subscription to `/api/stream`.
pub struct Sse {
    reader: BufReader<TcpStream>,
}

impl Sse {
    /// Connects and waits for the `ready` event (the subscription is live).
    pub fn connect(port: u16, token: &str) -> Sse {
        let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
        write!(
            s,
            "GET /api/stream HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAuthorization: Bearer {token}\r\nAccept: text/event-stream\r\n\r\n"
        )
        .unwrap();
        let mut sse = Sse {
            reader: BufReader::new(s),
        };
        let mut status = String::new();
        sse.reader.read_line(&mut status).unwrap();
        assert!(status.contains(" 200 "), "stream status: {status}");
        let (kind, _) = sse
            .next_event(Duration::from_secs(10))
            .expect("ready event");
        assert_eq!(kind, "ready");
        sse
    }

    /// The next event (name, parsed data), skipping keep-alive comments.
    /// Chunk-size lines of the chunked encoding are skipped as well.
    pub fn next_event(&mut self, timeout: Duration) -> Option<(String, Value)> {
        let deadline = Instant::now() + timeout;
        let mut name = None;
        let mut data = String::new();
        while Instant::now() < deadline {
            let mut line = String::new();
            match self.reader.read_line(&mut line) {
                Ok(0) => return None,
                Ok(_) => {}
                Err(_) => return None,
            }
            let line = line.trim_end_matches(['\r', '\n']);
            if let Some(n) = line.strip_prefix("event:") {
                name = Some(n.trim().to_owned());
            } else if let Some(d) = line.strip_prefix("data:") {
                data.push_str(d.trim_start());
            } else if line.is_empty() && name.is_some() {
                let value = serde_json::from_str(&data).unwrap_or(Value::Null);
                return name.map(|n| (n, value));
            }
        }
        None
    }
}

// ---- sessions fed through the real hooks ----

/// A project directory inside the test's temp dir.
pub fn project(env: &Env, name: &str) -> PathBuf {
    let p = env.dir.path().join(name);
    std::fs::create_dir_all(&p).unwrap();
    p.canonicalize().unwrap()
}

/// A fixture payload rewritten for this project, session and turn.
pub fn payload(
    name: &str,
    project: &Path,
    session: &str,
    prompt_id: &str,
    edit: impl FnOnce(&mut Value),
) -> String {
    let mut v: Value = serde_json::from_str(&fixture(name)).unwrap();
    v["cwd"] = json!(project);
    v["session_id"] = json!(session);
    if !prompt_id.is_empty() {
        v["prompt_id"] = json!(prompt_id);
    }
    edit(&mut v);
    v.to_string()
}

/// Runs one hook and checks the hook contract.
pub fn hook(env: &Env, event: &str, body: &str, tweak: impl FnOnce(&mut Command)) {
    let mut c = env.mnemo();
    c.args(["hook", "claude-code", event]);
    worker_env(&mut c);
    tweak(&mut c);
    assert_hook_ok(&run_with_stdin(c, body.as_bytes()));
}

/// One prompt turn through the real hooks: the prompt, a Write of each
/// file in `writes` (each its own tool call), then Stop.
pub fn turn(env: &Env, project: &Path, session: &str, n: usize, writes: &[&str]) {
    let prompt_id = format!("prompt-{session}-{n}");
    hook(
        env,
        "UserPromptSubmit",
        &payload("UserPromptSubmit.json", project, session, &prompt_id, |v| {
            v["prompt"] = json!(format!("turn {n}: write {}", writes.join(", ")));
        }),
        |_| {},
    );
    for (i, file) in writes.iter().enumerate() {
        let path = project.join(file);
        hook(
            env,
            "PostToolUse",
            &payload(
                "PostToolUse.Write.json",
                project,
                session,
                &prompt_id,
                |v| {
                    v["tool_use_id"] = json!(format!("toolu-{session}-{n}-{i}"));
                    v["tool_input"]["file_path"] = json!(path);
                    v["tool_input"]["content"] = json!(format!("// {file}\n"));
                    v["tool_response"]["filePath"] = json!(path);
                    v["tool_response"]["content"] = json!(format!("// {file}\n"));
                },
            ),
            |_| {},
        );
    }
    hook(
        env,
        "Stop",
        &payload("Stop.json", project, session, &prompt_id, |v| {
            v["last_assistant_message"] = json!(format!("Wrote {} files.", writes.len()));
        }),
        |_| {},
    );
}

/// SessionStart through the real hook.
pub fn session_start(env: &Env, project: &Path, session: &str) {
    hook(
        env,
        "SessionStart",
        &payload("SessionStart.json", project, session, "", |_| {}),
        |_| {},
    );
}

/// Events by queue status.
pub fn queue(env: &Env) -> std::collections::BTreeMap<String, i64> {
    let db = env.db();
    let mut stmt = db
        .prepare("SELECT status, count(*) FROM events GROUP BY status")
        .unwrap();
    stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect()
}

/// Waits until every event is done.
pub fn wait_all_done(env: &Env, timeout: Duration) {
    wait_for("every event done", timeout, || {
        let q = queue(env);
        (q.keys().all(|k| k == "done") && !q.is_empty()).then_some(())
    });
}
