//! Importing transcripts: `mnemo import --transcripts` over 100 MB of
//! Claude Code sessions (the four real fixtures of mnemo-transcript, copied
//! with fresh session ids until they weigh 100 MB), into an empty store,
//! then again (everything already imported). Prints MB/s.
//!
//! ```text
//! cargo bench -p mnemo --bench transcript_import
//! MNEMO_BENCH_BIN=target/release/mnemo MNEMO_BENCH_RUNS=3 cargo bench -p mnemo --bench transcript_import
//! ```

#[allow(dead_code)] // the table printer is for the latency benches
mod support;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

const TARGET_BYTES: u64 = 100 * 1000 * 1000;

fn main() {
    let Some((bin, runs)) = support::settings(3) else {
        return;
    };
    let fixtures =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../mnemo-transcript/tests/fixtures/spotter");
    let tmp = tempfile::tempdir().expect("temp dir");
    let projects = tmp.path().join("projects");
    let bytes = build_corpus(&fixtures, &projects.join("-home-u-spotter"));
    println!(
        "corpus: {:.1} MB of transcripts in {}",
        bytes as f64 / 1e6,
        projects.display()
    );
    let mut first = Vec::new();
    let mut again = Vec::new();
    for run in 0..runs {
        let data = tmp.path().join(format!("data-{run}"));
        let mut cmd = import_command(&bin, &projects, &data);
        first.push(support::timed_run(&mut cmd, None));
        let mut cmd = import_command(&bin, &projects, &data);
        again.push(support::timed_run(&mut cmd, None));
    }
    report("into an empty store", &mut first, bytes);
    report("again (nothing new)", &mut again, bytes);
}

fn import_command(bin: &Path, projects: &Path, data: &Path) -> Command {
    let mut cmd = Command::new(bin);
    cmd.args(["import", "--transcripts"])
        .arg(projects)
        .env("MNEMO_DATA_DIR", data)
        .env("MNEMO_NO_WORKER", "1");
    cmd
}

fn report(name: &str, samples: &mut [Duration], bytes: u64) {
    let median = support::percentile(samples, 0.5);
    println!(
        "| {name} | median {:.2} s | {:.1} MB/s |",
        median.as_secs_f64(),
        bytes as f64 / 1e6 / median.as_secs_f64()
    );
}

/// Copies of every fixture session (with its subagents' folder), each with
/// a fresh session id, until `TARGET_BYTES` is reached. Returns the bytes.
fn build_corpus(fixtures: &Path, dir: &Path) -> u64 {
    std::fs::create_dir_all(dir).unwrap();
    let sessions: Vec<(PathBuf, String)> = std::fs::read_dir(fixtures)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .map(|p| {
            let text = std::fs::read_to_string(&p).unwrap();
            let id = session_id(&text);
            (p, id)
        })
        .collect();
    let mut total = 0;
    let mut copy = 0u32;
    while total < TARGET_BYTES {
        copy += 1;
        for (path, id) in &sessions {
            let fresh = format!("{copy:08x}-0000-4000-8000-{:012x}", total);
            let text = std::fs::read_to_string(path).unwrap().replace(id, &fresh);
            total += text.len() as u64;
            std::fs::write(dir.join(format!("{fresh}.jsonl")), text).unwrap();
            let subagents = path.with_extension("").join("subagents");
            if let Ok(entries) = std::fs::read_dir(&subagents) {
                let to = dir.join(&fresh).join("subagents");
                std::fs::create_dir_all(&to).unwrap();
                for e in entries {
                    let p = e.unwrap().path();
                    let text = std::fs::read_to_string(&p).unwrap().replace(id, &fresh);
                    total += text.len() as u64;
                    std::fs::write(to.join(p.file_name().unwrap()), text).unwrap();
                }
            }
        }
    }
    total
}

fn session_id(text: &str) -> String {
    text.lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .find_map(|v| {
            v.get("sessionId")
                .and_then(|s| s.as_str())
                .map(str::to_owned)
        })
        .expect("a session id")
}
