//! The `sync` check, on a machine set up for sync: the server, the spaces,
//! the last sync and its error.

use mnemo_core::{Config, DataDir};
use mnemo_store::Store;

use super::{Check, Status, busy};

/// Sync, on a machine set up for it: the server, the spaces, the last sync
/// and the last error (see `mnemo sync status`).
pub(super) fn check_sync(data: &DataDir, config: &Config) -> Option<Check> {
    let store = Store::open_read_only(&data.db_path(), busy(config)).ok()?;
    let status = mnemo_sync::status::status(store.conn()).ok()?;
    if !status.configured {
        return None;
    }
    let last = status
        .last_sync_at
        .map_or_else(|| "never".to_owned(), mnemo_core::time::format_rfc3339);
    let detail = format!(
        "{}, {} space(s), last sync {last}, {} waiting to be pushed",
        status.server.unwrap_or_default(),
        status.spaces.len(),
        status.pending_push
    );
    Some(match status.last_error {
        None => Check::ok("sync", detail),
        Some(e) => Check::problem(
            "sync",
            Status::Warn,
            format!("{detail}; last error: {e}"),
            "run `mnemo sync` to retry; nothing is lost meanwhile (`mnemo sync status`)",
        ),
    })
}
