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
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("report.html");
    let mut args: Vec<&std::ffi::OsStr> = vec!["report".as_ref()];
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
    for needle in [
        "<script", "<link", "<img", "<iframe", "src=", "@import", "url(",
    ] {
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
        page.matches("<rect class=\"op\"").count(),
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
