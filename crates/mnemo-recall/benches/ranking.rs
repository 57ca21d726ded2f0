//! Ranking quality: mnemo's search against a plain BM25, same store, same run.
//!
//!   cargo bench -p mnemo-recall --bench ranking
//!   MNEMO_RANKING_DB=~/.mnemo/mnemo.db cargo bench -p mnemo-recall --bench ranking
//!   MNEMO_RANKING_VERBOSE=1 ...   (one line per question: both ranks)
//!
//! Builds a store from `ranking_corpus` (answers written by hand among
//! several hundred generated records of ordinary work, see there), plus,
//! when `MNEMO_RANKING_DB` names a mnemo database, every observation and
//! summary of that database as more memory to search through. Each question
//! is then asked of
//!
//! - the baseline: one FTS5 table (same tokenizer) holding each record's
//!   text concatenated, `bm25()` with default weights, the question's words
//!   ORed as they are (each quoted, so no word is read as syntax);
//! - mnemo: `mnemo_recall::search::search` over the same store, as
//!   `mnemo search` runs it.
//!
//! and the rank of the right record in the first 10 is scored: mean
//! reciprocal rank (0 when absent), top-1 and top-3 hit rates.

mod ranking_corpus;

use std::collections::HashMap;
use std::path::Path;
use std::time::Duration;

use mnemo_recall::ids::{ItemRef, Kind};
use mnemo_recall::search::{SearchRequest, search};
use mnemo_store::Store;
use mnemo_store::memory::{NewObservation, NewSummary, insert_observation, insert_summary};
use ranking_corpus::{ANSWERS, QUESTIONS, Rng};
use rusqlite::Connection;

/// Generated records of ordinary work around the answers.
const NOISE_OBSERVATIONS: usize = 600;
const NOISE_SUMMARIES: usize = 120;
/// Answers that a later answer replaces: written in the first half.
const EARLIER: &[&str] = &["sessions-redis", "hash-bcrypt", "errors-text"];
/// Results looked at per question.
const DEPTH: usize = 10;

fn main() {
    let tmp = tempfile::tempdir().expect("temp dir");
    let store = Store::open(&tmp.path().join("ranking.db"), Duration::from_secs(5)).expect("store");
    let conn = store.conn();
    let answers = build(conn);
    let extra = std::env::var_os("MNEMO_RANKING_DB").map(|p| import(conn, Path::new(&p)));
    build_baseline(conn);
    let verbose = std::env::var_os("MNEMO_RANKING_VERBOSE").is_some();
    if let Ok(q) = std::env::var("MNEMO_RANKING_SHOW") {
        show_query(conn, &q);
        return;
    }

    let mut base = Score::default();
    let mut ours = Score::default();
    for q in QUESTIONS {
        let want = answers[q.answer];
        let b = rank(&baseline(conn, q.text), want);
        let m = rank(&mnemo(conn, q.text), want);
        base.add(b);
        ours.add(m);
        if verbose {
            let short: String = q.text.chars().take(70).collect();
            println!("baseline {:>3}  mnemo {:>3}  {short:?}", show(b), show(m));
        }
    }
    let records: i64 = conn
        .query_row(
            "SELECT (SELECT count(*) FROM observations) + (SELECT count(*) FROM summaries)",
            [],
            |r| r.get(0),
        )
        .unwrap();
    println!(
        "ranking: {} questions over {records} records{}",
        QUESTIONS.len(),
        extra
            .map(|n| format!(" ({n} from MNEMO_RANKING_DB)"))
            .unwrap_or_default()
    );
    println!("{:<26} {:>6} {:>7} {:>7}", "", "MRR", "top-1", "top-3");
    base.print("plain BM25 (FTS5, OR)", QUESTIONS.len());
    ours.print("mnemo search", QUESTIONS.len());
}

/// Writes the answers among the generated records, oldest first; returns
/// each answer's id.
fn build(conn: &Connection) -> HashMap<&'static str, ItemRef> {
    let mut rng = Rng::new(0x6d6e_656d_6f21);
    let total = NOISE_OBSERVATIONS + ANSWERS.len();
    // Where each answer goes in the sequence: earlier decisions in the
    // first half, everything else anywhere after them.
    let mut slots: HashMap<usize, usize> = HashMap::new();
    for (i, a) in ANSWERS.iter().enumerate() {
        loop {
            let s = if EARLIER.contains(&a.key) {
                rng.below(total / 2)
            } else {
                total / 2 + rng.below(total / 2)
            };
            if let std::collections::hash_map::Entry::Vacant(e) = slots.entry(s) {
                e.insert(i);
                break;
            }
        }
    }
    let project = project(conn);
    let base_ms: i64 = 1_780_000_000_000;
    let mut ids = HashMap::new();
    let mut noise = 0;
    let mut summaries = 0;
    for slot in 0..total {
        let created_at = base_ms + slot as i64 * 3_600_000;
        let obs = match slots.get(&slot) {
            Some(&a) => ranking_corpus::answer_observation(&ANSWERS[a]),
            None => {
                noise += 1;
                ranking_corpus::noise_observation(&mut rng, noise)
            }
        };
        let id = insert_observation(
            conn,
            &NewObservation {
                project_id: Some(project),
                created_at,
                ..obs
            },
        )
        .unwrap()
        .expect("new observation");
        if let Some(&a) = slots.get(&slot) {
            ids.insert(ANSWERS[a].key, ItemRef::observation(id));
        }
        if slot % (total / NOISE_SUMMARIES).max(1) == 0 && summaries < NOISE_SUMMARIES {
            summaries += 1;
            let s = ranking_corpus::noise_summary(&mut rng, summaries);
            insert_summary(
                conn,
                &NewSummary {
                    project_id: Some(project),
                    created_at: created_at + 1,
                    ..s
                },
            )
            .unwrap();
        }
    }
    ids
}

fn project(conn: &Connection) -> i64 {
    conn.query_row(
        "INSERT INTO projects (root, name, created_at) VALUES ('/bench/shop', 'shop', 0)
         RETURNING id",
        [],
        |r| r.get(0),
    )
    .unwrap()
}

/// Copies another database's observations and summaries in (a second
/// project); returns how many.
fn import(conn: &Connection, path: &Path) -> usize {
    let other = Connection::open_with_flags(path, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
        .unwrap_or_else(|e| panic!("MNEMO_RANKING_DB {}: {e}", path.display()));
    let project: i64 = conn
        .query_row(
            "INSERT INTO projects (root, name, created_at) VALUES ('/bench/real', 'real', 0)
             RETURNING id",
            [],
            |r| r.get(0),
        )
        .unwrap();
    let list = |s: String| mnemo_store::parse_json_list(&s);
    let mut n = 0;
    let mut stmt = other
        .prepare(
            "SELECT uid, type, title, subtitle, narrative, facts, concepts, files_read,
                    files_modified, created_at FROM observations",
        )
        .unwrap();
    let rows = stmt
        .query_map([], |r| {
            Ok(NewObservation {
                uid: format!("real-{}", r.get::<_, String>(0)?),
                project_id: Some(project),
                kind: r.get(1)?,
                title: r.get(2)?,
                subtitle: r.get(3)?,
                narrative: r.get(4)?,
                facts: list(r.get(5)?),
                concepts: list(r.get(6)?),
                files_read: list(r.get(7)?),
                files_modified: list(r.get(8)?),
                source: "real".into(),
                created_at: r.get(9)?,
                ..Default::default()
            })
        })
        .unwrap();
    for o in rows {
        n += insert_observation(conn, &o.unwrap()).unwrap().is_some() as usize;
    }
    let mut stmt = other
        .prepare(
            "SELECT uid, request, investigated, learned, completed, next_steps, notes, created_at
             FROM summaries",
        )
        .unwrap();
    let rows = stmt
        .query_map([], |r| {
            Ok(NewSummary {
                uid: format!("real-{}", r.get::<_, String>(0)?),
                project_id: Some(project),
                request: r.get(1)?,
                investigated: r.get(2)?,
                learned: r.get(3)?,
                completed: r.get(4)?,
                next_steps: r.get(5)?,
                notes: r.get(6)?,
                source: "real".into(),
                created_at: r.get(7)?,
                ..Default::default()
            })
        })
        .unwrap();
    for s in rows {
        n += insert_summary(conn, &s.unwrap()).unwrap().is_some() as usize;
    }
    n
}

/// The baseline's index: each record's text in one column.
fn build_baseline(conn: &Connection) {
    conn.execute_batch(
        "CREATE VIRTUAL TABLE baseline USING fts5(
             ref UNINDEXED, body, tokenize='porter unicode61 remove_diacritics 2');
         INSERT INTO baseline (ref, body)
             SELECT '#' || id, concat_ws(' ', title, subtitle, narrative, facts, concepts,
                                         files_read, files_modified)
             FROM observations;
         INSERT INTO baseline (ref, body)
             SELECT 'S' || id, concat_ws(' ', request, investigated, learned, completed,
                                         next_steps, notes)
             FROM summaries;",
    )
    .unwrap();
}

fn baseline(conn: &Connection, question: &str) -> Vec<ItemRef> {
    let words: Vec<String> = question
        .split_whitespace()
        .map(|w| format!("\"{}\"", w.replace('"', "\"\"")))
        .collect();
    let mut stmt = conn
        .prepare(
            "SELECT ref FROM baseline WHERE baseline MATCH ?1 ORDER BY bm25(baseline) LIMIT ?2",
        )
        .unwrap();
    stmt.query_map(rusqlite::params![words.join(" OR "), DEPTH as i64], |r| {
        r.get::<_, String>(0)
    })
    .unwrap()
    .map(|r| ItemRef::parse(&r.unwrap()).unwrap())
    .collect()
}

fn mnemo(conn: &Connection, question: &str) -> Vec<ItemRef> {
    let req = SearchRequest {
        query: question.to_owned(),
        limit: DEPTH,
        ..Default::default()
    };
    search(conn, &req)
        .unwrap()
        .hits
        .into_iter()
        .map(|h| h.id)
        .collect()
}

/// Both lists for one question, with titles (`MNEMO_RANKING_SHOW=question`).
fn show_query(conn: &Connection, q: &str) {
    let title = |r: &ItemRef| -> String {
        mnemo_recall::search::hit(conn, *r)
            .unwrap()
            .map(|h| format!("{} [{}] {}", h.id, h.obs_type.unwrap_or_default(), h.title))
            .unwrap_or_default()
    };
    println!("baseline:");
    for r in baseline(conn, q) {
        println!("  {}", title(&r));
    }
    let req = SearchRequest {
        query: q.to_owned(),
        limit: DEPTH,
        ..Default::default()
    };
    let res = search(conn, &req).unwrap();
    println!("mnemo: {:?}", res.fts_query);
    for h in res.hits {
        println!(
            "  {:.3} {} [{}] {} {:?}",
            h.score,
            h.id,
            h.obs_type.unwrap_or_default(),
            h.title,
            h.superseded_by
        );
    }
}

/// 1-based rank of `want`, None when not in the list.
fn rank(list: &[ItemRef], want: ItemRef) -> Option<usize> {
    debug_assert_eq!(want.kind, Kind::Observation);
    list.iter().position(|r| *r == want).map(|i| i + 1)
}

fn show(r: Option<usize>) -> String {
    r.map(|r| r.to_string()).unwrap_or_else(|| "-".into())
}

#[derive(Default)]
struct Score {
    reciprocal: f64,
    top1: usize,
    top3: usize,
}

impl Score {
    fn add(&mut self, rank: Option<usize>) {
        if let Some(r) = rank {
            self.reciprocal += 1.0 / r as f64;
            self.top1 += (r == 1) as usize;
            self.top3 += (r <= 3) as usize;
        }
    }

    fn print(&self, name: &str, n: usize) {
        println!(
            "{name:<26} {:>6.3} {:>6.0}% {:>6.0}%",
            self.reciprocal / n as f64,
            100.0 * self.top1 as f64 / n as f64,
            100.0 * self.top3 as f64 / n as f64
        );
    }
}
