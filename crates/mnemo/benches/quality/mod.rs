//! The memory-quality harness, shared by `benches/quality.rs` and the smoke
//! test: replay real Claude Code transcripts through the real hooks and
//! worker, then score what was stored against the transcripts' own ground
//! truth, ask the question set, read the session-start index, and print a
//! table (and, on request, the stored text for a human to read).
//!
//! - `transcript`: our reader of the transcripts (hook steps, ground truth);
//! - `replay`: the hooks and the worker, in a temp data dir and project;
//! - `memory`: the stored records, read from SQLite;
//! - `score`: the scores and their matching rules;
//! - `questions`: the question set against mnemo search and a BM25 baseline.
#![allow(dead_code)]

pub mod memory;
pub mod questions;
pub mod replay;
pub mod score;
pub mod transcript;

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Stdio;

use memory::Memory;
use questions::{Question, Ranked};
use replay::Replay;
use score::Scores;

/// Where the question set lives.
pub const QUESTIONS: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/benches/quality/questions.json"
);

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

pub fn run(bin: &Path, transcripts: &[PathBuf], questions: &[Question]) -> Report {
    let replay = replay::run(bin, transcripts);
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

impl Report {
    /// The score table (markdown).
    pub fn table(&self) -> String {
        let mut t = String::new();
        let r = &self.replay;
        let (prompts, tools, stops) = r.sessions.iter().fold((0, 0, 0), |a, s| {
            let c = s.counts();
            (a.0 + c.0, a.1 + c.1, a.2 + c.2)
        });
        let _ = writeln!(
            t,
            "Replayed {} sessions: {} prompts, {} tool calls, {} stops ({} hooks, {} misbehaved); \
             stored {} sessions, {} prompts, {} tool events, {} turn ends ({} failed), \
             {} observations, {} summaries; worker drained in {:.1} s.\n",
            r.sessions.len(),
            prompts,
            tools,
            stops,
            r.hooks,
            r.bad_hooks.len(),
            self.memory.sessions,
            self.memory.prompts.len(),
            self.memory.tool_events,
            self.memory.turn_ends,
            self.memory.failed_events,
            self.memory.observations.len(),
            self.memory.summaries.len(),
            r.drain_time.as_secs_f64()
        );
        let _ = writeln!(t, "| score | value | cases | better |");
        let _ = writeln!(t, "|---|---:|---:|:---:|");
        for (name, share, higher) in self.scores.rows() {
            let value = share
                .value()
                .map_or("–".to_owned(), |v| format!("{:.0}%", v * 100.0));
            let better = if higher { "↑" } else { "↓" };
            let _ = writeln!(t, "| {name} | {value} | {} | {better} |", share.total);
        }
        if !self.ranked.is_empty() {
            let (m1, m3, mm) = questions::summary(self.ranked.iter().map(|r| r.mnemo));
            let (b1, b3, bm) = questions::summary(self.ranked.iter().map(|r| r.bm25));
            let answerable = self.ranked.iter().filter(|r| r.answerable).count();
            let _ = writeln!(
                t,
                "\n{} questions ({} have a matching record stored):\n",
                self.ranked.len(),
                answerable
            );
            let _ = writeln!(t, "| ranking | top-1 | top-3 | MRR |");
            let _ = writeln!(t, "|---|---:|---:|---:|");
            let pct = |v: f64| format!("{:.0}%", v * 100.0);
            let _ = writeln!(t, "| mnemo search | {} | {} | {mm:.2} |", pct(m1), pct(m3));
            let _ = writeln!(
                t,
                "| plain BM25 (FTS5, words ORed) | {} | {} | {bm:.2} |",
                pct(b1),
                pct(b3)
            );
        }
        let c = &self.index_checks;
        let _ = writeln!(
            t,
            "\nIndex (`mnemo context`): {} characters; names {}/{} of the last sessions by their \
             first prompt; covers {}/{} open items of their final reports.",
            c.chars, c.recent_named.0, c.recent_named.1, c.open_items.0, c.open_items.1
        );
        t
    }

    /// Per-question ranks (markdown).
    pub fn question_table(&self) -> String {
        let mut t =
            String::from("| question | mnemo | BM25 | answerable |\n|---|---:|---:|:---:|\n");
        let rank = |r: Option<usize>| r.map_or("–".to_owned(), |r| r.to_string());
        for r in &self.ranked {
            let _ = writeln!(
                t,
                "| {} | {} | {} | {} |",
                r.question,
                rank(r.mnemo),
                rank(r.bm25),
                if r.answerable { "yes" } else { "no" }
            );
        }
        t
    }

    /// What happened, turn by turn, as the transcripts say (the ground truth
    /// the scores compare with).
    pub fn ground_truth(&self) -> String {
        let mut t = String::new();
        for s in &self.replay.sessions {
            let _ = writeln!(t, "== session {} ({})", s.id, s.first_timestamp);
            for (i, turn) in s.turns.iter().enumerate() {
                let head: String = turn.prompt.chars().take(100).collect();
                let _ = writeln!(
                    t,
                    "turn {}: {:?}\n  tools: {}{}\n  modified: {:?}\n  commits: {:?}\n  final: {:?}",
                    turn.number,
                    head,
                    turn.tools.len(),
                    if turn.interrupted {
                        " (interrupted)"
                    } else {
                        ""
                    },
                    s.modified_files(i),
                    s.commits(i),
                    turn.final_text.chars().take(300).collect::<String>(),
                );
            }
            for q in s.questions() {
                let _ = writeln!(
                    t,
                    "question (turn {}): {:?} -> {:?}",
                    q.turn + 1,
                    q.asked,
                    q.answer
                );
            }
            for f in s.failures() {
                let _ = writeln!(
                    t,
                    "failure (turn {}): {:?} intent {:?} resolved {}",
                    f.turn + 1,
                    f.command.chars().take(80).collect::<String>(),
                    f.intent,
                    f.resolved
                );
            }
        }
        t
    }

    /// Each question's top three records in both rankings, first line of
    /// each, `*` marking the first one its matcher accepts.
    pub fn answers(&self) -> String {
        let mut t = String::new();
        for r in &self.ranked {
            let _ = writeln!(t, "== {}", r.question);
            for (name, ids, rank) in [
                ("mnemo", &r.mnemo_ids, r.mnemo),
                ("bm25", &r.bm25_ids, r.bm25),
            ] {
                let rank = rank.map_or("–".to_owned(), |r| r.to_string());
                let _ = writeln!(t, "  {name} (right record at {rank}):");
                for (i, id) in ids.iter().take(3).enumerate() {
                    let text = self.memory.record_text(id).unwrap_or_default();
                    let first: String = text
                        .lines()
                        .next()
                        .unwrap_or("")
                        .chars()
                        .take(140)
                        .collect();
                    let mark = if Some(i + 1) == r.mnemo && name == "mnemo"
                        || Some(i + 1) == r.bm25 && name == "bm25"
                    {
                        "*"
                    } else {
                        " "
                    };
                    let _ = writeln!(t, "   {mark}{id} {first}");
                }
            }
        }
        t
    }

    /// Writes the index, every summary and every observation title to `dir`
    /// for a human to read.
    pub fn dump(&self, dir: &Path) -> std::io::Result<()> {
        std::fs::create_dir_all(dir)?;
        std::fs::write(dir.join("index.txt"), &self.index)?;
        let mut sums = String::new();
        for s in &self.memory.summaries {
            let _ = writeln!(
                sums,
                "== S{} session {} turn {}\nrequest: {}\ninvestigated: {}\nlearned: {}\n\
                 completed: {}\nnext_steps: {}\nnotes: {}\n",
                s.id,
                &s.session[..8.min(s.session.len())],
                s.prompt_number,
                s.request,
                s.investigated,
                s.learned,
                s.completed,
                s.next_steps,
                s.notes
            );
        }
        std::fs::write(dir.join("summaries.txt"), sums)?;
        let mut obs = String::new();
        for o in &self.memory.observations {
            let _ = writeln!(
                obs,
                "#{} {} t{} [{}] {}",
                o.id,
                &o.session[..8.min(o.session.len())],
                o.prompt_number,
                o.kind,
                o.title
            );
        }
        std::fs::write(dir.join("observations.txt"), obs)?;
        std::fs::write(dir.join("ground_truth.txt"), self.ground_truth())?;
        std::fs::write(dir.join("questions.txt"), self.answers())?;
        std::fs::write(
            dir.join("scores.md"),
            self.table() + "\n" + &self.question_table(),
        )?;
        Ok(())
    }
}
