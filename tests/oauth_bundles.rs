//! The committed OAuth-boundary evaluations in bundles/oauth/ (written by
//! bundles/oauth/generate.sh): the reference subject's and the Python `mcp`
//! SDK subject's. They validate with exactly the findings recorded for them
//! (tests/oauth_expect/mod.rs), every artifact is the one the evaluation
//! cites, and none holds credential material. The reference Python
//! validator's `oauth` mode, when its kit is configured, reaches the same
//! verdict as `mcpres validate` on each of them and on a fresh run of the
//! reference subject.

mod oauth_expect;
mod support;

use std::path::{Path, PathBuf};

use serde_json::Value;
use support::{output_text, read_json, walk};

fn bundle(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("bundles/oauth")
        .join(name)
}

/// `mcpres validate --format json FILE`: (exit code, the JSON report).
fn validate(evaluation: &Path) -> (i32, Value) {
    let o = support::mcpres(&[
        "validate".as_ref(),
        "--format".as_ref(),
        "json".as_ref(),
        evaluation.as_os_str(),
    ]);
    let report = serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("validate --format json: {e}\n{}", output_text(&o)));
    (o.status.code().expect("exit code"), report)
}

/// The reference subject's rows: every check the runner observed passes.
fn reference_rows(run: &Value) -> Vec<oauth_expect::Row> {
    run["checks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            let id: &'static str =
                Box::leak(c["id"].as_str().unwrap().to_string().into_boxed_str());
            (id, "PASS", None, None)
        })
        .collect()
}

/// run.json names evaluation.json's bytes and every artifact's; nothing else
/// is in the directory, and nothing holds credential material.
fn assert_intact(dir: &Path) {
    let run = read_json(&dir.join("run.json"));
    let eval_bytes = std::fs::read(dir.join("evaluation.json")).unwrap();
    assert_eq!(
        run["evaluationFileSha256"],
        mcpres::json::canonical::sha256_hex(&eval_bytes),
        "{}",
        dir.display()
    );
    let mut listed: Vec<PathBuf> = vec![dir.join("evaluation.json"), dir.join("run.json")];
    for a in run["artifacts"].as_array().unwrap() {
        let path = dir.join(a["path"].as_str().unwrap());
        let bytes = std::fs::read(&path).unwrap();
        assert_eq!(
            a["sha256"],
            mcpres::json::canonical::sha256_hex(&bytes),
            "{}",
            path.display()
        );
        listed.push(path);
    }
    let mut files = walk(dir);
    files.sort();
    listed.sort();
    assert_eq!(
        files,
        listed,
        "{}: files not named by run.json",
        dir.display()
    );
    for file in files {
        assert_eq!(credential(&file), None, "{}", file.display());
        let text = std::fs::read_to_string(&file).unwrap();
        assert!(
            !support::jwt_like(&text),
            "a JWT-like string in {}",
            file.display()
        );
    }
}

/// Credential material in a file: the runner's own scan (which does not take
/// a `WWW-Authenticate` challenge in a transcript for a bearer credential).
#[cfg(feature = "server")]
fn credential(file: &Path) -> Option<(String, &'static str)> {
    mcpres::produce::oauth::artifact_credential(&read_json(file))
}

/// Without the runner (the offline validator build): the validator's scan,
/// on the documents that hold no transcript.
#[cfg(not(feature = "server"))]
fn credential(file: &Path) -> Option<(String, &'static str)> {
    let transcript = file.components().any(|c| c.as_os_str() == "artifacts");
    (!transcript)
        .then(|| mcpres::validate::oauth::credential_material(&read_json(file), String::new()))
        .flatten()
}

#[test]
fn the_committed_oauth_evaluations_validate_with_exactly_their_recorded_findings() {
    for (name, python_sdk) in [("reference", false), ("python-sdk", true)] {
        let dir = bundle(name);
        assert_intact(&dir);
        let run = read_json(&dir.join("run.json"));
        let evaluation = read_json(&dir.join("evaluation.json"));
        let rows = if python_sdk {
            oauth_expect::PYTHON_SDK.to_vec()
        } else {
            reference_rows(&run)
        };
        oauth_expect::assert_verdicts(&run, &rows, name);
        let partial = !run["notImplemented"].as_array().unwrap().is_empty();
        let expected = oauth_expect::expected_findings(&evaluation, &rows, partial);
        let (code, report) = validate(&dir.join("evaluation.json"));
        assert_eq!(
            code,
            if expected.is_empty() { 0 } else { 1 },
            "{name}: {report}"
        );
        assert_eq!(oauth_expect::findings_of(&report), expected, "{name}");
        // The fixture's cases always make the derived result INCOMPLETE.
        assert_eq!(evaluation["result"], "INCOMPLETE", "{name}");
        assert_eq!(evaluation["fixture"]["externalNetworkRequests"], 0);
    }
    // Which subject is which.
    let name = |b: &str| read_json(&bundle(b).join("evaluation.json"))["subject"]["name"].clone();
    assert_eq!(name("python-sdk"), "mcpres-py-oauth");
    assert_eq!(name("reference"), "mcpres-reference-server");
}

/// The reference Python validator (`oauth` mode) on `evaluation`; `None`
/// when its kit is not configured.
fn reference_python(evaluation: &Path) -> Option<Value> {
    let script = std::env::var_os("MCPRES_REFERENCE_PY_VALIDATOR").map(PathBuf::from)?;
    let corpus = support::reference_corpus_dir()?.join("v0.2.0");
    let python = std::env::var("MCPRES_REFERENCE_PY").unwrap_or_else(|_| "python3".into());
    let out = std::process::Command::new(python)
        .arg(script)
        .arg("oauth")
        .arg(evaluation)
        .arg("--schemas")
        .arg(corpus.join("schemas"))
        .arg("--profiles")
        .arg(corpus.join("profiles"))
        .output()
        .expect("run the reference Python validator");
    Some(serde_json::from_slice(&out.stdout).expect("the reference validator prints JSON"))
}

fn kit_configured() -> bool {
    let ok = std::env::var_os("MCPRES_REFERENCE_PY_VALIDATOR").is_some()
        && support::reference_corpus_dir().is_some();
    if !ok {
        eprintln!(
            "reference Python validator not configured (MCPRES_REFERENCE_PY_VALIDATOR and MCPRES_REFERENCE_CORPUS): cross-check skipped"
        );
    }
    ok
}

/// The verdict (valid?) and the first diagnostic agree: the reference
/// validator stops at the first problem in its order, `mcpres validate`
/// reports every finding and names the same first one.
fn assert_agree(evaluation: &Path) {
    let (code, report) = validate(evaluation);
    let r = reference_python(evaluation).expect("kit configured");
    assert_eq!(
        r["valid"],
        Value::Bool(code == 0),
        "{}: mcpres {report}\nreference {r}",
        evaluation.display()
    );
    assert_eq!(
        r["diagnostics"],
        report["diagnostics"],
        "{}",
        evaluation.display()
    );
    assert_eq!(r["schemaErrors"], serde_json::json!([]), "{r}");
}

#[test]
fn the_reference_python_validator_agrees_on_the_committed_oauth_evaluations() {
    if !kit_configured() {
        return;
    }
    for name in ["reference", "python-sdk"] {
        assert_agree(&bundle(name).join("evaluation.json"));
    }
}

#[cfg(feature = "server")]
#[test]
fn the_reference_python_validator_agrees_on_a_fresh_reference_subject_evaluation() {
    if !kit_configured() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("eval");
    let exe = support::exe();
    let o = support::mcpres(&[
        "oauth".as_ref(),
        "run".as_ref(),
        "-o".as_ref(),
        out.as_os_str(),
        "--".as_ref(),
        exe.as_os_str(),
        "serve".as_ref(),
        "--transport".as_ref(),
        "http".as_ref(),
        "--port".as_ref(),
        "{port}".as_ref(),
        "--auth".as_ref(),
        "loopback".as_ref(),
        "--auth-issuer".as_ref(),
        "{issuer}".as_ref(),
        "--auth-scope".as_ref(),
        "{scope}".as_ref(),
    ]);
    assert!(out.join("evaluation.json").is_file(), "{}", output_text(&o));
    assert_agree(&out.join("evaluation.json"));
}

/// Copy the files of `from` into a new directory `to`.
fn copy_tree(from: &Path, to: &Path) {
    for file in walk(from) {
        let rel = file.strip_prefix(from).unwrap();
        let dest = to.join(rel);
        std::fs::create_dir_all(dest.parent().unwrap()).unwrap();
        std::fs::copy(&file, &dest).unwrap();
    }
}

fn codes(report: &Value) -> Vec<String> {
    oauth_expect::findings_of(report)
        .into_iter()
        .map(|(code, _)| code)
        .collect()
}

#[test]
fn an_oauth_evaluation_directory_validates_as_its_evaluation_plus_its_files() {
    for name in ["reference", "python-sdk"] {
        let dir = bundle(name);
        let (file_code, file_report) = validate(&dir.join("evaluation.json"));
        let (dir_code, dir_report) = validate(&dir);
        assert_eq!(dir_code, file_code, "{name}: {dir_report}");
        assert_eq!(
            oauth_expect::findings_of(&dir_report),
            oauth_expect::findings_of(&file_report),
            "{name}"
        );
    }

    let tmp = tempfile::tempdir().unwrap();
    let fresh = |n: &str| {
        let d = tmp.path().join(n);
        copy_tree(&bundle("reference"), &d);
        d
    };
    // A changed artifact byte.
    let d = fresh("changed");
    let run = read_json(&d.join("run.json"));
    let first = run["artifacts"][0]["path"].as_str().unwrap().to_string();
    let mut bytes = std::fs::read(d.join(&first)).unwrap();
    let last = bytes.len() - 2;
    bytes[last] ^= 1;
    std::fs::write(d.join(&first), bytes).unwrap();
    let (code, report) = validate(&d);
    assert_eq!(code, 1, "{report}");
    assert_eq!(
        codes(&report),
        ["MCP_RES_ARTIFACT_DIGEST_MISMATCH"],
        "{report}"
    );
    // A file nothing lists.
    let d = fresh("unlisted");
    std::fs::write(d.join("artifacts/extra.json"), b"{}").unwrap();
    let (code, report) = validate(&d);
    assert_eq!(code, 1, "{report}");
    assert_eq!(codes(&report), ["MCP_RES_ARTIFACT_UNLISTED"], "{report}");
    // A cited artifact removed from the list and the disk.
    let d = fresh("unresolved");
    let mut run = read_json(&d.join("run.json"));
    let cleanup_sha = read_json(&d.join("evaluation.json"))["cleanup"]["observationSha256"]
        .as_str()
        .unwrap()
        .to_string();
    let list = run["artifacts"].as_array_mut().unwrap();
    let at = list
        .iter()
        .position(|a| a["sha256"] == cleanup_sha.as_str())
        .expect("the cleanup artifact is listed");
    let gone = list.remove(at);
    std::fs::remove_file(d.join(gone["path"].as_str().unwrap())).unwrap();
    std::fs::write(d.join("run.json"), serde_json::to_vec(&run).unwrap()).unwrap();
    let (code, report) = validate(&d);
    assert_eq!(code, 1, "{report}");
    assert_eq!(
        codes(&report),
        ["MCP_RES_PROFILE_ARTIFACT_UNRESOLVED"],
        "{report}"
    );
    assert_eq!(
        oauth_expect::findings_of(&report)[0].1,
        "/cleanup/observationSha256"
    );
    // A run record that is not an OAuth run record.
    let d = fresh("record");
    std::fs::write(d.join("run.json"), b"{\"schemaVersion\":\"x\"}").unwrap();
    let (code, report) = validate(&d);
    assert_eq!(code, 1, "{report}");
    assert_eq!(codes(&report), ["MCP_RES_PROFILE_RUN_INVALID"], "{report}");
}
