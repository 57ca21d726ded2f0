//! Timestamps: the store keeps epoch milliseconds; people and exports see RFC 3339.

use std::time::{SystemTime, UNIX_EPOCH};

use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;

/// Milliseconds since the Unix epoch, now.
pub fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

/// `2026-11-23T10:48:53.194Z` for epoch milliseconds (UTC).
pub fn format_rfc3339(ms: i64) -> String {
    let nanos = i128::from(ms) * 1_000_000;
    OffsetDateTime::from_unix_timestamp_nanos(nanos)
        .ok()
        .and_then(|t| t.format(&Rfc3339).ok())
        .unwrap_or_else(|| ms.to_string())
}

/// Parses RFC 3339 (any offset) into epoch milliseconds.
pub fn parse_rfc3339(text: &str) -> Option<i64> {
    let t = OffsetDateTime::parse(text.trim(), &Rfc3339).ok()?;
    Some((t.unix_timestamp_nanos() / 1_000_000) as i64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_milliseconds() {
        let ms = 1_795_000_000_123;
        let text = format_rfc3339(ms);
        assert!(text.ends_with('Z'), "{text}");
        assert_eq!(parse_rfc3339(&text), Some(ms));
    }

    #[test]
    fn parses_offsets_and_rejects_garbage() {
        assert_eq!(
            parse_rfc3339("2026-11-22T12:00:00+02:00"),
            parse_rfc3339("2026-11-22T10:00:00Z")
        );
        assert_eq!(parse_rfc3339("yesterday"), None);
    }
}
