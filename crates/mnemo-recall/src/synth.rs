//! A large synthetic store, for benchmarks only (feature `synth`; used by
//! the `synth_store` example and `cargo bench -p mnemo --bench recall_latency`).
//!
//! Deterministic (a fixed-seed xorshift), written through the store's own
//! functions (sessions and prompts through `Store::apply`, observations and
//! summaries through `insert_observation`/`insert_summary`, so the FTS and
//! file indexes are real). Text is drawn from a skewed vocabulary of common
//! programming words and generated ones, so that common words match many
//! rows and rare words few, as in a real store. Observations span the last
//! year, one session per 50 observations, five turns per session, a summary
//! per turn, and the last sessions have captured events naming files.

use std::path::Path;

use mnemo_core::model::{EventKind, Platform, Priority};
use mnemo_store::memory::{
    IndexBacklog, NewObservation, NewSummary, insert_observation_row, insert_summary_row,
};
use mnemo_store::record::new_capture_id;
use mnemo_store::{Capture, CaptureOp, EventRecord, PromptOrigin, SessionRef, Store};

const COMMON: &[&str] = &[
    "login",
    "auth",
    "session",
    "cache",
    "parser",
    "config",
    "test",
    "fix",
    "error",
    "handler",
    "database",
    "query",
    "index",
    "migration",
    "schema",
    "request",
    "response",
    "token",
    "user",
    "password",
    "hash",
    "cookie",
    "router",
    "server",
    "client",
    "retry",
    "timeout",
    "queue",
    "worker",
    "lock",
    "file",
    "path",
    "build",
    "release",
    "deploy",
    "log",
    "metric",
    "search",
    "render",
    "template",
    "component",
    "state",
    "store",
    "event",
    "hook",
    "stream",
    "buffer",
    "encode",
    "decode",
    "json",
    "yaml",
    "toml",
    "api",
    "endpoint",
    "middleware",
    "validation",
    "permission",
    "role",
    "admin",
    "payment",
    "invoice",
    "email",
    "upload",
];
const TYPES: &[(&str, u32)] = &[
    ("change", 30),
    ("discovery", 25),
    ("bugfix", 15),
    ("feature", 15),
    ("refactor", 8),
    ("decision", 5),
    ("memory", 2),
];
const OBS_PER_SESSION: usize = 50;
const TURNS_PER_SESSION: i64 = 5;

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    /// Skewed towards 0: a few items very common, most rare.
    fn skewed(&mut self, n: usize) -> usize {
        let u = (self.next() % 1_000_000) as f64 / 1_000_000.0;
        ((u * u * u) * n as f64) as usize
    }
}

struct Corpus {
    words: Vec<String>,
    files: Vec<String>,
}

impl Corpus {
    fn new(rng: &mut Rng, root: &str) -> Corpus {
        const SYLLABLES: &[&str] = &[
            "ka", "lo", "mi", "ne", "ru", "ta", "vo", "xi", "ze", "bra", "cle", "dro", "fen",
            "gil", "hur", "jax", "mon", "pel", "qua", "sti", "tor", "ulm", "vin", "wex",
        ];
        let mut words: Vec<String> = COMMON.iter().map(|w| (*w).to_owned()).collect();
        while words.len() < 5000 {
            let n = 2 + rng.below(3);
            let w: String = (0..n)
                .map(|_| SYLLABLES[rng.below(SYLLABLES.len())])
                .collect();
            if !words.contains(&w) {
                words.push(w);
            }
        }
        let dirs = [
            "src",
            "src/api",
            "src/db",
            "src/ui",
            "tests",
            "crates/core/src",
            "lib",
        ];
        let files = (0..1500)
            .map(|i| {
                let dir = dirs[i % dirs.len()];
                let name = &words[rng.below(words.len())];
                format!("{root}/{dir}/{name}_{i}.rs")
            })
            .collect();
        Corpus { words, files }
    }

    fn sentence(&self, rng: &mut Rng, min: usize, max: usize) -> String {
        let n = min + rng.below(max - min + 1);
        (0..n)
            .map(|_| self.words[rng.skewed(self.words.len())].as_str())
            .collect::<Vec<_>>()
            .join(" ")
    }

    fn file(&self, rng: &mut Rng) -> String {
        self.files[rng.skewed(self.files.len())].clone()
    }
}

fn pick_type(rng: &mut Rng) -> &'static str {
    let total: u32 = TYPES.iter().map(|t| t.1).sum();
    let mut x = rng.below(total as usize) as u32;
    for (t, w) in TYPES {
        if x < *w {
            return t;
        }
        x -= w;
    }
    "change"
}

fn session_ref(root: &str, sid: &str) -> SessionRef {
    SessionRef {
        platform: Platform::ClaudeCode,
        platform_session_id: sid.to_owned(),
        project_root: Some(root.to_owned()),
        project_name: Path::new(root)
            .file_name()
            .map(|n| n.to_string_lossy().into_owned()),
        cwd: Some(root.to_owned()),
    }
}

/// What one project's records are drawn from and when they happen.
struct Fill<'a> {
    root: &'a str,
    tag: &'a str,
    corpus: Corpus,
    /// The first record's time and the time between two records.
    start: i64,
    step: i64,
}

fn fill(store: &mut Store, root: &str, n: usize, rng: &mut Rng, tag: &str) {
    let span = 365 * 24 * 3600 * 1000_i64;
    let fill = Fill {
        root,
        tag,
        corpus: Corpus::new(rng, root),
        start: mnemo_core::time::now_ms() - span,
        step: (span - 3_600_000) / n.max(1) as i64,
    };
    let sessions = n.div_ceil(OBS_PER_SESSION);
    let session_rows: Vec<i64> = (0..sessions)
        .map(|s| fill.session(store, rng, s, s + 3 >= sessions))
        .collect();
    let project_id: i64 = store
        .conn()
        .query_row("SELECT id FROM projects WHERE root = ?1", [root], |r| {
            r.get(0)
        })
        .expect("project row");
    let tx = store.conn_mut().transaction().expect("transaction");
    // Full-text rows after each batch's table rows, as the store's import
    // writes them: an FTS5 insert between two table inserts flushes a tiny
    // index segment per record.
    let mut backlog = IndexBacklog::default();
    for i in 0..n {
        let session = session_rows[i / OBS_PER_SESSION];
        let turn = 1 + ((i % OBS_PER_SESSION) as i64 * TURNS_PER_SESSION / OBS_PER_SESSION as i64);
        let at = (Some(project_id), Some(session), Some(turn));
        let o = fill.observation(rng, i, at);
        if let Some(id) = insert_observation_row(&tx, &o).expect("observation") {
            backlog.observation(id);
        }
        if i % (OBS_PER_SESSION / TURNS_PER_SESSION as usize) == 0 {
            let s = fill.summary(rng, i, at);
            if let Some(id) = insert_summary_row(&tx, &s).expect("summary") {
                backlog.summary(id);
            }
        }
        backlog.write_if_full(&tx).expect("full-text rows");
    }
    backlog.write(&tx).expect("full-text rows");
    tx.commit().expect("commit");
}

/// Project, session and turn of a record.
type Place = (Option<i64>, Option<i64>, Option<i64>);

impl Fill<'_> {
    /// Session number `s` with its prompts (and, when `live`, captured
    /// events naming files, as the last sessions of a real store have);
    /// its row id.
    fn session(&self, store: &mut Store, rng: &mut Rng, s: usize, live: bool) -> i64 {
        let sid = format!("{}-session-{s:06}", self.tag);
        let t0 = self.start + (s * OBS_PER_SESSION) as i64 * self.step;
        let apply = |store: &mut Store, op: CaptureOp, at: i64| {
            store
                .apply(&Capture {
                    capture_id: new_capture_id(),
                    at_ms: at,
                    session: session_ref(self.root, &sid),
                    op,
                })
                .expect("apply");
        };
        let start = CaptureOp::SessionStart {
            source: Some("startup".into()),
            transcript_path: None,
        };
        apply(store, start, t0);
        for turn in 0..TURNS_PER_SESSION {
            let text = format!("please {}", self.corpus.sentence(rng, 4, 14));
            let prompt = CaptureOp::Prompt {
                platform_prompt_id: None,
                text: Some(text),
                origin: PromptOrigin::User,
            };
            apply(store, prompt, t0 + turn * self.step * 10);
        }
        let events = if live { 20 } else { 0 };
        for _ in 0..events {
            let mut e = EventRecord::new(EventKind::ToolUse, Priority::High);
            e.tool_name = Some("Edit".into());
            e.files_modified = vec![self.corpus.file(rng)];
            apply(store, CaptureOp::Event(e), t0 + self.step);
        }
        store
            .conn()
            .query_row(
                "SELECT id FROM sessions WHERE platform_session_id = ?1",
                [&sid],
                |r| r.get(0),
            )
            .expect("session row")
    }

    fn observation(
        &self,
        rng: &mut Rng,
        i: usize,
        (project, session, turn): Place,
    ) -> NewObservation {
        let corpus = &self.corpus;
        let modified: Vec<String> = (0..rng.below(3)).map(|_| corpus.file(rng)).collect();
        let read: Vec<String> = (0..rng.below(3)).map(|_| corpus.file(rng)).collect();
        NewObservation {
            uid: format!("{}-obs-{i}", self.tag),
            project_id: project,
            session_id: session,
            prompt_number: turn,
            kind: pick_type(rng).to_owned(),
            title: corpus.sentence(rng, 4, 9),
            subtitle: corpus.sentence(rng, 3, 8),
            narrative: corpus.sentence(rng, 30, 80),
            facts: (0..1 + rng.below(3))
                .map(|_| corpus.sentence(rng, 5, 12))
                .collect(),
            concepts: (0..1 + rng.below(3))
                .map(|_| corpus.words[rng.skewed(200)].clone())
                .collect(),
            files_read: read,
            files_modified: modified,
            source: "offline".into(),
            created_at: self.start + i as i64 * self.step,
        }
    }

    fn summary(&self, rng: &mut Rng, i: usize, (project, session, turn): Place) -> NewSummary {
        let corpus = &self.corpus;
        NewSummary {
            uid: format!("{}-sum-{i}", self.tag),
            project_id: project,
            session_id: session,
            prompt_number: turn,
            request: corpus.sentence(rng, 4, 12),
            investigated: corpus.sentence(rng, 6, 20),
            learned: corpus.sentence(rng, 6, 20),
            completed: corpus.sentence(rng, 6, 20),
            next_steps: corpus.sentence(rng, 4, 12),
            notes: String::new(),
            source: "offline".into(),
            created_at: self.start + i as i64 * self.step + 1,
        }
    }
}

/// Fills the database at `db` (created if missing) with `n` observations in
/// the project at `root` (a canonical directory) and `other` in a second
/// project next to it (`<root>-other`).
pub fn build(db: &Path, root: &Path, n: usize, other: usize) -> mnemo_store::Result<()> {
    let root = root.to_string_lossy().into_owned();
    let mut store = Store::open(db, std::time::Duration::from_secs(5))?;
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    fill(&mut store, &root, n, &mut rng, "main");
    if other > 0 {
        fill(
            &mut store,
            &format!("{root}-other"),
            other,
            &mut rng,
            "other",
        );
    }
    store.checkpoint_passive()
}
