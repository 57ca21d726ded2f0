//! The web viewer: pages served by the worker on its loopback port.
//!
//! Layout:
//! - [`assets`]: the HTML, scripts and styles, embedded in the binary and
//!   served as they are (no build step);
//! - [`login`]: the one-time links `mnemo open` asks for, and the session
//!   secrets they turn into, sent as a header ([`super::api::guard`]
//!   accepts them);
//! - [`headers`]: the security headers on every response (a strict CSP,
//!   no framing, no sniffing, no referrer).
//!
//! The viewer reads and changes memory only through the HTTP API, so every
//! record it shows is the API's record shape.

pub mod assets;
pub mod headers;
pub mod login;

use axum::Router;
use axum::routing::get;

use crate::api::AppState;

/// The routes that need no credentials: the page shell, its assets (no
/// data in either), the sign-in page and its exchange of a one-time link.
pub fn public_routes() -> Router<AppState> {
    Router::new()
        .route("/", get(assets::index))
        .route("/assets/{*path}", get(assets::asset))
        .route("/login", get(assets::login).post(login::redeem))
}
