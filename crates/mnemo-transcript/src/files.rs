//! Where transcripts are on disk: Claude Code's projects directory
//! (`$CLAUDE_CONFIG_DIR/projects`, else `~/.claude/projects`) holds one
//! folder per project and one `<session>.jsonl` per session. Transcripts are
//! read only when they are regular files, within the bounds below
//! ([`mnemo_core::files`]).

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

/// Every session transcript under `dir` (itself a file, a project folder,
/// or the projects directory), sorted; subagents' files are left to
/// [`crate::read_session`], which reads them with their session.
pub fn session_files(dir: &Path) -> std::io::Result<Vec<PathBuf>> {
    if dir.is_file() {
        return Ok(vec![dir.to_path_buf()]);
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
        } else if path.extension().is_some_and(|x| x == "jsonl") {
            found.push(path);
        }
    }
    Ok(())
}
