//! The one JSON shape of each stored record: observation, summary, prompt,
//! session. Built here, from one SELECT per kind, and nowhere else: `mnemo
//! show --json`, the MCP tools, every HTTP route, the live stream and `mnemo
//! export` all serialize these structs.
//!
//! Every item carries its numeric row `id` and its display `ref` (`#12`,
//! `S12`, `P12`, which every interface accepts back), its `kind`, its
//! `project` as `{root, name}` and its `session` as `{platform,
//! session_id}` (the platform is the agent that produced the record: one
//! project may be worked on by several), then its own fields. Times are RFC 3339 (`created_at`) with
//! epoch milliseconds beside (`created_at_ms`). An observation whose files
//! have baselines carries `freshness` (`current`, `changed`, `deleted`:
//! whether they changed since it was written, see [`crate::freshness`]);
//! reading it costs a `stat` per file, and a hash of what moved.
//!
//! Callers filter with the table aliases of the `FROM` clauses: `o`
//! (observations), `m` (summaries), `q` (prompts), `s` (sessions), `p`
//! (projects).

use mnemo_core::time::format_rfc3339;
use rusqlite::{Connection, OptionalExtension, Row};
use serde::Serialize;

use crate::freshness::{self, Check, Freshness};
use crate::parse_json_list;

/// The display form of an observation id.
pub fn observation_ref(id: i64) -> String {
    format!("#{id}")
}

/// The display form of a turn summary id.
pub fn summary_ref(id: i64) -> String {
    format!("S{id}")
}

/// The display form of a prompt id.
pub fn prompt_ref(id: i64) -> String {
    format!("P{id}")
}

/// A project as every record names it.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
pub struct ProjectRef {
    pub root: String,
    pub name: String,
}

/// An agent session as every record names it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SessionKey {
    /// The agent: `claude-code`, `codex`, `cursor`, ...
    pub platform: String,
    pub session_id: String,
    /// The session this one continues (Claude Code's `/clear`, compaction),
    /// when known; omitted otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub continues: Option<String>,
}

/// The columns [`session_at`] reads, for a `sessions s` joined in (a macro,
/// so that the SELECT lists below stay `concat!` literals).
macro_rules! session_key_columns {
    () => {
        "s.platform, s.platform_session_id,
     (SELECT c.platform_session_id FROM sessions c WHERE c.id = s.continues)"
    };
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ObservationRecord {
    pub id: i64,
    #[serde(rename = "ref")]
    pub reference: String,
    /// Always `observation`.
    pub kind: &'static str,
    pub uid: String,
    /// bugfix, feature, refactor, change, discovery, decision, memory, ...
    #[serde(rename = "type")]
    pub obs_type: String,
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
    pub project: Option<ProjectRef>,
    pub session: Option<SessionKey>,
    /// The turn within the session.
    pub prompt_number: Option<i64>,
    /// The user's prompt of that turn.
    pub prompt: Option<String>,
    /// What that prompt is when the host wrote it, not the user
    /// (`background task finished: ...`, [`mnemo_core::host_text::describe`]);
    /// omitted for the user's own words.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prompt_host_text: Option<String>,
    /// The user changed it (`mnemo edit`, the viewer, the API).
    pub edited: bool,
    /// Always in its project's SessionStart index (`mnemo pin`).
    pub pinned: bool,
    /// Whether its files still hold what they held when it was written
    /// (`current`, `changed`, `deleted`; see [`crate::freshness`]); omitted
    /// when no file of it could be compared.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub freshness: Option<Freshness>,
    /// Who wrote it, when it came from another person through sync
    /// (omitted for this person's own records).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub author: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SummaryRecord {
    pub id: i64,
    #[serde(rename = "ref")]
    pub reference: String,
    /// Always `summary`.
    pub kind: &'static str,
    pub uid: String,
    pub request: String,
    pub investigated: String,
    pub learned: String,
    pub completed: String,
    pub next_steps: String,
    pub notes: String,
    pub source: String,
    pub created_at: String,
    pub created_at_ms: i64,
    pub project: Option<ProjectRef>,
    pub session: Option<SessionKey>,
    pub prompt_number: Option<i64>,
    /// Who wrote it, when it came from another person through sync.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub author: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PromptRecord {
    pub id: i64,
    #[serde(rename = "ref")]
    pub reference: String,
    /// Always `prompt`.
    pub kind: &'static str,
    pub uid: String,
    pub text: String,
    /// `user`, or the machine origin of an injected turn.
    pub origin: String,
    pub created_at: String,
    pub created_at_ms: i64,
    pub project: Option<ProjectRef>,
    pub session: Option<SessionKey>,
    pub prompt_number: Option<i64>,
    /// The host's id of the prompt, when it gives one.
    pub platform_prompt_id: Option<String>,
    /// What the prompt is when the host wrote it, not the user
    /// (`background task failed: ...`, [`mnemo_core::host_text::describe`]);
    /// omitted for the user's own words.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub host_text: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SessionRecord {
    pub id: i64,
    /// Always `session`.
    pub kind: &'static str,
    pub platform: String,
    pub session_id: String,
    pub project: Option<ProjectRef>,
    pub cwd: Option<String>,
    /// How the host started it (`startup`, `resume`, ...).
    pub source: Option<String>,
    pub transcript_path: Option<String>,
    pub status: String,
    pub end_reason: Option<String>,
    pub prompt_count: i64,
    pub started_at: String,
    pub started_at_ms: i64,
    pub ended_at: Option<String>,
    pub ended_at_ms: Option<i64>,
    pub observations: i64,
    pub summaries: i64,
    pub events_pending: i64,
    /// The session this one continues (its `session_id`, same platform):
    /// Claude Code starts a new session id on `/clear` and on compaction.
    pub continues: Option<String>,
}

fn project_at(r: &Row<'_>, i: usize) -> rusqlite::Result<Option<ProjectRef>> {
    Ok(match r.get::<_, Option<String>>(i)? {
        Some(root) => Some(ProjectRef {
            root,
            name: r.get(i + 1)?,
        }),
        None => None,
    })
}

fn session_at(r: &Row<'_>, i: usize) -> rusqlite::Result<Option<SessionKey>> {
    Ok(match r.get::<_, Option<String>>(i)? {
        Some(platform) => Some(SessionKey {
            platform,
            session_id: r.get(i + 1)?,
            continues: r.get(i + 2)?,
        }),
        None => None,
    })
}

fn list_at(r: &Row<'_>, i: usize) -> rusqlite::Result<Vec<String>> {
    Ok(parse_json_list(&r.get::<_, String>(i)?))
}

/// The columns of [`observation_row`] before its files' baselines.
macro_rules! observation_columns {
    () => {
        concat!(
            "o.id, o.uid, o.type, o.title, o.subtitle, o.narrative,
     o.facts, o.concepts, o.files_read, o.files_modified, o.source, o.created_at,
     p.root, p.name, o.prompt_number,
     (SELECT q.text FROM prompts q
      WHERE q.session_id = o.session_id AND q.prompt_number = o.prompt_number),
     o.edited_at IS NOT NULL, o.pinned, ",
            session_key_columns!(),
            ", o.author"
        )
    };
}

/// Columns of [`observation_row`].
pub const OBSERVATION_SELECT: &str = concat!(
    observation_columns!(),
    ",
     (SELECT json_group_array(json_array(f.path, f.content_id, f.size, f.mtime_ms))
      FROM file_baselines f WHERE f.observation_id = o.id)"
);

/// Columns of [`observation_row`] for a reader that does not show the
/// record on this machine (sync sends it elsewhere): the same record
/// without `freshness`, so neither the baselines are read nor the files
/// `stat`ed and hashed.
pub const OBSERVATION_SELECT_STORED: &str = concat!(observation_columns!(), ", NULL");
pub const OBSERVATION_FROM: &str = "observations o
     LEFT JOIN projects p ON p.id = o.project_id
     LEFT JOIN sessions s ON s.id = o.session_id";

pub fn observation_row(r: &Row<'_>) -> rusqlite::Result<ObservationRecord> {
    let id: i64 = r.get(0)?;
    let created: i64 = r.get(11)?;
    Ok(ObservationRecord {
        id,
        reference: observation_ref(id),
        kind: "observation",
        uid: r.get(1)?,
        obs_type: r.get(2)?,
        title: r.get(3)?,
        subtitle: r.get(4)?,
        narrative: r.get(5)?,
        facts: list_at(r, 6)?,
        concepts: list_at(r, 7)?,
        files_read: list_at(r, 8)?,
        files_modified: list_at(r, 9)?,
        source: r.get(10)?,
        created_at: format_rfc3339(created),
        created_at_ms: created,
        project: project_at(r, 12)?,
        prompt_number: r.get(14)?,
        prompt_host_text: r
            .get::<_, Option<String>>(15)?
            .as_deref()
            .and_then(mnemo_core::host_text::describe),
        prompt: r.get(15)?,
        edited: r.get(16)?,
        pinned: r.get(17)?,
        session: session_at(r, 18)?,
        author: r.get(21)?,
        freshness: freshness_at(r, 22, 12)?,
    })
}

/// The freshness of the observation's files from the baselines in column
/// `i` (paths relative to the project root in column `root`).
fn freshness_at(r: &Row<'_>, i: usize, root: usize) -> rusqlite::Result<Option<Freshness>> {
    let baselines = freshness::parse_baselines(r.get::<_, Option<String>>(i)?.as_deref());
    let root: Option<String> = r.get(root)?;
    Ok(freshness::of_files(
        baselines.iter().map(|(p, b)| (p.as_str(), b)),
        root.as_deref(),
        Check::Hash,
    ))
}

/// Columns of [`summary_row`].
pub const SUMMARY_SELECT: &str = concat!(
    "m.id, m.uid, m.request, m.investigated, m.learned,
     m.completed, m.next_steps, m.notes, m.source, m.created_at, p.root, p.name,
     m.prompt_number, ",
    session_key_columns!(),
    ", m.author"
);
pub const SUMMARY_FROM: &str = "summaries m
     LEFT JOIN projects p ON p.id = m.project_id
     LEFT JOIN sessions s ON s.id = m.session_id";

pub fn summary_row(r: &Row<'_>) -> rusqlite::Result<SummaryRecord> {
    let id: i64 = r.get(0)?;
    let created: i64 = r.get(9)?;
    Ok(SummaryRecord {
        id,
        reference: summary_ref(id),
        kind: "summary",
        uid: r.get(1)?,
        request: r.get(2)?,
        investigated: r.get(3)?,
        learned: r.get(4)?,
        completed: r.get(5)?,
        next_steps: r.get(6)?,
        notes: r.get(7)?,
        source: r.get(8)?,
        created_at: format_rfc3339(created),
        created_at_ms: created,
        project: project_at(r, 10)?,
        prompt_number: r.get(12)?,
        session: session_at(r, 13)?,
        author: r.get(16)?,
    })
}

/// Columns of [`prompt_row`].
pub const PROMPT_SELECT: &str = concat!(
    "q.id, q.uid, q.text, q.origin, q.created_at, p.root, p.name,
     q.prompt_number, q.platform_prompt_id, ",
    session_key_columns!()
);
pub const PROMPT_FROM: &str = "prompts q
     JOIN sessions s ON s.id = q.session_id
     LEFT JOIN projects p ON p.id = s.project_id";

pub fn prompt_row(r: &Row<'_>) -> rusqlite::Result<PromptRecord> {
    let id: i64 = r.get(0)?;
    let created: i64 = r.get(4)?;
    let text: String = r.get(2)?;
    Ok(PromptRecord {
        id,
        reference: prompt_ref(id),
        kind: "prompt",
        uid: r.get(1)?,
        host_text: mnemo_core::host_text::describe(&text),
        text,
        origin: r.get(3)?,
        created_at: format_rfc3339(created),
        created_at_ms: created,
        project: project_at(r, 5)?,
        prompt_number: r.get(7)?,
        platform_prompt_id: r.get(8)?,
        session: session_at(r, 9)?,
    })
}

/// Columns of [`session_row`].
pub const SESSION_SELECT: &str = "s.id, s.platform, s.platform_session_id, p.root, p.name,
     s.cwd, s.source, s.transcript_path, s.status, s.end_reason, s.prompt_count,
     s.started_at, s.ended_at,
     (SELECT count(*) FROM observations o WHERE o.session_id = s.id),
     (SELECT count(*) FROM summaries m WHERE m.session_id = s.id),
     (SELECT count(*) FROM events e WHERE e.session_id = s.id
      AND e.status IN ('pending', 'leased')),
     (SELECT c.platform_session_id FROM sessions c WHERE c.id = s.continues)";
pub const SESSION_FROM: &str = "sessions s LEFT JOIN projects p ON p.id = s.project_id";

pub fn session_row(r: &Row<'_>) -> rusqlite::Result<SessionRecord> {
    let started: i64 = r.get(11)?;
    let ended: Option<i64> = r.get(12)?;
    Ok(SessionRecord {
        id: r.get(0)?,
        kind: "session",
        platform: r.get(1)?,
        session_id: r.get(2)?,
        project: project_at(r, 3)?,
        cwd: r.get(5)?,
        source: r.get(6)?,
        transcript_path: r.get(7)?,
        status: r.get(8)?,
        end_reason: r.get(9)?,
        prompt_count: r.get(10)?,
        started_at: format_rfc3339(started),
        started_at_ms: started,
        ended_at: ended.map(format_rfc3339),
        ended_at_ms: ended,
        observations: r.get(13)?,
        summaries: r.get(14)?,
        events_pending: r.get(15)?,
        continues: r.get(16)?,
    })
}

/// One observation by row id.
pub fn observation(conn: &Connection, id: i64) -> rusqlite::Result<Option<ObservationRecord>> {
    let sql = format!("SELECT {OBSERVATION_SELECT} FROM {OBSERVATION_FROM} WHERE o.id = ?1");
    conn.prepare_cached(&sql)?
        .query_row([id], observation_row)
        .optional()
}

/// One summary by row id.
pub fn summary(conn: &Connection, id: i64) -> rusqlite::Result<Option<SummaryRecord>> {
    let sql = format!("SELECT {SUMMARY_SELECT} FROM {SUMMARY_FROM} WHERE m.id = ?1");
    conn.prepare_cached(&sql)?
        .query_row([id], summary_row)
        .optional()
}

/// One prompt by row id.
pub fn prompt(conn: &Connection, id: i64) -> rusqlite::Result<Option<PromptRecord>> {
    let sql = format!("SELECT {PROMPT_SELECT} FROM {PROMPT_FROM} WHERE q.id = ?1");
    conn.prepare_cached(&sql)?
        .query_row([id], prompt_row)
        .optional()
}
