//! Running the worker: health, stats (spend, budget, queue), the queue's
//! failed events and their retry, and a graceful stop.

use axum::Json;
use axum::extract::rejection::{JsonRejection, QueryRejection};
use axum::extract::{Query, State};
use axum::http::StatusCode;
use mnemo_core::time::{format_rfc3339, now_ms};
use mnemo_store::ledger::day_start_utc;
use mnemo_store::queue::RetrySelection;
use serde::Deserialize;
use serde_json::{Value, json};

use super::{ApiError, AppState};
use crate::info::ExhaustedInfo;

/// `GET /api/health`, the one route without credentials: enough to tell
/// that the worker is up and whether it has a backlog, nothing private.
pub async fn health(State(app): State<AppState>) -> Result<Json<Value>, ApiError> {
    let counts = app.db(|store| Ok(store.queue_counts(now_ms())?)).await?;
    Ok(Json(json!({
        "status": "ok",
        "version": env!("CARGO_PKG_VERSION"),
        "pid": app.pid,
        "queue": { "pending": counts.pending, "failed": counts.failed },
    })))
}

#[derive(Debug, Default, Deserialize)]
pub struct StatsQuery {
    pub days: Option<u32>,
}

/// `GET /api/stats?days=N`: spend per day and per project over the last N
/// days (7 by default), the budgets and whether one is spent, the queue,
/// the store's counts and size (by kind, by project) and the retention.
pub async fn stats(
    State(app): State<AppState>,
    q: Result<Query<StatsQuery>, QueryRejection>,
) -> Result<Json<Value>, ApiError> {
    let Query(q) = q.map_err(|e| ApiError::bad_request(e.body_text()))?;
    let days = q.days.unwrap_or(7);
    if !(1..=3660).contains(&days) {
        return Err(ApiError::bad_request(format!(
            "`days={days}` is out of range: use 1 to 3660"
        )));
    }
    let now = now_ms();
    let since = day_start_utc(now) - i64::from(days - 1) * 86_400_000;
    let (spend, queue, counts, size) = app
        .db(move |store| {
            Ok((
                store.spend_report(since, now)?,
                store.queue_counts(now)?,
                store.counts()?,
                store.size()?,
            ))
        })
        .await?;
    let budget = &app.config.budget;
    let exhausted = app.budget_state().as_ref().map(ExhaustedInfo::from);
    Ok(Json(json!({
        "version": env!("CARGO_PKG_VERSION"),
        "pid": app.pid,
        "started_at": format_rfc3339(app.started_at_ms),
        "uptime_secs": (now - app.started_at_ms) / 1000,
        "provider": app.provider,
        "provider_error": app.provider_error,
        "compressing_with": if exhausted.is_some() { "offline" } else { app.provider.as_str() },
        "budget": {
            "daily_tokens": budget.daily_tokens,
            "session_tokens": budget.session_tokens,
            "today_tokens": spend.today_tokens,
            "exhausted": exhausted,
        },
        "days": days,
        "spend": spend,
        "queue": queue,
        "store": {
            "projects": counts.projects,
            "sessions": counts.sessions,
            "prompts": counts.prompts,
            "observations": counts.observations,
            "summaries": counts.summaries,
            "bytes": size.bytes,
            "by_kind": size.by_kind,
            "by_project": size.by_project,
        },
        "retention": { "raw_payload_days": app.config.store.raw_payload_days },
    })))
}

/// `GET /api/queue`: counts by state and the failed events with their errors.
pub async fn queue(State(app): State<AppState>) -> Result<Json<Value>, ApiError> {
    let (counts, failed) = app
        .db(|store| Ok((store.queue_counts(now_ms())?, store.failed_events(100)?)))
        .await?;
    Ok(Json(json!({
        "counts": counts,
        "failed": failed.iter().map(|f| json!({
            "id": f.id,
            "uid": f.uid,
            "session": f.platform_session_id,
            "prompt_number": f.prompt_number,
            "kind": f.kind,
            "tool_name": f.tool_name,
            "attempts": f.attempts,
            "error": f.last_error,
            "created_at": format_rfc3339(f.created_at),
        })).collect::<Vec<_>>(),
        "retry": "POST /api/queue/retry with {\"ids\": [...]} or {\"all\": true}, or run `mnemo worker retry`",
    })))
}

#[derive(Debug, Default, Deserialize)]
pub struct RetryRequest {
    #[serde(default)]
    pub ids: Vec<i64>,
    #[serde(default)]
    pub all: bool,
}

/// `POST /api/queue/retry` with `{"ids": [...]}` or `{"all": true}`.
pub async fn retry(
    State(app): State<AppState>,
    body: Result<Json<RetryRequest>, JsonRejection>,
) -> Result<Json<Value>, ApiError> {
    let Json(body) = body.map_err(|e| ApiError::bad_request(e.body_text()))?;
    if !body.all && body.ids.is_empty() {
        return Err(ApiError::bad_request(
            "say which events: {\"ids\": [...]} or {\"all\": true}",
        ));
    }
    let (retried, missing) = app
        .db(move |store| {
            let missing = store.unknown_events(&body.ids)?;
            if !body.all && missing.len() == body.ids.len() {
                return Ok((0, missing));
            }
            let which = if body.all {
                RetrySelection::All
            } else {
                RetrySelection::Ids(&body.ids)
            };
            Ok((store.retry_events(which)?, missing))
        })
        .await?;
    if retried == 0 && !missing.is_empty() {
        let list: Vec<String> = missing.iter().map(ToString::to_string).collect();
        return Err(ApiError::not_found(format!(
            "no event {}; GET /api/queue lists the failed ones",
            list.join(", ")
        ))
        .with("missing", json!(missing)));
    }
    Ok(Json(json!({ "retried": retried, "missing": missing })))
}

/// `POST /api/shutdown`: finish or give back the current batch, then exit.
/// (`mnemo worker stop` uses it; portable where signals are not.)
pub async fn shutdown(State(app): State<AppState>) -> (StatusCode, Json<Value>) {
    tracing::info!("shutdown requested over the API");
    app.request_shutdown();
    (StatusCode::ACCEPTED, Json(json!({ "status": "stopping" })))
}
