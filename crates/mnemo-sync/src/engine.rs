//! One sync of this machine: refresh the spaces and keys, queue what
//! changed, push every outbox, pull every space. Each step is durable on
//! its own (the outbox, the pull cursor, the applied versions), so a sync
//! killed anywhere resumes where it stopped and nothing is applied twice.

use std::collections::HashMap;

use mnemo_core::privacy::Sanitizer;
use mnemo_store::Store;
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
}

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
        let mut queued = 0;
        for (kind, uid) in changes {
            queued += queue.one(&kind, &uid)?;
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
            self.apply_page(space, &page.records, report)?;
            local::set_pull_after(self.store.conn(), space.space_id, last)?;
            after = last;
            if !page.more {
                return Ok(());
            }
        }
    }

    /// Opens and applies one page of pulled blobs, then records them as
    /// seen; a blob that fails any check is refused and counted.
    fn apply_page(
        &mut self,
        space: &Space,
        records: &[PulledRecord],
        report: &mut Report,
    ) -> anyhow::Result<()> {
        let mut seen: HashMap<i64, i64> = HashMap::new();
        let mut versions = Vec::new();
        for record in records {
            let last = match seen.get(&record.device_id) {
                Some(s) => *s,
                None => local::seen(self.store.conn(), space.space_id, record.device_id)?,
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
            match self.open_record(space.space_id, record) {
                Some(v) => {
                    seen.insert(record.device_id, record.seq);
                    versions.push(v);
                }
                None => report.refused += 1,
            }
        }
        self.apply_versions(space, versions, report)?;
        let conn = self.store.conn();
        for (device, seq) in seen {
            local::set_seen(conn, space.space_id, device, seq)?;
        }
        Ok(())
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

    fn apply_versions(
        &mut self,
        space: &Space,
        versions: Vec<Version>,
        report: &mut Report,
    ) -> anyhow::Result<()> {
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
        self.insert_fresh(space.space_id, fresh, report)
    }

    fn insert_fresh(
        &mut self,
        space: i64,
        fresh: Vec<(Version, Value)>,
        report: &mut Report,
    ) -> anyhow::Result<()> {
        let bodies = fresh
            .iter()
            .map(|(v, body)| {
                let mut body = body.clone();
                body["kind"] = Value::String(v.kind.clone());
                body
            })
            .collect();
        version::insert(self.store, bodies, self.sanitizer)?;
        for (v, _) in &fresh {
            self.settle(space, v)?;
        }
        report.applied += fresh.len();
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
            version::read(conn, &v.kind, &v.uid)?
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
    /// Queues the current version of one changed record (after a `moved`
    /// marker in its old space when it changed space); 0 when unchanged.
    fn one(&mut self, kind: &str, uid: &str) -> anyhow::Result<usize> {
        let conn = self.conn;
        let known = local::known(conn, uid)?;
        let current = version::read(conn, kind, uid)?;
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
