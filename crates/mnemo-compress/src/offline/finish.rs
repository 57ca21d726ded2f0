//! The last stage of the offline compressor, `finish_drafts`: puts the
//! drafts in turn order, lets the assistant's words explain them, folds what
//! was read and looked up into the main one (or writes a turn that only
//! looked at things as one observation), types changes by what the user
//! asked (a fix, a refactor), and clamps each to its caps.

use super::*;

impl Analysis<'_> {
    /// Orders, explains and completes the drafts into observations.
    pub(super) fn finish_drafts(&self, mut drafts: Vec<Draft>) -> Vec<ObservationDraft> {
        drafts.sort_by_key(|d| d.first);
        self.explain(&mut drafts);
        if drafts.is_empty() && !self.events.is_empty() {
            drafts.push(self.context_draft());
        } else if let Some(primary) = context_owner(&mut drafts) {
            self.fold_context(primary);
        }
        for d in &mut drafts {
            self.add_reads_of_changed_files(d);
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

    /// Reads of a changed file belong to that file's observation.
    pub(super) fn add_reads_of_changed_files(&self, d: &mut Draft) {
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

    pub(super) fn prompt_hint(&self) -> Option<&'static str> {
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

    /// Read-only commands, each shown once.
    pub(super) fn inspections(&self) -> Vec<String> {
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

    /// The observation of a turn that only looked at things.
    pub(super) fn context_draft(&self) -> Draft {
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
    pub(super) fn fold_context(&self, d: &mut Draft) {
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

/// The draft that takes what the turn read and looked up: the first that
/// changed files (what was read was read for that work), else the first that
/// is not a decision. A command run beside the edits (a tracker update, a
/// commit) is then not tagged with files it never touched.
fn context_owner(drafts: &mut [Draft]) -> Option<&mut Draft> {
    let changed = drafts
        .iter()
        .position(|d| d.kind != "decision" && !d.files_modified.is_empty());
    let index = changed.or_else(|| drafts.iter().position(|d| d.kind != "decision"))?;
    drafts.get_mut(index)
}
