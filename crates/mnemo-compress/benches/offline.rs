//! Throughput of the offline compressor and of the renderer on a realistic
//! turn (`sample::turn`, the shapes Claude Code 2.1.328 sends), in events per
//! second; `narrated` is the same turn with the transcript's narrative (a
//! note before every other call, a question, two earlier pieces to merge).
//! Run with `cargo bench -p mnemo-compress --bench offline`.

use std::hint::black_box;
use std::time::{Duration, Instant};

use mnemo_compress::{DEFAULT_RENDER_BUDGET, offline, render_batch, sample};

/// Runs `f` repeatedly for about `time` and returns the median of 15
/// batches' per-call duration.
fn measure(time: Duration, mut f: impl FnMut()) -> Duration {
    // Warm up and size a batch to ~1/15 of the time.
    let started = Instant::now();
    let mut calls = 0u32;
    while started.elapsed() < Duration::from_millis(200) {
        f();
        calls += 1;
    }
    let per_call = started.elapsed() / calls.max(1);
    let batch = ((time / 15).as_nanos() / per_call.as_nanos().max(1)).max(1) as u32;
    let mut samples: Vec<Duration> = (0..15)
        .map(|_| {
            let t = Instant::now();
            for _ in 0..batch {
                f();
            }
            t.elapsed() / batch
        })
        .collect();
    samples.sort();
    samples[7]
}

fn main() {
    // `cargo test --benches` runs this with `--bench`-less args; keep it short then.
    let quick = !std::env::args().any(|a| a == "--bench");
    let time = if quick {
        Duration::from_millis(300)
    } else {
        Duration::from_secs(3)
    };
    for events in [8usize, 40, 200] {
        let batch = sample::turn(events);
        let t = measure(time, || {
            black_box(offline(black_box(&batch)));
        });
        println!(
            "offline  {events:>4} events: {:>9.1} µs/batch  {:>10.0} events/s",
            t.as_secs_f64() * 1e6,
            events as f64 / t.as_secs_f64()
        );
        let narrated = sample::narrated_turn(events);
        let t = measure(time, || {
            black_box(offline(black_box(&narrated)));
        });
        println!(
            "narrated {events:>4} events: {:>9.1} µs/batch  {:>10.0} events/s",
            t.as_secs_f64() * 1e6,
            events as f64 / t.as_secs_f64()
        );
        let t = measure(time, || {
            black_box(render_batch(black_box(&batch), DEFAULT_RENDER_BUDGET));
        });
        println!(
            "render   {events:>4} events: {:>9.1} µs/batch  {:>10.0} events/s",
            t.as_secs_f64() * 1e6,
            events as f64 / t.as_secs_f64()
        );
    }
}
