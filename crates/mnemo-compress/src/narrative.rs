//! What the turn's narrative (the assistant's words, the questions it asked,
//! its final report) adds to the offline compressor: the explanation of a
//! change in whole sentences, a title made of it, the findings worth
//! remembering, the decisions a user's answer settled, the request a
//! continuation belongs to, and the merging of a long turn's piece summaries.

use mnemo_core::host_text::{HostText, host_text};
use serde_json::Value;

use crate::text;
use crate::{SummaryDraft, TurnBatch, TurnOrigin};

/// Bytes of explanation kept per change.
const WHY_MAX: usize = 400;

/// Openers of a sentence that only announces the next tool call.
const CHATTER: &[&str] = &[
    "let me ",
    "now let me ",
    "let's ",
    "now let's ",
    "i'll ",
    "now i'll ",
    "i will ",
    "now i will ",
    "i'm going to ",
    "next, let me",
    "first, let me",
    "then let me",
    "ok",
    "okay",
    "good",
    "great",
    "perfect",
    "excellent",
    "alright",
    "now i have",
    "now i can",
    "now i understand",
    "i now have",
    "i have a clear",
    "all ",
    "done",
    "looks good",
    "that's",
];

/// Words that make a sentence say why, not only what.
const REASONS: &[&str] = &[
    "because",
    "since ",
    "so that",
    "so the ",
    "instead",
    "to avoid",
    "otherwise",
    "caus",
    "the issue",
    "the problem",
    "the bug",
    "root cause",
    "doesn't",
    "does not",
    "isn't",
    "is not",
    "wasn't",
    "can't",
    "cannot",
    "won't",
    "needs",
    "must",
    "should",
    "fails",
    "failing",
    "error",
    "broken",
    "missing",
    "wrong",
    "turns out",
    "which means",
    "so it",
];

/// Words that make a sentence a finding (for the summary's `learned`).
const FINDINGS: &[&str] = &[
    "because",
    "caused by",
    "root cause",
    "turns out",
    "the issue is",
    "the issue was",
    "the problem is",
    "the problem was",
    "the bug is",
    "the bug was",
    "the reason",
    "i found",
    "found that",
    "which means",
    "doesn't work",
    "does not work",
    "isn't",
    "is not",
    "wasn't",
    "was not",
    "instead of",
    "doesn't ",
    "does not ",
    "don't ",
    "can't ",
    "cannot ",
    "won't ",
    "requires ",
    "is missing",
    "only works",
    "no longer",
];

/// Openers dropped when a sentence becomes a title.
const TITLE_OPENERS: &[&str] = &[
    "now ",
    "let me ",
    "let's ",
    "i'll ",
    "i will ",
    "i need to ",
    "i'm going to ",
    "we need to ",
    "need to ",
    "next, ",
    "first, ",
    "then ",
    "then, ",
    "finally, ",
    "okay, ",
    "ok, ",
    "good, ",
    "great, ",
    "perfect, ",
    "also ",
    "also, ",
];

fn lower_starts(s: &str, prefixes: &[&str]) -> bool {
    let lower = s.to_lowercase();
    prefixes.iter().any(|p| lower.starts_with(p))
}

fn has_any(s: &str, words: &[&str]) -> bool {
    let lower = s.to_lowercase();
    words.iter().any(|w| lower.contains(w))
}

/// Openers of a progress report ("Now add the route.", "Still compiling.").
const PROGRESS: &[&str] = &[
    "now ",
    "next ",
    "next,",
    "first ",
    "first,",
    "then ",
    "still ",
    "almost ",
    "continuing",
    "expected",
    "right",
    "clean ",
    "pushed",
    "migration ran",
    "compiles",
    "tests pass",
];

/// True when a sentence only announces the next step ("Let me read the
/// file.") or reports progress ("Clean compile.") without saying why.
fn is_chatter(sentence: &str) -> bool {
    let announces = lower_starts(sentence, CHATTER) || lower_starts(sentence, PROGRESS);
    (announces || sentence.len() < 30) && !has_any(sentence, REASONS)
}

/// Verbs a title of a change starts with.
const ACTIONS: &[&str] = &[
    "add",
    "fix",
    "update",
    "implement",
    "rewrite",
    "extend",
    "replace",
    "remove",
    "rename",
    "move",
    "create",
    "write",
    "register",
    "wire",
    "switch",
    "use",
    "make",
    "change",
    "refactor",
    "convert",
    "handle",
    "support",
    "allow",
    "ensure",
    "prevent",
    "avoid",
    "normalize",
    "validate",
    "introduce",
    "extract",
    "split",
    "merge",
    "drop",
    "delete",
    "guard",
    "cache",
    "skip",
    "store",
    "load",
    "parse",
    "render",
    "show",
    "hide",
    "expose",
    "limit",
    "migrate",
    "bump",
    "upgrade",
    "configure",
    "enable",
    "disable",
    "set",
    "simplify",
    "clean",
    "document",
    "test",
    "cover",
    "mark",
    "return",
    "pass",
    "keep",
    "restore",
    "revert",
    "wrap",
];

/// Titles from what the assistant said before a change, in the order it
/// said them: its sentences that, openers dropped, start with an action
/// ("Now add the API route." gives "Add the API route").
pub(crate) fn action_titles<'a>(
    notes: impl IntoIterator<Item = &'a str>,
    max: usize,
) -> Vec<String> {
    let mut out = Vec::new();
    for note in notes {
        for s in text::sentences(note, 12) {
            let Some(t) = title_of(&s, max) else {
                continue;
            };
            let first = t
                .split(|c: char| !c.is_alphanumeric())
                .next()
                .unwrap_or("")
                .to_lowercase();
            if ACTIONS.contains(&first.as_str()) && !out.contains(&t) {
                out.push(t);
            }
        }
    }
    out
}

/// The explanation in an assistant's note: its sentences that are not
/// chatter, whole, up to [`WHY_MAX`] bytes. None when nothing is left.
pub(crate) fn explanation(note: &str) -> Option<String> {
    let mut out = String::new();
    for s in text::sentences(note, 8) {
        if is_chatter(&s) || s.ends_with('?') {
            continue;
        }
        let s = s.trim_end_matches(':').trim().to_owned();
        let s = if s.ends_with(['.', '!', ')', '`', '"']) {
            s
        } else {
            format!("{s}.")
        };
        if !out.is_empty() && out.len() + 1 + s.len() > WHY_MAX {
            break;
        }
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(&s);
    }
    if out.is_empty() {
        return None;
    }
    Some(text::clamp_sentences(&out, WHY_MAX))
}

/// A title made of an explanation's first sentence ("Let me fix the router
/// so that slugs resolve." gives "Fix the router so that slugs resolve"),
/// None when it would not read as one.
pub(crate) fn title_of(explanation: &str, max: usize) -> Option<String> {
    let first = text::sentences(explanation, 1).into_iter().next()?;
    let mut t = first.as_str();
    loop {
        let lower = t.to_lowercase();
        match TITLE_OPENERS.iter().find(|o| lower.starts_with(*o)) {
            Some(o) => t = t[o.len()..].trim_start(),
            None => break,
        }
    }
    let t = t.trim_end_matches(['.', ':', '!', ' ']);
    let t = t.strip_suffix(" now").unwrap_or(t);
    if t.len() < 15 || t.contains("```") || t.ends_with('?') {
        return None;
    }
    let mut out = text::capitalize(t);
    if out.len() > max {
        out = text::clamp_words(&out, max);
    }
    Some(out)
}

/// The sentences of `text` that say what was found out.
pub(crate) fn findings(text: &str, max: usize) -> Vec<String> {
    text::sentences(text, 40)
        .iter()
        .filter_map(|s| crate::filler::strip(s))
        .filter(|s| {
            has_any(s, FINDINGS)
                && !is_chatter(s)
                && !lower_starts(s, &["i need", "we need", "need to", "expected"])
                && !has_any(s, &["i'll ", "i will ", "let me ", "let's "])
                && !s.ends_with('?')
                && s.len() >= 20
        })
        .take(max)
        .collect()
}

/// The turn's request: the prompt, or for a continuation (a background
/// task finishing, a compaction) the request it continues, never the
/// host's notification text.
pub(crate) fn request(batch: &TurnBatch) -> String {
    let continues = batch.narrative.as_ref().and_then(|n| {
        (n.origin != TurnOrigin::User).then(|| n.continues_request.clone().unwrap_or_default())
    });
    let earlier = batch
        .earlier_pieces
        .iter()
        .map(|p| p.request.trim())
        .find(|r| !r.is_empty());
    let prompt = batch.prompt.as_deref().map(str::trim).unwrap_or_default();
    let slash = slash_command(prompt);
    let prompt = slash.as_deref().unwrap_or(prompt);
    let request = match continues {
        Some(c) if !c.trim().is_empty() => c,
        Some(_) => earlier.unwrap_or_default().to_owned(),
        None if is_host_text(prompt) => earlier.unwrap_or_default().to_owned(),
        None => prompt.to_owned(),
    };
    if request.trim().is_empty() {
        // The request it continues is unknown: say what started the turn.
        let origin = batch.narrative.as_ref().map(|n| n.origin);
        let p = prompt.trim_start();
        if origin == Some(TurnOrigin::TaskNotification)
            || host_text(p) == Some(HostText::TaskNotification)
        {
            return "(continued when a background task finished)".to_owned();
        }
        if origin == Some(TurnOrigin::Compaction)
            || p.starts_with("This session is being continued")
        {
            return "(continued after the context was compacted)".to_owned();
        }
    }
    text::clamp_sentences(request.trim(), 600)
}

/// True for a prompt the host wrote, not the user: a background task's
/// notification, a compaction's summary.
pub(crate) fn is_host_text(prompt: &str) -> bool {
    host_text(prompt).is_some()
}

/// `/name args` for a prompt that is a slash command's tags
/// (`<command-name>/name</command-name>…<command-args>args</command-args>`).
fn slash_command(prompt: &str) -> Option<String> {
    let tag = |name: &str| {
        let open = format!("<{name}>");
        let close = format!("</{name}>");
        let start = prompt.find(&open)? + open.len();
        let end = start + prompt[start..].find(&close)?;
        Some(prompt[start..end].trim().to_owned())
    };
    let name = tag("command-name")?;
    let args = tag("command-args").unwrap_or_default();
    Some(if args.is_empty() {
        name
    } else {
        format!("{name} {args}")
    })
}

/// A question the assistant asked and the user's answer, with the offered
/// options and what each one meant.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Question {
    pub question: String,
    /// (label, description).
    pub options: Vec<(String, String)>,
    pub answer: String,
}

/// The questions the narrative tells of.
pub(crate) fn narrative_questions(batch: &TurnBatch) -> Vec<Question> {
    let Some(n) = &batch.narrative else {
        return Vec::new();
    };
    n.questions
        .iter()
        .map(|q| Question {
            question: q.question.clone(),
            options: q
                .options
                .iter()
                .enumerate()
                .map(|(i, o)| {
                    (
                        o.clone(),
                        q.option_notes.get(i).cloned().unwrap_or_default(),
                    )
                })
                .collect(),
            answer: q.answer.clone(),
        })
        .collect()
}

/// The questions of an `AskUserQuestion` call, from its input and response
/// (`{"questions": [...], "answers": {question: answer}}`).
pub(crate) fn asked_questions(input: &Value, response: Option<&Value>) -> Vec<Question> {
    let answers = response.and_then(|r| r.get("answers"));
    let questions = input
        .get("questions")
        .or_else(|| response.and_then(|r| r.get("questions")))
        .and_then(Value::as_array);
    let Some(questions) = questions else {
        return Vec::new();
    };
    questions
        .iter()
        .filter_map(|q| {
            let question = q.get("question")?.as_str()?.to_owned();
            let answer = answers
                .and_then(|a| a.get(&question))
                .and_then(Value::as_str)?
                .to_owned();
            let options = q
                .get("options")
                .and_then(Value::as_array)
                .map(|opts| {
                    opts.iter()
                        .filter_map(|o| {
                            let label = o.get("label").and_then(Value::as_str).or(o.as_str())?;
                            let desc = o.get("description").and_then(Value::as_str);
                            Some((label.to_owned(), desc.unwrap_or_default().to_owned()))
                        })
                        .collect()
                })
                .unwrap_or_default();
            Some(Question {
                question,
                options,
                answer,
            })
        })
        .collect()
}

/// The items of a summary field, as the compressor joins them (without
/// the count of items a budget left out).
pub(crate) fn items(field: &str) -> impl Iterator<Item = &str> {
    field
        .split("; ")
        .map(|s| {
            let s = s.trim();
            match s.rfind(" (and ") {
                Some(at) if s.ends_with(" more)") => &s[..at],
                _ => s,
            }
        })
        .filter(|s| !s.is_empty())
}

/// A long turn's summary: the earlier pieces' partial summaries merged with
/// the last piece's, in the order they happened, without repeats, each field
/// within its budget.
/// The intent (`command::same_command_key`) of the first command quoted in
/// a summary item (`` `cargo test -p x` passes ``); a display cut with `…`
/// keeps its first words, which is all the key reads.
fn check_intent(item: &str) -> Option<String> {
    let start = item.find('`')? + 1;
    let len = item[start..].find('`')?;
    let shown = item[start..start + len].trim_end_matches('…');
    (!shown.trim().is_empty())
        .then(|| crate::command::same_command_key(shown, crate::command::classify(shown)))
}

pub(crate) fn merge(earlier: &[SummaryDraft], last: SummaryDraft) -> SummaryDraft {
    if earlier.is_empty() {
        return last;
    }
    // The intents of the checks that passed anywhere in the turn, and of
    // the commands that worked after an earlier piece saw them fail.
    let passing: Vec<String> = earlier
        .iter()
        .chain(std::iter::once(&last))
        .flat_map(|s| items(&s.completed))
        .filter(|i| {
            i.ends_with(" passes") || i.contains(" passes (") || i.contains(" worked after ")
        })
        .filter_map(check_intent)
        .collect();
    // What a piece left failing and a later one made pass (the same check,
    // whatever its arguments: `mix test a_test.exs`, then `mix test`) is
    // settled.
    let settled = |item: &str| {
        item.contains("still failing at the end of this part")
            || ((item.starts_with("make ") || item.contains(" fails"))
                && check_intent(item).is_some_and(|k| passing.contains(&k)))
    };
    let all = |get: fn(&SummaryDraft) -> &str| {
        let mut all: Vec<String> = Vec::new();
        for s in earlier {
            all.extend(items(get(s)).filter(|i| !settled(i)).map(str::to_owned));
        }
        all.extend(items(get(&last)).map(str::to_owned));
        all
    };
    let field = |get: fn(&SummaryDraft) -> &str, max: usize| text::join_within(all(get), max);
    let request = if last.request.trim().is_empty() {
        earlier
            .iter()
            .map(|p| p.request.clone())
            .find(|r| !r.trim().is_empty())
            .unwrap_or_default()
    } else {
        last.request.clone()
    };
    SummaryDraft {
        request,
        investigated: field(|s| &s.investigated, 800),
        learned: field(|s| &s.learned, 1000),
        completed: text::join_within(fold_completed(all(|s| &s.completed)), 1200),
        next_steps: field(|s| &s.next_steps, 600),
        notes: field(|s| &s.notes, 600),
    }
}

/// Most file names a merged `created` or `changed` item lists.
const MERGED_FILES: usize = 24;

/// A long turn's `completed` items from all its pieces, folded so that each
/// file is named once and first: one `created …` and one `changed …` item
/// (a file created and then changed counts as created), then the rest in
/// order with only the last pass of each check (an earlier pass of the same
/// check says nothing more). Without this, the pieces' repeated checks
/// crowd the files out of the field's budget.
fn fold_completed(all: Vec<String>) -> Vec<String> {
    let (mut created, mut changed, mut rest) = (Vec::new(), Vec::new(), Vec::new());
    for item in all {
        if let Some(names) = item.strip_prefix("created ") {
            add_names(&mut created, names);
        } else if let Some(names) = item.strip_prefix("changed ") {
            add_names(&mut changed, names);
        } else {
            rest.push(item);
        }
    }
    changed.retain(|n| !created.contains(n));
    let mut seen_checks = Vec::new();
    let mut later_first: Vec<String> = Vec::new();
    for item in rest.into_iter().rev() {
        let pass = item.ends_with(" passes") || item.contains(" passes (");
        match check_intent(&item).filter(|_| pass) {
            Some(key) if seen_checks.contains(&key) => continue,
            Some(key) => seen_checks.push(key),
            None => {}
        }
        later_first.push(item);
    }
    let mut out = Vec::new();
    for (verb, names) in [("created", created), ("changed", changed)] {
        if !names.is_empty() {
            out.push(format!("{verb} {}", text::list_some(&names, MERGED_FILES)));
        }
    }
    out.extend(later_first.into_iter().rev());
    out
}

/// The names of a `created a, b and c` item's list, added once each (a
/// list's "N more" is not a name).
fn add_names(into: &mut Vec<String>, list: &str) {
    let names = list
        .split(", ")
        .flat_map(|part| part.split(" and "))
        .map(str::trim)
        .filter(|n| !n.is_empty() && !is_more_count(n));
    for name in names {
        if !into.iter().any(|n| n == name) {
            into.push(name.to_owned());
        }
    }
}

fn is_more_count(name: &str) -> bool {
    name.strip_suffix(" more")
        .is_some_and(|n| n.chars().all(|c| c.is_ascii_digit()))
}

/// A check (test, build, lint) an earlier piece of the turn left failing,
/// as its partial summary tells it (`` make `mix test` pass (3 failures) ``).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct OpenCheck {
    /// The command as shown (maybe cut with `…`).
    pub shown: String,
    pub headline: String,
}

/// The checks the earlier pieces left failing and none of them made pass:
/// a later piece settles them (a fix) or, at the turn's end, they stand.
pub(crate) fn open_checks(earlier: &[SummaryDraft]) -> Vec<OpenCheck> {
    if earlier.is_empty() {
        return Vec::new();
    }
    let merged = merge(earlier, SummaryDraft::default());
    items(&merged.next_steps).filter_map(open_check).collect()
}

/// `` make `X` pass (H) `` read back.
pub(crate) fn open_check(item: &str) -> Option<OpenCheck> {
    let rest = item.strip_prefix("make `")?;
    let end = rest.find('`')?;
    let shown = rest[..end].trim();
    let after = rest[end + 1..].strip_prefix(" pass")?.trim();
    let headline = after
        .strip_prefix('(')
        .and_then(|h| h.strip_suffix(')'))
        .unwrap_or("failing");
    (!shown.is_empty()).then(|| OpenCheck {
        shown: shown.to_owned(),
        headline: headline.trim().to_owned(),
    })
}

/// A model's summary made whole: fields it left empty are filled from the
/// earlier pieces (a long turn's work is never dropped by a summary of its
/// last piece), and a host's notification never stands as the request.
pub(crate) fn backfill(batch: &TurnBatch, mut summary: SummaryDraft) -> SummaryDraft {
    if is_host_text(&summary.request) || summary.request.trim().is_empty() {
        summary.request = request(batch);
    }
    if batch.earlier_pieces.is_empty() {
        return summary;
    }
    let merged = merge(&batch.earlier_pieces, SummaryDraft::default());
    for (mine, theirs) in [
        (&mut summary.investigated, merged.investigated),
        (&mut summary.learned, merged.learned),
        (&mut summary.completed, merged.completed),
        (&mut summary.next_steps, merged.next_steps),
        (&mut summary.notes, merged.notes),
    ] {
        if mine.trim().is_empty() {
            *mine = theirs;
        }
    }
    summary
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn explanations_keep_the_why_and_drop_chatter() {
        let e = explanation(
            "Let me read the file. The router passes the raw id instead of the slug, so \
             links break. Let me fix it:",
        )
        .unwrap();
        assert_eq!(
            e,
            "The router passes the raw id instead of the slug, so links break."
        );
        assert_eq!(explanation("Now let me update the router."), None);
        assert_eq!(
            title_of(
                "Now let me switch the parser to `serde_json` to avoid panics.",
                100
            )
            .as_deref(),
            Some("Switch the parser to `serde_json` to avoid panics")
        );
        assert_eq!(title_of("Good.", 100), None);
    }

    #[test]
    fn continuations_never_make_the_notification_the_request() {
        let mut b = TurnBatch {
            prompt: Some("<task-notification>\n<task-id>b0</task-id>".into()),
            ..Default::default()
        };
        assert_eq!(request(&b), "(continued when a background task finished)");
        b.earlier_pieces.push(SummaryDraft {
            request: "Implement the epic".into(),
            ..Default::default()
        });
        assert_eq!(request(&b), "Implement the epic");
        b.narrative = Some(crate::TurnNarrative {
            origin: TurnOrigin::TaskNotification,
            continues_request: Some("Implement spotter-gqc".into()),
            ..Default::default()
        });
        assert_eq!(request(&b), "Implement spotter-gqc");
        let slash = TurnBatch {
            prompt: Some(
                "<command-message>x</command-message>\n<command-name>/review</command-name>\n<command-args>the parser</command-args>"
                    .into(),
            ),
            ..Default::default()
        };
        assert_eq!(request(&slash), "/review the parser");
    }

    #[test]
    fn merging_keeps_every_piece_in_order_once() {
        let piece = |completed: &str, next: &str| SummaryDraft {
            request: "big".into(),
            completed: completed.into(),
            next_steps: next.into(),
            ..Default::default()
        };
        let m = merge(
            &[
                piece("created a.rs; changed b.rs", ""),
                piece("changed b.rs", "x"),
            ],
            piece("committed \"Add a\"", "y"),
        );
        assert_eq!(m.request, "big");
        assert_eq!(
            m.completed,
            "created a.rs; changed b.rs; committed \"Add a\""
        );
        assert_eq!(m.next_steps, "x; y");

        // A check a piece left failing and the last one made pass is settled.
        let failing = SummaryDraft {
            learned: "`cargo test` fails: boom".into(),
            next_steps: "make `cargo test` pass (boom)".into(),
            notes: "1 tool call still failing at the end of this part of the turn".into(),
            ..Default::default()
        };
        let passed = SummaryDraft {
            completed: "`cargo test` passes (3 passed)".into(),
            ..Default::default()
        };
        let m = merge(&[failing], passed);
        assert_eq!(
            (m.learned.as_str(), m.next_steps.as_str(), m.notes.as_str()),
            ("", "", "")
        );

        // The same check with other arguments settles it too; another does not.
        let failing = SummaryDraft {
            next_steps: "make `mix test test/web/review_live_test.e…` pass (undefined get/2); \
                         make `git push` pass (rejected)"
                .into(),
            ..Default::default()
        };
        let passed = SummaryDraft {
            completed: "`mix test 2>&1 | tail -5` passes (76 tests, 0 failures)".into(),
            ..Default::default()
        };
        let m = merge(&[failing], passed);
        assert_eq!(m.next_steps, "make `git push` pass (rejected)");
    }

    #[test]
    fn merged_files_come_once_and_first_and_a_check_passes_once() {
        let piece = |completed: &str| SummaryDraft {
            completed: completed.into(),
            ..Default::default()
        };
        let checks: Vec<String> = (0..30)
            .map(|i| format!("closed task-{i} (done with step {i} of the plan)"))
            .collect();
        let m = merge(
            &[
                piece("created a.ex and b.ex; changed c.ex; `mix test` passes (3 tests)"),
                piece(&format!(
                    "changed a.ex, c.ex and d.ex; {}",
                    checks.join("; ")
                )),
            ],
            piece("changed e.ex; `mix test 2>&1` passes (9 tests); committed \"Add e\""),
        );
        assert!(
            m.completed
                .starts_with("created a.ex and b.ex; changed c.ex, d.ex and e.ex; closed task-0"),
            "{}",
            m.completed
        );
        assert!(!m.completed.contains("(3 tests)"), "{}", m.completed);
        assert!(m.completed.len() <= 1200);
    }

    #[test]
    fn open_checks_are_the_failures_no_earlier_piece_settled() {
        let piece = |completed: &str, next: &str| SummaryDraft {
            completed: completed.into(),
            next_steps: next.into(),
            ..Default::default()
        };
        assert_eq!(open_checks(&[]), Vec::new());
        let open = open_checks(&[
            piece(
                "",
                "make `cargo test -p parser` pass (2 failed); make `go vet ./...` pass (bad printf)",
            ),
            piece("`cargo test` passes (40 passed)", "unfinished: write docs"),
        ]);
        assert_eq!(
            open,
            vec![OpenCheck {
                shown: "go vet ./...".into(),
                headline: "bad printf".into()
            }]
        );
    }
}
