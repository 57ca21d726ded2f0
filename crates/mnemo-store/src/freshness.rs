//! Whether the files a record is about still hold what they held when the
//! record was written: `current`, `changed` or `deleted`.
//!
//! When an observation is stored, each file it names gets a [`Baseline`]
//! (in `file_baselines`): its content id (git's blob hashing, `blob
//! <len>\0` + bytes, with SHA-256 as in git's SHA-256 object format), size
//! and modification time. A file already modified after the record's time
//! gets a baseline that can never match: the record is stale from the start.
//!
//! Reading compares: `stat` first (same size and mtime: current), and only
//! when they differ, the content is hashed ([`Check::Hash`]; a file touched
//! but not changed is still current). Hashes are cached per process by
//! (path, size, mtime), so a long-running worker hashes a file once per
//! change. The hook path uses [`Check::StatOnly`]: any difference of size or
//! mtime counts as changed, and nothing is read.

use std::collections::HashMap;
use std::fs::Metadata;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};
use std::time::UNIX_EPOCH;

use rusqlite::{Connection, params};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// Files larger than this are compared by size and mtime only.
pub const MAX_HASHED_BYTES: u64 = 8 * 1024 * 1024;
/// Most entries of the per-process hash cache (cleared when full).
const CACHE_ENTRIES: usize = 4096;
/// Clock and file-system slack between a tool's write and the record's time.
const SLACK_MS: i64 = 2_000;

/// What became of a record's files since it was written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Freshness {
    Current,
    Changed,
    Deleted,
}

impl Freshness {
    pub fn as_str(self) -> &'static str {
        match self {
            Freshness::Current => "current",
            Freshness::Changed => "changed",
            Freshness::Deleted => "deleted",
        }
    }

    /// What a text line carries: nothing for current, ` [changed]`, ` [deleted]`.
    pub fn marker(freshness: Option<Freshness>) -> &'static str {
        match freshness {
            Some(Freshness::Changed) => " [changed]",
            Some(Freshness::Deleted) => " [deleted]",
            _ => "",
        }
    }

    /// A multiplier for a ranking score: stale memories rank lower, those
    /// about deleted files lowest; unknown (no baseline) counts as current.
    pub fn rank_factor(freshness: Option<Freshness>) -> f64 {
        match freshness {
            Some(Freshness::Changed) => 0.75,
            Some(Freshness::Deleted) => 0.5,
            _ => 1.0,
        }
    }
}

/// How far a check may go.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Check {
    /// `stat` only: for hooks, where reading files would cost too much.
    StatOnly,
    /// `stat`, then hash the content when size or mtime differ.
    Hash,
}

/// A file as it was when a record was written.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Baseline {
    /// Empty when the file was too large to hash, or had already changed.
    pub content_id: String,
    /// -1 when the file had already changed after the record's time.
    pub size: i64,
    pub mtime_ms: i64,
}

/// The content id of `bytes`: git's blob hashing (SHA-256 object format).
pub fn content_id(bytes: &[u8]) -> String {
    let mut h = Sha256::new();
    h.update(format!("blob {}\0", bytes.len()).as_bytes());
    h.update(bytes);
    h.finalize()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect::<String>()
}

fn mtime_ms(meta: &Metadata) -> i64 {
    meta.modified()
        .ok()
        .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

/// Content ids by path, with the size and mtime they were computed for.
type HashCache = Mutex<HashMap<PathBuf, (i64, i64, String)>>;

fn cache() -> &'static HashCache {
    static CACHE: OnceLock<HashCache> = OnceLock::new();
    CACHE.get_or_init(Mutex::default)
}

/// The content id of the file as it is now (size and mtime given), from the
/// cache when the file has not moved since; empty when too large or unreadable.
fn hash_now(path: &Path, size: i64, mtime: i64) -> String {
    if let Ok(c) = cache().lock()
        && let Some((s, m, id)) = c.get(path)
        && (*s, *m) == (size, mtime)
    {
        return id.clone();
    }
    if size as u64 > MAX_HASHED_BYTES {
        return String::new();
    }
    let id = std::fs::read(path)
        .map(|b| content_id(&b))
        .unwrap_or_default();
    if let Ok(mut c) = cache().lock() {
        if c.len() >= CACHE_ENTRIES {
            c.clear();
        }
        c.insert(path.to_owned(), (size, mtime, id.clone()));
    }
    id
}

/// The baseline of a file for a record made at `record_ms`; None when the
/// file is not there (nothing to compare later).
pub fn baseline(path: &Path, record_ms: i64) -> Option<Baseline> {
    let meta = std::fs::metadata(path).ok().filter(Metadata::is_file)?;
    let (size, mtime) = (meta.len() as i64, mtime_ms(&meta));
    if mtime > record_ms + SLACK_MS {
        // Changed after the record already: it can never be current.
        return Some(Baseline {
            content_id: String::new(),
            size: -1,
            mtime_ms: mtime,
        });
    }
    Some(Baseline {
        content_id: hash_now(path, size, mtime),
        size,
        mtime_ms: mtime,
    })
}

/// Compares the file at `path` with its baseline.
pub fn check(path: &Path, base: &Baseline, how: Check) -> Freshness {
    let Some(meta) = std::fs::metadata(path).ok().filter(Metadata::is_file) else {
        return Freshness::Deleted;
    };
    let (size, mtime) = (meta.len() as i64, mtime_ms(&meta));
    if (size, mtime) == (base.size, base.mtime_ms) {
        return Freshness::Current;
    }
    if how == Check::StatOnly || base.content_id.is_empty() || size != base.size {
        return Freshness::Changed;
    }
    if hash_now(path, size, mtime) == base.content_id {
        Freshness::Current
    } else {
        Freshness::Changed
    }
}

/// A stored path as a path on disk: relative paths are under `root`; None
/// when relative without a root.
pub fn resolve(path: &str, root: Option<&str>) -> Option<PathBuf> {
    let p = Path::new(path);
    if p.is_absolute() {
        return Some(p.to_owned());
    }
    root.map(|r| Path::new(r).join(p))
}

/// The record-level answer for files and their baselines: the worst of
/// them (deleted over changed over current); None without baselines.
pub fn of_files<'a>(
    files: impl IntoIterator<Item = (&'a str, &'a Baseline)>,
    root: Option<&str>,
    how: Check,
) -> Option<Freshness> {
    files
        .into_iter()
        .filter_map(|(path, base)| Some(check(&resolve(path, root)?, base, how)))
        .max()
}

/// The baselines of an observation's files, as `[[path, id, size, mtime], …]`
/// JSON (what `shape::OBSERVATION_SELECT` selects) parsed.
pub fn parse_baselines(json: Option<&str>) -> Vec<(String, Baseline)> {
    let Some(rows) =
        json.and_then(|j| serde_json::from_str::<Vec<(String, String, i64, i64)>>(j).ok())
    else {
        return Vec::new();
    };
    rows.into_iter()
        .map(|(path, content_id, size, mtime_ms)| {
            (
                path,
                Baseline {
                    content_id,
                    size,
                    mtime_ms,
                },
            )
        })
        .collect()
}

/// The freshness of each of `ids` that has baselines, in one query (for
/// the lines a reader is about to see; `root` resolves relative paths).
pub fn of_observations(
    conn: &Connection,
    ids: &[i64],
    root: Option<&str>,
    how: Check,
) -> rusqlite::Result<HashMap<i64, Freshness>> {
    let mut out = HashMap::new();
    if ids.is_empty() {
        return Ok(out);
    }
    let list = serde_json::to_string(ids).unwrap_or_else(|_| "[]".to_owned());
    let mut stmt = conn.prepare_cached(
        "SELECT observation_id, path, content_id, size, mtime_ms FROM file_baselines
         WHERE observation_id IN (SELECT value FROM json_each(?1))",
    )?;
    let rows = stmt.query_map([list], |r| {
        let base = Baseline {
            content_id: r.get(2)?,
            size: r.get(3)?,
            mtime_ms: r.get(4)?,
        };
        Ok((r.get::<_, i64>(0)?, r.get::<_, String>(1)?, base))
    })?;
    for row in rows {
        let (id, path, base) = row?;
        if let Some(state) = of_files([(path.as_str(), &base)], root, how) {
            let worst = out.get(&id).copied().unwrap_or(state).max(state);
            out.insert(id, worst);
        }
    }
    Ok(out)
}

/// Writes the baselines of observation `id`'s files (those on disk), given
/// as they are named in its `observation_files` rows (the caller just wrote
/// them: reading them back would scan that table, keyed by path, once per
/// record).
pub(crate) fn record_baselines<'p>(
    conn: &Connection,
    id: i64,
    project: Option<i64>,
    record_ms: i64,
    paths: impl IntoIterator<Item = &'p str>,
) -> rusqlite::Result<()> {
    let root: Option<String> = match project {
        Some(p) => conn
            .prepare_cached("SELECT root FROM projects WHERE id = ?1")?
            .query_row([p], |r| r.get(0))
            .ok(),
        None => None,
    };
    let mut update = conn.prepare_cached(
        "INSERT OR REPLACE INTO file_baselines (path, observation_id, content_id, size, mtime_ms)
         VALUES (?1, ?2, ?3, ?4, ?5)",
    )?;
    for path in paths {
        let Some(base) = resolve(path, root.as_deref()).and_then(|p| baseline(&p, record_ms))
        else {
            continue;
        };
        update.execute(params![path, id, base.content_id, base.size, base.mtime_ms])?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn content_ids_follow_git_blob_hashing() {
        // `printf 'hello\n' | git hash-object --object-format=sha256 --stdin`
        assert_eq!(
            content_id(b"hello\n"),
            "2cf8d83d9ee29543b34a87727421fdecb7e3f3a183d337639025de576db9ebb4"
        );
    }

    #[test]
    fn a_file_is_current_changed_or_deleted() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("a.txt");
        std::fs::write(&f, "one").unwrap();
        let base = baseline(&f, i64::MAX / 2).unwrap();
        assert_eq!(check(&f, &base, Check::Hash), Freshness::Current);
        std::fs::write(&f, "two!").unwrap();
        assert_eq!(check(&f, &base, Check::StatOnly), Freshness::Changed);
        assert_eq!(check(&f, &base, Check::Hash), Freshness::Changed);
        std::fs::remove_file(&f).unwrap();
        assert_eq!(check(&f, &base, Check::Hash), Freshness::Deleted);
    }

    #[test]
    fn same_content_with_a_new_mtime_is_current_once_hashed() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("b.txt");
        std::fs::write(&f, "same").unwrap();
        let mut base = baseline(&f, i64::MAX / 2).unwrap();
        base.mtime_ms -= 10_000;
        assert_eq!(check(&f, &base, Check::StatOnly), Freshness::Changed);
        assert_eq!(check(&f, &base, Check::Hash), Freshness::Current);
    }

    #[test]
    fn a_file_changed_before_the_record_was_stored_is_never_current() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("c.txt");
        std::fs::write(&f, "later").unwrap();
        let base = baseline(&f, 0).unwrap();
        assert_eq!(check(&f, &base, Check::Hash), Freshness::Changed);
    }

    #[test]
    fn the_worst_file_decides() {
        let worst = [Freshness::Current, Freshness::Deleted, Freshness::Changed]
            .into_iter()
            .max();
        assert_eq!(worst, Some(Freshness::Deleted));
        assert!(Freshness::rank_factor(Some(Freshness::Changed)) < 1.0);
    }
}
