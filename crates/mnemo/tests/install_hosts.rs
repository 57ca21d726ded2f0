//! `mnemo install` / `uninstall` / `doctor` across hosts: Codex's files
//! (`$CODEX_HOME/hooks.json`, `config.toml` edited with its comments kept),
//! the hosts found on the machine, `--platform all` and lists, a stable hook
//! command, and Codex's legacy `notify` through the real binary.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::{Env, MNEMO, run_with_stdin};
use serde_json::Value;

/// A user's Codex config, with comments and a server of their own.
const CONFIG: &str = "# my codex setup\nmodel = \"gpt-5.5\" # the default\n\n[mcp_servers.docs]\ncommand = \"docs-mcp\" # keep me\n";

/// `mnemo` with a PATH holding only `bin` (so that the hosts found are the
/// ones the test put there) and no CODEX_HOME.
fn mnemo(env: &Env, bin: &Path) -> Command {
    let mut c = env.mnemo();
    c.env("PATH", bin).env_remove("CODEX_HOME");
    c
}

fn bin_dir(env: &Env, programs: &[&str]) -> PathBuf {
    let bin = env.dir.path().join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    for program in programs {
        let path = bin.join(program);
        std::fs::write(&path, "#!/bin/sh\nexit 0\n").unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        }
    }
    bin
}

fn out(c: &mut Command) -> (i32, String, String) {
    let o = c.output().unwrap();
    (
        o.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

#[test]
fn codex_install_respects_codex_home_keeps_comments_and_uninstalls_exactly() {
    let env = Env::new();
    let bin = bin_dir(&env, &[]);
    let codex_home = env.dir.path().join("elsewhere/codex");
    std::fs::create_dir_all(&codex_home).unwrap();
    std::fs::write(codex_home.join("config.toml"), CONFIG).unwrap();
    let run = |args: &[&str]| out(mnemo(&env, &bin).env("CODEX_HOME", &codex_home).args(args));

    let (code, stdout, stderr) = run(&["install", "--platform", "codex", "--no-import"]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(
        stdout.contains("mnemo install: Codex CLI, user scope"),
        "{stdout}"
    );
    assert!(
        !env.home().join(".codex").exists(),
        "CODEX_HOME is where Codex's files go"
    );

    let hooks: Value =
        serde_json::from_str(&std::fs::read_to_string(codex_home.join("hooks.json")).unwrap())
            .unwrap();
    let events: Vec<&str> = hooks["hooks"]
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(
        events,
        [
            "PostToolUse",
            "PreToolUse",
            "SessionEnd",
            "SessionStart",
            "Stop",
            "UserPromptSubmit"
        ]
    );
    let command = hooks["hooks"]["Stop"][0]["hooks"][0]["command"]
        .as_str()
        .unwrap();
    assert!(command.ends_with("mnemo hook codex Stop"), "{command}");
    assert_eq!(hooks["hooks"]["Stop"][0]["hooks"][0]["timeout"], 10);

    let config = std::fs::read_to_string(codex_home.join("config.toml")).unwrap();
    assert!(
        config.starts_with(CONFIG),
        "the user's lines stay as they were:\n{config}"
    );
    let parsed: toml::Table = toml::from_str(&config).unwrap();
    assert_eq!(
        parsed["mcp_servers"]["mnemo"]["args"][0].as_str(),
        Some("mcp")
    );
    assert_eq!(
        parsed["mcp_servers"]["docs"]["command"].as_str(),
        Some("docs-mcp")
    );

    let (code, stdout, _) = run(&["install", "--platform", "codex", "--no-import"]);
    assert_eq!(code, 0);
    assert!(stdout.contains("Already installed"), "{stdout}");

    let (code, stdout, _) = run(&["doctor"]);
    assert!(stdout.contains("codex hooks"), "{stdout}");
    assert!(
        stdout.contains("all 6 events point at this binary"),
        "{stdout}"
    );
    assert!(
        stdout.contains("mcp_servers.mnemo runs this binary"),
        "{stdout}"
    );
    let _ = code;

    let (code, stdout, stderr) = run(&["uninstall", "--platform", "codex"]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert_eq!(
        std::fs::read_to_string(codex_home.join("config.toml")).unwrap(),
        CONFIG,
        "uninstall takes out exactly what install added"
    );
    assert!(!codex_home.join("hooks.json").exists(), "{stdout}");
}

#[test]
fn install_wires_the_hosts_found_on_the_machine() {
    let env = Env::new();
    // Codex on PATH, Claude Code's directory in HOME.
    let bin = bin_dir(&env, &["codex"]);
    std::fs::create_dir_all(env.home().join(".claude")).unwrap();
    let (code, stdout, stderr) = out(mnemo(&env, &bin).args(["install", "--no-import"]));
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(stdout.contains("found Claude Code, Codex CLI"), "{stdout}");
    assert!(env.home().join(".claude/settings.json").exists());
    assert!(env.home().join(".codex/hooks.json").exists());
    assert!(
        stdout.contains("New Claude Code, Codex CLI sessions"),
        "{stdout}"
    );

    // Uninstall with no --platform takes mnemo out of every host it is in.
    let (code, stdout, _) = out(mnemo(&env, &bin).arg("uninstall"));
    assert_eq!(code, 0, "{stdout}");
    assert!(!env.home().join(".codex/hooks.json").exists(), "{stdout}");
    let settings =
        std::fs::read_to_string(env.home().join(".claude/settings.json")).unwrap_or_default();
    assert!(!settings.contains("mnemo hook"), "{settings}");
}

#[test]
fn with_no_host_found_install_wires_claude_code_as_before() {
    let env = Env::new();
    let bin = bin_dir(&env, &[]);
    let (code, stdout, _) = out(mnemo(&env, &bin).args(["install", "--no-import"]));
    assert_eq!(code, 0, "{stdout}");
    assert!(stdout.contains("mnemo install: Claude Code"), "{stdout}");
    assert!(!stdout.contains("Codex"), "{stdout}");
}

#[test]
fn platform_all_a_list_and_a_bad_name() {
    let env = Env::new();
    let bin = bin_dir(&env, &[]);
    let (code, stdout, _) =
        out(mnemo(&env, &bin).args(["install", "--platform", "all", "--dry-run"]));
    assert_eq!(code, 0, "{stdout}");
    assert!(
        stdout.contains("Claude Code") && stdout.contains("Codex CLI"),
        "{stdout}"
    );
    assert!(
        !env.home().join(".codex").exists(),
        "a dry run writes nothing"
    );

    let (code, stdout, _) =
        out(mnemo(&env, &bin).args(["install", "--platform", "codex,claude-code", "--dry-run"]));
    assert_eq!(code, 0);
    assert!(
        stdout.find("Codex CLI").unwrap() < stdout.find("Claude Code").unwrap(),
        "in the order asked: {stdout}"
    );

    let (code, _, stderr) = out(mnemo(&env, &bin).args(["install", "--platform", "vim"]));
    assert_ne!(code, 0);
    assert!(stderr.contains("unknown platform `vim`"), "{stderr}");
    assert!(stderr.contains("claude-code, codex"), "{stderr}");
}

#[test]
fn doctor_says_when_a_host_on_the_machine_is_not_wired() {
    let env = Env::new();
    let bin = bin_dir(&env, &["codex"]);
    let (code, stdout, _) =
        out(mnemo(&env, &bin).args(["install", "--platform", "claude-code", "--no-import"]));
    assert_eq!(code, 0, "{stdout}");
    let (_, stdout, _) = out(mnemo(&env, &bin).args(["doctor", "--json"]));
    let report: Value = serde_json::from_str(&stdout).unwrap();
    let codex = report["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "codex hooks")
        .unwrap_or_else(|| panic!("{stdout}"));
    assert_eq!(codex["status"], "warn", "{codex}");
    assert_eq!(codex["fix"], "mnemo install --platform codex");
}

#[test]
fn the_codex_hook_names_mnemo_as_path_does_so_an_upgrade_keeps_its_trust() {
    let env = Env::new();
    // `mnemo` on PATH is a link to the binary under test (as a package
    // manager's bin directory links into a versioned folder).
    let bin = bin_dir(&env, &[]);
    std::os::unix::fs::symlink(MNEMO, bin.join("mnemo")).unwrap();
    let (code, stdout, _) =
        out(mnemo(&env, &bin).args(["install", "--platform", "codex", "--no-import"]));
    assert_eq!(code, 0, "{stdout}");
    let hooks = std::fs::read_to_string(env.home().join(".codex/hooks.json")).unwrap();
    let linked = bin.join("mnemo").to_string_lossy().into_owned();
    assert!(
        hooks.contains(&format!("{linked} hook codex SessionStart")),
        "the command names the link on PATH, not the file it points to: {hooks}"
    );
    let config = std::fs::read_to_string(env.home().join(".codex/config.toml")).unwrap();
    assert!(
        config.contains(&format!("command = \"{linked}\"")),
        "{config}"
    );
}

#[test]
fn codex_project_scope_writes_the_project_layer_only() {
    let env = Env::new();
    let bin = bin_dir(&env, &[]);
    let project = env.dir.path().join("repo");
    std::fs::create_dir_all(&project).unwrap();
    let (code, stdout, _) = out(mnemo(&env, &bin).args([
        "install",
        "--platform",
        "codex",
        "--scope",
        "project",
        "--no-import",
        "--project-dir",
        project.to_str().unwrap(),
    ]));
    assert_eq!(code, 0, "{stdout}");
    let hooks = std::fs::read_to_string(project.join(".codex/hooks.json")).unwrap();
    assert!(
        hooks.contains("\"mnemo hook codex PostToolUse\""),
        "{hooks}"
    );
    assert!(
        !env.home().join(".codex").exists(),
        "no user files at project scope"
    );
    let (code, _, _) = out(mnemo(&env, &bin).args([
        "uninstall",
        "--platform",
        "codex",
        "--scope",
        "project",
        "--project-dir",
        project.to_str().unwrap(),
    ]));
    assert_eq!(code, 0);
    assert!(!project.join(".codex").exists());
}

#[test]
fn codex_notify_from_argv_ends_the_turn_with_its_prompt_and_answer() {
    let env = Env::new();
    let cwd = env.dir.path().join("proj");
    std::fs::create_dir_all(&cwd).unwrap();
    let start = serde_json::json!({
        "session_id": "thread-1", "cwd": cwd, "hook_event_name": "SessionStart",
        "model": "gpt-5.5", "source": "startup"
    });
    let mut c = env.mnemo();
    c.args(["hook", "codex", "SessionStart"]);
    let o = run_with_stdin(c, start.to_string().as_bytes());
    assert_eq!(o.status.code(), Some(0));

    let notify = serde_json::json!({
        "type": "agent-turn-complete", "thread-id": "thread-1", "turn-id": "turn-1",
        "cwd": cwd, "client": "codex_exec",
        "input-messages": ["rename the ledger module"],
        "last-assistant-message": "Renamed ledger.py to accounts.py."
    });
    let o = env
        .mnemo()
        .args(["hook", "codex", "notify", &notify.to_string()])
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0));
    assert_eq!(String::from_utf8_lossy(&o.stdout).trim(), "{}");
    let rows = env.strings(
        "SELECT s.platform || ' ' || e.kind || ' ' || coalesce(e.platform_prompt_id, '-')
         FROM events e JOIN sessions s ON s.id = e.session_id",
    );
    assert_eq!(rows, ["codex turn_end turn-1"], "{}", env.hook_log());
    let stored = env.strings("SELECT coalesce(response, '') || coalesce(input, '') FROM events");
    assert!(
        stored[0].contains("Renamed ledger.py to accounts.py."),
        "{stored:?}"
    );
    assert!(stored[0].contains("rename the ledger module"), "{stored:?}");
}

/// `program` (a copy of the mnemo binary) run as `env.mnemo()` runs mnemo.
fn copy_of_mnemo(env: &Env, bin: &Path, program: &Path) -> Command {
    let template = mnemo(env, bin);
    let mut c = Command::new(program);
    for (k, v) in template.get_envs() {
        match v {
            Some(v) => c.env(k, v),
            None => c.env_remove(k),
        };
    }
    c
}

/// The Claude Code hook entries whose command runs `hook claude-code`.
fn claude_code_hook_commands(env: &Env) -> Vec<String> {
    let text = std::fs::read_to_string(env.home().join(".claude/settings.json")).unwrap();
    let settings: Value = serde_json::from_str(&text).unwrap();
    let mut out = Vec::new();
    for groups in settings["hooks"].as_object().unwrap().values() {
        for group in groups.as_array().unwrap() {
            for hook in group["hooks"].as_array().unwrap() {
                let command = hook["command"].as_str().unwrap_or_default();
                if command.contains(" hook claude-code ") {
                    out.push(command.to_owned());
                }
            }
        }
    }
    out.sort();
    out
}

#[test]
fn install_is_idempotent_whatever_the_binary_is_called() {
    let env = Env::new();
    let bin = bin_dir(&env, &[]);
    std::fs::create_dir_all(env.home().join(".claude")).unwrap();
    let copies = env.dir.path().join("copies");
    std::fs::create_dir_all(&copies).unwrap();
    let mut first: Option<usize> = None;
    for name in ["agent-memory", "mnemo-1.4.0", "agent-memory"] {
        let program = copies.join(name);
        std::fs::copy(MNEMO, &program).unwrap();
        for _ in 0..2 {
            let (code, stdout, stderr) = out(copy_of_mnemo(&env, &bin, &program).args([
                "install",
                "--platform",
                "claude-code",
                "--no-import",
            ]));
            assert_eq!(code, 0, "{name}: {stdout}{stderr}");
            let commands = claude_code_hook_commands(&env);
            assert!(!commands.is_empty());
            assert!(
                commands.iter().all(|c| c.contains(name)),
                "{name}: {commands:#?}"
            );
            let count = *first.get_or_insert(commands.len());
            assert_eq!(commands.len(), count, "{name}: {commands:#?}");
        }
    }
}

#[test]
fn an_empty_opencode_config_folder_is_not_an_installation_the_program_is() {
    let env = Env::new();
    // What a tool or a test may leave behind: the XDG folders, no program.
    for dir in [
        ".config/opencode",
        ".cache/opencode",
        ".local/share/opencode",
    ] {
        std::fs::create_dir_all(env.home().join(dir)).unwrap();
    }
    let bin = bin_dir(&env, &[]);
    let (_, stdout, stderr) = out(mnemo(&env, &bin).arg("doctor"));
    assert!(
        !stdout.contains("OpenCode is on this machine"),
        "{stdout}{stderr}"
    );
    let bin = bin_dir(&env, &["opencode"]);
    let (_, stdout, stderr) = out(mnemo(&env, &bin).arg("doctor"));
    assert!(
        stdout.contains("OpenCode is on this machine"),
        "{stdout}{stderr}"
    );
}
