//! End-to-end encrypted sync of the memory between one person's machines
//! and a team, through a self-hosted server on PostgreSQL.
//!
//! Server side:
//! - [`server`]: `mnemo server` (axum + tokio-postgres), which stores opaque
//!   blobs and the least metadata sync needs.
//!
//! Shared by both sides:
//! - [`wire`]: the JSON protocol;
//! - [`crypto`]: sealing records, keyed record names, wrapping space keys;
//! - [`hlc`]: the hybrid logical clock that orders versions of a record.
//!
//! Client side (this machine's store):
//! - [`local`]: the `sync_*` tables (settings, spaces, keys, outbox, ...);
//! - [`version`]: one version of a record, read from and applied to the store;
//! - [`client`]: the HTTP calls;
//! - [`engine`]: one sync (queue, push, pull);
//! - [`account`]: register, join, share, invite, accept, remove, leave;
//! - [`status`]: what `mnemo sync status` and `doctor` report.

pub mod account;
pub mod client;
pub mod crypto;
pub mod engine;
pub mod hlc;
pub mod local;
pub mod server;
pub mod status;
pub mod version;
pub mod wire;
