//! How doctor's result reads: the checks one per line, and the verdict in
//! one sentence, which `--json` carries too (`summary`) so that the
//! viewer's health page says what the terminal says.

use mnemo_core::DataDir;
use mnemo_core::words::count_s;

use serde_json::{Value, json};

use super::{Check, Status};

/// The report for a terminal.
pub(super) fn print(data: &DataDir, checks: &[Check], verdict: Status) {
    println!("mnemo doctor ({})", data.root().display());
    let width = checks
        .iter()
        .map(|c| c.name.len())
        .max()
        .unwrap_or(0)
        .max(9);
    for c in checks {
        let mark = match c.status {
            Status::Ok => " ok ",
            Status::Warn => "warn",
            Status::Fail => "FAIL",
        };
        println!("  [{mark}] {:<width$} {}", c.name, c.detail);
        if let Some(f) = &c.fix {
            println!("         {:<width$} fix: {f}", "");
        }
    }
    println!("{}", verdict_line(checks, verdict, "above"));
}

/// The report for `--json`: the verdict, its exit code and summary, the
/// data directory and every check.
pub(super) fn json(data: &DataDir, checks: &[Check], verdict: Status) -> Value {
    json!({
        "ok": verdict == Status::Ok,
        "verdict": verdict.word(),
        "exit_code": verdict.exit_code(),
        "summary": verdict_line(checks, verdict, "below"),
        "data_dir": data.root(),
        "checks": checks.iter().map(|c| json!({
            "name": c.name,
            "status": c.status.word(),
            "detail": c.detail,
            "fix": c.fix,
        })).collect::<Vec<_>>(),
    })
}

/// `All good.`, or how many warnings and failures and where their fixes
/// are (`where_fixes`: "above" on a terminal, "below" on the health page).
fn verdict_line(checks: &[Check], verdict: Status, where_fixes: &str) -> String {
    let count = |s: Status| checks.iter().filter(|c| c.status == s).count();
    let (warnings, failures) = (count(Status::Warn), count(Status::Fail));
    match verdict {
        Status::Ok => "All good.".to_owned(),
        _ if failures == 0 => format!(
            "{}: mnemo works, but see what to fix {where_fixes}.",
            count_s(warnings, "warning")
        ),
        _ => format!(
            "{} and {}: see the fixes {where_fixes}.",
            count_s(failures, "failure"),
            count_s(warnings, "warning")
        ),
    }
}
