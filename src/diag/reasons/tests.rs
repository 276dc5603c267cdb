use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use super::*;
use crate::diag::Code;

const SPEC_PATH: &str = "spec/reasons.md";

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn well_formed(s: &str) -> bool {
    s.starts_with("MCP_RES_")
        && s.len() > "MCP_RES_".len()
        && s.bytes()
            .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_')
}

#[test]
fn codes_are_unique_and_well_formed() {
    let mut seen = BTreeSet::new();
    for r in ALL {
        assert!(seen.insert(r.code), "duplicate reason code {}", r.code);
        let bare = r.code.strip_suffix(PARAMETER).unwrap_or(r.code);
        assert!(well_formed(bare), "{} is not MCP_RES_[A-Z0-9_]+", r.code);
        assert_eq!(r.is_generated(), bare != r.code);
        if r.is_generated() {
            assert!(bare.ends_with('_'), "{}: the parameter follows a _", r.code);
            assert!(!r.matches(bare), "{}: the parameter is not empty", r.code);
            assert!(r.matches(&format!("{bare}7")));
        } else {
            assert!(r.matches(r.code));
            assert_eq!(Reason::parse(r.code), Some(r));
        }
        // The OAuth schema's pattern for a reason code (oauthReason).
        if r.family == ReasonFamily::OauthBoundary {
            let tail = r.code.strip_prefix("MCP_RES_OAUTH_").expect("OAuth prefix");
            assert!((3..=120).contains(&tail.len()), "{}", r.code);
        }
    }
    assert_eq!(seen.len(), ALL.len());
    assert_eq!(KONSTS.len(), ALL.len());
}

/// A concrete code's constant is its code without `MCP_RES_`; a generated family has none.
#[test]
fn constants_are_named_after_their_codes() {
    for (konst, code) in KONSTS {
        if code.ends_with(PARAMETER) {
            assert_eq!(*konst, "_", "{code}");
        } else {
            assert_eq!(Some(*konst), code.strip_prefix("MCP_RES_"), "{code}");
        }
    }
    assert_eq!(
        FRAMING_NEWLINE_DELIMITED,
        "MCP_RES_FRAMING_NEWLINE_DELIMITED"
    );
    assert_eq!(OAUTH_OTHER_REFUSAL, "MCP_RES_OAUTH_OTHER_REFUSAL");
}

#[test]
fn no_code_is_also_a_diagnostic() {
    for r in ALL {
        let bare = r.code.strip_suffix(PARAMETER).unwrap_or(r.code);
        assert_eq!(Code::parse(r.code), None, "{} is a diagnostic too", r.code);
        for c in Code::ALL {
            assert!(!r.matches(c.as_str()), "{} covers diagnostic {c}", r.code);
            assert!(
                !(r.is_generated() && c.as_str().starts_with(bare)),
                "{c} starts like {}",
                r.code
            );
        }
    }
}

#[test]
fn every_meaning_is_one_plain_line() {
    for r in ALL {
        let m = r.meaning;
        assert!(!m.trim().is_empty(), "{}: no meaning", r.code);
        assert_eq!(m, m.trim(), "{}: outer whitespace", r.code);
        assert!(!m.contains('\n') && !m.contains('|'), "{}", r.code);
        assert!(m.ends_with('.'), "{}: a meaning is a sentence", r.code);
    }
}

#[test]
fn families_are_contiguous_in_family_order() {
    let mut order: Vec<ReasonFamily> = ALL.iter().map(|r| r.family).collect();
    order.dedup();
    assert_eq!(order, ReasonFamily::ALL);
}

#[test]
fn generated_families_build_and_parse() {
    assert_eq!(jsonrpc_error(32602), "MCP_RES_JSONRPC_ERROR_32602");
    assert_eq!(http_status(401), "MCP_RES_HTTP_STATUS_401");
    for code in [jsonrpc_error(32700), http_status(503), http_status(0)] {
        let r = Reason::parse(&code).expect("a table entry");
        assert!(r.is_generated(), "{code}");
        assert!(well_formed(&code));
    }
    assert_eq!(
        Reason::parse("MCP_RES_HTTP_STATUS_401").map(|r| r.code),
        Some(HTTP_STATUS_FAMILY)
    );
    assert_eq!(
        Reason::parse("MCP_RES_JSONRPC_ERROR_1").map(|r| r.code),
        Some(JSONRPC_ERROR_FAMILY)
    );
    for not in [
        "MCP_RES_HTTP_STATUS_",
        "MCP_RES_HTTP_STATUS_4O1",
        "MCP_RES_HTTP_STATUS_401_",
        "MCP_RES_HTTP_STATUS_{n}",
        "MCP_RES_JSONRPC_ERROR_-32600",
        "MCP_RES_JSONRPC_ERROR_12345678901",
        "mcp_res_syntax_guard",
        "MCP_RES_NO_SUCH_REASON",
        "",
    ] {
        assert_eq!(Reason::parse(not), None, "{not}");
    }
}

/// The OAuth ids of `profiles/oauth-boundary-v1.json`, in manifest order.
fn oauth_manifest_checks() -> Vec<String> {
    let text = std::fs::read_to_string(root().join("profiles/oauth-boundary-v1.json"))
        .expect("the OAuth manifest");
    let doc: serde_json::Value = serde_json::from_str(&text).expect("JSON");
    let mut ids = Vec::new();
    for list in ["requiredChecks", "conditionalChecks", "experimentalChecks"] {
        for c in doc[list].as_array().expect("a check list") {
            let id = c.get("id").unwrap_or(c).as_str().expect("a check id");
            ids.push(id.to_string());
        }
    }
    ids
}

/// The table lists, in manifest order, an ACCEPTED and a REJECTED code for every check of
/// `mcp-res/oauth-boundary/v1` and no other pair; each is the validator's derivation.
#[test]
fn oauth_pairs_are_the_manifest_checks() {
    let ids = oauth_manifest_checks();
    assert_eq!(ids.len(), 25);
    let mut expected = Vec::new();
    for id in &ids {
        for branch in [Branch::Accepted, Branch::Rejected] {
            let code = oauth_case(id, branch).unwrap_or_else(|| panic!("{id} {branch:?}"));
            assert_eq!(code, derive_oauth_case(id, branch.as_str()));
            assert_eq!(
                code,
                crate::validate::oauth::reason_code(id, branch.as_str())
            );
            let r = Reason::parse(code).expect("in the table");
            let kind = match branch {
                Branch::Accepted => ReasonKind::Holds,
                Branch::Rejected => ReasonKind::Refused,
            };
            assert_eq!(r.kind, kind, "{code}");
            expected.push(code);
        }
    }
    let pairs: Vec<&str> = ALL
        .iter()
        .filter(|r| {
            r.family == ReasonFamily::OauthBoundary
                && (r.code.ends_with("_ACCEPTED") || r.code.ends_with("_REJECTED"))
        })
        .map(|r| r.code)
        .collect();
    assert_eq!(pairs, expected);
    assert_eq!(oauth_case("no-such-check", Branch::Accepted), None);
}

/// Every check the OAuth runner runs has its pair in the table (so its `reason` never fails).
#[cfg(feature = "server")]
#[test]
fn the_oauth_runner_checks_have_their_pairs() {
    for id in crate::produce::oauth::checks::CHECKS.iter().map(|d| d.id) {
        for branch in [Branch::Accepted, Branch::Rejected] {
            assert_eq!(
                crate::produce::oauth::reason(id, branch.as_str()),
                oauth_case(id, branch).expect("in the table")
            );
        }
    }
}

/// The files that write reason codes: every producer, and the OAuth validator that derives
/// the codes of a case.
fn producer_files() -> Vec<PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
            .expect("a source folder")
            .map(|e| e.expect("an entry").path())
            .collect();
        entries.sort();
        for path in entries {
            if path.is_dir() {
                walk(&path, out);
            } else if path.extension().is_some_and(|e| e == "rs") {
                out.push(path);
            }
        }
    }
    let mut files = Vec::new();
    walk(&root().join("src/produce"), &mut files);
    files.push(root().join("src/validate/oauth.rs"));
    files
}

/// Every `"MCP_RES_...` literal in a file (with its line), and whether it is a complete code
/// (the literal ends, or goes on with `:` as in an error message) or the start of a generated
/// one (`"MCP_RES_HTTP_STATUS_{s}"`).
fn literals(text: &str) -> Vec<(usize, String, bool)> {
    let mut out = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let mut rest = line;
        while let Some(at) = rest.find("\"MCP_RES_") {
            let tail = &rest[at + 1..];
            let len = tail
                .bytes()
                .take_while(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || *b == b'_')
                .count();
            let complete = matches!(tail.as_bytes().get(len), Some(b'"' | b':'));
            out.push((n + 1, tail[..len].to_string(), complete));
            rest = &tail[len..];
        }
    }
    out
}

/// No producer writes a reason code the table does not hold: every `"MCP_RES_*"` literal is
/// a reason code or a diagnostic code, and no code is assembled with `format!` outside the
/// reason module (generated families are built by `jsonrpc_error`, `http_status` and
/// `oauth_case`).
#[test]
fn producers_write_only_codes_of_the_tables() {
    let files = producer_files();
    assert!(files.len() > 20, "{files:?}");
    let mut bad = Vec::new();
    let mut count = 0;
    for path in &files {
        let text = std::fs::read_to_string(path).expect("a source file");
        let name = path
            .strip_prefix(root())
            .unwrap_or(path)
            .display()
            .to_string();
        for (line, code, complete) in literals(&text) {
            count += 1;
            let known = Reason::parse(&code).is_some() || Code::parse(&code).is_some();
            if !complete || !known {
                bad.push(format!("{name}:{line}: {code}"));
            }
        }
        for (n, line) in text.lines().enumerate() {
            if line.contains("format!(\"MCP_RES_") {
                bad.push(format!("{name}:{}: format! of a code", n + 1));
            }
        }
    }
    assert!(
        bad.is_empty(),
        "codes a producer writes that neither the reason table (src/diag/reasons/table.rs) \
         nor the diagnostics table holds:\n{}",
        bad.join("\n")
    );
    // The scan sees the literals it is about (for example the diagnostic codes of error
    // messages), so an empty result is not an empty scan.
    assert!(count > 0);
    let caught = literals("x(\"MCP_RES_HTTP_STATUS_{s}\"); y(\"MCP_RES_NOPE\");");
    assert_eq!(
        caught,
        [
            (1, "MCP_RES_HTTP_STATUS_".to_string(), false),
            (1, "MCP_RES_NOPE".to_string(), true)
        ]
    );
}

/// `spec/reasons.md` as the table gives it.
fn spec_text() -> String {
    let mut s = String::new();
    s.push_str(
        "# Reason codes\n\
         \n\
         <!-- Generated from src/diag/reasons/table.rs; do not edit by hand. After changing the \
         table, run `MCPRES_WRITE_SPEC=1 cargo test --lib diag::reasons` to rewrite this file \
         (the test `spec_is_the_table` fails while the two differ). -->\n\
         \n\
         A reason code is what a producer writes into an observation: the \
         `expectedReasonCode` and `observedReasonCode` of a probe, and the `reason` of a \
         check's verdict (`run.json`, `evaluation.json`). It says what was observed. A \
         diagnostic code ([diagnostics.md](diagnostics.md)) is what a validator reports about a \
         document; no code is both. `mcpres explain CODE` explains either kind, and `mcpres \
         explain --list` lists the reason codes after the diagnostics.\n\
         \n\
         Every reason code has a kind:\n\
         \n",
    );
    for kind in ReasonKind::ALL {
        let what = match kind {
            ReasonKind::Holds => {
                "the positive's expected reason (for OAuth, the check's `_ACCEPTED` code)"
            }
            ReasonKind::Refused => {
                "the negative control's expected reason (for OAuth, the check's `_REJECTED` code)"
            }
            ReasonKind::Wrong => {
                "the property did not hold, or the request was stopped before it (the syntax guards the wrong-reason mutants must meet are of this kind)"
            }
            ReasonKind::NotObserved => "nothing could be judged",
        };
        let _ = writeln!(
            s,
            "- `{}`: {}; {what}.",
            kind.as_str(),
            kind.title().to_lowercase()
        );
    }
    s.push_str(
        "\nA code ending in `{n}` is a generated family: `{n}` stands for one to ten decimal \
         digits (`MCP_RES_HTTP_STATUS_503`). The OAuth per-check pairs are listed one by one, \
         for the 25 checks of `mcp-res/oauth-boundary/v1` in manifest order; the subject's own \
         words for a refusal that is not the check's reason never enter a code \
         (`MCP_RES_OAUTH_OTHER_REFUSAL`, with the words in the observation's `detail`).\n",
    );
    for family in ReasonFamily::ALL {
        let of: Vec<&Reason> = ALL.iter().filter(|r| r.family == *family).collect();
        let _ = write!(
            s,
            "\n## {family}\n\n{} {} codes.\n\n| code | kind | meaning |\n|---|---|---|\n",
            family.about(),
            of.len()
        );
        for r in of {
            let _ = writeln!(s, "| `{}` | {} | {} |", r.code, r.kind, r.meaning);
        }
    }
    s
}

/// spec/reasons.md is generated from the table: the two are equal.
#[test]
fn spec_is_the_table() {
    let path = root().join(SPEC_PATH);
    let want = spec_text();
    if std::env::var_os("MCPRES_WRITE_SPEC").is_some() {
        std::fs::write(&path, &want).expect("write spec/reasons.md");
    }
    let have = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        have == want,
        "{SPEC_PATH} differs from the reason table; run `MCPRES_WRITE_SPEC=1 cargo test --lib diag::reasons` and commit it"
    );
    for r in ALL {
        assert!(have.contains(&format!("| `{}` |", r.code)), "{}", r.code);
    }
}

/// Words carried with a code (the subject's own reason for a refusal) end in the detail,
/// never in the code an observation records.
#[test]
fn carried_words_go_to_the_detail() {
    let reason = with_words(OAUTH_OTHER_REFUSAL, "token sk-live-abc is revoked");
    assert_eq!(
        split_words(&reason),
        (OAUTH_OTHER_REFUSAL, Some("token sk-live-abc is revoked"))
    );
    let (code, detail) = into_code_and_detail(reason.clone(), "401 invalid_token".into());
    assert_eq!(code, OAUTH_OTHER_REFUSAL);
    assert_eq!(
        detail,
        "401 invalid_token; the reason given: token sk-live-abc is revoked"
    );
    // A detail that already quotes the reason with its words is kept as it is.
    let quoted = format!("401 ({reason})");
    assert_eq!(
        into_code_and_detail(reason.clone(), quoted.clone()),
        (OAUTH_OTHER_REFUSAL.to_string(), quoted)
    );
    assert_eq!(
        into_code_and_detail(reason, String::new()).1,
        "the reason given: token sk-live-abc is revoked"
    );
    // A plain code passes unchanged.
    assert_eq!(
        into_code_and_detail(SYNTAX_GUARD.into(), "d".into()),
        (SYNTAX_GUARD.to_string(), "d".to_string())
    );
    // The words are bounded (in characters).
    let long = with_words(OAUTH_OTHER_REFUSAL, &"é".repeat(500));
    assert_eq!(split_words(&long).1.map(|w| w.chars().count()), Some(120));
    // Distinct words stay distinct until the observation is built (a runner compares them).
    assert_ne!(
        with_words(OAUTH_OTHER_REFUSAL, "expired"),
        with_words(OAUTH_OTHER_REFUSAL, "unnamed")
    );
}

/// An observation never records carried words as its reason: `obs` and `mutant` (every
/// producer's observations go through them) move them to the detail.
#[cfg(feature = "server")]
#[test]
fn observations_record_the_code_alone() {
    use crate::model::vocab::ProbeOutcome;
    use crate::produce::profile::check::{mutant, obs};
    let said = with_words(OAUTH_OTHER_REFUSAL, "subject says: hunter2");
    let o = obs(
        ProbeOutcome::Reject,
        OAUTH_ISSUER_BINDING_REJECTED,
        (ProbeOutcome::Reject, said.clone()),
        true,
        "401",
        serde_json::Value::Null,
    );
    assert_eq!(o.observed_reason, OAUTH_OTHER_REFUSAL);
    assert_eq!(o.detail, "401; the reason given: subject says: hunter2");
    assert!(!o.held());
    let m = mutant(
        OAUTH_ISSUER_BINDING_REJECTED,
        (ProbeOutcome::Reject, said),
        "",
        serde_json::Value::Null,
    );
    assert_eq!(m.observed_reason, OAUTH_OTHER_REFUSAL);
    assert!(!m.reached);
    assert_eq!(m.detail, "the reason given: subject says: hunter2");
}
