//! Interoperability with a DSSE implementation mcpres did not write:
//! securesystemslib (PyPI). `.ci/run` installs it in a virtual environment and
//! sets `MCPRES_INTEROP_PYTHON` (the test fails if that interpreter cannot
//! import it); without the variable it looks for a `python3` that can, and
//! skips with a message if there is none (it fails instead when `CI` is set).
//!
//! 1. An envelope written by `mcpres sign` verifies with
//!    `securesystemslib.dsse.Envelope.verify`, using a key whose keyid is our
//!    fingerprint; a tampered copy does not.
//! 2. An envelope that securesystemslib signs over a statement mcpres produced
//!    is accepted by `mcpres verify` once placed in an attested wrapper.

mod support;

use support::mcpres_in;

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{Value, json};

fn can_import(python: &Path) -> bool {
    Command::new(python)
        .args(["-c", "import securesystemslib.dsse, cryptography"])
        .status()
        .is_ok_and(|s| s.success())
}

fn python() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("MCPRES_INTEROP_PYTHON") {
        let p = PathBuf::from(p);
        assert!(
            can_import(&p),
            "MCPRES_INTEROP_PYTHON={} cannot import securesystemslib",
            p.display()
        );
        return Some(p);
    }
    let p = PathBuf::from("python3");
    can_import(&p).then_some(p)
}

fn script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/interop/sslib_dsse.py")
}

fn ok(out: &std::process::Output) -> String {
    assert!(
        out.status.success(),
        "{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn envelopes_interoperate_with_securesystemslib() {
    let Some(py) = python() else {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI must provide securesystemslib (MCPRES_INTEROP_PYTHON); see .ci/run"
        );
        eprintln!("skipped: no python with securesystemslib; set MCPRES_INTEROP_PYTHON");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let example = Path::new(env!("CARGO_MANIFEST_DIR")).join("bundles/example-genuine-runtime");
    let fingerprint = ok(&mcpres_in(d, &["keygen", "--out", "signer"]))
        .trim()
        .to_owned();
    ok(&mcpres_in(
        d,
        &[
            "sign",
            "--key",
            "signer.key",
            "--identity",
            "interop@example.org",
            "--trust-policy-id",
            "interop/policy",
            example.to_str().unwrap(),
            "-o",
            "signed.json",
        ],
    ));
    let wrapper: Value =
        serde_json::from_slice(&std::fs::read(d.join("signed.json")).unwrap()).unwrap();
    let envelope = wrapper["authenticity"]["envelopes"][0].clone();
    std::fs::write(
        d.join("envelope.json"),
        serde_json::to_vec(&envelope).unwrap(),
    )
    .unwrap();

    // 1. securesystemslib verifies our envelope (extra MCP-RES fields and all).
    let run_py = |args: &[&str]| {
        Command::new(&py)
            .arg(script())
            .args(args)
            .current_dir(d)
            .output()
            .unwrap()
    };
    let out = run_py(&["verify", "envelope.json", "signer.pub", &fingerprint]);
    let verified: Value = serde_json::from_str(ok(&out).trim()).unwrap();
    assert_eq!(verified["verified"], json!([fingerprint]));
    assert_eq!(verified["payloadType"], "application/vnd.in-toto+json");
    // ... and rejects a tampered payload.
    let mut tampered = envelope.clone();
    let mut payload =
        mcpres::attest::dsse::decode_base64(envelope["payload"].as_str().unwrap()).unwrap();
    payload[10] ^= 0x20;
    tampered["payload"] = json!(mcpres::attest::dsse::encode_base64(&payload));
    std::fs::write(
        d.join("tampered.json"),
        serde_json::to_vec(&tampered).unwrap(),
    )
    .unwrap();
    let out = run_py(&["verify", "tampered.json", "signer.pub", &fingerprint]);
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );

    // 2. securesystemslib signs the statement mcpres produced; mcpres verifies it.
    let statement =
        mcpres::attest::dsse::decode_base64(envelope["payload"].as_str().unwrap()).unwrap();
    std::fs::write(d.join("statement.json"), &statement).unwrap();
    ok(&run_py(&[
        "sign",
        "statement.json",
        "signer.key",
        "signer.pub",
        &fingerprint,
        "theirs.json",
    ]));
    let theirs: Value =
        serde_json::from_slice(&std::fs::read(d.join("theirs.json")).unwrap()).unwrap();
    assert_eq!(theirs["payload"], envelope["payload"]);
    assert_eq!(theirs["signatures"][0]["keyid"], json!(fingerprint));
    // Ed25519 is deterministic: their signature is byte-identical to ours.
    assert_eq!(
        theirs["signatures"][0]["sig"],
        envelope["signatures"][0]["sig"]
    );
    // Their plain DSSE envelope plus the MCP-RES envelope fields.
    let mcp_res_envelope = json!({
        "schemaVersion": "mcp-res.dsse-envelope/0.2.0",
        "payloadType": theirs["payloadType"],
        "payload": theirs["payload"],
        "signatures": [{
            "keyid": theirs["signatures"][0]["keyid"],
            "sig": theirs["signatures"][0]["sig"],
            "algorithm": "Ed25519",
            "publicKeySpkiBase64": envelope["signatures"][0]["publicKeySpkiBase64"],
            "signerIdentity": "interop@example.org",
        }],
    });
    let mut from_them = wrapper.clone();
    from_them["authenticity"]["envelopes"] = json!([mcp_res_envelope]);
    std::fs::write(
        d.join("from-them.json"),
        serde_json::to_vec(&from_them).unwrap(),
    )
    .unwrap();
    let report: Value = serde_json::from_str(
        ok(&mcpres_in(
            d,
            &["verify", "from-them.json", "--format", "json"],
        ))
        .trim(),
    )
    .unwrap();
    assert_eq!(report["authenticityClassification"], "SIGNED", "{report}");
}
