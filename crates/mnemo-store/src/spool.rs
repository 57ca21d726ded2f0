//! The spool: captures that could not be written to the database.
//!
//! When the database is locked too long, read-only, full or corrupt, a hook
//! appends its (already sanitized) capture as one JSON line to
//! `spool/pending.jsonl` in the data directory, or, when the data directory
//! itself cannot be written, to a private fallback folder (in
//! `$XDG_RUNTIME_DIR`, else in the system temp directory). The next time a store opens cleanly, [`Store::ingest_spool`]
//! applies those lines in the order they were captured, each exactly once
//! (the `applied_captures` table remembers ids across a crash mid-ingest),
//! then truncates the files.
//!
//! Appenders and the ingester serialize on an exclusive lock of the spool
//! file itself. Files are truncated, never deleted, so a writer can never be
//! left appending to an unlinked inode.
//!
//! A writer killed mid-append leaves half a line. The next append starts
//! with a newline when the file does not end with one, and the reader takes
//! the file line by line (bytes, not one UTF-8 string), so the torn record is
//! set aside in `rejected.jsonl` alone and every complete record is applied.
//!
//! Only spool folders and files of the current user that nobody else may
//! write are read or written: the fallback lives at a predictable path in
//! the shared temp directory, and a folder another user planted there must
//! neither feed the hook forged events nor receive the user's captures.

use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use mnemo_core::DataDir;
use mnemo_core::paths::{create_private_dir, foreign_access};

use crate::capture::Applied;
use crate::record::Capture;
use crate::{Result, Store, StoreError};

pub const SPOOL_FILE: &str = "pending.jsonl";
/// Lines that cannot be applied (unparsable, or refused by the schema) are
/// moved here rather than dropped, so that nothing is silently lost.
pub const REJECTED_FILE: &str = "rejected.jsonl";

/// The spool files of a data directory: the primary, then the fallbacks.
pub fn spool_files(data: &DataDir) -> Vec<PathBuf> {
    std::iter::once(data.spool_dir())
        .chain(data.fallback_spool_dirs())
        .map(|dir| dir.join(SPOOL_FILE))
        .collect()
}

#[derive(Debug, thiserror::Error)]
#[error("could not spool the event to {tried}: {last}")]
pub struct SpoolError {
    tried: String,
    last: std::io::Error,
}

/// Appends a capture to the first spool file that accepts it; returns that
/// file. Durable (fsync) before returning: the database already failed us.
pub fn append(data: &DataDir, capture: &Capture) -> std::result::Result<PathBuf, SpoolError> {
    let mut line = serde_json::to_vec(capture).expect("captures always serialize");
    line.push(b'\n');
    let mut last = None;
    let files = spool_files(data);
    for file in &files {
        match append_line(file, &line) {
            Ok(()) => return Ok(file.clone()),
            Err(e) => last = Some(e),
        }
    }
    Err(SpoolError {
        tried: files
            .iter()
            .map(|f| f.display().to_string())
            .collect::<Vec<_>>()
            .join(" and "),
        last: last.unwrap_or_else(|| std::io::Error::other("no spool location")),
    })
}

fn append_line(file: &Path, line: &[u8]) -> std::io::Result<()> {
    if let Some(dir) = file.parent() {
        create_private_dir(dir)?;
    }
    mnemo_core::paths::check_private(file)?;
    let mut f = open_private(
        file,
        OpenOptions::new().read(true).append(true).create(true),
    )?;
    f.lock()?;
    if !ends_with_newline(&mut f)? {
        // A torn record from a killed writer: keep ours on a line of its own.
        f.write_all(b"\n")?;
    }
    f.write_all(line)?;
    f.sync_data()
}

/// True for an empty file or one whose last byte is a newline.
fn ends_with_newline(f: &mut File) -> std::io::Result<bool> {
    if f.metadata()?.len() == 0 {
        return Ok(true);
    }
    f.seek(SeekFrom::End(-1))?;
    let mut last = [0u8; 1];
    f.read_exact(&mut last)?;
    Ok(last[0] == b'\n')
}

/// Why a spool file (or its folder) must not be used: it belongs to, or is
/// writable by, another user. `None` when it is safe or absent.
pub fn refusal(file: &Path) -> Option<String> {
    let dir = file.parent()?;
    foreign_access(dir)
        .map(|p| format!("{}: {p}", dir.display()))
        .or_else(|| foreign_access(file).map(|p| format!("{}: {p}", file.display())))
}

/// The spool files that are refused, each with the reason (for doctor and
/// the hook log).
pub fn refused(data: &DataDir) -> Vec<String> {
    spool_files(data)
        .iter()
        .filter_map(|f| refusal(f))
        .collect()
}

fn open_private(file: &Path, options: &mut OpenOptions) -> std::io::Result<File> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    options.open(file)
}

/// True when any spool file holds something. One `stat` per file: cheap
/// enough for every hook.
pub fn has_pending(data: &DataDir) -> bool {
    spool_files(data)
        .iter()
        .any(|f| std::fs::metadata(f).is_ok_and(|m| m.len() > 0))
}

/// How many captures wait in the spool, and how many bytes they take.
pub fn backlog(data: &DataDir) -> (usize, u64) {
    let mut lines = 0;
    let mut bytes = 0;
    for f in spool_files(data) {
        if refusal(&f).is_some() {
            continue;
        }
        if let Ok(text) = std::fs::read(&f) {
            bytes += text.len() as u64;
            lines += text
                .split(|b| *b == b'\n')
                .filter(|l| !l.is_empty())
                .count();
        }
    }
    (lines, bytes)
}

#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct IngestReport {
    pub applied: usize,
    /// Lines applied by an earlier, interrupted ingest.
    pub duplicates: usize,
    /// Lines moved to `rejected.jsonl` (torn records among them).
    pub rejected: usize,
    /// Spool files left unread because another user owns them or may write
    /// to them, each with the reason.
    pub refused: Vec<String>,
}

struct Locked {
    file: File,
    path: PathBuf,
}

impl Store {
    /// Applies every spooled capture, oldest first, then empties the spool.
    /// Stops at the first transient failure, leaving the spool in place (what
    /// was applied is remembered, so the retry skips it).
    pub fn ingest_spool(&mut self, data: &DataDir) -> Result<IngestReport> {
        let mut report = IngestReport::default();
        let mut locked = Vec::new();
        let mut entries: Vec<(i64, usize, Capture)> = Vec::new();
        let mut bad_lines: Vec<String> = Vec::new();
        for path in spool_files(data) {
            if let Some(reason) = refusal(&path) {
                report.refused.push(reason);
                continue;
            }
            let file = match OpenOptions::new().read(true).write(true).open(&path) {
                Ok(f) => f,
                Err(_) => continue, // absent (or unreadable: doctor reports it)
            };
            if file.lock().is_err() {
                continue;
            }
            let mut raw = Vec::new();
            if (&file).read_to_end(&mut raw).is_err() {
                continue; // unreadable now: left in place for the next try
            }
            for line in raw.split(|b| *b == b'\n') {
                if line.trim_ascii().is_empty() {
                    continue;
                }
                match serde_json::from_slice::<Capture>(line) {
                    Ok(c) => entries.push((c.at_ms, entries.len(), c)),
                    // Torn or garbage: kept for a human, in the rejected file.
                    Err(_) => bad_lines.push(String::from_utf8_lossy(line).into_owned()),
                }
            }
            locked.push(Locked { file, path });
        }
        if locked.is_empty() {
            return Ok(report);
        }
        // Merge the files by capture time; ties keep file order.
        entries.sort_by_key(|(at, seq, _)| (*at, *seq));

        let mut ids = Vec::with_capacity(entries.len());
        for (_, _, capture) in &entries {
            match self.apply_once(capture) {
                Ok(Applied::Duplicate) => report.duplicates += 1,
                Ok(_) => report.applied += 1,
                Err(e) if e.is_transient() => return Err(e),
                Err(e) => {
                    bad_lines.push(format!(
                        "{{\"error\":{},\"capture\":{}}}",
                        serde_json::Value::String(e.to_string()),
                        serde_json::to_string(capture).unwrap_or_default()
                    ));
                    continue;
                }
            }
            ids.push(capture.capture_id.clone());
        }
        if !bad_lines.is_empty() {
            report.rejected = bad_lines.len();
            let rejected = data.spool_dir().join(REJECTED_FILE);
            let mut text = bad_lines.join("\n");
            text.push('\n');
            append_line(&rejected, text.as_bytes()).map_err(|source| StoreError::DataDir {
                path: rejected.clone(),
                source,
            })?;
        }
        for l in &locked {
            l.file
                .set_len(0)
                .and_then(|_| l.file.sync_all())
                .map_err(|source| StoreError::DataDir {
                    path: l.path.clone(),
                    source,
                })?;
        }
        // The files are empty now; the replay guard for their ids can go.
        for chunk in ids.chunks(500) {
            let placeholders = vec!["?"; chunk.len()].join(",");
            self.conn
                .execute(
                    &format!("DELETE FROM applied_captures WHERE capture_id IN ({placeholders})"),
                    rusqlite::params_from_iter(chunk),
                )
                .map_err(|e| self.err(e))?;
        }
        Ok(report)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::{CaptureOp, PromptOrigin, SessionRef, new_capture_id};
    use mnemo_core::model::Platform;
    use std::time::Duration;

    fn prompt(text: &str, at: i64) -> Capture {
        Capture {
            capture_id: new_capture_id(),
            at_ms: at,
            session: SessionRef {
                platform: Platform::ClaudeCode,
                platform_session_id: "s1".into(),
                project_root: Some("/p".into()),
                project_name: Some("p".into()),
                cwd: None,
            },
            op: CaptureOp::Prompt {
                platform_prompt_id: None,
                text: Some(text.into()),
                origin: PromptOrigin::User,
            },
        }
    }

    fn texts(store: &Store) -> Vec<String> {
        let mut stmt = store
            .conn()
            .prepare("SELECT text FROM prompts ORDER BY prompt_number")
            .unwrap();
        stmt.query_map([], |r| r.get(0))
            .unwrap()
            .collect::<rusqlite::Result<_>>()
            .unwrap()
    }

    #[test]
    fn spooled_captures_come_back_once_and_in_order() {
        let tmp = tempfile::tempdir().unwrap();
        let data = DataDir::at(tmp.path());
        for (i, t) in ["one", "two", "three"].iter().enumerate() {
            append(&data, &prompt(t, i as i64)).unwrap();
        }
        assert!(has_pending(&data));
        assert_eq!(backlog(&data).0, 3);
        let mut store = Store::open(&data.db_path(), Duration::from_secs(1)).unwrap();
        let report = store.ingest_spool(&data).unwrap();
        assert_eq!(report.applied, 3);
        assert!(!has_pending(&data));
        assert_eq!(texts(&store), ["one", "two", "three"]);
        // Nothing left to apply a second time.
        assert_eq!(store.ingest_spool(&data).unwrap(), IngestReport::default());
        assert_eq!(texts(&store).len(), 3);
    }

    #[test]
    fn an_interrupted_ingest_does_not_duplicate() {
        let tmp = tempfile::tempdir().unwrap();
        let data = DataDir::at(tmp.path());
        let first = prompt("one", 1);
        append(&data, &first).unwrap();
        append(&data, &prompt("two", 2)).unwrap();
        let mut store = Store::open(&data.db_path(), Duration::from_secs(1)).unwrap();
        // As if a previous ingest applied the first line and then died.
        store.apply_once(&first).unwrap();
        let report = store.ingest_spool(&data).unwrap();
        assert_eq!((report.applied, report.duplicates), (1, 1));
        assert_eq!(texts(&store), ["one", "two"]);
    }

    #[test]
    fn garbage_lines_are_kept_aside_not_dropped() {
        let tmp = tempfile::tempdir().unwrap();
        let data = DataDir::at(tmp.path());
        append(&data, &prompt("good", 1)).unwrap();
        let spool = &spool_files(&data)[0];
        let mut f = OpenOptions::new().append(true).open(spool).unwrap();
        f.write_all(b"{not json\n").unwrap();
        let mut store = Store::open(&data.db_path(), Duration::from_secs(1)).unwrap();
        let report = store.ingest_spool(&data).unwrap();
        assert_eq!((report.applied, report.rejected), (1, 1));
        let rejected = std::fs::read_to_string(data.spool_dir().join(REJECTED_FILE)).unwrap();
        assert!(rejected.contains("{not json"));
    }

    #[test]
    fn a_torn_record_costs_only_itself() {
        let tmp = tempfile::tempdir().unwrap();
        let data = DataDir::at(tmp.path());
        append(&data, &prompt("before", 1)).unwrap();
        let spool = &spool_files(&data)[0];
        // A writer killed mid-append: half a record, cut inside a UTF-8 character.
        let whole = serde_json::to_vec(&prompt("torn é", 2)).unwrap();
        let cut = whole.iter().position(|b| *b == 0xc3).unwrap() + 1;
        let mut f = OpenOptions::new().append(true).open(spool).unwrap();
        f.write_all(&whole[..cut]).unwrap();
        append(&data, &prompt("after", 3)).unwrap();
        let mut store = Store::open(&data.db_path(), Duration::from_secs(1)).unwrap();
        let report = store.ingest_spool(&data).unwrap();
        assert_eq!((report.applied, report.rejected), (2, 1));
        assert_eq!(texts(&store), ["before", "after"]);
    }

    /// Places a writer can die in its record (every third byte, both ends,
    /// inside a multi-byte character): the records before and after all
    /// land, the torn one alone is set aside (or, cut just before its
    /// newline, recovered whole).
    #[test]
    fn a_crash_anywhere_in_a_record_costs_at_most_that_record() {
        let tmp = tempfile::tempdir().unwrap();
        let data = DataDir::at(tmp.path());
        let mut store = Store::open(&data.db_path(), Duration::from_secs(1)).unwrap();
        let sample = serde_json::to_vec(&prompt("torn ✓", 2)).unwrap();
        let len = sample.len();
        let check = sample.iter().position(|b| *b == 0xe2).unwrap() + 1; // inside the ✓
        let mut cuts: Vec<usize> = (0..=len).step_by(3).collect();
        cuts.extend([1, check, len - 1, len]);
        for cut in cuts {
            let torn = serde_json::to_vec(&prompt("torn ✓", 2)).unwrap();
            append(&data, &prompt(&format!("before {cut}"), 1)).unwrap();
            let mut f = OpenOptions::new()
                .append(true)
                .open(&spool_files(&data)[0])
                .unwrap();
            f.write_all(&torn[..cut]).unwrap();
            append(&data, &prompt(&format!("after {cut}"), 3)).unwrap();
            let report = store.ingest_spool(&data).unwrap();
            let whole = cut == len;
            let texts = texts(&store);
            let new = &texts[texts.len() - 2 - usize::from(whole)..];
            let before = format!("before {cut}");
            let after = format!("after {cut}");
            let expected: Vec<&str> = if whole {
                vec![&before, "torn ✓", &after]
            } else {
                vec![&before, &after]
            };
            assert_eq!(new, expected, "cut at {cut}");
            let rejected = usize::from(cut > 0 && !whole);
            assert_eq!(report.rejected, rejected, "cut at {cut}");
            assert!(!has_pending(&data));
        }
    }

    #[cfg(unix)]
    #[test]
    fn a_spool_others_may_write_is_neither_read_nor_written() {
        use std::os::unix::fs::PermissionsExt;
        let tmp = tempfile::tempdir().unwrap();
        let data = DataDir::at(tmp.path());
        append(&data, &prompt("planted", 1)).unwrap();
        let spool = spool_files(&data)[0].clone();
        std::fs::set_permissions(&spool, std::fs::Permissions::from_mode(0o666)).unwrap();
        let mut store = Store::open(&data.db_path(), Duration::from_secs(1)).unwrap();
        let report = store.ingest_spool(&data).unwrap();
        assert_eq!(report.applied, 0);
        assert!(report.refused[0].contains("mode 0666"), "{report:?}");
        assert!(texts(&store).is_empty());
        assert_eq!(refused(&data).len(), 1);
    }
}
