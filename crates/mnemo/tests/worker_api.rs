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
    // The viewer's cookie works as well.
    let cookie = format!("Cookie: theme=dark; mnemo_token={}\r\n", w.token);
    let (code, _, _) = request(p, &format!("GET /api/stats HTTP/1.1\r\n{host}{cookie}"));
    assert_eq!(code, 200);
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
            .all(|o| o["project"] == json!(blog) && o["session"] == s2)
    );
    let (_, by_session) = w.get(&format!("/api/observations?session={s1}"));
    assert_eq!(by_session["total"], shop_list["total"]);
    let kind = all["items"][0]["type"].as_str().unwrap().to_owned();
    let (_, by_type) = w.get(&format!("/api/observations?type={kind}"));
    assert!(by_type["total"].as_i64().unwrap() >= 1);
    let (_, none) = w.get("/api/observations?type=no-such-type");
    assert_eq!(none["total"], 0);
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
    assert_eq!(sessions["items"][0]["session"], s1);
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
                assert_eq!(data["session"], session);
                assert_eq!(data["project"], json!(proj));
                assert!(data["id"].as_i64().is_some());
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
