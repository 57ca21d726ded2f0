//! Where mnemo keeps its files: one data directory, `$MNEMO_DATA_DIR`, else
//! `~/.mnemo` (Unix) or `%LOCALAPPDATA%\mnemo` (Windows).
//!
//! Everything mnemo writes lives below it (database, logs, spool, config,
//! worker state), so that "delete the directory" is a complete uninstall of the
//! data and a test can isolate itself with one variable.
//!
//! Privacy: on Unix the directory is mode 0700 and its files 0600, and a
//! directory others may write to is refused. On Windows the default lives in
//! the user's profile, whose inherited ACL already grants access only to the
//! user, SYSTEM and Administrators (the 0600 equivalent); mnemo sets no ACL
//! of its own, so a `MNEMO_DATA_DIR` elsewhere keeps whatever ACL that
//! folder gives.

use std::path::{Path, PathBuf};

/// File names inside the data directory. Kept together so that doctor, the
/// store and the docs agree.
pub const DB_FILE: &str = "mnemo.db";
pub const CONFIG_FILE: &str = "config.toml";
pub const LOG_DIR: &str = "logs";
pub const HOOK_LOG_FILE: &str = "hook.log";
pub const SPOOL_DIR: &str = "spool";
/// Held (OS file lock) by the running worker: one worker per data directory.
pub const WORKER_LOCK_FILE: &str = "worker.lock";
/// The running worker's pid, port and API token (mode 0600).
pub const WORKER_INFO_FILE: &str = "worker.json";
/// The files `mnemo export -o` wrote: path and time, one JSON line each.
pub const EXPORTS_FILE: &str = "exports.jsonl";

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DataDir {
    root: PathBuf,
}

#[derive(Debug, thiserror::Error)]
pub enum PathError {
    #[error(
        "cannot find a home directory for the data directory; set MNEMO_DATA_DIR to a writable folder"
    )]
    NoHome,
}

impl DataDir {
    /// `$MNEMO_DATA_DIR` when set and non-empty, else the OS default
    /// (see [`default_root`]).
    pub fn resolve() -> Result<DataDir, PathError> {
        if let Some(dir) = std::env::var_os("MNEMO_DATA_DIR").filter(|v| !v.is_empty()) {
            return Ok(DataDir::at(PathBuf::from(dir)));
        }
        default_root(cfg!(windows), |name| std::env::var_os(name), |p| p.exists())
            .map(DataDir::at)
            .ok_or(PathError::NoHome)
    }

    pub fn at(root: impl Into<PathBuf>) -> DataDir {
        DataDir { root: root.into() }
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    pub fn db_path(&self) -> PathBuf {
        self.root.join(DB_FILE)
    }

    /// `$MNEMO_CONFIG` overrides the location of the configuration file.
    pub fn config_path(&self) -> PathBuf {
        match std::env::var_os("MNEMO_CONFIG").filter(|v| !v.is_empty()) {
            Some(p) => PathBuf::from(p),
            None => self.root.join(CONFIG_FILE),
        }
    }

    pub fn log_dir(&self) -> PathBuf {
        self.root.join(LOG_DIR)
    }

    pub fn hook_log_path(&self) -> PathBuf {
        self.log_dir().join(HOOK_LOG_FILE)
    }

    pub fn worker_lock_path(&self) -> PathBuf {
        self.root.join(WORKER_LOCK_FILE)
    }

    pub fn worker_info_path(&self) -> PathBuf {
        self.root.join(WORKER_INFO_FILE)
    }

    pub fn exports_path(&self) -> PathBuf {
        self.root.join(EXPORTS_FILE)
    }

    pub fn spool_dir(&self) -> PathBuf {
        self.root.join(SPOOL_DIR)
    }

    /// Where events go when the data directory itself cannot be written
    /// (read-only mount, full disk), in order of preference: a folder in
    /// `$XDG_RUNTIME_DIR` when it is set (per user, private by construction),
    /// then one in the system temp directory. Other users share the temp
    /// directory and can guess the name, so a folder there that is not the
    /// user's own is refused (see [`check_private`]), never used. Both are
    /// named after this data directory, so two never share one.
    pub fn fallback_spool_dirs(&self) -> Vec<PathBuf> {
        let runtime = std::env::var_os("XDG_RUNTIME_DIR")
            .map(PathBuf::from)
            .filter(|p| p.is_absolute());
        fallback_dirs(&self.root, runtime.as_deref(), &std::env::temp_dir())
    }

    /// The preferred fallback folder: the first of [`Self::fallback_spool_dirs`].
    pub fn fallback_spool_dir(&self) -> PathBuf {
        self.fallback_spool_dirs().remove(0)
    }

    /// Creates the data directory (owner-only on Unix: it holds the user's
    /// prompts and commands).
    pub fn ensure(&self) -> std::io::Result<()> {
        create_private_dir(&self.root)
    }
}

/// The data directory when `MNEMO_DATA_DIR` is not set. Unix: `~/.mnemo`.
/// Windows: `%LOCALAPPDATA%\mnemo` (local, not roaming: a SQLite database
/// must not be synced between machines), else `%APPDATA%\mnemo`, else
/// `%USERPROFILE%\.mnemo`; a `%USERPROFILE%\.mnemo` that already exists
/// (made by an earlier build) stays in use so that nothing is stranded.
/// `var` reads an environment variable and `exists` checks a path, so the
/// rule is tested on every OS.
fn default_root(
    windows: bool,
    var: impl Fn(&str) -> Option<std::ffi::OsString>,
    exists: impl Fn(&Path) -> bool,
) -> Option<PathBuf> {
    let dir = |name: &str| var(name).filter(|v| !v.is_empty()).map(PathBuf::from);
    if !windows {
        return dir("HOME").map(|home| home.join(".mnemo"));
    }
    let legacy = dir("USERPROFILE").map(|home| home.join(".mnemo"));
    if let Some(legacy) = legacy.as_ref().filter(|p| exists(p)) {
        return Some(legacy.clone());
    }
    dir("LOCALAPPDATA")
        .or_else(|| dir("APPDATA"))
        .map(|base| base.join("mnemo"))
        .or(legacy)
}

fn fallback_dirs(root: &Path, runtime: Option<&Path>, temp: &Path) -> Vec<PathBuf> {
    let name = format!(
        "mnemo-spool-{}-{:016x}",
        user_tag(),
        fnv1a(root.as_os_str().as_encoded_bytes())
    );
    runtime
        .into_iter()
        .chain([temp])
        .map(|dir| dir.join(&name))
        .collect()
}

/// Creates `dir` and its parents; the last component gets mode 0700 on Unix.
/// A `dir` that already exists must be ours (see [`check_private`]): a
/// folder someone else made, or may write into, is refused, never used.
pub fn create_private_dir(dir: &Path) -> std::io::Result<()> {
    if std::fs::symlink_metadata(dir).is_err() {
        let mut builder = std::fs::DirBuilder::new();
        builder.recursive(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::DirBuilderExt;
            builder.mode(0o700);
        }
        builder.create(dir)?;
    }
    // Checked after creating too: another user may have won the race.
    check_private(dir)
}

/// Refuses `path` (a PermissionDenied error naming the problem) unless it,
/// and the target when it is a symlink, belongs to the current user and
/// nobody else may write to it. Absent paths pass. One or two `lstat`s.
pub fn check_private(path: &Path) -> std::io::Result<()> {
    match foreign_access(path) {
        Some(problem) => Err(std::io::Error::new(
            std::io::ErrorKind::PermissionDenied,
            format!("refusing {}: {problem}", path.display()),
        )),
        None => Ok(()),
    }
}

/// Why `path` is not private to the current user: owned by someone else
/// (root excepted, as ssh does: root can do anything anyway), or writable
/// by group or others. `None` when it is private or absent.
#[cfg(unix)]
pub fn foreign_access(path: &Path) -> Option<String> {
    use std::os::unix::fs::MetadataExt;
    let uid = current_uid();
    let trusted = |owner: u32| owner == uid || owner == 0;
    let link = std::fs::symlink_metadata(path).ok()?;
    let target = if link.file_type().is_symlink() {
        if !trusted(link.uid()) {
            return Some(format!("it is a symlink owned by uid {}", link.uid()));
        }
        std::fs::metadata(path).ok()?
    } else {
        link
    };
    if !trusted(target.uid()) {
        return Some(format!(
            "it is owned by uid {}, not by you (uid {uid})",
            target.uid()
        ));
    }
    let mode = target.mode() & 0o7777;
    if mode & 0o022 != 0 {
        return Some(format!("others may write to it (mode {mode:04o})"));
    }
    None
}

#[cfg(not(unix))]
pub fn foreign_access(_path: &Path) -> Option<String> {
    None
}

/// Like [`foreign_access`], and also flags what others may read (mode bits
/// for group or others): what `doctor` reports.
#[cfg(unix)]
pub fn exposure(path: &Path) -> Option<String> {
    use std::os::unix::fs::MetadataExt;
    if let Some(problem) = foreign_access(path) {
        return Some(problem);
    }
    let mode = std::fs::metadata(path).ok()?.mode() & 0o7777;
    (mode & 0o077 != 0).then(|| format!("others may read it (mode {mode:04o})"))
}

#[cfg(not(unix))]
pub fn exposure(_path: &Path) -> Option<String> {
    None
}

/// Takes group and other permissions off an existing file (or folder) of
/// ours (0644 becomes 0600, a read-only 0444 stays read-only as 0400, a 0777
/// folder becomes 0700); refuses one that
/// is someone else's. Absent files are left alone. A `stat`, and a `chmod`
/// only when the mode is wrong (best effort: a read-only mount keeps it).
pub fn restrict_file(path: &Path) -> std::io::Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::{MetadataExt, PermissionsExt};
        let Ok(meta) = std::fs::symlink_metadata(path) else {
            return Ok(());
        };
        if meta.uid() != current_uid() || meta.file_type().is_symlink() {
            return check_private(path);
        }
        if meta.mode() & 0o077 != 0 {
            let owner_only = std::fs::Permissions::from_mode(meta.mode() & 0o7700);
            let _ = std::fs::set_permissions(path, owner_only);
        }
    }
    #[cfg(not(unix))]
    let _ = path;
    Ok(())
}

#[cfg(unix)]
fn current_uid() -> u32 {
    // SAFETY: getuid has no preconditions and cannot fail.
    unsafe { libc::getuid() }
}

/// The user's home directory, from the environment (HOME, or USERPROFILE on Windows).
pub fn home_dir() -> Option<PathBuf> {
    let var = if cfg!(windows) { "USERPROFILE" } else { "HOME" };
    std::env::var_os(var)
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
}

/// Distinguishes users sharing one temp directory.
fn user_tag() -> String {
    #[cfg(unix)]
    {
        current_uid().to_string()
    }
    #[cfg(not(unix))]
    {
        std::env::var("USERNAME").unwrap_or_else(|_| "user".to_owned())
    }
}

/// A small stable hash (FNV-1a, 64 bit) for naming files after paths.
pub fn fnv1a(bytes: &[u8]) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for b in bytes {
        hash ^= u64::from(*b);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    hash
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_live_under_the_root() {
        let d = DataDir::at("/x/data");
        assert_eq!(d.db_path(), Path::new("/x/data/mnemo.db"));
        assert_eq!(d.hook_log_path(), Path::new("/x/data/logs/hook.log"));
        assert_eq!(d.spool_dir(), Path::new("/x/data/spool"));
    }

    #[test]
    fn fallback_spool_differs_per_data_dir() {
        let a = DataDir::at("/x/a").fallback_spool_dirs().pop().unwrap();
        let b = DataDir::at("/x/b").fallback_spool_dirs().pop().unwrap();
        assert_ne!(a, b);
        assert!(a.starts_with(std::env::temp_dir()));
    }

    #[test]
    fn the_runtime_dir_comes_before_the_shared_temp_dir() {
        let root = Path::new("/x/a");
        let dirs = fallback_dirs(root, Some(Path::new("/run/user/7")), Path::new("/tmp"));
        assert_eq!(dirs.len(), 2);
        assert!(dirs[0].starts_with("/run/user/7"));
        assert!(dirs[1].starts_with("/tmp"));
        assert_eq!(dirs[0].file_name(), dirs[1].file_name());
        assert_eq!(fallback_dirs(root, None, Path::new("/tmp")), &dirs[1..]);
    }

    fn env<'a>(vars: &'a [(&str, &str)]) -> impl Fn(&str) -> Option<std::ffi::OsString> + 'a {
        move |name| vars.iter().find(|(k, _)| *k == name).map(|(_, v)| v.into())
    }

    #[test]
    fn unix_default_is_dot_mnemo_in_home() {
        let vars = [("HOME", "/home/me"), ("LOCALAPPDATA", "/elsewhere")];
        let root = default_root(false, env(&vars), |_| false);
        assert_eq!(root.unwrap(), Path::new("/home/me/.mnemo"));
        assert_eq!(default_root(false, env(&[("HOME", "")]), |_| false), None);
    }

    #[test]
    fn windows_default_is_local_app_data() {
        let local = r"C:\Users\Me\AppData\Local";
        let roaming = r"C:\Users\Me\AppData\Roaming";
        let profile = r"C:\Users\Me";
        let all = [
            ("USERPROFILE", profile),
            ("LOCALAPPDATA", local),
            ("APPDATA", roaming),
            ("HOME", "/home/me"),
        ];
        let root = default_root(true, env(&all), |_| false).unwrap();
        assert_eq!(root, Path::new(local).join("mnemo"));
        let root = default_root(true, env(&all[..1]), |_| false).unwrap();
        assert_eq!(root, Path::new(profile).join(".mnemo"));
        let no_local = [all[0], all[2]];
        let root = default_root(true, env(&no_local), |_| false).unwrap();
        assert_eq!(root, Path::new(roaming).join("mnemo"));
        assert_eq!(default_root(true, env(&all[3..]), |_| false), None);
    }

    #[test]
    fn windows_keeps_an_existing_dot_mnemo() {
        let profile = r"C:\Users\Me";
        let vars = [("USERPROFILE", profile), ("LOCALAPPDATA", r"C:\L")];
        let legacy = Path::new(profile).join(".mnemo");
        let root = default_root(true, env(&vars), |p| p == legacy).unwrap();
        assert_eq!(root, legacy);
    }

    #[cfg(unix)]
    #[test]
    fn private_dir_is_owner_only() {
        use std::os::unix::fs::PermissionsExt;
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("a/b");
        create_private_dir(&dir).unwrap();
        let mode = std::fs::metadata(&dir).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o700);
    }

    #[cfg(unix)]
    #[test]
    fn a_dir_others_may_write_is_refused_and_a_loose_file_tightened() {
        use std::os::unix::fs::PermissionsExt;
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("shared");
        std::fs::create_dir(&dir).unwrap();
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o777)).unwrap();
        let err = create_private_dir(&dir).unwrap_err();
        assert_eq!(err.kind(), std::io::ErrorKind::PermissionDenied);
        assert!(err.to_string().contains("mode 0777"), "{err}");

        let file = tmp.path().join("db");
        std::fs::write(&file, "x").unwrap();
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).unwrap();
        assert!(exposure(&file).unwrap().contains("read"));
        restrict_file(&file).unwrap();
        let mode = std::fs::metadata(&file).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
        assert_eq!(exposure(&file), None);
    }
}
