//! What `mnemo sync status` reports: the server, this device, the spaces,
//! when the last sync ended, what waits to be pushed, and the last error.

use serde::Serialize;

use crate::local::{self, Space, key};

#[derive(Debug, Clone, Serialize)]
pub struct Status {
    /// False when this machine is not set up for sync.
    pub configured: bool,
    pub server: Option<String>,
    pub device_id: Option<i64>,
    pub user_id: Option<i64>,
    pub key_file: Option<String>,
    pub spaces: Vec<Space>,
    /// Versions queued and not yet stored by the server.
    pub pending_push: i64,
    /// Records changed and not yet queued.
    pub pending_changes: i64,
    /// Epoch milliseconds of the last sync without error.
    pub last_sync_at: Option<i64>,
    pub last_error: Option<String>,
}

pub fn status(conn: &rusqlite::Connection) -> rusqlite::Result<Status> {
    let server = local::get(conn, key::SERVER)?;
    let number = |k: &str| -> rusqlite::Result<Option<i64>> {
        Ok(local::get(conn, k)?.and_then(|v| v.parse().ok()))
    };
    let (pending_push, pending_changes) = local::pending(conn)?;
    Ok(Status {
        configured: server.is_some(),
        server,
        device_id: number(key::DEVICE_ID)?,
        user_id: number(key::USER_ID)?,
        key_file: local::get(conn, key::KEY_FILE)?,
        spaces: local::spaces(conn)?,
        pending_push,
        pending_changes,
        last_sync_at: number(key::LAST_SYNC)?,
        last_error: local::get(conn, key::LAST_ERROR)?,
    })
}
