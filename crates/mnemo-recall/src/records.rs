//! Full records by id: what `mnemo show` prints and `get_observations`
//! returns. The records are [`mnemo_store::shape`]'s, the one shape every
//! interface serializes: an observation comes with its project, its session
//! and the user's prompt of the turn it came from; a summary and a prompt
//! with their project and session. A summary's session is listed turn by
//! turn by [`session_turns`], for an index line (`S4 … 4 turns`) that
//! names a session by its last summary.

use mnemo_store::shape;
use rusqlite::Connection;
use serde::Serialize;

pub use mnemo_store::shape::{
    ObservationRecord, ProjectRef, PromptRecord, SessionKey, SessionRecord, SummaryRecord,
};

use crate::Result;
use crate::ids::{ItemRef, Kind};

/// Any record; each carries its own `kind`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum Record {
    Observation(ObservationRecord),
    Summary(SummaryRecord),
    Prompt(PromptRecord),
}

impl Record {
    pub fn id(&self) -> ItemRef {
        match self {
            Record::Observation(o) => ItemRef::observation(o.id),
            Record::Summary(s) => ItemRef::summary(s.id),
            Record::Prompt(p) => ItemRef::prompt(p.id),
        }
    }
}

/// The records found, in the order asked, and the ids that do not exist.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Fetched {
    pub records: Vec<Record>,
    /// Display refs (`"#12"`, `"S3"`) of the ids that do not exist.
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

pub fn observation(conn: &Connection, id: i64) -> Result<Option<ObservationRecord>> {
    Ok(shape::observation(conn, id)?)
}

pub fn summary(conn: &Connection, id: i64) -> Result<Option<SummaryRecord>> {
    Ok(shape::summary(conn, id)?)
}

pub fn prompt(conn: &Connection, id: i64) -> Result<Option<PromptRecord>> {
    Ok(shape::prompt(conn, id)?)
}

/// One turn summary of a session, as [`session_turns`] lists it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TurnRef {
    #[serde(rename = "ref")]
    pub id: ItemRef,
    pub prompt_number: Option<i64>,
    pub request: String,
}

/// Every turn summary of the session that summary `id` belongs to, in turn
/// order; empty when the summary has no session or does not exist.
pub fn session_turns(conn: &Connection, id: i64) -> Result<Vec<TurnRef>> {
    let mut stmt = conn.prepare_cached(
        "SELECT t.id, t.prompt_number, t.request FROM summaries s
         JOIN summaries t ON t.session_id = s.session_id
         WHERE s.id = ?1 ORDER BY t.prompt_number, t.id",
    )?;
    let turns = stmt
        .query_map([id], |r| {
            Ok(TurnRef {
                id: ItemRef::summary(r.get(0)?),
                prompt_number: r.get(1)?,
                request: r.get(2)?,
            })
        })?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    Ok(turns)
}
