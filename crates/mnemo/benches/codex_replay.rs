//! Codex sessions kept as well as Claude Code's: replays Codex rollouts
//! through the real `mnemo hook codex` and the real worker, and scores what
//! was kept against what the rollout shows happened.
//!
//! ```text
//! cargo bench --profile dev -p mnemo --bench codex_replay
//! MNEMO_CODEX_ROLLOUTS=dir …   # another directory of rollout-*.jsonl / *.jsonl
//! MNEMO_CODEX_QUESTIONS=file … # another question set (quality/questions format)
//! MNEMO_BENCH_BIN=path …       # another mnemo binary (a build of main: the baseline)
//! ```
//!
//! The default rollouts are the ones recorded with the real `codex` binary
//! in `crates/mnemo-transcript/tests/fixtures/codex` and the longer session
//! of `benches/quality/codex` (a small rate-limiter project, eight runs: a
//! multi-file patch after shell reads, a failing then passing test, a
//! choice the user stated, a question answered from the code, a refactor in
//! one patch that adds a package, deletes a file and renames a method, a
//! failing compile fixed, a choice stated with its reason, a message sent
//! later in the same session), whose questions
//! (`quality/questions/codex-limiter.json`, written before reading mnemo's
//! output) are asked of `mnemo search` and of a plain BM25 over the same
//! records, as in the quality bench. Each becomes the hooks
//! Codex sends (SessionStart; per turn UserPromptSubmit with its turn id,
//! PostToolUse per call with its output, Stop), with `transcript_path` a
//! copy of the rollout whose working directory is the replay's project.
//!
//! Scores: files a turn's patches modified that some observation of the
//! session lists (target ≥ 98%); the share of a turn's modified files its
//! summary names (≥ 85%); searches that found nothing (exit 1) stored or told
//! as failures (0); shell reads titled as runs (0).

#[path = "quality/mod.rs"]
mod quality;
#[allow(dead_code)]
mod support;

use std::path::{Path, PathBuf};

use mnemo_core::config::Config;
use mnemo_core::privacy::Sanitizer;
use mnemo_core::shell;
use mnemo_transcript::{Session, ToolCall, read_rollout};
use quality::replay::{Replay, drain_and_stop, run_host_hook, start_worker};
use serde_json::{Value, json};

fn main() {
    let Some((bin, _)) = support::settings(1) else {
        return;
    };
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dirs = match std::env::var_os("MNEMO_CODEX_ROLLOUTS") {
        Some(dir) => vec![PathBuf::from(dir)],
        None => vec![
            manifest.join("../mnemo-transcript/tests/fixtures/codex"),
            manifest.join("benches/quality/codex"),
        ],
    };
    let mut rollouts: Vec<PathBuf> = Vec::new();
    for dir in &dirs {
        let mut found: Vec<PathBuf> = std::fs::read_dir(dir)
            .map(|d| d.filter_map(|e| e.ok().map(|e| e.path())).collect())
            .unwrap_or_default();
        found.retain(|p| p.extension().is_some_and(|x| x == "jsonl"));
        found.sort();
        println!(
            "codex_replay: {} rollouts from {}",
            found.len(),
            dir.display()
        );
        rollouts.extend(found);
    }
    let mut replay = Replay::new(&bin);
    let sessions: Vec<Session> = rollouts
        .iter()
        .map(|r| replay_rollout(&mut replay, r))
        .collect();
    drain_and_stop(&replay, start_worker(&replay));
    for bad in &replay.bad_hooks {
        println!("codex_replay: hook misbehaved: {bad}");
    }
    print_scores(&score(&replay, &sessions));
    ask_questions(&replay);
}

/// The question set asked of mnemo and of BM25, and the decision records.
fn ask_questions(replay: &Replay) {
    let path = std::env::var_os("MNEMO_CODEX_QUESTIONS")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(quality::QUESTION_DIR).join("codex-limiter.json"));
    let Ok(text) = std::fs::read_to_string(&path) else {
        println!("codex_replay: no questions at {}", path.display());
        return;
    };
    let questions = quality::questions::load(&text);
    let memory = quality::memory::Memory::load(&replay.db()).expect("read the records");
    let ranked = quality::questions::rank_all(replay, &memory, &questions);
    let answerable = ranked.iter().filter(|r| r.answerable).count();
    println!(
        "\n{} questions ({answerable} have a matching record stored)\n",
        ranked.len()
    );
    println!("| ranking | top-1 | top-3 | MRR |\n|---|---:|---:|---:|");
    let row = |name: &str, (t1, t3, mrr): (f64, f64, f64)| {
        println!(
            "| {name} | {:.0}% | {:.0}% | {mrr:.2} |",
            100.0 * t1,
            100.0 * t3
        );
    };
    row(
        "mnemo search",
        quality::questions::summary(ranked.iter().map(|r| r.mnemo)),
    );
    row(
        "plain BM25 (FTS5, words ORed)",
        quality::questions::summary(ranked.iter().map(|r| r.bm25)),
    );
    println!("\n| question | mnemo | BM25 | answerable |\n|---|---:|---:|:---:|");
    let rank = |r: Option<usize>| r.map_or("–".to_owned(), |r| r.to_string());
    for r in &ranked {
        let yes = if r.answerable { "yes" } else { "no" };
        println!(
            "| {} | {} | {} | {yes} |",
            r.question,
            rank(r.mnemo),
            rank(r.bm25)
        );
    }
    print_decisions(&memory, &ranked);
}

/// Decision records, how many are decisions, and the decisions asked about
/// that a record keeps.
fn print_decisions(memory: &quality::memory::Memory, ranked: &[quality::questions::Ranked]) {
    let prompts: Vec<String> = memory.prompts.iter().map(|p| p.text.clone()).collect();
    let decisions: Vec<&str> = memory
        .observations
        .iter()
        .filter(|o| o.kind == "decision")
        .map(|o| o.title.as_str())
        .collect();
    let real = decisions
        .iter()
        .filter(|t| !quality::score::not_a_decision(t, &prompts))
        .count();
    let asked: Vec<_> = ranked.iter().filter(|r| r.decision).collect();
    let kept = asked.iter().filter(|r| r.answerable).count();
    println!(
        "\ndecision records: {} ({real} real decisions); decisions asked about and kept: {kept}/{}",
        decisions.len(),
        asked.len()
    );
    for title in decisions {
        println!("- decision: {title}");
    }
}

/// Copies the rollout with the project as its working directory, reads it,
/// and runs its hooks; the session as read.
fn replay_rollout(replay: &mut Replay, rollout: &Path) -> Session {
    let sanitizer = Sanitizer::new(&Config::default().privacy);
    let original = read_rollout(rollout, &sanitizer).expect("read the rollout");
    let project = replay.project().to_string_lossy().into_owned();
    let text = std::fs::read_to_string(rollout).expect("rollout text");
    let text = match original.cwd.as_deref() {
        Some(cwd) => text.replace(cwd, &project),
        None => text,
    };
    let copy = replay.dir.path().join(rollout.file_name().expect("a file"));
    std::fs::write(&copy, text).expect("copy the rollout");
    let session = read_rollout(&copy, &sanitizer).expect("read the copy");
    let base = json!({
        "session_id": session.session_id,
        "cwd": project,
        "transcript_path": copy.to_string_lossy(),
        "model": "gpt-5.5",
        "permission_mode": "bypassPermissions",
    });
    hook(replay, &base, "SessionStart", json!({"source": "startup"}));
    for turn in &session.turns {
        let id = turn.uuid.clone().unwrap_or_default();
        let prompt = turn.prompt.clone().unwrap_or_default();
        hook(
            replay,
            &base,
            "UserPromptSubmit",
            json!({"turn_id": id, "prompt": prompt}),
        );
        for call in &turn.tool_calls {
            hook(replay, &base, "PostToolUse", tool_fields(call, &id));
        }
        let last = turn.final_report.clone();
        let stop =
            json!({"turn_id": id, "stop_hook_active": false, "last_assistant_message": last});
        hook(replay, &base, "Stop", stop);
    }
    session
}

fn hook(replay: &mut Replay, base: &Value, event: &str, fields: Value) {
    let mut payload = base.clone();
    payload["hook_event_name"] = json!(event);
    if let (Value::Object(into), Value::Object(from)) = (&mut payload, fields) {
        into.extend(from);
    }
    run_host_hook(replay, "codex", &payload);
}

/// A call as Codex's PostToolUse gives it: its input, and its output text
/// (an error's too: Codex has no failure hook).
fn tool_fields(call: &ToolCall, turn_id: &str) -> Value {
    let response = call
        .result
        .as_ref()
        .and_then(Value::as_str)
        .map(str::to_owned)
        .or_else(|| call.error.clone())
        .unwrap_or_default();
    json!({
        "turn_id": turn_id,
        "tool_name": call.name,
        "tool_input": call.input,
        "tool_response": response,
        "tool_use_id": call.id,
    })
}

const KEPT_FILES: &str = "SELECT o.files_modified FROM observations o
     JOIN sessions s ON s.id = o.session_id WHERE s.platform_session_id = ?1";
const TURN_SUMMARY: &str = "SELECT m.request || ' ' || m.investigated || ' ' || m.learned || ' '
     || m.completed || ' ' || m.next_steps || ' ' || m.notes
     FROM summaries m JOIN sessions s ON s.id = m.session_id
     WHERE s.platform_session_id = ?1 AND m.prompt_number = ?2";
const EVENT_KINDS: &str = "SELECT kind FROM events WHERE tool_use_id = ?1";

#[derive(Default)]
struct Scores {
    files: (usize, usize),
    named: (f64, usize),
    miss_failures: (usize, usize),
    reads_as_runs: (usize, usize),
}

fn score(replay: &Replay, sessions: &[Session]) -> Scores {
    let db = replay.db();
    let mut s = Scores::default();
    for session in sessions {
        let kept = strings(&db, KEPT_FILES, [&session.session_id]).join("\n");
        for (i, turn) in session.turns.iter().enumerate() {
            let files = modified(turn.tool_calls.iter(), session.cwd.as_deref());
            let number = i as i64 + 1;
            let summary = strings(
                &db,
                TURN_SUMMARY,
                rusqlite::params![session.session_id, number],
            );
            let summary = summary.join("\n");
            s.files.1 += files.len();
            s.files.0 += files.iter().filter(|f| kept.contains(f.as_str())).count();
            if !files.is_empty() {
                let named = files
                    .iter()
                    .filter(|f| summary.contains(file_name(f)))
                    .count();
                s.named.0 += named as f64 / files.len() as f64;
                s.named.1 += 1;
            }
            for call in &turn.tool_calls {
                let command = call.input["command"].as_str().unwrap_or("");
                if call.name == "Bash" && call.error.is_some() && shell::is_no_match(command, 1) {
                    s.miss_failures.1 += 1;
                    let failed = strings(&db, EVENT_KINDS, [&call.id]);
                    s.miss_failures.0 += usize::from(failed.iter().any(|k| k == "tool_failure"));
                }
            }
        }
    }
    let titles = strings(&db, "SELECT title FROM observations", []);
    for title in &titles {
        let Some(command) = title
            .strip_prefix("Ran `")
            .and_then(|t| t.split('`').next())
        else {
            continue;
        };
        s.reads_as_runs.0 += usize::from(shell::is_read_only(command));
    }
    s.reads_as_runs.1 = titles.len();
    s
}

/// The files a turn's patches added, updated, deleted or moved to, absolute.
fn modified<'a>(calls: impl Iterator<Item = &'a ToolCall>, cwd: Option<&str>) -> Vec<String> {
    const HEADERS: &[&str] = &[
        "*** Add File: ",
        "*** Update File: ",
        "*** Delete File: ",
        "*** Move to: ",
    ];
    let mut files = Vec::new();
    for call in calls.filter(|c| c.error.is_none()) {
        let patch = call.input["command"].as_str().unwrap_or("");
        for line in patch.lines() {
            if let Some(path) = HEADERS.iter().find_map(|h| line.strip_prefix(h)) {
                let path = match cwd {
                    Some(cwd) if !path.starts_with('/') => format!("{cwd}/{}", path.trim()),
                    _ => path.trim().to_owned(),
                };
                if !files.contains(&path) {
                    files.push(path);
                }
            }
        }
    }
    files
}

fn file_name(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

/// The first column of a query's rows, as text.
fn strings<P: rusqlite::Params>(db: &rusqlite::Connection, sql: &str, params: P) -> Vec<String> {
    let mut stmt = db.prepare(sql).expect("a valid query");
    stmt.query_map(params, |r| r.get::<_, String>(0))
        .expect("rows")
        .filter_map(Result::ok)
        .collect()
}

fn print_scores(s: &Scores) {
    let pct = |a: f64, b: usize| if b == 0 { 100.0 } else { 100.0 * a / b as f64 };
    println!("| measure | value |");
    println!("|---|---|");
    println!(
        "| files modified kept | {}/{} ({:.0}%) |",
        s.files.0,
        s.files.1,
        pct(s.files.0 as f64, s.files.1)
    );
    println!(
        "| files named by their turn's summary | {:.0}% of {} turns |",
        pct(s.named.0, s.named.1),
        s.named.1
    );
    println!(
        "| searches with no match stored as failures | {}/{} |",
        s.miss_failures.0, s.miss_failures.1
    );
    println!(
        "| observation titles \"Ran\" a read-only command | {}/{} titles |",
        s.reads_as_runs.0, s.reads_as_runs.1
    );
}
