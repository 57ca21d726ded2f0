//! The work of a turn as a reader wants it: a commit names the work it
//! recorded (subject as title, body as the why, trailers dropped),
//! bookkeeping leaves only the facts worth keeping (tasks closed, pushes,
//! housekeeping), a user's answer becomes a decision, and the assistant's
//! words right before a change explain it and, where a title would only
//! name a file, say what it was for.

use super::{Analysis, Draft, PER_FILE_VALUES, Run, TITLE_MAX, Tally, code_span, file_name};
use super::{decision, stated_choice};
use crate::command;
use crate::concrete;
use crate::narrative;
use crate::text::{self, list_some, one_line, plural};

impl Analysis<'_> {
    /// A commit names the work it recorded: the file drafts that started
    /// before it become one observation per commit; the rest are returned.
    pub(super) fn group_by_commit(
        &self,
        mut file_drafts: Vec<(usize, Draft)>,
        drafts: &mut Vec<Draft>,
        used_runs: &mut Vec<usize>,
    ) -> Vec<(usize, Draft)> {
        let mut since = 0;
        for (r, run) in self.runs.iter().enumerate() {
            let Some(message) = run.commit.as_deref().filter(|_| run.ok) else {
                continue;
            };
            used_runs.push(r);
            let (served, rest): (Vec<_>, Vec<_>) = file_drafts
                .into_iter()
                .partition(|(_, d)| d.first < run.index);
            file_drafts = rest;
            let mut d = self.commit_draft(run, message, served);
            self.note_committed_files(&mut d, since..run.index);
            since = run.index;
            drafts.push(d);
        }
        file_drafts
    }

    /// A commit records the files changed since the previous one, those a
    /// fix of their own tells included.
    fn note_committed_files(&self, d: &mut Draft, changed: std::ops::Range<usize>) {
        for fw in &self.files {
            if fw.steps.iter().any(|s| changed.contains(&s.index)) {
                d.modified(&fw.path);
            }
        }
    }

    /// One observation for the work a commit recorded: titled with its
    /// subject, its body as the why, each file's change as a fact.
    pub(super) fn commit_draft(
        &self,
        run: &Run,
        message: &str,
        served: Vec<(usize, Draft)>,
    ) -> Draft {
        let (subject, kind) = command::commit_subject(message);
        let headline = message.lines().next().unwrap_or("").trim();
        let kind = kind.unwrap_or_else(|| {
            if served.iter().any(|(_, d)| d.kind == "feature") {
                "feature"
            } else {
                served.first().map_or("change", |(_, d)| d.kind)
            }
        });
        let names: Vec<String> = served.iter().map(|(id, _)| self.short(*id)).collect();
        let (added, removed) = served.iter().fold((0, 0), |(a, r), (id, _)| {
            let t = Tally::of(self.own_steps(*id));
            (a + t.added, r + t.removed)
        });
        let mut d = Draft {
            first: served
                .iter()
                .map(|(_, d)| d.first)
                .min()
                .unwrap_or(run.index),
            events: vec![run.index],
            kind,
            title: match (subject.is_empty(), served.is_empty()) {
                (true, _) => "Committed changes".to_owned(),
                // Work recorded by an earlier piece: say it is a commit.
                (false, true) => format!("Committed: {subject}"),
                (false, false) => subject,
            },
            subtitle: if names.is_empty() {
                format!("commit {}", code_span(&one_line(headline, 80)))
            } else {
                format!(
                    "{}: {}, +{added} −{removed} lines",
                    plural(names.len(), "file"),
                    list_some(&names, 4)
                )
            },
            ..Default::default()
        };
        d.concept("git");
        let body: String = message
            .lines()
            .skip(1)
            .filter(|l| !is_trailer(l))
            .collect::<Vec<_>>()
            .join("\n");
        d.narrative.extend(text::sentences(&body, 6));
        d.fact(format!("Committed \"{}\"", one_line(headline, 200)));
        let several = served.len() > 1;
        for (id, part) in served {
            let fw = &self.files[id];
            d.modified(&fw.path);
            d.file_concepts(&fw.path);
            d.events.extend(part.events);
            if several {
                d.fact(self.change_fact(id));
                self.value_fact(id, PER_FILE_VALUES)
                    .into_iter()
                    .for_each(|f| d.fact(f));
            } else {
                for f in part.facts {
                    d.fact(f);
                }
            }
            if let Some(first) = part.narrative.into_iter().next() {
                d.narrative.push(first);
            }
        }
        if d.narrative.is_empty() {
            d.narrative
                .push(format!("Committed \"{}\".", one_line(headline, 200)));
        }
        d
    }

    /// The fact a bookkeeping command leaves on the work it served: tasks
    /// closed or created, pushes, pull requests; None for the rest (status
    /// updates, syncs, listings), which say nothing a reader needs.
    pub(super) fn bookkeeping_fact(&self, run: &Run) -> Option<String> {
        let command = self.command_of(run);
        if let Some((ids, reason)) = command::closed_tasks(command) {
            return Some(match reason {
                Some(r) => format!("Closed {}: {r}", ids.join(", ")),
                None => format!("Closed {}", ids.join(", ")),
            });
        }
        if let Some(title) = command::created_task(command).filter(|t| !t.is_empty()) {
            return Some(format!("Created task \"{title}\""));
        }
        let key = run.key.split_once(':').map_or("", |(_, k)| k);
        let worth = ["git push", "gh pr", "git tag", "git merge", "git rebase"]
            .iter()
            .any(|k| key.starts_with(k))
            || command::created_task(command).is_some()
            || command::is_housekeeping(command);
        worth.then(|| match &run.description {
            Some(desc) => format!("{} ({})", text::capitalize(desc), code_span(&run.shown)),
            None => format!("Ran {}", code_span(&run.shown)),
        })
    }

    /// A `decision` for each question the user's answer settled, and for
    /// a choice the turn's prompt states (read once, with the turn's first
    /// piece).
    pub(super) fn decision_drafts(&self) -> Vec<Draft> {
        let mut drafts: Vec<Draft> = self
            .questions
            .iter()
            .filter_map(|(index, q)| {
                let dec = decision::decide(q, TITLE_MAX)?;
                Some(decision_draft(dec, vec![*index]))
            })
            .collect();
        let prompt = self
            .batch
            .prompt
            .as_deref()
            .filter(|p| self.batch.earlier_pieces.is_empty() && !narrative::is_host_text(p));
        if let Some(dec) = prompt.and_then(|p| stated_choice::stated_choice(p, TITLE_MAX)) {
            drafts.push(decision_draft(dec, Vec::new()));
        }
        drafts
    }

    /// Puts the assistant's explanations into the observations they
    /// explain: what it said right before one of an observation's tool
    /// calls, or before the reads and searches that led to its next one.
    /// A title that only says "Edited x" takes the words of the action the
    /// assistant announced.
    pub(super) fn explain(&self, drafts: &mut [Draft]) {
        if self.said.is_empty() {
            return;
        }
        let mut at: Vec<usize> = self.said.keys().copied().collect();
        at.sort_unstable();
        for i in at {
            let own = drafts.iter().position(|d| d.events.contains(&i));
            let next = || {
                drafts
                    .iter()
                    .enumerate()
                    .filter(|(_, d)| d.kind != "decision")
                    .filter_map(|(n, d)| d.events.iter().filter(|&&e| e > i).min().map(|&e| (e, n)))
                    .min()
                    .map(|(_, n)| n)
            };
            if let Some(n) = own.or_else(next) {
                drafts[n].said_at.push(i);
            }
        }
        for d in drafts.iter_mut().filter(|d| !d.said_at.is_empty()) {
            d.said_at.sort_unstable();
            if d.retitle || is_bare_title(&d.title) {
                self.retitle_from_words(d);
            }
            self.add_why(d);
        }
    }

    /// A title that only describes the change takes the action the
    /// assistant announced right before it (or, for a bare title, in the
    /// lead-up); what the change was stays as its first fact.
    fn retitle_from_words(&self, d: &mut Draft) {
        let main = d
            .files_modified
            .first()
            .map(|p| file_name(p).to_owned())
            .unwrap_or_default();
        let room = TITLE_MAX.saturating_sub(main.len() + 3);
        // The words right before the change first, then the lead-up.
        let mut order: Vec<usize> = d
            .said_at
            .iter()
            .copied()
            .filter(|i| d.events.contains(i))
            .collect();
        // A title that already names the change gives way only to
        // what was said right before it, not to the lead-up.
        if is_bare_title(&d.title) {
            order.extend(d.said_at.iter().filter(|i| !d.events.contains(i)));
        }
        let notes = order
            .iter()
            .filter_map(|i| self.said.get(i).map(String::as_str));
        let candidates: Vec<String> = narrative::action_titles(notes, room)
            .into_iter()
            .map(|t| concrete::name_pronoun(&t, &main).unwrap_or(t))
            .collect();
        // The first action that names what it acts on; one that
        // names nothing ("Implement both tasks") only replaces a
        // title that says nothing either.
        let pick = candidates
            .iter()
            .find(|t| !concrete::is_vague(t))
            .or_else(|| candidates.first().filter(|_| is_bare_title(&d.title)))
            .cloned();
        if let Some(t) = pick {
            let t = if main.is_empty() || t.contains(&main) {
                t
            } else {
                format!("{t} ({main})")
            };
            let was = std::mem::replace(&mut d.title, t);
            if !is_bare_title(&was) && !d.facts.contains(&was) {
                d.facts.insert(0, was);
            }
        }
    }

    /// The assistant's reasons given before the draft's events, as its
    /// narrative's first sentence (a decision's last).
    fn add_why(&self, d: &mut Draft) {
        let mut whys: Vec<&str> = Vec::new();
        for w in d.said_at.iter().filter_map(|i| self.why.get(i)) {
            if !whys.contains(&w.as_str()) {
                whys.push(w);
            }
        }
        if !whys.is_empty() {
            let why = text::clamp_sentences(&whys.join(" "), 700);
            // A decision says what was chosen first, then the lead-up.
            let at = if d.kind == "decision" {
                d.narrative.len()
            } else {
                0
            };
            d.narrative.insert(at, why);
        }
    }
}

/// True for a commit message's trailer lines (`Co-Authored-By:`, a tool's
/// "Generated with" line): credits, not content.
fn is_trailer(line: &str) -> bool {
    let l = line.trim().to_ascii_lowercase();
    [
        "co-authored-by:",
        "signed-off-by:",
        "reviewed-by:",
        "change-id:",
    ]
    .iter()
    .any(|t| l.starts_with(t))
        || l.contains("generated with")
}

/// True for a title that says which file or command, not what for.
fn is_bare_title(title: &str) -> bool {
    ["Edited ", "Rewrote ", "Ran ", "Changed imports of "]
        .iter()
        .any(|p| title.starts_with(p))
        || (title.starts_with("Changed ") && !title.contains('`'))
        || (title.starts_with("Created ") && !title.contains(" with "))
}

/// The `decision` draft of `dec`, telling of `events` (none for a choice
/// the prompt stated).
fn decision_draft(dec: decision::Decision, events: Vec<usize>) -> Draft {
    let mut d = Draft {
        first: events.first().copied().unwrap_or(0),
        events,
        kind: "decision",
        title: dec.title,
        subtitle: dec.subtitle,
        narrative: vec![dec.narrative],
        ..Default::default()
    };
    for f in dec.facts {
        d.fact(f);
    }
    d
}
