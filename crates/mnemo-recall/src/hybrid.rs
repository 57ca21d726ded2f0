//! Search by meaning, fused with full-text search (optional, off unless
//! `[embeddings]` is configured).
//!
//! The caller embeds the query (one call to the endpoint, see the
//! `mnemo-embed` crate) and hands over a [`Meaning`]: the query's vector, or
//! why there is none. [`search`] then runs the full-text search of
//! [`crate::search`] unchanged, takes the records whose stored vectors are
//! nearest the query's (brute-force cosine over the store's vectors of the
//! same model and dimension, each checked against the request's filters),
//! and fuses the two ranked lists by reciprocal rank fusion: a record's
//! score is the sum over the lists of `1 / (RRF_K + rank)`. A record found
//! only by meaning is shown like any other hit. Supersession holds after
//! fusion: a record a later one replaced is demoted again, below it.
//!
//! Without a vector (endpoint down, slow, answering garbage) the results are
//! the full-text ones, and [`MeaningNote::skipped`] says why. Nothing here
//! does network I/O; hooks never come here (prompt-time recall stays
//! lexical).

use std::cmp::Ordering;
use std::collections::HashMap;

use mnemo_store::vector_packs::{self, Pack};
use mnemo_store::vectors::{self, VectorKind};
use rusqlite::Connection;
use serde::Serialize;

use crate::Result;
use crate::ids::{ItemRef, Kind};
use crate::search::{self, Hit, SearchRequest, SearchResults};
use crate::supersede;

/// The query's embedding, as the endpoint gave it.
#[derive(Debug, Clone, PartialEq)]
pub struct QueryVector {
    pub model: String,
    pub vector: Vec<f32>,
}

/// What the caller knows about search by meaning for this query.
#[derive(Debug, Clone, PartialEq)]
pub enum Meaning {
    /// Not configured: plain full-text search, no note.
    Off,
    /// The query's vector.
    Query(QueryVector),
    /// Configured, but there is no vector; the reason is shown.
    Skipped(String),
}

/// What a result says about search by meaning (`"meaning"` in JSON, a line
/// in text).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MeaningNote {
    /// Whether stored vectors took part in the ranking.
    pub used: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// Hits that full-text search alone did not return.
    pub added: usize,
    /// Records with a vector of this model (what meaning could find).
    pub vectors: u64,
    /// Why meaning was skipped: the results are full-text only.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub skipped: Option<String>,
}

/// The usual constant of reciprocal rank fusion: ranks far down either list
/// still count, and the top of one list does not drown the other.
pub const RRF_K: f64 = 60.0;

/// How deep each list is read for fusion (at least the request's limit).
const FUSION_DEPTH: usize = 50;

/// Runs a search, with meaning when `meaning` carries the query's vector.
pub fn search(conn: &Connection, req: &SearchRequest, meaning: Meaning) -> Result<SearchResults> {
    let query = match meaning {
        Meaning::Off => return search::search(conn, req),
        Meaning::Skipped(why) => return lexical_with_note(conn, req, why),
        Meaning::Query(q) => q,
    };
    if req.query.trim().is_empty() {
        return search::search(conn, req);
    }
    if !vectors::has_vectors_table(conn) {
        let why = "the store has no vectors yet (run the worker)".to_owned();
        return lexical_with_note(conn, req, why);
    }
    let limit = req.limit.clamp(1, 500);
    let depth = limit.max(FUSION_DEPTH);
    let deep = SearchRequest {
        limit: depth,
        ..req.clone()
    };
    let mut results = search::search(conn, &deep)?;
    let (near, scanned) = nearest(conn, req, &query, depth)?;
    let lexical: Vec<ItemRef> = results.hits.iter().map(|h| h.id).collect();
    let fused = fuse(&lexical, &near);
    let mut by_id: HashMap<ItemRef, Hit> = results.hits.drain(..).map(|h| (h.id, h)).collect();
    let mut hits = Vec::with_capacity(limit);
    let mut added = 0;
    for (id, score) in fused.into_iter().take(limit) {
        let hit = match by_id.remove(&id) {
            Some(hit) => Some(hit),
            None => {
                added += 1;
                new_hit(conn, id)?
            }
        };
        if let Some(mut hit) = hit {
            hit.score = score;
            hits.push(hit);
        }
    }
    demote_superseded(conn, &mut hits)?;
    for hit in &mut hits {
        hit.score = (hit.score * 1e6).round() / 1e6;
    }
    results.hits = hits;
    results.meaning = Some(MeaningNote {
        used: true,
        vectors: scanned,
        model: Some(query.model),
        added,
        skipped: None,
    });
    Ok(results)
}

fn lexical_with_note(conn: &Connection, req: &SearchRequest, why: String) -> Result<SearchResults> {
    let mut results = search::search(conn, req)?;
    results.meaning = Some(MeaningNote {
        used: false,
        model: None,
        added: 0,
        vectors: 0,
        skipped: Some(why),
    });
    Ok(results)
}

/// The display row of a record found only by meaning, with its freshness.
fn new_hit(conn: &Connection, id: ItemRef) -> Result<Option<Hit>> {
    let Some(hit) = search::hit(conn, id)? else {
        return Ok(None);
    };
    let mut one = [hit];
    crate::fresh::mark_hits(conn, &mut one)?;
    let [hit] = one;
    Ok(Some(hit))
}

/// Fusion adds what meaning ranks to what full-text search ranked, and can
/// lift a superseded record back above the one that replaced it (a record
/// found only by meaning was never checked): each is demoted again as
/// full-text search demotes it, its successor taking at least its score.
fn demote_superseded(conn: &Connection, hits: &mut [Hit]) -> Result<()> {
    let unchecked: Vec<i64> = hits
        .iter()
        .filter(|h| h.id.kind == Kind::Observation && h.superseded_by.is_none())
        .map(|h| h.id.id)
        .collect();
    let found = supersede::successors(conn, &unchecked)?;
    for h in hits.iter_mut().filter(|h| h.id.kind == Kind::Observation) {
        h.superseded_by = h.superseded_by.or(found.get(&h.id.id).copied());
    }
    let replaced: Vec<(i64, f64)> = hits
        .iter()
        .filter_map(|h| h.superseded_by.map(|next| (next, h.score)))
        .collect();
    for (next, score) in replaced {
        let successor = ItemRef::observation(next);
        if let Some(s) = hits.iter_mut().find(|h| h.id == successor) {
            s.score = s.score.max(score);
        }
    }
    for h in hits.iter_mut().filter(|h| h.superseded_by.is_some()) {
        h.score *= search::SUPERSEDED_FACTOR;
    }
    hits.sort_by(|a, b| b.score.partial_cmp(&a.score).unwrap_or(Ordering::Equal));
    Ok(())
}

/// Reciprocal rank fusion of two ranked lists: best first; ties keep the
/// full-text order, then the order by meaning.
pub fn fuse(lexical: &[ItemRef], near: &[ItemRef]) -> Vec<(ItemRef, f64)> {
    let mut scores: Vec<(ItemRef, f64, usize)> = Vec::new();
    let mut at: HashMap<ItemRef, usize> = HashMap::new();
    for (list, ids) in [lexical, near].into_iter().enumerate() {
        for (rank, id) in ids.iter().enumerate() {
            let gain = 1.0 / (RRF_K + rank as f64 + 1.0);
            match at.get(id) {
                Some(&i) => scores[i].1 += gain,
                None => {
                    at.insert(*id, scores.len());
                    scores.push((*id, gain, list * 10_000 + rank));
                }
            }
        }
    }
    scores.sort_by(|a, b| {
        b.1.partial_cmp(&a.1)
            .unwrap_or(Ordering::Equal)
            .then(a.2.cmp(&b.2))
    });
    scores.into_iter().map(|(id, s, _)| (id, s)).collect()
}

/// Cosine similarity; 0 when either vector has no length.
pub fn cosine(a: &[f32], b: &[f32]) -> f32 {
    let (mut dot, mut na, mut nb) = (0.0_f32, 0.0_f32, 0.0_f32);
    for (x, y) in a.iter().zip(b) {
        dot += x * y;
        na += x * x;
        nb += y * y;
    }
    if na <= 0.0 || nb <= 0.0 {
        return 0.0;
    }
    dot / (na.sqrt() * nb.sqrt())
}

/// Independent sums kept by [`cosine_blob`]: the compiler turns them into
/// vector instructions (one running sum cannot be, its additions are in
/// order).
const LANES: usize = 8;

/// Cosine of a query (already normalized) with a stored blob, without
/// copying the blob.
fn cosine_blob(unit_query: &[f32], blob: &[u8]) -> f32 {
    let (mut dot, mut norm) = ([0.0_f32; LANES], [0.0_f32; LANES]);
    let blocks = blob.chunks_exact(4 * LANES);
    let (tail_q, tail_b) = (
        unit_query
            .get(unit_query.len() / LANES * LANES..)
            .unwrap_or(&[]),
        blocks.remainder(),
    );
    for (q, b) in unit_query.chunks_exact(LANES).zip(blocks) {
        for i in 0..LANES {
            let x = f32::from_le_bytes([b[4 * i], b[4 * i + 1], b[4 * i + 2], b[4 * i + 3]]);
            dot[i] += q[i] * x;
            norm[i] += x * x;
        }
    }
    for (i, (q, c)) in tail_q.iter().zip(tail_b.chunks_exact(4)).enumerate() {
        let x = f32::from_le_bytes([c[0], c[1], c[2], c[3]]);
        dot[i] += q * x;
        norm[i] += x * x;
    }
    let norm: f32 = norm.iter().sum();
    if norm <= 0.0 {
        return 0.0;
    }
    dot.iter().sum::<f32>() / norm.sqrt()
}

/// A vector among the nearest before its full-precision score: from a
/// pack (its row, re-scored) or from its row (the score already exact).
enum Near {
    Packed(i64),
    Exact(ItemRef),
}

/// The query as a scan compares it: normalized, and quantized like the
/// packed vectors.
struct ScanQuery {
    unit: Vec<f32>,
    scale: f32,
    codes: Vec<i8>,
}

impl ScanQuery {
    /// None for a vector without length.
    fn new(vector: &[f32]) -> Option<ScanQuery> {
        let norm = vector.iter().map(|x| x * x).sum::<f32>().sqrt();
        if norm <= 0.0 || !norm.is_finite() {
            return None;
        }
        let (scale, codes) = vector_packs::quantize(vector);
        Some(ScanQuery {
            unit: vector.iter().map(|x| x / norm).collect(),
            scale,
            codes,
        })
    }

    /// The approximate cosine with the `i`-th vector of a pack.
    fn approx(&self, pack: &Pack<'_>, i: usize) -> f32 {
        dot_codes(&self.codes, pack.codes_of(i)) as f32 * self.scale * pack.scale(i)
    }
}

/// Dot product of two quantized vectors (the compiler vectorizes it: integer
/// sums may be reordered).
fn dot_codes(query: &[i8], codes: &[u8]) -> i32 {
    query
        .iter()
        .zip(codes)
        .map(|(&q, &c)| i32::from(q) * i32::from(c as i8))
        .sum()
}

fn item_ref(kind: VectorKind, id: i64) -> ItemRef {
    let kind = match kind {
        VectorKind::Observation => Kind::Observation,
        VectorKind::Summary => Kind::Summary,
    };
    ItemRef { kind, id }
}

fn best_first<T>(a: &(f32, T), b: &(f32, T)) -> Ordering {
    b.0.partial_cmp(&a.0).unwrap_or(Ordering::Equal)
}

/// Every stored vector of the query's model with its score: approximate
/// from the packs, exact from the rows no pack covers yet.
fn score_all(conn: &Connection, query: &QueryVector, q: &ScanQuery) -> Result<Vec<(f32, Near)>> {
    let mut packed: Vec<(f32, Near)> = Vec::new();
    let mut unpacked: Vec<(f32, Near)> = Vec::new();
    vector_packs::scan(
        conn,
        &query.model,
        q.unit.len(),
        |pack| {
            packed
                .extend((0..pack.len()).map(|i| (q.approx(pack, i), Near::Packed(pack.row_id(i)))));
        },
        |row| {
            let id = item_ref(row.kind, row.record_id);
            unpacked.push((cosine_blob(&q.unit, row.vector), Near::Exact(id)));
        },
    )?;
    packed.append(&mut unpacked);
    Ok(packed)
}

/// The full-precision cosine of each candidate, read from its row for a
/// packed one (a row gone meanwhile is dropped).
fn rescore(conn: &Connection, unit: &[f32], near: Vec<(f32, Near)>) -> Result<Vec<(f32, ItemRef)>> {
    let mut out = Vec::with_capacity(near.len());
    for (score, near) in near {
        match near {
            Near::Exact(id) => out.push((score, id)),
            Near::Packed(row) => {
                if let Some((kind, id, blob)) = vector_packs::vector_row(conn, row)? {
                    out.push((cosine_blob(unit, &blob), item_ref(kind, id)));
                }
            }
        }
    }
    Ok(out)
}

/// How many of the nearest by the approximate score are re-scored, per
/// record wanted: far more than quantization can reorder, and enough for
/// filters that reject most records.
const RESCORE_PER_WANTED: usize = 20;

/// The records nearest the query that pass the request's filters, best
/// first, at most `depth`; and how many vectors were compared. Packed
/// vectors are compared quantized, and the nearest of them re-scored in
/// full precision, so the order is that of the exact cosine.
fn nearest(
    conn: &Connection,
    req: &SearchRequest,
    query: &QueryVector,
    depth: usize,
) -> Result<(Vec<ItemRef>, u64)> {
    let Some(q) = ScanQuery::new(&query.vector) else {
        return Ok((Vec::new(), 0));
    };
    // One read transaction for the scan, the re-score and the filters: a
    // thousand lookups do not each take and release the file's locks.
    let _read = match conn.is_autocommit() {
        true => Some(conn.unchecked_transaction()?),
        false => None,
    };
    let mut all = score_all(conn, query, &q)?;
    let scanned = all.len() as u64;
    let keep = depth * RESCORE_PER_WANTED;
    if all.len() > keep {
        all.select_nth_unstable_by(keep, best_first);
        all.truncate(keep);
    }
    let mut exact = rescore(conn, &q.unit, all)?;
    exact.sort_by(best_first);
    // Filters are checked best first until the list is full; a request that
    // filters most records out stops after a bounded number of checks.
    let mut out = Vec::with_capacity(depth);
    for (_, id) in exact {
        if search::passes_filters(conn, req, id)? {
            out.push(id);
            if out.len() == depth {
                break;
            }
        }
    }
    Ok((out, scanned))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn obs(id: i64) -> ItemRef {
        ItemRef {
            kind: Kind::Observation,
            id,
        }
    }

    #[test]
    fn fusion_rewards_agreement_and_keeps_what_either_list_found() {
        let fused = fuse(&[obs(1), obs(2), obs(3)], &[obs(3), obs(4)]);
        let ids: Vec<i64> = fused.iter().map(|(id, _)| id.id).collect();
        // 3 is in both lists and wins; 2 and 4 are both second in one list
        // and tie: the full-text order goes first.
        assert_eq!(ids, vec![3, 1, 2, 4]);
    }

    /// Two projects, one observation each with a vector; the query's
    /// vector is nearest the other project's record.
    fn two_projects() -> (tempfile::TempDir, mnemo_store::Store) {
        let tmp = tempfile::tempdir().unwrap();
        let mut store =
            mnemo_store::Store::open(&tmp.path().join("m.db"), std::time::Duration::from_secs(1))
                .unwrap();
        store
            .conn()
            .execute_batch(
                "INSERT INTO projects (id, root, name, created_at) VALUES (1, '/a', 'a', 0), (2, '/b', 'b', 0);",
            )
            .unwrap();
        for (id, title) in [(1, "rounding of totals"), (2, "engine overheats")] {
            let o = mnemo_store::memory::NewObservation {
                uid: format!("o{id}"),
                project_id: Some(id),
                kind: "bugfix".into(),
                title: title.into(),
                created_at: id,
                ..Default::default()
            };
            mnemo_store::memory::insert_observation(store.conn(), &o).unwrap();
        }
        let (todo, _) = store
            .records_to_embed("m", mnemo_store::vectors::Cursor::START, 10)
            .unwrap();
        let vectors: Vec<Vec<f32>> = todo
            .iter()
            .map(|t| {
                if t.id == 1 {
                    vec![1.0, 0.0]
                } else {
                    vec![0.0, 1.0]
                }
            })
            .collect();
        store.put_vectors("m", &todo, &vectors, 0).unwrap();
        (tmp, store)
    }

    fn query(project_id: Option<i64>) -> SearchRequest {
        SearchRequest {
            query: "thermal problems".into(),
            project_id,
            limit: 10,
            ..SearchRequest::default()
        }
    }

    fn near_b() -> Meaning {
        Meaning::Query(QueryVector {
            model: "m".into(),
            vector: vec![0.1, 1.0],
        })
    }

    #[test]
    fn records_found_by_meaning_pass_the_request_filters() {
        let (_tmp, store) = two_projects();
        let all = search(store.conn(), &query(None), near_b()).unwrap();
        let ids: Vec<i64> = all.hits.iter().map(|h| h.id.id).collect();
        assert_eq!(ids, vec![2, 1]);
        assert_eq!(all.meaning.as_ref().unwrap().added, 2);
        let only_a = search(store.conn(), &query(Some(1)), near_b()).unwrap();
        let ids: Vec<i64> = only_a.hits.iter().map(|h| h.id.id).collect();
        assert_eq!(ids, vec![1]);
        // Another model's query finds nothing by meaning.
        let other = Meaning::Query(QueryVector {
            model: "other".into(),
            vector: vec![0.0, 1.0],
        });
        assert!(
            search(store.conn(), &query(None), other)
                .unwrap()
                .hits
                .is_empty()
        );
    }

    #[test]
    fn a_skipped_meaning_is_full_text_with_the_reason() {
        let (_tmp, store) = two_projects();
        let req = SearchRequest {
            query: "rounding".into(),
            limit: 10,
            ..SearchRequest::default()
        };
        let r = search(store.conn(), &req, Meaning::Skipped("down".into())).unwrap();
        assert_eq!(r.hits.len(), 1);
        let note = r.meaning.unwrap();
        assert_eq!((note.used, note.skipped.as_deref()), (false, Some("down")));
        let off = search(store.conn(), &req, Meaning::Off).unwrap();
        assert_eq!(off.meaning, None);
    }

    /// Deterministic pseudo-random floats in [-1, 1).
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

    /// Cosine in f64, one term at a time: the reference.
    fn exact_cosine(a: &[f32], b: &[f32]) -> f64 {
        let dot: f64 = a.iter().zip(b).map(|(x, y)| *x as f64 * *y as f64).sum();
        let na: f64 = a.iter().map(|x| *x as f64 * *x as f64).sum();
        let nb: f64 = b.iter().map(|x| *x as f64 * *x as f64).sum();
        dot / (na.sqrt() * nb.sqrt())
    }

    #[test]
    fn the_scan_finds_the_records_an_exact_cosine_ranks_first() {
        let tmp = tempfile::tempdir().unwrap();
        let mut store =
            mnemo_store::Store::open(&tmp.path().join("m.db"), std::time::Duration::from_secs(1))
                .unwrap();
        for id in 1..=400 {
            let o = mnemo_store::memory::NewObservation {
                uid: format!("o{id}"),
                kind: "change".into(),
                title: format!("record {id}"),
                created_at: id,
                ..Default::default()
            };
            mnemo_store::memory::insert_observation(store.conn(), &o).unwrap();
        }
        let (todo, _) = store
            .records_to_embed("m", mnemo_store::vectors::Cursor::START, 1000)
            .unwrap();
        // 385 floats: whole blocks of the scan and a remainder.
        let vectors: Vec<Vec<f32>> = todo.iter().map(|t| noise(t.id as u64, 385)).collect();
        store.put_vectors("m", &todo, &vectors, 0).unwrap();
        let query = QueryVector {
            model: "m".into(),
            vector: noise(9999, 385),
        };
        let mut exact: Vec<(f64, i64)> = todo
            .iter()
            .zip(&vectors)
            .map(|(t, v)| (exact_cosine(&query.vector, v), t.id))
            .collect();
        exact.sort_by(|a, b| b.0.total_cmp(&a.0));
        let req = SearchRequest {
            limit: 10,
            ..SearchRequest::default()
        };
        let (near, scanned) = nearest(store.conn(), &req, &query, 20).unwrap();
        assert_eq!(scanned, 400);
        let found: Vec<i64> = near.iter().map(|r| r.id).collect();
        let expected: Vec<i64> = exact.iter().take(20).map(|e| e.1).collect();
        assert_eq!(found, expected);
    }

    /// Vectors shaped like a model's: a direction every text shares, one
    /// of a few topics, and noise of its own.
    fn model_like(seed: u64, dim: usize) -> Vec<f32> {
        let common = noise(1, dim);
        let topic = noise(100 + seed % 12, dim);
        let own = noise(seed * 7 + 3, dim);
        (0..dim)
            .map(|i| 0.6 * common[i] + topic[i] + 0.5 * own[i])
            .collect()
    }

    #[test]
    fn packed_vectors_re_scored_rank_as_the_exact_cosine() {
        let tmp = tempfile::tempdir().unwrap();
        let mut store =
            mnemo_store::Store::open(&tmp.path().join("m.db"), std::time::Duration::from_secs(1))
                .unwrap();
        let add = |store: &mut mnemo_store::Store, from: i64, to: i64| {
            store
                .conn()
                .execute(
                    "WITH RECURSIVE n(i) AS (SELECT ?1 UNION ALL SELECT i + 1 FROM n WHERE i < ?2)
                     INSERT INTO observations (id, uid, type, title, created_at)
                     SELECT i, 'o' || i, 'change', 'record ' || i, i FROM n",
                    [from, to],
                )
                .unwrap();
            let (todo, _) = store
                .records_to_embed("m", mnemo_store::vectors::Cursor::START, 10_000)
                .unwrap();
            let vectors: Vec<Vec<f32>> =
                todo.iter().map(|t| model_like(t.id as u64, 384)).collect();
            store.put_vectors("m", &todo, &vectors, 0).unwrap();
        };
        // Three packs, then vectors no pack covers yet: both are scanned.
        add(&mut store, 1, 3000);
        let packed = store
            .pack_vectors("m", vector_packs::PACK_MIN, || false)
            .unwrap();
        assert_eq!(packed, 3);
        add(&mut store, 3001, 3300);
        let req = SearchRequest {
            limit: 10,
            ..SearchRequest::default()
        };
        let stored: Vec<Vec<f32>> = (1..=3300).map(|id| model_like(id, 384)).collect();
        for seed in 0..12 {
            let query = QueryVector {
                model: "m".into(),
                vector: model_like(50_000 + seed, 384),
            };
            let mut exact: Vec<(f64, i64)> = (1..=3300)
                .zip(&stored)
                .map(|(id, v)| (exact_cosine(&query.vector, v), id))
                .collect();
            exact.sort_by(|a, b| b.0.total_cmp(&a.0));
            let (near, scanned) = nearest(store.conn(), &req, &query, 50).unwrap();
            assert_eq!(scanned, 3300);
            let found: Vec<i64> = near.iter().map(|r| r.id).collect();
            let expected: Vec<i64> = exact.iter().take(50).map(|e| e.1).collect();
            assert_eq!(found, expected, "query {seed}");
        }
    }

    #[test]
    fn cosine_of_a_blob_matches_the_plain_one() {
        let a = [1.0_f32, 2.0, 0.0];
        let b = [2.0_f32, 1.0, 1.0];
        let norm = a.iter().map(|x| x * x).sum::<f32>().sqrt();
        let unit: Vec<f32> = a.iter().map(|x| x / norm).collect();
        let blob = vectors::to_blob(&b);
        assert!((cosine_blob(&unit, &blob) - cosine(&a, &b)).abs() < 1e-6);
        assert_eq!(cosine(&a, &[0.0; 3]), 0.0);
    }
}
