//! The command line: definitions and dispatch.

use std::ffi::OsString;
use std::path::PathBuf;

use clap::{Parser, Subcommand, ValueEnum};

use crate::commands;

#[derive(Parser)]
#[command(
    name = "mnemo",
    version,
    about = "Persistent memory for AI coding agents",
    long_about = "Persistent memory for AI coding agents.\n\n\
        mnemo captures what your coding agent does through its hooks, keeps it in a local \
        SQLite store (redacted of secrets and <private> text), and gives it back to the next \
        session.\n\nData lives in $MNEMO_DATA_DIR (default ~/.mnemo)."
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
        /// claude-code, codex, cursor, gemini or raw
        platform: String,
        /// The event name; taken from the payload when it says.
        event: Option<String>,
    },
    /// Wire mnemo into an agent host (Claude Code by default).
    Install(InstallArgs),
    /// Remove exactly what `mnemo install` added.
    Uninstall(InstallArgs),
    /// Write everything stored as JSON Lines on stdout.
    Export {
        /// Write to this file instead of stdout.
        #[arg(long, short)]
        output: Option<PathBuf>,
    },
    /// Read JSON Lines (as written by `export`) into the store; safe to repeat.
    Import {
        /// The file to read, or - for stdin.
        file: PathBuf,
        /// The project of observations and summaries that name none (a
        /// directory); without it, such lines are refused.
        #[arg(long)]
        project: Option<PathBuf>,
    },
    /// The background worker that compresses captured events.
    Worker(commands::worker::WorkerArgs),
    /// Token spend per day and per project, and the queue.
    Stats(commands::worker::StatsArgs),
    /// Full-text search over observations, summaries and prompts.
    Search(commands::recall::SearchArgs),
    /// Show observations (or summaries, prompts) in full by id.
    Show(commands::recall::ShowArgs),
    /// What came before and after an observation.
    Timeline(commands::recall::TimelineArgs),
    /// Print the context index that SessionStart injects for a project.
    Context(commands::recall::ContextArgs),
    /// The MCP server on stdio (what Claude Code runs).
    Mcp(commands::mcp::McpArgs),
    /// Check that everything is wired and healthy, and say how to fix what is not.
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
pub struct InstallArgs {
    #[arg(long, value_enum, default_value_t = PlatformArg::ClaudeCode)]
    pub platform: PlatformArg,
    /// user: ~/.claude/settings.json; project: .claude/settings.json of the project.
    #[arg(long, value_enum, default_value_t = Scope::User)]
    pub scope: Scope,
    /// The project directory for --scope project (default: the current directory).
    #[arg(long)]
    pub project_dir: Option<PathBuf>,
    /// Show what would change without writing anything.
    #[arg(long)]
    pub dry_run: bool,
}

#[derive(ValueEnum, Clone, Copy, PartialEq, Eq, Debug)]
pub enum PlatformArg {
    ClaudeCode,
}

#[derive(ValueEnum, Clone, Copy, PartialEq, Eq, Debug)]
pub enum Scope {
    User,
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
        Command::Hook { platform, event } => {
            return mnemo_capture::io::run(&platform, event.as_deref());
        }
        Command::Install(args) => commands::install::install(&args),
        Command::Uninstall(args) => commands::install::uninstall(&args),
        Command::Export { output } => commands::transfer::export(output.as_deref()),
        Command::Import { file, project } => commands::transfer::import(&file, project.as_deref()),
        Command::Doctor { fix, json } => commands::doctor::run(fix, json),
        Command::Worker(args) => commands::worker::worker(args),
        Command::Stats(args) => commands::worker::stats(args),
        Command::Search(args) => commands::recall::search(args),
        Command::Show(args) => commands::recall::show(args),
        Command::Timeline(args) => commands::recall::timeline(args),
        Command::Context(args) => commands::recall::context(args),
        Command::Mcp(args) => commands::mcp::run(args),
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            crate::output::error(&format!("{e:#}"));
            1
        }
    }
}
