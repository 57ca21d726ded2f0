//! The projects mnemo knows: name, root, the agents that worked in each,
//! what is remembered and when it last changed. One listing for
//! `mnemo projects`, the viewer's projects page and every "nothing here"
//! hint, so that two projects of the same name are told apart by root.

use rusqlite::Connection;
use serde::Serialize;

use crate::Result;

/// One project and how much is remembered about it.
#[derive(Debug, Clone, Serialize)]
pub struct ProjectSummary {
    pub id: i64,
    pub name: String,
    pub root: String,
    /// The platforms of its sessions (`claude-code`, `codex`, ...), sorted.
    pub agents: Vec<String>,
    pub sessions: i64,
    pub prompts: i64,
    pub observations: i64,
    pub summaries: i64,
    /// The newest session start, observation or summary (ms since epoch).
    pub last_activity_ms: Option<i64>,
}

/// Counts through the per-project indexes; prompts through their sessions;
/// agents also of sessions that name no project (imported ones may not)
/// through their observations, looked up by session (few, and indexed).
const SQL: &str = "
SELECT p.id, p.name, p.root,
  (SELECT group_concat(platform, ',') FROM
     (SELECT platform FROM sessions s WHERE s.project_id = p.id
      UNION SELECT s.platform FROM sessions s
            WHERE s.project_id IS NULL
              AND EXISTS (SELECT 1 FROM observations o
                          WHERE o.session_id = s.id AND o.project_id = p.id)
      ORDER BY 1)),
  (SELECT count(*) FROM sessions s WHERE s.project_id = p.id),
  (SELECT count(*) FROM prompts q JOIN sessions s ON s.id = q.session_id WHERE s.project_id = p.id),
  (SELECT count(*) FROM observations o WHERE o.project_id = p.id),
  (SELECT count(*) FROM summaries m WHERE m.project_id = p.id),
  max(
    coalesce((SELECT max(started_at) FROM sessions s WHERE s.project_id = p.id), 0),
    coalesce((SELECT max(created_at) FROM observations o WHERE o.project_id = p.id), 0),
    coalesce((SELECT max(created_at) FROM summaries m WHERE m.project_id = p.id), 0)
  )
FROM projects p";

/// Every stored project, most recently active first (then by name).
pub fn list(conn: &Connection) -> Result<Vec<ProjectSummary>> {
    let mut stmt = conn.prepare_cached(SQL)?;
    let mut items = stmt
        .query_map([], |r| {
            let agents: Option<String> = r.get(3)?;
            let last: i64 = r.get(8)?;
            Ok(ProjectSummary {
                id: r.get(0)?,
                name: r.get(1)?,
                root: r.get(2)?,
                agents: agents
                    .map(|a| a.split(',').map(str::to_owned).collect())
                    .unwrap_or_default(),
                sessions: r.get(4)?,
                prompts: r.get(5)?,
                observations: r.get(6)?,
                summaries: r.get(7)?,
                last_activity_ms: (last > 0).then_some(last),
            })
        })?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    items.sort_by(|a, b| {
        b.last_activity_ms
            .cmp(&a.last_activity_ms)
            .then_with(|| a.name.cmp(&b.name))
    });
    Ok(items)
}

/// The hint under every "nothing here" message: the known projects (at
/// most `max`, by name and root) and how to pick one, or how to start.
pub fn hint(conn: Option<&Connection>, max: usize) -> Result<String> {
    let known = match conn {
        Some(conn) => list(conn)?,
        None => Vec::new(),
    };
    if known.is_empty() {
        return Ok(
            "mnemo knows no project yet: work in one with a wired agent \
                   (`mnemo install`), or import past sessions with `mnemo import --transcripts`"
                .to_owned(),
        );
    }
    let mut text = format!(
        "mnemo knows {}; pick one with --project NAME or --project DIR:",
        mnemo_core::words::count_s(known.len(), "project")
    );
    for p in known.iter().take(max) {
        text.push_str(&format!(
            "\n  {}  {}  ({})",
            p.name,
            p.root,
            mnemo_core::words::count_s(p.observations, "observation")
        ));
    }
    if known.len() > max {
        text.push_str(&format!(
            "\n  ... and {} more: `mnemo projects`",
            known.len() - max
        ));
    }
    Ok(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn without_a_store_the_hint_says_how_to_start() {
        let h = hint(None, 5).unwrap();
        assert!(h.contains("import --transcripts"), "{h}");
        assert!(h.contains("mnemo install"), "{h}");
    }
}
