//! A private, consistent copy of a claude-mem database that may be live.
//!
//! claude-mem's worker keeps its database open in WAL mode: recent
//! transactions may live only in `claude-mem.db-wal`. Opening the source,
//! even read-only, would write its `-shm` (the WAL index is shared memory
//! every reader maps and may rebuild). So the database and its `-wal` are
//! copied into a private scratch directory and the copy is opened; SQLite
//! rebuilds the index of the copied WAL from the WAL itself, and nothing
//! beside the source is written. The `-shm` is never read or copied.
//!
//! The copy is consistent when the main file did not change while both were
//! copied: a WAL frame appended meanwhile is either whole (and committed) or
//! fails its checksum and is ignored, and a WAL restarted by the writer
//! carries new salts, so its stale frames are ignored too. Only a checkpoint
//! rewrites the main file; then the copy is taken again.
//!
//! Only regular files are copied, within [`MAX_COPY_BYTES`]: a FIFO or a
//! device in place of the database is refused, and in place of its `-wal`
//! is skipped ([`Snapshot::skipped`] says so), never waited on.

use std::fs;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use mnemo_core::files::copy_regular;
use rusqlite::{Connection, OpenFlags};

use super::ClaudeMemError;

/// Largest database or WAL copied.
pub const MAX_COPY_BYTES: u64 = 64 << 30;

/// How often the copy is retried while a checkpoint keeps changing the file.
const ATTEMPTS: usize = 8;

/// An open copy; the scratch directory goes away with it.
pub struct Snapshot {
    pub conn: Connection,
    /// The database that was copied.
    pub source: PathBuf,
    /// What was not copied, and why (a `-wal` that is not a regular file).
    pub skipped: Vec<String>,
    _scratch: tempfile::TempDir,
}

/// Copies `source` (and its `-wal`) into a new directory under `scratch_parent`
/// and opens the copy; checks that it is a claude-mem database.
pub fn take(source: &Path, scratch_parent: &Path) -> Result<Snapshot, ClaudeMemError> {
    if !source.is_file() {
        return Err(ClaudeMemError::NotFound(source.to_owned()));
    }
    let copy_err = |e| ClaudeMemError::Copy {
        path: source.to_owned(),
        source: e,
    };
    let scratch = tempfile::Builder::new()
        .prefix("claude-mem-import-")
        .tempdir_in(scratch_parent)
        .map_err(copy_err)?;
    let copy = scratch.path().join("claude-mem.db");
    let skipped = copy_consistent(source, &copy).map_err(copy_err)?;
    let conn = open_copy(source, &copy)?;
    check_claude_mem(source, &conn)?;
    Ok(Snapshot {
        conn,
        source: source.to_owned(),
        skipped,
        _scratch: scratch,
    })
}

/// Copies the database and its `-wal`; what was skipped.
fn copy_consistent(source: &Path, copy: &Path) -> std::io::Result<Vec<String>> {
    let wal = sidecar(source, "-wal");
    let copy_wal = sidecar(copy, "-wal");
    for _ in 0..ATTEMPTS {
        let mut skipped = Vec::new();
        let before = stamp(source)?;
        copy_regular(source, copy, MAX_COPY_BYTES)?;
        match copy_regular(&wal, &copy_wal, MAX_COPY_BYTES) {
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                let _ = fs::remove_file(&copy_wal);
            }
            Err(e) if e.kind() == std::io::ErrorKind::InvalidInput => {
                let _ = fs::remove_file(&copy_wal);
                skipped.push(format!("{e}: its recent transactions are not read"));
            }
            Err(e) => return Err(e),
        }
        if stamp(source)? == before {
            return Ok(skipped);
        }
    }
    Err(std::io::Error::other(
        "the database kept changing while it was copied (claude-mem is checkpointing); try again",
    ))
}

/// Size and modification time: what a checkpoint changes.
fn stamp(path: &Path) -> std::io::Result<(u64, Option<SystemTime>)> {
    let meta = fs::metadata(path)?;
    Ok((meta.len(), meta.modified().ok()))
}

fn sidecar(db: &Path, suffix: &str) -> PathBuf {
    let mut name = db.as_os_str().to_owned();
    name.push(suffix);
    PathBuf::from(name)
}

fn open_copy(source: &Path, copy: &Path) -> Result<Connection, ClaudeMemError> {
    let not_sqlite = |e: rusqlite::Error| ClaudeMemError::NotSqlite {
        path: source.to_owned(),
        detail: e.to_string(),
    };
    // Read-write on our own copy, so that SQLite may rebuild the WAL index.
    let conn = Connection::open_with_flags(
        copy,
        OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .map_err(not_sqlite)?;
    conn.query_row("SELECT count(*) FROM sqlite_master", [], |r| {
        r.get::<_, i64>(0)
    })
    .map_err(not_sqlite)?;
    Ok(conn)
}

fn check_claude_mem(source: &Path, conn: &Connection) -> Result<(), ClaudeMemError> {
    let found: i64 = conn
        .query_row(
            "SELECT count(*) FROM sqlite_master WHERE type = 'table'
             AND name IN ('sdk_sessions', 'observations')",
            [],
            |r| r.get(0),
        )
        .map_err(|e| ClaudeMemError::NotSqlite {
            path: source.to_owned(),
            detail: e.to_string(),
        })?;
    if found < 2 {
        return Err(ClaudeMemError::NotClaudeMem {
            path: source.to_owned(),
        });
    }
    Ok(())
}
