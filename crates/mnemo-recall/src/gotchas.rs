//! The project's recurring gotchas: what failed in more than one session,
//! and what fixed it, for the SessionStart index.
//!
//! Read from the captured failures (`events` of kind `tool_failure`, through
//! a partial index) of the project's last sessions, so it works before and
//! whatever the compressor. Failures are the same gotcha when they share an
//! intent: for a shell command its program and first argument (`cargo
//! test`, `git push`; a leading `cd … &&` and variable assignments skipped),
//! for a file tool the file and the error's first line. Interruptions by the
//! user are not failures. The fix is the first `bugfix` observation that
//! followed the newest failure in its session (preferring one that names the
//! command or the file).

use std::collections::HashMap;

use rusqlite::Connection;
use serde_json::Value;

use crate::Result;
use crate::text::one_line;

/// Sessions whose failures are read.
const SESSIONS_READ: i64 = 30;
/// Most failures read.
const FAILURES_READ: i64 = 400;

/// One thing that kept failing.
#[derive(Debug, Clone, PartialEq)]
pub struct Gotcha {
    /// What failed, as a reader would say it (`cargo test`, `Edit src/a.rs`).
    pub what: String,
    /// The newest failure's error line.
    pub error: String,
    pub sessions: usize,
    pub failures: usize,
    pub last_at: i64,
    /// The bugfix that followed: id and title.
    pub fix: Option<(i64, String)>,
}

struct Failure {
    session: i64,
    what: String,
    key: String,
    error: String,
    created_at: i64,
    /// Words a fix would mention (program, file name).
    hints: Vec<String>,
}

/// The project's gotchas, most sessions first, at most `max`.
pub fn recurring(conn: &Connection, project: i64, max: usize) -> Result<Vec<Gotcha>> {
    if max == 0 {
        return Ok(Vec::new());
    }
    let mut stmt = conn.prepare_cached(
        "SELECT e.session_id, e.tool_name, e.input, e.error, e.created_at
         FROM events e
         WHERE e.kind = 'tool_failure'
           AND e.session_id IN (SELECT id FROM sessions WHERE project_id = ?1
                                ORDER BY started_at DESC LIMIT ?2)
         ORDER BY e.created_at DESC LIMIT ?3",
    )?;
    let rows = stmt.query_map(
        rusqlite::params![project, SESSIONS_READ, FAILURES_READ],
        |r| {
            Ok((
                r.get::<_, i64>(0)?,
                r.get::<_, Option<String>>(1)?,
                r.get::<_, Option<String>>(2)?,
                r.get::<_, Option<String>>(3)?,
                r.get::<_, i64>(4)?,
            ))
        },
    )?;
    let mut groups: HashMap<String, Vec<Failure>> = HashMap::new();
    for row in rows {
        let (session, tool, input, error, created_at) = row?;
        let error = error.unwrap_or_default();
        if error.contains("(interrupted by the user)") {
            continue;
        }
        if let Some(f) = failure(
            session,
            tool.as_deref(),
            input.as_deref(),
            &error,
            created_at,
        ) {
            groups.entry(f.key.clone()).or_default().push(f);
        }
    }
    let mut gotchas = Vec::new();
    for failures in groups.into_values() {
        let mut sessions: Vec<i64> = failures.iter().map(|f| f.session).collect();
        sessions.sort_unstable();
        sessions.dedup();
        if sessions.len() < 2 {
            continue;
        }
        // Rows came newest first.
        let newest = &failures[0];
        gotchas.push(Gotcha {
            what: newest.what.clone(),
            error: newest.error.clone(),
            sessions: sessions.len(),
            failures: failures.len(),
            last_at: newest.created_at,
            fix: fix_after(conn, newest)?,
        });
    }
    gotchas.sort_by_key(|g| std::cmp::Reverse((g.sessions, g.last_at)));
    gotchas.truncate(max);
    Ok(gotchas)
}

/// One failed call, keyed by its intent; None when there is nothing to key.
fn failure(
    session: i64,
    tool: Option<&str>,
    input: Option<&str>,
    error: &str,
    created_at: i64,
) -> Option<Failure> {
    let tool = tool.unwrap_or("tool");
    let input: Value = input
        .and_then(|i| serde_json::from_str(i).ok())
        .unwrap_or(Value::Null);
    let headline = error_headline(error);
    let field = |k: &str| input.get(k).and_then(Value::as_str).map(str::to_owned);
    if let Some(command) = field("command") {
        let intent = command_intent(&command)?;
        let hints = intent
            .split(' ')
            .filter(|w| w.len() > 2)
            .map(str::to_owned)
            .collect();
        return Some(Failure {
            session,
            key: format!("cmd:{intent}"),
            what: format!("`{intent}`"),
            error: headline,
            created_at,
            hints,
        });
    }
    let file = field("file_path")
        .or_else(|| field("notebook_path"))
        .or_else(|| field("path"))?;
    let name = file.rsplit('/').next().unwrap_or(&file).to_owned();
    Some(Failure {
        session,
        key: format!("file:{tool}:{file}:{}", headline.to_lowercase()),
        what: format!("{tool} {name}"),
        error: headline,
        created_at,
        hints: vec![name],
    })
}

/// `cargo test -p x` → `cargo test`; `cd a && FOO=1 npm run build` →
/// `npm run`. The program and its first argument that is not an option.
pub fn command_intent(command: &str) -> Option<String> {
    let line = command.lines().next().unwrap_or("").trim();
    let mut rest = line;
    while let Some((head, tail)) = rest.split_once("&&") {
        if head.trim_start().starts_with("cd ") {
            rest = tail.trim_start();
        } else {
            break;
        }
    }
    let mut words = rest
        .split_whitespace()
        .skip_while(|w| w.contains('=') && !w.starts_with('-') || *w == "sudo" || *w == "env");
    let program = words.next()?;
    let program = program.rsplit('/').next().unwrap_or(program);
    let arg = words.find(|w| !w.starts_with('-'));
    let arg = arg.filter(|a| {
        a.chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == ':')
    });
    Some(match arg {
        Some(a) => format!("{program} {a}"),
        None => program.to_owned(),
    })
}

/// The first line of an error that says something (not `Exit code 1`).
fn error_headline(error: &str) -> String {
    let line = error
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty() && !l.to_ascii_lowercase().starts_with("exit code"))
        .or_else(|| error.lines().map(str::trim).find(|l| !l.is_empty()))
        .unwrap_or("failed");
    one_line(line, 90)
}

/// The bugfix that followed `f` in its session.
fn fix_after(conn: &Connection, f: &Failure) -> Result<Option<(i64, String)>> {
    let mut stmt = conn.prepare_cached(
        "SELECT id, title, subtitle, facts FROM observations
         WHERE session_id = ?1 AND type = 'bugfix' AND created_at >= ?2
         ORDER BY created_at, id LIMIT 8",
    )?;
    let rows = stmt.query_map(rusqlite::params![f.session, f.created_at], |r| {
        Ok((
            r.get::<_, i64>(0)?,
            r.get::<_, String>(1)?,
            format!(
                "{} {} {}",
                r.get::<_, String>(1)?,
                r.get::<_, String>(2)?,
                r.get::<_, String>(3)?
            )
            .to_lowercase(),
        ))
    })?;
    let mut first = None;
    for row in rows {
        let (id, title, text) = row?;
        if f.hints.iter().any(|h| text.contains(&h.to_lowercase())) {
            return Ok(Some((id, title)));
        }
        first.get_or_insert((id, title));
    }
    Ok(first)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn command_intent_is_the_program_and_its_first_argument() {
        let i = |c: &str| command_intent(c).unwrap();
        assert_eq!(i("cargo test -p foo -- --nocapture"), "cargo test");
        assert_eq!(i("cd /repo && cargo build --release"), "cargo build");
        assert_eq!(
            i("RUST_LOG=debug ./target/debug/mnemo doctor"),
            "mnemo doctor"
        );
        assert_eq!(i("git push --set-upstream origin x"), "git push");
        assert_eq!(i("pytest -x tests/test_a.py"), "pytest");
        assert_eq!(command_intent("   "), None);
    }

    #[test]
    fn the_headline_skips_the_exit_code() {
        assert_eq!(
            error_headline("Exit code 101\n\nerror[E0425]: cannot find value `x`\nmore"),
            "error[E0425]: cannot find value `x`"
        );
        assert_eq!(error_headline("Exit code 3"), "Exit code 3");
    }
}
