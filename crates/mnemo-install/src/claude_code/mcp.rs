//! Planning mnemo's MCP server entry in `~/.claude.json`, the way `claude mcp add --scope user`
//! writes it: `mcpServers.<name> = {"type": "stdio", "command": ..., "args": [...], "env": {}}`.
//!
//! That file is Claude Code's own state (projects, counters, account data) and can be large, so
//! only the one key is touched; everything else is carried through the CST untouched.

use jsonc_parser::cst::{CstInputValue, CstObject};

use crate::command::shell_quote;
use crate::edit::{Change, ChangeKind, ParseError, ParseErrorKind, SettingsEdit};
use crate::host::{McpEntry, McpPlanners};
use crate::jsonc::{Document, removal_drops_comments_outside, string_property};

/// The planners of `~/.claude.json`, which Claude Code reads as strict JSON.
pub const CLAUDE_PLANNERS: McpPlanners = McpPlanners {
    install: plan_mcp_install,
    uninstall: plan_mcp_uninstall,
    find: find_mcp_server_strict,
};

/// The planners of an `mcpServers` file of plain `{"command", "args"}` entries (Gemini CLI's
/// `settings.json`, Cursor's `mcp.json`), read as JSONC.
pub const PLAIN_PLANNERS: McpPlanners = McpPlanners {
    install: plan_mcp_install_plain,
    uninstall: plan_mcp_uninstall,
    find: find_mcp_server,
};

/// Register the stdio MCP server `name` running `command args...`, adding or updating
/// `mcpServers.<name>`.
///
/// An existing entry is updated field by field, so an `env` (or anything else) the user added to
/// it survives a reinstall.
pub fn plan_mcp_install(
    existing: &str,
    name: &str,
    command: &str,
    args: &[String],
) -> Result<SettingsEdit, ParseError> {
    plan(existing, name, command, args, Style::ClaudeStdio)
}

/// Register the MCP server `name` as `{"command": ..., "args": [...]}` only: the entry Gemini CLI
/// (`settings.json`) and Cursor (`mcp.json`) read, which know no `type` key for stdio servers.
/// Removal is [`plan_mcp_uninstall`], the same for every `mcpServers` file.
pub fn plan_mcp_install_plain(
    existing: &str,
    name: &str,
    command: &str,
    args: &[String],
) -> Result<SettingsEdit, ParseError> {
    plan(existing, name, command, args, Style::Plain)
}

/// The keys an entry carries besides `command` and `args`.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Style {
    /// `"type": "stdio"` and an `env` object, as `claude mcp add` writes.
    ClaudeStdio,
    Plain,
}

fn plan(
    existing: &str,
    name: &str,
    command: &str,
    args: &[String],
    style: Style,
) -> Result<SettingsEdit, ParseError> {
    let doc = Document::parse(existing)?;
    let servers = match doc.existing_root_object()? {
        Some(root) => doc
            .object_property(&root, "mcpServers")?
            .map(|(_, servers)| servers),
        None => None,
    };
    let entry = match &servers {
        Some(servers) => doc.unique_property(servers, name, &format!("mcpServers.{name}"))?,
        None => None,
    };
    let args_value = || CstInputValue::Array(args.iter().map(|a| a.as_str().into()).collect());
    let kind = match (&servers, entry) {
        (None, _) => {
            let server = (name.to_string(), server_value(command, args_value(), style));
            doc.root_object_or_create()
                .append("mcpServers", CstInputValue::Object(vec![server]));
            ChangeKind::Added
        }
        (Some(servers), None) => {
            servers.append(name, server_value(command, args_value(), style));
            ChangeKind::Added
        }
        (Some(_), Some(prop)) => match prop.object_value() {
            None => {
                prop.set_value(server_value(command, args_value(), style));
                ChangeKind::Updated
            }
            Some(server) => {
                let mut updated =
                    style == Style::ClaudeStdio && set_string(&server, "type", "stdio");
                updated |= set_string(&server, "command", command);
                let wanted_args = serde_json::Value::from(args.to_vec());
                match server.get("args") {
                    Some(prop) if prop.to_serde_value().as_ref() == Some(&wanted_args) => {}
                    Some(prop) => {
                        prop.set_value(args_value());
                        updated = true;
                    }
                    None => {
                        server.append("args", args_value());
                        updated = true;
                    }
                }
                if style == Style::ClaudeStdio && server.get("env").is_none() {
                    server.append("env", CstInputValue::Object(Vec::new()));
                    updated = true;
                }
                if updated {
                    ChangeKind::Updated
                } else {
                    ChangeKind::Unchanged
                }
            }
        },
    };
    let changes = vec![Change {
        kind,
        event: format!("mcpServers.{name}"),
        command: command_line(command, args),
    }];
    let new_text = match kind {
        ChangeKind::Unchanged => existing.to_string(),
        _ => doc.render(),
    };
    Ok(SettingsEdit { new_text, changes })
}

/// Unregister the MCP server `name`, dropping `mcpServers` as well when nothing else is left in it.
///
/// An `mcpServers` that install created holds only our entry, so dropping it makes
/// install-then-uninstall give back the original file; an `{}` that was there before install is
/// dropped too, which Claude Code reads the same way.
pub fn plan_mcp_uninstall(existing: &str, name: &str) -> Result<SettingsEdit, ParseError> {
    let doc = Document::parse(existing)?;
    let Some(root) = doc.existing_root_object()? else {
        return Ok(SettingsEdit::unchanged(existing, Vec::new()));
    };
    let Some((servers_prop, servers)) = doc.object_property(&root, "mcpServers")? else {
        return Ok(SettingsEdit::unchanged(existing, Vec::new()));
    };
    let Some(entry) = doc.unique_property(&servers, name, &format!("mcpServers.{name}"))? else {
        return Ok(SettingsEdit::unchanged(existing, Vec::new()));
    };
    let server = entry.object_value();
    let command = server
        .as_ref()
        .and_then(|s| string_property(s, "command"))
        .unwrap_or_default();
    let args: Vec<String> = server
        .as_ref()
        .and_then(|s| s.get("args"))
        .and_then(|prop| prop.to_serde_value())
        .and_then(|value| serde_json::from_value(value).ok())
        .unwrap_or_default();
    let only_ours = servers.properties().len() == 1
        && !removal_drops_comments_outside(&servers_prop.clone().into(), &entry.clone().into());
    if only_ours {
        servers_prop.remove();
    } else {
        entry.remove();
    }
    Ok(SettingsEdit {
        new_text: doc.render(),
        changes: vec![Change {
            kind: ChangeKind::Removed,
            event: format!("mcpServers.{name}"),
            command: command_line(&command, &args),
        }],
    })
}

/// The server `name` registered in the `mcpServers` of a JSONC file (`{"command", "args"}`), as
/// the host would read it; None when the file has none.
pub fn find_mcp_server(existing: &str, name: &str) -> Result<Option<McpEntry>, ParseError> {
    let doc = Document::parse(existing)?;
    let Some(root) = doc.existing_root_object()? else {
        return Ok(None);
    };
    let Some((_, servers)) = doc.object_property(&root, "mcpServers")? else {
        return Ok(None);
    };
    let server = doc
        .unique_property(&servers, name, &format!("mcpServers.{name}"))?
        .and_then(|prop| prop.to_serde_value());
    Ok(json_entry(server.as_ref()))
}

/// [`find_mcp_server`] in a file the host reads as strict JSON: comments or trailing commas are
/// an error there.
pub fn find_mcp_server_strict(existing: &str, name: &str) -> Result<Option<McpEntry>, ParseError> {
    let value: serde_json::Value = serde_json::from_str(existing).map_err(|e| ParseError {
        line: e.line(),
        column: e.column(),
        message: e.to_string(),
        kind: ParseErrorKind::Syntax,
    })?;
    Ok(json_entry(
        value.get("mcpServers").and_then(|s| s.get(name)),
    ))
}

/// `{"command": ..., "args": [...]}` as an entry.
fn json_entry(server: Option<&serde_json::Value>) -> Option<McpEntry> {
    let server = server?;
    Some(McpEntry {
        command: server
            .get("command")
            .and_then(|c| c.as_str())
            .unwrap_or_default()
            .to_owned(),
        args: server
            .get("args")
            .and_then(|a| serde_json::from_value::<Vec<String>>(a.clone()).ok())
            .unwrap_or_default(),
    })
}

fn server_value(command: &str, args: CstInputValue, style: Style) -> CstInputValue {
    match style {
        Style::ClaudeStdio => CstInputValue::Object(vec![
            ("type".to_string(), "stdio".into()),
            ("command".to_string(), command.into()),
            ("args".to_string(), args),
            ("env".to_string(), CstInputValue::Object(Vec::new())),
        ]),
        Style::Plain => CstInputValue::Object(vec![
            ("command".to_string(), command.into()),
            ("args".to_string(), args),
        ]),
    }
}

/// Sets the string property `key` of `object` to `value`; reports whether anything changed.
fn set_string(object: &CstObject, key: &str, value: &str) -> bool {
    if string_property(object, key).as_deref() == Some(value) {
        return false;
    }
    match object.get(key) {
        Some(prop) => prop.set_value(value.into()),
        None => {
            object.append(key, value.into());
        }
    }
    true
}

/// How the CLI shows the server's command: one shell line.
fn command_line(command: &str, args: &[String]) -> String {
    std::iter::once(command)
        .chain(args.iter().map(String::as_str))
        .map(shell_quote)
        .collect::<Vec<_>>()
        .join(" ")
}
