//! Retrieval quality beside two baselines computed in the same run over the
//! same records: a plain BM25 (every record's text in one field, the
//! question's words ORed; `quality::questions::Baseline`) and the same BM25
//! with English stop words dropped from the question. Each dataset yields,
//! per question, the 1-based rank of the first relevant record in each
//! ranking (None past [`DEPTH`]); [`Table`] turns those into MRR and
//! recall@1/3/10.
//!
//! - `transcripts`: real Claude Code sessions replayed through the real
//!   hooks and worker (`quality::replay`), one store per project, questions
//!   recognised by content (`quality::questions`);
//! - `devmembench`: DevMemBench's sessions and questions (opencode-memory,
//!   MIT), read from a directory given by `MNEMO_DEVMEMBENCH`, a record
//!   relevant when it comes from one of the question's evidence sessions;
//! - `locomo`: LoCoMo's long two-person conversations (snap-research, ACL
//!   2024, not MIT), read from the path in `MNEMO_LOCOMO`, a record
//!   relevant when it holds one of the question's evidence turns; figures
//!   overall and per question category.

pub mod devmembench;
pub mod locomo;
pub mod transcripts;

use super::quality::questions::Baseline;

/// How deep every ranking is read.
pub use super::quality::questions::DEPTH;

/// The ranks of one question's first relevant record in each ranking.
#[derive(Debug, Clone, Default)]
pub struct Ranks {
    pub question: String,
    pub mnemo: Option<usize>,
    pub bm25: Option<usize>,
    pub bm25_stop: Option<usize>,
}

/// Ranks of the first id in `ids` that `relevant` accepts (1-based).
pub fn first_relevant(ids: &[String], relevant: impl Fn(&str) -> bool) -> Option<usize> {
    ids.iter().position(|id| relevant(id)).map(|p| p + 1)
}

/// Both baselines over one set of records.
pub struct Baselines {
    plain: Baseline,
}

impl Baselines {
    pub fn new(docs: &[(String, String)]) -> Baselines {
        Baselines {
            plain: Baseline::new(docs),
        }
    }

    /// Plain BM25: every word of the question, ORed.
    pub fn plain(&self, question: &str) -> Vec<String> {
        self.plain.search(question)
    }

    /// The same BM25 with the question's stop words dropped (all of them
    /// kept when nothing else is left).
    pub fn without_stop_words(&self, question: &str) -> Vec<String> {
        let kept: Vec<&str> = question
            .split(|c: char| !c.is_alphanumeric())
            .filter(|w| !w.is_empty() && !ENGLISH_STOP_WORDS.contains(&w.to_lowercase().as_str()))
            .collect();
        if kept.is_empty() {
            return self.plain(question);
        }
        self.plain.search(&kept.join(" "))
    }
}

/// A common English stop-word list (articles, pronouns, auxiliaries,
/// prepositions, conjunctions, question words), independent of mnemo's own.
const ENGLISH_STOP_WORDS: &[&str] = &[
    "a",
    "about",
    "above",
    "after",
    "again",
    "against",
    "all",
    "am",
    "an",
    "and",
    "any",
    "are",
    "as",
    "at",
    "be",
    "because",
    "been",
    "before",
    "being",
    "below",
    "between",
    "both",
    "but",
    "by",
    "can",
    "could",
    "did",
    "do",
    "does",
    "doing",
    "down",
    "during",
    "each",
    "few",
    "for",
    "from",
    "further",
    "had",
    "has",
    "have",
    "having",
    "he",
    "her",
    "here",
    "hers",
    "herself",
    "him",
    "himself",
    "his",
    "how",
    "i",
    "if",
    "in",
    "into",
    "is",
    "it",
    "its",
    "itself",
    "just",
    "me",
    "more",
    "most",
    "my",
    "myself",
    "no",
    "nor",
    "not",
    "now",
    "of",
    "off",
    "on",
    "once",
    "only",
    "or",
    "other",
    "our",
    "ours",
    "ourselves",
    "out",
    "over",
    "own",
    "same",
    "she",
    "should",
    "so",
    "some",
    "such",
    "than",
    "that",
    "the",
    "their",
    "theirs",
    "them",
    "themselves",
    "then",
    "there",
    "these",
    "they",
    "this",
    "those",
    "through",
    "to",
    "too",
    "under",
    "until",
    "up",
    "very",
    "was",
    "we",
    "were",
    "what",
    "when",
    "where",
    "which",
    "while",
    "who",
    "whom",
    "why",
    "will",
    "with",
    "would",
    "you",
    "your",
    "yours",
    "yourself",
    "yourselves",
    "s",
    "t",
    "don",
    "didn",
    "doesn",
    "isn",
    "wasn",
    "couldn",
    "ll",
    "ve",
    "re",
    "d",
    "m",
];

/// Which ranking's rank of a question a table column shows.
type Pick = fn(&Ranks) -> Option<usize>;

/// One dataset's figures: MRR and recall@1/3/10 of each ranking.
pub struct Table {
    pub dataset: String,
    pub ranks: Vec<Ranks>,
}

impl Table {
    /// The questions mnemo ranks below the better baseline (for reading
    /// with `MNEMO_RETRIEVAL_VERBOSE=1`).
    pub fn losses(&self) -> String {
        let key = |r: Option<usize>| r.unwrap_or(DEPTH + 1);
        let mut out = String::new();
        for r in &self.ranks {
            let best = key(r.bm25).min(key(r.bm25_stop));
            if key(r.mnemo) > best {
                out.push_str(&format!(
                    "  {}: mnemo {:?}, bm25 {:?}, bm25 without stop words {:?}: {}\n",
                    self.dataset, r.mnemo, r.bm25, r.bm25_stop, r.question
                ));
            }
        }
        out
    }

    pub fn markdown(&self) -> String {
        let n = self.ranks.len();
        let mut out = format!(
            "{} ({n} questions)\n\n| ranking | MRR | R@1 | R@3 | R@10 |\n|---|---|---|---|---|\n",
            self.dataset
        );
        let rows: [(&str, Pick); 3] = [
            ("plain BM25 (one field, OR)", |r| r.bm25),
            ("BM25 without stop words", |r| r.bm25_stop),
            ("mnemo search", |r| r.mnemo),
        ];
        for (name, pick) in rows {
            let col: Vec<Option<usize>> = self.ranks.iter().map(pick).collect();
            let m = Metrics::of(&col);
            out.push_str(&format!(
                "| {name} | {:.3} | {:.3} | {:.3} | {:.3} |\n",
                m.mrr, m.r1, m.r3, m.r10
            ));
        }
        out
    }
}

/// Mean reciprocal rank (0 past [`DEPTH`]) and recall at 1, 3 and 10.
pub struct Metrics {
    pub mrr: f64,
    pub r1: f64,
    pub r3: f64,
    pub r10: f64,
}

impl Metrics {
    pub fn of(ranks: &[Option<usize>]) -> Metrics {
        let n = ranks.len().max(1) as f64;
        let within =
            |k: usize| ranks.iter().filter(|r| r.is_some_and(|r| r <= k)).count() as f64 / n;
        let mrr = ranks
            .iter()
            .map(|r| r.map_or(0.0, |r| 1.0 / r as f64))
            .sum::<f64>()
            / n;
        Metrics {
            mrr,
            r1: within(1),
            r3: within(3),
            r10: within(10),
        }
    }
}
