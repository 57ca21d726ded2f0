//! The offline compressor's turn summary: what was asked (the request a
//! continuation belongs to), investigated, completed (commits, tasks closed,
//! checks passing, files created and changed, decisions), learned (failures
//! fixed, causes found) and left open (the report's remaining items,
//! unfinished todos, checks still failing), merged with a long turn's
//! earlier pieces.

use super::{Analysis, code_span, file_name};
use crate::command::{self, CommandClass};
use crate::filler;
use crate::narrative;
use crate::text::{self, list_some, one_line, plural};
use crate::{ObservationDraft, SummaryDraft};

impl Analysis<'_> {
    /// The turn's summary (or, for a piece of a turn still running, its
    /// partial summary), merged with the earlier pieces' when there are.
    pub(super) fn summary(&self, observations: &[ObservationDraft]) -> SummaryDraft {
        let report = self
            .batch
            .narrative
            .as_ref()
            .and_then(|n| n.final_report.as_deref())
            .or(self.batch.last_assistant_message.as_deref())
            .filter(|_| self.batch.turn_complete);
        let answers = self.files.iter().all(|f| f.steps.is_empty())
            && !self.runs.iter().any(|r| r.commit.is_some());
        let changed: Vec<&str> = self
            .files
            .iter()
            .filter(|f| !f.steps.is_empty())
            .map(|f| file_name(&f.rel))
            .collect();
        let (said_done, said_learned, _said_next) = report
            .map(|r| split_assistant(r, answers, &changed))
            .unwrap_or_default();

        let mut notes = self.notes.clone();
        let interrupted: Vec<String> = self
            .runs
            .iter()
            .filter(|r| r.interrupted)
            .map(|r| code_span(&r.shown))
            .collect();
        if !interrupted.is_empty() {
            notes.push(format!("interrupted: {}", list_some(&interrupted, 3)));
        }
        if !self.unresolved.is_empty() || !self.failures.is_empty() {
            notes.push(format!(
                "{} still failing at the end of {}",
                plural(self.unresolved.len() + self.failures.len(), "tool call"),
                if self.batch.turn_complete {
                    "the turn"
                } else {
                    "this part of the turn"
                }
            ));
        }
        let mut learned = self.learned();
        learned.extend(said_learned);
        let mut completed = self.completed(observations);
        completed.extend(said_done);
        // Open work is what demonstrably was left: a turn cut short, the
        // todo list's unfinished items, checks still failing. What the
        // model's report suggests doing next is its text, not the user's
        // open work, and is not carried.
        let mut next = Vec::new();
        // An interrupted turn has no report: its last words still tell
        // what it was doing.
        let last_words = report.or_else(|| self.trailing_note());
        next.extend(last_words.and_then(|r| self.cut_short(r)));
        next.extend(self.left_open());

        let last = SummaryDraft {
            request: narrative::request(self.batch),
            investigated: text::capitalize(&text::join_within(self.investigated(), 800)),
            learned: text::join_within(learned, 1000),
            completed: text::join_within(completed, 1200),
            next_steps: text::join_within(next, 600),
            notes: text::join_within(notes, 600),
        };
        // A piece's partial summary is its own; the turn's end merges them all.
        if self.batch.turn_complete {
            let mut merged = narrative::merge(&self.batch.earlier_pieces, last);
            merged.next_steps = self.without_unasked_bookkeeping(&merged.next_steps);
            merged
        } else {
            last
        }
    }

    fn investigated(&self) -> Vec<String> {
        let mut investigated = Vec::new();
        if !self.reads.is_empty() {
            let names: Vec<String> = self.reads.iter().map(|(p, _)| self.rel(p)).collect();
            investigated.push(format!("read {}", list_some(&names, 8)));
        }
        investigated.extend(self.looked_up.iter().take(5).cloned());
        let inspect = self.inspections();
        if !inspect.is_empty() {
            investigated.push(format!("ran {}", list_some(&inspect, 4)));
        }
        investigated
    }

    /// What was found out: failures and their fixes, and the causes the
    /// assistant named along the way.
    fn learned(&self) -> Vec<String> {
        let mut learned: Vec<String> = Vec::new();
        for ep in &self.episodes {
            let fail = &self.runs[ep.fail];
            learned.push(format!(
                "{} failed with {}; fixed by editing {}",
                code_span(&fail.shown),
                fail.headline.as_deref().unwrap_or("an error"),
                list_some(
                    &ep.files.iter().map(|&f| self.short(f)).collect::<Vec<_>>(),
                    3
                )
            ));
        }
        // A command that failed and was never fixed taught nothing yet: it
        // stays in the notes ("still failing") and, for a check, in the open
        // work.
        if let Some(n) = &self.batch.narrative {
            // The notes said during this batch (and, at the turn's end,
            // those not tied to a call).
            let here = |note: &&crate::AssistantNote| match note.before_tool_use_id.as_deref() {
                Some(id) => self
                    .batch
                    .events
                    .iter()
                    .any(|e| e.tool_use_id.as_deref() == Some(id)),
                None => self.batch.turn_complete,
            };
            for note in n.notes.iter().filter(here) {
                for f in narrative::findings(&note.text, 2) {
                    if learned.len() < 8 {
                        learned.push(f);
                    }
                }
            }
        }
        learned
    }

    /// What was achieved: commits, tasks closed, checks that pass, files
    /// created and changed, decisions taken.
    fn completed(&self, observations: &[ObservationDraft]) -> Vec<String> {
        let mut completed: Vec<String> = Vec::new();
        let changed: Vec<usize> = (0..self.files.len())
            .filter(|&id| !self.files[id].steps.is_empty())
            .collect();
        let (created, edited): (Vec<usize>, Vec<usize>) =
            changed.into_iter().partition(|&id| self.files[id].created);
        for (verb, ids) in [("created", created), ("changed", edited)] {
            if !ids.is_empty() {
                let names: Vec<String> = ids.iter().map(|&id| self.short(id)).collect();
                completed.push(format!("{verb} {}", list_some(&names, 16)));
            }
        }
        // Commits, tasks closed and checks passing, in the order they happened.
        let mut steps: Vec<(usize, String)> = Vec::new();
        for run in self.runs.iter().filter(|r| r.ok) {
            if let Some(message) = &run.commit {
                let subject = message.lines().next().unwrap_or("").trim();
                steps.push((
                    run.index,
                    format!("committed \"{}\"", one_line(subject, 160)),
                ));
            }
            if let Some((ids, reason)) = command::closed_tasks(self.command_of(run)) {
                steps.push((
                    run.index,
                    match reason {
                        Some(r) => format!("closed {} ({})", ids.join(", "), one_line(&r, 120)),
                        None => format!("closed {}", ids.join(", ")),
                    },
                ));
            }
        }
        let mut seen: Vec<&str> = Vec::new();
        for run in self.runs.iter().rev() {
            let check = matches!(
                run.class,
                CommandClass::Test | CommandClass::Build | CommandClass::Lint
            );
            if !check || seen.contains(&run.key.as_str()) {
                continue;
            }
            seen.push(&run.key);
            if run.ok {
                steps.push((
                    run.index,
                    match &run.summary {
                        Some(s) => format!("{} passes ({s})", code_span(&run.shown)),
                        None => format!("{} passes", code_span(&run.shown)),
                    },
                ));
            }
        }
        // A command an earlier piece left failing that worked here in
        // another form (a check's pass is listed above): settled, and said
        // so for the turn's end to know.
        for (open, pass) in self.carried() {
            if let Some(run) = pass.map(|p| &self.runs[p]).filter(|r| !r.class.is_check()) {
                steps.push((
                    run.index,
                    format!(
                        "{} worked after {} failed",
                        code_span(&run.shown),
                        code_span(&open.shown)
                    ),
                ));
            }
        }
        steps.sort_by_key(|(index, _)| *index);
        completed.extend(steps.into_iter().map(|(_, s)| s));
        completed.extend(
            observations
                .iter()
                .filter(|o| o.kind == "decision")
                .map(|o| o.title.clone()),
        );
        completed
    }

    /// What the agent was in the middle of when the turn ended, from a
    /// final report that is still at it or announces a step it never took
    /// ("Still compiling the dependencies. Let me wait."), with the command
    /// that ran last when it was the turn's last call.
    fn cut_short(&self, report: &str) -> Option<String> {
        let doing = in_progress(report)?;
        let last = self.events.len().checked_sub(1);
        let running = self
            .runs
            .last()
            .filter(|r| Some(r.index) == last && !doing.starts_with("about to "))
            .map(|r| format!(" ({})", code_span(&r.shown)))
            .unwrap_or_default();
        Some(format!("unfinished when the turn ended: {doing}{running}"))
    }

    /// The assistant's last words in a complete turn that has no final
    /// report (it was interrupted): said after its last tool call, right
    /// before it, or before a call that never completed (refused or cut off,
    /// so not captured).
    fn trailing_note(&self) -> Option<&str> {
        if !self.batch.turn_complete {
            return None;
        }
        let note = self.batch.narrative.as_ref()?.notes.last()?;
        let events = &self.batch.events;
        let ends_turn = match &note.before_tool_use_id {
            None => true,
            Some(id) => {
                let at = events
                    .iter()
                    .position(|e| e.tool_use_id.as_ref() == Some(id));
                at.is_none_or(|i| i + 1 == events.len())
            }
        };
        ends_turn.then_some(note.text.as_str())
    }

    /// What was left open: the todo list's unfinished items and the checks
    /// still failing.
    fn left_open(&self) -> Vec<String> {
        let mut open: Vec<String> = self
            .open_todos
            .iter()
            .map(|t| format!("unfinished: {t}"))
            .collect();
        for &r in &self.unresolved {
            let run = &self.runs[r];
            // Bookkeeping that failed (a rebase, a push, a tracker update)
            // serves the work: open only when it was the request.
            let asked = run.bookkeeping && self.requested(&run.key);
            // A piece carries every failure still open to the later pieces.
            if run.class.is_check() || asked || !self.batch.turn_complete {
                open.push(format!(
                    "make {} pass ({})",
                    code_span(&run.shown),
                    run.headline.as_deref().unwrap_or("failing")
                ));
            }
        }
        open
    }

    /// The turn's open work without the bookkeeping commands an earlier
    /// piece left failing that the user did not ask for.
    fn without_unasked_bookkeeping(&self, next_steps: &str) -> String {
        let unasked = |shown: &str| {
            let class = command::classify(shown);
            command::is_bookkeeping(shown, class)
                && !self.requested(&command::same_command_key(shown, class))
        };
        let kept: Vec<String> = narrative::items(next_steps)
            .filter(|i| narrative::open_check(i).is_none_or(|c| !unasked(&c.shown)))
            .map(str::to_owned)
            .collect();
        text::join_within(kept, 600)
    }

    /// Whether the user's request names the operation of a command (its
    /// [`command::same_command_key`]): its subcommand, or its program, as a
    /// word of the request.
    fn requested(&self, key: &str) -> bool {
        let operation = key.rsplit([':', ' ']).next().unwrap_or_default();
        if operation.len() < 3 {
            return false;
        }
        let request = narrative::request(self.batch).to_lowercase();
        request
            .split(|c: char| !c.is_alphanumeric() && c != '-' && c != '_')
            .any(|w| w == operation.to_lowercase())
    }
}

/// Words of a sentence that suggests what to do next.
const NEXT: &[&str] = &[
    "next step",
    "next,",
    "todo",
    "to do:",
    "you may want",
    "you might want",
    "you could",
    "consider",
    "should also",
    "still need",
    "remaining",
    "follow-up",
    "follow up",
    "left to do",
    "not yet",
    "would need",
    "recommend",
    "suggest",
    "in a future",
    "later,",
    "next time",
    "left open",
    "pending",
    "out of scope",
    "did not get to",
    "didn't get to",
    "not done",
    "unfinished",
];
/// Words that open a sentence saying what was done.
const DONE: &[&str] = &[
    "added",
    "created",
    "fixed",
    "implemented",
    "updated",
    "changed",
    "refactored",
    "removed",
    "renamed",
    "wrote",
    "moved",
    "replaced",
    "extracted",
    "introduced",
    "converted",
    "deleted",
    "cleaned",
    "migrated",
    "bumped",
    "installed",
    "committed",
    "done",
    "all tests pass",
    "tests pass",
    "now passes",
    "now pass",
];
/// Words of a sentence that tells what was found out.
const LEARNED: &[&str] = &[
    "because",
    "caused by",
    "due to",
    "turns out",
    "root cause",
    "the issue",
    "the problem",
    "the bug",
    "the reason",
    "i found",
    "it seems",
];

/// The last assistant message split into what it says was done, what it
/// says was found out, and what it suggests doing next.
/// `answers`: the turn changed nothing, so the rest of its message (the
/// answer to a question) counts as learned. `changed`: the names of the
/// files the turn changed; a sentence that names one says what was done
/// to it ("limits/search.py adds SEARCH_API = …").
fn split_assistant(
    message: &str,
    answers: bool,
    changed: &[&str],
) -> (Vec<String>, Vec<String>, Vec<String>) {
    let (mut done, mut learned, mut next) = (Vec::new(), Vec::new(), Vec::new());
    for s in text::sentences(message, 30) {
        if s.ends_with(':') {
            continue;
        }
        let lower = s.to_ascii_lowercase();
        let first_words: Vec<&str> = lower
            .split(|c: char| !c.is_alphanumeric() && c != '\'')
            .filter(|w| !w.is_empty())
            .take(5)
            .collect();
        if NEXT.iter().any(|w| lower.contains(w)) {
            if next.len() < 3 {
                next.push(s);
            }
        } else if LEARNED.iter().any(|w| lower.contains(w)) {
            if learned.len() < 3 {
                learned.extend(filler::strip(&s));
            }
        } else if DONE.iter().any(|w| {
            if w.contains(' ') {
                lower.contains(w)
            } else {
                first_words.contains(w)
            }
        }) {
            if done.len() < 4 {
                done.push(s);
            }
        } else if answers && learned.len() < 3 {
            // A turn that changed nothing: its answer is what was learned,
            // without the conversation around it ("Good question").
            learned.extend(filler::strip(&s));
        } else if done.len() < 4 && changed.iter().any(|f| s.contains(f)) {
            done.push(s);
        }
        // In a turn of work, the rest (restated plans, recaps) is not kept.
    }
    (done, learned, next)
}

/// Openers of a sentence that announces a step ("Let me wait more.").
const ANNOUNCES: &[&str] = &[
    "let me ",
    "now let me ",
    "next, let me ",
    "let's ",
    "now let's ",
    "i'll ",
    "now i'll ",
    "i will ",
    "i'm going to ",
];

/// Announcements that are courtesy, not a step.
const COURTESY: &[&str] = &["let me know", "i'll leave", "i'll let you", "let's discuss"];

/// Words of a sentence that says something is still under way.
const UNDER_WAY: &[&str] = &[
    "still ",
    "in progress",
    "is running",
    "are running",
    "waiting for",
];

/// What a final report says was still under way or about to happen: its
/// sentences at the end that say so ("still compiling the dependencies";
/// "about to: run the migrations" when it only announces a step). None
/// for a report that ends on what was done.
fn in_progress(report: &str) -> Option<String> {
    let sentences = text::sentences(report, 40);
    let last = sentences.last()?;
    let lower = |s: &str| s.to_lowercase();
    let announces = |s: &str| {
        let l = lower(s);
        ANNOUNCES.iter().any(|o| l.starts_with(o)) && !COURTESY.iter().any(|c| l.starts_with(c))
    };
    let under_way = |s: &str| {
        let l = lower(s);
        UNDER_WAY
            .iter()
            .any(|w| l.starts_with(w.trim_start()) || l.contains(&format!(" {w}")))
    };
    if !announces(last) && !under_way(last) {
        return None;
    }
    // The trailing run of such sentences, in order.
    let tail: Vec<&String> = {
        let mut t: Vec<&String> = sentences
            .iter()
            .rev()
            .take_while(|s| announces(s) || under_way(s))
            .take(3)
            .collect();
        t.reverse();
        t
    };
    let states: Vec<String> = tail
        .iter()
        .filter(|s| under_way(s))
        .map(|s| one_line(s.trim_end_matches(['.', '!', '…']), 160))
        .collect();
    if !states.is_empty() {
        return Some(lower(&states.join("; ")));
    }
    let step = tail.first()?;
    let l = lower(step);
    let opener = ANNOUNCES
        .iter()
        .filter(|o| l.starts_with(*o))
        .map(|o| o.len())
        .max()?;
    let rest = step[opener..].trim_end_matches(['.', '!', ':', '…']).trim();
    (!rest.is_empty()).then(|| format!("about to {}", one_line(rest, 160)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_report_that_is_still_at_it_says_what_was_under_way() {
        assert_eq!(
            in_progress("Wrote the parser. Still downloading the crates index. Let me wait.")
                .as_deref(),
            Some("still downloading the crates index")
        );
        assert_eq!(
            in_progress("The schema is in place. Let me run the migrations now.").as_deref(),
            Some("about to run the migrations now")
        );
        assert_eq!(
            in_progress("The build is still running in the background, waiting for it.").as_deref(),
            Some("the build is still running in the background, waiting for it")
        );
        assert_eq!(in_progress("Fixed the login check. All tests pass."), None);
        assert_eq!(
            in_progress("Fixed the login check. Let me know if you want rate limiting."),
            None
        );
    }

    #[test]
    fn assistant_messages_split_into_done_learned_next() {
        let (done, learned, next) = split_assistant(
            "I fixed the login check. The bug was caused by a plain string comparison.\n\n\
             - Added `check_hash`\n- Next, you may want to add rate limiting.",
            true,
            &[],
        );
        assert_eq!(done, ["I fixed the login check.", "Added `check_hash`"]);
        assert_eq!(
            learned,
            ["The bug was caused by a plain string comparison."]
        );
        assert_eq!(next, ["Next, you may want to add rate limiting."]);
    }

    #[test]
    fn an_answer_keeps_its_facts_not_the_conversation_around_them() {
        let (_, learned, _) = split_assistant(
            "Good question. Now I have enough context.

             Yes, the cache is rebuilt on every start because `load()` ignores the index.",
            true,
            &[],
        );
        assert_eq!(
            learned,
            ["The cache is rebuilt on every start because `load()` ignores the index."]
        );
    }

    #[test]
    fn a_report_sentence_about_a_changed_file_says_what_was_done() {
        let (done, _, _) = split_assistant(
            "I looked around first.\n\n- search.py sets SEARCH_API to 40 per burst.\n\nThe rest is as before.",
            false,
            &["search.py"],
        );
        assert_eq!(done, ["search.py sets SEARCH_API to 40 per burst."]);
    }
}
