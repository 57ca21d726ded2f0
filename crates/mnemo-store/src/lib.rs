//! The SQLite store: one file, WAL, FTS5, forward-only migrations.
//!
//! Layout of this crate, in the order data flows through it:
//! - [`record`]: the sanitized [`Capture`] a hook hands over;
//! - [`capture`]: applying a capture (sessions, prompts, events) in one
//!   short write transaction;
//! - [`spool`]: where a capture goes when the database cannot be written,
//!   and how it comes back, once and in order;
//! - [`schema`]: the migrations;
//! - [`memory`]: observations, summaries and their full-text indexes;
//! - [`idents`]: the other spelling of compound names, indexed beside the
//!   text (`parseConfig` / `parse_config`);
//! - [`curate`]: what the user does afterwards: forget, edit, pin, redact,
//!   and the retention of raw tool payloads;
//! - [`scrub`]: a redaction carried into the spool, the rejected records,
//!   the logs and the kept copies of a damaged database;
//! - [`pieces`]: partial summaries of a long turn's earlier pieces;
//! - [`queue`]: the events table as the worker's durable queue (leases,
//!   batches per turn, retries);
//! - [`ledger`]: the LLM calls the worker made, and the token budgets;
//! - [`shape`]: the one JSON shape of each stored record, for every interface;
//! - [`export`]: JSON Lines out and in;
//! - [`claude_mem`]: reading a claude-mem database into import records;
//! - [`status`]: counts and health for `doctor`;
//! - [`vectors`]: vectors for search by meaning, kept in step with the
//!   records they were made from;
//! - [`recover`]: salvaging the readable rows of a damaged database.
//!
//! A [`Store`] is one connection. Hooks open one per process; the worker
//! keeps one open (which also spares hooks the checkpoint-on-close cost).

pub mod capture;
pub mod claude_mem;
pub mod curate;
pub mod export;
pub mod export_ledger;
pub mod freshness;
pub mod idents;
pub mod knowledge;
pub mod ledger;
pub mod memory;
pub mod notes;
pub mod pieces;
pub mod queue;
pub mod record;
pub mod recover;
pub mod schema;
pub mod scrub;
pub mod shape;
pub mod spool;
pub mod status;
pub mod vectors;

use std::path::{Path, PathBuf};
use std::time::Duration;

use rusqlite::{Connection, ErrorCode, OpenFlags, TransactionBehavior};

pub use record::{Capture, CaptureOp, EventRecord, PromptOrigin, SessionRef};

pub struct Store {
    conn: Connection,
    path: PathBuf,
}

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("{path}: {source}")]
    Sqlite {
        path: PathBuf,
        #[source]
        source: rusqlite::Error,
    },
    #[error(
        "{path} has schema version {found}, newer than this mnemo understands ({latest}); upgrade mnemo"
    )]
    TooNew {
        path: PathBuf,
        found: i64,
        latest: i64,
    },
    #[error("cannot use the data directory {path}: {source}")]
    DataDir {
        path: PathBuf,
        source: std::io::Error,
    },
    /// A file mnemo would read or write belongs to, or is writable by,
    /// another user (the message names the file and the problem).
    #[error("{source}")]
    NotPrivate {
        path: PathBuf,
        source: std::io::Error,
    },
}

/// Why a write did not happen, in terms of what to do about it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Failure {
    /// Another process held the lock longer than the busy timeout.
    Locked,
    /// The file or its directory is read-only.
    ReadOnly,
    /// The disk (or the file size limit) is full.
    Full,
    /// The file is not a database, or is damaged.
    Corrupt,
    /// Any other I/O or open failure.
    Io,
    /// A newer schema than this binary knows.
    TooNew,
    /// A bug or bad data: retrying the same input will fail the same way.
    Other,
}

impl StoreError {
    pub fn failure(&self) -> Failure {
        match self {
            StoreError::TooNew { .. } => Failure::TooNew,
            StoreError::DataDir { source, .. } | StoreError::NotPrivate { source, .. } => {
                io_failure(source)
            }
            StoreError::Sqlite { source, .. } => match source.sqlite_error_code() {
                Some(ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked) => Failure::Locked,
                Some(ErrorCode::ReadOnly) => Failure::ReadOnly,
                Some(ErrorCode::DiskFull | ErrorCode::TooBig) => Failure::Full,
                Some(ErrorCode::DatabaseCorrupt | ErrorCode::NotADatabase) => Failure::Corrupt,
                Some(
                    ErrorCode::CannotOpen
                    | ErrorCode::SystemIoFailure
                    | ErrorCode::PermissionDenied
                    | ErrorCode::FileLockingProtocolFailed
                    | ErrorCode::NoLargeFileSupport,
                ) => Failure::Io,
                _ => Failure::Other,
            },
        }
    }

    /// True when the same write may well succeed later: the capture belongs
    /// in the spool rather than being reported as bad.
    pub fn is_transient(&self) -> bool {
        self.failure() != Failure::Other
    }
}

fn io_failure(e: &std::io::Error) -> Failure {
    match e.kind() {
        std::io::ErrorKind::PermissionDenied | std::io::ErrorKind::ReadOnlyFilesystem => {
            Failure::ReadOnly
        }
        std::io::ErrorKind::StorageFull | std::io::ErrorKind::QuotaExceeded => Failure::Full,
        _ => Failure::Io,
    }
}

pub type Result<T, E = StoreError> = std::result::Result<T, E>;

/// The database, its WAL and shm are the user's alone (0600), even in a
/// data directory that already exists with looser permissions; a file of
/// another user is refused. SQLite gives a new WAL and shm the database's
/// mode, so a missing database is created 0600 before SQLite opens it.
fn restrict_db_files(path: &Path) -> Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        let _ = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(path);
    }
    for suffix in ["", "-wal", "-shm"] {
        let mut file = path.as_os_str().to_owned();
        file.push(suffix);
        let file = PathBuf::from(file);
        mnemo_core::paths::restrict_file(&file)
            .map_err(|source| StoreError::NotPrivate { path: file, source })?;
    }
    Ok(())
}

impl Store {
    /// Opens (creating when missing) and migrates the database at `path`.
    pub fn open(path: &Path, busy_timeout: Duration) -> Result<Store> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            mnemo_core::paths::create_private_dir(dir).map_err(|source| StoreError::DataDir {
                path: dir.to_owned(),
                source,
            })?;
        }
        restrict_db_files(path)?;
        let flags = OpenFlags::SQLITE_OPEN_READ_WRITE
            | OpenFlags::SQLITE_OPEN_CREATE
            | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let conn = Connection::open_with_flags(path, flags).map_err(|e| sql_err(path, e))?;
        let mut store = Store {
            conn,
            path: path.to_owned(),
        };
        store.configure(busy_timeout)?;
        store.migrate()?;
        Ok(store)
    }

    /// Opens an existing database without writing to it (doctor, export).
    pub fn open_read_only(path: &Path, busy_timeout: Duration) -> Result<Store> {
        let flags = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let conn = Connection::open_with_flags(path, flags).map_err(|e| sql_err(path, e))?;
        let store = Store {
            conn,
            path: path.to_owned(),
        };
        store
            .conn
            .busy_timeout(busy_timeout)
            .map_err(|e| store.err(e))?;
        let version = store.schema_version()?;
        if version > schema::LATEST {
            return Err(StoreError::TooNew {
                path: path.to_owned(),
                found: version,
                latest: schema::LATEST,
            });
        }
        Ok(store)
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The underlying connection, for the crates that own their queries
    /// (worker, recall).
    pub fn conn(&self) -> &Connection {
        &self.conn
    }

    pub fn conn_mut(&mut self) -> &mut Connection {
        &mut self.conn
    }

    /// How long a write waits for another process's lock from now on (a
    /// hook shrinks it to what is left of its deadline).
    pub fn set_busy_timeout(&self, busy_timeout: Duration) -> Result<()> {
        self.conn
            .busy_timeout(busy_timeout)
            .map_err(|e| self.err(e))
    }

    fn configure(&self, busy_timeout: Duration) -> Result<()> {
        self.conn
            .busy_timeout(busy_timeout)
            .map_err(|e| self.err(e))?;
        // WAL makes commits durable against a crash of this process without
        // an fsync per commit when synchronous=NORMAL. secure_delete=FAST
        // zeroes the old bytes of an updated or deleted row in the pages
        // being written anyway (no extra I/O), so that a forgotten string
        // does not linger in free space (see crate::curate).
        self.conn
            .execute_batch(
                "PRAGMA synchronous = NORMAL; PRAGMA foreign_keys = ON; PRAGMA secure_delete = FAST;",
            )
            .map_err(|e| self.err(e))
    }

    pub fn schema_version(&self) -> Result<i64> {
        self.conn
            .pragma_query_value(None, "user_version", |r| r.get(0))
            .map_err(|e| self.err(e))
    }

    /// Brings the schema up to date. Costs one pragma read when it already is.
    fn migrate(&mut self) -> Result<()> {
        let version = self.schema_version()?;
        if version == schema::LATEST {
            return Ok(());
        }
        if version > schema::LATEST {
            return Err(StoreError::TooNew {
                path: self.path.clone(),
                found: version,
                latest: schema::LATEST,
            });
        }
        // journal_mode cannot change inside a transaction; it is persistent,
        // so this happens once per database file.
        self.conn
            .pragma_update_and_check(None, "journal_mode", "WAL", |r| r.get::<_, String>(0))
            .map_err(|e| self.err(e))?;
        let path = self.path.clone();
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(|e| sql_err(&path, e))?;
        // Another process may have migrated while we waited for the lock.
        let current: i64 = tx
            .pragma_query_value(None, "user_version", |r| r.get(0))
            .map_err(|e| sql_err(&path, e))?;
        for (i, sql) in schema::MIGRATIONS.iter().enumerate().skip(current as usize) {
            tx.execute_batch(sql).map_err(|e| sql_err(&path, e))?;
            if *sql == schema::IDENTS_MIGRATION {
                memory::fill_idents(&tx).map_err(|e| sql_err(&path, e))?;
            }
            tx.pragma_update(None, "user_version", (i + 1) as i64)
                .map_err(|e| sql_err(&path, e))?;
        }
        tx.commit().map_err(|e| sql_err(&path, e))
    }

    /// Copies committed WAL content into the database without waiting for
    /// readers (SessionEnd calls this; a blocked checkpoint just retries later).
    pub fn checkpoint_passive(&self) -> Result<()> {
        self.conn
            .query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |_| Ok(()))
            .map_err(|e| self.err(e))
    }

    /// Runs SQLite's own consistency check; `Ok(None)` when healthy.
    pub fn integrity_problem(&self) -> Result<Option<String>> {
        let result: String = self
            .conn
            .query_row("PRAGMA quick_check", [], |r| r.get(0))
            .map_err(|e| self.err(e))?;
        Ok((result != "ok").then_some(result))
    }

    fn err(&self, e: rusqlite::Error) -> StoreError {
        sql_err(&self.path, e)
    }
}

fn sql_err(path: &Path, source: rusqlite::Error) -> StoreError {
    StoreError::Sqlite {
        path: path.to_owned(),
        source,
    }
}

/// JSON text of a list of strings (the store keeps lists as JSON arrays).
pub(crate) fn json_list(items: &[String]) -> String {
    serde_json::to_string(items).unwrap_or_else(|_| "[]".to_owned())
}

/// The inverse of [`json_list`], tolerant of anything that is not a list.
pub fn parse_json_list(text: &str) -> Vec<String> {
    serde_json::from_str(text).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn opens_migrates_and_reopens_cheaply() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("sub/mnemo.db");
        let store = Store::open(&path, Duration::from_secs(1)).unwrap();
        assert_eq!(store.schema_version().unwrap(), schema::LATEST);
        let mode: String = store
            .conn()
            .pragma_query_value(None, "journal_mode", |r| r.get(0))
            .unwrap();
        assert_eq!(mode, "wal");
        drop(store);
        let again = Store::open(&path, Duration::from_secs(1)).unwrap();
        assert_eq!(again.integrity_problem().unwrap(), None);
    }

    #[test]
    fn refuses_a_newer_schema() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("mnemo.db");
        let store = Store::open(&path, Duration::from_secs(1)).unwrap();
        store
            .conn()
            .pragma_update(None, "user_version", schema::LATEST + 1)
            .unwrap();
        drop(store);
        let err = Store::open(&path, Duration::from_secs(1))
            .err()
            .expect("newer schema refused");
        assert_eq!(err.failure(), Failure::TooNew);
        assert!(err.to_string().contains("upgrade mnemo"));
    }

    #[test]
    fn garbage_file_is_reported_as_corrupt() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("mnemo.db");
        std::fs::write(&path, vec![0x5a; 8192]).unwrap();
        let err = Store::open(&path, Duration::from_secs(1))
            .err()
            .expect("garbage refused");
        assert_eq!(err.failure(), Failure::Corrupt);
    }
}
