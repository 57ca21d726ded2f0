//! Accepting HTTP connections, with limits that unauthenticated sockets
//! cannot get around: at most `max_connections` open at once (more wait in
//! the kernel's listen queue, so the worker never runs out of file
//! descriptors), and a connection that does not send a complete request head
//! within `header_timeout`, new or idle between keep-alive requests, is
//! closed. Each connection is served by hyper's HTTP/1 server on its own
//! task; on shutdown, open connections finish their request and close.

use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use hyper::server::conn::http1;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use tokio::net::TcpListener;
use tokio::sync::{Semaphore, watch};
use tokio::task::JoinSet;
use tracing::warn;

/// How many connections, and how long a client may take to ask.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    pub max_connections: usize,
    pub header_timeout: Duration,
}

impl Limits {
    pub fn from_config(worker: &mnemo_core::config::WorkerConfig) -> Limits {
        Limits {
            max_connections: worker.max_connections.clamp(1, 4096) as usize,
            header_timeout: Duration::from_millis(worker.header_timeout_ms.max(100)),
        }
    }
}

/// Serves `router` on `listener` until `stopped` turns true, then waits for
/// the open connections to finish.
pub async fn serve(
    listener: TcpListener,
    router: Router,
    limits: Limits,
    mut stopped: watch::Receiver<bool>,
) {
    let slots = Arc::new(Semaphore::new(limits.max_connections));
    let mut connections = JoinSet::new();
    loop {
        let slot = tokio::select! {
            slot = slots.clone().acquire_owned() => slot.expect("the semaphore is never closed"),
            _ = wait_stop(&mut stopped) => break,
        };
        let socket = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((socket, _)) => socket,
                Err(e) => {
                    // EMFILE and friends: wait a little rather than spin.
                    warn!("HTTP accept: {e}");
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    continue;
                }
            },
            _ = wait_stop(&mut stopped) => break,
        };
        let _ = socket.set_nodelay(true);
        let router = router.clone();
        let stopped = stopped.clone();
        connections.spawn(async move {
            serve_one(socket, router, limits.header_timeout, stopped).await;
            drop(slot);
        });
        while connections.try_join_next().is_some() {}
    }
    while connections.join_next().await.is_some() {}
}

async fn serve_one(
    socket: tokio::net::TcpStream,
    router: Router,
    header_timeout: Duration,
    mut stopped: watch::Receiver<bool>,
) {
    let connection = http1::Builder::new()
        .timer(TokioTimer::new())
        .header_read_timeout(header_timeout)
        .serve_connection(TokioIo::new(socket), TowerToHyperService::new(router));
    tokio::pin!(connection);
    tokio::select! {
        _ = connection.as_mut() => {}
        _ = wait_stop(&mut stopped) => {
            connection.as_mut().graceful_shutdown();
            let _ = connection.await;
        }
    }
}

/// Resolves once the worker is stopping (or its sender is gone).
async fn wait_stop(stopped: &mut watch::Receiver<bool>) {
    let _ = stopped.wait_for(|stop| *stop).await;
}
