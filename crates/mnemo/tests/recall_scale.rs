//! The context size promise at scale: with 100,000 observations (long
//! titles, wide characters, emoji) and a budget far above the cap, the
//! index `mnemo context` prints and the SessionStart hook injects stays
//! under 9,000 characters as Claude Code counts them (UTF-16 units), and
//! search still answers. Timing is measured by `bench/recall.sh`, not here.

mod common;

use std::time::Duration;

use common::{Env, assert_hook_ok};
use mnemo_core::time::now_ms;
use serde_json::{Value, json};

const N: i64 = 100_000;

#[test]
fn context_stays_under_the_cap_with_100k_observations() {
    let env = Env::new();
    let project = env.dir.path().join("huge");
    mnemo_testkit::git_init(&project).unwrap();
    let root = project.canonicalize().unwrap();
    let root = root.to_str().unwrap();

    // Bulk-load through SQL (the store's own insert path is exercised by
    // every other test; here only the volume matters), then rebuild the
    // full-text and file indexes the way a migration would.
    let store = mnemo_store::Store::open(&env.db_path(), Duration::from_secs(5)).unwrap();
    let now = now_ms();
    store
        .conn()
        .execute_batch(&format!(
            "BEGIN;
             INSERT INTO projects (id, root, name, created_at) VALUES (1, '{root}', 'huge', 0);
             WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < {N})
             INSERT INTO observations (uid, project_id, type, title, narrative, files_modified,
                                       created_at)
             SELECT 'o' || i, 1, CASE i % 4 WHEN 0 THEN 'bugfix' WHEN 1 THEN 'feature'
                                           WHEN 2 THEN 'decision' ELSE 'change' END,
                    'Ünïcödé 日本語 🙂 observation ' || i || ' ' || hex(randomblob(80)),
                    'narrative ' || i,
                    '[\"{root}/src/módulo_' || (i % 700) || '/ファイル.rs\"]',
                    {now} - ({N} - i) * 60000
             FROM n;
             WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 50)
             INSERT INTO summaries (uid, project_id, request, learned, completed, next_steps,
                                    created_at)
             SELECT 's' || i, 1, 'request 🙂 ' || hex(randomblob(200)), hex(randomblob(200)),
                    hex(randomblob(200)), hex(randomblob(200)), {now} - i * 1000
             FROM n;
             INSERT INTO observations_fts (observations_fts) VALUES ('rebuild');
             INSERT INTO summaries_fts (summaries_fts) VALUES ('rebuild');
             INSERT INTO observation_files (path, observation_id, modified)
                 SELECT j.value, o.id, 1 FROM observations o, json_each(o.files_modified) j;
             COMMIT;"
        ))
        .unwrap();
    drop(store);

    for tokens in ["1500", "1000000"] {
        let out = env
            .mnemo()
            .current_dir(&project)
            .env("MNEMO_CONTEXT_MAX_TOKENS", tokens)
            .env("MNEMO_CONTEXT_SUMMARIES", "50")
            .args(["context", "--json"])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let index: Value = serde_json::from_slice(&out.stdout).unwrap();
        let text = index["text"].as_str().unwrap();
        let units = text.encode_utf16().count();
        let cap = if tokens == "1500" { 6000 } else { 9000 };
        assert!(units <= cap, "{tokens} tokens: {units} UTF-16 units");
        assert_eq!(index["observations_total"], N);
        assert!(text.ends_with("</mnemo-context>"));
        let shown = index["observations_shown"].as_array().unwrap();
        assert!(shown.len() >= 10, "{}", shown.len());
        assert_eq!(shown[0], format!("#{N}"), "the newest comes first");

        let payload = json!({"session_id": format!("s-{tokens}"), "hook_event_name": "SessionStart",
                             "cwd": project, "source": "startup"});
        let answer = assert_hook_ok(&env.hook_with("SessionStart", &payload.to_string(), |c| {
            c.env("MNEMO_CONTEXT_MAX_TOKENS", tokens)
                .env("MNEMO_CONTEXT_SUMMARIES", "50");
        }));
        let injected = answer["hookSpecificOutput"]["additionalContext"]
            .as_str()
            .unwrap();
        assert!(injected.encode_utf16().count() <= cap);
        assert!(injected.contains(&format!("#{N} ")), "{injected}");
    }

    let out = env
        .mnemo()
        .current_dir(&project)
        .args(["search", "--json", "observation 99999"])
        .output()
        .unwrap();
    let found: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(found["hits"][0]["ref"], "#99999", "{found}");
    assert_eq!(found["hits"][0]["id"], 99999, "{found}");
}
