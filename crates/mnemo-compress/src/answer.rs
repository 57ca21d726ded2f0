//! Turning a model's answer into drafts we are willing to store.
//!
//! The answer arrives as a tool input (already JSON) or as text that should
//! hold JSON (perhaps in a code fence, after some prose, with keys spelled
//! differently). [`json_in_text`] finds the object; [`interpret`] keeps what
//! is valid: types limited to the vocabulary, lengths clamped, empty titles
//! dropped, file paths mapped back to the batch's own (absolute) paths and
//! invented ones dropped. What it had to fix is reported, not hidden. If no
//! observation survives, the answer is unusable and the caller falls back.

use serde_json::{Map, Value};

use crate::event;
use crate::text::{self, one_line};
use crate::{ObservationDraft, SummaryDraft, TurnBatch};

const MAX_OBSERVATIONS: usize = 10;
const MAX_FACTS: usize = 12;
const MAX_CONCEPTS: usize = 8;
const MAX_FILES: usize = 50;

/// What survived of an answer.
#[derive(Debug, Default)]
pub(crate) struct Parsed {
    pub observations: Vec<ObservationDraft>,
    pub summary: Option<SummaryDraft>,
    /// What was dropped or fixed, one short line each.
    pub repairs: Vec<String>,
}

/// The JSON value in a free-text answer: the whole text, a fenced block, or
/// the first balanced `{…}` that parses.
pub(crate) fn json_in_text(text: &str) -> Option<Value> {
    let t = text.trim().trim_start_matches('\u{feff}');
    if let Ok(v) = serde_json::from_str::<Value>(t)
        && (v.is_object() || v.is_array())
    {
        return Some(v);
    }
    // Fenced blocks: ```json … ``` (or bare ```).
    let mut rest = t;
    while let Some(open) = rest.find("```") {
        let after = &rest[open + 3..];
        let body_start = after.find('\n').map_or(0, |n| n + 1);
        let Some(close) = after[body_start..].find("```") else {
            break;
        };
        let body = after[body_start..body_start + close].trim();
        if let Ok(v) = serde_json::from_str::<Value>(body)
            && (v.is_object() || v.is_array())
        {
            return Some(v);
        }
        rest = &after[body_start + close + 3..];
    }
    // The first balanced object that parses, scanning a bounded number of
    // candidates (prose may contain stray braces).
    let bytes = t.as_bytes();
    let mut tries = 0;
    let mut from = 0;
    while let Some(off) = t[from..].find('{') {
        let start = from + off;
        tries += 1;
        if tries > 16 {
            break;
        }
        if let Some(end) = matching_brace(bytes, start)
            && let Ok(v) = serde_json::from_str::<Value>(&t[start..=end])
        {
            return Some(v);
        }
        from = start + 1;
    }
    None
}

/// The index of the `}` closing the `{` at `start`, skipping strings.
fn matching_brace(bytes: &[u8], start: usize) -> Option<usize> {
    let mut depth = 0usize;
    let mut in_string = false;
    let mut escaped = false;
    for (i, &b) in bytes.iter().enumerate().skip(start) {
        if in_string {
            match b {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'{' => depth += 1,
            b'}' => {
                depth = depth.checked_sub(1)?;
                if depth == 0 {
                    return Some(i);
                }
            }
            _ => {}
        }
    }
    None
}

fn get<'v>(obj: &'v Map<String, Value>, keys: &[&str]) -> Option<&'v Value> {
    keys.iter()
        .find_map(|k| obj.get(*k))
        .filter(|v| !v.is_null())
}

/// A field as text: strings as is, lists joined with `; `, numbers written.
fn text_field(v: Option<&Value>) -> String {
    match v {
        Some(Value::String(s)) => s.trim().to_owned(),
        Some(Value::Array(items)) => items
            .iter()
            .map(|i| text_field(Some(i)))
            .filter(|s| !s.is_empty())
            .collect::<Vec<_>>()
            .join("; "),
        Some(Value::Number(n)) => n.to_string(),
        Some(Value::Bool(b)) => b.to_string(),
        _ => String::new(),
    }
}

/// A field as a list of strings: a list, or a text split at line breaks
/// and bullets.
fn list_field(v: Option<&Value>) -> Vec<String> {
    match v {
        Some(Value::Array(items)) => items
            .iter()
            .map(|i| text_field(Some(i)))
            .filter(|s| !s.is_empty())
            .collect(),
        Some(Value::String(s)) => s
            .lines()
            .map(|l| l.trim().trim_start_matches(['-', '*', '•']).trim())
            .filter(|l| !l.is_empty())
            .map(str::to_owned)
            .collect(),
        _ => Vec::new(),
    }
}

/// The vocabulary word for a type the model wrote, if it is recognisable.
pub(crate) fn normalize_kind(raw: &str) -> Option<&'static str> {
    let k = raw.trim().to_ascii_lowercase().replace(['_', '-'], " ");
    Some(match k.as_str() {
        "bugfix" | "bug fix" | "fix" | "bug" | "hotfix" | "fixed" => "bugfix",
        "feature" | "feat" | "new feature" | "enhancement" | "addition" | "add"
        | "implementation" => "feature",
        "refactor" | "refactoring" | "cleanup" | "clean up" | "restructure" | "rename" => {
            "refactor"
        }
        "change" | "changed" | "update" | "modification" | "chore" | "config" | "configuration"
        | "docs" | "documentation" | "test" | "tests" | "build" | "style" | "maintenance" => {
            "change"
        }
        "discovery" | "finding" | "investigation" | "research" | "learning" | "insight"
        | "observation" | "analysis" | "exploration" | "info" | "note" => "discovery",
        "decision" | "choice" | "plan" | "design" | "architecture" | "tradeoff" => "decision",
        _ => return None,
    })
}

/// Paths the batch knows, for mapping the model's paths back.
struct KnownPaths<'a> {
    root: &'a str,
    known: Vec<String>,
    rendered: &'a str,
}

impl KnownPaths<'_> {
    /// The batch's own path for `p`, or None if the model made it up.
    fn map(&self, p: &str) -> Option<String> {
        let p = p.trim().trim_matches('`').trim();
        // `auth.py:12` names a line of auth.py.
        let p = match p.rsplit_once(':') {
            Some((file, line)) if !line.is_empty() && line.chars().all(|c| c.is_ascii_digit()) => {
                file
            }
            _ => p,
        };
        if p.is_empty() || p.len() > 500 {
            return None;
        }
        let rel = p.trim_start_matches("./");
        let abs = if p.starts_with('/') || self.root.is_empty() {
            p.to_owned()
        } else {
            format!("{}/{rel}", self.root.trim_end_matches('/'))
        };
        if self.known.contains(&abs) {
            return Some(abs);
        }
        let suffix = format!("/{rel}");
        if let Some(k) = self.known.iter().find(|k| k.ends_with(&suffix)) {
            return Some(k.clone());
        }
        // Named in the data (a command line, a search result).
        let path_like = rel.len() >= 3 && (rel.contains('.') || rel.contains('/'));
        (path_like && self.rendered.contains(rel)).then_some(abs)
    }

    fn map_all(&self, list: Vec<String>, repairs: &mut Vec<String>) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for p in list {
            match self.map(&p) {
                Some(m) if !out.contains(&m) => {
                    if out.len() < MAX_FILES {
                        out.push(m);
                    }
                }
                Some(_) => {}
                None => repairs.push(format!(
                    "dropped a path not in the batch: {}",
                    one_line(&p, 80)
                )),
            }
        }
        out
    }
}

/// Reads an answer (tool input or text) into observations and a summary.
/// `rendered` is the text the model was given: paths it names are accepted.
pub(crate) fn interpret(
    answer: Value,
    batch: &TurnBatch,
    rendered: &str,
) -> Result<Parsed, String> {
    let mut repairs = Vec::new();
    let answer = unwrap(answer, &mut repairs)?;
    let (list, summary_value) = answer_parts(&answer)?;
    let known = KnownPaths {
        root: &batch.project_root,
        known: known_paths(batch),
        rendered,
    };
    let observations = observations_in(list, &known, &mut repairs);
    if observations.is_empty() && !batch.events.is_empty() {
        return Err(if repairs.is_empty() {
            "the answer holds no observation".into()
        } else {
            format!(
                "no usable observation in the answer ({})",
                repairs.join("; ")
            )
        });
    }
    let summary = if batch.turn_complete {
        turn_summary(summary_value, &mut repairs)
    } else {
        None
    };
    Ok(Parsed {
        observations,
        summary,
        repairs,
    })
}

/// The observations of an answer (a list, one object, or the answer
/// itself when it is one) and its summary, under the names models use.
fn answer_parts(answer: &Value) -> Result<(Vec<Value>, Option<&Value>), String> {
    let obj = match answer {
        Value::Array(items) => return Ok((items.clone(), None)),
        Value::Object(obj) => obj,
        _ => return Err("the answer is not a JSON object".into()),
    };
    let summary = get(obj, &["summary", "turn_summary", "session_summary"]);
    let list = get(
        obj,
        &[
            "observations",
            "obs",
            "memories",
            "items",
            "records",
            "entries",
        ],
    );
    match list {
        Some(Value::Array(items)) => Ok((items.clone(), summary)),
        Some(one @ Value::Object(_)) => Ok((vec![one.clone()], summary)),
        Some(_) => Err("`observations` is not a list".into()),
        None if obj.contains_key("title") => Ok((vec![answer.clone()], None)),
        None => Ok((Vec::new(), summary)),
    }
}

/// The usable observations of `list`, at most [`MAX_OBSERVATIONS`]; what
/// was dropped goes to `repairs`.
fn observations_in(
    list: Vec<Value>,
    known: &KnownPaths<'_>,
    repairs: &mut Vec<String>,
) -> Vec<ObservationDraft> {
    let mut observations = Vec::new();
    for item in list {
        let Value::Object(obj) = item else {
            repairs.push("dropped an observation that is not an object".into());
            continue;
        };
        if observations.len() >= MAX_OBSERVATIONS {
            repairs.push(format!("kept the first {MAX_OBSERVATIONS} observations"));
            break;
        }
        if let Some(o) = observation(&obj, known, repairs) {
            observations.push(o);
        }
    }
    observations
}

/// A complete turn's summary: an object, or a plain sentence read as what
/// was completed.
fn turn_summary(value: Option<&Value>, repairs: &mut Vec<String>) -> Option<SummaryDraft> {
    match value {
        Some(Value::Object(s)) => summary(s),
        Some(Value::String(s)) if !s.trim().is_empty() => Some(SummaryDraft {
            completed: text::clamp_sentences(s.trim(), 1000),
            ..Default::default()
        }),
        _ => {
            repairs.push("the answer has no summary".into());
            None
        }
    }
}

/// Removes wrappers models put around the object: a JSON string holding it,
/// `{"record_memory": {...}}`, `{"arguments": "..."}`.
fn unwrap(mut answer: Value, repairs: &mut Vec<String>) -> Result<Value, String> {
    for _ in 0..3 {
        match answer {
            Value::String(s) => {
                answer = json_in_text(&s).ok_or("the answer holds no JSON object")?;
                repairs.push("the answer was JSON inside a string".into());
            }
            Value::Object(ref obj)
                if obj.len() == 1
                    && !obj.contains_key("observations")
                    && !obj.contains_key("title") =>
            {
                let inner = obj.values().next().cloned().unwrap_or(Value::Null);
                if inner.is_object() || inner.is_string() {
                    answer = inner;
                } else {
                    return Ok(answer);
                }
            }
            other => return Ok(other),
        }
    }
    Ok(answer)
}

fn observation(
    obj: &Map<String, Value>,
    known: &KnownPaths<'_>,
    repairs: &mut Vec<String>,
) -> Option<ObservationDraft> {
    let title = one_line(&text_field(get(obj, &["title", "name", "headline"])), 120);
    if title.is_empty() {
        repairs.push("dropped an observation without a title".into());
        return None;
    }
    let kind = observation_kind(obj, repairs);
    let files_read = known.map_all(
        list_field(get(
            obj,
            &["files_read", "filesRead", "read_files", "files_viewed"],
        )),
        repairs,
    );
    let files_modified = known.map_all(
        list_field(get(
            obj,
            &[
                "files_modified",
                "filesModified",
                "modified_files",
                "files_changed",
                "files_edited",
                "files_written",
            ],
        )),
        repairs,
    );
    Some(ObservationDraft {
        kind: kind.to_owned(),
        title,
        subtitle: one_line(
            &text_field(get(obj, &["subtitle", "sub_title", "subheading"])),
            200,
        ),
        narrative: text::clamp_sentences(
            &text_field(get(
                obj,
                &[
                    "narrative",
                    "description",
                    "details",
                    "text",
                    "body",
                    "content",
                ],
            )),
            2000,
        ),
        facts: facts(obj),
        concepts: concepts(obj),
        files_read,
        files_modified,
    })
}

/// The observation's type from the vocabulary; an unknown one is read as
/// `change`.
fn observation_kind(obj: &Map<String, Value>, repairs: &mut Vec<String>) -> &'static str {
    let raw_kind = text_field(get(obj, &["type", "kind", "category", "obs_type"]));
    match normalize_kind(&raw_kind) {
        Some(k) => k,
        None => {
            repairs.push(format!(
                "unknown type `{}` read as change",
                one_line(&raw_kind, 40)
            ));
            "change"
        }
    }
}

/// The observation's facts, one line each, at most [`MAX_FACTS`].
fn facts(obj: &Map<String, Value>) -> Vec<String> {
    let mut facts: Vec<String> = list_field(get(obj, &["facts", "key_facts", "fact"]))
        .into_iter()
        .map(|f| one_line(&f, 300))
        .filter(|f| !f.is_empty())
        .collect();
    facts.dedup();
    facts.truncate(MAX_FACTS);
    facts
}

/// The observation's concepts: lowercase, each once, at most
/// [`MAX_CONCEPTS`].
fn concepts(obj: &Map<String, Value>) -> Vec<String> {
    let mut concepts: Vec<String> = Vec::new();
    for c in list_field(get(obj, &["concepts", "tags", "keywords", "topics"])) {
        let c = one_line(&c.to_lowercase(), 40);
        if !c.is_empty() && !concepts.contains(&c) && concepts.len() < MAX_CONCEPTS {
            concepts.push(c);
        }
    }
    concepts
}

fn summary(s: &Map<String, Value>) -> Option<SummaryDraft> {
    let f = |keys: &[&str]| text::clamp_sentences(&text_field(get(s, keys)), 1000);
    let d = SummaryDraft {
        request: f(&["request", "user_request", "goal", "ask"]),
        investigated: f(&["investigated", "investigation", "explored"]),
        learned: f(&["learned", "learnings", "findings", "learnt"]),
        completed: f(&["completed", "done", "accomplished", "changes"]),
        next_steps: f(&["next_steps", "nextSteps", "next", "next_step", "todo"]),
        notes: f(&["notes", "note", "remarks"]),
    };
    (d != SummaryDraft::default()).then_some(d)
}

/// Every path the batch's events name.
fn known_paths(batch: &TurnBatch) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for (i, e) in batch.events.iter().enumerate() {
        for p in e.files_read.iter().chain(&e.files_modified) {
            if !out.contains(p) {
                out.push(p.clone());
            }
        }
        if let Some(p) = event::read(e, i, &batch.project_root).path()
            && !p.is_empty()
            && !out.iter().any(|o| o == p)
        {
            out.push(p.to_owned());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::BatchEvent;
    use serde_json::json;

    fn batch() -> TurnBatch {
        TurnBatch {
            project_root: "/p".into(),
            turn_complete: true,
            events: vec![BatchEvent {
                tool_name: "Edit".into(),
                input: json!({"file_path": "/p/src/a.rs"}),
                files_modified: vec!["/p/src/a.rs".into()],
                ..Default::default()
            }],
            ..Default::default()
        }
    }

    #[test]
    fn finds_json_in_prose_and_fences() {
        let v =
            json_in_text("Sure! Here it is:\n```json\n{\"observations\": []}\n```\nBye").unwrap();
        assert_eq!(v, json!({"observations": []}));
        let v = json_in_text("note {not json} then {\"a\": \"}\"} end").unwrap();
        assert_eq!(v, json!({"a": "}"}));
        assert!(json_in_text("no json at all").is_none());
        assert!(json_in_text("{\"cut\": \"in the mid").is_none());
    }

    #[test]
    fn keeps_the_valid_and_repairs_the_rest() {
        let answer = json!({
            "observations": [
                {"type": "Bug Fix", "title": "Fixed parse", "facts": "- one\n- two",
                 "files_modified": ["src/a.rs", "/etc/passwd", "a.rs:12"], "tags": ["Rust", "rust"]},
                {"type": "feature", "title": "   "},
                "garbage",
                {"kind": "weird", "title": "x".repeat(500)}
            ],
            "summary": {"request": "fix it", "nextSteps": ["a", "b"]}
        });
        let p = interpret(answer, &batch(), "").unwrap();
        assert_eq!(p.observations.len(), 2);
        let o = &p.observations[0];
        assert_eq!(o.kind, "bugfix");
        assert_eq!(o.facts, ["one", "two"]);
        assert_eq!(o.files_modified, ["/p/src/a.rs"]);
        assert_eq!(o.concepts, ["rust"]);
        assert_eq!(p.observations[1].kind, "change");
        assert!(p.observations[1].title.len() <= 120);
        let s = p.summary.unwrap();
        assert_eq!(s.request, "fix it");
        assert_eq!(s.next_steps, "a; b");
        assert!(p.repairs.iter().any(|r| r.contains("/etc/passwd")));
    }

    #[test]
    fn nothing_valid_is_an_error() {
        assert!(interpret(json!({"observations": [{"title": ""}]}), &batch(), "").is_err());
        assert!(interpret(json!({"observations": "lots"}), &batch(), "").is_err());
        assert!(interpret(json!(42), &batch(), "").is_err());
        assert!(interpret(json!({}), &batch(), "").is_err());
    }

    #[test]
    fn unwraps_common_wrappers() {
        let inner = json!({"observations": [{"type": "change", "title": "T"}]});
        let p = interpret(json!({"record_memory": inner.clone()}), &batch(), "").unwrap();
        assert_eq!(p.observations[0].title, "T");
        let p = interpret(Value::String(inner.to_string()), &batch(), "").unwrap();
        assert_eq!(p.observations.len(), 1);
    }

    mod properties {
        use super::*;
        use proptest::prelude::*;
        use serde_json::Map;

        /// Keys a model's answer uses (and misuses), and others.
        fn key() -> impl Strategy<Value = String> {
            prop_oneof![
                Just("observations".to_owned()),
                Just("summary".to_owned()),
                Just("type".to_owned()),
                Just("title".to_owned()),
                Just("subtitle".to_owned()),
                Just("narrative".to_owned()),
                Just("facts".to_owned()),
                Just("concepts".to_owned()),
                Just("files_modified".to_owned()),
                Just("files_read".to_owned()),
                Just("request".to_owned()),
                Just("completed".to_owned()),
                "[a-z_]{1,10}",
            ]
        }

        fn answer() -> impl Strategy<Value = Value> {
            let leaf = prop_oneof![
                Just(Value::Null),
                any::<bool>().prop_map(Value::from),
                any::<i64>().prop_map(Value::from),
                ".{0,300}".prop_map(Value::from),
                prop_oneof![
                    Just("bugfix"),
                    Just("Bug Fix"),
                    Just("decision"),
                    Just("src/a.rs"),
                    Just("/etc/passwd"),
                    Just("../../a.rs")
                ]
                .prop_map(Value::from),
            ];
            leaf.prop_recursive(4, 64, 8, |inner| {
                prop_oneof![
                    prop::collection::vec(inner.clone(), 0..12).prop_map(Value::Array),
                    prop::collection::btree_map(key(), inner, 0..8)
                        .prop_map(|m| Value::Object(m.into_iter().collect::<Map<_, _>>())),
                ]
            })
        }

        proptest! {
            #![proptest_config(ProptestConfig::with_cases(500))]

            /// Whatever a model answers, what comes out is valid memory: a
            /// type of the vocabulary, a one-line title of at most 120
            /// bytes, bounded lists, and only the batch's own files.
            #[test]
            fn any_answer_becomes_valid_memory_or_an_error(
                value in answer(),
                as_text in any::<bool>(),
            ) {
                let value = if as_text { Value::String(format!("Sure:\n{value}")) } else { value };
                if let Ok(p) = interpret(value, &batch(), "") {
                    prop_assert!(p.observations.len() <= MAX_OBSERVATIONS);
                    for o in &p.observations {
                        prop_assert!(crate::VOCABULARY.contains(&o.kind.as_str()), "{o:?}");
                        prop_assert!(!o.title.trim().is_empty() && o.title.len() <= 120, "{o:?}");
                        prop_assert!(!o.title.contains('\n'), "{o:?}");
                        prop_assert!(o.facts.len() <= MAX_FACTS && o.concepts.len() <= MAX_CONCEPTS);
                        for f in o.files_modified.iter().chain(&o.files_read) {
                            prop_assert_eq!(f.as_str(), "/p/src/a.rs");
                        }
                    }
                }
            }
        }
    }
}
