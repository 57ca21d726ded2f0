//! The shared vocabulary of mnemo.
//!
//! Everything here is cheap and synchronous, because the hook path (a fresh
//! process per agent event) links it: where the data lives ([`paths`]), how it
//! is configured ([`config`]), what each agent host is ([`host`]), which project an event belongs to
//! ([`project`]), what may be stored at all ([`privacy`]), how files others
//! name are read without hanging ([`files`]), and the small
//! enums every later stage agrees on ([`model`]), and how counts are worded
//! ([`words`]), and which text gives the reading agent orders
//! ([`instructions`]).

pub mod config;
pub mod files;
pub mod host;
pub mod host_text;
pub mod instructions;
pub mod model;
pub mod paths;
pub mod privacy;
pub mod project;
pub mod shell;
pub mod time;
pub mod words;

pub use config::Config;
pub use paths::DataDir;
