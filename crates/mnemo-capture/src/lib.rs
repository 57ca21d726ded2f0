//! Hook capture: from a host's payload on stdin to a row in the store.
//!
//! The path, one module per step:
//! [`io`] reads the payload and owns every byte written back;
//! [`adapter`] turns the host's JSON into a platform-neutral [`event`];
//! [`handler`] decides, purely, what to store and what to answer
//! (with [`tool`] shaping tool calls: files, priority, privacy, size);
//! [`persist`] writes the capture to SQLite, or to the spool when it cannot;
//! [`recall`] adds what memory has to say to the answer (SessionStart index,
//! the memories a prompt is about, file history before a tool touches a file) and [`worker_start`] brings
//! the background worker up when a turn begins, without waiting for it.

pub mod adapter;
pub mod event;
pub mod handler;
pub mod io;
pub mod persist;
pub mod recall;
pub mod tool;
pub mod worker_start;
