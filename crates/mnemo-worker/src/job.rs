//! Windows: a Job Object that ends the worker's descendants with it.
//!
//! Unix ends them through the worker's process group (see `service`) and,
//! after a SIGKILL, through the marked environment (see `orphans`). Windows
//! has neither, but it has Job Objects: a job created with
//! `JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE` terminates every process in it when
//! its last handle closes. The worker puts itself in such a job at start;
//! every process it starts (a provider's CLI) and theirs join the job by
//! inheritance, and the handle is closed by the OS when the worker exits,
//! however it exits (`TerminateProcess`, Task Manager, a crash). Nested jobs
//! (Windows 8 and later) let this work inside a host's own job too.

use std::io;
use std::os::windows::io::{AsRawHandle, BorrowedHandle};

use windows_sys::Win32::Foundation::{CloseHandle, HANDLE};
use windows_sys::Win32::System::JobObjects::{
    AssignProcessToJobObject, CreateJobObjectW, JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE,
    JOBOBJECT_EXTENDED_LIMIT_INFORMATION, JobObjectExtendedLimitInformation,
    SetInformationJobObject,
};
use windows_sys::Win32::System::Threading::GetCurrentProcess;

/// A kill-on-close job; closing (dropping) it ends every process in it.
#[derive(Debug)]
pub struct Job(HANDLE);

// SAFETY: a job handle may be used and closed from any thread.
unsafe impl Send for Job {}

impl Job {
    /// A new, empty job that kills its processes when closed.
    pub fn kill_on_close() -> io::Result<Job> {
        // SAFETY: null attributes and name are allowed; the result is checked.
        let handle = unsafe { CreateJobObjectW(std::ptr::null(), std::ptr::null()) };
        if handle.is_null() {
            return Err(io::Error::last_os_error());
        }
        let job = Job(handle);
        // SAFETY: an all-zero JOBOBJECT_EXTENDED_LIMIT_INFORMATION is valid.
        let mut limits: JOBOBJECT_EXTENDED_LIMIT_INFORMATION = unsafe { std::mem::zeroed() };
        limits.BasicLimitInformation.LimitFlags = JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE;
        // SAFETY: the pointer and size describe `limits`, which outlives the call.
        let ok = unsafe {
            SetInformationJobObject(
                job.0,
                JobObjectExtendedLimitInformation,
                (&raw const limits).cast(),
                size_of::<JOBOBJECT_EXTENDED_LIMIT_INFORMATION>() as u32,
            )
        };
        if ok == 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(job)
    }

    /// Puts the process behind `process` (a process handle with
    /// `PROCESS_SET_QUOTA | PROCESS_TERMINATE` access) in the job.
    pub fn assign(&self, process: BorrowedHandle<'_>) -> io::Result<()> {
        let process = process.as_raw_handle() as HANDLE;
        // SAFETY: both handles are valid for the duration of the call.
        if unsafe { AssignProcessToJobObject(self.0, process) } == 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }
}

impl Drop for Job {
    fn drop(&mut self) {
        // SAFETY: the handle is ours and closed once.
        unsafe { CloseHandle(self.0) };
    }
}

/// Puts the worker itself in a kill-on-close job whose handle lives as long
/// as the process, so that everything it starts ends when it ends. Call
/// before starting any child.
pub fn contain_descendants() -> io::Result<()> {
    let job = Job::kill_on_close()?;
    // SAFETY: GetCurrentProcess returns a pseudo-handle with full access
    // that is valid for the life of the process and needs no closing.
    let me = unsafe { BorrowedHandle::borrow_raw(GetCurrentProcess() as _) };
    job.assign(me)?;
    // Never closed by us: the OS closes it when the worker exits.
    std::mem::forget(job);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::windows::io::AsHandle;
    use std::time::{Duration, Instant};

    /// Not a test of its own: the long-running child of the test below.
    #[test]
    #[ignore]
    fn sleeper() {
        std::thread::sleep(Duration::from_secs(60));
    }

    #[test]
    fn closing_the_job_ends_its_processes() {
        let mut child = std::process::Command::new(std::env::current_exe().unwrap())
            .args(["--exact", "job::tests::sleeper", "--ignored", "--quiet"])
            .stdout(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let job = Job::kill_on_close().unwrap();
        job.assign(child.as_handle()).unwrap();
        assert!(child.try_wait().unwrap().is_none(), "the sleeper runs");
        let started = Instant::now();
        drop(job);
        child.wait().unwrap();
        // The exit code of a process ended by its job is not specified;
        // ending well before the sleeper's 60 s is what shows the job did it.
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "{:?}",
            started.elapsed()
        );
    }
}
