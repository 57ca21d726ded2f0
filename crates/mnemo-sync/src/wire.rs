//! The wire protocol: JSON over HTTP, one struct per request and answer,
//! shared by the client and the server. Binary values (keys, blobs) are
//! URL-safe base64. Every route but register, join, `/health` and
//! `/metrics` takes `Authorization: Bearer <device token>`.
//!
//! Routes:
//! - `POST /v1/register` [`Register`] → [`Registered`]
//! - `POST /v1/join` [`Join`] → [`Joined`]
//! - `DELETE /v1/device`: revokes the calling device's token
//! - `GET /v1/spaces` → [`Spaces`] (the caller's spaces and wrapped keys)
//! - `POST /v1/spaces` [`NewSpace`] → [`SpaceCreated`]
//! - `GET /v1/spaces/{id}/members` → [`Members`]
//! - `POST /v1/spaces/{id}/members` [`Invite`]
//! - `POST /v1/spaces/{id}/rotate` [`Rotate`] (removes members, new epoch)
//! - `DELETE /v1/spaces/{id}/members/self`: leave a shared space
//! - `POST /v1/spaces/{id}/records` [`Push`] → [`Pushed`]
//! - `GET /v1/spaces/{id}/records?after=ID&limit=N` → [`Pulled`]

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Register {
    /// The person's X25519 public key.
    pub public_key: String,
    /// The personal space's first key, wrapped for `public_key`.
    pub personal_key: String,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Registered {
    pub user_id: i64,
    pub device_id: i64,
    pub device_token: String,
    /// Lets another machine of the same person join; kept in the key file.
    pub account_token: String,
    pub personal_space: i64,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Join {
    pub account_token: String,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Joined {
    pub user_id: i64,
    pub device_id: i64,
    pub device_token: String,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct WrappedKey {
    pub epoch: i64,
    pub wrapped: String,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SpaceInfo {
    pub space_id: i64,
    /// `personal` or `shared`.
    pub kind: String,
    /// The key epoch new records must use.
    pub epoch: i64,
    pub owner: bool,
    /// Sealed under the space key (epoch 1): what the space is about.
    pub label: Option<String>,
    pub keys: Vec<WrappedKey>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Spaces {
    pub user_id: i64,
    pub device_id: i64,
    pub spaces: Vec<SpaceInfo>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct NewSpace {
    pub wrapped_key: String,
    pub label: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SpaceCreated {
    pub space_id: i64,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Member {
    pub user_id: i64,
    pub public_key: String,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Members {
    pub members: Vec<Member>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Invite {
    pub public_key: String,
    /// The current epoch's key wrapped for `public_key`.
    pub keys: Vec<WrappedKey>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct MemberKey {
    pub public_key: String,
    pub wrapped: String,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Rotate {
    /// Public keys of the members removed.
    pub remove: Vec<String>,
    /// The new epoch (the current one plus one).
    pub epoch: i64,
    /// The new key wrapped for every member who stays.
    pub keys: Vec<MemberKey>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PushRecord {
    pub seq: i64,
    pub epoch: i64,
    pub record_key: String,
    /// Older names of the same record (under earlier epochs' keys): the
    /// server drops their blobs too.
    #[serde(default)]
    pub replaces: Vec<String>,
    pub blob: String,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Push {
    pub records: Vec<PushRecord>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Pushed {
    /// The highest sequence number the server holds for this device and
    /// space: everything up to it is stored (or was superseded).
    pub head: i64,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PulledRecord {
    pub id: i64,
    pub device_id: i64,
    pub seq: i64,
    pub epoch: i64,
    pub record_key: String,
    pub blob: String,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Pulled {
    pub records: Vec<PulledRecord>,
    /// More records wait after the last one.
    pub more: bool,
}

/// The body of every error answer.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ErrorBody {
    pub error: String,
}
