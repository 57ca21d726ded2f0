//! Re-ranking what FTS5 found by how well each record answers the query.
//!
//! FTS5's `bm25()` normalizes by the whole record's length, so a terse
//! record (a log-like title and little else) gets every match scaled up,
//! and a short title with two common words can beat the long record that
//! contains the rare ones. The few best candidates are therefore read and
//! scored again:
//!
//! - BM25F ([`bm25f`]): each query word's occurrences are weighted by
//!   field (title first) and normalized by that field's length, then
//!   saturated once per word, so a word repeated everywhere cannot outweigh
//!   two different words, and a long narrative does not dilute the title;
//! - coverage ([`coverage`]): the share of the query's weight (each word
//!   weighs its inverse document frequency) that the record contains, in
//!   its text or its identifier words; records with more of the selective
//!   words come first. A word found only in the user's own request, or
//!   only inside the file paths of a record whose title just names files
//!   ([`log_like`]), earns part of its weight: restating the question or
//!   naming the file is not saying what was done.
//!
//! Word matching here is a cheap approximation of the index's (lowercase,
//! plural and `-ed`/`-ing` endings folded, a short word also matching a
//! longer form of itself); it only weighs candidates that FTS5 already
//! matched, so it never decides what is found.

use rusqlite::{Connection, OptionalExtension};

use crate::Result;
use crate::ids::{ItemRef, Kind};
use crate::query::{Term, Terms};
use crate::text::has_unsegmented;

/// How much each query word weighs, from the number of documents it matches.
#[derive(Debug, Clone)]
pub struct TermWeights {
    /// Per query term, in the order of [`Terms::terms`].
    pub idf: Vec<f64>,
    /// The document counts they come from.
    pub doc_counts: Vec<u64>,
}

impl TermWeights {
    /// Lucene-style smoothed IDF: positive however common the word.
    pub fn new(doc_counts: &[u64], total_docs: u64) -> TermWeights {
        let n = total_docs.max(1) as f64;
        let idf = doc_counts
            .iter()
            .map(|&df| {
                let df = df as f64;
                (1.0 + (n - df + 0.5).max(0.0) / (df + 0.5)).ln().max(0.01)
            })
            .collect();
        TermWeights {
            idf,
            doc_counts: doc_counts.to_vec(),
        }
    }
}

/// A query's terms as the re-ranker compares them: each term's words,
/// lowercased and folded once per search (not once per candidate).
#[derive(Debug, Clone, Default)]
pub struct FoldedTerms {
    words: Vec<Vec<String>>,
}

impl FoldedTerms {
    /// Folds the words of every term, in the order of [`Terms::terms`].
    pub fn new(terms: &Terms) -> FoldedTerms {
        FoldedTerms {
            words: terms
                .terms()
                .iter()
                .map(|t| folded_words(&t.text))
                .collect(),
        }
    }

    /// Which of a record's words can matter to these terms (see
    /// [`WordFilter`]).
    pub fn filter(&self) -> WordFilter {
        let mut filter = WordFilter {
            pairs: Some(vec![0; PAIRS / 64]),
        };
        for w in self.words.iter().flatten() {
            filter.add(w);
        }
        filter
    }
}

/// Two-byte starts: one bit per pair of bytes.
const PAIRS: usize = 1 << 16;

/// Which words of a record a [`Field`] keeps: a record's words are mostly
/// not the query's, and sorting and storing all of them was most of the
/// re-ranker's cost on a long record. A word a query word can match (the
/// same word, or a longer form of it: see [`Field::count`]) starts with
/// the query word's first two bytes, so an ASCII word whose first two
/// letters begin no query word is only counted (the field's length), never
/// stored. Words of one letter and words in other scripts are always kept:
/// keeping more than needed changes nothing, only costs.
#[derive(Debug, Clone, Default)]
pub struct WordFilter {
    /// None: every word is kept.
    pairs: Option<Vec<u64>>,
}

impl WordFilter {
    /// Keeps every word (a record read for any query).
    pub fn all() -> WordFilter {
        WordFilter { pairs: None }
    }

    fn add(&mut self, folded: &str) {
        if let (Some(pairs), [a, b, ..]) = (&mut self.pairs, folded.as_bytes()) {
            let i = pair_index(*a, *b);
            pairs[i / 64] |= 1 << (i % 64);
        }
    }

    /// Whether a raw word (as cut from the text, not lowercased) may match.
    fn keeps(&self, raw: &str) -> bool {
        let (Some(pairs), [a, b, ..]) = (&self.pairs, raw.as_bytes()) else {
            return true;
        };
        if !raw.is_ascii() {
            return true;
        }
        let i = pair_index(a.to_ascii_lowercase(), b.to_ascii_lowercase());
        pairs[i / 64] & (1 << (i % 64)) != 0
    }
}

fn pair_index(a: u8, b: u8) -> usize {
    (a as usize) << 8 | b as usize
}

/// The share of the query's weight a record contains, 0 to 1.
pub fn coverage(terms: &FoldedTerms, weights: &TermWeights, doc: &Doc) -> f64 {
    let total: f64 = weights.idf.iter().sum();
    if total <= 0.0 {
        return 1.0;
    }
    let found: f64 = terms
        .words
        .iter()
        .zip(&weights.idf)
        .map(|(words, w)| w * doc.share_words(words))
        .sum();
    found / total
}

/// How much a query word counts toward coverage when the record has it
/// only in the words the user asked with (a summary's request): the user's
/// question restated is not the record that answers it.
pub const ASKED_SHARE: f64 = 0.5;

/// How much a query word counts toward coverage when a record whose title
/// only names files ([`log_like`]: "Edited src/payment_retry_test.go") has
/// it only inside file paths: naming the file that a question's words
/// spell is not saying what was done in it, which the record that did the
/// work says.
pub const NAMED_SHARE: f64 = 0.5;

/// BM25's term-frequency saturation.
const K1: f64 = 1.2;
/// BM25's length normalization, per field.
const B: f64 = 0.75;

/// BM25F over a record's fields: each word's occurrences weighted by field
/// and normalized by that field's length against its average over the
/// candidates (`avg_len`), then saturated once per word. Unlike FTS5's
/// `bm25()`, which normalizes by the whole record's length, a long
/// narrative does not dilute a match in the title.
pub fn bm25f(terms: &FoldedTerms, weights: &TermWeights, doc: &Doc, avg_len: &[f64]) -> f64 {
    let mut score = 0.0;
    for (words, idf) in terms.words.iter().zip(&weights.idf) {
        if words.is_empty() {
            continue;
        }
        let mut tf = 0.0;
        for (i, field) in doc.fields.iter().enumerate() {
            let n = words.iter().map(|w| field.count(w)).min().unwrap_or(0);
            if n == 0 {
                continue;
            }
            let avg = avg_len.get(i).copied().unwrap_or(1.0).max(1.0);
            let norm = 1.0 - B + B * field.len as f64 / avg;
            tf += field.weight * n as f64 / norm;
        }
        score += idf * tf / (K1 + tf);
    }
    score
}

/// Average word count of each field over some records.
pub fn average_lengths(docs: &[&Doc]) -> Vec<f64> {
    let fields = docs.iter().map(|d| d.fields.len()).max().unwrap_or(0);
    (0..fields)
        .map(|i| {
            let total: usize = docs
                .iter()
                .map(|d| d.fields.get(i).map_or(0, |f| f.len))
                .sum();
            total as f64 / docs.len().max(1) as f64
        })
        .collect()
}

/// One field of a record: its BM25F weight, its length in words, and its
/// distinct words, folded and sorted, with their occurrences (a word and
/// its longer forms sit together, so a lookup is a binary search).
#[derive(Debug, Default)]
pub struct Field {
    pub weight: f64,
    /// The user's own words (a summary's request), not what was done.
    pub asked: bool,
    len: usize,
    vocab: Vec<(String, usize)>,
    /// The words said outside file paths, when they were told apart
    /// ([`Field::paths_apart`]; None: not told apart).
    prose: Option<Vec<(String, usize)>>,
}

impl Field {
    pub fn new(weight: f64, text: &str) -> Field {
        Field::filtered(weight, text, &WordFilter::all())
    }

    /// A field that stores only the words `filter` keeps (its length
    /// counts them all).
    pub fn filtered(weight: f64, text: &str, filter: &WordFilter) -> Field {
        let mut len = 0;
        let mut words: Vec<String> = Vec::new();
        for raw in raw_words(text) {
            len += 1;
            if filter.keeps(raw) {
                words.push(fold_word(raw));
            }
        }
        Field {
            weight,
            asked: false,
            len,
            vocab: counted(words),
            prose: None,
        }
    }

    /// [`Field::filtered`], which also tells the words said in prose from
    /// those only inside file paths ([`path_like`]).
    pub fn paths_apart(weight: f64, text: &str, filter: &WordFilter) -> Field {
        let mut field = Field::filtered(weight, text, filter);
        let prose: Vec<String> = text
            .split_whitespace()
            .filter(|t| !path_like(t))
            .flat_map(raw_words)
            .filter(|w| filter.keeps(w))
            .map(fold_word)
            .collect();
        field.prose = Some(counted(prose));
        field
    }

    /// Occurrences of a folded word (a word of four or more letters also
    /// matches a longer form of itself: `config`, `configs`, `configured`).
    /// A word in an unsegmented script (see [`has_unsegmented`]) counts
    /// wherever it occurs inside a word: there, a run of characters is a
    /// whole phrase.
    fn count(&self, w: &str) -> usize {
        count_in(&self.vocab, w)
    }

    /// Occurrences of a folded word outside file paths, when the field
    /// told them apart ([`Field::count`] otherwise).
    fn count_in_prose(&self, w: &str) -> usize {
        count_in(self.prose.as_ref().unwrap_or(&self.vocab), w)
    }
}

/// Folded words, sorted, each once with its number of occurrences.
fn counted(mut words: Vec<String>) -> Vec<(String, usize)> {
    words.sort_unstable();
    let mut vocab: Vec<(String, usize)> = Vec::new();
    for w in words {
        match vocab.last_mut() {
            Some((last, n)) if *last == w => *n += 1,
            _ => vocab.push((w, 1)),
        }
    }
    vocab
}

/// Occurrences of a folded word in a sorted vocabulary (see [`Field::count`]).
fn count_in(vocab: &[(String, usize)], w: &str) -> usize {
    if has_unsegmented(w) {
        return vocab.iter().map(|(d, n)| d.matches(w).count() * n).sum();
    }
    let loose = w.chars().count() >= 4;
    let start = vocab.partition_point(|(d, _)| d.as_str() < w);
    vocab[start..]
        .iter()
        .take_while(|(d, _)| d.starts_with(w))
        .filter(|(d, _)| d == w || (loose && d.len() <= w.len() + 4))
        .map(|(_, n)| n)
        .sum()
}

/// Whether a whitespace-separated token names a file: it has a path
/// separator, or reads `name.ext` (an extension of one to four letters or
/// digits, one a letter), with nothing but name characters in it.
fn path_like(token: &str) -> bool {
    let t = token.trim_matches(|c: char| !(c.is_alphanumeric() || matches!(c, '/' | '\\' | '_')));
    let named =
        |c: char| c.is_alphanumeric() || matches!(c, '_' | '-' | '.' | '/' | '\\' | '~' | ':');
    if !t.chars().any(char::is_alphabetic) || !t.chars().all(named) {
        return false;
    }
    t.contains(['/', '\\'])
        || t.rsplit_once('.').is_some_and(|(name, ext)| {
            !name.is_empty()
                && (1..=4).contains(&ext.chars().count())
                && ext.chars().any(char::is_alphabetic)
        })
}

/// The words of one record, field by field.
#[derive(Debug, Default)]
pub struct Doc {
    pub fields: Vec<Field>,
    /// Its title only says which tool touched which files ([`log_like`]):
    /// the words of those paths are all it says of them.
    pub log_like: bool,
    /// An observation's type.
    pub obs_type: Option<String>,
}

impl Doc {
    /// A record with its text in one field (tests, and callers without fields).
    pub fn new(text: &str) -> Doc {
        Doc {
            fields: vec![Field::new(1.0, text)],
            obs_type: None,
            log_like: false,
        }
    }

    /// Whether every word of the term is in one of the record's fields.
    pub fn contains(&self, term: &Term) -> bool {
        self.contains_words(&folded_words(&term.text))
    }

    /// The share of a term's weight the record earns: all of it when its
    /// words are in what the record says, [`ASKED_SHARE`] when they are only
    /// in the words the user asked with, none when absent.
    pub fn share(&self, term: &Term) -> f64 {
        self.share_words(&folded_words(&term.text))
    }

    /// [`Doc::share`] of a term's folded words (see [`FoldedTerms`]).
    fn share_words(&self, words: &[String]) -> f64 {
        let said = |f: &Field, w: &str| !f.asked && f.count_in_prose(w) > 0;
        let named = |f: &Field, w: &str| !f.asked && f.count(w) > 0;
        if self.has_words(words, said) {
            1.0
        } else if self.has_words(words, named) {
            NAMED_SHARE
        } else if self.contains_words(words) {
            ASKED_SHARE
        } else {
            0.0
        }
    }

    /// Whether every one of a term's folded words is in one of the record's
    /// fields; false for a term without words.
    fn contains_words(&self, words: &[String]) -> bool {
        self.has_words(words, |f, w| f.count(w) > 0)
    }

    /// Whether every one of the words is in one of the fields as `found`
    /// says; false for no words.
    fn has_words(&self, words: &[String], found: impl Fn(&Field, &str) -> bool) -> bool {
        !words.is_empty()
            && words
                .iter()
                .all(|w| self.fields.iter().any(|f| found(f, w)))
    }
}

/// Lowercase alphanumeric runs, as the index's tokenizer cuts them.
fn tokens(text: &str) -> impl Iterator<Item = String> + '_ {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
}

/// The alphanumeric runs of `text`, as the index's tokenizer cuts them.
fn raw_words(text: &str) -> impl Iterator<Item = &str> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
}

/// A word lowercased and folded ([`fold`]).
fn fold_word(raw: &str) -> String {
    let mut w = if raw.is_ascii() {
        raw.to_ascii_lowercase()
    } else {
        raw.to_lowercase()
    };
    fold(&mut w);
    w
}

/// The words of `text`, lowercased and folded.
fn folded_words(text: &str) -> Vec<String> {
    raw_words(text).map(fold_word).collect()
}

/// Folds common English endings of a lowercase word, in place: `caches`/
/// `cached` → `cach`, `retries` → `retry`, `fixed`/`fixing` → `fix`.
fn fold(w: &mut String) {
    let n = w.len();
    if n > 4 && w.ends_with("ies") {
        w.truncate(n - 3);
        w.push('y');
    } else if n > 5 && w.ends_with("ing") {
        w.truncate(n - 3);
    } else if n > 4 && w.ends_with("ed") {
        w.truncate(n - 2);
    } else if n > 3 && w.ends_with('s') && !w.ends_with("ss") {
        w.truncate(n - 1);
    }
    if w.ends_with('e') && w.len() > 4 {
        w.pop();
    }
    // `logg` (from `logging`) → `log`, `stopp` → `stop`.
    let b = w.as_bytes();
    let n = b.len();
    if n >= 4
        && b[n - 1] == b[n - 2]
        && b[n - 1].is_ascii_lowercase()
        && !matches!(b[n - 1], b'l' | b's' | b'z' | b'e' | b'o')
    {
        w.truncate(n - 1);
    }
}

/// BM25F field weights of an observation: title, subtitle, narrative,
/// facts, concepts, files, identifier words.
const OBSERVATION_FIELDS: [f64; 7] = [3.0, 2.0, 1.0, 1.5, 1.5, 2.0, 1.0];
/// The words of a title that a log line is made of when nothing better
/// was known: the tool's verb and what it touched ("Edited …", "Changed 2
/// files in …", "Ran `…`", "Read a.go and b.go", "Command `…` failed, then
/// passed after editing 1 file"). These are the record writer's own words,
/// the same on every project.
const LOG_WORDS: &[&str] = &[
    "changed", "command", "commands", "created", "edited", "editing", "failed", "file", "files",
    "lines", "more", "passed", "ran", "read", "searched", "updated", "wrote",
];

/// Whether a title only says which tool touched what: once commands (in
/// backticks), file paths, numbers, glue and [`LOG_WORDS`] are set aside,
/// no word is left.
pub fn log_like(title: &str) -> bool {
    let outside_commands = title.split('`').step_by(2);
    let mut words = outside_commands
        .flat_map(str::split_whitespace)
        .filter(|t| !path_like(t))
        .flat_map(raw_words)
        .map(str::to_lowercase);
    !title.trim().is_empty()
        && words.all(|w| {
            w.chars().all(|c| c.is_ascii_digit())
                || crate::stop_words::is_stop_word(&w)
                || LOG_WORDS.contains(&w.as_str())
        })
}

/// A summary: request, investigated, learned and completed, next steps,
/// notes, identifier words. The request (the user's words) keeps its
/// weight: what a developer told the agent is memory too; a word found
/// only there earns less coverage ([`ASKED_SHARE`]).
const SUMMARY_FIELDS: [f64; 6] = [2.0, 1.0, 1.5, 1.5, 1.0, 1.0];
/// A prompt: its text, identifier words.
const PROMPT_FIELDS: [f64; 2] = [1.0, 1.0];

/// A record's searchable fields, read from the store (empty when gone).
/// Only the words `filter` keeps are stored (see [`WordFilter`]).
pub fn record_doc(conn: &Connection, id: ItemRef, filter: &WordFilter) -> Result<Doc> {
    let (sql, weights): (&str, &[f64]) = match id.kind {
        Kind::Observation => (
            "SELECT title, subtitle, narrative, facts, concepts,
                    files_read || ' ' || files_modified, idents, type
             FROM observations WHERE id = ?1",
            &OBSERVATION_FIELDS,
        ),
        Kind::Summary => (
            "SELECT request, investigated, learned || ' ' || completed, next_steps,
                    notes, idents
             FROM summaries WHERE id = ?1",
            &SUMMARY_FIELDS,
        ),
        Kind::Prompt => (
            "SELECT text, idents FROM prompts WHERE id = ?1",
            &PROMPT_FIELDS,
        ),
    };
    let row: Option<(Vec<String>, Option<String>)> = conn
        .prepare_cached(sql)?
        .query_row([id.id], |r| {
            let texts = (0..weights.len())
                .map(|i| r.get::<_, String>(i))
                .collect::<rusqlite::Result<_>>()?;
            let obs_type = match id.kind {
                Kind::Observation => Some(r.get(weights.len())?),
                _ => None,
            };
            Ok((texts, obs_type))
        })
        .optional()?;
    let (texts, obs_type) = row.unwrap_or_default();
    let log_like = id.kind == Kind::Observation && texts.first().is_some_and(|t| log_like(t));
    let field = if log_like {
        Field::paths_apart
    } else {
        Field::filtered
    };
    let mut fields: Vec<Field> = texts
        .iter()
        .zip(weights)
        .map(|(t, &w)| field(w, t, filter))
        .collect();
    if id.kind == Kind::Summary
        && let Some(request) = fields.first_mut()
    {
        request.asked = true;
    }
    Ok(Doc {
        fields,
        obs_type,
        log_like,
    })
}

/// How much of its relevance a record keeps for what it is, whatever the
/// query: 1 for now. The one place for a penalty known before the hits
/// are read; freshness is known only for the hits shown, and applied to
/// them (`search::demote_stale`), supersession after ranking (see
/// `crate::supersede`).
pub fn record_factor(_doc: &Doc) -> f64 {
    1.0
}

/// Words with which a question asks what was decided.
const DECISION_WORDS: &[&str] = &[
    "decide",
    "decided",
    "decision",
    "decisions",
    "chose",
    "choose",
    "chosen",
    "agreed",
    "settled",
    "policy",
    "rule",
];

/// Whether a query asks for a decision ("what did we decide about …").
pub fn asks_for_decisions(query: &str) -> bool {
    tokens(query).any(|w| DECISION_WORDS.contains(&w.as_str()))
}

/// Phrases with which a question asks where the work stands ("what is
/// still open", "what's left to do", "next steps"): turn summaries answer
/// those (what was completed, what was left open), not single changes.
const STATUS_PHRASES: &[&str] = &[
    "still open",
    "left to do",
    "s left", // what's left: `what`, `s`, `left`
    "is left",
    "are left",
    "remaining",
    "remains",
    "next steps",
    "next step",
    "unfinished",
    "not done",
    "not finished",
    "todo",
    "to do",
    "where are we",
    "where did we leave",
    "status of",
    "progress on",
];

/// Whether a query asks where the work stands.
pub fn asks_for_status(query: &str) -> bool {
    !status_words(query).is_empty()
}

/// The words with which a query asks where the work stands ("still open",
/// "next steps"): they say what the question wants to know, not what it is
/// about, so the record that answers ("the epic is closed") need not
/// repeat them. Empty when the query does not ask for a status.
pub fn status_words(query: &str) -> Vec<String> {
    let words = format!(" {} ", tokens(query).collect::<Vec<_>>().join(" "));
    STATUS_PHRASES
        .iter()
        .filter(|p| words.contains(&format!(" {p} ")))
        .flat_map(|p| p.split(' '))
        .map(str::to_owned)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_questions_are_recognised() {
        for q in [
            "what is still open on the payments epic",
            "what's left to do for the migration",
            "next steps on auth?",
            "where did we leave the importer",
        ] {
            assert!(asks_for_status(q), "{q}");
        }
        for q in [
            "when did annotations get an open or closed state",
            "how do I open the settings file",
            "which tests were left out of CI",
        ] {
            assert!(!asks_for_status(q), "{q}");
        }
    }

    #[test]
    fn titles_that_only_say_which_tool_touched_what_are_log_like() {
        for t in [
            "Edited docs/architecture/checkpoint-scenarios.md",
            "Changed 2 files in cmd/entire/cli/",
            "Read manual_commit_hooks.go and paths.go",
            "Command `go test ./...` failed, then passed after editing 1 file",
            "Ran `mise run lint`",
        ] {
            assert!(log_like(t), "{t}");
        }
        for t in [
            "Fix the `ListOrphanedSessionStates` function (cleanup.go)",
            "Closed the payments epic",
            "Edited the retry policy for declined cards",
            "",
        ] {
            assert!(!log_like(t), "{t}");
        }
    }

    #[test]
    fn words_only_inside_file_paths_of_a_log_like_record_earn_half_coverage() {
        let terms = FoldedTerms::new(&Terms::parse("checkout session"));
        let weights = TermWeights::new(&[3, 3], 1000);
        let filter = WordFilter::all();
        let title = "Edited tests/checkout_session_test.rs";
        let named = Doc {
            fields: vec![Field::paths_apart(3.0, title, &filter)],
            obs_type: None,
            log_like: true,
        };
        assert!((coverage(&terms, &weights, &named) - NAMED_SHARE).abs() < 1e-9);
        let said = Doc {
            fields: vec![Field::paths_apart(
                3.0,
                "Checkout session expired early",
                &filter,
            )],
            obs_type: None,
            log_like: false,
        };
        assert!((coverage(&terms, &weights, &said) - 1.0).abs() < 1e-9);
        for token in ["src/auth.rs", "app.js", "(cleanup.go)", "C:\\x\\y.txt"] {
            assert!(path_like(token), "{token}");
        }
        for token in [
            "e2e",
            "v1.2",
            "state.WorktreePath",
            "time.Now().Format",
            "end.",
        ] {
            assert!(!path_like(token), "{token}");
        }
    }

    fn term(text: &str) -> Term {
        Term {
            text: text.into(),
            quoted: false,
            stop: false,
        }
    }

    #[test]
    fn words_are_folded_once_to_their_stems() {
        let pairs = [
            ("Caches", "cach"),
            ("cached", "cach"),
            ("retries", "retry"),
            ("fixing", "fix"),
            ("Logging", "log"),
            ("stopped", "stop"),
            ("class", "class"),
            ("configure", "configur"),
            ("size", "size"),
            ("Größe", "größ"),
        ];
        for (word, stem) in pairs {
            assert_eq!(folded_words(word), [stem], "{word}");
        }
        assert_eq!(folded_words("src/auth.rs"), ["src", "auth", "rs"]);
    }

    #[test]
    fn words_match_across_plurals_and_endings() {
        let doc = Doc::new("Retries capped; caches invalidated when configs change (src/auth.rs)");
        for t in [
            "retry",
            "cache",
            "config",
            "invalidate",
            "src/auth.rs",
            "auth",
        ] {
            assert!(doc.contains(&term(t)), "{t}");
        }
        for t in ["login", "src/login.rs", "ca"] {
            assert!(!doc.contains(&term(t)), "{t}");
        }
    }

    #[test]
    fn words_only_in_the_users_own_question_earn_half_coverage() {
        let terms = FoldedTerms::new(&Terms::parse("upload timeout"));
        let weights = TermWeights::new(&[3, 3], 1000);
        let mut asked = Field::new(2.0, "why does the upload time out");
        asked.asked = true;
        let restated = Doc {
            fields: vec![asked, Field::new(1.0, "timeout raised")],
            obs_type: None,
            log_like: false,
        };
        let share = coverage(&terms, &weights, &restated);
        assert!((share - (1.0 + ASKED_SHARE) / 2.0).abs() < 1e-9, "{share}");
        assert!(restated.contains(&term("upload")));
        let answered = Doc::new("upload timeout raised");
        assert!((coverage(&terms, &weights, &answered) - 1.0).abs() < 1e-9);
    }

    #[test]
    fn a_record_read_for_a_query_scores_as_the_whole_record() {
        let texts = [
            "Configured retries for src/auth.rs; a x config Größe größer 日本語の設定",
            "Caching logins: the cache was cold, LOGIN retried 3 times (RetryPolicy)",
            "",
        ];
        let mut dropped = 0;
        for query in [
            "config retry src/auth.rs",
            "a x größe 日本",
            "cache login policy 3",
            "RetryPolicy cold",
        ] {
            let terms = Terms::parse(query);
            let folded = FoldedTerms::new(&terms);
            let filter = folded.filter();
            let weights = TermWeights::new(&vec![3; terms.len()], 100);
            let whole = |t: &str| Doc {
                fields: vec![Field::new(2.0, t), Field::new(1.0, texts[1])],
                obs_type: None,
                log_like: false,
            };
            let read = |t: &str| Doc {
                fields: vec![
                    Field::filtered(2.0, t, &filter),
                    Field::filtered(1.0, texts[1], &filter),
                ],
                obs_type: None,
                log_like: false,
            };
            for text in texts {
                let (a, b) = (whole(text), read(text));
                let lens: Vec<usize> = a.fields.iter().map(|f| f.len).collect();
                assert_eq!(lens, b.fields.iter().map(|f| f.len).collect::<Vec<_>>());
                for (f, g) in a.fields.iter().zip(&b.fields) {
                    dropped += f.vocab.len() - g.vocab.len();
                }
                let avg = [4.0, 9.0];
                assert_eq!(
                    coverage(&folded, &weights, &a),
                    coverage(&folded, &weights, &b),
                    "{query} / {text}"
                );
                assert_eq!(
                    bm25f(&folded, &weights, &a, &avg),
                    bm25f(&folded, &weights, &b, &avg),
                    "{query} / {text}"
                );
            }
        }
        assert!(dropped > 0, "the filter keeps fewer words");
    }

    #[test]
    fn coverage_weighs_rare_words_more() {
        let terms = FoldedTerms::new(&Terms::parse("login redis timeout"));
        let weights = TermWeights::new(&[500, 3, 40], 1000);
        let rare = coverage(&terms, &weights, &Doc::new("redis timeout raised"));
        let common = coverage(&terms, &weights, &Doc::new("login page"));
        assert!(rare > 0.8 && common < 0.1, "{rare} {common}");
        let all = coverage(&terms, &weights, &Doc::new("login redis timeouts"));
        assert!((all - 1.0).abs() < 1e-9);
    }
}
