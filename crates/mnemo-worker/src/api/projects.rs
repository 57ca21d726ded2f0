//! `GET /api/projects`: every project with its counts and last activity,
//! for the viewer's projects page and its project pickers.

use axum::Json;
use axum::extract::State;
use mnemo_core::time::format_rfc3339;
use serde::Serialize;
use serde_json::{Value, json};

use super::{ApiError, AppState};

/// One project and how much is remembered about it.
#[derive(Debug, Serialize)]
pub struct ProjectSummary {
    pub id: i64,
    pub name: String,
    pub root: String,
    pub sessions: i64,
    pub prompts: i64,
    pub observations: i64,
    pub summaries: i64,
    /// The newest session start, prompt, observation or summary.
    pub last_activity: Option<String>,
    pub last_activity_ms: Option<i64>,
}

/// Counts through the per-project indexes; prompts through their sessions.
const SQL: &str = "
SELECT p.id, p.name, p.root,
  (SELECT count(*) FROM sessions s WHERE s.project_id = p.id),
  (SELECT count(*) FROM prompts q JOIN sessions s ON s.id = q.session_id WHERE s.project_id = p.id),
  (SELECT count(*) FROM observations o WHERE o.project_id = p.id),
  (SELECT count(*) FROM summaries m WHERE m.project_id = p.id),
  max(
    coalesce((SELECT max(started_at) FROM sessions s WHERE s.project_id = p.id), 0),
    coalesce((SELECT max(created_at) FROM observations o WHERE o.project_id = p.id), 0),
    coalesce((SELECT max(created_at) FROM summaries m WHERE m.project_id = p.id), 0)
  )
FROM projects p";

pub async fn projects(State(app): State<AppState>) -> Result<Json<Value>, ApiError> {
    let mut items = app
        .db(|store| {
            let mut stmt = store.conn().prepare(SQL)?;
            let rows = stmt
                .query_map([], |r| {
                    let last: i64 = r.get(7)?;
                    let last = (last > 0).then_some(last);
                    Ok(ProjectSummary {
                        id: r.get(0)?,
                        name: r.get(1)?,
                        root: r.get(2)?,
                        sessions: r.get(3)?,
                        prompts: r.get(4)?,
                        observations: r.get(5)?,
                        summaries: r.get(6)?,
                        last_activity: last.map(format_rfc3339),
                        last_activity_ms: last,
                    })
                })?
                .collect::<rusqlite::Result<Vec<_>>>()?;
            Ok(rows)
        })
        .await?;
    items.sort_by_key(|p| std::cmp::Reverse(p.last_activity_ms));
    Ok(Json(json!({ "items": items })))
}
