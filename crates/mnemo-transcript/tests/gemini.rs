//! The Gemini CLI reader on a chat recording made with the real `gemini`
//! binary (tests/fixtures/gemini; recorded by `e2e_gemini` in the mnemo
//! crate with `MNEMO_RECORD_GEMINI=dir`, paths scrubbed to
//! `/home/dev/projects/limiter`).

use std::path::Path;

use mnemo_core::config::Config;
use mnemo_core::privacy::Sanitizer;
use mnemo_transcript::locate::{Captured, Wanted, match_calls, turn_for};
use mnemo_transcript::read_gemini;
use serde_json::json;

const PROJECT: &str = "/home/dev/projects/limiter";

fn recorded() -> mnemo_transcript::Session {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/gemini/session.token_bucket.jsonl");
    read_gemini(&path, &Sanitizer::new(&Config::default().privacy)).unwrap()
}

#[test]
fn a_recorded_turn_reads_with_its_words_calls_and_report() {
    let session = recorded();
    assert_eq!(session.session_id, "b15b4b7b-0371-4518-8d10-82b672340f09");
    assert_eq!(session.stats.skipped, 0);
    assert_eq!(session.turns.len(), 1, "the host's preamble opens no turn");
    let turn = &session.turns[0];
    assert_eq!(
        turn.prompt.as_deref(),
        Some("make the rate limiter smooth out bursts"),
        "the user's words only, not the injected memory"
    );
    let calls: Vec<&str> = turn.tool_calls.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(calls, ["Read", "Write", "Bash"]);
    assert!(turn.tool_calls.iter().all(|c| c.error.is_none()));
    let notes: Vec<(&str, &str)> = turn
        .notes
        .iter()
        .map(|n| (n.text.as_str(), n.before_tool_use_id.as_deref().unwrap()))
        .collect();
    assert_eq!(
        notes,
        [
            (
                "Reading the limiter before changing it.",
                turn.tool_calls[0].id.as_str()
            ),
            (
                "A token bucket replaces the window counter because a fixed window lets a double burst through at the window edge.",
                turn.tool_calls[1].id.as_str()
            ),
        ]
    );
    assert_eq!(
        turn.final_report.as_deref(),
        Some("limits.py now refills a token bucket; the check prints ok.")
    );
}

#[test]
fn the_hooks_calls_find_their_turn_and_their_ids() {
    let session = recorded();
    let turn = turn_for(
        &session,
        &Wanted {
            tool_use_ids: &[],
            prompt: Some("make the rate limiter smooth out bursts"),
            prompt_number: 1,
        },
    )
    .expect("the turn, by its prompt");
    // What `mnemo hook gemini` stores of the three calls: no ids.
    let file = format!("{PROJECT}/limits.py");
    let inputs = [
        json!({"file_path": file}),
        json!({"file_path": file, "content": "import time\n…[300 bytes cut]…"}),
        json!({"command": "python3 limits.py", "description": "check the limiter"}),
    ];
    let captured: Vec<Captured<'_>> = ["Read", "Write", "Bash"]
        .iter()
        .zip(&inputs)
        .map(|(name, input)| Captured {
            name,
            input,
            at_ms: None,
        })
        .collect();
    let ids = match_calls(turn, &captured);
    let expected: Vec<Option<String>> =
        turn.tool_calls.iter().map(|c| Some(c.id.clone())).collect();
    assert_eq!(ids, expected);
}
