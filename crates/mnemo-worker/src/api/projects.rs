//! `GET /api/projects`: every project with its agents, counts and last
//! activity ([`mnemo_recall::projects::list`]), for the viewer's projects
//! page and its project pickers.

use axum::Json;
use axum::extract::State;
use mnemo_core::time::format_rfc3339;
use serde_json::{Value, json};

use super::{ApiError, AppState};

pub async fn projects(State(app): State<AppState>) -> Result<Json<Value>, ApiError> {
    let items = app
        .db(|store| Ok(mnemo_recall::projects::list(store.conn())?))
        .await?;
    let items: Vec<Value> = items
        .into_iter()
        .map(|p| {
            let mut v = json!(p);
            v["last_activity"] = json!(p.last_activity_ms.map(format_rfc3339));
            v
        })
        .collect();
    Ok(Json(json!({ "items": items })))
}
