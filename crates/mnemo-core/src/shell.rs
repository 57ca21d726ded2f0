//! What a shell command line does, as far as a quick look can tell: capture
//! uses it to give reads a low priority, the compressor to fold reads into
//! the turn's observation rather than give each its own.

/// Programs that only look at things (when nothing redirects their output).
pub const READERS: &[&str] = &[
    "ls", "cat", "head", "tail", "grep", "rg", "ag", "find", "fd", "pwd", "echo", "wc", "which",
    "type", "tree", "stat", "file", "less", "more", "du", "df", "sort", "uniq", "cut", "diff",
    "jq", "printenv", "env", "date", "whoami", "uname", "id", "basename", "dirname", "realpath",
    "readlink", "true", "cd", "sed", "awk", "nl", "od", "xxd", "hexdump", "ps", "top", "lsof",
    "history", "man", "help",
];

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

/// The program a word names: `/usr/bin/git` is `git`.
pub fn program(word: &str) -> &str {
    word.rsplit('/').next().unwrap_or(word)
}

/// True for a git invocation (`words[0]` is git) that only reads: a reader
/// subcommand, or `git branch` listing (no branch name to create or delete).
pub fn git_reads(words: &[&str]) -> bool {
    let mut rest = words.iter().skip(1).filter(|w| !w.starts_with('-'));
    match rest.next() {
        Some(&"branch") => rest.next().is_none() && words.len() <= 3,
        Some(sub) => GIT_READERS.contains(sub),
        None => false,
    }
}

/// True when every part of a command line only looks at things (`ls`,
/// `git status`, `grep … | head`). Redirections, command substitutions,
/// `sed -i` and anything unknown count as changes: better a needless
/// observation than a missed one.
pub fn is_read_only(command: &str) -> bool {
    if command.contains('>') || command.contains("$(") || command.contains('`') {
        return false;
    }
    command
        .split(['|', ';', '&', '\n'])
        .map(str::trim)
        .filter(|part| !part.is_empty())
        .all(|part| {
            let words: Vec<&str> = part
                .split_whitespace()
                .skip_while(|w| w.contains('=') && !w.starts_with('-'))
                .collect();
            match words.first().map(|w| program(w)) {
                Some("git") => git_reads(&words),
                Some("sed") => !part.contains(" -i"),
                Some(cmd) => READERS.contains(&cmd),
                None => true,
            }
        })
}

#[cfg(test)]
mod tests {
    use super::*;

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
        ] {
            assert!(is_read_only(c), "{c}");
        }
        for c in [
            "rm -rf build",
            "cargo test",
            "echo x > f",
            "git commit -m x",
            "ls && make",
            "sed -i s/a/b/ f",
            "echo $(rm x)",
            "git branch -D old",
            "git",
        ] {
            assert!(!is_read_only(c), "{c}");
        }
    }
}
