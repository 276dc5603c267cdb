//! Issue 16, item 9, end to end through `mcpres run`: a PEM private key a
//! subject prints is redacted whole (body lines too, not only its BEGIN
//! line), and an `--env` value holding `"` and `\` is found where the
//! harness itself stores it JSON-escaped (the subject's argv in the
//! `spawned` event of lifecycle.jsonl). The short secret-named value
//! (`SHORT_TOKEN=abc123`) and `DB_PASS` are covered by tests/harness_privacy.rs.
#![cfg(feature = "server")]

mod support;

use std::path::Path;

use support::*;

/// The body lines of the made-up key tests/subjects/liars/leak_pem.py prints.
const PEM_BODY: [&str; 3] = [
    "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQDfakeFAKEfake01",
    "q7Lm2Np4Rs6Tu8Vw0Xy2Za4Bc6De8Fg0Hi2Jk4Lm6No8Pq0Rs2Tu4Vw6Xy8Za0Bc",
    "Zx9Yw8Vu7Ts6Rq5Po4Nm3Lk2Ji1Hg0Fe9Dc8Ba7Zy6Xw5Vu4Ts3Rq2Po1Nm0Lk==",
];

/// An `--env` value with a quote and a backslash (JSON stores it as
/// `q\"uo\\te-...`).
const QUOTED: &str = r#"q"uo\te-Secret-77"#;

#[test]
fn a_pem_body_and_an_escaped_env_value_are_redacted_everywhere() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("bundle");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/subjects/liars/leak_pem.py");
    let env = format!("APP_SETTING={QUOTED}");
    let o = command()
        .args([
            "run",
            "--scenario",
            "generic",
            "--env",
            &env,
            "-o",
            out.to_str().unwrap(),
            "--",
            "python3",
            script.to_str().unwrap(),
            // The same value on the command line: the harness records the
            // argv in lifecycle.jsonl, JSON-escaped.
            QUOTED,
        ])
        .output()
        .expect("run mcpres");
    assert!(
        matches!(o.status.code(), Some(0 | 1)),
        "{}",
        output_text(&o)
    );
    // The subject really printed the key: its stderr capture kept the text
    // around it.
    let stderr = text(&std::fs::read(out.join("raw/trial-1/clean.stderr.bin")).unwrap());
    assert!(
        stderr.starts_with("loaded key:") && stderr.contains("ready"),
        "{stderr}"
    );
    // And the argv was recorded (redacted) where the escaped form would be.
    let lifecycle = text(&std::fs::read(out.join("raw/trial-1/lifecycle.jsonl")).unwrap());
    assert!(lifecycle.contains("\"spawned\""), "{lifecycle}");
    let escaped = serde_json::to_string(QUOTED).unwrap();
    let escaped = &escaped[1..escaped.len() - 1];
    let mut forms: Vec<&str> = PEM_BODY.to_vec();
    forms.extend([QUOTED, escaped, "uo\\te-Secret-77", "Secret-77"]);
    for file in walk(&out) {
        let bytes = std::fs::read(&file).unwrap();
        let raw = text(&bytes);
        let decoded = decoded_strings(&bytes);
        for form in &forms {
            assert!(!raw.contains(form), "{} holds {form}", file.display());
            assert!(
                !decoded.iter().any(|s| s.contains(form)),
                "{} holds {form} behind an escape",
                file.display()
            );
        }
    }
    let report = read_json(&out.join("raw/privacy-report.json"));
    assert_eq!(report["remainingAfterRedaction"], 0, "{report}");
    let kinds: Vec<&str> = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["kind"].as_str().unwrap())
        .collect();
    assert!(kinds.contains(&"private-key"), "{report}");
    assert!(kinds.contains(&"environment-value:APP_SETTING"), "{report}");
}
