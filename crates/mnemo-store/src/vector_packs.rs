//! The packed copy of the stored vectors that search by meaning scans
//! (`embedding_packs`, see the schema): building it in the background, and
//! reading it back together with the vectors not packed yet.
//!
//! A pack holds up to [`PACK_SIZE`] vectors of one model and dimension:
//! their `embeddings` row ids, and each vector normalized and quantized to
//! one signed byte per number with a scale of its own ([`quantize`]). It
//! covers every vector of its model and dimension whose row id lies in its
//! range; triggers drop a pack when one of those rows is deleted or
//! changed, and a new row always gets a larger id than any pack's range,
//! so a pack never disagrees with the rows. What no pack covers (new
//! vectors, the survivors of a dropped pack) is read from the rows until
//! the worker packs it ([`Store::pack_vectors`]); a scan therefore always
//! sees every vector exactly once.

use rusqlite::{Connection, OptionalExtension, params};

use crate::vectors::{self, VectorKind};
use crate::{Result, Store, sql_err};

/// Most vectors in one pack: SQLite decodes about a hundred rows for
/// 100,000 vectors, and rebuilding a dropped pack stays cheap.
pub const PACK_SIZE: usize = 1024;

/// The newest vectors are packed once this many wait when nothing else is
/// to do (fewer are read from their rows at little cost), so that a
/// trickle of new records does not make a pack each.
pub const PACK_MIN: usize = 512;

/// The largest code of a quantized number.
const CODE_MAX: f32 = 127.0;

/// A vector normalized to length 1 and quantized: `codes[i] * scale`
/// approximates the unit vector's `i`-th number. A vector without length
/// (or with a number that is not finite) has scale 0.
pub fn quantize(vector: &[f32]) -> (f32, Vec<i8>) {
    let norm = vector.iter().map(|x| x * x).sum::<f32>().sqrt();
    let largest = vector.iter().fold(0.0_f32, |m, x| m.max(x.abs()));
    if norm <= 0.0 || !norm.is_finite() || !largest.is_finite() {
        return (0.0, vec![0; vector.len()]);
    }
    let scale = largest / norm / CODE_MAX;
    let codes = vector
        .iter()
        .map(|x| (x / norm / scale).round().clamp(-CODE_MAX, CODE_MAX) as i8)
        .collect();
    (scale, codes)
}

/// One pack as a scan sees it.
pub struct Pack<'a> {
    /// Row ids in `embeddings`, one per vector.
    row_ids: &'a [u8],
    /// One scale per vector (little-endian `f32`).
    scales: &'a [u8],
    /// `dim` codes per vector.
    pub codes: &'a [u8],
    pub dim: usize,
}

impl Pack<'_> {
    /// How many vectors the pack holds.
    pub fn len(&self) -> usize {
        (self.row_ids.len() / 8)
            .min(self.scales.len() / 4)
            .min(self.codes.len() / self.dim.max(1))
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The `embeddings` row id of vector `i`.
    pub fn row_id(&self, i: usize) -> i64 {
        let b = &self.row_ids[8 * i..8 * i + 8];
        i64::from_le_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]])
    }

    /// The scale of vector `i`.
    pub fn scale(&self, i: usize) -> f32 {
        let b = &self.scales[4 * i..4 * i + 4];
        f32::from_le_bytes([b[0], b[1], b[2], b[3]])
    }

    /// The codes of vector `i`.
    pub fn codes_of(&self, i: usize) -> &[u8] {
        &self.codes[self.dim * i..self.dim * (i + 1)]
    }
}

/// A vector no pack covers yet, from its row.
pub struct Unpacked<'a> {
    pub kind: VectorKind,
    pub record_id: i64,
    /// Little-endian `f32`.
    pub vector: &'a [u8],
}

/// Whether the store has the packs table (a store opened read-only before
/// the migration that adds it has not: every vector is then unpacked).
fn has_packs_table(conn: &Connection) -> bool {
    conn.prepare_cached("SELECT 1 FROM sqlite_master WHERE name = 'embedding_packs'")
        .and_then(|mut s| s.exists([]))
        .unwrap_or(false)
}

/// Calls `packed` with every pack of `model` and `dim`, and `unpacked` with
/// every vector of them that no pack covers: each vector once.
pub fn scan(
    conn: &Connection,
    model: &str,
    dim: usize,
    mut packed: impl FnMut(&Pack<'_>),
    mut unpacked: impl FnMut(&Unpacked<'_>),
) -> rusqlite::Result<()> {
    vectors::map_for_scan(conn)?;
    let mut covered = Vec::new();
    if has_packs_table(conn) {
        let mut stmt = conn.prepare_cached(
            "SELECT first_id, last_id, row_ids, scales, codes FROM embedding_packs
              WHERE model = ?1 AND dim = ?2 ORDER BY first_id",
        )?;
        let mut rows = stmt.query(params![model, dim as i64])?;
        while let Some(row) = rows.next()? {
            covered.push((row.get::<_, i64>(0)?, row.get::<_, i64>(1)?));
            let pack = Pack {
                row_ids: row.get_ref(2)?.as_blob()?,
                scales: row.get_ref(3)?.as_blob()?,
                codes: row.get_ref(4)?.as_blob()?,
                dim,
            };
            packed(&pack);
        }
    }
    for (after, before) in gaps(&covered) {
        rows_between(conn, model, dim, after, before, &mut unpacked)?;
    }
    Ok(())
}

/// The open id ranges between packs' ranges (sorted by their start), and
/// after the last: where the unpacked vectors are.
fn gaps(covered: &[(i64, i64)]) -> Vec<(i64, i64)> {
    let mut out = Vec::with_capacity(covered.len() + 1);
    let mut after = i64::MIN;
    for &(first, last) in covered {
        if first > after.saturating_add(1) {
            out.push((after, first));
        }
        after = after.max(last);
    }
    out.push((after, i64::MAX));
    out
}

/// Calls `each` with the vectors of `model` and `dim` whose row id lies
/// strictly between `after` and `before`, in id order.
fn rows_between(
    conn: &Connection,
    model: &str,
    dim: usize,
    after: i64,
    before: i64,
    each: &mut impl FnMut(&Unpacked<'_>),
) -> rusqlite::Result<()> {
    let mut stmt = conn.prepare_cached(
        "SELECT kind, record_id, vector FROM embeddings
          WHERE id > ?1 AND id < ?2 AND +model = ?3 AND dim = ?4 ORDER BY id",
    )?;
    let mut rows = stmt.query(params![after, before, model, dim as i64])?;
    while let Some(row) = rows.next()? {
        let Some(kind) = VectorKind::parse(row.get_ref(0)?.as_str()?) else {
            continue;
        };
        each(&Unpacked {
            kind,
            record_id: row.get(1)?,
            vector: row.get_ref(2)?.as_blob()?,
        });
    }
    Ok(())
}

/// The kind, record and full-precision vector of one `embeddings` row
/// (none when the row is gone).
pub fn vector_row(
    conn: &Connection,
    row_id: i64,
) -> rusqlite::Result<Option<(VectorKind, i64, Vec<u8>)>> {
    conn.prepare_cached("SELECT kind, record_id, vector FROM embeddings WHERE id = ?1")?
        .query_row([row_id], |r| {
            Ok((
                r.get::<_, String>(0)?,
                r.get::<_, i64>(1)?,
                r.get::<_, Vec<u8>>(2)?,
            ))
        })
        .optional()
        .map(|row| row.and_then(|(k, id, v)| Some((VectorKind::parse(&k)?, id, v))))
}

/// Vectors to pack: row id and the full-precision vector, in id order.
type PackRows = Vec<(i64, Vec<f32>)>;

/// The next vectors to pack for `model` and `dim`, if any: up to
/// [`PACK_SIZE`] consecutive unpacked rows (row id, vector) of the first
/// gap that has some, when the gap lies between packs or holds at least
/// `tail_min`.
fn next_to_pack(
    conn: &Connection,
    model: &str,
    dim: usize,
    tail_min: usize,
) -> rusqlite::Result<Option<PackRows>> {
    let covered: Vec<(i64, i64)> = conn
        .prepare_cached(
            "SELECT first_id, last_id FROM embedding_packs
              WHERE model = ?1 AND dim = ?2 ORDER BY first_id",
        )?
        .query_map(params![model, dim as i64], |r| Ok((r.get(0)?, r.get(1)?)))?
        .collect::<rusqlite::Result<_>>()?;
    let mut stmt = conn.prepare_cached(
        "SELECT id, vector FROM embeddings
          WHERE id > ?1 AND id < ?2 AND +model = ?3 AND dim = ?4 ORDER BY id LIMIT ?5",
    )?;
    for (after, before) in gaps(&covered) {
        let rows: PackRows = stmt
            .query_map(
                params![after, before, model, dim as i64, PACK_SIZE as i64],
                |r| Ok((r.get(0)?, vectors::from_blob(r.get_ref(1)?.as_blob()?))),
            )?
            .collect::<rusqlite::Result<_>>()?;
        let between_packs = before != i64::MAX;
        if !rows.is_empty() && (between_packs || rows.len() >= tail_min.max(1)) {
            return Ok(Some(rows));
        }
    }
    Ok(None)
}

/// Writes one pack of `rows` (row id and vector, in id order).
fn write_pack(
    conn: &Connection,
    model: &str,
    dim: usize,
    rows: &[(i64, Vec<f32>)],
) -> rusqlite::Result<()> {
    let (Some(first), Some(last)) = (rows.first(), rows.last()) else {
        return Ok(());
    };
    let mut row_ids = Vec::with_capacity(rows.len() * 8);
    let mut scales = Vec::with_capacity(rows.len() * 4);
    let mut codes = Vec::with_capacity(rows.len() * dim);
    for (id, vector) in rows {
        let (scale, q) = quantize(vector);
        row_ids.extend_from_slice(&id.to_le_bytes());
        scales.extend_from_slice(&scale.to_le_bytes());
        codes.extend(q.iter().map(|c| *c as u8));
    }
    conn.prepare_cached(
        "INSERT INTO embedding_packs
             (model, dim, first_id, last_id, count, row_ids, scales, codes)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
    )?
    .execute(params![
        model,
        dim as i64,
        first.0,
        last.0,
        rows.len() as i64,
        row_ids,
        scales,
        codes
    ])?;
    Ok(())
}

impl Store {
    /// Packs the vectors of `model` that no pack covers, one pack per
    /// transaction (a hook waiting to write waits for one pack, not for
    /// all), until none is left to pack or `stop` says so; the newest are
    /// packed only when at least `tail_min` of them wait ([`PACK_SIZE`]
    /// while a backfill goes on, [`PACK_MIN`] after). Returns how many
    /// packs were written. For the worker, never a hook.
    pub fn pack_vectors(
        &mut self,
        model: &str,
        tail_min: usize,
        stop: impl Fn() -> bool,
    ) -> Result<usize> {
        let path = self.path().to_owned();
        let err = |e| sql_err(&path, e);
        let Some(dim) = vectors::dimension_of(self.conn(), model).map_err(err)? else {
            return Ok(0);
        };
        let mut written = 0;
        // Looked for first without the write lock: usually there is nothing.
        while !stop()
            && next_to_pack(self.conn(), model, dim, tail_min)
                .map_err(err)?
                .is_some()
        {
            let tx = self
                .conn_mut()
                .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
                .map_err(err)?;
            let Some(rows) = next_to_pack(&tx, model, dim, tail_min).map_err(err)? else {
                break;
            };
            write_pack(&tx, model, dim, &rows).map_err(err)?;
            tx.commit().map_err(err)?;
            written += 1;
        }
        Ok(written)
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;
    use std::time::Duration;

    use super::*;
    use crate::vectors::{Cursor, ToEmbed};

    /// Deterministic numbers in [-1, 1).
    fn noise(seed: u64, n: usize) -> Vec<f32> {
        let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
        (0..n)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                (x >> 40) as f32 / (1u64 << 23) as f32 - 1.0
            })
            .collect()
    }

    fn store_with(records: i64) -> (tempfile::TempDir, Store) {
        let tmp = tempfile::tempdir().unwrap();
        let store = Store::open(&tmp.path().join("m.db"), Duration::from_secs(1)).unwrap();
        store
            .conn()
            .execute(
                "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?1)
                 INSERT INTO observations (id, uid, type, title, created_at)
                 SELECT i, 'o' || i, 'change', 'record ' || i, i FROM n",
                [records],
            )
            .unwrap();
        (tmp, store)
    }

    /// Embeds every record without a vector of `model` (`dim` numbers).
    fn embed_all(store: &mut Store, model: &str, dim: usize, seed: u64) -> Vec<ToEmbed> {
        let (todo, _) = store
            .records_to_embed(model, Cursor::START, 100_000)
            .unwrap();
        let vectors: Vec<Vec<f32>> = todo
            .iter()
            .map(|t| noise(t.id as u64 + seed, dim))
            .collect();
        store.put_vectors(model, &todo, &vectors, 0).unwrap();
        todo
    }

    fn packs(store: &Store) -> i64 {
        store
            .conn()
            .query_row("SELECT count(*) FROM embedding_packs", [], |r| r.get(0))
            .unwrap()
    }

    /// Every pack holds exactly the rows of its model and dimension in its
    /// range, each quantized as [`quantize`] does; and a scan sees every
    /// vector of `model` exactly once.
    fn assert_agree(store: &Store, model: &str, dim: usize) {
        let conn = store.conn();
        let mut stmt = conn
            .prepare("SELECT model, dim, first_id, last_id, count, row_ids, scales, codes FROM embedding_packs")
            .unwrap();
        let mut rows = stmt.query([]).unwrap();
        while let Some(row) = rows.next().unwrap() {
            let (m, d): (String, i64) = (row.get(0).unwrap(), row.get(1).unwrap());
            let (first, last, count): (i64, i64, i64) = (
                row.get(2).unwrap(),
                row.get(3).unwrap(),
                row.get(4).unwrap(),
            );
            let pack = Pack {
                row_ids: row.get_ref(5).unwrap().as_blob().unwrap(),
                scales: row.get_ref(6).unwrap().as_blob().unwrap(),
                codes: row.get_ref(7).unwrap().as_blob().unwrap(),
                dim: d as usize,
            };
            let expected: Vec<(i64, Vec<u8>)> = conn
                .prepare(
                    "SELECT id, vector FROM embeddings
                      WHERE model = ?1 AND dim = ?2 AND id BETWEEN ?3 AND ?4 ORDER BY id",
                )
                .unwrap()
                .query_map(params![m, d, first, last], |r| Ok((r.get(0)?, r.get(1)?)))
                .unwrap()
                .collect::<rusqlite::Result<_>>()
                .unwrap();
            assert_eq!(pack.len(), expected.len());
            assert_eq!(count as usize, expected.len());
            for (i, (id, blob)) in expected.iter().enumerate() {
                let (scale, codes) = quantize(&vectors::from_blob(blob));
                assert_eq!(pack.row_id(i), *id);
                assert_eq!(pack.scale(i), scale);
                let packed: Vec<i8> = pack.codes_of(i).iter().map(|c| *c as i8).collect();
                assert_eq!(packed, codes);
            }
        }
        let (mut seen, mut unpacked) = (Vec::new(), Vec::new());
        scan(
            conn,
            model,
            dim,
            |pack| seen.extend((0..pack.len()).map(|i| pack.row_id(i))),
            |row| {
                let id: i64 = conn
                    .query_row(
                        "SELECT id FROM embeddings WHERE kind = ?1 AND record_id = ?2",
                        params![row.kind.as_str(), row.record_id],
                        |r| r.get(0),
                    )
                    .unwrap();
                unpacked.push(id);
            },
        )
        .unwrap();
        seen.append(&mut unpacked);
        let all: Vec<i64> = conn
            .prepare("SELECT id FROM embeddings WHERE model = ?1 AND dim = ?2 ORDER BY id")
            .unwrap()
            .query_map(params![model, dim as i64], |r| r.get(0))
            .unwrap()
            .collect::<rusqlite::Result<_>>()
            .unwrap();
        let distinct: BTreeSet<i64> = seen.iter().copied().collect();
        assert_eq!(distinct.len(), seen.len(), "a vector scanned twice");
        assert_eq!(distinct.into_iter().collect::<Vec<_>>(), all);
    }

    #[test]
    fn quantized_vectors_are_the_unit_vector_within_half_a_step() {
        let v = noise(3, 385);
        let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
        let (scale, codes) = quantize(&v);
        assert!(codes.iter().any(|c| c.unsigned_abs() == 127));
        for (x, c) in v.iter().zip(&codes) {
            assert!((x / norm - f32::from(*c) * scale).abs() <= scale / 2.0 + 1e-7);
        }
        assert_eq!(quantize(&[0.0; 4]), (0.0, vec![0; 4]));
        assert_eq!(quantize(&[f32::NAN, 1.0]).0, 0.0);
    }

    #[test]
    fn packs_never_disagree_with_the_rows_through_edits_deletes_and_a_new_model() {
        let (_tmp, mut store) = store_with(2600);
        embed_all(&mut store, "m1", 24, 0);
        // A backfill under way packs only whole packs; the rest waits.
        assert_eq!(store.pack_vectors("m1", PACK_SIZE, || false).unwrap(), 2);
        assert_agree(&store, "m1", 24);
        assert_eq!(store.pack_vectors("m1", PACK_MIN, || false).unwrap(), 1);
        assert_eq!(store.pack_vectors("m1", PACK_MIN, || false).unwrap(), 0);
        assert_agree(&store, "m1", 24);
        // An edit and a delete drop the packs that covered their vectors;
        // the survivors are scanned from their rows, then packed again.
        store
            .conn()
            .execute_batch(
                "UPDATE observations SET title = 'renamed' WHERE id = 10;
                 DELETE FROM observations WHERE id = 2000;",
            )
            .unwrap();
        assert_eq!(packs(&store), 1);
        assert_agree(&store, "m1", 24);
        // The edited record's new vector is a new row past every pack.
        embed_all(&mut store, "m1", 24, 7);
        assert_agree(&store, "m1", 24);
        assert_eq!(store.pack_vectors("m1", PACK_MIN, || false).unwrap(), 2);
        assert_agree(&store, "m1", 24);
        // A vector stored again for the same record drops its pack too.
        let (todo, _) = store.records_to_embed("m2", Cursor::START, 5).unwrap();
        let again: Vec<Vec<f32>> = todo.iter().map(|t| noise(t.id as u64, 24)).collect();
        store.put_vectors("m1", &todo, &again, 1).unwrap();
        assert_agree(&store, "m1", 24);
        // Another model replaces every vector: no pack of m1 is left.
        embed_all(&mut store, "m2", 16, 1);
        assert_agree(&store, "m2", 16);
        assert_eq!(store.pack_vectors("m2", PACK_MIN, || false).unwrap(), 3);
        assert_agree(&store, "m2", 16);
        assert_agree(&store, "m1", 24);
        let m1: i64 = store
            .conn()
            .query_row(
                "SELECT count(*) FROM embedding_packs WHERE model = 'm1'",
                [],
                |r| r.get(0),
            )
            .unwrap();
        assert_eq!(m1, 0);
    }

    #[test]
    fn the_gaps_are_what_no_pack_covers() {
        assert_eq!(gaps(&[]), vec![(i64::MIN, i64::MAX)]);
        assert_eq!(
            gaps(&[(1, 5), (6, 9), (20, 30)]),
            vec![(i64::MIN, 1), (9, 20), (30, i64::MAX)]
        );
    }
}
