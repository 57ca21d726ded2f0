//! `mnemo install` respects the user's intent: a settings file they made
//! read-only is not rewritten, and a change another program makes while
//! install runs is kept. The real binary, real files.

mod common;

use std::path::PathBuf;
use std::time::{Duration, Instant};

use common::*;

fn settings(env: &Env) -> PathBuf {
    env.home().join(".claude/settings.json")
}

#[cfg(unix)]
#[test]
fn a_read_only_settings_file_is_not_rewritten_and_install_says_what_to_do() {
    use std::os::unix::fs::PermissionsExt;
    let env = Env::new();
    let path = settings(&env);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    let original = "{\n  // locked by me\n  \"model\": \"opus\"\n}\n";
    std::fs::write(&path, original).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o444)).unwrap();

    let out = env
        .mnemo()
        .args(["install", "--no-import"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_ne!(out.status.code(), Some(0), "{stderr}");
    assert!(stderr.contains("is read-only (mode 444)"), "{stderr}");
    assert!(stderr.contains("chmod u+w"), "{stderr}");
    assert_eq!(std::fs::read_to_string(&path).unwrap(), original);
    let names: Vec<String> = std::fs::read_dir(path.parent().unwrap())
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, ["settings.json"], "no backup, no temp file");
    assert!(
        !env.home().join(".claude.json").exists(),
        "nothing else was changed either"
    );
}

#[cfg(unix)]
#[test]
fn a_settings_file_install_creates_is_private() {
    use std::os::unix::fs::PermissionsExt;
    let env = Env::new();
    let out = env
        .mnemo()
        .args(["install", "--no-import"])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for path in [settings(&env), env.home().join(".claude.json")] {
        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600, "{}", path.display());
    }
}

/// Another program writes the settings file between install's read and its
/// rename (the window widened by the test-only pause): its change survives,
/// and so do our hooks.
#[test]
fn a_concurrent_change_to_the_settings_file_is_not_lost() {
    let env = Env::new();
    let path = settings(&env);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(&path, "{\n  \"model\": \"opus\"\n}\n").unwrap();

    let install = env
        .mnemo()
        .args(["install", "--no-import"])
        .env("MNEMO_TEST_PAUSE_BEFORE_RENAME_MS", "600")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // The temp file appears once install has read and planned its edit.
    let dir = path.parent().unwrap().to_owned();
    let deadline = Instant::now() + Duration::from_secs(20);
    while !std::fs::read_dir(&dir).unwrap().flatten().any(|e| {
        e.file_name()
            .to_string_lossy()
            .starts_with(".settings.json.mnemo-tmp")
    }) {
        assert!(
            Instant::now() < deadline,
            "install never wrote its temp file"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    std::fs::write(
        &path,
        "{\n  \"model\": \"opus\",\n  \"theme\": \"dark\" // written meanwhile\n}\n",
    )
    .unwrap();
    let out = install.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout.contains("changed while mnemo was writing it"),
        "{stdout}"
    );
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.contains("\"theme\": \"dark\""), "{text}");
    assert!(text.contains("// written meanwhile"), "{text}");
    assert!(text.contains("hook claude-code PostToolUse"), "{text}");
}
