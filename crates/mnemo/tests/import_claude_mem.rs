//! `mnemo import --from claude-mem`: the real binary reads copies of real
//! claude-mem databases (`tests/fixtures/claude-mem`, written by
//! claude-mem 13.25.3 and 10.6.3 themselves; their README is the truth
//! table used here) into a real data directory.

mod common;

use std::path::{Path, PathBuf};
use std::process::Output;

use common::Env;
use rusqlite::Connection;

const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/claude-mem");
const WORK_API: &str = "/home/dev/work/acme/api";
const OSS_API: &str = "/home/dev/oss/api";
const STOREFRONT: &str = "/home/dev/work/acme/storefront";
const INFRA: &str = "/home/dev/work/acme/infra";

/// A writable copy of a fixture database, in the test's directory.
fn copy_of(env: &Env, name: &str) -> PathBuf {
    let dir = env.dir.path().join("claude-mem");
    std::fs::create_dir_all(&dir).unwrap();
    let to = dir.join("claude-mem.db");
    std::fs::copy(Path::new(FIXTURES).join(name), &to).unwrap();
    let mut perms = std::fs::metadata(&to).unwrap().permissions();
    #[allow(clippy::permissions_set_readonly_false)]
    perms.set_readonly(false);
    std::fs::set_permissions(&to, perms).unwrap();
    to
}

fn import(env: &Env, db: &Path, extra: &[&str]) -> Output {
    env.mnemo()
        .args(["import", "--from", "claude-mem"])
        .arg(db)
        .args(extra)
        .output()
        .unwrap()
}

fn text(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// Observations per project root.
fn observations_by_root(env: &Env) -> Vec<(String, i64)> {
    let db = env.db();
    let mut stmt = db
        .prepare(
            "SELECT p.root, count(*) FROM observations o JOIN projects p ON p.id = o.project_id
             GROUP BY p.root ORDER BY p.root",
        )
        .unwrap();
    stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap()
}

fn roots(pairs: &[(&str, i64)]) -> Vec<(String, i64)> {
    let mut v: Vec<(String, i64)> = pairs.iter().map(|(r, n)| (r.to_string(), *n)).collect();
    v.sort();
    v
}

fn search(env: &Env, query: &str) -> String {
    let out = env
        .mnemo()
        .args(["search", query, "--all", "--json"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn every_record_of_db_a_lands_under_its_directory_and_is_searchable_at_once() {
    let env = Env::new();
    let db = copy_of(&env, "claude-mem-13.25.3.db");
    let before = std::fs::read(&db).unwrap();
    let out = import(&env, &db, &[]);
    assert!(out.status.success(), "{}", text(&out));
    assert!(
        text(&out).contains("imported 12 sessions, 28 prompts, 57 observations, 18 summaries"),
        "{}",
        text(&out)
    );

    // The README's truth table: `api` in two directories stays two projects;
    // the hand-saved memory (observation 40) goes with infra.
    assert_eq!(
        observations_by_root(&env),
        roots(&[(WORK_API, 20), (OSS_API, 9), (STOREFRONT, 15), (INFRA, 13)])
    );
    assert_eq!(
        env.count("SELECT count(*) FROM projects WHERE name = 'api'"),
        2
    );
    let sessions_of = |root: &str| {
        env.count(&format!(
            "SELECT count(*) FROM sessions s JOIN projects p ON p.id = s.project_id WHERE p.root = '{root}'"
        ))
    };
    assert_eq!(
        [WORK_API, OSS_API, STOREFRONT, INFRA].map(sessions_of),
        [4, 2, 3, 3],
        "sessions 1,3,7,12 / 4,10 / 2,5,11 / 6,8,13; the manual one is no session"
    );
    assert_eq!(env.count("SELECT count(*) FROM prompts"), 28);
    assert_eq!(env.count("SELECT count(*) FROM summaries"), 18);
    assert_eq!(
        env.count("SELECT count(*) FROM observations WHERE source = 'claude-mem' AND uid LIKE 'claude-mem:%:observations:%'"),
        57
    );
    assert_eq!(
        env.count("SELECT count(*) FROM summaries WHERE source = 'claude-mem'"),
        18
    );

    // Kept as written: times, files, types (mapped), facts.
    let (created, files, kind, concepts): (i64, String, String, String) = env
        .db()
        .query_row(
            "SELECT created_at, files_read, type, concepts FROM observations
             WHERE title = 'Staging RDS instance was created without storage encryption'",
            [],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
        )
        .unwrap();
    let want: i64 = Connection::open(&db)
        .unwrap()
        .query_row(
            "SELECT created_at_epoch FROM observations WHERE id = 38",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(created, want);
    assert_eq!(
        files,
        r#"["/home/dev/work/acme/infra/modules/rds/main.tf"]"#
    );
    assert_eq!(kind, "discovery");
    assert!(concepts.contains("security_note"), "{concepts}");
    assert_eq!(
        env.strings(
            "SELECT type FROM observations WHERE title = 'Staging DB is reset every Sunday'"
        ),
        ["memory"]
    );

    // Searchable at once, in the right project, by words and identifiers.
    let found = search(&env, "decodeJSON");
    assert!(
        found.contains("All JSON handlers decode through decodeJSON()"),
        "{found}"
    );
    assert!(found.contains(OSS_API), "{found}");
    let found = search(&env, "Übersetzungen");
    assert!(found.contains("Deutsche Checkout"), "{found}");
    let shown = env.mnemo().args(["show", "1"]).output().unwrap();
    assert!(text(&shown).contains("claude-mem"), "{}", text(&shown));

    // Nothing written beside the source.
    assert_eq!(std::fs::read(&db).unwrap(), before);
    assert!(!db.with_extension("db-wal").exists());
    assert!(!db.with_extension("db-shm").exists());

    // Again: nothing new.
    let again = import(&env, &db, &[]);
    assert!(again.status.success(), "{}", text(&again));
    assert!(
        text(&again).contains(
            "imported 0 sessions, 0 prompts, 0 observations, 0 summaries; 115 already present"
        ),
        "{}",
        text(&again)
    );
    assert_eq!(env.count("SELECT count(*) FROM observations"), 57);
}

#[test]
fn the_10_6_3_schema_is_placed_by_its_file_paths() {
    let env = Env::new();
    let db = copy_of(&env, "claude-mem-10.6.3.db");
    let out = import(&env, &db, &[]);
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(
        observations_by_root(&env),
        roots(&[(WORK_API, 4), (OSS_API, 1), (STOREFRONT, 3)])
    );
    assert_eq!(env.count("SELECT count(*) FROM sessions"), 4);
    assert_eq!(env.count("SELECT count(*) FROM prompts"), 5);
    assert_eq!(env.count("SELECT count(*) FROM summaries"), 4);
    // `completed_at` NULL with the epoch set (10.x's quirk): the epoch is used.
    assert_eq!(
        env.count("SELECT count(*) FROM sessions WHERE status = 'ended' AND ended_at IS NOT NULL"),
        3
    );
    let found = search(&env, "testcontainers");
    assert!(found.contains(WORK_API), "{found}");
}

/// claude-mem running: its database in WAL mode, the newest rows only in
/// the `-wal`, the writer still holding it open.
#[test]
fn a_live_database_is_read_with_its_wal_and_left_untouched() {
    let env = Env::new();
    let db = copy_of(&env, "claude-mem-13.25.3.db");
    let live = Connection::open(&db).unwrap();
    live.pragma_update(None, "journal_mode", "WAL").unwrap();
    live.pragma_update(None, "wal_autocheckpoint", 0).unwrap();
    let add = |title: &str| {
        live.execute(
            "INSERT INTO observations (memory_session_id, project, type, title, subtitle, narrative,
                 facts, concepts, files_read, files_modified, prompt_number, created_at, created_at_epoch)
             VALUES ('c61dd4d2-a194-4420-818e-faf3bd99f04b', 'api', 'decision', ?1, '', 'Still in the WAL; deploy token ghp_Zq8xR2mT5vK9wL3nB7cY1dF4hJ6pS0aE2gU8',
                 '[]', '[]', '[]', '[\"/home/dev/work/acme/api/src/app/main.py\"]', 2,
                 '2026-11-20T10:00:00.000Z', 1763632800000)",
            [title],
        )
        .unwrap();
    };
    add("Walrus cache decided while claude-mem runs");
    let wal = PathBuf::from(format!("{}-wal", db.display()));
    let shm = PathBuf::from(format!("{}-shm", db.display()));
    assert!(std::fs::metadata(&wal).unwrap().len() > 0);
    let snapshot = |p: &Path| std::fs::read(p).unwrap();
    let (db_before, wal_before, shm_before) = (snapshot(&db), snapshot(&wal), snapshot(&shm));

    let out = import(&env, &db, &[]);
    assert!(out.status.success(), "{}", text(&out));
    assert!(text(&out).contains("58 observations"), "{}", text(&out));
    let found = search(&env, "walrus");
    assert!(found.contains(WORK_API), "{found}");
    // Imported text passes the privacy rules of captured text.
    let narrative = env.strings("SELECT narrative FROM observations WHERE title LIKE 'Walrus%'");
    assert!(
        narrative[0].contains("[REDACTED") && !narrative[0].contains("ghp_Zq8x"),
        "{narrative:?}"
    );
    assert_eq!(snapshot(&db), db_before, "the source was written");
    assert_eq!(snapshot(&wal), wal_before, "its -wal was written");
    assert_eq!(snapshot(&shm), shm_before, "its -shm was written");

    // The writer goes on; the next import takes only the new row.
    add("Second walrus decision");
    let again = import(&env, &db, &[]);
    assert!(again.status.success(), "{}", text(&again));
    assert!(
        text(&again).contains("imported 0 sessions, 0 prompts, 1 observation, 0 summaries"),
        "{}",
        text(&again)
    );
    assert_eq!(env.count("SELECT count(*) FROM observations"), 59);
    drop(live);
}

/// A 10.x session whose observations name no file: nothing says where it
/// ran, and `api` has two directories. Without a terminal it is skipped with
/// the command that places it; `--map` places it; nothing merges.
#[test]
fn a_session_without_a_directory_is_skipped_until_mapped() {
    let env = Env::new();
    let db = copy_of(&env, "claude-mem-10.6.3.db");
    Connection::open(&db)
        .unwrap()
        .execute(
            "UPDATE observations SET files_read = '[]', files_modified = '[]'
             WHERE memory_session_id = '30a06bb1-9e20-4537-a2d9-5dd6652e4c7e'",
            [],
        )
        .unwrap();
    let out = import(&env, &db, &[]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let said = text(&out);
    assert!(
        said.contains(
            "skipped 1 session, 1 prompt, 2 observations, 1 summary of claude-mem project `api`"
        ),
        "{said}"
    );
    assert!(said.contains("--map 'api=/path/to/api'"), "{said}");
    assert!(said.contains(OSS_API) && said.contains(WORK_API), "{said}");
    assert_eq!(
        observations_by_root(&env),
        roots(&[(WORK_API, 2), (OSS_API, 1), (STOREFRONT, 3)])
    );

    let elsewhere = env.dir.path().join("src/api");
    std::fs::create_dir_all(&elsewhere).unwrap();
    let elsewhere = std::fs::canonicalize(elsewhere).unwrap();
    let map = format!("api={}", elsewhere.display());
    let out = import(&env, &db, &["--map", &map]);
    assert!(out.status.success(), "{}", text(&out));
    let root = elsewhere.to_string_lossy().into_owned();
    assert_eq!(
        observations_by_root(&env),
        roots(&[(WORK_API, 2), (OSS_API, 1), (STOREFRONT, 3), (&root, 2)])
    );
}

/// Claude Code's transcript of a session names its working directory: an
/// old session whose data says nothing is placed by it.
#[test]
fn a_transcript_claude_code_kept_says_where_a_session_ran() {
    let env = Env::new();
    let db = copy_of(&env, "claude-mem-10.6.3.db");
    Connection::open(&db)
        .unwrap()
        .execute(
            "UPDATE observations SET files_read = '[]', files_modified = '[]'
             WHERE memory_session_id = '30a06bb1-9e20-4537-a2d9-5dd6652e4c7e'",
            [],
        )
        .unwrap();
    let folder = env.home().join(".claude/projects/-home-dev-work-acme-api");
    std::fs::create_dir_all(&folder).unwrap();
    std::fs::write(
        folder.join("40541460-8b7d-4ca3-8bc9-1d69f9d9c721.jsonl"),
        format!(
            "{{\"type\":\"summary\"}}\n{{\"type\":\"user\",\"cwd\":\"{WORK_API}/tests\",\"sessionId\":\"40541460-8b7d-4ca3-8bc9-1d69f9d9c721\"}}\n"
        ),
    )
    .unwrap();
    let out = import(&env, &db, &[]);
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(
        observations_by_root(&env),
        roots(&[(WORK_API, 4), (OSS_API, 1), (STOREFRONT, 3)])
    );
}

/// On a terminal the directory is asked (util-linux `script` gives the
/// binary a pseudo-terminal; the answer is typed on its stdin).
#[test]
fn on_a_terminal_the_directory_is_asked() {
    let env = Env::new();
    let db = copy_of(&env, "claude-mem-10.6.3.db");
    Connection::open(&db)
        .unwrap()
        .execute(
            "UPDATE observations SET files_read = '[]', files_modified = '[]'
             WHERE memory_session_id = '30a06bb1-9e20-4537-a2d9-5dd6652e4c7e'",
            [],
        )
        .unwrap();
    let answer = env.dir.path().join("typed/api");
    std::fs::create_dir_all(&answer).unwrap();
    let answer = std::fs::canonicalize(answer).unwrap();
    let inner = format!(
        "'{}' import --from claude-mem '{}'",
        common::MNEMO,
        db.display()
    );
    // `script` with the environment `env.mnemo()` would have.
    let mut script = std::process::Command::new("script");
    for (k, v) in env.mnemo().get_envs() {
        match v {
            Some(v) => script.env(k, v),
            None => script.env_remove(k),
        };
    }
    script.args(["-qec", &inner, "/dev/null"]);
    let out = common::run_with_stdin(script, format!("{}\n", answer.display()).as_bytes());
    assert!(out.status.success(), "{}", text(&out));
    assert!(
        text(&out).contains("whose data does not say where it ran"),
        "{}",
        text(&out)
    );
    let root = answer.to_string_lossy().into_owned();
    assert_eq!(
        observations_by_root(&env),
        roots(&[(WORK_API, 2), (OSS_API, 1), (STOREFRONT, 3), (&root, 2)])
    );
}

#[test]
fn dry_run_counts_and_writes_nothing() {
    let env = Env::new();
    let db = copy_of(&env, "claude-mem-13.25.3.db");
    let out = import(&env, &db, &["--dry-run"]);
    assert!(out.status.success(), "{}", text(&out));
    assert!(
        text(&out).contains("would import 12 sessions, 28 prompts, 57 observations, 18 summaries"),
        "{}",
        text(&out)
    );
    assert!(!env.db_path().exists());

    assert!(import(&env, &db, &[]).status.success());
    let out = import(&env, &db, &["--dry-run"]);
    assert!(
        text(&out).contains("would import 0 sessions"),
        "{}",
        text(&out)
    );
}

#[test]
fn a_file_that_is_not_claude_mem_is_refused_and_nothing_is_written() {
    let env = Env::new();
    let dir = env.dir.path().join("junk");
    std::fs::create_dir_all(&dir).unwrap();

    let garbage = dir.join("garbage.db");
    std::fs::write(&garbage, vec![0x5a_u8; 8192]).unwrap();
    let out = import(&env, &garbage, &[]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out).contains("is not a SQLite database"),
        "{}",
        text(&out)
    );

    let other = dir.join("other.db");
    Connection::open(&other)
        .unwrap()
        .execute_batch("CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT);")
        .unwrap();
    let out = import(&env, &other, &[]);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out).contains("not claude-mem's"), "{}", text(&out));

    let out = import(&env, &dir.join("missing.db"), &[]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out).contains("no claude-mem database at"),
        "{}",
        text(&out)
    );

    // A damaged claude-mem database: its first page intact, the rest gone.
    let damaged = dir.join("damaged.db");
    let whole = std::fs::read(Path::new(FIXTURES).join("claude-mem-13.25.3.db")).unwrap();
    std::fs::write(&damaged, &whole[..whole.len() / 3]).unwrap();
    let out = import(&env, &damaged, &[]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));

    assert!(!env.data().exists(), "the data directory was created");
}

/// claude-mem installed as Claude Code installs plugins: `install` says how
/// to turn it off and how to bring its memory; `doctor` warns while it is on.
#[test]
fn install_and_doctor_notice_claude_mem_while_it_captures() {
    let env = Env::new();
    let claude = env.home().join(".claude");
    std::fs::create_dir_all(claude.join("plugins")).unwrap();
    let doctor_check = |env: &Env| -> Option<String> {
        let out = env.mnemo().args(["doctor", "--json"]).output().unwrap();
        let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        report["checks"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["name"] == "claude-mem")
            .map(|c| c["status"].as_str().unwrap().to_owned())
    };
    assert_eq!(doctor_check(&env), None, "no claude-mem, no check");

    std::fs::write(
        claude.join("plugins/installed_plugins.json"),
        r#"{"version":2,"plugins":{"claude-mem@thedotmack":[{"scope":"user","installPath":"x"}]}}"#,
    )
    .unwrap();
    std::fs::write(
        claude.join("settings.json"),
        "{\n  // claude-mem's switch\n  \"enabledPlugins\": {\"claude-mem@thedotmack\": true}\n}\n",
    )
    .unwrap();
    let db = env.home().join(".claude-mem/claude-mem.db");
    std::fs::create_dir_all(db.parent().unwrap()).unwrap();
    std::fs::copy(Path::new(FIXTURES).join("claude-mem-13.25.3.db"), &db).unwrap();

    let out = env
        .mnemo()
        .arg("install")
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    let said = text(&out);
    assert!(
        said.contains("claude-mem: also capturing (plugin claude-mem@thedotmack enabled)"),
        "{said}"
    );
    assert!(
        said.contains("`claude plugin disable claude-mem@thedotmack`"),
        "{said}"
    );
    assert!(said.contains("`mnemo import --from claude-mem`"), "{said}");
    assert_eq!(doctor_check(&env).as_deref(), Some("warn"));

    // The default path is claude-mem's own.
    let out = env
        .mnemo()
        .args(["import", "--from", "claude-mem"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(env.count("SELECT count(*) FROM observations"), 57);

    let settings = std::fs::read_to_string(claude.join("settings.json")).unwrap();
    std::fs::write(
        claude.join("settings.json"),
        settings.replace(
            "\"claude-mem@thedotmack\": true",
            "\"claude-mem@thedotmack\": false",
        ),
    )
    .unwrap();
    assert_eq!(doctor_check(&env).as_deref(), Some("ok"));
}
