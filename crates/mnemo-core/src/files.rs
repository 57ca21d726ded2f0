//! Reading files that someone else named: a transcript path from a hook, a
//! `*.jsonl` found in a folder, a database's `-wal`. Only regular files are
//! read, and never more than a stated number of bytes, so that a FIFO (which
//! blocks until a writer comes), a device such as `/dev/zero` (endless) or a
//! symlink to either cannot hang or exhaust the reader.

use std::fs::File;
use std::io::{self, Read};
use std::path::Path;

/// Opens `path` for reading if it is a regular file (after symlinks).
/// The open itself cannot block: on Unix it is non-blocking, so a FIFO
/// without a writer opens at once and is then refused as not a file.
pub fn open_regular(path: &Path) -> io::Result<File> {
    let file = open_nonblocking(path)?;
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{} is not a regular file ({})", path.display(), kind(&meta)),
        ));
    }
    Ok(file)
}

/// [`open_regular`], read through a cap: at most `cap` bytes come out.
pub fn read_capped(path: &Path, cap: u64) -> io::Result<io::Take<File>> {
    Ok(open_regular(path)?.take(cap))
}

/// Copies the regular file `from` to `to`, refusing anything else and
/// anything longer than `cap` bytes; returns the bytes copied.
pub fn copy_regular(from: &Path, to: &Path, cap: u64) -> io::Result<u64> {
    let file = open_regular(from)?;
    let len = file.metadata()?.len();
    if len > cap {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!(
                "{} is {len} bytes, over the {cap}-byte limit",
                from.display()
            ),
        ));
    }
    let mut out = File::create(to)?;
    io::copy(&mut file.take(cap), &mut out)
}

#[cfg(unix)]
fn open_nonblocking(path: &Path) -> io::Result<File> {
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
}

#[cfg(not(unix))]
fn open_nonblocking(path: &Path) -> io::Result<File> {
    File::open(path)
}

fn kind(meta: &std::fs::Metadata) -> &'static str {
    if meta.is_dir() {
        return "a directory";
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        let t = meta.file_type();
        if t.is_fifo() {
            return "a FIFO";
        }
        if t.is_char_device() || t.is_block_device() {
            return "a device";
        }
        if t.is_socket() {
            return "a socket";
        }
    }
    "not a file"
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    fn fifo(dir: &Path) -> std::path::PathBuf {
        let path = dir.join("pipe.jsonl");
        let c = std::ffi::CString::new(path.to_str().unwrap()).unwrap();
        // SAFETY: a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        path
    }

    #[test]
    fn a_fifo_without_writer_is_refused_at_once() {
        let dir = tempfile::tempdir().unwrap();
        let err = open_regular(&fifo(dir.path())).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::InvalidInput);
        assert!(err.to_string().contains("FIFO"), "{err}");
    }

    #[test]
    fn a_symlink_to_dev_zero_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let link = dir.path().join("zero.jsonl");
        std::os::unix::fs::symlink("/dev/zero", &link).unwrap();
        let err = open_regular(&link).unwrap_err();
        assert!(err.to_string().contains("device"), "{err}");
    }

    #[test]
    fn a_regular_file_reads_up_to_the_cap() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.txt");
        std::fs::write(&path, b"0123456789").unwrap();
        let mut out = String::new();
        read_capped(&path, 4)
            .unwrap()
            .read_to_string(&mut out)
            .unwrap();
        assert_eq!(out, "0123");
        let copy = dir.path().join("b.txt");
        assert!(copy_regular(&path, &copy, 4).is_err());
        assert_eq!(copy_regular(&path, &copy, 10).unwrap(), 10);
    }
}
