//! Re-ranking what BM25 found by how much of the question each record answers.
//!
//! FTS5's `bm25()` over an OR of the query's words rewards a record for each
//! word it contains, but a short record (a title and little else) gets every
//! match scaled up by its shortness, so a terse title with two common words
//! can beat the long record that contains all the rare ones. This module
//! reads the few best candidates' text and measures their *coverage*: the
//! share of the query's weight (each word weighs its inverse document
//! frequency) that the record contains, in its text or in its identifier
//! words. The final score is BM25 scaled by that coverage, so a record with
//! more of the selective words comes first and a record with only the
//! common ones sinks.
//!
//! Word matching here is a cheap approximation of the index's (lowercase,
//! plural and `-ed`/`-ing` endings folded); it only weighs candidates that
//! FTS5 already matched, so it never decides what is found.

use std::collections::HashSet;

use rusqlite::Connection;

use crate::Result;
use crate::ids::{ItemRef, Kind};
use crate::query::{Term, Terms};

/// How much each query word weighs, from the number of documents it matches.
#[derive(Debug, Clone)]
pub struct TermWeights {
    /// Per query term, in the order of [`Terms::terms`].
    pub idf: Vec<f64>,
}

impl TermWeights {
    /// Lucene-style smoothed IDF: positive however common the word.
    pub fn new(doc_counts: &[u64], total_docs: u64) -> TermWeights {
        let n = total_docs.max(1) as f64;
        let idf = doc_counts
            .iter()
            .map(|&df| {
                let df = df as f64;
                (1.0 + (n - df + 0.5).max(0.0) / (df + 0.5)).ln().max(0.01)
            })
            .collect();
        TermWeights { idf }
    }
}

/// The share of the query's weight a record contains, 0 to 1.
pub fn coverage(terms: &Terms, weights: &TermWeights, doc: &DocWords) -> f64 {
    let total: f64 = weights.idf.iter().sum();
    if total <= 0.0 {
        return 1.0;
    }
    let found: f64 = terms
        .terms()
        .iter()
        .zip(&weights.idf)
        .filter(|(t, _)| doc.contains(t))
        .map(|(_, w)| w)
        .sum();
    found / total
}

/// The words of one record, folded for comparison.
#[derive(Debug, Default)]
pub struct DocWords {
    words: HashSet<String>,
}

impl DocWords {
    pub fn new(text: &str) -> DocWords {
        DocWords {
            words: tokens(text).map(|w| fold(&w)).collect(),
        }
    }

    /// Whether every word of the term is in the record (a word of four or
    /// more letters also matches a longer form of itself: `config`,
    /// `configs`, `configured`).
    pub fn contains(&self, term: &Term) -> bool {
        let mut any = false;
        for w in tokens(&term.text) {
            any = true;
            let w = fold(&w);
            let found = self.words.contains(&w)
                || (w.chars().count() >= 4
                    && self
                        .words
                        .iter()
                        .any(|d| d.starts_with(&w) && d.len() <= w.len() + 4));
            if !found {
                return false;
            }
        }
        any
    }
}

/// Lowercase alphanumeric runs, as the index's tokenizer cuts them.
fn tokens(text: &str) -> impl Iterator<Item = String> + '_ {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
}

/// Folds common English endings: `caches`/`cached` → `cach`, `retries` →
/// `retry`, `fixed`/`fixing` → `fix`.
fn fold(word: &str) -> String {
    let w = word;
    let n = w.len();
    let folded = if n > 4 && w.ends_with("ies") {
        format!("{}y", &w[..n - 3])
    } else if n > 5 && w.ends_with("ing") {
        w[..n - 3].to_owned()
    } else if n > 4 && w.ends_with("ed") {
        w[..n - 2].to_owned()
    } else if n > 3 && w.ends_with('s') && !w.ends_with("ss") {
        w[..n - 1].to_owned()
    } else {
        w.to_owned()
    };
    match folded.strip_suffix('e') {
        Some(stem) if stem.len() >= 4 => stem.to_owned(),
        _ => folded,
    }
}

/// The searchable text of a record, as one string (all indexed columns).
pub fn record_text(conn: &Connection, id: ItemRef) -> Result<String> {
    let sql = match id.kind {
        Kind::Observation => {
            "SELECT title || ' ' || subtitle || ' ' || narrative || ' ' || facts || ' ' ||
                    concepts || ' ' || files_read || ' ' || files_modified || ' ' || idents
             FROM observations WHERE id = ?1"
        }
        Kind::Summary => {
            "SELECT request || ' ' || investigated || ' ' || learned || ' ' || completed || ' ' ||
                    next_steps || ' ' || notes || ' ' || idents
             FROM summaries WHERE id = ?1"
        }
        Kind::Prompt => "SELECT text || ' ' || idents FROM prompts WHERE id = ?1",
    };
    let text = conn
        .prepare_cached(sql)?
        .query_row([id.id], |r| r.get::<_, String>(0))
        .unwrap_or_default();
    Ok(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn term(text: &str) -> Term {
        Term {
            text: text.into(),
            quoted: false,
            stop: false,
        }
    }

    #[test]
    fn words_match_across_plurals_and_endings() {
        let doc =
            DocWords::new("Retries capped; caches invalidated when configs change (src/auth.rs)");
        for t in [
            "retry",
            "cache",
            "config",
            "invalidate",
            "src/auth.rs",
            "auth",
        ] {
            assert!(doc.contains(&term(t)), "{t}");
        }
        for t in ["login", "src/login.rs", "ca"] {
            assert!(!doc.contains(&term(t)), "{t}");
        }
    }

    #[test]
    fn coverage_weighs_rare_words_more() {
        let terms = Terms::parse("login redis timeout");
        let weights = TermWeights::new(&[500, 3, 40], 1000);
        let rare = coverage(&terms, &weights, &DocWords::new("redis timeout raised"));
        let common = coverage(&terms, &weights, &DocWords::new("login page"));
        assert!(rare > 0.8 && common < 0.1, "{rare} {common}");
        let all = coverage(&terms, &weights, &DocWords::new("login redis timeouts"));
        assert!((all - 1.0).abs() < 1e-9);
    }
}
