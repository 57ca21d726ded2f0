//! Pushing and pulling blobs. A push is one transaction holding the space's
//! row lock, so record ids grow in commit order within a space and a pull
//! by "after id" never skips a record. Each device's sequence numbers must
//! follow on from the last one stored: a replayed number is ignored (it is
//! already stored), a gap is refused. A new version of a record (same
//! keyed name) deletes the blobs it replaces, so a forgotten or redacted
//! text leaves the server's tables too.

use axum::Json;
use axum::extract::{Path, Query};
use axum::http::{HeaderMap, StatusCode};
use serde::Deserialize;
use tokio_postgres::Transaction;

use super::routes::membership;
use super::{ApiError, ApiResult, Caller, State, caller};
use crate::crypto::{b64, unb64};
use crate::wire::{Pulled, PulledRecord, Push, PushRecord, Pushed};

/// `POST /v1/spaces/{id}/records`.
pub(crate) async fn push(
    axum::extract::State(state): State,
    headers: HeaderMap,
    Path(space): Path<i64>,
    Json(req): Json<Push>,
) -> ApiResult<Pushed> {
    let me = caller(&state, &headers).await?;
    let mut conn = state.pool.get().await?;
    let tx = conn.transaction().await?;
    let (epoch, _) = membership(&tx, space, me, true).await?;
    let outcome = store_records(
        &tx,
        space,
        me,
        epoch,
        &req.records,
        state.config.space_quota_bytes,
    )
    .await;
    match outcome {
        Ok((head, stored)) => {
            tx.commit().await?;
            state.metrics.pushed(stored);
            Ok(Json(Pushed { head }))
        }
        Err(e) => {
            state.metrics.refused();
            Err(e)
        }
    }
}

/// Stores the records that follow the device's head; the new head and how
/// many were stored.
async fn store_records(
    tx: &Transaction<'_>,
    space: i64,
    me: Caller,
    epoch: i64,
    records: &[PushRecord],
    quota: i64,
) -> Result<(i64, usize), ApiError> {
    let mut head: i64 = tx
        .query_opt(
            "SELECT seq FROM heads WHERE space_id = $1 AND device_id = $2",
            &[&space, &me.device],
        )
        .await?
        .map_or(0, |r| r.get(0));
    let mut fresh: Vec<&PushRecord> = Vec::new();
    let stored_head = head;
    for record in records.iter().filter(|r| r.seq > stored_head) {
        check_record(record, head, epoch)?;
        head = record.seq;
        // An older version in the same batch is superseded already.
        fresh.retain(|r| r.record_key != record.record_key);
        fresh.push(record);
    }
    let delta = replace_records(tx, space, me.device, &fresh).await?;
    tx.execute(
        "INSERT INTO heads (space_id, device_id, seq) VALUES ($1, $2, $3)
         ON CONFLICT (space_id, device_id) DO UPDATE SET seq = excluded.seq",
        &[&space, &me.device, &head],
    )
    .await?;
    let used: i64 = tx
        .query_one(
            "UPDATE spaces SET used_bytes = used_bytes + $2 WHERE id = $1 RETURNING used_bytes",
            &[&space, &delta],
        )
        .await?
        .get(0);
    if delta > 0 && used > quota {
        return Err(ApiError::new(
            StatusCode::INSUFFICIENT_STORAGE,
            format!("the space is over its quota of {quota} bytes"),
        ));
    }
    Ok((head, fresh.len()))
}

fn check_record(record: &PushRecord, head: i64, epoch: i64) -> Result<(), ApiError> {
    if record.seq != head + 1 {
        return Err(ApiError::new(
            StatusCode::CONFLICT,
            format!("sequence gap: expected {}, got {}", head + 1, record.seq),
        ));
    }
    if record.epoch != epoch {
        return Err(ApiError::new(
            StatusCode::CONFLICT,
            format!(
                "stale key epoch {} (the space is at {epoch}); refresh keys",
                record.epoch
            ),
        ));
    }
    Ok(())
}

/// Deletes the blobs these records replace and stores them, in two
/// statements; the change in bytes held.
async fn replace_records(
    tx: &Transaction<'_>,
    space: i64,
    device: i64,
    records: &[&PushRecord],
) -> Result<i64, ApiError> {
    if records.is_empty() {
        return Ok(0);
    }
    let names: Vec<&str> = records
        .iter()
        .flat_map(|r| r.replaces.iter().chain([&r.record_key]).map(String::as_str))
        .collect();
    let freed: i64 = tx
        .query_one(
            "WITH gone AS (DELETE FROM records WHERE space_id = $1 AND record_key = ANY($2)
                           RETURNING size)
             SELECT coalesce(sum(size), 0)::BIGINT FROM gone",
            &[&space, &names],
        )
        .await?
        .get(0);
    let blobs = records
        .iter()
        .map(|r| unb64(&r.blob))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|_| ApiError::new(StatusCode::BAD_REQUEST, "a blob is not base64"))?;
    let sizes: Vec<i32> = blobs.iter().map(|b| b.len() as i32).collect();
    let seqs: Vec<i64> = records.iter().map(|r| r.seq).collect();
    let epochs: Vec<i64> = records.iter().map(|r| r.epoch).collect();
    let keys: Vec<&str> = records.iter().map(|r| r.record_key.as_str()).collect();
    tx.execute(
        "INSERT INTO records (space_id, device_id, seq, epoch, record_key, blob, size)
         SELECT $1, $2, * FROM unnest($3::BIGINT[], $4::BIGINT[], $5::TEXT[], $6::BYTEA[],
                                      $7::INTEGER[])",
        &[&space, &device, &seqs, &epochs, &keys, &blobs, &sizes],
    )
    .await?;
    Ok(sizes.iter().map(|s| i64::from(*s)).sum::<i64>() - freed)
}

#[derive(Debug, Deserialize)]
pub(crate) struct PullQuery {
    #[serde(default)]
    after: i64,
    limit: Option<i64>,
}

/// `GET /v1/spaces/{id}/records?after=ID&limit=N`.
pub(crate) async fn pull(
    axum::extract::State(state): State,
    headers: HeaderMap,
    Path(space): Path<i64>,
    Query(q): Query<PullQuery>,
) -> ApiResult<Pulled> {
    let me = caller(&state, &headers).await?;
    let conn = state.pool.get().await?;
    membership(&*conn, space, me, false).await?;
    let limit = q.limit.unwrap_or(1000).clamp(1, 5000);
    let rows = conn
        .query(
            // The caller's own blobs come back empty: it has them.
            "SELECT id, device_id, seq, epoch, record_key,
                    CASE WHEN device_id = $4 THEN ''::BYTEA ELSE blob END
             FROM records WHERE space_id = $1 AND id > $2 ORDER BY id LIMIT $3",
            &[&space, &q.after, &(limit + 1), &me.device],
        )
        .await?;
    let more = rows.len() as i64 > limit;
    let records: Vec<PulledRecord> = rows
        .iter()
        .take(limit as usize)
        .map(|r| PulledRecord {
            id: r.get(0),
            device_id: r.get(1),
            seq: r.get(2),
            epoch: r.get(3),
            record_key: r.get(4),
            blob: b64(r.get::<_, &[u8]>(5)),
        })
        .collect();
    state.metrics.pulled(records.len());
    Ok(Json(Pulled { records, more }))
}
