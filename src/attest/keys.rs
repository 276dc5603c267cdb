//! Ed25519 keys: generation, PKCS#8/SPKI PEM files and fingerprints.
//!
//! A key's fingerprint is the SHA-256 (hex) of its SubjectPublicKeyInfo DER,
//! which is also the DSSE `keyid`. Private key material never appears in an
//! error message: errors name the file, never its content.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

use ed25519_dalek::pkcs8::spki::der::pem::LineEnding;
use ed25519_dalek::pkcs8::{DecodePrivateKey, DecodePublicKey, EncodePrivateKey, EncodePublicKey};
use ed25519_dalek::{Signer, SigningKey, VerifyingKey};
use sha2::{Digest, Sha256};
use zeroize::Zeroizing;

/// DER prefix of an Ed25519 SubjectPublicKeyInfo; the 32 key bytes follow.
pub const ED25519_SPKI_PREFIX: [u8; 12] = [
    0x30, 0x2a, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x03, 0x21, 0x00,
];

/// Problems with key files and key material.
#[derive(Debug, thiserror::Error)]
pub enum KeyError {
    #[error("the system random number generator failed: {0}")]
    Random(String),
    #[error("cannot read key file {path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("cannot write key file {path}: {source}")]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path} already exists; mcpres never overwrites a key file")]
    Exists { path: PathBuf },
    #[error("{path} is not an Ed25519 private key in PKCS#8 PEM form (\"BEGIN PRIVATE KEY\")")]
    NotPrivateKey { path: PathBuf },
    #[error("{path} is not an Ed25519 public key in SPKI PEM form (\"BEGIN PUBLIC KEY\")")]
    NotPublicKey { path: PathBuf },
    #[error("cannot encode the key: {0}")]
    Encode(String),
}

/// The most bytes a key file may hold: an Ed25519 PEM key is about 120 bytes.
pub const MAX_KEY_FILE_BYTES: u64 = 16 * 1024;

/// Read a key file as text: at most [`MAX_KEY_FILE_BYTES`], never through a
/// symlink, never from a FIFO or device ([`crate::fsio::read_capped`]).
fn read_key_text(path: &Path) -> Result<String, KeyError> {
    let read = |source| KeyError::Read {
        path: path.to_path_buf(),
        source,
    };
    let bytes = crate::fsio::read_capped(path, MAX_KEY_FILE_BYTES).map_err(read)?;
    let bytes = Zeroizing::new(bytes);
    std::str::from_utf8(&bytes)
        .map(str::to_owned)
        .map_err(|e| read(std::io::Error::new(std::io::ErrorKind::InvalidData, e)))
}

/// SHA-256 hex of SPKI DER bytes: the MCP-RES key fingerprint and DSSE keyid.
pub fn fingerprint_of_spki(der: &[u8]) -> String {
    hex::encode(Sha256::digest(der))
}

/// The public half of a key pair.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PublicKey {
    key: VerifyingKey,
}

impl PublicKey {
    /// Parse a DER SubjectPublicKeyInfo that is exactly an Ed25519 key.
    pub fn from_spki_der(der: &[u8]) -> Option<PublicKey> {
        let raw = der.strip_prefix(&ED25519_SPKI_PREFIX[..])?;
        let raw: &[u8; 32] = raw.try_into().ok()?;
        VerifyingKey::from_bytes(raw)
            .ok()
            .map(|key| PublicKey { key })
    }

    /// Read an SPKI PEM public key file.
    pub fn read_pem(path: &Path) -> Result<PublicKey, KeyError> {
        let text = read_key_text(path)?;
        VerifyingKey::from_public_key_pem(text.trim())
            .map(|key| PublicKey { key })
            .map_err(|_| KeyError::NotPublicKey {
                path: path.to_path_buf(),
            })
    }

    /// SubjectPublicKeyInfo DER.
    pub fn spki_der(&self) -> Vec<u8> {
        let mut der = ED25519_SPKI_PREFIX.to_vec();
        der.extend_from_slice(self.key.as_bytes());
        der
    }

    /// SPKI PEM text.
    pub fn to_pem(&self) -> Result<String, KeyError> {
        self.key
            .to_public_key_pem(LineEnding::LF)
            .map_err(|e| KeyError::Encode(e.to_string()))
    }

    /// SHA-256 hex of the SPKI DER.
    pub fn fingerprint(&self) -> String {
        fingerprint_of_spki(&self.spki_der())
    }

    /// Ed25519 verification in the strict form: non-canonical `s` and
    /// small-order `R` or public keys are rejected.
    pub fn verify_strict(&self, message: &[u8], signature: &[u8]) -> bool {
        let Ok(bytes) = <&[u8; 64]>::try_from(signature) else {
            return false;
        };
        let sig = ed25519_dalek::Signature::from_bytes(bytes);
        self.key.verify_strict(message, &sig).is_ok()
    }
}

/// An Ed25519 signing key. Zeroized on drop.
pub struct KeyPair {
    key: SigningKey,
}

impl std::fmt::Debug for KeyPair {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never print the secret.
        write!(f, "KeyPair({})", self.public().fingerprint())
    }
}

impl KeyPair {
    /// A fresh key from the operating system's random number generator.
    pub fn generate() -> Result<KeyPair, KeyError> {
        let mut seed = Zeroizing::new([0u8; 32]);
        getrandom::fill(&mut seed[..]).map_err(|e| KeyError::Random(e.to_string()))?;
        Ok(KeyPair {
            key: SigningKey::from_bytes(&seed),
        })
    }

    /// A key from a 32-byte seed (tests and benchmarks only need this).
    pub fn from_seed(seed: &[u8; 32]) -> KeyPair {
        KeyPair {
            key: SigningKey::from_bytes(seed),
        }
    }

    /// Read a PKCS#8 PEM private key file (`BEGIN PRIVATE KEY`).
    pub fn read_pem(path: &Path) -> Result<KeyPair, KeyError> {
        let text = Zeroizing::new(read_key_text(path)?);
        SigningKey::from_pkcs8_pem(text.trim())
            .map(|key| KeyPair { key })
            .map_err(|_| KeyError::NotPrivateKey {
                path: path.to_path_buf(),
            })
    }

    /// PKCS#8 v1 PEM of the private key (without the optional public key, the
    /// form every PKCS#8 reader accepts).
    pub fn to_pkcs8_pem(&self) -> Result<Zeroizing<String>, KeyError> {
        let keypair = ed25519_dalek::pkcs8::KeypairBytes {
            secret_key: self.key.to_bytes(),
            public_key: None,
        };
        keypair
            .to_pkcs8_pem(LineEnding::LF)
            .map_err(|e| KeyError::Encode(e.to_string()))
    }

    /// The public half.
    pub fn public(&self) -> PublicKey {
        PublicKey {
            key: self.key.verifying_key(),
        }
    }

    /// Sign `message` (deterministic Ed25519).
    pub fn sign(&self, message: &[u8]) -> [u8; 64] {
        self.key.sign(message).to_bytes()
    }

    /// Write `NAME.key` (PKCS#8 PEM, mode 0600) and `NAME.pub` (SPKI PEM), both
    /// with exclusive create. Nothing is left behind if either cannot be written.
    pub fn write_pair(&self, base: &Path) -> Result<(PathBuf, PathBuf), KeyError> {
        let key_path = with_suffix(base, "key");
        let pub_path = with_suffix(base, "pub");
        for path in [&key_path, &pub_path] {
            if fs::symlink_metadata(path).is_ok() {
                return Err(KeyError::Exists { path: path.clone() });
            }
        }
        let private_pem = self.to_pkcs8_pem()?;
        let public_pem = self.public().to_pem()?;
        write_exclusive(&key_path, private_pem.as_bytes(), 0o600)?;
        if let Err(e) = write_exclusive(&pub_path, public_pem.as_bytes(), 0o644) {
            let _ = fs::remove_file(&key_path);
            return Err(e);
        }
        Ok((key_path, pub_path))
    }
}

fn with_suffix(base: &Path, ext: &str) -> PathBuf {
    let mut name = base.as_os_str().to_owned();
    name.push(".");
    name.push(ext);
    PathBuf::from(name)
}

fn write_exclusive(path: &Path, bytes: &[u8], mode: u32) -> Result<(), KeyError> {
    let mut options = fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(mode);
    }
    #[cfg(not(unix))]
    let _ = mode;
    let result = options.open(path).and_then(|mut f| {
        f.write_all(bytes)?;
        f.sync_all()
    });
    result.map_err(|source| {
        if source.kind() == std::io::ErrorKind::AlreadyExists {
            KeyError::Exists {
                path: path.to_path_buf(),
            }
        } else {
            KeyError::Write {
                path: path.to_path_buf(),
                source,
            }
        }
    })
}

/// `true` when a private key file can be read by users other than its owner.
#[cfg(unix)]
pub fn is_group_or_world_readable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    fs::metadata(path).is_ok_and(|m| m.permissions().mode() & 0o077 != 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spki_der_has_the_ed25519_prefix_and_fingerprint_matches() {
        let kp = KeyPair::from_seed(&[7; 32]);
        let der = kp.public().spki_der();
        assert_eq!(der.len(), 44);
        assert!(der.starts_with(&ED25519_SPKI_PREFIX));
        // Our DER equals the one the pkcs8/spki encoder produces.
        let encoded = kp.public().key.to_public_key_der().unwrap();
        assert_eq!(encoded.as_bytes(), der.as_slice());
        assert_eq!(kp.public().fingerprint(), fingerprint_of_spki(&der));
        assert_eq!(PublicKey::from_spki_der(&der), Some(kp.public()));
        assert_eq!(PublicKey::from_spki_der(&der[1..]), None);
        let mut longer = der.clone();
        longer.push(0);
        assert_eq!(PublicKey::from_spki_der(&longer), None);
    }

    #[test]
    fn pem_files_round_trip_with_exclusive_create_and_private_mode() {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path().join("signer");
        let kp = KeyPair::generate().unwrap();
        let (key_path, pub_path) = kp.write_pair(&base).unwrap();
        let text = fs::read_to_string(&key_path).unwrap();
        assert!(text.starts_with("-----BEGIN PRIVATE KEY-----"));
        assert!(
            fs::read_to_string(&pub_path)
                .unwrap()
                .starts_with("-----BEGIN PUBLIC KEY-----")
        );
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = fs::metadata(&key_path).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode, 0o600);
            assert!(!is_group_or_world_readable(&key_path));
        }
        let back = KeyPair::read_pem(&key_path).unwrap();
        assert_eq!(back.public(), kp.public());
        assert_eq!(PublicKey::read_pem(&pub_path).unwrap(), kp.public());
        // A second pair with the same name is refused and nothing changes.
        let other = KeyPair::generate().unwrap();
        assert!(matches!(
            other.write_pair(&base),
            Err(KeyError::Exists { .. })
        ));
        assert_eq!(KeyPair::read_pem(&key_path).unwrap().public(), kp.public());
        // Swapped files are recognised as the wrong kind, without echoing content.
        let err = KeyPair::read_pem(&pub_path).unwrap_err().to_string();
        assert!(err.contains("not an Ed25519 private key"), "{err}");
        let err = PublicKey::read_pem(&key_path).unwrap_err().to_string();
        assert!(!err.contains("PRIVATE KEY-----"), "{err}");
    }

    #[test]
    fn signatures_verify_strictly_and_only_for_their_message() {
        let kp = KeyPair::from_seed(&[9; 32]);
        let sig = kp.sign(b"message");
        assert!(kp.public().verify_strict(b"message", &sig));
        assert!(!kp.public().verify_strict(b"messagE", &sig));
        assert!(!kp.public().verify_strict(b"message", &sig[..63]));
        let mut bad = sig;
        bad[0] ^= 1;
        assert!(!kp.public().verify_strict(b"message", &bad));
    }

    #[test]
    fn small_order_keys_and_points_are_refused() {
        // The identity point as public key and as R, with S = 0: a cofactorless
        // verifier accepts this "signature" for every message; strict verification must not.
        let mut identity = [0u8; 32];
        identity[0] = 1;
        let mut der = ED25519_SPKI_PREFIX.to_vec();
        der.extend_from_slice(&identity);
        let key = PublicKey::from_spki_der(&der).expect("the identity point decodes");
        let mut sig = [0u8; 64];
        sig[..32].copy_from_slice(&identity);
        assert!(!key.verify_strict(b"any message", &sig));
        // A non-canonical S (S + L) for a real signature is refused too.
        let kp = KeyPair::from_seed(&[3; 32]);
        let mut good = kp.sign(b"m");
        assert!(kp.public().verify_strict(b"m", &good));
        const L: [u8; 32] = [
            0xed, 0xd3, 0xf5, 0x5c, 0x1a, 0x63, 0x12, 0x58, 0xd6, 0x9c, 0xf7, 0xa2, 0xde, 0xf9,
            0xde, 0x14, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x10,
        ];
        let mut carry = 0u16;
        for i in 0..32 {
            let v = u16::from(good[32 + i]) + u16::from(L[i]) + carry;
            good[32 + i] = v as u8;
            carry = v >> 8;
        }
        assert!(!kp.public().verify_strict(b"m", &good));
    }
}
