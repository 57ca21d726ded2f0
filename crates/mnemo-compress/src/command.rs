//! Shell commands as the offline compressor sees them: what a command line
//! is for (tests, build, install, git, looking around, ...), how to show it
//! short, which runs are "the same command" for failure-then-fix detection,
//! and the summary line a test runner printed.

/// What a command line is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CommandClass {
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

    /// Tests, builds and lints: what a summary reports as passing or
    /// left failing.
    pub fn is_check(self) -> bool {
        matches!(
            self,
            CommandClass::Test | CommandClass::Build | CommandClass::Lint
        )
    }
}

use mnemo_core::shell::{self, is_read_only, part_reads, program};

mod tracker;

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
    "credo",
    "dialyzer",
    "sobelow",
    "rubocop",
    "standardrb",
    "staticcheck",
    "golint",
    "hadolint",
];

const BUILD_WORDS: &[&str] = &[
    "build", "compile", "check", "tsc", "cmake", "make", "ninja", "gcc", "g++", "clang", "clang++",
    "javac", "webpack", "vite", "esbuild", "rollup", "bazel", "msbuild",
];

/// Package managers (their `update`, `view`… are no tracker's).
#[rustfmt::skip]
const PACKAGE_MANAGERS: &[&str] = &[
    "npm", "pnpm", "yarn", "bun", "pip", "pip3", "uv", "poetry", "cargo", "go", "gem", "bundle",
    "composer", "apt", "apt-get", "brew", "dnf", "yum", "apk", "conda", "pipx", "deno",
];

const INSTALLERS: &[&str] = &[
    "install", "add", "i", "ci", "sync", "get", "require", "update", "upgrade",
];

/// The first lines of a command, split by [`mnemo_core::shell::parse`]
/// (a heredoc's body or a script further down says little of its purpose).
fn parts(command: &str) -> Vec<Vec<String>> {
    let head: Vec<&str> = command.lines().take(10).collect();
    shell::parse(&head.join("\n")).parts
}

/// The words of the command part that matters: the simple command (split
/// at unquoted `&&`, `||`, `;`, `|`) with the strongest purpose, without
/// leading `VAR=value` assignments (`cd x && cargo test` gives `cargo test`).
fn main_words(command: &str) -> Vec<String> {
    let mut best: Option<(u8, Vec<String>)> = None;
    for words in parts(command) {
        if matches!(
            words[0].as_str(),
            "cd" | "pushd" | "source" | "." | "export"
        ) {
            continue;
        }
        let r = rank(classify_words(&words));
        if best.as_ref().is_none_or(|(b, _)| r > *b) {
            best = Some((r, words));
        }
    }
    best.map(|(_, w)| w).unwrap_or_default()
}

/// What `command` is for: the strongest purpose among its parts
/// (`ls && cargo test` is a test run).
pub fn classify(command: &str) -> CommandClass {
    let mut best = CommandClass::Inspect;
    for words in parts(command) {
        let class = classify_words(&words);
        if rank(class) > rank(best) {
            best = class;
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

fn classify_words(words: &[String]) -> CommandClass {
    let first = program(&words[0]);
    if part_reads(words) {
        return CommandClass::Inspect;
    }
    if first == "git" || first == "gh" {
        return CommandClass::Git;
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
    if PACKAGE_MANAGERS.contains(&first)
        && head
            .get(1)
            .is_some_and(|w| INSTALLERS.contains(&w.as_str()))
    {
        return CommandClass::Install;
    }
    if has(BUILD_WORDS) {
        return CommandClass::Build;
    }
    CommandClass::Run
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
/// a success: the same intent. Same class and same first two words for
/// tests, builds and lints (`cargo test` and `cargo test -p x`); the same
/// program and subcommand otherwise (`git push` and `git push
/// --set-upstream origin x`; `npm run build` keeps `build`).
pub(crate) fn same_command_key(command: &str, class: CommandClass) -> String {
    let words = main_words(command);
    match class {
        CommandClass::Test | CommandClass::Build | CommandClass::Lint => {
            let w: Vec<&str> = words.iter().take(2).map(|w| program(w)).collect();
            format!("{class:?}:{}", w.join(" "))
        }
        _ => {
            let mut key: Vec<&str> = words.first().map(|w| program(w)).into_iter().collect();
            let mut args = words
                .iter()
                .skip(1)
                .map(String::as_str)
                .filter(|w| !w.starts_with('-'));
            if let Some(sub) = args.next() {
                key.push(sub);
                if matches!(sub, "run" | "exec" | "x" | "script")
                    && let Some(next) = args.next()
                {
                    key.push(next);
                }
            }
            format!("{class:?}:{}", key.join(" "))
        }
    }
}

/// True for bookkeeping: git that is not a commit (add, push, checkout,
/// branch, stash...) and task-tracker commands. It serves the work around
/// it rather than being work of its own.
pub(crate) fn is_bookkeeping(command: &str, class: CommandClass) -> bool {
    (class == CommandClass::Git && commit_message(command).is_none())
        || is_tracker(command)
        || is_housekeeping(command)
}

/// File housekeeping around a change (`chmod +x`, `mkdir -p`, `mv`): it
/// serves the change next to it.
pub(crate) fn is_housekeeping(command: &str) -> bool {
    const HOUSEKEEPING: &[&str] = &[
        "chmod", "chown", "mkdir", "touch", "cp", "mv", "rm", "ln", "rmdir",
    ];
    HOUSEKEEPING.contains(&program_of(command).as_str())
}

/// The task-tracker commands of `command`, told by their form (see
/// [`tracker`]); git and package managers are none.
fn tracker_commands(command: &str) -> impl Iterator<Item = tracker::TrackerCommand> {
    parts(command).into_iter().filter_map(|words| {
        let first = program(&words[0]);
        let tool = first == "git"
            || PACKAGE_MANAGERS.contains(&first)
            || !matches!(
                classify_words(&words),
                CommandClass::Run | CommandClass::Git
            );
        if tool { None } else { tracker::read(&words) }
    })
}

/// True when `command` updates, creates, closes or lists tracker items.
pub(crate) fn is_tracker(command: &str) -> bool {
    tracker_commands(command).next().is_some()
}

/// The title of the tracker item `command` created (`gh issue create
/// --title "…"`); None for other commands.
pub(crate) fn created_task(command: &str) -> Option<String> {
    tracker_commands(command)
        .find(|t| t.creates)
        .map(|t| t.title.unwrap_or_default())
}

/// The task ids a tracker command closed, and the reason it gave
/// (`bd close a b --reason "done"`, `gh issue close 12`).
pub(crate) fn closed_tasks(command: &str) -> Option<(Vec<String>, Option<String>)> {
    tracker_commands(command)
        .find(|t| t.closes)
        .map(|t| (t.ids, t.reason))
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
                || ((lower.contains(" failure") || lower.contains(" tests,"))
                    && lower.chars().any(|c| c.is_ascii_digit()))
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

/// The whole message of a `git commit -m "…"` (every `-m`, a heredoc
/// message included), lines kept.
pub(crate) fn commit_message(command: &str) -> Option<String> {
    if !command.contains("commit") {
        return None;
    }
    let mut parts: Vec<String> = Vec::new();
    let mut from = 0;
    while let Some(at) = [" -m ", " -am ", " --message "]
        .iter()
        .filter_map(|f| command[from..].find(f).map(|i| (from + i, f.len())))
        .min()
        .map(|(i, len)| i + len)
    {
        from = at;
        let rest = command[at..].trim_start();
        let Some(quote) = rest.chars().next() else {
            break;
        };
        let body = if quote == '"' || quote == '\'' {
            let inner = &rest[1..];
            if let Some(heredoc) = inner.strip_prefix("$(cat") {
                heredoc_body(heredoc)
            } else {
                inner[..inner.find(quote).unwrap_or(inner.len())].to_owned()
            }
        } else {
            rest.split_whitespace().next().unwrap_or("").to_owned()
        };
        let body = body.trim().to_owned();
        if !body.is_empty() {
            parts.push(body);
        }
    }
    (!parts.is_empty()).then(|| parts.join("\n\n"))
}

/// The lines of a `<<'EOF' … EOF` heredoc (`text` starts after `$(cat`).
fn heredoc_body(text: &str) -> String {
    let Some(start) = text.find("<<") else {
        return String::new();
    };
    let first_line_end = text[start..].find('\n').map_or(text.len(), |i| start + i);
    let word = text[start + 2..first_line_end]
        .trim()
        .trim_start_matches('-')
        .trim_matches(['\'', '"', ')', ' ']);
    let word = if word.is_empty() { "EOF" } else { word };
    text.get(first_line_end + 1..)
        .unwrap_or("")
        .lines()
        .take_while(|l| l.trim() != word)
        .collect::<Vec<_>>()
        .join("\n")
}

/// The first line of a commit message, without a conventional-commit
/// prefix (`feat(ui): add x` gives `Add x`), and the kind it implies.
pub(crate) fn commit_subject(message: &str) -> (String, Option<&'static str>) {
    let first = message.lines().next().unwrap_or("").trim();
    let (prefix, rest) = match first.split_once(": ") {
        Some((p, r))
            if p.len() <= 20
                && !p.contains(' ')
                && p.chars().next().is_some_and(|c| c.is_ascii_lowercase()) =>
        {
            (p.split('(').next().unwrap_or(p).trim_end_matches('!'), r)
        }
        _ => ("", first),
    };
    let kind = match prefix {
        "feat" | "feature" => Some("feature"),
        "fix" | "bugfix" | "hotfix" => Some("bugfix"),
        "refactor" => Some("refactor"),
        "" => None,
        _ => Some("change"),
    };
    (crate::text::capitalize(rest.trim()), kind)
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
        let heredoc = "git add . && git commit -m \"$(cat <<'EOF'\nfeat(ui): add annotations with message references\n\nThey link a note to the transcript line, because terminal offsets drift.\nEOF\n)\"";
        let msg = commit_message(heredoc).unwrap();
        assert_eq!(
            msg,
            "feat(ui): add annotations with message references\n\nThey link a note to the transcript line, because terminal offsets drift."
        );
        assert_eq!(
            commit_subject(&msg),
            (
                "Add annotations with message references".to_owned(),
                Some("feature")
            )
        );
        assert_eq!(
            commit_message("git commit -m 'Subject' -m 'Body text'").as_deref(),
            Some("Subject\n\nBody text")
        );
    }

    #[test]
    fn same_intent_and_bookkeeping() {
        let key = |c: &str| same_command_key(c, classify(c));
        assert_eq!(
            key("git push"),
            key("git push --set-upstream origin feature/x")
        );
        assert_ne!(key("git push"), key("git pull"));
        assert_ne!(key("npm run build"), key("npm run deploy"));
        assert!(is_bookkeeping(
            "git push -u origin x",
            classify("git push -u origin x")
        ));
        assert!(is_bookkeeping(
            "bd update x --status done",
            CommandClass::Run
        ));
        assert!(!is_bookkeeping("git commit -m 'x'", CommandClass::Git));
        assert_eq!(
            closed_tasks("bd close spotter-gqc.1 spotter-gqc --reason \"All parts merged\" 2>&1"),
            Some((
                vec!["spotter-gqc.1".to_owned(), "spotter-gqc".to_owned()],
                Some("All parts merged".to_owned())
            ))
        );
        assert_eq!(closed_tasks("bd update x --status in_progress"), None);
        assert_eq!(
            closed_tasks(
                "bd close spotter-gqc.6 --reason=\"Implemented the close event\" && git push"
            ),
            Some((
                vec!["spotter-gqc.6".to_owned()],
                Some("Implemented the close event".to_owned())
            ))
        );
        // Trackers are known by the form of their commands, not by name.
        assert_eq!(
            closed_tasks("cd app && gh issue close 12 && git push"),
            Some((vec!["#12".to_owned()], None))
        );
        assert!(is_tracker("tix done AB-3"));
        assert_eq!(
            created_task("gh issue create --title \"Retry uploads\"").as_deref(),
            Some("Retry uploads")
        );
        // Package managers and git share verbs with trackers; they are none.
        for tool in [
            "npm update left-pad",
            "cargo update -p serde",
            "npm view left-pad",
            "git add src/x-1.rs",
        ] {
            assert!(!is_tracker(tool), "{tool}");
        }
        assert_eq!(classify("git status 2>&1"), CommandClass::Inspect);
        assert_eq!(
            summary_line("Finished in 1.8 seconds\n65 tests, 0 failures\n", "").as_deref(),
            Some("65 tests, 0 failures")
        );
    }
}
