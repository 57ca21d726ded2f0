//! Any user text to a safe FTS5 query, keeping the words that say something.
//!
//! FTS5 has a query language of its own (`AND`, `OR`, `NOT`, `NEAR`, `*`,
//! `^`, `:` column filters, parentheses, `"` strings), so passing a user's
//! words through makes `src/auth.rs`, `don't`, `C++`, `-v` or an unbalanced
//! quote a syntax error. Instead each word becomes an FTS5 string: `"..."`
//! with inner quotes doubled, which FTS5 tokenizes exactly like the indexed
//! text (so `src/auth.rs` becomes the phrase `src auth rs`) and which can
//! never be read as an operator. A double-quoted span of the input stays one
//! phrase; an unbalanced quote is ignored. Words with no letter or digit
//! (`-`, `*`, `::`) are dropped: they cannot match anything. The last word
//! gets a prefix match (`"auth"*`) when it is long enough not to expand into
//! half the vocabulary, so a query typed halfway still finds.
//!
//! Questions and pasted bug reports are mostly glue: stop words and question
//! words (`how`, `did`, `the`, `we`) are set aside unless nothing else is
//! left, as is the amount word of "how long", "how many", "how often" (the
//! answer says "10 minutes", not "long"); repeated words count once. A
//! word repeated around `to` ("end to end") is searched as that phrase and
//! as its short form (`e2e`). Only a query longer than [`MAX_TERMS`]
//! content words is cut, to its most selective ones: the caller says how
//! many documents each word matches ([`Terms::keep_selective`]). Only a
//! short query typed halfway gets a prefix match on its last word.
//!
//! The result is `None` when nothing searchable is left; callers then list
//! by recency instead of failing.

use crate::stop_words::is_stop_word;

/// At most this many words are searched for; a longer query keeps its most
/// selective ones.
pub const MAX_TERMS: usize = 48;
/// At most this many words of the input are read (a pasted log is long).
const MAX_INPUT_WORDS: usize = 400;
/// The last word gets a prefix match from this many characters on.
const MIN_PREFIX_CHARS: usize = 3;

/// One searchable word or quoted phrase.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Term {
    /// The text searched for, quotes removed, whitespace normalized.
    pub text: String,
    /// From a quoted span of the input (a phrase, never a prefix).
    pub quoted: bool,
    /// A stop word or question word.
    pub stop: bool,
}

/// The words of a query, quotes honoured, ready to be joined.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Terms {
    terms: Vec<Term>,
    /// The position in `terms` of the input's last word, when it gets a
    /// prefix match.
    prefix: Option<usize>,
}

impl Terms {
    /// Reads the input; keeps the words that decide the ranking (all of
    /// them when every word is a stop word).
    pub fn parse(input: &str) -> Terms {
        let all = words(input);
        let prefix_text = all
            .last()
            .filter(|t| !t.quoted && long_tail(&t.text) && typed_halfway(input, all.len()))
            .map(|t| t.text.to_lowercase());
        let content = all.iter().any(|t| !t.stop);
        let mut terms: Vec<Term> = Vec::new();
        for t in all {
            if (content && t.stop) || terms.iter().any(|k| k.text.eq_ignore_ascii_case(&t.text)) {
                continue;
            }
            terms.push(t);
        }
        let prefix =
            prefix_text.and_then(|p| terms.iter().position(|t| t.text.to_lowercase() == p));
        Terms { terms, prefix }
    }

    pub fn is_empty(&self) -> bool {
        self.terms.is_empty()
    }

    pub fn len(&self) -> usize {
        self.terms.len()
    }

    /// The words searched for.
    pub fn terms(&self) -> &[Term] {
        &self.terms
    }

    /// Keeps the `max` most selective words: fewest matching documents
    /// first (`doc_count` says how many), words that match nothing dropped
    /// while another word matches, input order among equals.
    pub fn keep_selective(&mut self, max: usize, mut doc_count: impl FnMut(&str) -> u64) {
        let counts: Vec<u64> = self.terms.iter().map(|t| doc_count(&t.fts())).collect();
        let any_found = counts.iter().any(|&c| c > 0);
        let mut order: Vec<usize> = (0..self.terms.len())
            .filter(|&i| !any_found || counts[i] > 0)
            .collect();
        order.sort_by_key(|&i| (counts[i], i));
        order.truncate(max);
        order.sort_unstable();
        let prefix_term = self.prefix.map(|p| self.terms[p].text.clone());
        self.terms = order.iter().map(|&i| self.terms[i].clone()).collect();
        self.prefix = prefix_term.and_then(|p| self.terms.iter().position(|t| t.text == p));
    }

    /// Replaces each unquoted word of several parts (`testing-related`,
    /// `api/v2`) that matches nothing as a whole (`counts`, one per term) by
    /// its parts that are not stop words, as a plain BM25 over the same text
    /// would search them; returns whether anything changed. A record that
    /// says "related to testing" is then still found and ranked.
    pub fn split_unmatched(&mut self, counts: &[u64]) -> bool {
        let prefix_term = self.prefix.map(|p| self.terms[p].text.clone());
        let mut out: Vec<Term> = Vec::with_capacity(self.terms.len());
        let mut changed = false;
        for (i, t) in self.terms.iter().enumerate() {
            let all = parts(&t.text);
            let kept: Vec<String> = all.iter().filter(|p| !is_stop_word(p)).cloned().collect();
            if t.quoted || counts.get(i) != Some(&0) || all.len() < 2 || kept.is_empty() {
                out.push(t.clone());
                continue;
            }
            changed = true;
            for p in kept {
                if !out.iter().any(|k| k.text.eq_ignore_ascii_case(&p)) {
                    out.push(Term {
                        text: p,
                        quoted: false,
                        stop: false,
                    });
                }
            }
        }
        if changed {
            self.terms = out;
            self.prefix = prefix_term.and_then(|p| self.terms.iter().position(|t| t.text == p));
        }
        changed
    }

    /// Leaves out the unquoted words that are in `words` (lowercase), as
    /// glue, unless nothing else would be left; returns whether any was.
    pub fn set_aside(&mut self, words: &[String]) -> bool {
        let glue = |t: &Term| !t.quoted && words.contains(&t.text.to_lowercase());
        if self.terms.iter().all(glue) || !self.terms.iter().any(glue) {
            return false;
        }
        let prefix_term = self.prefix.map(|p| self.terms[p].text.clone());
        self.terms.retain(|t| !glue(t));
        self.prefix = prefix_term.and_then(|p| self.terms.iter().position(|t| t.text == p));
        true
    }

    /// Every word required (FTS5's implicit AND).
    pub fn all(&self) -> Option<String> {
        self.join(" ")
    }

    /// Any word suffices.
    pub fn any(&self) -> Option<String> {
        self.join(" OR ")
    }

    /// Any word suffices, leaving out the words marked in `skip` (one flag
    /// per term); None when nothing is left.
    pub fn any_except(&self, skip: &[bool]) -> Option<String> {
        self.join_where(" OR ", |i| !skip.get(i).copied().unwrap_or(false))
    }

    fn join(&self, sep: &str) -> Option<String> {
        self.join_where(sep, |_| true)
    }

    fn join_where(&self, sep: &str, keep: impl Fn(usize) -> bool) -> Option<String> {
        let parts: Vec<String> = self
            .terms
            .iter()
            .enumerate()
            .filter(|(i, _)| keep(*i))
            .map(|(i, t)| {
                let star = if self.prefix == Some(i) { "*" } else { "" };
                format!("{}{star}", t.fts())
            })
            .collect();
        (!parts.is_empty()).then(|| parts.join(sep))
    }
}

impl Term {
    /// The term as an FTS5 string.
    pub fn fts(&self) -> String {
        format!("\"{}\"", self.text)
    }
}

/// A word repeated around `to` ("end to end", "peer to peer") is one
/// compound, which developers also write with its initials around a 2
/// (`e2e`, `p2p`): it becomes that phrase, and the short form beside it.
fn reduplicated(words: Vec<Term>) -> Vec<Term> {
    let mut out = Vec::with_capacity(words.len());
    let mut i = 0;
    while i < words.len() {
        let compound = words.get(i..i + 3).and_then(|w| {
            let word = &w[0].text;
            let alphabetic = word.chars().count() > 1 && word.chars().all(char::is_alphabetic);
            let plain = w.iter().all(|t| !t.quoted);
            (plain && alphabetic && w[1].text.eq_ignore_ascii_case("to"))
                .then_some(word)
                .filter(|word| word.eq_ignore_ascii_case(&w[2].text))
        });
        let Some(word) = compound else {
            out.push(words[i].clone());
            i += 1;
            continue;
        };
        let word = word.to_lowercase();
        let initial: String = word.chars().take(1).collect();
        out.push(Term {
            text: format!("{word} to {word}"),
            quoted: true,
            stop: false,
        });
        out.push(Term {
            text: format!("{initial}2{initial}"),
            quoted: false,
            stop: false,
        });
        i += 3;
    }
    out
}

/// Every word and quoted phrase of the input that has a letter or digit.
fn words(input: &str) -> Vec<Term> {
    let mut out = Vec::new();
    let balanced = input.matches('"').count().is_multiple_of(2);
    let mut rest = input;
    let mut read = 0;
    while read < MAX_INPUT_WORDS {
        rest = rest.trim_start();
        if rest.is_empty() {
            break;
        }
        read += 1;
        let (word, quoted, next) = if balanced && rest.starts_with('"') {
            let body = &rest[1..];
            let end = body.find('"').unwrap_or(body.len());
            (&body[..end], true, body.get(end + 1..).unwrap_or(""))
        } else {
            let end = rest.find(char::is_whitespace).unwrap_or(rest.len());
            (&rest[..end], false, &rest[end..])
        };
        rest = next;
        let cleaned: String = word
            .chars()
            .map(|c| if c.is_control() { ' ' } else { c })
            .filter(|c| *c != '"')
            .collect();
        let text = cleaned.split_whitespace().collect::<Vec<_>>().join(" ");
        let text = if quoted { text } else { trim_prose(&text) };
        if text.chars().any(char::is_alphanumeric) {
            let after_how = out
                .last()
                .is_some_and(|t: &Term| t.text.eq_ignore_ascii_case("how"));
            let stop = !quoted && (is_stop_word(&text) || (after_how && asks_how_much(&text)));
            out.push(Term { text, quoted, stop });
        }
    }
    reduplicated(out)
}

/// Words that after "how" ask for an amount ("how long", "how many", "how
/// often"): part of the question word, not of its subject; the record
/// that answers says "10 minutes", not "long".
const HOW_MUCH: &[&str] = &[
    "big", "far", "large", "long", "many", "much", "often", "old", "soon",
];

fn asks_how_much(word: &str) -> bool {
    HOW_MUCH.contains(&word.to_lowercase().as_str())
}

/// The alphanumeric runs of a word, as the index's tokenizer cuts them.
fn parts(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|p| !p.is_empty())
        .map(str::to_owned)
        .collect()
}

/// Sentence punctuation around a word (`login?`, `(see`, `it,`) is not part
/// of it; inner punctuation (`src/auth.rs`, `don't`) is.
fn trim_prose(word: &str) -> String {
    word.trim_matches(|c: char| matches!(c, '?' | '!' | ',' | ';' | ':' | '(' | ')' | '.' | '\''))
        .to_owned()
}

/// Whether the input reads as typed halfway (a few words, the last one
/// not closed by sentence punctuation or a space): only then does its last
/// word get a prefix match. A finished question or a pasted report means its
/// words as they are.
fn typed_halfway(input: &str, words: usize) -> bool {
    let closed = input
        .chars()
        .last()
        .is_some_and(|c| c.is_whitespace() || matches!(c, '?' | '.' | '!'));
    words <= PREFIX_MAX_WORDS && !closed
}

/// Inputs of more words than this are never treated as typed halfway.
const PREFIX_MAX_WORDS: usize = 4;

/// Whether a word's last alphanumeric run is long enough for a prefix match.
fn long_tail(word: &str) -> bool {
    word.rsplit(|c: char| !c.is_alphanumeric())
        .next()
        .is_some_and(|tail| tail.chars().count() >= MIN_PREFIX_CHARS)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all(q: &str) -> Option<String> {
        Terms::parse(q).all()
    }

    #[test]
    fn an_amount_asked_with_how_is_glue_but_the_word_elsewhere_is_not() {
        assert_eq!(
            all("how long is a session kept").as_deref(),
            Some("\"session\" \"kept\"")
        );
        assert_eq!(all("How many retries?").as_deref(), Some("\"retries\""));
        assert_eq!(
            all("long polling timeout?").as_deref(),
            Some("\"long\" \"polling\" \"timeout\"")
        );
    }

    #[test]
    fn words_set_aside_leave_the_rest_or_nothing_is_set_aside() {
        let mut t = Terms::parse("what is still open on the payments epic?");
        assert!(t.set_aside(&["still".into(), "open".into()]));
        assert_eq!(t.all().as_deref(), Some("\"payments\" \"epic\""));
        let mut t = Terms::parse("still open?");
        assert!(!t.set_aside(&["still".into(), "open".into()]));
        assert_eq!(t.all().as_deref(), Some("\"open\""));
    }

    #[test]
    fn words_become_strings_and_operators_lose_their_power() {
        assert_eq!(all("login bug").as_deref(), Some("\"login\" \"bug\"*"));
        assert_eq!(
            all("fix NEAR NOT auth").as_deref(),
            Some("\"fix\" \"NEAR\" \"NOT\" \"auth\"*")
        );
        assert_eq!(all("src/auth.rs").as_deref(), Some("\"src/auth.rs\""));
        assert_eq!(all("NEAR(a b)").as_deref(), Some("\"NEAR(a\" \"b\""));
    }

    #[test]
    fn quotes_make_phrases_and_unbalanced_ones_are_ignored() {
        assert_eq!(
            all("\"password hash\" login").as_deref(),
            Some("\"password hash\" \"login\"*")
        );
        assert_eq!(
            all("\"password hash\"").as_deref(),
            Some("\"password hash\"")
        );
        assert_eq!(all("don't \"stop").as_deref(), Some("\"stop\"*"));
    }

    #[test]
    fn a_word_repeated_around_to_is_one_compound_with_its_short_form() {
        assert_eq!(
            Terms::parse("where do the end to end tests go?")
                .any()
                .as_deref(),
            Some("\"end to end\" OR \"e2e\" OR \"tests\"")
        );
        assert_eq!(
            Terms::parse("Peer-to-peer sync?").any().as_deref(),
            Some("\"Peer-to-peer\" OR \"sync\"")
        );
        // Only a word repeated: a move from one thing to another is not one.
        assert_eq!(
            Terms::parse("migrate sqlite to postgres?").any().as_deref(),
            Some("\"migrate\" OR \"sqlite\" OR \"postgres\"")
        );
    }

    #[test]
    fn nothing_searchable_is_none() {
        for q in ["", "   ", "-", "* : ^", "\"\"", "\u{0}\u{7}", "\"\" \""] {
            assert_eq!(all(q), None, "{q:?}");
        }
        assert_eq!(Terms::parse("a -").any().as_deref(), Some("\"a\""));
    }

    #[test]
    fn stop_words_and_question_words_are_set_aside_unless_alone() {
        assert_eq!(
            Terms::parse("How did we fix the login timeout?")
                .any()
                .as_deref(),
            Some("\"fix\" OR \"login\" OR \"timeout\"")
        );
        assert_eq!(
            Terms::parse("what is the").any().as_deref(),
            Some("\"what\" OR \"is\" OR \"the\"*")
        );
        // Quoted, a stop word is meant.
        assert_eq!(
            all("\"the who\" band").as_deref(),
            Some("\"the who\" \"band\"*")
        );
        // Repeats count once, whatever their case.
        assert_eq!(
            all("Cache cache CACHE miss").as_deref(),
            Some("\"Cache\" \"miss\"*")
        );
    }

    #[test]
    fn only_a_query_typed_halfway_gets_a_prefix_match() {
        assert_eq!(all("login timeo").as_deref(), Some("\"login\" \"timeo\"*"));
        // A finished question, a trailing space, a long text: words as they are.
        assert_eq!(
            all("login timeout?").as_deref(),
            Some("\"login\" \"timeout\"")
        );
        assert_eq!(
            all("login timeout ").as_deref(),
            Some("\"login\" \"timeout\"")
        );
        assert_eq!(
            all("importer panics on large files with chunk").as_deref(),
            Some("\"importer\" \"panics\" \"large\" \"files\" \"chunk\"")
        );
    }

    #[test]
    fn short_last_words_are_not_prefixed() {
        assert_eq!(all("ui to").as_deref(), Some("\"ui\""));
        assert_eq!(all("ui db").as_deref(), Some("\"ui\" \"db\""));
        assert_eq!(
            Terms::parse("a b c").any().as_deref(),
            Some("\"b\" OR \"c\"")
        );
        assert_eq!(
            Terms::parse("b cc dddd")
                .any_except(&[true, false, false])
                .as_deref(),
            Some("\"cc\" OR \"dddd\"*")
        );
        assert_eq!(Terms::parse("b").any_except(&[true]), None);
    }

    #[test]
    fn compound_words_that_match_nothing_are_searched_by_their_parts() {
        let mut terms = Terms::parse("testing-related decisions across the api/v2 \"a-b\"");
        // `testing-related` matches nothing as a phrase; `api/v2` does.
        assert!(terms.split_unmatched(&[0, 4, 9, 3, 0]));
        assert_eq!(
            terms.any().as_deref(),
            Some(
                "\"testing\" OR \"related\" OR \"decisions\" OR \"across\" OR \"api/v2\" OR \"a-b\""
            )
        );
        assert!(!terms.split_unmatched(&[1, 1, 1, 1, 1, 1]));
        // Parts that are stop words are left out, repeats once.
        let mut terms = Terms::parse("log out-of-the log?");
        assert!(terms.split_unmatched(&[3, 0]));
        assert_eq!(terms.any().as_deref(), Some("\"log\" OR \"out\""));
        // A compound of stop words only stays as it is.
        let mut terms = Terms::parse("of-the?");
        assert!(!terms.split_unmatched(&[0]));
        assert_eq!(terms.any().as_deref(), Some("\"of-the\""));
    }

    #[test]
    fn long_queries_keep_their_rarest_words_in_input_order() {
        let report = "When I run the importer on a large file it panics with \
                      index out of bounds in chunk_reader after the progress bar reaches \
                      ninety percent, and the log shows a retry storm before that happens";
        let mut terms = Terms::parse(report);
        assert!(terms.len() > 5);
        // Pretend document frequencies: common words match a lot, names a little.
        let df = |t: &str| -> u64 {
            match t {
                "\"chunk_reader\"" => 2,
                "\"panics\"" => 5,
                "\"retry\"" => 9,
                "\"storm\"" => 0,
                _ => 500,
            }
        };
        terms.keep_selective(3, df);
        assert_eq!(
            terms.any().as_deref(),
            Some("\"panics\" OR \"chunk_reader\" OR \"retry\"")
        );
        let many = (0..MAX_TERMS + 12)
            .map(|i| format!("w{i}"))
            .collect::<Vec<_>>()
            .join(" ");
        let mut terms = Terms::parse(&many);
        terms.keep_selective(MAX_TERMS, |_| 1);
        assert_eq!(terms.len(), MAX_TERMS);
        // The prefix word survives selection with its star.
        let mut terms = Terms::parse("zebra common handlers");
        terms.keep_selective(2, |t| if t.contains("common") { 90 } else { 1 });
        assert_eq!(terms.all().as_deref(), Some("\"zebra\" \"handlers\"*"));
    }
}
