//! The `embeddings` check: search by meaning off, or on with its endpoint,
//! model, how many records have a vector of that model, and the background
//! job's last error. Broken settings are a warning that says what to set;
//! doctor never calls the endpoint.

use std::time::Duration;

use mnemo_core::config::EmbeddingsConfig;
use mnemo_core::{Config, DataDir};
use mnemo_store::Store;
use mnemo_store::vectors::{self, VectorStatus};

use super::{Check, Status};

const NAME: &str = "embeddings";

pub(super) fn check(data: &DataDir, config: &Config) -> Check {
    let e = &config.embeddings;
    if !e.requested() {
        return Check::ok(
            NAME,
            "off (full-text search only; set [embeddings] base_url and model to add search by meaning)",
        );
    }
    if let Err(problem) = e.check() {
        return Check::problem(
            NAME,
            Status::Warn,
            format!("{problem}; search is full-text only until then"),
            "fix [embeddings] in config.toml (or the MNEMO_EMBEDDINGS_* variables), then `mnemo worker restart`",
        );
    }
    let busy = Duration::from_millis(config.store.busy_timeout_ms);
    let status = Store::open_read_only(&data.db_path(), busy)
        .ok()
        .filter(|s| vectors::has_vectors_table(s.conn()))
        .and_then(|s| vectors::status(s.conn(), e.model.trim()).ok())
        .unwrap_or_default();
    on(e, &status)
}

fn on(e: &EmbeddingsConfig, s: &VectorStatus) -> Check {
    let mut detail = format!(
        "on: {}/embeddings, model {}; {} of {} records have a vector",
        e.base_url.trim().trim_end_matches('/'),
        e.model.trim(),
        s.vectors,
        s.records
    );
    if s.other_models > 0 {
        detail.push_str(&format!(
            " ({} of another model, to be replaced)",
            s.other_models
        ));
    }
    match &s.last_error {
        None => Check::ok(NAME, detail),
        Some(error) => Check::problem(
            NAME,
            Status::Warn,
            format!("{detail}; last error: {error}"),
            "check that the endpoint is up and serves this model; the worker retries by itself, \
             and search stays full-text meanwhile",
        ),
    }
}
