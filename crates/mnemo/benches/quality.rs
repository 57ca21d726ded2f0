//! Memory quality on real sessions: replays Claude Code transcripts through
//! the real hooks and worker, and scores what mnemo kept against what
//! happened (see `quality/mod.rs` for the parts and `quality/score.rs` for
//! the matching rules).
//!
//! ```text
//! cargo bench -p mnemo --bench quality
//! MNEMO_QUALITY_TRANSCRIPTS=dir …    # another directory of *.jsonl transcripts
//! MNEMO_QUALITY_DUMP=dir …           # also write the index, summaries and titles there
//! MNEMO_QUALITY_LIVE=1 …             # the worker runs during the replay, as in real use
//! MNEMO_QUALITY_KEEP=1 …             # keep the data dir and project (to run mnemo on them)
//! MNEMO_BENCH_BIN=path …             # another mnemo binary
//! ```
//!
//! The default transcripts are `../shared/fixtures/transcripts/spotter`
//! relative to the repository; when they are absent the bench says so and
//! does nothing. (From a linked worktree one level deeper, `../../shared`
//! is tried too.)

#[path = "quality/mod.rs"]
mod quality;
#[allow(dead_code)]
mod support;

use std::path::PathBuf;

fn main() {
    let Some((bin, _)) = support::settings(1) else {
        return;
    };
    let dir = std::env::var_os("MNEMO_QUALITY_TRANSCRIPTS")
        .map(PathBuf::from)
        .unwrap_or_else(default_transcripts);
    let dir = dir.canonicalize().unwrap_or(dir);
    let transcripts = quality::transcripts_in(&dir);
    if transcripts.is_empty() {
        println!(
            "quality: no *.jsonl transcripts in {}; set MNEMO_QUALITY_TRANSCRIPTS=dir to score some",
            dir.display()
        );
        return;
    }
    let questions = quality::questions::load(
        &std::fs::read_to_string(quality::QUESTIONS).expect("read questions.json"),
    );
    println!(
        "quality: {} transcripts from {}",
        transcripts.len(),
        dir.display()
    );
    let worker = if std::env::var_os("MNEMO_QUALITY_LIVE").is_some() {
        quality::replay::Worker::Live
    } else {
        quality::replay::Worker::After
    };
    let report = quality::run(&bin, &transcripts, &questions, worker);
    for bad in &report.replay.bad_hooks {
        println!("quality: hook misbehaved: {bad}");
    }
    println!("{}", report.table());
    println!("{}", report.question_table());
    if let Some(dump) = std::env::var_os("MNEMO_QUALITY_DUMP") {
        let dump = PathBuf::from(dump);
        report.dump(&dump).expect("write the dump");
        println!(
            "quality: index, summaries and titles written to {}",
            dump.display()
        );
    }
    if std::env::var_os("MNEMO_QUALITY_KEEP").is_some() {
        let kept = report.replay.dir.keep();
        println!(
            "quality: kept {0}; try MNEMO_DATA_DIR={0}/data mnemo search --project {0}/project …",
            kept.display()
        );
    }
}

/// `../shared/fixtures/transcripts/spotter` beside the repository (or beside
/// the directory holding a linked worktree).
fn default_transcripts() -> PathBuf {
    let repo = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."));
    let rel = "shared/fixtures/transcripts/spotter";
    let beside = repo.join("..").join(rel);
    if beside.is_dir() {
        beside
    } else {
        repo.join("../..").join(rel)
    }
}
