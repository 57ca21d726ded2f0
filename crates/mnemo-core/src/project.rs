//! Project identity: which project an event belongs to.
//!
//! claude-mem named projects after a folder's base name, so two repos called
//! `api` merged and a `cd` split one project in two. Here a project is a
//! canonical path: the platform's stable project directory
//! (`CLAUDE_PROJECT_DIR`) when given, else the payload's `cwd`; then the
//! enclosing git work tree, with linked worktrees mapped to their main
//! repository. The base name is only a display label.
//!
//! This runs in every hook, so it reads `.git` entries directly instead of
//! spawning `git` (which would cost milliseconds). Whatever the project
//! contains is untrusted: a `.git` that is a FIFO, `/dev/zero`, a huge file
//! or a symlink loop must neither block a hook nor feed it without end, so
//! every file is read through [`read_small`].
//!
//! On Windows the identity is written as hosts write it (`C:\src\api`): the
//! verbatim prefix that `canonicalize` adds (`\\?\`) is taken off and the
//! drive letter is uppercased (see [`plain_windows_path`]). Folders that
//! exist get the case they have on disk from `canonicalize`, so `c:\SRC\api`
//! and `C:\src\api` are one project; a folder that does not exist keeps the
//! case it was given.

use std::path::{Component, Path, PathBuf};

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProjectIdentity {
    /// Canonical root directory; the identity itself.
    pub root: PathBuf,
    /// Display label (the root's base name, without a bare repo's `.git`).
    pub name: String,
}

/// Picks the project directory: the platform's stable project dir when set,
/// else the working directory.
pub fn resolve(project_dir: Option<&str>, cwd: Option<&str>) -> Option<ProjectIdentity> {
    let dir = [project_dir, cwd]
        .into_iter()
        .flatten()
        .map(str::trim)
        .find(|d| !d.is_empty())?;
    Some(identify(Path::new(dir)))
}

/// The project that contains `dir`.
pub fn identify(dir: &Path) -> ProjectIdentity {
    let start = std::fs::canonicalize(dir).unwrap_or_else(|_| normalize(dir));
    let root = git_project_root(&start).unwrap_or(start);
    let root = if cfg!(windows) {
        match root.to_str() {
            Some(text) => PathBuf::from(plain_windows_path(text)),
            None => root,
        }
    } else {
        root
    };
    ProjectIdentity {
        name: display_name(&root),
        root,
    }
}

/// The main repository of a git worktree from where the worktree sits, for
/// history whose worktree is gone (nothing on disk to ask): a directory in
/// `<repo>/.worktrees/`, `<repo>/.claude/worktrees/` or `<repo>/.git/worktrees/`,
/// or in a sibling folder `<repo>-worktrees/` (also `_worktrees`,
/// `.worktrees`). None when the path has none of these layouts.
pub fn worktree_repository(dir: &Path) -> Option<PathBuf> {
    let parts: Vec<Component<'_>> = dir.components().collect();
    // The innermost layout wins; the worktree's own name must follow it.
    (1..parts.len().saturating_sub(1)).rev().find_map(|i| {
        let name = parts[i].as_os_str().to_str()?;
        let before: PathBuf = parts[..i].iter().collect();
        let holder = parts[i - 1].as_os_str().to_str().unwrap_or_default();
        if name == ".worktrees" {
            return Some(before);
        }
        if name == "worktrees" && matches!(holder, ".claude" | ".git") {
            return before.parent().map(Path::to_owned);
        }
        ["-worktrees", "_worktrees", ".worktrees"]
            .iter()
            .find_map(|suffix| name.strip_suffix(suffix))
            .filter(|repo| !repo.is_empty())
            .map(|repo| before.join(repo))
    })
}

/// Walks up from `start` to the nearest `.git` and returns the project root it
/// implies, or None outside git.
fn git_project_root(start: &Path) -> Option<PathBuf> {
    for dir in start.ancestors() {
        let dot_git = dir.join(".git");
        let Ok(meta) = std::fs::metadata(&dot_git) else {
            continue;
        };
        if meta.is_dir() {
            return Some(dir.to_owned());
        }
        // A `.git` file points elsewhere: a linked worktree (its git dir has a
        // `commondir` leading to the main repository) or a submodule (no
        // `commondir`: the submodule is a project of its own).
        return Some(linked_main_root(dir, &dot_git).unwrap_or_else(|| dir.to_owned()));
    }
    None
}

fn linked_main_root(work_tree: &Path, dot_git_file: &Path) -> Option<PathBuf> {
    let text = read_small(dot_git_file)?;
    let git_dir = text.lines().find_map(|l| l.strip_prefix("gitdir:"))?.trim();
    let git_dir = work_tree.join(git_dir);
    let common = read_small(&git_dir.join("commondir"))?;
    let common = std::fs::canonicalize(git_dir.join(common.trim())).ok()?;
    // `<main>/.git` for a normal repository; a bare repository is its own root.
    if common.file_name().is_some_and(|n| n == ".git") {
        common.parent().map(Path::to_owned)
    } else {
        Some(common)
    }
}

/// The most of a git pointer file (`.git`, `HEAD`, `commondir`) that is
/// read; real ones are a line of a few hundred bytes.
pub const SMALL_FILE_LIMIT: u64 = 16 * 1024;

/// Reads a small text file that the project controls, or None when it is
/// not a regular file (FIFO, device, directory, symlink loop), is larger
/// than [`SMALL_FILE_LIMIT`], or is not UTF-8. Never blocks: the type is
/// checked before opening, the open is non-blocking (a FIFO swapped in
/// between the two checks does not wait for a writer), and the type is
/// checked again on the open file.
pub fn read_small(path: &Path) -> Option<String> {
    use std::io::Read;
    let meta = std::fs::metadata(path).ok()?;
    if !meta.is_file() || meta.len() > SMALL_FILE_LIMIT {
        return None;
    }
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NONBLOCK);
    }
    let file = options.open(path).ok()?;
    if !file.metadata().ok()?.is_file() {
        return None;
    }
    let mut bytes = Vec::new();
    file.take(SMALL_FILE_LIMIT + 1)
        .read_to_end(&mut bytes)
        .ok()?;
    if bytes.len() as u64 > SMALL_FILE_LIMIT {
        return None;
    }
    String::from_utf8(bytes).ok()
}

fn display_name(root: &Path) -> String {
    let name = root
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| root.to_string_lossy().into_owned());
    match name.strip_suffix(".git") {
        Some(stem) if !stem.is_empty() => stem.to_owned(),
        _ => name,
    }
}

/// A Windows path as hosts and people write it. `canonicalize` on Windows
/// returns verbatim paths (`\\?\C:\src\api`, `\\?\UNC\server\share\api`)
/// while hooks receive `C:\src\api`; both must give one identity. The
/// drive letter is uppercased (`c:` and `C:` are one drive). A verbatim path
/// that would mean something else without its prefix (a volume GUID path, a
/// component named like a device such as `CON`, or ending in a dot or a
/// space) is kept as it is. Pure string work, tested on every OS.
pub fn plain_windows_path(path: &str) -> String {
    let (unc, rest) = if let Some(rest) = path.strip_prefix(r"\\?\UNC\") {
        (true, rest)
    } else if let Some(rest) = path.strip_prefix(r"\\?\") {
        (false, rest)
    } else {
        return upper_drive(path);
    };
    if (!unc && !has_drive(rest)) || rest.split('\\').any(needs_verbatim) {
        return path.to_owned();
    }
    if unc {
        format!(r"\\{rest}")
    } else {
        upper_drive(rest)
    }
}

/// `C:` or `C:\...`.
fn has_drive(path: &str) -> bool {
    match path.as_bytes() {
        [letter, b':'] => letter.is_ascii_alphabetic(),
        [letter, b':', b'\\', ..] => letter.is_ascii_alphabetic(),
        _ => false,
    }
}

fn upper_drive(path: &str) -> String {
    let mut out = path.to_owned();
    if has_drive(path) {
        out[..1].make_ascii_uppercase();
    }
    out
}

/// A component that Win32 would read differently without the verbatim
/// prefix: a DOS device name (with any extension) or a trailing dot or space.
fn needs_verbatim(component: &str) -> bool {
    if component.ends_with(['.', ' ']) {
        return true;
    }
    let stem = component.split('.').next().unwrap_or_default();
    let stem = stem.trim_end().to_ascii_uppercase();
    let numbered = |prefix: &str| {
        stem.strip_prefix(prefix)
            .is_some_and(|n| n.len() == 1 && n.as_bytes()[0].is_ascii_digit())
    };
    matches!(stem.as_str(), "CON" | "PRN" | "AUX" | "NUL") || numbered("COM") || numbered("LPT")
}

/// Lexical clean-up for paths that do not exist (payloads from elsewhere):
/// drops `.` and resolves `..` without touching the file system.
fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::Command;

    fn git(dir: &Path, args: &[&str]) {
        let status = Command::new("git")
            .args([
                "-c",
                "user.name=t",
                "-c",
                "user.email=t@t",
                "-c",
                "init.defaultBranch=main",
            ])
            .args(args)
            .current_dir(dir)
            .output()
            .expect("git runs");
        assert!(status.status.success(), "{args:?}: {status:?}");
    }

    /// What `identify` makes of an existing folder without git.
    fn canonical(dir: &Path) -> PathBuf {
        let real = dir.canonicalize().unwrap();
        if cfg!(windows) {
            PathBuf::from(plain_windows_path(real.to_str().unwrap()))
        } else {
            real
        }
    }

    fn repo(dir: &Path) {
        std::fs::create_dir_all(dir).unwrap();
        git(dir, &["init", "-q"]);
        std::fs::write(dir.join("README"), "x").unwrap();
        git(dir, &["add", "."]);
        git(dir, &["commit", "-qm", "init"]);
    }

    #[test]
    fn windows_verbatim_paths_become_plain() {
        assert_eq!(plain_windows_path(r"\\?\C:\src\api"), r"C:\src\api");
        assert_eq!(plain_windows_path(r"\\?\c:\src\api"), r"C:\src\api");
        assert_eq!(plain_windows_path(r"c:\src\api"), r"C:\src\api");
        assert_eq!(plain_windows_path(r"C:\src\api"), r"C:\src\api");
        assert_eq!(plain_windows_path(r"\\?\D:"), r"D:");
        assert_eq!(
            plain_windows_path(r"\\?\UNC\server\share\api"),
            r"\\server\share\api"
        );
        assert_eq!(
            plain_windows_path(r"\\server\share\api"),
            r"\\server\share\api"
        );
    }

    #[test]
    fn windows_verbatim_paths_that_need_the_prefix_keep_it() {
        for kept in [
            r"\\?\Volume{0b1c2d3e-0000-0000-0000-100000000000}\src",
            r"\\?\C:\src\con",
            r"\\?\C:\src\Aux.txt",
            r"\\?\C:\src\COM1",
            r"\\?\C:\src\api.",
            r"\\?\C:\src\api ",
        ] {
            assert_eq!(plain_windows_path(kept), kept);
        }
        // Names that only look like devices are not devices.
        assert_eq!(plain_windows_path(r"\\?\C:\console"), r"C:\console");
        assert_eq!(plain_windows_path(r"\\?\C:\COM10"), r"C:\COM10");
        // Unix paths pass through.
        assert_eq!(plain_windows_path("/home/me/api"), "/home/me/api");
    }

    #[test]
    fn project_dir_wins_over_cwd() {
        let tmp = tempfile::tempdir().unwrap();
        let a = tmp.path().join("a");
        let b = tmp.path().join("b");
        std::fs::create_dir_all(&a).unwrap();
        std::fs::create_dir_all(&b).unwrap();
        let id = resolve(a.to_str(), b.to_str()).unwrap();
        assert_eq!(id.root, canonical(&a));
        let id = resolve(Some(""), b.to_str()).unwrap();
        assert_eq!(id.root, canonical(&b));
        assert_eq!(resolve(None, None), None);
    }

    /// Each agent names the project with other fields (see
    /// docs on hook protocols): all must come to one project.
    #[test]
    #[cfg(unix)] // symlinks and git repositories
    fn every_agent_names_the_same_project() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("shop");
        repo(&root);
        let src = root.join("src");
        std::fs::create_dir_all(&src).unwrap();
        let link = tmp.path().join("shop-link");
        std::os::unix::fs::symlink(&root, &link).unwrap();
        let (root_s, src_s, link_s) = (
            root.to_str().unwrap(),
            src.to_str().unwrap(),
            link.to_str().unwrap(),
        );
        let with_slash = format!("{root_s}/");
        let forms: [(&str, Option<&str>, Option<&str>); 7] = [
            // (agent, the stable project dir it gives, the payload's cwd)
            ("claude-code: CLAUDE_PROJECT_DIR", Some(root_s), Some(src_s)),
            ("claude-code: cwd only", None, Some(root_s)),
            ("codex: cwd in a subdirectory", None, Some(src_s)),
            ("gemini: GEMINI_PROJECT_DIR", Some(src_s), Some(src_s)),
            (
                "cursor: workspace_roots[0], empty cwd",
                Some(root_s),
                Some(""),
            ),
            (
                "cursor: CURSOR_PROJECT_DIR with a slash",
                Some(&with_slash),
                None,
            ),
            ("any: through a symlink", Some(link_s), None),
        ];
        let expected = identify(&root);
        for (agent, project_dir, cwd) in forms {
            assert_eq!(
                resolve(project_dir, cwd).as_ref(),
                Some(&expected),
                "{agent}"
            );
        }
        // Cursor's tool events may carry an empty cwd and nothing else.
        assert_eq!(resolve(None, Some("")), None);
    }

    #[test]
    fn subdirectory_of_a_repo_is_the_repo() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("shop");
        repo(&root);
        let deep = root.join("src/billing");
        std::fs::create_dir_all(&deep).unwrap();
        let id = identify(&deep);
        assert_eq!(id.root, canonical(&root));
        assert_eq!(id.name, "shop");
    }

    #[test]
    fn linked_worktree_maps_to_main_repository() {
        let tmp = tempfile::tempdir().unwrap();
        let main = tmp.path().join("main-repo");
        repo(&main);
        let wt = tmp.path().join("elsewhere/feature-x");
        git(&main, &["worktree", "add", "-q", wt.to_str().unwrap()]);
        let id = identify(&wt.join("."));
        assert_eq!(id.root, canonical(&main));
        assert_eq!(id.name, "main-repo");
    }

    #[test]
    fn worktree_layouts_name_their_repository() {
        let cases = [
            ("/u/work/cli/.worktrees/2", Some("/u/work/cli")),
            ("/u/work/cli/.worktrees/2/src/x", Some("/u/work/cli")),
            ("/u/p/shop/.claude/worktrees/fix-a", Some("/u/p/shop")),
            ("/u/p/shop-worktrees/shop-gqc", Some("/u/p/shop")),
            ("/u/p/shop_worktrees/b", Some("/u/p/shop")),
            ("/u/p/shop", None),
            ("/u/p/worktrees/a", None),
            ("/u/p/.worktrees", None),
            ("/u/p/-worktrees/a", None),
        ];
        for (dir, repo) in cases {
            assert_eq!(
                worktree_repository(Path::new(dir)),
                repo.map(PathBuf::from),
                "{dir}"
            );
        }
    }

    #[test]
    fn same_named_folders_stay_apart() {
        let tmp = tempfile::tempdir().unwrap();
        let one = tmp.path().join("work/api");
        let two = tmp.path().join("play/api");
        repo(&one);
        repo(&two);
        let (a, b) = (identify(&one), identify(&two));
        assert_eq!(a.name, b.name);
        assert_ne!(a.root, b.root);
    }

    #[test]
    fn symlinked_path_is_the_same_project() {
        let tmp = tempfile::tempdir().unwrap();
        let real = tmp.path().join("real");
        repo(&real);
        #[cfg(unix)]
        {
            let link = tmp.path().join("link");
            std::os::unix::fs::symlink(&real, &link).unwrap();
            assert_eq!(identify(&link).root, identify(&real).root);
        }
    }

    #[test]
    fn missing_directories_are_normalized_lexically() {
        let id = identify(Path::new("/no/such/./place/../dir"));
        assert_eq!(id.root, Path::new("/no/such/dir"));
        assert_eq!(id.name, "dir");
    }

    #[test]
    fn bare_repository_names_drop_dot_git() {
        assert_eq!(display_name(Path::new("/srv/tools.git")), "tools");
        assert_eq!(display_name(Path::new("/")), "/");
    }

    /// Only small regular files are read; anything else is None at once
    /// (a FIFO would block an open for reading; `/dev/zero` never ends).
    #[cfg(unix)]
    #[test]
    fn read_small_refuses_what_is_not_a_small_regular_file() {
        let tmp = tempfile::tempdir().unwrap();
        let file = tmp.path().join("HEAD");
        std::fs::write(&file, "ref: refs/heads/main\n").unwrap();
        assert_eq!(read_small(&file).as_deref(), Some("ref: refs/heads/main\n"));

        let fifo = tmp.path().join("fifo");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        assert_eq!(read_small(&fifo), None);

        let zero = tmp.path().join("zero");
        std::os::unix::fs::symlink("/dev/zero", &zero).unwrap();
        assert_eq!(read_small(&zero), None);

        let huge = tmp.path().join("huge");
        std::fs::File::create(&huge)
            .unwrap()
            .set_len(SMALL_FILE_LIMIT + 1)
            .unwrap();
        assert_eq!(read_small(&huge), None);

        let a = tmp.path().join("a");
        std::os::unix::fs::symlink(tmp.path().join("b"), &a).unwrap();
        std::os::unix::fs::symlink(&a, tmp.path().join("b")).unwrap();
        assert_eq!(read_small(&a), None);
        assert_eq!(read_small(tmp.path()), None);
    }
}
