//! The first stage of the offline compressor: tool calls that other hosts
//! make in their own way, retold as the common tools the later stages know,
//! so that every agent's turn is read alike.
//!
//! - A patch of several files (Codex's `apply_patch`) becomes one edit per
//!   file, each with its part of the patch: every file it changed is kept.
//! - A shell command that only shows files (`cat`, `sed -n`, `head`, `nl`,
//!   …) becomes a read of each file; one that only searches (`rg`, `grep`,
//!   `git grep`, …) becomes a search. Both are told as context, not as runs.
//! - A search or comparison that exited 1 found nothing (or found a
//!   difference): it did not fail.
//! - A shell command that removes files (`rm`, `git rm`) becomes the
//!   deletion of each, as a patch's `*** Delete File:` is; what else the
//!   line ran stays a run.
//!
//! What a command is, is [`mnemo_core::shell`]'s to say; nothing here knows
//! a project's words.

use mnemo_core::shell;
use serde_json::{Value, json};

use crate::{BatchEvent, TurnBatch};

/// Tool names of shell commands across hosts.
const SHELL_TOOLS: &[&str] = &[
    "bash",
    "shell",
    "exec_command",
    "local_shell",
    "run_shell_command",
    "run_terminal_cmd",
    "terminal",
    "container.exec",
];

/// The batch with its host-specific calls retold; None when nothing needed
/// it (the batch is used as it is).
pub(crate) fn retold(batch: &TurnBatch) -> Option<TurnBatch> {
    let events: Vec<Vec<BatchEvent>> = batch
        .events
        .iter()
        .map(|e| retell(e, &batch.project_root))
        .collect();
    if events.iter().all(|e| e.is_empty()) {
        return None;
    }
    let mut out = batch.clone();
    out.events = batch
        .events
        .iter()
        .zip(events)
        .flat_map(|(e, retold)| {
            if retold.is_empty() {
                vec![e.clone()]
            } else {
                retold
            }
        })
        .collect();
    Some(out)
}

/// What one event becomes; empty when it stays as it is.
fn retell(event: &BatchEvent, root: &str) -> Vec<BatchEvent> {
    if let Some(patch) = patch_text(event)
        && !event.failed
    {
        return split_patch(event, &patch);
    }
    let Some(command) = shell_command(event) else {
        return Vec::new();
    };
    let code = exit_code(event);
    let failed = event.failed || code.is_some_and(|c| c != 0);
    let no_match = failed && code == Some(1) && shell::is_no_match(&command, 1);
    if failed && !no_match {
        return Vec::new();
    }
    let mut ok = event.clone();
    if no_match {
        found_nothing(&mut ok);
    }
    let removed = shell::files_removed(&command);
    if !removed.is_empty() {
        return removals(ok, &command, removed, root);
    }
    if let Some(search) = shell::search(&command) {
        return vec![as_search(&ok, search, root)];
    }
    let files = shown_files(&ok, &command, root);
    if !files.is_empty() {
        return files.into_iter().map(|f| as_read(&ok, f)).collect();
    }
    if no_match { vec![ok] } else { Vec::new() }
}

/// A search that found nothing, or a comparison that found differences:
/// not failed, and no exit code that says otherwise.
fn found_nothing(event: &mut BatchEvent) {
    event.failed = false;
    event.error = None;
    if let Some(Value::Object(map)) = event.response.as_mut() {
        for key in ["exit_code", "exitCode", "returncode", "return_code"] {
            map.remove(key);
        }
    }
}

/// The `*** Begin Patch` text of a patch call of several files.
fn patch_text(event: &BatchEvent) -> Option<String> {
    if event.files_modified.len() < 2 {
        return None;
    }
    let input = parsed(&event.input);
    ["command", "input", "patch"]
        .iter()
        .find_map(|k| input.get(*k).and_then(Value::as_str))
        .filter(|t| t.contains("*** Begin Patch"))
        .map(str::to_owned)
}

/// A stored value that was cut to a string of JSON, read back.
fn parsed(value: &Value) -> Value {
    match value {
        Value::String(s) => serde_json::from_str(s).unwrap_or(Value::Null),
        other => other.clone(),
    }
}

/// One edit per file section of `patch`, each naming its stored path; a
/// moved file is also the removal of its old path.
fn split_patch(event: &BatchEvent, patch: &str) -> Vec<BatchEvent> {
    let one = |paths: &[String], text: String| {
        let mut one = event.clone();
        one.input = json!({ "command": text });
        one.files_modified = stored_paths(&event.files_modified, paths);
        one.files_read = Vec::new();
        one
    };
    let mut out = Vec::new();
    for (paths, text) in sections(patch) {
        if let [from, _, ..] = paths.as_slice() {
            let removal = format!("*** Begin Patch\n*** Delete File: {from}\n*** End Patch\n");
            out.push(one(std::slice::from_ref(from), removal));
        }
        out.push(one(&paths, text));
    }
    out
}

/// The file sections of a patch: the paths each names (its file, and where
/// it moved) and the section as a patch of its own.
fn sections(patch: &str) -> Vec<(Vec<String>, String)> {
    const HEADERS: &[&str] = &["*** Add File: ", "*** Update File: ", "*** Delete File: "];
    let mut out: Vec<(Vec<String>, String)> = Vec::new();
    for line in patch.lines() {
        if let Some(path) = HEADERS.iter().find_map(|h| line.strip_prefix(h)) {
            out.push((
                vec![path.trim().to_owned()],
                String::from("*** Begin Patch\n"),
            ));
        } else if line.starts_with("*** Begin Patch") || line.starts_with("*** End Patch") {
            continue;
        }
        let Some((paths, text)) = out.last_mut() else {
            continue;
        };
        if let Some(to) = line.strip_prefix("*** Move to: ") {
            paths.push(to.trim().to_owned());
        }
        text.push_str(line);
        text.push('\n');
    }
    for (_, text) in &mut out {
        text.push_str("*** End Patch\n");
    }
    out
}

/// The stored (absolute) paths that are `paths` as the patch wrote them;
/// the patch's own when none is (the last one: where a moved file went).
fn stored_paths(stored: &[String], paths: &[String]) -> Vec<String> {
    let same = |s: &str, p: &str| {
        let p = p.trim_start_matches("./");
        s == p
            || s.strip_suffix(p)
                .is_some_and(|head| head.ends_with('/') || head.ends_with('\\'))
    };
    let mut found: Vec<String> = paths
        .iter()
        .rev()
        .filter_map(|p| stored.iter().find(|s| same(s, p)).cloned())
        .take(1)
        .collect();
    if found.is_empty() {
        found.extend(paths.last().cloned());
    }
    found
}

/// The command line of a shell tool call.
fn shell_command(event: &BatchEvent) -> Option<String> {
    if !SHELL_TOOLS.contains(&event.tool_name.to_ascii_lowercase().as_str()) {
        return None;
    }
    let input = parsed(&event.input);
    match input.get("command").or_else(|| input.get("cmd"))? {
        Value::String(s) => Some(s.clone()),
        Value::Array(argv) => {
            let words: Vec<&str> = argv.iter().filter_map(Value::as_str).collect();
            match words.as_slice() {
                [sh, flag, rest @ ..]
                    if matches!(shell::program(sh), "bash" | "sh" | "zsh")
                        && flag.starts_with('-')
                        && flag.contains('c') =>
                {
                    Some(rest.join(" "))
                }
                _ => Some(words.join(" ")),
            }
        }
        _ => None,
    }
}

/// The exit code a call states: its response's `exit_code` / `exitCode`,
/// else a line of its error or output (`Exit code 1`, `Exit Code: 1`,
/// `Process exited with code 1`).
fn exit_code(event: &BatchEvent) -> Option<i64> {
    let response = event.response.as_ref().map(parsed);
    let keyed = response.as_ref().and_then(|r| {
        ["exit_code", "exitCode", "returncode", "return_code"]
            .iter()
            .find_map(|k| r.get(*k)?.as_i64())
    });
    let text = response.as_ref().map(crate::event::text_of);
    keyed.or_else(|| {
        [event.error.as_deref(), text.as_deref()]
            .into_iter()
            .flatten()
            .find_map(stated_exit_code)
    })
}

/// The exit code a text states on one of its first lines.
fn stated_exit_code(text: &str) -> Option<i64> {
    text.lines().take(20).find_map(|line| {
        let line = line.trim().to_ascii_lowercase();
        let rest = ["exit code", "process exited with code"]
            .iter()
            .find_map(|p| line.strip_prefix(p))?;
        rest.trim_start_matches([':', ' ']).trim().parse().ok()
    })
}

/// The files a read-only command showed: those capture found on disk, else
/// the operands of the programs that show files (relative to the project).
fn shown_files(event: &BatchEvent, command: &str, root: &str) -> Vec<String> {
    if !shell::is_read_only(command) {
        return Vec::new();
    }
    if !event.files_read.is_empty() {
        return event.files_read.clone();
    }
    shell::files_read(command)
        .into_iter()
        .map(|f| absolute(&f, root))
        .collect()
}

fn absolute(path: &str, root: &str) -> String {
    let p = std::path::Path::new(path);
    if p.is_absolute() || root.is_empty() {
        path.to_owned()
    } else {
        format!(
            "{}/{}",
            root.trim_end_matches('/'),
            path.trim_start_matches("./")
        )
    }
}

/// A deletion of each file `command` removed, then the call itself when it
/// did more than remove files (`rm a && cargo test`).
fn removals(event: BatchEvent, command: &str, files: Vec<String>, root: &str) -> Vec<BatchEvent> {
    let mut out: Vec<BatchEvent> = files
        .into_iter()
        .map(|f| {
            let mut deletion = event.clone();
            let path = absolute(f.trim_end_matches('/'), root);
            deletion.tool_name = "apply_patch".to_owned();
            deletion.input = json!({
                "command": format!("*** Begin Patch\n*** Delete File: {path}\n*** End Patch\n")
            });
            deletion.response = None;
            deletion.files_read = Vec::new();
            deletion.files_modified = vec![path];
            deletion
        })
        .collect();
    if !shell::only_removes(command) {
        out.push(event);
    }
    out
}

/// The call as a read of `file` (its output is the file's text only when it
/// showed one file).
fn as_read(event: &BatchEvent, file: String) -> BatchEvent {
    let mut read = event.clone();
    read.tool_name = "Read".to_owned();
    read.input = json!({ "file_path": file });
    if event.files_read.len() > 1 {
        read.response = None;
    }
    read.files_read = vec![file];
    read.files_modified = Vec::new();
    read
}

/// The call as a search for `search.pattern` in its paths.
fn as_search(event: &BatchEvent, search: shell::Search, root: &str) -> BatchEvent {
    let mut found = event.clone();
    found.tool_name = "Grep".to_owned();
    let mut input = serde_json::Map::new();
    if let Some(p) = search.pattern {
        input.insert("pattern".to_owned(), json!(p));
    }
    if !search.paths.is_empty() {
        let paths: Vec<String> = search.paths.iter().map(|p| absolute(p, root)).collect();
        input.insert("path".to_owned(), json!(paths.join(" ")));
    }
    found.input = Value::Object(input);
    found.files_modified = Vec::new();
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    fn event(tool: &str, input: Value) -> BatchEvent {
        BatchEvent {
            id: 1,
            tool_use_id: Some("c1".into()),
            tool_name: tool.into(),
            input,
            ..BatchEvent::default()
        }
    }

    fn batch(events: Vec<BatchEvent>) -> TurnBatch {
        TurnBatch {
            project_root: "/p".into(),
            events,
            ..TurnBatch::default()
        }
    }

    #[test]
    fn a_patch_of_three_files_is_an_edit_each_and_a_move_removes_its_old_path() {
        let patch = "*** Begin Patch\n*** Update File: src/a.rs\n@@\n-x\n+y\n\
                     *** Add File: docs/b.md\n+hello\n*** Update File: c.rs\n*** Move to: d.rs\n@@\n-1\n+2\n*** End Patch\n";
        let mut e = event("apply_patch", json!({ "command": patch }));
        e.files_modified = vec![
            "/p/src/a.rs".into(),
            "/p/docs/b.md".into(),
            "/p/c.rs".into(),
            "/p/d.rs".into(),
        ];
        let out = retold(&batch(vec![e])).expect("split");
        let files: Vec<&[String]> = out
            .events
            .iter()
            .map(|e| e.files_modified.as_slice())
            .collect();
        let moved_from = out.events[2].input["command"].as_str().unwrap();
        assert!(moved_from.contains("*** Delete File: c.rs"), "{moved_from}");
        assert_eq!(
            files,
            [
                &["/p/src/a.rs".to_owned()][..],
                &["/p/docs/b.md".to_owned()],
                &["/p/c.rs".to_owned()],
                &["/p/d.rs".to_owned()]
            ]
        );
        let second = out.events[1].input["command"].as_str().unwrap();
        assert!(
            second.contains("+hello") && !second.contains("src/a.rs"),
            "{second}"
        );
        assert!(second.starts_with("*** Begin Patch") && second.ends_with("*** End Patch\n"));
    }

    #[test]
    fn shell_reads_are_reads_and_searches_and_a_miss_is_no_failure() {
        let cat = event("Bash", json!({ "command": "sed -n '1,80p' src/lib.rs" }));
        let mut rg = event("exec_command", json!({ "cmd": "rg -n 'a|b' src" }));
        rg.failed = true;
        rg.error = Some("Exit code 1".into());
        let mut broken = event("Bash", json!({ "command": "rg -n x src" }));
        broken.failed = true;
        broken.error = Some("Exit code 2\nrg: src: No such file or directory".into());
        let make = event("Bash", json!({ "command": "make" }));
        let out = retold(&batch(vec![cat, rg, broken, make])).expect("retold");
        let tools: Vec<&str> = out.events.iter().map(|e| e.tool_name.as_str()).collect();
        assert_eq!(tools, ["Read", "Grep", "Bash", "Bash"]);
        assert_eq!(out.events[0].input["file_path"], "/p/src/lib.rs");
        assert!(!out.events[1].failed && out.events[1].error.is_none());
        assert_eq!(out.events[1].input["pattern"], "a|b");
        assert!(out.events[2].failed, "exit 2 of a search is an error");
    }

    #[test]
    fn other_hosts_misses_are_no_failure_and_their_other_failures_stay() {
        let mut cursor = event("Shell", json!({ "command": "diff a.txt b.txt" }));
        cursor.response = Some(json!({ "output": "1c1\n< a\n---\n> b\n", "exitCode": 1 }));
        let mut gemini = event(
            "run_shell_command",
            json!({ "command": "grep -rn needle lib" }),
        );
        gemini.response = Some(json!({ "llmContent": "Output: (empty)\nExit Code: 1" }));
        let mut cat = event("Shell", json!({ "command": "cat missing.rs" }));
        cat.response = Some(json!({ "output": "cat: missing.rs: No such file", "exitCode": 1 }));
        let out = retold(&batch(vec![cursor, gemini, cat])).expect("retold");
        assert_eq!(
            out.events[0].response.as_ref().unwrap().get("exitCode"),
            None
        );
        assert_eq!(out.events[1].tool_name, "Grep");
        assert_eq!(
            out.events[2].tool_name, "Shell",
            "a failed read stays a failure"
        );
    }

    #[test]
    fn a_batch_with_nothing_to_retell_is_used_as_it_is() {
        let write = event("Write", json!({ "file_path": "/p/a.rs", "content": "x" }));
        let make = event("Bash", json!({ "command": "cargo build > log.txt" }));
        assert!(retold(&batch(vec![write, make])).is_none());
    }
}
