//! Switching from claude-mem: what `mnemo install` and `mnemo doctor` say
//! when claude-mem is also wired into Claude Code (found by
//! [`mnemo_install::claude_mem`]), so that the two never both capture, and
//! the offer to bring claude-mem's memory along.

use std::io::{IsTerminal, Write};
use std::path::PathBuf;

use mnemo_install::claude_mem::{self, Presence};

use crate::commands::import_claude_mem;
use crate::commands::install::claude_config_dir;

/// claude-mem as found for the user and the current directory's project.
pub fn detect() -> Option<Presence> {
    let config = claude_config_dir().ok()?;
    let project: Vec<PathBuf> = std::env::current_dir()
        .map(|cwd| {
            ["settings.json", "settings.local.json"]
                .iter()
                .map(|f| cwd.join(".claude").join(f))
                .collect()
        })
        .unwrap_or_default();
    Some(claude_mem::detect(&config, &project)).filter(Presence::is_present)
}

/// How to stop claude-mem capturing, in one sentence.
pub fn how_to_turn_off(presence: &Presence) -> String {
    let mut steps = Vec::new();
    for id in presence.enabled_plugins() {
        steps.push(format!(
            "disable its plugin: `claude plugin disable {id}` (or /plugin in Claude Code)"
        ));
    }
    let mut files: Vec<String> = presence
        .hooks
        .iter()
        .map(|(f, _)| f.display().to_string())
        .collect();
    files.dedup();
    if !files.is_empty() {
        steps.push(format!(
            "remove its hooks from {} (`mnemo install` keeps its own)",
            files.join(", ")
        ));
    }
    steps.join("; ")
}

/// The claude-mem database, when there is one to import.
fn database() -> Option<PathBuf> {
    import_claude_mem::default_path().filter(|p| p.is_file())
}

/// After `mnemo install`: warns when claude-mem captures too, and offers its
/// memory (asks on a terminal unless `no_import`, else prints the command).
pub fn offer(no_import: bool) -> anyhow::Result<()> {
    if let Some(presence) = detect().filter(Presence::is_capturing) {
        println!(
            "  claude-mem: also capturing ({}); both would record every session. To switch, {}.",
            presence.describe(),
            how_to_turn_off(&presence)
        );
    }
    let Some(db) = database() else {
        return Ok(());
    };
    let interactive = std::io::stdin().is_terminal() && std::io::stderr().is_terminal();
    if !no_import && interactive && ask(&db)? {
        import_claude_mem::run(Some(&db), &[], false)?;
    } else {
        println!(
            "  claude-mem: its memory in {} comes along with `mnemo import --from claude-mem` (safe to repeat)",
            db.display()
        );
    }
    Ok(())
}

fn ask(db: &std::path::Path) -> anyhow::Result<bool> {
    eprint!(
        "Import claude-mem's memory from {} into mnemo? [y/N] ",
        db.display()
    );
    std::io::stderr().flush()?;
    let mut answer = String::new();
    std::io::stdin().read_line(&mut answer)?;
    Ok(matches!(
        answer.trim().to_ascii_lowercase().as_str(),
        "y" | "yes"
    ))
}
