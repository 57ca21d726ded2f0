//! The MCP check of a host: mnemo's server registered at user scope and
//! running this binary; `--fix` registers it.

use std::ops::ControlFlow;
use std::path::{Path, PathBuf};

use mnemo_core::host::Scope;
use mnemo_install::{Installer, McpEntry, Target};

use super::super::claude_plugin;
use super::hooks::names;
use super::{Check, Status};

/// The MCP server the host starts for the `mcp__mnemo__*` tools: registered
/// at user scope, running this binary. `--fix` registers it (an additive
/// edit; the file is backed up).
pub(super) fn check_mcp(
    installer: &dyn Installer,
    binary: &Path,
    fix: bool,
    plugin: Option<&claude_plugin::Plugin>,
) -> Check {
    let name = names(installer.host().platform).1;
    let Some(path) = installer.mcp_file() else {
        return Check::problem(
            name,
            Status::Warn,
            "cannot find the home directory",
            "set HOME",
        );
    };
    let target = Target {
        scope: Scope::User,
        project_dir: PathBuf::new(),
        binary: binary.to_owned(),
    };
    let wanted = installer.mcp_wanted(&target);
    let problem = match registration(installer, &path, &wanted, binary, plugin) {
        ControlFlow::Break(settled) => return settled,
        ControlFlow::Continue(problem) => problem,
    };
    if fix {
        return register(installer, &target, &wanted, problem);
    }
    Check::problem(
        name,
        Status::Warn,
        problem,
        "mnemo install (or `mnemo doctor --fix`) registers it at user scope",
    )
}

/// What the host's MCP file (`path`) registers: a settled check (this
/// binary, the plugin's server, an unreadable file), or the problem to fix.
fn registration(
    installer: &dyn Installer,
    path: &Path,
    wanted: &McpEntry,
    binary: &Path,
    plugin: Option<&claude_plugin::Plugin>,
) -> ControlFlow<Check, String> {
    let name = names(installer.host().platform).1;
    match installer.mcp_entry() {
        Ok(Some(entry)) => {
            let same_binary = std::fs::canonicalize(&entry.command).is_ok_and(|c| c == binary);
            if same_binary && entry.args == wanted.args {
                return ControlFlow::Break(Check::ok(
                    name,
                    format!(
                        "{}: {}.{} runs this binary",
                        path.display(),
                        installer.host().mcp.map_or("mcpServers", |m| m.key),
                        mnemo_install::MCP_SERVER_NAME
                    ),
                ));
            }
            ControlFlow::Continue(format!(
                "{}: {} runs `{} {}`, not `{} mcp`",
                path.display(),
                mnemo_install::MCP_SERVER_NAME,
                entry.command,
                entry.args.join(" "),
                binary.display()
            ))
        }
        Ok(None) if plugin.is_some() => ControlFlow::Break(Check::ok(
            name,
            "the plugin's MCP server (plugin:mnemo:mnemo) runs `mnemo mcp` from PATH",
        )),
        Ok(None) => ControlFlow::Continue(format!(
            "the MCP server is not registered in {} (the agent has no mcp__mnemo__* tools)",
            path.display()
        )),
        Err(e) => ControlFlow::Break(Check::problem(
            name,
            Status::Warn,
            format!("cannot read {}: {e}", path.display()),
            "fix the file named",
        )),
    }
}

/// `--fix`: registers the server at user scope, and says how that went.
fn register(
    installer: &dyn Installer,
    target: &Target,
    wanted: &McpEntry,
    problem: String,
) -> Check {
    let name = names(installer.host().platform).1;
    let registered = installer.plan_mcp(target).map(|plan| {
        let plan = plan?;
        if !plan.edit.is_noop() {
            mnemo_install::settings_file::write_atomic(&plan.path, &plan.edit.new_text)?;
        }
        Ok::<_, mnemo_install::FileError>(plan.path)
    });
    match registered {
        Some(Ok(path)) => Check::ok(
            name,
            format!(
                "fixed: registered `{} mcp` in {} (previous file kept as .mnemo.bak)",
                wanted.command,
                path.display()
            ),
        ),
        Some(Err(e)) => Check::problem(
            name,
            Status::Warn,
            format!("{problem}; fixing failed: {e:#}"),
            "mnemo install",
        ),
        None => Check::problem(name, Status::Warn, problem, "mnemo install"),
    }
}
