//! The result types every planner shares: the edited text, the list of changes the CLI shows, and
//! the error for a file that cannot be edited safely.
//!
//! They live apart from the planners so that the CST plumbing in `jsonc` can build errors without
//! depending on any one host's module; `claude_code` re-exports them as its public vocabulary.

use std::fmt;

/// What happened to one of mnemo's entries.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ChangeKind {
    /// The entry was not there and has been added.
    Added,
    /// An entry of ours was there with another command, timeout or matcher and now matches.
    Updated,
    /// The entry was already exactly as wanted.
    Unchanged,
    /// An entry of ours was taken out (uninstall, a duplicate, or an event mnemo no longer hooks).
    Removed,
}

impl fmt::Display for ChangeKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ChangeKind::Added => "added",
            ChangeKind::Updated => "updated",
            ChangeKind::Unchanged => "unchanged",
            ChangeKind::Removed => "removed",
        })
    }
}

/// One entry of ours and what the edit does to it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Change {
    pub kind: ChangeKind,
    /// The hook event (`PostToolUse`); for MCP edits the key path, `mcpServers.<name>`.
    pub event: String,
    /// The command line as it is after the edit (before it, for `Removed`).
    pub command: String,
}

impl Change {
    pub fn new(kind: ChangeKind, event: &str, command: &str) -> Change {
        Change {
            kind,
            event: event.to_owned(),
            command: command.to_owned(),
        }
    }
}

/// A planned edit of one settings file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SettingsEdit {
    /// The whole file after the edit; byte-identical to the input when nothing changes.
    pub new_text: String,
    pub changes: Vec<Change>,
}

impl SettingsEdit {
    /// The file left as it is, with what was found of ours.
    pub fn unchanged(existing: &str, changes: Vec<Change>) -> SettingsEdit {
        SettingsEdit {
            new_text: existing.to_owned(),
            changes,
        }
    }

    /// Whether writing `new_text` would change nothing, so the file need not be touched.
    pub fn is_noop(&self) -> bool {
        self.changes.iter().all(|c| c.kind == ChangeKind::Unchanged)
    }
}

/// Whether the file is not JSONC at all or is JSONC of a shape the host would not accept either.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ParseErrorKind {
    /// Not valid JSONC (JSON plus comments and trailing commas).
    Syntax,
    /// Valid JSONC, but a value mnemo has to edit is of the wrong type or its key is duplicated.
    Shape,
}

/// Why a settings file was left alone. Line and column are 1-based and point at the problem.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseError {
    pub line: usize,
    pub column: usize,
    pub message: String,
    pub kind: ParseErrorKind,
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "line {}, column {}: {}",
            self.line, self.column, self.message
        )
    }
}

impl std::error::Error for ParseError {}
