//! What git says about the working tree, read from `.git` directly.
//!
//! The SessionStart hook has a few milliseconds, and spawning `git status`
//! costs more than that, so this reads two things by hand: the current
//! branch (`HEAD`), and when the index was last written. A file whose
//! modification time is later than the index's has changed since it was
//! last staged or committed: a cheap, good proxy for "uncommitted work".
//! Files are read only when regular and small
//! ([`mnemo_core::project::read_small`]): a hostile `.git` never hangs us.

use std::path::{Path, PathBuf};
use std::time::SystemTime;

/// The git state of the work tree containing a directory.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GitState {
    /// The checked-out branch (None when detached or outside git).
    pub branch: Option<String>,
    /// When `.git/index` was last written.
    pub index_mtime: Option<SystemTime>,
}

impl GitState {
    /// Reads the state of the work tree that contains `dir` (a linked
    /// worktree has its own HEAD and index).
    pub fn read(dir: &Path) -> GitState {
        let Some(git_dir) = git_dir_of(dir) else {
            return GitState::default();
        };
        let branch = mnemo_core::project::read_small(&git_dir.join("HEAD")).and_then(|head| {
            head.trim()
                .strip_prefix("ref: refs/heads/")
                .map(str::to_owned)
        });
        let index_mtime = std::fs::metadata(git_dir.join("index"))
            .and_then(|m| m.modified())
            .ok();
        GitState {
            branch,
            index_mtime,
        }
    }

    /// True when `path` was modified after the index was last written.
    pub fn changed_since_index(&self, path: &Path) -> bool {
        let Some(index) = self.index_mtime else {
            return false;
        };
        std::fs::metadata(path)
            .and_then(|m| m.modified())
            .is_ok_and(|m| m > index)
    }

    /// The words of the branch name that say what it is about:
    /// `fix/login-timeout` gives `login`, `timeout`.
    pub fn branch_topics(&self) -> Vec<String> {
        const GENERIC: &[&str] = &[
            "main", "master", "develop", "dev", "trunk", "feature", "feat", "fix", "bugfix",
            "hotfix", "chore", "refactor", "release", "wip", "test", "tests", "docs", "the", "and",
            "for", "with", "update", "add",
        ];
        let Some(branch) = &self.branch else {
            return Vec::new();
        };
        let mut topics: Vec<String> = branch
            .split(|c: char| !c.is_alphanumeric())
            .map(str::to_lowercase)
            .filter(|w| w.chars().count() >= 3)
            .filter(|w| !w.chars().all(|c| c.is_ascii_digit()))
            .filter(|w| !GENERIC.contains(&w.as_str()))
            .collect();
        topics.dedup();
        topics
    }
}

/// The git directory for the work tree containing `dir`: `.git` itself, or
/// where a `.git` file (linked worktree, submodule) points.
fn git_dir_of(dir: &Path) -> Option<PathBuf> {
    for d in dir.ancestors() {
        let dot_git = d.join(".git");
        let Ok(meta) = std::fs::metadata(&dot_git) else {
            continue;
        };
        if meta.is_dir() {
            return Some(dot_git);
        }
        let text = mnemo_core::project::read_small(&dot_git)?;
        let target = text.lines().find_map(|l| l.strip_prefix("gitdir:"))?.trim();
        return Some(d.join(target));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_branch_and_index_from_a_plain_git_dir() {
        let tmp = tempfile::tempdir().unwrap();
        let git = tmp.path().join(".git");
        std::fs::create_dir_all(&git).unwrap();
        std::fs::write(git.join("HEAD"), "ref: refs/heads/fix/login-timeout-42\n").unwrap();
        std::fs::write(git.join("index"), b"").unwrap();
        let sub = tmp.path().join("src");
        std::fs::create_dir_all(&sub).unwrap();
        let state = GitState::read(&sub);
        assert_eq!(state.branch.as_deref(), Some("fix/login-timeout-42"));
        assert_eq!(state.branch_topics(), ["login", "timeout"]);
        assert!(state.index_mtime.is_some());
        assert!(!state.changed_since_index(&tmp.path().join("missing.rs")));
    }

    #[test]
    fn follows_a_worktree_pointer_and_tolerates_no_git() {
        let tmp = tempfile::tempdir().unwrap();
        let real = tmp.path().join("main/.git/worktrees/wt");
        std::fs::create_dir_all(&real).unwrap();
        std::fs::write(real.join("HEAD"), "ref: refs/heads/recall\n").unwrap();
        let wt = tmp.path().join("wt");
        std::fs::create_dir_all(&wt).unwrap();
        std::fs::write(wt.join(".git"), format!("gitdir: {}\n", real.display())).unwrap();
        assert_eq!(GitState::read(&wt).branch.as_deref(), Some("recall"));
        let detached = GitState {
            branch: None,
            index_mtime: None,
        };
        assert!(detached.branch_topics().is_empty());
        assert_eq!(GitState::read(Path::new("/")), GitState::default());
    }

    /// A `HEAD` that is `/dev/zero` or a `.git` that is a FIFO gives no
    /// branch, at once (before: gigabytes read, or a wait for a writer).
    #[cfg(unix)]
    #[test]
    fn hostile_git_entries_give_nothing_without_blocking() {
        let tmp = tempfile::tempdir().unwrap();
        let zero = tmp.path().join("zero");
        std::fs::create_dir_all(zero.join(".git")).unwrap();
        std::os::unix::fs::symlink("/dev/zero", zero.join(".git/HEAD")).unwrap();
        assert_eq!(GitState::read(&zero).branch, None);

        let fifo = tmp.path().join("fifo");
        std::fs::create_dir_all(&fifo).unwrap();
        let status = std::process::Command::new("mkfifo")
            .arg(fifo.join(".git"))
            .status()
            .unwrap();
        assert!(status.success());
        assert_eq!(GitState::read(&fifo), GitState::default());
    }
}
