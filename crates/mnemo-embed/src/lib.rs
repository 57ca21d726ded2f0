//! Search by meaning (optional, off unless `[embeddings]` names a base URL
//! and a model): the OpenAI-compatible `/embeddings` client ([`client`]) and
//! the query's vector for a search ([`query_meaning`]), which the CLI, the
//! MCP server and the worker's HTTP API hand to
//! [`mnemo_recall::hybrid::search`]. The worker embeds stored records in
//! the background with the same client. Hooks never come here.

pub mod client;

use std::time::Duration;

use mnemo_core::config::EmbeddingsConfig;
use mnemo_recall::hybrid::{Meaning, QueryVector};

pub use client::Embedder;

/// The query's vector, or why there is none; [`Meaning::Off`] when
/// embeddings are not configured or the query is empty. One call, bounded
/// by `query_timeout_ms`. Safe to call from inside an async runtime: the
/// call runs on a thread of its own.
pub fn query_meaning(config: &EmbeddingsConfig, query: &str) -> Meaning {
    if !config.requested() || query.trim().is_empty() {
        return Meaning::Off;
    }
    let timeout = Duration::from_millis(config.query_timeout_ms.max(50));
    let embedder = match Embedder::from_config(config, timeout) {
        Ok(Some(e)) => e,
        Ok(None) => return Meaning::Off,
        Err(e) => return Meaning::Skipped(e),
    };
    let text = query.to_owned();
    let call = std::thread::Builder::new()
        .name("embed-query".into())
        .spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .map_err(|e| format!("cannot start the HTTP runtime: {e}"))?;
            let mut vectors = runtime.block_on(embedder.embed(&[text]))?;
            Ok::<_, String>((embedder.model().to_owned(), vectors.remove(0)))
        });
    let answer = match call {
        Ok(handle) => handle
            .join()
            .unwrap_or_else(|_| Err("the embedding call failed".into())),
        Err(e) => Err(format!("cannot start the embedding call: {e}")),
    };
    match answer {
        Ok((model, vector)) => Meaning::Query(QueryVector { model, vector }),
        Err(e) => Meaning::Skipped(e),
    }
}
