//! `mnemo worker start|stop|status|restart|run|retry`.
//!
//! `run` is the worker itself, in the foreground (what `start` and the hooks
//! spawn detached). The other commands find the worker through its lock and
//! `worker.json` and talk to it over its loopback API; `retry` works on the
//! database directly, so it needs no running worker.

use std::process::Child;
use std::time::{Duration, Instant};

use anyhow::{Context as _, Result, bail};
use mnemo_core::{Config, DataDir};
use mnemo_store::queue::RetrySelection;
use mnemo_worker::{Liveness, WorkerInfo, client, info, probe};
use serde_json::json;

use crate::cli::{WorkerArgs, WorkerCommand};
use crate::output::{data_and_config, open_store};

pub fn run(args: WorkerArgs) -> Result<i32> {
    match args.command {
        WorkerCommand::Run => run_here(),
        WorkerCommand::Start { timeout } => {
            let (data, _config) = data_and_config()?;
            start(&data, Duration::from_secs(timeout))
        }
        WorkerCommand::Stop { timeout } => {
            let data = DataDir::resolve()?;
            stop(&data, Duration::from_secs(timeout))
        }
        WorkerCommand::Restart { timeout } => {
            let (data, _config) = data_and_config()?;
            stop(&data, Duration::from_secs(timeout))?;
            start(&data, Duration::from_secs(timeout))
        }
        WorkerCommand::Status { json } => status(json),
        WorkerCommand::Retry { all, ids } => retry(all, &ids),
    }
}

/// The worker in this process. The configuration is read leniently, like
/// hooks read it: a worker spawned by a hook must not refuse to run over a
/// typo (the warnings go to its log).
fn run_here() -> Result<i32> {
    let data = DataDir::resolve()?;
    let loaded = Config::load_lenient(&data.config_path());
    match mnemo_worker::run(&data, loaded.config, &loaded.warnings) {
        Ok(()) => Ok(0),
        Err(e) => {
            crate::output::error(&e.to_string());
            Ok(1)
        }
    }
}

pub(crate) const PROBE_TIMEOUT: Duration = Duration::from_secs(2);

fn log_path(data: &DataDir) -> std::path::PathBuf {
    data.log_dir().join(mnemo_worker::logging::WORKER_LOG_FILE)
}

/// The last lines of the worker log, to show with a start-up failure.
fn log_tail(data: &DataDir, lines: usize) -> String {
    let text = std::fs::read_to_string(log_path(data)).unwrap_or_default();
    let all: Vec<&str> = text.lines().collect();
    all[all.len().saturating_sub(lines)..].join("\n  ")
}

fn start(data: &DataDir, timeout: Duration) -> Result<i32> {
    if let Liveness::Running {
        info,
        health: Ok(_),
    } = probe(data, PROBE_TIMEOUT)?
    {
        println!(
            "worker already running (pid {}, port {}, data {})",
            info.pid,
            info.port,
            data.root().display()
        );
        return Ok(0);
    }
    let mut child = mnemo_capture::worker_start::spawn_detached(data)
        .context("cannot spawn `mnemo worker run`")?;
    let info = wait_until_healthy(data, &mut child, timeout)?;
    println!(
        "worker started (pid {}, port {}, data {}, log {})",
        info.pid,
        info.port,
        data.root().display(),
        info.log_file
    );
    Ok(0)
}

pub(crate) fn wait_until_healthy(
    data: &DataDir,
    child: &mut Child,
    timeout: Duration,
) -> Result<WorkerInfo> {
    let deadline = Instant::now() + timeout;
    loop {
        if let Some(exit) = child.try_wait()? {
            // Lost a race with a worker a hook started? Then that one is fine.
            if let Liveness::Running {
                info,
                health: Ok(_),
            } = probe(data, PROBE_TIMEOUT)?
            {
                return Ok(*info);
            }
            bail!(
                "the worker exited at start-up ({exit}); its log {} ends with:\n  {}",
                log_path(data).display(),
                log_tail(data, 5)
            );
        }
        if let Some(info) = info::read(data).filter(|i| i.pid == child.id()) {
            let health =
                client::request(info.port, "GET", "/api/health", None, None, PROBE_TIMEOUT);
            if health.is_ok_and(|r| r.status == 200) {
                return Ok(info);
            }
        }
        if Instant::now() >= deadline {
            bail!(
                "the worker (pid {}) did not answer within {} s; see its log {}",
                child.id(),
                timeout.as_secs(),
                log_path(data).display()
            );
        }
        std::thread::sleep(Duration::from_millis(25));
    }
}

pub(crate) fn stop(data: &DataDir, timeout: Duration) -> Result<i32> {
    let deadline = Instant::now() + timeout;
    let info = loop {
        match probe(data, PROBE_TIMEOUT)? {
            Liveness::NotRunning { stale_info } => {
                if stale_info {
                    let _ = std::fs::remove_file(data.worker_info_path());
                }
                println!("worker not running");
                return Ok(0);
            }
            Liveness::Running { info, .. } => break info,
            Liveness::Starting if Instant::now() < deadline => {
                std::thread::sleep(Duration::from_millis(50));
            }
            Liveness::Starting => bail!(
                "a worker holds {} but wrote no worker.json; see {}",
                data.worker_lock_path().display(),
                log_path(data).display()
            ),
        }
    };
    let asked = client::call(&info, "POST", "/api/shutdown", None, PROBE_TIMEOUT)
        .is_ok_and(|r| r.status == 202);
    if !asked {
        terminate(info.pid);
    }
    while mnemo_worker::lock::is_held(&data.worker_lock_path())? {
        if Instant::now() >= deadline {
            bail!(
                "the worker (pid {}) did not stop within {} s; see {}, or kill it (`kill -9 {}`): \
                 nothing is lost, the next worker takes its batch back",
                info.pid,
                timeout.as_secs(),
                log_path(data).display(),
                info.pid
            );
        }
        std::thread::sleep(Duration::from_millis(25));
    }
    println!("worker stopped (pid {})", info.pid);
    Ok(0)
}

/// SIGTERM, for a worker that does not answer over HTTP. Windows has no
/// SIGTERM: the process is terminated, and its Job Object ends what it started.
fn terminate(pid: u32) {
    #[cfg(unix)]
    {
        // SAFETY: kill has no memory-safety preconditions.
        unsafe {
            libc::kill(pid as libc::pid_t, libc::SIGTERM);
        }
    }
    #[cfg(windows)]
    {
        use windows_sys::Win32::Foundation::CloseHandle;
        use windows_sys::Win32::System::Threading::{
            OpenProcess, PROCESS_TERMINATE, TerminateProcess,
        };
        // SAFETY: the handle is checked before use and closed once.
        unsafe {
            let process = OpenProcess(PROCESS_TERMINATE, 0, pid);
            if !process.is_null() {
                TerminateProcess(process, 1);
                CloseHandle(process);
            }
        }
    }
    #[cfg(not(any(unix, windows)))]
    {
        let _ = pid;
    }
}

fn status(as_json: bool) -> Result<i32> {
    let data = DataDir::resolve()?;
    let liveness = probe(&data, PROBE_TIMEOUT)?;
    let stats = worker_stats(&liveness);
    let (running, code) = match &liveness {
        Liveness::Running { health: Ok(_), .. } => (true, 0),
        Liveness::Running { .. } | Liveness::Starting => (true, 1),
        Liveness::NotRunning { .. } => (false, 3),
    };
    if as_json {
        let report = status_json(&data, &liveness, running, stats.as_ref());
        println!("{}", serde_json::to_string_pretty(&report)?);
        return Ok(code);
    }
    match &liveness {
        Liveness::NotRunning { stale_info } => print_not_running(&data, *stale_info),
        Liveness::Starting => println!("worker starting (data {})", data.root().display()),
        Liveness::Running { info, health } => print_running(info, health, stats.as_ref()),
    }
    Ok(code)
}

/// The healthy worker's own stats of the day (its queue, what it
/// compresses with); none when it is not running or not answering.
fn worker_stats(liveness: &Liveness) -> Option<serde_json::Value> {
    match liveness {
        Liveness::Running {
            info,
            health: Ok(_),
        } => client::call(info, "GET", "/api/stats?days=1", None, PROBE_TIMEOUT)
            .ok()
            .and_then(|r| r.json()),
        _ => None,
    }
}

/// The status for `--json`.
fn status_json(
    data: &DataDir,
    liveness: &Liveness,
    running: bool,
    stats: Option<&serde_json::Value>,
) -> serde_json::Value {
    match liveness {
        Liveness::NotRunning { stale_info } => json!({
            "running": false,
            "data_dir": data.root(),
            "stale_worker_json": stale_info,
        }),
        Liveness::Starting => {
            json!({ "running": true, "starting": true, "data_dir": data.root() })
        }
        Liveness::Running { info, health } => json!({
            "running": running,
            "healthy": health.is_ok(),
            "error": health.as_ref().err(),
            "pid": info.pid,
            "port": info.port,
            "version": info.version,
            "started_at": info.started_at,
            "data_dir": info.data_dir,
            "log_file": info.log_file,
            "provider": info.provider,
            "provider_error": info.provider_error,
            "budget_exhausted": info.budget_exhausted,
            "queue": stats.map(|s| s["queue"].clone()),
        }),
    }
}

/// No worker: who starts one, and whether a killed one left its file.
fn print_not_running(data: &DataDir, stale_info: bool) {
    println!(
        "worker not running (data {}); hooks start it on the next prompt, or run `mnemo worker start`",
        data.root().display()
    );
    if stale_info {
        println!(
            "  (a worker.json was left behind by a worker that was killed; the next one replaces it)"
        );
    }
}

/// A running worker: who it is, whether it answers, its queue, and what
/// keeps it from using the configured provider.
fn print_running(
    info: &WorkerInfo,
    health: &Result<serde_json::Value, String>,
    stats: Option<&serde_json::Value>,
) {
    println!(
        "worker running: pid {}, port {}, version {}, since {}",
        info.pid, info.port, info.version, info.started_at
    );
    println!("  data {}  log {}", info.data_dir, info.log_file);
    if let Err(e) = health {
        println!("  not answering: {e}");
    }
    if let Some(s) = stats {
        let q = &s["queue"];
        println!(
            "  queue: {} pending, {} leased, {} done, {} failed",
            q["pending"], q["leased"], q["done"], q["failed"]
        );
        println!(
            "  compressing with: {}",
            s["compressing_with"].as_str().unwrap_or("?")
        );
    }
    if let Some(e) = &info.provider_error {
        println!("  the configured provider cannot be used: {e}");
    }
    if let Some(b) = &info.budget_exhausted {
        println!("  {}", b.message);
    }
}

fn retry(all: bool, ids: &[i64]) -> Result<i32> {
    if !all && ids.is_empty() {
        bail!("say which events: `mnemo worker retry --all` or `mnemo worker retry ID...`");
    }
    let (data, config) = data_and_config()?;
    let mut store = open_store(&data, &config)?;
    let which = if all {
        RetrySelection::All
    } else {
        RetrySelection::Ids(ids)
    };
    let unknown = store.unknown_events(ids)?;
    for id in &unknown {
        eprintln!("mnemo: no event {id}; `mnemo doctor` lists the failed ones");
    }
    if !all && unknown.len() == ids.len() {
        return Ok(1);
    }
    let n = store.retry_events(which)?;
    println!(
        "{} back in the queue",
        mnemo_core::words::count_s(n, "event")
    );
    if n > 0 && !mnemo_worker::lock::is_held(&data.worker_lock_path())? {
        println!("the worker is not running: `mnemo worker start` (or the next prompt starts it)");
    }
    Ok(0)
}
