//! Search ranking through the real binary: a question in a developer's own
//! words, a pasted bug report, identifiers in another spelling, and a
//! decision that a later decision replaced. Stores are filled with
//! `mnemo import`, as a user would.

mod common;

use std::path::{Path, PathBuf};

use common::Env;
use mnemo_core::time::{format_rfc3339, now_ms};
use serde_json::{Value, json};

const HOUR: i64 = 3_600_000;

fn project(env: &Env) -> PathBuf {
    let dir = env.dir.path().join("shop");
    mnemo_testkit::git_init(&dir).unwrap();
    dir.canonicalize().unwrap()
}

fn obs(
    project: &Path,
    kind: &str,
    title: &str,
    narrative: &str,
    file: &str,
    hours_ago: i64,
) -> Value {
    json!({
        "kind": "observation",
        "project": project,
        "type": kind,
        "title": title,
        "narrative": narrative,
        "files_modified": [project.join(file)],
        "created_at": format_rfc3339(now_ms() - hours_ago * HOUR),
    })
}

/// Ordinary work full of the words questions are made of.
fn noise(project: &Path) -> Vec<Value> {
    let words = [
        "login", "page", "error", "user", "test", "session", "config", "fix",
    ];
    (0..40)
        .map(|i| {
            let a = words[i % words.len()];
            let b = words[(i * 3 + 1) % words.len()];
            obs(
                project,
                "change",
                &format!("Fix {a} {b} test"),
                &format!(
                    "Updated the {a} code and the {b} tests. At some point we had a problem \
                     in it where users who were signed in saw an error; so far this is all \
                     we have seen, and for now the page works again."
                ),
                &format!("src/{a}.rs"),
                (i + 2) as i64,
            )
        })
        .collect()
}

fn import(env: &Env, records: &[Value]) {
    let file = env.dir.path().join("import.jsonl");
    let text: String = records.iter().map(|r| format!("{r}\n")).collect();
    std::fs::write(&file, text).unwrap();
    let out = env.mnemo().arg("import").arg(&file).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn search(env: &Env, dir: &Path, args: &[&str]) -> std::process::Output {
    let out = env
        .mnemo()
        .current_dir(dir)
        .arg("search")
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

fn hits(env: &Env, dir: &Path, query: &str) -> Vec<Value> {
    let out = search(env, dir, &["--json", "--", query]);
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    v["hits"].as_array().unwrap().clone()
}

fn titles(hits: &[Value]) -> Vec<String> {
    hits.iter()
        .map(|h| h["title"].as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn a_question_in_plain_words_finds_the_record_that_answers_it_first() {
    let env = Env::new();
    let p = project(&env);
    let mut records = noise(&p);
    records.push(obs(
        &p,
        "bugfix",
        "SameSite=Strict cookie caused an endless redirect after the identity provider callback",
        "After the callback from the identity provider the browser withheld the session \
         cookie (a cross-site navigation), so the app saw no session and bounced back to \
         authentication. The cookie is now SameSite=Lax.",
        "src/auth/cookies.rs",
        30,
    ));
    import(&env, &records);
    // Most words of the question are not in the record, the noise is full
    // of "login", "page", "users" and glue words, and what matters comes
    // after the sixteenth word.
    let found = hits(
        &env,
        &p,
        "I remember that at some point we had a problem where users who signed in were sent \
         back to the login page again and again, what was the cause of that redirect loop \
         with the identity provider?",
    );
    assert!(
        titles(&found)[0].starts_with("SameSite=Strict cookie"),
        "{:#?}",
        titles(&found)
    );
}

#[test]
fn a_pasted_bug_report_finds_the_fix() {
    let env = Env::new();
    let p = project(&env);
    let mut records = noise(&p);
    records.push(obs(
        &p,
        "bugfix",
        "claimNext let two workers take the same job",
        "claimNext selected then updated in two statements; it now claims with FOR UPDATE \
         SKIP LOCKED in one statement.",
        "src/queue/claim.rs",
        50,
    ));
    import(&env, &records);
    // Long, chatty, and the selective words come late: the first sixteen
    // words say nothing.
    let report = "Hi all, so this is something that we have been seeing for a while now and \
        I am not sure who owns it, but it is getting worse and users are starting to notice \
        it on the page. Sometimes the same background job runs twice: the logs show \
        worker-3 and worker-7 both claimed job 88231 at the same second, and the customer \
        got two exports. It only happens when the queue is busy, maybe one job in a thousand. \
        We did not change the export code recently and the config looks fine to me. Could \
        it be a race in how workers claim jobs, maybe claimNext? We are on Postgres 15 with \
        the default isolation level. This is urgent because customers are billed twice. \
        Steps to reproduce: enqueue ten thousand jobs with eight workers and count duplicate \
        executions in the logs. Expected: every job runs once. Actual: a few run twice. Thanks!";
    assert!(report.split_whitespace().count() > 100);
    let found = hits(&env, &p, report);
    assert_eq!(
        titles(&found)[0],
        "claimNext let two workers take the same job",
        "{:#?}",
        titles(&found)
    );
}

#[test]
fn identifiers_are_found_in_any_spelling() {
    let env = Env::new();
    let p = project(&env);
    let mut records = noise(&p);
    records.push(obs(
        &p,
        "feature",
        "parse_config reads TOML",
        "Settings parsed once.",
        "src/settings.rs",
        5,
    ));
    records.push(obs(
        &p,
        "refactor",
        "loadUserProfile split in two",
        "Fetch, then render.",
        "web/profile.ts",
        6,
    ));
    import(&env, &records);
    for q in ["parseConfig", "ParseConfig", "parse config", "parse_config"] {
        assert_eq!(
            titles(&hits(&env, &p, q))[0],
            "parse_config reads TOML",
            "{q}"
        );
    }
    for q in ["load_user_profile", "load user profile", "LoadUserProfile"] {
        assert_eq!(
            titles(&hits(&env, &p, q))[0],
            "loadUserProfile split in two",
            "{q}"
        );
    }
}

#[test]
fn a_superseded_decision_is_marked_and_ranked_below_its_successor() {
    let env = Env::new();
    let p = project(&env);
    let mut records = noise(&p);
    // The older decision matches the question better, word for word.
    records.push(obs(
        &p,
        "decision",
        "Store user sessions in Redis",
        "Where sessions are stored: Redis, keyed by cookie, 24h TTL.",
        "src/session/store.rs",
        48,
    ));
    records.push(obs(
        &p,
        "decision",
        "User sessions move from Redis to Postgres",
        "Redis evictions logged people out; the sessions table is durable.",
        "src/session/store.rs",
        3,
    ));
    import(&env, &records);
    let found = hits(&env, &p, "where are user sessions stored?");
    let t = titles(&found);
    let old = t
        .iter()
        .position(|x| x == "Store user sessions in Redis")
        .expect("old shown");
    let new = t
        .iter()
        .position(|x| x == "User sessions move from Redis to Postgres")
        .expect("new shown");
    assert!(new < old, "{t:#?}");
    assert_eq!(found[old]["superseded_by"], found[new]["id"]);
    assert!(found[new].get("superseded_by").is_none());
    // The text says so too.
    let out = search(&env, &p, &["--", "where are user sessions stored?"]);
    let text = String::from_utf8(out.stdout).unwrap();
    let id = found[new]["id"].as_i64().unwrap();
    let line = text
        .lines()
        .find(|l| l.contains("Store user sessions in Redis"))
        .unwrap();
    assert!(line.contains(&format!("[superseded by #{id}]")), "{text}");
}

/// Work is amended too: a later change to the same file on the same
/// subject comes first and the earlier one is marked, even when the
/// earlier one matches the question better word for word; a later record
/// that only names the file ("Edited …") amends nothing.
#[test]
fn a_later_change_amending_an_earlier_one_comes_first_and_the_earlier_is_marked() {
    let env = Env::new();
    let p = project(&env);
    let mut records = noise(&p);
    let old = "Retry failed uploads three times with a fixed delay";
    let new = "Retry failed uploads with exponential backoff instead of a fixed delay";
    records.push(obs(
        &p,
        "change",
        old,
        "Failed uploads are retried three times, waiting a fixed delay of one second.",
        "src/upload.rs",
        30,
    ));
    records.push(obs(
        &p,
        "change",
        new,
        "The storage service throttles bursts; backoff doubles from 200 ms.",
        "src/upload.rs",
        5,
    ));
    records.push(obs(
        &p,
        "change",
        "Edited src/upload.rs",
        "Renamed a variable.",
        "src/upload.rs",
        1,
    ));
    import(&env, &records);
    let query = "how are failed uploads retried, three times with a fixed delay?";
    let found = hits(&env, &p, query);
    let t = titles(&found);
    let at = |title: &str| t.iter().position(|x| x == title).expect("shown");
    assert!(at(new) < at(old), "{t:#?}");
    assert_eq!(
        found[at(old)]["superseded_by"],
        found[at(new)]["id"],
        "{t:#?}"
    );
    assert!(found[at(new)].get("superseded_by").is_none(), "{t:#?}");
}

/// "End to end" in a question finds the records that say `e2e`, and the
/// vague verb at its end ("go") does not pull in every record about a
/// `.go` file.
#[test]
fn end_to_end_finds_e2e_and_go_the_verb_is_not_go_the_language() {
    let env = Env::new();
    let p = project(&env);
    let mut records: Vec<Value> = (0..12)
        .map(|i| {
            obs(
                &p,
                "change",
                &format!("Edited strategy_{i}_test.go"),
                "Tests for the end of a session in main.go go green again.",
                &format!("cmd/strategy_{i}_test.go"),
                (i + 2) as i64,
            )
        })
        .collect();
    let answer = "Chose a separate e2e_test/ directory over a subfolder of integration tests";
    records.push(obs(
        &p,
        "decision",
        answer,
        "Own build tag; the e2e tests run on their own.",
        "cmd/e2e_test/setup_test.go",
        30,
    ));
    import(&env, &records);
    let t = titles(&hits(
        &env,
        &p,
        "where did we decide the end to end tests go?",
    ));
    assert_eq!(t[0], answer, "{t:#?}");
}

/// Recall first: a record that shares only the report's middling words
/// (each in a few records) is found and ranked first, even though the
/// report's rarest words (each in exactly one unrelated record) would fill
/// any short list of "most selective" words; and the list fills the count
/// asked for when that many records match.
#[test]
fn a_long_report_keeps_every_word_and_fills_the_list() {
    let env = Env::new();
    let p = project(&env);
    let mut records = noise(&p);
    let rare = [
        "zanzibar", "quokka", "marimba", "sextant", "gondola", "tamarind", "obelisk", "yodel",
    ];
    for (i, w) in rare.iter().enumerate() {
        let title = format!("Renamed the {w} fixture");
        records.push(obs(
            &p,
            "change",
            &title,
            "Fixture rename only.",
            "tests/x.rs",
            10 + i as i64,
        ));
    }
    for (i, other) in ["manifest parser", "tarball layout"].iter().enumerate() {
        let title = format!("Documented the {other}");
        let narrative = "The checksum of each chunk is listed; the importer reads it.";
        records.push(obs(
            &p,
            "discovery",
            &title,
            narrative,
            "docs/format.md",
            30 + i as i64,
        ));
    }
    records.push(obs(
        &p,
        "bugfix",
        "Importer verified the checksum before the chunk was flushed",
        "The importer compared each chunk's checksum while its last block was still \
         buffered, so large archives failed verification; it now flushes first.",
        "src/import/verify.rs",
        60,
    ));
    import(&env, &records);
    let mut report = String::from(
        "The importer fails on large archives with a checksum mismatch on the last chunk. ",
    );
    for w in rare {
        report.push_str(&format!("Our {w} setup is unrelated I think. "));
    }
    report.push_str("It started last week; smaller archives import fine.");
    let found = hits(&env, &p, &report);
    let t = titles(&found);
    assert_eq!(
        t.first().map(String::as_str),
        Some("Importer verified the checksum before the chunk was flushed"),
        "{t:#?}"
    );
    // Ten records share a word with the report: the default count is filled.
    assert!(found.len() >= 10, "{t:#?}");
}

/// Text in scripts written without spaces is found by any part of it: a
/// three-character substring through the trigram index, a two-character one
/// by a scan of the records holding such text; English search is unchanged.
#[test]
fn a_substring_of_a_japanese_or_chinese_title_finds_it() {
    let env = Env::new();
    let p = project(&env);
    let mut records = noise(&p);
    records.push(obs(
        &p,
        "bugfix",
        "ログイン画面のタイムアウトを修正",
        "セッションの有効期限を延長した。",
        "src/ui.rs",
        5,
    ));
    records.push(obs(
        &p,
        "bugfix",
        "修复登录页面超时问题",
        "延长会话有效期。",
        "src/ui.rs",
        6,
    ));
    import(&env, &records);
    for (query, title) in [
        ("タイムアウト", "ログイン画面のタイムアウトを修正"),
        ("有効期限", "ログイン画面のタイムアウトを修正"),
        ("登录", "修复登录页面超时问题"),
        ("页面超时", "修复登录页面超时问题"),
    ] {
        let t = titles(&hits(&env, &p, query));
        assert_eq!(
            t.first().map(String::as_str),
            Some(title),
            "{query}: {t:#?}"
        );
        assert_eq!(t.len(), 1, "{query}: {t:#?}");
    }
    let t = titles(&hits(&env, &p, "login timeout"));
    assert!(!t.iter().any(|x| !x.is_ascii()), "{t:#?}");
}

#[test]
fn a_compound_word_the_record_spells_otherwise_still_finds_it() {
    let env = Env::new();
    let p = project(&env);
    let mut records = noise(&p);
    records.push(obs(
        &p,
        "decision",
        "Chose pytest fixtures per module over one shared conftest",
        "Every module gets its own fixtures file; a shared conftest had grown into a tangle \
         of fixtures related to testing the importer and the exporter at once.",
        "tests/conftest.py",
        12,
    ));
    import(&env, &records);
    // No record holds the phrase "testing related" (as a whole word it
    // matches nothing); as a plain BM25 would, search looks for its parts,
    // and the record with both comes before the noise that says "tests".
    let found = hits(&env, &p, "testing-related");
    assert!(
        titles(&found)
            .first()
            .is_some_and(|t| t.starts_with("Chose pytest fixtures")),
        "{:#?}",
        titles(&found)
    );
}

/// The same kind of event on two days, recorded in the same words (in
/// files of their own: neither amends the other).
fn rollbacks(p: &Path) -> Vec<Value> {
    let mut records = noise(p);
    for (day, note, file) in [
        (
            "2025-03-14T12:00:00Z",
            "the first attempt",
            "deploy/billing.yml",
        ),
        ("2025-06-20T12:00:00Z", "once more", "deploy/billing-eu.yml"),
    ] {
        let mut r = obs(
            p,
            "change",
            "Rolled back the billing deploy",
            &format!("The billing deploy was rolled back, {note}, after the health check failed."),
            file,
            0,
        );
        r["created_at"] = json!(day);
        records.push(r);
    }
    records
}

#[test]
fn a_date_the_question_names_ranks_that_days_records_first_without_hiding_the_rest() {
    let env = Env::new();
    let p = project(&env);
    import(&env, &rollbacks(&p));
    // Both rollbacks say the same; left alone, the newer wins the tie.
    for query in [
        "why was the billing deploy rolled back on 14 March 2025?",
        "the billing deploy rollback of March 2025",
        "billing deploy rolled back 2025-03-14",
    ] {
        let found = hits(&env, &p, query);
        let rollbacks = titles(&found)
            .iter()
            .filter(|t| t.starts_with("Rolled back the billing deploy"))
            .count();
        assert_eq!(rollbacks, 2, "{query}: {:#?}", titles(&found));
        assert_first_written_on(&found, "2025-03-14", query);
    }
}

#[test]
fn a_number_or_a_modal_may_is_not_a_date() {
    let env = Env::new();
    let p = project(&env);
    import(&env, &rollbacks(&p));
    for query in [
        "billing deploy rolled back 14 times",
        "may the billing deploy be rolled back",
    ] {
        assert_first_written_on(&hits(&env, &p, query), "2025-06-20", query);
    }
}

/// The first hit was written on `day` (UTC; the records are written at
/// noon UTC, so search, which reads a named day in the local offset, sees
/// the same day in any offset within eleven hours).
fn assert_first_written_on(found: &[Value], day: &str, query: &str) {
    assert!(
        found
            .first()
            .and_then(|h| h["created_at"].as_str())
            .is_some_and(|at| at.starts_with(day)),
        "{query}: {found:#?}"
    );
}

#[test]
fn a_question_that_only_names_a_day_lists_that_days_records() {
    let env = Env::new();
    let p = project(&env);
    import(&env, &rollbacks(&p));
    // No word of the question is in any record: the day is what was asked.
    let found = hits(&env, &p, "what happened on 14 March 2025?");
    assert_first_written_on(&found, "2025-03-14", "what happened on 14 March 2025?");
    assert!(
        found.iter().all(|h| h["created_at"]
            .as_str()
            .is_some_and(|at| at.starts_with("2025-03-14"))),
        "{found:#?}"
    );
}

/// A question about where work stands ("what is still open on …") is
/// answered by the newest record on the subject, even when it does not
/// repeat the question's status words and an older record matches the
/// question better word for word; other questions keep the older record.
#[test]
fn a_status_question_finds_the_newest_record_on_the_subject_first() {
    let env = Env::new();
    let p = project(&env);
    let mut records = noise(&p);
    records.push(obs(
        &p,
        "feature",
        "Payments epic: open tasks for refunds, invoices and payouts",
        "The payments epic has four open tasks: refunds, invoices, payouts and receipts; \
         each task stays open until its tests pass.",
        "docs/payments.md",
        72,
    ));
    records.push(obs(
        &p,
        "change",
        "Closed the payments epic",
        "All four tasks shipped; the epic is closed and nothing is left.",
        "docs/payments.md",
        2,
    ));
    import(&env, &records);
    let t = titles(&hits(&env, &p, "what is still open on the payments epic?"));
    assert_eq!(t[0], "Closed the payments epic", "{t:#?}");
    let t = titles(&hits(
        &env,
        &p,
        "which tasks are open in the payments epic?",
    ));
    assert!(t[0].starts_with("Payments epic: open tasks"), "{t:#?}");
}

/// "How long", "how many", "how often" ask for an amount: the record that
/// answers says "10 minutes", not "long", so a record that merely says
/// "long" does not win for it.
#[test]
fn how_long_asks_for_an_amount_and_long_is_not_the_subject() {
    let env = Env::new();
    let p = project(&env);
    let mut records = noise(&p);
    records.push(obs(
        &p,
        "bugfix",
        "Sessions get a 10 minute grace period before cleanup",
        "A session that started less than 10 minutes ago is safe: cleanup skips it.",
        "src/cleanup.rs",
        30,
    ));
    records.push(obs(
        &p,
        "change",
        "Long cleanup when starting many sessions",
        "Starting a long list of sessions made cleanup take long; it now runs in the background.",
        "src/cleanup.rs",
        20,
    ));
    import(&env, &records);
    let t = titles(&hits(
        &env,
        &p,
        "how long after starting is a session safe from cleanup?",
    ));
    assert_eq!(
        t[0], "Sessions get a 10 minute grace period before cleanup",
        "{t:#?}"
    );
}

/// A record whose title only says a file was touched ("Edited …") names
/// the question's words in that file's path, and nothing more: the record
/// that did the work, in words, comes first.
#[test]
fn the_record_that_did_the_work_beats_one_that_only_names_the_file() {
    let env = Env::new();
    let p = project(&env);
    let mut records = noise(&p);
    records.push(obs(
        &p,
        "change",
        "Idle checkouts expired before the card form loaded",
        "The session timeout ran from the first page view, so slow card forms expired; \
         the timeout now starts when the form is shown.",
        "src/checkout.rs",
        5,
    ));
    records.push(obs(
        &p,
        "change",
        "Edited tests/checkout_session_timeout_test.rs",
        "Edited tests/checkout_session_timeout_test.rs (+4 −2 lines).",
        "tests/checkout_session_timeout_test.rs",
        3,
    ));
    import(&env, &records);
    let t = titles(&hits(
        &env,
        &p,
        "why did checkout sessions time out too early?",
    ));
    assert_eq!(
        t[0], "Idle checkouts expired before the card form loaded",
        "{t:#?}"
    );
}
