//! `GET /api/sync`: this machine's sync state for the viewer's health page
//! (what `mnemo sync status --json` prints: server, spaces, last sync,
//! what waits to be pushed, the last error). No token or key is in it.

use axum::Json;
use axum::extract::State;

use super::{ApiError, AppState};

pub async fn sync(
    State(app): State<AppState>,
) -> Result<Json<mnemo_sync::status::Status>, ApiError> {
    let status = app
        .db(|store| Ok(mnemo_sync::status::status(store.conn())?))
        .await?;
    Ok(Json(status))
}
