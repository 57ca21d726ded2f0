//! One worker per data directory: an OS file lock on `worker.lock`.
//!
//! The running worker holds an exclusive lock on the file for its whole
//! life; the OS drops it when the process dies, however it dies, so the lock
//! (unlike a PID file) never lies. Anyone can ask "is a worker running?" by
//! trying to take the lock without waiting: getting it means no.
//! `File::try_lock` is `flock` on Unix and `LockFileEx` on Windows.

use std::fs::{File, OpenOptions, TryLockError};
use std::path::Path;
use std::time::{Duration, Instant};

/// The held lock; released when dropped.
#[derive(Debug)]
pub struct WorkerLock {
    _file: File,
}

fn open(path: &Path) -> std::io::Result<File> {
    let mut options = OpenOptions::new();
    options.read(true).write(true).create(true).truncate(false);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    options.open(path)
}

/// Takes the lock if nobody holds it; `Ok(None)` when somebody does.
pub fn try_acquire(path: &Path) -> std::io::Result<Option<WorkerLock>> {
    let file = open(path)?;
    match file.try_lock() {
        Ok(()) => Ok(Some(WorkerLock { _file: file })),
        Err(TryLockError::WouldBlock) => Ok(None),
        Err(TryLockError::Error(e)) => Err(e),
    }
}

/// Like [`try_acquire`], but keeps trying for `patience`: a client that
/// probes the lock holds it for microseconds, and a starting worker should
/// not mistake that for a running one.
pub fn acquire_within(path: &Path, patience: Duration) -> std::io::Result<Option<WorkerLock>> {
    let deadline = Instant::now() + patience;
    loop {
        if let Some(lock) = try_acquire(path)? {
            return Ok(Some(lock));
        }
        if Instant::now() >= deadline {
            return Ok(None);
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// True when a worker holds the lock of this data directory.
pub fn is_held(path: &Path) -> std::io::Result<bool> {
    if !path.exists() {
        return Ok(false);
    }
    Ok(try_acquire(path)?.is_none())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_holder_at_a_time() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("worker.lock");
        assert!(!is_held(&path).unwrap());
        let lock = try_acquire(&path).unwrap().expect("free");
        assert!(try_acquire(&path).unwrap().is_none());
        assert!(is_held(&path).unwrap());
        assert!(
            acquire_within(&path, Duration::from_millis(50))
                .unwrap()
                .is_none()
        );
        drop(lock);
        assert!(try_acquire(&path).unwrap().is_some());
    }
}
