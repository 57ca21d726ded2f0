//! claude-mem rows as import records (the shape [`crate::export`] reads).
//!
//! Each record carries a uid `claude-mem:<database identity>:<table>:<rowid>`
//! (sessions are keyed by Claude Code's session id, like captured ones), so
//! a second import stores only what is new, and `source: "claude-mem"` on
//! observations and summaries, which `mnemo show` prints. Types are mapped
//! to mnemo's vocabulary, with claude-mem's own word kept as a concept when
//! it had to change. A memory saved by hand becomes a `memory` observation
//! without a session. The raw tool calls (`tool_uses`) are never imported:
//! they are an unredacted I/O archive; only their working directories are
//! read (see [`super::projects`]).

use std::collections::HashMap;

use mnemo_core::model::Platform;
use serde_json::{Value, json};

use super::projects::{Placement, unit_of};
use super::rows::{Dump, Observation, Session, Summary};

/// What `source` says on imported observations and summaries.
pub const ORIGIN: &str = "claude-mem";

/// One record to import, and what to count it under.
#[derive(Debug, Clone)]
pub struct Planned {
    pub kind: Kind,
    /// The project root it goes to.
    pub root: String,
    pub value: Value,
}

/// A record left out because its project's directory is unknown.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unplaced {
    pub kind: Kind,
    /// claude-mem's project name.
    pub name: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Kind {
    Session,
    Prompt,
    Observation,
    Summary,
}

impl Kind {
    pub const ALL: [Kind; 4] = [
        Kind::Session,
        Kind::Prompt,
        Kind::Observation,
        Kind::Summary,
    ];

    pub fn noun(self, n: usize) -> &'static str {
        match (self, n == 1) {
            (Kind::Session, true) => "session",
            (Kind::Session, false) => "sessions",
            (Kind::Prompt, true) => "prompt",
            (Kind::Prompt, false) => "prompts",
            (Kind::Observation, true) => "observation",
            (Kind::Observation, false) => "observations",
            (Kind::Summary, true) => "summary",
            (Kind::Summary, false) => "summaries",
        }
    }
}

/// The records of `dump` in the order they must be stored (sessions first),
/// and those left out for want of a directory.
pub fn plan(dump: &Dump, placement: &Placement) -> (Vec<Planned>, Vec<Unplaced>) {
    let mut plan = Plan {
        identity: &dump.identity,
        placement,
        planned: Vec::new(),
        unplaced: Vec::new(),
    };
    let by_content: HashMap<&str, &Session> = dump
        .sessions
        .iter()
        .map(|s| (s.content_id.as_str(), s))
        .collect();
    let by_memory: HashMap<&str, &Session> = dump
        .sessions
        .iter()
        .filter_map(|s| s.memory_id.as_deref().map(|m| (m, s)))
        .collect();
    let mut turns: HashMap<&str, i64> = HashMap::new();
    for p in &dump.prompts {
        let n = turns.entry(p.content_id.as_str()).or_default();
        *n = (*n).max(p.number);
    }
    for s in dump.sessions.iter().filter(|s| !s.is_manual()) {
        plan.session(s, turns.get(s.content_id.as_str()).copied().unwrap_or(0));
    }
    for p in &dump.prompts {
        let Some(session) = by_content.get(p.content_id.as_str()) else {
            continue;
        };
        let unit = unit_of(session.memory_id.as_deref(), &session.content_id);
        plan.push(
            Kind::Prompt,
            &unit,
            &session.project,
            json!({
                "kind": "prompt",
                "uid": uid(&dump.identity, "user_prompts", p.id),
                "platform": Platform::ClaudeCode.as_str(),
                "session_id": session.content_id,
                "prompt_number": p.number,
                "text": p.text,
                "created_at": p.created_ms,
            }),
        );
    }
    for o in &dump.observations {
        plan.observation(o, by_memory.get(o.memory_id.as_str()).copied());
    }
    for s in &dump.summaries {
        plan.summary(s, by_memory.get(s.memory_id.as_str()).copied());
    }
    (plan.planned, plan.unplaced)
}

struct Plan<'a> {
    identity: &'a str,
    placement: &'a Placement,
    planned: Vec<Planned>,
    unplaced: Vec<Unplaced>,
}

impl Plan<'_> {
    /// Adds `value` with its unit's project root, or counts it as unplaced.
    fn push(&mut self, kind: Kind, unit: &str, name: &str, mut value: Value) {
        match self.placement.place(unit) {
            Some(place) => {
                if kind != Kind::Prompt {
                    value["project"] = json!(place.root);
                }
                self.planned.push(Planned {
                    kind,
                    root: place.root.clone(),
                    value,
                });
            }
            None => self.unplaced.push(Unplaced {
                kind,
                name: name.to_owned(),
            }),
        }
    }

    fn session(&mut self, s: &Session, turns: i64) {
        let unit = unit_of(s.memory_id.as_deref(), &s.content_id);
        let status = if s.status == "active" {
            "active"
        } else {
            "ended"
        };
        self.push(
            Kind::Session,
            &unit,
            &s.project,
            json!({
                "kind": "session",
                "platform": Platform::ClaudeCode.as_str(),
                "session_id": s.content_id,
                "cwd": s.cwds.first(),
                "source": ORIGIN,
                "status": status,
                "end_reason": (status == "ended").then(|| format!("claude-mem: {}", s.status)),
                "prompt_count": turns,
                "started_at": s.started_ms,
                "ended_at": s.ended_ms,
            }),
        );
    }

    fn observation(&mut self, o: &Observation, session: Option<&Session>) {
        let manual = session.is_some_and(Session::is_manual) || o.memory_id.starts_with("manual-");
        let (kind, original) = if manual {
            ("memory", None)
        } else {
            mapped_type(&o.kind)
        };
        let mut concepts = o.concepts.clone();
        if let Some(original) = original {
            concepts.push(original.to_owned());
        }
        if let Some(agent) = &o.agent_type {
            concepts.push(format!("subagent:{agent}"));
        }
        let narrative = if o.narrative.trim().is_empty() {
            o.text.clone()
        } else {
            o.narrative.clone()
        };
        let mut value = json!({
            "kind": "observation",
            "uid": uid(self.identity, "observations", o.id),
            "type": kind,
            "title": title(o, &narrative),
            "subtitle": o.subtitle,
            "narrative": narrative,
            "facts": o.facts,
            "concepts": concepts,
            "files_read": o.files_read,
            "files_modified": o.files_modified,
            "prompt_number": o.prompt_number,
            "source": ORIGIN,
            "created_at": o.created_ms,
        });
        link_session(&mut value, session);
        self.push(Kind::Observation, &o.memory_id, &o.project, value);
    }

    fn summary(&mut self, s: &Summary, session: Option<&Session>) {
        let mut notes = s.notes.clone();
        for (label, files) in [
            ("files read", &s.files_read),
            ("files edited", &s.files_edited),
        ] {
            if !files.is_empty() {
                if !notes.is_empty() {
                    notes.push('\n');
                }
                notes.push_str(&format!("{label}: {}", files.join(", ")));
            }
        }
        let mut value = json!({
            "kind": "summary",
            "uid": uid(self.identity, "session_summaries", s.id),
            "request": s.request,
            "investigated": s.investigated,
            "learned": s.learned,
            "completed": s.completed,
            "next_steps": s.next_steps,
            "notes": notes,
            "prompt_number": s.prompt_number,
            "source": ORIGIN,
            "created_at": s.created_ms,
        });
        link_session(&mut value, session);
        self.push(Kind::Summary, &s.memory_id, &s.project, value);
    }
}

/// Names the record's session, unless it is none or a hand-saved memory's.
fn link_session(value: &mut Value, session: Option<&Session>) {
    if let Some(s) = session.filter(|s| !s.is_manual()) {
        value["platform"] = json!(Platform::ClaudeCode.as_str());
        value["session_id"] = json!(s.content_id);
    }
}

pub fn uid(identity: &str, table: &str, id: i64) -> String {
    format!("{ORIGIN}:{identity}:{table}:{id}")
}

/// mnemo's word for a claude-mem type, and claude-mem's word when it had to
/// change (kept as a concept, so `security_note` stays findable).
pub fn mapped_type(kind: &str) -> (&'static str, Option<&str>) {
    let k = kind.trim();
    let same = match k {
        "bugfix" => Some("bugfix"),
        "feature" => Some("feature"),
        "refactor" => Some("refactor"),
        "change" => Some("change"),
        "discovery" => Some("discovery"),
        "decision" => Some("decision"),
        _ => None,
    };
    if let Some(same) = same {
        return (same, None);
    }
    let mapped = match k.to_ascii_lowercase().replace('-', "_").as_str() {
        "fix" | "bug" | "hotfix" => "bugfix",
        "feat" | "enhancement" => "feature",
        "cleanup" | "refactoring" => "refactor",
        "update" | "chore" | "docs" | "config" => "change",
        "choice" | "plan" | "design" | "architecture" => "decision",
        // security_alert, security_note, sensitive and anything unknown: a finding.
        _ => "discovery",
    };
    (mapped, (!k.is_empty()).then_some(k))
}

/// The title, else the subtitle, else the narrative's first line (shortened).
fn title(o: &Observation, narrative: &str) -> String {
    for candidate in [&o.title, &o.subtitle] {
        if !candidate.trim().is_empty() {
            return candidate.trim().to_owned();
        }
    }
    let line = narrative
        .lines()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("");
    let line = line.trim();
    if line.is_empty() {
        return format!("{} (untitled claude-mem observation)", o.kind);
    }
    match line.char_indices().nth(100) {
        Some((cut, _)) => format!("{}…", &line[..cut]),
        None => line.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn types_map_to_the_vocabulary_and_keep_the_original() {
        assert_eq!(mapped_type("bugfix"), ("bugfix", None));
        assert_eq!(
            mapped_type("security_note"),
            ("discovery", Some("security_note"))
        );
        assert_eq!(mapped_type("hotfix"), ("bugfix", Some("hotfix")));
        assert_eq!(mapped_type(""), ("discovery", None));
    }
}
