//! The project's own closed Draft 2020-12 schemas (files in `schemas/`), embedded and compiled once.
//!
//! Each of the 17 MCP-RES v0.2 document types has one schema file under `schemas/`, with the
//! `$id` `https://mcpres.dev/schemas/v0.2.0/<name>.schema.json`; so has mcpres's own `run.json`
//! of a profile evaluation directory (`mcpres-profile-run`, see [`SchemaKind::ProfileRun`]) and its
//! `matrix.json` of a field matrix directory (`mcpres-field-matrix`). The files reference each other
//! with relative `$ref`s, which resolve against an in-memory registry of the embedded texts, so
//! nothing is ever fetched (no network, no file system). A kind's validator is compiled the first
//! time it is needed (registering only the schemas that kind reaches) and then reused for the
//! rest of the process.
//!
//! Format assertion is on: `date-time` is checked by [`crate::json::time::is_date_time`]
//! (RFC 3339 with upper- or lowercase `T` and `Z` and a leap second `:60` only at 23:59 UTC, plus
//! what both reference validators accept: a whitespace separator and the offsets `+hh` and
//! `+hhmm`; an offset or `Z` is required; see spec/conformance.md, entry 17); `uri` must be an
//! absolute RFC 3986 URI. Patterns follow ECMA-262 semantics (`.` does not match line
//! terminators), as JSON Schema requires.
//!
//! Error messages never quote the offending value (it may be a secret); they name the rule and the
//! JSON pointer of the value instead.

use std::fmt;
use std::sync::OnceLock;

use jsonschema::error::{TypeKind, ValidationErrorKind};
use jsonschema::{Draft, PatternOptions, Registry, ValidationError, Validator};
use serde_json::Value;

/// Every MCP-RES v0.2 document type that has a schema.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum SchemaKind {
    ConformanceBundle,
    EvidenceEnvelope,
    ConformanceStatement,
    IntegrityManifest,
    Observation,
    ObservationCoverage,
    TrialSummary,
    AttestedConformanceBundle,
    AttestationStatement,
    AuthenticityRecord,
    DsseEnvelope,
    TrustPolicy,
    MigrationResult,
    OfficialConformanceAttachment,
    ProfileEvaluation,
    ReliabilityProfileManifest,
    OauthBoundaryEvaluation,
    /// mcpres's own `run.json` of a profile evaluation directory (`mcpres.profile-run/1`);
    /// not an MCP-RES document, so not in [`SchemaKind::STANDARD`].
    ProfileRun,
    /// mcpres's own `matrix.json` of a field matrix directory (`mcpres.field-matrix/1`,
    /// spec/field.md); not an MCP-RES document either.
    FieldMatrix,
}

pub use crate::diag::SchemaError;

/// The `$id` prefix shared by all of the project's schemas.
pub const SCHEMA_ID_BASE: &str = "https://mcpres.dev/schemas/v0.2.0/";

/// Expands to `(file name, $id, embedded text)` for one schema file.
macro_rules! schema_file {
    ($name:literal) => {
        (
            concat!($name, ".schema.json"),
            concat!("https://mcpres.dev/schemas/v0.2.0/", $name, ".schema.json"),
            include_str!(concat!("../../schemas/", $name, ".schema.json")),
        )
    };
}

/// File name, `$id` and text of every schema, in [`SchemaKind::ALL`] order.
const FILES: [(&str, &str, &str); 19] = [
    schema_file!("conformance-bundle"),
    schema_file!("evidence-envelope"),
    schema_file!("conformance-statement"),
    schema_file!("integrity-manifest"),
    schema_file!("observation"),
    schema_file!("observation-coverage"),
    schema_file!("trial-summary"),
    schema_file!("attested-conformance-bundle"),
    schema_file!("attestation-statement"),
    schema_file!("authenticity-record"),
    schema_file!("dsse-envelope"),
    schema_file!("trust-policy"),
    schema_file!("migration-result"),
    schema_file!("official-conformance-attachment"),
    schema_file!("profile-evaluation"),
    schema_file!("reliability-profile-manifest"),
    schema_file!("oauth-boundary-evaluation"),
    schema_file!("mcpres-profile-run"),
    schema_file!("mcpres-field-matrix"),
];

impl SchemaKind {
    /// All kinds, in declaration order: the [`SchemaKind::STANDARD`] ones, then mcpres's own.
    pub const ALL: [SchemaKind; 19] = {
        let mut all = [SchemaKind::ProfileRun; 19];
        let mut i = 0;
        while i < SchemaKind::STANDARD.len() {
            all[i] = SchemaKind::STANDARD[i];
            i += 1;
        }
        all[i + 1] = SchemaKind::FieldMatrix;
        all
    };

    /// The 17 MCP-RES v0.2 document types (the reference kit has a schema for each).
    pub const STANDARD: [SchemaKind; 17] = [
        SchemaKind::ConformanceBundle,
        SchemaKind::EvidenceEnvelope,
        SchemaKind::ConformanceStatement,
        SchemaKind::IntegrityManifest,
        SchemaKind::Observation,
        SchemaKind::ObservationCoverage,
        SchemaKind::TrialSummary,
        SchemaKind::AttestedConformanceBundle,
        SchemaKind::AttestationStatement,
        SchemaKind::AuthenticityRecord,
        SchemaKind::DsseEnvelope,
        SchemaKind::TrustPolicy,
        SchemaKind::MigrationResult,
        SchemaKind::OfficialConformanceAttachment,
        SchemaKind::ProfileEvaluation,
        SchemaKind::ReliabilityProfileManifest,
        SchemaKind::OauthBoundaryEvaluation,
    ];

    /// Position in [`SchemaKind::ALL`] (and in the embedded file table).
    const fn index(self) -> usize {
        self as usize
    }

    /// The schema's file name in `schemas/`, e.g. `conformance-bundle.schema.json`.
    pub fn file_name(self) -> &'static str {
        FILES[self.index()].0
    }

    /// The schema's `$id`, e.g. `https://mcpres.dev/schemas/v0.2.0/observation.schema.json`.
    pub fn schema_id(self) -> &'static str {
        FILES[self.index()].1
    }

    /// Short name: the file name without `.schema.json`, e.g. `trial-summary`.
    pub fn name(self) -> &'static str {
        let file = self.file_name();
        file.strip_suffix(".schema.json").unwrap_or(file)
    }

    /// The `schemaVersion` constant a document of this kind carries, if its schema has one.
    /// The in-toto attestation statement has none (it is identified by `_type`).
    pub fn schema_version(self) -> Option<&'static str> {
        Some(match self {
            SchemaKind::ConformanceBundle => "mcp-res.conformance-bundle/0.2.0",
            SchemaKind::EvidenceEnvelope => "mcp-res.evidence-envelope/0.2.0",
            SchemaKind::ConformanceStatement => "mcp-res.conformance-statement/0.2.0",
            SchemaKind::IntegrityManifest => "mcp-res.integrity-manifest/0.2.0",
            SchemaKind::Observation => "mcp-res.observation/0.2.0",
            SchemaKind::ObservationCoverage => "mcp-res.observation-coverage/0.2.0",
            SchemaKind::TrialSummary => "mcp-res.trial-summary/0.2.0",
            SchemaKind::AttestedConformanceBundle => "mcp-res.attested-conformance-bundle/0.2.0",
            SchemaKind::AttestationStatement => return None,
            SchemaKind::AuthenticityRecord => "mcp-res.authenticity/0.2.0",
            SchemaKind::DsseEnvelope => "mcp-res.dsse-envelope/0.2.0",
            SchemaKind::TrustPolicy => "mcp-res.trust-policy/0.2.0",
            SchemaKind::MigrationResult => "mcp-res.migration-result/0.2.0",
            SchemaKind::OfficialConformanceAttachment => {
                "mcp-res.official-conformance-attachment/0.2.0"
            }
            SchemaKind::ProfileEvaluation => "mcp-res.profile-evaluation/0.2.0",
            SchemaKind::ReliabilityProfileManifest => "mcp-res.reliability-profile-manifest/0.2.0",
            SchemaKind::OauthBoundaryEvaluation => "mcp-res.oauth-boundary-evaluation/0.2.0",
            SchemaKind::ProfileRun => "mcpres.profile-run/1",
            SchemaKind::FieldMatrix => "mcpres.field-matrix/1",
        })
    }

    /// Maps a document's `schemaVersion` value (e.g. `mcp-res.conformance-bundle/0.2.0`) to its
    /// kind. Exact match only: other versions (such as v0.1 bundles) give `None`.
    pub fn from_schema_version(v: &str) -> Option<SchemaKind> {
        SchemaKind::ALL
            .into_iter()
            .find(|kind| kind.schema_version() == Some(v))
    }

    /// Maps a schema file name (e.g. `observation.schema.json`) to its kind.
    pub fn from_file_name(name: &str) -> Option<SchemaKind> {
        SchemaKind::ALL
            .into_iter()
            .find(|kind| kind.file_name() == name)
    }

    /// Detects the kind of a whole document: by `schemaVersion`, or by the in-toto `_type` for an
    /// attestation statement.
    pub fn detect(value: &Value) -> Option<SchemaKind> {
        let object = value.as_object()?;
        if let Some(version) = object.get("schemaVersion").and_then(Value::as_str) {
            return SchemaKind::from_schema_version(version);
        }
        match object.get("_type").and_then(Value::as_str) {
            Some("https://in-toto.io/Statement/v1") => Some(SchemaKind::AttestationStatement),
            _ => None,
        }
    }
}

impl fmt::Display for SchemaKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The embedded text of the schema of `kind`, exactly as in `schemas/<file_name>`.
pub fn source(kind: SchemaKind) -> &'static str {
    FILES[kind.index()].2
}

/// Compiles the schema of `kind`. Only the schemas it reaches through `$ref` are parsed and
/// registered (7 of the 17 files for a conformance bundle), in a registry used for this build
/// only: the compiled validator owns everything it needs.
fn compile(kind: SchemaKind) -> Result<Validator, String> {
    let mut parsed: Vec<(SchemaKind, Value)> = Vec::new();
    let mut pending = vec![kind];
    while let Some(next) = pending.pop() {
        if parsed.iter().any(|(done, _)| *done == next) {
            continue;
        }
        let schema: Value = serde_json::from_str(source(next))
            .map_err(|e| format!("embedded schema {} is not JSON: {e}", next.file_name()))?;
        let mut references = Vec::new();
        external_refs(&schema, &mut references);
        for reference in references {
            let file = reference.split('#').next().unwrap_or_default();
            let target = SchemaKind::from_file_name(file).ok_or_else(|| {
                format!("schema {} refers to unknown {reference}", next.file_name())
            })?;
            pending.push(target);
        }
        parsed.push((next, schema));
    }
    let registry = Registry::new()
        .draft(Draft::Draft202012)
        .extend(parsed.iter().map(|(k, schema)| (k.schema_id(), schema)))
        .and_then(|builder| builder.prepare())
        .map_err(|e| format!("schema registry for {}: {e}", kind.file_name()))?;
    // The first schema parsed is the one for `kind`.
    let Some((_, root)) = parsed.first() else {
        return Err(format!("schema {} was not parsed", kind.file_name()));
    };
    jsonschema::options()
        .with_draft(Draft::Draft202012)
        .with_registry(&registry)
        .offline()
        .should_validate_formats(true)
        .should_ignore_unknown_formats(false)
        // The crate's own `date-time` is strict RFC 3339; this one accepts
        // exactly spec/conformance.md's table (entry 17), as `fast` does.
        .with_format("date-time", crate::json::time::is_date_time)
        .with_pattern_options(PatternOptions::regex())
        .build(root)
        .map_err(|e| format!("schema {} does not compile: {e}", kind.file_name()))
}

/// Collects the `$ref`s of `schema` that point into another file (not `#...`).
fn external_refs<'s>(schema: &'s Value, out: &mut Vec<&'s str>) {
    match schema {
        Value::Object(map) => {
            for (key, child) in map {
                match (key.as_str(), child) {
                    ("$ref", Value::String(reference)) if !reference.starts_with('#') => {
                        out.push(reference);
                    }
                    _ => external_refs(child, out),
                }
            }
        }
        Value::Array(items) => items.iter().for_each(|item| external_refs(item, out)),
        _ => {}
    }
}

/// The compiled validator of `kind`, compiled on first use and then shared.
fn validator(kind: SchemaKind) -> Result<&'static Validator, &'static str> {
    static VALIDATORS: [OnceLock<Result<Validator, String>>; 19] = [const { OnceLock::new() }; 19];
    VALIDATORS[kind.index()]
        .get_or_init(|| compile(kind))
        .as_ref()
        .map_err(String::as_str)
}

/// Compiles the validator of `kind` now (it is otherwise compiled on first use). Returns the
/// compilation error, if any; useful to front-load the cost or to fail fast at startup.
pub fn precompile(kind: SchemaKind) -> Result<(), String> {
    validator(kind).map(|_| ()).map_err(str::to_owned)
}

/// Validate `value` against the schema of `kind`; empty means valid.
pub fn validate(kind: SchemaKind, value: &Value) -> Vec<SchemaError> {
    // Fast accept path (see `fast`): no engine compilation for valid documents.
    if fast::is_valid(kind, value) == Some(true) {
        return Vec::new();
    }
    engine_errors(kind, value)
}

/// The `jsonschema` engine's errors for `value` (empty when it accepts it):
/// [`validate`] after the fast evaluator did not accept the document.
fn engine_errors(kind: SchemaKind, value: &Value) -> Vec<SchemaError> {
    let validator = match validator(kind) {
        Ok(validator) => validator,
        Err(message) => {
            return vec![SchemaError {
                instance_path: String::new(),
                keyword: "$schema".to_owned(),
                message: message.to_owned(),
            }];
        }
    };
    // Fast path: most documents are valid, and the boolean check is much cheaper.
    if validator.is_valid(value) {
        return Vec::new();
    }
    let mut errors = Vec::new();
    for error in validator.iter_errors(value) {
        push_errors(&error, &mut errors);
    }
    errors
}

/// [`validate`] of a [`crate::json::Doc`]: the fast evaluator reads it as it
/// stands; only a document it does not accept is converted for the
/// `jsonschema` engine, which then lists the errors.
pub fn validate_doc(kind: SchemaKind, doc: &crate::json::Doc<'_>) -> Vec<SchemaError> {
    if fast::is_valid_doc(kind, doc) == Some(true) {
        return Vec::new();
    }
    engine_errors(kind, &doc.to_value())
}

/// `true` when `value` is valid against the schema of `kind` (no error collection).
/// Decided by the fast evaluator; the `jsonschema` engine only when it declines.
pub fn is_valid(kind: SchemaKind, value: &Value) -> bool {
    if let Some(decision) = fast::is_valid(kind, value) {
        return decision;
    }
    validator(kind).is_ok_and(|validator| validator.is_valid(value))
}

/// Converts one engine error into one or more [`SchemaError`]s (one per unknown property).
pub(crate) fn push_errors(error: &ValidationError<'_>, out: &mut Vec<SchemaError>) {
    let instance_path = error.instance_path().as_str().to_owned();
    let kind = error.kind();
    if let ValidationErrorKind::AdditionalProperties { unexpected } = kind {
        for name in unexpected {
            out.push(SchemaError {
                instance_path: instance_path.clone(),
                keyword: "additionalProperties".to_owned(),
                message: format!("unknown property {} is not allowed", quoted(name)),
            });
        }
        if !unexpected.is_empty() {
            return;
        }
    }
    out.push(SchemaError {
        instance_path,
        keyword: kind.keyword().to_owned(),
        message: message(error),
    });
}

/// A plain message for one error, without quoting the offending value.
fn message(error: &ValidationError<'_>) -> String {
    match error.kind() {
        ValidationErrorKind::Required { property } => match property.as_str() {
            Some(name) => format!("missing required property {}", quoted(name)),
            None => "missing required property".to_owned(),
        },
        ValidationErrorKind::AdditionalProperties { .. } => {
            "unknown properties are not allowed".to_owned()
        }
        ValidationErrorKind::Type { kind } => {
            let expected = match kind {
                TypeKind::Single(t) => t.to_string(),
                TypeKind::Multiple(set) => set
                    .iter()
                    .map(|t| t.to_string())
                    .collect::<Vec<_>>()
                    .join(" or "),
            };
            format!(
                "must be {expected}, found {}",
                json_type_name(error.instance())
            )
        }
        ValidationErrorKind::Constant { expected_value } => {
            format!("must be exactly {}", preview(expected_value))
        }
        ValidationErrorKind::Enum { options } => match options.as_array() {
            Some(options) => format!(
                "must be one of {}",
                options.iter().map(preview).collect::<Vec<_>>().join(", ")
            ),
            None => "must be one of the allowed values".to_owned(),
        },
        ValidationErrorKind::Pattern { pattern } => format!("must match the pattern {pattern}"),
        ValidationErrorKind::Format { format } => match format.as_str() {
            "date-time" => "must be a date-time with a time zone offset (RFC 3339; see spec/conformance.md, entry 17)".to_owned(),
            "uri" => "must be an absolute URI (RFC 3986)".to_owned(),
            other => format!("must be a valid {other}"),
        },
        ValidationErrorKind::MinLength { limit } => {
            format!("must be at least {limit} character{} long", plural(*limit))
        }
        ValidationErrorKind::MaxLength { limit } => {
            format!("must be at most {limit} character{} long", plural(*limit))
        }
        ValidationErrorKind::MinItems { limit } => {
            format!("must have at least {limit} item{}", plural(*limit))
        }
        ValidationErrorKind::MaxItems { limit } => {
            format!("must have at most {limit} item{}", plural(*limit))
        }
        ValidationErrorKind::Minimum { limit } => format!("must be >= {limit}"),
        ValidationErrorKind::Maximum { limit } => format!("must be <= {limit}"),
        ValidationErrorKind::ExclusiveMinimum { limit } => format!("must be > {limit}"),
        ValidationErrorKind::ExclusiveMaximum { limit } => format!("must be < {limit}"),
        ValidationErrorKind::UniqueItems => "must not contain duplicate items".to_owned(),
        ValidationErrorKind::FalseSchema => "no value is allowed here".to_owned(),
        ValidationErrorKind::AnyOf { .. } => "must match at least one allowed shape".to_owned(),
        ValidationErrorKind::OneOfNotValid { .. } => {
            "must match exactly one allowed shape, matches none".to_owned()
        }
        ValidationErrorKind::OneOfMultipleValid { .. } => {
            "must match exactly one allowed shape, matches several".to_owned()
        }
        // Anything else: the engine's own wording, with the value masked.
        _ => error.masked_with("the value").to_string(),
    }
}

fn plural(n: u64) -> &'static str {
    if n == 1 { "" } else { "s" }
}

fn json_type_name(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// A schema constant rendered for a message (schema text, not instance data), kept short.
fn preview(value: &Value) -> String {
    const LIMIT: usize = 120;
    let text = value.to_string();
    if text.chars().count() <= LIMIT {
        text
    } else {
        let cut: String = text.chars().take(LIMIT).collect();
        format!("{cut}...")
    }
}

/// A property name in single quotes, JSON-escaped and shortened if long.
fn quoted(name: &str) -> String {
    const LIMIT: usize = 64;
    let escaped = Value::String(name.to_owned()).to_string();
    let inner = &escaped[1..escaped.len() - 1];
    if inner.chars().count() <= LIMIT {
        format!("'{inner}'")
    } else {
        let cut: String = inner.chars().take(LIMIT).collect();
        format!("'{cut}...'")
    }
}

#[cfg(test)]
mod tests;

pub mod fast;
mod simple;
pub mod v01;

/// The `jsonschema` engine's own decision, bypassing the fast evaluator (for the
/// differential tests that hold the two engines to the same answers).
pub fn engine_is_valid(kind: SchemaKind, value: &Value) -> bool {
    validator(kind).is_ok_and(|validator| validator.is_valid(value))
}
