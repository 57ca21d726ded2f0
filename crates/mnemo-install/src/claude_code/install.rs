//! Claude Code's install module: hooks in `settings.json` (user or project scope), the MCP server
//! in `~/.claude.json` at user scope, the way `claude mcp add --scope user` writes it.

use mnemo_core::host::{Host, Scope, host};
use mnemo_core::model::Platform;

use super::{plan_mcp_install, plan_mcp_uninstall};
use crate::command::shell_quote;
use crate::edit::ParseError;
use crate::host::{
    FilePlan, Installer, McpEntry, Target, no_home, plan_hooks_json, plan_unhooks_json,
};
use crate::settings_file::{self, FileError};
use crate::{MCP_SERVER_NAME, hooks_json};

pub struct ClaudeCode;

pub static INSTALLER: ClaudeCode = ClaudeCode;

impl Installer for ClaudeCode {
    fn host(&self) -> &'static Host {
        host(Platform::ClaudeCode)
    }

    /// This binary's absolute path at user scope (hooks work whatever the agent's PATH is), plain
    /// `mnemo` from PATH at project scope (the settings file is committed and runs on teammates'
    /// machines).
    fn program(&self, target: &Target) -> String {
        match target.scope {
            Scope::User => shell_quote(&target.binary.to_string_lossy()),
            Scope::Project => "mnemo".to_owned(),
        }
    }

    fn plan_hooks(&self, target: &Target) -> Result<FilePlan, FileError> {
        let path = self
            .hook_file(target.scope, &target.project_dir)
            .ok_or_else(no_home)?;
        plan_hooks_json(path, Platform::ClaudeCode, self.hooks(target))
    }

    fn plan_unhooks(&self, target: &Target) -> Result<Option<FilePlan>, FileError> {
        let path = self
            .hook_file(target.scope, &target.project_dir)
            .ok_or_else(no_home)?;
        plan_unhooks_json(path, Platform::ClaudeCode)
    }

    fn find_hooks(&self, text: &str) -> Result<Vec<(String, String)>, ParseError> {
        hooks_json::find_mnemo_hooks_for(Platform::ClaudeCode.as_str(), text)
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
        let Some(path) = self.host().mcp_file() else {
            return Err(no_home());
        };
        let Some(text) = settings_file::read(&path)? else {
            return Ok(None);
        };
        let value: serde_json::Value = serde_json::from_str(&text).map_err(|e| {
            FileError::invalid(
                &path,
                ParseError {
                    line: e.line(),
                    column: e.column(),
                    message: e.to_string(),
                    kind: crate::ParseErrorKind::Syntax,
                },
            )
        })?;
        Ok(json_entry(
            value.get("mcpServers").and_then(|s| s.get(MCP_SERVER_NAME)),
        ))
    }
}

/// `{"command": ..., "args": [...]}` as an entry.
pub(crate) fn json_entry(server: Option<&serde_json::Value>) -> Option<McpEntry> {
    let server = server?;
    Some(McpEntry {
        command: server
            .get("command")
            .and_then(|c| c.as_str())
            .unwrap_or_default()
            .to_owned(),
        args: server
            .get("args")
            .and_then(|a| serde_json::from_value::<Vec<String>>(a.clone()).ok())
            .unwrap_or_default(),
    })
}
