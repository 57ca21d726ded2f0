//! `GET /api/doctor`: the checks of `mnemo doctor`, for the viewer's
//! health page.
//!
//! The checks live in the CLI, and the worker is that same binary, so the
//! worker runs itself as `mnemo doctor --json` on this data directory
//! rather than knowing the checks twice. The report is passed through as
//! it is, with the exit status (0 ok, 1 a warning, 2 a failure).

use std::process::{Command, Stdio};
use std::time::Duration;

use axum::Json;
use axum::extract::State;
use serde_json::{Value, json};

use super::{ApiError, AppState};

/// Doctor probes the worker and the store; it answers within seconds.
const TIMEOUT: Duration = Duration::from_secs(20);

pub async fn doctor(State(app): State<AppState>) -> Result<Json<Value>, ApiError> {
    let data_dir = app.data.root().to_path_buf();
    let run = tokio::task::spawn_blocking(move || -> Result<(Option<i32>, Vec<u8>), String> {
        let exe = std::env::current_exe().map_err(|e| format!("cannot find my own binary: {e}"))?;
        let child = Command::new(exe)
            .args(["doctor", "--json"])
            .env("MNEMO_DATA_DIR", &data_dir)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| format!("cannot run `mnemo doctor --json`: {e}"))?;
        let out = child
            .wait_with_output()
            .map_err(|e| format!("`mnemo doctor --json` failed: {e}"))?;
        Ok((out.status.code(), out.stdout))
    });
    let (code, stdout) = tokio::time::timeout(TIMEOUT, run)
        .await
        .map_err(|_| ApiError::internal("`mnemo doctor --json` took too long"))?
        .map_err(|e| ApiError::internal(format!("doctor task: {e}")))?
        .map_err(ApiError::internal)?;
    let report: Value = serde_json::from_slice(&stdout).map_err(|e| {
        ApiError::internal(format!("`mnemo doctor --json` did not print JSON: {e}"))
    })?;
    Ok(Json(json!({ "exit_code": code, "report": report })))
}
