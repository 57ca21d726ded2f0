//! One sync of this machine: refresh the spaces and keys, queue what
//! changed, push every outbox, pull every space. Each step is durable on
//! its own (the outbox, the pull cursor, the applied versions), so a sync
//! killed anywhere resumes where it stopped and nothing is applied twice.

use std::collections::HashMap;

use mnemo_core::privacy::Sanitizer;
use mnemo_store::Store;
use rusqlite::{Transaction, TransactionBehavior};
use serde_json::Value;

use crate::account::Account;
use crate::client::{Client, ClientError};
use crate::crypto::{Place, SpaceKey, b64, unb64};
use crate::hlc::Hlc;
use crate::local::{self, Known, Space, key};
use crate::version::{self, FORGET, Version};
use crate::wire::{PulledRecord, Push, PushRecord};

/// Records per push request and per pull page.
const BATCH: usize = 500;
/// A version that only tells the server to drop the record's blobs in this
/// space (it moved to another space); receivers ignore it.
const MOVED: &str = "moved";

/// What one sync did.
#[derive(Debug, Default, Clone, serde::Serialize)]
pub struct Report {
    pub queued: usize,
    /// Versions waiting to be pushed once the changes were queued.
    pub waiting: usize,
    pub pushed: usize,
    pub pulled: usize,
    pub applied: usize,
    pub forgotten: usize,
    /// Blobs refused: failed authentication, replayed, or misnamed.
    pub refused: usize,
    pub errors: Vec<String>,
}

pub struct Engine<'a> {
    store: &'a mut Store,
    sanitizer: &'a Sanitizer,
    account: Account,
    client: Client,
    keys: HashMap<(i64, i64), SpaceKey>,
    clock: Hlc,
    /// Send each observation's prompt too (`[sync] raw`).
    prompts: bool,
    progress: Option<Progress<'a>>,
}

/// What is told of a sync's progress (see [`Engine::on_progress`]).
type Progress<'a> = Box<dyn FnMut(&Report) + 'a>;

impl<'a> Engine<'a> {
    /// The engine of a machine set up with `sync register` or `join`;
    /// None when it is not.
    pub fn open(
        store: &'a mut Store,
        sanitizer: &'a Sanitizer,
    ) -> anyhow::Result<Option<Engine<'a>>> {
        let Some(account) = Account::load(store.conn())? else {
            return Ok(None);
        };
        let client = account.client();
        let clock = local::get(store.conn(), key::CLOCK)?
            .and_then(|c| Hlc::parse(&c))
            .unwrap_or_default();
        let mut engine = Engine {
            store,
            sanitizer,
            account,
            client,
            keys: HashMap::new(),
            clock,
            prompts: false,
            progress: None,
        };
        engine.load_keys()?;
        Ok(Some(engine))
    }

    fn load_keys(&mut self) -> anyhow::Result<()> {
        for (space, epoch, wrapped) in local::keys(self.store.conn())? {
            let key = self.account.identity.unwrap(&wrapped)?;
            self.keys.insert((space, epoch), key);
        }
        Ok(())
    }

    /// Sends the prompt of each observation's turn with it (`[sync] raw`);
    /// by default prompts stay on this machine.
    pub fn send_prompts(&mut self, on: bool) {
        self.prompts = on;
    }

    /// Hands the report so far to `show` after each batch pushed and each
    /// page pulled (a progress bar).
    pub fn on_progress(&mut self, show: impl FnMut(&Report) + 'a) {
        self.progress = Some(Box::new(show));
    }

    fn tick(&mut self, report: &Report) {
        if let Some(show) = self.progress.as_mut() {
            show(report);
        }
    }

    /// Push, then pull, every space; problems are in the report (and in
    /// `sync status`), never lost changes.
    pub async fn run(&mut self) -> Report {
        let mut report = Report::default();
        if let Err(e) = self.refresh().await {
            report.errors.push(format!("{e:#}"));
        }
        match self.queue_changes() {
            Ok(n) => report.queued = n,
            Err(e) => report.errors.push(format!("queueing changes: {e:#}")),
        }
        report.waiting = local::pending(self.store.conn()).map_or(0, |(push, _)| push as usize);
        self.tick(&report);
        let spaces = local::spaces(self.store.conn()).unwrap_or_default();
        for space in &spaces {
            let outcome = self.sync_space(space, &mut report).await;
            self.note_outcome(space, outcome, &mut report);
        }
        // What was pulled into one space and belongs to another here (a
        // teammate's project edited from a personal machine) goes on now.
        if self.queue_changes().is_ok_and(|n| n > 0) {
            for space in &spaces {
                let outcome = self.push(space, &mut report).await;
                self.note_outcome(space, outcome, &mut report);
            }
        }
        self.finish(&report);
        report
    }

    fn note_outcome(&self, space: &Space, outcome: anyhow::Result<()>, report: &mut Report) {
        let error = outcome
            .err()
            .map(|e| format!("space {}: {e:#}", space.space_id));
        let _ = local::space_outcome(self.store.conn(), space.space_id, error.as_deref());
        report.errors.extend(error);
    }

    fn finish(&self, report: &Report) {
        let conn = self.store.conn();
        let _ = local::set(conn, key::CLOCK, &self.clock.to_string());
        match report.errors.first() {
            None => {
                let _ = local::set(
                    conn,
                    key::LAST_SYNC,
                    &mnemo_core::time::now_ms().to_string(),
                );
                let _ = local::clear(conn, key::LAST_ERROR);
            }
            Some(e) => {
                let _ = local::set(conn, key::LAST_ERROR, e);
            }
        }
    }

    async fn sync_space(&mut self, space: &Space, report: &mut Report) -> anyhow::Result<()> {
        self.push(space, report).await?;
        self.pull(space, report).await
    }

    /// Takes the spaces' current epochs and every key wrapped for this
    /// person from the server.
    pub async fn refresh(&mut self) -> anyhow::Result<()> {
        let remote = self.client.spaces().await?;
        let known = local::spaces(self.store.conn())?;
        for space in remote.spaces {
            let Some(mine) = known.iter().find(|s| s.space_id == space.space_id) else {
                // A project this person shared from another machine.
                if space.owner && space.kind == "shared" {
                    crate::account::adopt_space(
                        self.store.conn(),
                        &self.account.identity,
                        &space,
                        None,
                    )?;
                    local::enqueue_everything(self.store.conn())?;
                    self.load_keys()?;
                }
                continue;
            };
            for key in &space.keys {
                let wrapped = unb64(&key.wrapped)?;
                let opened = self.account.identity.unwrap(&wrapped)?;
                local::put_key(self.store.conn(), space.space_id, key.epoch, &wrapped)?;
                self.keys.insert((space.space_id, key.epoch), opened);
            }
            local::put_space(
                self.store.conn(),
                space.space_id,
                &mine.kind,
                None,
                space.epoch,
            )?;
        }
        Ok(())
    }

    /// Turns the change log into versions in the outboxes, in one
    /// transaction; how many were queued.
    pub fn queue_changes(&mut self) -> anyhow::Result<usize> {
        let conn = self.store.conn();
        let tx = conn.unchecked_transaction()?;
        let (changes, last) = local::changes(&tx)?;
        let mut queue = Queue {
            conn: &tx,
            spaces: local::spaces(&tx)?,
            clock: self.clock,
            device: self.account.device,
            author: &self.account.author,
        };
        let prompts = self.prompts;
        let mut queued = 0;
        for chunk in changes.chunks(BATCH) {
            let mut stored = read_chunk(&tx, chunk, prompts)?;
            for (kind, uid) in chunk {
                let current = stored.remove(&(kind.clone(), uid.clone()));
                queued += queue.one(kind, uid, current)?;
            }
        }
        let clock = queue.clock;
        local::forget_changes_up_to(&tx, last)?;
        local::set(&tx, key::CLOCK, &clock.to_string())?;
        tx.commit()?;
        self.clock = clock;
        Ok(queued)
    }

    async fn push(&mut self, space: &Space, report: &mut Report) -> anyhow::Result<()> {
        loop {
            let waiting = local::outbox(self.store.conn(), space.space_id, BATCH)?;
            if waiting.is_empty() {
                return Ok(());
            }
            let records = self.seal_all(space.space_id, &waiting)?;
            let pushed = match self.client.push(space.space_id, &Push { records }).await {
                Err(e @ ClientError::Refused { status: 409, .. })
                    if e.to_string().contains("epoch") =>
                {
                    self.refresh().await?;
                    let records = self.seal_all(space.space_id, &waiting)?;
                    self.client.push(space.space_id, &Push { records }).await?
                }
                other => other?,
            };
            local::pushed_up_to(self.store.conn(), space.space_id, pushed.head)?;
            report.pushed += waiting
                .iter()
                .filter(|(seq, ..)| *seq <= pushed.head)
                .count();
            if waiting.last().is_some_and(|(seq, ..)| *seq > pushed.head) {
                anyhow::bail!("the server stored up to {} only", pushed.head);
            }
            self.tick(report);
        }
    }

    /// The space's current epoch and key.
    fn current_key(&self, space: i64) -> anyhow::Result<(i64, &SpaceKey)> {
        let epoch = local::spaces(self.store.conn())?
            .into_iter()
            .find(|s| s.space_id == space)
            .map_or(1, |s| s.epoch);
        let key = self
            .keys
            .get(&(space, epoch))
            .ok_or_else(|| anyhow::anyhow!("no key for space {space} epoch {epoch}"))?;
        Ok((epoch, key))
    }

    fn seal_all(
        &self,
        space: i64,
        waiting: &[(i64, String, String)],
    ) -> anyhow::Result<Vec<PushRecord>> {
        let (epoch, key) = self.current_key(space)?;
        let older: Vec<&SpaceKey> = self
            .keys
            .iter()
            .filter(|((s, e), _)| *s == space && *e != epoch)
            .map(|(_, k)| k)
            .collect();
        waiting
            .iter()
            .map(|(seq, uid, plain)| {
                let record_key = key.record_key(uid);
                let place = Place {
                    space,
                    device: self.account.device,
                    seq: *seq,
                    epoch,
                    record_key: &record_key,
                };
                let blob = b64(&key.seal(&place, plain.as_bytes())?);
                Ok(PushRecord {
                    seq: *seq,
                    epoch,
                    replaces: older.iter().map(|k| k.record_key(uid)).collect(),
                    record_key,
                    blob,
                })
            })
            .collect()
    }

    async fn pull(&mut self, space: &Space, report: &mut Report) -> anyhow::Result<()> {
        let mut after = local::spaces(self.store.conn())?
            .into_iter()
            .find(|s| s.space_id == space.space_id)
            .map_or(0, |s| s.pull_after);
        loop {
            let page = self.client.pull(space.space_id, after, BATCH).await?;
            let Some(last) = page.records.last().map(|r| r.id) else {
                return Ok(());
            };
            report.pulled += page.records.len();
            self.apply_page(space, &page.records, last, report)?;
            self.tick(report);
            after = last;
            if !page.more {
                return Ok(());
            }
        }
    }

    /// Opens and applies one page of pulled blobs (a blob that fails any
    /// check is refused and counted); the page's new records, the replay
    /// floors and the pull cursor are committed together.
    fn apply_page(
        &mut self,
        space: &Space,
        records: &[PulledRecord],
        last: i64,
        report: &mut Report,
    ) -> anyhow::Result<()> {
        let (versions, seen) = self.open_page(space.space_id, records, report)?;
        let fresh = self.apply_changes(space, versions, report)?;
        self.commit_page(space, &fresh, &seen, last)?;
        report.applied += fresh.len();
        Ok(())
    }

    /// The authentic versions of a page from other devices, and the highest
    /// sequence number seen per device.
    fn open_page(
        &self,
        space: i64,
        records: &[PulledRecord],
        report: &mut Report,
    ) -> anyhow::Result<(Vec<Version>, HashMap<i64, i64>)> {
        let mut seen: HashMap<i64, i64> = HashMap::new();
        let mut versions = Vec::new();
        for record in records {
            let last = match seen.get(&record.device_id) {
                Some(s) => *s,
                None => local::seen(self.store.conn(), space, record.device_id)?,
            };
            if record.seq <= last {
                report.refused += 1;
                continue;
            }
            if record.device_id == self.account.device {
                seen.insert(record.device_id, record.seq);
                continue;
            }
            // Only an authentic blob moves the replay floor.
            match self.open_record(space, record) {
                Some(v) => {
                    seen.insert(record.device_id, record.seq);
                    versions.push(v);
                }
                None => report.refused += 1,
            }
        }
        Ok((versions, seen))
    }

    fn open_record(&self, space: i64, record: &PulledRecord) -> Option<Version> {
        let key = self.keys.get(&(space, record.epoch))?;
        let place = Place {
            space,
            device: record.device_id,
            seq: record.seq,
            epoch: record.epoch,
            record_key: &record.record_key,
        };
        let plain = key.open(&place, &unb64(&record.blob).ok()?).ok()?;
        let v: Version = serde_json::from_slice(&plain).ok()?;
        (key.record_key(&v.uid) == record.record_key).then_some(v)
    }

    /// Applies forgets and newer versions of records stored here, each
    /// through the store's curation path; the records new here, with the
    /// body to store.
    fn apply_changes(
        &mut self,
        space: &Space,
        versions: Vec<Version>,
        report: &mut Report,
    ) -> anyhow::Result<Vec<(Version, Value)>> {
        let mut fresh = Vec::new();
        for v in versions {
            if let Some(hlc) = Hlc::parse(&v.hlc) {
                self.clock = self.clock.observe(hlc);
            }
            if v.kind == MOVED {
                continue;
            }
            if v.kind == FORGET {
                report.forgotten += usize::from(version::forget(self.store, &v.uid)?);
                self.remember(space.space_id, &v, true)?;
                continue;
            }
            let known = local::known(self.store.conn(), &v.uid)?;
            if known.as_ref().is_some_and(|k| k.deleted || k.hlc >= v.hlc) {
                continue;
            }
            let Some(body) = v.body.clone() else { continue };
            let body = version::with_local_root(body, space.project_root.as_deref());
            if version::exists(self.store.conn(), &v.kind, &v.uid)? {
                version::update(self.store, &v.kind, &v.uid, &body)?;
                self.settle(space.space_id, &v)?;
                report.applied += 1;
            } else {
                fresh.push((v, body));
            }
        }
        Ok(fresh)
    }

    /// Stores a page's new records (through the local privacy rules), their
    /// authors and versions, the replay floors and the pull cursor in one
    /// transaction. The changes the triggers logged for records that stay
    /// in this space are dropped: they are not sent back; the others are
    /// relayed to their space by the next queueing.
    fn commit_page(
        &self,
        space: &Space,
        fresh: &[(Version, Value)],
        seen: &HashMap<i64, i64>,
        last: i64,
    ) -> anyhow::Result<()> {
        let conn = self.store.conn();
        let tx = Transaction::new_unchecked(conn, TransactionBehavior::Immediate)?;
        let mark = local::last_change(&tx)?;
        let bodies = fresh.iter().map(|(v, body)| {
            let mut body = body.clone();
            body["kind"] = Value::String(v.kind.clone());
            body
        });
        // Prompts that came along (their author turned `[sync] raw` on)
        // follow their observations, whose sessions they join.
        let prompts = fresh
            .iter()
            .filter(|(v, _)| v.kind == version::OBSERVATION)
            .filter_map(|(_, body)| version::prompt_of(body));
        version::insert(&tx, bodies.chain(prompts), self.sanitizer)?;
        let spaces = local::spaces(&tx)?;
        let me = (self.account.author.as_str(), self.prompts);
        let settled = settle_page(&tx, (space.space_id, &spaces), fresh, me)?;
        local::drop_changes_after(&tx, mark, &settled)?;
        for (device, seq) in seen {
            local::set_seen(&tx, space.space_id, *device, *seq)?;
        }
        local::set_pull_after(&tx, space.space_id, last)?;
        tx.commit()?;
        Ok(())
    }

    /// After applying `v`: its author, and its content as now stored (so the
    /// change the triggers logged is not sent back).
    fn settle(&mut self, space: i64, v: &Version) -> anyhow::Result<()> {
        let conn = self.store.conn();
        // Another person's record carries their name; this person's stay unmarked.
        if v.author != self.account.author {
            version::set_author(conn, &v.kind, &v.uid, Some(&v.author))?;
        }
        self.remember(space, v, false)
    }

    fn remember(&self, space: i64, v: &Version, deleted: bool) -> anyhow::Result<()> {
        let conn = self.store.conn();
        let stored = if deleted {
            None
        } else {
            version::read(conn, &v.kind, &v.uid, self.prompts)?
        };
        let known = Known {
            space,
            hlc: v.hlc.clone(),
            digest: version::digest(stored.as_ref().map(|(b, _)| b)),
            deleted,
        };
        local::put_known(conn, &v.uid, &known)?;
        Ok(())
    }
}

/// After a page's new records are stored: another person's carry their
/// name (`me` is this person, whose records stay unmarked), and each one's
/// content as now stored (as this machine would send it: with prompts or
/// not) is remembered, read back in one query per kind. The uids of the
/// records that belong to `space` (of `spaces`) here.
fn settle_page(
    conn: &rusqlite::Connection,
    (space, spaces): (i64, &[Space]),
    fresh: &[(Version, Value)],
    (me, prompts): (&str, bool),
) -> anyhow::Result<Vec<String>> {
    let mut settled = Vec::new();
    for kind in [version::OBSERVATION, version::SUMMARY] {
        let of_kind: Vec<&Version> = fresh
            .iter()
            .map(|(v, _)| v)
            .filter(|v| v.kind == kind)
            .collect();
        if of_kind.is_empty() {
            continue;
        }
        for v in of_kind.iter().filter(|v| v.author != me) {
            version::set_author(conn, kind, &v.uid, Some(&v.author))?;
        }
        let uids: Vec<&str> = of_kind.iter().map(|v| v.uid.as_str()).collect();
        let stored = version::read_many(conn, kind, &uids, prompts)?;
        for v in of_kind {
            let body = stored.get(&v.uid).map(|(b, _)| b);
            let known = Known {
                space,
                hlc: v.hlc.clone(),
                digest: version::digest(body),
                deleted: false,
            };
            local::put_known(conn, &v.uid, &known)?;
            if body.is_some_and(|b| target_space(spaces, b) == Some(space)) {
                settled.push(v.uid.clone());
            }
        }
    }
    Ok(settled)
}

/// The changed records of `chunk` still stored, by kind and uid: one query
/// per kind.
fn read_chunk(
    conn: &rusqlite::Connection,
    chunk: &[(String, String)],
    prompts: bool,
) -> anyhow::Result<HashMap<(String, String), version::Stored>> {
    let mut found = HashMap::new();
    for kind in [version::OBSERVATION, version::SUMMARY] {
        let uids: Vec<&str> = chunk
            .iter()
            .filter(|(k, _)| k == kind)
            .map(|(_, u)| u.as_str())
            .collect();
        if uids.is_empty() {
            continue;
        }
        for (uid, stored) in version::read_many(conn, kind, &uids, prompts)? {
            found.insert((kind.to_owned(), uid), stored);
        }
    }
    Ok(found)
}

/// The space a record goes to: its project's shared space, else the
/// personal one.
fn target_space(spaces: &[Space], body: &Value) -> Option<i64> {
    let root = version::project_root(body);
    spaces
        .iter()
        .find(|s| s.project_root.is_some() && s.project_root.as_deref() == root)
        .or_else(|| spaces.iter().find(|s| s.kind == "personal"))
        .map(|s| s.space_id)
}

/// Queues versions of changed records, each under its space's next
/// sequence number.
struct Queue<'q> {
    conn: &'q rusqlite::Connection,
    spaces: Vec<Space>,
    clock: Hlc,
    device: i64,
    author: &'q str,
}

impl Queue<'_> {
    /// Queues `current`, the version of one changed record as stored now
    /// (None: gone), after a `moved` marker in its old space when it changed
    /// space; 0 when unchanged.
    fn one(
        &mut self,
        kind: &str,
        uid: &str,
        current: Option<version::Stored>,
    ) -> anyhow::Result<usize> {
        let known = local::known(self.conn, uid)?;
        let Some((body, author)) = current else {
            return match known {
                Some(k) if !k.deleted => self.version(k.space, uid, FORGET, None, None),
                _ => Ok(0),
            };
        };
        let target = target_space(&self.spaces, &body);
        let Some(target) = target else { return Ok(0) };
        let digest = version::digest(Some(&body));
        if known
            .as_ref()
            .is_some_and(|k| k.digest == digest && k.space == target)
        {
            return Ok(0);
        }
        let mut queued = 0;
        if let Some(k) = known.as_ref().filter(|k| k.space != target && !k.deleted) {
            queued += self.version(k.space, uid, MOVED, None, None)?;
        }
        // Content that only changes space (a version applied from another
        // space is relayed) keeps its clock: it is not a new edit.
        let relayed = known.filter(|k| k.digest == digest).map(|k| k.hlc);
        let v = self.stamp(uid, kind, Some(body), author, relayed);
        queued += self.queue(target, v)?;
        Ok(queued)
    }

    /// A version of `uid` under a new tick of the clock (or `hlc`).
    fn stamp(
        &mut self,
        uid: &str,
        kind: &str,
        body: Option<Value>,
        author: Option<String>,
        hlc: Option<String>,
    ) -> Version {
        let hlc = hlc.unwrap_or_else(|| {
            self.clock = self.clock.tick(mnemo_core::time::now_ms(), self.device);
            self.clock.to_string()
        });
        Version {
            uid: uid.to_owned(),
            kind: kind.to_owned(),
            hlc,
            author: author.unwrap_or_else(|| self.author.to_owned()),
            body,
        }
    }

    fn version(
        &mut self,
        space: i64,
        uid: &str,
        kind: &str,
        body: Option<Value>,
        author: Option<String>,
    ) -> anyhow::Result<usize> {
        let v = self.stamp(uid, kind, body, author, None);
        self.queue(space, v)
    }

    /// Puts `v` in `space`'s outbox and remembers it as the latest version.
    fn queue(&mut self, space: i64, v: Version) -> anyhow::Result<usize> {
        local::queue(self.conn, space, &v.uid, &serde_json::to_string(&v)?)?;
        if v.kind != MOVED {
            let known = Known {
                space,
                digest: version::digest(v.body.as_ref()),
                deleted: v.kind == FORGET,
                hlc: v.hlc,
            };
            local::put_known(self.conn, &v.uid, &known)?;
        }
        Ok(1)
    }
}
