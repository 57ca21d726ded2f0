//! mnemo's MCP server in OpenCode's `opencode.json`: `mcp.mnemo = {"type": "local", "command":
//! [binary, "mcp"], "enabled": true}` (OpenCode's local servers take the whole command line as one
//! array). Only that key is touched; comments and everything else stay.

use jsonc_parser::cst::CstInputValue;
use serde_json::{Value, json};

use crate::edit::{Change, ChangeKind, ParseError, SettingsEdit};
use crate::host::{McpEntry, McpPlanners};
use crate::jsonc::Document;

/// The key holding OpenCode's MCP servers.
const KEY: &str = "mcp";

/// The planners of `opencode.json`.
pub const PLANNERS: McpPlanners = McpPlanners {
    install: plan_mcp_install,
    uninstall: plan_mcp_uninstall,
    find: find_mcp_entry,
};

/// Register (or bring up to date) the local server `name` running `command args...`.
pub fn plan_mcp_install(
    existing: &str,
    name: &str,
    command: &str,
    args: &[String],
) -> Result<SettingsEdit, ParseError> {
    let doc = Document::parse(existing)?;
    let servers = match doc.existing_root_object()? {
        Some(root) => doc.object_property(&root, KEY)?.map(|(_, servers)| servers),
        None => None,
    };
    let line: Vec<String> = std::iter::once(command.to_owned())
        .chain(args.iter().cloned())
        .collect();
    let wanted = json!({"type": "local", "command": line, "enabled": true});
    let entry_value = || {
        CstInputValue::Object(vec![
            ("type".to_owned(), "local".into()),
            ("command".to_owned(), input_value(&wanted["command"])),
            ("enabled".to_owned(), true.into()),
        ])
    };
    let entry = match &servers {
        Some(servers) => doc.unique_property(servers, name, &format!("{KEY}.{name}"))?,
        None => None,
    };
    let kind = match (&servers, entry) {
        (_, Some(prop)) if prop.to_serde_value().as_ref() == Some(&wanted) => ChangeKind::Unchanged,
        (_, Some(prop)) => {
            prop.set_value(entry_value());
            ChangeKind::Updated
        }
        (Some(servers), None) => {
            servers.append(name, entry_value());
            ChangeKind::Added
        }
        (None, None) => {
            doc.root_object_or_create().append(
                KEY,
                CstInputValue::Object(vec![(name.to_owned(), entry_value())]),
            );
            ChangeKind::Added
        }
    };
    let new_text = match kind {
        ChangeKind::Unchanged => existing.to_owned(),
        _ => doc.render(),
    };
    Ok(SettingsEdit {
        new_text,
        changes: vec![change(kind, name, &line)],
    })
}

/// Unregister `name`, and `mcp` with it when nothing else is left in it.
pub fn plan_mcp_uninstall(existing: &str, name: &str) -> Result<SettingsEdit, ParseError> {
    let doc = Document::parse(existing)?;
    let unchanged = || SettingsEdit {
        new_text: existing.to_owned(),
        changes: Vec::new(),
    };
    let Some(root) = doc.existing_root_object()? else {
        return Ok(unchanged());
    };
    let Some(servers) = doc.object_property(&root, KEY)?.map(|(_, servers)| servers) else {
        return Ok(unchanged());
    };
    let Some(entry) = doc.unique_property(&servers, name, &format!("{KEY}.{name}"))? else {
        return Ok(unchanged());
    };
    let line: Vec<String> = entry_of(entry.to_serde_value().as_ref())
        .map(|e| std::iter::once(e.command).chain(e.args).collect())
        .unwrap_or_default();
    if servers.properties().len() == 1 {
        if let Some(prop) = root.get(KEY) {
            prop.remove();
        }
    } else {
        entry.remove();
    }
    Ok(SettingsEdit {
        new_text: doc.render(),
        changes: vec![change(ChangeKind::Removed, name, &line)],
    })
}

/// The server `name` as OpenCode would run it.
pub fn find_mcp_entry(existing: &str, name: &str) -> Result<Option<McpEntry>, ParseError> {
    let doc = Document::parse(existing)?;
    let Some(root) = doc.existing_root_object()? else {
        return Ok(None);
    };
    let Some(servers) = doc.object_property(&root, KEY)?.map(|(_, servers)| servers) else {
        return Ok(None);
    };
    let entry = doc.unique_property(&servers, name, &format!("{KEY}.{name}"))?;
    Ok(entry_of(entry.and_then(|p| p.to_serde_value()).as_ref()))
}

fn entry_of(value: Option<&Value>) -> Option<McpEntry> {
    let line: Vec<String> = serde_json::from_value(value?.get("command")?.clone()).ok()?;
    let (command, args) = line.split_first()?;
    Some(McpEntry {
        command: command.clone(),
        args: args.to_vec(),
    })
}

/// A list of strings as a CST value.
fn input_value(value: &Value) -> CstInputValue {
    let items = value.as_array().map(Vec::as_slice).unwrap_or(&[]);
    CstInputValue::Array(
        items
            .iter()
            .filter_map(Value::as_str)
            .map(Into::into)
            .collect(),
    )
}

fn change(kind: ChangeKind, name: &str, line: &[String]) -> Change {
    Change {
        kind,
        event: format!("{KEY}.{name}"),
        command: line.join(" "),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn install_update_and_uninstall_keep_the_rest() {
        let existing = "{\n  // my models\n  \"model\": \"anthropic/x\"\n}\n";
        let args = ["mcp".to_owned()];
        let edit = plan_mcp_install(existing, "mnemo", "/bin/mnemo", &args).unwrap();
        assert_eq!(edit.changes[0].kind, ChangeKind::Added);
        assert!(edit.new_text.contains("// my models"));
        assert_eq!(
            find_mcp_entry(&edit.new_text, "mnemo").unwrap(),
            Some(McpEntry {
                command: "/bin/mnemo".into(),
                args: args.to_vec()
            })
        );
        assert!(
            plan_mcp_install(&edit.new_text, "mnemo", "/bin/mnemo", &args)
                .unwrap()
                .is_noop()
        );
        let moved = plan_mcp_install(&edit.new_text, "mnemo", "/usr/bin/mnemo", &args).unwrap();
        assert_eq!(moved.changes[0].kind, ChangeKind::Updated);
        assert_eq!(
            plan_mcp_uninstall(&moved.new_text, "mnemo")
                .unwrap()
                .new_text,
            existing
        );
    }
}
