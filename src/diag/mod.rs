//! Diagnostics: every stable code, its explanation, and the findings and report a validation
//! produces.
//!
//! The table in `diag/table.rs` is the one place a code is defined: its family, its constant
//! name, its `MCP_RES_*` string, the rule that governs it, a title, what it means, an example
//! and the fix. The [`Code`] enum, the [`codes`] constants, `mcpres explain`, the SARIF rules
//! and the check of `spec/diagnostics.md` are all generated from or read that table, so a code
//! without an explanation does not compile.
//!
//! The reason codes producers write into their observations have their own table, in
//! [`reasons`] (`spec/reasons.md`); no code is in both.
//!
//! This module sits right above `json` in the layer order: it imports nothing of the crate.

use std::fmt;

use serde::{Serialize, Serializer};

/// One diagnostic code's documentation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Explanation {
    /// The stable code, e.g. `MCP_RES_WRONG_STOP_REASON`.
    pub code: &'static str,
    /// Requirement id (e.g. `MCPRES-NEG-002`) or section that governs the code.
    pub rule: &'static str,
    /// A few words.
    pub title: &'static str,
    /// What the code means, in one to three sentences.
    pub meaning: &'static str,
    /// A short concrete input that triggers it.
    pub example: &'static str,
    /// What the producer should do.
    pub fix: &'static str,
}

/// Builds [`CodeFamily`], [`Code`], the [`codes`] constants and the explanations from one
/// table. Families and codes are listed in the order of `spec/diagnostics.md`; within a
/// family, codes follow the reference rule order where the reference has one.
macro_rules! diagnostics {
    (
        $(
            $(#[doc = $fdoc:literal])*
            $family:ident {
                $(
                    $variant:ident $konst:ident $code:literal {
                        rule: $rule:literal,
                        title: $title:literal,
                        meaning: $meaning:literal,
                        example: $example:literal,
                        fix: $fix:literal $(,)?
                    }
                )*
            }
        )*
    ) => {
        /// The group of codes a diagnostic belongs to (a section of `spec/diagnostics.md`).
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum CodeFamily {
            $( $(#[doc = $fdoc])* $family, )*
        }

        impl CodeFamily {
            /// Every family, in table order.
            pub const ALL: &'static [CodeFamily] = &[ $( CodeFamily::$family, )* ];

            /// The family's codes, in table order (for a rule family: its rule order).
            pub const fn codes(self) -> &'static [Code] {
                match self {
                    $( CodeFamily::$family => &[ $( Code::$variant, )* ], )*
                }
            }

            /// The family's codes as strings, in table order.
            pub const fn names(self) -> &'static [&'static str] {
                match self {
                    $( CodeFamily::$family => &[ $( $code, )* ], )*
                }
            }
        }

        /// Every stable diagnostic code (declaration order is the table order).
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum Code {
            $( $( #[doc = $title] $variant, )* )*
        }

        impl Code {
            /// Every code, in table order (the order of `mcpres explain --list`).
            pub const ALL: &'static [Code] = &[ $( $( Code::$variant, )* )* ];

            /// The stable `MCP_RES_*` string.
            pub const fn as_str(self) -> &'static str {
                match self {
                    $( $( Code::$variant => $code, )* )*
                }
            }

            /// The family the code belongs to.
            pub const fn family(self) -> CodeFamily {
                match self {
                    $( $( Code::$variant => CodeFamily::$family, )* )*
                }
            }

            /// What the code means and how to fix it.
            pub const fn explanation(self) -> &'static Explanation {
                match self {
                    $( $( Code::$variant => &Explanation {
                        code: $code,
                        rule: $rule,
                        title: $title,
                        meaning: $meaning,
                        example: $example,
                        fix: $fix,
                    }, )* )*
                }
            }
        }

        /// One constant per code, named as the rules name them (`codes::SCHEMA_INVALID`).
        pub mod codes {
            use super::Code;
            $( $( pub const $konst: Code = Code::$variant; )* )*
        }

        /// The same constants as plain strings, for callers that compare text.
        pub mod code_names {
            $( $( pub const $konst: &str = $code; )* )*
        }
    };
}

mod table;

pub mod reasons;

pub use table::{Code, CodeFamily, code_names, codes};

impl Code {
    /// The code whose string is `code` (exact, case-sensitive), if any.
    pub fn parse(code: &str) -> Option<Code> {
        Code::ALL.iter().copied().find(|c| c.as_str() == code)
    }

    /// The requirement id or section that governs the code.
    pub const fn rule(self) -> &'static str {
        self.explanation().rule
    }

    /// A few words naming the problem.
    pub const fn title(self) -> &'static str {
        self.explanation().title
    }

    /// What the producer should do.
    pub const fn fix(self) -> &'static str {
        self.explanation().fix
    }
}

impl fmt::Display for Code {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for Code {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl PartialEq<str> for Code {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == other
    }
}

impl PartialEq<&str> for Code {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

impl PartialEq<Code> for &str {
    fn eq(&self, other: &Code) -> bool {
        *self == other.as_str()
    }
}

impl AsRef<str> for Code {
    fn as_ref(&self) -> &str {
        self.as_str()
    }
}

/// One schema violation, in the reference result shape.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SchemaError {
    #[serde(rename = "instancePath")]
    pub instance_path: String,
    pub keyword: String,
    pub message: String,
}

impl fmt::Display for SchemaError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let path = if self.instance_path.is_empty() {
            "/"
        } else {
            self.instance_path.as_str()
        };
        write!(f, "{path}: {} ({})", self.message, self.keyword)
    }
}

/// One problem found in a document.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Finding {
    /// Stable diagnostic code, `MCP_RES_*`.
    pub code: Code,
    /// The standard's requirement id that the code enforces.
    pub rule: &'static str,
    /// JSON pointer into the validated document (`""` is the whole document).
    pub pointer: String,
    /// What is wrong, in terms of this document.
    pub message: String,
    /// What to do about it.
    pub hint: String,
}

impl Finding {
    /// A finding of `code`; its rule and hint come from the code's explanation.
    pub fn new(code: Code, pointer: impl Into<String>, message: impl Into<String>) -> Self {
        let e = code.explanation();
        Finding {
            code,
            rule: e.rule,
            pointer: pointer.into(),
            message: message.into(),
            hint: e.fix.to_string(),
        }
    }
}

/// The outcome of validating one document.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Report {
    pub valid: bool,
    /// The reference validators' list: the primary diagnostic only (empty when valid).
    pub diagnostics: Vec<String>,
    /// Schema violations, when the primary diagnostic is a schema failure.
    pub schema_errors: Vec<SchemaError>,
    /// The evidence class derived from the observations (when the shape allows deriving one).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub evidence_class: Option<String>,
    /// Every finding, primary first.
    pub findings: Vec<Finding>,
    /// Family-specific results (for example `authenticityClassification` or
    /// `status`), emitted beside the common fields in JSON output.
    #[serde(flatten)]
    pub extra: serde_json::Map<String, serde_json::Value>,
}

impl Report {
    /// Build a report from findings in rule order; the first is the primary.
    pub fn from_findings(
        findings: Vec<Finding>,
        schema_errors: Vec<SchemaError>,
        evidence_class: Option<String>,
    ) -> Self {
        let primary = findings.first().map(|f| f.code.to_string());
        let schema_errors = if primary
            .as_deref()
            .is_some_and(|p| p.ends_with("SCHEMA_INVALID"))
        {
            schema_errors
        } else {
            Vec::new()
        };
        Report {
            valid: primary.is_none(),
            diagnostics: primary.into_iter().collect(),
            schema_errors,
            evidence_class,
            findings,
            extra: serde_json::Map::new(),
        }
    }

    /// Attach a family-specific result field (shown in JSON output).
    pub fn with_extra(mut self, key: &str, value: serde_json::Value) -> Self {
        self.extra.insert(key.to_string(), value);
        self
    }

    /// The primary diagnostic code, if the document is invalid.
    pub fn primary(&self) -> Option<&str> {
        self.diagnostics.first().map(String::as_str)
    }
}

#[cfg(test)]
mod tests;
