//! Starting the worker from a hook, without waiting for it.
//!
//! Runs on SessionStart and UserPromptSubmit (unless `MNEMO_NO_WORKER=1`),
//! so it must cost next to nothing when the worker is up: one `open` and a
//! non-blocking lock attempt on `worker.lock` (the running worker holds an
//! OS lock on it). Getting the lock means nobody runs a worker: it is let go
//! at once and `mnemo worker run` is spawned detached (its own session, so
//! the host's terminal and process group never touch it; stdio to
//! /dev/null; no other inherited descriptors; on Windows detached, without
//! a console window and out of the host's job) with this data directory. No
//! HTTP, no async runtime, no waiting: the hook returns right away and the
//! worker is up a few milliseconds later. Two hooks racing here may spawn
//! two workers; the lock lets one run and the other exit at once.
//!
//! Nothing here may fail the hook: problems become diagnostics in the log.

use std::fs::{OpenOptions, TryLockError};
use std::process::{Child, Command, Stdio};

use mnemo_core::{Config, DataDir};

use crate::persist::{Diagnostic, Level};

/// Starts the worker unless one runs; never waits, never fails the hook.
pub fn ensure_running(data: &DataDir, _config: &Config, diagnostics: &mut Vec<Diagnostic>) {
    match worker_running(data) {
        Ok(true) => {}
        Ok(false) => {
            if let Err(e) = spawn_detached(data) {
                diagnostics.push(Diagnostic {
                    level: Level::Warn,
                    message: format!(
                        "could not start the worker ({e}); events wait in the queue; try `mnemo worker start`"
                    ),
                });
            }
        }
        Err(e) => diagnostics.push(Diagnostic {
            level: Level::Warn,
            message: format!(
                "could not check whether the worker runs ({}: {e})",
                data.worker_lock_path().display()
            ),
        }),
    }
}

/// True when a worker holds the lock of this data directory.
pub fn worker_running(data: &DataDir) -> std::io::Result<bool> {
    let mut options = OpenOptions::new();
    options.read(true).write(true).create(true).truncate(false);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    let file = options.open(data.worker_lock_path())?;
    match file.try_lock() {
        // Free: nobody runs a worker. Dropping the file lets the lock go.
        Ok(()) => Ok(false),
        Err(TryLockError::WouldBlock) => Ok(true),
        Err(TryLockError::Error(e)) => Err(e),
    }
}

/// Spawns `<this binary> worker run` for `data`, detached from the caller:
/// a new session on Unix, a detached process without a console on Windows.
/// The caller may wait for it or drop the handle.
pub fn spawn_detached(data: &DataDir) -> std::io::Result<Child> {
    let exe = std::env::current_exe()?;
    let root = std::path::absolute(data.root())?;
    mnemo_core::paths::create_private_dir(&root)?;
    let mut command = Command::new(exe);
    command
        .args(["worker", "run"])
        .env("MNEMO_DATA_DIR", &root)
        .env_remove("MNEMO_NO_WORKER")
        // Run from the data directory rather than pin whatever directory
        // the host happens to be in.
        .current_dir(&root)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    spawn_apart(&mut command)
}

#[cfg(unix)]
fn spawn_apart(command: &mut Command) -> std::io::Result<Child> {
    use std::os::unix::process::CommandExt;
    // SAFETY: between fork and exec only async-signal-safe calls are made
    // (setsid, close_range), and nothing is allocated.
    unsafe {
        command.pre_exec(|| {
            if libc::setsid() == -1 {
                return Err(std::io::Error::last_os_error());
            }
            // Descriptors the host leaked into the hook (pipes it waits on)
            // must not live on in the worker: mark them close-on-exec.
            // Best effort; kernels before 5.11 do not know the flag.
            #[cfg(target_os = "linux")]
            {
                let _ = libc::syscall(
                    libc::SYS_close_range,
                    3u32,
                    u32::MAX,
                    libc::CLOSE_RANGE_CLOEXEC,
                );
            }
            Ok(())
        });
    }
    command.spawn()
}

/// Windows: no console, no console window, its own process group (Ctrl-C
/// in the host's console does not reach it), and out of the host's Job
/// Object when the job allows it (a host that runs in a kill-on-close job
/// would otherwise take the worker down with it); a job that forbids
/// breaking away refuses with ERROR_ACCESS_DENIED, and the worker starts
/// inside it instead. Standard handles are not inherited (null stdio).
#[cfg(windows)]
fn spawn_apart(command: &mut Command) -> std::io::Result<Child> {
    use std::os::windows::process::CommandExt;
    const DETACHED_PROCESS: u32 = 0x0000_0008;
    const CREATE_NEW_PROCESS_GROUP: u32 = 0x0000_0200;
    const CREATE_BREAKAWAY_FROM_JOB: u32 = 0x0100_0000;
    const CREATE_NO_WINDOW: u32 = 0x0800_0000;
    const ERROR_ACCESS_DENIED: i32 = 5;
    let apart = DETACHED_PROCESS | CREATE_NEW_PROCESS_GROUP | CREATE_NO_WINDOW;
    command.creation_flags(apart | CREATE_BREAKAWAY_FROM_JOB);
    match command.spawn() {
        Err(e) if e.raw_os_error() == Some(ERROR_ACCESS_DENIED) => {
            command.creation_flags(apart);
            command.spawn()
        }
        spawned => spawned,
    }
}

#[cfg(not(any(unix, windows)))]
fn spawn_apart(command: &mut Command) -> std::io::Result<Child> {
    command.spawn()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_held_lock_means_running() {
        let tmp = tempfile::tempdir().unwrap();
        let data = DataDir::at(tmp.path());
        assert!(!worker_running(&data).unwrap());
        let holder = std::fs::File::open(data.worker_lock_path()).unwrap();
        holder.lock().unwrap();
        assert!(worker_running(&data).unwrap());
        // Closing the handle lets the lock go, as a worker's exit does.
        drop(holder);
        assert!(!worker_running(&data).unwrap());
    }
}
