//! The hook boundary: the only code on the hook path that reads stdin, writes
//! stdout or stderr, or chooses the exit code.
//!
//! Policy (the host is the user's coding agent; we must never disturb it):
//! - stdout carries exactly one JSON object, written once at the end: the
//!   platform's answer, or `{}` when there is nothing to say. Never logs.
//! - stderr carries one short line per warning or error, for a human who
//!   runs the hook by hand or reads the host's debug output. Details go to
//!   `logs/hook.log` in the data directory (stderr if that cannot be
//!   written). Neither ever contains payload contents.
//! - The exit code is always 0. Exit 2 would make the host block the tool
//!   call or the prompt because of *our* trouble; any other code makes it
//!   show an error to the user. Internal failures, panics included, are
//!   logged and swallowed here.
//! - Handlers ([`crate::handler`]) and adapters are pure and never print.
//! - The hook ends within `capture.hook_deadline_ms` of its start, whatever
//!   the host or the disk does: stdin is read for half of it at most (a
//!   stdin that never closes costs its event's body, not the event), and
//!   [`persist`] fits the database and the spool into what is left.

use std::io::{IsTerminal, Read, Write};
use std::panic::{self, AssertUnwindSafe};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use mnemo_core::model::Platform;
use mnemo_core::privacy::Sanitizer;
use mnemo_core::time::{format_rfc3339, now_ms};
use mnemo_core::{Config, DataDir};
use serde_json::Value;

use crate::adapter::{self, Env};
use crate::event::{HookEvent, HookInput};
use crate::handler::{self, Context};
use crate::persist::{Diagnostic, Level, Persisted, persist};
use mnemo_store::capture::Applied;

/// Log files rotate past this size (one old generation is kept).
const LOG_ROTATE_BYTES: u64 = 1024 * 1024;
/// For a payload too large to parse, how much of its head and tail is kept
/// to find its identifiers.
const SALVAGE_HEAD: usize = 256 * 1024;
const SALVAGE_TAIL: usize = 64 * 1024;

/// Runs one hook and returns the process exit code (always 0).
pub fn run(platform_arg: &str, event_arg: Option<&str>, argv_payload: Option<&str>) -> i32 {
    if env_flag("MNEMO_DISABLED") {
        emit_stdout(&Value::Object(Default::default()));
        return 0;
    }
    static PANIC: Mutex<Option<String>> = Mutex::new(None);
    panic::set_hook(Box::new(|info| {
        if let Ok(mut slot) = PANIC.lock() {
            *slot = Some(info.to_string());
        }
    }));

    let started = Instant::now();
    let data = DataDir::resolve();
    let outcome = panic::catch_unwind(AssertUnwindSafe(|| {
        let data = data.as_ref().map_err(|e| e.to_string())?;
        Ok::<_, String>(process(
            platform_arg,
            event_arg,
            argv_payload,
            data,
            started,
        ))
    }));

    let (stdout, mut diagnostics, label) = match outcome {
        Ok(Ok(done)) => done,
        Ok(Err(message)) => (empty(), vec![error(message)], String::new()),
        Err(_) => {
            let message = PANIC
                .lock()
                .ok()
                .and_then(|mut slot| slot.take())
                .unwrap_or_else(|| "unknown panic".to_owned());
            (
                empty(),
                vec![error(format!("internal error: {message}"))],
                String::new(),
            )
        }
    };
    emit_stdout(&stdout);

    if env_flag("MNEMO_HOOK_TRACE") {
        diagnostics.push(Diagnostic {
            level: Level::Info,
            message: format!("done in {:?}", started.elapsed()),
        });
    }
    if !diagnostics.is_empty() {
        report(data.as_ref().ok(), platform_arg, &label, &diagnostics);
    }
    0
}

type Done = (Value, Vec<Diagnostic>, String);

fn process(
    platform_arg: &str,
    event_arg: Option<&str>,
    argv_payload: Option<&str>,
    data: &DataDir,
    started: Instant,
) -> Done {
    let platform = match supported_platform(platform_arg, event_arg, started) {
        Ok(platform) => platform,
        Err(refused) => return refused,
    };
    // Fault injection for the test suite: proves that a panic anywhere on
    // this path still ends in exit 0 with valid JSON.
    if std::env::var("MNEMO_FAULT_INJECT").as_deref() == Ok("panic") {
        panic!("fault injected by MNEMO_FAULT_INJECT");
    }
    let mut diagnostics = Vec::new();
    let loaded = Config::load_lenient(&data.config_path());
    diagnostics.extend(loaded.warnings.into_iter().map(warn));
    let config = loaded.config;
    let deadline = started + Duration::from_millis(config.capture.hook_deadline_ms);
    let Some(input) = read_input(
        platform,
        event_arg,
        argv_payload,
        &config,
        started,
        &mut diagnostics,
    ) else {
        let label = event_arg.unwrap_or_default().to_owned();
        return (empty(), diagnostics, label);
    };
    let label = format!(
        "{} session={}",
        input.event.name(),
        input.session_id.as_deref().unwrap_or("-")
    );
    if let HookEvent::Other { name } = &input.event {
        diagnostics.push(Diagnostic {
            level: Level::Info,
            message: format!("ignored: event `{name}` is not one mnemo captures; nothing to do"),
        });
    }
    let stdout = capture_and_answer(&input, data, config, deadline, &mut diagnostics);
    (stdout, diagnostics, label)
}

/// The platform named on the command line, or what to answer when it is
/// unknown or not supported (its payload drained, so the host never sees a
/// broken pipe).
fn supported_platform(
    platform_arg: &str,
    event_arg: Option<&str>,
    started: Instant,
) -> Result<Platform, Done> {
    let Some(platform) = Platform::parse(platform_arg) else {
        return Err((
            empty(),
            vec![error(format!(
                "unknown platform `{platform_arg}` (expected one of {})",
                Platform::ALL.map(Platform::as_str).join(", ")
            ))],
            String::new(),
        ));
    };
    if !adapter::is_supported(platform) {
        let deadline = Duration::from_millis(Config::default().capture.hook_deadline_ms);
        let _ = read_payload(0, started + deadline / 2);
        let message = format!(
            "ignored: platform `{platform}` is not supported yet; this event was not captured \
             (send Claude Code's payload shape to `mnemo hook raw`)"
        );
        let label = event_arg.unwrap_or("-").to_owned();
        return Err((empty(), vec![warn(message)], label));
    }
    Ok(platform)
}

/// Reads the payload (stdin for half the deadline at most, or the last
/// argument: Codex's `notify` gives hooks no stdin) and parses it for the
/// host; None when nothing could be read at all.
fn read_input(
    platform: Platform,
    event_arg: Option<&str>,
    argv_payload: Option<&str>,
    config: &Config,
    started: Instant,
    diagnostics: &mut Vec<Diagnostic>,
) -> Option<HookInput> {
    let env = Env::for_host(mnemo_core::host::host(platform));
    let stdin_until = started + Duration::from_millis(config.capture.hook_deadline_ms / 2);
    let read = match argv_payload {
        Some(text) => Ok(Payload::Complete(text.as_bytes().to_vec())),
        None => read_payload(config.capture.max_payload_bytes as usize, stdin_until),
    };
    match read {
        Ok(Payload::Complete(bytes)) => Some(parse_complete(
            platform,
            &bytes,
            event_arg,
            &env,
            diagnostics,
        )),
        Ok(Payload::Unfinished(bytes)) => {
            diagnostics.push(warn(format!(
                "stdin was still open after {} ms (half of capture.hook_deadline_ms); \
                 the {} bytes read so far were used",
                config.capture.hook_deadline_ms / 2,
                bytes.len()
            )));
            Some(parse_complete(
                platform,
                &bytes,
                event_arg,
                &env,
                diagnostics,
            ))
        }
        Ok(Payload::Oversized { salvage, total }) => {
            let note = format!(
                "payload of {total} bytes exceeds capture.max_payload_bytes; only its identifiers were kept"
            );
            diagnostics.push(warn(note.clone()));
            Some(adapter::parse_salvaged(
                platform, &salvage, event_arg, &env, note,
            ))
        }
        Err(e) => {
            diagnostics.push(error(format!("cannot read the payload from stdin: {e}")));
            None
        }
    }
}

/// Stores what the event captures, starts the worker when a session or a
/// prompt begins, and answers the host (with memory when the event calls
/// for it), all within `deadline`.
fn capture_and_answer(
    input: &HookInput,
    data: &DataDir,
    mut config: Config,
    deadline: Instant,
    diagnostics: &mut Vec<Diagnostic>,
) -> Value {
    let sanitizer = Sanitizer::new(&config.privacy);
    let plan = handler::plan(
        input,
        &Context {
            config: &config,
            sanitizer: &sanitizer,
            now_ms: now_ms(),
        },
    );
    let mut repeated = false;
    let mut kept = None;
    if let Some(capture) = &plan.capture {
        match persist(capture, data, &config, deadline, &mut kept, diagnostics) {
            Ok(Persisted::Stored(Applied::Duplicate)) => repeated = true,
            Ok(_) => {}
            Err(message) => diagnostics.push(error(message)),
        }
    }
    if matches!(
        input.event,
        HookEvent::SessionStart { .. } | HookEvent::UserPrompt { .. }
    ) && !env_flag("MNEMO_NO_WORKER")
    {
        crate::worker_start::ensure_running(data, &config, diagnostics);
    }
    // Recall's reads and its note of what it gave wait no longer than the
    // deadline either; past it, the note is skipped (logged), not the answer.
    let left = deadline.saturating_duration_since(Instant::now());
    config.store.busy_timeout_ms = config
        .store
        .busy_timeout_ms
        .min(u64::try_from(left.as_millis()).unwrap_or(u64::MAX));
    // The same event delivered again (hooks registered both by `mnemo
    // install` and by the plugin): the first delivery answers with memory;
    // a second copy of it would only cost the agent tokens.
    let response = if repeated {
        plan.response
    } else {
        let stores = crate::recall::Stores::new(data, &config, kept);
        crate::recall::respond(input, plan.response, stores, &config, diagnostics)
    };
    adapter::render(input, &response)
}

fn parse_complete(
    platform: Platform,
    bytes: &[u8],
    event_arg: Option<&str>,
    env: &Env,
    diagnostics: &mut Vec<Diagnostic>,
) -> HookInput {
    if bytes.iter().all(u8::is_ascii_whitespace) {
        diagnostics.push(warn("empty payload on stdin".to_owned()));
        return adapter::parse(platform, &Value::Object(Default::default()), event_arg, env);
    }
    match serde_json::from_slice::<Value>(bytes) {
        Ok(payload @ Value::Object(_)) => adapter::parse(platform, &payload, event_arg, env),
        Ok(_) => {
            diagnostics.push(warn(
                "payload is JSON but not an object; ignored".to_owned(),
            ));
            adapter::inert(platform, event_arg)
        }
        Err(e) => {
            // Keep what can be trusted (the identifiers) rather than nothing.
            let note = format!("payload is not valid JSON ({e}); only its identifiers were kept");
            diagnostics.push(warn(note.clone()));
            adapter::parse_salvaged(platform, bytes, event_arg, env, note)
        }
    }
}

enum Payload {
    Complete(Vec<u8>),
    /// Stdin stayed open past the deadline: what came before it (within
    /// the size limit).
    Unfinished(Vec<u8>),
    /// Too large: the head and tail of it, and its full size.
    Oversized {
        salvage: Vec<u8>,
        total: usize,
    },
}

/// Reads stdin to the end or until `until`, keeping it whole up to `limit`
/// bytes and only a head and tail beyond, so memory and time stay bounded
/// whatever the host sends.
fn read_payload(limit: usize, until: Instant) -> std::io::Result<Payload> {
    let stdin = std::io::stdin();
    if stdin.is_terminal() {
        // Run by hand without a payload: do not wait for typing.
        return Ok(Payload::Complete(Vec::new()));
    }
    let mut lock = stdin.lock();
    let mut buf = Vec::with_capacity(16 * 1024);
    let mut chunk = vec![0u8; 64 * 1024];
    let mut total = 0usize;
    let mut tail: Vec<u8> = Vec::new();
    let mut open = false;
    loop {
        if !wait_readable(until) {
            open = true;
            break;
        }
        let n = match lock.read(&mut chunk) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        total += n;
        if total <= limit {
            buf.extend_from_slice(&chunk[..n]);
        } else {
            if buf.len() > SALVAGE_HEAD {
                buf.truncate(SALVAGE_HEAD);
            }
            tail.extend_from_slice(&chunk[..n]);
            if tail.len() > 2 * SALVAGE_TAIL {
                tail.drain(..tail.len() - SALVAGE_TAIL);
            }
        }
    }
    if total <= limit {
        return Ok(if open {
            Payload::Unfinished(buf)
        } else {
            Payload::Complete(buf)
        });
    }
    let keep_tail = tail.len().min(SALVAGE_TAIL);
    buf.extend_from_slice(&tail[tail.len() - keep_tail..]);
    Ok(Payload::Oversized {
        salvage: buf,
        total,
    })
}

/// Waits until stdin can be read without blocking (data, end of file or an
/// error to report) or `until` passes; false when it passed.
#[cfg(unix)]
fn wait_readable(until: Instant) -> bool {
    loop {
        let left = until.saturating_duration_since(Instant::now());
        let mut fd = libc::pollfd {
            fd: libc::STDIN_FILENO,
            events: libc::POLLIN,
            revents: 0,
        };
        let ms = i32::try_from(left.as_millis()).unwrap_or(i32::MAX);
        // SAFETY: one valid pollfd, on the stack, for the duration of the call.
        let ready = unsafe { libc::poll(&mut fd, 1, ms) };
        match ready {
            0 => return false,
            n if n > 0 => return true,
            _ if std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted => {}
            // poll itself failed: let read() block or report, as before.
            _ => return true,
        }
    }
}

/// Windows has no `poll` for pipes: peek at the pipe until it holds data,
/// reports end of input (a broken pipe makes the peek fail) or `until`
/// passes. A stdin that is not a pipe (a file, the console) fails the peek
/// too and is left to `read`. Sleeps a millisecond between peeks (the
/// timer may round that up to ~15 ms while the host has written nothing).
#[cfg(windows)]
fn wait_readable(until: Instant) -> bool {
    use std::os::windows::io::AsRawHandle;
    use windows_sys::Win32::System::Pipes::PeekNamedPipe;
    let handle = std::io::stdin().as_raw_handle();
    loop {
        let mut available = 0u32;
        // SAFETY: the handle is this process's stdin, valid while we run;
        // null buffers are allowed and only `available` is written.
        let ok = unsafe {
            PeekNamedPipe(
                handle as _,
                std::ptr::null_mut(),
                0,
                std::ptr::null_mut(),
                &mut available,
                std::ptr::null_mut(),
            )
        };
        if ok == 0 || available > 0 {
            return true;
        }
        if Instant::now() >= until {
            return false;
        }
        std::thread::sleep(Duration::from_millis(1));
    }
}

#[cfg(not(any(unix, windows)))]
fn wait_readable(_until: Instant) -> bool {
    true
}

fn emit_stdout(value: &Value) {
    let mut line = value.to_string();
    line.push('\n');
    let mut out = std::io::stdout().lock();
    // A host that closed the pipe does not want the answer; nothing to do.
    let _ = out.write_all(line.as_bytes());
    let _ = out.flush();
}

/// Writes diagnostics to the hook log (details) and stderr (one line each
/// for warnings and errors).
fn report(data: Option<&DataDir>, platform: &str, label: &str, diagnostics: &[Diagnostic]) {
    let stamp = format_rfc3339(now_ms());
    let mut log_text = String::new();
    for d in diagnostics {
        let level = match d.level {
            Level::Info => "INFO",
            Level::Warn => "WARN",
            Level::Error => "ERROR",
        };
        log_text.push_str(&format!(
            "{stamp} {level} {platform} {label}: {}\n",
            d.message
        ));
    }
    let logged = data.is_some_and(|d| append_log(d, &log_text).is_ok());
    let mut err = std::io::stderr().lock();
    for d in diagnostics
        .iter()
        .filter(|d| d.level != Level::Info || !logged)
    {
        let _ = writeln!(err, "mnemo: {}", d.message);
    }
}

fn append_log(data: &DataDir, text: &str) -> std::io::Result<()> {
    let dir = data.log_dir();
    mnemo_core::paths::create_private_dir(&dir)?;
    let path = data.hook_log_path();
    if std::fs::metadata(&path).is_ok_and(|m| m.len() > LOG_ROTATE_BYTES) {
        let _ = std::fs::rename(
            &path,
            dir.join(format!("{}.1", mnemo_core::paths::HOOK_LOG_FILE)),
        );
    }
    // Ours alone: an older, looser file is tightened, another user's refused.
    mnemo_core::paths::restrict_file(&path)?;
    let mut options = std::fs::OpenOptions::new();
    options.append(true).create(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    options.open(&path)?.write_all(text.as_bytes())
}

fn env_flag(name: &str) -> bool {
    std::env::var(name).is_ok_and(|v| {
        let v = v.trim().to_ascii_lowercase();
        !v.is_empty() && v != "0" && v != "false" && v != "no" && v != "off"
    })
}

fn empty() -> Value {
    Value::Object(Default::default())
}

fn warn(message: String) -> Diagnostic {
    Diagnostic {
        level: Level::Warn,
        message,
    }
}

fn error(message: String) -> Diagnostic {
    Diagnostic {
        level: Level::Error,
        message,
    }
}

#[cfg(all(test, windows))]
mod windows_tests {
    use super::*;
    use std::process::{ChildStdin, Command, Stdio};

    /// Not a test of its own: the child of the tests below. Exits 0 when
    /// its stdin became readable, 3 when 300 ms passed first.
    #[test]
    #[ignore]
    fn stdin_waiter() {
        let readable = wait_readable(Instant::now() + Duration::from_millis(300));
        std::process::exit(if readable { 0 } else { 3 });
    }

    /// Runs the waiter; `feed` does what it likes with the waiter's stdin
    /// (dropping it closes the pipe, returning it keeps it open).
    fn waiter(feed: impl FnOnce(ChildStdin) -> Option<ChildStdin>) -> i32 {
        let mut child = Command::new(std::env::current_exe().unwrap())
            .args(["--exact", "io::windows_tests::stdin_waiter", "--ignored"])
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .spawn()
            .unwrap();
        let kept = feed(child.stdin.take().unwrap());
        let status = child.wait().unwrap();
        drop(kept);
        status.code().unwrap()
    }

    #[test]
    fn a_silent_open_pipe_times_out() {
        assert_eq!(waiter(Some), 3);
    }

    #[test]
    fn data_on_the_pipe_is_readable() {
        assert_eq!(
            waiter(|mut stdin| {
                stdin.write_all(b"{}").unwrap();
                Some(stdin)
            }),
            0
        );
    }

    #[test]
    fn a_closed_pipe_is_readable() {
        assert_eq!(waiter(|_| None), 0);
    }
}
