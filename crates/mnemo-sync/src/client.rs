//! The HTTP side of the client: one method per route of [`crate::wire`],
//! errors carrying the server's message and status, and the extra
//! certificate authorities it trusts (`[sync] ca_file`, for a server whose
//! certificate no public authority signed).

use std::path::Path;
use std::sync::Mutex;
use std::time::Duration;

use reqwest::Method;
use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::wire::*;

#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    #[error("cannot reach the sync server at {url}: {source}")]
    Unreachable {
        url: String,
        #[source]
        source: reqwest::Error,
    },
    #[error("the sync server answered {status}: {message}")]
    Refused { status: u16, message: String },
}

impl ClientError {
    pub fn status(&self) -> Option<u16> {
        match self {
            ClientError::Refused { status, .. } => Some(*status),
            ClientError::Unreachable { .. } => None,
        }
    }
}

pub type ClientResult<T> = Result<T, ClientError>;

/// Certificate authorities trusted besides the system's (see [`trust_ca_file`]).
static EXTRA_ROOTS: Mutex<Vec<reqwest::Certificate>> = Mutex::new(Vec::new());

/// Trusts the certificates of the PEM file at `path` (one or more
/// `CERTIFICATE` blocks) as authorities for the sync server, besides the
/// system's, for every client made from now on in this process. An empty
/// path trusts only the system's.
pub fn trust_ca_file(path: &Path) -> anyhow::Result<()> {
    let roots = if path.as_os_str().is_empty() {
        Vec::new()
    } else {
        read_ca_file(path)?
    };
    *EXTRA_ROOTS.lock().unwrap_or_else(|e| e.into_inner()) = roots;
    Ok(())
}

fn read_ca_file(path: &Path) -> anyhow::Result<Vec<reqwest::Certificate>> {
    let pem = std::fs::read(path).map_err(|e| {
        anyhow::anyhow!(
            "cannot read the sync CA file {} ([sync] ca_file): {e}",
            path.display()
        )
    })?;
    let roots = reqwest::Certificate::from_pem_bundle(&pem)
        .ok()
        .filter(|roots| !roots.is_empty())
        .ok_or_else(|| {
            anyhow::anyhow!(
                "the sync CA file {} ([sync] ca_file) holds no PEM certificate",
                path.display()
            )
        })?;
    Ok(roots)
}

pub struct Client {
    http: reqwest::Client,
    base: String,
    token: Option<String>,
}

impl Client {
    pub fn new(server: &str, token: Option<String>) -> Client {
        // TLS (an https:// server) runs on ring; installing twice is harmless.
        let _ = rustls::crypto::ring::default_provider().install_default();
        let roots = EXTRA_ROOTS.lock().map(|r| r.clone()).unwrap_or_default();
        let http = reqwest::Client::builder()
            .timeout(Duration::from_secs(60))
            .connect_timeout(Duration::from_secs(10))
            .tls_certs_merge(roots)
            .build()
            .unwrap_or_default();
        Client {
            http,
            base: server.trim_end_matches('/').to_owned(),
            token,
        }
    }

    async fn call<T: DeserializeOwned>(
        &self,
        method: Method,
        path: &str,
        body: Option<&(impl Serialize + ?Sized)>,
    ) -> ClientResult<T> {
        let url = format!("{}{path}", self.base);
        let mut req = self.http.request(method, &url);
        if let Some(token) = &self.token {
            req = req.bearer_auth(token);
        }
        if let Some(body) = body {
            req = req.json(body);
        }
        let unreachable = |source| ClientError::Unreachable {
            url: self.base.clone(),
            source,
        };
        let resp = req.send().await.map_err(unreachable)?;
        let status = resp.status();
        if !status.is_success() {
            let message = match resp.json::<ErrorBody>().await {
                Ok(body) => body.error,
                Err(_) => status.canonical_reason().unwrap_or("error").to_owned(),
            };
            return Err(ClientError::Refused {
                status: status.as_u16(),
                message,
            });
        }
        if status == reqwest::StatusCode::NO_CONTENT {
            return serde_json::from_value(serde_json::Value::Null).map_err(|e| {
                ClientError::Refused {
                    status: status.as_u16(),
                    message: e.to_string(),
                }
            });
        }
        resp.json().await.map_err(unreachable)
    }

    pub async fn register(&self, req: &Register) -> ClientResult<Registered> {
        self.call(Method::POST, "/v1/register", Some(req)).await
    }

    pub async fn join(&self, req: &Join) -> ClientResult<Joined> {
        self.call(Method::POST, "/v1/join", Some(req)).await
    }

    pub async fn revoke(&self) -> ClientResult<()> {
        self.call(Method::DELETE, "/v1/device", None::<&()>).await
    }

    pub async fn spaces(&self) -> ClientResult<Spaces> {
        self.call(Method::GET, "/v1/spaces", None::<&()>).await
    }

    pub async fn create_space(&self, req: &NewSpace) -> ClientResult<SpaceCreated> {
        self.call(Method::POST, "/v1/spaces", Some(req)).await
    }

    pub async fn members(&self, space: i64) -> ClientResult<Members> {
        let path = format!("/v1/spaces/{space}/members");
        self.call(Method::GET, &path, None::<&()>).await
    }

    pub async fn invite(&self, space: i64, req: &Invite) -> ClientResult<()> {
        let path = format!("/v1/spaces/{space}/members");
        self.call(Method::POST, &path, Some(req)).await
    }

    pub async fn leave(&self, space: i64) -> ClientResult<()> {
        let path = format!("/v1/spaces/{space}/members/self");
        self.call(Method::DELETE, &path, None::<&()>).await
    }

    pub async fn rotate(&self, space: i64, req: &Rotate) -> ClientResult<()> {
        let path = format!("/v1/spaces/{space}/rotate");
        self.call(Method::POST, &path, Some(req)).await
    }

    pub async fn push(&self, space: i64, req: &Push) -> ClientResult<Pushed> {
        let path = format!("/v1/spaces/{space}/records");
        self.call(Method::POST, &path, Some(req)).await
    }

    pub async fn pull(&self, space: i64, after: i64, limit: usize) -> ClientResult<Pulled> {
        let path = format!("/v1/spaces/{space}/records?after={after}&limit={limit}");
        self.call(Method::GET, &path, None::<&()>).await
    }
}
