//! Identifier words: the other spelling of every compound name in a text.
//!
//! FTS5's `unicode61` tokenizer reads `parseConfig` as one token
//! (`parseconfig`) and `parse_config` or `parse-config` as two (`parse`,
//! `config`), so neither spelling finds the other and `parse config` does
//! not find `parseConfig`. The full-text indexes therefore carry one more
//! column, `idents`, with what the tokenizer cannot see: the words of each
//! camelCase or PascalCase name (`parse Config`), and the joined form of
//! each snake_case or kebab-case name (`parse_config` gives `parseconfig`),
//! each name's words kept together so that a quoted phrase still matches.
//! With the original text beside it, every compound name is then findable
//! by its words, as one word, and in either style.
//!
//! Plain character scanning, no regex: prompts are indexed on the hook path.

use std::collections::HashSet;

/// The `idents` column text for a record's texts (empty when none has a
/// compound name).
pub fn identifier_words<'a>(texts: impl IntoIterator<Item = &'a str>) -> String {
    let mut seen: HashSet<String> = HashSet::new();
    let mut out = String::new();
    for text in texts {
        for word in compound_words(text) {
            let extra = expand(word);
            if extra.is_empty() || !seen.insert(word.to_lowercase()) {
                continue;
            }
            if !out.is_empty() {
                out.push(' ');
            }
            out.push_str(&extra);
        }
    }
    out
}

/// Runs of letters, digits, `_` and `-` that contain a letter.
fn compound_words(text: &str) -> impl Iterator<Item = &str> {
    text.split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '-'))
        .map(|w| w.trim_matches(|c| c == '_' || c == '-'))
        .filter(|w| w.chars().any(char::is_alphabetic))
}

/// What the tokenizer misses in one word: the words of its camelCase
/// segments, and its joined form when `_` or `-` separate it.
fn expand(word: &str) -> String {
    let segments: Vec<&str> = word.split(['_', '-']).filter(|s| !s.is_empty()).collect();
    let mut parts: Vec<String> = Vec::new();
    let mut split_any = false;
    for segment in &segments {
        let pieces = camel_pieces(segment);
        split_any |= pieces.len() > 1;
        parts.extend(pieces.into_iter().map(str::to_lowercase));
    }
    let joined = segments.len() > 1;
    if !split_any && !joined {
        return String::new();
    }
    let mut out = if split_any {
        parts.join(" ")
    } else {
        String::new()
    };
    if joined {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(&parts.concat());
    }
    out
}

/// `parseConfig` → `parse`, `Config`; `HTTPServer` → `HTTP`, `Server`;
/// `utf8` and `UPPER` stay whole.
fn camel_pieces(segment: &str) -> Vec<&str> {
    let chars: Vec<(usize, char)> = segment.char_indices().collect();
    let mut pieces = Vec::new();
    let mut start = 0;
    for i in 1..chars.len() {
        let (at, c) = chars[i];
        let prev = chars[i - 1].1;
        let next_lower = chars.get(i + 1).is_some_and(|(_, n)| n.is_lowercase());
        let boundary = c.is_uppercase()
            && (prev.is_lowercase()
                || prev.is_ascii_digit()
                || (prev.is_uppercase() && next_lower));
        if boundary {
            pieces.push(&segment[start..at]);
            start = at;
        }
    }
    pieces.push(&segment[start..]);
    pieces
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn camel_names_give_their_words_and_snake_names_their_joined_form() {
        assert_eq!(identifier_words(["call parseConfig()"]), "parse config");
        assert_eq!(identifier_words(["ParseConfig"]), "parse config");
        assert_eq!(identifier_words(["parse_config"]), "parseconfig");
        assert_eq!(identifier_words(["src/config_loader.rs"]), "configloader");
        assert_eq!(
            identifier_words(["HTTPServer and --set-upstream"]),
            "http server setupstream"
        );
        assert_eq!(
            identifier_words(["load_jsonFile"]),
            "load json file loadjsonfile"
        );
    }

    #[test]
    fn plain_words_give_nothing_and_names_count_once() {
        assert_eq!(identifier_words(["plain words, UPPER utf8 42 x-"]), "");
        assert_eq!(
            identifier_words(["parseConfig", "then ParseConfig again"]),
            "parse config"
        );
        assert_eq!(identifier_words(["日本語 émile_zola"]), "émilezola");
    }
}
