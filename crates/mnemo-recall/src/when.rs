//! Time as recall shows and reads it.
//!
//! The store keeps epoch milliseconds. People see local dates and times
//! (the offset is read once, when a [`Clock`] is made: the `time` crate can
//! only read it safely while the process has a single thread, so the MCP
//! server makes its clock before starting its runtime, and the worker calls
//! [`remember_local_offset`] before starting its own) and ages (`3h`,
//! `2d`), which is what an agent needs to weigh a memory. Filters accept
//! RFC 3339, a calendar day (`2026-11-22`, local), a relative span (`30m`,
//! `12h`, `7d`, `2w`, `3mo`, `1y`: that long ago) and `today`/`yesterday`.

use std::sync::OnceLock;

use time::{Date, OffsetDateTime, Time, UtcOffset, macros::format_description};

use crate::{RecallError, Result};

const MINUTE: i64 = 60_000;
const HOUR: i64 = 60 * MINUTE;
const DAY: i64 = 24 * HOUR;

/// The local offset as read while the process was single-threaded.
static LOCAL_OFFSET: OnceLock<UtcOffset> = OnceLock::new();

/// Reads the local UTC offset now, for every later [`Clock::system`] of this
/// process. Call it before starting threads: afterwards it cannot be read.
pub fn remember_local_offset() {
    if let Ok(offset) = UtcOffset::current_local_offset() {
        let _ = LOCAL_OFFSET.set(offset);
    }
}

/// "Now" and the local UTC offset, fixed for one request so that every line
/// of an answer agrees.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Clock {
    pub now_ms: i64,
    pub offset: UtcOffset,
}

impl Clock {
    /// The system time and the local offset: the one remembered by
    /// [`remember_local_offset`], else read now (UTC when it cannot be
    /// read, e.g. once the process has several threads).
    pub fn system() -> Clock {
        let offset = LOCAL_OFFSET
            .get()
            .copied()
            .or_else(|| UtcOffset::current_local_offset().ok())
            .unwrap_or(UtcOffset::UTC);
        Clock {
            now_ms: mnemo_core::time::now_ms(),
            offset,
        }
    }

    /// A fixed clock in UTC (tests, reproducible output).
    pub fn utc(now_ms: i64) -> Clock {
        Clock {
            now_ms,
            offset: UtcOffset::UTC,
        }
    }

    /// The same offset, at the current system time.
    pub fn refreshed(self) -> Clock {
        Clock {
            now_ms: mnemo_core::time::now_ms(),
            ..self
        }
    }

    fn local(&self, ms: i64) -> OffsetDateTime {
        OffsetDateTime::from_unix_timestamp_nanos(i128::from(ms) * 1_000_000)
            .unwrap_or(OffsetDateTime::UNIX_EPOCH)
            .to_offset(self.offset)
    }

    /// `2026-11-22` (local).
    pub fn day(&self, ms: i64) -> String {
        self.local(ms)
            .format(format_description!("[year]-[month]-[day]"))
            .unwrap_or_default()
    }

    /// `14:05` (local).
    pub fn time_of_day(&self, ms: i64) -> String {
        self.local(ms)
            .format(format_description!("[hour]:[minute]"))
            .unwrap_or_default()
    }

    /// `2026-11-22 14:05 +01:00`.
    pub fn datetime(&self, ms: i64) -> String {
        self.local(ms)
            .format(format_description!(
                "[year]-[month]-[day] [hour]:[minute] [offset_hour sign:mandatory]:[offset_minute]"
            ))
            .unwrap_or_default()
    }

    /// How long ago `ms` was, compactly: `now`, `5m`, `3h`, `2d`, `3w`, `4mo`, `2y`.
    pub fn age(&self, ms: i64) -> String {
        age(self.now_ms - ms)
    }

    /// How long ago `ms` was, in words: `just now`, `5 min ago`, `2 h ago`,
    /// `1 day ago`, `3 days ago`, `3 weeks ago`, `4 months ago`, `2 years ago`.
    pub fn ago(&self, ms: i64) -> String {
        ago(self.now_ms - ms)
    }

    /// Parses a lower bound (`--since`): the first millisecond included.
    pub fn parse_since(&self, text: &str) -> Result<i64> {
        self.parse_bound(text, false)
    }

    /// Parses an upper bound (`--until`): the first millisecond excluded.
    /// A day includes the whole day.
    pub fn parse_until(&self, text: &str) -> Result<i64> {
        self.parse_bound(text, true)
    }

    fn parse_bound(&self, text: &str, upper: bool) -> Result<i64> {
        let t = text.trim();
        if let Some(ms) = mnemo_core::time::parse_rfc3339(t) {
            return Ok(if upper { ms + 1 } else { ms });
        }
        let day = match t.to_ascii_lowercase().as_str() {
            "today" => Some(self.local(self.now_ms).date()),
            "yesterday" => self.local(self.now_ms).date().previous_day(),
            _ => Date::parse(t, format_description!("[year]-[month]-[day]")).ok(),
        };
        if let Some(day) = day {
            let day = if upper {
                day.next_day().unwrap_or(day)
            } else {
                day
            };
            let start = day.with_time(Time::MIDNIGHT).assume_offset(self.offset);
            return Ok((start.unix_timestamp_nanos() / 1_000_000) as i64);
        }
        if let Some(span) = parse_span(t) {
            return Ok(self.now_ms - span);
        }
        Err(RecallError::Input(format!(
            "`{text}` is not a date: use 2026-11-22, 2026-11-22T14:05:00Z, today, yesterday, \
             or a span ago such as 30m, 12h, 7d, 2w, 3mo, 1y"
        )))
    }
}

/// A duration in milliseconds, compactly (see [`Clock::age`]).
pub fn age(elapsed_ms: i64) -> String {
    let e = elapsed_ms.max(0);
    if e < MINUTE {
        "now".to_owned()
    } else if e < HOUR {
        format!("{}m", e / MINUTE)
    } else if e < DAY {
        format!("{}h", e / HOUR)
    } else if e < 14 * DAY {
        format!("{}d", e / DAY)
    } else if e < 60 * DAY {
        format!("{}w", e / (7 * DAY))
    } else if e < 365 * DAY {
        format!("{}mo", e / (30 * DAY))
    } else {
        format!("{}y", e / (365 * DAY))
    }
}

/// A duration in milliseconds, as words for a sentence (see [`Clock::ago`]).
pub fn ago(elapsed_ms: i64) -> String {
    let e = elapsed_ms.max(0);
    let (n, one, many) = if e < MINUTE {
        return "just now".to_owned();
    } else if e < HOUR {
        (e / MINUTE, "min", "min")
    } else if e < DAY {
        (e / HOUR, "h", "h")
    } else if e < 14 * DAY {
        (e / DAY, "day", "days")
    } else if e < 60 * DAY {
        (e / (7 * DAY), "week", "weeks")
    } else if e < 365 * DAY {
        (e / (30 * DAY), "month", "months")
    } else {
        (e / (365 * DAY), "year", "years")
    };
    format!("{n} {} ago", if n == 1 { one } else { many })
}

/// `30m`, `12h`, `7d`, `2w`, `3mo`, `1y` (also `7 days`, `2weeks`) in milliseconds.
fn parse_span(text: &str) -> Option<i64> {
    let t = text.trim().to_ascii_lowercase();
    let split = t.find(|c: char| !c.is_ascii_digit())?;
    let (n, unit) = t.split_at(split);
    let n: i64 = n.parse().ok()?;
    let unit_ms = match unit.trim() {
        "m" | "min" | "mins" | "minute" | "minutes" => MINUTE,
        "h" | "hr" | "hrs" | "hour" | "hours" => HOUR,
        "d" | "day" | "days" => DAY,
        "w" | "wk" | "week" | "weeks" => 7 * DAY,
        "mo" | "month" | "months" => 30 * DAY,
        "y" | "yr" | "year" | "years" => 365 * DAY,
        _ => return None,
    };
    n.checked_mul(unit_ms)
}

#[cfg(test)]
mod tests {
    use super::*;

    const NOON: i64 = 1_795_003_200_000; // 2026-11-18T12:00:00Z

    #[test]
    fn ages_are_compact() {
        let c = Clock::utc(NOON);
        assert_eq!(c.ago(NOON), "just now");
        assert_eq!(c.ago(NOON + 5000), "just now");
        assert_eq!(c.ago(NOON - 5 * MINUTE), "5 min ago");
        assert_eq!(c.ago(NOON - 2 * HOUR), "2 h ago");
        assert_eq!(c.ago(NOON - DAY), "1 day ago");
        assert_eq!(c.ago(NOON - 3 * DAY), "3 days ago");
        assert_eq!(c.ago(NOON - 21 * DAY), "3 weeks ago");
        assert_eq!(c.ago(NOON - 14 * DAY), "2 weeks ago");
        assert_eq!(c.ago(NOON - 7 * DAY), "7 days ago");
        assert_eq!(c.ago(NOON - 90 * DAY), "3 months ago");
        assert_eq!(c.ago(NOON - 800 * DAY), "2 years ago");
        assert_eq!(c.age(NOON), "now");
        assert_eq!(c.age(NOON + 5000), "now", "clock skew is not negative");
        assert_eq!(c.age(NOON - 5 * MINUTE), "5m");
        assert_eq!(c.age(NOON - 3 * HOUR), "3h");
        assert_eq!(c.age(NOON - 2 * DAY), "2d");
        assert_eq!(c.age(NOON - 21 * DAY), "3w");
        assert_eq!(c.age(NOON - 90 * DAY), "3mo");
        assert_eq!(c.age(NOON - 800 * DAY), "2y");
    }

    #[test]
    fn bounds_parse_every_documented_form() {
        let c = Clock::utc(NOON);
        assert_eq!(c.day(NOON), "2026-11-18");
        assert_eq!(c.time_of_day(NOON), "12:00");
        let day_start = NOON - 12 * HOUR;
        assert_eq!(c.parse_since("2026-11-18").unwrap(), day_start);
        assert_eq!(c.parse_until("2026-11-18").unwrap(), day_start + DAY);
        assert_eq!(c.parse_since("today").unwrap(), day_start);
        assert_eq!(c.parse_since("yesterday").unwrap(), day_start - DAY);
        assert_eq!(c.parse_since("7d").unwrap(), NOON - 7 * DAY);
        assert_eq!(c.parse_since("12 hours").unwrap(), NOON - 12 * HOUR);
        assert_eq!(c.parse_since("2026-11-18T12:00:00Z").unwrap(), NOON);
        assert_eq!(c.parse_until("2026-11-18T12:00:00Z").unwrap(), NOON + 1);
        for bad in [
            "",
            "soon",
            "7x",
            "2026-13-01",
            "d7",
            "99999999999999999999d",
        ] {
            let err = c.parse_since(bad).unwrap_err().to_string();
            assert!(err.contains("not a date"), "{bad}: {err}");
        }
    }

    #[test]
    fn local_offset_moves_days() {
        let c = Clock {
            now_ms: NOON,
            offset: UtcOffset::from_hms(13, 0, 0).unwrap(),
        };
        assert_eq!(c.day(NOON), "2026-11-19");
        assert_eq!(c.datetime(NOON), "2026-11-19 01:00 +13:00");
    }
}
