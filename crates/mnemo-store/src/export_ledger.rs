//! The exports mnemo wrote: `exports.jsonl` in the data directory keeps the
//! path and time of every file `mnemo export -o` wrote, so that a later
//! forget or redaction reaches those copies too, or names the ones it can no
//! longer reach (moved, deleted, not writable). An export to stdout went
//! where mnemo cannot follow, and is not kept.

use std::path::{Path, PathBuf};

use mnemo_core::DataDir;
use mnemo_core::time::{format_rfc3339, now_ms};
use serde::{Deserialize, Serialize};

/// One export file written.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExportWritten {
    /// Absolute path of the file, as written.
    pub path: PathBuf,
    /// When it was last written (RFC 3339).
    pub written_at: String,
}

/// Notes that `file` was just written by an export (the latest write of a
/// path replaces an earlier entry). A file that is not a regular one (a
/// pipe, `/dev/stdout`) went where mnemo cannot follow, and is not noted.
pub fn record(data: &DataDir, file: &Path) -> std::io::Result<()> {
    if !std::fs::metadata(file).is_ok_and(|m| m.is_file()) {
        return Ok(());
    }
    let path = std::path::absolute(file)?;
    let mut entries = written(data);
    entries.retain(|e| e.path != path);
    entries.push(ExportWritten {
        path,
        written_at: format_rfc3339(now_ms()),
    });
    let mut text = String::new();
    for e in &entries {
        text.push_str(&serde_json::to_string(e).map_err(std::io::Error::other)?);
        text.push('\n');
    }
    data.ensure()?;
    let ledger = data.exports_path();
    std::fs::write(&ledger, text)?;
    mnemo_core::paths::restrict_file(&ledger)
}

/// The exports written, oldest first (an unreadable line is passed over).
pub fn written(data: &DataDir) -> Vec<ExportWritten> {
    let Ok(text) = std::fs::read_to_string(data.exports_path()) else {
        return Vec::new();
    };
    text.lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}
