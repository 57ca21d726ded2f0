//! Which agent produced what: the `--agent` filter (CLI, `?agent=` over
//! HTTP, the MCP `agent` parameter) and the short tag that names the agent
//! of a line when a project's memory comes from more than one. Claude-only
//! users never see a tag.
//!
//! The agent of a record is the platform of its session
//! ([`mnemo_store::shape::SessionKey`]); the accepted names are those of
//! [`Platform`], the CLI contract's spelling (`mnemo hook <platform>`).

use mnemo_core::model::Platform;
use rusqlite::Connection;

use crate::{RecallError, Result};

/// The agent a filter names. Case and `_` for `-` do not matter; an unknown
/// name is an input error that lists the accepted ones.
pub fn parse(name: &str) -> Result<Platform> {
    let wanted = name.trim().to_ascii_lowercase().replace('_', "-");
    Platform::parse(&wanted).ok_or_else(|| {
        RecallError::Input(format!(
            "unknown agent `{}`; accepted: {}",
            name.trim(),
            accepted()
        ))
    })
}

/// `claude-code, codex, ...` for messages and help.
pub fn accepted() -> String {
    Platform::ALL
        .iter()
        .map(|p| p.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}

/// Parses an optional filter value; empty means no filter.
pub fn parse_opt(name: Option<&str>) -> Result<Option<Platform>> {
    name.map(str::trim)
        .filter(|n| !n.is_empty())
        .map(parse)
        .transpose()
}

/// Whether more than one agent recorded sessions in the project (in the
/// whole store when `project` is None): then lines carry the agent's tag.
pub fn several(conn: &Connection, project: Option<i64>) -> Result<bool> {
    if let Some(project) = project {
        return several_in(conn, project);
    }
    let n: i64 = conn
        .prepare_cached(
            "SELECT count(*) FROM (SELECT DISTINCT platform FROM sessions
                                   WHERE ?1 IS NULL OR project_id = ?1)",
        )?
        .query_row([project], |r| r.get(0))?;
    Ok(n > 1)
}

/// [`several`] for one project: its first agent by name, then whether any
/// other follows, two lookups in `sessions_by_project_platform` (a store
/// opened read-only before that index walks the project's sessions).
fn several_in(conn: &Connection, project: i64) -> Result<bool> {
    Ok(conn
        .prepare_cached(
            "SELECT EXISTS (SELECT 1 FROM sessions WHERE project_id = ?1 AND platform >
                            (SELECT min(platform) FROM sessions WHERE project_id = ?1))",
        )?
        .query_row([project], |r| r.get(0))?)
}

/// The tag of a line: ` [codex]`, or nothing when `shown` is false or the
/// agent is unknown.
pub fn tag(agent: Option<&str>, shown: bool) -> String {
    match agent {
        Some(a) if shown => format!(" [{a}]"),
        _ => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_parse_loosely_and_unknown_ones_list_the_accepted() {
        assert_eq!(parse("Claude_Code").unwrap(), Platform::ClaudeCode);
        assert_eq!(parse(" codex ").unwrap(), Platform::Codex);
        assert_eq!(parse_opt(Some("")).unwrap(), None);
        let err = parse("vim").unwrap_err().to_string();
        assert!(err.contains("unknown agent `vim`"), "{err}");
        assert!(err.contains("claude-code, codex, cursor"), "{err}");
    }

    #[test]
    fn a_tag_only_when_several_agents_share_the_project() {
        let c = Connection::open_in_memory().unwrap();
        c.execute_batch(
            "CREATE TABLE sessions (platform TEXT, project_id INTEGER);
             INSERT INTO sessions VALUES ('claude-code', 1), ('claude-code', 1), ('codex', 2);",
        )
        .unwrap();
        assert!(!several(&c, Some(1)).unwrap());
        assert!(several(&c, None).unwrap());
        assert_eq!(tag(Some("codex"), true), " [codex]");
        assert_eq!(tag(Some("codex"), false), "");
    }
}
