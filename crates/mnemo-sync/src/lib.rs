//! End-to-end encrypted sync of the memory between one person's machines
//! and a team, through a self-hosted server on PostgreSQL.
//!
//! - [`crypto`]: sealing records, keyed record names, wrapping space keys;
//! - [`hlc`]: the hybrid logical clock that orders versions of a record;
//! - [`wire`]: the JSON protocol between client and server;
//! - [`server`]: `mnemo server` (axum + tokio-postgres);
pub mod crypto;
pub mod hlc;
pub mod server;
pub mod wire;
