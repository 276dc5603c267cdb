//! The privacy scan against a subject that hides secrets behind JSON escapes
//! (tests/subjects/escaped_secrets_server.py): the real binary runs it under
//! the generic scenario, and no file of the bundle may hold a secret, in its
//! raw bytes or in any JSON string it decodes to.
#![cfg(feature = "server")]

mod support;

use std::path::Path;

use serde_json::Value;

use support::*;

/// What the subject leaks: the `--env` values it prints to stderr and the
/// decoded forms of the escaped secrets of its echo answer.
const SECRETS: [&str; 4] = [
    "abc123",
    "hunter2x",
    "AKIAQ7RZ2M4K9PX3LW8T",
    "tK9mQ2xZ7vB4nR8wL3pJ",
];

fn assert_no_secret(file: &Path) {
    let bytes = std::fs::read(file).unwrap();
    let raw = text(&bytes);
    for secret in SECRETS {
        assert!(!raw.contains(secret), "{} holds {secret}", file.display());
        for s in decoded_strings(&bytes) {
            assert!(
                !s.contains(secret),
                "{} holds {secret} behind an escape",
                file.display()
            );
        }
    }
}

#[test]
fn secrets_behind_json_escapes_and_short_env_values_are_redacted() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("bundle");
    let script =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/subjects/escaped_secrets_server.py");
    let o = command()
        .args([
            "run",
            "--scenario",
            "generic",
            "--env",
            "SHORT_TOKEN=abc123",
            "--env",
            "DB_PASS=hunter2x",
            "--env",
            "DEBUG=1",
            "-o",
            out.to_str().unwrap(),
            "--",
            "python3",
            script.to_str().unwrap(),
        ])
        .output()
        .expect("run mcpres");
    assert!(
        matches!(o.status.code(), Some(0 | 1)),
        "{}",
        output_text(&o)
    );
    // The subject really leaked: its stderr capture had the values, now redacted.
    let stderr = text(&std::fs::read(out.join("raw/trial-1/clean.stderr.bin")).unwrap());
    assert_eq!(
        stderr,
        "SHORT_TOKEN=[REDACTED:environment-value] DB_PASS=[REDACTED:environment-value]\n"
    );
    // And the echo was answered, with the escaped secrets redacted in place.
    let stdout = text(&std::fs::read(out.join("raw/trial-1/clean.stdout.bin")).unwrap());
    let echo: Value = stdout
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .find(|m| m["result"]["content"].is_array())
        .expect("echo answered");
    assert_eq!(
        echo["result"]["content"][1]["text"],
        "key [REDACTED:aws-access-key] auth [REDACTED:bearer-token] db [REDACTED:environment-value]"
    );
    for file in walk(&out) {
        assert_no_secret(&file);
    }
    let report = read_json(&out.join("raw/privacy-report.json"));
    assert_eq!(report["remainingAfterRedaction"], 0, "{report}");
    assert_eq!(report["remaining"]["raw"], 0);
    assert_eq!(report["remaining"]["json-decoded"], 0);
    let decoded_kinds: Vec<&str> = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["form"] == "json-decoded")
        .map(|f| f["kind"].as_str().unwrap())
        .collect();
    for kind in [
        "aws-access-key",
        "bearer-token",
        "environment-value:DB_PASS",
    ] {
        assert!(decoded_kinds.contains(&kind), "{report}");
    }
    let rewritten: Vec<&str> = report["rewritten"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["path"].as_str().unwrap())
        .collect();
    assert!(
        rewritten.contains(&"raw/trial-1/clean.stdout.bin"),
        "{report}"
    );
    assert!(
        rewritten.contains(&"raw/trial-1/clean.stderr.bin"),
        "{report}"
    );
    assert_eq!(
        report["environmentNotRedacted"],
        serde_json::json!([{"name": "DEBUG", "reason": "SHORTER_THAN_4_BYTES_AND_NOT_SECRET_NAMED"}])
    );
    let (doc, _) = load(&out);
    let privacy = doc["evidence"]["observations"]
        .as_array()
        .unwrap()
        .iter()
        .find(|o| o["type"] == "PRIVACY_SCAN")
        .expect("a PRIVACY_SCAN observation")
        .clone();
    assert_eq!(privacy["reasonCode"], "SECRETS_REDACTED");
    assert_eq!(privacy["outcome"], "PASS");
}

/// The test's own decoder finds what the harness's scan must remove: an
/// escaped key in a JSON line, in a non-JSON capture, and inside a JSON text
/// nested in a string (so the absence checks above are not vacuous).
#[test]
fn the_test_decoder_sees_escaped_secrets() {
    let key = "AKIAQ7RZ2M4K9PX3LW8T";
    let escaped = r#"{"t":"\u0041KIAQ7RZ2M4K9PX3LW8T"}"#;
    let nested = r#"{"text":"{\"k\":\"\\u0041KIAQ7RZ2M4K9PX3LW8T\"}"}"#;
    for sample in [
        escaped.to_string(),
        "stderr: key \"\\u0041KIAQ7RZ2M4K9PX3LW8T\" end".to_string(),
        nested.to_string(),
    ] {
        assert!(
            decoded_strings(sample.as_bytes())
                .iter()
                .any(|s| s.contains(key)),
            "{sample}"
        );
    }
}

/// mcpres's own `OLDPWD` (a directory, not a secret, though its name ends in
/// "PWD") is not redacted: the subject's script path, which lies under that
/// directory and is recorded in the bundle, stays as it is, and the privacy
/// report names no finding for it. Its twin, the same directory in a
/// secret-named variable of mcpres's environment (`DB_PWD`), is redacted
/// from every file and named by the report.
#[test]
fn the_previous_working_directory_is_no_secret() {
    let tmp = tempfile::tempdir().unwrap();
    // The script copied into a directory of its own (the working directory
    // and home are redacted as such, whatever OLDPWD says).
    let dir = tmp.path().join("previous-directory");
    std::fs::create_dir(&dir).unwrap();
    let script = dir.join("escaped_secrets_server.py");
    std::fs::copy(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/subjects/escaped_secrets_server.py"),
        &script,
    )
    .unwrap();
    for (name, secret) in [("OLDPWD", false), ("DB_PWD", true)] {
        let out = tmp.path().join(format!("bundle-{name}"));
        let o = command()
            .env(name, &dir)
            .args(["run", "--scenario", "generic", "-o"])
            .arg(&out)
            .args(["--", "python3"])
            .arg(&script)
            .output()
            .expect("run mcpres");
        assert!(
            matches!(o.status.code(), Some(0 | 1)),
            "{name}: {}",
            output_text(&o)
        );
        let path = dir.to_str().unwrap();
        let holding = walk(&out)
            .into_iter()
            .filter(|f| text(&std::fs::read(f).unwrap()).contains(path))
            .count();
        let report = read_json(&out.join("raw/privacy-report.json"));
        if secret {
            assert_eq!(holding, 0, "{name}: the path survives in {holding} file(s)");
            assert!(report.to_string().contains(name), "{name}: {report}");
        } else {
            assert!(
                holding > 0,
                "{name}: no bundle file records the script path {path}"
            );
            assert!(
                !report.to_string().contains(name),
                "{name} was treated as a secret: {report}"
            );
        }
    }
}
