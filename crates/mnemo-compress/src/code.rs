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

/// Keywords that introduce a definition, and what to call it.
const DEFINERS: &[(&str, &str)] = &[
    ("fn", "function"),
    ("def", "function"),
    ("function", "function"),
    ("func", "function"),
    ("fun", "function"),
    ("sub", "function"),
    ("class", "class"),
    ("struct", "struct"),
    ("enum", "enum"),
    ("trait", "trait"),
    ("interface", "interface"),
    ("impl", "impl"),
    ("mod", "module"),
    ("module", "module"),
    ("object", "object"),
    ("record", "record"),
    ("protocol", "protocol"),
    ("extension", "extension"),
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

/// The definition a single line starts, if any.
pub(crate) fn definition_on(line: &str) -> Option<Definition> {
    let l = line.trim_start();
    if l.starts_with("//") || l.starts_with('#') || l.starts_with("/*") || l.starts_with('*') {
        return None;
    }
    let words = tokens(l);
    for (i, word) in words.iter().enumerate().take(8) {
        if let Some(&(_, kind)) = DEFINERS.iter().find(|(k, _)| k == word) {
            // `impl<T> Trait for Type` names the type; `func (r *T) Name(`
            // names the method after the receiver.
            let rest: Vec<&str> = words[i + 1..].to_vec();
            let name = match *word {
                "impl" => rest
                    .iter()
                    .rposition(|w| *w == "for")
                    .and_then(|p| rest.get(p + 1))
                    .or_else(|| rest.first())
                    .copied(),
                "func"
                    if l.split_once("func")
                        .is_some_and(|(_, r)| r.trim_start().starts_with('(')) =>
                {
                    method_after_receiver(l)
                }
                _ => rest.first().copied(),
            };
            let name = name?;
            if is_keyword(name) {
                return None;
            }
            return Some(Definition {
                kind,
                name: name.to_owned(),
            });
        }
    }
    // JavaScript and friends: `const name = (...) =>`, `name = function`.
    if let Some(eq) = l.find('=') {
        let (lhs, rhs) = l.split_at(eq);
        let rhs = rhs[1..].trim_start();
        if !rhs.starts_with('=')
            && (rhs.starts_with("function")
                || rhs.starts_with("async")
                || (rhs.starts_with('(') && rhs.contains("=>")))
        {
            let lhs_words = tokens(lhs);
            if let Some(name) = lhs_words.last()
                && !is_keyword(name)
            {
                return Some(Definition {
                    kind: "function",
                    name: (*name).to_owned(),
                });
            }
        }
    }
    None
}

fn method_after_receiver(line: &str) -> Option<&str> {
    let after = line.split_once("func")?.1;
    let close = after.find(')')?;
    tokens(&after[close + 1..]).into_iter().next()
}

fn is_keyword(word: &str) -> bool {
    matches!(
        word,
        "for"
            | "if"
            | "while"
            | "return"
            | "self"
            | "Self"
            | "new"
            | "const"
            | "let"
            | "var"
            | "mut"
            | "pub"
            | "async"
            | "static"
            | "in"
            | "of"
            | "this"
    ) || word.chars().next().is_some_and(|c| c.is_ascii_digit())
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
