//! Reading the hosts' transcripts.
//!
//! Claude Code keeps every session as JSON Lines (`transcript_path`, under
//! `~/.claude/projects/<project>/<session>.jsonl`, with subagents' files in
//! `<session>/subagents/`). This crate reads one such file as a [`Session`]
//! of [`Turn`]s: what opened each turn (a prompt, a background task's
//! notification, a compaction), its tool calls with their results, the
//! assistant's words between them, the questions it asked and the answers,
//! and its final report. Thinking blocks are never read.
//!
//! Reading is streaming and tolerant: a line that is not JSON, or JSON of a
//! shape we do not know, is skipped and counted ([`ReadStats`]), never fatal.
//! Privacy is applied here, before anything leaves the crate, with the same
//! rules as capture ([`mnemo_core::privacy::Sanitizer`]): `<private>` spans
//! and context tags cut, secrets redacted, and the results of tool calls on
//! deny-listed files withheld.
//!
//! The path, one module per step: [`claude_code`] turns lines into turns;
//! [`clean`] owns the privacy rules applied to what it keeps; [`locate`]
//! finds the turn a batch of captured events belongs to; [`files`] finds
//! transcripts on disk. Codex's rollout file is read into the same
//! [`Session`] by [`rollout`]; [`codex`] reads from it the one thing
//! Codex's hooks leave out: each tool call's exit code. Gemini CLI's chat
//! recording is read into the same [`Session`] by [`gemini`]; its hooks
//! give tool calls no id, so [`locate::match_calls`] pairs captured calls
//! with the transcript's by order, name and arguments; [`gemini_project`]
//! finds the project a recording on disk belongs to, for an import.

pub mod claude_code;
pub mod clean;
pub mod codex;
pub mod files;
pub mod gemini;
pub mod gemini_project;
pub mod locate;
pub mod model;
pub mod rollout;

pub use claude_code::{read_file, read_session};
pub use gemini::read_gemini;
pub use model::{Note, Origin, Question, ReadStats, Session, ToolCall, Turn};
pub use rollout::read_rollout;
