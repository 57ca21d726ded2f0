//! Sync end to end: a real PostgreSQL (see common/postgres.rs), the real
//! `mnemo server` process, and data directories as the machines of two
//! people, each running the real `mnemo` binary. Unix only: the harness
//! runs Debian's PostgreSQL (and, under root, as its `postgres` user).
#![cfg(unix)]

mod common;
#[path = "common/mcp.rs"]
mod mcp_client;
#[path = "common/postgres.rs"]
mod postgres;
#[path = "common/worker.rs"]
mod worker_support;

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Output, Stdio};
use std::time::{Duration, Instant};

use common::*;
use mcp_client::McpClient;
use postgres::Postgres;
use serde_json::{Value, json};
use worker_support::{Worker, wait_for};

/// A `mnemo server` process on a free loopback port.
struct Server {
    child: Child,
    port: u16,
    _home: tempfile::TempDir,
}

impl Server {
    fn start(pg: &Postgres) -> Server {
        Server::start_with(pg, &[])
    }

    /// A server with extra options (limits).
    fn start_with(pg: &Postgres, options: &[&str]) -> Server {
        let home = tempfile::tempdir().unwrap();
        Server::start_on(pg, postgres::free_port(), home, options)
    }

    fn start_on(pg: &Postgres, port: u16, home: tempfile::TempDir, options: &[&str]) -> Server {
        let child = clean_mnemo()
            .args(["server", "--listen", &format!("127.0.0.1:{port}")])
            .args(options)
            .env("MNEMO_SERVER_DATABASE_URL", pg.url())
            .env("HOME", home.path())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let server = Server {
            child,
            port,
            _home: home,
        };
        server.wait_healthy();
        server
    }

    fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// `GET path`: the whole answer (status line, headers, body).
    fn get(&self, path: &str) -> Option<String> {
        self.request("GET", path, None, "")
    }

    /// One request on a fresh connection: the whole answer.
    fn request(&self, method: &str, path: &str, token: Option<&str>, body: &str) -> Option<String> {
        let mut stream = std::net::TcpStream::connect(("127.0.0.1", self.port)).ok()?;
        let auth = token
            .map(|t| format!("Authorization: Bearer {t}\r\n"))
            .unwrap_or_default();
        let request = format!(
            "{method} {path} HTTP/1.1\r\nHost: x\r\n{auth}Content-Type: application/json\r\n\
             Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        );
        stream.write_all(request.as_bytes()).ok()?;
        let mut answer = String::new();
        stream.read_to_string(&mut answer).ok()?;
        Some(answer)
    }

    fn wait_healthy(&self) {
        let deadline = Instant::now() + Duration::from_secs(30);
        while Instant::now() < deadline {
            if self
                .get("/health")
                .is_some_and(|a| a.starts_with("HTTP/1.1 200"))
            {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        panic!("mnemo server did not answer /health");
    }

    /// Kills the process (SIGKILL) and starts another on the same port.
    fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    fn restart(self, pg: &Postgres) -> Server {
        let (port, home) = (self.port, tempfile::tempdir().unwrap());
        drop(self);
        Server::start_on(pg, port, home, &[])
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.kill();
    }
}

/// One machine: a data directory, a scratch HOME, and a project checkout.
struct Machine {
    env: Env,
}

impl Machine {
    fn new() -> Machine {
        let env = Env::new();
        std::fs::create_dir_all(env.dir.path().join("proj")).unwrap();
        std::fs::create_dir_all(env.dir.path().join("private")).unwrap();
        Machine { env }
    }

    fn project(&self) -> PathBuf {
        std::fs::canonicalize(self.env.dir.path().join("proj")).unwrap()
    }

    fn private_project(&self) -> PathBuf {
        std::fs::canonicalize(self.env.dir.path().join("private")).unwrap()
    }

    fn key_file(&self) -> PathBuf {
        self.env.dir.path().join("me.key")
    }

    fn try_run(&self, args: &[&str]) -> Output {
        self.env
            .mnemo()
            .args(args)
            .current_dir(self.env.dir.path())
            .output()
            .unwrap()
    }

    fn run(&self, args: &[&str]) -> String {
        let out = self.try_run(args);
        assert_success(&out);
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Stores an observation in `project`, as a capture would.
    fn remember(&self, project: &Path, title: &str, narrative: &str) {
        let line = json!({"kind": "observation", "type": "discovery", "title": title,
                          "narrative": narrative, "project": project});
        self.import(&format!("{line}\n"));
    }

    /// `mnemo import -` of these JSON Lines.
    fn import(&self, lines: &str) {
        let mut c = self.env.mnemo();
        c.args(["import", "-"]);
        assert_success(&run_with_stdin(c, lines.as_bytes()));
    }

    /// `mnemo sync` in the background.
    fn spawn_sync(&self) -> Child {
        let mut c = self.env.mnemo();
        c.arg("sync").stdout(Stdio::null()).stderr(Stdio::null());
        c.spawn().unwrap()
    }

    fn sync(&self) -> String {
        self.run(&["sync"])
    }

    /// `mnemo ARGS` in the project's checkout with extra environment.
    fn run_in_project(&self, args: &[&str], vars: &[(&str, &str)]) -> String {
        let mut c = self.env.mnemo();
        c.args(args).current_dir(self.project());
        for (k, v) in vars {
            c.env(k, v);
        }
        let out = c.output().unwrap();
        assert_success(&out);
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// The memories prompt recall adds to `prompt` in the project (None:
    /// nothing).
    fn recall_for(&self, prompt: &str, vars: &[(&str, &str)]) -> Option<String> {
        let project = self.project();
        let payload = json!({"session_id": "s-recall", "hook_event_name": "UserPromptSubmit",
                             "cwd": project, "prompt": prompt});
        let out = self
            .env
            .hook_with("UserPromptSubmit", &payload.to_string(), |c| {
                c.env("CLAUDE_PROJECT_DIR", &project);
                for (k, v) in vars {
                    c.env(k, v);
                }
            });
        let answer = assert_hook_ok(&out);
        answer["hookSpecificOutput"]["additionalContext"]
            .as_str()
            .map(str::to_owned)
    }

    fn finds(&self, words: &str) -> bool {
        let out = self.run(&["search", "--all", "--json", words]);
        let v: Value = serde_json::from_str(&out).unwrap();
        v["hits"].as_array().is_some_and(|r| !r.is_empty())
    }

    fn public_key(&self) -> String {
        let v: Value = serde_json::from_str(&self.run(&["sync", "status", "--json"])).unwrap();
        v["public_key"].as_str().unwrap().to_owned()
    }

    /// The one value `sql` selects with `param`.
    fn value<T: rusqlite::types::FromSql>(&self, sql: &str, param: &str) -> T {
        self.env.db().query_row(sql, [param], |r| r.get(0)).unwrap()
    }

    fn id_of(&self, uid: &str) -> i64 {
        self.value("SELECT id FROM observations WHERE uid = ?1", uid)
    }

    fn uid_of(&self, title_word: &str) -> String {
        let sql = "SELECT uid FROM observations WHERE title LIKE '%' || ?1 || '%'";
        self.value(sql, title_word)
    }

    fn title(&self, uid: &str) -> String {
        self.value("SELECT title FROM observations WHERE uid = ?1", uid)
    }

    fn holds_bytes(&self, needle: &str) -> bool {
        all_bytes_under(&self.env.data())
            .iter()
            .any(|(_, bytes)| contains_bytes(bytes, needle.as_bytes()))
    }
}

fn register(m: &Machine, server: &Server, name: &str) {
    let key = m.key_file();
    m.run(&[
        "sync",
        "register",
        "--server",
        &server.url(),
        "--key-file",
        key.to_str().unwrap(),
        "--name",
        name,
    ]);
}

fn join(m: &Machine, server: &Server, key_file: &Path) {
    m.run(&[
        "sync",
        "join",
        "--server",
        &server.url(),
        "--key-file",
        key_file.to_str().unwrap(),
    ]);
}

/// The file is readable and writable by its owner only.
fn assert_owner_only(path: &Path) {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(path).unwrap().permissions().mode();
        assert_eq!(
            mode & 0o777,
            0o600,
            "{} is the owner's alone",
            path.display()
        );
    }
}

fn record_ids(pg: &Postgres) -> Vec<String> {
    pg.sql("SELECT id FROM records ORDER BY id")
        .lines()
        .map(str::to_owned)
        .collect()
}

/// Three machines of two people: alice's laptop and desktop, and bob, her
/// teammate, who was given her shared project.
struct Team {
    pg: Postgres,
    _server: Server,
    laptop: Machine,
    desktop: Machine,
    bob: Machine,
    /// The uid of alice's finding in the shared project.
    uid: String,
}

/// Sets the team up, checking each step; None without PostgreSQL.
fn team() -> Option<Team> {
    let pg = Postgres::start()?;
    let server = Server::start(&pg);
    let (laptop, desktop, bob) = (Machine::new(), Machine::new(), Machine::new());

    laptop.remember(
        &laptop.project(),
        "Ledger parser needs a BOM check",
        "the quasar ledger parser chokes on a byte order mark",
    );
    laptop.remember(
        &laptop.private_project(),
        "Private nebula plan",
        "the nebula plan stays with alice",
    );
    register(&laptop, &server, "alice");
    assert_owner_only(&laptop.key_file());
    laptop.sync();

    // Another machine of the same person.
    join(&desktop, &server, &laptop.key_file());
    desktop.sync();
    assert!(desktop.finds("quasar") && desktop.finds("nebula"));

    // A teammate gets the shared project only.
    register(&bob, &server, "bob");
    laptop.run(&["share", "--project", laptop.project().to_str().unwrap()]);
    laptop.run(&[
        "sync",
        "invite",
        "--project",
        laptop.project().to_str().unwrap(),
        "--member",
        &bob.public_key(),
    ]);
    laptop.sync();
    bob.run(&[
        "sync",
        "accept",
        "--project",
        bob.project().to_str().unwrap(),
    ]);
    bob.sync();
    assert!(
        bob.finds("quasar"),
        "the shared project's memory reached the teammate"
    );
    assert!(!bob.finds("nebula"), "a personal project stays personal");
    let uid = bob.uid_of("Ledger");
    let shown = bob.run(&["show", "--json", &bob.id_of(&uid).to_string()]);
    let shown: Value = serde_json::from_str(&shown).unwrap();
    let author = shown["records"][0]["author"].as_str().unwrap_or_default();
    assert!(
        author.starts_with("alice"),
        "records from others carry their author: {shown}"
    );
    let root: String = bob.value(
        "SELECT p.root FROM observations o JOIN projects p ON p.id = o.project_id
         WHERE o.uid = ?1",
        &uid,
    );
    assert_eq!(
        Path::new(&root),
        bob.project(),
        "shared records land in the teammate's checkout"
    );

    Some(Team {
        pg,
        _server: server,
        laptop,
        desktop,
        bob,
        uid,
    })
}

#[test]
fn two_machines_and_a_teammate_share_one_memory() {
    let Some(w) = team() else { return };
    the_server_holds_ciphertext_only(&w);
    a_teammates_records_carry_their_author(&w);
    a_teammates_records_can_be_left_out(&w);
    concurrent_edits_converge(&w);
    a_redaction_reaches_everyone(&w);
    a_forget_reaches_everyone(&w);
    a_removed_member_receives_nothing_new(&w);
}

/// No captured phrase and no uid in any of PostgreSQL's files.
fn the_server_holds_ciphertext_only(w: &Team) {
    let uid = &w.uid;
    w.pg.sql("CHECKPOINT");
    for needle in ["quasar ledger", "nebula plan", uid.as_str()] {
        let found = all_bytes_under(&w.pg.data_dir())
            .into_iter()
            .find(|(_, bytes)| contains_bytes(bytes, needle.as_bytes()));
        assert!(
            found.is_none(),
            "{needle:?} is readable in PostgreSQL's {:?}",
            found.map(|f| f.0)
        );
    }
}

/// Bob sees alice's record as her note wherever it appears: search (text,
/// JSON, MCP, HTTP API), the context index, prompt recall; alice's own
/// machines show it unmarked.
fn a_teammates_records_carry_their_author(w: &Team) {
    let noted = "[noted by alice";
    let bob = &w.bob;
    let turn = json!({"kind": "summary", "request": "Fix the garnet loader",
                      "completed": "the garnet loader reads byte order marks",
                      "project": w.laptop.project(), "prompt_number": 1,
                      "session": {"platform": "claude-code", "session_id": "alice-1"}});
    w.laptop.import(&format!("{turn}\n"));
    w.laptop.sync();
    bob.sync();
    let hits: Value =
        serde_json::from_str(&bob.run_in_project(&["search", "--json", "quasar"], &[])).unwrap();
    assert!(
        hits["hits"][0]["author"]
            .as_str()
            .is_some_and(|a| a.starts_with("alice")),
        "{hits}"
    );
    let text = bob.run_in_project(&["search", "quasar"], &[]);
    assert!(text.contains(noted), "{text}");
    let context = bob.run_in_project(&["context"], &[]);
    assert!(
        context.contains(noted) && context.contains("information, not instructions"),
        "{context}"
    );
    assert!(
        context
            .lines()
            .any(|l| l.contains("garnet loader") && l.contains(noted)),
        "alice's session is marked too: {context}"
    );
    // Bob's own notes: in a store of one record every word is common.
    for word in ["copper", "tin", "zinc", "iron", "nickel", "cobalt"] {
        bob.remember(
            &bob.project(),
            &format!("Bob's {word} note"),
            &format!("the {word} smelter runs hot"),
        );
    }
    let recalled = bob
        .recall_for(
            "why does the ledger parser choke on a byte order mark?",
            &[],
        )
        .expect("prompt recall finds alice's finding");
    assert!(recalled.contains(noted), "{recalled}");

    let mut mcp = McpClient::start(&bob.env, &bob.project(), &[]);
    let (answer, error) = mcp.call("search", json!({"query": "quasar"}));
    assert!(!error && answer.contains(noted), "{answer}");
    mcp.close();

    let worker = Worker::start(&bob.env, |_| {});
    let (status, found) = worker.get("/api/search?q=quasar");
    assert_eq!(status, 200, "{found}");
    assert!(
        found["hits"][0]["author"]
            .as_str()
            .is_some_and(|a| a.starts_with("alice")),
        "{found}"
    );
    let (status, state) = worker.get("/api/sync");
    assert_eq!(status, 200, "{state}");
    assert_eq!(state["configured"], true, "{state}");
    assert_eq!(state["spaces"].as_array().map(Vec::len), Some(2), "{state}");
    assert!(state["last_sync_at"].is_i64(), "{state}");
    assert!(!state.to_string().contains("token"), "no secret in {state}");
    drop(worker);

    for own in [&w.laptop, &w.desktop] {
        let text = own.run(&["search", "--all", "quasar"]);
        assert!(text.contains("quasar") || text.contains("Ledger"), "{text}");
        assert!(
            !text.contains("noted by"),
            "alice's own record is unmarked: {text}"
        );
    }
}

/// `[sync] others = false`: bob's search, index and prompt recall hold
/// only his own memory.
fn a_teammates_records_can_be_left_out(w: &Team) {
    let bob = &w.bob;
    let mine = [("MNEMO_SYNC_OTHERS", "false")];
    let hits: Value =
        serde_json::from_str(&bob.run_in_project(&["search", "--json", "quasar"], &mine)).unwrap();
    let kinds: Vec<&Value> = hits["hits"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| &h["kind"])
        .collect();
    assert!(
        kinds.iter().all(|k| *k == "prompt") && !hits.to_string().contains("author"),
        "only bob's own prompt is left: {hits}"
    );
    let context = bob.run_in_project(&["context"], &mine);
    assert!(
        !context.contains("Ledger") && !context.contains("garnet") && !context.contains("noted by"),
        "{context}"
    );
    let recalled = bob.recall_for(
        "why does the ledger parser choke on a byte order mark?",
        &mine,
    );
    assert!(
        recalled.as_deref().is_none_or(|r| !r.contains("noted by")),
        "{recalled:?}"
    );
}

/// Concurrent edits of one record converge on the last writer.
fn concurrent_edits_converge(w: &Team) {
    let uid = &w.uid;
    w.laptop.run(&[
        "edit",
        &w.laptop.id_of(uid).to_string(),
        "--title",
        "Title from the laptop",
    ]);
    std::thread::sleep(Duration::from_millis(20));
    w.desktop.run(&[
        "edit",
        &w.desktop.id_of(uid).to_string(),
        "--title",
        "Title from the desktop",
    ]);
    for m in [&w.laptop, &w.desktop, &w.laptop, &w.bob, &w.desktop] {
        m.sync();
    }
    for m in [&w.laptop, &w.desktop, &w.bob] {
        assert_eq!(m.title(uid), "Title from the desktop");
    }
}

/// A redaction on one machine reaches all, and the old version leaves the server.
fn a_redaction_reaches_everyone(w: &Team) {
    w.laptop.remember(
        &w.laptop.project(),
        "Deploy token",
        "the deploy token is pulsar-4c1d-secret-77",
    );
    let summary = json!({"kind": "summary", "request": "ship it", "project": w.laptop.project(),
                         "learned": "the deploy works with pulsar-4c1d-secret-77 set"});
    w.laptop.import(&format!("{summary}\n"));
    w.laptop.sync();
    for m in [&w.desktop, &w.bob] {
        m.sync();
        assert!(m.finds("pulsar"));
    }
    let before = record_ids(&w.pg);
    w.desktop.run(&["redact", "pulsar-4c1d-secret-77"]);
    w.desktop.sync();
    for m in [&w.laptop, &w.bob] {
        m.sync();
        assert!(
            !m.holds_bytes("pulsar-4c1d-secret-77"),
            "the redacted secret is gone from every machine"
        );
        assert!(m.finds("deploy token"), "the redacted record itself stays");
    }
    let after = record_ids(&w.pg);
    assert!(
        before.iter().any(|id| !after.contains(id)),
        "the unredacted version was deleted on the w.server"
    );
    assert_eq!(
        w.pg.sql("SELECT count(*) - count(DISTINCT (space_id, record_key)) FROM records"),
        "0"
    );
}

/// A forget on one machine reaches all.
fn a_forget_reaches_everyone(w: &Team) {
    let uid = &w.uid;
    w.laptop.run(&["forget", &w.laptop.id_of(uid).to_string()]);
    w.laptop.sync();
    for m in [&w.desktop, &w.bob] {
        m.sync();
        assert!(!m.finds("quasar"), "forgotten everywhere");
        assert!(!m.holds_bytes("quasar ledger"));
    }
}

/// A removed member receives nothing new.
fn a_removed_member_receives_nothing_new(w: &Team) {
    w.laptop.run(&[
        "sync",
        "remove",
        "--project",
        w.laptop.project().to_str().unwrap(),
        "--member",
        &w.bob.public_key(),
    ]);
    w.laptop.remember(
        &w.laptop.project(),
        "Cache goes stale",
        "the magnetar cache is stale after each deploy",
    );
    w.laptop.sync();
    w.desktop.sync();
    assert!(w.desktop.finds("magnetar"));
    let _ = w.bob.try_run(&["sync"]);
    assert!(
        !w.bob.finds("magnetar"),
        "a removed member receives nothing new"
    );
    assert!(w.bob.finds("deploy token"), "what they had stays theirs");
}

#[test]
fn tampered_replayed_and_reordered_blobs_are_refused() {
    let Some(pg) = Postgres::start() else { return };
    let server = Server::start(&pg);
    let (laptop, desktop) = (Machine::new(), Machine::new());
    for word in ["alpha", "bravo", "charlie", "delta"] {
        laptop.remember(
            &laptop.project(),
            &format!("Finding {word}"),
            &format!("the {word}-marker finding"),
        );
    }
    register(&laptop, &server, "alice");
    laptop.sync();
    join(&desktop, &server, &laptop.key_file());

    let ids = record_ids(&pg);
    assert_eq!(ids.len(), 4);
    // Tampered: one byte of the ciphertext changed.
    pg.sql(&format!(
        "UPDATE records SET blob = set_byte(blob, 40, get_byte(blob, 40) # 1) WHERE id = {}",
        ids[0]
    ));
    // Reordered: a blob moved to another sequence number.
    pg.sql(&format!(
        "UPDATE records SET seq = seq + 1000 WHERE id = {}",
        ids[1]
    ));
    let out = desktop.sync();
    assert!(out.contains("refused 2"), "{out}");
    let titles = desktop
        .env
        .strings("SELECT title FROM observations ORDER BY title");
    assert_eq!(
        titles.len(),
        2,
        "only the genuine blobs were applied: {titles:?}"
    );

    // Replayed: an already applied blob served again under a new id.
    pg.sql(&format!(
        "WITH old AS (DELETE FROM records WHERE id = {} RETURNING *)
         INSERT INTO records (space_id, device_id, seq, epoch, record_key, blob, size)
         SELECT space_id, device_id, seq, epoch, record_key, blob, size FROM old",
        ids[3]
    ));
    let out = desktop.sync();
    assert!(out.contains("refused 1"), "{out}");
    assert_eq!(desktop.env.count("SELECT count(*) FROM observations"), 2);
}

#[test]
fn sync_resumes_after_the_server_the_client_or_the_database_dies() {
    let Some(pg) = Postgres::start() else { return };
    let mut server = Server::start(&pg);
    let (laptop, desktop) = (Machine::new(), Machine::new());
    register(&laptop, &server, "alice");
    laptop.import(&findings(&laptop.project(), 400));

    // The client killed mid-push, then the server killed mid-sync.
    let mut client = laptop.spawn_sync();
    std::thread::sleep(Duration::from_millis(150));
    let _ = client.kill();
    let _ = client.wait();
    let client = laptop.spawn_sync();
    std::thread::sleep(Duration::from_millis(100));
    server.kill();
    let _ = wait_output(client);
    let out = laptop.try_run(&["sync"]);
    assert!(!out.status.success(), "a sync without a server says so");
    let doctor = laptop.try_run(&["doctor", "--json"]);
    let doctor: Value = serde_json::from_slice(&doctor.stdout).unwrap();
    let check = doctor["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "sync");
    assert_eq!(
        check.unwrap()["status"],
        "warn",
        "doctor shows the failed sync: {doctor}"
    );
    let mut server = server.restart(&pg);
    server.wait_healthy();

    // The database restarted under a running server.
    pg.stop_server();
    pg.start_server();
    laptop.sync();
    let status: Value = serde_json::from_str(&laptop.run(&["sync", "status", "--json"])).unwrap();
    assert_eq!(status["pending_push"], 0, "{status}");
    assert!(status["last_error"].is_null(), "{status}");

    join(&desktop, &server, &laptop.key_file());
    desktop.sync();
    assert_eq!(desktop.env.count("SELECT count(*) FROM observations"), 400);
    assert_eq!(
        pg.sql("SELECT count(*) FROM records"),
        "400",
        "each record stored once"
    );
    server.kill();
}

/// `n` observations in `project`, as JSON Lines for `mnemo import`.
fn findings(project: &Path, n: usize) -> String {
    (0..n)
        .map(|i| {
            json!({"kind": "observation", "title": format!("Finding number {i}"),
                   "narrative": format!("observation body {i}"), "project": project})
            .to_string()
                + "\n"
        })
        .collect()
}

/// PostgreSQL killed (an immediate shutdown: no checkpoint, crash recovery
/// on restart) while a large push is under way: that sync fails, the next
/// one stores the rest, and every record is on the server exactly once.
#[test]
fn the_database_killed_during_a_push_loses_and_duplicates_nothing() {
    const N: usize = 6000;
    let Some(pg) = Postgres::start() else { return };
    let server = Server::start(&pg);
    let (laptop, desktop) = (Machine::new(), Machine::new());
    register(&laptop, &server, "alice");
    laptop.import(&findings(&laptop.project(), N));
    let stored = || {
        pg.sql("SELECT count(*) FROM records")
            .parse::<usize>()
            .unwrap_or(0)
    };

    let mut client = laptop.spawn_sync();
    wait_for("the push under way", Duration::from_secs(120), || {
        (stored() > 0).then_some(())
    });
    assert!(
        client.try_wait().unwrap().is_none(),
        "the push was still running when the database died"
    );
    pg.kill_server();
    let out = wait_output(client);
    assert!(!out.status.success(), "the interrupted sync says so");
    let partial = stored_after_restart(&pg);
    assert!(
        partial < N,
        "the database died mid-push ({partial} of {N} stored)"
    );

    laptop.sync();
    let status: Value = serde_json::from_str(&laptop.run(&["sync", "status", "--json"])).unwrap();
    assert_eq!(status["pending_push"], 0, "{status}");
    assert_eq!(stored(), N, "each record stored once");
    assert_eq!(
        pg.sql("SELECT count(DISTINCT (space_id, record_key)) FROM records"),
        N.to_string()
    );
    join(&desktop, &server, &laptop.key_file());
    desktop.sync();
    assert_eq!(
        desktop.env.count("SELECT count(*) FROM observations"),
        N as i64,
        "nothing lost"
    );
}

/// Starts the killed database again; how many records it kept.
fn stored_after_restart(pg: &Postgres) -> usize {
    pg.start_server();
    pg.sql("SELECT count(*) FROM records").parse().unwrap()
}

/// One turn of a session: its prompt and the observation it led to.
fn turn_with_prompt(project: &Path, session: &str, prompt: &str, title: &str) -> String {
    let key = json!({"platform": "claude-code", "session_id": session});
    [
        json!({"kind": "session", "session": key, "project": project}),
        json!({"kind": "prompt", "uid": format!("{session}-p1"), "session": key,
               "prompt_number": 1, "text": prompt}),
        json!({"kind": "observation", "type": "discovery", "title": title, "session": key,
               "prompt_number": 1, "narrative": format!("what {title} found"),
               "project": project}),
    ]
    .iter()
    .map(|l| format!("{l}\n"))
    .collect()
}

/// `mnemo sync` draws its progress on a terminal (here a pseudo-terminal
/// from util-linux's `script`) and writes nothing to a pipe but its report.
#[cfg(target_os = "linux")]
#[test]
fn progress_shows_on_a_terminal_only() {
    let Some(pg) = Postgres::start() else { return };
    let terminal = std::process::Command::new("script")
        .args(["-qec", "true", "/dev/null"])
        .output();
    if !terminal.is_ok_and(|o| o.status.success()) {
        eprintln!("skipped: no `script` or no pseudo-terminal to give `mnemo sync`");
        return;
    }
    let server = Server::start(&pg);
    let (laptop, desktop) = (Machine::new(), Machine::new());
    laptop.import(&findings(&laptop.project(), 1200));
    register(&laptop, &server, "alice");
    let mut c = laptop.env.mnemo();
    c.args(["-qec", &format!("{MNEMO} sync"), "/dev/null"]);
    let mut script = std::process::Command::new("script");
    script.args(c.get_args());
    for (k, v) in c.get_envs() {
        match v {
            Some(v) => script.env(k, v),
            None => script.env_remove(k),
        };
    }
    let out = script.env_remove("CI").output().unwrap();
    assert_success(&out);
    let shown = String::from_utf8_lossy(&out.stdout);
    assert!(
        shown.contains("mnemo sync: [") && shown.contains("pushed 1200/1200"),
        "{shown}"
    );

    join(&desktop, &server, &laptop.key_file());
    let piped = desktop.try_run(&["sync"]);
    assert_success(&piped);
    assert!(
        piped.stderr.is_empty(),
        "no progress on a pipe: {}",
        String::from_utf8_lossy(&piped.stderr)
    );
    assert!(String::from_utf8_lossy(&piped.stdout).contains("pulled 1200"));
}

/// The user's prompts stay on their machine unless `[sync] raw` is on.
#[test]
fn prompts_travel_only_when_turned_on() {
    let Some(pg) = Postgres::start() else { return };
    let server = Server::start(&pg);
    let (laptop, desktop) = (Machine::new(), Machine::new());
    let project = laptop.project();
    laptop.import(&turn_with_prompt(
        &project,
        "s1",
        "please look at the garnet importer",
        "Garnet importer",
    ));
    register(&laptop, &server, "alice");
    laptop.sync();
    join(&desktop, &server, &laptop.key_file());
    desktop.sync();
    assert!(desktop.finds("Garnet"), "the observation travelled");
    assert!(
        !desktop.holds_bytes("garnet importer"),
        "its prompt stayed on the laptop"
    );

    laptop.import(&turn_with_prompt(
        &project,
        "s2",
        "now check the basalt exporter",
        "Basalt exporter",
    ));
    let mut c = laptop.env.mnemo();
    c.arg("sync").env("MNEMO_SYNC_RAW", "true");
    assert_success(&c.output().unwrap());
    desktop.sync();
    let prompts = desktop.env.strings("SELECT text FROM prompts");
    assert_eq!(
        prompts,
        ["now check the basalt exporter"],
        "with raw on, the prompt came along"
    );
    let turn: i64 = desktop.value(
        "SELECT count(*) FROM observations o JOIN prompts q
           ON q.session_id = o.session_id AND q.prompt_number = o.prompt_number
         WHERE o.title = ?1",
        "Basalt exporter",
    );
    assert_eq!(turn, 1, "the prompt joined its observation's turn");
}

#[test]
fn the_worker_pushes_a_change_in_the_background() {
    let Some(pg) = Postgres::start() else { return };
    let server = Server::start(&pg);
    let (laptop, desktop) = (Machine::new(), Machine::new());
    register(&laptop, &server, "alice");
    join(&desktop, &server, &laptop.key_file());
    let worker = Worker::start(&desktop.env, |_| {});
    desktop.remember(
        &desktop.project(),
        "Found by the desktop",
        "the worker carries the zircon finding",
    );
    wait_for("the worker's push", Duration::from_secs(60), || {
        laptop.sync();
        laptop.finds("zircon").then_some(())
    });
    drop(worker);
}

#[test]
fn the_server_enforces_its_limits_and_revoked_devices() {
    let Some(pg) = Postgres::start() else { return };
    let server = Server::start_with(&pg, &["--space-quota-mb", "0", "--max-request-mb", "1"]);
    let laptop = Machine::new();
    laptop.remember(
        &laptop.project(),
        "Over quota",
        "a finding the quota keeps waiting",
    );
    register(&laptop, &server, "alice");

    // Over the space's quota: refused, and the record waits in the outbox.
    let out = laptop.try_run(&["sync"]);
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("quota"),
        "{out:?}"
    );
    let status: Value = serde_json::from_str(&laptop.run(&["sync", "status", "--json"])).unwrap();
    assert_eq!(status["pending_push"], 1, "nothing is lost: {status}");

    // A request body over the limit.
    let token: String = laptop.value(
        "SELECT value FROM sync_state WHERE key = ?1",
        "device_token",
    );
    let big = format!("{{\"records\": [], \"pad\": \"{}\"}}", "x".repeat(2 << 20));
    let answer = server
        .request("POST", "/v1/spaces/1/records", Some(&token), &big)
        .unwrap();
    assert!(
        answer.starts_with("HTTP/1.1 413"),
        "{}",
        &answer[..answer.len().min(200)]
    );

    // The counters, and a device that left: its token no longer works.
    let metrics = server.get("/metrics").unwrap();
    assert!(
        metrics.contains("mnemo_sync_pushes_refused_total 1"),
        "{metrics}"
    );
    laptop.run(&["sync", "leave"]);
    let answer = server
        .request("GET", "/v1/spaces", Some(&token), "")
        .unwrap();
    assert!(answer.starts_with("HTTP/1.1 401"), "{answer}");
    assert!(
        !laptop.try_run(&["sync"]).status.success(),
        "no longer set up"
    );

    // The rate limit, per device.
    let limited = Server::start_with(&pg, &["--requests-per-minute", "2"]);
    let other = Machine::new();
    register(&other, &limited, "carol");
    let token: String = other.value(
        "SELECT value FROM sync_state WHERE key = ?1",
        "device_token",
    );
    let codes: Vec<String> = (0..4)
        .map(|_| {
            limited
                .request("GET", "/v1/spaces", Some(&token), "")
                .unwrap()[9..12]
                .to_owned()
        })
        .collect();
    assert!(codes.contains(&"429".to_owned()), "{codes:?}");
}

fn wait_output(child: Child) -> Output {
    child.wait_with_output().unwrap()
}

/// A self-signed certificate for 127.0.0.1 made by the test: (cert, key).
fn self_signed(dir: &Path, name: &str) -> (PathBuf, PathBuf) {
    let made = rcgen::generate_simple_self_signed(vec!["127.0.0.1".to_owned()]).unwrap();
    let (cert, key) = (
        dir.join(format!("{name}.pem")),
        dir.join(format!("{name}.key")),
    );
    std::fs::write(&cert, made.cert.pem()).unwrap();
    std::fs::write(&key, made.signing_key.serialize_pem()).unwrap();
    (cert, key)
}

/// `mnemo server` with TLS: the sync client trusts its certificate only
/// when told to (`[sync] ca_file` or `MNEMO_SYNC_CA_FILE`), and nothing is
/// served in clear on its port.
#[test]
fn the_server_speaks_tls_to_a_client_that_trusts_its_certificate() {
    let Some(pg) = Postgres::start() else { return };
    let home = tempfile::tempdir().unwrap();
    let (cert, key) = self_signed(home.path(), "server");
    let port = postgres::free_port();
    let child = clean_mnemo()
        .args(["server", "--listen", &format!("127.0.0.1:{port}")])
        .args(["--tls-cert", cert.to_str().unwrap()])
        .env("MNEMO_SERVER_TLS_KEY", &key)
        .env("MNEMO_SERVER_DATABASE_URL", pg.url())
        .env("HOME", home.path())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // Killed when dropped, even when an assertion fails.
    let _server = Server {
        child,
        port,
        _home: home,
    };
    let url = format!("https://127.0.0.1:{port}");
    let (laptop, desktop, stranger) = (Machine::new(), Machine::new(), Machine::new());
    // The laptop trusts the certificate through its config file.
    std::fs::create_dir_all(laptop.env.data()).unwrap();
    std::fs::write(
        laptop.env.data().join("config.toml"),
        format!("[sync]\nca_file = {:?}\n", cert.to_str().unwrap()),
    )
    .unwrap();
    let key_file = laptop.key_file();
    let register = ["sync", "register", "--server", &url, "--key-file"];
    let deadline = Instant::now() + Duration::from_secs(30);
    while !laptop
        .try_run(&[&register[..], &[key_file.to_str().unwrap()]].concat())
        .status
        .success()
    {
        assert!(Instant::now() < deadline, "register over TLS never worked");
        std::thread::sleep(Duration::from_millis(100));
    }
    laptop.remember(
        &laptop.project(),
        "Vortex cache",
        "the vortex cache warms at boot",
    );
    laptop.sync();

    // Another machine trusts it through the environment, and pulls.
    let join = ["sync", "join", "--server", &url, "--key-file"];
    let ca = [("MNEMO_SYNC_CA_FILE", cert.to_str().unwrap())];
    desktop.run_in_project(&[&join[..], &[key_file.to_str().unwrap()]].concat(), &ca);
    desktop.run_in_project(&["sync"], &ca);
    assert!(desktop.finds("vortex cache"));

    // A client that does not trust it refuses to talk, and says why.
    let other_key = stranger.key_file();
    let out = stranger.try_run(&[&register[..], &[other_key.to_str().unwrap()]].concat());
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr).to_lowercase();
    assert!(err.contains("certificate"), "{err}");
    assert!(
        !other_key.exists(),
        "nothing written after a refused handshake"
    );

    // Plain HTTP on the TLS port gets no answer.
    let mut stream = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(5)))
        .unwrap();
    let _ = stream.write_all(b"GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    let mut answer = String::new();
    let _ = stream.read_to_string(&mut answer);
    assert!(!answer.contains("200 OK"), "served in clear: {answer}");
}

/// A certificate the server cannot serve with stops it at once, naming the
/// file and the problem (no database needed to find out).
#[test]
fn the_server_refuses_a_certificate_it_cannot_serve_with() {
    let dir = tempfile::tempdir().unwrap();
    let (cert, _) = self_signed(dir.path(), "a");
    let (_, other_key) = self_signed(dir.path(), "b");
    let missing = dir.path().join("missing.pem");
    let cases = [
        (&missing, &other_key, "cannot read the TLS certificate"),
        (&cert, &other_key, "does not go with the certificate"),
        (&cert, &cert, "holds no usable PEM private key"),
    ];
    for (cert, key, expected) in cases {
        let out = clean_mnemo()
            .args(["server", "--listen", "127.0.0.1:0"])
            .args(["--database-url", "postgres://nobody@127.0.0.1:1/none"])
            .args(["--tls-cert", cert.to_str().unwrap()])
            .args(["--tls-key", key.to_str().unwrap()])
            .env("HOME", dir.path())
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{err}");
        assert!(err.contains(expected), "{expected}: {err}");
    }
    let out = clean_mnemo()
        .args(["server", "--database-url", "postgres://x@127.0.0.1:1/x"])
        .args(["--tls-cert", cert.to_str().unwrap()])
        .env("HOME", dir.path())
        .output()
        .unwrap();
    assert!(!out.status.success(), "a certificate without its key");
    assert!(String::from_utf8_lossy(&out.stderr).contains("--tls-key"));
}
