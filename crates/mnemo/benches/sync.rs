//! Sync through a real `mnemo server` on a real PostgreSQL (started like the
//! sync tests do): the first sync of N observations (push from one machine,
//! pull on another), an incremental sync of 100 new ones, a sync with
//! nothing to do (the baseline), the server's storage per record, and 100
//! concurrent clients pulling (latency percentiles per request).
//!
//! ```text
//! cargo bench --profile dev -p mnemo --bench sync
//! MNEMO_BENCH_SYNC_N=100000 cargo bench -p mnemo --bench sync
//! ```

#[path = "../tests/common/postgres.rs"]
mod postgres;
#[allow(dead_code)] // print_table: this bench prints its own table
mod support;

use std::io::{Read, Write};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use postgres::{Postgres, free_port};

const CLIENTS: usize = 100;
const REQUESTS_PER_CLIENT: usize = 20;

fn main() {
    let Some((bin, _)) = support::settings(1) else {
        return;
    };
    let n: usize = std::env::var("MNEMO_BENCH_SYNC_N")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(100_000);
    let Some(pg) = Postgres::start() else { return };
    let tmp = tempfile::tempdir().expect("temp dir");
    let root = tmp.path().canonicalize().expect("canonical temp dir");
    let port = free_port();
    let mut server = start_server(&bin, &pg, port, &root);
    let url = format!("http://127.0.0.1:{port}");

    let project = root.join("shop");
    std::fs::create_dir_all(&project).expect("project dir");
    let (a, b) = (root.join("a"), root.join("b"));
    mnemo_recall::synth::build(&a.join("mnemo.db"), &project, n, 0).expect("store of N");
    let key = root.join("me.key");
    let key = key.to_str().unwrap();
    run(
        &bin,
        &a,
        &root,
        &["sync", "register", "--server", &url, "--key-file", key],
    );
    let first_push = timed(&bin, &a, &root, &["sync"]);
    run(
        &bin,
        &b,
        &root,
        &["sync", "join", "--server", &url, "--key-file", key],
    );
    let first_pull = timed(&bin, &b, &root, &["sync"]);
    let noop = timed(&bin, &a, &root, &["sync"]);
    add_observations(&bin, &a, &root, &project, 100);
    let inc_push = timed(&bin, &a, &root, &["sync"]);
    let inc_pull = timed(&bin, &b, &root, &["sync"]);

    println!("| Step ({n} observations) | Time |\n|---|---|");
    println!("| sync with nothing to do (baseline) | {noop:.2?} |");
    println!("| first sync, push of {n} | {first_push:.2?} |");
    println!("| first sync, pull of {n} on another machine | {first_pull:.2?} |");
    println!("| incremental sync, push of 100 | {inc_push:.2?} |");
    println!("| incremental sync, pull of 100 | {inc_pull:.2?} |");
    storage(&pg);
    concurrency(port);
    let _ = server.kill();
    let _ = server.wait();
}

fn start_server(bin: &Path, pg: &Postgres, port: u16, home: &Path) -> Child {
    let child = Command::new(bin)
        .args(["server", "--listen", &format!("127.0.0.1:{port}")])
        .args(["--requests-per-minute", "100000"])
        .env("MNEMO_SERVER_DATABASE_URL", pg.url())
        .env("HOME", home)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("mnemo server");
    let deadline = Instant::now() + Duration::from_secs(30);
    while http(port, "GET", "/health", None, None).0 != 200 {
        assert!(Instant::now() < deadline, "mnemo server did not start");
        std::thread::sleep(Duration::from_millis(50));
    }
    child
}

fn command(bin: &Path, data: &Path, home: &Path, args: &[&str]) -> Command {
    let mut c = Command::new(bin);
    c.args(args)
        .env("MNEMO_DATA_DIR", data)
        .env("HOME", home)
        .env("MNEMO_NO_WORKER", "1");
    c
}

fn run(bin: &Path, data: &Path, home: &Path, args: &[&str]) {
    let out = command(bin, data, home, args).output().expect("mnemo");
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn timed(bin: &Path, data: &Path, home: &Path, args: &[&str]) -> Duration {
    support::timed_run(&mut command(bin, data, home, args), None)
}

fn add_observations(bin: &Path, data: &Path, home: &Path, project: &Path, count: usize) {
    let lines: String = (0..count)
        .map(|i| {
            serde_json::json!({"kind": "observation", "title": format!("Incremental finding {i}"),
                "narrative": format!("what the session found out, number {i}"), "project": project})
            .to_string()
                + "\n"
        })
        .collect();
    let mut c = command(bin, data, home, &["import", "-"]);
    support::timed_run(&mut c, Some(lines.as_bytes()));
}

fn storage(pg: &Postgres) {
    let row = pg.sql(
        "SELECT count(*), pg_total_relation_size('records'), pg_relation_size('records'),
                avg(size)::BIGINT FROM records",
    );
    let cols: Vec<i64> = row.split('|').map(|c| c.parse().unwrap_or(0)).collect();
    let (count, total, heap, blob) = (cols[0], cols[1], cols[2], cols[3]);
    println!("\n| Server storage | Bytes |\n|---|---|");
    println!("| records stored | {count} |");
    println!("| mean blob (nonce + ciphertext + tag) | {blob} |");
    println!(
        "| table + TOAST + indexes per record | {} |",
        total / count.max(1)
    );
    println!(
        "| of which the table's heap per record | {} |",
        heap / count.max(1)
    );
}

/// 100 clients (each its own account and device) pulling a page at once.
fn concurrency(port: u16) {
    let tokens: Vec<(String, i64)> = (0..CLIENTS)
        .map(|i| {
            let body = format!("{{\"public_key\":\"bench-{i}\",\"personal_key\":\"x\"}}");
            let (status, text) = http(port, "POST", "/v1/register", None, Some(&body));
            assert_eq!(status, 200, "{text}");
            let v: serde_json::Value = serde_json::from_str(&text).unwrap();
            (
                v["device_token"].as_str().unwrap().to_owned(),
                v["personal_space"].as_i64().unwrap(),
            )
        })
        .collect();
    let threads: Vec<_> = tokens
        .into_iter()
        .map(|(token, space)| {
            std::thread::spawn(move || {
                let path = format!("/v1/spaces/{space}/records?after=0&limit=100");
                (0..REQUESTS_PER_CLIENT)
                    .map(|_| {
                        let started = Instant::now();
                        let (status, _) = http(port, "GET", &path, Some(&token), None);
                        assert_eq!(status, 200);
                        started.elapsed()
                    })
                    .collect::<Vec<_>>()
            })
        })
        .collect();
    let mut all: Vec<Duration> = threads
        .into_iter()
        .flat_map(|t| t.join().unwrap())
        .collect();
    let p50 = support::percentile(&mut all, 0.5);
    let p99 = support::percentile(&mut all, 0.99);
    println!(
        "\n{CLIENTS} concurrent clients x {REQUESTS_PER_CLIENT} pulls: p50 {p50:.2?}, p99 {p99:.2?} per request"
    );
}

/// One HTTP/1.1 request on a fresh connection: (status, body).
fn http(
    port: u16,
    method: &str,
    path: &str,
    token: Option<&str>,
    body: Option<&str>,
) -> (u16, String) {
    let Ok(mut stream) = std::net::TcpStream::connect(("127.0.0.1", port)) else {
        return (0, String::new());
    };
    let auth = token
        .map(|t| format!("Authorization: Bearer {t}\r\n"))
        .unwrap_or_default();
    let body = body.unwrap_or("");
    let request = format!(
        "{method} {path} HTTP/1.1\r\nHost: x\r\n{auth}Content-Type: application/json\r\n\
         Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    if stream.write_all(request.as_bytes()).is_err() {
        return (0, String::new());
    }
    let mut answer = String::new();
    let _ = stream.read_to_string(&mut answer);
    let status = answer.get(9..12).and_then(|s| s.parse().ok()).unwrap_or(0);
    let text = answer.split_once("\r\n\r\n").map_or("", |(_, b)| b);
    (status, text.to_owned())
}
