//! Prompts the host wrote, not the user: the one place that knows their
//! wrappers (Claude Code's `<task-notification>`, the summary that continues
//! a compacted conversation, `<local-command-…>` output, `<system-reminder>`).
//! Capture, the transcript reader, the compressor and recall each decide
//! from the kind what such a prompt means for them.

/// What kind of host-written text a prompt is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HostText {
    /// A background task finished.
    TaskNotification,
    /// The summary that opens a compacted conversation.
    Compaction,
    /// A local slash command's output.
    LocalCommand,
    /// A reminder the host adds to the conversation.
    SystemReminder,
}

/// The kind of host-written text `prompt` is, if it is one (leading
/// whitespace ignored).
pub fn host_text(prompt: &str) -> Option<HostText> {
    let p = prompt.trim_start();
    if p.starts_with("<task-notification>") {
        Some(HostText::TaskNotification)
    } else if p.starts_with("This session is being continued from a previous conversation") {
        Some(HostText::Compaction)
    } else if p.starts_with("<local-command-") {
        Some(HostText::LocalCommand)
    } else if p.starts_with("<system-reminder>") {
        Some(HostText::SystemReminder)
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_wrapper_has_its_kind_and_user_words_have_none() {
        let cases = [
            (
                "\n<task-notification>\n<task-id>x",
                Some(HostText::TaskNotification),
            ),
            (
                "This session is being continued from a previous conversation that ran out",
                Some(HostText::Compaction),
            ),
            (
                "<local-command-stdout>ok</local-command-stdout>",
                Some(HostText::LocalCommand),
            ),
            (
                "<system-reminder>x</system-reminder>",
                Some(HostText::SystemReminder),
            ),
            ("fix the <task-notification> parser", None),
            ("This session is being continued", None),
        ];
        for (prompt, kind) in cases {
            assert_eq!(host_text(prompt), kind, "{prompt}");
        }
    }
}
