//! Search by meaning through the real binary and worker, against a stand-in
//! `/embeddings` endpoint on loopback ([`EmbeddingsStandIn`]: words of one
//! declared group share a vector bucket, so a query with no word in common
//! with a record can still be near it). Covered: the worker backfills an
//! existing store; `mnemo search` and `/api/search` find a record by meaning
//! that full-text search cannot; a model change re-embeds everything;
//! forgetting removes the vector; an endpoint that is down, slow or answers
//! garbage leaves full-text results with a note, and the worker stores
//! nothing of it; `doctor` says off, on (with counts) or what is broken.

mod common;
#[path = "common/worker.rs"]
mod worker_support;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Duration;

use common::Env;
use mnemo_core::time::{format_rfc3339, now_ms};
use mnemo_testkit::embeddings::{EmbeddingsStandIn, Mode};
use serde_json::{Value, json};
use worker_support::{Worker, wait_for};

/// Word groups the stand-in puts in one bucket each: the query's words and
/// the target record's words meet only through these.
const GROUPS: &[&[&str]] = &[
    &["automobile", "car", "vehicle"],
    &["overheating", "thermal", "heat"],
    &["payment", "invoice", "billing"],
];
const DIM: usize = 64;

/// The record only meaning can find for [`MEANING_QUERY`].
const TARGET: &str = "Car engine overheating on long climbs";
const MEANING_QUERY: &str = "automobile thermal";

fn project(env: &Env) -> PathBuf {
    let dir = env.dir.path().join("shop");
    mnemo_testkit::git_init(&dir).unwrap();
    dir.canonicalize().unwrap()
}

fn obs(project: &Path, title: &str, narrative: &str, minutes_ago: i64) -> Value {
    json!({
        "kind": "observation",
        "project": project,
        "type": "bugfix",
        "title": title,
        "narrative": narrative,
        "created_at": format_rfc3339(now_ms() - minutes_ago * 60_000),
    })
}

/// A store as a user has it before turning embeddings on.
fn seeded(env: &Env) -> PathBuf {
    seeded_with(env, 0)
}

/// [`seeded`], with `fillers` more records on other subjects.
fn seeded_with(env: &Env, fillers: usize) -> PathBuf {
    let project = project(env);
    let mut records = vec![
        obs(
            &project,
            TARGET,
            "The radiator fan relay was stuck; replaced it.",
            50,
        ),
        obs(
            &project,
            "Login form rejects valid passwords",
            "Trimmed whitespace before hashing.",
            40,
        ),
        obs(
            &project,
            "Invoice totals rounded twice",
            "Round once, at the end.",
            30,
        ),
        obs(
            &project,
            "Search page paginates past the end",
            "Clamp the page number.",
            20,
        ),
    ];
    records.extend((0..fillers).map(|i| {
        let title = format!("Parser module {i} split in two");
        obs(
            &project,
            &title,
            "Moved the token helpers out.",
            60 + i as i64,
        )
    }));
    let file = env.dir.path().join("seed.jsonl");
    let text: String = records.iter().map(|r| format!("{r}\n")).collect();
    std::fs::write(&file, text).unwrap();
    let out = env.mnemo().arg("import").arg(&file).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    project
}

fn with_endpoint(c: &mut Command, base_url: &str, model: &str) {
    c.env("MNEMO_EMBEDDINGS_BASE_URL", base_url)
        .env("MNEMO_EMBEDDINGS_MODEL", model)
        .env("MNEMO_EMBEDDINGS_QUERY_TIMEOUT_MS", "800");
}

fn search(env: &Env, dir: &Path, endpoint: Option<(&str, &str)>, args: &[&str]) -> Output {
    let mut c = env.mnemo();
    c.current_dir(dir).arg("search").args(args);
    if let Some((url, model)) = endpoint {
        with_endpoint(&mut c, url, model);
    }
    c.output().unwrap()
}

fn search_json(env: &Env, dir: &Path, endpoint: Option<(&str, &str)>, query: &str) -> Value {
    let out = search(env, dir, endpoint, &["--json", "--", query]);
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
        .unwrap()
        .iter()
        .map(|h| h["title"].as_str().unwrap().to_owned())
        .collect()
}

fn vectors_of(env: &Env, model: &str) -> i64 {
    env.count(&format!(
        "SELECT count(*) FROM embeddings WHERE model = '{model}'"
    ))
}

fn records(env: &Env) -> i64 {
    env.count("SELECT (SELECT count(*) FROM observations) + (SELECT count(*) FROM summaries)")
}

fn start_worker(env: &Env, url: &str, model: &str) -> Worker {
    Worker::start(env, |c| with_endpoint(c, url, model))
}

fn wait_all_embedded(env: &Env, model: &str) {
    let all = records(env);
    wait_for(
        &format!("{all} vectors of {model}"),
        Duration::from_secs(30),
        || (vectors_of(env, model) == all).then_some(()),
    );
}

fn doctor_check(env: &Env, endpoint: Option<(&str, &str)>, extra: &[(&str, &str)]) -> Value {
    let mut c = env.mnemo();
    c.args(["doctor", "--json"]);
    if let Some((url, model)) = endpoint {
        with_endpoint(&mut c, url, model);
    }
    for (k, v) in extra {
        c.env(k, v);
    }
    let out = c.output().unwrap();
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    report["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "embeddings")
        .cloned()
        .expect("doctor has an embeddings check")
}

#[test]
fn the_worker_backfills_search_finds_by_meaning_and_a_new_model_re_embeds() {
    let env = Env::new();
    let dir = seeded(&env);
    let stand_in = EmbeddingsStandIn::start(GROUPS, DIM);
    let url = stand_in.base_url();
    let endpoint = Some((url.as_str(), "bucket-1"));

    // Full-text search alone cannot find it: no word in common.
    let before = search_json(&env, &dir, None, MEANING_QUERY);
    assert!(!titles(&before).contains(&TARGET.to_owned()), "{before}");
    assert!(
        before.get("meaning").is_none(),
        "off means no note: {before}"
    );

    let mut worker = start_worker(&env, &url, "bucket-1");
    wait_all_embedded(&env, "bucket-1");
    assert!(stand_in.seen().iter().all(|s| s.model == "bucket-1"));

    let found = search_json(&env, &dir, endpoint, MEANING_QUERY);
    assert_eq!(
        titles(&found).first().map(String::as_str),
        Some(TARGET),
        "{found}"
    );
    assert_eq!(found["meaning"]["used"], true, "{found}");
    assert!(found["meaning"]["added"].as_u64().unwrap() >= 1, "{found}");

    // The HTTP API (and so the viewer) goes through the same search.
    let (status, api) = worker.get("/api/search?q=automobile%20thermal");
    assert_eq!(status, 200, "{api}");
    assert_eq!(
        titles(&api).first().map(String::as_str),
        Some(TARGET),
        "{api}"
    );
    assert_eq!(api["meaning"]["used"], true, "{api}");

    let check = doctor_check(&env, endpoint, &[]);
    assert_eq!(check["status"], "ok", "{check}");
    let all = records(&env);
    let detail = check["detail"].as_str().unwrap();
    assert!(
        detail.contains(&format!("{all} of {all} records")),
        "{detail}"
    );
    assert!(
        detail.contains("bucket-1") && detail.contains(&url),
        "{detail}"
    );

    // Another model: everything is embedded again, with that model.
    worker.signal(libc::SIGTERM);
    worker
        .wait_exit(Duration::from_secs(10))
        .expect("worker stops");
    let _worker = start_worker(&env, &url, "bucket-2");
    wait_all_embedded(&env, "bucket-2");
    assert_eq!(vectors_of(&env, "bucket-1"), 0);
    assert!(stand_in.seen().iter().any(|s| s.model == "bucket-2"));
}

/// Vectors of `model` in packs (see `mnemo_store::vector_packs`).
fn packed_of(env: &Env, model: &str) -> i64 {
    env.count(&format!(
        "SELECT coalesce(sum(count), 0) FROM embedding_packs WHERE model = '{model}'"
    ))
}

fn wait_all_packed(env: &Env, model: &str) {
    let all = records(env);
    wait_for(
        &format!("{all} vectors of {model} packed"),
        Duration::from_secs(30),
        || (packed_of(env, model) == all).then_some(()),
    );
}

#[test]
fn the_worker_packs_a_large_store_and_search_reads_the_packs_and_the_rows() {
    let env = Env::new();
    let dir = seeded_with(&env, 700);
    let stand_in = EmbeddingsStandIn::start(GROUPS, DIM);
    let url = stand_in.base_url();
    let endpoint = Some((url.as_str(), "bucket-1"));
    let mut worker = start_worker(&env, &url, "bucket-1");
    wait_all_embedded(&env, "bucket-1");
    wait_all_packed(&env, "bucket-1");
    let all = records(&env);
    let found = search_json(&env, &dir, endpoint, MEANING_QUERY);
    assert_eq!(
        titles(&found).first().map(String::as_str),
        Some(TARGET),
        "{found}"
    );
    assert_eq!(found["meaning"]["vectors"], all, "{found}");

    // Forgetting a record drops the pack that held its vector: search reads
    // the survivors from their rows until the worker packs them again.
    worker.signal(libc::SIGTERM);
    worker
        .wait_exit(Duration::from_secs(10))
        .expect("worker stops");
    let filler: i64 = env.count("SELECT max(id) FROM observations");
    let out = env
        .mnemo()
        .args(["forget", &format!("#{filler}")])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(packed_of(&env, "bucket-1"), 0);
    let found = search_json(&env, &dir, endpoint, MEANING_QUERY);
    assert_eq!(
        titles(&found).first().map(String::as_str),
        Some(TARGET),
        "{found}"
    );
    assert_eq!(found["meaning"]["vectors"], all - 1, "{found}");
    let _worker = start_worker(&env, &url, "bucket-1");
    wait_all_packed(&env, "bucket-1");
}

#[test]
fn forgetting_a_record_removes_its_vector() {
    let env = Env::new();
    let dir = seeded(&env);
    let stand_in = EmbeddingsStandIn::start(GROUPS, DIM);
    let url = stand_in.base_url();
    let _worker = start_worker(&env, &url, "bucket-1");
    wait_all_embedded(&env, "bucket-1");
    let id: i64 = env
        .db()
        .query_row(
            "SELECT id FROM observations WHERE title = ?1",
            [TARGET],
            |r| r.get(0),
        )
        .unwrap();
    let out = env
        .mnemo()
        .args(["forget", &format!("#{id}")])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        env.count(&format!(
            "SELECT count(*) FROM embeddings WHERE kind = 'observation' AND record_id = {id}"
        )),
        0
    );
    let after = search_json(&env, &dir, Some((&url, "bucket-1")), MEANING_QUERY);
    assert!(!titles(&after).contains(&TARGET.to_owned()), "{after}");
    assert_eq!(after["meaning"]["used"], true, "{after}");
}

#[test]
fn an_endpoint_down_slow_or_answering_garbage_leaves_full_text_results_with_a_note() {
    let env = Env::new();
    let dir = seeded(&env);
    let stand_in = EmbeddingsStandIn::start(GROUPS, DIM);
    let url = stand_in.base_url();
    let down = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        format!("http://{}/v1", l.local_addr().unwrap())
    };
    let cases: [(&str, Mode, &str); 4] = [
        (&down, Mode::Ok, "cannot connect"),
        (&url, Mode::Html, "502"),
        (&url, Mode::NaN, "not JSON"),
        (
            &url,
            Mode::Slow(Duration::from_secs(3)),
            "no answer within 800 ms",
        ),
    ];
    for (endpoint, mode, says) in cases {
        stand_in.set_mode(mode);
        let results = search_json(&env, &dir, Some((endpoint, "bucket-1")), "invoice rounded");
        assert_eq!(
            titles(&results).first().map(String::as_str),
            Some("Invoice totals rounded twice"),
            "{mode:?}: {results}"
        );
        assert_eq!(results["meaning"]["used"], false, "{mode:?}: {results}");
        let why = results["meaning"]["skipped"].as_str().unwrap();
        assert!(why.contains(says), "{mode:?}: {why}");
    }
    stand_in.set_mode(Mode::Html);
    let out = search(
        &env,
        &dir,
        Some((&url, "bucket-1")),
        &["invoice", "rounded"],
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("search by meaning skipped"), "{text}");
    assert!(text.contains("Invoice totals rounded twice"), "{text}");

    // The worker stores nothing of a garbage answer, and doctor says why.
    stand_in.set_mode(Mode::WrongCount);
    let _worker = start_worker(&env, &url, "bucket-1");
    let check = wait_for(
        "doctor to report the error",
        Duration::from_secs(20),
        || {
            let check = doctor_check(&env, Some((&url, "bucket-1")), &[]);
            (check["status"] == "warn").then_some(check)
        },
    );
    let detail = check["detail"].as_str().unwrap();
    assert!(
        detail.contains("last error") && detail.contains("vectors for"),
        "{detail}"
    );
    assert_eq!(env.count("SELECT count(*) FROM embeddings"), 0);
}

#[test]
fn doctor_says_off_and_names_a_broken_setting() {
    let env = Env::new();
    seeded(&env);
    let off = doctor_check(&env, None, &[]);
    assert_eq!(off["status"], "ok", "{off}");
    assert!(off["detail"].as_str().unwrap().starts_with("off"), "{off}");

    let half = doctor_check(&env, None, &[("MNEMO_EMBEDDINGS_MODEL", "bucket-1")]);
    assert_eq!(half["status"], "warn", "{half}");
    assert!(
        half["detail"].as_str().unwrap().contains("base_url"),
        "{half}"
    );

    let no_key = doctor_check(
        &env,
        Some(("http://127.0.0.1:9/v1", "bucket-1")),
        &[("MNEMO_EMBEDDINGS_API_KEY_ENV", "MNEMO_TEST_UNSET_KEY")],
    );
    assert_eq!(no_key["status"], "warn", "{no_key}");
    assert!(
        no_key["detail"]
            .as_str()
            .unwrap()
            .contains("MNEMO_TEST_UNSET_KEY"),
        "{no_key}"
    );

    // A hook with broken settings still answers and stays silent.
    let mut c = env.mnemo();
    c.env("MNEMO_EMBEDDINGS_MODEL", "bucket-1");
    let payload = json!({"session_id": "s1", "hook_event_name": "UserPromptSubmit",
                         "cwd": env.dir.path(), "prompt": "automobile thermal"});
    c.args(["hook", "claude-code", "UserPromptSubmit"]);
    let out = common::run_with_stdin(c, payload.to_string().as_bytes());
    assert_eq!(out.status.code(), Some(0));
}

/// Fusion must not undo supersession: the older decision is nearest the
/// query by meaning and matches its words best, yet the decision that
/// replaced it stays first and the older one stays marked.
#[test]
fn a_superseded_decision_stays_below_its_successor_after_fusion() {
    let env = Env::new();
    let dir = seeded(&env);
    let decision = |title: &str, narrative: &str, hours_ago: i64| {
        json!({
            "kind": "observation",
            "project": dir,
            "type": "decision",
            "title": title,
            "narrative": narrative,
            "created_at": format_rfc3339(now_ms() - hours_ago * 3_600_000),
        })
    };
    let file = env.dir.path().join("decisions.jsonl");
    let old = "Invoice totals are stored in cents";
    let new = "Invoice totals stored as decimal instead of cents";
    let records = [
        decision(
            old,
            "Billing payment invoice amounts kept as integer cents.",
            48,
        ),
        decision(new, "Rounding errors with tax.", 1),
    ];
    let text: String = records.iter().map(|r| format!("{r}\n")).collect();
    std::fs::write(&file, text).unwrap();
    let out = env.mnemo().arg("import").arg(&file).output().unwrap();
    assert!(out.status.success());
    let stand_in = EmbeddingsStandIn::start(GROUPS, DIM);
    let url = stand_in.base_url();
    let _worker = start_worker(&env, &url, "bucket-1");
    wait_all_embedded(&env, "bucket-1");
    let query = "invoice totals billing payment";
    let found = search_json(&env, &dir, Some((&url, "bucket-1")), query);
    assert_eq!(found["meaning"]["used"], true, "{found}");
    let t = titles(&found);
    let at = |title: &str| t.iter().position(|x| x == title).expect("shown");
    assert!(at(new) < at(old), "{t:#?}");
    let hits = found["hits"].as_array().unwrap();
    assert_eq!(
        hits[at(old)]["superseded_by"],
        hits[at(new)]["id"],
        "{found}"
    );
}
