//! The one redactor through the binary (issue 31 item 2, issue 32 item 5):
//! a subject that echoes the operator's `--env API_TOKEN=...` value (in its
//! `serverInfo.name` and on stderr, split across two stderr writes, base64
//! and percent-encoded) leaves it in no file of a `mcpres profile run` or
//! `mcpres field run` output directory, in any of those forms, and the
//! directory still validates; its twin, which echoes nothing, gets the same
//! verdicts.
//!
//! The subjects are `tests/subjects/profile_subject.py` behind a small
//! wrapper the test writes: the wrapper writes the leaks on stderr and
//! renames the subject before running it unchanged.

mod support;

use std::collections::hash_map::RandomState;
use std::hash::{BuildHasher, Hasher};
use std::path::{Path, PathBuf};
use std::process::{Output, Stdio};
use std::sync::OnceLock;
use std::time::Duration;

use base64::Engine as _;
use serde_json::Value;

const WATCHDOG: Duration = Duration::from_secs(180);
const CHECKS: &str = "released-message-framing,stdout-protocol-purity";
const REVISION: &str = "2025-11-25";

/// The wrapper: `leaky.py MODE SUBJECT ARGS...`. MODE `none` echoes
/// nothing; `name` puts the token in `serverInfo.name` and on stderr;
/// `split` writes it on stderr in two writes; `encoded` writes its base64
/// (standard, padded, at offset 0; URL-safe, unpadded, at offset 2) and
/// percent-encoded (every byte, upper-case hex; some bytes, lower-case)
/// forms; `all` does all of these, and writes the synthetic bearer it was
/// given (`MCPRES_TEST_TOKEN`, Streamable HTTP) split and in base64.
const WRAPPER: &str = r#"
import base64, os, sys, time
mode, subject = sys.argv[1], sys.argv[2]
tok = os.environ.get("API_TOKEN", "")
err = sys.stderr
def say(text):
    err.write(text)
    err.flush()
if mode in ("name", "all"):
    say("starting with API_TOKEN=" + tok + "\n")
if mode in ("split", "all"):
    say("auth: " + tok[:11])
    time.sleep(0.05)
    say(tok[11:] + " (split)\n")
if mode in ("encoded", "all"):
    say("b64 " + base64.b64encode(tok.encode()).decode() + "\n")
    say("b64url " + base64.urlsafe_b64encode(("xy" + tok).encode()).decode().rstrip("=") + "\n")
    say("pct " + "".join(c if c.isalnum() else "%%%02X" % ord(c) for c in tok) + "\n")
    say("pct " + tok.replace("-", "%2d").replace(".", "%2e") + "\n")
bearer = os.environ.get("MCPRES_TEST_TOKEN", "")
if bearer and mode == "all":
    say("bearer-leak " + bearer[:10])
    time.sleep(0.05)
    say(bearer[10:] + "\n")
    say("bearer-b64 " + base64.b64encode(bearer.encode()).decode() + "\n")
source = open(subject).read()
if mode in ("name", "all"):
    for name in ('"mcpres-profile-subject"', '"mcpres-http-subject"'):
        source = source.replace(name, repr("leaky-" + tok))
sys.argv = [subject] + sys.argv[3:]
exec(compile(source, subject, "exec"), {"__name__": "__main__", "__file__": subject})
"#;

fn python3() -> &'static str {
    static PYTHON: OnceLock<String> = OnceLock::new();
    PYTHON.get_or_init(|| {
        let out = std::process::Command::new("python3")
            .args(["-c", "import sys; print(sys.executable)"])
            .output()
            .expect("python3 on PATH");
        let path = support::text(&out.stdout).trim().to_string();
        assert!(out.status.success() && Path::new(&path).is_absolute());
        path
    })
}

fn subject() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/subjects/profile_subject.py")
}

/// A fresh token with `-`, `_` and `.` (so that its percent-encoded forms
/// differ from it), never the same twice.
fn token() -> String {
    let mut words = [0u64; 3];
    for (i, w) in words.iter_mut().enumerate() {
        let mut h = RandomState::new().build_hasher();
        h.write_usize(i);
        *w = h.finish();
    }
    format!(
        "tk-{:016x}_{:08x}.{:012x}",
        words[0],
        words[1] as u32,
        words[2] & 0xffff_ffff_ffff
    )
}

/// Every spelling of `tok` (or a half of it) that must not be stored: raw,
/// each half of the split, base64 in both alphabets at every alignment (the
/// characters that depend on the token alone), and percent-encoded.
fn forbidden(tok: &str) -> Vec<String> {
    let mut out = vec![
        tok.to_string(),
        tok[..11].to_string(),
        tok[11..].to_string(),
    ];
    for shift in 0..3usize {
        let mut bytes = vec![b'x'; shift];
        bytes.extend_from_slice(tok.as_bytes());
        let first = (8 * shift).div_ceil(6);
        let last = 8 * (shift + tok.len()) / 6;
        for engine in [
            &base64::engine::general_purpose::STANDARD_NO_PAD,
            &base64::engine::general_purpose::URL_SAFE_NO_PAD,
        ] {
            out.push(engine.encode(&bytes)[first..last].to_string());
        }
    }
    let pct: String = tok
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_string()
            } else {
                format!("%{:02X}", c as u32)
            }
        })
        .collect();
    out.push(pct.to_lowercase());
    out.push(tok.replace('-', "%2d").replace('.', "%2e"));
    out.push(pct);
    out
}

/// Every file below `dir`, with its bytes.
fn files(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                todo.push(p);
            } else {
                let bytes = std::fs::read(&p).unwrap();
                out.push((p, bytes));
            }
        }
    }
    out
}

/// Panics naming the file and the form when any form of `tok` is stored
/// below `dir`; returns how many files were read.
fn assert_nowhere(dir: &Path, tok: &str) -> usize {
    let forms = forbidden(tok);
    let all = files(dir);
    for (path, bytes) in &all {
        let text = String::from_utf8_lossy(bytes);
        for (i, f) in forms.iter().enumerate() {
            assert!(
                !text.contains(f.as_str()),
                "form {i} of the token is stored in {}",
                path.display()
            );
        }
    }
    all.len()
}

fn write_wrapper(dir: &Path) -> PathBuf {
    let path = dir.join("leaky.py");
    std::fs::write(&path, WRAPPER).unwrap();
    path
}

/// `mcpres profile run stdio-transport` over the wrapper in `mode`.
fn profile_run(dir: &Path, mode: &str, tok: &str) -> (PathBuf, Output) {
    let wrapper = write_wrapper(dir);
    let out = dir.join(format!("out-{mode}"));
    let child = support::command()
        .args(["profile", "run", "stdio-transport", "-o"])
        .arg(&out)
        .args(["--revision", REVISION, "--checks", CHECKS])
        .arg("--env")
        .arg(format!("API_TOKEN={tok}"))
        // A short ordinary value, redacted as a whole word: in what was
        // recorded, never in a check's name.
        .args(["--env", "MODE=framing"])
        .arg("--")
        .arg(python3())
        .arg(&wrapper)
        .arg(mode)
        .arg(subject())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start mcpres profile run");
    let o = support::output_within(child, WATCHDOG, "mcpres profile run");
    (out, o)
}

/// `mcpres validate DIR`: its exit code and output.
fn validate(dir: &Path) -> Output {
    support::mcpres(&["validate".as_ref(), dir.as_os_str()])
}

/// (check id, verdict) of run.json.
fn verdicts(out: &Path) -> Vec<(String, String)> {
    let run = support::read_json(&out.join("run.json"));
    run["checks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["id"].as_str().unwrap().to_string(),
                c["verdict"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

/// The artifacts' stderr chunks of a run, joined (what the subject said on
/// stderr, as stored).
fn stored_stderr(out: &Path) -> String {
    fn walk(v: &Value, acc: &mut String) {
        match v {
            Value::Object(m) => {
                if m.get("stream").and_then(Value::as_str) == Some("stderr")
                    && let Some(t) = m.get("text").and_then(Value::as_str)
                {
                    acc.push_str(t);
                }
                m.values().for_each(|x| walk(x, acc));
            }
            Value::Array(a) => a.iter().for_each(|x| walk(x, acc)),
            _ => {}
        }
    }
    let mut acc = String::new();
    for (path, bytes) in files(&out.join("artifacts")) {
        if path.extension().is_some_and(|e| e == "json") {
            walk(&serde_json::from_slice(&bytes).unwrap(), &mut acc);
        }
    }
    acc
}

#[test]
fn a_profile_run_stores_no_form_of_an_echoed_env_value_and_its_twin_is_unchanged() {
    let tmp = tempfile::tempdir().unwrap();
    let tok = token();
    let (twin, o) = profile_run(tmp.path(), "none", &tok);
    assert_eq!(o.status.code(), Some(0), "{}", support::output_text(&o));
    let twin_verdicts = verdicts(&twin);
    assert!(
        twin_verdicts.iter().all(|(_, v)| v == "PASS"),
        "{twin_verdicts:?}"
    );
    assert!(assert_nowhere(&twin, &tok) > 3);
    let twin_eval = support::read_json(&twin.join("evaluation.json"));
    assert_eq!(twin_eval["subject"]["name"], "mcpres-profile-subject");
    let v = validate(&twin);
    assert_eq!(v.status.code(), Some(0), "{}", support::output_text(&v));
    assert_eq!(
        support::read_json(&twin.join("artifacts/released-message-framing/positive.json"))["check"],
        "released-message-framing"
    );

    for mode in ["name", "split", "encoded"] {
        let (out, o) = profile_run(tmp.path(), mode, &tok);
        assert_eq!(
            o.status.code(),
            Some(0),
            "{mode}: {}",
            support::output_text(&o)
        );
        assert_eq!(verdicts(&out), twin_verdicts, "{mode}");
        assert!(assert_nowhere(&out, &tok) > 3, "{mode}");
        let v = validate(&out);
        assert_eq!(
            v.status.code(),
            Some(0),
            "{mode}: {}",
            support::output_text(&v)
        );
        // The leak was there to redact: its place is marked.
        let stderr = stored_stderr(&out);
        assert!(
            stderr.contains("[REDACTED:environment-value]"),
            "{mode}: {stderr}"
        );
        if mode == "name" {
            let e = support::read_json(&out.join("evaluation.json"));
            assert_eq!(e["subject"]["name"], "leaky-[REDACTED:environment-value]");
        }
        // Nothing is printed on the console either.
        assert!(
            !support::output_text(&o).contains(&tok),
            "{mode}: the console"
        );
    }
}

#[test]
fn a_field_run_stores_no_form_of_an_echoed_env_value_in_its_legs_or_matrix() {
    let tmp = tempfile::tempdir().unwrap();
    let tok = token();
    let wrapper = write_wrapper(tmp.path());
    let leg = |id: &str, mode: &str| {
        format!(
            r#"
[[leg]]
id = "{id}"
profile = "stdio-transport"
revision = "{REVISION}"
transport = "stdio"
command = ["{}", "{}", "{mode}", "{}"]
checks = ["released-message-framing", "stdout-protocol-purity"]
env = {{ API_TOKEN = "{tok}" }}
"#,
            python3(),
            wrapper.display(),
            subject().display()
        )
    };
    let toml = format!("{}{}", leg("leaky", "all"), leg("twin", "none"));
    let matrix = tmp.path().join("matrix.toml");
    std::fs::write(&matrix, toml).unwrap();
    let out = tmp.path().join("out");
    let child = support::command()
        .args(["field", "run"])
        .arg(&matrix)
        .arg("-o")
        .arg(&out)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start mcpres field run");
    let o = support::output_within(child, WATCHDOG, "mcpres field run");
    assert_eq!(o.status.code(), Some(0), "{}", support::output_text(&o));
    assert!(assert_nowhere(&out, &tok) > 6);
    let m = support::read_json(&out.join("matrix.json"));
    let results: Vec<(&str, &str)> = m["legs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| (l["id"].as_str().unwrap(), l["result"].as_str().unwrap()))
        .collect();
    assert_eq!(results, [("leaky", "PASS"), ("twin", "PASS")]);
    assert_eq!(
        verdicts(&out.join("legs/leaky")),
        verdicts(&out.join("legs/twin"))
    );
    assert!(stored_stderr(&out.join("legs/leaky")).contains("[REDACTED:environment-value]"));
    let v = validate(&out);
    assert_eq!(v.status.code(), Some(0), "{}", support::output_text(&v));
}

/// A resource server that logs every bearer token it is given on stderr,
/// in two writes, and then its base64: `mcpres serve --auth-defect
/// log-token` behind a filter that rewrites each of its `bearer token: T`
/// lines so. Signals are forwarded to the server.
const SPLITTING_LOGGER: &str = r#"
import base64, signal, subprocess, sys, time
child = subprocess.Popen(sys.argv[1:], stderr=subprocess.PIPE)
for s in (signal.SIGTERM, signal.SIGINT):
    signal.signal(s, lambda sig, frame: child.send_signal(sig))
err = sys.stderr.buffer
marker = b"bearer token: "
for line in child.stderr:
    if marker in line:
        tok = line.split(marker, 1)[1].strip()
        half = len(tok) // 2
        err.write(b"token " + tok[:half])
        err.flush()
        time.sleep(0.02)
        err.write(tok[half:] + b"\n")
        err.write(b"b64 " + base64.b64encode(tok) + b"\n")
        err.flush()
    else:
        err.write(line)
        err.flush()
sys.exit(child.wait())
"#;

/// `mcpres oauth run` on the reference subject behind the logger, with
/// `--auth-defect log-token` or without.
fn oauth_run(dir: &Path, log_token: bool) -> (PathBuf, Output) {
    let logger = dir.join("logger.py");
    std::fs::write(&logger, SPLITTING_LOGGER).unwrap();
    let out = dir.join(if log_token { "logging" } else { "twin" });
    let mut cmd = support::command();
    cmd.args(["oauth", "run", "-o"])
        .arg(&out)
        .arg("--")
        .arg(python3())
        .arg(&logger)
        .arg(support::exe())
        .args([
            "serve",
            "--transport",
            "http",
            "--port",
            "{port}",
            "--auth",
            "loopback",
            "--auth-issuer",
            "{issuer}",
            "--auth-scope",
            "{scope}",
        ]);
    if log_token {
        cmd.args(["--auth-defect", "log-token"]);
    }
    let child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start mcpres oauth run");
    let o = support::output_within(child, WATCHDOG, "mcpres oauth run");
    (out, o)
}

/// The base64 of a JWT's usual first bytes (`eyJhbGci`, `{"alg"` encoded),
/// at every alignment: a base64-encoded token.
fn base64_jwt_like(text: &str) -> bool {
    let marker = b"eyJhbGciOi";
    (0..3usize).any(|shift| {
        let mut bytes = vec![b'x'; shift];
        bytes.extend_from_slice(marker);
        let first = (8 * shift).div_ceil(6);
        let last = 8 * (shift + marker.len()) / 6;
        let core = &base64::engine::general_purpose::STANDARD_NO_PAD.encode(&bytes)[first..last];
        text.contains(core)
    })
}

#[test]
fn an_oauth_run_whose_subject_logs_tokens_split_and_in_base64_stores_none_and_fails_storage() {
    let tmp = tempfile::tempdir().unwrap();
    let (twin, o) = oauth_run(tmp.path(), false);
    assert_eq!(o.status.code(), Some(0), "{}", support::output_text(&o));
    let (out, o) = oauth_run(tmp.path(), true);
    assert_ne!(o.status.code(), Some(0), "{}", support::output_text(&o));
    // Only the storage check fails; the rest is the twin's.
    let (got, want) = (verdicts(&out), verdicts(&twin));
    assert_eq!(got.len(), want.len());
    for ((id, v), (twin_id, twin_v)) in got.iter().zip(&want) {
        assert_eq!(id, twin_id);
        if id == "token-storage-omission" {
            assert_eq!((v.as_str(), twin_v.as_str()), ("FAIL", "PASS"));
        } else {
            assert_eq!(v, twin_v, "{id}");
        }
    }
    let positive = support::read_json(&out.join("artifacts/token-storage-omission/positive.json"));
    assert_eq!(
        positive["observedReasonCode"], "MCP_RES_OAUTH_TOKEN_STORED",
        "{positive}"
    );
    // Nothing of a token is stored, in any form, and the evaluation says so
    // from a scan of what was stored.
    for dir in [&out, &twin] {
        for (path, bytes) in files(dir) {
            let text = String::from_utf8_lossy(&bytes);
            assert!(!support::jwt_like(&text), "{}", path.display());
            assert!(!base64_jwt_like(&text), "{}", path.display());
            let doc: Value = serde_json::from_slice(&bytes).unwrap();
            assert_eq!(
                mcpres::produce::oauth::artifact_credential(&doc),
                None,
                "{}",
                path.display()
            );
        }
        let e = support::read_json(&dir.join("evaluation.json"));
        assert_eq!(e["privacy"]["tokenMaterialPersisted"], false);
        assert_eq!(e["privacy"]["evidenceContainsCredentialMaterial"], false);
    }
    // Where the subject logged, each token is one mark: the two halves of a
    // split write and the base64 line.
    let stderr = stored_stderr(&out);
    let split: Vec<&str> = stderr.lines().filter(|l| l.starts_with("token ")).collect();
    assert!(!split.is_empty(), "{stderr}");
    assert!(
        split.iter().all(|l| *l == "token <synthetic-bearer>"),
        "{split:?}"
    );
    let b64: Vec<&str> = stderr.lines().filter(|l| l.starts_with("b64 ")).collect();
    assert_eq!(b64.len(), split.len());
    assert!(
        b64.iter()
            .all(|l| l.contains("<synthetic-bearer>") && l.len() < 32),
        "{b64:?}"
    );
}

#[test]
fn a_streamable_http_run_stores_no_form_of_an_echoed_env_value_or_bearer() {
    let tmp = tempfile::tempdir().unwrap();
    let tok = token();
    let wrapper = write_wrapper(tmp.path());
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/subjects/http_subject.py");
    let run = |mode: &str| {
        let out = tmp.path().join(format!("http-{mode}"));
        let child = support::command()
            .args(["profile", "run", "streamable-http", "-o"])
            .arg(&out)
            .args([
                "--revision",
                REVISION,
                "--http",
                "http://127.0.0.1:0/mcp",
                "--bearer-env",
                "MCPRES_TEST_TOKEN",
                "--checks",
                "authenticated-loopback-http,request-response-binding",
            ])
            .arg("--env")
            .arg(format!("API_TOKEN={tok}"))
            .arg("--")
            .arg(python3())
            .arg(&wrapper)
            .arg(mode)
            .arg(&script)
            .args(["--port", "{port}", "--bearer-env", "MCPRES_TEST_TOKEN"])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start mcpres profile run");
        let o = support::output_within(child, WATCHDOG, "mcpres profile run streamable-http");
        assert_eq!(
            o.status.code(),
            Some(0),
            "{mode}: {}",
            support::output_text(&o)
        );
        out
    };
    let twin = run("none");
    let out = run("all");
    assert_eq!(verdicts(&out), verdicts(&twin));
    assert!(verdicts(&twin).iter().all(|(_, v)| v == "PASS"));
    for dir in [&out, &twin] {
        assert!(assert_nowhere(dir, &tok) > 3);
        let v = validate(dir);
        assert_eq!(v.status.code(), Some(0), "{}", support::output_text(&v));
    }
    let e = support::read_json(&out.join("evaluation.json"));
    assert_eq!(e["subject"]["name"], "leaky-[REDACTED:environment-value]");
    // The synthetic bearer, written in two pieces and in base64, is one
    // mark each time.
    let stderr = stored_stderr(&out);
    let split: Vec<&str> = stderr
        .lines()
        .filter(|l| l.starts_with("bearer-leak "))
        .collect();
    assert!(!split.is_empty(), "{stderr}");
    assert!(
        split.iter().all(|l| *l == "bearer-leak <synthetic-bearer>"),
        "{split:?}"
    );
    let b64: Vec<&str> = stderr
        .lines()
        .filter(|l| l.starts_with("bearer-b64 "))
        .collect();
    assert_eq!(b64.len(), split.len());
    assert!(
        b64.iter()
            .all(|l| l.contains("<synthetic-bearer>") && l.len() < 40),
        "{b64:?}"
    );
}
