//! Signing in to the viewer: one-time links and the session secrets they
//! become.
//!
//! `mnemo open` (holding the API token from `worker.json`) asks
//! `POST /api/viewer/link` for a link `/login?t=…`. Following it loads a
//! page whose script (`js/login.js`) trades the link, once and within
//! [`LINK_TTL_MS`], for a session secret with a same-origin
//! `POST /login`. The secret is never a cookie: cookies ignore ports, so
//! every other service on 127.0.0.1 the browser visits would receive it.
//! The page keeps it in `sessionStorage` (scoped to scheme, host and port)
//! and sends it as the [`HEADER`] header on every API request, which only
//! the viewer's own scripts can do. Sessions live in memory, so they end
//! with the worker, and end sooner when unused for [`SESSION_IDLE_MS`];
//! the API token itself never reaches the browser, and a session cannot
//! ask for a new link (only the token can).

use std::collections::HashMap;
use std::sync::Mutex;

use axum::Json;
use axum::extract::State;
use axum::extract::rejection::JsonRejection;
use axum::http::StatusCode;
use mnemo_core::time::now_ms;
use serde::Deserialize;
use serde_json::{Value, json};

use crate::api::{ApiError, AppState};
use crate::info::{constant_time_eq, new_token};

/// How long a login link stays valid.
pub const LINK_TTL_MS: i64 = 120_000;
/// How long a session stays open without a request.
pub const SESSION_IDLE_MS: i64 = 8 * 3_600_000;
/// The request header that carries the viewer's session secret.
pub const HEADER: &str = "x-mnemo-session";
/// At most this many unused links and open sessions are kept (the oldest go).
const MAX_KEPT: usize = 64;

/// Unused links and open sessions, each with when it was made (epoch ms).
#[derive(Default)]
pub struct Logins {
    links: Mutex<HashMap<String, i64>>,
    sessions: Mutex<HashMap<String, i64>>,
}

impl Logins {
    /// A new one-time link secret.
    pub fn issue_link(&self, now: i64) -> std::io::Result<String> {
        let secret = new_token()?;
        let mut links = self.links.lock().unwrap_or_else(|e| e.into_inner());
        links.retain(|_, made| now - *made < LINK_TTL_MS);
        keep_newest(&mut links);
        links.insert(secret.clone(), now);
        Ok(secret)
    }

    /// Uses up a link: a new session id, or None when the link is unknown,
    /// already used or expired.
    pub fn redeem(&self, secret: &str, now: i64) -> std::io::Result<Option<String>> {
        let made = {
            let mut links = self.links.lock().unwrap_or_else(|e| e.into_inner());
            let key = links
                .keys()
                .find(|k| constant_time_eq(k.as_bytes(), secret.as_bytes()))
                .cloned();
            key.and_then(|k| links.remove(&k))
        };
        match made {
            Some(made) if now - made < LINK_TTL_MS => {
                let session = new_token()?;
                let mut sessions = self.sessions.lock().unwrap_or_else(|e| e.into_inner());
                keep_newest(&mut sessions);
                sessions.insert(session.clone(), now);
                Ok(Some(session))
            }
            _ => Ok(None),
        }
    }

    /// Whether `id` is an open session at `now`: known, and used within
    /// [`SESSION_IDLE_MS`]. Using it keeps it open; an idle one is closed.
    pub fn is_session(&self, id: &str, now: i64) -> bool {
        let mut sessions = self.sessions.lock().unwrap_or_else(|e| e.into_inner());
        sessions.retain(|_, last| now - *last < SESSION_IDLE_MS);
        let key = sessions
            .keys()
            .find(|k| constant_time_eq(k.as_bytes(), id.as_bytes()))
            .cloned();
        match key.and_then(|k| sessions.get_mut(&k)) {
            Some(last) => {
                *last = now;
                true
            }
            None => false,
        }
    }
}

fn keep_newest(map: &mut HashMap<String, i64>) {
    while map.len() >= MAX_KEPT {
        let Some(oldest) = map.iter().min_by_key(|(_, t)| **t).map(|(k, _)| k.clone()) else {
            break;
        };
        map.remove(&oldest);
    }
}

/// `POST /api/viewer/link` (needs the token itself: a session cannot
/// mint links): a one-time login link.
pub async fn link(
    State(app): State<AppState>,
    headers: axum::http::HeaderMap,
) -> Result<Json<Value>, ApiError> {
    if !crate::api::guard::has_bearer_token(&headers, &app.token) {
        return Err(ApiError::new(
            StatusCode::FORBIDDEN,
            "a sign-in link needs the API token (`mnemo open`), not the viewer's session",
        ));
    }
    let secret = app
        .logins
        .issue_link(now_ms())
        .map_err(|e| ApiError::internal(format!("cannot make a login link: {e}")))?;
    Ok(Json(json!({
        "url": format!("http://127.0.0.1:{}/login?t={secret}", app.port),
        "expires_in_secs": LINK_TTL_MS / 1000,
        "single_use": true,
    })))
}

/// The body of `POST /login`: the one-time link's secret.
#[derive(Debug, Deserialize)]
pub struct Redeem {
    t: String,
}

/// `POST /login` `{"t": …}` (from the sign-in page's own script): uses up
/// the link and answers `{"session": …}`, which the page keeps in its
/// `sessionStorage`. No cookie is set.
pub async fn redeem(
    State(app): State<AppState>,
    body: Result<Json<Redeem>, JsonRejection>,
) -> Result<Json<Value>, ApiError> {
    let secret = body.map(|Json(b)| b.t).unwrap_or_default();
    match app.logins.redeem(&secret, now_ms()) {
        Ok(Some(session)) => Ok(Json(json!({ "session": session }))),
        Ok(None) => Err(ApiError::new(
            StatusCode::FORBIDDEN,
            "This sign-in link was already used or has expired. Run `mnemo open` for a new one.",
        )),
        Err(e) => Err(ApiError::internal(format!("cannot open a session: {e}"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_link_works_once_and_not_after_it_expires() {
        let logins = Logins::default();
        let link = logins.issue_link(1_000).unwrap();
        let session = logins.redeem(&link, 2_000).unwrap().expect("first use");
        assert!(logins.is_session(&session, 2_000));
        assert_eq!(logins.redeem(&link, 2_001).unwrap(), None, "second use");
        assert!(!logins.is_session(&link, 2_001), "a link is not a session");

        let late = logins.issue_link(10_000).unwrap();
        assert_eq!(logins.redeem(&late, 10_000 + LINK_TTL_MS).unwrap(), None);
        assert_eq!(logins.redeem("", 10_001).unwrap(), None);
        assert!(!logins.is_session("", 10_001));
    }

    #[test]
    fn a_session_used_stays_open_and_an_idle_one_closes() {
        let logins = Logins::default();
        let link = logins.issue_link(0).unwrap();
        let session = logins.redeem(&link, 0).unwrap().unwrap();
        let half = SESSION_IDLE_MS / 2;
        assert!(logins.is_session(&session, half));
        assert!(
            logins.is_session(&session, half * 2),
            "used at half: still open"
        );
        assert!(!logins.is_session(&session, half * 2 + SESSION_IDLE_MS));
        assert!(
            !logins.is_session(&session, half * 2 + 1),
            "closed for good"
        );
    }

    #[test]
    fn old_links_and_sessions_are_dropped_beyond_the_cap() {
        let logins = Logins::default();
        let first = logins.issue_link(0).unwrap();
        for t in 1..=MAX_KEPT as i64 {
            logins.issue_link(t).unwrap();
        }
        assert_eq!(logins.redeem(&first, 100).unwrap(), None);
    }
}
