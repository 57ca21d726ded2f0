//! `mnemo server`: the sync server. Stateless (every durable thing is in
//! PostgreSQL, so instances behind a load balancer share one database);
//! what it keeps in memory is only per-instance: the rate limiter's
//! buckets and the `/metrics` counters. It stores opaque blobs it cannot
//! read. HTTPS when given a certificate ([`tls`]); otherwise plain HTTP,
//! for a reverse proxy that terminates TLS in front of it.

mod db;
mod limits;
mod records;
mod routes;
pub mod tls;

use std::net::SocketAddr;
use std::sync::Arc;

use axum::Json;
use axum::extract::DefaultBodyLimit;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{delete, get, post};

use crate::crypto::token_hash;
use crate::wire::ErrorBody;

pub use db::Pool;
use limits::{Metrics, RateLimiter};

/// What `mnemo server` is started with.
#[derive(Debug, Clone)]
pub struct ServerConfig {
    pub database_url: String,
    pub listen: SocketAddr,
    /// Bytes of blobs one space may hold.
    pub space_quota_bytes: i64,
    /// Requests one device may make per minute (per instance).
    pub requests_per_minute: u32,
    /// The largest request body accepted.
    pub max_request_bytes: usize,
    /// Serve HTTPS with this certificate and key (None: plain HTTP).
    pub tls: Option<tls::TlsFiles>,
}

pub(crate) struct AppState {
    pool: Pool,
    config: ServerConfig,
    limiter: RateLimiter,
    metrics: Metrics,
}

type State = axum::extract::State<Arc<AppState>>;

/// Migrates the database, then serves until the process is stopped.
pub async fn serve(config: ServerConfig) -> anyhow::Result<()> {
    // A certificate that cannot serve is reported before anything starts.
    let acceptor = config.tls.as_ref().map(tls::acceptor).transpose()?;
    let pool = Pool::new(&config.database_url, 8);
    db::migrate(&pool)
        .await
        .map_err(|e| anyhow::anyhow!("cannot prepare the database: {e}"))?;
    let listener = tokio::net::TcpListener::bind(config.listen)
        .await
        .map_err(|e| anyhow::anyhow!("cannot listen on {}: {e}", config.listen))?;
    let state = Arc::new(AppState {
        pool,
        limiter: RateLimiter::new(config.requests_per_minute),
        metrics: Metrics::default(),
        config,
    });
    let address = listener.local_addr()?;
    let app = router(state);
    match acceptor {
        Some(acceptor) => {
            eprintln!("mnemo server listening on {address} (https)");
            axum::serve(tls::TlsListener::new(listener, acceptor)?, app).await?;
        }
        None => {
            eprintln!("mnemo server listening on {address} (http)");
            axum::serve(listener, app).await?;
        }
    }
    Ok(())
}

fn router(state: Arc<AppState>) -> axum::Router {
    let limit = state.config.max_request_bytes;
    axum::Router::new()
        .route("/health", get(routes::health))
        .route("/metrics", get(limits::metrics))
        .route("/v1/register", post(routes::register))
        .route("/v1/join", post(routes::join))
        .route("/v1/device", delete(routes::revoke_device))
        .route("/v1/spaces", get(routes::spaces).post(routes::create_space))
        .route(
            "/v1/spaces/{id}/members",
            get(routes::members).post(routes::invite),
        )
        .route("/v1/spaces/{id}/members/self", delete(routes::leave))
        .route("/v1/spaces/{id}/rotate", post(routes::rotate))
        .route(
            "/v1/spaces/{id}/records",
            get(records::pull).post(records::push),
        )
        .layer(DefaultBodyLimit::max(limit))
        .with_state(state)
}

/// An answer other than success: a status and a message for the client.
#[derive(Debug)]
pub(crate) struct ApiError(StatusCode, String);

impl ApiError {
    pub(crate) fn new(status: StatusCode, message: impl Into<String>) -> ApiError {
        ApiError(status, message.into())
    }
}

impl From<tokio_postgres::Error> for ApiError {
    fn from(e: tokio_postgres::Error) -> Self {
        tracing::warn!("database: {e}");
        ApiError(
            StatusCode::SERVICE_UNAVAILABLE,
            "the database is unavailable; retry later".into(),
        )
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        (self.0, Json(ErrorBody { error: self.1 })).into_response()
    }
}

pub(crate) type ApiResult<T> = Result<Json<T>, ApiError>;

/// The device and person behind a request's bearer token.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Caller {
    pub user: i64,
    pub device: i64,
}

/// Checks the bearer token (revoked tokens are refused) and the device's
/// rate limit.
pub(crate) async fn caller(state: &AppState, headers: &HeaderMap) -> Result<Caller, ApiError> {
    state.metrics.request();
    let token = headers
        .get(axum::http::header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .ok_or_else(|| ApiError::new(StatusCode::UNAUTHORIZED, "no device token"))?;
    let conn = state.pool.get().await?;
    let row = conn
        .query_opt(
            "SELECT user_id, id FROM devices WHERE token_hash = $1 AND revoked_at IS NULL",
            &[&token_hash(token)],
        )
        .await?
        .ok_or_else(|| {
            ApiError::new(StatusCode::UNAUTHORIZED, "unknown or revoked device token")
        })?;
    let caller = Caller {
        user: row.get(0),
        device: row.get(1),
    };
    if !state.limiter.allow(caller.device) {
        state.metrics.rate_limited();
        return Err(ApiError::new(
            StatusCode::TOO_MANY_REQUESTS,
            "rate limit reached; retry in a minute",
        ));
    }
    Ok(caller)
}
