//! Issue 16, items 2, 6, 7 and 8: every input of `unpack`, `sign`,
//! `trust-policy`, `pack`, `digest` and `official import --results` is
//! bounded. Each attack runs the real binary under a 4 GiB address-space
//! limit (with two worker threads and two malloc arenas, so the reservation
//! does not grow with the machine's core count) and a watchdog, so a
//! regression fails instead of exhausting the machine.
#![cfg(unix)]

mod support;

use std::ffi::OsStr;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use serde_json::{Value, json};

use mcpres::json::canonical;
use support::Run;

/// Longest any one command here may run before the watchdog kills it.
const WATCHDOG: Duration = Duration::from_secs(180);

/// Run `mcpres ARGS` with its address space capped at 4 GiB (`ulimit -v`)
/// and a watchdog; panics when it had to be killed.
fn bounded<S: AsRef<OsStr>>(args: &[S]) -> Run {
    let child = std::process::Command::new("sh")
        .arg("-c")
        .arg("ulimit -v 4194304 && exec \"$0\" \"$@\"")
        .arg(support::exe())
        .args(args)
        .env("NO_COLOR", "1")
        .env("RAYON_NUM_THREADS", "2")
        .env("MALLOC_ARENA_MAX", "2")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn mcpres");
    let run = Run::from(support::output_within(child, WATCHDOG, "mcpres"));
    assert!(!run.stderr.contains("panicked"), "{}", run.stderr);
    run
}

fn repo(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(rel)
}

fn valid_bundle() -> Value {
    mcpres::json::parse_default(&fs::read(repo("testdata/hostile/valid-bundle.json")).unwrap())
        .unwrap()
}

fn write_canonical(path: &Path, v: &Value) {
    let mut bytes = canonical::to_vec(v).unwrap();
    bytes.push(b'\n');
    fs::write(path, bytes).unwrap();
}

fn assert_refused(r: &Run, words: &[&str]) {
    assert_eq!(r.code, 2, "stdout:\n{}\nstderr:\n{}", r.stdout, r.stderr);
    for w in words {
        assert!(r.stderr.contains(w), "{w:?} not in:\n{}", r.stderr);
    }
}

// ------------------------------------------------------------ item 2: unpack

/// A single-file bundle whose manifest lists `entries` more paths, all bound
/// to one observation of about `pad` bytes.
fn amplifying_bundle(path: &Path, entries: usize, pad: usize) {
    let mut doc = valid_bundle();
    let mut obs = doc["evidence"]["observations"][0].clone();
    // Strings are limited to 1,048,576 UTF-16 units: pad with several.
    let chunk = 1_000_000;
    let pads: Vec<Value> = (0..pad.div_ceil(chunk))
        .map(|i| Value::from("a".repeat(chunk.min(pad - i * chunk))))
        .collect();
    obs["padding"] = Value::Array(pads);
    let bytes = canonical::to_vec_without_key(&obs, "observationSha256").unwrap();
    let sha = canonical::sha256_hex(&bytes);
    doc["evidence"]["observations"]
        .as_array_mut()
        .unwrap()
        .push(obs);
    let list = doc["integrity"]["artifacts"].as_array_mut().unwrap();
    for i in 0..entries {
        list.push(json!({
            "path": format!("observations/copy-{i}.json"),
            "mediaType": "application/vnd.mcp-res.observation+json",
            "bytes": bytes.len(),
            "sha256": sha,
        }));
    }
    write_canonical(path, &doc);
}

#[test]
fn unpack_refuses_many_entries_bound_to_one_large_observation() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("amplify.json");
    // 240 entries (within the 256-artifact limit) of one 5 MB observation ask
    // for 1.2 GB: over the default 1 GiB total.
    amplifying_bundle(&file, 240, 5_000_000);
    assert!(fs::metadata(&file).unwrap().len() < 16 << 20);
    let out = tmp.path().join("out");
    let r = bounded(&[
        OsStr::new("unpack"),
        file.as_os_str(),
        OsStr::new("-o"),
        out.as_os_str(),
    ]);
    assert_refused(&r, &["MCP_RES_INPUT_INVALID", "--max-total-bytes"]);
    assert!(!out.exists(), "nothing is written");
    // A lower --max-total-bytes refuses a small bundle the same way.
    let small = tmp.path().join("small.json");
    amplifying_bundle(&small, 20, 2_000);
    let r = bounded(&[
        OsStr::new("unpack"),
        small.as_os_str(),
        OsStr::new("-o"),
        out.as_os_str(),
        OsStr::new("--max-total-bytes"),
        OsStr::new("30000"),
    ]);
    assert_refused(&r, &["more than the 30000-byte limit (--max-total-bytes)"]);
    assert!(!out.exists());
    // Within the limits it unpacks, and validates.
    let r = bounded(&[
        OsStr::new("unpack"),
        small.as_os_str(),
        OsStr::new("-o"),
        out.as_os_str(),
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(
        fs::read_dir(out.join("observations")).unwrap().count(),
        6 + 20
    );
}

#[test]
fn unpack_refuses_more_artifacts_than_the_schema_allows() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("many.json");
    amplifying_bundle(&file, 300, 10);
    let out = tmp.path().join("out");
    let r = bounded(&[
        OsStr::new("unpack"),
        file.as_os_str(),
        OsStr::new("-o"),
        out.as_os_str(),
    ]);
    assert_refused(&r, &["lists 308 artifacts; at most 256"]);
    assert!(!out.exists());
}

#[test]
fn unpack_refuses_an_artifact_over_the_per_artifact_limit() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("one.json");
    amplifying_bundle(&file, 1, 5_000);
    let out = tmp.path().join("out");
    let r = bounded(&[
        OsStr::new("unpack"),
        file.as_os_str(),
        OsStr::new("-o"),
        out.as_os_str(),
        OsStr::new("--max-artifact-bytes"),
        OsStr::new("4000"),
    ]);
    assert_refused(
        &r,
        &["over the 4000-byte artifact limit (--max-artifact-bytes)"],
    );
    assert!(!out.exists());
}

// ------------------------------------------------------ item 6: small inputs

fn keygen(dir: &Path) -> (PathBuf, PathBuf) {
    let base = dir.join("signer");
    let r = bounded(&[OsStr::new("keygen"), OsStr::new("--out"), base.as_os_str()]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    (dir.join("signer.key"), dir.join("signer.pub"))
}

fn sign_args<'a>(key: &'a Path, bundle: &'a Path, out: &'a Path) -> Vec<&'a OsStr> {
    vec![
        OsStr::new("sign"),
        OsStr::new("--key"),
        key.as_os_str(),
        OsStr::new("--identity"),
        OsStr::new("ci@example.org"),
        OsStr::new("--trust-policy-id"),
        OsStr::new("policy"),
        bundle.as_os_str(),
        OsStr::new("-o"),
        out.as_os_str(),
    ]
}

#[test]
fn sign_refuses_an_endless_or_symlinked_key() {
    let tmp = tempfile::tempdir().unwrap();
    let (key, _) = keygen(tmp.path());
    let bundle = repo("testdata/hostile/valid-bundle.json");
    let out = tmp.path().join("signed.json");

    let r = bounded(&sign_args(Path::new("/dev/zero"), &bundle, &out));
    assert_refused(&r, &["--key", "not a regular file"]);

    let link = tmp.path().join("link.key");
    std::os::unix::fs::symlink(&key, &link).unwrap();
    let r = bounded(&sign_args(&link, &bundle, &out));
    assert_refused(&r, &["--key", "symbolic link"]);

    let big = tmp.path().join("big.key");
    fs::write(&big, vec![b'A'; 100_000]).unwrap();
    let r = bounded(&sign_args(&big, &bundle, &out));
    assert_refused(&r, &["--key", "over the 16384-byte limit"]);
    assert!(!out.exists());

    // The real key still signs.
    let r = bounded(&sign_args(&key, &bundle, &out));
    assert_eq!(r.code, 0, "{}", r.stderr);
}

#[test]
fn sign_refuses_an_endless_or_symlinked_inclusion_proof() {
    let tmp = tempfile::tempdir().unwrap();
    let (key, _) = keygen(tmp.path());
    let bundle = repo("testdata/hostile/valid-bundle.json");
    let out = tmp.path().join("signed.json");
    let proof = tmp.path().join("proof.bin");
    fs::write(&proof, b"proof").unwrap();
    let link = tmp.path().join("proof.link");
    std::os::unix::fs::symlink(&proof, &link).unwrap();
    for (input, why) in [
        (Path::new("/dev/zero"), "not a regular file"),
        (link.as_path(), "symbolic link"),
    ] {
        let mut args = sign_args(&key, &bundle, &out);
        args.extend([
            OsStr::new("--transparency-log"),
            OsStr::new("log"),
            OsStr::new("--transparency-entry"),
            OsStr::new("entry"),
            OsStr::new("--inclusion-proof"),
            input.as_os_str(),
        ]);
        let r = bounded(&args);
        assert_refused(&r, &["--inclusion-proof", why]);
        assert!(!out.exists());
    }
}

#[test]
fn trust_policy_add_signer_refuses_an_endless_or_symlinked_key() {
    let tmp = tempfile::tempdir().unwrap();
    let (_, public) = keygen(tmp.path());
    let policy = tmp.path().join("policy.json");
    let r = bounded(&[
        OsStr::new("trust-policy"),
        OsStr::new("init"),
        OsStr::new("--id"),
        OsStr::new("policy"),
        OsStr::new("--valid-from"),
        OsStr::new("2026-01-01T00:00:00Z"),
        OsStr::new("--valid-until"),
        OsStr::new("2027-01-01T00:00:00Z"),
        OsStr::new("-o"),
        policy.as_os_str(),
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let before = fs::read(&policy).unwrap();
    let link = tmp.path().join("link.pub");
    std::os::unix::fs::symlink(&public, &link).unwrap();
    for (key, why) in [
        (Path::new("/dev/zero"), "not a regular file"),
        (link.as_path(), "symbolic link"),
    ] {
        let r = bounded(&[
            OsStr::new("trust-policy"),
            OsStr::new("add-signer"),
            policy.as_os_str(),
            OsStr::new("--key"),
            key.as_os_str(),
            OsStr::new("--identity"),
            OsStr::new("ci@example.org"),
        ]);
        assert_refused(&r, &["--key", why]);
        assert_eq!(fs::read(&policy).unwrap(), before, "policy unchanged");
    }
}

// ----------------------------------------------------- item 7: --timeout

/// A bundle directory that takes far longer than a second to hash: sixteen
/// sparse raw artifacts of 4 GiB each (the default per-artifact limit).
fn slow_dir(parent: &Path) -> Option<PathBuf> {
    let dir = parent.join("bundle");
    let r = bounded(&[
        OsStr::new("unpack"),
        repo("testdata/hostile/valid-bundle.json").as_os_str(),
        OsStr::new("-o"),
        dir.as_os_str(),
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    fs::create_dir(dir.join("raw")).unwrap();
    let manifest_path = dir.join("integrity-manifest.json");
    let mut manifest = mcpres::json::parse_default(&fs::read(&manifest_path).unwrap()).unwrap();
    let size: u64 = 4 << 30;
    for i in 0..16 {
        let path = format!("raw/big-{i}.bin");
        let f = fs::File::create(dir.join(&path)).unwrap();
        if let Err(e) = f.set_len(size) {
            eprintln!("SKIPPED: no 4 GiB sparse files here: {e}");
            return None;
        }
        manifest["artifacts"].as_array_mut().unwrap().push(json!({
            "path": path,
            "mediaType": "application/octet-stream",
            "bytes": size,
            "sha256": "0".repeat(64),
        }));
    }
    fs::write(&manifest_path, canonical::to_vec(&manifest).unwrap()).unwrap();
    Some(dir)
}

#[test]
fn pack_sign_and_digest_on_a_directory_stop_at_the_timeout() {
    let tmp = tempfile::tempdir().unwrap();
    let Some(dir) = slow_dir(tmp.path()) else {
        return;
    };
    let (key, _) = keygen(tmp.path());
    let out = tmp.path().join("out.json");
    let one = OsStr::new("1");
    let timeout = OsStr::new("--timeout");

    let r = bounded(&[
        OsStr::new("pack"),
        dir.as_os_str(),
        OsStr::new("-o"),
        out.as_os_str(),
        timeout,
        one,
    ]);
    assert_refused(
        &r,
        &["mcpres pack: MCP_RES_INPUT_INVALID: pack did not finish within 1 s (--timeout)"],
    );
    let r = bounded(&[
        OsStr::new("digest"),
        OsStr::new("--kind"),
        OsStr::new("bundle"),
        dir.as_os_str(),
        timeout,
        one,
    ]);
    assert_refused(
        &r,
        &["mcpres digest: MCP_RES_INPUT_INVALID: digest did not finish within 1 s (--timeout)"],
    );
    let mut args = sign_args(&key, &dir, &out);
    args.extend([timeout, one]);
    let r = bounded(&args);
    assert_refused(
        &r,
        &["mcpres sign: MCP_RES_INPUT_INVALID: sign did not finish within 1 s (--timeout)"],
    );
    assert!(!out.exists());
}

#[test]
fn pack_sign_and_digest_document_the_timeout() {
    for command in ["pack", "sign", "digest"] {
        let r = bounded(&[command, "--help"]);
        assert_eq!(r.code, 0, "{}", r.stderr);
        assert!(
            r.stdout.contains("--timeout <SECONDS>") && r.stdout.contains("[default: 900]"),
            "{command}: {}",
            r.stdout
        );
    }
}

// --------------------------------------------- item 8: official import --results

fn import_results(results: &Path, out: &Path) -> Run {
    bounded(&[
        OsStr::new("official"),
        OsStr::new("import"),
        OsStr::new("--results"),
        results.as_os_str(),
        OsStr::new("--package-version"),
        OsStr::new("0.1.16"),
        OsStr::new("--package-sha256"),
        OsStr::new(&"a".repeat(64)),
        OsStr::new("--repository-commit"),
        OsStr::new(&"b".repeat(40)),
        OsStr::new("--protocol-revision"),
        OsStr::new("2025-11-25"),
        OsStr::new("--requirement-set-sha256"),
        OsStr::new(&"c".repeat(64)),
        OsStr::new("--suite"),
        OsStr::new("active"),
        OsStr::new("--harness-exit-code"),
        OsStr::new("0"),
        OsStr::new("-o"),
        out.as_os_str(),
    ])
}

/// `count` scenario folders whose checks.json are hard links to one file of
/// about `size` bytes.
fn linked_results(parent: &Path, count: usize, size: usize) -> PathBuf {
    let results = parent.join("results");
    fs::create_dir(&results).unwrap();
    let original = parent.join("checks.json");
    let check = r#"{"id":"server-initialize","name":"x","description":"y","status":"SUCCESS","timestamp":"2026-01-01T00:00:00Z","details":{"pad":"PAD"}}"#;
    let pad = "p".repeat(size.saturating_sub(check.len() + 2));
    fs::write(&original, format!("[{}]", check.replace("PAD", &pad))).unwrap();
    for i in 0..count {
        let dir = results.join(format!("server-s{i}-2026-01-01T00-00-00-000Z"));
        fs::create_dir(&dir).unwrap();
        fs::hard_link(&original, dir.join("checks.json")).unwrap();
    }
    results
}

#[test]
fn official_import_bounds_the_total_size_of_result_files() {
    let tmp = tempfile::tempdir().unwrap();
    // 13 links to one 5.5 MB file: 71.5 MB, over the 64 MiB total.
    let results = linked_results(tmp.path(), 13, 5_500_000);
    let out = tmp.path().join("a.json");
    let r = import_results(&results, &out);
    assert_refused(
        &r,
        &[
            "MCP_RES_OFFICIAL_INPUT_INVALID",
            "more than 67108864 bytes together",
        ],
    );
    assert!(!out.exists());
}

#[test]
fn official_import_bounds_the_number_of_result_files() {
    let tmp = tempfile::tempdir().unwrap();
    let results = linked_results(tmp.path(), 1025, 200);
    let out = tmp.path().join("a.json");
    let r = import_results(&results, &out);
    assert_refused(
        &r,
        &[
            "MCP_RES_OFFICIAL_INPUT_INVALID",
            "more than 1024 checks.json files",
        ],
    );
    assert!(!out.exists());
}

#[test]
fn official_import_bounds_one_result_file() {
    let tmp = tempfile::tempdir().unwrap();
    let results = linked_results(tmp.path(), 1, 17 << 20);
    let out = tmp.path().join("a.json");
    let r = import_results(&results, &out);
    assert_refused(
        &r,
        &[
            "MCP_RES_OFFICIAL_INPUT_INVALID",
            "over the 16777216-byte limit for one result file",
        ],
    );
    assert!(!out.exists());
}
