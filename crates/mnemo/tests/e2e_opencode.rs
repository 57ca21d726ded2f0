//! End to end with the real OpenCode 1.18.33: `mnemo install --platform
//! opencode` into a fresh HOME writes mnemo's plugin; a headless session
//! (`opencode run`) against the stand-in chat-completions API, whose model
//! answers `write` then `bash`, is captured through the plugin and
//! compressed, and the next session's first model request carries the memory
//! in its system prompt.

mod common;
#[path = "common/e2e.rs"]
mod e2e;

use e2e::{StopWorker, install, wait_compressed};
use mnemo_testkit::opencode::OpenCodeCli;
use mnemo_testkit::{OpenCodeRun, Sandbox, StandIn, Step, git_init};
use serde_json::json;

fn session(sandbox: &Sandbox, server: &StandIn, prompt: &str) -> OpenCodeRun {
    e2e::session::<OpenCodeCli>(sandbox, &server.openai_base_url(), prompt)
}

#[test]
fn a_real_opencode_session_is_captured_by_the_plugin_and_remembered() -> anyhow::Result<()> {
    let sandbox = Sandbox::new();
    let project = sandbox.project();
    git_init(&project)?;
    install(&sandbox, "opencode")?;
    let _stop = StopWorker(&sandbox);

    let script = project.join("ledger.py");
    let session1 = StandIn::with_script([
        Step::tool(
            "write",
            json!({"filePath": script, "content": "def balance(entries):\n    return sum(entries)\n\nprint(balance([5, -2]))\n"}),
        )
        .with_text("Summing signed entries keeps refunds negative."),
        Step::tool(
            "bash",
            json!({"command": "python3 ledger.py", "description": "run the ledger"}),
        ),
        Step::text("Added ledger.py; it prints 3."),
    ]);
    session(&sandbox, &session1, "add a ledger script that sums entries")
        .run()?
        .expect_success();

    // The plugin's captures are fire-and-forget: wait for the turn's end.
    let db = rusqlite::Connection::open(sandbox.data().join("mnemo.db"))?;
    wait_compressed(&sandbox)?;
    let (platform, prompt): (String, String) = db.query_row(
        "SELECT s.platform, p.text FROM sessions s JOIN prompts p ON p.session_id = s.id",
        [],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )?;
    assert_eq!(platform, "opencode");
    // `opencode run` sends the message to the model in quotes, and so it is
    // recorded.
    assert_eq!(prompt, "\"add a ledger script that sums entries\"");
    let tools: Vec<String> = db
        .prepare("SELECT tool_name FROM events WHERE kind = 'tool_use' ORDER BY tool_name")?
        .query_map([], |r| r.get(0))?
        .collect::<Result<_, _>>()?;
    assert_eq!(tools, ["Bash", "Write"]);
    // The plugin forwards the words before the write and the final answer.
    let notes: Vec<String> = db
        .prepare("SELECT text FROM turn_notes")?
        .query_map([], |r| r.get(0))?
        .collect::<Result<_, _>>()?;
    assert_eq!(notes, ["Summing signed entries keeps refunds negative."]);
    let answer: Option<String> = db.query_row(
        "SELECT response FROM events WHERE kind = 'turn_end'",
        [],
        |r| r.get(0),
    )?;
    assert_eq!(answer.as_deref(), Some("\"Added ledger.py; it prints 3.\""));
    let title: String = db.query_row(
        "SELECT title FROM observations WHERE files_modified LIKE '%ledger.py%'",
        [],
        |r| r.get(0),
    )?;

    // Session 2: the memory is in the system prompt of its first request.
    let session2 = StandIn::with_script([Step::text("We added ledger.py last time.")]);
    session(&sandbox, &session2, "what did we do last time?")
        .run()?
        .expect_success();
    let main: Vec<_> = session2
        .requests()
        .into_iter()
        .filter(|r| !r.is_side_request())
        .collect();
    let first = main.first().expect("a model request");
    let system = first.system_text();
    assert!(
        system.contains("<mnemo-context>") && system.contains(&title),
        "session 1's observation {title:?} missing from the system prompt: {system}"
    );
    Ok(())
}

/// The plugin mnemo installs, run by `node` on the callbacks OpenCode makes
/// during a turn (its text and reasoning parts stream as
/// `message.part.updated` events): the words said before a tool call are
/// sent when the call starts and kept as the turn's narrative, and the
/// words after the last call are the final answer stored with the turn's
/// end.
#[test]
fn the_opencode_plugin_forwards_the_turns_final_answer() -> anyhow::Result<()> {
    let sandbox = Sandbox::new();
    let project = sandbox.project();
    git_init(&project)?;
    install(&sandbox, "opencode")?;
    let plugin = sandbox.home().join(".config/opencode/plugins/mnemo.js");
    let module = sandbox.root().join("plugin.mjs");
    std::fs::copy(&plugin, &module)?;
    let driver = sandbox.root().join("drive.mjs");
    std::fs::write(&driver, plugin_driver(&project))?;
    let out = std::process::Command::new("node")
        .arg(&driver)
        .env("HOME", sandbox.home())
        .env("MNEMO_DATA_DIR", sandbox.data())
        .env("MNEMO_NO_WORKER", "1")
        .current_dir(&project)
        .output()?;
    assert!(
        out.status.success(),
        "node: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let db = rusqlite::Connection::open(sandbox.data().join("mnemo.db"))?;
    let ends: Vec<Option<String>> = db
        .prepare("SELECT response FROM events WHERE kind = 'turn_end'")?
        .query_map([], |r| r.get(0))?
        .collect::<Result<_, _>>()?;
    assert_eq!(
        ends,
        [Some("\"Added ledger.py; it sums the entries.\"".to_owned())]
    );
    let notes: Vec<(String, String)> = db
        .prepare("SELECT kind, text FROM turn_notes ORDER BY id")?
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?
        .collect::<Result<_, _>>()?;
    // Sent at once, by two processes: in either order.
    let mut notes: Vec<(&str, &str)> = notes
        .iter()
        .map(|(k, t)| (k.as_str(), t.as_str()))
        .collect();
    notes.sort();
    assert_eq!(
        notes,
        [
            ("said", "Writing the ledger first."),
            ("thought", "A ledger is a list of signed amounts.")
        ]
    );
    Ok(())
}

/// A script that loads the plugin and plays one turn's callbacks: a
/// prompt, the assistant's words, a tool call, its last words, idle.
fn plugin_driver(project: &std::path::Path) -> String {
    let dir = serde_json::to_string(&project.to_string_lossy()).unwrap();
    format!(
        r#"import plugin from "./plugin.mjs";
const directory = {dir};
const hooks = await plugin.server({{ directory }});
const event = (type, properties) => hooks.event({{ event: {{ type, properties }} }});
const settle = () => new Promise((done) => setTimeout(done, 500));
const part = (id, text) => event("message.part.updated",
  {{ part: {{ id, messageID: "a1", sessionID: "s1", type: "text", text }} }});
await hooks["chat.message"]({{ sessionID: "s1", messageID: "u1" }},
  {{ parts: [{{ type: "text", text: "add a ledger script" }}] }});
await settle();
await event("message.updated", {{ info: {{ id: "u1", sessionID: "s1", role: "user" }} }});
await event("message.part.updated",
  {{ part: {{ id: "p0", messageID: "u1", sessionID: "s1", type: "text", text: "add a ledger script" }} }});
await event("message.updated", {{ info: {{ id: "a1", sessionID: "s1", role: "assistant" }} }});
await event("message.part.updated", {{ part: {{ id: "r1", messageID: "a1", sessionID: "s1",
  type: "reasoning", text: "A ledger is a list of signed amounts." }} }});
await part("p1", "Writing the ledger first.");
await hooks["tool.execute.before"]({{ sessionID: "s1", tool: "write", callID: "c1" }}, {{ args: {{}} }});
await settle();
await hooks["tool.execute.after"](
  {{ sessionID: "s1", tool: "write", callID: "c1", args: {{ filePath: directory + "/ledger.py", content: "x" }} }},
  {{ title: "ledger.py", output: "ok", metadata: {{}} }});
await part("p2", "Added ledger.py;");
await part("p2", "Added ledger.py; it sums the entries.");
await settle();
await event("session.idle", {{ sessionID: "s1" }});
"#
    )
}
