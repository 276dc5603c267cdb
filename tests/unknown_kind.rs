//! A document of no known kind is validated as a v0.2 conformance bundle, as
//! both reference validators do: the core verdict and exit 1, not exit 2
//! (spec/diagnostics.md, "Exit codes"; issue 15, item 4).

mod support;

use serde_json::Value;

#[test]
fn a_document_of_no_known_kind_gets_the_core_verdict_and_exit_1() {
    let tmp = tempfile::tempdir().unwrap();
    for (name, text) in [
        ("plain.json", r#"{"hello": 1}"#),
        (
            "unknown-version.json",
            r#"{"schemaVersion": "mcp-res.something-else/9.0.0"}"#,
        ),
    ] {
        let path = tmp.path().join(name);
        std::fs::write(&path, text).unwrap();
        let o = support::mcpres(&["validate", "--format", "json", path.to_str().unwrap()]);
        assert_eq!(
            o.status.code(),
            Some(1),
            "{name}: {}",
            support::output_text(&o)
        );
        let report: Value = serde_json::from_slice(&o.stdout).unwrap();
        assert_eq!(report["valid"], false, "{name}: {report}");
        assert_eq!(
            report["diagnostics"][0], "MCP_RES_VACUOUS_NEGATIVE_CONTROL",
            "{name}: {report}"
        );
    }
}
