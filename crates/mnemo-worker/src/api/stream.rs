//! `GET /api/stream`: server-sent events of what the worker stores.
//!
//! Each stored observation is an `observation` event and each summary a
//! `summary` event, with the same JSON as the list routes. A subscriber that
//! falls too far behind gets a `lagged` event with how many it missed (and
//! can catch up through `/api/observations?before=`). Comments keep idle
//! connections alive through proxies. The stream ends when the worker shuts
//! down, so a graceful stop is not held up by open viewers; while one is
//! open, the worker does not exit for idleness.

use std::convert::Infallible;
use std::sync::atomic::Ordering;
use std::time::Duration;

use axum::extract::State;
use axum::response::sse::{Event, KeepAlive, Sse};
use tokio::sync::broadcast::error::RecvError;
use tokio::sync::mpsc;
use tokio_stream::Stream;
use tokio_stream::wrappers::ReceiverStream;

use super::AppState;

const KEEP_ALIVE: Duration = Duration::from_secs(15);

/// Counts an open stream for as long as it lives.
struct ClientGuard(AppState);

impl ClientGuard {
    fn new(app: AppState) -> ClientGuard {
        app.sse_clients.fetch_add(1, Ordering::SeqCst);
        ClientGuard(app)
    }
}

impl Drop for ClientGuard {
    fn drop(&mut self) {
        self.0.sse_clients.fetch_sub(1, Ordering::SeqCst);
        self.0.touch();
    }
}

pub async fn stream(
    State(app): State<AppState>,
) -> Sse<impl Stream<Item = Result<Event, Infallible>>> {
    let mut events = app.stream.subscribe();
    let mut shutdown = app.shutdown.subscribe();
    let (tx, rx) = mpsc::channel::<Result<Event, Infallible>>(64);
    let guard = ClientGuard::new(app.clone());
    // One small task per subscriber forwards what is broadcast until the
    // client goes away or the worker stops.
    tokio::spawn(async move {
        let _guard = guard;
        let _ = tx
            .send(Ok(Event::default().event("ready").data("{}")))
            .await;
        loop {
            let event = tokio::select! {
                received = events.recv() => match received {
                    Ok(e) => Event::default().event(e.kind).data(e.data.to_string()),
                    Err(RecvError::Lagged(missed)) => Event::default()
                        .event("lagged")
                        .data(format!("{{\"missed\":{missed}}}")),
                    Err(RecvError::Closed) => break,
                },
                _ = shutdown.wait_for(|stop| *stop) => break,
                _ = tx.closed() => break,
            };
            if tx.send(Ok(event)).await.is_err() {
                break;
            }
        }
    });
    Sse::new(ReceiverStream::new(rx)).keep_alive(KeepAlive::new().interval(KEEP_ALIVE))
}
