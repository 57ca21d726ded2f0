//! Tool calls that leave nothing to remember, taken out of a batch before
//! any compressor sees it: calls the user refused (the host ran nothing),
//! calls the host never ran because a sibling call failed, and reads that
//! failed (nothing was learned from a file that could not be read).

use std::borrow::Cow;

use crate::event::{Action, read, text_of};
use crate::{BatchEvent, TurnBatch};

/// What hosts answer in place of a tool call they did not run. These are
/// the hosts' own protocol texts, not any project's words.
const NOT_RUN: [&str; 4] = [
    "the user doesn't want to proceed with this tool use",
    "user rejected tool use",
    "sibling tool call errored",
    "rejected by user",
];

/// `batch` without the events that [`is_noise`] finds, borrowed when there
/// are none.
pub(crate) fn worth_remembering(batch: &TurnBatch) -> Cow<'_, TurnBatch> {
    if !batch
        .events
        .iter()
        .any(|e| is_noise(e, &batch.project_root))
    {
        return Cow::Borrowed(batch);
    }
    let mut kept = batch.clone();
    kept.events.retain(|e| !is_noise(e, &batch.project_root));
    Cow::Owned(kept)
}

/// A call the host did not run, or a read that failed.
fn is_noise(e: &BatchEvent, project_root: &str) -> bool {
    let event = read(e, 0, project_root);
    let response = e.response.as_ref().map(text_of).unwrap_or_default();
    let not_run = [event.error.as_deref(), e.error.as_deref(), Some(&response)]
        .into_iter()
        .flatten()
        .any(was_not_run);
    not_run || (event.failed && matches!(event.action, Action::Read { .. }))
}

/// The text is a host's answer for a call it did not run.
fn was_not_run(text: &str) -> bool {
    let head: String = text.chars().take(200).collect::<String>().to_lowercase();
    NOT_RUN.iter().any(|p| head.contains(p))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn event(
        tool: &str,
        input: serde_json::Value,
        failed: bool,
        error: Option<&str>,
    ) -> BatchEvent {
        BatchEvent {
            id: 1,
            tool_use_id: None,
            tool_name: tool.into(),
            failed,
            input,
            response: None,
            error: error.map(str::to_owned),
            files_read: Vec::new(),
            files_modified: Vec::new(),
            note: None,
            created_at: 0,
        }
    }

    #[test]
    fn refused_calls_and_failed_reads_are_dropped_and_the_rest_kept() {
        let refused = event(
            "Edit",
            json!({"file_path": "/p/a.rs", "old_string": "a", "new_string": "b"}),
            true,
            Some(
                "Error: The user doesn't want to proceed with this tool use. The tool use was rejected",
            ),
        );
        let unreadable = event(
            "Read",
            json!({"file_path": "/tmp/t/x.output"}),
            true,
            Some("File does not exist."),
        );
        let failing_test = event(
            "Bash",
            json!({"command": "cargo test"}),
            true,
            Some("Exit code 1"),
        );
        let read = event("Read", json!({"file_path": "/p/a.rs"}), false, None);
        let refused_command = event(
            "Bash",
            json!({"command": "make serve | head -80", "timeout": 30000}),
            true,
            Some("The user doesn't want to proceed with this tool use. The tool use was rejected."),
        );
        let batch = TurnBatch {
            events: vec![refused_command.clone(), read.clone()],
            ..Default::default()
        };
        assert_eq!(worth_remembering(&batch).events.len(), 1);
        for (e, noise) in [
            (&refused, true),
            (&unreadable, true),
            (&failing_test, false),
            (&read, false),
        ] {
            assert_eq!(is_noise(e, "/p"), noise, "{e:?}");
        }
    }
}
