//! The command line: every clap type and the dispatch to one `run` per
//! command family in [`crate::commands`].

use std::ffi::OsString;
use std::path::PathBuf;

use clap::{Parser, Subcommand, ValueEnum};

use crate::commands;

/// The environment variables every command reads, for `mnemo --help`.
const ENVIRONMENT: &str = "\
Environment:
  MNEMO_DATA_DIR          where the database, logs and spool live (default ~/.mnemo)
  MNEMO_CONFIG            another configuration file (default config.toml in the data directory)
  MNEMO_PORT              the worker's port on 127.0.0.1 (default 38377; when another worker
                          holds it, a free port is taken and published in worker.json)
  MNEMO_DISABLED=1        hooks capture nothing and answer {} (`mnemo doctor` says so)
  MNEMO_NO_WORKER=1       hooks never start the background worker
  MNEMO_VIA_PLUGIN=1      set by the Claude Code plugin's hooks: memory names the MCP tools
                          as the plugin serves them (mcp__plugin_mnemo_mnemo__search, ...)
  MNEMO_PROVIDER          the compression provider: offline, anthropic, openai, claude-cli
  MNEMO_<SECTION>_<KEY>   overrides one key of config.toml, e.g. MNEMO_BUDGET_DAILY_TOKENS=0
  ANTHROPIC_API_KEY, OPENAI_API_KEY
                          the provider's key when [provider] api_key is empty
  MNEMO_LOG               the worker's log filter (default info)
  CLAUDE_CONFIG_DIR       where Claude Code keeps its settings (default ~/.claude)";

/// What `mnemo doctor`'s exit code means.
const DOCTOR_EXIT: &str = "\
Exit status: 0 when every check is ok, 1 when some check warns, 2 when some check fails.";

#[derive(Parser)]
#[command(
    name = "mnemo",
    version,
    about = "Persistent memory for AI coding agents",
    long_about = "Persistent memory for AI coding agents.\n\n\
        mnemo captures what your coding agent does through its hooks, keeps it in a local \
        SQLite store (redacted of secrets and <private> text), and gives it back to the next \
        session.\n\nData lives in $MNEMO_DATA_DIR (default ~/.mnemo).",
    after_help = ENVIRONMENT
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand)]
pub enum Command {
    /// Handle one hook event: payload JSON on stdin, the platform's answer on stdout.
    ///
    /// Run by the agent host, not by hand. Always exits 0; problems go to
    /// the hook log in the data directory.
    Hook {
        /// claude-code, codex, gemini, cursor, opencode, or raw (Claude
        /// Code's payload shape, for scripts and other tools). Events of an
        /// unknown host or event name are not captured, and each one is
        /// counted in `mnemo doctor`.
        platform: String,
        /// The event name; taken from the payload when it says.
        event: Option<String>,
        /// The payload as an argument instead of stdin (Codex's `notify`).
        payload: Option<String>,
    },
    /// Wire mnemo into the agent hosts on this machine (or those of --platform).
    Install(InstallArgs),
    /// Remove exactly what `mnemo install` added.
    Uninstall(InstallArgs),
    /// Write everything stored as JSON Lines on stdout.
    Export {
        /// Write to this file instead of stdout.
        #[arg(long, short)]
        output: Option<PathBuf>,
    },
    /// Read JSON Lines (as written by `export`) into the store, with
    /// --transcripts the host's session transcripts, or with --from
    /// claude-mem a claude-mem database; safe to repeat.
    Import {
        /// The file to read, or - for stdin; with --from claude-mem, the
        /// database (default ~/.claude-mem/claude-mem.db).
        #[arg(required_unless_present_any = ["transcripts", "from"])]
        file: Option<PathBuf>,
        /// The project of observations and summaries that name none (a
        /// directory); without it, such lines are refused.
        #[arg(long, conflicts_with = "from")]
        project: Option<PathBuf>,
        /// Build memory from Claude Code's transcripts, Codex's rollouts and
        /// Gemini CLI's chat recordings in DIR (default all of
        /// `$CLAUDE_CONFIG_DIR/projects`, else `~/.claude/projects`;
        /// `$CODEX_HOME/sessions`, else `~/.codex/sessions`; and
        /// `~/.gemini/tmp`, under `$GEMINI_CLI_HOME` when set).
        #[arg(long, value_name = "DIR", num_args = 0..=1, conflicts_with_all = ["file", "project", "from"])]
        transcripts: Option<Option<PathBuf>>,
        /// Import another memory tool's database (read-only, even while it runs).
        #[arg(long, value_enum)]
        from: Option<ImportSource>,
        /// With --from claude-mem: the directory of a claude-mem project
        /// whose data does not say where it is (repeatable).
        #[arg(long, value_name = "NAME=DIR", requires = "from")]
        map: Vec<String>,
        /// With --from claude-mem: say what would be imported, write nothing.
        #[arg(long, requires = "from")]
        dry_run: bool,
    },
    /// The background worker that compresses captured events.
    Worker(WorkerArgs),
    /// The projects mnemo knows: name, root, agents, counts, last activity.
    Projects(ProjectsArgs),
    /// Token spend per day and per project, and the queue.
    Stats(StatsArgs),
    /// Full-text search over observations, summaries and prompts.
    Search(SearchArgs),
    /// Show observations (or summaries, prompts) in full by id.
    Show(ShowArgs),
    /// What came before and after an observation.
    Timeline(TimelineArgs),
    /// Print the context index that SessionStart injects for a project.
    Context(ContextArgs),
    /// The MCP server on stdio (what Claude Code runs).
    Mcp(McpArgs),
    /// Open the web viewer in the browser (starts the worker if needed).
    Open(OpenArgs),
    /// Forget observations, summaries or prompts by id, a whole session or a
    /// whole project: deleted for good, from the indexes and the file too.
    Forget(ForgetArgs),
    /// Correct an observation: title, subtitle, narrative, facts, type.
    Edit(EditArgs),
    /// Always show an observation in its project's session-start index.
    Pin(PinArgs),
    /// Stop pinning an observation.
    Unpin(PinArgs),
    /// Replace every stored occurrence of a text (a secret that slipped
    /// through) with [REDACTED:manual].
    Redact(RedactArgs),
    /// Sync the memory with your other machines and your team (end-to-end
    /// encrypted); without a subcommand, push and pull now.
    Sync(SyncArgs),
    /// Share a project's memory with teammates through the sync server.
    Share(ShareArgs),
    /// Run the sync server on PostgreSQL (it stores only encrypted blobs).
    Server(ServerArgs),
    /// Check that everything is wired and healthy, and say how to fix what is not.
    #[command(after_help = DOCTOR_EXIT)]
    Doctor {
        /// Also apply the safe fixes (ingest the spool, ...).
        #[arg(long)]
        fix: bool,
        /// Machine-readable report.
        #[arg(long)]
        json: bool,
    },
}

#[derive(clap::Args, Clone)]
pub struct SyncArgs {
    #[command(subcommand)]
    pub command: Option<SyncCommand>,
}

#[derive(clap::Subcommand, Clone)]
pub enum SyncCommand {
    /// First machine: create your account, this device and your personal
    /// space on the server; writes your secret key to --key-file (0600).
    Register {
        /// The sync server, e.g. https://mnemo.example.com.
        #[arg(long)]
        server: String,
        /// Where to write the key file (it must not exist). Keep it safe:
        /// it is the only way to read your memory on another machine.
        #[arg(long)]
        key_file: PathBuf,
        /// The name your teammates see on your records (default: $USER).
        #[arg(long)]
        name: Option<String>,
    },
    /// Another machine of yours: join with the key file of `register`.
    Join {
        /// The sync server.
        #[arg(long)]
        server: String,
        /// The key file `register` wrote (copied to this machine).
        #[arg(long)]
        key_file: PathBuf,
    },
    /// Server, spaces, last sync, what waits to be pushed, errors.
    Status {
        /// Machine-readable output.
        #[arg(long)]
        json: bool,
    },
    /// Give a teammate a shared project's memory (their public key is in
    /// their `mnemo sync status`).
    Invite {
        /// The shared project: a directory inside it (default: the current one).
        #[arg(long)]
        project: Option<PathBuf>,
        /// The teammate's public key.
        #[arg(long)]
        member: String,
    },
    /// Take the shared spaces teammates invited you to.
    Accept {
        /// Only this space (as `sync status` or the inviter names it).
        #[arg(long)]
        space: Option<i64>,
        /// Your checkout of the shared project (default: the owner's path).
        #[arg(long)]
        project: Option<PathBuf>,
    },
    /// Remove a teammate from a project you shared; they receive nothing new.
    Remove {
        /// The shared project: a directory inside it (default: the current one).
        #[arg(long)]
        project: Option<PathBuf>,
        /// The teammate's public key.
        #[arg(long)]
        member: String,
    },
    /// Leave a shared project, or (without --project) stop syncing this machine.
    Leave {
        /// The shared project to leave.
        #[arg(long)]
        project: Option<PathBuf>,
    },
}

#[derive(clap::Args, Clone)]
pub struct ShareArgs {
    /// The project: a directory inside it (default: the current one).
    #[arg(long)]
    pub project: Option<PathBuf>,
}

#[derive(clap::Args, Clone)]
pub struct ServerArgs {
    /// PostgreSQL connection URL (postgres://user:password@host:port/db).
    #[arg(long, env = "MNEMO_SERVER_DATABASE_URL")]
    pub database_url: String,
    /// Address to listen on (plain HTTP unless --tls-cert is given).
    #[arg(long, env = "MNEMO_SERVER_LISTEN", default_value = "127.0.0.1:38380")]
    pub listen: std::net::SocketAddr,
    /// Serve HTTPS with this PEM certificate (chain); needs --tls-key.
    #[arg(long, env = "MNEMO_SERVER_TLS_CERT", requires = "tls_key")]
    pub tls_cert: Option<PathBuf>,
    /// The PEM private key of --tls-cert.
    #[arg(long, env = "MNEMO_SERVER_TLS_KEY", requires = "tls_cert")]
    pub tls_key: Option<PathBuf>,
    /// Megabytes of encrypted records one space may hold.
    #[arg(long, default_value_t = 1024)]
    pub space_quota_mb: i64,
    /// Requests one device may make per minute (per server instance).
    #[arg(long, default_value_t = 1200)]
    pub requests_per_minute: u32,
    /// The largest request body accepted, in megabytes.
    #[arg(long, default_value_t = 16)]
    pub max_request_mb: usize,
}

#[derive(clap::Args, Clone)]
pub struct SearchArgs {
    /// What to look for. Any text works: words, "quoted phrases", file paths,
    /// punctuation. Every word must match (if nothing does, any word may).
    /// Empty lists the newest items. Use `--` before a query that starts with `-`.
    pub query: Vec<String>,
    /// The project: a directory inside it, or its name (default: the current one).
    #[arg(long, conflicts_with = "all")]
    pub project: Option<String>,
    /// Search every project.
    #[arg(long)]
    pub all: bool,
    /// Only these types: bugfix (fix), feature (feat), refactor, change,
    /// discovery, decision, memory; or summary, prompt. Repeat or separate by commas.
    #[arg(long = "type", short = 't', value_delimiter = ',')]
    pub types: Vec<String>,
    /// From this date on: 2026-11-22, RFC 3339, today, yesterday, or a span ago (30m, 12h, 7d, 2w).
    #[arg(long)]
    pub since: Option<String>,
    /// Before this date (same forms; a day includes the whole day).
    #[arg(long)]
    pub until: Option<String>,
    /// Only observations about this file (a path, relative path or file name).
    #[arg(long)]
    pub file: Option<String>,
    /// Only items of this agent session (its id, or the first 4+ characters).
    #[arg(long)]
    pub session: Option<String>,
    /// Only what this agent produced: claude-code, codex, cursor, gemini, raw.
    #[arg(long)]
    pub agent: Option<String>,
    /// Most results.
    #[arg(long, short = 'n', default_value_t = 20)]
    pub limit: usize,
    /// Machine-readable output.
    #[arg(long)]
    pub json: bool,
}

#[derive(clap::Args, Clone)]
pub struct ShowArgs {
    /// Ids: #12 or 12 (observation), S12 (turn summary, listed with its session's other turns), P12 (prompt).
    #[arg(required = true)]
    pub ids: Vec<String>,
    /// Machine-readable output.
    #[arg(long)]
    pub json: bool,
}

#[derive(clap::Args, Clone)]
pub struct TimelineArgs {
    /// The item to look around: #12 or 12, S12, P12.
    pub id: String,
    /// Items before it.
    #[arg(long, short = 'b', default_value_t = 5)]
    pub before: usize,
    /// Items after it.
    #[arg(long, short = 'a', default_value_t = 5)]
    pub after: usize,
    /// Only what this agent produced: claude-code, codex, cursor, gemini, raw.
    #[arg(long)]
    pub agent: Option<String>,
    /// Machine-readable output.
    #[arg(long)]
    pub json: bool,
}

#[derive(clap::Args, Clone)]
pub struct ContextArgs {
    /// The project: a directory inside it, its stored path (even if it moved
    /// since), or its name (default: the current one).
    #[arg(long)]
    pub project: Option<String>,
    /// Only what this agent produced: claude-code, codex, cursor, gemini, raw.
    #[arg(long)]
    pub agent: Option<String>,
    /// The index and what went into it, as JSON.
    #[arg(long)]
    pub json: bool,
}

#[derive(clap::Args, Clone)]
pub struct ProjectsArgs {
    /// Machine-readable output.
    #[arg(long)]
    pub json: bool,
}

#[derive(clap::Args, Clone)]
pub struct OpenArgs {
    /// Print the one-time sign-in link instead of opening a browser.
    #[arg(long)]
    pub print: bool,
}

#[derive(clap::Args, Clone)]
pub struct WorkerArgs {
    #[command(subcommand)]
    pub command: WorkerCommand,
}

#[derive(clap::Subcommand, Clone)]
pub enum WorkerCommand {
    /// Start the worker in the background; returns once it answers.
    Start {
        /// Give up waiting for it after this many seconds.
        #[arg(long, default_value_t = 15)]
        timeout: u64,
    },
    /// Stop the worker gracefully (its current batch is finished or given back).
    Stop {
        /// Give up waiting for it to stop after this many seconds.
        #[arg(long, default_value_t = 15)]
        timeout: u64,
    },
    /// Is the worker running, on which port, with what backlog?
    ///
    /// Exit status 0 when it runs and answers, 3 when it does not run.
    Status {
        /// Machine-readable output.
        #[arg(long)]
        json: bool,
    },
    /// Stop, then start.
    Restart {
        /// Give up waiting at each step after this many seconds.
        #[arg(long, default_value_t = 15)]
        timeout: u64,
    },
    /// Run the worker in the foreground (logs to logs/worker.log, and to the terminal).
    Run,
    /// Put failed events back in the queue.
    Retry {
        /// Every failed event.
        #[arg(long, conflicts_with = "ids")]
        all: bool,
        /// Event ids (from `mnemo doctor`, `mnemo worker status` or /api/queue).
        ids: Vec<i64>,
    },
}

#[derive(clap::Args, Clone)]
pub struct StatsArgs {
    /// Machine-readable output.
    #[arg(long)]
    pub json: bool,
    /// How many days back (today included), 1 to 3660.
    #[arg(long, default_value_t = 7, value_parser = clap::value_parser!(u32).range(1..=3660))]
    pub days: u32,
}

#[derive(clap::Args, Clone)]
#[command(group = clap::ArgGroup::new("what").required(true).args(["ids", "session", "project"]))]
pub struct ForgetArgs {
    /// Ids: #12 or 12 (observation), S12 (turn summary), P12 (prompt).
    pub ids: Vec<String>,
    /// A whole agent session: the platform's session id, exactly.
    #[arg(long)]
    pub session: Option<String>,
    /// A whole project: a directory inside it, its stored path, or its name.
    #[arg(long)]
    pub project: Option<String>,
    /// Count what would be forgotten; change nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Then rewrite the database so that the file shrinks.
    #[arg(long, conflicts_with = "dry_run")]
    pub vacuum: bool,
    /// Machine-readable output.
    #[arg(long)]
    pub json: bool,
}

#[derive(clap::Args, Clone)]
pub struct EditArgs {
    /// The observation: #12 or 12.
    pub id: String,
    /// The new title (one line).
    #[arg(long)]
    pub title: Option<String>,
    /// The new subtitle.
    #[arg(long)]
    pub subtitle: Option<String>,
    /// The new narrative.
    #[arg(long)]
    pub narrative: Option<String>,
    /// The facts, replacing the stored ones (repeat for several).
    #[arg(long = "fact")]
    pub facts: Vec<String>,
    /// bugfix (fix), feature (feat), refactor, change, discovery, decision, memory.
    #[arg(long = "type", short = 't')]
    pub obs_type: Option<String>,
    /// Machine-readable output (the edited record).
    #[arg(long)]
    pub json: bool,
}

#[derive(clap::Args, Clone)]
pub struct PinArgs {
    /// The observation: #12 or 12.
    pub id: String,
}

#[derive(clap::Args, Clone)]
pub struct RedactArgs {
    /// The exact text to find (at least 4 characters).
    pub text: String,
    /// Machine-readable output.
    #[arg(long)]
    pub json: bool,
}

/// `mnemo mcp` takes no arguments.
#[derive(clap::Args, Clone)]
pub struct McpArgs {}

#[derive(clap::Args, Clone)]
pub struct InstallArgs {
    /// The agent hosts: claude-code, codex, a comma list, or all. Default:
    /// every host found on this machine (Claude Code when none is); for
    /// uninstall, every host mnemo is wired into.
    #[arg(long, value_delimiter = ',')]
    pub platform: Vec<String>,
    /// user: the host's own settings (~/.claude/settings.json,
    /// ~/.codex/hooks.json); project: the project's (.claude/settings.json,
    /// .codex/hooks.json).
    #[arg(long, value_enum, default_value_t = Scope::User)]
    pub scope: Scope,
    /// The project directory for --scope project (default: the current directory).
    #[arg(long)]
    pub project_dir: Option<PathBuf>,
    /// Show what would change without writing anything.
    #[arg(long)]
    pub dry_run: bool,
    /// install: also import past sessions from the transcripts of the
    /// hosts installed (Claude Code's, Codex's rollouts), without asking.
    #[arg(long, conflicts_with = "no_import")]
    pub import_transcripts: bool,
    /// install: do not offer to import past sessions.
    #[arg(long)]
    pub no_import: bool,
}

#[derive(ValueEnum, Clone, Copy, PartialEq, Eq, Debug)]
pub enum ImportSource {
    /// claude-mem's SQLite database (thedotmack/claude-mem).
    ClaudeMem,
}

#[derive(ValueEnum, Clone, Copy, PartialEq, Eq, Debug)]
pub enum Scope {
    /// Every session of this user.
    User,
    /// Sessions in one project, with a settings file a team can commit.
    Project,
}

/// Parses `args` and runs the command; returns the exit code.
pub fn run(args: Vec<OsString>) -> i32 {
    let cli = match Cli::try_parse_from(args) {
        Ok(cli) => cli,
        Err(e) => {
            let _ = e.print();
            return e.exit_code();
        }
    };
    let result = match cli.command {
        Command::Hook {
            platform,
            event,
            payload,
        } => {
            return mnemo_capture::io::run(&platform, event.as_deref(), payload.as_deref());
        }
        Command::Install(args) => commands::install::install(&args),
        Command::Uninstall(args) => commands::install::uninstall(&args),
        Command::Export { output } => commands::transfer::export(output.as_deref()),
        Command::Import {
            transcripts: Some(dir),
            ..
        } => commands::import_transcripts::run(dir.as_deref()),
        Command::Import {
            from: Some(ImportSource::ClaudeMem),
            file,
            map,
            dry_run,
            ..
        } => commands::import_claude_mem::run(file.as_deref(), &map, dry_run),
        Command::Import { file, project, .. } => commands::transfer::import(
            file.as_deref().unwrap_or(std::path::Path::new("-")),
            project.as_deref(),
        ),
        Command::Doctor { fix, json } => commands::doctor::run(fix, json),
        Command::Worker(args) => commands::worker::run(args),
        Command::Projects(args) => commands::projects::run(args),
        Command::Stats(args) => commands::stats::run(args),
        Command::Search(args) => commands::recall::search(args),
        Command::Show(args) => commands::recall::show(args),
        Command::Timeline(args) => commands::recall::timeline(args),
        Command::Context(args) => commands::recall::context(args),
        Command::Mcp(args) => commands::mcp::run(args),
        Command::Open(args) => commands::open::run(args),
        Command::Forget(args) => commands::curate::forget(args),
        Command::Edit(args) => commands::curate::edit(args),
        Command::Pin(args) => commands::curate::pin(args, true),
        Command::Unpin(args) => commands::curate::pin(args, false),
        Command::Redact(args) => commands::curate::redact(args),
        Command::Sync(args) => commands::sync::run(args),
        Command::Share(args) => commands::sync::share(args),
        Command::Server(args) => commands::sync_server::run(args),
    };
    match result {
        Ok(code) => code,
        Err(e) if is_closed_pipe(&e) => 0,
        Err(e) => {
            crate::output::error(&format!("{e:#}"));
            1
        }
    }
}

/// A reader that went away (`mnemo export | head -1`) is not an error.
fn is_closed_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|cause| {
        cause
            .downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}

/// The message `println!` panics with when stdout is a closed pipe.
pub fn is_closed_pipe_message(message: &str) -> bool {
    let broken = std::io::Error::from(std::io::ErrorKind::BrokenPipe).to_string();
    message.starts_with("failed printing to stdout")
        && (message.contains(&broken) || message.contains("Broken pipe"))
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    use super::*;

    /// Every subcommand, flag and positional, at every depth, says what it is for.
    #[test]
    fn every_command_and_argument_has_help() {
        fn walk(cmd: &clap::Command, path: &str, missing: &mut Vec<String>) {
            for arg in cmd.get_arguments() {
                let builtin = matches!(arg.get_id().as_str(), "help" | "version");
                if !builtin && arg.get_help().is_none() && arg.get_long_help().is_none() {
                    missing.push(format!("{path} {}", arg.get_id()));
                }
                let values = if arg.get_action().takes_values() {
                    arg.get_possible_values()
                } else {
                    Vec::new()
                };
                for value in values {
                    if value.get_help().is_none() {
                        missing.push(format!("{path} {}={}", arg.get_id(), value.get_name()));
                    }
                }
            }
            for sub in cmd.get_subcommands() {
                let sub_path = format!("{path} {}", sub.get_name());
                if sub.get_name() != "help" && sub.get_about().is_none() {
                    missing.push(sub_path.clone());
                }
                walk(sub, &sub_path, missing);
            }
        }
        let mut missing = Vec::new();
        walk(&Cli::command(), "mnemo", &mut missing);
        assert!(missing.is_empty(), "without help text: {missing:#?}");
    }

    #[test]
    fn a_closed_pipe_is_recognised_in_errors_and_print_panics() {
        let e = anyhow::Error::from(std::io::Error::from(std::io::ErrorKind::BrokenPipe))
            .context("writing the export");
        assert!(is_closed_pipe(&e));
        assert!(!is_closed_pipe(&anyhow::anyhow!("disk full")));
        assert!(is_closed_pipe_message(
            "failed printing to stdout: Broken pipe (os error 32)"
        ));
        assert!(!is_closed_pipe_message("index out of bounds"));
    }
}
