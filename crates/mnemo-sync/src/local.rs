//! This machine's sync state, in the store's `sync_*` tables (migration
//! `V11_SYNC` of mnemo-store): settings, spaces and their wrapped keys, the
//! change log the triggers fill, the outbox, the last version of each
//! record, and the highest sequence number applied per device.

use rusqlite::{Connection, OptionalExtension, params};

pub type Sql<T> = rusqlite::Result<T>;

/// Keys of `sync_state`.
pub mod key {
    pub const SERVER: &str = "server";
    pub const DEVICE_TOKEN: &str = "device_token";
    pub const DEVICE_ID: &str = "device_id";
    pub const USER_ID: &str = "user_id";
    pub const KEY_FILE: &str = "key_file";
    pub const AUTHOR: &str = "author";
    pub const CLOCK: &str = "clock";
    pub const LAST_SYNC: &str = "last_sync_at";
    pub const LAST_ERROR: &str = "last_error";
}

pub fn get(conn: &Connection, key: &str) -> Sql<Option<String>> {
    conn.query_row("SELECT value FROM sync_state WHERE key = ?1", [key], |r| {
        r.get(0)
    })
    .optional()
}

pub fn set(conn: &Connection, key: &str, value: &str) -> Sql<()> {
    conn.execute(
        "INSERT INTO sync_state (key, value) VALUES (?1, ?2)
         ON CONFLICT (key) DO UPDATE SET value = excluded.value",
        params![key, value],
    )
    .map(drop)
}

pub fn clear(conn: &Connection, key: &str) -> Sql<()> {
    conn.execute("DELETE FROM sync_state WHERE key = ?1", [key])
        .map(drop)
}

/// One space this machine syncs.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Space {
    pub space_id: i64,
    pub kind: String,
    pub project_root: Option<String>,
    pub epoch: i64,
    pub next_seq: i64,
    pub pull_after: i64,
    pub last_sync_at: Option<i64>,
    pub last_error: Option<String>,
}

pub fn spaces(conn: &Connection) -> Sql<Vec<Space>> {
    let mut stmt = conn.prepare(
        "SELECT space_id, kind, project_root, epoch, next_seq, pull_after, last_sync_at, last_error
         FROM sync_spaces ORDER BY space_id",
    )?;
    stmt.query_map([], |r| {
        Ok(Space {
            space_id: r.get(0)?,
            kind: r.get(1)?,
            project_root: r.get(2)?,
            epoch: r.get(3)?,
            next_seq: r.get(4)?,
            pull_after: r.get(5)?,
            last_sync_at: r.get(6)?,
            last_error: r.get(7)?,
        })
    })?
    .collect()
}

/// Adds a space (or updates its epoch and project).
pub fn put_space(
    conn: &Connection,
    space: i64,
    kind: &str,
    project_root: Option<&str>,
    epoch: i64,
) -> Sql<()> {
    conn.execute(
        "INSERT INTO sync_spaces (space_id, kind, project_root, epoch) VALUES (?1, ?2, ?3, ?4)
         ON CONFLICT (space_id) DO UPDATE SET epoch = excluded.epoch,
             project_root = coalesce(excluded.project_root, project_root)",
        params![space, kind, project_root, epoch],
    )
    .map(drop)
}

pub fn drop_space(conn: &Connection, space: i64) -> Sql<()> {
    for table in ["sync_spaces", "sync_keys", "sync_outbox", "sync_seen"] {
        conn.execute(&format!("DELETE FROM {table} WHERE space_id = ?1"), [space])?;
    }
    Ok(())
}

pub fn space_outcome(conn: &Connection, space: i64, error: Option<&str>) -> Sql<()> {
    conn.execute(
        "UPDATE sync_spaces SET last_error = ?2,
                last_sync_at = CASE WHEN ?2 IS NULL THEN ?3 ELSE last_sync_at END
         WHERE space_id = ?1",
        params![space, error, mnemo_core::time::now_ms()],
    )
    .map(drop)
}

pub fn set_pull_after(conn: &Connection, space: i64, after: i64) -> Sql<()> {
    conn.execute(
        "UPDATE sync_spaces SET pull_after = ?2 WHERE space_id = ?1",
        params![space, after],
    )
    .map(drop)
}

pub fn put_key(conn: &Connection, space: i64, epoch: i64, wrapped: &[u8]) -> Sql<()> {
    conn.execute(
        "INSERT OR REPLACE INTO sync_keys (space_id, epoch, wrapped) VALUES (?1, ?2, ?3)",
        params![space, epoch, wrapped],
    )
    .map(drop)
}

/// `(space, epoch, wrapped key)` of every key held.
pub fn keys(conn: &Connection) -> Sql<Vec<(i64, i64, Vec<u8>)>> {
    let mut stmt = conn.prepare("SELECT space_id, epoch, wrapped FROM sync_keys")?;
    stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?
        .collect()
}

/// Queues every stored observation and summary (a space was just set up).
pub fn enqueue_everything(conn: &Connection) -> Sql<usize> {
    Ok(conn.execute(
        "INSERT INTO sync_changes (kind, uid) SELECT 'observation', uid FROM observations",
        [],
    )? + conn.execute(
        "INSERT INTO sync_changes (kind, uid) SELECT 'summary', uid FROM summaries",
        [],
    )?)
}

/// The changed records, each once, deletions first (a forget or a
/// redaction goes out before anything else of the same origin), and the
/// last change's number.
pub fn changes(conn: &Connection) -> Sql<(Vec<(String, String)>, i64)> {
    let mut stmt = conn.prepare(
        "SELECT c.kind, c.uid, max(c.seq) AS last,
                (SELECT 1 FROM observations o WHERE o.uid = c.uid
                 UNION ALL SELECT 1 FROM summaries m WHERE m.uid = c.uid) IS NULL AS gone,
                (SELECT 1 FROM sync_records r WHERE r.uid = c.uid) IS NOT NULL AS known
         FROM sync_changes c GROUP BY c.kind, c.uid
         ORDER BY gone DESC, known DESC, last",
    )?;
    let mut last = 0;
    let rows = stmt
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get::<_, i64>(2)?)))?
        .map(|row| {
            row.map(|(kind, uid, seq)| {
                last = last.max(seq);
                (kind, uid)
            })
        })
        .collect::<Sql<Vec<_>>>()?;
    Ok((rows, last))
}

pub fn forget_changes_up_to(conn: &Connection, last: i64) -> Sql<()> {
    conn.execute("DELETE FROM sync_changes WHERE seq <= ?1", [last])
        .map(drop)
}

/// The number of the last change logged (0 when none is).
pub fn last_change(conn: &Connection) -> Sql<i64> {
    conn.query_row("SELECT coalesce(max(seq), 0) FROM sync_changes", [], |r| {
        r.get(0)
    })
}

/// Drops the changes logged after `mark` for these records (they were
/// just applied from the server and have nothing new to send).
pub fn drop_changes_after(conn: &Connection, mark: i64, uids: &[String]) -> Sql<()> {
    let list = serde_json::to_string(uids).unwrap_or_else(|_| "[]".into());
    conn.execute(
        "DELETE FROM sync_changes WHERE seq > ?1 AND uid IN (SELECT value FROM json_each(?2))",
        params![mark, list],
    )
    .map(drop)
}

/// The last version of a record pushed or applied here.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Known {
    pub space: i64,
    pub hlc: String,
    pub digest: String,
    pub deleted: bool,
}

pub fn known(conn: &Connection, uid: &str) -> Sql<Option<Known>> {
    conn.prepare_cached("SELECT space_id, hlc, digest, deleted FROM sync_records WHERE uid = ?1")?
        .query_row([uid], |r| {
            Ok(Known {
                space: r.get(0)?,
                hlc: r.get(1)?,
                digest: r.get(2)?,
                deleted: r.get(3)?,
            })
        })
        .optional()
}

pub fn put_known(conn: &Connection, uid: &str, k: &Known) -> Sql<()> {
    conn.prepare_cached(
        "INSERT OR REPLACE INTO sync_records (uid, space_id, hlc, digest, deleted)
         VALUES (?1, ?2, ?3, ?4, ?5)",
    )?
    .execute(params![uid, k.space, k.hlc, k.digest, k.deleted])
    .map(drop)
}

/// Queues `plain` for `space` under the space's next sequence number.
pub fn queue(conn: &Connection, space: i64, uid: &str, plain: &str) -> Sql<i64> {
    let seq: i64 = conn
        .prepare_cached(
            "UPDATE sync_spaces SET next_seq = next_seq + 1 WHERE space_id = ?1
             RETURNING next_seq - 1",
        )?
        .query_row([space], |r| r.get(0))?;
    conn.prepare_cached(
        "INSERT INTO sync_outbox (space_id, seq, uid, plain) VALUES (?1, ?2, ?3, ?4)",
    )?
    .execute(params![space, seq, uid, plain])?;
    Ok(seq)
}

/// `(seq, uid, plain)` waiting for `space`, oldest first.
pub fn outbox(conn: &Connection, space: i64, limit: usize) -> Sql<Vec<(i64, String, String)>> {
    let mut stmt = conn.prepare(
        "SELECT seq, uid, plain FROM sync_outbox WHERE space_id = ?1 ORDER BY seq LIMIT ?2",
    )?;
    stmt.query_map(params![space, limit as i64], |r| {
        Ok((r.get(0)?, r.get(1)?, r.get(2)?))
    })?
    .collect()
}

pub fn pushed_up_to(conn: &Connection, space: i64, head: i64) -> Sql<()> {
    conn.execute(
        "DELETE FROM sync_outbox WHERE space_id = ?1 AND seq <= ?2",
        params![space, head],
    )
    .map(drop)
}

pub fn pending(conn: &Connection) -> Sql<(i64, i64)> {
    conn.query_row(
        "SELECT (SELECT count(*) FROM sync_outbox),
                (SELECT count(DISTINCT uid) FROM sync_changes)",
        [],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )
}

pub fn seen(conn: &Connection, space: i64, device: i64) -> Sql<i64> {
    conn.query_row(
        "SELECT seq FROM sync_seen WHERE space_id = ?1 AND device_id = ?2",
        params![space, device],
        |r| r.get(0),
    )
    .optional()
    .map(|s| s.unwrap_or(0))
}

pub fn set_seen(conn: &Connection, space: i64, device: i64, seq: i64) -> Sql<()> {
    conn.execute(
        "INSERT INTO sync_seen (space_id, device_id, seq) VALUES (?1, ?2, ?3)
         ON CONFLICT (space_id, device_id) DO UPDATE SET seq = max(seq, excluded.seq)",
        params![space, device, seq],
    )
    .map(drop)
}

/// Forgets every trace of sync on this machine (after `sync leave`); the
/// memory itself stays.
pub fn reset(conn: &Connection) -> Sql<()> {
    conn.execute_batch(
        "DELETE FROM sync_spaces; DELETE FROM sync_keys; DELETE FROM sync_outbox;
         DELETE FROM sync_seen; DELETE FROM sync_changes; DELETE FROM sync_records;
         DELETE FROM sync_state;",
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn store() -> (tempfile::TempDir, mnemo_store::Store) {
        let dir = tempfile::tempdir().unwrap();
        let store =
            mnemo_store::Store::open(&dir.path().join("m.db"), std::time::Duration::from_secs(1))
                .unwrap();
        (dir, store)
    }

    fn add(conn: &Connection, uid: &str) {
        conn.execute(
            "INSERT INTO observations (uid, type, title, created_at) VALUES (?1, 'change', 't', 1)",
            [uid],
        )
        .unwrap();
    }

    #[test]
    fn nothing_is_logged_until_a_space_exists() {
        let (_dir, store) = store();
        add(store.conn(), "a");
        assert_eq!(pending(store.conn()).unwrap(), (0, 0));
        put_space(store.conn(), 1, "personal", None, 1).unwrap();
        add(store.conn(), "b");
        assert_eq!(pending(store.conn()).unwrap(), (0, 1));
    }

    #[test]
    fn deletions_come_first_then_known_records_then_new_ones() {
        let (_dir, store) = store();
        let conn = store.conn();
        put_space(conn, 1, "personal", None, 1).unwrap();
        for uid in ["new", "known", "gone"] {
            add(conn, uid);
        }
        let known = Known {
            space: 1,
            hlc: "h".into(),
            digest: "d".into(),
            deleted: false,
        };
        put_known(conn, "known", &known).unwrap();
        conn.execute("DELETE FROM observations WHERE uid = 'gone'", [])
            .unwrap();
        let (changes, last) = changes(conn).unwrap();
        let uids: Vec<&str> = changes.iter().map(|(_, u)| u.as_str()).collect();
        assert_eq!(uids, ["gone", "known", "new"]);
        forget_changes_up_to(conn, last).unwrap();
        assert_eq!(pending(conn).unwrap(), (0, 0));
    }

    #[test]
    fn the_outbox_numbers_each_space_in_order() {
        let (_dir, store) = store();
        let conn = store.conn();
        put_space(conn, 1, "personal", None, 1).unwrap();
        put_space(conn, 2, "shared", Some("/p"), 1).unwrap();
        assert_eq!(queue(conn, 1, "a", "{}").unwrap(), 1);
        assert_eq!(queue(conn, 1, "b", "{}").unwrap(), 2);
        assert_eq!(queue(conn, 2, "c", "{}").unwrap(), 1);
        pushed_up_to(conn, 1, 1).unwrap();
        let left: Vec<i64> = outbox(conn, 1, 10).unwrap().iter().map(|r| r.0).collect();
        assert_eq!(left, [2]);
    }
}
