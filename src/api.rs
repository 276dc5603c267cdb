//! The library's front door: validate, verify, canonicalize and digest MCP-RES
//! documents from your own program, with the same results the `mcpres`
//! command prints.
//!
//! Everything here is a thin facade over the lower modules ([`crate::bundle`]
//! loads, [`mod@crate::validate`] judges, [`crate::json::canonical`] hashes);
//! it adds no rules of its own. None of it needs an async runtime or the
//! network, and all of it works with `default-features = false`.
//!
//! | What | Function | The command it matches |
//! | --- | --- | --- |
//! | judge any document (bytes or a path) | [`validate()`] | `mcpres validate` |
//! | judge an attested bundle | [`verify()`] | `mcpres verify` |
//! | canonical bytes (RFC 8785 style, as the standard defines) | [`canonicalize()`] | `mcpres canonicalize` |
//! | a named SHA-256 digest | [`digest()`] | `mcpres digest --kind` |
//!
//! The report of one input, [`Outcome::to_json`], is the object
//! `mcpres validate --format json` prints for it (one line per input), and
//! [`Outcome::status`] is the exit code the command would give for that input
//! alone.
//!
//! ```
//! use mcpres::api::{Input, Status, ValidateOptions};
//! use mcpres::produce::builder::{synthetic_bundle, to_file_bytes};
//!
//! let bytes = to_file_bytes(&synthetic_bundle(16).unwrap()).unwrap();
//! let outcome = mcpres::validate(Input::bytes("bundle.json", &bytes), &ValidateOptions::default());
//! assert_eq!(outcome.status(), Status::Valid);
//! let json = outcome.to_json();
//! assert_eq!(json["file"], "bundle.json");
//! assert_eq!(json["valid"], true);
//! ```

use std::path::{Path, PathBuf};

use serde_json::{Map, Value, json};

use crate::attest::policy::VerifierPolicy;
use crate::bundle::{self, LoadError, dir::DirLimits};
use crate::diag::{Finding, Report, codes};
use crate::json::canonical::{self, CanonicalError};
use crate::json::time::Timestamp;
use crate::json::{Limits, ReadError};

/// What a check needs besides the input: the per-document limits, the trust
/// policy and time for attested bundles, and the original result an
/// official-conformance attachment records. `ValidateOptions::default()` is
/// what `mcpres validate` uses without flags.
#[derive(Debug, Clone, Default)]
pub struct ValidateOptions {
    /// The JSON reader's limits (`--max-bytes`, `--max-depth`, ...).
    pub limits: Limits,
    /// The directory form's limits (`--max-artifact-bytes`).
    pub dir_limits: DirLimits,
    /// The trust policy attested bundles are judged against (`--trust-policy`).
    pub trust_policy: Option<VerifierPolicy>,
    /// The evaluation time of attested bundles (`--at`); `None` is now.
    pub at: Option<Timestamp>,
    /// The unsanitized original result bytes (`--original-result`).
    pub original_result: Option<Vec<u8>>,
}

impl ValidateOptions {
    /// Judge attested bundles against `policy`.
    pub fn with_trust_policy(mut self, policy: VerifierPolicy) -> Self {
        self.trust_policy = Some(policy);
        self
    }

    /// Evaluate attested bundles at `at` instead of now.
    pub fn with_time(mut self, at: Timestamp) -> Self {
        self.at = Some(at);
        self
    }

    /// Use these JSON reader limits.
    pub fn with_limits(mut self, limits: Limits) -> Self {
        self.limits = limits;
        self
    }

    fn rules(&self) -> crate::validate::Options {
        crate::validate::Options {
            trust_policy: self.trust_policy.clone(),
            at: self.at,
            original_result: self.original_result.clone(),
        }
    }
}

/// One input: a path (a single-file document, a bundle directory, a profile
/// evaluation directory or a field matrix directory) or the bytes of a
/// single-file document, with the name to report it under.
#[derive(Debug, Clone, Copy)]
pub enum Input<'a> {
    /// A file or directory on disk; symlinks are refused, never followed.
    Path(&'a Path),
    /// The bytes of one JSON document; `name` is the report's `file`.
    Bytes { name: &'a str, bytes: &'a [u8] },
}

impl<'a> Input<'a> {
    /// The bytes of one document, reported as `name`.
    pub fn bytes(name: &'a str, bytes: &'a [u8]) -> Self {
        Input::Bytes { name, bytes }
    }

    /// A file or directory.
    pub fn path(path: &'a Path) -> Self {
        Input::Path(path)
    }
}

impl<'a> From<&'a Path> for Input<'a> {
    fn from(path: &'a Path) -> Self {
        Input::Path(path)
    }
}

impl<'a> From<&'a PathBuf> for Input<'a> {
    fn from(path: &'a PathBuf) -> Self {
        Input::Path(path)
    }
}

/// What one input amounts to, as an exit code: the command's exit code for a
/// batch is the highest status of its inputs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Status {
    /// Exit 0: valid.
    Valid,
    /// Exit 1: a failing diagnostic.
    Failing,
    /// Exit 2: unreadable or unusable input.
    Unusable,
}

impl Status {
    /// The process exit code `mcpres validate` uses for this status.
    pub fn exit_code(self) -> u8 {
        match self {
            Status::Valid => 0,
            Status::Failing => 1,
            Status::Unusable => 2,
        }
    }
}

/// A readable input and its report.
#[derive(Debug)]
pub struct Checked {
    /// The validator's report.
    pub report: Report,
    /// The bytes of a single-file input (for pointing into it); `None` for a directory.
    pub source: Option<Vec<u8>>,
}

/// The result of checking one input.
#[derive(Debug)]
pub struct Outcome {
    /// The path (or the name given with the bytes).
    pub path: PathBuf,
    /// The report, or why the input could not be used at all.
    pub result: Result<Checked, LoadError>,
}

impl Outcome {
    /// The exit status this input alone calls for: an unreadable input and an
    /// `MCP_RES_INPUT_INVALID` finding are unusable (2), any other finding is
    /// failing (1).
    pub fn status(&self) -> Status {
        match &self.result {
            Err(_) => Status::Unusable,
            Ok(c) if c.report.valid => Status::Valid,
            Ok(c)
                if c.report
                    .findings
                    .iter()
                    .any(|f| f.code == codes::INPUT_INVALID) =>
            {
                Status::Unusable
            }
            Ok(_) => Status::Failing,
        }
    }

    /// Whether the input is valid.
    pub fn valid(&self) -> bool {
        self.status() == Status::Valid
    }

    /// The validator's report (`None` when the input could not be read).
    pub fn report(&self) -> Option<&Report> {
        self.result.as_ref().ok().map(|c| &c.report)
    }

    /// The object `mcpres validate --format json` prints for this input:
    /// `file`, then the report's fields (`valid`, `diagnostics`,
    /// `schemaErrors`, `evidenceClass`, `findings` and the family's own
    /// fields); an unreadable input gets `valid: false`, the
    /// `MCP_RES_INPUT_INVALID` diagnostic and a `message`.
    pub fn to_json(&self) -> Value {
        let mut m = Map::new();
        m.insert("file".into(), json!(self.path.display().to_string()));
        match &self.result {
            Err(e) => {
                m.insert("valid".into(), json!(false));
                m.insert("diagnostics".into(), json!([codes::INPUT_INVALID]));
                m.insert("message".into(), json!(e.to_string()));
                m.insert("schemaErrors".into(), json!([]));
                let mut f = load_error_finding(e);
                if let LoadError::Json { source, .. } = e {
                    f.message = format!(
                        "{} (line {}, column {})",
                        source.kind, source.line, source.column
                    );
                }
                m.insert("findings".into(), json!([f]));
            }
            Ok(Checked { report, .. }) => {
                if let Value::Object(r) = serde_json::to_value(report).unwrap_or(Value::Null) {
                    m.extend(r);
                }
            }
        }
        Value::Object(m)
    }
}

/// The finding of an input that could not be loaded. A path that does not
/// exist gets a hint about the path, not about writing JSON.
pub fn load_error_finding(e: &LoadError) -> Finding {
    let mut f = Finding::new(codes::INPUT_INVALID, "", e.to_string());
    if let LoadError::Io { source, .. } = e
        && source.kind() == std::io::ErrorKind::NotFound
    {
        f.hint =
            "Nothing exists at this path: check its spelling and the directory mcpres runs in."
                .to_owned();
    }
    f
}

/// Validate one input with the rules of its family, as `mcpres validate`
/// does: storage findings of a directory first, then the document's.
///
/// ```
/// use mcpres::api::{Input, Status, ValidateOptions};
///
/// let outcome = mcpres::validate(Input::bytes("broken.json", b"{\"a\": 1,}"), &ValidateOptions::default());
/// assert_eq!(outcome.status(), Status::Unusable);
/// assert_eq!(outcome.to_json()["diagnostics"][0], "MCP_RES_INPUT_INVALID");
///
/// let missing = std::path::Path::new("no/such/bundle.json");
/// assert_eq!(mcpres::validate(missing, &ValidateOptions::default()).status(), Status::Unusable);
/// ```
pub fn validate<'a>(input: impl Into<Input<'a>>, options: &ValidateOptions) -> Outcome {
    check(input.into(), options, false)
}

/// Judge one input as an attested bundle, as `mcpres verify` does: any other
/// document fails the attested bundle's schema.
///
/// ```
/// use mcpres::api::{Input, Status, ValidateOptions};
/// use mcpres::produce::builder::{synthetic_bundle, to_file_bytes};
///
/// // A plain (unattested) bundle is valid evidence, but not an attested bundle.
/// let bytes = to_file_bytes(&synthetic_bundle(16).unwrap()).unwrap();
/// let outcome = mcpres::verify(Input::bytes("bundle.json", &bytes), &ValidateOptions::default());
/// assert_eq!(outcome.status(), Status::Failing);
/// assert!(outcome.to_json()["findings"][0]["message"]
///     .as_str()
///     .unwrap()
///     .contains("not an attested bundle"));
/// ```
pub fn verify<'a>(input: impl Into<Input<'a>>, options: &ValidateOptions) -> Outcome {
    check(input.into(), options, true)
}

fn check(input: Input<'_>, options: &ValidateOptions, require_attested: bool) -> Outcome {
    let rules = options.rules();
    match input {
        Input::Path(path) => Outcome {
            path: path.to_path_buf(),
            result: match bundle::read_if_file(path, &options.limits) {
                Ok(Some(bytes)) => {
                    check_bytes(path, &bytes, &options.limits, &rules, require_attested)
                }
                Ok(None) => bundle::load_with(path, &options.limits, &options.dir_limits)
                    .map(|l| check_loaded(l, &rules, require_attested)),
                Err(e) => Err(e),
            },
        },
        Input::Bytes { name, bytes } => Outcome {
            path: PathBuf::from(name),
            result: check_bytes(
                Path::new(name),
                bytes,
                &options.limits,
                &rules,
                require_attested,
            ),
        },
    }
}

/// The `schemaVersion` of a v0.2 conformance bundle.
const BUNDLE_VERSION: &str = "mcp-res.conformance-bundle/0.2.0";

/// Check one single-file document, read once as a [`crate::json::Doc`]. A
/// v0.2 conformance bundle (the common case) is judged by the core rules on
/// the `Doc` itself; any other document becomes a `Value` and goes the general
/// way ([`check_loaded`]). A refusal is the strict reader's either way.
fn check_bytes(
    path: &Path,
    bytes: &[u8],
    limits: &Limits,
    rules: &crate::validate::Options,
    require_attested: bool,
) -> Result<Checked, LoadError> {
    if bytes.len() > limits.max_bytes {
        return Err(LoadError::TooLarge {
            path: path.to_path_buf(),
            bytes: bytes.len() as u64,
            limit: limits.max_bytes,
        });
    }
    let (doc, layout) = match crate::json::reader::parse_doc_with_layout(bytes, limits) {
        Ok(read) => read,
        Err(source) => {
            return Err(LoadError::Json {
                path: path.to_path_buf(),
                source,
                bytes: bytes.to_vec(),
            });
        }
    };
    if !require_attested
        && doc.get("schemaVersion").and_then(crate::json::Doc::as_str) == Some(BUNDLE_VERSION)
    {
        let written = layout
            .as_ref()
            .map(|layout| crate::json::reader::Written { bytes, layout });
        return Ok(Checked {
            report: crate::validate::core::validate_bundle_doc(&doc, written),
            source: Some(bytes.to_vec()),
        });
    }
    let loaded = bundle::Loaded {
        doc: Some(doc.into_value()),
        source: Some(bytes.to_vec()),
        layout,
        storage_findings: Vec::new(),
        profile_dir: None,
        field_dir: None,
    };
    Ok(check_loaded(loaded, rules, require_attested))
}

/// The `schemaVersion` of a trust policy.
const TRUST_POLICY_VERSION: &str = "mcp-res.trust-policy/0.2.0";

/// Validate one loaded document, storage findings first. `require_attested`
/// is `mcpres verify`: every input is judged as an attested bundle.
pub fn check_loaded(
    loaded: bundle::Loaded,
    rules: &crate::validate::Options,
    require_attested: bool,
) -> Checked {
    if let (Some(dir), false) = (&loaded.field_dir, require_attested) {
        return Checked {
            report: crate::validate::field_dir::validate_field_dir(dir),
            source: None,
        };
    }
    if let (Some(dir), false) = (&loaded.profile_dir, require_attested) {
        return Checked {
            report: crate::validate::profile_dir::validate_profile_dir(dir),
            source: None,
        };
    }
    let Some(doc) = &loaded.doc else {
        return Checked {
            report: Report::from_findings(loaded.storage_findings, Vec::new(), None),
            source: loaded.source,
        };
    };
    let report = if require_attested {
        // `verify` judges every input as an attested wrapper, as the reference
        // attestation validators do; other documents fail its schema.
        let mut report = crate::validate::attested::validate_attested(doc, rules);
        let family = crate::validate::family_of(doc);
        if family != crate::validate::Family::Attested
            && doc.get("schemaVersion").is_some()
            && let Some(first) = report.findings.first_mut()
        {
            first.message = format!(
                "this is a {}, not an attested bundle (mcp-res.attested-conformance-bundle/0.2.0): {}",
                family.name(),
                first.message
            );
            first.hint =
                "Use `mcpres validate` for other documents, or `mcpres sign` to attest a bundle."
                    .to_owned();
        }
        report
    } else if doc.get("schemaVersion").and_then(Value::as_str) == Some(TRUST_POLICY_VERSION) {
        trust_policy_as_input()
    } else {
        let written = loaded
            .source
            .as_deref()
            .zip(loaded.layout.as_ref())
            .map(|(bytes, layout)| crate::json::reader::Written { bytes, layout });
        crate::validate::validate_document_written(doc, written, rules)
    };
    let report = if loaded.storage_findings.is_empty() {
        report
    } else {
        let mut findings = loaded.storage_findings;
        findings.extend(report.findings);
        let mut merged =
            Report::from_findings(findings, report.schema_errors, report.evidence_class);
        merged.extra = report.extra;
        merged
    };
    Checked {
        report,
        source: loaded.source,
    }
}

/// A trust policy given as a document to validate: it is no evidence, and
/// judging it as a bundle would only list bundle findings. It is unusable
/// input (exit 2), named for what it is.
fn trust_policy_as_input() -> Report {
    let mut finding = Finding::new(
        codes::INPUT_INVALID,
        "/schemaVersion",
        "this is a trust policy (mcp-res.trust-policy/0.2.0), not a document to validate: pass it with --trust-policy",
    );
    finding.hint = "mcpres verify ATTESTED.json --trust-policy POLICY.json checks an attested bundle against it".to_owned();
    Report::from_findings(vec![finding], Vec::new(), None)
}

/// Why [`canonicalize()`] or [`digest()`] could not give an answer.
#[derive(Debug, thiserror::Error)]
pub enum ApiError {
    /// The bytes are not one strict JSON document within the limits.
    #[error("not a readable JSON document: {0}")]
    Read(#[from] ReadError),
    /// The document holds a value with no canonical form.
    #[error("no canonical form: {0}")]
    Canonical(#[from] CanonicalError),
    /// The document is not of the kind the digest needs.
    #[error("{0}")]
    Digest(String),
    /// The path could not be read as a document or bundle directory.
    #[error("{0}")]
    Load(#[from] LoadError),
}

/// The canonical bytes of a JSON document (what `mcpres canonicalize`
/// writes), read with the default limits.
///
/// ```
/// let bytes = mcpres::canonicalize(b"{ \"b\": [1, 2], \"a\": \"x\" }").unwrap();
/// assert_eq!(bytes, br#"{"a":"x","b":[1,2]}"#);
/// assert!(mcpres::canonicalize(b"{\"a\": 1.5}").is_err());
/// ```
pub fn canonicalize(bytes: &[u8]) -> Result<Vec<u8>, ApiError> {
    let value = crate::json::parse(bytes, &Limits::default())?;
    Ok(canonical::to_vec(&value)?)
}

/// [`canonicalize()`] of the JSON file at `path` (what `mcpres canonicalize
/// FILE` writes), read with the default limits; symlinks are refused.
pub fn canonicalize_path(path: &Path) -> Result<Vec<u8>, ApiError> {
    let (value, _) = bundle::read_json(path, &Limits::default())?;
    Ok(canonical::to_vec(&value)?)
}

/// Which digest [`digest()`] computes: the same names as `mcpres digest --kind`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DigestKind {
    /// An observation's `observationSha256` (the canonical observation without that key).
    Observation,
    /// A scenario descriptor's digest (the bundle's, the scenario's, or the document itself).
    Scenario,
    /// The digest of a bundle's `evidence` (or of an evidence document).
    Evidence,
    /// The digest of a bundle's `statement` (or of a statement document).
    Statement,
    /// The execution-instance digest of a bundle (its evidence and `statement.result`).
    Execution,
    /// The bundle digest over the integrity manifest's artifacts.
    Bundle,
}

/// A digest of a JSON document, as lowercase hex (what `mcpres digest` prints).
///
/// ```
/// use mcpres::api::DigestKind;
/// use mcpres::produce::builder::{synthetic_bundle, to_file_bytes};
///
/// let bytes = to_file_bytes(&synthetic_bundle(16).unwrap()).unwrap();
/// let digest = mcpres::digest(&bytes, DigestKind::Evidence).unwrap();
/// assert_eq!(digest.len(), 64);
/// assert!(mcpres::digest(b"{}", DigestKind::Execution).is_err());
/// ```
pub fn digest(bytes: &[u8], kind: DigestKind) -> Result<String, ApiError> {
    let doc = crate::json::parse(bytes, &Limits::default())?;
    digest_value(&doc, kind)
}

/// [`digest()`] of the document at `path`: a JSON file, or a bundle
/// directory reassembled as `mcpres digest` does.
pub fn digest_path(path: &Path, kind: DigestKind) -> Result<String, ApiError> {
    match bundle::load(path, &Limits::default())? {
        bundle::Loaded { doc: Some(doc), .. } => digest_value(&doc, kind),
        _ => Err(ApiError::Digest(
            "the bundle directory's evidence or statement cannot be read".to_owned(),
        )),
    }
}

fn pick<'a>(doc: &'a Value, pointers: &[&str]) -> Option<&'a Value> {
    pointers.iter().find_map(|p| doc.pointer(p))
}

/// [`digest()`] of a document already parsed (a file or a bundle directory
/// reassembled by [`bundle::load`]).
pub fn digest_value(doc: &Value, kind: DigestKind) -> Result<String, ApiError> {
    let canonical_digest =
        |d: &Value| canonical::digest(d).map_err(|e| ApiError::Digest(e.to_string()));
    let is_bundle = doc.get("evidence").is_some();
    match kind {
        DigestKind::Observation => {
            if doc.get("observationSha256").is_none()
                && doc.get("schemaVersion").and_then(Value::as_str)
                    != Some("mcp-res.observation/0.2.0")
            {
                Err(ApiError::Digest("expected an observation object".into()))
            } else {
                canonical::to_vec_without_key(doc, "observationSha256")
                    .map(|b| canonical::sha256_hex(&b))
                    .map_err(|e| ApiError::Digest(e.to_string()))
            }
        }
        DigestKind::Scenario => pick(
            doc,
            &[
                "/evidence/scenario/descriptor",
                "/scenario/descriptor",
                "/descriptor",
            ],
        )
        .or(
            if doc.get("evidence").is_none() && doc.get("scenario").is_none() {
                Some(doc)
            } else {
                None
            },
        )
        .ok_or_else(|| ApiError::Digest("no scenario descriptor found".into()))
        .and_then(canonical_digest),
        DigestKind::Evidence => {
            let target = if is_bundle {
                doc.get("evidence")
            } else {
                Some(doc)
            };
            target
                .ok_or_else(|| ApiError::Digest("no evidence found".into()))
                .and_then(canonical_digest)
        }
        DigestKind::Statement => {
            let target = if doc.get("statement").is_some() {
                doc.get("statement")
            } else {
                Some(doc)
            };
            target
                .ok_or_else(|| ApiError::Digest("no statement found".into()))
                .and_then(canonical_digest)
        }
        DigestKind::Execution => match (
            doc.get("evidence"),
            doc.pointer("/statement/result").and_then(Value::as_str),
        ) {
            (Some(ev), Some(result)) => Ok(crate::validate::core::execution_digest(ev, result)),
            _ => Err(ApiError::Digest(
                "the execution digest needs a bundle (evidence and statement.result)".into(),
            )),
        },
        DigestKind::Bundle => pick(doc, &["/integrity/artifacts", "/artifacts"])
            .and_then(Value::as_array)
            .map(|a| crate::validate::core::bundle_digest(a))
            .ok_or_else(|| ApiError::Digest("no integrity manifest artifacts found".into())),
    }
}
