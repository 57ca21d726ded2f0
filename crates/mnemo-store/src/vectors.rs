//! Vectors for search by meaning: which records still need one for the
//! current model, storing a batch of them, reading them back for a query,
//! and the background job's status for `doctor`.
//!
//! A vector is kept per observation or summary (`embeddings`, see the
//! schema): the model's name, its dimension, the floats as little-endian
//! `f32` bytes, and a hash of the text it was made from. Triggers delete a
//! record's vector when the record is deleted or its text is edited or
//! redacted; a vector is written only if the record's text still hashes to
//! what was embedded, so a vector never describes text that is gone.

use rusqlite::{Connection, OptionalExtension, params};
use serde::Serialize;
use sha2::{Digest, Sha256};

use crate::{Result, Store, sql_err};

/// The two kinds of record that get a vector.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum VectorKind {
    Observation,
    Summary,
}

impl VectorKind {
    pub fn as_str(self) -> &'static str {
        match self {
            VectorKind::Observation => "observation",
            VectorKind::Summary => "summary",
        }
    }

    pub(crate) fn parse(s: &str) -> Option<VectorKind> {
        match s {
            "observation" => Some(VectorKind::Observation),
            "summary" => Some(VectorKind::Summary),
            _ => None,
        }
    }
}

/// A record whose text needs a vector for the current model.
#[derive(Debug, Clone, PartialEq)]
pub struct ToEmbed {
    pub kind: VectorKind,
    pub id: i64,
    /// What is embedded: the record's words, one field per line.
    pub text: String,
    pub content_hash: String,
}

/// Where a pass over the records stands: the next records looked at are
/// those with a smaller id, of each kind. A pass goes newest first, so
/// that each batch reads only rows not looked at yet (a store of 100,000
/// records is not rescanned per batch).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cursor {
    pub observation: i64,
    pub summary: i64,
}

impl Cursor {
    /// The start of a pass.
    pub const START: Cursor = Cursor {
        observation: i64::MAX,
        summary: i64::MAX,
    };
}

/// What `doctor` says about vectors.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct VectorStatus {
    /// Records that have a vector of the current model.
    pub vectors: u64,
    /// Observations and summaries stored.
    pub records: u64,
    /// Vectors of other models (re-embedded in the background).
    pub other_models: u64,
    pub last_ok_at: Option<i64>,
    pub last_error: Option<String>,
    pub last_error_at: Option<i64>,
}

/// The text of an observation as embedded.
const OBSERVATION_TEXT: &str = "o.title || char(10) || o.subtitle || char(10) || o.narrative
    || char(10) || o.facts || char(10) || o.concepts";
/// The text of a summary as embedded.
const SUMMARY_TEXT: &str = "m.request || char(10) || m.investigated || char(10) || m.learned
    || char(10) || m.completed || char(10) || m.next_steps || char(10) || m.notes";

/// Longest text sent for one record (characters): endpoints cap their
/// input, and a record's head says what it is about.
const MAX_EMBED_CHARS: usize = 4000;

/// Floats as stored: little-endian `f32`.
pub fn to_blob(vector: &[f32]) -> Vec<u8> {
    vector.iter().flat_map(|f| f.to_le_bytes()).collect()
}

/// The floats of a stored blob (a trailing partial float is ignored).
pub fn from_blob(blob: &[u8]) -> Vec<f32> {
    blob.chunks_exact(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

/// Hex SHA-256 of the text that is embedded.
pub fn content_hash(text: &str) -> String {
    let digest = Sha256::digest(text.as_bytes());
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

fn clip(text: String) -> String {
    match text.char_indices().nth(MAX_EMBED_CHARS) {
        Some((at, _)) => text[..at].to_owned(),
        None => text,
    }
}

/// Records of one kind below `below` without a vector of `model`, newest
/// first.
fn missing_of(
    conn: &Connection,
    kind: VectorKind,
    model: &str,
    below: i64,
    limit: usize,
) -> rusqlite::Result<Vec<ToEmbed>> {
    let (table, alias, text) = match kind {
        VectorKind::Observation => ("observations", "o", OBSERVATION_TEXT),
        VectorKind::Summary => ("summaries", "m", SUMMARY_TEXT),
    };
    let sql = format!(
        "SELECT {alias}.id, {text} FROM {table} {alias}
         LEFT JOIN embeddings e ON e.kind = ?1 AND e.record_id = {alias}.id
         WHERE {alias}.id < ?4 AND (e.record_id IS NULL OR e.model <> ?2)
         ORDER BY {alias}.id DESC LIMIT ?3"
    );
    let mut stmt = conn.prepare_cached(&sql)?;
    let rows = stmt.query_map(params![kind.as_str(), model, limit as i64, below], |r| {
        let text = clip(r.get::<_, String>(1)?);
        Ok(ToEmbed {
            kind,
            id: r.get(0)?,
            content_hash: content_hash(&text),
            text,
        })
    })?;
    rows.collect()
}

/// The current text of one record, as [`missing_of`] reads it.
fn current_text(conn: &Connection, kind: VectorKind, id: i64) -> rusqlite::Result<Option<String>> {
    let sql = match kind {
        VectorKind::Observation => {
            format!("SELECT {OBSERVATION_TEXT} FROM observations o WHERE o.id = ?1")
        }
        VectorKind::Summary => format!("SELECT {SUMMARY_TEXT} FROM summaries m WHERE m.id = ?1"),
    };
    conn.prepare_cached(&sql)?
        .query_row([id], |r| r.get::<_, String>(0))
        .optional()
        .map(|t| t.map(clip))
}

impl Store {
    /// Up to `limit` records past `from` that have no vector of `model`
    /// (newest first; observations before summaries), and where the pass
    /// stands after them. An empty list ends the pass.
    pub fn records_to_embed(
        &self,
        model: &str,
        from: Cursor,
        limit: usize,
    ) -> Result<(Vec<ToEmbed>, Cursor)> {
        let conn = self.conn();
        let err = |e| sql_err(self.path(), e);
        let mut next = from;
        let mut out = missing_of(
            conn,
            VectorKind::Observation,
            model,
            from.observation,
            limit,
        )
        .map_err(err)?;
        next.observation = match out.last() {
            Some(last) if out.len() == limit => last.id,
            _ => 0,
        };
        let room = limit - out.len();
        if room > 0 {
            let summaries =
                missing_of(conn, VectorKind::Summary, model, from.summary, room).map_err(err)?;
            next.summary = match summaries.last() {
                Some(last) if summaries.len() == room => last.id,
                _ => 0,
            };
            out.extend(summaries);
        }
        Ok((out, next))
    }

    /// Stores vectors of `model` for records embedded from `items` (same
    /// order). A record deleted or edited meanwhile gets none. Returns how
    /// many were stored.
    pub fn put_vectors(
        &mut self,
        model: &str,
        items: &[ToEmbed],
        vectors: &[Vec<f32>],
        now_ms: i64,
    ) -> Result<usize> {
        let path = self.path().to_owned();
        let tx = self
            .conn_mut()
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
            .map_err(|e| sql_err(&path, e))?;
        let mut stored = 0;
        for (item, vector) in items.iter().zip(vectors) {
            let still = current_text(&tx, item.kind, item.id).map_err(|e| sql_err(&path, e))?;
            if still.is_none_or(|t| content_hash(&t) != item.content_hash) {
                continue;
            }
            // The old vector is deleted first, not replaced: a replaced row
            // fires no delete trigger, and the pack that covers it must go.
            tx.prepare_cached("DELETE FROM embeddings WHERE kind = ?1 AND record_id = ?2")
                .and_then(|mut s| s.execute(params![item.kind.as_str(), item.id]))
                .map_err(|e| sql_err(&path, e))?;
            tx.prepare_cached(
                "INSERT INTO embeddings
                     (kind, record_id, model, dim, vector, content_hash, created_at)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
            )
            .and_then(|mut s| {
                s.execute(params![
                    item.kind.as_str(),
                    item.id,
                    model,
                    vector.len() as i64,
                    to_blob(vector),
                    item.content_hash,
                    now_ms
                ])
            })
            .map_err(|e| sql_err(&path, e))?;
            stored += 1;
        }
        tx.commit().map_err(|e| sql_err(&path, e))?;
        Ok(stored)
    }

    /// Records the background job's outcome: `Ok` clears the last error.
    pub fn set_vector_status(
        &self,
        model: &str,
        outcome: std::result::Result<(), &str>,
        now_ms: i64,
    ) -> Result<()> {
        let sql = match outcome {
            Ok(()) => {
                "INSERT INTO embedding_status (id, model, last_ok_at) VALUES (1, ?1, ?2)
                 ON CONFLICT(id) DO UPDATE SET model = ?1, last_ok_at = ?2,
                     last_error = NULL, last_error_at = NULL"
            }
            Err(_) => {
                "INSERT INTO embedding_status (id, model, last_error, last_error_at)
                 VALUES (1, ?1, ?3, ?2)
                 ON CONFLICT(id) DO UPDATE SET model = ?1, last_error = ?3, last_error_at = ?2"
            }
        };
        let error = outcome.err().unwrap_or_default();
        let params: &[&dyn rusqlite::ToSql] = if outcome.is_ok() {
            &[&model, &now_ms]
        } else {
            &[&model, &now_ms, &error]
        };
        self.conn()
            .execute(sql, params)
            .map_err(|e| sql_err(self.path(), e))?;
        Ok(())
    }
}

/// How many records have a vector of `model`, and the job's last outcome.
pub fn status(conn: &Connection, model: &str) -> rusqlite::Result<VectorStatus> {
    let count = |sql: &str, p: &[&dyn rusqlite::ToSql]| -> rusqlite::Result<u64> {
        conn.query_row(sql, p, |r| r.get::<_, i64>(0))
            .map(|n| n.max(0) as u64)
    };
    let vectors = count(
        "SELECT count(*) FROM embeddings WHERE model = ?1",
        &[&model],
    )?;
    let all = count("SELECT count(*) FROM embeddings", &[])?;
    let records = count(
        "SELECT (SELECT count(*) FROM observations) + (SELECT count(*) FROM summaries)",
        &[],
    )?;
    let mut out = VectorStatus {
        vectors,
        records,
        other_models: all - vectors,
        ..VectorStatus::default()
    };
    let last = conn
        .query_row(
            "SELECT last_ok_at, last_error, last_error_at FROM embedding_status WHERE id = 1",
            [],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )
        .optional()?;
    if let Some((ok_at, error, error_at)) = last {
        (out.last_ok_at, out.last_error, out.last_error_at) = (ok_at, error, error_at);
    }
    Ok(out)
}

/// Has the pages of a vector scan read through a memory map (no read call
/// and no copy per page: a store of 100,000 vectors is 150 MB of them).
pub(crate) fn map_for_scan(conn: &Connection) -> rusqlite::Result<()> {
    conn.pragma_update(None, "mmap_size", SCAN_MMAP_BYTES)
}

/// How much of the database file a vector scan maps into memory (SQLite
/// maps no more than the file holds; 0 on a build without memory maps).
const SCAN_MMAP_BYTES: i64 = 1 << 30;

/// The dimension of the vectors stored for `model`, if any.
pub fn dimension_of(conn: &Connection, model: &str) -> rusqlite::Result<Option<usize>> {
    conn.prepare_cached("SELECT dim FROM embeddings WHERE model = ?1 LIMIT 1")?
        .query_row([model], |r| r.get::<_, i64>(0))
        .optional()
        .map(|d| d.map(|d| d.max(0) as usize))
}

/// Whether the store has the vectors table (a store opened read-only
/// before the migration that adds it has not).
pub fn has_vectors_table(conn: &Connection) -> bool {
    conn.prepare_cached("SELECT 1 FROM sqlite_master WHERE name = 'embeddings'")
        .and_then(|mut s| s.exists([]))
        .unwrap_or(false)
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    fn store() -> (tempfile::TempDir, Store) {
        let tmp = tempfile::tempdir().unwrap();
        let store = Store::open(&tmp.path().join("m.db"), Duration::from_secs(1)).unwrap();
        store
            .conn()
            .execute_batch(
                "INSERT INTO observations (id, uid, type, title, narrative, created_at)
                     VALUES (1, 'a', 'bugfix', 'cache fix', 'evict on write', 1),
                            (2, 'b', 'change', 'login page', 'new form', 2);",
            )
            .unwrap();
        (tmp, store)
    }

    fn count(store: &Store) -> i64 {
        store
            .conn()
            .query_row("SELECT count(*) FROM embeddings", [], |r| r.get(0))
            .unwrap()
    }

    #[test]
    fn blobs_round_trip_little_endian() {
        let v = [1.0_f32, -0.5, 3.25];
        let blob = to_blob(&v);
        assert_eq!(&blob[..4], &1.0_f32.to_le_bytes());
        assert_eq!(from_blob(&blob), v);
    }

    #[test]
    fn vectors_follow_edits_deletes_and_model_changes() {
        let (_tmp, mut store) = store();
        let todo = store.records_to_embed("m1", Cursor::START, 10).unwrap().0;
        assert_eq!(todo.len(), 2);
        let vectors = vec![vec![1.0, 0.0], vec![0.0, 1.0]];
        assert_eq!(store.put_vectors("m1", &todo, &vectors, 5).unwrap(), 2);
        assert!(
            store
                .records_to_embed("m1", Cursor::START, 10)
                .unwrap()
                .0
                .is_empty()
        );
        // Another model: everything is to do again.
        assert_eq!(
            store
                .records_to_embed("m2", Cursor::START, 10)
                .unwrap()
                .0
                .len(),
            2
        );
        // An edit drops the vector; pinning does not.
        store
            .conn()
            .execute_batch("UPDATE observations SET narrative = 'other' WHERE id = 1")
            .unwrap();
        assert_eq!(count(&store), 1);
        store
            .conn()
            .execute_batch("DELETE FROM observations WHERE id = 2")
            .unwrap();
        assert_eq!(count(&store), 0);
    }

    #[test]
    fn a_pass_reads_each_record_once_in_batches() {
        let (_tmp, store) = store();
        let (first, next) = store.records_to_embed("m1", Cursor::START, 1).unwrap();
        assert_eq!(first.iter().map(|t| t.id).collect::<Vec<_>>(), vec![2]);
        let (second, next) = store.records_to_embed("m1", next, 1).unwrap();
        assert_eq!(second.iter().map(|t| t.id).collect::<Vec<_>>(), vec![1]);
        let (third, _) = store.records_to_embed("m1", next, 1).unwrap();
        assert!(third.is_empty(), "{third:?}");
    }

    #[test]
    fn a_record_edited_while_embedding_gets_no_vector() {
        let (_tmp, mut store) = store();
        let todo = store.records_to_embed("m1", Cursor::START, 10).unwrap().0;
        store
            .conn()
            .execute_batch("UPDATE observations SET title = 'renamed' WHERE id = 1")
            .unwrap();
        let vectors = vec![vec![1.0], vec![2.0]];
        assert_eq!(store.put_vectors("m1", &todo, &vectors, 5).unwrap(), 1);
        let s = status(store.conn(), "m1").unwrap();
        assert_eq!((s.vectors, s.records), (1, 2));
    }
}
