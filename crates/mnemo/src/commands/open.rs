//! `mnemo open`: the web viewer in the browser.
//!
//! Starts the worker when none is running, asks it (with the token from
//! `worker.json`) for a one-time sign-in link, and opens that link in the
//! browser: `$BROWSER` when set, else the system's opener (`xdg-open`,
//! `open`, `start`). The browser is given a private file (mode 0600, in the
//! data directory) that redirects to the link, never the link itself: a
//! command line is visible to every local user, who could redeem the link
//! first. The link is printed instead with `--print` or when no browser
//! could be started; it works once, for two minutes.

use std::process::{Command, Stdio};
use std::time::Duration;

use anyhow::{Context as _, Result, bail};
use mnemo_worker::{Liveness, WorkerInfo, client, probe};

use crate::cli::OpenArgs;
use crate::commands::worker::{PROBE_TIMEOUT, wait_until_healthy};
use crate::output::data_and_config;

const START_TIMEOUT: Duration = Duration::from_secs(20);

pub fn run(args: OpenArgs) -> Result<i32> {
    let (data, _config) = data_and_config()?;
    let info = running_worker(&data)?;
    let url = login_link(&info)?;
    if args.print {
        println!("{url}");
        return Ok(0);
    }
    let opened = redirect_file(&data, &url)
        .map_err(|e| format!("cannot write the sign-in page: {e}"))
        .and_then(|page| open_in_browser(&page));
    match opened {
        Ok(()) => {
            println!(
                "opened the viewer in your browser (worker on 127.0.0.1:{})",
                info.port
            );
        }
        Err(why) => {
            eprintln!(
                "mnemo: could not open a browser ({why}); open this link, valid once for 2 minutes:"
            );
            println!("{url}");
        }
    }
    Ok(0)
}

/// The healthy worker of this data directory, started if needed.
fn running_worker(data: &mnemo_core::DataDir) -> Result<WorkerInfo> {
    if let Liveness::Running {
        info,
        health: Ok(_),
    } = probe(data, PROBE_TIMEOUT)?
    {
        return Ok(*info);
    }
    let mut child = mnemo_capture::worker_start::spawn_detached(data)
        .context("cannot spawn `mnemo worker run`")?;
    wait_until_healthy(data, &mut child, START_TIMEOUT)
}

/// A fresh one-time sign-in link from the worker.
fn login_link(info: &WorkerInfo) -> Result<String> {
    let response = client::request(
        info.port,
        "POST",
        "/api/viewer/link",
        Some(&info.token),
        Some("{}"),
        PROBE_TIMEOUT,
    )
    .with_context(|| format!("no answer from the worker on 127.0.0.1:{}", info.port))?;
    if response.status != 200 {
        bail!(
            "the worker refused a sign-in link ({}): {}",
            response.status,
            response.body
        );
    }
    response
        .json()
        .and_then(|j| j["url"].as_str().map(str::to_owned))
        .context("the worker's answer has no link")
}

/// Writes a page that redirects to `url` into a file only the user can read;
/// its `file://` URL.
fn redirect_file(data: &mnemo_core::DataDir, url: &str) -> std::io::Result<String> {
    std::fs::create_dir_all(data.root())?;
    let path = data.root().join("viewer-login.html");
    let _ = std::fs::remove_file(&path);
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let page = format!(
        "<!doctype html><meta charset=\"utf-8\"><meta http-equiv=\"refresh\" content=\"0;url={url}\">\
         <title>mnemo</title><a href=\"{url}\">Open the mnemo viewer</a>\n"
    );
    std::io::Write::write_all(&mut options.open(&path)?, page.as_bytes())?;
    let path = std::fs::canonicalize(&path)?;
    let shown = path
        .to_string_lossy()
        .replace('\\', "/")
        .replace(' ', "%20");
    Ok(if shown.starts_with('/') {
        format!("file://{shown}")
    } else {
        format!("file:///{shown}")
    })
}

/// Starts the browser on `url`; why not, when it cannot.
fn open_in_browser(url: &str) -> std::result::Result<(), String> {
    let mut command = match std::env::var("BROWSER")
        .ok()
        .filter(|b| !b.trim().is_empty())
    {
        Some(browser) => {
            let mut c = Command::new(browser.trim());
            c.arg(url);
            c
        }
        None => system_opener(url),
    };
    let status = command
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .map_err(|e| format!("{:?}: {e}", command.get_program()))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("{:?} exited with {status}", command.get_program()))
    }
}

#[cfg(target_os = "macos")]
fn system_opener(url: &str) -> Command {
    let mut c = Command::new("open");
    c.arg(url);
    c
}

#[cfg(windows)]
fn system_opener(url: &str) -> Command {
    let mut c = Command::new("cmd");
    c.args(["/c", "start", "", url]);
    c
}

#[cfg(not(any(target_os = "macos", windows)))]
fn system_opener(url: &str) -> Command {
    let mut c = Command::new("xdg-open");
    c.arg(url);
    c
}
