//! The reader on real Claude Code transcripts (tests/fixtures/spotter, MIT)
//! and on small hand-written ones for what those do not contain.

use std::io::Write;
use std::path::{Path, PathBuf};

use mnemo_core::config::Config;
use mnemo_core::privacy::Sanitizer;
use mnemo_transcript::locate::{Wanted, turn_for};
use mnemo_transcript::{Origin, Session, read_file, read_session};
use serde_json::json;

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/spotter")
        .join(name)
}

const LONG: &str = "258c7280-ae70-4798-800f-63464d01a85d.jsonl";

fn sanitizer() -> Sanitizer {
    Sanitizer::new(&Config::default().privacy)
}

fn read(name: &str) -> Session {
    read_session(&fixture(name), &sanitizer()).expect("fixture readable")
}

/// Every text the reader yields, for "never contains" checks.
fn all_text(s: &Session) -> String {
    let mut out = String::new();
    for t in &s.turns {
        for part in [&t.prompt, &t.continues_request, &t.final_report] {
            out.extend(part.iter().map(|p| format!("{p}\n")));
        }
        for n in &t.notes {
            out += &n.text;
        }
        for q in &t.questions {
            out += &format!("{} {:?} {}\n", q.question, q.options, q.answer);
        }
        for c in &t.tool_calls {
            out += &format!("{} {:?} {:?}\n", c.input, c.result, c.error);
        }
    }
    out
}

#[test]
fn short_session_is_one_interrupted_turn() {
    let s = read("short.jsonl");
    assert_eq!(s.session_id, "55604662-cf2a-4331-851a-ec234028f8ca");
    assert_eq!(s.stats.skipped, 0);
    // The `/model` local command opens no turn.
    assert_eq!(s.turns.len(), 1, "{:#?}", s.turns);
    let t = &s.turns[0];
    assert_eq!(t.origin, Origin::User);
    assert!(t.interrupted);
    assert_eq!(
        t.prompt.as_deref(),
        Some("mix phx.server doesnt seem to start")
    );
    assert_eq!(t.tool_calls.len(), 2);
    // Both calls were rejected by the user: failures with the host's words.
    assert!(
        t.tool_calls
            .iter()
            .all(|c| c.error.is_some() && c.result.is_none())
    );
    // The note says which call it explains.
    assert_eq!(
        t.notes[0].before_tool_use_id.as_deref(),
        Some(t.tool_calls[0].id.as_str())
    );
}

#[test]
fn long_session_separates_prompts_notifications_and_compaction() {
    let s = read(LONG);
    let origins: Vec<Origin> = s.turns.iter().map(|t| t.origin).collect();
    assert_eq!(
        origins,
        [
            Origin::User,
            Origin::TaskNotification,
            Origin::Compaction,
            Origin::TaskNotification,
            Origin::User
        ]
    );
    let first = s.turns[0].prompt.clone().unwrap();
    for t in &s.turns[1..4] {
        // A continuation knows the request it continues.
        assert_eq!(t.continues_request.as_deref(), Some(first.as_str()));
    }
    assert!(s.turns[2].prompt.is_none(), "a compaction has no prompt");
    // The compaction summary (a user line) is not taken for a request.
    assert!(s.turns.iter().all(|t| {
        !t.prompt
            .as_deref()
            .unwrap_or("")
            .contains("continued from a previous conversation")
    }));
    let report = s.turns[4].final_report.as_deref().unwrap();
    assert!(!report.is_empty());
    // Every tool call found its result or error.
    let calls: Vec<_> = s.turns.iter().flat_map(|t| &t.tool_calls).collect();
    assert!(calls.len() > 150, "{}", calls.len());
    let open = calls
        .iter()
        .filter(|c| c.result.is_none() && c.error.is_none() && c.withheld.is_none())
        .count();
    assert!(open <= 2, "{open} calls without an outcome");
}

#[test]
fn subagent_calls_join_the_turn_that_started_them() {
    let s = read(LONG);
    let main_only = read_file(&fixture(LONG), &sanitizer()).unwrap();
    let count = |s: &Session| s.turns.iter().map(|t| t.tool_calls.len()).sum::<usize>();
    assert!(count(&s) > count(&main_only));
    let sub: Vec<_> = s
        .turns
        .iter()
        .flat_map(|t| &t.tool_calls)
        .filter(|c| c.agent_id.is_some())
        .collect();
    assert!(!sub.is_empty());
    assert!(sub.iter().all(|c| c.agent_id.as_deref() == Some("a881341")));
    // The compaction helper's file is not a subagent of any turn.
    assert!(count(&s) - count(&main_only) == sub.len());
}

#[test]
fn ask_user_question_answers_are_read_with_their_options() {
    let s = read("subagent.jsonl");
    let questions: Vec<_> = s.turns.iter().flat_map(|t| &t.questions).collect();
    assert_eq!(questions.len(), 2, "{questions:#?}");
    for q in &questions {
        assert!(q.question.contains('?'));
        assert!(q.options.len() >= 2);
        // The answer is one of the options offered.
        assert!(q.options.contains(&q.answer), "{q:?}");
    }
    // The skill's expansion (isMeta) is not a turn; the slash command is
    // the prompt.
    assert_eq!(s.turns.len(), 2);
    assert!(s.turns[0].prompt.as_deref().unwrap().starts_with('/'));
}

#[test]
fn tool_heavy_session_drops_local_commands() {
    let s = read("tool_heavy.jsonl");
    let prompts: Vec<_> = s.turns.iter().map(|t| t.prompt.clone().unwrap()).collect();
    assert_eq!(prompts.len(), 2, "{prompts:?}");
    assert!(
        prompts
            .iter()
            .all(|p| !p.contains("/mcp") && !p.contains("local-command"))
    );
}

#[test]
fn thinking_is_never_read() {
    for name in ["short.jsonl", "subagent.jsonl", "tool_heavy.jsonl", LONG] {
        let raw = std::fs::read_to_string(fixture(name)).unwrap();
        let thoughts: Vec<String> = raw
            .lines()
            .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
            .filter_map(|v| v.pointer("/message/content").cloned())
            .filter_map(|c| c.as_array().cloned())
            .flatten()
            .filter_map(|b| {
                b.get("thinking")
                    .and_then(|t| t.as_str())
                    .map(str::to_owned)
            })
            .filter(|t| t.len() > 40)
            .collect();
        let text = all_text(&read(name));
        for thought in &thoughts {
            assert!(!text.contains(thought.as_str()), "{name}: thinking leaked");
        }
    }
}

fn line(v: serde_json::Value) -> String {
    format!("{v}\n")
}

fn user(text: &str, at: &str) -> String {
    line(
        json!({"type": "user", "sessionId": "s-1", "cwd": "/p", "timestamp": at,
                "uuid": format!("u-{at}"), "message": {"role": "user", "content": text}}),
    )
}

fn assistant(blocks: serde_json::Value, at: &str) -> String {
    line(
        json!({"type": "assistant", "sessionId": "s-1", "timestamp": at,
                "message": {"role": "assistant", "content": blocks}}),
    )
}

fn result(id: &str, text: &str, structured: serde_json::Value, at: &str) -> String {
    line(json!({"type": "user", "sessionId": "s-1", "timestamp": at,
                "message": {"role": "user", "content": [
                    {"type": "tool_result", "tool_use_id": id, "content": text}]},
                "toolUseResult": structured}))
}

fn write(dir: &Path, lines: &[String]) -> PathBuf {
    let path = dir.join("s-1.jsonl");
    let mut f = std::fs::File::create(&path).unwrap();
    for l in lines {
        f.write_all(l.as_bytes()).unwrap();
    }
    path
}

#[test]
fn a_question_ending_a_turn_is_answered_by_the_next_prompt() {
    let tmp = tempfile::tempdir().unwrap();
    let path = write(
        tmp.path(),
        &[
            user("add caching to the API", "2026-01-01T10:00:00Z"),
            assistant(
                json!([{"type": "text", "text": "Two ways to do it.\n\nShould the cache live in Redis or in process memory?\n- Redis\n- in process"}]),
                "2026-01-01T10:00:05Z",
            ),
            user(
                "in process, we run a single instance",
                "2026-01-01T10:01:00Z",
            ),
            assistant(
                json!([{"type": "text", "text": "Done."}]),
                "2026-01-01T10:02:00Z",
            ),
        ],
    );
    let s = read_file(&path, &sanitizer()).unwrap();
    assert_eq!(s.turns.len(), 2);
    assert!(s.turns[0].questions.is_empty());
    let q = &s.turns[1].questions;
    assert_eq!(q.len(), 1, "{q:?}");
    assert!(q[0].question.contains("Redis or in process memory?"));
    assert_eq!(q[0].options, ["Redis", "in process"]);
    assert_eq!(q[0].answer, "in process, we run a single instance");
    assert_eq!(s.turns[1].final_report.as_deref(), Some("Done."));
}

#[test]
fn numbered_options_before_the_question_are_its_options_with_their_notes() {
    let tmp = tempfile::tempdir().unwrap();
    let report = "The field is computed but never shown.\n\n**Options:**\n1. **Remove it** - dead code\n2. **Show it in the preview** - tells users why\n3. **Log it** — for an audit trail\n\nWould you like me to remove it or make it useful?";
    let path = write(
        tmp.path(),
        &[
            user("review the cleanup code", "2026-01-01T10:00:00Z"),
            assistant(
                json!([{"type": "text", "text": report}]),
                "2026-01-01T10:00:05Z",
            ),
            user("3", "2026-01-01T10:01:00Z"),
        ],
    );
    let s = read_file(&path, &sanitizer()).unwrap();
    let q = &s.turns[1].questions;
    assert_eq!(q.len(), 1, "{q:?}");
    assert_eq!(
        q[0].options,
        ["Remove it", "Show it in the preview", "Log it"]
    );
    assert_eq!(
        q[0].option_notes,
        ["dead code", "tells users why", "for an audit trail"]
    );
    // A bulleted summary before a question is no list of options.
    let report = "Done:\n- added the flag\n- updated docs\n\nAnything else to adjust?";
    let path = write(
        tmp.path(),
        &[
            user("add the flag", "2026-01-01T10:00:00Z"),
            assistant(
                json!([{"type": "text", "text": report}]),
                "2026-01-01T10:00:05Z",
            ),
            user("now explain the flag", "2026-01-01T10:01:00Z"),
        ],
    );
    let s = read_file(&path, &sanitizer()).unwrap();
    assert!(s.turns[1].questions[0].options.is_empty());
}

#[test]
fn garbled_lines_are_counted_and_skipped() {
    let tmp = tempfile::tempdir().unwrap();
    let path = write(
        tmp.path(),
        &[
            "{not json\n".to_owned(),
            user("fix the build", "2026-01-01T10:00:00Z"),
            "[1,2,3]\n".to_owned(),
            "\n".to_owned(),
            line(json!({"type": "mystery", "payload": 1})),
            assistant(
                json!([{"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "make"}}]),
                "2026-01-01T10:00:01Z",
            ),
            result("t1", "ok", json!({"stdout": "ok"}), "2026-01-01T10:00:02Z"),
            "{\"type\":\"assistant\",\"message\":{\"content\":[{\"type\":\"te".to_owned(),
        ],
    );
    let s = read_file(&path, &sanitizer()).unwrap();
    assert_eq!(s.stats.skipped, 3);
    assert_eq!(s.stats.lines, 7);
    assert_eq!(s.turns.len(), 1);
    assert_eq!(
        s.turns[0].tool_calls[0].result,
        Some(json!({"stdout": "ok"}))
    );
}

#[test]
fn privacy_rules_apply_before_anything_leaves_the_reader() {
    let secret = "ghp_0123456789abcdefABCDEF0123456789abcd";
    let tmp = tempfile::tempdir().unwrap();
    let path = write(
        tmp.path(),
        &[
            user(
                &format!(
                    "deploy with token {secret} <private>the launch code is 0000</private> now"
                ),
                "2026-01-01T10:00:00Z",
            ),
            assistant(
                json!([{"type": "text", "text": format!("Using {secret}. <private>hidden plan</private>")},
                       {"type": "tool_use", "id": "t1", "name": "Read", "input": {"file_path": "/p/.env"}}]),
                "2026-01-01T10:00:01Z",
            ),
            result(
                "t1",
                "DB_PASSWORD=hunter2-very-secret",
                json!({"file": {"content": "DB_PASSWORD=hunter2-very-secret"}}),
                "2026-01-01T10:00:02Z",
            ),
            assistant(
                json!([{"type": "tool_use", "id": "t2", "name": "Bash", "input": {"command": format!("curl -H 'Authorization: token {secret}' x")}}]),
                "2026-01-01T10:00:03Z",
            ),
            result(
                "t2",
                secret,
                json!({"stdout": secret}),
                "2026-01-01T10:00:04Z",
            ),
            assistant(
                json!([{"type": "text", "text": "<private>all private</private>"}]),
                "2026-01-01T10:00:05Z",
            ),
        ],
    );
    let s = read_file(&path, &sanitizer()).unwrap();
    let text = all_text(&s);
    for leak in [
        secret,
        "launch code",
        "hidden plan",
        "hunter2",
        "all private",
    ] {
        assert!(!text.contains(leak), "{leak} leaked: {text}");
    }
    let t = &s.turns[0];
    assert!(t.prompt.as_deref().unwrap().contains("[REDACTED"));
    assert!(t.tool_calls[0].withheld.is_some());
    assert_eq!(t.tool_calls[0].result, None);
}

#[test]
fn a_batch_finds_its_turn_by_tool_ids_then_by_prompt() {
    let s = read(LONG);
    let id = s.turns[2].tool_calls[3].id.clone();
    let ids = [id];
    let by_id = turn_for(
        &s,
        &Wanted {
            tool_use_ids: &ids,
            prompt: None,
            prompt_number: 1,
        },
    );
    assert_eq!(by_id.map(|t| t.origin), Some(Origin::Compaction));
    let by_prompt = turn_for(
        &s,
        &Wanted {
            tool_use_ids: &[],
            prompt: Some("did you push?"),
            prompt_number: 4,
        },
    );
    assert_eq!(
        by_prompt.and_then(|t| t.prompt.as_deref()),
        Some("did you push?")
    );
    let unknown = turn_for(
        &s,
        &Wanted {
            tool_use_ids: &["toolu_nowhere".to_owned()],
            prompt: Some("never asked"),
            prompt_number: 2,
        },
    );
    assert!(unknown.is_none());
}

#[test]
fn inline_subagent_lines_add_calls_but_no_turns_or_words() {
    let side = |mut v: serde_json::Value| {
        v["isSidechain"] = json!(true);
        line(v)
    };
    let tmp = tempfile::tempdir().unwrap();
    let path = write(
        tmp.path(),
        &[
            user("find the flaky test", "2026-01-01T10:00:00Z"),
            side(
                json!({"type": "user", "message": {"content": "Search the test suite for sleeps"}}),
            ),
            side(json!({"type": "assistant", "message": {"content": [
                {"type": "text", "text": "subagent musing"},
                {"type": "tool_use", "id": "s1", "name": "Grep", "input": {"pattern": "sleep"}}]}})),
            side(json!({"type": "user", "message": {"content": [
                {"type": "tool_result", "tool_use_id": "s1", "content": "a_test.rs"}]}})),
            assistant(
                json!([{"type": "text", "text": "The sleep in a_test.rs is the culprit."}]),
                "2026-01-01T10:00:09Z",
            ),
        ],
    );
    let s = read_file(&path, &sanitizer()).unwrap();
    assert_eq!(s.turns.len(), 1);
    let t = &s.turns[0];
    assert_eq!(t.tool_calls.len(), 1);
    assert!(t.tool_calls[0].result.is_some());
    assert!(t.notes.is_empty());
    assert_eq!(
        t.final_report.as_deref(),
        Some("The sleep in a_test.rs is the culprit.")
    );
}
