//! Finding the transcript turn that a batch of captured events belongs to:
//! by the tool calls' ids, else by the prompt's text, else by its number.

use crate::model::{Origin, Session, Turn};

/// What the store knows about a turn.
#[derive(Debug, Clone, Copy, Default)]
pub struct Wanted<'a> {
    /// The host's ids of the batch's tool calls, in order.
    pub tool_use_ids: &'a [String],
    /// The stored (sanitized, possibly cut) prompt.
    pub prompt: Option<&'a str>,
    /// The turn's number in the store (1 = first prompt).
    pub prompt_number: i64,
}

/// The turn, if the transcript has it.
pub fn turn_for<'s>(session: &'s Session, wanted: &Wanted<'_>) -> Option<&'s Turn> {
    by_tool_ids(session, wanted.tool_use_ids)
        .or_else(|| by_prompt(session, wanted))
        .map(|i| &session.turns[i])
}

fn by_tool_ids(session: &Session, ids: &[String]) -> Option<usize> {
    // The last call decides: a batch cut across a compaction belongs with
    // the turn that goes on (and holds the final report).
    ids.iter().rev().find_map(|id| {
        session
            .turns
            .iter()
            .rposition(|t| t.tool_calls.iter().any(|c| &c.id == id))
    })
}

/// The number each turn has in the store: prompts and notifications open
/// one (the host reports them), a compaction goes on with the one before.
pub fn prompt_numbers(session: &Session) -> Vec<i64> {
    let mut n = 0;
    session
        .turns
        .iter()
        .map(|t| {
            if t.origin != Origin::Compaction || n == 0 {
                n += 1;
            }
            n
        })
        .collect()
}

fn by_prompt(session: &Session, wanted: &Wanted<'_>) -> Option<usize> {
    let numbers = prompt_numbers(session);
    let opening = |i: &usize| session.turns[*i].origin != Origin::Compaction;
    let same_text = |i: &usize| match (wanted.prompt, &session.turns[*i].prompt) {
        (Some(w), Some(p)) => same_prompt(w, p),
        _ => false,
    };
    let indices = 0..session.turns.len();
    let texts: Vec<usize> = indices.clone().filter(opening).filter(same_text).collect();
    if !texts.is_empty() {
        // Several turns may say the same ("continue"): the nearest by number.
        return texts
            .into_iter()
            .min_by_key(|&i| (numbers[i] - wanted.prompt_number).abs());
    }
    if wanted.prompt.is_some() {
        return None;
    }
    indices
        .filter(opening)
        .find(|&i| numbers[i] == wanted.prompt_number)
}

/// Equal, or one is the other cut short (the store caps long prompts).
fn same_prompt(stored: &str, read: &str) -> bool {
    let stored = stored.trim().trim_end_matches('…').trim_end();
    let read = read.trim();
    !stored.is_empty() && (stored == read || (stored.len() >= 40 && read.starts_with(stored)))
}
