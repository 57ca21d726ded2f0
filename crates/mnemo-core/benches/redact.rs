//! Cost of the secret scanner per KB of text, on three inputs: this
//! workspace's source (no secrets: the common case, returned borrowed), the
//! secret corpus file (dense with secrets of every format) and adversarial
//! text made of the scanner's own triggers repeated, at two sizes to show
//! that the cost stays linear. Run with
//! `cargo bench -p mnemo-core --bench redact`.

use std::hint::black_box;
use std::path::Path;
use std::time::{Duration, Instant};

use mnemo_core::privacy::secrets::redact_text;

/// Median per-call time of 15 batches that take about `time` together.
fn measure(time: Duration, mut f: impl FnMut()) -> Duration {
    let started = Instant::now();
    let mut calls = 0u32;
    while started.elapsed() < Duration::from_millis(100) {
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

/// `text` repeated to `len` bytes, cut on a character boundary.
fn sized(text: &str, len: usize) -> String {
    let mut out = String::with_capacity(len + text.len());
    while out.len() < len {
        out.push_str(text);
    }
    let mut cut = len;
    while !out.is_char_boundary(cut) {
        cut -= 1;
    }
    out.truncate(cut);
    out
}

fn workspace_source(root: &Path) -> String {
    let mut corpus = String::new();
    let mut stack = vec![root.to_owned()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        let mut entries: Vec<_> = entries.flatten().map(|e| e.path()).collect();
        entries.sort();
        for path in entries {
            if path.is_dir() && !path.ends_with("tests") && !path.ends_with("target") {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") && !path.ends_with("secrets.rs") {
                corpus.push_str(&std::fs::read_to_string(&path).unwrap_or_default());
            }
        }
    }
    corpus
}

fn main() {
    let quick = !std::env::args().any(|a| a == "--bench");
    let time = Duration::from_millis(if quick { 150 } else { 1500 });
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    // Source once redacted: the workspace's test fixtures hold fake secrets.
    let source = sized(&workspace_source(&manifest.join("..")), 64 * 1024);
    let source = redact_text(&source).into_owned();
    let corpus = std::fs::read_to_string(manifest.join("tests/fixtures/secrets.toml")).unwrap();
    let triggers = "password: |\n  x\n-----END PRIVATE KEY-----\nA,Password\nb,c\nmysql -p-p-p \
                    sk-ant- AKIA ghp_ eyJ.eyJ a:b@c key=value ===== [REDACTED:x <private x \
                    configure set password ' hvs. 1234567890:AA \\n\\t\"token\": \"";
    let inputs = [
        ("workspace source, no secrets", source),
        ("secret corpus file", sized(&corpus, 64 * 1024)),
        ("adversarial triggers, 64 KiB", sized(triggers, 64 * 1024)),
        ("adversarial triggers, 256 KiB", sized(triggers, 256 * 1024)),
    ];
    println!(
        "{:<32} {:>10} {:>12} {:>10}",
        "input", "bytes", "per call", "per KB"
    );
    for (name, text) in &inputs {
        let t = measure(time, || {
            black_box(redact_text(black_box(text)));
        });
        let per_kb = t.as_nanos() as f64 / (text.len() as f64 / 1024.0);
        println!(
            "{name:<32} {:>10} {:>10.1}µs {:>8.0}ns",
            text.len(),
            t.as_nanos() as f64 / 1000.0,
            per_kb
        );
    }
}
