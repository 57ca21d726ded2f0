//! Which project a request is about.
//!
//! Projects are identified as capture identifies them
//! ([`mnemo_core::project`]): a canonical root directory, the enclosing git
//! work tree, linked worktrees mapped to their main repository. A request
//! names a project by a directory (anything inside it works), by its exact
//! root, or by its display name when that name is unambiguous.

use std::path::Path;

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
