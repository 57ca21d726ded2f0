//! A hybrid logical clock: wall-clock milliseconds, a counter for events in
//! the same millisecond (or behind a clock that ran ahead elsewhere), and
//! the device id to break ties. Versions of one record are ordered by it,
//! last writer wins, and every machine picks the same winner.

use std::fmt;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default)]
pub struct Hlc {
    pub ms: i64,
    pub counter: u32,
    pub device: i64,
}

impl Hlc {
    /// The next timestamp of a local change, after `self` (the clock's
    /// last value) and not before `now_ms`.
    pub fn tick(self, now_ms: i64, device: i64) -> Hlc {
        if now_ms > self.ms {
            Hlc {
                ms: now_ms,
                counter: 0,
                device,
            }
        } else {
            Hlc {
                ms: self.ms,
                counter: self.counter + 1,
                device,
            }
        }
    }

    /// The clock after seeing `remote`: never behind anything observed.
    pub fn observe(self, remote: Hlc) -> Hlc {
        if remote > self {
            Hlc {
                device: self.device,
                ..remote
            }
        } else {
            self
        }
    }

    /// Parses what [`fmt::Display`] writes.
    pub fn parse(text: &str) -> Option<Hlc> {
        let mut parts = text.split('-');
        let hlc = Hlc {
            ms: parts.next()?.parse().ok()?,
            counter: parts.next()?.parse().ok()?,
            device: parts.next()?.parse().ok()?,
        };
        parts.next().is_none().then_some(hlc)
    }
}

/// Fixed-width, so that text order is clock order.
impl fmt::Display for Hlc {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{:015}-{:010}-{:012}",
            self.ms, self.counter, self.device
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_move_forward_even_when_the_wall_clock_does_not() {
        let a = Hlc::default().tick(100, 1);
        let b = a.tick(100, 1);
        let c = b.tick(50, 1);
        assert!(a < b && b < c);
        assert_eq!(c.ms, 100);
    }

    #[test]
    fn observing_a_clock_ahead_keeps_later_ticks_after_it() {
        let remote = Hlc::default().tick(1_000, 2);
        let local = Hlc::default().tick(10, 1).observe(remote);
        assert!(local.tick(10, 1) > remote);
    }

    #[test]
    fn text_order_is_clock_order_and_parses_back() {
        let a = Hlc {
            ms: 9,
            counter: 10,
            device: 3,
        };
        let b = Hlc {
            ms: 10,
            counter: 0,
            device: 1,
        };
        assert!(a.to_string() < b.to_string());
        assert_eq!(Hlc::parse(&a.to_string()), Some(a));
        assert_eq!(Hlc::parse("x"), None);
    }
}
