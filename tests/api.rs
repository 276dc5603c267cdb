//! The library API (issue 21, item 2): `mcpres::validate`, `verify`,
//! `canonicalize` and `digest` give what the command prints, on every
//! committed vector and example.

mod support;

use std::path::{Path, PathBuf};

use mcpres::api::{DigestKind, Input, Status, ValidateOptions};
use serde_json::Value;
use support::*;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// Every committed single-file vector and example bundle directory the
/// command is run on in these tests.
fn inputs() -> Vec<PathBuf> {
    let mut out = Vec::new();
    for dir in [
        "testdata/vectors/valid",
        "testdata/vectors/invalid",
        "cli-tests/inputs",
    ] {
        for entry in std::fs::read_dir(root().join(dir)).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_some_and(|e| e == "json") {
                out.push(path);
            }
        }
    }
    out.push(root().join("bundles/example-genuine-runtime"));
    out.push(root().join("bundles/example-attested.json"));
    out.push(root().join("bundles/example-trust-policy.json"));
    out.sort();
    out
}

fn cli_json(command: &str, path: &Path) -> (Value, Option<i32>) {
    let o = mcpres(&[command, "--format", "json", path.to_str().unwrap()]);
    let line = text(&o.stdout);
    (
        serde_json::from_str(line.trim_end()).expect("one JSON object"),
        o.status.code(),
    )
}

#[test]
fn validate_and_verify_return_the_report_the_command_prints() {
    let options = ValidateOptions::default();
    let inputs = inputs();
    assert!(inputs.len() > 30, "{}", inputs.len());
    for path in &inputs {
        for command in ["validate", "verify"] {
            let outcome = if command == "validate" {
                mcpres::validate(path, &options)
            } else {
                mcpres::verify(path, &options)
            };
            let (printed, code) = cli_json(command, path);
            assert_eq!(outcome.to_json(), printed, "{command} {}", path.display());
            assert_eq!(
                Some(i32::from(outcome.status().exit_code())),
                code,
                "{command} {}",
                path.display()
            );
        }
    }
}

#[test]
fn bytes_are_judged_as_the_file_holding_them() {
    let options = ValidateOptions::default();
    for path in inputs().iter().filter(|p| p.is_file()) {
        let bytes = std::fs::read(path).unwrap();
        let name = path.display().to_string();
        let from_bytes = mcpres::validate(Input::bytes(&name, &bytes), &options);
        let from_path = mcpres::validate(path, &options);
        assert_eq!(from_bytes.to_json(), from_path.to_json(), "{name}");
    }
    // The size limit applies to bytes as to a file.
    let small = ValidateOptions::default().with_limits(mcpres::json::Limits {
        max_bytes: 10,
        ..Default::default()
    });
    let outcome = mcpres::validate(Input::bytes("big.json", b"{\"a\": \"0123456789\"}"), &small);
    assert_eq!(outcome.status(), Status::Unusable);
    assert!(
        outcome.to_json()["message"]
            .as_str()
            .unwrap()
            .contains("10-byte document limit")
    );
}

#[test]
fn canonicalize_and_digest_match_the_command() {
    let not_canonical = root().join("cli-tests/inputs/not-canonical.json");
    let o = mcpres(&["canonicalize", not_canonical.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0));
    let bytes = std::fs::read(&not_canonical).unwrap();
    assert_eq!(mcpres::canonicalize(&bytes).unwrap(), o.stdout);
    assert!(mcpres::canonicalize(b"{\"a\": 1, \"a\": 2}").is_err());

    let bundle = root().join("cli-tests/inputs/valid-bundle.json");
    let bytes = std::fs::read(&bundle).unwrap();
    for (kind, name) in [
        (DigestKind::Scenario, "scenario"),
        (DigestKind::Evidence, "evidence"),
        (DigestKind::Statement, "statement"),
        (DigestKind::Execution, "execution"),
        (DigestKind::Bundle, "bundle"),
    ] {
        let o = mcpres(&["digest", "--kind", name, bundle.to_str().unwrap()]);
        assert_eq!(o.status.code(), Some(0), "{}", output_text(&o));
        assert_eq!(
            format!("{}\n", mcpres::digest(&bytes, kind).unwrap()),
            text(&o.stdout),
            "{name}"
        );
    }
    let err = mcpres::digest(&bytes, DigestKind::Observation).unwrap_err();
    assert!(err.to_string().contains("observation"), "{err}");
}
