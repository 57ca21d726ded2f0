//! A test-only reader of Claude Code transcripts (JSON Lines): each turn
//! becomes the batches the worker would build from it, tool events from the
//! `tool_use` / `tool_result` pairs (the result's `toolUseResult` is what
//! the PostToolUse hook carries) and a narrative from the assistant's words.
//! Not the product's reader (the transcript helper owns that): just enough
//! to replay real sessions through the compressor.

use std::collections::HashMap;
use std::path::Path;

use mnemo_compress::{
    AssistantNote, BatchEvent, QuestionAnswer, SummaryDraft, TurnBatch, TurnNarrative, TurnOrigin,
};
use serde_json::Value;

/// One turn of a transcript.
#[derive(Debug, Clone, Default)]
pub struct Turn {
    /// The session's working directory (the project root).
    pub cwd: String,
    pub prompt: String,
    pub events: Vec<BatchEvent>,
    pub narrative: TurnNarrative,
}

/// The turns of the main thread of a transcript, in order.
pub fn turns(path: &Path) -> Vec<Turn> {
    let text = std::fs::read_to_string(path).unwrap();
    let mut turns: Vec<Turn> = Vec::new();
    let mut pending: Vec<String> = Vec::new();
    let mut calls: HashMap<String, (String, Value)> = HashMap::new();
    let mut last_user_request = String::new();
    for line in text.lines() {
        let Ok(d) = serde_json::from_str::<Value>(line) else {
            continue;
        };
        if d["isSidechain"] == true {
            continue;
        }
        let content = &d["message"]["content"];
        match d["type"].as_str() {
            Some("user") => {
                if let Some(prompt) = prompt_of(content) {
                    if let Some(t) = turns.last_mut() {
                        finish(t, &mut pending);
                    }
                    let origin = origin_of(&prompt);
                    if origin == TurnOrigin::User {
                        last_user_request = prompt.clone();
                    }
                    turns.push(Turn {
                        cwd: d["cwd"].as_str().unwrap_or_default().to_owned(),
                        prompt: prompt.clone(),
                        narrative: TurnNarrative {
                            origin,
                            continues_request: (origin != TurnOrigin::User)
                                .then(|| last_user_request.clone()),
                            ..Default::default()
                        },
                        ..Default::default()
                    });
                    continue;
                }
                let Some(turn) = turns.last_mut() else {
                    continue;
                };
                for block in content.as_array().into_iter().flatten() {
                    if block["type"] != "tool_result" {
                        continue;
                    }
                    let id = block["tool_use_id"].as_str().unwrap_or_default();
                    let Some((name, input)) = calls.remove(id) else {
                        continue;
                    };
                    let failed = block["is_error"] == true;
                    let result = d.get("toolUseResult").cloned();
                    if name == "AskUserQuestion" {
                        turn.narrative
                            .questions
                            .extend(questions(&input, result.as_ref()));
                    }
                    turn.events
                        .push(event(id, &name, input, result, failed, block));
                }
            }
            Some("assistant") => {
                let Some(turn) = turns.last_mut() else {
                    continue;
                };
                for block in content.as_array().into_iter().flatten() {
                    match block["type"].as_str() {
                        Some("text") => {
                            let t = block["text"].as_str().unwrap_or_default().trim();
                            if !t.is_empty() {
                                pending.push(t.to_owned());
                            }
                        }
                        Some("tool_use") => {
                            let id = block["id"].as_str().unwrap_or_default().to_owned();
                            for text in pending.drain(..) {
                                turn.narrative.notes.push(AssistantNote {
                                    text,
                                    before_tool_use_id: Some(id.clone()),
                                });
                            }
                            calls.insert(
                                id,
                                (
                                    block["name"].as_str().unwrap_or_default().to_owned(),
                                    block["input"].clone(),
                                ),
                            );
                        }
                        _ => {}
                    }
                }
            }
            _ => {}
        }
    }
    if let Some(t) = turns.last_mut() {
        finish(t, &mut pending);
    }
    turns
}

fn finish(turn: &mut Turn, pending: &mut Vec<String>) {
    if !pending.is_empty() {
        turn.narrative.final_report = Some(pending.join("\n\n"));
        pending.clear();
    }
}

fn prompt_of(content: &Value) -> Option<String> {
    if let Some(s) = content.as_str() {
        return Some(s.to_owned());
    }
    let blocks = content.as_array()?;
    if blocks.iter().any(|b| b["type"] == "tool_result") {
        return None;
    }
    let text: Vec<&str> = blocks.iter().filter_map(|b| b["text"].as_str()).collect();
    let text = text.join("\n");
    (!text.is_empty() && !text.starts_with("[Request interrupted")).then_some(text)
}

fn origin_of(prompt: &str) -> TurnOrigin {
    if prompt.trim_start().starts_with("<task-notification>") {
        TurnOrigin::TaskNotification
    } else if prompt.starts_with("This session is being continued") {
        TurnOrigin::Compaction
    } else {
        TurnOrigin::User
    }
}

fn questions(input: &Value, result: Option<&Value>) -> Vec<QuestionAnswer> {
    let answers = result.and_then(|r| r.get("answers"));
    input["questions"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|q| {
            let question = q["question"].as_str()?.to_owned();
            Some(QuestionAnswer {
                option_notes: Vec::new(),
                answer: answers?.get(&question)?.as_str()?.to_owned(),
                options: q["options"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(|o| o["label"].as_str().map(str::to_owned))
                    .collect(),
                question,
            })
        })
        .collect()
}

fn event(
    id: &str,
    name: &str,
    input: Value,
    result: Option<Value>,
    failed: bool,
    block: &Value,
) -> BatchEvent {
    let path = input["file_path"]
        .as_str()
        .or(input["notebook_path"].as_str())
        .map(str::to_owned);
    let (mut read, mut modified) = (Vec::new(), Vec::new());
    match name {
        "Read" => read.extend(path),
        "Write" | "Edit" | "MultiEdit" | "NotebookEdit" => modified.extend(path),
        _ => {}
    }
    let error = failed.then(|| match &block["content"] {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    });
    BatchEvent {
        id: 0,
        tool_use_id: Some(id.to_owned()),
        tool_name: name.to_owned(),
        failed,
        input,
        response: if failed { None } else { result },
        error,
        files_read: read,
        files_modified: modified,
        note: None,
        created_at: 0,
    }
}

/// The batches the worker would compress for `turn`, cut every `piece`
/// events like the queue does; the last one completes the turn.
pub fn batches(turn: &Turn, root: &str, number: i64, piece: usize) -> Vec<TurnBatch> {
    let chunks: Vec<&[BatchEvent]> = if turn.events.is_empty() {
        vec![&[]]
    } else {
        turn.events.chunks(piece.max(1)).collect()
    };
    let last = chunks.len() - 1;
    chunks
        .into_iter()
        .enumerate()
        .map(|(n, events)| TurnBatch {
            project_root: root.to_owned(),
            project_name: "spotter".into(),
            session_id: 1,
            prompt_number: number,
            prompt: Some(turn.prompt.clone()),
            events: events.to_vec(),
            last_assistant_message: (n == last)
                .then(|| turn.narrative.final_report.clone())
                .flatten(),
            turn_complete: n == last,
            narrative: Some(turn.narrative.clone()),
            earlier_pieces: Vec::new(),
        })
        .collect()
}

/// Compresses a turn piece by piece, as the worker does: each earlier
/// piece's partial summary goes to the last one.
pub fn compress_turn(
    turn: &Turn,
    root: &str,
    number: i64,
    piece: usize,
) -> (Vec<mnemo_compress::ObservationDraft>, Option<SummaryDraft>) {
    let mut observations = Vec::new();
    let mut earlier: Vec<SummaryDraft> = Vec::new();
    let mut summary = None;
    for mut b in batches(turn, root, number, piece) {
        b.earlier_pieces = earlier.clone();
        let out = mnemo_compress::offline(&b);
        observations.extend(out.observations);
        earlier.extend(out.piece_summary);
        summary = summary.or(out.summary);
    }
    (observations, summary)
}
