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

use std::collections::HashMap;

use crate::code::{self, Definition};
use crate::command::{self, CommandClass};
use crate::event::{self, Action, Event};
use crate::narrative::{self, Question};
use crate::text::{self, join_and, list_some, one_line, plural};
use crate::{ObservationDraft, Outcome, SummaryDraft, TurnBatch};

mod summary;
mod work;

/// Caps that keep a turn's memory small.
const MAX_FACTS: usize = 12;
const MAX_CONCEPTS: usize = 6;
const MAX_FILE_OBSERVATIONS: usize = 4;
const MAX_EPISODES: usize = 3;
const MAX_FAILURE_OBSERVATIONS: usize = 2;
const MAX_COMMAND_OBSERVATIONS: usize = 2;
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
    Outcome {
        observations,
        summary,
        piece_summary,
        source: "offline".into(),
        ..Default::default()
    }
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
}

impl Tally {
    fn of<'s>(steps: impl Iterator<Item = &'s Step>) -> Tally {
        let mut t = Tally::default();
        for s in steps.filter(|s| !s.creation) {
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

impl<'a> Analysis<'a> {
    fn of(batch: &'a TurnBatch) -> Analysis<'a> {
        let events: Vec<Event<'a>> = batch
            .events
            .iter()
            .enumerate()
            .map(|(i, e)| event::read(e, i, &batch.project_root))
            .collect();
        let mut a = Analysis {
            batch,
            events: Vec::new(),
            files: Vec::new(),
            runs: Vec::new(),
            episodes: Vec::new(),
            unresolved: Vec::new(),
            failures: Vec::new(),
            reads: Vec::new(),
            context_facts: Vec::new(),
            looked_up: Vec::new(),
            other_tools: Vec::new(),
            notes: Vec::new(),
            why: HashMap::new(),
            said: HashMap::new(),
            questions: Vec::new(),
            open_todos: Vec::new(),
        };
        let mut file_ids: HashMap<String, usize> = HashMap::new();
        for e in &events {
            // Size cuts are routine; what privacy withheld is worth knowing.
            if let Some(note) = e.raw.note.as_deref().filter(|n| n.contains("withheld")) {
                let note = one_line(note, 200);
                if !a.notes.contains(&note) {
                    a.notes.push(note);
                }
            }
            a.take(e, &mut file_ids);
        }
        a.events = events;
        a.read_narrative();
        a.find_episodes();
        a
    }

    /// The assistant's explanations, keyed by the event they came right
    /// before, and the questions the narrative tells of.
    fn read_narrative(&mut self) {
        let Some(n) = &self.batch.narrative else {
            return;
        };
        let by_id: HashMap<&str, usize> = self
            .batch
            .events
            .iter()
            .enumerate()
            .filter_map(|(i, e)| e.tool_use_id.as_deref().map(|id| (id, i)))
            .collect();
        for note in &n.notes {
            let Some(&i) = note
                .before_tool_use_id
                .as_deref()
                .and_then(|id| by_id.get(id))
            else {
                continue;
            };
            let said = self.said.entry(i).or_default();
            if !said.is_empty() {
                said.push('\n');
            }
            said.push_str(&note.text);
            if let Some(why) = narrative::explanation(&note.text) {
                let entry = self.why.entry(i).or_default();
                if !entry.contains(&why) {
                    if !entry.is_empty() {
                        entry.push(' ');
                    }
                    entry.push_str(&why);
                }
            }
        }
        // A long turn's pieces all see the narrative: its questions belong
        // to the piece that asked them (else to a whole turn's only piece).
        let asked_here = self
            .batch
            .events
            .iter()
            .any(|e| e.tool_name == "AskUserQuestion");
        let told = narrative::narrative_questions(self.batch);
        // The tool events carry what each option meant; the transcript's
        // account is for hosts whose questions are no tool call, taken by
        // the piece that asked them or, failing that, by the turn's last
        // piece unless an earlier one recorded the decision already.
        if self.questions.is_empty() && (asked_here || self.batch.turn_complete) {
            let recorded = |q: &Question| {
                narrative::decision(q, TITLE_MAX).is_some_and(|d| {
                    self.batch
                        .earlier_pieces
                        .iter()
                        .any(|p| p.completed.contains(&d.title))
                })
            };
            self.questions = told
                .into_iter()
                .filter(|q| asked_here || !recorded(q))
                .map(|q| (0, q))
                .collect();
        }
    }

    fn look(&mut self, what: String) {
        if !self.looked_up.contains(&what) {
            self.looked_up.push(what);
        }
    }

    /// Read-only commands, each shown once.
    fn inspections(&self) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for r in self
            .runs
            .iter()
            .filter(|r| r.class == CommandClass::Inspect)
        {
            let shown = code_span(&r.shown);
            if !out.contains(&shown) {
                out.push(shown);
            }
        }
        out
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

    /// Files an event touched, by their stored (absolute) paths.
    fn take(&mut self, e: &Event<'a>, file_ids: &mut HashMap<String, usize>) {
        let headline = || {
            e.error
                .as_deref()
                .and_then(|err| text::error_headline([err], 160))
                .unwrap_or_else(|| "no error message".to_owned())
        };
        if e.failed && e.error.as_deref().is_some_and(is_rejection) {
            // The user said no: not a failure to learn from.
            let what = match &e.action {
                Action::Command { command, .. } => code_span(&command::display(command, 60)),
                _ => e.tool().to_owned(),
            };
            let note = format!("the user stopped {what}");
            if !self.notes.contains(&note) {
                self.notes.push(note);
            }
            return;
        }
        match &e.action {
            Action::Write { path, .. } | Action::Edit { path, .. } if !path.is_empty() => {
                let id = *file_ids.entry(path.clone()).or_insert_with(|| {
                    self.files.push(FileWork {
                        path: path.clone(),
                        rel: relative(path, &self.batch.project_root).to_owned(),
                        first: usize::MAX,
                        ..Default::default()
                    });
                    self.files.len() - 1
                });
                let fw = &mut self.files[id];
                if e.failed {
                    fw.failures.push((e.index, headline()));
                    return;
                }
                if fw.first == usize::MAX {
                    fw.first = e.index;
                }
                let mut step = absorb_change(fw, e.index, &e.action);
                // Prose and settings define nothing (`function` in a sentence).
                if matches!(code::language_of(path), Some("docs" | "config")) {
                    step.names.clear();
                    fw.defs_added.clear();
                    fw.defs_changed.clear();
                    fw.defs_removed.clear();
                }
                fw.steps.push(step);
            }
            Action::Command {
                command,
                description,
                stdout,
                stderr,
                exit_code,
                interrupted,
            } => {
                let class = command::classify(command);
                let ok = !e.failed && !*interrupted;
                let headline = (!ok).then(|| {
                    text::error_headline(
                        [
                            e.error.as_deref().unwrap_or(""),
                            stderr.as_str(),
                            stdout.as_str(),
                        ],
                        160,
                    )
                    .unwrap_or_else(|| match exit_code {
                        Some(c) => format!("exit code {c}"),
                        None if *interrupted => "interrupted".to_owned(),
                        None => "failed".to_owned(),
                    })
                });
                let summary = if matches!(class, CommandClass::Test | CommandClass::Build) {
                    let err = e.error.as_deref().unwrap_or("");
                    command::summary_line(stdout, stderr).or_else(|| command::summary_line(err, ""))
                } else {
                    None
                };
                self.runs.push(Run {
                    index: e.index,
                    shown: command::display(command, 60),
                    class,
                    key: command::same_command_key(command, class),
                    program: command::program_of(command),
                    ok,
                    exit_code: *exit_code,
                    headline,
                    summary,
                    description: description.as_deref().map(|d| one_line(d, 300)),
                    interrupted: *interrupted,
                    commit: command::commit_message(command),
                    bookkeeping: command::is_bookkeeping(command, class),
                });
            }
            Action::Read { path, lines, .. } => {
                if e.failed {
                    self.context_facts.push(format!(
                        "Could not read {}: {}",
                        self.rel(path),
                        headline()
                    ));
                } else if !path.is_empty() && !self.reads.iter().any(|(p, _)| p == path) {
                    self.reads.push((path.clone(), *lines));
                }
            }
            Action::Search {
                tool,
                pattern,
                scope,
                hits,
                ..
            } => {
                let mut what = match pattern {
                    Some(p) => format!("{} for {}", tool_verb(tool), code_span(&one_line(p, 60))),
                    None => tool_verb(tool).to_owned(),
                };
                if let Some(s) = scope.as_deref().filter(|s| Some(*s) != pattern.as_deref()) {
                    what.push_str(&format!(" in {}", self.rel(&one_line(s, 60))));
                }
                let fact = capitalize(what.clone());
                if e.failed {
                    self.context_facts
                        .push(format!("{fact} failed: {}", headline()));
                } else {
                    if let Some(h) = hits {
                        self.context_facts.push(format!("{fact}: {h} found"));
                    } else {
                        self.context_facts.push(fact);
                    }
                    self.look(what);
                }
            }
            Action::Fetch { url, .. } => {
                let shown = one_line(url, 100);
                if e.failed {
                    self.context_facts
                        .push(format!("Fetching {shown} failed: {}", headline()));
                } else {
                    self.context_facts.push(format!("Fetched {shown}"));
                    self.look(format!("fetched {shown}"));
                }
            }
            Action::Agent {
                description,
                prompt,
                result,
            } => {
                let task = description
                    .as_deref()
                    .or(prompt.as_deref())
                    .map(|d| one_line(d, 80))
                    .unwrap_or_else(|| "a task".to_owned());
                if e.failed {
                    self.failures.push(ToolFailure {
                        index: e.index,
                        what: format!("Subagent task \"{task}\""),
                        headline: headline(),
                    });
                } else {
                    let outcome = text::sentences(result, 1).into_iter().next();
                    self.context_facts.push(match outcome {
                        Some(o) => format!("Subagent ({task}): {o}"),
                        None => format!("Delegated to a subagent: {task}"),
                    });
                    self.look(format!("delegated \"{task}\" to a subagent"));
                }
            }
            Action::Mcp {
                server, tool, args, ..
            } => {
                let what = if server.is_empty() {
                    format!("MCP tool {tool}")
                } else {
                    format!("MCP {server} {tool}")
                };
                if e.failed {
                    self.failures.push(ToolFailure {
                        index: e.index,
                        what,
                        headline: headline(),
                    });
                } else {
                    let with = if args.is_empty() {
                        String::new()
                    } else {
                        format!(" ({})", one_line(args, 80))
                    };
                    self.context_facts.push(format!("Used {what}{with}"));
                    self.look(format!("used {what}"));
                }
            }
            _ if !e.failed && e.tool() == "AskUserQuestion" => {
                let asked = narrative::asked_questions(&e.raw.input, e.raw.response.as_ref());
                self.questions
                    .extend(asked.into_iter().map(|q| (e.index, q)));
            }
            _ if !e.failed && e.tool() == "TodoWrite" => {
                if let Some(todos) = e.raw.input.get("todos").and_then(|t| t.as_array()) {
                    self.open_todos = todos
                        .iter()
                        .filter(|t| t.get("status").and_then(|s| s.as_str()) != Some("completed"))
                        .filter_map(|t| t.get("content").and_then(|c| c.as_str()))
                        .map(|c| one_line(c, 160))
                        .collect();
                }
            }
            _ => {
                if e.failed {
                    self.failures.push(ToolFailure {
                        index: e.index,
                        what: format!("Tool {}", e.tool()),
                        headline: headline(),
                    });
                } else if !self.other_tools.iter().any(|t| t == e.tool()) {
                    self.other_tools.push(e.tool().to_owned());
                }
            }
        }
    }

    /// Pairs failed commands with a later success of the same command and
    /// the file changes in between.
    fn find_episodes(&mut self) {
        let mut open: Vec<usize> = Vec::new();
        for (r, run) in self.runs.iter().enumerate() {
            if run.class == CommandClass::Inspect {
                continue;
            }
            if !run.ok {
                if !open.iter().any(|&o| self.runs[o].key == run.key) {
                    open.push(r);
                }
                continue;
            }
            // A passing test run of the same tool also settles a failed build.
            let settles = |o: &usize| {
                let f = &self.runs[*o];
                f.key == run.key
                    || (f.class == CommandClass::Build
                        && run.class == CommandClass::Test
                        && f.program == run.program)
            };
            let settled: Vec<usize> = open.iter().copied().filter(settles).collect();
            open.retain(|o| !settles(o));
            for f in settled {
                let (from, to) = (self.runs[f].index, run.index);
                let files: Vec<usize> = self
                    .files
                    .iter()
                    .enumerate()
                    .filter(|(_, fw)| fw.changes().any(|i| i > from && i < to))
                    .map(|(id, _)| id)
                    .collect();
                // Edits do not fix a push or a tracker update: settled, no story.
                if files.is_empty() || self.runs[f].bookkeeping {
                    continue;
                }
                let key = &self.runs[f].key;
                let failures: Vec<usize> = (f..r)
                    .filter(|&x| !self.runs[x].ok && self.runs[x].key == *key)
                    .collect();
                match self
                    .episodes
                    .iter_mut()
                    .find(|ep| self.runs[ep.fail].key == *key)
                {
                    Some(ep) => {
                        ep.pass = r;
                        ep.rounds.push((f, r));
                        ep.failures.extend(failures);
                        for id in files {
                            if !ep.files.contains(&id) {
                                ep.files.push(id);
                            }
                        }
                    }
                    None => self.episodes.push(Episode {
                        fail: f,
                        pass: r,
                        rounds: vec![(f, r)],
                        failures,
                        files,
                    }),
                }
            }
        }
        self.unresolved = open;
    }

    /// A file's name as titles show it: the bare name, unless another file
    /// of the batch has the same name.
    fn short(&self, id: usize) -> String {
        let fw = &self.files[id];
        let name = file_name(&fw.rel);
        let clash = self
            .files
            .iter()
            .enumerate()
            .any(|(j, o)| j != id && file_name(&o.rel) == name);
        if clash {
            fw.rel.clone()
        } else {
            name.to_owned()
        }
    }

    /// True when every change of the file happened while fixing a failure
    /// (and it was not created in this batch): the bugfix tells its story.
    fn absorbed(&self, id: usize) -> bool {
        let fw = &self.files[id];
        !fw.created && !fw.steps.is_empty() && fw.changes().all(|i| self.in_episode(id, i))
    }

    /// True when the change of file `id` at event `index` happened between a
    /// failure and the success that settled it.
    fn in_episode(&self, id: usize, index: usize) -> bool {
        self.episodes.iter().any(|ep| {
            ep.files.contains(&id)
                && ep
                    .rounds
                    .iter()
                    .any(|&(f, p)| index > self.runs[f].index && index < self.runs[p].index)
        })
    }

    /// The changes of file `id` that are not part of a fix.
    fn own_steps(&self, id: usize) -> impl Iterator<Item = &Step> + '_ {
        self.files[id]
            .steps
            .iter()
            .filter(move |s| !self.in_episode(id, s.index))
    }

    fn prompt_hint(&self) -> Option<&'static str> {
        let prompt = narrative::request(self.batch).to_ascii_lowercase();
        let has = |words: &[&str]| {
            prompt
                .split(|c: char| !c.is_alphanumeric())
                .any(|w| words.contains(&w))
        };
        if has(&[
            "fix",
            "fixes",
            "bug",
            "bugs",
            "broken",
            "crash",
            "crashes",
            "failing",
            "fails",
            "error",
            "errors",
            "regression",
            "wrong",
        ]) {
            Some("bugfix")
        } else if has(&[
            "refactor",
            "rename",
            "extract",
            "cleanup",
            "simplify",
            "reorganize",
        ]) {
            Some("refactor")
        } else {
            None
        }
    }

    fn observations(&self) -> Vec<ObservationDraft> {
        let mut drafts: Vec<Draft> = Vec::new();
        let mut used_runs: Vec<usize> = Vec::new();

        // Failures fixed by editing.
        for (n, ep) in self.episodes.iter().enumerate() {
            if n >= MAX_EPISODES {
                if let Some(last) = drafts.last_mut() {
                    last.fact(self.episode_fact(ep));
                }
                continue;
            }
            drafts.push(self.episode_draft(ep));
            used_runs.extend(ep.rounds.iter().flat_map(|&(f, p)| [f, p]));
            used_runs.extend(&ep.failures);
        }

        // Work per file.
        let mut file_drafts: Vec<(usize, Draft)> = (0..self.files.len())
            .filter(|&id| !self.files[id].steps.is_empty() && !self.absorbed(id))
            .map(|id| (id, self.file_draft(id)))
            .collect();
        // A commit names the work it recorded: the files changed before it.
        for (r, run) in self.runs.iter().enumerate() {
            let Some(message) = run.commit.as_deref().filter(|_| run.ok) else {
                continue;
            };
            used_runs.push(r);
            let (served, rest): (Vec<_>, Vec<_>) = file_drafts
                .into_iter()
                .partition(|(_, d)| d.first < run.index);
            file_drafts = rest;
            drafts.push(self.commit_draft(run, message, served));
        }
        if file_drafts.len() > MAX_FILE_OBSERVATIONS {
            // Keep the biggest changes on their own, merge the rest.
            file_drafts.sort_by_key(|(id, _)| {
                let fw = &self.files[*id];
                let t = Tally::of(fw.steps.iter());
                std::cmp::Reverse(t.added + t.removed + usize::from(fw.created) * 1000)
            });
            let rest: Vec<(usize, Draft)> = file_drafts.split_off(MAX_FILE_OBSERVATIONS - 1);
            file_drafts.push((usize::MAX, self.merged_files_draft(rest)));
        }
        drafts.extend(file_drafts.into_iter().map(|(_, d)| d));

        // Failures of other tools on files that were never changed after.
        for fw in &self.files {
            if fw.steps.is_empty()
                && let Some((index, headline)) = fw.failures.first()
            {
                let mut d = Draft {
                    first: *index,
                    events: vec![*index],
                    kind: "discovery",
                    title: format!("Changing {} failed: {headline}", fw.rel),
                    subtitle: headline.clone(),
                    ..Default::default()
                };
                d.narrative.push(format!(
                    "An attempt to change {} failed ({}) and was not retried successfully.",
                    fw.rel, headline
                ));
                d.fact(format!("Changing {} failed: {headline}", fw.rel));
                d.modified(&fw.path);
                d.file_concepts(&fw.path);
                drafts.push(d);
            }
        }

        // Commands: settle each run somewhere.
        let mut command_drafts: Vec<Draft> = Vec::new();
        for (r, run) in self.runs.iter().enumerate() {
            if used_runs.contains(&r) || run.class == CommandClass::Inspect {
                continue;
            }
            if !run.ok {
                // Failures that were never fixed get their own observation;
                // failures settled without edits become facts.
                if self.unresolved.contains(&r) {
                    continue;
                }
                let fact = format!(
                    "{} failed at first ({}), then passed without changes",
                    code_span(&run.shown),
                    run.headline.as_deref().unwrap_or("failed")
                );
                attach_fact(&mut drafts, &mut command_drafts, run.index, fact);
                continue;
            }
            if run.bookkeeping && !(drafts.is_empty() && command_drafts.is_empty()) {
                if let Some(fact) = self.bookkeeping_fact(run) {
                    attach_fact(&mut drafts, &mut command_drafts, run.index, fact);
                }
                continue;
            }
            let is_check = matches!(
                run.class,
                CommandClass::Test | CommandClass::Build | CommandClass::Lint
            );
            if is_check && !drafts.is_empty() {
                let mut fact = format!("{} passed", code_span(&run.shown));
                if let Some(s) = &run.summary {
                    fact.push_str(&format!(" ({s})"));
                }
                attach_fact(&mut drafts, &mut command_drafts, run.index, fact);
                if let Some(d) = drafts.iter_mut().rev().find(|d| d.first < run.index) {
                    if let Some(c) = run.class.concept() {
                        d.concept(c);
                    }
                    d.narrative
                        .push(format!("{} passed afterwards.", code_span(&run.shown)));
                }
                continue;
            }
            command_drafts.push(self.run_draft(run));
        }
        if command_drafts.len() > MAX_COMMAND_OBSERVATIONS {
            let merged = merge_commands(command_drafts);
            command_drafts = vec![merged];
        }
        drafts.extend(command_drafts);

        // Failures nobody fixed. A command still failing at the end of a
        // piece of a turn still running stands only if no later piece fixes
        // it: it travels in the piece's summary (`next_steps`) until then.
        let mut failure_drafts: Vec<Draft> = Vec::new();
        if self.batch.turn_complete {
            for &r in &self.unresolved {
                let d = self.failed_run_draft(&self.runs[r]);
                push_failure(&mut failure_drafts, d);
            }
        }
        // The failures earlier pieces left open: fixed here, or standing.
        for d in self.carried_drafts(&mut drafts, &mut used_runs) {
            push_failure(&mut failure_drafts, d);
        }
        for f in &self.failures {
            let mut d = Draft {
                first: f.index,
                events: vec![f.index],
                kind: "discovery",
                title: format!("{} failed: {}", f.what, f.headline),
                subtitle: f.headline.clone(),
                ..Default::default()
            };
            d.narrative
                .push(format!("{} failed with: {}.", f.what, f.headline));
            d.fact(format!("{} failed: {}", f.what, f.headline));
            push_failure(&mut failure_drafts, d);
        }
        drafts.extend(failure_drafts);
        drafts.extend(self.decision_drafts());

        drafts.sort_by_key(|d| d.first);
        self.explain(&mut drafts);
        if drafts.is_empty() && !self.events.is_empty() {
            drafts.push(self.context_draft());
        } else if let Some(primary) = drafts.iter_mut().find(|d| d.kind != "decision") {
            self.fold_context(primary);
        }
        // Reads of a changed file belong to that file's observation.
        for d in &mut drafts {
            let own: Vec<String> = self
                .reads
                .iter()
                .filter(|(p, _)| d.files_modified.contains(p))
                .map(|(p, _)| p.clone())
                .collect();
            for p in own {
                d.read(&p);
            }
        }
        let hint = self.prompt_hint();
        drafts
            .into_iter()
            .map(|mut d| {
                if d.kind == "change"
                    && let Some(h) = hint
                    && !d.files_modified.is_empty()
                {
                    d.kind = h;
                }
                d.finish()
            })
            .collect()
    }

    /// The failures earlier pieces of the turn left open, with the run of
    /// this piece that settles each (the same command passing, or a passing
    /// test run of a failed build's tool); None while it is still open. A
    /// command this piece also ran and failed tells its own story.
    fn carried(&self) -> Vec<(narrative::OpenCheck, Option<usize>)> {
        let mut out = Vec::new();
        for open in narrative::open_checks(&self.batch.earlier_pieces) {
            let class = command::classify(&open.shown);
            let key = command::same_command_key(&open.shown, class);
            let program = command::program_of(&open.shown);
            if self.runs.iter().any(|r| r.key == key && !r.ok) {
                continue;
            }
            let pass = self.runs.iter().position(|r| {
                r.ok && (r.key == key
                    || (class == CommandClass::Build
                        && r.class == CommandClass::Test
                        && r.program == program))
            });
            out.push((open, pass));
        }
        out
    }

    /// What becomes of the failures earlier pieces left open: a bugfix when
    /// this piece makes a check pass (the files it changed before are the
    /// fix), a fact when another command succeeds in another form (`git
    /// push`, then `git push -u`), a standing failure when the turn ends
    /// without either, nothing yet otherwise.
    fn carried_drafts(&self, drafts: &mut [Draft], used_runs: &mut Vec<usize>) -> Vec<Draft> {
        let mut out = Vec::new();
        for (open, pass) in self.carried() {
            let class = command::classify(&open.shown);
            match pass {
                Some(p) if class.is_check() => {
                    used_runs.push(p);
                    out.push(self.carried_fix(&open, &self.runs[p]));
                }
                Some(p) => {
                    let run = &self.runs[p];
                    let fact = format!(
                        "{} failed earlier in the turn ({}), then {} worked",
                        code_span(&open.shown),
                        open.headline,
                        code_span(&run.shown)
                    );
                    attach_fact(drafts, &mut [], run.index, fact);
                }
                None if self.batch.turn_complete => out.push(carried_failure(&open, class)),
                None => {}
            }
        }
        out
    }

    /// A check an earlier piece left failing that `pass` made pass.
    fn carried_fix(&self, open: &narrative::OpenCheck, pass: &Run) -> Draft {
        let shown = code_span(&open.shown);
        let files: Vec<usize> = (0..self.files.len())
            .filter(|&id| self.files[id].changes().any(|i| i < pass.index))
            .collect();
        let names: Vec<String> = files.iter().map(|&f| self.short(f)).collect();
        let mut d = Draft {
            first: pass.index,
            events: vec![pass.index],
            kind: "bugfix",
            title: if names.is_empty() {
                format!("Command {shown} failed, then passed later in the turn")
            } else {
                fix_title(&open.shown, &names)
            },
            subtitle: open.headline.clone(),
            ..Default::default()
        };
        d.fact(format!("{shown} failed: {}", open.headline));
        for &id in &files {
            let fw = &self.files[id];
            d.modified(&fw.path);
            d.file_concepts(&fw.path);
            d.events.extend(fw.changes().filter(|&i| i < pass.index));
        }
        let mut passed = format!("{} passed", code_span(&pass.shown));
        if let Some(s) = &pass.summary {
            passed.push_str(&format!(" ({s})"));
        }
        d.fact(passed.clone());
        for c in [
            command::classify(&open.shown).concept(),
            pass.class.concept(),
        ]
        .into_iter()
        .flatten()
        {
            d.concept(c);
        }
        d.narrative.push(format!(
            "{shown} failed earlier in the turn with: {}.",
            open.headline
        ));
        d.narrative.push(if names.is_empty() {
            format!("Later in the turn, {passed}.")
        } else {
            format!("After editing {}, {passed}.", list_some(&names, 3))
        });
        d
    }

    fn episode_fact(&self, ep: &Episode) -> String {
        let (fail, pass) = (&self.runs[ep.fail], &self.runs[ep.pass]);
        format!(
            "{} failed ({}), then {} passed after editing {}",
            code_span(&fail.shown),
            fail.headline.as_deref().unwrap_or("failed"),
            code_span(&pass.shown),
            list_some(
                &ep.files.iter().map(|&f| self.short(f)).collect::<Vec<_>>(),
                3
            )
        )
    }

    fn episode_draft(&self, ep: &Episode) -> Draft {
        let mut d = self.episode_story(ep);
        d.events
            .extend(ep.failures.iter().map(|&f| self.runs[f].index));
        for &(f, p) in &ep.rounds {
            d.events.push(self.runs[p].index);
            let (from, to) = (self.runs[f].index, self.runs[p].index);
            for &id in &ep.files {
                d.events
                    .extend(self.files[id].changes().filter(|&i| i > from && i < to));
            }
        }
        d
    }

    fn episode_story(&self, ep: &Episode) -> Draft {
        let (fail, pass) = (&self.runs[ep.fail], &self.runs[ep.pass]);
        let names: Vec<String> = ep.files.iter().map(|&f| self.short(f)).collect();
        let title = fix_title(&fail.shown, &names);
        let headline = fail.headline.clone().unwrap_or_else(|| "failed".into());
        let mut d = Draft {
            first: fail.index,
            kind: "bugfix",
            title,
            subtitle: headline.clone(),
            ..Default::default()
        };
        let exit = fail
            .exit_code
            .map(|c| format!(" (exit {c})"))
            .unwrap_or_default();
        d.fact(format!(
            "{} failed{exit}: {headline}",
            code_span(&fail.shown)
        ));
        let mut seen = vec![headline.clone()];
        for &f in ep.failures.iter().skip(1) {
            if let Some(h) = &self.runs[f].headline
                && !seen.contains(h)
            {
                seen.push(h.clone());
                d.fact(format!(
                    "{} failed again: {h}",
                    code_span(&self.runs[f].shown)
                ));
            }
        }
        if ep.rounds.len() > 1 {
            d.fact(format!(
                "{} failed and was fixed {}",
                code_span(&fail.shown),
                times(ep.rounds.len())
            ));
        }
        let mut touched = Vec::new();
        for &id in &ep.files {
            let fw = &self.files[id];
            let window = fw.steps.iter().filter(|s| {
                ep.rounds
                    .iter()
                    .any(|&(f, p)| s.index > self.runs[f].index && s.index < self.runs[p].index)
            });
            let t = Tally::of(window);
            let short = self.short(id);
            d.modified(&fw.path);
            d.file_concepts(&fw.path);
            let within = if t.names.is_empty() {
                String::new()
            } else {
                format!(
                    " in {}",
                    join_and(
                        &t.names
                            .iter()
                            .take(3)
                            .map(|n| code_span(n))
                            .collect::<Vec<_>>()
                    )
                )
            };
            d.fact(format!("Edited {}{within} ({})", fw.rel, t.lines()));
            for (old, new) in t.swaps.iter().take(2) {
                d.fact(format!("{short}: {} → {}", code_span(old), code_span(new)));
            }
            touched.push(format!("{short}{within}"));
        }
        let mut passed = format!("{} passed", code_span(&pass.shown));
        if let Some(s) = &pass.summary {
            passed.push_str(&format!(" ({s})"));
        }
        d.fact(passed.clone());
        for c in [fail.class.concept(), pass.class.concept()]
            .into_iter()
            .flatten()
        {
            d.concept(c);
        }
        d.narrative.push(format!(
            "{} failed with: {headline}.",
            code_span(&fail.shown)
        ));
        d.narrative.push(format!(
            "After editing {}, {}.",
            list_some(&touched, 3),
            passed
        ));
        d
    }

    /// "Changed function `login` in auth.py (+1 −1 lines)" and the like.
    fn change_fact(&self, id: usize) -> String {
        let (_, title, sub) = self.describe_file(id);
        format!("{title} ({sub})")
    }

    /// Kind, title and subtitle of the work on one file (its changes that
    /// are not part of a fix).
    fn describe_file(&self, id: usize) -> (&'static str, String, String) {
        let fw = &self.files[id];
        let name = self.short(id);
        let t = Tally::of(self.own_steps(id));
        let names = |defs: &[Definition]| -> String {
            let shown: Vec<String> = defs.iter().take(3).map(|d| code_span(&d.name)).collect();
            match defs.len().saturating_sub(3) {
                0 => join_and(&shown),
                more => format!("{} and {more} more", shown.join(", ")),
            }
        };
        if fw.created {
            let mut title = format!("Created {}", fw.rel);
            if !fw.defs_added.is_empty() {
                title.push_str(&format!(" with {}", names(&fw.defs_added)));
            }
            let lang = code::language_of(&fw.path);
            let kind =
                if code::is_test_path(&fw.path) || matches!(lang, Some("docs" | "config") | None) {
                    "change"
                } else {
                    "feature"
                };
            let mut sub = match fw.content_lines {
                Some(n) => format!("new file, {}", plural(n, "line")),
                None => "new file".to_owned(),
            };
            if t.edits > 0 {
                sub.push_str(&format!(", then edited ({})", t.lines()));
            }
            return (kind, title, sub);
        }
        let lines = t.lines();
        if fw.rewritten && t.edits <= 1 && fw.defs_added.is_empty() {
            return ("change", format!("Rewrote {}", fw.rel), lines);
        }
        if fw.renames.len() == 1
            && fw.defs_added.is_empty()
            && fw.defs_removed.is_empty()
            && t.swaps.is_empty()
        {
            let (from, to) = &fw.renames[0];
            return (
                "refactor",
                format!("Renamed {} to {} in {name}", code_span(from), code_span(to)),
                lines,
            );
        }
        let with_kind = |defs: &[Definition]| -> String {
            match defs {
                [one] => format!("{} {}", one.kind, code_span(&one.name)),
                _ => names(defs),
            }
        };
        let (added, changed, removed) = (&fw.defs_added, &fw.defs_changed, &fw.defs_removed);
        let title = match (added.is_empty(), changed.is_empty(), removed.is_empty()) {
            (false, true, true) => {
                return (
                    "feature",
                    format!("Added {} to {name}", with_kind(added)),
                    lines,
                );
            }
            (true, true, false) => format!("Removed {} from {name}", with_kind(removed)),
            (true, false, true) => format!("Changed {} in {name}", with_kind(changed)),
            (false, false, _) => format!(
                "Changed {} and added {} in {name}",
                names(changed),
                names(added)
            ),
            (true, false, false) => format!(
                "Changed {} and removed {} in {name}",
                names(changed),
                names(removed)
            ),
            (false, true, false) => format!(
                "Added {} and removed {} in {name}",
                names(added),
                names(removed)
            ),
            (true, true, true) => match t.imports.as_slice() {
                [one] if t.edits == 1 && one.len() <= 70 => {
                    format!("Added {} to {name}", code_span(one))
                }
                [_, ..] if t.imports.len() >= t.edits => format!("Changed imports of {name}"),
                _ => match t.swaps.first() {
                    Some((old, new)) if t.edits == 1 && old.len() + new.len() <= 70 => {
                        format!("Changed {} to {} in {name}", code_span(old), code_span(new))
                    }
                    _ => format!("Edited {}", fw.rel),
                },
            },
        };
        ("change", title, lines)
    }

    fn file_draft(&self, id: usize) -> Draft {
        let fw = &self.files[id];
        let (kind, title, subtitle) = self.describe_file(id);
        let name = self.short(id);
        let t = Tally::of(self.own_steps(id));
        let mut d = Draft {
            first: fw.first,
            kind,
            title,
            subtitle,
            ..Default::default()
        };
        d.modified(&fw.path);
        d.file_concepts(&fw.path);
        if fw.created {
            let lines = fw
                .content_lines
                .map(|n| format!(" ({})", plural(n, "line")))
                .unwrap_or_default();
            d.fact(format!("Created {}{lines}", fw.rel));
            let mut sentence = format!("Created {}{lines}", fw.rel);
            if !fw.defs_added.is_empty() {
                let defs = defs_named(&fw.defs_added, 6);
                d.fact(format!("{} defines {}", fw.rel, join_and(&defs)));
                sentence.push_str(&format!(
                    ", defining {}",
                    join_and(&defs_named(&fw.defs_added, 4))
                ));
            }
            d.narrative.push(format!("{sentence}."));
            if t.edits > 0 {
                d.narrative.push(format!(
                    "It was then edited {} (+{} −{} lines).",
                    times(t.edits),
                    t.added,
                    t.removed
                ));
            }
        } else {
            let how = if fw.rewritten { "Rewrote" } else { "Edited" };
            d.fact(format!("{how} {}: {}", fw.rel, t.lines()));
            let mut sentence = format!(
                "{how} {} {}(+{} −{} lines)",
                fw.rel,
                if t.edits > 1 {
                    format!("{} ", times(t.edits))
                } else {
                    String::new()
                },
                t.added,
                t.removed
            );
            let mut parts = Vec::new();
            if !fw.defs_changed.is_empty() {
                parts.push(format!(
                    "changing {}",
                    join_and(&defs_named(&fw.defs_changed, 4))
                ));
            }
            if !fw.defs_added.is_empty() {
                parts.push(format!(
                    "adding {}",
                    join_and(&defs_named(&fw.defs_added, 4))
                ));
            }
            if !fw.defs_removed.is_empty() {
                parts.push(format!(
                    "removing {}",
                    join_and(&defs_named(&fw.defs_removed, 4))
                ));
            }
            if !parts.is_empty() {
                sentence.push_str(&format!(", {}", join_and(&parts)));
            }
            d.narrative.push(format!("{sentence}."));
        }
        for (from, to) in &fw.renames {
            d.fact(format!("Renamed {} to {}", code_span(from), code_span(to)));
        }
        for line in t.imports.iter().take(3) {
            d.fact(format!("{name} now has {}", code_span(line)));
        }
        if !t.imports.is_empty() {
            let shown: Vec<String> = t.imports.iter().map(|l| code_span(l)).collect();
            d.narrative
                .push(format!("It added {}.", list_some(&shown, 3)));
        }
        for (old, new) in t.swaps.iter().take(3) {
            d.fact(format!("{name}: {} → {}", code_span(old), code_span(new)));
        }
        if let Some((old, new)) = t.swaps.first() {
            d.narrative.push(format!(
                "In {name}, {} became {}.",
                code_span(old),
                code_span(new)
            ));
        }
        for (_, headline) in fw.failures.iter().take(2) {
            d.fact(format!("An edit of {name} failed first: {headline}"));
        }
        d.events.extend(self.own_steps(id).map(|s| s.index));
        d.events.extend(fw.failures.iter().map(|(i, _)| *i));
        d.retitle = true;
        d
    }

    fn merged_files_draft(&self, parts: Vec<(usize, Draft)>) -> Draft {
        let events: Vec<usize> = parts.iter().flat_map(|(_, d)| d.events.clone()).collect();
        let mut d = self.merged_files_story(parts);
        d.events = events;
        d.retitle = true;
        d
    }

    fn merged_files_story(&self, parts: Vec<(usize, Draft)>) -> Draft {
        let ids: Vec<usize> = parts.iter().map(|(id, _)| *id).collect();
        let first = parts.iter().map(|(_, d)| d.first).min().unwrap_or(0);
        let names: Vec<String> = ids.iter().map(|&id| self.short(id)).collect();
        let created = ids.iter().filter(|&&id| self.files[id].created).count();
        let rels: Vec<&str> = ids.iter().map(|&id| self.files[id].rel.as_str()).collect();
        let dir = common_dir(&rels);
        let title = match (&dir, created == ids.len()) {
            (Some(dir), true) => format!("Created {} in {dir}", plural(ids.len(), "file")),
            (Some(dir), false) => format!("Changed {} in {dir}", plural(ids.len(), "file")),
            (None, true) => format!("Created {}", list_some(&names, 3)),
            (None, false) => format!("Changed {}", list_some(&names, 3)),
        };
        let (added, removed) = ids.iter().fold((0, 0), |(a, r), &id| {
            let t = Tally::of(self.own_steps(id));
            (a + t.added, r + t.removed)
        });
        let mut d = Draft {
            first,
            kind: if created == ids.len() {
                "feature"
            } else {
                "change"
            },
            title,
            subtitle: format!("{}, +{added} −{removed} lines", list_some(&names, 4)),
            ..Default::default()
        };
        for &id in &ids {
            let fw = &self.files[id];
            d.modified(&fw.path);
            d.file_concepts(&fw.path);
            d.fact(self.change_fact(id));
        }
        d.narrative.push(format!(
            "Changed {} (+{added} −{removed} lines).",
            list_some(&names, 6)
        ));
        d
    }

    fn run_draft(&self, run: &Run) -> Draft {
        let shown = code_span(&run.shown);
        let (kind, title) = match (run.class, &run.commit) {
            (CommandClass::Git, Some(msg)) => {
                let (subject, kind) = command::commit_subject(msg);
                (kind.unwrap_or("change"), format!("Committed: {subject}"))
            }
            (CommandClass::Test, _) => (
                "discovery",
                match &run.summary {
                    Some(s) => format!("Ran {shown}: {s}"),
                    None => format!("Ran {shown}: passed"),
                },
            ),
            (CommandClass::Build | CommandClass::Lint, _) => {
                ("discovery", format!("Ran {shown}: succeeded"))
            }
            _ => (
                "change",
                match &run.description {
                    Some(desc) => format!("{} ({shown})", text::capitalize(desc)),
                    None => format!("Ran {shown}"),
                },
            ),
        };
        let mut d = Draft {
            first: run.index,
            events: vec![run.index],
            kind,
            title,
            subtitle: run.description.clone().unwrap_or_default(),
            ..Default::default()
        };
        if let Some(c) = run.class.concept() {
            d.concept(c);
        }
        let mut fact = format!("{shown} succeeded");
        if let Some(s) = &run.summary {
            fact.push_str(&format!(" ({s})"));
        }
        d.fact(fact);
        d.narrative.push(match &run.description {
            Some(desc) => format!("Ran {shown} ({desc}); it succeeded."),
            None => format!("Ran {shown}; it succeeded."),
        });
        d
    }

    fn failed_run_draft(&self, run: &Run) -> Draft {
        let shown = code_span(&run.shown);
        let headline = run.headline.clone().unwrap_or_else(|| "failed".into());
        let tries = self
            .runs
            .iter()
            .filter(|o| o.key == run.key && !o.ok)
            .count();
        let verb = if run.interrupted {
            "was interrupted"
        } else {
            "failed"
        };
        let bare_exit = headline.starts_with("exit code");
        let mut d = Draft {
            first: run.index,
            events: vec![run.index],
            kind: "discovery",
            title: if bare_exit {
                format!("Command {shown} {verb} with {headline}")
            } else {
                format!("Command {shown} {verb}: {headline}")
            },
            subtitle: run.description.clone().unwrap_or_default(),
            ..Default::default()
        };
        if let Some(c) = run.class.concept() {
            d.concept(c);
        }
        let exit = run
            .exit_code
            .map(|c| format!(" (exit {c})"))
            .unwrap_or_default();
        if bare_exit {
            d.fact(format!("{shown} {verb} with {headline}"));
        } else {
            d.fact(format!("{shown} {verb}{exit}: {headline}"));
        }
        if let Some(s) = &run.summary {
            d.fact(format!("{shown}: {s}"));
        }
        if tries > 1 {
            d.fact(format!("{shown} failed {} in this turn", times(tries)));
        }
        d.narrative.push(if bare_exit {
            format!("{shown} {verb} with {headline}. It did not pass later in this batch.")
        } else {
            format!("{shown} {verb}{exit} with: {headline}. It did not pass later in this batch.")
        });
        d
    }

    /// The observation of a turn that only looked at things.
    fn context_draft(&self) -> Draft {
        let read_names: Vec<String> = self
            .reads
            .iter()
            .map(|(p, _)| file_name(&self.rel(p)).to_owned())
            .collect();
        let mut parts = Vec::new();
        if !read_names.is_empty() {
            parts.push(format!("Read {}", list_some(&read_names, 3)));
        }
        let inspect = self.inspections();
        if let Some(first) = self.looked_up.first() {
            parts.push(first.clone());
        } else if !inspect.is_empty() {
            parts.push(format!("ran {}", list_some(&inspect, 2)));
        }
        if parts.is_empty() && !self.other_tools.is_empty() {
            parts.push(format!("Used {}", list_some(&self.other_tools, 3)));
        }
        if parts.is_empty()
            && let Some(fact) = self.context_facts.first()
        {
            parts.push(fact.clone());
        }
        if parts.is_empty() {
            parts.push(format!("Used {}", plural(self.events.len(), "tool")));
        }
        let mut title = parts.join("; ");
        if let Some(c) = title.get(..1) {
            title = c.to_uppercase() + &title[1..];
        }
        let mut d = Draft {
            first: 0,
            kind: "discovery",
            title,
            // What the turn was for (a notification's turn: the request it
            // continues), never the host's own text.
            subtitle: one_line(&narrative::request(self.batch), 160),
            ..Default::default()
        };
        self.fold_context(&mut d);
        if let Some(msg) = self.batch.last_assistant_message.as_deref() {
            for s in text::sentences(msg, 2) {
                d.narrative.push(s);
            }
        }
        d
    }

    /// Adds what was read, searched and looked up to `d`.
    fn fold_context(&self, d: &mut Draft) {
        for (p, _) in &self.reads {
            d.read(p);
            d.file_concepts(p);
        }
        let mut facts = self.context_facts.clone();
        for r in self
            .runs
            .iter()
            .filter(|r| r.class == CommandClass::Inspect)
            .take(3)
        {
            facts.push(if r.ok {
                format!("Ran {}", code_span(&r.shown))
            } else {
                format!(
                    "{} failed: {}",
                    code_span(&r.shown),
                    r.headline.as_deref().unwrap_or("failed")
                )
            });
        }
        for f in facts {
            d.fact(f);
        }
        let mut parts = Vec::new();
        if !self.reads.is_empty() {
            let names: Vec<String> = self.reads.iter().map(|(p, _)| self.rel(p)).collect();
            parts.push(format!("read {}", list_some(&names, 5)));
        }
        parts.extend(self.looked_up.iter().take(3).cloned());
        if !parts.is_empty() {
            let mut s = join_and(&parts);
            if let Some(c) = s.get(..1) {
                s = c.to_uppercase() + &s[1..];
            }
            d.narrative.insert(0, format!("{s}."));
        }
    }
}

/// Adds `fact` to the observation the run most likely belongs to: the last
/// one that started before it (or the first command draft).
fn attach_fact(drafts: &mut [Draft], command_drafts: &mut [Draft], index: usize, fact: String) {
    if let Some(d) = drafts.iter_mut().rev().find(|d| d.first < index) {
        d.fact(fact);
    } else if let Some(d) = drafts.first_mut() {
        d.fact(fact);
    } else if let Some(d) = command_drafts.last_mut() {
        d.fact(fact);
    }
}

/// "Command `x` failed, then passed after editing a.rs and b.rs"; when that
/// is too long the files are counted, and only then is the command cut
/// (what it ran, a test file say, is what a reader searches for).
fn fix_title(command: &str, files: &[String]) -> String {
    let title = |shown: &str, edited: String| {
        format!(
            "Command {} failed, then passed after editing {edited}",
            code_span(shown)
        )
    };
    let named = title(command, list_some(files, 2));
    if named.len() <= TITLE_MAX {
        return named;
    }
    let counted = title(command, plural(files.len(), "file"));
    if counted.len() <= TITLE_MAX {
        return counted;
    }
    title(&command::display(command, 60), plural(files.len(), "file"))
}

/// A command an earlier piece left failing that never passed in the turn.
fn carried_failure(open: &narrative::OpenCheck, class: CommandClass) -> Draft {
    let shown = code_span(&open.shown);
    let mut d = Draft {
        kind: "discovery",
        title: if open.headline == "interrupted" {
            format!("Command {shown} was interrupted")
        } else {
            format!("Command {shown} failed: {}", open.headline)
        },
        subtitle: open.headline.clone(),
        ..Default::default()
    };
    if let Some(c) = class.concept() {
        d.concept(c);
    }
    d.fact(format!("{shown} failed: {}", open.headline));
    d.narrative.push(format!(
        "{shown} failed with: {}. It did not pass later in this turn.",
        open.headline
    ));
    d
}

/// True for the error a host reports when the user refused a tool call.
fn is_rejection(error: &str) -> bool {
    error.contains("doesn't want to proceed with this tool use")
        || error.contains("tool use was rejected")
}

fn push_failure(list: &mut Vec<Draft>, d: Draft) {
    if list.len() < MAX_FAILURE_OBSERVATIONS {
        list.push(d);
    } else if let Some(last) = list.last_mut() {
        for f in d.facts {
            last.fact(f);
        }
    }
}

fn merge_commands(drafts: Vec<Draft>) -> Draft {
    let first = drafts.iter().map(|d| d.first).min().unwrap_or(0);
    let count = drafts.len();
    let described: Vec<String> = drafts
        .iter()
        .filter(|d| !d.subtitle.is_empty())
        .map(|d| d.subtitle.clone())
        .take(2)
        .collect();
    let title = if described.is_empty() {
        let shown: Vec<String> = drafts
            .iter()
            .take(2)
            .map(|d| d.title.trim_start_matches("Ran ").to_owned())
            .collect();
        format!("Ran {} ({count} commands)", join_and(&shown))
    } else {
        format!(
            "{} ({count} commands)",
            text::capitalize(&described.join("; "))
        )
    };
    let mut merged = Draft {
        first,
        kind: "change",
        title,
        ..Default::default()
    };
    for d in drafts {
        merged.events.extend(d.events);
        for f in d.facts {
            merged.fact(f);
        }
        for c in d.concepts {
            merged.concept(c);
        }
        merged.narrative.extend(d.narrative);
    }
    merged
}

/// Records one successful Write or Edit of a file: its definitions in the
/// file's totals, the rest in the returned step.
fn absorb_change(fw: &mut FileWork, index: usize, action: &Action) -> Step {
    let mut step = Step {
        index,
        ..Default::default()
    };
    match action {
        Action::Write {
            content,
            created,
            patch,
            ..
        } => {
            let first_change = fw.steps.is_empty();
            let is_new = match created {
                Some(c) => *c,
                None => first_change && patch.is_empty(),
            };
            if is_new && first_change {
                fw.created = true;
                step.creation = true;
                if let Some(c) = content {
                    fw.content_lines = Some(c.lines().count());
                    for def in code::definitions(c) {
                        FileWork::push_def(&mut fw.defs_added, def);
                    }
                }
            } else {
                if !fw.created {
                    fw.rewritten = true;
                }
                if !patch.is_empty() {
                    absorb_patch(fw, &mut step, patch);
                } else if let Some(c) = content {
                    step.added = c.lines().count();
                }
            }
        }
        Action::Edit { edits, patch, .. } => {
            if edits.is_empty() {
                absorb_patch(fw, &mut step, patch);
                return step;
            }
            let mut found_defs = false;
            for pair in edits {
                let (a, r) = code::line_delta(&pair.old, &pair.new);
                step.added += a;
                step.removed += r;
                if let Some(rename) = code::rename_in(&pair.old, &pair.new) {
                    if !fw.renames.contains(&rename) {
                        fw.renames.push(rename);
                    }
                    found_defs = true;
                    continue;
                }
                let old_defs = code::definitions(&pair.old);
                let new_defs = code::definitions(&pair.new);
                found_defs |= !old_defs.is_empty() || !new_defs.is_empty();
                note_defs(fw, &mut step, old_defs, new_defs);
                let (old, new) = (pair.old.trim(), pair.new.trim());
                let added: Vec<&str> = pair
                    .new
                    .lines()
                    .filter(|l| !l.trim().is_empty() && !pair.old.lines().any(|o| o == *l))
                    .collect();
                if r == 0 && !added.is_empty() && added.iter().all(|l| code::is_import(l)) {
                    step.imports
                        .extend(added.iter().map(|l| text::one_line(l, 100)));
                } else if step.swap.is_none()
                    && !old.contains('\n')
                    && !new.contains('\n')
                    && !old.is_empty()
                    && !new.is_empty()
                    && old.len() <= 100
                    && new.len() <= 100
                {
                    step.swap = Some((old.to_owned(), new.to_owned()));
                }
            }
            if !found_defs && let Some(def) = enclosing_definition(patch) {
                step.names.push(def.name.clone());
                FileWork::push_def(&mut fw.defs_changed, def);
            }
        }
        _ => {}
    }
    step
}

/// Sorts the definitions an edit touched into added, changed and removed.
fn note_defs(fw: &mut FileWork, step: &mut Step, old: Vec<Definition>, new: Vec<Definition>) {
    for def in &new {
        step.names.push(def.name.clone());
        if old.iter().any(|o| o.name == def.name) {
            if !fw.defs_added.iter().any(|d| d.name == def.name) {
                FileWork::push_def(&mut fw.defs_changed, def.clone());
            }
        } else {
            FileWork::push_def(&mut fw.defs_added, def.clone());
        }
    }
    for def in old {
        if !new.iter().any(|n| n.name == def.name) {
            FileWork::push_def(&mut fw.defs_removed, def);
        }
    }
}

/// Line counts and definitions of a patch (` `/`-`/`+` prefixed lines).
fn absorb_patch(fw: &mut FileWork, step: &mut Step, patch: &[String]) {
    let mut old = String::new();
    let mut new = String::new();
    for line in patch {
        if let Some(l) = line.strip_prefix('+') {
            step.added += 1;
            new.push_str(l);
            new.push('\n');
        } else if let Some(l) = line.strip_prefix('-') {
            step.removed += 1;
            old.push_str(l);
            old.push('\n');
        }
    }
    let old_defs = code::definitions(&old);
    let new_defs = code::definitions(&new);
    let found = !old_defs.is_empty() || !new_defs.is_empty();
    note_defs(fw, step, old_defs, new_defs);
    if !found && let Some(def) = enclosing_definition(patch) {
        step.names.push(def.name.clone());
        FileWork::push_def(&mut fw.defs_changed, def);
    }
}

/// The definition nearest above the first changed line of a patch, from its
/// context lines (`def login(user, pw):` above `-    return …`).
fn enclosing_definition(patch: &[String]) -> Option<Definition> {
    let first_change = patch
        .iter()
        .position(|l| l.starts_with('+') || l.starts_with('-'))?;
    patch[..first_change]
        .iter()
        .rev()
        .filter_map(|l| l.strip_prefix(' '))
        .find_map(code::definition_on)
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
