//! Carrying out a plan's capture: into the database when it can be written,
//! else into the spool. Either way the capture survives, within the hook's
//! deadline: every wait (the database's busy timeout, the spool's lock) is
//! cut to what is left of it, and a slice at the end is kept for the spool.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use mnemo_core::{Config, DataDir};
use mnemo_store::capture::Applied;
use mnemo_store::{Capture, CaptureOp, Store, spool};

/// Where a capture ended up.
#[derive(Debug)]
pub enum Persisted {
    Stored(Applied),
    /// In the spool file, because of the reason given.
    Spooled {
        file: PathBuf,
        reason: String,
    },
}

/// Something worth a line in the hook log.
#[derive(Debug, Clone, PartialEq)]
pub struct Diagnostic {
    pub level: Level,
    pub message: String,
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Level {
    Info,
    Warn,
    Error,
}

/// The share of the time left that the database may use; the rest is the
/// spool's, should the database fail.
const DATABASE_SHARE: u32 = 4; // in fifths

/// Stores `capture`, ingesting any spool backlog first so that order is kept,
/// and returns by `deadline` (plus one spool write). Returns Err only when
/// neither the database nor any spool file took it. When the database took
/// it, its connection is left in `kept`, so that the hook's answer reads
/// (and notes what it gave) without opening the database again.
pub fn persist(
    capture: &Capture,
    data: &DataDir,
    config: &Config,
    deadline: Instant,
    kept: &mut Option<Store>,
    diagnostics: &mut Vec<Diagnostic>,
) -> Result<Persisted, String> {
    let left = deadline.saturating_duration_since(Instant::now());
    let db_deadline = Instant::now() + left * DATABASE_SHARE / 5;
    let busy = || {
        Duration::from_millis(config.store.busy_timeout_ms)
            .min(db_deadline.saturating_duration_since(Instant::now()))
    };
    let result = Store::open(&data.db_path(), busy()).and_then(|mut store| {
        if spool::has_pending(data) {
            let report = store.ingest_spool_until(data, Some(db_deadline))?;
            for reason in &report.refused {
                diagnostics.push(Diagnostic {
                    level: Level::Warn,
                    message: format!(
                        "spool refused, not read: {reason}; remove it if you did not create it"
                    ),
                });
            }
            diagnostics.push(Diagnostic {
                level: if report.rejected > 0 {
                    Level::Warn
                } else {
                    Level::Info
                },
                message: format!(
                    "ingested the spool: {} applied, {} already present, {} set aside in {}",
                    report.applied,
                    report.duplicates,
                    report.rejected,
                    data.spool_dir().join(spool::REJECTED_FILE).display()
                ),
            });
        }
        store.set_busy_timeout(busy())?;
        let applied = store.apply(capture)?;
        if matches!(capture.op, CaptureOp::SessionEnd { .. }) {
            // Best effort: a busy reader just means a later checkpoint.
            let _ = store.checkpoint_passive();
        }
        *kept = Some(store);
        Ok(applied)
    });
    match result {
        Ok(applied) => Ok(Persisted::Stored(applied)),
        Err(e) => {
            let reason = e.to_string();
            match spool::append(data, capture, Some(deadline)) {
                Ok(file) => {
                    diagnostics.push(Diagnostic {
                        level: Level::Warn,
                        message: format!(
                            "database not writable ({reason}); event spooled to {} and will be stored \
                             when the database opens cleanly (run `mnemo doctor`)",
                            file.display()
                        ),
                    });
                    Ok(Persisted::Spooled { file, reason })
                }
                Err(spool_error) => Err(format!(
                    "event lost: database not writable ({reason}) and {spool_error}"
                )),
            }
        }
    }
}
