//! The offline compressor: deterministic, no network, no key.
//!
//! It reads a turn the way a colleague skimming the log would: reads and
//! searches are context, not news, so they fold into the observation they
//! served; changes are grouped per file, and a commit gathers the files it
//! recorded under its subject; bookkeeping (git add/status/push, task-tracker
//! updates, `chmod`) folds into the work next to it; a command that failed and
//! passed after some edits is one bugfix, and one that then succeeded in
//! another form is settled, not a lesson; answered questions are decisions;
//! failures nobody fixed are worth remembering. When the host's transcript
//! tells the turn (`TurnBatch::narrative`), the assistant's words right before
//! a change give its why and, for a title that would only name a file, what
//! it was for. Facts carry the specifics (exit codes, error lines, lines added
//! and removed, whole commit messages, close reasons). The summary says what
//! was completed, learned and left open, merged with a long turn's earlier
//! pieces.
//!
//! The pipeline, one stage per module: `collect` reads the events into work
//! per file, command runs, reads and lookups, questions and the assistant's
//! words, with the concrete values each change set (`values`); `episodes` pairs failures with the runs that settled them;
//! `fixes` drafts a bugfix per episode; `files` drafts the work per file and
//! `work` groups it under the commits that recorded it and turns answers
//! (and a choice the prompt states, `stated_choice`) into decisions; `commands` settles every other run and drafts the
//! failures nobody fixed; `tickets` adds the tracker ids the turn mentions;
//! `finish` orders, explains and clamps the drafts;
//! `summary` writes the turn's summary.

use std::collections::HashMap;

use crate::code::{self, Definition};
use crate::command::{self, CommandClass};
use crate::event::{self, Action, EditPair, Event};
use crate::narrative::{self, Question};
use crate::text::{self, join_and, list_some, one_line, plural};
use crate::{ObservationDraft, Outcome, SummaryDraft, TurnBatch};

mod collect;
mod commands;
mod decision;
mod episodes;
mod files;
mod finish;
mod fixes;
mod messages;
mod stated_choice;
mod summary;
mod tickets;
mod values;
mod work;

/// Caps that keep a turn's memory small.
const MAX_FACTS: usize = 12;
const MAX_CONCEPTS: usize = 6;
const MAX_FILE_OBSERVATIONS: usize = 4;
const MAX_EPISODES: usize = 3;
const MAX_FAILURE_OBSERVATIONS: usize = 2;
const MAX_COMMAND_OBSERVATIONS: usize = 2;
/// Values told per file in a change of several files (in one fact).
const PER_FILE_VALUES: usize = 4;
const TITLE_MAX: usize = 120;

/// The deterministic, network-free compressor.
pub fn offline(batch: &TurnBatch) -> Outcome {
    let retold = crate::common_tools::retold(batch);
    let batch = retold.as_ref().unwrap_or(batch);
    let analysis = Analysis::of(batch);
    let observations = analysis.observations();
    let piece = !batch.turn_complete && !batch.events.is_empty();
    let summary = (batch.turn_complete || piece).then(|| analysis.summary(&observations));
    let (summary, piece_summary) = if piece {
        (None, summary)
    } else {
        (summary, None)
    };
    crate::untrusted::keep_data_only(Outcome {
        observations,
        summary,
        piece_summary,
        source: "offline".into(),
        ..Default::default()
    })
}

/// The partial summary of a piece of a turn still running (None for a
/// complete turn or an empty piece).
pub(crate) fn piece_summary(batch: &TurnBatch) -> Option<SummaryDraft> {
    if batch.turn_complete || batch.events.is_empty() {
        return None;
    }
    offline(batch).piece_summary
}

/// The work done on one file in the batch.
#[derive(Debug, Default)]
struct FileWork {
    path: String,
    rel: String,
    /// Event index of the first successful change.
    first: usize,
    steps: Vec<Step>,
    created: bool,
    rewritten: bool,
    /// Its last change deleted it.
    deleted: bool,
    content_lines: Option<usize>,
    defs_added: Vec<Definition>,
    defs_changed: Vec<Definition>,
    defs_removed: Vec<Definition>,
    renames: Vec<(String, String)>,
    /// Failed attempts at changing it: (event index, error line).
    failures: Vec<(usize, String)>,
}

/// One successful change of a file.
#[derive(Debug, Default, Clone)]
struct Step {
    index: usize,
    /// The Write that created the file.
    creation: bool,
    added: usize,
    removed: usize,
    /// Definitions it added or changed.
    names: Vec<String>,
    /// A small one-line replacement, for facts.
    swap: Option<(String, String)>,
    /// Import lines it added (and nothing else).
    imports: Vec<String>,
    /// Concrete values its added lines set (`values`).
    values: Vec<values::Value>,
}

/// Totals over some steps of a file.
#[derive(Debug, Default)]
struct Tally {
    edits: usize,
    added: usize,
    removed: usize,
    names: Vec<String>,
    swaps: Vec<(String, String)>,
    imports: Vec<String>,
    /// Values set by every step, the creation's included.
    values: Vec<values::Value>,
}

impl Tally {
    fn of<'s>(steps: impl Iterator<Item = &'s Step>) -> Tally {
        let mut t = Tally::default();
        for s in steps {
            for v in &s.values {
                if !t.values.contains(v) {
                    t.values.push(v.clone());
                }
            }
            if s.creation {
                continue;
            }
            t.edits += 1;
            t.added += s.added;
            t.removed += s.removed;
            for n in &s.names {
                if !t.names.contains(n) {
                    t.names.push(n.clone());
                }
            }
            t.swaps.extend(s.swap.clone());
            t.imports.extend(s.imports.iter().cloned());
        }
        t
    }

    fn lines(&self) -> String {
        let mut s = format!("+{} −{} lines", self.added, self.removed);
        if self.edits > 1 {
            s.push_str(&format!(" in {} edits", self.edits));
        }
        s
    }
}

impl FileWork {
    fn push_def(list: &mut Vec<Definition>, def: Definition) {
        if !list.iter().any(|d| d.name == def.name) {
            list.push(def);
        }
    }

    fn changes(&self) -> impl Iterator<Item = usize> + '_ {
        self.steps.iter().map(|s| s.index)
    }
}

/// One run of a shell command.
#[derive(Debug)]
struct Run {
    index: usize,
    shown: String,
    class: CommandClass,
    key: String,
    program: String,
    ok: bool,
    exit_code: Option<i64>,
    headline: Option<String>,
    summary: Option<String>,
    description: Option<String>,
    interrupted: bool,
    /// The whole commit message, for a `git commit`.
    commit: Option<String>,
    /// git that is not a commit, task-tracker updates: folded into the work.
    bookkeeping: bool,
}

/// A command that failed and passed after files were edited (maybe
/// several times over: one story per command).
#[derive(Debug)]
struct Episode {
    /// The first failure and the last success (positions in `runs`).
    fail: usize,
    pass: usize,
    /// Each (failure, success) pair, as positions in `runs`.
    rounds: Vec<(usize, usize)>,
    /// Every failed run of the command in those rounds (retries included).
    failures: Vec<usize>,
    /// Indices into `files`.
    files: Vec<usize>,
}

/// A tool failure other than a command's.
#[derive(Debug)]
struct ToolFailure {
    index: usize,
    what: String,
    headline: String,
}

/// Everything read out of a batch, before it is written up.
struct Analysis<'a> {
    batch: &'a TurnBatch,
    events: Vec<Event<'a>>,
    files: Vec<FileWork>,
    runs: Vec<Run>,
    episodes: Vec<Episode>,
    /// Runs (by position in `runs`) that failed and never passed later.
    unresolved: Vec<usize>,
    failures: Vec<ToolFailure>,
    reads: Vec<(String, Option<u64>)>,
    context_facts: Vec<String>,
    /// Short descriptions of searches, fetches, subagents, MCP calls.
    looked_up: Vec<String>,
    other_tools: Vec<String>,
    notes: Vec<String>,
    /// The assistant's explanation given right before event `i`.
    why: HashMap<usize, String>,
    /// Everything the assistant said right before event `i`.
    said: HashMap<usize, String>,
    /// Questions the user settled: (event index, question).
    questions: Vec<(usize, Question)>,
    /// The unfinished items of the turn's last todo list.
    open_todos: Vec<String>,
}

/// An observation being written.
#[derive(Debug, Default)]
struct Draft {
    first: usize,
    /// The events this observation tells of (positions in the batch).
    events: Vec<usize>,
    /// Events whose preceding words explain this work.
    said_at: Vec<usize>,
    /// The title only describes the change (a file's edits, commands): the
    /// action the assistant announced says better what it was for.
    retitle: bool,
    kind: &'static str,
    title: String,
    subtitle: String,
    narrative: Vec<String>,
    facts: Vec<String>,
    concepts: Vec<&'static str>,
    files_read: Vec<String>,
    files_modified: Vec<String>,
}

impl Draft {
    fn concept(&mut self, c: &'static str) {
        if !self.concepts.contains(&c) {
            self.concepts.push(c);
        }
    }

    fn file_concepts(&mut self, path: &str) {
        if let Some(lang) = code::language_of(path) {
            self.concept(lang);
        }
        if code::is_test_path(path) {
            self.concept("testing");
        }
        if code::is_manifest(path) {
            self.concept("dependencies");
        }
        if path.contains("/.github/workflows/") {
            self.concept("ci");
        }
    }

    fn modified(&mut self, path: &str) {
        if !path.is_empty() && !self.files_modified.iter().any(|p| p == path) {
            self.files_modified.push(path.to_owned());
        }
    }

    fn read(&mut self, path: &str) {
        if !path.is_empty() && !self.files_read.iter().any(|p| p == path) {
            self.files_read.push(path.to_owned());
        }
    }

    fn fact(&mut self, fact: String) {
        if !fact.is_empty() && !self.facts.contains(&fact) {
            self.facts.push(fact);
        }
    }

    fn finish(self) -> ObservationDraft {
        let mut facts = self.facts;
        facts.truncate(MAX_FACTS);
        let mut concepts: Vec<String> = self.concepts.iter().map(|c| (*c).to_owned()).collect();
        concepts.truncate(MAX_CONCEPTS);
        ObservationDraft {
            kind: self.kind.to_owned(),
            title: text::clamp_words(&self.title, TITLE_MAX),
            subtitle: text::clamp_words(&self.subtitle, 200),
            narrative: text::clamp_sentences(&self.narrative.join(" "), 1500),
            facts: facts
                .into_iter()
                .map(|f| text::clamp_sentences(&f, 300))
                .collect(),
            concepts,
            files_read: self.files_read,
            files_modified: self.files_modified,
        }
    }
}

/// `path` relative to the project root when it lies inside it.
pub(crate) fn relative<'p>(path: &'p str, root: &str) -> &'p str {
    let root = root.trim_end_matches('/');
    if root.is_empty() {
        return path;
    }
    path.strip_prefix(root)
        .and_then(|r| r.strip_prefix('/'))
        .filter(|r| !r.is_empty())
        .unwrap_or(path)
}

fn file_name(path: &str) -> &str {
    path.rsplit(['/', '\\'])
        .find(|s| !s.is_empty())
        .unwrap_or(path)
}

fn code_span(s: &str) -> String {
    format!("`{}`", s.replace('`', "'"))
}

impl Analysis<'_> {
    /// The turn's observations, stage by stage: fixes, the work per file
    /// (grouped under commits), failed changes, other commands, failures
    /// nobody fixed, decisions; then finished in turn order.
    fn observations(&self) -> Vec<ObservationDraft> {
        let mut used_runs: Vec<usize> = Vec::new();
        let mut drafts = self.fix_drafts(&mut used_runs);
        let file_drafts = self.file_drafts();
        let file_drafts = self.group_by_commit(file_drafts, &mut drafts, &mut used_runs);
        drafts.extend(self.cap_file_drafts(file_drafts));
        drafts.extend(self.failed_change_drafts());
        let commands = self.command_drafts(&mut drafts, &used_runs);
        drafts.extend(commands);
        let failures = self.failure_drafts(&mut drafts, &mut used_runs);
        drafts.extend(failures);
        drafts.extend(self.decision_drafts());
        self.attach_tickets(&mut drafts);
        self.finish_drafts(drafts)
    }

    fn rel(&self, path: &str) -> String {
        relative(path, &self.batch.project_root).to_owned()
    }

    /// The command line a run ran.
    fn command_of(&self, run: &Run) -> &str {
        self.batch
            .events
            .get(run.index)
            .and_then(|e| e.input.get("command"))
            .and_then(|c| c.as_str())
            .unwrap_or("")
    }
}

fn defs_named(defs: &[Definition], max: usize) -> Vec<String> {
    let mut out: Vec<String> = defs
        .iter()
        .take(max)
        .map(|d| format!("{} {}", d.kind, code_span(&d.name)))
        .collect();
    if defs.len() > max {
        out.push(format!("{} more", defs.len() - max));
    }
    out
}

fn times(n: usize) -> String {
    match n {
        1 => "once".to_owned(),
        2 => "twice".to_owned(),
        n => format!("{n} times"),
    }
}

fn tool_verb(tool: &str) -> &'static str {
    match tool.to_ascii_lowercase().as_str() {
        "glob" | "file_search" => "looked for files",
        "ls" | "list_directory" | "list_dir" => "listed",
        "websearch" | "web_search" | "google_web_search" => "searched the web",
        _ => "searched",
    }
}

fn capitalize(s: String) -> String {
    match s.get(..1) {
        Some(c) => c.to_uppercase() + &s[1..],
        None => s,
    }
}

/// The deepest directory shared by all paths, if it is not the root.
fn common_dir(paths: &[&str]) -> Option<String> {
    let mut iter = paths.iter();
    let first: Vec<&str> = iter.next()?.split('/').collect();
    let mut len = first.len().saturating_sub(1);
    for p in iter {
        let parts: Vec<&str> = p.split('/').collect();
        len = len.min(
            first
                .iter()
                .zip(&parts[..parts.len().saturating_sub(1)])
                .take_while(|(a, b)| a == b)
                .count(),
        );
    }
    (len > 0).then(|| format!("{}/", first[..len].join("/")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn common_dirs() {
        assert_eq!(
            common_dir(&["src/a/x.rs", "src/a/y.rs"]).as_deref(),
            Some("src/a/")
        );
        assert_eq!(
            common_dir(&["src/a/x.rs", "src/b/y.rs"]).as_deref(),
            Some("src/")
        );
        assert_eq!(common_dir(&["x.rs", "src/y.rs"]), None);
    }

    #[test]
    fn relative_paths() {
        assert_eq!(relative("/p/src/a.rs", "/p"), "src/a.rs");
        assert_eq!(relative("/p/src/a.rs", "/p/"), "src/a.rs");
        assert_eq!(relative("/other/a.rs", "/p"), "/other/a.rs");
        assert_eq!(relative("/pp/a.rs", "/p"), "/pp/a.rs");
    }
}
