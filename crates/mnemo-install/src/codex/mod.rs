//! Codex CLI's install module: hooks in `$CODEX_HOME/hooks.json` (or a project's
//! `.codex/hooks.json`), the MCP server in `$CODEX_HOME/config.toml` (`CODEX_HOME` defaults to
//! `~/.codex`).
//!
//! Codex trusts a hook by a hash of its entry, and skips it once the entry changes. So the
//! command names mnemo by a path that survives an upgrade: the `mnemo` on PATH that is this
//! binary, as PATH spells it (`~/.cargo/bin/mnemo`, `/opt/homebrew/bin/mnemo`), not the file a
//! symlink resolves to (a versioned `Cellar/mnemo/0.2.0/bin/mnemo`); the running binary's path
//! only when no `mnemo` on PATH is this binary.

mod config_toml;

use std::path::{Path, PathBuf};

use mnemo_core::host::{Host, host};
use mnemo_core::model::Platform;

pub use config_toml::{PLANNERS, find_mcp_entry, plan_mcp_install, plan_mcp_uninstall};

use crate::hooks_json;
use crate::host::{HookPlanners, Installer, McpPlanners, Target};

pub struct Codex;

pub static INSTALLER: Codex = Codex;

impl Installer for Codex {
    fn host(&self) -> &'static Host {
        host(Platform::Codex)
    }

    fn hook_planners(&self) -> &'static HookPlanners {
        &hooks_json::PLANNERS
    }

    fn mcp_planners(&self) -> &'static McpPlanners {
        &PLANNERS
    }

    fn program_path(&self, target: &Target) -> String {
        stable_path(&target.binary).to_string_lossy().into_owned()
    }
}

/// The `mnemo` on PATH that is `binary`, as PATH names it; `binary` itself when none is.
pub fn stable_path(binary: &Path) -> PathBuf {
    let name = if cfg!(windows) { "mnemo.exe" } else { "mnemo" };
    let wanted = std::fs::canonicalize(binary).unwrap_or_else(|_| binary.to_owned());
    std::env::var_os("PATH")
        .and_then(|paths| {
            std::env::split_paths(&paths)
                .filter(|dir| dir.is_absolute())
                .map(|dir| dir.join(name))
                .find(|p| std::fs::canonicalize(p).is_ok_and(|c| c == wanted))
        })
        .unwrap_or_else(|| binary.to_owned())
}
