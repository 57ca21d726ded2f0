//! The cost ledger: every LLM call the worker makes (`llm_calls`), the
//! token budgets checked against it before each call, and the spend reports
//! of `mnemo stats` and `/api/stats`.
//!
//! Budgets count input plus output tokens, failed calls included (they were
//! billed too). The daily budget runs per calendar day in UTC, so "offline
//! until" is the next UTC midnight; a session budget lasts as long as the
//! session.

use mnemo_core::config::BudgetConfig;
use rusqlite::{Connection, params};
use serde::Serialize;

use crate::{Result, Store};

const DAY_MS: i64 = 86_400_000;

/// One LLM call as written to the ledger.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct NewLlmCall {
    pub provider: String,
    pub model: String,
    /// What the call was for, e.g. `turn`.
    pub purpose: String,
    pub project_id: Option<i64>,
    pub session_id: Option<i64>,
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub duration_ms: u64,
    pub ok: bool,
    pub error: Option<String>,
    pub created_at: i64,
}

/// Appends a call to the ledger (inside the caller's transaction).
pub fn insert_call(conn: &Connection, c: &NewLlmCall) -> rusqlite::Result<i64> {
    conn.query_row(
        "INSERT INTO llm_calls (provider, model, purpose, project_id, session_id, input_tokens,
                                output_tokens, duration_ms, ok, error, created_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11) RETURNING id",
        params![
            c.provider,
            c.model,
            c.purpose,
            c.project_id,
            c.session_id,
            c.input_tokens as i64,
            c.output_tokens as i64,
            c.duration_ms as i64,
            c.ok,
            c.error,
            c.created_at
        ],
        |r| r.get(0),
    )
}

/// Midnight UTC of the day containing `ms`.
pub fn day_start_utc(ms: i64) -> i64 {
    ms - ms.rem_euclid(DAY_MS)
}

/// Which budget ran out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum BudgetScope {
    Daily,
    Session,
}

/// A budget that is spent: LLM calls are off until `until_ms` (the next UTC
/// midnight for the daily budget; None for a session budget, which lasts
/// as long as the session).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Exhausted {
    pub scope: BudgetScope,
    pub used: u64,
    pub limit: u64,
    pub until_ms: Option<i64>,
    /// The store's session id, for a session budget.
    pub session_id: Option<i64>,
}

impl Exhausted {
    /// "daily token budget exhausted (1234 of 1000 tokens); using the offline
    /// compressor until 2026-11-24T00:00:00Z".
    pub fn describe(&self) -> String {
        match self.scope {
            BudgetScope::Daily => format!(
                "daily token budget exhausted ({} of {} tokens); using the offline compressor until {}",
                self.used,
                self.limit,
                self.until_ms
                    .map(mnemo_core::time::format_rfc3339)
                    .unwrap_or_default()
            ),
            BudgetScope::Session => format!(
                "session token budget exhausted ({} of {} tokens in session {}); using the offline \
                 compressor for the rest of that session",
                self.used,
                self.limit,
                self.session_id.unwrap_or_default()
            ),
        }
    }
}

/// Tokens spent since `since_ms`.
pub fn tokens_since(conn: &Connection, since_ms: i64) -> rusqlite::Result<u64> {
    conn.query_row(
        "SELECT coalesce(sum(input_tokens + output_tokens), 0) FROM llm_calls WHERE created_at >= ?1",
        [since_ms],
        |r| r.get::<_, i64>(0),
    )
    .map(|n| n.max(0) as u64)
}

/// Tokens spent on a session.
pub fn tokens_for_session(conn: &Connection, session_id: i64) -> rusqlite::Result<u64> {
    conn.query_row(
        "SELECT coalesce(sum(input_tokens + output_tokens), 0) FROM llm_calls WHERE session_id = ?1",
        [session_id],
        |r| r.get::<_, i64>(0),
    )
    .map(|n| n.max(0) as u64)
}

/// The budget that forbids another call for `session_id` now, if any
/// (0 means no limit).
pub fn budget_exhausted(
    conn: &Connection,
    budget: &BudgetConfig,
    session_id: Option<i64>,
    now: i64,
) -> rusqlite::Result<Option<Exhausted>> {
    if budget.daily_tokens > 0 {
        let used = tokens_since(conn, day_start_utc(now))?;
        if used >= budget.daily_tokens {
            return Ok(Some(Exhausted {
                scope: BudgetScope::Daily,
                used,
                limit: budget.daily_tokens,
                until_ms: Some(day_start_utc(now) + DAY_MS),
                session_id: None,
            }));
        }
    }
    if budget.session_tokens > 0
        && let Some(session_id) = session_id
    {
        let used = tokens_for_session(conn, session_id)?;
        if used >= budget.session_tokens {
            return Ok(Some(Exhausted {
                scope: BudgetScope::Session,
                used,
                limit: budget.session_tokens,
                until_ms: None,
                session_id: Some(session_id),
            }));
        }
    }
    Ok(None)
}

/// Spend of one group (a day or a project) with one provider and model.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Spend {
    /// `2026-11-23` (UTC) for spend per day; the project root for spend per project.
    pub key: String,
    pub provider: String,
    pub model: String,
    pub calls: u64,
    pub failed_calls: u64,
    pub input_tokens: u64,
    pub output_tokens: u64,
}

/// Everything `mnemo stats` reports about spend.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SpendReport {
    pub since_ms: i64,
    pub by_day: Vec<Spend>,
    pub by_project: Vec<Spend>,
    pub today_tokens: u64,
}

impl Store {
    /// Spend per UTC day and per project since `since_ms`, newest day first,
    /// projects by spend.
    pub fn spend_report(&self, since_ms: i64, now: i64) -> Result<SpendReport> {
        let group = |key_sql: &str, order: &str| -> Result<Vec<Spend>> {
            let sql = format!(
                "SELECT {key_sql} AS k, c.provider, c.model, count(*), sum(NOT c.ok),
                        sum(c.input_tokens), sum(c.output_tokens)
                 FROM llm_calls c LEFT JOIN projects p ON p.id = c.project_id
                 WHERE c.created_at >= ?1
                 GROUP BY k, c.provider, c.model ORDER BY {order}"
            );
            let mut stmt = self.conn.prepare(&sql).map_err(|e| self.err(e))?;
            let rows = stmt
                .query_map([since_ms], |r| {
                    Ok(Spend {
                        key: r.get(0)?,
                        provider: r.get(1)?,
                        model: r.get(2)?,
                        calls: r.get::<_, i64>(3)? as u64,
                        failed_calls: r.get::<_, i64>(4)? as u64,
                        input_tokens: r.get::<_, i64>(5)? as u64,
                        output_tokens: r.get::<_, i64>(6)? as u64,
                    })
                })
                .map_err(|e| self.err(e))?;
            rows.collect::<rusqlite::Result<Vec<_>>>()
                .map_err(|e| self.err(e))
        };
        Ok(SpendReport {
            since_ms,
            by_day: group(
                "strftime('%Y-%m-%d', c.created_at / 1000, 'unixepoch')",
                "k DESC, c.provider, c.model",
            )?,
            by_project: group(
                "coalesce(p.root, '(no project)')",
                "sum(c.input_tokens + c.output_tokens) DESC, k",
            )?,
            today_tokens: tokens_since(&self.conn, day_start_utc(now)).map_err(|e| self.err(e))?,
        })
    }

    /// See [`budget_exhausted`].
    pub fn budget_exhausted(
        &self,
        budget: &BudgetConfig,
        session_id: Option<i64>,
        now: i64,
    ) -> Result<Option<Exhausted>> {
        budget_exhausted(&self.conn, budget, session_id, now).map_err(|e| self.err(e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn store() -> (tempfile::TempDir, Store) {
        let tmp = tempfile::tempdir().unwrap();
        let s = Store::open(&tmp.path().join("m.db"), Duration::from_secs(1)).unwrap();
        (tmp, s)
    }

    fn call(session: Option<i64>, tokens: u64, at: i64) -> NewLlmCall {
        NewLlmCall {
            provider: "anthropic".into(),
            model: "small".into(),
            purpose: "turn".into(),
            session_id: session,
            input_tokens: tokens,
            output_tokens: tokens / 2,
            duration_ms: 10,
            ok: true,
            created_at: at,
            ..Default::default()
        }
    }

    #[test]
    fn days_are_utc() {
        assert_eq!(day_start_utc(DAY_MS * 3 + 5), DAY_MS * 3);
        assert_eq!(day_start_utc(DAY_MS * 3), DAY_MS * 3);
    }

    #[test]
    fn budgets_count_today_and_the_session() {
        let (_t, store) = store();
        let now = DAY_MS * 100 + 1_000;
        let s = store.conn();
        s.execute(
            "INSERT INTO sessions (id, platform, platform_session_id, started_at, updated_at)
             VALUES (1, 'claude-code', 'a', 0, 0), (2, 'claude-code', 'b', 0, 0)",
            [],
        )
        .unwrap();
        insert_call(s, &call(Some(1), 600, now - DAY_MS)).unwrap(); // yesterday
        insert_call(s, &call(Some(1), 100, now)).unwrap();
        let budget = BudgetConfig {
            daily_tokens: 1_000,
            session_tokens: 1_000,
        };
        assert_eq!(store.budget_exhausted(&budget, Some(2), now).unwrap(), None);
        let spent = store
            .budget_exhausted(&budget, Some(1), now)
            .unwrap()
            .unwrap();
        assert_eq!(spent.scope, BudgetScope::Session);
        assert_eq!(spent.used, 1_050);
        insert_call(s, &call(Some(2), 700, now)).unwrap();
        let spent = store
            .budget_exhausted(&budget, Some(2), now)
            .unwrap()
            .unwrap();
        assert_eq!(spent.scope, BudgetScope::Daily);
        assert_eq!(spent.until_ms, Some(DAY_MS * 101));
        assert!(spent.describe().contains("until"), "{}", spent.describe());
        let unlimited = BudgetConfig {
            daily_tokens: 0,
            session_tokens: 0,
        };
        assert_eq!(
            store.budget_exhausted(&unlimited, Some(1), now).unwrap(),
            None
        );

        let report = store.spend_report(now - 2 * DAY_MS, now).unwrap();
        assert_eq!(report.by_day.len(), 2);
        assert_eq!(report.by_day[0].calls, 2);
        assert_eq!(report.by_project[0].key, "(no project)");
        assert_eq!(report.today_tokens, 150 + 1_050);
    }
}
