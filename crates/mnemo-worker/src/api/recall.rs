//! Recall over HTTP: `/api/search`, `/api/timeline/{id}` and `/api/context`.
//!
//! This module owns only the HTTP side: reading the query string, choosing
//! the project (the API has no working directory, see `project()`), and
//! mapping [`RecallError`] to statuses. Everything else is
//! [`mnemo_recall`], the library the CLI and the MCP server call, and the
//! answers are its results serialized as they are, so each route returns
//! exactly what `mnemo search --json`, `mnemo timeline ID --json` and
//! `mnemo context --json` print.
//!
//! Whatever a client sends, the answer is never a 500 for its input: a
//! parameter that does not parse (a date, a number, an id, a project) is a
//! 400 `{"error": …}` saying what was expected; any search text is valid
//! (the library makes a safe FTS5 query of it); an id that does not exist is
//! a 404.
//!
//! Dates: the worker reads the local UTC offset once, before its runtime
//! starts threads (`mnemo_recall::when::remember_local_offset`), so a
//! calendar day in `since`/`until` (`2026-11-22`, `today`) is a local day and
//! the context text shows local dates, as the CLI does.

use std::path::{Path, PathBuf};

use axum::Json;
use axum::extract::rejection::{PathRejection, QueryRejection};
use axum::extract::{Path as UrlPath, Query, State};
use axum::http::StatusCode;
use mnemo_recall::context::{ContextIndex, ContextRequest, build};
use mnemo_recall::scope::{self, Project, Resolved};
use mnemo_recall::search::{FileFilter, SearchRequest, SearchResults};
use mnemo_recall::timeline::Timeline;
use mnemo_recall::{Clock, ItemRef, RecallError, agents, timeline as tl};
use serde::Deserialize;

use super::{ApiError, AppState};

/// Most results when `limit` is absent (as `mnemo search`).
const DEFAULT_LIMIT: usize = 20;
/// Items on each side of the anchor when `before`/`after` are absent (as
/// `mnemo timeline`).
const DEFAULT_SIDE: usize = 5;

impl From<RecallError> for ApiError {
    fn from(e: RecallError) -> ApiError {
        match e {
            RecallError::Input(message) => ApiError::bad_request(message),
            RecallError::Sql(e) => {
                let busy = matches!(
                    e.sqlite_error_code(),
                    Some(rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked)
                );
                let status = if busy {
                    StatusCode::SERVICE_UNAVAILABLE
                } else {
                    StatusCode::INTERNAL_SERVER_ERROR
                };
                ApiError::new(status, format!("database: {e}"))
            }
        }
    }
}

fn query_or_400<T>(q: Result<Query<T>, QueryRejection>) -> Result<T, ApiError> {
    q.map(|Query(q)| q)
        .map_err(|e| ApiError::bad_request(e.body_text()))
}

/// A present, non-blank parameter.
pub(super) fn given(value: &Option<String>) -> Option<&str> {
    value.as_deref().map(str::trim).filter(|v| !v.is_empty())
}

/// Which project a request is about. `None` is every project.
///
/// The API has no working directory, so there is no "current project": an
/// absent or empty `project`, `all` or `*` means every project (the CLI's
/// `--all`). Otherwise it is an absolute directory (anything inside a
/// project), a stored root, or a stored project's name; a relative value is
/// only ever a name, never a path relative to wherever the worker runs.
pub(super) enum Scope {
    All,
    One(Project),
    /// A real directory that nothing was recorded for.
    Nothing,
}

pub(super) fn project(
    conn: &rusqlite::Connection,
    db_path: &Path,
    arg: Option<&str>,
) -> Result<Scope, ApiError> {
    let Some(arg) = arg else {
        return Ok(Scope::All);
    };
    if arg.eq_ignore_ascii_case("all") || arg == "*" {
        return Ok(Scope::All);
    }
    // `resolve_arg` tries `cwd.join(arg)` as a directory; joined to a file
    // (the database), a relative name can never be one, so it stays a name,
    // while an absolute path replaces the base and is resolved as given.
    Ok(match scope::resolve_arg(conn, arg, db_path)? {
        Resolved::Found(p) => Scope::One(p),
        Resolved::Unknown(_) => Scope::Nothing,
    })
}

/// `GET /api/search` parameters, named as `mnemo search`'s options.
#[derive(Debug, Default, Deserialize)]
pub struct SearchQuery {
    /// The search text; anything goes, empty lists the newest items.
    pub q: Option<String>,
    pub project: Option<String>,
    /// Types, comma-separated (`bugfix,decision`, `summary`, `prompt`).
    #[serde(rename = "type")]
    pub kind: Option<String>,
    pub since: Option<String>,
    pub until: Option<String>,
    pub file: Option<String>,
    pub session: Option<String>,
    /// Only what this agent produced (`claude-code`, `codex`, ...).
    pub agent: Option<String>,
    pub limit: Option<usize>,
}

/// `GET /api/search?q=&project=&type=&since=&until=&file=&session=&agent=&limit=`:
/// what `mnemo search --json` prints.
///
/// `project` defaults to every project (see `project()`): unlike the CLI
/// and the MCP server, the API has no current directory to default to. A
/// relative `file` is matched against the project's root (and as a path
/// suffix), since there is no working directory either.
pub async fn search(
    State(app): State<AppState>,
    q: Result<Query<SearchQuery>, QueryRejection>,
) -> Result<Json<SearchResults>, ApiError> {
    let q = query_or_400(q)?;
    let clock = Clock::system();
    // Dates are checked before the database, so a typo is reported as such.
    let since_ms = given(&q.since).map(|s| clock.parse_since(s)).transpose()?;
    let until_ms = given(&q.until).map(|s| clock.parse_until(s)).transpose()?;
    let agent = agents::parse_opt(q.agent.as_deref())?;
    let mine_only = !app.config.sync.others;
    let db_path = app.data.db_path();
    let embeddings = app.config.embeddings.clone();
    app.db(move |store| {
        let conn = store.conn();
        let query = q.q.unwrap_or_default();
        let project = match project(conn, &db_path, given(&q.project))? {
            Scope::All => None,
            Scope::One(p) => Some(p),
            Scope::Nothing => {
                return Ok(SearchResults {
                    query,
                    fts_query: None,
                    relaxed: false,
                    hits: Vec::new(),
                    meaning: None,
                });
            }
        };
        let root = project.as_ref().map(|p| PathBuf::from(&p.root));
        // No working directory: relative paths are tried against the root.
        let base = root.clone().unwrap_or_else(|| PathBuf::from("/"));
        let request = SearchRequest {
            query,
            project_id: project.as_ref().map(|p| p.id),
            types: given(&q.kind)
                .map(|k| {
                    k.split(',')
                        .map(str::trim)
                        .filter(|t| !t.is_empty())
                        .map(str::to_owned)
                        .collect()
                })
                .unwrap_or_default(),
            since_ms,
            until_ms,
            file: given(&q.file).map(|f| FileFilter::new(f, &base, root.as_deref())),
            session: given(&q.session).map(str::to_owned),
            agent,
            mine_only,
            limit: q.limit.unwrap_or(DEFAULT_LIMIT),
        };
        let meaning = mnemo_embed::query_meaning(&embeddings, &request.query);
        Ok(mnemo_recall::hybrid::search(conn, &request, meaning)?)
    })
    .await
    .map(Json)
}

#[derive(Debug, Default, Deserialize)]
pub struct TimelineQuery {
    pub before: Option<usize>,
    pub after: Option<usize>,
    pub agent: Option<String>,
}

/// `GET /api/timeline/{id}?before=&after=&agent=`: what `mnemo timeline ID --json`
/// prints. The id is `12`, `#12` (URL-encoded `%2312`), `S12` or `P12`; one
/// that does not exist is a 404.
pub async fn timeline(
    State(app): State<AppState>,
    id: Result<UrlPath<String>, PathRejection>,
    q: Result<Query<TimelineQuery>, QueryRejection>,
) -> Result<Json<Timeline>, ApiError> {
    let UrlPath(id) = id.map_err(|e| ApiError::bad_request(e.body_text()))?;
    let q = query_or_400(q)?;
    let anchor = ItemRef::parse(&id)?;
    let agent = agents::parse_opt(q.agent.as_deref())?;
    app.db(move |store| {
        // The only input error left once the id parsed is a missing anchor.
        tl::timeline(
            store.conn(),
            anchor,
            q.before.unwrap_or(DEFAULT_SIDE),
            q.after.unwrap_or(DEFAULT_SIDE),
            agent,
        )
        .map_err(|e| match e {
            RecallError::Input(message) => ApiError::not_found(message),
            other => other.into(),
        })
    })
    .await
    .map(Json)
}

#[derive(Debug, Default, Deserialize)]
pub struct ContextQuery {
    pub project: Option<String>,
    pub agent: Option<String>,
}

/// `GET /api/context?project=`: the SessionStart index of a project, as
/// `mnemo context --json` prints it (`text` is the `<mnemo-context>`
/// block). `project` is required (the API has no current directory) and
/// resolved as for search: an absolute directory, a stored root (even one
/// that moved), or a stored project's name.
pub async fn context(
    State(app): State<AppState>,
    q: Result<Query<ContextQuery>, QueryRejection>,
) -> Result<Json<ContextIndex>, ApiError> {
    let q = query_or_400(q)?;
    let arg = given(&q.project).map(str::to_owned).ok_or_else(|| {
        ApiError::bad_request("give the project as `project=DIR` or `project=NAME`")
    })?;
    let agent = agents::parse_opt(q.agent.as_deref())?;
    let config = app.config.context.clone();
    let mine_only = !app.config.sync.others;
    let db_path = app.data.db_path();
    app.db(move |store| {
        let conn = store.conn();
        // Joined to the database file, a relative value is never a
        // directory, so it stays a name (see `project()`).
        let target = scope::target(Some(conn), Some(&arg), &db_path)?;
        let request = ContextRequest {
            root: &target.root,
            name: &target.name,
            cwd: target.dir.as_deref(),
            config: &config,
            clock: Clock::system(),
            agent,
            mine_only,
        };
        Ok(build(conn, &request)?)
    })
    .await
    .map(Json)
}
