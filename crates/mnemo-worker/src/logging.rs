//! The worker's log: `logs/worker.log` in the data directory, rotated by size.
//!
//! A detached worker has no terminal, so the file is the only place its
//! story is told (and `mnemo doctor` / `mnemo worker start` point at it).
//! tracing-appender rotates by time only, so rotation is done here: when a
//! write would take the file past `max_bytes`, `worker.log` becomes
//! `worker.log.1`, `.1` becomes `.2`, and so on up to `keep` old files.
//! Writes are synchronous and small (one formatted event each), which keeps
//! the worker free of a logging thread and its buffer.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use tracing_subscriber::EnvFilter;
use tracing_subscriber::fmt::MakeWriter;

pub const WORKER_LOG_FILE: &str = "worker.log";

/// A log file that rotates itself by size.
pub struct RotatingFile {
    path: PathBuf,
    max_bytes: u64,
    keep: u32,
    file: Option<File>,
    size: u64,
}

impl RotatingFile {
    pub fn open(path: &Path, max_bytes: u64, keep: u32) -> std::io::Result<RotatingFile> {
        if let Some(dir) = path.parent() {
            mnemo_core::paths::create_private_dir(dir)?;
        }
        let file = open_append(path)?;
        let size = file.metadata()?.len();
        Ok(RotatingFile {
            path: path.to_owned(),
            max_bytes: max_bytes.max(1024),
            keep,
            file: Some(file),
            size,
        })
    }

    fn numbered(&self, n: u32) -> PathBuf {
        let mut name = self.path.file_name().unwrap_or_default().to_owned();
        name.push(format!(".{n}"));
        self.path.with_file_name(name)
    }

    fn rotate(&mut self) -> std::io::Result<()> {
        self.file = None;
        if self.keep == 0 {
            let _ = std::fs::remove_file(&self.path);
        } else {
            let _ = std::fs::remove_file(self.numbered(self.keep));
            for n in (1..self.keep).rev() {
                let _ = std::fs::rename(self.numbered(n), self.numbered(n + 1));
            }
            let _ = std::fs::rename(&self.path, self.numbered(1));
        }
        self.file = Some(open_append(&self.path)?);
        self.size = 0;
        Ok(())
    }
}

fn open_append(path: &Path) -> std::io::Result<File> {
    // Ours alone: an older, looser file is tightened, another user's refused.
    mnemo_core::paths::restrict_file(path)?;
    let mut options = OpenOptions::new();
    options.append(true).create(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    options.open(path)
}

impl Write for RotatingFile {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if self.size > 0 && self.size + buf.len() as u64 > self.max_bytes {
            self.rotate()?;
        }
        if self.file.is_none() {
            self.file = Some(open_append(&self.path)?);
        }
        let n = self.file.as_mut().map_or(Ok(0), |f| f.write(buf))?;
        self.size += n as u64;
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.file.as_mut().map_or(Ok(()), File::flush)
    }
}

/// The log file, plus stderr: a terminal, or the journal of a service
/// manager (systemd, launchd, docker) that runs `mnemo worker run`. A worker
/// spawned by a hook has its stderr on /dev/null.
struct Sink {
    file: Mutex<RotatingFile>,
    echo: bool,
}

struct SinkWriter<'a>(&'a Sink);

impl Write for SinkWriter<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if self.0.echo {
            let _ = std::io::stderr().write_all(buf);
        }
        match self.0.file.lock() {
            Ok(mut f) => f.write(buf),
            Err(poisoned) => poisoned.into_inner().write(buf),
        }
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl<'a> MakeWriter<'a> for Sink {
    type Writer = SinkWriter<'a>;
    fn make_writer(&'a self) -> Self::Writer {
        SinkWriter(self)
    }
}

/// Sends tracing to `path` (rotating) and to stderr; never to stdout. `MNEMO_LOG` filters (`info` by default, e.g. `mnemo=debug`).
pub fn init(path: &Path, max_bytes: u64, keep: u32) -> std::io::Result<()> {
    let file = RotatingFile::open(path, max_bytes, keep)?;
    let sink = Sink {
        file: Mutex::new(file),
        echo: true,
    };
    let filter = EnvFilter::try_from_env("MNEMO_LOG").unwrap_or_else(|_| EnvFilter::new("info"));
    // A second init (tests calling run twice in one process) keeps the first.
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_ansi(false)
        .with_target(false)
        .with_writer(sink)
        .try_init();
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rotates_by_size_and_keeps_n_files() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("logs/worker.log");
        let mut log = RotatingFile::open(&path, 1024, 2).unwrap();
        let line = [b'x'; 100];
        for _ in 0..50 {
            log.write_all(&line).unwrap();
        }
        let size = |p: PathBuf| std::fs::metadata(p).map(|m| m.len()).unwrap_or(0);
        assert!(size(path.clone()) <= 1024);
        assert_eq!(size(tmp.path().join("logs/worker.log.1")), 1000);
        assert_eq!(size(tmp.path().join("logs/worker.log.2")), 1000);
        assert!(!tmp.path().join("logs/worker.log.3").exists());
    }
}
