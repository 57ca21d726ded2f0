//! Finding the transcript turn that a batch of captured events belongs to:
//! by the tool calls' ids, else by the prompt's text, else by its number;
//! and, for hosts whose hooks give tool calls no id (Gemini CLI), which of
//! the turn's calls each captured one is ([`match_calls`]).

use serde_json::Value;

use crate::model::{Origin, Session, ToolCall, Turn};

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

/// A captured tool call, as the store keeps it.
#[derive(Debug, Clone, Copy)]
pub struct Captured<'a> {
    /// In the common vocabulary (`Write`, `Bash`).
    pub name: &'a str,
    /// The stored (sanitized, possibly cut) input.
    pub input: &'a Value,
    /// When it was captured (the host's hook ran as the call ended), ms.
    pub at_ms: Option<i64>,
}

/// How far apart a captured call and the transcript's record of it may be.
const SAME_TIME_MS: i64 = 60_000;

/// The arguments that tell one call of a tool from another.
const KEY_ARGUMENTS: &[&str] = &["file_path", "command", "path", "pattern", "url", "query"];

/// The ids of `turn`'s calls that the `captured` calls are, in order (None
/// where none fits): a call with the same tool name and the same key
/// arguments, not taken by an earlier one; when both sides carry a time,
/// the nearest such call within [`SAME_TIME_MS`] (a batch may be a later
/// piece of a long turn that repeats a command), else the first after the
/// previous match (the host runs calls in the order it records them). Calls
/// capture skipped are passed over.
pub fn match_calls(turn: &Turn, captured: &[Captured<'_>]) -> Vec<Option<String>> {
    let calls = &turn.tool_calls;
    let mut taken = vec![false; calls.len()];
    let mut next = 0;
    captured
        .iter()
        .map(|c| {
            let fits = |i: &usize| !taken[*i] && same_call(c, &calls[*i]);
            let nearest = c.at_ms.and_then(|at| {
                (0..calls.len())
                    .filter(|i| calls[*i].at_ms > 0 && (calls[*i].at_ms - at).abs() <= SAME_TIME_MS)
                    .filter(fits)
                    .min_by_key(|i| (calls[*i].at_ms - at).abs())
            });
            let at = nearest.or_else(|| (next..calls.len()).find(fits))?;
            taken[at] = true;
            next = at + 1;
            Some(calls[at].id.clone())
        })
        .collect()
}

fn same_call(captured: &Captured<'_>, call: &ToolCall) -> bool {
    captured.name == call.name
        && KEY_ARGUMENTS.iter().all(|key| {
            match (
                captured.input.get(*key).and_then(Value::as_str),
                call.input.get(*key).and_then(Value::as_str),
            ) {
                (Some(stored), Some(read)) => same_value(stored, read),
                _ => true,
            }
        })
}

/// Equal, or the stored value is the read one cut in the middle.
fn same_value(stored: &str, read: &str) -> bool {
    if stored == read {
        return true;
    }
    match stored.split_once("…[") {
        Some((head, _)) => !head.is_empty() && read.starts_with(head),
        None => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn call(id: &str, name: &str, input: Value) -> ToolCall {
        ToolCall {
            id: id.into(),
            name: name.into(),
            input,
            ..ToolCall::default()
        }
    }

    #[test]
    fn captured_calls_without_ids_pair_by_order_name_and_arguments() {
        let turn = Turn {
            tool_calls: vec![
                call("a", "Bash", json!({"command": "cargo test"})),
                call("b", "mcp__mnemo__search", json!({"query": "x"})),
                call(
                    "c",
                    "Write",
                    json!({"file_path": "/p/a.rs", "content": "x"}),
                ),
                call("d", "Bash", json!({"command": "cargo test"})),
                call(
                    "e",
                    "Write",
                    json!({"file_path": "/p/b.rs", "content": "y"}),
                ),
            ],
            ..Turn::default()
        };
        let inputs = [
            json!({"command": "cargo test"}),
            json!({"file_path": "/p/b.rs", "content": "y"}),
            json!({"command": "cargo test"}),
            json!({"file_path": "/p/zzz.rs"}),
            json!({"command": "cargo te…[5 bytes cut]…"}),
        ];
        let names = ["Bash", "Write", "Bash", "Write", "Bash"];
        let captured: Vec<Captured<'_>> = names
            .iter()
            .zip(&inputs)
            .map(|(name, input)| Captured {
                name,
                input,
                at_ms: None,
            })
            .collect();
        let ids = match_calls(&turn, &captured);
        // The second `cargo test` comes after the write to b.rs: none left.
        assert_eq!(ids, [Some("a".into()), Some("e".into()), None, None, None]);
        let cut = Captured {
            name: "Bash",
            input: &inputs[4],
            at_ms: None,
        };
        assert_eq!(match_calls(&turn, &[cut]), [Some("a".to_owned())]);
    }

    #[test]
    fn a_later_piece_repeating_a_command_pairs_by_time() {
        let at = |mut c: ToolCall, ms: i64| {
            c.at_ms = ms;
            c
        };
        let turn = Turn {
            tool_calls: vec![
                at(call("a", "Bash", json!({"command": "cargo test"})), 1_000),
                at(call("b", "Edit", json!({"file_path": "/p/a.rs"})), 200_000),
                at(call("c", "Bash", json!({"command": "cargo test"})), 400_000),
            ],
            ..Turn::default()
        };
        // The second piece of the turn: the edit and the second test run.
        let (edit, test) = (
            json!({"file_path": "/p/a.rs"}),
            json!({"command": "cargo test"}),
        );
        let piece = [
            Captured {
                name: "Edit",
                input: &edit,
                at_ms: Some(200_020),
            },
            Captured {
                name: "Bash",
                input: &test,
                at_ms: Some(400_015),
            },
        ];
        assert_eq!(
            match_calls(&turn, &piece),
            [Some("b".to_owned()), Some("c".to_owned())]
        );
        // Without times, the first fitting call after the last match.
        let untimed: Vec<Captured<'_>> = piece
            .iter()
            .map(|c| Captured { at_ms: None, ..*c })
            .collect();
        assert_eq!(
            match_calls(&turn, &untimed),
            [Some("b".to_owned()), Some("c".to_owned())]
        );
        let alone = [Captured {
            at_ms: None,
            ..piece[1]
        }];
        assert_eq!(match_calls(&turn, &alone), [Some("a".to_owned())]);
    }
}
