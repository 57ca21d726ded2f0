//! Gemini CLI sessions kept with their why: replays chat recordings made
//! with the real `gemini` binary through the real `mnemo hook gemini` and
//! the real worker, and shows what each turn's summary and observations
//! say, and how many of the model's stated reasons they carry.
//!
//! ```text
//! cargo bench --profile dev -p mnemo --bench gemini_replay
//! MNEMO_GEMINI_RECORDINGS=dir …   # another directory of session-*.jsonl / *.jsonl
//! MNEMO_BENCH_BIN=path …          # another mnemo binary (a build of main: the baseline)
//! ```
//!
//! The default recordings are the ones in
//! `crates/mnemo-transcript/tests/fixtures/gemini`. Each becomes the hooks
//! Gemini CLI sends (SessionStart; per turn BeforeAgent, AfterTool per call
//! with its output, AfterAgent with the final answer; no call ids, as
//! Gemini sends none), with `transcript_path` a copy of the recording whose
//! paths point into the replay's project.
//!
//! Scores, as `codex_replay` counts them for Codex: the model's words
//! before its calls (the notes the reader yields) whose first sentence some
//! observation or summary of the session keeps; the files its writes and
//! edits modified that an observation of the session keeps; and the share
//! of those files each turn's summary names (mean over turns that modified
//! files).

#[path = "quality/mod.rs"]
mod quality;
#[allow(dead_code)]
mod support;

use std::path::{Path, PathBuf};

use mnemo_core::config::Config;
use mnemo_core::privacy::Sanitizer;
use mnemo_transcript::{Session, ToolCall, Turn, read_gemini};
use quality::replay::{Replay, drain_and_stop, run_host_hook, start_worker};
use serde_json::{Value, json};

/// The project directory the recordings were scrubbed to.
const RECORDED_PROJECT: &str = "/home/dev/projects/limiter";

fn main() {
    let Some((bin, _)) = support::settings(1) else {
        return;
    };
    let dir = std::env::var_os("MNEMO_GEMINI_RECORDINGS")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../mnemo-transcript/tests/fixtures/gemini")
        });
    let mut recordings: Vec<PathBuf> = std::fs::read_dir(&dir)
        .map(|d| d.filter_map(|e| e.ok().map(|e| e.path())).collect())
        .unwrap_or_default();
    recordings.retain(|p| p.extension().is_some_and(|x| x == "jsonl"));
    recordings.sort();
    println!(
        "gemini_replay: {} recordings from {}",
        recordings.len(),
        dir.display()
    );
    let mut replay = Replay::new(&bin);
    let sessions: Vec<Session> = recordings
        .iter()
        .map(|r| replay_recording(&mut replay, r))
        .collect();
    drain_and_stop(&replay, start_worker(&replay));
    for bad in &replay.bad_hooks {
        println!("gemini_replay: hook misbehaved: {bad}");
    }
    report(&replay, &sessions);
}

/// Copies the recording with the replay's project in place of the recorded
/// one, reads it, and runs the hooks Gemini CLI would have; the session as
/// read.
fn replay_recording(replay: &mut Replay, recording: &Path) -> Session {
    let project = replay.project().to_string_lossy().into_owned();
    let text = std::fs::read_to_string(recording).expect("recording text");
    let copy = replay
        .dir
        .path()
        .join(recording.file_name().expect("a file"));
    std::fs::write(&copy, text.replace(RECORDED_PROJECT, &project)).expect("copy the recording");
    let sanitizer = Sanitizer::new(&Config::default().privacy);
    let session = read_gemini(&copy, &sanitizer).expect("read the copy");
    let base = json!({
        "session_id": session.session_id,
        "cwd": project,
        "transcript_path": copy.to_string_lossy(),
        "timestamp": "2026-11-28T00:00:00.000Z",
    });
    hook(replay, &base, "SessionStart", json!({"source": "startup"}));
    for turn in &session.turns {
        replay_turn(replay, &base, turn);
    }
    hook(replay, &base, "SessionEnd", json!({"reason": "exit"}));
    session
}

fn replay_turn(replay: &mut Replay, base: &Value, turn: &Turn) {
    let prompt = turn.prompt.clone().unwrap_or_default();
    hook(replay, base, "BeforeAgent", json!({ "prompt": prompt }));
    for call in &turn.tool_calls {
        hook(replay, base, "AfterTool", tool_fields(call));
    }
    let answer = turn.final_report.clone().unwrap_or_default();
    hook(
        replay,
        base,
        "AfterAgent",
        json!({"prompt": prompt, "prompt_response": answer, "stop_hook_active": false}),
    );
}

fn hook(replay: &mut Replay, base: &Value, event: &str, fields: Value) {
    let mut payload = base.clone();
    payload["hook_event_name"] = json!(event);
    if let (Value::Object(into), Value::Object(from)) = (&mut payload, fields) {
        into.extend(from);
    }
    run_host_hook(replay, "gemini", &payload);
}

/// A call as Gemini's AfterTool gives it: no id, `tool_response` as the
/// reader keeps it (`llmContent`, and `returnDisplay.isNewFile` for a
/// write), or an `error`.
fn tool_fields(call: &ToolCall) -> Value {
    let response = match &call.error {
        Some(error) => json!({"llmContent": error, "error": {"message": error}}),
        None => call
            .result
            .clone()
            .unwrap_or_else(|| json!({"llmContent": ""})),
    };
    json!({"tool_name": call.name, "tool_input": call.input, "tool_response": response})
}

const SESSION_MEMORY: &str = "SELECT coalesce((SELECT group_concat(o.title || ' ' || o.narrative
         || ' ' || o.facts, '\n') FROM observations o JOIN sessions s ON s.id = o.session_id
         WHERE s.platform_session_id = ?1), '') || '\n' ||
     coalesce((SELECT group_concat(m.request || ' ' || m.learned || ' ' || m.completed || ' '
         || m.notes, '\n') FROM summaries m JOIN sessions s ON s.id = m.session_id
         WHERE s.platform_session_id = ?1), '')";
const TURN_SUMMARIES: &str = "SELECT m.prompt_number, 'request: ' || m.request
         || '\n  completed: ' || m.completed || '\n  learned: ' || m.learned
         || '\n  notes: ' || m.notes
     FROM summaries m JOIN sessions s ON s.id = m.session_id
     WHERE s.platform_session_id = ?1 ORDER BY m.prompt_number";

const KEPT_FILES: &str = "SELECT group_concat(o.files_modified, '\n') FROM observations o
     JOIN sessions s ON s.id = o.session_id WHERE s.platform_session_id = ?1";
const TURN_SUMMARY: &str = "SELECT coalesce(group_concat(m.request || ' ' || m.investigated || ' '
         || m.learned || ' ' || m.completed || ' ' || m.next_steps || ' ' || m.notes, '\n'), '')
     FROM summaries m JOIN sessions s ON s.id = m.session_id
     WHERE s.platform_session_id = ?1 AND m.prompt_number = ?2";

/// Files kept (hit, total) and files named by their turn's summary (sum of
/// per-turn shares, turns).
#[derive(Default)]
struct FileScores {
    kept: (usize, usize),
    named: (f64, usize),
}

/// What the sessions' writes and edits modified, against what the memory
/// keeps of them.
fn file_scores(db: &rusqlite::Connection, sessions: &[Session]) -> FileScores {
    let mut s = FileScores::default();
    for session in sessions {
        let kept: String = db
            .query_row(KEPT_FILES, [&session.session_id], |r| {
                r.get::<_, Option<String>>(0)
            })
            .ok()
            .flatten()
            .unwrap_or_default();
        for (i, turn) in session.turns.iter().enumerate() {
            let files = modified(turn);
            if files.is_empty() {
                continue;
            }
            let number = i as i64 + 1;
            let summary: String = db
                .query_row(
                    TURN_SUMMARY,
                    rusqlite::params![session.session_id, number],
                    |r| r.get(0),
                )
                .unwrap_or_default();
            s.kept.1 += files.len();
            s.kept.0 += files.iter().filter(|f| kept.contains(f.as_str())).count();
            let named = files
                .iter()
                .filter(|f| summary.contains(file_name(f)))
                .count();
            s.named.0 += named as f64 / files.len() as f64;
            s.named.1 += 1;
        }
    }
    s
}

/// The files a turn's successful writes and edits modified.
fn modified(turn: &Turn) -> Vec<String> {
    let mut files: Vec<String> = Vec::new();
    let changes = turn.tool_calls.iter().filter(|c| c.error.is_none());
    for call in changes.filter(|c| matches!(c.name.as_str(), "Write" | "Edit")) {
        if let Some(path) = call.input["file_path"].as_str()
            && !files.iter().any(|f| f == path)
        {
            files.push(path.to_owned());
        }
    }
    files
}

fn file_name(path: &str) -> &str {
    path.rsplit(['/', '\\']).next().unwrap_or(path)
}

/// Per session: each turn's summary, and the stated reasons kept.
fn report(replay: &Replay, sessions: &[Session]) {
    let db = replay.db();
    let (mut kept, mut stated) = (0, 0);
    for session in sessions {
        let memory: String = db
            .query_row(SESSION_MEMORY, [&session.session_id], |r| r.get(0))
            .unwrap_or_default();
        let reasons: Vec<String> = session
            .turns
            .iter()
            .flat_map(|t| &t.notes)
            .filter(|n| n.before_tool_use_id.is_some())
            .map(|n| first_sentence(&n.text))
            .collect();
        stated += reasons.len();
        for reason in &reasons {
            let found = memory.contains(reason.as_str());
            kept += usize::from(found);
            println!(
                "- said before a call ({}): {reason}",
                if found { "kept" } else { "missing" }
            );
        }
        let mut stmt = db.prepare(TURN_SUMMARIES).expect("a valid query");
        let rows = stmt
            .query_map([&session.session_id], |r| {
                Ok((r.get::<_, i64>(0)?, r.get::<_, String>(1)?))
            })
            .expect("rows");
        for (number, summary) in rows.filter_map(Result::ok) {
            println!("turn {number} summary:\n  {summary}");
        }
    }
    let files = file_scores(&db, sessions);
    let pct = |a: f64, b: usize| if b == 0 { 100.0 } else { 100.0 * a / b as f64 };
    println!("\n| measure | value |\n|---|---|");
    println!("| words said before a call that the memory keeps | {kept}/{stated} |");
    println!(
        "| files modified kept | {}/{} |",
        files.kept.0, files.kept.1
    );
    println!(
        "| files named by their turn's summary | {:.0}% of {} turns |",
        pct(files.named.0, files.named.1),
        files.named.1
    );
}

/// The text up to its first full stop, without it (at most 80 bytes).
fn first_sentence(text: &str) -> String {
    let end = text.find(". ").unwrap_or(text.len());
    let sentence = text[..end].trim_end_matches('.');
    let mut cut = sentence.len().min(80);
    while !sentence.is_char_boundary(cut) {
        cut -= 1;
    }
    sentence[..cut].to_owned()
}
