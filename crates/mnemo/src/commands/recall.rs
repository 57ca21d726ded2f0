//! `mnemo search`, `show`, `timeline`, `context`: recall from the terminal.
//!
//! Thin: parse arguments, find the project and the database, call
//! [`mnemo_recall`], print its text (colored only on a terminal without
//! `NO_COLOR`) or its JSON. The current project is `CLAUDE_PROJECT_DIR` when
//! set, else the working directory, resolved as hooks resolve it.

use std::io::{IsTerminal, Write as _};
use std::path::PathBuf;

use anyhow::Context as _;
use mnemo_core::{Config, DataDir};
use mnemo_recall::context::{ContextRequest, build, nothing_yet};
use mnemo_recall::render::{self, Style};
use mnemo_recall::scope::{self, Resolved};
use mnemo_recall::search::{FileFilter, SearchRequest, SearchResults};
use mnemo_recall::{Clock, ItemRef, projects, records, timeline as tl};
use mnemo_store::Store;

use crate::cli::{ContextArgs, SearchArgs, ShowArgs, TimelineArgs};
use crate::output::{data_and_config, open_store_read_only};

/// Colors only for a person at a terminal who did not opt out.
fn terminal_style() -> Style {
    let color = std::io::stdout().is_terminal()
        && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty());
    Style { color, dates: true }
}

/// The directory whose project is "the current one".
pub(crate) fn current_dir() -> anyhow::Result<PathBuf> {
    if let Some(dir) = std::env::var_os("CLAUDE_PROJECT_DIR").filter(|d| !d.is_empty()) {
        return Ok(PathBuf::from(dir));
    }
    std::env::current_dir().context("cannot read the current directory")
}

/// Prints `text` and a newline (a closed pipe is an error that `main`
/// ends quietly, as for every command).
pub(crate) fn out(text: &str) -> anyhow::Result<()> {
    let mut stdout = std::io::stdout().lock();
    writeln!(stdout, "{text}").and_then(|()| stdout.flush())?;
    Ok(())
}

pub(crate) fn print_json(value: &impl serde::Serialize) -> anyhow::Result<()> {
    out(&serde_json::to_string_pretty(value)?)
}

/// How many known projects a "nothing here" hint names.
const HINT_MAX: usize = 8;

fn open(data: &DataDir, config: &Config) -> anyhow::Result<Store> {
    open_store_read_only(data, config)
}

pub fn search(args: SearchArgs) -> anyhow::Result<i32> {
    let clock = Clock::system();
    let (data, config) = data_and_config()?;
    let cwd = current_dir()?;
    // Dates are checked before the database, so a typo is reported as such.
    let since = args
        .since
        .as_deref()
        .map(|s| clock.parse_since(s))
        .transpose()?;
    let until = args
        .until
        .as_deref()
        .map(|s| clock.parse_until(s))
        .transpose()?;
    let agent = mnemo_recall::agents::parse_opt(args.agent.as_deref())?;
    let store = open(&data, &config)?;
    let conn = store.conn();
    // So are the types, even where the project has no memory yet.
    mnemo_recall::types::check(conn, &args.types, mnemo_recall::types::Allowed::Everything)?;
    let resolved = if args.all {
        None
    } else {
        Some(match &args.project {
            Some(p) => scope::resolve_arg(conn, p, &cwd)?,
            None => scope::resolve_dir(conn, &cwd)?,
        })
    };
    let project = match resolved {
        None => None,
        Some(Resolved::Found(p)) => Some(p),
        Some(Resolved::Unknown(identity)) => {
            if args.json {
                print_json(&SearchResults {
                    query: args.query.join(" "),
                    fts_query: None,
                    relaxed: false,
                    hits: Vec::new(),
                    meaning: None,
                })?;
            } else {
                out("No matches.")?;
            }
            eprintln!(
                "mnemo: nothing is recorded for the project {} ({}); search every project with --all",
                identity.name,
                identity.root.display()
            );
            eprintln!("{}", projects::hint(Some(conn), HINT_MAX)?);
            return Ok(0);
        }
    };
    let root = project.as_ref().map(|p| PathBuf::from(&p.root));
    let request = SearchRequest {
        query: args.query.join(" "),
        project_id: project.as_ref().map(|p| p.id),
        types: args.types,
        since_ms: since,
        until_ms: until,
        file: args
            .file
            .as_deref()
            .map(|f| FileFilter::new(f, &cwd, root.as_deref())),
        session: args.session,
        agent,
        mine_only: !config.sync.others,
        limit: args.limit,
    };
    let meaning = mnemo_embed::query_meaning(&config.embeddings, &request.query);
    let results = mnemo_recall::hybrid::search(conn, &request, meaning)?;
    if args.json {
        print_json(&results)?;
    } else {
        out(&render::search_results(&results, &clock, terminal_style()))?;
    }
    Ok(0)
}

pub fn show(args: ShowArgs) -> anyhow::Result<i32> {
    let clock = Clock::system();
    let ids = ItemRef::parse_list(&args.ids)?;
    let (data, config) = data_and_config()?;
    let store = open(&data, &config)?;
    let fetched = records::fetch(store.conn(), &ids)?;
    if args.json {
        print_json(&fetched)?;
    } else if !fetched.records.is_empty() {
        out(shown_records(&store, &fetched.records, &clock)?.trim_end())?;
    }
    for id in &fetched.missing {
        eprintln!(
            "mnemo: no {} {id}; find ids with `mnemo search`",
            id.kind.as_str()
        );
    }
    // Some found: the answer; none found: an error.
    Ok(if fetched.records.is_empty() { 1 } else { 0 })
}

/// Full records; a turn summary with its session's other turns, as the
/// index line that names the session by it describes them.
fn shown_records(
    store: &Store,
    records: &[records::Record],
    clock: &Clock,
) -> anyhow::Result<String> {
    let style = terminal_style();
    let mut texts = Vec::new();
    for r in records {
        let mut text = render::record(r, clock, style);
        if let records::Record::Summary(s) = r {
            let turns = records::session_turns(store.conn(), s.id)?;
            text.push_str(&render::session_turns(&turns, r.id(), style));
        }
        texts.push(text);
    }
    Ok(texts.join("\n"))
}

pub fn timeline(args: TimelineArgs) -> anyhow::Result<i32> {
    let clock = Clock::system();
    let anchor = ItemRef::parse(&args.id)?;
    let agent = mnemo_recall::agents::parse_opt(args.agent.as_deref())?;
    let (data, config) = data_and_config()?;
    let store = open(&data, &config)?;
    let t = tl::timeline(store.conn(), anchor, args.before, args.after, agent)?;
    if args.json {
        print_json(&t)?;
    } else {
        out(&render::timeline(&t, &clock, terminal_style()))?;
    }
    Ok(0)
}

pub fn context(args: ContextArgs) -> anyhow::Result<i32> {
    let clock = Clock::system();
    let agent = mnemo_recall::agents::parse_opt(args.agent.as_deref())?;
    let (data, config) = data_and_config()?;
    let cwd = current_dir()?;
    let store = if data.db_path().exists() {
        Some(open(&data, &config)?)
    } else {
        None
    };
    let target = scope::target(
        store.as_ref().map(Store::conn),
        args.project.as_deref(),
        &cwd,
    )?;
    let request = ContextRequest {
        root: &target.root,
        name: &target.name,
        cwd: target.dir.as_deref(),
        config: &config.context,
        clock,
        agent,
        mine_only: !config.sync.others,
    };
    let index = match &store {
        Some(store) => build(store.conn(), &request)?,
        None => nothing_yet(&request),
    };
    if args.json {
        print_json(&index)?;
    } else {
        out(&index.text)?;
    }
    if index.empty {
        eprintln!(
            "{}",
            projects::hint(store.as_ref().map(Store::conn), HINT_MAX)?
        );
    }
    if !config.context.enabled {
        eprintln!(
            "mnemo: context.enabled is false, so sessions do not receive this index \
             (set it in {} or MNEMO_CONTEXT_ENABLED=1)",
            data.config_path().display()
        );
    }
    Ok(0)
}
