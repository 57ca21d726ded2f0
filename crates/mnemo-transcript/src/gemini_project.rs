//! The project directory a Gemini CLI chat recording belongs to, for an
//! import (a live session's hooks carry their `cwd`; a recording on disk
//! does not). Recordings live in `<gemini>/tmp/<project>/chats/`, and the
//! `<project>` folder is named by the project's root in one of three ways,
//! tried in this order:
//!
//! 1. the project folder's `.project_root` file, holding the root's path;
//! 2. `<gemini>/projects.json`, `{"projects": {"<root>": "<folder name>"}}`;
//! 3. the header's `projectHash` (the SHA-256 of the root's path, also the
//!    folder's name in older builds), matched against the folders that hold
//!    the files and folders the session's tool calls named.
//!
//! When none resolves, the project is the deepest folder that holds every
//! file and folder the session's calls named by an absolute path. Only regular files are read,
//! within a small cap ([`mnemo_core::files`]).

use std::io::Read;
use std::path::{Path, PathBuf};

use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::model::Session;

/// Most bytes read of `.project_root` or `projects.json`.
const MAX_MAPPING_BYTES: u64 = 1 << 20;
/// The tool argument that names a file (in the common vocabulary).
const FILE_ARGUMENT: &str = "file_path";
/// Tool arguments that name a folder.
const FOLDER_ARGUMENTS: &[&str] = &["path", "dir_path", "directory"];

/// The project directory of the recording at `recording`, read as `session`.
pub fn recording_project(recording: &Path, session: &Session) -> Option<String> {
    let folder = recording.parent()?.parent()?;
    registered_root(folder)
        .or_else(|| listed_root(folder))
        .or_else(|| hashed_root(session, folder))
        .or_else(|| common_folder(&named_folders(session)))
        .map(|p| p.to_string_lossy().into_owned())
}

/// The root written in the project folder's `.project_root`.
fn registered_root(folder: &Path) -> Option<PathBuf> {
    let text = read_small(&folder.join(".project_root"))?;
    let root = PathBuf::from(text.trim());
    root.is_absolute().then_some(root)
}

/// The root that `projects.json`, beside the temporary folder, maps to the
/// project folder's name.
fn listed_root(folder: &Path) -> Option<PathBuf> {
    let name = folder.file_name()?.to_str()?;
    let gemini = folder.parent()?.parent()?;
    let text = read_small(&gemini.join("projects.json"))?;
    let listing: Value = serde_json::from_str(&text).ok()?;
    let projects = listing.get("projects")?.as_object()?;
    projects
        .iter()
        .find(|(_, short)| short.as_str() == Some(name))
        .map(|(root, _)| PathBuf::from(root))
        .filter(|root| root.is_absolute())
}

/// The folder, among those holding what the calls named, whose path hashes
/// to the recording's `projectHash` (or the folder's name).
fn hashed_root(session: &Session, folder: &Path) -> Option<PathBuf> {
    let name = folder.file_name().and_then(|n| n.to_str());
    let hash = session.project_hash.as_deref().or(name)?;
    named_folders(session)
        .iter()
        .flat_map(|p| p.ancestors())
        .find(|candidate| path_hash(candidate).eq_ignore_ascii_case(hash))
        .map(Path::to_path_buf)
}

/// Gemini CLI's project hash: the SHA-256 of the path, in hex.
fn path_hash(path: &Path) -> String {
    let digest = Sha256::digest(path.to_string_lossy().as_bytes());
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

/// The absolute folders the session's tool calls named: a file's folder,
/// or the folder itself.
fn named_folders(session: &Session) -> Vec<PathBuf> {
    let calls = session.turns.iter().flat_map(|t| &t.tool_calls);
    let mut folders: Vec<PathBuf> = calls
        .flat_map(|c| {
            let file = c.input.get(FILE_ARGUMENT).and_then(Value::as_str);
            let file_folder = file.and_then(|f| Path::new(f).parent());
            let dirs = FOLDER_ARGUMENTS
                .iter()
                .filter_map(|k| c.input.get(*k)?.as_str());
            file_folder
                .map(Path::to_path_buf)
                .into_iter()
                .chain(dirs.map(PathBuf::from))
        })
        .filter(|p| p.is_absolute())
        .collect();
    folders.sort();
    folders.dedup();
    folders
}

/// The deepest folder holding every one of `folders`; None when there is
/// none, or only the file system's root.
fn common_folder(folders: &[PathBuf]) -> Option<PathBuf> {
    let mut common = folders.first()?.clone();
    for folder in &folders[1..] {
        while !folder.starts_with(&common) {
            common = common.parent()?.to_path_buf();
        }
    }
    common.parent().is_some().then_some(common)
}

/// A small regular file's text; None when absent, not regular or not text.
fn read_small(path: &Path) -> Option<String> {
    let mut text = String::new();
    mnemo_core::files::read_capped(path, MAX_MAPPING_BYTES)
        .ok()?
        .read_to_string(&mut text)
        .ok()?;
    Some(text)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{ToolCall, Turn};
    use serde_json::json;

    fn session_naming(paths: &[&str], hash: Option<String>) -> Session {
        let tool_calls = paths
            .iter()
            .map(|p| ToolCall {
                input: json!({ "file_path": p }),
                ..ToolCall::default()
            })
            .collect();
        Session {
            project_hash: hash,
            turns: vec![Turn {
                tool_calls,
                ..Turn::default()
            }],
            ..Session::default()
        }
    }

    fn recording_in(tmp: &Path, project_folder: &str) -> PathBuf {
        let chats = tmp.join(".gemini/tmp").join(project_folder).join("chats");
        std::fs::create_dir_all(&chats).unwrap();
        chats.join("session-2026-11-28T01-57-b15b4b7b.jsonl")
    }

    #[test]
    fn the_project_hash_names_the_folder_that_holds_the_calls_paths() {
        let tmp = tempfile::tempdir().unwrap();
        let root = Path::new("/srv/code/shop");
        let session = session_naming(
            &["/srv/code/shop/src/cart.rs", "/srv/code/shop/README.md"],
            Some(path_hash(root)),
        );
        let recording = recording_in(tmp.path(), "shop");
        assert_eq!(
            recording_project(&recording, &session).as_deref(),
            Some("/srv/code/shop")
        );
    }

    #[test]
    fn a_registered_or_listed_root_wins_over_the_paths() {
        let tmp = tempfile::tempdir().unwrap();
        let session = session_naming(&["/elsewhere/a.py"], None);
        let recording = recording_in(tmp.path(), "shop-1");
        let listing = json!({"projects": {"/srv/code/shop": "shop-1", "/srv/other": "other"}});
        std::fs::write(
            tmp.path().join(".gemini/projects.json"),
            listing.to_string(),
        )
        .unwrap();
        assert_eq!(
            recording_project(&recording, &session).as_deref(),
            Some("/srv/code/shop")
        );
        let marker = tmp.path().join(".gemini/tmp/shop-1/.project_root");
        std::fs::write(marker, "/srv/code/shop-moved\n").unwrap();
        assert_eq!(
            recording_project(&recording, &session).as_deref(),
            Some("/srv/code/shop-moved")
        );
    }

    #[test]
    fn without_a_mapping_the_project_is_the_folder_holding_every_path() {
        let tmp = tempfile::tempdir().unwrap();
        let recording = recording_in(tmp.path(), "unknown");
        let both = session_naming(&["/w/app/src/a.rs", "/w/app/tests/b.rs"], None);
        assert_eq!(
            recording_project(&recording, &both).as_deref(),
            Some("/w/app")
        );
        let one = session_naming(&["/w/app/main.go"], None);
        assert_eq!(
            recording_project(&recording, &one).as_deref(),
            Some("/w/app")
        );
        let none = session_naming(&["relative/a.rs"], None);
        assert_eq!(recording_project(&recording, &none), None);
    }
}
