//! Retrieval quality on data mnemo was not built against, beside two
//! baselines computed in the same run over the same records (plain BM25,
//! and BM25 without stop words): MRR and recall@1/3/10 per dataset (see
//! `retrieval/mod.rs`).
//!
//! ```text
//! cargo bench -p mnemo --bench retrieval
//! MNEMO_DEVMEMBENCH=dir …    # DevMemBench's sessions.json and questions.json
//! MNEMO_LOCOMO=path …         # LoCoMo's locomo10.json, or a directory of its conversations
//! MNEMO_RETRIEVAL_ONLY=name … # only the datasets whose name contains this
//! MNEMO_RETRIEVAL_VERBOSE=1 … # also list the questions mnemo ranks below a baseline
//! MNEMO_BENCH_BIN=path …     # another mnemo binary
//! ```
//!
//! Datasets: the real transcripts of `../shared/fixtures/transcripts/`
//! (spotter with `quality/questions/spotter.json`, entireio-cli with
//! `retrieval/entireio_questions.json`), each replayed into its own store;
//! DevMemBench when `MNEMO_DEVMEMBENCH` names its files; LoCoMo when
//! `MNEMO_LOCOMO` names its conversations. A dataset whose
//! files are absent is skipped with a line saying so.

#[path = "quality/mod.rs"]
mod quality;
#[allow(dead_code)]
#[path = "retrieval/mod.rs"]
mod retrieval;
#[allow(dead_code)]
mod support;

use std::path::PathBuf;

fn main() {
    let Some((bin, _)) = support::settings(1) else {
        return;
    };
    let here = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("benches");
    let mut tables = Vec::new();
    let only = std::env::var("MNEMO_RETRIEVAL_ONLY").unwrap_or_default();
    let wanted = |name: &str| name.to_lowercase().contains(&only.to_lowercase());
    for (name, questions) in [
        ("spotter", here.join("quality/questions/spotter.json")),
        (
            "entireio-cli",
            here.join("retrieval/entireio_questions.json"),
        ),
    ] {
        if !wanted(name) {
            continue;
        }
        let Some(dir) = transcripts(name) else {
            println!("retrieval: ../shared/fixtures/transcripts/{name} not found, skipped");
            continue;
        };
        tables.extend(retrieval::transcripts::run(&bin, name, &dir, &questions));
    }
    match std::env::var_os("MNEMO_DEVMEMBENCH") {
        _ if !wanted("DevMemBench") => {}
        Some(dir) => tables.push(retrieval::devmembench::run(&PathBuf::from(dir))),
        None => println!("retrieval: MNEMO_DEVMEMBENCH not set, DevMemBench skipped"),
    }
    match std::env::var_os("MNEMO_LOCOMO") {
        _ if !wanted("LoCoMo") => {}
        Some(path) => tables.extend(retrieval::locomo::run(&PathBuf::from(path))),
        None => println!("retrieval: MNEMO_LOCOMO not set, LoCoMo skipped"),
    }
    for t in &tables {
        println!("\n{}", t.markdown());
        if std::env::var_os("MNEMO_RETRIEVAL_VERBOSE").is_some() {
            print!("{}", t.losses());
        }
    }
}

/// `../shared/fixtures/transcripts/<name>` beside the repository (or beside
/// the directory holding a linked worktree).
fn transcripts(name: &str) -> Option<PathBuf> {
    let repo = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."));
    let rel = format!("shared/fixtures/transcripts/{name}");
    [repo.join("..").join(&rel), repo.join("../..").join(&rel)]
        .into_iter()
        .find(|p| p.is_dir())
}
