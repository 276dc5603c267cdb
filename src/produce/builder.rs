//! Producing v0.2 bundles: seal authored evidence and statement content with
//! every value the standard derives from it.
//!
//! A producer (the harness, a test generator, a benchmark) authors the
//! *content* of a bundle: the run, operations, observations, coverage, trial
//! summary and statement verdict, plus any raw supporting artifacts. Every
//! digest that binds that content together is derived, and one stale value
//! makes the bundle invalid. [`finalize`] recomputes all of them, in the only
//! order that works (each step reads values the previous steps wrote):
//!
//! 1. [`seal_observations`] sets each observation's `observationSha256` (the digest
//!    of the observation without that key) and its manifest entry
//!    `observations/<id>.json` (canonical length, digest, media type
//!    `application/vnd.mcp-res.observation+json`);
//! 2. [`seal_scenario`] sets `scenario.fingerprint` = sha256(descriptor);
//! 3. [`seal_supporting_manifest`] sets `supportingArtifactManifestDigest` over the
//!    manifest without the evidence and statement entries;
//! 4. [`seal_statement`] sets `statement.scenarioFingerprint`,
//!    `statement.executionInstanceDigest` and `statement.evidenceSha256`;
//! 5. [`seal_integrity`] writes the `evidence-envelope.json` and
//!    `conformance-statement.json` entries, the manifest sorted by path
//!    (UTF-16 order) and `integrity.bundleDigest`.
//!
//! The steps are public so that a test generator can seal a bundle and then
//! break exactly one binding (for example: seal, corrupt one observation
//! digest, then re-run steps 4 and 5 so that nothing else is stale).
//!
//! What `finalize` owns, and what it keeps:
//! - it owns every manifest entry with the observation media type (they are
//!   rebuilt from the observations: one per observation, stale ones dropped)
//!   and the two document entries;
//! - it keeps every other entry (raw supporting artifacts) exactly as given:
//!   path, media type, byte length and sha256 are the caller's;
//! - it never edits authored content: observation `artifactRefs`, the
//!   evidence class, the statement's subject fields and verdict stay as
//!   written. (An observation must list its own `observations/<id>.json` in
//!   `artifactRefs` to be carried; [`BundleBuilder`] users write that.)
//!
//! [`BundleBuilder`] wraps this for producers that also hold the bytes of raw
//! artifacts and want to write the single-file or the directory form.
//! [`synthetic_bundle`] builds a complete valid bundle of any size for benchmarks.

use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};

use serde_json::{Map, Value, json};

use crate::bundle::dir::{BUNDLE_SCHEMA_VERSION, MANIFEST_FILE, path_problem, write_new};
use crate::json::canonical::{self, CanonicalError};
use crate::model::digests::{bundle_digest, execution_digest, supporting_manifest_digest};
use crate::model::vocab::{EVIDENCE_PATH, OBSERVATION_MEDIA_TYPE, STATEMENT_PATH, SURFACES};

/// Media type of the evidence and statement manifest entries.
pub const JSON_MEDIA_TYPE: &str = "application/json";
/// The most artifacts one integrity manifest may list (the schema's cap).
pub const MAX_ARTIFACTS: usize = 256;
/// Fewest observations [`synthetic_bundle`] accepts (the six a passing bundle needs).
pub const SYNTHETIC_MIN_OBSERVATIONS: usize = 6;
/// Most observations [`synthetic_bundle`] accepts (256 artifacts minus the two documents).
pub const SYNTHETIC_MAX_OBSERVATIONS: usize = MAX_ARTIFACTS - 2;

const INTEGRITY_SCHEMA_VERSION: &str = "mcp-res.integrity-manifest/0.2.0";
const OBSERVATION_SHA_KEY: &str = "observationSha256";

/// Why a bundle could not be sealed or written.
#[derive(Debug, thiserror::Error)]
pub enum FinalizeError {
    /// A part of the bundle that sealing reads is missing or has the wrong JSON type.
    #[error("{pointer}: {expected}")]
    Shape {
        pointer: String,
        expected: &'static str,
    },
    /// A value has no canonical form (a number that is not a safe integer).
    #[error(transparent)]
    Canonical(#[from] CanonicalError),
    /// A typed bundle part did not serialize.
    #[error("a bundle part did not serialize: {0}")]
    Part(#[from] serde_json::Error),
    /// Two observations share an id, so they would share one manifest path.
    #[error("observation id {0:?} is used more than once")]
    DuplicateObservationId(String),
    /// Two manifest entries share a path.
    #[error("artifact path {0:?} is listed more than once")]
    DuplicatePath(String),
    /// A manifest path that cannot name a file of a bundle.
    #[error("artifact path {path:?} {problem}")]
    BadPath { path: String, problem: String },
    /// A raw artifact at a path that sealing derives itself.
    #[error("artifact path {0:?} is derived by finalize and cannot hold a raw artifact")]
    ReservedPath(String),
    /// More manifest entries than the schema allows.
    #[error("the manifest would list {0} artifacts; at most {MAX_ARTIFACTS} are allowed")]
    TooManyArtifacts(usize),
    /// A request outside the supported range.
    #[error("{what} must be between {min} and {max}, not {value}")]
    OutOfRange {
        what: &'static str,
        value: usize,
        min: usize,
        max: usize,
    },
    /// Writing the directory form needs the bytes of every raw artifact.
    #[error(
        "raw artifact {0:?} is bound by digest only; its bytes are needed to write a directory"
    )]
    RawBytesMissing(String),
    /// Writing failed.
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

/// What [`finalize`] computed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sealed {
    /// `integrity.bundleDigest`.
    pub bundle_digest: String,
    /// `statement.evidenceSha256`.
    pub evidence_sha256: String,
    /// `statement.executionInstanceDigest`.
    pub execution_instance_digest: String,
    /// How many artifacts the manifest lists.
    pub artifacts: usize,
}

fn shape(pointer: &str, expected: &'static str) -> FinalizeError {
    FinalizeError::Shape {
        pointer: pointer.to_string(),
        expected,
    }
}

fn object_mut<'a>(
    doc: &'a mut Value,
    pointer: &str,
) -> Result<&'a mut Map<String, Value>, FinalizeError> {
    doc.pointer_mut(pointer)
        .and_then(Value::as_object_mut)
        .ok_or_else(|| shape(pointer, "an object"))
}

fn str_at<'a>(doc: &'a Value, pointer: &str) -> Result<&'a str, FinalizeError> {
    doc.pointer(pointer)
        .and_then(Value::as_str)
        .ok_or_else(|| shape(pointer, "a string"))
}

/// The manifest artifact list, created (with the constant manifest fields) when absent.
fn artifacts_mut(doc: &mut Value) -> Result<&mut Vec<Value>, FinalizeError> {
    let root = doc.as_object_mut().ok_or_else(|| shape("", "an object"))?;
    root.entry("schemaVersion")
        .or_insert_with(|| Value::from(BUNDLE_SCHEMA_VERSION));
    let integrity = root
        .entry("integrity")
        .or_insert_with(|| Value::Object(Map::new()))
        .as_object_mut()
        .ok_or_else(|| shape("/integrity", "an object"))?;
    for (key, value) in [
        ("schemaVersion", Value::from(INTEGRITY_SCHEMA_VERSION)),
        (
            "canonicalizationAlgorithm",
            Value::from(canonical::ALGORITHM),
        ),
        ("hashAlgorithm", Value::from("SHA-256")),
        ("publication", Value::from("MANIFEST_LAST")),
        ("complete", Value::Bool(true)),
    ] {
        integrity.entry(key).or_insert(value);
    }
    integrity
        .entry("artifacts")
        .or_insert_with(|| Value::Array(Vec::new()))
        .as_array_mut()
        .ok_or_else(|| shape("/integrity/artifacts", "an array"))
}

fn entry_path(entry: &Value) -> Option<&str> {
    entry.get("path").and_then(Value::as_str)
}

fn artifact_entry(path: &str, media_type: &str, bytes: u64, sha256: &str) -> Value {
    json!({"path": path, "mediaType": media_type, "bytes": bytes, "sha256": sha256})
}

/// Check that `path` can name a file of a bundle and matches the schema's
/// artifact-path pattern (`^[A-Za-z0-9][A-Za-z0-9._/-]{0,255}$`).
pub fn check_artifact_path(path: &str) -> Result<(), FinalizeError> {
    let bad = |problem: &str| FinalizeError::BadPath {
        path: path.to_string(),
        problem: problem.to_string(),
    };
    if let Some(problem) = path_problem(path) {
        return Err(bad(problem));
    }
    let mut chars = path.chars();
    if !chars.next().is_some_and(|c| c.is_ascii_alphanumeric()) {
        return Err(bad("must start with an ASCII letter or digit"));
    }
    if !chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '/' | '-')) {
        return Err(bad(
            "may hold only ASCII letters, digits, '.', '_', '/' and '-'",
        ));
    }
    if path.len() > 256 {
        return Err(bad("is longer than 256 characters"));
    }
    Ok(())
}

/// The manifest path that carries observation `id`.
pub fn observation_path(id: &str) -> String {
    format!("observations/{id}.json")
}

fn is_derived_entry(entry: &Value, derived: &HashSet<String>) -> bool {
    let path = entry_path(entry).unwrap_or("");
    path == EVIDENCE_PATH
        || path == STATEMENT_PATH
        || derived.contains(path)
        || entry.get("mediaType").and_then(Value::as_str) == Some(OBSERVATION_MEDIA_TYPE)
}

/// Step 1: set every observation's `observationSha256` and rebuild the
/// observation entries of the manifest (one per observation; entries of the
/// observation media type that no observation produces are dropped).
///
/// Fails on duplicate observation ids and on ids that cannot form a manifest
/// path (the id pattern allows `:`, the artifact-path pattern does not).
pub fn seal_observations(doc: &mut Value) -> Result<(), FinalizeError> {
    let observations = doc
        .pointer_mut("/evidence/observations")
        .and_then(Value::as_array_mut)
        .ok_or_else(|| shape("/evidence/observations", "an array"))?;
    let mut entries = Vec::with_capacity(observations.len());
    let mut derived: HashSet<String> = HashSet::new();
    for (i, obs) in observations.iter_mut().enumerate() {
        let pointer = format!("/evidence/observations/{i}");
        let id = obs
            .get("id")
            .and_then(Value::as_str)
            .ok_or_else(|| shape(&format!("{pointer}/id"), "a string"))?
            .to_string();
        let path = observation_path(&id);
        check_artifact_path(&path)?;
        if !derived.insert(path.clone()) {
            return Err(FinalizeError::DuplicateObservationId(id));
        }
        let map = obs
            .as_object_mut()
            .ok_or_else(|| shape(&pointer, "an object"))?;
        map.remove(OBSERVATION_SHA_KEY);
        let body = canonical::to_vec(obs)?;
        let sha = canonical::sha256_hex(&body);
        if let Value::Object(map) = obs {
            map.insert(OBSERVATION_SHA_KEY.into(), Value::from(sha.as_str()));
        }
        entries.push(artifact_entry(
            &path,
            OBSERVATION_MEDIA_TYPE,
            body.len() as u64,
            &sha,
        ));
    }
    let artifacts = artifacts_mut(doc)?;
    artifacts.retain(|a| !is_derived_entry(a, &derived) || is_document_entry(a));
    artifacts.extend(entries);
    Ok(())
}

fn is_document_entry(entry: &Value) -> bool {
    matches!(entry_path(entry), Some(EVIDENCE_PATH | STATEMENT_PATH))
}

/// Step 2: `scenario.fingerprint` = sha256(canonical descriptor).
pub fn seal_scenario(doc: &mut Value) -> Result<(), FinalizeError> {
    let descriptor = doc
        .pointer("/evidence/scenario/descriptor")
        .ok_or_else(|| shape("/evidence/scenario/descriptor", "present"))?;
    let fingerprint = canonical::digest(descriptor)?;
    object_mut(doc, "/evidence/scenario")?.insert("fingerprint".into(), fingerprint.into());
    Ok(())
}

/// Step 3: `supportingArtifactManifestDigest` over every manifest entry except
/// the evidence and statement documents.
pub fn seal_supporting_manifest(doc: &mut Value) -> Result<(), FinalizeError> {
    let artifacts = artifacts_mut(doc)?;
    for a in artifacts.iter() {
        canonical::to_vec(a)?;
    }
    let digest = supporting_manifest_digest(artifacts);
    object_mut(doc, "/evidence")?.insert("supportingArtifactManifestDigest".into(), digest.into());
    Ok(())
}

/// Step 4: the statement's bindings to the evidence: `scenarioFingerprint`,
/// `executionInstanceDigest` (over the run, the observation digests in order,
/// `statement.result` and the supporting-manifest digest) and `evidenceSha256`.
pub fn seal_statement(doc: &mut Value) -> Result<(), FinalizeError> {
    let fingerprint = str_at(doc, "/evidence/scenario/fingerprint")?.to_string();
    let result = str_at(doc, "/statement/result")?.to_string();
    let evidence = doc
        .get("evidence")
        .ok_or_else(|| shape("/evidence", "an object"))?;
    canonical::to_vec(evidence)?;
    let execution = execution_digest(evidence, &result);
    let evidence_sha = canonical::digest(evidence)?;
    let statement = object_mut(doc, "/statement")?;
    statement.insert("scenarioFingerprint".into(), fingerprint.into());
    statement.insert("executionInstanceDigest".into(), execution.into());
    statement.insert("evidenceSha256".into(), evidence_sha.into());
    Ok(())
}

/// Step 5: the evidence and statement entries, the manifest sorted by path and
/// `integrity.bundleDigest`. Returns the bundle digest.
pub fn seal_integrity(doc: &mut Value) -> Result<String, FinalizeError> {
    let mut documents = Vec::with_capacity(2);
    for (key, path) in [("evidence", EVIDENCE_PATH), ("statement", STATEMENT_PATH)] {
        let value = doc
            .get(key)
            .filter(|v| v.is_object())
            .ok_or_else(|| shape(&format!("/{key}"), "an object"))?;
        let (sha, len) = canonical::digest_and_len(value)?;
        documents.push(artifact_entry(path, JSON_MEDIA_TYPE, len as u64, &sha));
    }
    let artifacts = artifacts_mut(doc)?;
    artifacts.retain(|a| !is_document_entry(a));
    artifacts.extend(documents);
    let mut seen: HashSet<&str> = HashSet::new();
    for a in artifacts.iter() {
        let path =
            entry_path(a).ok_or_else(|| shape("/integrity/artifacts", "entries with a path"))?;
        if !seen.insert(path) {
            return Err(FinalizeError::DuplicatePath(path.to_string()));
        }
        canonical::to_vec(a)?;
    }
    if artifacts.len() > MAX_ARTIFACTS {
        return Err(FinalizeError::TooManyArtifacts(artifacts.len()));
    }
    artifacts.sort_by(|a, b| {
        canonical::cmp_utf16(entry_path(a).unwrap_or(""), entry_path(b).unwrap_or(""))
    });
    let digest = bundle_digest(artifacts);
    object_mut(doc, "/integrity")?.insert("bundleDigest".into(), digest.as_str().into());
    Ok(digest)
}

/// Recompute every derived value of a bundle, in order (see the module docs).
///
/// `doc` is a single-file bundle (`schemaVersion`, `evidence`, `statement`,
/// optionally `integrity`) whose evidence and statement content is authored
/// and whose digests may be stale or absent. Raw supporting artifacts already
/// in `integrity.artifacts` are kept unchanged. On error `doc` may be partly sealed.
pub fn finalize(doc: &mut Value) -> Result<Sealed, FinalizeError> {
    for key in ["evidence", "statement"] {
        if !doc.get(key).is_some_and(Value::is_object) {
            return Err(shape(&format!("/{key}"), "an object"));
        }
    }
    seal_observations(doc)?;
    seal_scenario(doc)?;
    seal_supporting_manifest(doc)?;
    seal_statement(doc)?;
    let bundle_digest = seal_integrity(doc)?;
    let get = |p: &str| str_at(doc, p).map(str::to_string);
    Ok(Sealed {
        bundle_digest,
        evidence_sha256: get("/statement/evidenceSha256")?,
        execution_instance_digest: get("/statement/executionInstanceDigest")?,
        artifacts: doc
            .pointer("/integrity/artifacts")
            .and_then(Value::as_array)
            .map_or(0, Vec::len),
    })
}

/// Canonical bytes of a bundle plus a trailing newline: the single-file form
/// as mcpres writes it.
pub fn to_file_bytes(doc: &Value) -> Result<Vec<u8>, FinalizeError> {
    let mut bytes = canonical::to_vec(doc)?;
    bytes.push(b'\n');
    Ok(bytes)
}

/// Builds a bundle from authored content and raw artifacts, then seals it.
///
/// ```
/// # use mcpres::produce::builder::BundleBuilder;
/// let doc = mcpres::produce::builder::synthetic_bundle(6).unwrap();
/// let mut b = BundleBuilder::from_document(doc);
/// b.add_raw("raw/wire.bin", "application/octet-stream", b"frames".to_vec()).unwrap();
/// let built = b.build().unwrap();
/// assert!(mcpres::validate::core::validate_bundle(&built.doc).valid);
/// ```
#[derive(Debug, Clone)]
pub struct BundleBuilder {
    doc: Value,
    raw: BTreeMap<String, Vec<u8>>,
}

/// A sealed bundle and the bytes of the raw artifacts the builder was given.
#[derive(Debug, Clone)]
pub struct Built {
    /// The single-file bundle, every digest current.
    pub doc: Value,
    /// Raw artifact bytes by manifest path (artifacts bound by digest only are absent).
    pub raw: BTreeMap<String, Vec<u8>>,
    /// What sealing computed.
    pub sealed: Sealed,
}

impl BundleBuilder {
    /// Start from an evidence envelope and a statement (an empty manifest is created).
    pub fn new(evidence: Value, statement: Value) -> Self {
        let mut doc = Map::new();
        doc.insert("schemaVersion".into(), BUNDLE_SCHEMA_VERSION.into());
        doc.insert("evidence".into(), evidence);
        doc.insert("statement".into(), statement);
        BundleBuilder {
            doc: Value::Object(doc),
            raw: BTreeMap::new(),
        }
    }

    /// Start from a whole single-file bundle (its raw manifest entries are kept).
    pub fn from_document(doc: Value) -> Self {
        BundleBuilder {
            doc,
            raw: BTreeMap::new(),
        }
    }

    /// The bundle as authored so far (digests possibly stale).
    pub fn document(&self) -> &Value {
        &self.doc
    }

    /// The evidence envelope, for editing (`Value::Null` when absent).
    pub fn evidence_mut(&mut self) -> &mut Value {
        self.section_mut("evidence")
    }

    /// The statement, for editing (`Value::Null` when absent).
    pub fn statement_mut(&mut self) -> &mut Value {
        self.section_mut("statement")
    }

    fn section_mut(&mut self, key: &str) -> &mut Value {
        if !self.doc.is_object() {
            self.doc = Value::Object(Map::new());
        }
        match &mut self.doc {
            Value::Object(map) => map.entry(key).or_insert(Value::Null),
            _ => unreachable!("the document was just made an object"),
        }
    }

    fn check_raw_path(path: &str) -> Result<(), FinalizeError> {
        if path == EVIDENCE_PATH || path == STATEMENT_PATH || path == MANIFEST_FILE {
            return Err(FinalizeError::ReservedPath(path.to_string()));
        }
        check_artifact_path(path)?;
        if path.starts_with("observations/") && path.ends_with(".json") {
            return Err(FinalizeError::ReservedPath(path.to_string()));
        }
        Ok(())
    }

    fn put_entry(&mut self, entry: Value) -> Result<(), FinalizeError> {
        let path = entry_path(&entry).unwrap_or("").to_string();
        let artifacts = artifacts_mut(&mut self.doc)?;
        artifacts.retain(|a| entry_path(a) != Some(path.as_str()));
        artifacts.push(entry);
        Ok(())
    }

    /// Add a raw supporting artifact whose bytes the builder keeps (for the
    /// directory form); its length and sha256 are computed here. Replaces an
    /// artifact at the same path. Paths under `observations/` ending in `.json`
    /// and the document paths are reserved.
    pub fn add_raw(
        &mut self,
        path: &str,
        media_type: &str,
        bytes: Vec<u8>,
    ) -> Result<&mut Self, FinalizeError> {
        Self::check_raw_path(path)?;
        let sha = canonical::sha256_hex(&bytes);
        self.put_entry(artifact_entry(path, media_type, bytes.len() as u64, &sha))?;
        self.raw.insert(path.to_string(), bytes);
        Ok(self)
    }

    /// Bind a raw supporting artifact by length and digest only (its bytes live
    /// elsewhere). Replaces an artifact at the same path.
    pub fn bind_raw(
        &mut self,
        path: &str,
        media_type: &str,
        bytes: u64,
        sha256: &str,
    ) -> Result<&mut Self, FinalizeError> {
        Self::check_raw_path(path)?;
        self.put_entry(artifact_entry(path, media_type, bytes, sha256))?;
        self.raw.remove(path);
        Ok(self)
    }

    /// Seal the bundle with [`finalize`].
    pub fn build(mut self) -> Result<Built, FinalizeError> {
        let sealed = finalize(&mut self.doc)?;
        Ok(Built {
            doc: self.doc,
            raw: self.raw,
            sealed,
        })
    }
}

impl Built {
    /// The single-file form: canonical bytes and a trailing newline.
    pub fn file_bytes(&self) -> Result<Vec<u8>, FinalizeError> {
        to_file_bytes(&self.doc)
    }

    /// Write the single-file form to a new file (never overwrites).
    pub fn write_file(&self, path: &Path) -> Result<(), FinalizeError> {
        let bytes = self.file_bytes()?;
        write_new(path, &bytes).map_err(|source| FinalizeError::Io {
            path: path.to_path_buf(),
            source,
        })
    }

    /// Every file of the directory form, by relative path: the integrity
    /// manifest, the two documents and each observation in canonical form, and
    /// the raw artifacts' bytes. Fails when a raw artifact's bytes are unknown.
    pub fn dir_files(&self) -> Result<BTreeMap<String, Vec<u8>>, FinalizeError> {
        let doc = &self.doc;
        let mut files = BTreeMap::new();
        for (key, path) in [
            ("integrity", MANIFEST_FILE),
            ("evidence", EVIDENCE_PATH),
            ("statement", STATEMENT_PATH),
        ] {
            let value = doc
                .get(key)
                .ok_or_else(|| shape(&format!("/{key}"), "an object"))?;
            files.insert(path.to_string(), canonical::to_vec(value)?);
        }
        for obs in doc
            .pointer("/evidence/observations")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let id = obs.get("id").and_then(Value::as_str).unwrap_or("");
            files.insert(
                observation_path(id),
                canonical::to_vec_without_key(obs, OBSERVATION_SHA_KEY)?,
            );
        }
        for a in doc
            .pointer("/integrity/artifacts")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let path = entry_path(a).unwrap_or("");
            if files.contains_key(path) {
                continue;
            }
            let bytes = self
                .raw
                .get(path)
                .ok_or_else(|| FinalizeError::RawBytesMissing(path.to_string()))?;
            files.insert(path.to_string(), bytes.clone());
        }
        Ok(files)
    }

    /// Write the directory form into `dir`, which must not exist yet. Every
    /// file is created below a handle of the new directory, never through a
    /// symlink ([`crate::fsio::DirHandle`]).
    pub fn write_dir(&self, dir: &Path) -> Result<(), FinalizeError> {
        let files = self.dir_files()?;
        let io = |path: &Path| {
            let path = path.to_path_buf();
            move |source| FinalizeError::Io { path, source }
        };
        let root = crate::fsio::DirHandle::create_new(dir).map_err(io(dir))?;
        for (rel, bytes) in files {
            root.write_new(Path::new(&rel), &bytes)
                .map_err(io(&dir.join(&rel)))?;
        }
        Ok(())
    }
}

/// The observation surfaces a passing observation of `kind` covers.
pub fn surfaces_of(kind: &str) -> &'static [&'static str] {
    match kind {
        "PROTOCOL_EXCHANGE" => &["MCP_WIRE_MESSAGES", "STDIO_INPUT_OUTPUT"],
        "PROCESS_EXECUTION" => &["CHILD_PROCESS_LIFECYCLE"],
        "CLEANUP_CHECK" => &["CLEANUP"],
        "FILESYSTEM_EFFECT" => &["FILESYSTEM_OUTPUTS"],
        "REGRESSION_EXECUTION" => &["GENERATED_REGRESSION_EXECUTION"],
        "TRANSPORT_EVENT" => &["TRANSPORT_DISCONNECTS"],
        "AUTHORIZATION_EVENT" => &["AUTHORIZATION_REDIRECTS"],
        "CACHE_EVENT" => &["CACHE_BEHAVIOR"],
        _ => &[],
    }
}

/// A coverage record for `observations` (an array of observations): every
/// surface that some passing integrity-bound observation covers (see
/// [`surfaces_of`]) is required and INSTRUMENTED with those observations (at
/// most 32, the schema's cap); every other surface is not required and
/// NOT_APPLICABLE. A producer whose profile requires more edits the result.
pub fn coverage_from_observations(observations: &Value) -> Value {
    let list = observations.as_array().map(Vec::as_slice).unwrap_or(&[]);
    let surfaces: Vec<Value> = SURFACES
        .iter()
        .map(|surface| {
            let refs: Vec<&str> = list
                .iter()
                .filter(|o| {
                    o.get("strength").and_then(Value::as_str) == Some("INTEGRITY_BOUND")
                        && o.get("outcome").and_then(Value::as_str) == Some("PASS")
                        && surfaces_of(o.get("type").and_then(Value::as_str).unwrap_or(""))
                            .contains(surface)
                })
                .filter_map(|o| o.get("id").and_then(Value::as_str))
                .take(32)
                .collect();
            if refs.is_empty() {
                json!({"surface": surface, "required": false, "status": "NOT_APPLICABLE", "observationRefs": []})
            } else {
                json!({"surface": surface, "required": true, "status": "INSTRUMENTED", "observationRefs": refs})
            }
        })
        .collect();
    json!({"schemaVersion": "mcp-res.observation-coverage/0.2.0", "surfaces": surfaces})
}

const SYN_RUN_ID: &str = "run-synthetic-bench-0001";
const SYN_CLEAN_OP: &str = "op-syn-clean";
const SYN_NEGATIVE_OP: &str = "op-syn-negative";
const SYN_ORACLE: &str = "obs-syn-oracle";
/// Observation types cycled through for the observations beyond the first six.
const SYN_EXTRA_TYPES: [(&str, &str); 4] = [
    ("TRANSPORT_EVENT", "FRAME_BOUNDARY_SEEN"),
    ("CACHE_EVENT", "CACHE_ENTRY_REVALIDATED"),
    ("FILESYSTEM_EFFECT", "SCRATCH_FILE_WRITTEN"),
    ("REGRESSION_EXECUTION", "REGRESSION_CASE_REPLAYED"),
];

fn syn_tool(name: &str) -> Value {
    json!({"name": name, "version": "1.0.0", "sha256": canonical::sha256_hex(format!("{name}@1.0.0").as_bytes())})
}

fn syn_observation(
    id: &str,
    kind: &str,
    reason: &str,
    operation: Option<&str>,
    subject: &str,
    offset: u64,
) -> Value {
    json!({
        "schemaVersion": "mcp-res.observation/0.2.0",
        "id": id,
        "type": kind,
        "strength": "INTEGRITY_BOUND",
        "producer": syn_tool("mcpres-synthetic-producer"),
        "subjectRef": subject,
        "operationRef": operation,
        "startedOffsetMs": offset,
        "durationMs": 4,
        "outcome": "PASS",
        "reasonCode": reason,
        "artifactRefs": [observation_path(id)],
    })
}

/// A complete, valid, deterministic FIXTURE_BACKED_PROTOCOL bundle with
/// `observations` observations (6 to 254; with the two documents the manifest
/// then lists 8 to 256 artifacts), for benchmarks and size tests.
///
/// The first six observations are the ones a passing bundle needs (process,
/// protocol, fixture, the negative control's oracle check, privacy scan and
/// cleanup check); the rest cycle through transport, cache, filesystem and
/// regression observations of the clean control.
pub fn synthetic_bundle(observations: usize) -> Result<Value, FinalizeError> {
    if !(SYNTHETIC_MIN_OBSERVATIONS..=SYNTHETIC_MAX_OBSERVATIONS).contains(&observations) {
        return Err(FinalizeError::OutOfRange {
            what: "the number of synthetic observations",
            value: observations,
            min: SYNTHETIC_MIN_OBSERVATIONS,
            max: SYNTHETIC_MAX_OBSERVATIONS,
        });
    }
    let subject = canonical::sha256_hex(b"mcpres-synthetic-subject@1.0.0");
    let validator = syn_tool("mcpres-synthetic-validator");
    let profile_id = "mcp-res/server-tool-call/v1";
    let descriptor = json!({
        "standardVersion": "0.2.0",
        "profileId": profile_id,
        "profileVersion": "2.0.0",
        "protocolRevision": "2025-11-25",
        "subjectIdentityDigest": subject,
        "configurationProfileDigest": canonical::sha256_hex(b"synthetic-configuration"),
        "operationClass": "tools/call",
        "faults": [{
            "id": "fault/syn-garbled-result",
            "version": "1.0.0",
            "method": "FIXTURE_MUTATION",
            "seed": 4242,
            "targetOperationClass": "tools/call",
            "expectedEffect": "GARBLED_RESULT",
            "reproducibilitySha256": canonical::sha256_hex(b"fault/syn-garbled-result@4242"),
        }],
        "recoveryPolicies": [{
            "id": "policy/syn-no-retry",
            "retryLimit": 0,
            "maxBackoffMs": 0,
            "timeLimitMs": 2000,
            "cancellationBoundary": "operation",
            "sideEffectModel": "READ_ONLY",
            "safetyMechanism": null,
        }],
        "sideEffectModel": "READ_ONLY",
        "resourceLimits": {"inputBytes": 65536, "events": 5000, "retries": 0, "concurrency": 1, "scenarioDurationMs": 60000},
        "validatorPolicy": validator,
        "deterministicSeed": 4242,
    });
    let mut obs = vec![
        syn_observation(
            "obs-syn-process",
            "PROCESS_EXECUTION",
            "CHILD_EXITED_ZERO",
            Some(SYN_CLEAN_OP),
            &subject,
            10,
        ),
        syn_observation(
            "obs-syn-protocol",
            "PROTOCOL_EXCHANGE",
            "WIRE_ROUND_TRIP_COMPLETE",
            Some(SYN_CLEAN_OP),
            &subject,
            20,
        ),
        syn_observation(
            "obs-syn-fixture",
            "FIXTURE_EXECUTION",
            "GARBLED_FIXTURE_SERVED",
            Some(SYN_NEGATIVE_OP),
            &subject,
            110,
        ),
        syn_observation(
            SYN_ORACLE,
            "VALIDATOR_CHECK",
            "GARBLED_RESULT_REJECTED",
            Some(SYN_NEGATIVE_OP),
            &subject,
            120,
        ),
        syn_observation(
            "obs-syn-privacy",
            "PRIVACY_SCAN",
            "NO_SECRETS_FOUND",
            None,
            &subject,
            200,
        ),
        syn_observation(
            "obs-syn-cleanup",
            "CLEANUP_CHECK",
            "SCRATCH_SPACE_EMPTY",
            None,
            &subject,
            210,
        ),
    ];
    for i in SYNTHETIC_MIN_OBSERVATIONS..observations {
        let (kind, reason) = SYN_EXTRA_TYPES[i % SYN_EXTRA_TYPES.len()];
        let id = format!("obs-syn-extra-{i:03}");
        obs.push(syn_observation(
            &id,
            kind,
            reason,
            Some(SYN_CLEAN_OP),
            &subject,
            300 + 10 * i as u64,
        ));
    }
    let observations = Value::Array(obs);
    let coverage = coverage_from_observations(&observations);
    let outcome_hash = canonical::sha256_hex(b"synthetic-outcome");
    let evidence = json!({
        "schemaVersion": "mcp-res.evidence-envelope/0.2.0",
        "standardVersion": "0.2.0",
        "profile": {"id": profile_id, "version": "2.0.0"},
        "protocolRevision": "2025-11-25",
        "evidenceClassClaim": "FIXTURE_BACKED_PROTOCOL",
        "subject": {
            "subjectType": "MCP_SERVER",
            "name": "mcpres-synthetic-subject",
            "version": "1.0.0",
            "artifactSha256": canonical::sha256_hex(b"mcpres-synthetic-subject-artifact"),
            "identityDigest": subject,
        },
        "scenario": {"fingerprint": "", "descriptor": descriptor},
        "run": {
            "id": SYN_RUN_ID,
            "startedAt": "2026-01-02T03:04:05.000Z",
            "finishedAt": "2026-01-02T03:05:05.000Z",
            "monotonicDurationMs": 60000,
            "environment": {
                "runner": syn_tool("mcpres-synthetic-runner"),
                "os": "synthetic",
                "architecture": "any",
                "environmentDigest": canonical::sha256_hex(b"synthetic-environment"),
            },
        },
        "operations": [
            {
                "runId": SYN_RUN_ID, "operationId": SYN_CLEAN_OP, "parentOperationId": null,
                "kind": "CLEAN_CONTROL", "faultId": null, "recoveryPolicyId": null, "attempt": 0,
                "outcome": "PASS", "startedOffsetMs": 0, "durationMs": 50000,
            },
            {
                "runId": SYN_RUN_ID, "operationId": SYN_NEGATIVE_OP, "parentOperationId": null,
                "kind": "NEGATIVE_CONTROL", "faultId": "fault/syn-garbled-result",
                "recoveryPolicyId": "policy/syn-no-retry", "attempt": 0, "outcome": "EXPECTED_FAILURE",
                "startedOffsetMs": 100, "durationMs": 40,
                "negativeObservation": {
                    "propertyUnderTest": "tools/call result is well-formed",
                    "propertyReached": true,
                    "expectedVerdict": "REJECT",
                    "observedVerdict": "REJECT",
                    "expectedStopReason": "GARBLED_RESULT",
                    "observedStopReason": "GARBLED_RESULT",
                    "oracleEvidenceRef": observation_path(SYN_ORACLE),
                    "prerequisitesReached": ["SESSION_OPEN", "TOOL_INVOKED"],
                },
            },
        ],
        "observations": observations,
        "coverage": coverage,
        "trialSummary": {
            "schemaVersion": "mcp-res.trial-summary/0.2.0",
            "plannedTrials": 1,
            "completedTrials": 1,
            "seeds": [4242],
            "processCount": 1,
            "counts": {"success": 1, "failure": 0, "incomplete": 0},
            "distinctOutcomeHashes": [outcome_hash],
            "durationMs": {"minimum": 60000, "median": 60000, "p95": 60000},
            "environments": ["synthetic-any"],
            "stopRule": "one trial",
            "classification": "SINGLE_OBSERVATION",
        },
        "supportingArtifactManifestDigest": "",
    });
    let statement = json!({
        "schemaVersion": "mcp-res.conformance-statement/0.2.0",
        "standardVersion": "0.2.0",
        "profileId": profile_id,
        "profileVersion": "2.0.0",
        "protocolRevision": "2025-11-25",
        "subjectType": "MCP_SERVER",
        "subjectName": "mcpres-synthetic-subject",
        "subjectVersion": "1.0.0",
        "evidenceClass": "FIXTURE_BACKED_PROTOCOL",
        "result": "PASS",
        "stabilityClassification": "SINGLE_OBSERVATION",
        "validator": validator,
        "verifiedAt": "2026-01-02T03:06:00.000Z",
    });
    Ok(BundleBuilder::new(evidence, statement).build()?.doc)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diag::codes as c;
    use crate::validate::core::validate_bundle;

    fn codes(doc: &Value) -> Vec<crate::diag::Code> {
        validate_bundle(doc)
            .findings
            .iter()
            .map(|f| f.code)
            .collect()
    }

    #[test]
    fn synthetic_bundles_are_valid_at_every_size() {
        for n in [6, 7, 31, 100, 254] {
            let doc = synthetic_bundle(n).unwrap();
            let report = validate_bundle(&doc);
            assert!(report.valid, "n={n}: {:?}", report.findings);
            assert_eq!(
                report.evidence_class.as_deref(),
                Some("FIXTURE_BACKED_PROTOCOL")
            );
            let artifacts = doc["integrity"]["artifacts"].as_array().unwrap();
            assert_eq!(artifacts.len(), n + 2);
        }
        assert!(matches!(
            synthetic_bundle(5),
            Err(FinalizeError::OutOfRange { .. })
        ));
        assert!(matches!(
            synthetic_bundle(255),
            Err(FinalizeError::OutOfRange { .. })
        ));
    }

    #[test]
    fn synthetic_bundles_are_deterministic() {
        let a = to_file_bytes(&synthetic_bundle(40).unwrap()).unwrap();
        let b = to_file_bytes(&synthetic_bundle(40).unwrap()).unwrap();
        assert_eq!(a, b);
    }

    #[test]
    fn finalize_repairs_every_stale_digest() {
        let mut doc = synthetic_bundle(8).unwrap();
        // Edit authored content: every digest above it goes stale.
        doc["evidence"]["observations"][0]["reasonCode"] = "CHILD_EXITED_AFTER_SIGTERM".into();
        doc["evidence"]["scenario"]["descriptor"]["deterministicSeed"] = 7.into();
        doc["statement"]["verifiedAt"] = "2026-01-02T03:07:00.000Z".into();
        assert!(!validate_bundle(&doc).valid);
        let sealed = finalize(&mut doc).unwrap();
        assert_eq!(codes(&doc), Vec::<&str>::new());
        assert_eq!(sealed.artifacts, 10);
        assert_eq!(
            doc["integrity"]["bundleDigest"],
            sealed.bundle_digest.as_str()
        );
        // Sealing a sealed bundle changes nothing.
        let before = doc.clone();
        finalize(&mut doc).unwrap();
        assert_eq!(before, doc);
    }

    #[test]
    fn finalize_fills_absent_digests_and_manifest() {
        let mut doc = synthetic_bundle(6).unwrap();
        doc.as_object_mut().unwrap().remove("integrity");
        for o in doc["evidence"]["observations"].as_array_mut().unwrap() {
            o.as_object_mut().unwrap().remove(OBSERVATION_SHA_KEY);
        }
        doc["statement"]
            .as_object_mut()
            .unwrap()
            .remove("evidenceSha256");
        finalize(&mut doc).unwrap();
        assert!(validate_bundle(&doc).valid);
        let paths: Vec<&str> = doc["integrity"]["artifacts"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| a["path"].as_str().unwrap())
            .collect();
        let mut sorted = paths.clone();
        sorted.sort_by(|a, b| canonical::cmp_utf16(a, b));
        assert_eq!(paths, sorted);
        assert!(paths.contains(&"observations/obs-syn-cleanup.json"));
    }

    #[test]
    fn removed_observations_lose_their_manifest_entry() {
        let mut doc = synthetic_bundle(9).unwrap();
        let obs = doc["evidence"]["observations"].as_array_mut().unwrap();
        obs.pop();
        let fresh = coverage_from_observations(&doc["evidence"]["observations"]);
        doc["evidence"]["coverage"] = fresh;
        finalize(&mut doc).unwrap();
        assert!(validate_bundle(&doc).valid);
        assert_eq!(doc["integrity"]["artifacts"].as_array().unwrap().len(), 10);
    }

    #[test]
    fn raw_artifacts_are_kept_and_bound() {
        let mut b = BundleBuilder::from_document(synthetic_bundle(6).unwrap());
        b.add_raw("raw/wire.bin", "application/octet-stream", vec![7u8; 3000])
            .unwrap();
        b.bind_raw("raw/elsewhere.log", "text/plain", 12, &"ab".repeat(32))
            .unwrap();
        let built = b.build().unwrap();
        assert!(validate_bundle(&built.doc).valid);
        let entry = built.doc["integrity"]["artifacts"]
            .as_array()
            .unwrap()
            .iter()
            .find(|a| a["path"] == "raw/elsewhere.log")
            .unwrap();
        assert_eq!(entry["bytes"], 12);
        assert_eq!(entry["sha256"], "ab".repeat(32));
        // The bound-only artifact has no bytes, so no directory form.
        assert!(matches!(
            built.dir_files(),
            Err(FinalizeError::RawBytesMissing(p)) if p == "raw/elsewhere.log"
        ));
    }

    #[test]
    fn directory_form_loads_back_intact() {
        let mut b = BundleBuilder::from_document(synthetic_bundle(7).unwrap());
        b.add_raw(
            "raw/wire.bin",
            "application/octet-stream",
            (0..=255u8).cycle().take(4096).collect(),
        )
        .unwrap();
        let built = b.build().unwrap();
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("bundle");
        built.write_dir(&dir).unwrap();
        let (doc, findings) =
            crate::bundle::dir::load_dir(&dir, &crate::json::Limits::default()).unwrap();
        assert!(findings.is_empty(), "{findings:?}");
        let doc = doc.expect("the directory's evidence and statement are readable");
        assert_eq!(doc, built.doc);
        assert!(validate_bundle(&doc).valid);
        // Never overwrites.
        assert!(matches!(
            built.write_dir(&dir),
            Err(FinalizeError::Io { .. })
        ));
    }

    #[test]
    fn raw_paths_are_checked() {
        let mut b = BundleBuilder::from_document(synthetic_bundle(6).unwrap());
        for bad in ["../x", "/abs", "a//b", "with space", "ü.bin", ""] {
            assert!(
                matches!(
                    b.add_raw(bad, "text/plain", vec![1]),
                    Err(FinalizeError::BadPath { .. })
                ),
                "{bad:?}"
            );
        }
        for reserved in [
            EVIDENCE_PATH,
            STATEMENT_PATH,
            MANIFEST_FILE,
            "observations/obs-x.json",
        ] {
            assert!(
                matches!(
                    b.add_raw(reserved, "text/plain", vec![1]),
                    Err(FinalizeError::ReservedPath(_))
                ),
                "{reserved:?}"
            );
        }
    }

    #[test]
    fn refuses_what_cannot_be_sealed() {
        let mut doc = synthetic_bundle(6).unwrap();
        let first = doc["evidence"]["observations"][0].clone();
        doc["evidence"]["observations"]
            .as_array_mut()
            .unwrap()
            .push(first);
        assert!(matches!(
            finalize(&mut doc),
            Err(FinalizeError::DuplicateObservationId(_))
        ));

        let mut doc = synthetic_bundle(6).unwrap();
        doc["evidence"]["run"]["monotonicDurationMs"] = json!(1.5);
        assert!(matches!(
            finalize(&mut doc),
            Err(FinalizeError::Canonical(_))
        ));

        let mut doc = synthetic_bundle(6).unwrap();
        doc["evidence"]["observations"][0]["id"] = json!("obs-a:b");
        assert!(matches!(
            finalize(&mut doc),
            Err(FinalizeError::BadPath { .. })
        ));

        let mut doc = json!({"evidence": {}, "statement": {}});
        assert!(matches!(
            finalize(&mut doc),
            Err(FinalizeError::Shape { .. })
        ));

        let mut b = BundleBuilder::from_document(synthetic_bundle(254).unwrap());
        b.add_raw("raw/one-too-many.bin", "application/octet-stream", vec![0])
            .unwrap();
        assert!(matches!(
            b.build(),
            Err(FinalizeError::TooManyArtifacts(257))
        ));
    }

    #[test]
    fn steps_allow_breaking_exactly_one_binding() {
        let mut doc = synthetic_bundle(6).unwrap();
        doc["evidence"]["observations"][1][OBSERVATION_SHA_KEY] = "0".repeat(64).into();
        seal_statement(&mut doc).unwrap();
        seal_integrity(&mut doc).unwrap();
        assert_eq!(codes(&doc), vec![c::OBSERVATION_HASH_MISMATCH]);
    }

    #[test]
    fn coverage_marks_observed_surfaces_required() {
        let doc = synthetic_bundle(6).unwrap();
        let coverage = coverage_from_observations(&doc["evidence"]["observations"]);
        let surfaces = coverage["surfaces"].as_array().unwrap();
        assert_eq!(surfaces.len(), SURFACES.len());
        let wire = surfaces
            .iter()
            .find(|s| s["surface"] == "MCP_WIRE_MESSAGES")
            .unwrap();
        assert_eq!(wire["required"], true);
        assert_eq!(wire["observationRefs"], json!(["obs-syn-protocol"]));
        let token = surfaces
            .iter()
            .find(|s| s["surface"] == "TOKEN_ENDPOINT")
            .unwrap();
        assert_eq!(token["status"], "NOT_APPLICABLE");
    }
}
