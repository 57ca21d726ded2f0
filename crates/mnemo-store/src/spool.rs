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
//! Nobody waits on that lock without a bound: a hook has a deadline, and an
//! ingester may hold the lock while it waits for a busy database. An
//! appender that cannot take the lock in time writes its line to a side
//! file of its own instead (`pending-<pid>-<nanos>.jsonl`, written under a
//! temporary name and renamed complete, so it is never seen half-written);
//! the ingester takes side files with the main file, merges them by capture
//! time and deletes each once applied (under its lock, so that two
//! ingesters never both apply one).
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
use std::time::{Duration, Instant};

use mnemo_core::DataDir;
use mnemo_core::paths::{create_private_dir, foreign_access};

use crate::capture::Applied;
use crate::record::Capture;
use crate::{Result, Store, StoreError};

pub const SPOOL_FILE: &str = "pending.jsonl";
/// Lines that cannot be applied (unparsable, or refused by the schema) are
/// moved here rather than dropped, so that nothing is silently lost.
pub const REJECTED_FILE: &str = "rejected.jsonl";
/// Side files: `pending-<pid>-<nanos>.jsonl`, next to [`SPOOL_FILE`].
const SIDE_PREFIX: &str = "pending-";
const SIDE_SUFFIX: &str = ".jsonl";
/// Pause between two attempts at a busy spool lock.
const LOCK_RETRY: Duration = Duration::from_millis(2);

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
/// Waits for the spool's lock until `deadline` at most (None: as long as it
/// takes), then writes a side file instead.
pub fn append(
    data: &DataDir,
    capture: &Capture,
    deadline: Option<Instant>,
) -> std::result::Result<PathBuf, SpoolError> {
    let mut line = serde_json::to_vec(capture).expect("captures always serialize");
    line.push(b'\n');
    let mut last = None;
    let files = spool_files(data);
    for file in &files {
        match append_line(file, &line, deadline) {
            Ok(Some(())) => return Ok(file.clone()),
            Ok(None) => match write_side_file(file, &line) {
                Ok(side) => return Ok(side),
                Err(e) => last = Some(e),
            },
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

/// Appends `line` under the file's lock; `Ok(None)` when the lock could not
/// be had by `deadline`.
fn append_line(file: &Path, line: &[u8], deadline: Option<Instant>) -> std::io::Result<Option<()>> {
    if let Some(dir) = file.parent() {
        create_private_dir(dir)?;
    }
    mnemo_core::paths::check_private(file)?;
    let mut f = open_private(
        file,
        OpenOptions::new().read(true).append(true).create(true),
    )?;
    if !lock_until(&f, deadline)? {
        return Ok(None);
    }
    if !ends_with_newline(&mut f)? {
        // A torn record from a killed writer: keep ours on a line of its own.
        f.write_all(b"\n")?;
    }
    f.write_all(line)?;
    f.sync_data()?;
    Ok(Some(()))
}

/// Takes the file's exclusive lock, retrying until `deadline` (None: waits
/// as long as it takes). False when the deadline passed first.
fn lock_until(f: &File, deadline: Option<Instant>) -> std::io::Result<bool> {
    let Some(deadline) = deadline else {
        f.lock()?;
        return Ok(true);
    };
    loop {
        match f.try_lock() {
            Ok(()) => return Ok(true),
            Err(std::fs::TryLockError::WouldBlock) => {}
            Err(std::fs::TryLockError::Error(e)) => return Err(e),
        }
        if Instant::now() >= deadline {
            return Ok(false);
        }
        std::thread::sleep(LOCK_RETRY);
    }
}

/// Writes `line` to a new side file next to `main`, complete and durable
/// before it takes its final name; returns that name.
fn write_side_file(main: &Path, line: &[u8]) -> std::io::Result<PathBuf> {
    let dir = main.parent().unwrap_or(Path::new("."));
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let stem = format!("{SIDE_PREFIX}{}-{nanos}", std::process::id());
    let tmp = dir.join(format!(".{stem}.tmp"));
    let side = dir.join(format!("{stem}{SIDE_SUFFIX}"));
    let mut f = open_private(&tmp, OpenOptions::new().write(true).create_new(true))?;
    f.write_all(line)?;
    f.sync_data()?;
    std::fs::rename(&tmp, &side)?;
    Ok(side)
}

/// The side files waiting next to `main`, oldest name first.
fn side_files(main: &Path) -> Vec<PathBuf> {
    let Some(dir) = main.parent() else {
        return Vec::new();
    };
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut files: Vec<PathBuf> = entries
        .filter_map(|e| e.ok())
        .filter(|e| {
            e.file_name()
                .to_str()
                .is_some_and(|n| n.starts_with(SIDE_PREFIX) && n.ends_with(SIDE_SUFFIX))
        })
        .map(|e| e.path())
        .collect();
    files.sort();
    files
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

/// True when any spool file holds something. One `stat` and one directory
/// listing per spool folder: cheap enough for every hook.
pub fn has_pending(data: &DataDir) -> bool {
    spool_files(data)
        .iter()
        .any(|f| std::fs::metadata(f).is_ok_and(|m| m.len() > 0) || !side_files(f).is_empty())
}

/// How many captures wait in the spool, and how many bytes they take.
pub fn backlog(data: &DataDir) -> (usize, u64) {
    let mut lines = 0;
    let mut bytes = 0;
    for main in spool_files(data) {
        if refusal(&main).is_some() {
            continue;
        }
        for f in std::iter::once(main.clone()).chain(side_files(&main)) {
            let Ok(text) = std::fs::read(&f) else {
                continue;
            };
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

/// A spool file held under its lock while its lines are applied.
struct Locked {
    file: File,
    path: PathBuf,
    /// A side file, deleted once applied (the main file is truncated).
    side: bool,
}

/// What an ingest read: captures in file order, and lines that are not.
#[derive(Default)]
struct Backlog {
    entries: Vec<(i64, usize, Capture)>,
    bad_lines: Vec<String>,
}

impl Backlog {
    fn take(&mut self, file: &File) -> bool {
        let mut raw = Vec::new();
        if (&*file).read_to_end(&mut raw).is_err() {
            return false; // unreadable now: left in place for the next try
        }
        for line in raw.split(|b| *b == b'\n') {
            if line.trim_ascii().is_empty() {
                continue;
            }
            match serde_json::from_slice::<Capture>(line) {
                Ok(c) => self.entries.push((c.at_ms, self.entries.len(), c)),
                // Torn or garbage: kept for a human, in the rejected file.
                Err(_) => self
                    .bad_lines
                    .push(String::from_utf8_lossy(line).into_owned()),
            }
        }
        true
    }
}

/// The error of an ingest that ran out of time: transient, so the caller
/// spools its own capture and the backlog waits for the next hook.
fn out_of_time(path: &Path, what: &str) -> StoreError {
    StoreError::DataDir {
        path: path.to_owned(),
        source: std::io::Error::new(std::io::ErrorKind::TimedOut, what.to_owned()),
    }
}

/// True when the file was deleted since it was opened (another ingester
/// applied it first).
fn unlinked(file: &File) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        file.metadata().is_ok_and(|m| m.nlink() == 0)
    }
    #[cfg(not(unix))]
    {
        let _ = file;
        false
    }
}

impl Store {
    /// Applies every spooled capture, oldest first, then empties the spool.
    /// Stops at the first transient failure, leaving the spool in place (what
    /// was applied is remembered, so the retry skips it).
    pub fn ingest_spool(&mut self, data: &DataDir) -> Result<IngestReport> {
        self.ingest_spool_until(data, None)
    }

    /// [`Store::ingest_spool`] within a deadline (None: no bound): waits
    /// for the spool's lock and for the database no later than `deadline`,
    /// and fails transiently past it, with the backlog left in place.
    pub fn ingest_spool_until(
        &mut self,
        data: &DataDir,
        deadline: Option<Instant>,
    ) -> Result<IngestReport> {
        let mut report = IngestReport::default();
        let (locked, read) = lock_backlog(data, deadline, &mut report)?;
        if locked.is_empty() {
            return Ok(report);
        }
        let Backlog {
            mut entries,
            mut bad_lines,
        } = read;
        // Merge the files by capture time; ties keep file order.
        entries.sort_by_key(|(at, seq, _)| (*at, *seq));
        let applied = self.apply_backlog(&entries, deadline, &locked[0].path, &mut report)?;
        bad_lines.extend(applied.rejected);
        report.rejected = bad_lines.len();
        set_aside(data, &bad_lines)?;
        for l in &locked {
            empty_spool_file(l)?;
        }
        // The files are empty now; the replay guard for their ids can go.
        self.forget_replay_guard(&applied.ids)?;
        Ok(report)
    }

    /// Applies the backlog in order, each capture once; a capture that can
    /// never apply becomes a rejected line, a transient failure (or the
    /// deadline) stops the ingest with the spool left in place.
    fn apply_backlog(
        &mut self,
        entries: &[(i64, usize, Capture)],
        deadline: Option<Instant>,
        first_file: &Path,
        report: &mut IngestReport,
    ) -> Result<AppliedBacklog> {
        let mut done = AppliedBacklog::default();
        for (_, _, capture) in entries {
            if let Some(deadline) = deadline {
                let left = deadline.saturating_duration_since(Instant::now());
                if left.is_zero() {
                    return Err(out_of_time(
                        first_file,
                        "the hook's deadline came before the spool backlog was stored; it waits for the next hook",
                    ));
                }
                self.set_busy_timeout(left)?;
            }
            match self.apply_once(capture) {
                Ok(Applied::Duplicate) => report.duplicates += 1,
                Ok(_) => report.applied += 1,
                Err(e) if e.is_transient() => return Err(e),
                Err(e) => {
                    done.rejected.push(format!(
                        "{{\"error\":{},\"capture\":{}}}",
                        serde_json::Value::String(e.to_string()),
                        serde_json::to_string(capture).unwrap_or_default()
                    ));
                    continue;
                }
            }
            done.ids.push(capture.capture_id.clone());
        }
        Ok(done)
    }

    /// Drops the replay guard of captures whose spool lines are gone.
    fn forget_replay_guard(&self, ids: &[String]) -> Result<()> {
        for chunk in ids.chunks(500) {
            let placeholders = vec!["?"; chunk.len()].join(",");
            self.conn
                .execute(
                    &format!("DELETE FROM applied_captures WHERE capture_id IN ({placeholders})"),
                    rusqlite::params_from_iter(chunk),
                )
                .map_err(|e| self.err(e))?;
        }
        Ok(())
    }
}

/// What applying a backlog did: the ids applied (now or before) and the
/// captures that can never apply, as rejected lines.
#[derive(Default)]
struct AppliedBacklog {
    ids: Vec<String>,
    rejected: Vec<String>,
}

/// Locks every spool file (the main file waits until `deadline`; a side file
/// held by another ingester is skipped) and reads what they hold. Files of
/// another user, or writable by others, are refused with the reason.
fn lock_backlog(
    data: &DataDir,
    deadline: Option<Instant>,
    report: &mut IngestReport,
) -> Result<(Vec<Locked>, Backlog)> {
    let mut locked = Vec::new();
    let mut read = Backlog::default();
    for main in spool_files(data) {
        if let Some(reason) = refusal(&main) {
            report.refused.push(reason);
            continue;
        }
        // Absent (or unreadable: doctor reports it).
        if let Ok(file) = OpenOptions::new().read(true).write(true).open(&main) {
            match lock_until(&file, deadline) {
                Ok(true) if read.take(&file) => locked.push(Locked {
                    file,
                    path: main.clone(),
                    side: false,
                }),
                Ok(true) | Err(_) => {}
                Ok(false) => {
                    return Err(out_of_time(
                        &main,
                        "another process is ingesting the spool; the backlog waits for the next hook",
                    ));
                }
            }
        }
        for side in side_files(&main) {
            if let Some(problem) = foreign_access(&side) {
                report
                    .refused
                    .push(format!("{}: {problem}", side.display()));
                continue;
            }
            let Ok(file) = OpenOptions::new().read(true).write(true).open(&side) else {
                continue;
            };
            // Held by another ingester, or already applied and deleted.
            if file.try_lock().is_err() || unlinked(&file) || !read.take(&file) {
                continue;
            }
            locked.push(Locked {
                file,
                path: side,
                side: true,
            });
        }
    }
    Ok((locked, read))
}

/// Appends the lines that can never apply to `rejected.jsonl`.
fn set_aside(data: &DataDir, bad_lines: &[String]) -> Result<()> {
    if bad_lines.is_empty() {
        return Ok(());
    }
    let rejected = data.spool_dir().join(REJECTED_FILE);
    let mut text = bad_lines.join("\n");
    text.push('\n');
    append_line(&rejected, text.as_bytes(), None)
        .map(|_| ())
        .map_err(|source| StoreError::DataDir {
            path: rejected.clone(),
            source,
        })
}

/// Empties an applied spool file: a side file is deleted, the main file
/// truncated (and synced) so that writers holding it open keep appending.
fn empty_spool_file(l: &Locked) -> Result<()> {
    let emptied = if l.side {
        std::fs::remove_file(&l.path)
    } else {
        l.file.set_len(0).and_then(|_| l.file.sync_all())
    };
    emptied.map_err(|source| StoreError::DataDir {
        path: l.path.clone(),
        source,
    })
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
            append(&data, &prompt(t, i as i64), None).unwrap();
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
        append(&data, &first, None).unwrap();
        append(&data, &prompt("two", 2), None).unwrap();
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
        append(&data, &prompt("good", 1), None).unwrap();
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
        append(&data, &prompt("before", 1), None).unwrap();
        let spool = &spool_files(&data)[0];
        // A writer killed mid-append: half a record, cut inside a UTF-8 character.
        let whole = serde_json::to_vec(&prompt("torn é", 2)).unwrap();
        let cut = whole.iter().position(|b| *b == 0xc3).unwrap() + 1;
        let mut f = OpenOptions::new().append(true).open(spool).unwrap();
        f.write_all(&whole[..cut]).unwrap();
        append(&data, &prompt("after", 3), None).unwrap();
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
            append(&data, &prompt(&format!("before {cut}"), 1), None).unwrap();
            let mut f = OpenOptions::new()
                .append(true)
                .open(&spool_files(&data)[0])
                .unwrap();
            f.write_all(&torn[..cut]).unwrap();
            append(&data, &prompt(&format!("after {cut}"), 3), None).unwrap();
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

    /// An ingester holds the spool's lock (as while it waits for a busy
    /// database): an append gives up on the lock at its deadline and writes
    /// a side file; the next ingest takes both, in capture order, once.
    #[test]
    fn a_held_spool_lock_sends_appends_to_a_side_file() {
        let tmp = tempfile::tempdir().unwrap();
        let data = DataDir::at(tmp.path());
        append(&data, &prompt("one", 1), None).unwrap();
        let holder = File::open(&spool_files(&data)[0]).unwrap();
        holder.lock().unwrap();
        let soon = Some(Instant::now() + Duration::from_millis(50));
        let side = append(&data, &prompt("two", 2), soon).unwrap();
        assert_ne!(side, spool_files(&data)[0]);
        append(&data, &prompt("three", 3), soon).unwrap();
        assert_eq!(backlog(&data).0, 3);
        let mut store = Store::open(&data.db_path(), Duration::from_secs(1)).unwrap();
        let err = store.ingest_spool_until(&data, soon).unwrap_err();
        assert!(err.is_transient(), "{err}");
        drop(holder);
        let report = store.ingest_spool(&data).unwrap();
        assert_eq!(report.applied, 3);
        assert_eq!(texts(&store), ["one", "two", "three"]);
        assert!(!has_pending(&data));
        assert!(!side.exists());
        assert_eq!(store.ingest_spool(&data).unwrap(), IngestReport::default());
    }

    #[cfg(unix)]
    #[test]
    fn a_spool_others_may_write_is_neither_read_nor_written() {
        use std::os::unix::fs::PermissionsExt;
        let tmp = tempfile::tempdir().unwrap();
        let data = DataDir::at(tmp.path());
        append(&data, &prompt("planted", 1), None).unwrap();
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
