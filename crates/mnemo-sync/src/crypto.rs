//! The cryptography of sync, all from reviewed RustCrypto / dalek crates:
//! records sealed with XChaCha20-Poly1305 under a space key, the associated
//! data binding each blob to its place (space, device, sequence number,
//! record key), record keys derived with HMAC-SHA256 so the server never
//! sees a uid, and space keys wrapped for a member's X25519 public key
//! (an ephemeral X25519 agreement, HKDF-SHA256, then XChaCha20-Poly1305;
//! the same shape as HPKE's base mode).

use base64::Engine as _;
use chacha20poly1305::aead::{Aead, KeyInit, Payload};
use chacha20poly1305::{XChaCha20Poly1305, XNonce};
use hkdf::Hkdf;
use hmac::{Hmac, Mac};
use sha2::{Digest, Sha256};
use x25519_dalek::{PublicKey, StaticSecret};

const NONCE_LEN: usize = 24;
const KEY_LEN: usize = 32;
const WRAP_INFO: &[u8] = b"mnemo-sync space key wrap v1";

#[derive(Debug, thiserror::Error)]
pub enum CryptoError {
    #[error("the operating system gave no random bytes: {0}")]
    Random(String),
    #[error("a blob failed authentication (tampered, replayed into another place, or another key)")]
    Refused,
    #[error("malformed {0}")]
    Malformed(&'static str),
}

/// Fresh random bytes from the operating system.
pub fn random<const N: usize>() -> Result<[u8; N], CryptoError> {
    let mut out = [0u8; N];
    getrandom::fill(&mut out).map_err(|e| CryptoError::Random(e.to_string()))?;
    Ok(out)
}

/// URL-safe base64 without padding: keys, tokens and blobs on the wire.
pub fn b64(bytes: &[u8]) -> String {
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
}

pub fn unb64(text: &str) -> Result<Vec<u8>, CryptoError> {
    base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(text.trim())
        .map_err(|_| CryptoError::Malformed("base64"))
}

/// SHA-256 of a secret token: what the server stores instead of the token.
pub fn token_hash(token: &str) -> Vec<u8> {
    Sha256::digest(token.as_bytes()).to_vec()
}

/// A person's X25519 key pair: the secret lives only in the key file.
#[derive(Clone)]
pub struct Identity {
    secret: StaticSecret,
}

impl Identity {
    pub fn generate() -> Result<Identity, CryptoError> {
        Ok(Identity {
            secret: StaticSecret::from(random::<KEY_LEN>()?),
        })
    }

    pub fn from_secret(bytes: &[u8]) -> Result<Identity, CryptoError> {
        let bytes: [u8; KEY_LEN] = bytes
            .try_into()
            .map_err(|_| CryptoError::Malformed("secret key"))?;
        Ok(Identity {
            secret: StaticSecret::from(bytes),
        })
    }

    pub fn secret_bytes(&self) -> [u8; KEY_LEN] {
        self.secret.to_bytes()
    }

    /// The public key, base64: what a teammate invites.
    pub fn public(&self) -> String {
        b64(PublicKey::from(&self.secret).as_bytes())
    }

    /// Opens a space key wrapped for this identity by [`SpaceKey::wrap_for`].
    pub fn unwrap(&self, wrapped: &[u8]) -> Result<SpaceKey, CryptoError> {
        if wrapped.len() < KEY_LEN + NONCE_LEN {
            return Err(CryptoError::Malformed("wrapped key"));
        }
        let (ephemeral, rest) = wrapped.split_at(KEY_LEN);
        let ephemeral: [u8; KEY_LEN] = ephemeral.try_into().expect("split at 32");
        let shared = self.secret.diffie_hellman(&PublicKey::from(ephemeral));
        let kek = wrap_key(shared.as_bytes(), &ephemeral, &self.public());
        let bytes = open_with(&kek, rest, WRAP_INFO)?;
        SpaceKey::from_bytes(&bytes)
    }
}

/// The symmetric key of one space at one epoch.
#[derive(Clone, PartialEq, Eq)]
pub struct SpaceKey([u8; KEY_LEN]);

impl std::fmt::Debug for SpaceKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SpaceKey(..)")
    }
}

/// Where a blob belongs; all of it is authenticated with the blob.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Place<'a> {
    pub space: i64,
    pub device: i64,
    pub seq: i64,
    pub epoch: i64,
    pub record_key: &'a str,
}

impl Place<'_> {
    fn associated_data(&self) -> Vec<u8> {
        format!(
            "mnemo-sync v1\u{1f}{}\u{1f}{}\u{1f}{}\u{1f}{}\u{1f}{}",
            self.space, self.device, self.seq, self.epoch, self.record_key
        )
        .into_bytes()
    }
}

impl SpaceKey {
    pub fn generate() -> Result<SpaceKey, CryptoError> {
        Ok(SpaceKey(random()?))
    }

    pub fn from_bytes(bytes: &[u8]) -> Result<SpaceKey, CryptoError> {
        bytes
            .try_into()
            .map(SpaceKey)
            .map_err(|_| CryptoError::Malformed("space key"))
    }

    /// The opaque name of a record on the server: HMAC of its uid.
    pub fn record_key(&self, uid: &str) -> String {
        let mut mac = <Hmac<Sha256> as KeyInit>::new_from_slice(&self.0).expect("any key length");
        mac.update(b"mnemo-sync record key\x1f");
        mac.update(uid.as_bytes());
        b64(&mac.finalize().into_bytes())
    }

    /// Encrypts `plain` for `place`: nonce then ciphertext.
    pub fn seal(&self, place: &Place<'_>, plain: &[u8]) -> Result<Vec<u8>, CryptoError> {
        seal_with(&self.0, plain, &place.associated_data())
    }

    /// Decrypts a blob sealed for exactly `place`; anything else is refused.
    pub fn open(&self, place: &Place<'_>, blob: &[u8]) -> Result<Vec<u8>, CryptoError> {
        open_with(&self.0, blob, &place.associated_data())
    }

    /// This key wrapped for the holder of `public` (base64 X25519).
    pub fn wrap_for(&self, public: &str) -> Result<Vec<u8>, CryptoError> {
        let recipient: [u8; KEY_LEN] = unb64(public)?
            .try_into()
            .map_err(|_| CryptoError::Malformed("public key"))?;
        let ephemeral = StaticSecret::from(random::<KEY_LEN>()?);
        let ephemeral_public = PublicKey::from(&ephemeral);
        let shared = ephemeral.diffie_hellman(&PublicKey::from(recipient));
        let kek = wrap_key(shared.as_bytes(), ephemeral_public.as_bytes(), public);
        let mut out = ephemeral_public.as_bytes().to_vec();
        out.extend(seal_with(&kek, &self.0, WRAP_INFO)?);
        Ok(out)
    }
}

/// The key-encryption key of one wrap, bound to both public keys.
fn wrap_key(shared: &[u8; KEY_LEN], ephemeral: &[u8; KEY_LEN], recipient: &str) -> [u8; KEY_LEN] {
    let hk = Hkdf::<Sha256>::new(Some(ephemeral), shared);
    let mut okm = [0u8; KEY_LEN];
    let info = [WRAP_INFO, recipient.as_bytes()].concat();
    hk.expand(&info, &mut okm)
        .expect("32 bytes is a valid length");
    okm
}

fn seal_with(key: &[u8; KEY_LEN], plain: &[u8], aad: &[u8]) -> Result<Vec<u8>, CryptoError> {
    let cipher = XChaCha20Poly1305::new_from_slice(key).expect("32-byte key");
    let nonce_bytes = random::<NONCE_LEN>()?;
    let nonce = XNonce::from(nonce_bytes);
    let sealed = cipher
        .encrypt(&nonce, Payload { msg: plain, aad })
        .map_err(|_| CryptoError::Malformed("plaintext"))?;
    let mut out = nonce_bytes.to_vec();
    out.extend(sealed);
    Ok(out)
}

fn open_with(key: &[u8; KEY_LEN], blob: &[u8], aad: &[u8]) -> Result<Vec<u8>, CryptoError> {
    if blob.len() < NONCE_LEN {
        return Err(CryptoError::Refused);
    }
    let (nonce, sealed) = blob.split_at(NONCE_LEN);
    let nonce: [u8; NONCE_LEN] = nonce.try_into().expect("split at 24");
    let cipher = XChaCha20Poly1305::new_from_slice(key).expect("32-byte key");
    cipher
        .decrypt(&XNonce::from(nonce), Payload { msg: sealed, aad })
        .map_err(|_| CryptoError::Refused)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn place(seq: i64) -> Place<'static> {
        Place {
            space: 1,
            device: 2,
            seq,
            epoch: 1,
            record_key: "k",
        }
    }

    #[test]
    fn a_blob_opens_only_in_its_own_place() {
        let key = SpaceKey::generate().unwrap();
        let blob = key.seal(&place(7), b"hello").unwrap();
        assert_eq!(key.open(&place(7), &blob).unwrap(), b"hello");
        assert!(matches!(
            key.open(&place(8), &blob),
            Err(CryptoError::Refused)
        ));
        let mut tampered = blob.clone();
        *tampered.last_mut().unwrap() ^= 1;
        assert!(matches!(
            key.open(&place(7), &tampered),
            Err(CryptoError::Refused)
        ));
        let other = SpaceKey::generate().unwrap();
        assert!(other.open(&place(7), &blob).is_err());
    }

    #[test]
    fn a_wrapped_key_opens_only_for_its_recipient() {
        let alice = Identity::generate().unwrap();
        let bob = Identity::generate().unwrap();
        let key = SpaceKey::generate().unwrap();
        let wrapped = key.wrap_for(&bob.public()).unwrap();
        assert_eq!(bob.unwrap(&wrapped).unwrap(), key);
        assert!(alice.unwrap(&wrapped).is_err());
        let again = Identity::from_secret(&bob.secret_bytes()).unwrap();
        assert_eq!(again.public(), bob.public());
    }

    #[test]
    fn record_keys_are_stable_per_space_key_and_hide_the_uid() {
        // A uid as the store makes them: long enough that a random base64
        // digest cannot contain it by chance (two letters would, one run in 100).
        let uid = "obs-3f9c2a71-8d4e-4b0a-9e61-5c7d2b8a0f13";
        let other = "obs-3f9c2a71-8d4e-4b0a-9e61-5c7d2b8a0f14";
        let key = SpaceKey::generate().unwrap();
        assert_eq!(key.record_key(uid), key.record_key(uid));
        assert_ne!(key.record_key(uid), key.record_key(other));
        let record_key = key.record_key(uid);
        assert!(!record_key.contains(uid) && !record_key.contains("3f9c2a71"));
        assert_ne!(record_key, SpaceKey::generate().unwrap().record_key(uid));
    }
}
