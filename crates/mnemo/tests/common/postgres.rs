//! A real PostgreSQL for the sync tests: Debian's `postgresql` package,
//! `initdb` and `pg_ctl` on a temporary directory and a free loopback port.
//! PostgreSQL refuses to run as root, so under root the cluster belongs to
//! the package's `postgres` user (the directory is handed to it). Without
//! the package the tests are skipped with a loud message, except under CI
//! (`CI` set), where they fail.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

pub struct Postgres {
    dir: tempfile::TempDir,
    bin: PathBuf,
    pub port: u16,
}

/// The newest installed `/usr/lib/postgresql/N/bin`.
fn bin_dir() -> Option<PathBuf> {
    let mut versions: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .ok()?
        .flatten()
        .filter_map(|e| {
            let n = e.file_name().to_str()?.parse().ok()?;
            let bin = e.path().join("bin");
            bin.join("initdb").exists().then_some((n, bin))
        })
        .collect();
    versions.sort();
    versions.pop().map(|(_, bin)| bin)
}

/// A loopback port nobody listens on right now.
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

fn is_root() -> bool {
    unsafe { libc::geteuid() == 0 }
}

impl Postgres {
    /// A fresh cluster, started; None (after saying so) when PostgreSQL is
    /// not installed and this is not CI.
    pub fn start() -> Option<Postgres> {
        let Some(bin) = bin_dir() else {
            let message = "PostgreSQL is not installed (apt-get install -y postgresql): \
                           the sync tests need a real one";
            assert!(std::env::var_os("CI").is_none(), "{message}");
            eprintln!("\n\n!!! SKIPPED: {message} !!!\n\n");
            return None;
        };
        let dir = tempfile::Builder::new()
            .prefix("mnemo-pg")
            .tempdir()
            .unwrap();
        if is_root() {
            let status = Command::new("chown")
                .args(["-R", "postgres:"])
                .arg(dir.path())
                .status()
                .unwrap();
            assert!(status.success(), "chown to the postgres user");
        }
        let pg = Postgres {
            dir,
            bin,
            port: free_port(),
        };
        let out = pg.tool("initdb", |c| {
            c.arg("-D")
                .arg(pg.data_dir())
                .args(["-A", "trust", "-U", "mnemo", "--no-sync"]);
        });
        assert!(
            out.status.success(),
            "initdb: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        pg.start_server();
        Some(pg)
    }

    /// Runs a PostgreSQL program as the cluster's owner.
    fn tool(&self, name: &str, args: impl FnOnce(&mut Command)) -> Output {
        let program = self.bin.join(name);
        let mut c = if is_root() {
            let mut c = Command::new("runuser");
            c.args(["-u", "postgres", "--"]).arg(program);
            c
        } else {
            Command::new(program)
        };
        args(&mut c);
        c.env_remove("PGDATA").output().unwrap()
    }

    pub fn data_dir(&self) -> PathBuf {
        self.dir.path().join("data")
    }

    fn socket_dir(&self) -> &Path {
        self.dir.path()
    }

    pub fn start_server(&self) {
        let options = format!(
            "-p {} -k {} -c listen_addresses=127.0.0.1 -c fsync=off",
            self.port,
            self.socket_dir().display()
        );
        let out = self.tool("pg_ctl", |c| {
            c.arg("-D")
                .arg(self.data_dir())
                .args(["-w", "-l"])
                .arg(self.dir.path().join("log"))
                .args(["-o", &options, "start"]);
        });
        assert!(
            out.status.success(),
            "pg_ctl start: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }

    pub fn stop_server(&self) {
        let _ = self.tool("pg_ctl", |c| {
            c.arg("-D")
                .arg(self.data_dir())
                .args(["-w", "-m", "fast", "stop"]);
        });
    }

    /// Kills the database as a crash would (immediate shutdown: no
    /// checkpoint; the next start recovers from the WAL).
    pub fn kill_server(&self) {
        let _ = self.tool("pg_ctl", |c| {
            c.arg("-D")
                .arg(self.data_dir())
                .args(["-w", "-m", "immediate", "stop"]);
        });
    }

    pub fn url(&self) -> String {
        format!("postgres://mnemo@127.0.0.1:{}/postgres", self.port)
    }

    /// Runs SQL with psql; the rows, one per line, columns split by `|`.
    pub fn sql(&self, sql: &str) -> String {
        let out = self.tool("psql", |c| {
            c.args(["-h", "127.0.0.1", "-p", &self.port.to_string()])
                .args([
                    "-U",
                    "mnemo",
                    "-d",
                    "postgres",
                    "-At",
                    "-v",
                    "ON_ERROR_STOP=1",
                    "-c",
                    sql,
                ]);
        });
        assert!(
            out.status.success(),
            "psql {sql}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).trim().to_owned()
    }
}

impl Drop for Postgres {
    fn drop(&mut self) {
        let _ = self.tool("pg_ctl", |c| {
            c.arg("-D")
                .arg(self.data_dir())
                .args(["-w", "-m", "immediate", "stop"]);
        });
    }
}
