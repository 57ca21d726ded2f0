//! A real headless Chromium, driven over W3C WebDriver.
//!
//! [`Browser::launch`] starts `chromedriver` on a free loopback port and one
//! headless Chromium session through it; requests are plain blocking
//! HTTP/1.1 on loopback (one connection each), so tests stay synchronous
//! and need no client library. Only what the viewer's tests use is here:
//! navigation, finding elements by CSS, clicks, typing, text, scripts,
//! cookies and screenshots, and polling with deadlines.
//!
//! Chromium is optional on a developer's machine and required in CI:
//! [`Browser::launch`] returns `None` (after saying why on stderr) only when
//! `chromedriver` or Chromium is missing and `CI` is unset; under `CI` a
//! missing browser is an error.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context as _, Result, anyhow, bail};
use serde_json::{Value, json};

const REQUEST_TIMEOUT: Duration = Duration::from_secs(60);

/// A found element.
#[derive(Debug, Clone)]
pub struct Element(String);

/// One headless Chromium session; the browser and its driver end on drop.
pub struct Browser {
    driver: Child,
    port: u16,
    session: String,
    _profile: tempfile::TempDir,
}

fn find_program(names: &[&str]) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .flat_map(|dir| names.iter().map(move |n| dir.join(n)))
        .find(|p| p.is_file())
}

/// A home of the browser's own inside its profile folder: Chromium writes
/// crash-report settings, desktop menus and MIME data under `$HOME` and the
/// XDG folders whatever its `--user-data-dir`, and a test leaves the real
/// home as it found it.
fn scratch_home(profile: &Path) -> Result<Vec<(&'static str, PathBuf)>> {
    let vars = [
        ("HOME", "home"),
        ("XDG_CONFIG_HOME", "home/.config"),
        ("XDG_CACHE_HOME", "home/.cache"),
        ("XDG_DATA_HOME", "home/.local/share"),
        ("XDG_STATE_HOME", "home/.local/state"),
    ];
    let mut envs = Vec::with_capacity(vars.len());
    for (var, dir) in vars {
        let path = profile.join(dir);
        std::fs::create_dir_all(&path)?;
        envs.push((var, path));
    }
    Ok(envs)
}

fn free_port() -> Result<u16> {
    Ok(TcpListener::bind("127.0.0.1:0")?.local_addr()?.port())
}

impl Browser {
    /// Starts Chromium, or None when it is not installed and `CI` is unset.
    pub fn launch() -> Result<Option<Browser>> {
        let driver = find_program(&["chromedriver", "chromium-driver"]);
        let chromium = find_program(&["chromium", "chromium-browser", "google-chrome"]);
        let (Some(driver), Some(chromium)) = (driver, chromium) else {
            let why = "chromium and chromedriver are not installed (Debian: apt-get install chromium chromium-driver)";
            if std::env::var_os("CI").is_some() {
                bail!("{why}; CI is set, so the browser tests cannot be skipped");
            }
            eprintln!("SKIPPED: {why}");
            return Ok(None);
        };
        Browser::start(&driver, &chromium).map(Some)
    }

    fn start(driver: &Path, chromium: &Path) -> Result<Browser> {
        let port = free_port()?;
        let profile = tempfile::tempdir()?;
        let child = Command::new(driver)
            .arg(format!("--port={port}"))
            .envs(scratch_home(profile.path())?)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .with_context(|| format!("starting {}", driver.display()))?;
        let mut browser = Browser {
            driver: child,
            port,
            session: String::new(),
            _profile: profile,
        };
        let deadline = Instant::now() + Duration::from_secs(20);
        while browser.call("GET", "/status", None).is_err() {
            if Instant::now() > deadline {
                bail!("chromedriver did not answer on 127.0.0.1:{port}");
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let caps = json!({"capabilities": {"alwaysMatch": {
            "browserName": "chrome",
            "goog:chromeOptions": {
                "binary": chromium,
                "args": [
                    "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                    "--no-first-run", "--disable-extensions", "--window-size=1280,900",
                    "--disable-breakpad", "--disable-crash-reporter",
                    format!("--user-data-dir={}", browser._profile.path().display()),
                ],
            },
        }}});
        let created = browser.call("POST", "/session", Some(caps))?;
        browser.session = created["sessionId"]
            .as_str()
            .ok_or_else(|| anyhow!("no session id in {created}"))?
            .to_owned();
        Ok(browser)
    }

    /// One WebDriver command; its `value`, or the driver's error.
    fn call(&self, method: &str, path: &str, body: Option<Value>) -> Result<Value> {
        let addr = SocketAddr::from(([127, 0, 0, 1], self.port));
        let mut stream = TcpStream::connect_timeout(&addr, Duration::from_secs(5))?;
        stream.set_read_timeout(Some(REQUEST_TIMEOUT))?;
        let body = body.map(|b| b.to_string()).unwrap_or_default();
        let head = format!(
            "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nConnection: close\r\n\
             Content-Type: application/json; charset=utf-8\r\nContent-Length: {}\r\n\r\n",
            self.port,
            body.len()
        );
        stream.write_all(head.as_bytes())?;
        stream.write_all(body.as_bytes())?;
        let (status, payload) = read_response(&mut stream)?;
        let json: Value = serde_json::from_str(payload.trim())
            .with_context(|| format!("chromedriver answered {status}: {payload}"))?;
        let value = json.get("value").cloned().unwrap_or(Value::Null);
        if status != 200 {
            bail!(
                "{method} {path}: {} ({})",
                value["error"].as_str().unwrap_or("error"),
                value["message"]
                    .as_str()
                    .unwrap_or("")
                    .lines()
                    .next()
                    .unwrap_or("")
            );
        }
        Ok(value)
    }

    fn cmd(&self, method: &str, path: &str, body: Option<Value>) -> Result<Value> {
        self.call(method, &format!("/session/{}{path}", self.session), body)
    }

    pub fn goto(&self, url: &str) -> Result<()> {
        self.cmd("POST", "/url", Some(json!({ "url": url })))
            .map(drop)
    }

    /// Opens a new tab and switches to it: a fresh page with its own
    /// sessionStorage, as a tab the user opens by hand.
    pub fn new_tab(&self) -> Result<()> {
        let opened = self.cmd("POST", "/window/new", Some(json!({ "type": "tab" })))?;
        let handle = opened["handle"]
            .as_str()
            .ok_or_else(|| anyhow!("no handle in {opened}"))?;
        self.cmd("POST", "/window", Some(json!({ "handle": handle })))
            .map(drop)
    }

    pub fn url(&self) -> Result<String> {
        Ok(self
            .cmd("GET", "/url", None)?
            .as_str()
            .unwrap_or("")
            .to_owned())
    }

    pub fn set_size(&self, width: u32, height: u32) -> Result<()> {
        self.cmd(
            "POST",
            "/window/rect",
            Some(json!({"width": width, "height": height})),
        )
        .map(drop)
    }

    /// Every element matching `css`.
    pub fn find_all(&self, css: &str) -> Result<Vec<Element>> {
        let found = self.cmd(
            "POST",
            "/elements",
            Some(json!({"using": "css selector", "value": css})),
        )?;
        Ok(found
            .as_array()
            .map(|a| {
                a.iter()
                    // `{"element-6066-…": id}`: the object's one value.
                    .filter_map(|e| e.as_object()?.values().next()?.as_str())
                    .map(|id| Element(id.to_owned()))
                    .collect()
            })
            .unwrap_or_default())
    }

    /// The first element matching `css`, waiting up to `timeout` for it.
    pub fn wait(&self, css: &str, timeout: Duration) -> Result<Element> {
        self.wait_until(&format!("an element `{css}`"), timeout, || {
            Ok(self.find_all(css)?.into_iter().next())
        })
    }

    /// Polls `f` until it returns Some, or fails saying `what` after `timeout`.
    pub fn wait_until<T>(
        &self,
        what: &str,
        timeout: Duration,
        mut f: impl FnMut() -> Result<Option<T>>,
    ) -> Result<T> {
        let deadline = Instant::now() + timeout;
        let mut last_error = None;
        loop {
            match f() {
                Ok(Some(v)) => return Ok(v),
                Ok(None) => {}
                Err(e) => last_error = Some(e),
            }
            if Instant::now() >= deadline {
                let body = self.text_of("body").unwrap_or_default();
                bail!(
                    "timed out after {timeout:?} waiting for {what} (last error: {last_error:?}); the page says:\n{body}"
                );
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    pub fn text(&self, el: &Element) -> Result<String> {
        Ok(self
            .cmd("GET", &format!("/element/{}/text", el.0), None)?
            .as_str()
            .unwrap_or("")
            .to_owned())
    }

    /// The text of the first element matching `css` (empty when none).
    pub fn text_of(&self, css: &str) -> Result<String> {
        match self.find_all(css)?.first() {
            Some(el) => self.text(el),
            None => Ok(String::new()),
        }
    }

    pub fn click(&self, el: &Element) -> Result<()> {
        self.cmd("POST", &format!("/element/{}/click", el.0), Some(json!({})))
            .map(drop)
    }

    pub fn clear(&self, el: &Element) -> Result<()> {
        self.cmd("POST", &format!("/element/{}/clear", el.0), Some(json!({})))
            .map(drop)
    }

    /// Types `text` into an element, as key presses.
    pub fn type_into(&self, el: &Element, text: &str) -> Result<()> {
        self.cmd(
            "POST",
            &format!("/element/{}/value", el.0),
            Some(json!({ "text": text })),
        )
        .map(drop)
    }

    /// Runs `script` (a function body; `arguments` are `args`) in the page.
    pub fn execute(&self, script: &str, args: Value) -> Result<Value> {
        self.cmd(
            "POST",
            "/execute/sync",
            Some(json!({"script": script, "args": args})),
        )
    }

    /// Runs `script`, which ends by calling `arguments[arguments.length - 1]`
    /// with its result.
    pub fn execute_async(&self, script: &str, args: Value) -> Result<Value> {
        self.cmd(
            "POST",
            "/execute/async",
            Some(json!({"script": script, "args": args})),
        )
    }

    /// The cookies the browser holds for the current page.
    pub fn cookies(&self) -> Result<Value> {
        self.cmd("GET", "/cookie", None)
    }

    /// A PNG of the viewport, written to `path`.
    pub fn screenshot(&self, path: &Path) -> Result<()> {
        let b64 = self.cmd("GET", "/screenshot", None)?;
        let png = base64_decode(b64.as_str().unwrap_or(""))?;
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        std::fs::write(path, png)?;
        Ok(())
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        if !self.session.is_empty() {
            let _ = self.call("DELETE", &format!("/session/{}", self.session), None);
        }
        let _ = self.driver.kill();
        let _ = self.driver.wait();
    }
}

/// Reads one response: (status, body). chromedriver keeps the connection
/// open whatever the request says, so the body ends at `Content-Length`.
fn read_response(stream: &mut TcpStream) -> Result<(u16, String)> {
    let mut raw = Vec::new();
    let mut buf = [0u8; 16 * 1024];
    let head_end = loop {
        let n = stream.read(&mut buf)?;
        if n == 0 {
            bail!("chromedriver closed the connection mid-answer");
        }
        raw.extend_from_slice(&buf[..n]);
        if let Some(i) = raw.windows(4).position(|w| w == b"\r\n\r\n") {
            break i + 4;
        }
    };
    let head = String::from_utf8_lossy(&raw[..head_end]).into_owned();
    let status = head
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    let length = head
        .lines()
        .find_map(|l| {
            let (k, v) = l.split_once(':')?;
            k.eq_ignore_ascii_case("content-length")
                .then(|| v.trim().parse::<usize>().ok())
                .flatten()
        })
        .ok_or_else(|| anyhow!("chromedriver's answer has no Content-Length: {head}"))?;
    while raw.len() < head_end + length {
        let n = stream.read(&mut buf)?;
        if n == 0 {
            bail!("chromedriver closed the connection mid-answer");
        }
        raw.extend_from_slice(&buf[..n]);
    }
    let body = String::from_utf8_lossy(&raw[head_end..head_end + length]).into_owned();
    Ok((status, body))
}

fn base64_decode(text: &str) -> Result<Vec<u8>> {
    let value = |c: u8| -> Result<u32> {
        Ok(match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            _ => bail!("not base64: {:?}", c as char),
        } as u32)
    };
    let clean: Vec<u8> = text
        .bytes()
        .filter(|c| !c.is_ascii_whitespace() && *c != b'=')
        .collect();
    let mut out = Vec::with_capacity(clean.len() * 3 / 4);
    for chunk in clean.chunks(4) {
        let mut n = 0u32;
        for (i, &c) in chunk.iter().enumerate() {
            n |= value(c)? << (18 - 6 * i);
        }
        let bytes = n.to_be_bytes();
        out.extend_from_slice(&bytes[1..chunk.len()]);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::base64_decode;

    #[test]
    fn decodes_base64() {
        assert_eq!(base64_decode("").unwrap(), b"");
        assert_eq!(base64_decode("TQ==").unwrap(), b"M");
        assert_eq!(base64_decode("TWE=").unwrap(), b"Ma");
        assert_eq!(base64_decode("TWFu").unwrap(), b"Man");
        assert_eq!(base64_decode("aGVsbG8gd29ybGQ=").unwrap(), b"hello world");
        assert!(base64_decode("a$==").is_err());
    }
}
