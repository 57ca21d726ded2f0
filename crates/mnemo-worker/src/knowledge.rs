//! Project knowledge, consolidated offline from the records after each
//! compressed batch (see [`mnemo_store::knowledge`] for the table).
//!
//! Everything comes from generic shapes, never from a project's words:
//! - what the project is: the ecosystems whose manifest files (`Cargo.toml`,
//!   `package.json`, `go.mod`, ...) its sessions touched or its root holds,
//!   with what the root's manifest says of it ([`crate::manifest`]), and
//!   the directories most worked in;
//! - how to work in it: build, test, lint and run commands that passed, by
//!   shape (program and subcommand: `cargo test`, `go test ./...`, `npm run
//!   build`), counted across sessions; and what the user asked to be done
//!   always or never;
//! - decisions in force (no later decision on the same subject), the work
//!   left open, and failures that recurred across sessions with their fix.
//!
//! Bounded: the project's last [`SESSIONS_READ`] sessions, at most
//! [`EVENTS_READ`] events and [`PROMPTS_READ`] prompts; a few milliseconds.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::Path;

use mnemo_compress::{CommandClass, classify_command};
use mnemo_core::words::count_s;
use mnemo_recall::gotchas::{self, Fix};
use mnemo_recall::sessions;
use mnemo_store::knowledge::{self as store, KnowledgeItem};
use mnemo_store::parse_json_list;
use rusqlite::Connection;
use serde_json::Value;

/// Sessions whose events are read.
const SESSIONS_READ: i64 = 50;
/// Most events read.
const EVENTS_READ: i64 = 5_000;
/// Most prompts read for conventions.
const PROMPTS_READ: i64 = 500;
/// Most items of each list kind kept.
const MAX_COMMANDS: usize = 6;
const MAX_DIRS: usize = 6;
const MAX_DECISIONS: usize = 5;
const MAX_OPEN: usize = 3;
const MAX_PROBLEMS: usize = 4;
const MAX_CONVENTIONS: usize = 4;
const MAX_SOURCES: usize = 5;

/// Manifest file names and the ecosystem each one names.
const MANIFESTS: &[(&str, &str)] = &[
    ("Cargo.toml", "Rust"),
    ("go.mod", "Go"),
    ("package.json", "JavaScript/Node.js"),
    ("tsconfig.json", "TypeScript"),
    ("deno.json", "Deno"),
    ("pyproject.toml", "Python"),
    ("setup.py", "Python"),
    ("requirements.txt", "Python"),
    ("Pipfile", "Python"),
    ("mix.exs", "Elixir"),
    ("Gemfile", "Ruby"),
    ("pom.xml", "Java (Maven)"),
    ("build.gradle", "JVM (Gradle)"),
    ("build.gradle.kts", "Kotlin (Gradle)"),
    ("build.sbt", "Scala"),
    ("CMakeLists.txt", "C/C++ (CMake)"),
    ("meson.build", "C/C++ (Meson)"),
    ("composer.json", "PHP"),
    ("Package.swift", "Swift"),
    ("pubspec.yaml", "Dart"),
    ("build.zig", "Zig"),
    ("stack.yaml", "Haskell"),
    ("dune-project", "OCaml"),
    ("rebar.config", "Erlang"),
    ("deps.edn", "Clojure"),
    ("project.clj", "Clojure"),
];
/// Manifest suffixes (project files named after the project).
const MANIFEST_SUFFIXES: &[(&str, &str)] = &[
    (".csproj", ".NET (C#)"),
    (".fsproj", ".NET (F#)"),
    (".sln", ".NET"),
    (".cabal", "Haskell"),
    (".nimble", "Nim"),
];
/// Source file extensions and the language each one is written in.
const LANGUAGES: &[(&str, &str)] = &[
    ("rs", "Rust"),
    ("go", "Go"),
    ("ts", "TypeScript"),
    ("tsx", "TypeScript"),
    ("js", "JavaScript"),
    ("jsx", "JavaScript"),
    ("mjs", "JavaScript"),
    ("py", "Python"),
    ("ex", "Elixir"),
    ("exs", "Elixir"),
    ("heex", "Elixir"),
    ("rb", "Ruby"),
    ("java", "Java"),
    ("kt", "Kotlin"),
    ("scala", "Scala"),
    ("swift", "Swift"),
    ("c", "C"),
    ("h", "C"),
    ("cc", "C++"),
    ("cpp", "C++"),
    ("hpp", "C++"),
    ("cs", "C#"),
    ("fs", "F#"),
    ("php", "PHP"),
    ("dart", "Dart"),
    ("zig", "Zig"),
    ("hs", "Haskell"),
    ("ml", "OCaml"),
    ("erl", "Erlang"),
    ("clj", "Clojure"),
    ("lua", "Lua"),
    ("sh", "shell"),
];
/// Most languages named.
const MAX_LANGUAGES: usize = 3;
/// Subcommands that only report (`version`, `help`): not how to work.
const REPORTING_SUBCOMMANDS: &[&str] = &[
    "version", "help", "cache", "env", "config", "info", "list", "show", "doctor", "clean",
];
/// Task runners and environment tools, by the file that configures them.
const TOOL_FILES: &[(&str, &str)] = &[
    ("Makefile", "make"),
    ("justfile", "just"),
    ("Justfile", "just"),
    ("Taskfile.yml", "task"),
    ("mise.toml", "mise"),
    (".tool-versions", "asdf/mise"),
    ("Dockerfile", "Docker"),
    ("docker-compose.yml", "Docker Compose"),
    ("compose.yaml", "Docker Compose"),
    ("flake.nix", "Nix"),
];
/// Programs whose first argument names a task or script to run (`npm run
/// build`, `make test`): their shape keeps the task's name.
const TASK_RUNNERS: &[&str] = &[
    "npm", "pnpm", "yarn", "bun", "deno", "cargo", "go", "make", "just", "mise", "task", "poetry",
    "uv", "pipenv", "hatch", "tox", "nox", "mix", "rake", "bundle", "gradle", "gradlew", "mvn",
    "mvnw", "dotnet", "swift", "zig", "dune", "stack", "cabal", "sbt", "lein", "composer", "npx",
    "pnpx", "bunx", "python", "python3",
];
/// Subcommands that run a named task: the name is part of the shape.
const RUN_VERBS: &[&str] = &["run", "exec", "task", "x"];

/// One captured tool call, as far as knowledge needs it.
struct Call {
    session: i64,
    /// The directory the session worked in (a worktree, a subdirectory).
    cwd: String,
    failed: bool,
    command: Option<String>,
    files: Vec<String>,
    /// An observation of the same turn: the record it is evidence for.
    observation: Option<i64>,
}

/// Recomputes the project's knowledge, with the model's stored revisions
/// applied ([`crate::consolidate`]), and stores it in place; the number of
/// items.
pub fn refresh(conn: &Connection, project: i64, now_ms: i64) -> Result<usize, String> {
    let revisions = store::revisions(conn, project).map_err(|e| e.to_string())?;
    refresh_with(conn, project, &revisions, now_ms)
}

/// [`refresh`] with `revisions` in place of the stored ones (which they
/// replace).
pub fn refresh_with(
    conn: &Connection,
    project: i64,
    revisions: &[KnowledgeItem],
    now_ms: i64,
) -> Result<usize, String> {
    let mut items = derive(conn, project).map_err(|e| e.to_string())?;
    crate::consolidate::apply(&mut items, revisions);
    let shown = items.len();
    items.extend(revisions.iter().cloned());
    store::replace(conn, project, &items, now_ms).map_err(|e| e.to_string())?;
    Ok(shown)
}

/// The project's knowledge items, derived from its records.
pub fn derive(conn: &Connection, project: i64) -> mnemo_recall::Result<Vec<KnowledgeItem>> {
    let root: Option<String> = conn
        .prepare_cached("SELECT root FROM projects WHERE id = ?1")?
        .query_row([project], |r| r.get(0))
        .ok();
    let root = root.unwrap_or_default();
    let calls = read_calls(conn, project)?;
    let mut items: Vec<KnowledgeItem> = purpose_item(Path::new(&root)).into_iter().collect();
    items.extend(stack_items(Path::new(&root), &calls));
    items.extend(language_item(&root, &calls));
    items.extend(layout_item(&root, &calls));
    items.extend(command_items(&calls));
    items.extend(convention_items(conn, project)?);
    items.extend(decision_items(conn, project)?);
    items.extend(open_items(conn, project)?);
    items.extend(problem_items(conn, project)?);
    Ok(items)
}

fn read_calls(conn: &Connection, project: i64) -> mnemo_recall::Result<Vec<Call>> {
    let mut stmt = conn.prepare_cached(
        "SELECT e.session_id, e.kind = 'tool_failure',
                CASE WHEN json_valid(e.input) THEN json_extract(e.input, '$.command') END,
                e.files_read, e.files_modified,
                (SELECT o.id FROM observations o WHERE o.session_id = e.session_id
                   AND o.prompt_number = e.prompt_number ORDER BY o.id LIMIT 1),
                (SELECT coalesce(s.cwd, '') FROM sessions s WHERE s.id = e.session_id)
         FROM events e
         WHERE e.kind IN ('tool_use', 'tool_failure')
           AND e.session_id IN (SELECT id FROM sessions WHERE project_id = ?1
                                ORDER BY started_at DESC LIMIT ?2)
         ORDER BY e.id DESC LIMIT ?3",
    )?;
    let rows = stmt.query_map(
        rusqlite::params![project, SESSIONS_READ, EVENTS_READ],
        |r| {
            let command: Option<Value> = r
                .get::<_, Option<String>>(2)
                .ok()
                .flatten()
                .map(Value::String);
            let mut files = parse_json_list(&r.get::<_, String>(4)?);
            files.extend(parse_json_list(&r.get::<_, String>(3)?));
            Ok(Call {
                session: r.get(0)?,
                failed: r.get(1)?,
                command: command.and_then(|v| v.as_str().map(str::to_owned)),
                files,
                observation: r.get(5)?,
                cwd: r.get::<_, Option<String>>(6)?.unwrap_or_default(),
            })
        },
    )?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}

/// `path` relative to `root` when under it (a whole directory: `/a/b` is
/// not under `/a/bc`).
fn relative<'a>(path: &'a str, root: &str) -> &'a str {
    let root = root.trim_end_matches(['/', '\\']);
    if root.is_empty() {
        return path;
    }
    path.strip_prefix(root)
        .filter(|p| p.starts_with(['/', '\\']))
        .map(|p| p.trim_start_matches(['/', '\\']))
        .filter(|p| !p.is_empty())
        .unwrap_or(path)
}

impl Call {
    /// `path` relative to the directory the session worked in when under
    /// it (a worktree or checkout elsewhere, a subdirectory), else to the
    /// project's root.
    fn relative<'a>(&self, path: &'a str, root: &str) -> &'a str {
        let in_cwd = relative(path, &self.cwd);
        if in_cwd != path {
            return in_cwd;
        }
        relative(path, root)
    }
}

fn file_name(path: &str) -> &str {
    path.rsplit(['/', '\\']).next().unwrap_or(path)
}

/// The ecosystem a manifest file names, if it is one.
fn ecosystem_of(name: &str) -> Option<&'static str> {
    MANIFESTS
        .iter()
        .find(|(m, _)| *m == name)
        .or_else(|| MANIFEST_SUFFIXES.iter().find(|(s, _)| name.ends_with(s)))
        .map(|(_, e)| *e)
}

/// Evidence gathered for one item: weight, sources, files.
#[derive(Default)]
struct Tally {
    weight: i64,
    sources: BTreeSet<i64>,
    files: BTreeSet<String>,
    sessions: BTreeSet<i64>,
}

impl Tally {
    fn add(&mut self, call: &Call, file: Option<&str>) {
        self.weight += 1;
        self.sessions.insert(call.session);
        self.sources.extend(call.observation);
        self.files.extend(file.map(str::to_owned));
    }

    fn item(&self, kind: &str, key: &str, text: String) -> KnowledgeItem {
        let mut item = KnowledgeItem::new(kind, key, text);
        item.weight = self.weight;
        item.sources = self
            .sources
            .iter()
            .rev()
            .take(MAX_SOURCES)
            .map(|id| format!("#{id}"))
            .collect();
        item.files = self.files.iter().take(MAX_SOURCES).cloned().collect();
        item
    }
}

/// Ecosystems and tools, from the manifests the sessions touched and those
/// at the project's root.
fn stack_items(root: &Path, calls: &[Call]) -> Vec<KnowledgeItem> {
    let root_text = root.to_string_lossy();
    let mut found: BTreeMap<(&str, &str), Tally> = BTreeMap::new();
    let mut note = |file: &str, call: Option<&Call>| {
        let rel = call
            .map_or_else(
                || relative(file, &root_text),
                |c| c.relative(file, &root_text),
            )
            .to_owned();
        let name = file_name(&rel);
        let kind = ecosystem_of(name).map(|e| (store::STACK, e)).or_else(|| {
            TOOL_FILES
                .iter()
                .find(|(f, _)| *f == name)
                .map(|(_, t)| ("tool", *t))
        });
        if let Some(key) = kind {
            let tally = found.entry(key).or_default();
            match call {
                Some(c) => tally.add(c, Some(&rel)),
                None => {
                    tally.files.insert(rel);
                }
            }
        }
    };
    for call in calls {
        for f in &call.files {
            note(f, Some(call));
        }
    }
    if !root_text.is_empty() {
        let names = MANIFESTS.iter().chain(TOOL_FILES).map(|(f, _)| *f);
        for name in names.filter(|n| root.join(n).is_file()) {
            note(name, None);
        }
    }
    let (stacks, tools): (Vec<_>, Vec<_>) = found
        .into_iter()
        .partition(|((k, _), _)| *k == store::STACK);
    let mut items: Vec<KnowledgeItem> = stacks
        .iter()
        .map(|((_, eco), t)| {
            let files: Vec<&str> = t.files.iter().take(3).map(String::as_str).collect();
            let mut text = format!("{eco} ({})", files.join(", "));
            if let Some(said) = root_manifest_says(root, &t.files) {
                text.push_str(&format!(": {said}"));
            }
            t.item(store::STACK, eco, text)
        })
        .collect();
    if !tools.is_empty() {
        let names: Vec<String> = tools
            .iter()
            .map(|((_, tool), t)| {
                let file = t.files.iter().next().map(String::as_str).unwrap_or("");
                format!("{tool} ({file})")
            })
            .collect();
        let mut tally = Tally::default();
        for (_, t) in &tools {
            tally.weight += t.weight;
            tally.sources.extend(&t.sources);
            tally.files.extend(t.files.iter().cloned());
        }
        items.push(tally.item(
            store::STACK,
            "tools",
            format!("tools: {}", names.join(", ")),
        ));
    }
    items
}

/// What the project is, in its README's words ([`crate::readme`]): a stack
/// item under the key [`store::PURPOSE_KEY`], anchored to the README.
fn purpose_item(root: &Path) -> Option<KnowledgeItem> {
    if root.as_os_str().is_empty() {
        return None;
    }
    let (sentence, file) = crate::readme::purpose(root)?;
    let mut item = KnowledgeItem::new(store::STACK, store::PURPOSE_KEY, &sentence);
    item.files = vec![file.to_owned()];
    Some(item)
}

/// What the first of `files` that sits at the root says of the project
/// ([`crate::manifest`]); None without a root.
fn root_manifest_says(root: &Path, files: &BTreeSet<String>) -> Option<String> {
    if root.as_os_str().is_empty() {
        return None;
    }
    files
        .iter()
        .filter(|f| !f.contains(['/', '\\']))
        .find_map(|f| crate::manifest::describe(root, f))
}

/// The languages of the source files the sessions touched, most files first.
fn language_item(root: &str, calls: &[Call]) -> Option<KnowledgeItem> {
    let mut files: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
    let mut tally = Tally::default();
    for call in calls {
        for f in &call.files {
            let ext = Path::new(f)
                .extension()
                .and_then(|e| e.to_str())
                .unwrap_or("");
            if let Some((_, lang)) = LANGUAGES.iter().find(|(e, _)| *e == ext) {
                files
                    .entry(lang)
                    .or_default()
                    .insert(call.relative(f, root));
                tally.sources.extend(call.observation);
            }
        }
    }
    let mut ranked: Vec<(&str, usize)> = files.iter().map(|(l, f)| (*l, f.len())).collect();
    ranked.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
    ranked.truncate(MAX_LANGUAGES);
    if ranked.is_empty() {
        return None;
    }
    let parts: Vec<String> = ranked
        .iter()
        .map(|(lang, n)| format!("{lang} ({})", count_s(*n as i64, "file")))
        .collect();
    tally.weight = ranked.iter().map(|(_, n)| *n as i64).sum();
    let text = format!("languages of the files worked on: {}", parts.join(", "));
    Some(tally.item(store::STACK, "languages", text))
}

/// The directory a file counts for: its parent, at most `depth` levels deep.
fn module_of(rel: &str, depth: usize) -> Option<String> {
    let parts: Vec<&str> = rel.split(['/', '\\']).filter(|p| !p.is_empty()).collect();
    if parts.len() < 2 || parts[0] == ".." || Path::new(rel).is_absolute() {
        return None;
    }
    let depth = (parts.len() - 1).min(depth);
    Some(parts[..depth].join("/"))
}

/// Directories two levels deep, one level deeper (up to five) while a
/// single directory holds most of the files (`cmd/app/` says nothing of a
/// project that lives in it).
const MODULE_DEPTHS: [usize; 4] = [2, 3, 4, 5];

/// The directories most worked in, by distinct files touched.
fn layout_item(root: &str, calls: &[Call]) -> Option<KnowledgeItem> {
    let mut ranked = Vec::new();
    for depth in MODULE_DEPTHS {
        ranked = ranked_dirs(root, calls, depth);
        let total: usize = ranked.iter().map(|r| r.1).sum();
        if ranked.first().is_none_or(|top| top.1 * 3 < total * 2) {
            break;
        }
    }
    ranked.truncate(MAX_DIRS);
    if ranked.is_empty() {
        return None;
    }
    let mut tally = Tally::default();
    let mut parts = Vec::new();
    for (dir, n, t) in &ranked {
        parts.push(format!("{dir}/ ({})", count_s(*n as i64, "file")));
        tally.weight += *n as i64;
        tally.sources.extend(&t.sources);
        tally.files.insert(format!("{dir}/"));
    }
    let text = format!("main directories: {}", parts.join(", "));
    Some(tally.item(store::LAYOUT, "directories", text))
}

/// Directories `depth` levels deep with two files or more, most files first.
fn ranked_dirs(root: &str, calls: &[Call], depth: usize) -> Vec<(String, usize, Tally)> {
    let mut dirs: HashMap<String, (BTreeSet<String>, Tally)> = HashMap::new();
    for call in calls {
        for f in &call.files {
            let rel = call.relative(f, root);
            if let Some(dir) = module_of(rel, depth) {
                let (files, tally) = dirs.entry(dir).or_default();
                files.insert(rel.to_owned());
                tally.sessions.insert(call.session);
                tally.sources.extend(call.observation);
            }
        }
    }
    let mut ranked: Vec<(String, usize, Tally)> = dirs
        .into_iter()
        .map(|(d, (files, t))| (d, files.len(), t))
        .filter(|(_, n, _)| *n >= 2)
        .collect();
    ranked.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    ranked
}

/// The shape of a command: program and subcommand, with the task's name
/// for task runners (`npm run build`, `make test`, `go test ./...`).
pub fn command_shape(command: &str) -> Option<String> {
    let intent = gotchas::command_intent(command)?;
    let program = intent.split_whitespace().next()?.to_owned();
    if let Some(module) = python_module(command, &program) {
        return Some(format!("{program} -m {module}"));
    }
    if !program.starts_with(|c: char| c.is_ascii_alphanumeric() || c == '.') {
        return None;
    }
    let sub = intent.split_whitespace().nth(1);
    let Some(sub) = sub.filter(|_| TASK_RUNNERS.contains(&program.as_str())) else {
        return Some(intent);
    };
    // The word after the subcommand, when it names the task or the packages.
    let after = command
        .split_whitespace()
        .skip_while(|w| *w != sub)
        .nth(1)
        .filter(|w| {
            (RUN_VERBS.contains(&sub) && !w.starts_with('-')) || *w == "./..." || *w == "..."
        })
        .filter(|w| w.len() <= 40 && !w.contains(['"', '\'', '$', '`']));
    Some(match after {
        Some(a) => format!("{program} {sub} {a}"),
        None => intent,
    })
}

/// `python -m pytest` runs the module `pytest`.
fn python_module(command: &str, program: &str) -> Option<String> {
    if !program.starts_with("python") {
        return None;
    }
    let mut words = command
        .split_whitespace()
        .skip_while(|w| !w.ends_with(program));
    words.next()?;
    (words.next()? == "-m").then(|| words.next().map(str::to_owned))?
}

/// Build, test, lint and run commands that passed, most sessions first.
fn command_items(calls: &[Call]) -> Vec<KnowledgeItem> {
    let mut passed: HashMap<String, (CommandClass, Tally)> = HashMap::new();
    for call in calls.iter().filter(|c| !c.failed) {
        let Some(shape) = call.command.as_deref().and_then(command_shape) else {
            continue;
        };
        let class = classify_command(&shape);
        let program = shape.split_whitespace().next().unwrap_or("");
        let sub = shape.split_whitespace().nth(1).unwrap_or("");
        if REPORTING_SUBCOMMANDS.contains(&sub) {
            continue;
        }
        // A task runner on its own (`mix`, `npm`) names no task.
        let runs_tasks =
            class == CommandClass::Run && TASK_RUNNERS.contains(&program) && !sub.is_empty();
        if !(class.is_check() || runs_tasks) {
            continue;
        }
        passed
            .entry(shape)
            .or_insert((class, Tally::default()))
            .1
            .add(call, None);
    }
    let mut ranked: Vec<(String, CommandClass, Tally)> =
        passed.into_iter().map(|(s, (c, t))| (s, c, t)).collect();
    ranked.sort_by(|a, b| {
        (b.2.sessions.len(), b.2.weight)
            .cmp(&(a.2.sessions.len(), a.2.weight))
            .then(a.0.cmp(&b.0))
    });
    ranked
        .into_iter()
        .take(MAX_COMMANDS)
        .map(|(shape, class, mut t)| {
            let what = match class {
                CommandClass::Test => "test",
                CommandClass::Build => "build",
                CommandClass::Lint => "lint",
                _ => "run",
            };
            let sessions = count_s(t.sessions.len() as i64, "session");
            let text = format!("{what}: `{shape}` (passed {}x in {sessions})", t.weight);
            t.weight = t.sessions.len() as i64;
            t.item(store::COMMAND, &shape, text)
        })
        .collect()
}

/// Words that may come before a standing rule's `always` or `never`.
const RULE_LEADS: &[&str] = &[
    "please", "also", "and", "so", "but", "remember", "to", "you", "we", "should", "must", "i",
    "want", "make", "sure", "ok", "okay",
];

/// Whether a sentence of a prompt asks for something to hold from now on:
/// it starts (after a few leading words) with `always` or `never`, or says
/// `from now on` or `every time you`. Not a question, nor `never mind`.
fn is_standing_rule(sentence: &str) -> bool {
    let s = sentence.to_lowercase();
    if s.ends_with('?') || s.len() < 12 || s.len() > 200 {
        return false;
    }
    if s.contains("from now on") || s.contains("every time you") || s.contains("whenever you") {
        return true;
    }
    let words: Vec<&str> = s
        .split(|c: char| !c.is_alphanumeric() && c != '\'')
        .filter(|w| !w.is_empty())
        .collect();
    let mut rest = words.iter().skip_while(|w| RULE_LEADS.contains(w));
    match (rest.next(), rest.next()) {
        (Some(&"always"), Some(_)) => true,
        (Some(&"never"), Some(next)) => *next != "mind",
        _ => false,
    }
}

/// Sentences of the user's prompts that set a standing rule, newest first.
fn convention_items(conn: &Connection, project: i64) -> mnemo_recall::Result<Vec<KnowledgeItem>> {
    let mut stmt = conn.prepare_cached(
        "SELECT q.id, q.text FROM prompts q JOIN sessions s ON s.id = q.session_id
         WHERE s.project_id = ?1 AND q.origin = 'user'
         ORDER BY q.id DESC LIMIT ?2",
    )?;
    let rows = stmt.query_map(rusqlite::params![project, PROMPTS_READ], |r| {
        Ok((r.get::<_, i64>(0)?, r.get::<_, String>(1)?))
    })?;
    let mut items: Vec<KnowledgeItem> = Vec::new();
    for row in rows {
        let (id, text) = row?;
        if !sessions::is_real_request(&text) {
            continue;
        }
        for sentence in text.split_inclusive(['.', '!', '?', '\n']).map(str::trim) {
            let key = sentence.to_lowercase();
            if !is_standing_rule(sentence) || items.iter().any(|i| i.key == key) {
                continue;
            }
            let mut item = KnowledgeItem::new(store::CONVENTION, key, sentence.to_owned());
            item.weight = 1;
            item.sources = vec![format!("P{id}")];
            items.push(item);
        }
        if items.len() >= MAX_CONVENTIONS {
            break;
        }
    }
    items.truncate(MAX_CONVENTIONS);
    Ok(items)
}

/// Decisions no later decision replaced, newest first.
fn decision_items(conn: &Connection, project: i64) -> mnemo_recall::Result<Vec<KnowledgeItem>> {
    let mut stmt = conn.prepare_cached(
        "SELECT id, title, files_modified, files_read FROM observations
         WHERE project_id = ?1 AND type = 'decision'
         ORDER BY created_at DESC, id DESC LIMIT 40",
    )?;
    let rows: Vec<(i64, String, String, String)> = stmt
        .query_map([project], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?))
        })?
        .collect::<rusqlite::Result<_>>()?;
    let ids: Vec<i64> = rows.iter().map(|r| r.0).collect();
    let replaced = mnemo_recall::supersede::successors(conn, &ids)?;
    Ok(rows
        .into_iter()
        .filter(|(id, title, ..)| !replaced.contains_key(id) && says_what_was_chosen(title))
        .take(MAX_DECISIONS)
        .map(|(id, title, modified, read)| {
            let mut item = KnowledgeItem::new(store::DECISION, format!("#{id}"), title);
            item.weight = 1;
            item.sources = vec![format!("#{id}")];
            let mut files = parse_json_list(&modified);
            files.extend(parse_json_list(&read));
            files.truncate(3);
            item.files = files;
            item
        })
        .collect())
}

/// A decision record worth carrying forward: no question in it (a question
/// or pushback is not a decision), and enough words to say what was chosen
/// (`Decided: yes` says nothing on its own).
fn says_what_was_chosen(title: &str) -> bool {
    let text = title.split_once(':').map_or(title, |(head, rest)| {
        if head.split_whitespace().count() == 1 {
            rest
        } else {
            title
        }
    });
    let text = text.trim();
    !text.contains('?') && text.split_whitespace().count() >= 4
}

/// Work the newest sessions left open.
fn open_items(conn: &Connection, project: i64) -> mnemo_recall::Result<Vec<KnowledgeItem>> {
    let digests = sessions::recent(conn, project, 5, (None, false))?;
    Ok(digests
        .iter()
        .filter(|d| d.is_open())
        .take(MAX_OPEN)
        .filter_map(|d| {
            let last = d.last_summary()?.to_string();
            let mut item = KnowledgeItem::new(store::OPEN, last.clone(), d.open.clone());
            item.weight = 1;
            item.sources = vec![last];
            Some(item)
        })
        .collect())
}

/// Failures that recurred across sessions, and what fixed them.
fn problem_items(conn: &Connection, project: i64) -> mnemo_recall::Result<Vec<KnowledgeItem>> {
    let found = gotchas::recurring(conn, project, MAX_PROBLEMS)?;
    Ok(found
        .into_iter()
        .map(|g| {
            let mut text = format!("{} failed in {} sessions: {}", g.what, g.sessions, g.error);
            let mut item_sources = Vec::new();
            match &g.fix {
                Some(Fix::Observation(id, title)) => {
                    text.push_str(&format!(" -> fixed by #{id} {title}"));
                    item_sources.push(format!("#{id}"));
                }
                Some(Fix::Rerun(command)) => text.push_str(&format!(" -> worked as `{command}`")),
                None => text.push_str(" -> no fix recorded"),
            }
            let mut item = KnowledgeItem::new(store::PROBLEM, g.what.clone(), text);
            item.weight = g.sessions as i64;
            item.sources = item_sources;
            item
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn command_shapes_keep_program_subcommand_and_task() {
        let shape = |c| command_shape(c).unwrap_or_default();
        assert_eq!(shape("cargo test -p mnemo-store --lib"), "cargo test");
        assert_eq!(shape("cd web && npm run build -- --watch"), "npm run build");
        assert_eq!(shape("go test ./..."), "go test ./...");
        assert_eq!(shape("make lint"), "make lint");
        assert_eq!(shape("mise run ci"), "mise run ci");
        assert_eq!(shape("python -m pytest -x"), "python -m pytest");
        assert_eq!(command_shape("*** Begin Patch"), None);
    }

    #[test]
    fn paths_are_relative_to_whole_directories() {
        assert_eq!(relative("/p/app/src/x.rs", "/p/app"), "src/x.rs");
        assert_eq!(relative("/p/app/src/x.rs", "/p/app/"), "src/x.rs");
        assert_eq!(
            relative("/p/app-wt/src/x.rs", "/p/app"),
            "/p/app-wt/src/x.rs"
        );
        let call = Call {
            session: 1,
            cwd: "/p/app/.worktrees/2".into(),
            failed: false,
            command: None,
            files: Vec::new(),
            observation: None,
        };
        assert_eq!(
            call.relative("/p/app/.worktrees/2/cmd/main.go", "/p/app"),
            "cmd/main.go"
        );
        assert_eq!(call.relative("/p/app/go.mod", "/p/app"), "go.mod");
    }

    #[test]
    fn one_directory_holding_most_files_is_split_one_level_deeper() {
        let call = |f: &str| Call {
            session: 1,
            cwd: "/p".into(),
            failed: false,
            command: None,
            files: vec![format!("/p/{f}")],
            observation: None,
        };
        let calls: Vec<Call> = [
            "cmd/app/cli/a.go",
            "cmd/app/cli/b.go",
            "cmd/app/store/c.go",
            "cmd/app/store/d.go",
            "docs/x.md",
            "docs/y.md",
        ]
        .into_iter()
        .map(call)
        .collect();
        let text = layout_item("/p", &calls).unwrap().text;
        assert!(text.contains("cmd/app/cli/ (2 files)"), "{text}");
        assert!(text.contains("docs/ (2 files)"), "{text}");
        let spread: Vec<Call> = ["src/a.rs", "src/b.rs", "tests/c.rs", "tests/d.rs"]
            .into_iter()
            .map(call)
            .collect();
        assert!(
            layout_item("/p", &spread)
                .unwrap()
                .text
                .contains("src/ (2 files)")
        );
    }

    #[test]
    fn manifests_name_their_ecosystem() {
        assert_eq!(ecosystem_of("go.mod"), Some("Go"));
        assert_eq!(ecosystem_of("App.csproj"), Some(".NET (C#)"));
        assert_eq!(ecosystem_of("main.go"), None);
    }

    #[test]
    fn modules_are_directories_two_levels_deep() {
        assert_eq!(
            module_of("crates/store/src/lib.rs", 2).as_deref(),
            Some("crates/store")
        );
        assert_eq!(module_of("src/main.go", 2).as_deref(), Some("src"));
        assert_eq!(module_of("README.md", 2), None);
        assert_eq!(module_of("../other/x.rs", 2), None);
        assert_eq!(
            module_of("cmd/app/cli/strategy/x.go", 3).as_deref(),
            Some("cmd/app/cli")
        );
    }

    #[test]
    fn standing_rules_are_statements_with_always_or_never() {
        assert!(is_standing_rule("Always run the linter before committing."));
        assert!(is_standing_rule("never push to main directly"));
        assert!(!is_standing_rule("why does it always fail?"));
        assert!(!is_standing_rule("fix the parser"));
        assert!(!is_standing_rule("never mind, we'll look at it later."));
        assert!(!is_standing_rule(
            "the event never fires, the commit never updates."
        ));
        assert!(is_standing_rule("From now on, use the staging database."));
    }

    #[test]
    fn decisions_that_say_nothing_are_not_carried() {
        assert!(says_what_was_chosen(
            "Chose nesting the option under strategy settings"
        ));
        assert!(!says_what_was_chosen("Decided: yes please"));
        assert!(!says_what_was_chosen(
            "Decided: compare hash <- how is this done?"
        ));
    }
}
