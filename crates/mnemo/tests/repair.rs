//! `mnemo doctor --fix` repairs without throwing away what can be read: a
//! database with damaged pages is salvaged row by row into a fresh one (the
//! damaged file kept), and an unusable `-shm` is replaced.

mod common;
#[path = "common/worker.rs"]
mod worker_support;

use std::io::{Seek, SeekFrom, Write};
use std::path::Path;
use std::time::Duration;

use common::*;
use serde_json::json;
use worker_support::*;

const T: Duration = Duration::from_secs(60);

/// The database's page size, from its header (bytes 16-17, 1 meaning 65536).
fn page_size(bytes: &[u8]) -> usize {
    match u16::from_be_bytes([bytes[16], bytes[17]]) {
        1 => 65536,
        n => n as usize,
    }
}

/// The 1-based number of the table-leaf page that holds `marker`.
fn leaf_page_holding(bytes: &[u8], marker: &str) -> usize {
    let size = page_size(bytes);
    bytes
        .chunks(size)
        .enumerate()
        .find(|(i, page)| {
            let header = if *i == 0 { 100 } else { 0 };
            page[header] == 0x0d && contains_bytes(page, marker.as_bytes())
        })
        .map(|(i, _)| i + 1)
        .unwrap_or_else(|| panic!("no table leaf page holds {marker}"))
}

/// Overwrites whole pages with garbage, as a bad sector or a torn copy would.
fn damage_pages(db: &Path, pages: &[usize]) {
    let bytes = std::fs::read(db).unwrap();
    let size = page_size(&bytes);
    let mut file = std::fs::OpenOptions::new().write(true).open(db).unwrap();
    for page in pages {
        file.seek(SeekFrom::Start(((page - 1) * size) as u64))
            .unwrap();
        file.write_all(&vec![0xa5; size]).unwrap();
    }
}

fn counts(env: &Env) -> (i64, i64, i64) {
    let db = env.db();
    db.query_row(
        "SELECT (SELECT count(*) FROM events), (SELECT count(*) FROM observations),
                (SELECT count(*) FROM prompts)",
        [],
        |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
    )
    .unwrap()
}

/// The files of the data directory whose name contains `part`.
fn files_named(env: &Env, part: &str) -> Vec<String> {
    std::fs::read_dir(env.data())
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains(part))
        .collect()
}

#[test]
fn doctor_fix_recovers_the_readable_rows_of_a_database_with_two_damaged_pages() {
    let env = Env::new();
    let proj = project(&env, "shop");
    let session = "77777777-2222-3333-4444-555555555555";
    // 23 turns of 9 writes and a Stop each: 230 events through the real hooks.
    let writes: Vec<String> = (0..9).map(|i| format!("src/mod{i}.rs")).collect();
    let writes: Vec<&str> = writes.iter().map(String::as_str).collect();
    let mut worker = Worker::start(&env, |_| {});
    session_start(&env, &proj, session);
    for n in 1..=23 {
        turn(&env, &proj, session, n, &writes);
    }
    wait_all_done(&env, T);
    worker.signal(libc::SIGTERM);
    assert_eq!(worker.wait_exit(T), Some(0));
    let (events, observations, prompts) = counts(&env);
    assert_eq!(events, 230);
    assert!(observations >= 23, "{observations} observations");
    env.db()
        .query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))
        .unwrap();

    // Two pages in the middle of the file, each holding events of a turn.
    let bytes = std::fs::read(env.db_path()).unwrap();
    let pages = [
        leaf_page_holding(&bytes, &format!("toolu-{session}-8-4")),
        leaf_page_holding(&bytes, &format!("toolu-{session}-16-4")),
    ];
    damage_pages(&env.db_path(), &pages);

    let doctor = env.mnemo().arg("doctor").output().unwrap();
    assert_eq!(doctor.status.code(), Some(2));

    let fixed = env.mnemo().args(["doctor", "--fix"]).output().unwrap();
    let report = String::from_utf8_lossy(&fixed.stdout);
    println!("{report}");
    assert!(report.contains("moved the corrupt database to"), "{report}");
    assert!(
        report.contains("recovered into a fresh database"),
        "{report}"
    );
    let (after_events, after_observations, after_prompts) = counts(&env);
    assert!(after_events >= 207, "{after_events} of 230 events back");
    assert!(after_events < 230, "the damaged pages held events");
    assert!(
        report.contains(&format!("events: {after_events} recovered, up to ")),
        "the report names what came back and what did not: {report}"
    );
    assert!(
        after_observations * 10 >= observations * 9,
        "{after_observations} of {observations}"
    );
    assert_eq!(after_prompts, prompts);
    let kept = files_named(&env, ".corrupt-");
    assert!(
        kept.iter()
            .any(|n| !n.ends_with("-wal") && !n.ends_with("-shm")),
        "the damaged file is kept: {kept:?}"
    );
    assert!(files_named(&env, ".recovering-").is_empty());

    // The new store is whole: SQLite and doctor agree, hooks and search work.
    let check: String = env
        .db()
        .query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .unwrap();
    assert_eq!(check, "ok");
    let doctor = env.mnemo().args(["doctor", "--json"]).output().unwrap();
    let doctor: serde_json::Value = serde_json::from_slice(&doctor.stdout).unwrap();
    let database = doctor["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "database")
        .unwrap();
    assert_eq!(database["status"], "ok", "{database}");
    turn(&env, &proj, session, 24, &["src/after.rs"]);
    assert_eq!(counts(&env).0, after_events + 2);
    let search = env
        .mnemo()
        .args(["search", "--all", "mod3.rs"])
        .current_dir(&proj)
        .output()
        .unwrap();
    let found = String::from_utf8_lossy(&search.stdout);
    assert!(search.status.success(), "{found}");
    assert!(
        found.contains("mod3.rs"),
        "search finds recovered memory: {found}"
    );
    let file_index: i64 = env.count("SELECT count(*) FROM observation_files");
    assert!(file_index > 0, "the file index is rebuilt");
}

#[test]
fn an_shm_that_is_a_folder_is_not_ok_and_doctor_fix_replaces_it() {
    let env = Env::new();
    let proj = project(&env, "shop");
    let event = |id: &str| {
        json!({
            "session_id": "s", "cwd": proj, "hook_event_name": "PostToolUse",
            "tool_name": "Bash", "tool_input": {"command": format!("make {id}")},
            "tool_response": {"stdout": "ok", "stderr": ""}, "tool_use_id": id,
        })
        .to_string()
    };
    assert_hook_ok(&env.hook("PostToolUse", &event("t1")));
    let shm = env.data().join("mnemo.db-shm");
    let _ = std::fs::remove_file(&shm);
    std::fs::create_dir(&shm).unwrap();

    let doctor = env.mnemo().arg("doctor").output().unwrap();
    let report = String::from_utf8_lossy(&doctor.stdout);
    assert_eq!(doctor.status.code(), Some(2), "{report}");
    let line = report
        .lines()
        .find(|l| l.contains("database"))
        .unwrap_or_default()
        .to_owned();
    assert!(
        line.contains("FAIL") && line.contains("mnemo.db-shm is a folder"),
        "{report}"
    );

    let fixed = env.mnemo().args(["doctor", "--fix"]).output().unwrap();
    let report = String::from_utf8_lossy(&fixed.stdout);
    assert!(report.contains("SQLite makes a new one"), "{report}");
    assert!(!report.contains("[FAIL] database"), "{report}");
    assert!(std::fs::metadata(&shm).map(|m| m.is_file()).unwrap_or(true));
    assert_hook_ok(&env.hook("PostToolUse", &event("t2")));
    assert_eq!(env.count("SELECT count(*) FROM events"), 2);
}
