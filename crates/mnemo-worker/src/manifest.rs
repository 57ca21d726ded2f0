//! What a project's own manifest at its root says it is: its name, its
//! one-line description, its module path (`go.mod`) or workspace. Read for
//! the project knowledge's stack items, so that "what the project is" comes
//! from the project's words about itself rather than from file extensions.
//!
//! Bounded and safe on any root: only regular files are read
//! ([`mnemo_core::files`]), at most [`MAX_MANIFEST_BYTES`] of each; a file
//! that does not parse says nothing.

use std::io::Read;
use std::path::Path;

use serde_json::Value;

/// Most bytes of a manifest read.
pub const MAX_MANIFEST_BYTES: u64 = 64 * 1024;
/// Longest description kept.
const MAX_DESCRIPTION: usize = 160;

/// What the manifest `name` at `root` says of the project, when it says
/// something: `mnemo: persistent memory for agents`, `module
/// github.com/acme/cli (Go 1.22)`, `workspace of 12 crates`.
pub fn describe(root: &Path, name: &str) -> Option<String> {
    let text = read(&root.join(name))?;
    let said = match name {
        "Cargo.toml" => cargo(&text),
        "pyproject.toml" => pyproject(&text),
        "package.json" | "composer.json" | "deno.json" => json_manifest(&text),
        "go.mod" => go_mod(&text),
        _ => None,
    }?;
    let said = said.split_whitespace().collect::<Vec<_>>().join(" ");
    (!said.is_empty()).then(|| clamp(&said, MAX_DESCRIPTION))
}

fn read(path: &Path) -> Option<String> {
    let mut text = String::new();
    mnemo_core::files::read_capped(path, MAX_MANIFEST_BYTES)
        .ok()?
        .read_to_string(&mut text)
        .ok()?;
    Some(text)
}

/// `name: description` of a table's `name` and `description` keys.
fn name_and_description(table: &toml::Table) -> Option<String> {
    let field = |k: &str| table.get(k).and_then(toml::Value::as_str).map(str::trim);
    match (
        field("name"),
        field("description").filter(|d| !d.is_empty()),
    ) {
        (Some(n), Some(d)) => Some(format!("{n}: {d}")),
        (Some(n), None) => Some(n.to_owned()),
        (None, Some(d)) => Some(d.to_owned()),
        (None, None) => None,
    }
}

fn cargo(text: &str) -> Option<String> {
    let doc: toml::Table = toml::from_str(text).ok()?;
    if let Some(package) = doc.get("package").and_then(toml::Value::as_table)
        && let Some(said) = name_and_description(package)
    {
        return Some(said);
    }
    let members = doc
        .get("workspace")?
        .get("members")?
        .as_array()
        .map_or(0, Vec::len);
    (members > 0).then(|| format!("workspace of {members} members"))
}

fn pyproject(text: &str) -> Option<String> {
    let doc: toml::Table = toml::from_str(text).ok()?;
    let project = doc
        .get("project")
        .or_else(|| doc.get("tool")?.get("poetry"))?
        .as_table()?;
    name_and_description(project)
}

fn json_manifest(text: &str) -> Option<String> {
    let doc: Value = serde_json::from_str(text).ok()?;
    let field = |k: &str| doc.get(k).and_then(Value::as_str).map(str::trim);
    match (
        field("name"),
        field("description").filter(|d| !d.is_empty()),
    ) {
        (Some(n), Some(d)) => Some(format!("{n}: {d}")),
        (n, d) => n.or(d).map(str::to_owned),
    }
}

fn go_mod(text: &str) -> Option<String> {
    let line = |key: &str| {
        text.lines()
            .map(str::trim)
            .find_map(|l| l.strip_prefix(key).map(str::trim))
            .filter(|v| !v.is_empty())
    };
    let module = line("module ")?;
    Some(match line("go ") {
        Some(version) => format!("module {module} (Go {version})"),
        None => format!("module {module}"),
    })
}

fn clamp(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_owned();
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", text[..end].trim_end())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn root_with(files: &[(&str, &str)]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        for (name, text) in files {
            std::fs::write(dir.path().join(name), text).unwrap();
        }
        dir
    }

    #[test]
    fn each_manifest_says_what_the_project_is() {
        let root = root_with(&[
            (
                "Cargo.toml",
                "[package]\nname = \"ledger\"\ndescription = \"Double-entry books\"\n",
            ),
            (
                "go.mod",
                "module github.com/acme/cli\n\ngo 1.22\n\nrequire x v1\n",
            ),
            (
                "package.json",
                r#"{"name": "@acme/web", "description": "The shop's front end"}"#,
            ),
            ("pyproject.toml", "[project]\nname = \"tally\"\n"),
        ]);
        let said = |name| describe(root.path(), name);
        assert_eq!(said("Cargo.toml").unwrap(), "ledger: Double-entry books");
        assert_eq!(
            said("go.mod").unwrap(),
            "module github.com/acme/cli (Go 1.22)"
        );
        assert_eq!(
            said("package.json").unwrap(),
            "@acme/web: The shop's front end"
        );
        assert_eq!(said("pyproject.toml").unwrap(), "tally");
    }

    #[test]
    fn a_workspace_a_broken_file_and_no_file_say_what_they_can() {
        let root = root_with(&[
            ("Cargo.toml", "[workspace]\nmembers = [\"a\", \"b\"]\n"),
            ("package.json", "{ not json"),
        ]);
        assert_eq!(
            describe(root.path(), "Cargo.toml").unwrap(),
            "workspace of 2 members"
        );
        assert_eq!(describe(root.path(), "package.json"), None);
        assert_eq!(describe(root.path(), "go.mod"), None);
    }

    #[cfg(unix)]
    #[test]
    fn a_manifest_that_is_not_a_regular_file_is_not_read() {
        let root = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink("/dev/zero", root.path().join("go.mod")).unwrap();
        assert_eq!(describe(root.path(), "go.mod"), None);
    }
}
