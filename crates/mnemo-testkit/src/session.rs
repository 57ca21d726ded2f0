//! One headless session of a pinned agent CLI, built up and then run.
//!
//! [`Run`] owns what every host's session shares: the project as working
//! directory, a cleared environment with `PATH` (the directories given to
//! [`path_prepend`](Run::path_prepend) first, then the current `PATH`, so
//! that `node`, `git` and the binaries under test are found), the fake
//! `HOME` and `TERM=dumb`, then the host's recipe, then the extra
//! [`env`](Run::env) (which may override the recipe's) and
//! [`args`](Run::args); a deadline after which the whole process group is
//! killed; and the output captured. Each host states only its recipe, as a
//! [`Cli`]: its pinned binary, the variables and arguments of a headless run
//! against a [`StandIn`](crate::StandIn), and what its output means.

use std::ffi::{OsStr, OsString};
use std::marker::PhantomData;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus};
use std::time::Duration;

use anyhow::{Context, bail};

use crate::process::{run_with_timeout, tail};

/// One agent CLI's headless recipe.
pub trait Cli: Sized {
    /// How the CLI is named in messages (`Gemini CLI`).
    const TITLE: &'static str;
    /// How long a session may take unless [`Run::timeout`] says otherwise.
    const TIMEOUT: Duration;
    /// What a finished session left behind.
    type Output;

    /// The pinned binary, installed first if needed.
    fn binary() -> anyhow::Result<PathBuf>;

    /// Adds the host's variables and arguments to `cmd` (after `PATH`,
    /// `HOME` and `TERM`), writing any configuration file the run needs.
    fn recipe(session: &Session<'_>, cmd: &mut Command) -> anyhow::Result<()>;

    /// The session's output, from a run that finished in time.
    fn output(finished: Finished) -> Self::Output;
}

/// What a recipe is given: the session's settings, all set.
pub struct Session<'a> {
    pub prompt: &'a str,
    pub project_dir: &'a Path,
    pub home: &'a Path,
    pub base_url: &'a str,
}

/// A session that finished within its time.
pub struct Finished {
    pub status: ExitStatus,
    pub stdout: String,
    pub stderr: String,
    pub elapsed: Duration,
}

/// One headless session of the CLI `C`; the project dir, `HOME` and base
/// URL must be set before [`run`](Self::run).
#[derive(Debug, Clone)]
pub struct Run<C> {
    prompt: String,
    project_dir: Option<PathBuf>,
    home: Option<PathBuf>,
    base_url: Option<String>,
    binary: Option<PathBuf>,
    path_prepend: Vec<PathBuf>,
    env: Vec<(OsString, OsString)>,
    args: Vec<OsString>,
    timeout: Duration,
    cli: PhantomData<C>,
}

impl<C: Cli> Run<C> {
    /// A session with this user prompt.
    pub fn new(prompt: impl Into<String>) -> Self {
        Run {
            prompt: prompt.into(),
            project_dir: None,
            home: None,
            base_url: None,
            binary: None,
            path_prepend: Vec::new(),
            env: Vec::new(),
            args: Vec::new(),
            timeout: C::TIMEOUT,
            cli: PhantomData,
        }
    }

    /// The working directory of the session (the "project").
    pub fn project_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.project_dir = Some(dir.into());
        self
    }

    /// The fake `HOME`, whose configuration holds mnemo's hooks.
    pub fn home(mut self, dir: impl Into<PathBuf>) -> Self {
        self.home = Some(dir.into());
        self
    }

    /// The stand-in's base URL, in the API flavour the CLI speaks.
    pub fn base_url(mut self, url: impl Into<String>) -> Self {
        self.base_url = Some(url.into());
        self
    }

    /// Run this binary instead of the pinned one.
    pub fn binary(mut self, path: impl Into<PathBuf>) -> Self {
        self.binary = Some(path.into());
        self
    }

    /// Put `dir` in front of `PATH` (e.g. the directory of the mnemo binary
    /// under test). Later calls go in front of earlier ones.
    pub fn path_prepend(mut self, dir: impl Into<PathBuf>) -> Self {
        self.path_prepend.insert(0, dir.into());
        self
    }

    /// An extra environment variable (applied after the recipe's, so it may
    /// override them).
    pub fn env(mut self, key: impl AsRef<OsStr>, value: impl AsRef<OsStr>) -> Self {
        self.env
            .push((key.as_ref().to_owned(), value.as_ref().to_owned()));
        self
    }

    /// An extra argument, after the recipe's.
    pub fn arg(mut self, arg: impl AsRef<OsStr>) -> Self {
        self.args.push(arg.as_ref().to_owned());
        self
    }

    /// Extra arguments, after the recipe's.
    pub fn args(mut self, args: impl IntoIterator<Item = impl AsRef<OsStr>>) -> Self {
        self.args
            .extend(args.into_iter().map(|a| a.as_ref().to_owned()));
        self
    }

    /// How long the session may take before its process group is killed.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// The command [`run`](Self::run) would spawn (installs the CLI if
    /// needed, writes the configuration the recipe needs).
    pub fn command(&self) -> anyhow::Result<Command> {
        let session = self.session()?;
        let binary = match &self.binary {
            Some(binary) => binary.clone(),
            None => C::binary()?,
        };
        let mut cmd = Command::new(binary);
        cmd.current_dir(session.project_dir)
            .env_clear()
            .env("PATH", self.path()?)
            .env("HOME", session.home)
            .env("TERM", "dumb");
        C::recipe(&session, &mut cmd)?;
        for (key, value) in &self.env {
            cmd.env(key, value);
        }
        cmd.args(&self.args);
        Ok(cmd)
    }

    /// Runs the session to its end. A non-zero exit is not an error (the
    /// output has the status); failing to start and timing out are (the
    /// error carries what the process printed).
    pub fn run(&self) -> anyhow::Result<C::Output> {
        let mut cmd = self.command()?;
        let done = run_with_timeout(&mut cmd, self.timeout)
            .with_context(|| format!("starting {}: {cmd:?}", C::TITLE))?;
        let stdout = String::from_utf8_lossy(&done.stdout).into_owned();
        let stderr = String::from_utf8_lossy(&done.stderr).into_owned();
        let status = match (done.timed_out, done.status) {
            (false, Some(status)) => status,
            _ => bail!(
                "{} did not finish within {:?}; its process group was killed.\n\
                 --- stdout ---\n{}\n--- stderr ---\n{}",
                C::TITLE,
                self.timeout,
                tail(stdout.as_bytes(), 8000),
                tail(stderr.as_bytes(), 8000)
            ),
        };
        Ok(C::output(Finished {
            status,
            stdout,
            stderr,
            elapsed: done.elapsed,
        }))
    }

    /// The settings a recipe needs; an error names the one not set.
    fn session(&self) -> anyhow::Result<Session<'_>> {
        let unset = |what: &str| format!("{} run: {what} is not set", C::TITLE);
        Ok(Session {
            prompt: &self.prompt,
            project_dir: self
                .project_dir
                .as_deref()
                .with_context(|| unset("project_dir"))?,
            home: self.home.as_deref().with_context(|| unset("home"))?,
            base_url: self
                .base_url
                .as_deref()
                .with_context(|| unset("base_url"))?,
        })
    }

    /// The prepended directories, then the current `PATH`.
    fn path(&self) -> anyhow::Result<OsString> {
        let current = std::env::var_os("PATH").unwrap_or_default();
        std::env::join_paths(
            self.path_prepend
                .iter()
                .cloned()
                .chain(std::env::split_paths(&current)),
        )
        .with_context(|| format!("{} run: a PATH entry contains ':'", C::TITLE))
    }
}

// The tests run `sh` scripts: Unix only.
#[cfg(all(test, unix))]
mod tests {
    use super::*;

    /// `sh` as a CLI whose recipe sets a variable and prints what the
    /// session gave it.
    #[derive(Debug, Clone)]
    struct Shell;

    impl Cli for Shell {
        const TITLE: &'static str = "Shell";
        const TIMEOUT: Duration = Duration::from_secs(30);
        type Output = Finished;

        fn binary() -> anyhow::Result<PathBuf> {
            Ok(PathBuf::from("/bin/sh"))
        }

        fn recipe(session: &Session<'_>, cmd: &mut Command) -> anyhow::Result<()> {
            cmd.env("RECIPE", "recipe")
                .env("BASE_URL", session.base_url)
                .arg("-c")
                .arg(
                    "printf '%s|%s|%s|%s|%s|%s|%s' \"$(pwd)\" \"$HOME\" \"$TERM\" \
                     \"${PATH%%:*}\" \"$RECIPE\" \"$BASE_URL\" \"$1\"",
                )
                .arg("sh");
            Ok(())
        }

        fn output(finished: Finished) -> Finished {
            finished
        }
    }

    #[test]
    fn the_session_gets_the_shared_environment_then_the_recipe_then_the_extras() {
        let dir = tempfile::tempdir().unwrap();
        let project = std::fs::canonicalize(dir.path()).unwrap();
        let done = Run::<Shell>::new("unused")
            .project_dir(&project)
            .home("/fake/home")
            .base_url("http://127.0.0.1:9")
            .path_prepend("/second")
            .path_prepend("/first")
            .env("RECIPE", "extra")
            .arg("an extra arg")
            .run()
            .unwrap();
        assert!(done.status.success(), "{}", done.stderr);
        assert_eq!(
            done.stdout,
            format!(
                "{}|/fake/home|dumb|/first|extra|http://127.0.0.1:9|an extra arg",
                project.display()
            )
        );
    }

    #[test]
    fn an_unset_setting_is_named() {
        let err = Run::<Shell>::new("p")
            .project_dir("/")
            .base_url("http://127.0.0.1:9")
            .command()
            .unwrap_err();
        assert_eq!(err.to_string(), "Shell run: home is not set");
    }

    #[test]
    fn a_session_out_of_time_is_an_error_with_its_output() {
        use std::os::unix::fs::PermissionsExt;
        let slow = tempfile::tempdir().unwrap();
        let script = slow.path().join("slow");
        std::fs::write(&script, "#!/bin/sh\necho started\nsleep 30\n").unwrap();
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
        let err = Run::<Shell>::new("p")
            .project_dir("/")
            .home("/")
            .base_url("u")
            .binary(&script)
            .timeout(Duration::from_millis(500))
            .run()
            .err()
            .expect("timed out");
        let message = err.to_string();
        assert!(
            message.starts_with("Shell did not finish within"),
            "{message}"
        );
        assert!(message.contains("started"), "{message}");
    }
}
