//! Claude Code: mnemo's hook entries in `settings.json`, its MCP server in `~/.claude.json`, and
//! (read only) the mnemo plugin's state in Claude Code's plugin records.
//!
//! Everything here plans edits on text and never touches the file system, so the CLI can show the
//! user what will change and [`crate::settings_file`] can write it atomically afterwards.

mod command;
mod hooks;
mod mcp;
pub mod plugin;

pub use crate::edit::{Change, ChangeKind, ParseError, ParseErrorKind, SettingsEdit};
pub use command::{is_mnemo_hook_command, shell_quote};
pub use hooks::{find_mnemo_hooks, plan_install, plan_uninstall};
pub use mcp::{plan_mcp_install, plan_mcp_uninstall};

/// One hook mnemo wants installed.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct HookSpec {
    /// The hook event, e.g. `PostToolUse`.
    pub event: String,
    /// `Some("*")` for tool events; `None` for events without matchers (`UserPromptSubmit`).
    pub matcher: Option<String>,
    /// The full shell command line, e.g. `'/opt/my dir/mnemo' hook claude-code PostToolUse`.
    pub command: String,
    pub timeout_secs: u32,
}
