//! Shell commands as the offline compressor sees them: what a command line
//! is for (tests, build, install, git, looking around, ...), how to show it
//! short, which runs are "the same command" for failure-then-fix detection,
//! and the summary line a test runner printed.

/// What a command line is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum CommandClass {
    Test,
    Build,
    Lint,
    Install,
    /// Git (or GitHub CLI) that changes something: commit, push, checkout...
    Git,
    /// Only looks at things: ls, cat, grep, git status.
    Inspect,
    /// Anything else: a script, a server, a migration.
    Run,
}

impl CommandClass {
    /// The concept tag the class contributes.
    pub fn concept(self) -> Option<&'static str> {
        match self {
            CommandClass::Test => Some("testing"),
            CommandClass::Build => Some("build"),
            CommandClass::Lint => Some("lint"),
            CommandClass::Install => Some("dependencies"),
            CommandClass::Git => Some("git"),
            CommandClass::Inspect | CommandClass::Run => None,
        }
    }
}

use mnemo_core::shell::{READERS, git_reads, is_read_only, program};

const TEST_WORDS: &[&str] = &[
    "test",
    "tests",
    "pytest",
    "jest",
    "vitest",
    "nextest",
    "rspec",
    "unittest",
    "mocha",
    "phpunit",
    "ctest",
    "tox",
    "karma",
    "ava",
    "playwright",
    "cypress",
];

const LINT_WORDS: &[&str] = &[
    "clippy",
    "eslint",
    "ruff",
    "flake8",
    "mypy",
    "pylint",
    "lint",
    "fmt",
    "rustfmt",
    "prettier",
    "black",
    "gofmt",
    "golangci-lint",
    "shellcheck",
    "stylelint",
    "biome",
    "isort",
    "pyright",
];

const BUILD_WORDS: &[&str] = &[
    "build", "compile", "check", "tsc", "cmake", "make", "ninja", "gcc", "g++", "clang", "clang++",
    "javac", "webpack", "vite", "esbuild", "rollup", "bazel", "msbuild",
];

const INSTALLERS: &[&str] = &[
    "install", "add", "i", "ci", "sync", "get", "require", "update", "upgrade",
];

/// The words of the command part that matters: the first segment (split at
/// `&&`, `||`, `;`, `|`) with the strongest purpose, without leading
/// `VAR=value` assignments (`cd x && cargo test` gives `cargo test`).
fn main_words(command: &str) -> Vec<&str> {
    let mut best: Option<(u8, Vec<&str>)> = None;
    for line in command.lines().take(10) {
        for segment in line.split(['&', ';', '|']) {
            let words: Vec<&str> = segment
                .split_whitespace()
                .skip_while(|w| w.contains('=') && !w.starts_with('-'))
                .collect();
            if words.is_empty() || matches!(words[0], "cd" | "pushd" | "source" | "." | "export") {
                continue;
            }
            let r = rank(classify_words(&words, segment));
            if best.as_ref().is_none_or(|(b, _)| r > *b) {
                best = Some((r, words));
            }
        }
    }
    best.map(|(_, w)| w).unwrap_or_default()
}

/// What `command` is for: the strongest purpose among its parts
/// (`ls && cargo test` is a test run).
pub(crate) fn classify(command: &str) -> CommandClass {
    let mut best = CommandClass::Inspect;
    for line in command.lines().take(10) {
        for segment in line.split(['&', ';', '|']) {
            let words: Vec<&str> = segment
                .split_whitespace()
                .skip_while(|w| w.contains('=') && !w.starts_with('-'))
                .collect();
            if words.is_empty() {
                continue;
            }
            let class = classify_words(&words, segment);
            if rank(class) > rank(best) {
                best = class;
            }
        }
    }
    if best == CommandClass::Inspect && !is_read_only(command) {
        return CommandClass::Run;
    }
    best
}

fn rank(class: CommandClass) -> u8 {
    match class {
        CommandClass::Inspect => 0,
        CommandClass::Run => 1,
        CommandClass::Git => 2,
        CommandClass::Install => 3,
        CommandClass::Lint => 4,
        CommandClass::Build => 5,
        CommandClass::Test => 6,
    }
}

fn classify_words(words: &[&str], segment: &str) -> CommandClass {
    let first = program(words[0]);
    if READERS.contains(&first) {
        return CommandClass::Inspect;
    }
    if first == "git" || first == "gh" {
        let reads = first == "git" && git_reads(words);
        return if reads {
            CommandClass::Inspect
        } else {
            CommandClass::Git
        };
    }
    let head: Vec<String> = words
        .iter()
        .take(5)
        .map(|w| w.trim_matches(['"', '\'']).to_ascii_lowercase())
        .collect();
    let has = |set: &[&str]| {
        head.iter().any(|w| {
            let base = w.split(':').next().unwrap_or(w);
            set.contains(&base)
        })
    };
    if has(TEST_WORDS) {
        return CommandClass::Test;
    }
    if has(LINT_WORDS) {
        return CommandClass::Lint;
    }
    let package_managers = [
        "npm", "pnpm", "yarn", "bun", "pip", "pip3", "uv", "poetry", "cargo", "go", "gem",
        "bundle", "composer", "apt", "apt-get", "brew", "dnf", "yum", "apk", "conda", "pipx",
        "deno",
    ];
    if package_managers.contains(&first)
        && head
            .get(1)
            .is_some_and(|w| INSTALLERS.contains(&w.as_str()))
    {
        return CommandClass::Install;
    }
    if has(BUILD_WORDS) {
        return CommandClass::Build;
    }
    if is_read_only(segment) {
        CommandClass::Inspect
    } else {
        CommandClass::Run
    }
}

/// The command as shown in titles: its first line, white space collapsed,
/// leading `cd dir &&` removed, at most `max` bytes.
pub(crate) fn display(command: &str, max: usize) -> String {
    let first = command.lines().next().unwrap_or("").trim();
    let mut shown = first;
    while let Some(rest) = shown
        .strip_prefix("cd ")
        .and_then(|r| r.split_once("&&"))
        .map(|(_, r)| r.trim())
    {
        shown = rest;
    }
    let more_lines = command.trim().lines().count() > 1;
    let mut out = crate::text::one_line(shown, max);
    if more_lines && !out.ends_with('…') {
        out.push_str(" …");
    }
    out
}

/// Which runs count as the same command when a failure is later followed by
/// a success: same class and same first two words for tests, builds and
/// lints (`cargo test` and `cargo test -p x`), the whole line otherwise.
pub(crate) fn same_command_key(command: &str, class: CommandClass) -> String {
    let words = main_words(command);
    match class {
        CommandClass::Test | CommandClass::Build | CommandClass::Lint => {
            let w: Vec<&str> = words.iter().take(2).map(|w| program(w)).collect();
            format!("{class:?}:{}", w.join(" "))
        }
        _ => format!("{class:?}:{}", words.join(" ")),
    }
}

/// The program a command runs (`cargo`, `npm`), for matching a failed build
/// with a later passing test run of the same tool.
pub(crate) fn program_of(command: &str) -> String {
    main_words(command)
        .first()
        .map(|w| program(w).to_owned())
        .unwrap_or_default()
}

/// The line where a test runner or build tool summed up its run
/// (`4 passed in 0.21s`, `test result: ok. 12 passed; 0 failed`), searched
/// from the end of the output.
pub(crate) fn summary_line(stdout: &str, stderr: &str) -> Option<String> {
    for text in [stdout, stderr] {
        for line in text.lines().rev().take(60) {
            let l = line.trim().trim_matches('=').trim();
            let lower = l.to_ascii_lowercase();
            if l.is_empty() || l.len() > 200 {
                continue;
            }
            if lower.starts_with("test result:")
                || lower.starts_with("tests:")
                || lower.starts_with("test suites:")
                || (lower.contains(" passed") && lower.chars().any(|c| c.is_ascii_digit()))
                || (lower.contains(" failed") && lower.chars().any(|c| c.is_ascii_digit()))
                || lower.contains(" passing")
                || lower.contains(" failing")
                || lower.starts_with("finished ")
                || lower.starts_with("ok ")
                || lower.starts_with("fail ")
            {
                return Some(crate::text::one_line(l, 160));
            }
        }
    }
    None
}

/// The message of a `git commit -m "…"`.
pub(crate) fn commit_message(command: &str) -> Option<String> {
    if !command.contains("commit") {
        return None;
    }
    let at = command.find(" -m ").or_else(|| command.find(" -am "))?;
    let rest = command[at..].trim_start().split_once(' ')?.1.trim_start();
    let quote = rest.chars().next()?;
    let body = if quote == '"' || quote == '\'' {
        let inner = &rest[1..];
        // A heredoc message starts on the next line.
        if inner.starts_with("$(cat") {
            inner.lines().nth(1)?
        } else {
            &inner[..inner.find(quote).unwrap_or(inner.len())]
        }
    } else {
        rest.split_whitespace().next()?
    };
    let body = body.trim();
    (!body.is_empty()).then(|| crate::text::one_line(body, 100))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classifies_common_commands() {
        use CommandClass::*;
        for (cmd, class) in [
            ("cargo test -p mnemo", Test),
            ("cd web && npm run test:unit", Test),
            ("python -m pytest tests/test_invoice.py -q", Test),
            ("cargo clippy --all-targets -- -D warnings", Lint),
            ("cargo build --release", Build),
            ("npm install express", Install),
            ("pip install -r requirements.txt", Install),
            ("git commit -am 'fix'", Git),
            ("git status --short", Inspect),
            ("ls -la src | head", Inspect),
            ("./scripts/migrate.sh up", Run),
            ("RUST_LOG=debug cargo run", Run),
            ("cat > notes.txt", Run),
            ("grep -rn test src", Inspect),
            ("ls && cargo test", Test),
        ] {
            assert_eq!(classify(cmd), class, "{cmd}");
        }
    }

    #[test]
    fn keys_match_variants_of_a_test_run() {
        let a = same_command_key("cargo test", CommandClass::Test);
        let b = same_command_key("cargo test -p foo -- --nocapture", CommandClass::Test);
        assert_eq!(a, b);
        assert_ne!(a, same_command_key("npm test", CommandClass::Test));
    }

    #[test]
    fn displays_and_summaries() {
        assert_eq!(display("cd /x/y && cargo test", 60), "cargo test");
        assert_eq!(display("echo a\necho b", 60), "echo a …");
        assert_eq!(
            summary_line("....\n4 passed in 0.21s", "").as_deref(),
            Some("4 passed in 0.21s")
        );
        assert_eq!(
            commit_message("git commit -m \"Fix login check\"").as_deref(),
            Some("Fix login check")
        );
    }
}
