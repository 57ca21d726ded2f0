//! The offline compressor's `stated_choice` stage: a choice the user states
//! in their prompt between two ways of doing something ("use X, not Y: the
//! reason", "go with X rather than Y because …", "X instead of Y") is a
//! decision, told in words that stand on their own: "Chose X over Y: the
//! reason". A question, a conditional, a negated verb ("don't use X, not
//! Y") or a side longer than a few words is not read as one.

use super::decision::Decision;
use crate::text::{self, one_line};

/// Verbs that only ever state a choice, with their trailing space: with
/// them `X over Y` sets one way against another, and `X because …` is a
/// choice without the other way.
const CHOICE_ONLY: &[&str] = &[
    "go with ",
    "prefer ",
    "pick ",
    "choose ",
    "stick with ",
    "chose ",
    "picked ",
    "went with ",
    "opted for ",
    "decided on ",
];
/// Verbs that state a choice only when the other way is named ("use X, not
/// Y"); with [`CHOICE_ONLY`], every verb that states a choice.
const CHOOSE_AGAINST: &[&str] = &["use ", "switch to "];
/// What sets the chosen way against the other.
const AGAINST: &[&str] = &[", not ", " rather than ", " instead of "];
/// What sets them against each other after a verb of [`CHOICE_ONLY`].
const AGAINST_CHOICE: &[&str] = &[", not ", " rather than ", " instead of ", " over "];
/// What opens a reason when no other way is named.
const FOR_REASON: &[&str] = &[" because ", " since ", " so that "];
/// What opens the reason after the other way.
const BECAUSE: &[&str] = &[": ", " because ", " since ", " so that ", " - ", " — "];
/// Openers of a sentence that asks or supposes rather than states.
const ASKS: &[&str] = &[
    "if ", "what ", "should ", "could ", "can ", "would ", "why ", "how ", "do ", "does ", "is ",
    "are ", "maybe ", "whether ",
];
/// Words right before the verb that turn it around.
const NEGATIONS: &[&str] = &["don't", "dont", "not", "never", "no", "didn't", "won't"];
/// Most words of either side.
const MAX_SIDE_WORDS: usize = 8;
/// Sentences of a prompt read.
const SENTENCES_READ: usize = 12;

/// The decision the prompt states, if it states one.
pub(crate) fn stated_choice(prompt: &str, title_max: usize) -> Option<Decision> {
    text::sentences(prompt, SENTENCES_READ)
        .iter()
        .find_map(|s| choice_in(s, title_max))
}

/// The choice one sentence states: chosen way, other way, reason.
fn choice_in(sentence: &str, title_max: usize) -> Option<Decision> {
    // ASCII lowercase keeps byte offsets aligned with `sentence`.
    let lower = sentence.to_ascii_lowercase();
    if lower.ends_with('?') || ASKS.iter().any(|a| lower.starts_with(a)) {
        return None;
    }
    let (verb_at, verb) = CHOICE_ONLY
        .iter()
        .chain(CHOOSE_AGAINST)
        .filter_map(|v| word_at(&lower, v).map(|i| (i, *v)))
        .min()?;
    let before_verb = lower[..verb_at].split_whitespace().last().unwrap_or("");
    if NEGATIONS.contains(&before_verb) {
        return None;
    }
    let from = verb_at + verb.len();
    let (chosen, other, reason) = if CHOICE_ONLY.contains(&verb) {
        sides(sentence, from, AGAINST_CHOICE).or_else(|| chosen_for_reason(sentence, from))?
    } else {
        sides(sentence, from, AGAINST)?
    };
    let mut title = match &other {
        Some(other) => format!("Chose {chosen} over {other}"),
        None => format!("Chose {chosen}"),
    };
    if let Some(r) = reason {
        title.push_str(&format!(": {r}"));
    }
    let context = sentence[..verb_at].trim().trim_end_matches(',').trim();
    let rather = other
        .as_ref()
        .map(|o| format!(" rather than {o}"))
        .unwrap_or_default();
    Some(Decision {
        title: text::clamp_words(&title, title_max),
        subtitle: if context.is_empty() {
            "stated by the user".to_owned()
        } else {
            one_line(context, 120)
        },
        narrative: format!(
            "The user asked for {chosen}{rather}: \"{}\"",
            one_line(sentence, 300)
        ),
        facts: [
            Some(format!("chosen: {chosen}")),
            other.as_ref().map(|o| format!("over: {o}")),
            reason.map(|r| format!("why: {}", one_line(r, 200))),
        ]
        .into_iter()
        .flatten()
        .collect(),
    })
}

/// The chosen way, the other way when named, the reason when given.
type Choice<'s> = (String, Option<String>, Option<&'s str>);

/// The chosen way, the other and the reason of the words after the verb
/// (at `from`), the two ways set apart by one of `against`.
fn sides<'s>(sentence: &'s str, from: usize, against: &[&str]) -> Option<Choice<'s>> {
    let lower = sentence.to_ascii_lowercase();
    let (against_at, word) = against
        .iter()
        .filter_map(|a| lower[from..].find(a).map(|i| (from + i, *a)))
        .min()?;
    let chosen = side(&sentence[from..against_at])?;
    let rest = &sentence[against_at + word.len()..];
    let (other, reason) = match BECAUSE
        .iter()
        .filter_map(|b| rest.find(b).map(|i| (i, *b)))
        .min()
    {
        Some((at, b)) => (&rest[..at], Some(rest[at + b.len()..].trim())),
        None => (rest, None),
    };
    Some((chosen, Some(side(other)?), reason_of(reason)))
}

/// A choice with no other way named, only its reason ("go with X since …").
fn chosen_for_reason(
    sentence: &str,
    from: usize,
) -> Option<(String, Option<String>, Option<&str>)> {
    let lower = sentence.to_ascii_lowercase();
    let (at, word) = FOR_REASON
        .iter()
        .filter_map(|b| lower[from..].find(b).map(|i| (from + i, *b)))
        .min()?;
    let chosen = side(&sentence[from..at])?;
    let reason = reason_of(Some(sentence[at + word.len()..].trim()))?;
    Some((chosen, None, Some(reason)))
}

/// A reason without its closing mark; None when empty.
fn reason_of(reason: Option<&str>) -> Option<&str> {
    reason
        .map(|r| r.trim_end_matches(['.', '!']).trim())
        .filter(|r| !r.is_empty())
}

/// Where `word` starts in `lower` as a word of its own (not `reuse`).
fn word_at(lower: &str, word: &str) -> Option<usize> {
    lower
        .match_indices(word)
        .map(|(i, _)| i)
        .find(|&i| i == 0 || !lower.as_bytes()[i - 1].is_ascii_alphanumeric())
}

/// One side of the choice, trimmed; None when empty or too long to be a
/// way of doing something.
fn side(text: &str) -> Option<String> {
    let t = text.trim().trim_matches([',', ';', ':', '.', '"']).trim();
    let words = t.split_whitespace().count();
    (1..=MAX_SIDE_WORDS).contains(&words).then(|| t.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn title(prompt: &str) -> Option<String> {
        stated_choice(prompt, 200).map(|d| d.title)
    }

    #[test]
    fn a_choice_the_user_states_is_a_decision_with_its_reason() {
        let d = stated_choice(
            "For the billing API use the token bucket, not a fixed window counter: the nightly export sends bursts.",
            200,
        )
        .unwrap();
        assert_eq!(
            d.title,
            "Chose the token bucket over a fixed window counter: the nightly export sends bursts"
        );
        assert_eq!(d.subtitle, "For the billing API");
        assert!(d.facts.contains(&"over: a fixed window counter".to_owned()));
        assert_eq!(
            title("Let's go with SQLite rather than Postgres because it ships in the binary")
                .unwrap(),
            "Chose SQLite over Postgres: it ships in the binary"
        );
        assert_eq!(
            title("Please switch to `rg` instead of `grep` for searching.").unwrap(),
            "Chose `rg` over `grep` for searching"
        );
    }

    #[test]
    fn a_choice_stated_in_other_forms_names_what_was_chosen() {
        assert_eq!(
            title("We chose exceptions over return codes because callers forget to check them.")
                .unwrap(),
            "Chose exceptions over return codes: callers forget to check them"
        );
        assert_eq!(
            title("OK, let's go with the queue since the workers restart often.").unwrap(),
            "Chose the queue: the workers restart often"
        );
        assert_eq!(
            title("I'd prefer tabs over spaces, because the linter wants them").unwrap(),
            "Chose tabs over spaces: the linter wants them"
        );
        // `over` sets ways apart only after a verb that can only choose.
        assert_eq!(title("Use the cache over the network link."), None);
    }

    #[test]
    fn questions_negations_and_mere_mentions_are_not_decisions() {
        for prompt in [
            "should we use the token bucket, not a fixed window?",
            "If we use X instead of Y the tests break.",
            "Don't use the cache, not even for reads.",
            "The parser uses a stack, not recursion.",
            "use the new endpoint",
            "reuse the helper instead of copying it",
            "should we go with the queue since the workers restart often?",
            "If we chose exceptions over return codes the API would change.",
            "go with the flow",
            "use whatever library the rest of the code base already depends on for parsing, not the one that was added in the last release of the tool",
        ] {
            assert_eq!(title(prompt), None, "{prompt}");
        }
    }
}
