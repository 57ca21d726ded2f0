//! `mnemo sync ...` and `mnemo share`: the client side of sync (see
//! mnemo_sync::account and mnemo_sync::engine).

use std::io::{IsTerminal, Write};
use std::path::Path;

use mnemo_core::privacy::Sanitizer;
use mnemo_store::Store;
use mnemo_sync::account::{self, KeyFile};

use crate::cli::{ShareArgs, SyncArgs, SyncCommand};
use crate::output::{data_and_config, open_store};

/// Runs `work` on a single-threaded runtime with the store open (and the
/// sync server's extra certificate authorities trusted, `[sync] ca_file`).
fn with_store<T>(
    work: impl AsyncFnOnce(&mut Store, &Sanitizer) -> anyhow::Result<T>,
) -> anyhow::Result<T> {
    let (data, config) = data_and_config()?;
    mnemo_sync::client::trust_ca_file(Path::new(&config.sync.ca_file))?;
    let mut store = open_store(&data, &config)?;
    let sanitizer = Sanitizer::new(&config.privacy);
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?
        .block_on(work(&mut store, &sanitizer))
}

pub fn run(args: SyncArgs) -> anyhow::Result<i32> {
    match args.command {
        None => sync_now(),
        Some(SyncCommand::Register {
            server,
            key_file,
            name,
        }) => {
            let name = name.unwrap_or_else(default_name);
            let file = with_store(async |store, _| {
                account::register(store, &server, &key_file, &name).await
            })?;
            println!(
                "registered; key file written to {} (keep it safe)",
                key_file.display()
            );
            println!(
                "your public key (give it to teammates who share with you): {}",
                file.public_key
            );
            Ok(0)
        }
        Some(SyncCommand::Join { server, key_file }) => {
            let file = with_store(async |store, _| account::join(store, &server, &key_file).await)?;
            println!(
                "joined as {} ({}); run `mnemo sync` to fetch your memory",
                file.name, file.public_key
            );
            Ok(0)
        }
        Some(SyncCommand::Status { json }) => status(json),
        Some(SyncCommand::Invite { project, member }) => with_store(async |store, _| {
            let space = account::project_space(store, &project_root(project.as_deref()).0)?;
            account::invite(store, space, &member).await?;
            println!("invited to space {space}; they run `mnemo sync accept --space {space}`");
            Ok(0)
        }),
        Some(SyncCommand::Accept { space, project }) => accept(space, project.as_deref()),
        Some(SyncCommand::Remove { project, member }) => with_store(async |store, _| {
            let space = account::project_space(store, &project_root(project.as_deref()).0)?;
            account::remove(store, space, &member).await?;
            println!("removed; space {space} has a new key they do not have");
            Ok(0)
        }),
        Some(SyncCommand::Leave { project }) => with_store(async |store, _| {
            let space = match project {
                Some(dir) => Some(account::project_space(store, &project_root(Some(&dir)).0)?),
                None => None,
            };
            account::leave(store, space).await?;
            println!(
                "{}",
                match space {
                    Some(space) => format!("left space {space}"),
                    None => "this machine no longer syncs; its memory stays".to_owned(),
                }
            );
            Ok(0)
        }),
    }
}

fn default_name() -> String {
    std::env::var("USER")
        .or_else(|_| std::env::var("USERNAME"))
        .unwrap_or_else(|_| "me".to_owned())
}

/// The root and name of the project of `dir` (default: the current directory).
fn project_root(dir: Option<&Path>) -> (String, String) {
    let dir = dir.map_or_else(
        || std::env::current_dir().unwrap_or_default(),
        Path::to_path_buf,
    );
    let id = mnemo_core::project::identify(&dir);
    (id.root.to_string_lossy().into_owned(), id.name)
}

fn sync_now() -> anyhow::Result<i32> {
    let terminal = std::io::stderr().is_terminal();
    let raw = data_and_config()?.1.sync.raw;
    let report = with_store(async |store, sanitizer| {
        let mut engine =
            mnemo_sync::engine::Engine::open(store, sanitizer)?.ok_or_else(account::not_set_up)?;
        engine.send_prompts(raw);
        if terminal {
            engine.on_progress(show_progress);
        }
        Ok(engine.run().await)
    })?;
    if terminal {
        eprint!("\r\x1b[K");
    }
    println!(
        "pushed {}, pulled {} (applied {}, forgotten {}, refused {})",
        report.pushed, report.pulled, report.applied, report.forgotten, report.refused
    );
    for e in &report.errors {
        crate::output::error(e);
    }
    Ok(if report.errors.is_empty() { 0 } else { 1 })
}

/// One line on the terminal, rewritten in place: a bar of the push, and
/// how much was pulled (the server does not say how much is left).
fn show_progress(r: &mnemo_sync::engine::Report) {
    const WIDTH: usize = 24;
    let done = (r.pushed * WIDTH).checked_div(r.waiting).unwrap_or(WIDTH);
    let bar = format!(
        "{}{}",
        "#".repeat(done.min(WIDTH)),
        ".".repeat(WIDTH - done.min(WIDTH))
    );
    eprint!(
        "\r\x1b[Kmnemo sync: [{bar}] pushed {}/{}, pulled {}",
        r.pushed, r.waiting, r.pulled
    );
    let _ = std::io::stderr().flush();
}

fn status(json: bool) -> anyhow::Result<i32> {
    let (data, config) = data_and_config()?;
    let store = open_store(&data, &config)?;
    let status = mnemo_sync::status::status(store.conn())?;
    let public_key = status
        .key_file
        .as_deref()
        .and_then(|p| KeyFile::read(Path::new(p)).ok())
        .map(|f| f.public_key);
    if json {
        let mut value = serde_json::to_value(&status)?;
        value["public_key"] = serde_json::json!(public_key);
        println!("{}", serde_json::to_string_pretty(&value)?);
        return Ok(0);
    }
    if !status.configured {
        println!("not set up: run `mnemo sync register --server URL --key-file PATH` (or `join`)");
        return Ok(0);
    }
    println!("server:     {}", status.server.unwrap_or_default());
    println!("device:     {}", status.device_id.unwrap_or_default());
    println!(
        "public key: {}",
        public_key.unwrap_or_else(|| "(key file unreadable)".into())
    );
    for s in &status.spaces {
        let what = s.project_root.as_deref().unwrap_or("all projects");
        println!(
            "space {}:   {} ({what}), key epoch {}",
            s.space_id, s.kind, s.epoch
        );
    }
    println!(
        "pending:    {} to push, {} changed",
        status.pending_push, status.pending_changes
    );
    let last = status.last_sync_at.map(mnemo_core::time::format_rfc3339);
    println!("last sync:  {}", last.unwrap_or_else(|| "never".into()));
    if let Some(e) = status.last_error {
        println!("last error: {e}");
    }
    Ok(0)
}

fn accept(space: Option<i64>, project: Option<&Path>) -> anyhow::Result<i32> {
    let root = project.map(|p| project_root(Some(p)).0);
    let taken = with_store(async |store, _| account::accept(store, space, root.as_deref()).await)?;
    if taken.is_empty() {
        println!("no invitation waiting");
    }
    for (id, name) in taken {
        println!(
            "accepted space {id} ({}); run `mnemo sync`",
            name.unwrap_or_default()
        );
    }
    Ok(0)
}

pub fn share(args: ShareArgs) -> anyhow::Result<i32> {
    let (root, name) = project_root(args.project.as_deref());
    let space = with_store(async |store, _| account::share(store, &root, &name).await)?;
    println!("{root} is shared as space {space}; invite with `mnemo sync invite --member KEY`");
    Ok(0)
}
