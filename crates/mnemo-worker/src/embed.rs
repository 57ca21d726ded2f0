//! Vectors for search by meaning, computed in the background (see
//! `mnemo-embed`), on a thread of its own so that a slow endpoint never
//! holds up the queue, compression or the API: batches of records without
//! a vector of the configured model, newest first, until none is left
//! (which backfills an existing store, and re-embeds everything when the
//! model changes); then a look every few seconds for new or edited
//! records. Stored vectors are packed for search as they come (see
//! `mnemo_store::vector_packs`). When the endpoint fails, the wait doubles up to
//! [`MAX_BACKOFF`] and the error is kept for `doctor`. Nothing runs when
//! embeddings are not configured; hooks never come here.

use std::time::{Duration, Instant};

use mnemo_core::config::EmbeddingsConfig;
use mnemo_core::time::now_ms;
use mnemo_embed::Embedder;
use mnemo_store::Store;
use mnemo_store::vector_packs;
use mnemo_store::vectors::Cursor;
use tracing::{debug, info, warn};

use crate::api::AppState;

/// How often the store is looked at when every record has its vector.
const POLL: Duration = Duration::from_secs(3);
/// The first wait after a failed call; it doubles up to [`MAX_BACKOFF`].
const FIRST_BACKOFF: Duration = Duration::from_secs(2);
const MAX_BACKOFF: Duration = Duration::from_secs(300);

/// Starts the embedding thread when embeddings are configured and usable
/// (a broken configuration is logged; `doctor` says what to fix).
pub fn spawn(app: AppState) -> Option<std::thread::JoinHandle<()>> {
    let config = app.config.embeddings.clone();
    let timeout = Duration::from_millis(config.batch_timeout_ms.max(100));
    let embedder = match Embedder::from_config(&config, timeout) {
        Ok(Some(e)) => e,
        Ok(None) => return None,
        Err(e) => {
            warn!("embeddings: not started: {e}");
            return None;
        }
    };
    std::thread::Builder::new()
        .name("embed".into())
        .spawn(move || run(app, config, embedder))
        .inspect_err(|e| warn!("embeddings: cannot start the thread: {e}"))
        .ok()
}

fn run(app: AppState, config: EmbeddingsConfig, embedder: Embedder) {
    let busy = Duration::from_millis(app.config.store.busy_timeout_ms);
    let Ok(runtime) = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    else {
        return;
    };
    let mut store = match Store::open(&app.data.db_path(), busy) {
        Ok(s) => s,
        Err(e) => {
            warn!("embeddings: cannot open the database: {e}");
            return;
        }
    };
    info!(
        "embeddings: {} with model {}",
        embedder.url(),
        embedder.model()
    );
    let batch = config.batch_size.clamp(1, 512) as usize;
    let mut backoff = FIRST_BACKOFF;
    let mut cursor = Cursor::START;
    while !*app.shutdown.borrow() {
        match embed_batch(&runtime, &app, &mut store, &embedder, cursor, batch) {
            // The end of a pass: look again from the newest, after a pause
            // when the pass found nothing at all.
            Ok(None) => {
                if cursor == Cursor::START {
                    sleep_unless_stopped(&app, POLL);
                }
                cursor = Cursor::START;
            }
            Ok(Some(next)) => {
                cursor = next;
                backoff = FIRST_BACKOFF;
            }
            Err(e) => {
                warn!("embeddings: {e}; next try in {} s", backoff.as_secs());
                let _ = store.set_vector_status(embedder.model(), Err(&e), now_ms());
                sleep_unless_stopped(&app, backoff);
                backoff = (backoff * 2).min(MAX_BACKOFF);
            }
        }
    }
}

/// Embeds one batch from `cursor`; where the pass stands after it (None:
/// nothing left in this pass, or stopping).
fn embed_batch(
    runtime: &tokio::runtime::Runtime,
    app: &AppState,
    store: &mut Store,
    embedder: &Embedder,
    cursor: Cursor,
    batch: usize,
) -> Result<Option<Cursor>, String> {
    let model = embedder.model();
    let (todo, next) = store
        .records_to_embed(model, cursor, batch)
        .map_err(|e| format!("cannot read records: {e}"))?;
    if todo.is_empty() {
        pack(app, store, model, vector_packs::PACK_MIN);
        return Ok(None);
    }
    let inputs: Vec<String> = todo.iter().map(|t| t.text.clone()).collect();
    // A call in flight does not hold up the worker's stop.
    let mut stopped = app.shutdown.subscribe();
    let vectors = runtime.block_on(async {
        tokio::select! {
            answer = embedder.embed(&inputs) => answer,
            _ = stopped.wait_for(|stop| *stop) => Ok(Vec::new()),
        }
    })?;
    if vectors.is_empty() {
        return Ok(None);
    }
    check_dimension(store, model, &vectors)?;
    store
        .put_vectors(model, &todo, &vectors, now_ms())
        .map_err(|e| format!("cannot store vectors: {e}"))?;
    let _ = store.set_vector_status(model, Ok(()), now_ms());
    pack(app, store, model, vector_packs::PACK_SIZE);
    Ok(Some(next))
}

/// Packs the vectors that wait for it (see `mnemo_store::vector_packs`):
/// those of a backfill as it goes, the survivors of a dropped pack. On
/// failure search reads the rows meanwhile; the next batch tries again.
fn pack(app: &AppState, store: &mut Store, model: &str, tail_min: usize) {
    match store.pack_vectors(model, tail_min, || *app.shutdown.borrow()) {
        Ok(0) => {}
        Ok(n) => debug!("embeddings: {n} packs of vectors written"),
        Err(e) => warn!("embeddings: cannot pack vectors: {e}"),
    }
}

/// A model answers with one dimension; vectors of another length than the
/// ones already stored for it are refused rather than mixed.
fn check_dimension(store: &Store, model: &str, vectors: &[Vec<f32>]) -> Result<(), String> {
    let Some(dim) = vectors.first().map(Vec::len) else {
        return Ok(());
    };
    let stored = mnemo_store::vectors::dimension_of(store.conn(), model)
        .map_err(|e| format!("cannot read stored vectors: {e}"))?;
    match stored {
        Some(d) if d != dim => Err(format!(
            "the endpoint answered vectors of {dim} numbers, but {model}'s stored vectors have {d}"
        )),
        _ => Ok(()),
    }
}

fn sleep_unless_stopped(app: &AppState, total: Duration) {
    let step = Duration::from_millis(100);
    let start = Instant::now();
    while start.elapsed() < total && !*app.shutdown.borrow() {
        std::thread::sleep(step);
    }
}
