//! Scores what mnemo kept against what happened (the transcripts' ground
//! truth). Each score is a share with its numerator and denominator, so a
//! reader sees how many cases it rests on. The matching rules are plain
//! text checks, chosen to be independent of how mnemo phrases things:
//!
//! - a file is "named" when its file name (last path component) appears in
//!   any field of the turn's summaries;
//! - a final report (the last assistant text of a turn that was not
//!   interrupted) "mentions remaining work" when it contains one of
//!   [`REMAINING`] (lowercase);
//! - an answered question "became a decision" when an observation of type
//!   `decision` in that session contains at least half of the answer's
//!   [`significant_words`] (at least one);
//! - an observation "says a command fails" when its title contains `fail`
//!   or `error` and every word of the command's intent (`git push`), and
//!   none of [`RESOLVED`];
//! - a title is log-like when it reads "… and N more", or is "Edited X" or
//!   "Changed X" with X a single word (a bare path or name);
//! - a definition name is a stop word when a backticked span in a title is
//!   one of [`STOP_WORDS`];
//! - a modified file is "kept" when an observation of its session names it
//!   (its file name appears in the observation's text);
//! - a `decision` record is not a decision ([`not_a_decision`]) when what it
//!   says was decided is a question, a slash command or host markup, an
//!   error line, a restated prompt of the session, or a bare answer that
//!   does not say what was chosen (a letter, a number, yes/no).

use super::memory::Memory;
use super::transcript::{Session, is_typed};

/// Words in a final report that say something is left (lowercase).
pub const REMAINING: &[&str] = &[
    "remaining",
    "still",
    " left",
    "next",
    "todo",
    "not yet",
    "pending",
    "blocked",
    "outstanding",
    "unfinished",
    "follow-up",
    "follow up",
    "want me to",
    "would you like",
    "available work",
];

/// Words that say a failure was overcome.
pub const RESOLVED: &[&str] = &[
    "then",
    "fixed",
    "resolved",
    "succeeded",
    "passed",
    "after",
    "retried",
];

pub const STOP_WORDS: &[&str] = &[
    "a", "an", "and", "are", "as", "at", "be", "but", "by", "do", "for", "from", "has", "if", "in",
    "is", "it", "no", "not", "of", "on", "or", "so", "that", "the", "then", "this", "to", "was",
    "we", "with", "you", "your", "can", "will", "have", "all", "its", "true", "false", "nil",
    "null",
];

#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Share {
    pub hit: f64,
    pub total: usize,
}

impl Share {
    pub fn value(&self) -> Option<f64> {
        (self.total > 0).then(|| self.hit / self.total as f64)
    }
    fn count(&mut self, hit: bool) {
        self.total += 1;
        if hit {
            self.hit += 1.0;
        }
    }
}

#[derive(Debug, Default)]
pub struct Scores {
    pub files_named: Share,
    pub completed: Share,
    pub next_steps: Share,
    pub decisions: Share,
    pub resolved_not_standing: Share,
    pub standing_remembered: Share,
    pub log_titles: Share,
    pub stop_word_defs: Share,
    pub machine_requests: Share,
    pub files_kept: Share,
    pub real_decisions: Share,
}

impl Scores {
    /// (name, share, whether higher is better).
    pub fn rows(&self) -> Vec<(&'static str, Share, bool)> {
        vec![
            (
                "modified files named by their turn's summary (mean over turns)",
                self.files_named,
                true,
            ),
            (
                "turns that committed or changed files with a `completed`",
                self.completed,
                true,
            ),
            (
                "turns whose final report leaves work open with `next_steps`",
                self.next_steps,
                true,
            ),
            (
                "files modified kept by an observation of their session",
                self.files_kept,
                true,
            ),
            (
                "`decision` records that are decisions",
                self.real_decisions,
                true,
            ),
            (
                "answered questions kept as a `decision`",
                self.decisions,
                true,
            ),
            (
                "failed-then-succeeded commands not remembered as failing",
                self.resolved_not_standing,
                true,
            ),
            (
                "standing failures remembered",
                self.standing_remembered,
                true,
            ),
            (
                "log-like titles (\"… and N more\", bare \"Edited/Changed X\")",
                self.log_titles,
                false,
            ),
            (
                "observations naming a stop word as a definition",
                self.stop_word_defs,
                false,
            ),
            (
                "summaries whose request is a task notification or compaction",
                self.machine_requests,
                false,
            ),
        ]
    }
}

pub fn score(sessions: &[Session], memory: &Memory) -> Scores {
    let mut s = Scores::default();
    for session in sessions {
        turns(session, memory, &mut s);
        decisions(session, memory, &mut s);
        failures(session, memory, &mut s);
        files_kept(session, memory, &mut s);
        real_decisions(session, memory, &mut s);
    }
    for o in &memory.observations {
        s.log_titles.count(log_like(&o.title));
        s.stop_word_defs.count(stop_word_definition(&o.title));
    }
    for m in &memory.summaries {
        s.machine_requests.count(machine_request(&m.request));
    }
    s
}

fn turns(session: &Session, memory: &Memory, s: &mut Scores) {
    for (i, turn) in session.turns.iter().enumerate() {
        let summaries = memory.turn_summaries(&session.id, &session.prompt_id(i), turn.number);
        let text = summaries
            .iter()
            .map(|m| m.text())
            .collect::<Vec<_>>()
            .join("\n");
        let files = session.modified_files(i);
        if !files.is_empty() {
            let named = files.iter().filter(|f| text.contains(file_name(f))).count();
            s.files_named.total += 1;
            s.files_named.hit += named as f64 / files.len() as f64;
        }
        if !files.is_empty() || !session.commits(i).is_empty() {
            s.completed
                .count(summaries.iter().any(|m| !m.completed.trim().is_empty()));
        }
        if !turn.interrupted && leaves_work_open(&turn.final_text) {
            s.next_steps
                .count(summaries.iter().any(|m| !m.next_steps.trim().is_empty()));
        }
    }
}

fn decisions(session: &Session, memory: &Memory, s: &mut Scores) {
    for q in session.questions() {
        let words = significant_words(&q.answer);
        let kept = memory
            .session_observations(&session.id)
            .filter(|o| o.kind == "decision")
            .any(|o| {
                let text = o.text().to_lowercase();
                let found = words.iter().filter(|w| text.contains(w.as_str())).count();
                found >= 1 && found * 2 >= words.len()
            });
        s.decisions.count(kept);
    }
}

fn files_kept(session: &Session, memory: &Memory, s: &mut Scores) {
    let mut files: Vec<String> = Vec::new();
    for i in 0..session.turns.len() {
        for f in session.modified_files(i) {
            if !files.contains(&f) {
                files.push(f);
            }
        }
    }
    let texts: Vec<String> = memory
        .session_observations(&session.id)
        .map(|o| o.text())
        .collect();
    for f in &files {
        s.files_kept
            .count(texts.iter().any(|t| t.contains(file_name(f))));
    }
}

fn real_decisions(session: &Session, memory: &Memory, s: &mut Scores) {
    let prompts: Vec<String> = session
        .turns
        .iter()
        .map(|t| t.prompt.trim().to_lowercase())
        .collect();
    for o in memory
        .session_observations(&session.id)
        .filter(|o| o.kind == "decision")
    {
        s.real_decisions.count(!not_a_decision(&o.title, &prompts));
    }
}

/// True when a decision record's title records no decision: what it says
/// was decided (the title after a leading "Decided:"/"Chose"…) is a
/// question, a slash command or host markup, an error line, one of the
/// session's prompts restated, or a bare answer (a letter, a number, yes/no)
/// that does not say what was chosen.
pub fn not_a_decision(title: &str, prompts: &[String]) -> bool {
    let said = title
        .split_once(':')
        .filter(|(head, _)| head.split_whitespace().count() <= 2)
        .map_or(title, |(_, rest)| rest)
        .trim()
        .trim_end_matches('.')
        .trim();
    let lower = said.to_lowercase();
    let bare = lower.split_whitespace().count() <= 1
        && (lower.chars().count() <= 3
            || ["yes", "no", "ok", "okay", "sure"].contains(&lower.as_str()));
    let restated = lower.chars().count() >= 12
        && prompts
            .iter()
            .any(|p| p.contains(&lower) || (p.chars().count() >= 12 && lower.contains(p.as_str())));
    lower.is_empty()
        || lower.ends_with('?')
        || lower.starts_with('/')
        || lower.starts_with('<')
        || lower.contains("error:")
        || bare
        || restated
}

fn failures(session: &Session, memory: &Memory, s: &mut Scores) {
    for f in session.failures() {
        let remembered = memory
            .session_observations(&session.id)
            .any(|o| says_it_fails(&o.title, &f.intent));
        if f.resolved {
            s.resolved_not_standing.count(!remembered);
        } else {
            s.standing_remembered.count(remembered);
        }
    }
}

pub fn file_name(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

pub fn leaves_work_open(report: &str) -> bool {
    let lower = report.to_lowercase();
    REMAINING.iter().any(|w| lower.contains(w))
}

pub fn says_it_fails(title: &str, intent: &str) -> bool {
    let t = title.to_lowercase();
    (t.contains("fail") || t.contains("error"))
        && intent.split(' ').all(|w| t.contains(&w.to_lowercase()))
        && !RESOLVED.iter().any(|w| t.contains(w))
}

pub fn log_like(title: &str) -> bool {
    let t = title.trim();
    let n_more = t.strip_suffix(" more").is_some_and(|head| {
        head.rsplit_once(" and ")
            .is_some_and(|(_, n)| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()))
    });
    let bare = ["Edited ", "Changed "].iter().any(|p| {
        t.strip_prefix(p)
            .is_some_and(|rest| !rest.trim().is_empty() && !rest.trim().contains(' '))
    });
    n_more || bare
}

pub fn stop_word_definition(title: &str) -> bool {
    title
        .split('`')
        .skip(1)
        .step_by(2)
        .any(|span| STOP_WORDS.contains(&span.trim().to_lowercase().as_str()))
}

pub fn machine_request(request: &str) -> bool {
    let r = request.trim_start();
    r.starts_with("<task-notification>")
        || r.contains("continued from a previous conversation")
        || r.starts_with("Conversation compacted")
}

/// Lowercase words of three letters or more that are not stop words; the
/// whole text when it has none.
pub fn significant_words(text: &str) -> Vec<String> {
    let words: Vec<String> = text
        .split(|c: char| !c.is_alphanumeric() && c != '_')
        .filter(|w| w.chars().count() >= 3)
        .map(str::to_lowercase)
        .filter(|w| !STOP_WORDS.contains(&w.as_str()))
        .collect();
    if words.is_empty() && !text.trim().is_empty() {
        vec![text.trim().to_lowercase()]
    } else {
        words
    }
}

/// Typed prompts of a session, for the dump.
pub fn typed_prompts(session: &Session) -> impl Iterator<Item = &str> {
    session
        .turns
        .iter()
        .map(|t| t.prompt.as_str())
        .filter(|p| is_typed(p))
}
