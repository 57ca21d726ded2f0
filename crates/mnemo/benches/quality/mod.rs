//! The memory-quality harness, shared by `benches/quality.rs` and the smoke
//! test (and the Codex replay's hooks and worker): replay real Claude Code transcripts through the real hooks and
//! worker, then score what was stored against the transcripts' own ground
//! truth, ask the question set, read the session-start index, and print a
//! table (and, on request, the stored text for a human to read).
//!
//! - `transcript`: our reader of the transcripts (hook steps, ground truth);
//! - `replay`: the hooks and the worker, in a temp data dir and project;
//! - `memory`: the stored records, read from SQLite;
//! - `score`: the scores and their matching rules;
//! - `questions`: the question set against mnemo search and a BM25 baseline;
//! - `render`: the report as tables and the dump files.
#![allow(dead_code)]

pub mod memory;
pub mod questions;
mod render;
pub mod replay;
pub mod score;
pub mod transcript;

use std::path::{Path, PathBuf};
use std::process::Stdio;

use memory::Memory;
use questions::{Question, Ranked};
use replay::Replay;
use score::Scores;

/// Where the question sets live: `<project>.json`, named after the
/// directory of the project's transcripts.
pub const QUESTION_DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/benches/quality/questions");

/// The spotter question set (the smoke test's).
pub const QUESTIONS: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/benches/quality/questions/spotter.json"
);

/// The question set of the project whose transcripts are in `dir` (none
/// when there is no `<dir name>.json`).
pub fn questions_for(dir: &Path) -> Vec<Question> {
    let Some(name) = dir.file_name().and_then(|n| n.to_str()) else {
        return Vec::new();
    };
    let path = Path::new(QUESTION_DIR).join(format!("{name}.json"));
    match std::fs::read_to_string(&path) {
        Ok(text) => questions::load(&text),
        Err(_) => Vec::new(),
    }
}

/// The project directories under `root`: each subdirectory holding
/// `*.jsonl` transcripts, sorted.
pub fn projects_in(root: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(root)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.is_dir() && !transcripts_in(p).is_empty())
        .collect();
    out.sort();
    out
}

pub struct Report {
    pub replay: Replay,
    pub memory: Memory,
    pub scores: Scores,
    pub ranked: Vec<Ranked>,
    pub index: String,
    pub index_checks: IndexChecks,
}

/// Simple checks of the index a new session receives.
#[derive(Debug, Default)]
pub struct IndexChecks {
    pub chars: usize,
    /// Of the last three sessions, how many the index names by their first
    /// typed prompt (its first 24 characters).
    pub recent_named: (usize, usize),
    /// Sentences of the last three sessions' final reports (the last
    /// assistant text of each session) that leave work open
    /// ([`score::leaves_work_open`]), and how many the index covers (half
    /// their [`score::significant_words`] or more).
    pub open_items: (usize, usize),
}

/// The `*.jsonl` files directly in `dir`, sorted.
pub fn transcripts_in(dir: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "jsonl") && p.is_file())
        .collect();
    out.sort();
    out
}

pub fn run(
    bin: &Path,
    transcripts: &[PathBuf],
    questions: &[Question],
    worker: replay::Worker,
) -> Report {
    let replay = replay::run(bin, transcripts, worker);
    let memory = Memory::load(&replay.db()).expect("read the stored memory");
    let scores = score::score(&replay.sessions, &memory);
    let ranked = questions::rank_all(&replay, &memory, questions);
    let index = context(&replay);
    let index_checks = check_index(&replay, &index);
    Report {
        replay,
        memory,
        scores,
        ranked,
        index,
        index_checks,
    }
}

fn context(replay: &Replay) -> String {
    let out = replay
        .mnemo()
        .args(["context", "--project"])
        .arg(replay.project())
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
        .expect("run mnemo context");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn check_index(replay: &Replay, index: &str) -> IndexChecks {
    let lower = index.to_lowercase();
    let recent: Vec<_> = replay.sessions.iter().rev().take(3).collect();
    let named = recent
        .iter()
        .filter(|s| {
            score::typed_prompts(s).next().is_some_and(|p| {
                let head: String = p.chars().take(24).collect();
                lower.contains(&head.to_lowercase())
            })
        })
        .count();
    let mut open = (0, 0);
    for s in &recent {
        let last_report = s
            .turns
            .iter()
            .rev()
            .find(|t| !t.final_text.trim().is_empty());
        if let Some(t) = last_report {
            for sentence in t.final_text.split(['.', '\n']) {
                if !score::leaves_work_open(sentence) {
                    continue;
                }
                let words = score::significant_words(sentence);
                let found = words.iter().filter(|w| lower.contains(w.as_str())).count();
                open.1 += 1;
                if found >= 1 && found * 2 >= words.len() {
                    open.0 += 1;
                }
            }
        }
    }
    IndexChecks {
        chars: index.chars().count(),
        recent_named: (named, recent.len()),
        open_items: open,
    }
}
