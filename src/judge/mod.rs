//! Verdicts judged from the record (ARCHITECTURE.md, "The producer floor"):
//! pure functions from the stored artifact documents of an evaluation to
//! every verdict, reason, flag and result derived from them.
//!
//! The runners compute what they write through these functions, and
//! `mcpres validate` runs them again over the digest-bound artifacts of a
//! directory and refuses any recorded field they do not give
//! (`MCP_RES_VERDICT_NOT_FROM_RECORD`). `mcpres report` shows what they give,
//! not what `run.json` or `matrix.json` say.
//!
//! - [`profile`]: one check's verdict from its positive, negative-control
//!   and mutant observations; the run and evaluation results, the claim and
//!   the cleanup; a whole profile evaluation directory re-judged.
//! - [`stdio`]: what a stdio probe's raw stdout chunks show (the syntax
//!   guard firing), read from the transcript bytes an artifact stores.
//! - [`oauth`]: an OAuth-boundary evaluation's check verdicts and cases
//!   from its stored observations.
//! - [`field`]: a field matrix leg's items and result from its (re-judged)
//!   evaluation directory, and the matrix's overall result.

pub mod cache;
pub mod field;
pub mod http;
pub mod oauth;
pub mod ops;
pub mod profile;
pub mod stdio;
pub mod vocabulary;

/// The released MCP revisions: what a counter-offer or a list of supported
/// versions may name.
pub const RELEASED_REVISIONS: &[&str] = &[
    "2024-11-05",
    "2025-03-26",
    "2025-06-18",
    "2025-11-25",
    "2026-07-28",
];

/// The JSON Schema dialects a tool's `inputSchema` may name (`$schema`).
pub const SCHEMA_DIALECTS: &[&str] = &[
    "https://json-schema.org/draft/2020-12/schema",
    "https://json-schema.org/draft/2019-09/schema",
    "http://json-schema.org/draft-07/schema#",
    "http://json-schema.org/draft-07/schema",
    "http://json-schema.org/draft-04/schema#",
];

/// Does every tool of a non-empty listing declare an object `inputSchema`
/// whose `$schema`, where named, is one of [`SCHEMA_DIALECTS`]?
pub fn schemas_identified(tools: &[serde_json::Value]) -> bool {
    !tools.is_empty()
        && tools.iter().all(|t| {
            let s = t.get("inputSchema");
            s.and_then(|s| s.get("type")) == Some(&serde_json::json!("object"))
                && s.and_then(|s| s.get("$schema"))
                    .is_none_or(|d| d.as_str().is_some_and(|d| SCHEMA_DIALECTS.contains(&d)))
        })
}

/// A recorded field the judge does not give: where it is, what is recorded
/// there, and what the record gives instead.
#[derive(Debug, Clone, PartialEq)]
pub struct Disagreement {
    /// The file of the directory the field is in (`run.json`,
    /// `evaluation.json`, `artifacts/cleanup.json`, ...).
    pub file: String,
    /// JSON pointer into that file.
    pub pointer: String,
    /// What the file says (`null` when the field is missing).
    pub recorded: serde_json::Value,
    /// What the judge gives.
    pub judged: serde_json::Value,
    /// Why the judge gives it, when there is more to say than the value.
    pub why: String,
}

impl Disagreement {
    /// One line: `FILE POINTER: recorded R, the record gives J (why)`.
    pub fn message(&self) -> String {
        let mut text = format!(
            "{} {}: recorded {}, but the digest-bound artifacts give {}",
            self.file, self.pointer, self.recorded, self.judged
        );
        if !self.why.is_empty() {
            text.push_str(" (");
            text.push_str(&self.why);
            text.push(')');
        }
        text
    }
}
