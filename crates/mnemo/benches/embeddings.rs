//! Search by meaning: what it costs, against the stand-in `/embeddings`
//! endpoint of the tests on loopback (no real model is reachable here, so
//! this measures cost, never quality).
//!
//! 1. Worker throughput: a real `mnemo worker run` backfills a
//!    10,000-observation store (plus its 1,000 summaries) through the
//!    stand-in; records embedded per second, from start until every record
//!    has a vector.
//! 2. Search latency, whole process, beside `/bin/true` and the same search
//!    with embeddings off, interleaved round-robin (a typical word, a
//!    question, a pasted bug report): first on that store with its 11,000
//!    vectors, then with the vectors table padded to 100,000 (copies of the
//!    real vectors under ids that name no record, so the brute-force scan
//!    reads 100,000 blobs and the nearest list also has to skip records
//!    that fail the filters: the scan's cost at 100k, conservatively).
//!    A synthetic 100,000-observation store takes half an hour to build on
//!    this shared machine, so the full-text part is measured at 10k here.
//!
//! ```text
//! cargo bench -p mnemo --bench embeddings
//! MNEMO_BENCH_EMBED_DIM=768 MNEMO_BENCH_RUNS=20 cargo bench -p mnemo --bench embeddings
//! ```

mod support;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use mnemo_testkit::embeddings::EmbeddingsStandIn;

const GROUPS: &[&[&str]] = &[&["login", "signin", "auth"], &["timeout", "hang", "stall"]];
const MODEL: &str = "stand-in";
const QUESTION: &str = "why does the login request time out when the cache is cold?";
const BUG_REPORT: &str = "Since the last deploy some users cannot log in: the login request \
    hangs and then fails with a timeout after thirty seconds. It happens mostly in the morning \
    when the session cache is cold and many users sign in at the same time. The server log shows \
    the auth handler waiting on the database lock, then a retry, then the token endpoint \
    returning an error to the client. Restarting the worker makes it go away for a while.";

fn main() {
    let Some((bin, runs)) = support::settings(20) else {
        return;
    };
    let dim: usize = std::env::var("MNEMO_BENCH_EMBED_DIM")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(384);
    let stand_in = EmbeddingsStandIn::start(GROUPS, dim);
    let tmp = tempfile::tempdir().expect("temp dir");
    let root = tmp.path().canonicalize().expect("canonical temp dir");
    let home = root.join("home");
    std::fs::create_dir_all(&home).expect("home");

    let (p10k, d10k) = (project(&root, "p10k"), root.join("d10k"));
    mnemo_recall::synth::build(&d10k.join("mnemo.db"), &p10k, 10_000, 0).expect("10k store");
    let (records, took) = backfill_with_worker(&bin, &d10k, &home, &stand_in.base_url());
    println!(
        "worker backfill: {records} records in {:.1} s = {:.0} records/s (dim {dim}, batch 32)",
        took.as_secs_f64(),
        records as f64 / took.as_secs_f64()
    );

    let db = d10k.join("mnemo.db");
    let _held = rusqlite::Connection::open(&db).expect("hold the store open");
    let url = stand_in.base_url();
    latency(&bin, &p10k, &d10k, &home, &url, runs, "11k vectors");
    let padded = pad_vectors(&db, 100_000);
    println!("vectors table padded to {padded}");
    latency(&bin, &p10k, &d10k, &home, &url, runs, "100k vectors");
}

/// Whole-process search latency with embeddings on and off.
fn latency(bin: &Path, dir: &Path, data: &Path, home: &Path, url: &str, runs: usize, what: &str) {
    let mut cases: Vec<(String, Command)> = vec![("/bin/true (baseline)".into(), true_cmd())];
    for (kind, query) in [
        ("typical word", "timeout"),
        ("question", QUESTION),
        ("bug report", BUG_REPORT),
    ] {
        for on in [false, true] {
            let mut c = Command::new(bin);
            c.args(["search", "-n", "10", "--", query])
                .current_dir(dir)
                .env_clear()
                .env("HOME", home)
                .env("PATH", std::env::var_os("PATH").unwrap_or_default())
                .env("MNEMO_DATA_DIR", data)
                .env("MNEMO_NO_WORKER", "1");
            if on {
                c.env("MNEMO_EMBEDDINGS_BASE_URL", url)
                    .env("MNEMO_EMBEDDINGS_MODEL", MODEL);
            }
            let state = if on { "on" } else { "off" };
            cases.push((format!("{what}: search, {kind}, embeddings {state}"), c));
        }
    }
    let mut rows: Vec<(String, Vec<Duration>)> =
        cases.iter().map(|(l, _)| (l.clone(), Vec::new())).collect();
    for _ in 0..runs {
        for (i, (_, cmd)) in cases.iter_mut().enumerate() {
            rows[i].1.push(support::timed_run(cmd, None));
        }
    }
    support::print_table(rows.iter_mut().map(|(n, s)| (n.as_str(), s)));
}

/// Copies of the stored vectors under summary ids that name no record,
/// until the table holds `target` vectors; the count reached.
fn pad_vectors(db: &Path, target: i64) -> i64 {
    let conn = rusqlite::Connection::open(db).expect("open");
    let mut have: i64 = conn
        .query_row("SELECT count(*) FROM embeddings", [], |r| r.get(0))
        .expect("count");
    let mut offset = 10_000_000;
    while have < target {
        let added = conn
            .execute(
                "INSERT INTO embeddings (kind, record_id, model, dim, vector, content_hash, created_at)
                 SELECT 'summary', record_id + ?1 + iif(kind = 'summary', 5000000, 0),
                        model, dim, vector, content_hash, created_at
                 FROM embeddings WHERE record_id < 10000000 LIMIT ?2",
                rusqlite::params![offset, target - have],
            )
            .expect("pad");
        have += added as i64;
        offset += 10_000_000;
    }
    have
}

fn true_cmd() -> Command {
    Command::new("/bin/true")
}

fn project(root: &Path, name: &str) -> PathBuf {
    let p = root.join(name);
    std::fs::create_dir_all(&p).expect("project dir");
    let ok = Command::new("git")
        .args(["init", "-q"])
        .current_dir(&p)
        .status()
        .is_ok_and(|s| s.success());
    assert!(ok, "git init");
    p
}

/// Starts a worker on `data` and waits until every record has a vector;
/// (records, time taken).
fn backfill_with_worker(bin: &Path, data: &Path, home: &Path, url: &str) -> (i64, Duration) {
    let db = data.join("mnemo.db");
    let conn = rusqlite::Connection::open(&db).expect("open");
    let all: i64 = conn
        .query_row(
            "SELECT (SELECT count(*) FROM observations) + (SELECT count(*) FROM summaries)",
            [],
            |r| r.get(0),
        )
        .expect("count");
    let started = Instant::now();
    let mut worker = Command::new(bin)
        .args(["worker", "run"])
        .env_clear()
        .env("HOME", home)
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("MNEMO_DATA_DIR", data)
        .env("MNEMO_WORKER_PORT", "0")
        .env("MNEMO_EMBEDDINGS_BASE_URL", url)
        .env("MNEMO_EMBEDDINGS_MODEL", MODEL)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("worker starts");
    loop {
        let done: i64 = conn
            .query_row("SELECT count(*) FROM embeddings", [], |r| r.get(0))
            .unwrap_or(0);
        if done >= all {
            break;
        }
        assert!(
            started.elapsed() < Duration::from_secs(1800),
            "backfill stalled at {done}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    let took = started.elapsed();
    let _ = worker.kill();
    let _ = worker.wait();
    (all, took)
}
