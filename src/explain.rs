//! `mcpres explain CODE`: what a diagnostic code means and how to fix it, or what a reason
//! code a producer wrote says was observed.
//!
//! The text lives in the diagnostics table of [`crate::diag`] (one entry per code that any
//! MCP-RES family can emit) and in its reason table ([`crate::diag::reasons`], one entry per
//! reason code a producer writes); this module only looks them up. `rule` names the
//! requirement id of the standard that governs a diagnostic, or a section where the text gives
//! none. `spec/diagnostics.md` and `spec/reasons.md` carry the same content; tests in `diag`
//! keep them equal to the tables.

use crate::diag::Code;
pub use crate::diag::Explanation;
pub use crate::diag::reasons::Reason;

/// Every explanation, in table order (the order of `spec/diagnostics.md`).
pub fn explanations() -> impl Iterator<Item = &'static Explanation> {
    Code::ALL.iter().map(|c| c.explanation())
}

/// The explanation of `code`, if it is a known diagnostic code.
pub fn lookup(code: &str) -> Option<&'static Explanation> {
    Code::parse(code).map(Code::explanation)
}

/// Every reason code's entry, in table order (the order of `spec/reasons.md`).
pub fn reasons() -> impl Iterator<Item = &'static Reason> {
    crate::diag::reasons::ALL.iter()
}

/// The reason table's entry for `code`: its own, the generated family it belongs to
/// (`MCP_RES_HTTP_STATUS_503`), or a family named by its template (`MCP_RES_HTTP_STATUS_{n}`,
/// in any case).
pub fn lookup_reason(code: &str) -> Option<&'static Reason> {
    Reason::parse(code)
        .or_else(|| reasons().find(|r| r.is_generated() && r.code.eq_ignore_ascii_case(code)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lookup_reason_finds_every_reason_and_no_diagnostic() {
        for r in reasons() {
            assert_eq!(lookup_reason(r.code), Some(r));
            assert_eq!(lookup(r.code), None);
        }
        for e in explanations() {
            assert_eq!(lookup_reason(e.code), None);
        }
        assert_eq!(
            lookup_reason("MCP_RES_HTTP_STATUS_503").map(|r| r.code),
            Some("MCP_RES_HTTP_STATUS_{n}")
        );
        assert_eq!(
            lookup_reason("MCP_RES_HTTP_STATUS_{N}").map(|r| r.code),
            Some("MCP_RES_HTTP_STATUS_{n}")
        );
        assert_eq!(lookup_reason("MCP_RES_NO_SUCH_CODE"), None);
    }

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
