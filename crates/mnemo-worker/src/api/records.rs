//! Browsing what is stored: sessions, observations, summaries, prompts.
//!
//! The records are [`mnemo_store::shape`]'s, exactly what `mnemo show
//! --json`, the MCP tools, `/api/search`, the stream and `mnemo export`
//! carry. Lists share the filters and their grammar with `mnemo search`:
//! `project` (a directory, a stored root, a name; see
//! [`super::recall::project`]), `session` (the platform's session id or its
//! first 4+ characters), `since`/`until` ([`mnemo_recall::when`]: RFC 3339,
//! a local day, `today`, `yesterday`, `7d`), `type` for observations
//! ([`mnemo_recall::types`]: `fix` is bugfix). A value that matches nothing
//! it could name is a 400 listing what is accepted. Paging: `limit` up to
//! 500, then `offset`, or `before` an id for stable pages while new rows
//! arrive. Newest first.

use axum::Json;
use axum::extract::rejection::{JsonRejection, QueryRejection};
use axum::extract::{Path, Query, State};
use mnemo_recall::types::{self, Allowed};
use mnemo_recall::{Clock, ItemRef, Kind, records, scope};
use mnemo_store::shape::{
    OBSERVATION_FROM, OBSERVATION_SELECT, PROMPT_FROM, PROMPT_SELECT, SESSION_FROM, SESSION_SELECT,
    SUMMARY_FROM, SUMMARY_SELECT, observation_row, prompt_row, session_row, summary_row,
};
use rusqlite::types::Value as SqlValue;
use rusqlite::{Connection, OptionalExtension, Row, params_from_iter};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::recall::{Scope, given, project};
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
    /// An id (`12`, `#12`, `S12`, ...): only rows older than it.
    pub before: Option<String>,
}

/// A WHERE clause under construction, with its parameters.
struct Filter {
    clauses: Vec<String>,
    params: Vec<SqlValue>,
    /// A real project that nothing was recorded for: the list is empty.
    nothing: bool,
}

impl Filter {
    /// `table` is the alias of the listed table, `time` its time column;
    /// projects are `p`, sessions `s`.
    fn new(
        conn: &Connection,
        app: &AppState,
        q: &ListQuery,
        table: &str,
        time: &str,
    ) -> Result<Filter, ApiError> {
        let mut f = Filter {
            clauses: Vec::new(),
            params: Vec::new(),
            nothing: false,
        };
        let clock = Clock::system();
        for (text, upper) in [(&q.since, false), (&q.until, true)] {
            if let Some(text) = given(text) {
                let ms = if upper {
                    clock.parse_until(text)?
                } else {
                    clock.parse_since(text)?
                };
                let op = if upper { "<" } else { ">=" };
                f.push(format!("{table}.{time} {op} ?"), [SqlValue::Integer(ms)]);
            }
        }
        // Project and session are columns of the listed table where it has
        // them, so the count needs no join (see `list`).
        let (project_col, session_col) = match table {
            "q" => ("s.project_id".to_owned(), "q.session_id".to_owned()),
            "s" => ("s.project_id".to_owned(), "s.id".to_owned()),
            t => (format!("{t}.project_id"), format!("{t}.session_id")),
        };
        match project(conn, &app.data.db_path(), given(&q.project))? {
            Scope::All => {}
            Scope::One(p) => f.push(format!("{project_col} = ?"), [SqlValue::Integer(p.id)]),
            Scope::Nothing => f.nothing = true,
        }
        if let Some(session) = given(&q.session) {
            let ids = scope::sessions_matching(conn, session)?;
            f.push_in(&session_col, ids.into_iter().map(SqlValue::Integer));
        }
        if let Some(before) = given(&q.before) {
            let id = ItemRef::parse(before)?.id;
            f.push(format!("{table}.id < ?"), [SqlValue::Integer(id)]);
        }
        Ok(f)
    }

    fn push<const N: usize>(&mut self, clause: String, values: [SqlValue; N]) {
        self.clauses.push(clause);
        self.params.extend(values);
    }

    fn push_in(&mut self, column: &str, values: impl Iterator<Item = SqlValue>) {
        let before = self.params.len();
        self.params.extend(values);
        let marks = vec!["?"; self.params.len() - before].join(", ");
        self.clauses.push(format!("{column} IN ({marks})"));
    }

    fn sql(&self) -> String {
        if self.clauses.is_empty() {
            String::new()
        } else {
            format!("WHERE {}", self.clauses.join(" AND "))
        }
    }
}

/// A page of a list.
#[derive(Debug, Serialize)]
pub struct Page<T> {
    pub items: Vec<T>,
    pub total: i64,
    pub limit: u32,
    pub offset: u32,
    /// The `before` of the next page (None on the last one).
    pub next_before: Option<i64>,
}

/// Runs a paged list of `SELECT {select} FROM {from}`, `table` being the
/// alias of the listed table.
#[allow(clippy::too_many_arguments)]
fn list<T>(
    conn: &Connection,
    select: &str,
    from: &str,
    table: &str,
    filter: Filter,
    q: &ListQuery,
    row: fn(&Row<'_>) -> rusqlite::Result<T>,
    id_of: fn(&T) -> i64,
) -> Result<Page<T>, ApiError> {
    let limit = q.limit.unwrap_or(DEFAULT_LIMIT).clamp(1, MAX_LIMIT);
    let offset = q.offset.unwrap_or(0);
    if filter.nothing {
        return Ok(Page {
            items: Vec::new(),
            total: 0,
            limit,
            offset,
            next_before: None,
        });
    }
    let where_sql = filter.sql();
    let total: i64 = conn.query_row(
        &format!(
            "SELECT count(*) FROM {} {where_sql}",
            count_from(from, table, &filter)
        ),
        params_from_iter(filter.params.iter()),
        |r| r.get(0),
    )?;
    let sql = format!(
        "SELECT {select} FROM {from} {where_sql} ORDER BY {table}.id DESC LIMIT {limit} OFFSET {offset}"
    );
    let mut stmt = conn.prepare(&sql)?;
    let items = stmt
        .query_map(params_from_iter(filter.params.iter()), row)?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    let next_before = (items.len() as u32 == limit)
        .then(|| items.last().map(id_of))
        .flatten();
    Ok(Page {
        items,
        total,
        limit,
        offset,
        next_before,
    })
}

/// What the count runs over: the listed table alone when no clause names
/// a joined one. SQLite keeps the joins of `from` in a count (it scans every
/// row and looks each join up: 80 ms at 100,000 observations), while a
/// count of the table alone reads an index (1 ms).
fn count_from<'a>(from: &'a str, table: &str, filter: &Filter) -> std::borrow::Cow<'a, str> {
    let joined = ["p.", "s.", "q.", "o.", "m."]
        .into_iter()
        .filter(|alias| alias.strip_suffix('.') != Some(table))
        .any(|alias| filter.clauses.iter().any(|c| c.contains(alias)));
    if joined {
        return from.into();
    }
    from.split_whitespace()
        .take(2)
        .collect::<Vec<_>>()
        .join(" ")
        .into()
}

fn query_or_400(q: Result<Query<ListQuery>, QueryRejection>) -> Result<ListQuery, ApiError> {
    q.map(|Query(q)| q)
        .map_err(|e| ApiError::bad_request(e.body_text()))
}

/// `GET /api/observations?project=&type=&session=&since=&until=&limit=&offset=&before=`
pub async fn observations(
    State(app): State<AppState>,
    q: Result<Query<ListQuery>, QueryRejection>,
) -> Result<Json<Value>, ApiError> {
    let q = query_or_400(q)?;
    let state = app.clone();
    app.db(move |store| {
        let conn = store.conn();
        let mut filter = Filter::new(conn, &state, &q, "o", "created_at")?;
        if let Some(kind) = given(&q.kind) {
            let names = types::check(conn, &[kind.to_owned()], Allowed::Observations)?;
            // `observation` is any type.
            if !names.iter().any(|n| n == types::ANY_OBSERVATION) {
                filter.push_in("o.type", names.into_iter().map(SqlValue::Text));
            }
        }
        let page = list(
            conn,
            OBSERVATION_SELECT,
            OBSERVATION_FROM,
            "o",
            filter,
            &q,
            observation_row,
            |o| o.id,
        )?;
        Ok(json!(page))
    })
    .await
    .map(Json)
}

/// `GET /api/observations/{id}`: by id (`12`, `#12`, `O12`) or uid.
pub async fn observation(
    State(app): State<AppState>,
    Path(id): Path<String>,
) -> Result<Json<Value>, ApiError> {
    app.db(move |store| {
        let conn = store.conn();
        let found = match ItemRef::parse(&id) {
            Ok(r) if r.kind == Kind::Observation => records::observation(conn, r.id)?,
            Ok(r) => {
                return Err(ApiError::bad_request(format!(
                    "{r} is a {}, not an observation: POST /api/observations/batch \
                     {{\"ids\": [\"{r}\"]}} fetches any kind",
                    r.kind.as_str()
                )));
            }
            Err(_) => by_uid(conn, &id)?,
        };
        match found {
            Some(o) => Ok(json!(o)),
            None => Err(ApiError::not_found(format!(
                "no observation {id}; find ids with /api/search"
            ))),
        }
    })
    .await
    .map(Json)
}

fn by_uid(
    conn: &Connection,
    uid: &str,
) -> Result<Option<mnemo_store::shape::ObservationRecord>, ApiError> {
    let sql = format!("SELECT {OBSERVATION_SELECT} FROM {OBSERVATION_FROM} WHERE o.uid = ?1");
    Ok(conn
        .prepare_cached(&sql)?
        .query_row([uid], observation_row)
        .optional()?)
}

#[derive(Debug, Deserialize)]
pub struct BatchRequest {
    /// Ids as numbers or text: `12`, `"#12"`, `"S3"`, `"P7"`.
    pub ids: Vec<Value>,
}

/// `POST /api/observations/batch` with `{"ids": [...]}`: the records in the
/// order asked (any kind, as `get_observations`), and the ids not found in
/// `missing`.
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
    let texts: Vec<String> = body
        .ids
        .iter()
        .map(|v| match v {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        })
        .collect();
    let ids = ItemRef::parse_list(&texts)?;
    app.db(move |store| {
        let fetched = records::fetch(store.conn(), &ids)?;
        Ok(json!({ "items": fetched.records, "missing": fetched.missing }))
    })
    .await
    .map(Json)
}

/// `GET /api/summaries?project=&session=&since=&until=&limit=&offset=&before=`
pub async fn summaries(
    State(app): State<AppState>,
    q: Result<Query<ListQuery>, QueryRejection>,
) -> Result<Json<Value>, ApiError> {
    let q = query_or_400(q)?;
    let state = app.clone();
    app.db(move |store| {
        let conn = store.conn();
        let filter = Filter::new(conn, &state, &q, "m", "created_at")?;
        let page = list(
            conn,
            SUMMARY_SELECT,
            SUMMARY_FROM,
            "m",
            filter,
            &q,
            summary_row,
            |m| m.id,
        )?;
        Ok(json!(page))
    })
    .await
    .map(Json)
}

/// `GET /api/prompts?project=&session=&since=&until=&limit=&offset=&before=`
pub async fn prompts(
    State(app): State<AppState>,
    q: Result<Query<ListQuery>, QueryRejection>,
) -> Result<Json<Value>, ApiError> {
    let q = query_or_400(q)?;
    let state = app.clone();
    app.db(move |store| {
        let conn = store.conn();
        let filter = Filter::new(conn, &state, &q, "q", "created_at")?;
        let page = list(
            conn,
            PROMPT_SELECT,
            PROMPT_FROM,
            "q",
            filter,
            &q,
            prompt_row,
            |p| p.id,
        )?;
        Ok(json!(page))
    })
    .await
    .map(Json)
}

/// `GET /api/sessions?project=&session=&since=&until=&limit=&offset=&before=`
/// (`since`/`until` apply to the start time).
pub async fn sessions(
    State(app): State<AppState>,
    q: Result<Query<ListQuery>, QueryRejection>,
) -> Result<Json<Value>, ApiError> {
    let q = query_or_400(q)?;
    let state = app.clone();
    app.db(move |store| {
        let conn = store.conn();
        let filter = Filter::new(conn, &state, &q, "s", "started_at")?;
        let page = list(
            conn,
            SESSION_SELECT,
            SESSION_FROM,
            "s",
            filter,
            &q,
            session_row,
            |s| s.id,
        )?;
        Ok(json!(page))
    })
    .await
    .map(Json)
}
