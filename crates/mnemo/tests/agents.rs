//! One memory across agents (issue 12, parts 3 and 4), through the real
//! binary and a real SQLite file: hooks registered twice record once, a
//! Cursor payload is one event whichever command receives it, and a session
//! started by `/clear` or compaction names the one it continues.

mod common;

use std::path::{Path, PathBuf};
use std::process::Output;

use common::*;
use serde_json::{Value, json};

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
/// runs from `.claude/settings.json`.
fn cursor_session(project: &Path) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for (name, claude_name) in [
        ("sessionStart", "SessionStart"),
        ("beforeSubmitPrompt", "UserPromptSubmit"),
        ("postToolUse.Shell", "PostToolUse"),
        ("postToolUse.Write", "PostToolUse"),
        ("postToolUseFailure.Shell", "PostToolUseFailure"),
        ("stop", "Stop"),
        ("sessionEnd", "SessionEnd"),
    ] {
        let payload = cursor_fixture(name, project);
        let event = name.split('.').next().unwrap().to_owned();
        let mut renamed: Value = serde_json::from_str(&payload).unwrap();
        renamed["hook_event_name"] = json!(claude_name);
        out.push((event, payload));
        out.push((claude_name.to_owned(), renamed.to_string()));
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
}
