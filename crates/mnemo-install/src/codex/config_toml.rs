//! Planning mnemo's MCP server in Codex's `config.toml`:
//! `[mcp_servers.mnemo]` with `command` and `args`.
//!
//! The file is the user's, hand-edited and commented, so the edit goes through `toml_edit`:
//! comments, ordering and formatting survive, keys the user added to our table (`env`,
//! `startup_timeout_sec`) stay, and uninstall takes out exactly the table install added.

use toml_edit::{Array, DocumentMut, Item, Table, value};

use crate::edit::{Change, ChangeKind, ParseError, ParseErrorKind, SettingsEdit};
use crate::host::{McpEntry, McpPlanners};

/// The key Codex reads MCP servers from.
const SERVERS: &str = "mcp_servers";

/// The planners of `config.toml`.
pub const PLANNERS: McpPlanners = McpPlanners {
    install: plan_mcp_install,
    uninstall: plan_mcp_uninstall,
    find: find_mcp_entry,
};

/// Adds or updates `[mcp_servers.<name>]` to run `command args...`.
pub fn plan_mcp_install(
    existing: &str,
    name: &str,
    command: &str,
    args: &[String],
) -> Result<SettingsEdit, ParseError> {
    let mut doc = parse(existing)?;
    let key = format!("{SERVERS}.{name}");
    let shown = command_line(command, args);
    if entry_of(&doc, name)?.is_some_and(|e| e.command == command && e.args == args) {
        return Ok(unchanged(existing, ChangeKind::Unchanged, &key, &shown));
    }
    let servers = doc
        .entry(SERVERS)
        .or_insert_with(|| {
            let mut t = Table::new();
            t.set_implicit(true);
            Item::Table(t)
        })
        .as_table_mut()
        .ok_or_else(|| shape(format!("`{SERVERS}` must be a table")))?;
    let kind = if servers.contains_key(name) {
        ChangeKind::Updated
    } else {
        servers.insert(name, Item::Table(Table::new()));
        ChangeKind::Added
    };
    let server = servers[name]
        .as_table_mut()
        .ok_or_else(|| shape(format!("`{key}` must be a table")))?;
    server["command"] = value(command);
    server["args"] = value(args.iter().map(String::as_str).collect::<Array>());
    Ok(SettingsEdit {
        new_text: doc.to_string(),
        changes: vec![Change {
            kind,
            event: key,
            command: shown,
        }],
    })
}

/// Removes `[mcp_servers.<name>]`, and `mcp_servers` itself when it was only there for it.
pub fn plan_mcp_uninstall(existing: &str, name: &str) -> Result<SettingsEdit, ParseError> {
    let mut doc = parse(existing)?;
    let Some(entry) = entry_of(&doc, name)? else {
        return Ok(SettingsEdit {
            new_text: existing.to_owned(),
            changes: Vec::new(),
        });
    };
    let servers = doc[SERVERS].as_table_mut().expect("checked by entry_of");
    servers.remove(name);
    if servers.is_empty() && servers.is_implicit() {
        doc.remove(SERVERS);
    }
    Ok(SettingsEdit {
        new_text: doc.to_string(),
        changes: vec![Change {
            kind: ChangeKind::Removed,
            event: format!("{SERVERS}.{name}"),
            command: command_line(&entry.command, &entry.args),
        }],
    })
}

/// `[mcp_servers.<name>]` of the text, if there.
pub fn find_mcp_entry(existing: &str, name: &str) -> Result<Option<McpEntry>, ParseError> {
    entry_of(&parse(existing)?, name)
}

fn entry_of(doc: &DocumentMut, name: &str) -> Result<Option<McpEntry>, ParseError> {
    let Some(servers) = doc.get(SERVERS) else {
        return Ok(None);
    };
    let servers = servers
        .as_table_like()
        .ok_or_else(|| shape(format!("`{SERVERS}` must be a table")))?;
    let Some(server) = servers.get(name) else {
        return Ok(None);
    };
    let server = server
        .as_table_like()
        .ok_or_else(|| shape(format!("`{SERVERS}.{name}` must be a table")))?;
    let command = server
        .get("command")
        .and_then(Item::as_str)
        .unwrap_or_default()
        .to_owned();
    let args = server
        .get("args")
        .and_then(Item::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|v| v.as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default();
    Ok(Some(McpEntry { command, args }))
}

fn parse(text: &str) -> Result<DocumentMut, ParseError> {
    text.parse::<DocumentMut>().map_err(|e| {
        let (line, column) = e
            .span()
            .map(|span| line_column(text, span.start))
            .unwrap_or((1, 1));
        ParseError {
            line,
            column,
            message: e.message().trim().to_owned(),
            kind: ParseErrorKind::Syntax,
        }
    })
}

fn line_column(text: &str, offset: usize) -> (usize, usize) {
    let before = &text[..offset.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (line, column)
}

fn shape(message: String) -> ParseError {
    ParseError {
        line: 1,
        column: 1,
        message,
        kind: ParseErrorKind::Shape,
    }
}

fn unchanged(existing: &str, kind: ChangeKind, key: &str, shown: &str) -> SettingsEdit {
    SettingsEdit {
        new_text: existing.to_owned(),
        changes: vec![Change {
            kind,
            event: key.to_owned(),
            command: shown.to_owned(),
        }],
    }
}

fn command_line(command: &str, args: &[String]) -> String {
    std::iter::once(command)
        .chain(args.iter().map(String::as_str))
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    const USER: &str = "# my codex\nmodel = \"gpt-5.5\"   # the good one\n\n[mcp_servers.other]\ncommand = \"x\" # keep\n\n[features]\nhooks = true\n";

    #[test]
    fn install_keeps_comments_and_uninstall_restores_the_file() {
        let args = vec!["mcp".to_owned()];
        let edit = plan_mcp_install(USER, "mnemo", "/usr/bin/mnemo", &args).unwrap();
        assert_eq!(edit.changes[0].kind, ChangeKind::Added);
        assert!(
            edit.new_text.contains("# the good one"),
            "{}",
            edit.new_text
        );
        assert!(edit.new_text.contains("command = \"x\" # keep"));
        let doc: toml::Table = toml::from_str(&edit.new_text).unwrap();
        assert_eq!(
            doc["mcp_servers"]["mnemo"]["command"].as_str(),
            Some("/usr/bin/mnemo")
        );
        assert_eq!(doc["mcp_servers"]["mnemo"]["args"][0].as_str(), Some("mcp"));
        let again = plan_mcp_install(&edit.new_text, "mnemo", "/usr/bin/mnemo", &args).unwrap();
        assert!(again.is_noop());
        assert_eq!(again.new_text, edit.new_text);
        let removed = plan_mcp_uninstall(&edit.new_text, "mnemo").unwrap();
        assert_eq!(removed.new_text, USER);
    }

    #[test]
    fn an_empty_file_gets_a_table_and_loses_it_again() {
        let args = vec!["mcp".to_owned()];
        let edit = plan_mcp_install("", "mnemo", "/m", &args).unwrap();
        assert_eq!(
            edit.new_text,
            "[mcp_servers.mnemo]\ncommand = \"/m\"\nargs = [\"mcp\"]\n"
        );
        assert_eq!(
            plan_mcp_uninstall(&edit.new_text, "mnemo")
                .unwrap()
                .new_text,
            ""
        );
    }

    #[test]
    fn update_keeps_the_users_keys_in_our_table() {
        let text = "[mcp_servers.mnemo]\ncommand = \"/old/mnemo\"\nargs = [\"mcp\"]\nenv = { A = \"1\" }\n";
        let edit = plan_mcp_install(text, "mnemo", "/new/mnemo", &["mcp".to_owned()]).unwrap();
        assert_eq!(edit.changes[0].kind, ChangeKind::Updated);
        assert!(
            edit.new_text.contains("env = { A = \"1\" }"),
            "{}",
            edit.new_text
        );
        assert!(edit.new_text.contains("/new/mnemo"));
    }

    #[test]
    fn broken_toml_is_refused_with_its_line() {
        let err = plan_mcp_install("a = 1\nb = [\n", "mnemo", "/m", &[]).unwrap_err();
        assert_eq!(err.kind, ParseErrorKind::Syntax);
        assert!(err.line >= 2, "{err}");
        let err = plan_mcp_install("mcp_servers = 3\n", "mnemo", "/m", &[]).unwrap_err();
        assert_eq!(err.kind, ParseErrorKind::Shape);
    }
}
