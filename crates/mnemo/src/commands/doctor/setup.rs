//! The checks of mnemo's own setup, made first: `MNEMO_DISABLED`, the data
//! directory, `config.toml` and the provider it configures.

use mnemo_core::{Config, DataDir};

use super::{Check, Status, in_data};

/// `MNEMO_DISABLED` turns every hook into a no-op: said first, since it
/// explains an empty memory better than anything below.
pub(super) fn check_disabled() -> Option<Check> {
    let value = std::env::var("MNEMO_DISABLED").ok()?;
    let v = value.trim().to_ascii_lowercase();
    if v.is_empty() || ["0", "false", "no", "off"].contains(&v.as_str()) {
        return None;
    }
    Some(Check::problem(
        "disabled",
        Status::Warn,
        format!("MNEMO_DISABLED={value} is set: hooks capture nothing and give nothing back"),
        "unset MNEMO_DISABLED (in the shell, or the env of Claude Code's settings) to capture again",
    ))
}

/// The configured provider and its key (or `claude` executable), checked
/// whether or not a worker runs, the way the worker will set it up.
pub(super) fn check_provider(config: &Config) -> Check {
    match mnemo_compress::Compressor::from_config(&config.provider) {
        Ok(c) if c.provider() == "offline" => Check::ok(
            "provider",
            "offline (no model calls; set [provider] name in config.toml for LLM summaries)",
        ),
        Ok(c) => Check::ok(
            "provider",
            format!("{}, model {}: set up", c.provider(), c.model()),
        ),
        Err(e) => Check::problem(
            "provider",
            Status::Warn,
            format!("{e}; until then events are compressed offline"),
            "fix [provider] in config.toml (or the MNEMO_PROVIDER_* variables), then `mnemo worker restart`",
        ),
    }
}

pub(super) fn check_data_dir(data: &DataDir) -> Check {
    let root = data.root();
    if !root.exists() {
        return Check::problem(
            "data dir",
            Status::Warn,
            "does not exist yet",
            "run `mnemo install` (or any hook creates it)",
        );
    }
    let probe = root.join(format!(".doctor-probe-{}", std::process::id()));
    match std::fs::write(&probe, b"") {
        Ok(()) => {
            let _ = std::fs::remove_file(&probe);
            Check::ok("data dir", "writable")
        }
        Err(e) => Check::problem(
            "data dir",
            Status::Fail,
            format!("not writable: {e}"),
            format!(
                "give this user write access (`chmod u+rwx {0}`), or set MNEMO_DATA_DIR to a writable folder; \
                 meanwhile hooks spool to {1}",
                root.display(),
                data.fallback_spool_dir().display()
            ),
        ),
    }
}

pub(super) fn check_config(data: &DataDir, checks: &mut Vec<Check>) -> Config {
    let path = data.config_path();
    match Config::load_strict(&path) {
        Ok(loaded) => {
            let shown = in_data(data, &path);
            let detail = if path.exists() {
                shown
            } else {
                format!("{shown} absent: built-in defaults")
            };
            if loaded.warnings.is_empty() {
                checks.push(Check::ok("config", detail));
            } else {
                checks.push(Check::problem(
                    "config",
                    Status::Warn,
                    format!("{detail}: {}", loaded.warnings.join("; ")),
                    "remove or correct the keys named",
                ));
            }
            loaded.config
        }
        Err(e) => {
            checks.push(Check::problem(
                "config",
                Status::Fail,
                e.to_string(),
                "hooks use the defaults until this is fixed",
            ));
            Config::load_lenient(&path).config
        }
    }
}
