//! Running a child process with a deadline: its whole process group is
//! killed when time runs out, and its output is captured for the error
//! message. Shared by the installers ([`crate::npm`]) and the host runners.

use std::io::{self, Read};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

/// How a child process ended.
pub(crate) struct Finished {
    pub(crate) status: Option<ExitStatus>,
    pub(crate) stdout: Vec<u8>,
    pub(crate) stderr: Vec<u8>,
    pub(crate) timed_out: bool,
    pub(crate) elapsed: Duration,
}

/// Runs `cmd` in its own process group with stdin closed and stdout/stderr
/// captured; after `timeout` the whole group is killed. Output that
/// grandchildren keep writing after the child exited is waited for only
/// briefly.
pub(crate) fn run_with_timeout(cmd: &mut Command, timeout: Duration) -> io::Result<Finished> {
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

pub(crate) fn describe(status: Option<ExitStatus>) -> String {
    status.map_or_else(|| "no exit status".to_owned(), |s| s.to_string())
}

/// The last `max` bytes of `bytes` as text.
pub(crate) fn tail(bytes: &[u8], max: usize) -> String {
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
    fn timeout_kills_the_process_group() {
        let mut cmd = Command::new("sh");
        cmd.args(["-c", "sleep 30 & sleep 30; echo never"]);
        let done = run_with_timeout(&mut cmd, Duration::from_millis(300)).unwrap();
        assert!(done.timed_out);
        assert!(done.elapsed < Duration::from_secs(5), "{:?}", done.elapsed);
        assert!(done.stdout.is_empty());
    }

    #[test]
    fn tail_keeps_the_end() {
        assert_eq!(tail(b"abcdef", 3), "...def");
        assert_eq!(tail(b"abc", 3), "abc");
    }
}
