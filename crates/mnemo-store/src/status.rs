//! Counts and health of a store, for `doctor` and `stats`.

use std::collections::BTreeMap;

use crate::{Result, Store};

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StoreCounts {
    pub projects: i64,
    pub sessions: i64,
    pub prompts: i64,
    /// Events by queue status (`pending`, `leased`, `done`, `failed`).
    pub events: BTreeMap<String, i64>,
    pub observations: i64,
    pub summaries: i64,
}

impl Store {
    pub fn counts(&self) -> Result<StoreCounts> {
        let one = |sql: &str| -> Result<i64> {
            self.conn
                .query_row(sql, [], |r| r.get(0))
                .map_err(|e| self.err(e))
        };
        let mut events = BTreeMap::new();
        let mut stmt = self
            .conn
            .prepare("SELECT status, count(*) FROM events GROUP BY status")
            .map_err(|e| self.err(e))?;
        let rows = stmt
            .query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)?)))
            .map_err(|e| self.err(e))?;
        for row in rows {
            let (status, n) = row.map_err(|e| self.err(e))?;
            events.insert(status, n);
        }
        Ok(StoreCounts {
            projects: one("SELECT count(*) FROM projects")?,
            sessions: one("SELECT count(*) FROM sessions")?,
            prompts: one("SELECT count(*) FROM prompts")?,
            events,
            observations: one("SELECT count(*) FROM observations")?,
            summaries: one("SELECT count(*) FROM summaries")?,
        })
    }

    /// When a hook last stored something (an event or a prompt), if ever:
    /// hook errors logged before it are past.
    pub fn last_capture_ms(&self) -> Result<Option<i64>> {
        self.conn
            .query_row(
                "SELECT max(t) FROM (SELECT max(created_at) AS t FROM events
                                     UNION ALL SELECT max(created_at) FROM prompts)",
                [],
                |r| r.get(0),
            )
            .map_err(|e| self.err(e))
    }
}
