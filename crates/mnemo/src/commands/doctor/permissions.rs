//! The `permissions` check: the data directory and what it holds (memory,
//! config, logs) readable by this user only; `--fix` restricts them.

use std::path::PathBuf;

use mnemo_core::DataDir;

use super::{Check, Status};

/// Every file and folder mnemo keeps is the user's alone: nobody else may
/// own or write any of them, nor read a file (they hold prompts, commands
/// and the worker's token).
pub(super) fn check_permissions(data: &DataDir) -> Check {
    let mut exposed = Vec::new();
    // Another user's file, or one others can write, lets them plant memory
    // (a failure); one others can only read leaks it (a warning).
    let mut status = Status::Warn;
    for path in private_paths(data) {
        if let Some(problem) = mnemo_core::paths::foreign_access(&path) {
            status = Status::Fail;
            exposed.push((path, problem));
        } else if let Some(problem) = (!path.is_dir())
            .then(|| mnemo_core::paths::exposure(&path))
            .flatten()
        {
            exposed.push((path, problem));
        }
    }
    if exposed.is_empty() {
        return Check::ok("perms", "only you can read or write mnemo's files");
    }
    Check::problem(
        "perms",
        status,
        exposed
            .iter()
            .map(|(p, why)| format!("{}: {why}", p.display()))
            .collect::<Vec<_>>()
            .join("; "),
        format!(
            "`mnemo doctor --fix`, or chmod go-rwx {} (and remove anything owned by another user)",
            exposed
                .iter()
                .map(|(p, _)| p.display().to_string())
                .collect::<Vec<_>>()
                .join(" ")
        ),
    )
}

/// Takes group and other access off the user's own files and folders of
/// mnemo (files of another user are only reported, by the perms check).
pub(super) fn restrict_permissions(data: &DataDir, checks: &mut Vec<Check>) {
    let loose: Vec<PathBuf> = private_paths(data)
        .into_iter()
        .filter(|p| mnemo_core::paths::exposure(p).is_some())
        .filter(|p| mnemo_core::paths::restrict_file(p).is_ok())
        .filter(|p| mnemo_core::paths::exposure(p).is_none())
        .collect();
    if !loose.is_empty() {
        checks.push(Check::ok(
            "fix",
            format!(
                "took group and other access off {}",
                loose
                    .iter()
                    .map(|p| p.display().to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        ));
    }
}

/// What mnemo reads or writes: the data directory, its files, the logs,
/// the spool folders (both) and their files.
fn private_paths(data: &DataDir) -> Vec<PathBuf> {
    let mut paths = vec![data.root().to_owned()];
    for name in [
        mnemo_core::paths::DB_FILE,
        "mnemo.db-wal",
        "mnemo.db-shm",
        mnemo_core::paths::WORKER_INFO_FILE,
        mnemo_core::paths::WORKER_LOCK_FILE,
    ] {
        paths.push(data.root().join(name));
    }
    paths.push(data.config_path());
    let dirs = [data.log_dir(), data.spool_dir()];
    for dir in dirs.into_iter().chain(data.fallback_spool_dirs()) {
        if let Ok(entries) = std::fs::read_dir(&dir) {
            paths.extend(entries.flatten().map(|e| e.path()));
        }
        paths.push(dir);
    }
    paths.retain(|p| std::fs::symlink_metadata(p).is_ok());
    paths
}
