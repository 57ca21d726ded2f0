//! The offline compressor's `extract_decisions` stage: what a user's answer
//! to the assistant's question decided, in words that stand on their own —
//! "Chose X over Y: reason" for a pick among options (by label, letter or
//! number), "Chose to X" / "Chose not to X: reason" for a yes or no to an
//! offer ("Want me to X?"). An answer that decides nothing is not a
//! decision: another question, host markup or a slash command, a pasted
//! error or log, a bare "3" with no options to resolve it against, a yes to
//! an either/or question, or a new request that ignores the question.

use crate::narrative::Question;
use crate::text::{self, one_line};

/// What a settled question becomes: title, subtitle, narrative and facts of
/// a `decision`.
pub(crate) struct Decision {
    pub title: String,
    pub subtitle: String,
    pub narrative: String,
    pub facts: Vec<String>,
}

/// How an answer relates to its question.
#[derive(Debug, PartialEq)]
enum Answer {
    /// Picked option `index`; `extra`: the rest of the answer (its reason).
    Picked {
        index: usize,
        extra: String,
    },
    /// Wrote a choice of their own instead of the options offered.
    OwnChoice,
    /// Gave the exact words to use, in quotes (`", exit and run"`).
    Wording(String),
    /// Yes (or no) to the offer, with the rest of the answer.
    Yes(String),
    No(String),
    /// Decides nothing.
    Nothing,
}

/// Words that open an agreeing answer.
const YES: &[&str] = &[
    "yes",
    "yeah",
    "yep",
    "yup",
    "sure",
    "ok",
    "okay",
    "agreed",
    "correct",
    "right",
    "absolutely",
    "definitely",
    "go",
    "proceed",
    "lgtm",
];

/// Words that open a refusing answer.
const NO: &[&str] = &["no", "nope", "nah", "don't", "dont", "skip"];

/// Openers of an offer ("Want me to X?" → "X").
const OFFERS: &[&str] = &[
    "do you want me to ",
    "would you like me to ",
    "want me to ",
    "do you want to ",
    "would you like to ",
    "want to ",
    "should we ",
    "shall we ",
    "shall i ",
    "should i ",
    "can i ",
    "may i ",
    "ok to ",
    "okay to ",
];

/// Filler after a yes ("yes please", "sure, go ahead").
const FILLER: &[&str] = &[
    "please", "thanks", "thank", "you", "go", "ahead", "do", "it", "that", "sounds", "good",
    "great", "let's", "lets", "and", "then", "sure", "ok", "okay", "yes", "yeah", "now", "fine",
    "perfect",
];

/// The decision a user's answer settled; None when it decides nothing.
pub(crate) fn decide(q: &Question, title_max: usize) -> Option<Decision> {
    let answer = one_line(&q.answer, 300);
    let title = match read_answer(q, &answer) {
        Answer::Picked { index, extra } => picked_title(q, index, &extra),
        Answer::OwnChoice => format!("Chose {answer} over {}", text::join_or(&labels(q, None))),
        Answer::Wording(words) => format!("Chose the wording \"{words}\""),
        Answer::Yes(rest) => match alternatives(&q.question) {
            Some(alts) => alternative_taken(&alts, &rest)?,
            None => format!("Chose to {}{}", offer(&q.question)?, reason(&rest)),
        },
        Answer::No(rest) => format!("Chose not to {}{}", offer(&q.question)?, reason(&rest)),
        Answer::Nothing => return None,
    };
    let question = one_line(&q.question, 300);
    Some(Decision {
        title: text::clamp_words(&title, title_max),
        subtitle: question.clone(),
        narrative: told(&question, &answer),
        facts: facts(q, &question, &answer),
    })
}

/// Reads what an answer does with its question.
fn read_answer(q: &Question, answer: &str) -> Answer {
    if decides_nothing(answer) {
        return Answer::Nothing;
    }
    if let Some(words) = quoted_whole(answer) {
        return Answer::Wording(words);
    }
    if let Some(index) = option_named(q, answer) {
        let label = &q.options[index].0;
        let extra = strip_ci(answer, label)
            .trim_matches([' ', '.', ',', ':', '-', '—'])
            .to_owned();
        return Answer::Picked { index, extra };
    }
    if let Some((index, rest)) = option_referenced(q, answer) {
        return Answer::Picked { index, extra: rest };
    }
    let first = first_word(answer);
    if YES.contains(&first.as_str()) {
        return Answer::Yes(after_first_word(answer));
    }
    if NO.contains(&first.as_str()) {
        return Answer::No(after_first_word(answer));
    }
    let worded = answer
        .split(|c: char| !c.is_alphabetic())
        .any(|w| w.chars().count() >= 3);
    if !q.options.is_empty() && worded && answer.split_whitespace().count() <= 12 {
        return Answer::OwnChoice;
    }
    Answer::Nothing
}

/// Openers of a request to the agent ("can you explain …"): an answer that
/// asks for something else chooses nothing, with or without its `?`.
const REQUESTS: &[&str] = &[
    "can you ",
    "could you ",
    "would you ",
    "will you ",
    "explain ",
    "explain:",
    "tell me ",
    "show me ",
];

/// Words that may come before a request ("now can you …").
const LEAD_INS: &[&str] = &["now ", "ok ", "okay ", "and ", "then ", "also ", "but "];

/// An answer that cannot be a choice: empty, another question (asked with
/// or without its `?`), host markup or a slash command, or pasted output
/// (an error, a log line, JSON).
fn decides_nothing(answer: &str) -> bool {
    let a = answer.trim();
    let lower = a.to_lowercase();
    let request = LEAD_INS
        .iter()
        .find_map(|l| lower.strip_prefix(l))
        .unwrap_or(&lower);
    a.is_empty()
        || REQUESTS.iter().any(|r| request.starts_with(r))
        || a.contains('?')
        || a.starts_with(['<', '/', '{', '[', '`', '$', '>'])
        || lower.starts_with("q:")
        || lower.contains("error:")
        || lower.contains("exception")
        || lower.contains("traceback")
        || lower.contains("panicked")
}

/// The words of an answer that is one quotation and nothing else (the
/// user supplying the text to use), up to twenty words.
fn quoted_whole(answer: &str) -> Option<String> {
    let a = answer.trim();
    let pairs = [('"', '"'), ('\'', '\''), ('“', '”')];
    let (open, close) = pairs.iter().find(|(o, _)| a.starts_with(*o))?;
    let inner = a.strip_prefix(*open)?.strip_suffix(*close)?;
    let words = inner.split_whitespace().count();
    let single = !inner.contains(*open) && !inner.contains(*close);
    (single && (1..=20).contains(&words)).then(|| inner.trim().to_owned())
}

/// The option whose label the answer names (the longest one it contains).
fn option_named(q: &Question, answer: &str) -> Option<usize> {
    let lower = answer.to_lowercase();
    let bare = |l: &str| clean_label(l).to_lowercase();
    q.options
        .iter()
        .position(|(label, _)| bare(label) == lower || label.to_lowercase() == lower)
        .or_else(|| {
            q.options
                .iter()
                .enumerate()
                .filter(|(_, (label, _))| label.len() >= 2 && lower.contains(&bare(label)))
                .max_by_key(|(_, (label, _))| label.len())
                .map(|(i, _)| i)
        })
}

/// An option the answer picks by letter or number ("B", "option 2", "2.
/// because …"), with the rest of the answer.
fn option_referenced(q: &Question, answer: &str) -> Option<(usize, String)> {
    if q.options.is_empty() {
        return None;
    }
    let lower = answer.to_lowercase();
    let rest = ["option ", "choice ", "#"]
        .iter()
        .find_map(|p| lower.strip_prefix(p))
        .unwrap_or(&lower);
    let token: String = rest.chars().take_while(|c| c.is_alphanumeric()).collect();
    let next = rest[token.len()..].chars().next();
    let letter = token.len() == 1 && token.chars().all(|c| c.is_ascii_lowercase());
    // "A)" or "a." picks option A; "a bit of both" does not.
    let ends_token = match next {
        None => true,
        Some(c) => ")].,:-".contains(c) || (!letter && c.is_whitespace()),
    };
    if token.is_empty() || !ends_token {
        return None;
    }
    let index = if letter {
        (token.as_bytes()[0] - b'a') as usize
    } else {
        token.parse::<usize>().ok()?.checked_sub(1)?
    };
    let after = rest[token.len()..].trim_start_matches([')', ']', '.', ',', ':', ' ', '-']);
    let extra = answer
        .get(answer.len().saturating_sub(after.len())..)
        .unwrap_or(after);
    (index < q.options.len()).then(|| (index, extra.to_owned()))
}

/// "Chose X over Y or Z: reason" (the reason: the rest of the answer, else
/// what the option meant).
fn picked_title(q: &Question, index: usize, extra: &str) -> String {
    let (label, desc) = &q.options[index];
    let mut t = format!("Chose {}", clean_label(label));
    let others = labels(q, Some(index));
    if !others.is_empty() {
        t.push_str(&format!(" over {}", text::join_or(&others)));
    }
    let why = if extra.len() > 3 { extra } else { desc.trim() };
    if !why.is_empty() {
        t.push_str(&format!(": {why}"));
    }
    t
}

/// The options' labels, but `except`.
fn labels(q: &Question, except: Option<usize>) -> Vec<String> {
    q.options
        .iter()
        .enumerate()
        .filter(|(i, _)| Some(*i) != except)
        .map(|(_, (l, _))| clean_label(l))
        .collect()
}

/// What the assistant offered to do, from its question's last sentence
/// ("… Want me to add a retry?" → "add a retry"); None when the question is
/// no offer or offers alternatives (a yes to "X, or Y?" decides nothing).
fn offer(question: &str) -> Option<String> {
    let last = question
        .trim()
        .trim_end_matches('?')
        .rsplit(['.', '!', '\n', '?'])
        .next()?
        .trim();
    let lower = last.to_lowercase();
    let opener = OFFERS.iter().find(|o| lower.starts_with(*o))?;
    let what = last[opener.len()..].trim();
    if what.is_empty() || lower.contains(" or ") {
        return None;
    }
    // A go-ahead says something only when its pronoun points at something.
    match context_of_pronoun(question, last, what) {
        Some(before) => Some(format!("{what} ({before})")),
        None if is_go_ahead(what) => None,
        None => Some(what.to_owned()),
    }
}

/// Verbs that only let work go on ("proceed", "continue", "start").
const GO_AHEAD: &[&str] = &[
    "proceed",
    "continue",
    "go",
    "start",
    "begin",
    "carry",
    "move",
    "keep",
    "get",
    "do",
    "implement",
    "run",
    "make",
];

/// A bare go-ahead ("proceed with the implementation then", "go ahead",
/// "start on it", "implement this"): the offer's verb lets the work go on
/// and what follows names nothing but the work, a pronoun or filler. A
/// yes to it chooses nothing.
fn is_go_ahead(what: &str) -> bool {
    const EMPTY: &[&str] = &[
        "with",
        "on",
        "ahead",
        "it",
        "this",
        "that",
        "these",
        "them",
        "the",
        "then",
        "now",
        "all",
        "everything",
        "same",
        "as",
        "planned",
        "so",
        "work",
        "implementation",
        "changes",
        "change",
        "plan",
        "fix",
        "fixes",
        "next",
        "step",
        "steps",
        "forward",
        "started",
        "going",
        "on",
        "rest",
        "up",
    ];
    let lower = what.to_lowercase();
    let mut words = lower.split(|c: char| !c.is_alphanumeric() && c != '\'');
    let Some(verb) = words.next() else {
        return false;
    };
    GO_AHEAD.contains(&verb) && words.filter(|w| !w.is_empty()).all(|w| EMPTY.contains(&w))
}

/// The alternatives of an either/or offer ("Want to push and re-test, or
/// do you want to refine further?" → ["push and re-test", "refine
/// further"]); None when the question offers one thing or none.
fn alternatives(question: &str) -> Option<Vec<String>> {
    let last = question
        .trim()
        .trim_end_matches('?')
        .rsplit(['.', '!', '\n', '?'])
        .next()?
        .trim();
    let lower = last.to_lowercase();
    if !lower.contains(" or ") || !OFFERS.iter().any(|o| lower.starts_with(o)) {
        return None;
    }
    let alts: Vec<String> = lower
        .split(" or ")
        .map(|a| {
            let a = a.trim().trim_matches([',', ' ']);
            let a = a.strip_prefix("should i just ").unwrap_or(a);
            let a = OFFERS.iter().find_map(|o| a.strip_prefix(o)).unwrap_or(a);
            a.strip_prefix("just ").unwrap_or(a).trim().to_owned()
        })
        .filter(|a| !a.is_empty())
        .collect();
    (alts.len() >= 2).then_some(alts)
}

/// "Chose to X over Y" when the rest of a yes names one alternative more
/// than any other (by words of three letters or more); None otherwise.
fn alternative_taken(alts: &[String], rest: &str) -> Option<String> {
    let said: Vec<String> = rest
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| w.chars().count() >= 3)
        .map(str::to_lowercase)
        .filter(|w| !FILLER.contains(&w.as_str()))
        .collect();
    let overlap = |alt: &String| {
        alt.split(|c: char| !c.is_alphanumeric())
            .filter(|w| said.iter().any(|s| s == w))
            .count()
    };
    let scores: Vec<usize> = alts.iter().map(overlap).collect();
    let best = *scores.iter().max()?;
    if best == 0 || scores.iter().filter(|&&s| s == best).count() > 1 {
        return None;
    }
    let taken = scores.iter().position(|&s| s == best)?;
    let others: Vec<String> = alts
        .iter()
        .enumerate()
        .filter(|(i, _)| *i != taken)
        .map(|(_, a)| a.clone())
        .collect();
    Some(format!(
        "Chose to {} over {}",
        alts[taken],
        text::join_or(&others)
    ))
}

/// For an offer that only points back ("fix this", "commit them"), the
/// sentence before it, which says what "this" is.
fn context_of_pronoun<'q>(question: &'q str, last: &str, what: &str) -> Option<&'q str> {
    let words: Vec<&str> = what.split_whitespace().collect();
    let points_back = words.len() <= 4
        && words
            .iter()
            .any(|w| ["this", "that", "it", "them", "these", "those"].contains(w));
    if !points_back {
        return None;
    }
    let head = question.trim();
    let head = head.strip_suffix('?').unwrap_or(head);
    let head = head.strip_suffix(last)?.trim_end();
    let before = head
        .trim_end_matches(['.', '!'])
        .rsplit(['.', '!', '\n', '?'])
        .next()?
        .trim();
    (!before.is_empty()).then_some(before)
}

/// ": reason" from the rest of a yes or no, when it says more than filler.
fn reason(rest: &str) -> String {
    let rest = rest.trim_matches([' ', '.', ',', '!', '-', '—', ':']);
    let meaningful = rest
        .split(|c: char| !c.is_alphanumeric() && c != '\'')
        .filter(|w| !w.is_empty() && !FILLER.contains(&w.to_lowercase().as_str()))
        .count();
    if meaningful >= 2 {
        format!(": {rest}")
    } else {
        String::new()
    }
}

fn first_word(answer: &str) -> String {
    answer
        .split(|c: char| !c.is_alphanumeric() && c != '\'')
        .find(|w| !w.is_empty())
        .unwrap_or("")
        .to_lowercase()
}

fn after_first_word(answer: &str) -> String {
    let a = answer.trim_start();
    let end = a
        .find(|c: char| !c.is_alphanumeric() && c != '\'')
        .unwrap_or(a.len());
    a[end..].to_owned()
}

/// `s` without the first case-insensitive occurrence of `part`.
fn strip_ci(s: &str, part: &str) -> String {
    match s.to_lowercase().find(&part.to_lowercase()) {
        Some(i) if s.is_char_boundary(i) && s.is_char_boundary(i + part.len()) => {
            format!("{}{}", &s[..i], &s[i + part.len()..])
        }
        _ => s.to_owned(),
    }
}

/// "The user decided: … (the agent asked: …)".
fn told(question: &str, answer: &str) -> String {
    format!(
        "The user decided: {} (the agent asked: {question})",
        answer.trim_end_matches(['.', '!'])
    )
}

/// The question, the options (with what each meant) and the answer.
fn facts(q: &Question, question: &str, answer: &str) -> Vec<String> {
    let mut facts = vec![format!("Question: {question}")];
    if !q.options.is_empty() {
        let shown: Vec<String> = q
            .options
            .iter()
            .map(|(l, d)| {
                if d.is_empty() {
                    l.clone()
                } else {
                    format!("{l} ({d})")
                }
            })
            .collect();
        facts.push(format!("Options: {}", shown.join("; ")));
    }
    facts.push(format!("Answer: {answer}"));
    facts
}

/// An option label without its "(Recommended)" tag.
fn clean_label(label: &str) -> String {
    label
        .replace("(Recommended)", "")
        .replace("(recommended)", "")
        .trim()
        .to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn q(question: &str, options: &[&str], answer: &str) -> Question {
        Question {
            question: question.into(),
            options: options
                .iter()
                .map(|o| ((*o).to_owned(), String::new()))
                .collect(),
            answer: answer.into(),
        }
    }

    fn title(question: &str, options: &[&str], answer: &str) -> Option<String> {
        decide(&q(question, options, answer), 200).map(|d| d.title)
    }

    #[test]
    fn an_option_picked_by_letter_or_number_is_named() {
        let opts = ["Nest it under strategy", "A top-level flag"];
        assert_eq!(
            title("Where should the option go?", &opts, "A").as_deref(),
            Some("Chose Nest it under strategy over A top-level flag")
        );
        assert_eq!(
            title("Where?", &opts, "option 2, simpler to find").as_deref(),
            Some("Chose A top-level flag over Nest it under strategy: simpler to find")
        );
        assert_eq!(title("Where?", &opts, "3"), None, "no third option");
    }

    #[test]
    fn a_yes_or_no_to_an_offer_says_what_was_chosen() {
        // An offer that points back says what it points at.
        assert_eq!(
            title(
                "The loop scans every checkpoint per commit. Want me to fix this?",
                &[],
                "yes"
            )
            .as_deref(),
            Some("Chose to fix this (The loop scans every checkpoint per commit)")
        );
        assert_eq!(
            title(
                "Done. Want me to add a retry with backoff?",
                &[],
                "yes please"
            )
            .as_deref(),
            Some("Chose to add a retry with backoff")
        );
        assert_eq!(
            title(
                "Want me to look into fixing this?",
                &[],
                "No, too much risk of false positives for a rare case"
            )
            .as_deref(),
            Some(
                "Chose not to look into fixing this: too much risk of false positives for a rare case"
            )
        );
    }

    #[test]
    fn answers_that_decide_nothing_are_not_decisions() {
        let offer = "Want me to commit and push them?";
        for answer in [
            "are you sure this is right?",
            "/review",
            "<bash-input>make test</bash-input>",
            "Error: cannot find module 'x'",
            "3",
            "the tests take 200s now, can we look at that",
            "now can you explain: Session state persists until cleanup",
            "can you explain the second row",
        ] {
            assert_eq!(title(offer, &[], answer), None, "{answer}");
        }
        // A yes to alternatives picks neither, unless it names one.
        assert_eq!(
            title("Want me to fix it, or document it?", &[], "yes"),
            None
        );
        assert_eq!(
            title(
                "Want to push what we have and re-test, or do you want to refine further?",
                &[],
                "yeah let's push and re-test"
            )
            .as_deref(),
            Some("Chose to push what we have and re-test over refine further")
        );
        // The exact words to use, quoted, are the choice.
        assert_eq!(
            title(
                "Change it to \"exit and run\"? Or keep it more explicit?",
                &[],
                "\", exit the app and run\""
            )
            .as_deref(),
            Some("Chose the wording \", exit the app and run\"")
        );
        // A yes to something that was no offer.
        assert_eq!(title("What do you think?", &[], "yes"), None);
        // A yes to a bare go-ahead chooses nothing.
        for offer in [
            "The plan is ready. Shall I proceed with the implementation then?",
            "Want me to go ahead?",
            "Should I continue with the next steps?",
            "Do you want me to implement this?",
            "Want me to start on it now?",
        ] {
            assert_eq!(title(offer, &[], "yes"), None, "{offer}");
            assert_eq!(title(offer, &[], "no"), None, "{offer}");
        }
        // A go-ahead whose pronoun points at something says what.
        assert_eq!(
            title(
                "The cache is never evicted. Want me to implement this?",
                &[],
                "yes"
            )
            .as_deref(),
            Some("Chose to implement this (The cache is never evicted)")
        );
        // A go-ahead verb with something named is still a choice.
        assert_eq!(
            title("Should I implement the retry with backoff?", &[], "yes").as_deref(),
            Some("Chose to implement the retry with backoff")
        );
    }
}
