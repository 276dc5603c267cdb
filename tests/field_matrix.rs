//! `mcpres field run` (spec/field.md): a matrix of legs against the reference
//! server and the profile test subject writes one evaluation directory per
//! leg and a matrix.json that `mcpres validate` accepts; a failing leg keeps
//! the matrix failing, a leg that cannot start is NOT_RUN and leaves it
//! incomplete; and edits of what was written are caught, each by its code.
//! Every matrix a test writes is validated in that test.

mod support;

use std::path::{Path, PathBuf};
use std::process::{Output, Stdio};
use std::time::Duration;

use serde_json::{Value, json};

const WATCHDOG: Duration = Duration::from_secs(240);

fn subject() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/subjects/profile_subject.py")
}

/// Write `toml` as `dir/matrix.toml` and run it into `dir/out`.
fn field_run(dir: &Path, toml: &str, env: &[(&str, &Path)]) -> (PathBuf, Output) {
    let matrix = dir.join("matrix.toml");
    std::fs::write(&matrix, toml).unwrap();
    let out = dir.join("out");
    let mut cmd = support::command();
    cmd.args(["field", "run"])
        .arg(&matrix)
        .arg("-o")
        .arg(&out)
        .args(["--jobs", "2"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (k, v) in env {
        cmd.env(k, v);
    }
    let child = cmd.spawn().expect("start mcpres field run");
    let o = support::output_within(child, WATCHDOG, "field run");
    (out, o)
}

/// `mcpres validate --format json DIR`: exit code, the finding codes and the
/// matrix result the validator derived.
fn validate(dir: &Path) -> (Option<i32>, Vec<String>, Value) {
    let o = support::mcpres(&[
        "validate".as_ref(),
        "--format".as_ref(),
        "json".as_ref(),
        dir.as_os_str(),
    ]);
    let report: Value = serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|_| panic!("{}", support::output_text(&o)));
    let codes = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["code"].as_str().unwrap().to_string())
        .collect();
    (o.status.code(), codes, report["fieldMatrixResult"].clone())
}

/// A copy of the matrix directory `from`, edited by `edit`, validated.
fn tampered(from: &Path, name: &str, edit: impl FnOnce(&Path)) -> (Option<i32>, Vec<String>) {
    let to = from.with_file_name(name);
    let status = std::process::Command::new("cp")
        .arg("-a")
        .arg(from)
        .arg(&to)
        .status()
        .unwrap();
    assert!(status.success());
    edit(&to);
    let (code, codes, _) = validate(&to);
    (code, codes)
}

fn edit_matrix(dir: &Path, edit: impl FnOnce(&mut Value)) {
    let path = dir.join("matrix.json");
    let mut doc = support::read_json(&path);
    edit(&mut doc);
    std::fs::write(&path, serde_json::to_vec(&doc).unwrap()).unwrap();
}

fn leg<'a>(matrix: &'a Value, id: &str) -> &'a Value {
    matrix["legs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|l| l["id"] == id)
        .unwrap_or_else(|| panic!("leg {id}"))
}

#[test]
fn reference_server_legs_on_both_revisions_pass_validate_and_resist_edits() {
    let tmp = tempfile::tempdir().unwrap();
    let toml = r#"
[[leg]]
id = "ref-stdio-2025"
profile = "stdio-transport"
revision = "2025-11-25"
transport = "stdio"
command = ["{mcpres}", "serve"]
checks = ["released-message-framing", "interruption", "process-exit"]

[[leg]]
id = "ref-revision-2026"
profile = "mcp-res/protocol-revision/v1"
revision = "2026-07-28"
transport = "stdio"
command = ["{mcpres}", "serve"]
checks = ["server-discover", "explicit-protocol-revision", "safe-integer-constraints"]
language = "OTHER"
runtime = "other"
"#;
    let (out, o) = field_run(tmp.path(), toml, &[]);
    assert_eq!(o.status.code(), Some(0), "{}", support::output_text(&o));
    let matrix = support::read_json(&out.join("matrix.json"));
    assert_eq!(matrix["schemaVersion"], "mcpres.field-matrix/1");
    assert_eq!(matrix["result"], "PASS");
    assert_eq!(
        matrix["summary"],
        json!({"legs": 2, "pass": 2, "fail": 0, "incomplete": 0, "notRun": 0})
    );
    // One evaluation directory per leg, nothing else.
    let mut dirs: Vec<String> = std::fs::read_dir(out.join("legs"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    dirs.sort();
    assert_eq!(dirs, ["ref-revision-2026", "ref-stdio-2025"]);
    let stdio = leg(&matrix, "ref-stdio-2025");
    let evaluation = support::read_json(&out.join("legs/ref-stdio-2025/evaluation.json"));
    assert_eq!(
        stdio["evaluation"]["evaluationSha256"],
        evaluation["evaluationSha256"]
    );
    assert_eq!(
        stdio["language"],
        evaluation["subject"]["implementationLanguage"]
    );
    assert_eq!(stdio["cleanPath"], json!({"held": 3, "total": 3}));
    assert_eq!(stdio["expectedFailure"], json!({"held": 3, "total": 3}));
    assert_eq!(stdio["wrongReasonControl"]["killed"], 3);
    assert_eq!(stdio["interruption"]["evaluated"], true);
    assert_eq!(stdio["cleanup"]["observed"], true);
    assert_eq!(stdio["os"]["platform"], "linux");
    let revision = leg(&matrix, "ref-revision-2026");
    assert_eq!(revision["protocolRevision"], "2026-07-28");
    // The protocol-revision profile has no interruption checks.
    assert_eq!(revision["interruption"]["evaluated"], false);
    assert_eq!(revision["declarationMismatches"], json!([]));
    let (code, codes, result) = validate(&out);
    assert_eq!((code, codes.as_slice()), (Some(0), &[][..]));
    assert_eq!(result, "PASS");

    // Edits, each caught by its own code.
    let (code, codes) = tampered(&out, "language", |d| {
        edit_matrix(d, |m| m["legs"][0]["language"] = json!("PYTHON"))
    });
    assert_eq!(code, Some(1));
    assert_eq!(codes, ["MCP_RES_FIELD_LEG_INCONSISTENT"]);
    let (code, codes) = tampered(&out, "deleted", |d| {
        std::fs::remove_dir_all(d.join("legs/ref-stdio-2025")).unwrap()
    });
    assert_eq!(code, Some(1));
    assert_eq!(codes, ["MCP_RES_FIELD_LEG_UNRESOLVED"]);
    let (code, codes) = tampered(&out, "schema", |d| {
        edit_matrix(d, |m| m["legs"][1]["cleanPath"]["extra"] = json!(1))
    });
    assert_eq!(code, Some(1));
    assert!(
        !codes.is_empty() && codes.iter().all(|c| c == "MCP_RES_FIELD_MATRIX_INVALID"),
        "{codes:?}"
    );
    // Two legs folded into one directory.
    let (code, codes) = tampered(&out, "folded", |d| {
        edit_matrix(d, |m| {
            m["legs"][1]["directory"] = json!("legs/ref-stdio-2025");
        })
    });
    assert_eq!(code, Some(1));
    assert!(
        codes.contains(&"MCP_RES_FIELD_AGGREGATE_COLLAPSED".to_string()),
        "{codes:?}"
    );
}

#[test]
fn a_broken_subject_keeps_its_leg_failing_and_the_matrix_failing() {
    let tmp = tempfile::tempdir().unwrap();
    // The leg declares PYTHON: the evaluation says so too (no mismatch); its
    // FAIL is the subject's, on the process-exit check (it stays after stdin
    // closes: the profile's requirement; an ignored SIGINT would only be
    // NOT_OBSERVED, as no MUST asks a server to exit on it).
    let toml = r#"
[[leg]]
id = "subject-stays-after-eof"
profile = "stdio-transport"
revision = "2026-07-28"
transport = "stdio"
command = ["python3", "${FIELD_SUBJECT}", "--break", "stay-after-eof"]
checks = ["released-message-framing", "process-exit"]
language = "PYTHON"
jobs = 1

[[leg]]
id = "wrong-digest"
profile = "stdio-transport"
revision = "2025-11-25"
transport = "stdio"
command = ["python3", "${FIELD_SUBJECT}"]
checks = ["released-message-framing"]
subject-sha256 = "0000000000000000000000000000000000000000000000000000000000000000"
"#;
    let (out, o) = field_run(tmp.path(), toml, &[("FIELD_SUBJECT", &subject())]);
    assert_eq!(o.status.code(), Some(1), "{}", support::output_text(&o));
    let matrix = support::read_json(&out.join("matrix.json"));
    assert_eq!(matrix["result"], "FAIL");
    let broken = leg(&matrix, "subject-stays-after-eof");
    assert_eq!(broken["result"], "FAIL");
    assert_eq!(broken["language"], "PYTHON");
    assert_eq!(broken["failedChecks"][0]["id"], "process-exit");
    assert_eq!(
        broken["interruption"]["checks"],
        json!([
            {"id": "interruption", "verdict": "NOT_EVALUATED"},
            {"id": "process-exit", "verdict": "FAIL"}
        ])
    );
    // A healthy subject under a wrong declared digest: FAIL by declaration.
    let declared = leg(&matrix, "wrong-digest");
    assert_eq!(declared["result"], "FAIL");
    assert_eq!(declared["failedChecks"], json!([]));
    assert_eq!(
        declared["declarationMismatches"][0]["field"],
        "subjectSha256"
    );
    let (code, codes, result) = validate(&out);
    assert_eq!((code, codes.as_slice()), (Some(0), &[][..]));
    assert_eq!(result, "FAIL");

    // An overall PASS over the failing legs is a collapsed aggregate.
    let (code, codes) = tampered(&out, "claims-pass", |d| {
        edit_matrix(d, |m| m["result"] = json!("PASS"))
    });
    assert_eq!(code, Some(1));
    assert_eq!(codes, ["MCP_RES_FIELD_AGGREGATE_COLLAPSED"]);
    // Relabelling the legs PASS as well: each leg contradicts its evaluation,
    // and the aggregate still follows from the evaluations.
    let (code, codes) = tampered(&out, "relabelled", |d| {
        edit_matrix(d, |m| {
            m["result"] = json!("PASS");
            m["summary"] = json!({"legs": 2, "pass": 2, "fail": 0, "incomplete": 0, "notRun": 0});
            for l in m["legs"].as_array_mut().unwrap() {
                l["result"] = json!("PASS");
            }
        })
    });
    assert_eq!(code, Some(1));
    assert_eq!(
        codes,
        [
            "MCP_RES_FIELD_LEG_INCONSISTENT",
            "MCP_RES_FIELD_LEG_INCONSISTENT",
            "MCP_RES_FIELD_AGGREGATE_COLLAPSED",
            "MCP_RES_FIELD_AGGREGATE_COLLAPSED"
        ]
    );
}

#[test]
fn a_leg_that_cannot_start_is_not_run_and_the_matrix_incomplete() {
    let tmp = tempfile::tempdir().unwrap();
    // A program that exists but cannot be executed (mode 644) is a leg that
    // cannot start, not a subject that fails (issue 40, item 6).
    let script = tmp.path().join("not-executable.sh");
    std::fs::write(&script, "#!/bin/sh\nexec true\n").unwrap();
    std::fs::set_permissions(&script, std::os::unix::fs::PermissionsExt::from_mode(0o644)).unwrap();
    let toml = r#"
[[leg]]
id = "ref"
profile = "stdio-transport"
revision = "2025-11-25"
transport = "stdio"
command = ["{mcpres}", "serve"]
checks = ["released-message-framing"]

[[leg]]
id = "unset-variable"
profile = "stdio-transport"
revision = "2025-11-25"
transport = "stdio"
command = ["${MCPRES_FIELD_TEST_NEVER_SET}", "serve"]

[[leg]]
id = "missing-program"
profile = "protocol-revision"
revision = "2026-07-28"
transport = "stdio"
command = ["./no-such-server", "--stdio"]

[[leg]]
id = "not-executable"
profile = "stdio-transport"
revision = "2025-11-25"
transport = "stdio"
command = ["./not-executable.sh"]
"#;
    let (out, o) = field_run(tmp.path(), toml, &[]);
    assert_eq!(o.status.code(), Some(1), "{}", support::output_text(&o));
    let stderr = support::text(&o.stderr);
    assert!(
        stderr.contains("leg 3/4: missing-program NOT_RUN"),
        "{stderr}"
    );
    let matrix = support::read_json(&out.join("matrix.json"));
    assert_eq!(matrix["result"], "INCOMPLETE");
    assert_eq!(
        matrix["summary"],
        json!({"legs": 4, "pass": 1, "fail": 0, "incomplete": 0, "notRun": 3})
    );
    let unset = leg(&matrix, "unset-variable");
    assert_eq!(unset["result"], "NOT_RUN");
    assert_eq!(unset["directory"], Value::Null);
    assert!(
        unset["notRunReason"]
            .as_str()
            .unwrap()
            .contains("MCPRES_FIELD_TEST_NEVER_SET is not set")
    );
    let missing = leg(&matrix, "missing-program");
    assert!(
        missing["notRunReason"]
            .as_str()
            .unwrap()
            .contains("no-such-server is not an existing file")
    );
    let not_executable = leg(&matrix, "not-executable");
    assert_eq!(not_executable["result"], "NOT_RUN");
    assert!(
        not_executable["notRunReason"]
            .as_str()
            .unwrap()
            .contains("not-executable.sh cannot be executed"),
        "{not_executable}"
    );
    // Only the leg that ran has a directory.
    assert!(out.join("legs/ref").is_dir());
    assert_eq!(std::fs::read_dir(out.join("legs")).unwrap().count(), 1);
    let (code, codes, result) = validate(&out);
    assert_eq!((code, codes.as_slice()), (Some(0), &[][..]));
    assert_eq!(result, "INCOMPLETE");

    // A leg that did not run still names its profile by the registry's digest.
    let (code, codes) = tampered(&out, "not-run-profile", |d| {
        edit_matrix(d, |m| {
            m["legs"][1]["profile"]["manifestSha256"] = json!("0".repeat(64));
        })
    });
    assert_eq!(code, Some(1));
    assert_eq!(codes, ["MCP_RES_FIELD_LEG_INCONSISTENT"]);
    // A directory for a leg that did not run belongs to no leg.
    let (code, codes) = tampered(&out, "stray", |d| {
        let status = std::process::Command::new("cp")
            .arg("-a")
            .arg(d.join("legs/ref"))
            .arg(d.join("legs/unset-variable"))
            .status()
            .unwrap();
        assert!(status.success());
    });
    assert_eq!(code, Some(1));
    assert_eq!(codes, ["MCP_RES_FIELD_AGGREGATE_COLLAPSED"]);
}

#[test]
fn an_interrupted_matrix_leaves_no_process_and_no_directory() {
    let tmp = tempfile::tempdir().unwrap();
    // A seed no other test uses marks the second leg's subjects.
    let seed = format!("{}", 800_000_000 + std::process::id());
    let toml = format!(
        r#"
[[leg]]
id = "first"
profile = "stdio-transport"
revision = "2025-11-25"
transport = "stdio"
command = ["{{mcpres}}", "serve"]
checks = ["released-message-framing"]

[[leg]]
id = "second"
profile = "stdio-transport"
revision = "2025-11-25"
transport = "stdio"
command = ["{{mcpres}}", "serve", "--seed", "{seed}"]
"#
    );
    let matrix = tmp.path().join("matrix.toml");
    std::fs::write(&matrix, toml).unwrap();
    let out = tmp.path().join("out");
    let mut child = support::command()
        .args(["field", "run"])
        .arg(&matrix)
        .arg("-o")
        .arg(&out)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // Interrupt once the first leg is written and the second one's subjects run.
    // (What was seen is kept: between two probes of the second leg there
    // is a moment with no subject at all.)
    let until = std::time::Instant::now() + Duration::from_secs(60);
    let mut second_running = false;
    while std::time::Instant::now() < until {
        second_running = !support::marked_servers(&seed).is_empty();
        if second_running && out.join("legs/first/run.json").exists() {
            break;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    assert!(
        out.join("legs/first/run.json").exists(),
        "the first leg was not written"
    );
    assert!(second_running, "the second leg did not start");
    rustix::process::kill_process(
        rustix::process::Pid::from_raw(child.id() as i32).unwrap(),
        rustix::process::Signal::INT,
    )
    .unwrap();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        assert!(
            std::time::Instant::now() < until,
            "the run did not stop after SIGINT"
        );
        std::thread::sleep(Duration::from_millis(10));
    };
    assert_eq!(status.code(), Some(130));
    assert!(
        !out.exists(),
        "the matrix directory, finished legs included, is removed"
    );
    std::thread::sleep(Duration::from_millis(200));
    assert_eq!(
        support::marked_servers(&seed),
        Vec::<u32>::new(),
        "subjects left running"
    );
}
