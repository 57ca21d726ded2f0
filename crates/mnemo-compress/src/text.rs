//! Small string tools shared by the offline compressor, the renderer and the
//! answer sanitizer: cutting at character boundaries, head-and-tail cuts with
//! a marker, first meaningful lines, and splitting prose into sentences.

/// The largest index `<= i` that is a character boundary of `s`.
pub(crate) fn floor_boundary(s: &str, i: usize) -> usize {
    let mut i = i.min(s.len());
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// The smallest index `>= i` that is a character boundary of `s`.
pub(crate) fn ceil_boundary(s: &str, i: usize) -> usize {
    let mut i = i.min(s.len());
    while !s.is_char_boundary(i) {
        i += 1;
    }
    i
}

/// At most `max` bytes of `s`, ending with `…` when cut. Never splits a
/// character.
pub(crate) fn clamp(s: &str, max: usize) -> String {
    if s.len() <= max {
        return s.to_owned();
    }
    let end = floor_boundary(s, max.saturating_sub('…'.len_utf8()));
    let mut out = s[..end].trim_end().to_owned();
    out.push('…');
    out
}

/// At most `max` bytes of `s`, cut after its last whole sentence that fits
/// (no marker needed), else at a clause boundary (`;`, `,`, a dash) or a
/// word, with `…`.
pub(crate) fn clamp_sentences(s: &str, max: usize) -> String {
    if s.len() <= max {
        return s.to_owned();
    }
    let room = floor_boundary(s, max.saturating_sub('…'.len_utf8()));
    let head = &s[..room];
    let sentence_end = ['.', '!', '?']
        .iter()
        .filter_map(|c| head.rfind(&format!("{c} ")))
        .max();
    if let Some(end) = sentence_end.filter(|&e| e >= max / 2) {
        return s[..=end].to_owned();
    }
    let clause = ["; ", ", ", " — ", " - "]
        .iter()
        .filter_map(|c| head.rfind(c))
        .max();
    if let Some(end) = clause.filter(|&e| e >= max / 2) {
        return format!("{}…", s[..end].trim_end());
    }
    clamp_words(s, max)
}

/// At most `max` bytes of `s`, cut between words or path segments
/// ([`mnemo_core::words::cut`]), with `…` when cut.
pub(crate) fn clamp_words(s: &str, max: usize) -> String {
    mnemo_core::words::cut(s, max)
}

/// `s` with its first letter upper-case.
pub(crate) fn capitalize(s: &str) -> String {
    let mut chars = s.chars();
    match chars.next() {
        Some(c) => c.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}

/// Items joined by `"; "`, without repeats (ignoring case), as many whole
/// items as fit in `max` bytes, then how many were left out.
pub(crate) fn join_within(items: Vec<String>, max: usize) -> String {
    let mut seen = std::collections::HashSet::new();
    let items: Vec<String> = items
        .into_iter()
        .filter(|i| !i.trim().is_empty() && seen.insert(i.trim_end_matches('.').to_lowercase()))
        .collect();
    let mut out = String::new();
    let mut kept = 0;
    for (n, item) in items.iter().enumerate() {
        let reserve = if n + 1 < items.len() { 20 } else { 0 };
        let sep = if out.is_empty() { 0 } else { 2 };
        if out.len() + sep + item.len() + reserve > max {
            break;
        }
        if sep > 0 {
            // A sentence's own full stop before `;` would read twice.
            if out.ends_with('.') && !out.ends_with("..") {
                out.pop();
            }
            out.push_str("; ");
        }
        out.push_str(item);
        kept += 1;
    }
    if kept == 0
        && let Some(first) = items.first()
    {
        out = clamp_sentences(first, max.saturating_sub(20));
        kept = 1;
    }
    if kept < items.len() {
        out.push_str(&format!(" (and {} more)", items.len() - kept));
    }
    out
}

/// Joins items as `a, b or c`.
pub(crate) fn join_or(items: &[String]) -> String {
    match items {
        [] => String::new(),
        [one] => one.clone(),
        [init @ .., last] => format!("{} or {last}", init.join(", ")),
    }
}

/// `s` collapsed to one line (runs of white space become one space), then
/// clamped to `max` bytes.
pub(crate) fn one_line(s: &str, max: usize) -> String {
    let mut out = String::with_capacity(s.len().min(max + 8));
    for word in s.split_whitespace() {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(word);
        if out.len() > max + 8 {
            break;
        }
    }
    clamp(&out, max)
}

/// The marker left where bytes were cut out of a text sent to a model.
pub(crate) fn cut_marker(bytes: usize) -> String {
    format!("[… {bytes} bytes cut …]")
}

/// Keeps about `keep` bytes of `text`: two thirds from the head and one third
/// from the tail, around a [`cut_marker`]. Cuts move to a nearby line break
/// when there is one, so that lines stay whole.
pub(crate) fn head_tail(text: &str, keep: usize) -> String {
    if text.len() <= keep {
        return text.to_owned();
    }
    let head_len = keep - keep / 3;
    let tail_len = keep / 3;
    let mut head_end = floor_boundary(text, head_len);
    if let Some(nl) = text[..head_end].rfind('\n')
        && head_end - nl < 120
    {
        head_end = nl + 1;
    }
    let mut tail_start = ceil_boundary(text, text.len() - tail_len);
    if tail_start < head_end {
        tail_start = head_end;
    }
    if let Some(nl) = text[tail_start..].find('\n')
        && nl < 120
        && tail_start + nl + 1 < text.len()
    {
        tail_start += nl + 1;
    }
    let cut = tail_start - head_end;
    let mut out = String::with_capacity(keep + 32);
    out.push_str(&text[..head_end]);
    if !out.is_empty() && !out.ends_with('\n') {
        out.push('\n');
    }
    out.push_str(&cut_marker(cut));
    out.push('\n');
    out.push_str(&text[tail_start..]);
    out
}

/// True for a line that only says how a command exited (`Exit code 1`).
fn is_exit_code_line(line: &str) -> bool {
    let l = line.trim();
    l.strip_prefix("Exit code")
        .or_else(|| l.strip_prefix("exit code"))
        .is_some_and(|rest| rest.trim().chars().all(|c| c.is_ascii_digit() || c == '-'))
}

/// Words that mark the line of an output that says what went wrong.
const ERROR_WORDS: &[&str] = &[
    "error",
    "fail",
    "panicked",
    "exception",
    "traceback",
    "fatal",
    "not found",
    "no such",
    "cannot",
    "can't",
    "could not",
    "denied",
    "assert",
    "undefined",
    "invalid",
    "refused",
    "timed out",
    "syntaxerror",
];

/// The line of `texts` (searched in order) that best says what went wrong:
/// the first line naming an error, else the first non-empty line that is not
/// a bare `Exit code N`. Clamped to `max` bytes.
pub(crate) fn error_headline<'a>(
    texts: impl IntoIterator<Item = &'a str> + Clone,
    max: usize,
) -> Option<String> {
    for text in texts.clone() {
        for line in text.lines().take(400) {
            let l = line.trim();
            if l.is_empty() || is_exit_code_line(l) {
                continue;
            }
            let lower = l.to_ascii_lowercase();
            if ERROR_WORDS.iter().any(|w| lower.contains(w)) {
                // pytest marks error lines with a leading `E   `.
                let l = l.strip_prefix("E  ").map_or(l, str::trim_start);
                return Some(one_line(l, max));
            }
        }
    }
    for text in texts {
        if let Some(l) = text
            .lines()
            .map(str::trim)
            .find(|l| !l.is_empty() && !is_exit_code_line(l))
        {
            return Some(one_line(l, max));
        }
    }
    None
}

/// The number in an `Exit code N` line, if `text` starts with one.
pub(crate) fn exit_code_in(text: &str) -> Option<i64> {
    let first = text.lines().next()?.trim();
    let rest = first
        .strip_prefix("Exit code")
        .or_else(|| first.strip_prefix("exit code"))?;
    rest.trim().parse().ok()
}

/// Prose split into sentences: one per line or bullet, and lines split after
/// `. `, `! ` or `? ` when a capital letter or a backtick follows. Markdown
/// markers (quotes, bullets, numbering, emphasis) are removed; code blocks, table
/// rows and headings (a `#` line, a line that is all bold) skipped: a
/// heading labels what follows and says nothing by itself.
pub(crate) fn sentences(text: &str, max_sentences: usize) -> Vec<String> {
    let mut out = Vec::new();
    let mut in_code = false;
    for line in text.lines() {
        let trimmed = line.trim();
        if trimmed.starts_with("```") {
            in_code = !in_code;
            continue;
        }
        if in_code || trimmed.is_empty() || trimmed.starts_with('|') {
            continue;
        }
        // A quoted line (`> text`) is read as its text.
        let mut l = trimmed;
        while let Some(rest) = l
            .strip_prefix("> ")
            .or_else(|| l.strip_prefix('>').filter(|r| r.is_empty()))
        {
            l = rest.trim_start();
        }
        if l.is_empty() || is_heading(l) {
            continue;
        }
        for bullet in ["- ", "* ", "• ", "+ "] {
            if let Some(rest) = l.strip_prefix(bullet) {
                l = rest.trim();
            }
        }
        let digits = l.chars().take_while(char::is_ascii_digit).count();
        if digits > 0
            && let Some(rest) = l[digits..]
                .strip_prefix(". ")
                .or_else(|| l[digits..].strip_prefix(") "))
        {
            l = rest.trim();
        }
        let cleaned = l.replace("**", "").replace("__", "");
        let mut start = 0;
        let bytes = cleaned.as_bytes();
        let mut i = 0;
        // Never inside a code span (`ALTER TABLE ... ADD`), nor after an
        // ellipsis, which goes on with the same sentence.
        let mut in_tick = false;
        while i + 2 < bytes.len() {
            if bytes[i] == b'`' {
                in_tick = !in_tick;
            }
            if !in_tick
                && matches!(bytes[i], b'.' | b'!' | b'?')
                && !(i > 0 && bytes[i] == b'.' && bytes[i - 1] == b'.')
                && bytes[i + 1] == b' '
                && (bytes[i + 2].is_ascii_uppercase() || bytes[i + 2] == b'`')
            {
                push_sentence(&mut out, &cleaned[start..=i]);
                start = i + 2;
                i += 2;
                continue;
            }
            i += 1;
        }
        push_sentence(&mut out, &cleaned[start..]);
        if out.len() >= max_sentences {
            out.truncate(max_sentences);
            break;
        }
    }
    out
}

/// A markdown heading line (`## Root cause`), a line that is one bold
/// label (`**Root cause**`, `**What changed:**`), or a rule (`---`).
fn is_heading(line: &str) -> bool {
    if line.len() >= 3
        && line
            .chars()
            .all(|c| matches!(c, '-' | '*' | '_' | '=' | ' '))
    {
        return true;
    }
    let hashes = line.chars().take_while(|&c| c == '#').count();
    if (1..=6).contains(&hashes) && line[hashes..].starts_with(' ') {
        return true;
    }
    let label = line.trim_end_matches(':');
    for mark in ["**", "__"] {
        if let Some(inner) = label
            .strip_prefix(mark)
            .and_then(|l| l.trim_end_matches(':').strip_suffix(mark))
        {
            return !inner.contains(mark) && !inner.contains(". ");
        }
    }
    false
}

fn push_sentence(out: &mut Vec<String>, s: &str) {
    let s = s.trim();
    // Headings like "Summary:" say nothing by themselves.
    if s.is_empty() || (s.ends_with(':') && s.len() < 40) {
        return;
    }
    out.push(one_line(s, 400));
}

/// Joins items as `a, b and c`.
pub(crate) fn join_and(items: &[String]) -> String {
    match items {
        [] => String::new(),
        [one] => one.clone(),
        [init @ .., last] => format!("{} and {last}", init.join(", ")),
    }
}

/// `items` listed up to `max`, then `and N more`.
pub(crate) fn list_some(items: &[String], max: usize) -> String {
    if items.len() <= max {
        return join_and(items);
    }
    let mut shown: Vec<String> = items[..max].to_vec();
    shown.push(format!("{} more", items.len() - max));
    join_and(&shown)
}

/// `n thing` or `n things`.
pub(crate) fn plural(n: usize, thing: &str) -> String {
    if n == 1 {
        format!("1 {thing}")
    } else {
        format!("{n} {thing}s")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clamp_respects_characters() {
        assert_eq!(clamp("héllo wörld", 100), "héllo wörld");
        let c = clamp("ééééé", 6);
        assert!(c.len() <= 6 && c.ends_with('…'), "{c}");
    }

    #[test]
    fn cuts_fall_between_sentences_clauses_or_words() {
        let s = "The router used ids. Links broke for every user, so slugs came in; tests pass.";
        assert_eq!(
            clamp_sentences(s, 60),
            "The router used ids. Links broke for every user…"
        );
        assert_eq!(clamp_sentences(s, 36), "The router used ids.");
        assert_eq!(
            clamp_sentences(s, 70),
            "The router used ids. Links broke for every user, so slugs came in…"
        );
        assert_eq!(clamp_words("alpha beta gamma delta", 15), "alpha beta…");
        assert_eq!(
            join_within(vec!["a".into(), "A".into(), "b".repeat(50), "c".into()], 30),
            "a (and 2 more)"
        );
    }

    #[test]
    fn head_tail_marks_the_cut() {
        let text: String = (0..200).map(|i| format!("line {i}\n")).collect();
        let cut = head_tail(&text, 300);
        assert!(cut.starts_with("line 0\n"));
        assert!(cut.ends_with("line 199\n"));
        assert!(cut.contains("bytes cut …]"), "{cut}");
        assert!(cut.len() < 400, "{}", cut.len());
        assert_eq!(head_tail("short", 300), "short");
    }

    #[test]
    fn error_headlines_skip_exit_codes() {
        let err = "Exit code 101\n   Compiling x\nerror[E0425]: cannot find value `y`";
        assert_eq!(
            error_headline([err], 200).unwrap(),
            "error[E0425]: cannot find value `y`"
        );
        assert_eq!(error_headline(["Exit code 3"], 200), None);
        assert_eq!(
            error_headline(["Exit code 3", "boom"], 200).unwrap(),
            "boom"
        );
        assert_eq!(exit_code_in("Exit code 3\nmore"), Some(3));
        assert_eq!(exit_code_in("nope"), None);
    }

    #[test]
    fn sentences_never_split_inside_code_or_after_an_ellipsis() {
        assert_eq!(
            sentences(
                "The migration uses `ALTER TABLE ... ADD` without a default. It fails. Wait... Then it works.",
                5
            ),
            [
                "The migration uses `ALTER TABLE ... ADD` without a default.",
                "It fails.",
                "Wait... Then it works."
            ]
        );
    }

    #[test]
    fn headings_are_not_sentences() {
        let s = sentences(
            "## Root cause analysis\n**The problem**\n---\n**Fixed:** the parser skips blank lines.\n> - #3 was the cause because the loop ended early.",
            10,
        );
        assert_eq!(
            s,
            [
                "Fixed: the parser skips blank lines.",
                "#3 was the cause because the loop ended early."
            ]
        );
    }

    #[test]
    fn sentences_split_prose_and_bullets() {
        let s = sentences(
            "## Summary:\nFixed the login check. It now uses `check_hash`.\n\n- Added tests\n```\ncode\n```\n1. Next, add rate limiting",
            10,
        );
        assert_eq!(
            s,
            [
                "Fixed the login check.",
                "It now uses `check_hash`.",
                "Added tests",
                "Next, add rate limiting"
            ]
        );
    }
}
