//! `mnemo projects`: the projects mnemo knows (name, root, agents, what is
//! remembered, last activity), as a table or as JSON.

use mnemo_core::time::format_rfc3339;
use mnemo_core::words::{count, count_s};
use mnemo_recall::Clock;
use mnemo_recall::projects::{ProjectSummary, hint, list};
use serde_json::json;

use super::recall::{out, print_json};
use crate::cli::ProjectsArgs;
use crate::output::{data_and_config, open_store_read_only};

pub fn run(args: ProjectsArgs) -> anyhow::Result<i32> {
    let (data, config) = data_and_config()?;
    let store = if data.db_path().exists() {
        Some(open_store_read_only(&data, &config)?)
    } else {
        None
    };
    let items = match &store {
        Some(store) => list(store.conn())?,
        None => Vec::new(),
    };
    if args.json {
        let items: Vec<_> = items.iter().map(as_json).collect();
        print_json(&json!({ "items": items }))?;
    } else if items.is_empty() {
        eprintln!("{}", hint(None, 0)?);
    } else {
        out(&table(&items, &Clock::system()))?;
    }
    Ok(0)
}

/// The record with its last activity also as RFC 3339.
fn as_json(p: &ProjectSummary) -> serde_json::Value {
    let mut v = json!(p);
    v["last_activity"] = json!(p.last_activity_ms.map(format_rfc3339));
    v
}

/// One block per project: the name and what is remembered on the first
/// line, the root (which tells same-named projects apart) on the second.
fn table(items: &[ProjectSummary], clock: &Clock) -> String {
    let mut text = String::new();
    for p in items {
        let last = p
            .last_activity_ms
            .map(|ms| format!(", last {}", clock.ago(ms)))
            .unwrap_or_default();
        let agents = if p.agents.is_empty() {
            String::new()
        } else {
            format!(" [{}]", p.agents.join(", "))
        };
        text.push_str(&format!(
            "{}{agents}: {}, {}, {}{last}\n  {}\n",
            p.name,
            count_s(p.observations, "observation"),
            count_s(p.sessions, "session"),
            count(p.summaries, "summary", "summaries"),
            p.root
        ));
    }
    text.push_str(&format!(
        "{}; `mnemo context --project NAME` (or DIR) shows one's index",
        count_s(items.len(), "project")
    ));
    text
}
