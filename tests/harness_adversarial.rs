//! Adversarial subjects: small stdio servers in
//! tests/subjects/liars/ that lie in one way each, run through the real binary
//! under `--scenario generic --trials 2`. Each test checks that the bundle
//! claims no more than the run observed; `honest.py`, the same code without
//! the lie, must still pass. Every failure message names the unearned claim
//! and prints the statement, the observations, the operations and the tail of
//! the run's output.
#![cfg(feature = "server")]

mod support;

use std::cell::RefCell;
use std::path::{Path, PathBuf};
use std::process::{Output, Stdio};
use std::time::Duration;

use serde_json::Value;

use support::*;

/// Hard limit on one `mcpres` invocation; the harness has its own budgets,
/// this only keeps a hung run from hanging the test suite.
const WATCHDOG: Duration = Duration::from_secs(120);

/// Run `mcpres ARGS` with a watchdog that kills it after [`WATCHDOG`].
fn mcpres_watched(args: &[&str]) -> Output {
    let child = command()
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn mcpres");
    output_within(child, WATCHDOG, &format!("mcpres {args:?}"))
}

fn liar(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/subjects/liars")
        .join(name)
}

/// The last few kilobytes of a command's stdout and stderr.
fn tail(o: &Output) -> String {
    let keep = |b: &[u8]| {
        let s = text(b);
        let start = s.len().saturating_sub(3000);
        let start = (start..=s.len()).find(|&i| s.is_char_boundary(i)).unwrap();
        s[start..].to_string()
    };
    format!(
        "exit: {:?}\nstdout (tail):\n{}\nstderr (tail):\n{}",
        o.status.code(),
        keep(&o.stdout),
        keep(&o.stderr)
    )
}

/// One finished `mcpres run` over a subject, with its bundle read back, and
/// the list of claims found unearned so far.
struct Run {
    _tmp: tempfile::TempDir,
    dir: PathBuf,
    out: Output,
    /// `{evidence, statement}` as written (Null members when missing).
    doc: Value,
    /// `mcpres validate DIR`.
    validate: Output,
    /// What the subject does wrong, for the messages.
    lie: &'static str,
    unearned: RefCell<Vec<String>>,
}

/// `mcpres run --scenario generic --trials 2 [extra] -o DIR -- python3 SUBJECT [args]`,
/// then `mcpres validate DIR`.
fn run_subject(name: &str, lie: &'static str, extra: &[&str], subject_args: &[&str]) -> Run {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("bundle");
    let subject = liar(name);
    let mut args = vec!["run", "--scenario", "generic", "--trials", "2"];
    args.extend_from_slice(extra);
    args.extend_from_slice(&["-o", dir.to_str().unwrap(), "--", "python3"]);
    args.push(subject.to_str().unwrap());
    args.extend_from_slice(subject_args);
    let out = mcpres_watched(&args);
    let read = |file: &str| {
        let p = dir.join(file);
        if p.is_file() {
            read_json(&p)
        } else {
            Value::Null
        }
    };
    let doc = serde_json::json!({
        "evidence": read("evidence-envelope.json"),
        "statement": read("conformance-statement.json"),
    });
    let validate = mcpres_watched(&["validate", dir.to_str().unwrap()]);
    Run {
        _tmp: tmp,
        dir,
        out,
        doc,
        validate,
        lie,
        unearned: RefCell::new(Vec::new()),
    }
}

impl Run {
    fn result(&self) -> &Value {
        &self.doc["statement"]["result"]
    }

    fn evidence_class(&self) -> &Value {
        &self.doc["statement"]["evidenceClass"]
    }

    fn descriptor(&self, field: &str) -> &Value {
        &self.doc["evidence"]["scenario"]["descriptor"][field]
    }

    fn observations(&self, kind: &str) -> Vec<&Value> {
        let all = self.doc["evidence"]["observations"].as_array();
        all.into_iter()
            .flatten()
            .filter(|o| o["type"] == kind)
            .collect()
    }

    fn operations(&self, kind: &str) -> Vec<&Value> {
        let all = self.doc["evidence"]["operations"].as_array();
        all.into_iter()
            .flatten()
            .filter(|o| o["kind"] == kind)
            .collect()
    }

    fn outcomes(&self, kind: &str) -> Vec<String> {
        self.observations(kind)
            .iter()
            .map(|o| o["outcome"].as_str().unwrap_or("?").to_string())
            .collect()
    }

    /// Record `claim` as unearned unless `earned`.
    fn require(&self, earned: bool, claim: impl Into<String>) {
        if !earned {
            self.unearned.borrow_mut().push(claim.into());
        }
    }

    /// Everything a failure message needs: statement, class, observation
    /// and operation outcomes, the validator's verdict and the run's output.
    fn context(&self) -> String {
        let mut s = format!(
            "bundle: {}\nstatement.result: {}\nevidenceClass: {}\n",
            self.dir.display(),
            self.result(),
            self.evidence_class()
        );
        let obs = self.doc["evidence"]["observations"].as_array();
        for o in obs.into_iter().flatten() {
            s += &format!(
                "observation {} {} outcome={} reason={}\n",
                o["id"], o["type"], o["outcome"], o["reasonCode"]
            );
        }
        let ops = self.doc["evidence"]["operations"].as_array();
        for o in ops.into_iter().flatten() {
            s += &format!(
                "operation {} {} outcome={}\n",
                o["operationId"], o["kind"], o["outcome"]
            );
        }
        format!(
            "{s}--- mcpres run\n{}\n--- mcpres validate\n{}",
            tail(&self.out),
            tail(&self.validate)
        )
    }

    /// Fail the test with every unearned claim found, if any.
    fn verdict(self) {
        let unearned = self.unearned.borrow();
        if !unearned.is_empty() {
            panic!(
                "subject that {}: {} unearned claim(s):\n  - {}\n{}",
                self.lie,
                unearned.len(),
                unearned.join("\n  - "),
                self.context()
            );
        }
    }

    /// What every liar must get: a statement, a non-zero exit, no PASS, and
    /// a bundle `mcpres validate` judges valid.
    fn require_not_passed(&self) {
        self.require(!self.doc["statement"].is_null(), "no statement was written");
        self.require(
            self.out.status.code() != Some(0),
            "`mcpres run` exited 0 (success)",
        );
        self.require(self.result() != "PASS", "statement.result is PASS");
        self.require_valid_record();
    }

    /// The statement is FAIL (a PASS is already reported by
    /// [`Run::require_not_passed`]; this catches any other non-FAIL value).
    fn require_fail(&self) {
        self.require(
            self.result() == "FAIL" || self.result() == "PASS",
            format!("statement.result is {}, not FAIL", self.result()),
        );
    }

    /// `mcpres validate` accepts the bundle (0) or refuses it only as
    /// vacuous (1, MCP_RES_VACUOUS_NEGATIVE_CONTROL); never unusable (2).
    fn require_valid_record(&self) {
        let code = self.validate.status.code();
        let vacuous = output_text(&self.validate).contains("MCP_RES_VACUOUS_NEGATIVE_CONTROL");
        self.require(
            code == Some(0) || (code == Some(1) && vacuous),
            format!(
                "the bundle is not a valid record: `mcpres validate` exit {code:?}{}",
                if code == Some(1) {
                    " for a reason other than MCP_RES_VACUOUS_NEGATIVE_CONTROL"
                } else {
                    ""
                }
            ),
        );
    }

    /// The run FAILed and at least one negative control is a failed
    /// FAULT_CASE: the subject's acceptance of bad input was noticed.
    fn require_rejection_failed(&self) {
        self.require_fail();
        let failed = self
            .operations("FAULT_CASE")
            .iter()
            .filter(|o| o["outcome"] == "FAIL")
            .count();
        let credited = self.operations("NEGATIVE_CONTROL").len();
        self.require(
            failed > 0,
            format!(
                "no negative control failed ({credited} credited as NEGATIVE_CONTROL, no failed \
                 FAULT_CASE): the controls never put bad input to the subject"
            ),
        );
    }
}

#[test]
fn accept_everything_fails_the_rejection_controls() {
    let r = run_subject(
        "accept_everything.py",
        "accepts every line, malformed or not, with a success result",
        &[],
        &[],
    );
    r.require_not_passed();
    r.require_rejection_failed();
    r.verdict();
}

#[test]
fn by_id_answers_fail_the_rejection_controls() {
    let r = run_subject(
        "by_id.py",
        "answers by request id only, without reading the request",
        &[],
        &[],
    );
    r.require_not_passed();
    r.require_rejection_failed();
    r.verdict();
}

#[test]
fn a_replayed_transcript_fails_its_clean_controls() {
    let artifact = Path::new(env!("CARGO_MANIFEST_DIR")).join("Cargo.toml");
    let r = run_subject(
        "replay.py",
        "never reads stdin and replays a canned transcript (run with an unrelated \
         --subject-artifact)",
        &["--subject-artifact", artifact.to_str().unwrap()],
        &[],
    );
    r.require_not_passed();
    r.require_fail();
    let clean = r.operations("CLEAN_CONTROL");
    r.require(!clean.is_empty(), "no CLEAN_CONTROL operation");
    for op in clean {
        r.require(
            op["outcome"] == "FAIL",
            format!(
                "clean control {} is {}: answers not bound to the requests that caused them",
                op["operationId"], op["outcome"]
            ),
        );
    }
    r.verdict();
}

#[test]
fn a_crash_after_initialize_is_recorded_with_its_exit_status() {
    let r = run_subject(
        "crash.py",
        "exits with status 3 on the first request after initialize",
        &[],
        &[],
    );
    r.require_not_passed();
    r.require_fail();
    let recorded = walk(&r.dir).iter().any(|p| {
        let name = p.file_name().unwrap().to_string_lossy().to_string();
        name.contains("lifecycle")
            && text(&std::fs::read(p).unwrap())
                .lines()
                .filter_map(|l| serde_json::from_str::<Value>(l).ok())
                .any(|v| has_member(&v, "exitCode", &Value::from(3)))
    });
    r.require(
        recorded,
        "no lifecycle artifact records exitCode 3: the crash is not observed",
    );
    r.verdict();
}

/// Whether `v` holds, at any depth, an object member `key` equal to `want`.
fn has_member(v: &Value, key: &str, want: &Value) -> bool {
    match v {
        Value::Object(m) => m
            .iter()
            .any(|(k, x)| (k == key && x == want) || has_member(x, key, want)),
        Value::Array(a) => a.iter().any(|x| has_member(x, key, want)),
        _ => false,
    }
}

/// Pids of live processes whose command line contains `marker`.
fn processes_with(marker: &str) -> Vec<i32> {
    let mut pids = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = e.file_name().to_string_lossy().parse::<i32>() else {
            continue;
        };
        if let Ok(cmd) = std::fs::read(e.path().join("cmdline"))
            && text(&cmd).contains(marker)
        {
            pids.push(pid);
        }
    }
    pids
}

#[test]
fn a_child_that_leaves_the_process_group_fails_cleanup() {
    let tmp = tempfile::tempdir().unwrap();
    let marker = format!(
        "mcpres-liar-leak-{}",
        tmp.path().file_name().unwrap().to_string_lossy()
    );
    let r = run_subject(
        "leak.py",
        "leaves a child running in a new session (setsid)",
        &[],
        &[&marker],
    );
    // Whatever the bundle says, leave the machine clean before judging it.
    let left = processes_with(&marker);
    for &pid in &left {
        if let Some(pid) = rustix::process::Pid::from_raw(pid) {
            let _ = rustix::process::kill_process(pid, rustix::process::Signal::KILL);
        }
    }
    r.require_not_passed();
    r.require(
        r.outcomes("CLEANUP_CHECK") == ["FAIL"],
        format!(
            "CLEANUP_CHECK is {:?}, not FAIL",
            r.outcomes("CLEANUP_CHECK")
        ),
    );
    r.require(
        left.is_empty(),
        format!(
            "the run returned with {} leaked process(es) {left:?} (marker {marker}) alive: \
             the subject's descendants were not tracked (the test killed them)",
            left.len()
        ),
    );
    r.verdict();
}

#[test]
fn a_temporary_file_left_behind_is_observed() {
    let r = run_subject(
        "leave_file.py",
        "writes a temporary file on tools/call and never deletes it",
        &[],
        &[],
    );
    // Remove what the subject left in the shared temp dir (a fixed harness
    // may hand it a private one instead).
    let mut left = Vec::new();
    for e in std::fs::read_dir(std::env::temp_dir()).unwrap().flatten() {
        if e.file_name()
            .to_string_lossy()
            .starts_with("mcpres-liar-left-")
        {
            left.push(e.path());
            let _ = std::fs::remove_file(e.path());
        }
    }
    r.require_not_passed();
    let listed = r
        .observations("FILESYSTEM_EFFECT")
        .iter()
        .any(|o| o.to_string().contains("mcpres-liar-left-"));
    r.require(
        r.outcomes("CLEANUP_CHECK") == ["FAIL"] || listed,
        format!(
            "CLEANUP_CHECK is {:?} and no FILESYSTEM_EFFECT observation lists the file \
             (files found and removed by the test: {left:?})",
            r.outcomes("CLEANUP_CHECK")
        ),
    );
    r.require(
        r.descriptor("sideEffectModel") != "READ_ONLY",
        "scenario descriptor sideEffectModel is READ_ONLY",
    );
    r.verdict();
}

/// The values hide_secret.py derives (SHA-256 of fixed labels).
fn hidden_secrets() -> (String, String) {
    use sha2::Digest;
    let hex = |label: &[u8]| {
        sha2::Sha256::digest(label)
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect::<String>()
    };
    let key = format!("AKIA{}", &hex(b"mcpres-liar-aws-key").to_uppercase()[..16]);
    let token = hex(b"mcpres-liar-bearer-token")[..24].to_string();
    (key, token)
}

#[test]
fn secrets_behind_json_escapes_are_redacted() {
    let (key, token) = hidden_secrets();
    let r = run_subject(
        "hide_secret.py",
        "hides an AWS key and a bearer token behind JSON escapes",
        &[],
        &[],
    );
    // Apart from the secrets, an honest echo server: the statement need
    // not fail, but the bundle must be a valid record.
    r.require(!r.doc["statement"].is_null(), "no statement was written");
    r.require_valid_record();
    for p in walk(&r.dir) {
        let bytes = std::fs::read(&p).unwrap();
        let raw = text(&bytes);
        let decoded = decoded_strings(&bytes);
        for (what, secret) in [("AWS key", &key), ("bearer token", &token)] {
            let name = p.strip_prefix(&r.dir).unwrap().display();
            r.require(
                !raw.contains(secret.as_str()),
                format!("the {what} is in the raw bytes of {name}"),
            );
            r.require(
                !decoded.iter().any(|s| s.contains(secret.as_str())),
                format!("the {what} is in a decoded JSON string of {name}"),
            );
        }
    }
    let scans: Vec<_> = r
        .observations("PRIVACY_SCAN")
        .iter()
        .map(|o| format!("{}/{}", o["outcome"], o["reasonCode"]))
        .collect();
    r.require(
        scans == [r#""PASS"/"SECRETS_REDACTED""#],
        format!("PRIVACY_SCAN is {scans:?}, not PASS/SECRETS_REDACTED"),
    );
    r.verdict();
}

#[test]
fn a_server_without_tools_does_not_get_a_tools_call_claim() {
    let r = run_subject(
        "no_tools.py",
        "lists no tools, so no tools/call was ever made",
        &[],
        &[],
    );
    r.require_not_passed();
    r.require(
        r.result() == "FAIL" || r.descriptor("operationClass") != "tools/call",
        format!(
            "statement.result {} with scenario descriptor operationClass {}",
            r.result(),
            r.descriptor("operationClass")
        ),
    );
    r.verdict();
}

#[test]
fn frames_that_are_not_jsonrpc_fail_the_protocol_exchange() {
    let r = run_subject(
        "not_jsonrpc.py",
        "answers with JSON objects and text lines that are not JSON-RPC",
        &[],
        &[],
    );
    r.require_not_passed();
    let outcomes = r.outcomes("PROTOCOL_EXCHANGE");
    r.require(
        !outcomes.is_empty() && outcomes.iter().all(|o| o == "FAIL"),
        format!("PROTOCOL_EXCHANGE outcomes are {outcomes:?}, not all FAIL"),
    );
    r.require(
        r.evidence_class() != "GENUINE_RUNTIME",
        "evidenceClass GENUINE_RUNTIME without a JSON-RPC exchange",
    );
    // No frame was a JSON-RPC message: the wire surface observed none.
    let wire = r.doc["evidence"]["coverage"]["surfaces"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|s| s["surface"] == "MCP_WIRE_MESSAGES")
        .map(|s| s["status"].clone());
    r.require(
        wire.as_ref().is_some_and(|s| s != "INSTRUMENTED"),
        format!("MCP_WIRE_MESSAGES is {wire:?} although no JSON-RPC message was seen"),
    );
    r.verdict();
}

#[test]
fn answers_that_differ_between_trials_are_not_repeated_stable() {
    let r = run_subject(
        "drifting.py",
        "answers correctly but differently in every process",
        &[],
        &[],
    );
    let summary = &r.doc["evidence"]["trialSummary"];
    r.require(
        summary["classification"] == "FLAKY",
        format!(
            "classification is {}, not FLAKY, although the subject's answers differed",
            summary["classification"]
        ),
    );
    r.require(
        summary["distinctOutcomeHashes"]
            .as_array()
            .is_some_and(|h| h.len() == 2),
        format!(
            "outcome hashes {} do not tell the two trials apart",
            summary["distinctOutcomeHashes"]
        ),
    );
    r.verdict();
}

#[test]
fn a_frame_above_the_declared_input_limit_fails() {
    let r = run_subject(
        "big_frame.py",
        "sends a 5 MB frame, above the declared 4 MiB input limit",
        &[],
        &[],
    );
    r.require_not_passed();
    r.require_fail();
    let named = walk(&r.dir).iter().any(|p| {
        let name = p.to_string_lossy();
        name.ends_with(".json")
            && name.contains("oracle")
            && text(&std::fs::read(p).unwrap()).contains("LIMIT")
    });
    r.require(
        named,
        "no oracle artifact names the exceeded limit (no \"LIMIT\" in any *oracle*.json)",
    );
    r.verdict();
}

#[test]
fn the_honest_subject_passes() {
    let r = run_subject("honest.py", "is honest (the control)", &[], &[]);
    r.require(
        r.out.status.code() == Some(0),
        "`mcpres run` did not exit 0",
    );
    r.require(
        r.result() == "PASS",
        format!("statement.result is {}, not PASS", r.result()),
    );
    r.require(
        r.evidence_class() == "GENUINE_RUNTIME",
        format!(
            "evidenceClass is {}, not GENUINE_RUNTIME",
            r.evidence_class()
        ),
    );
    r.require(
        r.validate.status.code() == Some(0),
        "`mcpres validate` did not accept the bundle",
    );
    r.verdict();
}
