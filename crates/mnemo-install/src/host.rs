//! The install interface: what each host's install module gives the CLI, keyed by the host's row
//! in [`mnemo_core::host`].
//!
//! An install module plans; it never writes. For each file it would change it returns a
//! [`FilePlan`] (the text it read, the edit, and how to plan the edit again should another program
//! write the file meanwhile), and the CLI shows, backs up and writes them all the same way. Hooks
//! and the MCP registration are planned apart, because a broken MCP file must not cost the hooks
//! (the CLI then says "partly installed").

use std::path::{Path, PathBuf};

use mnemo_core::host::{Host, Scope};
use mnemo_core::model::Platform;

use crate::edit::{ParseError, SettingsEdit};
use crate::hooks_json::{self, HookSpec};
use crate::settings_file::{self, FileError};

/// Where and with which program hooks are installed.
#[derive(Debug, Clone)]
pub struct Target {
    pub scope: Scope,
    /// The project directory (for project scope).
    pub project_dir: PathBuf,
    /// The running mnemo, absolute, symlinks resolved.
    pub binary: PathBuf,
}

/// A re-planner: the edit of a file's current text.
pub type Replan = Box<dyn Fn(&str) -> Result<SettingsEdit, ParseError>>;

/// One file an install or uninstall changes.
pub struct FilePlan {
    pub path: PathBuf,
    /// The content read when planning (None: no such file).
    pub read: Option<String>,
    pub edit: SettingsEdit,
    /// Plans the same change over new content, when the file changed under us.
    pub replan: Replan,
}

impl FilePlan {
    /// Reads `path` and plans `plan` over its text ("" when missing); parse errors name the file.
    pub fn new(
        path: PathBuf,
        plan: impl Fn(&str) -> Result<SettingsEdit, ParseError> + 'static,
    ) -> Result<FilePlan, FileError> {
        let read = settings_file::read(&path)?;
        let edit = plan(read.as_deref().unwrap_or("")).map_err(|e| FileError::invalid(&path, e))?;
        Ok(FilePlan {
            path,
            read,
            edit,
            replan: Box::new(plan),
        })
    }
}

/// A registered MCP server as found: its command and arguments.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct McpEntry {
    pub command: String,
    pub args: Vec<String>,
}

/// What each host's install module does. `host()` is its row.
pub trait Installer: Sync {
    fn host(&self) -> &'static Host;

    /// How hooks name mnemo at `scope`.
    fn program(&self, target: &Target) -> String;

    /// The hook entries mnemo wants, in the host's event order.
    fn hooks(&self, target: &Target) -> Vec<HookSpec> {
        hook_specs(self.host(), &self.program(target))
    }

    /// The hook file of `scope` (None: the host has none there, or no home directory).
    fn hook_file(&self, scope: Scope, project_dir: &Path) -> Option<PathBuf> {
        self.host().hook_file(scope, project_dir)
    }

    /// Adds or updates mnemo's hooks.
    fn plan_hooks(&self, target: &Target) -> Result<FilePlan, FileError>;

    /// Takes mnemo's hooks out; None when there is no file.
    fn plan_unhooks(&self, target: &Target) -> Result<Option<FilePlan>, FileError>;

    /// mnemo's hook entries in the text of a hook file, as (event, command).
    fn find_hooks(&self, text: &str) -> Result<Vec<(String, String)>, ParseError>;

    /// The file the MCP server is registered in (user scope), as this host reads it.
    fn mcp_file(&self) -> Option<PathBuf> {
        self.host().mcp_file()
    }

    /// Registers the MCP server (user scope). None: the host registers none.
    fn plan_mcp(&self, target: &Target) -> Option<Result<FilePlan, FileError>>;

    /// Removes the MCP registration. None: nothing to do.
    fn plan_unmcp(&self) -> Option<Result<FilePlan, FileError>>;

    /// The MCP registration as the host would read it.
    fn mcp_entry(&self) -> Result<Option<McpEntry>, FileError>;

    /// The command and arguments the MCP server entry should have.
    fn mcp_wanted(&self, target: &Target) -> McpEntry {
        McpEntry {
            command: self.program_path(target),
            args: vec!["mcp".to_owned()],
        }
    }

    /// The program as a plain path (for MCP entries, which are not run by a shell).
    fn program_path(&self, target: &Target) -> String {
        target.binary.to_string_lossy().into_owned()
    }
}

/// One hook per event of the host's row: `<program> hook <platform> <event>`.
pub fn hook_specs(host: &Host, program: &str) -> Vec<HookSpec> {
    host.events
        .iter()
        .map(|e| HookSpec {
            event: e.name.to_owned(),
            matcher: e.matcher.map(str::to_owned),
            command: format!("{program} hook {} {}", host.platform, e.name),
            timeout_secs: host.timeout.installed,
        })
        .collect()
}

/// Plans mnemo's hooks into a Claude-style hooks file (Claude Code, Codex).
pub fn plan_hooks_json(
    path: PathBuf,
    host: Platform,
    specs: Vec<HookSpec>,
) -> Result<FilePlan, FileError> {
    FilePlan::new(path, move |text| {
        hooks_json::plan_install_for(host.as_str(), text, &specs)
    })
}

/// Plans mnemo's hooks out of a Claude-style hooks file; None when it does not exist.
pub fn plan_unhooks_json(path: PathBuf, host: Platform) -> Result<Option<FilePlan>, FileError> {
    if settings_file::read(&path)?.is_none() {
        return Ok(None);
    }
    FilePlan::new(path, move |text| {
        hooks_json::plan_uninstall_for(host.as_str(), text)
    })
    .map(Some)
}

/// Every install module, in the host table's order; adding a host adds one here.
static INSTALLERS: &[&dyn Installer] = &[
    &crate::claude_code::INSTALLER,
    &crate::codex::INSTALLER,
    &crate::gemini::INSTALLER,
    &crate::cursor::INSTALLER,
    &crate::opencode::INSTALLER,
];

/// Every install module, in the host table's order.
pub fn installers() -> &'static [&'static dyn Installer] {
    INSTALLERS
}

/// The install module of `platform`, if mnemo can be installed there.
pub fn installer(platform: Platform) -> Option<&'static dyn Installer> {
    INSTALLERS
        .iter()
        .copied()
        .find(|i| i.host().platform == platform)
}

/// The home directory, or the error every install module gives without one.
pub fn no_home() -> FileError {
    FileError::NoHome
}
