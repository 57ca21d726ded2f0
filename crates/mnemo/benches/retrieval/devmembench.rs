//! DevMemBench (the opencode-memory project's coding-assistant memory
//! benchmark, MIT): 25 sessions of two projects and 200 developer
//! questions, each naming the sessions that hold its answer. The files are
//! read from the directory in `MNEMO_DEVMEMBENCH` (`sessions.json` and
//! `questions.json` from `benchmark/src/dataset/` of that repository); they
//! are not shipped here.
//!
//! Each user message and the assistant's reply become one turn summary
//! (request and completed), in a session of its own, dated by the session's
//! date, in a real store. A record is relevant when its session is one of
//! the question's evidence sessions; questions without evidence (abstention)
//! are left out.

use std::collections::HashMap;
use std::path::Path;
use std::time::Duration;

use mnemo_store::memory::{NewSummary, insert_summary};
use rusqlite::Connection;
use serde_json::Value;

use super::super::quality::memory::Memory;
use super::{Baselines, DEPTH, Ranks, Table, first_relevant};

pub fn run(dir: &Path) -> Table {
    let read = |f: &str| -> Value {
        let text = std::fs::read_to_string(dir.join(f))
            .unwrap_or_else(|e| panic!("read {}: {e}", dir.join(f).display()));
        serde_json::from_str(&text).expect("DevMemBench JSON parses")
    };
    let (sessions, questions) = (read("sessions.json"), read("questions.json"));
    let tmp = tempfile::tempdir().expect("temp dir");
    let store = mnemo_store::Store::open(&tmp.path().join("mnemo.db"), Duration::from_secs(5))
        .expect("open a store");
    let session_of = ingest(store.conn(), &sessions);
    if std::env::var_os("MNEMO_RETRIEVAL_DEBUG").is_some() {
        eprintln!("store kept in {}", tmp.keep().display());
    }
    let memory = Memory::load(store.conn()).expect("read the stored memory");
    let baselines = Baselines::new(&memory.documents());
    let mut ranks = Vec::new();
    for q in questions.as_array().expect("a list of questions") {
        let evidence: Vec<&str> = q["haystackSessionIds"]
            .as_array()
            .map(|a| a.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        if evidence.is_empty() {
            continue;
        }
        let question = q["question"].as_str().expect("a question text");
        let relevant = |id: &str| {
            session_of
                .get(id)
                .is_some_and(|s| evidence.contains(&s.as_str()))
        };
        let found = mnemo_search(store.conn(), question);
        let stop = baselines.without_stop_words(question);
        if std::env::var_os("MNEMO_RETRIEVAL_DEBUG").is_some() {
            let show = |ids: &[String]| -> String {
                ids.iter()
                    .take(4)
                    .map(|i| format!("{i}{}", if relevant(i) { "*" } else { "" }))
                    .collect::<Vec<_>>()
                    .join(" ")
            };
            eprintln!(
                "{question}\n  mnemo {}\n  stop  {}",
                show(&found),
                show(&stop)
            );
        }
        ranks.push(Ranks {
            question: question.to_owned(),
            mnemo: first_relevant(&found, relevant),
            bm25: first_relevant(&baselines.plain(question), relevant),
            bm25_stop: first_relevant(&stop, relevant),
        });
    }
    println!(
        "retrieval: DevMemBench: {} records, {} questions with evidence",
        session_of.len(),
        ranks.len()
    );
    Table {
        dataset: "DevMemBench".to_owned(),
        ranks,
    }
}

/// Stores every turn; returns each record's search id (`S12`) → session id.
fn ingest(conn: &Connection, sessions: &Value) -> HashMap<String, String> {
    let mut out = HashMap::new();
    for (n, s) in sessions
        .as_array()
        .expect("a list of sessions")
        .iter()
        .enumerate()
    {
        let id = s["sessionId"].as_str().expect("a session id");
        let at = day_ms(s["metadata"]["date"].as_str().unwrap_or("2025-01-01")) + n as i64;
        conn.execute(
            "INSERT INTO sessions (platform, platform_session_id, started_at, updated_at)
             VALUES ('claude-code', ?1, ?2, ?2)",
            rusqlite::params![id, at],
        )
        .expect("insert a session");
        let session = conn.last_insert_rowid();
        let messages = s["messages"].as_array().expect("messages");
        let mut turn = 0;
        for pair in messages.chunks(2) {
            turn += 1;
            let summary = NewSummary {
                uid: format!("{id}-{turn}"),
                session_id: Some(session),
                prompt_number: Some(turn),
                request: text(pair.first()).to_owned(),
                completed: text(pair.get(1)).to_owned(),
                created_at: at + turn,
                ..Default::default()
            };
            let row = insert_summary(conn, &summary).expect("insert a summary");
            out.insert(format!("S{}", row.expect("a new summary")), id.to_owned());
        }
    }
    out
}

/// A message's text ("" when absent).
fn text(m: Option<&Value>) -> &str {
    m.and_then(|m| m["content"].as_str()).unwrap_or("")
}

/// Epoch milliseconds of a `YYYY-MM-DD` day (UTC midnight).
fn day_ms(date: &str) -> i64 {
    let format = time::macros::format_description!("[year]-[month]-[day]");
    time::Date::parse(date, format)
        .map(|d| d.midnight().assume_utc().unix_timestamp() * 1000)
        .unwrap_or(0)
}

/// The refs (`S12`) mnemo's search returns, best first (the library call
/// behind `mnemo search`).
pub fn mnemo_search(conn: &Connection, question: &str) -> Vec<String> {
    let req = mnemo_recall::search::SearchRequest {
        query: question.to_owned(),
        limit: DEPTH,
        ..Default::default()
    };
    let found = mnemo_recall::search::search(conn, &req).expect("mnemo search");
    found.hits.iter().map(|h| h.id.to_string()).collect()
}
