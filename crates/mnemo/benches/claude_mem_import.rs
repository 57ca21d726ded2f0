//! Importing claude-mem: `mnemo import --from claude-mem` of the real
//! 13.25.3 fixture database (57 observations), and of a synthetic database
//! with 50,000 observations built here with claude-mem's own schema
//! (`tests/fixtures/claude-mem/schema-13.25.3.sql`): 1,000 sessions in
//! four project names, one of them (`api`) in two directories, each session
//! with 50 observations, 3 prompts, 2 summaries and a tool call giving its
//! working directory. Each into an empty store, then again (nothing new).
//!
//! ```text
//! cargo bench -p mnemo --bench claude_mem_import
//! MNEMO_BENCH_RUNS=5 cargo bench -p mnemo --bench claude_mem_import
//! ```

#[allow(dead_code)] // the table printer is for the latency benches
mod support;

use std::path::Path;
use std::process::Command;
use std::time::Duration;

const SESSIONS: usize = 1_000;
const OBSERVATIONS_PER_SESSION: usize = 50;

fn main() {
    let Some((bin, runs)) = support::settings(3) else {
        return;
    };
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/claude-mem");
    let tmp = tempfile::tempdir().expect("temp dir");
    let synthetic = tmp.path().join("synthetic.db");
    build(&fixtures.join("schema-13.25.3.sql"), &synthetic);
    let size = std::fs::metadata(&synthetic).unwrap().len();
    println!(
        "synthetic: {} observations in {:.1} MB",
        SESSIONS * OBSERVATIONS_PER_SESSION,
        size as f64 / 1e6
    );
    for (name, db) in [
        (
            "fixture 13.25.3 (57 observations)",
            fixtures.join("claude-mem-13.25.3.db"),
        ),
        ("synthetic (50,000 observations)", synthetic),
    ] {
        let mut first = Vec::new();
        let mut again = Vec::new();
        for run in 0..runs {
            let data = tmp.path().join(format!("data-{run}-{}", name.len()));
            first.push(support::timed_run(&mut import(&bin, &db, &data), None));
            again.push(support::timed_run(&mut import(&bin, &db, &data), None));
        }
        report(&format!("{name}, into an empty store"), &mut first);
        report(&format!("{name}, again (nothing new)"), &mut again);
    }
}

fn import(bin: &Path, db: &Path, data: &Path) -> Command {
    let mut cmd = Command::new(bin);
    cmd.args(["import", "--from", "claude-mem"])
        .arg(db)
        .env("MNEMO_DATA_DIR", data)
        .env("MNEMO_NO_WORKER", "1");
    cmd
}

fn report(name: &str, samples: &mut [Duration]) {
    println!(
        "| {name} | median {:.2} s |",
        support::percentile(samples, 0.5).as_secs_f64()
    );
}

/// claude-mem's schema, then its rows, written as claude-mem writes them
/// (its FTS triggers included).
fn build(schema: &Path, db: &Path) {
    let conn = rusqlite::Connection::open(db).unwrap();
    let ddl: String = std::fs::read_to_string(schema)
        .unwrap()
        .split_inclusive(";\n")
        .filter(|stmt| {
            !stmt
                .trim_start()
                .starts_with("CREATE TABLE sqlite_sequence")
        })
        .collect();
    conn.execute_batch(&ddl).unwrap();
    let tx = conn.unchecked_transaction().unwrap();
    let places = [
        ("api", "/home/dev/work/acme/api"),
        ("api", "/home/dev/oss/api"),
        ("storefront", "/home/dev/work/acme/storefront"),
        ("infra", "/home/dev/work/acme/infra"),
    ];
    let words = [
        "invoice",
        "webhook",
        "cursor",
        "pagination",
        "cache",
        "migration",
        "terraform",
        "render",
        "hydration",
        "limiter",
        "signature",
        "locale",
    ];
    let start = 1_756_000_000_000_i64;
    for s in 0..SESSIONS {
        let (project, dir) = places[s % places.len()];
        let content = format!("{s:08x}-0000-4000-8000-content00000");
        let memory = format!("{s:08x}-0000-4000-8000-memory000000");
        let at = start + s as i64 * 3_600_000;
        let iso = |ms: i64| mnemo_core::time::format_rfc3339(ms);
        tx.execute(
            "INSERT INTO sdk_sessions (content_session_id, memory_session_id, project, started_at,
                 started_at_epoch, completed_at, completed_at_epoch, status)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, 'completed')",
            rusqlite::params![
                content,
                memory,
                project,
                iso(at),
                at,
                iso(at + 1_800_000),
                at + 1_800_000
            ],
        )
        .unwrap();
        tx.execute(
            "INSERT INTO tool_uses (tool_use_id, content_session_id, memory_session_id, project,
                 tool_name, cwd, prompt_number, created_at, created_at_epoch)
             VALUES (?1, ?2, ?3, ?4, 'Read', ?5, 1, ?6, ?7)",
            rusqlite::params![
                format!("toolu_{s}"),
                content,
                memory,
                project,
                dir,
                iso(at),
                at
            ],
        )
        .unwrap();
        for p in 1..=3_i64 {
            tx.execute(
                "INSERT INTO user_prompts (content_session_id, session_db_id, prompt_number,
                     prompt_text, created_at, created_at_epoch)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                rusqlite::params![
                    content,
                    s as i64 + 1,
                    p,
                    format!(
                        "Fix the {} in {project}, part {p}",
                        words[(s + p as usize) % words.len()]
                    ),
                    iso(at + p * 60_000),
                    at + p * 60_000
                ],
            )
            .unwrap();
        }
        for o in 0..OBSERVATIONS_PER_SESSION {
            let word = words[(s * 7 + o) % words.len()];
            let ms = at + o as i64 * 30_000;
            tx.execute(
                "INSERT INTO observations (memory_session_id, project, type, title, subtitle,
                     facts, narrative, concepts, files_read, files_modified, prompt_number,
                     created_at, created_at_epoch, content_hash)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)",
                rusqlite::params![
                    memory,
                    project,
                    ["discovery", "change", "bugfix", "feature", "decision", "refactor"][o % 6],
                    format!("The {word} handler {o} of session {s} checks its input first"),
                    format!("{word} input validation"),
                    format!(r#"["{word}_{o} validates before use","tests cover the {word} path"]"#),
                    format!(
                        "While working on the {word} flow the handler was found to trust its \
                         input; it now validates it and returns a clear error. Session {s}, step {o}."
                    ),
                    format!(r#"["{word}","validation"]"#),
                    format!(r#"["{dir}/src/{word}/handler_{o}.py"]"#),
                    format!(r#"["{dir}/src/{word}/handler_{o}.py"]"#),
                    1 + (o % 3) as i64,
                    iso(ms),
                    ms,
                    format!("{:016x}", s * 1000 + o)
                ],
            )
            .unwrap();
        }
        for p in 1..=2_i64 {
            tx.execute(
                "INSERT INTO session_summaries (memory_session_id, project, request, investigated,
                     learned, completed, next_steps, files_read, files_edited, prompt_number,
                     created_at, created_at_epoch)
                 VALUES (?1, ?2, ?3, 'the handlers', 'inputs were trusted', 'validation added',
                     'review the rest', '[]', '[]', ?4, ?5, ?6)",
                rusqlite::params![
                    memory,
                    project,
                    format!("Fix the {} in {project}", words[s % words.len()]),
                    p,
                    iso(at + p * 600_000),
                    at + p * 600_000
                ],
            )
            .unwrap();
        }
    }
    tx.commit().unwrap();
}
