//! LoCoMo (snap-research/locomo, ACL 2024: "Evaluating Very Long-Term
//! Conversational Memory of LLM Agents"): ten long conversations between
//! two people, 19 to 32 dated sessions each, with questions whose
//! `evidence` names the dialog turns (`D3:5`) that answer them. The files
//! (`locomo10.json`, or a directory of one JSON per conversation) are read
//! from the path in `MNEMO_LOCOMO`; their license is not MIT, so they are
//! not shipped here.
//!
//! Each conversation goes into a store of its own, one session per LoCoMo
//! session, dated by it. Every two consecutive turns of a session (one
//! speaker, then the other's reply) become one turn summary, as mnemo
//! holds a turn of a conversation: both speakers' words in what the turn
//! said (`completed`, each line `Name: text`, a shared photo by its
//! caption), none as a request, since neither speaker is the one asking
//! mnemo. A record is relevant when it holds one of the question's
//! evidence turns. Adversarial questions (category 5: unanswerable by
//! design, their evidence a near miss) and questions without evidence are
//! left out. Figures are given overall and per category. Session times
//! are local times, in the offset search reads a named day in, so the
//! figures do not depend on the machine's time zone.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use mnemo_store::memory::{NewSummary, insert_summary};
use rusqlite::Connection;
use serde_json::Value;

use super::super::quality::memory::Memory;
use super::devmembench::mnemo_search;
use super::{Baselines, Ranks, Table, first_relevant};

/// LoCoMo's question categories, by number (5, adversarial, is skipped).
const CATEGORIES: [(u64, &str); 4] = [
    (1, "multi-hop"),
    (2, "temporal"),
    (3, "open-domain"),
    (4, "single-hop"),
];

/// Turns per record.
const WINDOW: usize = 2;

/// The whole dataset's table, then one per category.
pub fn run(path: &Path) -> Vec<Table> {
    let mut by_category: Vec<Vec<Ranks>> = vec![Vec::new(); CATEGORIES.len()];
    let (mut records, mut skipped) = (0, 0);
    for conversation in conversations(path) {
        let one = run_conversation(&conversation);
        records += one.records;
        skipped += one.skipped;
        for (category, ranks) in one.ranks {
            if let Some(i) = CATEGORIES.iter().position(|(c, _)| *c == category) {
                by_category[i].push(ranks);
            }
        }
    }
    let all: Vec<Ranks> = by_category.iter().flatten().cloned().collect();
    println!(
        "retrieval: LoCoMo: {records} records, {} questions ({skipped} adversarial or without evidence left out)",
        all.len()
    );
    let mut tables = vec![Table {
        dataset: "LoCoMo".to_owned(),
        ranks: all,
    }];
    for ((_, name), ranks) in CATEGORIES.iter().zip(by_category) {
        tables.push(Table {
            dataset: format!("LoCoMo {name}"),
            ranks,
        });
    }
    tables
}

/// The conversations in `path`: a JSON list of them (`locomo10.json`), one
/// conversation, or a directory of either.
fn conversations(path: &Path) -> Vec<Value> {
    let files: Vec<PathBuf> = if path.is_dir() {
        let mut files: Vec<PathBuf> = std::fs::read_dir(path)
            .unwrap_or_else(|e| panic!("read {}: {e}", path.display()))
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "json"))
            .collect();
        files.sort();
        files
    } else {
        vec![path.to_owned()]
    };
    let mut out = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(&file)
            .unwrap_or_else(|e| panic!("read {}: {e}", file.display()));
        match serde_json::from_str(&text).expect("LoCoMo JSON parses") {
            Value::Array(list) => out.extend(list),
            one => out.push(one),
        }
    }
    out.into_iter()
        .map(|c| match c.get("conversation") {
            Some(inner) => merge_qa(inner.clone(), &c),
            None => c,
        })
        .collect()
}

/// `locomo10.json` nests the dialog under `conversation`, the questions
/// beside it: one object with both.
fn merge_qa(mut conversation: Value, outer: &Value) -> Value {
    conversation["qa"] = outer["qa"].clone();
    conversation
}

/// One conversation's ranks, by question category.
struct Ranked {
    records: usize,
    skipped: usize,
    ranks: Vec<(u64, Ranks)>,
}

fn run_conversation(conversation: &Value) -> Ranked {
    let tmp = tempfile::tempdir().expect("temp dir");
    let store = mnemo_store::Store::open(&tmp.path().join("mnemo.db"), Duration::from_secs(5))
        .expect("open a store");
    let turns_of = ingest(store.conn(), conversation);
    let memory = Memory::load(store.conn()).expect("read the stored memory");
    let baselines = Baselines::new(&memory.documents());
    let mut out = Ranked {
        records: turns_of.len(),
        skipped: 0,
        ranks: Vec::new(),
    };
    for q in conversation["qa"].as_array().expect("a list of questions") {
        let category = q["category"].as_u64().unwrap_or(0);
        let evidence = evidence(q);
        if category == 5 || evidence.is_empty() {
            out.skipped += 1;
            continue;
        }
        let question = q["question"].as_str().expect("a question text");
        let relevant = |id: &str| {
            turns_of
                .get(id)
                .is_some_and(|turns| turns.iter().any(|t| evidence.contains(t)))
        };
        let ranks = Ranks {
            question: question.to_owned(),
            mnemo: first_relevant(&mnemo_search(store.conn(), question), relevant),
            bm25: first_relevant(&baselines.plain(question), relevant),
            bm25_stop: first_relevant(&baselines.without_stop_words(question), relevant),
        };
        out.ranks.push((category, ranks));
    }
    out
}

/// A question's evidence turns, normalized (`D30:05` and `D:30:5` are
/// `D30:5`; a few list several in one string).
fn evidence(q: &Value) -> Vec<String> {
    let mut out = Vec::new();
    for e in q["evidence"].as_array().into_iter().flatten() {
        for part in e.as_str().unwrap_or("").split([';', ' ', ',']) {
            let numbers: Vec<u64> = part
                .split(|c: char| !c.is_ascii_digit())
                .filter_map(|n| n.parse().ok())
                .collect();
            if let [session, turn] = numbers[..] {
                out.push(format!("D{session}:{turn}"));
            }
        }
    }
    out
}

/// Stores every session's turns, [`WINDOW`] to a record; returns each
/// record's search id (`S12`) → the dialog ids it holds.
fn ingest(conn: &Connection, conversation: &Value) -> HashMap<String, Vec<String>> {
    let mut out = HashMap::new();
    for n in 1.. {
        let Some(turns) = conversation[format!("session_{n}")].as_array() else {
            break;
        };
        let date = conversation[format!("session_{n}_date_time")]
            .as_str()
            .unwrap_or("");
        let at = session_ms(date) + n;
        conn.execute(
            "INSERT INTO sessions (platform, platform_session_id, started_at, updated_at)
             VALUES ('claude-code', ?1, ?2, ?2)",
            rusqlite::params![format!("session_{n}"), at],
        )
        .expect("insert a session");
        let session = conn.last_insert_rowid();
        for (i, window) in turns.chunks(WINDOW).enumerate() {
            let summary = NewSummary {
                uid: format!("session_{n}-{i}"),
                session_id: Some(session),
                prompt_number: Some(i as i64 + 1),
                completed: window.iter().map(said).collect::<Vec<_>>().join("\n"),
                created_at: at + i as i64,
                ..Default::default()
            };
            let row = insert_summary(conn, &summary).expect("insert a summary");
            let ids = window
                .iter()
                .filter_map(|t| t["dia_id"].as_str().map(str::to_owned))
                .collect();
            out.insert(format!("S{}", row.expect("a new summary")), ids);
        }
    }
    out
}

/// One turn as a line: `Name: text`, and the photo shared, by its caption.
fn said(turn: &Value) -> String {
    let speaker = turn["speaker"].as_str().unwrap_or("");
    let text = turn["text"].as_str().unwrap_or("");
    match turn["blip_caption"].as_str() {
        Some(caption) => format!("{speaker}: {text} [shares a photo: {caption}]"),
        None => format!("{speaker}: {text}"),
    }
}

/// Epoch milliseconds of a LoCoMo session time (`1:56 pm on 8 May, 2023`)
/// in the local offset, 0 (and a line saying so) when it does not parse.
fn session_ms(date: &str) -> i64 {
    let format = time::macros::format_description!(
        "[hour repr:12 padding:none]:[minute] [period case:lower] on [day padding:none] [month repr:long], [year]"
    );
    match time::PrimitiveDateTime::parse(date, format) {
        Ok(d) => {
            let offset = mnemo_recall::Clock::system().offset;
            d.assume_offset(offset).unix_timestamp() * 1000
        }
        Err(e) => {
            println!("retrieval: LoCoMo: session time `{date}` not understood ({e}), dated 1970");
            0
        }
    }
}
