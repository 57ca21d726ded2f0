//! Keeps the memory-quality bench (`benches/quality.rs`) working: its
//! transcript reader and scoring rules on a small hand-written transcript,
//! and the whole harness (real hooks, real worker, real SQLite) on two real
//! transcripts kept in `tests/fixtures/transcripts` (MIT, see LICENSE there).

#[path = "../benches/quality/mod.rs"]
mod quality;

use std::path::{Path, PathBuf};

use quality::score;
use quality::transcript::{Session, Step, intent};
use serde_json::json;

const MNEMO: &str = env!("CARGO_BIN_EXE_mnemo");

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/transcripts")
}

/// A transcript line of `kind` with `content` as its message content.
fn line(kind: &str, content: serde_json::Value) -> serde_json::Value {
    json!({"type": kind, "sessionId": "s-1", "cwd": "/home/dev/app",
           "timestamp": "2026-02-10T10:00:00Z", "message": {"role": kind, "content": content}})
}

fn tool_use(id: &str, name: &str, input: serde_json::Value) -> serde_json::Value {
    line(
        "assistant",
        json!([{"type": "tool_use", "id": id, "name": name, "input": input}]),
    )
}

fn result(id: &str, error: bool, text: &str, structured: serde_json::Value) -> serde_json::Value {
    let mut l = line(
        "user",
        json!([{"type": "tool_result", "tool_use_id": id, "content": text, "is_error": error}]),
    );
    l["toolUseResult"] = structured;
    l
}

fn say(text: &str) -> serde_json::Value {
    line("assistant", json!([{"type": "text", "text": text}]))
}

fn sample() -> String {
    let mut meta = line(
        "user",
        json!("<local-command-caveat>Caveat</local-command-caveat>"),
    );
    meta["isMeta"] = true.into();
    let lines = vec![
        line("user", json!("add retries to the fetcher")),
        tool_use(
            "t1",
            "Edit",
            json!({"file_path": "/home/dev/app/src/fetch.rs"}),
        ),
        result(
            "t1",
            false,
            "ok",
            json!({"filePath": "/home/dev/app/src/fetch.rs"}),
        ),
        tool_use("t2", "Bash", json!({"command": "git push"})),
        result(
            "t2",
            true,
            "Error: Exit code 128\nfatal: no upstream",
            json!("Error: Exit code 128"),
        ),
        tool_use(
            "t3",
            "Bash",
            json!({"command": "cd /home/dev/app && git push --set-upstream origin main"}),
        ),
        result("t3", false, "done", json!({"stdout": "done", "stderr": ""})),
        tool_use("t4", "Bash", json!({"command": "cargo test"})),
        result(
            "t4",
            true,
            "Error: Exit code 101",
            json!("Error: Exit code 101"),
        ),
        tool_use(
            "t5",
            "AskUserQuestion",
            json!({"questions": [{"question": "Which backoff?"}]}),
        ),
        result(
            "t5",
            false,
            "answered",
            json!({"answers": {"Which backoff?": "Exponential backoff"}}),
        ),
        tool_use(
            "t6",
            "Bash",
            json!({"command": "git commit -m 'Retry fetches'"}),
        ),
        result(
            "t6",
            false,
            "ok",
            json!({"stdout": "[main 1a2b3c4] Retry fetches with backoff\n 1 file changed", "stderr": ""}),
        ),
        tool_use(
            "t7",
            "Write",
            json!({"file_path": "/home/dev/app/README.md"}),
        ),
        result(
            "t7",
            false,
            "The user doesn't want to proceed with this tool use.",
            json!("User rejected tool use"),
        ),
        say("Done. Should I also cap the retries?"),
        meta,
        line(
            "user",
            json!("<command-name>/mcp</command-name>\n<command-args></command-args>"),
        ),
        line(
            "user",
            json!("<local-command-stdout>Reconnected</local-command-stdout>"),
        ),
        line("user", json!("yes, cap them at five")),
        tool_use(
            "t8",
            "Edit",
            json!({"file_path": "/home/dev/app/src/fetch.rs"}),
        ),
        line(
            "user",
            json!([{"type": "text", "text": "[Request interrupted by user for tool use]"}]),
        ),
        line(
            "user",
            json!("<task-notification>\n<task-id>b1</task-id>\n</task-notification>"),
        ),
        say("The background build finished."),
    ];
    lines
        .iter()
        .map(|l| l.to_string())
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn reader_turns_a_transcript_into_hook_steps_and_ground_truth() {
    let s = Session::parse(&sample()).expect("the sample parses");
    assert_eq!(s.id, "s-1");
    assert_eq!(s.cwd, "/home/dev/app");
    let prompts: Vec<&str> = s.turns.iter().map(|t| t.prompt.as_str()).collect();
    assert_eq!(
        prompts,
        [
            "add retries to the fetcher",
            "yes, cap them at five",
            "<task-notification>\n<task-id>b1</task-id>\n</task-notification>"
        ],
        "meta entries and local commands are not prompts"
    );
    // The rejected Write fires no hook; the Edit of turn 2 had no result.
    assert_eq!(s.counts(), (3, 6, 2), "the interrupted turn 2 has no Stop");
    assert!(matches!(
        s.steps.first(),
        Some(Step::Start {
            source: "startup",
            turn: None
        })
    ));
    assert!(matches!(s.steps.last(), Some(Step::End)));
    assert_eq!(s.modified_files(0), ["/home/dev/app/src/fetch.rs"]);
    assert_eq!(s.commits(0), ["Retry fetches with backoff"]);
    assert_eq!(
        s.turns[0].final_text,
        "Done. Should I also cap the retries?"
    );
    let questions: Vec<(String, String)> = s
        .questions()
        .into_iter()
        .map(|q| (q.asked, q.answer))
        .collect();
    assert_eq!(
        questions,
        [
            (
                "Which backoff?".to_owned(),
                "Exponential backoff".to_owned()
            ),
            (
                "Should I also cap the retries?".to_owned(),
                "yes, cap them at five".to_owned()
            ),
        ]
    );
    let failures: Vec<(String, bool)> = s
        .failures()
        .into_iter()
        .map(|f| (f.intent, f.resolved))
        .collect();
    assert_eq!(
        failures,
        [
            ("git push".to_owned(), true),
            ("cargo test".to_owned(), false)
        ]
    );
}

#[test]
fn subagent_tool_calls_belong_to_the_turn_that_started_the_subagent() {
    let mut sub_write = tool_use(
        "w1",
        "Write",
        json!({"file_path": "/home/dev/app/notes.md"}),
    );
    let mut sub_result = result(
        "w1",
        false,
        "ok",
        json!({"filePath": "/home/dev/app/notes.md"}),
    );
    let mut sub_prompt = line("user", json!("write the notes"));
    for l in [&mut sub_prompt, &mut sub_write, &mut sub_result] {
        l["isSidechain"] = true.into();
    }
    let sub = [sub_prompt, sub_write, sub_result.clone()]
        .iter()
        .map(|l| l.to_string())
        .collect::<Vec<_>>()
        .join("\n");
    let main = [
        line("user", json!("document it")),
        tool_use(
            "k1",
            "Task",
            json!({"subagent_type": "general-purpose", "prompt": "write the notes"}),
        ),
        // A sidechain line in the main transcript is not the main thread's.
        sub_result,
        result(
            "k1",
            false,
            "done",
            json!({"agentId": "ag1", "status": "completed"}),
        ),
    ]
    .iter()
    .map(|l| l.to_string())
    .collect::<Vec<_>>()
    .join("\n");
    let subagents = [("ag1".to_owned(), sub)].into_iter().collect();
    let s = Session::parse_with(&main, &subagents).unwrap();
    let calls: Vec<(&str, Option<&str>)> = s
        .calls
        .iter()
        .map(|c| (c.name.as_str(), c.agent.as_ref().map(|a| a.1.as_str())))
        .collect();
    assert_eq!(calls, [("Write", Some("general-purpose")), ("Task", None)]);
    assert_eq!(s.modified_files(0), ["/home/dev/app/notes.md"]);
    assert_eq!(s.counts(), (1, 2, 1));
    assert_eq!(Session::parse(&main).unwrap().counts(), (1, 1, 1));
}

#[test]
fn scoring_rules() {
    assert_eq!(
        intent("cd /a && MIX_ENV=test mix test x.exs 2>&1 | tail"),
        "mix test"
    );
    assert_eq!(intent("/usr/bin/ls -la"), "ls");
    assert_eq!(intent("mix phx.server"), "mix phx.server");
    assert_eq!(intent("mix test test/foo_test.exs:12"), "mix test");
    assert!(score::log_like("Ran `git status`, `git add` and 18 more"));
    assert!(score::log_like("Edited lib/foo.ex"));
    assert!(!score::log_like("Edited lib/foo.ex to retry on timeout"));
    assert!(score::stop_word_definition(
        "Added `true`, `mount` to live.ex"
    ));
    assert!(!score::stop_word_definition(
        "Added `parse_config` to config.rs"
    ));
    assert!(score::says_it_fails(
        "Command `git push 2>&1` failed: no upstream",
        "git push"
    ));
    assert!(!score::says_it_fails(
        "`git push` failed, then succeeded",
        "git push"
    ));
    assert!(!score::says_it_fails("`mix test` failed", "git push"));
    assert!(score::machine_request("<task-notification>\n<task-id>1"));
    assert!(score::machine_request(
        "This session is being continued from a previous conversation that ran out of context."
    ));
    assert!(!score::machine_request("fix the login"));
    assert!(score::leaves_work_open(
        "Two tasks remaining: the docs and the CLI."
    ));
    assert!(!score::leaves_work_open("All done and pushed."));
    assert_eq!(score::significant_words("No rig"), ["rig"]);
}

#[test]
fn harness_replays_real_transcripts_and_scores_them() {
    let transcripts = quality::transcripts_in(&fixtures());
    assert_eq!(transcripts.len(), 2, "short.jsonl and tool_heavy.jsonl");
    let questions = quality::questions::load(
        &json!({"questions": [
            {"q": "how do I start the phoenix server", "all": ["phx.server"], "any": []},
            {"q": "something nobody said", "all": ["zebra crossing"], "any": []}
        ]})
        .to_string(),
    );
    let report = quality::run(
        Path::new(MNEMO),
        &transcripts,
        &questions,
        quality::replay::Worker::After,
    );

    assert!(
        report.replay.bad_hooks.is_empty(),
        "{:?}",
        report.replay.bad_hooks
    );
    let (prompts, tools, stops) = report.replay.sessions.iter().fold((0, 0, 0), |a, s| {
        let c = s.counts();
        (a.0 + c.0, a.1 + c.1, a.2 + c.2)
    });
    let m = &report.memory;
    assert_eq!(m.sessions, 2);
    assert_eq!(m.prompts.len(), prompts);
    assert_eq!(m.tool_events as usize, tools);
    assert_eq!(m.turn_ends as usize, stops);
    assert_eq!(m.failed_events, 0, "the worker failed no event");
    assert!(!m.summaries.is_empty() && !m.observations.is_empty());

    for (name, share, _) in report.scores.rows() {
        assert!(share.hit <= share.total as f64, "{name}: {share:?}");
        if let Some(v) = share.value() {
            assert!((0.0..=1.0).contains(&v), "{name}: {v}");
        }
    }
    assert_eq!(report.scores.log_titles.total, m.observations.len());
    assert_eq!(report.scores.machine_requests.total, m.summaries.len());

    let phoenix = &report.ranked[0];
    assert!(
        phoenix.answerable,
        "a stored record mentions mix phx.server"
    );
    assert!(
        phoenix.mnemo.is_some() && phoenix.bm25.is_some(),
        "{phoenix:?}"
    );
    let nothing = &report.ranked[1];
    assert!(!nothing.answerable && nothing.mnemo.is_none() && nothing.bm25.is_none());

    let table = report.table();
    assert!(
        table.contains("| score | value | cases | better |"),
        "{table}"
    );
    assert!(
        table.contains("| mnemo search |") && table.contains("| plain BM25"),
        "{table}"
    );
    assert!(report.index.contains("<mnemo-context>"), "{}", report.index);
    assert_eq!(report.index_checks.chars, report.index.chars().count());

    let dump = tempfile::tempdir().unwrap();
    report.dump(dump.path()).unwrap();
    for file in [
        "index.txt",
        "summaries.txt",
        "observations.txt",
        "ground_truth.txt",
        "questions.txt",
        "scores.md",
    ] {
        let text = std::fs::read_to_string(dump.path().join(file)).unwrap();
        assert!(!text.trim().is_empty(), "{file} is empty");
    }
}

#[test]
fn the_bench_question_set_is_well_formed() {
    let text = std::fs::read_to_string(quality::QUESTIONS).unwrap();
    let questions = quality::questions::load(&text);
    assert!(questions.len() >= 15, "{} questions", questions.len());
    for q in &questions {
        assert!(
            !q.all.is_empty() || !q.any.is_empty(),
            "{:?} has no matcher",
            q.q
        );
    }
    let raw: serde_json::Value = serde_json::from_str(&text).unwrap();
    for q in raw["questions"].as_array().unwrap() {
        assert!(
            q["why"].as_str().is_some_and(|w| !w.is_empty()),
            "{q} says why"
        );
    }
}
