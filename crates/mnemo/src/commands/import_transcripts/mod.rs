//! `mnemo import --transcripts [DIR]`: the memory of past sessions, built
//! from the host's transcripts (Claude Code's `~/.claude/projects`, or
//! `$CLAUDE_CONFIG_DIR/projects`). Each session file is read
//! ([`mnemo_transcript`]), replayed as the captures its hooks would have
//! made ([`replay`]) and stored in one transaction; the worker then
//! compresses the imported turns like live ones.

mod replay;

use std::io::{IsTerminal, Write};
use std::path::Path;

use anyhow::Context as _;
use mnemo_capture::worker_start;
use mnemo_core::model::Platform;
use mnemo_core::privacy::Sanitizer;
use mnemo_core::words::{count_s, size};
use mnemo_store::capture::Applied;
use mnemo_store::{CaptureOp, Store};
use mnemo_transcript::files;

use crate::output::{data_and_config, open_store};

/// After `mnemo install`: imports past sessions when asked to (`yes`), or
/// asks on a terminal when Claude Code has transcripts; elsewhere only says
/// how. Never asks when stdin is not a terminal.
pub fn offer(yes: bool) -> anyhow::Result<()> {
    let Some(dir) = files::default_dir() else {
        return Ok(());
    };
    let count = files::session_files(&dir).map_or(0, |f| f.len());
    if count == 0 {
        return Ok(());
    }
    let interactive = std::io::stdin().is_terminal() && std::io::stderr().is_terminal();
    let import = yes || (interactive && ask(count, &dir));
    if import {
        run(Some(&dir))?;
    } else if !interactive {
        println!(
            "  history:  {count} past Claude Code sessions in {}; `mnemo import --transcripts` makes them memory",
            dir.display()
        );
    }
    Ok(())
}

fn ask(count: usize, dir: &Path) -> bool {
    eprint!(
        "Import {count} past Claude Code sessions from {} into mnemo's memory? [y/N] ",
        dir.display()
    );
    let _ = std::io::stderr().flush();
    let mut answer = String::new();
    if std::io::stdin().read_line(&mut answer).is_err() {
        return false;
    }
    matches!(answer.trim().to_ascii_lowercase().as_str(), "y" | "yes")
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
    let dir = match dir {
        Some(d) => d.to_path_buf(),
        None => files::default_dir().context(
            "cannot find Claude Code's transcripts: HOME is not set; name the directory",
        )?,
    };
    if !dir.exists() {
        anyhow::bail!("no transcripts at {}", dir.display());
    }
    // Sessions remember their transcript's path for the worker, which runs
    // elsewhere: it must not be relative.
    let dir = std::fs::canonicalize(&dir).unwrap_or(dir);
    let paths = files::session_files(&dir)
        .with_context(|| format!("cannot list transcripts in {}", dir.display()))?;
    let (data, config) = data_and_config()?;
    let mut store = open_store(&data, &config)?;
    let sanitizer = Sanitizer::new(&config.privacy);
    let mut bar = Bar::new(paths.len());
    let mut totals = Totals::default();
    for path in &paths {
        import_file(path, &mut store, &config, &sanitizer, &mut totals)?;
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
    path: &Path,
    store: &mut Store,
    config: &mnemo_core::Config,
    sanitizer: &Sanitizer,
    totals: &mut Totals,
) -> anyhow::Result<()> {
    totals.files += 1;
    let session = match mnemo_transcript::read_session(path, sanitizer) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("mnemo: warning: skipped {}: {e}", path.display());
            totals.unreadable += 1;
            return Ok(());
        }
    };
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
    let progress = store.session_progress(Platform::ClaudeCode.as_str(), &session.session_id)?;
    let captures = replay::captures(&session, path, progress, config, sanitizer);
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
