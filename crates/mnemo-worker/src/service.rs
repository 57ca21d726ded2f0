//! The worker process from start to exit (`mnemo worker run`).
//!
//! Order matters and is the point of this module:
//! 1. take the one-worker lock (or say who has it);
//! 2. open the write connection and take back what a killed predecessor
//!    left leased;
//! 3. listen on 127.0.0.1 (a port taken by another program is reported as
//!    such), then write `worker.json` with a fresh token;
//! 4. run the drain, the API (its connections bounded in number and in how
//!    long a client may take to ask, see [`api::conn`]), the idle watcher and
//!    the signal watcher until one of them asks to stop;
//! 5. stop the drain first (it gives back or finishes its batch, and its
//!    compression, with any child process, is dropped), then the server
//!    (the live streams end by themselves), then remove `worker.json`, and
//!    only then release the lock, so that a successor never sees our file.

use std::net::{Ipv4Addr, TcpListener};
use std::sync::atomic::{AtomicI64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use mnemo_compress::Compressor;
use mnemo_core::time::{format_rfc3339, now_ms};
use mnemo_core::{Config, DataDir};
use mnemo_store::Store;
use tokio::sync::{broadcast, watch};
use tracing::{error, info, warn};

use crate::api::{self, AppState, DbPool, Shared};
use crate::drain::Drain;
use crate::info::{self, WorkerInfo};
use crate::{lock, logging, orphans};

/// Why the worker did not run.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error("a worker is already running for {data_dir}{}", describe_running(*pid, *port))]
    AlreadyRunning {
        data_dir: String,
        pid: Option<u32>,
        port: Option<u16>,
    },
    #[error(
        "127.0.0.1:{port} is already in use by another program (maybe a worker of another data \
         directory); set MNEMO_PORT or [worker] port in config.toml to a free port (0 picks one)"
    )]
    PortInUse { port: u16 },
    #[error("{0}")]
    Setup(String),
}

fn describe_running(pid: Option<u32>, port: Option<u16>) -> String {
    match (pid, port) {
        (Some(pid), Some(port)) => {
            format!(" (pid {pid}, port {port}); `mnemo worker status` tells more")
        }
        _ => " (it is starting, or its worker.json is missing); `mnemo worker status` tells more"
            .to_owned(),
    }
}

fn setup<E: std::fmt::Display>(what: &str) -> impl FnOnce(E) -> RunError + '_ {
    move |e| RunError::Setup(format!("{what}: {e}"))
}

/// Runs the worker in this process until it is stopped or idle.
pub fn run(data: &DataDir, config: Config, warnings: &[String]) -> Result<(), RunError> {
    data.ensure()
        .map_err(setup("cannot use the data directory"))?;
    let log_path = data.log_dir().join(logging::WORKER_LOG_FILE);
    logging::init(
        &log_path,
        config.worker.log_max_bytes,
        config.worker.log_keep.min(100) as u32,
    )
    .map_err(setup("cannot open the log file"))?;

    let Some(lock) = lock::acquire_within(&data.worker_lock_path(), Duration::from_millis(300))
        .map_err(setup("cannot open the worker lock"))?
    else {
        let running = info::read(data);
        return Err(RunError::AlreadyRunning {
            data_dir: data.root().display().to_string(),
            pid: running.as_ref().map(|i| i.pid),
            port: running.as_ref().map(|i| i.port),
        });
    };
    for w in warnings {
        warn!("config: {w}");
    }
    // Holding the lock, any worker.json here is a dead predecessor's: end
    // what it left running, and mark what this worker will start.
    let started_at_ms = now_ms();
    let instance = orphans::new_instance(std::process::id(), started_at_ms);
    if let Some(previous) = info::read(data) {
        let ended = orphans::end_descendants_of(&previous.instance);
        if ended > 0 {
            warn!(
                "ended {ended} processes left running by worker {} (killed without cleanup)",
                previous.pid
            );
        }
    }
    orphans::mark_descendants(&instance);
    #[cfg(windows)]
    if let Err(e) = crate::job::contain_descendants() {
        warn!("cannot put the worker in a job object ({e}); a provider's processes may outlive it");
    }

    // Dates in API answers are local; the offset can only be read while
    // this process has one thread.
    mnemo_recall::when::remember_local_offset();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        // Two threads are plenty for a loopback API and one drain, and
        // keep the idle footprint small.
        .worker_threads(2)
        .max_blocking_threads(8)
        .thread_name("mnemo-worker")
        .enable_all()
        .build()
        .map_err(setup("cannot start the async runtime"))?;
    let result = runtime.block_on(serve(data, config, &log_path, instance, started_at_ms));
    // Anything still running (a stuck connection) is dropped here.
    runtime.shutdown_timeout(Duration::from_secs(2));
    end_own_process_group();
    info::remove_if_ours(data, std::process::id());
    match &result {
        Ok(()) => info!("worker stopped"),
        Err(e) => error!("worker failed: {e}"),
    }
    drop(lock);
    result
}

async fn serve(
    data: &DataDir,
    config: Config,
    log_path: &std::path::Path,
    instance: String,
    started_at_ms: i64,
) -> Result<(), RunError> {
    let (compressor, provider_error) = compressor_or_offline(&config);
    let busy = Duration::from_millis(config.store.busy_timeout_ms);
    let store = open_store(data.db_path(), busy).await?;
    let (listener, port) = listen(config.worker.port)?;
    let token = info::new_token().map_err(setup("cannot make an API token"))?;

    let (shutdown, _) = watch::channel(false);
    let (stream, _) = broadcast::channel(256);
    let app = AppState(Arc::new(Shared {
        data: data.clone(),
        pool: Arc::new(DbPool::new(data.db_path(), busy, 2)),
        token,
        port,
        pid: std::process::id(),
        started_at_ms,
        provider: compressor.provider().to_owned(),
        provider_error,
        stream,
        sse_clients: AtomicUsize::new(0),
        last_activity_ms: AtomicI64::new(started_at_ms),
        budget: Mutex::new(None),
        shutdown,
        config,
        logins: Default::default(),
    }));
    let worker_info = worker_info(&app, log_path, instance);
    info::write(data, &worker_info).map_err(setup("cannot write worker.json"))?;
    info!(
        "worker {} (pid {}) listening on 127.0.0.1:{port}, data {}, provider {}",
        env!("CARGO_PKG_VERSION"),
        app.pid,
        data.root().display(),
        app.provider
    );
    run_until_stopped(app, listener, store, compressor, worker_info).await;
    Ok(())
}

/// The configured compressor. One that cannot be set up (no API key, no
/// `claude`) must not stop the queue: compress offline and say why (stats,
/// status, doctor).
fn compressor_or_offline(config: &Config) -> (Compressor, Option<String>) {
    match Compressor::from_config(&config.provider) {
        Ok(c) => (c, None),
        Err(e) => {
            warn!(
                "provider `{}` cannot be used, compressing offline: {e}",
                config.provider.name
            );
            (Compressor::offline_only(), Some(e.to_string()))
        }
    }
}

/// Opens the write connection and takes back what a killed predecessor
/// left leased.
async fn open_store(db_path: std::path::PathBuf, busy: Duration) -> Result<Store, RunError> {
    tokio::task::spawn_blocking(move || -> Result<Store, RunError> {
        let mut store = Store::open(&db_path, busy).map_err(setup("cannot open the database"))?;
        let taken_back = store
            .reclaim_leases(now_ms(), true)
            .map_err(setup("cannot take back leased events"))?;
        if taken_back > 0 {
            info!("took back {taken_back} events that a stopped worker had leased");
        }
        Ok(store)
    })
    .await
    .map_err(setup("database task"))?
}

/// Listens on 127.0.0.1 (see [`bind`]), and the port it got.
fn listen(port: u16) -> Result<(tokio::net::TcpListener, u16), RunError> {
    let listener = bind(port)?;
    let port = listener
        .local_addr()
        .map_err(setup("cannot read the listening address"))?
        .port();
    let listener = tokio::net::TcpListener::from_std(listener).map_err(setup("cannot listen"))?;
    Ok((listener, port))
}

/// What `worker.json` says about this worker.
fn worker_info(app: &AppState, log_path: &std::path::Path, instance: String) -> WorkerInfo {
    WorkerInfo {
        pid: app.pid,
        port: app.port,
        token: app.token.clone(),
        version: env!("CARGO_PKG_VERSION").to_owned(),
        started_at: format_rfc3339(app.started_at_ms),
        started_at_ms: app.started_at_ms,
        data_dir: app.data.root().display().to_string(),
        log_file: log_path.display().to_string(),
        provider: app.provider.clone(),
        provider_error: app.provider_error.clone(),
        budget_exhausted: None,
        instance,
    }
}

/// Runs the API, the drain, the idle and signal watchers, sync and
/// embeddings until one asks to stop; then stops the drain first, then the
/// server, then the rest.
async fn run_until_stopped(
    app: AppState,
    listener: tokio::net::TcpListener,
    store: Store,
    compressor: Compressor,
    worker_info: WorkerInfo,
) {
    let mut stopped = app.shutdown.subscribe();
    let server = {
        let stopped = app.shutdown.subscribe();
        let router = api::router(app.clone());
        let limits = api::conn::Limits::from_config(&app.config.worker);
        tokio::spawn(api::conn::serve(listener, router, limits, stopped))
    };
    let drain = tokio::spawn(Drain::new(app.clone(), store, compressor, worker_info).run());
    let idle = tokio::spawn(watch_idle(app.clone()));
    let signals = tokio::spawn(watch_signals(app.clone()));
    let sync = crate::sync::spawn(app.clone())
        .inspect_err(|e| warn!("cannot start background sync: {e}"))
        .ok();
    let embed = crate::embed::spawn(app.clone());

    let _ = stopped.wait_for(|stop| *stop).await;
    info!("stopping");
    let _ = drain.await;
    if tokio::time::timeout(Duration::from_secs(3), server)
        .await
        .is_err()
    {
        warn!("HTTP connections still open after 3 s; closing them");
    }
    idle.abort();
    signals.abort();
    if let Some(sync) = sync {
        let _ = tokio::task::spawn_blocking(move || sync.join()).await;
    }
    if let Some(embed) = embed {
        let _ = tokio::task::spawn_blocking(move || embed.join()).await;
    }
}

/// Listens on `port`. The default port is only a preference: when another
/// data directory's worker (or another user's) already holds it, a free
/// port is taken instead, and clients find it in `worker.json`. A port the
/// user chose is kept to, or reported as taken.
fn bind(port: u16) -> Result<TcpListener, RunError> {
    match bind_exactly(port) {
        Err(RunError::PortInUse { .. })
            if port == mnemo_core::config::WorkerConfig::default().port =>
        {
            tracing::info!("the default port {port} is taken; listening on a free port instead");
            bind_exactly(0)
        }
        other => other,
    }
}

fn bind_exactly(port: u16) -> Result<TcpListener, RunError> {
    let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, port)).map_err(|e| {
        if e.kind() == std::io::ErrorKind::AddrInUse {
            RunError::PortInUse { port }
        } else {
            RunError::Setup(format!("cannot listen on 127.0.0.1:{port}: {e}"))
        }
    })?;
    listener
        .set_nonblocking(true)
        .map_err(setup("cannot configure the listener"))?;
    Ok(listener)
}

/// The last word on child processes. Dropping a compression kills the
/// provider's child (the compressor's job); whatever that child started in
/// turn may still be around in our process group. A worker that leads its
/// own group (started detached, which makes it a session leader, or by a
/// job-control shell) ends the group with SIGTERM on the way out, having
/// told itself to ignore it. A worker that merely joined someone else's
/// group (a supervisor, a test harness) must not signal it.
#[cfg(unix)]
fn end_own_process_group() {
    // SAFETY: getpgrp/getpid/signal/kill have no memory-safety preconditions.
    unsafe {
        if libc::getpgrp() != libc::getpid() {
            return;
        }
        libc::signal(libc::SIGTERM, libc::SIG_IGN);
        libc::kill(0, libc::SIGTERM);
    }
}

#[cfg(not(unix))]
fn end_own_process_group() {}

/// Stops the worker when it has been idle long enough (empty queue, no
/// stream subscriber, no request), or when its `worker.json` disappears
/// (the data directory was removed: nobody can reach this worker anymore).
async fn watch_idle(app: AppState) {
    let idle_ms = (app.config.worker.idle_exit_secs * 1000) as i64;
    let tick = if idle_ms > 0 && idle_ms < 4_000 {
        Duration::from_millis(250)
    } else {
        Duration::from_secs(1)
    };
    loop {
        tokio::time::sleep(tick).await;
        if !app.data.worker_info_path().exists() {
            warn!(
                "{} was removed; stopping",
                app.data.worker_info_path().display()
            );
            app.request_shutdown();
            return;
        }
        if idle_ms == 0 || app.sse_clients.load(Ordering::SeqCst) > 0 {
            continue;
        }
        let quiet_for = now_ms() - app.last_activity_ms.load(Ordering::Relaxed);
        if quiet_for < idle_ms {
            continue;
        }
        match app.db(|store| Ok(store.queue_is_empty()?)).await {
            Ok(true) => {
                info!(
                    "idle for {} s with an empty queue; exiting (the next hook starts a worker again)",
                    quiet_for / 1000
                );
                app.request_shutdown();
                return;
            }
            Ok(false) => {}
            Err(e) => warn!("cannot check the queue: {}", e.message),
        }
    }
}

/// SIGTERM, SIGINT and SIGHUP (Ctrl-C on Windows) stop the worker gracefully.
async fn watch_signals(app: AppState) {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        let (Ok(mut term), Ok(mut int), Ok(mut hup)) = (
            signal(SignalKind::terminate()),
            signal(SignalKind::interrupt()),
            signal(SignalKind::hangup()),
        ) else {
            warn!("cannot install signal handlers; stop the worker with `mnemo worker stop`");
            return;
        };
        let name = tokio::select! {
            _ = term.recv() => "SIGTERM",
            _ = int.recv() => "SIGINT",
            _ = hup.recv() => "SIGHUP",
        };
        info!("{name} received");
    }
    #[cfg(not(unix))]
    {
        if tokio::signal::ctrl_c().await.is_err() {
            return;
        }
        info!("Ctrl-C received");
    }
    app.request_shutdown();
}
