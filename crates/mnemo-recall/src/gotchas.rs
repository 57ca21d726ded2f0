//! The project's recurring gotchas: what failed in more than one session,
//! and what fixed it, for the SessionStart index.
//!
//! Read from the captured failures (`events` of kind `tool_failure`, through
//! a partial index) of the project's last sessions, so it works before and
//! whatever the compressor. Failures are the same gotcha when they share an
//! intent: for a shell command its program and first argument (`cargo
//! test`, `git push`; a leading `cd … &&` and variable assignments skipped),
//! for a file tool the file and the error's first line. Interruptions by the
//! user (or refused by them) are not failures. The fix is the first
//! `bugfix` observation that followed a failure in its session and names the
//! command or the file, else a later successful run of the same intent in
//! another form (`git push` failed, `git push -u origin x` worked).
//! Paths under a temporary directory (`/tmp/TestX123/001/a.json`) read as
//! `<tmp>/…/a.json`, so that the same failure in two scratch directories is
//! one gotcha and reads without the random part.

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
    pub fix: Option<Fix>,
}

/// What got past a gotcha.
#[derive(Debug, Clone, PartialEq)]
pub enum Fix {
    /// A bugfix observation that followed: id and title.
    Observation(i64, String),
    /// The same intent succeeded later in another form (the command).
    Rerun(String),
}

struct Failure {
    session: i64,
    what: String,
    key: String,
    error: String,
    created_at: i64,
    /// Words a fix would mention (program, file name).
    hints: Vec<String>,
    /// The failed shell command, if it was one.
    command: Option<String>,
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
        if not_a_failure(&error) || found_nothing(input.as_deref(), &error) {
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
        let fix = find_fix(conn, &failures)?;
        gotchas.push(Gotcha {
            what: newest.what.clone(),
            error: newest.error.clone(),
            sessions: sessions.len(),
            failures: failures.len(),
            last_at: newest.created_at,
            fix,
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
    let headline = without_temp_paths(&error_headline(error));
    let field = |k: &str| input.get(k).and_then(Value::as_str).map(str::to_owned);
    if let Some(command) = field("command") {
        let intent = command_intent(&command)?;
        let hints = vec![intent.clone()];
        return Some(Failure {
            session,
            key: format!("cmd:{intent}"),
            what: format!("`{intent}`"),
            error: headline,
            created_at,
            hints,
            command: Some(command),
        });
    }
    let file = field("file_path")
        .or_else(|| field("notebook_path"))
        .or_else(|| field("path"))?;
    let name = file.rsplit(['/', '\\']).next().unwrap_or(&file).to_owned();
    let file = without_temp_paths(&file);
    Some(Failure {
        session,
        key: format!("file:{tool}:{file}:{}", headline.to_lowercase()),
        what: format!("{tool} {name}"),
        error: headline,
        created_at,
        hints: vec![name],
        command: None,
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

/// The user stopped or refused the call: nothing went wrong with it.
fn not_a_failure(error: &str) -> bool {
    error.contains("(interrupted by the user)")
        || error.contains("doesn't want to proceed")
        || error.contains("tool use was rejected")
}

/// A search that found nothing or a comparison that found differences
/// (exit code 1 of `rg`, `grep`, `diff`, …): the host reported it as
/// failed, but nothing went wrong ([`mnemo_core::shell::is_no_match`]).
fn found_nothing(input: Option<&str>, error: &str) -> bool {
    let code = error
        .lines()
        .next()
        .and_then(|l| l.trim().strip_prefix("Exit code"))
        .and_then(|c| c.trim_start_matches([':', ' ']).trim().parse::<i64>().ok());
    let command = input
        .and_then(|i| serde_json::from_str::<Value>(i).ok())
        .and_then(|v| v.get("command").and_then(Value::as_str).map(str::to_owned));
    match (code, command) {
        (Some(code), Some(command)) => mnemo_core::shell::is_no_match(&command, code),
        _ => false,
    }
}

/// Words of the line where an error output says what went wrong.
const ERROR_WORDS: &[&str] = &[
    "error",
    "fatal",
    "failed",
    "failure",
    "panicked",
    "exception",
    "not found",
    "no such",
    "denied",
    "cannot",
    "can't",
    "unable",
    "does not exist",
    "invalid",
];

/// Lines of an error output searched for the one that says what went wrong
/// (a test runner's verdict comes after its log).
const HEADLINE_LINES: usize = 400;

/// Whether a line names an error: an error word, or `FAIL` as a word (the
/// verdict of test runners: `--- FAIL: TestX`, `FAIL src/x.test.ts`).
fn names_an_error(line: &str) -> bool {
    let lower = line.to_ascii_lowercase();
    ERROR_WORDS.iter().any(|w| lower.contains(w))
        || line
            .split(|c: char| !c.is_ascii_alphanumeric())
            .any(|w| w == "FAIL")
}

/// The line of an error that says what went wrong: the first that names an
/// error (within the first lines), else the first that is not `Exit code N`.
fn error_headline(error: &str) -> String {
    let lines = || {
        error
            .lines()
            .map(|l| strip_wrapper_tags(l.trim()))
            .filter(|l| !l.is_empty())
    };
    let said = |l: &&str| !l.to_ascii_lowercase().starts_with("exit code");
    let line = lines()
        .filter(said)
        .take(HEADLINE_LINES)
        .find(|l| names_an_error(l))
        .or_else(|| lines().find(said))
        .or_else(|| lines().next())
        .unwrap_or("failed");
    one_line(line, 90)
}

/// Where temporary directories are: a path holding one of these is a
/// scratch path (Unix, macOS's per-user folders, Windows' `%TEMP%`).
const TEMP_MARKERS: &[&str] = &[
    "/tmp/",
    "/var/folders/",
    "\\AppData\\Local\\Temp\\",
    "\\Windows\\Temp\\",
];

/// `text` with every scratch path (a word holding a [`TEMP_MARKERS`] part)
/// written `<tmp>/…/<file name>`, or `<tmp>/<name>` when the name sits right
/// in the temporary directory.
fn without_temp_paths(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = next_temp_path(rest) {
        let end = start
            + rest[start..]
                .find(|c: char| c.is_whitespace() || "\"'`,;()<>[]{}".contains(c))
                .unwrap_or(rest.len() - start);
        let path = &rest[start..end];
        // `path:3:` or `path.` at a sentence's end: the name stops before.
        let path = path.trim_end_matches([':', '.']);
        // (After a drive's `C:`.)
        let path = match path.get(2..).and_then(|p| p.find(':')) {
            Some(i) => &path[..i + 2],
            None => path,
        };
        out.push_str(&rest[..start]);
        out.push_str(&scratch_name(path));
        rest = &rest[start + path.len()..];
    }
    out.push_str(rest);
    out
}

/// Where the next scratch path in `text` begins: the start of the word
/// holding a temporary-directory marker (a Unix one only at the word's
/// start, or after `/private`: `src/tmp/a.rs` is no scratch path).
fn next_temp_path(text: &str) -> Option<usize> {
    let mut best: Option<usize> = None;
    for marker in TEMP_MARKERS {
        let mut from = 0;
        while let Some(i) = text[from..].find(marker) {
            let at = from + i;
            let start = text[..at]
                .rfind(|c: char| c.is_whitespace() || "\"'`,;(<[{=".contains(c))
                .map_or(0, |i| i + 1);
            let prefix = &text[start..at];
            if prefix.is_empty() || prefix == "/private" || marker.starts_with('\\') {
                best = Some(best.map_or(start, |b| b.min(start)));
                break;
            }
            from = at + marker.len();
        }
    }
    best
}

fn scratch_name(path: &str) -> String {
    let parts: Vec<&str> = path.split(['/', '\\']).filter(|p| !p.is_empty()).collect();
    let marker = TEMP_MARKERS
        .iter()
        .map(|m| m.trim_matches(['/', '\\']))
        .filter_map(|m| {
            let last = m.rsplit(['/', '\\']).next()?;
            parts.iter().position(|p| p.eq_ignore_ascii_case(last))
        })
        .min()
        .unwrap_or(0);
    // macOS: /var/folders/xx/yyyy/T/<name>: the scratch part ends at `T`.
    let below = match parts.iter().rposition(|p| *p == "T") {
        Some(t) if path.contains("/var/folders/") => t + 1,
        _ => marker + 1,
    };
    match parts.len().saturating_sub(below) {
        0 => "<tmp>".to_owned(),
        1 => format!("<tmp>/{}", parts[parts.len() - 1]),
        _ => format!("<tmp>/…/{}", parts[parts.len() - 1]),
    }
}

/// `<tool_use_error>File does not exist.</tool_use_error>` → the text.
fn strip_wrapper_tags(line: &str) -> &str {
    let mut l = line;
    if l.starts_with('<')
        && let Some(end) = l.find('>')
    {
        l = &l[end + 1..];
    }
    if l.ends_with('>')
        && let Some(start) = l.rfind("</")
    {
        l = &l[..start];
    }
    l.trim()
}

/// What got past the failures (newest first): a bugfix that followed one
/// and names the command or file, else the same command succeeding in
/// another form. A bugfix that names neither is not assumed to be the fix.
fn find_fix(conn: &Connection, failures: &[Failure]) -> Result<Option<Fix>> {
    // The newest failure of each session.
    let mut per_session: Vec<&Failure> = Vec::new();
    for f in failures {
        if !per_session.iter().any(|p| p.session == f.session) {
            per_session.push(f);
        }
    }
    for f in &per_session {
        if let Some(fix) = bugfix_after(conn, f)? {
            return Ok(Some(fix));
        }
        if let Some(rerun) = rerun_after(conn, f)? {
            return Ok(Some(rerun));
        }
    }
    Ok(None)
}

/// The first bugfix observation after `f` in its session that names its
/// command or file.
fn bugfix_after(conn: &Connection, f: &Failure) -> Result<Option<Fix>> {
    let mut stmt = conn.prepare_cached(
        "SELECT id, title, subtitle, facts FROM observations
         WHERE session_id = ?1 AND type = 'bugfix' AND created_at >= ?2
         ORDER BY created_at, id LIMIT 8",
    )?;
    let rows = stmt.query_map(rusqlite::params![f.session, f.created_at], |r| {
        let title: String = r.get(1)?;
        let text = format!(
            "{title} {} {}",
            r.get::<_, String>(2)?,
            r.get::<_, String>(3)?
        );
        Ok((r.get::<_, i64>(0)?, title, text.to_lowercase()))
    })?;
    for row in rows {
        let (id, title, text) = row?;
        if f.hints.iter().any(|h| text.contains(&h.to_lowercase())) {
            return Ok(Some(Fix::Observation(id, title)));
        }
    }
    Ok(None)
}

/// A later successful run, in the same session, of the failed command's
/// intent written differently (`git push` → `git push -u origin x`).
fn rerun_after(conn: &Connection, f: &Failure) -> Result<Option<Fix>> {
    let Some(failed) = &f.command else {
        return Ok(None);
    };
    let mut stmt = conn.prepare_cached(
        "SELECT input FROM events
         WHERE session_id = ?1 AND kind = 'tool_use' AND tool_name = 'Bash' AND created_at >= ?2
         ORDER BY id LIMIT 60",
    )?;
    let rows = stmt.query_map(rusqlite::params![f.session, f.created_at], |r| {
        r.get::<_, Option<String>>(0)
    })?;
    let intent = command_intent(failed);
    for input in rows {
        let Some(command) = input?
            .and_then(|i| serde_json::from_str::<Value>(&i).ok())
            .and_then(|v| v.get("command").and_then(Value::as_str).map(str::to_owned))
        else {
            continue;
        };
        if command_intent(&command) == intent && command.trim() != failed.trim() {
            return Ok(Some(Fix::Rerun(one_line(&command, 90))));
        }
    }
    Ok(None)
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
    fn a_search_that_found_nothing_is_no_gotcha() {
        let rg = Some(r#"{"command":"rg -n 'needle|pin' src"}"#);
        assert!(found_nothing(rg, "Exit code 1"));
        assert!(!found_nothing(
            rg,
            "Exit code 2\nrg: src: No such file or directory"
        ));
        let make = Some(r#"{"command":"make check"}"#);
        assert!(!found_nothing(make, "Exit code 1\nerror"));
    }

    #[test]
    fn scratch_paths_read_as_tmp_and_the_file_name() {
        assert_eq!(
            without_temp_paths(
                "open /tmp/TestLoad4012/001/settings.json: no such file or directory"
            ),
            "open <tmp>/…/settings.json: no such file or directory"
        );
        assert_eq!(
            without_temp_paths(
                "cannot read '/private/var/folders/x1/abc/T/go-build77/b001/a.go:3:'"
            ),
            "cannot read '<tmp>/…/a.go:3:'"
        );
        assert_eq!(
            without_temp_paths(r"copy C:\Users\ana\AppData\Local\Temp\x.txt failed"),
            "copy <tmp>/x.txt failed"
        );
        assert_eq!(
            without_temp_paths("src/tmp/a.rs failed"),
            "src/tmp/a.rs failed"
        );
        assert_eq!(
            without_temp_paths("rm /tmp/ then /tmp/a b"),
            "rm <tmp> then <tmp>/a b"
        );
    }

    #[test]
    fn the_same_failure_in_two_scratch_directories_is_one_gotcha() {
        let f = |dir: &str| {
            let input = format!(r#"{{"file_path":"/tmp/{dir}/cfg.json"}}"#);
            let error = format!("open /tmp/{dir}/cfg.json: permission denied");
            failure(1, Some("Read"), Some(&input), &error, 0).unwrap()
        };
        let (a, b) = (f("TestA991"), f("TestB123/002"));
        assert_eq!(a.key, b.key);
        assert_eq!(a.error, "open <tmp>/…/cfg.json: permission denied");
        assert_eq!(a.what, "Read cfg.json");
    }

    #[test]
    fn the_headline_skips_the_exit_code() {
        assert_eq!(
            error_headline("Exit code 101\n\nerror[E0425]: cannot find value `x`\nmore"),
            "error[E0425]: cannot find value `x`"
        );
        assert_eq!(error_headline("Exit code 3"), "Exit code 3");
        let log: String = (0..60).map(|i| format!("    step {i} ok\n")).collect();
        assert_eq!(
            error_headline(&format!(
                "Exit code 1\n=== RUN   TestA\n{log}--- FAIL: TestA (0.61s)"
            )),
            "--- FAIL: TestA (0.61s)"
        );
        assert_eq!(
            error_headline(
                "Exit code 2\nCompiling 4 files (.ex)\n** (CompileError) lib/a.ex:3: undefined"
            ),
            "** (CompileError) lib/a.ex:3: undefined"
        );
        assert_eq!(
            error_headline("<tool_use_error>File does not exist.</tool_use_error>"),
            "File does not exist."
        );
    }
}
