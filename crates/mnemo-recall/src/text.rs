//! Small text helpers for one-line, bounded, tag-safe output.
//!
//! Recall text goes back into an agent's context, wrapped in
//! `<mnemo-context>` so that capture can cut it out again. Stored text was
//! sanitized on the way in, but a stray tag of ours inside a title would end
//! the wrapper early (or hide the rest from capture's stripper), so every
//! piece of stored text is passed through [`untagged`] before it is shown.

use std::borrow::Cow;
use std::path::Path;

/// The tag that wraps everything recall injects.
pub const CONTEXT_OPEN: &str = "<mnemo-context>";
pub const CONTEXT_CLOSE: &str = "</mnemo-context>";

/// Tag names that must never appear inside injected text.
const RESERVED_TAGS: &[&str] = &["mnemo-context", "claude-mem-context", "private"];

/// `text` without any opening or closing reserved tag (case-insensitive).
pub fn untagged(text: &str) -> Cow<'_, str> {
    if !text.contains('<') {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(pos) = rest.find('<') {
        out.push_str(&rest[..pos]);
        let after = &rest[pos + 1..];
        let name_start = after.strip_prefix('/').unwrap_or(after);
        let skipped = RESERVED_TAGS.iter().find_map(|tag| {
            let head = name_start.get(..tag.len())?;
            let tail = name_start[tag.len()..].trim_start();
            (head.eq_ignore_ascii_case(tag) && tail.starts_with('>'))
                .then(|| rest.len() - (tail.len() - 1))
        });
        match skipped {
            Some(end) => rest = &rest[end..],
            None => {
                out.push('<');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    Cow::Owned(out)
}

/// White space collapsed to single spaces, cut between words or path
/// segments to at most `max` characters (ending with `…` when cut,
/// [`mnemo_core::words::cut_chars`]), reserved tags removed.
pub fn one_line(text: &str, max: usize) -> String {
    let clean = untagged(text);
    let mut out = String::with_capacity(clean.len().min(max.saturating_mul(4) + 8));
    for word in clean.split_whitespace() {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(word);
        if out.len() > max.saturating_mul(4) + 8 {
            break;
        }
    }
    mnemo_core::words::cut_chars(&out, max)
}

/// How Claude Code measures hook output: JavaScript string length (UTF-16
/// code units).
pub fn js_len(text: &str) -> usize {
    text.encode_utf16().count()
}

/// A stored path for display: relative to `root` when inside it, and cut
/// from the left (keeping the file name) past `max` characters.
pub fn display_path(path: &str, root: Option<&Path>) -> String {
    const MAX: usize = 60;
    let rel = root
        .and_then(|r| Path::new(path).strip_prefix(r).ok())
        .map(|p| p.to_string_lossy().into_owned())
        .filter(|p| !p.is_empty())
        .unwrap_or_else(|| path.to_owned());
    let rel = untagged(&rel).into_owned();
    let n = rel.chars().count();
    if n <= MAX {
        return rel;
    }
    let tail: String = rel.chars().skip(n - (MAX - 3)).collect();
    format!("...{tail}")
}

/// The first JSON list of paths that is not empty, first entry: the file an
/// observation is mainly about (what it modified, else what it read).
pub fn main_file(files_modified: &[String], files_read: &[String]) -> Option<String> {
    files_modified
        .iter()
        .chain(files_read)
        .find(|f| !f.is_empty())
        .cloned()
}

/// Whether `text` has a character of a script written without spaces
/// between words (Chinese, Japanese, Thai, Lao, Khmer, Myanmar), where a
/// word index sees a whole run of characters as one word and only a
/// substring search finds part of it. Korean Hangul counts too: its words
/// take particles without a space.
pub fn has_unsegmented(text: &str) -> bool {
    text.chars().any(is_unsegmented)
}

fn is_unsegmented(c: char) -> bool {
    matches!(c as u32,
        0x0E00..=0x0EFF // Thai, Lao
        | 0x1000..=0x109F // Myanmar
        | 0x1780..=0x17FF // Khmer
        | 0x3040..=0x30FF // Hiragana, Katakana
        | 0x3400..=0x4DBF // CJK Extension A
        | 0x4E00..=0x9FFF // CJK Unified Ideographs
        | 0xAC00..=0xD7AF // Hangul syllables
        | 0xF900..=0xFAFF // CJK Compatibility Ideographs
        | 0xFF66..=0xFF9F // Halfwidth Katakana
        | 0x20000..=0x2FA1F // CJK Extensions B and later
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reserved_tags_are_removed_and_others_kept() {
        assert_eq!(untagged("a <b> c"), "a <b> c");
        assert_eq!(untagged("x</mnemo-context>y"), "xy");
        assert_eq!(untagged("x<MNEMO-CONTEXT >y<private>z</Private>"), "xyz");
        assert_eq!(untagged("a < b <privateer> <"), "a < b <privateer> <");
        assert_eq!(untagged("é<private>ü"), "éü");
    }

    #[test]
    fn one_line_collapses_and_cuts() {
        assert_eq!(one_line("  a\n\n b\tc ", 80), "a b c");
        assert_eq!(one_line("alpha beta gamma delta", 12), "alpha beta\u{2026}");
        assert_eq!(
            one_line("cut here: supercalifragilistic", 20),
            "cut here\u{2026}",
            "no word is cut in half"
        );
        assert_eq!(
            one_line("edited crates/store/src/queue_backoff.rs", 30),
            "edited crates/store/src/\u{2026}",
            "no path segment is cut in half"
        );
        assert_eq!(one_line("supercalifragilistic", 12), "supercalifr\u{2026}");
        assert_eq!(
            one_line("\u{fc}n\u{ef}c\u{f6}d\u{e9} w\u{f6}rds", 9),
            "\u{fc}n\u{ef}c\u{f6}d\u{e9}\u{2026}"
        );
    }

    #[test]
    fn paths_are_relative_and_bounded() {
        let root = Path::new("/home/dev/shop");
        assert_eq!(
            display_path("/home/dev/shop/src/auth.py", Some(root)),
            "src/auth.py"
        );
        assert_eq!(display_path("/etc/hosts", Some(root)), "/etc/hosts");
        let long = format!("/x/{}/file.rs", "d".repeat(100));
        let shown = display_path(&long, None);
        assert!(shown.ends_with("/file.rs") && shown.starts_with("..."));
        assert_eq!(shown.chars().count(), 60);
    }
}
