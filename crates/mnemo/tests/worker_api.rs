//! The worker's HTTP API over real loopback HTTP: who may talk to it (token,
//! Host, Origin), the record routes with filters and paging, errors as JSON,
//! and the live stream fed by real hooks.

mod common;
#[path = "common/worker.rs"]
mod worker_support;

use std::time::Duration;

use common::*;
use serde_json::{Value, json};
use worker_support::*;

const T: Duration = Duration::from_secs(30);

fn request(port: u16, head: &str) -> (u16, String, Value) {
    let (status, head, body) = raw(port, &format!("{head}Connection: close\r\n\r\n"));
    (
        status,
        head,
        serde_json::from_str(&body).unwrap_or(Value::Null),
    )
}

#[test]
fn token_host_and_origin_checks_hold() {
    let env = Env::new();
    let w = Worker::start(&env, |_| {});
    let p = w.port;
    let host = format!("Host: 127.0.0.1:{p}\r\n");
    let auth = format!("Authorization: Bearer {}\r\n", w.token);

    // Health is open; nothing else is.
    let (code, _, body) = request(p, &format!("GET /api/health HTTP/1.1\r\n{host}"));
    assert_eq!((code, body["status"].as_str()), (200, Some("ok")));
    for path in [
        "/api/observations",
        "/api/sessions",
        "/api/summaries",
        "/api/prompts",
        "/api/stats",
        "/api/queue",
        "/api/stream",
    ] {
        let (code, head, body) = request(p, &format!("GET {path} HTTP/1.1\r\n{host}"));
        assert_eq!(code, 401, "{path} without a token");
        assert!(body["error"].as_str().unwrap().contains("token"), "{body}");
        assert!(
            head.to_ascii_lowercase()
                .contains("www-authenticate: bearer")
        );
    }
    let wrong = "Authorization: Bearer 0000000000000000000000000000000000000000000000000000000000000000\r\n";
    let (code, _, body) = request(p, &format!("GET /api/stats HTTP/1.1\r\n{host}{wrong}"));
    assert_eq!(code, 401);
    assert!(body["error"].as_str().unwrap().contains("wrong token"));
    let (code, _, _) = request(p, &format!("GET /api/stats HTTP/1.1\r\n{host}{auth}"));
    assert_eq!(code, 200);
    // The token is no cookie: the viewer's session cookie comes from a
    // one-time link (tests/viewer_browser.rs).
    let cookie = format!("Cookie: theme=dark; mnemo_token={}\r\n", w.token);
    let (code, _, _) = request(p, &format!("GET /api/stats HTTP/1.1\r\n{host}{cookie}"));
    assert_eq!(code, 401);
    let (code, _, _) = request(
        p,
        &format!("GET /api/stats HTTP/1.1\r\n{host}Cookie: mnemo_token=nope\r\n"),
    );
    assert_eq!(code, 401);

    // DNS rebinding: a foreign Host is refused, token or not, health included.
    for path in ["/api/health", "/api/stats"] {
        let (code, _, body) = request(
            p,
            &format!("GET {path} HTTP/1.1\r\nHost: evil.example\r\n{auth}"),
        );
        assert_eq!(code, 403, "{path}");
        assert!(body["error"].as_str().unwrap().contains("evil.example"));
    }
    let (code, _, _) = request(
        p,
        &format!("GET /api/health HTTP/1.1\r\nHost: evil.example:{p}\r\n"),
    );
    assert_eq!(code, 403);
    let (code, _, _) = request(
        p,
        &format!("GET /api/health HTTP/1.1\r\nHost: localhost:{p}\r\n"),
    );
    assert_eq!(code, 200);

    // A foreign page's Origin is refused and never granted CORS.
    let (code, head, _) = request(
        p,
        &format!("GET /api/stats HTTP/1.1\r\n{host}{auth}Origin: https://evil.example\r\n"),
    );
    assert_eq!(code, 403);
    assert!(!head.to_ascii_lowercase().contains("access-control-allow"));
    let (code, head, _) = request(
        p,
        &format!(
            "OPTIONS /api/stats HTTP/1.1\r\n{host}Origin: https://evil.example\r\n\
             Access-Control-Request-Method: GET\r\n"
        ),
    );
    assert_eq!(code, 403);
    assert!(!head.to_ascii_lowercase().contains("access-control-allow"));
    let (code, head, _) = request(
        p,
        &format!("GET /api/stats HTTP/1.1\r\n{host}{auth}Origin: http://127.0.0.1:{p}\r\n"),
    );
    assert_eq!(code, 200);
    assert!(!head.to_ascii_lowercase().contains("access-control-allow"));

    // Errors are JSON with a message.
    let (code, _, body) = request(p, &format!("GET /api/nope HTTP/1.1\r\n{host}{auth}"));
    assert_eq!(code, 404);
    assert!(body["error"].is_string());
    let (code, _, body) = request(
        p,
        &format!("GET /api/observations?since=someday HTTP/1.1\r\n{host}{auth}"),
    );
    assert_eq!(code, 400);
    assert!(
        body["error"].as_str().unwrap().contains("someday"),
        "{body}"
    );
    let (code, _, body) = request(
        p,
        &format!("GET /api/observations?limit=lots HTTP/1.1\r\n{host}{auth}"),
    );
    assert_eq!(code, 400, "{body}");
    assert!(body["error"].is_string());
    let (code, body) = w.post("/api/observations/batch", &json!({ "ids": "1" }));
    assert_eq!(code, 400);
    assert!(body["error"].is_string());
    let (code, body) = w.get("/api/observations/999");
    assert_eq!(code, 404);
    assert!(body["error"].as_str().unwrap().contains("999"));
}

#[test]
fn record_routes_filter_and_page() {
    let env = Env::new();
    let shop = project(&env, "shop");
    let blog = project(&env, "blog");
    let w = Worker::start(&env, |_| {});
    let s1 = "10000000-0000-0000-0000-000000000001";
    let s2 = "20000000-0000-0000-0000-000000000002";
    session_start(&env, &shop, s1);
    turn(
        &env,
        &shop,
        s1,
        1,
        &["a.rs", "b.rs", "c.rs", "d.rs", "e.rs"],
    );
    session_start(&env, &blog, s2);
    turn(&env, &blog, s2, 1, &["post.md"]);
    wait_all_done(&env, T);

    let (_, all) = w.get("/api/observations?limit=500");
    let total = all["total"].as_i64().unwrap();
    assert!(total >= 2);
    let (_, shop_list) = w.get(&format!("/api/observations?project={}", shop.display()));
    let (_, blog_list) = w.get("/api/observations?project=blog");
    assert_eq!(
        shop_list["total"].as_i64().unwrap() + blog_list["total"].as_i64().unwrap(),
        total
    );
    assert!(
        blog_list["items"]
            .as_array()
            .unwrap()
            .iter()
            .all(|o| o["project"] == json!({"root": blog, "name": "blog"})
                && o["session"] == json!({"platform": "claude-code", "session_id": s2}))
    );
    let (_, by_session) = w.get(&format!("/api/observations?session={s1}"));
    assert_eq!(by_session["total"], shop_list["total"]);
    let kind = all["items"][0]["type"].as_str().unwrap().to_owned();
    let (_, by_type) = w.get(&format!("/api/observations?type={kind}"));
    assert!(by_type["total"].as_i64().unwrap() >= 1);
    let (code, none) = w.get("/api/observations?type=no-such-type");
    assert_eq!(code, 400, "an unknown type is an error, not an empty list");
    assert!(none["error"].as_str().unwrap().contains("bugfix"), "{none}");
    let (_, future) = w.get("/api/observations?since=2999-01-01");
    assert_eq!(future["total"], 0);
    let (_, past) = w.get("/api/observations?until=2000-01-01T00:00:00Z");
    assert_eq!(past["total"], 0);

    // Paging: newest first, limit/offset and before-id agree.
    let ids: Vec<i64> = all["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["id"].as_i64().unwrap())
        .collect();
    assert!(ids.windows(2).all(|w| w[0] > w[1]), "newest first: {ids:?}");
    let (_, page1) = w.get("/api/observations?limit=1");
    assert_eq!(page1["items"][0]["id"], ids[0]);
    let before = page1["next_before"].as_i64().unwrap();
    let (_, page2) = w.get(&format!("/api/observations?limit=1&before={before}"));
    assert_eq!(page2["items"][0]["id"], ids[1]);
    let (_, page2b) = w.get("/api/observations?limit=1&offset=1");
    assert_eq!(page2b["items"][0]["id"], ids[1]);

    // One by id (or uid), a batch by ids in the order asked.
    let (code, one) = w.get(&format!("/api/observations/{}", ids[0]));
    assert_eq!(code, 200);
    assert_eq!(one["id"], ids[0]);
    for key in [
        "uid",
        "type",
        "title",
        "subtitle",
        "narrative",
        "facts",
        "concepts",
        "files_read",
        "files_modified",
        "created_at",
        "project",
        "session",
        "prompt_number",
    ] {
        assert!(one.get(key).is_some(), "{key} in {one}");
    }
    let (code, by_uid) = w.get(&format!(
        "/api/observations/{}",
        one["uid"].as_str().unwrap()
    ));
    assert_eq!((code, by_uid["id"].clone()), (200, one["id"].clone()));
    let wanted = [ids[1], 999_999, ids[0]];
    let (code, batch) = w.post("/api/observations/batch", &json!({ "ids": wanted }));
    assert_eq!(code, 200);
    assert_eq!(batch["missing"], json!(["#999999"]), "{batch}");
    let got: Vec<i64> = batch["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["id"].as_i64().unwrap())
        .collect();
    assert_eq!(got, [ids[1], ids[0]]);

    let (_, sums) = w.get("/api/summaries?project=shop");
    assert_eq!(sums["total"], 1);
    assert!(
        sums["items"][0]["request"]
            .as_str()
            .unwrap()
            .contains("turn 1")
    );
    let (_, prompts) = w.get(&format!("/api/prompts?session={s2}"));
    assert_eq!(prompts["total"], 1);
    let (_, sessions) = w.get("/api/sessions?project=shop");
    assert_eq!(sessions["total"], 1);
    assert_eq!(sessions["items"][0]["session_id"], s1);
    assert_eq!(sessions["items"][0]["project"]["root"], json!(shop));
    let (_, stats) = w.get("/api/stats");
    assert_eq!(stats["store"]["summaries"], 2);
    assert_eq!(stats["queue"]["done"], 8);
}

#[test]
fn the_stream_delivers_observations_and_summaries_as_they_are_stored() {
    let env = Env::new();
    let proj = project(&env, "live");
    let w = Worker::start(&env, |_| {});
    let mut stream = Sse::connect(w.port, &w.token);
    let session = "30000000-0000-0000-0000-000000000003";
    turn(&env, &proj, session, 1, &["live.rs"]);
    let mut kinds = Vec::new();
    while !(kinds.contains(&"observation".to_owned()) && kinds.contains(&"summary".to_owned())) {
        let (kind, data) = stream
            .next_event(T)
            .unwrap_or_else(|| panic!("stream ended or timed out after {kinds:?}"));
        match kind.as_str() {
            "observation" => {
                assert_eq!(data["session"]["session_id"], session);
                assert_eq!(data["project"]["root"], json!(proj));
                let id = data["id"].as_i64().unwrap();
                assert_eq!(data["ref"], format!("#{id}"));
                assert!(
                    data["files_modified"].to_string().contains("live.rs"),
                    "{data}"
                );
            }
            "summary" => {
                assert!(
                    data["request"].as_str().unwrap().contains("live.rs"),
                    "{data}"
                );
            }
            other => panic!("unexpected event {other}: {data}"),
        }
        kinds.push(kind);
    }
    // While a client listens the worker does not count as idle; a graceful
    // stop ends the stream instead of hanging on it.
    w.signal(libc::SIGTERM);
    assert!(stream.next_event(T).is_none(), "stream closed at shutdown");
}

// ---- recall: search, timeline, context ----

/// Percent-encodes everything but unreserved characters.
fn enc(text: &str) -> String {
    text.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// Fills the store with `mnemo import` of JSON Lines, as a user would.
fn import(env: &Env, records: &[Value]) {
    let file = env.dir.path().join("import.jsonl");
    let text: String = records.iter().map(|r| format!("{r}\n")).collect();
    std::fs::write(&file, text).unwrap();
    let out = env.mnemo().arg("import").arg(&file).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// What the CLI prints as JSON for `args` (run from `dir`).
fn cli_json(env: &Env, dir: &std::path::Path, args: &[&str]) -> Value {
    let out = env.mnemo().current_dir(dir).args(args).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

fn titles(results: &Value) -> Vec<String> {
    results["hits"]
        .as_array()
        .unwrap_or_else(|| panic!("hits in {results}"))
        .iter()
        .map(|h| h["title"].as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn recall_routes_answer_as_the_cli_does() {
    let env = Env::new();
    let shop = project(&env, "shop");
    let blog = project(&env, "blog");
    let now = mnemo_core::time::now_ms();
    let at = |hours_ago: i64| mnemo_core::time::format_rfc3339(now - hours_ago * 3_600_000);
    let s1 = "40000000-0000-0000-0000-000000000004";
    let s2 = "50000000-0000-0000-0000-000000000005";
    import(
        &env,
        &[
            json!({"kind": "observation", "project": shop, "session_id": s1, "type": "bugfix",
                   "title": "Fix the auth token check", "narrative": "Tokens were compared naively.",
                   "files_modified": [shop.join("src/auth.rs")], "created_at": at(2)}),
            json!({"kind": "observation", "project": shop, "session_id": s1, "type": "decision",
                   "title": "Auth sessions use cookies", "narrative": "Cookies over headers.",
                   "created_at": at(72)}),
            json!({"kind": "observation", "project": blog, "session_id": s2, "type": "feature",
                   "title": "Auth page for the blog", "narrative": "A login page.",
                   "files_modified": [blog.join("auth.md")], "created_at": at(1)}),
            json!({"kind": "summary", "project": shop, "session_id": s1,
                   "request": "fix the login", "completed": "auth token check fixed",
                   "created_at": at(2)}),
        ],
    );
    let w = Worker::start(&env, |_| {});
    let p = w.port;
    let host = format!("Host: 127.0.0.1:{p}\r\n");

    // Every project by default (the API has no current directory).
    let (code, all) = w.get("/api/search?q=auth");
    assert_eq!(code, 200, "{all}");
    let all_titles = titles(&all);
    for t in [
        "Fix the auth token check",
        "Auth sessions use cookies",
        "Auth page for the blog",
    ] {
        assert!(all_titles.contains(&t.to_owned()), "{t} in {all_titles:?}");
    }
    // The same JSON as `mnemo search --json`.
    assert_eq!(
        all,
        cli_json(&env, &shop, &["search", "--json", "--all", "auth"])
    );
    let (_, explicit_all) = w.get("/api/search?q=auth&project=all");
    assert_eq!(explicit_all, all);

    // Filters.
    let (code, in_shop) = w.get(&format!(
        "/api/search?q=auth&project={}",
        enc(&shop.display().to_string())
    ));
    assert_eq!(code, 200, "{in_shop}");
    assert!(!titles(&in_shop).contains(&"Auth page for the blog".to_owned()));
    assert!(titles(&in_shop).contains(&"Fix the auth token check".to_owned()));
    assert_eq!(
        in_shop,
        cli_json(&env, &shop, &["search", "--json", "auth"]),
        "a project by directory, as from inside it"
    );
    let (_, in_blog) = w.get("/api/search?q=auth&project=blog");
    assert_eq!(titles(&in_blog), ["Auth page for the blog"]);
    let (_, decisions) = w.get("/api/search?q=auth&type=decision");
    assert_eq!(titles(&decisions), ["Auth sessions use cookies"]);
    let (_, two_types) = w.get("/api/search?q=auth&type=decision,feature");
    assert_eq!(
        two_types["hits"].as_array().unwrap().len(),
        2,
        "{two_types}"
    );
    let (_, recent) = w.get("/api/search?q=auth&type=bugfix,decision,feature&since=2d");
    assert!(!titles(&recent).contains(&"Auth sessions use cookies".to_owned()));
    assert_eq!(titles(&recent).len(), 2, "{recent}");
    let (_, old) = w.get(&format!("/api/search?q=auth&until={}", enc(&at(48))));
    assert_eq!(titles(&old), ["Auth sessions use cookies"]);
    let (_, by_file) = w.get(&format!(
        "/api/search?project=shop&file={}",
        enc("src/auth.rs")
    ));
    assert_eq!(titles(&by_file), ["Fix the auth token check"]);
    let (_, by_session) = w.get(&format!("/api/search?q=auth&session={}", &s2[..8]));
    assert_eq!(titles(&by_session), ["Auth page for the blog"]);
    let (_, one) = w.get("/api/search?q=auth&limit=1");
    assert_eq!(one["hits"].as_array().unwrap().len(), 1);

    // Any text is a query: punctuation, quotes, FTS syntax, nothing at all.
    for nasty in [
        "\"src/auth.rs\" AND -( *",
        "\"",
        "NEAR(a b",
        "auth:*^",
        "'; DROP TABLE observations; --",
        "",
        " ",
    ] {
        let (code, body) = w.get(&format!("/api/search?q={}", enc(nasty)));
        assert_eq!(code, 200, "{nasty:?}: {body}");
        assert!(body["hits"].is_array(), "{nasty:?}: {body}");
    }
    let (_, nasty) = w.get(&format!(
        "/api/search?q={}",
        enc("\"src/auth.rs\" AND -( *")
    ));
    assert_eq!(
        nasty,
        cli_json(
            &env,
            &shop,
            &[
                "search",
                "--json",
                "--all",
                "--",
                "\"src/auth.rs\" AND -( *"
            ]
        )
    );

    // Timeline around a hit, as `mnemo timeline ID --json`.
    let fix = in_shop["hits"]
        .as_array()
        .unwrap()
        .iter()
        .find(|h| h["title"] == "Fix the auth token check")
        .unwrap()["ref"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(fix.starts_with('#'), "{fix}");
    let (code, tl) = w.get(&format!("/api/timeline/{}", enc(&fix)));
    assert_eq!(code, 200, "{tl}");
    assert_eq!(tl["anchor"], json!(fix));
    assert_eq!(tl["project"]["root"], json!(shop));
    assert_eq!(tl, cli_json(&env, &shop, &["timeline", &fix, "--json"]));
    let (code, narrow) = w.get(&format!("/api/timeline/{}?before=0&after=0", &fix[1..]));
    assert_eq!(code, 200, "{narrow}");
    assert_eq!(narrow["entries"].as_array().unwrap().len(), 1, "{narrow}");
    assert_eq!(
        narrow,
        cli_json(
            &env,
            &shop,
            &["timeline", &fix, "-b", "0", "-a", "0", "--json"]
        )
    );

    // Context: the SessionStart index of a project, as `mnemo context --json`.
    let (code, index) = w.get(&format!(
        "/api/context?project={}",
        enc(&shop.display().to_string())
    ));
    assert_eq!(code, 200, "{index}");
    let text = index["text"].as_str().unwrap();
    assert!(text.starts_with("<mnemo-context>"), "{text}");
    assert!(text.contains("Fix the auth token check"), "{text}");
    let cli = cli_json(&env, &shop, &["context", "--json"]);
    for key in [
        "project",
        "root",
        "observations_total",
        "observations_shown",
        "summaries_shown",
        "empty",
    ] {
        assert_eq!(index[key], cli[key], "{key}");
    }
    // By name, as search takes it.
    let (code, by_name) = w.get("/api/context?project=shop");
    assert_eq!(code, 200, "{by_name}");
    assert_eq!(by_name["root"], index["root"]);
    assert_eq!(by_name["observations_total"], index["observations_total"]);
    let fresh = project(&env, "fresh");
    let (code, empty) = w.get(&format!(
        "/api/context?project={}",
        enc(&fresh.display().to_string())
    ));
    assert_eq!(
        (code, empty["empty"].clone()),
        (200, json!(true)),
        "{empty}"
    );
    // A real directory with nothing recorded: no hits, not an error.
    let (code, none) = w.get(&format!(
        "/api/search?q=auth&project={}",
        enc(&fresh.display().to_string())
    ));
    assert_eq!((code, none["hits"].clone()), (200, json!([])), "{none}");

    // The token guard holds.
    for path in [
        "/api/search?q=auth",
        "/api/timeline/1",
        "/api/context?project=/",
    ] {
        let (code, _, body) = request(p, &format!("GET {path} HTTP/1.1\r\n{host}"));
        assert_eq!(code, 401, "{path}: {body}");
    }

    // Bad parameters are 400s that say what is wrong; unknown ids are 404s.
    for (path, says) in [
        ("/api/search?q=auth&since=someday", "someday"),
        ("/api/search?until=later", "later"),
        ("/api/search?limit=lots", "limit"),
        ("/api/search?project=no-such-project", "no-such-project"),
        ("/api/search?project=%2Fno%2Fsuch%2Fdir", "/no/such/dir"),
        ("/api/timeline/xyz", "xyz"),
        ("/api/timeline/1?before=many", "before"),
        ("/api/context", "project"),
        ("/api/context?project=no-such-project", "no-such-project"),
        ("/api/context?project=%2Fno%2Fsuch%2Fdir", "/no/such/dir"),
    ] {
        let (code, body) = w.get(path);
        assert_eq!(code, 400, "{path}: {body}");
        let error = body["error"]
            .as_str()
            .unwrap_or_else(|| panic!("{path}: {body}"));
        assert!(error.contains(says), "{path}: {error}");
    }
    for id in ["999999", "S999", "P999", "%23999"] {
        let (code, body) = w.get(&format!("/api/timeline/{id}"));
        assert_eq!(code, 404, "{id}: {body}");
        assert!(body["error"].as_str().unwrap().contains("999"), "{body}");
    }
}
