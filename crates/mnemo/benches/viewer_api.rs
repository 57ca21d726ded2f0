//! What the web viewer waits for, answered by a real worker over loopback
//! HTTP with 100,000 observations in the store: the feed's first page, the
//! search the search box sends as the user types, the projects list, an
//! observation's detail and its timeline; and the bytes of a first load.
//!
//! ```text
//! cargo bench -p mnemo --bench viewer_api
//! MNEMO_BENCH_RUNS=200 MNEMO_BENCH_BASE=100000 cargo bench -p mnemo --bench viewer_api
//! ```
//!
//! The store is [`mnemo_recall::synth`]'s (deterministic): `MNEMO_BENCH_BASE`
//! observations (100,000 by default) in one project and 10,000 in another.
//! Each request is one connection from the CLI's own blocking client, timed
//! from connect to the last byte; requests are interleaved round-robin so
//! machine noise hits every route alike.

#[allow(dead_code)]
mod support;

use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use mnemo_worker::client;

const TIMEOUT: Duration = Duration::from_secs(30);

struct Worker {
    child: Child,
    port: u16,
    token: String,
}

impl Drop for Worker {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn start_worker(bin: &std::path::Path, data: &std::path::Path) -> Worker {
    let child = Command::new(bin)
        .args(["worker", "run"])
        .env("MNEMO_DATA_DIR", data)
        .env("MNEMO_WORKER_PORT", "0")
        .env("MNEMO_PROVIDER", "offline")
        .env("MNEMO_WORKER_IDLE_EXIT_SECS", "600")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("mnemo worker run");
    // Killed on drop from here on, whatever happens.
    let mut w = Worker {
        child,
        port: 0,
        token: String::new(),
    };
    let deadline = Instant::now() + TIMEOUT;
    loop {
        let info = std::fs::read_to_string(data.join("worker.json"))
            .ok()
            .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
            .filter(|i| i["pid"].as_u64() == Some(u64::from(w.child.id())));
        if let Some(info) = info {
            w.port = info["port"].as_u64().unwrap() as u16;
            w.token = info["token"].as_str().unwrap().to_owned();
            if client::request(w.port, "GET", "/api/health", None, None, TIMEOUT)
                .is_ok_and(|r| r.status == 200)
            {
                return w;
            }
        }
        assert!(Instant::now() < deadline, "the worker did not start");
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn main() {
    let Some((bin, runs)) = support::settings(100) else {
        return;
    };
    let base: usize = std::env::var("MNEMO_BENCH_BASE")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(100_000);
    let tmp = tempfile::tempdir().expect("temp dir");
    let root = tmp.path().canonicalize().expect("canonical temp dir");
    let project = root.join("shop");
    std::fs::create_dir_all(&project).expect("project dir");
    let data = root.join("data");
    let started = Instant::now();
    mnemo_recall::synth::build(&data.join("mnemo.db"), &project, base, 10_000)
        .expect("synthetic store");
    println!(
        "store: {base} + 10000 observations, {:.1} MB, built in {:.0} s",
        std::fs::metadata(data.join("mnemo.db")).expect("db").len() as f64 / 1e6,
        started.elapsed().as_secs_f64()
    );
    let w = start_worker(&bin, &data);
    let shop = project.display().to_string();

    let mut routes: Vec<(String, String, Vec<Duration>)> = [
        ("GET /api/health (baseline)", "/api/health".to_owned()),
        (
            "feed: first page of observations (50)",
            "/api/observations?limit=50".to_owned(),
        ),
        (
            "feed: first page of summaries (20)",
            "/api/summaries?limit=20".to_owned(),
        ),
        (
            "search: one typical word",
            "/api/search?q=timeout&limit=50".to_owned(),
        ),
        (
            "search: a prefix as typed (`tim`)",
            "/api/search?q=tim&limit=50".to_owned(),
        ),
        (
            "search: the most common word",
            "/api/search?q=login&limit=50".to_owned(),
        ),
        (
            "search: two words in one project, type filter",
            format!(
                "/api/search?q=timeout%20retry&limit=50&type=bugfix&project={}",
                enc(&shop)
            ),
        ),
        (
            "search: empty box (newest)",
            "/api/search?limit=50".to_owned(),
        ),
        ("projects with counts", "/api/projects".to_owned()),
        (
            "detail: one observation",
            "/api/observations/5000".to_owned(),
        ),
        (
            "detail: its timeline (4 + 4)",
            "/api/timeline/5000?before=4&after=4".to_owned(),
        ),
    ]
    .into_iter()
    .map(|(n, p)| (n.to_owned(), p, Vec::new()))
    .collect();

    for (name, path, _) in &routes {
        let r = client::request(w.port, "GET", path, Some(&w.token), None, TIMEOUT).unwrap();
        assert_eq!(r.status, 200, "{name}: {}", r.body);
    }
    for _ in 0..runs {
        for (_, path, samples) in routes.iter_mut() {
            let t = Instant::now();
            let r = client::request(w.port, "GET", path, Some(&w.token), None, TIMEOUT).unwrap();
            samples.push(t.elapsed());
            assert_eq!(r.status, 200);
        }
    }
    println!("| request ({runs} runs each) | median | p90 |");
    println!("|---|---:|---:|");
    for (name, _, samples) in routes.iter_mut() {
        println!(
            "| {name} | {:.2} ms | {:.2} ms |",
            ms(support::percentile(samples, 0.5)),
            ms(support::percentile(samples, 0.9))
        );
    }

    let (files, bytes) = first_load(w.port);
    println!("first load: {bytes} bytes in {files} files (uncompressed)");
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// Fetches the page and every file it loads, following module imports.
fn first_load(port: u16) -> (usize, usize) {
    let mut queue = vec![
        "/".to_owned(),
        "/assets/style.css".to_owned(),
        "/assets/icon.svg".to_owned(),
        "/assets/js/app.js".to_owned(),
    ];
    let mut seen = std::collections::HashSet::new();
    let mut bytes = 0;
    while let Some(path) = queue.pop() {
        if !seen.insert(path.clone()) {
            continue;
        }
        let r = client::request(port, "GET", &path, None, None, TIMEOUT).unwrap();
        assert_eq!(r.status, 200, "{path}");
        bytes += r.body.len();
        for imported in r.body.split("from \"./").skip(1) {
            let file = imported.split('"').next().unwrap();
            queue.push(format!("/assets/js/{file}"));
        }
    }
    (seen.len(), bytes)
}

fn enc(text: &str) -> String {
    text.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}
