//! `mnemo doctor`: is everything wired and healthy, and if not, what to do.
//!
//! Each check yields a status, a one-line detail and, when something is
//! wrong, the exact fix. `--fix` applies the fixes that cannot lose data:
//! ingesting the spool, recovering the readable rows of a corrupt database
//! into a fresh one (the damaged file is moved aside, kept, never deleted),
//! and replacing an unusable `-shm`.

use std::path::{Path, PathBuf};
use std::time::Duration;

use mnemo_core::words::{count, count_s};
use mnemo_core::{Config, DataDir};
use mnemo_store::{Failure, Store, spool};
use serde_json::json;

use mnemo_core::host::Scope;
use mnemo_core::model::Platform;
use mnemo_install::{Installer, Target};

use super::claude_plugin;
use super::install::current_binary;

mod embeddings;
mod hook_log;
mod opencode;
mod report;

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
    checks.extend(check_disabled());
    checks.push(check_data_dir(&data));
    let config = check_config(&data, &mut checks);
    if fix {
        apply_fixes(&data, &config, &mut checks);
    }
    checks.push(check_database(&data, &config));
    checks.push(check_spool(&data));
    checks.push(check_provider(&config));
    checks.push(embeddings::check(&data, &config));
    checks.push(check_permissions(&data));
    checks.extend(worker_checks(&data, &config));
    checks.extend(host_checks(&binary, fix));
    checks.extend(check_claude_mem());
    checks.extend(check_sync(&data, &config));
    let last_capture = Store::open_read_only(&data.db_path(), busy(&config))
        .and_then(|s| s.last_capture_ms())
        .ok()
        .flatten();
    checks.extend(hook_log::checks(&data, last_capture));

    let verdict = checks.iter().map(|c| c.status).max().unwrap_or(Status::Ok);
    if as_json {
        let report = json!({
            "ok": verdict == Status::Ok,
            "verdict": verdict.word(),
            "exit_code": verdict.exit_code(),
            "summary": report::verdict_line(&checks, verdict, "below"),
            "data_dir": data.root(),
            "checks": checks.iter().map(|c| json!({
                "name": c.name,
                "status": c.status.word(),
                "detail": c.detail,
                "fix": c.fix,
            })).collect::<Vec<_>>(),
        });
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

/// `MNEMO_DISABLED` turns every hook into a no-op: said first, since it
/// explains an empty memory better than anything below.
fn check_disabled() -> Option<Check> {
    let value = std::env::var("MNEMO_DISABLED").ok()?;
    let v = value.trim().to_ascii_lowercase();
    if v.is_empty() || ["0", "false", "no", "off"].contains(&v.as_str()) {
        return None;
    }
    Some(Check::problem(
        "disabled",
        Status::Warn,
        format!("MNEMO_DISABLED={value} is set: hooks capture nothing and give nothing back"),
        "unset MNEMO_DISABLED (in the shell, or the env of Claude Code's settings) to capture again",
    ))
}

/// The configured provider and its key (or `claude` executable), checked
/// whether or not a worker runs, the way the worker will set it up.
fn check_provider(config: &Config) -> Check {
    match mnemo_compress::Compressor::from_config(&config.provider) {
        Ok(c) if c.provider() == "offline" => Check::ok(
            "provider",
            "offline (no model calls; set [provider] name in config.toml for LLM summaries)",
        ),
        Ok(c) => Check::ok(
            "provider",
            format!("{}, model {}: set up", c.provider(), c.model()),
        ),
        Err(e) => Check::problem(
            "provider",
            Status::Warn,
            format!("{e}; until then events are compressed offline"),
            "fix [provider] in config.toml (or the MNEMO_PROVIDER_* variables), then `mnemo worker restart`",
        ),
    }
}

fn check_data_dir(data: &DataDir) -> Check {
    let root = data.root();
    if !root.exists() {
        return Check::problem(
            "data dir",
            Status::Warn,
            "does not exist yet",
            "run `mnemo install` (or any hook creates it)",
        );
    }
    let probe = root.join(format!(".doctor-probe-{}", std::process::id()));
    match std::fs::write(&probe, b"") {
        Ok(()) => {
            let _ = std::fs::remove_file(&probe);
            Check::ok("data dir", "writable")
        }
        Err(e) => Check::problem(
            "data dir",
            Status::Fail,
            format!("not writable: {e}"),
            format!(
                "give this user write access (`chmod u+rwx {0}`), or set MNEMO_DATA_DIR to a writable folder; \
                 meanwhile hooks spool to {1}",
                root.display(),
                data.fallback_spool_dir().display()
            ),
        ),
    }
}

fn check_config(data: &DataDir, checks: &mut Vec<Check>) -> Config {
    let path = data.config_path();
    match Config::load_strict(&path) {
        Ok(loaded) => {
            let shown = in_data(data, &path);
            let detail = if path.exists() {
                shown
            } else {
                format!("{shown} absent: built-in defaults")
            };
            if loaded.warnings.is_empty() {
                checks.push(Check::ok("config", detail));
            } else {
                checks.push(Check::problem(
                    "config",
                    Status::Warn,
                    format!("{detail}: {}", loaded.warnings.join("; ")),
                    "remove or correct the keys named",
                ));
            }
            loaded.config
        }
        Err(e) => {
            checks.push(Check::problem(
                "config",
                Status::Fail,
                e.to_string(),
                "hooks use the defaults until this is fixed",
            ));
            Config::load_lenient(&path).config
        }
    }
}

/// Sync, on a machine set up for it: the server, the spaces, the last sync
/// and the last error (see `mnemo sync status`).
fn check_sync(data: &DataDir, config: &Config) -> Option<Check> {
    let store = Store::open_read_only(&data.db_path(), busy(config)).ok()?;
    let status = mnemo_sync::status::status(store.conn()).ok()?;
    if !status.configured {
        return None;
    }
    let last = status
        .last_sync_at
        .map_or_else(|| "never".to_owned(), mnemo_core::time::format_rfc3339);
    let detail = format!(
        "{}, {} space(s), last sync {last}, {} waiting to be pushed",
        status.server.unwrap_or_default(),
        status.spaces.len(),
        status.pending_push
    );
    Some(match status.last_error {
        None => Check::ok("sync", detail),
        Some(e) => Check::problem(
            "sync",
            Status::Warn,
            format!("{detail}; last error: {e}"),
            "run `mnemo sync` to retry; nothing is lost meanwhile (`mnemo sync status`)",
        ),
    })
}

fn busy(config: &Config) -> Duration {
    Duration::from_millis(config.store.busy_timeout_ms)
}

fn check_database(data: &DataDir, config: &Config) -> Check {
    let path = data.db_path();
    let shown = in_data(data, &path);
    if !path.exists() {
        return Check::problem(
            "database",
            Status::Warn,
            format!("{shown} does not exist yet"),
            "run `mnemo install`; the first hook creates it too",
        );
    }
    if let Some((side, why)) = unusable_side_files(&path).into_iter().next() {
        return Check::problem(
            "database",
            Status::Fail,
            format!(
                "{} {why}: hooks and the worker cannot share the database",
                in_data(data, &side)
            ),
            "`mnemo doctor --fix` (with the worker stopped) makes it usable again",
        );
    }
    let store = match Store::open_read_only(&path, busy(config)) {
        Ok(s) => s,
        Err(e) => return database_problem(&path, e),
    };
    match store.integrity_problem() {
        Ok(None) => {}
        Ok(Some(problem)) => {
            return Check::problem(
                "database",
                Status::Fail,
                format!("{shown}: integrity check failed: {problem}"),
                corrupt_fix(&path),
            );
        }
        Err(e) => return database_problem(&path, e),
    }
    let version = store.schema_version().unwrap_or(0);
    let counts = match store.counts() {
        Ok(c) => c,
        Err(e) => return database_problem(&path, e),
    };
    let size = file_size(&path) + file_size(&PathBuf::from(format!("{}-wal", path.display())));
    let events: i64 = counts.events.values().sum();
    let failed = counts.events.get("failed").copied().unwrap_or(0);
    let detail = format!(
        "{shown}: schema {version}, {}, {}, {}, {} ({} pending, {failed} failed), {}, {}; {}",
        count_s(counts.projects, "project"),
        count_s(counts.sessions, "session"),
        count_s(counts.prompts, "prompt"),
        count_s(events, "event"),
        counts.events.get("pending").copied().unwrap_or(0),
        count_s(counts.observations, "observation"),
        count(counts.summaries, "summary", "summaries"),
        mnemo_core::words::size(size)
    );
    // The full-text indexes are kept in step by our code, not by triggers; a
    // write from another tool (or an old bug) can leave them behind.
    if let Ok(broken) = broken_fts(&path, config)
        && !broken.is_empty()
    {
        return Check::problem(
            "database",
            Status::Warn,
            format!("{detail}; search index out of step: {}", broken.join(", ")),
            "run `mnemo doctor --fix` to rebuild the search indexes",
        );
    }
    if failed > 0 {
        Check::problem(
            "database",
            Status::Warn,
            detail,
            "some events failed to compress; see the queue check below",
        )
    } else {
        Check::ok("database", detail)
    }
}

fn database_problem(path: &Path, e: mnemo_store::StoreError) -> Check {
    let fix = match e.failure() {
        Failure::Corrupt => corrupt_fix(path),
        Failure::Locked => "another process holds the lock; retry in a moment".to_owned(),
        Failure::ReadOnly => format!("make {} writable by this user", path.display()),
        Failure::TooNew => "install the newer mnemo that wrote this database".to_owned(),
        Failure::Full => "free disk space".to_owned(),
        Failure::Io | Failure::Other => format!("check that {} is readable", path.display()),
    };
    Check::problem("database", Status::Fail, e.to_string(), fix)
}

fn corrupt_fix(path: &Path) -> String {
    format!(
        "`mnemo doctor --fix` copies every readable row into a fresh database, moves {} aside \
         (kept, not deleted) and says what was recovered; events captured meanwhile are in the \
         spool and will be kept",
        path.display()
    )
}

fn check_spool(data: &DataDir) -> Check {
    let refused = spool::refused(data);
    if !refused.is_empty() {
        return Check::problem(
            "spool",
            Status::Fail,
            format!(
                "refused (another user owns it or may write to it, so hooks neither read nor write it): {}",
                refused.join("; ")
            ),
            "delete that folder (as its owner or root) unless you created it; mnemo makes a private one",
        );
    }
    let (lines, bytes) = spool::backlog(data);
    let rejected = data.spool_dir().join(spool::REJECTED_FILE);
    let rejected_lines = std::fs::read_to_string(&rejected)
        .map(|t| t.lines().count())
        .unwrap_or(0);
    if lines > 0 {
        return Check::problem(
            "spool",
            Status::Fail,
            format!(
                "{} ({}) {} in {} because the database could not be written",
                count_s(lines, "captured event"),
                mnemo_core::words::size(bytes),
                if lines == 1 { "waits" } else { "wait" },
                spool::spool_files(data)
                    .iter()
                    .filter(|f| f.exists())
                    .map(|f| f.display().to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            "fix the database problem above, then `mnemo doctor --fix` (or the next hook) stores them",
        );
    }
    if rejected_lines > 0 {
        return Check::problem(
            "spool",
            Status::Warn,
            format!(
                "empty, but {} could not be applied and {} kept in {}",
                count_s(rejected_lines, "record"),
                if rejected_lines == 1 { "was" } else { "were" },
                rejected.display()
            ),
            "inspect the file; it is kept for you and never read again by mnemo",
        );
    }
    Check::ok("spool", "empty")
}

/// Every file and folder mnemo keeps is the user's alone: nobody else may
/// own or write any of them, nor read a file (they hold prompts, commands
/// and the worker's token).
fn check_permissions(data: &DataDir) -> Check {
    let mut exposed = Vec::new();
    // Another user's file, or one others can write, lets them plant memory
    // (a failure); one others can only read leaks it (a warning).
    let mut status = Status::Warn;
    for path in private_paths(data) {
        if let Some(problem) = mnemo_core::paths::foreign_access(&path) {
            status = Status::Fail;
            exposed.push((path, problem));
        } else if let Some(problem) = (!path.is_dir())
            .then(|| mnemo_core::paths::exposure(&path))
            .flatten()
        {
            exposed.push((path, problem));
        }
    }
    if exposed.is_empty() {
        return Check::ok("perms", "only you can read or write mnemo's files");
    }
    Check::problem(
        "perms",
        status,
        exposed
            .iter()
            .map(|(p, why)| format!("{}: {why}", p.display()))
            .collect::<Vec<_>>()
            .join("; "),
        format!(
            "`mnemo doctor --fix`, or chmod go-rwx {} (and remove anything owned by another user)",
            exposed
                .iter()
                .map(|(p, _)| p.display().to_string())
                .collect::<Vec<_>>()
                .join(" ")
        ),
    )
}

/// Takes group and other access off the user's own files and folders of
/// mnemo (files of another user are only reported, by the perms check).
fn restrict_permissions(data: &DataDir, checks: &mut Vec<Check>) {
    let loose: Vec<PathBuf> = private_paths(data)
        .into_iter()
        .filter(|p| mnemo_core::paths::exposure(p).is_some())
        .filter(|p| mnemo_core::paths::restrict_file(p).is_ok())
        .filter(|p| mnemo_core::paths::exposure(p).is_none())
        .collect();
    if !loose.is_empty() {
        checks.push(Check::ok(
            "fix",
            format!(
                "took group and other access off {}",
                loose
                    .iter()
                    .map(|p| p.display().to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        ));
    }
}

/// What mnemo reads or writes: the data directory, its files, the logs,
/// the spool folders (both) and their files.
fn private_paths(data: &DataDir) -> Vec<PathBuf> {
    let mut paths = vec![data.root().to_owned()];
    for name in [
        mnemo_core::paths::DB_FILE,
        "mnemo.db-wal",
        "mnemo.db-shm",
        mnemo_core::paths::WORKER_INFO_FILE,
        mnemo_core::paths::WORKER_LOCK_FILE,
    ] {
        paths.push(data.root().join(name));
    }
    paths.push(data.config_path());
    let dirs = [data.log_dir(), data.spool_dir()];
    for dir in dirs.into_iter().chain(data.fallback_spool_dirs()) {
        if let Ok(entries) = std::fs::read_dir(&dir) {
            paths.extend(entries.flatten().map(|e| e.path()));
        }
        paths.push(dir);
    }
    paths.retain(|p| std::fs::symlink_metadata(p).is_ok());
    paths
}

/// The hooks and MCP checks of every host: Claude Code always (named
/// `hooks` and `mcp`), the others (`codex hooks`, ...) when they are on
/// this machine or mnemo is wired into them.
fn host_checks(binary: &Path, fix: bool) -> Vec<Check> {
    let mut checks = Vec::new();
    let plugin = claude_plugin::find(None);
    checks.extend(plugin.as_ref().map(|p| check_plugin(binary, p)));
    let plugin = plugin.filter(|p| p.enabled);
    for &installer in mnemo_install::installers() {
        let host = installer.host();
        let claude = host.platform == Platform::ClaudeCode;
        // The mnemo plugin runs Claude Code's hooks and MCP server.
        let plugin = plugin.as_ref().filter(|_| claude);
        let (hooks, wired) = check_hooks(installer, binary, plugin);
        if !claude && !wired && !host.is_present() {
            continue;
        }
        if !claude && !wired {
            checks.push(Check::problem(
                names(host.platform).0,
                Status::Warn,
                format!(
                    "{} is on this machine, and mnemo is not wired into it",
                    host.name
                ),
                format!("mnemo install --platform {}", host.platform),
            ));
            continue;
        }
        checks.push(hooks);
        checks.push(check_mcp(installer, binary, fix, plugin));
        if host.platform == Platform::OpenCode
            && let Some(opencode) = host.binary_on_path()
        {
            checks.push(opencode::version_check(&opencode));
        }
    }
    checks
}

/// The check names of a host: `hooks`/`mcp` for Claude Code (as before
/// there were other hosts), `<platform> hooks`/`<platform> mcp` otherwise.
fn names(platform: Platform) -> (&'static str, &'static str) {
    match platform {
        Platform::ClaudeCode => ("hooks", "mcp"),
        Platform::Codex => ("codex hooks", "codex mcp"),
        Platform::Gemini => ("gemini hooks", "gemini mcp"),
        Platform::Cursor => ("cursor hooks", "cursor mcp"),
        Platform::OpenCode => ("opencode hooks", "opencode mcp"),
        Platform::Raw => ("raw hooks", "raw mcp"),
    }
}

fn hook_files(installer: &dyn Installer) -> Vec<PathBuf> {
    let cwd = std::env::current_dir().unwrap_or_default();
    [Scope::User, Scope::Project]
        .into_iter()
        .filter_map(|scope| installer.hook_file(scope, &cwd))
        .collect()
}

/// The hooks check, and whether any hook of ours (or a file that could not
/// be read) was found at all.
fn check_hooks(
    installer: &dyn Installer,
    binary: &Path,
    plugin: Option<&claude_plugin::Plugin>,
) -> (Check, bool) {
    let host = installer.host();
    let name = names(host.platform).0;
    let install = match host.platform {
        Platform::ClaudeCode => "mnemo install".to_owned(),
        p => format!("mnemo install --platform {p}"),
    };
    let mut found: Vec<(String, String, PathBuf)> = Vec::new(); // (event, command, file)
    let mut problems = Vec::new();
    for path in hook_files(installer) {
        match mnemo_install::settings_file::read(&path) {
            Ok(Some(text)) => match installer.find_hooks(&text) {
                Ok(hooks) => found.extend(hooks.into_iter().map(|(e, c)| (e, c, path.clone()))),
                Err(e) => problems.push(mnemo_install::FileError::invalid(&path, e).to_string()),
            },
            Ok(None) => {}
            Err(e) => problems.push(e.to_string()),
        }
    }
    if !problems.is_empty() {
        return (
            Check::problem(
                name,
                Status::Fail,
                problems.join("; "),
                "fix the settings file named",
            ),
            true,
        );
    }
    let missing: Vec<&str> = host
        .events
        .iter()
        .map(|e| e.name)
        .filter(|e| !found.iter().any(|(f, _, _)| f == e))
        .collect();
    if let Some(plugin) = plugin {
        return (hooks_beside_plugin(&found, plugin, host.events.len()), true);
    }
    if found.is_empty() {
        let files: Vec<String> = match host.platform {
            Platform::ClaudeCode => vec![
                "~/.claude/settings.json".to_owned(),
                ".claude/settings.json".to_owned(),
            ],
            _ => hook_files(installer)
                .iter()
                .map(|p| p.display().to_string())
                .collect(),
        };
        return (
            Check::problem(
                name,
                Status::Fail,
                format!(
                    "mnemo is not installed in {} (no hooks in {})",
                    host.name,
                    files.join(" or ")
                ),
                &install,
            ),
            false,
        );
    }
    let elsewhere: Vec<String> = found
        .iter()
        .filter_map(|(_, command, _)| mnemo_install::program_of(command).map(PathBuf::from))
        .filter(|p| {
            on_path(p)
                .and_then(|p| std::fs::canonicalize(p).ok())
                .is_none_or(|c| c != binary)
        })
        .map(|p| p.display().to_string())
        .collect();
    let files: Vec<String> = {
        let mut f: Vec<String> = found
            .iter()
            .map(|(_, _, p)| p.display().to_string())
            .collect();
        f.dedup();
        f
    };
    if !missing.is_empty() {
        return (
            Check::problem(
                name,
                Status::Fail,
                format!("{}: missing {}", files.join(", "), missing.join(", ")),
                &install,
            ),
            true,
        );
    }
    if let Some(other) = elsewhere.first() {
        return (
            Check::problem(
                name,
                Status::Fail,
                format!(
                    "hooks run {other}, which is not this binary ({})",
                    binary.display()
                ),
                format!("run `{install}` with the mnemo you want hooks to use"),
            ),
            true,
        );
    }
    if files.len() > 1 {
        return (
            Check::problem(
                name,
                Status::Warn,
                format!("installed in several settings files: {}", files.join(", ")),
                "keep one: `mnemo uninstall --scope project` (duplicates are recorded once, but run twice)",
            ),
            true,
        );
    }
    (
        Check::ok(
            name,
            format!(
                "{}: all {} events point at this binary",
                files.join(", "),
                host.events.len()
            ),
        ),
        true,
    )
}

/// The mnemo Claude Code plugin (a settings scope names it): enabled or not, and whether the
/// `mnemo` its hooks and MCP server run from PATH is this binary.
fn check_plugin(binary: &Path, plugin: &claude_plugin::Plugin) -> Check {
    const NAME: &str = "plugin";
    if !plugin.enabled {
        return Check::ok(NAME, plugin.describe());
    }
    let Some(on_path) = on_path(Path::new("mnemo")) else {
        return Check::problem(
            NAME,
            Status::Fail,
            format!(
                "{}; its hooks run `mnemo` from PATH and there is none on PATH, so sessions are not recorded",
                plugin.describe()
            ),
            format!(
                "put this binary on PATH, e.g. `ln -s {} ~/.local/bin/mnemo`",
                binary.display()
            ),
        );
    };
    let runs = std::fs::canonicalize(&on_path).unwrap_or(on_path);
    if runs != binary {
        return Check::problem(
            NAME,
            Status::Warn,
            format!(
                "{}; its hooks run {}, not this binary ({})",
                plugin.describe(),
                runs.display(),
                binary.display()
            ),
            "put the mnemo you want first on PATH",
        );
    }
    Check::ok(
        NAME,
        format!(
            "{}; its hooks and MCP server run this binary from PATH",
            plugin.describe()
        ),
    )
}

/// The hooks check when the plugin is enabled: its hooks are enough, and hooks from `mnemo
/// install` beside them make every hook run twice.
fn hooks_beside_plugin(
    found: &[(String, String, PathBuf)],
    plugin: &claude_plugin::Plugin,
    events: usize,
) -> Check {
    if found.is_empty() {
        return Check::ok(
            "hooks",
            format!("all {events} events are run by the plugin {}", plugin.id),
        );
    }
    let mut files: Vec<String> = found
        .iter()
        .map(|(_, _, p)| p.display().to_string())
        .collect();
    files.dedup();
    Check::problem(
        "hooks",
        Status::Warn,
        format!(
            "installed twice: by the plugin {} and by `mnemo install` in {}; every hook runs twice \
             (each event is still recorded once and memory given once)",
            plugin.id,
            files.join(", ")
        ),
        "keep the plugin: `mnemo uninstall` (add `--scope project` for a project's settings)",
    )
}

/// claude-mem capturing beside mnemo records every session twice.
fn check_claude_mem() -> Option<Check> {
    use crate::commands::switch_claude_mem::{detect, how_to_turn_off};
    let presence = detect()?;
    if !presence.is_capturing() {
        return Some(Check::ok("claude-mem", "installed but switched off"));
    }
    Some(Check::problem(
        "claude-mem",
        Status::Warn,
        format!(
            "also captures ({}): both record every session",
            presence.describe()
        ),
        format!(
            "{}; its memory comes along with `mnemo import --from claude-mem`",
            how_to_turn_off(&presence)
        ),
    ))
}

/// The MCP server the host starts for the `mcp__mnemo__*` tools: registered
/// at user scope, running this binary. `--fix` registers it (an additive
/// edit; the file is backed up).
fn check_mcp(
    installer: &dyn Installer,
    binary: &Path,
    fix: bool,
    plugin: Option<&claude_plugin::Plugin>,
) -> Check {
    let name = names(installer.host().platform).1;
    let Some(path) = installer.mcp_file() else {
        return Check::problem(
            name,
            Status::Warn,
            "cannot find the home directory",
            "set HOME",
        );
    };
    let target = Target {
        scope: Scope::User,
        project_dir: PathBuf::new(),
        binary: binary.to_owned(),
    };
    let wanted = installer.mcp_wanted(&target);
    let problem = match installer.mcp_entry() {
        Ok(Some(entry)) => {
            let same_binary = std::fs::canonicalize(&entry.command).is_ok_and(|c| c == binary);
            if same_binary && entry.args == wanted.args {
                return Check::ok(
                    name,
                    format!(
                        "{}: {}.{} runs this binary",
                        path.display(),
                        installer.host().mcp.map_or("mcpServers", |m| m.key),
                        mnemo_install::MCP_SERVER_NAME
                    ),
                );
            }
            format!(
                "{}: {} runs `{} {}`, not `{} mcp`",
                path.display(),
                mnemo_install::MCP_SERVER_NAME,
                entry.command,
                entry.args.join(" "),
                binary.display()
            )
        }
        Ok(None) if plugin.is_some() => {
            return Check::ok(
                name,
                "the plugin's MCP server (plugin:mnemo:mnemo) runs `mnemo mcp` from PATH",
            );
        }
        Ok(None) => format!(
            "the MCP server is not registered in {} (the agent has no mcp__mnemo__* tools)",
            path.display()
        ),
        Err(e) => {
            return Check::problem(
                name,
                Status::Warn,
                format!("cannot read {}: {e}", path.display()),
                "fix the file named",
            );
        }
    };
    if fix {
        let registered = installer.plan_mcp(&target).map(|plan| {
            let plan = plan?;
            if !plan.edit.is_noop() {
                mnemo_install::settings_file::write_atomic(&plan.path, &plan.edit.new_text)?;
            }
            Ok::<_, mnemo_install::FileError>(plan.path)
        });
        return match registered {
            Some(Ok(path)) => Check::ok(
                name,
                format!(
                    "fixed: registered `{} mcp` in {} (previous file kept as .mnemo.bak)",
                    wanted.command,
                    path.display()
                ),
            ),
            Some(Err(e)) => Check::problem(
                name,
                Status::Warn,
                format!("{problem}; fixing failed: {e:#}"),
                "mnemo install",
            ),
            None => Check::problem(name, Status::Warn, problem, "mnemo install"),
        };
    }
    Check::problem(
        name,
        Status::Warn,
        problem,
        "mnemo install (or `mnemo doctor --fix`) registers it at user scope",
    )
}

/// Where the shell finds `program`: itself when it names a directory, else
/// the first match on PATH (project-scope hooks run `mnemo` from PATH).
fn on_path(program: &Path) -> Option<PathBuf> {
    if program.components().count() > 1 {
        return Some(program.to_owned());
    }
    std::env::split_paths(&std::env::var_os("PATH")?)
        .map(|dir| dir.join(program))
        .find(|candidate| candidate.is_file())
}

fn apply_fixes(data: &DataDir, config: &Config, checks: &mut Vec<Check>) {
    hook_log::mark_fixed(data);
    restrict_permissions(data, checks);
    let path = data.db_path();
    fix_side_files(data, &path, checks);
    if path.exists() && is_corrupt(&path, config) {
        checks.push(recover_database(&path, config));
    }
    if path.exists()
        && let Ok(broken) = broken_fts(&path, config)
        && !broken.is_empty()
    {
        match Store::open(&path, busy(config)).and_then(|s| s.rebuild_fts()) {
            Ok(()) => checks.push(Check::ok(
                "fix",
                format!("rebuilt the search indexes ({})", broken.join(", ")),
            )),
            Err(e) => checks.push(Check::problem(
                "fix",
                Status::Fail,
                format!("could not rebuild the search indexes: {e}"),
                "fix the database problem first",
            )),
        }
    }
    if spool::has_pending(data) {
        match Store::open(&path, busy(config)).and_then(|mut s| s.ingest_spool(data)) {
            Ok(r) => checks.push(Check::ok(
                "fix",
                format!(
                    "ingested the spool: {} stored, {} already present, {} set aside",
                    r.applied, r.duplicates, r.rejected
                ),
            )),
            Err(e) => checks.push(Check::problem(
                "fix",
                Status::Fail,
                format!("could not ingest the spool: {e}"),
                "fix the database problem first",
            )),
        }
    }
}

/// Copies what can be read from the damaged database at `path` into a fresh
/// one, moves the damaged file aside (kept), and puts the fresh one in its
/// place. Hooks spool while the copy runs; the spool is ingested afterwards.
fn recover_database(path: &Path, config: &Config) -> Check {
    let stamp = mnemo_core::time::now_ms();
    let fresh = with_suffix(path, &format!(".recovering-{stamp}"));
    let recovered = Store::open(&fresh, busy(config))
        .and_then(|mut store| mnemo_store::recover::recover_into(path, &mut store));
    let aside = with_suffix(path, &format!(".corrupt-{stamp}"));
    if let Err(e) = std::fs::rename(path, &aside) {
        remove_with_side_files(&fresh);
        return Check::problem(
            "fix",
            Status::Fail,
            format!("could not move {} aside: {e}", path.display()),
            "move it by hand",
        );
    }
    for suffix in ["-wal", "-shm"] {
        let _ = std::fs::rename(with_suffix(path, suffix), with_suffix(&aside, suffix));
    }
    let moved = format!("moved the corrupt database to {} (kept)", aside.display());
    let tables = match recovered {
        Ok(tables) => tables,
        Err(e) => {
            remove_with_side_files(&fresh);
            return Check::problem(
                "fix",
                Status::Warn,
                format!("{moved}; nothing could be read from it ({e}): starting empty"),
                "nothing more to do; the old file is kept for a specialist tool",
            );
        }
    };
    // A link, not a rename: a database a hook created meanwhile is not replaced.
    if let Err(e) = std::fs::hard_link(&fresh, path) {
        return Check::problem(
            "fix",
            Status::Fail,
            format!(
                "{moved}; the recovered rows are in {}, but it could not be put in place: {e}",
                fresh.display()
            ),
            format!("move {} to {} by hand", fresh.display(), path.display()),
        );
    }
    let _ = std::fs::remove_file(&fresh);
    recovery_check(&moved, &tables)
}

/// What the recovery gave back, table by table (tables left empty and
/// complete are not named).
fn recovery_check(moved: &str, tables: &[mnemo_store::recover::TableRecovery]) -> Check {
    let named: Vec<String> = tables
        .iter()
        .filter(|t| t.recovered > 0 || !t.complete())
        .map(|t| t.describe())
        .collect();
    let detail = format!(
        "{moved}; recovered into a fresh database: {}",
        if named.is_empty() {
            "no rows".to_owned()
        } else {
            named.join(", ")
        }
    );
    if tables.iter().all(|t| t.complete()) {
        Check::ok("fix", format!("{detail}; nothing lost"))
    } else {
        Check::problem(
            "fix",
            Status::Warn,
            detail,
            "nothing more to do: what was unreadable is gone; the old file is kept",
        )
    }
}

fn with_suffix(path: &Path, suffix: &str) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(suffix);
    PathBuf::from(name)
}

fn remove_with_side_files(path: &Path) {
    for suffix in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(with_suffix(path, suffix));
    }
}

/// The database's `-wal` or `-shm` that SQLite cannot open for writing (a
/// folder of that name, a read-only file, another user's file): every
/// connection then fails, or reads without the others' locks.
fn unusable_side_files(path: &Path) -> Vec<(PathBuf, String)> {
    ["-wal", "-shm"]
        .into_iter()
        .map(|suffix| with_suffix(path, suffix))
        .filter_map(|side| {
            let meta = std::fs::symlink_metadata(&side).ok()?;
            if meta.is_dir() {
                return Some((side, "is a folder".to_owned()));
            }
            match std::fs::OpenOptions::new()
                .read(true)
                .write(true)
                .open(&side)
            {
                Ok(_) => None,
                Err(e) => Some((side, format!("cannot be written: {e}"))),
            }
        })
        .collect()
}

/// Makes an unusable `-shm` usable: writable again when it is ours, else
/// moved aside (SQLite rebuilds it from the WAL). A `-wal` holds commits,
/// so it is only ever made writable, never moved. Not while the worker
/// runs: it may have the old `-shm` mapped.
fn fix_side_files(data: &DataDir, path: &Path, checks: &mut Vec<Check>) {
    let unusable = unusable_side_files(path);
    if unusable.is_empty() {
        return;
    }
    if mnemo_worker::lock::is_held(&data.worker_lock_path()).unwrap_or(false) {
        checks.push(Check::problem(
            "fix",
            Status::Fail,
            format!(
                "{} cannot be repaired while the worker runs",
                unusable[0].0.display()
            ),
            "`mnemo worker stop`, then `mnemo doctor --fix`",
        ));
        return;
    }
    for (side, why) in unusable {
        let _ = mnemo_core::paths::restrict_file(&side);
        if unusable_side_files(path).iter().all(|(p, _)| *p != side) {
            checks.push(Check::ok(
                "fix",
                format!("made {} writable again", side.display()),
            ));
            continue;
        }
        let is_shm = side.as_os_str().to_string_lossy().ends_with("-shm");
        let aside = with_suffix(&side, &format!(".unusable-{}", mnemo_core::time::now_ms()));
        match is_shm.then(|| std::fs::rename(&side, &aside)) {
            Some(Ok(())) => checks.push(Check::ok(
                "fix",
                format!(
                    "moved {} ({why}) to {}; SQLite makes a new one",
                    side.display(),
                    aside.display()
                ),
            )),
            Some(Err(e)) => checks.push(Check::problem(
                "fix",
                Status::Fail,
                format!("could not move {} aside: {e}", side.display()),
                "move or delete it by hand (as its owner or root)",
            )),
            None => checks.push(Check::problem(
                "fix",
                Status::Fail,
                format!("{} {why}", side.display()),
                "make it writable by this user (as its owner or root); it holds recent writes",
            )),
        }
    }
}

/// Full-text indexes that do not match their tables. FTS5's integrity check
/// is spelled as an INSERT, so it needs a writable connection (it writes nothing).
fn broken_fts(path: &Path, config: &Config) -> mnemo_store::Result<Vec<&'static str>> {
    Store::open(path, busy(config))?.check_fts()
}

/// Damaged beyond what SQLite can read, or failing its own integrity check.
fn is_corrupt(path: &Path, config: &Config) -> bool {
    match Store::open_read_only(path, busy(config)).and_then(|s| s.integrity_problem()) {
        Ok(problem) => problem.is_some(),
        Err(e) => e.failure() == Failure::Corrupt,
    }
}

fn file_size(path: &Path) -> u64 {
    std::fs::metadata(path).map(|m| m.len()).unwrap_or(0)
}

// ---- the worker (issue 3): running?, failed events, budget ----

/// The worker, its queue's failed events, the token budget, the retention.
fn worker_checks(data: &DataDir, config: &Config) -> Vec<Check> {
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
