//! Wiring mnemo into agent hosts by editing their settings files.
//!
//! Users' settings files are hand-edited JSONC that also serve other tools, so every edit here goes
//! through jsonc-parser's concrete syntax tree: comments, formatting and foreign entries survive,
//! and uninstall takes back exactly what install added. The planners are pure (text in, text and a
//! list of changes out) so the CLI can show the changes before [`settings_file`] writes anything.

pub mod claude_code;
mod edit;
mod jsonc;
pub mod settings_file;

pub use claude_code::{
    Change, ChangeKind, HookSpec, ParseError, ParseErrorKind, SettingsEdit, is_mnemo_hook_command,
    plan_install, plan_mcp_install, plan_mcp_uninstall, plan_uninstall, shell_quote,
};
pub use settings_file::{FileError, WriteReport};
