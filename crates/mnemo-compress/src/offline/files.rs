//! Stage 3 of the offline compressor, `draft_file_work`: one observation
//! per file changed outside a fix (created, rewritten, renamed, definitions
//! added, changed or removed, imports, small replacements), the smaller ones
//! merged when a turn touched many files, and the files whose change failed
//! and was never retried.

use super::*;

impl Analysis<'_> {
    /// A file's name as titles show it: the bare name, unless another file
    /// of the batch has the same name.
    pub(super) fn short(&self, id: usize) -> String {
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

    /// The work on each file changed outside a fix, as (file, draft).
    pub(super) fn file_drafts(&self) -> Vec<(usize, Draft)> {
        (0..self.files.len())
            .filter(|&id| !self.files[id].steps.is_empty() && !self.absorbed(id))
            .map(|id| (id, self.file_draft(id)))
            .collect()
    }

    /// Keeps the biggest changes on their own and merges the rest, when
    /// there are more than `MAX_FILE_OBSERVATIONS`.
    pub(super) fn cap_file_drafts(&self, mut file_drafts: Vec<(usize, Draft)>) -> Vec<Draft> {
        if file_drafts.len() > MAX_FILE_OBSERVATIONS {
            file_drafts.sort_by_key(|(id, _)| {
                let fw = &self.files[*id];
                let t = Tally::of(fw.steps.iter());
                std::cmp::Reverse(t.added + t.removed + usize::from(fw.created) * 1000)
            });
            let rest: Vec<(usize, Draft)> = file_drafts.split_off(MAX_FILE_OBSERVATIONS - 1);
            file_drafts.push((usize::MAX, self.merged_files_draft(rest)));
        }
        file_drafts.into_iter().map(|(_, d)| d).collect()
    }

    /// Files whose change failed and that were never changed after.
    pub(super) fn failed_change_drafts(&self) -> Vec<Draft> {
        let mut out = Vec::new();
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
                out.push(d);
            }
        }
        out
    }

    /// Up to `max` of the concrete values the file's own changes set, told
    /// in one fact (for a change of several files, one line per file).
    pub(super) fn value_fact(&self, id: usize, max: usize) -> Option<String> {
        let t = Tally::of(self.own_steps(id));
        values::joined_fact(&t.values, &self.files[id].rel, max)
    }

    /// "Changed function `login` in auth.py (+1 −1 lines)" and the like.
    pub(super) fn change_fact(&self, id: usize) -> String {
        let (_, title, sub) = self.describe_file(id);
        format!("{title} ({sub})")
    }

    /// Kind, title and subtitle of the work on one file (its changes that
    /// are not part of a fix).
    pub(super) fn describe_file(&self, id: usize) -> (&'static str, String, String) {
        let fw = &self.files[id];
        let t = Tally::of(self.own_steps(id));
        if fw.deleted && !fw.created {
            return (
                "change",
                format!("Deleted {}", fw.rel),
                "file deleted".to_owned(),
            );
        }
        if fw.created {
            return describe_creation(fw, &t);
        }
        let lines = t.lines();
        if fw.rewritten && t.edits <= 1 && fw.defs_added.is_empty() {
            return ("change", format!("Rewrote {}", fw.rel), lines);
        }
        let name = self.short(id);
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
        let (added, changed, removed) = (&fw.defs_added, &fw.defs_changed, &fw.defs_removed);
        if !added.is_empty() && changed.is_empty() && removed.is_empty() {
            let title = format!("Added {} to {name}", defs_with_kind(added));
            return ("feature", title, lines);
        }
        ("change", edit_title(fw, &t, &name), lines)
    }

    pub(super) fn file_draft(&self, id: usize) -> Draft {
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
        if fw.deleted && !fw.created {
            d.fact(format!("Deleted {}", fw.rel));
            d.narrative.push(format!("Deleted {}.", fw.rel));
        } else if fw.created {
            tell_creation(&mut d, fw, &t);
        } else {
            tell_edits(&mut d, fw, &t);
        }
        tell_details(&mut d, fw, &t, &name);
        d.events.extend(self.own_steps(id).map(|s| s.index));
        d.events.extend(fw.failures.iter().map(|(i, _)| *i));
        d.retitle = true;
        d
    }

    pub(super) fn merged_files_draft(&self, parts: Vec<(usize, Draft)>) -> Draft {
        let events: Vec<usize> = parts.iter().flat_map(|(_, d)| d.events.clone()).collect();
        let mut d = self.merged_files_story(parts);
        d.events = events;
        d.retitle = true;
        d
    }

    pub(super) fn merged_files_story(&self, parts: Vec<(usize, Draft)>) -> Draft {
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
        for &id in &ids {
            self.value_fact(id, PER_FILE_VALUES)
                .into_iter()
                .for_each(|f| d.fact(f));
        }
        d.narrative.push(format!(
            "Changed {} (+{added} −{removed} lines).",
            list_some(&names, 6)
        ));
        d
    }
}

/// "`a`, `b` and `c`", "`a`, `b`, `c` and 2 more".
fn defs_listed(defs: &[Definition]) -> String {
    let shown: Vec<String> = defs.iter().take(3).map(|d| code_span(&d.name)).collect();
    match defs.len().saturating_sub(3) {
        0 => join_and(&shown),
        more => format!("{} and {more} more", shown.join(", ")),
    }
}

/// "function `login`" for one definition, the list for several.
fn defs_with_kind(defs: &[Definition]) -> String {
    match defs {
        [one] => format!("{} {}", one.kind, code_span(&one.name)),
        _ => defs_listed(defs),
    }
}

/// Kind, title and subtitle of a file created in the batch.
fn describe_creation(fw: &FileWork, t: &Tally) -> (&'static str, String, String) {
    let mut title = format!("Created {}", fw.rel);
    if !fw.defs_added.is_empty() {
        title.push_str(&format!(" with {}", defs_listed(&fw.defs_added)));
    }
    let lang = code::language_of(&fw.path);
    let kind = if code::is_test_path(&fw.path) || matches!(lang, Some("docs" | "config") | None) {
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
    (kind, title, sub)
}

/// The title of edits to an existing file, by the definitions they touched
/// or, when none, by imports or a small replacement.
fn edit_title(fw: &FileWork, t: &Tally, name: &str) -> String {
    let (added, changed, removed) = (&fw.defs_added, &fw.defs_changed, &fw.defs_removed);
    match (added.is_empty(), changed.is_empty(), removed.is_empty()) {
        (true, true, false) => format!("Removed {} from {name}", defs_with_kind(removed)),
        (true, false, true) => format!("Changed {} in {name}", defs_with_kind(changed)),
        (false, false, _) => format!(
            "Changed {} and added {} in {name}",
            defs_listed(changed),
            defs_listed(added)
        ),
        (true, false, false) => format!(
            "Changed {} and removed {} in {name}",
            defs_listed(changed),
            defs_listed(removed)
        ),
        (false, true, _) => format!(
            "Added {} and removed {} in {name}",
            defs_listed(added),
            defs_listed(removed)
        ),
        (true, true, true) => plain_edit_title(fw, t, name),
    }
}

/// The title of edits that touched no definition.
fn plain_edit_title(fw: &FileWork, t: &Tally, name: &str) -> String {
    match t.imports.as_slice() {
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
    }
}

/// Facts and narrative of a file created in the batch.
fn tell_creation(d: &mut Draft, fw: &FileWork, t: &Tally) {
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
}

/// Facts and narrative of edits to an existing file.
fn tell_edits(d: &mut Draft, fw: &FileWork, t: &Tally) {
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
    for (verb, defs) in [
        ("changing", &fw.defs_changed),
        ("adding", &fw.defs_added),
        ("removing", &fw.defs_removed),
    ] {
        if !defs.is_empty() {
            parts.push(format!("{verb} {}", join_and(&defs_named(defs, 4))));
        }
    }
    if !parts.is_empty() {
        sentence.push_str(&format!(", {}", join_and(&parts)));
    }
    d.narrative.push(format!("{sentence}."));
}

/// Renames, imports, small replacements and failed attempts of a file.
fn tell_details(d: &mut Draft, fw: &FileWork, t: &Tally, name: &str) {
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
    for f in values::facts(&t.values, &fw.rel, values::MAX_VALUES) {
        d.fact(f);
    }
    for (_, headline) in fw.failures.iter().take(2) {
        d.fact(format!("An edit of {name} failed first: {headline}"));
    }
}
