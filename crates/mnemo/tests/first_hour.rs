//! What a newcomer meets in the first hour: the projects mnemo knows and
//! the hints that name them, wording (sizes, plurals, cuts), ids that mean
//! one thing, host notifications shown as what they are, and uninstall.
//! All through the real binary against a real data directory.

mod common;
#[path = "common/worker.rs"]
mod worker_support;

use std::path::Path;
use std::time::Duration;

use common::{Env, run_with_stdin};
use serde_json::Value;
use worker_support::{Worker, wait_for};

fn run(env: &Env, args: &[&str]) -> (i32, String, String) {
    let out = env.mnemo().args(args).output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Imports JSON Lines records through `mnemo import -`.
fn import(env: &Env, lines: &[String]) {
    let mut c = env.mnemo();
    c.args(["import", "-"]);
    let out = run_with_stdin(c, lines.join("\n").as_bytes());
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn observation(root: &str, name: &str, platform: &str, title: &str) -> String {
    serde_json::json!({
        "kind": "observation",
        "project": {"root": root, "name": name},
        "session": {"platform": platform, "session_id": format!("{platform}-{name}-{root}")},
        "type": "decision",
        "title": title,
        "created_at": "2026-11-02T10:00:00Z",
    })
    .to_string()
}

#[test]
fn projects_lists_same_named_projects_by_root_and_hints_name_them() {
    let env = Env::new();
    let (code, out, err) = run(&env, &["projects"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.is_empty(), "{out}");
    assert!(err.contains("import --transcripts"), "{err}");

    import(
        &env,
        &[
            observation("/home/a/work/api", "api", "claude-code", "Kept the cache"),
            observation("/home/a/work/api", "api", "codex", "Dropped the retry"),
            observation("/home/a/old/api", "api", "claude-code", "Pinned the schema"),
        ],
    );
    let (code, out, err) = run(&env, &["projects", "--json"]);
    assert_eq!(code, 0, "{err}");
    let v: Value = serde_json::from_str(&out).unwrap();
    let items = v["items"].as_array().unwrap();
    assert_eq!(items.len(), 2, "{v}");
    let work = items
        .iter()
        .find(|p| p["root"] == "/home/a/work/api")
        .expect("the work project");
    assert_eq!(work["name"], "api");
    assert_eq!(work["observations"], 2);
    assert_eq!(work["agents"], serde_json::json!(["claude-code", "codex"]));
    assert!(
        work["last_activity"]
            .as_str()
            .unwrap()
            .starts_with("2026-11-02")
    );

    let (_, out, _) = run(&env, &["projects"]);
    assert!(
        out.contains("/home/a/work/api") && out.contains("/home/a/old/api"),
        "{out}"
    );
    assert!(
        out.contains("2 observations") && out.contains("1 observation,"),
        "{out}"
    );
    assert!(out.contains("[claude-code, codex]"), "{out}");

    // stats tells same-named projects apart and counts in the right number.
    let (_, out, _) = run(&env, &["stats"]);
    assert!(out.contains("api (/home/a/old/api)"), "{out}");
    assert!(out.contains("(1 observation, 0 events)"), "{out}");
    assert!(!out.contains(" KB") && !out.contains(" MB"), "{out}");

    // `mnemo context` where nothing is remembered names what is.
    let elsewhere = env.dir.path().join("elsewhere");
    std::fs::create_dir_all(&elsewhere).unwrap();
    let out = env
        .mnemo()
        .arg("context")
        .current_dir(&elsewhere)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(String::from_utf8_lossy(&out.stdout).contains("nothing remembered"));
    assert!(
        err.contains("/home/a/old/api") && err.contains("--project"),
        "{err}"
    );

    let out = env
        .mnemo()
        .args(["search", "cache"])
        .current_dir(&elsewhere)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("/home/a/work/api"), "{err}");
}

fn summary(session: &str, turn: i64, request: &str) -> String {
    serde_json::json!({
        "kind": "summary",
        "project": {"root": "/home/a/shop", "name": "shop"},
        "session": {"platform": "claude-code", "session_id": session},
        "prompt_number": turn,
        "request": request,
        "completed": format!("done: {request}"),
        "created_at": format!("2026-11-02T10:0{turn}:00Z"),
    })
    .to_string()
}

#[test]
fn show_of_a_turn_summary_lists_its_session_as_the_index_line_does() {
    let env = Env::new();
    import(
        &env,
        &[
            summary("s-long", 1, "add the cart endpoint"),
            summary("s-long", 2, "fix the price rounding"),
            summary("s-long", 3, "write the checkout tests"),
            summary("s-short", 1, "rename the config key"),
        ],
    );
    let ids = |request: &str| -> String {
        let (_, out, err) = run(
            &env,
            &["search", "--all", "--json", "-t", "summary", request],
        );
        let v: Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out} {err}"));
        v["hits"][0]["ref"].as_str().expect("a hit").to_owned()
    };
    let last = ids("checkout tests");
    let (code, out, err) = run(&env, &["show", &last]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("Its session, 3 turns summarized"), "{out}");
    assert!(out.contains("add the cart endpoint"), "{out}");
    let this = out
        .lines()
        .find(|l| l.contains("(this one)"))
        .expect("the shown turn is marked");
    assert!(this.contains(&last) && this.contains("checkout"), "{out}");

    // A lone turn is just itself; old ids keep working as they were.
    let lone = ids("rename config");
    let (code, out, _) = run(&env, &["show", &lone]);
    assert_eq!(code, 0);
    assert!(
        out.contains("rename the config key") && !out.contains("Its session"),
        "{out}"
    );
}

#[test]
fn host_notifications_show_as_what_they_are_in_show_and_search() {
    let env = Env::new();
    let text = "<task-notification>\n<task-id>b49d</task-id>\n<status>failed</status>\n\
                <summary>Background command \"Rebase the branch\" failed with exit code 1</summary>\n\
                </task-notification>\nRead the output file to retrieve the result: /tmp/t/b49d.output";
    let prompt = serde_json::json!({
        "kind": "prompt",
        "uid": "p-host-1",
        "session": {"platform": "claude-code", "session_id": "s-bg"},
        "prompt_number": 2,
        "origin": "system",
        "text": text,
        "created_at": "2026-11-02T10:00:00Z",
    });
    let work = serde_json::json!({
        "kind": "observation",
        "uid": "o-host-1",
        "project": env.dir.path().join("bg-project"),
        "session": {"platform": "claude-code", "session_id": "s-bg"},
        "prompt_number": 2,
        "type": "discovery",
        "title": "Read the failed task's output",
        "created_at": "2026-11-02T10:01:00Z",
    });
    import(&env, &[prompt.to_string(), work.to_string()]);
    // The observation's record says what its turn's prompt is (the viewer's
    // detail shows that), and keeps the stored text whole.
    let (code, json, err) = run(&env, &["search", "--all", "--json", "failed", "output"]);
    assert_eq!(code, 0, "{err}");
    let v: Value = serde_json::from_str(&json).unwrap();
    let obs = v["hits"]
        .as_array()
        .unwrap()
        .iter()
        .find(|h| h["kind"] == "observation")
        .map(|h| h["ref"].as_str().unwrap().to_owned())
        .expect("the observation is found");
    let (_, json, _) = run(&env, &["show", "--json", &obs]);
    let v: Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v["records"][0]["prompt"], text, "{json}");
    assert!(
        v["records"][0]["prompt_host_text"]
            .as_str()
            .is_some_and(|t| t.starts_with("background task failed")),
        "{json}"
    );
    let (code, out, err) = run(&env, &["search", "--all", "rebase", "branch"]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("background task failed: Background command \"Rebase the branch\""),
        "{out}"
    );
    assert!(!out.contains("<task-notification>"), "{out}");
    let (_, json, _) = run(&env, &["search", "--all", "--json", "rebase"]);
    let v: Value = serde_json::from_str(&json).unwrap();
    let id = v["hits"][0]["ref"].as_str().unwrap().to_owned();
    let (code, out, err) = run(&env, &["show", &id]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("Written by the host"), "{out}");
    assert!(!out.contains("<task-id>"), "{out}");
    let (_, json, _) = run(&env, &["show", "--json", &id]);
    let v: Value = serde_json::from_str(&json).unwrap();
    assert_eq!(
        v["records"][0]["text"], text,
        "the stored text is kept whole"
    );
    assert!(
        v["records"][0]["host_text"]
            .as_str()
            .unwrap()
            .starts_with("background task failed")
    );
}

#[test]
fn tool_calls_the_user_refused_leave_nothing_in_memory() {
    // A real transcript: one prompt, and the user refuses both tool calls.
    let env = Env::new();
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../mnemo-transcript/tests/fixtures/spotter/short.jsonl");
    let dir = env.dir.path().join("claude/projects/-home-u-spotter");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::copy(&fixture, dir.join("short.jsonl")).unwrap();
    let (code, _, err) = run(&env, &["import", "--transcripts", dir.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    assert!(env.count("SELECT count(*) FROM events WHERE kind != 'turn_end'") >= 2);
    let _worker = Worker::start(&env, |_| {});
    wait_for(
        "the imported turn compressed",
        Duration::from_secs(60),
        || (env.count("SELECT count(*) FROM events WHERE status != 'done'") == 0).then_some(()),
    );
    let titles = env.strings("SELECT title FROM observations");
    assert!(titles.is_empty(), "refused calls became memory: {titles:?}");
}

/// A one-prompt transcript of session `id` in `cwd`, on `branch` if any.
fn transcript(id: &str, cwd: &Path, branch: Option<&str>, prompt: &str) -> String {
    let mut line = serde_json::json!({
        "type": "user", "uuid": format!("u-{id}"), "sessionId": id,
        "cwd": cwd, "timestamp": "2026-03-01T10:00:00Z",
        "message": {"role": "user", "content": prompt},
    });
    if let Some(b) = branch {
        line["gitBranch"] = serde_json::json!(b);
    }
    line.to_string() + "\n"
}

#[test]
fn history_of_a_removed_worktree_joins_its_repository() {
    let env = Env::new();
    let repo = env.dir.path().join("src/shop");
    std::fs::create_dir_all(repo.join(".git")).unwrap();
    let repo = repo.canonicalize().unwrap();
    let gone = repo.join(".worktrees/fix-prices");
    let sibling_gone = repo.parent().unwrap().join("shop-worktrees/shop-cart");
    let not_git = repo.parent().unwrap().join("notes-worktrees/a");
    let dir = env.dir.path().join("claude/projects/-src-shop");
    std::fs::create_dir_all(&dir).unwrap();
    for (id, cwd, branch) in [
        ("s-main", repo.as_path(), Some("main")),
        ("s-wt", gone.as_path(), Some("fix-prices")),
        ("s-sib", sibling_gone.as_path(), Some("cart")),
        ("s-plain", not_git.as_path(), None),
    ] {
        let text = transcript(id, cwd, branch, &format!("work of {id}"));
        std::fs::write(dir.join(format!("{id}.jsonl")), text).unwrap();
    }
    let (code, _, err) = run(&env, &["import", "--transcripts", dir.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    let project_of = |sid: &str| -> String {
        env.db()
            .query_row(
                "SELECT p.root FROM sessions s JOIN projects p ON p.id = s.project_id
                 WHERE s.platform_session_id = ?1",
                [sid],
                |r| r.get(0),
            )
            .unwrap()
    };
    let root = repo.display().to_string();
    assert_eq!(project_of("s-main"), root);
    assert_eq!(project_of("s-wt"), root);
    assert_eq!(project_of("s-sib"), root);
    // Without a branch the transcript does not show a git checkout.
    assert_eq!(project_of("s-plain"), not_git.display().to_string());
}

#[test]
fn uninstall_stops_the_worker_leaves_no_backup_and_says_what_it_kept() {
    let env = Env::new();
    let settings = env.home().join(".claude/settings.json");
    std::fs::create_dir_all(settings.parent().unwrap()).unwrap();
    let before = "{\n  \"model\": \"opus\"\n}\n";
    std::fs::write(&settings, before).unwrap();
    let (code, _, err) = run(
        &env,
        &["install", "--platform", "claude-code", "--no-import"],
    );
    assert_eq!(code, 0, "{err}");
    let mut worker = Worker::start(&env, |_| {});

    let (code, out, err) = run(&env, &["uninstall"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(std::fs::read_to_string(&settings).unwrap(), before);
    let left: Vec<_> = std::fs::read_dir(settings.parent().unwrap())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".mnemo.bak"))
        .collect();
    assert!(left.is_empty(), "backups left: {left:?}\n{out}");
    assert!(out.contains("worker stopped"), "{out}");
    assert!(worker.wait_exit(Duration::from_secs(10)).is_some(), "{out}");
    let data = env.data().display().to_string();
    assert!(out.contains(&format!("rm -rf {data}")), "{out}");
    assert!(out.contains("binary:"), "{out}");
    assert!(env.db_path().exists(), "the memory is kept");
}
