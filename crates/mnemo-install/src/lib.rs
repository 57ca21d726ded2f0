//! Wiring mnemo into agent hosts by editing their settings files: one install module per host
//! (see [`host::Installer`]), keyed by the host's row in `mnemo_core::host`.
//!
//! Users' settings files are hand-edited JSONC that also serve other tools, so every edit here goes
//! through jsonc-parser's concrete syntax tree: comments, formatting and foreign entries survive,
//! and uninstall takes back exactly what install added. The planners are pure (text in, text and a
//! list of changes out) so the CLI can show the changes before [`settings_file`] writes anything.
//!
//! ```
//! use mnemo_install::{HookSpec, plan_install, plan_uninstall, shell_quote};
//!
//! let mnemo = shell_quote("/opt/my tools/mnemo");
//! let hooks = [HookSpec {
//!     event: "PostToolUse".to_string(),
//!     matcher: Some("*".to_string()),
//!     command: format!("{mnemo} hook claude-code PostToolUse"),
//!     timeout_secs: 10,
//! }];
//! // In the CLI: `settings_file::read(path)?.unwrap_or_default()`.
//! let existing = "{\n  // mine\n  \"model\": \"opus\"\n}\n";
//! let edit = plan_install(existing, &hooks)?;
//! assert!(edit.new_text.contains("// mine"));
//! assert!(edit.new_text.contains(r#""command": "'/opt/my tools/mnemo' hook claude-code PostToolUse""#));
//! // Unless `edit.is_noop()`: `settings_file::write_atomic(path, &edit.new_text)?`.
//! assert_eq!(plan_uninstall(&edit.new_text)?.new_text, existing);
//! # Ok::<(), mnemo_install::ParseError>(())
//! ```

pub mod claude_code;
pub mod claude_mem;
pub mod codex;
mod command;
pub mod cursor;
mod edit;
pub mod gemini;
pub mod hooks_json;
pub mod host;
mod jsonc;
pub mod opencode;
pub mod settings_file;

/// The name mnemo's MCP server is registered under in every host.
pub const MCP_SERVER_NAME: &str = "mnemo";

pub use claude_code::{
    Change, ChangeKind, HookSpec, ParseError, ParseErrorKind, SettingsEdit, find_mnemo_hooks,
    is_mnemo_hook_command, plan_install, plan_mcp_install, plan_mcp_uninstall, plan_uninstall,
    shell_quote,
};
pub use command::{is_mnemo_hook_command_for, program_of};
pub use host::{FilePlan, Installer, McpEntry, Target, installer, installers};
pub use settings_file::{FileError, WriteReport};
