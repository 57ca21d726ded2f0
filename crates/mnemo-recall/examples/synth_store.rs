//! Builds a large synthetic store for recall benchmarks (see
//! [`mnemo_recall::synth`] and `bench/recall.sh`).
//!
//! ```text
//! cargo run --release -p mnemo-recall --features synth --example synth_store -- \
//!     DB PROJECT_DIR OBSERVATIONS [OTHER_PROJECT_OBSERVATIONS]
//! ```

use std::path::Path;
use std::time::Instant;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.len() < 3 {
        eprintln!("usage: synth_store DB PROJECT_DIR OBSERVATIONS [OTHER_PROJECT_OBSERVATIONS]");
        std::process::exit(2);
    }
    let root = std::fs::canonicalize(&args[1]).expect("PROJECT_DIR exists");
    let n: usize = args[2].parse().expect("OBSERVATIONS is a number");
    let other: usize = args.get(3).map_or(0, |a| a.parse().expect("a number"));
    let started = Instant::now();
    mnemo_recall::synth::build(Path::new(&args[0]), &root, n, other).expect("build the store");
    eprintln!(
        "synth_store: {n} observations in {} (+{other} in another project) in {:.1?}",
        root.display(),
        started.elapsed()
    );
}
