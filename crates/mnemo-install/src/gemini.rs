//! Gemini CLI's install module: hooks and the MCP server, both in `~/.gemini/settings.json` (or a
//! project's `.gemini/settings.json` for the hooks).
//!
//! Gemini's `hooks` section has Claude Code's shape (event -> matcher groups -> command
//! handlers), so the same JSONC planner edits it, with timeouts in milliseconds as the host row
//! says. The MCP server is `mcpServers.mnemo = {"command", "args"}` in the same file. Gemini CLI
//! reads `~/.gemini` under `$GEMINI_CLI_HOME` instead of the home directory when that is set.

use std::path::{Path, PathBuf};

use mnemo_core::host::{Host, Scope, host};
use mnemo_core::model::Platform;

use crate::MCP_SERVER_NAME;
use crate::claude_code::{find_mcp_server, plan_mcp_install_plain, plan_mcp_uninstall};
use crate::command::shell_quote;
use crate::edit::ParseError;
use crate::hooks_json;
use crate::host::{
    FilePlan, Installer, McpEntry, Target, no_home, plan_hooks_json, plan_unhooks_json,
};
use crate::settings_file::{self, FileError};

/// The variable that stands in for the home directory of Gemini CLI.
pub const HOME_ENV: &str = "GEMINI_CLI_HOME";

pub struct Gemini;

pub static INSTALLER: Gemini = Gemini;

/// `$GEMINI_CLI_HOME/.gemini`, else `~/.gemini`.
pub fn user_dir() -> Option<PathBuf> {
    let home = std::env::var_os(HOME_ENV)
        .filter(|d| !d.is_empty())
        .map(PathBuf::from)
        .or_else(mnemo_core::paths::home_dir)?;
    Some(home.join(".gemini"))
}

/// The user settings file, which holds both the hooks and the MCP servers.
fn user_settings() -> Option<PathBuf> {
    Some(user_dir()?.join("settings.json"))
}

impl Installer for Gemini {
    fn host(&self) -> &'static Host {
        host(Platform::Gemini)
    }

    fn program(&self, target: &Target) -> String {
        match target.scope {
            Scope::User => shell_quote(&target.binary.to_string_lossy()),
            Scope::Project => "mnemo".to_owned(),
        }
    }

    fn hook_file(&self, scope: Scope, project_dir: &Path) -> Option<PathBuf> {
        match scope {
            Scope::User => user_settings(),
            Scope::Project => self.host().hook_file(scope, project_dir),
        }
    }

    fn mcp_file(&self) -> Option<PathBuf> {
        user_settings()
    }

    fn plan_hooks(&self, target: &Target) -> Result<FilePlan, FileError> {
        let path = self
            .hook_file(target.scope, &target.project_dir)
            .ok_or_else(no_home)?;
        plan_hooks_json(path, Platform::Gemini, self.hooks(target))
    }

    fn plan_unhooks(&self, target: &Target) -> Result<Option<FilePlan>, FileError> {
        let path = self
            .hook_file(target.scope, &target.project_dir)
            .ok_or_else(no_home)?;
        plan_unhooks_json(path, Platform::Gemini)
    }

    fn find_hooks(&self, text: &str) -> Result<Vec<(String, String)>, ParseError> {
        hooks_json::find_mnemo_hooks_for(Platform::Gemini.as_str(), text)
    }

    fn plan_mcp(&self, target: &Target) -> Option<Result<FilePlan, FileError>> {
        let wanted = self.mcp_wanted(target);
        let path = user_settings()?;
        Some(FilePlan::new(path, move |text| {
            plan_mcp_install_plain(text, MCP_SERVER_NAME, &wanted.command, &wanted.args)
        }))
    }

    fn plan_unmcp(&self) -> Option<Result<FilePlan, FileError>> {
        let path = user_settings()?;
        match settings_file::read(&path) {
            Ok(None) => None,
            Ok(Some(_)) => Some(FilePlan::new(path, |text| {
                plan_mcp_uninstall(text, MCP_SERVER_NAME)
            })),
            Err(e) => Some(Err(e)),
        }
    }

    fn mcp_entry(&self) -> Result<Option<McpEntry>, FileError> {
        let path = user_settings().ok_or_else(no_home)?;
        let Some(text) = settings_file::read(&path)? else {
            return Ok(None);
        };
        find_mcp_server(&text, MCP_SERVER_NAME).map_err(|e| FileError::invalid(&path, e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn target() -> Target {
        Target {
            scope: Scope::User,
            project_dir: PathBuf::from("/p"),
            binary: PathBuf::from("/opt/mnemo/bin/mnemo"),
        }
    }

    #[test]
    fn hooks_have_gemini_events_and_millisecond_timeouts() {
        let specs = INSTALLER.hooks(&target());
        let events: Vec<&str> = specs.iter().map(|s| s.event.as_str()).collect();
        assert_eq!(
            events,
            [
                "SessionStart",
                "BeforeAgent",
                "AfterTool",
                "AfterAgent",
                "SessionEnd"
            ]
        );
        assert!(specs.iter().all(|s| s.timeout_secs == 10_000));
        assert_eq!(
            specs[2].command,
            "/opt/mnemo/bin/mnemo hook gemini AfterTool"
        );
        let existing =
            "{\n  // mine\n  \"security\": {\"auth\": {\"selectedType\": \"gemini-api-key\"}}\n}\n";
        let edit = hooks_json::plan_install_for("gemini", existing, &specs).unwrap();
        assert!(edit.new_text.contains("// mine"));
        assert!(edit.new_text.contains("\"timeout\": 10000"));
        assert_eq!(INSTALLER.find_hooks(&edit.new_text).unwrap().len(), 5);
        let with_mcp = plan_mcp_install_plain(
            &edit.new_text,
            MCP_SERVER_NAME,
            "/opt/mnemo/bin/mnemo",
            &["mcp".to_owned()],
        )
        .unwrap();
        let value: serde_json::Value = jsonc_parser::parse_to_serde_value::<serde_json::Value>(
            &with_mcp.new_text,
            &Default::default(),
        )
        .unwrap();
        assert_eq!(
            value["mcpServers"]["mnemo"],
            serde_json::json!({"command": "/opt/mnemo/bin/mnemo", "args": ["mcp"]})
        );
        assert_eq!(
            find_mcp_server(&with_mcp.new_text, MCP_SERVER_NAME).unwrap(),
            Some(McpEntry {
                command: "/opt/mnemo/bin/mnemo".into(),
                args: vec!["mcp".into()]
            })
        );
        let unhooked = hooks_json::plan_uninstall_for("gemini", &with_mcp.new_text).unwrap();
        let back = plan_mcp_uninstall(&unhooked.new_text, MCP_SERVER_NAME).unwrap();
        assert_eq!(back.new_text, existing);
    }
}
