//! How every host is wired: its hooks (or the Claude Code plugin that runs
//! them) pointing at this binary, and claude-mem capturing beside mnemo.
//! The MCP side of each host is `mcp`.

use std::path::{Path, PathBuf};

use mnemo_core::host::Scope;
use mnemo_core::model::Platform;
use mnemo_install::Installer;

use super::super::claude_plugin;
use super::{Check, Status, mcp, opencode};

/// The hooks and MCP checks of every host: Claude Code always (named
/// `hooks` and `mcp`), the others (`codex hooks`, ...) when they are on
/// this machine or mnemo is wired into them.
pub(super) fn host_checks(binary: &Path, fix: bool) -> Vec<Check> {
    let mut checks = Vec::new();
    let plugin = claude_plugin::find(None);
    checks.extend(plugin.as_ref().map(|p| check_plugin(binary, p)));
    let plugin = plugin.filter(|p| p.enabled);
    for &installer in mnemo_install::installers() {
        let host = installer.host();
        let claude = host.platform == Platform::ClaudeCode;
        // The mnemo plugin runs Claude Code's hooks and MCP server.
        let plugin = plugin.as_ref().filter(|_| claude);
        let (hooks, wired) = check_hooks(installer, binary, plugin);
        if !claude && !wired && !host.is_present() {
            continue;
        }
        if !claude && !wired {
            checks.push(Check::problem(
                names(host.platform).0,
                Status::Warn,
                format!(
                    "{} is on this machine, and mnemo is not wired into it",
                    host.name
                ),
                format!("mnemo install --platform {}", host.platform),
            ));
            continue;
        }
        checks.push(hooks);
        checks.push(mcp::check_mcp(installer, binary, fix, plugin));
        if host.platform == Platform::OpenCode
            && let Some(opencode) = host.binary_on_path()
        {
            checks.push(opencode::version_check(&opencode));
        }
    }
    checks
}

/// The check names of a host: `hooks`/`mcp` for Claude Code (as before
/// there were other hosts), `<platform> hooks`/`<platform> mcp` otherwise.
pub(super) fn names(platform: Platform) -> (&'static str, &'static str) {
    match platform {
        Platform::ClaudeCode => ("hooks", "mcp"),
        Platform::Codex => ("codex hooks", "codex mcp"),
        Platform::Gemini => ("gemini hooks", "gemini mcp"),
        Platform::Cursor => ("cursor hooks", "cursor mcp"),
        Platform::OpenCode => ("opencode hooks", "opencode mcp"),
        Platform::Raw => ("raw hooks", "raw mcp"),
    }
}

/// The host's settings files that may hold hooks: user and project scope.
fn hook_files(installer: &dyn Installer) -> Vec<PathBuf> {
    let cwd = std::env::current_dir().unwrap_or_default();
    [Scope::User, Scope::Project]
        .into_iter()
        .filter_map(|scope| installer.hook_file(scope, &cwd))
        .collect()
}

/// A hook of ours found in a settings file: (event, command, file).
type FoundHook = (String, String, PathBuf);

/// The hooks check, and whether any hook of ours (or a file that could not
/// be read) was found at all.
fn check_hooks(
    installer: &dyn Installer,
    binary: &Path,
    plugin: Option<&claude_plugin::Plugin>,
) -> (Check, bool) {
    let host = installer.host();
    let name = names(host.platform).0;
    let found = match read_hooks(installer) {
        Ok(found) => found,
        Err(problems) => {
            let check = Check::problem(name, Status::Fail, problems, "fix the settings file named");
            return (check, true);
        }
    };
    if let Some(plugin) = plugin {
        return (hooks_beside_plugin(&found, plugin, host.events.len()), true);
    }
    if found.is_empty() {
        return (not_installed(installer), false);
    }
    (installed_hooks(installer, binary, &found), true)
}

/// The hooks of ours in the host's settings files, or what made some of
/// them unreadable.
fn read_hooks(installer: &dyn Installer) -> Result<Vec<FoundHook>, String> {
    let mut found = Vec::new();
    let mut problems = Vec::new();
    for path in hook_files(installer) {
        match mnemo_install::settings_file::read(&path) {
            Ok(Some(text)) => match installer.find_hooks(&text) {
                Ok(hooks) => found.extend(hooks.into_iter().map(|(e, c)| (e, c, path.clone()))),
                Err(e) => problems.push(mnemo_install::FileError::invalid(&path, e).to_string()),
            },
            Ok(None) => {}
            Err(e) => problems.push(e.to_string()),
        }
    }
    if problems.is_empty() {
        Ok(found)
    } else {
        Err(problems.join("; "))
    }
}

/// The command that installs mnemo's hooks in a host.
fn install_command(platform: Platform) -> String {
    match platform {
        Platform::ClaudeCode => "mnemo install".to_owned(),
        p => format!("mnemo install --platform {p}"),
    }
}

/// No hook of ours in any of the host's settings files.
fn not_installed(installer: &dyn Installer) -> Check {
    let host = installer.host();
    let files: Vec<String> = match host.platform {
        Platform::ClaudeCode => vec![
            "~/.claude/settings.json".to_owned(),
            ".claude/settings.json".to_owned(),
        ],
        _ => hook_files(installer)
            .iter()
            .map(|p| p.display().to_string())
            .collect(),
    };
    Check::problem(
        names(host.platform).0,
        Status::Fail,
        format!(
            "mnemo is not installed in {} (no hooks in {})",
            host.name,
            files.join(" or ")
        ),
        install_command(host.platform),
    )
}

/// Hooks of ours found: every event covered, all running this binary, from
/// one settings file.
fn installed_hooks(installer: &dyn Installer, binary: &Path, found: &[FoundHook]) -> Check {
    let host = installer.host();
    let name = names(host.platform).0;
    let install = install_command(host.platform);
    let missing: Vec<&str> = host
        .events
        .iter()
        .map(|e| e.name)
        .filter(|e| !found.iter().any(|(f, _, _)| f == e))
        .collect();
    let files = settings_files(found);
    if !missing.is_empty() {
        return Check::problem(
            name,
            Status::Fail,
            format!("{}: missing {}", files.join(", "), missing.join(", ")),
            &install,
        );
    }
    if let Some(other) = running_elsewhere(found, binary).first() {
        return Check::problem(
            name,
            Status::Fail,
            format!(
                "hooks run {other}, which is not this binary ({})",
                binary.display()
            ),
            format!("run `{install}` with the mnemo you want hooks to use"),
        );
    }
    if files.len() > 1 {
        return Check::problem(
            name,
            Status::Warn,
            format!("installed in several settings files: {}", files.join(", ")),
            "keep one: `mnemo uninstall --scope project` (duplicates are recorded once, but run twice)",
        );
    }
    Check::ok(
        name,
        format!(
            "{}: all {} events point at this binary",
            files.join(", "),
            host.events.len()
        ),
    )
}

/// The settings files the hooks were found in, each once in a row.
fn settings_files(found: &[FoundHook]) -> Vec<String> {
    let mut files: Vec<String> = found
        .iter()
        .map(|(_, _, p)| p.display().to_string())
        .collect();
    files.dedup();
    files
}

/// The programs hooks run that are not this binary.
fn running_elsewhere(found: &[FoundHook], binary: &Path) -> Vec<String> {
    found
        .iter()
        .filter_map(|(_, command, _)| mnemo_install::program_of(command).map(PathBuf::from))
        .filter(|p| {
            on_path(p)
                .and_then(|p| std::fs::canonicalize(p).ok())
                .is_none_or(|c| c != binary)
        })
        .map(|p| p.display().to_string())
        .collect()
}

/// The mnemo Claude Code plugin (a settings scope names it): enabled or not, and whether the
/// `mnemo` its hooks and MCP server run from PATH is this binary.
fn check_plugin(binary: &Path, plugin: &claude_plugin::Plugin) -> Check {
    const NAME: &str = "plugin";
    if !plugin.enabled {
        return Check::ok(NAME, plugin.describe());
    }
    let Some(on_path) = on_path(Path::new("mnemo")) else {
        return Check::problem(
            NAME,
            Status::Fail,
            format!(
                "{}; its hooks run `mnemo` from PATH and there is none on PATH, so sessions are not recorded",
                plugin.describe()
            ),
            format!(
                "put this binary on PATH, e.g. `ln -s {} ~/.local/bin/mnemo`",
                binary.display()
            ),
        );
    };
    let runs = std::fs::canonicalize(&on_path).unwrap_or(on_path);
    if runs != binary {
        return Check::problem(
            NAME,
            Status::Warn,
            format!(
                "{}; its hooks run {}, not this binary ({})",
                plugin.describe(),
                runs.display(),
                binary.display()
            ),
            "put the mnemo you want first on PATH",
        );
    }
    Check::ok(
        NAME,
        format!(
            "{}; its hooks and MCP server run this binary from PATH",
            plugin.describe()
        ),
    )
}

/// The hooks check when the plugin is enabled: its hooks are enough, and hooks from `mnemo
/// install` beside them make every hook run twice.
fn hooks_beside_plugin(
    found: &[FoundHook],
    plugin: &claude_plugin::Plugin,
    events: usize,
) -> Check {
    if found.is_empty() {
        return Check::ok(
            "hooks",
            format!("all {events} events are run by the plugin {}", plugin.id),
        );
    }
    let files = settings_files(found);
    Check::problem(
        "hooks",
        Status::Warn,
        format!(
            "installed twice: by the plugin {} and by `mnemo install` in {}; every hook runs twice \
             (each event is still recorded once and memory given once)",
            plugin.id,
            files.join(", ")
        ),
        "keep the plugin: `mnemo uninstall` (add `--scope project` for a project's settings)",
    )
}

/// claude-mem capturing beside mnemo records every session twice.
pub(super) fn check_claude_mem() -> Option<Check> {
    use crate::commands::switch_claude_mem::{detect, how_to_turn_off};
    let presence = detect()?;
    if !presence.is_capturing() {
        return Some(Check::ok("claude-mem", "installed but switched off"));
    }
    Some(Check::problem(
        "claude-mem",
        Status::Warn,
        format!(
            "also captures ({}): both record every session",
            presence.describe()
        ),
        format!(
            "{}; its memory comes along with `mnemo import --from claude-mem`",
            how_to_turn_off(&presence)
        ),
    ))
}

/// Where the shell finds `program`: itself when it names a directory, else
/// the first match on PATH (project-scope hooks run `mnemo` from PATH).
fn on_path(program: &Path) -> Option<PathBuf> {
    if program.components().count() > 1 {
        return Some(program.to_owned());
    }
    std::env::split_paths(&std::env::var_os("PATH")?)
        .map(|dir| dir.join(program))
        .find(|candidate| candidate.is_file())
}
