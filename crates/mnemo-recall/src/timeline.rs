//! What came before and after an item, within its project: observations,
//! turn summaries and user prompts interleaved by time. This is the middle
//! step of the agent's workflow (search finds an id, the timeline shows its
//! surroundings, get_observations fetches what matters).

use rusqlite::{Connection, OptionalExtension};
use serde::Serialize;

use crate::ids::{ItemRef, Kind};
use crate::scope::{self, Project};
use crate::search::{Hit, hit};
use crate::{RecallError, Result};

/// Most items on one side of the anchor.
pub const MAX_SIDE: usize = 50;

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Timeline {
    pub anchor: ItemRef,
    pub project: Option<Project>,
    /// Oldest first; the anchor is among them.
    pub entries: Vec<Hit>,
}

/// The anchor's project and time, or an input error when it does not exist.
fn anchor_of(conn: &Connection, anchor: ItemRef) -> Result<(Option<i64>, i64)> {
    let sql = match anchor.kind {
        Kind::Observation => "SELECT project_id, created_at FROM observations WHERE id = ?1",
        Kind::Summary => "SELECT project_id, created_at FROM summaries WHERE id = ?1",
        Kind::Prompt => {
            "SELECT s.project_id, q.created_at FROM prompts q JOIN sessions s ON s.id = q.session_id
             WHERE q.id = ?1"
        }
    };
    conn.prepare_cached(sql)?
        .query_row([anchor.id], |r| Ok((r.get(0)?, r.get(1)?)))
        .optional()?
        .ok_or_else(|| {
            RecallError::Input(format!(
                "no {} {anchor}; find ids with search",
                anchor.kind.as_str()
            ))
        })
}

/// Up to `before` items before the anchor and `after` after it; only
/// `agent`'s when given (the anchor is always there).
pub fn timeline(
    conn: &Connection,
    anchor: ItemRef,
    before: usize,
    after: usize,
    agent: Option<mnemo_core::model::Platform>,
) -> Result<Timeline> {
    let agent = agent.map(|a| a.as_str());
    let (project_id, at) = anchor_of(conn, anchor)?;
    let before = before.min(MAX_SIDE);
    let after = after.min(MAX_SIDE);
    // (time, kind, id) orders the interleaved list; the anchor sits between.
    let key_of = |kind: Kind, id: i64, t: i64| (t, kind, id);
    let anchor_key = key_of(anchor.kind, anchor.id, at);

    let mut earlier: Vec<(i64, Kind, i64)> = Vec::new();
    let mut later: Vec<(i64, Kind, i64)> = Vec::new();
    for kind in [Kind::Observation, Kind::Summary, Kind::Prompt] {
        for (id, t) in side(conn, kind, (project_id, agent), anchor_key, true, before)? {
            earlier.push(key_of(kind, id, t));
        }
        for (id, t) in side(conn, kind, (project_id, agent), anchor_key, false, after)? {
            later.push(key_of(kind, id, t));
        }
    }
    earlier.sort();
    earlier.dedup();
    later.sort();
    later.dedup();
    let earlier = &earlier[earlier.len().saturating_sub(before)..];
    let later = &later[..later.len().min(after)];

    let mut entries = Vec::with_capacity(earlier.len() + later.len() + 1);
    for &(_, kind, id) in earlier
        .iter()
        .chain(std::iter::once(&anchor_key))
        .chain(later)
    {
        if let Some(h) = hit(conn, ItemRef { kind, id })? {
            entries.push(h);
        }
    }
    let project = match project_id {
        Some(id) => scope::by_id(conn, id)?,
        None => None,
    };
    Ok(Timeline {
        anchor,
        project,
        entries,
    })
}

/// Ids and times of `kind` strictly on one side of the anchor in
/// (time, kind, id) order, nearest first. The plain time range lets SQLite
/// seek in `*_by_project (project_id, created_at)`; the row-value comparison
/// then orders items of the very same millisecond.
fn side(
    conn: &Connection,
    kind: Kind,
    (project_id, agent): (Option<i64>, Option<&str>),
    anchor: (i64, Kind, i64),
    earlier: bool,
    n: usize,
) -> Result<Vec<(i64, i64)>> {
    if n == 0 {
        return Ok(Vec::new());
    }
    let (cmp, strict, order) = if earlier {
        ("<=", "<", "DESC")
    } else {
        (">=", ">", "ASC")
    };
    let (table, time, id, project) = match kind {
        Kind::Observation => ("observations o", "o.created_at", "o.id", "o.project_id"),
        Kind::Summary => ("summaries o", "o.created_at", "o.id", "o.project_id"),
        Kind::Prompt => (
            "prompts o JOIN sessions s ON s.id = o.session_id",
            "o.created_at",
            "o.id",
            "s.project_id",
        ),
    };
    let sql = format!(
        "SELECT {id}, {time} FROM {table}
         WHERE {project} IS ?1 AND {time} {cmp} ?2
           AND ({time}, ?3, {id}) {strict} (?2, ?4, ?5)
           AND (?7 IS NULL OR o.session_id IN (SELECT id FROM sessions WHERE platform = ?7))
         ORDER BY {time} {order}, {id} {order} LIMIT ?6"
    );
    let mut stmt = conn.prepare_cached(&sql)?;
    let rows = stmt.query_map(
        rusqlite::params![
            project_id,
            anchor.0,
            kind_rank(kind),
            kind_rank(anchor.1),
            anchor.2,
            n as i64,
            agent
        ],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}

/// The order of kinds within one millisecond (the same as `Kind`'s).
fn kind_rank(kind: Kind) -> i64 {
    match kind {
        Kind::Observation => 0,
        Kind::Summary => 1,
        Kind::Prompt => 2,
    }
}
