//! `mcpres demo` keeps the public half of its key and the trust policy it
//! used (never the private key) and prints the commands that reproduce its
//! verification; `verify` shows the claimed and the derived classification
//! side by side (issue 15, item 15).

mod support;

use support::*;

#[test]
fn the_printed_verify_command_reproduces_signed_with_identity() {
    let tmp = tempfile::tempdir().unwrap();
    let o = mcpres_in(tmp.path(), &["demo", "-o", "demo"]);
    assert_eq!(o.status.code(), Some(0), "{}", output_text(&o));
    let stdout = text(&o.stdout);
    for want in [
        "public key:      demo.pub (the private half was never written)",
        "trust policy:    demo.trust-policy.json",
        "verified:        SIGNED_WITH_IDENTITY",
        "  mcpres validate demo",
        "  mcpres verify demo.attested.json --trust-policy demo.trust-policy.json",
    ] {
        assert!(stdout.contains(want), "missing {want:?} in:\n{stdout}");
    }
    // The printed command, run as printed.
    let line = stdout
        .lines()
        .find(|l| l.trim_start().starts_with("mcpres verify "))
        .unwrap();
    let args: Vec<&str> = line.split_whitespace().skip(1).collect();
    let r: Run = mcpres_in(tmp.path(), &args).into();
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    assert!(
        r.stdout
            .contains("authenticity claimed SIGNED, derived SIGNED_WITH_IDENTITY"),
        "{}",
        r.stdout
    );
    // Without the policy, the same bundle is only SIGNED.
    let r: Run = mcpres_in(tmp.path(), &["verify", "demo.attested.json"]).into();
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    assert!(
        r.stdout
            .contains("authenticity claimed SIGNED, derived SIGNED"),
        "{}",
        r.stdout
    );
    // The public key is there; no private key anywhere.
    let pem = std::fs::read_to_string(tmp.path().join("demo.pub")).unwrap();
    assert!(pem.starts_with("-----BEGIN PUBLIC KEY-----"), "{pem}");
    for entry in walk(tmp.path()) {
        let bytes = std::fs::read(&entry).unwrap();
        assert!(
            !text(&bytes).contains("PRIVATE KEY"),
            "{} holds a private key",
            entry.display()
        );
    }
    // A second demo into the same name is refused before it starts.
    std::fs::remove_dir_all(tmp.path().join("demo")).unwrap();
    let r: Run = mcpres_in(tmp.path(), &["demo", "-o", "demo"]).into();
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(
        r.stderr.contains("demo.attested.json already exists"),
        "{}",
        r.stderr
    );
    assert!(!tmp.path().join("demo").exists());
}

#[test]
fn an_expired_or_early_policy_names_the_bound_that_failed() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let attested = root.join("bundles/example-attested.json");
    let policy = root.join("bundles/example-trust-policy.json");
    for (at, want) in [
        (
            "2030-06-01T00:00:00Z",
            "has expired: the evaluation time 2030-06-01T00:00:00.000Z is after its validUntil 2030-01-01T00:00:00Z",
        ),
        (
            "2025-06-01T00:00:00Z",
            "is not valid yet: the evaluation time 2025-06-01T00:00:00.000Z is before its validFrom 2026-01-01T00:00:00Z",
        ),
    ] {
        let r: Run = mcpres(&[
            "verify",
            attested.to_str().unwrap(),
            "--trust-policy",
            policy.to_str().unwrap(),
            "--at",
            at,
            "--format",
            "json",
        ])
        .into();
        assert_eq!(r.code, 1, "{}", r.stdout);
        assert!(r.stdout.contains(want), "{at}: {}", r.stdout);
    }
}
