//! Stage 1 of the offline compressor, `collect`: reads the batch's events
//! into the raw material of a turn — the work per file, the command runs,
//! reads, searches and lookups, tool failures, answered questions, the last
//! todo list — and the assistant's words keyed by the event they preceded.

use super::*;

impl<'a> Analysis<'a> {
    /// Collects a batch: every event, then the narrative, then the episodes
    /// of failures fixed by edits.
    pub(super) fn of(batch: &'a TurnBatch) -> Analysis<'a> {
        let events: Vec<Event<'a>> = batch
            .events
            .iter()
            .enumerate()
            .map(|(i, e)| event::read(e, i, &batch.project_root))
            .collect();
        let mut a = Analysis::empty(batch);
        let mut file_ids: HashMap<String, usize> = HashMap::new();
        for e in &events {
            a.note_withheld(e);
            a.take(e, &mut file_ids);
        }
        a.events = events;
        a.mark_tracker_programs();
        a.read_narrative();
        a.find_episodes();
        a
    }

    pub(super) fn empty(batch: &'a TurnBatch) -> Analysis<'a> {
        Analysis {
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
        }
    }

    /// A program seen running a tracker command (told by its form) is the
    /// turn's tracker: its other commands (`x ready`, `x sync`) are
    /// bookkeeping too.
    fn mark_tracker_programs(&mut self) {
        let trackers: Vec<String> = self
            .runs
            .iter()
            .filter(|r| command::is_tracker(self.command_of(r)))
            .map(|r| r.program.clone())
            .collect();
        for run in &mut self.runs {
            if run.class == CommandClass::Run && trackers.contains(&run.program) {
                run.bookkeeping = true;
            }
        }
    }

    /// Size cuts are routine; what privacy withheld is worth knowing.
    pub(super) fn note_withheld(&mut self, e: &Event<'a>) {
        if let Some(note) = e.raw.note.as_deref().filter(|n| n.contains("withheld")) {
            let note = one_line(note, 200);
            if !self.notes.contains(&note) {
                self.notes.push(note);
            }
        }
    }

    /// The assistant's explanations, keyed by the event they came right
    /// before, and the questions the narrative tells of.
    pub(super) fn read_narrative(&mut self) {
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
            self.keep_words_before(i, &note.text);
        }
        self.take_told_questions();
    }

    /// What the assistant said right before event `i`, and its why.
    pub(super) fn keep_words_before(&mut self, i: usize, words: &str) {
        let said = self.said.entry(i).or_default();
        if !said.is_empty() {
            said.push('\n');
        }
        said.push_str(words);
        if let Some(why) = narrative::explanation(words) {
            let entry = self.why.entry(i).or_default();
            if !entry.contains(&why) {
                if !entry.is_empty() {
                    entry.push(' ');
                }
                entry.push_str(&why);
            }
        }
    }

    /// The questions the transcript tells of, for hosts whose questions are
    /// no captured tool call. The worker gives each piece of a long turn the
    /// questions asked within it (and a question the prompt answered to the
    /// first), so a piece that never completes — an interrupted turn —
    /// keeps them too; one an earlier piece already recorded is not
    /// repeated. The tool events, when captured, carry what each option
    /// meant and take precedence.
    fn take_told_questions(&mut self) {
        if !self.questions.is_empty() {
            return;
        }
        let asked_here = self
            .batch
            .events
            .iter()
            .any(|e| e.tool_name == "AskUserQuestion");
        let recorded = |q: &Question| {
            decision::decide(q, TITLE_MAX).is_some_and(|d| {
                self.batch
                    .earlier_pieces
                    .iter()
                    .any(|p| p.completed.contains(&d.title))
            })
        };
        self.questions = narrative::narrative_questions(self.batch)
            .into_iter()
            .filter(|q| asked_here || !recorded(q))
            .map(|q| (0, q))
            .collect();
    }

    pub(super) fn look(&mut self, what: String) {
        if !self.looked_up.contains(&what) {
            self.looked_up.push(what);
        }
    }

    /// Reads one event into the analysis, by what it did.
    pub(super) fn take(&mut self, e: &Event<'a>, file_ids: &mut HashMap<String, usize>) {
        if e.failed && e.error.as_deref().is_some_and(is_rejection) {
            self.note_refusal(e);
            return;
        }
        match &e.action {
            Action::Write { path, .. } | Action::Edit { path, .. } if !path.is_empty() => {
                self.collect_file_change(e, path, file_ids)
            }
            Action::Command { .. } => self.collect_command(e),
            Action::Read { path, lines, .. } => self.collect_read(e, path, *lines),
            Action::Search { .. } => self.collect_search(e),
            Action::Fetch { url, .. } => self.collect_fetch(e, url),
            Action::Agent { .. } => self.collect_subagent(e),
            Action::Mcp { .. } => self.collect_mcp(e),
            _ if !e.failed && e.tool() == "AskUserQuestion" => {
                let asked = narrative::asked_questions(&e.raw.input, e.raw.response.as_ref());
                self.questions
                    .extend(asked.into_iter().map(|q| (e.index, q)));
            }
            _ if !e.failed && e.tool() == "TodoWrite" => self.collect_todos(e),
            _ => self.collect_other_tool(e),
        }
    }

    /// The user said no: not a failure to learn from.
    pub(super) fn note_refusal(&mut self, e: &Event<'a>) {
        let what = match &e.action {
            Action::Command { command, .. } => code_span(&command::display(command, 60)),
            _ => e.tool().to_owned(),
        };
        let note = format!("the user stopped {what}");
        if !self.notes.contains(&note) {
            self.notes.push(note);
        }
    }

    /// A Write or Edit: a step of the file's work, or a failed attempt.
    pub(super) fn collect_file_change(
        &mut self,
        e: &Event<'a>,
        path: &str,
        file_ids: &mut HashMap<String, usize>,
    ) {
        let id = *file_ids.entry(path.to_owned()).or_insert_with(|| {
            self.files.push(FileWork {
                path: path.to_owned(),
                rel: relative(path, &self.batch.project_root).to_owned(),
                first: usize::MAX,
                ..Default::default()
            });
            self.files.len() - 1
        });
        let read_before = self.reads.iter().any(|(p, _)| p == path);
        let fw = &mut self.files[id];
        if e.failed {
            fw.failures.push((e.index, failure_headline(e)));
            return;
        }
        if fw.first == usize::MAX {
            fw.first = e.index;
        }
        let mut step = absorb_change(fw, e.index, &e.action, read_before);
        step.values = super::values::of_change(&fw.rel, &e.action);
        // Prose and settings define nothing (`function` in a sentence).
        if matches!(code::language_of(path), Some("docs" | "config")) {
            step.names.clear();
            fw.defs_added.clear();
            fw.defs_changed.clear();
            fw.defs_removed.clear();
        }
        fw.steps.push(step);
    }

    /// A shell command: one run, classified, with its outcome.
    pub(super) fn collect_command(&mut self, e: &Event<'a>) {
        let Action::Command {
            command,
            description,
            stdout,
            stderr,
            exit_code,
            interrupted,
        } = &e.action
        else {
            return;
        };
        let class = command::classify(command);
        let ok = !e.failed && !*interrupted;
        let headline = (!ok).then(|| run_headline(e, stdout, stderr, *exit_code, *interrupted));
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

    pub(super) fn collect_read(&mut self, e: &Event<'a>, path: &str, lines: Option<u64>) {
        if e.failed {
            self.context_facts.push(format!(
                "Could not read {}: {}",
                self.rel(path),
                failure_headline(e)
            ));
        } else if !path.is_empty() && !self.reads.iter().any(|(p, _)| p == path) {
            self.reads.push((path.to_owned(), lines));
        }
    }

    pub(super) fn collect_search(&mut self, e: &Event<'a>) {
        let Action::Search {
            tool,
            pattern,
            scope,
            hits,
            ..
        } = &e.action
        else {
            return;
        };
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
                .push(format!("{fact} failed: {}", failure_headline(e)));
        } else {
            if let Some(h) = hits {
                self.context_facts.push(format!("{fact}: {h} found"));
            } else {
                self.context_facts.push(fact);
            }
            self.look(what);
        }
    }

    pub(super) fn collect_fetch(&mut self, e: &Event<'a>, url: &str) {
        let shown = one_line(url, 100);
        if e.failed {
            self.context_facts
                .push(format!("Fetching {shown} failed: {}", failure_headline(e)));
        } else {
            self.context_facts.push(format!("Fetched {shown}"));
            self.look(format!("fetched {shown}"));
        }
    }

    pub(super) fn collect_subagent(&mut self, e: &Event<'a>) {
        let Action::Agent {
            description,
            prompt,
            result,
        } = &e.action
        else {
            return;
        };
        let task = description
            .as_deref()
            .or(prompt.as_deref())
            .map(|d| one_line(d, 80))
            .unwrap_or_else(|| "a task".to_owned());
        if e.failed {
            self.failures.push(ToolFailure {
                index: e.index,
                what: format!("Subagent task \"{task}\""),
                headline: failure_headline(e),
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

    pub(super) fn collect_mcp(&mut self, e: &Event<'a>) {
        let Action::Mcp {
            server, tool, args, ..
        } = &e.action
        else {
            return;
        };
        let what = if server.is_empty() {
            format!("MCP tool {tool}")
        } else {
            format!("MCP {server} {tool}")
        };
        if e.failed {
            self.failures.push(ToolFailure {
                index: e.index,
                what,
                headline: failure_headline(e),
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

    /// The unfinished items of the latest todo list.
    pub(super) fn collect_todos(&mut self, e: &Event<'a>) {
        if let Some(todos) = e.raw.input.get("todos").and_then(|t| t.as_array()) {
            self.open_todos = todos
                .iter()
                .filter(|t| t.get("status").and_then(|s| s.as_str()) != Some("completed"))
                .filter_map(|t| t.get("content").and_then(|c| c.as_str()))
                .map(|c| one_line(c, 160))
                .collect();
        }
    }

    pub(super) fn collect_other_tool(&mut self, e: &Event<'a>) {
        if e.failed {
            self.failures.push(ToolFailure {
                index: e.index,
                what: format!("Tool {}", e.tool()),
                headline: failure_headline(e),
            });
        } else if !self.other_tools.iter().any(|t| t == e.tool()) {
            self.other_tools.push(e.tool().to_owned());
        }
    }
}

/// The first line of an event's error, for facts and titles.
fn failure_headline(e: &Event<'_>) -> String {
    e.error
        .as_deref()
        .and_then(|err| text::error_headline([err], 160))
        .unwrap_or_else(|| "no error message".to_owned())
}

/// Why a command did not succeed: its error line, else its exit.
fn run_headline(
    e: &Event<'_>,
    stdout: &str,
    stderr: &str,
    exit_code: Option<i64>,
    interrupted: bool,
) -> String {
    text::error_headline([e.error.as_deref().unwrap_or(""), stderr, stdout], 160).unwrap_or_else(
        || match exit_code {
            Some(c) => format!("exit code {c}"),
            None if interrupted => "interrupted".to_owned(),
            None => "failed".to_owned(),
        },
    )
}

/// True for the error a host reports when the user refused a tool call.
fn is_rejection(error: &str) -> bool {
    error.contains("doesn't want to proceed with this tool use")
        || error.contains("tool use was rejected")
}

/// Records one successful Write or Edit of a file: its definitions in the
/// file's totals, the rest in the returned step. `read_before`: the file
/// was read earlier in the turn, so it existed.
fn absorb_change(fw: &mut FileWork, index: usize, action: &Action, read_before: bool) -> Step {
    let mut step = Step {
        index,
        ..Default::default()
    };
    fw.deleted = matches!(action, Action::Edit { deleted: true, .. });
    match action {
        Action::Write {
            content,
            created,
            patch,
            ..
        } => {
            let created = created.or(read_before.then_some(false));
            absorb_write(fw, &mut step, content.as_deref(), created, patch)
        }
        Action::Edit { edits, patch, .. } if edits.is_empty() => absorb_patch(fw, &mut step, patch),
        Action::Edit { edits, patch, .. } => {
            let mut found_defs = false;
            for pair in edits {
                found_defs |= absorb_edit(fw, &mut step, pair);
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

/// A Write: the file's creation (its lines and definitions), or a rewrite.
/// Whether it created the file is what the tool said (`created`); when it
/// said nothing, the first change of a file not known to exist.
fn absorb_write(
    fw: &mut FileWork,
    step: &mut Step,
    content: Option<&str>,
    created: Option<bool>,
    patch: &[String],
) {
    let first_change = fw.steps.is_empty();
    let is_new = match created {
        Some(c) => c,
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
        return;
    }
    if !fw.created {
        fw.rewritten = true;
    }
    if !patch.is_empty() {
        absorb_patch(fw, step, patch);
    } else if let Some(c) = content {
        step.added = c.lines().count();
    }
}

/// One old → new replacement of an Edit; true when it touched definitions.
fn absorb_edit(fw: &mut FileWork, step: &mut Step, pair: &EditPair) -> bool {
    let (a, r) = code::line_delta(&pair.old, &pair.new);
    step.added += a;
    step.removed += r;
    if let Some(rename) = code::rename_in(&pair.old, &pair.new) {
        if !fw.renames.contains(&rename) {
            fw.renames.push(rename);
        }
        return true;
    }
    let old_defs = code::definitions(&pair.old);
    let new_defs = code::definitions(&pair.new);
    let found_defs = !old_defs.is_empty() || !new_defs.is_empty();
    note_defs(fw, step, old_defs, new_defs);
    let (old, new) = (pair.old.trim(), pair.new.trim());
    let added: Vec<&str> = pair
        .new
        .lines()
        .filter(|l| !l.trim().is_empty() && !pair.old.lines().any(|o| o == *l))
        .collect();
    if r == 0 && !added.is_empty() && added.iter().all(|l| code::is_import(l)) {
        step.imports
            .extend(added.iter().map(|l| text::one_line(l, 100)));
    } else if step.swap.is_none() && is_small_swap(old, new) {
        step.swap = Some((old.to_owned(), new.to_owned()));
    }
    found_defs
}

/// A one-line replacement short enough to quote in a fact.
fn is_small_swap(old: &str, new: &str) -> bool {
    !old.contains('\n')
        && !new.contains('\n')
        && !old.is_empty()
        && !new.is_empty()
        && old.len() <= 100
        && new.len() <= 100
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
