//! `mcpres explain CODE`: what a diagnostic code means and how to fix it.
//!
//! The text lives in the diagnostics table of [`crate::diag`] (one entry per code that any
//! MCP-RES family can emit); this module only looks it up. `rule` names the requirement id of
//! the standard that governs the code, or a section where the text gives none.
//! `spec/diagnostics.md` carries the same content; a test in `diag` keeps the two equal.

use crate::diag::Code;
pub use crate::diag::Explanation;

/// Every explanation, in table order (the order of `spec/diagnostics.md`).
pub fn explanations() -> impl Iterator<Item = &'static Explanation> {
    Code::ALL.iter().map(|c| c.explanation())
}

/// The explanation of `code`, if it is a known diagnostic code.
pub fn lookup(code: &str) -> Option<&'static Explanation> {
    Code::parse(code).map(Code::explanation)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lookup_finds_every_code_and_nothing_else() {
        for e in explanations() {
            assert_eq!(lookup(e.code), Some(e));
        }
        assert_eq!(lookup("MCP_RES_NO_SUCH_CODE"), None);
        assert_eq!(lookup("mcp_res_schema_invalid"), None);
        assert_eq!(lookup(""), None);
        assert_eq!(
            lookup("MCP_RES_WRONG_STOP_REASON").map(|e| e.rule),
            Some("MCPRES-NEG-002")
        );
    }
}
