//! The viewer's files, embedded at compile time from `assets/viewer/`.
//!
//! The page is one HTML shell that loads ES modules; there is no bundler,
//! so what is served is what is in the repository.

use axum::extract::Path;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};

/// One embedded file: its URL path under `/assets/`, its type, its bytes.
struct Asset {
    path: &'static str,
    mime: &'static str,
    body: &'static str,
}

macro_rules! asset {
    ($path:literal, $mime:expr) => {
        Asset {
            path: $path,
            mime: $mime,
            body: include_str!(concat!("../../assets/viewer/", $path)),
        }
    };
}

const JS: &str = "text/javascript; charset=utf-8";

const ASSETS: &[Asset] = &[
    asset!("style.css", "text/css; charset=utf-8"),
    asset!("icon.svg", "image/svg+xml"),
    asset!("js/app.js", JS),
    asset!("js/api.js", JS),
    asset!("js/ui.js", JS),
    asset!("js/feed.js", JS),
    asset!("js/search.js", JS),
    asset!("js/detail.js", JS),
    asset!("js/sessions.js", JS),
    asset!("js/projects.js", JS),
    asset!("js/health.js", JS),
    asset!("js/context.js", JS),
    asset!("js/login.js", JS),
];

const INDEX: &str = include_str!("../../assets/viewer/index.html");
const LOGIN: &str = include_str!("../../assets/viewer/login.html");
const HTML: &str = "text/html; charset=utf-8";

/// Every file of a first load, for size checks: (path, bytes).
pub fn first_load() -> impl Iterator<Item = (&'static str, usize)> {
    std::iter::once(("/", INDEX.len())).chain(ASSETS.iter().map(|a| (a.path, a.body.len())))
}

/// `GET /`: the page shell.
pub async fn index() -> Response {
    serve(HTML, INDEX)
}

/// `GET /login?t=…`: the sign-in page (no data; its script redeems the
/// link, see [`super::login`]).
pub async fn login() -> Response {
    serve(HTML, LOGIN)
}

/// `GET /assets/{path}`.
pub async fn asset(Path(path): Path<String>) -> Response {
    match ASSETS.iter().find(|a| a.path == path) {
        Some(a) => serve(a.mime, a.body),
        None => (StatusCode::NOT_FOUND, "no such asset").into_response(),
    }
}

fn serve(mime: &'static str, body: &'static str) -> Response {
    let mut response = body.into_response();
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(mime));
    // Revalidated each load: a new worker version serves new files.
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_module_the_page_imports_is_served() {
        let all: String = ASSETS
            .iter()
            .map(|a| a.body)
            .chain([INDEX, LOGIN])
            .collect::<Vec<_>>()
            .join("\n");
        for line in all.lines() {
            let Some(from) = line.split(" from \"./").nth(1) else {
                continue;
            };
            let file = from.split('"').next().unwrap();
            let path = format!("js/{file}");
            assert!(
                ASSETS.iter().any(|a| a.path == path),
                "{path} is imported but not served"
            );
        }
    }

    #[test]
    fn no_inline_script_or_style() {
        for (name, text) in ASSETS
            .iter()
            .map(|a| (a.path, a.body))
            .chain([("index", INDEX), ("login", LOGIN)])
        {
            assert!(!text.contains(" style=\""), "{name} has a style attribute");
            assert!(!text.contains("onclick="), "{name} has an inline handler");
            assert!(
                !text.contains("innerHTML"),
                "{name} writes HTML from strings"
            );
        }
        for page in [INDEX, LOGIN] {
            assert!(!page.contains("<script>"), "inline script in a page");
            assert!(!page.contains("<style"), "inline style in a page");
        }
    }
}
