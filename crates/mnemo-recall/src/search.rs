//! Full-text search over observations, summaries and prompts.
//!
//! One list, ranked by BM25 (FTS5's `bm25()`), with each table's columns
//! weighted by how much a hit there says: an observation's title and the
//! files it touched count most, its narrative least. Scores of the three
//! tables are put on one scale by a per-kind factor (an observation is what
//! the index lists and what an agent can act on; a prompt only says what was
//! asked), rounded so that near-equal scores tie, and ties go to the newest.
//!
//! Every word must match; when that finds nothing and the query has several
//! words, any word may match (`relaxed` says so). A query with nothing
//! searchable lists the newest items that pass the filters. The user's text
//! never reaches FTS5 as syntax (see [`crate::query`]), so no query errors.
//!
//! Cost is bounded whatever the store holds: BM25 is computed for at most
//! the newest [`RANK_WINDOW`] matching observations and half as many
//! summaries and prompts (FTS5 walks its index in rowid order and stops
//! there), which ranks every match of any specific query exactly and, for a
//! word found in most of a large store, ranks the newest part of it
//! (recency is what breaks ties anyway). Only ids, scores
//! and times are ranked; the few rows shown are read afterwards. The FTS
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
use crate::query::Terms;
use crate::records::{ProjectRef, SessionKey};
use crate::text::{main_file, one_line};

/// BM25 weights of `observations_fts` columns: title, subtitle, narrative,
/// facts, concepts, files_read, files_modified.
const OBSERVATION_WEIGHTS: &str = "10.0, 4.0, 1.0, 2.0, 3.0, 3.0, 5.0";
/// `summaries_fts`: request, investigated, learned, completed, next_steps, notes.
const SUMMARY_WEIGHTS: &str = "4.0, 1.0, 2.0, 2.0, 1.0, 1.0";

/// Most matches of observations whose BM25 score is computed (the newest
/// ones); summaries and prompts, which only back the observations up, get
/// half as many.
pub const RANK_WINDOW: usize = 2000;

/// Scale of each kind's BM25 score in the merged list.
fn kind_factor(kind: Kind) -> f64 {
    match kind {
        Kind::Observation => 1.0,
        Kind::Summary => 0.8,
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
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SearchResults {
    pub query: String,
    /// The FTS5 query actually run (None: listed by recency).
    pub fts_query: Option<String>,
    /// True when no item matched every word and any word was allowed.
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
    let terms = Terms::parse(&req.query);
    let limit = req.limit.clamp(1, 500);
    let kinds = kinds_of(req);
    let Some(all) = terms.all() else {
        let hits = ranked(conn, req, &kinds, None, limit)?;
        return Ok(SearchResults {
            query: req.query.clone(),
            fts_query: None,
            relaxed: false,
            hits,
        });
    };
    let hits = ranked(conn, req, &kinds, Some(&all), limit)?;
    if !hits.is_empty() || terms.len() < 2 {
        return Ok(SearchResults {
            query: req.query.clone(),
            fts_query: Some(all),
            relaxed: false,
            hits,
        });
    }
    let any = terms.any().expect("terms are not empty");
    let hits = ranked(conn, req, &kinds, Some(&any), limit)?;
    Ok(SearchResults {
        query: req.query.clone(),
        fts_query: Some(any),
        relaxed: true,
        hits,
    })
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

/// Time and session filters on a table alias with `created_at` and `session_id`.
fn common_filters(sql: &mut Sql, req: &SearchRequest, alias: &str) {
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

fn ranked(
    conn: &Connection,
    req: &SearchRequest,
    kinds: &Kinds,
    fts: Option<&str>,
    limit: usize,
) -> Result<Vec<Hit>> {
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
    // BM25 is negative, better is lower. Scaled per kind, then bucketed on a
    // log scale (buckets 2% wide) so that near-equal scores tie whatever the
    // store's size, and the newer item wins the tie.
    let key = |r: &Ranked| {
        let s = -r.score * kind_factor(r.id.kind);
        if s > 0.0 {
            -(s.ln() * 50.0).round() as i64
        } else {
            i64::MAX
        }
    };
    all.sort_by(|a, b| {
        key(a)
            .cmp(&key(b))
            .then(b.created_at.cmp(&a.created_at))
            .then(b.id.id.cmp(&a.id.id))
    });
    all.truncate(limit);
    let mut hits = Vec::with_capacity(all.len());
    for r in all {
        if let Some(mut hit) = hit(conn, r.id)? {
            // `+ 0.0` turns the -0.0 of recency listings into 0.
            hit.score = (-r.score * kind_factor(r.id.kind) * 1e6).round() / 1e6 + 0.0;
            hits.push(hit);
        }
    }
    Ok(hits)
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
/// rows) and the limit; then runs the query.
fn finish_ranked(
    conn: &Connection,
    mut sql: Sql,
    src: &Source,
    req: &SearchRequest,
    fts: bool,
    limit: usize,
) -> Result<Vec<Ranked>> {
    common_filters(&mut sql, req, src.alias);
    let (order, n) = if fts {
        (format!("{}.rowid DESC", src.fts), src.window)
    } else {
        let a = src.alias;
        (format!("{a}.created_at DESC, {a}.id DESC"), limit)
    };
    let l = sql.param(n as i64);
    sql.push(&format!(" ORDER BY {order} LIMIT {l}"));
    collect(conn, sql, src.kind, limit)
}

fn rank_observations(
    conn: &Connection,
    req: &SearchRequest,
    types: &[String],
    fts: Option<&str>,
    limit: usize,
) -> Result<Vec<Ranked>> {
    let mut sql = select_ranked(&OBSERVATIONS, fts);
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
    finish_ranked(conn, sql, &OBSERVATIONS, req, fts.is_some(), limit)
}

fn rank_summaries(
    conn: &Connection,
    req: &SearchRequest,
    fts: Option<&str>,
    limit: usize,
) -> Result<Vec<Ranked>> {
    let mut sql = select_ranked(&SUMMARIES, fts);
    if let Some(project) = req.project_id {
        let p = sql.param(project);
        sql.push(&format!(" AND m.project_id = {p}"));
    }
    finish_ranked(conn, sql, &SUMMARIES, req, fts.is_some(), limit)
}

fn rank_prompts(
    conn: &Connection,
    req: &SearchRequest,
    fts: Option<&str>,
    limit: usize,
) -> Result<Vec<Ranked>> {
    let mut sql = select_ranked(&PROMPTS, fts);
    if let Some(project) = req.project_id {
        let p = sql.param(project);
        sql.push(&format!(
            " AND q.session_id IN (SELECT id FROM sessions WHERE project_id = {p})"
        ));
    }
    finish_ranked(conn, sql, &PROMPTS, req, fts.is_some(), limit)
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
                Ok(Hit {
                    id,
                    kind: id.kind,
                    obs_type: None,
                    title: one_line(&r.get::<_, String>(0)?, 160),
                    subtitle: String::new(),
                    file: None,
                    created_at: format_rfc3339(created),
                    created_at_ms: created,
                    project: project_at(r, 2)?,
                    session: session_at(r, 4)?,
                    score: 0.0,
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
    fn types_have_short_names() {
        assert_eq!(canonical_type("[fix]"), "bugfix");
        assert_eq!(canonical_type("Feature"), "feature");
        assert_eq!(canonical_type("summaries"), "summary");
        assert_eq!(canonical_type("custom"), "custom");
        assert_eq!(like_escape("a_b%c\\"), "a\\_b\\%c\\\\");
    }
}
