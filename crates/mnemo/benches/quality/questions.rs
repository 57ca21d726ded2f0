//! Questions a developer asks the next morning, in their own words
//! (`questions/<project>.json`), asked of `mnemo search --json` and of a plain BM25
//! baseline over the same records in the same run. A question's right
//! answer is recognised by content, not by id: the record's text must
//! contain every string of `all` and at least one of `any` (lowercase), so
//! the same set works on any version of mnemo. The user's own words (a
//! prompt, a summary's request) never count as the answer.

use std::process::Stdio;

use rusqlite::Connection;
use serde_json::Value;

use super::memory::Memory;
use super::replay::Replay;

/// How deep both rankings are read; a right record below this counts as missed.
pub const DEPTH: usize = 20;

#[derive(Debug, Clone)]
pub struct Question {
    pub q: String,
    pub all: Vec<String>,
    pub any: Vec<String>,
    /// It asks about a decision the user made.
    pub decision: bool,
    /// The batch it was written in (`set`; the first batch has none), so
    /// each batch is scored apart as well as together.
    pub set: String,
}

impl Question {
    pub fn matches(&self, text: &str) -> bool {
        let t = text.to_lowercase();
        self.all.iter().all(|w| t.contains(w.as_str()))
            && (self.any.is_empty() || self.any.iter().any(|w| t.contains(w.as_str())))
    }
}

#[derive(Debug, Clone)]
pub struct Ranked {
    pub question: String,
    /// 1-based rank of the first matching record, if within DEPTH.
    pub mnemo: Option<usize>,
    pub bm25: Option<usize>,
    /// Whether any stored record matches at all.
    pub answerable: bool,
    /// It asks about a decision the user made.
    pub decision: bool,
    /// The batch the question was written in.
    pub set: String,
    /// The ids each ranking returned, best first.
    pub mnemo_ids: Vec<String>,
    pub bm25_ids: Vec<String>,
}

/// Reads the question set (JSON: `{"questions": [{"q", "all", "any",
/// "decision", "why"}]}`).
pub fn load(text: &str) -> Vec<Question> {
    let v: Value = serde_json::from_str(text).expect("the question set parses");
    let words = |q: &Value, key: &str| -> Vec<String> {
        q[key]
            .as_array()
            .map(|a| {
                a.iter()
                    .filter_map(Value::as_str)
                    .map(str::to_lowercase)
                    .collect()
            })
            .unwrap_or_default()
    };
    v["questions"]
        .as_array()
        .expect("a `questions` array")
        .iter()
        .map(|q| Question {
            q: q["q"].as_str().expect("each question has `q`").to_owned(),
            all: words(q, "all"),
            any: words(q, "any"),
            decision: q["decision"].as_bool().unwrap_or(false),
            set: q["set"].as_str().unwrap_or("first").to_owned(),
        })
        .collect()
}

pub fn rank_all(replay: &Replay, memory: &Memory, questions: &[Question]) -> Vec<Ranked> {
    let baseline = Baseline::new(&memory.documents());
    questions
        .iter()
        .map(|q| {
            let first = |ids: &[String]| {
                ids.iter()
                    .position(|id| memory.answer_text(id).is_some_and(|t| q.matches(&t)))
                    .map(|p| p + 1)
            };
            let mnemo_ids = mnemo_search(replay, &q.q);
            for id in mnemo_ids
                .iter()
                .filter(|id| memory.record_text(id).is_none())
            {
                eprintln!(
                    "quality: search returned {id}, which the bench cannot read; it never matches"
                );
            }
            let bm25_ids = baseline.search(&q.q);
            Ranked {
                question: q.q.clone(),
                mnemo: first(&mnemo_ids),
                bm25: first(&bm25_ids),
                answerable: memory
                    .documents()
                    .iter()
                    .any(|(id, _)| memory.answer_text(id).is_some_and(|t| q.matches(&t))),
                decision: q.decision,
                set: q.set.clone(),
                mnemo_ids,
                bm25_ids,
            }
        })
        .collect()
}

/// Ids of `mnemo search --json -n DEPTH QUESTION`, run in the project.
pub fn mnemo_search(replay: &Replay, question: &str) -> Vec<String> {
    let out = replay
        .mnemo()
        .args(["search", "--json", "-n", &DEPTH.to_string(), question])
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
        .expect("run mnemo search");
    // A changed output shape must stop the bench, not score zero.
    let v: Value = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    let Some(hits) = v["hits"].as_array() else {
        panic!(
            "mnemo search --json {question:?} gave no `hits` array ({}): {}",
            out.status,
            String::from_utf8_lossy(&out.stdout)
        );
    };
    hits.iter()
        .map(|h| {
            h["ref"]
                .as_str()
                .or_else(|| h["id"].as_str())
                .map(str::to_owned)
                .unwrap_or_else(|| panic!("a search hit without a `ref` (#12, S3, P4): {h}"))
        })
        .collect()
}

/// (top-1 share, top-3 share, mean reciprocal rank) of a column of ranks.
pub fn summary(ranks: impl Iterator<Item = Option<usize>>) -> (f64, f64, f64) {
    let ranks: Vec<Option<usize>> = ranks.collect();
    let n = ranks.len().max(1) as f64;
    let within = |k: usize| ranks.iter().filter(|r| r.is_some_and(|r| r <= k)).count() as f64 / n;
    let mrr = ranks
        .iter()
        .map(|r| r.map_or(0.0, |r| 1.0 / r as f64))
        .sum::<f64>()
        / n;
    (within(1), within(3), mrr)
}

/// A plain BM25 over every record's concatenated text: FTS5 with the same
/// tokenizer as mnemo's indexes, `bm25()` with default weights, the
/// question's words ORed, in an in-memory SQLite.
pub struct Baseline {
    db: Connection,
}

impl Baseline {
    pub fn new(docs: &[(String, String)]) -> Baseline {
        let db = Connection::open_in_memory().expect("in-memory SQLite");
        db.execute_batch(
            "CREATE VIRTUAL TABLE docs USING fts5(id UNINDEXED, body,
                 tokenize='porter unicode61 remove_diacritics 2')",
        )
        .expect("create FTS5 table");
        let mut insert = db
            .prepare("INSERT INTO docs (id, body) VALUES (?1, ?2)")
            .unwrap();
        for (id, body) in docs {
            insert.execute([id, body]).expect("insert document");
        }
        drop(insert);
        Baseline { db }
    }

    pub fn search(&self, question: &str) -> Vec<String> {
        let terms: Vec<String> = question
            .split(|c: char| !c.is_alphanumeric())
            .filter(|w| !w.is_empty())
            .map(|w| format!("\"{w}\""))
            .collect();
        if terms.is_empty() {
            return Vec::new();
        }
        let mut q = self
            .db
            .prepare("SELECT id FROM docs WHERE docs MATCH ?1 ORDER BY bm25(docs) LIMIT ?2")
            .unwrap();
        q.query_map(rusqlite::params![terms.join(" OR "), DEPTH as i64], |r| {
            r.get(0)
        })
        .expect("baseline query")
        .filter_map(Result::ok)
        .collect()
    }
}
