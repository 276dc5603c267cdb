//! The one artifact store of the runners (profile, field, OAuth): every file
//! a run keeps is written here, and every write takes the same steps.
//!
//! 1. Redact: the run's one [`Redactor`] (`drive::redact`) over the
//!    document, in its artifact form (an observation document keeps its own
//!    fields, see [`Redactor::redact_artifact`]). A record the runner
//!    composes itself (`evaluation.json`, `run.json`, `matrix.json`) has had
//!    each field it derives from what a subject said passed through the same
//!    redactor ([`Store::redact_str`]) before it is put.
//! 2. Gate: the redacted document's canonical bytes are scanned again for
//!    every credential form the redactor knows (the run's synthetic
//!    credentials and the values of secret-named variables, raw,
//!    JSON-escaped, percent-encoded and base64-encoded; credential shapes),
//!    in the bytes as written, in every JSON string literal decoded, and in
//!    every recorded stream joined across its chunks. A credential that
//!    survives is refused with a typed error that names its kind and the
//!    file, never the credential; an extra shape gate (the OAuth runner's)
//!    can refuse more.
//! 3. Canonical bytes, written exclusively (never over anything, never
//!    through a symlink), and a manifest row (path, sha256, bytes) for an
//!    artifact.
//!
//! The store is made on a new directory and removes it when it is dropped
//! before [`Store::finish`]: an error or a cancelled run keeps nothing.
//! What it wrote stays scannable ([`Store::residue`]): the privacy flags of
//! an OAuth evaluation are that scan, with every credential the run learned
//! by its end, of the artifacts as they were written.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};

use serde::Serialize;
use serde_json::Value;

use crate::fsio::DirHandle;
use crate::json::canonical;
use crate::produce::drive::redact::{Redactor, Tally};

/// The run's redactor, shared with whatever learns credentials as the run
/// goes (an OAuth run's minted tokens).
pub type SharedRedactor = Arc<Mutex<Redactor>>;

/// An extra gate over a redacted document: the JSON pointer and the kind of
/// the credential material it finds, if any.
pub type ShapeGate = fn(&Value) -> Option<(String, &'static str)>;

/// A file the store wrote: its digest and length.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Digest {
    pub sha256: String,
    pub bytes: usize,
}

/// A manifest row: an artifact as `run.json` lists it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Row {
    pub path: String,
    pub sha256: String,
    pub bytes: usize,
}

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("cannot write {path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error(
        "refusing to write {path}: a credential ({kind}, found in the {form} form) is left after redaction; nothing was kept"
    )]
    CredentialSurvived {
        path: String,
        kind: String,
        form: &'static str,
    },
    #[error(
        "refusing to write {path}: it holds credential material ({what} at {pointer}); nothing was kept"
    )]
    CredentialMaterial {
        path: String,
        pointer: String,
        what: &'static str,
    },
    #[error("cannot write {path}: it has no canonical form ({code})")]
    NotCanonical { path: String, code: &'static str },
}

/// The artifact store of one run (see the module's documentation).
pub struct Store {
    dir: DirHandle,
    root: PathBuf,
    redactor: SharedRedactor,
    gate: Option<ShapeGate>,
    rows: Vec<Row>,
    /// Every artifact as written, for [`Store::residue`].
    written: Vec<(String, Vec<u8>)>,
    kept: bool,
}

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Store")
            .field("root", &self.root)
            .field("rows", &self.rows.len())
            .finish()
    }
}

impl Store {
    /// Make the directory `root` (which must not exist) and a store on it
    /// that redacts with `redactor`.
    pub fn create(root: &Path, redactor: SharedRedactor) -> Result<Store, StoreError> {
        let dir = DirHandle::create_new(root).map_err(|source| StoreError::Io {
            path: root.to_path_buf(),
            source,
        })?;
        Ok(Store {
            dir,
            root: root.to_path_buf(),
            redactor,
            gate: None,
            rows: Vec::new(),
            written: Vec::new(),
            kept: false,
        })
    }

    /// Refuse, besides surviving credentials, whatever `gate` finds.
    pub fn with_gate(mut self, gate: ShapeGate) -> Store {
        self.gate = Some(gate);
        self
    }

    /// The run's redactor (to add a credential the run learned, or to
    /// redact a document before it is judged as it will be stored).
    pub fn redactor(&self) -> MutexGuard<'_, Redactor> {
        self.redactor.lock().expect("redactor lock")
    }

    /// A field derived from what a subject said, redacted fully.
    pub fn redact_str(&self, text: &str) -> String {
        self.redactor().redact_str(text)
    }

    /// Store the artifact `value` at `rel`: redacted (artifact form),
    /// gated, canonical, written exclusively, listed in the manifest.
    pub fn put(&mut self, rel: &str, value: &Value) -> Result<Digest, StoreError> {
        let mut value = value.clone();
        self.redactor().redact_artifact(&mut value);
        let bytes = self.gated(rel, &value)?;
        let digest = self.write(rel, &bytes)?;
        self.rows.push(Row {
            path: rel.to_string(),
            sha256: digest.sha256.clone(),
            bytes: digest.bytes,
        });
        self.written.push((rel.to_string(), bytes));
        Ok(digest)
    }

    /// Store a record the runner composed (`evaluation.json`, `run.json`,
    /// `matrix.json`; its subject-derived fields already passed
    /// [`Store::redact_str`]): gated, canonical, written exclusively; not an
    /// artifact, so not listed in the manifest.
    pub fn put_record(&mut self, rel: &str, value: &impl Serialize) -> Result<Digest, StoreError> {
        let value = serde_json::to_value(value).map_err(|_| StoreError::NotCanonical {
            path: rel.to_string(),
            code: "not-json",
        })?;
        let bytes = self.gated(rel, &value)?;
        self.write(rel, &bytes)
    }

    /// The manifest: every artifact put, in order.
    pub fn rows(&self) -> &[Row] {
        &self.rows
    }

    /// What the redactor, as it stands now, finds in the artifacts as they
    /// were written (both scans of [`survivors`], so one match may count
    /// twice): empty when no credential known by now was stored.
    pub fn residue(&self) -> Tally {
        let redactor = self.redactor();
        let mut left = Tally::default();
        for (_, bytes) in &self.written {
            left.absorb(survivors(&redactor, bytes));
        }
        left
    }

    /// Keep the directory: the run is complete.
    pub fn finish(mut self) -> Vec<Row> {
        self.kept = true;
        std::mem::take(&mut self.rows)
    }

    /// The canonical bytes of the redacted `value`, or why they must not be
    /// written.
    fn gated(&self, rel: &str, value: &Value) -> Result<Vec<u8>, StoreError> {
        if let Some((pointer, what)) = self.gate.and_then(|gate| gate(value)) {
            return Err(StoreError::CredentialMaterial {
                path: rel.to_string(),
                pointer,
                what,
            });
        }
        let bytes = canonical::to_vec(value).map_err(|e| StoreError::NotCanonical {
            path: rel.to_string(),
            code: e.code(),
        })?;
        gate(&self.redactor(), rel, &bytes)?;
        Ok(bytes)
    }

    fn write(&self, rel: &str, bytes: &[u8]) -> Result<Digest, StoreError> {
        self.dir
            .write_new(Path::new(rel), bytes)
            .map_err(|source| StoreError::Io {
                path: self.root.join(rel),
                source,
            })?;
        Ok(Digest {
            sha256: canonical::sha256_hex(bytes),
            bytes: bytes.len(),
        })
    }
}

impl Drop for Store {
    fn drop(&mut self) {
        if !self.kept {
            let _ = std::fs::remove_dir_all(&self.root);
        }
    }
}

/// What `redactor` finds in the bytes of a stored document: in the bytes
/// and their decoded JSON string literals ([`Redactor::count`]), and, when
/// they are JSON, in its strings, keys, base64 fields and recorded streams
/// joined across chunks ([`Redactor::scan_value`]).
pub fn survivors(redactor: &Redactor, bytes: &[u8]) -> Tally {
    let mut left = redactor.count(bytes);
    if let Ok(value) = serde_json::from_slice::<Value>(bytes) {
        left.absorb(redactor.scan_value(&value));
    }
    left
}

/// The credential gate: refuse `bytes` (to be written at `rel`) when a
/// credential `redactor` knows survives in them.
pub fn gate(redactor: &Redactor, rel: &str, bytes: &[u8]) -> Result<(), StoreError> {
    let left = survivors(redactor, bytes);
    match left
        .matches
        .keys()
        .find(|(kind, _)| Redactor::is_credential_kind(kind))
    {
        Some((kind, form)) => Err(StoreError::CredentialSurvived {
            path: rel.to_string(),
            kind: kind.clone(),
            form,
        }),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use base64::Engine as _;
    use serde_json::json;

    /// A synthetic credential: made for these tests, never a real one.
    const SECRET: &str = "syn-cred_7Qx9Lm2Vb8Rt4Kp";

    fn shared(secrets: &[&str]) -> SharedRedactor {
        Arc::new(Mutex::new(Redactor::synthetic(secrets)))
    }

    fn temp(name: &str) -> PathBuf {
        let base =
            std::env::temp_dir().join(format!("mcpres-store-{}-{}", std::process::id(), name));
        let _ = std::fs::remove_dir_all(&base);
        std::fs::create_dir_all(&base).unwrap();
        base.join("out")
    }

    fn refused(bytes: &[u8]) -> StoreError {
        let r = Redactor::synthetic(&[SECRET]);
        gate(&r, "a.json", bytes).expect_err("the credential survives")
    }

    #[test]
    fn an_artifact_is_redacted_written_once_and_listed() {
        let root = temp("rows");
        let mut store = Store::create(&root, shared(&[SECRET])).unwrap();
        let doc = json!({"detail": format!("token {SECRET}"), "n": 1});
        let d = store.put("artifacts/a.json", &doc).unwrap();
        let bytes = std::fs::read(root.join("artifacts/a.json")).unwrap();
        assert_eq!(bytes, br#"{"detail":"token <synthetic-bearer>","n":1}"#);
        assert_eq!(d.sha256, canonical::sha256_hex(&bytes));
        assert_eq!(d.bytes, bytes.len());
        assert_eq!(
            store.rows(),
            [Row {
                path: "artifacts/a.json".into(),
                sha256: d.sha256.clone(),
                bytes: bytes.len()
            }]
        );
        // Never over what is there; a record is not listed.
        assert!(matches!(
            store.put("artifacts/a.json", &json!({})),
            Err(StoreError::Io { .. })
        ));
        store.put_record("run.json", &json!({"x": 1})).unwrap();
        assert_eq!(store.rows().len(), 1);
        assert_eq!(store.residue().total(), 0);
        let rows = store.finish();
        assert_eq!(rows.len(), 1);
        assert!(root.join("run.json").is_file());
        std::fs::remove_dir_all(root.parent().unwrap()).unwrap();
    }

    #[test]
    fn a_store_dropped_unfinished_removes_its_directory_and_never_takes_an_existing_one() {
        let root = temp("drop");
        {
            let mut store = Store::create(&root, shared(&[])).unwrap();
            store.put("a.json", &json!({"a": 1})).unwrap();
            assert!(matches!(
                Store::create(&root, shared(&[])),
                Err(StoreError::Io { .. })
            ));
        }
        assert!(!root.exists());
        std::fs::remove_dir_all(root.parent().unwrap()).unwrap();
    }

    #[test]
    fn the_gate_refuses_a_surviving_credential_in_every_form() {
        use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
        let (a, b) = SECRET.split_at(9);
        let percent = SECRET.replace('-', "%2D").replace('_', "%5f");
        let escaped = format!("\\u0073{}", &SECRET[1..]);
        for (what, doc) in [
            ("raw", format!(r#"{{"t":"{SECRET}"}}"#)),
            ("json-escaped", format!(r#"{{"t":"{escaped}"}}"#)),
            (
                "percent-encoded",
                format!(r#"{{"u":"/cb?code={percent}"}}"#),
            ),
            (
                "base64",
                format!(r#"{{"t":"{}"}}"#, STANDARD.encode(format!("x{SECRET}y"))),
            ),
            (
                "base64url",
                format!(r#"{{"t":"{}"}}"#, URL_SAFE_NO_PAD.encode(SECRET)),
            ),
            (
                "base64 field",
                format!(
                    r#"{{"base64":"{}","stream":"stdout"}}"#,
                    STANDARD.encode(format!("\u{1}{SECRET}"))
                ),
            ),
            (
                "split across the chunks of one stream",
                format!(
                    r#"{{"chunks":[{{"stream":"stderr","text":"got {a}"}},{{"stream":"stderr","text":"{b} ok"}}]}}"#
                ),
            ),
        ] {
            match refused(doc.as_bytes()) {
                StoreError::CredentialSurvived { path, kind, .. } => {
                    assert_eq!(
                        (path.as_str(), kind.as_str()),
                        ("a.json", "synthetic-credential"),
                        "{what}"
                    );
                }
                e => panic!("{what}: {e}"),
            }
            // The message names the file and the kind, never the credential.
            let message = refused(doc.as_bytes()).to_string();
            assert!(
                !message.contains(a) && !message.contains(b),
                "{what}: {message}"
            );
        }
        // A credential shape, and a secret-named variable's value.
        let r = Redactor::with_environment(
            &[(
                "API_TOKEN".to_string(),
                "tok_9f8e7d6c5b4a39281706".to_string(),
            )]
            .into(),
            &Default::default(),
            None,
            false,
        );
        for doc in [
            r#"{"h":"Authorization: Bearer abcdefgh12345678"}"#,
            r#"{"t":"x tok%5F9f8e7d6c5b4a39281706"}"#,
        ] {
            assert!(gate(&r, "b.json", doc.as_bytes()).is_err(), "{doc}");
        }
        // Nothing of it, a challenge, a label: written.
        for doc in [
            r#"{"t":"syn-cred 7Qx9 nothing"}"#,
            r#"{"h":"WWW-Authenticate: Bearer error=\"invalid_token\""}"#,
            r#"{"h":"Bearer <synthetic-bearer>"}"#,
        ] {
            assert!(gate(&r, "c.json", doc.as_bytes()).is_ok(), "{doc}");
            let s = Redactor::synthetic(&[SECRET]);
            assert!(gate(&s, "c.json", doc.as_bytes()).is_ok(), "{doc}");
        }
        // An ordinary `--env` value left in a document is not a credential.
        let m = Redactor::with_environment(
            &[("MODE".to_string(), "framing".to_string())].into(),
            &Default::default(),
            None,
            false,
        );
        assert!(gate(&m, "d.json", br#"{"check":"framing"}"#).is_ok());
    }

    #[test]
    fn put_refuses_a_credential_the_artifact_form_leaves_and_keeps_nothing() {
        let root = temp("refuse");
        let mut store = Store::create(&root, shared(&[SECRET])).unwrap();
        store.put("a.json", &json!({"a": 1})).unwrap();
        // An observation's own fields are not redacted: a credential there
        // is left by the redactor and refused by the gate.
        let doc = json!({"check": "x", "role": "positive", "observedReasonCode": SECRET});
        let e = store.put("artifacts/x/positive.json", &doc).unwrap_err();
        assert!(matches!(e, StoreError::CredentialSurvived { .. }), "{e}");
        assert!(!root.join("artifacts/x/positive.json").exists());
        assert_eq!(store.rows().len(), 1);
        drop(store);
        assert!(!root.exists());
        std::fs::remove_dir_all(root.parent().unwrap()).unwrap();
    }

    #[test]
    fn the_shape_gate_refuses_and_the_residue_sees_a_credential_learned_later() {
        let root = temp("residue");
        let redactor = shared(&[]);
        let mut store = Store::create(&root, redactor.clone())
            .unwrap()
            .with_gate(|v| {
                v.get("jwt")
                    .map(|_| ("/jwt".to_string(), "a JSON web token"))
            });
        let e = store.put("a.json", &json!({"jwt": "x"})).unwrap_err();
        assert!(matches!(e, StoreError::CredentialMaterial { .. }), "{e}");
        let encoded = base64::engine::general_purpose::STANDARD.encode(SECRET);
        store
            .put("b.json", &json!({"t": format!("saw {encoded}")}))
            .unwrap();
        assert_eq!(store.residue().total(), 0);
        // The run learns the credential after it stored the artifact.
        redactor.lock().unwrap().add_synthetic(SECRET);
        let left = store.residue();
        assert!(Redactor::synthetic_matches(&left) > 0);
        assert!(Redactor::credential_matches(&left) > 0);
        drop(store);
        std::fs::remove_dir_all(root.parent().unwrap()).unwrap();
    }
}
