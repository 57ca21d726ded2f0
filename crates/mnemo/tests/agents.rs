//! One memory across agents (issue 12, parts 3 and 4), through the real
//! binary and a real SQLite file: hooks registered twice record once, a
//! Cursor payload is one event whichever command receives it, a session
//! started by `/clear` or compaction names the one it continues, and
//! recall names and filters the agent of what it gives back (CLI, MCP,
//! HTTP on loopback); and Cursor's thinking blocks are remembered as the
//! why of the turn they belong to.

mod common;
#[path = "common/mcp.rs"]
mod mcp_client;
#[path = "common/worker.rs"]
mod worker_support;

use std::path::{Path, PathBuf};
use std::process::Output;

use common::*;
use mcp_client::McpClient;
use mnemo_core::time::{format_rfc3339, now_ms};
use serde_json::{Value, json};
use worker_support::Worker;

const SESSION: &str = "1a496781-2e55-42d7-94f9-78b02582f5bf";

fn project(env: &Env) -> PathBuf {
    let p = env.dir.path().join("demo");
    std::fs::create_dir_all(&p).unwrap();
    p.canonicalize().unwrap()
}

/// The Claude Code session of the fixtures, event by event.
const SESSION_EVENTS: [(&str, &str); 6] = [
    ("SessionStart", "SessionStart.json"),
    ("UserPromptSubmit", "UserPromptSubmit.json"),
    ("PostToolUse", "PostToolUse.Write.json"),
    ("PostToolUseFailure", "PostToolUseFailure.Bash.json"),
    ("Stop", "Stop.json"),
    ("SessionEnd", "SessionEnd.json"),
];

/// Runs `mnemo hook <platform> <event>` for each payload at once, as a host
/// does when the hook is registered twice (settings and plugin, user and
/// project scope), and checks each answered as a hook must.
fn deliver_at_once(env: &Env, deliveries: &[(&str, &str, String)]) {
    let outputs: Vec<Output> = std::thread::scope(|scope| {
        let handles: Vec<_> = deliveries
            .iter()
            .map(|(platform, event, payload)| {
                scope.spawn(move || {
                    let mut c = env.mnemo();
                    c.args(["hook", platform, event]);
                    run_with_stdin(c, payload.as_bytes())
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    for out in &outputs {
        assert_hook_ok(out);
    }
}

/// What the store holds, as rows of text, for comparing two stores.
fn recorded(env: &Env) -> Vec<String> {
    env.strings(
        "SELECT 'session ' || platform || ' ' || platform_session_id || ' ' || status
                || ' turns=' || prompt_count FROM sessions
         UNION ALL SELECT 'prompt ' || prompt_number || ' ' || text FROM prompts
         UNION ALL SELECT 'event ' || kind || ' ' || prompt_number || ' '
                || COALESCE(tool_name, '-') || ' ' || COALESCE(input, '-') FROM events
         ORDER BY 1",
    )
}

fn without(payload: &str, keys: &[&str]) -> String {
    let mut v: Value = serde_json::from_str(payload).unwrap();
    for k in keys {
        v.as_object_mut().unwrap().remove(*k);
    }
    v.to_string()
}

/// Delivers the fixture session to a fresh store, each payload `times`
/// times at once, with `strip` removed from every payload.
fn session_delivered(times: usize, strip: &[&str]) -> (Env, Vec<String>) {
    let env = Env::new();
    let proj = project(&env);
    for (event, file) in SESSION_EVENTS {
        let payload = without(&fixture_for(file, &proj, SESSION), strip);
        let copies: Vec<_> = (0..times)
            .map(|_| ("claude-code", event, payload.clone()))
            .collect();
        deliver_at_once(&env, &copies);
    }
    let rows = recorded(&env);
    (env, rows)
}

#[test]
fn hooks_registered_twice_record_each_event_once() {
    let (_e, once) = session_delivered(1, &[]);
    let (_e, twice) = session_delivered(2, &[]);
    assert_eq!(twice, once);
    assert!(once.iter().any(|r| r.starts_with("event tool_use 1 Write")));
}

/// Hosts and scripts that give no prompt or tool ids (and Claude Code
/// versions before 2.0.43): the same payload twice is still one record.
#[test]
fn payloads_without_ids_delivered_twice_at_once_are_stored_once() {
    let strip = ["prompt_id", "tool_use_id"];
    let (_e, once) = session_delivered(1, &strip);
    let (_e, thrice) = session_delivered(3, &strip);
    assert_eq!(thrice, once);
    assert_eq!(
        once.iter().filter(|r| r.starts_with("event ")).count(),
        3,
        "{once:#?}"
    );
    assert!(once.iter().any(|r| r.ends_with("turns=1")), "{once:#?}");
}

fn cursor_fixture(name: &str, project: &Path) -> String {
    let text = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/agents")
            .join(format!("cursor.{name}.json")),
    )
    .unwrap();
    let mut v: Value = serde_json::from_str(&text).unwrap();
    v["workspace_roots"] = json!([project]);
    v.to_string()
}

/// The recorded Cursor session (camelCase events), and the same payloads
/// named as Claude Code names them, as Cursor may hand them to the hooks it
/// runs from `.claude/settings.json` (`afterAgentResponse` has no Claude
/// name: the turn's end then comes twice, with and without the answer).
fn cursor_session(project: &Path) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for (name, claude_name) in [
        ("sessionStart", Some("SessionStart")),
        ("beforeSubmitPrompt", Some("UserPromptSubmit")),
        ("postToolUse.Shell", Some("PostToolUse")),
        ("postToolUse.Write", Some("PostToolUse")),
        ("postToolUseFailure.Shell", Some("PostToolUseFailure")),
        ("afterAgentResponse", None),
        ("stop", Some("Stop")),
        ("sessionEnd", Some("SessionEnd")),
    ] {
        let payload = cursor_fixture(name, project);
        let event = name.split('.').next().unwrap().to_owned();
        if let Some(claude_name) = claude_name {
            let mut renamed: Value = serde_json::from_str(&payload).unwrap();
            renamed["hook_event_name"] = json!(claude_name);
            out.push((claude_name.to_owned(), renamed.to_string()));
        }
        out.push((event, payload));
    }
    out
}

/// A store that already holds a Claude Code session of another project.
fn store_in_use() -> (Env, PathBuf) {
    let env = Env::new();
    let other = env.dir.path().join("other");
    std::fs::create_dir_all(&other).unwrap();
    hook(
        &env,
        "SessionStart",
        payload("SessionStart.json", &other, "elsewhere", json!({})),
    );
    let proj = project(&env);
    (env, proj)
}

#[test]
fn cursor_payloads_through_both_commands_are_stored_once() {
    // Baseline: Cursor's own hooks.json only.
    let (alone, proj) = store_in_use();
    for (event, payload) in cursor_session(&proj) {
        deliver_at_once(&alone, &[("cursor", &event, payload)]);
    }
    // Both registrations fire, at once, for every event.
    let (both, proj) = store_in_use();
    for (event, payload) in cursor_session(&proj) {
        deliver_at_once(
            &both,
            &[
                ("cursor", &event, payload.clone()),
                ("claude-code", &event, payload),
            ],
        );
    }
    assert_eq!(
        both.count(
            "SELECT count(*) FROM sessions s JOIN projects p ON p.id = s.project_id
             WHERE s.platform <> 'cursor' AND p.name = 'demo'"
        ),
        0,
        "{:#?}",
        recorded(&both)
    );
    assert_eq!(recorded(&both), recorded(&alone));
    // One turn, one turn end, with the answer `afterAgentResponse` carried.
    for env in [&alone, &both] {
        assert_eq!(
            env.strings(
                "SELECT coalesce(e.response, 'NULL') FROM events e
                 JOIN sessions s ON s.id = e.session_id
                 WHERE e.kind = 'turn_end' AND s.platform = 'cursor'"
            )
            .len(),
            1,
            "{:#?}",
            recorded(env)
        );
    }
    assert_eq!(
        both.count(
            "SELECT count(*) FROM (SELECT tool_use_id FROM events
             WHERE tool_use_id IS NOT NULL GROUP BY tool_use_id HAVING count(*) > 1)"
        ),
        0
    );
}

fn hook(env: &Env, event: &str, payload: Value) {
    assert_hook_ok(&env.hook(event, &payload.to_string()));
}

fn payload(file: &str, project: &Path, session: &str, changes: Value) -> Value {
    let mut v: Value = serde_json::from_str(&fixture_for(file, project, session)).unwrap();
    for (k, val) in changes.as_object().unwrap() {
        v[k] = val.clone();
    }
    v
}

/// One turn of a Claude Code session: its prompt (with `prompt_id`) and
/// its turn end.
fn turn(env: &Env, project: &Path, session: &str, prompt_id: &str, text: &str) {
    hook(
        env,
        "UserPromptSubmit",
        payload(
            "UserPromptSubmit.json",
            project,
            session,
            json!({"prompt_id": prompt_id, "prompt": text}),
        ),
    );
    hook(
        env,
        "Stop",
        payload(
            "Stop.json",
            project,
            session,
            json!({"prompt_id": prompt_id}),
        ),
    );
}

#[test]
fn clear_and_compaction_continue_the_session_they_replace() {
    let env = Env::new();
    let proj = project(&env);
    let start = |session: &str, source: &str| {
        hook(
            &env,
            "SessionStart",
            payload(
                "SessionStart.json",
                &proj,
                session,
                json!({"source": source}),
            ),
        );
    };
    start("first", "startup");
    turn(&env, &proj, "first", "p1", "add a login form");
    hook(
        &env,
        "SessionEnd",
        payload(
            "SessionEnd.json",
            &proj,
            "first",
            json!({"reason": "clear"}),
        ),
    );
    start("second", "clear");
    turn(&env, &proj, "second", "p2", "now validate the email field");
    start("third", "compact");
    turn(&env, &proj, "third", "p3", "and show the errors inline");
    // A new session started by hand continues nothing.
    start("fourth", "startup");

    assert_eq!(
        env.strings(
            "SELECT s.platform_session_id || ' <- ' || COALESCE(o.platform_session_id, '-')
             FROM sessions s LEFT JOIN sessions o ON o.id = s.continues ORDER BY s.id"
        ),
        [
            "first <- -",
            "second <- first",
            "third <- second",
            "fourth <- -"
        ]
    );
    // `mnemo show` of a prompt of the continued session says so, and so
    // does its JSON record.
    let out = env.mnemo().args(["show", "P3"]).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("claude-code third, turn 1 (continues second)"),
        "{text}"
    );
    let out = env.mnemo().args(["show", "P3", "--json"]).output().unwrap();
    let json: Value = serde_json::from_slice(&out.stdout).unwrap();
    let record = json.get("records").map_or(&json, |r| &r[0]);
    assert_eq!(record["session"]["continues"], "second", "{json}");

    // The turns of the three sessions, summarized, are one line of work in
    // the next session's index; the unrelated fourth session is its own.
    let summary = |sid: &str, request: &str, completed: &str| {
        json!({"kind": "summary", "project": proj, "platform": "claude-code", "session_id": sid,
               "prompt_number": 1, "request": request, "completed": completed,
               "next_steps": if sid == "third" { "style the error text" } else { "" }})
    };
    import(
        &env,
        &[vec![
            summary("first", "add a login form", "form renders"),
            summary("second", "now validate the email field", "emails validated"),
            summary("third", "and show the errors inline", "errors shown inline"),
            summary("fourth", "bump the version", "version bumped"),
        ]],
    );
    let index = ok(&env, &proj, &["context"]);
    let line = index
        .lines()
        .find(|l| l.contains("add a login form"))
        .unwrap_or_else(|| panic!("{index}"));
    assert!(line.contains("3 turns [open]"), "{index}");
    assert!(line.contains("(+2 more)"), "{index}");
    assert!(line.contains("errors shown inline"), "{index}");
    assert!(line.contains("open: style the error text"), "{index}");
    assert!(!line.contains("version"), "{index}");
    assert_eq!(index.matches("asked:").count(), 2, "{index}");
}

const HOUR: i64 = 3600 * 1000;

fn git_project(env: &Env, name: &str) -> PathBuf {
    let dir = env.dir.path().join(name);
    mnemo_testkit::git_init(&dir).unwrap();
    dir.canonicalize().unwrap()
}

/// One session of `agent` with one turn: its prompt, an observation and
/// the turn's summary, `hours_ago`.
fn agent_session(
    agent: &str,
    sid: &str,
    project: &Path,
    title: &str,
    hours_ago: i64,
) -> Vec<Value> {
    let at = |ms: i64| format_rfc3339(now_ms() - hours_ago * HOUR + ms);
    let key = json!({"platform": agent, "session_id": sid, "prompt_number": 1});
    let with_key = |mut v: Value| {
        for (k, val) in key.as_object().unwrap() {
            v[k] = val.clone();
        }
        v
    };
    vec![
        json!({"kind": "session", "platform": agent, "session_id": sid, "project": project,
               "started_at": at(0), "status": "ended"}),
        with_key(json!({"kind": "prompt", "uid": format!("{sid}-p1"),
                        "text": format!("please work on {title}"), "created_at": at(1000)})),
        with_key(
            json!({"kind": "observation", "project": project, "type": "feature",
                        "title": title, "narrative": format!("{title}, done."),
                        "files_modified": [project.join("src/app.py")], "created_at": at(2000)}),
        ),
        with_key(json!({"kind": "summary", "project": project,
                        "request": format!("please work on {title}"),
                        "completed": format!("{title} works"), "created_at": at(3000)})),
    ]
}

fn import(env: &Env, records: &[Vec<Value>]) {
    let file = env.dir.path().join("import.jsonl");
    let text: String = records.iter().flatten().map(|r| format!("{r}\n")).collect();
    std::fs::write(&file, text).unwrap();
    let out = env.mnemo().arg("import").arg(&file).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn run(env: &Env, dir: &Path, args: &[&str]) -> (bool, String, String) {
    let out = env.mnemo().current_dir(dir).args(args).output().unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn ok(env: &Env, dir: &Path, args: &[&str]) -> String {
    let (success, stdout, stderr) = run(env, dir, args);
    assert!(success, "{args:?}: {stderr}");
    stdout
}

/// A project worked on by Claude Code then Codex, and one by Claude Code
/// alone.
fn two_agents(env: &Env) -> (PathBuf, PathBuf) {
    let shop = git_project(env, "shop");
    let blog = git_project(env, "blog");
    import(
        env,
        &[
            agent_session(
                "claude-code",
                "claude-1",
                &shop,
                "Login form with hashing",
                30,
            ),
            agent_session("codex", "codex-1", &shop, "Login rate limiter", 5),
            agent_session(
                "claude-code",
                "claude-2",
                &blog,
                "Login page for the blog",
                3,
            ),
        ],
    );
    (shop, blog)
}

#[test]
fn the_index_names_the_agent_only_where_several_worked() {
    let env = Env::new();
    let (shop, blog) = two_agents(&env);
    let index = ok(&env, &shop, &["context"]);
    assert!(
        index.contains("[codex]") && index.contains("[claude-code]"),
        "{index}"
    );
    let line = |text: &str, needle: &str| {
        text.lines()
            .find(|l| l.contains(needle))
            .unwrap_or_else(|| panic!("no line with {needle}: {text}"))
            .to_owned()
    };
    assert!(
        line(&index, "Login rate limiter").contains("[codex]"),
        "{index}"
    );
    assert!(
        line(&index, "Login form with hashing").contains("[claude-code]"),
        "{index}"
    );
    // A Claude-only project reads as before: no tags.
    let index = ok(&env, &blog, &["context"]);
    assert!(index.contains("Login page for the blog"), "{index}");
    assert!(!index.contains("[claude-code]"), "{index}");
    // Filtered to one agent: only its memory, untagged.
    let index = ok(&env, &shop, &["context", "--agent", "codex"]);
    assert!(index.contains("Login rate limiter"), "{index}");
    assert!(!index.contains("hashing"), "{index}");
    assert!(!index.contains("[codex]"), "{index}");
}

#[test]
fn search_timeline_and_show_name_and_filter_the_agent() {
    let env = Env::new();
    let (shop, _blog) = two_agents(&env);
    let all = ok(&env, &shop, &["search", "login"]);
    assert!(
        all.lines()
            .any(|l| l.contains("rate limiter") && l.contains("[codex]")),
        "{all}"
    );
    assert!(
        all.lines()
            .any(|l| l.contains("hashing") && l.contains("[claude-code]")),
        "{all}"
    );
    let codex = ok(
        &env,
        &shop,
        &["search", "login", "--agent", "codex", "--json"],
    );
    let codex: Value = serde_json::from_str(&codex).unwrap();
    let hits = codex["hits"].as_array().unwrap();
    assert!(!hits.is_empty());
    for h in hits {
        assert_eq!(h["session"]["platform"], "codex", "{h}");
    }
    let text = ok(&env, &shop, &["search", "login", "--agent", "Codex"]);
    assert!(
        !text.contains("[codex]") && !text.contains("hashing"),
        "{text}"
    );
    // An unknown agent is an error that lists the accepted names.
    let (success, _, stderr) = run(&env, &shop, &["search", "login", "--agent", "vim"]);
    assert!(!success);
    assert!(
        stderr.contains("unknown agent `vim`") && stderr.contains("claude-code, codex"),
        "{stderr}"
    );
    // The timeline around Codex's observation, all agents then Codex only.
    let anchor = hits.iter().find(|h| h["kind"] == "observation").unwrap()["ref"]
        .as_str()
        .unwrap()
        .to_owned();
    let around = ok(&env, &shop, &["timeline", &anchor, "-b", "20"]);
    assert!(
        around.contains("hashing") && around.contains("[codex]"),
        "{around}"
    );
    let around = ok(
        &env,
        &shop,
        &["timeline", &anchor, "-b", "20", "--agent", "codex"],
    );
    assert!(!around.contains("hashing"), "{around}");
    // `mnemo show` names the agent's session.
    let shown = ok(&env, &shop, &["show", &anchor]);
    assert!(shown.contains("codex codex-1, turn 1"), "{shown}");
}

#[test]
fn mcp_and_http_filter_by_agent() {
    let env = Env::new();
    let (shop, _blog) = two_agents(&env);
    let mut mcp = McpClient::start(&env, &shop, &[]);
    let (text, error) = mcp.call("search", json!({"query": "login", "agent": "codex"}));
    assert!(!error, "{text}");
    assert!(
        text.contains("rate limiter") && !text.contains("hashing"),
        "{text}"
    );
    let (text, error) = mcp.call("search", json!({"query": "login", "agent": "emacs"}));
    assert!(error && text.contains("claude-code, codex"), "{text}");
    mcp.close();

    let worker = Worker::start(&env, |_| {});
    let (status, body) = worker.get("/api/search?q=login&agent=codex");
    assert_eq!(status, 200, "{body}");
    let hits = body["hits"].as_array().unwrap();
    assert!(!hits.is_empty());
    assert!(
        hits.iter().all(|h| h["session"]["platform"] == "codex"),
        "{body}"
    );
    let (status, body) = worker.get("/api/search?q=login&agent=emacs");
    assert_eq!(status, 400, "{body}");
    assert!(body.to_string().contains("claude-code, codex"), "{body}");
}

/// Cursor reports the agent's thinking per step (`afterAgentThought`); it is
/// kept as the turn's narrative, placed before the tool call that follows,
/// and the worker's memory of the turn carries it.
#[test]
fn a_cursor_thought_is_remembered_as_the_why_of_its_turn() {
    let env = Env::new();
    let proj = project(&env);
    for name in [
        "sessionStart",
        "beforeSubmitPrompt",
        "afterAgentThought",
        "postToolUse.Write",
        "afterAgentResponse",
    ] {
        let event = name.split('.').next().unwrap();
        let mut c = env.mnemo();
        c.args(["hook", "cursor", event]);
        assert_hook_ok(&run_with_stdin(c, cursor_fixture(name, &proj).as_bytes()));
    }
    assert_eq!(env.count("SELECT count(*) FROM turn_notes"), 1);
    let _worker = Worker::start(&env, |_| {});
    let memory = worker_support::wait_for(
        "the turn compressed",
        std::time::Duration::from_secs(60),
        || {
            // The summary first: the texts are read once the turn is stored
            // (read before, they could predate the batch that stored it).
            (env.count("SELECT count(*) FROM summaries") > 0).then(|| {
                env.strings(
                    "SELECT title || ' ' || narrative || ' ' || facts FROM observations
                     UNION ALL SELECT learned || ' ' || completed FROM summaries",
                )
                .join("\n")
            })
        },
    );
    assert!(
        memory.contains("the new parameter needs a default"),
        "the thought is missing: {memory}"
    );
}
