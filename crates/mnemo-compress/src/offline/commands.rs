//! Stage 5 of the offline compressor, `settle_commands` and
//! `draft_failures`: every command run not told elsewhere lands somewhere —
//! a check that passed becomes a fact of the work before it, bookkeeping a
//! fact, a failure settled without edits a fact, other commands their own
//! (capped, then merged) observation — and the failures nobody fixed
//! (commands, tools, what earlier pieces left open) become discoveries.

use super::*;

impl Analysis<'_> {
    /// The observations of commands that are not part of other work; the
    /// rest become facts of `drafts`.
    pub(super) fn command_drafts(&self, drafts: &mut [Draft], used_runs: &[usize]) -> Vec<Draft> {
        let mut command_drafts: Vec<Draft> = Vec::new();
        for (r, run) in self.runs.iter().enumerate() {
            if used_runs.contains(&r) || run.class == CommandClass::Inspect {
                continue;
            }
            if let Some(d) = self.settle_run(r, run, drafts, &mut command_drafts) {
                command_drafts.push(d);
            }
        }
        if command_drafts.len() > MAX_COMMAND_OBSERVATIONS {
            let merged = merge_commands(command_drafts);
            command_drafts = vec![merged];
        }
        command_drafts
    }

    /// Settles one run: as a fact of the work around it, or (returned) as
    /// an observation of its own.
    pub(super) fn settle_run(
        &self,
        r: usize,
        run: &Run,
        drafts: &mut [Draft],
        command_drafts: &mut [Draft],
    ) -> Option<Draft> {
        if !run.ok {
            // Failures that were never fixed get their own observation;
            // failures settled without edits become facts.
            if !self.unresolved.contains(&r) {
                let fact = format!(
                    "{} failed at first ({}), then passed without changes",
                    code_span(&run.shown),
                    run.headline.as_deref().unwrap_or("failed")
                );
                attach_fact(drafts, command_drafts, run.index, fact);
            }
            return None;
        }
        if run.bookkeeping && !(drafts.is_empty() && command_drafts.is_empty()) {
            if let Some(fact) = self.bookkeeping_fact(run) {
                attach_fact(drafts, command_drafts, run.index, fact);
            }
            return None;
        }
        if run.class.is_check() && !drafts.is_empty() {
            note_check_passed(run, drafts, command_drafts);
            return None;
        }
        Some(self.run_draft(run))
    }

    /// Failures nobody fixed. A command still failing at the end of a piece
    /// of a turn still running stands only if no later piece fixes it: it
    /// travels in the piece's summary (`next_steps`) until then.
    pub(super) fn failure_drafts(
        &self,
        drafts: &mut [Draft],
        used_runs: &mut Vec<usize>,
    ) -> Vec<Draft> {
        let mut failure_drafts: Vec<Draft> = Vec::new();
        if self.batch.turn_complete {
            for &r in &self.unresolved {
                let run = &self.runs[r];
                if self.is_standing_problem(run) || drafts.is_empty() {
                    push_failure(&mut failure_drafts, self.failed_run_draft(run));
                } else {
                    let fact = format!(
                        "{} failed: {}",
                        code_span(&run.shown),
                        run.headline.as_deref().unwrap_or("failed")
                    );
                    attach_fact(drafts, &mut [], run.index, fact);
                }
            }
        }
        // The failures earlier pieces left open: fixed here, or standing.
        for d in self.carried_drafts(drafts, used_runs) {
            push_failure(&mut failure_drafts, d);
        }
        for f in &self.failures {
            push_failure(&mut failure_drafts, tool_failure_draft(f));
        }
        failure_drafts
    }

    /// A failure worth its own record: a check (test, build, lint) still
    /// failing, or a command that failed again and again. A one-off failed
    /// lookup (`grep` on a path that is not there) is a fact of the work
    /// around it, not a problem to remember.
    fn is_standing_problem(&self, run: &Run) -> bool {
        run.class.is_check()
            || self
                .runs
                .iter()
                .filter(|o| o.key == run.key && !o.ok)
                .count()
                > 1
    }

    pub(super) fn run_draft(&self, run: &Run) -> Draft {
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

    pub(super) fn failed_run_draft(&self, run: &Run) -> Draft {
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
}

/// A passing check after some work: a fact of that work, and its concept.
fn note_check_passed(run: &Run, drafts: &mut [Draft], command_drafts: &mut [Draft]) {
    let mut fact = format!("{} passed", code_span(&run.shown));
    if let Some(s) = &run.summary {
        fact.push_str(&format!(" ({s})"));
    }
    attach_fact(drafts, command_drafts, run.index, fact);
    if let Some(d) = drafts.iter_mut().rev().find(|d| d.first < run.index) {
        if let Some(c) = run.class.concept() {
            d.concept(c);
        }
        d.narrative
            .push(format!("{} passed afterwards.", code_span(&run.shown)));
    }
}

/// A tool other than a command that failed.
fn tool_failure_draft(f: &ToolFailure) -> Draft {
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
    d
}

/// Adds `fact` to the observation the run most likely belongs to: the last
/// one that started before it (or the first command draft).
pub(super) fn attach_fact(
    drafts: &mut [Draft],
    command_drafts: &mut [Draft],
    index: usize,
    fact: String,
) {
    if let Some(d) = drafts.iter_mut().rev().find(|d| d.first < index) {
        d.fact(fact);
    } else if let Some(d) = drafts.first_mut() {
        d.fact(fact);
    } else if let Some(d) = command_drafts.last_mut() {
        d.fact(fact);
    }
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
