//! What `--fix` repairs without losing data: the spool ingested, a corrupt
//! database's readable rows recovered into a fresh one (the damaged file
//! moved aside, never deleted), unusable side files replaced, permissions
//! restricted.

use std::path::Path;

use mnemo_core::{Config, DataDir};
use mnemo_store::{Store, spool};

use super::permissions::restrict_permissions;
use super::store::{broken_fts, is_corrupt, unusable_side_files, with_suffix};
use super::{Check, Status, busy, hook_log};

pub(super) fn apply_fixes(data: &DataDir, config: &Config, checks: &mut Vec<Check>) {
    hook_log::mark_fixed(data);
    restrict_permissions(data, checks);
    let path = data.db_path();
    fix_side_files(data, &path, checks);
    if path.exists() && is_corrupt(&path, config) {
        checks.push(recover_database(&path, config));
    }
    if path.exists()
        && let Ok(broken) = broken_fts(&path, config)
        && !broken.is_empty()
    {
        match Store::open(&path, busy(config)).and_then(|s| s.rebuild_fts()) {
            Ok(()) => checks.push(Check::ok(
                "fix",
                format!("rebuilt the search indexes ({})", broken.join(", ")),
            )),
            Err(e) => checks.push(Check::problem(
                "fix",
                Status::Fail,
                format!("could not rebuild the search indexes: {e}"),
                "fix the database problem first",
            )),
        }
    }
    if spool::has_pending(data) {
        match Store::open(&path, busy(config)).and_then(|mut s| s.ingest_spool(data)) {
            Ok(r) => checks.push(Check::ok(
                "fix",
                format!(
                    "ingested the spool: {} stored, {} already present, {} set aside",
                    r.applied, r.duplicates, r.rejected
                ),
            )),
            Err(e) => checks.push(Check::problem(
                "fix",
                Status::Fail,
                format!("could not ingest the spool: {e}"),
                "fix the database problem first",
            )),
        }
    }
}

/// Copies what can be read from the damaged database at `path` into a fresh
/// one, moves the damaged file aside (kept), and puts the fresh one in its
/// place. Hooks spool while the copy runs; the spool is ingested afterwards.
fn recover_database(path: &Path, config: &Config) -> Check {
    let stamp = mnemo_core::time::now_ms();
    let fresh = with_suffix(path, &format!(".recovering-{stamp}"));
    let recovered = Store::open(&fresh, busy(config))
        .and_then(|mut store| mnemo_store::recover::recover_into(path, &mut store));
    let aside = with_suffix(path, &format!(".corrupt-{stamp}"));
    if let Err(e) = std::fs::rename(path, &aside) {
        remove_with_side_files(&fresh);
        return Check::problem(
            "fix",
            Status::Fail,
            format!("could not move {} aside: {e}", path.display()),
            "move it by hand",
        );
    }
    for suffix in ["-wal", "-shm"] {
        let _ = std::fs::rename(with_suffix(path, suffix), with_suffix(&aside, suffix));
    }
    let moved = format!("moved the corrupt database to {} (kept)", aside.display());
    let tables = match recovered {
        Ok(tables) => tables,
        Err(e) => {
            remove_with_side_files(&fresh);
            return Check::problem(
                "fix",
                Status::Warn,
                format!("{moved}; nothing could be read from it ({e}): starting empty"),
                "nothing more to do; the old file is kept for a specialist tool",
            );
        }
    };
    // A link, not a rename: a database a hook created meanwhile is not replaced.
    if let Err(e) = std::fs::hard_link(&fresh, path) {
        return Check::problem(
            "fix",
            Status::Fail,
            format!(
                "{moved}; the recovered rows are in {}, but it could not be put in place: {e}",
                fresh.display()
            ),
            format!("move {} to {} by hand", fresh.display(), path.display()),
        );
    }
    let _ = std::fs::remove_file(&fresh);
    recovery_check(&moved, &tables)
}

/// What the recovery gave back, table by table (tables left empty and
/// complete are not named).
fn recovery_check(moved: &str, tables: &[mnemo_store::recover::TableRecovery]) -> Check {
    let named: Vec<String> = tables
        .iter()
        .filter(|t| t.recovered > 0 || !t.complete())
        .map(|t| t.describe())
        .collect();
    let detail = format!(
        "{moved}; recovered into a fresh database: {}",
        if named.is_empty() {
            "no rows".to_owned()
        } else {
            named.join(", ")
        }
    );
    if tables.iter().all(|t| t.complete()) {
        Check::ok("fix", format!("{detail}; nothing lost"))
    } else {
        Check::problem(
            "fix",
            Status::Warn,
            detail,
            "nothing more to do: what was unreadable is gone; the old file is kept",
        )
    }
}

fn remove_with_side_files(path: &Path) {
    for suffix in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(with_suffix(path, suffix));
    }
}

/// Makes an unusable `-shm` usable: writable again when it is ours, else
/// moved aside (SQLite rebuilds it from the WAL). A `-wal` holds commits,
/// so it is only ever made writable, never moved. Not while the worker
/// runs: it may have the old `-shm` mapped.
fn fix_side_files(data: &DataDir, path: &Path, checks: &mut Vec<Check>) {
    let unusable = unusable_side_files(path);
    if unusable.is_empty() {
        return;
    }
    if mnemo_worker::lock::is_held(&data.worker_lock_path()).unwrap_or(false) {
        checks.push(Check::problem(
            "fix",
            Status::Fail,
            format!(
                "{} cannot be repaired while the worker runs",
                unusable[0].0.display()
            ),
            "`mnemo worker stop`, then `mnemo doctor --fix`",
        ));
        return;
    }
    for (side, why) in unusable {
        let _ = mnemo_core::paths::restrict_file(&side);
        if unusable_side_files(path).iter().all(|(p, _)| *p != side) {
            checks.push(Check::ok(
                "fix",
                format!("made {} writable again", side.display()),
            ));
            continue;
        }
        let is_shm = side.as_os_str().to_string_lossy().ends_with("-shm");
        let aside = with_suffix(&side, &format!(".unusable-{}", mnemo_core::time::now_ms()));
        match is_shm.then(|| std::fs::rename(&side, &aside)) {
            Some(Ok(())) => checks.push(Check::ok(
                "fix",
                format!(
                    "moved {} ({why}) to {}; SQLite makes a new one",
                    side.display(),
                    aside.display()
                ),
            )),
            Some(Err(e)) => checks.push(Check::problem(
                "fix",
                Status::Fail,
                format!("could not move {} aside: {e}", side.display()),
                "move or delete it by hand (as its owner or root)",
            )),
            None => checks.push(Check::problem(
                "fix",
                Status::Fail,
                format!("{} {why}", side.display()),
                "make it writable by this user (as its owner or root); it holds recent writes",
            )),
        }
    }
}
