//! Forgetting a 1,000-observation session: `mnemo forget --session S` as a
//! whole process (open, delete with secure-delete, FTS deletes, WAL
//! checkpoint and truncate), beside `/bin/true`, and with `--vacuum`; and
//! `mnemo stats --json`, which measures the store's size by kind and by
//! project (a walk of every page).
//!
//! ```text
//! cargo bench -p mnemo --bench forget
//! MNEMO_BENCH_RUNS=20 MNEMO_BENCH_BASE=20000 cargo bench -p mnemo --bench forget
//! ```
//!
//! The store (built once, deterministic): `MNEMO_BENCH_BASE` observations
//! (100,000 by default, as in the issue's targets) from [`mnemo_recall::synth`], plus one session of
//! 1,000 observations, 50 turns with their prompts and summaries, and 1,000
//! compressed events carrying about 5 KB of raw input and output each (what
//! capture stores today). Each run forgets that session in a fresh copy.

mod support;

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use mnemo_core::model::{EventKind, Platform, Priority};
use mnemo_store::memory::{NewObservation, NewSummary, insert_observation, insert_summary};
use mnemo_store::record::new_capture_id;
use mnemo_store::{Capture, CaptureOp, EventRecord, PromptOrigin, SessionRef, Store};

const SESSION: &str = "bench-big-session";
const OBSERVATIONS: usize = 1_000;
const TURNS: usize = 50;

fn main() {
    let Some((bin, runs)) = support::settings(5) else {
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
    let built = root.join("built/mnemo.db");
    mnemo_recall::synth::build(&built, &project, base, 0).expect("base store");
    add_big_session(&built, &project);
    println!(
        "store: {base} observations + a session of {OBSERVATIONS}; {:.1} MB",
        std::fs::metadata(&built).expect("db").len() as f64 / 1e6
    );

    let mut baseline = Vec::new();
    let mut forget = Vec::new();
    let mut vacuum = Vec::new();
    let mut stats = Vec::new();
    for _ in 0..runs {
        baseline.push(support::timed_run(&mut Command::new("/bin/true"), None));
        let data = root.join("run");
        fresh_copy(&built, &data);
        let mut cmd = Command::new(&bin);
        cmd.args(["stats", "--json"])
            .env("MNEMO_DATA_DIR", &data)
            .env("HOME", &root)
            .env("MNEMO_NO_WORKER", "1");
        stats.push(support::timed_run(&mut cmd, None));
        for (extra, samples) in [(None, &mut forget), (Some("--vacuum"), &mut vacuum)] {
            let data = root.join("run");
            fresh_copy(&built, &data);
            let mut cmd = Command::new(&bin);
            cmd.args(["forget", "--session", SESSION])
                .args(extra)
                .env("MNEMO_DATA_DIR", &data)
                .env("HOME", &root)
                .env("MNEMO_NO_WORKER", "1");
            samples.push(support::timed_run(&mut cmd, None));
            assert_forgotten(&data.join("mnemo.db"));
        }
    }
    support::print_table([
        ("/bin/true", &mut baseline),
        ("forget --session (1,000 observations)", &mut forget),
        ("forget --session --vacuum", &mut vacuum),
        ("stats --json (store size by kind and project)", &mut stats),
    ]);
}

/// One session with [`OBSERVATIONS`] observations, its turns and events.
fn add_big_session(db: &Path, project: &Path) {
    let mut store = Store::open(db, Duration::from_secs(5)).expect("open");
    let root = project.to_string_lossy().into_owned();
    let session = SessionRef {
        platform: Platform::ClaudeCode,
        platform_session_id: SESSION.to_owned(),
        project_root: Some(root.clone()),
        project_name: Some("shop".into()),
        cwd: Some(root.clone()),
    };
    let now = mnemo_core::time::now_ms();
    let apply = |store: &mut Store, op: CaptureOp| {
        store
            .apply(&Capture {
                capture_id: new_capture_id(),
                at_ms: now,
                session: session.clone(),
                op,
            })
            .expect("apply");
    };
    apply(
        &mut store,
        CaptureOp::SessionStart {
            source: Some("startup".into()),
            transcript_path: None,
        },
    );
    let payload = "let value = compute(input); // about five kilobytes of tool output\n".repeat(40);
    for turn in 0..TURNS {
        apply(
            &mut store,
            CaptureOp::Prompt {
                platform_prompt_id: None,
                text: Some(format!("turn {turn}: refactor the billing module")),
                origin: PromptOrigin::User,
            },
        );
        for e in 0..OBSERVATIONS / TURNS {
            let mut event = EventRecord::new(EventKind::ToolUse, Priority::High);
            event.tool_name = Some("Edit".into());
            event.input = Some(serde_json::json!({"file_path": format!("{root}/src/m{e}.rs"), "new_string": payload}).to_string());
            event.response = Some(serde_json::json!(payload).to_string());
            event.files_modified = vec![format!("{root}/src/m{e}.rs")];
            apply(&mut store, CaptureOp::Event(event));
        }
    }
    let (session_id, project_id): (i64, i64) = store
        .conn()
        .query_row(
            "SELECT id, project_id FROM sessions WHERE platform_session_id = ?1",
            [SESSION],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .expect("session");
    let tx = store.conn_mut().transaction().expect("transaction");
    tx.execute(
        "UPDATE events SET status = 'done' WHERE session_id = ?1",
        [session_id],
    )
    .expect("done");
    for i in 0..OBSERVATIONS {
        let turn = (i / (OBSERVATIONS / TURNS)) as i64 + 1;
        let o = NewObservation {
            uid: format!("bench-obs-{i}"),
            project_id: Some(project_id),
            session_id: Some(session_id),
            prompt_number: Some(turn),
            kind: "change".into(),
            title: format!("Billing step {i}: invoice totals rounded per line"),
            subtitle: "rounding moved into LineItem::total".into(),
            narrative: "The invoice total was computed from unrounded line amounts; each \
                        line now rounds half-even before summing, matching the ledger."
                .repeat(3),
            facts: vec![
                format!("LineItem::total rounds (step {i})"),
                "ledger matches".into(),
            ],
            concepts: vec!["billing".into(), "rounding".into()],
            files_read: vec![format!("{root}/src/ledger.rs")],
            files_modified: vec![format!("{root}/src/m{}.rs", i % 20)],
            source: "offline".into(),
            created_at: now + i as i64,
        };
        insert_observation(&tx, &o).expect("observation");
        if i % (OBSERVATIONS / TURNS) == 0 {
            let s = NewSummary {
                uid: format!("bench-sum-{turn}"),
                project_id: Some(project_id),
                session_id: Some(session_id),
                prompt_number: Some(turn),
                request: "refactor the billing module".into(),
                learned: "totals must round per line".into(),
                completed: "LineItem::total rounds half-even".into(),
                source: "offline".into(),
                created_at: now + i as i64,
                ..NewSummary::default()
            };
            insert_summary(&tx, &s).expect("summary");
        }
    }
    tx.commit().expect("commit");
    store.truncate_wal().expect("checkpoint");
}

/// `data/mnemo.db` as a copy of `built`, without WAL or shm.
fn fresh_copy(built: &Path, data: &Path) {
    let _ = std::fs::remove_dir_all(data);
    std::fs::create_dir_all(data).expect("data dir");
    std::fs::copy(built, data.join("mnemo.db")).expect("copy");
    // On disk before the timed run: otherwise the run's fsync would pay
    // for writing back the whole copy.
    std::fs::File::open(data.join("mnemo.db"))
        .and_then(|f| f.sync_all())
        .expect("sync the copy");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let _ = std::fs::set_permissions(data, std::fs::Permissions::from_mode(0o700));
        let _ = std::fs::set_permissions(
            data.join("mnemo.db"),
            std::fs::Permissions::from_mode(0o600),
        );
    }
}

fn assert_forgotten(db: &Path) {
    let conn = rusqlite::Connection::open(db).expect("open copy");
    let left: i64 = conn
        .query_row(
            "SELECT count(*) FROM observations WHERE uid LIKE 'bench-obs-%'",
            [],
            |r| r.get(0),
        )
        .expect("count");
    assert_eq!(left, 0, "the session was not forgotten");
}
