//! Is the mnemo Claude Code plugin (this repository's `plugin/`, installed with `claude plugin
//! install mnemo@<marketplace>`) enabled for this user and project? Read from Claude Code's
//! settings scopes and its `plugins/installed_plugins.json`, for `mnemo install` (no second set of
//! hooks) and `mnemo doctor` (report it, check that its `mnemo` on PATH is this one).

use std::path::{Path, PathBuf};

use mnemo_install::claude_code::plugin::{self, InstalledPlugin};
use mnemo_install::settings_file;

use super::install::claude_config_dir;

/// The mnemo plugin as Claude Code sees it.
#[derive(Debug, Clone)]
pub struct Plugin {
    /// `mnemo@<marketplace>`.
    pub id: String,
    /// On in the settings scope that decides (local over project over user).
    pub enabled: bool,
    /// The settings file that decides.
    pub settings: PathBuf,
    /// What `claude plugin install` recorded, if it did.
    pub installed: Option<InstalledPlugin>,
}

impl Plugin {
    /// `mnemo@mnemo 0.1.0, enabled in ~/.claude/settings.json`
    pub fn describe(&self) -> String {
        let version = self
            .installed
            .as_ref()
            .and_then(|i| i.version.as_deref())
            .map(|v| format!(" {v}"))
            .unwrap_or_default();
        let state = if self.enabled { "enabled" } else { "disabled" };
        format!(
            "{}{version}, {state} in {}",
            self.id,
            self.settings.display()
        )
    }
}

/// The mnemo plugin named in the settings that apply in `project_dir` (the current directory
/// when `None`), or `None` when no scope mentions it. Unreadable files count as silent: this is
/// advice, and `doctor` reports broken settings files in its hooks check.
pub fn find(project_dir: Option<&Path>) -> Option<Plugin> {
    let config = claude_config_dir().ok()?;
    let project = match project_dir {
        Some(dir) => dir.to_owned(),
        None => std::env::current_dir().ok()?,
    };
    let scopes = [
        config.join("settings.json"),
        project.join(".claude").join("settings.json"),
        project.join(".claude").join("settings.local.json"),
    ];
    // Later scopes override earlier ones, as in Claude Code.
    let mut found: Option<Plugin> = None;
    for path in scopes {
        let Ok(Some(text)) = settings_file::read(&path) else {
            continue;
        };
        let Ok(settings) = plugin::mnemo_plugin_settings(&text) else {
            continue;
        };
        let decisive = settings
            .iter()
            .find(|s| s.enabled)
            .or(settings.first())
            .cloned();
        if let Some(setting) = decisive {
            found = Some(Plugin {
                id: setting.id,
                enabled: setting.enabled,
                settings: path,
                installed: None,
            });
        }
    }
    let mut found = found?;
    found.installed = installed(&config, &found.id);
    Some(found)
}

fn installed(config: &Path, id: &str) -> Option<InstalledPlugin> {
    let path = config.join("plugins").join("installed_plugins.json");
    let text = std::fs::read_to_string(path).ok()?;
    plugin::installed_plugin(&text, id)
}
