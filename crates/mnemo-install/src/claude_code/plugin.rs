//! The mnemo plugin in Claude Code's own records: which settings scope enables or disables it
//! (`enabledPlugins`, keyed `<plugin>@<marketplace>`) and where `claude plugin install` put it
//! (`plugins/installed_plugins.json`).
//!
//! `mnemo install` reads these so that it does not add a second set of hooks beside the plugin's,
//! and `mnemo doctor` to report the plugin. Reading only: Claude Code owns these files.

use serde_json::Value;

use crate::edit::{ParseError, ParseErrorKind};
use crate::jsonc;

/// The plugin's name in `.claude-plugin/plugin.json` and in every plugin id (`mnemo@<marketplace>`).
pub const PLUGIN_NAME: &str = "mnemo";

/// What one settings file says about the mnemo plugin: `enabledPlugins["mnemo@<marketplace>"]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PluginSetting {
    /// The plugin id, e.g. `mnemo@mnemo`.
    pub id: String,
    /// `true` when enabled, `false` when the user switched it off.
    pub enabled: bool,
}

/// Where `claude plugin install` put a plugin, from `installed_plugins.json`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InstalledPlugin {
    pub version: Option<String>,
    pub install_path: Option<String>,
    /// `user`, `project` or `local`.
    pub scope: Option<String>,
}

/// Is `id` the mnemo plugin, from any marketplace?
pub fn is_mnemo_plugin_id(id: &str) -> bool {
    id.split_once('@')
        .is_some_and(|(name, marketplace)| name == PLUGIN_NAME && !marketplace.is_empty())
}

/// The mnemo plugin entries of a settings file's `enabledPlugins` (JSONC, as Claude Code accepts).
pub fn mnemo_plugin_settings(settings: &str) -> Result<Vec<PluginSetting>, ParseError> {
    let value = parse(settings)?;
    let Some(enabled) = value.get("enabledPlugins").and_then(Value::as_object) else {
        return Ok(Vec::new());
    };
    Ok(enabled
        .iter()
        .filter(|(id, _)| is_mnemo_plugin_id(id))
        .map(|(id, on)| PluginSetting {
            id: id.clone(),
            enabled: is_on(on),
        })
        .collect())
}

/// The record of plugin `id` in `installed_plugins.json` (format version 2: `plugins.<id>` is a
/// list of installs, one per scope; the first is taken).
pub fn installed_plugin(installed_plugins: &str, id: &str) -> Option<InstalledPlugin> {
    let value: Value = serde_json::from_str(installed_plugins).ok()?;
    let entry = value.get("plugins")?.get(id)?;
    let install = entry.as_array().and_then(|a| a.first()).unwrap_or(entry);
    let text = |key: &str| install.get(key).and_then(Value::as_str).map(str::to_owned);
    Some(InstalledPlugin {
        version: text("version"),
        install_path: text("installPath"),
        scope: text("scope"),
    })
}

/// Claude Code enables a plugin with `true`; an array of versions (older formats) also means on.
fn is_on(value: &Value) -> bool {
    match value {
        Value::Bool(on) => *on,
        Value::Array(items) => !items.is_empty(),
        _ => false,
    }
}

/// The file as a JSON value (`null` when it holds none). Errors carry a line and column.
fn parse(text: &str) -> Result<Value, ParseError> {
    // Checked by the CST parser first: its errors say more, and it takes a byte-order mark.
    jsonc::Document::parse(text)?;
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let value: Option<Value> = jsonc_parser::parse_to_serde_value(text, &jsonc::parse_options())
        .map_err(|e| ParseError {
            line: e.line_display(),
            column: e.column_display(),
            message: e.kind().to_string(),
            kind: ParseErrorKind::Syntax,
        })?;
    Ok(value.unwrap_or(Value::Null))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_plugin_from_any_marketplace_and_its_state() {
        let settings = r#"{
            // comments are fine
            "enabledPlugins": {
                "mnemo@mnemo": true,
                "mnemo@my-fork": false,
                "mnemonic@mnemo": true,
                "other@mnemo": true,
            }
        }"#;
        assert_eq!(
            mnemo_plugin_settings(settings).unwrap(),
            [
                PluginSetting {
                    id: "mnemo@mnemo".into(),
                    enabled: true
                },
                PluginSetting {
                    id: "mnemo@my-fork".into(),
                    enabled: false
                },
            ]
        );
        assert!(mnemo_plugin_settings("{}").unwrap().is_empty());
        assert!(mnemo_plugin_settings("").unwrap().is_empty());
        assert!(mnemo_plugin_settings("{ nope").is_err());
        assert!(!is_mnemo_plugin_id("mnemo"));
        assert!(!is_mnemo_plugin_id("mnemo@"));
    }

    #[test]
    fn reads_the_install_record() {
        let installed = r#"{"version": 2, "plugins": {"mnemo@mnemo": [
            {"scope": "user", "installPath": "/h/.claude/plugins/cache/mnemo/mnemo/0.1.0",
             "version": "0.1.0"}]}}"#;
        let found = installed_plugin(installed, "mnemo@mnemo").unwrap();
        assert_eq!(found.version.as_deref(), Some("0.1.0"));
        assert_eq!(found.scope.as_deref(), Some("user"));
        assert_eq!(
            found.install_path.as_deref(),
            Some("/h/.claude/plugins/cache/mnemo/mnemo/0.1.0")
        );
        assert_eq!(installed_plugin(installed, "mnemo@other"), None);
        assert_eq!(installed_plugin("not json", "mnemo@mnemo"), None);
    }
}
