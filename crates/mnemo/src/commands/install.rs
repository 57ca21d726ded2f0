//! `mnemo install` / `mnemo uninstall`: wiring into Claude Code's settings.

use std::path::{Path, PathBuf};

use anyhow::Context as _;
use mnemo_install::{ChangeKind, HookSpec, SettingsEdit, settings_file, shell_quote};

use mnemo_core::DataDir;

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

/// The program hooks run: this binary's absolute path at user scope (hooks
/// work whatever the agent's PATH is), plain `mnemo` from PATH at project
/// scope (the settings file is committed and runs on teammates' machines).
pub fn hook_program(scope: Scope, binary: &Path) -> String {
    match scope {
        Scope::User => shell_quote(&binary.to_string_lossy()),
        Scope::Project => "mnemo".to_owned(),
    }
}

pub fn claude_code_hooks(program: &str) -> Vec<HookSpec> {
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
    write_user_file(&path, &edit, dry_run)?;
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
    write_user_file(&path, &edit, dry_run)
}

/// Writes a file of the user's own (backed up beside it), unless dry.
fn write_user_file(path: &Path, edit: &SettingsEdit, dry_run: bool) -> anyhow::Result<()> {
    if dry_run || edit.is_noop() {
        return Ok(());
    }
    report_write(path, &settings_file::write_atomic(path, &edit.new_text)?);
    Ok(())
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
    let program = hook_program(args.scope, &binary);
    let edit = mnemo_install::plan_install(
        existing.as_deref().unwrap_or(""),
        &claude_code_hooks(&program),
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
    let data = DataDir::resolve()?;
    write_unless_dry(&path, &edit, args, &data)?;
    if args.scope == Scope::Project && !mnemo_on_path() {
        println!(
            "  note:     these hooks run `mnemo` from PATH, and there is none on this PATH; \
             put {} (or a link to it) on PATH",
            binary.display()
        );
    }
    // The MCP tools (mcp__mnemo__search, ...) are registered at user scope
    // only: a project-scoped install keeps out of the user's own files.
    let mcp = match args.scope {
        Scope::User => Some(install_mcp(&binary, args.dry_run)),
        Scope::Project => None,
    };
    if args.dry_run {
        return match mcp {
            Some(Err(e)) => {
                crate::output::error(&format!("the MCP registration would fail: {e:#}"));
                Ok(1)
            }
            _ => Ok(0),
        };
    }
    let (data, config) = data_and_config()?;
    open_store(&data, &config)?;
    println!("  data:     {} (database ready)", data.root().display());
    let code = match mcp {
        Some(Err(e)) => {
            print_half_installed(&path, &e);
            1
        }
        Some(Ok(false)) | None if edit.is_noop() => {
            println!("Already installed; nothing changed.");
            0
        }
        _ => {
            println!(
                "Done. New Claude Code sessions are captured and start with what mnemo remembers of their project; `mnemo doctor` checks the wiring."
            );
            0
        }
    };
    if !args.no_import {
        crate::commands::import_transcripts::offer(args.import_transcripts)?;
    }
    Ok(code)
}

/// Hooks are in, the MCP server is not: say exactly that, and how to finish.
fn print_half_installed(settings: &Path, e: &anyhow::Error) {
    let claude_json = claude_json_path()
        .map(|p| p.display().to_string())
        .unwrap_or_else(|_| "~/.claude.json".to_owned());
    println!("Partly installed:");
    println!(
        "  hooks: installed in {} (sessions are captured and recalled)",
        settings.display()
    );
    println!(
        "  MCP server: not registered in {claude_json} (the agent has no mcp__mnemo__* tools)"
    );
    crate::output::error(&format!("{e:#}"));
    eprintln!(
        "  to finish: fix {claude_json} as the message says, then run `mnemo install` again \
         (or `mnemo doctor --fix`)"
    );
}

/// Is there a `mnemo` on this PATH (what project-scope hooks run)?
fn mnemo_on_path() -> bool {
    let name = if cfg!(windows) { "mnemo.exe" } else { "mnemo" };
    std::env::var_os("PATH")
        .is_some_and(|paths| std::env::split_paths(&paths).any(|dir| dir.join(name).is_file()))
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
        let data = DataDir::resolve()?;
        write_unless_dry(&path, &edit, args, &data)?;
        if !args.dry_run {
            remove_left_empty(&path, args.scope)?;
        }
    }
    if args.scope == Scope::User
        && let Err(e) = uninstall_mcp(args.dry_run)
    {
        println!("Partly uninstalled:");
        println!("  hooks: removed from {}", path.display());
        println!("  MCP server: still registered (its file could not be edited)");
        crate::output::error(&format!("{e:#}"));
        eprintln!("  to finish: fix the file named, then run `mnemo uninstall` again");
        return Ok(1);
    }
    if !args.dry_run {
        println!("Done. Your data stays in the data directory until you delete it.");
    }
    Ok(0)
}

/// A settings file that is now `{}` was only there for mnemo: it goes, and
/// so does a project's `.claude` directory left empty by that.
fn remove_left_empty(path: &Path, scope: Scope) -> anyhow::Result<()> {
    if !settings_file::remove_if_empty(path)? {
        return Ok(());
    }
    println!("  removed:  {} (it held nothing else)", path.display());
    if scope == Scope::Project
        && let Some(dir) = path.parent()
        && std::fs::remove_dir(dir).is_ok()
    {
        println!("  removed:  {} (empty)", dir.display());
    }
    Ok(())
}

/// Writes the edit (unless dry). At project scope the previous content is
/// kept in the data directory, not in the work tree a team commits.
fn write_unless_dry(
    path: &Path,
    edit: &SettingsEdit,
    args: &InstallArgs,
    data: &DataDir,
) -> anyhow::Result<()> {
    if args.dry_run || edit.is_noop() {
        return Ok(());
    }
    let backup = match args.scope {
        Scope::User => settings_file::backup_path(path),
        Scope::Project => project_backup_path(data, path),
    };
    let report = settings_file::write_atomic_keeping(path, &edit.new_text, Some(&backup))?;
    report_write(path, &report);
    Ok(())
}

/// `<data>/backups/<the path, flattened>.mnemo.bak`
fn project_backup_path(data: &DataDir, path: &Path) -> PathBuf {
    let absolute = std::path::absolute(path).unwrap_or_else(|_| path.to_owned());
    let flat: String = absolute
        .to_string_lossy()
        .trim_start_matches(['/', '\\'])
        .chars()
        .map(|c| {
            if c == '/' || c == '\\' || c == ':' {
                '%'
            } else {
                c
            }
        })
        .collect();
    data.root()
        .join("backups")
        .join(format!("{flat}{}", settings_file::BACKUP_SUFFIX))
}

fn report_write(path: &Path, report: &mnemo_install::WriteReport) {
    if report.written != path {
        println!(
            "  wrote through the symlink to {}",
            report.written.display()
        );
    }
    if let Some(backup) = &report.backup {
        println!("  backup:   {}", backup.display());
    }
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
