//! Reason codes: the `MCP_RES_*` strings a producer writes into its observations (the
//! `expectedReasonCode` and `observedReasonCode` of a probe, the `reason` of a check's
//! verdict), as opposed to the diagnostics a validator reports.
//!
//! The table in `reasons/table.rs` is the one place a reason code is defined: its family (the
//! producer that writes it), its kind (the property holds, refused for the property's reason,
//! a wrong or other reason, or not observed) and what it means. The constants the producers
//! write, `mcpres explain` and `spec/reasons.md` are all generated from or read that table, and
//! a test fails if a producer writes an `MCP_RES_*` literal the table does not hold.
//!
//! Three entries are generated families with a parameter: `MCP_RES_JSONRPC_ERROR_{n}` and
//! `MCP_RES_HTTP_STATUS_{n}` (`n` decimal digits, built by [`jsonrpc_error`] and
//! [`http_status`]), and the OAuth per-check pairs, which the table lists one by one for the
//! 25 checks of `mcp-res/oauth-boundary/v1` ([`oauth_case`] looks them up).
//!
//! A reason code is never a diagnostic code: the two tables are disjoint (a test checks it).
//! A producer that names a diagnostic (the OAuth cases' `expectedDiagnostic`, an error message
//! that names `MCP_RES_INPUT_INVALID`) takes it from the diagnostics table.

use std::fmt;

/// The producer family that writes a reason code (a section of `spec/reasons.md`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ReasonFamily {
    /// Written by every profile runner (`produce/profile/check.rs` and the stdio and
    /// protocol-revision runners alike).
    Shared,
    /// `mcp-res/stdio-transport/v1` (`produce/profile/stdio.rs`).
    StdioTransport,
    /// `mcp-res/protocol-revision/v1` (`produce/profile/revision.rs`).
    ProtocolRevision,
    /// `mcp-res/streamable-http/v1` (`produce/profile/streamable.rs`).
    StreamableHttp,
    /// `mcp-res/operational-resilience/v1` (`produce/profile/ops/`, read by `judge::ops`).
    OperationalResilience,
    /// `mcp-res/cache-behavior/v1` (`produce/profile/cache.rs`, read by `judge::cache`).
    CacheBehavior,
    /// `mcp-res/oauth-boundary/v1` (`produce/oauth/`, and the validator's derived codes).
    OauthBoundary,
}

impl ReasonFamily {
    /// Every family, in table order.
    pub const ALL: &'static [ReasonFamily] = &[
        ReasonFamily::Shared,
        ReasonFamily::StdioTransport,
        ReasonFamily::ProtocolRevision,
        ReasonFamily::StreamableHttp,
        ReasonFamily::OperationalResilience,
        ReasonFamily::CacheBehavior,
        ReasonFamily::OauthBoundary,
    ];

    /// The family's name, as `mcpres explain` and `spec/reasons.md` print it.
    pub const fn as_str(self) -> &'static str {
        match self {
            ReasonFamily::Shared => "shared",
            ReasonFamily::StdioTransport => "stdio-transport",
            ReasonFamily::ProtocolRevision => "protocol-revision",
            ReasonFamily::StreamableHttp => "streamable-http",
            ReasonFamily::OperationalResilience => "operational-resilience",
            ReasonFamily::CacheBehavior => "cache-behavior",
            ReasonFamily::OauthBoundary => "oauth-boundary",
        }
    }

    /// Who writes the family's codes, in one sentence (the head of its `spec/reasons.md`
    /// section).
    pub const fn about(self) -> &'static str {
        match self {
            ReasonFamily::Shared => {
                "Written by more than one profile runner (most by the classifier they share, `src/produce/profile/check.rs`)."
            }
            ReasonFamily::StdioTransport => {
                "Written by the `mcp-res/stdio-transport/v1` runner (`src/produce/profile/stdio.rs`)."
            }
            ReasonFamily::ProtocolRevision => {
                "Written by the `mcp-res/protocol-revision/v1` runner (`src/produce/profile/revision.rs`)."
            }
            ReasonFamily::StreamableHttp => {
                "Written by the `mcp-res/streamable-http/v1` runner (`src/produce/profile/streamable.rs`)."
            }
            ReasonFamily::OperationalResilience => {
                "Written by the `mcp-res/operational-resilience/v1` runner (`src/produce/profile/ops/`), each read from its observation's record by `src/judge/ops.rs`."
            }
            ReasonFamily::CacheBehavior => {
                "Written by the `mcp-res/cache-behavior/v1` runner (`src/produce/profile/cache.rs`), each read from its observation's record by `src/judge/cache.rs`."
            }
            ReasonFamily::OauthBoundary => {
                "Written by `mcpres oauth run` (`src/produce/oauth/`); the validator derives the per-check pairs for the cases it reads (`src/validate/oauth.rs`)."
            }
        }
    }
}

impl fmt::Display for ReasonFamily {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What a reason code says about the property a check is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ReasonKind {
    /// The property holds: the positive's expected reason (for OAuth, the check's `ACCEPTED`).
    Holds,
    /// Refused (or stopped, or left alone) for the property's own reason: the negative
    /// control's expected reason (for OAuth, the check's `REJECTED`).
    Refused,
    /// Answered or refused for another reason than the expected one: the property did not
    /// hold, or a guard before it (the syntax guard the wrong-reason mutant must meet) stopped
    /// the request.
    Wrong,
    /// Nothing could be judged: no answer, the subject gone, or the check not exercised.
    NotObserved,
}

impl ReasonKind {
    /// Every kind.
    pub const ALL: &'static [ReasonKind] = &[
        ReasonKind::Holds,
        ReasonKind::Refused,
        ReasonKind::Wrong,
        ReasonKind::NotObserved,
    ];

    /// The kind's name, as `mcpres explain --list` and `spec/reasons.md` print it.
    pub const fn as_str(self) -> &'static str {
        match self {
            ReasonKind::Holds => "holds",
            ReasonKind::Refused => "refused",
            ReasonKind::Wrong => "wrong-reason",
            ReasonKind::NotObserved => "not-observed",
        }
    }

    /// A few words on the kind (the second line of `mcpres explain CODE`).
    pub const fn title(self) -> &'static str {
        match self {
            ReasonKind::Holds => "The property holds",
            ReasonKind::Refused => "Refused for the property's reason",
            ReasonKind::Wrong => "A wrong or other reason",
            ReasonKind::NotObserved => "Not observed",
        }
    }
}

impl fmt::Display for ReasonKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One reason code's documentation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Reason {
    /// The code, e.g. `MCP_RES_FRAMING_NEWLINE_DELIMITED`; a generated family ends in `{n}`
    /// (`MCP_RES_HTTP_STATUS_{n}`), which stands for one or more decimal digits.
    pub code: &'static str,
    /// The producer that writes it.
    pub family: ReasonFamily,
    /// What it says about the property.
    pub kind: ReasonKind,
    /// What was observed, in one or two sentences.
    pub meaning: &'static str,
}

/// The placeholder a generated family's code ends in.
pub const PARAMETER: &str = "{n}";

impl Reason {
    /// Is this a generated family (`..._{n}`) rather than one code?
    pub fn is_generated(&self) -> bool {
        self.code.ends_with(PARAMETER)
    }

    /// Does `code` (exact, case-sensitive) belong to this entry? For a generated family: the
    /// prefix followed by one to ten decimal digits.
    pub fn matches(&self, code: &str) -> bool {
        match self.code.strip_suffix(PARAMETER) {
            None => self.code == code,
            Some(prefix) => code.strip_prefix(prefix).is_some_and(|n| {
                (1..=10).contains(&n.len()) && n.bytes().all(|b| b.is_ascii_digit())
            }),
        }
    }

    /// The entry `code` belongs to, if any.
    pub fn parse(code: &str) -> Option<&'static Reason> {
        ALL.iter().find(|r| r.matches(code))
    }
}

/// Builds [`ALL`] and one `&str` constant per code from the table. A generated family is
/// written with `_` for its constant (it has none: [`jsonrpc_error`] and [`http_status`] build
/// its codes).
macro_rules! reasons {
    (@konst _ $code:literal) => {};
    (@konst $konst:ident $code:literal) => {
        #[doc = $code]
        pub const $konst: &str = $code;
    };
    (
        $(
            $(#[doc = $fdoc:literal])*
            $family:ident {
                $( $konst:tt $code:literal $kind:ident $meaning:literal; )*
            }
        )*
    ) => {
        /// Every reason code, in table order (the order of `spec/reasons.md`).
        pub const ALL: &[Reason] = &[
            $( $( Reason {
                code: $code,
                family: ReasonFamily::$family,
                kind: ReasonKind::$kind,
                meaning: $meaning,
            }, )* )*
        ];

        /// Each entry's constant name (`_` for a generated family) and code.
        #[cfg(test)]
        pub(super) const KONSTS: &[(&str, &str)] = &[ $( $( (stringify!($konst), $code), )* )* ];

        $( $( reasons!(@konst $konst $code); )* )*
    };
}

mod table;

pub use table::*;

/// `MCP_RES_JSONRPC_ERROR_{n}`: a JSON-RPC error answer with code `-n` (the magnitude of the
/// code).
pub fn jsonrpc_error(magnitude: u64) -> String {
    generated(JSONRPC_ERROR_FAMILY, magnitude)
}

/// `MCP_RES_HTTP_STATUS_{n}`: an HTTP answer with status `n` and no JSON-RPC answer.
pub fn http_status(status: u16) -> String {
    generated(HTTP_STATUS_FAMILY, u64::from(status))
}

const JSONRPC_ERROR_FAMILY: &str = "MCP_RES_JSONRPC_ERROR_{n}";
const HTTP_STATUS_FAMILY: &str = "MCP_RES_HTTP_STATUS_{n}";

fn generated(family: &str, n: u64) -> String {
    let prefix = family.strip_suffix(PARAMETER).expect("a generated family");
    format!("{prefix}{n}")
}

/// What joins a reason code and the words carried with it ([`with_words`]).
const WORDS_SEPARATOR: &str = ": ";

/// At most this many characters of carried words are kept.
const WORDS_LIMIT: usize = 120;

/// `code` carrying `words` (what the subject or the runner said, at most 120 characters) until
/// the observation is built: [`split_words`] then gives the code to the observation's reason
/// and the words to its detail, so free text never enters a code (`MCP_RES_OAUTH_OTHER_REFUSAL`
/// with the subject's own reason for a refusal).
pub fn with_words(code: &'static str, words: &str) -> String {
    let words: String = words.chars().take(WORDS_LIMIT).collect();
    format!("{code}{WORDS_SEPARATOR}{words}")
}

/// A classified reason split into its code and the words [`with_words`] carried with it, if
/// any.
pub fn split_words(reason: &str) -> (&str, Option<&str>) {
    match reason.split_once(WORDS_SEPARATOR) {
        Some((code, words)) => (code, Some(words)),
        None => (reason, None),
    }
}

/// The reason and detail an observation records for a classified `reason` and its `detail`:
/// the code alone, and the carried words kept in the detail (added unless the detail already
/// quotes the reason with its words).
pub fn into_code_and_detail(reason: String, detail: String) -> (String, String) {
    let (code, words) = match split_words(&reason) {
        (_, None) => return (reason, detail),
        (code, Some(words)) => (code.to_string(), words.to_string()),
    };
    let detail = if detail.contains(&reason) {
        detail
    } else if detail.is_empty() {
        format!("the reason given: {words}")
    } else {
        format!("{detail}; the reason given: {words}")
    };
    (code, detail)
}

/// The two branches of an OAuth-boundary case.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Branch {
    /// The positive: the subject accepted what the property allows.
    Accepted,
    /// The negative control: the subject refused for the check's own reason.
    Rejected,
}

impl Branch {
    pub const fn as_str(self) -> &'static str {
        match self {
            Branch::Accepted => "ACCEPTED",
            Branch::Rejected => "REJECTED",
        }
    }
}

/// The reason code an OAuth-boundary case's `branch` carries, derived from the check id
/// (upper-cased, `-` turned into `_`): `MCP_RES_OAUTH_<CHECK>_<BRANCH>`. For any check id,
/// also one the table does not list (the validator derives the codes of a document's cases);
/// [`oauth_case`] is the table's.
pub fn derive_oauth_case(check_id: &str, branch: &str) -> String {
    format!(
        "MCP_RES_OAUTH_{}_{branch}",
        check_id.replace('-', "_").to_uppercase()
    )
}

/// The table's reason code of OAuth check `check_id`'s `branch`, if the check is one of the
/// 25 of `mcp-res/oauth-boundary/v1`.
pub fn oauth_case(check_id: &str, branch: Branch) -> Option<&'static str> {
    let code = derive_oauth_case(check_id, branch.as_str());
    ALL.iter()
        .find(|r| r.family == ReasonFamily::OauthBoundary && r.code == code)
        .map(|r| r.code)
}

#[cfg(test)]
mod tests;
