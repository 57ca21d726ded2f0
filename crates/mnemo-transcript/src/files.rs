//! Where transcripts are on disk: Claude Code's projects directory
//! (`$CLAUDE_CONFIG_DIR/projects`, else `~/.claude/projects`) holds one
//! folder per project and one `<session>.jsonl` per session; Codex's
//! sessions directory (`$CODEX_HOME/sessions`, else `~/.codex/sessions`)
//! holds one `YYYY/MM/DD/rollout-<time>-<thread id>.jsonl` per session;
//! Gemini CLI's temporary folder (`$GEMINI_CLI_HOME/.gemini/tmp`, else
//! `~/.gemini/tmp`) holds one `<project>/chats/session-*.jsonl` (older
//! builds: `.json`) per session.
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
    /// Folders below the sessions directory: year, month, day.
    const ROLLOUT_DEPTH: usize = 3;
    files_named(dir, ROLLOUT_DEPTH, is_rollout)
}

/// Gemini CLI's default folder of chat recordings, from the environment.
pub fn gemini_default_dir() -> Option<PathBuf> {
    let gemini = mnemo_core::host::host(mnemo_core::model::Platform::Gemini);
    Some(gemini.config_dir()?.join("tmp"))
}

/// Whether `path` is named as a Gemini CLI chat recording: `session-*`
/// `.jsonl` (or an older build's `.json`) in a folder named `chats`.
pub fn is_gemini_recording(path: &Path) -> bool {
    let in_chats = path
        .parent()
        .and_then(Path::file_name)
        .is_some_and(|n| n == "chats");
    let name = path.file_name().map(|n| n.to_string_lossy());
    in_chats
        && name.is_some_and(|n| {
            n.starts_with("session-") && (n.ends_with(".jsonl") || n.ends_with(".json"))
        })
}

/// Every Gemini CLI chat recording under `dir` (itself a recording, a
/// `chats` folder, a project's folder, or the temporary folder with its
/// `<project>/chats` folders), sorted. Symlinked folders are not followed.
pub fn gemini_files(dir: &Path) -> std::io::Result<Vec<PathBuf>> {
    /// Folders below the temporary folder: the project's, then `chats`.
    const GEMINI_DEPTH: usize = 2;
    files_named(dir, GEMINI_DEPTH, is_gemini_recording)
}

/// The files under `dir` (or `dir` itself) that `named` accepts, down to
/// `depth` folders below it, sorted.
fn files_named(
    dir: &Path,
    depth: usize,
    named: fn(&Path) -> bool,
) -> std::io::Result<Vec<PathBuf>> {
    if dir.is_file() {
        return Ok(if named(dir) {
            vec![dir.to_path_buf()]
        } else {
            Vec::new()
        });
    }
    let mut found = Vec::new();
    walk_named(dir, depth, named, &mut found)?;
    found.sort();
    Ok(found)
}

fn walk_named(
    dir: &Path,
    depth: usize,
    named: fn(&Path) -> bool,
    found: &mut Vec<PathBuf>,
) -> std::io::Result<()> {
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        let path = entry.path();
        if entry.file_type()?.is_dir() {
            if depth > 0 {
                walk_named(&path, depth - 1, named, found)?;
            }
        } else if named(&path) {
            found.push(path);
        }
    }
    Ok(())
}

/// Whether a `.jsonl` file is another host's: a Codex rollout or a Gemini
/// chat recording.
fn is_other_hosts(path: &Path) -> bool {
    is_rollout(path) || is_gemini_recording(path)
}

/// Every Claude Code session transcript under `dir` (itself a file, a
/// project folder, or the projects directory), sorted; Codex rollouts and
/// Gemini recordings are left to [`rollout_files`] and [`gemini_files`];
/// subagents' files are left to
/// [`crate::read_session`], which reads them with their session.
pub fn session_files(dir: &Path) -> std::io::Result<Vec<PathBuf>> {
    if dir.is_file() {
        return Ok(if is_other_hosts(dir) {
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
        } else if path.extension().is_some_and(|x| x == "jsonl") && !is_other_hosts(&path) {
            found.push(path);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn touch(path: &Path) -> PathBuf {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, "{}\n").unwrap();
        path.to_path_buf()
    }

    #[test]
    fn gemini_recordings_are_found_at_every_level_and_only_as_gemini_ones() {
        let tmp = tempfile::tempdir().unwrap();
        let gemini_tmp = tmp.path().join(".gemini/tmp");
        let chats = gemini_tmp.join("shop/chats");
        let new = touch(&chats.join("session-2026-11-28T10-00-ab12cd34.jsonl"));
        let old = touch(&chats.join("session-2025-01-01T10-00-ef56.json"));
        touch(&gemini_tmp.join("shop/logs.json"));
        touch(&chats.join("notes.jsonl"));
        let claude = touch(&tmp.path().join("claude/-w-shop/0b7e-4c1a.jsonl"));

        assert_eq!(
            gemini_files(&gemini_tmp).unwrap(),
            [old.clone(), new.clone()]
        );
        assert_eq!(gemini_files(&chats).unwrap(), [old, new.clone()]);
        assert_eq!(gemini_files(&new).unwrap(), std::slice::from_ref(&new));
        assert!(gemini_files(&claude).unwrap().is_empty());
        // Claude Code's reader leaves them alone, from any level.
        assert_eq!(session_files(&chats).unwrap(), [chats.join("notes.jsonl")]);
        assert!(session_files(&new).unwrap().is_empty());
        assert_eq!(session_files(&claude).unwrap(), [claude]);
    }
}
