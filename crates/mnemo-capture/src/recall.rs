//! Memory in the hook's answer: the project index at SessionStart, the few
//! memories relevant to a prompt (UserPromptSubmit), and a file's history
//! before the agent first reads or edits it (PreToolUse).
//!
//! Every item given to a session is recorded (`recall_shown`) so that
//! prompt-time recall never repeats what the session already has; a prompt
//! that nothing relevant matches costs reads only.
//!
//! Runs after the capture was persisted, so a SessionStart sees its own
//! session. Reads, and the note of what was given, go through the capture's
//! own connection when the hook stored something ([`Stores`]: opening the
//! database again costs a parse of its schema each time), else through a
//! read-only connection opened here, and a writer only when there is
//! something to note. The PreToolUse path
//! is on every tool call, so it only ever writes (to remember that a file's
//! history was shown in this session) when there is history to show, and it
//! gives up quietly on anything unexpected: recall is a bonus, never a
//! reason to disturb the agent. Problems become diagnostics for the hook log.

use std::path::{Path, PathBuf};
use std::time::Duration;

use mnemo_core::privacy::Sanitizer;
use mnemo_core::project::{self, ProjectIdentity};
use mnemo_core::{Config, DataDir};
use mnemo_recall::context::{ContextRequest, build};
use mnemo_recall::prompt::{PromptRequest, recall};
use mnemo_recall::{Clock, ItemRef, file_context, scope, shown};
use mnemo_store::Store;

use crate::event::{HookEvent, HookInput, HookResponse, ToolCall};
use crate::persist::{Diagnostic, Level};

/// Tools that read or edit one file, whose history is worth showing first.
const FILE_TOOLS: &[&str] = &[
    "Read",
    "Edit",
    "Write",
    "MultiEdit",
    "NotebookEdit",
    "NotebookRead",
    // Files a shell command shows (`cat`, `sed -n`, `rg … file`) and a
    // patch's files: `tool::files_touched` names them.
    "Bash",
    "apply_patch",
];

pub fn respond(
    input: &HookInput,
    planned: HookResponse,
    mut stores: Stores<'_>,
    config: &Config,
    diagnostics: &mut Vec<Diagnostic>,
) -> HookResponse {
    let outcome = match &input.event {
        HookEvent::SessionStart { .. } if config.context.enabled => {
            session_context(input, &mut stores, config, diagnostics)
        }
        HookEvent::UserPrompt { prompt, .. } if config.recall.prompt_recall => {
            prompt_memory(input, prompt, &mut stores, config, diagnostics)
        }
        HookEvent::PreToolUse(call)
            if config.context.file_context && FILE_TOOLS.contains(&call.name.as_str()) =>
        {
            file_history(input, call, &mut stores, config)
        }
        _ => return planned,
    };
    match outcome {
        Ok(Some(answer)) => HookResponse {
            additional_context: answer
                .additional_context
                .map(name_tools_for_host)
                .or(planned.additional_context),
            system_message: answer.system_message.or(planned.system_message),
        },
        Ok(None) => planned,
        Err(message) => {
            diagnostics.push(Diagnostic {
                level: Level::Warn,
                message: format!("recall: {message}"),
            });
            planned
        }
    }
}

/// Set to `1` by the Claude Code plugin's hook wrapper (`plugin/hooks/run-mnemo`).
const VIA_PLUGIN_ENV: &str = "MNEMO_VIA_PLUGIN";

/// What Claude Code calls our MCP tools when the plugin `mnemo` serves them
/// (its server `mnemo`): `mcp__plugin_<plugin>_<server>__<tool>`.
const PLUGIN_TOOL_PREFIX: &str = "mcp__plugin_mnemo_mnemo__";

/// Memory names the MCP tools the way the agent sees them: `mcp__mnemo__search`
/// as `mnemo install` registers the server, `mcp__plugin_mnemo_mnemo__search`
/// from the plugin's hooks.
fn name_tools_for_host(text: String) -> String {
    if std::env::var_os(VIA_PLUGIN_ENV).is_some_and(|v| v == "1") {
        text.replace("mcp__mnemo__", PLUGIN_TOOL_PREFIX)
    } else {
        text
    }
}

fn identity(input: &HookInput) -> Option<ProjectIdentity> {
    project::resolve(input.project_dir.as_deref(), input.cwd.as_deref())
}

/// The database as recall reaches it: the connection the capture wrote
/// through, when the hook stored something (already open, its schema already
/// read), else opened on demand.
pub struct Stores<'a> {
    data: &'a DataDir,
    busy: Duration,
    kept: Option<Store>,
}

/// A connection recall reads through, and whether it may write.
struct Reading {
    store: Store,
    writable: bool,
}

impl<'a> Stores<'a> {
    /// `kept`: the capture's connection, if it stored something. Waits for
    /// locks no longer than `config.store.busy_timeout_ms`.
    pub fn new(data: &'a DataDir, config: &Config, kept: Option<Store>) -> Stores<'a> {
        let busy = Duration::from_millis(config.store.busy_timeout_ms);
        let kept = kept.filter(|store| store.set_busy_timeout(busy).is_ok());
        Stores { data, busy, kept }
    }

    /// A connection to read through: the kept one, else one opened
    /// read-only; None when there is no database yet, or none this binary
    /// can read.
    fn read(&mut self) -> Result<Option<Reading>, String> {
        if let Some(store) = self.kept.take() {
            return Ok(Some(Reading {
                store,
                writable: true,
            }));
        }
        let path = self.data.db_path();
        if !path.exists() {
            return Ok(None);
        }
        let store = Store::open_read_only(&path, self.busy).map_err(|e| e.to_string())?;
        // A store whose schema is not (yet) this binary's (being created by
        // another hook at this moment, or older and not migrated) has
        // nothing recall can read.
        let version = store.schema_version().map_err(|e| e.to_string())?;
        if version != mnemo_store::schema::LATEST {
            return Ok(None);
        }
        Ok(Some(Reading {
            store,
            writable: false,
        }))
    }

    /// A connection to write through: `reading`'s when it may write, else
    /// (`reading` closed first) one opened for writing.
    fn write(&self, reading: Reading) -> Result<Store, String> {
        if reading.writable {
            return Ok(reading.store);
        }
        drop(reading);
        Store::open(&self.data.db_path(), self.busy).map_err(|e| e.to_string())
    }
}

/// What recall during a session needs: the host's session id, the project
/// and a connection to read through; None when any is missing.
fn session_store<'i>(
    input: &'i HookInput,
    stores: &mut Stores<'_>,
) -> Result<Option<(&'i str, ProjectIdentity, Reading)>, String> {
    let (Some(session_id), Some(project)) = (input.session_id.as_deref(), identity(input)) else {
        return Ok(None);
    };
    Ok(stores.read()?.map(|reading| (session_id, project, reading)))
}

fn session_context(
    input: &HookInput,
    stores: &mut Stores<'_>,
    config: &Config,
    diagnostics: &mut Vec<Diagnostic>,
) -> Result<Option<HookResponse>, String> {
    let Some(project) = identity(input) else {
        return Ok(None);
    };
    let Some(reading) = stores.read()? else {
        return Ok(None);
    };
    let cwd = input.cwd.as_deref().map(PathBuf::from);
    let index = build(
        reading.store.conn(),
        &ContextRequest {
            root: &project.root,
            name: &project.name,
            cwd: cwd.as_deref(),
            config: &config.context,
            clock: Clock::system(),
            // Every agent's memory: what one did is for the others too.
            agent: None,
            mine_only: !config.sync.others,
        },
    )
    .map_err(|e| e.to_string())?;
    let given: Vec<ItemRef> = index
        .observations_shown
        .iter()
        .chain(&index.summaries_shown)
        .copied()
        .collect();
    // After a compaction the agent keeps only a summary of what it was
    // given: it may be given those memories again.
    let compacted =
        matches!(&input.event, HookEvent::SessionStart { source: Some(s) } if s == "compact");
    if let Some(session_id) = input.session_id.as_deref()
        && (!given.is_empty() || compacted)
    {
        let platform = input.platform.as_str();
        let session = file_context::session_row(reading.store.conn(), platform, session_id)
            .map_err(|e| e.to_string())?;
        if let Some(session) = session {
            let forget = if compacted { Forget::First } else { Forget::No };
            remember(stores.write(reading), session, &given, forget, diagnostics);
        }
    }
    let system_message = (config.context.system_message && !index.empty).then(|| {
        format!(
            "mnemo: {} of {} of {} in context ({} characters)",
            index.observations_shown.len(),
            mnemo_core::words::count_s(index.observations_total, "observation"),
            index.project,
            index.chars
        )
    });
    Ok(Some(HookResponse {
        additional_context: Some(index.text),
        system_message,
    }))
}

fn file_history(
    input: &HookInput,
    call: &ToolCall,
    stores: &mut Stores<'_>,
    config: &Config,
) -> Result<Option<HookResponse>, String> {
    let (read, modified) =
        crate::tool::files_touched(&call.name, &call.input, input.cwd.as_deref());
    let Some(file) = modified.into_iter().chain(read).next() else {
        return Ok(None);
    };
    let Some((session_id, project, reading)) = session_store(input, stores)? else {
        return Ok(None);
    };
    let conn = reading.store.conn();
    let err = |e: mnemo_recall::RecallError| e.to_string();
    // The common case, a file nobody wrote about, ends at this one probe.
    if !file_context::any_history(conn, &project.root, &file).map_err(err)? {
        return Ok(None);
    }
    let root_text = project.root.to_string_lossy();
    let Some(stored) = scope::by_root(conn, &root_text).map_err(err)? else {
        return Ok(None);
    };
    let budget = (config.context.file_context_tokens as usize).saturating_mul(4);
    let entries = file_context::history(
        conn,
        stored.id,
        &project.root,
        &file,
        file_context::MAX_ENTRIES,
    )
    .map_err(err)?;
    if entries.is_empty() {
        return Ok(None);
    }
    let platform = input.platform.as_str();
    let Some(session) = file_context::session_row(conn, platform, session_id).map_err(err)? else {
        return Ok(None);
    };
    if file_context::already_shown(conn, session, &file).map_err(err)? {
        return Ok(None);
    }
    // Remember before answering: of parallel calls on one file, one shows it.
    let writer = stores.write(reading)?;
    let clock = Clock::system();
    if !file_context::mark_shown(writer.conn(), session, &file, clock.now_ms).map_err(err)? {
        return Ok(None);
    }
    let given: Vec<ItemRef> = entries.iter().map(|e| e.id).collect();
    shown::record(writer.conn(), session, &given, clock.now_ms).map_err(err)?;
    let text = file_context::render(
        &file,
        Some(Path::new(&*root_text)),
        &entries,
        &clock,
        budget,
    );
    Ok(text.map(|t| HookResponse {
        additional_context: Some(t),
        system_message: None,
    }))
}

#[derive(PartialEq)]
enum Forget {
    No,
    /// Forget what was given before (after a compaction).
    First,
}

/// Records that `items` were given to `session`. Best effort: the answer
/// goes out anyway, and a store that cannot be written (read-only, locked)
/// is a diagnostic.
fn remember(
    writer: Result<Store, String>,
    session: i64,
    items: &[ItemRef],
    forget: Forget,
    diagnostics: &mut Vec<Diagnostic>,
) {
    let written = writer.and_then(|writer| {
        if forget == Forget::First {
            shown::forget(writer.conn(), session).map_err(|e| e.to_string())?;
        }
        shown::record(writer.conn(), session, items, Clock::system().now_ms)
            .map_err(|e| e.to_string())
    });
    if let Err(message) = written {
        diagnostics.push(Diagnostic {
            level: Level::Warn,
            message: format!("recall: cannot record what was given: {message}"),
        });
    }
}

/// The memories relevant to the prompt that the session does not have yet.
fn prompt_memory(
    input: &HookInput,
    prompt: &str,
    stores: &mut Stores<'_>,
    config: &Config,
    diagnostics: &mut Vec<Diagnostic>,
) -> Result<Option<HookResponse>, String> {
    // Host-injected turns (a background task's result) are not questions.
    if mnemo_recall::prompt::is_injected(prompt) {
        return Ok(None);
    }
    let clean = Sanitizer::new(&config.privacy).text(prompt).into_owned();
    // Chatter ("thanks", "continue") ends here, without opening the store.
    let terms = mnemo_recall::prompt::terms(&clean);
    if terms.is_empty() {
        return Ok(None);
    }
    let Some((session_id, project, reading)) = session_store(input, stores)? else {
        return Ok(None);
    };
    let conn = reading.store.conn();
    let err = |e: mnemo_recall::RecallError| e.to_string();
    let root_text = project.root.to_string_lossy();
    let Some(stored) = scope::by_root(conn, &root_text).map_err(err)? else {
        return Ok(None);
    };
    let session =
        file_context::session_row(conn, input.platform.as_str(), session_id).map_err(err)?;
    let exclude = match session {
        Some(s) => shown::items(conn, s).map_err(err)?,
        None => Default::default(),
    };
    let clock = Clock::system();
    let found = recall(
        conn,
        &PromptRequest {
            project: stored.id,
            root: &project.root,
            session,
            terms: &terms,
            exclude: &exclude,
            max_items: config.recall.prompt_recall_items as usize,
            budget_chars: (config.recall.prompt_recall_tokens as usize).saturating_mul(4),
            mine_only: !config.sync.others,
        },
        &clock,
    )
    .map_err(err)?;
    let Some(found) = found else {
        return Ok(None);
    };
    if let Some(session) = session {
        remember(
            stores.write(reading),
            session,
            &found.shown,
            Forget::No,
            diagnostics,
        );
    }
    Ok(Some(HookResponse {
        additional_context: Some(found.text),
        system_message: None,
    }))
}
