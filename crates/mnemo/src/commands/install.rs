//! `mnemo install` / `mnemo uninstall`: wiring into Claude Code's settings.

use std::path::{Path, PathBuf};

use anyhow::Context as _;
use mnemo_install::{ChangeKind, HookSpec, SettingsEdit, settings_file, shell_quote};

use mnemo_core::DataDir;

use super::claude_plugin;
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
    let edit = plan_mcp_of(existing.as_deref().unwrap_or(""), binary)
        .map_err(|e| settings_file::FileError::invalid(&path, e))?;
    Ok((path, edit))
}

/// The MCP registration's edit of `existing` (the content of `~/.claude.json`).
fn plan_mcp_of(existing: &str, binary: &Path) -> Result<SettingsEdit, mnemo_install::ParseError> {
    mnemo_install::plan_mcp_install(
        existing,
        mnemo_mcp::SERVER_NAME,
        &binary.to_string_lossy(),
        &mcp_args(),
    )
}

/// Prints and (unless dry) writes the MCP registration; true when it
/// changed (or would change) anything.
fn install_mcp(binary: &Path, dry_run: bool) -> anyhow::Result<bool> {
    let path = claude_json_path()?;
    let existing = settings_file::read(&path)?;
    let edit = plan_mcp_of(existing.as_deref().unwrap_or(""), binary)
        .map_err(|e| settings_file::FileError::invalid(&path, e))?;
    println!("  mcp:      {} (user scope)", path.display());
    print_changes(&edit);
    if !dry_run {
        let backup = settings_file::backup_path(&path);
        write_edit(&path, existing, edit.clone(), &backup, |text| {
            plan_mcp_of(text, binary)
        })?;
    }
    Ok(!edit.is_noop())
}

/// Removes our MCP registration (user scope); other servers stay.
fn uninstall_mcp(dry_run: bool) -> anyhow::Result<()> {
    let path = claude_json_path()?;
    let Some(existing) = settings_file::read(&path)? else {
        return Ok(());
    };
    let plan = |text: &str| mnemo_install::plan_mcp_uninstall(text, mnemo_mcp::SERVER_NAME);
    let edit = plan(&existing).map_err(|e| settings_file::FileError::invalid(&path, e))?;
    if edit.changes.is_empty() {
        return Ok(());
    }
    println!("  mcp:      {} (user scope)", path.display());
    print_changes(&edit);
    if !dry_run {
        let backup = settings_file::backup_path(&path);
        write_edit(&path, Some(existing), edit, &backup, plan)?;
    }
    Ok(())
}

/// How many times an edit is planned again when another program keeps
/// writing the file between our read and our rename.
const WRITE_ATTEMPTS: usize = 3;

/// Writes `edit`, planned from `read` (the file's content then), with the
/// previous content kept at `backup`. If another program wrote the file
/// meanwhile, its change is kept: the edit is planned again from the new
/// content (`plan`) and written over that instead.
fn write_edit(
    path: &Path,
    mut read: Option<String>,
    mut edit: SettingsEdit,
    backup: &Path,
    plan: impl Fn(&str) -> Result<SettingsEdit, mnemo_install::ParseError>,
) -> anyhow::Result<()> {
    for attempt in 1..=WRITE_ATTEMPTS {
        if edit.is_noop() {
            return Ok(());
        }
        match settings_file::write_atomic_checked(
            path,
            read.as_deref(),
            &edit.new_text,
            Some(backup),
        ) {
            Ok(report) => {
                report_write(path, &report);
                return Ok(());
            }
            Err(settings_file::FileError::Changed { .. }) if attempt < WRITE_ATTEMPTS => {
                println!(
                    "  note:     {} changed while mnemo was writing it; the edit is applied to its new content",
                    path.display()
                );
                read = settings_file::read(path)?;
                edit = plan(read.as_deref().unwrap_or(""))
                    .map_err(|e| settings_file::FileError::invalid(path, e))?;
            }
            Err(e) => return Err(e.into()),
        }
    }
    unreachable!("the last attempt returns")
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
    if args.scope == Scope::User
        && let Some(plugin) = claude_plugin::find(args.project_dir.as_deref()).filter(|p| p.enabled)
    {
        return install_beside_plugin(args, &binary, &plugin);
    }
    let path = settings_path(args.scope, args.project_dir.as_deref())?;
    let existing = settings_file::read(&path)?;
    let hooks = claude_code_hooks(&hook_program(args.scope, &binary));
    let plan = |text: &str| mnemo_install::plan_install(text, &hooks);
    let edit = plan(existing.as_deref().unwrap_or(""))
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
    write_unless_dry(&path, existing, &edit, args, &data, plan)?;
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

/// The mnemo plugin already runs the hooks and the MCP server: adding ours at user scope would
/// run every hook twice, so only the database is made (and the transcript import offered).
fn install_beside_plugin(
    args: &InstallArgs,
    binary: &Path,
    plugin: &claude_plugin::Plugin,
) -> anyhow::Result<i32> {
    println!(
        "mnemo install: Claude Code, user scope{}",
        if args.dry_run {
            " (dry run: nothing written)"
        } else {
            ""
        }
    );
    println!("  binary:   {}", binary.display());
    println!("  plugin:   {}", plugin.describe());
    println!(
        "  the plugin runs mnemo's hooks and MCP server; no hooks added to {} (a second set \
         would run every hook twice)",
        settings_path(Scope::User, None)?.display()
    );
    if !mnemo_on_path() {
        println!(
            "  note:     the plugin runs `mnemo` from PATH, and there is none on this PATH; \
             put {} (or a link to it) on PATH",
            binary.display()
        );
    }
    print_earlier_hooks()?;
    if args.dry_run {
        return Ok(0);
    }
    let (data, config) = data_and_config()?;
    open_store(&data, &config)?;
    println!("  data:     {} (database ready)", data.root().display());
    println!(
        "Done. New Claude Code sessions are captured through the plugin; `mnemo doctor` checks the wiring."
    );
    if !args.no_import {
        crate::commands::import_transcripts::offer(args.import_transcripts)?;
    }
    Ok(0)
}

/// Hooks an earlier `mnemo install` left in the user settings, beside the plugin's.
fn print_earlier_hooks() -> anyhow::Result<()> {
    let path = settings_path(Scope::User, None)?;
    let Some(text) = settings_file::read(&path)? else {
        return Ok(());
    };
    let earlier = mnemo_install::find_mnemo_hooks(&text)
        .map_err(|e| settings_file::FileError::invalid(&path, e))?;
    if !earlier.is_empty() {
        println!(
            "  note:     {} still holds {} mnemo hooks from an earlier `mnemo install`; with the \
             plugin every hook runs twice (harmless: each event is recorded once), and `mnemo \
             uninstall` removes them (the plugin keeps working)",
            path.display(),
            earlier.len()
        );
    }
    Ok(())
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
    let existing = Some(existing);
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
        write_unless_dry(
            &path,
            existing,
            &edit,
            args,
            &data,
            mnemo_install::plan_uninstall,
        )?;
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
    read: Option<String>,
    edit: &SettingsEdit,
    args: &InstallArgs,
    data: &DataDir,
    plan: impl Fn(&str) -> Result<SettingsEdit, mnemo_install::ParseError>,
) -> anyhow::Result<()> {
    if args.dry_run || edit.is_noop() {
        return Ok(());
    }
    let backup = match args.scope {
        Scope::User => settings_file::backup_path(path),
        Scope::Project => project_backup_path(data, path),
    };
    write_edit(path, read, edit.clone(), &backup, plan)
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
