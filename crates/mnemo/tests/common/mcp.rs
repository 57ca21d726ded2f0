//! A client for `mnemo mcp` as a real process: JSON-RPC lines on its stdin,
//! a reader thread on its stdout, the handshake done by [`McpClient::start`].
//!
//! Include with `mod common;` and `#[path = "common/mcp.rs"] mod mcp_client;`.
#![allow(dead_code)]

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, Stdio};
use std::sync::mpsc::{Receiver, channel};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::common::Env;

/// How long an answer may take.
const ANSWER_WITHIN: Duration = Duration::from_secs(20);

/// A running `mnemo mcp` after the `initialize` handshake.
pub struct McpClient {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
    /// The id of the last request sent.
    pub next_id: i64,
}

impl McpClient {
    /// Starts the server for `project` (its working directory and
    /// `CLAUDE_PROJECT_DIR`) with `extra_env`, and checks the handshake.
    pub fn start(env: &Env, project: &Path, extra_env: &[(&str, &str)]) -> McpClient {
        let mut c = env.mnemo();
        c.arg("mcp")
            .current_dir(project)
            .env("CLAUDE_PROJECT_DIR", project)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null());
        for (k, v) in extra_env {
            c.env(k, v);
        }
        let mut child = c.spawn().expect("mnemo mcp starts");
        let stdin = child.stdin.take().unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, lines) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let mut client = McpClient {
            child,
            stdin: Some(stdin),
            lines,
            next_id: 0,
        };
        let init = client.request(
            "initialize",
            json!({"protocolVersion": "2025-11-25", "capabilities": {},
                   "clientInfo": {"name": "mnemo-test", "version": "1"}}),
        );
        assert_eq!(init["result"]["serverInfo"]["name"], "mnemo", "{init}");
        assert!(
            init["result"]["capabilities"]["tools"].is_object(),
            "{init}"
        );
        let instructions = init["result"]["instructions"].as_str().unwrap_or_default();
        assert!(
            instructions.contains("search") && instructions.contains("get_observations"),
            "{init}"
        );
        client.notify("notifications/initialized");
        client
    }

    /// Writes one line as it is (valid JSON-RPC or not).
    pub fn send_line(&mut self, line: &str) {
        let stdin = self.stdin.as_mut().expect("stdin is open");
        stdin.write_all(line.as_bytes()).unwrap();
        stdin.write_all(b"\n").unwrap();
        stdin.flush().unwrap();
    }

    pub fn send(&mut self, message: &Value) {
        self.send_line(&message.to_string());
    }

    pub fn notify(&mut self, method: &str) {
        self.send(&json!({"jsonrpc": "2.0", "method": method}));
    }

    /// The answer to request `id`; stdout must carry only JSON-RPC.
    pub fn answer(&mut self, id: i64) -> Value {
        loop {
            let line = self
                .lines
                .recv_timeout(ANSWER_WITHIN)
                .unwrap_or_else(|_| panic!("no answer to request {id} within 20 s"));
            let v: Value = serde_json::from_str(&line)
                .unwrap_or_else(|e| panic!("stdout carries only JSON-RPC ({e}): {line}"));
            if v["id"] == id {
                return v;
            }
        }
    }

    pub fn request(&mut self, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        self.answer(id)
    }

    /// Calls a tool; its text and whether it is an error.
    pub fn call(&mut self, tool: &str, arguments: Value) -> (String, bool) {
        let v = self.request("tools/call", json!({"name": tool, "arguments": arguments}));
        let result = &v["result"];
        assert!(result.is_object(), "{tool}: {v}");
        let text = result["content"][0]["text"].as_str().unwrap().to_owned();
        (text, result["isError"].as_bool().unwrap_or(false))
    }

    /// Calls a tool; its structured result and whether it is an error.
    pub fn call_structured(&mut self, tool: &str, arguments: Value) -> (Value, bool) {
        let v = self.request("tools/call", json!({"name": tool, "arguments": arguments}));
        let result = &v["result"];
        (
            result["structuredContent"].clone(),
            result["isError"].as_bool().unwrap_or(false),
        )
    }

    /// Closes stdin and checks that the server exits cleanly.
    pub fn close(mut self) {
        drop(self.stdin.take());
        let started = Instant::now();
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                assert!(status.success(), "mnemo mcp exits cleanly: {status}");
                return;
            }
            assert!(
                started.elapsed() < Duration::from_secs(10),
                "mnemo mcp exits when stdin closes"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for McpClient {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
