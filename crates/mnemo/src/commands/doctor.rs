//! `mnemo doctor`: is everything wired and healthy, and if not, what to do.
//!
//! Each check yields a status, a one-line detail and, when something is
//! wrong, the exact fix. `--fix` applies the fixes that cannot lose data:
//! ingesting the spool, recovering the readable rows of a corrupt database
//! into a fresh one (the damaged file is moved aside, kept, never deleted),
//! and replacing an unusable `-shm`.
//!
//! This file runs the checks in order and owns their shape ([`Check`],
//! [`Status`]); each area has its module: `setup` (disabled, data
//! directory, config, provider), `store` (database, spool), `repair` (what
//! `--fix` does to them), `permissions`, `worker`, `embeddings`, `hooks`
//! and `mcp` (every host's wiring), `opencode`, `sync`, `hook_log` (what
//! hooks logged), and `report` (the text and JSON output).

use std::path::Path;
use std::time::Duration;

use mnemo_core::{Config, DataDir};
use mnemo_store::Store;

use super::install::current_binary;

mod embeddings;
mod hook_log;
mod hooks;
mod mcp;
mod opencode;
mod permissions;
mod repair;
mod report;
mod setup;
mod store;
mod sync;
mod worker;

/// Ordered by gravity: the verdict is the worst status.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Status {
    Ok,
    Warn,
    Fail,
}

struct Check {
    name: &'static str,
    status: Status,
    detail: String,
    fix: Option<String>,
}

impl Check {
    fn ok(name: &'static str, detail: impl Into<String>) -> Check {
        Check {
            name,
            status: Status::Ok,
            detail: detail.into(),
            fix: None,
        }
    }

    fn problem(
        name: &'static str,
        status: Status,
        detail: impl Into<String>,
        fix: impl Into<String>,
    ) -> Check {
        Check {
            name,
            status,
            detail: detail.into(),
            fix: Some(fix.into()),
        }
    }
}

impl Status {
    fn word(self) -> &'static str {
        match self {
            Status::Ok => "ok",
            Status::Warn => "warn",
            Status::Fail => "fail",
        }
    }

    /// The exit code of a verdict: 0 ok, 1 some warning, 2 some failure.
    fn exit_code(self) -> i32 {
        match self {
            Status::Ok => 0,
            Status::Warn => 1,
            Status::Fail => 2,
        }
    }
}

pub fn run(fix: bool, as_json: bool) -> anyhow::Result<i32> {
    let data = DataDir::resolve()?;
    let mut checks = Vec::new();

    let binary = current_binary()?;
    checks.push(Check::ok(
        "binary",
        format!("{} (mnemo {})", binary.display(), env!("CARGO_PKG_VERSION")),
    ));
    checks.extend(setup::check_disabled());
    checks.push(setup::check_data_dir(&data));
    let config = setup::check_config(&data, &mut checks);
    if fix {
        repair::apply_fixes(&data, &config, &mut checks);
    }
    checks.push(store::check_database(&data, &config));
    checks.push(store::check_spool(&data));
    checks.push(setup::check_provider(&config));
    checks.push(embeddings::check(&data, &config));
    checks.push(permissions::check_permissions(&data));
    checks.extend(worker::worker_checks(&data, &config));
    checks.extend(hooks::host_checks(&binary, fix));
    checks.extend(hooks::check_claude_mem());
    checks.extend(sync::check_sync(&data, &config));
    let last_capture = Store::open_read_only(&data.db_path(), busy(&config))
        .and_then(|s| s.last_capture_ms())
        .ok()
        .flatten();
    checks.extend(hook_log::checks(&data, last_capture));

    let verdict = checks.iter().map(|c| c.status).max().unwrap_or(Status::Ok);
    if as_json {
        let report = report::json(&data, &checks, verdict);
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        report::print(&data, &checks, verdict);
    }
    Ok(verdict.exit_code())
}

/// `path` as shown under the data directory, which the report's first line
/// names: each path is named once.
fn in_data(data: &DataDir, path: &Path) -> String {
    match path.strip_prefix(data.root()) {
        Ok(rel) if !rel.as_os_str().is_empty() => rel.display().to_string(),
        _ => path.display().to_string(),
    }
}

fn busy(config: &Config) -> Duration {
    Duration::from_millis(config.store.busy_timeout_ms)
}
