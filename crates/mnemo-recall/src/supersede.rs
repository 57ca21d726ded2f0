//! Which decisions a later decision replaced.
//!
//! A project changes its mind: "Sessions are stored in Redis" is followed a
//! week later by "Sessions move from Redis to Postgres". Both are `decision`
//! observations about the same subject, and search must not present the old
//! one as the answer. A later decision of the same project *supersedes* an
//! earlier one when their titles share most of their words (Jaccard ≥
//! [`SAME_TITLE`]), or when they name a common file and still share a fair
//! part of their title words (≥ [`SAME_FILE_TITLE`]). The newest such
//! decision is the successor.
//!
//! Computed at query time, for the decisions a search is about to show:
//! decisions are few, and a rule applied when reading can be changed
//! without rewriting the store.

use std::collections::{HashMap, HashSet};

use mnemo_store::parse_json_list;
use rusqlite::{Connection, OptionalExtension};

use crate::Result;

/// Title-word overlap that alone makes two decisions one subject.
pub const SAME_TITLE: f64 = 0.5;
/// Title-word overlap enough when the decisions also share a file.
pub const SAME_FILE_TITLE: f64 = 0.2;
/// Later decisions compared per decision (the newest ones).
const MAX_LATER: i64 = 100;

/// What a decision is about: its title words and its files.
#[derive(Debug, Clone, Default)]
struct Subject {
    words: HashSet<String>,
    files: HashSet<String>,
}

impl Subject {
    fn new(title: &str, files_modified: &str, files_read: &str) -> Subject {
        let words = title
            .split(|c: char| !c.is_alphanumeric())
            .filter(|w| w.chars().count() > 2)
            .map(|w| {
                let w = w.to_lowercase();
                w.strip_suffix('s').map(str::to_owned).unwrap_or(w)
            })
            .filter(|w| !IGNORED.contains(&w.as_str()))
            .collect();
        let files = parse_json_list(files_modified)
            .into_iter()
            .chain(parse_json_list(files_read))
            .filter(|f| !f.is_empty())
            .collect();
        Subject { words, files }
    }

    /// Whether `later`, written after `self`, is about the same subject.
    fn replaced_by(&self, later: &Subject) -> bool {
        let shared = self.words.intersection(&later.words).count();
        let union = self.words.union(&later.words).count();
        if union == 0 || shared == 0 {
            return false;
        }
        let jaccard = shared as f64 / union as f64;
        jaccard >= SAME_TITLE
            || (jaccard >= SAME_FILE_TITLE && !self.files.is_disjoint(&later.files))
    }
}

/// Title words that say nothing about a decision's subject.
const IGNORED: &[&str] = &[
    "the", "and", "for", "with", "use", "not", "from", "into", "instead", "decided", "decision",
    "keep", "now", "than", "over", "are", "is", "was", "will", "should",
];

/// For each given observation that is a superseded decision: the id of the
/// newest decision that replaced it.
pub fn successors(conn: &Connection, ids: &[i64]) -> Result<HashMap<i64, i64>> {
    let mut out = HashMap::new();
    for &id in ids {
        if let Some(successor) = successor(conn, id)? {
            out.insert(id, successor);
        }
    }
    Ok(out)
}

/// The newest later decision of the same project on the same subject.
fn successor(conn: &Connection, id: i64) -> Result<Option<i64>> {
    let row = conn
        .prepare_cached(
            "SELECT project_id, created_at, title, files_modified, files_read
             FROM observations WHERE id = ?1 AND type = 'decision'",
        )?
        .query_row([id], |r| {
            Ok((
                r.get::<_, Option<i64>>(0)?,
                r.get::<_, i64>(1)?,
                Subject::new(
                    &r.get::<_, String>(2)?,
                    &r.get::<_, String>(3)?,
                    &r.get::<_, String>(4)?,
                ),
            ))
        })
        .optional()?;
    let Some((project, created, subject)) = row else {
        return Ok(None);
    };
    let mut stmt = conn.prepare_cached(
        "SELECT id, title, files_modified, files_read FROM observations
         WHERE project_id IS ?1 AND type = 'decision'
           AND (created_at > ?2 OR (created_at = ?2 AND id > ?3))
         ORDER BY created_at DESC, id DESC LIMIT ?4",
    )?;
    let mut rows = stmt.query(rusqlite::params![project, created, id, MAX_LATER])?;
    while let Some(r) = rows.next()? {
        let later = Subject::new(
            &r.get::<_, String>(1)?,
            &r.get::<_, String>(2)?,
            &r.get::<_, String>(3)?,
        );
        if subject.replaced_by(&later) {
            return Ok(Some(r.get(0)?));
        }
    }
    Ok(None)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_subject_by_title_or_by_file_and_some_words() {
        let old = Subject::new("Store sessions in Redis", "[\"/p/src/session.rs\"]", "[]");
        let amended = Subject::new("Store sessions in Postgres, not Redis", "[]", "[]");
        let same_file = Subject::new(
            "Session store moves to Postgres",
            "[\"/p/src/session.rs\"]",
            "[]",
        );
        let other = Subject::new("Use tracing for logs", "[\"/p/src/session.rs\"]", "[]");
        assert!(old.replaced_by(&amended));
        assert!(old.replaced_by(&same_file));
        assert!(!old.replaced_by(&other));
    }
}
