//! Every format of the secret corpus
//! (`crates/mnemo-core/tests/fixtures/secrets.toml`) goes
//! through the real capture path: the `mnemo` binary, a Claude Code hook
//! payload on stdin, a real data directory. Afterwards no file of that
//! directory (database, WAL, spool, logs) holds a secret's bytes, and every
//! near-miss is still stored as it was. The same again with the database
//! locked, so that the events go to the spool file; and once through the
//! worker, whose observations and summaries must not bring any secret back,
//! and once through `mnemo import`.

mod common;
#[path = "common/worker.rs"]
mod worker_support;

use std::path::{Path, PathBuf};
use std::time::Duration;

use common::*;
use serde::Deserialize;
use serde_json::{Value, json};

#[derive(Debug, Deserialize)]
struct Corpus {
    case: Vec<Case>,
}

#[derive(Debug, Deserialize)]
struct Case {
    name: String,
    context: String,
    text: String,
    secret: String,
    path: Option<String>,
    #[serde(default = "yes")]
    catch: bool,
}

fn yes() -> bool {
    true
}

fn corpus() -> Vec<Case> {
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../mnemo-core/tests/fixtures/secrets.toml");
    let text = std::fs::read_to_string(&path).unwrap();
    let corpus: Corpus = toml::from_str(&text).unwrap();
    for case in &corpus.case {
        assert!(
            case.text.contains(&case.secret) || case.context == "json",
            "{}: the secret is not in the text",
            case.name
        );
    }
    corpus.case
}

/// The hook event and payload that put `case.text` where its context says.
fn payload(case: &Case, id: &str, proj: &Path) -> (&'static str, Value) {
    let base = json!({"session_id": "corpus", "cwd": proj, "hook_event_name": "PostToolUse",
                      "tool_use_id": id});
    let file = || proj.join(case.path.as_deref().unwrap_or("notes.txt"));
    let tool = |name: &str, input: Value, response: Value| {
        let mut p = base.clone();
        p["tool_name"] = json!(name);
        p["tool_input"] = input;
        p["tool_response"] = response;
        p
    };
    let t = case.text.as_str();
    let p = match case.context.as_str() {
        "prompt" => {
            return (
                "UserPromptSubmit",
                json!({"session_id": "corpus", "cwd": proj, "hook_event_name": "UserPromptSubmit",
                       "prompt_id": id, "prompt": t}),
            );
        }
        "assistant" => {
            return (
                "Stop",
                json!({"session_id": "corpus", "cwd": proj, "hook_event_name": "Stop",
                       "stop_hook_active": false, "last_assistant_message": t}),
            );
        }
        "command" => tool(
            "Bash",
            json!({"command": t, "description": "run it"}),
            json!({"stdout": "ok", "stderr": "", "interrupted": false}),
        ),
        "stdout" => tool(
            "Bash",
            json!({"command": "./scripts/show.sh"}),
            json!({"stdout": t, "stderr": "", "interrupted": false}),
        ),
        "write" => tool(
            "Write",
            json!({"file_path": file(), "content": t}),
            json!({"type": "create", "filePath": file(), "content": t, "structuredPatch": []}),
        ),
        "edit" => {
            let lines: Vec<String> = t.lines().map(|l| format!("+{l}")).collect();
            tool(
                "Edit",
                json!({"file_path": file(), "old_string": "TODO: settings", "new_string": t}),
                json!({"filePath": file(), "oldString": "TODO: settings", "newString": t,
                       "originalFile": "# app\nTODO: settings\n", "userModified": false,
                       "replaceAll": false,
                       "structuredPatch": [{"oldStart": 2, "oldLines": 1, "newStart": 2,
                                            "newLines": lines.len(),
                                            "lines": std::iter::once("-TODO: settings".to_owned())
                                                .chain(lines).collect::<Vec<_>>()}]}),
            )
        }
        "json" => tool(
            "mcp__config__apply",
            serde_json::from_str(t).expect("a json case holds JSON"),
            json!({"ok": true}),
        ),
        "file_path" => tool(
            "Read",
            json!({"file_path": t}),
            json!({"type": "text", "file": {"filePath": t, "content": "hello\n",
                                              "numLines": 1, "startLine": 1, "totalLines": 1}}),
        ),
        "tool_id" => {
            let mut p = tool(
                "Bash",
                json!({"command": "ls"}),
                json!({"stdout": "src\n", "stderr": ""}),
            );
            p["tool_use_id"] = json!(format!("{t}-{id}"));
            p
        }
        "grep" | "grep_file" => {
            let path = match case.path.as_deref() {
                Some(p) => proj.join(p),
                None => proj.to_owned(),
            };
            tool(
                "Grep",
                json!({"pattern": "SMTP|MAPBOX|SEED", "path": path, "output_mode": "content", "-n": true}),
                json!({"mode": "content", "numFiles": 2, "filenames": [], "content": t,
                       "numLines": t.lines().count()}),
            )
        }
        other => panic!("{}: unknown context {other}", case.name),
    };
    ("PostToolUse", p)
}

/// Files whose name starts with `mnemo.db` (the database and its WAL).
fn database_bytes(data: &Path) -> Vec<u8> {
    all_bytes_under(data)
        .into_iter()
        .filter(|(p, _)| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("mnemo.db"))
        })
        .flat_map(|(_, b)| b)
        .collect()
}

/// What became of one case on one path: `None` when all is well, else why.
fn verdict(case: &Case, files: &[(PathBuf, Vec<u8>)], kept_in: &[u8]) -> Option<String> {
    let needle = case.secret.as_bytes();
    if case.catch {
        let (path, _) = files.iter().find(|(_, b)| contains_bytes(b, needle))?;
        return Some(format!(
            "  {} [{}]: {:?} in {}",
            case.name,
            case.context,
            case.secret,
            path.file_name().unwrap().to_string_lossy()
        ));
    }
    // (The spool holds the stored JSON as a JSON string: once escaped for
    // a prompt, twice for a tool input's JSON.)
    let escape = |s: &str| {
        let e = serde_json::to_string(s).unwrap();
        e[1..e.len() - 1].to_owned()
    };
    let once = escape(&case.secret);
    let twice = escape(&once);
    let kept = [needle, once.as_bytes(), twice.as_bytes()]
        .iter()
        .any(|form| contains_bytes(kept_in, form));
    (!kept).then(|| {
        format!(
            "  {} [{}]: {:?} was not kept",
            case.name, case.context, case.secret
        )
    })
}

/// Leaks and false positives over the corpus, on one path.
#[derive(Default)]
struct Tally {
    tried: usize,
    leaks: Vec<String>,
    near_misses: usize,
    false_positives: Vec<String>,
}

impl Tally {
    fn add(&mut self, case: &Case, problem: Option<String>) {
        if case.catch {
            self.tried += 1;
            self.leaks.extend(problem);
        } else {
            self.near_misses += 1;
            self.false_positives.extend(problem);
        }
    }

    fn report(&self, path: &str) -> String {
        format!(
            "{path}: caught {}/{} secret formats, {} of {} near-misses redacted\nleaked:\n{}\nfalse positives:\n{}",
            self.tried - self.leaks.len(),
            self.tried,
            self.false_positives.len(),
            self.near_misses,
            self.leaks.join("\n"),
            self.false_positives.join("\n"),
        )
    }

    fn clean(&self) -> bool {
        self.leaks.is_empty() && self.false_positives.is_empty()
    }
}

#[test]
fn every_corpus_format_is_redacted_through_capture_and_the_spool() {
    let cases = corpus();
    assert!(
        cases.iter().filter(|c| c.catch).count() >= 70,
        "the corpus covers at least 70 formats"
    );
    let (mut stored, mut spooled) = (Tally::default(), Tally::default());
    for case in &cases {
        // A data directory of its own, so that a leak is the case's own.
        let env = Env::new();
        let proj = env.dir.path().join("app");
        std::fs::create_dir_all(&proj).unwrap();
        let (event, p) = payload(case, "c1", &proj);
        assert_hook_ok(&env.hook(event, &p.to_string()));
        let files = all_bytes_under(&env.data());
        stored.add(case, verdict(case, &files, &database_bytes(&env.data())));

        // The same with the database locked: the event goes to the spool.
        let holder = env.db();
        holder.execute_batch("BEGIN EXCLUSIVE").unwrap();
        let (event, p) = payload(case, "c2", &proj);
        let out = env.hook_with(event, &p.to_string(), |c| {
            c.env("MNEMO_STORE_BUSY_TIMEOUT_MS", "20");
        });
        assert_hook_ok(&out);
        let spool_path = env.data().join("spool/pending.jsonl");
        let spool = std::fs::read(&spool_path).unwrap_or_default();
        if case.catch || case.context != "prompt" {
            assert!(!spool.is_empty(), "{}: nothing was spooled", case.name);
        }
        spooled.add(case, verdict(case, &[(spool_path, spool.clone())], &spool));
        holder.execute_batch("COMMIT").unwrap();
    }
    eprintln!("{}\n{}", stored.report("database"), spooled.report("spool"));
    assert!(
        stored.clean() && spooled.clean(),
        "{}\n\n{}",
        stored.report("database"),
        spooled.report("spool")
    );
}

#[test]
fn the_worker_brings_back_no_secret_of_the_corpus() {
    let cases = corpus();
    let env = Env::new();
    let proj = env.dir.path().join("app");
    std::fs::create_dir_all(&proj).unwrap();
    let _worker = worker_support::Worker::start(&env, |_| {});
    for (k, case) in cases.iter().enumerate() {
        let (event, p) = payload(case, &format!("w{k}"), &proj);
        assert_hook_ok(&env.hook(event, &p.to_string()));
    }
    let stop = json!({"session_id": "corpus", "cwd": proj, "hook_event_name": "Stop",
                      "last_assistant_message": "Done."});
    assert_hook_ok(&env.hook("Stop", &stop.to_string()));
    worker_support::wait_all_done(&env, Duration::from_secs(60));
    let observations = env.count("SELECT count(*) FROM observations");
    assert!(observations > 0, "the worker wrote observations");

    let files = all_bytes_under(&env.data());
    let leaks: Vec<String> = cases
        .iter()
        .filter(|c| c.catch)
        .filter_map(|c| verdict(c, &files, &[]))
        .collect();
    assert!(
        leaks.is_empty(),
        "after the worker ({observations} observations), leaked:\n{}",
        leaks.join("\n")
    );
}

#[test]
fn an_import_keeps_no_secret_of_the_corpus() {
    let cases: Vec<Case> = corpus()
        .into_iter()
        .filter(|c| c.catch && !c.context.starts_with("grep"))
        .collect();
    let env = Env::new();
    let proj = env.dir.path().join("app");
    std::fs::create_dir_all(&proj).unwrap();
    let records: String = cases
        .iter()
        .enumerate()
        .map(|(k, c)| {
            let record = json!({"kind": "observation", "project": proj, "type": "discovery",
                                "title": format!("case {k}"), "narrative": c.text,
                                "facts": c.text.lines().collect::<Vec<_>>(),
                                "created_at": "2026-11-24T10:00:00Z"});
            format!("{record}\n")
        })
        .collect();
    let file = env.dir.path().join("import.jsonl");
    std::fs::write(&file, records).unwrap();
    let out = env.mnemo().arg("import").arg(&file).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        env.count("SELECT count(*) FROM observations"),
        cases.len() as i64
    );
    let files: Vec<(PathBuf, Vec<u8>)> = all_bytes_under(&env.data());
    let leaks: Vec<String> = cases
        .iter()
        .filter_map(|c| verdict(c, &files, &[]))
        .collect();
    assert!(
        leaks.is_empty(),
        "after import, leaked:\n{}",
        leaks.join("\n")
    );
}
