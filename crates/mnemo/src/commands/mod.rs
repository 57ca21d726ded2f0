//! One module per command family.

pub mod claude_plugin;
pub mod curate;
pub mod doctor;
pub mod import_claude_mem;
pub mod import_transcripts;
pub mod install;
pub mod mcp;
pub mod open;
pub mod projects;
pub mod recall;
pub mod stats;
pub mod switch_claude_mem;
pub mod sync;
pub mod sync_server;
pub mod transfer;
pub mod worker;
