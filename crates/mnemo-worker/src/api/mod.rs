//! The worker's HTTP API on 127.0.0.1: state shared by the handlers, JSON
//! errors, and the router.
//!
//! Layout:
//! - [`conn`]: accepting connections, bounded in number and in how long a
//!   client may take to send a request;
//! - [`guard`]: what every request must pass (Host and Origin checks against
//!   DNS rebinding and foreign pages; the bearer token or the viewer's session header);
//! - [`records`]: sessions, observations, summaries, prompts (lists with
//!   filters and paging, one by id, a batch by ids);
//! - [`recall`]: search, timeline and the context index, through
//!   [`mnemo_recall`] (the same JSON as the CLI's `--json`);
//! - [`curate`]: forget, edit, pin, redact (mutations: token and same
//!   origin only);
//! - [`ops`]: health, stats, queue, retry, shutdown;
//! - [`stream`]: `/api/stream`, new observations and summaries as
//!   server-sent events;
//! - [`projects`], [`doctor`], [`sync`]: read-only routes for the viewer
//!   (projects with counts, the doctor's checks, the sync state); the
//!   viewer's pages themselves are
//!   [`crate::viewer`].
//!
//! Adding a route: write a handler that takes `State<AppState>` and runs its
//! query through [`AppState::db`] (a pooled connection on a blocking
//! thread), returns `Result<Json<_>, ApiError>`, and add it to
//! `protected_routes`; the guards apply by themselves.

pub mod conn;
pub mod curate;
pub mod doctor;
pub mod guard;
pub mod ops;
pub mod projects;
pub mod recall;
pub mod records;
pub mod stream;
pub mod sync;

use std::path::PathBuf;
use std::sync::atomic::{AtomicI64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post, put};
use mnemo_core::{Config, DataDir};
use mnemo_store::Store;
use mnemo_store::ledger::Exhausted;
use serde_json::json;
use tokio::sync::{broadcast, watch};

/// An API error: a status and a message, sent as `{"error": message}`,
/// with what else the client can act on (e.g. `missing` ids).
#[derive(Debug)]
pub struct ApiError {
    pub status: StatusCode,
    pub message: String,
    pub details: serde_json::Map<String, serde_json::Value>,
}

impl ApiError {
    pub fn new(status: StatusCode, message: impl Into<String>) -> ApiError {
        ApiError {
            status,
            message: message.into(),
            details: serde_json::Map::new(),
        }
    }

    /// Adds a field to the error's JSON.
    pub fn with(mut self, key: &str, value: serde_json::Value) -> ApiError {
        self.details.insert(key.to_owned(), value);
        self
    }

    pub fn bad_request(message: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::BAD_REQUEST, message)
    }

    pub fn not_found(message: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::NOT_FOUND, message)
    }

    pub fn internal(message: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, message)
    }
}

impl From<mnemo_store::StoreError> for ApiError {
    fn from(e: mnemo_store::StoreError) -> Self {
        let status = match e.failure() {
            mnemo_store::Failure::Locked => StatusCode::SERVICE_UNAVAILABLE,
            _ => StatusCode::INTERNAL_SERVER_ERROR,
        };
        ApiError::new(status, e.to_string())
    }
}

impl From<rusqlite::Error> for ApiError {
    fn from(e: rusqlite::Error) -> Self {
        ApiError::internal(format!("database: {e}"))
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let mut body = self.details;
        body.insert("error".to_owned(), json!(self.message));
        (self.status, axum::Json(body)).into_response()
    }
}

/// Database connections for request handlers. rusqlite is synchronous, so
/// each query runs on a blocking thread with a connection taken from here
/// (or opened when none is idle); the queue writer has its own.
pub struct DbPool {
    path: PathBuf,
    busy: Duration,
    idle: Mutex<Vec<Store>>,
    max_idle: usize,
}

impl DbPool {
    pub fn new(path: PathBuf, busy: Duration, max_idle: usize) -> DbPool {
        DbPool {
            path,
            busy,
            idle: Mutex::new(Vec::new()),
            max_idle,
        }
    }

    fn take(&self) -> Result<Store, ApiError> {
        let pooled = self.idle.lock().ok().and_then(|mut idle| idle.pop());
        match pooled {
            Some(store) => Ok(store),
            None => Ok(Store::open(&self.path, self.busy)?),
        }
    }

    fn give_back(&self, store: Store) {
        if let Ok(mut idle) = self.idle.lock()
            && idle.len() < self.max_idle
        {
            idle.push(store);
        }
    }
}

/// An event for `/api/stream` subscribers.
#[derive(Debug, Clone)]
pub struct StreamEvent {
    /// `observation` or `summary`.
    pub kind: &'static str,
    pub data: Arc<serde_json::Value>,
}

/// What every handler can reach.
pub struct Shared {
    pub data: DataDir,
    pub config: Config,
    pub token: String,
    pub port: u16,
    pub pid: u32,
    pub started_at_ms: i64,
    /// The provider compressing (`offline` when the configured one could
    /// not be set up).
    pub provider: String,
    /// Why the configured provider could not be set up.
    pub provider_error: Option<String>,
    pub pool: Arc<DbPool>,
    pub stream: broadcast::Sender<StreamEvent>,
    /// Open `/api/stream` connections (an idle worker with a watcher stays up).
    pub sse_clients: AtomicUsize,
    /// When the worker last did something (a batch or a request), epoch ms.
    pub last_activity_ms: AtomicI64,
    /// The spent budget, while one is.
    pub budget: Mutex<Option<Exhausted>>,
    /// Set to true to stop the worker gracefully.
    pub shutdown: watch::Sender<bool>,
    /// The viewer's one-time links and sessions.
    pub logins: crate::viewer::login::Logins,
}

#[derive(Clone)]
pub struct AppState(pub Arc<Shared>);

impl std::ops::Deref for AppState {
    type Target = Shared;
    fn deref(&self) -> &Shared {
        &self.0
    }
}

impl AppState {
    /// Runs `query` with a pooled connection on a blocking thread.
    pub async fn db<T, F>(&self, query: F) -> Result<T, ApiError>
    where
        T: Send + 'static,
        F: FnOnce(&mut Store) -> Result<T, ApiError> + Send + 'static,
    {
        let pool = self.pool.clone();
        tokio::task::spawn_blocking(move || {
            let mut store = pool.take()?;
            let result = query(&mut store);
            pool.give_back(store);
            result
        })
        .await
        .map_err(|e| ApiError::internal(format!("query task: {e}")))?
    }

    pub fn touch(&self) {
        self.last_activity_ms
            .store(mnemo_core::time::now_ms(), Ordering::Relaxed);
    }

    pub fn budget_state(&self) -> Option<Exhausted> {
        self.budget.lock().ok().and_then(|b| b.clone())
    }

    pub fn request_shutdown(&self) {
        let _ = self.shutdown.send(true);
    }
}

/// Routes that need the token.
fn protected_routes() -> Router<AppState> {
    Router::new()
        .route("/api/sessions", get(records::sessions))
        .route("/api/observations", get(records::observations))
        .route("/api/observations/batch", post(records::observations_batch))
        .route(
            "/api/observations/{id}",
            get(records::observation).patch(curate::edit),
        )
        .route("/api/observations/{id}/pin", put(curate::pin))
        .route("/api/forget", post(curate::forget))
        .route("/api/redact", post(curate::redact))
        .route("/api/summaries", get(records::summaries))
        .route("/api/prompts", get(records::prompts))
        .route("/api/search", get(recall::search))
        .route("/api/timeline/{id}", get(recall::timeline))
        .route("/api/context", get(recall::context))
        .route("/api/stats", get(ops::stats))
        .route("/api/queue", get(ops::queue))
        .route("/api/queue/retry", post(ops::retry))
        .route("/api/shutdown", post(ops::shutdown))
        .route("/api/stream", get(stream::stream))
        .route("/api/projects", get(projects::projects))
        .route("/api/doctor", get(doctor::doctor))
        .route("/api/sync", get(sync::sync))
        .route("/api/viewer/link", post(crate::viewer::login::link))
}

/// The whole API.
pub fn router(state: AppState) -> Router {
    let protected = protected_routes().route_layer(axum::middleware::from_fn_with_state(
        state.clone(),
        guard::require_token,
    ));
    Router::new()
        .route("/api/health", get(ops::health))
        .merge(crate::viewer::public_routes())
        .merge(protected)
        .fallback(|| async { ApiError::not_found("no such route") })
        .layer(axum::middleware::from_fn_with_state(
            state.clone(),
            guard::local_only,
        ))
        .layer(axum::middleware::from_fn(
            crate::viewer::headers::security_headers,
        ))
        .with_state(state)
}
