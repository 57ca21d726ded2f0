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

use mnemo_core::host::{Host, Scope, host};
use mnemo_core::model::Platform;

pub use config_toml::{find_mcp_entry, plan_mcp_install, plan_mcp_uninstall};

use crate::MCP_SERVER_NAME;
use crate::command::shell_quote;
use crate::edit::ParseError;
use crate::hooks_json;
use crate::host::{
    FilePlan, Installer, McpEntry, Target, no_home, plan_hooks_json, plan_unhooks_json,
};
use crate::settings_file::{self, FileError};

pub struct Codex;

pub static INSTALLER: Codex = Codex;

impl Installer for Codex {
    fn host(&self) -> &'static Host {
        host(Platform::Codex)
    }

    fn program(&self, target: &Target) -> String {
        match target.scope {
            Scope::User => shell_quote(&self.program_path(target)),
            Scope::Project => "mnemo".to_owned(),
        }
    }

    fn program_path(&self, target: &Target) -> String {
        stable_path(&target.binary).to_string_lossy().into_owned()
    }

    fn plan_hooks(&self, target: &Target) -> Result<FilePlan, FileError> {
        let path = self
            .hook_file(target.scope, &target.project_dir)
            .ok_or_else(no_home)?;
        plan_hooks_json(path, Platform::Codex, self.hooks(target))
    }

    fn plan_unhooks(&self, target: &Target) -> Result<Option<FilePlan>, FileError> {
        let path = self
            .hook_file(target.scope, &target.project_dir)
            .ok_or_else(no_home)?;
        plan_unhooks_json(path, Platform::Codex)
    }

    fn find_hooks(&self, text: &str) -> Result<Vec<(String, String)>, ParseError> {
        hooks_json::find_mnemo_hooks_for(Platform::Codex.as_str(), text)
    }

    fn plan_mcp(&self, target: &Target) -> Option<Result<FilePlan, FileError>> {
        let wanted = self.mcp_wanted(target);
        let path = self.host().mcp_file()?;
        Some(FilePlan::new(path, move |text| {
            plan_mcp_install(text, MCP_SERVER_NAME, &wanted.command, &wanted.args)
        }))
    }

    fn plan_unmcp(&self) -> Option<Result<FilePlan, FileError>> {
        let path = self.host().mcp_file()?;
        match settings_file::read(&path) {
            Ok(None) => None,
            Ok(Some(_)) => Some(FilePlan::new(path, |text| {
                plan_mcp_uninstall(text, MCP_SERVER_NAME)
            })),
            Err(e) => Some(Err(e)),
        }
    }

    fn mcp_entry(&self) -> Result<Option<McpEntry>, FileError> {
        let path = self.host().mcp_file().ok_or_else(no_home)?;
        let Some(text) = settings_file::read(&path)? else {
            return Ok(None);
        };
        find_mcp_entry(&text, MCP_SERVER_NAME).map_err(|e| FileError::invalid(&path, e))
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
