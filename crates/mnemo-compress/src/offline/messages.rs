//! Stage of the offline compressor that keeps the user-visible strings a
//! change adds — the messages, warnings and errors a program prints — as
//! values of the change, so "what does the warning say" finds the words.
//! Recognised by form alone: a double-quoted (or backquoted) string in an
//! added line of code that reads as a sentence (four words or more, opening
//! with a capital letter, mostly words). Escapes read as text, placeholders
//! (`%s`, `{}`) stay, and a long message is cut at a word.

/// Lines longer than this are data even when they quote a message.
pub(super) const LINE_MAX: usize = 1000;
/// Longest message kept, in bytes.
const MESSAGE_MAX: usize = 200;

/// The messages an added line quotes, as their text reads.
pub(super) fn in_line(t: &str) -> Vec<String> {
    if t.len() > LINE_MAX {
        return Vec::new();
    }
    quoted(t)
        .into_iter()
        .map(|s| unescaped(&s))
        .filter(|s| reads_as_sentence(s))
        .map(|s| crate::text::clamp_words(&s, MESSAGE_MAX))
        .collect()
}

/// The raw contents of the `"…"` and `` `…` `` strings of a line, escaped
/// quotes included.
fn quoted(t: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut chars = t.chars();
    while let Some(c) = chars.next() {
        if c != '"' && c != '`' {
            continue;
        }
        let mut body = String::new();
        let mut closed = false;
        while let Some(d) = chars.next() {
            match d {
                '\\' => {
                    body.push(d);
                    body.extend(chars.next());
                }
                d if d == c => {
                    closed = true;
                    break;
                }
                d => body.push(d),
            }
        }
        if closed {
            out.push(body);
        }
    }
    out
}

/// The text a string literal prints: `\n` and `\t` as spaces, `\"` as `"`,
/// white space collapsed.
fn unescaped(raw: &str) -> String {
    let mut out = String::new();
    let mut chars = raw.chars();
    while let Some(c) = chars.next() {
        match (c, c == '\\') {
            (_, true) => match chars.next() {
                Some('n' | 't' | 'r') => out.push(' '),
                Some(e) => out.push(e),
                None => {}
            },
            (c, false) => out.push(c),
        }
    }
    out.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Four words or more, opening with a capital letter (not an all-capitals
/// keyword such as `SELECT`), at least half of them plain words.
fn reads_as_sentence(s: &str) -> bool {
    let words: Vec<&str> = s.split_whitespace().collect();
    let Some(first) = words.first() else {
        return false;
    };
    let capital = first.starts_with(|c: char| c.is_uppercase())
        && first.chars().filter(|c| c.is_lowercase()).count() > 0;
    let plain = words
        .iter()
        .filter(|w| {
            let w = w.trim_matches(|c: char| ",.;:!?\"'()".contains(c));
            !w.is_empty() && w.chars().all(|c| c.is_alphabetic() || c == '\'')
        })
        .count();
    words.len() >= 4 && capital && plain >= 3 && plain * 2 >= words.len()
}

#[cfg(test)]
mod tests {
    use super::in_line;

    #[test]
    fn printed_sentences_are_messages() {
        assert_eq!(
            in_line(
                r#"message = fmt.Sprintf("Another run is active: \"%s\"\n\nYou can go on here, but both runs will be mixed.", name)"#
            ),
            ["Another run is active: \"%s\" You can go on here, but both runs will be mixed."]
        );
        assert_eq!(
            in_line(r#"raise ArgumentError, "Token expired, ask for a new one""#),
            ["Token expired, ask for a new one"]
        );
        assert_eq!(
            in_line(r#"echo "Skipping the upload: no files changed" >&2"#),
            ["Skipping the upload: no files changed"]
        );
    }

    #[test]
    fn code_in_strings_is_no_message() {
        for line in [
            r#"db.query("SELECT id FROM users WHERE name = ?")"#,
            r#"class="flex items-center gap-2 text-sm""#,
            r#"log("failed to open {path}")"#,
            r#"println!("{}: {}", a, b);"#,
            r#"name = "Retry""#,
            r#"path = "/api/v1/items/{id}/children/all""#,
        ] {
            assert!(in_line(line).is_empty(), "{line}: {:?}", in_line(line));
        }
    }

    #[test]
    fn long_messages_are_cut_at_a_word() {
        let long = format!(
            "say(\"{}\")",
            "Please wait while we copy everything. ".repeat(10)
        );
        let m = &in_line(&long)[0];
        assert!(m.len() <= 204, "{m}");
        assert!(m.starts_with("Please wait while we copy everything."));
    }
}
