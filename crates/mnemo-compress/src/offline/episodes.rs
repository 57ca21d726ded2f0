//! Stage 2 of the offline compressor, `find_episodes`: pairs each failed
//! command with the later run that settled it and the file changes in
//! between (one bugfix story per command), and leaves the failures nobody
//! fixed as unresolved; plus the questions later stages ask of that
//! pairing (is this change part of a fix? which failures did earlier pieces
//! of the turn leave open?).

use super::*;

impl Analysis<'_> {
    /// Pairs failed commands with a later success of the same command and
    /// the file changes in between.
    pub(super) fn find_episodes(&mut self) {
        let mut open: Vec<usize> = Vec::new();
        for r in 0..self.runs.len() {
            let run = &self.runs[r];
            if run.class == CommandClass::Inspect {
                continue;
            }
            if !run.ok {
                if !open.iter().any(|&o| self.runs[o].key == run.key) {
                    open.push(r);
                }
                continue;
            }
            let settled: Vec<usize> = open
                .iter()
                .copied()
                .filter(|&o| self.settles(o, r))
                .collect();
            open.retain(|&o| !self.settles(o, r));
            for f in settled {
                self.record_fix(f, r);
            }
        }
        self.unresolved = open;
    }

    /// True when run `pass` settles the failed run `fail`: the same command,
    /// or a passing test run of the same tool after a failed build.
    pub(super) fn settles(&self, fail: usize, pass: usize) -> bool {
        let (f, run) = (&self.runs[fail], &self.runs[pass]);
        f.key == run.key
            || (f.class == CommandClass::Build
                && run.class == CommandClass::Test
                && f.program == run.program)
    }

    /// Records that run `r` settled the failed run `f`, with the files
    /// edited in between, in the command's episode.
    pub(super) fn record_fix(&mut self, f: usize, r: usize) {
        let (from, to) = (self.runs[f].index, self.runs[r].index);
        let files: Vec<usize> = self
            .files
            .iter()
            .enumerate()
            .filter(|(_, fw)| fw.changes().any(|i| i > from && i < to))
            .map(|(id, _)| id)
            .collect();
        // Edits do not fix a push or a tracker update: settled, no story.
        if files.is_empty() || self.runs[f].bookkeeping {
            return;
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

    /// True when every change of the file happened while fixing a failure
    /// (and it was not created in this batch): the bugfix tells its story.
    pub(super) fn absorbed(&self, id: usize) -> bool {
        let fw = &self.files[id];
        !fw.created && !fw.steps.is_empty() && fw.changes().all(|i| self.in_episode(id, i))
    }

    /// True when the change of file `id` at event `index` happened between a
    /// failure and the success that settled it.
    pub(super) fn in_episode(&self, id: usize, index: usize) -> bool {
        self.episodes.iter().any(|ep| {
            ep.files.contains(&id)
                && ep
                    .rounds
                    .iter()
                    .any(|&(f, p)| index > self.runs[f].index && index < self.runs[p].index)
        })
    }

    /// The changes of file `id` that are not part of a fix.
    pub(super) fn own_steps(&self, id: usize) -> impl Iterator<Item = &Step> + '_ {
        self.files[id]
            .steps
            .iter()
            .filter(move |s| !self.in_episode(id, s.index))
    }

    /// The failures earlier pieces of the turn left open, with the run of
    /// this piece that settles each (the same command passing, or a passing
    /// test run of a failed build's tool); None while it is still open. A
    /// command this piece also ran and failed tells its own story.
    pub(super) fn carried(&self) -> Vec<(narrative::OpenCheck, Option<usize>)> {
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
}
