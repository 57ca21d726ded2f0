//! Child processes that a killed worker left behind.
//!
//! Compression may run a provider's CLI (`claude -p`) as a child process.
//! While the worker lives, the compressor kills the child's process group
//! when a call ends, times out or is dropped (graceful shutdown drops it).
//! A worker killed with SIGKILL runs no code at all, so its children live on.
//! To find them later, every worker puts an instance id in its own
//! environment before it starts anything (children inherit it, and their
//! children too) and in `worker.json`. A worker that finds a `worker.json`
//! left behind (its predecessor did not exit cleanly) ends every process
//! whose environment carries the predecessor's id. Linux only (/proc); on
//! Windows the worker's Job Object (see `job`) ends them with the worker.

/// The environment variable that marks a worker's descendants.
pub const INSTANCE_ENV: &str = "MNEMO_WORKER_INSTANCE";

/// A fresh instance id: pid and start time.
pub fn new_instance(pid: u32, started_at_ms: i64) -> String {
    format!("{pid}-{started_at_ms}")
}

/// Marks the processes this worker will start. Call before any thread
/// exists (the environment is process-global and not thread-safe to change).
pub fn mark_descendants(instance: &str) {
    // SAFETY: called from `service::run` before the runtime (or any other
    // thread of ours) starts.
    unsafe { std::env::set_var(INSTANCE_ENV, instance) };
}

/// Kills (SIGKILL) every process whose environment names `instance`; how
/// many. Processes of other users cannot be read and are skipped.
#[cfg(target_os = "linux")]
pub fn end_descendants_of(instance: &str) -> usize {
    if instance.is_empty() {
        return 0;
    }
    let needle = format!("{INSTANCE_ENV}={instance}");
    let me = std::process::id();
    let mut ended = 0;
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return 0;
    };
    for entry in entries.flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|s| s.parse::<u32>().ok())
        else {
            continue;
        };
        if pid == me {
            continue;
        }
        let Ok(environ) = std::fs::read(entry.path().join("environ")) else {
            continue;
        };
        if environ
            .split(|b| *b == 0)
            .any(|var| var == needle.as_bytes())
        {
            // SAFETY: kill has no memory-safety preconditions.
            if unsafe { libc::kill(pid as libc::pid_t, libc::SIGKILL) } == 0 {
                ended += 1;
            }
        }
    }
    ended
}

#[cfg(not(target_os = "linux"))]
pub fn end_descendants_of(_instance: &str) -> usize {
    0
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    #[test]
    fn ends_exactly_the_marked_processes() {
        let instance = new_instance(std::process::id(), 42);
        let spawn = |tag: &str| {
            std::process::Command::new("sleep")
                .arg("30")
                .env(INSTANCE_ENV, tag)
                .spawn()
                .unwrap()
        };
        let mut marked = spawn(&instance);
        let mut other = spawn("someone-else");
        // The exec may not have happened yet: wait until /proc shows the env.
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
        while end_descendants_of(&instance) == 0 {
            assert!(
                std::time::Instant::now() < deadline,
                "marked child not found"
            );
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        assert!(
            marked.wait().unwrap().code().is_none(),
            "killed by a signal"
        );
        assert!(other.try_wait().unwrap().is_none(), "the other one lives");
        other.kill().unwrap();
        other.wait().unwrap();
    }
}
