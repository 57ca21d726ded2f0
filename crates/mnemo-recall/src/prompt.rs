//! Prompt-time recall: the few memories most relevant to what the user just
//! asked, added to the prompt (UserPromptSubmit), or nothing.
//!
//! The prompt is cut into terms: files it names (`src/auth.py`, `auth.py`),
//! code symbols (anything in backticks, `snake_case`, `camelCase`,
//! `a::b`), and words, minus stop words and conversational filler ("thanks",
//! "continue", "fix it"). Each term is looked up in the full-text indexes of
//! observations and turn summaries (bounded: the newest [`PER_TERM`] rows a
//! term matches), which also says how selective it is: a term that few rows
//! match weighs more (`ln(1 + 1000 / rows)`), files and symbols twice as
//! much. A memory is relevant when its matched terms weigh at least
//! [`MIN_SCORE`] and it matched a file or a symbol, two words, or one rare,
//! long word. Nothing relevant, nothing added.
//!
//! What the session already has is never repeated: items given earlier
//! (the SessionStart index, file history, earlier prompts; see [`shown`]) and
//! the session's own observations and summaries (the agent saw that work
//! happen). The answer is a handful of lines within a character budget,
//! wrapped in `<mnemo-context>` so that capture strips it.
//!
//! This is the hook path: plain indexed lookups, no regex, no allocation
//! that grows with the store.
//!
//! [`shown`]: crate::shown

use std::collections::{HashMap, HashSet};
use std::path::Path;

use mnemo_store::freshness::{self, Check, Freshness};
use mnemo_store::parse_json_list;
use rusqlite::{Connection, OptionalExtension};

use crate::Result;
use crate::context::type_marker;
use crate::ids::{ItemRef, Kind};
pub use crate::stop_words::is_filler;
use crate::text::{CONTEXT_CLOSE, CONTEXT_OPEN, display_path, js_len, main_file, one_line};
use crate::when::Clock;

/// Rows read per term and table: enough to tell a selective term from a
/// common one, and the newest of its matches.
pub const PER_TERM: i64 = 200;
/// Least total weight of a relevant memory.
pub const MIN_SCORE: f64 = 5.0;
/// A memory matched by a single word needs a word this rare (rows)...
const RARE_ROWS: usize = 5;
/// ...and this long (characters).
const RARE_LEN: usize = 5;
/// Most terms of each sort looked up (long pasted text keeps its first).
const MAX_STRONG_TERMS: usize = 4;
const MAX_WORD_TERMS: usize = 8;
/// Most candidates fetched to find the few to show.
const MAX_FETCHED: usize = 40;

/// What the prompt is about, as full-text queries.
#[derive(Debug, Clone, PartialEq)]
pub struct Term {
    /// The FTS5 query (quoted phrases only; safe).
    pub query: String,
    /// A file or a code symbol (rather than a word).
    pub strong: bool,
    /// Characters of the word (for the rare-word rule).
    pub len: usize,
}

/// What to recall for.
#[derive(Debug, Clone)]
pub struct PromptRequest<'a> {
    pub project: i64,
    pub root: &'a Path,
    /// The session's row, whose own items are not recalled.
    pub session: Option<i64>,
    /// The prompt's [`terms`] (of its text stripped of private parts).
    pub terms: &'a [Term],
    /// Items the session was already given.
    pub exclude: &'a HashSet<ItemRef>,
    pub max_items: usize,
    pub budget_chars: usize,
    /// Only this person's own memories, none a teammate's machine sent
    /// through sync (`[sync] others = false`); otherwise theirs are marked
    /// `[noted by NAME]` (see [`crate::authors`]).
    pub mine_only: bool,
}

/// The memories to add, and their ids.
#[derive(Debug, Clone, PartialEq)]
pub struct PromptRecall {
    pub text: String,
    pub shown: Vec<ItemRef>,
}

/// True for a prompt the host wrote rather than the user: a background
/// task's `<task-notification>`, `<local-command-…>` output, an
/// `[Request interrupted by user]` marker, the summary that continues a
/// compacted conversation.
pub fn is_injected(prompt: &str) -> bool {
    let t = prompt.trim();
    t.starts_with('<')
        || (t.starts_with('[') && t.ends_with(']'))
        || mnemo_core::host_text::host_text(t).is_some()
}

/// The prompt's terms: files and symbols first, then words.
pub fn terms(prompt: &str) -> Vec<Term> {
    let mut strong: Vec<Term> = Vec::new();
    let mut words: Vec<Term> = Vec::new();
    let mut seen: HashSet<String> = HashSet::new();
    let mut push = |list: &mut Vec<Term>, t: Term| {
        if seen.insert(t.query.clone()) {
            list.push(t);
        }
    };
    for (token, quoted) in tokens(prompt) {
        if let Some(t) = file_term(token).or_else(|| symbol_term(token, quoted)) {
            push(&mut strong, t);
            continue;
        }
        for word in token
            .split(|c: char| !c.is_alphanumeric())
            .filter(|w| !w.is_empty())
        {
            let w = word.to_lowercase();
            let len = w.chars().count();
            if len < 3 || is_filler(&w) || w.chars().all(|c| c.is_ascii_digit()) {
                continue;
            }
            push(
                &mut words,
                Term {
                    query: format!("\"{w}\""),
                    strong: false,
                    len,
                },
            );
        }
    }
    strong.truncate(MAX_STRONG_TERMS);
    words.truncate(MAX_WORD_TERMS);
    strong.extend(words);
    strong
}

/// White-space separated tokens with surrounding punctuation trimmed; text
/// in backticks comes as its own tokens, marked quoted.
fn tokens(prompt: &str) -> Vec<(&str, bool)> {
    let mut out = Vec::new();
    for (i, part) in prompt.split('`').enumerate() {
        let quoted = i % 2 == 1;
        for raw in part.split_whitespace() {
            let t = raw.trim_matches(|c: char| {
                !(c.is_alphanumeric() || c == '_' || c == '/' || c == '.' || c == '~')
            });
            let t = t.trim_end_matches('.');
            if !t.is_empty() {
                out.push((t, quoted));
            }
        }
    }
    out
}

/// The alphanumeric runs of `text`, lowercased.
fn parts(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|p| !p.is_empty())
        .map(str::to_lowercase)
        .collect()
}

fn phrase(parts: &[String]) -> String {
    format!("\"{}\"", parts.join(" "))
}

/// A path (`src/auth.py`) or a file name with an extension (`auth.py`): the
/// phrase of its last three components' words.
fn file_term(token: &str) -> Option<Term> {
    if token.contains("://") {
        return None;
    }
    let name = token.rsplit('/').next().unwrap_or(token);
    let has_ext = name.rsplit_once('.').is_some_and(|(stem, ext)| {
        !stem.is_empty()
            && (1..=5).contains(&ext.len())
            && ext.chars().all(|c| c.is_ascii_alphanumeric())
            && ext.chars().any(|c| c.is_ascii_alphabetic())
    });
    let is_path = token.contains('/') && token.split('/').filter(|p| !p.is_empty()).count() >= 2;
    if !has_ext && !is_path {
        return None;
    }
    let tail: Vec<&str> = token.split('/').filter(|p| !p.is_empty()).collect();
    let tail = tail[tail.len().saturating_sub(3)..].join("/");
    let words = parts(&tail);
    (!words.is_empty()).then(|| Term {
        query: phrase(&words),
        strong: true,
        len: tail.chars().count(),
    })
}

/// A code identifier: in backticks, `snake_case`, `camelCase`/`PascalCase`
/// with an inner capital, or `a::b`. Matched as the phrase of its pieces,
/// or (camel case) as the one word the index holds.
fn symbol_term(token: &str, quoted: bool) -> Option<Term> {
    let inner_capital = token
        .chars()
        .zip(token.chars().skip(1))
        .any(|(a, b)| a.is_lowercase() && b.is_uppercase());
    let snake = token.trim_matches('_').contains('_');
    let path = token.contains("::");
    if !(quoted || inner_capital || snake || path) {
        return None;
    }
    let pieces: Vec<String> = token
        .split(|c: char| !c.is_alphanumeric())
        .filter(|p| !p.is_empty())
        .flat_map(camel_pieces)
        .collect();
    let whole = parts(token);
    if pieces.is_empty() || (whole.len() == 1 && is_filler(&whole[0])) {
        return None;
    }
    let mut query = phrase(&pieces);
    if whole != pieces {
        query = format!("({query} OR {})", phrase(&whole));
    }
    Some(Term {
        query,
        strong: true,
        len: token.chars().count(),
    })
}

/// `parseConfigV2` → `parse`, `config`, `v2` (lowercase).
fn camel_pieces(run: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut cur = String::new();
    let mut prev_lower = false;
    for c in run.chars() {
        if c.is_uppercase() && prev_lower && !cur.is_empty() {
            out.push(std::mem::take(&mut cur));
        }
        prev_lower = c.is_lowercase() || c.is_ascii_digit();
        cur.extend(c.to_lowercase());
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

/// How much a match of a term that `rows` of the store's `total` rows
/// match is worth: rare is worth more, and a term most of a (small) store
/// matches, such as a word of the project's own path, next to nothing.
fn weight(rows: usize, total: usize, strong: bool) -> f64 {
    let rows = rows.max(1) as f64;
    let spread = (rows / total.max(1) as f64).min(1.0);
    let w = (1.0 + 1000.0 / rows).ln() * (1.0 - spread);
    if strong { 2.0 * w } else { w }
}

#[derive(Debug, Default)]
struct Match {
    score: f64,
    words: usize,
    strong: bool,
    rare_long_word: bool,
}

impl Match {
    fn relevant(&self) -> bool {
        self.score >= MIN_SCORE && (self.strong || self.words >= 2 || self.rare_long_word)
    }
}

/// The memories relevant to the prompt, or None.
pub fn recall(
    conn: &Connection,
    req: &PromptRequest<'_>,
    clock: &Clock,
) -> Result<Option<PromptRecall>> {
    if req.max_items == 0 {
        return Ok(None);
    }
    if req.terms.is_empty() {
        return Ok(None);
    }
    let (ranked, fresh) = ranked_items(conn, req)?;

    // Lines, each with the items it stands for (a memory recorded twice
    // is one line, and both count as given).
    let mut lines: Vec<String> = Vec::new();
    let mut items: Vec<Vec<ItemRef>> = Vec::new();
    for (item, _) in ranked.into_iter().take(MAX_FETCHED) {
        let Some(mut line) = item_line(conn, item, req, clock)? else {
            continue;
        };
        if item.kind == Kind::Observation {
            line.push_str(Freshness::marker(fresh.get(&item.id).copied()));
        }
        let key = same_as_key(&line);
        if let Some(i) = lines.iter().position(|l| same_as_key(l) == key) {
            items[i].push(item);
            continue;
        }
        if lines.len() >= req.max_items {
            break;
        }
        lines.push(line);
        items.push(vec![item]);
    }
    Ok(
        render(&lines, req.budget_chars).map(|(text, n)| PromptRecall {
            text,
            shown: items.into_iter().take(n).flatten().collect(),
        }),
    )
}

/// The items that match the prompt's terms, best first, at most
/// [`MAX_FETCHED`]; memories whose files changed since rank lower.
fn ranked_items(conn: &Connection, req: &PromptRequest<'_>) -> Result<(Ranked, Freshnesses)> {
    let total: i64 = conn
        .prepare_cached(
            "SELECT (SELECT coalesce(max(id), 0) FROM observations)
                  + (SELECT coalesce(max(id), 0) FROM summaries)",
        )?
        .query_row([], |r| r.get(0))?;
    let mut matches: HashMap<ItemRef, Match> = HashMap::new();
    for term in req.terms {
        let obs = matching(conn, "observations_fts", &term.query)?;
        let sums = matching(conn, "summaries_fts", &term.query)?;
        let rows = obs.len() + sums.len();
        if rows == 0 {
            continue;
        }
        let w = weight(rows, total as usize, term.strong);
        let hits = obs
            .into_iter()
            .map(ItemRef::observation)
            .chain(sums.into_iter().map(ItemRef::summary));
        for item in hits {
            let m = matches.entry(item).or_default();
            m.score += w;
            if term.strong {
                m.strong = true;
            } else {
                m.words += 1;
                m.rare_long_word |= rows <= RARE_ROWS && term.len >= RARE_LEN;
            }
        }
    }
    let mut ranked: Vec<(ItemRef, f64)> = matches
        .into_iter()
        .filter(|(item, m)| m.relevant() && !req.exclude.contains(item))
        .map(|(item, m)| (item, m.score))
        .collect();
    ranked.sort_by(|a, b| b.1.total_cmp(&a.1).then(b.0.id.cmp(&a.0.id)));
    ranked.truncate(MAX_FETCHED);
    let fresh = stale_last(conn, req, &mut ranked)?;
    Ok((ranked, fresh))
}

type Ranked = Vec<(ItemRef, f64)>;
type Freshnesses = HashMap<i64, Freshness>;

/// Lowers the score of observations whose files changed or are gone since
/// they were recorded (`stat` only: this runs on the hook path) and of
/// decisions a later decision replaced, re-sorts.
fn stale_last(
    conn: &Connection,
    req: &PromptRequest<'_>,
    ranked: &mut [(ItemRef, f64)],
) -> Result<Freshnesses> {
    let ids: Vec<i64> = ranked
        .iter()
        .filter(|(i, _)| i.kind == Kind::Observation)
        .map(|(i, _)| i.id)
        .collect();
    let root = req.root.to_string_lossy();
    let fresh = freshness::of_observations(conn, &ids, Some(&root), Check::StatOnly)?;
    let replaced = superseded(conn, &ids)?;
    for (item, score) in ranked.iter_mut() {
        if item.kind == Kind::Observation {
            *score *= Freshness::rank_factor(fresh.get(&item.id).copied());
            if replaced.contains(&item.id) {
                *score *= SUPERSEDED_FACTOR;
            }
        }
    }
    ranked.sort_by(|a, b| b.1.total_cmp(&a.1).then(b.0.id.cmp(&a.0.id)));
    Ok(fresh)
}

/// What a replaced decision keeps of its score: the one in force first.
const SUPERSEDED_FACTOR: f64 = 0.25;

/// Which of `ids` are decisions a later decision replaced: one query for
/// all of them (this runs on the hook path).
fn superseded(conn: &Connection, ids: &[i64]) -> Result<std::collections::HashSet<i64>> {
    if ids.is_empty() {
        return Ok(std::collections::HashSet::new());
    }
    let list = serde_json::to_string(ids).unwrap_or_else(|_| "[]".to_owned());
    let mut stmt = conn.prepare_cached(
        "SELECT id FROM observations
         WHERE id IN (SELECT value FROM json_each(?1)) AND superseded_by IS NOT NULL",
    )?;
    let rows = stmt.query_map([list], |r| r.get::<_, i64>(0))?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}

/// What a line says, without its id and age (`- #12 3d …`).
fn same_as_key(line: &str) -> String {
    line.split_whitespace()
        .skip(3)
        .collect::<Vec<_>>()
        .join(" ")
        .to_lowercase()
}

/// The newest rows of `table` (an FTS5 table) that match `query`.
fn matching(conn: &Connection, table: &str, query: &str) -> Result<Vec<i64>> {
    let sql = format!(
        "SELECT rowid FROM {table} WHERE {table} MATCH ?1 ORDER BY rowid DESC LIMIT {PER_TERM}"
    );
    let mut stmt = conn.prepare_cached(&sql)?;
    let rows = stmt.query_map([query], |r| r.get(0))?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}

/// One line for an item of the project from another session; None for
/// anything else.
fn item_line(
    conn: &Connection,
    item: ItemRef,
    req: &PromptRequest<'_>,
    clock: &Clock,
) -> Result<Option<String>> {
    let line = match item.kind {
        Kind::Observation => observation_line(conn, item.id, req, clock)?,
        Kind::Summary => summary_line(conn, item.id, req, clock)?,
        Kind::Prompt => None,
    };
    // Text that gives the agent orders is never handed on, whoever stored it.
    Ok(line.filter(|l| !mnemo_core::instructions::addresses_agent(l)))
}

fn observation_line(
    conn: &Connection,
    id: i64,
    req: &PromptRequest<'_>,
    clock: &Clock,
) -> Result<Option<String>> {
    let row = conn
        .prepare_cached(
            "SELECT type, title, subtitle, facts, files_modified, files_read, created_at,
                    superseded_by, author
             FROM observations WHERE id = ?1 AND project_id = ?2
               AND session_id IS NOT ?3",
        )?
        .query_row(rusqlite::params![id, req.project, req.session], |r| {
            Ok((
                (
                    r.get::<_, String>(0)?,
                    r.get::<_, String>(1)?,
                    r.get::<_, String>(2)?,
                    r.get::<_, String>(3)?,
                ),
                r.get::<_, String>(4)?,
                r.get::<_, String>(5)?,
                r.get::<_, i64>(6)?,
                r.get::<_, Option<i64>>(7)?,
                r.get::<_, Option<String>>(8)?,
            ))
        })
        .optional()?;
    let Some(((kind, title, subtitle, facts), modified, read, at, replaced_by, author)) = row
    else {
        return Ok(None);
    };
    if req.mine_only && author.is_some() {
        return Ok(None);
    }
    let mut line = format!(
        "- #{id} {} {} {}",
        clock.age(at),
        type_marker(&kind),
        one_line(&title, 110)
    );
    if let Some(f) = main_file(&parse_json_list(&modified), &parse_json_list(&read)) {
        line.push_str(&format!(" ({})", display_path(&f, Some(req.root))));
    }
    let detail = if subtitle.trim().is_empty() {
        parse_json_list(&facts)
            .into_iter()
            .next()
            .unwrap_or_default()
    } else {
        subtitle
    };
    let detail = one_line(&detail, 160);
    if !detail.is_empty() && detail != one_line(&title, 160) {
        line.push_str(&format!(": {detail}"));
    }
    if let Some(next) = replaced_by {
        line.push_str(&format!(" [superseded by #{next}]"));
    }
    line.push_str(&crate::authors::tag(author.as_deref()));
    Ok(Some(line))
}

fn summary_line(
    conn: &Connection,
    id: i64,
    req: &PromptRequest<'_>,
    clock: &Clock,
) -> Result<Option<String>> {
    let row = conn
        .prepare_cached(
            "SELECT request, learned, completed, next_steps, created_at, author
             FROM summaries WHERE id = ?1 AND project_id = ?2 AND session_id IS NOT ?3",
        )?
        .query_row(rusqlite::params![id, req.project, req.session], |r| {
            Ok((
                r.get::<_, String>(0)?,
                r.get::<_, String>(1)?,
                r.get::<_, String>(2)?,
                r.get::<_, String>(3)?,
                r.get::<_, i64>(4)?,
                r.get::<_, Option<String>>(5)?,
            ))
        })
        .optional()?;
    let Some((request, learned, completed, next, at, author)) = row else {
        return Ok(None);
    };
    if req.mine_only && author.is_some() {
        return Ok(None);
    }
    // A turn that a background task's notification opened asked nothing.
    let request = if is_injected(&request) {
        String::new()
    } else {
        request
    };
    let mut parts = Vec::new();
    for (label, text, max) in [
        ("asked", &request, 100),
        ("learned", &learned, 140),
        ("done", &completed, 140),
        ("next", &next, 100),
    ] {
        let t = one_line(text, max);
        if !t.is_empty() {
            parts.push(format!("{label}: {t}"));
        }
    }
    if parts.is_empty() {
        return Ok(None);
    }
    Ok(Some(format!(
        "- S{id} {} turn: {}{}",
        clock.age(at),
        parts.join(" | "),
        crate::authors::tag(author.as_deref())
    )))
}

/// The wrapped text within `budget` (the first line always, cut if need
/// be), and how many lines made it.
fn render(lines: &[String], budget: usize) -> Option<(String, usize)> {
    if lines.is_empty() {
        return None;
    }
    let head = format!(
        "{CONTEXT_OPEN}\nmnemo: earlier work related to this prompt (full records: \
         mcp__mnemo__get_observations or `mnemo show ID`):\n"
    );
    let mut text = head;
    let fixed = js_len(&text) + js_len(CONTEXT_CLOSE);
    let mut n = 0;
    for line in lines {
        if n > 0 && js_len(&text) + js_len(line) + 1 + js_len(CONTEXT_CLOSE) > budget {
            break;
        }
        let room = budget.saturating_sub(fixed + 1).max(80);
        text.push_str(&one_line(line, room));
        text.push('\n');
        n += 1;
    }
    text.push_str(CONTEXT_CLOSE);
    Some((text, n))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn queries(prompt: &str) -> Vec<String> {
        terms(prompt).into_iter().map(|t| t.query).collect()
    }

    #[test]
    fn acknowledgements_have_no_terms() {
        for p in [
            "thanks",
            "continue",
            "ok, go ahead",
            "yes please",
            "fix it",
            "Thanks!",
        ] {
            assert!(terms(p).is_empty(), "{p}: {:?}", terms(p));
        }
    }

    #[test]
    fn files_symbols_and_words_become_phrases() {
        assert_eq!(
            queries("why does src/auth/login.py fail in `parseConfig` and load_user?"),
            [
                "\"src auth login py\"",
                "(\"parse config\" OR \"parseconfig\")",
                "\"load user\"",
                "\"fail\"",
            ]
        );
        assert_eq!(queries("look at config.rs."), ["\"config rs\""]);
        assert_eq!(
            queries("the Store::open path"),
            ["\"store open\"", "\"path\""]
        );
        assert_eq!(queries("version 1.5 of 2024"), ["\"version\""]);
    }

    #[test]
    fn rare_terms_weigh_more_and_ubiquitous_ones_nothing() {
        assert!(weight(1, 10_000, false) > weight(50, 10_000, false));
        assert!(weight(1, 20, false) > MIN_SCORE);
        assert!(weight(45, 57, false) < 1.0);
        assert_eq!(weight(3, 3, true), 0.0);
        assert!(weight(3, 10_000, true) > 2.0 * weight(3, 10_000, false) - 1e-9);
    }

    #[test]
    fn host_injected_prompts_are_recognised() {
        assert!(is_injected("<task-notification>x</task-notification>"));
        assert!(is_injected("[Request interrupted by user for tool use]"));
        assert!(is_injected(
            "This session is being continued from a previous conversation that ran out of context."
        ));
        assert!(!is_injected("fix [the] parser"));
    }

    #[test]
    fn a_single_common_or_short_word_is_not_enough() {
        let m = |score, words, strong, rare| Match {
            score,
            words,
            strong,
            rare_long_word: rare,
        };
        assert!(!m(4.0, 2, false, false).relevant());
        assert!(m(6.0, 2, false, false).relevant());
        assert!(!m(6.0, 1, false, false).relevant());
        assert!(m(6.0, 1, false, true).relevant());
        assert!(m(8.0, 0, true, false).relevant());
    }
}
