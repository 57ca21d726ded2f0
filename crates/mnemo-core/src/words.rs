//! The wording of every message mnemo prints: counted nouns (`1
//! observation`, `2 observations`, `0 summaries`), sizes in one unit system
//! (`3.4 KiB`), and text cut to a length without cutting inside a word or a
//! path segment. One helper each, so that no message says "1 events", no
//! two screens disagree on KB and KiB, and no title ends in half a file name.

/// `n` and the noun in its right number; `many` is the plural spelled out
/// (`summary` / `summaries`).
pub fn count(n: impl std::fmt::Display, one: &str, many: &str) -> String {
    let n = n.to_string();
    let noun = if n == "1" { one } else { many };
    format!("{n} {noun}")
}

/// `n` and a noun whose plural only adds `s` (`event` / `events`).
pub fn count_s(n: impl std::fmt::Display, noun: &str) -> String {
    let n = n.to_string();
    let s = if n == "1" { "" } else { "s" };
    format!("{n} {noun}{s}")
}

/// What a cut text ends with.
pub const ELLIPSIS: char = '…';

/// A size in bytes as people read it: `512 B`, `3.4 KiB`, `12.0 MiB` (powers
/// of 1024, named as such).
pub fn size(bytes: u64) -> String {
    const UNITS: [&str; 4] = ["KiB", "MiB", "GiB", "TiB"];
    if bytes < 1024 {
        return format!("{bytes} B");
    }
    let mut value = bytes as f64 / 1024.0;
    let mut unit = 0;
    while value >= 1024.0 && unit < UNITS.len() - 1 {
        value /= 1024.0;
        unit += 1;
    }
    format!("{value:.1} {}", UNITS[unit])
}

/// `text` in at most `max` bytes: whole when it fits, else cut between
/// words or after a path separator, ending with [`ELLIPSIS`].
pub fn cut(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_owned();
    }
    let mut room = max.saturating_sub(ELLIPSIS.len_utf8()).min(text.len());
    while !text.is_char_boundary(room) {
        room -= 1;
    }
    cut_at(text, room)
}

/// `text` in at most `max` characters, cut as [`cut`] does.
pub fn cut_chars(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        None => text.to_owned(),
        Some(_) => {
            let room = text
                .char_indices()
                .nth(max.saturating_sub(1))
                .map_or(0, |(i, _)| i);
            cut_at(text, room)
        }
    }
}

/// `text[..room]` moved back to the last clean place to cut (white space,
/// or just after `/` or `\\`) when one is in its second half, without
/// trailing punctuation, and the ellipsis.
fn cut_at(text: &str, room: usize) -> String {
    let end = clean_end(text, room).unwrap_or(room);
    let mut out = text[..end]
        .trim_end_matches([' ', '\t', '\n', ',', ';', ':', '.', '-', '(', '['])
        .to_owned();
    out.push(ELLIPSIS);
    out
}

/// The last index `<= room` (and `>= room / 2`) where a cut splits no word
/// and no path segment.
fn clean_end(text: &str, room: usize) -> Option<usize> {
    let next_is_space = text[room..].chars().next().is_none_or(char::is_whitespace);
    if next_is_space || text[..room].ends_with(['/', '\\']) {
        return Some(room);
    }
    text[..room]
        .char_indices()
        .rev()
        .take_while(|&(i, _)| i >= room / 2)
        .find_map(|(i, c)| match c {
            c if c.is_whitespace() => Some(i),
            '/' | '\\' => Some(i + 1),
            _ => None,
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_is_singular_and_everything_else_plural() {
        assert_eq!(count(1u64, "summary", "summaries"), "1 summary");
        assert_eq!(count(0u64, "summary", "summaries"), "0 summaries");
        assert_eq!(count_s(1usize, "event"), "1 event");
        assert_eq!(count_s(2i64, "event"), "2 events");
        assert_eq!(count_s(-1i64, "event"), "-1 events");
    }

    #[test]
    fn sizes_use_one_unit_system() {
        assert_eq!(size(512), "512 B");
        assert_eq!(size(3 * 1024 + 400), "3.4 KiB");
        assert_eq!(size(12 * 1024 * 1024), "12.0 MiB");
    }

    #[test]
    fn cuts_never_split_a_word_or_a_path_segment() {
        assert_eq!(cut("short", 10), "short");
        let title = "Fixed the retry in crates/mnemo-store/src/queue_backoff.rs";
        let c = cut(title, 50);
        assert_eq!(c, "Fixed the retry in crates/mnemo-store/src/\u{2026}");
        assert!(c.len() <= 50, "{c}");
        assert_eq!(cut_chars("Endpoint. Then the rest", 12), "Endpoint\u{2026}");
        assert_eq!(cut_chars("caf\u{e9} au lait", 8), "caf\u{e9} au\u{2026}");
        assert_eq!(cut_chars("caf\u{e9} au lait", 7), "caf\u{e9}\u{2026}");
        // One word longer than the room: cut inside it, as nothing else can.
        assert_eq!(cut_chars("abcdefghij", 5), "abcd\u{2026}");
        assert_eq!(cut_chars("ab", 0), "\u{2026}");
    }
}
