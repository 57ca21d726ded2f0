//! Configuration: `config.toml` in the data directory, every key overridable
//! by an environment variable.
//!
//! The rule for environment names is mechanical, so it never drifts from the
//! file: key `store.busy_timeout_ms` is `MNEMO_STORE_BUSY_TIMEOUT_MS`. A few
//! short aliases that the product contract promises (`MNEMO_PORT`, ...) are
//! listed in [`ALIASES`]. Lists are comma-separated (or a JSON array).
//!
//! Hooks load leniently (a broken file yields defaults and a logged warning,
//! because a hook must never fail); the CLI loads strictly and reports the
//! file, the line and what to do.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[serde(default)]
pub struct Config {
    pub capture: CaptureConfig,
    pub privacy: PrivacyConfig,
    pub store: StoreConfig,
    pub worker: WorkerConfig,
    pub provider: ProviderConfig,
    pub budget: BudgetConfig,
    pub context: ContextConfig,
    pub recall: RecallConfig,
    pub mcp: McpConfig,
    pub embeddings: EmbeddingsConfig,
    pub sync: SyncConfig,
}

/// What sync (`mnemo sync`) shows and sends.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct SyncConfig {
    /// Show records that other people's machines sent through a shared
    /// space (marked with their author) in search, context and prompt
    /// recall. Off: only this person's own memory is shown.
    pub others: bool,
    /// Also send the user's prompts with the observations they led to.
    /// Off: prompts stay on the machine where they were typed.
    pub raw: bool,
    /// A PEM file of certificate authorities to trust for the sync server
    /// besides the system's (a server with a self-signed or private-CA
    /// certificate). Empty: the system's only.
    pub ca_file: String,
}

impl Default for SyncConfig {
    fn default() -> Self {
        SyncConfig {
            others: true,
            raw: false,
            ca_file: String::new(),
        }
    }
}

/// The MCP server (`mnemo mcp`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct McpConfig {
    /// Let `save_memory` write into a project other than the one the agent
    /// works in (its `project` argument naming another directory). Off: an
    /// agent cannot plant memories that another project's sessions would read.
    pub save_to_other_projects: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct CaptureConfig {
    /// Tool names whose events are not captured; `*` matches any run of
    /// characters (`mcp__mnemo__*`, and `mcp__plugin_mnemo_mnemo__*` as
    /// Claude Code names them when the mnemo plugin serves them, keep our
    /// own MCP tools from being recorded back into memory).
    pub skip_tools: Vec<String>,
    /// Largest stored size of one tool input or response, in bytes. Longer
    /// values keep their head and tail and say how much was cut.
    pub max_field_bytes: u64,
    /// Payloads larger than this are not parsed; the event is recorded by its
    /// identifiers only, with a note.
    pub max_payload_bytes: u64,
    /// The most a hook spends, from start to answer, reading its payload,
    /// waiting for the database and ingesting or appending to the spool.
    /// Far below the host's own timeout (10 s for Claude Code): an event
    /// that cannot be stored in time is spooled instead.
    pub hook_deadline_ms: u64,
}

impl Default for CaptureConfig {
    fn default() -> Self {
        CaptureConfig {
            // TodoWrite is kept: its last list is the turn's unfinished work.
            skip_tools: [
                "TodoRead",
                "ToolSearch",
                "ListAgents",
                "ExitPlanMode",
                "EnterPlanMode",
                "AskUserQuestion",
                "ScheduleWakeup",
                "mcp__mnemo__*",
                "mcp__plugin_mnemo_mnemo__*",
            ]
            .map(String::from)
            .to_vec(),
            max_field_bytes: 64 * 1024,
            max_payload_bytes: 32 * 1024 * 1024,
            hook_deadline_ms: 2000,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct PrivacyConfig {
    /// Redact API keys, tokens, private keys, URL credentials and secret
    /// assignments before anything is stored.
    pub redact_secrets: bool,
    /// File name patterns whose contents are never stored, only the fact that
    /// they were touched. A pattern without `/` matches the file name; one
    /// with `/` matches the end of the path.
    pub deny_files: Vec<String>,
}

impl Default for PrivacyConfig {
    fn default() -> Self {
        PrivacyConfig {
            redact_secrets: true,
            deny_files: [
                ".env",
                ".env.*",
                "*.env",
                ".envrc",
                "*.pem",
                "*.key",
                "*.p12",
                "*.pfx",
                "*.jks",
                "*.keystore",
                "*.kdbx",
                "id_rsa*",
                "id_dsa*",
                "id_ecdsa*",
                "id_ed25519*",
                ".netrc",
                "_netrc",
                ".pgpass",
                ".npmrc",
                ".pypirc",
                ".git-credentials",
                "credentials",
                "credentials.json",
                "secrets.*",
                "*.tfvars",
                ".aws/credentials",
                ".docker/config.json",
                ".kube/config",
            ]
            .map(String::from)
            .to_vec(),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct StoreConfig {
    /// How long a hook waits for the database lock before spooling the event
    /// to a file instead. Parallel hooks each hold the lock for well under a
    /// millisecond, so this only runs out when something is really wrong.
    pub busy_timeout_ms: u64,
    /// Retention: the worker drops the raw tool inputs and outputs of events
    /// compressed more than this many days ago (observations, summaries and
    /// prompts stay). 0 keeps them forever.
    pub raw_payload_days: u64,
}

impl Default for StoreConfig {
    fn default() -> Self {
        StoreConfig {
            busy_timeout_ms: 3000,
            raw_payload_days: 30,
        }
    }
}

/// The background worker that compresses captured events (see `mnemo-worker`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct WorkerConfig {
    /// Port on 127.0.0.1. The default sits outside claude-mem's 37700–37799
    /// so both can run side by side.
    pub port: u16,
    /// The worker exits after this long with nothing to do and no client on
    /// the live stream; the next hook brings it back. 0 keeps it running.
    pub idle_exit_secs: u64,
    /// Most events compressed in one batch (one LLM call).
    pub batch_max_events: u64,
    /// Most bytes of event text sent in one batch.
    pub batch_max_bytes: u64,
    /// A turn still open (no Stop yet) is flushed once its oldest pending
    /// event is this old.
    pub turn_flush_secs: u64,
    /// A leased batch not finished within this time is taken over again.
    pub lease_secs: u64,
    /// Attempts before an event is marked failed (`mnemo worker retry` resets it).
    pub max_attempts: u64,
    /// Log files rotate at this size; this many old files are kept.
    pub log_max_bytes: u64,
    pub log_keep: u64,
    /// The HTTP API closes a connection that has not sent a complete request
    /// head within this long, whether new or kept alive between requests.
    pub header_timeout_ms: u64,
    /// Most HTTP connections open at once (live streams included); more wait
    /// in the listen queue until one closes.
    pub max_connections: u64,
    /// With a model configured, a project's knowledge items are consolidated
    /// by the model once every this many of its turns (inside the token
    /// budget); 0 never asks the model.
    pub knowledge_every_turns: u64,
}

impl Default for WorkerConfig {
    fn default() -> Self {
        WorkerConfig {
            port: 38377,
            idle_exit_secs: 30 * 60,
            batch_max_events: 40,
            batch_max_bytes: 48 * 1024,
            turn_flush_secs: 120,
            lease_secs: 300,
            max_attempts: 4,
            log_max_bytes: 4 * 1024 * 1024,
            log_keep: 3,
            header_timeout_ms: 10_000,
            max_connections: 64,
            knowledge_every_turns: 20,
        }
    }
}

/// Which model turns events into observations. `offline` needs no network.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ProviderConfig {
    /// offline, anthropic, openai or claude-cli.
    pub name: String,
    /// As the vendor's own SDK takes it: `https://api.anthropic.com`,
    /// `https://api.openai.com/v1`. Empty means the vendor's default.
    pub base_url: String,
    /// Empty means `ANTHROPIC_API_KEY` / `OPENAI_API_KEY` from the environment.
    pub api_key: String,
    /// Empty means a small, fast model of the vendor.
    pub model: String,
    /// The `claude` executable for the claude-cli provider.
    pub claude_path: String,
    /// One call may take this long before it counts as failed.
    pub timeout_secs: u64,
    /// Cap on the answer's length, in tokens.
    pub max_output_tokens: u64,
}

impl Default for ProviderConfig {
    fn default() -> Self {
        ProviderConfig {
            name: "offline".into(),
            base_url: String::new(),
            api_key: String::new(),
            model: String::new(),
            claude_path: "claude".into(),
            timeout_secs: 90,
            max_output_tokens: 2048,
        }
    }
}

/// Token budgets enforced before every LLM call; past them the worker uses
/// the offline compressor and says so.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct BudgetConfig {
    /// Input + output tokens per calendar day (UTC), all projects. 0 = no limit.
    pub daily_tokens: u64,
    /// Input + output tokens per agent session. 0 = no limit.
    pub session_tokens: u64,
}

impl Default for BudgetConfig {
    fn default() -> Self {
        BudgetConfig {
            daily_tokens: 1_000_000,
            session_tokens: 200_000,
        }
    }
}

/// What is given back to the agent (see `mnemo-recall`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ContextConfig {
    /// Inject the project index at SessionStart.
    pub enabled: bool,
    /// Budget of the SessionStart index, in tokens (about 4 characters each).
    /// Whatever the budget, the index never exceeds 9,000 characters.
    pub max_tokens: u64,
    /// Recent sessions shown at the top, one line each (what was asked,
    /// done and left open); 0 = none.
    pub sessions: u64,
    /// Also show a one-line `systemMessage` to the user at SessionStart.
    pub system_message: bool,
    /// A file's recent history before the agent reads or edits it.
    pub file_context: bool,
    /// Budget of one file's history, in tokens.
    pub file_context_tokens: u64,
}

impl Default for ContextConfig {
    fn default() -> Self {
        ContextConfig {
            enabled: true,
            max_tokens: 1500,
            sessions: 6,
            system_message: false,
            file_context: true,
            file_context_tokens: 200,
        }
    }
}

/// Memory given back while the agent works (see `mnemo-recall::prompt`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct RecallConfig {
    /// On each prompt, the few memories most relevant to it (nothing when
    /// nothing matches well).
    pub prompt_recall: bool,
    /// Most memories added to one prompt.
    pub prompt_recall_items: u64,
    /// Their budget, in tokens (about 4 characters each).
    pub prompt_recall_tokens: u64,
}

impl Default for RecallConfig {
    fn default() -> Self {
        RecallConfig {
            prompt_recall: true,
            prompt_recall_items: 3,
            prompt_recall_tokens: 375,
        }
    }
}

/// Search by meaning (optional): vectors from an OpenAI-compatible
/// `/embeddings` endpoint, computed by the worker in the background and
/// fused with full-text search. Setting `base_url` and `model` turns it on;
/// nothing set costs nothing. Hooks never call the endpoint.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct EmbeddingsConfig {
    /// As OpenAI-compatible clients take it, without `/embeddings`:
    /// `http://127.0.0.1:11434/v1` (Ollama), `https://api.openai.com/v1`.
    pub base_url: String,
    /// The embedding model's name at that endpoint.
    pub model: String,
    /// Name of the environment variable holding the API key (the key itself
    /// never goes in this file); empty sends no key.
    pub api_key_env: String,
    /// The query's embedding at search time may take this long; past it the
    /// search is lexical and says so.
    pub query_timeout_ms: u64,
    /// One background batch call may take this long.
    pub batch_timeout_ms: u64,
    /// Records per background call.
    pub batch_size: u64,
}

impl Default for EmbeddingsConfig {
    fn default() -> Self {
        EmbeddingsConfig {
            base_url: String::new(),
            model: String::new(),
            api_key_env: String::new(),
            query_timeout_ms: 1500,
            batch_timeout_ms: 30_000,
            batch_size: 32,
        }
    }
}

impl EmbeddingsConfig {
    /// Whether search by meaning was asked for (a base URL or a model set);
    /// [`EmbeddingsConfig::check`] says whether it can work.
    pub fn requested(&self) -> bool {
        !self.base_url.trim().is_empty() || !self.model.trim().is_empty()
    }

    /// What is wrong with the settings, in terms of what to set; `Ok` when
    /// off or usable.
    pub fn check(&self) -> Result<(), String> {
        if !self.requested() {
            return Ok(());
        }
        let url = self.base_url.trim();
        if url.is_empty() {
            return Err("embeddings.model is set but embeddings.base_url is not \
                 (MNEMO_EMBEDDINGS_BASE_URL); set both, or neither to turn search by meaning off"
                .into());
        }
        if self.model.trim().is_empty() {
            return Err("embeddings.base_url is set but embeddings.model is not \
                 (MNEMO_EMBEDDINGS_MODEL); set both, or neither to turn search by meaning off"
                .into());
        }
        if !(url.starts_with("http://") || url.starts_with("https://")) || url.len() < 10 {
            return Err(format!(
                "embeddings.base_url `{url}` is not an http:// or https:// URL"
            ));
        }
        let var = self.api_key_env.trim();
        if !var.is_empty() && !std::env::var(var).is_ok_and(|k| !k.trim().is_empty()) {
            return Err(format!(
                "embeddings.api_key_env names `{var}`, which is not set in the environment"
            ));
        }
        Ok(())
    }

    /// The API key, when `api_key_env` names a variable that holds one.
    pub fn api_key(&self) -> Option<String> {
        let var = self.api_key_env.trim();
        (!var.is_empty())
            .then(|| std::env::var(var).ok())
            .flatten()
            .map(|k| k.trim().to_owned())
            .filter(|k| !k.is_empty())
    }
}

/// Short environment names promised by the product contract, and the key each
/// one sets. They win over the mechanical names.
pub const ALIASES: &[(&str, &str)] = &[
    ("MNEMO_PORT", "worker.port"),
    ("MNEMO_PROVIDER", "provider.name"),
];

/// A configuration as loaded, with what went wrong on the way when loading
/// leniently.
#[derive(Debug, Clone)]
pub struct Loaded {
    pub config: Config,
    pub path: PathBuf,
    pub warnings: Vec<String>,
}

#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("cannot read {path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error(
        "{path}:{line}:{column}: {message}\n  fix the syntax there (TOML), or move the file aside to use the defaults"
    )]
    Syntax {
        path: PathBuf,
        line: usize,
        column: usize,
        message: String,
    },
    #[error("{path}: {message}\n  fix the value in the file, or remove the key to use its default")]
    Value { path: PathBuf, message: String },
    #[error("environment variable {var}: {message}")]
    Env { var: String, message: String },
}

impl Config {
    /// Loads `path` (a missing file means defaults) and the environment;
    /// any problem is an error.
    pub fn load_strict(path: &Path) -> Result<Loaded, ConfigError> {
        let mut warnings = Vec::new();
        let config = load_inner(path, &mut warnings, Strictness::Strict)?;
        Ok(Loaded {
            config,
            path: path.to_owned(),
            warnings,
        })
    }

    /// Like [`Config::load_strict`], but never fails: whatever cannot be used is
    /// skipped and described in `warnings`.
    pub fn load_lenient(path: &Path) -> Loaded {
        let mut warnings = Vec::new();
        let config = match load_inner(path, &mut warnings, Strictness::Lenient) {
            Ok(config) => config,
            Err(e) => {
                warnings.push(format!("{e}; using defaults"));
                Config::default()
            }
        };
        Loaded {
            config,
            path: path.to_owned(),
            warnings,
        }
    }

    /// Every key with its environment variable name, for docs and `doctor`.
    pub fn env_names() -> Vec<(String, String)> {
        let defaults = defaults_table();
        let mut out = Vec::new();
        for (section, value) in &defaults {
            if let toml::Value::Table(keys) = value {
                for key in keys.keys() {
                    out.push((format!("{section}.{key}"), env_name(section, key)));
                }
            }
        }
        out
    }
}

#[derive(Clone, Copy, PartialEq)]
enum Strictness {
    Strict,
    Lenient,
}

fn defaults_table() -> toml::Table {
    match toml::Value::try_from(Config::default()) {
        Ok(toml::Value::Table(t)) => t,
        _ => unreachable!("the default configuration always serializes to a table"),
    }
}

fn env_name(section: &str, key: &str) -> String {
    format!("MNEMO_{section}_{key}").to_ascii_uppercase()
}

fn load_inner(
    path: &Path,
    warnings: &mut Vec<String>,
    strictness: Strictness,
) -> Result<Config, ConfigError> {
    let mut merged = defaults_table();
    let defaults = merged.clone();

    match std::fs::read_to_string(path) {
        Ok(text) => {
            let file: toml::Table = toml::from_str(&text).map_err(|e| {
                let (line, column) = e
                    .span()
                    .map(|span| line_col(&text, span.start))
                    .unwrap_or((1, 1));
                ConfigError::Syntax {
                    path: path.to_owned(),
                    line,
                    column,
                    message: e.message().to_owned(),
                }
            })?;
            merge_file(&mut merged, &defaults, file, path, warnings, strictness)?;
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(source) => {
            return Err(ConfigError::Read {
                path: path.to_owned(),
                source,
            });
        }
    }

    overlay_env(&mut merged, &defaults, warnings, strictness)?;

    toml::Value::Table(merged)
        .try_into::<Config>()
        .map_err(|e| ConfigError::Value {
            path: path.to_owned(),
            message: e.message().to_owned(),
        })
}

/// Copies the file's known keys over the defaults; unknown ones become
/// warnings (most likely typos) rather than errors. A value of the wrong type
/// is an error when strict, and skipped with a warning otherwise.
fn merge_file(
    merged: &mut toml::Table,
    defaults: &toml::Table,
    file: toml::Table,
    path: &Path,
    warnings: &mut Vec<String>,
    strictness: Strictness,
) -> Result<(), ConfigError> {
    for (section, value) in file {
        let Some(toml::Value::Table(default_keys)) = defaults.get(&section) else {
            warnings.push(format!(
                "{}: unknown section [{section}] ignored",
                path.display()
            ));
            continue;
        };
        let toml::Value::Table(keys) = value else {
            warnings.push(format!(
                "{}: `{section}` should be a [{section}] table; ignored",
                path.display()
            ));
            continue;
        };
        let Some(toml::Value::Table(target)) = merged.get_mut(&section) else {
            continue;
        };
        for (key, value) in keys {
            if let Some(default) = default_keys.get(&key) {
                if same_type(default, &value) {
                    target.insert(key, value);
                    continue;
                }
                let message = format!(
                    "{section}.{key} should be {}, not {}",
                    type_name(default),
                    type_name(&value)
                );
                if strictness == Strictness::Strict {
                    return Err(ConfigError::Value {
                        path: path.to_owned(),
                        message,
                    });
                }
                warnings.push(format!("{}: {message}; default used", path.display()));
            } else {
                warnings.push(format!(
                    "{}: unknown key {section}.{key} ignored",
                    path.display()
                ));
            }
        }
    }
    Ok(())
}

fn same_type(default: &toml::Value, value: &toml::Value) -> bool {
    use toml::Value::*;
    match (default, value) {
        (Array(_), Array(items)) => items.iter().all(|i| matches!(i, String(_))),
        (Float(_), Integer(_)) => true,
        (Integer(n), Integer(v)) => *n < 0 || *v >= 0,
        _ => std::mem::discriminant(default) == std::mem::discriminant(value),
    }
}

fn type_name(value: &toml::Value) -> &'static str {
    match value {
        toml::Value::String(_) => "a string",
        toml::Value::Integer(_) => "a whole number",
        toml::Value::Float(_) => "a number",
        toml::Value::Boolean(_) => "true or false",
        toml::Value::Datetime(_) => "a date",
        toml::Value::Array(_) => "a list of strings",
        toml::Value::Table(_) => "a table",
    }
}

fn overlay_env(
    merged: &mut toml::Table,
    defaults: &toml::Table,
    warnings: &mut Vec<String>,
    strictness: Strictness,
) -> Result<(), ConfigError> {
    let mut apply = |var: &str, section: &str, key: &str| -> Result<(), ConfigError> {
        let Some(raw) = std::env::var_os(var) else {
            return Ok(());
        };
        let raw = raw.to_string_lossy();
        let default = &defaults[section][key];
        match parse_env_value(&raw, default) {
            Ok(value) => {
                if let Some(toml::Value::Table(t)) = merged.get_mut(section) {
                    t.insert(key.to_owned(), value);
                }
                Ok(())
            }
            Err(message) if strictness == Strictness::Strict => Err(ConfigError::Env {
                var: var.to_owned(),
                message,
            }),
            Err(message) => {
                warnings.push(format!("environment variable {var}: {message}; ignored"));
                Ok(())
            }
        }
    };
    for (section, value) in defaults {
        if let toml::Value::Table(keys) = value {
            for key in keys.keys() {
                apply(&env_name(section, key), section, key)?;
            }
        }
    }
    for (var, dotted) in ALIASES {
        if let Some((section, key)) = dotted.split_once('.') {
            apply(var, section, key)?;
        }
    }
    Ok(())
}

/// Reads an environment string as the type of the key's default value.
fn parse_env_value(raw: &str, default: &toml::Value) -> Result<toml::Value, String> {
    let trimmed = raw.trim();
    match default {
        toml::Value::Boolean(_) => match trimmed.to_ascii_lowercase().as_str() {
            "1" | "true" | "yes" | "on" => Ok(toml::Value::Boolean(true)),
            "0" | "false" | "no" | "off" | "" => Ok(toml::Value::Boolean(false)),
            _ => Err(format!("expected true or false, got `{raw}`")),
        },
        toml::Value::Integer(_) => trimmed
            .parse::<i64>()
            .map(toml::Value::Integer)
            .map_err(|_| format!("expected a whole number, got `{raw}`")),
        toml::Value::Float(_) => trimmed
            .parse::<f64>()
            .map(toml::Value::Float)
            .map_err(|_| format!("expected a number, got `{raw}`")),
        toml::Value::Array(_) => {
            if trimmed.starts_with('[') {
                let items: Vec<String> = serde_json::from_str(trimmed)
                    .map_err(|e| format!("expected a JSON array of strings: {e}"))?;
                Ok(toml::Value::Array(
                    items.into_iter().map(toml::Value::String).collect(),
                ))
            } else {
                Ok(toml::Value::Array(
                    trimmed
                        .split(',')
                        .map(str::trim)
                        .filter(|s| !s.is_empty())
                        .map(|s| toml::Value::String(s.to_owned()))
                        .collect(),
                ))
            }
        }
        _ => Ok(toml::Value::String(raw.to_owned())),
    }
}

/// 1-based line and column of a byte offset.
fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let before = &text[..offset.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (line, column)
}

/// True when `name` matches `pattern`, where `*` matches any run of characters.
/// Used for tool skip lists; file deny lists use the same matcher.
pub fn glob_match(pattern: &str, name: &str) -> bool {
    let (p, n) = (pattern.as_bytes(), name.as_bytes());
    let (mut pi, mut ni) = (0, 0);
    let (mut star, mut mark) = (usize::MAX, 0);
    while ni < n.len() {
        if pi < p.len() && (p[pi] == b'?' || p[pi] == n[ni]) {
            pi += 1;
            ni += 1;
        } else if pi < p.len() && p[pi] == b'*' {
            star = pi;
            pi += 1;
            mark = ni;
        } else if star != usize::MAX {
            pi = star + 1;
            mark += 1;
            ni = mark;
        } else {
            return false;
        }
    }
    while pi < p.len() && p[pi] == b'*' {
        pi += 1;
    }
    pi == p.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    // Environment variables are process-global: a test that sets them, or
    // loads a configuration (which reads them), holds this lock.
    static ENV: std::sync::Mutex<()> = std::sync::Mutex::new(());

    fn env_lock() -> std::sync::MutexGuard<'static, ()> {
        ENV.lock().unwrap_or_else(|e| e.into_inner())
    }

    struct EnvGuard(&'static str);
    impl EnvGuard {
        fn set(name: &'static str, value: &str) -> EnvGuard {
            // SAFETY: the caller holds env_lock(); no other test reads them meanwhile.
            unsafe { std::env::set_var(name, value) };
            EnvGuard(name)
        }
    }
    impl Drop for EnvGuard {
        fn drop(&mut self) {
            unsafe { std::env::remove_var(self.0) };
        }
    }

    #[test]
    fn missing_file_gives_defaults() {
        let _env = env_lock();
        let tmp = tempfile::tempdir().unwrap();
        let loaded = Config::load_strict(&tmp.path().join("config.toml")).unwrap();
        assert_eq!(loaded.config, Config::default());
        assert!(loaded.warnings.is_empty());
    }

    #[test]
    fn file_values_override_defaults_and_unknown_keys_warn() {
        let _env = env_lock();
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("config.toml");
        std::fs::write(
            &path,
            "[capture]\nmax_field_bytes = 1000\nskip_tol = []\n[nonsense]\nx = 1\n",
        )
        .unwrap();
        let loaded = Config::load_strict(&path).unwrap();
        assert_eq!(loaded.config.capture.max_field_bytes, 1000);
        assert_eq!(loaded.warnings.len(), 2, "{:?}", loaded.warnings);
        assert!(loaded.warnings[0].contains("capture.skip_tol"));
    }

    #[test]
    fn syntax_errors_name_the_line() {
        let _env = env_lock();
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("config.toml");
        std::fs::write(&path, "[capture]\nmax_field_bytes = = 3\n").unwrap();
        let err = Config::load_strict(&path).unwrap_err().to_string();
        assert!(err.contains("config.toml:2:"), "{err}");
        let lenient = Config::load_lenient(&path);
        assert_eq!(lenient.config, Config::default());
        assert_eq!(lenient.warnings.len(), 1);
    }

    #[test]
    fn wrong_types_are_value_errors() {
        let _env = env_lock();
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("config.toml");
        std::fs::write(&path, "[store]\nbusy_timeout_ms = \"soon\"\n").unwrap();
        let err = Config::load_strict(&path).unwrap_err().to_string();
        assert!(
            err.contains("store.busy_timeout_ms should be a whole number, not a string"),
            "{err}"
        );
        let lenient = Config::load_lenient(&path);
        assert_eq!(lenient.config.store, StoreConfig::default());
        assert_eq!(lenient.warnings.len(), 1);
    }

    #[test]
    fn environment_overrides_file() {
        let _env = env_lock();
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("config.toml");
        std::fs::write(&path, "[privacy]\nredact_secrets = true\n").unwrap();
        let _a = EnvGuard::set("MNEMO_PRIVACY_REDACT_SECRETS", "off");
        let _b = EnvGuard::set("MNEMO_PRIVACY_DENY_FILES", "*.secret, vault.txt");
        let loaded = Config::load_strict(&path).unwrap();
        assert!(!loaded.config.privacy.redact_secrets);
        assert_eq!(loaded.config.privacy.deny_files, ["*.secret", "vault.txt"]);
    }

    #[test]
    fn every_key_has_an_environment_name() {
        let names = Config::env_names();
        assert!(names.contains(&(
            "store.busy_timeout_ms".to_owned(),
            "MNEMO_STORE_BUSY_TIMEOUT_MS".to_owned()
        )));
    }

    #[test]
    fn embeddings_are_off_until_a_url_and_a_model_are_set() {
        let _g = env_lock();
        let off = EmbeddingsConfig::default();
        assert!(!off.requested());
        assert_eq!(off.check(), Ok(()));
        let half = EmbeddingsConfig {
            model: "m".into(),
            ..EmbeddingsConfig::default()
        };
        assert!(half.check().unwrap_err().contains("base_url"));
        let bad_url = EmbeddingsConfig {
            base_url: "localhost:11434".into(),
            model: "m".into(),
            ..EmbeddingsConfig::default()
        };
        assert!(bad_url.check().unwrap_err().contains("not an http"));
        let missing_key = EmbeddingsConfig {
            base_url: "http://127.0.0.1:1/v1".into(),
            model: "m".into(),
            api_key_env: "MNEMO_TEST_NO_SUCH_KEY_VAR".into(),
            ..EmbeddingsConfig::default()
        };
        assert!(
            missing_key
                .check()
                .unwrap_err()
                .contains("MNEMO_TEST_NO_SUCH_KEY_VAR")
        );
        let _u = EnvGuard::set("MNEMO_EMBEDDINGS_BASE_URL", "http://127.0.0.1:9/v1");
        let _m = EnvGuard::set("MNEMO_EMBEDDINGS_MODEL", "tiny");
        let tmp = tempfile::tempdir().unwrap();
        let loaded = Config::load_strict(&tmp.path().join("config.toml")).unwrap();
        assert_eq!(loaded.config.embeddings.model, "tiny");
        assert_eq!(loaded.config.embeddings.check(), Ok(()));
    }

    #[test]
    fn globs() {
        assert!(glob_match("mcp__mnemo__*", "mcp__mnemo__search"));
        assert!(!glob_match("mcp__mnemo__*", "mcp__other__search"));
        let skip = CaptureConfig::default().skip_tools;
        for own in ["mcp__mnemo__search", "mcp__plugin_mnemo_mnemo__search"] {
            assert!(skip.iter().any(|g| glob_match(g, own)), "{own}");
        }
        assert!(glob_match(".env.*", ".env.local"));
        assert!(!glob_match(".env.*", ".env"));
        assert!(glob_match("*.pem", "server.pem"));
        assert!(glob_match("id_rsa*", "id_rsa.pub"));
        assert!(glob_match("a*b*c", "aXXbYYc"));
        assert!(!glob_match("a*b*c", "aXXbYY"));
    }
}
