//! Memory quality on real sessions: replays Claude Code transcripts through
//! the real hooks and worker, one store per project, and scores what mnemo
//! kept against what happened (see `quality/mod.rs` for the parts and
//! `quality/score.rs` for the matching rules).
//!
//! ```text
//! cargo bench -p mnemo --bench quality
//! MNEMO_QUALITY_TRANSCRIPTS=dir …    # one directory of *.jsonl transcripts (one project)
//! MNEMO_QUALITY_DUMP=dir …           # also write the index, summaries and titles there
//! MNEMO_QUALITY_LIVE=1 …             # the worker runs during the replay, as in real use
//! MNEMO_QUALITY_KEEP=1 …             # keep the data dir and project (to run mnemo on them)
//! MNEMO_BENCH_BIN=path …             # another mnemo binary
//! ```
//!
//! By default every project under `../shared/fixtures/transcripts/` (each
//! subdirectory holding `*.jsonl` files) is replayed into its own store and
//! asked its own questions (`quality/questions/<project>.json`); when there
//! are none the bench says so and does nothing. (From a linked worktree one
//! level deeper, `../../shared` is tried too.)

#[path = "quality/mod.rs"]
mod quality;
#[allow(dead_code)]
mod support;

use std::path::{Path, PathBuf};

fn main() {
    let Some((bin, _)) = support::settings(1) else {
        return;
    };
    let projects = match std::env::var_os("MNEMO_QUALITY_TRANSCRIPTS") {
        Some(dir) => vec![PathBuf::from(dir)],
        None => quality::projects_in(&default_root()),
    };
    if projects.is_empty() {
        println!(
            "quality: no projects of *.jsonl transcripts in {}; set MNEMO_QUALITY_TRANSCRIPTS=dir to score some",
            default_root().display()
        );
        return;
    }
    for dir in projects {
        let dir = dir.canonicalize().unwrap_or(dir);
        run_project(&bin, &dir);
    }
}

/// Replays one project's transcripts into a store of its own and prints
/// its tables.
fn run_project(bin: &Path, dir: &Path) {
    let transcripts = quality::transcripts_in(dir);
    let name = dir.file_name().map_or_else(
        || dir.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    );
    if transcripts.is_empty() {
        println!("quality: no *.jsonl transcripts in {}", dir.display());
        return;
    }
    let questions = quality::questions_for(dir);
    println!(
        "\n## {name}\n\nquality: {} transcripts from {}, {} questions",
        transcripts.len(),
        dir.display(),
        questions.len()
    );
    let worker = if std::env::var_os("MNEMO_QUALITY_LIVE").is_some() {
        quality::replay::Worker::Live
    } else {
        quality::replay::Worker::After
    };
    let report = quality::run(bin, &transcripts, &questions, worker);
    for bad in &report.replay.bad_hooks {
        println!("quality: hook misbehaved: {bad}");
    }
    println!("{}", report.table());
    println!("{}", report.question_table());
    if let Some(dump) = std::env::var_os("MNEMO_QUALITY_DUMP") {
        let dump = PathBuf::from(dump).join(&name);
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

/// `../shared/fixtures/transcripts` beside the repository (or beside the
/// directory holding a linked worktree).
fn default_root() -> PathBuf {
    let repo = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."));
    let rel = "shared/fixtures/transcripts";
    let beside = repo.join("..").join(rel);
    if beside.is_dir() {
        beside
    } else {
        repo.join("../..").join(rel)
    }
}
