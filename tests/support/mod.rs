//! What the integration tests share: running the real `mcpres` binary, finding
//! the reference corpus, loading and validating a bundle from disk, and small
//! file and port utilities. A test crate includes it with `mod support;`.
//!
//! `tests/server_support/` stays apart: it drives the reference server over
//! stdio and HTTP (a JSON-RPC client, process-group cleanup) and is needed by
//! the `server_*` tests only.
#![allow(dead_code)]

use std::ffi::OsStr;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output};
use std::time::{Duration, Instant};

use serde_json::Value;

use mcpres::json::Limits;

/// The `mcpres` binary cargo built for these tests.
pub fn exe() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_mcpres"))
}

/// A command for the `mcpres` binary, for tests that set the environment,
/// stdin or a watchdog themselves.
pub fn command() -> Command {
    Command::new(exe())
}

/// Run `mcpres ARGS` in the test's working directory and wait for it.
pub fn mcpres<S: AsRef<OsStr>>(args: &[S]) -> Output {
    command().args(args).output().expect("run mcpres")
}

/// Run `mcpres ARGS` with `dir` as its working directory and wait for it.
pub fn mcpres_in<S: AsRef<OsStr>>(dir: &Path, args: &[S]) -> Output {
    command()
        .args(args)
        .current_dir(dir)
        .output()
        .expect("run mcpres")
}

/// Wait for `child` (spawned with stdout and stderr piped) under a watchdog:
/// both pipes are drained while it runs, so a chatty child never blocks on a
/// full pipe; past `watchdog` it is killed and the test fails, naming `what`
/// and showing what it printed.
pub fn output_within(mut child: Child, watchdog: Duration, what: &str) -> Output {
    let drain = |pipe: Option<Box<dyn Read + Send>>| {
        std::thread::spawn(move || {
            let mut buf = Vec::new();
            if let Some(mut pipe) = pipe {
                let _ = pipe.read_to_end(&mut buf);
            }
            buf
        })
    };
    let stdout = drain(
        child
            .stdout
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    );
    let stderr = drain(
        child
            .stderr
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    );
    let start = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait for the child") {
            break status;
        }
        if start.elapsed() > watchdog {
            let _ = child.kill();
            let status = child.wait().expect("reap the killed child");
            let out = Output {
                status,
                stdout: stdout.join().expect("stdout reader"),
                stderr: stderr.join().expect("stderr reader"),
            };
            panic!(
                "{what} did not finish within {watchdog:?} and was killed\n{}",
                output_text(&out)
            );
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    Output {
        status,
        stdout: stdout.join().expect("stdout reader"),
        stderr: stderr.join().expect("stderr reader"),
    }
}

/// A finished run as text: the exit code (-1 when killed by a signal), stdout
/// and stderr.
#[derive(Debug, Clone)]
pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl From<Output> for Run {
    fn from(out: Output) -> Run {
        Run {
            code: out.status.code().unwrap_or(-1),
            stdout: text(&out.stdout),
            stderr: text(&out.stderr),
        }
    }
}

/// Environment variable naming the reference corpus directory.
pub const CORPUS_ENV: &str = "MCPRES_REFERENCE_CORPUS";

/// The reference kit's data (`reference-corpus/`): the directory in
/// `$MCPRES_REFERENCE_CORPUS`, else `../shared/reference-corpus` beside the
/// crate; `None` unless it holds `v0.2.0/`.
pub fn reference_corpus_dir() -> Option<PathBuf> {
    let candidate = match std::env::var_os(CORPUS_ENV) {
        Some(dir) => PathBuf::from(dir),
        None => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/reference-corpus"),
    };
    candidate.join("v0.2.0").is_dir().then_some(candidate)
}

pub fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// A finished command's stdout and stderr, for assertion messages.
pub fn output_text(o: &std::process::Output) -> String {
    format!("stdout:\n{}\nstderr:\n{}", text(&o.stdout), text(&o.stderr))
}

/// Load a bundle directory (no storage finding allowed) and validate it.
pub fn load(dir: &Path) -> (Value, mcpres::validate::Report) {
    let loaded = mcpres::bundle::load(dir, &Limits::default()).expect("bundle loads");
    assert!(
        loaded.storage_findings.is_empty(),
        "{:?}",
        loaded.storage_findings
    );
    let doc = loaded.doc.expect("bundle document");
    let report = mcpres::validate::validate_document(&doc, &Default::default());
    (doc, report)
}

pub fn read_json(path: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
}

/// A loopback port nothing listens on (the listener is closed on return).
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Every file below `dir`.
pub fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out
}

/// The coverage entry of surface `name` in a bundle document.
pub fn surface<'a>(doc: &'a Value, name: &str) -> &'a Value {
    doc["evidence"]["coverage"]["surfaces"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["surface"] == name)
        .unwrap()
}

/// Every string a file's bytes hold once JSON escapes are resolved, found
/// independently of the harness's own privacy scan: the strings (and keys) of
/// the whole text and of each line when they parse as JSON, every `"..."` run
/// anywhere (also inside non-JSON captures) that decodes as a JSON string, and
/// the same again inside every decoded string that holds a quote.
pub fn decoded_strings(bytes: &[u8]) -> Vec<String> {
    fn collect(v: &Value, out: &mut Vec<String>) {
        match v {
            Value::String(s) => out.push(s.clone()),
            Value::Array(a) => a.iter().for_each(|x| collect(x, out)),
            Value::Object(m) => m.iter().for_each(|(k, x)| {
                out.push(k.clone());
                collect(x, out)
            }),
            _ => {}
        }
    }
    fn literals(bytes: &[u8], out: &mut Vec<String>) {
        let mut i = 0;
        while i < bytes.len() {
            if bytes[i] != b'"' {
                i += 1;
                continue;
            }
            // A literal ends at the next unescaped quote on the same line; a
            // control byte means this quote opened none, so scanning resumes
            // right after it.
            let mut j = i + 1;
            while j < bytes.len() && bytes[j] != b'"' && bytes[j] >= 0x20 {
                j += if bytes[j] == b'\\' { 2 } else { 1 };
            }
            if j < bytes.len() && bytes[j] == b'"' {
                if let Ok(s) = serde_json::from_slice::<String>(&bytes[i..=j]) {
                    out.push(s);
                }
                i = j + 1;
            } else {
                i += 1;
            }
        }
    }
    let mut out = Vec::new();
    let s = text(bytes);
    for doc in std::iter::once(s.as_str()).chain(s.lines()) {
        if let Ok(v) = serde_json::from_str::<Value>(doc) {
            collect(&v, &mut out);
        }
    }
    literals(bytes, &mut out);
    let nested: Vec<String> = out
        .iter()
        .filter(|s| s.contains('"'))
        .flat_map(|s| decoded_strings(s.as_bytes()))
        .collect();
    out.extend(nested);
    out
}

/// The pids of the processes whose command line (arguments joined by
/// spaces) holds `marker` and ` serve ` (a subject marked with a seed no
/// other test uses).
pub fn marked_servers(marker: &str) -> Vec<u32> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<u32>().ok())
        else {
            continue;
        };
        let cmdline = std::fs::read(entry.path().join("cmdline")).unwrap_or_default();
        let text = String::from_utf8_lossy(&cmdline).replace('\0', " ");
        if text.contains(marker) && text.contains(" serve ") {
            found.push(pid);
        }
    }
    found
}

/// Clock ticks since boot now, in the unit of the start time in
/// `/proc/PID/stat` (USER_HZ, 100 on Linux).
pub fn boot_ticks() -> u64 {
    let up = std::fs::read_to_string("/proc/uptime").unwrap();
    let secs: f64 = up.split_whitespace().next().unwrap().parse().unwrap();
    (secs * 100.0) as u64
}

fn start_ticks(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name may hold spaces and parentheses: fields follow the
    // last ')'; the start time is field 22, the 20th after it.
    let rest = &stat[stat.rfind(')')? + 2..];
    rest.split_whitespace().nth(19)?.parse().ok()
}

#[cfg(feature = "server")]
/// Panics when something that already existed at `since` (a
/// [`boot_ticks`] reading taken before the stop) still listens on `port`.
/// Tests in one binary run in parallel and bind port 0, so a freed port can
/// be handed at once to a listener of this test process or of a process
/// started since; neither is a leak of the server that was stopped.
pub fn assert_port_released(port: u16, since: u64, what: &str) {
    if std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        return;
    }
    let me = std::process::id();
    let old: Vec<u32> = mcpres::produce::drive::proc::listener_owners(None, port)
        .into_iter()
        .filter(|&pid| pid != me && start_ticks(pid).is_some_and(|t| t < since))
        .collect();
    assert!(
        old.is_empty(),
        "{what}: port {port} still accepts connections, held by {old:?}"
    );
}

/// Whether `text` holds a piece of a JWT the fixture signs: its header
/// (`{"alg"...`, base64url `eyJhbGci`) or its claims (`{"iss"...`,
/// `eyJpc3Mi`: `Claims` serializes `iss` first), or another common JWT
/// header or claims start. Eight fixed characters: a random base64url value (a
/// token id, a code) holds one by chance about once in 10^13, where "eyJ"
/// alone turns up in about one of 6,000 random 43-character values.
pub fn jwt_like(text: &str) -> bool {
    [
        "eyJhbGci", "eyJpc3Mi", "eyJ0eXAi", "eyJraWQi", "eyJzdWIi", "eyJhdWQi",
    ]
    .iter()
    .any(|m| text.contains(m))
}

/// Pids of live processes whose command line contains `marker`.
pub fn alive_with(marker: &str) -> Vec<String> {
    let mut out = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if !name.bytes().all(|b| b.is_ascii_digit()) {
            continue;
        }
        let Ok(cmdline) = std::fs::read(e.path().join("cmdline")) else {
            continue;
        };
        let zombie = std::fs::read_to_string(e.path().join("stat")).is_ok_and(|s| {
            s.rsplit(')')
                .next()
                .is_some_and(|t| t.trim_start().starts_with('Z'))
        });
        if !zombie && String::from_utf8_lossy(&cmdline).contains(marker) {
            out.push(name);
        }
    }
    out
}

/// Kills whatever still carries the marker when the test ends, pass or fail.
pub struct KillMarked(pub String);

impl Drop for KillMarked {
    fn drop(&mut self) {
        for pid in alive_with(&self.0) {
            let _ = std::process::Command::new("kill")
                .args(["-9", &pid])
                .status();
        }
    }
}

/// Copy `dir` to `to` with every digest the directory lists recomputed (run.json's
/// artifact list and evaluation file, the evaluation's check digests and seal): only the
/// judge can then tell what the record gives.
pub fn reseal(dir: &Path, to: &Path) {
    copy(dir, to);
    let sha = |p: &Path| mcpres::json::canonical::sha256_hex(&std::fs::read(p).unwrap());
    let mut run = read_json(&to.join("run.json"));
    let mut eval = read_json(&to.join("evaluation.json"));
    for a in run["artifacts"].as_array_mut().unwrap() {
        let path = to.join(a["path"].as_str().unwrap());
        let digest = sha(&path);
        let bytes = std::fs::metadata(&path).unwrap().len();
        for c in eval["checks"].as_array_mut().unwrap() {
            for role in ["positive", "negativeControl"] {
                if c[role]["artifactSha256"] == a["sha256"] {
                    c[role]["artifactSha256"] = digest.clone().into();
                }
            }
        }
        a["sha256"] = digest.into();
        a["bytes"] = bytes.into();
    }
    mcpres::validate::profile::seal(&mut eval);
    std::fs::write(
        to.join("evaluation.json"),
        serde_json::to_vec_pretty(&eval).unwrap(),
    )
    .unwrap();
    run["evaluationFileSha256"] = sha(&to.join("evaluation.json")).into();
    std::fs::write(
        to.join("run.json"),
        serde_json::to_vec_pretty(&run).unwrap(),
    )
    .unwrap();
}

pub fn copy(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let target = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy(&e.path(), &target);
        } else {
            std::fs::copy(e.path(), target).unwrap();
        }
    }
}

/// The evaluation directory `out` an `mcpres profile run` (its output `o`) must have
/// written: run.json's (id, verdict, reason) of each check.
pub fn profile_verdicts(out: &Path, o: &Output) -> Vec<(String, String, String)> {
    assert!(
        out.join("run.json").is_file(),
        "no evaluation written: {}",
        output_text(o)
    );
    let run = read_json(&out.join("run.json"));
    run["checks"]
        .as_array()
        .expect("run.json lists its checks")
        .iter()
        .map(|c| {
            (
                c["id"].as_str().unwrap_or_default().to_string(),
                c["verdict"].as_str().unwrap_or_default().to_string(),
                c["reason"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect()
}
