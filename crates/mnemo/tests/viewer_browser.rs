//! The web viewer in a real headless Chromium, against a real worker on a
//! real store, signed in through `mnemo open --print`: the feed updates
//! live when a hook captures an event, search finds and highlights, an
//! edit shows up in `mnemo show`, a forgotten observation is gone from
//! search, the context preview is what `mnemo context` prints, a page
//! on another loopback origin can neither read nor change the memory, and
//! a server on another loopback port receives nothing that opens it.
//!
//! Each test has its own browser, one test at a time. Without
//! Chromium the tests say SKIPPED, unless `CI` is set, where that fails.
//! `MNEMO_SCREENSHOTS=DIR` also writes screenshots of the pages there
//! (how `docs/screenshots/` is made).

mod common;
#[path = "common/worker.rs"]
mod worker_support;

use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use common::*;
use mnemo_testkit::Browser;
use serde_json::{Value, json};
use worker_support::*;

const T: Duration = Duration::from_secs(30);

/// A fresh browser for one test, the tests taking turns (two Chromiums at
/// once would only slow each other down). Each test ends its own browser
/// (on drop, also when it fails): one kept for the whole file would outlive
/// the test process, since statics are never dropped.
struct TestBrowser {
    browser: Browser,
    _turn: MutexGuard<'static, ()>,
}

impl std::ops::Deref for TestBrowser {
    type Target = Browser;
    fn deref(&self) -> &Browser {
        &self.browser
    }
}

fn browser() -> Option<TestBrowser> {
    static TURN: Mutex<()> = Mutex::new(());
    let turn = TURN.lock().unwrap_or_else(|e| e.into_inner());
    let browser = Browser::launch().expect("headless Chromium starts")?;
    Some(TestBrowser {
        browser,
        _turn: turn,
    })
}

/// A one-time link from the real `mnemo open --print`.
fn open_link(env: &Env) -> String {
    let out = env.mnemo().args(["open", "--print"]).output().unwrap();
    assert_success(&out);
    let link = String::from_utf8(out.stdout).unwrap().trim().to_owned();
    assert!(link.starts_with("http://127.0.0.1:"), "{link}");
    link
}

/// Redeems a sign-in link as the sign-in page's script does (`POST /login`):
/// status, headers and body.
fn redeem(port: u16, link: &str) -> (u16, String, String) {
    let secret = link.split("t=").nth(1).unwrap_or("");
    let body = json!({ "t": secret }).to_string();
    raw(
        port,
        &format!(
            "POST /login HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n\
             Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        ),
    )
}

/// The session secret the viewer's tab holds (in its `sessionStorage`).
fn tab_session(b: &Browser) -> String {
    let id = b
        .execute("return sessionStorage.getItem('mnemo-session')", json!([]))
        .unwrap();
    let id = id.as_str().unwrap_or_default().to_owned();
    assert!(id.len() >= 32, "no session in the tab: {id:?}");
    id
}

/// Signs the browser in to `w` and waits for the viewer's page.
fn sign_in(b: &Browser, env: &Env, w: &Worker, page: &str) {
    b.goto(&open_link(env)).unwrap();
    b.wait_until("the viewer after sign-in", T, || {
        Ok((b.url()? == format!("http://127.0.0.1:{}/", w.port)).then_some(()))
    })
    .unwrap();
    b.goto(&format!("http://127.0.0.1:{}/#/{page}", w.port))
        .unwrap();
}

fn screenshot(b: &Browser, name: &str) {
    if let Some(dir) = std::env::var_os("MNEMO_SCREENSHOTS") {
        b.screenshot(&PathBuf::from(dir).join(format!("{name}.png")))
            .unwrap();
    }
}

/// Fills the store with `mnemo import` of JSON Lines, as a user would.
fn import(env: &Env, records: &[Value]) {
    let file = env.dir.path().join("import.jsonl");
    let text: String = records.iter().map(|r| format!("{r}\n")).collect();
    std::fs::write(&file, text).unwrap();
    let out = env.mnemo().arg("import").arg(&file).output().unwrap();
    assert_success(&out);
}

/// A small store: two projects, observations of several types, a summary.
fn remembered(env: &Env) -> (PathBuf, PathBuf) {
    let shop = project(env, "shop");
    let blog = project(env, "blog");
    let now = mnemo_core::time::now_ms();
    let at = |hours_ago: i64| mnemo_core::time::format_rfc3339(now - hours_ago * 3_600_000);
    let s1 = "60000000-0000-0000-0000-000000000006";
    let s2 = "70000000-0000-0000-0000-000000000007";
    import(
        env,
        &[
            json!({"kind": "observation", "project": shop, "session_id": s1, "type": "bugfix",
                   "title": "Fix the checkout rounding error",
                   "narrative": "Totals were rounded per line instead of per order.",
                   "facts": ["round once, at the end"],
                   "files_modified": [shop.join("src/cart/total.rs")], "created_at": at(3)}),
            json!({"kind": "observation", "project": shop, "session_id": s1, "type": "decision",
                   "title": "Prices are integer cents", "narrative": "No floats for money.",
                   "created_at": at(30)}),
            json!({"kind": "observation", "project": blog, "session_id": s2, "type": "feature",
                   "title": "RSS feed for the blog", "narrative": "An Atom feed at /feed.xml.",
                   "files_modified": [blog.join("feed.rs")], "created_at": at(1)}),
            json!({"kind": "summary", "project": shop, "session_id": s1,
                   "request": "fix the checkout totals", "completed": "rounding fixed",
                   "created_at": at(3)}),
        ],
    );
    (shop, blog)
}

#[test]
fn sign_in_is_one_time_and_the_feed_updates_live_from_a_hook() {
    let Some(b) = browser() else { return };
    let env = Env::new();
    let proj = project(&env, "live");
    let w = Worker::start(&env, |_| {});

    // Not signed in: the page loads, the data does not.
    b.goto(&format!("http://127.0.0.1:{}/#/feed", w.port))
        .unwrap();
    let refusal = b.wait(".error", T).unwrap();
    assert!(b.text(&refusal).unwrap().contains("mnemo open"));

    let link = open_link(&env);
    b.goto(&link).unwrap();
    b.wait("#live", T).unwrap();
    // The session is in the tab's sessionStorage, not in a cookie (cookies
    // ignore ports).
    let cookies = b.cookies().unwrap();
    assert_eq!(cookies, json!([]), "no cookie at all");
    let session = tab_session(&b);
    assert_ne!(session, w.token);
    assert!(
        !link.contains(&w.token),
        "the API token never goes to the browser"
    );

    // A link works once.
    let (status, _, _) = redeem(w.port, &link);
    assert_eq!(status, 403, "a used link is refused");

    // The feed is live: a hook captures a turn, the worker compresses it,
    // the page shows it without a reload.
    b.wait_until("the stream to connect", T, || {
        Ok((b.text_of("#live")? == "live").then_some(()))
    })
    .unwrap();
    b.execute("window.__same_page = true", json!([])).unwrap();
    turn(
        &env,
        &proj,
        "80000000-0000-0000-0000-000000000008",
        1,
        &["ledger.rs"],
    );
    let item = b
        .wait_until("the new observation in the feed", T, || {
            for el in b.find_all("#feed .item.fresh")? {
                let text = b.text(&el)?;
                if text.contains("observation") || text.contains("ledger") {
                    return Ok(Some(text));
                }
            }
            Ok(None)
        })
        .unwrap();
    assert!(item.contains("live"), "the project's name is shown: {item}");
    assert_eq!(
        b.execute("return window.__same_page === true", json!([]))
            .unwrap(),
        true,
        "no reload"
    );
    b.wait_until("the queue state in the header", T, || {
        Ok(b.text_of("#queue")?.contains("pending").then_some(()))
    })
    .unwrap();
    screenshot(&b, "feed");
}

#[test]
fn search_as_you_type_finds_filters_and_highlights() {
    let Some(b) = browser() else { return };
    let env = Env::new();
    remembered(&env);
    let w = Worker::start(&env, |_| {});
    sign_in(&b, &env, &w, "search");

    let q = b.wait("#q", T).unwrap();
    b.type_into(&q, "rounding").unwrap();
    // Read in one script: search as you type may replace the results
    // between finding an element and reading its text.
    let results = |b: &Browser| -> Vec<String> {
        let titles = b
            .execute(
                "return [...document.querySelectorAll('#results .item .title')].map((e) => e.innerText)",
                json!([]),
            )
            .unwrap();
        serde_json::from_value(titles).unwrap_or_default()
    };
    b.wait_until("a search result", T, || {
        Ok(results(&b)
            .contains(&"Fix the checkout rounding error".to_owned())
            .then_some(()))
    })
    .unwrap();
    // The results of the whole word (not of a prefix typed on the way)
    // have the match highlighted.
    b.wait_until("the match highlighted", T, || {
        let marked = b.text_of("#results .item .title mark")?;
        Ok((marked.to_lowercase() == "rounding").then_some(()))
    })
    .unwrap();

    // Keyboard: j selects the first result, Enter opens its detail.
    b.execute("document.activeElement.blur()", json!([]))
        .unwrap();
    b.execute(
        "for (const k of ['j', 'Enter']) document.dispatchEvent(new KeyboardEvent('keydown', {key: k}))",
        json!([]),
    )
    .unwrap();
    let title = b.wait("#o-title", T).unwrap();
    assert_eq!(b.text(&title).unwrap(), "Fix the checkout rounding error");
    let detail = b.text_of("#record").unwrap();
    assert!(
        detail.contains("src/cart/total.rs") && !detail.contains("/shop/src/cart"),
        "files relative to the project: {detail}"
    );
    screenshot(&b, "detail");

    // Filters: a type, then a project.
    b.goto(&format!(
        "http://127.0.0.1:{}/#/search?q=the&type=feature",
        w.port
    ))
    .unwrap();
    b.wait_until("only the feature", T, || {
        let r = results(&b);
        Ok((r == ["RSS feed for the blog"]).then_some(()))
    })
    .unwrap();
    b.goto(&format!(
        "http://127.0.0.1:{}/#/search?q=the&project=shop",
        w.port
    ))
    .unwrap();
    b.wait_until("only the shop's items", T, || {
        let r = results(&b);
        Ok((!r.is_empty() && !r.contains(&"RSS feed for the blog".to_owned())).then_some(()))
    })
    .unwrap();
    screenshot(&b, "search");
}

#[test]
fn the_context_preview_is_what_mnemo_context_prints() {
    let Some(b) = browser() else { return };
    let env = Env::new();
    let (shop, _) = remembered(&env);
    let w = Worker::start(&env, |_| {});
    sign_in(&b, &env, &w, "context");
    b.wait("#c-project", T).unwrap();
    let root = shop.display().to_string();
    b.execute(
        "const s = document.getElementById('c-project'); s.value = arguments[0]; \
         s.dispatchEvent(new Event('change'))",
        json!([root]),
    )
    .unwrap();
    let out = env
        .mnemo()
        .args(["context", "--project", &root])
        .output()
        .unwrap();
    assert!(out.status.success());
    let cli = String::from_utf8(out.stdout).unwrap();
    assert!(cli.contains("checkout rounding"), "{cli}");
    // The page's text exactly (textContent keeps every space and newline).
    let shown = b
        .wait_until("the shop's context", T, || {
            let text = b.execute(
                "return document.getElementById('c-text').textContent",
                json!([]),
            )?;
            let text = text.as_str().unwrap_or("").to_owned();
            Ok(text.contains("checkout rounding").then_some(text))
        })
        .unwrap();
    assert_eq!(shown.trim_end_matches('\n'), cli.trim_end_matches('\n'));
    let size = b.text_of("#c-size").unwrap();
    let chars = shown.chars().count();
    assert!(
        size.contains(&format!("{} characters", fmt_thousands(chars))),
        "{size} vs {chars}"
    );
    assert!(size.contains(&format!(
        "about {} tokens",
        fmt_thousands(chars.div_ceil(4))
    )));
    screenshot(&b, "context");

    // The other pages render from the API without an error (the health
    // page's Sync block says this machine does not sync).
    for (page, css) in [
        ("projects", "#projects"),
        ("sessions", "#main .item"),
        ("health", "#doctor"),
        ("health", "#sync-state"),
    ] {
        b.goto(&format!("http://127.0.0.1:{}/#/{page}", w.port))
            .unwrap();
        b.wait(css, T).unwrap();
        assert!(
            b.find_all(".error").unwrap().is_empty(),
            "{page}: {}",
            b.text_of(".error").unwrap()
        );
        screenshot(&b, page);
    }
}

#[test]
fn an_edit_pin_and_forget_in_the_browser_reach_the_store() {
    let Some(b) = browser() else { return };
    let env = Env::new();
    let (shop, _) = remembered(&env);
    let w = Worker::start(&env, |_| {});
    let (_, found) = w.get("/api/search?q=rounding");
    let id = found["hits"]
        .as_array()
        .unwrap()
        .iter()
        .find(|h| h["kind"] == "observation")
        .and_then(|h| h["id"].as_i64())
        .unwrap_or_else(|| panic!("{found}"));
    sign_in(&b, &env, &w, &format!("o/{id}"));

    // Edit: the new title is in the page, in `mnemo show`, and in search.
    b.click(&b.wait("#edit", T).unwrap()).unwrap();
    let title = b.wait("#e-title", T).unwrap();
    b.clear(&title).unwrap();
    b.type_into(&title, "Checkout totals are rounded once per order")
        .unwrap();
    let facts = b.wait("#e-facts", T).unwrap();
    b.type_into(&facts, "\nthe tax is rounded the same way")
        .unwrap();
    b.click(&b.wait("#e-save", T).unwrap()).unwrap();
    b.wait_until("the edited title", T, || {
        Ok((b.text_of("#o-title")? == "Checkout totals are rounded once per order").then_some(()))
    })
    .unwrap();
    assert!(b.text_of("#record").unwrap().contains("edited by you"));
    let out = env
        .mnemo()
        .current_dir(&shop)
        .args(["show", &id.to_string()])
        .output()
        .unwrap();
    let shown = String::from_utf8_lossy(&out.stdout);
    assert_success(&out);
    assert!(
        shown.contains("Checkout totals are rounded once per order"),
        "{shown}"
    );
    assert!(shown.contains("the tax is rounded the same way"), "{shown}");
    let (_, by_new_word) = w.get("/api/search?q=tax");
    assert_eq!(by_new_word["hits"][0]["id"], id, "{by_new_word}");

    // Pin.
    b.click(&b.wait("#pin", T).unwrap()).unwrap();
    b.wait("#o-pinned", T).unwrap();
    let (_, record) = w.get(&format!("/api/observations/{id}"));
    assert_eq!(record["pinned"], true, "{record}");
    screenshot(&b, "edit");

    // An export written, then moved where mnemo cannot follow it.
    let export = env.dir.path().join("backup.jsonl");
    assert_success(
        &env.mnemo()
            .arg("export")
            .arg("-o")
            .arg(&export)
            .output()
            .unwrap(),
    );
    std::fs::rename(&export, env.dir.path().join("moved.jsonl")).unwrap();

    // Forget: asked once more, then gone from search in the page and the
    // API; the page names the copy out of reach.
    b.click(&b.wait("#forget", T).unwrap()).unwrap();
    b.click(&b.wait("#forget-yes", T).unwrap()).unwrap();
    b.wait("#forgotten", T).unwrap();
    let left = b.text_of("#remaining").unwrap();
    assert!(left.contains(export.to_str().unwrap()), "{left}");
    let (code, _) = w.get(&format!("/api/observations/{id}"));
    assert_eq!(code, 404);
    b.goto(&format!(
        "http://127.0.0.1:{}/#/search?q=checkout+totals",
        w.port
    ))
    .unwrap();
    b.wait_until("the search to answer", T, || {
        Ok(b.text_of("#status")?.contains("result").then_some(()))
    })
    .unwrap();
    let titles: Vec<String> = b
        .find_all("#results .item .title")
        .unwrap()
        .iter()
        .map(|e| b.text(e).unwrap())
        .collect();
    assert!(
        !titles.iter().any(|t| t.contains("rounded once")),
        "{titles:?}"
    );
    let (_, after) = w.get("/api/search?q=rounding");
    assert!(
        after["hits"]
            .as_array()
            .unwrap()
            .iter()
            .all(|h| h["ref"] != format!("#{id}").as_str()),
        "{after}"
    );

    // Forget a whole project from the projects page: the counts are shown
    // first, then it is gone.
    b.goto(&format!("http://127.0.0.1:{}/#/projects", w.port))
        .unwrap();
    b.wait("#projects", T).unwrap();
    b.execute(
        "[...document.querySelectorAll('#projects tbody tr')]\
           .find((r) => r.textContent.includes('blog')).querySelector('button').click()",
        json!([]),
    )
    .unwrap();
    let yes = b.wait("#forget-project-yes", T).unwrap();
    assert!(
        b.text_of("#message").unwrap().contains("1 observations"),
        "{}",
        b.text_of("#message").unwrap()
    );
    b.click(&yes).unwrap();
    b.wait_until("the project forgotten", T, || {
        Ok(b.text_of("#message")?.starts_with("Forgot").then_some(()))
    })
    .unwrap();
    let (_, projects) = w.get("/api/projects");
    let names: Vec<&str> = projects["items"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|p| p["name"].as_str())
        .collect();
    assert_eq!(names, ["shop"], "{projects}");
    let (_, in_shop) = w.get("/api/observations?project=shop");
    assert_eq!(in_shop["total"], 1, "the other project stays: {in_shop}");
}

fn fmt_thousands(n: usize) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// The request heads a [`foreign_origin`] server received.
type Heads = Arc<Mutex<Vec<String>>>;

/// Serves `page` as HTML on another loopback port until the test ends,
/// recording the head of every request it receives.
fn foreign_origin(page: String) -> (u16, Heads) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let heads = Heads::default();
    let seen = heads.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let mut reader = BufReader::new(&stream);
            let mut line = String::new();
            let mut head = String::new();
            while reader.read_line(&mut line).is_ok_and(|n| n > 2) {
                head.push_str(&line);
                line.clear();
            }
            seen.lock().unwrap().push(head);
            let mut stream = &stream;
            let _ = write!(
                stream,
                "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{page}",
                page.len()
            );
        }
    });
    (port, heads)
}

#[test]
fn a_page_on_another_origin_can_neither_read_nor_change_the_memory() {
    let Some(b) = browser() else { return };
    let env = Env::new();
    remembered(&env);
    let w = Worker::start(&env, |_| {});
    // The user is signed in: the viewer's tab holds a valid session.
    sign_in(&b, &env, &w, "feed");
    b.wait("#feed .item", T).unwrap();

    let target = format!("http://127.0.0.1:{}", w.port);
    let page = format!(
        r#"<!doctype html><title>elsewhere</title><pre id="out"></pre>
<script>
const W = "{target}";
const out = [];
async function attempt(name, f) {{
  try {{ out.push(name + ": " + await f()); }} catch (e) {{ out.push(name + ": blocked " + e.name); }}
}}
(async () => {{
  await attempt("read observations", async () => (await fetch(W + "/api/observations", {{credentials: "include"}})).status);
  await attempt("read search", async () => (await (await fetch(W + "/api/search?q=rounding", {{credentials: "include"}})).text()).length);
  await attempt("opaque read", async () => {{ const r = await fetch(W + "/api/observations", {{mode: "no-cors", credentials: "include"}}); return "opaque " + r.type + " " + (await r.text()).length; }});
  await attempt("stop the worker", async () => {{ const r = await fetch(W + "/api/shutdown", {{method: "POST", mode: "no-cors", credentials: "include"}}); return "sent " + r.type; }});
  await attempt("forget", async () => {{ const r = await fetch(W + "/api/forget", {{method: "POST", mode: "no-cors", credentials: "include", headers: {{"Content-Type": "text/plain"}}, body: '{{"ids":[1,2,3]}}'}}); return "sent " + r.type; }});
  await attempt("frame the viewer", () => new Promise((ok) => {{
    const f = document.createElement("iframe"); f.src = W + "/";
    f.onload = () => {{ try {{ ok("framed, read " + f.contentDocument.body.innerText.length); }} catch (e) {{ ok("blocked " + e.name); }} }};
    document.body.append(f); setTimeout(() => ok("no load"), 3000);
  }}));
  document.getElementById("out").textContent = out.join("\n");
  document.title = "done";
}})();
</script>"#
    );
    let (port, _) = foreign_origin(page);
    b.goto(&format!("http://127.0.0.1:{port}/")).unwrap();
    let report = b
        .wait_until("the foreign page's attempts", T, || {
            let text = b.text_of("#out")?;
            Ok((!text.is_empty()).then_some(text))
        })
        .unwrap();
    let lines: Vec<&str> = report.lines().collect();
    assert!(
        lines[0].starts_with("read observations: blocked"),
        "{report}"
    );
    assert!(lines[1].starts_with("read search: blocked"), "{report}");
    assert!(
        lines[2] == "opaque read: opaque opaque 0" || lines[2].starts_with("opaque read: blocked"),
        "{report}"
    );
    assert!(!report.contains("framed, read"), "{report}");
    assert!(!report.contains("Fix the checkout"), "{report}");

    // Nothing changed: the worker still runs, every observation is there.
    std::thread::sleep(Duration::from_millis(500));
    assert!(alive(w.pid), "the worker was not stopped");
    let (code, page) = w.get("/api/observations");
    assert_eq!((code, page["total"].as_i64()), (200, Some(3)), "{page}");
}

#[test]
fn a_second_tab_shares_the_session_and_no_other_origin_can_ask_for_it() {
    let Some(b) = browser() else { return };
    let env = Env::new();
    remembered(&env);
    let w = Worker::start(&env, |_| {});
    sign_in(&b, &env, &w, "feed");
    b.wait("#feed .item", T).unwrap();
    let session = tab_session(&b);

    // A page on another loopback port asks the viewer's tabs for the
    // session the way a new tab of the viewer does.
    let page = r#"<!doctype html><title>elsewhere</title><pre id="out"></pre>
<script>
const got = [];
const c = new BroadcastChannel("mnemo-session");
c.onmessage = (e) => got.push(JSON.stringify(e.data));
c.postMessage({ask: true});
setTimeout(() => { document.getElementById("out").textContent = "heard: " + got.join(" "); }, 1500);
</script>"#;
    let (port, _) = foreign_origin(page.to_owned());
    b.new_tab().unwrap();
    b.goto(&format!("http://127.0.0.1:{port}/")).unwrap();
    let heard = b
        .wait_until("the foreign page's answer", T, || {
            let text = b.text_of("#out")?;
            Ok((!text.is_empty()).then_some(text))
        })
        .unwrap();
    assert_eq!(heard.trim(), "heard:", "another origin got an answer");

    // A new tab of the viewer, opened by hand, is signed in.
    b.new_tab().unwrap();
    b.goto(&format!("http://127.0.0.1:{}/#/feed", w.port))
        .unwrap();
    b.wait("#feed .item", T).unwrap();
    assert_eq!(tab_session(&b), session);
}

/// `head`'s header lines (not its request line) as they would be sent
/// again, without `Host` and `Connection`, and without the browser's
/// `Sec-Fetch-*` and `Origin` unless `as_browser`.
fn replayable(head: &str, as_browser: bool) -> String {
    head.lines()
        .skip(1)
        .filter(|l| {
            let name = l
                .split(':')
                .next()
                .unwrap_or("")
                .trim()
                .to_ascii_lowercase();
            let browser_only = name.starts_with("sec-fetch-") || name == "origin";
            !name.is_empty()
                && name != "host"
                && name != "connection"
                && (as_browser || !browser_only)
        })
        .map(|l| format!("{}\r\n", l.trim_end()))
        .collect()
}

#[test]
fn a_server_on_another_loopback_port_receives_nothing_that_opens_the_memory() {
    let Some(b) = browser() else { return };
    let env = Env::new();
    remembered(&env);
    let w = Worker::start(&env, |_| {});
    sign_in(&b, &env, &w, "feed");
    b.wait("#feed .item", T).unwrap();
    let session = tab_session(&b);

    // The user then visits a dev server on another port of 127.0.0.1,
    // which records every request the browser makes to it.
    let page = r#"<!doctype html><title>dev server</title><p id="out">dev</p>
<img src="/pixel.png" alt=""><script>fetch("/api", {credentials: "include"});</script>"#;
    let (port, heads) = foreign_origin(page.to_owned());
    b.goto(&format!("http://127.0.0.1:{port}/")).unwrap();
    b.wait("#out", T).unwrap();
    b.wait_until("the page's own requests", T, || {
        Ok((heads.lock().unwrap().len() >= 3).then_some(()))
    })
    .unwrap();
    let heads = heads.lock().unwrap().clone();

    // Nothing it received, replayed at the worker's API from outside a
    // browser or with the browser's own headers, opens the memory.
    for head in &heads {
        assert!(!head.contains(&session), "the session leaked: {head}");
        assert!(!head.contains(&w.token), "the token leaked: {head}");
        for as_browser in [true, false] {
            let replay = replayable(head, as_browser);
            for path in ["/api/observations", "/api/stream"] {
                let (code, _, body) = raw(
                    w.port,
                    &format!(
                        "GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{}\r\n{replay}Connection: close\r\n\r\n",
                        w.port
                    ),
                );
                assert!(
                    code == 401 || code == 403,
                    "{path} with {replay:?}: {code} {body}"
                );
            }
        }
    }
    // The session itself, sent as the viewer sends it, does open it: the
    // refusals above are about what the dev server got, not a dead session.
    let (code, _, body) = raw(
        w.port,
        &format!(
            "GET /api/observations HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nX-Mnemo-Session: {session}\r\n\
             Connection: close\r\n\r\n",
            w.port
        ),
    );
    assert_eq!(code, 200, "{body}");
}

// ---- the same rules over raw HTTP (no browser needed) ----

fn header<'a>(head: &'a str, name: &str) -> Option<&'a str> {
    head.lines().find_map(|l| {
        let (k, v) = l.split_once(':')?;
        k.trim().eq_ignore_ascii_case(name).then(|| v.trim())
    })
}

#[test]
fn pages_carry_a_strict_csp_and_the_session_header_serves_only_the_viewer() {
    let env = Env::new();
    remembered(&env);
    let w = Worker::start(&env, |_| {});
    let p = w.port;
    let host = format!("Host: 127.0.0.1:{p}\r\n");
    let send = |req: String| raw(p, &format!("{req}Connection: close\r\n\r\n"));

    // The page and its assets are public and locked down.
    for path in [
        "/",
        "/login",
        "/assets/js/app.js",
        "/assets/js/login.js",
        "/assets/style.css",
        "/api/health",
    ] {
        let (code, head, _) = send(format!("GET {path} HTTP/1.1\r\n{host}"));
        assert_eq!(code, 200, "{path}");
        let csp = header(&head, "content-security-policy").unwrap_or_default();
        for rule in [
            "default-src 'none'",
            "script-src 'self'",
            "frame-ancestors 'none'",
        ] {
            assert!(csp.contains(rule), "{path}: {csp}");
        }
        assert!(
            !csp.contains("unsafe-inline") && !csp.contains("unsafe-eval"),
            "{csp}"
        );
        assert_eq!(header(&head, "x-content-type-options"), Some("nosniff"));
        assert_eq!(header(&head, "referrer-policy"), Some("no-referrer"));
    }
    let (_, head, body) = send(format!("GET /assets/js/app.js HTTP/1.1\r\n{host}"));
    assert!(
        header(&head, "content-type")
            .unwrap()
            .starts_with("text/javascript")
    );
    assert!(body.contains("hashchange"));
    let (code, _, _) = send(format!("GET /assets/../worker.json HTTP/1.1\r\n{host}"));
    assert_eq!(code, 404);

    // Links need the token; a made-up one signs nobody in.
    let (code, _, _) = send(format!(
        "POST /api/viewer/link HTTP/1.1\r\n{host}Content-Length: 0\r\n"
    ));
    assert_eq!(code, 401);
    assert_eq!(redeem(p, "/login?t=0123abcd").0, 403);
    assert_eq!(redeem(p, "/login").0, 403);

    // A link: the sign-in page's exchange answers a session secret and
    // sets no cookie; the secret, as a header, reads the API.
    let link = open_link(&env);
    let (code, head, body) = redeem(p, &link);
    assert_eq!(code, 200, "{body}");
    assert_eq!(header(&head, "set-cookie"), None, "{head}");
    let answer: Value = serde_json::from_str(&body).unwrap();
    let id = answer["session"].as_str().unwrap().to_owned();
    assert!(!id.contains(&w.token));
    assert_eq!(redeem(p, &link).0, 403, "a link works once");
    // The secret as a cookie opens nothing: cookies are no credential.
    let (code, _, _) = send(format!(
        "GET /api/observations HTTP/1.1\r\n{host}Cookie: mnemo_session={id}\r\n"
    ));
    assert_eq!(code, 401);
    let session = format!("X-Mnemo-Session: {id}\r\n");
    let (code, _, body) = send(format!("GET /api/observations HTTP/1.1\r\n{host}{session}"));
    assert_eq!(code, 200, "{body}");
    let (code, _, _) = send(format!(
        "GET /api/observations HTTP/1.1\r\n{host}{session}Sec-Fetch-Site: same-origin\r\n"
    ));
    assert_eq!(code, 200);
    // Another port of 127.0.0.1 is same-site, not same-origin: refused.
    let (code, _, body) = send(format!(
        "GET /api/observations HTTP/1.1\r\n{host}{session}Sec-Fetch-Site: same-site\r\n"
    ));
    assert_eq!(code, 403, "{body}");
    // A mutation on the session must come with the viewer's Origin.
    let retry = |extra: &str| {
        send(format!(
            "POST /api/queue/retry HTTP/1.1\r\n{host}{session}{extra}Content-Type: application/json\r\n\
             Content-Length: 12\r\n\r\n{{\"all\":true}}"
        ))
        .0
    };
    assert_eq!(retry(""), 403, "no Origin");
    assert_eq!(
        retry(&format!("Origin: http://127.0.0.1:{}\r\n", p + 1)),
        403
    );
    assert_eq!(retry(&format!("Origin: http://127.0.0.1:{p}\r\n")), 200);
    // A session cannot mint sign-in links, even from the viewer's origin;
    // the token can.
    let mint = |extra: &str| {
        send(format!(
            "POST /api/viewer/link HTTP/1.1\r\n{host}{extra}Content-Length: 0\r\n"
        ))
    };
    let (code, _, body) = mint(&format!("{session}Origin: http://127.0.0.1:{p}\r\n"));
    assert_eq!(code, 403, "{body}");
    let (code, _, body) = mint(&format!("Authorization: Bearer {}\r\n", w.token));
    assert_eq!(code, 200, "{body}");
    // The old token cookie is not a credential, nor is a stale session.
    let (code, _, _) = send(format!(
        "GET /api/stats HTTP/1.1\r\n{host}Cookie: mnemo_token={}\r\n",
        w.token
    ));
    assert_eq!(code, 401);
    let (code, _, body) = send(format!(
        "GET /api/stats HTTP/1.1\r\n{host}X-Mnemo-Session: stale\r\n"
    ));
    assert_eq!(code, 401);
    assert!(body.contains("mnemo open"), "{body}");
}

#[test]
fn mnemo_open_starts_the_worker_and_hands_the_link_to_the_browser() {
    let env = Env::new();
    let _guard = DetachedGuard(env.data());
    let opened = env.dir.path().join("opened.txt");
    let browser = env.dir.path().join("browser.sh");
    std::fs::write(
        &browser,
        format!("#!/bin/sh\necho \"$1\" > '{}'\n", opened.display()),
    )
    .unwrap();
    std::fs::set_permissions(
        &browser,
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    // No worker runs yet: `mnemo open` starts one.
    let mut c = env.mnemo();
    worker_env(&mut c);
    let out = c.arg("open").env("BROWSER", &browser).output().unwrap();
    assert_success(&out);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("opened the viewer"), "{stdout}");
    assert!(
        !stdout.contains("login?t="),
        "the link goes to the browser only: {stdout}"
    );
    let info = worker_json(&env).expect("a worker was started");
    let port = info["port"].as_u64().unwrap() as u16;
    // The browser was handed a private page that redirects, not the link.
    let page = std::fs::read_to_string(&opened).unwrap().trim().to_owned();
    assert!(!page.contains("login?t="), "{page}");
    let file = std::path::PathBuf::from(page.strip_prefix("file://").unwrap_or(&page));
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&file).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600, "{file:?}");
    }
    let html = std::fs::read_to_string(&file).unwrap();
    let link = html
        .split("url=")
        .nth(1)
        .and_then(|rest| rest.split('"').next())
        .unwrap_or_else(|| panic!("{html}"))
        .to_owned();
    assert!(
        link.starts_with(&format!("http://127.0.0.1:{port}/login?t=")),
        "{link}"
    );
    let (code, _, body) = redeem(port, &link);
    assert_eq!(code, 200, "the link signs in: {body}");

    // A browser that cannot start: the link is printed instead.
    let out = env
        .mnemo()
        .arg("open")
        .env("BROWSER", env.dir.path().join("no-such-browser"))
        .output()
        .unwrap();
    assert!(out.status.success());
    let printed = String::from_utf8_lossy(&out.stdout);
    assert!(
        printed
            .trim()
            .starts_with(&format!("http://127.0.0.1:{port}/login?t=")),
        "{printed}"
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("could not open a browser"));
}

#[test]
fn the_first_load_is_small() {
    // Everything the page loads before its first request for data.
    let env = Env::new();
    let w = Worker::start(&env, |_| {});
    let mut total = 0;
    let index = get(w.port, "/", None).1;
    total += index.len();
    let mut queue: Vec<String> = vec![
        "/assets/style.css".into(),
        "/assets/icon.svg".into(),
        "/assets/js/app.js".into(),
    ];
    let mut seen = std::collections::HashSet::new();
    while let Some(path) = queue.pop() {
        if !seen.insert(path.clone()) {
            continue;
        }
        let (code, body) = get(w.port, &path, None);
        assert_eq!(code, 200, "{path}");
        total += body.len();
        for imported in body.split("from \"./").skip(1) {
            let file = imported.split('"').next().unwrap();
            queue.push(format!("/assets/js/{file}"));
        }
    }
    assert!(seen.len() >= 10, "{seen:?}");
    assert!(total < 300 * 1024, "first load is {total} bytes");
    eprintln!("first load: {total} bytes in {} files", seen.len() + 1);
}

/// The README's screenshots, of real Claude Code sessions:
/// `MNEMO_SCREENSHOTS=docs/screenshots MNEMO_SCREENSHOT_TRANSCRIPTS=DIR
/// cargo test -p mnemo --test viewer_browser -- --ignored screenshots`
/// (DIR holds Claude Code transcripts, e.g. the spotter fixtures).
#[test]
#[ignore = "makes docs/screenshots; needs MNEMO_SCREENSHOTS and MNEMO_SCREENSHOT_TRANSCRIPTS"]
fn screenshots_of_real_sessions() {
    let (Some(_), Some(transcripts)) = (
        std::env::var_os("MNEMO_SCREENSHOTS"),
        std::env::var_os("MNEMO_SCREENSHOT_TRANSCRIPTS"),
    ) else {
        eprintln!("SKIPPED: set MNEMO_SCREENSHOTS and MNEMO_SCREENSHOT_TRANSCRIPTS");
        return;
    };
    let Some(b) = browser() else { return };
    let env = Env::new();
    let out = env
        .mnemo()
        .args(["import", "--transcripts"])
        .arg(transcripts)
        .output()
        .unwrap();
    assert_success(&out);
    let w = Worker::start(&env, |_| {});
    wait_for("the backlog to drain", Duration::from_secs(300), || {
        let (_, q) = w.get("/api/queue");
        (q["counts"]["pending"] == 0 && q["counts"]["leased"] == 0).then_some(())
    });
    let (_, obs) = w.get("/api/observations?limit=1");
    let id = obs["items"][0]["id"].as_i64().unwrap();
    let session = obs["items"][0]["session"]["session_id"]
        .as_str()
        .unwrap()
        .to_owned();
    sign_in(&b, &env, &w, "feed");
    let base = format!("http://127.0.0.1:{}", w.port);
    // Every page at a laptop's width, and as a phone (390 px) shows it.
    for (width, prefix) in [(1280, ""), (390, "phone-")] {
        b.set_size(width, 900).unwrap();
        for (name, page, ready) in [
            ("feed", "feed".to_owned(), "#feed .item"),
            ("search", "search?q=test".to_owned(), "#results .item"),
            ("detail", format!("o/{id}"), "#record"),
            ("session", format!("session/{session}"), ".turn"),
            ("projects", "projects".to_owned(), "#projects"),
            ("health", "health".to_owned(), "#doctor-verdict"),
            ("context", "context".to_owned(), "#c-text"),
        ] {
            b.goto(&format!("{base}/#/{page}")).unwrap();
            b.wait(ready, T).unwrap();
            std::thread::sleep(Duration::from_millis(300));
            screenshot(&b, &format!("{prefix}{name}"));
        }
    }
    b.set_size(1280, 900).unwrap();
    b.execute("document.documentElement.dataset.theme = 'dark'", json!([]))
        .unwrap();
    b.goto(&format!("{base}/#/search?q=test")).unwrap();
    b.wait("#results .item", T).unwrap();
    screenshot(&b, "search-dark");
    b.set_size(400, 860).unwrap();
    b.goto(&format!("{base}/#/o/{id}")).unwrap();
    b.wait("#record", T).unwrap();
    std::thread::sleep(Duration::from_millis(300));
    screenshot(&b, "phone-detail-dark");
    b.execute("localStorage.clear()", json!([])).unwrap();
    b.set_size(1280, 900).unwrap();
}

/// The first hour in the viewer: a context link by project name, a bad
/// name and a malformed link that say so, highlights of whole words and
/// their inflections only, dates as the CLI writes them, the doctor's
/// verdict on the health page, and every page readable at 1280 and 390
/// pixels wide (no header broken inside a word, no sideways scrolling).
#[test]
fn links_highlights_dates_verdict_and_both_widths_read_well() {
    let Some(b) = browser() else { return };
    let env = Env::new();
    remembered(&env);
    let w = Worker::start(&env, |_| {});
    sign_in(&b, &env, &w, "feed");
    let base = format!("http://127.0.0.1:{}", w.port);

    b.goto(&format!("{base}/#/context?project=shop")).unwrap();
    b.wait_until("the shop's context by name", T, || {
        Ok(b.text_of("#c-text")?
            .contains("checkout rounding")
            .then_some(()))
    })
    .unwrap();
    b.goto(&format!("{base}/#/context?project=nowhere"))
        .unwrap();
    b.wait_until("the unknown project named", T, || {
        Ok(b.text_of(".error")?
            .contains("No project nowhere")
            .then_some(()))
    })
    .unwrap();
    b.goto(&format!("{base}/#/o/%E0%A4%A")).unwrap();
    b.wait_until("the malformed link named", T, || {
        Ok(b.text_of(".error")?.contains("malformed").then_some(()))
    })
    .unwrap();

    highlights_and_dates(&b, &base);
    b.goto(&format!("{base}/#/health")).unwrap();
    let verdict = b
        .wait_until("the doctor's verdict", T, || {
            Ok(b.find_all("#doctor-verdict")?
                .first()
                .map(|e| b.text(e).unwrap_or_default()))
        })
        .unwrap();
    assert!(
        verdict == "All good." || verdict.contains("warning") || verdict.contains("failure"),
        "{verdict}"
    );

    for (width, prefix) in [(1280, "wide"), (390, "narrow")] {
        every_page_reads_well(&b, &base, width, prefix);
    }
    b.set_size(1280, 900).unwrap();
}

/// A question's stop words are not marked, an inflection is ("fixed" marks
/// "Fix"), and a card's date reads as the CLI writes it.
fn highlights_and_dates(b: &Browser, base: &str) {
    b.goto(&format!("{base}/#/search?q=why+did+we+fixed+the+rounding"))
        .unwrap();
    let marks = b
        .wait_until("the highlights", T, || {
            let marks = b.execute(
                "const t = [...document.querySelectorAll('#results .item .title')] \
                   .find((e) => e.textContent === 'Fix the checkout rounding error'); \
                 return t ? [...t.querySelectorAll('mark')].map((m) => m.textContent) : []",
                json!([]),
            )?;
            Ok((marks != json!([])).then_some(marks))
        })
        .unwrap();
    assert_eq!(
        marks,
        json!(["Fix", "rounding"]),
        "stop words skipped, inflections met"
    );
    let (age, title) = (
        b.text_of("#results .item .meta span:last-child").unwrap(),
        b.execute(
            "return document.querySelector('#results .item .meta span:last-child').title",
            json!([]),
        )
        .unwrap(),
    );
    assert!(age.ends_with(" ago") || age == "just now", "{age}");
    let title = title.as_str().unwrap_or_default().to_owned();
    assert!(
        title.len() == 23 && title.as_bytes()[4] == b'-' && title.as_bytes()[16] == b' ',
        "the CLI's 2026-11-22 14:05 +01:00, not {title}"
    );
}

/// At `width`, no header, tab, button or link breaks inside a word and no
/// page scrolls sideways; screenshots named `<prefix>-<page>`.
fn every_page_reads_well(b: &Browser, base: &str, width: u32, prefix: &str) {
    b.set_size(width, 900).unwrap();
    for (page, ready) in [
        ("feed", "#feed .item"),
        ("search?q=rounding", "#results .item"),
        ("sessions", "#main .item"),
        ("projects", "#projects"),
        ("context?project=shop", "#c-text"),
        ("health", "#doctor"),
    ] {
        b.goto(&format!("{base}/#/{page}")).unwrap();
        b.wait(ready, T).unwrap();
        let broken = b
                .execute(
                    "return [...document.querySelectorAll('th, nav a, button, td > a')].filter((el) => { \
                       const r = document.createRange(); r.selectNodeContents(el); \
                       return el.textContent.trim() && new Set([...r.getClientRects()].map((c) => c.top)).size > 1; \
                     }).map((el) => el.textContent)",
                    json!([]),
                )
                .unwrap();
        assert_eq!(
            broken,
            json!([]),
            "{page} at {width}px: broken inside a word"
        );
        let sideways = b
            .execute(
                "return document.documentElement.scrollWidth > window.innerWidth + 1",
                json!([]),
            )
            .unwrap();
        assert_eq!(
            sideways,
            json!(false),
            "{page} at {width}px scrolls sideways"
        );
        let name = page.split('?').next().unwrap_or(page);
        screenshot(b, &format!("{prefix}-{name}"));
    }
}
