//! `mnemo install` / `mnemo uninstall`: wiring into Claude Code's settings.

use std::path::{Path, PathBuf};

use anyhow::Context as _;
use mnemo_install::{ChangeKind, HookSpec, SettingsEdit, settings_file, shell_quote};

use crate::cli::{InstallArgs, Scope};
use crate::output::{data_and_config, open_store};

/// The hooks mnemo needs, in the order Claude Code fires them. Timeouts are
/// explicit and generous next to our few milliseconds: they only matter when
/// the database lock is held for long, where the hook spools after
/// `store.busy_timeout_ms` (3 s by default) well within them.
pub const CLAUDE_CODE_EVENTS: &[(&str, Option<&str>, u32)] = &[
    ("SessionStart", Some("startup|resume|clear|compact"), 10),
    ("UserPromptSubmit", None, 10),
    ("PreToolUse", Some("*"), 10),
    ("PostToolUse", Some("*"), 10),
    ("PostToolUseFailure", Some("*"), 10),
    ("Stop", None, 10),
    ("SessionEnd", None, 10),
];

pub fn claude_code_hooks(binary: &Path) -> Vec<HookSpec> {
    let program = shell_quote(&binary.to_string_lossy());
    CLAUDE_CODE_EVENTS
        .iter()
        .map(|(event, matcher, timeout)| HookSpec {
            event: (*event).to_owned(),
            matcher: matcher.map(str::to_owned),
            command: format!("{program} hook claude-code {event}"),
            timeout_secs: *timeout,
        })
        .collect()
}

/// The running binary, as an absolute path with symlinks resolved, so that
/// hooks keep working whatever the agent's PATH is.
pub fn current_binary() -> anyhow::Result<PathBuf> {
    let exe = std::env::current_exe().context("cannot find the path of the running mnemo")?;
    Ok(std::fs::canonicalize(&exe).unwrap_or(exe))
}

/// Claude Code's settings file for a scope. `CLAUDE_CONFIG_DIR` moves
/// `~/.claude`, as it does for Claude Code itself.
pub fn settings_path(scope: Scope, project_dir: Option<&Path>) -> anyhow::Result<PathBuf> {
    Ok(match scope {
        Scope::User => claude_config_dir()?.join("settings.json"),
        Scope::Project => {
            let dir = match project_dir {
                Some(d) => d.to_owned(),
                None => std::env::current_dir().context("cannot read the current directory")?,
            };
            dir.join(".claude").join("settings.json")
        }
    })
}

/// Claude Code's own state file, where `claude mcp add --scope user` keeps
/// user-scoped MCP servers: `~/.claude.json`, or `.claude.json` inside
/// `CLAUDE_CONFIG_DIR` when that is set.
pub fn claude_json_path() -> anyhow::Result<PathBuf> {
    if let Some(dir) = std::env::var_os("CLAUDE_CONFIG_DIR").filter(|d| !d.is_empty()) {
        return Ok(PathBuf::from(dir).join(".claude.json"));
    }
    mnemo_core::paths::home_dir()
        .map(|h| h.join(".claude.json"))
        .context("cannot find the home directory (HOME is not set)")
}

/// The MCP server entry: `mnemo mcp` at the binary's absolute path.
pub fn mcp_args() -> Vec<String> {
    vec!["mcp".to_owned()]
}

/// The edit of `~/.claude.json` that registers our MCP server at user
/// scope, the way `claude mcp add --scope user` would.
pub fn plan_mcp(binary: &Path) -> anyhow::Result<(PathBuf, SettingsEdit)> {
    let path = claude_json_path()?;
    let existing = settings_file::read(&path)?;
    let edit = mnemo_install::plan_mcp_install(
        existing.as_deref().unwrap_or(""),
        mnemo_mcp::SERVER_NAME,
        &binary.to_string_lossy(),
        &mcp_args(),
    )
    .map_err(|e| settings_file::FileError::invalid(&path, e))?;
    Ok((path, edit))
}

/// Prints and (unless dry) writes the MCP registration; true when it
/// changed (or would change) anything.
fn install_mcp(binary: &Path, dry_run: bool) -> anyhow::Result<bool> {
    let (path, edit) = plan_mcp(binary)?;
    println!("  mcp:      {} (user scope)", path.display());
    print_changes(&edit);
    write_unless_dry(&path, &edit, dry_run)?;
    Ok(!edit.is_noop())
}

/// Removes our MCP registration (user scope); other servers stay.
fn uninstall_mcp(dry_run: bool) -> anyhow::Result<()> {
    let path = claude_json_path()?;
    let Some(existing) = settings_file::read(&path)? else {
        return Ok(());
    };
    let edit = mnemo_install::plan_mcp_uninstall(&existing, mnemo_mcp::SERVER_NAME)
        .map_err(|e| settings_file::FileError::invalid(&path, e))?;
    if edit.changes.is_empty() {
        return Ok(());
    }
    println!("  mcp:      {} (user scope)", path.display());
    print_changes(&edit);
    write_unless_dry(&path, &edit, dry_run)
}

pub fn claude_config_dir() -> anyhow::Result<PathBuf> {
    if let Some(dir) = std::env::var_os("CLAUDE_CONFIG_DIR").filter(|d| !d.is_empty()) {
        return Ok(PathBuf::from(dir));
    }
    mnemo_core::paths::home_dir()
        .map(|h| h.join(".claude"))
        .context("cannot find the home directory (HOME is not set)")
}

pub fn install(args: &InstallArgs) -> anyhow::Result<i32> {
    let binary = current_binary()?;
    let path = settings_path(args.scope, args.project_dir.as_deref())?;
    let existing = settings_file::read(&path)?;
    let edit = mnemo_install::plan_install(
        existing.as_deref().unwrap_or(""),
        &claude_code_hooks(&binary),
    )
    .map_err(|e| settings_file::FileError::invalid(&path, e))?;

    println!(
        "mnemo install: Claude Code, {} scope{}",
        scope_name(args.scope),
        if args.dry_run {
            " (dry run: nothing written)"
        } else {
            ""
        }
    );
    println!("  binary:   {}", binary.display());
    println!("  settings: {}", path.display());
    print_changes(&edit);
    write_unless_dry(&path, &edit, args.dry_run)?;
    // The MCP tools (mcp__mnemo__search, ...) are registered at user scope
    // only: a project-scoped install keeps out of the user's own files.
    let mcp_changed = args.scope == Scope::User && install_mcp(&binary, args.dry_run)?;

    if !args.dry_run {
        let (data, config) = data_and_config()?;
        open_store(&data, &config)?;
        println!("  data:     {} (database ready)", data.root().display());
        if edit.is_noop() && !mcp_changed {
            println!("Already installed; nothing changed.");
        } else {
            println!(
                "Done. New Claude Code sessions are captured and start with what mnemo remembers of their project; `mnemo doctor` checks the wiring."
            );
        }
        if !args.no_import {
            crate::commands::import_transcripts::offer(args.import_transcripts)?;
        }
    }
    Ok(0)
}

pub fn uninstall(args: &InstallArgs) -> anyhow::Result<i32> {
    let path = settings_path(args.scope, args.project_dir.as_deref())?;
    let Some(existing) = settings_file::read(&path)? else {
        println!(
            "mnemo uninstall: {} does not exist; no hooks to remove.",
            path.display()
        );
        if args.scope == Scope::User {
            uninstall_mcp(args.dry_run)?;
        }
        return Ok(0);
    };
    let edit = mnemo_install::plan_uninstall(&existing)
        .map_err(|e| settings_file::FileError::invalid(&path, e))?;
    println!(
        "mnemo uninstall: Claude Code, {} scope{}",
        scope_name(args.scope),
        if args.dry_run {
            " (dry run: nothing written)"
        } else {
            ""
        }
    );
    println!("  settings: {}", path.display());
    if edit.changes.is_empty() {
        println!("  no mnemo hooks found; nothing changed.");
    } else {
        print_changes(&edit);
        write_unless_dry(&path, &edit, args.dry_run)?;
    }
    if args.scope == Scope::User {
        uninstall_mcp(args.dry_run)?;
    }
    if !args.dry_run {
        println!("Done. Your data stays in the data directory until you delete it.");
    }
    Ok(0)
}

fn write_unless_dry(path: &Path, edit: &SettingsEdit, dry_run: bool) -> anyhow::Result<()> {
    if dry_run || edit.is_noop() {
        return Ok(());
    }
    let report = settings_file::write_atomic(path, &edit.new_text)?;
    if report.written != path {
        println!(
            "  wrote through the symlink to {}",
            report.written.display()
        );
    }
    if let Some(backup) = report.backup {
        println!("  backup:   {}", backup.display());
    }
    Ok(())
}

fn print_changes(edit: &SettingsEdit) {
    for change in &edit.changes {
        let mark = match change.kind {
            ChangeKind::Added => "+",
            ChangeKind::Updated => "~",
            ChangeKind::Unchanged => "=",
            ChangeKind::Removed => "-",
        };
        println!(
            "  {mark} {:<19} {} ({})",
            change.event, change.command, change.kind
        );
    }
}

fn scope_name(scope: Scope) -> &'static str {
    match scope {
        Scope::User => "user",
        Scope::Project => "project",
    }
}
