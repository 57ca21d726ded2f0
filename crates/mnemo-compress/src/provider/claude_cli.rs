//! The `claude-cli` provider: the user's own Claude Code (`claude -p`), for
//! people who have a subscription and no API key.
//!
//! The batch goes on stdin (never in argv, where `ps` would show it), our
//! system prompt replaces Claude Code's long default one, no tools and no MCP
//! servers are offered, nothing is saved as a session, and `MNEMO_DISABLED=1`
//! keeps mnemo's own hooks from recording the call. The child leads its own
//! process group, and the whole group is killed when the call times out or
//! its future is dropped (worker shutdown), so nothing it started outlives it.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use super::{Answer, Request};
use crate::LlmCall;
use crate::text::one_line;

/// Most of the child's output we keep (a JSON result is a few KB).
const MAX_OUTPUT: u64 = 4 * 1024 * 1024;

#[derive(Debug, Clone)]
pub(crate) struct ClaudeCli {
    pub path: PathBuf,
    pub model: String,
    pub timeout: Duration,
    pub max_tokens: u64,
}

/// Claude Code's alias for its small model. Without `--model`, Claude Code
/// 2.1.328 picks its largest one, which is the wrong trade for summaries.
pub(crate) const DEFAULT_MODEL: &str = "haiku";

/// Least output token cap handed to Claude Code: its adaptive thinking
/// shares the cap with the answer.
const MIN_OUTPUT_TOKENS: u64 = 4096;

/// Extra settings of a run that do not come from the configuration.
#[derive(Clone, Default)]
pub(crate) struct CliOptions {
    pub env: Vec<(OsString, OsString)>,
    pub dir: Option<PathBuf>,
}

impl std::fmt::Debug for CliOptions {
    // Values may be keys: only the names are shown.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CliOptions")
            .field("env", &self.env.iter().map(|(k, _)| k).collect::<Vec<_>>())
            .field("dir", &self.dir)
            .finish()
    }
}

/// The executable `path` names: itself if it has a slash, else the first
/// match on `PATH`.
pub(crate) fn find_executable(path: &str) -> Option<PathBuf> {
    let p = Path::new(path);
    if path.contains('/') || path.contains('\\') {
        return p.is_file().then(|| p.to_path_buf());
    }
    let dirs = std::env::var_os("PATH")?;
    std::env::split_paths(&dirs)
        .map(|d| d.join(path))
        .find(|c| c.is_file())
}

/// Kills the process group of the child on drop (the child leads it).
struct GroupKiller {
    #[cfg_attr(not(unix), allow(dead_code))]
    pgid: Option<u32>,
}

impl Drop for GroupKiller {
    fn drop(&mut self) {
        #[cfg(unix)]
        if let Some(pgid) = self.pgid
            && let Ok(pgid) = i32::try_from(pgid)
            && pgid > 1
        {
            // SAFETY: kill(2) with a negative pid signals that process group;
            // it touches no memory. ESRCH (group already gone) is fine.
            unsafe {
                libc::kill(-pgid, libc::SIGKILL);
            }
        }
    }
}

impl ClaudeCli {
    fn command(&self, system: &str, options: &CliOptions) -> tokio::process::Command {
        let mut cmd = tokio::process::Command::new(&self.path);
        cmd.args(["-p", "--output-format", "json"])
            // No built-in tools, no MCP servers: the model can only answer.
            .args(["--tools", ""])
            .arg("--strict-mcp-config")
            .arg("--no-session-persistence")
            .args(["--system-prompt", system])
            .args(["--model", &self.model])
            // Summaries need little thought; thinking tokens are paid for.
            .args(["--effort", "low"]);
        cmd.env("MNEMO_DISABLED", "1").env(
            "CLAUDE_CODE_MAX_OUTPUT_TOKENS",
            self.max_tokens.max(MIN_OUTPUT_TOKENS).to_string(),
        );
        for (k, v) in &options.env {
            cmd.env(k, v);
        }
        // A neutral directory: the project's CLAUDE.md and settings would
        // cost tokens and could run the project's hooks.
        cmd.current_dir(options.dir.clone().unwrap_or_else(std::env::temp_dir))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        #[cfg(unix)]
        cmd.process_group(0);
        cmd
    }

    pub async fn call(
        &self,
        req: &Request<'_>,
        options: &CliOptions,
        calls: &mut Vec<LlmCall>,
    ) -> Result<Answer, String> {
        let started = Instant::now();
        let mut call = LlmCall {
            provider: "claude-cli".into(),
            model: self.model.clone(),
            purpose: req.purpose.into(),
            ..Default::default()
        };
        let result = self.run(req, options).await;
        call.duration_ms = started.elapsed().as_millis() as u64;
        let outcome = match result {
            Ok(json) => {
                let u = |k: &str| {
                    json.pointer(&format!("/usage/{k}"))
                        .and_then(Value::as_u64)
                        .unwrap_or(0)
                };
                call.input_tokens = u("input_tokens")
                    + u("cache_creation_input_tokens")
                    + u("cache_read_input_tokens");
                call.output_tokens = u("output_tokens");
                if let Some(model) = json
                    .get("modelUsage")
                    .and_then(Value::as_object)
                    .and_then(|m| m.keys().next())
                {
                    call.model = model.clone();
                }
                let text = json.get("result").and_then(Value::as_str).unwrap_or("");
                if json.get("is_error").and_then(Value::as_bool) == Some(true) {
                    Err(format!("claude reported an error: {}", one_line(text, 200)))
                } else if text.trim().is_empty() {
                    Err("claude answered with an empty result".into())
                } else {
                    Ok(Answer::Text(text.to_owned()))
                }
            }
            Err(e) => Err(e),
        };
        call.ok = outcome.is_ok();
        call.error = outcome.as_ref().err().cloned();
        calls.push(call);
        outcome
    }

    /// Runs `claude -p` and returns its JSON result object.
    async fn run(&self, req: &Request<'_>, options: &CliOptions) -> Result<Value, String> {
        let system = req.task.system(true);
        let mut child = self
            .command(&system, options)
            .spawn()
            .map_err(|e| format!("cannot run {}: {e}", self.path.display()))?;
        // Declared before the work so that it is dropped after it: on
        // timeout, on drop of this future, and after a normal exit (a
        // grandchild left behind dies too).
        let _killer = GroupKiller { pgid: child.id() };

        let work = async {
            let mut stdin = child.stdin.take();
            let mut stdout = child.stdout.take();
            let mut stderr = child.stderr.take();
            let write = async {
                if let Some(mut s) = stdin.take() {
                    // The child may exit without reading: a broken pipe is
                    // reported through its exit status instead.
                    let _ = s.write_all(req.user.as_bytes()).await;
                    let _ = s.shutdown().await;
                }
            };
            let read = |pipe: Option<_>| async move {
                let mut buf = Vec::new();
                if let Some(p) = pipe {
                    let p: tokio::process::ChildStdout = p;
                    let _ = p.take(MAX_OUTPUT).read_to_end(&mut buf).await;
                }
                buf
            };
            let read_err = async {
                let mut buf = Vec::new();
                if let Some(p) = stderr.take() {
                    let _ = p.take(MAX_OUTPUT).read_to_end(&mut buf).await;
                }
                buf
            };
            let ((), out, err) = tokio::join!(write, read(stdout.take()), read_err);
            let status = child.wait().await;
            (status, out, err)
        };
        let (status, out, err) = tokio::time::timeout(self.timeout, work)
            .await
            .map_err(|_| format!("claude timed out after {}s", self.timeout.as_secs()))?;
        let status = status.map_err(|e| format!("waiting for claude failed: {e}"))?;
        let stdout = String::from_utf8_lossy(&out);
        let parsed = serde_json::from_str::<Value>(stdout.trim())
            .ok()
            .or_else(|| {
                // stream-json style output: the last line is the result.
                stdout
                    .lines()
                    .rev()
                    .find(|l| !l.trim().is_empty())
                    .and_then(|l| serde_json::from_str(l).ok())
            });
        match parsed {
            Some(json) if json.is_object() => Ok(json),
            _ => {
                let stderr = String::from_utf8_lossy(&err);
                let why = [stderr.trim(), stdout.trim()]
                    .into_iter()
                    .find(|s| !s.is_empty())
                    .map(|s| one_line(s, 200))
                    .unwrap_or_else(|| "no output".into());
                Err(if status.success() {
                    format!("claude printed no JSON result: {why}")
                } else {
                    format!("claude exited with {status}: {why}")
                })
            }
        }
    }
}
