//! Claude Code: mnemo's hook entries in `settings.json`, its MCP server in `~/.claude.json`, and
//! (read only) the mnemo plugin's state in Claude Code's plugin records.
//!
//! Everything here plans edits on text and never touches the file system, so the CLI can show the
//! user what will change and [`crate::settings_file`] can write it atomically afterwards.

mod install;
mod mcp;
pub mod plugin;

pub use install::{ClaudeCode, INSTALLER};

pub use crate::command::{is_mnemo_hook_command, shell_quote};
pub use crate::edit::{Change, ChangeKind, ParseError, ParseErrorKind, SettingsEdit};
pub use crate::hooks_json::{HookSpec, find_mnemo_hooks, plan_install, plan_uninstall};
pub use mcp::{
    PLAIN_PLANNERS, find_mcp_server, find_mcp_server_strict, plan_mcp_install,
    plan_mcp_install_plain, plan_mcp_uninstall,
};
