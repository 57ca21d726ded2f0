//! The user-facing commands: install / uninstall, doctor, export / import.

mod common;

use common::*;
use serde_json::Value;

const USER_SETTINGS: &str = r#"{
    // my settings, hand-written
    "model": "opus",
    "permissions": { "allow": ["Bash(git *)"] },
    "hooks": {
        /* prettier after edits */
        "PostToolUse": [
            { "matcher": "Write|Edit", "hooks": [ { "type": "command", "command": "prettier --write" } ] },
        ],
    },
}
"#;

fn settings_path(env: &Env) -> std::path::PathBuf {
    env.home().join(".claude/settings.json")
}

fn run(env: &Env, args: &[&str]) -> (i32, String, String) {
    let out = env.mnemo().args(args).output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn install_merges_keeps_comments_and_is_idempotent_and_uninstall_restores() {
    let env = Env::new();
    std::fs::create_dir_all(env.home().join(".claude")).unwrap();
    std::fs::write(settings_path(&env), USER_SETTINGS).unwrap();

    let (code, stdout, stderr) = run(&env, &["install", "--dry-run"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("dry run"), "{stdout}");
    assert!(stdout.contains("+ SessionStart"), "{stdout}");
    assert_eq!(
        std::fs::read_to_string(settings_path(&env)).unwrap(),
        USER_SETTINGS
    );

    let (code, stdout, stderr) = run(&env, &["install"]);
    assert_eq!(code, 0, "{stderr}");
    let installed = std::fs::read_to_string(settings_path(&env)).unwrap();
    for kept in [
        "// my settings, hand-written",
        "/* prettier after edits */",
        "prettier --write",
        "Bash(git *)",
    ] {
        assert!(installed.contains(kept), "{kept} kept:\n{installed}");
    }
    let parsed: Value = jsonc_value(&installed);
    let binary = std::fs::canonicalize(MNEMO).unwrap();
    for event in [
        "SessionStart",
        "UserPromptSubmit",
        "PreToolUse",
        "PostToolUse",
        "PostToolUseFailure",
        "Stop",
        "SessionEnd",
    ] {
        let groups = parsed["hooks"][event]
            .as_array()
            .unwrap_or_else(|| panic!("{event}"));
        let ours: Vec<&Value> = groups
            .iter()
            .flat_map(|g| g["hooks"].as_array().unwrap())
            .filter(|h| {
                h["command"]
                    .as_str()
                    .unwrap()
                    .contains(" hook claude-code ")
            })
            .collect();
        assert_eq!(ours.len(), 1, "{event}");
        assert_eq!(
            ours[0]["command"],
            format!("{} hook claude-code {event}", binary.display()),
        );
        assert!(ours[0]["timeout"].as_u64().unwrap() > 0);
    }
    assert!(stdout.contains("backup:"), "{stdout}");
    assert_eq!(
        std::fs::read_to_string(env.home().join(".claude/settings.json.mnemo.bak")).unwrap(),
        USER_SETTINGS
    );
    assert!(env.db_path().exists(), "install prepares the database");

    let (code, stdout, _) = run(&env, &["install"]);
    assert_eq!(code, 0);
    assert!(stdout.contains("Already installed"), "{stdout}");
    assert_eq!(
        std::fs::read_to_string(settings_path(&env)).unwrap(),
        installed
    );

    let (code, stdout, stderr) = run(&env, &["uninstall"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("- PostToolUse"), "{stdout}");
    assert_eq!(
        std::fs::read_to_string(settings_path(&env)).unwrap(),
        USER_SETTINGS
    );
}

fn jsonc_value(text: &str) -> Value {
    // The test reads JSONC the simple way: strip comments, then trailing commas.
    let mut out = String::new();
    let mut chars = text.chars().peekable();
    let mut in_string = false;
    while let Some(c) = chars.next() {
        if in_string {
            out.push(c);
            if c == '\\' {
                out.extend(chars.next());
            } else if c == '"' {
                in_string = false;
            }
            continue;
        }
        match (c, chars.peek()) {
            ('"', _) => {
                in_string = true;
                out.push(c);
            }
            ('/', Some('/')) => {
                for c in chars.by_ref() {
                    if c == '\n' {
                        break;
                    }
                }
            }
            ('/', Some('*')) => {
                chars.next();
                let mut prev = ' ';
                for c in chars.by_ref() {
                    if prev == '*' && c == '/' {
                        break;
                    }
                    prev = c;
                }
            }
            _ => out.push(c),
        }
    }
    let mut cleaned = String::new();
    let bytes: Vec<char> = out.chars().collect();
    for (i, c) in bytes.iter().enumerate() {
        if *c == ',' {
            let next = bytes[i + 1..].iter().find(|c| !c.is_whitespace());
            if matches!(next, Some('}') | Some(']')) {
                continue;
            }
        }
        cleaned.push(*c);
    }
    serde_json::from_str(&cleaned).unwrap_or_else(|e| panic!("{e}: {cleaned}"))
}

#[test]
fn install_refuses_a_broken_settings_file_and_names_the_line() {
    let env = Env::new();
    std::fs::create_dir_all(env.home().join(".claude")).unwrap();
    let broken = "{\n  \"model\": \"opus\"\n  \"hooks\": {}\n}\n";
    std::fs::write(settings_path(&env), broken).unwrap();
    let (code, _, stderr) = run(&env, &["install"]);
    assert_eq!(code, 1);
    let path = settings_path(&env);
    assert!(
        stderr.contains(&format!("{}:2:", path.display())),
        "{stderr}"
    );
    assert!(stderr.contains("mnemo left it untouched"), "{stderr}");
    assert_eq!(std::fs::read_to_string(&path).unwrap(), broken);
    assert!(!env.home().join(".claude/settings.json.mnemo.bak").exists());
}

#[test]
fn project_scope_writes_the_project_settings() {
    let env = Env::new();
    let project = env.dir.path().join("proj");
    std::fs::create_dir_all(&project).unwrap();
    let (code, stdout, stderr) = run(
        &env,
        &[
            "install",
            "--scope",
            "project",
            "--project-dir",
            project.to_str().unwrap(),
        ],
    );
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("project scope"));
    let text = std::fs::read_to_string(project.join(".claude/settings.json")).unwrap();
    let v: Value = serde_json::from_str(&text).unwrap();
    assert!(v["hooks"]["Stop"].is_array());
    assert!(!settings_path(&env).exists());
    let (code, _, _) = run(
        &env,
        &[
            "uninstall",
            "--scope",
            "project",
            "--project-dir",
            project.to_str().unwrap(),
        ],
    );
    assert_eq!(code, 0);
    // The file and the directory held nothing else: both are gone.
    assert!(!project.join(".claude").exists());
}

#[test]
fn doctor_says_what_is_wrong_and_how_to_fix_it() {
    let env = Env::new();
    let (code, stdout, _) = run(&env, &["doctor"]);
    assert_eq!(code, 2, "{stdout}");
    assert!(stdout.contains("mnemo is not installed"), "{stdout}");
    assert!(stdout.contains("fix: mnemo install"), "{stdout}");

    let (code, _, _) = run(&env, &["install"]);
    assert_eq!(code, 0);
    let (code, stdout, _) = run(&env, &["doctor", "--json"]);
    assert_eq!(code, 0, "{stdout}");
    let report: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(report["ok"], true);
    let names: Vec<&str> = report["checks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    for name in ["binary", "data dir", "config", "database", "spool", "hooks"] {
        assert!(names.contains(&name), "{name} in {names:?}");
    }

    // Hooks that run another binary are reported.
    let settings = std::fs::read_to_string(settings_path(&env)).unwrap();
    let binary = std::fs::canonicalize(MNEMO).unwrap();
    std::fs::write(
        settings_path(&env),
        settings.replace(&binary.display().to_string(), "/opt/old/mnemo"),
    )
    .unwrap();
    let (code, stdout, _) = run(&env, &["doctor"]);
    assert_eq!(code, 2);
    assert!(
        stdout.contains("hooks run /opt/old/mnemo, which is not this binary"),
        "{stdout}"
    );

    // A broken config file is an error with its line.
    std::fs::write(
        env.data().join("config.toml"),
        "[store]\nbusy_timeout_ms = \"x\"\n",
    )
    .unwrap();
    let (_, stdout, _) = run(&env, &["doctor"]);
    assert!(
        stdout.contains("store.busy_timeout_ms should be a whole number"),
        "{stdout}"
    );
}

#[test]
fn export_then_import_into_another_data_dir_round_trips() {
    let env = Env::new();
    let proj = env.dir.path().join("shop");
    std::fs::create_dir_all(&proj).unwrap();
    for (event, file) in [
        ("SessionStart", "SessionStart.json"),
        ("UserPromptSubmit", "UserPromptSubmit.json"),
        ("PostToolUse", "PostToolUse.Edit.json"),
        ("Stop", "Stop.json"),
    ] {
        assert_hook_ok(&env.hook(event, &fixture_for(file, &proj, "sess")));
    }
    let export = env.mnemo().arg("export").output().unwrap();
    assert!(export.status.success());
    let text = String::from_utf8(export.stdout).unwrap();
    let kinds: Vec<String> = text
        .lines()
        .map(|l| {
            serde_json::from_str::<Value>(l).unwrap()["kind"]
                .as_str()
                .unwrap()
                .to_owned()
        })
        .collect();
    assert_eq!(kinds, ["project", "session", "prompt", "event", "event"]);
    assert!(text.contains(r#""status":"pending""#));

    let other = Env::new();
    let file = other.dir.path().join("dump.jsonl");
    std::fs::write(&file, &text).unwrap();
    // Observations in the documented import format come along too.
    std::fs::write(
        &file,
        format!(
            "{text}{}\n",
            serde_json::json!({"kind": "observation", "project": proj, "type": "decision",
                "title": "Passwords are hashed", "subtitle": "auth", "narrative": "We hash.",
                "facts": ["check_hash()"], "concepts": ["security"], "files_read": [],
                "files_modified": ["auth.py"], "created_at": "2026-11-20T09:30:00Z"})
        ),
    )
    .unwrap();
    let (code, stdout, stderr) = run(&other, &["import", file.to_str().unwrap()]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("imported 6 records"), "{stdout}");
    let (code, stdout, _) = run(&other, &["import", file.to_str().unwrap()]);
    assert_eq!(code, 0);
    assert!(
        stdout.contains("imported 0 records") && stdout.contains("6 already present"),
        "{stdout}"
    );

    let again = other.mnemo().arg("export").output().unwrap();
    let again = String::from_utf8(again.stdout).unwrap();
    assert!(again.starts_with(&text), "same records, same order");
    assert!(again.contains("Passwords are hashed"));

    std::fs::write(&file, "{\"kind\":\"observation\"}\nnonsense\n").unwrap();
    let (code, _, stderr) = run(&other, &["import", file.to_str().unwrap()]);
    assert_eq!(code, 1);
    assert!(
        stderr.contains(":1: missing or empty string field `title`"),
        "{stderr}"
    );
    assert!(stderr.contains(":2: not JSON"), "{stderr}");
}

#[test]
fn doctor_finds_a_search_index_out_of_step_and_rebuilds_it() {
    let env = Env::new();
    let file = env.dir.path().join("obs.jsonl");
    let lines: String = (0..3)
        .map(|i| {
            format!(
                "{}\n",
                serde_json::json!({"kind": "observation", "project": env.dir.path(),
                    "type": "discovery", "title": format!("Finding number {i}"),
                    "created_at": "2026-11-20T09:30:00Z"})
            )
        })
        .collect();
    std::fs::write(&file, lines).unwrap();
    let (code, _, stderr) = run(&env, &["import", file.to_str().unwrap()]);
    assert_eq!(code, 0, "{stderr}");

    // Another tool deletes a row behind the index's back.
    let conn = rusqlite::Connection::open(env.db_path()).unwrap();
    conn.execute(
        "DELETE FROM observations WHERE title = 'Finding number 1'",
        [],
    )
    .unwrap();
    drop(conn);

    let (_, stdout, _) = run(&env, &["doctor"]);
    assert!(
        stdout.contains("search index out of step: observations_fts"),
        "{stdout}"
    );
    assert!(stdout.contains("mnemo doctor --fix"), "{stdout}");
    let (_, stdout, _) = run(&env, &["doctor", "--fix"]);
    assert!(stdout.contains("rebuilt the search indexes"), "{stdout}");
    let (_, stdout, _) = run(&env, &["doctor"]);
    assert!(!stdout.contains("out of step"), "{stdout}");
}
