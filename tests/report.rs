//! `mcpres report`: the real binary writes one self-contained HTML page from what validation
//! derived (issue 20, item 1). The page names the verdict, the digests and every observation
//! surface, references no resource outside itself, and escapes every string of its input.

mod support;

use std::fs;
use std::path::{Path, PathBuf};

use serde_json::Value;
use support::{mcpres, output_text, read_json};

fn repo(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(rel)
}

/// Run `mcpres report INPUTS -o <tmp>/report.html`; the exit code and the page.
fn report(inputs: &[&Path]) -> (i32, String) {
    report_with(inputs, &[])
}

/// As [`report`], with more arguments before the inputs.
fn report_with(inputs: &[&Path], extra: &[&str]) -> (i32, String) {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("report.html");
    let mut args: Vec<&std::ffi::OsStr> = vec!["report".as_ref()];
    args.extend(extra.iter().map(|a| std::ffi::OsStr::new(*a)));
    args.extend(inputs.iter().map(|p| p.as_os_str()));
    args.push("-o".as_ref());
    args.push(out.as_os_str());
    let o = mcpres(&args);
    let page = fs::read_to_string(&out)
        .unwrap_or_else(|e| panic!("no page written ({e}): {}", output_text(&o)));
    (o.status.code().unwrap(), page)
}

/// The page's markup: the tags and the style sheet, without the text between tags (text is
/// escaped input and may say anything). Input never adds a `<`, so each one opens a tag.
fn markup(page: &str) -> String {
    let mut out = String::new();
    let mut rest = page;
    while let Some(open) = rest.find('<') {
        let close = rest[open..].find('>').map_or(rest.len(), |c| open + c + 1);
        let tag = &rest[open..close];
        out.push_str(tag);
        rest = &rest[close..];
        if tag.starts_with("<style") {
            let end = rest.find("</style>").unwrap_or(rest.len());
            out.push_str(&rest[..end]);
            rest = &rest[end..];
        }
    }
    out
}

/// No reference to anything outside the page: no URL, no script, no external stylesheet.
fn assert_self_contained(page: &str) {
    assert!(
        !page.contains("http://") && !page.contains("https://"),
        "the page names a URL"
    );
    let page = markup(page);
    // One inline script (copy buttons, sorting), allowed by its hash; none loaded from elsewhere.
    assert_eq!(page.matches("<script").count(), 1, "exactly one script");
    assert_eq!(page.matches("<script>").count(), 1, "the script is inline");
    for needle in ["<link", "<img", "<iframe", "src=", "@import", "url("] {
        assert!(
            !page.contains(needle),
            "the page contains {needle:?}: it must reference nothing outside itself"
        );
    }
}

const SURFACES: [&str; 14] = [
    "MCP_WIRE_MESSAGES",
    "RAW_HTTP_REQUESTS",
    "RAW_HTTP_RESPONSES",
    "STDIO_INPUT_OUTPUT",
    "CHILD_PROCESS_LIFECYCLE",
    "TRANSPORT_DISCONNECTS",
    "RETRIES",
    "FILESYSTEM_OUTPUTS",
    "CLEANUP",
    "GENERATED_REGRESSION_EXECUTION",
    "AUTHORIZATION_REDIRECTS",
    "TOKEN_ENDPOINT",
    "CACHE_BEHAVIOR",
    "SOURCE_EVIDENCE",
];

#[test]
fn genuine_runtime_bundle_page_shows_verdict_digests_surfaces_trials_and_controls() {
    let dir = repo("bundles/example-genuine-runtime");
    let (code, page) = report(&[&dir]);
    assert_eq!(code, 0);
    assert_self_contained(&page);
    assert!(page.contains("id=\"verdict-0\">VALID<"));
    let statement = read_json(&dir.join("conformance-statement.json"));
    let manifest = read_json(&dir.join("integrity-manifest.json"));
    for digest in [
        manifest["bundleDigest"].as_str().unwrap(),
        statement["scenarioFingerprint"].as_str().unwrap(),
        statement["executionInstanceDigest"].as_str().unwrap(),
    ] {
        assert!(page.contains(digest), "digest {digest} missing");
    }
    // The bundle digest is the one the page was made from, named as such.
    let bundle_digest = manifest["bundleDigest"].as_str().unwrap();
    assert!(page.contains(&format!("id=\"bundle-digest\">{bundle_digest}<")));
    assert!(page.contains(&format!(
        "<meta name=\"mcpres-bundle-digest\" content=\"{bundle_digest}\">"
    )));
    for surface in SURFACES {
        assert!(
            page.contains(&format!("data-surface=\"{surface}\"")),
            "surface {surface} missing"
        );
    }
    assert!(page.contains("GENUINE_RUNTIME"));
    assert!(page.contains("Derived evidence class"));
    assert!(page.contains("Negative controls (1)"));
    assert!(page.contains("TRUNCATED_FRAME"));
    assert!(page.contains("SINGLE_OBSERVATION"));
    assert!(page.contains("<svg"));
    // The timeline draws every operation and every observation.
    let evidence = read_json(&dir.join("evidence-envelope.json"));
    assert!(page.contains("<h3>Timeline</h3>"));
    assert_eq!(
        page.matches("<rect class=\"op").count(),
        evidence["operations"].as_array().unwrap().len()
    );
    assert_eq!(
        page.matches("<rect class=\"obs\"").count(),
        evidence["observations"].as_array().unwrap().len()
    );
    assert!(page.contains("Limits of this result"));
}

#[test]
fn every_profile_evaluation_page_has_a_check_grid() {
    let root = repo("bundles/profiles");
    let mut seen = 0;
    for entry in fs::read_dir(&root).unwrap() {
        let dir = entry.unwrap().path();
        if !dir.join("evaluation.json").is_file() {
            continue;
        }
        seen += 1;
        // The page's verdict and exit code are those of `mcpres validate` (some committed
        // evaluations record subjects that fail a check).
        let validated = mcpres(&["validate".as_ref(), "-q".as_ref(), dir.as_os_str()]);
        let (code, page) = report(&[&dir]);
        assert_eq!(Some(code), validated.status.code(), "{}", dir.display());
        assert_self_contained(&page);
        let verdict = if code == 0 { "VALID" } else { "INVALID" };
        assert!(page.contains(&format!("id=\"verdict-0\">{verdict}<")));
        let evaluation = read_json(&dir.join("evaluation.json"));
        assert!(page.contains(evaluation["evaluationSha256"].as_str().unwrap()));
        let checks = evaluation["checks"].as_array().unwrap();
        assert!(page.contains(&format!("Profile checks ({})", checks.len())));
        for check in checks {
            let id = check["id"].as_str().unwrap();
            assert!(
                page.contains(&format!("<td><code>{id}</code></td>")),
                "{}: check {id} missing",
                dir.display()
            );
        }
        assert!(page.contains("killed") || page.contains("survived"));
        assert!(page.contains("Limits of this result"));
    }
    assert!(seen >= 10, "only {seen} profile evaluations found");
}

/// An operational evaluation's page draws its measurement report: the latency histogram,
/// resident memory over the soak, the handles and the generator's ceiling, from the
/// digest-bound `artifacts/measurement.json`; other evaluations' pages have none of it.
#[test]
fn an_operational_evaluation_page_draws_its_measurement() {
    let dir = repo("bundles/profiles/reference-operational-resilience-2025-11-25");
    let (code, page) = report(&[&dir]);
    assert_eq!(code, 0);
    assert_self_contained(&page);
    let m = read_json(&dir.join("artifacts/measurement.json"));
    assert!(page.contains("aria-label=\"latency histogram\""));
    assert!(page.contains("aria-label=\"resident memory over the soak\""));
    assert!(page.contains("listening sockets"));
    let ceiling = m["generator"]["ceiling"]["ceilingPerS"].as_u64().unwrap();
    assert!(page.contains(&format!("{ceiling}/s against mcpres's null subject")));
    let judged = m["latency"]["judgedRequests"].as_u64().unwrap();
    assert!(
        page.contains(&format!("<td>{judged} (")),
        "judged requests not shown"
    );
    let other = repo("bundles/profiles/reference-stdio-transport-2025-11-25");
    let (_, plain) = report(&[&other]);
    assert!(!plain.contains("latency histogram"));
}

/// A folder of evaluations stands for the evaluations it holds, as for `validate`.
#[test]
fn a_folder_of_evaluations_gets_one_section_each() {
    let (_, page) = report(&[&repo("bundles/profiles")]);
    let dirs = fs::read_dir(repo("bundles/profiles"))
        .unwrap()
        .filter(|e| e.as_ref().unwrap().path().join("evaluation.json").is_file())
        .count();
    assert!(page.contains("<h2>Inputs</h2>"));
    assert_eq!(page.matches("Profile checks (").count(), dirs);
}

#[test]
fn several_inputs_get_an_index_and_the_worst_exit_code() {
    let good = repo("bundles/example-genuine-runtime");
    let missing = repo("bundles/no-such-bundle");
    let (code, page) = report(&[&good, &missing]);
    assert_eq!(code, 2);
    assert!(page.contains("<h2>Inputs</h2>"));
    assert!(page.contains("id=\"verdict-0\">VALID<"));
    assert!(page.contains("id=\"verdict-1\">UNREADABLE<"));
}

/// Hostile strings in an input (a subject name, a property under test, the file name itself)
/// appear on the page as text, never as markup.
#[test]
fn hostile_strings_are_escaped() {
    let tmp = tempfile::tempdir().unwrap();
    let packed = tmp.path().join("packed.json");
    let o = mcpres(&[
        "pack".as_ref(),
        repo("bundles/example-genuine-runtime").as_os_str(),
        "-o".as_ref(),
        packed.as_os_str(),
    ]);
    assert!(o.status.success(), "{}", output_text(&o));
    let mut doc: Value = read_json(&packed);
    let hostile = "<script>alert('x')</script>\"><img src=x onerror=alert(1)>";
    doc["statement"]["subjectName"] = Value::from(hostile);
    doc["evidence"]["subject"]["name"] = Value::from(hostile);
    let ops = doc["evidence"]["operations"].as_array_mut().unwrap();
    for op in ops {
        if op["kind"] == "NEGATIVE_CONTROL" {
            op["negativeObservation"]["propertyUnderTest"] = Value::from(hostile);
        }
    }
    let input = tmp.path().join("<b onmouseover=alert(2)>evil.json");
    fs::write(&input, serde_json::to_vec(&doc).unwrap()).unwrap();
    let (code, page) = report(&[&input]);
    // The edit breaks the bundle's digests: the page is written and the verdict is INVALID.
    assert_eq!(code, 1);
    assert!(page.contains("id=\"verdict-0\">INVALID<"));
    assert_self_contained(&page);
    assert!(!page.contains("onerror=alert(1)>"));
    assert!(
        page.contains("&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;&quot;&gt;&lt;img src=x")
    );
    assert!(page.contains("&lt;b onmouseover=alert(2)&gt;evil.json"));
    assert!(!page.contains("<b onmouseover"));
    // Every finding carries its explanation.
    assert!(page.contains("<details><summary>"));
}

#[test]
fn an_existing_output_is_never_overwritten() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("report.html");
    fs::write(&out, "keep").unwrap();
    let o = mcpres(&[
        "report".as_ref(),
        repo("bundles/example-genuine-runtime").as_os_str(),
        "-o".as_ref(),
        out.as_os_str(),
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(output_text(&o).contains("already exists"));
    assert_eq!(fs::read_to_string(&out).unwrap(), "keep");
}

/// The page's only script is allowed by the SHA-256 its CSP names, and by nothing broader.
#[test]
fn the_script_is_allowed_by_its_hash_only() {
    use base64::Engine as _;
    use sha2::{Digest as _, Sha256};
    let (_, page) = report(&[&repo("bundles/example-genuine-runtime")]);
    let start = page.find("<script>").unwrap() + "<script>".len();
    let end = start + page[start..].find("</script>").unwrap();
    let hash = base64::engine::general_purpose::STANDARD
        .encode(Sha256::digest(&page.as_bytes()[start..end]));
    assert!(page.contains(&format!(
        "content=\"default-src 'none'; style-src 'unsafe-inline'; script-src 'sha256-{hash}'\""
    )));
    assert!(!page.contains("unsafe-eval") && !page.contains("script-src 'unsafe-inline'"));
}

#[test]
fn negative_controls_name_their_mutant_and_oracle_artifact() {
    let dir = repo("bundles/example-genuine-runtime");
    let (_, page) = report(&[&dir]);
    let evidence = read_json(&dir.join("evidence-envelope.json"));
    let fault = &evidence["scenario"]["descriptor"]["faults"][0];
    assert!(page.contains(&format!(
        "Mutant (the fault applied): <code>{}</code>",
        fault["method"].as_str().unwrap()
    )));
    assert!(page.contains(fault["reproducibilitySha256"].as_str().unwrap()));
    let manifest = read_json(&dir.join("integrity-manifest.json"));
    let oracle = manifest["artifacts"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["path"] == "observations/obs-frame-oracle.json")
        .unwrap();
    assert!(page.contains(&format!(
        "Oracle artifact: <code>observations/obs-frame-oracle.json</code> ({} bytes",
        oracle["bytes"]
    )));
    assert!(page.contains(oracle["sha256"].as_str().unwrap()));
    // The legend names the fault and the recovery policy.
    assert!(
        page.contains(
            "<tr class=\"fault\"><td>fault</td><td><code>fault/truncated-json-frame</code>"
        )
    );
    assert!(page.contains(
        "<tr class=\"policy\"><td>recovery policy</td><td><code>policy/one-quiet-retry</code>"
    ));
}

#[test]
fn recovery_attempts_sit_in_a_lane_under_their_policy() {
    let dir = repo("bundles/harness/reference-recovery-stdio");
    let (code, page) = report(&[&dir]);
    assert_eq!(code, 0);
    let evidence = read_json(&dir.join("evidence-envelope.json"));
    let attempts: Vec<&Value> = evidence["operations"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|o| o["kind"] == "RECOVERY_ATTEMPT")
        .collect();
    assert!(!attempts.is_empty());
    let policy = attempts[0]["recoveryPolicyId"].as_str().unwrap();
    assert!(page.contains(&format!(">RECOVERY_ATTEMPT · {policy}</text>")));
    assert_eq!(
        page.matches("<rect class=\"op recovery\"").count(),
        attempts.len()
    );
    let parent = attempts[0]["parentOperationId"].as_str().unwrap();
    assert!(page.contains(&format!("after {parent}</title>")));
}

#[test]
fn attested_bundle_page_names_signers_and_the_derived_classification() {
    let input = repo("bundles/example-attested.json");
    let policy = repo("bundles/example-trust-policy.json");
    let (code, page) = report_with(&[&input], &["--trust-policy", policy.to_str().unwrap()]);
    assert_eq!(code, 0);
    assert_self_contained(&page);
    let doc = read_json(&input);
    let signature = &doc["authenticity"]["envelopes"][0]["signatures"][0];
    assert!(page.contains(&format!(
        "<td>{}</td><td class=\"digest\">{}</td>",
        signature["signerIdentity"].as_str().unwrap(),
        signature["keyid"].as_str().unwrap()
    )));
    assert!(page.contains("id=\"authenticity\">SIGNED_WITH_IDENTITY<"));
    // The signing time comes from the signed statement.
    assert!(page.contains("2026-11-30T06:00:00.000Z"));
    // Without the trust policy the classification is not derived, and the page says so.
    let (code, page) = report(&[&input]);
    assert_eq!(code, 1);
    assert!(page.contains("not derived (see the findings)"));
    assert!(page.contains("MCP_RES_ATTESTATION_UNTRUSTED_SIGNER"));
}

#[test]
fn oauth_evaluation_page_has_a_case_grid_with_mutants() {
    let input = repo("testdata/oauth/valid/pass-latest.json");
    let (code, page) = report(&[&input]);
    assert_eq!(code, 0);
    assert_self_contained(&page);
    let doc = read_json(&input);
    let cases = doc["cases"].as_array().unwrap();
    assert!(page.contains(&format!("OAuth boundary checks ({})", cases.len())));
    for case in cases {
        let id = case["id"].as_str().unwrap();
        assert!(
            page.contains(&format!("<tr><td><code>{id}</code></td>")),
            "case {id}"
        );
        if let Some(code) = case["wrongReasonMutant"]["observedReasonCode"].as_str() {
            assert!(page.contains(&format!("observed <code>{code}</code>")));
        }
    }
    assert!(page.contains(doc["evaluationSha256"].as_str().unwrap()));
    assert!(page.contains("loopback fixture with synthetic credentials"));
}

#[test]
fn official_attachment_page_lists_every_inventory() {
    let input = repo("testdata/official/vectors/valid/incomplete-absent-check.json");
    let (code, page) = report(&[&input]);
    assert_eq!(code, 0);
    let doc = read_json(&input);
    let inventories = doc["inventories"].as_object().unwrap();
    assert_eq!(
        page.matches("<tr class=\"inventory\">").count(),
        inventories.len()
    );
    for (name, list) in inventories {
        let list = list.as_array().unwrap();
        assert!(page.contains(&format!(
            "<td><code>{name}</code></td><td>{}</td>",
            list.len()
        )));
        for entry in list {
            assert!(page.contains(&format!("<code>{}</code>", entry.as_str().unwrap())));
        }
    }
    assert!(page.contains("<code>INCOMPLETE</code>"));
    assert!(page.contains("no official certification"));
}

#[test]
fn migration_page_shows_kept_legacy_and_unresolved() {
    let input = repo("testdata/migration/migration/valid.json");
    let (code, page) = report(&[&input]);
    assert_eq!(code, 0);
    let doc = read_json(&input);
    assert!(page.contains("<h4>Kept</h4>"));
    assert!(page.contains(doc["report"]["preservedEvidenceSha256"].as_str().unwrap()));
    let legacy = doc["target"]["legacyAssertions"].as_array().unwrap();
    assert!(page.contains(&format!("Legacy ({} assertions)", legacy.len())));
    assert_eq!(page.matches("<tr class=\"legacy\">").count(), legacy.len());
    let unresolved = doc["report"]["unresolvedRequirements"].as_array().unwrap();
    assert!(page.contains(&format!("Unresolved ({} requirements)", unresolved.len())));
    for u in unresolved {
        assert!(page.contains(&format!("<li><code>{}</code></li>", u.as_str().unwrap())));
    }
    // An edited migration result is INVALID and says why.
    let (code, page) = report(&[&repo("testdata/migration/migration/assertion-flipped.json")]);
    assert_eq!(code, 1);
    assert!(page.contains("MCP_RES_MIGRATION_FABRICATION"));
}

#[test]
fn field_matrix_page_has_one_row_per_leg() {
    let dir = repo("bundles/field/evidence");
    let validated = mcpres(&["validate".as_ref(), "-q".as_ref(), dir.as_os_str()]);
    let (code, page) = report(&[&dir]);
    assert_eq!(Some(code), validated.status.code());
    let matrix = read_json(&dir.join("matrix.json"));
    let legs = matrix["legs"].as_array().unwrap();
    assert!(page.contains(&format!("Field matrix ({} legs)", legs.len())));
    assert_eq!(page.matches("<tr class=\"leg\">").count(), legs.len());
    for leg in legs {
        assert!(page.contains(&format!(
            "<td><code>{}</code></td>",
            leg["id"].as_str().unwrap()
        )));
    }
}

/// Run `mcpres report --check PAGE BUNDLE`.
fn check(page: &Path, bundle: &Path) -> (Option<i32>, String) {
    let o = mcpres(&[
        "report".as_ref(),
        "--check".as_ref(),
        page.as_os_str(),
        bundle.as_os_str(),
    ]);
    (o.status.code(), output_text(&o))
}

#[test]
fn check_tells_whether_a_page_belongs_to_a_bundle() {
    let tmp = tempfile::tempdir().unwrap();
    let page = tmp.path().join("report.html");
    let genuine = repo("bundles/example-genuine-runtime");
    let o = mcpres(&[
        "report".as_ref(),
        genuine.as_os_str(),
        "-o".as_ref(),
        page.as_os_str(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", output_text(&o));
    let (code, text) = check(&page, &genuine);
    assert_eq!(code, Some(0), "{text}");
    assert!(text.contains("belongs to"));
    // Another bundle: not this page's.
    let (code, text) = check(&page, &repo("bundles/example-fixture.json"));
    assert_eq!(code, Some(1), "{text}");
    assert!(text.contains("does NOT belong to"));
    // A bundle edited after the page was made: the manifest still binds the old digests,
    // so the page names its digest, but the bundle is INVALID and the check fails.
    let edited = tmp.path().join("edited");
    copy_dir(&genuine, &edited);
    let statement = edited.join("conformance-statement.json");
    let mut doc = read_json(&statement);
    doc["subjectVersion"] = Value::from("9.9.9");
    fs::write(&statement, serde_json::to_vec_pretty(&doc).unwrap()).unwrap();
    let (code, text) = check(&page, &edited);
    assert_eq!(code, Some(1), "{text}");
    assert!(text.contains("the bundle is INVALID"));
    // Issue 40, item 10: pages are deterministic, so the whole page is
    // checked. A page cut down to its digest line, or with a verdict edited,
    // names the right digest but is not this bundle's page.
    let genuine_page = fs::read_to_string(&page).unwrap();
    let meta = genuine_page
        .lines()
        .find(|l| l.contains("mcpres-bundle-digest"))
        .unwrap()
        .to_string();
    let cut = tmp.path().join("cut.html");
    fs::write(&cut, format!("{meta}\n")).unwrap();
    let edited_page = tmp.path().join("edited.html");
    assert!(genuine_page.contains("PASS"));
    fs::write(&edited_page, genuine_page.replacen("PASS", "FAIL", 1)).unwrap();
    for forged in [&cut, &edited_page] {
        let (code, text) = check(forged, &genuine);
        assert_eq!(code, Some(1), "{text}");
        assert!(
            text.contains("is not the page `mcpres report` makes"),
            "{text}"
        );
        assert!(!text.contains("belongs to"), "{text}");
    }
    // A page that states no bundle digest is unusable for the check.
    let (_, eval_page) = report(&[&repo("testdata/oauth/valid/pass-latest.json")]);
    let other = tmp.path().join("other.html");
    fs::write(&other, eval_page).unwrap();
    let (code, text) = check(&other, &genuine);
    assert_eq!(code, Some(2), "{text}");
    assert!(text.contains("states no bundle digest"));
}

fn copy_dir(from: &Path, to: &Path) {
    fs::create_dir_all(to).unwrap();
    for entry in fs::read_dir(from).unwrap() {
        let path = entry.unwrap().path();
        let target = to.join(path.file_name().unwrap());
        if path.is_dir() {
            copy_dir(&path, &target);
        } else {
            fs::copy(&path, &target).unwrap();
        }
    }
}

/// `mcpres badge BUNDLE -o OUT`: the exit code, the output text and the badge if written.
fn badge(bundle: &Path) -> (Option<i32>, String, Option<String>) {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("badge.svg");
    let o = mcpres(&[
        "badge".as_ref(),
        bundle.as_os_str(),
        "-o".as_ref(),
        out.as_os_str(),
    ]);
    (
        o.status.code(),
        output_text(&o),
        fs::read_to_string(&out).ok(),
    )
}

#[test]
fn badge_states_only_what_validation_derived() {
    let dir = repo("bundles/example-genuine-runtime");
    let (code, text, svg) = badge(&dir);
    assert_eq!(code, Some(0), "{text}");
    let svg = svg.unwrap();
    let manifest = read_json(&dir.join("integrity-manifest.json"));
    let evidence = read_json(&dir.join("evidence-envelope.json"));
    let trials = evidence["trialSummary"]["completedTrials"]
        .as_u64()
        .unwrap();
    let message = format!(
        "GENUINE_RUNTIME · PASS · {trials} trial{}",
        if trials == 1 { "" } else { "s" }
    );
    assert!(svg.contains(&format!(">{message}</text>")), "{svg}");
    assert!(svg.contains(&format!(
        "bundle-digest=\"{}\"",
        manifest["bundleDigest"].as_str().unwrap()
    )));
    // The badge's text is exactly its two parts: nothing more is said.
    let texts: Vec<&str> = svg
        .split("<text ")
        .skip(1)
        .map(|t| &t[t.find('>').unwrap() + 1..t.find("</text>").unwrap()])
        .collect();
    assert_eq!(texts, ["MCP-RES", message.as_str()]);
    assert!(!svg.contains("<script"));
    // The fixture bundle's badge says its derived class, not GENUINE_RUNTIME.
    let (code, _, svg) = badge(&repo("bundles/example-fixture.json"));
    assert_eq!(code, Some(0));
    assert!(svg.unwrap().contains(">FIXTURE_BACKED_PROTOCOL · PASS"));
}

#[test]
fn badge_refuses_an_invalid_bundle_and_a_non_bundle() {
    let (code, text, svg) = badge(&repo("testdata/migration/migration/assertion-flipped.json"));
    assert_eq!(code, Some(2), "{text}");
    assert!(svg.is_none());
    assert!(text.contains("no conformance bundle"));
    // A bundle whose statement was edited breaks its digests: INVALID, no badge.
    let tmp = tempfile::tempdir().unwrap();
    let edited = tmp.path().join("edited");
    copy_dir(&repo("bundles/example-genuine-runtime"), &edited);
    let statement = edited.join("conformance-statement.json");
    let mut doc = read_json(&statement);
    doc["subjectVersion"] = Value::from("9.9.9");
    fs::write(&statement, serde_json::to_vec_pretty(&doc).unwrap()).unwrap();
    let (code, text, svg) = badge(&edited);
    assert_eq!(code, Some(1), "{text}");
    assert!(svg.is_none());
    assert!(text.contains("INVALID"));
}

/// The example pages committed in bundles/reports/ are what `mcpres report` writes today
/// (bundles/reports/generate.sh makes them with these arguments).
#[test]
fn committed_example_reports_are_current() {
    let root = repo("");
    let tmp = tempfile::tempdir().unwrap();
    let pages: [(&str, &[&str]); 7] = [
        (
            "example-genuine-runtime",
            &["bundles/example-genuine-runtime"],
        ),
        ("example-fixture", &["bundles/example-fixture.json"]),
        (
            "example-attested",
            &[
                "--trust-policy",
                "bundles/example-trust-policy.json",
                "--at",
                "2026-12-01T00:00:00Z",
                "bundles/example-attested.json",
            ],
        ),
        ("harness", &["bundles/harness"]),
        ("profiles", &["bundles/profiles"]),
        ("field", &["bundles/field/evidence"]),
        (
            "oauth",
            &["bundles/oauth/reference", "bundles/oauth/python-sdk"],
        ),
    ];
    for (name, inputs) in pages {
        let out = tmp.path().join(format!("{name}.html"));
        let mut args: Vec<&std::ffi::OsStr> = vec!["report".as_ref()];
        args.extend(inputs.iter().map(std::ffi::OsStr::new));
        args.push("-o".as_ref());
        args.push(out.as_os_str());
        let o = support::mcpres_in(&root, &args);
        let fresh = fs::read_to_string(&out)
            .unwrap_or_else(|e| panic!("{name}: no page ({e}): {}", output_text(&o)));
        let committed = fs::read_to_string(repo(&format!("bundles/reports/{name}.html"))).unwrap();
        assert!(
            fresh == committed,
            "bundles/reports/{name}.html is stale: run bundles/reports/generate.sh"
        );
    }
}

/// Markup in the strings of the other families (an OAuth case id, an official inventory
/// entry, a legacy assertion, a signer identity) is shown as text, never as markup.
#[test]
fn hostile_strings_in_other_families_are_escaped() {
    let hostile = "<script>alert(1)</script><img src=x onerror=alert(2)>";
    let tmp = tempfile::tempdir().unwrap();
    let edit = |rel: &str, name: &str, f: &dyn Fn(&mut Value)| {
        let mut doc = read_json(&repo(rel));
        f(&mut doc);
        let path = tmp.path().join(name);
        fs::write(&path, serde_json::to_vec(&doc).unwrap()).unwrap();
        path
    };
    let inputs = [
        edit(
            "testdata/oauth/valid/pass-latest.json",
            "oauth.json",
            &|d| {
                d["cases"][0]["id"] = Value::from(hostile);
            },
        ),
        edit(
            "testdata/official/vectors/valid/incomplete-absent-check.json",
            "official.json",
            &|d| d["inventories"]["declared"][0] = Value::from(hostile),
        ),
        edit(
            "testdata/migration/migration/valid.json",
            "migration.json",
            &|d| {
                d["target"]["legacyAssertions"][0]["name"] = Value::from(hostile);
                d["report"]["unresolvedRequirements"][0] = Value::from(hostile);
            },
        ),
        edit("bundles/example-attested.json", "attested.json", &|d| {
            d["authenticity"]["envelopes"][0]["signatures"][0]["signerIdentity"] =
                Value::from(hostile);
        }),
    ];
    let refs: Vec<&Path> = inputs.iter().map(PathBuf::as_path).collect();
    let (code, page) = report(&refs);
    assert_eq!(code, 1);
    assert_self_contained(&page);
    assert!(!page.contains("<script>alert(1)"));
    assert!(!page.contains("<img src=x"));
    // Each family shows the string, escaped.
    let escaped = "&lt;script&gt;alert(1)&lt;/script&gt;&lt;img src=x onerror=alert(2)&gt;";
    assert!(
        page.matches(escaped).count() >= 4,
        "{}",
        page.matches(escaped).count()
    );
}

/// Issue 40, item 11: a page is written and checked as a stream. A page of
/// many inputs is larger than the largest document `--max-bytes` lets a
/// bundle have, and `report --check` still reads it to its end (it used to
/// refuse a page over the JSON size limit); the same page with one byte
/// more, or one section short, is not theirs.
#[test]
fn a_page_larger_than_any_document_is_still_checked_as_a_stream() {
    let tmp = tempfile::tempdir().unwrap();
    let genuine = repo("bundles/example-genuine-runtime");
    let copies: Vec<std::path::PathBuf> = (0..40)
        .map(|i| {
            let to = tmp.path().join(format!("copy-{i:02}"));
            copy_dir(&genuine, &to);
            to
        })
        .collect();
    let page = tmp.path().join("many.html");
    let mut args: Vec<&std::ffi::OsStr> = vec!["report".as_ref()];
    args.extend(copies.iter().map(|c| c.as_os_str()));
    args.extend(["-o".as_ref(), page.as_os_str()]);
    let o = mcpres(&args);
    assert_eq!(o.status.code(), Some(0), "{}", output_text(&o));
    let size = fs::metadata(&page).unwrap().len();
    let limit = 65_536u64;
    assert!(size > 4 * limit, "the page is {size} bytes");
    // No spooled section is left beside the page.
    let left: Vec<_> = fs::read_dir(tmp.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with('.'))
        .collect();
    assert!(left.is_empty(), "{left:?}");
    let check_with = |page: &Path, inputs: &[std::path::PathBuf]| {
        let limit = limit.to_string();
        let mut args: Vec<&std::ffi::OsStr> = vec![
            "report".as_ref(),
            "--max-bytes".as_ref(),
            limit.as_ref(),
            "--check".as_ref(),
            page.as_os_str(),
        ];
        args.extend(inputs.iter().map(|c| c.as_os_str()));
        let o = mcpres(&args);
        (o.status.code(), output_text(&o))
    };
    let (code, text) = check_with(&page, &copies);
    assert_eq!(code, Some(0), "{text}");
    assert_eq!(text.matches("belongs to").count(), copies.len(), "{text}");
    // One byte more at the end: not this page.
    let longer = tmp.path().join("longer.html");
    let mut bytes = fs::read(&page).unwrap();
    bytes.push(b'\n');
    fs::write(&longer, &bytes).unwrap();
    let (code, text) = check_with(&longer, &copies);
    assert_eq!(code, Some(1), "{text}");
    assert!(
        text.contains("is not the page `mcpres report` makes"),
        "{text}"
    );
    // The inputs but the last: the page states a digest none of them lacks,
    // but it is not their page (their page lists one input less).
    let (code, text) = check_with(&page, &copies[..copies.len() - 1]);
    assert_eq!(code, Some(1), "{text}");
    assert!(
        text.contains("is not the page `mcpres report` makes"),
        "{text}"
    );
}
