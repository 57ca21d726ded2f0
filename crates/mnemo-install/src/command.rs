//! Recognising mnemo's hook commands and quoting the binary path into one.
//!
//! Ownership is decided from the command line alone, because that is all a settings file records:
//! any `…/mnemo hook claude-code …` is ours, whichever path the binary was installed from, so a
//! reinstall from a new location replaces the old entry instead of adding a second one; so is a
//! command that runs this very binary under another name (`mnemo-1.4.0`, a renamed copy). The host
//! word decides whose: Codex's `mnemo hook codex …` is never taken for a Claude Code entry.

/// Is this hook command one of ours, for Claude Code?
pub fn is_mnemo_hook_command(command: &str) -> bool {
    is_mnemo_hook_command_for(command, "claude-code")
}

/// Is this hook command one of ours for `host` (`claude-code`, `codex`, ...)?
///
/// A command is ours when its program (first shell word, unquoted) is mnemo (this binary or a
/// copy of it under any name, or a file named `mnemo`, `mnemo.exe`, `mnemo-<version>`) and the
/// next two words are `hook` and the host.
pub fn is_mnemo_hook_command_for(command: &str, host: &str) -> bool {
    match leading_words(command, 3).as_slice() {
        [program, verb, word] => verb == "hook" && word == host && is_mnemo_program(program),
        _ => false,
    }
}

/// The program of a shell command line, unquoted (`'/opt/my dir/mnemo'` -> `/opt/my dir/mnemo`).
pub fn program_of(command: &str) -> Option<String> {
    leading_words(command, 1).into_iter().next()
}

/// Quote a path for the command line Claude Code hands to its shell, only when needed.
///
/// POSIX shells get single quotes. On Windows double quotes are what both cmd.exe and the Git Bash
/// Claude Code runs hooks with understand, and they keep backslashes literal in both.
pub fn shell_quote(path: &str) -> String {
    if cfg!(windows) {
        quote_windows(path)
    } else {
        quote_posix(path)
    }
}

fn quote_posix(path: &str) -> String {
    // `=` could make a first word an assignment and `~` would expand, so neither counts as safe.
    let is_safe = |c: char| c.is_ascii_alphanumeric() || "_-./:@%+,".contains(c);
    if !path.is_empty() && path.chars().all(is_safe) {
        path.to_string()
    } else {
        format!("'{}'", path.replace('\'', r"'\''"))
    }
}

fn quote_windows(path: &str) -> String {
    // A bare backslash would be eaten by Git Bash, so any path with one is quoted.
    let is_safe = |c: char| c.is_ascii_alphanumeric() || "_-./:".contains(c);
    if !path.is_empty() && path.chars().all(is_safe) {
        path.to_string()
    } else {
        format!("\"{}\"", path.replace('"', "\\\""))
    }
}

/// The program is mnemo: this very binary, whatever it is called (a
/// versioned copy, a renamed one), or a file named `mnemo`, `mnemo.exe` or
/// `mnemo-<version>` (an install by a copy since removed).
fn is_mnemo_program(program: &str) -> bool {
    has_mnemo_name(program) || runs_this_binary(program)
}

fn has_mnemo_name(program: &str) -> bool {
    let file_name = program.rsplit(['/', '\\']).next().unwrap_or(program);
    let lower = file_name.to_ascii_lowercase();
    let stem = lower.strip_suffix(".exe").unwrap_or(&lower);
    stem == "mnemo"
        || stem.strip_prefix("mnemo").is_some_and(|rest| {
            rest.starts_with(['-', '_', '.'])
                && rest[1..].starts_with(|c: char| c.is_ascii_digit() || c == 'v')
        })
}

/// Whether `program` is the executable running now, or a byte-for-byte
/// copy of it (paths compared once symlinks are resolved, then contents).
fn runs_this_binary(program: &str) -> bool {
    let Some(me) = std::env::current_exe()
        .ok()
        .and_then(|p| std::fs::canonicalize(p).ok())
    else {
        return false;
    };
    let program = std::path::Path::new(program);
    if !program.is_absolute() {
        return false;
    }
    match std::fs::canonicalize(program) {
        Ok(p) if p == me => true,
        Ok(p) => same_contents(&p, &me).unwrap_or(false),
        Err(_) => false,
    }
}

/// Whether two regular files hold the same bytes.
fn same_contents(a: &std::path::Path, b: &std::path::Path) -> std::io::Result<bool> {
    use std::io::Read;
    let (fa, fb) = (
        mnemo_core::files::open_regular(a)?,
        mnemo_core::files::open_regular(b)?,
    );
    if fa.metadata()?.len() != fb.metadata()?.len() {
        return Ok(false);
    }
    let (mut ra, mut rb) = (std::io::BufReader::new(fa), std::io::BufReader::new(fb));
    let (mut xa, mut xb) = (vec![0u8; 64 * 1024], vec![0u8; 64 * 1024]);
    loop {
        let n = ra.read(&mut xa)?;
        if n == 0 {
            return Ok(true);
        }
        rb.read_exact(&mut xb[..n])?;
        if xa[..n] != xb[..n] {
            return Ok(false);
        }
    }
}

/// The first `limit` words of a shell command line with quotes and escapes removed.
///
/// Follows POSIX quoting, with one concession to Windows: outside quotes a backslash only escapes
/// a character the shell would otherwise treat specially, so `C:\tools\mnemo.exe` keeps its
/// backslashes while `/opt/my\ dir/mnemo` still loses its escape. An unterminated quote ends the
/// word at the end of the line rather than failing: this only ever has to recognise a program.
fn leading_words(line: &str, limit: usize) -> Vec<String> {
    let mut words = Vec::new();
    let mut chars = line.chars().peekable();
    while words.len() < limit {
        while chars.next_if(|c| c.is_whitespace()).is_some() {}
        if chars.peek().is_none() {
            break;
        }
        let mut word = String::new();
        while let Some(c) = chars.next_if(|c| !c.is_whitespace()) {
            match c {
                '\'' => word.extend(chars.by_ref().take_while(|&c| c != '\'')),
                '"' => {
                    while let Some(c) = chars.next() {
                        match c {
                            '"' => break,
                            '\\' => match chars
                                .next_if(|c| matches!(c, '$' | '`' | '"' | '\\' | '\n'))
                            {
                                Some('\n') => {}
                                Some(escaped) => word.push(escaped),
                                None => word.push('\\'),
                            },
                            c => word.push(c),
                        }
                    }
                }
                '\\' => match chars.next_if(|&c| is_shell_special(c)) {
                    Some('\n') => {}
                    Some(escaped) => word.push(escaped),
                    None => word.push('\\'),
                },
                c => word.push(c),
            }
        }
        words.push(word);
    }
    words
}

fn is_shell_special(c: char) -> bool {
    c.is_whitespace() || "\\'\"$`|&;<>()*?[]#~=%!{}".contains(c)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recognises_our_commands_from_any_install_location() {
        for command in [
            "mnemo hook claude-code PostToolUse",
            "/usr/local/bin/mnemo hook claude-code PostToolUse",
            "  /home/me/.cargo/bin/mnemo   hook claude-code SessionStart  ",
            "'/opt/my dir/mnemo' hook claude-code PostToolUse",
            "/opt/my\\ dir/mnemo hook claude-code PostToolUse",
            "\"/opt/it's/mnemo\" hook claude-code PostToolUse",
            "'/opt/it'\\''s/mnemo' hook claude-code PostToolUse",
            "\"C:\\Program Files\\mnemo\\mnemo.exe\" hook claude-code PostToolUse",
            "C:\\tools\\MNEMO.EXE hook claude-code Stop",
            "$HOME/.local/bin/mnemo hook 'claude-code' UserPromptSubmit",
            "~/bin/mnemo hook claude-code",
        ] {
            assert!(is_mnemo_hook_command(command), "{command}");
        }
    }

    #[test]
    fn leaves_other_commands_alone() {
        for command in [
            "",
            "prettier --write",
            "mnemo",
            "mnemo hook",
            "mnemo mcp",
            "mnemo hook codex PostToolUse",
            "/usr/bin/mnemonic hook claude-code PostToolUse",
            "/opt/mnemo/bin/claude-mem hook claude-code PostToolUse",
            "echo mnemo hook claude-code",
            "'/opt/my dir/mnemo hook' claude-code PostToolUse",
            "node /opt/mnemo hook claude-code",
            "mnemo.sh hook claude-code PostToolUse",
        ] {
            assert!(!is_mnemo_hook_command(command), "{command}");
        }
    }

    #[test]
    fn posix_quoting_only_when_needed_and_reversible() {
        assert_eq!(quote_posix("/usr/local/bin/mnemo"), "/usr/local/bin/mnemo");
        assert_eq!(quote_posix("/opt/my dir/mnemo"), "'/opt/my dir/mnemo'");
        assert_eq!(quote_posix("/opt/it's/mnemo"), r"'/opt/it'\''s/mnemo'");
        assert_eq!(quote_posix(""), "''");
        for path in [
            "/opt/my dir/mnemo",
            "/opt/it's/mnemo",
            "/opt/$HOME/`x`/\"q\"/mnemo",
            "/opt/a=b/~/mnemo",
            "/opt/tab\there/mnemo",
        ] {
            let quoted = quote_posix(path);
            assert_eq!(leading_words(&quoted, 1), [path], "{quoted}");
            assert!(is_mnemo_hook_command(&format!(
                "{quoted} hook claude-code PostToolUse"
            )));
        }
    }

    #[test]
    fn windows_quoting_keeps_backslashes() {
        assert_eq!(quote_windows("C:/tools/mnemo.exe"), "C:/tools/mnemo.exe");
        let quoted = quote_windows(r"C:\Program Files\mnemo\mnemo.exe");
        assert_eq!(quoted, r#""C:\Program Files\mnemo\mnemo.exe""#);
        assert_eq!(
            leading_words(&quoted, 1),
            [r"C:\Program Files\mnemo\mnemo.exe"]
        );
        assert!(is_mnemo_hook_command(&format!(
            "{quoted} hook claude-code PostToolUse"
        )));
    }

    #[test]
    fn shell_quote_uses_the_platform_style() {
        let quoted = shell_quote("/opt/my dir/mnemo");
        let expected = if cfg!(windows) {
            "\"/opt/my dir/mnemo\""
        } else {
            "'/opt/my dir/mnemo'"
        };
        assert_eq!(quoted, expected);
    }
}
