//! `mnemo import --transcripts [DIR]`: the memory of past sessions, built
//! from the hosts' transcripts: Claude Code's (`~/.claude/projects`, or
//! `$CLAUDE_CONFIG_DIR/projects`), Codex's rollouts (`~/.codex/sessions`,
//! or `$CODEX_HOME/sessions`) and Gemini CLI's chat recordings
//! (`~/.gemini/tmp/*/chats`, or under `$GEMINI_CLI_HOME`). Each session file is
//! read ([`mnemo_transcript`]), replayed as the captures its hooks would
//! have made ([`replay`]) and stored in one transaction; the worker then
//! compresses the imported turns like live ones.

mod replay;

use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};

use anyhow::Context as _;
use mnemo_capture::worker_start;
use mnemo_core::model::Platform;
use mnemo_core::privacy::Sanitizer;
use mnemo_core::words::{count_s, size};
use mnemo_store::capture::Applied;
use mnemo_store::{CaptureOp, Store};
use mnemo_transcript::{Session, files, gemini_project};

use crate::output::{data_and_config, open_store};

/// One session file to import, and the host that wrote it.
type Found = (Platform, PathBuf);

/// After `mnemo install` of `hosts`: imports their past sessions when asked
/// to (`yes`), or asks on a terminal when one of them has transcripts; elsewhere only says how. Never asks when stdin is not a
/// terminal.
pub fn offer(yes: bool, hosts: &[Platform]) -> anyhow::Result<()> {
    let mut found = default_sessions().unwrap_or_default();
    found.retain(|(p, _)| hosts.contains(p));
    if found.is_empty() {
        return Ok(());
    }
    let interactive = std::io::stdin().is_terminal() && std::io::stderr().is_terminal();
    let import = yes || (interactive && ask(&found));
    if import {
        import_all(&found)?;
    } else if !interactive {
        for (host, count, dir) in per_host(&found) {
            println!(
                "  history:  {count} past {host} sessions in {}; `mnemo import --transcripts` makes them memory",
                dir.display()
            );
        }
    }
    Ok(())
}

fn ask(found: &[Found]) -> bool {
    let hosts: Vec<String> = per_host(found)
        .into_iter()
        .map(|(host, count, dir)| format!("{count} past {host} sessions from {}", dir.display()))
        .collect();
    eprint!("Import {} into mnemo's memory? [y/N] ", hosts.join(" and "));
    let _ = std::io::stderr().flush();
    let mut answer = String::new();
    if std::io::stdin().read_line(&mut answer).is_err() {
        return false;
    }
    matches!(answer.trim().to_ascii_lowercase().as_str(), "y" | "yes")
}

/// Per host that has sessions: its name, how many, and its directory.
fn per_host(found: &[Found]) -> Vec<(&'static str, usize, PathBuf)> {
    let mut hosts = Vec::new();
    for (platform, dir) in default_dirs() {
        let count = found.iter().filter(|(p, _)| *p == platform).count();
        if count > 0 {
            hosts.push((host_title(platform), count, dir));
        }
    }
    hosts
}

fn host_title(platform: Platform) -> &'static str {
    mnemo_core::host::host(platform).name
}

/// The hosts' default transcript directories that can be named.
fn default_dirs() -> Vec<(Platform, PathBuf)> {
    [
        (Platform::ClaudeCode, files::default_dir()),
        (Platform::Codex, files::codex_default_dir()),
        (Platform::Gemini, files::gemini_default_dir()),
    ]
    .into_iter()
    .filter_map(|(p, d)| Some((p, d?)))
    .collect()
}

/// Every session in the hosts' default directories (those that exist).
fn default_sessions() -> anyhow::Result<Vec<Found>> {
    let dirs = default_dirs();
    if dirs.is_empty() {
        anyhow::bail!("cannot find the hosts' transcripts: HOME is not set; name the directory");
    }
    let existing: Vec<_> = dirs.iter().filter(|(_, d)| d.exists()).collect();
    if existing.is_empty() {
        let names: Vec<String> = dirs.iter().map(|(_, d)| d.display().to_string()).collect();
        anyhow::bail!("no transcripts at {}", names.join(" nor "));
    }
    let mut found = Vec::new();
    for (platform, dir) in existing {
        found.extend(sessions_in(dir, Some(*platform))?);
    }
    Ok(found)
}

/// The sessions under `dir`: of one host, or of any when `only` is None.
/// Paths are made absolute: sessions remember their transcript's path for
/// the worker, which runs elsewhere.
fn sessions_in(dir: &Path, only: Option<Platform>) -> anyhow::Result<Vec<Found>> {
    let dir = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
    let listing = |e: std::io::Error| {
        anyhow::Error::new(e).context(format!("cannot list transcripts in {}", dir.display()))
    };
    let mut found = Vec::new();
    if only.is_none_or(|p| p == Platform::ClaudeCode) {
        let claude = files::session_files(&dir).map_err(listing)?;
        found.extend(claude.into_iter().map(|p| (Platform::ClaudeCode, p)));
    }
    if only.is_none_or(|p| p == Platform::Codex) {
        let codex = files::rollout_files(&dir).map_err(listing)?;
        found.extend(codex.into_iter().map(|p| (Platform::Codex, p)));
    }
    if only.is_none_or(|p| p == Platform::Gemini) {
        let gemini = files::gemini_files(&dir).map_err(listing)?;
        found.extend(gemini.into_iter().map(|p| (Platform::Gemini, p)));
    }
    Ok(found)
}

/// What an import did.
#[derive(Debug, Default)]
struct Totals {
    files: usize,
    sessions: usize,
    turns: usize,
    events: usize,
    skipped_lines: u64,
    unreadable: usize,
    bytes: u64,
}

pub fn run(dir: Option<&Path>) -> anyhow::Result<i32> {
    let paths = match dir {
        Some(d) if !d.exists() => anyhow::bail!("no transcripts at {}", d.display()),
        Some(d) => sessions_in(d, None)?,
        None => default_sessions()?,
    };
    import_all(&paths)
}

/// Imports every session of `paths`, then starts the worker for them.
fn import_all(paths: &[Found]) -> anyhow::Result<i32> {
    let (data, config) = data_and_config()?;
    let mut store = open_store(&data, &config)?;
    let sanitizer = Sanitizer::new(&config.privacy);
    let mut bar = Bar::new(paths.len());
    let mut totals = Totals::default();
    for (platform, path) in paths {
        let source = replay::Source {
            platform: *platform,
            transcript: path,
        };
        import_file(source, &mut store, &config, &sanitizer, &mut totals)?;
        bar.show(&totals);
    }
    bar.done();
    println!(
        "imported {}, {}, {} from {} ({}); {} skipped{}",
        count_s(totals.sessions, "session"),
        count_s(totals.turns, "turn"),
        count_s(totals.events, "event"),
        count_s(totals.files, "transcript"),
        size(totals.bytes),
        count_s(totals.skipped_lines, "line"),
        if totals.unreadable > 0 {
            format!(
                ", {} skipped (unreadable or not regular files)",
                count_s(totals.unreadable, "file")
            )
        } else {
            String::new()
        }
    );
    if totals.events > 0 && std::env::var_os("MNEMO_NO_WORKER").is_none_or(|v| v != "1") {
        // The worker turns the imported turns into observations.
        let mut diagnostics = Vec::new();
        worker_start::ensure_running(&data, &config, &mut diagnostics);
        for d in diagnostics {
            eprintln!("mnemo: warning: {}", d.message);
        }
    }
    Ok(0)
}

fn import_file(
    source: replay::Source<'_>,
    store: &mut Store,
    config: &mnemo_core::Config,
    sanitizer: &Sanitizer,
    totals: &mut Totals,
) -> anyhow::Result<()> {
    let path = source.transcript;
    totals.files += 1;
    let session = match read(source, sanitizer) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("mnemo: warning: skipped {}: {e}", path.display());
            totals.unreadable += 1;
            return Ok(());
        }
    };
    if session.stats.skipped > 0 {
        eprintln!(
            "mnemo: warning: skipped {} of {}: not JSON objects",
            count_s(session.stats.skipped, "line"),
            path.display()
        );
    }
    if session.stats.unreadable_files > 0 {
        eprintln!(
            "mnemo: warning: skipped {} subagent file(s) of {}: not regular files, or unreadable",
            session.stats.unreadable_files,
            path.display()
        );
    }
    totals.unreadable += session.stats.unreadable_files as usize;
    totals.skipped_lines += session.stats.skipped;
    totals.bytes += session.stats.bytes;
    if session.turns.is_empty() {
        return Ok(());
    }
    let progress = store.session_progress(source.platform.as_str(), &session.session_id)?;
    let captures = replay::captures(&session, source, progress, config, sanitizer);
    let applied = store
        .apply_all(&captures)
        .with_context(|| format!("storing {}", path.display()))?;
    let mut changed = false;
    for (capture, applied) in captures.iter().zip(&applied) {
        match (applied, &capture.op) {
            (Applied::Prompt { .. }, _) => totals.turns += 1,
            (
                Applied::Event {
                    event_id: Some(_), ..
                },
                CaptureOp::Event(e),
            ) if e.tool_name.is_some() => totals.events += 1,
            _ => continue,
        }
        changed = true;
    }
    if progress.is_none() || changed {
        totals.sessions += 1;
    }
    Ok(())
}

/// A session file read by its host's reader.
fn read(source: replay::Source<'_>, sanitizer: &Sanitizer) -> std::io::Result<Session> {
    match source.platform {
        Platform::Codex => mnemo_transcript::read_rollout(source.transcript, sanitizer),
        Platform::Gemini => read_gemini(source.transcript, sanitizer),
        _ => mnemo_transcript::read_session(source.transcript, sanitizer),
    }
}

/// A Gemini CLI recording, with its project as its working directory: the
/// recording itself names none ([`gemini_project`]).
fn read_gemini(path: &Path, sanitizer: &Sanitizer) -> std::io::Result<Session> {
    let mut session = mnemo_transcript::read_gemini(path, sanitizer)?;
    if session.turns.is_empty() {
        return Ok(session);
    }
    session.cwd = gemini_project::recording_project(path, &session);
    if session.cwd.is_none() {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            "cannot tell its project: no mapping of its folder, and no absolute path in its tool calls",
        ));
    }
    Ok(session)
}

/// A one-line progress bar on stderr, when stderr is a terminal.
struct Bar {
    total: usize,
    on: bool,
}

impl Bar {
    fn new(total: usize) -> Bar {
        Bar {
            total,
            on: std::io::stderr().is_terminal(),
        }
    }

    fn show(&mut self, t: &Totals) {
        if !self.on {
            return;
        }
        const WIDTH: usize = 24;
        let filled = (t.files * WIDTH).checked_div(self.total).unwrap_or(WIDTH);
        let _ = write!(
            std::io::stderr(),
            "\r[{}{}] {}/{} transcripts: {}, {}, {}, {} skipped ",
            "#".repeat(filled),
            " ".repeat(WIDTH - filled),
            t.files,
            self.total,
            count_s(t.sessions, "session"),
            count_s(t.turns, "turn"),
            count_s(t.events, "event"),
            count_s(t.skipped_lines, "line")
        );
    }

    fn done(&self) {
        if self.on {
            eprintln!();
        }
    }
}
