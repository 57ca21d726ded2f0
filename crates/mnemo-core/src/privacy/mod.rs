//! Privacy at the edge: what may be stored at all.
//!
//! Everything captured passes through a [`Sanitizer`] before it reaches the
//! database, the spool file or a log line, so a secret never lands on disk and
//! can never be recovered from the data directory:
//!
//! 1. `<private>…</private>` and our own injected-context tags
//!    (`<mnemo-context>`, and `<claude-mem-context>` for users coming from
//!    claude-mem) are cut out, tags included (blanks and attributes allowed
//!    inside the brackets; an unclosed tag runs to the end of its field, a
//!    stray `</private>` hides what precedes it in its field);
//! 2. secrets (provider tokens, private keys, URL credentials, secret
//!    assignments, ...) are replaced by `[REDACTED:<kind>]` markers
//!    ([`secrets`]), in JSON values and keys alike; an array of strings (the
//!    lines of a patch) is read as one text; an identifier holding a secret
//!    gets a stable stand-in;
//! 3. files on the deny list (`.env*`, `*.pem`, `id_*`, ...) are recognised so
//!    that capture keeps only the fact that they were touched, and the lines
//!    of search output that come from them are withheld.

pub mod secrets;
#[cfg(test)]
mod test_rng;

use std::borrow::Cow;

use serde_json::Value;

use crate::config::{PrivacyConfig, glob_match};

/// Tags whose whole content is dropped. Matching is case-insensitive.
const PRIVATE_TAGS: &[&str] = &["private", "mnemo-context", "claude-mem-context"];

/// Marker left where a JSON field whose name says "secret" had its value.
pub const REDACTED_FIELD: &str = "[REDACTED:secret-field]";

/// Applies the privacy rules of one configuration.
#[derive(Debug, Clone)]
pub struct Sanitizer {
    deny_files: Vec<String>,
    redact_secrets: bool,
}

impl Sanitizer {
    pub fn new(config: &PrivacyConfig) -> Sanitizer {
        Sanitizer {
            deny_files: config.deny_files.clone(),
            redact_secrets: config.redact_secrets,
        }
    }

    /// Private spans removed, secrets redacted, surrounding white space tidied.
    pub fn text<'a>(&self, text: &'a str) -> Cow<'a, str> {
        let stripped = TagStripper::default().strip(text);
        if !self.redact_secrets {
            return stripped;
        }
        match stripped {
            Cow::Borrowed(b) => secrets::redact_text(b),
            Cow::Owned(o) => Cow::Owned(secrets::redact_text(&o).into_owned()),
        }
    }

    /// Sanitizes every string of a JSON value in place, and replaces the value
    /// of any field whose name says it holds a secret (`password`, `api_key`,
    /// `GITHUB_TOKEN`, ...).
    pub fn value(&self, value: &mut Value) {
        match value {
            Value::String(s) => {
                if let Cow::Owned(clean) = self.text(s) {
                    *s = clean;
                }
            }
            Value::Array(items) if items.len() > 1 && items.iter().all(Value::is_string) => {
                self.lines(items);
            }
            Value::Array(items) => {
                // One stripper across the elements: a private block may span
                // lines that a tool reports as separate strings (a patch).
                let mut stripper = TagStripper::default();
                // Likewise a private key block: its BEGIN line is redacted
                // to the end of its element, and the body lines that follow
                // in later elements must go too, up to the END line.
                let mut in_key_block = false;
                for item in items {
                    match item {
                        Value::String(s) => {
                            let stripped = stripper.strip(s).into_owned();
                            if self.redact_secrets && in_key_block {
                                in_key_block = !stripped.contains("-----END");
                                *s = KEY_BLOCK_LINE.to_owned();
                                continue;
                            }
                            in_key_block = self.redact_secrets && opens_key_block(&stripped);
                            *s = if self.redact_secrets {
                                secrets::redact_text(&stripped).into_owned()
                            } else {
                                stripped
                            };
                        }
                        other => self.value(other),
                    }
                }
            }
            Value::Object(map) => {
                self.rename_keys(map);
                for (key, field) in map.iter_mut() {
                    if self.redact_secrets && secrets::key_names_secret(key) && holds_literal(field)
                    {
                        *field = Value::String(REDACTED_FIELD.to_owned());
                    } else {
                        self.value(field);
                    }
                }
            }
            Value::Null | Value::Bool(_) | Value::Number(_) => {}
        }
    }

    /// An array of strings, sanitized as the lines of one text: a tool
    /// reports a patch or a file as such an array, and a private span, a key
    /// block or a YAML block scalar may run over several of its elements.
    /// Patch lines are read without their ` `/`+`/`-` prefix, which is kept.
    fn lines(&self, items: &mut [Value]) {
        let mut stripper = TagStripper::default();
        let mut lines: Vec<String> = items
            .iter()
            .map(|item| {
                stripper
                    .strip(item.as_str().unwrap_or_default())
                    .into_owned()
            })
            .collect();
        if self.redact_secrets {
            redact_lines(&mut lines);
        }
        for (item, line) in items.iter_mut().zip(lines) {
            *item = Value::String(line);
        }
    }

    /// Keys are text too: a key that holds a secret (a token used as a
    /// map key, `"DB_PASSWORD=x": true`) is renamed to its sanitized form.
    fn rename_keys(&self, map: &mut serde_json::Map<String, Value>) {
        let renamed: Vec<(String, String)> = map
            .keys()
            .filter_map(|k| match self.text(k) {
                Cow::Owned(clean) => Some((k.clone(), clean)),
                Cow::Borrowed(_) => None,
            })
            .collect();
        for (old, mut new) in renamed {
            let Some(field) = map.remove(&old) else {
                continue;
            };
            // Two keys that sanitize alike both stay.
            while map.contains_key(&new) {
                new.push('\'');
            }
            map.insert(new, field);
        }
    }

    /// An identifier (a tool use id, a prompt id) as it may be stored: as it
    /// is, or, when it holds a secret or private text, a stable stand-in
    /// derived from it, so that two different ids stay different.
    pub fn identifier<'a>(&self, id: &'a str) -> Cow<'a, str> {
        match self.text(id) {
            Cow::Borrowed(_) => Cow::Borrowed(id),
            Cow::Owned(_) => {
                use std::hash::{Hash, Hasher};
                let mut h = std::collections::hash_map::DefaultHasher::new();
                id.hash(&mut h);
                Cow::Owned(format!("redacted-{:016x}", h.finish()))
            }
        }
    }

    /// `text` without the lines of a search's output that come from a
    /// deny-listed file (`.env:3:KEY=value`, `config/.env-4-KEY=value`, as
    /// grep and ripgrep print them), and how many lines went.
    pub fn without_denied_lines<'a>(&self, text: &'a str) -> (Cow<'a, str>, usize) {
        let denied =
            |line: &str| search_hit_file(line).is_some_and(|file| self.denied_file(file).is_some());
        let dropped = text.lines().filter(|l| denied(l)).count();
        if dropped == 0 {
            return (Cow::Borrowed(text), 0);
        }
        let mut kept = String::with_capacity(text.len());
        for line in text.split_inclusive('\n') {
            if !denied(line) {
                kept.push_str(line);
            }
        }
        (Cow::Owned(kept), dropped)
    }

    /// The deny-list pattern that `path` matches, if any.
    pub fn denied_file(&self, path: &str) -> Option<&str> {
        let path = path.replace('\\', "/");
        let path = path.trim_end_matches('/');
        let name = path.rsplit('/').next().unwrap_or(path);
        self.deny_files
            .iter()
            .find(|pattern| {
                if pattern.contains('/') {
                    glob_match(pattern, path) || glob_match(&format!("*/{pattern}"), path)
                } else {
                    glob_match(pattern, name)
                }
            })
            .map(String::as_str)
    }

    /// The first deny-listed file named anywhere in a shell command line
    /// (`cat .env`, `source ~/.aws/credentials`), with the pattern it matched.
    pub fn denied_file_in_command<'a>(&self, command: &'a str) -> Option<(&'a str, &str)> {
        command
            .split(|c: char| {
                c.is_whitespace() || matches!(c, ';' | '|' | '&' | '<' | '>' | '(' | ')')
            })
            .map(|w| w.trim_matches(|c| matches!(c, '"' | '\'' | '`')))
            .filter(|w| !w.is_empty() && !w.starts_with('-'))
            .find_map(|w| self.denied_file(w).map(|p| (w, p)))
    }
}

/// Redacts `lines` as one text joined by line breaks, each line keeping
/// what of it no secret covers (a line inside a secret becomes its marker).
fn redact_lines(lines: &mut [String]) {
    let patch = lines
        .iter()
        .all(|l| l.starts_with([' ', '+', '-']) && !l.starts_with("--"));
    let prefix = usize::from(patch);
    let mut joined = String::new();
    let mut starts = Vec::with_capacity(lines.len());
    for line in lines.iter() {
        starts.push(joined.len());
        joined.push_str(&line[prefix..]);
        joined.push('\n');
    }
    let spans = secrets::secret_spans(&joined);
    if spans.is_empty() {
        return;
    }
    let mut next = 0; // first span that may still overlap a line
    for (line, &start) in lines.iter_mut().zip(&starts) {
        let end = start + line.len() - prefix;
        while next < spans.len() && spans[next].0.end <= start {
            next += 1;
        }
        let mut out = String::new();
        let mut from = start;
        for (range, kind) in spans[next..].iter().take_while(|(r, _)| r.start < end) {
            let (s, e) = (range.start.max(start), range.end.min(end));
            if s >= e && !(range.start < start && range.end > end) {
                continue;
            }
            out.push_str(&joined[from..s]);
            out.push_str("[REDACTED:");
            out.push_str(kind);
            out.push(']');
            from = e.max(s);
        }
        if from == start && out.is_empty() {
            continue;
        }
        out.push_str(&joined[from..end]);
        *line = format!("{}{out}", &line[..prefix]);
    }
}

/// The file a line of search output comes from: what precedes its first
/// `:` (`path:12:text`, `path:text`) or its first `-<line>-` (a context
/// line, `path-12-text`). `None` for a line that names no file.
fn search_hit_file(line: &str) -> Option<&str> {
    let b = line.as_bytes();
    let colon = line.find(':');
    let context = (1..colon.unwrap_or(b.len())).find(|&k| {
        b[k] == b'-' && {
            let digits = b[k + 1..].iter().take_while(|c| c.is_ascii_digit()).count();
            digits > 0 && b.get(k + 1 + digits) == Some(&b'-')
        }
    });
    let end = match (colon, context) {
        (Some(c), Some(x)) => c.min(x),
        (c, x) => c.or(x)?,
    };
    let file = &line[..end];
    // `name: text` is often no search hit at all (`credentials: ok`): a
    // name without a line number must look like a path.
    let numbered = context == Some(end)
        || b[end + 1..]
            .iter()
            .take_while(|c| c.is_ascii_digit())
            .count()
            > 0
            && b[end + 1..].iter().find(|c| !c.is_ascii_digit()) == Some(&b':');
    let pathlike = file.contains('/') || file.starts_with('.');
    (!file.is_empty() && !file.contains(char::is_whitespace) && (numbered || pathlike))
        .then_some(file)
}

/// What replaces each line of a private key block split across elements.
const KEY_BLOCK_LINE: &str = "[REDACTED:private-key]";

/// True when `text` begins a private key block that it does not end.
fn opens_key_block(text: &str) -> bool {
    let Some(begin) = text.rfind("-----BEGIN") else {
        return false;
    };
    let rest = &text[begin..];
    let header_end = rest.find('\n').unwrap_or(rest.len());
    rest[..header_end].contains("PRIVATE KEY") && !rest.contains("-----END")
}

/// A non-empty scalar: the kind of value a secret field actually holds.
fn holds_literal(value: &Value) -> bool {
    match value {
        Value::String(s) => !s.trim().is_empty(),
        Value::Number(_) => true,
        _ => false,
    }
}

/// True when the text held something and nothing is left once private spans
/// are removed: such a prompt is not stored at all.
pub fn is_entirely_private(original: &str, sanitized: &str) -> bool {
    !original.trim().is_empty() && sanitized.trim().is_empty()
}

/// Removes private spans from a sequence of strings, carrying an open tag from
/// one string to the next.
#[derive(Debug, Default)]
struct TagStripper {
    /// The tag currently open, and how deeply it is nested.
    open: Option<(&'static str, u32)>,
}

impl TagStripper {
    fn strip<'a>(&mut self, text: &'a str) -> Cow<'a, str> {
        if self.open.is_none() && !text.contains('<') {
            return Cow::Borrowed(text);
        }
        let bytes = text.as_bytes();
        let mut out = String::new();
        let mut kept_from = 0; // start of the current public run
        // Starting inside an open span drops this string's head.
        let mut changed = self.open.is_some();
        let mut i = 0;
        while i < bytes.len() {
            if bytes[i] != b'<' {
                i += 1;
                continue;
            }
            let Some((tag, closing, len)) = tag_at(&bytes[i..]) else {
                i += 1;
                continue;
            };
            match self.open {
                None if !closing => {
                    push_trimmed_seam(&mut out, &text[kept_from..i]);
                    self.open = Some((tag, 1));
                    changed = true;
                }
                None if tag != "private" => {
                    // A stray closing context tag: drop the tag.
                    push_trimmed_seam(&mut out, &text[kept_from..i]);
                    kept_from = i + len;
                    changed = true;
                }
                None => {
                    // A closing `</private>` whose opening we never saw (it
                    // was in another field): everything before it is private.
                    out.clear();
                    kept_from = i + len;
                    while kept_from < bytes.len() && matches!(bytes[kept_from], b' ' | b'\t') {
                        kept_from += 1;
                    }
                    changed = true;
                }
                Some((open_tag, depth)) if open_tag == tag => {
                    if closing {
                        if depth == 1 {
                            self.open = None;
                            kept_from = i + len;
                        } else {
                            self.open = Some((open_tag, depth - 1));
                        }
                    } else {
                        self.open = Some((open_tag, depth + 1));
                    }
                }
                Some(_) => {}
            }
            i += len;
        }
        if self.open.is_some() {
            // Unclosed: everything from the opening tag on is private.
            return Cow::Owned(out);
        }
        if !changed {
            return Cow::Borrowed(text);
        }
        push_trimmed_seam(&mut out, &text[kept_from..]);
        Cow::Owned(out)
    }
}

/// Appends `piece`, avoiding a doubled space where a private span was cut out
/// ("fix <private>x</private> now" becomes "fix now").
fn push_trimmed_seam(out: &mut String, piece: &str) {
    if out.ends_with(char::is_whitespace) {
        out.push_str(piece.trim_start_matches([' ', '\t']));
    } else {
        out.push_str(piece);
    }
}

/// Longest tag looked at: `<private reason="...">` and the like.
const TAG_MAX: usize = 256;

/// Recognises an opening or closing tag for one of [`PRIVATE_TAGS`] at the
/// start of `bytes`, in any case, with blanks inside the brackets and
/// attributes (`< private >`, `</private >`, `<private reason="x">`);
/// returns the tag, whether it closes, and its length.
fn tag_at(bytes: &[u8]) -> Option<(&'static str, bool, usize)> {
    let bytes = &bytes[..bytes.len().min(TAG_MAX)];
    let blanks = |from: usize| {
        from + bytes[from.min(bytes.len())..]
            .iter()
            .take_while(|c| matches!(c, b' ' | b'\t'))
            .count()
    };
    let mut j = blanks(1);
    let closing = bytes.get(j) == Some(&b'/');
    if closing {
        j = blanks(j + 1);
    }
    let tag = PRIVATE_TAGS.iter().find(|tag| {
        bytes.len() > j + tag.len() && bytes[j..j + tag.len()].eq_ignore_ascii_case(tag.as_bytes())
    })?;
    j += tag.len();
    match bytes[j] {
        b'>' => Some((tag, closing, j + 1)),
        // Attributes: up to the `>` (a `<` or a line break first: no tag).
        b' ' | b'\t' => {
            let k = bytes[j..]
                .iter()
                .position(|&c| matches!(c, b'>' | b'<' | b'\n'))?;
            (bytes[j + k] == b'>').then_some((tag, closing, j + k + 1))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn sanitizer() -> Sanitizer {
        Sanitizer::new(&PrivacyConfig::default())
    }

    #[test]
    fn a_key_block_split_across_patch_lines_is_redacted_whole() {
        let body = "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7";
        let mut patch = serde_json::json!({"structuredPatch": [{"lines": [
            " KEY = \"\"\"",
            format!("+-----BEGIN {}PRIVATE KEY-----", ""),
            format!("+{body}"),
            format!("+{body}xyz"),
            "+-----END PRIVATE KEY-----",
            "+\"\"\"",
            " def main():",
        ]}]});
        sanitizer().value(&mut patch);
        let text = patch.to_string();
        assert!(!text.contains(body), "{text}");
        let lines = &patch["structuredPatch"][0]["lines"];
        assert_eq!(lines[2], "+[REDACTED:private-key]");
        assert_eq!(lines[4], "+[REDACTED:private-key]");
        assert_eq!(lines[5], "+\"\"\"");
        assert_eq!(lines[6], " def main():");
    }

    #[test]
    fn private_spans_are_cut_out() {
        let s = sanitizer();
        assert_eq!(
            s.text("fix login <private>my password is hunter2</private> please"),
            "fix login please"
        );
        assert_eq!(s.text("<PRIVATE>all</Private>"), "");
        assert_eq!(
            s.text("a <private>b <private>c</private> d</private> e"),
            "a e"
        );
        assert_eq!(s.text("keep <private>cut to the end"), "keep ");
        assert_eq!(s.text("stray </private> tag"), "tag");
        assert_eq!(s.text("stray </mnemo-context> tag"), "stray tag");
        assert_eq!(
            s.text("a < private >b< /private > c <private reason=\"x\">d</private > e"),
            "a c e"
        );
        assert_eq!(
            s.text("<PrivateRoute path=\"/\" /> <private-repo> <privateer>"),
            "<PrivateRoute path=\"/\" /> <private-repo> <privateer>"
        );
        assert_eq!(
            s.text("x <private\nnot a tag> y"),
            "x <private\nnot a tag> y"
        );
        assert_eq!(
            s.text("x <mnemo-context>old memory</mnemo-context> y <claude-mem-context>z</claude-mem-context>"),
            "x y "
        );
        assert!(matches!(s.text("no tags <b>here</b>"), Cow::Borrowed(_)));
    }

    #[test]
    fn fully_private_prompts_are_detected() {
        let s = sanitizer();
        let p = "  <private>everything</private> ";
        assert!(is_entirely_private(p, &s.text(p)));
        assert!(!is_entirely_private("", ""));
        assert!(!is_entirely_private(
            "hi <private>x</private>",
            &s.text("hi <private>x</private>")
        ));
    }

    #[test]
    fn values_are_walked_and_arrays_carry_open_tags() {
        let s = sanitizer();
        let mut v = json!({
            "command": "echo <private>secret-word</private> done",
            "lines": [" a", "+<private>", "+hidden line", "+</private>", " b"],
            "nested": {"password": "hunter2", "password_hint": "", "count": 3},
        });
        s.value(&mut v);
        assert_eq!(v["command"], "echo done");
        assert_eq!(v["lines"], json!([" a", "+", "", "", " b"]));
        assert_eq!(v["nested"]["password"], REDACTED_FIELD);
        assert_eq!(v["nested"]["count"], 3);
        assert!(!v.to_string().contains("hidden line"));
        assert!(!v.to_string().contains("secret-word"));
    }

    #[test]
    fn keys_ids_and_search_hits_are_sanitized() {
        let s = sanitizer();
        let token = format!("ghp_{}", "rESQedUStPKR0CsTy4Qwb8DwkNhFdnXsiVpz");
        let mut v =
            json!({"env": {token.clone(): 1, "DB_PASSWORD=Birch-Canyon-14": true, "plain": 2}});
        s.value(&mut v);
        let env = v["env"].as_object().unwrap();
        assert!(env.contains_key("[REDACTED:github-token]"), "{v}");
        assert!(
            env.contains_key("DB_PASSWORD=[REDACTED:secret-assignment]"),
            "{v}"
        );
        assert_eq!(env["plain"], 2);

        // Ids that held a secret stay distinct from each other, and stable.
        let a = s.identifier(&format!("{token}-1")).into_owned();
        let b = s.identifier(&format!("{token}-2")).into_owned();
        assert!(!a.contains(&token) && a != b, "{a} {b}");
        assert_eq!(s.identifier(&format!("{token}-1")), a);
        assert!(matches!(
            s.identifier("toolu_01AbC"),
            Cow::Borrowed("toolu_01AbC")
        ));

        let out = ".env:3:SMTP=relay-x\nsrc/a.py:12:x = 1\nconfig/.env.prod-4-KEY=v\nplain line\nsrc/b.rs-7-ctx\n";
        let (kept, dropped) = s.without_denied_lines(out);
        assert_eq!(kept, "src/a.py:12:x = 1\nplain line\nsrc/b.rs-7-ctx\n");
        assert_eq!(dropped, 2);
        assert!(matches!(
            s.without_denied_lines("src/a.py:1:x\n").0,
            Cow::Borrowed(_)
        ));
        // Not search hits: a `name: value` line, an error message.
        let status = "credentials: ok\ncat: .env: No such file or directory\n";
        assert_eq!(s.without_denied_lines(status).1, 0);
        assert_eq!(s.without_denied_lines("credentials:7:aws_key = x\n").1, 1);
    }

    #[test]
    fn deny_list_matches_names_and_path_suffixes() {
        let s = sanitizer();
        assert_eq!(s.denied_file("/p/.env"), Some(".env"));
        assert_eq!(s.denied_file("/p/.env.production"), Some(".env.*"));
        assert_eq!(s.denied_file("C:\\keys\\server.pem"), Some("*.pem"));
        assert_eq!(
            s.denied_file("/home/u/.ssh/id_ed25519"),
            Some("id_ed25519*")
        );
        assert_eq!(
            s.denied_file("/home/u/.aws/credentials"),
            Some("credentials")
        );
        assert_eq!(s.denied_file("/home/u/.kube/config"), Some(".kube/config"));
        assert_eq!(s.denied_file("/p/src/environment.rs"), None);
        assert_eq!(s.denied_file("/p/config"), None);
        assert_eq!(
            s.denied_file_in_command("cat .env | grep KEY"),
            Some((".env", ".env"))
        );
        assert_eq!(
            s.denied_file_in_command("source \"$HOME/.envrc\" && make"),
            Some(("$HOME/.envrc", ".envrc"))
        );
        assert_eq!(s.denied_file_in_command("cargo test --workspace"), None);
    }
}

/// The secret corpus (`tests/fixtures/secrets.toml`) through the sanitizer
/// alone: every format caught, every near-miss kept, redaction idempotent,
/// also when the cases are mixed together and cut at random places.
#[cfg(test)]
mod corpus_tests {
    use super::*;

    struct Case {
        name: String,
        context: String,
        text: String,
        secret: String,
        catch: bool,
    }

    fn corpus() -> Vec<Case> {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/secrets.toml");
        let doc: toml::Table = toml::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
        let field = |c: &toml::Value, k: &str| c[k].as_str().unwrap().to_owned();
        doc["case"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| Case {
                name: field(c, "name"),
                context: field(c, "context"),
                text: field(c, "text"),
                secret: field(c, "secret"),
                catch: c
                    .get("catch")
                    .and_then(toml::Value::as_bool)
                    .unwrap_or(true),
            })
            // The deny list of search output is applied by capture.
            .filter(|c| !c.context.starts_with("grep"))
            .collect()
    }

    /// The case's text sanitized as capture would hold it, serialized.
    fn sanitized(s: &Sanitizer, case: &Case) -> String {
        if case.context == "json" {
            let mut v: Value = serde_json::from_str(&case.text).unwrap();
            s.value(&mut v);
            let once = v.to_string();
            s.value(&mut v);
            assert_eq!(v.to_string(), once, "{}: not idempotent", case.name);
            return once;
        }
        let once = s.text(&case.text).into_owned();
        assert_eq!(s.text(&once), once, "{}: not idempotent", case.name);
        // As the lines of a patch, too.
        let mut lines = Value::Array(
            case.text
                .lines()
                .map(|l| Value::String(format!("+{l}")))
                .collect(),
        );
        s.value(&mut lines);
        if case.catch && case.text.lines().count() > 1 {
            assert!(
                !lines.to_string().contains(&case.secret),
                "{}: kept as patch lines: {lines}",
                case.name
            );
        }
        once
    }

    #[test]
    fn every_format_is_caught_and_every_near_miss_kept() {
        let s = Sanitizer::new(&PrivacyConfig::default());
        let mut problems = Vec::new();
        let cases = corpus();
        for case in &cases {
            let out = sanitized(&s, case);
            match (case.catch, out.contains(&case.secret)) {
                (true, true) => problems.push(format!("leaked {}: {out}", case.name)),
                (false, false) => problems.push(format!("false positive {}: {out}", case.name)),
                _ => {}
            }
        }
        assert!(
            problems.is_empty(),
            "{} of {} cases:\n{}",
            problems.len(),
            cases.len(),
            problems.join("\n")
        );
    }

    use super::test_rng::Rng;

    /// A prefix of `text` cut at a random character boundary.
    fn random_cut<'a>(rng: &mut Rng, text: &'a str) -> &'a str {
        let mut at = rng.below(text.len() + 1);
        while !text.is_char_boundary(at) {
            at -= 1;
        }
        &text[..at]
    }

    #[test]
    fn mixed_and_cut_corpus_texts_stay_caught_and_idempotent() {
        let s = Sanitizer::new(&PrivacyConfig::default());
        let cases: Vec<Case> = corpus()
            .into_iter()
            .filter(|c| c.context != "json")
            .collect();
        let noise = [
            "\n",
            " ",
            "=",
            ":",
            "-",
            "\"",
            "'",
            "<private>",
            "</private>",
            "-----END PRIVATE KEY-----\n",
            "password: |\n",
            "a,Password\n",
            "é",
            "\\n",
        ];
        let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
        for round in 0..5000 {
            let mut text = String::new();
            let mut whole = Vec::new();
            for _ in 0..1 + rng.below(6) {
                let case = &cases[rng.below(cases.len())];
                match rng.below(3) {
                    0 => text.push_str(random_cut(&mut rng, &case.text)),
                    1 => text.push_str(noise[rng.below(noise.len())]),
                    _ => {
                        text.push_str("\n\n");
                        text.push_str(&case.text);
                        text.push_str("\n\n");
                        if case.catch {
                            whole.push(case);
                        }
                    }
                }
            }
            let once = s.text(&text).into_owned();
            assert_eq!(
                s.text(&once),
                once,
                "round {round}: not idempotent on {text:?}"
            );
            // (A secret that a cut piece also holds may stay there.)
            for case in whole
                .into_iter()
                .filter(|c| text.matches(&c.secret).count() == 1)
            {
                assert!(
                    !once.contains(&case.secret),
                    "round {round}: {} leaked from {text:?}\n=> {once:?}",
                    case.name
                );
            }
        }
    }
}
