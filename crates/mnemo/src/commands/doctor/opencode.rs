//! The `opencode version` check: whether the OpenCode on PATH loads and calls mnemo's plugin.
//!
//! OpenCode gives plugins no stable ABI across major versions, so the plugin is written for the
//! range [`mnemo_install::opencode::support`] names; this asks the installed `opencode` its
//! version (bounded in time: a broken install must not hang doctor) and says clearly when it is
//! outside that range.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use mnemo_install::opencode::{MIN_VERSION, Support, support};

use super::{Check, Status};

const NAME: &str = "opencode version";

/// How long `opencode --version` may take.
const TIMEOUT: Duration = Duration::from_secs(5);

/// The check for the `opencode` at `binary`.
pub(super) fn version_check(binary: &Path) -> Check {
    let (major, minor, patch) = MIN_VERSION;
    let range = format!(
        "{major}.{minor}.{patch} to {}.x",
        mnemo_install::opencode::MAX_MAJOR
    );
    match version_output(binary) {
        Err(why) => Check::problem(
            NAME,
            Status::Warn,
            format!("could not ask {} its version: {why}", binary.display()),
            format!(
                "check that `opencode --version` works; mnemo's plugin supports OpenCode {range}"
            ),
        ),
        Ok(text) => match support(&text) {
            Support::Supported(v) => Check::ok(
                NAME,
                format!("OpenCode {v}: mnemo's plugin supports it ({range})"),
            ),
            Support::Unsupported(v, why) => Check::problem(
                NAME,
                Status::Fail,
                format!("OpenCode {v} is not supported: {why}"),
                format!("use OpenCode {range}"),
            ),
            Support::Unknown(text) => Check::problem(
                NAME,
                Status::Warn,
                format!("`opencode --version` printed {text:?}, not a version mnemo can read"),
                format!("mnemo's plugin supports OpenCode {range}"),
            ),
        },
    }
}

fn version_output(binary: &Path) -> Result<String, String> {
    let mut child = Command::new(binary)
        .arg("--version")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| e.to_string())?;
    let started = Instant::now();
    loop {
        match child.try_wait().map_err(|e| e.to_string())? {
            Some(_) => break,
            None if started.elapsed() > TIMEOUT => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!("no answer within {TIMEOUT:?}"));
            }
            None => std::thread::sleep(Duration::from_millis(20)),
        }
    }
    let out = child.wait_with_output().map_err(|e| e.to_string())?;
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}
