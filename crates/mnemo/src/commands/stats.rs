//! `mnemo stats`: LLM spend per day and per project, the budgets, the
//! queue, the store's size by kind and by project, and the retention of raw
//! tool payloads, read from the database (no running worker needed).

use anyhow::Result;
use mnemo_core::time::{format_rfc3339, now_ms};
use mnemo_core::words::{count_s, size};
use mnemo_core::{Config, DataDir};
use mnemo_store::Store;
use mnemo_store::curate::StoreSize;
use mnemo_store::ledger::{SpendReport, day_start_utc};
use mnemo_store::queue::QueueCounts;
use mnemo_worker::info;
use serde_json::json;

use crate::cli::StatsArgs;
use crate::output::{data_and_config, open_store_read_only};

/// What `mnemo stats` reports, read once from the store.
struct Stats {
    days: u32,
    since: i64,
    spend: SpendReport,
    queue: QueueCounts,
    size: StoreSize,
    exhausted: Option<info::ExhaustedInfo>,
}

pub fn run(args: StatsArgs) -> Result<i32> {
    let (data, config) = data_and_config()?;
    let store = open_store_read_only(&data, &config)?;
    let now = now_ms();
    let days = args.days.clamp(1, 3660);
    let since = day_start_utc(now) - i64::from(days - 1) * 86_400_000;
    let stats = Stats {
        days,
        since,
        spend: store.spend_report(since, now)?,
        queue: store.queue_counts(now)?,
        size: store.size()?,
        exhausted: exhausted_budget(&data, &config, &store, now),
    };
    if args.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&json_report(&config, &stats))?
        );
        return Ok(0);
    }
    print_spend_section(&config, &stats);
    print_budget(&config, &stats);
    print_queue(&stats.queue);
    print_size(&stats.size, config.store.raw_payload_days);
    Ok(0)
}

/// The budget that is spent, if any: the worker's own view (it may be a
/// session budget) wins over ours; offline spends none.
fn exhausted_budget(
    data: &DataDir,
    config: &Config,
    store: &Store,
    now: i64,
) -> Option<info::ExhaustedInfo> {
    let worker_budget = info::read(data)
        .filter(|_| mnemo_worker::lock::is_held(&data.worker_lock_path()).unwrap_or(false))
        .and_then(|i| i.budget_exhausted);
    match worker_budget {
        Some(b) => Some(b),
        None => (config.provider.name != "offline")
            .then(|| {
                store
                    .budget_exhausted(&config.budget, None, now)
                    .ok()
                    .flatten()
            })
            .flatten()
            .map(|e| info::ExhaustedInfo::from(&e)),
    }
}

/// The report for `--json`.
fn json_report(config: &Config, stats: &Stats) -> serde_json::Value {
    json!({
        "days": stats.days,
        "since": format_rfc3339(stats.since),
        "provider": config.provider.name,
        "budget": {
            "daily_tokens": config.budget.daily_tokens,
            "session_tokens": config.budget.session_tokens,
            "today_tokens": stats.spend.today_tokens,
            "exhausted": stats.exhausted,
        },
        "spend": stats.spend,
        "queue": stats.queue,
        "store": stats.size,
        "retention": { "raw_payload_days": config.store.raw_payload_days },
    })
}

/// LLM spend per day, then per project.
fn print_spend_section(config: &Config, stats: &Stats) {
    let days = stats.days;
    println!(
        "LLM spend, last {days} day{} (UTC), provider `{}`:",
        if days == 1 { "" } else { "s" },
        config.provider.name
    );
    if stats.spend.by_day.is_empty() {
        println!("  no LLM calls");
    } else {
        print_spend("day", &stats.spend.by_day);
        println!();
        println!("Per project:");
        print_spend("project", &stats.spend.by_project);
    }
}

/// Today's tokens beside the budgets, and the budget spent, if any.
fn print_budget(config: &Config, stats: &Stats) {
    let limit = |n: u64| {
        if n == 0 {
            "no limit".to_owned()
        } else {
            format!("{} tokens", thousands(n))
        }
    };
    println!();
    println!(
        "Today: {} tokens; daily budget {}, per session {}",
        thousands(stats.spend.today_tokens),
        limit(config.budget.daily_tokens),
        limit(config.budget.session_tokens)
    );
    if let Some(e) = &stats.exhausted {
        println!("Budget: {}", e.message);
    }
}

/// The queue's counts, and where to look when some failed.
fn print_queue(queue: &QueueCounts) {
    println!(
        "Queue: {} pending ({} backing off), {} leased, {} done, {} failed{}",
        queue.pending,
        queue.backing_off,
        queue.leased,
        queue.done,
        queue.failed,
        if queue.failed > 0 {
            " (see `mnemo doctor`; `mnemo worker retry --all`)"
        } else {
            ""
        }
    );
}

/// The store's size by kind and by project, and the retention.
fn print_size(stored: &StoreSize, retention_days: u64) {
    let mut kinds: Vec<(&String, &u64)> = stored.by_kind.iter().filter(|(_, b)| **b > 0).collect();
    kinds.sort_by(|a, b| b.1.cmp(a.1));
    let kinds: Vec<String> = kinds
        .iter()
        .map(|(k, b)| format!("{k} {}", size(**b)))
        .collect();
    println!("Store: {} ({})", size(stored.bytes), kinds.join(", "));
    for p in stored.by_project.iter().take(10) {
        println!(
            "  {} ({}): {} of text, of which raw tool payloads {} ({}, {})",
            p.name,
            p.project,
            size(p.bytes),
            size(p.raw_bytes),
            count_s(p.observations, "observation"),
            count_s(p.events, "event")
        );
    }
    if stored.by_project.len() > 10 {
        println!(
            "  ... and {} more (`mnemo projects` lists them all)",
            count_s(stored.by_project.len(), "project")
        );
    }
    if retention_days == 0 {
        println!("Retention: raw tool payloads kept forever (store.raw_payload_days = 0)");
    } else {
        println!(
            "Retention: raw tool payloads kept {retention_days} days after compression, then \
             dropped by the worker (store.raw_payload_days)"
        );
    }
}

fn print_spend(key: &str, rows: &[mnemo_store::ledger::Spend]) {
    let width = rows
        .iter()
        .map(|r| r.key.len())
        .chain([key.len()])
        .max()
        .unwrap_or(10);
    let pw = rows
        .iter()
        .map(|r| r.provider.len() + r.model.len() + 1)
        .chain([14])
        .max()
        .unwrap_or(14);
    println!(
        "  {key:<width$}  {:<pw$}  {:>6}  {:>12}  {:>12}",
        "provider/model", "calls", "input tok", "output tok"
    );
    for r in rows {
        let calls = if r.failed_calls > 0 {
            format!("{} ({} failed)", r.calls, r.failed_calls)
        } else {
            r.calls.to_string()
        };
        println!(
            "  {:<width$}  {:<pw$}  {:>6}  {:>12}  {:>12}",
            r.key,
            format!("{}/{}", r.provider, r.model),
            calls,
            thousands(r.input_tokens),
            thousands(r.output_tokens)
        );
    }
}

fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}
