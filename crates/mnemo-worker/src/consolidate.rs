//! Project knowledge consolidated by the model, when one is configured.
//!
//! The offline items ([`crate::knowledge`]) are rebuilt after every batch.
//! Once every `worker.knowledge_every_turns` turns of a project stored since
//! its last consolidation (counted in the store, so a worker that exits
//! when idle does not start again from zero), and only inside the token
//! budget, the model is shown those items and
//! the records they rest on, and answers with revisions: an item rewritten
//! to stand on its own, an item dropped as noise, a few items added (what
//! the project is), each citing the records it rests on.
//!
//! The revisions are stored beside the items ([`store::REVISION`] rows) and
//! every offline refresh applies them again, so they hold between calls; a
//! new good answer replaces them all. An answer that cannot be trusted
//! (wrong shape, unknown refs, made-up provenance), a failed call or a
//! timeout changes nothing: the offline items stand, and it is logged.

use std::collections::BTreeSet;

use mnemo_compress::{KnowledgeRequest, Revision, ShownItem};
use mnemo_store::knowledge::{self as store, KnowledgeItem};
use mnemo_store::shape;
use rusqlite::Connection;

/// Most recent session summaries shown to the model.
const SUMMARIES_SHOWN: i64 = 8;
/// Most records (observations, prompts) shown for the items' sources.
const SOURCES_SHOWN: usize = 40;
/// Most sources kept on a revised item.
const MAX_SOURCES: usize = 6;

/// Whether `project`'s knowledge is due for the model: `every` turns (or
/// more) summarized since its last consolidation call, failed or not (the
/// ledger's `knowledge` rows); never when `every` is 0.
pub fn due(conn: &Connection, project: i64, every: u64) -> rusqlite::Result<bool> {
    if every == 0 {
        return Ok(false);
    }
    let turns: i64 = conn
        .prepare_cached(
            "SELECT count(*) FROM summaries WHERE project_id = ?1 AND created_at >
               coalesce((SELECT max(created_at) FROM llm_calls
                         WHERE purpose = ?2 AND project_id = ?1), 0)",
        )?
        .query_row(
            rusqlite::params![project, mnemo_compress::PURPOSE_KNOWLEDGE],
            |r| r.get(0),
        )?;
    Ok(turns as u64 >= every)
}

/// What the model is shown of `project`, and the (kind, key) of the item
/// behind each ref (`K1` is the first).
pub fn request(
    conn: &Connection,
    project: i64,
) -> mnemo_recall::Result<(KnowledgeRequest, Vec<(String, String)>)> {
    let items = crate::knowledge::derive(conn, project)?;
    let name: String = conn
        .prepare_cached("SELECT coalesce(name, root) FROM projects WHERE id = ?1")?
        .query_row([project], |r| r.get(0))
        .unwrap_or_default();
    let shown: Vec<ShownItem> = items
        .iter()
        .enumerate()
        .map(|(n, i)| ShownItem {
            reference: format!("K{}", n + 1),
            kind: i.kind.clone(),
            text: i.text.clone(),
            sources: i.sources.clone(),
        })
        .collect();
    let cited: BTreeSet<&str> = items
        .iter()
        .flat_map(|i| i.sources.iter().map(String::as_str))
        .collect();
    let mut records = source_records(conn, &cited)?;
    records.extend(recent_summaries(conn, project)?);
    let targets = items.into_iter().map(|i| (i.kind, i.key)).collect();
    Ok((
        KnowledgeRequest {
            project: name,
            items: shown,
            records,
        },
        targets,
    ))
}

/// The observations and prompts the items cite, one line each.
fn source_records(
    conn: &Connection,
    cited: &BTreeSet<&str>,
) -> mnemo_recall::Result<Vec<(String, String)>> {
    let mut out = Vec::new();
    let mut observation = conn.prepare_cached(
        "SELECT type || ': ' || title || ' ' || substr(narrative, 1, 300)
         FROM observations WHERE id = ?1",
    )?;
    let mut prompt =
        conn.prepare_cached("SELECT substr(text, 1, 400) FROM prompts WHERE id = ?1")?;
    for r in cited.iter().take(SOURCES_SHOWN) {
        let text: Option<String> = if let Some(id) = r.strip_prefix('#') {
            observation.query_row([id], |row| row.get(0)).ok()
        } else if let Some(id) = r.strip_prefix('P') {
            prompt.query_row([id], |row| row.get(0)).ok()
        } else {
            None
        };
        out.extend(text.map(|t| ((*r).to_owned(), t)));
    }
    Ok(out)
}

/// The project's latest session summaries: asked, learned, done.
fn recent_summaries(
    conn: &Connection,
    project: i64,
) -> mnemo_recall::Result<Vec<(String, String)>> {
    let mut stmt = conn.prepare_cached(
        "SELECT id, 'asked: ' || substr(request, 1, 200) || ' | learned: ' || substr(learned, 1, 300)
                || ' | done: ' || substr(completed, 1, 300)
         FROM summaries WHERE project_id = ?1 ORDER BY created_at DESC, id DESC LIMIT ?2",
    )?;
    let rows = stmt.query_map(rusqlite::params![project, SUMMARIES_SHOWN], |r| {
        Ok((shape::summary_ref(r.get(0)?), r.get::<_, String>(1)?))
    })?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}

/// The rows that keep the model's revisions, for the refs in `targets`.
pub fn revision_rows(revisions: &[Revision], targets: &[(String, String)]) -> Vec<KnowledgeItem> {
    let mut added = 0;
    revisions
        .iter()
        .filter_map(|r| {
            let key = match r.target.as_deref() {
                Some(t) => {
                    let n: usize = t.strip_prefix('K')?.parse().ok()?;
                    let (kind, key) = targets.get(n.checked_sub(1)?)?;
                    format!("{kind}\t{key}")
                }
                None => {
                    added += 1;
                    format!("{}\t+{added}", r.kind)
                }
            };
            let mut row = KnowledgeItem::new(store::REVISION, key, r.text.clone());
            row.weight = i64::from(r.drop);
            row.sources = r.sources.clone();
            Some(row)
        })
        .collect()
}

/// `items` as the stored revisions leave them: rewritten, dropped, added to.
pub fn apply(items: &mut Vec<KnowledgeItem>, revisions: &[KnowledgeItem]) {
    for rev in revisions {
        let Some((kind, key)) = rev.key.split_once('\t') else {
            continue;
        };
        if key.starts_with('+') {
            let mut item = KnowledgeItem::new(kind, format!("model{key}"), rev.text.clone());
            item.weight = 1;
            item.sources = rev.sources.clone();
            items.push(item);
            continue;
        }
        let Some(at) = items.iter().position(|i| i.kind == kind && i.key == key) else {
            continue;
        };
        if rev.weight == 1 {
            items.remove(at);
            continue;
        }
        let item = &mut items[at];
        item.text = rev.text.clone();
        let mut sources = rev.sources.clone();
        sources.extend(
            item.sources
                .iter()
                .filter(|s| !rev.sources.contains(s))
                .cloned(),
        );
        sources.truncate(MAX_SOURCES);
        item.sources = sources;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn revision(target: Option<&str>, kind: &str, text: &str, drop: bool) -> Revision {
        Revision {
            target: target.map(str::to_owned),
            kind: kind.into(),
            text: text.into(),
            drop,
            sources: vec!["#9".into()],
        }
    }

    #[test]
    fn revisions_rewrite_drop_and_add_and_keep_provenance() {
        let mut decision = KnowledgeItem::new(store::DECISION, "#4", "Chose A");
        decision.sources = vec!["#4".into()];
        let noise = KnowledgeItem::new(store::PROBLEM, "grep", "`grep` failed");
        let mut items = vec![decision, noise];
        let targets: Vec<(String, String)> = items
            .iter()
            .map(|i| (i.kind.clone(), i.key.clone()))
            .collect();
        let rows = revision_rows(
            &[
                revision(
                    Some("K1"),
                    "decision",
                    "Chose A over B: it is faster",
                    false,
                ),
                revision(Some("K2"), "problem", "", true),
                revision(None, "stack", "A command-line tool in Go", false),
            ],
            &targets,
        );
        assert_eq!(rows[0].key, "decision\t#4");
        apply(&mut items, &rows);
        assert_eq!(items.len(), 2);
        assert_eq!(items[0].text, "Chose A over B: it is faster");
        assert_eq!(items[0].sources, ["#9", "#4"]);
        assert_eq!(items[1].kind, store::STACK);
        assert_eq!(items[1].text, "A command-line tool in Go");
    }

    #[test]
    fn consolidation_is_due_every_n_turns_since_the_last_call() {
        let dir = tempfile::tempdir().unwrap();
        let store =
            mnemo_store::Store::open(&dir.path().join("m.db"), std::time::Duration::from_secs(1))
                .unwrap();
        let conn = store.conn();
        conn.execute_batch(
            "INSERT INTO projects (id, root, name, created_at) VALUES (1, '/p', 'p', 0);
             INSERT INTO summaries (uid, project_id, created_at) VALUES ('a', 1, 10), ('b', 1, 20);",
        )
        .unwrap();
        assert!(due(conn, 1, 2).unwrap());
        assert!(!due(conn, 1, 3).unwrap());
        assert!(!due(conn, 1, 0).unwrap());
        conn.execute(
            "INSERT INTO llm_calls (provider, model, purpose, project_id, input_tokens,
                 output_tokens, duration_ms, ok, created_at)
             VALUES ('x', 'm', 'knowledge', 1, 0, 0, 0, 1, 15)",
            [],
        )
        .unwrap();
        assert!(due(conn, 1, 1).unwrap(), "one turn since the call");
        assert!(!due(conn, 1, 2).unwrap());
        assert!(!due(conn, 2, 1).unwrap(), "per project");
    }
}
