//! `mnemo mcp` as a real process speaking JSON-RPC on stdin/stdout: the
//! handshake, tools/list, each tool (search -> get_observations ->
//! timeline, save_memory then search finds it, context), a missing
//! database, bad input; and `mnemo install`/`uninstall` registering the
//! server in a sandbox `~/.claude.json`.

mod common;
#[path = "common/mcp.rs"]
mod mcp_client;

use std::path::PathBuf;

use common::Env;
use mcp_client::McpClient;
use mnemo_core::time::{format_rfc3339, now_ms};
use serde_json::{Value, json};

fn project(env: &Env, name: &str) -> PathBuf {
    let dir = env.dir.path().join(name);
    mnemo_testkit::git_init(&dir).unwrap();
    dir.canonicalize().unwrap()
}

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

/// The first `#id` in a tool's text.
fn first_id(text: &str) -> String {
    text.lines()
        .find_map(|l| l.split_whitespace().find(|w| w.starts_with('#')))
        .unwrap_or_else(|| panic!("no id in {text}"))
        .to_owned()
}

#[test]
fn the_three_step_workflow_and_save_memory_over_stdio() {
    let env = Env::new();
    let p = project(&env, "shop");
    let at = |ms: i64| format_rfc3339(now_ms() - ms);
    import(
        &env,
        &[
            json!({"kind": "session", "platform": "claude-code", "session_id": "sess-1",
                   "project": p, "started_at": at(7_200_000)}),
            json!({"kind": "prompt", "uid": "p1", "platform": "claude-code", "session_id": "sess-1",
                   "prompt_number": 1, "text": "make login safe", "created_at": at(7_200_000)}),
            json!({"kind": "observation", "project": p, "platform": "claude-code",
                   "session_id": "sess-1", "prompt_number": 1, "type": "bugfix",
                   "title": "Login compares password hashes with check_hash",
                   "narrative": "Login compared plain text; it now calls check_hash.",
                   "facts": ["check_hash lives in src/auth.py"],
                   "files_modified": [p.join("src/auth.py")], "created_at": at(7_000_000)}),
            json!({"kind": "observation", "project": p, "type": "feature",
                   "title": "Session cookie set on login", "created_at": at(3_600_000)}),
        ],
    );
    let mut mcp = McpClient::start(&env, &p, &[("CLAUDE_CODE_SESSION_ID", "sess-1")]);

    let tools = mcp.request("tools/list", json!({}));
    let tools = tools["result"]["tools"].as_array().unwrap().clone();
    let mut names: Vec<&str> = tools.iter().map(|t| t["name"].as_str().unwrap()).collect();
    names.sort();
    assert_eq!(
        names,
        [
            "context",
            "correct",
            "get_observations",
            "save_memory",
            "search",
            "timeline"
        ]
    );
    let search_tool = tools.iter().find(|t| t["name"] == "search").unwrap();
    assert_eq!(search_tool["inputSchema"]["required"], json!(["query"]));
    assert!(
        search_tool["description"]
            .as_str()
            .unwrap()
            .contains("Step 1 of 3")
    );
    for t in &tools {
        assert!(t["description"].as_str().unwrap().len() > 60, "{t}");
    }

    // 1. search: cheap lines with ids.
    let (text, err) = mcp.call("search", json!({"query": "check_hash login"}));
    assert!(!err, "{text}");
    assert!(
        text.contains("[fix] Login compares password hashes with check_hash (src/auth.py)"),
        "{text}"
    );
    assert!(
        !text.contains("Login compared plain text"),
        "search lines are cheap: {text}"
    );
    let id = first_id(&text);

    // 2. get_observations: the full record.
    let (full, err) = mcp.call("get_observations", json!({"ids": [id.clone()]}));
    assert!(!err, "{full}");
    assert!(
        full.contains("Login compared plain text; it now calls check_hash."),
        "{full}"
    );
    assert!(full.contains("check_hash lives in src/auth.py"), "{full}");
    assert!(
        full.contains("make login safe"),
        "the prompt of that turn: {full}"
    );
    let number: i64 = id.trim_start_matches('#').parse().unwrap();
    let (again, _) = mcp.call("get_observations", json!({"ids": [number, "#9999"]}));
    assert!(
        again.contains("Login compared plain text") && again.contains("Not found: #9999"),
        "{again}"
    );

    // 3. timeline around it: the prompt before, the cookie after.
    let (tl, err) = mcp.call("timeline", json!({"id": id, "before": 3, "after": 3}));
    assert!(!err, "{tl}");
    let prompt_at = tl.find("[prompt] make login safe").unwrap();
    let anchor_at = tl.find("> ").unwrap();
    let cookie_at = tl.find("Session cookie set on login").unwrap();
    assert!(prompt_at < anchor_at && anchor_at < cookie_at, "{tl}");

    // save_memory, then search finds it; private text never stored.
    let (saved, err) = mcp.call(
        "save_memory",
        json!({"text": "Payments use idempotency keys stored in redis. <private>key sk-live-123</private>",
               "title": "Idempotency keys for payments"}),
    );
    assert!(!err, "{saved}");
    assert!(saved.starts_with("Saved as #"), "{saved}");
    let saved_id = first_id(&saved);
    let (found, _) = mcp.call("search", json!({"query": "idempotency"}));
    assert!(
        found.contains(&format!(
            "{saved_id} now [mem] Idempotency keys for payments"
        )),
        "{found}"
    );
    let (record, _) = mcp.call("get_observations", json!({"ids": saved_id}));
    assert!(record.contains("source   agent"), "{record}");
    assert!(
        record.contains("claude-code sess-1"),
        "linked to the session: {record}"
    );
    assert!(!record.contains("sk-live-123"), "{record}");
    let stored: String = env
        .db()
        .query_row(
            "SELECT narrative FROM observations WHERE type = 'memory'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(stored, "Payments use idempotency keys stored in redis.");

    // context: the same index a session starts with.
    let (index, _) = mcp.call("context", json!({}));
    assert!(
        index.starts_with("<mnemo-context>") && index.contains("Idempotency keys"),
        "{index}"
    );

    // Filters work through the tool too.
    let (fixes, _) = mcp.call(
        "search",
        json!({"query": "login", "type": "feature", "limit": "5"}),
    );
    assert!(
        fixes.contains("Session cookie") && !fixes.contains("check_hash"),
        "{fixes}"
    );
    let (by_file, _) = mcp.call("search", json!({"query": "", "file": "auth.py"}));
    assert!(
        by_file.contains("check_hash") && !by_file.contains("cookie"),
        "{by_file}"
    );
    mcp.close();
}

#[test]
fn a_missing_database_and_bad_input_are_answers_not_crashes() {
    let env = Env::new();
    let p = project(&env, "empty");
    let mut mcp = McpClient::start(&env, &p, &[]);
    let (text, err) = mcp.call("search", json!({"query": "anything"}));
    assert!(!err, "no memory yet is not an error: {text}");
    assert!(text.contains("No memory yet"), "{text}");
    let (text, _) = mcp.call("context", json!({}));
    assert!(text.contains("nothing remembered for empty yet"), "{text}");
    assert!(!env.db_path().exists(), "reading creates no database");

    let (text, err) = mcp.call("timeline", json!({"id": "bogus"}));
    assert!(err && text.contains("not an id"), "{text}");
    let (text, err) = mcp.call("get_observations", json!({"ids": []}));
    assert!(err && text.contains("at least one id"), "{text}");
    let (text, err) = mcp.call(
        "save_memory",
        json!({"text": "<private>only this</private>"}),
    );
    assert!(err && text.contains("nothing to save"), "{text}");

    // The first memory creates the database; everything then works.
    let (text, err) = mcp.call(
        "save_memory",
        json!({"text": "Build with `make release`.\nNot plain cargo."}),
    );
    assert!(!err, "{text}");
    let (text, _) = mcp.call("search", json!({"query": "\"make release\" \u{0} ( NEAR"}));
    assert!(text.contains("[mem] Build with `make release`."), "{text}");
    let (text, err) = mcp.call("search", json!({"query": "x", "since": "someday"}));
    assert!(err && text.contains("not a date"), "{text}");
    let (text, err) = mcp.call("search", json!({"query": "x", "project": "nonesuch"}));
    assert!(err && text.contains("no project `nonesuch`"), "{text}");
    let (text, err) = mcp.call("search", json!({"query": "make", "project": "all"}));
    assert!(!err && text.contains("make release"), "{text}");

    // A call with the wrong shape is a protocol error, and the server lives on.
    let v = mcp.request(
        "tools/call",
        json!({"name": "search", "arguments": {"limit": 3}}),
    );
    assert!(
        v["error"].is_object() || v["result"]["isError"] == true,
        "{v}"
    );
    let v = mcp.request("tools/call", json!({"name": "nonesuch", "arguments": {}}));
    assert!(
        v["error"].is_object() || v["result"]["isError"] == true,
        "{v}"
    );
    let (_, err) = mcp.call("search", json!({"query": "make"}));
    assert!(!err);
    mcp.close();
}

fn claude_json(env: &Env) -> Value {
    serde_json::from_str(&std::fs::read_to_string(env.home().join(".claude.json")).unwrap())
        .unwrap()
}

#[test]
fn install_registers_the_server_at_user_scope_and_uninstall_removes_only_ours() {
    let env = Env::new();
    let original = "{\n  \"numStartups\": 7,\n  \"mcpServers\": {\n    \"github\": {\n      \"type\": \"http\",\n      \"url\": \"https://example.invalid/mcp\"\n    }\n  },\n  \"projects\": {}\n}";
    std::fs::write(env.home().join(".claude.json"), original).unwrap();

    let dry = env.mnemo().args(["install", "--dry-run"]).output().unwrap();
    let dry_out = String::from_utf8_lossy(&dry.stdout);
    assert!(dry_out.contains("+ mcpServers.mnemo"), "{dry_out}");
    assert_eq!(
        std::fs::read_to_string(env.home().join(".claude.json")).unwrap(),
        original,
        "dry run writes nothing"
    );

    let out = env.mnemo().arg("install").output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let binary = std::fs::canonicalize(common::MNEMO).unwrap();
    let v = claude_json(&env);
    assert_eq!(
        v["mcpServers"]["mnemo"],
        json!({"type": "stdio", "command": binary, "args": ["mcp"], "env": {}})
    );
    assert_eq!(
        v["mcpServers"]["github"]["url"],
        "https://example.invalid/mcp"
    );
    assert_eq!(v["numStartups"], 7);

    let doctor = env.mnemo().arg("doctor").output().unwrap();
    let report = String::from_utf8_lossy(&doctor.stdout);
    assert!(
        report.contains("mcpServers.mnemo runs this binary"),
        "{report}"
    );

    let again = env.mnemo().arg("install").output().unwrap();
    assert!(String::from_utf8_lossy(&again.stdout).contains("Already installed"));

    let out = env.mnemo().arg("uninstall").output().unwrap();
    assert!(out.status.success());
    let v = claude_json(&env);
    assert!(v["mcpServers"].get("mnemo").is_none(), "{v}");
    assert_eq!(
        v["mcpServers"]["github"]["url"],
        "https://example.invalid/mcp"
    );
    assert_eq!(
        std::fs::read_to_string(env.home().join(".claude.json")).unwrap(),
        original,
        "uninstall gives back the file as it was"
    );

    // Doctor notices the missing server and --fix registers it.
    let doctor = env.mnemo().arg("doctor").output().unwrap();
    let report = String::from_utf8_lossy(&doctor.stdout);
    assert!(
        report.contains("the MCP server is not registered"),
        "{report}"
    );
    let fixed = env
        .mnemo()
        .args(["doctor", "--fix", "--json"])
        .output()
        .unwrap();
    let report: Value = serde_json::from_slice(&fixed.stdout).expect("--json stays JSON");
    let mcp = report["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "mcp")
        .unwrap();
    assert_eq!(mcp["status"], "ok", "{mcp}");
    assert_eq!(
        claude_json(&env)["mcpServers"]["mnemo"]["args"],
        json!(["mcp"])
    );

    // A project-scoped install leaves ~/.claude.json alone.
    let env2 = Env::new();
    let p = project(&env2, "proj");
    let out = env2
        .mnemo()
        .args(["install", "--scope", "project", "--project-dir"])
        .arg(&p)
        .output()
        .unwrap();
    assert!(out.status.success());
    assert!(!env2.home().join(".claude.json").exists());
}
