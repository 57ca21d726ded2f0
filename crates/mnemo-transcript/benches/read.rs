//! What the worker pays to read a transcript for a batch's narrative when
//! the file changed since its last read: one whole read of the largest real
//! fixture (2.9 MB with its subagents), median of 20.
//!
//! ```text
//! cargo bench -p mnemo-transcript --bench read
//! ```

use std::path::Path;
use std::time::{Duration, Instant};

use mnemo_core::config::Config;
use mnemo_core::privacy::Sanitizer;

fn main() {
    if !std::env::args().any(|a| a == "--bench") {
        return;
    }
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/spotter/258c7280-ae70-4798-800f-63464d01a85d.jsonl");
    let sanitizer = Sanitizer::new(&Config::default().privacy);
    let mut samples: Vec<Duration> = Vec::new();
    let mut bytes = 0;
    for _ in 0..20 {
        let started = Instant::now();
        let session = mnemo_transcript::read_session(&path, &sanitizer).expect("fixture");
        samples.push(started.elapsed());
        bytes = session.stats.bytes;
    }
    samples.sort_unstable();
    let median = samples[samples.len() / 2];
    println!(
        "read_session: {:.1} MB in {:.1} ms (median of 20), {:.0} MB/s",
        bytes as f64 / 1e6,
        median.as_secs_f64() * 1000.0,
        bytes as f64 / 1e6 / median.as_secs_f64()
    );
}
