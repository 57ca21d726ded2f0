//! Redaction beyond the database: the other files mnemo owns that may hold
//! a copy of a redacted text. Spooled captures are ingested first (so that
//! the database redaction reaches them); then the records the spool set
//! aside (`rejected.jsonl`), the logs and the copies `doctor --fix` keeps of
//! a damaged database (`mnemo.db.corrupt-*` and its `-wal`) are rewritten
//! with every occurrence masked. A mask has the length of what it hides, so
//! a kept database copy keeps its page layout. What cannot be reached is
//! named in [`Redacted::remaining`], never passed over in silence.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use mnemo_core::DataDir;

use crate::Store;
use crate::curate::{CurateError, Redacted, needles};
use crate::spool::{REJECTED_FILE, spool_files};

/// Largest file rewritten; a larger one is reported as remaining.
const MAX_SCRUB_BYTES: u64 = 1 << 30;
/// How long a redaction waits for the spool's lock.
const SPOOL_WAIT: Duration = Duration::from_secs(5);
/// The byte a masked occurrence is overwritten with.
const MASK: u8 = b'*';

impl Store {
    /// [`Store::redact`], after ingesting the spool, then in every other
    /// file of `data` that may hold the text (see the module comment).
    pub fn redact_everywhere(
        &mut self,
        data: &DataDir,
        text: &str,
    ) -> Result<Redacted, CurateError> {
        let mut remaining = Vec::new();
        if let Err(e) = self.ingest_spool_until(data, Some(Instant::now() + SPOOL_WAIT)) {
            remaining.push(format!("the spool could not be read in ({e})"));
        }
        let mut redacted = self.redact(text)?;
        let needles = needles(text);
        for file in files_to_scrub(data) {
            match scrub_file(&file, &needles) {
                Ok(0) => {}
                Ok(n) => {
                    redacted.replaced += n;
                    redacted.files.insert(file.display().to_string(), n);
                }
                Err(e) => remaining.push(format!("{} ({e})", file.display())),
            }
        }
        for spool in spool_files(data).iter().filter(|f| holds(f, &needles)) {
            remaining.push(format!("{} (captures not yet stored)", spool.display()));
        }
        redacted.remaining.extend(remaining);
        Ok(redacted)
    }
}

/// `rejected.jsonl`, every log file, and the kept copies of a damaged
/// database with their side files.
fn files_to_scrub(data: &DataDir) -> Vec<PathBuf> {
    let mut files = vec![data.spool_dir().join(REJECTED_FILE)];
    files.extend(entries(&data.log_dir(), |_| true));
    let db_name = data
        .db_path()
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let kept = format!("{db_name}.corrupt-");
    files.extend(entries(data.root(), |name| name.starts_with(&kept)));
    files
}

/// Regular files in `dir` whose names pass `keep`.
fn entries(dir: &Path, keep: impl Fn(&str) -> bool) -> Vec<PathBuf> {
    let Ok(read) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut out: Vec<PathBuf> = read
        .filter_map(|e| e.ok())
        .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
        .filter(|e| keep(&e.file_name().to_string_lossy()))
        .map(|e| e.path())
        .collect();
    out.sort();
    out
}

fn holds(file: &Path, needles: &[String]) -> bool {
    read(file).is_ok_and(|bytes| {
        needles
            .iter()
            .any(|n| find(&bytes, n.as_bytes(), 0).is_some())
    })
}

fn read(file: &Path) -> std::io::Result<Vec<u8>> {
    use std::io::Read;
    let mut bytes = Vec::new();
    mnemo_core::files::read_capped(file, MAX_SCRUB_BYTES + 1)?.read_to_end(&mut bytes)?;
    if bytes.len() as u64 > MAX_SCRUB_BYTES {
        return Err(std::io::Error::other("too large to rewrite"));
    }
    Ok(bytes)
}

/// Masks every occurrence of each needle in `file`; how many were masked.
/// A missing file has none.
fn scrub_file(file: &Path, needles: &[String]) -> std::io::Result<usize> {
    let mut bytes = match read(file) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(0),
        Err(e) => return Err(e),
    };
    let masked: usize = needles.iter().map(|n| mask(&mut bytes, n.as_bytes())).sum();
    if masked > 0 {
        std::fs::write(file, &bytes)?;
    }
    Ok(masked)
}

/// Overwrites each occurrence of `needle` in `bytes` with [`MASK`].
fn mask(bytes: &mut [u8], needle: &[u8]) -> usize {
    let mut count = 0;
    let mut from = 0;
    while let Some(at) = find(bytes, needle, from) {
        bytes[at..at + needle.len()].fill(MASK);
        from = at + needle.len();
        count += 1;
    }
    count
}

fn find(haystack: &[u8], needle: &[u8], from: usize) -> Option<usize> {
    if needle.is_empty() || from >= haystack.len() {
        return None;
    }
    haystack[from..]
        .windows(needle.len())
        .position(|w| w == needle)
        .map(|p| p + from)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_occurrence_is_masked_at_its_length() {
        let mut b = b"a hunter22 b hunter22".to_vec();
        assert_eq!(mask(&mut b, b"hunter22"), 2);
        assert_eq!(b, b"a ******** b ********");
    }
}
