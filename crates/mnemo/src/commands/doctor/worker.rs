//! The worker's checks: running or not (and what its log says), events
//! that failed to compress, retention, and the token budget.

use std::path::PathBuf;
use std::time::Duration;

use mnemo_core::words::count_s;
use mnemo_core::{Config, DataDir};
use mnemo_store::Store;

use super::{Check, Status, busy};

/// The worker, its queue's failed events, the token budget, the retention.
pub(super) fn worker_checks(data: &DataDir, config: &Config) -> Vec<Check> {
    let mut checks = vec![check_worker(data)];
    let path = data.db_path();
    if let Ok(store) = Store::open_read_only(&path, busy(config)) {
        checks.push(check_queue(&store));
        if let Some(c) = check_budget(data, config, &store) {
            checks.push(c);
        }
        checks.push(check_retention(config, &store));
    }
    checks
}

/// The retention of raw tool payloads, and how much they weigh now.
fn check_retention(config: &Config, store: &Store) -> Check {
    let raw: u64 = store
        .size()
        .map(|s| s.by_project.iter().map(|p| p.raw_bytes).sum())
        .unwrap_or(0);
    let kept = match config.store.raw_payload_days {
        0 => "kept forever".to_owned(),
        days => format!("dropped {days} days after compression"),
    };
    Check::ok(
        "retention",
        format!(
            "raw tool payloads {kept} (store.raw_payload_days); {} stored now",
            mnemo_core::words::size(raw)
        ),
    )
}

fn worker_log(data: &DataDir) -> PathBuf {
    data.log_dir().join(mnemo_worker::logging::WORKER_LOG_FILE)
}

fn check_worker(data: &DataDir) -> Check {
    let log = worker_log(data);
    match mnemo_worker::probe(data, Duration::from_secs(1)) {
        Err(e) => Check::problem(
            "worker",
            Status::Warn,
            format!("cannot check {}: {e}", data.worker_lock_path().display()),
            "make the data directory readable and writable by this user",
        ),
        Ok(mnemo_worker::Liveness::Starting) => Check::ok("worker", "starting"),
        Ok(mnemo_worker::Liveness::Running {
            info,
            health: Ok(_),
        }) if info.provider_error.is_some() => Check::problem(
            "worker",
            Status::Warn,
            format!(
                "running (pid {}, 127.0.0.1:{}), but compressing offline: {}",
                info.pid,
                info.port,
                info.provider_error.as_deref().unwrap_or_default()
            ),
            "fix [provider] in config.toml (or the MNEMO_PROVIDER_* variables), then `mnemo worker restart`",
        ),
        Ok(mnemo_worker::Liveness::Running {
            info,
            health: Ok(_),
        }) => Check::ok(
            "worker",
            format!(
                "running: pid {}, 127.0.0.1:{}, version {}, provider {}, since {}",
                info.pid, info.port, info.version, info.provider, info.started_at
            ),
        ),
        Ok(mnemo_worker::Liveness::Running {
            info,
            health: Err(e),
        }) => Check::problem(
            "worker",
            Status::Warn,
            format!("pid {} holds the lock but does not answer: {e}", info.pid),
            format!("`mnemo worker restart`; its log is {}", log.display()),
        ),
        Ok(mnemo_worker::Liveness::NotRunning { .. }) => {
            // A worker that could not start says why in the last line of its log.
            let last = std::fs::read_to_string(&log)
                .ok()
                .and_then(|t| t.lines().last().map(str::to_owned))
                .filter(|l| l.contains("worker failed:"));
            match last {
                Some(line) => Check::problem(
                    "worker",
                    Status::Warn,
                    format!("not running; the last attempt failed: {line}"),
                    format!(
                        "fix what the line says, then `mnemo worker start`; log {}",
                        log.display()
                    ),
                ),
                None => Check::ok(
                    "worker",
                    "not running (hooks start it on the next prompt; `mnemo worker start` starts it now)",
                ),
            }
        }
    }
}

fn check_queue(store: &Store) -> Check {
    let now = mnemo_core::time::now_ms();
    let (counts, failed) = match (store.queue_counts(now), store.failed_events(5)) {
        (Ok(c), Ok(f)) => (c, f),
        (Err(e), _) | (_, Err(e)) => {
            return Check::problem(
                "queue",
                Status::Warn,
                e.to_string(),
                "see the database check",
            );
        }
    };
    let summary = format!(
        "{} pending ({} backing off after an error), {} leased, {} done, {} failed",
        counts.pending, counts.backing_off, counts.leased, counts.done, counts.failed
    );
    if counts.failed == 0 {
        return Check::ok("queue", summary);
    }
    let examples: Vec<String> = failed
        .iter()
        .map(|f| {
            format!(
                "#{} {} ({}): {}",
                f.id,
                f.tool_name.as_deref().unwrap_or(&f.kind),
                count_s(f.attempts, "attempt"),
                f.last_error.as_deref().unwrap_or("no error recorded")
            )
        })
        .collect();
    Check::problem(
        "queue",
        Status::Warn,
        format!("{summary}; latest failures: {}", examples.join("; ")),
        format!(
            "once the cause is fixed, `mnemo worker retry --all` (or `mnemo worker retry {}`)",
            failed
                .iter()
                .map(|f| f.id.to_string())
                .collect::<Vec<_>>()
                .join(" ")
        ),
    )
}

fn check_budget(data: &DataDir, config: &Config, store: &Store) -> Option<Check> {
    let running = mnemo_worker::lock::is_held(&data.worker_lock_path()).unwrap_or(false);
    let info = mnemo_worker::info::read(data).filter(|_| running);
    let provider = info
        .as_ref()
        .map_or(config.provider.name.clone(), |i| i.provider.clone());
    if provider == "offline" {
        return None;
    }
    // The running worker's own verdict (it may concern one session) first;
    // else the daily budget from the ledger.
    let message = info
        .and_then(|i| i.budget_exhausted)
        .map(|b| b.message)
        .or_else(|| {
            store
                .budget_exhausted(&config.budget, None, mnemo_core::time::now_ms())
                .ok()
                .flatten()
                .map(|e| e.describe())
        });
    Some(match message {
        Some(message) => Check::problem(
            "budget",
            Status::Warn,
            message,
            "raise [budget] daily_tokens / session_tokens in config.toml (MNEMO_BUDGET_DAILY_TOKENS, \
             MNEMO_BUDGET_SESSION_TOKENS; 0 = no limit), or wait; `mnemo stats` shows the spend",
        ),
        None => Check::ok(
            "budget",
            format!(
                "provider {provider}: within budget (daily {}, per session {} tokens; 0 = no limit)",
                config.budget.daily_tokens, config.budget.session_tokens
            ),
        ),
    })
}
