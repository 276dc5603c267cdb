use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use super::*;
use crate::diag::reasons::{Reason, ReasonKind};
use crate::model::vocab::ProbeOutcome;
use crate::produce::catalogue::{describe, protocol_profiles, spec_section};
use crate::produce::profile::check::{CheckRun, obs};
use crate::profiles::Registry;

const SPEC_PATH: &str = "spec/profiles.md";

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn revision(s: &str) -> Revision {
    REVISIONS
        .into_iter()
        .find(|r| r.as_str() == s)
        .unwrap_or_else(|| panic!("no released revision {s}"))
}

fn declared(profile: &str) -> &'static [CheckDecl] {
    protocol_profiles()
        .into_iter()
        .find(|(p, _)| *p == profile)
        .map(|(_, c)| c)
        .unwrap_or_else(|| panic!("no declarations for {profile}"))
}

/// Calls `$f(profile, checks)` for every runner's declarations (the protocol profiles'
/// and the OAuth boundary's, whose runners differ in type).
macro_rules! for_every_table {
    ($f:ident) => {{
        for (profile, checks) in protocol_profiles() {
            $f(profile, checks);
        }
        $f(OAUTH_BOUNDARY, crate::produce::oauth::checks::CHECKS);
    }};
}

fn codes_in_the_table<R>(profile: &str, checks: &[CheckDecl<R>]) {
    for d in checks {
        for (code, kind) in d
            .held
            .all()
            .into_iter()
            .map(|c| (c, ReasonKind::Holds))
            .chain(
                d.refused
                    .all()
                    .into_iter()
                    .map(|c| (c, ReasonKind::Refused)),
            )
        {
            let r = Reason::parse(code)
                .unwrap_or_else(|| panic!("{profile} {}: {code} is not in the reason table", d.id));
            assert_eq!(r.kind, kind, "{profile} {}: {code}", d.id);
        }
    }
}

/// Every declared `held` code is a reason of kind holds, every `refused` one of kind
/// refused, in the reason table.
#[test]
fn declared_codes_are_in_the_reason_table() {
    for_every_table!(codes_in_the_table);
    // The OAuth pairs are the table's per-check pairs.
    use crate::diag::reasons::{Branch, oauth_case};
    for d in crate::produce::oauth::checks::CHECKS {
        for rev in REVISIONS {
            assert_eq!(Some(d.held.at(rev)), oauth_case(d.id, Branch::Accepted));
            assert_eq!(Some(d.refused.at(rev)), oauth_case(d.id, Branch::Rejected));
        }
    }
}

fn follows_the_manifest<R>(profile: &str, checks: &[CheckDecl<R>]) {
    let registry = Registry::builtin().expect("the built-in registry");
    let p = registry.get(profile).expect("registered");
    let ids: Vec<&str> = checks.iter().map(|d| d.id).collect();
    let registered: Vec<String> = p
        .required_checks
        .iter()
        .cloned()
        .chain(p.conditional_checks.iter().map(|c| c.id.clone()))
        .collect();
    if profile == crate::judge::ops::PROFILE {
        // mcpres runs part of the operational profile so far: a subset, in the
        // manifest's order.
        let order: Vec<&str> = registered
            .iter()
            .map(String::as_str)
            .filter(|r| ids.contains(r))
            .collect();
        assert_eq!(ids, order, "{profile}");
    } else {
        assert_eq!(ids, registered, "{profile}");
    }
    for d in checks {
        assert_eq!(d.profile, profile, "{}", d.id);
        for rev in REVISIONS {
            if !p.supports_revision(rev.as_str()) {
                continue;
            }
            let applies = p
                .applicable_check_ids(rev.as_str())
                .iter()
                .any(|a| a == d.id);
            assert_eq!(
                d.needs.revisions.contains(rev),
                applies,
                "{profile} {} at {}",
                d.id,
                rev.as_str()
            );
        }
    }
}

/// The declarations are the manifests' checks: the same ids in manifest order, each
/// applying to the revisions the manifest gives it, and belonging to its profile.
#[test]
fn declarations_follow_the_manifests() {
    for_every_table!(follows_the_manifest);
    for (profile, checks) in protocol_profiles() {
        assert_eq!(
            crate::produce::profile::runnable(profile).map(<[CheckDecl]>::len),
            Some(checks.len())
        );
    }
}

fn states_its_basis<R>(profile: &str, checks: &[CheckDecl<R>]) {
    for d in checks {
        assert!(!d.basis.is_empty(), "{profile} {}: no basis", d.id);
        assert!(!d.judged.is_empty(), "{profile} {}: no judged text", d.id);
        for rev in REVISIONS
            .into_iter()
            .filter(|r| d.needs.revisions.contains(*r))
        {
            for side in [Side::Positive, Side::Negative] {
                assert!(
                    d.basis_at(rev).any(|b| b.side.covers(side)),
                    "{profile} {}: nothing speaks for the {side:?} at {}",
                    d.id,
                    rev.as_str()
                );
            }
        }
        for b in d.basis {
            assert!(!b.section.is_empty() && !b.says.is_empty(), "{}", d.id);
            // A requirement of one revision's text is never cited for a check that
            // does not apply at that revision.
            if let Revisions::Only(r) = b.revisions() {
                assert!(d.needs.revisions.contains(r), "{} cites {}", d.id, b.source);
            }
        }
    }
}

/// Every check states what it stands on for both observations at every revision it
/// applies to, and how it is judged.
#[test]
fn every_check_states_its_basis() {
    for_every_table!(states_its_basis);
}

/// The OAuth declarations keep the evidence source each check had: the subject's
/// behaviour (RUNTIME_PROBE) for eight, the fixture's and the runner's for the rest; and
/// only token-storage-omission needs a subject mcpres starts.
#[test]
fn oauth_declarations_keep_their_sources() {
    let runtime: Vec<&str> = crate::produce::oauth::checks::CHECKS
        .iter()
        .filter(|d| !d.needs.fixture)
        .map(|d| d.id)
        .collect();
    assert_eq!(
        runtime,
        [
            "protected-resource-metadata-discovery",
            "issuer-binding",
            "access-token-audience",
            "wrong-resource-token-rejection",
            "token-passthrough-prohibited",
            "scope-minimization",
            "token-storage-omission",
            "sanitized-authorization-errors",
        ]
    );
    let launch: Vec<&str> = crate::produce::oauth::checks::CHECKS
        .iter()
        .filter(|d| d.needs.launch)
        .map(|d| d.id)
        .collect();
    assert_eq!(launch, ["token-storage-omission"]);
}

/// The needs the engine acts on: child-tree-cleanup alone runs alone; the cleanup checks
/// of Streamable HTTP need a subject mcpres starts.
#[test]
fn needs_are_declared() {
    let alone: Vec<&str> = protocol_profiles()
        .into_iter()
        .flat_map(|(_, c)| c.iter())
        .filter(|d| d.needs.alone)
        .map(|d| d.id)
        .collect();
    // child-tree-cleanup, and every operational check (each measures the subject's pace
    // and processes, which a concurrent probe would disturb).
    let ops: Vec<&str> = crate::produce::profile::ops::checks::CHECKS
        .iter()
        .map(|d| d.id)
        .collect();
    assert_eq!(alone, [&["child-tree-cleanup"][..], &ops].concat());
    let launch: Vec<&str> = declared("mcp-res/streamable-http/v1")
        .iter()
        .filter(|d| d.needs.launch)
        .map(|d| d.id)
        .collect();
    assert_eq!(launch, ["listener-cleanup", "socket-cleanup"]);
}

fn observation(
    outcome: ProbeOutcome,
    expected_reason: &str,
) -> crate::produce::profile::check::Obs {
    obs(
        outcome,
        expected_reason,
        (outcome, expected_reason.into()),
        true,
        "",
        json!({}),
    )
}

/// The engine's rule: a run whose observations expect other reasons than the declared ones
/// is recorded as not observed (a programming error), with every contradiction named; a
/// run that agrees is kept as it is.
#[test]
fn a_run_that_contradicts_its_declaration_is_not_observed() {
    let decl = &declared("mcp-res/stdio-transport/v1")[0];
    let rev = Revision::V2025_11_25;
    let agreeing = CheckRun {
        id: decl.id,
        positive: Some(observation(ProbeOutcome::Accept, decl.held.at(rev))),
        negative: Some(observation(ProbeOutcome::Reject, decl.refused.at(rev))),
        mutant: None,
        not_observed: None,
        server: None,
    };
    let kept = conform(decl, rev, agreeing.clone());
    assert!(kept.positive.is_some() && kept.not_observed.is_none());
    let mut wrong = agreeing.clone();
    wrong.negative = Some(observation(ProbeOutcome::Reject, decl.held.at(rev)));
    let recorded = conform(decl, rev, wrong);
    assert!(recorded.positive.is_none() && recorded.negative.is_none());
    let why = recorded.not_observed.clone().expect("not observed");
    assert!(why.starts_with(MISMATCH), "{why}");
    assert!(why.contains("negative control"), "{why}");
    assert_eq!(
        recorded.verdict().0,
        crate::judge::profile::Verdict::NotObserved
    );
    // A per-revision declaration is held to the code of the run's revision.
    let split =
        CheckDecl::new(decl.profile, decl.id, decl.run, "A", "B").refused_per_revision("B", "C");
    assert!(mismatches(&split, Revision::V2025_11_25, Some("A"), Some("B")).is_empty());
    assert_eq!(
        mismatches(&split, Revision::V2026_07_28, Some("A"), Some("B")).len(),
        1
    );
    // A check not observed by its runner has nothing to contradict.
    let none = CheckRun::not_observed(decl.id, "no child");
    assert_eq!(
        conform(decl, rev, none).not_observed.as_deref(),
        Some("no child")
    );
}

/// Every committed profile evaluation directory (the runner's own outputs under
/// `bundles/`), with its profile id and revision.
fn committed_evaluations() -> Vec<(PathBuf, String, Revision)> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        let mut entries: Vec<PathBuf> = entries.map(|e| e.expect("an entry").path()).collect();
        entries.sort();
        for path in entries {
            if path.is_dir() {
                if path.join("run.json").is_file() && path.join("artifacts").is_dir() {
                    out.push(path.clone());
                }
                walk(&path, out);
            }
        }
    }
    let mut dirs = Vec::new();
    walk(&root().join("bundles"), &mut dirs);
    dirs.into_iter()
        .filter_map(|dir| {
            let run: Value =
                serde_json::from_slice(&std::fs::read(dir.join("run.json")).ok()?).ok()?;
            let profile = run.pointer("/profile/id")?.as_str()?.to_string();
            let rev = run.pointer("/profile/protocolRevision")?.as_str()?;
            Some((dir, profile, revision(rev)))
        })
        .collect()
}

/// What the runners really wrote agrees with the declarations: in every committed
/// evaluation (the three protocol profiles, operational resilience, cache behaviour and the OAuth boundary), each check's positive
/// expects the declared `held` and its negative control the declared `refused` reason of
/// the evaluated revision.
#[test]
fn committed_evaluations_agree_with_the_declarations() {
    let mut read = 0;
    let mut profiles = BTreeSet::new();
    for (dir, profile, rev) in committed_evaluations() {
        profiles.insert(profile.clone());
        if profile == OAUTH_BOUNDARY {
            read += agree(&dir, rev, crate::produce::oauth::checks::CHECKS);
            continue;
        }
        let Some((_, checks)) = protocol_profiles().into_iter().find(|(p, _)| *p == profile) else {
            panic!("{}: no declarations for {profile}", dir.display());
        };
        read += agree(&dir, rev, checks);
    }
    // The bundles hold evaluations of all three protocol profiles, the operational one,
    // the cache one and the OAuth boundary.
    assert_eq!(profiles.len(), 6, "{profiles:?}");
    assert!(read > 300, "{read} observations read");
}

/// How many of `dir`'s observations were read; panics on one that contradicts its
/// declaration.
fn agree<R>(dir: &Path, rev: Revision, checks: &[CheckDecl<R>]) -> usize {
    let mut read = 0;
    for d in checks {
        let doc = |role: &str| -> Option<String> {
            let path = dir
                .join("artifacts")
                .join(d.id)
                .join(format!("{role}.json"));
            let v: Value = serde_json::from_slice(&std::fs::read(&path).ok()?)
                .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            Some(
                v["expectedReasonCode"]
                    .as_str()
                    .unwrap_or_else(|| panic!("{}: no expectedReasonCode", path.display()))
                    .to_string(),
            )
        };
        let (p, n) = (doc("positive"), doc("negative"));
        read += usize::from(p.is_some()) + usize::from(n.is_some());
        let found = mismatches(d, rev, p.as_deref(), n.as_deref());
        assert!(found.is_empty(), "{}: {}", dir.display(), found.join("; "));
    }
    read
}

/// spec/profiles.md shows the declarations: its generated section is [`spec_section`].
/// `MCPRES_WRITE_SPEC=1` rewrites it.
#[test]
fn spec_shows_the_declarations() {
    let path = root().join(SPEC_PATH);
    let have = std::fs::read_to_string(&path).expect("spec/profiles.md");
    let (Some(b), Some(e)) = (have.find(SPEC_BEGIN), have.find(SPEC_END)) else {
        panic!("{SPEC_PATH} has no generated section ({SPEC_BEGIN} ... {SPEC_END})");
    };
    let inner_start = b + SPEC_BEGIN.len();
    let want = spec_section();
    if std::env::var_os("MCPRES_WRITE_SPEC").is_some() {
        let text = format!("{}{want}{}", &have[..inner_start], &have[e..]);
        std::fs::write(&path, text).expect("write spec/profiles.md");
        return;
    }
    assert!(
        have[inner_start..e] == want,
        "{SPEC_PATH}'s generated section differs from the check declarations; run `MCPRES_WRITE_SPEC=1 cargo test --lib produce::profile::decl` and commit it"
    );
    for (_, checks) in protocol_profiles() {
        for d in checks {
            assert!(want.contains(&format!("| {} |", d.id)), "{}", d.id);
        }
    }
}

/// The table cell of a level pair, and a check whose sides differ.
#[test]
fn levels_are_per_side_and_revision() {
    let d = declared("mcp-res/streamable-http/v1")
        .iter()
        .find(|d| d.id == "malformed-chunk")
        .expect("declared");
    assert_eq!(
        d.level_at(Revision::V2025_11_25, Side::Positive),
        Level::Must
    );
    assert_eq!(
        d.level_at(Revision::V2025_11_25, Side::Negative),
        Level::Should
    );
    assert_eq!(d.weakest_at(Revision::V2026_07_28), Level::Should);
    assert_eq!(levels(d), "+MUST −SHOULD");
    let split = declared("mcp-res/protocol-revision/v1")
        .iter()
        .find(|d| d.id == "explicit-protocol-revision")
        .expect("declared");
    assert_eq!(
        levels(split),
        "2025-11-25: +MUST −NONE<br>2026-07-28: +MUST −MUST"
    );
}

/// `mcpres explain CHECK-ID`: every declaration of the id, with its basis; nothing for an
/// id no runner declares.
#[test]
fn a_check_id_is_described() {
    let both = describe("backpressure").expect("declared");
    assert!(
        both.contains("backpressure (mcp-res/stdio-transport/v1)"),
        "{both}"
    );
    assert!(
        both.contains("backpressure (mcp-res/streamable-http/v1)"),
        "{both}"
    );
    assert!(both.contains("RFC 9112, §9.3.2 (MUST)"), "{both}");
    let oauth = describe("token-storage-omission").expect("declared");
    assert!(oauth.contains("a subject mcpres starts"), "{oauth}");
    assert_eq!(describe("no-such-check"), None);
    assert_eq!(describe("MCP_RES_SYNTAX_GUARD"), None);
}

/// The judge's table of HTTP refusals names each check's own negative
/// reason, at every revision the check runs at, and every check it names is
/// a Streamable HTTP check.
#[test]
fn the_judges_http_refusals_are_the_declared_negative_reasons() {
    for r in crate::judge::http::REFUSALS {
        let decl = crate::produce::profile::streamable::CHECKS
            .iter()
            .find(|d| d.id == r.check)
            .unwrap_or_else(|| panic!("{} is no Streamable HTTP check", r.check));
        assert_eq!(decl.refused.all(), vec![r.reason], "{}", r.check);
        assert!(
            !r.statuses.is_empty() || !r.codes.is_empty() || r.tool_error,
            "{} refuses nothing",
            r.check
        );
    }
}

/// `src/judge/expected.tsv`, the declared reasons as the judge reads them: one line per
/// protocol profile, check and revision it applies to, with the positive's `held` and the
/// control's `refused`.
fn expected_table() -> String {
    let mut s = String::from(
        "# The reasons each protocol-profile check's positive and negative control expect, per\n\
         # revision: generated from the check declarations (src/produce/profile/decl.rs); do not\n\
         # edit by hand: run `MCPRES_WRITE_SPEC=1 cargo test --lib produce::profile::decl`.\n\
         # profile\tcheck\trevision\theld\trefused\n",
    );
    for (profile, checks) in protocol_profiles() {
        for d in checks {
            for rev in REVISIONS
                .into_iter()
                .filter(|r| d.needs.revisions.contains(*r))
            {
                s.push_str(&format!(
                    "{profile}\t{}\t{}\t{}\t{}\n",
                    d.id,
                    rev.as_str(),
                    d.held.at(rev),
                    d.refused.at(rev)
                ));
            }
        }
    }
    s
}

/// The judge holds stored expectations to the declarations through `expected.tsv`, which
/// must be what they give. `MCPRES_WRITE_SPEC=1` rewrites it.
#[test]
fn the_judges_expected_reasons_are_the_declarations() {
    let path = root().join("src/judge/expected.tsv");
    let want = expected_table();
    if std::env::var_os("MCPRES_WRITE_SPEC").is_some() {
        std::fs::write(&path, &want).expect("write src/judge/expected.tsv");
        return;
    }
    let have = std::fs::read_to_string(&path).expect("src/judge/expected.tsv");
    assert!(
        have == want,
        "src/judge/expected.tsv differs from the check declarations; run `MCPRES_WRITE_SPEC=1 cargo test --lib produce::profile::decl` and commit it"
    );
    for (profile, checks) in protocol_profiles() {
        for d in checks {
            for rev in REVISIONS
                .into_iter()
                .filter(|r| d.needs.revisions.contains(*r))
            {
                assert_eq!(
                    crate::judge::vocabulary::expected(profile, d.id, rev.as_str()),
                    Some((d.held.at(rev), d.refused.at(rev))),
                    "{profile} {}",
                    d.id
                );
            }
        }
    }
}

/// Every declared protocol-profile check has a vocabulary, and each check's own held and
/// refused reasons are in it (for the positive and the control, with the outcome the
/// declaration's observations expect).
#[test]
fn every_declared_check_has_a_vocabulary_holding_its_own_reasons() {
    use crate::judge::vocabulary::{admits, covers};
    for (profile, checks) in protocol_profiles() {
        for d in checks {
            assert!(
                covers(profile, d.id),
                "{profile} {} has no vocabulary",
                d.id
            );
            for rev in REVISIONS
                .into_iter()
                .filter(|r| d.needs.revisions.contains(*r))
            {
                let held = d.held.at(rev);
                let refused = d.refused.at(rev);
                let some = |role: &str, reason: &str| {
                    [
                        ProbeOutcome::Accept,
                        ProbeOutcome::Reject,
                        ProbeOutcome::Terminate,
                        ProbeOutcome::NoEffect,
                    ]
                    .into_iter()
                    .any(|o| admits(profile, d.id, role, o, reason) == Some(true))
                };
                assert!(some("positive", held), "{profile} {} positive {held}", d.id);
                assert!(
                    some("negative", refused),
                    "{profile} {} negative {refused}",
                    d.id
                );
            }
        }
    }
}

/// A runner observation outside its check's vocabulary is a programming error: the
/// engine records the check as not observed, naming the label.
#[test]
fn an_observation_outside_the_vocabulary_is_never_written() {
    let d = declared("mcp-res/stdio-transport/v1")
        .iter()
        .find(|d| d.id == "silent-process")
        .expect("declared");
    let rev = Revision::V2025_11_25;
    let run = |negative_reason: &str| CheckRun {
        id: d.id,
        positive: Some(obs(
            ProbeOutcome::Accept,
            d.held.at(rev),
            (ProbeOutcome::Accept, d.held.at(rev).to_string()),
            true,
            String::new(),
            json!({}),
        )),
        negative: Some(obs(
            ProbeOutcome::NoEffect,
            d.refused.at(rev),
            (ProbeOutcome::NoEffect, negative_reason.to_string()),
            true,
            String::new(),
            json!({}),
        )),
        mutant: None,
        not_observed: None,
        server: None,
    };
    let kept = conform(d, rev, run(d.refused.at(rev)));
    assert!(kept.not_observed.is_none() && kept.negative.is_some());
    let foreign = crate::diag::reasons::TERMINATION_NEEDED_SIGKILL;
    let dropped = conform(d, rev, run(foreign));
    let why = dropped.not_observed.expect("not observed");
    assert!(why.starts_with(MISMATCH) && why.contains(foreign), "{why}");
    assert!(dropped.negative.is_none());
}
