//! The top of the SessionStart index, from the project knowledge the worker
//! keeps ([`mnemo_store::knowledge`]): what the project is and how to work
//! in it, the decisions in force, and the threads left open.
//!
//! Decisions are anchored to files: one whose files changed since it was
//! written (a `stat` per file, nothing read: this runs on the hook path) is
//! flagged for re-checking. Lines are taken in order until the budget is
//! spent, so the project's identity survives the tightest budget.

use std::path::Path;

use mnemo_store::freshness::{self, Check, Freshness};
use mnemo_store::knowledge::{self as store, KnowledgeItem};
use rusqlite::Connection;

use crate::Result;
use crate::ids::ItemRef;
use crate::text::{display_path, js_len, one_line};

/// What the knowledge sections add to the index.
#[derive(Debug, Default)]
pub struct Sections {
    pub lines: Vec<String>,
    /// The decisions listed (so that prompt recall does not repeat them).
    pub shown: Vec<ItemRef>,
    pub items: Vec<KnowledgeItem>,
}

/// The knowledge sections of `project`, within `budget` characters.
pub fn sections(conn: &Connection, project: i64, root: &Path, budget: usize) -> Result<Sections> {
    let items = store::items(conn, project)?;
    let mut out = Sections::default();
    if items.is_empty() {
        return Ok(out);
    }
    let decisions: Vec<&KnowledgeItem> = of_kind(&items, store::DECISION).collect();
    let ids: Vec<i64> = decisions.iter().filter_map(|d| observation_id(d)).collect();
    let root_text = root.to_string_lossy();
    let fresh = freshness::of_observations(conn, &ids, Some(&root_text), Check::StatOnly)?;
    let mut used = 0;
    let mut take = |lines: Vec<String>, out: &mut Sections| -> bool {
        let cost: usize = lines.iter().map(|l| js_len(l) + 1).sum();
        if lines.len() < 2 || used + cost > budget {
            return false;
        }
        used += cost;
        out.lines.extend(lines);
        true
    };
    take(project_lines(&items), &mut out);
    if take(decision_lines(&decisions, &fresh, root), &mut out) {
        out.shown = ids.iter().map(|&id| ItemRef::observation(id)).collect();
    }
    take(open_lines(&items), &mut out);
    out.items = items;
    Ok(out)
}

fn of_kind<'a>(
    items: &'a [KnowledgeItem],
    kind: &'a str,
) -> impl Iterator<Item = &'a KnowledgeItem> {
    items.iter().filter(move |i| i.kind == kind)
}

fn observation_id(item: &KnowledgeItem) -> Option<i64> {
    item.key.strip_prefix('#')?.parse().ok()
}

/// What the project is and how to work in it: a title and its lines, or
/// nothing.
fn project_lines(items: &[KnowledgeItem]) -> Vec<String> {
    let mut lines = vec!["What the project is and how to work in it:".to_owned()];
    let (purpose, stacks): (Vec<&KnowledgeItem>, Vec<&KnowledgeItem>) =
        of_kind(items, store::STACK).partition(|i| i.key == store::PURPOSE_KEY);
    for said in purpose {
        let file = said.files.first().map(String::as_str).unwrap_or("README");
        lines.push(format!(
            "- what it is: {} ({file})",
            one_line(&said.text, 200)
        ));
    }
    let stack: Vec<String> = stacks.into_iter().map(|i| one_line(&i.text, 120)).collect();
    if !stack.is_empty() {
        lines.push(format!("- stack: {}", stack.join("; ")));
    }
    for layout in of_kind(items, store::LAYOUT) {
        lines.push(format!("- {}", one_line(&layout.text, 300)));
    }
    let commands: Vec<String> = of_kind(items, store::COMMAND)
        .map(|i| one_line(&i.text, 100))
        .collect();
    if !commands.is_empty() {
        lines.push(format!("- commands that passed: {}", commands.join("; ")));
    }
    for rule in of_kind(items, store::CONVENTION) {
        let from = rule.sources.first().map(String::as_str).unwrap_or("");
        lines.push(format!(
            "- the user asked, to hold from then on: \"{}\" ({from})",
            one_line(&rule.text, 160)
        ));
    }
    lines
}

/// The decisions in force, newest first, each with its main file and a
/// flag when that code changed since.
fn decision_lines(
    decisions: &[&KnowledgeItem],
    fresh: &std::collections::HashMap<i64, Freshness>,
    root: &Path,
) -> Vec<String> {
    let mut lines = vec![
        "Decisions in force (newest first; [changed]: its code changed since, re-check):"
            .to_owned(),
    ];
    for d in decisions {
        let Some(id) = observation_id(d) else {
            continue;
        };
        let mut line = format!("- #{id} {}", one_line(&d.text, 140));
        if let Some(file) = d.files.first() {
            line.push_str(&format!(" ({})", display_path(file, Some(root))));
        }
        line.push_str(Freshness::marker(fresh.get(&id).copied()));
        lines.push(line);
    }
    lines
}

/// Work the last sessions left open.
fn open_lines(items: &[KnowledgeItem]) -> Vec<String> {
    let mut lines = vec!["Open threads (left open by recent sessions):".to_owned()];
    for open in of_kind(items, store::OPEN) {
        lines.push(format!("- {} {}", open.key, one_line(&open.text, 200)));
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    fn item(kind: &str, key: &str, text: &str) -> KnowledgeItem {
        KnowledgeItem::new(kind, key, text)
    }

    #[test]
    fn the_project_section_names_stack_layout_and_commands() {
        let items = vec![
            item(store::STACK, "Go", "Go (go.mod)"),
            item(
                store::LAYOUT,
                "directories",
                "main directories: cmd/ (3 files)",
            ),
            item(
                store::COMMAND,
                "go test ./...",
                "test: `go test ./...` (passed 2x in 2 sessions)",
            ),
        ];
        let lines = project_lines(&items);
        assert_eq!(lines[1], "- stack: Go (go.mod)");
        assert!(lines[3].contains("`go test ./...`"), "{lines:?}");
    }

    #[test]
    fn a_changed_decision_is_flagged() {
        let mut d = item(
            store::DECISION,
            "#7",
            "Chose SQLite over Postgres: one file",
        );
        d.files = vec!["/p/src/db.rs".to_owned()];
        let fresh = [(7, Freshness::Changed)].into_iter().collect();
        let lines = decision_lines(&[&d], &fresh, Path::new("/p"));
        assert_eq!(
            lines[1],
            "- #7 Chose SQLite over Postgres: one file (src/db.rs) [changed]"
        );
    }
}
