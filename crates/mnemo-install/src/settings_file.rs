//! Reading and replacing settings files without ever leaving one half-written.
//!
//! These files belong to the user and to the host, so a write goes to a temporary file beside the
//! target and is renamed over it only once it is complete and on disk; the previous content is kept
//! as `<file>.mnemo.bak`; permissions (and, where allowed, ownership) carry over, since
//! `~/.claude.json` holds credentials, and a file created is 0600; a file the user made read-only
//! (or put in a read-only directory) is refused, not rewritten; an edit can be checked against a
//! concurrent writer right before the rename ([`write_atomic_checked`]); and a symlink is written through rather than replaced,
//! because dotfile managers link these files into a repository.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use crate::edit::{ParseError, ParseErrorKind};

/// Suffix of the copy of the previous content that [`write_atomic`] keeps.
pub const BACKUP_SUFFIX: &str = ".mnemo.bak";

/// How many symlinks are followed before giving up, as Linux does (ELOOP).
const MAX_SYMLINK_HOPS: usize = 40;

/// What [`write_atomic`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WriteReport {
    /// The file that now holds the new content: the path given, or the file it links to.
    pub written: PathBuf,
    /// Where the previous content was saved, when there was a previous file.
    pub backup: Option<PathBuf>,
}

/// A settings file that could not be read, understood or written. Each message names the file,
/// says what went wrong and what to do about it, and says that the file was left as it was.
#[derive(Debug, thiserror::Error)]
pub enum FileError {
    #[error(
        "cannot read {}: {source}; check that the file is readable (mnemo changed nothing)",
        path.display()
    )]
    Read {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error(
        "{} is not UTF-8 text; save it as UTF-8 or move it aside (mnemo left it untouched)",
        path.display()
    )]
    NotUtf8 { path: PathBuf },
    #[error("{}", invalid_message(path, error))]
    Invalid {
        path: PathBuf,
        #[source]
        error: ParseError,
    },
    #[error(
        "cannot create the directory {}: {source}; create it or check its parent's permissions \
         (mnemo changed nothing)",
        path.display()
    )]
    CreateDir {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error(
        "cannot save the previous content of {} as {}: {source}; check that the directory is \
         writable (mnemo left the file untouched)",
        path.display(),
        backup.display()
    )]
    Backup {
        path: PathBuf,
        backup: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error(
        "cannot write {}: {source}; check that the file and its directory are writable \
         (mnemo left the file untouched)",
        path.display()
    )]
    Write {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error(
        "{} is read-only ({why}): mnemo does not rewrite a file you protected. To let it, \
         `chmod u+w {}` and run the command again; or add the entries by hand \
         (mnemo changed nothing)",
        path.display(),
        shown.display()
    )]
    ReadOnly {
        path: PathBuf,
        /// What to make writable: the file or its directory.
        shown: PathBuf,
        why: String,
    },
    #[error(
        "{} changed while mnemo was editing it (another program wrote it); run the command \
         again (mnemo left the new content as it was)",
        path.display()
    )]
    Changed { path: PathBuf },
    #[error("cannot find the home directory (HOME is not set); set HOME and run the command again")]
    NoHome,
}

impl FileError {
    /// Wraps a planner's error with the file it came from, for display.
    pub fn invalid(path: &Path, error: ParseError) -> Self {
        FileError::Invalid {
            path: path.to_path_buf(),
            error,
        }
    }
}

fn invalid_message(path: &Path, error: &ParseError) -> String {
    let what = match error.kind {
        ParseErrorKind::Syntax => "the syntax",
        ParseErrorKind::Shape => "the value",
    };
    format!(
        "{}:{}:{}: {}; fix {what} at line {} or move the file aside (mnemo left it untouched)",
        path.display(),
        error.line,
        error.column,
        error.message,
        error.line,
    )
}

/// Read a settings file: `Ok(None)` if it does not exist (a dangling symlink counts as missing).
pub fn read(path: &Path) -> Result<Option<String>, FileError> {
    match fs::read(path) {
        Ok(bytes) => String::from_utf8(bytes)
            .map(Some)
            .map_err(|_| FileError::NotUtf8 {
                path: path.to_path_buf(),
            }),
        Err(err) if err.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(source) => Err(FileError::Read {
            path: path.to_path_buf(),
            source,
        }),
    }
}

/// Replace the content of `path` atomically.
///
/// Writes a temporary file in the same directory, fsyncs it and renames it over the target, so
/// readers see either the old or the new file. When a previous file existed its content is kept as
/// `<path>.mnemo.bak` (beside the path given, so a dotfile repository behind a symlink gains no
/// stray file) and its permissions are applied to the new file. A symlink at `path` is followed and
/// its target replaced, keeping the link. Missing parent directories are created.
pub fn write_atomic(path: &Path, contents: &str) -> Result<WriteReport, FileError> {
    write_atomic_keeping(path, contents, Some(&backup_path(path)))
}

/// Like [`write_atomic`], with the previous content kept at `backup` instead
/// (a file outside a work tree that a team commits), or not at all.
pub fn write_atomic_keeping(
    path: &Path,
    contents: &str,
    backup: Option<&Path>,
) -> Result<WriteReport, FileError> {
    write_atomic_inner(path, contents, backup, None)
}

/// Like [`write_atomic_keeping`], for an edit planned from `read` (what [`read`]
/// returned): if the file no longer holds that when the new content is about to
/// be renamed into place, another program wrote it meanwhile, and the write is
/// abandoned with [`FileError::Changed`] so that the caller can plan again from
/// the new content instead of losing that program's change.
pub fn write_atomic_checked(
    path: &Path,
    read: Option<&str>,
    contents: &str,
    backup: Option<&Path>,
) -> Result<WriteReport, FileError> {
    write_atomic_inner(path, contents, backup, Some(read))
}

fn write_atomic_inner(
    path: &Path,
    contents: &str,
    backup: Option<&Path>,
    expected: Option<Option<&str>>,
) -> Result<WriteReport, FileError> {
    let write_error = |source| FileError::Write {
        path: path.to_path_buf(),
        source,
    };
    let target = resolve_symlinks(path).map_err(write_error)?;
    let dir = parent_dir(&target);
    if !dir.is_dir() {
        fs::create_dir_all(dir).map_err(|source| FileError::CreateDir {
            path: dir.to_path_buf(),
            source,
        })?;
    }
    let previous = match fs::metadata(&target) {
        Ok(metadata) if metadata.is_dir() => {
            return Err(write_error(io::Error::new(
                io::ErrorKind::IsADirectory,
                "it is a directory",
            )));
        }
        Ok(metadata) => Some(metadata),
        Err(err) if err.kind() == io::ErrorKind::NotFound => None,
        Err(err) => return Err(write_error(err)),
    };
    refuse_read_only(path, &target, previous.as_ref())?;

    let backup = match (&previous, backup) {
        (None, _) | (_, None) => None,
        (Some(metadata), Some(backup)) => {
            let backup = backup.to_path_buf();
            if let Some(dir) = backup.parent().filter(|d| !d.as_os_str().is_empty()) {
                fs::create_dir_all(dir).map_err(|source| FileError::CreateDir {
                    path: dir.to_path_buf(),
                    source,
                })?;
            }
            let old = fs::read(&target).map_err(|source| FileError::Read {
                path: target.clone(),
                source,
            })?;
            replace_file(&backup, &old, Some(metadata), &|| true).map_err(|source| {
                FileError::Backup {
                    path: path.to_path_buf(),
                    backup: backup.clone(),
                    source,
                }
            })?;
            Some(backup)
        }
    };
    let unchanged = || match expected {
        None => true,
        Some(read) => holds(&target, read),
    };
    if !replace_file(&target, contents.as_bytes(), previous.as_ref(), &unchanged)
        .map_err(write_error)?
    {
        return Err(FileError::Changed {
            path: path.to_path_buf(),
        });
    }
    Ok(WriteReport {
        written: target,
        backup,
    })
}

/// Removes `path` when it holds nothing but an empty JSON object, or nothing
/// at all (what uninstall leaves of a file that install created: a settings
/// file, an OpenCode plugin); true when removed.
pub fn remove_if_empty(path: &Path) -> Result<bool, FileError> {
    let Some(text) = read(path)? else {
        return Ok(false);
    };
    let bare: String = text.chars().filter(|c| !c.is_whitespace()).collect();
    if bare != "{}" && !bare.is_empty() {
        return Ok(false);
    }
    fs::remove_file(path).map_err(|source| FileError::Write {
        path: path.to_path_buf(),
        source,
    })?;
    Ok(true)
}

/// `<path>.mnemo.bak`
pub fn backup_path(path: &Path) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(BACKUP_SUFFIX);
    PathBuf::from(name)
}

/// Follows `path` through symlinks to the file that actually holds the content (which need not
/// exist yet).
fn resolve_symlinks(path: &Path) -> io::Result<PathBuf> {
    let mut current = path.to_path_buf();
    for _ in 0..MAX_SYMLINK_HOPS {
        match fs::symlink_metadata(&current) {
            Ok(metadata) if metadata.file_type().is_symlink() => {
                let link = fs::read_link(&current)?;
                // A relative link is relative to the directory holding the link.
                current = parent_dir(&current).join(link);
            }
            Ok(_) => return Ok(current),
            // Not there (yet): creating the directories is the caller's job, and reports it better.
            Err(err)
                if matches!(
                    err.kind(),
                    io::ErrorKind::NotFound | io::ErrorKind::NotADirectory
                ) =>
            {
                return Ok(current);
            }
            Err(err) => return Err(err),
        }
    }
    Err(io::Error::other("too many levels of symbolic links"))
}

fn parent_dir(path: &Path) -> &Path {
    match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent,
        _ => Path::new("."),
    }
}

/// A file the user protected: one nobody may write (0444), or one in a
/// directory nobody may write (0555). Judged on the mode bits, not on
/// access, so that root (or sudo) respects the intent too.
fn refuse_read_only(
    path: &Path,
    target: &Path,
    previous: Option<&fs::Metadata>,
) -> Result<(), FileError> {
    let refuse = |shown: &Path, why: String| {
        Err(FileError::ReadOnly {
            path: path.to_path_buf(),
            shown: shown.to_path_buf(),
            why,
        })
    };
    if let Some(metadata) = previous
        && let Some(mode) = read_only_mode(metadata)
    {
        return refuse(target, format!("mode {mode:o}"));
    }
    let dir = parent_dir(target);
    if let Ok(metadata) = fs::metadata(dir)
        && let Some(mode) = read_only_mode(&metadata)
    {
        return refuse(
            dir,
            format!("its directory {} has mode {mode:o}", dir.display()),
        );
    }
    Ok(())
}

/// The permission bits when they grant nobody write access.
fn read_only_mode(metadata: &fs::Metadata) -> Option<u32> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = metadata.permissions().mode() & 0o7777;
        (mode & 0o222 == 0).then_some(mode)
    }
    #[cfg(not(unix))]
    metadata.permissions().readonly().then_some(0o444)
}

/// Whether `target` still holds `read` (`None`: does not exist).
fn holds(target: &Path, read: Option<&str>) -> bool {
    match (fs::read(target), read) {
        (Ok(now), Some(read)) => now == read.as_bytes(),
        (Err(err), None) => err.kind() == io::ErrorKind::NotFound,
        _ => false,
    }
}

/// Test-only: `MNEMO_TEST_PAUSE_BEFORE_RENAME_MS` widens the window between
/// planning an edit and renaming it into place, so that tests can write the
/// file from another process in it. Unset in real use.
fn test_pause() {
    if let Some(ms) = std::env::var("MNEMO_TEST_PAUSE_BEFORE_RENAME_MS")
        .ok()
        .and_then(|v| v.parse::<u64>().ok())
    {
        std::thread::sleep(std::time::Duration::from_millis(ms));
    }
}

/// Writes `bytes` to a temporary file beside `target` and renames it over `target`, taking the
/// permissions of `like` (the file being replaced) when given; a new file is the user's alone
/// (0600), since settings can hold tokens. Right before the rename, `unchanged` says whether the
/// target still holds what the edit was planned from; if not, nothing is replaced and the result
/// is `false`.
fn replace_file(
    target: &Path,
    bytes: &[u8],
    like: Option<&fs::Metadata>,
    unchanged: &dyn Fn() -> bool,
) -> io::Result<bool> {
    let dir = parent_dir(target);
    let (mut file, temp) = create_temp_file(dir, target)?;
    file.write_all(bytes)?;
    if let Some(metadata) = like {
        copy_ownership(&file, metadata);
        fs::set_permissions(&temp.0, metadata.permissions())?;
    }
    file.sync_all()?;
    drop(file);
    test_pause();
    if !unchanged() {
        return Ok(false);
    }
    fs::rename(&temp.0, target)?;
    temp.keep();
    sync_dir(dir);
    Ok(true)
}

/// A temporary file that is deleted unless it was renamed into place.
struct TempFile(PathBuf);

impl TempFile {
    fn keep(self) {
        std::mem::forget(self);
    }
}

impl Drop for TempFile {
    fn drop(&mut self) {
        let _ = fs::remove_file(&self.0);
    }
}

fn create_temp_file(dir: &Path, target: &Path) -> io::Result<(File, TempFile)> {
    let name = target
        .file_name()
        .map(|n| n.to_string_lossy())
        .unwrap_or_default();
    let mut attempt = 0;
    loop {
        let temp = dir.join(format!(
            ".{name}.mnemo-tmp.{}.{attempt}",
            std::process::id()
        ));
        let mut options = OpenOptions::new();
        options.write(true).create_new(true);
        #[cfg(unix)]
        {
            // The content may be credentials: nobody else reads it, unless the file it replaces
            // let them (its mode is applied before the rename).
            use std::os::unix::fs::OpenOptionsExt;
            options.mode(0o600);
        }
        match options.open(&temp) {
            Ok(file) => return Ok((file, TempFile(temp))),
            Err(err) if err.kind() == io::ErrorKind::AlreadyExists && attempt < 100 => attempt += 1,
            Err(err) => return Err(err),
        }
    }
}

/// Keeps the owner when mnemo runs as another user (e.g. under sudo), so the host can still read
/// its file. Failing is fine: an unprivileged user can only own what they create.
fn copy_ownership(file: &File, like: &fs::Metadata) {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        let _ = std::os::unix::fs::fchown(file, Some(like.uid()), Some(like.gid()));
    }
    #[cfg(not(unix))]
    let _ = (file, like);
}

/// Makes the rename itself durable. Best effort: not every platform or file system allows it.
fn sync_dir(dir: &Path) {
    #[cfg(unix)]
    if let Ok(dir) = File::open(dir) {
        let _ = dir.sync_all();
    }
    #[cfg(not(unix))]
    let _ = dir;
}
