//! Recall through the real binary: the SessionStart index (`mnemo context`
//! and the hook), file context on PreToolUse, search with nasty queries and
//! filters, show and timeline in text and JSON, and the error messages.
//! Stores are filled with `mnemo import` of JSON Lines, as a user would.

mod common;

use std::path::{Path, PathBuf};
use std::process::Output;

use common::{Env, assert_hook_ok};
use mnemo_core::time::{format_rfc3339, now_ms};
use serde_json::{Value, json};

const HOUR: i64 = 3_600_000;
const DAY: i64 = 24 * HOUR;

/// A git repository to be the project; its canonical path.
fn project(env: &Env, name: &str) -> PathBuf {
    let dir = env.dir.path().join(name);
    mnemo_testkit::git_init(&dir).unwrap();
    dir.canonicalize().unwrap()
}

fn at(ms_ago: i64) -> String {
    format_rfc3339(now_ms() - ms_ago)
}

/// An observation record for `mnemo import`.
fn obs(project: &Path, kind: &str, title: &str, file: Option<&str>, ms_ago: i64) -> Value {
    json!({
        "kind": "observation",
        "project": project,
        "type": kind,
        "title": title,
        "narrative": format!("Narrative of {title}."),
        "facts": [format!("fact about {title}")],
        "files_modified": file.map(|f| vec![project.join(f)]).unwrap_or_default(),
        "created_at": at(ms_ago),
    })
}

fn import(env: &Env, records: &[Value]) {
    let file = env.dir.path().join(format!("import-{}.jsonl", now_ms()));
    let text: String = records.iter().map(|r| format!("{r}\n")).collect();
    std::fs::write(&file, text).unwrap();
    let out = env.mnemo().arg("import").arg(&file).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn run(env: &Env, dir: &Path, args: &[&str]) -> Output {
    env.mnemo().current_dir(dir).args(args).output().unwrap()
}

fn stdout(out: &Output) -> String {
    assert!(
        out.status.success(),
        "exit {:?}; stderr: {}",
        out.status.code(),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout.clone()).unwrap()
}

fn json_of(out: &Output) -> Value {
    serde_json::from_str(&stdout(out)).unwrap()
}

fn session_start(env: &Env, project: &Path, session: &str) -> Value {
    let payload = json!({"session_id": session, "hook_event_name": "SessionStart",
                         "cwd": project, "source": "startup"});
    assert_hook_ok(&env.hook_with("SessionStart", &payload.to_string(), |c| {
        c.env("CLAUDE_PROJECT_DIR", project);
    }))
}

fn pre_tool_use(env: &Env, project: &Path, session: &str, tool: &str, input: Value) -> Value {
    let payload = json!({"session_id": session, "hook_event_name": "PreToolUse", "cwd": project,
                         "tool_name": tool, "tool_input": input, "tool_use_id": "toolu_x"});
    assert_hook_ok(&env.hook_with("PreToolUse", &payload.to_string(), |c| {
        c.env("CLAUDE_PROJECT_DIR", project);
    }))
}

/// The `#id`s of observation lines, in the order shown.
fn listed_ids(text: &str) -> Vec<i64> {
    text.lines()
        .filter_map(|l| l.strip_prefix('#'))
        .filter_map(|l| l.split(' ').next()?.parse().ok())
        .collect()
}

fn ids_by_title(env: &Env) -> std::collections::HashMap<String, i64> {
    let db = env.db();
    let mut stmt = db.prepare("SELECT title, id FROM observations").unwrap();
    stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap()
}

#[test]
fn context_shows_summaries_then_observations_by_day_newest_first() {
    let env = Env::new();
    let p = project(&env, "shop");
    let mut records = vec![
        json!({"kind": "summary", "project": p, "request": "fix the login",
               "learned": "passwords were compared in plain text",
               "completed": "login uses check_hash", "next_steps": "add tests",
               "created_at": at(2 * HOUR)}),
        json!({"kind": "summary", "project": p, "request": "add a session cookie",
               "completed": "cookie set on login", "created_at": at(30 * HOUR)}),
    ];
    for i in 0..12 {
        records.push(obs(
            &p,
            ["bugfix", "feature", "decision", "discovery"][i % 4],
            &format!("Observation number {i}"),
            Some(&format!("src/file{i}.rs")),
            (i as i64) * 9 * HOUR + HOUR,
        ));
    }
    import(&env, &records);

    let text = stdout(&run(&env, &p, &["context"]));
    let text = text.trim_end();
    assert!(text.starts_with("<mnemo-context>\n"), "{text}");
    assert!(text.ends_with("\n</mnemo-context>"), "{text}");
    let lines: Vec<&str> = text.lines().collect();
    assert!(
        lines[1].starts_with("mnemo memory of shop: 12 observations"),
        "{}",
        lines[1]
    );
    assert!(lines[1].contains("on branch main"), "{}", lines[1]);
    let turns = lines
        .iter()
        .position(|l| l.starts_with("Recent sessions"))
        .unwrap();
    // Summaries imported without a session count as one session each.
    assert!(lines[turns + 1].contains("asked: fix the login"), "{text}");
    assert!(lines[turns + 1].contains("[open]"), "{text}");
    assert!(lines[turns + 1].contains("open: add tests"), "{text}");
    assert!(
        lines[turns + 2].contains("asked: add a session cookie"),
        "{text}"
    );
    assert!(lines[turns + 2].contains("[done]"), "{text}");

    // Every observation fits the default budget; newest first, by day.
    let titles = ids_by_title(&env);
    let expected: Vec<i64> = (0..12)
        .map(|i| titles[&format!("Observation number {i}")])
        .collect();
    assert_eq!(listed_ids(text), expected, "{text}");
    let days: Vec<&str> = lines
        .iter()
        .filter(|l| l.len() == 11 && l.ends_with(':') && l.starts_with("20"))
        .copied()
        .collect();
    let mut sorted = days.clone();
    sorted.sort_by(|a, b| b.cmp(a));
    assert_eq!(days, sorted, "days newest first");
    assert!(days.len() >= 4, "{days:?}");
    let line0 = lines
        .iter()
        .find(|l| l.contains("Observation number 0"))
        .unwrap();
    assert!(
        line0.ends_with("[fix] Observation number 0 (src/file0.rs)"),
        "{line0}"
    );
    assert!(
        line0.contains(" 1h ") || line0.contains(" 59m "),
        "age shown: {line0}"
    );
    for tool in [
        "mcp__mnemo__search",
        "mcp__mnemo__timeline",
        "mcp__mnemo__get_observations",
        "mnemo show",
    ] {
        assert!(lines[lines.len() - 2].contains(tool), "footer names {tool}");
    }

    let index = json_of(&run(&env, &p, &["context", "--json"]));
    assert_eq!(index["observations_shown"].as_array().unwrap().len(), 12);
    assert_eq!(index["summaries_shown"], json!(["S1", "S2"]));
    assert_eq!(index["chars"], json!(index["text"].as_str().unwrap().len()));
    assert_eq!(index["empty"], false);
}

#[test]
fn session_start_injects_the_index_and_an_empty_project_gets_one_line() {
    let env = Env::new();
    let p = project(&env, "fresh");
    let answer = session_start(&env, &p, "s-empty");
    let context = answer["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .unwrap();
    assert_eq!(
        answer["hookSpecificOutput"]["hookEventName"],
        "SessionStart"
    );
    assert_eq!(
        context,
        "<mnemo-context>\nmnemo: nothing remembered for fresh yet.\n</mnemo-context>"
    );
    assert!(answer.get("systemMessage").is_none());

    import(
        &env,
        &[obs(
            &p,
            "feature",
            "Checkout page added",
            Some("web/checkout.ts"),
            DAY,
        )],
    );
    let answer = session_start(&env, &p, "s-two");
    let context = answer["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .unwrap();
    assert!(
        context.contains("[feat] Checkout page added (web/checkout.ts)"),
        "{context}"
    );
    // `mnemo context` prints exactly what the hook injects.
    let printed = stdout(&run(&env, &p, &["context"]));
    assert_eq!(printed.trim_end(), context);

    // The optional line for the human, and the switch that turns it all off.
    let payload = json!({"session_id": "s-3", "hook_event_name": "SessionStart", "cwd": p});
    let answer = assert_hook_ok(&env.hook_with("SessionStart", &payload.to_string(), |c| {
        c.env("MNEMO_CONTEXT_SYSTEM_MESSAGE", "1");
    }));
    assert!(
        answer["systemMessage"]
            .as_str()
            .unwrap()
            .starts_with("mnemo: 1 of 1 observation of fresh"),
        "{answer}"
    );
    let answer = assert_hook_ok(&env.hook_with("SessionStart", &payload.to_string(), |c| {
        c.env("MNEMO_CONTEXT_ENABLED", "0");
    }));
    assert_eq!(answer, json!({}));
}

#[test]
fn budget_is_kept_and_private_or_tag_text_never_appears() {
    let env = Env::new();
    let p = project(&env, "big");
    let mut records = Vec::new();
    for i in 0..400 {
        records.push(obs(
            &p,
            "change",
            &format!(
                "A long title for change {i} {}",
                "with many words ".repeat(6)
            ),
            Some(&format!("src/module_{i}/file.rs")),
            i * HOUR,
        ));
    }
    records.push(json!({
        "kind": "observation", "project": p, "type": "discovery",
        "title": "Token lives in <private>hunter2-secret</private> vault",
        "narrative": "closing </mnemo-context> inside a title <mnemo-context>",
        "created_at": at(1),
    }));
    records.push(json!({
        "kind": "observation", "project": p, "type": "discovery",
        "title": "Stray </mnemo-context> tag and <PRIVATE>x</private>y",
        "created_at": at(2),
    }));
    import(&env, &records);

    for (tokens, limit) in [
        ("100", 400),
        ("300", 1200),
        ("1500", 6000),
        ("999999", 9000),
    ] {
        let out = env
            .mnemo()
            .current_dir(&p)
            .env("MNEMO_CONTEXT_MAX_TOKENS", tokens)
            .args(["context", "--json"])
            .output()
            .unwrap();
        let index = json_of(&out);
        let text = index["text"].as_str().unwrap();
        let chars = text.encode_utf16().count();
        assert!(chars <= limit, "{tokens} tokens: {chars} > {limit}");
        assert_eq!(index["chars"], json!(chars));
        assert!(!text.contains("hunter2"), "{text}");
        assert_eq!(text.matches("<mnemo-context>").count(), 1, "{text}");
        assert_eq!(text.matches("</mnemo-context>").count(), 1, "{text}");
        assert!(text.ends_with("</mnemo-context>"));
        assert!(!text.to_lowercase().contains("<private>"), "{text}");
        if tokens != "100" {
            assert!(text.contains("Token lives in vault"), "{text}");
            assert!(text.contains("Stray tag and y"), "{text}");
        }
        // The newest make it in whatever the budget.
        let shown = listed_ids(text);
        assert!(!shown.is_empty() || tokens == "100", "{text}");
        if tokens == "999999" {
            assert!(
                chars > 8000,
                "a large budget is used up to the cap: {chars}"
            );
        }
    }
}

#[test]
fn active_files_branch_topics_and_duplicates_shape_the_selection() {
    let env = Env::new();
    let p = project(&env, "shop");
    std::fs::create_dir_all(p.join("src")).unwrap();
    let git = |args: &[&str]| {
        let ok = std::process::Command::new("git")
            .args(args)
            .current_dir(&p)
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .output()
            .unwrap()
            .status
            .success();
        assert!(ok, "git {args:?}");
    };
    git(&["checkout", "-q", "-b", "feature/payment-retry"]);

    let mut records = Vec::new();
    // 400 fresh observations: more than the budget can show.
    for i in 0..400 {
        records.push(obs(
            &p,
            "change",
            &format!("Routine change {i}"),
            Some(&format!("src/routine_{i}.rs")),
            HOUR + i * 60_000,
        ));
    }
    // Old, but about a file that the last session edited and that has
    // uncommitted changes.
    records.push(obs(
        &p,
        "discovery",
        "How the active module works",
        Some("src/active.rs"),
        20 * DAY,
    ));
    records.push(
        json!({"kind": "session", "platform": "claude-code", "session_id": "last",
                        "project": p, "started_at": at(2 * HOUR)}),
    );
    records.push(
        json!({"kind": "event", "uid": "e1", "platform": "claude-code",
                        "session_id": "last", "event_kind": "tool_use", "tool_name": "Edit",
                        "files_modified": [p.join("src/active.rs")], "created_at": at(2 * HOUR)}),
    );
    // Old, but about what the branch is named after.
    records.push(obs(
        &p,
        "decision",
        "Payment retries back off exponentially",
        None,
        25 * DAY,
    ));
    // Old and unrelated: stays out.
    records.push(obs(
        &p,
        "discovery",
        "Unrelated old finding",
        Some("docs/old.md"),
        22 * DAY,
    ));
    // Near-duplicates collapse into one line.
    for i in 0..5 {
        records.push(obs(
            &p,
            "change",
            "Ran the test suite!",
            Some("Makefile"),
            30 * 60_000 + i,
        ));
    }
    import(&env, &records);
    let active = p.join("src/active.rs");
    std::fs::write(&active, "fn main() {}\n").unwrap();
    let later = std::time::SystemTime::now() + std::time::Duration::from_secs(5);
    std::fs::File::options()
        .write(true)
        .open(&active)
        .unwrap()
        .set_modified(later)
        .unwrap();

    let text = stdout(&run(&env, &p, &["context"]));
    let active_line = text
        .lines()
        .find(|l| l.contains("How the active module works"))
        .unwrap_or_else(|| panic!("active file's history shown:\n{text}"));
    assert!(active_line.ends_with("(src/active.rs*)"), "{active_line}");
    assert!(
        active_line.contains(" 2w ") || active_line.contains(" 20d "),
        "{active_line}"
    );
    assert!(text.contains("file*: changed since git last staged or committed it"));
    assert!(
        text.contains("Payment retries back off exponentially"),
        "branch topic pulled in:\n{text}"
    );
    assert!(text.contains("on branch feature/payment-retry"));
    assert!(text.contains("from 1 session,"), "{text}");
    assert!(!text.contains("Unrelated old finding"), "{text}");
    let dupes: Vec<&str> = text
        .lines()
        .filter(|l| l.contains("Ran the test suite!"))
        .collect();
    assert_eq!(dupes.len(), 1, "{dupes:?}");
    assert!(dupes[0].ends_with("(Makefile) [x5]"), "{}", dupes[0]);
    assert!(text.contains("Routine change 0 "), "the newest are kept");
    assert!(
        !text.contains("Routine change 399 "),
        "the budget cuts the oldest"
    );
}

#[test]
fn file_context_comes_once_per_file_per_session_and_never_blocks() {
    let env = Env::new();
    let p = project(&env, "shop");
    import(
        &env,
        &[
            obs(
                &p,
                "bugfix",
                "Login compares password hashes",
                Some("src/auth.py"),
                2 * HOUR,
            ),
            json!({"kind": "observation", "project": p, "type": "discovery",
                   "title": "Auth reads the user table", "files_read": [p.join("src/auth.py")],
                   "created_at": at(DAY)}),
            json!({"kind": "observation", "project": p, "type": "change",
                   "title": "Imported with a relative path", "files_modified": ["src/rel.py"],
                   "created_at": at(DAY)}),
        ],
    );
    let ids = ids_by_title(&env);

    // Nothing before the session exists, nothing for other tools.
    let read_auth = json!({"file_path": p.join("src/auth.py")});
    assert_eq!(
        pre_tool_use(&env, &p, "s1", "Read", read_auth.clone()),
        json!({})
    );
    session_start(&env, &p, "s1");
    assert_eq!(
        pre_tool_use(
            &env,
            &p,
            "s1",
            "Bash",
            json!({"command": "cat src/auth.py"})
        ),
        json!({})
    );

    let answer = pre_tool_use(&env, &p, "s1", "Read", read_auth.clone());
    let out = &answer["hookSpecificOutput"];
    assert_eq!(out["hookEventName"], "PreToolUse");
    assert!(
        out.get("permissionDecision").is_none(),
        "never decides: {answer}"
    );
    let text = out["additionalContext"].as_str().unwrap();
    assert!(
        text.starts_with("<mnemo-context>\nmnemo: earlier work on src/auth.py"),
        "{text}"
    );
    assert!(text.ends_with("</mnemo-context>"), "{text}");
    let fix = ids["Login compares password hashes"];
    let read = ids["Auth reads the user table"];
    let fix_at = text.find(&format!(
        "- #{fix} 2h [fix] Login compares password hashes\n"
    ));
    let read_at = text.find(&format!(
        "- #{read} 1d [disc] Auth reads the user table (read)\n"
    ));
    assert!(fix_at.unwrap() < read_at.unwrap(), "newest first: {text}");
    assert!(
        text.chars().count() <= 800,
        "file_context_tokens budget: {text}"
    );

    // Once per file per session: an Edit of the same file gets nothing...
    let edit = json!({"file_path": p.join("src/auth.py"), "old_string": "a", "new_string": "b"});
    assert_eq!(
        pre_tool_use(&env, &p, "s1", "Edit", edit.clone()),
        json!({})
    );
    // ...another session gets it again.
    session_start(&env, &p, "s2");
    assert!(pre_tool_use(&env, &p, "s2", "Edit", edit)["hookSpecificOutput"].is_object());

    // Relative paths (in the tool call or in the stored observation) match.
    let rel = pre_tool_use(
        &env,
        &p,
        "s1",
        "Write",
        json!({"file_path": "src/rel.py", "content": "x"}),
    );
    assert!(
        rel["hookSpecificOutput"]["additionalContext"]
            .as_str()
            .unwrap()
            .contains("Imported with a relative path"),
        "{rel}"
    );
    // Files without history: nothing.
    assert_eq!(
        pre_tool_use(
            &env,
            &p,
            "s1",
            "Read",
            json!({"file_path": p.join("README")})
        ),
        json!({})
    );
    let shown = env.count("SELECT count(*) FROM file_context_shown");
    assert_eq!(shown, 3, "s1 auth.py, s2 auth.py, s1 rel.py");
    assert_eq!(env.hook_log(), "", "no warnings");
}

#[test]
fn pre_tool_use_without_a_database_creates_nothing() {
    let env = Env::new();
    let p = project(&env, "none");
    let answer = pre_tool_use(&env, &p, "s1", "Read", json!({"file_path": p.join("a.rs")}));
    assert_eq!(answer, json!({}));
    assert!(
        !env.db_path().exists(),
        "PreToolUse must not create the database"
    );
}

/// Queries that break naive FTS5 use; every one must answer, never error.
const NASTY: &[&str] = &[
    "",
    " ",
    "\"",
    "\"\"",
    "\"unbalanced quote",
    "login\"",
    "'single' quotes",
    "-",
    "--",
    "-v",
    "*",
    "auth*",
    "**/*.rs",
    ":",
    "title:login",
    "src/auth.py",
    "/abs/path/to/file.rs",
    "C:\\Users\\me\\file.txt",
    "AND",
    "OR",
    "NOT",
    "login AND OR NOT",
    "NEAR(login hash, 3)",
    "(unbalanced",
    "a)",
    "^start",
    "col:umn:s",
    "100%",
    "don't",
    "fn main() { println!(\"hi\"); }",
    "ünïcödé wörds 日本語 🙂",
    "\u{7}\u{1b}control",
    "{title}: login",
    "+plus -minus",
    "x OR",
    "login password hash check session cookie token user table migration schema index query handler",
];

#[test]
fn search_answers_every_nasty_query() {
    let env = Env::new();
    let p = project(&env, "shop");
    import(
        &env,
        &[
            obs(
                &p,
                "bugfix",
                "Login compares password hashes",
                Some("src/auth.py"),
                HOUR,
            ),
            obs(
                &p,
                "feature",
                "Don't log tokens; NEAR zero risk",
                Some("src/log.rs"),
                2 * HOUR,
            ),
        ],
    );
    for q in NASTY {
        for json_flag in [false, true] {
            let mut c = env.mnemo();
            c.current_dir(&p).args(["search", "--all"]);
            if json_flag {
                c.arg("--json");
            }
            let out = c.arg("--").arg(q).output().unwrap();
            assert_eq!(
                out.status.code(),
                Some(0),
                "query {q:?}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            assert!(
                out.stderr.is_empty(),
                "query {q:?}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            if json_flag {
                let v: Value = serde_json::from_slice(&out.stdout)
                    .unwrap_or_else(|e| panic!("query {q:?}: {e}"));
                assert!(v["hits"].is_array(), "{q:?}");
            }
        }
    }
    // And the ones that mean something find it.
    let hits = |q: &str| -> Vec<String> {
        let v = json_of(&run(&env, &p, &["search", "--json", "--", q]));
        v["hits"]
            .as_array()
            .unwrap()
            .iter()
            .map(|h| h["title"].as_str().unwrap().to_owned())
            .collect()
    };
    assert_eq!(hits("src/auth.py"), ["Login compares password hashes"]);
    assert_eq!(hits("\"password hash"), ["Login compares password hashes"]);
    assert_eq!(hits("don't"), ["Don't log tokens; NEAR zero risk"]);
    assert_eq!(hits("NEAR"), ["Don't log tokens; NEAR zero risk"]);
    assert_eq!(
        hits("passw"),
        ["Login compares password hashes"],
        "prefix on the last word"
    );
}

/// Two projects, sessions with prompts, observations and summaries.
fn seeded(env: &Env) -> (PathBuf, PathBuf) {
    let shop = project(env, "shop");
    let blog = project(env, "blog");
    let session = |sid: &str, p: &Path, ms_ago: i64| {
        json!({"kind": "session", "platform": "claude-code", "session_id": sid, "project": p,
               "started_at": at(ms_ago), "status": "ended"})
    };
    let prompt = |sid: &str, n: i64, text: &str, ms_ago: i64| {
        json!({"kind": "prompt", "uid": format!("{sid}-p{n}"), "platform": "claude-code",
               "session_id": sid, "prompt_number": n, "text": text, "created_at": at(ms_ago)})
    };
    let with_session = |mut o: Value, sid: &str, n: i64| {
        o["platform"] = json!("claude-code");
        o["session_id"] = json!(sid);
        o["prompt_number"] = json!(n);
        o
    };
    import(
        env,
        &[
            session("sess-aaaa-1111", &shop, 10 * DAY),
            prompt("sess-aaaa-1111", 1, "please fix the login bug", 10 * DAY),
            with_session(
                obs(
                    &shop,
                    "bugfix",
                    "Login compares password hashes",
                    Some("src/auth.py"),
                    10 * DAY - 60_000,
                ),
                "sess-aaaa-1111",
                1,
            ),
            json!({"kind": "summary", "project": shop, "platform": "claude-code",
                   "session_id": "sess-aaaa-1111", "prompt_number": 1,
                   "request": "please fix the login bug", "completed": "login hashes passwords",
                   "created_at": at(10 * DAY - 120_000)}),
            session("sess-bbbb-2222", &shop, 2 * DAY),
            prompt("sess-bbbb-2222", 1, "add rate limiting to login", 2 * DAY),
            with_session(
                obs(
                    &shop,
                    "feature",
                    "Login rate limiter",
                    Some("src/limits.py"),
                    2 * DAY - 60_000,
                ),
                "sess-bbbb-2222",
                1,
            ),
            with_session(
                obs(
                    &shop,
                    "decision",
                    "Limits live in redis",
                    Some("src/limits.py"),
                    2 * DAY - 120_000,
                ),
                "sess-bbbb-2222",
                1,
            ),
            obs(
                &blog,
                "feature",
                "Login page for the blog",
                Some("app/login.tsx"),
                DAY,
            ),
        ],
    );
    (shop, blog)
}

fn titles(v: &Value) -> Vec<String> {
    v["hits"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["title"].as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn search_filters_by_project_type_date_file_and_session() {
    let env = Env::new();
    let (shop, blog) = seeded(&env);
    let search = |dir: &Path, args: &[&str]| {
        let mut all = vec!["search", "--json"];
        all.extend_from_slice(args);
        json_of(&run(&env, dir, &all))
    };

    // The current project by default, every project with --all.
    let here = search(&shop, &["login"]);
    assert!(titles(&here).iter().all(|t| !t.contains("blog")), "{here}");
    assert!(titles(&here).contains(&"Login rate limiter".to_owned()));
    let kinds: std::collections::HashSet<&str> = here["hits"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["kind"].as_str().unwrap())
        .collect();
    assert_eq!(
        kinds,
        ["observation", "summary", "prompt"].into_iter().collect()
    );
    assert!(
        titles(&search(&shop, &["login", "--all"])).contains(&"Login page for the blog".to_owned())
    );
    assert_eq!(
        titles(&search(&shop, &["login", "--project", "blog"])),
        ["Login page for the blog"]
    );
    assert_eq!(
        titles(&search(
            &shop,
            &["login", "--project", blog.to_str().unwrap()]
        )),
        ["Login page for the blog"]
    );

    // Type (with short names), summaries and prompts as types.
    assert_eq!(
        titles(&search(&shop, &["login", "--type", "fix"])),
        ["Login compares password hashes"]
    );
    assert_eq!(
        titles(&search(&shop, &["--type", "summary"])),
        ["please fix the login bug"]
    );
    let prompts = search(&shop, &["login", "-t", "prompt"]);
    assert_eq!(
        titles(&prompts),
        ["add rate limiting to login", "please fix the login bug"]
    );
    assert!(prompts["hits"][0]["ref"].as_str().unwrap().starts_with('P'));
    assert_eq!(
        prompts["hits"][0]["ref"],
        format!("P{}", prompts["hits"][0]["id"].as_i64().unwrap())
    );

    // Dates: absolute days, spans ago.
    assert_eq!(
        titles(&search(
            &shop,
            &[
                "login",
                "--type",
                "observation,feature,bugfix",
                "--since",
                "5d"
            ]
        )),
        ["Login rate limiter"]
    );
    let old = titles(&search(&shop, &["login", "--until", "5d"]));
    assert!(
        old.iter()
            .all(|t| t.contains("password") || t.contains("fix the login")),
        "{old:?}"
    );
    let day = &at(2 * DAY)[..10];
    let on_day = titles(&search(
        &shop,
        &["--since", day, "--until", day, "-t", "feature,decision"],
    ));
    assert_eq!(on_day.len(), 2, "{on_day:?}");

    // Files: relative, absolute, bare name; an empty query lists newest first.
    for f in [
        "src/limits.py",
        "limits.py",
        shop.join("src/limits.py").to_str().unwrap(),
    ] {
        assert_eq!(
            titles(&search(&shop, &["--file", f])),
            ["Limits live in redis", "Login rate limiter"],
            "--file {f}"
        );
    }
    assert_eq!(
        titles(&search(&shop, &["redis", "--file", "auth.py"])),
        Vec::<String>::new()
    );

    // Session: full id or a prefix.
    let by_session = titles(&search(&shop, &["--session", "sess-bbbb"]));
    assert_eq!(
        by_session,
        [
            "Limits live in redis",
            "Login rate limiter",
            "add rate limiting to login"
        ]
    );
    // Limit.
    assert_eq!(
        search(&shop, &["login", "-n", "1"])["hits"]
            .as_array()
            .unwrap()
            .len(),
        1
    );
}

#[test]
fn show_and_timeline_in_text_and_json() {
    let env = Env::new();
    let (shop, _) = seeded(&env);
    let ids = ids_by_title(&env);
    let limiter = ids["Login rate limiter"];
    let fix = ids["Login compares password hashes"];

    let text = stdout(&run(&env, &shop, &["show", &format!("#{fix}"), "S1", "P1"]));
    assert!(!text.contains('\x1b'), "no colors when not a terminal");
    assert!(
        text.starts_with(&format!("#{fix} [fix] Login compares password hashes\n")),
        "{text}"
    );
    assert!(
        text.contains("Narrative of Login compares password hashes."),
        "{text}"
    );
    assert!(
        text.contains("fact about Login compares password hashes"),
        "{text}"
    );
    assert!(text.contains("  - src/auth.py"), "{text}");
    assert!(
        text.contains("claude-code sess-aaaa-1111, turn 1"),
        "{text}"
    );
    assert!(
        text.contains("Prompt of that turn\n  please fix the login bug"),
        "{text}"
    );
    assert!(
        text.contains("\nS1 [turn] please fix the login bug\n"),
        "{text}"
    );
    assert!(
        text.contains("\nP1 [prompt] please fix the login bug\n"),
        "{text}"
    );

    let shown = json_of(&run(&env, &shop, &["show", &limiter.to_string(), "--json"]));
    let record = &shown["records"][0];
    assert_eq!(record["kind"], "observation");
    assert_eq!(record["id"], limiter);
    assert_eq!(record["ref"], format!("#{limiter}"));
    assert_eq!(record["type"], "feature");
    assert_eq!(
        record["files_modified"],
        json!([shop.join("src/limits.py")])
    );
    assert_eq!(record["project"]["name"], "shop");
    assert_eq!(record["session"]["session_id"], "sess-bbbb-2222");
    assert_eq!(record["prompt"], "add rate limiting to login");
    assert_eq!(shown["missing"], json!([]));

    // Missing ids: what was found is printed, the rest named; exit 1 only
    // when nothing was found.
    let out = run(&env, &shop, &["show", &fix.to_string(), "#999"]);
    assert_eq!(out.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&out.stdout).contains("Login compares password hashes"));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no observation #999"));
    let out = run(&env, &shop, &["show", "#999", "S999"]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("no observation #999") && stderr.contains("no summary S999"),
        "{stderr}"
    );

    // The timeline interleaves prompts, observations and summaries by time,
    // within the project.
    let tl = json_of(&run(
        &env,
        &shop,
        &["timeline", &format!("#{limiter}"), "--json"],
    ));
    let order: Vec<&str> = tl["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["ref"].as_str().unwrap())
        .collect();
    let limits = format!("#{}", ids["Limits live in redis"]);
    let fix_id = format!("#{fix}");
    let limiter_id = format!("#{limiter}");
    assert_eq!(
        order,
        [
            "P1",
            fix_id.as_str(),
            "S1",
            "P2",
            limiter_id.as_str(),
            limits.as_str()
        ],
        "{tl}"
    );
    assert_eq!(tl["anchor"], limiter_id);
    assert_eq!(tl["project"]["name"], "shop");
    let text = stdout(&run(
        &env,
        &shop,
        &["timeline", &limiter.to_string(), "-b", "1", "-a", "0"],
    ));
    let lines: Vec<&str> = text.lines().collect();
    assert!(
        lines[0].starts_with(&format!("Timeline around #{limiter} in shop")),
        "{text}"
    );
    assert!(text.contains("> "), "{text}");
    assert_eq!(
        listed_ids_any(&text),
        ["P2".to_owned(), limiter_id.clone()],
        "{text}"
    );
}

/// Ids at the start of timeline lines (`  12:00 #3 ...`, `> 12:00 S1 ...`).
fn listed_ids_any(text: &str) -> Vec<String> {
    text.lines()
        .filter(|l| l.starts_with("  ") || l.starts_with("> "))
        .filter_map(|l| {
            l.split_whitespace()
                .nth(if l.starts_with('>') { 2 } else { 1 })
        })
        .map(str::to_owned)
        .collect()
}

#[test]
fn errors_say_what_to_do() {
    let env = Env::new();
    let p = project(&env, "shop");
    let err = |args: &[&str]| {
        let out = run(&env, &p, args);
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        String::from_utf8(out.stderr).unwrap()
    };
    let e = err(&["search", "login"]);
    assert!(
        e.contains("no database") && e.contains("mnemo install"),
        "{e}"
    );
    assert!(!env.db_path().exists(), "reading commands create nothing");
    let e = err(&["show", "12"]);
    assert!(e.contains("no database"), "{e}");
    // `mnemo context` still answers: what a session would receive.
    let text = stdout(&run(&env, &p, &["context"]));
    assert!(text.contains("nothing remembered for shop yet"), "{text}");

    import(&env, &[obs(&p, "bugfix", "Something", None, HOUR)]);
    let e = err(&["search", "x", "--since", "last tuesday"]);
    assert!(
        e.contains("`last tuesday` is not a date") && e.contains("7d"),
        "{e}"
    );
    let e = err(&["show", "twelve"]);
    assert!(e.contains("S12 for a turn summary"), "{e}");
    let e = err(&["timeline", "#4242"]);
    assert!(e.contains("no observation #4242"), "{e}");
    let e = err(&["search", "x", "--project", "nonesuch"]);
    assert!(
        e.contains("no project `nonesuch`") && e.contains("shop ("),
        "{e}"
    );

    // A project with nothing recorded: an empty answer and a hint.
    let other = project(&env, "other");
    let out = run(&env, &other, &["search", "Something"]);
    assert_eq!(stdout(&out).trim(), "No matches.");
    assert!(String::from_utf8_lossy(&out.stderr).contains("--all"));
}
