//! Project knowledge and memories anchored to the code, through the real
//! binary: sessions of a Rust project and of a Go + Node project come
//! through the real hooks, the real worker compresses them and consolidates
//! what each project is and how to work in it; the index says so first, in
//! the issue's order. A file changed or deleted after a record was written
//! shows `[changed]` / `[deleted]` in `mnemo context`, `mnemo search` and
//! `mnemo show`, and `"freshness"` in JSON.

mod common;
#[path = "common/worker.rs"]
mod worker_support;

use std::path::Path;
use std::time::Duration;

use common::*;
use mnemo_core::time::{format_rfc3339, now_ms};
use serde_json::{Value, json};
use worker_support::*;

/// A tool call of one turn, as Claude Code reports it.
enum Call<'a> {
    /// A shell command that exited 0.
    Ran(&'a str),
    /// A shell command that failed.
    Failed(&'a str),
    Read(&'a str),
    /// Writes the file on disk (as the tool would) with this content.
    Write(&'a str, &'a str),
}

/// One prompt turn through the real hooks.
fn turn(env: &Env, project: &Path, session: &str, n: usize, prompt: &str, calls: &[Call<'_>]) {
    let prompt_id = format!("prompt-{session}-{n}");
    let submit = payload("UserPromptSubmit.json", project, session, &prompt_id, |v| {
        v["prompt"] = json!(prompt);
    });
    hook(env, "UserPromptSubmit", &submit, |_| {});
    for (i, call) in calls.iter().enumerate() {
        let id = json!(format!("toolu-{session}-{n}-{i}"));
        let (event, body) = call_payload(project, session, &prompt_id, call, id);
        hook(env, event, &body, |_| {});
    }
    let stop = payload("Stop.json", project, session, &prompt_id, |v| {
        v["last_assistant_message"] = json!("Done.");
    });
    hook(env, "Stop", &stop, |_| {});
}

fn call_payload(
    project: &Path,
    session: &str,
    prompt_id: &str,
    call: &Call<'_>,
    id: Value,
) -> (&'static str, String) {
    match call {
        Call::Ran(command) => (
            "PostToolUse",
            payload("PostToolUse.Bash.json", project, session, prompt_id, |v| {
                v["tool_use_id"] = id;
                v["tool_input"]["command"] = json!(command);
                v["tool_response"]["stdout"] = json!("ok");
            }),
        ),
        Call::Failed(command) => (
            "PostToolUseFailure",
            payload(
                "PostToolUseFailure.Bash.json",
                project,
                session,
                prompt_id,
                |v| {
                    v["tool_use_id"] = id;
                    v["tool_input"]["command"] = json!(command);
                },
            ),
        ),
        Call::Read(file) => {
            let path = project.join(file);
            let content = std::fs::read_to_string(&path).unwrap_or_default();
            let body = payload("PostToolUse.Read.json", project, session, prompt_id, |v| {
                v["tool_use_id"] = id;
                v["tool_input"] = json!({"file_path": path});
                v["tool_response"] = json!({"type": "text", "file": {"filePath": path,
                    "content": content, "numLines": 1, "startLine": 1, "totalLines": 1}});
            });
            ("PostToolUse", body)
        }
        Call::Write(file, content) => {
            let path = project.join(file);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(&path, content).unwrap();
            let body = payload("PostToolUse.Write.json", project, session, prompt_id, |v| {
                v["tool_use_id"] = id;
                v["tool_input"]["file_path"] = json!(path);
                v["tool_input"]["content"] = json!(content);
                v["tool_response"]["filePath"] = json!(path);
                v["tool_response"]["content"] = json!(content);
            });
            ("PostToolUse", body)
        }
    }
}

/// Runs the worker until every event is compressed and the knowledge of
/// each project is consolidated.
fn compress_all(env: &Env, projects: usize) {
    let _worker = Worker::start(env, |_| {});
    wait_all_done(env, Duration::from_secs(60));
    wait_for(
        "knowledge of every project",
        Duration::from_secs(30),
        || {
            let n = env.count("SELECT count(DISTINCT project_id) FROM knowledge");
            (n as usize >= projects).then_some(())
        },
    );
}

fn context(env: &Env, project: &Path, json: bool) -> String {
    let mut c = env.mnemo();
    c.arg("context").current_dir(project);
    if json {
        c.arg("--json");
    }
    let out = c.output().unwrap();
    assert_success(&out);
    String::from_utf8(out.stdout).unwrap()
}

fn mnemo_out(env: &Env, project: &Path, args: &[&str]) -> String {
    let out = env
        .mnemo()
        .args(args)
        .current_dir(project)
        .output()
        .unwrap();
    assert_success(&out);
    String::from_utf8(out.stdout).unwrap()
}

fn line_with<'a>(text: &'a str, needle: &str) -> &'a str {
    text.lines()
        .find(|l| l.contains(needle))
        .unwrap_or_else(|| panic!("no line with {needle:?} in:\n{text}"))
}

fn position(text: &str, prefix: &str) -> usize {
    text.lines()
        .position(|l| l.starts_with(prefix))
        .unwrap_or_else(|| panic!("no {prefix:?} section in:\n{text}"))
}

fn rust_project(env: &Env) -> std::path::PathBuf {
    let p = project(env, "ledger");
    std::fs::write(p.join("Cargo.toml"), "[package]\nname = \"ledger\"\n").unwrap();
    for (n, session) in ["r1", "r2"].iter().enumerate() {
        session_start(env, &p, session);
        let write = if n == 0 {
            Call::Write("src/journal.rs", "pub fn post() {}\n")
        } else {
            Call::Write("src/balance.rs", "pub fn total() -> i64 { 0 }\n")
        };
        let calls = [
            Call::Read("Cargo.toml"),
            write,
            Call::Ran("cargo test -p ledger --lib"),
            Call::Ran("cargo clippy --all-targets -- -D warnings"),
            Call::Ran("ls src"),
        ];
        turn(env, &p, session, 1, "add the ledger entries", &calls);
    }
    p
}

fn go_node_project(env: &Env) -> std::path::PathBuf {
    let p = project(env, "relay");
    std::fs::write(p.join("go.mod"), "module example.com/relay\n\ngo 1.22\n").unwrap();
    std::fs::write(
        p.join("README.md"),
        "# relay\n\n[![CI](https://ci.example/badge.svg)](https://ci.example)\n\n\
         **Relay** forwards webhook messages from [chat services](docs/chat.md) to the \
         internal hubs. It runs as one binary.\n\n## Install\n\n```sh\ngo install ./...\n```\n",
    )
    .unwrap();
    std::fs::create_dir_all(p.join("web")).unwrap();
    std::fs::write(p.join("web/package.json"), "{\"name\": \"relay-web\"}\n").unwrap();
    for (n, session) in ["g1", "g2"].iter().enumerate() {
        session_start(env, &p, session);
        let calls = [
            Call::Read("go.mod"),
            Call::Read("web/package.json"),
            Call::Write(
                if n == 0 {
                    "internal/hub/hub.go"
                } else {
                    "internal/hub/route.go"
                },
                "package hub\n",
            ),
            Call::Failed("go vet ./..."),
            Call::Ran("go test ./..."),
            Call::Ran("cd web && npm run build"),
            Call::Ran("rg -n Route internal"),
        ];
        let prompt =
            "route the messages through the hub. Always run the web build before committing.";
        turn(env, &p, session, 1, prompt, &calls);
    }
    p
}

#[test]
fn knowledge_names_the_stack_and_the_commands_of_a_rust_and_a_go_node_project() {
    let env = Env::new();
    let rust = rust_project(&env);
    let go = go_node_project(&env);
    compress_all(&env, 2);

    let r = context(&env, &rust, false);
    let stack = line_with(&r, "- stack:");
    // What the root's manifest says the project is.
    assert!(stack.contains("Rust (Cargo.toml): ledger"), "{r}");
    assert!(!stack.contains("Go") && !stack.contains("Node"), "{r}");
    let commands = line_with(&r, "- commands that passed:");
    assert!(commands.contains("`cargo test`"), "{r}");
    assert!(commands.contains("`cargo clippy`"), "{r}");
    assert!(commands.contains("2 sessions"), "{r}");
    assert!(
        !commands.contains("`ls"),
        "looking around is not how to work: {r}"
    );
    assert!(line_with(&r, "- main directories:").contains("src/"), "{r}");

    let g = context(&env, &go, false);
    // What the project is, in its README's words, first.
    let what = line_with(&g, "- what it is:");
    assert_eq!(
        what,
        "- what it is: Relay forwards webhook messages from chat services to the internal hubs. (README.md)",
        "{g}"
    );
    assert!(
        position(&g, "- what it is:") < position(&g, "- stack:"),
        "{g}"
    );
    assert!(!r.contains("- what it is:"), "no README, nothing said: {r}");
    let stack = line_with(&g, "- stack:");
    assert!(
        stack.contains("Go (go.mod): module example.com/relay (Go 1.22)"),
        "{g}"
    );
    assert!(
        stack.contains("JavaScript/Node.js (web/package.json)"),
        "{g}"
    );
    assert!(!stack.contains("Rust"), "{g}");
    let commands = line_with(&g, "- commands that passed:");
    assert!(commands.contains("`go test ./...`"), "{g}");
    assert!(commands.contains("`npm run build`"), "{g}");
    assert!(!commands.contains("go vet"), "it never passed: {g}");
    assert!(
        !commands.contains("`rg"),
        "a search is not how to work: {g}"
    );
    assert!(
        line_with(&g, "- main directories:").contains("internal/hub/"),
        "{g}"
    );
    assert!(
        line_with(&g, "the user asked").contains("Always run the web build before committing."),
        "{g}"
    );

    // The JSON form carries the items with provenance and anchors.
    let j: Value = serde_json::from_str(&context(&env, &go, true)).unwrap();
    let items = j["knowledge"].as_array().expect("knowledge items");
    let go_item = items
        .iter()
        .find(|i| i["kind"] == "stack" && i["key"] == "Go")
        .expect("the Go item");
    assert_eq!(go_item["files"], json!(["go.mod"]));
    assert!(
        go_item["sources"].as_array().is_some_and(|s| !s.is_empty()),
        "{go_item}"
    );
}

#[test]
fn the_index_comes_in_order_and_says_it_holds_notes() {
    let env = Env::new();
    let p = rust_project(&env);
    // A decision about a file that changed after it was made.
    let decision = json!({"kind": "observation", "project": p, "type": "decision",
        "title": "Chose one journal file per day over one per entry: fewer files to sync",
        "files_modified": [p.join("src/journal.rs")],
        "created_at": format_rfc3339(now_ms() - 3_600_000)});
    let file = env.dir.path().join("decision.jsonl");
    std::fs::write(&file, format!("{decision}\n")).unwrap();
    assert_success(&env.mnemo().arg("import").arg(&file).output().unwrap());
    compress_all(&env, 1);

    let text = context(&env, &p, false);
    assert!(
        text.lines()
            .nth(1)
            .unwrap()
            .contains("Notes recorded in past sessions")
            && text.lines().nth(1).unwrap().contains("not instructions"),
        "{text}"
    );
    let order = [
        position(&text, "What the project is and how to work in it"),
        position(&text, "Decisions in force"),
        position(&text, "Recent sessions"),
        position(&text, "Observations ("),
    ];
    assert!(order.windows(2).all(|w| w[0] < w[1]), "{order:?}\n{text}");
    let line = line_with(&text, "Chose one journal file per day");
    assert!(line.ends_with("[changed]"), "re-check the decision: {line}");
}

#[test]
fn a_changed_or_deleted_file_is_marked_in_every_interface() {
    let env = Env::new();
    let p = project(&env, "notes");
    session_start(&env, &p, "f1");
    let keep = [Call::Write("src/parser.rs", "fn parse_heading() {}\n")];
    turn(&env, &p, "f1", 1, "write the heading parser", &keep);
    let gone = [Call::Write(
        "src/legacy.rs",
        "fn render_legacy_footer() {}\n",
    )];
    turn(&env, &p, "f1", 2, "write the legacy footer renderer", &gone);
    compress_all(&env, 1);

    let id_of = |file: &str| -> i64 {
        env.db()
            .query_row(
                "SELECT observation_id FROM observation_files f
                 JOIN file_baselines b USING (observation_id, path)
                 WHERE f.path LIKE '%' || ?1 AND f.modified = 1",
                [file],
                |r| r.get(0),
            )
            .unwrap_or_else(|e| panic!("an observation of {file} with a baseline: {e}"))
    };
    let (parser, legacy) = (id_of("parser.rs"), id_of("legacy.rs"));
    let before = context(&env, &p, false);
    assert!(
        !before.contains("[changed]") && !before.contains("[deleted]"),
        "{before}"
    );
    let show = |id: i64| -> Value {
        serde_json::from_str(&mnemo_out(&env, &p, &["show", "--json", &format!("#{id}")])).unwrap()
    };
    let first = |v: &Value| v["records"][0].clone();
    assert_eq!(first(&show(parser))["freshness"], "current");

    std::fs::write(p.join("src/parser.rs"), "fn parse_heading(level: u8) {}\n").unwrap();
    std::fs::remove_file(p.join("src/legacy.rs")).unwrap();

    let after = context(&env, &p, false);
    assert!(
        line_with(&after, &format!("#{parser} ")).contains("[changed]"),
        "{after}"
    );
    assert!(
        line_with(&after, &format!("#{legacy} ")).contains("[deleted]"),
        "{after}"
    );
    assert_eq!(first(&show(parser))["freshness"], "changed");
    assert_eq!(first(&show(legacy))["freshness"], "deleted");
    let found = mnemo_out(&env, &p, &["search", "heading parser"]);
    assert!(
        line_with(&found, &format!("#{parser} ")).contains("[changed]"),
        "{found}"
    );
    let hits: Value =
        serde_json::from_str(&mnemo_out(&env, &p, &["search", "--json", "legacy footer"])).unwrap();
    let hit = hits["hits"]
        .as_array()
        .and_then(|h| {
            // Ids are per kind: a turn summary can carry the same number.
            h.iter()
                .find(|h| h["kind"] == "observation" && h["id"] == legacy)
        })
        .unwrap_or_else(|| panic!("the legacy observation is found: {hits}"));
    assert_eq!(hit["freshness"], "deleted");
}
