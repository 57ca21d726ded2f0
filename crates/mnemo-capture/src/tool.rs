//! What to keep of a tool call: the files it touched, how much it matters,
//! and its input and response made safe and small enough to store.
//!
//! Order matters: files are found first (so the deny list can withhold
//! contents), responses lose what duplicates the input (a Write echoes the
//! whole file back), then privacy rules apply, and only then is the size
//! capped, so that a cut can never expose half of a redacted secret.

use std::path::Path;

use mnemo_core::model::Priority;
use mnemo_core::privacy::Sanitizer;
use serde_json::{Map, Value};

use crate::event::ToolCall;

/// A tool event ready for the events table.
#[derive(Debug, Clone, PartialEq)]
pub struct ShapedTool {
    pub input: Option<String>,
    pub response: Option<String>,
    pub error: Option<String>,
    pub files_read: Vec<String>,
    pub files_modified: Vec<String>,
    pub priority: Priority,
    pub note: Option<String>,
}

pub struct Policy<'a> {
    pub sanitizer: &'a Sanitizer,
    pub max_field_bytes: usize,
}

/// Shapes a tool use (`response`) or failure (`error`).
pub fn shape(
    call: &ToolCall,
    response: Option<&Value>,
    error: Option<&str>,
    cwd: Option<&str>,
    policy: &Policy<'_>,
) -> ShapedTool {
    let mut notes = Vec::new();
    let (mut files_read, mut files_modified) = files_touched(&call.name, &call.input, cwd);
    let mut priority = priority(&call.name, &call.input, error.is_some());
    if error.is_none() && rewrote_unchanged(&call.name, &call.input, response) {
        // Touched, not changed: recorded as a read, without mutation priority.
        files_read.append(&mut files_modified);
        priority = Priority::Low;
        notes.push("the write left the file as it was (same content)".to_owned());
    }

    let mut input = call.input.clone();
    let mut response = response.filter(|r| !r.is_null()).cloned();

    if let Some((file, pattern)) = files_read.iter().chain(&files_modified).find_map(|f| {
        policy
            .sanitizer
            .denied_file(f)
            .map(|p| (f.clone(), p.to_owned()))
    }) {
        input = identifying_keys(&input);
        response = None;
        notes.push(format!(
            "contents withheld: {file} matches the deny list (`{pattern}`)"
        ));
    } else if let Some((path, pattern)) = searched_path(&call.name, &input).and_then(|p| {
        policy
            .sanitizer
            .denied_file(p)
            .map(|pat| (p.to_owned(), pat.to_owned()))
    }) {
        response = None;
        notes.push(format!(
            "output withheld: the search ran over {path}, which matches the deny list (`{pattern}`)"
        ));
    } else if let Some((word, pattern)) = command_of(&input)
        .and_then(|c| policy.sanitizer.denied_file_in_command(c))
        .map(|(w, p)| (w.to_owned(), p.to_owned()))
    {
        response = None;
        notes.push(format!(
            "output withheld: the command names {word}, which matches the deny list (`{pattern}`)"
        ));
    }

    if let Some(r) = response.as_mut() {
        slim_response(&call.name, r, &mut notes);
        withhold_denied_hits(r, policy.sanitizer, &mut notes);
    }
    // A path can hold a secret too (a token as a file name).
    let clean_path = |p: String| policy.sanitizer.text(&p).into_owned();
    let files_read: Vec<String> = files_read.into_iter().map(clean_path).collect();
    let files_modified: Vec<String> = files_modified.into_iter().map(clean_path).collect();

    policy.sanitizer.value(&mut input);
    if let Some(r) = response.as_mut() {
        policy.sanitizer.value(r);
    }
    let error = error.map(|e| {
        let clean = policy.sanitizer.text(e);
        cap_text(&clean, policy.max_field_bytes, "error", &mut notes)
    });

    let input = cap_json(input, policy.max_field_bytes, "input", &mut notes);
    let response = response.map(|r| cap_json(r, policy.max_field_bytes, "response", &mut notes));

    ShapedTool {
        input: Some(input),
        response,
        error,
        files_read,
        files_modified,
        priority,
        note: (!notes.is_empty()).then(|| notes.join("; ")),
    }
}

/// Files a tool read and modified, as absolute paths where the working
/// directory allows.
pub fn files_touched(tool: &str, input: &Value, cwd: Option<&str>) -> (Vec<String>, Vec<String>) {
    let path_of = |key: &str| {
        input
            .get(key)
            .and_then(Value::as_str)
            .filter(|p| !p.is_empty())
            .map(|p| absolute(p, cwd))
    };
    let mut read = Vec::new();
    let mut modified = Vec::new();
    match tool {
        "Write" | "Edit" | "MultiEdit" => modified.extend(path_of("file_path")),
        "NotebookEdit" => modified.extend(path_of("notebook_path")),
        "Read" => read.extend(path_of("file_path")),
        "NotebookRead" => read.extend(path_of("notebook_path")),
        _ => {
            // Codex reports patches as `apply_patch` (or a Bash command
            // holding the patch text).
            if let Some(patch) = command_of(input).filter(|c| c.contains("*** Begin Patch")) {
                modified.extend(patch_files(patch).map(|f| absolute(f, cwd)));
            } else if let Some(command) = command_of(input) {
                read.extend(shown_files(command, cwd));
            }
        }
    }
    (read, modified)
}

/// The files a read-only shell command showed or searched
/// ([`mnemo_core::shell::files_read`]) that are files on disk (a search's
/// folders are not), as absolute paths. Only with a working directory to
/// resolve them against; at most a few stats.
fn shown_files(command: &str, cwd: Option<&str>) -> Vec<String> {
    const MAX_FILES: usize = 16;
    let Some(cwd) = cwd else {
        return Vec::new();
    };
    mnemo_core::shell::files_read(command)
        .into_iter()
        .take(MAX_FILES)
        .map(|f| absolute(&f, Some(cwd)))
        .filter(|f| Path::new(f).is_file())
        .collect()
}

/// `path` resolved against `cwd` when relative. On Windows the relative
/// part's `/` become `\`, so that `src/a.rs` under `C:\r` is stored as
/// `C:\r\src\a.rs`, the same string as the host's own absolute paths.
fn absolute(path: &str, cwd: Option<&str>) -> String {
    match cwd {
        Some(cwd) if !Path::new(path).is_absolute() => {
            let relative = if cfg!(windows) {
                path.replace('/', "\\")
            } else {
                path.to_owned()
            };
            Path::new(cwd).join(relative).to_string_lossy().into_owned()
        }
        _ => path.to_owned(),
    }
}

fn patch_files(patch: &str) -> impl Iterator<Item = &str> {
    patch.lines().filter_map(|l| {
        [
            "*** Update File: ",
            "*** Add File: ",
            "*** Delete File: ",
            "*** Move to: ",
        ]
        .iter()
        .find_map(|p| l.strip_prefix(p))
        .map(str::trim)
    })
}

/// The file or folder a search tool (Grep, Glob) ran over.
fn searched_path<'a>(tool: &str, input: &'a Value) -> Option<&'a str> {
    matches!(tool, "Grep" | "Glob")
        .then(|| input.get("path").and_then(Value::as_str))
        .flatten()
}

/// Drops the lines of search output (a Grep's `content`, a Bash `stdout`)
/// that come from a deny-listed file (`.env:3:KEY=value`).
fn withhold_denied_hits(response: &mut Value, sanitizer: &Sanitizer, notes: &mut Vec<String>) {
    let Value::Object(map) = response else {
        return;
    };
    for key in ["content", "stdout", "output"] {
        let Some(Value::String(text)) = map.get_mut(key) else {
            continue;
        };
        if let (std::borrow::Cow::Owned(kept), dropped) = sanitizer.without_denied_lines(text) {
            *text = kept;
            notes.push(format!(
                "{dropped} line(s) of {key} withheld: they come from files on the deny list"
            ));
        }
    }
}

fn command_of(input: &Value) -> Option<&str> {
    input.get("command").and_then(Value::as_str)
}

/// A Write over an existing file with exactly its old content: Claude Code
/// answers `type: "update"` with the `originalFile` it replaced.
fn rewrote_unchanged(tool: &str, input: &Value, response: Option<&Value>) -> bool {
    let Some(response) = response else {
        return false;
    };
    if tool != "Write" || response.get("type").and_then(Value::as_str) != Some("update") {
        return false;
    }
    let written = input
        .get("content")
        .or_else(|| response.get("content"))
        .and_then(Value::as_str);
    let original = response.get("originalFile").and_then(Value::as_str);
    matches!((written, original), (Some(w), Some(o)) if w == o)
}

/// How urgently the worker should look at this event.
pub fn priority(tool: &str, input: &Value, failed: bool) -> Priority {
    if failed {
        return Priority::High;
    }
    match tool {
        "Write" | "Edit" | "MultiEdit" | "NotebookEdit" | "apply_patch" => Priority::High,
        "Bash" => match command_of(input) {
            Some(c) if mnemo_core::shell::is_read_only(c) => Priority::Low,
            _ => Priority::High,
        },
        "Read" | "NotebookRead" | "Glob" | "Grep" | "LS" | "WebSearch" | "WebFetch" => {
            Priority::Low
        }
        _ => Priority::Normal,
    }
}

/// Drops what a response repeats from its input or that is a whole previous
/// file, noting what went.
fn slim_response(tool: &str, response: &mut Value, notes: &mut Vec<String>) {
    let Value::Object(map) = response else {
        return;
    };
    match tool {
        "Write" => {
            map.remove("content");
            drop_original(map, notes);
        }
        "Edit" | "MultiEdit" => {
            map.remove("oldString");
            map.remove("newString");
            map.remove("edits");
            drop_original(map, notes);
        }
        _ => {}
    }
}

fn drop_original(map: &mut Map<String, Value>, notes: &mut Vec<String>) {
    if let Some(Value::String(original)) = map.remove("originalFile") {
        notes.push(format!(
            "previous file content ({} bytes) not stored; the patch is",
            original.len()
        ));
    }
}

/// Keeps only the keys that say what was touched, not what was in it.
fn identifying_keys(input: &Value) -> Value {
    let mut kept = Map::new();
    if let Value::Object(map) = input {
        for key in [
            "file_path",
            "notebook_path",
            "path",
            "command",
            "description",
        ] {
            if let Some(v) = map.get(key) {
                kept.insert(key.to_owned(), v.clone());
            }
        }
    }
    Value::Object(kept)
}

/// Serializes `value`, cutting its longest strings (head and tail kept) until
/// it fits `max_bytes`.
pub fn cap_json(mut value: Value, max_bytes: usize, what: &str, notes: &mut Vec<String>) -> String {
    let original = serialized_len(&value);
    if original <= max_bytes {
        return value.to_string();
    }
    // Find the largest per-string length `limit` that makes the whole fit,
    // then cut every longer string to it (water-filling).
    let mut lengths = Vec::new();
    collect_string_lengths(&value, &mut lengths);
    let total_strings: usize = lengths.iter().sum();
    let overhead = original.saturating_sub(total_strings);
    let budget = max_bytes.saturating_sub(overhead);
    let (mut lo, mut hi) = (0usize, lengths.iter().copied().max().unwrap_or(0));
    while lo < hi {
        let mid = (lo + hi).div_ceil(2);
        let used: usize = lengths
            .iter()
            .map(|&l| if l > mid { mid + MARKER_ALLOWANCE } else { l })
            .sum();
        if used <= budget {
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    cut_strings(&mut value, lo);
    let mut text = value.to_string();
    if text.len() > max_bytes {
        // Structure alone is too big (a huge array of small items): keep a
        // prefix of the JSON text as a string, which is still valid JSON.
        let keep = floor_char_boundary(&text, max_bytes.saturating_sub(64));
        text = Value::String(format!("{}…[cut]", &text[..keep])).to_string();
    }
    notes.push(format!(
        "{what} cut from {} to {} bytes",
        original,
        text.len()
    ));
    text
}

/// Room for the `…[N bytes cut]…` marker in a cut string.
const MARKER_ALLOWANCE: usize = 32;

fn cap_text(text: &str, max_bytes: usize, what: &str, notes: &mut Vec<String>) -> String {
    if text.len() <= max_bytes {
        return text.to_owned();
    }
    notes.push(format!(
        "{what} cut from {} to about {max_bytes} bytes",
        text.len()
    ));
    cut_middle(text, max_bytes.saturating_sub(MARKER_ALLOWANCE))
}

fn serialized_len(value: &Value) -> usize {
    struct Counter(usize);
    impl std::io::Write for Counter {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0 += buf.len();
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut c = Counter(0);
    let _ = serde_json::to_writer(&mut c, value);
    c.0
}

fn collect_string_lengths(value: &Value, out: &mut Vec<usize>) {
    match value {
        Value::String(s) => out.push(s.len()),
        Value::Array(items) => items.iter().for_each(|v| collect_string_lengths(v, out)),
        Value::Object(map) => map.values().for_each(|v| collect_string_lengths(v, out)),
        _ => {}
    }
}

fn cut_strings(value: &mut Value, limit: usize) {
    match value {
        Value::String(s) if s.len() > limit => *s = cut_middle(s, limit),
        Value::Array(items) => items.iter_mut().for_each(|v| cut_strings(v, limit)),
        Value::Object(map) => map.values_mut().for_each(|v| cut_strings(v, limit)),
        _ => {}
    }
}

/// Keeps the head and tail of `text` (about `keep` bytes in all) around a
/// marker saying how much was cut. Never splits a character.
pub fn cut_middle(text: &str, keep: usize) -> String {
    if text.len() <= keep {
        return text.to_owned();
    }
    let head = floor_char_boundary(text, keep - keep / 3);
    let tail_start = ceil_char_boundary(text, text.len() - keep / 3);
    let cut = tail_start - head;
    format!(
        "{}…[{cut} bytes cut]…{}",
        &text[..head],
        &text[tail_start..]
    )
}

fn floor_char_boundary(s: &str, mut i: usize) -> usize {
    i = i.min(s.len());
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

fn ceil_char_boundary(s: &str, mut i: usize) -> usize {
    while i < s.len() && !s.is_char_boundary(i) {
        i += 1;
    }
    i
}

#[cfg(test)]
mod tests {
    use super::*;
    use mnemo_core::config::PrivacyConfig;
    use serde_json::json;

    fn call(name: &str, input: Value) -> ToolCall {
        ToolCall {
            name: name.into(),
            input,
            tool_use_id: Some("t".into()),
            prompt_id: None,
            duration_ms: None,
        }
    }

    fn policy(s: &Sanitizer) -> Policy<'_> {
        Policy {
            sanitizer: s,
            max_field_bytes: 4096,
        }
    }

    #[test]
    fn edit_keeps_the_patch_and_drops_the_old_file() {
        let s = Sanitizer::new(&PrivacyConfig::default());
        let response = json!({
            "filePath": "/p/a.py", "oldString": "x", "newString": "y",
            "originalFile": "def a():\n    return 1\n",
            "structuredPatch": [{"lines": ["-x", "+y"]}]
        });
        let shaped = shape(
            &call(
                "Edit",
                json!({"file_path": "a.py", "old_string": "x", "new_string": "y"}),
            ),
            Some(&response),
            None,
            Some("/p"),
            &policy(&s),
        );
        assert_eq!(shaped.files_modified, [joined("/p", &["a.py"])]);
        assert_eq!(shaped.priority, Priority::High);
        let stored: Value = serde_json::from_str(shaped.response.as_deref().unwrap()).unwrap();
        assert_eq!(
            stored,
            json!({"filePath": "/p/a.py", "structuredPatch": [{"lines": ["-x", "+y"]}]})
        );
        assert!(
            shaped
                .note
                .unwrap()
                .contains("previous file content (22 bytes) not stored")
        );
    }

    #[test]
    fn a_write_of_the_same_content_is_a_touch_not_a_change() {
        let s = Sanitizer::new(&Default::default());
        let content = "x = 1\n";
        let call = call("Write", json!({"file_path": "/p/a.py", "content": content}));
        let same = json!({"type": "update", "filePath": "/p/a.py", "content": content, "originalFile": content});
        let shaped = shape(&call, Some(&same), None, None, &policy(&s));
        assert!(shaped.files_modified.is_empty());
        assert_eq!(shaped.files_read, ["/p/a.py"]);
        assert_eq!(shaped.priority, Priority::Low);
        assert!(shaped.note.unwrap().contains("same content"));

        for response in [
            json!({"type": "update", "content": content, "originalFile": "x = 0\n"}),
            json!({"type": "create", "content": content, "originalFile": null}),
        ] {
            let shaped = shape(&call, Some(&response), None, None, &policy(&s));
            assert_eq!(shaped.files_modified, ["/p/a.py"]);
            assert_eq!(shaped.priority, Priority::High);
        }
    }

    #[test]
    fn denied_files_keep_only_the_fact_of_the_touch() {
        let s = Sanitizer::new(&PrivacyConfig::default());
        let shaped = shape(
            &call("Read", json!({"file_path": "/p/.env.local", "limit": 5})),
            Some(&json!({"file": {"content": "PASSWORD=hunter2"}})),
            None,
            None,
            &policy(&s),
        );
        assert_eq!(
            shaped.input.as_deref(),
            Some(r#"{"file_path":"/p/.env.local"}"#)
        );
        assert_eq!(shaped.response, None);
        assert_eq!(shaped.files_read, ["/p/.env.local"]);
        assert!(
            shaped
                .note
                .unwrap()
                .contains("matches the deny list (`.env.*`)")
        );

        let shaped = shape(
            &call("Bash", json!({"command": "cat .env"})),
            Some(&json!({"stdout": "PASSWORD=hunter2"})),
            None,
            None,
            &policy(&s),
        );
        assert_eq!(shaped.response, None);
        assert!(shaped.note.unwrap().starts_with("output withheld"));
    }

    #[test]
    fn large_values_are_cut_to_fit_with_head_and_tail() {
        let mut notes = Vec::new();
        let big = format!("HEAD{}TAIL", "x".repeat(100_000));
        let value = json!({"stdout": big, "stderr": "short"});
        let original = value.to_string().len();
        let text = cap_json(value, 4096, "response", &mut notes);
        assert!(text.len() <= 4096, "{}", text.len());
        let v: Value = serde_json::from_str(&text).unwrap();
        let out = v["stdout"].as_str().unwrap();
        assert!(out.starts_with("HEAD") && out.ends_with("TAIL"));
        assert!(out.contains("bytes cut]"));
        assert_eq!(v["stderr"], "short");
        assert_eq!(
            notes,
            [format!(
                "response cut from {original} to {} bytes",
                text.len()
            )]
        );

        let mut notes = Vec::new();
        let many: Vec<Value> = (0..5000).map(|i| json!(i)).collect();
        let text = cap_json(Value::Array(many), 1000, "response", &mut notes);
        assert!(text.len() <= 1000);
        assert!(serde_json::from_str::<Value>(&text).is_ok());
    }

    #[test]
    fn cutting_respects_characters() {
        let s = "é".repeat(1000);
        let cut = cut_middle(&s, 101);
        assert!(cut.contains("bytes cut"));
        assert!(cut.len() < 200);
    }

    #[test]
    fn bash_priority_follows_what_the_command_does() {
        assert_eq!(
            priority("Bash", &json!({"command": "ls"}), false),
            Priority::Low
        );
        assert_eq!(
            priority("Bash", &json!({"command": "ls"}), true),
            Priority::High
        );
        assert_eq!(priority("Read", &json!({}), false), Priority::Low);
        assert_eq!(priority("mcp__x__y", &json!({}), false), Priority::Normal);
    }

    #[test]
    fn files_a_shell_command_showed_are_read() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().to_string_lossy().into_owned();
        std::fs::create_dir(tmp.path().join("src")).unwrap();
        std::fs::write(tmp.path().join("src/lib.rs"), "fn x() {}\n").unwrap();
        let file = joined(&root, &["src", "lib.rs"]);
        for command in [
            "sed -n '1,40p' src/lib.rs",
            "rg -n 'fn x' src/lib.rs src",
            "cd src && cat lib.rs",
        ] {
            let (read, modified) = files_touched("Bash", &json!({"command": command}), Some(&root));
            assert_eq!((read, modified), (vec![file.clone()], vec![]), "{command}");
        }
        for command in ["cat src/lib.rs > copy.rs", "cat src/missing.rs", "ls src"] {
            let (read, _) = files_touched("Bash", &json!({"command": command}), Some(&root));
            assert!(read.is_empty(), "{command}: {read:?}");
        }
    }

    #[test]
    fn codex_patches_name_their_files() {
        let patch = "*** Begin Patch\n*** Update File: src/a.rs\n@@\n-x\n+y\n*** Add File: b.rs\n*** End Patch";
        let (_, modified) = files_touched("apply_patch", &json!({"command": patch}), Some("/r"));
        assert_eq!(
            modified,
            [joined("/r", &["src", "a.rs"]), joined("/r", &["b.rs"])]
        );
    }

    /// `base` joined with `parts` by this OS's separator.
    fn joined(base: &str, parts: &[&str]) -> String {
        let mut path = std::path::PathBuf::from(base);
        path.extend(parts);
        path.to_string_lossy().into_owned()
    }
}
