//! Noticing claude-mem (thedotmack/claude-mem) in Claude Code's settings, so
//! that `mnemo install` and `mnemo doctor` can say when both would capture
//! every session.
//!
//! claude-mem installs as a Claude Code plugin from its own marketplace
//! (`/plugin install claude-mem` gives the id `claude-mem@thedotmack`): the
//! plugin is listed in `<config>/plugins/installed_plugins.json` and switched
//! on or off by `enabledPlugins` in a settings file. Older setups, and
//! copies of its hooks made by hand, name claude-mem in a hook command of a
//! settings file instead. Reading only: nothing here writes.

use std::path::{Path, PathBuf};

use serde_json::Value;

/// What was found of claude-mem.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Presence {
    /// Plugin ids (`claude-mem@thedotmack`) installed.
    pub installed: Vec<String>,
    /// `(settings file, plugin id, enabled)` for each `enabledPlugins` entry.
    pub switches: Vec<(PathBuf, String, bool)>,
    /// `(settings file, event)` of each hook whose command names claude-mem.
    pub hooks: Vec<(PathBuf, String)>,
}

impl Presence {
    pub fn is_present(&self) -> bool {
        !self.installed.is_empty() || !self.switches.is_empty() || !self.hooks.is_empty()
    }

    /// Plugins that capture: switched on somewhere, or installed and not
    /// switched off anywhere.
    pub fn enabled_plugins(&self) -> Vec<String> {
        let mut ids: Vec<String> = self
            .switches
            .iter()
            .filter(|(_, _, on)| *on)
            .map(|(_, id, _)| id.clone())
            .collect();
        for id in &self.installed {
            let switched = self.switches.iter().any(|(_, s, _)| s == id);
            if !switched && !ids.contains(id) {
                ids.push(id.clone());
            }
        }
        ids.sort();
        ids.dedup();
        ids
    }

    /// True when claude-mem records sessions (a plugin on, or its hooks).
    pub fn is_capturing(&self) -> bool {
        !self.enabled_plugins().is_empty() || !self.hooks.is_empty()
    }

    /// One line saying what captures, for messages.
    pub fn describe(&self) -> String {
        let mut parts = Vec::new();
        for id in self.enabled_plugins() {
            parts.push(format!("plugin {id} enabled"));
        }
        let mut files: Vec<&PathBuf> = self.hooks.iter().map(|(f, _)| f).collect();
        files.dedup();
        for file in files {
            parts.push(format!("hooks in {}", file.display()));
        }
        parts.join("; ")
    }
}

/// Looks in `config_dir` (Claude Code's, `~/.claude`) and in the given
/// extra settings files (a project's `.claude/settings*.json`).
pub fn detect(config_dir: &Path, extra_settings: &[PathBuf]) -> Presence {
    let mut presence = Presence {
        installed: installed_plugins(&config_dir.join("plugins/installed_plugins.json")),
        ..Presence::default()
    };
    let user = [
        config_dir.join("settings.json"),
        config_dir.join("settings.local.json"),
    ];
    for file in user.iter().chain(extra_settings) {
        if let Some(settings) = read_jsonc(file) {
            scan_settings(file, &settings, &mut presence);
        }
    }
    presence
}

pub fn is_claude_mem_plugin(id: &str) -> bool {
    id.split('@').next() == Some("claude-mem")
}

fn read_jsonc(path: &Path) -> Option<Value> {
    let text = std::fs::read_to_string(path).ok()?;
    jsonc_parser::parse_to_serde_value::<Option<Value>>(&text, &Default::default())
        .ok()
        .flatten()
}

/// Plugin ids in `installed_plugins.json` (`{"plugins": {"id": ...}}`).
fn installed_plugins(path: &Path) -> Vec<String> {
    let Some(Value::Object(plugins)) = read_jsonc(path).and_then(|v| v.get("plugins").cloned())
    else {
        return Vec::new();
    };
    plugins
        .keys()
        .filter(|id| is_claude_mem_plugin(id))
        .cloned()
        .collect()
}

fn scan_settings(file: &Path, settings: &Value, presence: &mut Presence) {
    if let Some(Value::Object(switches)) = settings.get("enabledPlugins") {
        for (id, on) in switches {
            if is_claude_mem_plugin(id) {
                let on = on.as_bool().unwrap_or(true);
                presence.switches.push((file.to_owned(), id.clone(), on));
            }
        }
    }
    if let Some(Value::Object(events)) = settings.get("hooks") {
        for (event, groups) in events {
            if names_claude_mem(groups) {
                presence.hooks.push((file.to_owned(), event.clone()));
            }
        }
    }
}

/// True when some `command` under `groups` runs claude-mem.
fn names_claude_mem(groups: &Value) -> bool {
    let commands = groups
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|g| g.get("hooks")?.as_array())
        .flatten()
        .filter_map(|h| h.get("command")?.as_str());
    commands
        .into_iter()
        .any(|c| c.contains("claude-mem") || c.contains("thedotmack"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(dir: &Path, rel: &str, text: &str) {
        let path = dir.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    #[test]
    fn an_installed_plugin_captures_until_switched_off() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        assert!(!detect(dir, &[]).is_present());
        write(
            dir,
            "plugins/installed_plugins.json",
            r#"{"version":2,"plugins":{"claude-mem@thedotmack":[{"scope":"user"}],"other@x":[]}}"#,
        );
        let found = detect(dir, &[]);
        assert_eq!(found.installed, ["claude-mem@thedotmack"]);
        assert!(found.is_capturing());
        write(
            dir,
            "settings.json",
            "{\n // mine\n \"enabledPlugins\": {\"claude-mem@thedotmack\": false,},\n}",
        );
        let found = detect(dir, &[]);
        assert!(found.is_present() && !found.is_capturing(), "{found:?}");
        write(
            dir,
            "settings.json",
            r#"{"enabledPlugins": {"claude-mem@thedotmack": true}}"#,
        );
        assert_eq!(
            detect(dir, &[]).describe(),
            "plugin claude-mem@thedotmack enabled"
        );
    }

    #[test]
    fn hooks_that_run_claude_mem_capture() {
        let tmp = tempfile::tempdir().unwrap();
        let settings = r#"{"hooks": {"PostToolUse": [{"matcher": "*", "hooks": [
            {"type": "command", "command": "node ~/.claude/plugins/marketplaces/thedotmack/plugin/scripts/save-hook.js"}]}],
            "Stop": [{"hooks": [{"type": "command", "command": "mnemo hook claude-code Stop"}]}]}}"#;
        write(tmp.path(), "settings.json", settings);
        let found = detect(tmp.path(), &[]);
        assert!(found.is_capturing());
        assert_eq!(found.hooks.len(), 1);
        assert_eq!(found.hooks[0].1, "PostToolUse");
    }
}
