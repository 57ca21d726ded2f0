//! Redaction and forgetting beyond the database: the other files mnemo owns
//! that may hold a copy of what the user took out. Spooled captures are
//! ingested first (so that the database operation reaches them); then the
//! records the spool set aside (`rejected.jsonl`), the logs and the copies
//! `doctor --fix` keeps of a damaged database (`mnemo.db.corrupt-*` and its
//! `-wal`) are rewritten with every occurrence masked, and the export files
//! mnemo wrote ([`crate::export_ledger`]) are masked (a redaction) or lose
//! the lines of the forgotten records (a forget). A mask has the length of
//! what it hides, so a kept database copy keeps its page layout. What
//! cannot be reached is named in `remaining`, never passed over in silence.

use std::cell::OnceCell;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use aho_corasick::{AhoCorasick, MatchKind};
use mnemo_core::DataDir;
use serde::Serialize;
use serde_json::Value;

use crate::Store;
use crate::curate::{
    CurateError, Forget, GONE_TEXT_MAX_BYTES, Gone, Redacted, Removed, forget_in_copy, needles,
};
use crate::export_ledger::{self, ExportWritten};
use crate::spool::{REJECTED_FILE, spool_files};

/// Largest file rewritten; a larger one is reported as remaining.
const MAX_SCRUB_BYTES: u64 = 1 << 30;
/// How long a redaction or a forget waits for the spool's lock.
const SPOOL_WAIT: Duration = Duration::from_secs(5);
/// The byte a masked occurrence is overwritten with.
const MASK: u8 = b'*';

/// What a forget removed, from the database and from the files beside it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Forgotten {
    pub removed: Removed,
    /// Files outside the database rewritten: occurrences masked, or export
    /// lines dropped.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub files: BTreeMap<String, usize>,
    /// Where copies may remain, and why (nothing when all were reached).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub remaining: Vec<String>,
}

impl Store {
    /// [`Store::redact`], after ingesting the spool, then in every other
    /// file of `data` that may hold the text (see the module comment).
    pub fn redact_everywhere(
        &mut self,
        data: &DataDir,
        text: &str,
    ) -> Result<Redacted, CurateError> {
        let mut reach = Reach {
            remaining: self.ingest_spool_first(data),
            ..Reach::default()
        };
        let mut redacted = self.redact(text)?;
        let masker = Masker::new(needles(text));
        let exports = export_ledger::written(data);
        let present = exports.iter().filter(|e| e.path.exists());
        for file in files_to_scrub(data)
            .into_iter()
            .chain(present.map(|e| e.path.clone()))
        {
            reach.note(&file, masker.scrub_file(&file));
        }
        reach.remaining.extend(exports_gone(&exports));
        reach.remaining.extend(masker.spooled(data));
        redacted.replaced += reach.files.values().sum::<usize>();
        redacted.files = reach.files;
        redacted.remaining = reach.remaining;
        Ok(redacted)
    }

    /// [`Store::forget`], after ingesting the spool, then in every other
    /// file of `data` (see the module comment). A dry run touches no file.
    pub fn forget_everywhere(
        &mut self,
        data: &DataDir,
        what: &Forget,
        dry_run: bool,
    ) -> Result<Forgotten, CurateError> {
        if dry_run {
            let (removed, _) = self.forget_collecting(what, true)?;
            return Ok(Forgotten {
                removed,
                ..Forgotten::default()
            });
        }
        let mut reach = Reach {
            remaining: self.ingest_spool_first(data),
            ..Reach::default()
        };
        let (removed, gone) = self.forget_collecting(what, false)?;
        let masker = Masker::new(gone.texts.iter().flat_map(|t| needles(t)).collect());
        if gone.partial {
            reach.remaining.push(format!(
                "rejected.jsonl and the logs (searched for the first {} MiB of what was forgotten only)",
                GONE_TEXT_MAX_BYTES >> 20
            ));
        }
        for copy in repair_copies(data) {
            // The masking below still runs on a copy SQLite cannot change.
            if let Err(e) = forget_in_copy(&copy, &gone) {
                reach.remaining.push(format!(
                    "{} (the records could not be deleted there: {e}; what they held was masked where found whole)",
                    copy.display()
                ));
            }
        }
        for file in files_to_scrub(data) {
            reach.note(&file, masker.scrub_file(&file));
        }
        let exports = export_ledger::written(data);
        for export in exports.iter().filter(|e| e.path.exists()) {
            reach.note(&export.path, drop_forgotten_lines(&export.path, &gone));
        }
        reach.remaining.extend(exports_gone(&exports));
        reach.remaining.extend(masker.spooled(data));
        Ok(Forgotten {
            removed,
            files: reach.files,
            remaining: reach.remaining,
        })
    }

    /// Ingests what waits in the spool, so that the operation to come
    /// reaches it; what could not be read in, as a remaining copy.
    fn ingest_spool_first(&mut self, data: &DataDir) -> Vec<String> {
        match self.ingest_spool_until(data, Some(Instant::now() + SPOOL_WAIT)) {
            Ok(_) => Vec::new(),
            Err(e) => vec![format!("the spool could not be read in ({e})")],
        }
    }
}

/// The files outside the database an operation changed (with how many
/// places in each), and the copies it could not reach (with why).
#[derive(Debug, Default)]
struct Reach {
    files: BTreeMap<String, usize>,
    remaining: Vec<String>,
}

impl Reach {
    fn note(&mut self, file: &Path, outcome: std::io::Result<usize>) {
        match outcome {
            Ok(0) => {}
            Ok(n) => {
                self.files.insert(file.display().to_string(), n);
            }
            Err(e) => self.remaining.push(format!("{} ({e})", file.display())),
        }
    }
}

/// `rejected.jsonl`, every log file, and the kept copies of a damaged
/// database with their side files.
fn files_to_scrub(data: &DataDir) -> Vec<PathBuf> {
    let mut files = vec![data.spool_dir().join(REJECTED_FILE)];
    files.extend(entries(&data.log_dir(), |_| true));
    let kept = repair_copy_prefix(data);
    files.extend(entries(data.root(), |name| name.starts_with(&kept)));
    files
}

/// How the names of the database copies `doctor --fix` kept begin.
fn repair_copy_prefix(data: &DataDir) -> String {
    let db_name = data
        .db_path()
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    format!("{db_name}.corrupt-")
}

/// The database copies `doctor --fix` kept (without their side files).
fn repair_copies(data: &DataDir) -> Vec<PathBuf> {
    let kept = repair_copy_prefix(data);
    entries(data.root(), |name| {
        name.starts_with(&kept) && !name.ends_with("-wal") && !name.ends_with("-shm")
    })
}

/// The exports mnemo wrote that are no longer where it wrote them.
fn exports_gone(exports: &[ExportWritten]) -> Vec<String> {
    exports
        .iter()
        .filter(|e| !e.path.exists())
        .map(|e| {
            format!(
                "{} (an export written {}; no longer there: a copy moved elsewhere still holds what it held)",
                e.path.display(),
                e.written_at
            )
        })
        .collect()
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

fn read(file: &Path) -> std::io::Result<Vec<u8>> {
    use std::io::Read;
    let mut bytes = Vec::new();
    mnemo_core::files::read_capped(file, MAX_SCRUB_BYTES + 1)?.read_to_end(&mut bytes)?;
    if bytes.len() as u64 > MAX_SCRUB_BYTES {
        return Err(std::io::Error::other("too large to rewrite"));
    }
    Ok(bytes)
}

/// Rewrites an export file without the lines of forgotten records (by uid,
/// session or project root); how many lines were dropped. A line that is not
/// a record is kept as it is.
fn drop_forgotten_lines(file: &Path, gone: &Gone) -> std::io::Result<usize> {
    let bytes = read(file)?;
    let mut kept = Vec::with_capacity(bytes.len());
    let mut dropped = 0;
    for line in bytes.split_inclusive(|&b| b == b'\n') {
        match serde_json::from_slice::<Value>(line) {
            Ok(record) if names_forgotten(&record, gone) => dropped += 1,
            _ => kept.extend_from_slice(line),
        }
    }
    if dropped > 0 {
        std::fs::write(file, &kept)?;
    }
    Ok(dropped)
}

/// Whether an exported record is one the forget deleted.
fn names_forgotten(record: &Value, gone: &Gone) -> bool {
    let text = |k: &str| record.get(k).and_then(Value::as_str).unwrap_or_default();
    if gone.uids.contains(text("uid")) {
        return true;
    }
    match text("kind") {
        "session" => gone
            .sessions
            .contains(&(text("platform").to_owned(), text("session_id").to_owned())),
        "project" => gone.roots.contains(text("root")),
        _ => false,
    }
}

/// Finds and masks many texts in one pass over a file. The automaton is
/// built when a file to search exists (most data directories have none).
struct Masker {
    needles: Vec<String>,
    automaton: OnceCell<Result<Option<AhoCorasick>, String>>,
}

impl Masker {
    fn new(needles: Vec<String>) -> Masker {
        Masker {
            needles: needles.into_iter().filter(|n| !n.is_empty()).collect(),
            automaton: OnceCell::new(),
        }
    }

    /// The automaton of the needles (None: nothing to look for).
    fn automaton(&self) -> std::io::Result<Option<&AhoCorasick>> {
        let built = self.automaton.get_or_init(|| {
            if self.needles.is_empty() {
                return Ok(None);
            }
            AhoCorasick::builder()
                .match_kind(MatchKind::LeftmostLongest)
                .build(&self.needles)
                .map(Some)
                .map_err(|e| format!("cannot search for the texts: {e}"))
        });
        built
            .as_ref()
            .map(Option::as_ref)
            .map_err(|e| std::io::Error::other(e.clone()))
    }

    /// Overwrites each occurrence in `bytes` with [`MASK`]; how many.
    fn mask(&self, bytes: &mut [u8]) -> std::io::Result<usize> {
        let Some(ac) = self.automaton()? else {
            return Ok(0);
        };
        let found: Vec<_> = ac.find_iter(&*bytes).map(|m| m.range()).collect();
        for range in &found {
            bytes[range.clone()].fill(MASK);
        }
        Ok(found.len())
    }

    /// Whether `file` holds a text (an unreadable file is said to).
    fn holds(&self, file: &Path) -> bool {
        match read(file) {
            Ok(bytes) if bytes.is_empty() => false,
            Ok(bytes) => self
                .automaton()
                .map_or(true, |ac| ac.is_some_and(|ac| ac.is_match(&bytes))),
            Err(e) => e.kind() != std::io::ErrorKind::NotFound && !self.needles.is_empty(),
        }
    }

    /// Masks every occurrence in `file`; how many were masked. A missing
    /// file has none.
    fn scrub_file(&self, file: &Path) -> std::io::Result<usize> {
        if self.needles.is_empty() {
            return Ok(0);
        }
        let mut bytes = match read(file) {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(0),
            Err(e) => return Err(e),
        };
        if bytes.is_empty() {
            return Ok(0);
        }
        let masked = self.mask(&mut bytes)?;
        if masked > 0 {
            std::fs::write(file, &bytes)?;
        }
        Ok(masked)
    }

    /// Spool files that may still hold a text (captures not yet stored).
    fn spooled(&self, data: &DataDir) -> Vec<String> {
        spool_files(data)
            .iter()
            .filter(|f| self.holds(f))
            .map(|f| format!("{} (captures not yet stored)", f.display()))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_occurrence_is_masked_at_its_length() {
        let mut b = b"a hunter22 b hunter22".to_vec();
        assert_eq!(
            Masker::new(vec!["hunter22".into()]).mask(&mut b).unwrap(),
            2
        );
        assert_eq!(b, b"a ******** b ********");
    }

    #[test]
    fn the_longest_of_overlapping_texts_is_masked() {
        let mut b = b"x hunter22-long y hunter22".to_vec();
        let masker = Masker::new(vec!["hunter22".into(), "hunter22-long".into()]);
        assert_eq!(masker.mask(&mut b).unwrap(), 2);
        assert_eq!(b, b"x ************* y ********");
    }
}
