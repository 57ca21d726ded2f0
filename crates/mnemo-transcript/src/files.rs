//! Where transcripts are on disk: Claude Code's projects directory
//! (`$CLAUDE_CONFIG_DIR/projects`, else `~/.claude/projects`) holds one
//! folder per project and one `<session>.jsonl` per session; Codex's
//! sessions directory (`$CODEX_HOME/sessions`, else `~/.codex/sessions`)
//! holds one `YYYY/MM/DD/rollout-<time>-<thread id>.jsonl` per session.
//! Transcripts are read only when they are regular files, within the bounds
//! below ([`mnemo_core::files`]).

use std::path::{Path, PathBuf};

/// Most bytes of one transcript read; a longer file gives its head.
pub const MAX_TRANSCRIPT_BYTES: u64 = 1 << 30;
/// Longest line kept; a longer one is skipped (and counted) unread.
pub const MAX_LINE_BYTES: u64 = 64 << 20;

/// Claude Code's default projects directory, from the environment.
pub fn default_dir() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os("CLAUDE_CONFIG_DIR").filter(|d| !d.is_empty()) {
        return Some(PathBuf::from(dir).join("projects"));
    }
    let home = std::env::var_os("HOME").filter(|d| !d.is_empty())?;
    Some(PathBuf::from(home).join(".claude").join("projects"))
}

/// Codex's default sessions directory, from the environment.
pub fn codex_default_dir() -> Option<PathBuf> {
    let codex = mnemo_core::host::host(mnemo_core::model::Platform::Codex);
    Some(codex.config_dir()?.join("sessions"))
}

/// Whether `path` is named as a Codex rollout (`rollout-*.jsonl`).
pub fn is_rollout(path: &Path) -> bool {
    let name = path.file_name().map(|n| n.to_string_lossy());
    name.is_some_and(|n| n.starts_with("rollout-") && n.ends_with(".jsonl"))
}

/// Every Codex rollout under `dir` (itself a rollout, a day's folder, or
/// the sessions directory with its `YYYY/MM/DD` folders), sorted. Symlinked
/// folders are not followed.
pub fn rollout_files(dir: &Path) -> std::io::Result<Vec<PathBuf>> {
    if dir.is_file() {
        return Ok(if is_rollout(dir) {
            vec![dir.to_path_buf()]
        } else {
            Vec::new()
        });
    }
    let mut found = Vec::new();
    walk_rollouts(dir, 0, &mut found)?;
    found.sort();
    Ok(found)
}

/// Folders below the sessions directory: year, month, day.
const ROLLOUT_DEPTH: usize = 3;

fn walk_rollouts(dir: &Path, depth: usize, found: &mut Vec<PathBuf>) -> std::io::Result<()> {
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        let path = entry.path();
        if entry.file_type()?.is_dir() {
            if depth < ROLLOUT_DEPTH {
                walk_rollouts(&path, depth + 1, found)?;
            }
        } else if is_rollout(&path) {
            found.push(path);
        }
    }
    Ok(())
}

/// Every Claude Code session transcript under `dir` (itself a file, a
/// project folder, or the projects directory), sorted; Codex rollouts are
/// left to [`rollout_files`]; subagents' files are left to
/// [`crate::read_session`], which reads them with their session.
pub fn session_files(dir: &Path) -> std::io::Result<Vec<PathBuf>> {
    if dir.is_file() {
        return Ok(if is_rollout(dir) {
            Vec::new()
        } else {
            vec![dir.to_path_buf()]
        });
    }
    let mut found = Vec::new();
    walk(dir, 0, &mut found)?;
    found.sort();
    Ok(found)
}

fn walk(dir: &Path, depth: usize, found: &mut Vec<PathBuf>) -> std::io::Result<()> {
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        if path.is_dir() {
            // A session's own folder holds its subagents, read with it.
            let is_session_folder = path.with_extension("jsonl").is_file();
            if depth < 1 && !is_session_folder {
                walk(&path, depth + 1, found)?;
            }
        } else if path.extension().is_some_and(|x| x == "jsonl") && !is_rollout(&path) {
            found.push(path);
        }
    }
    Ok(())
}
