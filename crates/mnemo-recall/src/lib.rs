//! Recall: giving memory back to the agent and to the user.
//!
//! Everything here is a plain function over a rusqlite [`Connection`]
//! (usually [`mnemo_store::Store::conn`]), synchronous and free of I/O other
//! than the database and a few cheap file-system reads, so that the hook
//! path, the CLI, the MCP server and the worker's HTTP API all call the same
//! code and print the same things:
//!
//! - [`agents`]: which agent produced a record (filter and tag);
//! - [`authors`]: which teammate wrote a record that sync brought (filter
//!   and `[noted by NAME]` mark);
//! - [`context`]: the progressive-disclosure index injected at SessionStart
//!   (and printed by `mnemo context`), with [`sessions`] (where the last
//!   sessions stand) and [`gotchas`] (what keeps failing, and the fix);
//! - [`prompt`]: the few memories relevant to a prompt (UserPromptSubmit),
//!   never repeating what [`shown`] says the session already has;
//! - [`file_context`]: a file's recent history before the agent reads or
//!   edits it (PreToolUse), at most once per file per session;
//! - [`search`]: full-text search over observations, summaries and prompts,
//!   with filters; [`query`] turns any user text into a safe FTS5 query
//!   of its selective words ([`stop_words`] says which are not), [`ranking`] re-ranks BM25's candidates by how
//!   much of the query they cover, [`supersede`] finds decisions that a
//!   later decision replaced; [`hybrid`] fuses it with search by meaning
//!   (stored vectors, when embeddings are configured);
//! - [`projects`]: the projects mnemo knows, and the hint that names them;
//! - [`records`]: full records by id (`mnemo show`, `get_observations`);
//! - [`timeline`]: what came before and after an item in its project;
//! - [`save`]: an observation the agent asked to keep (`save_memory`);
//! - [`curate`]: forget, edit, pin and redact requests as the interfaces
//!   receive them, checked and turned into the store's;
//! - [`render`]: the terminal/agent text of all of the above;
//! - and the small vocabulary they share: [`ids`] (`#12`, `S3`, `P7`),
//!   [`types`] (`fix` is bugfix), [`when`] (dates, ages, `7d`), [`scope`]
//!   (which project, which session), [`git`]
//!   (branch and changed files, read without spawning git), [`text`].
//!
//! Behind the `synth` feature, `synth` builds large deterministic stores for
//! the benchmarks (never part of the shipped binary).
//!
//! Results serialize (serde) to the JSON that `--json` prints, so that an
//! HTTP API can return them as they are.

pub mod agents;
pub mod authors;
pub mod context;
pub mod curate;
pub mod dates;
pub mod file_context;
pub mod fresh;
pub mod git;
pub mod gotchas;
pub mod hybrid;
pub mod ids;
pub mod knowledge;
pub mod projects;
pub mod prompt;
pub mod query;
pub mod ranking;
pub mod records;
pub mod render;
pub mod save;
pub mod scope;
pub mod search;
pub mod sessions;
pub mod shown;
pub mod stop_words;
pub mod supersede;
#[cfg(feature = "synth")]
pub mod synth;
pub mod text;
pub mod timeline;
pub mod types;
pub mod when;

pub use ids::{ItemRef, Kind};
pub use when::Clock;

/// What can go wrong in recall, in terms a user (or an agent) can act on.
#[derive(Debug, thiserror::Error)]
pub enum RecallError {
    /// The request itself is wrong (an id or a date that does not parse);
    /// the message says what was expected.
    #[error("{0}")]
    Input(String),
    #[error("database error: {0}")]
    Sql(#[from] rusqlite::Error),
}

pub type Result<T, E = RecallError> = std::result::Result<T, E>;
