//! The install interface: what each host's install module gives the CLI, keyed by the host's row
//! in [`mnemo_core::host`].
//!
//! An install module plans; it never writes. For each file it would change it returns a
//! [`FilePlan`] (the text it read, the edit, and how to plan the edit again should another program
//! write the file meanwhile), and the CLI shows, backs up and writes them all the same way. Hooks
//! and the MCP registration are planned apart, because a broken MCP file must not cost the hooks
//! (the CLI then says "partly installed").
//!
//! The planning steps are the trait's own: an install module names the planners of its files'
//! formats ([`HookPlanners`], [`McpPlanners`]) and overrides only what its host does otherwise.

use std::path::{Path, PathBuf};

use mnemo_core::host::{Host, Scope};
use mnemo_core::model::Platform;

use crate::MCP_SERVER_NAME;
use crate::command::shell_quote;
use crate::edit::{ParseError, SettingsEdit};
use crate::hooks_json::HookSpec;
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

/// How one kind of hook file is edited and read: plain functions an install module names, each
/// given the host's platform (whose `mnemo hook <platform> ...` entries are mnemo's).
pub struct HookPlanners {
    /// Adds or updates mnemo's hooks in a file's text ("" when there is none): `specs`, one per
    /// event, whose commands run `program`.
    pub install: fn(
        platform: Platform,
        text: &str,
        program: &str,
        specs: &[HookSpec],
    ) -> Result<SettingsEdit, ParseError>,
    /// Takes mnemo's hooks out of the text.
    pub uninstall: fn(platform: Platform, text: &str) -> Result<SettingsEdit, ParseError>,
    /// mnemo's hook entries in the text, as (event, command).
    pub find: fn(platform: Platform, text: &str) -> Result<FoundHooks, ParseError>,
}

/// Hook entries found in a file, as (event, command).
pub type FoundHooks = Vec<(String, String)>;

/// How one kind of MCP registry file is edited and read, for the server `name`.
pub struct McpPlanners {
    /// Adds or updates the server running `command args...`.
    pub install: fn(
        text: &str,
        name: &str,
        command: &str,
        args: &[String],
    ) -> Result<SettingsEdit, ParseError>,
    /// Removes the server.
    pub uninstall: fn(text: &str, name: &str) -> Result<SettingsEdit, ParseError>,
    /// The server as the host would read it.
    pub find: fn(text: &str, name: &str) -> Result<Option<McpEntry>, ParseError>,
}

/// What each host's install module does. `host()` is its row; an install module states its
/// planners and overrides only where its host differs (a program named otherwise, files the row
/// cannot place).
pub trait Installer: Sync {
    fn host(&self) -> &'static Host;

    /// The planners of the host's hook file.
    fn hook_planners(&self) -> &'static HookPlanners;

    /// The planners of the host's MCP registry file.
    fn mcp_planners(&self) -> &'static McpPlanners;

    /// How hooks name mnemo: this binary's absolute path, shell-quoted, at user scope (hooks work
    /// whatever the agent's PATH is); plain `mnemo` from PATH at project scope (the file is
    /// committed and runs on teammates' machines).
    fn program(&self, target: &Target) -> String {
        match target.scope {
            Scope::User => shell_quote(&self.program_path(target)),
            Scope::Project => "mnemo".to_owned(),
        }
    }

    /// The program as a plain path (for MCP entries, which are not run by a shell).
    fn program_path(&self, target: &Target) -> String {
        target.binary.to_string_lossy().into_owned()
    }

    /// The hook entries mnemo wants, in the host's event order.
    fn hooks(&self, target: &Target) -> Vec<HookSpec> {
        hook_specs(self.host(), &self.program(target))
    }

    /// The hook file of `scope` (None: the host has none there, or no home directory).
    fn hook_file(&self, scope: Scope, project_dir: &Path) -> Option<PathBuf> {
        self.host().hook_file(scope, project_dir)
    }

    /// The file the MCP server is registered in (user scope), as this host reads it.
    fn mcp_file(&self) -> Option<PathBuf> {
        self.host().mcp_file()
    }

    /// Adds or updates mnemo's hooks.
    fn plan_hooks(&self, target: &Target) -> Result<FilePlan, FileError> {
        let path = self
            .hook_file(target.scope, &target.project_dir)
            .ok_or_else(no_home)?;
        let platform = self.host().platform;
        let (program, specs) = (self.program(target), self.hooks(target));
        let install = self.hook_planners().install;
        FilePlan::new(path, move |text| install(platform, text, &program, &specs))
    }

    /// Takes mnemo's hooks out; None when there is no file.
    fn plan_unhooks(&self, target: &Target) -> Result<Option<FilePlan>, FileError> {
        let path = self
            .hook_file(target.scope, &target.project_dir)
            .ok_or_else(no_home)?;
        if settings_file::read(&path)?.is_none() {
            return Ok(None);
        }
        let platform = self.host().platform;
        let uninstall = self.hook_planners().uninstall;
        FilePlan::new(path, move |text| uninstall(platform, text)).map(Some)
    }

    /// mnemo's hook entries in the text of a hook file, as (event, command).
    fn find_hooks(&self, text: &str) -> Result<Vec<(String, String)>, ParseError> {
        (self.hook_planners().find)(self.host().platform, text)
    }

    /// Registers the MCP server (user scope). None: no file to register it in.
    fn plan_mcp(&self, target: &Target) -> Option<Result<FilePlan, FileError>> {
        let wanted = self.mcp_wanted(target);
        let path = self.mcp_file()?;
        let install = self.mcp_planners().install;
        Some(FilePlan::new(path, move |text| {
            install(text, MCP_SERVER_NAME, &wanted.command, &wanted.args)
        }))
    }

    /// Removes the MCP registration. None: nothing to do.
    fn plan_unmcp(&self) -> Option<Result<FilePlan, FileError>> {
        let path = self.mcp_file()?;
        let uninstall = self.mcp_planners().uninstall;
        match settings_file::read(&path) {
            Ok(None) => None,
            Ok(Some(_)) => Some(FilePlan::new(path, move |text| {
                uninstall(text, MCP_SERVER_NAME)
            })),
            Err(e) => Some(Err(e)),
        }
    }

    /// The MCP registration as the host would read it.
    fn mcp_entry(&self) -> Result<Option<McpEntry>, FileError> {
        let path = self.mcp_file().ok_or_else(no_home)?;
        let Some(text) = settings_file::read(&path)? else {
            return Ok(None);
        };
        (self.mcp_planners().find)(&text, MCP_SERVER_NAME).map_err(|e| FileError::invalid(&path, e))
    }

    /// The command and arguments the MCP server entry should have.
    fn mcp_wanted(&self, target: &Target) -> McpEntry {
        McpEntry {
            command: self.program_path(target),
            args: vec!["mcp".to_owned()],
        }
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
