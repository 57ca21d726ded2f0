//! Where the project's recent sessions stand: one digest per session (not
//! per turn) for the SessionStart index.
//!
//! A session's digest says what was asked (its first real request: not a
//! host-injected `<task-notification>`, a slash command or a one-word
//! "continue"), what came out (the turns' `completed`, identical ones folded
//! with a count), what was learned, and what was left open (the next steps of
//! its last turn that says anything). A session with next steps left is
//! `open`, otherwise `done`.
//!
//! Sessions are found through their turn summaries (newest first, bounded),
//! so a session the worker has not compressed yet does not show, and
//! imported summaries without a session each count as one. A session that
//! continues another (Claude Code's `/clear` and compaction start a new
//! session id; see `sessions.continues`) is one line of work with it: one
//! digest, its turns in order.

use std::collections::HashMap;

use rusqlite::{Connection, OptionalExtension};

use crate::Result;
use crate::ids::ItemRef;
use crate::text::one_line;

/// Newest summaries read to find the recent sessions.
const SUMMARIES_READ: i64 = 240;
/// Prompts of one session read to find its main request.
const PROMPTS_READ: i64 = 12;
/// Most sessions followed back along a line of work.
const LINE_HOPS: usize = 64;

/// One turn summary, as the digest needs it.
#[derive(Debug, Clone)]
struct Turn {
    id: i64,
    prompt_number: i64,
    request: String,
    learned: String,
    completed: String,
    next_steps: String,
    created_at: i64,
}

/// What one recent session came to.
#[derive(Debug, Clone, PartialEq)]
pub struct SessionDigest {
    /// The agent of its newest session (`claude-code`, `codex`, ...); None
    /// for imported summaries without a session.
    pub agent: Option<String>,
    /// Who wrote its newest summary, when a teammate's machine sent it
    /// through sync (see [`crate::authors`]).
    pub author: Option<String>,
    /// Its turn summaries, oldest first.
    pub summaries: Vec<ItemRef>,
    /// When its last summarized turn ended.
    pub last_at: i64,
    pub turns: usize,
    pub asked: String,
    /// Further distinct requests after the main one.
    pub more_requests: usize,
    pub done: String,
    pub learned: String,
    /// The next steps of its last turn; empty when the work is done.
    pub open: String,
}

impl SessionDigest {
    pub fn is_open(&self) -> bool {
        !self.open.is_empty()
    }

    /// The newest summary, the id a reader can ask `mnemo show` for.
    pub fn last_summary(&self) -> Option<&ItemRef> {
        self.summaries.last()
    }

    /// The text after the id and age: what makes two digests say the same.
    pub fn body(&self) -> String {
        let mut parts = Vec::new();
        if !self.asked.is_empty() {
            let more = match self.more_requests {
                0 => String::new(),
                n => format!(" (+{n} more)"),
            };
            parts.push(format!("asked: {}{more}", self.asked));
        }
        for (label, text) in [
            ("learned", &self.learned),
            ("done", &self.done),
            ("open", &self.open),
        ] {
            if !text.is_empty() {
                parts.push(format!("{label}: {text}"));
            }
        }
        parts.join(" | ")
    }
}

/// The project's `max` most recent lines of work that have turn summaries,
/// newest first; only `agent`'s when given, only this person's own when
/// `mine_only` (none a teammate's machine sent through sync).
pub fn recent(
    conn: &Connection,
    project: i64,
    max: usize,
    (agent, mine_only): (Option<&str>, bool),
) -> Result<Vec<SessionDigest>> {
    if max == 0 {
        return Ok(Vec::new());
    }
    let mut stmt = conn.prepare_cached(&format!(
        "SELECT m.id, m.session_id, coalesce(m.prompt_number, 0), m.request, m.learned,
                m.completed, m.next_steps, m.created_at, s.platform, m.author
         FROM summaries m LEFT JOIN sessions s ON s.id = m.session_id
         WHERE m.project_id = ?1 AND (?3 IS NULL OR s.platform = ?3){}
         ORDER BY m.created_at DESC, m.id DESC LIMIT ?2",
        crate::authors::filter("m", mine_only)
    ))?;
    let rows = stmt.query_map(rusqlite::params![project, SUMMARIES_READ, agent], |r| {
        Ok((
            r.get::<_, Option<i64>>(1)?,
            (
                r.get::<_, Option<String>>(8)?,
                r.get::<_, Option<String>>(9)?,
            ),
            Turn {
                id: r.get(0)?,
                prompt_number: r.get(2)?,
                request: r.get(3)?,
                learned: r.get(4)?,
                completed: r.get(5)?,
                next_steps: r.get(6)?,
                created_at: r.get(7)?,
            },
        ))
    })?;
    // Group by line of work, in the order of each line's newest turn.
    let mut order: Vec<Line> = Vec::new();
    let mut slot: HashMap<i64, usize> = HashMap::new();
    let mut roots: HashMap<i64, i64> = HashMap::new();
    for row in rows {
        let (session, (agent, author), turn) = row?;
        let key = match session {
            Some(s) => match roots.get(&s) {
                Some(&root) => root,
                None => {
                    let root = line_root(conn, s)?;
                    roots.insert(s, root);
                    root
                }
            },
            None => -turn.id,
        };
        let i = match slot.get(&key) {
            Some(&i) => i,
            None if order.len() < max => {
                slot.insert(key, order.len());
                order.push(Line {
                    agent,
                    author,
                    sessions: Vec::new(),
                    turns: Vec::new(),
                });
                order.len() - 1
            }
            None => continue,
        };
        let line = &mut order[i];
        if let Some(s) = session.filter(|s| !line.sessions.contains(s)) {
            line.sessions.push(s);
        }
        line.turns.push((session.unwrap_or(0), turn));
    }
    digests_of(conn, order)
}

/// One digest per line of work, its turns in order and its prompts read.
fn digests_of(conn: &Connection, order: Vec<Line>) -> Result<Vec<SessionDigest>> {
    let mut digests = Vec::with_capacity(order.len());
    for mut line in order {
        line.turns
            .sort_by_key(|(s, t)| (*s, t.prompt_number, t.created_at, t.id));
        line.sessions.sort_unstable();
        let mut prompts = Vec::new();
        for s in &line.sessions {
            prompts.extend(user_prompts(conn, *s)?);
        }
        let turns: Vec<Turn> = line.turns.into_iter().map(|(_, t)| t).collect();
        let mut d = digest(&turns, &prompts);
        d.agent = line.agent;
        d.author = line.author;
        digests.push(d);
    }
    Ok(digests)
}

/// The sessions of one line of work and their turns, as read.
struct Line {
    agent: Option<String>,
    author: Option<String>,
    sessions: Vec<i64>,
    /// (session row id, turn), for ordering the turns of several sessions.
    turns: Vec<(i64, Turn)>,
}

/// The first session of the line of work that `session` belongs to,
/// following `continues` back (a bounded walk: a damaged link cannot loop).
fn line_root(conn: &Connection, session: i64) -> Result<i64> {
    let mut stmt = conn.prepare_cached("SELECT continues FROM sessions WHERE id = ?1")?;
    let mut current = session;
    for _ in 0..LINE_HOPS {
        let previous: Option<i64> = stmt
            .query_row([current], |r| r.get(0))
            .optional()?
            .flatten();
        match previous {
            Some(p) if p != session => current = p,
            _ => break,
        }
    }
    Ok(current)
}

/// The session's stored user prompts, in order.
fn user_prompts(conn: &Connection, session: i64) -> Result<Vec<String>> {
    let mut stmt = conn.prepare_cached(
        "SELECT text FROM prompts WHERE session_id = ?1 AND origin = 'user'
         ORDER BY prompt_number LIMIT ?2",
    )?;
    let rows = stmt.query_map(rusqlite::params![session, PROMPTS_READ], |r| {
        r.get::<_, String>(0)
    })?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}

fn digest(turns: &[Turn], prompts: &[String]) -> SessionDigest {
    // The prompts as typed when they were stored, else the summaries' requests.
    let typed: Vec<&str> = prompts
        .iter()
        .map(String::as_str)
        .filter(|r| is_real_request(r))
        .collect();
    let requests = if typed.is_empty() {
        turns
            .iter()
            .map(|t| t.request.as_str())
            .filter(|r| is_real_request(r))
            .collect()
    } else {
        typed
    };
    let asked = requests
        .first()
        .map(|r| one_line(r, 110))
        .unwrap_or_default();
    let mut distinct: Vec<String> = Vec::new();
    for r in &requests {
        let key = one_line(r, 60).to_lowercase();
        if !distinct.contains(&key) {
            distinct.push(key);
        }
    }
    let more = distinct.len().saturating_sub(1);
    let last_said = turns
        .iter()
        .rev()
        .find(|t| !t.completed.trim().is_empty() || !t.next_steps.trim().is_empty());
    SessionDigest {
        agent: None,
        author: None,
        summaries: turns.iter().map(|t| ItemRef::summary(t.id)).collect(),
        last_at: turns.iter().map(|t| t.created_at).max().unwrap_or(0),
        turns: turns.len(),
        asked,
        more_requests: more,
        done: folded(turns.iter().map(|t| t.completed.as_str()), 200),
        learned: turns
            .iter()
            .rev()
            .map(|t| one_line(&t.learned, 120))
            .find(|l| !l.is_empty())
            .unwrap_or_default(),
        open: last_said
            .map(|t| one_line(&t.next_steps, 140))
            .unwrap_or_default(),
    }
}

/// A prompt a person typed to ask for work: not a host's injected message,
/// a slash command, or a bare acknowledgement.
pub fn is_real_request(text: &str) -> bool {
    let t = text.trim();
    if t.is_empty() || crate::prompt::is_injected(t) || t.starts_with('/') {
        return false;
    }
    let words: Vec<String> = t
        .split_whitespace()
        .map(|w| {
            w.trim_matches(|c: char| !c.is_alphanumeric())
                .to_lowercase()
        })
        .filter(|w| !w.is_empty())
        .collect();
    !(words.len() <= 3 && words.iter().all(|w| crate::prompt::is_filler(w)))
}

/// Distinct non-empty texts joined with `; ` (a repeated one once, with a
/// count), keeping the last ones when they do not all fit in `max`.
fn folded<'a>(texts: impl Iterator<Item = &'a str>, max: usize) -> String {
    let mut seen: Vec<(String, usize)> = Vec::new();
    for t in texts {
        let t = one_line(t, 120);
        if t.is_empty() {
            continue;
        }
        match seen.iter_mut().find(|(s, _)| *s == t) {
            Some((_, n)) => *n += 1,
            None => seen.push((t, 1)),
        }
    }
    let mut kept: Vec<String> = Vec::new();
    let mut used = 0;
    for (t, n) in seen.iter().rev() {
        let item = if *n > 1 {
            format!("{t} (x{n})")
        } else {
            t.clone()
        };
        let cost = item.chars().count() + 2;
        if used + cost > max && !kept.is_empty() {
            break;
        }
        used += cost;
        kept.push(item);
    }
    kept.reverse();
    one_line(&kept.join("; "), max)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn injected_and_filler_prompts_are_not_requests() {
        assert!(!is_real_request(
            "<task-notification>done</task-notification>"
        ));
        assert!(!is_real_request("/compact"));
        assert!(!is_real_request("[Request interrupted by user]"));
        assert!(!is_real_request("continue"));
        assert!(!is_real_request("ok, thanks!"));
        assert!(is_real_request("fix the login redirect"));
        assert!(is_real_request("why does login fail?"));
    }

    #[test]
    fn repeated_outcomes_fold_with_a_count_and_the_last_ones_are_kept() {
        let texts = ["tests pass", "a", "tests pass", "", "tests pass"];
        assert_eq!(folded(texts.into_iter(), 200), "tests pass (x3); a");
        let long: Vec<String> = (0..20).map(|i| format!("outcome number {i}")).collect();
        let out = folded(long.iter().map(String::as_str), 60);
        assert!(out.ends_with("outcome number 19"), "{out}");
        assert!(!out.contains("number 0;"), "{out}");
    }
}
