//! The rollout reader on Codex rollouts recorded with the real `codex`
//! binary (tests/fixtures/codex; recorded by `e2e_codex` in the mnemo crate
//! with `MNEMO_RECORD_ROLLOUT=dir`, large host instructions cut).

use std::path::{Path, PathBuf};

use mnemo_core::config::Config;
use mnemo_core::privacy::Sanitizer;
use mnemo_transcript::locate::{Wanted, turn_for};
use mnemo_transcript::read_rollout;

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/codex")
        .join(name)
}

#[test]
fn a_recorded_multi_file_patch_turn_reads_with_its_words_calls_and_report() {
    let sanitizer = Sanitizer::new(&Config::default().privacy);
    let session = read_rollout(&fixture("rollout.multi_file_patch.jsonl"), &sanitizer).unwrap();
    assert_eq!(session.cwd.as_deref(), Some("/home/dev/work/project"));
    assert_eq!(session.stats.skipped, 0);
    assert_eq!(session.turns.len(), 1);
    let turn = &session.turns[0];
    assert_eq!(
        turn.prompt.as_deref(),
        Some("give the parser and the lexer one token type"),
        "the user's words only, not the host's environment context"
    );
    let calls: Vec<(&str, String)> = turn
        .tool_calls
        .iter()
        .map(|c| {
            (
                c.name.as_str(),
                c.input["command"].as_str().unwrap_or("").to_owned(),
            )
        })
        .collect();
    assert_eq!(calls.len(), 3, "{calls:?}");
    assert_eq!(
        calls[0],
        ("Bash", "sed -n '1,20p' src/parser.rs".to_owned())
    );
    assert_eq!(calls[1].0, "Bash");
    assert_eq!(calls[2].0, "apply_patch");
    for file in ["parser.rs", "lexer.rs", "token.rs"] {
        assert!(calls[2].1.contains(file), "{file}: {}", calls[2].1);
    }
    assert!(
        turn.tool_calls[0].result.is_some() && turn.tool_calls[0].error.is_none(),
        "the read succeeded"
    );
    assert!(turn.tool_calls[1].error.is_some(), "rg exited 1");
    let notes: Vec<(&str, Option<&str>)> = turn
        .notes
        .iter()
        .map(|n| (n.text.as_str(), n.before_tool_use_id.as_deref()))
        .collect();
    assert_eq!(notes.len(), 2, "{notes:?}");
    assert_eq!(notes[0].1, Some(turn.tool_calls[0].id.as_str()));
    assert!(notes[1].0.contains("share one type"));
    assert_eq!(notes[1].1, Some(turn.tool_calls[2].id.as_str()));
    assert_eq!(
        turn.final_report.as_deref(),
        Some("Parser and lexer now share the Token type of src/token.rs.")
    );
    // A batch holding the patch finds this turn by the call's id.
    let ids = vec![turn.tool_calls[2].id.clone()];
    let wanted = Wanted {
        tool_use_ids: &ids,
        prompt: None,
        prompt_number: 9,
    };
    assert!(turn_for(&session, &wanted).is_some());
}

#[test]
fn a_recorded_turn_of_shell_reads_and_a_moving_patch_reads_whole() {
    let sanitizer = Sanitizer::new(&Config::default().privacy);
    let session = read_rollout(&fixture("rollout.shell_reads.jsonl"), &sanitizer).unwrap();
    assert_eq!(session.turns.len(), 1);
    let turn = &session.turns[0];
    let commands: Vec<&str> = turn
        .tool_calls
        .iter()
        .map(|c| c.input["command"].as_str().unwrap_or(""))
        .collect();
    assert_eq!(commands.len(), 5, "{commands:?}");
    assert_eq!(commands[1], "nl -ba src/lexer.rs | sed -n '1,40p'");
    assert!(commands[4].contains("*** Move to: ") && commands[4].contains("*** Delete File: "));
    // The grep found nothing: the rollout says exit 1.
    assert!(turn.tool_calls[3].error.is_some());
    assert!(turn.tool_calls[..3].iter().all(|c| c.error.is_none()));
    assert_eq!(turn.notes.len(), 2);
    assert!(turn.final_report.as_deref().unwrap().contains("naming.rs"));
}
