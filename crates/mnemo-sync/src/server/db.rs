//! The server's PostgreSQL side: a small pool of connections that reconnect
//! after the database restarts, and the server's own forward-only
//! migrations (serialised across instances by an advisory lock).
//!
//! The tables hold opaque blobs and the least metadata sync needs: who may
//! read a space (users, devices, members, wrapped keys), and per record its
//! space, device, sequence number, key epoch, keyed name, size and time.

use tokio::sync::Mutex;
use tokio_postgres::{Client, NoTls};

const MIGRATIONS: &[&str] = &[V1_SPACES_AND_RECORDS];

const V1_SPACES_AND_RECORDS: &str = r#"
CREATE TABLE users (
    id                  BIGSERIAL PRIMARY KEY,
    public_key          TEXT NOT NULL UNIQUE,
    account_token_hash  BYTEA NOT NULL UNIQUE,
    created_at          TIMESTAMPTZ NOT NULL DEFAULT now()
);
CREATE TABLE devices (
    id          BIGSERIAL PRIMARY KEY,
    user_id     BIGINT NOT NULL REFERENCES users(id),
    token_hash  BYTEA NOT NULL UNIQUE,
    created_at  TIMESTAMPTZ NOT NULL DEFAULT now(),
    revoked_at  TIMESTAMPTZ
);
CREATE TABLE spaces (
    id          BIGSERIAL PRIMARY KEY,
    kind        TEXT NOT NULL CHECK (kind IN ('personal', 'shared')),
    owner_id    BIGINT NOT NULL REFERENCES users(id),
    epoch       BIGINT NOT NULL DEFAULT 1,
    label       TEXT,
    used_bytes  BIGINT NOT NULL DEFAULT 0,
    created_at  TIMESTAMPTZ NOT NULL DEFAULT now()
);
CREATE TABLE members (
    space_id  BIGINT NOT NULL REFERENCES spaces(id),
    user_id   BIGINT NOT NULL REFERENCES users(id),
    PRIMARY KEY (space_id, user_id)
);
CREATE TABLE space_keys (
    space_id  BIGINT NOT NULL REFERENCES spaces(id),
    user_id   BIGINT NOT NULL REFERENCES users(id),
    epoch     BIGINT NOT NULL,
    wrapped   TEXT NOT NULL,
    PRIMARY KEY (space_id, user_id, epoch)
);
CREATE TABLE heads (
    space_id   BIGINT NOT NULL REFERENCES spaces(id),
    device_id  BIGINT NOT NULL REFERENCES devices(id),
    seq        BIGINT NOT NULL,
    PRIMARY KEY (space_id, device_id)
);
CREATE TABLE records (
    id          BIGSERIAL PRIMARY KEY,
    space_id    BIGINT NOT NULL REFERENCES spaces(id),
    device_id   BIGINT NOT NULL REFERENCES devices(id),
    seq         BIGINT NOT NULL,
    epoch       BIGINT NOT NULL,
    record_key  TEXT NOT NULL,
    blob        BYTEA NOT NULL,
    size        INTEGER NOT NULL,
    created_at  TIMESTAMPTZ NOT NULL DEFAULT now(),
    UNIQUE (space_id, device_id, seq)
);
CREATE INDEX records_by_space ON records (space_id, id);
CREATE INDEX records_by_key ON records (space_id, record_key);
"#;

/// A fixed number of connections, each opened on first use and again
/// after it broke.
pub struct Pool {
    url: String,
    slots: Vec<Mutex<Option<Client>>>,
    next: std::sync::atomic::AtomicUsize,
}

pub type Conn<'a> = tokio::sync::MappedMutexGuard<'a, Client>;

impl Pool {
    pub fn new(url: &str, size: usize) -> Pool {
        Pool {
            url: url.to_owned(),
            slots: (0..size.max(1)).map(|_| Mutex::new(None)).collect(),
            next: Default::default(),
        }
    }

    /// A live connection (round robin over the slots).
    pub async fn get(&self) -> Result<Conn<'_>, tokio_postgres::Error> {
        let i = self.next.fetch_add(1, std::sync::atomic::Ordering::Relaxed) % self.slots.len();
        let mut slot = self.slots[i].lock().await;
        if slot.as_ref().is_none_or(Client::is_closed) {
            *slot = Some(connect(&self.url).await?);
        }
        Ok(tokio::sync::MutexGuard::map(slot, |s| {
            s.as_mut().expect("connected above")
        }))
    }
}

async fn connect(url: &str) -> Result<Client, tokio_postgres::Error> {
    let (client, connection) = tokio_postgres::connect(url, NoTls).await?;
    tokio::spawn(async move {
        if let Err(e) = connection.await {
            tracing::warn!("database connection ended: {e}");
        }
    });
    Ok(client)
}

/// Applies the migrations this database has not seen, one transaction
/// each, under an advisory lock so that instances starting together do not
/// race.
pub async fn migrate(pool: &Pool) -> Result<(), tokio_postgres::Error> {
    let mut conn = pool.get().await?;
    conn.batch_execute(
        "SELECT pg_advisory_lock(7305218);
         CREATE TABLE IF NOT EXISTS mnemo_sync_migrations (
             version     INTEGER PRIMARY KEY,
             applied_at  TIMESTAMPTZ NOT NULL DEFAULT now()
         );",
    )
    .await?;
    let outcome = apply_missing(&mut conn).await;
    conn.batch_execute("SELECT pg_advisory_unlock(7305218)")
        .await?;
    outcome
}

async fn apply_missing(conn: &mut Client) -> Result<(), tokio_postgres::Error> {
    let row = conn
        .query_one(
            "SELECT coalesce(max(version), 0) FROM mnemo_sync_migrations",
            &[],
        )
        .await?;
    let applied: i32 = row.get(0);
    for (i, sql) in MIGRATIONS.iter().enumerate().skip(applied as usize) {
        let tx = conn.transaction().await?;
        tx.batch_execute(sql).await?;
        tx.execute(
            "INSERT INTO mnemo_sync_migrations (version) VALUES ($1)",
            &[&(i as i32 + 1)],
        )
        .await?;
        tx.commit().await?;
    }
    Ok(())
}
