//! One record shape, one vocabulary, one grammar for ids and dates: the same
//! observation fetched through the CLI (`show`, `search`), the MCP server
//! (`get_observations`, `search`), every HTTP route, the live stream and
//! `mnemo export` carries the same field names and values; types, ids and
//! dates mean the same on every interface; unknown values are errors that
//! say what is accepted; `context --project` resolves as `search --project`;
//! `import` takes the documented claude-mem shape and never stores a record
//! nobody can reach.

mod common;
#[path = "common/mcp.rs"]
mod mcp_client;
#[path = "common/worker.rs"]
mod worker_support;

use std::path::Path;
use std::process::Output;
use std::time::Duration;

use common::*;
use mcp_client::McpClient;
use serde_json::{Value, json};
use worker_support::*;

const T: Duration = Duration::from_secs(30);
/// A time zone far from UTC (POSIX form, no tz database needed): 14 hours
/// ahead, so that a local day and a UTC day differ.
const FAR_EAST: &str = "XYZ-14";

// ---- helpers ----

fn run(env: &Env, dir: &Path, args: &[&str], tz: &str) -> Output {
    env.mnemo()
        .current_dir(dir)
        .env("TZ", tz)
        .args(args)
        .output()
        .unwrap()
}

fn cli_json(env: &Env, dir: &Path, args: &[&str]) -> Value {
    let out = run(env, dir, args, FAR_EAST);
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// Runs a command that must fail; its stderr.
fn cli_error(env: &Env, dir: &Path, args: &[&str]) -> String {
    let out = run(env, dir, args, FAR_EAST);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(
        !out.status.success(),
        "{args:?} must fail; stdout: {}; stderr: {stderr}",
        String::from_utf8_lossy(&out.stdout)
    );
    stderr
}

fn write_jsonl(env: &Env, name: &str, records: &[Value]) -> std::path::PathBuf {
    let file = env.dir.path().join(name);
    let text: String = records.iter().map(|r| format!("{r}\n")).collect();
    std::fs::write(&file, text).unwrap();
    file
}

/// Every key two shapes share has the same value; the keys every shape of
/// the kind must carry are present in both.
fn assert_same(what: &str, a: &Value, b: &Value, required: &[&str]) {
    let (a, b) = (a.as_object().unwrap(), b.as_object().unwrap());
    for key in required {
        assert!(a.contains_key(*key), "{what}: left lacks `{key}`: {a:?}");
        assert!(b.contains_key(*key), "{what}: right lacks `{key}`: {b:?}");
    }
    for (key, value) in a {
        if let Some(other) = b.get(key) {
            assert_eq!(value, other, "{what}: `{key}` differs");
        }
    }
}

fn find(items: &Value, id: i64) -> &Value {
    items
        .as_array()
        .unwrap_or_else(|| panic!("a list: {items}"))
        .iter()
        .find(|i| i["id"] == id)
        .unwrap_or_else(|| panic!("id {id} in {items}"))
}

/// The hit whose display ref is `reference` (ids repeat across kinds).
fn find_ref<'a>(hits: &'a Value, reference: &str) -> &'a Value {
    hits.as_array()
        .unwrap_or_else(|| panic!("a list: {hits}"))
        .iter()
        .find(|i| i["ref"] == reference)
        .unwrap_or_else(|| panic!("{reference} in {hits}"))
}

fn export_lines(env: &Env, kind: &str) -> Vec<Value> {
    let out = env.mnemo().arg("export").output().unwrap();
    assert!(out.status.success());
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|v| v["kind"] == kind)
        .collect()
}

const RECORD_KEYS: &[&str] = &[
    "id",
    "ref",
    "kind",
    "created_at",
    "created_at_ms",
    "project",
    "session",
    "prompt_number",
    "uid",
    "source",
];
const OBSERVATION_KEYS: &[&str] = &[
    "type",
    "title",
    "subtitle",
    "narrative",
    "facts",
    "concepts",
    "files_read",
    "files_modified",
];
const HIT_KEYS: &[&str] = &[
    "id",
    "ref",
    "kind",
    "type",
    "title",
    "created_at",
    "created_at_ms",
    "project",
    "session",
];

// ---- one shape ----

#[test]
fn every_interface_returns_the_same_observation_and_summary() {
    let env = Env::new();
    let proj = project(&env, "shapes");
    let w = Worker::start(&env, |c| {
        c.env("TZ", FAR_EAST);
    });
    let mut stream = Sse::connect(w.port, &w.token);
    let session = "50000000-0000-0000-0000-000000000005";
    turn(&env, &proj, session, 1, &["shape.rs"]);
    let (mut streamed_obs, mut streamed_sum) = (None, None);
    while streamed_obs.is_none() || streamed_sum.is_none() {
        let (kind, data) = stream.next_event(T).expect("an event");
        match kind.as_str() {
            "observation" => streamed_obs = Some(data),
            "summary" => streamed_sum = Some(data),
            other => panic!("unexpected {other}"),
        }
    }
    let streamed = streamed_obs.unwrap();
    let id = streamed["id"].as_i64().expect("a numeric id");
    let reference = format!("#{id}");

    // The canonical record: `mnemo show --json`.
    let shown = cli_json(&env, &proj, &["show", &reference, "--json"]);
    let record = &shown["records"][0];
    assert_eq!(record["id"], id, "{record}");
    assert_eq!(record["ref"], reference);
    assert_eq!(record["kind"], "observation");
    assert_eq!(
        record["project"],
        json!({"root": proj, "name": "shapes"}),
        "project is root and name"
    );
    assert_eq!(record["session"]["session_id"], session);
    assert_eq!(record["session"]["platform"], "claude-code");
    assert_eq!(record["prompt_number"], 1);
    let full: Vec<&str> = RECORD_KEYS
        .iter()
        .chain(OBSERVATION_KEYS)
        .copied()
        .collect();

    assert_same("stream", record, &streamed, &full);
    let (_, listed) = w.get("/api/observations");
    assert_same(
        "/api/observations",
        record,
        find(&listed["items"], id),
        &full,
    );
    for path in [
        format!("/api/observations/{id}"),
        format!("/api/observations/%23{id}"),
    ] {
        let (code, one) = w.get(&path);
        assert_eq!(code, 200, "{path}: {one}");
        assert_same(&path, record, &one, &full);
    }
    let (code, batch) = w.post("/api/observations/batch", &json!({"ids": [reference, id]}));
    assert_eq!(code, 200, "{batch}");
    assert_eq!(batch["items"].as_array().unwrap().len(), 1, "{batch}");
    assert_same("batch", record, &batch["items"][0], &full);
    let exported = export_lines(&env, "observation");
    assert_same("export", record, &exported[0], &full);

    let mut mcp = McpClient::start(&env, &proj, &[]);
    let (got, error) = mcp.call_structured(
        "get_observations",
        json!({"ids": [reference], "format": "json"}),
    );
    assert!(!error, "{got}");
    assert_same("mcp get_observations", record, &got["records"][0], &full);
    // Text stays the default: what an agent reads at the least cost.
    let (plain, _) = mcp.call_structured("get_observations", json!({"ids": [reference]}));
    assert!(plain.is_null(), "no JSON unless asked: {plain}");

    // Search hits are one line per item, with the same common fields.
    let hits = cli_json(&env, &proj, &["search", "--json"]);
    let hit = find_ref(&hits["hits"], &reference);
    assert_same("search --json", record, hit, HIT_KEYS);
    let (_, api_hits) = w.get("/api/search?q=");
    assert_same(
        "/api/search",
        hit,
        find_ref(&api_hits["hits"], &reference),
        HIT_KEYS,
    );
    let (mcp_hits, error) = mcp.call_structured("search", json!({"query": "", "format": "json"}));
    assert!(!error, "{mcp_hits}");
    assert_same(
        "mcp search",
        hit,
        find_ref(&mcp_hits["hits"], &reference),
        HIT_KEYS,
    );

    // The summary of the turn, likewise.
    let summary = streamed_sum.unwrap();
    let sid = summary["id"].as_i64().unwrap();
    let shown = cli_json(&env, &proj, &["show", &format!("S{sid}"), "--json"]);
    let canonical = &shown["records"][0];
    assert_eq!(canonical["ref"], format!("S{sid}"));
    assert_eq!(canonical["kind"], "summary");
    let keys: Vec<&str> = RECORD_KEYS
        .iter()
        .chain(&["request", "completed"])
        .copied()
        .collect();
    assert_same("summary stream", canonical, &summary, &keys);
    let (_, listed) = w.get("/api/summaries");
    assert_same(
        "/api/summaries",
        canonical,
        find(&listed["items"], sid),
        &keys,
    );
    assert_same(
        "summary export",
        canonical,
        &export_lines(&env, "summary")[0],
        &keys,
    );

    // And the prompt.
    let (_, prompts) = w.get("/api/prompts");
    let pid = prompts["items"][0]["id"].as_i64().unwrap();
    let shown = cli_json(&env, &proj, &["show", &format!("P{pid}"), "--json"]);
    let keys: Vec<&str> = RECORD_KEYS
        .iter()
        .filter(|k| **k != "source")
        .chain(&["text"])
        .copied()
        .collect();
    assert_same(
        "/api/prompts",
        &shown["records"][0],
        &prompts["items"][0],
        &keys,
    );
    assert_same(
        "prompt export",
        &shown["records"][0],
        &export_lines(&env, "prompt")[0],
        &keys,
    );

    // Sessions name their project the same way.
    let (_, sessions) = w.get("/api/sessions");
    let s = &sessions["items"][0];
    assert_eq!(s["session_id"], session, "{s}");
    assert_eq!(s["platform"], "claude-code");
    assert_eq!(s["project"], record["project"]);
    let exported = &export_lines(&env, "session")[0];
    assert_same(
        "session export",
        s,
        exported,
        &[
            "id",
            "kind",
            "platform",
            "session_id",
            "project",
            "started_at",
        ],
    );
}

// ---- one vocabulary, one id grammar, one date grammar, one style of error ----

/// Two observations in `shop` (a bugfix 2026-11-20 12:00 UTC, which is the
/// 21st in FAR_EAST; a decision now) and one in `blog`, imported in the
/// claude-mem shape.
fn fill(env: &Env) -> (std::path::PathBuf, std::path::PathBuf) {
    let shop = project(env, "shop");
    let blog = project(env, "blog");
    let now = mnemo_core::time::format_rfc3339(mnemo_core::time::now_ms());
    let file = write_jsonl(
        env,
        "claude-mem.jsonl",
        &[
            json!({"project": shop, "type": "bugfix", "title": "Token refresh race fixed",
                   "subtitle": "two tabs", "narrative": "A lock around refresh.",
                   "facts": ["refresh is serialized"], "concepts": ["auth"],
                   "files_read": [], "files_modified": ["src/auth.rs"],
                   "created_at": "2026-11-20T12:00:00Z"}),
            json!({"project": shop, "type": "decision", "title": "Keep sessions in SQLite",
                   "subtitle": "", "narrative": "Simpler.", "facts": [], "concepts": [],
                   "files_read": [], "files_modified": [], "created_at": now}),
            json!({"project": blog, "type": "feature", "title": "RSS feed added",
                   "subtitle": "", "narrative": "", "facts": [], "concepts": [],
                   "files_read": [], "files_modified": ["feed.rs"], "created_at": now}),
        ],
    );
    let out = run(
        env,
        env.dir.path(),
        &["import", file.to_str().unwrap()],
        FAR_EAST,
    );
    assert!(
        out.status.success(),
        "the documented claude-mem shape imports: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    (shop, blog)
}

fn titles(items: &Value) -> Vec<String> {
    let mut t: Vec<String> = items
        .as_array()
        .unwrap_or_else(|| panic!("a list: {items}"))
        .iter()
        .map(|i| i["title"].as_str().unwrap().to_owned())
        .collect();
    t.sort();
    t
}

#[test]
fn types_ids_and_dates_mean_the_same_everywhere() {
    let env = Env::new();
    let (shop, _blog) = fill(&env);
    let w = Worker::start(&env, |c| {
        c.env("TZ", FAR_EAST);
    });

    // `fix` is bugfix on the API as on the CLI.
    let cli = cli_json(&env, &shop, &["search", "--all", "-t", "fix", "--json"]);
    assert_eq!(titles(&cli["hits"]), ["Token refresh race fixed"]);
    let (code, api) = w.get("/api/observations?type=fix");
    assert_eq!(code, 200, "{api}");
    assert_eq!(titles(&api["items"]), titles(&cli["hits"]));
    let (_, api) = w.get("/api/search?type=fix");
    assert_eq!(titles(&api["hits"]), titles(&cli["hits"]));

    // A local day: the 21st in FAR_EAST starts at 2026-11-20T10:00Z.
    let cli = cli_json(
        &env,
        &shop,
        &[
            "search",
            "--all",
            "--since",
            "2026-11-21",
            "--until",
            "2026-11-21",
            "--json",
        ],
    );
    assert_eq!(titles(&cli["hits"]), ["Token refresh race fixed"]);
    for route in ["/api/observations", "/api/search"] {
        let (code, api) = w.get(&format!("{route}?since=2026-11-21&until=2026-11-21"));
        assert_eq!(code, 200, "{route}: {api}");
        let items = if api["items"].is_null() {
            &api["hits"]
        } else {
            &api["items"]
        };
        assert_eq!(titles(items), titles(&cli["hits"]), "{route}");
    }
    // A span.
    let cli = cli_json(
        &env,
        &shop,
        &[
            "search",
            "--all",
            "--since",
            "1d",
            "-t",
            "decision,feature",
            "--json",
        ],
    );
    let (code, api) = w.get("/api/observations?since=1d");
    assert_eq!(code, 200, "{api}");
    assert_eq!(titles(&api["items"]), titles(&cli["hits"]));
    assert_eq!(
        titles(&api["items"]),
        ["Keep sessions in SQLite", "RSS feed added"]
    );
    let (code, api) = w.get("/api/summaries?since=7d");
    assert_eq!(code, 200, "{api}");

    // Ids in every form, in a batch; the missing ones are listed.
    let (_, all) = w.get("/api/observations?type=bugfix");
    let bug = all["items"][0]["id"].as_i64().unwrap();
    let (code, batch) = w.post(
        "/api/observations/batch",
        &json!({"ids": [format!("#{bug}"), bug.to_string(), "99999", 99998]}),
    );
    assert_eq!(code, 200, "{batch}");
    assert_eq!(titles(&batch["items"]), ["Token refresh race fixed"]);
    assert_eq!(batch["missing"], json!(["#99999", "#99998"]));
    let (code, body) = w.post("/api/observations/batch", &json!({"ids": ["x1"]}));
    assert_eq!(code, 400, "{body}");
    assert!(body["error"].as_str().unwrap().contains("S12"), "{body}");
    let (code, body) = w.get("/api/observations/O99999");
    assert_eq!(code, 404, "{body}");

    let mut mcp = McpClient::start(&env, &shop, &[]);
    let (got, error) = mcp.call_structured(
        "get_observations",
        json!({"ids": [bug, "#99999"], "format": "json"}),
    );
    assert!(!error, "{got}");
    assert_eq!(got["missing"], json!(["#99999"]));
    assert_eq!(got["records"][0]["id"], bug);
    let (got, _) = mcp.call_structured(
        "search",
        json!({"query": "", "type": "fix", "format": "json"}),
    );
    assert_eq!(titles(&got["hits"]), ["Token refresh race fixed"]);

    // CLI: a line per missing id, non-zero only when none was found.
    let out = run(&env, &shop, &["show", &bug.to_string(), "#99999"], FAR_EAST);
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("#99999"));
    let err = cli_error(&env, &shop, &["show", "#99999", "P99999"]);
    assert!(err.contains("#99999") && err.contains("P99999"), "{err}");
}

#[test]
fn unknown_values_are_errors_that_list_what_is_accepted() {
    let env = Env::new();
    let (shop, _) = fill(&env);
    let w = Worker::start(&env, |_| {});

    let err = cli_error(&env, &shop, &["search", "-t", "bogus"]);
    assert!(
        err.contains("bogus") && err.contains("bugfix") && err.contains("decision"),
        "{err}"
    );
    // Also where the project has no memory yet: the value is wrong anyway.
    let empty = env.dir.path().join("empty-project");
    std::fs::create_dir_all(&empty).unwrap();
    let err = cli_error(&env, &empty, &["search", "-t", "bogus"]);
    assert!(err.contains("bogus") && err.contains("bugfix"), "{err}");
    for route in ["/api/observations?type=bogus", "/api/search?type=bogus"] {
        let (code, body) = w.get(route);
        assert_eq!(code, 400, "{route}: {body}");
        let msg = body["error"].as_str().unwrap();
        assert!(msg.contains("bogus") && msg.contains("bugfix"), "{msg}");
    }
    let mut mcp = McpClient::start(&env, &shop, &[]);
    let v = mcp.request(
        "tools/call",
        json!({"name": "search", "arguments": {"query": "", "type": "bogus"}}),
    );
    assert_eq!(v["result"]["isError"], true, "{v}");
    let (_, error) = mcp.call_structured("search", json!({"query": "", "format": "xml"}));
    assert!(error, "an unknown format is an error");

    // A session that matches nothing.
    let err = cli_error(&env, &shop, &["search", "--session", "11"]);
    assert!(err.contains("11") && err.contains("session"), "{err}");
    let (code, body) = w.get("/api/observations?session=11");
    assert_eq!(code, 400, "{body}");

    // A date that does not parse, the same message on both.
    let err = cli_error(&env, &shop, &["search", "--since", "someday"]);
    let (code, body) = w.get("/api/observations?since=someday");
    assert_eq!(code, 400);
    assert!(
        err.contains(body["error"].as_str().unwrap()),
        "{err} / {body}"
    );

    // The queue: an event that does not exist.
    let err = cli_error(&env, &shop, &["worker", "retry", "99999"]);
    assert!(err.contains("99999"), "{err}");
    let (code, body) = w.post("/api/queue/retry", &json!({"ids": [99999]}));
    assert_eq!(code, 404, "{body}");
    assert_eq!(body["missing"], json!([99999]), "{body}");

    let err = cli_error(&env, &shop, &["stats", "--days", "0"]);
    assert!(err.contains("days"), "{err}");
    let (code, _) = w.get("/api/stats?days=0");
    assert_eq!(code, 400);
}

// ---- projects that moved; import as documented ----

#[test]
fn context_project_resolves_as_search_project_does() {
    let env = Env::new();
    let moved = env.dir.path().join("gone").join("shop");
    let file = write_jsonl(
        &env,
        "old.jsonl",
        &[
            json!({"project": moved, "type": "decision", "title": "Prices are integers",
                   "narrative": "Cents.", "created_at": "2026-11-20T12:00:00Z"}),
            json!({"project": "/elsewhere/site", "type": "feature", "title": "Site one",
                   "created_at": "2026-11-20T12:00:00Z"}),
            json!({"project": "/other/site", "type": "feature", "title": "Site two",
                   "created_at": "2026-11-20T12:00:00Z"}),
        ],
    );
    let out = run(
        &env,
        env.dir.path(),
        &["import", file.to_str().unwrap()],
        "UTC",
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let here = env.dir.path();
    for arg in [moved.to_str().unwrap(), "shop"] {
        let hits = cli_json(&env, here, &["search", "--project", arg, "--json"]);
        assert_eq!(
            titles(&hits["hits"]),
            ["Prices are integers"],
            "search {arg}"
        );
        let ctx = cli_json(&env, here, &["context", "--project", arg, "--json"]);
        assert!(
            ctx["text"]
                .as_str()
                .unwrap()
                .contains("Prices are integers"),
            "context {arg}: {ctx}"
        );
    }
    // The MCP tool and the API resolve it the same way.
    let mut mcp = McpClient::start(&env, here, &[]);
    let v = mcp.request(
        "tools/call",
        json!({"name": "context", "arguments": {"project": "shop"}}),
    );
    let text = v["result"]["content"][0]["text"].as_str().unwrap();
    assert!(text.contains("Prices are integers"), "{v}");
    let w = Worker::start(&env, |_| {});
    let (code, ctx) = w.get(&format!(
        "/api/context?project={}",
        moved.to_str().unwrap().replace('/', "%2F")
    ));
    assert_eq!(code, 200, "{ctx}");
    assert!(
        ctx["text"]
            .as_str()
            .unwrap()
            .contains("Prices are integers")
    );
    let err = cli_error(&env, here, &["context", "--project", "site"]);
    assert!(
        err.contains("/elsewhere/site") && err.contains("/other/site"),
        "{err}"
    );
    let err = cli_error(&env, here, &["context", "--project", "nowhere"]);
    assert!(err.contains("nowhere") && err.contains("shop"), "{err}");
}

#[test]
fn import_refuses_what_would_be_unreachable_or_takes_a_project() {
    let env = Env::new();
    let shop = project(&env, "shop");
    let file = write_jsonl(
        &env,
        "loose.jsonl",
        &[
            json!({"type": "bugfix", "title": "No project here", "created_at": "2026-11-20T12:00:00Z"}),
            json!({"kind": "summary", "request": "Nor here", "created_at": "2026-11-20T12:00:00Z"}),
        ],
    );
    let out = run(&env, here(&env), &["import", file.to_str().unwrap()], "UTC");
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(":1:") && err.contains("project") && err.contains("--project"),
        "{err}"
    );
    assert!(err.contains(":2:"), "{err}");
    assert_eq!(env.count("SELECT count(*) FROM observations"), 0);
    assert_eq!(env.count("SELECT count(*) FROM summaries"), 0);

    let out = run(
        &env,
        here(&env),
        &[
            "import",
            file.to_str().unwrap(),
            "--project",
            shop.to_str().unwrap(),
        ],
        "UTC",
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let hits = cli_json(&env, &shop, &["search", "--json"]);
    assert_eq!(titles(&hits["hits"]), ["No project here", "Nor here"]);
    // An exported file imports again as it is (project and session objects).
    let export = env.mnemo().arg("export").output().unwrap();
    let other = Env::new();
    let file = other.dir.path().join("all.jsonl");
    std::fs::write(&file, &export.stdout).unwrap();
    let out = other.mnemo().arg("import").arg(&file).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let again = other
        .mnemo()
        .current_dir(&shop)
        .args(["search", "--json"])
        .output()
        .unwrap();
    let again: Value = serde_json::from_slice(&again.stdout).unwrap();
    assert_eq!(titles(&again["hits"]), ["No project here", "Nor here"]);
}

fn here(env: &Env) -> &Path {
    env.dir.path()
}
