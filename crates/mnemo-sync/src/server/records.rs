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
    let (mut delta, mut stored) = (0i64, 0usize);
    for record in records {
        if record.seq <= head {
            continue;
        }
        check_record(record, head, epoch)?;
        let blob = unb64(&record.blob)
            .map_err(|_| ApiError::new(StatusCode::BAD_REQUEST, "a blob is not base64"))?;
        delta += replace_record(tx, space, me.device, record, &blob).await?;
        head = record.seq;
        stored += 1;
    }
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
    Ok((head, stored))
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

/// Deletes the blobs this record replaces and stores it; the change in
/// bytes held.
async fn replace_record(
    tx: &Transaction<'_>,
    space: i64,
    device: i64,
    record: &PushRecord,
    blob: &[u8],
) -> Result<i64, tokio_postgres::Error> {
    let mut names = record.replaces.clone();
    names.push(record.record_key.clone());
    let freed: i64 = tx
        .query_one(
            "WITH gone AS (DELETE FROM records WHERE space_id = $1 AND record_key = ANY($2)
                           RETURNING size)
             SELECT coalesce(sum(size), 0)::BIGINT FROM gone",
            &[&space, &names],
        )
        .await?
        .get(0);
    let size = blob.len() as i32;
    tx.execute(
        "INSERT INTO records (space_id, device_id, seq, epoch, record_key, blob, size)
         VALUES ($1, $2, $3, $4, $5, $6, $7)",
        &[
            &space,
            &device,
            &record.seq,
            &record.epoch,
            &record.record_key,
            &blob,
            &size,
        ],
    )
    .await?;
    Ok(i64::from(size) - freed)
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
            "SELECT id, device_id, seq, epoch, record_key, blob FROM records
             WHERE space_id = $1 AND id > $2 ORDER BY id LIMIT $3",
            &[&space, &q.after, &(limit + 1)],
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
