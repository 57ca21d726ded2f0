//! Reading a claude-mem database (thedotmack/claude-mem) for `mnemo import
//! --from claude-mem`.
//!
//! It lives in the store crate because it is a second SQLite reader beside
//! [`crate::export`]: it turns claude-mem's rows into the records that
//! [`crate::Store::import_values`] stores, so that imported memory takes the
//! one path every import takes (same privacy rules, full-text and identifier
//! indexes, idempotence by uid). The steps, in the order data flows:
//! - [`snapshot`]: a consistent private copy of the database and its `-wal`,
//!   taken without writing anything beside the source (claude-mem's worker
//!   may be running);
//! - [`rows`]: its sessions, prompts, observations and summaries, read by
//!   introspecting the columns each schema version has;
//! - [`projects`]: which directory each claude-mem project name meant,
//!   session by session, from what the data says;
//! - [`records`]: the import records, each with a stable uid
//!   `claude-mem:<database identity>:<table>:<rowid>`.

pub mod projects;
pub mod records;
pub mod rows;
pub mod snapshot;

use std::path::PathBuf;

/// Why a claude-mem database could not be read.
#[derive(Debug, thiserror::Error)]
pub enum ClaudeMemError {
    #[error("no claude-mem database at {0}")]
    NotFound(PathBuf),
    #[error("cannot copy {path} for reading: {source}")]
    Copy {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{path} is not a SQLite database, or is damaged: {detail}")]
    NotSqlite { path: PathBuf, detail: String },
    #[error(
        "{path} is a SQLite database but not claude-mem's: it has no `sdk_sessions` and `observations` tables"
    )]
    NotClaudeMem { path: PathBuf },
    #[error("reading {path}: {source}")]
    Sql {
        path: PathBuf,
        #[source]
        source: rusqlite::Error,
    },
}
