//! Reading a stored tool event: which kind of action it was (a write, an
//! edit, a command, a read, a search, ...) and the fields that matter for
//! it, whatever platform sent it. Every field may be missing or of another
//! type than expected (stored values may also have been cut to a string);
//! reading never panics, it just knows less.

use std::borrow::Cow;

use serde_json::Value;

use crate::BatchEvent;
use crate::text;

/// One edit of a file: the text replaced and its replacement.
#[derive(Debug, Clone, Default)]
pub(crate) struct EditPair {
    pub old: String,
    pub new: String,
}

/// What a tool call did, as far as its stored input and response tell.
#[derive(Debug, Clone)]
pub(crate) enum Action {
    Write {
        path: String,
        content: Option<String>,
        /// `Some(true)` when the tool says it created the file.
        created: Option<bool>,
        /// Lines of the tool's patch (` `, `-`, `+` prefixed), if it sent one.
        patch: Vec<String>,
    },
    Edit {
        path: String,
        edits: Vec<EditPair>,
        patch: Vec<String>,
        /// A patch that only deletes its file (`*** Delete File:`).
        deleted: bool,
    },
    Command {
        command: String,
        description: Option<String>,
        stdout: String,
        stderr: String,
        exit_code: Option<i64>,
        interrupted: bool,
    },
    Read {
        path: String,
        lines: Option<u64>,
        bytes: Option<usize>,
        /// `offset`/`limit` of a partial read.
        range: Option<(u64, u64)>,
    },
    Search {
        tool: String,
        pattern: Option<String>,
        scope: Option<String>,
        /// How many files or matches came back, when the tool says.
        hits: Option<u64>,
        /// The text of the result (file lists, matching lines).
        result: String,
    },
    Fetch {
        url: String,
        result: String,
    },
    Agent {
        description: Option<String>,
        prompt: Option<String>,
        result: String,
    },
    Mcp {
        server: String,
        tool: String,
        args: String,
        result: String,
    },
    Other {
        args: String,
        result: String,
    },
}

/// A stored event with its action read out.
#[derive(Debug, Clone)]
pub(crate) struct Event<'a> {
    pub raw: &'a BatchEvent,
    /// Position in the batch.
    pub index: usize,
    pub action: Action,
    /// The event failed: a failure hook, a non-zero exit, an error flag.
    pub failed: bool,
    /// The error text (the hook's `error`, or one found in the response).
    pub error: Option<String>,
}

impl Event<'_> {
    pub fn tool(&self) -> &str {
        &self.raw.tool_name
    }

    /// The file this event wrote, edited or read.
    pub fn path(&self) -> Option<&str> {
        match &self.action {
            Action::Write { path, .. } | Action::Edit { path, .. } | Action::Read { path, .. } => {
                Some(path)
            }
            _ => None,
        }
    }
}

/// The broad family of a tool, by name, across platforms.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Family {
    Write,
    Edit,
    Command,
    Read,
    Search,
    Fetch,
    Agent,
    Mcp,
    Other,
}

fn family(tool: &str) -> Family {
    if tool.starts_with("mcp__") {
        return Family::Mcp;
    }
    match tool.to_ascii_lowercase().as_str() {
        "write" | "write_file" | "create_file" | "writefile" => Family::Write,
        "edit" | "multiedit" | "notebookedit" | "replace" | "edit_file" | "str_replace"
        | "str_replace_editor" | "apply_patch" | "search_replace" => Family::Edit,
        "bash" | "shell" | "run_shell_command" | "exec_command" | "local_shell"
        | "run_terminal_cmd" | "terminal" | "powershell" | "container.exec" => Family::Command,
        "read" | "read_file" | "notebookread" | "read_many_files" | "view" => Family::Read,
        "grep"
        | "glob"
        | "ls"
        | "search_file_content"
        | "list_directory"
        | "list_dir"
        | "codebase_search"
        | "grep_search"
        | "file_search"
        | "websearch"
        | "web_search"
        | "google_web_search" => Family::Search,
        "webfetch" | "web_fetch" | "fetch" => Family::Fetch,
        "task" | "agent" => Family::Agent,
        _ => Family::Other,
    }
}

/// The first string among `keys` of an object.
pub(crate) fn str_of<'v>(value: &'v Value, keys: &[&str]) -> Option<&'v str> {
    keys.iter()
        .find_map(|k| value.get(*k).and_then(Value::as_str))
}

fn u64_of(value: &Value, keys: &[&str]) -> Option<u64> {
    keys.iter().find_map(|k| {
        let v = value.get(*k)?;
        v.as_u64()
            .or_else(|| v.as_f64().filter(|f| *f >= 0.0).map(|f| f as u64))
            .or_else(|| v.as_str().and_then(|s| s.trim().parse().ok()))
    })
}

fn i64_of(value: &Value, keys: &[&str]) -> Option<i64> {
    keys.iter().find_map(|k| {
        let v = value.get(*k)?;
        v.as_i64()
            .or_else(|| v.as_str().and_then(|s| s.trim().parse().ok()))
    })
}

/// Text found in a value: a string as is, the `text` of content blocks, or
/// common result fields; other JSON compactly serialized.
pub(crate) fn text_of(value: &Value) -> String {
    match value {
        Value::Null => String::new(),
        Value::String(s) => s.clone(),
        Value::Array(items) => {
            let texts: Vec<String> = items
                .iter()
                .filter_map(|i| match i {
                    Value::String(s) => Some(s.clone()),
                    Value::Object(_) => i.get("text").and_then(Value::as_str).map(str::to_owned),
                    _ => None,
                })
                .collect();
            if texts.is_empty() && !items.is_empty() {
                value.to_string()
            } else {
                texts.join("\n")
            }
        }
        Value::Object(_) => {
            for key in ["content", "result", "output", "text", "stdout", "message"] {
                if let Some(v) = value.get(key) {
                    let t = text_of(v);
                    if !t.is_empty() {
                        return t;
                    }
                }
            }
            value.to_string()
        }
        other => other.to_string(),
    }
}

/// The path of `p` made absolute against `root` when it is relative.
fn absolute(p: &str, root: &str) -> String {
    if p.starts_with('/') || root.is_empty() || p.get(1..3) == Some(":\\") {
        p.to_owned()
    } else {
        format!(
            "{}/{}",
            root.trim_end_matches('/'),
            p.trim_start_matches("./")
        )
    }
}

/// The command line of a shell tool: a string, or an argv array (`bash -lc
/// "cargo test"` counts as `cargo test`).
fn command_of(input: &Value) -> Option<String> {
    match input.get("command").or_else(|| input.get("cmd")) {
        Some(Value::String(s)) => Some(s.clone()),
        Some(Value::Array(argv)) => {
            let words: Vec<&str> = argv.iter().filter_map(Value::as_str).collect();
            if words.len() >= 3
                && matches!(words[0], "bash" | "sh" | "zsh")
                && words[1].starts_with('-')
                && words[1].contains('c')
            {
                Some(words[2..].join(" "))
            } else {
                Some(words.join(" "))
            }
        }
        _ => None,
    }
}

fn patch_lines(response: Option<&Value>) -> Vec<String> {
    let Some(hunks) = response
        .and_then(|r| r.get("structuredPatch"))
        .and_then(Value::as_array)
    else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for hunk in hunks {
        if let Some(lines) = hunk.get("lines").and_then(Value::as_array) {
            if !out.is_empty() {
                out.push("@@".to_owned());
            }
            out.extend(lines.iter().filter_map(Value::as_str).map(str::to_owned));
        }
    }
    out
}

/// Lines of a Codex-style `*** Begin Patch` text that add or remove.
fn apply_patch_lines(text: &str) -> Vec<String> {
    text.lines()
        .filter(|l| {
            (l.starts_with('+') || l.starts_with('-') || l.starts_with(' ') || l.starts_with("@@"))
                && !l.starts_with("***")
        })
        .map(str::to_owned)
        .collect()
}

/// Whether a `*** Begin Patch` text only deletes files: each of its file
/// sections is a `*** Delete File:`.
fn deletes_only(text: &str) -> bool {
    let headers: Vec<&str> = text
        .lines()
        .filter(|l| {
            l.starts_with("*** ")
                && l.contains(" File: ")
                && !l.starts_with("*** Begin")
                && !l.starts_with("*** End")
        })
        .collect();
    !headers.is_empty() && headers.iter().all(|l| l.starts_with("*** Delete File: "))
}

/// The keys a file's path may be found under in a tool's input.
const PATH_KEYS: &[&str] = &[
    "file_path",
    "path",
    "notebook_path",
    "absolute_path",
    "target_file",
    "filePath",
];

/// What reading one event works from: its input and response as JSON
/// (parsed again when stored cut to a string), the response's text, and
/// the project root relative paths are taken against.
struct Stored<'v> {
    input: &'v Value,
    response: Option<&'v Value>,
    result: String,
    root: &'v str,
}

impl Stored<'_> {
    /// The first file capture recorded, else a path in the input made
    /// absolute; empty when neither is there.
    fn path(&self, files: &[String]) -> String {
        files
            .first()
            .cloned()
            .or_else(|| {
                str_of(self.input, PATH_KEYS)
                    .filter(|p| !p.is_empty())
                    .map(|p| absolute(p, self.root))
            })
            .unwrap_or_default()
    }
}

/// Reads one stored event.
pub(crate) fn read<'a>(raw: &'a BatchEvent, index: usize, project_root: &str) -> Event<'a> {
    let input = read_input(&raw.input);
    let response = raw.response.as_ref().map(read_response);
    let response = response.as_deref();
    let stored = Stored {
        input: input.as_ref(),
        response,
        result: response.map(text_of).unwrap_or_default(),
        root: project_root,
    };
    let (mut failed, error) = failure(raw, response);
    let action = match told_family(raw) {
        Family::Write => write_action(raw, &stored),
        Family::Edit => edit_action(raw, &stored),
        Family::Command => command_action(&stored, error.as_deref(), &mut failed),
        Family::Read => read_action(raw, &stored),
        Family::Search => search_action(raw, stored),
        Family::Fetch => Action::Fetch {
            url: str_of(stored.input, &["url", "uri"])
                .unwrap_or_default()
                .to_owned(),
            result: stored.result,
        },
        Family::Agent => agent_action(stored),
        Family::Mcp => mcp_action(raw, stored),
        Family::Other => Action::Other {
            args: compact_args(stored.input),
            result: stored.result,
        },
    };
    Event {
        raw,
        index,
        action,
        failed,
        error,
    }
}

/// The stored input; one cut to fit storage may have become a string of
/// JSON text (null when it no longer parses).
fn read_input(input: &Value) -> Cow<'_, Value> {
    match input {
        Value::String(s) => Cow::Owned(serde_json::from_str::<Value>(s).unwrap_or(Value::Null)),
        other => Cow::Borrowed(other),
    }
}

/// The stored response; a string of JSON text is parsed when it can be.
fn read_response(response: &Value) -> Cow<'_, Value> {
    match response {
        Value::String(s) if s.starts_with('{') || s.starts_with('[') => serde_json::from_str(s)
            .map(Cow::Owned)
            .unwrap_or(Cow::Borrowed(response)),
        other => Cow::Borrowed(other),
    }
}

/// Whether the event failed and its error: the hook's, or the response's
/// text when it is flagged `is_error`.
fn failure(raw: &BatchEvent, response: Option<&Value>) -> (bool, Option<String>) {
    let mut error = raw
        .error
        .as_deref()
        .map(str::trim)
        .filter(|e| !e.is_empty())
        .map(str::to_owned);
    let mut failed = raw.failed;
    if let Some(r) = response
        && r.get("is_error").and_then(Value::as_bool) == Some(true)
    {
        failed = true;
        if error.is_none() {
            error = Some(text_of(r));
        }
    }
    (failed, error)
}

/// The family the event is told as. Capture records a Write that left the
/// file as it was (same content) as a read of it: it changed nothing, so it
/// is told as one.
fn told_family(raw: &BatchEvent) -> Family {
    match family(&raw.tool_name) {
        Family::Write if raw.files_modified.is_empty() && !raw.files_read.is_empty() => {
            Family::Read
        }
        f => f,
    }
}

/// A file written whole: its path, content, whether it was created, and
/// the tool's patch.
fn write_action(raw: &BatchEvent, stored: &Stored<'_>) -> Action {
    Action::Write {
        path: stored.path(&raw.files_modified),
        content: str_of(stored.input, &["content", "file_text", "text", "contents"])
            .map(str::to_owned),
        created: stored
            .response
            .and_then(|r| str_of(r, &["type"]))
            .and_then(|t| match t {
                "create" => Some(true),
                "update" => Some(false),
                _ => None,
            }),
        patch: patch_lines(stored.response),
    }
}

/// A file edited: its replacements, and the tool's patch or the lines of a
/// `*** Begin Patch` text.
fn edit_action(raw: &BatchEvent, stored: &Stored<'_>) -> Action {
    let input = stored.input;
    let mut edits = Vec::new();
    if let Some(list) = input.get("edits").and_then(Value::as_array) {
        edits.extend(list.iter().filter_map(edit_pair));
    } else if let Some(p) = edit_pair(input) {
        edits.push(p);
    }
    let mut patch = patch_lines(stored.response);
    let patch_text = str_of(input, &["patch", "input"])
        .map(str::to_owned)
        .or_else(|| command_of(input))
        .filter(|t| t.contains("*** Begin Patch"));
    if patch.is_empty()
        && let Some(text) = &patch_text
    {
        patch = apply_patch_lines(text);
    }
    Action::Edit {
        path: stored.path(&raw.files_modified),
        edits,
        patch,
        deleted: patch_text.as_deref().is_some_and(deletes_only),
    }
}

/// The text one edit replaced and its replacement, when either is there.
fn edit_pair(v: &Value) -> Option<EditPair> {
    let old = str_of(v, &["old_string", "old_str", "oldString", "old_text"]);
    let new = str_of(
        v,
        &[
            "new_string",
            "new_str",
            "newString",
            "new_text",
            "code_edit",
        ],
    );
    (old.is_some() || new.is_some()).then(|| EditPair {
        old: old.unwrap_or_default().to_owned(),
        new: new.unwrap_or_default().to_owned(),
    })
}

/// A shell command: its line, output and exit code. A non-zero exit marks
/// the event `failed`; a failure's exit code may be read from its error.
fn command_action(stored: &Stored<'_>, error: Option<&str>, failed: &mut bool) -> Action {
    let r = stored.response.unwrap_or(&Value::Null);
    let (stdout, stderr) = command_output(r);
    let mut exit_code = i64_of(r, &["exit_code", "exitCode", "returncode", "return_code"])
        .or_else(|| error.and_then(text::exit_code_in));
    if exit_code.is_some_and(|c| c != 0) {
        *failed = true;
    }
    if *failed && exit_code.is_none() {
        exit_code = error.and_then(text::exit_code_in);
    }
    Action::Command {
        command: command_of(stored.input).unwrap_or_default(),
        description: str_of(stored.input, &["description"]).map(str::to_owned),
        stdout,
        stderr,
        exit_code,
        interrupted: r.get("interrupted").and_then(Value::as_bool) == Some(true)
            || r.get("is_interrupt").and_then(Value::as_bool) == Some(true),
    }
}

/// A command's stdout and stderr from its response: the fields of an
/// object, or the whole text of anything else as stdout.
fn command_output(r: &Value) -> (String, String) {
    match r {
        Value::Object(_) => (
            str_of(
                r,
                &["stdout", "output", "aggregated_output", "formatted_output"],
            )
            .unwrap_or_default()
            .to_owned(),
            str_of(r, &["stderr"]).unwrap_or_default().to_owned(),
        ),
        Value::Null => (String::new(), String::new()),
        other => (text_of(other), String::new()),
    }
}

/// A file read: its path, size in lines and bytes, and the range read.
fn read_action(raw: &BatchEvent, stored: &Stored<'_>) -> Action {
    let response = stored.response;
    let file = response.and_then(|r| r.get("file"));
    let content = file
        .and_then(|f| str_of(f, &["content"]))
        .or_else(|| response.and_then(|r| r.as_str()))
        .or_else(|| response.and_then(|r| str_of(r, &["content", "output"])));
    let lines = file
        .and_then(|f| u64_of(f, &["totalLines", "numLines"]))
        .or_else(|| content.map(|c| c.lines().count() as u64));
    let range = match (
        u64_of(stored.input, &["offset"]),
        u64_of(stored.input, &["limit"]),
    ) {
        (None, None) => None,
        (o, l) => Some((o.unwrap_or(1), l.unwrap_or(0))),
    };
    Action::Read {
        path: stored.path(&raw.files_read),
        lines,
        bytes: content.map(str::len),
        range,
    }
}

/// A search: its pattern and scope, how many hits, and the files listed
/// (else the result's text).
fn search_action(raw: &BatchEvent, stored: Stored<'_>) -> Action {
    let response = stored.response;
    let filenames = response
        .and_then(|r| r.get("filenames"))
        .and_then(Value::as_array);
    let hits = response.and_then(|r| {
        u64_of(r, &["numFiles", "numMatches", "numLines", "count", "total"])
            .or_else(|| filenames.map(|a| a.len() as u64))
    });
    let listing = filenames.map(|a| {
        a.iter()
            .filter_map(Value::as_str)
            .collect::<Vec<_>>()
            .join("\n")
    });
    Action::Search {
        tool: raw.tool_name.clone(),
        pattern: str_of(stored.input, &["pattern", "query", "regex", "glob", "q"])
            .map(str::to_owned),
        scope: str_of(
            stored.input,
            &["path", "dir_path", "directory", "glob", "include"],
        )
        .map(str::to_owned),
        hits,
        result: listing.filter(|l| !l.is_empty()).unwrap_or(stored.result),
    }
}

/// A subagent: its description and task; no result while it runs in the
/// background.
fn agent_action(stored: Stored<'_>) -> Action {
    let launched = stored
        .response
        .is_some_and(|r| str_of(r, &["status"]) == Some("async_launched"));
    Action::Agent {
        description: str_of(stored.input, &["description"]).map(str::to_owned),
        prompt: str_of(stored.input, &["prompt"]).map(str::to_owned),
        result: if launched {
            String::new()
        } else {
            stored.result
        },
    }
}

/// An MCP tool: the server and tool from its `mcp__server__tool` name.
fn mcp_action(raw: &BatchEvent, stored: Stored<'_>) -> Action {
    let rest = raw.tool_name.trim_start_matches("mcp__");
    let (server, tool) = rest.split_once("__").unwrap_or(("", rest));
    Action::Mcp {
        server: server.to_owned(),
        tool: tool.to_owned(),
        args: compact_args(stored.input),
        result: stored.result,
    }
}

/// An input object as `key: value` pairs on one line (strings unquoted).
fn compact_args(input: &Value) -> String {
    match input {
        Value::Object(map) => map
            .iter()
            .map(|(k, v)| match v {
                Value::String(s) => format!("{k}: {}", text::one_line(s, 80)),
                other => format!("{k}: {}", text::one_line(&other.to_string(), 80)),
            })
            .collect::<Vec<_>>()
            .join(", "),
        Value::Null => String::new(),
        other => text::one_line(&other.to_string(), 200),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn ev(tool: &str, input: Value, response: Option<Value>) -> BatchEvent {
        BatchEvent {
            tool_name: tool.into(),
            input,
            response,
            ..Default::default()
        }
    }

    #[test]
    fn a_write_capture_recorded_as_a_read_is_told_as_one() {
        let input = json!({"file_path": "/p/a.py", "content": "x = 1\n"});
        let mut e = ev("Write", input, Some(json!({"type": "update"})));
        e.files_read = vec!["/p/a.py".into()];
        let Action::Read { path, .. } = read(&e, 0, "/p").action else {
            panic!("a Write that changed nothing is a read")
        };
        assert_eq!(path, "/p/a.py");
        e.files_modified = std::mem::take(&mut e.files_read);
        assert!(matches!(read(&e, 0, "/p").action, Action::Write { .. }));
    }

    #[test]
    fn reads_claude_code_shapes() {
        let e = ev(
            "Bash",
            json!({"command": "cargo test", "description": "Run tests"}),
            Some(json!({"stdout": "ok", "stderr": "", "interrupted": false})),
        );
        let r = read(&e, 0, "/p");
        assert!(!r.failed);
        let Action::Command { command, .. } = &r.action else {
            panic!()
        };
        assert_eq!(command, "cargo test");

        let mut f = ev("Bash", json!({"command": "false"}), None);
        f.failed = true;
        f.error = Some("Exit code 3".into());
        let r = read(&f, 0, "/p");
        let Action::Command { exit_code, .. } = r.action else {
            panic!()
        };
        assert_eq!(exit_code, Some(3));

        let e = ev(
            "MultiEdit",
            json!({"file_path": "src/a.rs", "edits": [{"old_string": "a", "new_string": "b"}, 5]}),
            None,
        );
        let r = read(&e, 0, "/p");
        let Action::Edit { path, edits, .. } = &r.action else {
            panic!()
        };
        assert_eq!(path, "/p/src/a.rs");
        assert_eq!(edits.len(), 1);
    }

    #[test]
    fn wrong_types_never_panic() {
        for input in [
            json!(null),
            json!(5),
            json!("{\"cut"),
            json!([1, 2]),
            json!({"command": 7, "file_path": []}),
        ] {
            for tool in [
                "Bash",
                "Edit",
                "Write",
                "Read",
                "Grep",
                "WebFetch",
                "Task",
                "mcp__x__y",
                "Zzz",
            ] {
                for response in [
                    None,
                    Some(json!(3)),
                    Some(json!({"file": 4, "structuredPatch": "x"})),
                ] {
                    let e = ev(tool, input.clone(), response);
                    let _ = read(&e, 0, "");
                }
            }
        }
    }

    #[test]
    fn codex_argv_commands_and_exit_codes() {
        let e = ev(
            "shell",
            json!({"command": ["bash", "-lc", "npm test"]}),
            Some(json!({"output": "1 failing", "exit_code": 1})),
        );
        let r = read(&e, 0, "/p");
        assert!(r.failed);
        let Action::Command {
            command, exit_code, ..
        } = r.action
        else {
            panic!()
        };
        assert_eq!(command, "npm test");
        assert_eq!(exit_code, Some(1));
    }
}
