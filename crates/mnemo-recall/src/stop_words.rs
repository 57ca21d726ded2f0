//! The one list of English words that say nothing about a subject, shared
//! by search ([`crate::query`]) and prompt-time recall ([`crate::prompt`]).
//!
//! Two tiers: [`is_stop_word`] is glue (articles, pronouns, auxiliaries,
//! prepositions, conjunctions, question words, contractions, the vague
//! verbs and nouns of a question ("how does it go", "know", "happen",
//! "thing", "already"), and the words with which one asks a memory
//! anything: "remember", "last time"); [`is_filler`] adds what people type to steer an agent ("please",
//! "continue", "fix", "check") and particles and negations ("up", "not"),
//! which in a prompt say what to do, not what it is about. Search keeps
//! those: "how did we fix the login" is about a fix, "scrollback not
//! working" about a failure. Small and explicit on purpose: a
//! word missing here still only weighs what its document frequency says.
//! Both lists are sorted (a test checks) for binary search.

/// Glue and question words (lowercase, `'` apostrophes; a prompt's words
/// are cut at apostrophes, and pieces under three letters are skipped).
const STOP_WORDS: &[&str] = &[
    "a",
    "about",
    "above",
    "actually",
    "after",
    "again",
    "all",
    "already",
    "also",
    "am",
    "an",
    "and",
    "any",
    "anything",
    "are",
    "aren't",
    "as",
    "at",
    "be",
    "because",
    "been",
    "before",
    "being",
    "below",
    "between",
    "both",
    "but",
    "by",
    "can",
    "can't",
    "could",
    "couldn't",
    "did",
    "didn't",
    "do",
    "does",
    "doesn't",
    "doing",
    "don't",
    "done",
    "during",
    "each",
    "ever",
    "everything",
    "few",
    "for",
    "from",
    "further",
    "get",
    "go",
    "goes",
    "going",
    "gone",
    "got",
    "had",
    "hadn't",
    "happen",
    "happened",
    "happens",
    "has",
    "hasn't",
    "have",
    "haven't",
    "having",
    "he",
    "her",
    "here",
    "here's",
    "hers",
    "him",
    "his",
    "how",
    "how's",
    "i",
    "i'd",
    "i'll",
    "i'm",
    "i've",
    "if",
    "in",
    "into",
    "is",
    "isn't",
    "it",
    "it's",
    "its",
    "itself",
    "just",
    "knew",
    "know",
    "knows",
    "last",
    "let's",
    "me",
    "more",
    "most",
    "my",
    "myself",
    "of",
    "on",
    "once",
    "only",
    "or",
    "other",
    "our",
    "ours",
    "ourselves",
    "own",
    "really",
    "recall",
    "remember",
    "same",
    "seem",
    "seems",
    "she",
    "should",
    "shouldn't",
    "so",
    "some",
    "something",
    "still",
    "stuff",
    "such",
    "tell",
    "than",
    "that",
    "that's",
    "the",
    "their",
    "theirs",
    "them",
    "themselves",
    "then",
    "there",
    "there's",
    "these",
    "they",
    "they're",
    "thing",
    "things",
    "think",
    "this",
    "those",
    "through",
    "time",
    "to",
    "too",
    "under",
    "until",
    "us",
    "very",
    "was",
    "wasn't",
    "way",
    "we",
    "we'd",
    "we'll",
    "we're",
    "we've",
    "went",
    "were",
    "weren't",
    "what",
    "what's",
    "when",
    "where",
    "where's",
    "which",
    "while",
    "who",
    "who's",
    "whom",
    "why",
    "why's",
    "will",
    "with",
    "won't",
    "would",
    "wouldn't",
    "you",
    "you'll",
    "you're",
    "you've",
    "your",
    "yours",
    "yourself",
];

/// What people type to steer an agent, beyond the glue.
const STEERING: &[&str] = &[
    "able",
    "add",
    "ahead",
    "change",
    "check",
    "code",
    "continue",
    "create",
    "down",
    "file",
    "files",
    "fine",
    "fix",
    "good",
    "great",
    "help",
    "implement",
    "let",
    "lets",
    "like",
    "look",
    "make",
    "need",
    "next",
    "nice",
    "no",
    "nor",
    "not",
    "now",
    "off",
    "ok",
    "okay",
    "out",
    "over",
    "perfect",
    "please",
    "proceed",
    "remove",
    "run",
    "see",
    "show",
    "sure",
    "thank",
    "thanks",
    "thx",
    "try",
    "up",
    "update",
    "use",
    "want",
    "work",
    "write",
    "yeah",
    "yep",
    "yes",
];

/// True for a word (any case, either apostrophe) that is glue or a
/// question word.
pub fn is_stop_word(word: &str) -> bool {
    let lower = word.to_lowercase().replace('\u{2019}', "'");
    STOP_WORDS.binary_search(&lower.as_str()).is_ok()
}

/// True for a lowercase word that says nothing about a prompt's subject:
/// a stop word, or a word that steers the agent.
pub fn is_filler(word: &str) -> bool {
    STOP_WORDS.binary_search(&word).is_ok() || STEERING.binary_search(&word).is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_lists_are_sorted_lowercase_and_distinct() {
        for list in [STOP_WORDS, STEERING] {
            let mut sorted = list.to_vec();
            sorted.sort_unstable();
            sorted.dedup();
            assert_eq!(sorted, list);
            assert!(list.iter().all(|w| *w == w.to_lowercase()));
        }
        assert!(STEERING.iter().all(|w| !is_stop_word(w)));
    }

    #[test]
    fn glue_is_recognised_in_any_case_and_apostrophe() {
        for w in ["The", "didn't", "DIDN\u{2019}T", "remember", "which"] {
            assert!(is_stop_word(w), "{w}");
        }
        for w in ["fix", "timeout", "not", "up", "login"] {
            assert!(!is_stop_word(w), "{w}");
        }
        assert!(is_filler("fix") && is_filler("thanks") && is_filler("not"));
        assert!(!is_filler("timeout"));
    }
}
