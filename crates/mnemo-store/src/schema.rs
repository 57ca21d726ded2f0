//! The schema, as forward-only numbered migrations.
//!
//! `PRAGMA user_version` holds the number of migrations applied. Opening an
//! up-to-date database reads that one integer and nothing else, which keeps
//! the hook path cheap; a migration runs once, inside a write transaction,
//! and a database from a newer mnemo is refused rather than guessed at.
//!
//! Never edit a migration that has shipped: append a new one.

/// Migration `i` brings the schema from version `i` to `i + 1`.
pub const MIGRATIONS: &[&str] = &[
    V1_CAPTURE_AND_MEMORY,
    V2_WORKER_AND_RECALL,
    V3_OBSERVATION_FILES,
    V4_TURN_PIECES,
    V5_RECALL_SHOWN,
    V6_IDENTIFIER_WORDS,
    V7_SESSION_CONTINUITY_AND_ONCE,
    V8_CURATION,
    V9_KNOWLEDGE_AND_FRESHNESS,
    V10_DECISION_SUPERSEDED_BY,
    V11_SYNC,
    V12_SUBSTRING_INDEX,
    V13_EMBEDDINGS,
    V14_TURN_NOTES,
    V15_VECTOR_PACKS,
    V16_PROJECT_COUNTS,
];

/// The migration that adds the `idents` columns: right after it runs, Rust
/// code fills them for the rows already stored and rebuilds the full-text
/// indexes (see `crate::memory::fill_idents`). Recognised by its text, so
/// that its number can change when migrations are merged.
pub const IDENTS_MIGRATION: &str = V6_IDENTIFIER_WORDS;

/// The schema version this build writes.
pub const LATEST: i64 = MIGRATIONS.len() as i64;

const V1_CAPTURE_AND_MEMORY: &str = r#"
-- A project is a canonical directory (see mnemo_core::project); the name is a label.
CREATE TABLE projects (
    id          INTEGER PRIMARY KEY,
    root        TEXT NOT NULL UNIQUE,
    name        TEXT NOT NULL,
    created_at  INTEGER NOT NULL
);

-- The platform's session id is the source of truth; hooks create sessions
-- idempotently, in whatever order they arrive.
CREATE TABLE sessions (
    id                   INTEGER PRIMARY KEY,
    platform             TEXT NOT NULL,
    platform_session_id  TEXT NOT NULL,
    project_id           INTEGER REFERENCES projects(id),
    cwd                  TEXT,
    source               TEXT,
    transcript_path      TEXT,
    status               TEXT NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'ended')),
    end_reason           TEXT,
    prompt_count         INTEGER NOT NULL DEFAULT 0,
    current_prompt_id    TEXT,
    started_at           INTEGER NOT NULL,
    updated_at           INTEGER NOT NULL,
    ended_at             INTEGER,
    UNIQUE (platform, platform_session_id)
);
CREATE INDEX sessions_by_project ON sessions(project_id, started_at);

-- One row per stored prompt. prompt_number is the session's turn number; a
-- fully private prompt counts as a turn but leaves no row.
CREATE TABLE prompts (
    id                  INTEGER PRIMARY KEY,
    uid                 TEXT NOT NULL UNIQUE,
    session_id          INTEGER NOT NULL REFERENCES sessions(id),
    prompt_number       INTEGER NOT NULL,
    platform_prompt_id  TEXT,
    origin              TEXT NOT NULL DEFAULT 'user',
    text                TEXT NOT NULL,
    created_at          INTEGER NOT NULL,
    UNIQUE (session_id, prompt_number)
);
CREATE INDEX prompts_by_platform_id ON prompts(session_id, platform_prompt_id);

-- Captured events: the durable queue the worker drains, highest priority
-- (lowest number) first. Inputs and responses are JSON text, already
-- sanitized and size-capped; `note` says what was cut or withheld.
CREATE TABLE events (
    id                  INTEGER PRIMARY KEY,
    uid                 TEXT NOT NULL UNIQUE,
    session_id          INTEGER NOT NULL REFERENCES sessions(id),
    prompt_number       INTEGER NOT NULL DEFAULT 0,
    platform_prompt_id  TEXT,
    kind                TEXT NOT NULL CHECK (kind IN ('tool_use', 'tool_failure', 'turn_end')),
    tool_name           TEXT,
    tool_use_id         TEXT,
    input               TEXT,
    response            TEXT,
    error               TEXT,
    files_read          TEXT NOT NULL DEFAULT '[]',
    files_modified      TEXT NOT NULL DEFAULT '[]',
    priority            INTEGER NOT NULL DEFAULT 1,
    duration_ms         INTEGER,
    note                TEXT,
    status              TEXT NOT NULL DEFAULT 'pending'
                        CHECK (status IN ('pending', 'leased', 'done', 'failed')),
    attempts            INTEGER NOT NULL DEFAULT 0,
    lease_until         INTEGER,
    last_error          TEXT,
    created_at          INTEGER NOT NULL
);
CREATE INDEX events_queue ON events(status, priority, id);
CREATE INDEX events_by_turn ON events(session_id, prompt_number);
CREATE INDEX events_by_platform_prompt ON events(session_id, platform_prompt_id);
-- The same tool call reported twice (hooks installed at two scopes) is one event.
CREATE UNIQUE INDEX events_tool_use_once ON events(session_id, tool_use_id)
    WHERE tool_use_id IS NOT NULL;

-- Typed observations, written by the worker (or imported, or saved by the agent).
CREATE TABLE observations (
    id              INTEGER PRIMARY KEY,
    uid             TEXT NOT NULL UNIQUE,
    project_id      INTEGER REFERENCES projects(id),
    session_id      INTEGER REFERENCES sessions(id),
    prompt_number   INTEGER,
    type            TEXT NOT NULL,
    title           TEXT NOT NULL,
    subtitle        TEXT NOT NULL DEFAULT '',
    narrative       TEXT NOT NULL DEFAULT '',
    facts           TEXT NOT NULL DEFAULT '[]',
    concepts        TEXT NOT NULL DEFAULT '[]',
    files_read      TEXT NOT NULL DEFAULT '[]',
    files_modified  TEXT NOT NULL DEFAULT '[]',
    source          TEXT NOT NULL DEFAULT 'offline',
    created_at      INTEGER NOT NULL
);
CREATE INDEX observations_by_project ON observations(project_id, created_at);
CREATE INDEX observations_by_session ON observations(session_id, prompt_number);

-- One summary per prompt turn.
CREATE TABLE summaries (
    id              INTEGER PRIMARY KEY,
    uid             TEXT NOT NULL UNIQUE,
    project_id      INTEGER REFERENCES projects(id),
    session_id      INTEGER REFERENCES sessions(id),
    prompt_number   INTEGER,
    request         TEXT NOT NULL DEFAULT '',
    investigated    TEXT NOT NULL DEFAULT '',
    learned         TEXT NOT NULL DEFAULT '',
    completed       TEXT NOT NULL DEFAULT '',
    next_steps      TEXT NOT NULL DEFAULT '',
    notes           TEXT NOT NULL DEFAULT '',
    source          TEXT NOT NULL DEFAULT 'offline',
    created_at      INTEGER NOT NULL
);
CREATE INDEX summaries_by_project ON summaries(project_id, created_at);
CREATE INDEX summaries_by_session ON summaries(session_id, prompt_number);

-- Spooled captures already applied, so that re-reading a spool file after a
-- crash applies nothing twice.
CREATE TABLE applied_captures (
    capture_id  TEXT PRIMARY KEY,
    applied_at  INTEGER NOT NULL
) WITHOUT ROWID;

-- Full-text indexes (external content: the text lives once, in the tables).
-- Kept in step by crate::memory and crate::capture, not by triggers (see memory.rs).
CREATE VIRTUAL TABLE observations_fts USING fts5(
    title, subtitle, narrative, facts, concepts, files_read, files_modified,
    content='observations', content_rowid='id', tokenize='porter unicode61 remove_diacritics 2'
);

CREATE VIRTUAL TABLE summaries_fts USING fts5(
    request, investigated, learned, completed, next_steps, notes,
    content='summaries', content_rowid='id', tokenize='porter unicode61 remove_diacritics 2'
);

CREATE VIRTUAL TABLE prompts_fts USING fts5(
    text, content='prompts', content_rowid='id', tokenize='porter unicode61 remove_diacritics 2'
);
"#;

const V2_WORKER_AND_RECALL: &str = r#"
-- Every LLM call the worker makes: what it cost and why (cost governance).
CREATE TABLE llm_calls (
    id              INTEGER PRIMARY KEY,
    provider        TEXT NOT NULL,
    model           TEXT NOT NULL,
    purpose         TEXT NOT NULL,
    project_id      INTEGER REFERENCES projects(id),
    session_id      INTEGER REFERENCES sessions(id),
    input_tokens    INTEGER NOT NULL DEFAULT 0,
    output_tokens   INTEGER NOT NULL DEFAULT 0,
    duration_ms     INTEGER NOT NULL DEFAULT 0,
    ok              INTEGER NOT NULL DEFAULT 1,
    error           TEXT,
    created_at      INTEGER NOT NULL
);
CREATE INDEX llm_calls_by_time ON llm_calls(created_at);
CREATE INDEX llm_calls_by_session ON llm_calls(session_id);

-- Files whose history was already shown to the agent in a session
-- (PreToolUse file context: at most once per file per session).
CREATE TABLE file_context_shown (
    session_id  INTEGER NOT NULL,
    path        TEXT NOT NULL,
    shown_at    INTEGER NOT NULL,
    PRIMARY KEY (session_id, path)
) WITHOUT ROWID;
"#;

const V3_OBSERVATION_FILES: &str = r#"
-- Which observations name which file, so that a file's history (PreToolUse
-- file context, `search --file`) is one index lookup instead of a scan of
-- every observation's JSON lists. Paths are stored as the observation gives
-- them (absolute from capture, possibly relative from imports). Kept in step
-- by crate::memory::insert_observation.
CREATE TABLE observation_files (
    path            TEXT NOT NULL,
    observation_id  INTEGER NOT NULL,
    modified        INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (path, observation_id)
) WITHOUT ROWID;

INSERT OR IGNORE INTO observation_files (path, observation_id, modified)
    SELECT j.value, o.id, 1 FROM observations o, json_each(o.files_modified) j
    WHERE json_valid(o.files_modified) AND j.type = 'text' AND j.value <> '';
INSERT OR IGNORE INTO observation_files (path, observation_id, modified)
    SELECT j.value, o.id, 0 FROM observations o, json_each(o.files_read) j
    WHERE json_valid(o.files_read) AND j.type = 'text' AND j.value <> '';
"#;

const V4_TURN_PIECES: &str = r#"
-- Partial summaries of the pieces of a long turn still being compressed
-- (see crate::pieces): the turn's last piece merges them into its summary,
-- then they are deleted.
CREATE TABLE IF NOT EXISTS turn_pieces (
    id             INTEGER PRIMARY KEY,
    uid            TEXT NOT NULL UNIQUE,
    session_id     INTEGER NOT NULL,
    prompt_number  INTEGER NOT NULL,
    request        TEXT NOT NULL DEFAULT '',
    investigated   TEXT NOT NULL DEFAULT '',
    learned        TEXT NOT NULL DEFAULT '',
    completed      TEXT NOT NULL DEFAULT '',
    next_steps     TEXT NOT NULL DEFAULT '',
    notes          TEXT NOT NULL DEFAULT '',
    created_at     INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS turn_pieces_by_turn ON turn_pieces(session_id, prompt_number);
"#;

const V5_RECALL_SHOWN: &str = r#"
-- (IF NOT EXISTS: a store whose version was set back by hand migrates again.)
-- Memory items (`#12`, `S3`) already given to the agent in a session (the
-- SessionStart index, prompt-time recall), so that prompt-time recall never
-- repeats them. Written by the hook path (mnemo-capture's recall).
CREATE TABLE IF NOT EXISTS recall_shown (
    session_id  INTEGER NOT NULL,
    item        TEXT NOT NULL,
    shown_at    INTEGER NOT NULL,
    PRIMARY KEY (session_id, item)
) WITHOUT ROWID;

-- The failed tool calls of a session (recurring gotchas in the index), without
-- walking every event of the project's last sessions.
CREATE INDEX IF NOT EXISTS events_failures ON events(session_id, created_at) WHERE kind = 'tool_failure';
"#;

const V6_IDENTIFIER_WORDS: &str = r#"
-- The other spelling of each compound name in a record (see crate::idents):
-- `parseConfig` gives `parse config`, `parse_config` gives `parseconfig`.
-- Written with the row by crate::memory; filled for older rows in Rust
-- right after this migration, which then rebuilds the indexes.
ALTER TABLE observations ADD COLUMN idents TEXT NOT NULL DEFAULT '';
ALTER TABLE summaries ADD COLUMN idents TEXT NOT NULL DEFAULT '';
ALTER TABLE prompts ADD COLUMN idents TEXT NOT NULL DEFAULT '';

DROP TABLE observations_fts;
CREATE VIRTUAL TABLE observations_fts USING fts5(
    title, subtitle, narrative, facts, concepts, files_read, files_modified, idents,
    content='observations', content_rowid='id', tokenize='porter unicode61 remove_diacritics 2'
);
DROP TABLE summaries_fts;
CREATE VIRTUAL TABLE summaries_fts USING fts5(
    request, investigated, learned, completed, next_steps, notes, idents,
    content='summaries', content_rowid='id', tokenize='porter unicode61 remove_diacritics 2'
);
DROP TABLE prompts_fts;
CREATE VIRTUAL TABLE prompts_fts USING fts5(
    text, idents,
    content='prompts', content_rowid='id', tokenize='porter unicode61 remove_diacritics 2'
);
"#;

const V7_SESSION_CONTINUITY_AND_ONCE: &str = r#"
-- Claude Code gives a session a new id on /clear and on compaction
-- (SessionStart `source` clear|compact): the new session names the one it
-- continues (its sessions.id), so that its turns read as one line of work
-- (crate::capture). No REFERENCES clause: a column with one cannot be
-- dropped, which the migration tests do to rebuild an older schema.
ALTER TABLE sessions ADD COLUMN continues INTEGER;

-- The same tool call reported twice without a tool id (hooks registered by
-- two configurations) is found among the session's latest events.
CREATE INDEX IF NOT EXISTS events_by_session_time ON events(session_id, created_at);
"#;

const V8_CURATION: &str = r#"
-- User curation (see crate::curate): an observation the user edited keeps
-- when (edited_at), and a pinned one is always in its project's index.
ALTER TABLE observations ADD COLUMN edited_at INTEGER;
ALTER TABLE observations ADD COLUMN pinned INTEGER NOT NULL DEFAULT 0;
CREATE INDEX IF NOT EXISTS observations_pinned ON observations(project_id) WHERE pinned = 1;

-- Uids of forgotten observations and summaries: a batch redone after a
-- forget derives the same uids and must not write them back.
CREATE TABLE IF NOT EXISTS forgotten (
    uid           TEXT PRIMARY KEY,
    forgotten_at  INTEGER NOT NULL
) WITHOUT ROWID;

-- Retention: when an event was compressed (NULL for those compressed
-- before this column: their capture time stands in), and when its raw input
-- and response were dropped.
ALTER TABLE events ADD COLUMN compressed_at INTEGER;
ALTER TABLE events ADD COLUMN pruned_at INTEGER;

-- A deleted row's words leave the full-text index at once, not at the next
-- merge: a forgotten or redacted string is then gone from the file's bytes.
INSERT INTO observations_fts (observations_fts, rank) VALUES ('secure-delete', 1);
INSERT INTO summaries_fts (summaries_fts, rank) VALUES ('secure-delete', 1);
INSERT INTO prompts_fts (prompts_fts, rank) VALUES ('secure-delete', 1);
"#;

const V9_KNOWLEDGE_AND_FRESHNESS: &str = r#"
-- What a file held when an observation about it was written (see
-- crate::freshness): its content id, size and modification time, so that
-- reading the observation later can say whether the file changed since.
-- No row for observations written before this table, or for a file that
-- was absent. Deleted with the observation (crate::curate).
CREATE TABLE IF NOT EXISTS file_baselines (
    observation_id  INTEGER NOT NULL,
    path            TEXT NOT NULL,
    content_id      TEXT NOT NULL,
    size            INTEGER NOT NULL,
    mtime_ms        INTEGER NOT NULL,
    PRIMARY KEY (observation_id, path)
) WITHOUT ROWID;

-- Durable knowledge of a project (crate::knowledge), consolidated by the
-- worker from the records after each compressed batch and replaced in place:
-- one row per (kind, key), with the weight of its evidence, the records it
-- comes from and the files it is anchored to.
CREATE TABLE IF NOT EXISTS knowledge (
    project_id  INTEGER NOT NULL,
    kind        TEXT NOT NULL,
    key         TEXT NOT NULL,
    text        TEXT NOT NULL,
    weight      INTEGER NOT NULL DEFAULT 0,
    sources     TEXT NOT NULL DEFAULT '[]',
    files       TEXT NOT NULL DEFAULT '[]',
    updated_at  INTEGER NOT NULL,
    PRIMARY KEY (project_id, kind, key)
) WITHOUT ROWID;
"#;

const V10_DECISION_SUPERSEDED_BY: &str = r#"
-- A decision a later decision of the same project replaced: the id of the
-- later one, set by the worker when it writes the later decision (the
-- subject rule is mnemo_recall::supersede). NULL for a decision in force.
ALTER TABLE observations ADD COLUMN superseded_by INTEGER;
CREATE INDEX IF NOT EXISTS observations_superseded
    ON observations(superseded_by) WHERE superseded_by IS NOT NULL;
"#;

const V11_SYNC: &str = r#"
-- Sync (crates/mnemo-sync). Which observations and summaries changed since
-- the last push: written by the triggers below, only once some space is
-- configured, and emptied as changes are queued in sync_outbox.
CREATE TABLE IF NOT EXISTS sync_changes (
    seq   INTEGER PRIMARY KEY AUTOINCREMENT,
    kind  TEXT NOT NULL CHECK (kind IN ('observation', 'summary')),
    uid   TEXT NOT NULL
);
-- Server, device, token, clock: one value per key.
CREATE TABLE IF NOT EXISTS sync_state (
    key    TEXT PRIMARY KEY,
    value  TEXT NOT NULL
) WITHOUT ROWID;
-- The spaces this machine syncs; a shared space names its local project.
CREATE TABLE IF NOT EXISTS sync_spaces (
    space_id      INTEGER PRIMARY KEY,
    kind          TEXT NOT NULL,
    project_root  TEXT,
    epoch         INTEGER NOT NULL,
    next_seq      INTEGER NOT NULL DEFAULT 1,
    pull_after    INTEGER NOT NULL DEFAULT 0,
    last_sync_at  INTEGER,
    last_error    TEXT
);
-- Space keys, wrapped for this person's public key (never stored in clear).
CREATE TABLE IF NOT EXISTS sync_keys (
    space_id  INTEGER NOT NULL,
    epoch     INTEGER NOT NULL,
    wrapped   BLOB NOT NULL,
    PRIMARY KEY (space_id, epoch)
) WITHOUT ROWID;
-- Versions queued for a space under this device's next sequence numbers,
-- sealed when pushed; deleted once the server holds them. Plain JSON text,
-- so that a redaction reaches a version still waiting here.
CREATE TABLE IF NOT EXISTS sync_outbox (
    space_id  INTEGER NOT NULL,
    seq       INTEGER NOT NULL,
    uid       TEXT NOT NULL,
    plain     TEXT NOT NULL,
    PRIMARY KEY (space_id, seq)
) WITHOUT ROWID;
-- The last version of each record pushed or applied: its clock, a digest
-- of its content (an unchanged record is not pushed again) and whether it
-- was forgotten.
CREATE TABLE IF NOT EXISTS sync_records (
    uid       TEXT PRIMARY KEY,
    space_id  INTEGER NOT NULL,
    hlc       TEXT NOT NULL,
    digest    TEXT NOT NULL,
    deleted   INTEGER NOT NULL DEFAULT 0
) WITHOUT ROWID;
-- The highest sequence number applied per device of a space: a blob at or
-- below it is a replay and is refused.
CREATE TABLE IF NOT EXISTS sync_seen (
    space_id   INTEGER NOT NULL,
    device_id  INTEGER NOT NULL,
    seq        INTEGER NOT NULL,
    PRIMARY KEY (space_id, device_id)
) WITHOUT ROWID;
-- Who wrote a record that came from another person (NULL: this person).
ALTER TABLE observations ADD COLUMN author TEXT;
ALTER TABLE summaries ADD COLUMN author TEXT;

CREATE TRIGGER IF NOT EXISTS sync_observation_added AFTER INSERT ON observations
WHEN EXISTS (SELECT 1 FROM sync_spaces)
BEGIN INSERT INTO sync_changes (kind, uid) VALUES ('observation', new.uid); END;
CREATE TRIGGER IF NOT EXISTS sync_observation_changed
AFTER UPDATE OF type, title, subtitle, narrative, facts, concepts, files_read, files_modified, pinned
ON observations WHEN EXISTS (SELECT 1 FROM sync_spaces)
BEGIN INSERT INTO sync_changes (kind, uid) VALUES ('observation', new.uid); END;
CREATE TRIGGER IF NOT EXISTS sync_observation_removed AFTER DELETE ON observations
WHEN EXISTS (SELECT 1 FROM sync_spaces)
BEGIN INSERT INTO sync_changes (kind, uid) VALUES ('observation', old.uid); END;
CREATE TRIGGER IF NOT EXISTS sync_summary_added AFTER INSERT ON summaries
WHEN EXISTS (SELECT 1 FROM sync_spaces)
BEGIN INSERT INTO sync_changes (kind, uid) VALUES ('summary', new.uid); END;
CREATE TRIGGER IF NOT EXISTS sync_summary_changed
AFTER UPDATE OF request, investigated, learned, completed, next_steps, notes ON summaries
WHEN EXISTS (SELECT 1 FROM sync_spaces)
BEGIN INSERT INTO sync_changes (kind, uid) VALUES ('summary', new.uid); END;
CREATE TRIGGER IF NOT EXISTS sync_summary_removed AFTER DELETE ON summaries
WHEN EXISTS (SELECT 1 FROM sync_spaces)
BEGIN INSERT INTO sync_changes (kind, uid) VALUES ('summary', old.uid); END;
"#;

const V12_SUBSTRING_INDEX: &str = r#"
-- Substring indexes (FTS5 `trigram`) for text the word indexes cannot cut
-- into words: Chinese, Japanese, Thai and other scripts written without
-- spaces, where a word index only matches a whole run of characters. Only
-- rows with a non-ASCII character are indexed (length in characters differs
-- from length in bytes), so English text costs one comparison per write.
-- Kept in step by triggers, with the same condition on insert and delete
-- (an external-content index must never be told to delete a row it lacks);
-- an update deletes the old text before it indexes the new.
-- Searched for queries in those scripts (mnemo-recall's search). Named
-- `*_fts` like the word indexes, so that recovery skips them as derived data.
-- (IF NOT EXISTS and 'delete-all': a store whose version was set back
-- migrates again.)

CREATE VIRTUAL TABLE IF NOT EXISTS observations_trigram_fts USING fts5(
    title, subtitle, narrative, content='observations', content_rowid='id', tokenize='trigram'
);
INSERT INTO observations_trigram_fts (observations_trigram_fts, rank) VALUES ('secure-delete', 1);
INSERT INTO observations_trigram_fts (observations_trigram_fts) VALUES ('delete-all');
INSERT INTO observations_trigram_fts (rowid, title, subtitle, narrative)
    SELECT id, title, subtitle, narrative FROM observations WHERE length(observations.title || observations.subtitle || observations.narrative) <> octet_length(observations.title || observations.subtitle || observations.narrative);
CREATE TRIGGER IF NOT EXISTS observations_trigram_fts_insert AFTER INSERT ON observations
WHEN length(new.title || new.subtitle || new.narrative) <> octet_length(new.title || new.subtitle || new.narrative) BEGIN
    INSERT INTO observations_trigram_fts (rowid, title, subtitle, narrative) VALUES (new.id, new.title, new.subtitle, new.narrative);
END;
CREATE TRIGGER IF NOT EXISTS observations_trigram_fts_delete AFTER DELETE ON observations
WHEN length(old.title || old.subtitle || old.narrative) <> octet_length(old.title || old.subtitle || old.narrative) BEGIN
    INSERT INTO observations_trigram_fts (observations_trigram_fts, rowid, title, subtitle, narrative) VALUES ('delete', old.id, old.title, old.subtitle, old.narrative);
END;
CREATE TRIGGER IF NOT EXISTS observations_trigram_fts_update AFTER UPDATE OF title, subtitle, narrative ON observations BEGIN
    INSERT INTO observations_trigram_fts (observations_trigram_fts, rowid, title, subtitle, narrative)
        SELECT 'delete', old.id, old.title, old.subtitle, old.narrative WHERE length(old.title || old.subtitle || old.narrative) <> octet_length(old.title || old.subtitle || old.narrative);
    INSERT INTO observations_trigram_fts (rowid, title, subtitle, narrative)
        SELECT new.id, new.title, new.subtitle, new.narrative WHERE length(new.title || new.subtitle || new.narrative) <> octet_length(new.title || new.subtitle || new.narrative);
END;

CREATE VIRTUAL TABLE IF NOT EXISTS summaries_trigram_fts USING fts5(
    request, learned, completed, content='summaries', content_rowid='id', tokenize='trigram'
);
INSERT INTO summaries_trigram_fts (summaries_trigram_fts, rank) VALUES ('secure-delete', 1);
INSERT INTO summaries_trigram_fts (summaries_trigram_fts) VALUES ('delete-all');
INSERT INTO summaries_trigram_fts (rowid, request, learned, completed)
    SELECT id, request, learned, completed FROM summaries WHERE length(summaries.request || summaries.learned || summaries.completed) <> octet_length(summaries.request || summaries.learned || summaries.completed);
CREATE TRIGGER IF NOT EXISTS summaries_trigram_fts_insert AFTER INSERT ON summaries
WHEN length(new.request || new.learned || new.completed) <> octet_length(new.request || new.learned || new.completed) BEGIN
    INSERT INTO summaries_trigram_fts (rowid, request, learned, completed) VALUES (new.id, new.request, new.learned, new.completed);
END;
CREATE TRIGGER IF NOT EXISTS summaries_trigram_fts_delete AFTER DELETE ON summaries
WHEN length(old.request || old.learned || old.completed) <> octet_length(old.request || old.learned || old.completed) BEGIN
    INSERT INTO summaries_trigram_fts (summaries_trigram_fts, rowid, request, learned, completed) VALUES ('delete', old.id, old.request, old.learned, old.completed);
END;
CREATE TRIGGER IF NOT EXISTS summaries_trigram_fts_update AFTER UPDATE OF request, learned, completed ON summaries BEGIN
    INSERT INTO summaries_trigram_fts (summaries_trigram_fts, rowid, request, learned, completed)
        SELECT 'delete', old.id, old.request, old.learned, old.completed WHERE length(old.request || old.learned || old.completed) <> octet_length(old.request || old.learned || old.completed);
    INSERT INTO summaries_trigram_fts (rowid, request, learned, completed)
        SELECT new.id, new.request, new.learned, new.completed WHERE length(new.request || new.learned || new.completed) <> octet_length(new.request || new.learned || new.completed);
END;

CREATE VIRTUAL TABLE IF NOT EXISTS prompts_trigram_fts USING fts5(
    text, content='prompts', content_rowid='id', tokenize='trigram'
);
INSERT INTO prompts_trigram_fts (prompts_trigram_fts, rank) VALUES ('secure-delete', 1);
INSERT INTO prompts_trigram_fts (prompts_trigram_fts) VALUES ('delete-all');
INSERT INTO prompts_trigram_fts (rowid, text)
    SELECT id, text FROM prompts WHERE length(prompts.text) <> octet_length(prompts.text);
CREATE TRIGGER IF NOT EXISTS prompts_trigram_fts_insert AFTER INSERT ON prompts
WHEN length(new.text) <> octet_length(new.text) BEGIN
    INSERT INTO prompts_trigram_fts (rowid, text) VALUES (new.id, new.text);
END;
CREATE TRIGGER IF NOT EXISTS prompts_trigram_fts_delete AFTER DELETE ON prompts
WHEN length(old.text) <> octet_length(old.text) BEGIN
    INSERT INTO prompts_trigram_fts (prompts_trigram_fts, rowid, text) VALUES ('delete', old.id, old.text);
END;
CREATE TRIGGER IF NOT EXISTS prompts_trigram_fts_update AFTER UPDATE OF text ON prompts BEGIN
    INSERT INTO prompts_trigram_fts (prompts_trigram_fts, rowid, text)
        SELECT 'delete', old.id, old.text WHERE length(old.text) <> octet_length(old.text);
    INSERT INTO prompts_trigram_fts (rowid, text)
        SELECT new.id, new.text WHERE length(new.text) <> octet_length(new.text);
END;
"#;

/// Vectors for search by meaning (see [`crate::vectors`]): one per
/// observation or summary, for the model that made it, with the hash of the
/// text it was made from. Deleting a record deletes its vector, and an edit
/// or a redaction of its text drops it (the worker embeds the new text), so
/// that a vector never outlives or misstates what it was made from.
/// A rowid table: a vector of up to about 1,000 floats fits in its leaf
/// page, so search reads the table in one sequential pass (a WITHOUT ROWID
/// table would spill every vector to overflow pages).
const V13_EMBEDDINGS: &str = r#"
CREATE TABLE IF NOT EXISTS embeddings (
    id            INTEGER PRIMARY KEY,
    kind          TEXT NOT NULL CHECK (kind IN ('observation', 'summary')),
    record_id     INTEGER NOT NULL,
    model         TEXT NOT NULL,
    dim           INTEGER NOT NULL,
    vector        BLOB NOT NULL,
    content_hash  TEXT NOT NULL,
    created_at    INTEGER NOT NULL,
    UNIQUE (kind, record_id)
);
CREATE INDEX IF NOT EXISTS embeddings_by_model ON embeddings(model);
CREATE TRIGGER IF NOT EXISTS embeddings_observation_delete AFTER DELETE ON observations BEGIN
    DELETE FROM embeddings WHERE kind = 'observation' AND record_id = old.id;
END;
CREATE TRIGGER IF NOT EXISTS embeddings_observation_edit
AFTER UPDATE OF title, subtitle, narrative, facts, concepts ON observations BEGIN
    DELETE FROM embeddings WHERE kind = 'observation' AND record_id = old.id;
END;
CREATE TRIGGER IF NOT EXISTS embeddings_summary_delete AFTER DELETE ON summaries BEGIN
    DELETE FROM embeddings WHERE kind = 'summary' AND record_id = old.id;
END;
CREATE TRIGGER IF NOT EXISTS embeddings_summary_edit
AFTER UPDATE OF request, investigated, learned, completed, next_steps, notes ON summaries BEGIN
    DELETE FROM embeddings WHERE kind = 'summary' AND record_id = old.id;
END;
-- The background job's last word, for doctor: one row.
CREATE TABLE IF NOT EXISTS embedding_status (
    id             INTEGER PRIMARY KEY CHECK (id = 1),
    model          TEXT NOT NULL DEFAULT '',
    last_ok_at     INTEGER,
    last_error     TEXT,
    last_error_at  INTEGER
);
"#;

/// What the agent said or thought during a turn, as hooks report it for
/// hosts whose transcript mnemo does not read (Cursor's `afterAgentThought`):
/// the worker tells the turn's why from it. Raw capture, like events.
const V14_TURN_NOTES: &str = r#"
CREATE TABLE IF NOT EXISTS turn_notes (
    id             INTEGER PRIMARY KEY,
    uid            TEXT NOT NULL UNIQUE,
    session_id     INTEGER NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    prompt_number  INTEGER NOT NULL,
    kind           TEXT NOT NULL CHECK (kind IN ('said', 'thought')),
    text           TEXT NOT NULL,
    created_at     INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS turn_notes_by_turn ON turn_notes(session_id, prompt_number, created_at);
"#;

/// The vectors of `embeddings` again, packed for a fast scan (see
/// [`crate::vector_packs`]): each row holds up to a thousand vectors of one
/// model, normalized and quantized to one signed byte per number with a
/// scale per vector, covering every vector of that model and dimension
/// whose row id lies in `first_id..=last_id`. Search reads a hundred packs
/// instead of a hundred thousand rows, and re-scores the nearest in full
/// precision from `embeddings`. A derived copy: deleting or changing a
/// vector drops the pack that covers it (the worker packs the survivors
/// again), so a pack never disagrees with the rows; vectors not packed yet
/// are scanned from the rows.
const V15_VECTOR_PACKS: &str = r#"
CREATE TABLE IF NOT EXISTS embedding_packs (
    id        INTEGER PRIMARY KEY,
    model     TEXT NOT NULL,
    dim       INTEGER NOT NULL,
    first_id  INTEGER NOT NULL,
    last_id   INTEGER NOT NULL,
    count     INTEGER NOT NULL,
    row_ids   BLOB NOT NULL,
    scales    BLOB NOT NULL,
    codes     BLOB NOT NULL
);
CREATE INDEX IF NOT EXISTS embedding_packs_by_range ON embedding_packs(model, dim, first_id);
CREATE TRIGGER IF NOT EXISTS embedding_packs_drop_on_delete AFTER DELETE ON embeddings BEGIN
    DELETE FROM embedding_packs
     WHERE model = old.model AND dim = old.dim AND first_id <= old.id AND last_id >= old.id;
END;
CREATE TRIGGER IF NOT EXISTS embedding_packs_drop_on_update AFTER UPDATE ON embeddings BEGIN
    DELETE FROM embedding_packs
     WHERE model = old.model AND dim = old.dim AND first_id <= old.id AND last_id >= old.id;
    DELETE FROM embedding_packs
     WHERE model = new.model AND dim = new.dim AND first_id <= new.id AND last_id >= new.id;
END;
"#;

const V16_PROJECT_COUNTS: &str = r#"
-- How many observations each project has, kept by the triggers below on
-- every insert, delete and move, so that the SessionStart index reads its
-- header's count in one lookup (counting the project's entries of
-- observations_by_project walks 100,000 of them at 100,000 observations).
-- A project without a row has none. Filled here for the rows already stored.
CREATE TABLE IF NOT EXISTS project_counts (
    project_id    INTEGER PRIMARY KEY,
    observations  INTEGER NOT NULL DEFAULT 0
);
INSERT OR REPLACE INTO project_counts (project_id, observations)
    SELECT project_id, count(*) FROM observations
    WHERE project_id IS NOT NULL GROUP BY project_id;
CREATE TRIGGER IF NOT EXISTS project_counts_insert AFTER INSERT ON observations
WHEN new.project_id IS NOT NULL BEGIN
    INSERT INTO project_counts (project_id, observations) VALUES (new.project_id, 1)
        ON CONFLICT (project_id) DO UPDATE SET observations = observations + 1;
END;
CREATE TRIGGER IF NOT EXISTS project_counts_delete AFTER DELETE ON observations
WHEN old.project_id IS NOT NULL BEGIN
    UPDATE project_counts SET observations = observations - 1
        WHERE project_id = old.project_id;
END;
CREATE TRIGGER IF NOT EXISTS project_counts_move AFTER UPDATE OF project_id ON observations
WHEN old.project_id IS NOT new.project_id BEGIN
    UPDATE project_counts SET observations = observations - 1
        WHERE project_id = old.project_id;
    INSERT INTO project_counts (project_id, observations)
        SELECT new.project_id, 1 WHERE new.project_id IS NOT NULL
        ON CONFLICT (project_id) DO UPDATE SET observations = observations + 1;
END;

-- Whether a project's sessions come from more than one agent, in two index
-- lookups (the first agent's name, then any other) instead of a walk of
-- every session.
CREATE INDEX IF NOT EXISTS sessions_by_project_platform ON sessions(project_id, platform);
"#;

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use crate::Store;

    fn found(store: &Store, text: &str) -> i64 {
        store
            .conn()
            .query_row(
                "SELECT count(*) FROM observations_trigram_fts WHERE observations_trigram_fts MATCH ?1",
                [format!("\"{text}\"")],
                |r| r.get(0),
            )
            .unwrap()
    }

    #[test]
    fn the_substring_index_follows_inserts_edits_and_deletes_of_non_ascii_text() {
        let tmp = tempfile::tempdir().unwrap();
        let store = Store::open(&tmp.path().join("m.db"), Duration::from_secs(1)).unwrap();
        store
            .conn()
            .execute_batch(
                "INSERT INTO observations (id, uid, type, title, created_at)
                 VALUES (1, 'a', 'bugfix', 'ログイン画面のタイムアウトを修正', 1),
                        (2, 'b', 'change', 'plain English title', 2);",
            )
            .unwrap();
        assert_eq!(found(&store, "タイムアウト"), 1);
        // English rows are not in the substring index at all.
        assert_eq!(found(&store, "English"), 0);
        store
            .conn()
            .execute_batch("UPDATE observations SET title = '登录页面超时' WHERE id = 1")
            .unwrap();
        assert_eq!(
            (found(&store, "タイムアウト"), found(&store, "页面超")),
            (0, 1)
        );
        store
            .conn()
            .execute_batch("UPDATE observations SET title = 'now ASCII' WHERE id = 1")
            .unwrap();
        assert_eq!(found(&store, "页面超"), 0);
        store
            .conn()
            .execute_batch(
                "UPDATE observations SET title = '再び日本語' WHERE id = 1;
                 DELETE FROM observations WHERE id = 1;",
            )
            .unwrap();
        assert_eq!(found(&store, "日本語"), 0);
        // The store's own check (which FTS5 joins) still finds it sound.
        let problem = store.integrity_problem().unwrap();
        assert_eq!(problem, None);
    }

    fn kept_and_counted(store: &Store) -> Vec<(i64, i64, i64)> {
        let mut stmt = store
            .conn()
            .prepare(
                "SELECT p.id, coalesce((SELECT observations FROM project_counts WHERE project_id = p.id), 0),
                        (SELECT count(*) FROM observations WHERE project_id = p.id)
                 FROM projects p ORDER BY p.id",
            )
            .unwrap();
        stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
            .unwrap()
            .collect::<rusqlite::Result<_>>()
            .unwrap()
    }

    #[test]
    fn project_counts_follow_inserts_deletes_and_moves() {
        let tmp = tempfile::tempdir().unwrap();
        let store = Store::open(&tmp.path().join("m.db"), Duration::from_secs(1)).unwrap();
        store
            .conn()
            .execute_batch(
                "INSERT INTO projects (id, root, name, created_at) VALUES (1, '/a', 'a', 1), (2, '/b', 'b', 1);
                 INSERT INTO observations (uid, project_id, type, title, created_at)
                 VALUES ('o1', 1, 'change', 'one', 1), ('o2', 1, 'change', 'two', 2),
                        ('o3', 2, 'change', 'three', 3), ('o4', NULL, 'change', 'four', 4);",
            )
            .unwrap();
        assert_eq!(kept_and_counted(&store), vec![(1, 2, 2), (2, 1, 1)]);
        store
            .conn()
            .execute_batch(
                "UPDATE observations SET project_id = 2 WHERE uid = 'o1';
                 UPDATE observations SET project_id = 1 WHERE uid = 'o4';
                 UPDATE observations SET title = 'retitled' WHERE uid = 'o3';
                 DELETE FROM observations WHERE uid = 'o2';",
            )
            .unwrap();
        assert_eq!(kept_and_counted(&store), vec![(1, 1, 1), (2, 2, 2)]);
        store
            .conn()
            .execute_batch("UPDATE observations SET project_id = NULL WHERE project_id = 2")
            .unwrap();
        assert_eq!(kept_and_counted(&store), vec![(1, 1, 1), (2, 0, 0)]);
    }

    #[test]
    fn the_counts_migration_counts_existing_rows() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("m.db");
        let store = Store::open(&path, Duration::from_secs(1)).unwrap();
        let before = super::MIGRATIONS
            .iter()
            .position(|m| *m == super::V16_PROJECT_COUNTS)
            .expect("the counts migration is listed");
        store
            .conn()
            .execute_batch(&format!(
                "DROP TABLE project_counts;
                 DROP TRIGGER project_counts_insert;
                 INSERT INTO projects (id, root, name, created_at) VALUES (1, '/a', 'a', 1);
                 INSERT INTO observations (uid, project_id, type, title, created_at)
                 VALUES ('o1', 1, 'change', 'one', 1), ('o2', 1, 'change', 'two', 2);
                 PRAGMA user_version = {before};"
            ))
            .unwrap();
        drop(store);
        let store = Store::open(&path, Duration::from_secs(1)).unwrap();
        assert_eq!(kept_and_counted(&store), vec![(1, 2, 2)]);
    }

    #[test]
    fn the_substring_migration_indexes_existing_rows() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("m.db");
        let store = Store::open(&path, Duration::from_secs(1)).unwrap();
        let before = super::MIGRATIONS
            .iter()
            .position(|m| *m == super::V12_SUBSTRING_INDEX)
            .expect("the substring migration is listed");
        store
            .conn()
            .execute_batch(&format!(
                "INSERT INTO observations (uid, type, title, created_at)
                     VALUES ('a', 'bugfix', '修复登录页面超时问题', 1);
                 INSERT INTO observations_trigram_fts (observations_trigram_fts) VALUES ('delete-all');
                 PRAGMA user_version = {before};"
            ))
            .unwrap();
        assert_eq!(found(&store, "页面超时"), 0);
        drop(store);
        let store = Store::open(&path, Duration::from_secs(1)).unwrap();
        assert_eq!(found(&store, "页面超时"), 1);
    }
}
