//! The project's own schema for MCP-RES v0.1 conformance bundles
//! (`schemas/v0.1/conformance-bundle.schema.json`, one self-contained file), embedded and
//! compiled once with the same engine options as the v0.2 schemas.
//!
//! v0.1 bundles are judged with v0.1 semantics (see `validate::v01`); this module only answers
//! the shape question the v0.1 kit asks between its pre-schema and semantic rules.

use std::sync::OnceLock;

use jsonschema::{Draft, PatternOptions, Validator};
use serde_json::Value;

use super::SchemaError;

/// The `$id` of the v0.1 bundle schema.
pub const SCHEMA_ID: &str = "https://mcpres.dev/schemas/v0.1.0/conformance-bundle.schema.json";

/// The embedded schema text, exactly as in `schemas/v0.1/conformance-bundle.schema.json`.
pub const SOURCE: &str = include_str!("../../schemas/v0.1/conformance-bundle.schema.json");

fn compile() -> Result<Validator, String> {
    let schema: Value = serde_json::from_str(SOURCE)
        .map_err(|e| format!("embedded v0.1 schema is not JSON: {e}"))?;
    jsonschema::options()
        .with_draft(Draft::Draft202012)
        .offline()
        .should_validate_formats(true)
        .should_ignore_unknown_formats(false)
        .with_pattern_options(PatternOptions::regex())
        .build(&schema)
        .map_err(|e| format!("v0.1 schema does not compile: {e}"))
}

fn validator() -> Result<&'static Validator, &'static str> {
    static VALIDATOR: OnceLock<Result<Validator, String>> = OnceLock::new();
    VALIDATOR
        .get_or_init(compile)
        .as_ref()
        .map_err(String::as_str)
}

/// Validate a whole v0.1 conformance bundle against the v0.1 schema; empty means valid.
pub fn validate(value: &Value) -> Vec<SchemaError> {
    let validator = match validator() {
        Ok(validator) => validator,
        Err(message) => {
            return vec![SchemaError {
                instance_path: String::new(),
                keyword: "$schema".to_owned(),
                message: message.to_owned(),
            }];
        }
    };
    if validator.is_valid(value) {
        return Vec::new();
    }
    let mut errors = Vec::new();
    for error in validator.iter_errors(value) {
        super::push_errors(&error, &mut errors);
    }
    errors
}

/// `true` when `value` is a schema-valid v0.1 conformance bundle.
pub fn is_valid(value: &Value) -> bool {
    validator().is_ok_and(|validator| validator.is_valid(value))
}
