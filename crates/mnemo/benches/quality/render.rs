//! The report as text: the score table, the per-question ranks, and the
//! files `MNEMO_QUALITY_DUMP` writes for a human to read (the index, every
//! summary and observation title, the ground truth, each question's top
//! records).

use std::fmt::Write as _;
use std::path::Path;

use super::Report;
use super::questions;

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
            let decisions: Vec<_> = self.ranked.iter().filter(|r| r.decision).collect();
            let decisions_kept = decisions.iter().filter(|r| r.answerable).count();
            let _ = writeln!(
                t,
                "\n{} questions ({} have a matching record stored; decisions asked about kept: {}/{}):\n",
                self.ranked.len(),
                answerable,
                decisions_kept,
                decisions.len()
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
            self.set_rows(&mut t);
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

    /// One row per ranking and question batch, when there is more than one
    /// batch: a later batch scored apart shows whether a change generalises.
    fn set_rows(&self, t: &mut String) {
        let mut sets: Vec<&str> = self.ranked.iter().map(|r| r.set.as_str()).collect();
        sets.dedup();
        if sets.len() < 2 {
            return;
        }
        let pct = |v: f64| format!("{:.0}%", v * 100.0);
        for set in sets {
            let of_set = || self.ranked.iter().filter(move |r| r.set == set);
            let n = of_set().count();
            for (name, ranks) in [
                (
                    "mnemo search",
                    of_set().map(|r| r.mnemo).collect::<Vec<_>>(),
                ),
                ("plain BM25", of_set().map(|r| r.bm25).collect()),
            ] {
                let (top1, top3, mrr) = questions::summary(ranks.into_iter());
                let _ = writeln!(
                    t,
                    "| {name}, set {set} ({n}) | {} | {} | {mrr:.2} |",
                    pct(top1),
                    pct(top3)
                );
            }
        }
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
