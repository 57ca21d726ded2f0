//! Terminal output helpers: one place for the error prefix and for opening
//! the store with a message that says what to do.

use std::time::Duration;

use anyhow::Context as _;
use mnemo_core::{Config, DataDir};
use mnemo_store::{Failure, Store, StoreError};

pub fn error(message: &str) {
    eprintln!("mnemo: error: {message}");
}

/// The data directory and the configuration, loaded as hooks load it: a
/// value that cannot be used falls back to its default with one warning on
/// stderr, so that a typo in `config.toml` never locks the user out of their
/// memory (`mnemo doctor` names the problem too).
pub fn data_and_config() -> anyhow::Result<(DataDir, Config)> {
    let data = DataDir::resolve()?;
    let loaded = Config::load_lenient(&data.config_path());
    for w in &loaded.warnings {
        eprintln!("mnemo: warning: {w}");
    }
    Ok((data, loaded.config))
}

/// Opens the store for writing, with an actionable message on failure.
pub fn open_store(data: &DataDir, config: &Config) -> anyhow::Result<Store> {
    let busy = Duration::from_millis(config.store.busy_timeout_ms);
    Store::open(&data.db_path(), busy).map_err(|e| explain(e, data))
}

/// Opens an existing store read-only.
pub fn open_store_read_only(data: &DataDir, config: &Config) -> anyhow::Result<Store> {
    let path = data.db_path();
    if !path.exists() {
        anyhow::bail!(
            "no database at {} yet; run `mnemo install`, or use an agent session with mnemo installed",
            path.display()
        );
    }
    let busy = Duration::from_millis(config.store.busy_timeout_ms);
    Store::open_read_only(&path, busy)
        .map_err(|e| explain(e, data))
        .context("opening the database")
}

/// Adds what to do to a store error.
pub fn explain(e: StoreError, data: &DataDir) -> anyhow::Error {
    let hint = match e.failure() {
        Failure::Locked => {
            "another process holds the database lock; retry, or find it with `fuser` / `lsof`"
        }
        Failure::ReadOnly => {
            "make the data directory and database writable by this user (see `mnemo doctor`)"
        }
        Failure::Full => "free disk space; captured events wait in the spool meanwhile",
        Failure::Corrupt => "run `mnemo doctor` for the repair steps; events are spooled meanwhile",
        Failure::TooNew => "install the newer mnemo that wrote this database",
        Failure::Io | Failure::Other => "run `mnemo doctor`",
    };
    anyhow::anyhow!(
        "{e}\n  data directory: {}\n  what to do: {hint}",
        data.root().display()
    )
}
