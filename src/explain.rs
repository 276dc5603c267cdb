//! Stable diagnostic codes: what each means and how to fix it (`mcpres explain CODE`).
//! OWNER: explain/spec helper.

/// One diagnostic code's documentation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Explanation {
    pub code: &'static str,
    pub rule: &'static str,
    pub title: &'static str,
    pub meaning: &'static str,
    pub example: &'static str,
    pub fix: &'static str,
}

pub static EXPLANATIONS: &[Explanation] = &[];

pub fn lookup(code: &str) -> Option<&'static Explanation> {
    EXPLANATIONS.iter().find(|e| e.code == code)
}
