//! Which project, and which session, a request is about.
//!
//! Projects are identified as capture identifies them
//! ([`mnemo_core::project`]): a canonical root directory, the enclosing git
//! work tree, linked worktrees mapped to their main repository. A request
//! names a project by a directory (anything inside it works), by its exact
//! root (which may no longer exist on disk: projects move), or by its
//! display name when that name is unambiguous. A session is named by the
//! platform's session id or its first 4+ characters.

use std::path::{Path, PathBuf};

use mnemo_core::project::{ProjectIdentity, identify};
use rusqlite::{Connection, OptionalExtension};
use serde::Serialize;

use crate::{RecallError, Result};

/// A project as stored.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Project {
    #[serde(skip)]
    pub id: i64,
    pub root: String,
    pub name: String,
}

/// The stored project whose root is exactly `root`.
pub fn by_root(conn: &Connection, root: &str) -> Result<Option<Project>> {
    let mut stmt = conn.prepare_cached("SELECT id, root, name FROM projects WHERE root = ?1")?;
    Ok(stmt
        .query_row([root], |r| {
            Ok(Project {
                id: r.get(0)?,
                root: r.get(1)?,
                name: r.get(2)?,
            })
        })
        .optional()?)
}

pub fn by_id(conn: &Connection, id: i64) -> Result<Option<Project>> {
    let mut stmt = conn.prepare_cached("SELECT id, root, name FROM projects WHERE id = ?1")?;
    Ok(stmt
        .query_row([id], |r| {
            Ok(Project {
                id: r.get(0)?,
                root: r.get(1)?,
                name: r.get(2)?,
            })
        })
        .optional()?)
}

/// The identity of the project that contains `dir`, as capture computes it.
pub fn identity_of(dir: &Path) -> ProjectIdentity {
    identify(dir)
}

/// What a request's project argument resolved to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Resolved {
    Found(Project),
    /// A real project that nothing was recorded for yet.
    Unknown(ProjectIdentity),
}

/// Resolves a `--project` value: a directory (inside a project), a stored
/// root, or a stored project's name. An unknown name is an input error that
/// lists what is stored.
pub fn resolve_arg(conn: &Connection, arg: &str, cwd: &Path) -> Result<Resolved> {
    let trimmed = arg.trim();
    if let Some(p) = by_root(conn, trimmed)? {
        return Ok(Resolved::Found(p));
    }
    let dir = cwd.join(trimmed);
    if dir.is_dir() {
        return resolve_dir(conn, &dir);
    }
    let mut stmt = conn.prepare("SELECT id, root, name FROM projects WHERE name = ?1")?;
    let named: Vec<Project> = stmt
        .query_map([trimmed], |r| {
            Ok(Project {
                id: r.get(0)?,
                root: r.get(1)?,
                name: r.get(2)?,
            })
        })?
        .collect::<rusqlite::Result<_>>()?;
    match named.len() {
        1 => Ok(Resolved::Found(named.into_iter().next().expect("one"))),
        0 => Err(RecallError::Input(format!(
            "no project `{trimmed}`: give a directory, or one of: {}",
            known_projects(conn)?
        ))),
        _ => Err(RecallError::Input(format!(
            "several projects are named `{trimmed}`; give the directory instead: {}",
            named
                .iter()
                .map(|p| p.root.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ))),
    }
}

/// A project for the context index: its root and name, stored or not, and
/// the directory asked about when it exists (for the git state).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    pub root: PathBuf,
    pub name: String,
    pub dir: Option<PathBuf>,
}

/// Resolves the project of `mnemo context --project`, the MCP `context`
/// tool and `/api/context` as [`resolve_arg`] does for search: a directory,
/// a stored root that may no longer exist, or a name. No argument is the
/// project of `cwd`. `conn` is None when nothing was ever recorded.
pub fn target(conn: Option<&Connection>, arg: Option<&str>, cwd: &Path) -> Result<Target> {
    let Some(arg) = arg.map(str::trim).filter(|a| !a.is_empty()) else {
        let identity = identify(cwd);
        return Ok(Target {
            root: identity.root,
            name: identity.name,
            dir: Some(cwd.to_owned()),
        });
    };
    let dir = Some(cwd.join(arg)).filter(|d| d.is_dir());
    let resolved = match (conn, &dir) {
        (Some(conn), _) => resolve_arg(conn, arg, cwd)?,
        (None, Some(d)) => Resolved::Unknown(identify(d)),
        (None, None) => {
            return Err(RecallError::Input(format!(
                "no project `{arg}`: give a directory (nothing is recorded yet)"
            )));
        }
    };
    Ok(match resolved {
        Resolved::Found(p) => Target {
            root: PathBuf::from(p.root),
            name: p.name,
            dir,
        },
        Resolved::Unknown(identity) => Target {
            root: identity.root,
            name: identity.name,
            dir,
        },
    })
}

/// The project containing `dir`, stored or not.
pub fn resolve_dir(conn: &Connection, dir: &Path) -> Result<Resolved> {
    let identity = identify(dir);
    let root = identity.root.to_string_lossy();
    Ok(match by_root(conn, &root)? {
        Some(p) => Resolved::Found(p),
        None => Resolved::Unknown(identity),
    })
}

/// Stored project names, for messages (at most ten).
pub fn known_projects(conn: &Connection) -> Result<String> {
    let mut stmt = conn.prepare("SELECT name, root FROM projects ORDER BY id DESC LIMIT 11")?;
    let names: Vec<String> = stmt
        .query_map([], |r| {
            Ok(format!(
                "{} ({})",
                r.get::<_, String>(0)?,
                r.get::<_, String>(1)?
            ))
        })?
        .collect::<rusqlite::Result<_>>()?;
    if names.is_empty() {
        return Ok("(none recorded yet)".to_owned());
    }
    let more = names.len() > 10;
    let mut list = names.into_iter().take(10).collect::<Vec<_>>().join(", ");
    if more {
        list.push_str(", ...");
    }
    Ok(list)
}

/// The stored sessions that `text` names: the platform's session id, or
/// its first 4+ characters. None is an input error listing recent sessions.
pub fn sessions_matching(conn: &Connection, text: &str) -> Result<Vec<i64>> {
    let text = text.trim();
    let mut stmt = conn.prepare_cached(
        "SELECT id FROM sessions
         WHERE platform_session_id = ?1
            OR (length(?1) >= 4 AND substr(platform_session_id, 1, length(?1)) = ?1)",
    )?;
    let ids: Vec<i64> = stmt
        .query_map([text], |r| r.get(0))?
        .collect::<rusqlite::Result<_>>()?;
    if ids.is_empty() {
        return Err(RecallError::Input(format!(
            "no session `{text}`: give a session id or its first 4+ characters; recent: {}",
            recent_sessions(conn)?
        )));
    }
    Ok(ids)
}

/// The newest sessions, for messages (at most five).
fn recent_sessions(conn: &Connection) -> Result<String> {
    let mut stmt = conn.prepare(
        "SELECT s.platform_session_id, p.name FROM sessions s
         LEFT JOIN projects p ON p.id = s.project_id ORDER BY s.id DESC LIMIT 5",
    )?;
    let items: Vec<String> = stmt
        .query_map([], |r| {
            let id: String = r.get(0)?;
            Ok(match r.get::<_, Option<String>>(1)? {
                Some(name) => format!("{id} ({name})"),
                None => id,
            })
        })?
        .collect::<rusqlite::Result<_>>()?;
    Ok(if items.is_empty() {
        "(none recorded yet)".to_owned()
    } else {
        items.join(", ")
    })
}
