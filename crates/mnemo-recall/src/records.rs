//! Full records by id: what `mnemo show` prints and `get_observations`
//! returns. An observation comes with its project, its session and the
//! user's prompt of the turn it came from; a summary and a prompt with their
//! project and session.

use mnemo_core::time::format_rfc3339;
use mnemo_store::parse_json_list;
use rusqlite::{Connection, OptionalExtension, Row};
use serde::Serialize;

use crate::Result;
use crate::ids::{ItemRef, Kind};
use crate::scope::Project;

/// The agent session an item came from.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SessionInfo {
    pub platform: String,
    pub session_id: String,
    /// The turn within the session.
    pub prompt_number: Option<i64>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ObservationRecord {
    pub id: ItemRef,
    /// bugfix, feature, refactor, change, discovery, decision, memory, ...
    #[serde(rename = "type")]
    pub kind: String,
    pub title: String,
    pub subtitle: String,
    pub narrative: String,
    pub facts: Vec<String>,
    pub concepts: Vec<String>,
    pub files_read: Vec<String>,
    pub files_modified: Vec<String>,
    /// Who wrote it: `offline`, a provider, `import`, `agent`.
    pub source: String,
    pub created_at: String,
    pub created_at_ms: i64,
    pub project: Option<Project>,
    pub session: Option<SessionInfo>,
    /// The user's prompt of the turn the observation came from.
    pub prompt: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SummaryRecord {
    pub id: ItemRef,
    pub request: String,
    pub investigated: String,
    pub learned: String,
    pub completed: String,
    pub next_steps: String,
    pub notes: String,
    pub source: String,
    pub created_at: String,
    pub created_at_ms: i64,
    pub project: Option<Project>,
    pub session: Option<SessionInfo>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PromptRecord {
    pub id: ItemRef,
    pub text: String,
    /// `user`, or the machine origin of an injected turn.
    pub origin: String,
    pub created_at: String,
    pub created_at_ms: i64,
    pub project: Option<Project>,
    pub session: Option<SessionInfo>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum Record {
    Observation(ObservationRecord),
    Summary(SummaryRecord),
    Prompt(PromptRecord),
}

impl Record {
    pub fn id(&self) -> ItemRef {
        match self {
            Record::Observation(o) => o.id,
            Record::Summary(s) => s.id,
            Record::Prompt(p) => p.id,
        }
    }
}

/// The records found, in the order asked, and the ids that do not exist.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Fetched {
    pub records: Vec<Record>,
    pub missing: Vec<ItemRef>,
}

/// Fetches every id; unknown ones are listed in `missing`, not errors.
pub fn fetch(conn: &Connection, ids: &[ItemRef]) -> Result<Fetched> {
    let mut records = Vec::new();
    let mut missing = Vec::new();
    for id in ids {
        match get(conn, *id)? {
            Some(r) => records.push(r),
            None => missing.push(*id),
        }
    }
    Ok(Fetched { records, missing })
}

/// One record, or None when the id does not exist.
pub fn get(conn: &Connection, id: ItemRef) -> Result<Option<Record>> {
    Ok(match id.kind {
        Kind::Observation => observation(conn, id.id)?.map(Record::Observation),
        Kind::Summary => summary(conn, id.id)?.map(Record::Summary),
        Kind::Prompt => prompt(conn, id.id)?.map(Record::Prompt),
    })
}

fn project_at(r: &Row<'_>, i: usize) -> rusqlite::Result<Option<Project>> {
    Ok(match r.get::<_, Option<i64>>(i)? {
        Some(id) => Some(Project {
            id,
            root: r.get(i + 1)?,
            name: r.get(i + 2)?,
        }),
        None => None,
    })
}

fn session_at(r: &Row<'_>, i: usize) -> rusqlite::Result<Option<SessionInfo>> {
    Ok(match r.get::<_, Option<String>>(i)? {
        Some(platform) => Some(SessionInfo {
            platform,
            session_id: r.get(i + 1)?,
            prompt_number: r.get(i + 2)?,
        }),
        None => None,
    })
}

pub fn observation(conn: &Connection, id: i64) -> Result<Option<ObservationRecord>> {
    let mut stmt = conn.prepare_cached(
        "SELECT o.id, o.type, o.title, o.subtitle, o.narrative, o.facts, o.concepts,
                o.files_read, o.files_modified, o.source, o.created_at,
                p.id, p.root, p.name, s.platform, s.platform_session_id, o.prompt_number,
                (SELECT q.text FROM prompts q
                 WHERE q.session_id = o.session_id AND q.prompt_number = o.prompt_number)
         FROM observations o
         LEFT JOIN projects p ON p.id = o.project_id
         LEFT JOIN sessions s ON s.id = o.session_id
         WHERE o.id = ?1",
    )?;
    Ok(stmt
        .query_row([id], |r| {
            let created: i64 = r.get(10)?;
            Ok(ObservationRecord {
                id: ItemRef::observation(r.get(0)?),
                kind: r.get(1)?,
                title: r.get(2)?,
                subtitle: r.get(3)?,
                narrative: r.get(4)?,
                facts: parse_json_list(&r.get::<_, String>(5)?),
                concepts: parse_json_list(&r.get::<_, String>(6)?),
                files_read: parse_json_list(&r.get::<_, String>(7)?),
                files_modified: parse_json_list(&r.get::<_, String>(8)?),
                source: r.get(9)?,
                created_at: format_rfc3339(created),
                created_at_ms: created,
                project: project_at(r, 11)?,
                session: session_at(r, 14)?,
                prompt: r.get(17)?,
            })
        })
        .optional()?)
}

pub fn summary(conn: &Connection, id: i64) -> Result<Option<SummaryRecord>> {
    let mut stmt = conn.prepare_cached(
        "SELECT m.id, m.request, m.investigated, m.learned, m.completed, m.next_steps, m.notes,
                m.source, m.created_at, p.id, p.root, p.name, s.platform,
                s.platform_session_id, m.prompt_number
         FROM summaries m
         LEFT JOIN projects p ON p.id = m.project_id
         LEFT JOIN sessions s ON s.id = m.session_id
         WHERE m.id = ?1",
    )?;
    Ok(stmt
        .query_row([id], |r| {
            let created: i64 = r.get(8)?;
            Ok(SummaryRecord {
                id: ItemRef::summary(r.get(0)?),
                request: r.get(1)?,
                investigated: r.get(2)?,
                learned: r.get(3)?,
                completed: r.get(4)?,
                next_steps: r.get(5)?,
                notes: r.get(6)?,
                source: r.get(7)?,
                created_at: format_rfc3339(created),
                created_at_ms: created,
                project: project_at(r, 9)?,
                session: session_at(r, 12)?,
            })
        })
        .optional()?)
}

pub fn prompt(conn: &Connection, id: i64) -> Result<Option<PromptRecord>> {
    let mut stmt = conn.prepare_cached(
        "SELECT q.id, q.text, q.origin, q.created_at, p.id, p.root, p.name, s.platform,
                s.platform_session_id, q.prompt_number
         FROM prompts q
         JOIN sessions s ON s.id = q.session_id
         LEFT JOIN projects p ON p.id = s.project_id
         WHERE q.id = ?1",
    )?;
    Ok(stmt
        .query_row([id], |r| {
            let created: i64 = r.get(3)?;
            Ok(PromptRecord {
                id: ItemRef::prompt(r.get(0)?),
                text: r.get(1)?,
                origin: r.get(2)?,
                created_at: format_rfc3339(created),
                created_at_ms: created,
                project: project_at(r, 4)?,
                session: session_at(r, 7)?,
            })
        })
        .optional()?)
}
