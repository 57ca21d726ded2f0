//! Stage of the offline compressor that keeps the concrete values a change
//! set, read from the lines a Write or Edit added: constants and settings
//! (`NAME = literal`, `key: literal`, `const NAME: T = literal`, `@name
//! literal`), route and path strings (`"/projects/:id/review"`),
//! environment variables set or read (`FOO=1`, `getenv("FOO")`,
//! `process.env.FOO`, `${FOO:-}`), name patterns (`"worker-#{id}"`,
//! `"job-{}"`) and the messages a program prints (`messages`).
//! Recognised by syntax form alone, whatever the language or project; trivial
//! literals, secrets and test files are left out, and only the most
//! distinctive few are kept.

use mnemo_core::privacy::secrets::{key_names_secret, redact_text};

use crate::code;
use crate::event::Action;

/// At most this many values told per file.
pub(super) const MAX_VALUES: usize = 6;
/// Longest literal quoted in a fact.
const LITERAL_MAX: usize = 60;
/// Lines longer than this are data, not settings.
const LINE_MAX: usize = 240;

/// Type names that may sit between a declared name and its `=`
/// (`var Port int = 8080`).
#[rustfmt::skip]
const TYPE_WORDS: &[&str] = &[
    "int", "int8", "int16", "int32", "int64", "uint", "uint8", "uint16", "uint32", "uint64",
    "float32", "float64", "string", "bool", "byte", "rune", "float", "double", "long", "short",
    "str", "number", "boolean", "u8", "u16", "u32", "u64", "usize", "i8", "i16", "i32", "i64",
    "isize", "f32", "f64", "char",
];

/// Keywords that read like a key before `:` or `=` (`do: "…"`).
const KEYWORDS: &[&str] = &["do", "else", "then", "return", "in", "if", "yield", "await"];

/// Calls and lookups whose argument names an environment variable read.
#[rustfmt::skip]
const ENV_READS: &[&str] = &[
    "getenv(", "Getenv(", "LookupEnv(", "get_env(", "fetch_env(", "fetch_env!(", "env::var(",
    "env::var_os(", "environ[", "environ.get(", "process.env.", "process.env[", "ENV[",
    "ENV.fetch(", "Environment.GetEnvironmentVariable(",
];

/// Calls whose argument names an environment variable set.
#[rustfmt::skip]
const ENV_SETS: &[&str] = &[
    "Setenv(", "setenv(", "put_env(", "putenv(", "set_var(", "SetEnvironmentVariable(",
];

/// One concrete value a change set.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Value {
    /// A name given a literal: `DEFAULT_TTL = 120`, `port: 4000`.
    Setting { name: String, literal: String },
    /// A string shaped like a route or a path.
    Path(String),
    /// An environment variable the code sets (with its value when shown).
    EnvSet { name: String, value: Option<String> },
    /// An environment variable the code reads.
    EnvRead(String),
    /// A variable a shell line reads with a default (`${PORT:-4000}`).
    EnvDefault { name: String, default: String },
    /// A format string naming things (`"worker-#{id}"`).
    Pattern(String),
    /// A sentence the program prints (a message, warning or error).
    Message(String),
}

impl Value {
    /// The value as a short fact about `file`; None when it holds a secret.
    pub(super) fn fact(&self, file: &str) -> Option<String> {
        self.said().map(|said| format!("{said} in {file}"))
    }

    /// What the value sets, without its file; None when it holds a secret.
    fn said(&self) -> Option<String> {
        let said = match self {
            Value::Setting { name, literal } => format!("sets `{name} = {literal}`"),
            Value::Path(p) => format!("route/path \"{p}\""),
            Value::EnvSet { name, value: None } => format!("sets env var `{name}`"),
            Value::EnvSet {
                name,
                value: Some(v),
            } => format!("sets env var `{name}={v}`"),
            Value::EnvRead(name) => format!("reads env var `{name}`"),
            Value::EnvDefault { name, default } => {
                format!("reads env var `{name}` (default `{default}`)")
            }
            Value::Pattern(p) => format!("name pattern \"{p}\""),
            Value::Message(m) => format!("message \"{m}\""),
        };
        match redact_text(&said) {
            std::borrow::Cow::Borrowed(_) => Some(said),
            std::borrow::Cow::Owned(_) => None,
        }
    }

    /// Higher for values a reader is likelier to ask for.
    fn weight(&self) -> u8 {
        match self {
            Value::EnvSet { .. } | Value::EnvRead(_) | Value::Path(_) => 4,
            Value::EnvDefault { .. } => 5,
            Value::Setting { literal, .. } if names_something(literal) => 4,
            Value::Setting { name, literal } => {
                let constant = name.starts_with('@') || is_env_name(name);
                let number = !literal.starts_with(['"', '\'']);
                1 + u8::from(constant) + u8::from(number)
            }
            Value::Pattern(_) => 2,
            Value::Message(_) => 3,
        }
    }
}

/// At most this many messages told per file (a message reworded over a
/// turn leaves several versions; the last ones are kept).
const MAX_MESSAGES: usize = 2;

/// Up to `max` of `values` as facts about `file`, most distinctive first.
pub(super) fn facts(values: &[Value], file: &str, max: usize) -> Vec<String> {
    ranked(values, max)
        .into_iter()
        .filter_map(|v| v.fact(file))
        .collect()
}

/// Up to `max` of `values` told in one fact about `file` ("sets `A = 1`;
/// reads env var `B` in f.rs"), for a change of several files where each
/// file has one line; None when the file set none.
pub(super) fn joined_fact(values: &[Value], file: &str, max: usize) -> Option<String> {
    let said: Vec<String> = ranked(values, max)
        .into_iter()
        .filter_map(Value::said)
        .collect();
    (!said.is_empty()).then(|| format!("{} in {file}", said.join("; ")))
}

/// Up to `max` values, most distinctive first; of the messages, the last
/// [`MAX_MESSAGES`] set.
fn ranked(values: &[Value], max: usize) -> Vec<&Value> {
    let messages: Vec<&Value> = values
        .iter()
        .filter(|v| matches!(v, Value::Message(_)))
        .collect();
    let old = messages.len().saturating_sub(MAX_MESSAGES);
    let mut ranked: Vec<(usize, &Value)> = values
        .iter()
        .filter(|v| !messages[..old].iter().any(|m| std::ptr::eq(*m, *v)))
        .enumerate()
        .collect();
    ranked.sort_by_key(|(i, v)| {
        let message = matches!(v, Value::Message(_));
        let order = if message { usize::MAX - i } else { *i };
        (std::cmp::Reverse(v.weight()), !message, order)
    });
    ranked.into_iter().map(|(_, v)| v).take(max).collect()
}

/// The values the lines a change added set in `path`, most distinctive
/// first (none for tests, prose, styles, lock files or a change that added
/// nothing).
pub(super) fn of_change(path: &str, action: &Action) -> Vec<Value> {
    let lock_file = path.ends_with(".lock") || path.ends_with("-lock.json");
    if code::is_test_path(path)
        || lock_file
        || matches!(code::language_of(path), Some("docs" | "css"))
    {
        return Vec::new();
    }
    // `NAME=value` sets a variable in shell and settings files; in code it
    // is an assignment like any other.
    let shell_like = matches!(
        code::language_of(path),
        Some("shell" | "config" | "docker" | "make") | None
    );
    let mut out: Vec<Value> = Vec::new();
    for line in added_lines(action) {
        let assigned = shell_assignment(line.trim());
        for v in in_line(&line) {
            let shell_set = assigned.as_ref() == Some(&v);
            if !out.contains(&v) && (shell_like || !shell_set) {
                out.push(v);
            }
        }
    }
    out.sort_by_key(|v| std::cmp::Reverse(v.weight()));
    out
}

/// The lines a Write or Edit added (a new file's whole content).
fn added_lines(action: &Action) -> Vec<String> {
    let plus = |patch: &[String]| -> Vec<String> {
        patch
            .iter()
            .filter_map(|l| l.strip_prefix('+'))
            .filter(|l| !l.starts_with("++"))
            .map(str::to_owned)
            .collect()
    };
    match action {
        Action::Write { patch, .. } if !patch.is_empty() => plus(patch),
        Action::Write {
            content: Some(c), ..
        } => c.lines().map(str::to_owned).collect(),
        Action::Edit { edits, patch, .. } if edits.is_empty() => plus(patch),
        Action::Edit { edits, .. } => edits
            .iter()
            .flat_map(|p| {
                p.new
                    .lines()
                    .filter(|l| !p.old.lines().any(|o| o == *l))
                    .map(str::to_owned)
                    .collect::<Vec<_>>()
            })
            .collect(),
        _ => Vec::new(),
    }
}

/// The values one added line sets.
pub(super) fn in_line(line: &str) -> Vec<Value> {
    let t = line.trim();
    if is_comment(t) {
        return Vec::new();
    }
    let messages = super::messages::in_line(t).into_iter().map(Value::Message);
    if t.len() > LINE_MAX {
        return messages.collect();
    }
    let mut out = env_values(t);
    if let Some(v) = shell_assignment(t) {
        out.push(v);
    }
    let settings = settings(t);
    let used: Vec<String> = settings.iter().map(|(_, lit)| lit.clone()).collect();
    for (name, literal) in settings {
        if out.iter().all(|v| !names(v, &name)) {
            out.push(Value::Setting { name, literal });
        }
    }
    for s in quoted_strings(t) {
        if used.iter().any(|u| u.get(1..u.len() - 1) == Some(s)) {
            continue;
        }
        if is_route(s) {
            out.push(Value::Path(s.to_owned()));
        } else if is_name_pattern(s) {
            out.push(Value::Pattern(s.to_owned()));
        }
    }
    out.extend(messages);
    out
}

/// True when `v` is about the variable `name` already.
fn names(v: &Value, name: &str) -> bool {
    matches!(v, Value::EnvSet { name: n, .. } | Value::EnvRead(n) if n == name)
}

fn is_comment(t: &str) -> bool {
    (t.starts_with('#') && !t.starts_with("#{"))
        || ["//", "/*", "*", "--", "<!--", ";"]
            .iter()
            .any(|p| t.starts_with(p))
}

// ---------------------------------------------------------------------------
// Environment variables
// ---------------------------------------------------------------------------

/// Variables read or set through the usual calls, and upper-case names
/// quoted on a line about the environment (`env: [{"APP_MODE", "1"}]`).
fn env_values(t: &str) -> Vec<Value> {
    let mut out = Vec::new();
    for (markers, read) in [(ENV_READS, true), (ENV_SETS, false)] {
        for m in markers {
            for (at, _) in t.match_indices(m) {
                if let Some(name) = env_name_at(&t[at + m.len()..]) {
                    out.push(if read {
                        Value::EnvRead(name)
                    } else {
                        Value::EnvSet { name, value: None }
                    });
                }
            }
        }
    }
    out.extend(shell_defaults(t));
    if out.is_empty() {
        let env_line = t.to_ascii_lowercase().contains("env");
        for s in quoted_strings(t) {
            let pair_key = t.contains(&format!("{{\"{s}\",")) || t.contains(&format!("(\"{s}\","));
            if is_env_name(s) && s.contains('_') && (env_line || pair_key) {
                out.push(Value::EnvSet {
                    name: s.to_owned(),
                    value: pair_value(t, s),
                });
            }
        }
    }
    out
}

/// The quoted value paired with `name` (`{"NAME", "1"}` gives `1`).
fn pair_value(t: &str, name: &str) -> Option<String> {
    let key = format!("\"{name}\",");
    let rest = t[t.find(&key)? + key.len()..].trim_start();
    let rest = rest.strip_prefix('"')?;
    let value = &rest[..rest.find('"')?];
    let shown = !value.is_empty() && value.len() <= LITERAL_MAX && !key_names_secret(name);
    shown.then(|| value.to_owned())
}

/// `${NAME:-default}`, `${NAME-default}`, `${NAME:=default}`: a variable
/// read with its default; `${NAME:-}`: a variable read.
fn shell_defaults(t: &str) -> Vec<Value> {
    let mut out = Vec::new();
    for (at, _) in t.match_indices("${") {
        let rest = &t[at + 2..];
        let Some(close) = rest.find('}') else { break };
        let inner = &rest[..close];
        let Some(split) = inner.find([':', '-', '=']) else {
            continue;
        };
        let name = &inner[..split];
        let default = inner[split..].trim_start_matches([':', '-', '=']);
        let shown = !default.is_empty() && default.len() <= LITERAL_MAX && !default.contains('$');
        if is_env_name(name) && shown {
            out.push(Value::EnvDefault {
                name: name.to_owned(),
                default: default.to_owned(),
            });
        } else if is_env_name(name) && default.is_empty() {
            out.push(Value::EnvRead(name.to_owned()));
        }
    }
    out
}

/// The variable name at the start of `rest` (quoted or bare).
fn env_name_at(rest: &str) -> Option<String> {
    let rest = rest.trim_start_matches(['"', '\'', ':']);
    let end = rest
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .unwrap_or(rest.len());
    let name = &rest[..end];
    is_env_name(name).then(|| name.to_owned())
}

/// `FOO`, `APP_PORT2`: upper case, digits and underscores, two or more.
fn is_env_name(s: &str) -> bool {
    s.len() >= 2
        && s.starts_with(|c: char| c.is_ascii_uppercase())
        && s.chars()
            .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
}

/// `FOO_BAR=1`, `export FOO=bar`, `- FOO=bar` (a compose list): a variable
/// set the shell's way, with its value.
fn shell_assignment(t: &str) -> Option<Value> {
    let t = t.trim_start_matches("- ");
    let t = t.strip_prefix("export ").unwrap_or(t);
    let (name, rest) = t.split_once('=')?;
    if !is_env_name(name) || rest.starts_with('=') || key_names_secret(name) {
        return None;
    }
    let value = rest.split_whitespace().next().unwrap_or("");
    let value = value.trim_matches(['"', '\'']);
    let shown = (!value.is_empty() && value.len() <= LITERAL_MAX && !value.contains('$'))
        .then(|| value.to_owned());
    Some(Value::EnvSet {
        name: name.to_owned(),
        value: shown,
    })
}

// ---------------------------------------------------------------------------
// Settings
// ---------------------------------------------------------------------------

/// Every `name = literal`, `name: literal` and `@name literal` on the line,
/// as (name, literal), without trivial values and secrets.
fn settings(t: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    if let Some(attr) = module_attribute(t) {
        out.push(attr);
    }
    let bytes = t.as_bytes();
    let mut quote: Option<u8> = None;
    for (i, &b) in bytes.iter().enumerate() {
        match (quote, b) {
            (Some(q), _) if b == q && bytes.get(i.wrapping_sub(1)) != Some(&b'\\') => quote = None,
            (Some(_), _) => {}
            (None, b'"' | b'`') => quote = Some(b),
            (None, b'=') if is_assignment(bytes, i) => {
                let name = name_before_eq(&t[..i]);
                out.extend(name.zip(literal_at(&t[i + 1..])));
            }
            (None, b':') if bytes.get(i + 1) == Some(&b' ') => {
                let name = name_before_colon(&t[..i]);
                out.extend(name.zip(literal_at(&t[i + 1..])));
            }
            _ => {}
        }
    }
    out.retain(|(name, lit)| {
        !KEYWORDS.contains(&name.as_str())
            && !key_names_secret(name)
            && !is_trivial(lit)
            && !is_message(lit)
    });
    out
}

/// `@grace 10 * 60` (an Elixir module attribute, a Ruby-like setting).
fn module_attribute(t: &str) -> Option<(String, String)> {
    let rest = t.strip_prefix('@')?;
    let (name, value) = rest.split_once(' ')?;
    let ident = !name.is_empty() && name.chars().all(|c| c.is_alphanumeric() || c == '_');
    let literal = literal_at(value)?;
    ident.then(|| (format!("@{name}"), literal))
}

/// An `=` that assigns (not `==`, `=>`, `<=`, `!=`, `+=`, …).
fn is_assignment(bytes: &[u8], i: usize) -> bool {
    let next = bytes.get(i + 1).copied().unwrap_or(b' ');
    let prev = if i == 0 { b' ' } else { bytes[i - 1] };
    !matches!(next, b'=' | b'>' | b'~') && !b"=!<>+-*/%&|^~".contains(&prev)
}

/// The name assigned before an `=`: the identifier right before it, or the
/// one before a type (`const X: u64 =`, `var Port int =`).
fn name_before_eq(lhs: &str) -> Option<String> {
    let lhs = lhs.trim_end().trim_end_matches(':').trim_end();
    let (name, before) = last_ident(lhs)?;
    let before = before.trim_end();
    if let Some(typed) = before.strip_suffix(':') {
        return last_ident(typed.trim_end()).map(|(n, _)| n.to_owned());
    }
    if TYPE_WORDS.contains(&name) {
        return last_ident(before).map(|(n, _)| n.to_owned());
    }
    Some(name.to_owned())
}

/// The key right before a `:` (`port:`, `"port":`), not a type annotation's
/// name (its value is a type, so it is dropped as no literal).
fn name_before_colon(lhs: &str) -> Option<String> {
    let lhs = lhs.trim_end_matches(['"', '\'']);
    last_ident(lhs).map(|(name, _)| name.to_owned())
}

fn is_ident_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_' || c == '.' || c == '-'
}

/// The identifier at the end of `s` (dotted: `config.port`) and what is
/// before it.
fn last_ident(s: &str) -> Option<(&str, &str)> {
    let start = s.trim_end_matches(is_ident_char).len();
    let name = s[start..].trim_start_matches(['.', '-']);
    let first_ok = name.starts_with(|c: char| c.is_alphabetic() || c == '_');
    (first_ok && name.len() >= 2).then(|| (name, &s[..s.len() - name.len()]))
}

/// The literal that starts `rest` when it is all the value: a quoted
/// string, a number or arithmetic on numbers (`10 * 60`, `5 * time.Second`),
/// or a constructor of one (`Duration::from_secs(120)`).
fn literal_at(rest: &str) -> Option<String> {
    let rest = rest.trim_start();
    if let Some(q) = rest.chars().next().filter(|c| matches!(c, '"' | '\'')) {
        let close = rest[1..].find(q)? + 1;
        let lit = &rest[..=close];
        return (ends_value(&rest[close + 1..]) && lit.len() <= LITERAL_MAX)
            .then(|| lit.to_owned());
    }
    let end = rest.find([',', ';', '}', ']', '#']).unwrap_or(rest.len());
    let lit = rest[..end].trim().trim_end_matches("//").trim();
    let lit = lit.split(" //").next().unwrap_or(lit).trim();
    let lit = trim_unopened(lit);
    let number = lit.starts_with(|c: char| c.is_ascii_digit())
        || (lit.starts_with('-') && lit[1..].starts_with(|c: char| c.is_ascii_digit()));
    let constructed = lit.ends_with(')')
        && lit
            .rsplit_once('(')
            .is_some_and(|(_, arg)| arg.starts_with(|c: char| c.is_ascii_digit()));
    let shape = lit
        .chars()
        .all(|c| c.is_alphanumeric() || " _.*+-/():".contains(c));
    let balanced = lit.matches('(').count() == lit.matches(')').count();
    ((number || constructed) && shape && balanced && lit.len() <= LITERAL_MAX)
        .then(|| lit.to_owned())
}

/// `s` without closing brackets and colons that close something opened
/// before it (`30.5):` in `def f(t=30.5):`).
fn trim_unopened(mut s: &str) -> &str {
    while s.ends_with([')', ':']) && s.matches(')').count() > s.matches('(').count()
        || s.ends_with(':')
    {
        s = s[..s.len() - 1].trim_end();
    }
    s
}

/// True when what follows a quoted literal ends the value.
fn ends_value(after: &str) -> bool {
    let a = after.trim_start();
    a.is_empty() || a.starts_with([',', ';', ')', ']', '}', '#']) || a.starts_with("//")
}

/// A quoted sentence (three words or more): a message, not a setting.
fn is_message(lit: &str) -> bool {
    lit.starts_with(['"', '\'']) && lit.split_whitespace().count() >= 3
}

/// Values that say nothing on their own.
fn is_trivial(lit: &str) -> bool {
    let bare = lit.trim_matches(['"', '\'']);
    bare.is_empty() || matches!(bare, "0" | "1" | "-1" | "0.0" | "1.0")
}

// ---------------------------------------------------------------------------
// Strings: routes and name patterns
// ---------------------------------------------------------------------------

/// The contents of the quoted strings on a line (`"…"`, `` `…` ``, and
/// `'…'` when the quote starts a word).
fn quoted_strings(t: &str) -> Vec<&str> {
    let bytes = t.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        let opens = matches!(b, b'"' | b'`')
            || (b == b'\'' && (i == 0 || !bytes[i - 1].is_ascii_alphanumeric()));
        if !opens {
            i += 1;
            continue;
        }
        match t[i + 1..].find(b as char) {
            Some(len) => {
                out.push(&t[i + 1..i + 1 + len]);
                i += len + 2;
            }
            None => break,
        }
    }
    out
}

/// A quoted literal shaped like a route or a name pattern.
fn names_something(literal: &str) -> bool {
    let bare = literal.trim_matches(['"', '\'']);
    literal.starts_with(['"', '\'']) && (is_route(bare) || is_name_pattern(bare))
}

/// `/projects/:id/review`, `/api/v1/users/{id}`: a rooted path of two or
/// more characters with a word in it and no spaces.
fn is_route(s: &str) -> bool {
    s.len() >= 2
        && s.len() <= LITERAL_MAX
        && s.starts_with('/')
        && !s.starts_with("//")
        && s.chars().any(|c| c.is_alphabetic())
        && s.chars()
            .all(|c| c.is_alphanumeric() || "/_-.:{}#$*~@".contains(c))
}

/// `worker-#{id}`, `job-{}`, `cache:%s`: a short string with no spaces that
/// interpolates something into literal words.
fn is_name_pattern(s: &str) -> bool {
    let placeholder = ["#{", "${", "{}", "%s", "%d", "%v"]
        .iter()
        .any(|p| s.contains(p))
        || (s.contains('{') && s.contains('}'));
    let literal_word = strip_placeholders(s)
        .chars()
        .filter(|c| c.is_alphabetic())
        .count()
        >= 2;
    (3..=LITERAL_MAX).contains(&s.len())
        && !s.contains(char::is_whitespace)
        && placeholder
        && literal_word
        && s.contains(['-', '_', ':', '.', '/'])
}

/// `s` without its `{…}` and `%x` placeholders.
fn strip_placeholders(s: &str) -> String {
    let mut out = String::new();
    let mut depth = 0usize;
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '{' => depth += 1,
            '}' => depth = depth.saturating_sub(1),
            '%' if depth == 0 => {
                chars.next();
            }
            '#' | '$' if chars.peek() == Some(&'{') => {}
            _ if depth == 0 => out.push(c),
            _ => {}
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn setting(name: &str, literal: &str) -> Value {
        Value::Setting {
            name: name.into(),
            literal: literal.into(),
        }
    }

    fn set_env(name: &str, value: Option<&str>) -> Value {
        Value::EnvSet {
            name: name.into(),
            value: value.map(Into::into),
        }
    }

    #[test]
    fn rust_constants_and_env() {
        assert_eq!(
            in_line("pub const DEFAULT_TTL: u64 = 120;"),
            [setting("DEFAULT_TTL", "120")]
        );
        assert_eq!(
            in_line("const GRACE: Duration = Duration::from_secs(600);"),
            [setting("GRACE", "Duration::from_secs(600)")]
        );
        assert_eq!(
            in_line(r#"let home = std::env::var("APP_HOME")?;"#),
            [Value::EnvRead("APP_HOME".into())]
        );
        assert_eq!(in_line("let n = 1;"), []);
        assert_eq!(in_line("if a == 3 && b >= 4 {"), []);
    }

    #[test]
    fn go_declarations_and_getenv() {
        assert_eq!(in_line("var Port int = 8080"), [setting("Port", "8080")]);
        assert_eq!(
            in_line("timeout := 5 * time.Second"),
            [setting("timeout", "5 * time.Second")]
        );
        assert_eq!(
            in_line(r#"addr := os.Getenv("LISTEN_ADDR")"#),
            [Value::EnvRead("LISTEN_ADDR".into())]
        );
        assert_eq!(
            in_line(r#"os.Setenv("WORKER_MODE", "batch")"#),
            [set_env("WORKER_MODE", None)]
        );
    }

    #[test]
    fn python_keyword_defaults_and_environ() {
        assert_eq!(
            in_line("def connect(host, retries=5, timeout=30.5):"),
            [setting("retries", "5"), setting("timeout", "30.5")]
        );
        assert_eq!(
            in_line(r#"level = os.environ.get("LOG_LEVEL", "info")"#),
            [Value::EnvRead("LOG_LEVEL".into())]
        );
        assert_eq!(
            in_line(r#"name = f"backup-{stamp}.tar""#),
            [Value::Pattern("backup-{stamp}.tar".into())]
        );
    }

    #[test]
    fn elixir_attributes_keywords_env_and_patterns() {
        assert_eq!(in_line("@grace 10 * 60"), [setting("@grace", "10 * 60")]);
        assert_eq!(
            in_line("opts = [ttl: 120, port: 4000, verbose: true]"),
            [setting("ttl", "120"), setting("port", "4000")]
        );
        assert_eq!(
            in_line(r#"System.get_env("RELAY_URL")"#),
            [Value::EnvRead("RELAY_URL".into())]
        );
        assert_eq!(
            in_line(r#"env: [{"RUNNER_SESSION_ID", id}],"#),
            [set_env("RUNNER_SESSION_ID", None)]
        );
        assert_eq!(
            in_line(r#"session = "runner-#{project.id}""#),
            [setting("session", r#""runner-#{project.id}""#)]
        );
        assert_eq!(
            in_line(r#"Tmux.new_session("runner-#{id}", dir)"#),
            [Value::Pattern("runner-#{id}".into())]
        );
        assert_eq!(
            in_line(r#"live "/projects/:project_id/review", ReviewLive"#),
            [Value::Path("/projects/:project_id/review".into())]
        );
    }

    #[test]
    fn typescript_routes_env_and_objects() {
        assert_eq!(
            in_line(r#"router.get("/api/v1/users/{id}", handler);"#),
            [Value::Path("/api/v1/users/{id}".into())]
        );
        assert_eq!(
            in_line("const port = process.env.PORT ?? 3000;"),
            [Value::EnvRead("PORT".into())]
        );
        assert_eq!(
            in_line("export const config = { retries: 3, timeoutMs: 2500 };"),
            [setting("retries", "3"), setting("timeoutMs", "2500")]
        );
        assert_eq!(
            in_line("const key = `cache:${user}`;"),
            [Value::Pattern("cache:${user}".into())]
        );
    }

    #[test]
    fn shell_assignments_and_exports() {
        assert_eq!(
            in_line("export QUEUE_NAME=ingest"),
            [set_env("QUEUE_NAME", Some("ingest"))]
        );
        assert_eq!(
            in_line("APP_DEBUG=1 ./run.sh"),
            [set_env("APP_DEBUG", Some("1"))]
        );
        assert_eq!(in_line("# PORT=9000 is the default"), []);
    }

    #[test]
    fn shell_defaults_and_env_pairs() {
        assert_eq!(
            in_line(r#"PORT="${APP_PORT:-4100}""#),
            [
                Value::EnvDefault {
                    name: "APP_PORT".into(),
                    default: "4100".into()
                },
                set_env("PORT", None)
            ]
        );
        assert_eq!(
            in_line(r#"{"WORKER_QUEUE", "fast"},"#),
            [set_env("WORKER_QUEUE", Some("fast"))]
        );
        assert_eq!(
            in_line(r#"if [ "${JOB_MODE:-}" != "1" ]; then"#),
            [Value::EnvRead("JOB_MODE".into())]
        );
        assert_eq!(in_line(r#"{"Not_Env", 1}"#), []);
        assert_eq!(in_line(r#"echo "${HOME}""#), []);
    }

    #[test]
    fn yaml_and_toml_settings() {
        assert_eq!(in_line("port: 1100"), [setting("port", "1100")]);
        assert_eq!(
            in_line("  - CACHE_DIR=/var/cache/app"),
            [set_env("CACHE_DIR", Some("/var/cache/app"))]
        );
        assert_eq!(
            in_line(r#"timeout = "30s""#),
            [setting("timeout", r#""30s""#)]
        );
        assert_eq!(in_line("enabled = true"), []);
        assert_eq!(in_line("image: postgres:16"), []);
    }

    #[test]
    fn secrets_and_trivial_values_are_left_out() {
        assert_eq!(in_line(r#"API_KEY = "abcd1234efgh""#), []);
        assert_eq!(in_line("export DB_PASSWORD=hunter22"), []);
        assert_eq!(in_line(r#"name = """#), []);
        assert_eq!(in_line("count = 0"), []);
        let token = Value::Setting {
            name: "header".into(),
            literal: "\"ghp_0123456789abcdefghijABCDEFGHIJ012345\"".into(),
        };
        assert_eq!(token.fact("a.rs"), None);
    }

    #[test]
    fn messages_are_not_patterns() {
        assert_eq!(in_line(r#"println!("{}: {}", a, b);"#), []);
        assert_eq!(in_line(r#"log("failed to open {path}")"#), []);
    }

    #[test]
    fn a_change_tells_values_most_distinctive_first_and_skips_tests() {
        let action = Action::Write {
            path: "lib/store.ex".into(),
            content: Some("@name \"store\"\n@ttl 120\n".into()),
            created: Some(true),
            patch: Vec::new(),
        };
        let values = of_change("lib/store.ex", &action);
        assert_eq!(
            values,
            [setting("@ttl", "120"), setting("@name", "\"store\"")]
        );
        assert_eq!(
            values[0].fact("lib/store.ex").as_deref(),
            Some("sets `@ttl = 120` in lib/store.ex")
        );
        assert!(of_change("test/store_test.exs", &action).is_empty());
        assert!(of_change("assets/app.css", &action).is_empty());
        let launcher = Action::Edit {
            path: "lib/launch.ex".into(),
            edits: Vec::new(),
            patch: vec![
                "+    name = \"job-#{id}\"".into(),
                "+    {\"JOB_MODE\", \"1\"},".into(),
                "+    {\"JOB_TOKEN\", token},".into(),
            ],
            deleted: false,
        };
        let values = of_change("lib/launch.ex", &launcher);
        assert_eq!(values[0], setting("name", "\"job-#{id}\""), "{values:?}");
        // A change of several files tells several values of each in one line.
        assert_eq!(
            joined_fact(&values, "lib/launch.ex", 3).as_deref(),
            Some(
                "sets `name = \"job-#{id}\"`; sets env var `JOB_MODE=1`; sets env var `JOB_TOKEN` in lib/launch.ex"
            )
        );
    }

    #[test]
    fn the_last_versions_of_a_reworded_message_are_kept() {
        let values: Vec<Value> = [
            "First try at the text",
            "Second try at the text",
            "Third try at the text",
        ]
        .iter()
        .map(|m| Value::Message((*m).to_owned()))
        .chain([setting("@ttl", "120")])
        .collect();
        assert_eq!(
            facts(&values, "a.go", 6),
            [
                "message \"Third try at the text\" in a.go",
                "message \"Second try at the text\" in a.go",
                "sets `@ttl = 120` in a.go",
            ]
        );
    }
}
