//! Who may talk to the worker.
//!
//! Listening on 127.0.0.1 keeps other machines out, but not a web page in
//! the user's own browser: a page can aim requests at localhost, and with
//! DNS rebinding a hostile domain can even resolve to 127.0.0.1 and read the
//! answers. So:
//! - every request must name the worker itself in `Host` (`127.0.0.1`,
//!   `localhost`, optionally with our port); a rebinding page sends its own
//!   domain there and gets 403; so does a request with two `Host` headers
//!   or an absolute-form target (`GET http://evil/ HTTP/1.1`), whose
//!   authority could disagree with the header that was checked;
//! - a request that carries an `Origin` (browsers add it to cross-origin and
//!   non-GET requests) must come from a page of the worker itself; no CORS
//!   headers are ever granted, so other pages cannot read answers either;
//! - a request that changes something (any method but GET, HEAD, OPTIONS)
//!   is also refused when the browser says it comes from another site or
//!   another port of this one (`Sec-Fetch-Site: cross-site` or `same-site`),
//!   whatever its `Origin`;
//! - every route but `/api/health` (and the viewer's page shell, assets and
//!   login link) needs the token from `worker.json` (mode 0600, so other
//!   users of the machine cannot read it) as `Authorization: Bearer …`, or
//!   the viewer's session secret from a one-time link in the
//!   `X-Mnemo-Session` header ([`crate::viewer::login`]). Cookies are never
//!   a credential: they ignore ports, so the browser would hand them to
//!   every other service on 127.0.0.1. Comparisons take the same time
//!   wherever they differ;
//! - a request that rides on the session must come from the viewer's own
//!   pages: a browser that says where a request comes from
//!   (`Sec-Fetch-Site`) must say `same-origin` (a page on another port of
//!   127.0.0.1 is `same-site`, and refused), and a mutation must carry our
//!   `Origin`.

use axum::extract::{Request, State};
use axum::http::{HeaderMap, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use super::{ApiError, AppState};
use crate::info::constant_time_eq;
use crate::viewer::login;
use mnemo_core::time::now_ms;

/// Host and Origin checks, for every route.
pub async fn local_only(State(app): State<AppState>, request: Request, next: Next) -> Response {
    if let Some(refusal) = ambiguous_target(&request) {
        return ApiError::new(StatusCode::BAD_REQUEST, refusal).into_response();
    }
    let headers = request.headers();
    let host = headers
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .unwrap_or("");
    if !is_local_host(host, app.port) {
        return ApiError::new(
            StatusCode::FORBIDDEN,
            format!(
                "Host `{host}` refused: the worker only answers requests addressed to 127.0.0.1 or localhost"
            ),
        )
        .into_response();
    }
    if let Some(origin) = headers.get(header::ORIGIN) {
        let origin = origin.to_str().unwrap_or("");
        if !is_local_origin(origin, app.port) {
            return ApiError::new(
                StatusCode::FORBIDDEN,
                format!("Origin `{origin}` refused: cross-origin requests are not allowed"),
            )
            .into_response();
        }
    }
    if let Some(refusal) = cross_site_mutation(&request) {
        return ApiError::new(StatusCode::FORBIDDEN, refusal).into_response();
    }
    app.touch();
    next.run(request).await
}

/// Why a request that changes memory is refused as cross-site, per the
/// browser's `Sec-Fetch-Site` (only the worker's own pages are `same-origin`;
/// tools that are not browsers send no such header).
fn cross_site_mutation(request: &Request) -> Option<String> {
    if request.method().is_safe() {
        return None;
    }
    let site = request
        .headers()
        .get("sec-fetch-site")
        .and_then(|v| v.to_str().ok())?
        .trim()
        .to_ascii_lowercase();
    matches!(site.as_str(), "cross-site" | "same-site").then(|| {
        format!(
            "{} refused: a request from another site (Sec-Fetch-Site: {site}) cannot change the memory",
            request.method()
        )
    })
}

/// Why a request's target is ambiguous: more than one `Host`, or a target
/// that names its own authority instead of being a path.
fn ambiguous_target(request: &Request) -> Option<String> {
    let hosts = request.headers().get_all(header::HOST).iter().count();
    if hosts > 1 {
        return Some(format!(
            "{hosts} Host headers: a request must carry exactly one"
        ));
    }
    let uri = request.uri();
    if uri.scheme().is_some() || uri.authority().is_some() {
        return Some(format!(
            "absolute-form target `{uri}` refused: send the path only (`GET /api/health`)"
        ));
    }
    None
}

/// The credentials check, for every route but health and the viewer's
/// public files.
pub async fn require_token(State(app): State<AppState>, request: Request, next: Next) -> Response {
    let refusal = match presented(request.headers()) {
        Credentials::Bearer(token) if constant_time_eq(token.as_bytes(), app.token.as_bytes()) => {
            return next.run(request).await;
        }
        Credentials::Session(id) if app.logins.is_session(&id, now_ms()) => {
            match cross_site(&request) {
                None => return next.run(request).await,
                Some(why) => return ApiError::new(StatusCode::FORBIDDEN, why).into_response(),
            }
        }
        Credentials::Bearer(_) => "wrong token; use the one in worker.json of the data directory",
        Credentials::Session(_) => {
            "the viewer's session has ended (the worker restarted?): run `mnemo open` to sign in again"
        }
        Credentials::None => {
            "missing token: send `Authorization: Bearer <token>` with the token from worker.json"
        }
    };
    let mut response = ApiError::new(StatusCode::UNAUTHORIZED, refusal).into_response();
    response.headers_mut().insert(
        header::WWW_AUTHENTICATE,
        header::HeaderValue::from_static("Bearer"),
    );
    response
}

/// Whether `headers` carry `Authorization: Bearer <token>` with this token.
pub fn has_bearer_token(headers: &HeaderMap, token: &str) -> bool {
    matches!(presented(headers), Credentials::Bearer(t) if constant_time_eq(t.as_bytes(), token.as_bytes()))
}

/// What a request presents.
#[derive(Debug, PartialEq, Eq)]
enum Credentials {
    Bearer(String),
    Session(String),
    None,
}

fn presented(headers: &HeaderMap) -> Credentials {
    let text = |name| headers.get(name).and_then(|v| v.to_str().ok());
    if let Some(value) = text(header::AUTHORIZATION.as_str()) {
        let value = value.trim();
        let token = value
            .strip_prefix("Bearer ")
            .or_else(|| value.strip_prefix("bearer "))
            .unwrap_or("");
        return Credentials::Bearer(token.trim().to_owned());
    }
    text(login::HEADER).map_or(Credentials::None, |id| {
        Credentials::Session(id.trim().to_owned())
    })
}

/// Why a session-authenticated request is refused as cross-site, if it is.
/// (`local_only` has already refused a foreign `Origin`.)
fn cross_site(request: &Request) -> Option<String> {
    let headers = request.headers();
    let site = headers
        .get("sec-fetch-site")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    if !site.is_empty() && site != "same-origin" && site != "none" {
        return Some(format!(
            "a {site} request cannot use the viewer's session: only the viewer's own pages can"
        ));
    }
    let safe = matches!(*request.method(), Method::GET | Method::HEAD);
    if !safe && !headers.contains_key(header::ORIGIN) {
        return Some(
            "a change made with the viewer's session must carry the viewer's Origin".to_owned(),
        );
    }
    None
}

/// `127.0.0.1`, `localhost`, either with our port.
pub fn is_local_host(host: &str, port: u16) -> bool {
    let (name, host_port) = match host.rsplit_once(':') {
        Some((name, p)) => (name, Some(p)),
        None => (host, None),
    };
    let name_ok = name == "127.0.0.1" || name.eq_ignore_ascii_case("localhost");
    let port_ok = host_port.is_none_or(|p| p.parse::<u16>().is_ok_and(|p| p == port));
    name_ok && port_ok
}

fn is_local_origin(origin: &str, port: u16) -> bool {
    origin
        .strip_prefix("http://")
        .is_some_and(|rest| is_local_host(rest.trim_end_matches('/'), port))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts() {
        assert!(is_local_host("127.0.0.1:4000", 4000));
        assert!(is_local_host("localhost", 4000));
        assert!(is_local_host("LOCALHOST:4000", 4000));
        assert!(!is_local_host("127.0.0.1:4001", 4000));
        assert!(!is_local_host("evil.example", 4000));
        assert!(!is_local_host("evil.example:4000", 4000));
        assert!(!is_local_host("127.0.0.1.evil.example:4000", 4000));
        assert!(!is_local_host("", 4000));
    }

    #[test]
    fn origins() {
        assert!(is_local_origin("http://127.0.0.1:4000", 4000));
        assert!(is_local_origin("http://localhost:4000", 4000));
        assert!(!is_local_origin("https://evil.example", 4000));
        assert!(!is_local_origin("http://localhost:5173", 4000));
        assert!(!is_local_origin("null", 4000));
    }

    #[test]
    fn token_or_session_from_headers_never_from_cookies() {
        let mut h = HeaderMap::new();
        assert_eq!(presented(&h), Credentials::None);
        h.insert(
            header::COOKIE,
            "mnemo_token=xyz; mnemo_session=xyz".parse().unwrap(),
        );
        assert_eq!(
            presented(&h),
            Credentials::None,
            "cookies are no credential"
        );
        h.insert(login::HEADER, "xyz".parse().unwrap());
        assert_eq!(presented(&h), Credentials::Session("xyz".into()));
        h.insert(header::AUTHORIZATION, "Bearer abc".parse().unwrap());
        assert_eq!(presented(&h), Credentials::Bearer("abc".into()));
    }

    fn request(method: Method, headers: &[(&str, &str)]) -> Request {
        let mut b = Request::builder().method(method).uri("/api/stats");
        for (k, v) in headers {
            b = b.header(*k, *v);
        }
        b.body(axum::body::Body::empty()).unwrap()
    }

    #[test]
    fn the_session_serves_only_same_origin_requests() {
        assert_eq!(cross_site(&request(Method::GET, &[])), None);
        let same = [("sec-fetch-site", "same-origin")];
        assert_eq!(cross_site(&request(Method::GET, &same)), None);
        for site in ["same-site", "cross-site"] {
            let r = request(Method::GET, &[("sec-fetch-site", site)]);
            assert!(cross_site(&r).unwrap().contains(site));
        }
        assert!(
            cross_site(&request(Method::POST, &same)).is_some(),
            "no Origin"
        );
        let with_origin = [
            ("sec-fetch-site", "same-origin"),
            ("origin", "http://127.0.0.1:1"),
        ];
        assert_eq!(cross_site(&request(Method::POST, &with_origin)), None);
    }
}
