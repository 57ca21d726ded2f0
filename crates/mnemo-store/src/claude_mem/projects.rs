//! Which directory each claude-mem project meant, session by session.
//!
//! claude-mem names a project after the base name of the git toplevel (else
//! of the working directory), so two repositories called `api` share one
//! name. mnemo's projects are directories (`mnemo_core::project`), so every
//! claude-mem session is placed by what its own data says:
//! 1. the working directories of its tool calls (`tool_uses.cwd`, 13.x, or
//!    the caller's: the command adds those of Claude Code's transcripts):
//!    the ancestor named like the project, else the directory itself;
//! 2. else the absolute paths of the files its observations and summaries
//!    name: the shortest prefix ending in a folder named like the project.
//!
//! A session with no such evidence (older schemas) takes the directory that
//! `--map NAME=DIR` (or the user, asked on a terminal) gives its name, else
//! stays unplaced and is not imported: the name's only directory seen
//! elsewhere is not proof, since another repository of that name may simply
//! have left no trace. A memory saved by hand through claude-mem's API has
//! no directory by nature; it goes to its name's only known directory.
//! Two directories are never merged.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::Path;

use super::rows::Dump;

/// How a session's directory was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Evidence {
    /// Its tool calls' working directories.
    Cwd,
    /// The absolute paths of the files it touched.
    Files,
    /// `--map` or the user's answer.
    Mapped,
    /// A hand-saved memory: the only directory its project name has.
    OnlyKnown,
}

/// Where a session goes: a project root (already in mnemo's identity form).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Place {
    pub root: String,
    pub evidence: Evidence,
}

/// The placement of every session unit of a dump. A unit is keyed by the
/// observer's session id (`memory_session_id`), which observations and
/// summaries carry; prompts reach it through their session.
#[derive(Debug, Clone, Default)]
pub struct Placement {
    pub by_unit: HashMap<String, Place>,
    /// Units that could not be placed, by claude-mem project name.
    pub unplaced: BTreeMap<String, BTreeSet<String>>,
    /// The directories found for each name, to say what was seen.
    pub known: BTreeMap<String, BTreeSet<String>>,
}

impl Placement {
    pub fn place(&self, unit: &str) -> Option<&Place> {
        self.by_unit.get(unit)
    }
}

/// The unit key of a claude-mem session: its observer id, else its content id.
pub fn unit_of(memory_id: Option<&str>, content_id: &str) -> String {
    match memory_id {
        Some(m) if !m.is_empty() => m.to_owned(),
        _ => format!("content:{content_id}"),
    }
}

/// Places every unit of `dump`; `maps` are `--map NAME=DIR` (and answers),
/// by name, with DIR already a root.
pub fn place(dump: &Dump, maps: &BTreeMap<String, String>) -> Placement {
    let units = units(dump);
    let mut placement = Placement::default();
    for (unit, (name, evidence)) in &units {
        if let Some(place) = evidenced(name, evidence) {
            placement
                .known
                .entry(name.clone())
                .or_default()
                .insert(place.root.clone());
            placement.by_unit.insert(unit.clone(), place);
        }
    }
    for (unit, (name, clues)) in &units {
        if placement.by_unit.contains_key(unit) {
            continue;
        }
        let only = placement
            .known
            .get(name)
            .filter(|dirs| dirs.len() == 1 && clues.manual)
            .and_then(|dirs| dirs.first());
        let place = match (maps.get(name), only) {
            (Some(root), _) => Place {
                root: root.clone(),
                evidence: Evidence::Mapped,
            },
            (None, Some(root)) => Place {
                root: root.clone(),
                evidence: Evidence::OnlyKnown,
            },
            (None, None) => {
                placement
                    .unplaced
                    .entry(name.clone())
                    .or_default()
                    .insert(unit.clone());
                continue;
            }
        };
        placement.by_unit.insert(unit.clone(), place);
    }
    placement
}

/// What each unit's own data says: its project name, its cwds, its paths.
#[derive(Default)]
struct Clues {
    cwds: Vec<String>,
    paths: Vec<String>,
    /// A memory saved by hand, not a session.
    manual: bool,
}

fn units(dump: &Dump) -> BTreeMap<String, (String, Clues)> {
    let mut units: BTreeMap<String, (String, Clues)> = BTreeMap::new();
    for s in &dump.sessions {
        let unit = unit_of(s.memory_id.as_deref(), &s.content_id);
        let entry = units
            .entry(unit)
            .or_insert_with(|| (s.project.clone(), Clues::default()));
        entry.1.cwds.extend(s.cwds.iter().cloned());
        entry.1.manual = s.is_manual();
    }
    let mut add = |unit: &str, project: &str, paths: &mut dyn Iterator<Item = &String>| {
        let entry = units
            .entry(unit.to_owned())
            .or_insert_with(|| (project.to_owned(), Clues::default()));
        entry.1.paths.extend(paths.cloned());
    };
    for o in &dump.observations {
        add(
            &o.memory_id,
            &o.project,
            &mut o.files_modified.iter().chain(&o.files_read),
        );
    }
    for s in &dump.summaries {
        add(
            &s.memory_id,
            &s.project,
            &mut s.files_edited.iter().chain(&s.files_read),
        );
    }
    units
}

fn evidenced(name: &str, clues: &Clues) -> Option<Place> {
    let from_cwds: Vec<String> = clues
        .cwds
        .iter()
        .filter(|c| is_absolute(c))
        .map(|c| named_ancestor(c, name).unwrap_or_else(|| trimmed(c)))
        .collect();
    if let Some(root) = most_common(&from_cwds) {
        return Some(Place {
            root: canonical(&root),
            evidence: Evidence::Cwd,
        });
    }
    let from_paths: Vec<String> = clues
        .paths
        .iter()
        .filter(|p| is_absolute(p))
        .filter_map(|p| named_ancestor(p, name))
        .collect();
    most_common(&from_paths).map(|root| Place {
        root: canonical(&root),
        evidence: Evidence::Files,
    })
}

/// The most frequent item; ties go to the first seen.
fn most_common(items: &[String]) -> Option<String> {
    let mut counts: Vec<(&String, usize)> = Vec::new();
    for item in items {
        match counts.iter_mut().find(|(i, _)| *i == item) {
            Some((_, n)) => *n += 1,
            None => counts.push((item, 1)),
        }
    }
    let best = counts.iter().map(|(_, n)| *n).max()?;
    counts
        .into_iter()
        .find(|(_, n)| *n == best)
        .map(|(i, _)| i.clone())
}

fn is_absolute(path: &str) -> bool {
    path.starts_with('/')
        || path.starts_with("\\\\")
        || (path.len() > 2 && path.as_bytes()[1] == b':' && path[2..].starts_with(['\\', '/']))
}

fn trimmed(path: &str) -> String {
    let t = path.trim_end_matches(['/', '\\']);
    if t.is_empty() {
        path.to_owned()
    } else {
        t.to_owned()
    }
}

/// The shortest prefix of `path` that ends in a folder called like the
/// project (its last segment, for a worktree's `parent/worktree` name).
pub fn named_ancestor(path: &str, project: &str) -> Option<String> {
    let leaf = project.rsplit('/').next().unwrap_or(project);
    if leaf.is_empty() {
        return None;
    }
    let mut end = 0;
    for segment in path.split_inclusive(['/', '\\']) {
        end += segment.len();
        if segment.trim_end_matches(['/', '\\']) == leaf {
            return Some(trimmed(&path[..end]));
        }
    }
    None
}

/// A directory as mnemo identifies projects: through the enclosing git work
/// tree when the directory exists here, else as written.
pub fn canonical(dir: &str) -> String {
    let path = Path::new(dir);
    if path.is_dir() {
        mnemo_core::project::identify(path)
            .root
            .to_string_lossy()
            .into_owned()
    } else {
        trimmed(dir)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ancestor_named_like_the_project_is_the_root() {
        assert_eq!(
            named_ancestor("/home/dev/oss/api/api/openapi.yaml", "api").as_deref(),
            Some("/home/dev/oss/api")
        );
        assert_eq!(
            named_ancestor("/home/dev/work/acme/api", "api").as_deref(),
            Some("/home/dev/work/acme/api")
        );
        assert_eq!(named_ancestor("/home/dev/apis/x.go", "api"), None);
        assert_eq!(
            named_ancestor("C:\\src\\shop\\a.py", "shop").as_deref(),
            Some("C:\\src\\shop")
        );
        assert_eq!(
            named_ancestor("/w/repo/feature-x/a.rs", "repo/feature-x").as_deref(),
            Some("/w/repo/feature-x")
        );
    }

    #[test]
    fn ties_go_to_the_first_and_majorities_win() {
        let v = |s: &[&str]| s.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        assert_eq!(most_common(&v(&["a", "b", "b"])).as_deref(), Some("b"));
        assert_eq!(most_common(&v(&["a", "b"])).as_deref(), Some("a"));
        assert_eq!(most_common(&[]), None);
    }
}
