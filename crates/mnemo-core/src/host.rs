//! The host table: everything mnemo knows about each agent host, in one row
//! per [`Platform`].
//!
//! A row says how to find the host on the machine, which files hold its hooks
//! and its MCP servers (and in which format and scope), which events it fires
//! and what each means to mnemo, how its tool names map onto one vocabulary
//! (Claude Code's names, which the rest of the pipeline reads), how context
//! goes back to the model, and in which unit its hook timeouts are counted.
//! Capture adapters, `mnemo install`/`uninstall` and `mnemo doctor` read the
//! rows; adding a host is adding a row, an adapter module (mnemo-capture) and
//! an install module (mnemo-install).
//!
//! Static data only, plus two cheap file-system probes for detection: the hook
//! path links this module.

use std::path::{Path, PathBuf};

use crate::model::Platform;

/// One agent host.
#[derive(Debug)]
pub struct Host {
    pub platform: Platform,
    /// How the host is called in messages ("Claude Code").
    pub name: &'static str,
    /// Its configuration directory in the home directory, and the variable
    /// that moves it.
    pub config_home: Option<ConfigHome>,
    /// Programs whose presence on PATH means the host is installed.
    pub binaries: &'static [&'static str],
    /// Where mnemo's hooks go, per scope.
    pub hook_files: &'static [ConfigFile],
    /// Where the host registers MCP servers (None: mnemo does not register).
    pub mcp: Option<McpRegistry>,
    /// The host's events that mnemo hooks, and what each means.
    pub events: &'static [EventRow],
    /// Host tool name -> the common vocabulary (Claude Code's tool names).
    pub tools: &'static [(&'static str, &'static str)],
    /// Argument keys the host names differently from the common vocabulary:
    /// (tool in the common vocabulary, the host's key, the common key).
    pub arguments: &'static [(&'static str, &'static str, &'static str)],
    /// How context for the model is answered.
    pub context: ContextReply,
    /// The unit of the hook `timeout` field, and the value mnemo installs.
    pub timeout: HookTimeout,
    /// Environment variables the host gives hooks: the stable project
    /// directory and the session id, in order of preference.
    pub project_dir_env: &'static [&'static str],
    pub session_id_env: &'static [&'static str],
}

/// A host's directory under the home directory (`.codex`), moved by an
/// environment variable (`CODEX_HOME`) when that is set.
#[derive(Debug, Clone, Copy)]
pub struct ConfigHome {
    pub default_dir: &'static str,
    pub env: Option<&'static str>,
    /// A variable that stands in for the home directory under which
    /// `default_dir` is (Gemini CLI's `GEMINI_CLI_HOME`).
    pub home_env: Option<&'static str>,
    /// Whether the directory existing means the host is installed: true for
    /// a folder of the host's own (`~/.codex`); false for a shared XDG
    /// folder (`~/.config/opencode`) that other tools, or a test, may
    /// create, where only the program counts.
    pub dir_means_installed: bool,
}

/// The user's own configuration, or a project's (committed with it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Scope {
    User,
    Project,
}

impl Scope {
    pub fn as_str(self) -> &'static str {
        match self {
            Scope::User => "user",
            Scope::Project => "project",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// JSON the host reads leniently (comments and trailing commas allowed).
    Jsonc,
    /// Strict JSON (the host rewrites the file itself).
    Json,
    Toml,
    /// A source file the host loads as a plugin (OpenCode's JavaScript).
    Script,
}

/// One configuration file: `path` is relative to the host's config home at
/// user scope, and to the project directory at project scope.
#[derive(Debug, Clone, Copy)]
pub struct ConfigFile {
    pub scope: Scope,
    pub path: &'static str,
    pub format: Format,
}

/// Where MCP servers are registered, and under which key.
#[derive(Debug, Clone, Copy)]
pub struct McpRegistry {
    pub file: ConfigFile,
    /// Relative to the home directory itself rather than the config home
    /// (Claude Code's `~/.claude.json`).
    pub in_home: bool,
    /// The table or object holding servers (`mcpServers`, `mcp_servers`).
    pub key: &'static str,
}

/// What an event means to mnemo, whatever the host calls it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Moment {
    SessionStart,
    UserPrompt,
    PreToolUse,
    PostToolUse,
    PostToolUseFailure,
    /// The agent said or thought something during the turn.
    AgentText,
    /// The agent finished answering a prompt.
    TurnEnd,
    SessionEnd,
}

/// One hooked event of a host.
#[derive(Debug, Clone, Copy)]
pub struct EventRow {
    /// The host's spelling (`AfterTool`, `postToolUse`).
    pub name: &'static str,
    pub moment: Moment,
    /// The matcher mnemo installs (None: the event takes none).
    pub matcher: Option<&'static str>,
}

/// How a hook hands context back to the model.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ContextReply {
    /// `{"hookSpecificOutput": {"hookEventName", "additionalContext"}}`.
    /// `strict`: the host rejects any other key (Codex's
    /// `additionalProperties: false`), so only `{}` or that shape is printed.
    HookSpecificOutput { strict: bool },
    /// Cursor's flat `{"additional_context": ...}`.
    FlatSnakeCase,
    /// The host takes no context from hooks (its plugin or raw caller decides).
    None,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimeUnit {
    Seconds,
    Milliseconds,
}

#[derive(Debug, Clone, Copy)]
pub struct HookTimeout {
    pub unit: TimeUnit,
    /// What mnemo writes in each hook entry, in `unit`.
    pub installed: u32,
}

const SECONDS_10: HookTimeout = HookTimeout {
    unit: TimeUnit::Seconds,
    installed: 10,
};

/// Claude Code's tool names are the vocabulary; hosts that already use them
/// need no aliases.
const CLAUDE_CODE_EVENTS: &[EventRow] = &[
    EventRow {
        name: "SessionStart",
        moment: Moment::SessionStart,
        matcher: Some("startup|resume|clear|compact"),
    },
    EventRow {
        name: "UserPromptSubmit",
        moment: Moment::UserPrompt,
        matcher: None,
    },
    EventRow {
        name: "PreToolUse",
        moment: Moment::PreToolUse,
        matcher: Some("*"),
    },
    EventRow {
        name: "PostToolUse",
        moment: Moment::PostToolUse,
        matcher: Some("*"),
    },
    EventRow {
        name: "PostToolUseFailure",
        moment: Moment::PostToolUseFailure,
        matcher: Some("*"),
    },
    EventRow {
        name: "Stop",
        moment: Moment::TurnEnd,
        matcher: None,
    },
    EventRow {
        name: "SessionEnd",
        moment: Moment::SessionEnd,
        matcher: None,
    },
];

/// Codex fires Claude-style events; there is no PostToolUseFailure (a failed
/// command is a PostToolUse with its exit code in the output).
const CODEX_EVENTS: &[EventRow] = &[
    EventRow {
        name: "SessionStart",
        moment: Moment::SessionStart,
        matcher: Some("startup|resume|clear|compact"),
    },
    EventRow {
        name: "UserPromptSubmit",
        moment: Moment::UserPrompt,
        matcher: None,
    },
    EventRow {
        name: "PreToolUse",
        moment: Moment::PreToolUse,
        matcher: Some("*"),
    },
    EventRow {
        name: "PostToolUse",
        moment: Moment::PostToolUse,
        matcher: Some("*"),
    },
    EventRow {
        name: "Stop",
        moment: Moment::TurnEnd,
        matcher: None,
    },
    EventRow {
        name: "SessionEnd",
        moment: Moment::SessionEnd,
        matcher: None,
    },
];

/// `BeforeTool` is left out: Gemini takes no context there, so mnemo has
/// nothing to say before a tool runs.
const GEMINI_EVENTS: &[EventRow] = &[
    EventRow {
        name: "SessionStart",
        moment: Moment::SessionStart,
        matcher: Some("*"),
    },
    EventRow {
        name: "BeforeAgent",
        moment: Moment::UserPrompt,
        matcher: Some("*"),
    },
    EventRow {
        name: "AfterTool",
        moment: Moment::PostToolUse,
        matcher: Some("*"),
    },
    EventRow {
        name: "AfterAgent",
        moment: Moment::TurnEnd,
        matcher: Some("*"),
    },
    EventRow {
        name: "SessionEnd",
        moment: Moment::SessionEnd,
        matcher: Some("*"),
    },
];

/// Gemini CLI's argument names: older builds call the file `absolute_path`;
/// directories are `dir_path`.
const GEMINI_ARGUMENTS: &[(&str, &str, &str)] = &[
    ("Read", "absolute_path", "file_path"),
    ("Write", "absolute_path", "file_path"),
    ("Edit", "absolute_path", "file_path"),
    ("LS", "dir_path", "path"),
    ("Grep", "dir_path", "path"),
    ("Glob", "dir_path", "path"),
];

/// No `preToolUse` (Cursor takes no context there), and `afterAgentResponse`
/// rather than `stop` for the end of a turn: it carries the agent's answer.
/// `afterAgentThought` carries the thinking before each step: the why.
/// Older builds' `afterShellExecution` / `afterFileEdit` are understood by the
/// adapter but not installed, since `postToolUse` reports the same calls.
const CURSOR_EVENTS: &[EventRow] = &[
    EventRow {
        name: "sessionStart",
        moment: Moment::SessionStart,
        matcher: None,
    },
    EventRow {
        name: "beforeSubmitPrompt",
        moment: Moment::UserPrompt,
        matcher: None,
    },
    EventRow {
        name: "postToolUse",
        moment: Moment::PostToolUse,
        matcher: None,
    },
    EventRow {
        name: "postToolUseFailure",
        moment: Moment::PostToolUseFailure,
        matcher: None,
    },
    EventRow {
        name: "afterAgentThought",
        moment: Moment::AgentText,
        matcher: None,
    },
    EventRow {
        name: "afterAgentResponse",
        moment: Moment::TurnEnd,
        matcher: None,
    },
    EventRow {
        name: "sessionEnd",
        moment: Moment::SessionEnd,
        matcher: None,
    },
];

/// What mnemo's OpenCode plugin forwards (its `hook_event_name`s): the
/// first system prompt of a session, `chat.message`, the assistant's words
/// before a tool call (`message.part`), `tool.execute.after`,
/// and the `session.idle` / `session.deleted` events.
const OPENCODE_EVENTS: &[EventRow] = &[
    EventRow {
        name: "session.start",
        moment: Moment::SessionStart,
        matcher: None,
    },
    EventRow {
        name: "chat.message",
        moment: Moment::UserPrompt,
        matcher: None,
    },
    EventRow {
        name: "message.part",
        moment: Moment::AgentText,
        matcher: None,
    },
    EventRow {
        name: "tool.execute.after",
        moment: Moment::PostToolUse,
        matcher: None,
    },
    EventRow {
        name: "session.idle",
        moment: Moment::TurnEnd,
        matcher: None,
    },
    EventRow {
        name: "session.deleted",
        moment: Moment::SessionEnd,
        matcher: None,
    },
];

/// The table. Order is the order `install` and `doctor` report hosts in.
pub static HOSTS: [Host; 6] = [
    Host {
        platform: Platform::ClaudeCode,
        name: "Claude Code",
        config_home: Some(ConfigHome {
            default_dir: ".claude",
            env: Some("CLAUDE_CONFIG_DIR"),
            home_env: None,
            dir_means_installed: true,
        }),
        binaries: &["claude"],
        hook_files: &[
            ConfigFile {
                scope: Scope::User,
                path: "settings.json",
                format: Format::Jsonc,
            },
            ConfigFile {
                scope: Scope::Project,
                path: ".claude/settings.json",
                format: Format::Jsonc,
            },
        ],
        // `claude mcp add --scope user` writes `~/.claude.json` (inside
        // `CLAUDE_CONFIG_DIR` when that is set).
        mcp: Some(McpRegistry {
            file: ConfigFile {
                scope: Scope::User,
                path: ".claude.json",
                format: Format::Json,
            },
            in_home: true,
            key: "mcpServers",
        }),
        events: CLAUDE_CODE_EVENTS,
        tools: &[],
        arguments: &[],
        context: ContextReply::HookSpecificOutput { strict: false },
        timeout: SECONDS_10,
        project_dir_env: &["CLAUDE_PROJECT_DIR"],
        session_id_env: &["CLAUDE_CODE_SESSION_ID"],
    },
    Host {
        platform: Platform::Codex,
        name: "Codex CLI",
        config_home: Some(ConfigHome {
            default_dir: ".codex",
            env: Some("CODEX_HOME"),
            home_env: None,
            dir_means_installed: true,
        }),
        binaries: &["codex"],
        hook_files: &[
            ConfigFile {
                scope: Scope::User,
                path: "hooks.json",
                format: Format::Json,
            },
            ConfigFile {
                scope: Scope::Project,
                path: ".codex/hooks.json",
                format: Format::Json,
            },
        ],
        mcp: Some(McpRegistry {
            file: ConfigFile {
                scope: Scope::User,
                path: "config.toml",
                format: Format::Toml,
            },
            in_home: false,
            key: "mcp_servers",
        }),
        events: CODEX_EVENTS,
        // The model's `exec_command` reaches hooks as `Bash` already;
        // `apply_patch` keeps its name (the adapter reads the patch).
        tools: &[("exec_command", "Bash"), ("shell", "Bash")],
        arguments: &[],
        context: ContextReply::HookSpecificOutput { strict: true },
        timeout: SECONDS_10,
        project_dir_env: &[],
        session_id_env: &[],
    },
    Host {
        platform: Platform::Gemini,
        name: "Gemini CLI",
        config_home: Some(ConfigHome {
            default_dir: ".gemini",
            env: None,
            home_env: Some("GEMINI_CLI_HOME"),
            dir_means_installed: true,
        }),
        binaries: &["gemini"],
        hook_files: &[
            ConfigFile {
                scope: Scope::User,
                path: "settings.json",
                format: Format::Jsonc,
            },
            ConfigFile {
                scope: Scope::Project,
                path: ".gemini/settings.json",
                format: Format::Jsonc,
            },
        ],
        mcp: Some(McpRegistry {
            file: ConfigFile {
                scope: Scope::User,
                path: "settings.json",
                format: Format::Jsonc,
            },
            in_home: false,
            key: "mcpServers",
        }),
        events: GEMINI_EVENTS,
        tools: &[
            ("run_shell_command", "Bash"),
            ("replace", "Edit"),
            ("read_file", "Read"),
            ("read_many_files", "Read"),
            ("write_file", "Write"),
            ("glob", "Glob"),
            ("grep_search", "Grep"),
            ("search_file_content", "Grep"),
            ("list_directory", "LS"),
            ("web_fetch", "WebFetch"),
            ("google_web_search", "WebSearch"),
            ("invoke_agent", "Agent"),
        ],
        arguments: GEMINI_ARGUMENTS,
        context: ContextReply::HookSpecificOutput { strict: false },
        timeout: HookTimeout {
            unit: TimeUnit::Milliseconds,
            installed: 10_000,
        },
        project_dir_env: &["GEMINI_PROJECT_DIR", "CLAUDE_PROJECT_DIR"],
        session_id_env: &["GEMINI_SESSION_ID"],
    },
    Host {
        platform: Platform::Cursor,
        name: "Cursor",
        config_home: Some(ConfigHome {
            default_dir: ".cursor",
            env: None,
            home_env: None,
            dir_means_installed: true,
        }),
        binaries: &["cursor-agent", "cursor"],
        hook_files: &[
            ConfigFile {
                scope: Scope::User,
                path: "hooks.json",
                format: Format::Json,
            },
            ConfigFile {
                scope: Scope::Project,
                path: ".cursor/hooks.json",
                format: Format::Json,
            },
        ],
        mcp: Some(McpRegistry {
            file: ConfigFile {
                scope: Scope::User,
                path: "mcp.json",
                format: Format::Json,
            },
            in_home: false,
            key: "mcpServers",
        }),
        events: CURSOR_EVENTS,
        tools: &[
            ("Shell", "Bash"),
            ("Read", "Read"),
            ("Write", "Write"),
            ("Grep", "Grep"),
            ("Glob", "Glob"),
            ("LS", "LS"),
            ("Delete", "Delete"),
            ("Task", "Agent"),
        ],
        arguments: &[],
        context: ContextReply::FlatSnakeCase,
        timeout: SECONDS_10,
        project_dir_env: &["CURSOR_PROJECT_DIR", "CLAUDE_PROJECT_DIR"],
        session_id_env: &[],
    },
    Host {
        platform: Platform::OpenCode,
        name: "OpenCode",
        config_home: Some(ConfigHome {
            default_dir: ".config/opencode",
            env: None,
            home_env: None,
            dir_means_installed: false,
        }),
        binaries: &["opencode"],
        hook_files: &[
            ConfigFile {
                scope: Scope::User,
                path: "plugins/mnemo.js",
                format: Format::Script,
            },
            ConfigFile {
                scope: Scope::Project,
                path: ".opencode/plugins/mnemo.js",
                format: Format::Script,
            },
        ],
        mcp: Some(McpRegistry {
            file: ConfigFile {
                scope: Scope::User,
                path: "opencode.json",
                format: Format::Jsonc,
            },
            in_home: false,
            key: "mcp",
        }),
        events: OPENCODE_EVENTS,
        tools: &[
            ("bash", "Bash"),
            ("edit", "Edit"),
            ("read", "Read"),
            ("write", "Write"),
            ("glob", "Glob"),
            ("grep", "Grep"),
            ("list", "LS"),
            ("multiedit", "MultiEdit"),
            ("patch", "apply_patch"),
            ("apply_patch", "apply_patch"),
            ("webfetch", "WebFetch"),
            ("websearch", "WebSearch"),
            ("task", "Agent"),
        ],
        arguments: &[],
        context: ContextReply::FlatSnakeCase,
        timeout: SECONDS_10,
        project_dir_env: &[],
        session_id_env: &[],
    },
    Host {
        platform: Platform::Raw,
        name: "raw JSON",
        config_home: None,
        binaries: &[],
        hook_files: &[],
        mcp: None,
        events: CLAUDE_CODE_EVENTS,
        tools: &[],
        arguments: &[],
        context: ContextReply::HookSpecificOutput { strict: false },
        timeout: SECONDS_10,
        project_dir_env: &[],
        session_id_env: &[],
    },
];

/// The row of `platform`.
pub fn host(platform: Platform) -> &'static Host {
    HOSTS
        .iter()
        .find(|h| h.platform == platform)
        .expect("every platform has a row")
}

impl Host {
    /// The host's tool name in the common vocabulary (itself when unmapped).
    pub fn canonical_tool<'a>(&self, name: &'a str) -> &'a str {
        self.tools
            .iter()
            .find(|(host, _)| *host == name)
            .map_or(name, |(_, common)| common)
    }

    /// A tool call's arguments in the common vocabulary (`tool` already
    /// is): the keys this host names differently are renamed, unless the
    /// common key is there too.
    pub fn canonical_arguments(&self, tool: &str, input: serde_json::Value) -> serde_json::Value {
        let serde_json::Value::Object(mut args) = input else {
            return input;
        };
        for (_, from, to) in self.arguments.iter().filter(|(t, _, _)| *t == tool) {
            if !args.contains_key(*to)
                && let Some(v) = args.remove(*from)
            {
                args.insert((*to).to_owned(), v);
            }
        }
        serde_json::Value::Object(args)
    }

    /// What the host's event `name` means to mnemo, if mnemo hooks it.
    pub fn moment(&self, name: &str) -> Option<Moment> {
        self.events
            .iter()
            .find(|e| e.name == name)
            .map(|e| e.moment)
    }

    /// The host's directory of user configuration (`~/.codex`, or
    /// `$CODEX_HOME`; `$GEMINI_CLI_HOME/.gemini`).
    pub fn config_dir(&self) -> Option<PathBuf> {
        let home = self.config_home?;
        if let Some(dir) = home
            .env
            .and_then(std::env::var_os)
            .filter(|d| !d.is_empty())
        {
            return Some(PathBuf::from(dir));
        }
        let stand_in = home.home_env.and_then(std::env::var_os);
        let base = match stand_in.filter(|d| !d.is_empty()) {
            Some(dir) => PathBuf::from(dir),
            None => crate::paths::home_dir()?,
        };
        Some(base.join(home.default_dir))
    }

    /// The hook file for `scope` (`project_dir` for project scope).
    pub fn hook_file(&self, scope: Scope, project_dir: &Path) -> Option<PathBuf> {
        let file = self.hook_files.iter().find(|f| f.scope == scope)?;
        match scope {
            Scope::User => Some(self.config_dir()?.join(file.path)),
            Scope::Project => Some(project_dir.join(file.path)),
        }
    }

    /// The file where the MCP server is registered at user scope.
    pub fn mcp_file(&self) -> Option<PathBuf> {
        let mcp = self.mcp?;
        if mcp.in_home {
            // Claude Code keeps `.claude.json` in `CLAUDE_CONFIG_DIR` when
            // that is set, in the home directory otherwise.
            let moved = self
                .config_home
                .and_then(|h| h.env)
                .and_then(std::env::var_os)
                .filter(|d| !d.is_empty());
            return match moved {
                Some(dir) => Some(PathBuf::from(dir).join(mcp.file.path)),
                None => Some(crate::paths::home_dir()?.join(mcp.file.path)),
            };
        }
        Some(self.config_dir()?.join(mcp.file.path))
    }

    /// Is the host on this machine: one of its programs on PATH, or its own
    /// configuration directory present (see [`ConfigHome::dir_means_installed`])?
    pub fn is_present(&self) -> bool {
        let dir_counts = self.config_home.is_some_and(|h| h.dir_means_installed);
        self.binary_on_path().is_some()
            || (dir_counts && self.config_dir().is_some_and(|d| d.is_dir()))
    }

    /// The first of the host's programs found on PATH.
    pub fn binary_on_path(&self) -> Option<PathBuf> {
        let path = std::env::var_os("PATH")?;
        let dirs: Vec<PathBuf> = std::env::split_paths(&path).collect();
        self.binaries.iter().find_map(|name| {
            let name = if cfg!(windows) {
                format!("{name}.exe")
            } else {
                (*name).to_owned()
            };
            dirs.iter().map(|d| d.join(&name)).find(|p| p.is_file())
        })
    }

    /// Can mnemo be installed into this host (it has hook files)?
    pub fn is_installable(&self) -> bool {
        !self.hook_files.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_platform_has_exactly_one_row() {
        for p in Platform::ALL {
            assert_eq!(HOSTS.iter().filter(|h| h.platform == p).count(), 1, "{p}");
            assert_eq!(host(p).platform, p);
        }
    }

    #[test]
    fn tool_names_map_onto_one_vocabulary() {
        assert_eq!(
            host(Platform::Gemini).canonical_tool("run_shell_command"),
            "Bash"
        );
        assert_eq!(host(Platform::Cursor).canonical_tool("Shell"), "Bash");
        assert_eq!(host(Platform::Gemini).canonical_tool("replace"), "Edit");
        assert_eq!(host(Platform::Codex).canonical_tool("exec_command"), "Bash");
        assert_eq!(
            host(Platform::Codex).canonical_tool("apply_patch"),
            "apply_patch"
        );
        assert_eq!(host(Platform::ClaudeCode).canonical_tool("Edit"), "Edit");
    }

    #[test]
    fn events_map_to_moments() {
        assert_eq!(
            host(Platform::Gemini).moment("AfterTool"),
            Some(Moment::PostToolUse)
        );
        assert_eq!(host(Platform::Codex).moment("Stop"), Some(Moment::TurnEnd));
        assert_eq!(host(Platform::Codex).moment("PostToolUseFailure"), None);
        // Every hooked event names a distinct moment per host.
        for h in &HOSTS {
            let mut seen = std::collections::HashSet::new();
            for e in h.events {
                assert!(seen.insert(e.moment), "{}: {:?}", h.name, e.moment);
            }
        }
    }

    #[test]
    fn codex_is_strict_and_gemini_counts_milliseconds() {
        assert_eq!(
            host(Platform::Codex).context,
            ContextReply::HookSpecificOutput { strict: true }
        );
        assert_eq!(host(Platform::Gemini).timeout.unit, TimeUnit::Milliseconds);
        assert_eq!(host(Platform::ClaudeCode).timeout.installed, 10);
    }
}
