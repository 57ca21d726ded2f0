//! What a session was already given: the ids (`#12`, `S3`) of the memory
//! items injected into it (the SessionStart index, a file's history,
//! prompt-time recall), so that prompt-time recall never repeats them.
//! One row per item and session in `recall_shown`; a compaction (the agent
//! keeps only a summary of its context) forgets them.

use std::collections::HashSet;

use rusqlite::{Connection, params};

use crate::Result;
use crate::ids::ItemRef;

/// Most rows read back for one session (a long session's index, file
/// histories and prompts stay far below).
const MAX_READ: i64 = 5_000;

/// The items already given to `session`.
pub fn items(conn: &Connection, session: i64) -> Result<HashSet<ItemRef>> {
    let mut stmt =
        conn.prepare_cached("SELECT item FROM recall_shown WHERE session_id = ?1 LIMIT ?2")?;
    let rows = stmt.query_map(params![session, MAX_READ], |r| r.get::<_, String>(0))?;
    let mut out = HashSet::new();
    for item in rows {
        if let Ok(item) = ItemRef::parse(&item?) {
            out.insert(item);
        }
    }
    Ok(out)
}

/// Records that `items` were given to `session` (again is no error).
pub fn record(conn: &Connection, session: i64, items: &[ItemRef], now_ms: i64) -> Result<()> {
    if items.is_empty() {
        return Ok(());
    }
    let tx = conn.unchecked_transaction()?;
    {
        let mut stmt = tx.prepare_cached(
            "INSERT INTO recall_shown (session_id, item, shown_at) VALUES (?1, ?2, ?3)
             ON CONFLICT DO NOTHING",
        )?;
        for item in items {
            stmt.execute(params![session, item.to_string(), now_ms])?;
        }
    }
    tx.commit()?;
    Ok(())
}

/// Forgets what `session` was given (its context was compacted away).
pub fn forget(conn: &Connection, session: i64) -> Result<()> {
    conn.execute("DELETE FROM recall_shown WHERE session_id = ?1", [session])?;
    Ok(())
}
