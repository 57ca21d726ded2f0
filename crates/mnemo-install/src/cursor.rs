//! Cursor: mnemo's entries in `~/.cursor/hooks.json`, and its MCP server in `~/.cursor/mcp.json`.
//!
//! Cursor's hooks file is flat: `{"version": 1, "hooks": {"<event>": [{"command", "timeout"}]}}`,
//! with no matcher groups (timeouts in seconds). Each spec becomes one entry appended to its
//! event's array; entries are recognised as ours by their command line (`is_ours`), never by
//! position, and uninstall takes out exactly those, with any event array they leave empty.
//! `version` is added when the file has none (Cursor ignores a file without it) and removed again
//! only when mnemo's entries were all that was in the file.
//!
//! The MCP server is `mcpServers.mnemo = {"command", "args"}` in `mcp.json`
//! ([`crate::claude_code::plan_mcp_install_plain`]).

use jsonc_parser::cst::{CstArray, CstInputValue, CstObject, CstObjectProp};
use mnemo_core::host::{Host, host};
use mnemo_core::model::Platform;

use crate::claude_code::{HookSpec, PLAIN_PLANNERS};
use crate::command::is_mnemo_hook_command_for;
use crate::edit::{Change, ChangeKind, ParseError, SettingsEdit};
use crate::host::{HookPlanners, Installer, McpPlanners};
use crate::jsonc::{Document, describe, string_property};

pub struct Cursor;

pub static INSTALLER: Cursor = Cursor;

/// The planners of Cursor's flat hooks file; an entry is ours when its command is
/// `mnemo hook <platform> ...`.
pub const PLANNERS: HookPlanners = HookPlanners {
    install: |platform, text, _program, specs| plan_install(text, specs, ours(platform)),
    uninstall: |platform, text| plan_uninstall(text, ours(platform)),
    find: |platform, text| find_hooks(text, ours(platform)),
};

/// Is a hook command one of mnemo's for `platform`?
fn ours(platform: Platform) -> impl Fn(&str) -> bool {
    move |command| is_mnemo_hook_command_for(command, platform.as_str())
}

impl Installer for Cursor {
    fn host(&self) -> &'static Host {
        host(Platform::Cursor)
    }

    fn hook_planners(&self) -> &'static HookPlanners {
        &PLANNERS
    }

    fn mcp_planners(&self) -> &'static McpPlanners {
        &PLAIN_PLANNERS
    }
}

/// The `version` Cursor's hooks file format carries.
pub const HOOKS_VERSION: u32 = 1;

/// Merge `specs` into the hooks file text `existing` ("" for a missing file): one entry of ours
/// per spec, added, updated in place (command, timeout) or left alone; further entries of ours
/// (duplicates, events mnemo no longer hooks) are removed. Nothing that is not ours changes.
pub fn plan_install(
    existing: &str,
    specs: &[HookSpec],
    is_ours: impl Fn(&str) -> bool,
) -> Result<SettingsEdit, ParseError> {
    let doc = Document::parse(existing)?;
    let section = read_section(&doc, &is_ours)?;
    let ours = section.as_ref().map(|s| s.ours.as_slice()).unwrap_or(&[]);
    let mut claimed = vec![false; ours.len()];
    let mut changes = Vec::new();
    let mut additions = Vec::new();
    for spec in specs {
        let exact = (0..ours.len()).find(|&i| !claimed[i] && matches(&ours[i], spec));
        let same_event = || (0..ours.len()).find(|&i| !claimed[i] && ours[i].event == spec.event);
        let kind = match exact
            .map(|i| (i, true))
            .or_else(|| same_event().map(|i| (i, false)))
        {
            Some((i, true)) => {
                claimed[i] = true;
                ChangeKind::Unchanged
            }
            Some((i, false)) => {
                claimed[i] = true;
                update(&ours[i], spec);
                ChangeKind::Updated
            }
            None => {
                additions.push(spec);
                ChangeKind::Added
            }
        };
        changes.push(Change::new(kind, &spec.event, &spec.command));
    }
    for (entry, _) in ours.iter().zip(&claimed).filter(|(_, c)| !**c) {
        changes.push(Change::new(
            ChangeKind::Removed,
            &entry.event,
            &entry.command,
        ));
    }
    if changes.iter().all(|c| c.kind == ChangeKind::Unchanged) {
        return Ok(SettingsEdit::unchanged(existing, changes));
    }
    let root = doc.root_object_or_create();
    if root.get("version").is_none() {
        root.insert(0, "version", HOOKS_VERSION.into());
    }
    let hooks = match &section {
        Some(section) => section.object.clone(),
        None => root.object_value_or_set("hooks"),
    };
    for spec in additions {
        hooks
            .array_value_or_set(&spec.event)
            .append(entry_value(spec));
    }
    for (entry, _) in ours.iter().zip(&claimed).filter(|(_, c)| !**c) {
        remove(entry);
    }
    Ok(SettingsEdit {
        new_text: doc.render(),
        changes,
    })
}

/// Remove every entry of ours, each event array left empty by that, then `hooks` and `version`
/// when nothing else is left.
pub fn plan_uninstall(
    existing: &str,
    is_ours: impl Fn(&str) -> bool,
) -> Result<SettingsEdit, ParseError> {
    let doc = Document::parse(existing)?;
    let Some(section) = read_section(&doc, &is_ours)? else {
        return Ok(SettingsEdit::unchanged(existing, Vec::new()));
    };
    if section.ours.is_empty() {
        return Ok(SettingsEdit::unchanged(existing, Vec::new()));
    }
    let mut changes = Vec::new();
    for entry in &section.ours {
        remove(entry);
        changes.push(Change::new(
            ChangeKind::Removed,
            &entry.event,
            &entry.command,
        ));
    }
    if section.object.properties().is_empty() {
        section.prop.clone().remove();
        if let Some(root) = doc.existing_root_object()?
            && root.properties().len() == 1
            && let Some(version) = root.get("version")
        {
            version.remove();
        }
    }
    Ok(SettingsEdit {
        new_text: doc.render(),
        changes,
    })
}

/// mnemo's entries in the hooks file text, as (event, command), in document order.
pub fn find_hooks(
    existing: &str,
    is_ours: impl Fn(&str) -> bool,
) -> Result<Vec<(String, String)>, ParseError> {
    let doc = Document::parse(existing)?;
    Ok(read_section(&doc, &is_ours)?
        .map(|s| s.ours.into_iter().map(|e| (e.event, e.command)).collect())
        .unwrap_or_default())
}

/// The `hooks` object, with the entries of ours found in it.
struct Section {
    prop: CstObjectProp,
    object: CstObject,
    ours: Vec<Entry>,
}

/// One entry of ours and the event array holding it.
struct Entry {
    event: String,
    event_prop: CstObjectProp,
    array: CstArray,
    object: CstObject,
    command: String,
}

fn read_section(
    doc: &Document,
    is_ours: &impl Fn(&str) -> bool,
) -> Result<Option<Section>, ParseError> {
    let Some(root) = doc.existing_root_object()? else {
        return Ok(None);
    };
    let Some((prop, object)) = doc.object_property(&root, "hooks")? else {
        return Ok(None);
    };
    let mut ours = Vec::new();
    for event_prop in object.properties() {
        let (Some(event), Some(value)) = (event_prop.decoded_name(), event_prop.value()) else {
            continue;
        };
        let Some(array) = value.as_array() else {
            let message = format!(
                "`hooks.{event}` must be an array of hooks, but it is {}",
                describe(&value)
            );
            return Err(doc.shape_error(&value, message));
        };
        for entry in array.elements().iter().filter_map(|n| n.as_object()) {
            if let Some(command) = string_property(&entry, "command").filter(|c| is_ours(c)) {
                ours.push(Entry {
                    event: event.clone(),
                    event_prop: event_prop.clone(),
                    array: array.clone(),
                    object: entry,
                    command,
                });
            }
        }
    }
    Ok(Some(Section { prop, object, ours }))
}

fn matches(entry: &Entry, spec: &HookSpec) -> bool {
    entry.event == spec.event && entry.command == spec.command && timeout_matches(entry, spec)
}

/// Compared as numbers, not text: `10` and `10.0` are the same timeout.
fn timeout_matches(entry: &Entry, spec: &HookSpec) -> bool {
    entry
        .object
        .get("timeout")
        .and_then(|prop| prop.to_serde_value())
        .and_then(|value| value.as_f64())
        == Some(f64::from(spec.timeout_secs))
}

fn update(entry: &Entry, spec: &HookSpec) {
    match entry.object.get("command") {
        Some(prop) => prop.set_value(spec.command.as_str().into()),
        None => {
            entry.object.append("command", spec.command.as_str().into());
        }
    }
    match entry.object.get("timeout") {
        Some(prop) => prop.set_value(spec.timeout_secs.into()),
        None => {
            entry.object.append("timeout", spec.timeout_secs.into());
        }
    }
}

fn remove(entry: &Entry) {
    if entry.array.elements().len() > 1 {
        entry.object.clone().remove();
    } else {
        entry.event_prop.clone().remove();
    }
}

fn entry_value(spec: &HookSpec) -> CstInputValue {
    CstInputValue::Object(vec![
        ("command".to_string(), spec.command.as_str().into()),
        ("timeout".to_string(), spec.timeout_secs.into()),
    ])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ours(command: &str) -> bool {
        command.contains(" hook cursor ")
    }

    fn specs(program: &str) -> Vec<HookSpec> {
        ["sessionStart", "postToolUse"]
            .iter()
            .map(|event| HookSpec {
                event: (*event).to_owned(),
                matcher: None,
                command: format!("{program} hook cursor {event}"),
                timeout_secs: 10,
            })
            .collect()
    }

    #[test]
    fn a_new_file_gets_version_and_flat_entries() {
        let edit = plan_install("", &specs("/bin/mnemo"), ours).unwrap();
        let value: serde_json::Value = serde_json::from_str(&edit.new_text).unwrap();
        assert_eq!(value["version"], 1);
        assert_eq!(
            value["hooks"]["postToolUse"],
            serde_json::json!([{"command": "/bin/mnemo hook cursor postToolUse", "timeout": 10}])
        );
        assert!(edit.changes.iter().all(|c| c.kind == ChangeKind::Added));
        let back = plan_uninstall(&edit.new_text, ours).unwrap();
        assert_eq!(
            serde_json::from_str::<serde_json::Value>(&back.new_text).unwrap(),
            serde_json::json!({})
        );
    }

    #[test]
    fn other_hooks_and_comments_survive_install_and_uninstall() {
        let existing = r#"{
  // team hooks
  "version": 1,
  "hooks": {
    "postToolUse": [
      { "command": "./audit.sh" }
    ]
  }
}
"#;
        let edit = plan_install(existing, &specs("/bin/mnemo"), ours).unwrap();
        assert!(edit.new_text.contains("// team hooks"));
        assert!(edit.new_text.contains("./audit.sh"));
        assert_eq!(find_hooks(&edit.new_text, ours).unwrap().len(), 2);
        let again = plan_install(&edit.new_text, &specs("/bin/mnemo"), ours).unwrap();
        assert!(again.is_noop());
        assert_eq!(again.new_text, edit.new_text);
        assert_eq!(
            plan_uninstall(&edit.new_text, ours).unwrap().new_text,
            existing
        );
    }

    #[test]
    fn a_moved_binary_is_updated_in_place_and_stale_events_go() {
        let old = plan_install("", &specs("/old/mnemo"), ours)
            .unwrap()
            .new_text;
        let new_specs = vec![specs("/new/mnemo").remove(1)];
        let edit = plan_install(&old, &new_specs, ours).unwrap();
        let kinds: Vec<_> = edit
            .changes
            .iter()
            .map(|c| (c.kind, c.event.as_str()))
            .collect();
        assert_eq!(
            kinds,
            vec![
                (ChangeKind::Updated, "postToolUse"),
                (ChangeKind::Removed, "sessionStart")
            ]
        );
        assert_eq!(
            find_hooks(&edit.new_text, ours).unwrap(),
            vec![(
                "postToolUse".to_owned(),
                "/new/mnemo hook cursor postToolUse".to_owned()
            )]
        );
    }

    #[test]
    fn a_hooks_value_of_the_wrong_shape_is_refused() {
        let err = plan_install(r#"{"hooks": []}"#, &specs("m"), ours).unwrap_err();
        assert!(err.message.contains("`hooks` must be an object"), "{err}");
    }
}
