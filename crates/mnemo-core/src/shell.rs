//! What a shell command line does, as far as a quick look can tell: capture
//! uses it to give reads a low priority and to name the files a command read
//! (file history before the next read), the compressor to fold reads into
//! the turn's observation rather than give each its own, and both to know
//! that a search which found nothing (exit code 1) did not fail.
//!
//! The line is split the way a shell would at its top level: words with
//! their quotes removed, parts at unquoted `|`, `;`, `&` and new lines, and
//! redirections and substitutions noted. Only the generic Unix tools are
//! known by name; anything unknown counts as a change.

/// Programs that only look at things (when nothing redirects their output).
pub const READERS: &[&str] = &[
    "ls", "cat", "head", "tail", "grep", "egrep", "fgrep", "rg", "ag", "ack", "find", "fd", "pwd",
    "echo", "wc", "which", "type", "tree", "stat", "file", "less", "more", "du", "df", "sort",
    "uniq", "cut", "diff", "cmp", "jq", "printenv", "env", "date", "whoami", "uname", "id",
    "basename", "dirname", "realpath", "readlink", "true", "cd", "sed", "awk", "nl", "od", "xxd",
    "hexdump", "ps", "top", "lsof", "history", "man", "help", "bat", "batcat", "tr", "column",
];

/// Programs whose file operands are files they show (`cat a b`, `sed -n
/// 1,9p a`, `head -n 5 a`).
const FILE_SHOWERS: &[&str] = &[
    "cat", "head", "tail", "nl", "less", "more", "bat", "batcat", "wc", "sed", "od", "xxd",
    "hexdump",
];

/// Programs that search text or compare files: exit code 1 means "no match"
/// or "they differ", not a failure.
const SEARCHERS: &[&str] = &["grep", "egrep", "fgrep", "rg", "ag", "ack", "diff", "cmp"];

/// git subcommands that only look at things.
pub const GIT_READERS: &[&str] = &[
    "status",
    "log",
    "diff",
    "show",
    "blame",
    "ls-files",
    "rev-parse",
    "describe",
    "remote",
    "shortlog",
    "grep",
    "reflog",
];

/// Short options that take the next word as their value, per program kind.
const HEAD_TAIL_VALUES: &[&str] = &["-n", "-c"];
const SEARCH_VALUES: &[&str] = &[
    "-e",
    "-f",
    "-A",
    "-B",
    "-C",
    "-m",
    "-g",
    "-t",
    "-T",
    "-d",
    "-D",
    "--glob",
    "--type",
    "--max-count",
    "--regexp",
    "--file",
    "--context",
    "--after-context",
    "--before-context",
    "--include",
    "--exclude",
    "--exclude-dir",
    "--max-depth",
    "--type-not",
];
const SED_VALUES: &[&str] = &["-e", "-f", "--expression", "--file"];

/// The program a word names: `/usr/bin/git` is `git`.
pub fn program(word: &str) -> &str {
    word.rsplit(['/', '\\']).next().unwrap_or(word)
}

/// True for a git invocation (`words[0]` is git) that only reads: a reader
/// subcommand, or `git branch` listing (no branch name to create or delete).
pub fn git_reads<S: AsRef<str>>(words: &[S]) -> bool {
    let mut rest = words
        .iter()
        .map(AsRef::as_ref)
        .skip(1)
        .filter(|w| !w.starts_with('-'));
    match rest.next() {
        Some("branch") => rest.next().is_none() && words.len() <= 3,
        Some(sub) => GIT_READERS.contains(&sub),
        None => false,
    }
}

/// A command line split at its top level.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Line {
    /// Each simple command's words, quotes removed, leading `VAR=value`
    /// assignments dropped.
    pub parts: Vec<Vec<String>>,
    /// Output goes to a file (`>`, `>>`, `&>`; not `/dev/null` nor another
    /// descriptor).
    pub writes: bool,
    /// A command substitution (`$(…)` or backquotes) outside single quotes.
    pub substitutes: bool,
}

/// Splits `command` into its simple commands.
pub fn parse(command: &str) -> Line {
    let mut lexer = Lexer::default();
    let mut chars = command.chars().peekable();
    while let Some(c) = chars.next() {
        lexer.char(c, &mut chars);
    }
    lexer.finish()
}

#[derive(Default)]
struct Lexer {
    line: Line,
    words: Vec<String>,
    word: Option<String>,
    quote: Option<char>,
    /// The next word is a redirection's target.
    target: bool,
}

type Chars<'a> = std::iter::Peekable<std::str::Chars<'a>>;

impl Lexer {
    fn char(&mut self, c: char, rest: &mut Chars<'_>) {
        match (self.quote, c) {
            (Some(q), c) if c == q => self.quote = None,
            (Some('\''), c) => self.push(c),
            (Some(_), '\\') => self.push(rest.next().unwrap_or('\\')),
            (Some(_), c) => self.substitution(c, rest),
            (None, '\'' | '"') => {
                self.quote = Some(c);
                self.word.get_or_insert_with(String::new);
            }
            (None, '\\') => self.push(rest.next().unwrap_or('\\')),
            (None, '|' | ';' | '\n') => self.end_part(),
            (None, '&') if rest.peek() == Some(&'>') => {
                rest.next();
                self.redirect(rest);
            }
            (None, '&') => self.end_part(),
            (None, '>') => self.redirect(rest),
            (None, '<') => self.end_word(),
            (None, c) if c.is_whitespace() => self.end_word(),
            (None, c) => self.substitution(c, rest),
        }
    }

    /// A character that may open a command substitution.
    fn substitution(&mut self, c: char, rest: &mut Chars<'_>) {
        if c == '`' || (c == '$' && rest.peek() == Some(&'(')) {
            self.line.substitutes = true;
        }
        self.push(c);
    }

    fn push(&mut self, c: char) {
        self.word.get_or_insert_with(String::new).push(c);
    }

    /// After `>` (or `&>`): `>>`, a descriptor (`>&2`) or a target word.
    fn redirect(&mut self, rest: &mut Chars<'_>) {
        // `2>`: the descriptor number is no word of the command.
        if self
            .word
            .as_ref()
            .is_some_and(|w| w.chars().all(|c| c.is_ascii_digit()))
        {
            self.word = None;
        }
        self.end_word();
        if rest.peek() == Some(&'>') {
            rest.next();
        }
        if rest.peek() == Some(&'&') {
            rest.next();
            while rest.peek().is_some_and(|c| c.is_ascii_digit() || *c == '-') {
                rest.next();
            }
            return;
        }
        self.target = true;
    }

    fn end_word(&mut self) {
        let Some(word) = self.word.take() else {
            return;
        };
        if std::mem::take(&mut self.target) {
            if word != "/dev/null" {
                self.line.writes = true;
            }
            return;
        }
        if self.words.is_empty() && is_assignment(&word) {
            return;
        }
        self.words.push(word);
    }

    fn end_part(&mut self) {
        self.end_word();
        if !self.words.is_empty() {
            self.line.parts.push(std::mem::take(&mut self.words));
        }
    }

    fn finish(mut self) -> Line {
        self.end_part();
        self.line
    }
}

/// `NAME=value` before a command.
fn is_assignment(word: &str) -> bool {
    word.split_once('=').is_some_and(|(name, _)| {
        !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
    })
}

/// True when this simple command (its words, as [`parse`] gives them) only
/// looks at things.
pub fn part_reads(words: &[String]) -> bool {
    let Some(first) = words.first() else {
        return true;
    };
    let has = |flag: &str| words.iter().skip(1).any(|w| w == flag);
    match program(first) {
        "git" => git_reads(words),
        "sed" => !words
            .iter()
            .skip(1)
            .any(|w| w.starts_with("-i") || w == "--in-place"),
        "find" => !["-delete", "-exec", "-execdir", "-ok", "-okdir", "-fprint"]
            .iter()
            .any(|f| has(f)),
        "rg" => !has("--pre"),
        cmd => READERS.contains(&cmd),
    }
}

/// True when every part of a command line only looks at things (`ls`,
/// `git status`, `grep … | head`, `rg -n "a|b" src 2>/dev/null`).
/// Redirections to files, command substitutions, `sed -i`, `find -delete`
/// and anything unknown count as changes: better a needless observation than
/// a missed one.
pub fn is_read_only(command: &str) -> bool {
    let line = parse(command);
    !line.writes && !line.substitutes && line.parts.iter().all(|p| part_reads(p))
}

/// True when exit code `code` of `command` means "nothing found" or "they
/// differ" rather than a failure: the line only reads, and its last part
/// (whose status is the line's) is a search or a comparison (`rg`, `grep`,
/// `git grep`, `diff`, `cmp`, `git diff --exit-code`) that exited 1.
pub fn is_no_match(command: &str, code: i64) -> bool {
    if code != 1 || !is_read_only(command) {
        return false;
    }
    let line = parse(command);
    let Some(last) = line.parts.last() else {
        return false;
    };
    match last.first().map(|w| program(w)) {
        Some("git") => matches!(
            last.iter()
                .skip(1)
                .find(|w| !w.starts_with('-'))
                .map(String::as_str),
            Some("grep" | "diff")
        ),
        Some(cmd) => SEARCHERS.contains(&cmd),
        None => false,
    }
}

/// The files a read-only command line shows or searches, as written (relative
/// paths are relative to the directory it ran in, after any `cd` it made):
/// operands of `cat`, `head`, `tail`, `nl`, `sed -n`, `wc`, … and the paths a
/// search (`rg`, `grep`, `ag`, `ack`) was given. Words with glob characters
/// are left out (the shell expanded them). Nothing for a line that changes
/// something. The caller decides which of them are files.
pub fn files_read(command: &str) -> Vec<String> {
    let line = parse(command);
    if line.writes || line.substitutes || !line.parts.iter().all(|p| part_reads(p)) {
        return Vec::new();
    }
    paths_of(&line.parts, |words| {
        Some(match program(&words[0]) {
            "sed" => skip_first_unless(operands(words, SED_VALUES), words, SED_VALUES),
            "head" | "tail" => operands(words, HEAD_TAIL_VALUES),
            p if FILE_SHOWERS.contains(&p) => operands(words, &[]),
            p if SEARCHERS.contains(&p) && !matches!(p, "diff" | "cmp") => {
                skip_first_unless(operands(words, SEARCH_VALUES), words, &["-e", "-f"])
            }
            _ => return None,
        })
    })
}

/// The paths `pick` takes from each simple command of `parts`, relative to
/// the directory a `cd` before it went to; words with glob characters (the
/// shell expanded them) and `-` left out.
fn paths_of(parts: &[Vec<String>], pick: impl Fn(&[String]) -> Option<Vec<String>>) -> Vec<String> {
    let mut dir: Option<String> = None;
    let mut files = Vec::new();
    for words in parts {
        if program(&words[0]) == "cd" {
            dir = words.get(1).map(|d| joined(dir.as_deref(), d));
            continue;
        }
        let Some(picked) = pick(words) else {
            continue;
        };
        files.extend(
            picked
                .into_iter()
                .filter(|w| !w.contains(['*', '?', '[', '{', '~', '$']) && w != "-")
                .map(|w| joined(dir.as_deref(), &w)),
        );
    }
    files.dedup();
    files
}

/// The files a command line removes, as written (relative paths after any
/// `cd` it made): the operands of `rm` and `git rm`. Words with glob
/// characters are left out (the shell expanded them); so is a line whose
/// substitutions decide what it removes.
pub fn files_removed(command: &str) -> Vec<String> {
    let line = parse(command);
    if line.substitutes {
        return Vec::new();
    }
    paths_of(&line.parts, |words| {
        match (program(&words[0]), words.get(1).map(String::as_str)) {
            ("rm", _) => Some(operands(words, &[])),
            // `--cached` only untracks: the file stays.
            ("git", Some("rm")) if !words.iter().any(|w| w == "--cached") => {
                Some(operands(&words[1..], &["--pathspec-from-file"]))
            }
            _ => None,
        }
    })
}

/// True when every simple command of the line removes files or changes
/// directory (`cd x && rm a b`, `git rm -r old/`).
pub fn only_removes(command: &str) -> bool {
    let line = parse(command);
    !line.parts.is_empty()
        && line.parts.iter().all(|words| {
            matches!(program(&words[0]), "cd" | "rm")
                || (program(&words[0]) == "git" && words.get(1).is_some_and(|w| w == "rm"))
        })
}

/// What a search command line looked for: the pattern and the paths it was
/// given.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Search {
    pub pattern: Option<String>,
    pub paths: Vec<String>,
}

/// The search a read-only line runs (`rg`, `grep`, `ag`, `ack`, `git grep`,
/// after any `cd`); None for other lines.
pub fn search(command: &str) -> Option<Search> {
    let line = parse(command);
    if line.writes || line.substitutes || !line.parts.iter().all(|p| part_reads(p)) {
        return None;
    }
    let words = line.parts.iter().find(|p| program(&p[0]) != "cd")?;
    let words: &[String] = match program(&words[0]) {
        "git" if words.get(1).is_some_and(|w| w == "grep") => &words[1..],
        p if SEARCHERS.contains(&p) && !matches!(p, "diff" | "cmp") => words,
        _ => return None,
    };
    let all = operands(words, SEARCH_VALUES);
    let given = flag_values(words, &["-e", "--regexp"]);
    let (pattern, paths) = match given.first() {
        Some(p) => (Some(p.clone()), all),
        None => {
            let mut all = all.into_iter();
            (all.next(), all.collect())
        }
    };
    Some(Search { pattern, paths })
}

/// The values `flags` were given (`-e x`, `--regexp=x`).
fn flag_values(words: &[String], flags: &[&str]) -> Vec<String> {
    let mut out = Vec::new();
    let mut iter = words.iter();
    while let Some(w) = iter.next() {
        if flags.contains(&w.as_str()) {
            out.extend(iter.next().cloned());
        } else if let Some(v) = flags.iter().find_map(|f| w.strip_prefix(&format!("{f}="))) {
            out.push(v.to_owned());
        }
    }
    out
}

/// The words after the program that are no option nor an option's value.
fn operands(words: &[String], takes_value: &[&str]) -> Vec<String> {
    let mut out = Vec::new();
    let mut skip = false;
    let mut after_dashes = false;
    for w in words.iter().skip(1) {
        if std::mem::take(&mut skip) {
            continue;
        }
        if after_dashes || !w.starts_with('-') || w == "-" {
            out.push(w.clone());
        } else if w == "--" {
            after_dashes = true;
        } else if takes_value.contains(&w.as_str()) {
            skip = true;
        }
    }
    out
}

/// `operands` without the first (a pattern or a script), unless one of
/// `given` (`-e`, `-f`) supplied it.
fn skip_first_unless(mut operands: Vec<String>, words: &[String], given: &[&str]) -> Vec<String> {
    let supplied = words.iter().any(|w| {
        given
            .iter()
            .any(|g| w == g || w.starts_with(&format!("{g}=")))
    });
    if !supplied && !operands.is_empty() {
        operands.remove(0);
    }
    operands
}

/// `path` under `dir` when there is a directory and the path is relative.
fn joined(dir: Option<&str>, path: &str) -> String {
    match dir {
        Some(d) if !std::path::Path::new(path).is_absolute() => {
            format!("{}/{}", d.trim_end_matches('/'), path)
        }
        _ => path.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_a_command_removes() {
        assert_eq!(files_removed("rm -f a.txt src/b.rs"), ["a.txt", "src/b.rs"]);
        assert_eq!(
            files_removed("cd web && git rm -r old/ && cargo test"),
            ["web/old/"]
        );
        assert!(files_removed("git rm --cached .env").is_empty());
        assert_eq!(files_removed("rm -- -weird *.log"), ["-weird"]);
        assert!(files_removed("rm $(cat list)").is_empty());
        assert!(files_removed("cargo rm serde").is_empty());
        assert!(only_removes("cd x && rm -rf build"));
        assert!(!only_removes("rm a && cargo test"));
        assert!(!only_removes("git status"));
    }

    #[test]
    fn reads_and_changes() {
        for c in [
            "ls -la",
            "git status",
            "cat a | grep b | head",
            "FOO=1 git log -3",
            "sed -n 1,5p f",
            "/usr/bin/git diff HEAD~1",
            "git branch",
            "git branch -a",
            "rg -n \"alpha|beta\" src",
            "grep -rn '=>' src 2>/dev/null",
            "git status 2>&1 | head",
            "nl -ba src/lib.rs | sed -n '20,80p'",
            "cd sub && rg --files | wc -l",
            "find . -name '*.rs' -type f",
        ] {
            assert!(is_read_only(c), "{c}");
        }
        for c in [
            "rm -rf build",
            "cargo test",
            "echo x > f",
            "echo x >> f",
            "cat a &> log",
            "git commit -m x",
            "ls && make",
            "sed -i s/a/b/ f",
            "echo $(rm x)",
            "echo \"$(rm x)\"",
            "echo `rm x`",
            "git branch -D old",
            "git",
            "find . -name '*.o' -delete",
            "find . -exec rm {} ;",
        ] {
            assert!(!is_read_only(c), "{c}");
        }
        // Quoted, these are text, not shell syntax.
        assert!(is_read_only("echo '$(rm x)'"));
        assert!(is_read_only("grep -n 'a > b' notes.md"));
    }

    #[test]
    fn the_line_is_split_like_a_shell_would() {
        let line = parse("A=1 rg -n \"x | y\" 'src dir' && echo ok 2>&1");
        assert_eq!(
            line.parts,
            [vec!["rg", "-n", "x | y", "src dir"], vec!["echo", "ok"]]
        );
        assert!(!line.writes && !line.substitutes);
        assert!(parse("ls 2> err.txt").writes);
        assert!(!parse("ls 2>/dev/null").writes);
    }

    #[test]
    fn files_a_command_shows_or_searches() {
        let cases: &[(&str, &[&str])] = &[
            ("cat a.rs b.rs", &["a.rs", "b.rs"]),
            ("sed -n '1,200p' src/main.rs", &["src/main.rs"]),
            ("sed -n -e 5p x.txt", &["x.txt"]),
            ("head -n 40 README.md", &["README.md"]),
            ("tail -20 log.txt", &["log.txt"]),
            ("nl -ba src/lib.rs | sed -n '10,40p'", &["src/lib.rs"]),
            (
                "rg -n \"fn main\" src/main.rs src/cli.rs",
                &["src/main.rs", "src/cli.rs"],
            ),
            ("grep -rn -e TODO -e FIXME lib", &["lib"]),
            ("rg -n pattern", &[]),
            (
                "cd crates/core && cat Cargo.toml",
                &["crates/core/Cargo.toml"],
            ),
            ("cat src/*.rs", &[]),
            ("ls src", &[]),
            ("cat a.rs > b.rs", &[]),
            ("sed -i s/a/b/ f.rs", &[]),
            ("cargo test", &[]),
        ];
        for (command, files) in cases {
            assert_eq!(files_read(command), *files, "{command}");
        }
    }

    #[test]
    fn what_a_search_looked_for() {
        let s = search("cd src && rg -n \"fn main\" a.rs b.rs").unwrap();
        assert_eq!(s.pattern.as_deref(), Some("fn main"));
        assert_eq!(s.paths, ["a.rs", "b.rs"]);
        let s = search("grep -rn -e TODO lib").unwrap();
        assert_eq!(
            (s.pattern.as_deref(), s.paths),
            (Some("TODO"), vec!["lib".to_owned()])
        );
        assert_eq!(
            search("git grep -n needle").unwrap().pattern.as_deref(),
            Some("needle")
        );
        assert_eq!(search("cat a.rs"), None);
        assert_eq!(search("rg x > out"), None);
    }

    #[test]
    fn a_search_that_found_nothing_is_no_failure() {
        for c in [
            "rg -n needle src",
            "grep -q x f",
            "git grep -n needle",
            "cd src && grep -rn needle .",
            "diff a.txt b.txt",
            "cmp a b",
            "git diff --exit-code",
        ] {
            assert!(is_no_match(c, 1), "{c}");
            assert!(!is_no_match(c, 2), "{c}: 2 is an error");
        }
        for c in [
            "cargo test | grep FAILED",
            "rg needle | head",
            "ls missing",
            "make && grep x f",
            "rg x > out.txt",
        ] {
            assert!(!is_no_match(c, 1), "{c}");
        }
    }
}
