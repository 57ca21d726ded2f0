//! Any user text to a safe FTS5 query.
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
//! The result is `None` when nothing searchable is left; callers then list
//! by recency instead of failing.

/// At most this many words are used; more only slow the query down.
const MAX_TERMS: usize = 16;
/// The last word gets a prefix match from this many characters on.
const MIN_PREFIX_CHARS: usize = 3;

/// The words of a query, quotes honoured, ready to be joined.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Terms {
    terms: Vec<String>,
    prefix_last: bool,
}

impl Terms {
    pub fn parse(input: &str) -> Terms {
        let mut terms: Vec<String> = Vec::new();
        let mut quoted_last = false;
        let balanced = input.matches('"').count().is_multiple_of(2);
        let mut rest = input;
        while !rest.is_empty() && terms.len() < MAX_TERMS {
            rest = rest.trim_start();
            if rest.is_empty() {
                break;
            }
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
            let cleaned = cleaned.split_whitespace().collect::<Vec<_>>().join(" ");
            if cleaned.chars().any(char::is_alphanumeric) {
                terms.push(cleaned);
                quoted_last = quoted;
            }
        }
        let prefix_last = !quoted_last
            && terms.last().is_some_and(|t| {
                t.rsplit(|c: char| !c.is_alphanumeric())
                    .next()
                    .is_some_and(|tail| tail.chars().count() >= MIN_PREFIX_CHARS)
            });
        Terms { terms, prefix_last }
    }

    pub fn is_empty(&self) -> bool {
        self.terms.is_empty()
    }

    pub fn len(&self) -> usize {
        self.terms.len()
    }

    /// Every word required (FTS5's implicit AND).
    pub fn all(&self) -> Option<String> {
        self.join(" ")
    }

    /// Any word suffices: the fallback when requiring all finds nothing.
    pub fn any(&self) -> Option<String> {
        self.join(" OR ")
    }

    fn join(&self, sep: &str) -> Option<String> {
        if self.terms.is_empty() {
            return None;
        }
        let last = self.terms.len() - 1;
        let parts: Vec<String> = self
            .terms
            .iter()
            .enumerate()
            .map(|(i, t)| {
                let star = if i == last && self.prefix_last {
                    "*"
                } else {
                    ""
                };
                format!("\"{t}\"{star}")
            })
            .collect();
        Some(parts.join(sep))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all(q: &str) -> Option<String> {
        Terms::parse(q).all()
    }

    #[test]
    fn words_become_strings_and_operators_lose_their_power() {
        assert_eq!(all("login bug").as_deref(), Some("\"login\" \"bug\"*"));
        assert_eq!(
            all("fix AND NOT auth").as_deref(),
            Some("\"fix\" \"AND\" \"NOT\" \"auth\"*")
        );
        assert_eq!(all("src/auth.rs").as_deref(), Some("\"src/auth.rs\""));
        assert_eq!(all("NEAR(a b)").as_deref(), Some("\"NEAR(a\" \"b)\""));
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
        assert_eq!(all("don't \"stop").as_deref(), Some("\"don't\" \"stop\"*"));
    }

    #[test]
    fn nothing_searchable_is_none() {
        for q in ["", "   ", "-", "* : ^", "\"\"", "\u{0}\u{7}", "\"\" \""] {
            assert_eq!(all(q), None, "{q:?}");
        }
        assert_eq!(Terms::parse("a -").any().as_deref(), Some("\"a\""));
    }

    #[test]
    fn short_last_words_are_not_prefixed_and_terms_are_capped() {
        assert_eq!(all("go to").as_deref(), Some("\"go\" \"to\""));
        let many = (0..40)
            .map(|i| format!("w{i}"))
            .collect::<Vec<_>>()
            .join(" ");
        assert_eq!(Terms::parse(&many).len(), MAX_TERMS);
        assert_eq!(
            Terms::parse("a b c").any().as_deref(),
            Some("\"a\" OR \"b\" OR \"c\"")
        );
    }
}
