//! Test support for mnemo's end-to-end tests.
//!
//! mnemo is tested against the real clients it serves, not against mocks of
//! them. This crate owns the three things such tests need and that no
//! production crate should carry:
//!
//! - [`llm`]: [`StandIn`], a real HTTP server on `127.0.0.1` that stands in for
//!   the LLM providers (Anthropic Messages, OpenAI-compatible chat
//!   completions). It drives the real Claude Code CLI through a scripted
//!   session ([`Step`]s) or plays a provider for mnemo's worker (a
//!   [`Reply`]-returning closure), and records every request it receives.
//! - [`claude_code`]: the real Claude Code binary, installed once from the npm
//!   registry into a cache shared by all test processes ([`claude_binary`]),
//!   and [`ClaudeRun`], which runs it headless against a [`StandIn`] with the
//!   recipe in `shared/docs/claude-code-e2e.md`.
//! - [`codex`]: the real Codex CLI, installed the same way ([`codex_binary`]),
//!   and [`CodexRun`], which runs `codex exec` against a [`StandIn`] serving
//!   the OpenAI Responses API.
//! - [`session`]: [`Run`](session::Run), what every headless session of an
//!   agent CLI shares (environment, `PATH`, deadline, captured output); the
//!   host modules ([`claude_code`], [`codex`], [`gemini`], [`opencode`])
//!   state only their recipes.
//! - [`browser`]: [`Browser`], a real headless Chromium driven over W3C
//!   WebDriver (`chromedriver` on loopback), for the web viewer's tests.
//! - [`embeddings`]: a stand-in OpenAI-compatible `/embeddings` endpoint
//!   with deterministic concept-bucket vectors, for search by meaning.
//! - [`sandbox`]: [`Sandbox`], a throw-away directory with a fake `HOME`, a
//!   mnemo data dir and a project dir, and [`git_init`] for real git repos.
//!
//! Everything here is synchronous from the caller's point of view so that
//! plain `#[test]` functions can use it; the server runs its own tokio
//! runtime on its own thread.

pub mod browser;
pub mod claude_code;
pub mod codex;
pub mod embeddings;
pub mod gemini;
pub mod llm;
pub mod npm;
pub mod opencode;
mod process;
pub mod sandbox;
pub mod session;

pub use browser::{Browser, Element};
pub use claude_code::{CLAUDE_CODE_VERSION, ClaudeOutput, ClaudeRun, claude_binary, claude_dir};
pub use codex::{CODEX_VERSION, CodexOutput, CodexRun, codex_binary, codex_dir};
pub use gemini::{GEMINI_CLI_VERSION, GeminiOutput, GeminiRun, gemini_binary};
pub use llm::{Block, RecordedRequest, Reply, StandIn, StandInBuilder, Step, Usage};
pub use opencode::{OPENCODE_VERSION, OpenCodeOutput, OpenCodeRun, opencode_binary};
pub use sandbox::{Sandbox, git_init};
