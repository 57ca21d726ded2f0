//! Full-text search over observations, summaries and prompts.
//!
//! A query is reduced to the words that say something ([`crate::query`]:
//! stop and question words set aside, repeats once, a long query cut to its
//! most selective words by their document counts, which also weigh each
//! word). FTS5 then finds candidates: for a query of up to five words, the
//! records with every word however old; then, unless those fill the pool,
//! the records with any of the five rarest words that match something,
//! ranked by its `bm25()` with each table's columns weighted (an
//! observation's title and files count most, its narrative least). The best
//! fifty of each kind are re-ranked
//! ([`crate::ranking`]): BM25F over their fields, scaled by how much of the
//! query's weight each covers, by kind (an observation is what the index
//! lists and what an agent can act on; a prompt only says what was asked),
//! and up for decisions when the question asks what was decided. A
//! decision that a later decision replaced ([`crate::supersede`]) sinks
//! below its successor and says so (`superseded_by`). Scores are rounded so
//! that near-equal ones tie, and ties go to the newest. `relaxed` says that
//! no hit contains every word.
//!
//! A query with nothing searchable lists the newest items that pass the
//! filters. The user's text never reaches FTS5 as syntax, so no query
//! errors. [`search`] is the library call: query text and scope in, ranked
//! hits with scores out.
//!
//! Cost is bounded whatever the store holds: FTS5 computes BM25 for at most
//! the newest [`RANK_WINDOW`] matching observations and half as many
//! summaries and prompts (it walks its index in rowid order and stops
//! there), a word's document count stops at [`DOC_COUNT_CAP`], and at most
//! [`RERANK_POOL`] candidates per kind are read for re-ranking. The FTS
//! table always drives the join (`CROSS JOIN`): left to itself, SQLite may
//! walk a project's observations by date and run the match once per row,
//! which is a hundred times slower on a large store.

use std::path::{Component, Path, PathBuf};

use mnemo_core::time::format_rfc3339;
use mnemo_store::parse_json_list;
use rusqlite::types::Value;
use rusqlite::{Connection, OptionalExtension};
use serde::Serialize;

use crate::Result;
use crate::ids::{ItemRef, Kind};
use crate::query::{MAX_TERMS, Terms};
use crate::ranking::{self, Doc, TermWeights};
use crate::records::{ProjectRef, SessionKey};
use crate::supersede;
use crate::text::{main_file, one_line};

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
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SearchResults {
    pub query: String,
    /// The FTS5 query actually run (None: listed by recency).
    pub fts_query: Option<String>,
    /// True when no hit contains every word of the query (hits have some).
    pub relaxed: bool,
    pub hits: Vec<Hit>,
}

/// Runs a search. Any search text is valid; a type outside the vocabulary
/// or a session that matches nothing is an input error.
pub fn search(conn: &Connection, req: &SearchRequest) -> Result<SearchResults> {
    crate::types::check(conn, &req.types, crate::types::Allowed::Everything)?;
    if let Some(session) = req.session.as_deref().filter(|s| !s.trim().is_empty()) {
        crate::scope::sessions_matching(conn, session)?;
    }
    let mut terms = Terms::parse(&req.query);
    let limit = req.limit.clamp(1, 500);
    let kinds = kinds_of(req);
    if terms.is_empty() {
        let hits = listed(conn, req, &kinds, limit)?;
        return Ok(SearchResults {
            query: req.query.clone(),
            fts_query: None,
            relaxed: false,
            hits,
        });
    }
    let weights = select_terms(conn, &kinds, &mut terms)?;
    let any = terms.any().expect("terms are not empty");
    let any_selective = terms
        .any_except(&candidate_skips(&weights.doc_counts))
        .expect("a term is kept");
    let pool = limit.max(RERANK_POOL);
    // Records with every word first, however old (an OR query ranks only
    // the newest matches of a common word); when they are enough to fill
    // the pool, records with fewer words could not outrank them. A long
    // query almost never matches with every word, and intersecting a dozen
    // long lists is the costliest query of all: it goes straight to OR.
    let mut candidates = Vec::new();
    if terms.len() <= OR_TERMS {
        let all = terms.all().expect("terms are not empty");
        candidates = matches(conn, req, &kinds, &all, 1, pool)?;
    }
    if terms.len() > 1 && candidates.len() < pool {
        for r in matches(conn, req, &kinds, &any_selective, OR_NARROWING, pool)? {
            if !candidates.iter().any(|c| c.id == r.id) {
                candidates.push(r);
            }
        }
    }
    let mut scored = rerank(conn, &terms, &weights, &req.query, candidates)?;
    // Supersession is looked up for the best few only: it costs a query
    // per decision, and a demoted decision leaves room for one from below.
    order(&mut scored);
    scored.truncate(limit * 2);
    mark_superseded(conn, req, &mut scored)?;
    order(&mut scored);
    scored.truncate(limit);
    let relaxed = terms.len() > 1 && !scored.iter().any(|r| r.coverage >= 1.0 - 1e-9);
    let hits = hits_of(conn, &scored)?;
    Ok(SearchResults {
        query: req.query.clone(),
        fts_query: Some(any),
        relaxed,
        hits,
    })
}

/// At most this many words find the candidates of an OR query.
const OR_TERMS: usize = 5;

/// Which words the OR query for candidates leaves out: all but the
/// [`OR_TERMS`] rarest, and the common ones when some are not. A common word
/// adds a little to every record's score (counted when re-ranking) but
/// makes the OR query walk most of the store.
fn candidate_skips(doc_counts: &[u64]) -> Vec<bool> {
    let selective = |n: u64| n > 0 && n < DOC_COUNT_CAP;
    let some_selective = doc_counts.iter().any(|&n| selective(n));
    let mut order: Vec<usize> = (0..doc_counts.len())
        .filter(|&i| doc_counts[i] > 0 && (!some_selective || selective(doc_counts[i])))
        .collect();
    order.sort_by_key(|&i| (doc_counts[i], i));
    let mut skip = vec![true; doc_counts.len()];
    for &i in order.iter().take(OR_TERMS) {
        skip[i] = false;
    }
    if skip.iter().all(|&s| s) {
        // Nothing matches anywhere: any word will do (and find nothing).
        skip.fill(false);
    }
    skip
}

/// An OR query ranks this share of each source's window (see [`matches`]).
const OR_NARROWING: usize = 4;

/// Candidates read per kind for re-ranking (at least the request's limit).
pub const RERANK_POOL: usize = 50;

/// How many documents a word is counted in at most when measuring how
/// selective it is: past this, a word is common and its exact count
/// changes nothing.
pub const DOC_COUNT_CAP: u64 = 1000;

/// Document counts of the query's words (capped), which keep the most
/// selective [`MAX_TERMS`] of a long query and weigh each word.
fn select_terms(conn: &Connection, kinds: &Kinds, terms: &mut Terms) -> Result<TermWeights> {
    let sources = sources_of(kinds);
    let mut failed: Option<rusqlite::Error> = None;
    let mut count = |fts: &str| -> u64 {
        let mut n = 0;
        for src in &sources {
            if n >= DOC_COUNT_CAP {
                break;
            }
            match doc_count(conn, src.fts, fts, DOC_COUNT_CAP - n) {
                Ok(c) => n += c,
                Err(e) => failed = Some(e),
            }
        }
        n
    };
    if terms.len() > MAX_TERMS {
        terms.keep_selective(MAX_TERMS, &mut count);
    }
    let counts: Vec<u64> = terms.terms().iter().map(|t| count(&t.fts())).collect();
    if let Some(e) = failed {
        return Err(e.into());
    }
    let mut total = 0u64;
    for src in &sources {
        let n: Option<i64> = conn
            .prepare_cached(&format!("SELECT max(rowid) FROM {}", src.table))?
            .query_row([], |r| r.get(0))?;
        total += n.unwrap_or(0).max(0) as u64;
    }
    Ok(TermWeights::new(&counts, total))
}

/// How many rows of one index match a term, up to `cap`.
fn doc_count(conn: &Connection, index: &str, fts: &str, cap: u64) -> rusqlite::Result<u64> {
    let n: i64 = conn
        .prepare_cached(&format!(
            "SELECT count(*) FROM (SELECT 1 FROM {index} WHERE {index} MATCH ?1 LIMIT ?2)"
        ))?
        .query_row(rusqlite::params![fts, cap as i64], |r| r.get(0))?;
    Ok(n as u64)
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

/// Scores each candidate: BM25F over its fields, scaled by its kind, by its
/// coverage of the query, and up when the question asks for decisions.
fn rerank(
    conn: &Connection,
    terms: &Terms,
    weights: &TermWeights,
    query: &str,
    candidates: Vec<Ranked>,
) -> Result<Vec<Scored>> {
    let docs: Vec<Doc> = candidates
        .iter()
        .map(|r| ranking::record_doc(conn, r.id))
        .collect::<Result<_>>()?;
    let mut avg_len = std::collections::HashMap::new();
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
    let mut out = Vec::with_capacity(candidates.len());
    for (r, doc) in candidates.into_iter().zip(&docs) {
        let coverage = ranking::coverage(terms, weights, doc);
        let bm25 = ranking::bm25f(terms, weights, doc, &avg_len[&r.id.kind]);
        let mut score = bm25 * kind_factor(r.id.kind) * coverage_factor(coverage);
        if wants_decisions && doc.obs_type.as_deref() == Some("decision") {
            score *= DECISION_INTENT;
        }
        if wants_status && r.id.kind == Kind::Summary {
            score *= STATUS_INTENT;
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

/// How coverage scales a score: a record with all the query's weight
/// keeps its score, one with half of it keeps a quarter.
fn coverage_factor(coverage: f64) -> f64 {
    coverage * coverage
}

/// How much a decision gains when the question asks what was decided.
const DECISION_INTENT: f64 = 1.5;
/// How much more a turn summary weighs when the question asks where the
/// work stands (`ranking::asks_for_status`).
const STATUS_INTENT: f64 = 1.5;

/// Superseded decisions sink below their successor, which takes their
/// place when the search did not find it by itself.
fn mark_superseded(conn: &Connection, req: &SearchRequest, scored: &mut Vec<Scored>) -> Result<()> {
    let decisions: Vec<i64> = scored
        .iter()
        .filter(|s| s.id.kind == Kind::Observation)
        .map(|s| s.id.id)
        .collect();
    let successors = supersede::successors(conn, &decisions)?;
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

/// A superseded decision keeps this share of its score.
const SUPERSEDED_FACTOR: f64 = 0.5;

/// Whether a successor found through its predecessor passes the request's
/// filters (type, time, file, session): the same query, on one id.
fn successor_passes(conn: &Connection, req: &SearchRequest, id: i64) -> Result<bool> {
    let kinds = kinds_of(req);
    if !kinds.observations {
        return Ok(false);
    }
    let mut sql = select_ranked(&OBSERVATIONS, None);
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
    let key = |r: &Scored| {
        if r.score > 0.0 {
            -(r.score.ln() * 50.0).round() as i64
        } else {
            i64::MAX
        }
    };
    scored.sort_by(|a, b| {
        key(a)
            .cmp(&key(b))
            .then(b.created_at.cmp(&a.created_at))
            .then(b.id.id.cmp(&a.id.id))
    });
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

/// The best `limit` matches of an FTS5 query in each kind searched (raw
/// BM25 scores, lower is better), among the newest matches: each source's
/// window, divided by `narrow` (an OR query of several words is costlier
/// per row, and its best matches are found again by the every-word query).
fn matches(
    conn: &Connection,
    req: &SearchRequest,
    kinds: &Kinds,
    fts: &str,
    narrow: usize,
    limit: usize,
) -> Result<Vec<Ranked>> {
    let fts = Some((fts, narrow));
    let mut all: Vec<Ranked> = Vec::new();
    if kinds.observations {
        all.extend(rank_observations(conn, req, &kinds.types, fts, limit)?);
    }
    if kinds.summaries {
        all.extend(rank_summaries(conn, req, fts, limit)?);
    }
    if kinds.prompts {
        all.extend(rank_prompts(conn, req, fts, limit)?);
    }
    Ok(all)
}

/// The newest items that pass the filters (a query with nothing searchable).
fn listed(conn: &Connection, req: &SearchRequest, kinds: &Kinds, limit: usize) -> Result<Vec<Hit>> {
    let mut all: Vec<Ranked> = Vec::new();
    if kinds.observations {
        all.extend(rank_observations(conn, req, &kinds.types, None, limit)?);
    }
    if kinds.summaries {
        all.extend(rank_summaries(conn, req, None, limit)?);
    }
    if kinds.prompts {
        all.extend(rank_prompts(conn, req, None, limit)?);
    }
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
}

const OBSERVATIONS: Source = Source {
    table: "observations",
    alias: "o",
    fts: "observations_fts",
    weights: OBSERVATION_WEIGHTS,
    window: RANK_WINDOW,
    kind: Kind::Observation,
};
const SUMMARIES: Source = Source {
    table: "summaries",
    alias: "m",
    fts: "summaries_fts",
    weights: SUMMARY_WEIGHTS,
    window: RANK_WINDOW / 2,
    kind: Kind::Summary,
};
const PROMPTS: Source = Source {
    table: "prompts",
    alias: "q",
    fts: "prompts_fts",
    weights: "",
    window: RANK_WINDOW / 2,
    kind: Kind::Prompt,
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

/// `SELECT id, score, created_at` of `src`: driven by its FTS index when
/// there is a query (the index must lead the join: starting from the table
/// costs a full scan), else by the table alone. Filters are appended as
/// ` AND …`.
fn select_ranked(src: &Source, fts: Option<&str>) -> Sql {
    let Source {
        table,
        alias: a,
        fts: index,
        weights,
        ..
    } = src;
    match fts {
        Some(q) => {
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
        None => Sql::new(&format!(
            "SELECT {a}.id, 0.0 AS score, {a}.created_at FROM {table} {a} WHERE 1"
        )),
    }
}

/// Common filters, the order (newest matches for ranking, else newest
/// rows) and the limit; then runs the query. `narrow` is None when
/// listing, else what the source's window is divided by.
fn finish_ranked(
    conn: &Connection,
    mut sql: Sql,
    src: &Source,
    req: &SearchRequest,
    narrow: Option<usize>,
    limit: usize,
) -> Result<Vec<Ranked>> {
    common_filters(&mut sql, req, src.alias);
    let (order, n) = match narrow {
        Some(d) => (format!("{}.rowid DESC", src.fts), src.window / d.max(1)),
        None => {
            let a = src.alias;
            (format!("{a}.created_at DESC, {a}.id DESC"), limit)
        }
    };
    let l = sql.param(n as i64);
    sql.push(&format!(" ORDER BY {order} LIMIT {l}"));
    collect(conn, sql, src.kind, limit)
}

fn rank_observations(
    conn: &Connection,
    req: &SearchRequest,
    types: &[String],
    fts: Option<(&str, usize)>,
    limit: usize,
) -> Result<Vec<Ranked>> {
    let sql = filter_observations(select_ranked(&OBSERVATIONS, fts.map(|f| f.0)), req, types);
    finish_ranked(conn, sql, &OBSERVATIONS, req, fts.map(|f| f.1), limit)
}

/// The observation filters: project, types, file.
fn filter_observations(mut sql: Sql, req: &SearchRequest, types: &[String]) -> Sql {
    if let Some(project) = req.project_id {
        let p = sql.param(project);
        sql.push(&format!(" AND o.project_id = {p}"));
    }
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
    fts: Option<(&str, usize)>,
    limit: usize,
) -> Result<Vec<Ranked>> {
    let mut sql = select_ranked(&SUMMARIES, fts.map(|f| f.0));
    if let Some(project) = req.project_id {
        let p = sql.param(project);
        sql.push(&format!(" AND m.project_id = {p}"));
    }
    finish_ranked(conn, sql, &SUMMARIES, req, fts.map(|f| f.1), limit)
}

fn rank_prompts(
    conn: &Connection,
    req: &SearchRequest,
    fts: Option<(&str, usize)>,
    limit: usize,
) -> Result<Vec<Ranked>> {
    let mut sql = select_ranked(&PROMPTS, fts.map(|f| f.0));
    if let Some(project) = req.project_id {
        let p = sql.param(project);
        sql.push(&format!(
            " AND q.session_id IN (SELECT id FROM sessions WHERE project_id = {p})"
        ));
    }
    finish_ranked(conn, sql, &PROMPTS, req, fts.map(|f| f.1), limit)
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
    let hit = match id.kind {
        Kind::Observation => conn
            .prepare_cached(
                "SELECT o.type, o.title, o.subtitle, o.files_modified, o.files_read,
                        o.created_at, p.root, p.name, s.platform, s.platform_session_id
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
                })
            })
            .optional()?,
        Kind::Summary => conn
            .prepare_cached(
                "SELECT m.request, m.completed, m.learned, m.created_at, p.root, p.name,
                        s.platform, s.platform_session_id
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
                })
            })
            .optional()?,
        Kind::Prompt => conn
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
                })
            })
            .optional()?,
    };
    Ok(hit)
}

#[cfg(test)]
mod tests {
    use super::*;

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
    fn candidates_come_from_the_rarest_words_that_match_something() {
        let c = DOC_COUNT_CAP;
        assert_eq!(candidate_skips(&[c, 3, 0, 40]), [true, false, true, false]);
        assert_eq!(candidate_skips(&[c, c, 0]), [false, false, true]);
        assert_eq!(candidate_skips(&[0, 0]), [false, false]);
        let many = [5, 1, 9, 2, 8, 3, 7, c];
        let kept: Vec<bool> = candidate_skips(&many).iter().map(|s| !s).collect();
        assert_eq!(kept, [true, true, false, true, false, true, true, false]);
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
