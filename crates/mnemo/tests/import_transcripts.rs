//! `mnemo import --transcripts`: the real binary reads Claude Code
//! transcripts (copies of the real ones in mnemo-transcript's fixtures, and
//! small written ones) into a real data directory; the worker then
//! compresses what was imported.

mod common;
#[path = "common/worker.rs"]
mod worker_support;

use std::path::{Path, PathBuf};
use std::process::Output;
use std::time::Duration;

use common::{Env, all_bytes_under, contains_bytes};
use serde_json::{Value, json};
use worker_support::{Worker, hook, payload, project, wait_for};

const T: Duration = Duration::from_secs(60);

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../mnemo-transcript/tests/fixtures/spotter")
}

/// The fixtures laid out as Claude Code does: `<projects>/<project>/…`.
fn projects_dir(env: &Env) -> PathBuf {
    let dir = env.dir.path().join("claude/projects/-home-u-spotter");
    copy_dir(&fixtures(), &dir);
    dir.parent().unwrap().to_path_buf()
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let path = entry.unwrap().path();
        let target = to.join(path.file_name().unwrap());
        if path.is_dir() {
            copy_dir(&path, &target);
        } else {
            std::fs::copy(&path, &target).unwrap();
        }
    }
}

fn import(env: &Env, dir: &Path) -> Output {
    let out = env
        .mnemo()
        .args(["import", "--transcripts"])
        .arg(dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn counts(env: &Env) -> [i64; 4] {
    [
        env.count("SELECT count(*) FROM sessions"),
        env.count("SELECT count(*) FROM prompts"),
        env.count("SELECT count(*) FROM events WHERE kind != 'turn_end'"),
        env.count("SELECT count(*) FROM events WHERE kind = 'turn_end'"),
    ]
}

#[test]
fn real_transcripts_import_once_however_often_imported() {
    let env = Env::new();
    let dir = projects_dir(&env);
    let first = import(&env, &dir);
    let [sessions, prompts, events, ends] = counts(&env);
    assert_eq!(sessions, 4, "one per transcript file");
    // Each prompt and task notification is a turn; local commands
    // (`/model`, `/mcp`) and compactions are not.
    assert_eq!(prompts, 9);
    assert!(events > 150, "{events}");
    assert_eq!(ends, prompts, "every finished turn ends once");
    assert!(
        stdout(&first).contains("imported 4 sessions, 9 turns"),
        "{}",
        stdout(&first)
    );
    // Tool calls keep their ids (what live capture dedupes on) and their turn.
    assert_eq!(
        env.count("SELECT count(*) FROM events WHERE kind != 'turn_end' AND tool_use_id IS NULL"),
        0
    );
    assert_eq!(
        env.count("SELECT count(*) FROM events WHERE prompt_number < 1"),
        0
    );
    // The project is the transcript's working directory, as live.
    assert!(env.count("SELECT count(*) FROM projects WHERE root LIKE '%spotter%'") >= 1);
    // Ended, with the transcript remembered for the worker.
    assert_eq!(
        env.count("SELECT count(*) FROM sessions WHERE status = 'ended' AND transcript_path LIKE '%.jsonl'"),
        4
    );

    let second = import(&env, &dir);
    assert_eq!(counts(&env), [sessions, prompts, events, ends]);
    assert!(
        stdout(&second).contains("imported 0 sessions, 0 turns, 0 events"),
        "{}",
        stdout(&second)
    );

    // Without a directory: Claude Code's, under CLAUDE_CONFIG_DIR.
    let third = env
        .mnemo()
        .args(["import", "--transcripts"])
        .env("CLAUDE_CONFIG_DIR", dir.parent().unwrap())
        .output()
        .unwrap();
    assert!(third.status.success());
    assert!(
        stdout(&third).contains("from 4 transcripts"),
        "{}",
        stdout(&third)
    );
    assert_eq!(counts(&env), [sessions, prompts, events, ends]);
}

#[test]
fn a_relative_directory_is_remembered_absolute_for_the_worker() {
    let env = Env::new();
    projects_dir(&env);
    let out = env
        .mnemo()
        .args(["import", "--transcripts", "claude/projects"])
        .current_dir(env.dir.path())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let paths = env.strings("SELECT transcript_path FROM sessions");
    assert_eq!(paths.len(), 4);
    assert!(
        paths
            .iter()
            .all(|p| Path::new(p).is_absolute() && Path::new(p).is_file()),
        "{paths:?}"
    );
}

#[test]
fn a_missing_directory_is_a_clear_error() {
    let env = Env::new();
    let out = env
        .mnemo()
        .args(["import", "--transcripts", "/nonexistent/transcripts"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no transcripts at /nonexistent"));
}

#[test]
fn install_imports_past_sessions_when_asked_and_only_hints_otherwise() {
    let env = Env::new();
    let dir = projects_dir(&env);
    let config_dir = dir.parent().unwrap();
    let install = |extra: &[&str]| {
        let out = env
            .mnemo()
            .arg("install")
            .args(extra)
            .env("CLAUDE_CONFIG_DIR", config_dir)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        stdout(&out)
    };
    // Not on a terminal: nothing is asked or imported, the way is shown.
    let plain = install(&[]);
    assert!(plain.contains("4 past Claude Code sessions"), "{plain}");
    assert!(plain.contains("mnemo import --transcripts"), "{plain}");
    assert_eq!(env.count("SELECT count(*) FROM sessions"), 0);
    assert!(!install(&["--no-import"]).contains("past Claude Code sessions"));
    let imported = install(&["--import-transcripts"]);
    assert!(imported.contains("imported 4 sessions"), "{imported}");
    assert_eq!(env.count("SELECT count(*) FROM sessions"), 4);
}

// ---- a small session written here, live and imported ----

const SESSION: &str = "7e57a11e-0000-4000-8000-000000000001";
const QUESTION: &str = "Which cache should the user lookup use?";
const ANSWER: &str = "In-process LRU";

struct Lines {
    cwd: String,
    lines: Vec<String>,
    second: u32,
}

impl Lines {
    fn push(&mut self, mut v: Value) {
        self.second += 1;
        v["sessionId"] = json!(SESSION);
        v["cwd"] = json!(self.cwd);
        v["timestamp"] = json!(format!(
            "2026-03-01T10:{:02}:{:02}Z",
            self.second / 60,
            self.second % 60
        ));
        self.lines.push(v.to_string());
    }

    fn user(&mut self, text: &str) {
        self.push(json!({"type": "user", "uuid": format!("u{}", self.second),
                         "message": {"role": "user", "content": text}}));
    }

    fn say(&mut self, text: &str) {
        self.push(json!({"type": "assistant", "message": {"role": "assistant",
                         "content": [{"type": "text", "text": text}]}}));
    }

    fn call(&mut self, id: &str, name: &str, input: Value, result: Value) {
        self.push(json!({"type": "assistant", "message": {"role": "assistant",
                         "content": [{"type": "tool_use", "id": id, "name": name, "input": input}]}}));
        let text = result.to_string();
        self.push(json!({"type": "user", "toolUseResult": result, "message": {"role": "user",
                         "content": [{"type": "tool_result", "tool_use_id": id, "content": text}]}}));
    }
}

/// Two turns: the agent asks which cache to use, the user answers, the
/// agent writes it; then tests. `secret` is planted in the prompt, a note,
/// and a tool result.
fn session_lines(project: &Path, secret: &str) -> Vec<String> {
    let mut l = Lines {
        cwd: project.display().to_string(),
        lines: vec![],
        second: 0,
    };
    let file = |name: &str| project.join(name).display().to_string();
    l.user(&format!(
        "Add a cache to the user lookup, the key is {secret} <private>and my pin is 4242-quokka</private>"
    ));
    l.say("Two reasonable designs here; asking which one fits the deployment.");
    l.call(
        "toolu_q1",
        "AskUserQuestion",
        json!({"questions": [{"question": QUESTION, "header": "Cache", "multiSelect": false,
                              "options": [{"label": ANSWER, "description": "no new service"},
                                          {"label": "Redis", "description": "shared"}]}]}),
        json!({"questions": [], "answers": {QUESTION: ANSWER}}),
    );
    l.say(&format!(
        "Using the in-process LRU since there is a single instance. Token {secret} stays out."
    ));
    l.call(
        "toolu_w1",
        "Write",
        json!({"file_path": file("cache.rs"), "content": "pub struct Lru;\n"}),
        json!({"type": "create", "filePath": file("cache.rs"), "content": "pub struct Lru;\n"}),
    );
    l.call(
        "toolu_b1",
        "Bash",
        json!({"command": "cargo build", "description": "Build"}),
        json!({"stdout": format!("Finished; AWS key {secret}"), "stderr": "", "interrupted": false}),
    );
    l.say("Added an in-process LRU cache for the user lookup in cache.rs.");
    l.user("now add tests for it");
    l.call(
        "toolu_w2",
        "Write",
        json!({"file_path": file("cache_test.rs"), "content": "#[test] fn hit() {}\n"}),
        json!({"type": "create", "filePath": file("cache_test.rs"), "content": "#[test] fn hit() {}\n"}),
    );
    l.say("Tests added in cache_test.rs.");
    l.lines
}

fn write_session(env: &Env, project: &Path, secret: &str) -> PathBuf {
    let dir = env.dir.path().join("claude/projects/-proj");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!("{SESSION}.jsonl"));
    std::fs::write(&path, session_lines(project, secret).join("\n") + "\n").unwrap();
    path
}

const SECRET: &str = "AKIAQWERTYUIOPASDFGH";

#[test]
fn a_session_captured_live_and_then_imported_is_one_session() {
    let env = Env::new();
    let proj = project(&env, "shop");
    let transcript = write_session(&env, &proj, SECRET);
    // The first turn through the real hooks, as Claude Code sends them.
    let pid = "live-prompt-1";
    let with = |name: &str, edit: &dyn Fn(&mut Value)| {
        payload(name, &proj, SESSION, pid, |v| {
            v["transcript_path"] = json!(transcript);
            edit(v)
        })
    };
    hook(
        &env,
        "SessionStart",
        &with("SessionStart.json", &|_| {}),
        |_| {},
    );
    hook(
        &env,
        "UserPromptSubmit",
        &with("UserPromptSubmit.json", &|v| {
            v["prompt"] = json!("Add a cache to the user lookup");
        }),
        |_| {},
    );
    hook(
        &env,
        "PostToolUse",
        &with("PostToolUse.Write.json", &|v| {
            v["tool_use_id"] = json!("toolu_w1");
            v["tool_input"]["file_path"] = json!(proj.join("cache.rs"));
            v["tool_response"]["filePath"] = json!(proj.join("cache.rs"));
        }),
        |_| {},
    );
    hook(&env, "Stop", &with("Stop.json", &|_| {}), |_| {});
    assert_eq!(counts(&env), [1, 1, 1, 1]);

    import(&env, transcript.parent().unwrap());
    let [sessions, prompts, events, ends] = counts(&env);
    assert_eq!(sessions, 1, "the live session and the imported one are one");
    assert_eq!(
        prompts, 2,
        "the live turn is not imported again, the next one is added"
    );
    assert_eq!(ends, 2);
    // Every tool call once: the live Write is not duplicated, the Bash the
    // live hooks missed in turn 1 is added to turn 1, and AskUserQuestion
    // is skipped as live capture skips it (its answer reaches the worker
    // through the transcript).
    assert_eq!(events, 3);
    assert_eq!(
        env.count("SELECT count(DISTINCT tool_use_id) FROM events WHERE tool_use_id IS NOT NULL"),
        3
    );
    assert_eq!(
        env.count(
            "SELECT count(*) FROM events WHERE tool_use_id = 'toolu_b1' AND prompt_number = 1"
        ),
        1
    );
    assert_eq!(env.count("SELECT prompt_count FROM sessions"), 2);
    import(&env, transcript.parent().unwrap());
    assert_eq!(counts(&env), [1, 2, 3, 2]);
}

#[test]
fn imported_turns_are_compressed_and_nothing_private_is_stored() {
    let env = Env::new();
    let proj = project(&env, "shop");
    let transcript = write_session(&env, &proj, SECRET);
    import(&env, transcript.parent().unwrap());
    let _worker = Worker::start(&env, |_| {});
    wait_for("the imported turns compressed", T, || {
        (env.count("SELECT count(*) FROM events WHERE status != 'done'") == 0).then_some(())
    });
    // One summary per turn, observations on the files written, in the
    // project the transcript's cwd names.
    assert_eq!(env.count("SELECT count(*) FROM summaries"), 2);
    let root = proj.display().to_string();
    let files: i64 = env
        .db()
        .query_row(
            "SELECT count(*) FROM observations o JOIN projects p ON p.id = o.project_id
             WHERE p.root = ?1 AND o.files_modified LIKE '%cache%'",
            [&root],
            |r| r.get(0),
        )
        .unwrap();
    assert!(files >= 1);
    let request: String = env
        .db()
        .query_row(
            "SELECT request FROM summaries WHERE prompt_number = 1",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert!(
        request.starts_with("Add a cache to the user lookup"),
        "{request}"
    );
    for bytes in all_bytes_under(&env.data()) {
        // The private words, distinctive enough that no timestamp or page
        // number in the database or a log can hold them by chance.
        for leak in [SECRET.as_bytes(), b"4242-quokka".as_slice()] {
            assert!(
                !contains_bytes(&bytes.1, leak),
                "{} holds {}",
                bytes.0.display(),
                String::from_utf8_lossy(leak)
            );
        }
    }
}

/// The why: the user's answer to the agent's question is not a tool event
/// (capture skips AskUserQuestion); it reaches the worker through the
/// transcript, and the offline compressor keeps it as a decision.
#[test]
fn a_users_answer_becomes_a_decision_with_its_reason() {
    let env = Env::new();
    let proj = project(&env, "shop");
    let transcript = write_session(&env, &proj, SECRET);
    import(&env, transcript.parent().unwrap());
    let _worker = Worker::start(&env, |_| {});
    wait_for("the imported turns compressed", T, || {
        (env.count("SELECT count(*) FROM events WHERE status != 'done'") == 0).then_some(())
    });
    let decisions = env.strings(
        "SELECT title || ' ' || coalesce(narrative, '') FROM observations \
         WHERE type = 'decision' AND prompt_number = 1",
    );
    assert!(
        decisions.iter().any(|d| d.contains(ANSWER)),
        "no decision carries the answer: {decisions:?}"
    );
}

/// Records made from imported sessions carry the time of the session's
/// events (March 2026 here), never the time of the import.
#[test]
fn imported_records_carry_the_time_of_their_events() {
    let env = Env::new();
    let proj = project(&env, "shop");
    let transcript = write_session(&env, &proj, SECRET);
    // A last turn without a tool call: the user settles a choice in words.
    let mut more = Lines {
        cwd: proj.display().to_string(),
        lines: vec![],
        second: 100,
    };
    more.user("No, use Redis instead of the in-process LRU, because we run several instances.");
    more.say("Understood, Redis then.");
    let mut text = std::fs::read_to_string(&transcript).unwrap();
    text.push_str(&(more.lines.join("\n") + "\n"));
    std::fs::write(&transcript, text).unwrap();
    import(&env, transcript.parent().unwrap());
    let _worker = Worker::start(&env, |_| {});
    wait_for("the imported turns compressed", T, || {
        (env.count("SELECT count(*) FROM events WHERE status != 'done'") == 0).then_some(())
    });
    let last_turn = env.count("SELECT count(*) FROM observations WHERE prompt_number = 3");
    assert!(last_turn > 0, "the tool-less turn made no record");
    // 2026-03-01T00:00:00Z and 2026-03-02T00:00:00Z in ms.
    let (day, next) = (1_772_323_200_000_i64, 1_772_409_600_000_i64);
    for table in ["observations", "summaries"] {
        let total = env.count(&format!("SELECT count(*) FROM {table}"));
        let that_day = env.count(&format!(
            "SELECT count(*) FROM {table} WHERE created_at >= {day} AND created_at < {next}"
        ));
        assert!(total > 0, "no {table}");
        assert_eq!(that_day, total, "{table} stamped outside the session's day");
    }
    let out = env
        .mnemo()
        .args(["search", "--json", "--project"])
        .arg(&proj)
        .arg("cache")
        .output()
        .unwrap();
    let found = stdout(&out);
    assert!(found.contains("2026-03-01"), "{found}");
    let context = env
        .mnemo()
        .args(["context", "--project"])
        .arg(&proj)
        .output()
        .unwrap();
    let index = stdout(&context);
    assert!(index.contains("latest"), "{index}");
    assert!(!index.contains("latest just now"), "{index}");
}

/// Tool-call ids, turns and turn ends of a store, for comparing two.
fn shape(db: &Path) -> (Vec<String>, i64, i64, i64) {
    let db = rusqlite::Connection::open(db).unwrap();
    let mut stmt = db
        .prepare(
            "SELECT tool_use_id FROM events WHERE tool_use_id IS NOT NULL ORDER BY tool_use_id",
        )
        .unwrap();
    let ids = stmt
        .query_map([], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    let count = |sql: &str| db.query_row(sql, [], |r| r.get::<_, i64>(0)).unwrap();
    (
        ids,
        count("SELECT count(*) FROM sessions"),
        count("SELECT count(*) FROM prompts"),
        count("SELECT count(*) FROM events WHERE kind = 'turn_end'"),
    )
}

/// The real Claude Code writes the transcript: imported into an empty store
/// it gives what the live hooks captured, and imported over the live
/// capture it adds nothing.
#[test]
fn a_real_claude_code_transcript_imports_as_the_hooks_captured_it() -> anyhow::Result<()> {
    use mnemo_testkit::{Sandbox, StandIn, Step, git_init};
    let sandbox = Sandbox::new();
    let project = sandbox.project();
    git_init(&project)?;
    let install = common::sandbox_mnemo(&sandbox)
        .args(["install", "--no-import"])
        .output()?;
    assert!(
        install.status.success(),
        "{}",
        String::from_utf8_lossy(&install.stderr)
    );
    let notes = project.join("notes.md");
    let server = StandIn::with_script([
        Step::write(&notes, "# notes\n"),
        Step::bash("ls"),
        Step::bash("python3 -c 'import sys; sys.exit(3)'"),
        Step::read(&notes),
        Step::text("Wrote the notes."),
    ]);
    sandbox
        .claude(&server.base_url(), "write the notes")
        .env("MNEMO_NO_WORKER", "1")
        .max_turns(10)
        .run()?
        .expect_success();
    let live = shape(&sandbox.data().join("mnemo.db"));
    assert_eq!(live.0.len(), 4, "{live:?}");

    let projects = sandbox.home().join(".claude/projects");
    let fresh = tempfile::tempdir()?;
    let out = common::sandbox_mnemo(&sandbox)
        .env("MNEMO_DATA_DIR", fresh.path())
        .env("MNEMO_NO_WORKER", "1")
        .args(["import", "--transcripts"])
        .arg(&projects)
        .output()?;
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(shape(&fresh.path().join("mnemo.db")), live);

    let over = common::sandbox_mnemo(&sandbox)
        .env("MNEMO_NO_WORKER", "1")
        .args(["import", "--transcripts"])
        .output()?;
    assert!(
        over.status.success(),
        "{}",
        String::from_utf8_lossy(&over.stderr)
    );
    assert_eq!(shape(&sandbox.data().join("mnemo.db")), live);
    Ok(())
}

/// The live path: the real Claude Code gives its hooks `transcript_path`,
/// and the worker reads the agent's explanation of a change from it into
/// the observation of that change.
#[test]
fn the_worker_reads_the_why_from_a_real_claude_code_transcript() -> anyhow::Result<()> {
    use mnemo_testkit::{Sandbox, StandIn, Step, git_init};
    const WHY: &str = "compares in constant time, so timing no longer leaks the password";
    let sandbox = Sandbox::new();
    let project = sandbox.project();
    git_init(&project)?;
    let install = common::sandbox_mnemo(&sandbox)
        .args(["install", "--no-import"])
        .output()?;
    assert!(
        install.status.success(),
        "{}",
        String::from_utf8_lossy(&install.stderr)
    );
    let auth = project.join("auth.py");
    let server = StandIn::with_script([
        Step::write(
            &auth,
            "def login(user, pw):\n    return check_hash(user, pw)\n",
        )
        .with_text(format!("Switching login to check_hash: it {WHY}.")),
        Step::text("Login now uses check_hash."),
    ]);
    sandbox
        .claude(&server.base_url(), "make login safe")
        .env("MNEMO_NO_WORKER", "1")
        .max_turns(6)
        .run()?
        .expect_success();
    let db_path = sandbox.data().join("mnemo.db");
    let transcript: Option<String> = rusqlite::Connection::open(&db_path)?.query_row(
        "SELECT transcript_path FROM sessions",
        [],
        |r| r.get(0),
    )?;
    assert!(transcript.is_some_and(|t| Path::new(&t).is_file()));

    let mut worker = common::sandbox_mnemo(&sandbox)
        .args(["worker", "run"])
        .env("MNEMO_WORKER_PORT", "0")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()?;
    let pending = || {
        rusqlite::Connection::open(&db_path)
            .and_then(|db| {
                db.query_row(
                    "SELECT count(*) FROM events WHERE status != 'done'",
                    [],
                    |r| r.get::<_, i64>(0),
                )
            })
            .unwrap_or(1)
    };
    wait_for("the turn compressed", T, || (pending() == 0).then_some(()));
    worker.kill()?;
    worker.wait()?;
    let db = rusqlite::Connection::open(&db_path)?;
    let mut stmt = db.prepare(
        "SELECT title || ' ' || narrative FROM observations WHERE files_modified LIKE '%auth.py%'",
    )?;
    let texts: Vec<String> = stmt
        .query_map([], |r| r.get(0))?
        .collect::<Result<_, _>>()?;
    assert!(
        texts.iter().any(|t| t.contains("constant time")),
        "the explanation is not in the observation: {texts:?}"
    );
    Ok(())
}

// ---- Codex rollouts ----

/// Rollouts recorded with the real `codex` binary (0.169, against the test
/// kit's stand-in model): one patch of a file, a three-file patch with a
/// shell read and a search with no match, shell reads of every form and a
/// patch that moves, deletes and adds.
fn codex_fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../mnemo-transcript/tests/fixtures/codex")
}

/// `$CODEX_HOME` with the recorded rollouts laid out as Codex does
/// (`sessions/YYYY/MM/DD/rollout-<time>-<name>.jsonl`), each one's working
/// directory moved to a folder of this test named like the original.
fn codex_home(env: &Env) -> (PathBuf, PathBuf) {
    let home = env.dir.path().join("codex-home");
    let day = home.join("sessions/2026/11/27");
    std::fs::create_dir_all(&day).unwrap();
    for (i, entry) in std::fs::read_dir(codex_fixtures()).unwrap().enumerate() {
        let path = entry.unwrap().path();
        let text = std::fs::read_to_string(&path).unwrap();
        let meta: Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
        let cwd = meta["payload"]["cwd"].as_str().unwrap();
        let moved = project(env, Path::new(cwd).file_name().unwrap().to_str().unwrap());
        let name = format!("rollout-2026-11-27T10-0{i}-00-fixture{i}.jsonl");
        std::fs::write(day.join(name), text.replace(cwd, moved.to_str().unwrap())).unwrap();
    }
    (home, day)
}

/// A rollout with two lines that are not JSON among good ones: its one turn
/// is kept, the two lines are skipped and said so.
fn broken_rollout(day: &Path, project: &Path) -> PathBuf {
    let line = rollout_line;
    let lines = [
        line(
            "session_meta",
            json!({"id": "broken-rollout-1", "cwd": project}),
        ),
        "this line is not JSON".to_owned(),
        line(
            "event_msg",
            json!({"type": "item_completed", "turn_id": "t1", "item": {"type": "UserMessage",
                   "content": [{"type": "text", "text": "rename the ledger module"}]}}),
        ),
        r#"{"timestamp": "2026-11-27T11:00:01.000Z", "type": "response_item", "payl"#.to_owned(),
        line(
            "response_item",
            json!({"type": "message", "role": "assistant",
                   "content": [{"type": "output_text", "text": "Renamed it."}]}),
        ),
    ];
    let path = day.join("rollout-2026-11-27T11-00-00-broken.jsonl");
    std::fs::write(&path, lines.join("\n")).unwrap();
    path
}

/// One rollout line of `kind` with `payload`.
fn rollout_line(kind: &str, payload: Value) -> String {
    json!({"timestamp": "2026-11-27T11:00:00.000Z", "type": kind, "payload": payload}).to_string()
}

/// A Codex session in a git worktree that is gone (its rollout says it was
/// a checkout of a branch) joins its repository's project, as it did while
/// the worktree lived.
#[test]
fn a_codex_session_in_a_gone_worktree_joins_its_repository() {
    let env = Env::new();
    let repo = project(&env, "shop");
    std::fs::create_dir_all(repo.join(".git")).unwrap();
    let gone = repo.join(".worktrees/fix-login");
    let day = env.dir.path().join("codex-home/sessions/2026/11/27");
    std::fs::create_dir_all(&day).unwrap();
    let lines = [
        rollout_line(
            "session_meta",
            json!({"id": "wt-1", "cwd": gone, "git": {"branch": "fix-login"}}),
        ),
        rollout_line(
            "event_msg",
            json!({"type": "item_completed", "turn_id": "t1", "item": {"type": "UserMessage",
                   "content": [{"type": "text", "text": "fix the login redirect"}]}}),
        ),
    ];
    std::fs::write(
        day.join("rollout-2026-11-27T11-00-00-wt.jsonl"),
        lines.join("\n"),
    )
    .unwrap();
    import_codex(&env, &env.dir.path().join("codex-home"));
    assert_eq!(
        env.strings("SELECT p.root FROM sessions s JOIN projects p ON p.id = s.project_id"),
        [repo.display().to_string()]
    );
}

/// `mnemo install` offers Codex's past sessions too: it names them when not
/// on a terminal, and imports them when asked.
#[test]
fn install_offers_codex_sessions_too() {
    let env = Env::new();
    let (home, _) = codex_home(&env);
    let install = |extra: &[&str]| {
        let out = env
            .mnemo()
            .arg("install")
            .args(extra)
            .env("CODEX_HOME", &home)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        stdout(&out)
    };
    let plain = install(&[]);
    assert!(plain.contains("3 past Codex CLI sessions"), "{plain}");
    assert_eq!(env.count("SELECT count(*) FROM sessions"), 0);
    let imported = install(&["--import-transcripts"]);
    assert!(imported.contains("imported 3 sessions"), "{imported}");
    assert_eq!(
        env.strings("SELECT DISTINCT platform FROM sessions"),
        ["codex"]
    );
}

fn import_codex(env: &Env, codex_home: &Path) -> Output {
    let out = env
        .mnemo()
        .args(["import", "--transcripts"])
        .env("CODEX_HOME", codex_home)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// Without a directory, `import --transcripts` finds Codex's rollouts under
/// `$CODEX_HOME/sessions`: each is a Codex session of its working
/// directory's project, with every file of every patch, shell reads as
/// reads, the rollout remembered for the worker; a broken line is skipped
/// and said, a FIFO named like a rollout is refused at once, and importing
/// again adds nothing.
#[test]
fn codex_rollouts_import_as_the_sessions_codex_hooks_capture() {
    let env = Env::new();
    let (home, day) = codex_home(&env);
    let ledger = project(&env, "ledger");
    broken_rollout(&day, &ledger);
    #[cfg(unix)]
    {
        let fifo = day.join("rollout-2026-11-27T12-00-00-fifo.jsonl");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    }
    // A shell read is a read of a file that is on disk.
    let tokens = project(&env, "project");
    for name in ["README.md", "src/parser.rs", "src/lexer.rs"] {
        std::fs::create_dir_all(tokens.join(name).parent().unwrap()).unwrap();
        std::fs::write(tokens.join(name), "").unwrap();
    }
    let out = import_codex(&env, &home);
    let (said, warned) = (
        stdout(&out),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    );
    assert!(said.contains("imported 4 sessions, 4 turns"), "{said}");
    assert!(said.contains("2 lines skipped"), "{said}");
    assert!(
        warned.contains("broken.jsonl: not JSON objects"),
        "{warned}"
    );
    #[cfg(unix)]
    assert!(
        warned.contains("fifo.jsonl") && warned.contains("FIFO"),
        "{warned}"
    );

    assert_eq!(
        env.strings("SELECT DISTINCT platform FROM sessions"),
        ["codex"]
    );
    let roots = env.strings(
        "SELECT DISTINCT p.root FROM sessions s JOIN projects p ON p.id = s.project_id ORDER BY 1",
    );
    let names: Vec<&str> = roots.iter().filter_map(|r| r.rsplit('/').next()).collect();
    assert_eq!(names, ["acme-billing", "ledger", "project"], "{roots:?}");
    let paths = env.strings("SELECT transcript_path FROM sessions");
    assert!(paths.iter().all(|p| is_rollout_file(p)), "{paths:?}");
    assert_eq!(
        env.strings("SELECT DISTINCT tool_name FROM events WHERE tool_name IS NOT NULL ORDER BY 1"),
        ["Bash", "apply_patch"]
    );
    let modified = env
        .strings("SELECT files_modified FROM events WHERE tool_name = 'apply_patch'")
        .join(" ");
    for name in [
        "hello.py",
        "parser.rs",
        "lexer.rs",
        "token.rs",
        "naming.rs",
        "old_util.rs",
    ] {
        assert!(modified.contains(name), "{name} not kept: {modified}");
    }
    let read = env
        .strings("SELECT files_read FROM events WHERE tool_name = 'Bash'")
        .join(" ");
    for name in ["parser.rs", "lexer.rs", "README.md"] {
        assert!(read.contains(name), "{name} not read: {read}");
    }
    let prompt = env.strings("SELECT text FROM prompts WHERE text LIKE '%ledger%'");
    assert_eq!(prompt, ["rename the ledger module"]);

    let before = counts(&env);
    let again = import_codex(&env, &home);
    assert!(
        stdout(&again).contains("imported 0 sessions, 0 turns, 0 events"),
        "{}",
        stdout(&again)
    );
    assert_eq!(counts(&env), before);
}

fn is_rollout_file(path: &str) -> bool {
    let path = Path::new(path);
    path.is_absolute()
        && path.is_file()
        && path
            .file_name()
            .is_some_and(|n| n.to_string_lossy().starts_with("rollout-"))
}

/// The worker compresses imported Codex turns as live ones: the why said
/// before a patch comes from the rollout, and a search that found nothing
/// (exit 1) is no failure.
#[test]
fn imported_codex_turns_are_compressed_with_their_why() {
    let env = Env::new();
    let (home, _) = codex_home(&env);
    import_codex(&env, &home);
    let _worker = Worker::start(&env, |_| {});
    wait_for("the imported turns compressed", T, || {
        (env.count("SELECT count(*) FROM events WHERE status != 'done'") == 0).then_some(())
    });
    let memory = env
        .strings("SELECT title || ' ' || narrative FROM observations")
        .join("\n");
    assert!(
        memory.contains("share one type"),
        "the why is missing: {memory}"
    );
    assert_eq!(
        env.count(
            "SELECT count(*) FROM events WHERE kind = 'tool_failure' AND input LIKE '%rg -n%'"
        ),
        0
    );
    assert_eq!(env.count("SELECT count(*) FROM summaries"), 3);
}

// ---- Gemini CLI chat recordings ----

/// Chat recordings made with the real `gemini` binary (0.61, against the
/// test kit's stand-in model), their paths scrubbed to `/home/dev/projects`.
fn gemini_fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../mnemo-transcript/tests/fixtures/gemini")
}

/// The folder a recorded session worked in, from its calls' file paths.
const GEMINI_RECORDED_ROOT: &str = "/home/dev/projects/";

/// `$GEMINI_CLI_HOME` with the recordings laid out as Gemini CLI does
/// (`.gemini/tmp/<project>/chats/session-*.jsonl`), each one's project moved
/// to a folder of this test named like the original. Gemini names the first
/// project's folder in `projects.json`; the second's folder is its
/// `projectHash` (the SHA-256 of the root's path), as older builds do.
fn gemini_home(env: &Env) -> (PathBuf, Vec<PathBuf>) {
    let home = env.dir.path().join("gemini-home");
    let tmp = home.join(".gemini/tmp");
    let mut listed = serde_json::Map::new();
    let mut chats = Vec::new();
    let mut fixtures: Vec<PathBuf> = std::fs::read_dir(gemini_fixtures())
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    fixtures.sort();
    for (i, path) in fixtures.iter().enumerate() {
        let text = std::fs::read_to_string(path).unwrap();
        let name = recorded_project(&text);
        let moved = project(env, &name);
        let recorded = format!("{GEMINI_RECORDED_ROOT}{name}");
        let mut text = text.replace(&recorded, moved.to_str().unwrap());
        let folder = if i == 0 {
            listed.insert(moved.display().to_string(), json!(name));
            name.clone()
        } else {
            let header: Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
            let hash = sha256_hex(moved.to_str().unwrap());
            text = text.replace(header["projectHash"].as_str().unwrap(), &hash);
            hash
        };
        let dir = tmp.join(folder).join("chats");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(
            dir.join(format!("session-2026-11-2{i}T10-00-fixture{i}.jsonl")),
            text,
        )
        .unwrap();
        chats.push(dir);
    }
    let projects = json!({ "projects": listed });
    std::fs::write(home.join(".gemini/projects.json"), projects.to_string()).unwrap();
    (home, chats)
}

/// The name of the project folder a recording's calls wrote in.
fn recorded_project(text: &str) -> String {
    let at = text.find(GEMINI_RECORDED_ROOT).unwrap() + GEMINI_RECORDED_ROOT.len();
    let name: String = text[at..]
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_'))
        .collect();
    name
}

fn sha256_hex(text: &str) -> String {
    use sha2::Digest;
    let digest = sha2::Sha256::digest(text.as_bytes());
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

/// `mnemo` with Gemini CLI's home at `home` and no other host's sessions.
fn with_gemini_home(env: &Env, home: &Path) -> std::process::Command {
    let mut c = env.mnemo();
    c.env("GEMINI_CLI_HOME", home).env_remove("CODEX_HOME");
    c
}

fn succeeded(out: Output) -> Output {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// Without a directory, `import --transcripts` finds Gemini CLI's chat
/// recordings under `$GEMINI_CLI_HOME/.gemini/tmp`: each is a Gemini session
/// of its project (from `projects.json`, or its `projectHash`), with its
/// prompts, its calls in the common vocabulary, the files written and read,
/// a rewrite told from a creation, and the recording remembered for the
/// worker; a broken line is skipped and said, a FIFO named like a recording
/// is refused, and importing again adds nothing.
#[test]
fn gemini_recordings_import_as_the_sessions_gemini_hooks_capture() {
    let env = Env::new();
    let (home, chats) = gemini_home(&env);
    broken_recording_and_fifo(&chats[0]);
    let import = || {
        succeeded(
            with_gemini_home(&env, &home)
                .args(["import", "--transcripts"])
                .output()
                .unwrap(),
        )
    };
    let out = import();
    let (said, warned) = (
        stdout(&out),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    );
    assert!(said.contains("imported 3 sessions, 3 turns"), "{said}");
    assert!(said.contains("1 line skipped"), "{said}");
    assert!(
        warned.contains("broken.jsonl: not JSON objects"),
        "{warned}"
    );
    #[cfg(unix)]
    assert!(
        warned.contains("fifo.jsonl") && warned.contains("FIFO"),
        "{warned}"
    );

    assert_eq!(
        env.strings("SELECT DISTINCT platform FROM sessions"),
        ["gemini"]
    );
    let roots = env.strings(
        "SELECT DISTINCT p.root FROM sessions s JOIN projects p ON p.id = s.project_id ORDER BY 1",
    );
    let names: Vec<&str> = roots.iter().filter_map(|r| r.rsplit('/').next()).collect();
    assert_eq!(names, ["acme-billing", "limiter"], "{roots:?}");
    let paths = env.strings("SELECT transcript_path FROM sessions");
    assert!(
        paths
            .iter()
            .all(|p| Path::new(p).is_file() && p.contains("/chats/session-")),
        "{paths:?}"
    );
    assert_gemini_calls(&env);
    let prompts = env.strings("SELECT text FROM prompts ORDER BY text");
    assert!(
        prompts.contains(&"change greet to say hello".to_owned()),
        "{prompts:?}"
    );

    let before = counts(&env);
    let again = import();
    assert!(
        stdout(&again).contains("imported 0 sessions, 0 turns, 0 events"),
        "{}",
        stdout(&again)
    );
    assert_eq!(counts(&env), before);
}

/// A recording with a line that is not JSON among good ones, and (on Unix)
/// a FIFO named like a recording, in `chats`.
fn broken_recording_and_fifo(chats: &Path) {
    let broken = [
        json!({"sessionId": "broken-gemini-1", "projectHash": "0"}).to_string(),
        "this line is not JSON".to_owned(),
        json!({"id": "u1", "type": "user", "content": [{"text": "rename the ledger module"}]})
            .to_string(),
        json!({"id": "m1", "type": "gemini", "content": "Renamed it.", "toolCalls": [
            {"id": "c1", "name": "read_file", "status": "success",
             "args": {"file_path": chats.parent().unwrap().join("x").display().to_string()}}]})
        .to_string(),
    ];
    std::fs::write(
        chats.join("session-2026-11-27T11-00-broken.jsonl"),
        broken.join("\n"),
    )
    .unwrap();
    #[cfg(unix)]
    {
        let fifo = chats.join("session-2026-11-27T12-00-fifo.jsonl");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    }
}

/// The recorded calls, imported: named in the common vocabulary, with the
/// files written and read, and each write saying whether it made its file.
fn assert_gemini_calls(env: &Env) {
    assert_eq!(
        env.strings("SELECT DISTINCT tool_name FROM events WHERE tool_name IS NOT NULL ORDER BY 1"),
        ["Bash", "Edit", "Read", "Write"]
    );
    let modified = env
        .strings("SELECT files_modified FROM events WHERE tool_name IN ('Write', 'Edit')")
        .join(" ");
    for name in ["hello.py", "limits.py"] {
        assert!(modified.contains(name), "{name} not kept: {modified}");
    }
    let read = env
        .strings("SELECT files_read FROM events WHERE tool_name = 'Read'")
        .join(" ");
    assert!(read.contains("limits.py"), "{read}");
    // The recording says which write made its file and which rewrote it.
    let writes = env.strings(
        "SELECT json_extract(response, '$.type') || ' ' || files_modified FROM events
         WHERE tool_name = 'Write' ORDER BY 1",
    );
    assert!(
        writes[0].starts_with("create ") && writes[0].contains("hello.py"),
        "{writes:?}"
    );
    assert!(
        writes[1].starts_with("update ") && writes[1].contains("limits.py"),
        "{writes:?}"
    );
}

/// `mnemo install` offers Gemini CLI's past sessions too: it names them when
/// not on a terminal, and imports them when asked.
#[test]
fn install_offers_gemini_sessions_too() {
    let env = Env::new();
    let (home, _) = gemini_home(&env);
    let install = |extra: &[&str]| {
        let out = with_gemini_home(&env, &home)
            .arg("install")
            .args(extra)
            .output();
        stdout(&succeeded(out.unwrap()))
    };
    let plain = install(&[]);
    assert!(plain.contains("2 past Gemini CLI sessions"), "{plain}");
    assert_eq!(env.count("SELECT count(*) FROM sessions"), 0);
    let imported = install(&["--import-transcripts"]);
    assert!(imported.contains("imported 2 sessions"), "{imported}");
    assert_eq!(
        env.strings("SELECT DISTINCT platform FROM sessions"),
        ["gemini"]
    );
}

/// A Gemini session captured live, then imported: Gemini's hooks give calls
/// no id, the recording does; the import finds the live copy of each call of
/// the turn it goes on from (same turn, tool and input), gives it the
/// recording's id and adds nothing, so the call is kept once, and a second
/// import adds nothing either.
#[test]
fn a_gemini_session_captured_live_then_imported_keeps_each_call_once() {
    let env = Env::new();
    let root = project(&env, "ledger");
    let file = root.join("ledger.py");
    std::fs::write(&file, "LIMIT = 3\n").unwrap();
    let session = "gemini-live-then-imported";
    let prompt = "what is the ledger's limit";
    let hook = |event: &str, body: Value| {
        let mut body = body;
        body["session_id"] = json!(session);
        body["cwd"] = json!(root);
        body["hook_event_name"] = json!(event);
        let mut c = env.mnemo();
        c.args(["hook", "gemini", event]);
        let out = common::run_with_stdin(c, body.to_string().as_bytes());
        assert!(out.status.success() && out.stderr.is_empty(), "{out:?}");
    };
    hook("BeforeAgent", json!({ "prompt": prompt }));
    let args = json!({ "file_path": file });
    hook(
        "AfterTool",
        json!({ "tool_name": "read_file", "tool_input": args,
                "tool_response": { "llmContent": "LIMIT = 3\n", "returnDisplay": "" } }),
    );
    assert_eq!(
        env.count("SELECT count(*) FROM events WHERE tool_name = 'Read'"),
        1
    );

    let home = env.dir.path().join("gemini-home");
    let folder = home.join(".gemini/tmp/ledger");
    std::fs::create_dir_all(folder.join("chats")).unwrap();
    std::fs::write(folder.join(".project_root"), root.to_str().unwrap()).unwrap();
    let recording = [
        json!({ "sessionId": session, "projectHash": "0", "startTime": "2026-11-28T10:00:00Z" }),
        json!({ "id": "u1", "type": "user", "timestamp": "2026-11-28T10:00:01Z",
                "content": [{ "text": prompt }] }),
        json!({ "id": "m1", "type": "gemini", "timestamp": "2026-11-28T10:00:02Z",
                "content": "The limit is 3.",
                "toolCalls": [{ "id": "read-1", "name": "read_file", "status": "success",
                                "args": args,
                                "result": [{ "functionResponse": { "id": "read-1",
                                    "name": "read_file",
                                    "response": { "output": "LIMIT = 3\n" } } }] }] }),
    ]
    .map(|v| v.to_string())
    .join("\n");
    std::fs::write(
        folder.join("chats/session-2026-11-28T10-00-live.jsonl"),
        recording,
    )
    .unwrap();
    for _ in 0..2 {
        succeeded(
            with_gemini_home(&env, &home)
                .args(["import", "--transcripts"])
                .output()
                .unwrap(),
        );
        assert_eq!(
            env.strings("SELECT coalesce(tool_use_id, '-') FROM events WHERE tool_name = 'Read'"),
            ["read-1"]
        );
        assert_eq!(env.count("SELECT count(*) FROM sessions"), 1);
    }
}
