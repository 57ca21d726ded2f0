//! What mnemo stored, read straight from its SQLite file (read-only): turn
//! summaries, observations and prompts, each with the text a reader sees.
//! The scores and the BM25 baseline work on these records.

use std::collections::HashMap;

use rusqlite::Connection;

#[derive(Debug, Clone, Default)]
pub struct Summary {
    pub id: i64,
    pub session: String,
    pub prompt_number: i64,
    pub request: String,
    pub investigated: String,
    pub learned: String,
    pub completed: String,
    pub next_steps: String,
    pub notes: String,
}

impl Summary {
    pub fn text(&self) -> String {
        format!("{}\n{}", self.request, self.answer_text())
            .trim()
            .to_owned()
    }

    /// Every field but the request (the user's words).
    pub fn answer_text(&self) -> String {
        [
            &self.investigated,
            &self.learned,
            &self.completed,
            &self.next_steps,
            &self.notes,
        ]
        .iter()
        .filter(|s| !s.is_empty())
        .map(|s| s.as_str())
        .collect::<Vec<_>>()
        .join("\n")
    }
}

#[derive(Debug, Clone, Default)]
pub struct Observation {
    pub id: i64,
    pub session: String,
    pub prompt_number: i64,
    pub kind: String,
    pub title: String,
    /// Subtitle, narrative, facts, concepts and files, as stored.
    pub body: String,
}

impl Observation {
    pub fn text(&self) -> String {
        format!("[{}] {}\n{}", self.kind, self.title, self.body)
    }
}

#[derive(Debug, Clone, Default)]
pub struct Prompt {
    pub id: i64,
    pub text: String,
}

#[derive(Debug, Default)]
pub struct Memory {
    pub summaries: Vec<Summary>,
    pub observations: Vec<Observation>,
    pub prompts: Vec<Prompt>,
    pub sessions: i64,
    /// Captured events by kind: (tool_use + tool_failure, turn_end).
    pub tool_events: i64,
    pub turn_ends: i64,
    pub failed_events: i64,
    /// (session, platform prompt id) → the prompt number mnemo filed it
    /// under, from its prompts and events.
    pub prompt_numbers: HashMap<(String, String), i64>,
}

impl Memory {
    pub fn load(db: &Connection) -> rusqlite::Result<Memory> {
        let count = |sql: &str| db.query_row(sql, [], |r| r.get::<_, i64>(0));
        let mut m = Memory {
            sessions: count("SELECT count(*) FROM sessions")?,
            tool_events: count("SELECT count(*) FROM events WHERE kind <> 'turn_end'")?,
            turn_ends: count("SELECT count(*) FROM events WHERE kind = 'turn_end'")?,
            failed_events: count("SELECT count(*) FROM events WHERE status = 'failed'")?,
            ..Memory::default()
        };
        let mut q = db.prepare(
            "SELECT m.id, s.platform_session_id, coalesce(m.prompt_number, 0), m.request,
                    m.investigated, m.learned, m.completed, m.next_steps, m.notes
             FROM summaries m JOIN sessions s ON s.id = m.session_id ORDER BY m.id",
        )?;
        m.summaries = q
            .query_map([], |r| {
                Ok(Summary {
                    id: r.get(0)?,
                    session: r.get(1)?,
                    prompt_number: r.get(2)?,
                    request: r.get(3)?,
                    investigated: r.get(4)?,
                    learned: r.get(5)?,
                    completed: r.get(6)?,
                    next_steps: r.get(7)?,
                    notes: r.get(8)?,
                })
            })?
            .collect::<rusqlite::Result<_>>()?;
        let mut q = db.prepare(
            "SELECT o.id, coalesce(s.platform_session_id, ''), coalesce(o.prompt_number, 0),
                    o.type, o.title,
                    concat_ws(char(10), o.subtitle, o.narrative, o.facts, o.concepts,
                              o.files_read, o.files_modified)
             FROM observations o LEFT JOIN sessions s ON s.id = o.session_id ORDER BY o.id",
        )?;
        m.observations = q
            .query_map([], |r| {
                Ok(Observation {
                    id: r.get(0)?,
                    session: r.get(1)?,
                    prompt_number: r.get(2)?,
                    kind: r.get(3)?,
                    title: r.get(4)?,
                    body: r.get(5)?,
                })
            })?
            .collect::<rusqlite::Result<_>>()?;
        let mut q = db.prepare(
            "SELECT s.platform_session_id, e.platform_prompt_id, max(e.prompt_number)
             FROM events e JOIN sessions s ON s.id = e.session_id
             WHERE e.platform_prompt_id IS NOT NULL GROUP BY 1, 2
             UNION ALL
             SELECT s.platform_session_id, p.platform_prompt_id, p.prompt_number
             FROM prompts p JOIN sessions s ON s.id = p.session_id
             WHERE p.platform_prompt_id IS NOT NULL",
        )?;
        for row in q.query_map([], |r| Ok(((r.get(0)?, r.get(1)?), r.get(2)?)))? {
            let (key, number) = row?;
            m.prompt_numbers.insert(key, number);
        }
        let mut q = db.prepare("SELECT id, text FROM prompts ORDER BY id")?;
        m.prompts = q
            .query_map([], |r| {
                Ok(Prompt {
                    id: r.get(0)?,
                    text: r.get(1)?,
                })
            })?
            .collect::<rusqlite::Result<_>>()?;
        Ok(m)
    }

    /// The summaries of the prompt mnemo filed a turn under (a turn cut
    /// into pieces may have several; a turn that mnemo counts as the
    /// continuation of an earlier one shares that one's). The turn is named
    /// by the prompt id the replay sent; without a trace of it, by its
    /// position.
    pub fn turn_summaries(&self, session: &str, prompt_id: &str, position: usize) -> Vec<&Summary> {
        let number = self
            .prompt_numbers
            .get(&(session.to_owned(), prompt_id.to_owned()))
            .copied()
            .unwrap_or(position as i64);
        self.summaries
            .iter()
            .filter(|s| s.session == session && s.prompt_number == number)
            .collect()
    }

    pub fn session_observations(&self, session: &str) -> impl Iterator<Item = &Observation> {
        self.observations
            .iter()
            .filter(move |o| o.session == session)
    }

    /// The full text of a record named as search names it (`#12`, `S3`, `P7`).
    /// The text a record offers as an answer: what mnemo wrote, never the
    /// user's own words (a prompt, a summary's request).
    pub fn answer_text(&self, id: &str) -> Option<String> {
        if id.starts_with('P') {
            return None;
        }
        if let Some(num) = id.strip_prefix('S') {
            let num: i64 = num.parse().ok()?;
            return self
                .summaries
                .iter()
                .find(|s| s.id == num)
                .map(|s| s.answer_text());
        }
        self.record_text(id)
    }

    pub fn record_text(&self, id: &str) -> Option<String> {
        let (kind, num) = match id.chars().next()? {
            '#' => ('#', &id[1..]),
            'S' => ('S', &id[1..]),
            'P' => ('P', &id[1..]),
            _ => ('#', id),
        };
        let num: i64 = num.parse().ok()?;
        match kind {
            'S' => self
                .summaries
                .iter()
                .find(|s| s.id == num)
                .map(|s| s.text()),
            'P' => self
                .prompts
                .iter()
                .find(|p| p.id == num)
                .map(|p| p.text.clone()),
            _ => self
                .observations
                .iter()
                .find(|o| o.id == num)
                .map(|o| o.text()),
        }
    }

    /// Every record as (search id, text): what the BM25 baseline indexes.
    pub fn documents(&self) -> Vec<(String, String)> {
        let obs = self
            .observations
            .iter()
            .map(|o| (format!("#{}", o.id), o.text()));
        let sums = self
            .summaries
            .iter()
            .map(|s| (format!("S{}", s.id), s.text()));
        let prompts = self
            .prompts
            .iter()
            .map(|p| (format!("P{}", p.id), p.text.clone()));
        obs.chain(sums).chain(prompts).collect()
    }
}
