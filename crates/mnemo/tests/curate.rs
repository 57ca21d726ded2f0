//! Curation end to end: forget, edit, pin, redact and retention through the
//! real `mnemo` binary on a real SQLite file, and the same operations over
//! the worker's HTTP API on 127.0.0.1 (token and same-origin required).

mod common;
#[path = "common/mcp.rs"]
mod mcp_support;
#[path = "common/worker.rs"]
mod worker_support;

use std::path::Path;
use std::time::Duration;

use common::*;
use mcp_support::McpClient;
use serde_json::{Value, json};
use worker_support::*;

const T: Duration = Duration::from_secs(60);

/// Sends `method path` with a JSON body and extra header lines; (status, JSON).
fn send(w: &Worker, method: &str, path: &str, body: &Value, extra: &str) -> (u16, Value) {
    let body = body.to_string();
    let (status, _, text) = raw(
        w.port,
        &format!(
            "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{}\r\n{extra}\
             Content-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            w.port,
            body.len()
        ),
    );
    (status, serde_json::from_str(&text).unwrap_or(Value::Null))
}

fn auth(w: &Worker) -> String {
    format!("Authorization: Bearer {}\r\n", w.token)
}

/// Two sessions of two turns in one project, compressed by a real worker.
fn two_sessions(env: &Env) -> (Worker, std::path::PathBuf) {
    let w = Worker::start(env, |_| {});
    let proj = project(env, "shop");
    for (session, files) in [
        ("sess-alpha", ["a.rs", "b.rs"]),
        ("sess-beta", ["c.rs", "d.rs"]),
    ] {
        session_start(env, &proj, session);
        turn(env, &proj, session, 1, &files[..1]);
        turn(env, &proj, session, 2, &files[1..]);
    }
    wait_all_done(env, T);
    wait_for("summaries", T, || {
        (env.count("SELECT count(*) FROM summaries") >= 4).then_some(())
    });
    (w, proj)
}

fn first_observation(env: &Env, session: &str) -> i64 {
    env.db()
        .query_row(
            "SELECT o.id FROM observations o JOIN sessions s ON s.id = o.session_id
             WHERE s.platform_session_id = ?1 ORDER BY o.id LIMIT 1",
            [session],
            |r| r.get(0),
        )
        .unwrap()
}

#[test]
fn http_edit_pin_forget_redact_and_stats() {
    let env = Env::new();
    let (w, proj) = two_sessions(&env);
    let a = auth(&w);
    let id = first_observation(&env, "sess-alpha");

    // Edit: the record comes back edited, and search finds the new words at once.
    let (code, rec) = send(
        &w,
        "PATCH",
        &format!("/api/observations/%23{id}"),
        &json!({"title": "Quokkas hold the cache lock", "facts": ["one fact"], "type": "fix"}),
        &a,
    );
    assert_eq!(code, 200, "{rec}");
    assert_eq!(rec["title"], "Quokkas hold the cache lock");
    assert_eq!(rec["type"], "bugfix");
    assert_eq!(rec["facts"], json!(["one fact"]));
    assert_eq!(
        (rec["edited"].clone(), rec["pinned"].clone()),
        (json!(true), json!(false))
    );
    let (_, hits) = w.get("/api/search?q=quokkas");
    assert!(hits.to_string().contains(&format!("\"#{id}\"")), "{hits}");
    let (code, err) = send(
        &w,
        "PATCH",
        &format!("/api/observations/{id}"),
        &json!({"type": "summary"}),
        &a,
    );
    assert_eq!(code, 400, "{err}");
    let (code, _) = send(
        &w,
        "PATCH",
        "/api/observations/999999",
        &json!({"title": "x"}),
        &a,
    );
    assert_eq!(code, 404);
    let (code, _) = send(
        &w,
        "PATCH",
        &format!("/api/observations/{id}"),
        &json!({}),
        &a,
    );
    assert_eq!(code, 400);

    // Pin, then the same record from the read route.
    let (code, rec) = send(
        &w,
        "PUT",
        &format!("/api/observations/{id}/pin"),
        &json!({"pinned": true}),
        &a,
    );
    assert_eq!((code, rec["pinned"].clone()), (200, json!(true)), "{rec}");
    let (_, got) = w.get(&format!("/api/observations/{id}"));
    assert_eq!(got, rec);

    // Redact: every place counted, nothing left.
    let (code, red) = send(&w, "POST", "/api/redact", &json!({"text": "sess-beta"}), &a);
    assert_eq!(code, 200, "{red}");
    assert!(red["replaced"].as_u64().unwrap() >= 2, "{red}");
    assert!(red["places"]["sessions"].as_u64().unwrap() >= 1, "{red}");
    assert_eq!(
        env.count("SELECT count(*) FROM sessions WHERE platform_session_id = 'sess-beta'"),
        0
    );
    let (code, _) = send(&w, "POST", "/api/redact", &json!({"text": "ab"}), &a);
    assert_eq!(code, 400);

    // Stats: the store's size by kind and by project, and the retention.
    let (_, stats) = w.get("/api/stats");
    assert!(stats["store"]["bytes"].as_u64().unwrap() > 0);
    assert!(
        stats["store"]["by_kind"]["observations"].as_u64().unwrap() > 0,
        "{stats}"
    );
    assert!(
        stats["store"]["by_kind"]["events"].as_u64().unwrap() > 0,
        "{stats}"
    );
    assert_eq!(stats["store"]["by_project"][0]["project"], json!(proj));
    assert_eq!(stats["retention"]["raw_payload_days"], 30);
    assert!(stats["store"]["observations"].as_u64().unwrap() >= 4);

    // Forget: a dry run counts and keeps, the real one removes.
    let before = env.count("SELECT count(*) FROM observations");
    let (code, dry) = send(
        &w,
        "POST",
        "/api/forget",
        &json!({"session": "sess-alpha", "dry_run": true}),
        &a,
    );
    assert_eq!(code, 200, "{dry}");
    assert_eq!(dry["dry_run"], true);
    assert_eq!(dry["removed"]["sessions"], 1);
    assert_eq!(dry["removed"]["prompts"], 2);
    assert!(dry["removed"]["events"].as_u64().unwrap() >= 4, "{dry}");
    assert_eq!(env.count("SELECT count(*) FROM observations"), before);
    let (code, done) = send(
        &w,
        "POST",
        "/api/forget",
        &json!({"session": "sess-alpha"}),
        &a,
    );
    assert_eq!(code, 200, "{done}");
    assert_eq!(done["removed"], dry["removed"]);
    assert_eq!(done["dry_run"], false);
    let (code, _) = w.get(&format!("/api/observations/{id}"));
    assert_eq!(code, 404);
    let (_, hits) = w.get("/api/search?q=quokkas");
    assert!(!hits.to_string().contains("Quokkas"), "{hits}");

    // Errors: unknown ids name what is missing and change nothing; one selector only.
    let other = first_observation(&env, "[REDACTED:manual]");
    let (code, err) = send(
        &w,
        "POST",
        "/api/forget",
        &json!({"ids": [format!("#{other}"), "S999999"]}),
        &a,
    );
    assert_eq!(code, 404, "{err}");
    assert_eq!(err["missing"], json!(["S999999"]));
    assert_eq!(
        env.count(&format!(
            "SELECT count(*) FROM observations WHERE id = {other}"
        )),
        1
    );
    let (code, _) = send(
        &w,
        "POST",
        "/api/forget",
        &json!({"ids": [other], "session": "x"}),
        &a,
    );
    assert_eq!(code, 400);
    let (code, _) = send(
        &w,
        "POST",
        "/api/forget",
        &json!({"session": "no-such-session"}),
        &a,
    );
    assert_eq!(code, 400);
    let (code, done) = send(&w, "POST", "/api/forget", &json!({"ids": [other]}), &a);
    assert_eq!(
        (code, done["removed"]["observations"].clone()),
        (200, json!(1)),
        "{done}"
    );
}

#[test]
fn mutations_need_the_token_and_the_same_origin() {
    let env = Env::new();
    let (w, _) = two_sessions(&env);
    let a = auth(&w);
    let id = first_observation(&env, "sess-alpha");
    let observations = env.count("SELECT count(*) FROM observations");
    let forget = json!({"ids": [id]});
    let port = w.port;
    let refused = [
        ("no token", String::new(), 401),
        (
            "foreign origin",
            format!("{a}Origin: http://evil.example\r\n"),
            403,
        ),
        (
            "another port",
            format!("{a}Origin: http://127.0.0.1:{}\r\n", port + 1),
            403,
        ),
        (
            "cross-site",
            format!("{a}Sec-Fetch-Site: cross-site\r\n"),
            403,
        ),
        (
            "same-site",
            format!("{a}Sec-Fetch-Site: same-site\r\n"),
            403,
        ),
    ];
    for (what, headers, status) in &refused {
        for (method, path, body) in [
            ("POST", "/api/forget".to_owned(), &forget),
            (
                "PATCH",
                format!("/api/observations/{id}"),
                &json!({"title": "pwned"}),
            ),
            (
                "PUT",
                format!("/api/observations/{id}/pin"),
                &json!({"pinned": true}),
            ),
            (
                "POST",
                "/api/redact".to_owned(),
                &json!({"text": "sess-alpha"}),
            ),
        ] {
            let (code, body) = send(&w, method, &path, body, headers);
            assert_eq!(code, *status, "{what}: {method} {path}: {body}");
        }
    }
    assert_eq!(env.count("SELECT count(*) FROM observations"), observations);
    assert_eq!(
        env.count("SELECT count(*) FROM observations WHERE title = 'pwned' OR pinned = 1"),
        0
    );
    assert_eq!(
        env.count("SELECT count(*) FROM sessions WHERE platform_session_id = 'sess-alpha'"),
        1
    );
    // The worker's own page may.
    let own = format!("{a}Origin: http://127.0.0.1:{port}\r\nSec-Fetch-Site: same-origin\r\n");
    let (code, body) = send(&w, "POST", "/api/forget", &forget, &own);
    assert_eq!(code, 200, "{body}");
    assert_eq!(
        env.count("SELECT count(*) FROM observations"),
        observations - 1
    );
}

/// Every byte of the data directory's database files.
fn db_bytes(env: &Env) -> Vec<u8> {
    let mut out = Vec::new();
    for suffix in ["", "-wal"] {
        let mut path = env.db_path().into_os_string();
        path.push(suffix);
        if let Ok(bytes) = std::fs::read(Path::new(&path)) {
            out.extend(bytes);
        }
    }
    out
}

#[test]
fn a_forgotten_session_leaves_no_bytes_and_is_never_recompressed() {
    let env = Env::new();
    let proj = project(&env, "vault");
    let secret = "zebracorn-unique-7f3a";
    {
        let w = Worker::start(&env, |_| {});
        session_start(&env, &proj, "sess-keep");
        turn(&env, &proj, "sess-keep", 1, &["keep.rs"]);
        // A second turn keeps raw events queued for the retry below (the
        // first turn's go with its forgotten observation).
        turn(&env, &proj, "sess-keep", 2, &["keep2.rs"]);
        session_start(&env, &proj, "sess-gone");
        turn(&env, &proj, "sess-gone", 1, &[&format!("{secret}.rs")]);
        wait_all_done(&env, T);
        drop(w);
    }
    assert!(contains_bytes(&db_bytes(&env), secret.as_bytes()));

    let out = env
        .mnemo()
        .args(["forget", "--session", "sess-gone"])
        .output()
        .unwrap();
    assert_success(&out);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("sessions 1"), "{text}");
    assert!(
        !contains_bytes(&db_bytes(&env), secret.as_bytes()),
        "the forgotten string is still in the database or its WAL"
    );
    assert_eq!(
        env.count("SELECT count(*) FROM sessions WHERE platform_session_id = 'sess-keep'"),
        1
    );

    // Retried or redone batches never bring a forgotten observation back.
    let keep = first_observation(&env, "sess-keep");
    let uid: String = env
        .db()
        .query_row("SELECT uid FROM observations WHERE id = ?1", [keep], |r| {
            r.get(0)
        })
        .unwrap();
    let out = env
        .mnemo()
        .args(["forget", &format!("#{keep}")])
        .output()
        .unwrap();
    assert_success(&out);
    env.db()
        .execute("UPDATE events SET status = 'failed', attempts = 9", [])
        .unwrap();
    let out = env
        .mnemo()
        .args(["worker", "retry", "--all"])
        .output()
        .unwrap();
    assert_success(&out);
    let w = Worker::start(&env, |_| {});
    wait_all_done(&env, T);
    drop(w);
    assert_eq!(
        env.count(&format!(
            "SELECT count(*) FROM observations WHERE uid = '{uid}'"
        )),
        0
    );
    assert!(!contains_bytes(&db_bytes(&env), secret.as_bytes()));

    // --vacuum shrinks the file.
    let out = env
        .mnemo()
        .args(["forget", "--project", proj.to_str().unwrap(), "--vacuum"])
        .output()
        .unwrap();
    assert_success(&out);
    assert_eq!(env.count("SELECT count(*) FROM projects"), 0);
    assert_eq!(env.count("SELECT count(*) FROM events"), 0);
}

/// `mnemo ARGS` in `dir`; (success, stdout, stderr).
fn cli(env: &Env, dir: &Path, args: &[&str]) -> (bool, String, String) {
    let out = env.mnemo().current_dir(dir).args(args).output().unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// `count` observations in `shop`, one a day going back, imported.
fn imported_project(env: &Env, count: usize) -> std::path::PathBuf {
    let shop = project(env, "shop");
    let now = mnemo_core::time::now_ms();
    let lines: String = (0..count)
        .map(|i| {
            let at = mnemo_core::time::format_rfc3339(now - (i as i64) * 86_400_000);
            format!(
                "{}\n",
                json!({"project": shop, "type": "change", "title": format!("Step {i} of the rollout"),
                       "subtitle": "", "narrative": format!("Narrative {i}."), "facts": [],
                       "concepts": [], "files_read": [], "files_modified": [format!("src/m{i}.rs")],
                       "created_at": at})
            )
        })
        .collect();
    let file = env.dir.path().join("import.jsonl");
    std::fs::write(&file, lines).unwrap();
    let (ok, _, err) = cli(env, env.dir.path(), &["import", file.to_str().unwrap()]);
    assert!(ok, "{err}");
    shop
}

fn id_of(env: &Env, title: &str) -> i64 {
    env.db()
        .query_row(
            "SELECT id FROM observations WHERE title = ?1",
            [title],
            |r| r.get(0),
        )
        .unwrap()
}

#[test]
fn a_pinned_observation_is_always_in_the_index_and_marked() {
    let env = Env::new();
    let shop = imported_project(&env, 400);
    let old = id_of(&env, "Step 399 of the rollout");
    let (_, index, _) = cli(&env, &shop, &["context"]);
    assert!(!index.contains(&format!("#{old} ")), "{index}");

    let (ok, out, err) = cli(&env, &shop, &["pin", &format!("#{old}")]);
    assert!(ok, "{err}");
    assert!(out.contains(&format!("pinned #{old}")));
    let (_, index, _) = cli(&env, &shop, &["context"]);
    let line = index
        .lines()
        .find(|l| l.starts_with(&format!("#{old} ")))
        .unwrap_or_else(|| panic!("pinned #{old} missing from:\n{index}"));
    assert!(line.ends_with("[pinned]"), "{line}");
    let (_, shown, _) = cli(&env, &shop, &["show", &old.to_string(), "--json"]);
    assert!(shown.contains("\"pinned\": true"), "{shown}");

    let (ok, _, _) = cli(&env, &shop, &["unpin", &old.to_string()]);
    assert!(ok);
    let (_, index, _) = cli(&env, &shop, &["context"]);
    assert!(!index.contains(&format!("#{old} ")), "{index}");

    // Clear errors: unknown id, a summary id, no id at all.
    let (ok, _, err) = cli(&env, &shop, &["pin", "#999999"]);
    assert!(!ok && err.contains("no such item: #999999"), "{err}");
    let (ok, _, err) = cli(&env, &shop, &["pin", "S1"]);
    assert!(!ok && err.contains("only observations"), "{err}");
}

#[test]
fn edits_are_kept_marked_and_searchable_at_once() {
    let env = Env::new();
    let shop = imported_project(&env, 3);
    let id = id_of(&env, "Step 1 of the rollout");
    let (ok, out, err) = cli(
        &env,
        &shop,
        &[
            "edit",
            &format!("#{id}"),
            "--title",
            "Rollout paused for the wombat migration",
            "--fact",
            "first fact",
            "--fact",
            "second fact",
            "--type",
            "dec",
        ],
    );
    assert!(ok, "{err}");
    assert!(
        out.contains(&format!("edited #{id} [decision] Rollout paused")),
        "{out}"
    );
    let (_, found, _) = cli(&env, &shop, &["search", "wombat", "--json"]);
    assert!(found.contains(&format!("\"#{id}\"")), "{found}");
    let (_, old, _) = cli(&env, &shop, &["search", "\"Step 1 of\"", "--json"]);
    assert!(
        !old.contains(&format!("\"#{id}\"")),
        "the old title still matches: {old}"
    );
    let (_, shown, _) = cli(&env, &shop, &["show", &format!("#{id}"), "--json"]);
    let rec: Value = serde_json::from_str(&shown).unwrap();
    let rec = &rec["records"][0];
    assert_eq!(rec["edited"], true, "{rec}");
    assert_eq!(rec["facts"], json!(["first fact", "second fact"]));
    assert_eq!(rec["type"], "decision");
    assert_eq!(rec["narrative"], "Narrative 1.");
    // The full-text index agrees with the table.
    env.db()
        .execute(
            "INSERT INTO observations_fts (observations_fts, rank) VALUES ('integrity-check', 1)",
            [],
        )
        .expect("the full-text index matches the edited table");

    let (ok, _, err) = cli(&env, &shop, &["edit", &id.to_string(), "--type", "summary"]);
    assert!(!ok && err.contains("not an observation type"), "{err}");
    let (ok, _, err) = cli(&env, &shop, &["edit", &id.to_string()]);
    assert!(!ok && err.contains("nothing to change"), "{err}");
    let (ok, _, err) = cli(&env, &shop, &["edit", &id.to_string(), "--title", " "]);
    assert!(!ok && err.contains("title cannot be empty"), "{err}");
}

#[test]
fn redact_replaces_everywhere_and_counts_places() {
    let env = Env::new();
    let proj = project(&env, "leaky");
    let secret = "hunter2-leaked-passphrase";
    {
        let w = Worker::start(&env, |_| {});
        session_start(&env, &proj, "sess-leak");
        turn(&env, &proj, "sess-leak", 1, &[&format!("{secret}.txt")]);
        wait_all_done(&env, T);
        drop(w);
    }
    let (ok, out, err) = cli(&env, &proj, &["redact", secret, "--json"]);
    assert!(ok, "{err}");
    let red: Value = serde_json::from_str(&out).unwrap();
    for table in ["events", "observations", "prompts"] {
        assert!(
            red["places"][table].as_u64().unwrap_or(0) >= 1,
            "{table}: {red}"
        );
    }
    assert!(!contains_bytes(&db_bytes(&env), secret.as_bytes()));
    let (_, found, _) = cli(&env, &proj, &["search", "REDACTED", "--json"]);
    assert!(found.contains("[REDACTED:manual]"), "{found}");
    let (ok, out, _) = cli(&env, &proj, &["redact", secret]);
    assert!(ok && out.contains("nothing changed"), "{out}");
    let (ok, _, err) = cli(&env, &proj, &["redact", "abc"]);
    assert!(!ok && err.contains("at least 4"), "{err}");
    let (ok, _, err) = cli(&env, &proj, &["forget", "--session", "sess-leak", "#1"]);
    assert!(!ok && err.contains("cannot be used with"), "{err}");
}

#[test]
fn retention_prunes_old_raw_payloads_and_stats_show_the_size() {
    let env = Env::new();
    let proj = project(&env, "old");
    {
        let w = Worker::start(&env, |_| {});
        session_start(&env, &proj, "sess-old");
        turn(&env, &proj, "sess-old", 1, &["big.rs"]);
        wait_all_done(&env, T);
        drop(w);
    }
    let observations = env.count("SELECT count(*) FROM observations");
    let raw = "SELECT count(*) FROM events WHERE response IS NOT NULL";
    // Captured 40 days ago but compressed just now (an imported transcript):
    // kept.
    env.db()
        .execute(
            "UPDATE events SET created_at = created_at - 40 * 86400000",
            [],
        )
        .unwrap();
    {
        let w = Worker::start(&env, |_| {});
        std::thread::sleep(Duration::from_millis(700));
        drop(w);
    }
    assert!(env.count(raw) > 0, "pruned by capture time");
    // Compressed 40 days ago: pruned.
    env.db()
        .execute(
            "UPDATE events SET compressed_at = compressed_at - 40 * 86400000",
            [],
        )
        .unwrap();
    let (_, stats, _) = cli(&env, &proj, &["stats", "--json"]);
    let stats: Value = serde_json::from_str(&stats).unwrap();
    assert_eq!(stats["retention"]["raw_payload_days"], 30, "{stats}");
    assert!(
        stats["store"]["by_kind"]["events"].as_u64().unwrap() > 0,
        "{stats}"
    );
    assert_eq!(stats["store"]["by_project"][0]["project"], json!(proj));
    let raw_before = stats["store"]["by_project"][0]["raw_bytes"]
        .as_u64()
        .unwrap();
    assert!(raw_before > 0);

    let w = Worker::start(&env, |_| {});
    wait_for("the raw payloads pruned", T, || {
        (env.count(raw) == 0).then_some(())
    });
    drop(w);
    assert_eq!(env.count("SELECT count(*) FROM observations"), observations);
    assert_eq!(env.count("SELECT count(*) FROM prompts"), 1);
    let (_, stats, _) = cli(&env, &proj, &["stats", "--json"]);
    let stats: Value = serde_json::from_str(&stats).unwrap();
    assert!(
        stats["store"]["by_project"][0]["raw_bytes"]
            .as_u64()
            .unwrap()
            < raw_before
    );
    let (_, text, _) = cli(&env, &proj, &["stats"]);
    assert!(text.contains("raw tool payloads kept 30 days"), "{text}");
}

#[test]
fn the_agent_corrects_or_forgets_an_observation_of_its_project_only() {
    let env = Env::new();
    let shop = imported_project(&env, 3);
    let blog = project(&env, "blog");
    let file = env.dir.path().join("blog.jsonl");
    let line = json!({"project": blog, "type": "feature", "title": "RSS feed added",
                      "subtitle": "", "narrative": "", "facts": [], "concepts": [],
                      "files_read": [], "files_modified": [], "created_at": "2026-11-20T12:00:00Z"});
    std::fs::write(&file, format!("{line}\n")).unwrap();
    let (ok, _, err) = cli(&env, env.dir.path(), &["import", file.to_str().unwrap()]);
    assert!(ok, "{err}");
    let step = id_of(&env, "Step 2 of the rollout");
    let rss = id_of(&env, "RSS feed added");

    let mut mcp = McpClient::start(&env, &shop, &[]);
    let (text, err) = mcp.call(
        "correct",
        json!({"id": format!("#{step}"), "narrative": "Rolled back: the flag was inverted. api_key=sk-live-abcdefghijklmnopqrstuvwx",
               "type": "fix"}),
    );
    assert!(!err, "{text}");
    let (found, _) = mcp.call(
        "search",
        json!({"query": "inverted flag", "format": "json"}),
    );
    assert!(found.contains(&format!("\"#{step}\"")), "{found}");
    let narrative: String = env
        .db()
        .query_row(
            "SELECT narrative FROM observations WHERE id = ?1",
            [step],
            |r| r.get(0),
        )
        .unwrap();
    assert!(
        !narrative.contains("sk-live-abcdefghijklmnopqrstuvwx"),
        "secrets are redacted: {narrative}"
    );
    assert_eq!(env.count(&format!("SELECT count(*) FROM observations WHERE id = {step} AND edited_at IS NOT NULL AND type = 'bugfix'")), 1);

    let (text, err) = mcp.call("correct", json!({"id": rss, "title": "hijacked"}));
    assert!(err && text.contains("another project"), "{text}");
    let (text, err) = mcp.call("correct", json!({"id": rss, "forget": true}));
    assert!(err && text.contains("another project"), "{text}");
    let (text, err) = mcp.call("correct", json!({"id": "#999999", "forget": true}));
    assert!(err && text.contains("no observation #999999"), "{text}");
    let (text, err) = mcp.call("correct", json!({"id": step}));
    assert!(err && text.contains("say what to change"), "{text}");

    let (text, err) = mcp.call("correct", json!({"id": step, "forget": true}));
    assert!(
        !err && text.starts_with(&format!("Forgot #{step}")),
        "{text}"
    );
    assert_eq!(
        env.count(&format!(
            "SELECT count(*) FROM observations WHERE id = {step}"
        )),
        0
    );
    assert_eq!(
        env.count(&format!(
            "SELECT count(*) FROM observations WHERE id = {rss}"
        )),
        1
    );
    mcp.close();
}

// ---- redact and forget reach every copy mnemo keeps ----

fn prompt_payload(proj: &Path, session: &str, text: &str) -> String {
    json!({"session_id": session, "cwd": proj, "hook_event_name": "UserPromptSubmit",
           "prompt_id": format!("pid-{session}"), "prompt": text})
    .to_string()
}

fn bash_payload(proj: &Path, session: &str, command: &str) -> String {
    json!({"session_id": session, "cwd": proj, "hook_event_name": "PostToolUse",
           "tool_name": "Bash", "tool_use_id": "toolu-spooled",
           "tool_input": {"command": command}, "tool_response": {"stdout": "ok", "stderr": ""}})
    .to_string()
}

/// Files under the data directory that hold `needle`.
fn files_holding(env: &Env, needle: &str) -> Vec<std::path::PathBuf> {
    all_bytes_under(&env.data())
        .into_iter()
        .filter(|(_, bytes)| contains_bytes(bytes, needle.as_bytes()))
        .map(|(path, _)| path)
        .collect()
}

#[test]
fn a_redaction_reaches_the_spool_rejected_records_and_a_repair_copy() {
    let env = Env::new();
    let proj = project(&env, "vault");
    let secret = "copper-lantern-4410";
    assert_hook_ok(&env.hook(
        "UserPromptSubmit",
        &prompt_payload(&proj, "s1", &format!("deploy with {secret}")),
    ));
    // A repair copy `doctor --fix` kept of the database, holding the secret.
    std::fs::copy(
        env.db_path(),
        env.data().join("mnemo.db.corrupt-1700000000000"),
    )
    .unwrap();
    // The database is busy: the next capture waits in the spool.
    let holder = env.db();
    holder.execute_batch("BEGIN EXCLUSIVE").unwrap();
    let out = env.hook_with(
        "PostToolUse",
        &bash_payload(&proj, "s1", &format!("cat notes-{secret}.txt")),
        |c| {
            c.env("MNEMO_STORE_BUSY_TIMEOUT_MS", "100");
        },
    );
    assert_hook_ok(&out);
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("event spooled"),
        "{out:?}"
    );
    holder.execute_batch("COMMIT").unwrap();
    drop(holder);
    // A record the spool once set aside.
    std::fs::write(
        env.data().join("spool/rejected.jsonl"),
        format!("{{\"capture_id\":\"torn\",\"op\":\"{secret}\n"),
    )
    .unwrap();
    assert_eq!(
        files_holding(&env, secret).len(),
        4,
        "{:?}",
        files_holding(&env, secret)
    );

    let (ok, out, err) = cli(&env, &proj, &["redact", secret, "--json"]);
    assert!(ok, "{err}");
    let red: Value = serde_json::from_str(&out).unwrap();
    assert!(red["places"]["events"].as_u64() >= Some(1), "{red}");
    assert!(red.get("remaining").is_none(), "{red}");
    assert_eq!(
        files_holding(&env, secret),
        Vec::<std::path::PathBuf>::new()
    );
    // The next hook ingests nothing that brings it back.
    assert_hook_ok(&env.hook("UserPromptSubmit", &prompt_payload(&proj, "s1", "next")));
    assert_eq!(
        files_holding(&env, secret),
        Vec::<std::path::PathBuf>::new()
    );
    assert_eq!(
        env.count("SELECT count(*) FROM events WHERE tool_name = 'Bash'"),
        1
    );
}

#[test]
fn two_redactions_in_project_roots_that_then_collide_both_succeed() {
    let env = Env::new();
    let a = project(&env, "tok-alpha-31337/app");
    let b = project(&env, "tok-bravo-90210/app");
    assert_hook_ok(&env.hook("UserPromptSubmit", &prompt_payload(&a, "sa", "in a")));
    assert_hook_ok(&env.hook("UserPromptSubmit", &prompt_payload(&b, "sb", "in b")));
    for secret in ["tok-alpha-31337", "tok-bravo-90210"] {
        let (ok, out, err) = cli(&env, env.dir.path(), &["redact", secret]);
        assert!(ok && out.contains("replaced"), "{out}{err}");
        assert!(files_holding(&env, secret).is_empty());
    }
    assert_eq!(env.count("SELECT count(*) FROM projects"), 2);
    assert_eq!(
        env.count("SELECT count(*) FROM sessions s JOIN projects p ON p.id = s.project_id"),
        2
    );
}

#[test]
fn an_edit_leaves_the_old_text_in_neither_the_database_nor_its_wal() {
    let env = Env::new();
    let shop = imported_project(&env, 3);
    let id = id_of(&env, "Step 1 of the rollout");
    // Another connection stays open, as the worker's does: the WAL stays.
    let reader = env.db();
    let (ok, _, err) = cli(
        &env,
        &shop,
        &[
            "edit",
            &id.to_string(),
            "--title",
            "Renamed",
            "--narrative",
            "Rewritten.",
        ],
    );
    assert!(ok, "{err}");
    let bytes = db_bytes(&env);
    assert!(!contains_bytes(&bytes, b"Step 1 of the rollout"));
    assert!(!contains_bytes(&bytes, b"Narrative 1."));
    drop(reader);
}

#[test]
fn forgetting_an_observation_forgets_the_raw_events_it_came_from() {
    let env = Env::new();
    let proj = project(&env, "vault");
    let secret = "raw-event-marker-5521";
    let w = Worker::start(&env, |_| {});
    session_start(&env, &proj, "s-raw");
    turn(&env, &proj, "s-raw", 1, &[&format!("{secret}.rs")]);
    turn(&env, &proj, "s-raw", 2, &["other.rs"]);
    wait_all_done(&env, T);
    drop(w);
    let id: i64 = env
        .db()
        .query_row(
            "SELECT id FROM observations WHERE prompt_number = 1 ORDER BY id LIMIT 1",
            [],
            |r| r.get(0),
        )
        .unwrap();
    let raw = |env: &Env| {
        env.count(&format!(
            "SELECT count(*) FROM events WHERE coalesce(input, '') || coalesce(response, '') LIKE '%{secret}%'"
        ))
    };
    assert!(raw(&env) >= 1);
    let (ok, out, err) = cli(&env, &proj, &["forget", &format!("#{id}")]);
    assert!(ok, "{err}");
    assert!(!out.contains("events 0"), "{out}");
    assert_eq!(raw(&env), 0);
    assert!(env.count("SELECT count(*) FROM events WHERE prompt_number = 2") >= 1);
    let export = env.dir.path().join("out.jsonl");
    let (ok, _, err) = cli(&env, &proj, &["export", "-o", export.to_str().unwrap()]);
    assert!(ok, "{err}");
    let written = std::fs::read_to_string(&export).unwrap();
    assert!(
        written
            .lines()
            .filter(|l| l.contains("\"event\""))
            .all(|l| !l.contains(secret)),
        "{written}"
    );
}

/// (id, uid, title, pinned, edited) of every observation in `env`'s store.
fn observation_states(env: &Env) -> Vec<(i64, String, String, bool, bool)> {
    let db = env.db();
    let mut stmt = db
        .prepare(
            "SELECT id, uid, title, pinned, edited_at IS NOT NULL FROM observations ORDER BY id",
        )
        .unwrap();
    stmt.query_map([], |r| {
        Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?))
    })
    .unwrap()
    .map(Result::unwrap)
    .collect()
}

#[test]
fn a_backup_restored_into_an_empty_store_keeps_ids_pins_and_edits() {
    let env = Env::new();
    let shop = imported_project(&env, 5);
    let step = |i: usize| id_of(&env, &format!("Step {i} of the rollout"));
    let (gone, pinned, edited) = (step(1), step(2), step(3));
    for args in [
        vec!["forget".to_owned(), format!("#{gone}")],
        vec!["pin".to_owned(), pinned.to_string()],
        vec![
            "edit".to_owned(),
            edited.to_string(),
            "--title".to_owned(),
            "Step three, corrected".to_owned(),
        ],
    ] {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let (ok, _, err) = cli(&env, &shop, &args);
        assert!(ok, "{args:?}: {err}");
    }
    let before = observation_states(&env);
    let backup = env.dir.path().join("backup.jsonl");
    let (ok, _, err) = cli(&env, &shop, &["export", "-o", backup.to_str().unwrap()]);
    assert!(ok, "{err}");

    let restored = Env::new();
    let (ok, _, err) = cli(
        &restored,
        restored.dir.path(),
        &["import", backup.to_str().unwrap()],
    );
    assert!(ok, "{err}");
    assert_eq!(observation_states(&restored), before);
    // The kept ids are the ones search and show answer to.
    let (ok, out, err) = cli(&restored, &shop, &["search", "corrected", "--json"]);
    assert!(
        ok && out.contains(&format!("\"ref\": \"#{edited}\"")),
        "{out}{err}"
    );
    // A second import changes nothing.
    let (ok, _, err) = cli(
        &restored,
        restored.dir.path(),
        &["import", backup.to_str().unwrap()],
    );
    assert!(ok, "{err}");
    assert_eq!(observation_states(&restored), before);
}

/// Every line `mnemo export` writes for `env`, parsed, in order.
fn exported(env: &Env, dir: &Path, file: &Path) -> Vec<Value> {
    let (ok, _, err) = cli(env, dir, &["export", "-o", file.to_str().unwrap()]);
    assert!(ok, "{err}");
    std::fs::read_to_string(file)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// Row ids, curation state and links as the store holds them.
fn curation_rows(env: &Env) -> Vec<String> {
    let db = env.db();
    let queries = [
        "SELECT 'obs', id, uid, pinned, edited_at, superseded_by, author FROM observations",
        "SELECT 'sum', id, uid, session_id, prompt_number, author, NULL FROM summaries",
        "SELECT 'prompt', id, uid, session_id, prompt_number, NULL, NULL FROM prompts",
        "SELECT 'session', id, platform_session_id, continues, project_id, status, NULL FROM sessions",
    ];
    let mut out = Vec::new();
    for sql in queries {
        let mut stmt = db.prepare(&format!("{sql} ORDER BY 2")).unwrap();
        let rows = stmt
            .query_map([], |r| {
                let cells: Vec<String> = (0..7)
                    .map(|i| {
                        r.get::<_, rusqlite::types::Value>(i)
                            .map(|v| format!("{v:?}"))
                    })
                    .collect::<rusqlite::Result<_>>()?;
                Ok(cells.join(" "))
            })
            .unwrap();
        out.extend(rows.map(Result::unwrap));
    }
    out
}

#[test]
fn a_round_trip_keeps_every_record_its_ids_curation_and_links() {
    let env = Env::new();
    let (w, proj) = two_sessions(&env);
    // A session started by /clear continues the one before it.
    hook(
        &env,
        "SessionStart",
        &payload("SessionStart.json", &proj, "sess-gamma", "", |v| {
            v["source"] = json!("clear");
        }),
        |_| {},
    );
    drop(w);
    let first = first_observation(&env, "sess-alpha");
    let second = first_observation(&env, "sess-beta");
    for args in [
        vec!["pin".to_owned(), first.to_string()],
        vec![
            "edit".to_owned(),
            second.to_string(),
            "--title".to_owned(),
            "Corrected".to_owned(),
        ],
    ] {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let (ok, _, err) = cli(&env, &proj, &args);
        assert!(ok, "{args:?}: {err}");
    }
    let (ok, _, err) = cli(&env, &proj, &["forget", &format!("#{}", first + 1)]);
    assert!(ok, "{err}");
    // What only the worker and sync write: a decision replaced by a later
    // one, and a record another person wrote.
    env.db()
        .execute_batch(&format!(
            "UPDATE observations SET superseded_by = {second}, author = 'ana@example.org'
             WHERE id = {first}"
        ))
        .unwrap();
    let links = env.count("SELECT count(*) FROM sessions WHERE continues IS NOT NULL");
    assert_eq!(links, 1, "the /clear session continues the one before");
    let before = exported(&env, &proj, &env.dir.path().join("a.jsonl"));
    let rows = curation_rows(&env);

    let restored = Env::new();
    let backup = env.dir.path().join("a.jsonl");
    let (ok, _, err) = cli(
        &restored,
        restored.dir.path(),
        &["import", backup.to_str().unwrap()],
    );
    assert!(ok, "{err}");
    assert_eq!(curation_rows(&restored), rows);
    let after = exported(&restored, &proj, &restored.dir.path().join("b.jsonl"));
    assert_eq!(after.len(), before.len());
    for (a, b) in before.iter().zip(&after) {
        assert_eq!(a, b);
    }
}

/// Writes `mnemo export -o file` in `dir`.
fn export_to(env: &Env, dir: &Path, file: &Path) {
    let (ok, _, err) = cli(env, dir, &["export", "-o", file.to_str().unwrap()]);
    assert!(ok, "{err}");
}

/// Sends a Bash tool call of `session` while the database is locked, so
/// that it waits in the spool.
fn spooled_bash(env: &Env, proj: &Path, session: &str, command: &str) {
    let holder = env.db();
    holder.execute_batch("BEGIN EXCLUSIVE").unwrap();
    let out = env.hook_with("PostToolUse", &bash_payload(proj, session, command), |c| {
        c.env("MNEMO_STORE_BUSY_TIMEOUT_MS", "100");
    });
    assert_hook_ok(&out);
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("event spooled"),
        "{out:?}"
    );
    holder.execute_batch("COMMIT").unwrap();
}

#[test]
fn a_forgotten_session_is_gone_from_every_file_mnemo_keeps_or_named() {
    let env = Env::new();
    let proj = project(&env, "vault");
    let secret = "amber-quill-7731";
    let gone = format!("sess-{secret}");
    let w = Worker::start(&env, |_| {});
    for session in [gone.as_str(), "sess-kept"] {
        session_start(&env, &proj, session);
        turn(&env, &proj, session, 1, &[&format!("{session}.rs")]);
    }
    wait_all_done(&env, T);
    drop(w);
    // Every kind of copy: two exports (one then moved away), a repair copy
    // of the database, a record the spool set aside, a log line, and a
    // capture still waiting in the spool.
    let (kept, moved) = (
        env.dir.path().join("a.jsonl"),
        env.dir.path().join("b.jsonl"),
    );
    export_to(&env, &proj, &kept);
    export_to(&env, &proj, &moved);
    let elsewhere = env.dir.path().join("moved.jsonl");
    std::fs::rename(&moved, &elsewhere).unwrap();
    env.db()
        .query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))
        .unwrap();
    std::fs::copy(
        env.db_path(),
        env.data().join("mnemo.db.corrupt-1700000000000"),
    )
    .unwrap();
    std::fs::create_dir_all(env.data().join("spool")).unwrap();
    std::fs::write(
        env.data().join("spool/rejected.jsonl"),
        format!("{{\"capture_id\":\"torn\",\"session_id\":\"{gone}\",\"op\n"),
    )
    .unwrap();
    std::fs::create_dir_all(env.data().join("logs")).unwrap();
    std::fs::write(
        env.data().join("logs/worker.log"),
        format!("2026-11-27T00:00:00Z  INFO compressed 1 event of session {gone}\n"),
    )
    .unwrap();
    spooled_bash(&env, &proj, &gone, "ls");
    let holding = files_holding(&env, secret);
    assert!(holding.len() >= 5, "{holding:?}");

    let (ok, out, err) = cli(&env, &proj, &["forget", "--session", &gone, "--json"]);
    assert!(ok, "{err}");
    let forgot: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(forgot["removed"]["sessions"], 1, "{forgot}");
    assert_eq!(
        files_holding(&env, secret),
        Vec::<std::path::PathBuf>::new()
    );
    let export = std::fs::read_to_string(&kept).unwrap();
    assert!(!export.contains(secret), "{export}");
    assert!(export.contains("sess-kept"), "the rest of the export stays");
    // The moved export is out of reach, and said to be.
    let remaining: Vec<&str> = forgot["remaining"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r.as_str().unwrap())
        .collect();
    assert_eq!(remaining.len(), 1, "{forgot}");
    assert!(remaining[0].contains(moved.to_str().unwrap()), "{forgot}");
    assert!(err.contains(moved.to_str().unwrap()), "{err}");
    assert!(env.count("SELECT count(*) FROM observations") >= 1);
}

#[test]
fn a_forgotten_observation_leaves_an_export_mnemo_wrote() {
    let env = Env::new();
    let shop = imported_project(&env, 3);
    let id = id_of(&env, "Step 1 of the rollout");
    let backup = env.dir.path().join("backup.jsonl");
    export_to(&env, &shop, &backup);
    let (ok, out, err) = cli(&env, &shop, &["forget", &format!("#{id}")]);
    assert!(ok && err.is_empty(), "{out}{err}");
    assert!(out.contains(backup.to_str().unwrap()), "{out}");
    let written = std::fs::read_to_string(&backup).unwrap();
    assert!(!written.contains("Step 1 of the rollout"), "{written}");
    assert!(written.contains("Step 2 of the rollout"), "{written}");
    // Restoring that backup does not bring it back.
    let restored = Env::new();
    let (ok, _, err) = cli(
        &restored,
        restored.dir.path(),
        &["import", backup.to_str().unwrap()],
    );
    assert!(ok, "{err}");
    assert_eq!(restored.count("SELECT count(*) FROM observations"), 2);
}

#[test]
fn a_redaction_reaches_an_export_mnemo_wrote_and_names_a_moved_one() {
    let env = Env::new();
    let proj = project(&env, "vault");
    let secret = "slate-heron-2290";
    assert_hook_ok(&env.hook(
        "UserPromptSubmit",
        &prompt_payload(&proj, "s1", &format!("the key is {secret}")),
    ));
    let (kept, moved) = (
        env.dir.path().join("a.jsonl"),
        env.dir.path().join("b.jsonl"),
    );
    export_to(&env, &proj, &kept);
    export_to(&env, &proj, &moved);
    std::fs::rename(&moved, env.dir.path().join("elsewhere.jsonl")).unwrap();
    let (ok, out, err) = cli(&env, &proj, &["redact", secret, "--json"]);
    assert!(ok, "{err}");
    let red: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(red["files"][kept.to_str().unwrap()], 1, "{red}");
    assert!(!std::fs::read_to_string(&kept).unwrap().contains(secret));
    let remaining = red["remaining"].to_string();
    assert!(remaining.contains(moved.to_str().unwrap()), "{red}");
    assert!(err.contains(moved.to_str().unwrap()), "{err}");
}

#[test]
fn a_damaged_repair_copy_is_masked_and_named() {
    let env = Env::new();
    let shop = imported_project(&env, 3);
    let id = id_of(&env, "Step 1 of the rollout");
    // What `doctor --fix` keeps when SQLite cannot read the file any more.
    let copy = env.data().join("mnemo.db.corrupt-1700000000000");
    std::fs::write(
        &copy,
        b"\x00garbage Step 1 of the rollout \xff\x01 Narrative 1. end",
    )
    .unwrap();
    let (ok, _, err) = cli(&env, &shop, &["forget", &format!("#{id}")]);
    assert!(ok, "{err}");
    let bytes = std::fs::read(&copy).unwrap();
    assert!(!contains_bytes(&bytes, b"Step 1 of the rollout"));
    assert!(!contains_bytes(&bytes, b"Narrative 1."));
    assert!(err.contains(copy.to_str().unwrap()), "{err}");
}
