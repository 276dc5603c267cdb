//! Authenticity end to end through the real binary: keygen, sign, verify,
//! trust policies, and one tampered document per attestation diagnostic.

mod support;

use support::{Run, mcpres_in};

use std::path::{Path, PathBuf};

use mcpres::attest::dsse::{decode_base64, encode_base64};
use mcpres::attest::keys::KeyPair;
use mcpres::produce::builder::{synthetic_bundle, to_file_bytes};
use mcpres::produce::sign::{self, SignOptions, Transparency};
use serde_json::{Value, json};

const POLICY_ID: &str = "org/release-policy";
const SIGNED_AT: &str = "2026-06-01T00:00:00.000Z";
const VERIFY_AT: &str = "2026-07-01T00:00:00Z";

fn mcpres(dir: &Path, args: &[&str]) -> Run {
    Run::from(mcpres_in(dir, args))
}

fn alice() -> KeyPair {
    KeyPair::from_seed(&[0xa1; 32])
}
fn bob() -> KeyPair {
    KeyPair::from_seed(&[0xb0; 32])
}

fn options(identity: &str) -> SignOptions {
    SignOptions {
        signer_identity: identity.to_owned(),
        trust_policy_id: POLICY_ID.to_owned(),
        signing_time: SIGNED_AT.to_owned(),
        transparency: None,
        claim: None,
    }
}

fn bundle() -> Value {
    synthetic_bundle(6).unwrap()
}

fn policy(trusted: &[(&KeyPair, &str)], revoked: &[&KeyPair]) -> Value {
    json!({
        "schemaVersion": "mcp-res.trust-policy/0.2.0",
        "id": POLICY_ID,
        "version": "1.0.0",
        "validFrom": "2026-01-01T00:00:00Z",
        "validUntil": "2027-01-01T00:00:00Z",
        "requiredAlgorithm": "Ed25519",
        "trustedSigners": trusted.iter().map(|(k, id)| json!({
            "keyFingerprint": k.public().fingerprint(), "signerIdentity": id
        })).collect::<Vec<_>>(),
        "revokedKeyFingerprints": revoked.iter().map(|k| k.public().fingerprint()).collect::<Vec<_>>(),
    })
}

fn trusting_both() -> Value {
    policy(
        &[(&alice(), "alice@example.org"), (&bob(), "bob@example.org")],
        &[],
    )
}

fn signed_by_alice() -> Value {
    sign::attest(&bundle(), &alice(), &options("alice@example.org")).unwrap()
}

fn witnessed() -> Value {
    let first = signed_by_alice();
    let mut o = options("bob@example.org");
    o.claim = Some("WITNESSED".into());
    sign::attest(&first, &bob(), &o).unwrap()
}

/// Replace envelope 0 with one signed over `statement` by `key`.
fn resign(wrapper: &mut Value, statement: &Value, key: &KeyPair, identity: &str) {
    wrapper["authenticity"]["envelopes"][0] =
        sign::sign_statement(statement, key, identity).unwrap();
}

fn statement_of(wrapper: &Value, i: usize) -> Value {
    let payload = wrapper["authenticity"]["envelopes"][i]["payload"]
        .as_str()
        .unwrap();
    serde_json::from_slice(&decode_base64(payload).unwrap()).unwrap()
}

fn write(dir: &Path, name: &str, value: &Value) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, to_file_bytes(value).unwrap()).unwrap();
    path
}

/// Verify through the binary; returns (exit code, JSON report).
fn verify(wrapper: &Value, policy: Option<&Value>, at: Option<&str>) -> (i32, Value) {
    let dir = tempfile::tempdir().unwrap();
    let file = write(dir.path(), "attested.json", wrapper);
    let mut args: Vec<String> = vec!["verify".into(), "--format".into(), "json".into()];
    if let Some(p) = policy {
        let pf = write(dir.path(), "policy.json", p);
        args.extend(["--trust-policy".into(), pf.display().to_string()]);
    }
    if let Some(at) = at {
        args.extend(["--at".into(), at.into()]);
    }
    args.push(file.display().to_string());
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
    let run = mcpres(dir.path(), &refs);
    let report: Value = serde_json::from_str(run.stdout.trim())
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}\n{}", run.stdout, run.stderr));
    (run.code, report)
}

fn expect_valid(wrapper: &Value, policy: Option<&Value>, at: Option<&str>, class: &str) {
    let (code, report) = verify(wrapper, policy, at);
    assert_eq!(report["diagnostics"], json!([]), "{report}");
    assert_eq!(code, 0, "{report}");
    assert_eq!(report["authenticityClassification"], class, "{report}");
    assert!(report["evidenceClass"].is_string(), "{report}");
}

fn expect_invalid(wrapper: &Value, policy: Option<&Value>, at: Option<&str>, codes: &[&str]) {
    let (code, report) = verify(wrapper, policy, at);
    assert_eq!(report["diagnostics"], json!(codes), "{report}");
    assert_eq!(code, 1, "{report}");
    assert_eq!(report["valid"], false);
    assert!(
        report.get("authenticityClassification").is_none(),
        "{report}"
    );
}

// ---- classifications ----

#[test]
fn signed_without_policy_is_signed() {
    expect_valid(&signed_by_alice(), None, None, "SIGNED");
}

#[test]
fn trusted_signer_derives_signed_with_identity() {
    let p = trusting_both();
    expect_valid(
        &signed_by_alice(),
        Some(&p),
        Some(VERIFY_AT),
        "SIGNED_WITH_IDENTITY",
    );
    let mut claimed = signed_by_alice();
    claimed["authenticity"]["claimedClassification"] = json!("SIGNED_WITH_IDENTITY");
    expect_valid(&claimed, Some(&p), Some(VERIFY_AT), "SIGNED_WITH_IDENTITY");
}

#[test]
fn two_trusted_keys_give_witnessed() {
    expect_valid(
        &witnessed(),
        Some(&trusting_both()),
        Some(VERIFY_AT),
        "WITNESSED",
    );
    // Without a policy the same document's WITNESSED claim is untrusted.
    expect_invalid(
        &witnessed(),
        None,
        None,
        &["MCP_RES_ATTESTATION_UNTRUSTED_SIGNER"],
    );
}

#[test]
fn transparency_reference_gives_transparency_recorded() {
    let mut o = options("alice@example.org");
    o.transparency = Some(Transparency {
        log_id: "log.example.org/2026".into(),
        entry_uuid: "entry-0001".into(),
        inclusion_proof: b"inclusion proof bytes".to_vec(),
    });
    o.claim = Some("TRANSPARENCY_RECORDED".into());
    let w = sign::attest(&bundle(), &alice(), &o).unwrap();
    expect_valid(
        &w,
        Some(&trusting_both()),
        Some(VERIFY_AT),
        "TRANSPARENCY_RECORDED",
    );
}

#[test]
fn unsigned_wrapper_is_integrity_only() {
    let mut w = signed_by_alice();
    w["authenticity"]["envelopes"] = json!([]);
    w["authenticity"]["claimedClassification"] = json!("UNSIGNED_INTEGRITY_ONLY");
    expect_valid(&w, None, None, "UNSIGNED_INTEGRITY_ONLY");
}

// ---- one negative per diagnostic ----

#[test]
fn altered_payload_byte_fails_the_signature() {
    let mut w = signed_by_alice();
    let mut payload = decode_base64(
        w["authenticity"]["envelopes"][0]["payload"]
            .as_str()
            .unwrap(),
    )
    .unwrap();
    let i = payload.len() / 2;
    payload[i] ^= 0x01;
    w["authenticity"]["envelopes"][0]["payload"] = json!(encode_base64(&payload));
    expect_invalid(&w, None, None, &["MCP_RES_ATTESTATION_SIGNATURE_INVALID"]);
}

#[test]
fn altered_subject_is_a_binding_mismatch() {
    let mut w = signed_by_alice();
    let mut st = statement_of(&w, 0);
    st["subject"][0]["name"] = json!("another-server");
    resign(&mut w, &st, &alice(), "alice@example.org");
    expect_invalid(&w, None, None, &["MCP_RES_ATTESTATION_BINDING_MISMATCH"]);
    // Every other binding too.
    for (field, value) in [
        ("evidenceBundleDigest", json!("0".repeat(64))),
        ("scenarioFingerprint", json!("1".repeat(64))),
        ("executionInstanceDigest", json!("2".repeat(64))),
        (
            "profile",
            json!({"id": "mcp-res/other/v1", "version": "1.0.0"}),
        ),
    ] {
        let mut w = signed_by_alice();
        let mut st = statement_of(&w, 0);
        st["predicate"][field] = value;
        resign(&mut w, &st, &alice(), "alice@example.org");
        expect_invalid(&w, None, None, &["MCP_RES_ATTESTATION_BINDING_MISMATCH"]);
    }
}

#[test]
fn signature_by_another_key_fails() {
    let mut w = signed_by_alice();
    let by_bob = sign::sign_statement(&statement_of(&w, 0), &bob(), "alice@example.org").unwrap();
    // Bob's signature under Alice's public key and keyid.
    w["authenticity"]["envelopes"][0]["signatures"][0]["sig"] =
        by_bob["signatures"][0]["sig"].clone();
    expect_invalid(&w, None, None, &["MCP_RES_ATTESTATION_SIGNATURE_INVALID"]);
}

#[test]
fn keyid_not_matching_the_key_is_an_identity_mismatch() {
    let mut w = signed_by_alice();
    w["authenticity"]["envelopes"][0]["signatures"][0]["keyid"] =
        json!(bob().public().fingerprint());
    expect_invalid(&w, None, None, &["MCP_RES_ATTESTATION_IDENTITY_MISMATCH"]);
}

#[test]
fn envelope_identity_differing_from_the_statement_is_an_identity_mismatch() {
    let mut w = signed_by_alice();
    w["authenticity"]["envelopes"][0]["signatures"][0]["signerIdentity"] =
        json!("mallory@example.org");
    expect_invalid(&w, None, None, &["MCP_RES_ATTESTATION_IDENTITY_MISMATCH"]);
}

#[test]
fn trust_policy_id_mismatch_is_an_identity_mismatch() {
    let mut p = trusting_both();
    p["id"] = json!("org/other-policy");
    expect_invalid(
        &signed_by_alice(),
        Some(&p),
        Some(VERIFY_AT),
        &["MCP_RES_ATTESTATION_IDENTITY_MISMATCH"],
    );
}

#[test]
fn unsupported_algorithm_is_refused_before_the_schema() {
    let mut w = signed_by_alice();
    w["authenticity"]["envelopes"][0]["signatures"][0]["algorithm"] = json!("ECDSA-P256");
    expect_invalid(
        &w,
        None,
        None,
        &["MCP_RES_ATTESTATION_ALGORITHM_UNSUPPORTED"],
    );
}

#[test]
fn empty_signatures_and_missing_envelopes_are_signature_missing() {
    let mut w = signed_by_alice();
    w["authenticity"]["envelopes"][0]["signatures"] = json!([]);
    expect_invalid(&w, None, None, &["MCP_RES_ATTESTATION_SIGNATURE_MISSING"]);
    let mut w = signed_by_alice();
    w["authenticity"]["envelopes"] = json!([]);
    expect_invalid(&w, None, None, &["MCP_RES_ATTESTATION_SIGNATURE_MISSING"]);
}

#[test]
fn duplicate_signer_is_refused() {
    let mut w = signed_by_alice();
    let again = w["authenticity"]["envelopes"][0].clone();
    w["authenticity"]["envelopes"]
        .as_array_mut()
        .unwrap()
        .push(again);
    expect_invalid(&w, None, None, &["MCP_RES_ATTESTATION_DUPLICATE_SIGNER"]);
    // Two signatures in one envelope are refused the same way.
    let mut w = witnessed();
    let second = w["authenticity"]["envelopes"][1]["signatures"][0].clone();
    w["authenticity"]["envelopes"][0]["signatures"]
        .as_array_mut()
        .unwrap()
        .push(second);
    expect_invalid(&w, None, None, &["MCP_RES_ATTESTATION_DUPLICATE_SIGNER"]);
}

#[test]
fn expired_policy_and_future_signing_time() {
    let p = trusting_both();
    expect_invalid(
        &signed_by_alice(),
        Some(&p),
        Some("2027-06-01T00:00:00Z"),
        &["MCP_RES_TRUST_POLICY_EXPIRED"],
    );
    expect_invalid(
        &signed_by_alice(),
        Some(&p),
        Some("2025-12-31T23:59:59Z"),
        &["MCP_RES_TRUST_POLICY_EXPIRED"],
    );
    // Signed after the evaluation time (both inside the policy window).
    expect_invalid(
        &signed_by_alice(),
        Some(&p),
        Some("2026-05-31T23:59:59Z"),
        &["MCP_RES_TRUST_POLICY_EXPIRED"],
    );
}

#[test]
fn revoked_key_is_refused() {
    let p = policy(&[(&alice(), "alice@example.org")], &[&alice()]);
    expect_invalid(
        &signed_by_alice(),
        Some(&p),
        Some(VERIFY_AT),
        &["MCP_RES_ATTESTATION_KEY_REVOKED"],
    );
}

#[test]
fn untrusted_signer_cannot_claim_identity() {
    let only_bob = policy(&[(&bob(), "bob@example.org")], &[]);
    let mut w = signed_by_alice();
    w["authenticity"]["claimedClassification"] = json!("SIGNED_WITH_IDENTITY");
    expect_invalid(
        &w,
        Some(&only_bob),
        Some(VERIFY_AT),
        &["MCP_RES_ATTESTATION_UNTRUSTED_SIGNER"],
    );
    // The right key under the wrong identity is not trusted either.
    let alice_as_other = policy(&[(&alice(), "someone-else@example.org")], &[]);
    expect_invalid(
        &w,
        Some(&alice_as_other),
        Some(VERIFY_AT),
        &["MCP_RES_ATTESTATION_UNTRUSTED_SIGNER"],
    );
    // But the untrusted signature still counts as SIGNED.
    expect_valid(
        &signed_by_alice(),
        Some(&only_bob),
        Some(VERIFY_AT),
        "SIGNED",
    );
}

#[test]
fn overclaims_are_rejected() {
    let mut w = signed_by_alice();
    w["authenticity"]["claimedClassification"] = json!("WITNESSED");
    expect_invalid(
        &w,
        Some(&trusting_both()),
        Some(VERIFY_AT),
        &["MCP_RES_AUTHENTICITY_CLASSIFICATION_OVERCLAIM"],
    );
    w["authenticity"]["claimedClassification"] = json!("UNSIGNED_INTEGRITY_ONLY");
    expect_invalid(
        &w,
        None,
        None,
        &["MCP_RES_AUTHENTICITY_CLASSIFICATION_OVERCLAIM"],
    );
}

#[test]
fn bad_inclusion_proof_is_refused() {
    let mut w = signed_by_alice();
    let mut st = statement_of(&w, 0);
    st["predicate"]["transparencyReference"] = json!({
        "logId": "log.example.org/2026",
        "entryUuid": "entry-0001",
        "inclusionProofBase64": encode_base64(b"the proof"),
        "inclusionProofSha256": "f".repeat(64),
    });
    resign(&mut w, &st, &alice(), "alice@example.org");
    expect_invalid(&w, None, None, &["MCP_RES_TRANSPARENCY_REFERENCE_INVALID"]);
}

#[test]
fn valid_signature_over_invalid_evidence_stays_invalid() {
    let mut w = signed_by_alice();
    // A schema-valid but wrong bundle digest: the envelope itself still verifies.
    w["bundle"]["integrity"]["bundleDigest"] = json!("0".repeat(64));
    expect_invalid(
        &w,
        None,
        None,
        &[
            "MCP_RES_ATTESTED_EVIDENCE_INVALID",
            "MCP_RES_DIGEST_MISMATCH",
        ],
    );
}

#[test]
fn schema_problems_in_wrapper_payload_and_policy() {
    let mut w = signed_by_alice();
    w["extra"] = json!(true);
    expect_invalid(&w, None, None, &["MCP_RES_ATTESTATION_SCHEMA_INVALID"]);
    // A correctly signed payload that is not canonical JSON.
    let mut w = signed_by_alice();
    let pretty = serde_json::to_vec_pretty(&statement_of(&w, 0)).unwrap();
    let key = alice();
    let sig = key.sign(&mcpres::attest::dsse::pae(
        "application/vnd.in-toto+json",
        &pretty,
    ));
    w["authenticity"]["envelopes"][0]["payload"] = json!(encode_base64(&pretty));
    w["authenticity"]["envelopes"][0]["signatures"][0]["sig"] = json!(encode_base64(&sig));
    expect_invalid(&w, None, None, &["MCP_RES_ATTESTATION_SCHEMA_INVALID"]);
    // Not a wrapper at all: judged as one, as the reference attestation validators do.
    expect_invalid(
        &json!([1, 2]),
        None,
        None,
        &["MCP_RES_ATTESTATION_SCHEMA_INVALID"],
    );
    expect_invalid(
        &bundle(),
        None,
        None,
        &["MCP_RES_ATTESTATION_SCHEMA_INVALID"],
    );
    // A trust policy that is not a trust policy.
    let mut p = trusting_both();
    p["requiredAlgorithm"] = json!("RSA");
    expect_invalid(
        &signed_by_alice(),
        Some(&p),
        Some(VERIFY_AT),
        &["MCP_RES_ATTESTATION_SCHEMA_INVALID"],
    );
}

// ---- the CLI commands ----

fn private_body(key_file: &Path) -> String {
    let text = std::fs::read_to_string(key_file).unwrap();
    text.lines().filter(|l| !l.starts_with("-----")).collect()
}

#[test]
fn keygen_sign_verify_round_trip_through_the_cli() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let example = Path::new(env!("CARGO_MANIFEST_DIR")).join("bundles/example-genuine-runtime");
    let example = example.to_str().unwrap();
    let mut transcript = String::new();
    let mut run = |args: &[&str], code: i32| {
        let r = mcpres(d, args);
        assert_eq!(r.code, code, "{args:?}\n{}\n{}", r.stdout, r.stderr);
        transcript.push_str(&r.stdout);
        transcript.push_str(&r.stderr);
        r
    };
    let alice_fp = run(&["keygen", "--out", "alice"], 0)
        .stdout
        .trim()
        .to_owned();
    let bob_fp = run(&["keygen", "--out", "bob"], 0).stdout.trim().to_owned();
    assert_eq!(alice_fp.len(), 64);
    // The fingerprint is SHA-256 of the SPKI DER in alice.pub.
    let public = mcpres::attest::keys::PublicKey::read_pem(&d.join("alice.pub")).unwrap();
    assert_eq!(public.fingerprint(), alice_fp);
    // Never overwrite a key.
    let before = std::fs::read(d.join("alice.key")).unwrap();
    run(&["keygen", "--out", "alice"], 2);
    assert_eq!(std::fs::read(d.join("alice.key")).unwrap(), before);

    run(
        &[
            "sign",
            "--key",
            "alice.key",
            "--identity",
            "alice@example.org",
            "--trust-policy-id",
            POLICY_ID,
            example,
            "-o",
            "signed.json",
        ],
        0,
    );
    let r = run(&["verify", "signed.json", "--format", "json"], 0);
    let report: Value = serde_json::from_str(r.stdout.trim()).unwrap();
    assert_eq!(report["authenticityClassification"], "SIGNED");
    assert_eq!(report["evidenceClass"], "GENUINE_RUNTIME");
    // validate accepts the same options.
    run(&["validate", "signed.json"], 0);

    run(
        &[
            "trust-policy",
            "init",
            "--id",
            POLICY_ID,
            "--valid-from",
            "2020-01-01T00:00:00Z",
            "--valid-until",
            "2099-01-01T00:00:00Z",
            "-o",
            "policy.json",
        ],
        0,
    );
    run(
        &[
            "trust-policy",
            "init",
            "--id",
            POLICY_ID,
            "--valid-from",
            "2020-01-01T00:00:00Z",
            "--valid-until",
            "2099-01-01T00:00:00Z",
            "-o",
            "policy.json",
        ],
        2,
    );
    run(
        &[
            "trust-policy",
            "add-signer",
            "policy.json",
            "--key",
            "alice.pub",
            "--identity",
            "alice@example.org",
        ],
        0,
    );
    run(
        &[
            "trust-policy",
            "add-signer",
            "policy.json",
            "--key",
            "bob.pub",
            "--identity",
            "bob@example.org",
        ],
        0,
    );
    let r = run(
        &[
            "verify",
            "signed.json",
            "--trust-policy",
            "policy.json",
            "--format",
            "json",
        ],
        0,
    );
    assert!(
        r.stdout.contains("\"SIGNED_WITH_IDENTITY\""),
        "{}",
        r.stdout
    );

    // A witness with a second key; the same key twice is refused.
    run(
        &[
            "sign",
            "--key",
            "alice.key",
            "--identity",
            "alice@example.org",
            "--trust-policy-id",
            POLICY_ID,
            "signed.json",
            "-o",
            "again.json",
        ],
        2,
    );
    assert!(!d.join("again.json").exists());
    run(
        &[
            "sign",
            "--key",
            "bob.key",
            "--identity",
            "bob@example.org",
            "--trust-policy-id",
            POLICY_ID,
            "--claim",
            "WITNESSED",
            "signed.json",
            "-o",
            "witnessed.json",
        ],
        0,
    );
    let r = run(
        &[
            "verify",
            "witnessed.json",
            "--trust-policy",
            "policy.json",
            "--format",
            "json",
        ],
        0,
    );
    assert!(r.stdout.contains("\"WITNESSED\""), "{}", r.stdout);

    // Transparency reference.
    std::fs::write(d.join("proof.bin"), b"merkle inclusion proof").unwrap();
    run(
        &[
            "sign",
            "--key",
            "alice.key",
            "--identity",
            "alice@example.org",
            "--trust-policy-id",
            POLICY_ID,
            "--transparency-log",
            "log.example.org",
            "--transparency-entry",
            "e-42",
            "--inclusion-proof",
            "proof.bin",
            "--claim",
            "TRANSPARENCY_RECORDED",
            example,
            "-o",
            "recorded.json",
        ],
        0,
    );
    let r = run(
        &[
            "verify",
            "recorded.json",
            "--trust-policy",
            "policy.json",
            "--format",
            "json",
        ],
        0,
    );
    assert!(
        r.stdout.contains("\"TRANSPARENCY_RECORDED\""),
        "{}",
        r.stdout
    );

    // Revocation through the CLI.
    run(
        &[
            "trust-policy",
            "revoke",
            "policy.json",
            "--fingerprint",
            &bob_fp,
        ],
        0,
    );
    let r = run(
        &[
            "verify",
            "witnessed.json",
            "--trust-policy",
            "policy.json",
            "--format",
            "json",
        ],
        1,
    );
    assert!(
        r.stdout.contains("MCP_RES_ATTESTATION_KEY_REVOKED"),
        "{}",
        r.stdout
    );
    let policy: Value =
        serde_json::from_slice(&std::fs::read(d.join("policy.json")).unwrap()).unwrap();
    assert_eq!(policy["version"], "1.0.3");

    // Refusals: an existing output, an impossible claim, a plain bundle given to verify.
    run(
        &[
            "sign",
            "--key",
            "alice.key",
            "--identity",
            "a",
            "--trust-policy-id",
            POLICY_ID,
            example,
            "-o",
            "signed.json",
        ],
        2,
    );
    run(
        &[
            "sign",
            "--key",
            "alice.key",
            "--identity",
            "a",
            "--trust-policy-id",
            POLICY_ID,
            "--claim",
            "WITNESSED",
            example,
            "-o",
            "w1.json",
        ],
        2,
    );
    run(&["verify", example], 1);
    run(&["verify", "signed.json", "--at", "yesterday"], 2);

    // No private key material in anything the commands printed.
    for key in ["alice.key", "bob.key"] {
        let body = private_body(&d.join(key));
        assert!(body.len() > 40);
        assert!(!transcript.contains(&body), "{key} leaked");
    }
}

#[test]
fn sign_refuses_an_invalid_bundle() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    assert_eq!(mcpres(d, &["keygen", "--out", "k"]).code, 0);
    let mut b = bundle();
    b["integrity"]["bundleDigest"] = json!("0".repeat(64));
    write(d, "bad.json", &b);
    let r = mcpres(
        d,
        &[
            "sign",
            "--key",
            "k.key",
            "--identity",
            "x",
            "--trust-policy-id",
            "p",
            "bad.json",
            "-o",
            "out.json",
        ],
    );
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(r.stderr.contains("MCP_RES_DIGEST_MISMATCH"), "{}", r.stderr);
    assert!(!d.join("out.json").exists());
    // A public key is not a signing key.
    let r = mcpres(
        d,
        &[
            "sign",
            "--key",
            "k.pub",
            "--identity",
            "x",
            "--trust-policy-id",
            "p",
            "bad.json",
            "-o",
            "out.json",
        ],
    );
    assert_eq!(r.code, 2);
    assert!(
        r.stderr.contains("not an Ed25519 private key"),
        "{}",
        r.stderr
    );
}
