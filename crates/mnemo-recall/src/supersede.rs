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
//! Stored when the later decision is written ([`link_replaced`], called by
//! the worker: `observations.superseded_by`), and computed at query time for
//! decisions stored before that link existed: decisions are few.
//!
//! Work is amended too: "Retry the upload three times (upload.rs)" is
//! followed by "Retry the upload with backoff instead (upload.rs)". Among
//! the records a search found, a later change of the same project that
//! modified a file the earlier one modified, with a fair part (and at
//! least two) of its title words ([`amendments`]; words of the records' own
//! file paths, and words most found titles share, do not count, so
//! "Edited upload.rs" amends nothing), supersedes the earlier one.
//! A read amends nothing, and decisions are linked as above.

use std::collections::{HashMap, HashSet};

use mnemo_store::parse_json_list;
use rusqlite::{Connection, OptionalExtension};

use crate::Result;

/// Title-word overlap that alone makes two decisions one subject.
pub const SAME_TITLE: f64 = 0.5;
/// Title-word overlap enough when the decisions also share a file.
pub const SAME_FILE_TITLE: f64 = 0.2;
/// Title-word overlap with which a later change that modified a file of an
/// earlier one amends it: more than for decisions, since changes to one
/// file are many and mostly about different things.
pub const AMENDED_TITLE: f64 = 0.4;
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

    /// Sets aside the title words that only name the subject's files
    /// (`Edited src/upload.rs` says nothing beyond its file).
    fn drop_path_words(&mut self) {
        let path_words: HashSet<String> = self
            .files
            .iter()
            .flat_map(|f| Subject::new(f, "[]", "[]").words)
            .collect();
        self.words.retain(|w| !path_words.contains(w));
    }

    /// The share of their title words two subjects have in common
    /// (Jaccard), 0 when they have none.
    fn overlap(&self, other: &Subject) -> f64 {
        let shared = self.words.intersection(&other.words).count();
        let union = self.words.union(&other.words).count();
        if union == 0 {
            return 0.0;
        }
        shared as f64 / union as f64
    }

    /// Whether `later`, written after `self`, is about the same subject.
    fn replaced_by(&self, later: &Subject) -> bool {
        let jaccard = self.overlap(later);
        jaccard > 0.0
            && (jaccard >= SAME_TITLE
                || (jaccard >= SAME_FILE_TITLE && !self.files.is_disjoint(&later.files)))
    }
}

/// Title words that say nothing about a decision's subject.
const IGNORED: &[&str] = &[
    "the", "and", "for", "with", "use", "not", "from", "into", "instead", "decided", "decision",
    "keep", "now", "than", "over", "are", "is", "was", "will", "should",
];

/// Links the earlier decisions of the project that decision `id` replaces
/// (same subject, not already replaced) to it; their ids. Nothing for an
/// observation that is no decision.
pub fn link_replaced(conn: &Connection, id: i64) -> Result<Vec<i64>> {
    let Some((project, created, subject)) = decision_subject(conn, id)? else {
        return Ok(Vec::new());
    };
    let mut stmt = conn.prepare_cached(
        "SELECT id, title, files_modified, files_read FROM observations
         WHERE project_id IS ?1 AND type = 'decision' AND superseded_by IS NULL
           AND id != ?3 AND (created_at < ?2 OR (created_at = ?2 AND id < ?3))
         ORDER BY created_at DESC, id DESC LIMIT ?4",
    )?;
    let mut replaced = Vec::new();
    let mut rows = stmt.query(rusqlite::params![project, created, id, MAX_LATER])?;
    while let Some(r) = rows.next()? {
        let earlier = Subject::new(
            &r.get::<_, String>(1)?,
            &r.get::<_, String>(2)?,
            &r.get::<_, String>(3)?,
        );
        if earlier.replaced_by(&subject) {
            replaced.push(r.get::<_, i64>(0)?);
        }
    }
    for earlier in &replaced {
        conn.prepare_cached("UPDATE observations SET superseded_by = ?1 WHERE id = ?2")?
            .execute([id, *earlier])?;
    }
    Ok(replaced)
}

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

/// Stored links followed at most (a loop cannot hang a reader).
const MAX_CHAIN: usize = 16;

/// The decision that replaced `id`, as the worker stored it.
fn stored_link(conn: &Connection, id: i64) -> Result<Option<i64>> {
    Ok(conn
        .prepare_cached("SELECT superseded_by FROM observations WHERE id = ?1")?
        .query_row([id], |r| r.get(0))
        .optional()?
        .flatten())
}

/// A decision's project, time and subject (None for any other record).
fn decision_subject(conn: &Connection, id: i64) -> Result<Option<(Option<i64>, i64, Subject)>> {
    Ok(conn
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
        .optional()?)
}

/// The decision in force that replaced `id`: the stored links followed to
/// the last (A → B → C gives C), else the newest later decision of the same
/// project on the same subject.
fn successor(conn: &Connection, id: i64) -> Result<Option<i64>> {
    let mut last = None;
    let mut at = id;
    for _ in 0..MAX_CHAIN {
        match stored_link(conn, at)? {
            Some(next) if next != id => {
                last = Some(next);
                at = next;
            }
            _ => break,
        }
    }
    if last.is_some() {
        return Ok(last);
    }
    let Some((project, created, subject)) = decision_subject(conn, id)? else {
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

/// Observation types that record work done, which a later record can amend.
const AMENDABLE: &[&str] = &["bugfix", "change", "feature", "refactor"];

/// A change as [`amendments`] compares it.
struct Change {
    id: i64,
    project: Option<i64>,
    created: i64,
    subject: Subject,
}

/// Among the given observations, each change that a later one of them
/// amends (same project, a modified file in common, and title words in
/// common once the words of their file paths are set aside): its id and
/// the newest amending one's. Costs one statement.
pub fn amendments(conn: &Connection, ids: &[i64]) -> Result<HashMap<i64, i64>> {
    let mut changes = read_changes(conn, ids)?;
    drop_template_words(&mut changes);
    let mut out = HashMap::new();
    for earlier in &changes {
        let newest = changes
            .iter()
            .filter(|later| amends(later, earlier))
            .max_by_key(|later| (later.created, later.id));
        if let Some(later) = newest {
            out.insert(earlier.id, later.id);
        }
    }
    Ok(out)
}

/// Whether `later` amends `earlier`: besides a file, at least two title
/// words in common.
fn amends(later: &Change, earlier: &Change) -> bool {
    (later.created, later.id) > (earlier.created, earlier.id)
        && later.project == earlier.project
        && !later.subject.files.is_disjoint(&earlier.subject.files)
        && earlier
            .subject
            .words
            .intersection(&later.subject.words)
            .count()
            >= 2
        && earlier.subject.overlap(&later.subject) >= AMENDED_TITLE
}

/// Sets aside the title words found in more than a quarter of the changes
/// (at least three of them): the words every title is made of ("Edited",
/// "Command … failed, then passed") say nothing about a subject.
fn drop_template_words(changes: &mut [Change]) {
    let mut titles_with: HashMap<String, usize> = HashMap::new();
    for c in changes.iter() {
        for w in &c.subject.words {
            *titles_with.entry(w.clone()).or_default() += 1;
        }
    }
    let most = (changes.len() / 4).max(2);
    for c in changes.iter_mut() {
        c.subject.words.retain(|w| titles_with[w] <= most);
    }
}

/// The given observations that record work, with their subjects: title
/// words (less their files' path words) and modified files.
fn read_changes(conn: &Connection, ids: &[i64]) -> Result<Vec<Change>> {
    if ids.is_empty() {
        return Ok(Vec::new());
    }
    let list: Vec<String> = ids.iter().map(i64::to_string).collect();
    let types: Vec<String> = AMENDABLE.iter().map(|t| format!("'{t}'")).collect();
    let sql = format!(
        "SELECT id, project_id, created_at, title, files_modified FROM observations
         WHERE id IN ({}) AND type IN ({}) AND files_modified NOT IN ('', '[]')",
        list.join(", "),
        types.join(", ")
    );
    let mut stmt = conn.prepare(&sql)?;
    let rows = stmt.query_map([], |r| {
        let files: String = r.get(4)?;
        let mut subject = Subject::new(&r.get::<_, String>(3)?, &files, "[]");
        subject.drop_path_words();
        Ok(Change {
            id: r.get(0)?,
            project: r.get(1)?,
            created: r.get(2)?,
            subject,
        })
    })?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A store in a directory that lives as long as the returned guard.
    fn scratch_store() -> (tempfile::TempDir, mnemo_store::Store) {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("m.db");
        let store = mnemo_store::Store::open(&path, std::time::Duration::from_secs(1)).unwrap();
        (tmp, store)
    }

    #[test]
    fn a_later_decision_on_the_same_subject_is_stored_as_the_successor() {
        use mnemo_store::memory::{NewObservation, insert_observation};
        let (_tmp, store) = scratch_store();
        let decision = |uid: &str, title: &str, at: i64| NewObservation {
            uid: uid.into(),
            kind: "decision".into(),
            title: title.into(),
            created_at: at,
            ..Default::default()
        };
        let conn = store.conn();
        let old = insert_observation(conn, &decision("a", "Store sessions in Redis", 1))
            .unwrap()
            .unwrap();
        let other = insert_observation(conn, &decision("b", "Use tracing for logs", 2))
            .unwrap()
            .unwrap();
        let new = insert_observation(
            conn,
            &decision("c", "Store sessions in Postgres, not Redis", 3),
        )
        .unwrap()
        .unwrap();
        assert_eq!(link_replaced(conn, new).unwrap(), vec![old]);
        let link = |id: i64| -> Option<i64> {
            conn.query_row(
                "SELECT superseded_by FROM observations WHERE id = ?1",
                [id],
                |r| r.get(0),
            )
            .unwrap()
        };
        assert_eq!(link(old), Some(new));
        assert_eq!(link(other), None);
        assert_eq!(link(new), None);
        let found = successors(conn, &[old, other, new]).unwrap();
        assert_eq!(found.get(&old), Some(&new));
        assert_eq!(found.len(), 1);
        // A third decision on the subject: the first's successor is the last.
        let last = insert_observation(
            conn,
            &decision("d", "Store sessions in SQLite, not Postgres or Redis", 4),
        )
        .unwrap()
        .unwrap();
        assert_eq!(link_replaced(conn, last).unwrap(), vec![new]);
        let found = successors(conn, &[old, new]).unwrap();
        assert_eq!(found.get(&old), Some(&last));
        assert_eq!(found.get(&new), Some(&last));
        // Linking again changes nothing; a record that is no decision links nothing.
        assert!(link_replaced(conn, last).unwrap().is_empty());
        assert!(link_replaced(conn, 9999).unwrap().is_empty());
    }

    #[test]
    fn a_later_change_to_the_same_file_and_subject_amends_an_edit_log_does_not() {
        use mnemo_store::memory::{NewObservation, insert_observation};
        let (_tmp, store) = scratch_store();
        let conn = store.conn();
        let add = |kind: &str, title: &str, at: i64| {
            let o = NewObservation {
                uid: format!("u{at}"),
                kind: kind.into(),
                title: title.into(),
                files_modified: vec!["/p/src/upload.rs".into()],
                created_at: at,
                ..Default::default()
            };
            insert_observation(conn, &o).unwrap().unwrap()
        };
        let old = add("change", "Retry failed uploads three times, fixed delay", 1);
        let edit = add("change", "Edited src/upload.rs", 2);
        let edit_again = add("change", "Edited src/upload.rs", 3);
        let read = add(
            "discovery",
            "Read upload.rs: retry failed uploads, fixed delay",
            4,
        );
        let new = add(
            "bugfix",
            "Retry failed uploads with backoff, not a fixed delay",
            5,
        );
        let other = add("change", "Log upload sizes", 6);
        let ids = [old, edit, edit_again, read, new, other];
        let found = amendments(conn, &ids).unwrap();
        assert_eq!(found.get(&old), Some(&new), "{found:?}");
        assert_eq!(found.len(), 1, "{found:?}");
    }

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
