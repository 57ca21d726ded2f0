//! `mnemo`: persistent memory for AI coding agents.
//!
//! One binary. The hook path (`mnemo hook ...`, run by the agent on every
//! event) is dispatched before the CLI parser is even built and touches no
//! async runtime, no TLS and no network; everything else is a regular clap
//! command in [`commands`].

mod cli;
mod commands;
mod output;

use std::ffi::OsString;

fn main() {
    let args: Vec<OsString> = std::env::args_os().collect();
    if let Some((platform, event, payload)) = hook_fast_path(&args) {
        std::process::exit(mnemo_capture::io::run(
            &platform,
            event.as_deref(),
            payload.as_deref(),
        ));
    }
    quiet_on_closed_pipe();
    std::process::exit(cli::run(args));
}

/// `mnemo hook <platform> [event] [payload]`, recognised without clap: this
/// runs for every tool call of every agent session, so every microsecond
/// counts. Asking for help falls through to the full parser.
fn hook_fast_path(args: &[OsString]) -> Option<(String, Option<String>, Option<String>)> {
    if args.get(1)? != "hook" || args.iter().any(|a| a == "-h" || a == "--help") || args.len() > 5 {
        return None;
    }
    let platform = args.get(2)?.to_str()?.to_owned();
    let text = |i: usize| match args.get(i) {
        Some(a) => a.to_str().map(|s| Some(s.to_owned())),
        None => Some(None),
    };
    Some((platform, text(3)?, text(4)?))
}

/// A reader that stopped reading (`mnemo export | head -1`) is not an
/// error: the command ends quietly with exit 0, whichever command it is.
/// `println!` panics on a closed stdout, so this is decided once, here, for
/// every command; errors returned up to [`cli::run`] are mapped there.
fn quiet_on_closed_pipe() {
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let message = info
            .payload()
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| info.payload().downcast_ref::<&str>().copied())
            .unwrap_or_default();
        if cli::is_closed_pipe_message(message) {
            std::process::exit(0);
        }
        default(info);
    }));
}
