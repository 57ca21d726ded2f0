//! The durable queue: the `events` table as the worker drains it.
//!
//! Hooks insert events as `pending`. The worker leases the events of one
//! prompt turn at a time ([`Store::lease_next_turn`]), compresses them, and
//! stores the result in one transaction that also marks them `done`
//! ([`Store::complete_lease`]). Nothing is deleted, so a crash at any point
//! leaves either the leased rows (taken back by [`Store::reclaim_leases`]
//! when the next worker starts) or the finished result, never half of it;
//! and the rows a batch produces carry uids derived from the batch, so a
//! batch redone after a crash cannot insert anything twice.
//!
//! A failed batch goes back to `pending` with a backoff in `lease_until`
//! (a pending row is ready once `lease_until` is past or null); after
//! `max_attempts` it stays `failed`, with its `last_error`, until
//! [`Store::retry_events`] resets it.
//!
//! When is a turn ready? When it is closed (its Stop was captured, a later
//! prompt opened the next turn, or the session ended), when its oldest
//! pending event is older than the flush time, or when it holds enough
//! events or bytes for a full batch. A long turn goes out in pieces of at
//! most `batch_max_events` / `batch_max_bytes`, and its turn end rides with
//! the last piece: only that piece asks for the summary. A turn that never
//! ended (interrupted: no Stop) whose every event already went out in
//! pieces is finished once the next prompt or the session's end closes it:
//! an empty lease, complete, that merges its pieces into the summary (and
//! lets the checks they left failing stand).

use std::collections::BTreeMap;

use rusqlite::{OptionalExtension, Transaction, TransactionBehavior, params};
use serde::Serialize;

use crate::ledger::{NewLlmCall, insert_call};
use crate::memory::{NewObservation, NewSummary, insert_observation, insert_summary};
use crate::{Result, Store, parse_json_list, sql_err};

/// How the worker cuts and leases batches.
#[derive(Debug, Clone, Copy)]
pub struct QueueLimits {
    /// Most events in one batch (at least one is always taken).
    pub batch_max_events: usize,
    /// Most bytes of event text (input + response + error) in one batch.
    pub batch_max_bytes: usize,
    /// An open turn is flushed once its oldest pending event is this old.
    pub turn_flush_ms: i64,
    /// How long a lease holds before the rows count as abandoned.
    pub lease_ms: i64,
}

/// One captured event as the worker reads it.
#[derive(Debug, Clone, PartialEq)]
pub struct QueuedEvent {
    pub id: i64,
    pub uid: String,
    /// `tool_use`, `tool_failure` or `turn_end`.
    pub kind: String,
    pub tool_name: Option<String>,
    /// JSON text.
    pub input: Option<String>,
    /// JSON text; for a turn end, the last assistant message as a JSON string.
    pub response: Option<String>,
    pub error: Option<String>,
    pub files_read: Vec<String>,
    pub files_modified: Vec<String>,
    pub note: Option<String>,
    pub priority: i64,
    pub attempts: i64,
    pub created_at: i64,
    /// The host's id of the tool call, when it gave one.
    pub tool_use_id: Option<String>,
}

impl QueuedEvent {
    fn size(&self) -> usize {
        [&self.input, &self.response, &self.error]
            .iter()
            .map(|f| f.as_ref().map_or(0, String::len))
            .sum()
    }

    pub fn is_turn_end(&self) -> bool {
        self.kind == "turn_end"
    }
}

/// What the turn a lease belongs to is about.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct TurnInfo {
    pub session_id: i64,
    pub platform_session_id: String,
    pub prompt_number: i64,
    pub project_id: Option<i64>,
    pub project_root: Option<String>,
    pub project_name: Option<String>,
    /// The stored (sanitized) prompt; None when private or not captured.
    pub prompt: Option<String>,
    /// The host's transcript of the session, when it gave one.
    pub transcript_path: Option<String>,
    /// The host that ran the session (`claude-code`, `codex`, ...).
    pub platform: String,
}

/// Events of one turn, leased to the worker.
#[derive(Debug, Clone, PartialEq)]
pub struct Lease {
    pub turn: TurnInfo,
    /// Tool events (not turn ends), in the order they were captured.
    pub events: Vec<QueuedEvent>,
    /// The turn's end events in this batch (usually none or one).
    pub turn_ends: Vec<QueuedEvent>,
    /// The turn is closed and this batch holds the rest of it: the summary
    /// belongs to this batch.
    pub turn_complete: bool,
    pub lease_until: i64,
}

impl Lease {
    /// Every leased row id.
    pub fn event_ids(&self) -> Vec<i64> {
        self.events
            .iter()
            .chain(&self.turn_ends)
            .map(|e| e.id)
            .collect()
    }

    /// The uid of the batch's first event, from which the uids of what the
    /// batch produces are derived (so a redone batch writes the same uids).
    /// An empty lease (a turn finished after its pieces) has none: its
    /// uids derive from the turn, `end-<platform session id>-<prompt number>`.
    pub fn first_uid(&self) -> String {
        match self
            .events
            .iter()
            .chain(&self.turn_ends)
            .min_by_key(|e| e.id)
        {
            Some(e) => e.uid.clone(),
            None => format!(
                "end-{}-{}",
                self.turn.platform_session_id, self.turn.prompt_number
            ),
        }
    }

    /// `obs-<first event uid>-<n>`.
    pub fn observation_uid(&self, n: usize) -> String {
        format!("obs-{}-{n}", self.first_uid())
    }

    /// `sum-<platform session id>-<prompt number>`: one summary per turn,
    /// however often or in how many pieces the turn is processed.
    pub fn summary_uid(&self) -> String {
        format!(
            "sum-{}-{}",
            self.turn.platform_session_id, self.turn.prompt_number
        )
    }

    /// `piece-<first event uid>`: the partial summary of a piece that is
    /// not the turn's last.
    pub fn piece_uid(&self) -> String {
        format!("piece-{}", self.first_uid())
    }

    /// The last assistant message of the turn, from its turn end.
    pub fn last_assistant_message(&self) -> Option<String> {
        self.turn_ends.iter().rev().find_map(|e| {
            let text = e.response.as_deref()?;
            match serde_json::from_str::<serde_json::Value>(text) {
                Ok(serde_json::Value::String(s)) => Some(s),
                Ok(serde_json::Value::Null) => None,
                Ok(other) => Some(other.to_string()),
                Err(_) => Some(text.to_owned()),
            }
        })
    }
}

/// What completing a lease writes, besides marking its events done.
#[derive(Debug, Clone, Default)]
pub struct BatchResult {
    pub observations: Vec<NewObservation>,
    pub summary: Option<NewSummary>,
    /// The partial summary of a piece that is not the turn's last.
    pub piece: Option<crate::pieces::NewPiece>,
    pub calls: Vec<NewLlmCall>,
}

/// Row ids of what [`Store::complete_lease`] inserted (empty for rows that
/// were already there).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Stored {
    pub observation_ids: Vec<i64>,
    pub summary_id: Option<i64>,
}

/// Queue counts by state.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct QueueCounts {
    /// Waiting to be compressed (including those backing off).
    pub pending: i64,
    /// Pending rows waiting out a retry backoff.
    pub backing_off: i64,
    pub leased: i64,
    pub done: i64,
    pub failed: i64,
}

/// An event that ended in the failed state.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FailedEvent {
    pub id: i64,
    pub uid: String,
    pub platform_session_id: String,
    pub prompt_number: i64,
    pub kind: String,
    pub tool_name: Option<String>,
    pub attempts: i64,
    pub last_error: Option<String>,
    pub created_at: i64,
}

/// Which events `mnemo worker retry` resets.
#[derive(Debug, Clone, Copy)]
pub enum RetrySelection<'a> {
    All,
    Ids(&'a [i64]),
}

/// The wait before attempt `attempts + 1`: 5 s, doubling, at most 10 minutes.
pub fn backoff_ms(attempts: i64) -> i64 {
    let exp = (attempts.max(1) - 1).min(16) as u32;
    (5_000i64 << exp).min(600_000)
}

const EVENT_COLUMNS: &str = "id, uid, kind, tool_name, input, response, error, files_read,
     files_modified, note, priority, attempts, created_at, tool_use_id";

fn event_from_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<QueuedEvent> {
    Ok(QueuedEvent {
        id: r.get(0)?,
        uid: r.get(1)?,
        kind: r.get(2)?,
        tool_name: r.get(3)?,
        input: r.get(4)?,
        response: r.get(5)?,
        error: r.get(6)?,
        files_read: parse_json_list(&r.get::<_, String>(7)?),
        files_modified: parse_json_list(&r.get::<_, String>(8)?),
        note: r.get(9)?,
        priority: r.get(10)?,
        attempts: r.get(11)?,
        created_at: r.get(12)?,
        tool_use_id: r.get(13)?,
    })
}

fn ids_json(ids: &[i64]) -> String {
    serde_json::to_string(ids).unwrap_or_else(|_| "[]".to_owned())
}

impl Store {
    /// Leases the next ready turn (or piece of one), highest priority first;
    /// None when no turn is ready.
    pub fn lease_next_turn(&mut self, now: i64, limits: &QueueLimits) -> Result<Option<Lease>> {
        let path = self.path.clone();
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(|e| sql_err(&path, e))?;
        let lease = lease_in(&tx, now, limits).map_err(|e| sql_err(&path, e))?;
        tx.commit().map_err(|e| sql_err(&path, e))?;
        Ok(lease)
    }

    /// Stores what a batch produced and marks its events done, in one
    /// transaction: after a crash either all of it is there or none.
    pub fn complete_lease(&mut self, lease: &Lease, result: &BatchResult) -> Result<Stored> {
        let path = self.path.clone();
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(|e| sql_err(&path, e))?;
        let stored = complete_in(&tx, lease, result).map_err(|e| sql_err(&path, e))?;
        tx.commit().map_err(|e| sql_err(&path, e))?;
        Ok(stored)
    }

    /// A batch failed: its events back off (or, past `max_attempts`, end
    /// failed) with `error` recorded.
    pub fn fail_lease(
        &mut self,
        lease: &Lease,
        error: &str,
        now: i64,
        max_attempts: i64,
    ) -> Result<()> {
        if lease.event_ids().is_empty() && lease.turn_complete {
            // A finishing lease has no events to back off: retrying it at
            // once would fail again forever. Its pieces' observations are
            // stored; only the turn's summary is lost.
            return crate::pieces::delete_pieces(
                &self.conn,
                lease.turn.session_id,
                lease.turn.prompt_number,
            )
            .map_err(|e| self.err(e));
        }
        let ids = ids_json(&lease.event_ids());
        self.conn
            .execute(
                "UPDATE events SET
                    status = CASE WHEN attempts >= ?3 THEN 'failed' ELSE 'pending' END,
                    lease_until = CASE WHEN attempts >= ?3 THEN NULL
                                       ELSE ?2 + min(600000, 5000 << (min(max(attempts, 1), 17) - 1)) END,
                    last_error = ?4
                 WHERE id IN (SELECT value FROM json_each(?1)) AND status = 'leased'",
                params![ids, now, max_attempts, error],
            )
            .map(|_| ())
            .map_err(|e| self.err(e))
    }

    /// Gives a lease back untried (graceful shutdown): the attempt does not count.
    pub fn release_lease(&mut self, lease: &Lease) -> Result<()> {
        let ids = ids_json(&lease.event_ids());
        self.conn
            .execute(
                "UPDATE events SET status = 'pending', lease_until = NULL,
                        attempts = max(attempts - 1, 0)
                 WHERE id IN (SELECT value FROM json_each(?1)) AND status = 'leased'",
                [ids],
            )
            .map(|_| ())
            .map_err(|e| self.err(e))
    }

    /// Tool calls found to have failed after they were captured (a Codex
    /// command whose exit code only its rollout tells): each `(event id,
    /// error)` becomes a `tool_failure` with that error in place of its
    /// response, at failure priority, as if the host had reported the
    /// failure. Events that are not tool uses are left alone. Returns how
    /// many changed.
    pub fn record_tool_failures(&mut self, failures: &[(i64, String)]) -> Result<usize> {
        let path = self.path.clone();
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(|e| sql_err(&path, e))?;
        let mut changed = 0;
        {
            let mut stmt = tx
                .prepare_cached(
                    "UPDATE events SET kind = 'tool_failure', error = ?2, response = NULL,
                            priority = min(priority, ?3)
                     WHERE id = ?1 AND kind = 'tool_use'",
                )
                .map_err(|e| sql_err(&path, e))?;
            for (id, error) in failures {
                changed += stmt
                    .execute(params![id, error, mnemo_core::model::Priority::High as i64])
                    .map_err(|e| sql_err(&path, e))?;
            }
        }
        tx.commit().map_err(|e| sql_err(&path, e))?;
        Ok(changed)
    }

    /// Takes back leases nobody is working on. The worker calls this at
    /// start-up with `all = true`: it holds the one-worker lock, so every
    /// lease belongs to a predecessor that died (the attempt counts, so that
    /// a batch that kills the worker every time ends up failed instead of
    /// crashing it forever). With `all = false` only expired leases return.
    pub fn reclaim_leases(&mut self, now: i64, all: bool) -> Result<usize> {
        self.conn
            .execute(
                "UPDATE events SET status = 'pending', lease_until = NULL
                 WHERE status = 'leased' AND (?1 OR lease_until IS NULL OR lease_until <= ?2)",
                params![all, now],
            )
            .map_err(|e| self.err(e))
    }

    /// Puts failed events (and pending ones waiting out a backoff) back in
    /// line with a fresh attempt count; returns how many.
    pub fn retry_events(&mut self, which: RetrySelection<'_>) -> Result<usize> {
        let (all, ids) = match which {
            RetrySelection::All => (true, "[]".to_owned()),
            RetrySelection::Ids(ids) => (false, ids_json(ids)),
        };
        self.conn
            .execute(
                "UPDATE events SET status = 'pending', attempts = 0, lease_until = NULL,
                        last_error = NULL
                 WHERE (status = 'failed' OR (status = 'pending' AND lease_until IS NOT NULL))
                   AND (?1 OR id IN (SELECT value FROM json_each(?2)))",
                params![all, ids],
            )
            .map_err(|e| self.err(e))
    }

    /// Which of `ids` name no event at all (for "no such event" messages).
    pub fn unknown_events(&self, ids: &[i64]) -> Result<Vec<i64>> {
        let mut stmt = self
            .conn
            .prepare_cached(
                "SELECT value FROM json_each(?1) WHERE value NOT IN (SELECT id FROM events)",
            )
            .map_err(|e| self.err(e))?;
        let rows = stmt
            .query_map([ids_json(ids)], |r| r.get(0))
            .map_err(|e| self.err(e))?;
        rows.collect::<rusqlite::Result<_>>()
            .map_err(|e| self.err(e))
    }

    /// Events by queue state.
    pub fn queue_counts(&self, now: i64) -> Result<QueueCounts> {
        let mut counts = QueueCounts::default();
        let mut stmt = self
            .conn
            .prepare_cached(
                "SELECT status, count(*), sum(status = 'pending' AND lease_until > ?1)
                 FROM events GROUP BY status",
            )
            .map_err(|e| self.err(e))?;
        let rows = stmt
            .query_map([now], |r| {
                Ok((
                    r.get::<_, String>(0)?,
                    r.get::<_, i64>(1)?,
                    r.get::<_, Option<i64>>(2)?.unwrap_or(0),
                ))
            })
            .map_err(|e| self.err(e))?;
        for row in rows {
            let (status, n, backing_off) = row.map_err(|e| self.err(e))?;
            match status.as_str() {
                "pending" => {
                    counts.pending = n;
                    counts.backing_off = backing_off;
                }
                "leased" => counts.leased = n,
                "done" => counts.done = n,
                "failed" => counts.failed = n,
                _ => {}
            }
        }
        Ok(counts)
    }

    /// True when no event waits or is being worked on (failed ones do not count).
    pub fn queue_is_empty(&self) -> Result<bool> {
        self.conn
            .query_row(
                "SELECT NOT EXISTS (SELECT 1 FROM events WHERE status IN ('pending', 'leased'))",
                [],
                |r| r.get(0),
            )
            .map_err(|e| self.err(e))
    }

    /// The failed events, newest first.
    pub fn failed_events(&self, limit: usize) -> Result<Vec<FailedEvent>> {
        let mut stmt = self
            .conn
            .prepare_cached(
                "SELECT e.id, e.uid, s.platform_session_id, e.prompt_number, e.kind, e.tool_name,
                        e.attempts, e.last_error, e.created_at
                 FROM events e JOIN sessions s ON s.id = e.session_id
                 WHERE e.status = 'failed' ORDER BY e.id DESC LIMIT ?1",
            )
            .map_err(|e| self.err(e))?;
        let rows = stmt
            .query_map([limit as i64], |r| {
                Ok(FailedEvent {
                    id: r.get(0)?,
                    uid: r.get(1)?,
                    platform_session_id: r.get(2)?,
                    prompt_number: r.get(3)?,
                    kind: r.get(4)?,
                    tool_name: r.get(5)?,
                    attempts: r.get(6)?,
                    last_error: r.get(7)?,
                    created_at: r.get(8)?,
                })
            })
            .map_err(|e| self.err(e))?;
        rows.collect::<rusqlite::Result<Vec<_>>>()
            .map_err(|e| self.err(e))
    }

    /// SQLite's counter of commits by other connections: cheap to poll, and
    /// it changes exactly when a hook has written something.
    pub fn data_version(&self) -> Result<i64> {
        self.conn
            .pragma_query_value(None, "data_version", |r| r.get(0))
            .map_err(|e| self.err(e))
    }
}

/// A turn with ready events, as the candidate query sees it.
struct Candidate {
    session_id: i64,
    prompt_number: i64,
    oldest: i64,
    count: usize,
    bytes: usize,
    closed: bool,
}

impl Candidate {
    /// Whether the turn is to be compressed now: it is closed, its oldest
    /// event waited long enough, or it holds a full batch.
    fn is_due(&self, now: i64, limits: &QueueLimits) -> bool {
        self.closed
            || self.oldest <= now - limits.turn_flush_ms
            || self.count >= limits.batch_max_events.max(1)
            || self.bytes >= limits.batch_max_bytes.max(1)
    }
}

fn lease_in(
    tx: &Transaction<'_>,
    now: i64,
    limits: &QueueLimits,
) -> rusqlite::Result<Option<Lease>> {
    let Some(turn) = candidates(tx, now)?
        .into_iter()
        .find(|c| c.is_due(now, limits))
    else {
        return finishing_lease(tx, now, limits);
    };
    let ready = ready_events(tx, &turn, now)?;
    let (tools, ends): (Vec<_>, Vec<_>) = ready.into_iter().partition(|e| !e.is_turn_end());
    let events = first_piece(&tools, limits);
    // The turn end (and with it the summary) goes with the last piece.
    let rest_of_turn = events.len() == tools.len();
    let turn_ends = if rest_of_turn { ends } else { Vec::new() };
    let turn_complete = rest_of_turn && turn.closed;

    let mut lease = Lease {
        turn: turn_info(tx, turn.session_id, turn.prompt_number)?,
        events,
        turn_ends,
        turn_complete,
        lease_until: now + limits.lease_ms,
    };
    mark_leased(tx, &mut lease)?;
    Ok(Some(lease))
}

/// The turns with ready events, first the most urgent (priority, then age).
fn candidates(tx: &Transaction<'_>, now: i64) -> rusqlite::Result<Vec<Candidate>> {
    let mut stmt = tx.prepare_cached(
        "SELECT e.session_id, e.prompt_number, min(e.created_at), count(*),
                sum(length(coalesce(e.input, '')) + length(coalesce(e.response, ''))
                    + length(coalesce(e.error, ''))),
                coalesce(max(e.prompt_number < s.prompt_count OR s.status = 'ended'), 0)
                OR EXISTS (SELECT 1 FROM events t WHERE t.session_id = e.session_id
                           AND t.prompt_number = e.prompt_number AND t.kind = 'turn_end')
         FROM events e JOIN sessions s ON s.id = e.session_id
         WHERE e.status = 'pending' AND (e.lease_until IS NULL OR e.lease_until <= ?1)
         GROUP BY e.session_id, e.prompt_number
         ORDER BY min(e.priority), min(e.id)",
    )?;
    stmt.query_map([now], |r| {
        Ok(Candidate {
            session_id: r.get(0)?,
            prompt_number: r.get(1)?,
            oldest: r.get(2)?,
            count: r.get::<_, i64>(3)? as usize,
            bytes: r.get::<_, i64>(4)? as usize,
            closed: r.get(5)?,
        })
    })?
    .collect()
}

/// The turn's pending events not leased to anyone, in order.
fn ready_events(
    tx: &Transaction<'_>,
    turn: &Candidate,
    now: i64,
) -> rusqlite::Result<Vec<QueuedEvent>> {
    let mut stmt = tx.prepare_cached(&format!(
        "SELECT {EVENT_COLUMNS} FROM events
         WHERE session_id = ?1 AND prompt_number = ?2 AND status = 'pending'
           AND (lease_until IS NULL OR lease_until <= ?3)
         ORDER BY id"
    ))?;
    stmt.query_map(
        params![turn.session_id, turn.prompt_number, now],
        event_from_row,
    )?
    .collect()
}

/// The first of `tools` that fit one batch (at least one event, however
/// big).
fn first_piece(tools: &[QueuedEvent], limits: &QueueLimits) -> Vec<QueuedEvent> {
    let mut events = Vec::new();
    let mut bytes = 0usize;
    for e in tools {
        let size = e.size();
        if !events.is_empty()
            && (events.len() >= limits.batch_max_events.max(1)
                || bytes + size > limits.batch_max_bytes)
        {
            break;
        }
        bytes += size;
        events.push(e.clone());
    }
    events
}

/// Marks the lease's events leased until its deadline, one attempt more.
fn mark_leased(tx: &Transaction<'_>, lease: &mut Lease) -> rusqlite::Result<()> {
    tx.execute(
        "UPDATE events SET status = 'leased', attempts = attempts + 1, lease_until = ?2
         WHERE id IN (SELECT value FROM json_each(?1))",
        params![ids_json(&lease.event_ids()), lease.lease_until],
    )?;
    for e in lease.events.iter_mut().chain(lease.turn_ends.iter_mut()) {
        e.attempts += 1;
    }
    Ok(())
}

/// An empty, complete lease for a closed turn whose events all went out in
/// pieces before it closed (so no piece was its last); None when there is
/// no such turn.
fn finishing_lease(
    tx: &Transaction<'_>,
    now: i64,
    limits: &QueueLimits,
) -> rusqlite::Result<Option<Lease>> {
    let turn: Option<(i64, i64)> = tx
        .query_row(
            "SELECT tp.session_id, tp.prompt_number
             FROM turn_pieces tp JOIN sessions s ON s.id = tp.session_id
             WHERE (tp.prompt_number < s.prompt_count OR s.status = 'ended')
               AND NOT EXISTS (SELECT 1 FROM events e
                               WHERE e.session_id = tp.session_id
                                 AND e.prompt_number = tp.prompt_number
                                 AND e.status IN ('pending', 'leased'))
             ORDER BY tp.id LIMIT 1",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .optional()?;
    let Some((session_id, prompt_number)) = turn else {
        return Ok(None);
    };
    Ok(Some(Lease {
        turn: turn_info(tx, session_id, prompt_number)?,
        events: Vec::new(),
        turn_ends: Vec::new(),
        turn_complete: true,
        lease_until: now + limits.lease_ms,
    }))
}

fn turn_info(
    tx: &Transaction<'_>,
    session_id: i64,
    prompt_number: i64,
) -> rusqlite::Result<TurnInfo> {
    tx.query_row(
        "SELECT s.platform_session_id, s.project_id, p.root, p.name,
                (SELECT text FROM prompts WHERE session_id = s.id AND prompt_number = ?2),
                s.transcript_path, s.platform
         FROM sessions s LEFT JOIN projects p ON p.id = s.project_id
         WHERE s.id = ?1",
        params![session_id, prompt_number],
        |r| {
            Ok(TurnInfo {
                session_id,
                platform_session_id: r.get(0)?,
                prompt_number,
                project_id: r.get(1)?,
                project_root: r.get(2)?,
                project_name: r.get(3)?,
                prompt: r.get(4)?,
                transcript_path: r.get(5)?,
                platform: r.get(6)?,
            })
        },
    )
    .optional()
    .map(|info| {
        info.unwrap_or(TurnInfo {
            session_id,
            prompt_number,
            ..Default::default()
        })
    })
}

fn complete_in(
    tx: &Transaction<'_>,
    lease: &Lease,
    result: &BatchResult,
) -> rusqlite::Result<Stored> {
    let mut stored = Stored::default();
    if was_forgotten(tx, lease)? {
        // The user forgot the session while it was being compressed.
        return Ok(stored);
    }
    for o in &result.observations {
        if let Some(id) = insert_observation(tx, o)? {
            stored.observation_ids.push(id);
        }
    }
    if let Some(s) = &result.summary {
        stored.summary_id = insert_summary(tx, s)?;
    } else if let Some(p) = &result.piece {
        crate::pieces::insert_piece(tx, p)?;
    }
    if lease.turn_complete {
        // The turn's summary (if it has one to say) now holds its pieces.
        crate::pieces::delete_pieces(tx, lease.turn.session_id, lease.turn.prompt_number)?;
    }
    for call in &result.calls {
        insert_call(tx, call)?;
    }
    tx.execute(
        "UPDATE events SET status = 'done', lease_until = NULL, last_error = NULL,
                compressed_at = CAST(unixepoch('subsec') * 1000 AS INTEGER)
         WHERE id IN (SELECT value FROM json_each(?1))",
        [ids_json(&lease.event_ids())],
    )?;
    Ok(stored)
}

/// Whether every event of the lease was deleted meanwhile (forgotten: see
/// [`crate::curate`]); what the batch made of them is then not stored.
fn was_forgotten(tx: &Transaction<'_>, lease: &Lease) -> rusqlite::Result<bool> {
    let ids = lease.event_ids();
    if ids.is_empty() {
        return Ok(false);
    }
    let left: i64 = tx.query_row(
        "SELECT count(*) FROM events WHERE id IN (SELECT value FROM json_each(?1))",
        [ids_json(&ids)],
        |r| r.get(0),
    )?;
    Ok(left == 0)
}

/// Events by status per turn, for tests and diagnostics.
pub fn statuses_by_turn(
    conn: &rusqlite::Connection,
) -> rusqlite::Result<BTreeMap<(i64, i64), BTreeMap<String, i64>>> {
    let mut out: BTreeMap<(i64, i64), BTreeMap<String, i64>> = BTreeMap::new();
    let mut stmt = conn.prepare(
        "SELECT session_id, prompt_number, status, count(*) FROM events
         GROUP BY session_id, prompt_number, status",
    )?;
    let rows = stmt.query_map([], |r| {
        Ok((
            r.get::<_, i64>(0)?,
            r.get::<_, i64>(1)?,
            r.get::<_, String>(2)?,
            r.get::<_, i64>(3)?,
        ))
    })?;
    for row in rows {
        let (s, p, status, n) = row?;
        out.entry((s, p)).or_default().insert(status, n);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::{
        Capture, CaptureOp, EventRecord, PromptOrigin, SessionRef, new_capture_id,
    };
    use mnemo_core::model::{EventKind, Platform, Priority};
    use std::time::Duration;

    const LIMITS: QueueLimits = QueueLimits {
        batch_max_events: 3,
        batch_max_bytes: 10_000,
        turn_flush_ms: 60_000,
        lease_ms: 30_000,
    };

    fn store() -> (tempfile::TempDir, Store) {
        let tmp = tempfile::tempdir().unwrap();
        let s = Store::open(&tmp.path().join("m.db"), Duration::from_secs(1)).unwrap();
        (tmp, s)
    }

    fn session(id: &str) -> SessionRef {
        SessionRef {
            platform: Platform::ClaudeCode,
            platform_session_id: id.to_owned(),
            project_root: Some("/p/shop".into()),
            project_name: Some("shop".into()),
            cwd: Some("/p/shop".into()),
        }
    }

    fn apply(store: &mut Store, s: &str, op: CaptureOp, at: i64) {
        store
            .apply(&Capture {
                capture_id: new_capture_id(),
                at_ms: at,
                session: session(s),
                op,
            })
            .unwrap();
    }

    fn prompt(store: &mut Store, s: &str, pid: &str, text: &str, at: i64) {
        apply(
            store,
            s,
            CaptureOp::Prompt {
                platform_prompt_id: Some(pid.into()),
                text: Some(text.into()),
                origin: PromptOrigin::User,
            },
            at,
        );
    }

    fn tool(store: &mut Store, s: &str, name: &str, priority: Priority, at: i64) {
        let mut e = EventRecord::new(EventKind::ToolUse, priority);
        e.tool_name = Some(name.into());
        e.tool_use_id = Some(new_capture_id());
        e.input = Some(r#"{"file_path":"/p/shop/a.rs"}"#.into());
        apply(store, s, CaptureOp::Event(e), at);
    }

    fn stop(store: &mut Store, s: &str, message: &str, at: i64) {
        let mut e = EventRecord::new(EventKind::TurnEnd, Priority::Normal);
        e.response = Some(serde_json::to_string(message).unwrap());
        apply(store, s, CaptureOp::Event(e), at);
    }

    fn finish(store: &mut Store, lease: &Lease) -> Stored {
        let result = BatchResult {
            observations: (0..lease.events.len())
                .map(|n| NewObservation {
                    uid: lease.observation_uid(n),
                    kind: "change".into(),
                    title: format!("obs {n}"),
                    ..Default::default()
                })
                .collect(),
            summary: lease.turn_complete.then(|| NewSummary {
                uid: lease.summary_uid(),
                request: lease.turn.prompt.clone().unwrap_or_default(),
                ..Default::default()
            }),
            piece: (!lease.turn_complete).then(|| crate::pieces::NewPiece {
                uid: lease.piece_uid(),
                session_id: lease.turn.session_id,
                prompt_number: lease.turn.prompt_number,
                summary: crate::pieces::PieceSummary {
                    completed: format!("{} events", lease.events.len()),
                    ..Default::default()
                },
                created_at: 0,
            }),
            calls: Vec::new(),
        };
        store.complete_lease(lease, &result).unwrap()
    }

    #[test]
    fn a_tool_use_found_failed_later_becomes_a_failure_and_nothing_else_does() {
        let (_t, mut store) = store();
        prompt(&mut store, "s1", "p1", "run the tests", 1_000);
        tool(&mut store, "s1", "Bash", Priority::Low, 1_001);
        stop(&mut store, "s1", "Done.", 1_002);
        let lease = store.lease_next_turn(2_000, &LIMITS).unwrap().unwrap();
        assert_eq!(lease.turn.platform, "claude-code");
        let (bash, end) = (lease.events[0].id, lease.turn_ends[0].id);
        let changed = store
            .record_tool_failures(&[(bash, "Exit code 3\nboom".into()), (end, "no".into())])
            .unwrap();
        assert_eq!(changed, 1);
        let row = |id: i64| {
            store
                .conn()
                .query_row(
                    "SELECT kind, error, response, priority FROM events WHERE id = ?1",
                    [id],
                    |r| {
                        Ok((
                            r.get::<_, String>(0)?,
                            r.get::<_, Option<String>>(1)?,
                            r.get::<_, Option<String>>(2)?,
                            r.get::<_, i64>(3)?,
                        ))
                    },
                )
                .unwrap()
        };
        assert_eq!(
            row(bash),
            (
                "tool_failure".into(),
                Some("Exit code 3\nboom".into()),
                None,
                0
            )
        );
        assert_eq!(row(end).0, "turn_end");
        assert_eq!(row(end).1, None);
    }

    #[test]
    fn a_batch_of_a_session_forgotten_meanwhile_stores_nothing() {
        let (_t, mut store) = store();
        prompt(&mut store, "s1", "p1", "fix login", 1_000);
        tool(&mut store, "s1", "Edit", Priority::High, 1_001);
        stop(&mut store, "s1", "Fixed it.", 1_002);
        let lease = store.lease_next_turn(2_000, &LIMITS).unwrap().unwrap();
        let sessions = store.sessions_by_platform_id("s1").unwrap();
        store
            .forget(&crate::curate::Forget::Sessions(sessions), false)
            .unwrap();
        let stored = finish(&mut store, &lease);
        assert_eq!(stored, Stored::default());
        let rows: i64 = store
            .conn()
            .query_row(
                "SELECT (SELECT count(*) FROM observations) + (SELECT count(*) FROM summaries)",
                [],
                |r| r.get(0),
            )
            .unwrap();
        assert_eq!(rows, 0);
    }

    #[test]
    fn an_open_turn_waits_and_a_closed_one_goes_whole_with_its_summary() {
        let (_t, mut store) = store();
        prompt(&mut store, "s1", "p1", "fix login", 1_000);
        tool(&mut store, "s1", "Edit", Priority::High, 1_001);
        tool(&mut store, "s1", "Read", Priority::Low, 1_002);
        assert_eq!(store.lease_next_turn(2_000, &LIMITS).unwrap(), None);
        stop(&mut store, "s1", "Fixed it.", 2_001);
        let lease = store.lease_next_turn(2_002, &LIMITS).unwrap().unwrap();
        assert_eq!(lease.events.len(), 2);
        assert_eq!(lease.turn_ends.len(), 1);
        assert!(lease.turn_complete);
        assert_eq!(lease.turn.prompt.as_deref(), Some("fix login"));
        assert_eq!(lease.turn.project_root.as_deref(), Some("/p/shop"));
        assert_eq!(lease.last_assistant_message().as_deref(), Some("Fixed it."));
        assert_eq!(lease.events[0].attempts, 1);
        // Leased rows are not offered again.
        assert_eq!(store.lease_next_turn(2_003, &LIMITS).unwrap(), None);
        let stored = finish(&mut store, &lease);
        assert_eq!(stored.observation_ids.len(), 2);
        assert!(stored.summary_id.is_some());
        let counts = store.queue_counts(2_004).unwrap();
        assert_eq!((counts.done, counts.pending, counts.leased), (3, 0, 0));
        assert!(store.queue_is_empty().unwrap());
    }

    #[test]
    fn an_open_turn_is_flushed_by_age_without_summary() {
        let (_t, mut store) = store();
        prompt(&mut store, "s1", "p1", "long task", 1_000);
        tool(&mut store, "s1", "Edit", Priority::High, 1_001);
        assert_eq!(store.lease_next_turn(60_000, &LIMITS).unwrap(), None);
        let lease = store.lease_next_turn(61_001, &LIMITS).unwrap().unwrap();
        assert!(!lease.turn_complete);
        finish(&mut store, &lease);
        // The Stop alone later still yields the summary (the turn has a prompt).
        stop(&mut store, "s1", "Done.", 70_000);
        let lease = store.lease_next_turn(70_001, &LIMITS).unwrap().unwrap();
        assert!(lease.events.is_empty());
        assert!(lease.turn_complete);
        assert!(finish(&mut store, &lease).summary_id.is_some());
    }

    #[test]
    fn long_turns_go_in_pieces_and_only_the_last_asks_for_the_summary() {
        let (_t, mut store) = store();
        prompt(&mut store, "s1", "p1", "big", 1_000);
        for i in 0..7 {
            tool(&mut store, "s1", "Edit", Priority::High, 1_001 + i);
        }
        // Full batches of an open turn go out before the turn ends.
        let first = store.lease_next_turn(1_100, &LIMITS).unwrap().unwrap();
        assert_eq!((first.events.len(), first.turn_complete), (3, false));
        finish(&mut store, &first);
        stop(&mut store, "s1", "Done.", 1_200);
        let second = store.lease_next_turn(1_201, &LIMITS).unwrap().unwrap();
        assert_eq!(
            (
                second.events.len(),
                second.turn_ends.len(),
                second.turn_complete
            ),
            (3, 0, false)
        );
        finish(&mut store, &second);
        // Each earlier piece left its partial summary, in order; a redone
        // piece is stored once.
        finish(&mut store, &second);
        let pieces = store.turn_pieces(first.turn.session_id, 1).unwrap();
        assert_eq!(
            pieces
                .iter()
                .map(|p| p.completed.as_str())
                .collect::<Vec<_>>(),
            ["3 events", "3 events"]
        );
        let third = store.lease_next_turn(1_202, &LIMITS).unwrap().unwrap();
        assert_eq!(
            (
                third.events.len(),
                third.turn_ends.len(),
                third.turn_complete
            ),
            (1, 1, true)
        );
        assert_ne!(first.observation_uid(0), second.observation_uid(0));
        finish(&mut store, &third);
        let summaries: i64 = store
            .conn()
            .query_row("SELECT count(*) FROM summaries", [], |r| r.get(0))
            .unwrap();
        assert_eq!(summaries, 1);
        // The summary holds them now.
        assert!(
            store
                .turn_pieces(third.turn.session_id, 1)
                .unwrap()
                .is_empty()
        );
    }

    #[test]
    fn a_turn_that_never_ended_is_finished_once_the_next_prompt_closes_it() {
        let (_t, mut store) = store();
        prompt(&mut store, "s1", "p1", "big", 1_000);
        for i in 0..4 {
            tool(&mut store, "s1", "Edit", Priority::High, 1_001 + i);
        }
        // Every event goes out in pieces while the turn is open (full, then aged).
        let first = store.lease_next_turn(1_100, &LIMITS).unwrap().unwrap();
        finish(&mut store, &first);
        let second = store.lease_next_turn(70_000, &LIMITS).unwrap().unwrap();
        assert_eq!((second.events.len(), second.turn_complete), (1, false));
        finish(&mut store, &second);
        // No Stop: nothing more until something closes the turn.
        assert_eq!(store.lease_next_turn(70_001, &LIMITS).unwrap(), None);
        prompt(&mut store, "s1", "p2", "next", 70_002);
        let last = store.lease_next_turn(70_003, &LIMITS).unwrap().unwrap();
        assert_eq!(
            (
                last.turn.prompt_number,
                last.events.len(),
                last.turn_ends.len(),
                last.turn_complete
            ),
            (1, 0, 0, true)
        );
        assert_eq!(last.observation_uid(0), "obs-end-s1-1-0");
        assert!(finish(&mut store, &last).summary_id.is_some());
        assert!(
            store
                .turn_pieces(last.turn.session_id, 1)
                .unwrap()
                .is_empty()
        );
        assert_eq!(store.lease_next_turn(70_004, &LIMITS).unwrap(), None);
    }

    #[test]
    fn a_finishing_lease_that_fails_is_not_retried_forever() {
        let (_t, mut store) = store();
        prompt(&mut store, "s1", "p1", "big", 1_000);
        for i in 0..3 {
            tool(&mut store, "s1", "Edit", Priority::High, 1_001 + i);
        }
        let piece = store.lease_next_turn(1_100, &LIMITS).unwrap().unwrap();
        finish(&mut store, &piece);
        prompt(&mut store, "s1", "p2", "next", 1_200);
        let last = store.lease_next_turn(1_201, &LIMITS).unwrap().unwrap();
        assert!(last.events.is_empty() && last.turn_complete);
        store.fail_lease(&last, "boom", 1_202, 5).unwrap();
        assert_eq!(store.lease_next_turn(1_203, &LIMITS).unwrap(), None);
    }

    #[test]
    fn a_later_prompt_closes_the_turn_and_priority_picks_the_order() {
        let (_t, mut store) = store();
        prompt(&mut store, "s1", "p1", "read things", 1_000);
        tool(&mut store, "s1", "Read", Priority::Low, 1_001);
        prompt(&mut store, "s1", "p2", "change things", 1_002);
        tool(&mut store, "s1", "Edit", Priority::High, 1_003);
        stop(&mut store, "s1", "Changed.", 1_004);
        let first = store.lease_next_turn(1_005, &LIMITS).unwrap().unwrap();
        assert_eq!(first.turn.prompt_number, 2);
        let second = store.lease_next_turn(1_005, &LIMITS).unwrap().unwrap();
        assert_eq!(second.turn.prompt_number, 1);
        assert!(second.turn_complete, "superseded by prompt 2");
    }

    #[test]
    fn failures_back_off_then_fail_and_retry_resets() {
        let (_t, mut store) = store();
        prompt(&mut store, "s1", "p1", "x", 1_000);
        tool(&mut store, "s1", "Edit", Priority::High, 1_001);
        stop(&mut store, "s1", "ok", 1_002);
        let mut now = 2_000;
        for attempt in 1..=3 {
            let lease = store.lease_next_turn(now, &LIMITS).unwrap().unwrap();
            store.fail_lease(&lease, "disk on fire", now, 3).unwrap();
            let counts = store.queue_counts(now).unwrap();
            if attempt < 3 {
                assert_eq!((counts.pending, counts.backing_off), (2, 2));
                assert_eq!(store.lease_next_turn(now + 1, &LIMITS).unwrap(), None);
                now += backoff_ms(attempt);
            } else {
                assert_eq!(counts.failed, 2);
            }
        }
        let failed = store.failed_events(10).unwrap();
        assert_eq!(failed.len(), 2);
        assert_eq!(failed[0].last_error.as_deref(), Some("disk on fire"));
        assert_eq!(failed[0].attempts, 3);
        assert_eq!(
            store.lease_next_turn(now + 1_000_000, &LIMITS).unwrap(),
            None
        );
        let ids = [failed[1].id];
        assert_eq!(store.retry_events(RetrySelection::Ids(&ids)).unwrap(), 1);
        assert_eq!(store.retry_events(RetrySelection::All).unwrap(), 1);
        let lease = store.lease_next_turn(now, &LIMITS).unwrap().unwrap();
        assert_eq!(lease.events[0].attempts, 1);
    }

    #[test]
    fn abandoned_and_released_leases_come_back() {
        let (_t, mut store) = store();
        prompt(&mut store, "s1", "p1", "x", 1_000);
        tool(&mut store, "s1", "Edit", Priority::High, 1_001);
        stop(&mut store, "s1", "ok", 1_002);
        let lease = store.lease_next_turn(2_000, &LIMITS).unwrap().unwrap();
        assert_eq!(store.reclaim_leases(2_001, false).unwrap(), 0);
        assert_eq!(store.reclaim_leases(2_001, true).unwrap(), 2);
        let again = store.lease_next_turn(2_002, &LIMITS).unwrap().unwrap();
        assert_eq!(
            again.first_uid(),
            lease.first_uid(),
            "same batch, same uids"
        );
        assert_eq!(again.events[0].attempts, 2);
        store.release_lease(&again).unwrap();
        let third = store.lease_next_turn(2_003, &LIMITS).unwrap().unwrap();
        assert_eq!(
            third.events[0].attempts, 2,
            "a released lease costs no attempt"
        );
        // Completing the same batch twice inserts nothing the second time.
        let first = finish(&mut store, &third);
        let second = finish(&mut store, &third);
        assert_eq!(first.observation_ids.len(), 1);
        assert_eq!(second, Stored::default());
    }

    #[test]
    fn backoff_doubles_and_is_capped() {
        assert_eq!(backoff_ms(1), 5_000);
        assert_eq!(backoff_ms(2), 10_000);
        assert_eq!(backoff_ms(3), 20_000);
        assert_eq!(backoff_ms(50), 600_000);
    }
}
