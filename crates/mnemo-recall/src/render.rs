//! Text for people and agents: search hits, full records, timelines.
//!
//! One renderer serves the terminal (`mnemo search/show/timeline`, colored
//! only when the CLI says stdout is a terminal and `NO_COLOR` is unset) and
//! the MCP tools (plain, no dates: an age is what an agent weighs, and every
//! character costs tokens). Lines start with the id, because the id is what
//! the next step takes.

use std::fmt::Write as _;
use std::path::Path;

use mnemo_store::freshness::Freshness;

use crate::context::type_marker;
use crate::ids::ItemRef;
use crate::ids::Kind;
use crate::records::{
    ObservationRecord, ProjectRef, PromptRecord, Record, SessionKey, SummaryRecord, TurnRef,
};
use crate::search::{Hit, SearchResults};
use crate::text::{display_path, one_line, untagged};
use crate::timeline::Timeline;
use crate::when::Clock;

/// How to render.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Style {
    /// ANSI colors (terminal only).
    pub color: bool,
    /// Dates and times beside ages (terminal); ages only (agents).
    pub dates: bool,
}

impl Style {
    pub const AGENT: Style = Style {
        color: false,
        dates: false,
    };

    fn paint(&self, code: &str, text: &str) -> String {
        if self.color {
            format!("\x1b[{code}m{text}\x1b[0m")
        } else {
            text.to_owned()
        }
    }

    fn id(&self, text: &str) -> String {
        self.paint("1;36", text)
    }

    fn dim(&self, text: &str) -> String {
        self.paint("2", text)
    }

    fn bold(&self, text: &str) -> String {
        self.paint("1", text)
    }
}

fn marker(h: &Hit) -> String {
    match h.kind {
        Kind::Observation => type_marker(h.obs_type.as_deref().unwrap_or("")),
        Kind::Summary => "[turn]".to_owned(),
        Kind::Prompt => "[prompt]".to_owned(),
    }
}

/// Which labels a hit's line carries: those that tell its lines apart.
#[derive(Debug, Clone, Copy, Default)]
pub struct Labels {
    /// The project's name (the hits come from several).
    pub project: bool,
    /// The agent's name (the hits come from several agents).
    pub agent: bool,
}

impl Labels {
    /// The labels worth showing for `hits`: a project or an agent only when
    /// they differ between the hits.
    pub fn of(hits: &[Hit]) -> Labels {
        use std::collections::HashSet;
        let projects: HashSet<_> = hits.iter().map(|h| &h.project).collect();
        let agents: HashSet<&str> = hits
            .iter()
            .filter_map(|h| h.session.as_ref())
            .map(|s| s.platform.as_str())
            .collect();
        Labels {
            project: projects.len() > 1,
            agent: agents.len() > 1,
        }
    }
}

/// One line for a hit: `#12 2h [fix] Title (file)`, with the date on a
/// terminal, and the agent and the project when `labels` ask for them.
pub fn hit_line(h: &Hit, clock: &Clock, style: Style, labels: Labels) -> String {
    let mut line = style.id(&h.id.to_string());
    if style.dates {
        let _ = write!(
            line,
            " {}",
            style.dim(&format!(
                "{} {}",
                clock.day(h.created_at_ms),
                clock.time_of_day(h.created_at_ms)
            ))
        );
    }
    let _ = write!(
        line,
        " {} {} {}",
        clock.age(h.created_at_ms),
        marker(h),
        h.title
    );
    if h.kind == Kind::Summary && !h.subtitle.is_empty() {
        let _ = write!(line, " -> {}", one_line(&h.subtitle, 100));
    }
    if let Some(f) = &h.file {
        let root = h.project.as_ref().map(|p| Path::new(p.root.as_str()));
        let _ = write!(line, " ({})", display_path(f, root));
    }
    if let Some(next) = h.superseded_by {
        let _ = write!(line, " {}", style.dim(&format!("[superseded by #{next}]")));
    }
    line.push_str(Freshness::marker(h.freshness));
    line.push_str(&crate::authors::tag(h.author.as_deref()));
    if labels.agent
        && let Some(s) = &h.session
    {
        let _ = write!(line, " {}", style.dim(&format!("[{}]", s.platform)));
    }
    if labels.project
        && let Some(p) = &h.project
    {
        let _ = write!(line, " {}", style.dim(&format!("[{}]", p.name)));
    }
    line
}

/// A result list: a count line, then one line per hit.
pub fn search_results(r: &SearchResults, clock: &Clock, style: Style) -> String {
    let mut out = meaning_line(r);
    if r.hits.is_empty() {
        out.push_str("No matches.");
        return out;
    }
    let labels = Labels::of(&r.hits);
    let one = r.hits.len() == 1;
    let what = match (r.fts_query.is_none(), r.relaxed, one) {
        (true, _, true) => "newest item",
        (true, _, false) => "newest items",
        (false, true, true) => "match of any word (none matched every word)",
        (false, true, false) => "matches of any word (none matched every word)",
        (false, false, true) => "match",
        (false, false, false) => "matches",
    };
    let _ = writeln!(out, "{} {what}:", r.hits.len());
    for h in &r.hits {
        out.push_str(&hit_line(h, clock, style, labels));
        out.push('\n');
    }
    out.pop();
    out
}

/// A line when search by meaning is configured but was skipped (the
/// results are full-text only), with why.
fn meaning_line(r: &SearchResults) -> String {
    match r.meaning.as_ref().and_then(|m| m.skipped.as_deref()) {
        Some(why) => format!("(search by meaning skipped: {why}; full-text results only)\n"),
        None => String::new(),
    }
}

fn project_text(p: &Option<ProjectRef>) -> Option<String> {
    p.as_ref().map(|p| format!("{} ({})", p.name, p.root))
}

fn session_text(s: &Option<SessionKey>, prompt_number: Option<i64>) -> Option<String> {
    s.as_ref().map(|s| {
        let mut text = format!("{} {}", s.platform, s.session_id);
        if let Some(n) = prompt_number {
            let _ = write!(text, ", turn {n}");
        }
        if let Some(previous) = &s.continues {
            let _ = write!(text, " (continues {previous})");
        }
        text
    })
}

fn field(out: &mut String, style: Style, label: &str, value: Option<String>) {
    if let Some(v) = value.filter(|v| !v.is_empty()) {
        let _ = writeln!(out, "{} {v}", style.dim(&format!("{label:<8}")));
    }
}

fn when_text(ms: i64, clock: &Clock) -> String {
    format!("{} ({})", clock.datetime(ms), clock.ago(ms))
}

fn block(out: &mut String, style: Style, label: &str, text: &str) {
    let text = untagged(text);
    let text = text.trim();
    if text.is_empty() {
        return;
    }
    let _ = writeln!(out, "{}", style.bold(label));
    for line in text.lines() {
        let _ = writeln!(out, "  {line}");
    }
}

fn list(out: &mut String, style: Style, label: &str, items: &[String], root: Option<&Path>) {
    if items.is_empty() {
        return;
    }
    let _ = writeln!(out, "{}", style.bold(label));
    for i in items {
        let shown = match root {
            Some(_) => display_path(i, root),
            None => untagged(i).into_owned(),
        };
        let _ = writeln!(out, "  - {shown}");
    }
}

fn observation(o: &ObservationRecord, clock: &Clock, style: Style) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{} {} {}{}",
        style.id(&ItemRef::observation(o.id).to_string()),
        type_marker(&o.obs_type),
        style.bold(&one_line(&o.title, 200)),
        Freshness::marker(o.freshness)
    );
    field(&mut out, style, "type", Some(o.obs_type.clone()));
    field(
        &mut out,
        style,
        "when",
        Some(when_text(o.created_at_ms, clock)),
    );
    field(&mut out, style, "project", project_text(&o.project));
    field(&mut out, style, "author", o.author.clone());
    field(
        &mut out,
        style,
        "session",
        session_text(&o.session, o.prompt_number),
    );
    let curated = [(o.edited, "edited by the user"), (o.pinned, "pinned")]
        .iter()
        .filter(|(on, _)| *on)
        .map(|(_, what)| *what)
        .collect::<Vec<_>>()
        .join(", ");
    let source = if curated.is_empty() {
        o.source.clone()
    } else {
        format!("{} ({curated})", o.source)
    };
    field(&mut out, style, "source", Some(source));
    let root = o.project.as_ref().map(|p| Path::new(p.root.as_str()));
    block(&mut out, style, "Subtitle", &o.subtitle);
    block(&mut out, style, "Narrative", &o.narrative);
    list(&mut out, style, "Facts", &o.facts, None);
    if !o.concepts.is_empty() {
        let concepts: Vec<String> = o
            .concepts
            .iter()
            .map(|c| untagged(c).into_owned())
            .collect();
        let _ = writeln!(out, "{} {}", style.bold("Concepts"), concepts.join(", "));
    }
    list(&mut out, style, "Files modified", &o.files_modified, root);
    list(&mut out, style, "Files read", &o.files_read, root);
    if let Some(p) = &o.prompt {
        let described = mnemo_core::host_text::describe(p);
        block(
            &mut out,
            style,
            "Prompt of that turn",
            described.as_deref().unwrap_or(p),
        );
    }
    out
}

fn summary(s: &SummaryRecord, clock: &Clock, style: Style) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{} [turn] {}",
        style.id(&ItemRef::summary(s.id).to_string()),
        style.bold(&one_line(&s.request, 200))
    );
    field(
        &mut out,
        style,
        "when",
        Some(when_text(s.created_at_ms, clock)),
    );
    field(&mut out, style, "project", project_text(&s.project));
    field(&mut out, style, "author", s.author.clone());
    field(
        &mut out,
        style,
        "session",
        session_text(&s.session, s.prompt_number),
    );
    field(&mut out, style, "source", Some(s.source.clone()));
    block(&mut out, style, "Asked", &s.request);
    block(&mut out, style, "Investigated", &s.investigated);
    block(&mut out, style, "Learned", &s.learned);
    block(&mut out, style, "Completed", &s.completed);
    block(&mut out, style, "Next steps", &s.next_steps);
    block(&mut out, style, "Notes", &s.notes);
    out
}

fn prompt(p: &PromptRecord, clock: &Clock, style: Style) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{} [prompt] {}",
        style.id(&ItemRef::prompt(p.id).to_string()),
        style.bold(&one_line(p.host_text.as_deref().unwrap_or(&p.text), 120))
    );
    field(
        &mut out,
        style,
        "when",
        Some(when_text(p.created_at_ms, clock)),
    );
    field(&mut out, style, "project", project_text(&p.project));
    field(
        &mut out,
        style,
        "session",
        session_text(&p.session, p.prompt_number),
    );
    if p.origin != "user" {
        field(&mut out, style, "origin", Some(p.origin.clone()));
    }
    match &p.host_text {
        Some(what) => {
            block(&mut out, style, "Written by the host", what);
            let result = mnemo_core::host_text::task_result(&p.text);
            block(&mut out, style, "Result", result.unwrap_or_default());
        }
        None => block(&mut out, style, "Text", &p.text),
    }
    out
}

/// A full record.
pub fn record(r: &Record, clock: &Clock, style: Style) -> String {
    match r {
        Record::Observation(o) => observation(o, clock, style),
        Record::Summary(s) => summary(s, clock, style),
        Record::Prompt(p) => prompt(p, clock, style),
    }
}

/// Records separated by a blank line.
pub fn records(rs: &[Record], clock: &Clock, style: Style) -> String {
    rs.iter()
        .map(|r| record(r, clock, style))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The turns of a summary's session, `this` marked: what an index line
/// naming the session by that summary describes. Empty for a lone turn.
pub fn session_turns(turns: &[TurnRef], this: ItemRef, style: Style) -> String {
    let mut out = String::new();
    if turns.len() < 2 {
        return out;
    }
    let _ = writeln!(
        out,
        "{}",
        style.bold(&format!(
            "Its session, {} summarized",
            mnemo_core::words::count_s(turns.len(), "turn")
        ))
    );
    for t in turns {
        let mark = if t.id == this { " (this one)" } else { "" };
        let _ = writeln!(
            out,
            "  {} {}{mark}",
            style.id(&t.id.to_string()),
            one_line(&t.request, 100)
        );
    }
    out
}

/// A timeline: a title, then the entries by day, the anchor marked `>`.
pub fn timeline(t: &Timeline, clock: &Clock, style: Style) -> String {
    let mut out = String::new();
    let scope = t
        .project
        .as_ref()
        .map(|p| format!(" in {} ({})", p.name, p.root))
        .unwrap_or_default();
    let _ = writeln!(out, "Timeline around {}{scope}, oldest first:", t.anchor);
    let mut day = String::new();
    let labels = Labels {
        project: false,
        ..Labels::of(&t.entries)
    };
    for h in &t.entries {
        let d = clock.day(h.created_at_ms);
        if d != day {
            let _ = writeln!(out, "{}", style.bold(&d));
            day = d;
        }
        let mark = if h.id == t.anchor { ">" } else { " " };
        let line = hit_line(
            h,
            clock,
            Style {
                dates: false,
                ..style
            },
            labels,
        );
        let _ = writeln!(
            out,
            "{mark} {} {line}",
            style.dim(&clock.time_of_day(h.created_at_ms))
        );
    }
    out.pop();
    out
}
