//! Full-text search over observations, summaries and prompts.
//!
//! A query is reduced to the words that say something ([`crate::query`]:
//! stop and question words set aside, repeats once; a compound word such
//! as `testing-related` that matches nothing as a whole is searched by its
//! parts, as a plain BM25 would; a long query keeps up to [`MAX_TERMS`]
//! words, the most selective by their document counts, which also weigh
//! each word). Recall comes first: FTS5 finds candidates
//! with every word (a query of up to five words), then the best BM25
//! matches of an OR of every selective word (each in fewer than
//! [`DOC_COUNT_CAP`] records, so all their matches are ranked), then, while
//! the pool has room, an OR of every word among the newest matches; a
//! table's columns are weighted (an observation's title and files count
//! most). Words in scripts written without spaces, and words that match
//! nothing, are also looked for as substrings (trigram indexes). The
//! candidates are re-ranked ([`crate::ranking`]): BM25F over their fields
//! scaled by how much of the query's weight each covers, added to the
//! index's own BM25 (each scaled to its best), then by kind (an
//! observation is what the index lists and what an agent can act on; a
//! prompt only says what was asked), up for decisions when the question
//! asks what was decided, and by [`ranking::record_factor`]. A question
//! about where work stands ("what is still open on …") has its status
//! words set aside (the answer says "closed", not "still open") and
//! prefers the newer records on its subject ([`Recency`]). A decision
//! that a later decision replaced, or a change that a later change among
//! the results amends ([`crate::supersede`]), sinks below its successor
//! and says so (`superseded_by`). Scores are rounded so that
//! near-equal ones tie, and ties go to the newest. `relaxed` says that no
//! hit contains every word.
//!
//! A query with nothing searchable lists the newest items that pass the
//! filters. The user's text never reaches FTS5 as syntax, so no query
//! errors. [`search`] is the library call: query text and scope in, ranked
//! hits with scores out.
//!
//! Cost is bounded whatever the store holds: FTS5 computes BM25 for at most
//! the newest [`RANK_WINDOW`] matching observations and half as many
//! summaries and prompts (it walks its index in rowid order and stops
//! there), a word's document count stops at [`DOC_COUNT_CAP`] (all of a
//! query's words are counted in one statement per source), and at most
//! [`RERANK_POOL`] candidates per kind are read for re-ranking. The FTS
//! table always drives the join (`CROSS JOIN`): left to itself, SQLite may
//! walk a project's observations by date and run the match once per row,
//! which is a hundred times slower on a large store.

use std::collections::HashMap;
use std::path::{Component, Path, PathBuf};

use mnemo_core::time::format_rfc3339;
use mnemo_store::parse_json_list;
use rusqlite::types::Value;
use rusqlite::{Connection, OptionalExtension};
use serde::Serialize;

use crate::Result;
use crate::dates;
use crate::ids::{ItemRef, Kind};
use crate::query::{MAX_TERMS, Terms};
use crate::ranking::{self, Doc, TermWeights};
use crate::records::{ProjectRef, SessionKey};
use crate::supersede;
use crate::text::{has_unsegmented, main_file, one_line};

/// BM25 weights of `observations_fts` columns: title, subtitle, narrative,
/// facts, concepts, files_read, files_modified, idents.
const OBSERVATION_WEIGHTS: &str = "10.0, 4.0, 1.0, 2.0, 3.0, 3.0, 5.0, 3.0";
/// `summaries_fts`: request, investigated, learned, completed, next_steps,
/// notes, idents.
const SUMMARY_WEIGHTS: &str = "4.0, 1.0, 2.0, 2.0, 1.0, 1.0, 1.0";

/// Most matches of observations whose BM25 score is computed (the newest
/// ones); summaries and prompts, which only back the observations up, get
/// half as many.
pub const RANK_WINDOW: usize = 2000;

/// Scale of each kind's BM25 score in the merged list.
fn kind_factor(kind: Kind) -> f64 {
    match kind {
        Kind::Observation => 1.0,
        Kind::Summary => 1.0,
        Kind::Prompt => 0.5,
    }
}

pub use crate::types::canonical as canonical_type;

/// Which stored files a `--file` argument means.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct FileFilter {
    /// Paths compared exactly (as given, and made absolute against the
    /// working directory and the project root).
    pub exact: Vec<String>,
    /// For a relative argument: any stored path ending in `/<suffix>`, so
    /// that `auth.rs` finds `/home/dev/shop/src/auth.rs`.
    pub suffix: Option<String>,
}

impl FileFilter {
    pub fn new(arg: &str, cwd: &Path, project_root: Option<&Path>) -> FileFilter {
        let arg = arg.trim();
        let path = Path::new(arg);
        let mut exact = vec![arg.to_owned()];
        let mut push = |p: PathBuf| {
            let s = p.to_string_lossy().into_owned();
            if !exact.contains(&s) {
                exact.push(s);
            }
        };
        if path.is_absolute() {
            let path = normalize(path);
            push(path.clone());
            if let Some(rel) = project_root.and_then(|r| path.strip_prefix(r).ok()) {
                push(rel.to_owned());
            }
            return FileFilter {
                exact,
                suffix: None,
            };
        }
        push(normalize(&cwd.join(path)));
        if let Some(root) = project_root {
            push(normalize(&root.join(path)));
        }
        let suffix = normalize(path).to_string_lossy().into_owned();
        FileFilter {
            exact,
            suffix: (!suffix.is_empty()).then_some(suffix),
        }
    }
}

/// Lexical clean-up: drops `.`, resolves `..`, never touches the disk.
pub fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

#[derive(Debug, Clone, Default)]
pub struct SearchRequest {
    /// What the user typed; anything goes.
    pub query: String,
    /// None searches every project.
    pub project_id: Option<i64>,
    /// Observation types (`bugfix`, `fix`, ...); `summary` and `prompt`
    /// select those kinds. Empty means everything.
    pub types: Vec<String>,
    /// Items created at or after this time (epoch ms).
    pub since_ms: Option<i64>,
    /// Items created before this time.
    pub until_ms: Option<i64>,
    /// Only observations about this file.
    pub file: Option<FileFilter>,
    /// Only items of this agent session (its id, or a prefix of 4+ characters).
    pub session: Option<String>,
    /// Only items this agent produced (see [`crate::agents`]).
    pub agent: Option<mnemo_core::model::Platform>,
    /// Only this person's own records: none that a teammate's machine sent
    /// through sync (`[sync] others = false`, see [`crate::authors`]).
    pub mine_only: bool,
    pub limit: usize,
}

/// One result line. Its common fields (`id`, `ref`, `kind`, `type`,
/// `title`, `created_at`, `project`, `session`, ...) are named and valued
/// as in the full records of [`mnemo_store::shape`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Hit {
    /// Serialized as `"id": 12, "ref": "#12"`.
    #[serde(flatten, serialize_with = "crate::ids::as_fields")]
    pub id: ItemRef,
    pub kind: Kind,
    /// The observation's type.
    #[serde(rename = "type", skip_serializing_if = "Option::is_none")]
    pub obs_type: Option<String>,
    /// One line: an observation's title, a summary's request, a prompt's text.
    pub title: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub subtitle: String,
    /// The file an observation is mainly about.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    pub created_at: String,
    pub created_at_ms: i64,
    /// The project (its root is what file paths are relative to).
    pub project: Option<ProjectRef>,
    pub session: Option<SessionKey>,
    /// Relevance, higher is better (0 when listing by recency).
    pub score: f64,
    /// For a decision that a later decision on the same subject replaced:
    /// that decision (see [`crate::supersede`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub superseded_by: Option<i64>,
    /// Whether an observation's files changed since (see [`crate::fresh`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub freshness: Option<mnemo_store::freshness::Freshness>,
    /// Who wrote it, when another person's machine sent it through sync
    /// (omitted for this person's own records; see [`crate::authors`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub author: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SearchResults {
    pub query: String,
    /// The FTS5 query actually run (None: listed by recency).
    pub fts_query: Option<String>,
    /// True when no hit contains every word of the query (hits have some).
    pub relaxed: bool,
    pub hits: Vec<Hit>,
    /// Search by meaning, when configured: whether it took part, or why it
    /// was skipped (see [`crate::hybrid`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub meaning: Option<crate::hybrid::MeaningNote>,
}

/// Runs a search. Any search text is valid; a type outside the vocabulary
/// or a session that matches nothing is an input error.
pub fn search(conn: &Connection, req: &SearchRequest) -> Result<SearchResults> {
    crate::types::check(conn, &req.types, crate::types::Allowed::Everything)?;
    if let Some(session) = req.session.as_deref().filter(|s| !s.trim().is_empty()) {
        crate::scope::sessions_matching(conn, session)?;
    }
    let mut terms = Terms::parse(&req.query);
    terms.set_aside(&ranking::status_words(&req.query));
    let limit = req.limit.clamp(1, 500);
    let kinds = kinds_of(req);
    if terms.is_empty() {
        let mut hits = listed(conn, req, &kinds, limit)?;
        crate::fresh::mark_hits(conn, &mut hits)?;
        return Ok(SearchResults {
            query: req.query.clone(),
            fts_query: None,
            relaxed: false,
            hits,
            meaning: None,
        });
    }
    let weights = select_terms(conn, &kinds, &mut terms)?;
    let any = terms.any().expect("terms are not empty");
    let dated = dates::Named::in_query(&req.query, || crate::when::Clock::system().offset);
    let mut candidates = candidates(conn, req, &kinds, &terms, &weights, limit)?;
    add(
        &mut candidates,
        dated_candidates(conn, req, &kinds, &terms, &weights, &dated, limit)?,
    );
    let index = index_scores(&candidates);
    let found = Found {
        terms: &terms,
        weights: &weights,
        dated: &dated,
    };
    let mut scored = rerank(conn, &found, &req.query, candidates, &index)?;
    // Supersession is looked up for the best few only: it costs a query
    // per decision, and a demoted decision leaves room for one from below.
    order(&mut scored);
    scored.truncate(limit * 2);
    mark_superseded(conn, req, &mut scored)?;
    order(&mut scored);
    scored.truncate(limit);
    let relaxed = terms.len() > 1 && !scored.iter().any(|r| r.coverage >= 1.0 - 1e-9);
    let mut hits = hits_of(conn, &scored)?;
    crate::fresh::mark_hits(conn, &mut hits)?;
    demote_stale(&mut hits);
    Ok(SearchResults {
        query: req.query.clone(),
        fts_query: Some(any),
        relaxed,
        hits,
        meaning: None,
    })
}

/// A query of at most this many words first looks for records with every
/// word (intersecting more lists costs more than it finds).
const ALL_WORDS_TERMS: usize = 5;

/// The records worth re-ranking, recall first: those with every word (a
/// short query), then the best BM25 matches of an OR of every selective
/// word (each matches fewer than [`DOC_COUNT_CAP`] records, so all of their
/// matches are ranked), then, when the query has common words too, the best
/// of an OR of every word among the newest matches. Nothing is filtered by
/// how many words a record has: re-ranking decides.
fn candidates(
    conn: &Connection,
    req: &SearchRequest,
    kinds: &Kinds,
    terms: &Terms,
    weights: &TermWeights,
    limit: usize,
) -> Result<Vec<Ranked>> {
    let pool = limit.max(RERANK_POOL);
    let counts = &weights.doc_counts;
    let mut out: Vec<Ranked> = Vec::new();
    if terms.len() <= ALL_WORDS_TERMS {
        let all = terms.all().expect("terms are not empty");
        add(
            &mut out,
            matches(conn, req, kinds, Find::Words(&all, 1), pool)?,
        );
    }
    let selective = |n: u64| n > 0 && n < DOC_COUNT_CAP;
    let rare: Vec<bool> = counts.iter().map(|&n| !selective(n)).collect();
    if let Some(q) = terms.any_except(&rare).filter(|_| terms.len() > 1) {
        add(
            &mut out,
            matches(conn, req, kinds, Find::Words(&q, 1), pool)?,
        );
    }
    // Nothing matches as a whole word: a prefix or a phrase still may.
    // Common words are searched for only while the pool has room (their
    // BM25 costs a walk of long lists), and never twice for one word.
    let none = counts.iter().all(|&n| n == 0);
    let common = counts.iter().any(|&n| n >= DOC_COUNT_CAP);
    if none || (common && out.len() < pool && terms.len() > 1) {
        let unmatched: Vec<bool> = counts.iter().map(|&n| n == 0 && !none).collect();
        let q = terms.any_except(&unmatched).expect("a word is kept");
        add(
            &mut out,
            matches(conn, req, kinds, Find::Words(&q, OR_NARROWING), pool)?,
        );
    }
    // Words that match nothing may still be part of a longer run of text.
    let fallback = out.is_empty();
    for term in terms.terms().iter().filter(|_| has_substring_index(conn)) {
        let long = term.text.chars().count() >= 3;
        if has_unsegmented(&term.text) || (fallback && long) {
            add(
                &mut out,
                substring_matches(conn, req, kinds, &term.text, pool)?,
            );
        }
    }
    Ok(out)
}

/// The records written on a date the query names (see [`crate::dates`])
/// that have any of its words: found beside the best matches over all
/// time, which a question about one day or month may not reach. When none
/// of that time has a word of the query ("what happened on 14 March"), the
/// newest records of that time stand in: their date is what was asked.
fn dated_candidates(
    conn: &Connection,
    req: &SearchRequest,
    kinds: &Kinds,
    terms: &Terms,
    weights: &TermWeights,
    dated: &dates::Named,
    limit: usize,
) -> Result<Vec<Ranked>> {
    let unmatched: Vec<bool> = weights.doc_counts.iter().map(|&n| n == 0).collect();
    let words = terms.any_except(&unmatched);
    let pool = limit.max(RERANK_POOL);
    let mut out = Vec::new();
    for (start, end) in dated.spans() {
        let within = SearchRequest {
            since_ms: Some(req.since_ms.map_or(start, |s| s.max(start))),
            until_ms: Some(req.until_ms.map_or(end, |u| u.min(end))),
            ..req.clone()
        };
        let mut found = match &words {
            Some(q) => matches(conn, &within, kinds, Find::Words(q, 1), pool)?,
            None => Vec::new(),
        };
        if found.is_empty() {
            found = matches(conn, &within, kinds, Find::Newest, pool)?;
        }
        add(&mut out, found);
    }
    Ok(out)
}

/// Whether the store has its substring indexes (a store opened read-only
/// before the migration that adds them has not).
fn has_substring_index(conn: &Connection) -> bool {
    conn.prepare_cached("SELECT 1 FROM sqlite_master WHERE name = 'observations_trigram_fts'")
        .and_then(|mut s| s.exists([]))
        .unwrap_or(false)
}

/// Appends the rows not already there.
fn add(out: &mut Vec<Ranked>, found: Vec<Ranked>) {
    for r in found {
        if !out.iter().any(|c| c.id == r.id) {
            out.push(r);
        }
    }
}

/// Records containing `text` as a substring: through the trigram index
/// when it is long enough to have trigrams, else by `LIKE` over the
/// records' text (newest first; only for text in an unsegmented script).
/// The substring index holds only records with non-ASCII text (see the
/// store's schema), so English queries that match words never come here.
fn substring_matches(
    conn: &Connection,
    req: &SearchRequest,
    kinds: &Kinds,
    text: &str,
    limit: usize,
) -> Result<Vec<Ranked>> {
    if text.chars().count() >= 3 {
        let phrase = format!("\"{}\"", text.replace('"', ""));
        matches(conn, req, kinds, Find::Substrings(&phrase), limit)
    } else {
        let pattern = format!("%{}%", like_escape(text));
        matches(conn, req, kinds, Find::Like(&pattern), limit)
    }
}

/// An OR query with common words ranks this share of each source's window
/// (see [`matches`]).
const OR_NARROWING: usize = 2;

/// Candidates read per kind for re-ranking (at least the request's limit).
pub const RERANK_POOL: usize = 50;

/// How many documents a word is counted in at most when measuring how
/// selective it is: past this, a word is common and its exact count
/// changes nothing.
pub const DOC_COUNT_CAP: u64 = 1000;

/// Document counts of the query's words (capped), which keep the most
/// selective [`MAX_TERMS`] of a long query and weigh each word. A compound
/// word that matches nothing is split first ([`Terms::split_unmatched`]).
/// Each word is counted once.
fn select_terms(conn: &Connection, kinds: &Kinds, terms: &mut Terms) -> Result<TermWeights> {
    let sources = sources_of(kinds);
    let mut known: HashMap<String, u64> = HashMap::new();
    count_new(conn, &sources, terms, &mut known)?;
    let first: Vec<u64> = terms.terms().iter().map(|t| known[&t.fts()]).collect();
    if terms.split_unmatched(&first) {
        count_new(conn, &sources, terms, &mut known)?;
    }
    if terms.len() > MAX_TERMS {
        terms.keep_selective(MAX_TERMS, |fts| known.get(fts).copied().unwrap_or(0));
    }
    let counts: Vec<u64> = terms.terms().iter().map(|t| known[&t.fts()]).collect();
    let mut total = 0u64;
    for src in &sources {
        let n: Option<i64> = conn
            .prepare_cached(&format!("SELECT max(rowid) FROM {}", src.table))?
            .query_row([], |r| r.get(0))?;
        total += n.unwrap_or(0).max(0) as u64;
    }
    Ok(TermWeights::new(&counts, total))
}

/// Adds to `known` the capped document counts (over the sources, up to
/// [`DOC_COUNT_CAP`]) of the terms not in it yet.
fn count_new(
    conn: &Connection,
    sources: &[&Source],
    terms: &Terms,
    known: &mut HashMap<String, u64>,
) -> Result<()> {
    let mut list: Vec<String> = Vec::new();
    for t in terms.terms() {
        let fts = t.fts();
        if !known.contains_key(&fts) && !list.contains(&fts) {
            list.push(fts);
        }
    }
    let mut n = vec![0u64; list.len()];
    for src in sources {
        let open: Vec<usize> = (0..list.len()).filter(|&i| n[i] < DOC_COUNT_CAP).collect();
        for chunk in open.chunks(COUNTS_PER_STATEMENT) {
            let asked: Vec<(&str, u64)> = chunk
                .iter()
                .map(|&i| (list[i].as_str(), DOC_COUNT_CAP - n[i]))
                .collect();
            for (&i, c) in chunk.iter().zip(doc_counts(conn, src.fts, &asked)?) {
                n[i] += c;
            }
        }
    }
    known.extend(list.into_iter().zip(n));
    Ok(())
}

/// Terms counted by one statement.
const COUNTS_PER_STATEMENT: usize = 100;

/// How many rows of one index match each term, each up to its cap: one
/// statement for all of them (a long query has a hundred words or more, and
/// a statement per word and source cost a prepare and a step each), with
/// the terms as SQL string literals, quotes doubled.
fn doc_counts(conn: &Connection, index: &str, asked: &[(&str, u64)]) -> rusqlite::Result<Vec<u64>> {
    if asked.is_empty() {
        return Ok(Vec::new());
    }
    let columns: Vec<String> = asked
        .iter()
        .map(|(fts, cap)| {
            let literal = fts.replace('\'', "''");
            format!(
                "(SELECT count(*) FROM (SELECT 1 FROM {index} WHERE {index} MATCH '{literal}' \
                 LIMIT {cap}))"
            )
        })
        .collect();
    conn.prepare(&format!("SELECT {}", columns.join(", ")))?
        .query_row([], |r| {
            (0..asked.len())
                .map(|i| r.get::<_, i64>(i).map(|n| n.max(0) as u64))
                .collect()
        })
}

/// A candidate with its final score.
struct Scored {
    id: ItemRef,
    created_at: i64,
    /// Higher is better.
    score: f64,
    /// Share of the query's weight the record contains (1 when listing).
    coverage: f64,
    superseded_by: Option<i64>,
}

/// What a query is searched with: its words, their weights, the dates it
/// names.
struct Found<'a> {
    terms: &'a Terms,
    weights: &'a TermWeights,
    dated: &'a dates::Named,
}

/// How much a record's date counts when the query names a date: as a short
/// field of its own (`July 2022 14`), weighed as what a record says.
const DATE_FIELD: f64 = 1.5;

/// Scores each candidate: BM25F over its fields (its date one of them when
/// the query names a date), scaled by its kind, by its coverage of the
/// query, and up when the question asks for decisions.
fn rerank(
    conn: &Connection,
    found: &Found<'_>,
    query: &str,
    candidates: Vec<Ranked>,
    index: &[f64],
) -> Result<Vec<Scored>> {
    let weights = found.weights;
    let folded = ranking::FoldedTerms::new(found.terms);
    let filter = folded.filter();
    let mut docs: Vec<Doc> = candidates
        .iter()
        .map(|r| ranking::record_doc(conn, r.id, &filter))
        .collect::<Result<_>>()?;
    if !found.dated.is_empty() {
        for (doc, r) in docs.iter_mut().zip(&candidates) {
            let words = found.dated.words_of(r.created_at);
            doc.fields.push(ranking::Field::new(DATE_FIELD, &words));
        }
    }
    let mut avg_len = HashMap::new();
    for kind in [Kind::Observation, Kind::Summary, Kind::Prompt] {
        let of_kind: Vec<&Doc> = candidates
            .iter()
            .zip(&docs)
            .filter(|(r, _)| r.id.kind == kind)
            .map(|(_, d)| d)
            .collect();
        avg_len.insert(kind, ranking::average_lengths(&of_kind));
    }
    let wants_decisions = ranking::asks_for_decisions(query);
    let wants_status = ranking::asks_for_status(query);
    let recency = wants_status.then(|| Recency::of(&candidates));
    let lexical: Vec<(f64, f64)> = candidates
        .iter()
        .zip(&docs)
        .map(|(r, doc)| {
            let coverage = ranking::coverage(&folded, weights, doc);
            let bm25 = ranking::bm25f(&folded, weights, doc, &avg_len[&r.id.kind]);
            (bm25 * coverage_factor(coverage), coverage)
        })
        .collect();
    let fused = fuse(&lexical.iter().map(|l| l.0).collect::<Vec<_>>(), index);
    let mut out = Vec::with_capacity(candidates.len());
    for (((r, doc), (_, coverage)), relevance) in
        candidates.into_iter().zip(&docs).zip(lexical).zip(fused)
    {
        let mut score = relevance * kind_factor(r.id.kind) * ranking::record_factor(doc);
        if wants_decisions && doc.obs_type.as_deref() == Some("decision") {
            score *= DECISION_INTENT;
        }
        if wants_status && r.id.kind == Kind::Summary {
            score *= STATUS_INTENT;
        }
        if let Some(recency) = &recency {
            score *= 1.0 + STATUS_RECENCY * recency.share(r.created_at);
        }
        out.push(Scored {
            id: r.id,
            created_at: r.created_at,
            score,
            coverage,
            superseded_by: None,
        });
    }
    Ok(out)
}

/// Two relevance scores of the same candidates, each scaled to its best,
/// added: the re-ranker's BM25F over fields (a match in a title counts
/// more, a long narrative does not dilute it) and the index's BM25 over the
/// whole record (porter stems, the store's own statistics), so that neither
/// one's blind spot decides alone.
fn fuse(lexical: &[f64], index: &[f64]) -> Vec<f64> {
    let best = |v: &[f64]| v.iter().copied().fold(0.0_f64, f64::max);
    let (bl, bi) = (best(lexical), best(index));
    let share = |x: f64, b: f64| if b > 0.0 { x / b } else { 0.0 };
    lexical
        .iter()
        .zip(index)
        .map(|(&l, &i)| share(l, bl) + share(i, bi))
        .collect()
}

/// FTS5's BM25 of each candidate (higher is better), as the query that
/// found it computed it: every word for a short query, the selective
/// words, or every word among the newest matches.
fn index_scores(candidates: &[Ranked]) -> Vec<f64> {
    candidates.iter().map(|r| (-r.score).max(0.0)).collect()
}

/// How coverage scales a score: a record with all the query's weight
/// keeps its score, one with half of it keeps a quarter.
fn coverage_factor(coverage: f64) -> f64 {
    coverage
}

/// How much a decision gains when the question asks what was decided.
const DECISION_INTENT: f64 = 1.5;
/// How much more a turn summary weighs when the question asks where the
/// work stands (`ranking::asks_for_status`).
const STATUS_INTENT: f64 = 1.5;

/// How much the newest candidate gains over the oldest when the question
/// asks where the work stands: the latest record on the subject says where
/// it stands now, an older one where it stood then.
const STATUS_RECENCY: f64 = 1.0;

/// Where each candidate stands among the others by age: its share of the
/// candidates older than it (0 the oldest, 1 the newest), whatever the
/// time span, so a week of work and a year of it weigh the same.
struct Recency {
    /// Creation times, sorted.
    times: Vec<i64>,
}

impl Recency {
    fn of(candidates: &[Ranked]) -> Recency {
        let mut times: Vec<i64> = candidates.iter().map(|r| r.created_at).collect();
        times.sort_unstable();
        Recency { times }
    }

    fn share(&self, created_at: i64) -> f64 {
        let older = self.times.partition_point(|&t| t < created_at);
        older as f64 / self.times.len().saturating_sub(1).max(1) as f64
    }
}

/// Superseded decisions sink below their successor, which takes their
/// place when the search did not find it by itself; so do changes that a
/// later change among the results amends ([`supersede::amendments`]).
fn mark_superseded(conn: &Connection, req: &SearchRequest, scored: &mut Vec<Scored>) -> Result<()> {
    let observations: Vec<i64> = scored
        .iter()
        .filter(|s| s.id.kind == Kind::Observation)
        .map(|s| s.id.id)
        .collect();
    let mut successors = supersede::amendments(conn, &observations)?;
    successors.extend(supersede::successors(conn, &observations)?);
    let mut added: Vec<Scored> = Vec::new();
    for s in scored.iter_mut() {
        let Some(&next) = successors
            .get(&s.id.id)
            .filter(|_| s.id.kind == Kind::Observation)
        else {
            continue;
        };
        s.superseded_by = Some(next);
        let score = s.score;
        s.score *= SUPERSEDED_FACTOR;
        added.push(Scored {
            id: ItemRef::observation(next),
            created_at: 0,
            score,
            coverage: s.coverage,
            superseded_by: None,
        });
    }
    for a in added {
        match scored.iter_mut().find(|s| s.id == a.id) {
            Some(s) => s.score = s.score.max(a.score),
            None if successor_passes(conn, req, a.id.id)? => {
                let created_at = created_at(conn, a.id.id)?;
                scored.push(Scored { created_at, ..a });
            }
            None => {}
        }
    }
    Ok(())
}

/// A superseded record keeps this share of its score.
pub const SUPERSEDED_FACTOR: f64 = 0.5;

/// Whether a successor found through its predecessor passes the request's
/// filters (type, time, file, session): the same query, on one id.
fn successor_passes(conn: &Connection, req: &SearchRequest, id: i64) -> Result<bool> {
    let kinds = kinds_of(req);
    if !kinds.observations {
        return Ok(false);
    }
    let mut sql = select_ranked(&OBSERVATIONS, Find::Newest);
    let p = sql.param(id);
    sql.push(&format!(" AND o.id = {p}"));
    let mut found = filter_observations(sql, req, &kinds.types);
    common_filters(&mut found, req, "o");
    let mut stmt = conn.prepare(&found.text)?;
    Ok(stmt.exists(rusqlite::params_from_iter(found.params.iter()))?)
}

fn created_at(conn: &Connection, id: i64) -> Result<i64> {
    Ok(conn
        .prepare_cached("SELECT created_at FROM observations WHERE id = ?1")?
        .query_row([id], |r| r.get(0))?)
}

/// Best first: scores bucketed on a log scale (2% wide) so that near-equal
/// scores tie whatever the store's size, and the newer item wins the tie.
fn order(scored: &mut [Scored]) {
    scored.sort_by(|a, b| {
        bucket(a.score)
            .cmp(&bucket(b.score))
            .then(b.created_at.cmp(&a.created_at))
            .then(b.id.id.cmp(&a.id.id))
    });
}

/// A score's place in the order: log-scale buckets 2% wide, best first.
fn bucket(score: f64) -> i64 {
    if score > 0.0 {
        -(score.ln() * 50.0).round() as i64
    } else {
        i64::MAX
    }
}

/// A hit whose files changed or were deleted since it was written keeps
/// less of its score ([`Freshness::rank_factor`]) and moves below the hits
/// it now ties with or trails; the order among the rest is kept (a stable
/// sort), so freshness breaks ties and never filters.
///
/// [`Freshness::rank_factor`]: mnemo_store::freshness::Freshness::rank_factor
fn demote_stale(hits: &mut [Hit]) {
    if hits.iter().all(|h| h.freshness.is_none()) {
        return;
    }
    for h in hits.iter_mut() {
        let factor = mnemo_store::freshness::Freshness::rank_factor(h.freshness);
        h.score = (h.score * factor * 1e6).round() / 1e6 + 0.0;
    }
    hits.sort_by_key(|h| bucket(h.score));
}

/// The display rows of ranked ids, with their scores.
fn hits_of(conn: &Connection, scored: &[Scored]) -> Result<Vec<Hit>> {
    let mut hits = Vec::with_capacity(scored.len());
    for r in scored {
        if let Some(mut hit) = hit(conn, r.id)? {
            hit.score = (r.score * 1e6).round() / 1e6 + 0.0;
            hit.superseded_by = r.superseded_by;
            hits.push(hit);
        }
    }
    Ok(hits)
}

/// Which kinds to search, and which observation types.
struct Kinds {
    observations: bool,
    summaries: bool,
    prompts: bool,
    types: Vec<String>,
}

fn kinds_of(req: &SearchRequest) -> Kinds {
    let canonical: Vec<String> = req
        .types
        .iter()
        .flat_map(|t| t.split(','))
        .map(canonical_type)
        .collect();
    let summaries = canonical.is_empty() || canonical.iter().any(|t| t == "summary");
    let prompts = canonical.is_empty() || canonical.iter().any(|t| t == "prompt");
    // `observation` is every observation type: no type filter.
    let any_observation = canonical.iter().any(|t| t == crate::types::ANY_OBSERVATION);
    let types: Vec<String> = canonical
        .into_iter()
        .filter(|t| t != "summary" && t != "prompt" && !t.is_empty())
        .filter(|_| !any_observation)
        .collect();
    let observations = req.types.is_empty() || any_observation || !types.is_empty();
    // Summaries and prompts name no files.
    let files_only = req.file.is_some();
    Kinds {
        observations,
        summaries: summaries && !files_only,
        prompts: prompts && !files_only,
        types,
    }
}

/// A query under construction: SQL text and its numbered parameters.
#[derive(Default)]
struct Sql {
    text: String,
    params: Vec<Value>,
}

impl Sql {
    fn new(text: &str) -> Sql {
        Sql {
            text: text.to_owned(),
            params: Vec::new(),
        }
    }

    fn push(&mut self, text: &str) {
        self.text.push_str(text);
    }

    /// Adds a parameter and returns its placeholder.
    fn param(&mut self, v: impl Into<Value>) -> String {
        self.params.push(v.into());
        format!("?{}", self.params.len())
    }
}

/// `LIKE` pattern text with `%`, `_` and the escape character escaped.
fn like_escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if matches!(c, '%' | '_' | '\\') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// Time, session and agent filters on a table alias with `created_at` and
/// `session_id`.
fn common_filters(sql: &mut Sql, req: &SearchRequest, alias: &str) {
    if let Some(agent) = req.agent {
        let p = sql.param(agent.as_str().to_owned());
        sql.push(&format!(
            " AND {alias}.session_id IN (SELECT id FROM sessions WHERE platform = {p})"
        ));
    }
    if let Some(since) = req.since_ms {
        let p = sql.param(since);
        sql.push(&format!(" AND {alias}.created_at >= {p}"));
    }
    if let Some(until) = req.until_ms {
        let p = sql.param(until);
        sql.push(&format!(" AND {alias}.created_at < {p}"));
    }
    if let Some(session) = req
        .session
        .as_deref()
        .map(str::trim)
        .filter(|s| !s.is_empty())
    {
        let exact = sql.param(session.to_owned());
        let prefix = if session.chars().count() >= 4 {
            let p = sql.param(format!("{}%", like_escape(session)));
            format!(" OR platform_session_id LIKE {p} ESCAPE '\\'")
        } else {
            String::new()
        };
        sql.push(&format!(
            " AND {alias}.session_id IN (SELECT id FROM sessions
                 WHERE platform_session_id = {exact}{prefix})"
        ));
    }
}

/// A ranked id: kind, row id, raw score, time.
struct Ranked {
    id: ItemRef,
    score: f64,
    created_at: i64,
}

/// How a source's rows are found.
#[derive(Debug, Clone, Copy)]
enum Find<'a> {
    /// The newest rows (a query with nothing searchable).
    Newest,
    /// An FTS5 query on the word index, ranked among the newest matches:
    /// the source's window divided by the second value (an OR query of
    /// common words is costlier per row).
    Words(&'a str, usize),
    /// An FTS5 query on the substring (trigram) index.
    Substrings(&'a str),
    /// A `LIKE` pattern over the substring index's columns, newest first
    /// (a substring shorter than a trigram).
    Like(&'a str),
}

/// The best `limit` rows of each kind searched that `find` finds (raw
/// BM25 scores, lower is better).
fn matches(
    conn: &Connection,
    req: &SearchRequest,
    kinds: &Kinds,
    find: Find<'_>,
    limit: usize,
) -> Result<Vec<Ranked>> {
    let mut all: Vec<Ranked> = Vec::new();
    if kinds.observations {
        all.extend(rank_observations(conn, req, &kinds.types, find, limit)?);
    }
    if kinds.summaries {
        all.extend(rank_summaries(conn, req, find, limit)?);
    }
    if kinds.prompts {
        all.extend(rank_prompts(conn, req, find, limit)?);
    }
    Ok(all)
}

/// The newest items that pass the filters (a query with nothing searchable).
fn listed(conn: &Connection, req: &SearchRequest, kinds: &Kinds, limit: usize) -> Result<Vec<Hit>> {
    let all = matches(conn, req, kinds, Find::Newest, limit)?;
    let mut scored: Vec<Scored> = all
        .into_iter()
        .map(|r| Scored {
            id: r.id,
            created_at: r.created_at,
            score: 0.0,
            coverage: 1.0,
            superseded_by: None,
        })
        .collect();
    order(&mut scored);
    scored.truncate(limit);
    hits_of(conn, &scored)
}

/// Runs a ranking query; keeps the best `limit` (by score, then newest).
fn collect(conn: &Connection, sql: Sql, kind: Kind, limit: usize) -> Result<Vec<Ranked>> {
    let mut stmt = conn.prepare(&sql.text)?;
    let rows = stmt.query_map(rusqlite::params_from_iter(sql.params.iter()), |r| {
        Ok(Ranked {
            id: ItemRef {
                kind,
                id: r.get(0)?,
            },
            score: r.get(1)?,
            created_at: r.get(2)?,
        })
    })?;
    let mut ranked: Vec<Ranked> = rows.collect::<rusqlite::Result<_>>()?;
    ranked.sort_by(|a, b| {
        a.score
            .total_cmp(&b.score)
            .then(b.created_at.cmp(&a.created_at))
            .then(b.id.id.cmp(&a.id.id))
    });
    ranked.truncate(limit);
    Ok(ranked)
}

/// One searchable kind of record: its table, the alias queries use, its
/// full-text index with the BM25 column weights, and how many of the newest
/// matches are ranked.
struct Source {
    table: &'static str,
    alias: &'static str,
    fts: &'static str,
    weights: &'static str,
    window: usize,
    kind: Kind,
    /// Its substring index, and the columns that index holds.
    trigram: &'static str,
    substring_columns: &'static [&'static str],
}

const OBSERVATIONS: Source = Source {
    table: "observations",
    alias: "o",
    fts: "observations_fts",
    weights: OBSERVATION_WEIGHTS,
    window: RANK_WINDOW,
    kind: Kind::Observation,
    trigram: "observations_trigram_fts",
    substring_columns: &["title", "subtitle", "narrative"],
};
const SUMMARIES: Source = Source {
    table: "summaries",
    alias: "m",
    fts: "summaries_fts",
    weights: SUMMARY_WEIGHTS,
    window: RANK_WINDOW / 2,
    kind: Kind::Summary,
    trigram: "summaries_trigram_fts",
    substring_columns: &["request", "learned", "completed"],
};
const PROMPTS: Source = Source {
    table: "prompts",
    alias: "q",
    fts: "prompts_fts",
    weights: "",
    window: RANK_WINDOW / 2,
    kind: Kind::Prompt,
    trigram: "prompts_trigram_fts",
    substring_columns: &["text"],
};

/// The sources a request searches.
fn sources_of(kinds: &Kinds) -> Vec<&'static Source> {
    let mut out = Vec::new();
    if kinds.observations {
        out.push(&OBSERVATIONS);
    }
    if kinds.summaries {
        out.push(&SUMMARIES);
    }
    if kinds.prompts {
        out.push(&PROMPTS);
    }
    out
}

/// `SELECT id, score, created_at` of `src`: driven by one of its FTS
/// indexes when there is a query (the index must lead the join: starting
/// from the table costs a full scan), else by the table alone. Filters are
/// appended as ` AND …`.
fn select_ranked(src: &Source, find: Find<'_>) -> Sql {
    let (table, a) = (src.table, src.alias);
    let (index, weights, q) = match find {
        Find::Words(q, _) => (src.fts, src.weights, q),
        Find::Substrings(q) => (src.trigram, "", q),
        Find::Newest | Find::Like(_) => {
            let mut s = Sql::new(&format!(
                "SELECT {a}.id, 0.0 AS score, {a}.created_at FROM {table} {a} WHERE 1"
            ));
            if let Find::Like(pattern) = find {
                let p = s.param(pattern.to_owned());
                let any: Vec<String> = src
                    .substring_columns
                    .iter()
                    .map(|c| format!("{a}.{c} LIKE {p} ESCAPE '\\'"))
                    .collect();
                s.push(&format!(" AND ({})", any.join(" OR ")));
            }
            return s;
        }
    };
    let weights = if weights.is_empty() {
        String::new()
    } else {
        format!(", {weights}")
    };
    let mut s = Sql::new(&format!(
        "SELECT {a}.id, bm25({index}{weights}) AS score, {a}.created_at
         FROM {index} CROSS JOIN {table} {a} ON {a}.id = {index}.rowid
         WHERE {index} MATCH "
    ));
    let p = s.param(q.to_owned());
    s.push(&p);
    s
}

/// Common filters, the order (an index's newest matches for ranking, else
/// newest rows) and the limit; then runs the query.
fn finish_ranked(
    conn: &Connection,
    mut sql: Sql,
    src: &Source,
    req: &SearchRequest,
    find: Find<'_>,
    limit: usize,
) -> Result<Vec<Ranked>> {
    common_filters(&mut sql, req, src.alias);
    let a = src.alias;
    let (order, n) = match find {
        Find::Words(_, d) => (format!("{}.rowid DESC", src.fts), src.window / d.max(1)),
        Find::Substrings(_) => (format!("{}.rowid DESC", src.trigram), src.window),
        Find::Newest | Find::Like(_) => (format!("{a}.created_at DESC, {a}.id DESC"), limit),
    };
    let l = sql.param(n as i64);
    sql.push(&format!(" ORDER BY {order} LIMIT {l}"));
    collect(conn, sql, src.kind, limit)
}

fn rank_observations(
    conn: &Connection,
    req: &SearchRequest,
    types: &[String],
    find: Find<'_>,
    limit: usize,
) -> Result<Vec<Ranked>> {
    let sql = filter_observations(select_ranked(&OBSERVATIONS, find), req, types);
    finish_ranked(conn, sql, &OBSERVATIONS, req, find, limit)
}

/// The observation filters: project, types, file.
fn filter_observations(mut sql: Sql, req: &SearchRequest, types: &[String]) -> Sql {
    if let Some(project) = req.project_id {
        let p = sql.param(project);
        sql.push(&format!(" AND o.project_id = {p}"));
    }
    sql.push(&crate::authors::filter("o", req.mine_only));
    if !types.is_empty() {
        let list: Vec<String> = types.iter().map(|t| sql.param(t.clone())).collect();
        sql.push(&format!(" AND o.type IN ({})", list.join(", ")));
    }
    if let Some(file) = &req.file {
        let exact: Vec<String> = file.exact.iter().map(|f| sql.param(f.clone())).collect();
        let mut sub = format!(
            "SELECT observation_id FROM observation_files WHERE path IN ({})",
            exact.join(", ")
        );
        if let Some(suffix) = &file.suffix {
            let p = sql.param(format!("%/{}", like_escape(suffix)));
            sub.push_str(&format!(
                " UNION SELECT observation_id FROM observation_files WHERE path LIKE {p} ESCAPE '\\'"
            ));
        }
        sql.push(&format!(" AND o.id IN ({sub})"));
    }
    sql
}

fn rank_summaries(
    conn: &Connection,
    req: &SearchRequest,
    find: Find<'_>,
    limit: usize,
) -> Result<Vec<Ranked>> {
    let mut sql = select_ranked(&SUMMARIES, find);
    if let Some(project) = req.project_id {
        let p = sql.param(project);
        sql.push(&format!(" AND m.project_id = {p}"));
    }
    sql.push(&crate::authors::filter("m", req.mine_only));
    finish_ranked(conn, sql, &SUMMARIES, req, find, limit)
}

fn rank_prompts(
    conn: &Connection,
    req: &SearchRequest,
    find: Find<'_>,
    limit: usize,
) -> Result<Vec<Ranked>> {
    let mut sql = select_ranked(&PROMPTS, find);
    if let Some(project) = req.project_id {
        let p = sql.param(project);
        sql.push(&format!(
            " AND q.session_id IN (SELECT id FROM sessions WHERE project_id = {p})"
        ));
    }
    finish_ranked(conn, sql, &PROMPTS, req, find, limit)
}

fn project_at(r: &rusqlite::Row<'_>, i: usize) -> rusqlite::Result<Option<ProjectRef>> {
    Ok(match r.get::<_, Option<String>>(i)? {
        Some(root) => Some(ProjectRef {
            root,
            name: r.get(i + 1)?,
        }),
        None => None,
    })
}

fn session_at(r: &rusqlite::Row<'_>, i: usize) -> rusqlite::Result<Option<SessionKey>> {
    Ok(match r.get::<_, Option<String>>(i)? {
        Some(platform) => Some(SessionKey {
            platform,
            session_id: r.get(i + 1)?,
            continues: None,
        }),
        None => None,
    })
}

/// The display row of one item (also used by the timeline).
pub fn hit(conn: &Connection, id: ItemRef) -> Result<Option<Hit>> {
    match id.kind {
        Kind::Observation => observation_hit(conn, id),
        Kind::Summary => summary_hit(conn, id),
        Kind::Prompt => prompt_hit(conn, id),
    }
}

fn observation_hit(conn: &Connection, id: ItemRef) -> Result<Option<Hit>> {
    Ok(conn
        .prepare_cached(
            "SELECT o.type, o.title, o.subtitle, o.files_modified, o.files_read,
                    o.created_at, p.root, p.name, s.platform, s.platform_session_id, o.author
             FROM observations o LEFT JOIN projects p ON p.id = o.project_id
             LEFT JOIN sessions s ON s.id = o.session_id
             WHERE o.id = ?1",
        )?
        .query_row([id.id], |r| {
            let created: i64 = r.get(5)?;
            let modified = parse_json_list(&r.get::<_, String>(3)?);
            let read = parse_json_list(&r.get::<_, String>(4)?);
            Ok(Hit {
                id,
                kind: id.kind,
                obs_type: Some(r.get(0)?),
                title: one_line(&r.get::<_, String>(1)?, 160),
                subtitle: one_line(&r.get::<_, String>(2)?, 160),
                file: main_file(&modified, &read),
                created_at: format_rfc3339(created),
                created_at_ms: created,
                project: project_at(r, 6)?,
                session: session_at(r, 8)?,
                score: 0.0,
                superseded_by: None,
                freshness: None,
                author: r.get(10)?,
            })
        })
        .optional()?)
}

fn summary_hit(conn: &Connection, id: ItemRef) -> Result<Option<Hit>> {
    Ok(conn
        .prepare_cached(
            "SELECT m.request, m.completed, m.learned, m.created_at, p.root, p.name,
                    s.platform, s.platform_session_id, m.author
             FROM summaries m LEFT JOIN projects p ON p.id = m.project_id
             LEFT JOIN sessions s ON s.id = m.session_id
             WHERE m.id = ?1",
        )?
        .query_row([id.id], |r| {
            let request: String = r.get(0)?;
            let completed: String = r.get(1)?;
            let learned: String = r.get(2)?;
            let created: i64 = r.get(3)?;
            let (title, subtitle) = if request.trim().is_empty() {
                (completed, learned)
            } else if completed.trim().is_empty() {
                (request, learned)
            } else {
                (request, completed)
            };
            Ok(Hit {
                id,
                kind: id.kind,
                obs_type: None,
                title: one_line(&title, 160),
                subtitle: one_line(&subtitle, 160),
                file: None,
                created_at: format_rfc3339(created),
                created_at_ms: created,
                project: project_at(r, 4)?,
                session: session_at(r, 6)?,
                score: 0.0,
                superseded_by: None,
                freshness: None,
                author: r.get(8)?,
            })
        })
        .optional()?)
}

fn prompt_hit(conn: &Connection, id: ItemRef) -> Result<Option<Hit>> {
    Ok(conn
        .prepare_cached(
            "SELECT q.text, q.created_at, p.root, p.name, s.platform, s.platform_session_id
             FROM prompts q JOIN sessions s ON s.id = q.session_id
             LEFT JOIN projects p ON p.id = s.project_id
             WHERE q.id = ?1",
        )?
        .query_row([id.id], |r| {
            let created: i64 = r.get(1)?;
            let text: String = r.get(0)?;
            let described = mnemo_core::host_text::describe(&text);
            Ok(Hit {
                id,
                kind: id.kind,
                obs_type: None,
                title: one_line(described.as_deref().unwrap_or(&text), 160),
                subtitle: String::new(),
                file: None,
                created_at: format_rfc3339(created),
                created_at_ms: created,
                project: project_at(r, 2)?,
                session: session_at(r, 4)?,
                score: 0.0,
                superseded_by: None,
                freshness: None,
                author: None,
            })
        })
        .optional()?)
}

/// Whether one item passes the request's filters (kinds, types, project,
/// file, time, session, agent): the listing query, on one id. Hybrid search
/// checks what it finds by meaning with it.
pub(crate) fn passes_filters(conn: &Connection, req: &SearchRequest, id: ItemRef) -> Result<bool> {
    let kinds = kinds_of(req);
    let (src, wanted) = match id.kind {
        Kind::Observation => (&OBSERVATIONS, kinds.observations),
        Kind::Summary => (&SUMMARIES, kinds.summaries),
        Kind::Prompt => (&PROMPTS, kinds.prompts),
    };
    if !wanted {
        return Ok(false);
    }
    let mut sql = select_ranked(src, Find::Newest);
    let p = sql.param(id.id);
    sql.push(&format!(" AND {}.id = {p}", src.alias));
    let mut sql = match (id.kind, req.project_id) {
        (Kind::Observation, _) => filter_observations(sql, req, &kinds.types),
        (Kind::Summary, project) => {
            if let Some(project) = project {
                let p = sql.param(project);
                sql.push(&format!(" AND m.project_id = {p}"));
            }
            sql.push(&crate::authors::filter("m", req.mine_only));
            sql
        }
        (_, None) => sql,
        (Kind::Prompt, Some(project)) => {
            let p = sql.param(project);
            sql.push(&format!(
                " AND q.session_id IN (SELECT id FROM sessions WHERE project_id = {p})"
            ));
            sql
        }
    };
    common_filters(&mut sql, req, src.alias);
    let mut stmt = conn.prepare_cached(&sql.text)?;
    Ok(stmt.exists(rusqlite::params_from_iter(sql.params.iter()))?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use mnemo_store::freshness::Freshness;

    fn scored_hit(id: i64, score: f64, freshness: Option<Freshness>) -> Hit {
        Hit {
            id: ItemRef {
                kind: Kind::Observation,
                id,
            },
            kind: Kind::Observation,
            obs_type: None,
            title: format!("hit {id}"),
            subtitle: String::new(),
            file: None,
            created_at: String::new(),
            created_at_ms: 0,
            project: None,
            session: None,
            score,
            superseded_by: None,
            freshness,
            author: None,
        }
    }

    fn ids(hits: &[Hit]) -> Vec<i64> {
        hits.iter().map(|h| h.id.id).collect()
    }

    #[test]
    fn a_stale_hit_moves_below_the_fresh_ones_it_now_trails_and_stays_listed() {
        let mut hits = vec![
            scored_hit(1, 1.0, Some(Freshness::Changed)),
            scored_hit(2, 0.9, Some(Freshness::Current)),
            scored_hit(3, 0.6, None),
            scored_hit(4, 0.55, Some(Freshness::Deleted)),
            scored_hit(5, 0.4, None),
        ];
        demote_stale(&mut hits);
        assert_eq!(ids(&hits), [2, 1, 3, 5, 4]);
        assert!((hits[1].score - 0.75).abs() < 1e-9);
    }

    #[test]
    fn without_freshness_the_order_is_untouched() {
        let mut hits = vec![scored_hit(7, 0.2, None), scored_hit(8, 0.9, None)];
        demote_stale(&mut hits);
        assert_eq!(ids(&hits), [7, 8]);
    }

    #[test]
    fn file_filters_cover_absolute_relative_and_suffix_forms() {
        let root = Path::new("/home/dev/shop");
        let f = FileFilter::new("/home/dev/shop/src/../src/auth.rs", root, Some(root));
        assert!(f.exact.contains(&"/home/dev/shop/src/auth.rs".to_owned()));
        assert!(f.exact.contains(&"src/auth.rs".to_owned()));
        assert_eq!(f.suffix, None);
        let f = FileFilter::new("./auth.rs", &root.join("src"), Some(root));
        assert!(f.exact.contains(&"/home/dev/shop/src/auth.rs".to_owned()));
        assert!(f.exact.contains(&"/home/dev/shop/auth.rs".to_owned()));
        assert_eq!(f.suffix.as_deref(), Some("auth.rs"));
    }

    /// Thousands of random queries built from FTS5's syntax characters and
    /// keywords: every one runs, on every kind, with and without relaxing.
    #[test]
    fn random_queries_never_error() {
        use mnemo_store::memory::{NewObservation, NewSummary, insert_observation, insert_summary};
        let tmp = tempfile::tempdir().unwrap();
        let store =
            mnemo_store::Store::open(&tmp.path().join("m.db"), std::time::Duration::from_secs(1))
                .unwrap();
        let o = NewObservation {
            uid: "o".into(),
            kind: "bugfix".into(),
            title: "Login AND hashes NOT \"quoted\" src/auth.rs".into(),
            files_modified: vec!["/p/src/auth.rs".into()],
            ..Default::default()
        };
        insert_observation(store.conn(), &o).unwrap();
        let s = NewSummary {
            uid: "s".into(),
            request: "fix (login) * now".into(),
            ..Default::default()
        };
        insert_summary(store.conn(), &s).unwrap();
        const PIECES: &[&str] = &[
            "\"",
            "'",
            "*",
            ":",
            "(",
            ")",
            "-",
            "+",
            "^",
            "{",
            "}",
            "[",
            "]",
            "\\",
            "/",
            ".",
            ",",
            ";",
            "AND",
            "OR",
            "NOT",
            "NEAR",
            "NEAR(",
            "login",
            "auth",
            "src/auth.rs",
            "é",
            "日本",
            "🙂",
            "\u{0}",
            "\n",
            "\t",
            " ",
            " ",
            " ",
            "a",
            "zz",
            "%",
            "_",
            "#12",
        ];
        let mut x: u64 = 0x2545_F491_4F6C_DD1D;
        for _ in 0..3000 {
            let mut q = String::new();
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            for k in 0..(x % 9) {
                let i = ((x >> (k * 5)) as usize) % PIECES.len();
                q.push_str(PIECES[i]);
            }
            let req = SearchRequest {
                query: q.clone(),
                limit: 5,
                ..Default::default()
            };
            if let Err(e) = search(store.conn(), &req) {
                panic!("query {q:?}: {e}");
            }
        }
    }

    #[test]
    fn types_have_short_names() {
        assert_eq!(canonical_type("[fix]"), "bugfix");
        assert_eq!(canonical_type("Feature"), "feature");
        assert_eq!(canonical_type("summaries"), "summary");
        assert_eq!(canonical_type("custom"), "custom");
        assert_eq!(like_escape("a_b%c\\"), "a\\_b\\%c\\\\");
    }
}
