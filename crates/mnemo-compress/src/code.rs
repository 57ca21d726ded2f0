//! What can be read out of source text without parsing it: the names a
//! snippet defines (`fn parse_config`, `class Invoice`), the language of a
//! file, how many lines an edit added and removed, whether an edit is a plain
//! rename, and a compact unified-style diff for the model.

use std::collections::HashMap;

/// One definition found in a snippet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Definition {
    /// `function`, `struct`, `class`, ...
    pub kind: &'static str,
    pub name: String,
}

/// Keywords that introduce a definition, and what to call it. A keyword
/// only counts as the first word of a line, after [`MODIFIERS`].
const DEFINERS: &[(&str, &str)] = &[
    ("fn", "function"),
    ("def", "function"),
    ("defp", "function"),
    ("defmacro", "macro"),
    ("defmacrop", "macro"),
    ("defguard", "macro"),
    ("defmodule", "module"),
    ("defprotocol", "protocol"),
    ("defimpl", "impl"),
    ("function", "function"),
    ("func", "function"),
    ("fun", "function"),
    ("sub", "function"),
    ("class", "class"),
    ("struct", "struct"),
    ("enum", "enum"),
    ("union", "union"),
    ("trait", "trait"),
    ("interface", "interface"),
    ("impl", "impl"),
    ("mod", "module"),
    ("module", "module"),
    ("namespace", "namespace"),
    ("object", "object"),
    ("record", "record"),
    ("protocol", "protocol"),
    ("extension", "extension"),
    ("type", "type"),
    ("typedef", "type"),
    ("macro_rules", "macro"),
];

/// Words that may come before a definition's keyword.
const MODIFIERS: &[&str] = &[
    "pub",
    "crate",
    "super",
    "export",
    "default",
    "async",
    "static",
    "public",
    "private",
    "protected",
    "internal",
    "abstract",
    "final",
    "sealed",
    "open",
    "override",
    "virtual",
    "inline",
    "unsafe",
    "extern",
    "const",
    "data",
    "declare",
    "partial",
    "synchronized",
    "native",
    "strictfp",
    "template",
    "friend",
    "constexpr",
    "noinline",
    "suspend",
    "tailrec",
    "operator",
    "infix",
    "readonly",
    "opaque",
];

/// Words that start a statement, never a function declaration.
const STATEMENTS: &[&str] = &[
    "return",
    "if",
    "else",
    "elif",
    "while",
    "for",
    "switch",
    "case",
    "match",
    "new",
    "delete",
    "throw",
    "await",
    "yield",
    "typeof",
    "sizeof",
    "goto",
    "echo",
    "print",
    "puts",
    "do",
    "and",
    "or",
    "not",
    "raise",
    "assert",
    "import",
    "from",
    "using",
    "catch",
    "try",
    "when",
    "unless",
    "until",
    "loop",
    "let",
    "var",
    "val",
    "defer",
    "go",
    "with",
    "assert_eq",
    "in",
    "is",
];

/// Names no definition has: keywords, literals, and the English words a
/// sentence puts after `function` or `class`.
const NOT_NAMES: &[&str] = &[
    "for", "if", "while", "return", "self", "Self", "new", "const", "let", "var", "mut", "pub",
    "async", "static", "in", "of", "this", "is", "and", "or", "not", "the", "a", "an", "to",
    "true", "false", "nil", "null", "none", "None", "that", "it", "with", "as", "at", "by", "on",
    "be", "are", "was", "we", "you", "i", "then", "do", "end", "from", "into", "which", "its",
    "has", "can", "will", "should", "must", "so", "but", "all", "any", "each", "calls", "called",
    "returns", "was", "were", "does", "here", "there", "when",
];

fn is_ident_start(c: char) -> bool {
    c.is_alphabetic() || c == '_' || c == '$'
}

fn is_ident_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_' || c == '$'
}

/// Definitions on the lines of `text`, in order, without duplicates. Lines
/// that are comments are skipped; `const name = (...) =>` and
/// `name = function` count as functions.
pub(crate) fn definitions(text: &str) -> Vec<Definition> {
    let mut out: Vec<Definition> = Vec::new();
    for line in text.lines().take(2000) {
        if let Some(def) = definition_on(line)
            && !out.iter().any(|d| d.name == def.name)
        {
            out.push(def);
        }
    }
    out
}

/// The definition a single line starts, if any. A hand-written recogniser
/// per language family: a definer keyword first on the line (Rust, Python,
/// Ruby, Elixir, Go, Kotlin, Swift, JavaScript), a C-style declaration
/// (`int parse(char *s) {`, Java and C# methods), or an assigned function
/// (`const f = (x) =>`).
pub(crate) fn definition_on(line: &str) -> Option<Definition> {
    let l = line.trim_start();
    if l.starts_with("//")
        || l.starts_with('#')
        || l.starts_with("/*")
        || l.starts_with('*')
        || l.starts_with("--")
        || l.starts_with('%')
    {
        return None;
    }
    let indented = line.starts_with(char::is_whitespace);
    keyword_definition(l)
        .or_else(|| c_style_function(l, indented))
        .or_else(|| assigned_function(l))
}

/// `fn name`, `def name`, `defmodule A.B do`, `impl X for Y`, `func (r) Name`.
fn keyword_definition(l: &str) -> Option<Definition> {
    let mut rest = l;
    loop {
        let word = first_token(rest)?;
        let after = rest[rest.find(word)? + word.len()..].trim_start();
        if MODIFIERS.contains(&word) {
            // `pub(crate) fn`: skip the visibility's parentheses.
            rest = match after.strip_prefix('(') {
                Some(inner) => inner.split_once(')')?.1.trim_start(),
                None => after,
            };
            continue;
        }
        // The keyword must open the line (after modifiers only).
        if !rest.starts_with(word) {
            return None;
        }
        let &(_, kind) = DEFINERS.iter().find(|(k, _)| *k == word)?;
        let name = match word {
            "impl" => {
                let words = tokens(after);
                words
                    .iter()
                    .rposition(|w| *w == "for")
                    .and_then(|p| words.get(p + 1))
                    .or_else(|| words.first())
                    .copied()?
                    .to_owned()
            }
            "func" if after.starts_with('(') => method_after_receiver(after)?.to_owned(),
            "defmodule" | "module" | "defprotocol" | "defimpl" | "namespace" => {
                let name: String = after
                    .chars()
                    .take_while(|c| is_ident_char(*c) || *c == '.' || *c == ':')
                    .collect();
                let name = name.trim_end_matches([':', '.']).to_owned();
                if name.is_empty() || !name.starts_with(is_ident_start) {
                    return None;
                }
                name
            }
            "def" => {
                // Ruby's `def self.name`.
                let a = after.strip_prefix("self.").unwrap_or(after);
                plain_name(a)?
            }
            _ => plain_name(after)?,
        };
        if is_keyword(&name) {
            return None;
        }
        return Some(Definition { kind, name });
    }
}

/// The identifier at the start of `s`, if what follows it may follow a
/// declared name (`(`, `<`, `{`, `:`, `=`, end of line...), not a word of a
/// sentence.
fn plain_name(s: &str) -> Option<String> {
    let end = s
        .char_indices()
        .find(|(_, c)| !is_ident_char(*c) && *c != '!' && *c != '?')
        .map_or(s.len(), |(i, _)| i);
    let name = &s[..end];
    if name.is_empty() || !name.starts_with(is_ident_start) {
        return None;
    }
    let next = s[end..].trim_start();
    let ok = next.is_empty()
        || next.starts_with(['(', '<', '{', ':', '=', '[', ',', ';', '|', '\\'])
        || next.starts_with("do")
        || next.starts_with("extends")
        || next.starts_with("implements")
        || next.starts_with("where")
        || next.starts_with("struct")
        || next.starts_with("interface")
        || next.starts_with("func")
        || next.starts_with("with")
        || next.starts_with("->")
        || next.starts_with("of");
    let name = name.trim_end_matches(['!', '?']);
    (ok && !name.is_empty()).then(|| name.to_owned())
}

/// `int parse(char *s) {`, `public static void main(String[] args) {`,
/// `  async load(id: string): Promise<User> {`: types and modifiers, a name,
/// balanced parameters, then nothing but a body's opening (or a return type).
/// `indented`: the line was indented (a call inside a body, such as
/// Elixir's `change set_attribute(:state, :closed)`, is no declaration).
fn c_style_function(l: &str, indented: bool) -> Option<Definition> {
    let open = l.find('(')?;
    let head = l[..open].trim_end();
    if head.is_empty()
        || !head
            .chars()
            .all(|c| is_ident_char(c) || " \t*&<>:,[]~".contains(c))
        || head.contains(": ")
    {
        return None;
    }
    let words: Vec<&str> = head
        .split([' ', '\t', '*', '&'])
        .filter(|w| !w.is_empty())
        .collect();
    let first = *words.first()?;
    // SQL (`INSERT INTO t (a, b)`) and macros shout; declarations do not.
    let shouts = |w: &&str| w.len() > 1 && w.chars().all(|c| c.is_ascii_uppercase() || c == '_');
    if STATEMENTS.contains(&first) || first.ends_with(':') || words.iter().any(shouts) {
        return None;
    }
    let close = matching_paren(l, open)?;
    let rest = l[close + 1..].trim();
    let body_opens = rest == "{"
        || (rest.ends_with('{')
            && [
                "const", "override", "noexcept", "throws", ":", "->", "final", "where",
            ]
            .iter()
            .any(|w| rest.starts_with(w)));
    let declaration = rest.is_empty() && words.len() >= 2 && !indented;
    let method = words.len() == 1 && rest == "{";
    if !(body_opens && words.len() >= 2 || declaration || method) {
        return None;
    }
    let last = *words.last()?;
    let name = last.rsplit("::").next()?.trim_start_matches('~');
    if name.is_empty() || !name.starts_with(is_ident_start) || is_keyword(name) {
        return None;
    }
    if words.len() >= 2 && STATEMENTS.contains(&name) {
        return None;
    }
    Some(Definition {
        kind: "function",
        name: name.to_owned(),
    })
}

fn matching_paren(l: &str, open: usize) -> Option<usize> {
    let mut depth = 0usize;
    for (i, c) in l[open..].char_indices() {
        match c {
            '(' => depth += 1,
            ')' => {
                depth -= 1;
                if depth == 0 {
                    return Some(open + i);
                }
            }
            _ => {}
        }
    }
    None
}

/// JavaScript and friends: `const name = (...) =>`, `name = function`.
fn assigned_function(l: &str) -> Option<Definition> {
    let eq = l.find('=')?;
    let (lhs, rhs) = l.split_at(eq);
    let rhs = rhs[1..].trim_start();
    if rhs.starts_with(['=', '>'])
        || !(rhs.starts_with("function")
            || rhs.starts_with("async")
            || (rhs.starts_with('(') && rhs.contains("=>")))
    {
        return None;
    }
    let lhs_words = tokens(lhs);
    let name = lhs_words.last()?;
    if is_keyword(name) || lhs_words.len() > 4 {
        return None;
    }
    Some(Definition {
        kind: "function",
        name: (*name).to_owned(),
    })
}

fn first_token(s: &str) -> Option<&str> {
    tokens(s).into_iter().next()
}

fn method_after_receiver(after: &str) -> Option<&str> {
    let close = after.find(')')?;
    tokens(&after[close + 1..]).into_iter().next()
}

fn is_keyword(word: &str) -> bool {
    NOT_NAMES.contains(&word) || word.chars().next().is_some_and(|c| c.is_ascii_digit())
}

/// The identifier-like words of a line.
fn tokens(line: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = None;
    for (i, c) in line.char_indices() {
        match (start, is_ident_char(c)) {
            (None, true) if is_ident_start(c) => start = Some(i),
            (Some(s), false) => {
                out.push(&line[s..i]);
                start = None;
            }
            _ => {}
        }
    }
    if let Some(s) = start {
        out.push(&line[s..]);
    }
    out
}

/// True for a line that imports something (`use`, `import`, `#include`,
/// `require`).
pub(crate) fn is_import(line: &str) -> bool {
    let l = line.trim_start();
    l.starts_with("import ")
        || (l.starts_with("from ") && l.contains(" import "))
        || l.starts_with("use ")
        || l.starts_with("pub use ")
        || l.starts_with("#include")
        || l.starts_with("using ")
        || l.starts_with("require ")
        || (l.contains("require(")
            && (l.starts_with("const ") || l.starts_with("let ") || l.starts_with("var ")))
}

/// Lines added and removed going from `old` to `new`, counted as a multiset
/// difference of lines (cheap, and exact for the usual one-block edit).
pub(crate) fn line_delta(old: &str, new: &str) -> (usize, usize) {
    let mut counts: HashMap<&str, i64> = HashMap::new();
    for l in old.lines() {
        *counts.entry(l).or_default() -= 1;
    }
    for l in new.lines() {
        *counts.entry(l).or_default() += 1;
    }
    let added = counts
        .values()
        .filter(|&&n| n > 0)
        .map(|&n| n as usize)
        .sum();
    let removed = counts
        .values()
        .filter(|&&n| n < 0)
        .map(|&n| (-n) as usize)
        .sum();
    (added, removed)
}

/// `Some((from, to))` when `new` is `old` with one identifier replaced by
/// another everywhere it occurs (a rename), and nothing else changed.
pub(crate) fn rename_in(old: &str, new: &str) -> Option<(String, String)> {
    if old == new || old.len() > 20_000 {
        return None;
    }
    let (a, b) = (split_words(old), split_words(new));
    if a.len() != b.len() {
        return None;
    }
    let mut pair: Option<(&str, &str)> = None;
    for (x, y) in a.iter().zip(&b) {
        if x == y {
            continue;
        }
        let is_ident = |s: &str| s.chars().next().is_some_and(is_ident_start);
        if !is_ident(x) || !is_ident(y) {
            return None;
        }
        match pair {
            None => pair = Some((x, y)),
            Some(p) if p == (*x, *y) => {}
            Some(_) => return None,
        }
    }
    // A renamed name must not survive in the new text.
    let (from, to) = pair?;
    if b.contains(&from) || a.contains(&to) {
        return None;
    }
    Some((from.to_owned(), to.to_owned()))
}

/// Identifier runs and single other characters, with white space dropped.
fn split_words(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = None;
    for (i, c) in text.char_indices() {
        if is_ident_char(c) {
            if start.is_none() {
                start = Some(i);
            }
            continue;
        }
        if let Some(s) = start.take() {
            out.push(&text[s..i]);
        }
        if !c.is_whitespace() {
            out.push(&text[i..i + c.len_utf8()]);
        }
    }
    if let Some(s) = start {
        out.push(&text[s..]);
    }
    out
}

/// A compact unified-style diff of an edit: common leading and trailing
/// lines become up to `context` lines of context, the rest is `-`/`+`.
pub(crate) fn diff(old: &str, new: &str, context: usize) -> String {
    let a: Vec<&str> = old.lines().collect();
    let b: Vec<&str> = new.lines().collect();
    let prefix = a.iter().zip(&b).take_while(|(x, y)| x == y).count();
    let max_suffix = a.len().min(b.len()) - prefix;
    let suffix = a
        .iter()
        .rev()
        .zip(b.iter().rev())
        .take(max_suffix)
        .take_while(|(x, y)| x == y)
        .count();
    let mut out = String::with_capacity(old.len() + new.len() + 16);
    for l in &a[prefix.saturating_sub(context)..prefix] {
        push_line(&mut out, ' ', l);
    }
    for l in &a[prefix..a.len() - suffix] {
        push_line(&mut out, '-', l);
    }
    for l in &b[prefix..b.len() - suffix] {
        push_line(&mut out, '+', l);
    }
    for l in a[a.len() - suffix..].iter().take(context) {
        push_line(&mut out, ' ', l);
    }
    out
}

fn push_line(out: &mut String, mark: char, line: &str) {
    out.push(mark);
    out.push_str(line);
    out.push('\n');
}

/// The language (as a concept tag) of a file, from its name.
pub(crate) fn language_of(path: &str) -> Option<&'static str> {
    let name = path.rsplit(['/', '\\']).next().unwrap_or(path);
    match name {
        "Dockerfile" | "Containerfile" => return Some("docker"),
        "Makefile" | "makefile" | "GNUmakefile" => return Some("make"),
        _ => {}
    }
    let ext = name.rsplit_once('.')?.1.to_ascii_lowercase();
    Some(match ext.as_str() {
        "rs" => "rust",
        "py" | "pyi" => "python",
        "ts" | "tsx" | "mts" | "cts" => "typescript",
        "js" | "jsx" | "mjs" | "cjs" => "javascript",
        "go" => "go",
        "java" => "java",
        "kt" | "kts" => "kotlin",
        "swift" => "swift",
        "rb" => "ruby",
        "php" => "php",
        "c" | "h" => "c",
        "cc" | "cpp" | "cxx" | "hpp" | "hh" | "hxx" => "c++",
        "cs" => "csharp",
        "scala" => "scala",
        "ex" | "exs" => "elixir",
        "erl" | "hrl" => "erlang",
        "hs" => "haskell",
        "ml" | "mli" => "ocaml",
        "lua" => "lua",
        "dart" => "dart",
        "zig" => "zig",
        "sh" | "bash" | "zsh" | "fish" => "shell",
        "ps1" => "powershell",
        "sql" => "sql",
        "html" | "htm" => "html",
        "css" | "scss" | "sass" | "less" => "css",
        "vue" => "vue",
        "svelte" => "svelte",
        "md" | "mdx" | "rst" | "adoc" | "txt" => "docs",
        "toml" | "yaml" | "yml" | "ini" | "cfg" | "conf" | "json" | "jsonc" | "env" => "config",
        "proto" => "protobuf",
        "tf" | "hcl" => "terraform",
        "nix" => "nix",
        _ => return None,
    })
}

/// True for test files (`tests/…`, `*_test.go`, `test_*.py`, `*.spec.ts`).
pub(crate) fn is_test_path(path: &str) -> bool {
    let p = path.replace('\\', "/");
    let name = p.rsplit('/').next().unwrap_or(&p);
    p.contains("/tests/")
        || p.contains("/test/")
        || p.contains("/__tests__/")
        || p.starts_with("tests/")
        || p.starts_with("test/")
        || name.starts_with("test_")
        || name.contains("_test.")
        || name.contains(".test.")
        || name.contains(".spec.")
        || name.contains("_spec.")
}

/// Files that declare dependencies.
pub(crate) fn is_manifest(path: &str) -> bool {
    let name = path.rsplit(['/', '\\']).next().unwrap_or(path);
    matches!(
        name,
        "Cargo.toml"
            | "package.json"
            | "pyproject.toml"
            | "requirements.txt"
            | "go.mod"
            | "Gemfile"
            | "pom.xml"
            | "build.gradle"
            | "build.gradle.kts"
            | "composer.json"
            | "setup.py"
            | "setup.cfg"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(text: &str) -> Vec<String> {
        definitions(text).into_iter().map(|d| d.name).collect()
    }

    #[test]
    fn finds_definitions_across_languages() {
        assert_eq!(
            names("pub fn parse_config(path: &Path) -> Config {"),
            ["parse_config"]
        );
        assert_eq!(names("    async fn run(&self) {}"), ["run"]);
        assert_eq!(names("def login(user, pw):"), ["login"]);
        assert_eq!(
            names("export async function fetchUser(id) {"),
            ["fetchUser"]
        );
        assert_eq!(
            names("func (s *Server) Handle(w http.ResponseWriter) {"),
            ["Handle"]
        );
        assert_eq!(
            names("pub struct Config {\n}\nimpl Default for Config {"),
            ["Config"]
        );
        assert_eq!(names("class Invoice(Base):"), ["Invoice"]);
        assert_eq!(names("const total = (a, b) => a + b;"), ["total"]);
        assert_eq!(names("// fn commented_out()"), Vec::<String>::new());
        assert_eq!(names("return user == 'admin'"), Vec::<String>::new());
        assert_eq!(
            definitions("impl<T> Display for Wrapper<T> {")[0].kind,
            "impl"
        );
    }

    #[test]
    fn each_language_family_and_no_prose() {
        for (text, want) in [
            (
                "defmodule Spotter.Transcripts.Annotation do",
                "Spotter.Transcripts.Annotation",
            ),
            (
                "  def handle_event(\"save\", params, socket) do",
                "handle_event",
            ),
            ("  defp build_ref(msg), do: msg.id", "build_ref"),
            ("  def mount(_params, _session, socket) do", "mount"),
            ("def self.find_by_slug(slug)", "find_by_slug"),
            ("class Invoice < ApplicationRecord", "Invoice"),
            ("module Billing::Tax", "Billing::Tax"),
            (
                "pub(crate) fn lease_in(tx: &Transaction) -> Result<()> {",
                "lease_in",
            ),
            ("pub const fn new() -> Self {", "new_"),
            ("async def fetch(url):", "fetch"),
            ("export default function App() {", "App"),
            ("export interface Props {", "Props"),
            ("  async load(id: string): Promise<User> {", "load"),
            ("type Server struct {", "Server"),
            ("func main() {", "main"),
            ("public static void main(String[] args) {", "main"),
            (
                "    private List<String> names(int n) throws IOException {",
                "names",
            ),
            (
                "static int parse_line(const char *s, size_t n)",
                "parse_line",
            ),
            ("std::string Config::path() const {", "path"),
        ] {
            let got = names(text);
            if want == "new_" {
                // `new` is a keyword, not a name worth showing.
                assert!(got.is_empty(), "{text}: {got:?}");
            } else {
                assert_eq!(got, [want], "{text}");
            }
        }
        for prose in [
            "The function is called once per turn.",
            "A class that handles login and true or false values.",
            "This module and the next one",
            "  def is the keyword, and fn too",
            "Call parse(x) to start",
            "if (ready) {",
            "} else if (x) {",
            "return compute(a, b);",
            "describe(\"login\", () => {",
            "  foo(bar);",
            "struct and enum are types",
            "INSERT INTO annotations (id, session_id)",
            "    CREATE TABLE annotations (",
            // Calls in a body (an Elixir DSL, a C statement without `;`).
            "      change set_flag(:state, :closed)",
            "    retry with_backoff(request)",
        ] {
            assert_eq!(names(prose), Vec::<String>::new(), "{prose}");
        }
    }

    #[test]
    fn line_deltas_and_renames() {
        assert_eq!(line_delta("a\nb\nc", "a\nB\nc\nd"), (2, 1));
        assert_eq!(
            rename_in(
                "let x = old_name(1);\nold_name(2)",
                "let x = new_name(1);\nnew_name(2)"
            ),
            Some(("old_name".into(), "new_name".into()))
        );
        assert_eq!(rename_in("a(1)", "b(2)"), None);
        assert_eq!(rename_in("foo + bar", "bar + bar"), None);
    }

    #[test]
    fn diffs_keep_context() {
        let d = diff("a\nb\nc\nd\ne", "a\nb\nX\nd\ne", 1);
        assert_eq!(d, " b\n-c\n+X\n d\n");
    }

    #[test]
    fn languages_and_tests() {
        assert_eq!(language_of("/x/src/lib.rs"), Some("rust"));
        assert_eq!(language_of("Dockerfile"), Some("docker"));
        assert_eq!(language_of("README"), None);
        assert!(is_test_path("tests/test_invoice.py"));
        assert!(is_test_path("src/app.spec.ts"));
        assert!(!is_test_path("src/app.ts"));
    }
}
