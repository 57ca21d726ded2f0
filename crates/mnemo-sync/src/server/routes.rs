//! Accounts, devices and spaces: register, join, revoke, list the caller's
//! spaces with their wrapped keys, create a shared space, invite, leave,
//! and rotate a space's key when members are removed.

use axum::Json;
use axum::extract::Path;
use axum::http::{HeaderMap, StatusCode};
use tokio_postgres::GenericClient;

use super::{ApiError, ApiResult, Caller, State, caller};
use crate::crypto::{b64, random, token_hash};
use crate::wire::*;

/// `GET /health`: the database answers.
pub(crate) async fn health(axum::extract::State(state): State) -> Result<&'static str, ApiError> {
    state.pool.get().await?.query_one("SELECT 1", &[]).await?;
    Ok("ok")
}

fn new_token() -> Result<String, ApiError> {
    random::<32>()
        .map(|b| b64(&b))
        .map_err(|e| ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, e.to_string()))
}

/// `POST /v1/register`: a person, their first device and personal space.
pub(crate) async fn register(
    axum::extract::State(state): State,
    Json(req): Json<Register>,
) -> ApiResult<Registered> {
    let (device_token, account_token) = (new_token()?, new_token()?);
    let mut conn = state.pool.get().await?;
    let tx = conn.transaction().await?;
    let user_id: i64 = tx
        .query_opt(
            "INSERT INTO users (public_key, account_token_hash) VALUES ($1, $2)
             ON CONFLICT (public_key) DO NOTHING RETURNING id",
            &[&req.public_key, &token_hash(&account_token)],
        )
        .await?
        .ok_or_else(|| {
            ApiError::new(
                StatusCode::CONFLICT,
                "this key is already registered; use join",
            )
        })?
        .get(0);
    let device_id = insert_device(&tx, user_id, &device_token).await?;
    let space: i64 = tx
        .query_one(
            "INSERT INTO spaces (kind, owner_id) VALUES ('personal', $1) RETURNING id",
            &[&user_id],
        )
        .await?
        .get(0);
    add_member(&tx, space, user_id, 1, &req.personal_key).await?;
    tx.commit().await?;
    Ok(Json(Registered {
        user_id,
        device_id,
        device_token,
        account_token,
        personal_space: space,
    }))
}

async fn insert_device(
    tx: &impl GenericClient,
    user: i64,
    token: &str,
) -> Result<i64, tokio_postgres::Error> {
    Ok(tx
        .query_one(
            "INSERT INTO devices (user_id, token_hash) VALUES ($1, $2) RETURNING id",
            &[&user, &token_hash(token)],
        )
        .await?
        .get(0))
}

async fn add_member(
    tx: &impl GenericClient,
    space: i64,
    user: i64,
    epoch: i64,
    wrapped: &str,
) -> Result<(), tokio_postgres::Error> {
    tx.execute(
        "INSERT INTO members (space_id, user_id) VALUES ($1, $2) ON CONFLICT DO NOTHING",
        &[&space, &user],
    )
    .await?;
    tx.execute(
        "INSERT INTO space_keys (space_id, user_id, epoch, wrapped) VALUES ($1, $2, $3, $4)
         ON CONFLICT (space_id, user_id, epoch) DO UPDATE SET wrapped = excluded.wrapped",
        &[&space, &user, &epoch, &wrapped],
    )
    .await?;
    Ok(())
}

/// `POST /v1/join`: another device of a registered person.
pub(crate) async fn join(
    axum::extract::State(state): State,
    Json(req): Json<Join>,
) -> ApiResult<Joined> {
    let device_token = new_token()?;
    let conn = state.pool.get().await?;
    let user_id: i64 = conn
        .query_opt(
            "SELECT id FROM users WHERE account_token_hash = $1",
            &[&token_hash(&req.account_token)],
        )
        .await?
        .ok_or_else(|| ApiError::new(StatusCode::UNAUTHORIZED, "unknown account in the key file"))?
        .get(0);
    let device_id = insert_device(&*conn, user_id, &device_token).await?;
    Ok(Json(Joined {
        user_id,
        device_id,
        device_token,
    }))
}

/// `DELETE /v1/device`: the caller's token stops working.
pub(crate) async fn revoke_device(
    axum::extract::State(state): State,
    headers: HeaderMap,
) -> Result<StatusCode, ApiError> {
    let me = caller(&state, &headers).await?;
    state
        .pool
        .get()
        .await?
        .execute(
            "UPDATE devices SET revoked_at = now() WHERE id = $1",
            &[&me.device],
        )
        .await?;
    Ok(StatusCode::NO_CONTENT)
}

/// `GET /v1/spaces`: the caller's spaces and every key wrapped for them.
pub(crate) async fn spaces(
    axum::extract::State(state): State,
    headers: HeaderMap,
) -> ApiResult<Spaces> {
    let me = caller(&state, &headers).await?;
    let conn = state.pool.get().await?;
    let rows = conn
        .query(
            "SELECT s.id, s.kind, s.epoch, s.owner_id = $1, s.label
             FROM spaces s JOIN members m ON m.space_id = s.id
             WHERE m.user_id = $1 ORDER BY s.id",
            &[&me.user],
        )
        .await?;
    let keys = conn
        .query(
            "SELECT k.space_id, k.epoch, k.wrapped FROM space_keys k
             JOIN members m ON m.space_id = k.space_id AND m.user_id = k.user_id
             WHERE k.user_id = $1 ORDER BY k.epoch",
            &[&me.user],
        )
        .await?;
    let spaces = rows
        .iter()
        .map(|r| {
            let id: i64 = r.get(0);
            SpaceInfo {
                space_id: id,
                kind: r.get(1),
                epoch: r.get(2),
                owner: r.get(3),
                label: r.get(4),
                keys: keys
                    .iter()
                    .filter(|k| k.get::<_, i64>(0) == id)
                    .map(|k| WrappedKey {
                        epoch: k.get(1),
                        wrapped: k.get(2),
                    })
                    .collect(),
            }
        })
        .collect();
    Ok(Json(Spaces {
        user_id: me.user,
        device_id: me.device,
        spaces,
    }))
}

/// `POST /v1/spaces`: a shared space owned by the caller.
pub(crate) async fn create_space(
    axum::extract::State(state): State,
    headers: HeaderMap,
    Json(req): Json<NewSpace>,
) -> ApiResult<SpaceCreated> {
    let me = caller(&state, &headers).await?;
    let mut conn = state.pool.get().await?;
    let tx = conn.transaction().await?;
    let space_id: i64 = tx
        .query_one(
            "INSERT INTO spaces (kind, owner_id, label) VALUES ('shared', $1, $2) RETURNING id",
            &[&me.user, &req.label],
        )
        .await?
        .get(0);
    add_member(&tx, space_id, me.user, 1, &req.wrapped_key).await?;
    tx.commit().await?;
    Ok(Json(SpaceCreated { space_id }))
}

/// The space's current epoch and owner, when the caller is a member.
pub(crate) async fn membership(
    conn: &impl GenericClient,
    space: i64,
    me: Caller,
    lock: bool,
) -> Result<(i64, i64), ApiError> {
    let sql = format!(
        "SELECT s.epoch, s.owner_id FROM spaces s JOIN members m ON m.space_id = s.id
         WHERE s.id = $1 AND m.user_id = $2{}",
        if lock { " FOR UPDATE OF s" } else { "" }
    );
    let row = conn
        .query_opt(&sql, &[&space, &me.user])
        .await?
        .ok_or_else(|| ApiError::new(StatusCode::FORBIDDEN, "not a member of this space"))?;
    Ok((row.get(0), row.get(1)))
}

/// `GET /v1/spaces/{id}/members`.
pub(crate) async fn members(
    axum::extract::State(state): State,
    headers: HeaderMap,
    Path(space): Path<i64>,
) -> ApiResult<Members> {
    let me = caller(&state, &headers).await?;
    let conn = state.pool.get().await?;
    membership(&*conn, space, me, false).await?;
    let rows = conn
        .query(
            "SELECT u.id, u.public_key FROM members m JOIN users u ON u.id = m.user_id
             WHERE m.space_id = $1 ORDER BY u.id",
            &[&space],
        )
        .await?;
    Ok(Json(Members {
        members: rows
            .iter()
            .map(|r| Member {
                user_id: r.get(0),
                public_key: r.get(1),
            })
            .collect(),
    }))
}

async fn owned_shared_space(
    tx: &impl GenericClient,
    space: i64,
    me: Caller,
) -> Result<i64, ApiError> {
    let (epoch, owner) = membership(tx, space, me, true).await?;
    if owner != me.user {
        return Err(ApiError::new(
            StatusCode::FORBIDDEN,
            "only the space's owner may do that",
        ));
    }
    Ok(epoch)
}

async fn user_by_key(tx: &impl GenericClient, public_key: &str) -> Result<i64, ApiError> {
    Ok(tx
        .query_opt("SELECT id FROM users WHERE public_key = $1", &[&public_key])
        .await?
        .ok_or_else(|| {
            ApiError::new(
                StatusCode::NOT_FOUND,
                "nobody registered with that public key",
            )
        })?
        .get(0))
}

/// `POST /v1/spaces/{id}/members`: the owner adds a registered person,
/// with the space's keys wrapped for them.
pub(crate) async fn invite(
    axum::extract::State(state): State,
    headers: HeaderMap,
    Path(space): Path<i64>,
    Json(req): Json<Invite>,
) -> Result<StatusCode, ApiError> {
    let me = caller(&state, &headers).await?;
    let mut conn = state.pool.get().await?;
    let tx = conn.transaction().await?;
    owned_shared_space(&tx, space, me).await?;
    let user = user_by_key(&tx, &req.public_key).await?;
    for key in &req.keys {
        add_member(&tx, space, user, key.epoch, &key.wrapped).await?;
    }
    tx.commit().await?;
    Ok(StatusCode::NO_CONTENT)
}

/// `DELETE /v1/spaces/{id}/members/self`: leave a shared space.
pub(crate) async fn leave(
    axum::extract::State(state): State,
    headers: HeaderMap,
    Path(space): Path<i64>,
) -> Result<StatusCode, ApiError> {
    let me = caller(&state, &headers).await?;
    let conn = state.pool.get().await?;
    let (_, owner) = membership(&*conn, space, me, false).await?;
    if owner == me.user {
        return Err(ApiError::new(
            StatusCode::CONFLICT,
            "the owner cannot leave their own space",
        ));
    }
    conn.execute(
        "DELETE FROM members WHERE space_id = $1 AND user_id = $2",
        &[&space, &me.user],
    )
    .await?;
    Ok(StatusCode::NO_CONTENT)
}

/// `POST /v1/spaces/{id}/rotate`: removes members and moves the space to a
/// new key epoch, wrapped for those who stay; the removed get nothing new.
pub(crate) async fn rotate(
    axum::extract::State(state): State,
    headers: HeaderMap,
    Path(space): Path<i64>,
    Json(req): Json<Rotate>,
) -> Result<StatusCode, ApiError> {
    let me = caller(&state, &headers).await?;
    let mut conn = state.pool.get().await?;
    let tx = conn.transaction().await?;
    let epoch = owned_shared_space(&tx, space, me).await?;
    if req.epoch != epoch + 1 {
        return Err(ApiError::new(
            StatusCode::CONFLICT,
            "the space's epoch moved; retry",
        ));
    }
    for key in &req.remove {
        let user = user_by_key(&tx, key).await?;
        if user == me.user {
            return Err(ApiError::new(
                StatusCode::CONFLICT,
                "the owner cannot remove themself",
            ));
        }
        tx.execute(
            "DELETE FROM members WHERE space_id = $1 AND user_id = $2",
            &[&space, &user],
        )
        .await?;
    }
    for key in &req.keys {
        let user = user_by_key(&tx, &key.public_key).await?;
        add_member(&tx, space, user, req.epoch, &key.wrapped).await?;
    }
    tx.execute(
        "UPDATE spaces SET epoch = $2 WHERE id = $1",
        &[&space, &req.epoch],
    )
    .await?;
    tx.commit().await?;
    Ok(StatusCode::NO_CONTENT)
}
