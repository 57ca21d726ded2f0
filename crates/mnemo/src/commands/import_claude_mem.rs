//! `mnemo import --from claude-mem [PATH]`: a claude-mem user's memory, moved
//! into mnemo. The database is read from a private snapshot
//! ([`mnemo_store::claude_mem::snapshot`]), its projects placed in
//! directories (from its data and Claude Code's transcripts of its sessions;
//! else `--map`, else asked on a terminal, else left out with a message
//! saying how to map them), and its records stored through the
//! store's one import path, in one transaction (rolled back by `--dry-run`).

use std::collections::{BTreeMap, HashMap};
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::Context as _;
use mnemo_core::privacy::Sanitizer;
use mnemo_store::Store;
use mnemo_store::claude_mem::projects::{self, Placement};
use mnemo_store::claude_mem::records::{self, Kind, Planned, Unplaced};
use mnemo_store::claude_mem::{rows, snapshot};
use mnemo_store::export::Outcome;

use crate::output::{data_and_config, open_store};

/// Where claude-mem keeps its database.
pub fn default_path() -> Option<PathBuf> {
    mnemo_core::paths::home_dir().map(|h| h.join(".claude-mem").join("claude-mem.db"))
}

pub fn run(path: Option<&Path>, maps: &[String], dry_run: bool) -> anyhow::Result<i32> {
    let source = match path {
        Some(p) => p.to_path_buf(),
        None => default_path().context("HOME is not set; name the claude-mem database")?,
    };
    let mut maps = parse_maps(maps)?;
    let (data, config) = data_and_config()?;
    let scratch = if data.root().is_dir() {
        data.root().to_path_buf()
    } else {
        std::env::temp_dir()
    };
    let snap = snapshot::take(&source, &scratch)?;
    for why in &snap.skipped {
        eprintln!("mnemo: warning: skipped {why}");
    }
    let mut dump = rows::read(&snap.conn, &source)?;
    drop(snap);
    if let Some(dir) = mnemo_transcript::files::default_dir() {
        cwds_from_transcripts(&mut dump, &dir);
    }

    let mut placement = projects::place(&dump, &maps);
    if !placement.unplaced.is_empty() && interactive() {
        ask_directories(&placement, &mut maps)?;
        placement = projects::place(&dump, &maps);
    }
    let (planned, unplaced) = records::plan(&dump, &placement);

    // A dry run against a store that does not exist yet uses a throwaway one.
    let throwaway;
    let mut store = if dry_run && !data.db_path().exists() {
        throwaway = tempfile::tempdir_in(&scratch)?;
        let busy = Duration::from_millis(config.store.busy_timeout_ms);
        Store::open(&throwaway.path().join("dry-run.db"), busy)?
    } else {
        open_store(&data, &config)?
    };
    let sanitizer = Sanitizer::new(&config.privacy);
    let tally = store_all(&mut store, planned, &sanitizer, !dry_run)?;

    report(&source, &dump, &tally, &unplaced, &placement, dry_run);
    Ok(i32::from(!unplaced.is_empty() || !tally.invalid.is_empty()))
}

/// Lines of a transcript read for its `cwd` before giving up.
const TRANSCRIPT_LINES: usize = 50;
/// Most bytes of a transcript read for its `cwd`.
const TRANSCRIPT_HEAD_BYTES: u64 = 16 << 20;

/// Claude Code's transcript of a session (`<projects>/<folder>/<session
/// id>.jsonl`, kept 30 days by default) names its working directory: the
/// evidence older claude-mem schemas lack. Fills `cwds` of the sessions
/// that have none.
fn cwds_from_transcripts(dump: &mut rows::Dump, projects_dir: &Path) {
    let Ok(folders) = std::fs::read_dir(projects_dir) else {
        return;
    };
    let folders: Vec<PathBuf> = folders.flatten().map(|e| e.path()).collect();
    for session in dump.sessions.iter_mut().filter(|s| s.cwds.is_empty()) {
        let name = format!("{}.jsonl", session.content_id);
        let cwd = folders
            .iter()
            .map(|f| f.join(&name))
            .find(|p| p.is_file())
            .and_then(|p| transcript_cwd(&p));
        session.cwds.extend(cwd);
    }
}

fn transcript_cwd(path: &Path) -> Option<String> {
    use std::io::BufRead;
    let file = mnemo_core::files::read_capped(path, TRANSCRIPT_HEAD_BYTES).ok()?;
    std::io::BufReader::new(file)
        .lines()
        .take(TRANSCRIPT_LINES)
        .map_while(Result::ok)
        .filter_map(|line| serde_json::from_str::<serde_json::Value>(&line).ok())
        .find_map(|v| v.get("cwd")?.as_str().map(str::to_owned))
}

/// `NAME=DIR` pairs, DIR as mnemo identifies projects.
fn parse_maps(maps: &[String]) -> anyhow::Result<BTreeMap<String, String>> {
    let mut out = BTreeMap::new();
    for m in maps {
        let Some((name, dir)) = m
            .split_once('=')
            .filter(|(n, d)| !n.is_empty() && !d.is_empty())
        else {
            anyhow::bail!("--map {m}: expected NAME=DIR, e.g. --map api=$HOME/src/api");
        };
        let dir = Path::new(dir);
        if !dir.is_absolute() {
            anyhow::bail!("--map {m}: the directory must be an absolute path");
        }
        out.insert(name.to_owned(), projects::canonical(&dir.to_string_lossy()));
    }
    Ok(out)
}

fn interactive() -> bool {
    std::io::stdin().is_terminal() && std::io::stderr().is_terminal()
}

/// Asks, on the terminal, the directory of each project name left unplaced.
fn ask_directories(
    placement: &Placement,
    maps: &mut BTreeMap<String, String>,
) -> anyhow::Result<()> {
    for (name, units) in &placement.unplaced {
        let only = placement
            .known
            .get(name)
            .filter(|dirs| dirs.len() == 1)
            .and_then(|dirs| dirs.first());
        eprint!(
            "claude-mem project `{name}`: {} whose data does not say where it ran{}. Directory{} ('-' skips them)? ",
            mnemo_core::words::count_s(units.len(), "session"),
            seen_in(placement, name),
            only.map(|d| format!(" [{d}]")).unwrap_or_default(),
        );
        std::io::stderr().flush()?;
        let mut answer = String::new();
        std::io::stdin().read_line(&mut answer)?;
        let answer = match (answer.trim(), only) {
            ("-", _) | ("", None) => continue,
            ("", Some(dir)) => dir.as_str(),
            (typed, _) => typed,
        };
        let parsed = parse_maps(&[format!("{name}={answer}")])?;
        maps.extend(parsed);
    }
    Ok(())
}

fn seen_in(placement: &Placement, name: &str) -> String {
    match placement.known.get(name) {
        Some(dirs) if !dirs.is_empty() => format!(
            " (other sessions of `{name}` ran in {})",
            dirs.iter().cloned().collect::<Vec<_>>().join(", ")
        ),
        _ => String::new(),
    }
}

/// What was stored, per project root and kind.
#[derive(Default)]
struct Tally {
    inserted: BTreeMap<String, HashMap<Kind, usize>>,
    present: usize,
    invalid: Vec<String>,
}

fn store_all(
    store: &mut Store,
    planned: Vec<Planned>,
    sanitizer: &Sanitizer,
    commit: bool,
) -> anyhow::Result<Tally> {
    let total = planned.len();
    let labels: Vec<(Kind, String)> = planned.iter().map(|p| (p.kind, p.root.clone())).collect();
    let mut bar = Bar::new(total);
    let mut tally = Tally::default();
    store.import_values(
        planned.into_iter().map(|p| p.value),
        sanitizer,
        commit,
        |i, outcome| {
            let (kind, root) = &labels[i];
            match outcome {
                Outcome::Inserted(_) => {
                    *tally
                        .inserted
                        .entry(root.clone())
                        .or_default()
                        .entry(*kind)
                        .or_default() += 1;
                }
                Outcome::Present => tally.present += 1,
                Outcome::Invalid(why) => tally.invalid.push(format!("{kind:?} in {root}: {why}")),
            }
            bar.show(i + 1);
        },
    )?;
    bar.done();
    Ok(tally)
}

fn counts(by_kind: &HashMap<Kind, usize>) -> String {
    Kind::ALL
        .iter()
        .map(|k| {
            let n = by_kind.get(k).copied().unwrap_or(0);
            format!("{n} {}", k.noun(n))
        })
        .collect::<Vec<_>>()
        .join(", ")
}

fn report(
    source: &Path,
    dump: &rows::Dump,
    tally: &Tally,
    unplaced: &[Unplaced],
    placement: &Placement,
    dry_run: bool,
) {
    let found: HashMap<Kind, usize> = HashMap::from([
        (Kind::Session, dump.sessions.len()),
        (Kind::Prompt, dump.prompts.len()),
        (Kind::Observation, dump.observations.len()),
        (Kind::Summary, dump.summaries.len()),
    ]);
    let version = dump
        .schema_version
        .map(|v| format!(", claude-mem migration {v}"))
        .unwrap_or_default();
    println!(
        "claude-mem database {}{version}: {}",
        source.display(),
        counts(&found)
    );
    let verb = if dry_run { "would import" } else { "imported" };
    let mut all: HashMap<Kind, usize> = HashMap::new();
    for (root, by_kind) in &tally.inserted {
        println!("  {root}: {}", counts(by_kind));
        for (k, n) in by_kind {
            *all.entry(*k).or_default() += n;
        }
    }
    println!(
        "{verb} {}; {} already present{}",
        counts(&all),
        tally.present,
        if dry_run {
            " (dry run: nothing written)"
        } else {
            ""
        }
    );
    let mut left: BTreeMap<&str, HashMap<Kind, usize>> = BTreeMap::new();
    for u in unplaced {
        *left.entry(&u.name).or_default().entry(u.kind).or_default() += 1;
    }
    for (name, by_kind) in &left {
        eprintln!(
            "mnemo: skipped {} of claude-mem project `{name}`: its directory is unknown{}; \
             run again with --map '{name}=/path/to/{name}'",
            counts(by_kind),
            seen_in(placement, name)
        );
    }
    for why in tally.invalid.iter().take(20) {
        eprintln!("mnemo: not imported: {why}");
    }
    for why in dump.skipped_rows.iter().take(20) {
        eprintln!("mnemo: skipped an unreadable row of {why}");
    }
    if dump.skipped_rows.len() > 20 {
        eprintln!(
            "mnemo: skipped {} unreadable rows in all",
            dump.skipped_rows.len()
        );
    }
}

/// A one-line progress bar on stderr, only on a terminal.
struct Bar {
    total: usize,
    shown: usize,
    on: bool,
}

impl Bar {
    fn new(total: usize) -> Bar {
        Bar {
            total,
            shown: usize::MAX,
            on: std::io::stderr().is_terminal() && total > 0,
        }
    }

    fn show(&mut self, done: usize) {
        const WIDTH: usize = 24;
        let filled = (done * WIDTH) / self.total.max(1);
        if !self.on || (filled == self.shown && done != self.total) {
            return;
        }
        self.shown = filled;
        let _ = write!(
            std::io::stderr(),
            "\r[{}{}] {done}/{} claude-mem records ",
            "#".repeat(filled),
            " ".repeat(WIDTH - filled),
            self.total
        );
    }

    fn done(&self) {
        if self.on {
            eprintln!();
        }
    }
}
