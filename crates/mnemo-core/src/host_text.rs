//! Prompts the host wrote, not the user: the one place that knows their
//! wrappers (Claude Code's `<task-notification>`, the summary that continues
//! a compacted conversation, `<local-command-…>` output, `<system-reminder>`).
//! Capture, the transcript reader, the compressor and recall each decide
//! from the kind what such a prompt means for them; [`describe`] says in
//! words what one is, for every screen that shows stored prompts.

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

/// One line saying what a host-written prompt is (`background task
/// failed: Background command "build" failed with exit code 1`), or None
/// for the user's own words. Only the wrapper's own fields are read; the
/// text inside stays data.
pub fn describe(prompt: &str) -> Option<String> {
    Some(match host_text(prompt)? {
        HostText::TaskNotification => task_notification(prompt),
        HostText::Compaction => "conversation continued after compaction (the host's summary of \
                                 the earlier part)"
            .to_owned(),
        HostText::LocalCommand => match tag_content(prompt, "local-command-stdout") {
            Some(out) if !out.is_empty() => {
                format!("output of a local command: {}", first_line(out))
            }
            _ => "output of a local command".to_owned(),
        },
        HostText::SystemReminder => "a reminder the host added to the conversation".to_owned(),
    })
}

/// A task notification's result text (a background agent's report), when
/// it carries one.
pub fn task_result(prompt: &str) -> Option<&str> {
    (host_text(prompt)? == HostText::TaskNotification)
        .then(|| tag_content(prompt, "result"))
        .flatten()
        .filter(|r| !r.is_empty())
}

/// `background task completed: <its summary>`, from the status and summary
/// fields, or the task id when there is no summary.
fn task_notification(prompt: &str) -> String {
    let status = match tag_content(prompt, "status") {
        Some("completed") | None => "finished",
        Some(other) => other,
    };
    match tag_content(prompt, "summary").filter(|s| !s.is_empty()) {
        Some(summary) => format!("background task {status}: {}", first_line(summary)),
        None => match tag_content(prompt, "task-id") {
            Some(id) => format!("background task {id} {status}"),
            None => format!("background task {status}"),
        },
    }
}

/// The trimmed text between `<tag>` and `</tag>`, the first of them.
fn tag_content<'a>(text: &'a str, tag: &str) -> Option<&'a str> {
    let open = format!("<{tag}>");
    let close = format!("</{tag}>");
    let start = text.find(&open)? + open.len();
    let len = text[start..].find(&close)?;
    Some(text[start..start + len].trim())
}

fn first_line(text: &str) -> &str {
    text.lines().next().unwrap_or_default().trim()
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

    #[test]
    fn host_prompts_are_described_by_their_own_fields() {
        let n = "<task-notification>\n<task-id>b1</task-id>\n<status>failed</status>\n\
                 <summary>Background command \"Rebase\" failed with exit code 1</summary>\n\
                 </task-notification>\nRead the output file";
        assert_eq!(
            describe(n).as_deref(),
            Some("background task failed: Background command \"Rebase\" failed with exit code 1")
        );
        let done = "<task-notification><task-id>a3</task-id><status>completed</status>\
                    <result>All good.</result></task-notification>";
        assert_eq!(
            describe(done).as_deref(),
            Some("background task a3 finished")
        );
        assert_eq!(task_result(done), Some("All good."));
        assert_eq!(task_result(n), None);
        assert_eq!(
            describe("<local-command-stdout>Set model</local-command-stdout>").as_deref(),
            Some("output of a local command: Set model")
        );
        assert_eq!(describe("fix the <summary> parser"), None);
    }
}
