//! Salvage from a damaged database: every row SQLite can still read is
//! copied, table by table, into a fresh store built by our migrations.
//!
//! A damaged page makes a full scan stop with an error. The copy then seeks
//! past it one rowid at a time (`rowid >= n` descends straight to the leaf
//! holding `n`), so the rows after a damaged page are read again; only the
//! rows on unreadable pages are lost. Tables without rowids are scanned once,
//! as far as they can be read. The full-text indexes and the
//! `observation_files` index are derived, so they are rebuilt rather than
//! copied; `project_counts` is kept by its triggers as observations are copied.

use std::cell::Cell;
use std::path::Path;

use rusqlite::types::Value;
use rusqlite::{Connection, OpenFlags, params_from_iter};

use crate::{Result, Store, memory, sql_err};

/// After this many consecutive unreadable rowids the rest of a table is
/// given up on (an unreadable interior page can hide a whole range).
const MAX_SKIP: i64 = 100_000;

/// What one table gave back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TableRecovery {
    pub table: String,
    pub recovered: u64,
    /// Rowids that could not be read: an upper bound of the rows lost
    /// (some may never have existed).
    pub unreadable: u64,
    /// The table could not be read to its end (or at all): how much more
    /// was lost is unknown.
    pub incomplete: bool,
}

impl TableRecovery {
    /// True when every row was read.
    pub fn complete(&self) -> bool {
        self.unreadable == 0 && !self.incomplete
    }

    fn with_copies(mut self, copied: u64, refused: u64) -> TableRecovery {
        self.recovered += copied;
        self.unreadable += refused;
        self
    }

    /// `events: 228 recovered, up to 2 lost`.
    pub fn describe(&self) -> String {
        let mut text = format!("{}: {} recovered", self.table, self.recovered);
        if self.unreadable > 0 {
            text.push_str(&format!(", up to {} lost", self.unreadable));
        }
        if self.incomplete {
            text.push_str(", the rest unreadable (count unknown)");
        }
        text
    }
}

/// Copies what can be read from the damaged database at `damaged` into
/// `store` (a fresh, migrated one), then rebuilds the derived indexes.
pub fn recover_into(damaged: &Path, store: &mut Store) -> Result<Vec<TableRecovery>> {
    let flags = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let source = Connection::open_with_flags(damaged, flags).map_err(|e| sql_err(damaged, e))?;
    // Without a readable schema there is no table to read from.
    source
        .query_row("SELECT count(*) FROM sqlite_master", [], |r| {
            r.get::<_, i64>(0)
        })
        .map_err(|e| sql_err(damaged, e))?;
    let dest_path = store.path.clone();
    let tables = copied_tables(&store.conn).map_err(|e| sql_err(&dest_path, e))?;
    store
        .conn
        .execute_batch("PRAGMA foreign_keys = OFF")
        .map_err(|e| sql_err(&dest_path, e))?;
    let tx = store
        .conn
        .transaction()
        .map_err(|e| sql_err(&dest_path, e))?;
    let mut report = Vec::new();
    for table in tables {
        report.push(copy_table(&source, &tx, &table).map_err(|e| sql_err(&dest_path, e))?);
    }
    tx.execute_batch(REBUILD_OBSERVATION_FILES)
        .and_then(|()| memory::fill_idents(&tx))
        .map_err(|e| sql_err(&dest_path, e))?;
    tx.commit().map_err(|e| sql_err(&dest_path, e))?;
    store.rebuild_fts()?;
    store
        .conn
        .execute_batch("PRAGMA foreign_keys = ON")
        .map_err(|e| sql_err(&dest_path, e))?;
    Ok(report)
}

/// Derived from `observations` (the same statements as its migration).
const REBUILD_OBSERVATION_FILES: &str = "
INSERT OR IGNORE INTO observation_files (path, observation_id, modified)
    SELECT j.value, o.id, 1 FROM observations o, json_each(o.files_modified) j
    WHERE json_valid(o.files_modified) AND j.type = 'text' AND j.value <> '';
INSERT OR IGNORE INTO observation_files (path, observation_id, modified)
    SELECT j.value, o.id, 0 FROM observations o, json_each(o.files_read) j
    WHERE json_valid(o.files_read) AND j.type = 'text' AND j.value <> '';
";

/// The fresh store's own tables, minus the derived ones (the packed
/// vectors too: a pack must cover exactly the vector rows that were saved,
/// and the worker packs them again; the counts, which their triggers keep
/// as the rows are copied).
fn copied_tables(conn: &Connection) -> rusqlite::Result<Vec<String>> {
    let mut stmt = conn.prepare(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND sql NOT LIKE 'CREATE VIRTUAL%'
           AND name NOT LIKE 'sqlite_%' AND name NOT LIKE '%_fts%'
           AND name NOT IN ('observation_files', 'embedding_packs', 'project_counts')
         ORDER BY name",
    )?;
    stmt.query_map([], |r| r.get(0))?.collect()
}

/// The columns both databases have (an older damaged store lacks the newer ones).
fn shared_columns(source: &Connection, dest: &Connection, table: &str) -> Option<Vec<String>> {
    let source_cols = columns(source, table).ok()?;
    let cols: Vec<String> = columns(dest, table)
        .ok()?
        .into_iter()
        .filter(|c| source_cols.contains(c))
        .collect();
    (!cols.is_empty()).then_some(cols)
}

fn columns(conn: &Connection, table: &str) -> rusqlite::Result<Vec<String>> {
    let mut stmt = conn.prepare(&format!("SELECT name FROM pragma_table_info('{table}')"))?;
    stmt.query_map([], |r| r.get(0))?.collect()
}

fn has_rowid(conn: &Connection, table: &str) -> bool {
    conn.query_row(
        "SELECT sql NOT LIKE '%WITHOUT ROWID%' FROM sqlite_master WHERE name = ?1",
        [table],
        |r| r.get(0),
    )
    .unwrap_or(false)
}

fn copy_table(
    source: &Connection,
    dest: &Connection,
    table: &str,
) -> rusqlite::Result<TableRecovery> {
    let mut report = TableRecovery {
        table: table.to_owned(),
        recovered: 0,
        unreadable: 0,
        incomplete: false,
    };
    let Some(cols) = shared_columns(source, dest, table) else {
        report.incomplete = true;
        return Ok(report);
    };
    let list = cols
        .iter()
        .map(|c| format!("\"{c}\""))
        .collect::<Vec<_>>()
        .join(", ");
    // Every rowid table of ours has an `id INTEGER PRIMARY KEY`, the rowid
    // under its own name: copying the columns keeps the ids that other rows
    // point at. The rowid read first (column 0) only drives the scan.
    let marks = vec!["?"; cols.len()].join(", ");
    let mut insert = dest.prepare(&format!(
        "INSERT OR IGNORE INTO {table} ({list}) VALUES ({marks})"
    ))?;
    // Rows read but refused by the fresh schema (a damaged value breaking
    // a constraint) count as lost.
    let (copied, refused) = (Cell::new(0u64), Cell::new(0u64));
    let mut insert_row = |row: &[Value]| -> rusqlite::Result<()> {
        let counter = if insert.execute(params_from_iter(&row[1..]))? > 0 {
            &copied
        } else {
            &refused
        };
        counter.set(counter.get() + 1);
        Ok(())
    };
    if !has_rowid(dest, table) {
        let sql = format!("SELECT 0, {list} FROM {table}");
        let end = scan(source, &sql, &[], cols.len() + 1, &mut insert_row)?;
        report.incomplete = !matches!(end, Scan::End);
        return Ok(report.with_copies(copied.get(), refused.get()));
    }
    let sql = format!("SELECT rowid, {list} FROM {table} WHERE rowid >= ?1 ORDER BY rowid");
    let mut next = i64::MIN;
    loop {
        match scan(
            source,
            &sql,
            &[Value::Integer(next)],
            cols.len() + 1,
            &mut insert_row,
        )? {
            Scan::End => break,
            Scan::Failed { last } => {
                let failed_at = last.map_or(next, |l| l.saturating_add(1));
                // Skip the unreadable rowid; a seek finds the next readable one.
                let mut probe = failed_at.saturating_add(1);
                let mut skipped = 1;
                loop {
                    if skipped > MAX_SKIP {
                        report.incomplete = true;
                        return Ok(report.with_copies(copied.get(), refused.get()));
                    }
                    if seek_ok(source, table, probe) {
                        break;
                    }
                    probe = probe.saturating_add(1);
                    skipped += 1;
                }
                report.unreadable += skipped as u64;
                next = probe;
            }
        }
    }
    Ok(report.with_copies(copied.get(), refused.get()))
}

/// Whether the first row at or after `rowid` can be read in full.
fn seek_ok(source: &Connection, table: &str, rowid: i64) -> bool {
    source
        .query_row(
            &format!("SELECT * FROM {table} WHERE rowid >= ?1 ORDER BY rowid LIMIT 1"),
            [rowid],
            |r| {
                for i in 0..r.as_ref().column_count() {
                    r.get::<_, Value>(i)?;
                }
                Ok(())
            },
        )
        .or_else(|e| match e {
            rusqlite::Error::QueryReturnedNoRows => Ok(()),
            e => Err(e),
        })
        .is_ok()
}

enum Scan {
    /// Read to the end.
    End,
    /// Stopped by an error after the row with this rowid (none when the
    /// first row already failed).
    Failed { last: Option<i64> },
}

/// Runs `sql`, hands each row to `sink`, and stops at the first read error.
fn scan(
    source: &Connection,
    sql: &str,
    args: &[Value],
    width: usize,
    sink: &mut dyn FnMut(&[Value]) -> rusqlite::Result<()>,
) -> rusqlite::Result<Scan> {
    let mut last = None;
    let Ok(mut stmt) = source.prepare(sql) else {
        return Ok(Scan::Failed { last });
    };
    let Ok(mut rows) = stmt.query(params_from_iter(args)) else {
        return Ok(Scan::Failed { last });
    };
    loop {
        let row = match rows.next() {
            Ok(Some(row)) => row,
            Ok(None) => return Ok(Scan::End),
            Err(_) => return Ok(Scan::Failed { last }),
        };
        let values: rusqlite::Result<Vec<Value>> = (0..width).map(|i| row.get(i)).collect();
        let Ok(values) = values else {
            return Ok(Scan::Failed { last });
        };
        let rowid = match values[0] {
            Value::Integer(id) => id,
            _ => 0,
        };
        sink(&values)?;
        last = Some(rowid);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn a_healthy_database_is_copied_whole_with_its_ids_and_indexes() {
        let tmp = tempfile::tempdir().unwrap();
        let old = Store::open(&tmp.path().join("old.db"), Duration::from_secs(1)).unwrap();
        old.conn()
            .execute_batch(
                "INSERT INTO projects (id, root, name, created_at) VALUES (7, '/p', 'p', 1);
                 INSERT INTO observations (uid, project_id, type, title, files_read, created_at)
                     VALUES ('o1', 7, 'discovery', 'parser quirk', '[\"/p/a.rs\"]', 1);
                 INSERT INTO applied_captures (capture_id, applied_at) VALUES ('c1', 1), ('c2', 1);",
            )
            .unwrap();
        drop(old);
        let mut fresh = Store::open(&tmp.path().join("new.db"), Duration::from_secs(1)).unwrap();
        let report = recover_into(&tmp.path().join("old.db"), &mut fresh).unwrap();
        assert!(report.iter().all(TableRecovery::complete), "{report:?}");
        let recovered = |name: &str| report.iter().find(|t| t.table == name).unwrap().recovered;
        assert_eq!(recovered("projects"), 1);
        assert_eq!(recovered("applied_captures"), 2, "a WITHOUT ROWID table");
        let (id, files, found): (i64, i64, i64) = fresh
            .conn()
            .query_row(
                "SELECT (SELECT id FROM projects), (SELECT count(*) FROM observation_files),
                        (SELECT count(*) FROM observations_fts WHERE observations_fts MATCH 'quirk')",
                [],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
            )
            .unwrap();
        assert_eq!((id, files, found), (7, 1, 1));
        assert_eq!(
            report[0].describe(),
            format!("{}: {} recovered", report[0].table, report[0].recovered)
        );
    }

    #[test]
    fn a_file_without_a_readable_schema_is_an_error() {
        let tmp = tempfile::tempdir().unwrap();
        let garbage = tmp.path().join("garbage.db");
        std::fs::write(&garbage, vec![0x42u8; 8192]).unwrap();
        let mut fresh = Store::open(&tmp.path().join("new.db"), Duration::from_secs(1)).unwrap();
        assert!(recover_into(&garbage, &mut fresh).is_err());
    }
}
