//! `mcpres report` pages in a real browser (issue 20, item 4): headless Chromium (Debian's
//! `chromium` package; `.ci/run` installs it) opens a page of each document family from a
//! file:// URL and the test reads what it rendered (`--dump-dom`, after the page's script
//! ran), what it logged to the console (a CSP violation is logged there) and what it asked
//! of the network (Chromium's own net log). Chromium's name resolution maps every host to
//! nothing, so no test run can reach beyond the machine, whatever the browser tries on its
//! own. Without Chromium the tests print why they skip, unless `MCPRES_REQUIRE_CHROMIUM` is
//! set (CI), where its absence fails them.

mod support;

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use serde_json::Value;
use support::{mcpres, output_text, output_within, read_json};

fn repo(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(rel)
}

/// The Chromium binary (`MCPRES_CHROMIUM`, else `chromium` or `chromium-browser` on PATH).
fn chromium() -> Option<PathBuf> {
    if let Some(path) = std::env::var_os("MCPRES_CHROMIUM") {
        return Some(PathBuf::from(path));
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .flat_map(|dir| ["chromium", "chromium-browser"].map(|name| dir.join(name)))
        .find(|candidate| candidate.is_file())
}

/// Chromium, or `None` after printing why the test skips (a failure when CI requires it).
fn chromium_or_skip(test: &str) -> Option<PathBuf> {
    let found = chromium();
    if found.is_none() {
        assert!(
            std::env::var_os("MCPRES_REQUIRE_CHROMIUM").is_none(),
            "{test}: MCPRES_REQUIRE_CHROMIUM is set but no chromium was found (set MCPRES_CHROMIUM or install Debian's chromium package)"
        );
        eprintln!(
            "{test}: skipped: no chromium on PATH (install Debian's chromium package or set MCPRES_CHROMIUM)"
        );
    }
    found
}

/// Run headless Chromium on `page` with `args`; its stdout and stderr.
fn run_chromium(browser: &Path, work: &Path, page: &Path, args: &[String]) -> (String, String) {
    let url = format!("file://{}", page.display());
    let child = Command::new(browser)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            "--no-default-browser-check",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--disable-default-apps",
            "--no-proxy-server",
            // Every host name resolves to nothing: nothing leaves the machine.
            "--host-resolver-rules=MAP * ~NOTFOUND",
            "--enable-logging=stderr",
            "--v=0",
        ])
        .arg(format!(
            "--user-data-dir={}",
            work.join("profile").display()
        ))
        .args(args)
        .arg(&url)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start chromium");
    let o = output_within(child, Duration::from_secs(120), "headless chromium");
    let (out, err) = (
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    );
    assert!(o.status.success(), "chromium failed on {url}: {err}");
    (out, err)
}

/// What the browser made of a page.
struct Opened {
    /// The DOM after the page's script ran.
    dom: String,
    /// Console messages (script errors, CSP violations).
    console: Vec<String>,
    /// Requests the page itself started (its initiator is the page's file:// origin).
    page_requests: Vec<String>,
}

fn open(browser: &Path, page: &Path) -> Opened {
    let work = tempfile::tempdir().unwrap();
    let net_log = work.path().join("net.json");
    let (dom, err) = run_chromium(
        browser,
        work.path(),
        page,
        &[
            format!("--log-net-log={}", net_log.display()),
            "--dump-dom".to_owned(),
        ],
    );
    let console = err
        .lines()
        .filter(|l| l.contains(":CONSOLE"))
        .map(str::to_owned)
        .collect();
    let log: Value = serde_json::from_slice(&fs::read(&net_log).expect("net log")).unwrap();
    let start_job = log["constants"]["logEventTypes"]["URL_REQUEST_START_JOB"].clone();
    let page_requests = log["events"]
        .as_array()
        .unwrap()
        .iter()
        // A job's begin event names the URL; its end event carries only the result.
        .filter(|e| e["type"] == start_job && e["params"]["url"].is_string())
        .filter(|e| {
            let p = &e["params"];
            p["initiator"] != "not an origin"
                || p["network_isolation_key"]
                    .as_str()
                    .is_some_and(|k| k.contains("file://"))
        })
        .map(|e| e["params"]["url"].as_str().unwrap().to_owned())
        .collect();
    Opened {
        dom,
        console,
        page_requests,
    }
}

/// `mcpres report INPUTS -o DIR/NAME.html` (extra arguments first); the page's path.
fn make_page(dir: &Path, name: &str, inputs: &[PathBuf], extra: &[&str]) -> PathBuf {
    let out = dir.join(format!("{name}.html"));
    let mut args: Vec<std::ffi::OsString> = vec!["report".into()];
    args.extend(extra.iter().map(Into::into));
    args.extend(inputs.iter().map(|p| p.as_os_str().to_owned()));
    args.push("-o".into());
    args.push(out.as_os_str().to_owned());
    let o = mcpres(&args);
    assert!(out.is_file(), "no page for {name}: {}", output_text(&o));
    out
}

/// Every page renders with its script run and nothing blocked, logged or requested.
fn assert_clean(name: &str, opened: &Opened) {
    assert!(
        opened.console.is_empty(),
        "{name}: console messages (a CSP violation or a script error): {:?}",
        opened.console
    );
    assert!(
        opened.page_requests.is_empty(),
        "{name}: the page requested {:?}",
        opened.page_requests
    );
    assert!(
        opened.dom.contains("data-script=\"ran\""),
        "{name}: the page's script did not run (blocked by its CSP?)"
    );
    assert!(opened.dom.contains("Limits of this result"), "{name}");
}

#[test]
fn a_page_of_each_family_renders_fully_with_nothing_blocked_or_requested() {
    let Some(browser) = chromium_or_skip("browser") else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();

    // A conformance bundle: verdict, timeline, surfaces, trials, copy buttons.
    let genuine = repo("bundles/example-genuine-runtime");
    let opened = open(
        &browser,
        &make_page(t, "genuine", std::slice::from_ref(&genuine), &[]),
    );
    assert_clean("genuine", &opened);
    let evidence = read_json(&genuine.join("evidence-envelope.json"));
    let dom = &opened.dom;
    assert!(dom.contains("id=\"verdict-0\">VALID<"));
    assert_eq!(
        dom.matches("<rect class=\"op").count(),
        evidence["operations"].as_array().unwrap().len()
    );
    assert_eq!(
        dom.matches("<rect class=\"obs\"").count(),
        evidence["observations"].as_array().unwrap().len()
    );
    assert_eq!(dom.matches("data-surface=").count(), 14);
    // One copy button per digest the page shows (the script adds them).
    let digests = dom.matches("class=\"digest").count();
    assert!(digests >= 4);
    assert_eq!(
        dom.matches("<button type=\"button\" class=\"copy\"")
            .count(),
        digests
    );
    assert!(dom.contains("Negative controls (1)"));

    // An attested bundle with its trust policy: signers and the derived classification.
    let policy = repo("bundles/example-trust-policy.json");
    let opened = open(
        &browser,
        &make_page(
            t,
            "attested",
            &[repo("bundles/example-attested.json")],
            &["--trust-policy", policy.to_str().unwrap()],
        ),
    );
    assert_clean("attested", &opened);
    assert!(
        opened
            .dom
            .contains("id=\"authenticity\">SIGNED_WITH_IDENTITY<")
    );
    assert_eq!(opened.dom.matches("<tr class=\"signer\">").count(), 1);

    // A profile evaluation directory: the check grid.
    let profile = repo("bundles/profiles/reference-stdio-transport-2025-11-25");
    let opened = open(
        &browser,
        &make_page(t, "profile", std::slice::from_ref(&profile), &[]),
    );
    assert_clean("profile", &opened);
    let checks = read_json(&profile.join("evaluation.json"))["checks"]
        .as_array()
        .unwrap()
        .len();
    assert!(opened.dom.contains(&format!("Profile checks ({checks})")));
    assert!(opened.dom.contains("class=\"sortable check-grid\""));

    // An OAuth-boundary evaluation: its case grid.
    let oauth = repo("testdata/oauth/valid/pass-latest.json");
    let opened = open(
        &browser,
        &make_page(t, "oauth", std::slice::from_ref(&oauth), &[]),
    );
    assert_clean("oauth", &opened);
    let cases = read_json(&oauth)["cases"].as_array().unwrap().len();
    assert!(
        opened
            .dom
            .contains(&format!("OAuth boundary checks ({cases})"))
    );

    // An official attachment: its inventories.
    let official = repo("testdata/official/vectors/valid/incomplete-absent-check.json");
    let opened = open(
        &browser,
        &make_page(t, "official", std::slice::from_ref(&official), &[]),
    );
    assert_clean("official", &opened);
    let inventories = read_json(&official)["inventories"]
        .as_object()
        .unwrap()
        .len();
    assert_eq!(
        opened.dom.matches("<tr class=\"inventory\">").count(),
        inventories
    );

    // A migration result: kept, legacy, unresolved.
    let migration = repo("testdata/migration/migration/valid.json");
    let opened = open(
        &browser,
        &make_page(t, "migration", std::slice::from_ref(&migration), &[]),
    );
    assert_clean("migration", &opened);
    let doc = read_json(&migration);
    assert_eq!(
        opened.dom.matches("<tr class=\"legacy\">").count(),
        doc["target"]["legacyAssertions"].as_array().unwrap().len()
    );
    assert!(opened.dom.contains("<ul id=\"unresolved\">"));

    // A field matrix: its legs.
    let field = repo("bundles/field/evidence");
    let opened = open(
        &browser,
        &make_page(t, "field", std::slice::from_ref(&field), &[]),
    );
    assert_clean("field", &opened);
    let legs = read_json(&field.join("matrix.json"))["legs"]
        .as_array()
        .unwrap()
        .len();
    assert_eq!(opened.dom.matches("<tr class=\"leg\">").count(), legs);

    // Several inputs, one invalid and one unreadable: the index and every verdict.
    let opened = open(
        &browser,
        &make_page(
            t,
            "several",
            &[
                genuine,
                repo("cli-tests/inputs/invalid-bundle.json"),
                repo("bundles/no-such-bundle"),
            ],
            &[],
        ),
    );
    assert_clean("several", &opened);
    assert!(opened.dom.contains("<h2>Inputs</h2>"));
    assert!(opened.dom.contains("id=\"verdict-1\">INVALID<"));
    assert!(opened.dom.contains("id=\"verdict-2\">UNREADABLE<"));
}

/// The checks above would see a page that reaches out: a page with an image and a fetch
/// elsewhere (and no CSP) is caught by the net log; a page whose script its CSP blocks is
/// caught by the console and the missing mark.
#[test]
fn a_page_that_reaches_out_is_caught() {
    let Some(browser) = chromium_or_skip("browser") else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let page = tmp.path().join("leak.html");
    fs::write(
        &page,
        "<!DOCTYPE html><html><body><img src=\"http://report-test.invalid/x.png\"><script>fetch('http://report-test.invalid/y')</script></body></html>",
    )
    .unwrap();
    let opened = open(&browser, &page);
    assert!(
        opened
            .page_requests
            .iter()
            .any(|u| u.contains("report-test.invalid")),
        "{:?}",
        opened.page_requests
    );
    // (The failed fetch is logged to the console only when its promise settles, which may be
    // after the DOM is dumped: the console check's own control is the page below.)
    // And a page whose script the CSP blocks is caught by the console and the missing mark.
    let good = fs::read_to_string(make_page(
        tmp.path(),
        "genuine",
        &[repo("bundles/example-genuine-runtime")],
        &[],
    ))
    .unwrap();
    let tampered = tmp.path().join("tampered.html");
    fs::write(&tampered, good.replace("data-script", "data-scripX")).unwrap();
    let opened = open(&browser, &tampered);
    assert!(
        opened
            .console
            .iter()
            .any(|l| l.contains("Content Security Policy")),
        "{:?}",
        opened.console
    );
    assert!(!opened.dom.contains("data-script"));
}

/// Width and height from a PNG's IHDR chunk (bytes 16..24, after the signature).
fn png_size(png: &[u8]) -> (u32, u32) {
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n", "not a PNG");
    assert_eq!(&png[12..16], b"IHDR");
    let be = |b: &[u8]| u32::from_be_bytes([b[0], b[1], b[2], b[3]]);
    (be(&png[16..20]), be(&png[20..24]))
}

/// A screenshot of a report is not blank: compressed, it is many times the size of a
/// screenshot of an empty page of the same size (a blank image compresses to almost nothing).
#[test]
fn a_screenshot_of_a_report_is_not_blank() {
    let Some(browser) = chromium_or_skip("browser") else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    let page = make_page(
        t,
        "genuine",
        &[repo("bundles/example-genuine-runtime")],
        &[],
    );
    let empty = t.join("empty.html");
    fs::write(&empty, "<!DOCTYPE html><html><body></body></html>").unwrap();
    let shoot = |page: &Path, name: &str| {
        let png = t.join(format!("{name}.png"));
        run_chromium(
            &browser,
            t,
            page,
            &[
                "--hide-scrollbars".to_owned(),
                "--window-size=1280,1600".to_owned(),
                format!("--screenshot={}", png.display()),
            ],
        );
        fs::read(&png).unwrap()
    };
    let report = shoot(&page, "report");
    let blank = shoot(&empty, "blank");
    assert_eq!(png_size(&report), (1280, 1600));
    assert_eq!(png_size(&blank), (1280, 1600));
    assert!(
        report.len() > 10 * blank.len(),
        "the report's screenshot ({} bytes) is hardly bigger than a blank one ({} bytes)",
        report.len(),
        blank.len()
    );
}
