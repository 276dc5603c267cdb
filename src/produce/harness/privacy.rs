//! The privacy scan every raw artifact goes through before a bundle is written.
//!
//! Each rule (a credential shape, a home path, the working directory, an
//! environment value) is applied to two forms of the bytes: the raw bytes, and
//! the decoded text of every JSON string literal in them (a `"..."` with
//! escapes), so that `\u0041KIA...`, `Bearer\u0020...` or a value holding `"`
//! or `\` stored escaped is found as well. A match in the raw bytes is replaced
//! by `[REDACTED:<kind>]`; a match found only in a decoded literal replaces the
//! whole literal by the JSON encoding of its redacted text. Both forms are then
//! scanned again, and the scan passes only when neither holds a match. The
//! report names paths, kinds, forms and counts, never a matched value. See the
//! PRIVACY_SCAN paragraph of spec/harness.md. The rules and their matching
//! are the one redactor's (`drive::redact`); this is the harness's report.

use std::collections::BTreeMap;

use serde_json::{Value, json};

pub use crate::produce::drive::redact::{DECODED, NotRedacted, RAW, Tally, secret_name};
use crate::produce::drive::redact::{FIXED_KINDS, Redactor};

/// One privacy finding (never the matched value itself).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PrivacyFinding {
    pub path: String,
    pub kind: String,
    /// `raw` or `json-decoded`.
    pub form: &'static str,
    pub count: usize,
}

/// The harness's face of the one redactor (`drive::redact`): its rules are
/// the credential shapes, home paths, the working directory and the
/// environment values; this module turns what it finds into the privacy
/// report.
pub struct PrivacyScanner(Redactor);

impl PrivacyScanner {
    /// Credential shapes, PEM private key blocks, home-directory paths
    /// (`$HOME` and `/home/NAME`, `/Users/NAME`), the harness's working
    /// directory, the values (8 bytes or more) of secret-named variables of
    /// the harness's own environment, and every value passed with `--env`
    /// (short harmless values aside), each in its encoded forms too.
    pub fn new(extra_env: &BTreeMap<String, String>) -> Self {
        PrivacyScanner(Redactor::for_harness(extra_env))
    }

    /// `new` with the harness's environment and working directory given.
    #[cfg(test)]
    fn with_environment(
        extra_env: &BTreeMap<String, String>,
        harness_env: &BTreeMap<String, String>,
        cwd: Option<&str>,
    ) -> Self {
        PrivacyScanner(Redactor::with_environment(
            extra_env,
            harness_env,
            cwd,
            true,
        ))
    }

    /// The redactor itself.
    pub fn redactor(&self) -> &Redactor {
        &self.0
    }

    /// The `--env` variables whose values are not redacted.
    pub fn not_redacted(&self) -> &[NotRedacted] {
        self.0.not_redacted()
    }

    /// One redaction pass over both forms of `bytes`.
    pub fn redact(&self, bytes: &mut Vec<u8>) -> Tally {
        self.0.redact(bytes)
    }

    /// Redact until a rescan of both forms is clean, or a few passes;
    /// returns what was redacted and what remains.
    pub fn redact_fully(&self, bytes: &mut Vec<u8>) -> (Tally, Tally) {
        self.0.redact_fully(bytes)
    }

    /// The matches in both forms of `bytes`, without changing them.
    pub fn count(&self, bytes: &[u8]) -> Tally {
        self.0.count(bytes)
    }
}

/// What the scan of a bundle's artifacts found and left.
#[derive(Debug, Clone)]
pub struct PrivacyOutcome {
    pub findings: Vec<PrivacyFinding>,
    /// Matches left in the raw form and in the decoded form after redaction.
    pub remaining_raw: usize,
    pub remaining_decoded: usize,
    /// `raw/privacy-report.json`.
    pub report: Value,
}

impl PrivacyOutcome {
    /// Nothing remains in either form.
    pub fn passed(&self) -> bool {
        self.remaining_raw == 0 && self.remaining_decoded == 0
    }

    /// The PRIVACY_SCAN observation's reason code.
    pub fn reason(&self) -> &'static str {
        match (self.passed(), self.findings.is_empty()) {
            (true, true) => "NO_SECRETS_FOUND",
            (true, false) => "SECRETS_REDACTED",
            (false, _) => "SECRETS_REMAIN",
        }
    }
}

/// Scan and redact every artifact in place, rescan both forms, and build the
/// report (paths, kinds, forms, counts; which artifacts were rewritten and so
/// are no longer byte-exact; the `--env` names left unredacted).
pub fn scan_artifacts(
    raw: &mut BTreeMap<String, (Vec<u8>, &'static str)>,
    scanner: &PrivacyScanner,
) -> PrivacyOutcome {
    let mut findings = Vec::new();
    let mut rewritten = Vec::new();
    let mut remaining_raw = 0;
    let mut remaining_decoded = 0;
    for (path, (bytes, _)) in raw.iter_mut() {
        let (done, left) = scanner.redact_fully(bytes);
        for ((kind, form), count) in &done.matches {
            findings.push(PrivacyFinding {
                path: path.clone(),
                kind: kind.clone(),
                form,
                count: *count,
            });
        }
        if done.total() > 0 {
            rewritten.push(json!({
                "path": path, "byteExact": false,
                "jsonLiteralsReencoded": done.literals_rewritten,
            }));
        }
        let (r, d) = left.by_form();
        remaining_raw += r;
        remaining_decoded += d;
    }
    let report = json!({
        "scanned": raw.keys().collect::<Vec<_>>(),
        "forms": [RAW, DECODED],
        "rules": FIXED_KINDS,
        "findings": findings.iter().map(|f| json!({
            "path": f.path, "kind": f.kind, "form": f.form, "count": f.count,
        })).collect::<Vec<_>>(),
        "redacted": !findings.is_empty(),
        "rewritten": rewritten,
        "environmentNotRedacted": scanner.not_redacted().iter().map(|n| json!({
            "name": n.name, "reason": n.reason,
        })).collect::<Vec<_>>(),
        "remainingAfterRedaction": remaining_raw + remaining_decoded,
        "remaining": {RAW: remaining_raw, DECODED: remaining_decoded},
    });
    PrivacyOutcome {
        findings,
        remaining_raw,
        remaining_decoded,
        report,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::produce::drive::redact::{JSON_SCALAR, TOO_SHORT};

    /// A scanner with the given `--env`, no harness environment and no
    /// working directory, so that the tests see only their own rules.
    fn scanner(env: &[(&str, &str)]) -> PrivacyScanner {
        let env = env
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        PrivacyScanner::with_environment(&env, &BTreeMap::new(), None)
    }

    fn redacted(s: &PrivacyScanner, input: &[u8]) -> (String, Tally) {
        let mut bytes = input.to_vec();
        let (done, left) = s.redact_fully(&mut bytes);
        assert_eq!(left.total(), 0, "{left:?}");
        (String::from_utf8(bytes).unwrap(), done)
    }

    /// Every JSON string literal of `text`, decoded (with escapes or not).
    fn decoded_strings(text: &str) -> Vec<String> {
        let b = text.as_bytes();
        let mut out = Vec::new();
        let mut i = 0;
        while i < b.len() {
            if b[i] == b'"' {
                let mut j = i + 1;
                while j < b.len() && b[j] != b'"' {
                    j += if b[j] == b'\\' { 2 } else { 1 };
                }
                if j < b.len() {
                    if let Ok(s) = serde_json::from_slice::<String>(&b[i..=j]) {
                        out.push(s);
                    }
                    i = j + 1;
                    continue;
                }
            }
            i += 1;
        }
        out
    }

    fn kinds(t: &Tally) -> Vec<(String, &'static str)> {
        t.matches.keys().cloned().collect()
    }

    #[test]
    fn credentials_home_paths_and_env_values_are_redacted_in_raw_bytes() {
        let s = scanner(&[("MY_API_TOKEN", "tok-value-1234")]);
        let (text, done) = redacted(
            &s,
            b"auth: Bearer abcdefghijklmnop; path /home/alice/x; t=tok-value-1234; ghp_0123456789abcdefghijABCD",
        );
        for k in [
            "bearer-token",
            "home-path",
            "github-token",
            "environment-value:MY_API_TOKEN",
        ] {
            assert!(kinds(&done).contains(&(k.to_string(), RAW)), "{done:?}");
        }
        assert!(!text.contains("tok-value-1234") && !text.contains("alice"));
        assert!(!text.contains("abcdefghijklmnop") && !text.contains("ghp_"));
        assert!(text.contains("t=[REDACTED:environment-value]"), "{text}");
    }

    #[test]
    fn a_unicode_escaped_aws_key_is_found_in_the_decoded_literal() {
        let s = scanner(&[]);
        let line = br#"{"jsonrpc":"2.0","id":3,"result":{"text":"key \u0041KIAABCDEFGHIJ234567 end\u0021"}}"#;
        assert_eq!(s.count(line).by_form(), (0, 1));
        let (text, done) = redacted(&s, line);
        assert_eq!(kinds(&done), vec![("aws-access-key".to_string(), DECODED)]);
        assert_eq!(done.literals_rewritten, 1);
        // The literal is re-encoded whole, the rest of the frame untouched.
        let v: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(v["result"]["text"], "key [REDACTED:aws-access-key] end!");
        assert!(text.starts_with(r#"{"jsonrpc":"2.0","id":3,"#));
        assert!(!text.contains("ABCDEFGHIJ234567"));
    }

    #[test]
    fn an_escaped_space_after_bearer_is_found() {
        let s = scanner(&[]);
        let line = br#"{"headers":"Authorization: Bearer\u0020zYx9876543210abcdefgh"}"#;
        let (text, done) = redacted(&s, line);
        assert_eq!(kinds(&done), vec![("bearer-token".to_string(), DECODED)]);
        assert!(!text.contains("zYx9876543210abcdefgh"), "{text}");
        assert_eq!(
            decoded_strings(&text)[1],
            "Authorization: [REDACTED:bearer-token]"
        );
    }

    #[test]
    fn a_double_encoded_secret_is_found() {
        // A tool result whose text is itself JSON: the escape is escaped.
        let s = scanner(&[]);
        let inner = serde_json::to_string(&json!({"k": "\\u0041KIAABCDEFGHIJ234567"}))
            .unwrap()
            .replace(r"\\u0041", r"\u0041");
        let line = serde_json::to_vec(&json!({"text": inner})).unwrap();
        let (text, _) = redacted(&s, &line);
        for d in decoded_strings(&text) {
            assert!(!d.contains("ABCDEFGHIJ234567"), "{d}");
            for dd in decoded_strings(&d) {
                assert!(!dd.contains("ABCDEFGHIJ234567"), "{dd}");
            }
        }
    }

    #[test]
    fn a_value_with_a_quote_or_backslash_is_found_in_its_escaped_form() {
        let secret = r#"pa"ss\wo-rd"#;
        let s = scanner(&[("SERVICE_PASSWORD", secret)]);
        // How lifecycle.jsonl stores an argv holding the value.
        let line = serde_json::to_vec(&json!({"args": ["--password", secret, "--x"]})).unwrap();
        assert!(!String::from_utf8_lossy(&line).contains(secret));
        let (text, done) = redacted(&s, &line);
        assert!(done.total() > 0);
        let v: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(
            v["args"],
            json!(["--password", "[REDACTED:environment-value]", "--x"])
        );
        // Also where no whole literal surrounds it (a frame cut short).
        let cut = br#"{"args":["pa\"ss\\wo-rd"#;
        let (text, _) = redacted(&s, cut);
        assert!(!text.contains(r#"pa\"ss\\wo-rd"#), "{text}");
    }

    #[test]
    fn a_short_env_value_and_a_db_pass_are_redacted() {
        assert!(secret_name("DB_PASS") && secret_name("db_pwd") && secret_name("SSH_KEY"));
        assert!(secret_name("AWS_CREDENTIALS") && !secret_name("LANG"));
        let s = scanner(&[
            ("SHORT_TOKEN", "abc123"),
            ("DB_PASS", "hun2"),
            ("PIN_KEY", "x9"),
        ]);
        let (text, _) = redacted(
            &s,
            b"SHORT_TOKEN=abc123\nDB_PASS=hun2 (hun2x too)\npin x9; box9 stays\n",
        );
        assert_eq!(
            text,
            "SHORT_TOKEN=[REDACTED:environment-value]\nDB_PASS=[REDACTED:environment-value] ([REDACTED:environment-value]x too)\npin [REDACTED:environment-value]; box9 stays\n"
        );
        assert!(s.not_redacted().is_empty());
        // A value ending in a backslash, inside a JSON string: the escaped
        // form is taken whole and the literal stays well-formed.
        let s = scanner(&[("API_KEY", r"ab\")]);
        let (text, _) = redacted(&s, br#"{"k":"ab\\"}"#);
        assert_eq!(text, r#"{"k":"[REDACTED:environment-value]"}"#);
    }

    #[test]
    fn every_env_value_is_redacted_but_a_harmless_short_one_keeps_the_text() {
        let s = scanner(&[
            ("DEBUG", "1"),
            ("PORT", "45123"),
            ("MODE", "json"),
            ("GREETING", "visible-value"),
        ]);
        let line = br#"{"jsonrpc":"2.0","id":1,"result":{"port":45123,"mode":"json","msg":"visible-value"}}"#;
        let (text, _) = redacted(&s, line);
        // `1` and the port are left alone; `json` only as a whole token (not
        // in `jsonrpc`).
        assert_eq!(
            text,
            r#"{"jsonrpc":"2.0","id":1,"result":{"port":45123,"mode":"[REDACTED:environment-value]","msg":"[REDACTED:environment-value]"}}"#
        );
        assert_eq!(
            s.not_redacted(),
            &[
                NotRedacted {
                    name: "DEBUG".into(),
                    reason: TOO_SHORT,
                },
                NotRedacted {
                    name: "PORT".into(),
                    reason: JSON_SCALAR,
                }
            ]
        );
        // A secret-named short number is still redacted (as a whole token).
        let s = scanner(&[("APP_PIN_KEY", "471")]);
        let (text, _) = redacted(&s, b"pin 471, not 4710");
        assert_eq!(text, "pin [REDACTED:environment-value], not 4710");
    }

    const PEM: &str = "-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo\n4lgOEePzNm0tRgeLezV6ffAt0gunVTLw7onL\n-----END RSA PRIVATE KEY-----";

    #[test]
    fn a_pem_block_is_redacted_whole_raw_and_json_escaped() {
        let s = scanner(&[]);
        let raw = format!("before\n{PEM}\nafter\n");
        let (text, _) = redacted(&s, raw.as_bytes());
        assert_eq!(text, "before\n[REDACTED:private-key]\nafter\n");
        let line = serde_json::to_vec(&json!({"text": format!("k={PEM} ok")})).unwrap();
        let (text, done) = redacted(&s, &line);
        assert_eq!(text, r#"{"text":"k=[REDACTED:private-key] ok"}"#);
        assert_eq!(kinds(&done), vec![("private-key".to_string(), RAW)]);
        // With its first dash written as \u002d, only the decoded form shows it.
        let odd = String::from_utf8(line)
            .unwrap()
            .replacen("-----BEGIN", r"\u002d----BEGIN", 1);
        let (text, done) = redacted(&s, odd.as_bytes());
        assert_eq!(text, r#"{"text":"k=[REDACTED:private-key] ok"}"#);
        assert_eq!(kinds(&done), vec![("private-key".to_string(), DECODED)]);
        // A block cut off before its END line loses its body too.
        let cut = &PEM[..90];
        let (text, _) = redacted(&s, format!("{cut}\n").as_bytes());
        assert!(!text.contains("MIIEpAIBAAKCAQEA"), "{text}");
    }

    #[test]
    fn scan_artifacts_rescans_both_forms_and_reports_no_value() {
        let s = scanner(&[("SHORT_TOKEN", "abc123"), ("DEBUG", "1")]);
        let mut raw = BTreeMap::new();
        raw.insert(
            "raw/a.stdout.bin".to_string(),
            (
                br#"{"text":"\u0041KIAABCDEFGHIJ234567 abc123"}"#.to_vec(),
                "application/octet-stream",
            ),
        );
        raw.insert(
            "raw/b.stderr.bin".to_string(),
            (b"nothing here\n".to_vec(), "application/octet-stream"),
        );
        let out = scan_artifacts(&mut raw, &s);
        assert!(out.passed());
        assert_eq!(out.reason(), "SECRETS_REDACTED");
        assert_eq!(out.report["remainingAfterRedaction"], 0);
        assert_eq!(
            out.report["rewritten"],
            json!([{"path": "raw/a.stdout.bin", "byteExact": false, "jsonLiteralsReencoded": 1}])
        );
        assert_eq!(
            out.report["environmentNotRedacted"],
            json!([{"name": "DEBUG", "reason": "SHORTER_THAN_4_BYTES_AND_NOT_SECRET_NAMED"}])
        );
        let report = out.report.to_string();
        assert!(!report.contains("abc123") && !report.contains("ABCDEFGHIJ"));
        for (bytes, _) in raw.values() {
            assert_eq!(s.count(bytes).total(), 0);
        }
        assert_eq!(raw["raw/b.stderr.bin"].0, b"nothing here\n");
        // Nothing to find: nothing rewritten.
        let mut clean = BTreeMap::new();
        clean.insert(
            "raw/c.bin".to_string(),
            (b"{}".to_vec(), "application/json"),
        );
        let out = scan_artifacts(&mut clean, &s);
        assert_eq!(out.reason(), "NO_SECRETS_FOUND");
        assert_eq!(out.report["rewritten"], json!([]));
    }

    #[test]
    fn literal_spans_survive_stray_quotes() {
        let b = br#"say "it\"s" and 5" long
{"a":"x\ty"}"#;
        let spans = crate::produce::drive::redact::escaped_literals(b);
        let got: Vec<&[u8]> = spans.iter().map(|(s, e)| &b[*s..*e]).collect();
        assert_eq!(got, vec![&br#""it\"s""#[..], &br#""x\ty""#[..]]);
    }
}
