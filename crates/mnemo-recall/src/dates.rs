//! Calendar dates a query names ("what broke in July 2022", "on 11
//! December, 2023", "August 11", "2026-11-22"), as search reads them: a
//! hint about when the answer was recorded, never a filter. Search also
//! looks among the records of a named span, and ranks the records written
//! then above their equals (see `search`).
//!
//! A month name counts when a day or a year stands beside it, or when it
//! is capitalized and is not also an ordinary word (`May`, `March`); a
//! bare number or year is not read as a date (a port, an edition, a
//! count). A date without a year matches that day or month of any year.
//! Days are local days (the offset given).

use time::{Date, Month, OffsetDateTime, Time, UtcOffset};

/// One date a query names: a day, a month, or a day or month of any year.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NamedDate {
    pub year: Option<i32>,
    pub month: Month,
    pub day: Option<u8>,
}

impl NamedDate {
    /// Whether a record written at `ms` (epoch milliseconds) falls on it.
    pub fn contains(&self, ms: i64, offset: UtcOffset) -> bool {
        let Ok(at) = OffsetDateTime::from_unix_timestamp_nanos(i128::from(ms) * 1_000_000) else {
            return false;
        };
        let d = at.to_offset(offset).date();
        self.year.is_none_or(|y| y == d.year())
            && self.month == d.month()
            && self.day.is_none_or(|day| day == d.day())
    }

    /// Its first millisecond and the first one after it, when it names a
    /// year (a date of any year is no one span).
    pub fn bounds(&self, offset: UtcOffset) -> Option<(i64, i64)> {
        let year = self.year?;
        let first = Date::from_calendar_date(year, self.month, self.day.unwrap_or(1)).ok()?;
        let next = match self.day {
            Some(_) => first.next_day()?,
            None if self.month == Month::December => {
                Date::from_calendar_date(year + 1, Month::January, 1).ok()?
            }
            None => Date::from_calendar_date(year, self.month.next(), 1).ok()?,
        };
        let ms = |d: Date| {
            (d.with_time(Time::MIDNIGHT)
                .assume_offset(offset)
                .unix_timestamp_nanos()
                / 1_000_000) as i64
        };
        Some((ms(first), ms(next)))
    }
}

/// The dates a query names, with the offset their days are read in.
#[derive(Debug, Clone, Default)]
pub struct Named {
    pub dates: Vec<NamedDate>,
    pub offset: Option<UtcOffset>,
}

impl Named {
    /// The dates `query` names, days read at `offset` (asked for only when
    /// the query names one: reading the local offset costs a file read).
    pub fn in_query(query: &str, offset: impl FnOnce() -> UtcOffset) -> Named {
        let dates = named_dates(query);
        let offset = (!dates.is_empty()).then(offset);
        Named { dates, offset }
    }

    pub fn is_empty(&self) -> bool {
        self.dates.is_empty()
    }

    /// The spans of the dates that name a year (see [`NamedDate::bounds`]).
    pub fn spans(&self) -> Vec<(i64, i64)> {
        let offset = self.offset.unwrap_or(UtcOffset::UTC);
        self.dates.iter().filter_map(|d| d.bounds(offset)).collect()
    }

    /// How a record written at `ms` says its date, as words a query's date
    /// words match (`July 2022 14`); empty when the query names no date, so
    /// that a number in a query never matches a record's day.
    pub fn words_of(&self, ms: i64) -> String {
        let Some(offset) = self.offset.filter(|_| !self.is_empty()) else {
            return String::new();
        };
        let Ok(at) = OffsetDateTime::from_unix_timestamp_nanos(i128::from(ms) * 1_000_000) else {
            return String::new();
        };
        let d = at.to_offset(offset).date();
        format!("{} {} {}", d.month(), d.year(), d.day())
    }
}

/// The dates `query` names, in order, each once.
pub fn named_dates(query: &str) -> Vec<NamedDate> {
    let words: Vec<&str> = query
        .split(|c: char| !c.is_alphanumeric() && c != '-')
        .flat_map(split_unless_iso)
        .filter(|w| !w.is_empty())
        .collect();
    let mut out: Vec<NamedDate> = Vec::new();
    for (i, w) in words.iter().enumerate() {
        let found = iso_date(w).or_else(|| month_date(&words, i));
        if let Some(d) = found.filter(|d| !out.contains(d)) {
            out.push(d);
        }
    }
    out
}

/// A word with hyphens is kept whole when it is an ISO date, else cut at
/// them (`mid-July` is `mid`, `July`).
fn split_unless_iso(word: &str) -> Vec<&str> {
    if iso_date(word).is_some() {
        vec![word]
    } else {
        word.split('-').collect()
    }
}

/// `2026-11-22`.
fn iso_date(word: &str) -> Option<NamedDate> {
    let format = time::macros::format_description!("[year]-[month]-[day]");
    let d = Date::parse(word, format).ok()?;
    Some(NamedDate {
        year: Some(d.year()),
        month: d.month(),
        day: Some(d.day()),
    })
}

/// The date around the month name at `words[i]`: `11 December 2023`,
/// `December 11, 2023`, `December 2023`, `August 11`, a lone `October`.
fn month_date(words: &[&str], i: usize) -> Option<NamedDate> {
    let month = month_named(words[i])?;
    let at = |j: Option<usize>| j.and_then(|j| words.get(j)).copied();
    let before = at(i.checked_sub(1));
    let (after, after2) = (at(Some(i + 1)), at(Some(i + 2)));
    let day_before = before.and_then(day_number);
    let day_after = after.and_then(day_number);
    let year = if day_after.is_some() {
        after2.and_then(year_number)
    } else {
        after.and_then(year_number)
    };
    let day = day_after.or(day_before);
    if day.is_none() && year.is_none() && !stands_alone(words[i]) {
        return None;
    }
    Some(NamedDate { year, month, day })
}

/// A month name on its own is a date only capitalized, and not when it is
/// also an everyday word.
fn stands_alone(word: &str) -> bool {
    let capitalized = word.chars().next().is_some_and(char::is_uppercase);
    capitalized && !matches!(word.to_ascii_lowercase().as_str(), "may" | "march")
}

const MONTHS: [(&str, Month); 12] = [
    ("january", Month::January),
    ("february", Month::February),
    ("march", Month::March),
    ("april", Month::April),
    ("may", Month::May),
    ("june", Month::June),
    ("july", Month::July),
    ("august", Month::August),
    ("september", Month::September),
    ("october", Month::October),
    ("november", Month::November),
    ("december", Month::December),
];

/// The month a full English month name names.
fn month_named(word: &str) -> Option<Month> {
    let lower = word.to_ascii_lowercase();
    MONTHS.iter().find(|(n, _)| *n == lower).map(|&(_, m)| m)
}

/// `11`, `11th`, `1st`: a day of a month.
fn day_number(word: &str) -> Option<u8> {
    let lower = word.to_ascii_lowercase();
    let digits = ["st", "nd", "rd", "th"]
        .iter()
        .find_map(|s| lower.strip_suffix(s))
        .unwrap_or(&lower);
    let n: u8 = digits.parse().ok().filter(|_| digits.len() <= 2)?;
    (1..=31).contains(&n).then_some(n)
}

/// A four-digit year from 1900 to 2199.
fn year_number(word: &str) -> Option<i32> {
    let n: i32 = word.parse().ok().filter(|_| word.len() == 4)?;
    (1900..2200).contains(&n).then_some(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn date(year: Option<i32>, month: Month, day: Option<u8>) -> NamedDate {
        NamedDate { year, month, day }
    }

    #[test]
    fn reads_the_usual_ways_of_writing_a_date() {
        let cases = [
            (
                "what broke on 11 December, 2023?",
                date(Some(2023), Month::December, Some(11)),
            ),
            (
                "the release of December 11, 2023",
                date(Some(2023), Month::December, Some(11)),
            ),
            (
                "where did she go in July 2022",
                date(Some(2022), Month::July, None),
            ),
            (
                "changes since 2026-11-22 in auth",
                date(Some(2026), Month::November, Some(22)),
            ),
            (
                "what happened on August 11th",
                date(None, Month::August, Some(11)),
            ),
            ("the October outage", date(None, Month::October, None)),
            (
                "a mid-May 2024 decision",
                date(Some(2024), Month::May, None),
            ),
        ];
        for (query, want) in cases {
            assert_eq!(named_dates(query), vec![want], "{query}");
        }
    }

    #[test]
    fn ordinary_words_and_numbers_are_not_dates() {
        for query in [
            "we may need to march the cursor forward",
            "May the retry loop drop a message?",
            "port 2022 and edition 2021",
            "fix the 11 failing tests",
            "october", // lowercase, alone
        ] {
            assert!(named_dates(query).is_empty(), "{query}");
        }
    }

    #[test]
    fn a_record_says_its_date_only_to_a_query_that_names_one() {
        let ms = 1_657_800_000_000; // 2022-07-14 12:00 UTC
        let dated = Named::in_query("where did she travel in July 2022", || UtcOffset::UTC);
        assert_eq!(dated.words_of(ms), "July 2022 14");
        assert_eq!(dated.spans().len(), 1);
        let plain = Named::in_query("fix the 14 failing tests", || UtcOffset::UTC);
        assert_eq!(plain.words_of(ms), "");
    }

    #[test]
    fn a_named_day_contains_its_local_hours_only() {
        let d = date(Some(2023), Month::December, Some(11));
        let (start, end) = d.bounds(UtcOffset::UTC).unwrap();
        assert!(d.contains(start, UtcOffset::UTC));
        assert!(d.contains(end - 1, UtcOffset::UTC));
        assert!(!d.contains(end, UtcOffset::UTC));
        assert!(!d.contains(start - 1, UtcOffset::UTC));
        let month = date(Some(2023), Month::December, None);
        let (m_start, m_end) = month.bounds(UtcOffset::UTC).unwrap();
        assert_eq!((m_end - m_start) / 86_400_000, 31);
        assert!(date(None, Month::December, Some(11)).contains(start, UtcOffset::UTC));
        assert_eq!(
            date(None, Month::December, Some(11)).bounds(UtcOffset::UTC),
            None
        );
    }
}
