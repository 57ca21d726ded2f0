//! `mnemo install` / `mnemo uninstall`: wiring mnemo into agent hosts.
//!
//! Which hosts: `--platform` (one, a comma list, or `all`), else every host
//! found on the machine (Claude Code when none is). What to write comes from
//! each host's install module ([`mnemo_install::Installer`]); this module
//! only shows the changes, backs files up and writes them, the same way for
//! every host.

use std::path::{Path, PathBuf};

use anyhow::Context as _;
use mnemo_core::host::Scope as HostScope;
use mnemo_core::model::Platform;
use mnemo_install::{ChangeKind, FilePlan, Installer, SettingsEdit, Target, settings_file};

use mnemo_core::DataDir;

use super::claude_plugin;
use crate::cli::{InstallArgs, Scope};
use crate::output::{data_and_config, open_store};

/// The running binary, as an absolute path with symlinks resolved, so that
/// hooks keep working whatever the agent's PATH is.
pub fn current_binary() -> anyhow::Result<PathBuf> {
    let exe = std::env::current_exe().context("cannot find the path of the running mnemo")?;
    Ok(std::fs::canonicalize(&exe).unwrap_or(exe))
}

/// Claude Code's configuration directory (`CLAUDE_CONFIG_DIR`, else
/// `~/.claude`), from the host table.
pub fn claude_config_dir() -> anyhow::Result<PathBuf> {
    mnemo_core::host::host(Platform::ClaudeCode)
        .config_dir()
        .context("cannot find the home directory (HOME is not set)")
}

/// The hosts `--platform` names, else those found on this machine (for
/// uninstall, `wired_at`: those with something of ours at that target's
/// scope), else Claude Code.
fn chosen_hosts(
    names: &[String],
    wired_at: Option<&Target>,
) -> anyhow::Result<Vec<&'static dyn Installer>> {
    if !names.is_empty() {
        return named_hosts(names);
    }
    let claude_code = mnemo_install::installer(Platform::ClaudeCode).expect("Claude Code installs");
    let found: Vec<_> = mnemo_install::installers()
        .iter()
        .copied()
        .filter(|i| match wired_at {
            Some(target) => i.host().platform == Platform::ClaudeCode || has_anything(*i, target),
            None => i.host().is_present(),
        })
        .collect();
    Ok(if found.is_empty() {
        vec![claude_code]
    } else {
        found
    })
}

/// `--platform codex,claude-code` or `all`, in the order given, each once.
fn named_hosts(names: &[String]) -> anyhow::Result<Vec<&'static dyn Installer>> {
    let all = mnemo_install::installers();
    let mut chosen: Vec<&'static dyn Installer> = Vec::new();
    for name in names.iter().flat_map(|n| n.split(',')).map(str::trim) {
        let picked: Vec<_> = match name {
            "all" => all.to_vec(),
            _ => match Platform::parse(name).and_then(mnemo_install::installer) {
                Some(i) => vec![i],
                None => anyhow::bail!(
                    "unknown platform `{name}`: expected {}, all, or a comma list",
                    all.iter()
                        .map(|i| i.host().platform.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            },
        };
        for i in picked {
            if !chosen
                .iter()
                .any(|c| c.host().platform == i.host().platform)
            {
                chosen.push(i);
            }
        }
    }
    Ok(chosen)
}

/// Does the host's hook file at the target's scope (or, at user scope, its
/// MCP registration) hold anything of ours?
fn has_anything(installer: &dyn Installer, target: &Target) -> bool {
    let hooks = installer
        .hook_file(target.scope, &target.project_dir)
        .and_then(|p| settings_file::read(&p).ok().flatten())
        .and_then(|text| installer.find_hooks(&text).ok())
        .is_some_and(|found| !found.is_empty());
    hooks || (target.scope == HostScope::User && matches!(installer.mcp_entry(), Ok(Some(_))))
}

fn target(args: &InstallArgs) -> anyhow::Result<Target> {
    let project_dir = match &args.project_dir {
        Some(d) => d.clone(),
        None => std::env::current_dir().context("cannot read the current directory")?,
    };
    Ok(Target {
        scope: host_scope(args.scope),
        project_dir,
        binary: current_binary()?,
    })
}

/// How one host's install went.
enum Outcome {
    Unchanged,
    Changed,
    /// Hooks in, MCP not: the error, and the file it concerns.
    HalfInstalled(PathBuf, PathBuf, anyhow::Error),
}

pub fn install(args: &InstallArgs) -> anyhow::Result<i32> {
    let hosts = chosen_hosts(&args.platform, None)?;
    let target = target(args)?;
    let data = DataDir::resolve()?;
    if args.platform.is_empty() && hosts.len() > 1 {
        let names: Vec<&str> = hosts.iter().map(|h| h.host().name).collect();
        println!("mnemo install: found {}", names.join(", "));
    }
    let mut outcomes = Vec::new();
    let mut dry_mcp_error = None;
    for host in &hosts {
        let (outcome, mcp_error) = install_host(*host, &target, args, &data)?;
        outcomes.push((*host, outcome));
        dry_mcp_error = dry_mcp_error.or(mcp_error);
    }
    if args.dry_run {
        return match dry_mcp_error {
            Some(e) => {
                crate::output::error(&format!("the MCP registration would fail: {e:#}"));
                Ok(1)
            }
            None => Ok(0),
        };
    }
    let (data, config) = data_and_config()?;
    open_store(&data, &config)?;
    println!("  data:     {} (database ready)", data.root().display());
    let mut code = 0;
    for (host, outcome) in &outcomes {
        if let Outcome::HalfInstalled(hooks, mcp, e) = outcome {
            print_half_installed(host.host().name, hooks, mcp, e);
            code = 1;
        }
    }
    if code == 0 {
        if outcomes
            .iter()
            .all(|(_, o)| matches!(o, Outcome::Unchanged))
        {
            println!("Already installed; nothing changed.");
        } else {
            let names: Vec<&str> = outcomes.iter().map(|(h, _)| h.host().name).collect();
            println!(
                "Done. New {} sessions are captured and start with what mnemo remembers of their project; `mnemo doctor` checks the wiring.",
                names.join(", ")
            );
        }
    }
    let claude_code = hosts
        .iter()
        .any(|h| h.host().platform == Platform::ClaudeCode);
    let platforms: Vec<Platform> = hosts.iter().map(|h| h.host().platform).collect();
    if !args.no_import {
        crate::commands::import_transcripts::offer(args.import_transcripts, &platforms)?;
    }
    if claude_code {
        crate::commands::switch_claude_mem::offer(args.no_import)?;
    }
    Ok(code)
}

/// Hooks, then (user scope) the MCP server, of one host. In a dry run the
/// MCP error is returned instead of failing.
fn install_host(
    host: &dyn Installer,
    target: &Target,
    args: &InstallArgs,
    data: &DataDir,
) -> anyhow::Result<(Outcome, Option<anyhow::Error>)> {
    if host.host().platform == Platform::ClaudeCode
        && args.scope == Scope::User
        && let Some(plugin) = claude_plugin::find(args.project_dir.as_deref()).filter(|p| p.enabled)
    {
        install_beside_plugin(host, target, args, &plugin)?;
        return Ok((Outcome::Unchanged, None));
    }
    let hooks = host.plan_hooks(target)?;
    println!(
        "mnemo install: {}, {} scope{}",
        host.host().name,
        scope_name(args.scope),
        if args.dry_run {
            " (dry run: nothing written)"
        } else {
            ""
        }
    );
    println!("  binary:   {}", target.binary.display());
    println!("  settings: {}", hooks.path.display());
    print_changes(&hooks.edit);
    let hooks_changed = !hooks.edit.is_noop();
    let hooks_path = hooks.path.clone();
    write_unless_dry(hooks, args, data)?;
    if args.scope == Scope::Project && !mnemo_on_path() {
        println!(
            "  note:     these hooks run `mnemo` from PATH, and there is none on this PATH; \
             put {} (or a link to it) on PATH",
            target.binary.display()
        );
    }
    // The MCP tools (mcp__mnemo__search, ...) are registered at user scope
    // only: a project-scoped install keeps out of the user's own files.
    let mcp = match args.scope {
        Scope::User => host.plan_mcp(target),
        Scope::Project => None,
    };
    let mcp_path = host.mcp_file().unwrap_or_default();
    let mcp_changed = match mcp {
        None => Ok(false),
        Some(planned) => planned.map_err(anyhow::Error::from).and_then(|plan| {
            println!("  mcp:      {} (user scope)", plan.path.display());
            print_changes(&plan.edit);
            let changed = !plan.edit.is_noop();
            if !args.dry_run {
                let backup = settings_file::backup_path(&plan.path);
                write_plan(plan, Some(&backup))?;
            }
            Ok(changed)
        }),
    };
    Ok(match mcp_changed {
        Err(e) if args.dry_run => (Outcome::Unchanged, Some(e)),
        Err(e) => (Outcome::HalfInstalled(hooks_path, mcp_path, e), None),
        Ok(mcp_changed) if hooks_changed || mcp_changed => (Outcome::Changed, None),
        Ok(_) => (Outcome::Unchanged, None),
    })
}

/// The mnemo plugin already runs Claude Code's hooks and MCP server: adding
/// ours at user scope would run every hook twice, so nothing is added.
fn install_beside_plugin(
    host: &dyn Installer,
    target: &Target,
    args: &InstallArgs,
    plugin: &claude_plugin::Plugin,
) -> anyhow::Result<()> {
    println!(
        "mnemo install: {}, user scope{}",
        host.host().name,
        if args.dry_run {
            " (dry run: nothing written)"
        } else {
            ""
        }
    );
    println!("  binary:   {}", target.binary.display());
    println!("  plugin:   {}", plugin.describe());
    let settings = host
        .hook_file(HostScope::User, &target.project_dir)
        .unwrap_or_default();
    println!(
        "  the plugin runs mnemo's hooks and MCP server; no hooks added to {} (a second set \
         would run every hook twice)",
        settings.display()
    );
    if !mnemo_on_path() {
        println!(
            "  note:     the plugin runs `mnemo` from PATH, and there is none on this PATH; \
             put {} (or a link to it) on PATH",
            target.binary.display()
        );
    }
    let Some(text) = settings_file::read(&settings)? else {
        return Ok(());
    };
    let earlier = host
        .find_hooks(&text)
        .map_err(|e| settings_file::FileError::invalid(&settings, e))?;
    if !earlier.is_empty() {
        println!(
            "  note:     {} still holds {} mnemo hooks from an earlier `mnemo install`; with the \
             plugin every hook runs twice (harmless: each event is recorded once), and `mnemo \
             uninstall` removes them (the plugin keeps working)",
            settings.display(),
            earlier.len()
        );
    }
    Ok(())
}

/// Hooks are in, the MCP server is not: say exactly that, and how to finish.
fn print_half_installed(name: &str, settings: &Path, mcp: &Path, e: &anyhow::Error) {
    println!("Partly installed ({name}):");
    println!(
        "  hooks: installed in {} (sessions are captured and recalled)",
        settings.display()
    );
    println!(
        "  MCP server: not registered in {} (the agent has no mcp__mnemo__* tools)",
        mcp.display()
    );
    crate::output::error(&format!("{e:#}"));
    eprintln!(
        "  to finish: fix {} as the message says, then run `mnemo install` again \
         (or `mnemo doctor --fix`)",
        mcp.display()
    );
}

/// Is there a `mnemo` on this PATH (what project-scope hooks run)?
fn mnemo_on_path() -> bool {
    let name = if cfg!(windows) { "mnemo.exe" } else { "mnemo" };
    std::env::var_os("PATH")
        .is_some_and(|paths| std::env::split_paths(&paths).any(|dir| dir.join(name).is_file()))
}

pub fn uninstall(args: &InstallArgs) -> anyhow::Result<i32> {
    let target = target(args)?;
    let hosts = chosen_hosts(&args.platform, Some(&target))?;
    let mut code = 0;
    for host in hosts {
        code = code.max(uninstall_host(host, &target, args)?);
    }
    if code == 0 && !args.dry_run {
        finish_uninstall(args)?;
    }
    Ok(code)
}

/// After every host is unwired: stop the worker (unless other hosts, not
/// uninstalled, still use it), and say what is kept and how to remove it.
fn finish_uninstall(args: &InstallArgs) -> anyhow::Result<()> {
    let data = DataDir::resolve()?;
    let everything = args.platform.is_empty() && args.scope == Scope::User;
    if everything {
        print!("  worker:   ");
        if let Err(e) = crate::commands::worker::stop(&data, std::time::Duration::from_secs(10)) {
            println!("still running: {e:#}");
        }
    }
    println!("Done. mnemo no longer runs in these hosts.");
    println!(
        "  kept:     your memory, in {} (remove it with `rm -rf {}`)",
        data.root().display(),
        data.root().display()
    );
    if everything && let Ok(binary) = std::env::current_exe() {
        println!(
            "  binary:   {} (remove it with `rm {}`, or `cargo uninstall mnemo` if cargo installed it)",
            binary.display(),
            binary.display()
        );
    }
    Ok(())
}

fn uninstall_host(
    host: &dyn Installer,
    target: &Target,
    args: &InstallArgs,
) -> anyhow::Result<i32> {
    let name = host.host().name;
    let user = args.scope == Scope::User;
    let Some(hooks) = host.plan_unhooks(target)? else {
        let path = host
            .hook_file(target.scope, &target.project_dir)
            .unwrap_or_default();
        println!(
            "mnemo uninstall: {} does not exist; no hooks to remove.",
            path.display()
        );
        if user {
            uninstall_mcp(host, args.dry_run)?;
        }
        return Ok(0);
    };
    println!(
        "mnemo uninstall: {name}, {} scope{}",
        scope_name(args.scope),
        if args.dry_run {
            " (dry run: nothing written)"
        } else {
            ""
        }
    );
    let path = hooks.path.clone();
    println!("  settings: {}", path.display());
    if hooks.edit.changes.is_empty() {
        println!("  no mnemo hooks found; nothing changed.");
    } else {
        print_changes(&hooks.edit);
        let data = DataDir::resolve()?;
        let backup = install_backup(&hooks.path, args.scope, &data);
        if !args.dry_run {
            write_plan(hooks, None)?;
            remove_install_backup(&backup)?;
            remove_left_empty(&path, args.scope)?;
        }
    }
    if user && let Err(e) = uninstall_mcp(host, args.dry_run) {
        println!("Partly uninstalled ({name}):");
        println!("  hooks: removed from {}", path.display());
        println!("  MCP server: still registered (its file could not be edited)");
        crate::output::error(&format!("{e:#}"));
        eprintln!("  to finish: fix the file named, then run `mnemo uninstall` again");
        return Ok(1);
    }
    Ok(0)
}

/// Removes our MCP registration (user scope); other servers stay.
fn uninstall_mcp(host: &dyn Installer, dry_run: bool) -> anyhow::Result<()> {
    let Some(plan) = host.plan_unmcp() else {
        return Ok(());
    };
    let plan = plan?;
    if plan.edit.changes.is_empty() {
        return Ok(());
    }
    println!("  mcp:      {} (user scope)", plan.path.display());
    print_changes(&plan.edit);
    if !dry_run {
        let path = plan.path.clone();
        write_plan(plan, None)?;
        remove_install_backup(&settings_file::backup_path(&path))?;
        // A file install created for the server alone (`~/.cursor/mcp.json`).
        if settings_file::remove_if_empty(&path)? {
            println!("  removed:  {} (it held nothing else)", path.display());
        }
    }
    Ok(())
}

/// A hook file that is now empty was only there for mnemo: it goes, and
/// so does a project's host directory (`.claude`) left empty by that.
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

/// Writes the plan (unless dry). At project scope the previous content is
/// kept in the data directory, not in the work tree a team commits.
fn write_unless_dry(plan: FilePlan, args: &InstallArgs, data: &DataDir) -> anyhow::Result<()> {
    if args.dry_run || plan.edit.is_noop() {
        return Ok(());
    }
    let backup = install_backup(&plan.path, args.scope, data);
    write_plan(plan, Some(&backup))
}

/// Where install keeps the content a file had before it: beside a user
/// file, in the data directory for a project's (not in its work tree).
fn install_backup(path: &Path, scope: Scope, data: &DataDir) -> PathBuf {
    match scope {
        Scope::User => settings_file::backup_path(path),
        Scope::Project => project_backup_path(data, path),
    }
}

/// Uninstall leaves no backup behind: the file itself now holds what it
/// held without mnemo (with whatever was changed since), so install's copy
/// of the earlier content would only be a stale, confusing second version.
fn remove_install_backup(backup: &Path) -> anyhow::Result<()> {
    match std::fs::remove_file(backup) {
        Ok(()) => {
            println!(
                "  removed:  {} (install's backup; no longer needed)",
                backup.display()
            );
            Ok(())
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(anyhow::anyhow!("cannot remove {}: {e}", backup.display())),
    }
}

/// Writes the plan, the previous content kept at `backup` when given.
fn write_plan(plan: FilePlan, backup: Option<&Path>) -> anyhow::Result<()> {
    write_edit(&plan.path, plan.read, plan.edit, backup, plan.replan)
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
    backup: Option<&Path>,
    plan: impl Fn(&str) -> Result<SettingsEdit, mnemo_install::ParseError>,
) -> anyhow::Result<()> {
    for attempt in 1..=WRITE_ATTEMPTS {
        if edit.is_noop() {
            return Ok(());
        }
        match settings_file::write_atomic_checked(path, read.as_deref(), &edit.new_text, backup) {
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
    host_scope(scope).as_str()
}

fn host_scope(scope: Scope) -> HostScope {
    match scope {
        Scope::User => HostScope::User,
        Scope::Project => HostScope::Project,
    }
}
