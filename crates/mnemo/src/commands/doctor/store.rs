//! The store's checks: the database (present, opens, schema, full-text
//! index, side files) and the spool of events hooks could not store, and
//! what tells a damaged database from a busy one.

use std::path::{Path, PathBuf};

use mnemo_core::words::{count, count_s};
use mnemo_core::{Config, DataDir};
use mnemo_store::{Failure, Store, spool};

use super::{Check, Status, busy, in_data};

pub(super) fn check_database(data: &DataDir, config: &Config) -> Check {
    let path = data.db_path();
    let shown = in_data(data, &path);
    if !path.exists() {
        return Check::problem(
            "database",
            Status::Warn,
            format!("{shown} does not exist yet"),
            "run `mnemo install`; the first hook creates it too",
        );
    }
    if let Some((side, why)) = unusable_side_files(&path).into_iter().next() {
        return Check::problem(
            "database",
            Status::Fail,
            format!(
                "{} {why}: hooks and the worker cannot share the database",
                in_data(data, &side)
            ),
            "`mnemo doctor --fix` (with the worker stopped) makes it usable again",
        );
    }
    let store = match Store::open_read_only(&path, busy(config)) {
        Ok(s) => s,
        Err(e) => return database_problem(&path, e),
    };
    match store.integrity_problem() {
        Ok(None) => {}
        Ok(Some(problem)) => {
            return Check::problem(
                "database",
                Status::Fail,
                format!("{shown}: integrity check failed: {problem}"),
                corrupt_fix(&path),
            );
        }
        Err(e) => return database_problem(&path, e),
    }
    let version = store.schema_version().unwrap_or(0);
    let counts = match store.counts() {
        Ok(c) => c,
        Err(e) => return database_problem(&path, e),
    };
    let size = file_size(&path) + file_size(&PathBuf::from(format!("{}-wal", path.display())));
    let events: i64 = counts.events.values().sum();
    let failed = counts.events.get("failed").copied().unwrap_or(0);
    let detail = format!(
        "{shown}: schema {version}, {}, {}, {}, {} ({} pending, {failed} failed), {}, {}; {}",
        count_s(counts.projects, "project"),
        count_s(counts.sessions, "session"),
        count_s(counts.prompts, "prompt"),
        count_s(events, "event"),
        counts.events.get("pending").copied().unwrap_or(0),
        count_s(counts.observations, "observation"),
        count(counts.summaries, "summary", "summaries"),
        mnemo_core::words::size(size)
    );
    // The full-text indexes are kept in step by our code, not by triggers; a
    // write from another tool (or an old bug) can leave them behind.
    if let Ok(broken) = broken_fts(&path, config)
        && !broken.is_empty()
    {
        return Check::problem(
            "database",
            Status::Warn,
            format!("{detail}; search index out of step: {}", broken.join(", ")),
            "run `mnemo doctor --fix` to rebuild the search indexes",
        );
    }
    if failed > 0 {
        Check::problem(
            "database",
            Status::Warn,
            detail,
            "some events failed to compress; see the queue check below",
        )
    } else {
        Check::ok("database", detail)
    }
}

fn database_problem(path: &Path, e: mnemo_store::StoreError) -> Check {
    let fix = match e.failure() {
        Failure::Corrupt => corrupt_fix(path),
        Failure::Locked => "another process holds the lock; retry in a moment".to_owned(),
        Failure::ReadOnly => format!("make {} writable by this user", path.display()),
        Failure::TooNew => "install the newer mnemo that wrote this database".to_owned(),
        Failure::Full => "free disk space".to_owned(),
        Failure::Io | Failure::Other => format!("check that {} is readable", path.display()),
    };
    Check::problem("database", Status::Fail, e.to_string(), fix)
}

fn corrupt_fix(path: &Path) -> String {
    format!(
        "`mnemo doctor --fix` copies every readable row into a fresh database, moves {} aside \
         (kept, not deleted) and says what was recovered; events captured meanwhile are in the \
         spool and will be kept",
        path.display()
    )
}

pub(super) fn check_spool(data: &DataDir) -> Check {
    let refused = spool::refused(data);
    if !refused.is_empty() {
        return Check::problem(
            "spool",
            Status::Fail,
            format!(
                "refused (another user owns it or may write to it, so hooks neither read nor write it): {}",
                refused.join("; ")
            ),
            "delete that folder (as its owner or root) unless you created it; mnemo makes a private one",
        );
    }
    let (lines, bytes) = spool::backlog(data);
    let rejected = data.spool_dir().join(spool::REJECTED_FILE);
    let rejected_lines = std::fs::read_to_string(&rejected)
        .map(|t| t.lines().count())
        .unwrap_or(0);
    if lines > 0 {
        return Check::problem(
            "spool",
            Status::Fail,
            format!(
                "{} ({}) {} in {} because the database could not be written",
                count_s(lines, "captured event"),
                mnemo_core::words::size(bytes),
                if lines == 1 { "waits" } else { "wait" },
                spool::spool_files(data)
                    .iter()
                    .filter(|f| f.exists())
                    .map(|f| f.display().to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            "fix the database problem above, then `mnemo doctor --fix` (or the next hook) stores them",
        );
    }
    if rejected_lines > 0 {
        return Check::problem(
            "spool",
            Status::Warn,
            format!(
                "empty, but {} could not be applied and {} kept in {}",
                count_s(rejected_lines, "record"),
                if rejected_lines == 1 { "was" } else { "were" },
                rejected.display()
            ),
            "inspect the file; it is kept for you and never read again by mnemo",
        );
    }
    Check::ok("spool", "empty")
}

/// The database's `-wal` or `-shm` that SQLite cannot open for writing (a
/// folder of that name, a read-only file, another user's file): every
/// connection then fails, or reads without the others' locks.
pub(super) fn unusable_side_files(path: &Path) -> Vec<(PathBuf, String)> {
    ["-wal", "-shm"]
        .into_iter()
        .map(|suffix| with_suffix(path, suffix))
        .filter_map(|side| {
            let meta = std::fs::symlink_metadata(&side).ok()?;
            if meta.is_dir() {
                return Some((side, "is a folder".to_owned()));
            }
            match std::fs::OpenOptions::new()
                .read(true)
                .write(true)
                .open(&side)
            {
                Ok(_) => None,
                Err(e) => Some((side, format!("cannot be written: {e}"))),
            }
        })
        .collect()
}

/// Full-text indexes that do not match their tables. FTS5's integrity check
/// is spelled as an INSERT, so it needs a writable connection (it writes nothing).
pub(super) fn broken_fts(path: &Path, config: &Config) -> mnemo_store::Result<Vec<&'static str>> {
    Store::open(path, busy(config))?.check_fts()
}

/// Damaged beyond what SQLite can read, or failing its own integrity check.
pub(super) fn is_corrupt(path: &Path, config: &Config) -> bool {
    match Store::open_read_only(path, busy(config)).and_then(|s| s.integrity_problem()) {
        Ok(problem) => problem.is_some(),
        Err(e) => e.failure() == Failure::Corrupt,
    }
}

fn file_size(path: &Path) -> u64 {
    std::fs::metadata(path).map(|m| m.len()).unwrap_or(0)
}

pub(super) fn with_suffix(path: &Path, suffix: &str) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(suffix);
    PathBuf::from(name)
}
