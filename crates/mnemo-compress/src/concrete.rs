//! How concrete a title is: whether the thing an announced action acts on
//! is named ("Add the `TranscriptSelection` hook to app.js") or only pointed
//! at ("Implement both tasks in parallel", "Create all the files for
//! task 5", "Rewrite it with …"). Used to rank the candidate titles of an
//! observation: an action whose object names nothing gives way to a title
//! that does (definitions added, a commit subject), and a leading pronoun
//! takes the name of the file the action changed.

/// Words that name nothing in particular: determiners, pronouns,
/// prepositions, and the generic nouns of any piece of work or code.
#[rustfmt::skip]
const GENERIC: &[&str] = &[
    // determiners, pronouns, conjunctions, prepositions
    "a", "an", "the", "all", "both", "each", "every", "any", "some", "its", "their", "our",
    "your", "my", "this", "that", "these", "those", "it", "them", "everything", "and", "or",
    "of", "in", "on", "at", "to", "for", "with", "from", "into", "by", "as", "so", "then",
    "now", "once", "again", "also", "first", "next", "last", "same", "other", "rest",
    // how
    "parallel", "properly", "correctly", "together", "directly", "manually", "accordingly",
    "complete", "completed", "full", "whole", "new", "updated", "remaining", "needed",
    "necessary", "missing", "proper", "actual", "final", "initial", "following", "above",
    "below", "one", "two", "three", "more",
    // generic work
    "task", "tasks", "change", "changes", "thing", "things", "stuff", "work", "part", "parts",
    "piece", "pieces", "step", "steps", "item", "items", "fix", "fixes", "update", "updates",
    "plan", "code", "implementation", "version", "issue", "issues", "bug", "bugs", "order",
    "dependency", "dependencies",
    // generic code nouns, which say nothing without a name
    "file", "files", "module", "modules", "function", "functions", "method", "methods",
    "class", "classes", "attribute", "attributes", "field", "fields", "test", "tests",
    "template", "templates", "button", "component", "components", "helper", "helpers", "route",
    "routes", "hook", "hooks", "migration", "migrations", "resource", "resources", "type",
    "types", "struct", "structs", "handler", "handlers", "logic", "config",
];

/// Pronouns that stand for the thing acted on.
const PRONOUNS: &[&str] = &["it", "them", "this", "that", "these", "those"];

/// Verbs whose pronoun object is the whole file they changed ("Rewrite it
/// with …"); after others ("Add it next to …") it is something unnamed.
#[rustfmt::skip]
const WHOLE_FILE_VERBS: &[&str] = &[
    "rewrite", "update", "fix", "change", "refactor", "simplify", "clean", "restructure",
    "reorganize", "rework", "convert", "edit", "tidy",
];

/// True when the action's object (the words after its verb) names nothing:
/// it starts with a pronoun, or holds only generic words and ids
/// (`ab-12.3`, `Task 3`).
pub(crate) fn is_vague(title: &str) -> bool {
    let mut words = title.split_whitespace();
    words.next();
    let mut object = words.peekable();
    let pronoun = object
        .peek()
        .is_some_and(|w| PRONOUNS.contains(&w.to_lowercase().as_str()));
    pronoun || !object.any(is_naming)
}

/// True for a word that names something: code in backticks, or a word that
/// is neither generic nor an id.
fn is_naming(word: &str) -> bool {
    if word.contains('`') {
        return true;
    }
    let w = word
        .trim_matches(|c: char| !c.is_alphanumeric())
        .to_lowercase();
    let id = w.chars().any(|c| c.is_ascii_digit());
    w.chars().count() >= 3 && !id && !GENERIC.contains(&w.as_str())
}

/// The title with a pronoun right after its verb ("Rewrite it with …",
/// "Update this file so …") replaced by `name`; None when it has none.
pub(crate) fn name_pronoun(title: &str, name: &str) -> Option<String> {
    let (verb, rest) = title.split_once(' ')?;
    let (first, after) = rest.split_once(' ').unwrap_or((rest, ""));
    if !PRONOUNS.contains(&first.to_lowercase().as_str())
        || !WHOLE_FILE_VERBS.contains(&verb.to_lowercase().as_str())
        || name.is_empty()
    {
        return None;
    }
    // "this file …": the pronoun and its generic noun both go.
    let after = match after.split_once(' ') {
        Some(("file" | "module", tail)) => tail,
        None if matches!(after, "file" | "module") => "",
        _ => after,
    };
    // "this parser …" points at something named by the next word: keep it.
    if let Some(next) = after.split_whitespace().next()
        && first != "it"
        && first != "them"
        && is_naming(next)
        && !matches!(next, "with" | "using" | "so" | "because" | "instead")
    {
        return None;
    }
    Some(if after.is_empty() {
        format!("{verb} {name}")
    } else {
        format!("{verb} {name} {after}")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_action_that_names_nothing_is_vague() {
        for vague in [
            "Implement ab-12.3",
            "Create all the files for task 7",
            "Implement both tasks in parallel",
            "Add the button to the template",
            "Write the complete updated file with all Step 2 changes at once",
            "Rewrite it",
            "Add it next to the header when the list is empty",
        ] {
            assert!(is_vague(vague), "{vague}");
        }
        for concrete in [
            "Add the `retry` helper to the client",
            "Add a rate limiter to the login route",
            "Rewrite lib.rs with a streaming JSON parser",
            "Switch the parser to serde_json",
            "Implement Task 2 (InvoiceMailer and its queue)",
        ] {
            assert!(!is_vague(concrete), "{concrete}");
        }
    }

    #[test]
    fn a_leading_pronoun_takes_the_name_of_what_changed() {
        assert_eq!(
            name_pronoun(
                "Rewrite it with a streaming JSON parser",
                "0042_add_state.sql"
            )
            .as_deref(),
            Some("Rewrite 0042_add_state.sql with a streaming JSON parser")
        );
        assert_eq!(
            name_pronoun("Update this file so imports sort", "lib.rs").as_deref(),
            Some("Update lib.rs so imports sort")
        );
        assert_eq!(name_pronoun("Fix this parser bug", "lib.rs"), None);
        assert_eq!(name_pronoun("Add it to the header", "lib.rs"), None);
        assert_eq!(name_pronoun("Add the cache layer", "lib.rs"), None);
        assert_eq!(name_pronoun("Rewrite it", "").as_deref(), None);
    }
}
