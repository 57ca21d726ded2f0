//! Background sync (see mnemo-sync), on its own thread so that the HTTP
//! calls and the store writes never hold up the API or the queue: a sync
//! soon after something changed (the store's change log is looked at every
//! few seconds) and at an interval to pull what others wrote. Nothing
//! happens on a machine not set up with `mnemo sync register` / `join`;
//! hooks never sync.

use std::time::{Duration, Instant};

use mnemo_core::privacy::Sanitizer;
use mnemo_store::Store;
use tracing::{info, warn};

use crate::api::AppState;

/// How often the change log is looked at.
const CHANGE_POLL: Duration = Duration::from_secs(5);
/// How often a full sync pulls when nothing changed here.
const PULL_INTERVAL: Duration = Duration::from_secs(60);

/// Starts the sync thread; it ends when the worker shuts down.
pub fn spawn(app: AppState) -> std::io::Result<std::thread::JoinHandle<()>> {
    std::thread::Builder::new()
        .name("sync".into())
        .spawn(move || run(app))
}

fn run(app: AppState) {
    let busy = Duration::from_millis(app.config.store.busy_timeout_ms);
    let Ok(runtime) = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    else {
        return;
    };
    let sanitizer = Sanitizer::new(&app.config.privacy);
    let ca_file = std::path::Path::new(&app.config.sync.ca_file);
    if let Err(e) = mnemo_sync::client::trust_ca_file(ca_file) {
        // Syncs go on and fail at the handshake, which `sync status` shows.
        warn!("sync: {e:#}");
    }
    let mut last_sync: Option<Instant> = None;
    while !*app.shutdown.borrow() {
        let due = last_sync.is_none_or(|at| at.elapsed() >= PULL_INTERVAL);
        match Store::open(&app.data.db_path(), busy) {
            Ok(mut store) if due || has_changes(&store) => {
                if sync_once(&runtime, &mut store, (&sanitizer, app.config.sync.raw)) {
                    last_sync = Some(Instant::now());
                } else if due {
                    // Not set up: look again at the next interval.
                    last_sync = Some(Instant::now());
                }
            }
            Ok(_) => {}
            Err(e) => warn!("sync: cannot open the database: {e}"),
        }
        sleep_unless_stopped(&app, CHANGE_POLL);
    }
}

fn has_changes(store: &Store) -> bool {
    mnemo_sync::local::pending(store.conn()).is_ok_and(|(push, changed)| push + changed > 0)
}

/// One sync; false when this machine is not set up for sync.
/// `raw`: send prompts too (`[sync] raw`).
fn sync_once(
    runtime: &tokio::runtime::Runtime,
    store: &mut Store,
    (sanitizer, raw): (&Sanitizer, bool),
) -> bool {
    let engine = match mnemo_sync::engine::Engine::open(store, sanitizer) {
        Ok(Some(engine)) => engine,
        Ok(None) => return false,
        Err(e) => {
            warn!("sync: {e:#}");
            return true;
        }
    };
    let mut engine = engine;
    engine.send_prompts(raw);
    let report = runtime.block_on(engine.run());
    if report.pushed + report.applied + report.forgotten > 0 {
        info!(
            "sync: pushed {}, applied {}, forgotten {}, refused {}",
            report.pushed, report.applied, report.forgotten, report.refused
        );
    }
    for e in &report.errors {
        warn!("sync: {e}");
    }
    true
}

fn sleep_unless_stopped(app: &AppState, total: Duration) {
    let step = Duration::from_millis(250);
    let start = Instant::now();
    while start.elapsed() < total && !*app.shutdown.borrow() {
        std::thread::sleep(step);
    }
}
