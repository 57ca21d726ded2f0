//! Cursor, OpenCode, Gemini CLI and `raw` payloads through the real `mnemo`
//! binary, with real stdin and a real SQLite file.
//!
//! No Cursor binary can run here (closed source, its model traffic goes to
//! Cursor's backend), so a Cursor session is replayed from the recorded
//! payloads in `mnemo-capture/tests/fixtures/cursor` (shapes from Cursor's
//! docs and a third-party capture of cursor-agent). OpenCode's plugin runs
//! under node, called back the way OpenCode 1.x calls plugins (the shapes of
//! `@opencode-ai/plugin` 1.18.33's `Hooks` type); the real OpenCode binary
//! is not run. The real Gemini CLI is in `e2e_gemini.rs`.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::{Env, assert_hook_ok, run_with_stdin};
use mnemo_testkit::git_init;
use serde_json::{Value, json};

const CONVERSATION: &str = "e4a1c7d2-5b8f-4e3a-9c6d-1f2b7a8e0d95";

fn capture_fixture(platform: &str, name: &str) -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../mnemo-capture/tests/fixtures")
        .join(platform)
        .join(format!("{name}.json"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap()
}

/// A Cursor fixture moved into `project` (its files too).
fn cursor_payload(name: &str, project: &Path) -> String {
    let text = capture_fixture("cursor", name).to_string().replace(
        "/home/dev/projects/acme-billing",
        &project.to_string_lossy(),
    );
    let mut v: Value = serde_json::from_str(&text).unwrap();
    // What the CLI sends: `cwd` empty on tool events.
    if v.get("cwd").is_some() {
        v["cwd"] = json!("");
    }
    v.to_string()
}

fn hook(env: &Env, platform: &str, event: &str, payload: &str) -> Value {
    let mut c = env.mnemo();
    c.args(["hook", platform, event]);
    assert_hook_ok(&run_with_stdin(c, payload.as_bytes()))
}

fn project(env: &Env) -> PathBuf {
    let dir = env.dir.path().join("acme-billing");
    std::fs::create_dir_all(&dir).unwrap();
    git_init(&dir).unwrap();
    dir.canonicalize().unwrap()
}

fn events(env: &Env) -> Vec<(String, String, String, String)> {
    let db = env.db();
    let mut stmt = db
        .prepare(
            "SELECT kind, COALESCE(tool_name, ''), COALESCE(input, ''), files_modified
             FROM events ORDER BY id",
        )
        .unwrap();
    stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap()
}

/// The (kind, tool) of each event.
fn kinds(events: &[(String, String, String, String)]) -> Vec<(&str, &str)> {
    events
        .iter()
        .map(|(k, t, _, _)| (k.as_str(), t.as_str()))
        .collect()
}

#[test]
fn a_recorded_cursor_session_is_captured_under_its_workspace() {
    let env = Env::new();
    let project = project(&env);
    let steps = [
        ("sessionStart", "sessionStart"),
        ("beforeSubmitPrompt", "beforeSubmitPrompt"),
        ("postToolUse", "postToolUse.Write"),
        ("postToolUse", "postToolUse.Shell"),
        ("postToolUseFailure", "postToolUseFailure.Shell"),
        ("afterAgentResponse", "afterAgentResponse"),
        ("sessionEnd", "sessionEnd"),
    ];
    let mut answers = Vec::new();
    for (event, fixture) in steps {
        answers.push(hook(
            &env,
            "cursor",
            event,
            &cursor_payload(fixture, &project),
        ));
    }
    // Answers: Cursor's keys only.
    assert!(
        answers[0]["additional_context"]
            .as_str()
            .is_some_and(|c| c.contains("mnemo")),
        "{}",
        answers[0]
    );
    assert_eq!(answers[1], json!({"continue": true}));
    for answer in &answers[2..] {
        assert!(
            answer
                .as_object()
                .unwrap()
                .keys()
                .all(|k| k == "additional_context"),
            "{answer}"
        );
    }

    let (platform, sid, root, status, prompts): (String, String, String, String, i64) = env
        .db()
        .query_row(
            "SELECT s.platform, s.platform_session_id, p.root, s.status, s.prompt_count
             FROM sessions s JOIN projects p ON p.id = s.project_id",
            [],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?)),
        )
        .unwrap();
    assert_eq!(
        (platform.as_str(), sid.as_str(), status.as_str(), prompts),
        ("cursor", CONVERSATION, "ended", 1)
    );
    assert_eq!(root, project.to_string_lossy());
    assert_eq!(
        env.strings("SELECT text FROM prompts"),
        ["Add a late-fee calculation to compute_total() and cover it with a test."]
    );

    let events = events(&env);
    let kinds = kinds(&events);
    assert_eq!(
        kinds,
        [
            ("tool_use", "Write"),
            ("tool_use", "Bash"),
            ("tool_failure", "Bash"),
            ("turn_end", ""),
        ]
    );
    let late_fee = project.join("src/billing/late_fee.py");
    assert_eq!(
        serde_json::from_str::<Value>(&events[0].3).unwrap(),
        json!([late_fee])
    );
    assert!(events[1].2.contains("pytest"), "{}", events[1].2);
    let log = env.hook_log();
    assert!(!log.contains("ERROR") && !log.contains("WARN"), "{log}");
}

#[test]
fn a_cursor_payload_on_the_claude_code_hook_is_cursors_and_counted_once() {
    let env = Env::new();
    let project = project(&env);
    let payload = cursor_payload("postToolUse.Shell", &project);
    // Cursor runs both ~/.cursor/hooks.json and .claude/settings.json hooks.
    hook(&env, "cursor", "postToolUse", &payload);
    let mut claude_style: Value = serde_json::from_str(&payload).unwrap();
    claude_style["hook_event_name"] = json!("PostToolUse");
    hook(
        &env,
        "claude-code",
        "PostToolUse",
        &claude_style.to_string(),
    );

    assert_eq!(
        env.strings("SELECT platform || ' ' || platform_session_id FROM sessions"),
        [format!("cursor {CONVERSATION}")]
    );
    assert_eq!(env.count("SELECT count(*) FROM events"), 1);
}

#[test]
fn gemini_payloads_are_answered_in_geminis_format() {
    let env = Env::new();
    let project = project(&env);
    let payload = |name: &str| {
        capture_fixture("gemini-cli", name).to_string().replace(
            "/home/dev/projects/acme-billing",
            &project.to_string_lossy(),
        )
    };
    let start = hook(
        &env,
        "gemini",
        "SessionStart",
        &payload("SessionStart.startup"),
    );
    assert_eq!(start["hookSpecificOutput"]["hookEventName"], "SessionStart");
    assert!(
        start["hookSpecificOutput"]["additionalContext"]
            .as_str()
            .is_some_and(|c| c.contains("mnemo")),
        "{start}"
    );
    hook(&env, "gemini", "BeforeAgent", &payload("BeforeAgent"));
    let before_tool = hook(
        &env,
        "gemini",
        "BeforeTool",
        &payload("BeforeTool.write_file"),
    );
    assert_eq!(before_tool, json!({}));
    hook(
        &env,
        "gemini",
        "AfterTool",
        &payload("AfterTool.write_file"),
    );
    hook(
        &env,
        "gemini",
        "AfterTool",
        &payload("AfterTool.run_shell_command"),
    );
    hook(
        &env,
        "gemini",
        "AfterTool",
        &payload("AfterTool.read_file.error"),
    );
    assert_eq!(
        hook(&env, "gemini", "AfterAgent", &payload("AfterAgent")),
        json!({})
    );

    let events = events(&env);
    let kinds = kinds(&events);
    assert_eq!(
        kinds,
        [
            ("tool_use", "Write"),
            ("tool_use", "Bash"),
            ("tool_failure", "Read"),
            ("turn_end", ""),
        ]
    );
    assert_eq!(
        env.strings("SELECT platform FROM sessions"),
        ["gemini".to_owned()]
    );
}

#[test]
fn the_raw_shape_is_recorded_for_any_tool() {
    let env = Env::new();
    let project = project(&env);
    let cwd = project.to_string_lossy();
    let send = |event: &str, body: Value| {
        let mut body = body;
        body["session_id"] = json!("script-1");
        body["cwd"] = json!(cwd);
        body["hook_event_name"] = json!(event);
        hook(&env, "raw", event, &body.to_string())
    };
    send("SessionStart", json!({}));
    send("UserPromptSubmit", json!({"prompt": "rotate the logs"}));
    send(
        "PostToolUse",
        json!({"tool_name": "Bash", "tool_input": {"command": "logrotate -f conf"},
               "tool_response": {"stdout": "rotated", "exit_code": 0}, "tool_use_id": "t1"}),
    );
    send("Stop", json!({"last_assistant_message": "Logs rotated."}));
    send("SessionEnd", json!({"reason": "done"}));

    assert_eq!(
        env.strings("SELECT platform || ' ' || status FROM sessions"),
        ["raw ended".to_owned()]
    );
    assert_eq!(env.strings("SELECT text FROM prompts"), ["rotate the logs"]);
    let events = events(&env);
    assert_eq!(events.len(), 2);
    assert_eq!(events[0].1, "Bash");
    assert!(events[0].2.contains("logrotate"));
}

/// OpenCode's plugin, as `mnemo install --platform opencode` writes it, run
/// by node and called the way OpenCode 1.x calls plugins.
#[test]
fn the_opencode_plugin_forwards_a_session_and_injects_memory() {
    let env = Env::new();
    let project = project(&env);
    let dir = env.dir.path().join("plugin");
    std::fs::create_dir_all(&dir).unwrap();
    let plugin = dir.join("mnemo.mjs");
    std::fs::write(
        &plugin,
        mnemo_install::opencode::plugin_source(common::MNEMO),
    )
    .unwrap();
    let app = project.join("app.py");
    let driver = format!(
        r#"
import plugin from {plugin};
if (plugin.id !== "mnemo") throw new Error("no plugin id");
const hooks = await plugin.server({{ directory: {project}, worktree: {project} }});
const sessionID = "ses_oc1";
const system = {{ system: ["You are OpenCode."] }};
await hooks["experimental.chat.system.transform"]({{ sessionID, model: {{}} }}, system);
await hooks["chat.message"]({{ sessionID, messageID: "msg_1", agent: "build" }},
  {{ message: {{ id: "msg_1" }}, parts: [{{ type: "text", text: "create app.py and run it" }}] }});
await hooks["tool.execute.after"]({{ tool: "write", sessionID, callID: "call_1",
  args: {{ filePath: {app}, content: "print(1)\n" }} }}, {{ title: "app.py", output: "", metadata: {{}} }});
await hooks["tool.execute.after"]({{ tool: "bash", sessionID, callID: "call_2",
  args: {{ command: "python3 app.py", description: "run" }} }}, {{ title: "run", output: "1\n", metadata: {{}} }});
await hooks.event({{ event: {{ type: "session.idle", properties: {{ sessionID }} }} }});
console.log(JSON.stringify(system));
"#,
        plugin = json!(plugin.to_string_lossy()),
        project = json!(project.to_string_lossy()),
        app = json!(app.to_string_lossy()),
    );
    let mut node = Command::new("node");
    node.args(["--input-type=module", "-e", &driver])
        .env("MNEMO_DATA_DIR", env.data())
        .env("HOME", env.home())
        .env("MNEMO_NO_WORKER", "1");
    let out = node.output().expect("node runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let system: Value = serde_json::from_slice(&out.stdout).unwrap();
    let prompt = system["system"].as_array().unwrap();
    assert_eq!(prompt.len(), 2, "{system}");
    assert!(
        prompt[1].as_str().unwrap().contains("mnemo"),
        "memory in the system prompt: {system}"
    );

    // The captures are fire-and-forget: wait for the last one.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while env.db_path().exists()
        && env.count("SELECT count(*) FROM events") < 3
        && std::time::Instant::now() < deadline
    {
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    assert_eq!(
        env.strings("SELECT platform || ' ' || platform_session_id FROM sessions"),
        ["opencode ses_oc1".to_owned()]
    );
    assert_eq!(
        env.strings("SELECT text FROM prompts"),
        ["create app.py and run it"]
    );
    let mut events = events(&env);
    events.sort_by(|a, b| a.0.cmp(&b.0).then(a.1.cmp(&b.1)));
    let kinds = kinds(&events);
    assert_eq!(
        kinds,
        [
            ("tool_use", "Bash"),
            ("tool_use", "Write"),
            ("turn_end", "")
        ]
    );
    assert_eq!(
        serde_json::from_str::<Value>(&events[1].3).unwrap(),
        json!([app])
    );
}

/// `mnemo` in a sandbox HOME, with `extra_path` in front of a minimal PATH.
fn sandboxed(home: &Path, data: &Path, extra_path: Option<&Path>) -> Command {
    let mut c = common::clean_mnemo();
    let path = match extra_path {
        Some(dir) => format!("{}:/usr/bin:/bin", dir.display()),
        None => "/usr/bin:/bin".to_owned(),
    };
    c.env("HOME", home)
        .env("MNEMO_DATA_DIR", data)
        .env("PATH", path)
        .env_remove("XDG_CONFIG_HOME")
        .env_remove("GEMINI_CLI_HOME");
    c
}

#[test]
fn install_wires_gemini_cursor_and_opencode_and_uninstall_gives_the_files_back() {
    let env = Env::new();
    let home = env.home();
    let gemini_settings = home.join(".gemini/settings.json");
    std::fs::create_dir_all(gemini_settings.parent().unwrap()).unwrap();
    let original =
        "{\n  // mine\n  \"security\": {\"auth\": {\"selectedType\": \"gemini-api-key\"}}\n}\n";
    std::fs::write(&gemini_settings, original).unwrap();

    let run = |args: &[&str]| {
        let out = sandboxed(&home, &env.data(), None)
            .args(args)
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        assert!(
            out.status.success(),
            "{args:?}: {stdout}{}",
            String::from_utf8_lossy(&out.stderr)
        );
        stdout
    };
    run(&[
        "install",
        "--platform",
        "gemini,cursor,opencode",
        "--no-import",
    ]);

    let settings = std::fs::read_to_string(&gemini_settings).unwrap();
    assert!(settings.contains("// mine"), "{settings}");
    assert!(settings.contains("hook gemini AfterTool"), "{settings}");
    assert!(settings.contains("\"timeout\": 10000"), "{settings}");
    assert!(settings.contains("\"mcpServers\""), "{settings}");
    let cursor: Value =
        serde_json::from_str(&std::fs::read_to_string(home.join(".cursor/hooks.json")).unwrap())
            .unwrap();
    assert_eq!(cursor["version"], 1);
    assert!(
        cursor["hooks"]["postToolUse"][0]["command"]
            .as_str()
            .unwrap()
            .ends_with("hook cursor postToolUse")
    );
    let cursor_mcp: Value =
        serde_json::from_str(&std::fs::read_to_string(home.join(".cursor/mcp.json")).unwrap())
            .unwrap();
    assert_eq!(cursor_mcp["mcpServers"]["mnemo"]["args"], json!(["mcp"]));
    let plugin = std::fs::read_to_string(home.join(".config/opencode/plugins/mnemo.js")).unwrap();
    assert!(plugin.starts_with(mnemo_install::opencode::MARKER));
    let opencode: Value = serde_json::from_str(
        &std::fs::read_to_string(home.join(".config/opencode/opencode.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(opencode["mcp"]["mnemo"]["type"], "local");

    // Claude Code is not wired here, so doctor fails overall; the hosts it
    // was asked about check out.
    let doctor = sandboxed(&home, &env.data(), None)
        .arg("doctor")
        .output()
        .unwrap();
    let doctor = String::from_utf8_lossy(&doctor.stdout).into_owned();
    for name in [
        "gemini hooks",
        "cursor hooks",
        "opencode hooks",
        "opencode mcp",
    ] {
        assert!(
            doctor
                .lines()
                .any(|l| l.contains("[ ok ]") && l.contains(name)),
            "{name}: {doctor}"
        );
    }
    assert!(
        run(&[
            "install",
            "--platform",
            "gemini,cursor,opencode",
            "--no-import"
        ])
        .contains("Already installed; nothing changed.")
    );

    run(&["uninstall", "--platform", "gemini,cursor,opencode"]);
    assert_eq!(std::fs::read_to_string(&gemini_settings).unwrap(), original);
    for gone in [
        ".cursor/hooks.json",
        ".cursor/mcp.json",
        ".config/opencode/plugins/mnemo.js",
        ".config/opencode/opencode.json",
    ] {
        assert!(!home.join(gone).exists(), "{gone} left behind");
    }
}

#[test]
fn doctor_says_when_the_installed_opencode_is_not_supported() {
    use std::os::unix::fs::PermissionsExt;
    let env = Env::new();
    let bin = env.dir.path().join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let opencode = bin.join("opencode");
    let doctor_with = |version: &str| {
        std::fs::write(&opencode, format!("#!/bin/sh\necho '{version}'\n")).unwrap();
        std::fs::set_permissions(&opencode, std::fs::Permissions::from_mode(0o755)).unwrap();
        let home = env.home();
        let out = sandboxed(&home, &env.data(), Some(&bin))
            .args(["install", "--platform", "opencode", "--no-import"])
            .output()
            .unwrap();
        assert!(out.status.success());
        let out = sandboxed(&home, &env.data(), Some(&bin))
            .arg("doctor")
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let old = doctor_with("1.3.17");
    let line = old
        .lines()
        .find(|l| l.contains("opencode version"))
        .unwrap_or_else(|| panic!("no version check: {old}"));
    assert!(
        line.contains("[FAIL]") && line.contains("OpenCode 1.3.17 is not supported"),
        "{line}"
    );
    let next_major = doctor_with("2.0.1");
    assert!(
        next_major.contains("OpenCode 2.0.1 is not supported"),
        "{next_major}"
    );
    let current = doctor_with("1.18.33");
    assert!(
        current
            .lines()
            .any(|l| l.contains("[ ok ]") && l.contains("OpenCode 1.18.33")),
        "{current}"
    );
}
