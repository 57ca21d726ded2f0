//! Curation over HTTP: forget, edit, pin, redact (the same operations as
//! `mnemo forget|edit|pin|redact`, through [`mnemo_recall::curate`] and
//! [`mnemo_store::curate`]). Every route here changes the memory, so the
//! guards refuse it without the token or from another site (see
//! [`super::guard`]). Edits and pins answer with the observation in the one
//! record shape ([`mnemo_store::shape`]).

use std::path::Path as FsPath;

use axum::Json;
use axum::extract::rejection::JsonRejection;
use axum::extract::{Path, State};
use mnemo_recall::curate::{self, ForgetRequest};
use mnemo_store::curate::{CurateError, Edit};
use mnemo_store::scrub::Forgotten;
use mnemo_store::shape::{self, ObservationRecord};
use serde::Deserialize;
use serde_json::{Value, json};

use super::{ApiError, AppState};

impl From<CurateError> for ApiError {
    fn from(e: CurateError) -> ApiError {
        match e {
            CurateError::Unknown(ids) => ApiError::not_found(format!(
                "no such item: {} (nothing was changed)",
                ids.join(", ")
            ))
            .with("missing", json!(ids)),
            CurateError::Invalid(message) => ApiError::bad_request(message),
            CurateError::Store(e) => e.into(),
        }
    }
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ForgetBody {
    /// Ids as numbers or text: `12`, `"#12"`, `"S3"`, `"P7"`.
    #[serde(default)]
    pub ids: Vec<Value>,
    pub session: Option<String>,
    pub project: Option<String>,
    #[serde(default)]
    pub dry_run: bool,
}

/// `POST /api/forget` with exactly one of `ids`, `session`, `project`, and
/// `dry_run`: `{"dry_run": bool, "removed": {"observations": n, ...},
/// "files": {...}, "remaining": [...]}` (files outside the database the
/// forget reached, and those that may still hold a copy; each omitted when
/// empty).
pub async fn forget(
    State(app): State<AppState>,
    body: Result<Json<ForgetBody>, JsonRejection>,
) -> Result<Json<Value>, ApiError> {
    let Json(body) = body.map_err(|e| ApiError::bad_request(e.body_text()))?;
    let ids: Vec<String> = body
        .ids
        .iter()
        .map(|v| match v {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        })
        .collect();
    let dry_run = body.dry_run;
    let data = app.data.clone();
    let forgotten: Forgotten = app
        .db(move |store| {
            let request = ForgetRequest {
                ids: &ids,
                session: body.session.as_deref(),
                project: body.project.as_deref(),
            };
            let target = curate::forget_target(store, &request, FsPath::new("/"))?;
            Ok(store.forget_everywhere(&data, &target, dry_run)?)
        })
        .await?;
    let mut answer = json!(forgotten);
    answer["dry_run"] = json!(dry_run);
    Ok(Json(answer))
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EditBody {
    pub title: Option<String>,
    pub subtitle: Option<String>,
    pub narrative: Option<String>,
    pub facts: Option<Vec<String>>,
    #[serde(rename = "type")]
    pub obs_type: Option<String>,
}

/// `PATCH /api/observations/{id}` with any of `title`, `subtitle`,
/// `narrative`, `facts`, `type`: the edited observation.
pub async fn edit(
    State(app): State<AppState>,
    Path(id): Path<String>,
    body: Result<Json<EditBody>, JsonRejection>,
) -> Result<Json<ObservationRecord>, ApiError> {
    let Json(body) = body.map_err(|e| ApiError::bad_request(e.body_text()))?;
    let id = curate::observation_id(&id)?;
    app.db(move |store| {
        let obs_type = match &body.obs_type {
            Some(t) => Some(curate::observation_type(store, t)?),
            None => None,
        };
        let edit = Edit {
            title: body.title,
            subtitle: body.subtitle,
            narrative: body.narrative,
            facts: body.facts,
            obs_type,
        };
        if edit.is_empty() {
            return Err(ApiError::bad_request(
                "nothing to change: send any of title, subtitle, narrative, facts, type",
            ));
        }
        store.edit_observation(id, &edit)?;
        record(store, id)
    })
    .await
    .map(Json)
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PinBody {
    pub pinned: bool,
}

/// `PUT /api/observations/{id}/pin` with `{"pinned": bool}`: the observation.
pub async fn pin(
    State(app): State<AppState>,
    Path(id): Path<String>,
    body: Result<Json<PinBody>, JsonRejection>,
) -> Result<Json<ObservationRecord>, ApiError> {
    let Json(body) = body.map_err(|e| ApiError::bad_request(e.body_text()))?;
    let id = curate::observation_id(&id)?;
    app.db(move |store| {
        store.pin_observation(id, body.pinned)?;
        record(store, id)
    })
    .await
    .map(Json)
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RedactBody {
    pub text: String,
}

/// `POST /api/redact` with `{"text": "..."}`: `{"replaced": n, "places":
/// {"<table>": n, ...}}`.
pub async fn redact(
    State(app): State<AppState>,
    body: Result<Json<RedactBody>, JsonRejection>,
) -> Result<Json<Value>, ApiError> {
    let Json(body) = body.map_err(|e| ApiError::bad_request(e.body_text()))?;
    let data = app.data.clone();
    let redacted = app
        .db(move |store| Ok(store.redact_everywhere(&data, &body.text)?))
        .await?;
    Ok(Json(json!(redacted)))
}

fn record(store: &mnemo_store::Store, id: i64) -> Result<ObservationRecord, ApiError> {
    shape::observation(store.conn(), id)?
        .ok_or_else(|| ApiError::not_found(format!("no observation #{id}")))
}
