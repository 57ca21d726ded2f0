//! Real Claude Code sessions (the spotter transcripts, MIT) replayed through
//! the offline compressor, turn by turn and piece by piece as the worker
//! leases them. The checks are structural properties a reader relies on,
//! never the fixtures' exact words. `MNEMO_SHOW=1` prints what was kept.

mod common;

use std::collections::HashSet;
use std::path::PathBuf;

use common::transcript::{self, Turn};
use mnemo_compress::{ObservationDraft, SummaryDraft, VOCABULARY};

const ROOT: &str = "/home/marco/projects/spotter";
/// Events per piece: the worker's default batch size flushes long turns
/// in pieces about this big.
const PIECE: usize = 40;

/// The transcripts: `MNEMO_TRANSCRIPTS`, else `shared/fixtures/transcripts/
/// spotter` beside some folder above the repository.
fn fixture(name: &str) -> PathBuf {
    if let Some(dir) = std::env::var_os("MNEMO_TRANSCRIPTS") {
        return PathBuf::from(dir).join(name);
    }
    let here = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    here.ancestors()
        .map(|a| a.join("shared/fixtures/transcripts/spotter"))
        .find(|d| d.is_dir())
        .unwrap_or_default()
        .join(name)
}

/// The fixtures live outside the repository; a checkout without them skips.
fn load(name: &str) -> Option<Vec<Turn>> {
    let path = fixture(name);
    if !path.exists() {
        eprintln!("skipped: {} not found", path.display());
        return None;
    }
    Some(transcript::turns(&path))
}

struct Replayed {
    turn: Turn,
    observations: Vec<ObservationDraft>,
    summary: SummaryDraft,
}

fn replay(turns: Vec<Turn>) -> Vec<Replayed> {
    let show = std::env::var_os("MNEMO_SHOW").is_some();
    turns
        .into_iter()
        .enumerate()
        .map(|(n, turn)| {
            let root = if turn.cwd.is_empty() {
                ROOT
            } else {
                turn.cwd.as_str()
            };
            let (observations, summary) =
                transcript::compress_turn(&turn, root, n as i64 + 1, PIECE);
            let summary = summary.expect("the last piece completes the turn");
            if show {
                println!("=== turn {} ({} events)", n + 1, turn.events.len());
                println!("{summary:#?}");
                for o in &observations {
                    println!(
                        "- [{}] {}\n    {}\n    {:?}",
                        o.kind, o.title, o.narrative, o.facts
                    );
                }
            }
            Replayed {
                turn,
                observations,
                summary,
            }
        })
        .collect()
}

fn file_name(p: &str) -> &str {
    p.rsplit('/').next().unwrap_or(p)
}

/// Every observation reads as a sentence a person wrote: known type, a
/// title that is not a log line, text never cut mid-word without a mark.
fn reads_well(o: &ObservationDraft) {
    assert!(VOCABULARY.contains(&o.kind.as_str()), "{o:#?}");
    assert!(!o.title.trim().is_empty() && o.title.len() <= 120, "{o:#?}");
    let and_more = o.title.split(" and ").skip(1).any(|rest| {
        rest.split_whitespace()
            .next()
            .is_some_and(|w| w.parse::<usize>().is_ok())
            && rest.contains(" more")
    });
    assert!(
        !(o.title.starts_with("Ran ") && and_more),
        "log-like title: {}",
        o.title
    );
    let n = o.narrative.trim_end();
    assert!(
        n.is_empty() || n.ends_with(['.', '!', '?', '…', ')', '`', '"', '\'']),
        "narrative cut mid-sentence: {n:?}"
    );
    // Definitions named like English words are prose read as code.
    for stop in ["is", "and", "true", "the", "to", "a", "it", "that"] {
        for kind in ["function", "class", "module", "struct"] {
            let bad = format!("{kind} `{stop}`");
            assert!(
                !o.title.contains(&bad) && !o.facts.iter().any(|f| f.contains(&bad)),
                "prose word taken for a definition: {bad} in {o:#?}"
            );
        }
    }
}

#[test]
fn the_long_session_keeps_the_whole_epic_turn() {
    let Some(turns) = load("258c7280-ae70-4798-800f-63464d01a85d.jsonl") else {
        return;
    };
    let replayed = replay(turns);
    for r in &replayed {
        r.observations.iter().for_each(reads_well);
        // A continuation never makes the host's text its request.
        assert!(
            !r.summary.request.contains("<task-notification>")
                && !r
                    .summary
                    .request
                    .starts_with("This session is being continued"),
            "{:?}",
            r.summary.request
        );
    }

    // The epic turn: cut into pieces, summarized as a whole.
    let epic = replayed.iter().max_by_key(|r| r.turn.events.len()).unwrap();
    assert!(epic.turn.events.len() > PIECE, "the epic turn needs pieces");
    let changed: HashSet<&str> = epic
        .turn
        .events
        .iter()
        .filter(|e| !e.failed)
        .flat_map(|e| e.files_modified.iter().map(|p| file_name(p)))
        .collect();
    let text = format!("{} {}", epic.summary.completed, epic.summary.learned);
    let named = changed.iter().filter(|f| text.contains(*f)).count();
    assert!(
        named * 10 >= changed.len() * 7,
        "the summary names {named} of the {} files changed: {}",
        changed.len(),
        epic.summary.completed
    );
    let committed = epic.turn.events.iter().any(|e| {
        !e.failed
            && e.input["command"]
                .as_str()
                .is_some_and(|c| c.contains("git commit"))
    });
    assert!(committed);
    assert!(
        epic.summary.completed.contains("committed \""),
        "{}",
        epic.summary.completed
    );
    // Every changed file is in some observation of the turn.
    let kept: HashSet<&str> = epic
        .observations
        .iter()
        .flat_map(|o| o.files_modified.iter().map(|p| file_name(p)))
        .collect();
    for f in &changed {
        assert!(kept.contains(f), "{f} is in no observation");
    }
    // The why: some observation carries the assistant's own explanation.
    let notes: Vec<&str> = epic
        .turn
        .narrative
        .notes
        .iter()
        .map(|n| n.text.as_str())
        .collect();
    assert!(
        epic.observations.iter().any(|o| notes
            .iter()
            .any(|n| n.len() > 40 && o.narrative.contains(&n[..40]))),
        "no observation explains itself with the assistant's words"
    );
    // The continuations name the request they continue.
    let continued: Vec<&Replayed> = replayed
        .iter()
        .filter(|r| r.turn.prompt.starts_with("<task-notification>"))
        .collect();
    assert!(!continued.is_empty());
    for r in continued {
        assert!(
            r.summary.request.starts_with("Implement"),
            "{:?}",
            r.summary.request
        );
    }
}

#[test]
fn a_settled_question_becomes_a_decision() {
    let Some(turns) = load("subagent.jsonl") else {
        return;
    };
    let replayed = replay(turns);
    let decisions: Vec<&ObservationDraft> = replayed
        .iter()
        .flat_map(|r| &r.observations)
        .filter(|o| o.kind == "decision")
        .collect();
    for r in &replayed {
        r.observations.iter().for_each(reads_well);
    }
    let asked: usize = replayed
        .iter()
        .map(|r| r.turn.narrative.questions.len())
        .sum();
    assert!(asked > 0, "the fixture asks the user");
    assert_eq!(decisions.len(), asked, "{decisions:#?}");
    for d in decisions {
        assert!(d.title.starts_with("Chose "), "{}", d.title);
        assert!(d.title.contains(" over "), "{}", d.title);
        assert!(d.facts.iter().any(|f| f.starts_with("Question: ")));
        assert!(d.facts.iter().any(|f| f.starts_with("Options: ")));
    }
}

#[test]
fn short_sessions_read_well() {
    for name in ["short.jsonl", "tool_heavy.jsonl"] {
        let Some(turns) = load(name) else {
            return;
        };
        for r in replay(turns) {
            r.observations.iter().for_each(reads_well);
            // A request is the user's words, never the host's tags.
            assert!(!r.summary.request.starts_with('<'), "{}", r.summary.request);
            if !r.turn.prompt.starts_with('<') {
                assert!(!r.summary.request.is_empty());
            }
        }
    }
}

/// The figures in BENCHMARKS.md ("What the offline compressor keeps of
/// real sessions"): `cargo test -p mnemo-compress --test replay --
/// --ignored --nocapture figures`.
#[test]
#[ignore = "prints figures for BENCHMARKS.md"]
fn figures() {
    let names = [
        "258c7280-ae70-4798-800f-63464d01a85d.jsonl",
        "subagent.jsonl",
        "short.jsonl",
        "tool_heavy.jsonl",
    ];
    let (mut named, mut changed, mut titles, mut log_like, mut bare, mut decisions) =
        (0, 0, 0, 0, 0, 0);
    let (mut summaries, mut host_requests) = (0, 0);
    for name in names {
        let Some(turns) = load(name) else {
            return;
        };
        for r in replay(turns) {
            summaries += 1;
            let files: HashSet<&str> = r
                .turn
                .events
                .iter()
                .filter(|e| !e.failed)
                .flat_map(|e| e.files_modified.iter().map(|p| file_name(p)))
                .collect();
            let text = format!(
                "{} {} {}",
                r.summary.completed, r.summary.learned, r.summary.investigated
            );
            changed += files.len();
            named += files.iter().filter(|f| text.contains(*f)).count();
            host_requests += usize::from(r.summary.request.starts_with('<'))
                + usize::from(
                    r.summary
                        .request
                        .starts_with("This session is being continued"),
                );
            for o in &r.observations {
                titles += 1;
                log_like += usize::from(o.title.starts_with("Ran ") && o.title.contains(" more"));
                bare += usize::from(o.title.starts_with("Edited "));
                decisions += usize::from(o.kind == "decision");
            }
        }
    }
    println!(
        "files named by their turn's summary: {named}/{changed}; observations: {titles} \
         ('Ran … and N more': {log_like}, bare 'Edited <path>': {bare}, decisions: {decisions}); \
         summaries: {summaries} (request = host text: {host_requests})"
    );
}
