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

use crate::claude_code::PLAIN_PLANNERS;
use crate::hooks_json;
use crate::host::{HookPlanners, Installer, McpPlanners};

pub struct Gemini;

pub static INSTALLER: Gemini = Gemini;

/// `$GEMINI_CLI_HOME/.gemini`, else `~/.gemini` (the host table's config home).
pub fn user_dir() -> Option<PathBuf> {
    host(Platform::Gemini).config_dir()
}

/// The user settings file, which holds both the hooks and the MCP servers.
fn user_settings() -> Option<PathBuf> {
    Some(user_dir()?.join("settings.json"))
}

impl Installer for Gemini {
    fn host(&self) -> &'static Host {
        host(Platform::Gemini)
    }

    fn hook_planners(&self) -> &'static HookPlanners {
        &hooks_json::PLANNERS
    }

    fn mcp_planners(&self) -> &'static McpPlanners {
        &PLAIN_PLANNERS
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
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::MCP_SERVER_NAME;
    use crate::claude_code::{find_mcp_server, plan_mcp_install_plain, plan_mcp_uninstall};
    use crate::host::{McpEntry, Target};

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
