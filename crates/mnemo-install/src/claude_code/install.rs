//! Claude Code's install module: hooks in `settings.json` (user or project scope), the MCP server
//! in `~/.claude.json` at user scope, the way `claude mcp add --scope user` writes it.

use mnemo_core::host::{Host, host};
use mnemo_core::model::Platform;

use super::mcp::CLAUDE_PLANNERS;
use crate::hooks_json;
use crate::host::{HookPlanners, Installer, McpPlanners};

pub struct ClaudeCode;

pub static INSTALLER: ClaudeCode = ClaudeCode;

impl Installer for ClaudeCode {
    fn host(&self) -> &'static Host {
        host(Platform::ClaudeCode)
    }

    fn hook_planners(&self) -> &'static HookPlanners {
        &hooks_json::PLANNERS
    }

    fn mcp_planners(&self) -> &'static McpPlanners {
        &CLAUDE_PLANNERS
    }
}
