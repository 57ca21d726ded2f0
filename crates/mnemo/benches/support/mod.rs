//! What the whole-process benches share: timing one spawned process fed a
//! payload through a real pipe, and reporting medians beside a baseline.

use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// What to measure and how often: the binary (`MNEMO_BENCH_BIN`, else the
/// one cargo built) and the runs per scenario (`MNEMO_BENCH_RUNS`, else
/// `default_runs`). None under `cargo test --benches`, which passes no
/// `--bench` and should not spend minutes building stores.
pub fn settings(default_runs: usize) -> Option<(PathBuf, usize)> {
    if !std::env::args().any(|a| a == "--bench") {
        return None;
    }
    let bin = std::env::var_os("MNEMO_BENCH_BIN")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_BIN_EXE_mnemo")));
    let runs = std::env::var("MNEMO_BENCH_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default_runs);
    Some((bin, runs))
}

/// Spawns `cmd` (stdout and stderr to null), writes `payload` to its stdin
/// (or gives it none), waits, and returns the wall time. Panics if the
/// process fails: a bench of a failing command measures nothing.
pub fn timed_run(cmd: &mut Command, payload: Option<&[u8]>) -> Duration {
    cmd.stdin(if payload.is_some() {
        Stdio::piped()
    } else {
        Stdio::null()
    })
    .stdout(Stdio::null())
    .stderr(Stdio::null());
    let started = Instant::now();
    let mut child = cmd.spawn().expect("spawn");
    if let (Some(mut stdin), Some(p)) = (child.stdin.take(), payload) {
        // /bin/true exits without reading; a broken pipe is expected there.
        let _ = stdin.write_all(p);
    }
    let status = child.wait().expect("wait");
    let elapsed = started.elapsed();
    assert!(status.success(), "{cmd:?} exited with {status}");
    elapsed
}

pub fn percentile(samples: &mut [Duration], q: f64) -> Duration {
    samples.sort_unstable();
    samples[((samples.len() - 1) as f64 * q).round() as usize]
}

/// A markdown table of median, p90 and the ratio to the first row's median
/// (the baseline).
pub fn print_table<'a>(rows: impl IntoIterator<Item = (&'a str, &'a mut Vec<Duration>)>) {
    let mut rows: Vec<_> = rows.into_iter().collect();
    let Some((_, first)) = rows.first_mut() else {
        return;
    };
    let baseline = percentile(first, 0.5);
    println!("| scenario | median | p90 | × /bin/true |");
    println!("|---|---:|---:|---:|");
    for (name, samples) in rows {
        let med = percentile(samples, 0.5);
        let p90 = percentile(samples, 0.9);
        println!(
            "| {name} | {:.2} ms | {:.2} ms | {:.1} |",
            ms(med),
            ms(p90),
            med.as_secs_f64() / baseline.as_secs_f64()
        );
    }
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}
