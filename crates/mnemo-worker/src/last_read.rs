//! The last file a reader parsed, kept while its size and modification time
//! stay the same (a batch after batch of one session reads the same
//! transcript), and each unreadable file reported once in the log.

use std::collections::HashSet;
use std::fmt::Display;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::SystemTime;

use tracing::warn;

/// One cached parse of a file, with what its failures are logged as.
pub struct LastRead<T> {
    /// What the file is, for the log (`transcript`, `Codex rollout`).
    what: &'static str,
    /// What an unreadable file means for the batch, for the log.
    consequence: &'static str,
    state: Mutex<State<T>>,
}

struct State<T> {
    last: Option<Cached<T>>,
    /// Files already reported as unreadable.
    reported: HashSet<PathBuf>,
}

struct Cached<T> {
    path: PathBuf,
    size: u64,
    modified: Option<SystemTime>,
    value: Arc<T>,
}

impl<T> LastRead<T> {
    pub fn new(what: &'static str, consequence: &'static str) -> LastRead<T> {
        LastRead {
            what,
            consequence,
            state: Mutex::new(State {
                last: None,
                reported: HashSet::new(),
            }),
        }
    }

    /// `path` parsed by `read`, or the last parse when the file has not
    /// changed since; None (logged once per file) when it cannot be read.
    pub fn get<E: Display>(
        &self,
        path: &Path,
        read: impl FnOnce(&Path) -> Result<T, E>,
    ) -> Option<Arc<T>> {
        let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        let meta = match std::fs::metadata(path) {
            Ok(m) => m,
            Err(e) => return self.report_once(&mut state, path, &e),
        };
        let (size, modified) = (meta.len(), meta.modified().ok());
        if let Some(c) = &state.last
            && c.path == path
            && c.size == size
            && c.modified == modified
        {
            return Some(c.value.clone());
        }
        match read(path) {
            Ok(value) => {
                let value = Arc::new(value);
                state.last = Some(Cached {
                    path: path.to_path_buf(),
                    size,
                    modified,
                    value: value.clone(),
                });
                Some(value)
            }
            Err(e) => self.report_once(&mut state, path, &e),
        }
    }

    fn report_once(
        &self,
        state: &mut State<T>,
        path: &Path,
        error: &dyn Display,
    ) -> Option<Arc<T>> {
        if state.reported.insert(path.to_path_buf()) {
            warn!(
                "{} {} not readable ({error}); {}",
                self.what,
                path.display(),
                self.consequence
            );
        }
        None
    }
}
