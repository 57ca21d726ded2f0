//! Who this machine syncs as, and the commands that change it: register
//! (first machine), join (another machine of the same person), share a
//! project, invite a teammate, accept an invitation, remove a member
//! (rotating the space key), leave.
//!
//! The key file holds the person's X25519 secret key and account token
//! (mode 0600, never sent anywhere); the store holds the server, this
//! device's token and the space keys wrapped for the person's public key.

use std::path::{Path, PathBuf};

use mnemo_store::Store;
use serde::{Deserialize, Serialize};

use crate::client::Client;
use crate::crypto::{Identity, SpaceKey, b64, unb64};
use crate::local::{self, key};
use crate::wire::*;

/// The key file's content.
#[derive(Serialize, Deserialize)]
pub struct KeyFile {
    pub server: String,
    pub user_id: i64,
    pub public_key: String,
    pub secret_key: String,
    pub account_token: String,
    pub name: String,
}

impl KeyFile {
    pub fn read(path: &Path) -> anyhow::Result<KeyFile> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| anyhow::anyhow!("cannot read the key file {}: {e}", path.display()))?;
        serde_json::from_str(&text)
            .map_err(|e| anyhow::anyhow!("{} is not a mnemo key file: {e}", path.display()))
    }

    /// Writes the file readable by its owner only; an existing file is
    /// never overwritten.
    pub fn write_new(&self, path: &Path) -> anyhow::Result<()> {
        use std::io::Write as _;
        let mut options = std::fs::OpenOptions::new();
        options.write(true).create_new(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
        let mut file = options
            .open(path)
            .map_err(|e| anyhow::anyhow!("cannot create the key file {}: {e}", path.display()))?;
        file.write_all(serde_json::to_string_pretty(self)?.as_bytes())?;
        file.sync_all()?;
        Ok(())
    }

    pub fn identity(&self) -> anyhow::Result<Identity> {
        Ok(Identity::from_secret(&unb64(&self.secret_key)?)?)
    }
}

/// This machine's account, as the engine needs it.
pub struct Account {
    pub server: String,
    pub token: String,
    pub device: i64,
    pub user: i64,
    pub identity: Identity,
    /// How this person's records are signed: name and key prefix.
    pub author: String,
}

impl Account {
    /// The account of a machine set up for sync; None when it is not.
    pub fn load(conn: &rusqlite::Connection) -> anyhow::Result<Option<Account>> {
        let (Some(server), Some(token), Some(path)) = (
            local::get(conn, key::SERVER)?,
            local::get(conn, key::DEVICE_TOKEN)?,
            local::get(conn, key::KEY_FILE)?,
        ) else {
            return Ok(None);
        };
        let file = KeyFile::read(Path::new(&path))?;
        let number = |k: &str| -> anyhow::Result<i64> {
            Ok(local::get(conn, k)?
                .and_then(|v| v.parse().ok())
                .unwrap_or(0))
        };
        Ok(Some(Account {
            server,
            token,
            device: number(key::DEVICE_ID)?,
            user: number(key::USER_ID)?,
            identity: file.identity()?,
            author: author_of(&file.name, &file.public_key),
        }))
    }

    pub fn client(&self) -> Client {
        Client::new(&self.server, Some(self.token.clone()))
    }
}

fn author_of(name: &str, public_key: &str) -> String {
    format!("{name} ({})", &public_key[..public_key.len().min(8)])
}

/// Stores this machine's settings (server, `(user, device, token)`, key
/// file), takes the personal space, and queues every record stored so far.
async fn adopt(
    store: &Store,
    server: &str,
    key_file: &Path,
    (user, device, token): (i64, i64, &str),
    identity: &Identity,
) -> anyhow::Result<()> {
    let conn = store.conn();
    let tx = conn.unchecked_transaction()?;
    local::reset(&tx)?;
    local::set(&tx, key::SERVER, server)?;
    local::set(&tx, key::DEVICE_TOKEN, token)?;
    local::set(&tx, key::DEVICE_ID, &device.to_string())?;
    local::set(&tx, key::USER_ID, &user.to_string())?;
    let path = std::path::absolute(key_file).unwrap_or_else(|_| key_file.to_owned());
    local::set(&tx, key::KEY_FILE, &path.to_string_lossy())?;
    tx.commit()?;
    let personal = |s: &SpaceInfo| s.kind == "personal";
    take_spaces(store, identity, token, server, personal, None).await?;
    Ok(())
}

/// `mnemo sync register`: creates the person, this device and the
/// personal space; writes the key file.
pub async fn register(
    store: &Store,
    server: &str,
    key_file: &Path,
    name: &str,
) -> anyhow::Result<KeyFile> {
    if key_file.exists() {
        anyhow::bail!(
            "{} exists already: use `mnemo sync join` with it, or choose another path",
            key_file.display()
        );
    }
    let identity = Identity::generate()?;
    let personal = SpaceKey::generate()?;
    let client = Client::new(server, None);
    let req = Register {
        public_key: identity.public(),
        personal_key: b64(&personal.wrap_for(&identity.public())?),
    };
    let done = client.register(&req).await?;
    let file = KeyFile {
        server: server.to_owned(),
        user_id: done.user_id,
        public_key: identity.public(),
        secret_key: b64(&identity.secret_bytes()),
        account_token: done.account_token.clone(),
        name: name.to_owned(),
    };
    file.write_new(key_file)?;
    let device = (done.user_id, done.device_id, done.device_token.as_str());
    adopt(store, server, key_file, device, &identity).await?;
    Ok(file)
}

/// `mnemo sync join`: another machine of the person of `key_file`.
pub async fn join(store: &Store, server: &str, key_file: &Path) -> anyhow::Result<KeyFile> {
    let file = KeyFile::read(key_file)?;
    let client = Client::new(server, None);
    let done = client
        .join(&Join {
            account_token: file.account_token.clone(),
        })
        .await?;
    let device = (done.user_id, done.device_id, done.device_token.as_str());
    adopt(store, server, key_file, device, &file.identity()?).await?;
    Ok(file)
}

/// The sealed label of a shared space: the project it is about.
#[derive(Serialize, Deserialize)]
struct Label {
    root: String,
    name: String,
}

/// Adds the server's spaces that `wanted` picks (with their keys) to this
/// machine, mapping shared spaces to `project` when given, and queues
/// everything stored for a first push. The spaces added.
async fn take_spaces(
    store: &Store,
    identity: &Identity,
    token: &str,
    server: &str,
    wanted: impl Fn(&SpaceInfo) -> bool,
    project: Option<&str>,
) -> anyhow::Result<Vec<(SpaceInfo, Option<String>)>> {
    let remote = Client::new(server, Some(token.to_owned())).spaces().await?;
    let conn = store.conn();
    let tx = conn.unchecked_transaction()?;
    let mut taken = Vec::new();
    for space in remote.spaces.into_iter().filter(|s| wanted(s)) {
        let name = adopt_space(&tx, identity, &space, project)?;
        taken.push((space, name));
    }
    local::enqueue_everything(&tx)?;
    tx.commit()?;
    Ok(taken)
}

/// A label is sealed before its space has an id: its place is space 0.
fn label_place() -> crate::crypto::Place<'static> {
    crate::crypto::Place {
        space: 0,
        device: 0,
        seq: 0,
        epoch: 1,
        record_key: "label",
    }
}

/// Adds one space with its keys to this machine, its records going to
/// `project` (default: the project its label names); the project's name.
pub(crate) fn adopt_space(
    conn: &rusqlite::Connection,
    identity: &Identity,
    space: &SpaceInfo,
    project: Option<&str>,
) -> anyhow::Result<Option<String>> {
    let label = match (&space.label, space.keys.first()) {
        (Some(label), Some(first)) => Some(open_label(identity, label, first)?),
        _ => None,
    };
    let root = project
        .map(str::to_owned)
        .or_else(|| label.as_ref().map(|l| l.root.clone()));
    local::put_space(
        conn,
        space.space_id,
        &space.kind,
        root.as_deref(),
        space.epoch,
    )?;
    for k in &space.keys {
        local::put_key(conn, space.space_id, k.epoch, &unb64(&k.wrapped)?)?;
    }
    Ok(label.map(|l| l.name))
}

fn open_label(identity: &Identity, label: &str, first: &WrappedKey) -> anyhow::Result<Label> {
    let key = identity.unwrap(&unb64(&first.wrapped)?)?;
    let plain = key.open(&label_place(), &unb64(label)?)?;
    Ok(serde_json::from_slice(&plain)?)
}

/// `mnemo share --project DIR`: a shared space for the project (or the
/// existing one); its id.
pub async fn share(store: &Store, project_root: &str, project_name: &str) -> anyhow::Result<i64> {
    let account = Account::load(store.conn())?.ok_or_else(not_set_up)?;
    if let Some(space) = local::spaces(store.conn())?
        .into_iter()
        .find(|s| s.project_root.as_deref() == Some(project_root))
    {
        return Ok(space.space_id);
    }
    let key = SpaceKey::generate()?;
    let client = account.client();
    let label = serde_json::to_vec(&Label {
        root: project_root.to_owned(),
        name: project_name.to_owned(),
    })?;
    let created = client
        .create_space(&NewSpace {
            wrapped_key: b64(&key.wrap_for(&account.identity.public())?),
            label: Some(b64(&key.seal(&label_place(), &label)?)),
        })
        .await?;
    let id = created.space_id;
    take_spaces(
        store,
        &account.identity,
        &account.token,
        &account.server,
        |s| s.space_id == id,
        Some(project_root),
    )
    .await?;
    Ok(id)
}

pub fn not_set_up() -> anyhow::Error {
    anyhow::anyhow!(
        "this machine is not set up for sync: run `mnemo sync register` or `mnemo sync join`"
    )
}

/// The shared space of a project on this machine.
pub fn project_space(store: &Store, project_root: &str) -> anyhow::Result<i64> {
    local::spaces(store.conn())?
        .into_iter()
        .find(|s| s.project_root.as_deref() == Some(project_root))
        .map(|s| s.space_id)
        .ok_or_else(|| {
            anyhow::anyhow!("{project_root} is not shared: run `mnemo share --project DIR` first")
        })
}

/// `mnemo sync invite`: gives the holder of `public_key` every key of the
/// project's space.
pub async fn invite(store: &Store, space: i64, public_key: &str) -> anyhow::Result<()> {
    let account = Account::load(store.conn())?.ok_or_else(not_set_up)?;
    let mut keys = Vec::new();
    for (s, epoch, wrapped) in local::keys(store.conn())? {
        if s == space {
            let key = account.identity.unwrap(&wrapped)?;
            keys.push(WrappedKey {
                epoch,
                wrapped: b64(&key.wrap_for(public_key)?),
            });
        }
    }
    let invite = Invite {
        public_key: public_key.trim().to_owned(),
        keys,
    };
    account.client().invite(space, &invite).await?;
    Ok(())
}

/// `mnemo sync accept`: takes the shared spaces others invited this person
/// to (all, or `space`), mapped to `project` (default: the project the
/// owner named). The spaces taken with their project names.
pub async fn accept(
    store: &Store,
    space: Option<i64>,
    project: Option<&str>,
) -> anyhow::Result<Vec<(i64, Option<String>)>> {
    let account = Account::load(store.conn())?.ok_or_else(not_set_up)?;
    let have: Vec<i64> = local::spaces(store.conn())?
        .iter()
        .map(|s| s.space_id)
        .collect();
    let wanted = |s: &SpaceInfo| {
        s.kind == "shared" && !have.contains(&s.space_id) && space.is_none_or(|id| id == s.space_id)
    };
    let taken = take_spaces(
        store,
        &account.identity,
        &account.token,
        &account.server,
        wanted,
        project,
    )
    .await?;
    Ok(taken
        .into_iter()
        .map(|(s, name)| (s.space_id, name))
        .collect())
}

/// `mnemo sync remove`: removes a member from a shared space this person
/// owns, and moves the space to a new key that only the others receive.
pub async fn remove(store: &Store, space: i64, public_key: &str) -> anyhow::Result<()> {
    let account = Account::load(store.conn())?.ok_or_else(not_set_up)?;
    let client = account.client();
    let members = client.members(space).await?.members;
    let epoch = local::spaces(store.conn())?
        .into_iter()
        .find(|s| s.space_id == space)
        .map_or(1, |s| s.epoch)
        + 1;
    let key = SpaceKey::generate()?;
    let keys = members
        .iter()
        .filter(|m| m.public_key != public_key.trim())
        .map(|m| {
            Ok(MemberKey {
                public_key: m.public_key.clone(),
                wrapped: b64(&key.wrap_for(&m.public_key)?),
            })
        })
        .collect::<anyhow::Result<Vec<_>>>()?;
    let rotate = Rotate {
        remove: vec![public_key.trim().to_owned()],
        epoch,
        keys,
    };
    client.rotate(space, &rotate).await?;
    let conn = store.conn();
    local::put_key(
        conn,
        space,
        epoch,
        &key.wrap_for(&account.identity.public())?,
    )?;
    local::put_space(conn, space, "shared", None, epoch)?;
    Ok(())
}

/// `mnemo sync leave`: leaves one shared space, or (without `space`) stops
/// syncing this machine: its device token is revoked and the local sync
/// state dropped; the memory stays.
pub async fn leave(store: &Store, space: Option<i64>) -> anyhow::Result<()> {
    let account = Account::load(store.conn())?.ok_or_else(not_set_up)?;
    let client = account.client();
    match space {
        Some(space) => {
            client.leave(space).await?;
            local::drop_space(store.conn(), space)?;
        }
        None => {
            client.revoke().await?;
            local::reset(store.conn())?;
        }
    }
    Ok(())
}

/// Where the key file of this machine is.
pub fn key_file(store: &Store) -> anyhow::Result<Option<PathBuf>> {
    Ok(local::get(store.conn(), key::KEY_FILE)?.map(PathBuf::from))
}
