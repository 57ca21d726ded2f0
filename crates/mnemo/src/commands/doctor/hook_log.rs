//! What the hook log says that is still true: hooks never show their
//! problems to anyone, so doctor reads them here, but only those that are
//! current. A line is current when it is younger than [`CURRENT_FOR_MS`]
//! and than the last fix (the last change to `config.toml`, the last
//! `mnemo doctor --fix`), and an error only when no hook has stored anything
//! since; older lines describe problems already dealt with.
//!
//! The same lines count what hooks ignored (an unsupported host, an event
//! mnemo does not capture): capture writes one `ignored: <what>; <why>`
//! line for each, and nothing else on its hot path.

use std::path::Path;

use mnemo_core::DataDir;
use mnemo_core::words::count_s;

use super::{Check, Status, in_data};

/// How long a hook's warning stays news.
const CURRENT_FOR_MS: i64 = 24 * 3600 * 1000;
/// Written by `doctor --fix`: problems logged before it are past.
const FIX_STAMP: &str = "doctor-fix.stamp";
/// What capture writes before the description of something it ignored.
const IGNORED: &str = "ignored: ";

/// The hook-log checks: current warnings and errors, and what was ignored.
pub(super) fn checks(data: &DataDir, last_capture_ms: Option<i64>) -> Vec<Check> {
    let Ok(text) = std::fs::read_to_string(data.hook_log_path()) else {
        return Vec::new();
    };
    let recent_since = mnemo_core::time::now_ms() - CURRENT_FOR_MS;
    let lines: Vec<Line<'_>> = text
        .lines()
        .filter_map(Line::parse)
        .filter(|l| l.at_ms >= recent_since)
        .collect();
    let log = in_data(data, &data.hook_log_path());
    let mut checks = Vec::new();
    // A fix makes earlier problems past; what was ignored stays counted.
    let since_fix = current_since(data);
    let after_capture = |l: &Line<'_>| l.level != "ERROR" || Some(l.at_ms) > last_capture_ms;
    let current: Vec<&Line<'_>> = lines
        .iter()
        .filter(|l| l.at_ms >= since_fix && after_capture(l))
        .collect();
    if let Some(c) = problems(&current, &log) {
        checks.push(c);
    }
    if let Some(c) = ignored(&lines, &log) {
        checks.push(c);
    }
    checks
}

/// Records that fixes were applied now: the hook log's older lines are past.
pub(super) fn mark_fixed(data: &DataDir) {
    let _ = std::fs::write(data.log_dir().join(FIX_STAMP), b"");
}

/// The first millisecond of what counts as current.
fn current_since(data: &DataDir) -> i64 {
    let modified = |p: &Path| {
        std::fs::metadata(p)
            .and_then(|m| m.modified())
            .ok()
            .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
            .map_or(0, |d| d.as_millis() as i64)
    };
    [
        mnemo_core::time::now_ms() - CURRENT_FOR_MS,
        modified(&data.config_path()),
        modified(&data.log_dir().join(FIX_STAMP)),
    ]
    .into_iter()
    .max()
    .unwrap_or(0)
}

/// One line of the hook log: `<rfc3339> <LEVEL> <platform> <label>: <message>`.
struct Line<'a> {
    at_ms: i64,
    level: &'a str,
    text: &'a str,
    message: &'a str,
}

impl<'a> Line<'a> {
    fn parse(text: &'a str) -> Option<Line<'a>> {
        let mut words = text.splitn(3, ' ');
        let at_ms = mnemo_core::time::parse_rfc3339(words.next()?)?;
        let level = words.next()?;
        let rest = words.next()?;
        let message = rest.split_once(": ").map_or(rest, |(_, m)| m);
        Some(Line {
            at_ms,
            level,
            text,
            message,
        })
    }

    fn ignored(&self) -> Option<&'a str> {
        let what = self.message.strip_prefix(IGNORED)?;
        Some(what.split(';').next().unwrap_or(what).trim())
    }
}

/// Current warnings and errors (what was ignored is told apart).
fn problems(lines: &[&Line<'_>], log: &str) -> Option<Check> {
    let current: Vec<&Line<'_>> = lines
        .iter()
        .copied()
        .filter(|l| l.ignored().is_none() && matches!(l.level, "WARN" | "ERROR"))
        .collect();
    let errors = current.iter().filter(|l| l.level == "ERROR").count();
    let warnings = current.len() - errors;
    let latest = current.last()?;
    Some(Check::problem(
        "hook log",
        if errors > 0 { Status::Warn } else { Status::Ok },
        format!(
            "{} and {} in the last 24 h; latest: {}",
            count_s(errors, "error"),
            count_s(warnings, "warning"),
            latest.text.chars().take(240).collect::<String>()
        ),
        format!("details in {log}"),
    ))
}

/// Events hooks received but did not capture, counted by what they were.
fn ignored(lines: &[Line<'_>], log: &str) -> Option<Check> {
    let mut counts: Vec<(&str, usize)> = Vec::new();
    for what in lines.iter().filter_map(Line::ignored) {
        match counts.iter_mut().find(|(w, _)| *w == what) {
            Some((_, n)) => *n += 1,
            None => counts.push((what, 1)),
        }
    }
    if counts.is_empty() {
        return None;
    }
    counts.sort_by_key(|&(_, n)| std::cmp::Reverse(n));
    let total: usize = counts.iter().map(|(_, n)| n).sum();
    let unsupported = counts.iter().any(|(w, _)| w.contains("not supported"));
    let listed: Vec<String> = counts
        .iter()
        .take(5)
        .map(|(what, n)| format!("{n} × {what}"))
        .collect();
    let detail = format!(
        "{} not captured in the last 24 h: {}",
        count_s(total, "event"),
        listed.join("; ")
    );
    Some(if unsupported {
        Check::problem(
            "ignored",
            Status::Warn,
            detail,
            "wire the host with `mnemo install --platform <host>` (hosts: `mnemo hook --help`), \
             or send Claude Code's payload shape to `mnemo hook raw`",
        )
    } else {
        Check {
            name: "ignored",
            status: Status::Ok,
            detail,
            fix: Some(format!("nothing to do; details in {log}")),
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_read_with_their_time_level_and_message() {
        let l = Line::parse(
            "2026-11-25T06:00:00Z INFO claude-code Notification session=s: ignored: event Notification is not captured; nothing to do",
        )
        .unwrap();
        assert_eq!(l.level, "INFO");
        assert_eq!(l.ignored(), Some("event Notification is not captured"));
        assert!(Line::parse("not a log line").is_none());
    }
}
