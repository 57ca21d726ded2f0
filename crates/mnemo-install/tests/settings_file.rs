//! Reading and atomically replacing settings files.

use std::fs;
use std::path::Path;

use mnemo_install::settings_file::{self, FileError, backup_path, read, write_atomic};
use mnemo_install::{ParseError, ParseErrorKind, plan_install};

/// Names in `dir`, sorted.
fn names(dir: &Path) -> Vec<String> {
    let mut names: Vec<_> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

#[test]
fn read_tells_a_missing_file_from_an_unreadable_one() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("settings.json");
    assert_eq!(read(&path).unwrap(), None);
    fs::write(&path, "{}\n").unwrap();
    assert_eq!(read(&path).unwrap().as_deref(), Some("{}\n"));

    fs::write(&path, b"{\"a\": \"\xff\"}").unwrap();
    let err = read(&path).unwrap_err();
    assert!(matches!(err, FileError::NotUtf8 { .. }));
    let message = err.to_string();
    assert!(
        message.contains(&*path.to_string_lossy()) && message.contains("UTF-8"),
        "{message}"
    );

    // A directory where the file should be.
    let err = read(dir.path()).unwrap_err();
    assert!(matches!(err, FileError::Read { .. }), "{err}");
    assert!(
        err.to_string()
            .starts_with(&format!("cannot read {}", dir.path().display()))
    );
}

#[test]
fn writes_a_new_file_creating_its_directories() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("project/.claude/settings.json");
    let report = write_atomic(&path, "{}\n").unwrap();
    assert_eq!(report.written, path);
    assert_eq!(report.backup, None);
    assert_eq!(fs::read_to_string(&path).unwrap(), "{}\n");
    assert_eq!(names(path.parent().unwrap()), ["settings.json"]);
}

#[test]
fn replaces_a_file_keeping_a_backup_and_no_temp_files() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("settings.json");
    fs::write(&path, "// old\n{}\n").unwrap();
    let report = write_atomic(&path, "{\"new\": true}\n").unwrap();
    assert_eq!(fs::read_to_string(&path).unwrap(), "{\"new\": true}\n");
    let backup = report.backup.unwrap();
    assert_eq!(backup, dir.path().join("settings.json.mnemo.bak"));
    assert_eq!(backup, backup_path(&path));
    assert_eq!(fs::read_to_string(&backup).unwrap(), "// old\n{}\n");
    assert_eq!(
        names(dir.path()),
        ["settings.json", "settings.json.mnemo.bak"]
    );

    // The backup always holds the content just replaced.
    write_atomic(&path, "{}\n").unwrap();
    assert_eq!(fs::read_to_string(&backup).unwrap(), "{\"new\": true}\n");
    assert_eq!(
        names(dir.path()),
        ["settings.json", "settings.json.mnemo.bak"]
    );
}

#[cfg(unix)]
#[test]
fn keeps_permissions_of_the_file_and_gives_them_to_the_backup() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(".claude.json");
    fs::write(&path, "{\"oauthAccount\": {}}").unwrap();
    fs::set_permissions(&path, fs::Permissions::from_mode(0o600)).unwrap();
    let report = write_atomic(&path, "{}").unwrap();
    let mode = |p: &Path| fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&path), 0o600);
    assert_eq!(mode(&report.backup.unwrap()), 0o600);

    fs::set_permissions(&path, fs::Permissions::from_mode(0o640)).unwrap();
    write_atomic(&path, "{ }").unwrap();
    assert_eq!(mode(&path), 0o640);
}

#[cfg(unix)]
#[test]
fn writes_through_a_symlink_and_keeps_the_link() {
    let home = tempfile::tempdir().unwrap();
    let dotfiles = home.path().join("dotfiles/claude");
    fs::create_dir_all(&dotfiles).unwrap();
    fs::create_dir_all(home.path().join(".claude")).unwrap();
    let target = dotfiles.join("settings.json");
    fs::write(&target, "{}\n").unwrap();
    let link = home.path().join(".claude/settings.json");
    // Relative, as stow makes them.
    std::os::unix::fs::symlink("../dotfiles/claude/settings.json", &link).unwrap();

    let report = write_atomic(&link, "{\"model\": \"opus\"}\n").unwrap();
    assert!(
        fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert_eq!(
        fs::read_to_string(&target).unwrap(),
        "{\"model\": \"opus\"}\n"
    );
    assert_eq!(
        report.written,
        home.path().join(".claude/../dotfiles/claude/settings.json")
    );
    // The backup sits beside the link, not in the dotfiles repository.
    assert_eq!(
        report.backup,
        Some(home.path().join(".claude/settings.json.mnemo.bak"))
    );
    assert_eq!(names(&dotfiles), ["settings.json"]);
    assert_eq!(
        read(&link).unwrap().as_deref(),
        Some("{\"model\": \"opus\"}\n")
    );
}

#[cfg(unix)]
#[test]
fn a_dangling_symlink_is_read_as_missing_and_its_target_created() {
    let dir = tempfile::tempdir().unwrap();
    let link = dir.path().join("settings.json");
    let target = dir.path().join("elsewhere/settings.json");
    std::os::unix::fs::symlink(&target, &link).unwrap();
    assert_eq!(read(&link).unwrap(), None);
    let report = write_atomic(&link, "{}\n").unwrap();
    assert_eq!((report.written, report.backup), (target.clone(), None));
    assert_eq!(fs::read_to_string(&target).unwrap(), "{}\n");
    assert!(
        fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink()
    );
}

/// A directory nobody may write is the user's intent, respected even by root
/// (whom the permission bits alone would not stop).
#[cfg(unix)]
#[test]
fn a_read_only_directory_is_refused_and_said_so() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let locked = dir.path().join("locked");
    fs::create_dir(&locked).unwrap();
    let path = locked.join("settings.json");
    fs::write(&path, "{}\n").unwrap();
    fs::set_permissions(&locked, fs::Permissions::from_mode(0o555)).unwrap();
    let result = write_atomic(&path, "{\"a\": 1}\n");
    fs::set_permissions(&locked, fs::Permissions::from_mode(0o755)).unwrap();
    let err = result.unwrap_err();
    assert!(matches!(err, FileError::ReadOnly { .. }), "{err:?}");
    let message = err.to_string();
    assert!(message.contains(&*path.to_string_lossy()), "{message}");
    assert!(message.contains("its directory"), "{message}");
    assert!(
        message.contains(&format!("chmod u+w {}", locked.display())),
        "{message}"
    );
    assert!(message.contains("mnemo changed nothing"), "{message}");
    assert_eq!(fs::read_to_string(&path).unwrap(), "{}\n");
    assert_eq!(names(&locked), ["settings.json"]);
}

#[cfg(unix)]
#[test]
fn a_read_only_file_is_not_rewritten() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("settings.json");
    fs::write(&path, "{\"mine\": 1}\n").unwrap();
    fs::set_permissions(&path, fs::Permissions::from_mode(0o444)).unwrap();
    let err = write_atomic(&path, "{}\n").unwrap_err();
    assert!(matches!(err, FileError::ReadOnly { .. }), "{err:?}");
    let message = err.to_string();
    assert!(message.contains("is read-only (mode 444)"), "{message}");
    assert!(
        message.contains(&format!("chmod u+w {}", path.display())),
        "{message}"
    );
    assert_eq!(fs::read_to_string(&path).unwrap(), "{\"mine\": 1}\n");
    assert_eq!(
        names(dir.path()),
        ["settings.json"],
        "no backup, no temp file"
    );
    let mode = fs::metadata(&path).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o444);
}

#[cfg(unix)]
#[test]
fn a_created_file_is_private_and_a_replaced_one_keeps_its_mode() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let mode = |p: &Path| fs::metadata(p).unwrap().permissions().mode() & 0o777;
    let created = dir.path().join("new/settings.json");
    write_atomic(&created, "{}\n").unwrap();
    assert_eq!(mode(&created), 0o600);

    let existing = dir.path().join(".claude.json");
    fs::write(&existing, "{}\n").unwrap();
    fs::set_permissions(&existing, fs::Permissions::from_mode(0o640)).unwrap();
    write_atomic(&existing, "{\"a\": 1}\n").unwrap();
    assert_eq!(mode(&existing), 0o640);
}

#[test]
fn a_checked_write_over_a_file_changed_since_it_was_read_changes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("settings.json");
    fs::write(&path, "{\"theirs\": 2}\n").unwrap();
    let err = settings_file::write_atomic_checked(&path, Some("{\"theirs\": 1}\n"), "{}\n", None)
        .unwrap_err();
    assert!(matches!(err, FileError::Changed { .. }), "{err:?}");
    assert!(
        err.to_string()
            .contains("changed while mnemo was editing it"),
        "{err}"
    );
    assert_eq!(fs::read_to_string(&path).unwrap(), "{\"theirs\": 2}\n");
    assert_eq!(names(dir.path()), ["settings.json"]);

    // Created meanwhile, where the edit expected no file.
    let err = settings_file::write_atomic_checked(&path, None, "{}\n", None).unwrap_err();
    assert!(matches!(err, FileError::Changed { .. }), "{err:?}");

    let report =
        settings_file::write_atomic_checked(&path, Some("{\"theirs\": 2}\n"), "{}\n", None)
            .unwrap();
    assert_eq!(report.written, path);
    assert_eq!(fs::read_to_string(&path).unwrap(), "{}\n");
}

#[test]
fn a_file_in_the_way_of_the_directory_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let blocker = dir.path().join(".claude");
    fs::write(&blocker, "not a directory").unwrap();
    let err = write_atomic(&blocker.join("settings.json"), "{}\n").unwrap_err();
    assert!(matches!(err, FileError::CreateDir { .. }), "{err:?}");
    let message = err.to_string();
    assert!(message.starts_with(&format!(
        "cannot create the directory {}",
        blocker.display()
    )));
    assert_eq!(fs::read_to_string(&blocker).unwrap(), "not a directory");
}

#[test]
fn a_directory_in_place_of_the_file_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let err = write_atomic(dir.path(), "{}\n").unwrap_err();
    assert!(matches!(err, FileError::Write { .. }), "{err:?}");
    assert!(err.to_string().contains("directory"), "{err}");
}

#[test]
fn parse_errors_name_the_file_the_place_and_what_to_do() {
    let path = Path::new("/home/me/.claude/settings.json");
    let broken = "{\n  \"model\": \"opus\"\n  \"hooks\": {}\n}\n";
    let err = plan_install(broken, &[]).unwrap_err();
    let message = FileError::invalid(path, err).to_string();
    assert_eq!(
        message,
        "/home/me/.claude/settings.json:2:18: Expected comma; fix the syntax at line 2 or move the \
         file aside (mnemo left it untouched)"
    );

    let shape = ParseError {
        line: 7,
        column: 12,
        message: "`hooks` must be an object, but it is an array".into(),
        kind: ParseErrorKind::Shape,
    };
    let message = settings_file::FileError::invalid(path, shape).to_string();
    assert_eq!(
        message,
        "/home/me/.claude/settings.json:7:12: `hooks` must be an object, but it is an array; fix \
         the value at line 7 or move the file aside (mnemo left it untouched)"
    );
}

#[test]
fn the_backup_can_live_elsewhere_or_nowhere() {
    let dir = tempfile::tempdir().unwrap();
    let tree = dir.path().join("tree/.claude");
    fs::create_dir_all(&tree).unwrap();
    let path = tree.join("settings.json");
    fs::write(&path, "{\"a\": 1}\n").unwrap();
    let elsewhere = dir.path().join("data/backups/settings.json.mnemo.bak");

    let report =
        settings_file::write_atomic_keeping(&path, "{\"a\": 2}\n", Some(&elsewhere)).unwrap();
    assert_eq!(report.backup.as_deref(), Some(elsewhere.as_path()));
    assert_eq!(fs::read_to_string(&elsewhere).unwrap(), "{\"a\": 1}\n");
    assert_eq!(names(&tree), ["settings.json"], "nothing beside the file");

    let report = settings_file::write_atomic_keeping(&path, "{\"a\": 3}\n", None).unwrap();
    assert_eq!(report.backup, None);
    assert_eq!(names(&tree), ["settings.json"]);
    assert_eq!(read(&path).unwrap().as_deref(), Some("{\"a\": 3}\n"));
}

#[test]
fn only_an_empty_object_is_removed_as_empty() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("settings.json");
    assert!(!settings_file::remove_if_empty(&path).unwrap(), "missing");
    fs::write(&path, "{\n  // kept\n}\n").unwrap();
    assert!(
        !settings_file::remove_if_empty(&path).unwrap(),
        "a comment is content"
    );
    fs::write(&path, "{\"model\": \"opus\"}\n").unwrap();
    assert!(!settings_file::remove_if_empty(&path).unwrap());
    fs::write(&path, " {\n}\n").unwrap();
    assert!(settings_file::remove_if_empty(&path).unwrap());
    assert!(!path.exists());
}
