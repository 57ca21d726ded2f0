//! Per-instance request limits and counters: a token bucket per device
//! (refilled continuously, a minute's worth of requests at most) and the
//! counters `/metrics` reports in the Prometheus text format.

use std::collections::HashMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use super::State;

pub(crate) struct RateLimiter {
    per_minute: f64,
    buckets: Mutex<HashMap<i64, (f64, Instant)>>,
}

impl RateLimiter {
    pub(crate) fn new(per_minute: u32) -> RateLimiter {
        RateLimiter {
            per_minute: f64::from(per_minute.max(1)),
            buckets: Mutex::new(HashMap::new()),
        }
    }

    /// Takes one token from `device`'s bucket; false when it is empty.
    pub(crate) fn allow(&self, device: i64) -> bool {
        let now = Instant::now();
        let mut buckets = self.buckets.lock().unwrap_or_else(|e| e.into_inner());
        let (tokens, at) = buckets.entry(device).or_insert((self.per_minute, now));
        let refill = now.duration_since(*at).as_secs_f64() * self.per_minute / 60.0;
        *tokens = (*tokens + refill).min(self.per_minute);
        *at = now;
        if *tokens >= 1.0 {
            *tokens -= 1.0;
            true
        } else {
            false
        }
    }
}

#[derive(Default)]
pub(crate) struct Metrics {
    requests: AtomicU64,
    rate_limited: AtomicU64,
    pushed: AtomicU64,
    pulled: AtomicU64,
    refused: AtomicU64,
}

impl Metrics {
    pub(crate) fn request(&self) {
        self.requests.fetch_add(1, Ordering::Relaxed);
    }
    pub(crate) fn rate_limited(&self) {
        self.rate_limited.fetch_add(1, Ordering::Relaxed);
    }
    pub(crate) fn pushed(&self, n: usize) {
        self.pushed.fetch_add(n as u64, Ordering::Relaxed);
    }
    pub(crate) fn pulled(&self, n: usize) {
        self.pulled.fetch_add(n as u64, Ordering::Relaxed);
    }
    pub(crate) fn refused(&self) {
        self.refused.fetch_add(1, Ordering::Relaxed);
    }
}

/// `GET /metrics`: this instance's counters.
pub(crate) async fn metrics(axum::extract::State(state): State) -> String {
    let m = &state.metrics;
    let line = |name: &str, help: &str, v: &AtomicU64| {
        format!(
            "# HELP mnemo_sync_{name} {help}\n# TYPE mnemo_sync_{name} counter\nmnemo_sync_{name} {}\n",
            v.load(Ordering::Relaxed)
        )
    };
    [
        line("requests_total", "Authenticated requests.", &m.requests),
        line(
            "rate_limited_total",
            "Requests refused by the rate limit.",
            &m.rate_limited,
        ),
        line("records_pushed_total", "Records stored.", &m.pushed),
        line("records_pulled_total", "Records served.", &m.pulled),
        line(
            "pushes_refused_total",
            "Pushes refused (replay, gap, quota, epoch).",
            &m.refused,
        ),
    ]
    .concat()
}
