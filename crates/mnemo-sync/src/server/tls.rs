//! HTTPS for `mnemo server` when it is given a certificate and its key (PEM
//! files; `--tls-cert`, `--tls-key`): rustls on ring. Each handshake runs in
//! its own task with a deadline, so a client that stalls in its handshake
//! holds up nobody else; a connection whose handshake fails is dropped,
//! never served in clear.

use std::io;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, PrivateKeyDer};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::mpsc;
use tokio_rustls::TlsAcceptor;
use tokio_rustls::server::TlsStream;

/// The longest a client may take to finish its handshake.
const HANDSHAKE_DEADLINE: Duration = Duration::from_secs(10);
/// Connections handshaken and waiting to be served.
const READY: usize = 64;

/// The certificate (chain) and private key files.
#[derive(Debug, Clone)]
pub struct TlsFiles {
    pub cert: PathBuf,
    pub key: PathBuf,
}

/// Reads the certificate chain and key and checks that they go together.
pub fn acceptor(files: &TlsFiles) -> anyhow::Result<TlsAcceptor> {
    let certs = read_certs(&files.cert)?;
    let key = read_key(&files.key)?;
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()?
        .with_no_client_auth()
        .with_single_cert(certs, key)
        .map_err(|e| {
            anyhow::anyhow!(
                "the TLS key {} does not go with the certificate {}: {e}",
                files.key.display(),
                files.cert.display()
            )
        })?;
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(TlsAcceptor::from(Arc::new(config)))
}

fn read_pem(path: &Path, what: &str) -> anyhow::Result<Vec<u8>> {
    std::fs::read(path)
        .map_err(|e| anyhow::anyhow!("cannot read the TLS {what} {}: {e}", path.display()))
}

fn read_certs(path: &Path) -> anyhow::Result<Vec<CertificateDer<'static>>> {
    let pem = read_pem(path, "certificate")?;
    let certs = CertificateDer::pem_slice_iter(&pem)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| anyhow::anyhow!("the TLS certificate {}: {e}", path.display()))?;
    if certs.is_empty() {
        anyhow::bail!(
            "the TLS certificate {} holds no PEM certificate (-----BEGIN CERTIFICATE-----)",
            path.display()
        );
    }
    Ok(certs)
}

fn read_key(path: &Path) -> anyhow::Result<PrivateKeyDer<'static>> {
    let pem = read_pem(path, "key")?;
    PrivateKeyDer::from_pem_slice(&pem).map_err(|e| {
        anyhow::anyhow!(
            "the TLS key {} holds no usable PEM private key: {e}",
            path.display()
        )
    })
}

/// Connections on `tcp` after their TLS handshake, for `axum::serve`.
pub struct TlsListener {
    ready: mpsc::Receiver<(TlsStream<TcpStream>, SocketAddr)>,
    local: SocketAddr,
}

impl TlsListener {
    /// Accepts on `tcp` in a task of its own (it ends with the listener).
    pub fn new(tcp: TcpListener, acceptor: TlsAcceptor) -> io::Result<TlsListener> {
        let local = tcp.local_addr()?;
        let (tx, ready) = mpsc::channel(READY);
        tokio::spawn(accept_all(tcp, acceptor, tx));
        Ok(TlsListener { ready, local })
    }
}

async fn accept_all(
    tcp: TcpListener,
    acceptor: TlsAcceptor,
    ready: mpsc::Sender<(TlsStream<TcpStream>, SocketAddr)>,
) {
    while !ready.is_closed() {
        let (stream, peer) = match tcp.accept().await {
            Ok(conn) => conn,
            Err(e) => {
                // Out of file descriptors and the like: wait, then go on.
                tracing::warn!("accepting a connection: {e}");
                tokio::time::sleep(Duration::from_millis(100)).await;
                continue;
            }
        };
        let _ = stream.set_nodelay(true);
        let (acceptor, ready) = (acceptor.clone(), ready.clone());
        tokio::spawn(async move {
            match tokio::time::timeout(HANDSHAKE_DEADLINE, acceptor.accept(stream)).await {
                Ok(Ok(tls)) => {
                    let _ = ready.send((tls, peer)).await;
                }
                Ok(Err(e)) => tracing::debug!("TLS handshake with {peer} failed: {e}"),
                Err(_) => tracing::debug!("TLS handshake with {peer} took too long"),
            }
        });
    }
}

impl axum::serve::Listener for TlsListener {
    type Io = TlsStream<TcpStream>;
    type Addr = SocketAddr;

    async fn accept(&mut self) -> (Self::Io, Self::Addr) {
        match self.ready.recv().await {
            Some(conn) => conn,
            // The accepting task is gone: nothing will ever come.
            None => std::future::pending().await,
        }
    }

    fn local_addr(&self) -> io::Result<Self::Addr> {
        Ok(self.local)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pair(dir: &Path, name: &str) -> TlsFiles {
        let made = rcgen::generate_simple_self_signed(vec!["localhost".to_owned()]).unwrap();
        let files = TlsFiles {
            cert: dir.join(format!("{name}.pem")),
            key: dir.join(format!("{name}.key")),
        };
        std::fs::write(&files.cert, made.cert.pem()).unwrap();
        std::fs::write(&files.key, made.signing_key.serialize_pem()).unwrap();
        files
    }

    fn refused(files: &TlsFiles) -> String {
        match acceptor(files) {
            Ok(_) => panic!("{files:?} accepted"),
            Err(e) => format!("{e:#}"),
        }
    }

    #[test]
    fn a_certificate_and_its_key_are_accepted() {
        let dir = tempfile::tempdir().unwrap();
        acceptor(&pair(dir.path(), "a")).unwrap();
    }

    #[test]
    fn missing_unreadable_or_mismatched_files_are_named() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b) = (pair(dir.path(), "a"), pair(dir.path(), "b"));
        let missing = TlsFiles {
            cert: dir.path().join("none.pem"),
            key: a.key.clone(),
        };
        let e = refused(&missing);
        assert!(
            e.contains("cannot read the TLS certificate") && e.contains("none.pem"),
            "{e}"
        );
        let swapped = TlsFiles {
            cert: a.key.clone(),
            key: a.cert.clone(),
        };
        let e = refused(&swapped);
        assert!(
            e.contains("holds no PEM certificate") && e.contains("a.key"),
            "{e}"
        );
        let no_key = TlsFiles {
            cert: a.cert.clone(),
            key: b.cert.clone(),
        };
        let e = refused(&no_key);
        assert!(
            e.contains("holds no usable PEM private key") && e.contains("b.pem"),
            "{e}"
        );
        let mismatched = TlsFiles {
            cert: a.cert.clone(),
            key: b.key.clone(),
        };
        let e = refused(&mismatched);
        assert!(e.contains("does not go with the certificate"), "{e}");
    }
}
