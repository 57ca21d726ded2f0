//! The queue writer: leases a turn, compresses it, stores the result, tells
//! the stream; again until nothing is ready, then waits for hooks to write.
//!
//! It owns the worker's one long-lived write connection, used from blocking
//! threads. Hooks write the database directly (no HTTP on their path), so
//! the drain learns about new events by polling SQLite's `data_version`,
//! which changes exactly when another connection commits: a pragma every
//! 10 ms (250 ms after a quiet minute), microseconds each.
//!
//! Cost governance happens here: before each batch the ledger is summed
//! against the daily and session budgets, and past either the compressor is
//! told that no LLM call is allowed (it compresses offline). The state is
//! kept for `/api/stats` and written to `worker.json` for `mnemo doctor`.
//!
//! Retention runs here too: when the queue is idle, once an hour, the raw
//! payloads of events compressed long ago are dropped (`store.raw_payload_days`).
//!
//! Shutdown: compression runs as its own task so that it can be aborted;
//! aborting drops the compress future, which kills the provider's child
//! processes, and the lease is given back untried. Storing is one short
//! transaction and is never interrupted.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use mnemo_compress::{
    BatchEvent, Compressor, KnowledgeOutcome, KnowledgeRequest, LlmCall, Outcome, SummaryDraft,
    TurnBatch,
};
use mnemo_core::time::now_ms;
use mnemo_store::ledger::{Exhausted, NewLlmCall};
use mnemo_store::memory::{NewObservation, NewSummary};
use mnemo_store::pieces::{NewPiece, PieceSummary};
use mnemo_store::queue::{BatchResult, Lease, QueueLimits, QueuedEvent, Stored};
use mnemo_store::shape;
use mnemo_store::{Store, StoreError};
use tokio::sync::watch;
use tracing::{error, info, warn};

use crate::api::{AppState, StreamEvent};
use crate::exits::CodexExits;
use crate::info::{ExhaustedInfo, WorkerInfo};
use crate::narrative::{Narratives, Told};

/// How often the drain looks for new commits when it has nothing to do:
/// often while work is coming in, less often after a quiet minute.
const POLL_BUSY: Duration = Duration::from_millis(10);
const POLL_QUIET: Duration = Duration::from_millis(250);
const QUIET_AFTER_MS: i64 = 60_000;
/// How often it re-checks for turns that became ready by age or backoff.
const RECHECK: Duration = Duration::from_secs(1);
/// How often retention looks for raw payloads to prune.
const PRUNE_EVERY: Duration = Duration::from_secs(3600);

/// Logs what a stored batch came to.
fn log_stored(lease: &Lease, stored: &Stored, source: &str, started: Instant) {
    info!(
        "turn {} of session {}: {} events -> {} observations{} ({}, {} ms)",
        lease.turn.prompt_number,
        lease.turn.platform_session_id,
        lease.events.len(),
        stored.observation_ids.len(),
        if stored.summary_id.is_some() {
            " + summary"
        } else {
            ""
        },
        if source.is_empty() {
            "nothing to compress"
        } else {
            source
        },
        started.elapsed().as_millis()
    );
}

pub struct Drain {
    app: AppState,
    store: Option<Store>,
    compressor: Arc<Compressor>,
    narratives: Arc<Narratives>,
    exits: Arc<CodexExits>,
    limits: QueueLimits,
    max_attempts: i64,
    info: WorkerInfo,
    /// When retention last pruned raw payloads (see [`Drain::prune_raw`]).
    pruned_at: Option<Instant>,
    /// Turns between two knowledge consolidations by the model (0: never).
    knowledge_every: u64,
}

/// Whether the loop goes on.
#[derive(PartialEq)]
enum Flow {
    Continue,
    Stop,
}

impl Drain {
    pub fn new(app: AppState, store: Store, compressor: Compressor, info: WorkerInfo) -> Drain {
        let w = &app.config.worker;
        let limits = QueueLimits {
            batch_max_events: w.batch_max_events.max(1) as usize,
            batch_max_bytes: w.batch_max_bytes.max(1) as usize,
            turn_flush_ms: (w.turn_flush_secs * 1000) as i64,
            lease_ms: (w.lease_secs.max(1) * 1000) as i64,
        };
        let max_attempts = w.max_attempts.max(1) as i64;
        let narratives = Arc::new(Narratives::new(&app.config));
        let knowledge_every = if compressor.can_consolidate() {
            w.knowledge_every_turns
        } else {
            0
        };
        Drain {
            app,
            store: Some(store),
            compressor: Arc::new(compressor),
            narratives,
            exits: Arc::default(),
            limits,
            max_attempts,
            info,
            pruned_at: None,
            knowledge_every,
        }
    }

    /// Runs until shutdown is requested.
    pub async fn run(mut self) {
        let mut shutdown = self.app.shutdown.subscribe();
        while !*shutdown.borrow() {
            let limits = self.limits;
            // data_version first: a commit between the two calls is then
            // seen as a change and the lease is tried again at once.
            let next = self
                .with_store(move |s| {
                    let version = s.data_version()?;
                    Ok((version, s.lease_next_turn(now_ms(), &limits)?))
                })
                .await;
            match next {
                Ok((_, Some(lease))) => {
                    if self.process(lease, &mut shutdown).await == Flow::Stop {
                        break;
                    }
                }
                Ok((version, None)) => {
                    self.prune_raw().await;
                    self.wait_for_work(version, &mut shutdown).await
                }
                Err(e) => {
                    error!("cannot read the queue: {e}");
                    sleep_or_shutdown(Duration::from_secs(2), &mut shutdown).await;
                }
            }
        }
        info!("queue drain stopped");
    }

    /// Runs `f` with the write connection on a blocking thread (reopening
    /// the connection if a previous call lost it).
    async fn with_store<T, F>(&mut self, f: F) -> Result<T, String>
    where
        T: Send + 'static,
        F: FnOnce(&mut Store) -> Result<T, StoreError> + Send + 'static,
    {
        let store = self.store.take();
        let path = self.app.data.db_path();
        let busy = Duration::from_millis(self.app.config.store.busy_timeout_ms);
        let joined = tokio::task::spawn_blocking(move || {
            let mut store = match store {
                Some(s) => s,
                None => match Store::open(&path, busy) {
                    Ok(s) => s,
                    Err(e) => return (None, Err(e)),
                },
            };
            let result = f(&mut store);
            (Some(store), result)
        })
        .await;
        match joined {
            Ok((store, result)) => {
                self.store = store;
                result.map_err(|e| e.to_string())
            }
            Err(e) => Err(format!("database task failed: {e}")),
        }
    }

    /// Retention: when the queue is idle, at most once an hour, drops the raw
    /// inputs and outputs of events compressed more than
    /// `store.raw_payload_days` ago (0 keeps them).
    async fn prune_raw(&mut self) {
        let days = self.app.config.store.raw_payload_days;
        if days == 0 || self.pruned_at.is_some_and(|t| t.elapsed() < PRUNE_EVERY) {
            return;
        }
        self.pruned_at = Some(Instant::now());
        let cutoff = now_ms() - (days as i64).saturating_mul(86_400_000);
        match self.with_store(move |s| s.prune_raw_payloads(cutoff)).await {
            Ok(0) => {}
            Ok(n) => {
                info!("retention: dropped the raw payloads of {n} events older than {days} days")
            }
            Err(e) => warn!("retention: could not prune raw payloads: {e}"),
        }
    }

    /// Sleeps until a hook commits something, a second passes, or shutdown.
    async fn wait_for_work(&mut self, version: i64, shutdown: &mut watch::Receiver<bool>) {
        let started = Instant::now();
        let quiet = now_ms() - self.app.last_activity_ms.load(Ordering::Relaxed) > QUIET_AFTER_MS;
        let poll = if quiet { POLL_QUIET } else { POLL_BUSY };
        while started.elapsed() < RECHECK {
            if sleep_or_shutdown(poll, shutdown).await {
                return;
            }
            // Inline, not on a blocking thread: the pragma reads the WAL
            // index in shared memory and takes microseconds, and a thread
            // hop per poll would cost more than the poll itself.
            let current = match &self.store {
                Some(store) => store.data_version(),
                None => return,
            };
            match current {
                Ok(v) if v != version => return,
                Ok(_) => {}
                Err(_) => return,
            }
        }
    }

    async fn process(&mut self, mut lease: Lease, shutdown: &mut watch::Receiver<bool>) -> Flow {
        let started = Instant::now();
        self.record_codex_failures(&mut lease).await;
        let batch = self.prepare_batch(&lease).await;
        let mut llm_allowed = false;
        let outcome = if batch.events.is_empty() && !batch.turn_complete {
            // A turn end with nothing to summarize: just mark it done.
            Outcome::default()
        } else {
            llm_allowed = self.llm_allowed(lease.turn.session_id).await;
            let compressor = self.compressor.clone();
            let limit = Duration::from_millis(self.limits.lease_ms as u64);
            match compress(compressor, batch.clone(), llm_allowed, limit, shutdown).await {
                Ok(outcome) => outcome,
                Err(Interrupted::Shutdown) => {
                    let lease_copy = lease.clone();
                    if let Err(e) = self.with_store(move |s| s.release_lease(&lease_copy)).await {
                        warn!("could not give the lease back ({e}); the next worker takes it back");
                    }
                    info!(
                        "stopping: gave back turn {} of session {} untried",
                        lease.turn.prompt_number, lease.turn.platform_session_id
                    );
                    return Flow::Stop;
                }
                Err(Interrupted::Failed(message)) => {
                    self.fail(lease, message).await;
                    return Flow::Continue;
                }
            }
        };
        self.log_outcome(&lease, &outcome, llm_allowed);
        let result = batch_result(&lease, &outcome, now_ms());
        let (lease_copy, result_copy) = (lease.clone(), result.clone());
        match self
            .with_store(move |s| s.complete_lease(&lease_copy, &result_copy))
            .await
        {
            Ok(stored) => {
                log_stored(&lease, &stored, &outcome.source, started);
                self.link_superseded(&stored).await;
                let turn_ended = stored.summary_id.is_some();
                self.publish(stored).await;
                self.refresh_knowledge(lease.turn.project_id).await;
                if let Some(project) = lease.turn.project_id.filter(|_| turn_ended) {
                    self.consolidate_knowledge(project, lease.turn.session_id, shutdown)
                        .await;
                }
            }
            Err(e) => self.fail(lease, format!("storing the result: {e}")).await,
        }
        self.app.touch();
        Flow::Continue
    }

    /// The turn's batch as the compressor reads it: its events, the
    /// narrative from the host's transcript (or the notes its hooks sent),
    /// and the pieces of the turn compressed before this one.
    async fn prepare_batch(&mut self, lease: &Lease) -> TurnBatch {
        let mut batch = build_batch(lease);
        let told = match read_narrative(self.narratives.clone(), lease).await {
            Some(told) => Some(told),
            None => self.told_by_hooks(lease).await,
        };
        if let Some(told) = told {
            told.apply(&mut batch);
        }
        // Every piece sees the earlier ones: the checks they left failing
        // are fixed by a later piece or stand at the turn's end.
        if batch.turn_complete || !batch.events.is_empty() {
            batch.earlier_pieces = self.earlier_pieces(lease).await;
        }
        batch
    }

    /// Logs what is worth knowing about how a turn was compressed: a model
    /// that could not be used, an answer that needed repairs.
    fn log_outcome(&self, lease: &Lease, outcome: &Outcome, llm_allowed: bool) {
        // (Past a budget the fallback is expected and was reported once.)
        if let Some(e) = outcome.fallback_error.as_ref().filter(|_| llm_allowed) {
            warn!(
                "turn {} of session {}: {} not usable, compressed offline instead: {e}",
                lease.turn.prompt_number,
                lease.turn.platform_session_id,
                self.compressor.provider()
            );
        }
        if !outcome.repairs.is_empty() {
            info!(
                "turn {} of session {}: answer repaired: {}",
                lease.turn.prompt_number,
                lease.turn.platform_session_id,
                outcome.repairs.join("; ")
            );
        }
    }

    /// Marks the earlier decisions the new ones replace (same subject, the
    /// rule of `mnemo_recall::supersede`), so that every reader gives the
    /// later first. A failure here loses nothing: readers still compute it.
    async fn link_superseded(&mut self, stored: &Stored) {
        let ids = stored.observation_ids.clone();
        let path = self.app.data.db_path();
        let linked = self
            .with_store(move |s| {
                let mut replaced = 0;
                for id in ids {
                    replaced += mnemo_recall::supersede::link_replaced(s.conn(), id)
                        .map_err(|e| StoreError::Sqlite {
                            path: path.clone(),
                            source: match e {
                                mnemo_recall::RecallError::Sql(e) => e,
                                other => rusqlite::Error::InvalidParameterName(other.to_string()),
                            },
                        })?
                        .len();
                }
                Ok(replaced)
            })
            .await;
        match linked {
            Ok(0) => {}
            Ok(n) => info!("{n} earlier decisions superseded"),
            Err(e) => warn!("could not link superseded decisions: {e}"),
        }
    }

    /// Recomputes the project's knowledge from its records (after each
    /// stored batch: cheap and bounded, see [`crate::knowledge`]). A failure
    /// only costs freshness of the knowledge, and is logged.
    async fn refresh_knowledge(&mut self, project: Option<i64>) {
        let Some(project) = project else {
            return;
        };
        let result = self
            .with_store(move |s| Ok(crate::knowledge::refresh(s.conn(), project, now_ms())))
            .await;
        match result {
            Ok(Ok(_)) => {}
            Ok(Err(e)) | Err(e) => {
                warn!("could not update the knowledge of project {project}: {e}")
            }
        }
    }

    /// Has the model consolidate the project's knowledge (see
    /// [`crate::consolidate`]), inside the token budget. Whatever goes
    /// wrong, the offline items stand and it is logged.
    async fn consolidate_knowledge(
        &mut self,
        project: i64,
        session: i64,
        shutdown: &mut watch::Receiver<bool>,
    ) {
        let every = self.knowledge_every;
        let due = self
            .with_store(move |s| Ok(crate::consolidate::due(s.conn(), project, every)))
            .await;
        if !matches!(due, Ok(Ok(true))) || !self.llm_allowed(session).await {
            return;
        }
        let read = self
            .with_store(move |s| Ok(crate::consolidate::request(s.conn(), project)))
            .await;
        let (request, targets) = match read {
            Ok(Ok(r)) if !r.0.items.is_empty() => r,
            Ok(Ok(_)) => return,
            Ok(Err(e)) => return warn!("cannot read the knowledge of project {project}: {e}"),
            Err(e) => return warn!("cannot read the knowledge of project {project}: {e}"),
        };
        let limit = Duration::from_millis(self.limits.lease_ms as u64);
        let compressor = self.compressor.clone();
        let Some(outcome) = consolidate(compressor, request, limit, shutdown).await else {
            return warn!("knowledge of project {project}: the model did not answer in time");
        };
        let calls = ledger_rows(&outcome.calls, Some(project), session, now_ms());
        let rows = outcome
            .revisions
            .as_ref()
            .ok()
            .map(|revs| crate::consolidate::revision_rows(revs, &targets));
        let stored = self
            .with_store(move |s| Ok(store_consolidation(s, &calls, project, rows.as_deref())))
            .await
            .and_then(|r| r);
        match (stored, outcome.revisions) {
            (Ok(Some(n)), Ok(revs)) => info!(
                "knowledge of project {project} consolidated by {}: {} revisions, {n} items{}",
                self.compressor.provider(),
                revs.len(),
                match outcome.withheld {
                    0 => String::new(),
                    w => format!(", {w} withheld (they addressed the agent)"),
                }
            ),
            (_, Err(e)) => {
                warn!(
                    "knowledge of project {project}: the model's answer is not used ({e}); the offline items stand"
                )
            }
            (Err(e), _) => warn!("could not store the knowledge of project {project}: {e}"),
            (Ok(None), Ok(_)) => {}
        }
    }

    /// Makes the lease's Codex tool calls that exited non-zero failures,
    /// in the store first and then in the lease, so that the compressor,
    /// the stored events and the gotchas agree. When the store cannot take
    /// it, the lease stays as captured.
    async fn record_codex_failures(&mut self, lease: &mut Lease) {
        if lease.turn.platform != "codex" || lease.turn.transcript_path.is_none() {
            return;
        }
        let (exits, copy) = (self.exits.clone(), lease.clone());
        let failures = tokio::task::spawn_blocking(move || exits.failures(&copy))
            .await
            .unwrap_or_default();
        if failures.is_empty() {
            return;
        }
        let to_store = failures.clone();
        match self
            .with_store(move |s| s.record_tool_failures(&to_store))
            .await
        {
            Ok(_) => crate::exits::apply(lease, &failures),
            Err(e) => warn!(
                "turn {} of session {}: could not record {} failed Codex calls ({e})",
                lease.turn.prompt_number,
                lease.turn.platform_session_id,
                failures.len()
            ),
        }
    }

    /// The partial summaries the turn's earlier pieces left (none when they
    /// cannot be read: the summary then covers this piece only).
    /// The why of a turn whose transcript is not read, from what its hooks
    /// reported the agent said or thought (Cursor's thinking blocks).
    async fn told_by_hooks(&mut self, lease: &Lease) -> Option<Told> {
        let (session, prompt) = (lease.turn.session_id, lease.turn.prompt_number);
        match self
            .with_store(move |s| s.turn_notes(session, prompt))
            .await
        {
            Ok(notes) => crate::narrative::from_notes(&notes, &lease.events),
            Err(e) => {
                warn!("cannot read the notes of turn {prompt} ({e}); summarizing without them");
                None
            }
        }
    }

    async fn earlier_pieces(&mut self, lease: &Lease) -> Vec<SummaryDraft> {
        let (session, prompt) = (lease.turn.session_id, lease.turn.prompt_number);
        match self
            .with_store(move |s| s.turn_pieces(session, prompt))
            .await
        {
            Ok(pieces) => pieces.into_iter().map(draft_of_piece).collect(),
            Err(e) => {
                warn!(
                    "cannot read the earlier pieces of turn {prompt} ({e}); summarizing the last one only"
                );
                Vec::new()
            }
        }
    }

    async fn fail(&mut self, lease: Lease, message: String) {
        let max_attempts = self.max_attempts;
        let attempts = lease.events.iter().map(|e| e.attempts).max().unwrap_or(0);
        warn!(
            "turn {} of session {} failed (attempt {attempts} of {max_attempts}): {message}",
            lease.turn.prompt_number, lease.turn.platform_session_id
        );
        let result = self
            .with_store(move |s| s.fail_lease(&lease, &message, now_ms(), max_attempts))
            .await;
        if let Err(e) = result {
            error!("could not record the failure ({e}); the lease expires and is retried");
        }
    }

    /// Checks the budgets; records and reports a change of state.
    async fn llm_allowed(&mut self, session_id: i64) -> bool {
        if self.compressor.provider() == "offline" {
            return true;
        }
        let budget = self.app.config.budget.clone();
        let exhausted = match self
            .with_store(move |s| s.budget_exhausted(&budget, Some(session_id), now_ms()))
            .await
        {
            Ok(e) => e,
            Err(e) => {
                // Without the ledger we cannot know the spend: stay offline.
                warn!("cannot read the cost ledger ({e}); compressing offline");
                return false;
            }
        };
        self.note_budget(exhausted.as_ref());
        exhausted.is_none()
    }

    fn note_budget(&mut self, exhausted: Option<&Exhausted>) {
        let changed = {
            let Ok(mut state) = self.app.budget.lock() else {
                return;
            };
            let changed = state.as_ref().map(|e| (e.scope, e.session_id))
                != exhausted.map(|e| (e.scope, e.session_id));
            *state = exhausted.cloned();
            changed
        };
        if !changed {
            return;
        }
        match exhausted {
            Some(e) => warn!("{}", e.describe()),
            None => info!("token budget available again; using {}", self.app.provider),
        }
        self.info.budget_exhausted = exhausted.map(ExhaustedInfo::from);
        if let Err(e) = crate::info::write(&self.app.data, &self.info) {
            warn!("could not update worker.json: {e}");
        }
    }

    /// Sends what was stored to `/api/stream` subscribers, read back as
    /// every other interface shows it.
    async fn publish(&mut self, stored: Stored) {
        if self.app.stream.receiver_count() == 0 {
            return;
        }
        let path = self.app.data.db_path();
        let read = self
            .with_store(move |s| {
                let conn = s.conn();
                let sql = |source| StoreError::Sqlite {
                    path: path.clone(),
                    source,
                };
                let mut events = Vec::new();
                for id in &stored.observation_ids {
                    if let Some(o) = shape::observation(conn, *id).map_err(sql)? {
                        events.push(("observation", serde_json::to_value(o)));
                    }
                }
                if let Some(id) = stored.summary_id
                    && let Some(m) = shape::summary(conn, id).map_err(sql)?
                {
                    events.push(("summary", serde_json::to_value(m)));
                }
                Ok(events)
            })
            .await;
        let events = match read {
            Ok(events) => events,
            Err(e) => {
                warn!("could not read back what was stored for the stream: {e}");
                return;
            }
        };
        for (kind, data) in events {
            if let Ok(data) = data {
                let _ = self.app.stream.send(StreamEvent {
                    kind,
                    data: Arc::new(data),
                });
            }
        }
    }
}

/// Compresses on its own task, so that shutdown or a hung provider can
/// abort it (dropping the future, and with it any child process).
async fn compress(
    compressor: Arc<Compressor>,
    batch: TurnBatch,
    llm_allowed: bool,
    limit: Duration,
    shutdown: &mut watch::Receiver<bool>,
) -> Result<Outcome, Interrupted> {
    let mut task = tokio::spawn(async move { compressor.compress(&batch, llm_allowed).await });
    tokio::select! {
        joined = &mut task => joined.map_err(|e| {
            let message = if e.is_panic() {
                let panic = e.into_panic();
                panic
                    .downcast_ref::<String>()
                    .cloned()
                    .or_else(|| panic.downcast_ref::<&str>().map(|s| (*s).to_owned()))
                    .unwrap_or_else(|| "unknown panic".to_owned())
            } else {
                e.to_string()
            };
            Interrupted::Failed(format!("compressor panicked: {message}"))
        }),
        _ = stopped(shutdown) => {
            task.abort();
            let _ = task.await;
            Err(Interrupted::Shutdown)
        }
        _ = tokio::time::sleep(limit) => {
            task.abort();
            let _ = task.await;
            Err(Interrupted::Failed(format!(
                "compression did not finish within the lease ({} s, worker.lease_secs)",
                limit.as_secs()
            )))
        }
    }
}

/// The cost ledger's rows for `calls` made for a session of a project.
fn ledger_rows(calls: &[LlmCall], project: Option<i64>, session: i64, now: i64) -> Vec<NewLlmCall> {
    calls
        .iter()
        .map(|c| NewLlmCall {
            provider: c.provider.clone(),
            model: c.model.clone(),
            purpose: c.purpose.clone(),
            project_id: project,
            session_id: Some(session),
            input_tokens: c.input_tokens,
            output_tokens: c.output_tokens,
            duration_ms: c.duration_ms,
            ok: c.ok,
            error: c.error.clone(),
            created_at: now,
        })
        .collect()
}

/// Writes a consolidation's calls to the ledger and, for a usable answer,
/// its revisions with the knowledge they revise; the number of items.
fn store_consolidation(
    store: &mut Store,
    calls: &[NewLlmCall],
    project: i64,
    rows: Option<&[mnemo_store::knowledge::KnowledgeItem]>,
) -> Result<Option<usize>, String> {
    for c in calls {
        mnemo_store::ledger::insert_call(store.conn(), c).map_err(|e| e.to_string())?;
    }
    rows.map(|rows| crate::knowledge::refresh_with(store.conn(), project, rows, now_ms()))
        .transpose()
}

/// Asks the model to consolidate knowledge, within `limit`; None on
/// shutdown or when the limit passes (the call is dropped).
async fn consolidate(
    compressor: Arc<Compressor>,
    request: KnowledgeRequest,
    limit: Duration,
    shutdown: &mut watch::Receiver<bool>,
) -> Option<KnowledgeOutcome> {
    let mut task = tokio::spawn(async move { compressor.consolidate(&request).await });
    tokio::select! {
        joined = &mut task => joined.ok(),
        _ = stopped(shutdown) => {
            task.abort();
            None
        }
        _ = tokio::time::sleep(limit) => {
            task.abort();
            None
        }
    }
}

enum Interrupted {
    Shutdown,
    Failed(String),
}

/// Resolves once shutdown is requested.
pub async fn stopped(shutdown: &mut watch::Receiver<bool>) {
    let _ = shutdown.wait_for(|stop| *stop).await;
}

/// Sleeps; true when shutdown was requested meanwhile.
async fn sleep_or_shutdown(duration: Duration, shutdown: &mut watch::Receiver<bool>) -> bool {
    tokio::select! {
        _ = tokio::time::sleep(duration) => false,
        _ = stopped(shutdown) => true,
    }
}

/// The compressor's view of a lease.
pub fn build_batch(lease: &Lease) -> TurnBatch {
    let turn = &lease.turn;
    let has_content = !lease.events.is_empty() || turn.prompt.is_some();
    TurnBatch {
        project_root: turn.project_root.clone().unwrap_or_default(),
        project_name: turn.project_name.clone().unwrap_or_default(),
        session_id: turn.session_id,
        prompt_number: turn.prompt_number,
        prompt: turn.prompt.clone(),
        events: lease.events.iter().map(batch_event).collect(),
        last_assistant_message: lease.last_assistant_message(),
        turn_complete: lease.turn_complete && has_content,
        narrative: None,
        earlier_pieces: Vec::new(),
    }
}

/// The why of the lease's turn from the host's transcript (a file read,
/// so on a blocking thread); None when there is none to read.
async fn read_narrative(narratives: Arc<Narratives>, lease: &Lease) -> Option<Told> {
    lease.turn.transcript_path.as_ref()?;
    let lease = lease.clone();
    tokio::task::spawn_blocking(move || narratives.for_lease(&lease))
        .await
        .ok()
        .flatten()
}

fn json_or_text(text: &str) -> serde_json::Value {
    serde_json::from_str(text).unwrap_or_else(|_| serde_json::Value::String(text.to_owned()))
}

fn batch_event(e: &QueuedEvent) -> BatchEvent {
    BatchEvent {
        id: e.id,
        tool_use_id: e.tool_use_id.clone(),
        tool_name: e.tool_name.clone().unwrap_or_default(),
        failed: e.kind == "tool_failure",
        input: e
            .input
            .as_deref()
            .map_or(serde_json::Value::Null, json_or_text),
        response: e.response.as_deref().map(json_or_text),
        error: e.error.clone(),
        files_read: e.files_read.clone(),
        files_modified: e.files_modified.clone(),
        note: e.note.clone(),
        created_at: e.created_at,
    }
}

/// A piece's partial summary, as the store keeps it.
fn piece_of_draft(s: &SummaryDraft) -> PieceSummary {
    PieceSummary {
        request: s.request.clone(),
        investigated: s.investigated.clone(),
        learned: s.learned.clone(),
        completed: s.completed.clone(),
        next_steps: s.next_steps.clone(),
        notes: s.notes.clone(),
    }
}

/// A stored piece's partial summary, as the compressor takes it.
fn draft_of_piece(p: PieceSummary) -> SummaryDraft {
    SummaryDraft {
        request: p.request,
        investigated: p.investigated,
        learned: p.learned,
        completed: p.completed,
        next_steps: p.next_steps,
        notes: p.notes,
    }
}

/// The rows a compressed lease becomes, with uids derived from the lease so
/// that doing the same batch twice stores it once.
pub fn batch_result(lease: &Lease, outcome: &Outcome, now: i64) -> BatchResult {
    let turn = &lease.turn;
    // A turn without tool calls (only its end) is dated by its end: an
    // imported session's records carry its time, never the import's.
    let latest = |events: &[QueuedEvent]| events.iter().map(|e| e.created_at).max();
    let happened_at = latest(&lease.events)
        .or_else(|| latest(&lease.turn_ends))
        .unwrap_or(now);
    let ended_at = latest(&lease.turn_ends).unwrap_or(happened_at);
    let source = if outcome.source.is_empty() {
        "offline".to_owned()
    } else {
        outcome.source.clone()
    };
    let observations = outcome
        .observations
        .iter()
        .enumerate()
        .map(|(n, d)| NewObservation {
            uid: lease.observation_uid(n),
            project_id: turn.project_id,
            session_id: Some(turn.session_id),
            prompt_number: Some(turn.prompt_number),
            kind: if d.kind.is_empty() {
                "change".to_owned()
            } else {
                d.kind.clone()
            },
            title: d.title.clone(),
            subtitle: d.subtitle.clone(),
            narrative: d.narrative.clone(),
            facts: d.facts.clone(),
            concepts: d.concepts.clone(),
            files_read: d.files_read.clone(),
            files_modified: d.files_modified.clone(),
            source: source.clone(),
            created_at: happened_at,
        })
        .collect();
    let summary = outcome
        .summary
        .as_ref()
        .filter(|_| lease.turn_complete)
        .map(|s| NewSummary {
            uid: lease.summary_uid(),
            project_id: turn.project_id,
            session_id: Some(turn.session_id),
            prompt_number: Some(turn.prompt_number),
            request: s.request.clone(),
            investigated: s.investigated.clone(),
            learned: s.learned.clone(),
            completed: s.completed.clone(),
            next_steps: s.next_steps.clone(),
            notes: s.notes.clone(),
            source: source.clone(),
            created_at: ended_at,
        });
    let piece = outcome
        .piece_summary
        .as_ref()
        .filter(|_| !lease.turn_complete)
        .map(|s| NewPiece {
            uid: lease.piece_uid(),
            session_id: turn.session_id,
            prompt_number: turn.prompt_number,
            summary: piece_of_draft(s),
            created_at: happened_at,
        });
    let calls = ledger_rows(&outcome.calls, turn.project_id, turn.session_id, now);
    BatchResult {
        observations,
        summary,
        piece,
        calls,
    }
}
