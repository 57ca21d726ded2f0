//! The background worker: turns captured events into observations and
//! summaries, and serves the local HTTP API and live stream.
//!
//! One worker per data directory ([`lock`]); clients find it through
//! `worker.json` ([`info`]) and talk to it over loopback HTTP ([`api`];
//! [`client`] is the CLI's side). [`service`] runs the process from start to
//! exit; [`drain`] moves the durable queue through the compressor into the
//! store, within the token budgets, with the why of each turn read from the
//! host's transcript by [`narrative`] and a Codex command's exit code from
//! its rollout by [`exits`]; [`knowledge`] keeps each project's knowledge
//! items, which [`consolidate`] has the model revise when one is configured;
//! [`logging`] writes the rotating log;
//! [`orphans`] ends what a killed predecessor left running.
//! [`viewer`] is the web viewer's pages and sign-in. [`sync`] syncs the
//! memory with the sync server in the background. [`embed`] computes the
//! vectors of search by meaning in the background, when configured.
//! [`probe`] answers "is a worker running, and is it healthy?" for the CLI
//! and `doctor`.

pub mod api;
pub mod client;
pub mod consolidate;
pub mod drain;
pub mod embed;
pub mod exits;
pub mod info;
#[cfg(windows)]
pub mod job;
pub mod knowledge;
mod last_read;
pub mod lock;
pub mod logging;
mod manifest;
pub mod narrative;
pub mod orphans;
mod readme;
pub mod service;
pub mod sync;
pub mod viewer;

use std::time::Duration;

use mnemo_core::DataDir;

pub use info::WorkerInfo;
pub use service::{RunError, run};

/// What a look at the data directory says about its worker.
#[derive(Debug, Clone)]
pub enum Liveness {
    /// Nobody holds the lock. `stale_info` when a `worker.json` was left
    /// behind by a worker that was killed.
    NotRunning { stale_info: bool },
    /// The lock is held but `worker.json` is not there (yet).
    Starting,
    /// The lock is held; `health` is the answer of `/api/health` or why
    /// there was none.
    Running {
        info: Box<WorkerInfo>,
        health: Result<serde_json::Value, String>,
    },
}

/// Looks at the lock, `worker.json` and `/api/health`.
pub fn probe(data: &DataDir, timeout: Duration) -> std::io::Result<Liveness> {
    if !lock::is_held(&data.worker_lock_path())? {
        return Ok(Liveness::NotRunning {
            stale_info: data.worker_info_path().exists(),
        });
    }
    let Some(info) = info::read(data) else {
        return Ok(Liveness::Starting);
    };
    let health = client::request(info.port, "GET", "/api/health", None, None, timeout)
        .map_err(|e| format!("no answer on 127.0.0.1:{}: {e}", info.port))
        .and_then(|r| {
            if r.status == 200 {
                r.json()
                    .ok_or_else(|| "health answer is not JSON".to_owned())
            } else {
                Err(format!("health answered {}: {}", r.status, r.body))
            }
        });
    Ok(Liveness::Running {
        info: Box::new(info),
        health,
    })
}
