//! Counted nouns for every message mnemo prints: `1 observation`,
//! `2 observations`, `0 summaries`. One helper, so that no message says
//! "1 events".

/// `n` and the noun in its right number; `many` is the plural spelled out
/// (`summary` / `summaries`).
pub fn count(n: impl std::fmt::Display, one: &str, many: &str) -> String {
    let n = n.to_string();
    let noun = if n == "1" { one } else { many };
    format!("{n} {noun}")
}

/// `n` and a noun whose plural only adds `s` (`event` / `events`).
pub fn count_s(n: impl std::fmt::Display, noun: &str) -> String {
    let n = n.to_string();
    let s = if n == "1" { "" } else { "s" };
    format!("{n} {noun}{s}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_is_singular_and_everything_else_plural() {
        assert_eq!(count(1u64, "summary", "summaries"), "1 summary");
        assert_eq!(count(0u64, "summary", "summaries"), "0 summaries");
        assert_eq!(count_s(1usize, "event"), "1 event");
        assert_eq!(count_s(2i64, "event"), "2 events");
        assert_eq!(count_s(-1i64, "event"), "-1 events");
    }
}
