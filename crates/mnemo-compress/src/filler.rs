//! Conversational filler in what the assistant said: acknowledgements
//! ("Good question", "You're right", "Exactly"), remarks about the reply
//! itself ("No response requested") and first-person narration of its own
//! process ("Now I have enough context", "Here's what I found", "I'll
//! collect the results"). They carry no fact about the project, so they are
//! not kept as what was learned.
//!
//! Recognised by form, never by a project's words: a sentence (or its
//! leading clause) made only of discourse words, or a short one whose
//! subject is the speaker, with no concrete anchor in it (code, a path, a
//! number, an identifier, an acronym). What follows a leading
//! acknowledgement ("Good call - dry-run by default is safer") is kept.

/// Discourse words: acknowledgements, evaluations of the other's remark,
/// and words about the conversation itself. General English, closed class.
const DISCOURSE: &[&str] = &[
    "yes",
    "yeah",
    "yep",
    "no",
    "nope",
    "ok",
    "okay",
    "right",
    "good",
    "great",
    "nice",
    "excellent",
    "perfect",
    "exactly",
    "absolutely",
    "indeed",
    "sure",
    "correct",
    "interesting",
    "ah",
    "oh",
    "aha",
    "hmm",
    "hm",
    "well",
    "alright",
    "true",
    "fair",
    "agreed",
    "thanks",
    "thank",
    "you",
    "you're",
    "youre",
    "that's",
    "thats",
    "it's",
    "is",
    "a",
    "an",
    "the",
    "so",
    "and",
    "i",
    "see",
    "got",
    "it",
    "makes",
    "sense",
    "understood",
    "noted",
    "question",
    "catch",
    "call",
    "point",
    "idea",
    "spot",
    "on",
    "there",
    "here",
    "this",
    "that",
    "all",
    "done",
    "now",
    "response",
    "reply",
    "requested",
    "needed",
    "really",
    "very",
    "totally",
    "quite",
    "much",
];

/// Words that make the speaker the subject.
const FIRST_PERSON: &[&str] = &[
    "i", "i'm", "i'll", "i've", "i'd", "im", "ive", "me", "my", "let", "let's", "lets",
];

/// Most words of a first-person remark counted as narration.
const NARRATION_MAX_WORDS: usize = 12;
/// Most words of a leading clause dropped as an acknowledgement.
const LEAD_MAX_WORDS: usize = 8;

/// The sentence without its leading filler, None when nothing factual is
/// left.
pub(crate) fn strip(sentence: &str) -> Option<String> {
    let mut rest = sentence.trim();
    loop {
        if rest.is_empty() || is_filler(rest, NARRATION_MAX_WORDS) {
            return None;
        }
        match leading_clause(rest) {
            Some((lead, after)) if is_filler(lead, LEAD_MAX_WORDS) || acknowledges(lead) => {
                rest = after.trim()
            }
            _ => break,
        }
    }
    Some(crate::text::capitalize(rest))
}

/// Whether a sentence or clause says nothing of the project: only
/// discourse words, or first-person narration of at most `max_words`.
fn is_filler(text: &str, max_words: usize) -> bool {
    if has_anchor(text) {
        return false;
    }
    let lower = lower_words(text);
    let words: Vec<&str> = lower.split(' ').filter(|w| !w.is_empty()).collect();
    if words.is_empty() {
        return true;
    }
    let only_discourse = words.iter().all(|w| DISCOURSE.contains(w));
    // "I couldn't reproduce it" reports a finding, not the speaker's process.
    let negates = words
        .iter()
        .any(|w| w.ends_with("n't") || ["not", "never", "cannot"].contains(w));
    let narrates = words.len() <= max_words
        && !negates
        && words.iter().take(3).any(|w| FIRST_PERSON.contains(w));
    only_discourse || narrates
}

/// A short clause that opens with two discourse words ("You're right to
/// ask", "Good question about the cache"): an acknowledgement.
fn acknowledges(clause: &str) -> bool {
    let lower = lower_words(clause);
    let words: Vec<&str> = lower.split(' ').filter(|w| !w.is_empty()).collect();
    !has_anchor(clause)
        && words.len() >= 2
        && words.len() <= LEAD_MAX_WORDS
        && words[..2].iter().all(|w| DISCOURSE.contains(w))
}

/// The first clause and the rest, split at the first `, ` or dash.
fn leading_clause(text: &str) -> Option<(&str, &str)> {
    [", ", " - ", " \u{2014} ", " \u{2013} ", "\u{2014}"]
        .iter()
        .filter_map(|sep| text.find(sep).map(|i| (i, sep.len())))
        .min()
        .map(|(i, len)| (&text[..i], &text[i + len..]))
}

/// The text's words, lowercase, separated by single spaces (apostrophes
/// kept: `you're`).
fn lower_words(text: &str) -> String {
    text.to_lowercase()
        .replace('\u{2019}', "'")
        .split(|c: char| !c.is_alphanumeric() && c != '\'')
        .filter(|w| !w.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

/// Something concrete: code, a path, a number, an identifier or an acronym.
fn has_anchor(text: &str) -> bool {
    if text.contains(['`', '/', '\\', '"', '(', '=', '<', '>', '#', '@']) {
        return true;
    }
    text.split_whitespace().any(|word| {
        let w = word.trim_matches(|c: char| !c.is_alphanumeric());
        let inner = w.char_indices().skip(1).any(|(i, c)| {
            c.is_ascii_uppercase() && w[..i].chars().last().is_some_and(|p| p.is_lowercase())
        });
        w.chars().any(|c| c.is_ascii_digit())
            || w.contains(['_', '.', ':'])
            || inner
            || (w.len() >= 2 && w.chars().all(|c| c.is_ascii_uppercase()))
    })
}

#[cfg(test)]
mod tests {
    use super::strip;

    #[test]
    fn acknowledgements_and_narration_are_dropped() {
        for s in [
            "Good question",
            "Great question.",
            "No response requested.",
            "Exactly right",
            "Yes, exactly right",
            "Ah, I see",
            "Interesting",
            "There it is",
            "Now I have enough context",
            "Here's what I found",
            "I'll collect the results as they complete",
            "I was being imprecise",
            "I've traced through the code and the logic looks correct",
            "Good question - let me trace through this more carefully...",
            "You're right to ask for clarification - let me be more precise about what I meant",
        ] {
            assert_eq!(strip(s), None, "{s}");
        }
    }

    #[test]
    fn a_leading_acknowledgement_is_cut_and_the_fact_kept() {
        assert_eq!(
            strip("Good call - dry-run by default is safer for a migration script").as_deref(),
            Some("Dry-run by default is safer for a migration script")
        );
        assert_eq!(
            strip("Great catch \u{2014} that's a race condition").as_deref(),
            Some("That's a race condition")
        );
        assert_eq!(
            strip("I found an issue - the hook calls `commit()` twice").as_deref(),
            Some("The hook calls `commit()` twice")
        );
    }

    #[test]
    fn facts_stay_whole() {
        for s in [
            "Not configurable via settings",
            "I couldn't reproduce the crash on a clean checkout",
            "Pushed",
            "The output shows FAIL but I can't see the specific failure",
            "I don't think any of our changes are redundant because the base branch changed the lifecycle",
            "Both sessions write to the same shadow branch",
            "Local: darwin/arm64 (Apple Silicon)",
        ] {
            assert_eq!(strip(s).as_deref(), Some(s), "{s}");
        }
    }
}
