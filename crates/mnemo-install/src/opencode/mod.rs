//! OpenCode: the plugin file mnemo installs, and which OpenCode versions it works with.
//!
//! OpenCode runs no hook commands; it loads JS/TS modules from its plugin directory
//! (`~/.config/opencode/plugins/`) and calls them back. mnemo's plugin (`mnemo.js`, embedded here
//! with the binary's path filled in) forwards those callbacks to `mnemo hook opencode` and adds
//! the memory index to each session's system prompt. The file is wholly mnemo's: recognised by
//! its first line, replaced on install, deleted on uninstall; a file of that name that is not
//! ours is never overwritten.
//!
//! The plugin is a module `{id, server}` (the `PluginModule` shape, first in the checked
//! `@opencode-ai/plugin` 1.4.10; file plugins must carry an `id`) whose hooks are `chat.message`,
//! `tool.execute.after` (with its `args`), `experimental.chat.system.transform` and the
//! `session.idle` / `session.deleted` events of the 1.x plugin API, checked against the types of
//! `@opencode-ai/plugin` 1.4.10 and 1.18.33; [`support`] says whether an installed OpenCode is in
//! that range.

mod mcp;

use std::path::{Path, PathBuf};

use mnemo_core::host::{Host, Scope, host};
use mnemo_core::model::Platform;

pub use mcp::{PLANNERS as MCP_PLANNERS, find_mcp_entry, plan_mcp_install, plan_mcp_uninstall};

use crate::edit::{Change, ChangeKind, ParseError, ParseErrorKind, SettingsEdit};
use crate::host::{HookPlanners, Installer, McpPlanners, Target};

pub struct OpenCode;

pub static INSTALLER: OpenCode = OpenCode;

/// The planners of the plugin file: wholly mnemo's, so the platform and the specs do not matter,
/// only the program the plugin runs.
pub const PLANNERS: HookPlanners = HookPlanners {
    install: |_platform, text, program, _specs| plan_install(text, program),
    uninstall: |_platform, text| Ok(plan_uninstall(text)),
    find: |_platform, text| Ok(find_plugin(text)),
};

impl Installer for OpenCode {
    fn host(&self) -> &'static Host {
        host(Platform::OpenCode)
    }

    fn hook_planners(&self) -> &'static HookPlanners {
        &PLANNERS
    }

    fn mcp_planners(&self) -> &'static McpPlanners {
        &MCP_PLANNERS
    }

    /// The plugin spawns the binary itself (no shell): its absolute path at user scope, `mnemo`
    /// from PATH in a project's committed plugin.
    fn program(&self, target: &Target) -> String {
        match target.scope {
            Scope::User => self.program_path(target),
            Scope::Project => "mnemo".to_owned(),
        }
    }

    fn hook_file(&self, scope: Scope, project_dir: &Path) -> Option<PathBuf> {
        match scope {
            Scope::User => Some(plugin_path(&mnemo_core::paths::home_dir()?)),
            Scope::Project => self.host().hook_file(scope, project_dir),
        }
    }

    fn mcp_file(&self) -> Option<PathBuf> {
        Some(mcp_path(&mnemo_core::paths::home_dir()?))
    }
}

/// OpenCode's global config file, where its MCP servers are registered.
pub fn mcp_path(home: &Path) -> PathBuf {
    config_dir(home).join("opencode.json")
}

/// The plugin's source, with `__MNEMO_BIN__` where the binary's path goes.
const TEMPLATE: &str = include_str!("mnemo.js");

/// The first line of every plugin mnemo writes.
pub const MARKER: &str = "// mnemo-opencode-plugin";

/// The plugin's file name in OpenCode's plugin directory.
pub const FILE_NAME: &str = "mnemo.js";

/// The oldest and first unsupported OpenCode versions.
pub const MIN_VERSION: (u32, u32, u32) = (1, 4, 10);
pub const MAX_MAJOR: u32 = 1;

/// OpenCode's global config directory: `$XDG_CONFIG_HOME/opencode`, else `~/.config/opencode`.
pub fn config_dir(home: &Path) -> PathBuf {
    match std::env::var_os("XDG_CONFIG_HOME").filter(|d| !d.is_empty()) {
        Some(dir) => PathBuf::from(dir).join("opencode"),
        None => home.join(".config").join("opencode"),
    }
}

/// Where the plugin goes: `<config dir>/plugins/mnemo.js`.
pub fn plugin_path(home: &Path) -> PathBuf {
    config_dir(home).join("plugins").join(FILE_NAME)
}

/// The plugin's source for this mnemo binary.
pub fn plugin_source(binary: &str) -> String {
    let quoted = serde_json::Value::from(binary).to_string();
    TEMPLATE.replacen("__MNEMO_BIN__", &quoted, 1)
}

/// Is this file one that mnemo wrote?
pub fn is_mnemo_plugin(text: &str) -> bool {
    text.trim_start_matches('\u{feff}').starts_with(MARKER)
}

/// Write (or rewrite) the plugin for `binary`, over `existing` ("" when there is no file).
pub fn plan_install(existing: &str, binary: &str) -> Result<SettingsEdit, ParseError> {
    let source = plugin_source(binary);
    let kind = if existing.is_empty() {
        ChangeKind::Added
    } else if existing == source {
        ChangeKind::Unchanged
    } else if is_mnemo_plugin(existing) {
        ChangeKind::Updated
    } else {
        return Err(ParseError {
            line: 1,
            column: 1,
            message: format!(
                "this {FILE_NAME} is not mnemo's plugin (its first line is not `{MARKER}`); \
                 rename it and run the command again"
            ),
            kind: ParseErrorKind::Shape,
        });
    };
    Ok(SettingsEdit {
        new_text: if kind == ChangeKind::Unchanged {
            existing.to_owned()
        } else {
            source
        },
        changes: vec![change(kind, binary)],
    })
}

/// Empty the plugin file when it is ours (the CLI then deletes the emptied file).
pub fn plan_uninstall(existing: &str) -> SettingsEdit {
    if !is_mnemo_plugin(existing) {
        return SettingsEdit {
            new_text: existing.to_owned(),
            changes: Vec::new(),
        };
    }
    SettingsEdit {
        new_text: String::new(),
        changes: vec![change(ChangeKind::Removed, &binary_of(existing))],
    }
}

/// What an installed plugin forwards, as (event, command) like the hook planners give: every
/// event of the host row, each to the binary the plugin runs.
pub fn find_plugin(existing: &str) -> Vec<(String, String)> {
    if !is_mnemo_plugin(existing) {
        return Vec::new();
    }
    let command = format!("{} hook opencode", binary_of(existing));
    host(Platform::OpenCode)
        .events
        .iter()
        .map(|e| (e.name.to_owned(), command.clone()))
        .collect()
}

fn binary_of(plugin: &str) -> String {
    plugin
        .lines()
        .find_map(|l| l.strip_prefix("const MNEMO = "))
        .map(|rest| rest.trim_end_matches(';'))
        .and_then(|quoted| serde_json::from_str::<String>(quoted).ok())
        .unwrap_or_default()
}

fn change(kind: ChangeKind, binary: &str) -> Change {
    Change {
        kind,
        event: "plugin".to_owned(),
        command: format!("{binary} hook opencode"),
    }
}

/// Whether an installed OpenCode runs mnemo's plugin.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Support {
    Supported(String),
    /// The version, and why it is not supported.
    Unsupported(String, String),
    /// `opencode --version` printed no version mnemo can read.
    Unknown(String),
}

/// Reads `opencode --version` output (`1.18.33`, possibly with a prefix) and says whether the
/// plugin API mnemo's plugin uses is there.
pub fn support(version_output: &str) -> Support {
    let Some((version, parts)) = version_output
        .split_whitespace()
        .map(|w| w.trim_start_matches('v'))
        .find_map(|w| parse_version(w).map(|p| (w.to_owned(), p)))
    else {
        return Support::Unknown(version_output.trim().to_owned());
    };
    let (min_major, min_minor, min_patch) = MIN_VERSION;
    if parts < MIN_VERSION {
        Support::Unsupported(
            version,
            format!(
                "mnemo's plugin needs OpenCode {min_major}.{min_minor}.{min_patch} or later \
                 (older versions load plugins of another shape); upgrade OpenCode"
            ),
        )
    } else if parts.0 > MAX_MAJOR {
        Support::Unsupported(
            version,
            format!(
                "mnemo's plugin is written for the OpenCode {MAX_MAJOR}.x plugin API; \
                 this OpenCode may not load it or call it"
            ),
        )
    } else {
        Support::Supported(version)
    }
}

fn parse_version(text: &str) -> Option<(u32, u32, u32)> {
    let core = text.split(['-', '+']).next()?;
    let mut numbers = core.split('.').map(|n| n.parse::<u32>().ok());
    let version = (numbers.next()??, numbers.next()??, numbers.next()??);
    numbers.next().is_none().then_some(version)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_plugin_names_the_binary_as_a_js_string() {
        let source = plugin_source("/opt/my \"tools\"/mnemo");
        assert!(is_mnemo_plugin(&source));
        assert!(source.contains(r#"const MNEMO = "/opt/my \"tools\"/mnemo";"#));
        assert!(!source.contains("__MNEMO_BIN__"));
        assert_eq!(binary_of(&source), "/opt/my \"tools\"/mnemo");
    }

    #[test]
    fn install_is_idempotent_and_uninstall_empties_only_ours() {
        let first = plan_install("", "/bin/mnemo").unwrap();
        assert_eq!(first.changes[0].kind, ChangeKind::Added);
        assert!(
            plan_install(&first.new_text, "/bin/mnemo")
                .unwrap()
                .is_noop()
        );
        let moved = plan_install(&first.new_text, "/usr/bin/mnemo").unwrap();
        assert_eq!(moved.changes[0].kind, ChangeKind::Updated);
        assert_eq!(plan_uninstall(&moved.new_text).new_text, "");
        let found = find_plugin(&first.new_text);
        assert_eq!(found.len(), host(Platform::OpenCode).events.len());
        assert!(found.iter().all(|(_, c)| c == "/bin/mnemo hook opencode"));
        let foreign = "export const Other = async () => ({})\n";
        assert!(plan_install(foreign, "/bin/mnemo").is_err());
        assert_eq!(plan_uninstall(foreign).new_text, foreign);
    }

    #[test]
    fn versions() {
        assert_eq!(support("1.18.33\n"), Support::Supported("1.18.33".into()));
        assert_eq!(
            support("opencode v1.4.10"),
            Support::Supported("1.4.10".into())
        );
        assert!(
            matches!(support("1.3.17"), Support::Unsupported(v, why) if v == "1.3.17" && why.contains("1.4.10"))
        );
        assert!(
            matches!(support("2.0.0-beta.1"), Support::Unsupported(_, why) if why.contains("1.x"))
        );
        assert!(matches!(support("0.15.31"), Support::Unsupported(..)));
        assert!(matches!(support("dev build"), Support::Unknown(_)));
    }
}
