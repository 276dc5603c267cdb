//! The catalogue: every check declaration the producers know, by profile
//! (the protocol profiles' runners and the OAuth runner). It stands above
//! the runners that declare the checks, so that `decl.rs` (the declaration
//! type, which every runner imports) imports none of them.

use crate::produce::profile::decl::{CheckDecl, OAUTH_BOUNDARY, describe_one, spec_table};
use crate::produce::{oauth, profile};

/// Every declaration of the protocol profiles, by profile.
pub fn protocol_profiles() -> [(&'static str, &'static [CheckDecl]); 5] {
    [
        ("mcp-res/stdio-transport/v1", profile::stdio::CHECKS),
        ("mcp-res/protocol-revision/v1", profile::revision::CHECKS),
        ("mcp-res/streamable-http/v1", profile::streamable::CHECKS),
        (
            crate::judge::ops::PROFILE,
            crate::produce::profile::ops::checks::CHECKS,
        ),
        (crate::judge::cache::PROFILE, profile::cache::CHECKS),
    ]
}

/// What `mcpres explain CHECK-ID` prints: every declaration of that id (a check id may
/// belong to more than one profile, `backpressure` does), or `None` for an id no runner
/// declares.
pub fn describe(id: &str) -> Option<String> {
    let mut s = String::new();
    for (_, checks) in protocol_profiles() {
        for d in checks.iter().filter(|d| d.id == id) {
            if !s.is_empty() {
                s.push('\n');
            }
            describe_one(&mut s, d);
        }
    }
    for d in oauth::checks::CHECKS.iter().filter(|d| d.id == id) {
        if !s.is_empty() {
            s.push('\n');
        }
        describe_one(&mut s, d);
    }
    (!s.is_empty()).then_some(s)
}

/// The generated section of `spec/profiles.md` (between the declaration
/// module's `SPEC_BEGIN` and `SPEC_END`): one table per profile.
pub fn spec_section() -> String {
    let mut s = String::new();
    for (name, checks) in protocol_profiles() {
        s.push_str(&format!("\n**{name}**\n\n"));
        s.push_str(&spec_table(checks));
    }
    s.push_str(&format!(
        "\n**{OAUTH_BOUNDARY}** ([oauth-boundary.md](oauth-boundary.md))\n\n"
    ));
    s.push_str(&spec_table(oauth::checks::CHECKS));
    s.push('\n');
    s
}
