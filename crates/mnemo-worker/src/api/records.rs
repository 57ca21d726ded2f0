//! Browsing what is stored: sessions, observations, summaries, prompts.
//!
//! Lists share one set of filters (`project` as a root path or a name,
//! `session` as the platform's session id, `since`/`until` as RFC 3339, a
//! date or epoch milliseconds, `type` for observations) and paging (`limit`
//! up to 500, then `offset`, or `before` an id for stable pages while new
//! rows arrive). Newest first. Records name their project by root and their
//! session by the platform's id, like `mnemo export`.

use axum::Json;
use axum::extract::rejection::{JsonRejection, QueryRejection};
use axum::extract::{Path, Query, State};
use mnemo_core::time::{format_rfc3339, parse_rfc3339};
use mnemo_store::parse_json_list;
use mnemo_store::queue::TurnInfo;
use rusqlite::types::Value as SqlValue;
use rusqlite::{Connection, Row, params_from_iter};
use serde::Deserialize;
use serde_json::{Value, json};

use super::{ApiError, AppState};

const DEFAULT_LIMIT: u32 = 50;
const MAX_LIMIT: u32 = 500;

/// Filters and paging of the list routes.
#[derive(Debug, Default, Deserialize)]
pub struct ListQuery {
    pub project: Option<String>,
    pub session: Option<String>,
    #[serde(rename = "type")]
    pub kind: Option<String>,
    pub since: Option<String>,
    pub until: Option<String>,
    pub limit: Option<u32>,
    pub offset: Option<u32>,
    pub before: Option<i64>,
}

/// Epoch milliseconds from RFC 3339, `YYYY-MM-DD` (UTC midnight) or digits.
pub fn parse_time(text: &str) -> Option<i64> {
    let text = text.trim();
    if !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit()) {
        return text.parse().ok();
    }
    parse_rfc3339(text).or_else(|| parse_rfc3339(&format!("{text}T00:00:00Z")))
}

/// A WHERE clause under construction, with its parameters.
struct Filter {
    clauses: Vec<String>,
    params: Vec<SqlValue>,
}

impl Filter {
    /// `table` is the alias of the listed table (with `project_id`,
    /// `session_id`, `created_at`, `id` columns); projects are `p`,
    /// sessions `s`.
    fn new(q: &ListQuery, table: &str) -> Result<Filter, ApiError> {
        let mut f = Filter {
            clauses: Vec::new(),
            params: Vec::new(),
        };
        if let Some(project) = q.project.as_deref().filter(|p| !p.is_empty()) {
            f.push("(p.root = ? OR p.name = ?)", [project, project]);
        }
        if let Some(session) = q.session.as_deref().filter(|s| !s.is_empty()) {
            f.push("s.platform_session_id = ?", [session]);
        }
        for (text, op) in [(&q.since, ">="), (&q.until, "<")] {
            if let Some(text) = text.as_deref().filter(|t| !t.is_empty()) {
                let ms = parse_time(text).ok_or_else(|| {
                    ApiError::bad_request(format!(
                        "`{text}` is not a time (RFC 3339, YYYY-MM-DD or epoch milliseconds)"
                    ))
                })?;
                f.clauses.push(format!("{table}.created_at {op} ?"));
                f.params.push(SqlValue::Integer(ms));
            }
        }
        if let Some(before) = q.before {
            f.clauses.push(format!("{table}.id < ?"));
            f.params.push(SqlValue::Integer(before));
        }
        Ok(f)
    }

    fn push<const N: usize>(&mut self, clause: &str, values: [&str; N]) {
        self.clauses.push(clause.to_owned());
        self.params
            .extend(values.iter().map(|v| SqlValue::Text((*v).to_owned())));
    }

    fn sql(&self) -> String {
        if self.clauses.is_empty() {
            String::new()
        } else {
            format!("WHERE {}", self.clauses.join(" AND "))
        }
    }
}

/// Runs a paged list: `select` is everything before WHERE, `table` the alias
/// of the listed table.
fn list(
    conn: &Connection,
    select: &str,
    from: &str,
    table: &str,
    filter: Filter,
    q: &ListQuery,
    to_json: fn(&Row<'_>) -> rusqlite::Result<Value>,
) -> Result<Value, ApiError> {
    let limit = q.limit.unwrap_or(DEFAULT_LIMIT).clamp(1, MAX_LIMIT);
    let offset = q.offset.unwrap_or(0);
    let where_sql = filter.sql();
    let total: i64 = conn.query_row(
        &format!("SELECT count(*) FROM {from} {where_sql}"),
        params_from_iter(filter.params.iter()),
        |r| r.get(0),
    )?;
    let sql = format!(
        "SELECT {select} FROM {from} {where_sql} ORDER BY {table}.id DESC LIMIT {limit} OFFSET {offset}"
    );
    let mut stmt = conn.prepare(&sql)?;
    let items = stmt
        .query_map(params_from_iter(filter.params.iter()), to_json)?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    let next_before = (items.len() as u32 == limit)
        .then(|| items.last().and_then(|i| i["id"].as_i64()))
        .flatten();
    Ok(json!({
        "items": items,
        "total": total,
        "limit": limit,
        "offset": offset,
        "next_before": next_before,
    }))
}

fn query_or_400(q: Result<Query<ListQuery>, QueryRejection>) -> Result<ListQuery, ApiError> {
    q.map(|Query(q)| q)
        .map_err(|e| ApiError::bad_request(e.body_text()))
}

fn time(ms: i64) -> Value {
    json!(format_rfc3339(ms))
}

fn list_column(r: &Row<'_>, i: usize) -> rusqlite::Result<Vec<String>> {
    Ok(parse_json_list(&r.get::<_, String>(i)?))
}

// ---- observations ----

const OBSERVATION_SELECT: &str = "o.id, o.uid, o.type, o.title, o.subtitle, o.narrative, o.facts,
     o.concepts, o.files_read, o.files_modified, o.source, o.created_at, o.prompt_number,
     p.root, p.name, s.platform_session_id";
const OBSERVATION_FROM: &str = "observations o LEFT JOIN projects p ON p.id = o.project_id
     LEFT JOIN sessions s ON s.id = o.session_id";

/// An observation as every route and the stream show it.
#[allow(clippy::too_many_arguments)]
pub fn observation_json(
    id: i64,
    uid: &str,
    kind: &str,
    title: &str,
    subtitle: &str,
    narrative: &str,
    facts: &[String],
    concepts: &[String],
    files_read: &[String],
    files_modified: &[String],
    source: &str,
    created_at: i64,
    prompt_number: Option<i64>,
    project: Option<&str>,
    project_name: Option<&str>,
    session: Option<&str>,
) -> Value {
    json!({
        "id": id,
        "uid": uid,
        "type": kind,
        "title": title,
        "subtitle": subtitle,
        "narrative": narrative,
        "facts": facts,
        "concepts": concepts,
        "files_read": files_read,
        "files_modified": files_modified,
        "source": source,
        "project": project,
        "project_name": project_name,
        "session": session,
        "prompt_number": prompt_number,
        "created_at": time(created_at),
        "created_at_ms": created_at,
    })
}

fn observation_row(r: &Row<'_>) -> rusqlite::Result<Value> {
    Ok(observation_json(
        r.get(0)?,
        &r.get::<_, String>(1)?,
        &r.get::<_, String>(2)?,
        &r.get::<_, String>(3)?,
        &r.get::<_, String>(4)?,
        &r.get::<_, String>(5)?,
        &list_column(r, 6)?,
        &list_column(r, 7)?,
        &list_column(r, 8)?,
        &list_column(r, 9)?,
        &r.get::<_, String>(10)?,
        r.get(11)?,
        r.get(12)?,
        r.get::<_, Option<String>>(13)?.as_deref(),
        r.get::<_, Option<String>>(14)?.as_deref(),
        r.get::<_, Option<String>>(15)?.as_deref(),
    ))
}

/// The JSON of an observation just stored by the worker (for the stream).
pub fn new_observation_json(
    id: i64,
    o: &mnemo_store::memory::NewObservation,
    turn: &TurnInfo,
) -> Value {
    observation_json(
        id,
        &o.uid,
        &o.kind,
        &o.title,
        &o.subtitle,
        &o.narrative,
        &o.facts,
        &o.concepts,
        &o.files_read,
        &o.files_modified,
        &o.source,
        o.created_at,
        o.prompt_number,
        turn.project_root.as_deref(),
        turn.project_name.as_deref(),
        Some(turn.platform_session_id.as_str()),
    )
}

/// `GET /api/observations?project=&type=&session=&since=&until=&limit=&offset=&before=`
pub async fn observations(
    State(app): State<AppState>,
    q: Result<Query<ListQuery>, QueryRejection>,
) -> Result<Json<Value>, ApiError> {
    let q = query_or_400(q)?;
    app.db(move |store| {
        let mut filter = Filter::new(&q, "o")?;
        if let Some(kind) = q.kind.as_deref().filter(|k| !k.is_empty()) {
            filter.push("o.type = ?", [kind]);
        }
        list(
            store.conn(),
            OBSERVATION_SELECT,
            OBSERVATION_FROM,
            "o",
            filter,
            &q,
            observation_row,
        )
    })
    .await
    .map(Json)
}

/// `GET /api/observations/{id}`: by row id or uid.
pub async fn observation(
    State(app): State<AppState>,
    Path(id): Path<String>,
) -> Result<Json<Value>, ApiError> {
    app.db(move |store| {
        let sql = format!(
            "SELECT {OBSERVATION_SELECT} FROM {OBSERVATION_FROM}
             WHERE o.uid = ?1 OR (o.id = CAST(?1 AS INTEGER) AND ?1 GLOB '[0-9]*')"
        );
        let mut stmt = store.conn().prepare(&sql)?;
        let mut rows = stmt.query_map([&id], observation_row)?;
        match rows.next() {
            Some(row) => Ok(row?),
            None => Err(ApiError::not_found(format!("no observation {id}"))),
        }
    })
    .await
    .map(Json)
}

#[derive(Debug, Deserialize)]
pub struct BatchRequest {
    pub ids: Vec<i64>,
}

/// `POST /api/observations/batch` with `{"ids": [...]}`: in the order asked,
/// unknown ids left out.
pub async fn observations_batch(
    State(app): State<AppState>,
    body: Result<Json<BatchRequest>, JsonRejection>,
) -> Result<Json<Value>, ApiError> {
    let Json(body) = body.map_err(|e| ApiError::bad_request(e.body_text()))?;
    if body.ids.len() > MAX_LIMIT as usize {
        return Err(ApiError::bad_request(format!(
            "at most {MAX_LIMIT} ids per request"
        )));
    }
    app.db(move |store| {
        let sql = format!(
            "SELECT {OBSERVATION_SELECT} FROM {OBSERVATION_FROM}
             WHERE o.id IN (SELECT value FROM json_each(?1))"
        );
        let ids = serde_json::to_string(&body.ids).unwrap_or_else(|_| "[]".into());
        let mut stmt = store.conn().prepare(&sql)?;
        let found = stmt
            .query_map([ids], observation_row)?
            .collect::<rusqlite::Result<Vec<_>>>()?;
        let items: Vec<Value> = body
            .ids
            .iter()
            .filter_map(|id| found.iter().find(|o| o["id"].as_i64() == Some(*id)))
            .cloned()
            .collect();
        Ok(json!({ "items": items }))
    })
    .await
    .map(Json)
}

// ---- summaries ----

const SUMMARY_SELECT: &str = "m.id, m.uid, m.request, m.investigated, m.learned, m.completed,
     m.next_steps, m.notes, m.source, m.created_at, m.prompt_number, p.root, p.name,
     s.platform_session_id";
const SUMMARY_FROM: &str = "summaries m LEFT JOIN projects p ON p.id = m.project_id
     LEFT JOIN sessions s ON s.id = m.session_id";

fn summary_row(r: &Row<'_>) -> rusqlite::Result<Value> {
    Ok(json!({
        "id": r.get::<_, i64>(0)?,
        "uid": r.get::<_, String>(1)?,
        "request": r.get::<_, String>(2)?,
        "investigated": r.get::<_, String>(3)?,
        "learned": r.get::<_, String>(4)?,
        "completed": r.get::<_, String>(5)?,
        "next_steps": r.get::<_, String>(6)?,
        "notes": r.get::<_, String>(7)?,
        "source": r.get::<_, String>(8)?,
        "created_at": time(r.get(9)?),
        "created_at_ms": r.get::<_, i64>(9)?,
        "prompt_number": r.get::<_, Option<i64>>(10)?,
        "project": r.get::<_, Option<String>>(11)?,
        "project_name": r.get::<_, Option<String>>(12)?,
        "session": r.get::<_, Option<String>>(13)?,
    }))
}

/// The JSON of a summary just stored by the worker (for the stream).
pub fn new_summary_json(id: i64, m: &mnemo_store::memory::NewSummary, turn: &TurnInfo) -> Value {
    json!({
        "id": id,
        "uid": m.uid,
        "request": m.request,
        "investigated": m.investigated,
        "learned": m.learned,
        "completed": m.completed,
        "next_steps": m.next_steps,
        "notes": m.notes,
        "source": m.source,
        "created_at": time(m.created_at),
        "created_at_ms": m.created_at,
        "prompt_number": m.prompt_number,
        "project": turn.project_root,
        "project_name": turn.project_name,
        "session": turn.platform_session_id,
    })
}

/// `GET /api/summaries?project=&session=&since=&until=&limit=&offset=&before=`
pub async fn summaries(
    State(app): State<AppState>,
    q: Result<Query<ListQuery>, QueryRejection>,
) -> Result<Json<Value>, ApiError> {
    let q = query_or_400(q)?;
    app.db(move |store| {
        let filter = Filter::new(&q, "m")?;
        list(
            store.conn(),
            SUMMARY_SELECT,
            SUMMARY_FROM,
            "m",
            filter,
            &q,
            summary_row,
        )
    })
    .await
    .map(Json)
}

// ---- prompts ----

fn prompt_row(r: &Row<'_>) -> rusqlite::Result<Value> {
    Ok(json!({
        "id": r.get::<_, i64>(0)?,
        "uid": r.get::<_, String>(1)?,
        "prompt_number": r.get::<_, i64>(2)?,
        "origin": r.get::<_, String>(3)?,
        "text": r.get::<_, String>(4)?,
        "created_at": time(r.get(5)?),
        "created_at_ms": r.get::<_, i64>(5)?,
        "project": r.get::<_, Option<String>>(6)?,
        "project_name": r.get::<_, Option<String>>(7)?,
        "session": r.get::<_, String>(8)?,
    }))
}

/// `GET /api/prompts?project=&session=&since=&until=&limit=&offset=&before=`
pub async fn prompts(
    State(app): State<AppState>,
    q: Result<Query<ListQuery>, QueryRejection>,
) -> Result<Json<Value>, ApiError> {
    let q = query_or_400(q)?;
    app.db(move |store| {
        let filter = Filter::new(&q, "r")?;
        list(
            store.conn(),
            "r.id, r.uid, r.prompt_number, r.origin, r.text, r.created_at, p.root, p.name,
             s.platform_session_id",
            "prompts r JOIN sessions s ON s.id = r.session_id
             LEFT JOIN projects p ON p.id = s.project_id",
            "r",
            filter,
            &q,
            prompt_row,
        )
    })
    .await
    .map(Json)
}

// ---- sessions ----

fn session_row(r: &Row<'_>) -> rusqlite::Result<Value> {
    let ended: Option<i64> = r.get(9)?;
    Ok(json!({
        "id": r.get::<_, i64>(0)?,
        "platform": r.get::<_, String>(1)?,
        "session": r.get::<_, String>(2)?,
        "project": r.get::<_, Option<String>>(3)?,
        "project_name": r.get::<_, Option<String>>(4)?,
        "cwd": r.get::<_, Option<String>>(5)?,
        "status": r.get::<_, String>(6)?,
        "prompt_count": r.get::<_, i64>(7)?,
        "started_at": time(r.get(8)?),
        "ended_at": ended.map(time),
        "end_reason": r.get::<_, Option<String>>(10)?,
        "observations": r.get::<_, i64>(11)?,
        "summaries": r.get::<_, i64>(12)?,
        "events_pending": r.get::<_, i64>(13)?,
    }))
}

/// `GET /api/sessions?project=&since=&until=&limit=&offset=&before=`
/// (`since`/`until` apply to the start time).
pub async fn sessions(
    State(app): State<AppState>,
    q: Result<Query<ListQuery>, QueryRejection>,
) -> Result<Json<Value>, ApiError> {
    let q = query_or_400(q)?;
    app.db(move |store| {
        // Sessions have started_at where the other tables have created_at.
        let without_times = ListQuery {
            project: q.project.clone(),
            session: q.session.clone(),
            before: q.before,
            ..Default::default()
        };
        let mut filter = Filter::new(&without_times, "s")?;
        for (text, op) in [(&q.since, ">="), (&q.until, "<")] {
            if let Some(text) = text.as_deref().filter(|t| !t.is_empty()) {
                let ms = parse_time(text)
                    .ok_or_else(|| ApiError::bad_request(format!("`{text}` is not a time")))?;
                filter.clauses.push(format!("s.started_at {op} ?"));
                filter.params.push(SqlValue::Integer(ms));
            }
        }
        list(
            store.conn(),
            "s.id, s.platform, s.platform_session_id, p.root, p.name, s.cwd, s.status,
             s.prompt_count, s.started_at, s.ended_at, s.end_reason,
             (SELECT count(*) FROM observations o WHERE o.session_id = s.id),
             (SELECT count(*) FROM summaries m WHERE m.session_id = s.id),
             (SELECT count(*) FROM events e WHERE e.session_id = s.id AND e.status IN ('pending', 'leased'))",
            "sessions s LEFT JOIN projects p ON p.id = s.project_id",
            "s",
            filter,
            &q,
            session_row,
        )
    })
    .await
    .map(Json)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times() {
        assert_eq!(parse_time("1700000000000"), Some(1_700_000_000_000));
        assert_eq!(parse_time("1970-01-02"), Some(86_400_000));
        assert_eq!(parse_time("1970-01-01T00:00:01Z"), Some(1_000));
        assert_eq!(parse_time("soon"), None);
    }
}
