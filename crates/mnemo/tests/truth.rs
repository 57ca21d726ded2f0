//! Every message is right (issue 9): doctor's verdict and exit code, installs
//! that half-succeed or are committed by a team, accurate words in capture,
//! robust CLI plumbing and hosts that say what they do not support. All
//! through the real binary.

mod common;
#[path = "common/worker.rs"]
mod worker_support;

use std::io::Read;
use std::process::Stdio;

use common::*;
use serde_json::{Value, json};

fn run(env: &Env, args: &[&str]) -> (i32, String, String) {
    let out = env.mnemo().args(args).output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn installed() -> Env {
    let env = Env::new();
    let (code, out, err) = run(&env, &["install"]);
    assert_eq!(code, 0, "{out}{err}");
    env
}

fn doctor_json(env: &Env) -> (i32, Value) {
    let (code, out, err) = run(env, &["doctor", "--json"]);
    (
        code,
        serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}{err}")),
    )
}

// ---- doctor ----

#[test]
fn doctor_verdict_and_exit_code_follow_the_worst_check() {
    let env = Env::new();
    // Not installed: a failure.
    let (code, out, _) = run(&env, &["doctor"]);
    assert_eq!(code, 2, "{out}");
    assert!(!out.contains("All good"), "{out}");
    let env = installed();
    let (code, out, _) = run(&env, &["doctor"]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("All good"), "{out}");
    // An unknown key is a warning: no "All good." over it, exit 1.
    std::fs::write(env.data().join("config.toml"), "[store]\nbogus = 1\n").unwrap();
    let (code, out, _) = run(&env, &["doctor"]);
    assert!(out.contains("[warn]"), "{out}");
    assert!(!out.contains("All good"), "{out}");
    assert_eq!(code, 1, "{out}");
    let (code, report) = doctor_json(&env);
    assert_eq!(code, 1);
    assert_eq!(report["verdict"], "warn", "{report}");
    assert_eq!(report["ok"], false, "{report}");
}

#[test]
fn doctor_help_documents_the_exit_codes() {
    let env = Env::new();
    let (_, out, _) = run(&env, &["doctor", "--help"]);
    assert!(out.contains("0") && out.contains("1") && out.contains("2"));
    assert!(out.to_lowercase().contains("exit"), "{out}");
}

#[test]
fn doctor_says_when_mnemo_disabled_is_set() {
    let env = installed();
    let out = env
        .mnemo()
        .args(["doctor"])
        .env("MNEMO_DISABLED", "1")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("MNEMO_DISABLED"), "{text}");
    assert_eq!(out.status.code(), Some(1), "{text}");
}

#[test]
fn doctor_checks_the_provider_key_without_a_worker() {
    let env = installed();
    std::fs::write(
        env.data().join("config.toml"),
        "[provider]\nname = \"anthropic\"\n",
    )
    .unwrap();
    let out = env
        .mnemo()
        .args(["doctor"])
        .env_remove("ANTHROPIC_API_KEY")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("ANTHROPIC_API_KEY"), "{text}");
    assert_eq!(out.status.code(), Some(1), "{text}");

    std::fs::write(
        env.data().join("config.toml"),
        "[provider]\nname = \"claude-cli\"\nclaude_path = \"/nonexistent/claude\"\n",
    )
    .unwrap();
    let (code, text, _) = run(&env, &["doctor"]);
    assert!(text.contains("/nonexistent/claude"), "{text}");
    assert_eq!(code, 1, "{text}");
}

#[test]
fn doctor_reports_only_current_hook_log_problems() {
    let env = installed();
    let log = env.data().join("logs/hook.log");
    std::fs::create_dir_all(log.parent().unwrap()).unwrap();
    write_log(
        &log,
        "2020-01-01T00:00:00.000Z ERROR claude-code Stop session=a: cannot open the database: stale\n",
    );
    let (code, out, _) = run(&env, &["doctor"]);
    assert!(!out.contains("stale"), "{out}");
    assert_eq!(code, 0, "{out}");
}

#[test]
fn doctor_forgets_hook_errors_that_a_later_capture_proved_past() {
    let env = installed();
    let log = env.data().join("logs/hook.log");
    std::fs::create_dir_all(log.parent().unwrap()).unwrap();
    let at =
        |offset_ms: i64| mnemo_core::time::format_rfc3339(mnemo_core::time::now_ms() + offset_ms);
    write_log(
        &log,
        format!(
            "{} ERROR claude-code Stop session=a: database is locked: earlier\n",
            at(-600_000)
        ),
    );
    let (_, out, _) = run(&env, &["doctor"]);
    assert!(out.contains("earlier"), "no capture since: current: {out}");

    assert_hook_ok(&env.hook("PostToolUse", &fixture("PostToolUse.Write.json")));
    let (code, out, _) = run(&env, &["doctor"]);
    assert!(!out.contains("earlier"), "{out}");
    assert_eq!(code, 0, "{out}");

    let mut text = std::fs::read_to_string(&log).unwrap();
    text.push_str(&format!(
        "{} ERROR claude-code Stop session=a: database is locked: later\n",
        at(60_000)
    ));
    write_log(&log, text);
    let (code, out, _) = run(&env, &["doctor"]);
    assert!(out.contains("later"), "{out}");
    assert_eq!(code, 1, "{out}");
}

#[test]
fn doctor_names_the_data_directory_once() {
    let env = installed();
    let (_, out, _) = run(&env, &["doctor"]);
    let root = env.data().display().to_string();
    assert_eq!(out.matches(&root).count(), 1, "{out}");
}

// ---- install ----

#[test]
fn install_that_half_succeeds_says_what_is_in_and_exits_non_zero() {
    let env = Env::new();
    std::fs::write(env.home().join(".claude.json"), "{ broken").unwrap();
    let (code, out, err) = run(&env, &["install"]);
    let all = format!("{out}{err}");
    assert_ne!(code, 0, "{all}");
    assert!(env.home().join(".claude/settings.json").exists());
    assert!(all.contains("hooks: installed"), "{all}");
    assert!(all.contains("MCP server: not registered"), "{all}");
    assert!(all.contains("mnemo install"), "{all}");
}

#[test]
fn a_dry_run_and_an_uninstall_say_when_the_mcp_file_is_broken() {
    let env = installed();
    std::fs::write(env.home().join(".claude.json"), "{ broken").unwrap();
    let (code, out, err) = run(&env, &["install", "--dry-run"]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(err.contains("MCP registration would fail"), "{err}");

    let (code, out, err) = run(&env, &["uninstall"]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(out.contains("hooks: removed"), "{out}");
    assert!(out.contains("MCP server: still registered"), "{out}");
    assert!(err.contains("mnemo uninstall"), "{err}");
}

#[test]
fn project_scope_install_is_fit_to_commit_and_uninstall_leaves_nothing() {
    let env = Env::new();
    let project = env.dir.path().join("proj");
    std::fs::create_dir_all(&project).unwrap();
    let dir = project.to_str().unwrap();
    let (code, out, err) = run(
        &env,
        &["install", "--scope", "project", "--project-dir", dir],
    );
    assert_eq!(code, 0, "{out}{err}");
    let text = std::fs::read_to_string(project.join(".claude/settings.json")).unwrap();
    let v: Value = serde_json::from_str(&text).unwrap();
    let command = v["hooks"]["Stop"][0]["hooks"][0]["command"]
        .as_str()
        .unwrap();
    assert_eq!(command, "mnemo hook claude-code Stop");
    // Installing again over the existing file leaves no backup in the work tree.
    std::fs::write(
        project.join(".claude/settings.json"),
        text.replace(
            "mnemo hook claude-code Stop",
            "/old/mnemo hook claude-code Stop",
        ),
    )
    .unwrap();
    let (code, _, _) = run(
        &env,
        &["install", "--scope", "project", "--project-dir", dir],
    );
    assert_eq!(code, 0);
    let names: Vec<String> = std::fs::read_dir(project.join(".claude"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, ["settings.json"], "{names:?}");

    let (code, _, _) = run(
        &env,
        &["uninstall", "--scope", "project", "--project-dir", dir],
    );
    assert_eq!(code, 0);
    assert!(!project.join(".claude").exists());
}

#[test]
fn project_uninstall_keeps_a_settings_file_with_other_content() {
    let env = Env::new();
    let project = env.dir.path().join("proj");
    std::fs::create_dir_all(project.join(".claude")).unwrap();
    std::fs::write(
        project.join(".claude/settings.json"),
        "{\n  \"model\": \"opus\"\n}\n",
    )
    .unwrap();
    let dir = project.to_str().unwrap();
    run(
        &env,
        &["install", "--scope", "project", "--project-dir", dir],
    );
    run(
        &env,
        &["uninstall", "--scope", "project", "--project-dir", dir],
    );
    assert_eq!(
        std::fs::read_to_string(project.join(".claude/settings.json")).unwrap(),
        "{\n  \"model\": \"opus\"\n}\n"
    );
}

// ---- accurate words ----

#[test]
fn a_write_that_changes_nothing_is_not_a_modification() {
    let env = Env::new();
    let content = "def login(user, pw):\n    return user == 'admin'\n";
    let mut payload: Value = serde_json::from_str(&fixture("PostToolUse.Write.json")).unwrap();
    payload["tool_response"]["type"] = json!("update");
    payload["tool_response"]["originalFile"] = json!(content);
    assert_hook_ok(&env.hook("PostToolUse", &payload.to_string()));
    let (modified, priority): (String, i64) = env
        .db()
        .query_row("SELECT files_modified, priority FROM events", [], |r| {
            Ok((r.get(0)?, r.get(1)?))
        })
        .unwrap();
    assert_eq!(modified, "[]");
    assert_ne!(
        priority, 0,
        "no mutation priority for a write that changed nothing"
    );

    // A real change still is one.
    payload["tool_response"]["originalFile"] = json!("old\n");
    payload["tool_use_id"] = json!("toolu_other");
    assert_hook_ok(&env.hook("PostToolUse", &payload.to_string()));
    assert_eq!(
        env.count("SELECT count(*) FROM events WHERE files_modified != '[]' AND priority = 0"),
        1
    );
}

// ---- CLI plumbing ----

#[test]
fn a_bad_config_value_does_not_stop_read_commands() {
    let env = installed();
    std::fs::write(
        env.data().join("config.toml"),
        "[store]\nbusy_timeout_ms = \"x\"\n",
    )
    .unwrap();
    for args in [
        &["stats"][..],
        &["search", "anything"],
        &["export"],
        &["context"],
    ] {
        let (code, out, err) = run(&env, args);
        assert_eq!(code, 0, "{args:?}: {out}{err}");
        assert_eq!(
            err.matches("busy_timeout_ms").count(),
            1,
            "{args:?} warns once: {err}"
        );
    }
}

#[test]
fn a_closed_pipe_ends_quietly() {
    let env = installed();
    assert_hook_ok(&env.hook("PostToolUse", &fixture("PostToolUse.Write.json")));
    for args in [
        &["stats"][..],
        &["export"],
        &["doctor"],
        &["--help"],
        &["search", "--all", "login"],
    ] {
        let mut child = env
            .mnemo()
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        drop(child.stdout.take());
        let mut err = String::new();
        child
            .stderr
            .take()
            .unwrap()
            .read_to_string(&mut err)
            .unwrap();
        let status = child.wait().unwrap();
        assert!(!err.contains("Broken pipe"), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{args:?}: {err}");
        assert!(
            status.success() || args == ["doctor"],
            "{args:?}: {status:?} {err}"
        );
    }
}

#[test]
fn help_lists_the_environment_variables() {
    let env = Env::new();
    let (_, out, _) = run(&env, &["--help"]);
    for var in [
        "MNEMO_DATA_DIR",
        "MNEMO_PORT",
        "MNEMO_DISABLED",
        "MNEMO_NO_WORKER",
        "MNEMO_<SECTION>_<KEY>",
    ] {
        assert!(out.contains(var), "{var}: {out}");
    }
}

// ---- hosts ----

#[test]
fn an_unknown_host_says_so_and_doctor_counts_what_was_ignored() {
    let env = installed();
    let (_, out, _) = run(&env, &["hook", "--help"]);
    for host in [
        "claude-code",
        "codex",
        "gemini",
        "cursor",
        "opencode",
        "raw",
    ] {
        assert!(out.contains(host), "{host} missing from: {out}");
    }

    // A host mnemo has no row for: exit 0, the empty answer, and the
    // accepted names on stderr.
    let payload = fixture("PostToolUse.Write.json");
    let mut c = env.mnemo();
    c.args(["hook", "windsurf", "PostToolUse"]);
    let o = run_with_stdin(c, payload.as_bytes());
    assert_eq!(o.status.code(), Some(0));
    assert_eq!(String::from_utf8_lossy(&o.stdout).trim(), "{}");
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("unknown platform `windsurf`"), "{err}");
    assert!(err.contains("opencode"), "{err}");

    // An event the adapter does not know is counted.
    assert_hook_ok(&env.hook(
        "Notification",
        r#"{"session_id":"s1","hook_event_name":"Notification","message":"hi"}"#,
    ));
    let (_, out, _) = run(&env, &["doctor"]);
    assert!(out.contains("ignored"), "{out}");
    assert!(out.contains("Notification"), "{out}");
}

// ---- the worker ----

#[test]
fn the_worker_logs_to_stderr_when_it_is_not_a_terminal() {
    let env = Env::new();
    let mut w = worker_support::Worker::start(&env, |_| {});
    w.signal(libc::SIGTERM);
    w.wait_exit(std::time::Duration::from_secs(20));
    let mut err = String::new();
    w.child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    assert!(err.contains("listening on 127.0.0.1"), "{err}");
}

#[test]
fn a_worker_whose_default_port_is_taken_listens_on_another() {
    // Held here, or by someone else: either way the default port is taken.
    let _holder = std::net::TcpListener::bind(("127.0.0.1", 38377));
    let env = Env::new();
    let w = worker_support::Worker::start(&env, |c| {
        c.env_remove("MNEMO_WORKER_PORT");
    });
    assert_ne!(w.port, 38377);
    assert_eq!(w.get("/api/health").0, 200);
}

/// Writes a hook log as mnemo keeps it: readable by its owner only.
fn write_log(path: &std::path::Path, text: impl AsRef<[u8]>) {
    std::fs::write(path, text).unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600)).unwrap();
    }
}
