//! Stage 4 of the offline compressor, `draft_fixes`: a bugfix observation
//! for each command that failed and passed after edits (what failed, the
//! edits in between, what passed), and what becomes of the failures earlier
//! pieces of a long turn left open.

use super::commands::attach_fact;
use super::*;

impl Analysis<'_> {
    /// One bugfix per episode (the ones past the cap become facts of the
    /// last), with the runs they used.
    pub(super) fn fix_drafts(&self, used_runs: &mut Vec<usize>) -> Vec<Draft> {
        let mut drafts: Vec<Draft> = Vec::new();
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
        drafts
    }

    /// What becomes of the failures earlier pieces left open: a bugfix when
    /// this piece makes a check pass (the files it changed before are the
    /// fix), a fact when another command succeeds in another form (`git
    /// push`, then `git push -u`), a standing failure when the turn ends
    /// without either, nothing yet otherwise.
    pub(super) fn carried_drafts(
        &self,
        drafts: &mut [Draft],
        used_runs: &mut Vec<usize>,
    ) -> Vec<Draft> {
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
    pub(super) fn carried_fix(&self, open: &narrative::OpenCheck, pass: &Run) -> Draft {
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

    pub(super) fn episode_fact(&self, ep: &Episode) -> String {
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

    pub(super) fn episode_draft(&self, ep: &Episode) -> Draft {
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

    pub(super) fn episode_story(&self, ep: &Episode) -> Draft {
        let (fail, pass) = (&self.runs[ep.fail], &self.runs[ep.pass]);
        let names: Vec<String> = ep.files.iter().map(|&f| self.short(f)).collect();
        let headline = fail.headline.clone().unwrap_or_else(|| "failed".into());
        let mut d = Draft {
            first: fail.index,
            kind: "bugfix",
            title: fix_title(&fail.shown, &names),
            subtitle: headline.clone(),
            ..Default::default()
        };
        self.tell_failures(&mut d, ep, &headline);
        let touched: Vec<String> = ep
            .files
            .iter()
            .map(|&id| self.tell_fix_edits(&mut d, ep, id))
            .collect();
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

    /// The failure facts of an episode: the first, each new error line of
    /// the retries, and how many rounds it took.
    pub(super) fn tell_failures(&self, d: &mut Draft, ep: &Episode, headline: &str) {
        let fail = &self.runs[ep.fail];
        let exit = fail
            .exit_code
            .map(|c| format!(" (exit {c})"))
            .unwrap_or_default();
        d.fact(format!(
            "{} failed{exit}: {headline}",
            code_span(&fail.shown)
        ));
        let mut seen = vec![headline.to_owned()];
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
    }

    /// The edits of file `id` within the episode's rounds, as facts; returns
    /// how the narrative names them ("auth.rs in `login`").
    pub(super) fn tell_fix_edits(&self, d: &mut Draft, ep: &Episode, id: usize) -> String {
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
            let names: Vec<String> = t.names.iter().take(3).map(|n| code_span(n)).collect();
            format!(" in {}", join_and(&names))
        };
        d.fact(format!("Edited {}{within} ({})", fw.rel, t.lines()));
        for (old, new) in t.swaps.iter().take(2) {
            d.fact(format!("{short}: {} → {}", code_span(old), code_span(new)));
        }
        format!("{short}{within}")
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
