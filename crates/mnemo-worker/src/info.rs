//! `worker.json`: how clients find and authenticate to the running worker.
//!
//! The worker writes it once it listens (pid, port, API token, version,
//! start time, data directory), rewrites it when its budget state changes,
//! and removes it on exit. The file is created with mode 0600 and renamed
//! into place, so a reader never sees half of it and no other user of the
//! machine can read the token. Its presence alone proves nothing (a worker
//! killed with SIGKILL leaves it behind): liveness is the lock
//! ([`crate::lock`]); this file only says where to knock.

use std::io::Write;
use std::path::Path;

use mnemo_core::DataDir;
use mnemo_store::ledger::Exhausted;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WorkerInfo {
    pub pid: u32,
    pub port: u16,
    /// The bearer token every API route but `/api/health` requires.
    pub token: String,
    pub version: String,
    /// RFC 3339.
    pub started_at: String,
    pub started_at_ms: i64,
    pub data_dir: String,
    pub log_file: String,
    /// The provider compressing (`offline` when the configured one could
    /// not be set up; see `provider_error`).
    pub provider: String,
    /// Why the configured provider could not be set up.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider_error: Option<String>,
    /// Set while a token budget is spent (read by `mnemo doctor`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub budget_exhausted: Option<ExhaustedInfo>,
    /// Marks this worker's descendant processes (see [`crate::orphans`]).
    #[serde(default)]
    pub instance: String,
}

/// A spent budget, as `worker.json` and the API report it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExhaustedInfo {
    /// `daily` or `session`.
    pub scope: String,
    pub used: u64,
    pub limit: u64,
    /// RFC 3339; absent for a session budget.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub until: Option<String>,
    pub message: String,
}

impl From<&Exhausted> for ExhaustedInfo {
    fn from(e: &Exhausted) -> Self {
        ExhaustedInfo {
            scope: serde_json::to_value(e.scope)
                .ok()
                .and_then(|v| v.as_str().map(str::to_owned))
                .unwrap_or_default(),
            used: e.used,
            limit: e.limit,
            until: e.until_ms.map(mnemo_core::time::format_rfc3339),
            message: e.describe(),
        }
    }
}

impl WorkerInfo {
    /// `http://127.0.0.1:PORT`.
    pub fn base_url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }
}

/// Reads `worker.json`; None when absent or unreadable.
pub fn read(data: &DataDir) -> Option<WorkerInfo> {
    let text = std::fs::read_to_string(data.worker_info_path()).ok()?;
    serde_json::from_str(&text).ok()
}

/// Writes `worker.json` atomically, readable by the owner only.
pub fn write(data: &DataDir, info: &WorkerInfo) -> std::io::Result<()> {
    let path = data.worker_info_path();
    let tmp = path.with_file_name(format!(
        "{}.tmp-{}",
        mnemo_core::paths::WORKER_INFO_FILE,
        std::process::id()
    ));
    let mut text = serde_json::to_string_pretty(info).map_err(std::io::Error::other)?;
    text.push('\n');
    let result = write_private(&tmp, text.as_bytes()).and_then(|()| std::fs::rename(&tmp, &path));
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

fn write_private(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    let mut file = options.open(path)?;
    file.write_all(bytes)?;
    file.sync_all()
}

/// Removes `worker.json` if it still describes the process `pid` (a
/// successor may already have written its own).
pub fn remove_if_ours(data: &DataDir, pid: u32) {
    if read(data).is_some_and(|info| info.pid == pid) {
        let _ = std::fs::remove_file(data.worker_info_path());
    }
}

/// 32 random bytes as 64 hex digits: the API token.
pub fn new_token() -> std::io::Result<String> {
    let mut bytes = [0u8; 32];
    fill_random(&mut bytes)?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

#[cfg(unix)]
fn fill_random(buf: &mut [u8]) -> std::io::Result<()> {
    use std::io::Read;
    std::fs::File::open("/dev/urandom")?.read_exact(buf)
}

#[cfg(not(unix))]
fn fill_random(buf: &mut [u8]) -> std::io::Result<()> {
    getrandom::fill(buf).map_err(|e| std::io::Error::other(e.to_string()))
}

/// Compares two secrets in time that depends only on their lengths.
pub fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_long_and_different() {
        let a = new_token().unwrap();
        let b = new_token().unwrap();
        assert_eq!(a.len(), 64);
        assert!(a.chars().all(|c| c.is_ascii_hexdigit()));
        assert_ne!(a, b);
    }

    #[test]
    fn comparison() {
        assert!(constant_time_eq(b"abc", b"abc"));
        assert!(!constant_time_eq(b"abc", b"abd"));
        assert!(!constant_time_eq(b"abc", b"abcd"));
    }

    #[test]
    fn written_privately_and_removed_only_by_its_owner() {
        let tmp = tempfile::tempdir().unwrap();
        let data = DataDir::at(tmp.path());
        let info = WorkerInfo {
            pid: 42,
            port: 1234,
            token: "t".into(),
            version: "0".into(),
            started_at: String::new(),
            started_at_ms: 0,
            data_dir: String::new(),
            log_file: String::new(),
            provider: "offline".into(),
            provider_error: None,
            budget_exhausted: None,
            instance: "42-0".into(),
        };
        write(&data, &info).unwrap();
        assert_eq!(read(&data), Some(info));
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(data.worker_info_path())
                .unwrap()
                .permissions()
                .mode();
            assert_eq!(mode & 0o777, 0o600);
        }
        remove_if_ours(&data, 7);
        assert!(read(&data).is_some());
        remove_if_ours(&data, 42);
        assert!(read(&data).is_none());
    }
}
