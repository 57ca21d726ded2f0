//! Real sessions: a directory of Claude Code transcripts replayed through
//! the real hooks and worker into a store of its own, then a question set
//! asked of `mnemo search` and of both baselines over the stored records.
//! Only questions that some stored record answers are counted; for every
//! ranking, a record answers by what mnemo wrote, never by the user's own
//! words (`Memory::answer_text`).

use std::path::Path;

use super::super::quality::{self, memory::Memory, questions, replay};
use super::{Baselines, Ranks, Table, first_relevant};

/// Replays `dir`'s transcripts and ranks `questions_file`'s questions.
/// None when the directory holds no transcript.
pub fn run(bin: &Path, name: &str, dir: &Path, questions_file: &Path) -> Option<Table> {
    let transcripts = quality::transcripts_in(dir);
    if transcripts.is_empty() {
        println!(
            "retrieval: no transcripts in {}, {name} skipped",
            dir.display()
        );
        return None;
    }
    let text = std::fs::read_to_string(questions_file).expect("read the question set");
    let qs = questions::load(&text);
    let replay = replay::run(bin, &transcripts, replay::Worker::After);
    let memory = Memory::load(&replay.db()).expect("read the stored memory");
    let docs = memory.documents();
    let baselines = Baselines::new(&docs);
    let ranked = questions::rank_all(&replay, &memory, &qs);
    let mut ranks = Vec::new();
    for (q, r) in qs.iter().zip(&ranked).filter(|(_, r)| r.answerable) {
        // Judged as `rank_all` judges mnemo and plain BM25: the user's own
        // words (a prompt, a summary's request) never count as the answer.
        let matches = |id: &str| memory.answer_text(id).is_some_and(|t| q.matches(&t));
        ranks.push(Ranks {
            question: q.q.to_owned(),
            mnemo: r.mnemo,
            bm25: r.bm25,
            bm25_stop: first_relevant(&baselines.without_stop_words(&q.q), matches),
        });
    }
    println!(
        "retrieval: {name}: {} records, {} of {} questions answerable",
        docs.len(),
        ranks.len(),
        qs.len()
    );
    if std::env::var_os("MNEMO_RETRIEVAL_DEBUG").is_some() {
        eprintln!("{name}: store kept in {}", replay.dir.keep().display());
    }
    Some(Table {
        dataset: name.to_owned(),
        ranks,
    })
}
