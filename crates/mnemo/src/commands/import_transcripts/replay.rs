//! A transcript's session as the captures its live hooks would have made:
//! SessionStart, then per turn its prompt (UserPromptSubmit), its tool calls
//! (PostToolUse / PostToolUseFailure) and its end (Stop), then SessionEnd.
//! Each goes through the capture's own handler, so privacy, priorities,
//! file lists and size caps are those of live capture.
//!
//! A Codex rollout is replayed as Codex's hooks deliver a session: each
//! event carries its turn's id, a tool call's output comes as its response
//! whatever its exit code (the worker reads the codes from the rollout, as
//! for a live session), and the Codex adapter reads patches and names tools
//! ([`mnemo_capture::adapter::codex::as_codex_hook`]).
//!
//! A Gemini CLI recording is replayed as Gemini's hooks deliver a session:
//! its calls' responses are read as the Gemini adapter reads `AfterTool`'s
//! ([`mnemo_capture::adapter::gemini::as_gemini_hook`]), so a file written
//! anew and one rewritten are told apart as in a live session; the
//! recording's call ids are kept, so a re-import adds nothing.
//!
//! A session the store already knows goes on where the store stands: turns
//! before its last recorded one are skipped, the last one's tool calls are
//! replayed (the store keeps one row per tool call id) and later turns are
//! added. Importing twice therefore adds nothing, and a session captured
//! live and then imported stays one session.
//!
//! A session in a git worktree that no longer exists joins its repository
//! when the transcript shows it was one (a `gitBranch`, and a worktree
//! layout in its `cwd`): the project is then the repository's, as it was
//! while the worktree lived.

use std::path::Path;

use mnemo_capture::adapter::codex::as_codex_hook;
use mnemo_capture::adapter::gemini::as_gemini_hook;
use mnemo_capture::event::{HookEvent, HookInput, ToolCall};
use mnemo_capture::handler::{Context, plan};
use mnemo_core::Config;
use mnemo_core::model::Platform;
use mnemo_core::privacy::Sanitizer;
use mnemo_store::Capture;
use mnemo_transcript::locate::prompt_numbers;
use mnemo_transcript::{Origin, Session, Turn};
use serde_json::Value;

/// Where the store stands on a session: (turns recorded, last one ended).
pub type Progress = Option<(i64, bool)>;

/// Where a session comes from: its host and its transcript file.
#[derive(Debug, Clone, Copy)]
pub struct Source<'a> {
    pub platform: Platform,
    pub transcript: &'a Path,
}

/// The captures of one session, in order.
pub fn captures(
    session: &Session,
    source: Source<'_>,
    progress: Progress,
    config: &Config,
    sanitizer: &Sanitizer,
) -> Vec<Capture> {
    let mut out = Replayer {
        session,
        platform: source.platform,
        transcript: source.transcript.display().to_string(),
        config,
        sanitizer,
        turn_id: None,
        captures: Vec::new(),
    };
    let known = progress.is_some();
    let (done, ended) = progress.unwrap_or((0, false));
    let first_at = session.turns.first().map_or(0, |t| t.started_at_ms);
    if !known {
        out.push(
            HookEvent::SessionStart {
                source: Some("import".to_owned()),
            },
            first_at,
        );
    }
    let numbers = prompt_numbers(session);
    for (i, turn) in session.turns.iter().enumerate() {
        let n = numbers[i];
        if n < done {
            continue;
        }
        out.turn_id = turn.uuid.clone();
        let opens = i == 0 || turn.origin != Origin::Compaction;
        if n > done && opens {
            out.prompt(turn);
        }
        for call in &turn.tool_calls {
            out.tool_call(call);
        }
        let continued = session
            .turns
            .get(i + 1)
            .is_some_and(|t| t.origin == Origin::Compaction);
        let is_last = i + 1 == session.turns.len();
        // The store's last turn ends by itself when it is still going on
        // (the host's Stop hook will say so).
        let live = n == done && (ended || is_last);
        if !continued && !live {
            out.push(
                HookEvent::Stop {
                    prompt_id: None,
                    last_assistant_message: turn.final_report.clone(),
                },
                turn.ended_at_ms,
            );
        }
    }
    if !known {
        let last_at = session.turns.last().map_or(0, |t| t.ended_at_ms);
        out.push(
            HookEvent::SessionEnd {
                reason: Some("imported".to_owned()),
            },
            last_at,
        );
    }
    out.captures
}

struct Replayer<'a> {
    session: &'a Session,
    platform: Platform,
    transcript: String,
    config: &'a Config,
    sanitizer: &'a Sanitizer,
    /// The host's id of the turn being replayed (Codex's `turn_id`).
    turn_id: Option<String>,
    captures: Vec<Capture>,
}

impl Replayer<'_> {
    fn prompt(&mut self, turn: &Turn) {
        self.push(
            HookEvent::UserPrompt {
                prompt_id: None,
                prompt: turn.prompt.clone().unwrap_or_default(),
            },
            turn.started_at_ms,
        );
    }

    fn tool_call(&mut self, call: &mnemo_transcript::ToolCall) {
        let tool = ToolCall {
            name: call.name.clone(),
            input: call.input.clone(),
            tool_use_id: Some(call.id.clone()),
            prompt_id: None,
            duration_ms: None,
        };
        let event = match &call.error {
            // Codex has no failure hook: its output is the response.
            Some(error) if self.platform == Platform::Codex => HookEvent::PostToolUse {
                call: tool,
                response: Value::String(error.clone()),
            },
            Some(error) => HookEvent::PostToolUseFailure {
                call: tool,
                error: error.clone(),
                interrupted: false,
            },
            None => HookEvent::PostToolUse {
                call: tool,
                response: call.result.clone().unwrap_or(Value::Null),
            },
        };
        self.push(event, call.at_ms);
    }

    /// Plans `event` as the hook would, dated `at` (now when unknown).
    fn push(&mut self, event: HookEvent, at: i64) {
        let mut input = HookInput {
            platform: Platform::ClaudeCode,
            event,
            session_id: Some(self.session.session_id.clone()),
            cwd: self.session.cwd.clone(),
            project_dir: gone_worktree_repository(self.session),
            transcript_path: Some(self.transcript.clone()),
            oversized: None,
        };
        match self.platform {
            Platform::Codex => input = as_codex_hook(input, self.turn_id.clone()),
            Platform::Gemini => input = as_gemini_hook(input),
            _ => {}
        }
        let ctx = Context {
            config: self.config,
            sanitizer: self.sanitizer,
            now_ms: if at > 0 {
                at
            } else {
                mnemo_core::time::now_ms()
            },
        };
        self.captures.extend(plan(&input, &ctx).capture);
    }
}

/// The repository of a session's git worktree that is gone: the session saw
/// a git branch there, the directory no longer exists, and its path has a
/// worktree layout ([`mnemo_core::project::worktree_repository`]).
fn gone_worktree_repository(session: &Session) -> Option<String> {
    session.git_branch.as_ref()?;
    let cwd = Path::new(session.cwd.as_deref()?);
    if cwd.exists() {
        return None;
    }
    mnemo_core::project::worktree_repository(cwd).map(|r| r.to_string_lossy().into_owned())
}
