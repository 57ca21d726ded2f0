//! End to end with the real Claude Code 2.1.328 and mnemo as a Claude Code
//! plugin: this repository is added as a local marketplace and the plugin
//! installed with Claude Code's own `claude plugin` commands into a fresh
//! HOME, then a headless session runs against the stand-in model. The
//! plugin's hooks capture (running the `mnemo` found on PATH), its MCP server
//! answers the model's tool call, `mnemo install` adds no second set of
//! hooks beside it and `mnemo doctor` reports it; without `mnemo` on PATH its
//! hooks still exit 0 and say what to install; registered both by the plugin
//! and by `mnemo install`, each event is recorded once and the memory index
//! given once. The plugin's hooks are checked against what `mnemo install`
//! writes, so that the two registrations cannot drift apart.

mod common;

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use mnemo_testkit::{ClaudeRun, Sandbox, StandIn, Step, claude_binary, git_init};
use serde_json::{Value, json};

/// The plugin id: plugin `mnemo` from the marketplace `mnemo`
/// (`.claude-plugin/marketplace.json`).
const PLUGIN_ID: &str = "mnemo@mnemo";

/// How Claude Code names a tool of the plugin's MCP server `mnemo`.
fn plugin_tool(tool: &str) -> String {
    format!("mcp__plugin_mnemo_mnemo__{tool}")
}

/// The repository: the marketplace (`.claude-plugin/marketplace.json`)
/// whose plugin is `plugin/`.
fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .expect("the repository root")
}

/// The directory of the mnemo binary under test, for PATH.
fn mnemo_dir() -> PathBuf {
    Path::new(common::MNEMO)
        .parent()
        .expect("the binary's directory")
        .to_owned()
}

/// This process's PATH without any directory holding a `mnemo`.
fn path_without_mnemo() -> OsString {
    let path = std::env::var_os("PATH").unwrap_or_default();
    let kept: Vec<PathBuf> = std::env::split_paths(&path)
        .filter(|dir| !dir.join("mnemo").exists())
        .collect();
    std::env::join_paths(kept).expect("PATH entries")
}

/// A `claude` subcommand (not a session) in the sandbox's fresh HOME.
fn claude_cli(sandbox: &Sandbox, args: &[&str]) -> anyhow::Result<Output> {
    Ok(Command::new(claude_binary()?)
        .args(args)
        .current_dir(sandbox.project())
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", sandbox.home())
        .env("TERM", "dumb")
        .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
        .env("DISABLE_AUTOUPDATER", "1")
        .env("DISABLE_TELEMETRY", "1")
        .output()?)
}

#[track_caller]
fn expect_ok(what: &str, output: &Output) -> String {
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    assert!(
        output.status.success(),
        "{what} failed ({}):\n{stdout}\n{}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    stdout
}

/// Validates the marketplace and the plugin, then installs the plugin the
/// way a user does: `claude plugin marketplace add <repo>`, `claude plugin
/// install mnemo@mnemo`.
fn install_plugin(sandbox: &Sandbox) -> anyhow::Result<()> {
    let root = repo_root();
    let root = root.to_str().expect("a UTF-8 repository path");
    let plugin_dir = format!("{root}/plugin");
    for target in [root, &plugin_dir] {
        let out = claude_cli(sandbox, &["plugin", "validate", target])?;
        expect_ok(&format!("claude plugin validate {target}"), &out);
    }
    let out = claude_cli(sandbox, &["plugin", "marketplace", "add", root])?;
    expect_ok("claude plugin marketplace add", &out);
    let out = claude_cli(sandbox, &["plugin", "install", PLUGIN_ID])?;
    let said = expect_ok("claude plugin install", &out);
    assert!(said.contains(PLUGIN_ID), "{said}");

    let settings: Value = serde_json::from_str(&std::fs::read_to_string(
        sandbox.home().join(".claude/settings.json"),
    )?)?;
    assert_eq!(settings["enabledPlugins"][PLUGIN_ID], true, "{settings}");
    Ok(())
}

/// A PATH on which the only `mnemo` is the binary under test.
fn path_with_mnemo() -> OsString {
    std::env::join_paths(
        std::iter::once(mnemo_dir()).chain(std::env::split_paths(&path_without_mnemo())),
    )
    .expect("PATH entries")
}

/// mnemo with the sandbox's HOME and data, and on PATH as the plugin needs it.
fn mnemo(sandbox: &Sandbox) -> Command {
    let mut c = common::sandbox_mnemo(sandbox);
    c.env("PATH", path_with_mnemo()).env("MNEMO_NO_WORKER", "1");
    c
}

/// A headless session in the sandbox, with `path` as PATH.
fn session(sandbox: &Sandbox, server: &StandIn, prompt: &str, path: OsString) -> ClaudeRun {
    sandbox
        .claude(&server.base_url(), prompt)
        .env("PATH", path)
        .env("MNEMO_NO_WORKER", "1")
        .max_turns(8)
}

/// The hook log holds no warning or error.
#[track_caller]
fn assert_clean_hook_log(sandbox: &Sandbox) {
    let log = std::fs::read_to_string(sandbox.data().join("logs/hook.log")).unwrap_or_default();
    assert!(!log.contains("ERROR") && !log.contains("WARN"), "{log}");
}

/// (kind, tool) of every stored event, in order.
fn event_kinds(db: &rusqlite::Connection) -> anyhow::Result<Vec<(String, Option<String>)>> {
    let mut stmt = db.prepare("SELECT kind, tool_name FROM events ORDER BY id")?;
    let rows = stmt
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?
        .collect::<Result<_, _>>()?;
    Ok(rows)
}

/// The plugin registers exactly the hooks `mnemo install` does (events,
/// matchers, timeouts), through its wrapper, and carries the crate's version.
#[test]
fn the_plugin_hooks_match_what_mnemo_install_writes() -> anyhow::Result<()> {
    let sandbox = Sandbox::new();
    let install = mnemo(&sandbox)
        .args(["install", "--scope", "project", "--no-import"])
        .output()?;
    expect_ok("mnemo install --scope project", &install);
    let installed: Value = serde_json::from_str(&std::fs::read_to_string(
        sandbox.project().join(".claude/settings.json"),
    )?)?;

    let plugin = repo_root().join("plugin");
    let text = std::fs::read_to_string(plugin.join("hooks/hooks.json"))?;
    let wrapper = r#"sh \"${CLAUDE_PLUGIN_ROOT}/hooks/run-mnemo\" "#;
    assert!(text.contains(wrapper), "{text}");
    let as_installed: Value =
        serde_json::from_str(&text.replace(wrapper, "mnemo hook claude-code "))?;
    assert_eq!(as_installed["hooks"], installed["hooks"]);

    let read = |path: PathBuf| -> anyhow::Result<Value> {
        Ok(serde_json::from_str(&std::fs::read_to_string(path)?)?)
    };
    let manifest = read(plugin.join(".claude-plugin/plugin.json"))?;
    let marketplace = read(repo_root().join(".claude-plugin/marketplace.json"))?;
    let version = env!("CARGO_PKG_VERSION");
    assert_eq!(manifest["version"], version);
    assert_eq!(marketplace["plugins"][0]["version"], version);
    assert_eq!(marketplace["plugins"][0]["source"], "./plugin");
    let mcp = read(plugin.join(".mcp.json"))?;
    assert_eq!(
        mcp["mcpServers"]["mnemo"],
        json!({"command": "mnemo", "args": ["mcp"]})
    );
    Ok(())
}

#[test]
fn the_plugin_from_a_local_marketplace_captures_and_its_mcp_server_answers() -> anyhow::Result<()> {
    let sandbox = Sandbox::new();
    let project = sandbox.project();
    git_init(&project)?;
    install_plugin(&sandbox)?;

    let server = StandIn::with_script([
        Step::bash("echo plugin at work"),
        Step::tool("Skill", json!({"skill": "mnemo:mnemo-memory"})),
        Step::tool(plugin_tool("search"), json!({"query": "zebrafish"})),
        Step::tool(
            plugin_tool("save_memory"),
            json!({"text": "The zebrafish notes live in docs/fish.md"}),
        ),
        Step::text("Found the notes."),
    ]);
    let prompt = "where are the zebrafish notes?";
    let output = session(&sandbox, &server, prompt, path_with_mnemo()).run()?;
    output.expect_success();
    assert_eq!(output.result(), Some("Found the notes."));

    // The hooks ran: session, prompt and tool events are in the store.
    let db = rusqlite::Connection::open(sandbox.data().join("mnemo.db"))?;
    let (status, root, text): (String, String, String) = db.query_row(
        "SELECT s.status, p.root, pr.text FROM sessions s
         JOIN projects p ON p.id = s.project_id JOIN prompts pr ON pr.session_id = s.id",
        [],
        |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
    )?;
    assert_eq!(status, "ended", "SessionEnd ran");
    assert_eq!(root, project.to_string_lossy());
    assert_eq!(text, prompt);
    let s = |k: &str, t: Option<&str>| (k.to_owned(), t.map(str::to_owned));
    // The call to mnemo's own tool is not recorded back into memory.
    assert_eq!(
        event_kinds(&db)?,
        [
            s("tool_use", Some("Bash")),
            s("tool_use", Some("Skill")),
            s("turn_end", None)
        ]
    );

    assert_clean_hook_log(&sandbox);

    // SessionStart's answer reached the model.
    let requests = server.requests();
    assert!(
        requests
            .iter()
            .any(|r| r.body_contains("SessionStart hook additional context")
                && r.body_contains("mnemo-context")),
        "no mnemo context in any request"
    );
    // The skill is offered and, invoked, gives the model its workflow.
    assert!(
        requests[0].body_contains("mnemo:mnemo-memory"),
        "the skill is not listed"
    );
    assert!(
        requests
            .iter()
            .any(|r| r.body_contains("Read cheap lines first and full records last")),
        "the skill's text never reached the model"
    );
    // The MCP server answered the search with the prompt the hook stored,
    // and kept the memory.
    let last = requests
        .iter()
        .rev()
        .find(|r| !r.is_side_request())
        .expect("a request");
    let results = last.tool_results();
    let texts = last.tool_result_texts();
    assert_eq!(results.len(), 4, "Bash, Skill, search, save_memory");
    for result in &results[2..] {
        assert_ne!(result["is_error"], true, "{result}");
    }
    assert!(
        texts[2].contains("zebrafish") && texts[2].contains("P1"),
        "{}",
        texts[2]
    );

    // The next session starts with that memory, and its index names the
    // tools as the plugin serves them.
    let next = StandIn::with_script([Step::text("Noted.")]);
    session(&sandbox, &next, "carry on", path_with_mnemo())
        .run()?
        .expect_success();
    let first = next
        .requests()
        .into_iter()
        .find(|r| !r.is_side_request())
        .expect("a request");
    assert!(first.body_contains("docs/fish.md"), "{}", first.body);
    assert!(first.body_contains("mcp__plugin_mnemo_mnemo__search(query)"));
    assert!(!first.body_contains("mcp__mnemo__search"));

    // `mnemo install` sees the plugin and adds no second set of hooks.
    let install = mnemo(&sandbox).args(["install", "--no-import"]).output()?;
    let said = expect_ok("mnemo install", &install);
    assert!(
        said.contains(&format!("plugin:   {PLUGIN_ID} 0.1.0, enabled")),
        "{said}"
    );
    assert!(said.contains("no hooks added"), "{said}");
    let settings = std::fs::read_to_string(sandbox.home().join(".claude/settings.json"))?;
    assert!(!settings.contains("hook claude-code"), "{settings}");
    assert!(
        !std::fs::read_to_string(sandbox.home().join(".claude.json"))
            .unwrap_or_default()
            .contains("\"mcp\""),
        "no second MCP server"
    );

    // `mnemo doctor` reports the plugin, and its hooks and MCP server as wired.
    let doctor = mnemo(&sandbox).arg("doctor").output()?;
    let report = String::from_utf8_lossy(&doctor.stdout);
    assert!(doctor.status.success(), "{report}");
    assert!(
        report.contains(&format!(
            "{PLUGIN_ID} 0.1.0, enabled in {}",
            sandbox.home().join(".claude/settings.json").display()
        )) && report.contains("run this binary from PATH"),
        "{report}"
    );
    assert!(report.contains("run by the plugin mnemo@mnemo"), "{report}");
    assert!(report.contains("plugin:mnemo:mnemo"), "{report}");
    Ok(())
}

#[test]
fn without_mnemo_on_path_the_plugin_hooks_exit_0_and_say_what_to_install() -> anyhow::Result<()> {
    let sandbox = Sandbox::new();
    git_init(&sandbox.project())?;
    install_plugin(&sandbox)?;

    let server = StandIn::with_script([Step::bash("echo still works"), Step::text("Done.")]);
    let output = session(&sandbox, &server, "say hello", path_without_mnemo())
        .args([
            "--output-format",
            "stream-json",
            "--verbose",
            "--include-hook-events",
        ])
        .run()?;
    output.expect_success();
    assert_eq!(output.result(), Some("Done."));

    let responses: Vec<Value> = output
        .stdout
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|m| m["subtype"] == "hook_response")
        .collect();
    let events: Vec<&str> = responses
        .iter()
        .filter_map(|r| r["hook_event"].as_str())
        .collect();
    for event in [
        "SessionStart",
        "UserPromptSubmit",
        "PreToolUse",
        "PostToolUse",
        "Stop",
    ] {
        assert!(events.contains(&event), "no {event} hook ran: {events:?}");
    }
    for response in &responses {
        assert_eq!(response["exit_code"], 0, "{response}");
        let stderr = response["stderr"].as_str().unwrap_or_default();
        assert!(
            stderr.contains("the mnemo binary is not on PATH"),
            "{response}"
        );
        assert!(stderr.contains("cargo install"), "{response}");
    }
    // At session start the user is told too (the host shows a systemMessage).
    let start = responses
        .iter()
        .find(|r| r["hook_event"] == "SessionStart")
        .expect("a SessionStart response");
    let answer: Value = serde_json::from_str(start["stdout"].as_str().unwrap_or_default())?;
    assert!(
        answer["systemMessage"]
            .as_str()
            .is_some_and(|m| m.contains("not on PATH")),
        "{start}"
    );
    assert!(
        !sandbox.data().join("mnemo.db").exists(),
        "nothing could have been recorded"
    );
    Ok(())
}

#[test]
fn hooks_registered_by_both_mnemo_install_and_the_plugin_record_once() -> anyhow::Result<()> {
    let sandbox = Sandbox::new();
    let project = sandbox.project();
    git_init(&project)?;
    // Hooks from `mnemo install` first (it adds them: no plugin yet), then
    // the plugin beside them.
    let install = mnemo(&sandbox).args(["install", "--no-import"]).output()?;
    expect_ok("mnemo install", &install);
    install_plugin(&sandbox)?;
    let settings = std::fs::read_to_string(sandbox.home().join(".claude/settings.json"))?;
    assert!(
        settings.contains("hook claude-code PostToolUse"),
        "{settings}"
    );

    let notes = project.join("notes.txt");
    let server = StandIn::with_script([
        Step::write(&notes, "feed the zebrafish\n"),
        Step::bash("cat notes.txt"),
        Step::bash("exit 4"),
        Step::text("Fed."),
    ]);
    let prompt = "feed the zebrafish";
    let output = session(&sandbox, &server, prompt, path_with_mnemo())
        .args([
            "--output-format",
            "stream-json",
            "--verbose",
            "--include-hook-events",
        ])
        .run()?;
    output.expect_success();
    assert_eq!(output.result(), Some("Fed."));

    // Both registrations ran for every event...
    let ran = |event: &str| {
        output
            .stdout
            .lines()
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
            .filter(|m| m["subtype"] == "hook_response" && m["hook_event"] == event)
            .inspect(|m| assert_eq!(m["exit_code"], 0, "{m}"))
            .count()
    };
    assert_eq!(ran("SessionStart"), 2);
    assert_eq!(ran("UserPromptSubmit"), 2);
    assert_eq!(ran("PostToolUse"), 2 * 2, "Write and one Bash, twice each");
    assert_eq!(ran("PostToolUseFailure"), 2);

    // ...and the store holds each once.
    let db = rusqlite::Connection::open(sandbox.data().join("mnemo.db"))?;
    let count = |sql: &str| -> rusqlite::Result<i64> { db.query_row(sql, [], |r| r.get(0)) };
    assert_eq!(count("SELECT COUNT(*) FROM sessions")?, 1);
    assert_eq!(count("SELECT COUNT(*) FROM prompts")?, 1);
    assert_eq!(count("SELECT prompt_count FROM sessions")?, 1);
    let s = |k: &str, t: Option<&str>| (k.to_owned(), t.map(str::to_owned));
    assert_eq!(
        event_kinds(&db)?,
        [
            s("tool_use", Some("Write")),
            s("tool_use", Some("Bash")),
            s("tool_failure", Some("Bash")),
            s("turn_end", None),
        ]
    );

    assert_clean_hook_log(&sandbox);

    // The session's memory reached the model once, not twice.
    let first = server
        .requests()
        .into_iter()
        .find(|r| !r.is_side_request())
        .expect("a request");
    assert_eq!(first.body.matches("<mnemo-context>").count(), 1);

    // doctor says the hooks are there twice; install says how to keep one set.
    let doctor = mnemo(&sandbox).arg("doctor").output()?;
    let report = String::from_utf8_lossy(&doctor.stdout);
    assert!(report.contains("installed twice"), "{report}");
    let again = mnemo(&sandbox).args(["install", "--no-import"]).output()?;
    let said = expect_ok("mnemo install", &again);
    assert!(
        said.contains("7 mnemo hooks from an earlier `mnemo install`")
            && said.contains("`mnemo uninstall` removes them"),
        "{said}"
    );
    let unchanged = std::fs::read_to_string(sandbox.home().join(".claude/settings.json"))?;
    assert_eq!(unchanged, settings);
    Ok(())
}
