//! Worker benchmarks (ignored by default; run in release):
//!
//! ```text
//! cargo test --release -p mnemo --test worker_bench -- --ignored --nocapture --test-threads 1
//! MNEMO_BENCH_TURNS=500 …      # a bigger backlog for the throughput figure
//! ```
//!
//! - idle resident memory of a fresh worker (VmRSS from /proc), and after
//!   it drained the backlog;
//! - offline compression throughput: a backlog captured by real hooks while
//!   no worker ran, then the time from the worker answering to every event
//!   done (lease, compress, store, mark done: the whole queue path);
//! - latency from a PostToolUse + Stop pair of real hook processes to the
//!   observation arriving on `/api/stream` (offline provider).

mod common;
#[path = "common/worker.rs"]
mod worker_support;

use std::time::{Duration, Instant};

use common::*;
use worker_support::*;

fn rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap()
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    sorted[((sorted.len() - 1) as f64 * p).round() as usize]
}

#[test]
#[ignore = "benchmark: cargo test --release -p mnemo --test worker_bench -- --ignored --nocapture"]
fn worker_figures() {
    let env = Env::new();
    let proj = project(&env, "bench");
    let turns: usize = std::env::var("MNEMO_BENCH_TURNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(200);
    let per_turn = 10;

    // Backlog through real hooks, two sessions in parallel.
    let started = Instant::now();
    std::thread::scope(|s| {
        for t in 0..2 {
            let (env, proj) = (&env, &proj);
            s.spawn(move || {
                let session = format!("bench000-0000-0000-0000-00000000000{t}");
                for n in 1..=turns / 2 {
                    let names: Vec<String> = (0..per_turn)
                        .map(|i| format!("s{t}/t{n}/f{i}.rs"))
                        .collect();
                    let refs: Vec<&str> = names.iter().map(String::as_str).collect();
                    turn(env, proj, &session, n, &refs);
                }
            });
        }
    });
    let total = env.count("SELECT count(*) FROM events");
    eprintln!(
        "backlog: {total} events ({turns} turns of {per_turn} writes + turn end) captured in {:.1} s",
        started.elapsed().as_secs_f64()
    );

    // From spawning the worker (its start-up included) to every event done.
    let start = Instant::now();
    let mut worker = Worker::start(&env, |_| {});
    wait_all_done(&env, Duration::from_secs(600));
    let elapsed = start.elapsed();
    eprintln!(
        "offline throughput: {total} events in {:.2} s (worker start-up included) = {:.0} events/s ({:.0} turns/s)",
        elapsed.as_secs_f64(),
        total as f64 / elapsed.as_secs_f64(),
        turns as f64 / elapsed.as_secs_f64()
    );
    // The drain alone, from the worker's own log: first batch stored to last.
    let log = std::fs::read_to_string(env.data().join("logs/worker.log")).unwrap();
    let stamps: Vec<i64> = log
        .lines()
        .filter(|l| l.contains(" events -> "))
        .filter_map(|l| mnemo_core::time::parse_rfc3339(l.split_whitespace().next()?))
        .collect();
    if let (Some(first), Some(last)) = (stamps.first(), stamps.last()) {
        let ms = (last - first).max(1) as f64;
        eprintln!(
            "drain alone (worker log, first to last of {} batches): {:.0} ms = {:.0} events/s",
            stamps.len(),
            ms,
            total as f64 / (ms / 1000.0)
        );
    }
    eprintln!(
        "RSS after draining the backlog: {:.1} MiB",
        rss_kib(worker.pid) as f64 / 1024.0
    );
    worker.signal(libc::SIGTERM);
    worker.wait_exit(Duration::from_secs(10));
    drop(worker);

    // Idle footprint of a fresh worker on the same (now large) store.
    let idle = Worker::start(&env, |_| {});
    std::thread::sleep(Duration::from_secs(2));
    eprintln!(
        "idle RSS of a fresh worker: {:.1} MiB",
        rss_kib(idle.pid) as f64 / 1024.0
    );

    // Hook-to-stream latency.
    let mut stream = Sse::connect(idle.port, &idle.token);
    let session = "benchlat-0000-0000-0000-000000000001";
    let mut samples = Vec::new();
    for n in 1..=60 {
        let t0 = Instant::now();
        turn(&env, &proj, session, n, &[&format!("lat{n}.rs")]);
        let hooks_done = t0.elapsed();
        loop {
            let (kind, data) = stream
                .next_event(Duration::from_secs(10))
                .expect("an event");
            if kind == "observation" && data["prompt_number"] == n {
                break;
            }
        }
        samples.push((t0.elapsed(), t0.elapsed() - hooks_done));
    }
    let mut whole: Vec<Duration> = samples.iter().map(|s| s.0).collect();
    let mut after_stop: Vec<Duration> = samples.iter().map(|s| s.1).collect();
    whole.sort();
    after_stop.sort();
    eprintln!(
        "hook -> SSE latency over {} turns (UserPromptSubmit + PostToolUse + Stop hooks, then the \
         observation on /api/stream): median {:.1} ms, p90 {:.1} ms; from the Stop hook's exit: \
         median {:.1} ms, p90 {:.1} ms",
        whole.len(),
        percentile(&whole, 0.5).as_secs_f64() * 1e3,
        percentile(&whole, 0.9).as_secs_f64() * 1e3,
        percentile(&after_stop, 0.5).as_secs_f64() * 1e3,
        percentile(&after_stop, 0.9).as_secs_f64() * 1e3,
    );
}
