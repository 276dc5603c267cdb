//! Adversarial inputs against the real `mcpres` binary.
//!
//! Every case runs `mcpres validate --format json` (or another subcommand) as a
//! child process and checks the exit code, the JSON result object, the message
//! (reason, and line/column where the reader can give one) and that nothing
//! panicked. Small cases are committed under `testdata/hostile/` (their bytes
//! are defined in [`SMALL_CASES`]; `committed_cases_match_their_definitions`
//! keeps the two in step, and `cargo test --test hostile -- --ignored
//! regenerate` rewrites them). The big cases (16 MiB + 1 bytes, 250,001 values,
//! depth 10,000, a 1,048,577-unit string) are generated into a temporary
//! directory by the test and never committed.
//!
//! The bundle-directory cases unpack the committed valid bundle with
//! `mcpres unpack`, damage the directory, and expect mcpres' own
//! `MCP_RES_ARTIFACT_*` codes (exit 1) as the primary diagnostic.
//!
//! The last section feeds hostile *arguments* to the other commands (issue
//! 15): closed pipes, output paths that cannot be written, empty or
//! overlong identities, directories where files are expected, documents of
//! the wrong kind given as options, crafted file names.
//!
//! No timing is asserted: a watchdog only kills a child that hangs for
//! minutes, so a hang fails the test instead of stalling the suite.

use std::ffi::OsStr;
use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

const BIN: &str = env!("CARGO_BIN_EXE_mcpres");
const INPUT_INVALID: &str = "MCP_RES_INPUT_INVALID";
/// Hang protection only; this is not a performance bound.
const WATCHDOG: Duration = Duration::from_secs(300);

/// The committed valid single-file bundle (a copy of the reference kit's
/// `test-vectors/valid/reason-bound-negative.json`, Apache-2.0).
const VALID_BUNDLE: &str = "valid-bundle.json";

/// The committed small cases: file name and exact bytes.
const SMALL_CASES: &[(&str, &[u8])] = &[
    ("invalid-utf8.json", b"{\n  \"a\": \"\xff\"\n}\n"),
    ("invalid-utf8-overlong.json", b"{\"a\": \"\xc0\xaf\"}"),
    ("bom.json", b"\xef\xbb\xbf{}"),
    (
        "duplicate-key-deep.json",
        b"{\n  \"a\": {\n    \"b\": [\n      {\"c\": 1, \"d\": {\"e\": true, \"e\": false}}\n    ]\n  }\n}\n",
    ),
    ("lone-surrogate-key-high.json", b"{\"\\ud800\": 1}"),
    ("lone-surrogate-key-low.json", b"{\"ok\": 1,\n \"x\\udc00\": 2}"),
    ("lone-surrogate-value-high.json", b"{\"a\": \"\\ud83d\"}"),
    ("lone-surrogate-value-low.json", b"{\"a\": [\"ab\\udfff\"]}"),
    (
        "lone-surrogate-value-high-then-bmp.json",
        b"{\"a\": \"\\ud83d\\u0041\"}",
    ),
    ("unsafe-integer-2p53.json", b"{\"n\": 9007199254740992}"),
    ("unsafe-integer-neg-2p53.json", b"{\"n\": -9007199254740992}"),
    ("unsafe-integer-huge.json", b"[1, 123456789012345678901234567890]"),
    ("safe-integer-max.json", b"{\"n\": 9007199254740991}"),
    ("negative-zero.json", b"{\"n\": -0}"),
    ("fraction.json", b"{\"n\": 1.0}"),
    ("exponent.json", b"{\"n\": 1e2}"),
    ("exponent-signed.json", b"[0,\n -1E+2]"),
    ("trailing-garbage.json", b"{} x"),
    ("trailing-second-value.json", b"{}{}"),
    ("trailing-bracket.json", b"[1]]"),
    ("nul-trailing.json", b"{}\x00"),
    ("nul-leading.json", b"\x00{}"),
    ("nul-in-string.json", b"{\"a\": \"x\x00y\"}"),
    ("empty.json", b""),
    ("whitespace-only.json", b" \n\t\r\n"),
];

// ---------------------------------------------------------------- harness

fn hostile_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/hostile")
}

fn case(name: &str) -> PathBuf {
    hostile_dir().join(name)
}

struct Run {
    code: i32,
    stdout: String,
    stderr: String,
}

impl Run {
    /// The single JSON result object on stdout.
    fn json(&self) -> Value {
        let line = self.stdout.trim();
        assert!(
            !line.is_empty() && !line.contains('\n'),
            "expected one JSON line on stdout, got {:?}\nstderr: {}",
            self.stdout,
            self.stderr
        );
        serde_json::from_str(line).unwrap_or_else(|e| panic!("stdout is not JSON ({e}): {line}"))
    }
}

/// Run the real binary with a watchdog; never hangs the suite.
fn run<I, S>(args: I) -> Run
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    run_within(args, WATCHDOG)
}

/// [`run`] with another hang bound (never a performance assertion: the bound is
/// many times what a linear-time implementation needs in a debug build).
fn run_within<I, S>(args: I, watchdog: Duration) -> Run
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    let mut command = Command::new(BIN);
    command.args(args);
    run_command(command, watchdog)
}

/// Run a prepared command (the binary, or the binary under another user) with
/// a watchdog; checks that nothing panicked or was killed.
fn run_command(mut command: Command, watchdog: Duration) -> Run {
    let child = command
        .env("NO_COLOR", "1")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn mcpres");
    let out = support::output_within(child, watchdog, "mcpres");
    let status = out.status;
    let stdout = String::from_utf8(out.stdout).expect("stdout is UTF-8");
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(!stderr.contains("panicked"), "mcpres panicked:\n{stderr}");
    let code = status
        .code()
        .unwrap_or_else(|| panic!("mcpres was killed by a signal: {status:?}\n{stderr}"));
    Run {
        code,
        stdout,
        stderr,
    }
}

fn validate(path: &Path) -> Run {
    run([
        OsStr::new("validate"),
        OsStr::new("--format"),
        OsStr::new("json"),
        path.as_os_str(),
    ])
}

/// Exit 2, `diagnostics == ["MCP_RES_INPUT_INVALID"]`, a message naming the
/// reason, and (when given) the reader's line and column.
fn assert_unusable(path: &Path, reason: &str, position: Option<(usize, usize)>) -> Value {
    let r = validate(path);
    let v = r.json();
    assert_eq!(r.code, 2, "exit code for {}: {v}", path.display());
    assert_eq!(v["valid"], json!(false), "{v}");
    assert_eq!(v["diagnostics"], json!([INPUT_INVALID]), "{v}");
    let message = v["message"].as_str().expect("message is a string");
    assert!(
        message.contains(reason),
        "message {message:?} does not name the reason {reason:?}"
    );
    if let Some((line, column)) = position {
        let at = format!("at line {line}, column {column}");
        assert!(message.ends_with(&at), "message {message:?} lacks {at:?}");
    }
    assert_eq!(v["findings"][0]["code"], json!(INPUT_INVALID), "{v}");
    v
}

/// The reader accepted the document and validation judged it: exit 1 with a
/// real rule diagnostic (the test documents are not bundles).
fn assert_readable_but_invalid(path: &Path) -> Value {
    let r = validate(path);
    let v = r.json();
    assert_eq!(r.code, 1, "exit code for {}: {v}", path.display());
    let primary = v["diagnostics"][0].as_str().expect("a primary diagnostic");
    assert_ne!(primary, INPUT_INVALID, "{v}");
    assert!(primary.starts_with("MCP_RES_"), "{v}");
    v
}

fn codes_of(v: &Value) -> Vec<String> {
    v["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .map(|f| f["code"].as_str().expect("code").to_string())
        .collect()
}

// ------------------------------------------------- committed small cases

#[test]
fn committed_cases_match_their_definitions() {
    for (name, bytes) in SMALL_CASES {
        let on_disk = fs::read(case(name))
            .unwrap_or_else(|e| panic!("testdata/hostile/{name}: {e}; run the `regenerate` test"));
        assert_eq!(
            &on_disk, bytes,
            "testdata/hostile/{name} differs from SMALL_CASES"
        );
    }
    let valid = fs::read(case(VALID_BUNDLE)).expect("committed valid bundle");
    mcpres::json::parse_default(&valid).expect("the committed valid bundle is strict JSON");
}

/// `cargo test --test hostile -- --ignored regenerate` rewrites the committed cases
/// (and refreshes the valid bundle from the reference corpus when it is present).
#[test]
#[ignore = "writes testdata/hostile; run on purpose"]
fn regenerate() {
    fs::create_dir_all(hostile_dir()).unwrap();
    for (name, bytes) in SMALL_CASES {
        fs::write(case(name), bytes).unwrap();
    }
    let reference = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../shared/reference-corpus/v0.2.0/test-vectors/valid/reason-bound-negative.json");
    if reference.is_file() {
        fs::copy(&reference, case(VALID_BUNDLE)).unwrap();
    }
    fs::write(case("depth-129.json"), nested_arrays(129)).unwrap();
    fs::write(case("depth-130.json"), nested_arrays(130)).unwrap();
}

#[test]
fn valid_bundle_is_valid() {
    let r = validate(&case(VALID_BUNDLE));
    let v = r.json();
    assert_eq!(r.code, 0, "{v}");
    assert_eq!(v["valid"], json!(true));
    assert_eq!(v["diagnostics"], json!([]));
}

#[test]
fn invalid_utf8() {
    assert_unusable(&case("invalid-utf8.json"), "not valid UTF-8", Some((2, 9)));
}

#[test]
fn invalid_utf8_overlong_encoding() {
    assert_unusable(
        &case("invalid-utf8-overlong.json"),
        "not valid UTF-8",
        Some((1, 8)),
    );
}

#[test]
fn byte_order_mark() {
    assert_unusable(&case("bom.json"), "byte order mark", Some((1, 1)));
}

#[test]
fn duplicate_key_at_depth() {
    // The second "e" (line 4) is reported, not the first.
    assert_unusable(
        &case("duplicate-key-deep.json"),
        "duplicate object key \"e\"",
        Some((4, 33)),
    );
}

#[test]
fn lone_high_surrogate_in_key() {
    assert_unusable(
        &case("lone-surrogate-key-high.json"),
        "lone UTF-16 surrogate (MCP_RES_INVALID_UNICODE)",
        Some((1, 3)),
    );
}

#[test]
fn lone_low_surrogate_in_key() {
    assert_unusable(
        &case("lone-surrogate-key-low.json"),
        "lone UTF-16 surrogate",
        Some((2, 4)),
    );
}

#[test]
fn lone_high_surrogate_at_end_of_value() {
    assert_unusable(
        &case("lone-surrogate-value-high.json"),
        "lone UTF-16 surrogate",
        Some((1, 8)),
    );
}

#[test]
fn lone_low_surrogate_in_value() {
    assert_unusable(
        &case("lone-surrogate-value-low.json"),
        "lone UTF-16 surrogate",
        Some((1, 11)),
    );
}

#[test]
fn high_surrogate_followed_by_bmp_escape() {
    assert_unusable(
        &case("lone-surrogate-value-high-then-bmp.json"),
        "lone UTF-16 surrogate",
        Some((1, 8)),
    );
}

#[test]
fn two_to_the_53() {
    assert_unusable(
        &case("unsafe-integer-2p53.json"),
        "outside the safe range ±9007199254740991 (MCP_RES_NON_CANONICAL_NUMBER)",
        Some((1, 7)),
    );
}

#[test]
fn minus_two_to_the_53() {
    assert_unusable(
        &case("unsafe-integer-neg-2p53.json"),
        "outside the safe range",
        Some((1, 7)),
    );
}

#[test]
fn thirty_digit_integer() {
    assert_unusable(
        &case("unsafe-integer-huge.json"),
        "outside the safe range",
        Some((1, 5)),
    );
}

#[test]
fn max_safe_integer_is_readable() {
    assert_readable_but_invalid(&case("safe-integer-max.json"));
}

/// `-0` is an integer token: the reader accepts it (as the integer 0, which the
/// canonical form writes `0`), so the document proceeds to validation. This
/// one is not a bundle, so validation fails it: exit 1, not 2.
#[test]
fn negative_zero_is_readable_and_proceeds_to_validation() {
    let v = assert_readable_but_invalid(&case("negative-zero.json"));
    assert!(!codes_of(&v).iter().any(|c| c == INPUT_INVALID), "{v}");
}

/// The same in a real bundle: `"attempt": -0` reads as 0, so every digest
/// still matches and the bundle stays valid.
#[test]
fn negative_zero_inside_a_valid_bundle_keeps_it_valid() {
    let text = fs::read_to_string(case(VALID_BUNDLE)).unwrap();
    assert!(text.contains("\"attempt\": 0,"));
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("negative-zero-bundle.json");
    fs::write(
        &path,
        text.replacen("\"attempt\": 0,", "\"attempt\": -0,", 1),
    )
    .unwrap();
    let r = validate(&path);
    let v = r.json();
    assert_eq!(r.code, 0, "{v}");
    assert_eq!(v["valid"], json!(true));
}

#[test]
fn fraction_token() {
    assert_unusable(
        &case("fraction.json"),
        "number has a fraction or exponent; only integers are allowed (MCP_RES_NON_CANONICAL_NUMBER)",
        Some((1, 7)),
    );
}

#[test]
fn exponent_token() {
    assert_unusable(&case("exponent.json"), "fraction or exponent", Some((1, 7)));
}

#[test]
fn signed_exponent_token() {
    assert_unusable(
        &case("exponent-signed.json"),
        "fraction or exponent",
        Some((2, 2)),
    );
}

#[test]
fn trailing_garbage() {
    assert_unusable(
        &case("trailing-garbage.json"),
        "trailing data",
        Some((1, 4)),
    );
}

#[test]
fn trailing_second_value() {
    assert_unusable(
        &case("trailing-second-value.json"),
        "trailing data",
        Some((1, 3)),
    );
}

#[test]
fn trailing_bracket() {
    assert_unusable(
        &case("trailing-bracket.json"),
        "trailing data",
        Some((1, 4)),
    );
}

#[test]
fn nul_byte_after_the_value() {
    assert_unusable(&case("nul-trailing.json"), "trailing data", Some((1, 3)));
}

#[test]
fn nul_byte_before_the_value() {
    assert_unusable(
        &case("nul-leading.json"),
        "unexpected byte 0x00",
        Some((1, 1)),
    );
}

#[test]
fn nul_byte_inside_a_string() {
    assert_unusable(
        &case("nul-in-string.json"),
        "unescaped control character in string",
        Some((1, 9)),
    );
}

#[test]
fn empty_file() {
    assert_unusable(&case("empty.json"), "document is empty", Some((1, 1)));
}

#[test]
fn whitespace_only_file() {
    assert_unusable(
        &case("whitespace-only.json"),
        "document is empty",
        Some((1, 1)),
    );
}

// ------------------------------------------------------------ depth limit

fn nested_arrays(depth: usize) -> String {
    format!("{}{}", "[".repeat(depth), "]".repeat(depth))
}

/// 129 nested arrays: the innermost is at depth 128, the limit; the reader
/// accepts it and validation judges it (exit 1).
#[test]
fn depth_129_nested_arrays_pass_the_reader() {
    assert_eq!(
        fs::read_to_string(case("depth-129.json")).unwrap(),
        nested_arrays(129)
    );
    assert_readable_but_invalid(&case("depth-129.json"));
}

#[test]
fn depth_130_nested_arrays_fail() {
    assert_eq!(
        fs::read_to_string(case("depth-130.json")).unwrap(),
        nested_arrays(130)
    );
    assert_unusable(
        &case("depth-130.json"),
        "nesting deeper than 128 levels",
        Some((1, 130)),
    );
}

#[test]
fn depth_10000() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("depth-10000.json");
    fs::write(&path, nested_arrays(10_000)).unwrap();
    assert_unusable(&path, "nesting deeper than 128 levels", Some((1, 130)));
}

#[test]
fn depth_10000_objects() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("depth-10000-objects.json");
    fs::write(
        &path,
        format!("{}1{}", "{\"a\":".repeat(10_000), "}".repeat(10_000)),
    )
    .unwrap();
    // The 129th object opens at depth 128; its value (depth 129) is refused.
    assert_unusable(
        &path,
        "nesting deeper than 128 levels",
        Some((1, 5 * 129 + 1)),
    );
}

// ------------------------------------------------------------- size limit

const MAX_BYTES: usize = 16 * 1024 * 1024;

#[test]
fn sixteen_mib_plus_one_byte() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("too-large.json");
    let mut bytes = b"{}".to_vec();
    bytes.resize(MAX_BYTES + 1, b' ');
    fs::write(&path, &bytes).unwrap();
    assert_unusable(
        &path,
        "16777217 bytes is over the 16777216-byte document limit",
        None,
    );
}

#[test]
fn exactly_sixteen_mib_passes_the_reader() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("at-limit.json");
    let mut bytes = b"{}".to_vec();
    bytes.resize(MAX_BYTES, b' ');
    fs::write(&path, &bytes).unwrap();
    assert_readable_but_invalid(&path);
}

// ------------------------------------------------------------- node limit

/// `[0,0,...]` with `zeros` elements has `zeros + 1` values.
fn zeros_array(zeros: usize) -> String {
    format!("[{}]", vec!["0"; zeros].join(","))
}

#[test]
fn node_limit_250_001_values() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("nodes-250001.json");
    fs::write(&path, zeros_array(250_000)).unwrap();
    // Value n (n >= 2) is the (n-1)th zero, at column 2 + 2(n-2).
    assert_unusable(
        &path,
        "document has more than 250000 values",
        Some((1, 2 + 2 * (250_001 - 2))),
    );
}

#[test]
fn node_limit_250_000_values_pass_the_reader() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("nodes-250000.json");
    fs::write(&path, zeros_array(249_999)).unwrap();
    assert_readable_but_invalid(&path);
}

/// Keys are not values: an object with 125,000 members has 125,001 values.
#[test]
fn object_keys_do_not_count_as_values() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("keys.json");
    let members: Vec<String> = (0..249_999).map(|i| format!("\"k{i}\":0")).collect();
    fs::write(&path, format!("{{{}}}", members.join(","))).unwrap();
    assert_readable_but_invalid(&path);
    let members: Vec<String> = (0..250_000).map(|i| format!("\"k{i}\":0")).collect();
    fs::write(&path, format!("{{{}}}", members.join(","))).unwrap();
    assert_unusable(&path, "document has more than 250000 values", None);
}

// ----------------------------------------------------------- string limit

const MAX_UNITS: usize = 1_048_576;

#[test]
fn string_of_1_048_577_units() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("string-too-long.json");
    fs::write(
        &path,
        format!("{{\"s\": \"{}\"}}", "a".repeat(MAX_UNITS + 1)),
    )
    .unwrap();
    assert_unusable(
        &path,
        "string longer than 1048576 UTF-16 code units",
        Some((1, 7)),
    );
}

#[test]
fn string_of_1_048_576_units_passes_the_reader() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("string-at-limit.json");
    fs::write(&path, format!("{{\"s\": \"{}\"}}", "a".repeat(MAX_UNITS))).unwrap();
    assert_readable_but_invalid(&path);
}

/// Units, not bytes or characters: 524,288 emoji are 1,048,576 units (2 MiB of
/// UTF-8) and pass; escapes count after unescaping.
#[test]
fn string_limit_counts_utf16_units_after_unescaping() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("emoji.json");
    fs::write(&path, format!("[\"{}\"]", "😀".repeat(MAX_UNITS / 2))).unwrap();
    assert_readable_but_invalid(&path);
    fs::write(
        &path,
        format!("[\"{}\\u0041\"]", "😀".repeat(MAX_UNITS / 2)),
    )
    .unwrap();
    assert_unusable(
        &path,
        "string longer than 1048576 UTF-16 code units",
        Some((1, 2)),
    );
}

#[test]
fn key_of_1_048_577_units() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("key-too-long.json");
    fs::write(&path, format!("{{\"{}\": 1}}", "k".repeat(MAX_UNITS + 1))).unwrap();
    assert_unusable(
        &path,
        "string longer than 1048576 UTF-16 code units",
        Some((1, 2)),
    );
}

// ------------------------------------------------ what the path names

#[cfg(unix)]
#[test]
fn symlink_as_input() {
    let tmp = tempfile::tempdir().unwrap();
    let link = tmp.path().join("link.json");
    std::os::unix::fs::symlink(case(VALID_BUNDLE), &link).unwrap();
    assert_unusable(&link, "is a symbolic link", None);
}

#[cfg(unix)]
#[test]
fn symlink_to_a_bundle_directory_as_input() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = unpack_valid(tmp.path());
    let link = tmp.path().join("link-dir");
    std::os::unix::fs::symlink(&dir, &link).unwrap();
    assert_unusable(&link, "is a symbolic link", None);
}

#[test]
fn directory_without_integrity_manifest() {
    let tmp = tempfile::tempdir().unwrap();
    fs::write(tmp.path().join("evidence-envelope.json"), b"{}").unwrap();
    assert_unusable(tmp.path(), "has no integrity-manifest.json", None);
}

#[test]
fn nonexistent_path() {
    let tmp = tempfile::tempdir().unwrap();
    assert_unusable(&tmp.path().join("absent.json"), "cannot read", None);
}

#[cfg(unix)]
#[test]
fn special_file_as_input() {
    assert_unusable(
        Path::new("/dev/null"),
        "neither a regular file nor a directory",
        None,
    );
}

#[cfg(unix)]
#[test]
fn fifo_as_input_is_not_opened() {
    let tmp = tempfile::tempdir().unwrap();
    let fifo = tmp.path().join("fifo.json");
    let made = Command::new("mkfifo").arg(&fifo).status();
    if !matches!(made, Ok(s) if s.success()) {
        eprintln!("SKIPPED: mkfifo unavailable");
        return;
    }
    // Opening a FIFO with no writer would block; mcpres must refuse it first.
    assert_unusable(&fifo, "neither a regular file nor a directory", None);
}

/// One unusable input among valid ones: each gets its own result object and
/// the process exits with the worst code.
#[test]
fn unusable_input_among_several() {
    let r = run([
        OsStr::new("validate"),
        OsStr::new("--format"),
        OsStr::new("json"),
        case(VALID_BUNDLE).as_os_str(),
        case("bom.json").as_os_str(),
        case("negative-zero.json").as_os_str(),
    ]);
    assert_eq!(r.code, 2);
    let lines: Vec<Value> = r
        .stdout
        .lines()
        .map(|l| serde_json::from_str(l).expect("JSON line"))
        .collect();
    assert_eq!(lines.len(), 3);
    assert_eq!(lines[1]["diagnostics"], json!([INPUT_INVALID]));
    assert!(
        r.stderr
            .contains("checked 3 inputs: 1 valid, 1 invalid, 1 unreadable"),
        "{}",
        r.stderr
    );
}

// --------------------------------------------------- the other commands

#[test]
fn canonicalize_refuses_hostile_input_without_panicking() {
    for (name, _) in SMALL_CASES {
        if ["negative-zero.json", "safe-integer-max.json"].contains(name) {
            continue;
        }
        let r = run([OsStr::new("canonicalize"), case(name).as_os_str()]);
        assert_eq!(r.code, 2, "{name}: {}", r.stderr);
        assert!(r.stdout.is_empty(), "{name}: wrote {:?}", r.stdout);
        assert!(r.stderr.contains(INPUT_INVALID), "{name}: {}", r.stderr);
    }
}

#[test]
fn canonicalize_writes_negative_zero_as_zero() {
    let r = run([
        OsStr::new("canonicalize"),
        case("negative-zero.json").as_os_str(),
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(r.stdout, "{\"n\":0}");
}

#[test]
fn human_and_sarif_formats_survive_hostile_input() {
    for (name, _) in SMALL_CASES {
        for format in ["human", "sarif"] {
            let r = run([
                OsStr::new("validate"),
                OsStr::new("--format"),
                OsStr::new(format),
                case(name).as_os_str(),
            ]);
            assert!(
                r.code == 1 || r.code == 2,
                "{name} {format}: exit {}",
                r.code
            );
            assert!(r.stdout.contains(if r.code == 2 {
                INPUT_INVALID
            } else {
                "MCP_RES_"
            }));
        }
    }
}

// ------------------------------------------------- bundle-directory form

/// `mcpres unpack` the committed valid bundle into `parent/bundle`.
fn unpack_valid(parent: &Path) -> PathBuf {
    let dir = parent.join("bundle");
    let r = run([
        OsStr::new("unpack"),
        case(VALID_BUNDLE).as_os_str(),
        OsStr::new("-o"),
        dir.as_os_str(),
    ]);
    assert_eq!(r.code, 0, "unpack: {}", r.stderr);
    dir
}

const OBS: &str = "observations/obs-cleanup.json";
const MANIFEST: &str = "integrity-manifest.json";

fn read_manifest(dir: &Path) -> Value {
    mcpres::json::parse_default(&fs::read(dir.join(MANIFEST)).unwrap()).unwrap()
}

/// Rewrite integrity-manifest.json in canonical form.
fn write_manifest(dir: &Path, manifest: &Value) {
    let bytes = mcpres::json::canonical::to_vec(manifest).unwrap();
    fs::write(dir.join(MANIFEST), bytes).unwrap();
}

fn manifest_entry(manifest: &Value, path: &str) -> Value {
    manifest["artifacts"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["path"] == json!(path))
        .cloned()
        .unwrap_or_else(|| panic!("{path} is not in the manifest"))
}

fn push_artifact(dir: &Path, entry: Value) {
    let mut m = read_manifest(dir);
    m["artifacts"].as_array_mut().unwrap().push(entry);
    write_manifest(dir, &m);
}

/// Exit 1 with `code` as the primary diagnostic (first finding) of a directory.
fn assert_dir_primary(dir: &Path, code: &str) -> Value {
    let r = validate(dir);
    let v = r.json();
    assert_eq!(r.code, 1, "{v}");
    assert_eq!(v["valid"], json!(false));
    assert_eq!(v["diagnostics"], json!([code]), "{v}");
    assert_eq!(v["findings"][0]["code"], json!(code), "{v}");
    v
}

fn findings_with(v: &Value, code: &str) -> Vec<String> {
    v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["code"] == json!(code))
        .map(|f| f["message"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn unpacked_valid_bundle_is_valid() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = unpack_valid(tmp.path());
    let r = validate(&dir);
    assert_eq!(r.code, 0, "{}", r.stdout);
}

const OUTSIDE_SECRET: &str = "{\"outside\":\"SECRET-OUTSIDE-CONTENT\"}";

#[cfg(unix)]
#[test]
fn symlinked_artifact_is_reported_and_not_followed() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = unpack_valid(tmp.path());
    let outside = tmp.path().join("outside.json");
    fs::write(&outside, OUTSIDE_SECRET).unwrap();
    fs::remove_file(dir.join(OBS)).unwrap();
    std::os::unix::fs::symlink(&outside, dir.join(OBS)).unwrap();
    let v = assert_dir_primary(&dir, "MCP_RES_ARTIFACT_PATH_INVALID");
    assert!(
        v["findings"][0]["message"]
            .as_str()
            .unwrap()
            .contains("is a symbolic link"),
        "{v}"
    );
    // The target was not read: nothing compared its bytes or parsed it.
    assert!(!v.to_string().contains("SECRET-OUTSIDE-CONTENT"), "{v}");
    assert!(
        findings_with(&v, "MCP_RES_ARTIFACT_DIGEST_MISMATCH").is_empty(),
        "{v}"
    );
    assert!(
        findings_with(&v, "MCP_RES_ARTIFACT_NON_CANONICAL").is_empty(),
        "{v}"
    );
}

#[cfg(unix)]
#[test]
fn symlinked_subdirectory_is_reported_and_not_followed() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = unpack_valid(tmp.path());
    let outside = tmp.path().join("outside-observations");
    fs::rename(dir.join("observations"), &outside).unwrap();
    // Damage the outside copy: if mcpres followed the link it would see a mismatch.
    fs::write(outside.join("obs-cleanup.json"), OUTSIDE_SECRET).unwrap();
    std::os::unix::fs::symlink(&outside, dir.join("observations")).unwrap();
    let v = assert_dir_primary(&dir, "MCP_RES_ARTIFACT_PATH_INVALID");
    assert!(
        v["findings"][0]["message"]
            .as_str()
            .unwrap()
            .contains("observations is a symbolic link"),
        "{v}"
    );
    assert!(!v.to_string().contains("SECRET-OUTSIDE-CONTENT"), "{v}");
    assert!(
        findings_with(&v, "MCP_RES_ARTIFACT_DIGEST_MISMATCH").is_empty(),
        "{v}"
    );
}

#[test]
fn extra_unlisted_file() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = unpack_valid(tmp.path());
    fs::write(dir.join("observations/extra.json"), b"{}").unwrap();
    let v = assert_dir_primary(&dir, "MCP_RES_ARTIFACT_UNLISTED");
    assert!(
        v["findings"][0]["message"]
            .as_str()
            .unwrap()
            .contains("observations/extra.json")
    );
    assert_eq!(v["findings"].as_array().unwrap().len(), 1, "{v}");
}

/// A manifest entry whose path leaves the bundle; a file really exists there,
/// and it must not be read.
fn escaping_entry(tmp: &Path, path: &str) -> Value {
    let bytes = OUTSIDE_SECRET.as_bytes();
    fs::write(tmp.join("outside.json"), bytes).unwrap();
    json!({
        "path": path,
        "mediaType": "application/json",
        "bytes": bytes.len(),
        "sha256": mcpres::json::sha256_hex(bytes),
    })
}

fn assert_path_invalid_primary(dir: &Path, problem: &str) {
    let v = validate(dir).json();
    let codes = codes_of(&v);
    assert!(
        codes.iter().any(|c| c == "MCP_RES_ARTIFACT_PATH_INVALID"),
        "{v}"
    );
    let v = assert_dir_primary(dir, "MCP_RES_ARTIFACT_PATH_INVALID");
    let message = v["findings"][0]["message"].as_str().unwrap();
    assert!(message.contains(problem), "{message}");
    assert!(
        findings_with(&v, "MCP_RES_ARTIFACT_DIGEST_MISMATCH").is_empty(),
        "{v}"
    );
    assert!(
        findings_with(&v, "MCP_RES_ARTIFACT_NON_CANONICAL").is_empty(),
        "{v}"
    );
}

#[test]
fn manifest_path_with_dot_dot() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = unpack_valid(tmp.path());
    push_artifact(&dir, escaping_entry(tmp.path(), "../outside.json"));
    assert_path_invalid_primary(&dir, "has a '..' segment");
}

#[test]
fn manifest_path_with_inner_dot_dot() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = unpack_valid(tmp.path());
    push_artifact(
        &dir,
        escaping_entry(tmp.path(), "observations/../../outside.json"),
    );
    assert_path_invalid_primary(&dir, "has a '..' segment");
}

#[test]
fn manifest_path_absolute() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = unpack_valid(tmp.path());
    let absolute = tmp.path().join("outside.json");
    let entry = escaping_entry(tmp.path(), absolute.to_str().unwrap());
    push_artifact(&dir, entry);
    assert_path_invalid_primary(&dir, "is absolute");
}

#[test]
fn manifest_path_with_backslash() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = unpack_valid(tmp.path());
    let mut entry = manifest_entry(&read_manifest(&dir), OBS);
    entry["path"] = json!("observations\\obs-cleanup.json");
    push_artifact(&dir, entry);
    assert_path_invalid_primary(&dir, "contains a backslash");
}

#[test]
fn manifest_path_with_backslash_dot_dot() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = unpack_valid(tmp.path());
    push_artifact(&dir, escaping_entry(tmp.path(), "..\\outside.json"));
    assert_path_invalid_primary(&dir, "contains a backslash");
}

#[test]
fn case_colliding_manifest_paths() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = unpack_valid(tmp.path());
    let mut entry = manifest_entry(&read_manifest(&dir), OBS);
    let upper = "observations/OBS-CLEANUP.json";
    entry["path"] = json!(upper);
    push_artifact(&dir, entry);
    // On a case-sensitive file system both files can exist.
    let _ = fs::copy(dir.join(OBS), dir.join(upper));
    let v = assert_dir_primary(&dir, "MCP_RES_ARTIFACT_PATH_COLLISION");
    let message = v["findings"][0]["message"].as_str().unwrap();
    assert!(message.contains("differ only by case"), "{message}");
}

#[test]
fn artifact_bytes_differ_from_manifest() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = unpack_valid(tmp.path());
    let text = fs::read_to_string(dir.join(OBS)).unwrap();
    // Still canonical JSON, same length, different bytes.
    let damaged = text.replacen("\"obs-cleanup\"", "\"obs-cleanuP\"", 1);
    assert_ne!(damaged, text);
    fs::write(dir.join(OBS), damaged).unwrap();
    let v = assert_dir_primary(&dir, "MCP_RES_ARTIFACT_DIGEST_MISMATCH");
    assert!(
        v["findings"][0]["message"].as_str().unwrap().contains(OBS),
        "{v}"
    );
    assert!(
        findings_with(&v, "MCP_RES_ARTIFACT_NON_CANONICAL").is_empty(),
        "{v}"
    );
}

#[test]
fn artifact_truncated() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = unpack_valid(tmp.path());
    fs::write(dir.join(OBS), b"").unwrap();
    assert_dir_primary(&dir, "MCP_RES_ARTIFACT_DIGEST_MISMATCH");
}

/// A pretty-printed observation whose manifest entry was updated to its bytes:
/// the digest matches, the storage form does not.
#[test]
fn non_canonical_json_artifact() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = unpack_valid(tmp.path());
    let value: Value = serde_json::from_slice(&fs::read(dir.join(OBS)).unwrap()).unwrap();
    let pretty = serde_json::to_vec_pretty(&value).unwrap();
    fs::write(dir.join(OBS), &pretty).unwrap();
    let mut m = read_manifest(&dir);
    for a in m["artifacts"].as_array_mut().unwrap() {
        if a["path"] == json!(OBS) {
            a["bytes"] = json!(pretty.len());
            a["sha256"] = json!(mcpres::json::sha256_hex(&pretty));
        }
    }
    write_manifest(&dir, &m);
    let v = assert_dir_primary(&dir, "MCP_RES_ARTIFACT_NON_CANONICAL");
    assert!(
        v["findings"][0]["message"].as_str().unwrap().contains(OBS),
        "{v}"
    );
    assert!(
        findings_with(&v, "MCP_RES_ARTIFACT_DIGEST_MISMATCH").is_empty(),
        "{v}"
    );
}

#[test]
fn non_canonical_manifest() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = unpack_valid(tmp.path());
    let m = read_manifest(&dir);
    fs::write(dir.join(MANIFEST), serde_json::to_vec_pretty(&m).unwrap()).unwrap();
    let v = assert_dir_primary(&dir, "MCP_RES_ARTIFACT_NON_CANONICAL");
    assert_eq!(v["findings"][0]["pointer"], json!("/integrity"), "{v}");
    assert_eq!(v["findings"].as_array().unwrap().len(), 1, "{v}");
}

#[test]
fn missing_artifact() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = unpack_valid(tmp.path());
    fs::remove_file(dir.join(OBS)).unwrap();
    let v = assert_dir_primary(&dir, "MCP_RES_ARTIFACT_MISSING");
    assert!(
        v["findings"][0]["message"].as_str().unwrap().contains(OBS),
        "{v}"
    );
    assert_eq!(v["findings"].as_array().unwrap().len(), 1, "{v}");
}

/// spec/bundle-layout.md, step 3: when the evidence or the statement cannot be
/// read, the core rules are skipped and the directory findings alone decide:
/// `MCP_RES_ARTIFACT_MISSING`, exit 1 (not an unusable input).
#[test]
fn missing_evidence_envelope_is_a_missing_artifact() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = unpack_valid(tmp.path());
    fs::remove_file(dir.join("evidence-envelope.json")).unwrap();
    let v = assert_dir_primary(&dir, "MCP_RES_ARTIFACT_MISSING");
    let message = v["findings"][0]["message"].as_str().unwrap();
    assert!(message.contains("evidence-envelope.json"), "{message}");
}

/// A file name that is not UTF-8 is refused without following or reading it;
/// the message names it as a path inside the bundle (no leading '/').
#[cfg(target_os = "linux")]
#[test]
fn non_utf8_file_name_in_bundle_directory() {
    use std::os::unix::ffi::OsStrExt;
    let tmp = tempfile::tempdir().unwrap();
    let dir = unpack_valid(tmp.path());
    fs::write(dir.join(OsStr::from_bytes(b"bad-\xff-name")), b"{}").unwrap();
    // No manifest path can name it: an unlisted entry (spec/bundle-layout.md, MCPRES-DIR-006).
    let v = assert_dir_primary(&dir, "MCP_RES_ARTIFACT_UNLISTED");
    let message = v["findings"][0]["message"].as_str().unwrap();
    assert!(message.contains("name is not UTF-8"), "{message}");
    assert!(
        message.starts_with("bad-"),
        "a top-level entry is reported as {message:?}, which reads as an absolute path"
    );
}

// ------------------------------------------- human output of long lines

/// The human renderer must not panic on a position past column 65,535 (Rust's
/// format width limit); a canonical single-file bundle is one line, so any
/// bundle over 64 KiB can put a finding there.
#[test]
fn human_format_reader_error_past_column_65535() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("long-line.json");
    fs::write(&path, format!("{{\"a\":{}1.5}}", " ".repeat(70_000))).unwrap();
    let r = run([OsStr::new("validate"), path.as_os_str()]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stdout.contains("line 1, column 70006"), "{}", r.stdout);
}

#[test]
fn human_format_finding_past_column_65535_in_a_canonical_bundle() {
    let mut doc: Value = serde_json::from_slice(&fs::read(case(VALID_BUNDLE)).unwrap()).unwrap();
    // A long (schema-invalid) value early in canonical key order pushes the
    // WRONG_STOP_REASON finding in /evidence/operations past column 70,000.
    doc["evidence"]["evidenceClassClaim"] = json!("X".repeat(70_000));
    doc["evidence"]["operations"][1]["negativeObservation"]["observedStopReason"] =
        json!("VERSION_UNSUPPORTED");
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("long-canonical-bundle.json");
    fs::write(&path, mcpres::json::canonical::to_vec(&doc).unwrap()).unwrap();
    let json_run = validate(&path);
    assert_eq!(json_run.code, 1);
    assert_eq!(
        json_run.json()["diagnostics"],
        json!(["MCP_RES_WRONG_STOP_REASON"])
    );
    let r = run([OsStr::new("validate"), path.as_os_str()]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(r.stdout.contains("MCP_RES_WRONG_STOP_REASON"));
}

// ------------------------------------------------------ unpack of hostile files

/// `unpack` plans every file before writing; a manifest whose paths conflict
/// (a path under another file, or the manifest's own name) must be refused
/// before the output directory is created, not half-way through writing it
/// (spec/bundle-layout.md: "refuses ... before writing anything"; "if writing
/// fails part way ... removes the files and directories it created").
#[test]
fn unpack_of_conflicting_manifest_paths_leaves_no_partial_directory() {
    for conflicting in ["observations/obs-cleanup.json/x", "integrity-manifest.json"] {
        let mut doc: Value =
            serde_json::from_slice(&fs::read(case(VALID_BUNDLE)).unwrap()).unwrap();
        let mut entry = manifest_entry(&doc["integrity"], OBS);
        entry["path"] = json!(conflicting);
        doc["integrity"]["artifacts"]
            .as_array_mut()
            .unwrap()
            .push(entry);
        let tmp = tempfile::tempdir().unwrap();
        let file = tmp.path().join("conflicting.json");
        fs::write(&file, mcpres::json::canonical::to_vec(&doc).unwrap()).unwrap();
        let out = tmp.path().join("out");
        let r = run([
            OsStr::new("unpack"),
            file.as_os_str(),
            OsStr::new("-o"),
            out.as_os_str(),
        ]);
        assert_ne!(r.code, 0, "{conflicting}: {}", r.stderr);
        assert!(
            !out.exists(),
            "{conflicting}: unpack failed ({}) but left a partial directory behind",
            r.stderr.trim()
        );
    }
}

#[test]
fn hostile_manifest_file_is_unusable() {
    for name in [
        "bom.json",
        "fraction.json",
        "duplicate-key-deep.json",
        "empty.json",
    ] {
        let tmp = tempfile::tempdir().unwrap();
        let dir = unpack_valid(tmp.path());
        fs::remove_file(dir.join(MANIFEST)).unwrap();
        fs::copy(case(name), dir.join(MANIFEST)).unwrap();
        let v = assert_unusable(&dir, MANIFEST, None);
        assert!(
            v["message"].as_str().unwrap().contains("line"),
            "{name}: {v}"
        );
    }
}

#[cfg(unix)]
#[test]
fn symlinked_manifest_is_unusable() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = unpack_valid(tmp.path());
    let outside = tmp.path().join("manifest-outside.json");
    fs::rename(dir.join(MANIFEST), &outside).unwrap();
    std::os::unix::fs::symlink(&outside, dir.join(MANIFEST)).unwrap();
    assert_unusable(&dir, "is a symbolic link", None);
}

#[test]
fn hostile_json_artifact_is_reported_not_fatal() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = unpack_valid(tmp.path());
    let bytes = fs::read(case("lone-surrogate-value-low.json")).unwrap();
    fs::write(dir.join(OBS), &bytes).unwrap();
    let mut m = read_manifest(&dir);
    for a in m["artifacts"].as_array_mut().unwrap() {
        if a["path"] == json!(OBS) {
            a["bytes"] = json!(bytes.len());
            a["sha256"] = json!(mcpres::json::sha256_hex(&bytes));
        }
    }
    write_manifest(&dir, &m);
    let v = assert_dir_primary(&dir, "MCP_RES_ARTIFACT_NON_CANONICAL");
    let message = v["findings"][0]["message"].as_str().unwrap();
    assert!(message.contains("cannot be read strictly"), "{message}");
    assert!(message.contains("lone UTF-16 surrogate"), "{message}");
}

/// spec/bundle-layout.md: unpack refuses with exit 1 (not 2) before writing
/// anything when a manifest path breaks the path rules.
#[test]
fn unpack_refuses_a_path_breaking_the_rules_with_exit_1() {
    for bad in ["../escape.bin", "integrity-manifest.json"] {
        let mut doc: Value =
            serde_json::from_slice(&fs::read(case(VALID_BUNDLE)).unwrap()).unwrap();
        let mut entry = manifest_entry(&doc["integrity"], OBS);
        entry["path"] = json!(bad);
        doc["integrity"]["artifacts"]
            .as_array_mut()
            .unwrap()
            .push(entry);
        let tmp = tempfile::tempdir().unwrap();
        let file = tmp.path().join("bad-path.json");
        fs::write(&file, mcpres::json::canonical::to_vec(&doc).unwrap()).unwrap();
        let out = tmp.path().join("out");
        let r = run([
            OsStr::new("unpack"),
            file.as_os_str(),
            OsStr::new("-o"),
            out.as_os_str(),
        ]);
        assert!(!out.exists(), "{bad}: wrote {}", out.display());
        assert!(!tmp.path().join("escape.bin").exists());
        assert_eq!(r.code, 1, "{bad}: {}", r.stderr);
    }
}

// ------------------------------- spec/bundle-layout.md directory checks

/// Path rules (MCPRES-DIR-001): only `A-Z a-z 0-9 . _ / -`, starting with a
/// letter or digit, at most 256 characters.
#[test]
fn manifest_paths_outside_the_allowed_characters() {
    let long = format!("raw/{}.bin", "a".repeat(260));
    for bad in [
        "observations/obs cleanup.json",
        "-leading-dash.json",
        ".hidden.json",
        "raw/\u{e9}t\u{e9}.bin",
        "raw/a:b.bin",
        long.as_str(),
    ] {
        let tmp = tempfile::tempdir().unwrap();
        let dir = unpack_valid(tmp.path());
        let mut entry = manifest_entry(&read_manifest(&dir), OBS);
        entry["path"] = json!(bad);
        push_artifact(&dir, entry);
        let v = validate(&dir).json();
        assert_eq!(
            v["diagnostics"],
            json!(["MCP_RES_ARTIFACT_PATH_INVALID"]),
            "path {bad:?}: {v}"
        );
    }
}

/// Collisions (MCPRES-DIR-002) include exact duplicates.
#[test]
fn exact_duplicate_manifest_paths_collide() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = unpack_valid(tmp.path());
    let entry = manifest_entry(&read_manifest(&dir), OBS);
    push_artifact(&dir, entry);
    assert_dir_primary(&dir, "MCP_RES_ARTIFACT_PATH_COLLISION");
}

/// A listed path that folds to `integrity-manifest.json` collides.
#[test]
fn path_folding_to_the_manifest_name_collides() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = unpack_valid(tmp.path());
    let mut entry = manifest_entry(&read_manifest(&dir), OBS);
    entry["path"] = json!("Integrity-Manifest.json");
    push_artifact(&dir, entry);
    assert_dir_primary(&dir, "MCP_RES_ARTIFACT_PATH_COLLISION");
}

/// Step 2.6: empty directories are unlisted entries.
#[test]
fn empty_directory_is_unlisted() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = unpack_valid(tmp.path());
    fs::create_dir(dir.join("stray-empty-dir")).unwrap();
    let v = assert_dir_primary(&dir, "MCP_RES_ARTIFACT_UNLISTED");
    assert!(
        v["findings"][0]["message"]
            .as_str()
            .unwrap()
            .contains("stray-empty-dir"),
        "{v}"
    );
}

/// Step 2.6: a symlink that the manifest does not list is an unlisted entry
/// (step 2.3's PATH_INVALID is for listed paths).
#[cfg(unix)]
#[test]
fn unlisted_symlink_is_unlisted() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = unpack_valid(tmp.path());
    let outside = tmp.path().join("outside.json");
    fs::write(&outside, OUTSIDE_SECRET).unwrap();
    std::os::unix::fs::symlink(&outside, dir.join("stray-link.json")).unwrap();
    let v = assert_dir_primary(&dir, "MCP_RES_ARTIFACT_UNLISTED");
    assert!(!v.to_string().contains("SECRET-OUTSIDE-CONTENT"), "{v}");
}

/// Step 2: every entry's path rules (2.1) are checked before any presence (2.3).
#[test]
fn path_rules_are_checked_before_presence() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = unpack_valid(tmp.path());
    fs::remove_file(dir.join(OBS)).unwrap(); // an early entry: missing
    push_artifact(&dir, escaping_entry(tmp.path(), "../outside.json")); // the last entry
    let v = assert_dir_primary(&dir, "MCP_RES_ARTIFACT_PATH_INVALID");
    assert!(
        codes_of(&v).iter().any(|c| c == "MCP_RES_ARTIFACT_MISSING"),
        "{v}"
    );
}

/// Step 2 order: bytes (2.4), then canonical form with the manifest first
/// (2.5), then unlisted entries (2.6).
#[test]
fn directory_checks_come_in_the_spec_order() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = unpack_valid(tmp.path());
    fs::write(dir.join("zz-unlisted.txt"), b"stray").unwrap();
    let text = fs::read_to_string(dir.join(OBS)).unwrap();
    fs::write(
        dir.join(OBS),
        text.replacen("\"obs-cleanup\"", "\"obs-cleanuP\"", 1),
    )
    .unwrap();
    let m = read_manifest(&dir);
    fs::write(dir.join(MANIFEST), serde_json::to_vec_pretty(&m).unwrap()).unwrap();
    let v = validate(&dir).json();
    let storage: Vec<String> = codes_of(&v)
        .into_iter()
        .filter(|c| c.starts_with("MCP_RES_ARTIFACT_"))
        .collect();
    assert_eq!(
        storage,
        [
            "MCP_RES_ARTIFACT_DIGEST_MISMATCH",
            "MCP_RES_ARTIFACT_NON_CANONICAL",
            "MCP_RES_ARTIFACT_UNLISTED"
        ],
        "{v}"
    );
}

// ------------------------------------------ many findings in a big document

/// A 2.9 MB (pretty-printed) bundle with 10,000 extra operations whose parent
/// does not exist: 10,002 findings. The JSON format renders it in a few
/// seconds; human and SARIF output must stay linear too (each finding must not
/// re-scan or copy the whole document). The 120 s bound is only a hang guard.
fn many_findings_bundle(dir: &Path) -> PathBuf {
    let mut doc: Value = serde_json::from_slice(&fs::read(case(VALID_BUNDLE)).unwrap()).unwrap();
    let ops = doc["evidence"]["operations"].as_array_mut().unwrap();
    let base = ops[0].clone();
    for i in 0..10_000 {
        let mut op = base.clone();
        op["operationId"] = json!(format!("op-extra-{i}"));
        op["parentOperationId"] = json!(format!("no-such-parent-{i}"));
        ops.push(op);
    }
    let path = dir.join("many-findings.json");
    fs::write(&path, serde_json::to_vec_pretty(&doc).unwrap()).unwrap();
    path
}

fn assert_many_findings_render(format: &str) {
    let tmp = tempfile::tempdir().unwrap();
    let path = many_findings_bundle(tmp.path());
    let json_run = validate(&path);
    assert_eq!(json_run.code, 1);
    let findings = json_run.json()["findings"].as_array().unwrap().len();
    assert!(findings > 10_000, "{findings} findings");
    let r = run_within(
        [
            OsStr::new("validate"),
            OsStr::new("--format"),
            OsStr::new(format),
            path.as_os_str(),
        ],
        Duration::from_secs(120),
    );
    assert_eq!(r.code, 1, "{}", r.stderr);
}

#[test]
fn many_findings_in_human_format_do_not_hang() {
    assert_many_findings_render("human");
}

#[test]
fn many_findings_in_sarif_format_do_not_hang() {
    assert_many_findings_render("sarif");
}

// ------------------------------------- growth, size, special files, limits

/// A bound for cases that must finish quickly (hang protection: a run that
/// read a terabyte or blocked on a FIFO would take far longer).
const QUICK: Duration = Duration::from_secs(120);

/// `mcpres validate --format json EXTRA... PATH` with the [`QUICK`] watchdog.
fn validate_with(path: &Path, extra: &[&str]) -> Run {
    let mut args: Vec<&OsStr> = vec![
        OsStr::new("validate"),
        OsStr::new("--format"),
        OsStr::new("json"),
    ];
    args.extend(extra.iter().map(OsStr::new));
    args.push(path.as_os_str());
    run_within(args, QUICK)
}

/// One terabyte: far more than any run could read within [`QUICK`].
const TERABYTE: u64 = 1 << 40;

/// An artifact another thread keeps appending to while mcpres hashes the
/// directory: mcpres reads at most the declared length + 1, so it terminates
/// and reports the length mismatch.
#[test]
fn artifact_growing_while_being_read() {
    use std::io::Write;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};
    let tmp = tempfile::tempdir().unwrap();
    let dir = unpack_valid(tmp.path());
    let declared = fs::metadata(dir.join(OBS)).unwrap().len();
    let mut file = fs::OpenOptions::new()
        .append(true)
        .open(dir.join(OBS))
        .unwrap();
    file.write_all(b" ").unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let writer = {
        let stop = Arc::clone(&stop);
        std::thread::spawn(move || {
            let chunk = vec![b' '; 64 * 1024];
            let mut written: u64 = 0;
            // Bounded, so a stuck test cannot fill the disk.
            while !stop.load(Ordering::Relaxed) && written < (1 << 30) {
                file.write_all(&chunk).unwrap();
                written += chunk.len() as u64;
                std::thread::sleep(Duration::from_millis(1));
            }
            written
        })
    };
    let r = validate_with(&dir, &[]);
    stop.store(true, Ordering::Relaxed);
    let written = writer.join().unwrap();
    let v = r.json();
    assert_eq!(r.code, 1, "{v}");
    assert_eq!(
        v["findings"][0]["code"],
        json!("MCP_RES_ARTIFACT_DIGEST_MISMATCH"),
        "{v}"
    );
    let message = v["findings"][0]["message"].as_str().unwrap();
    assert!(message.contains(OBS), "{message}");
    assert!(
        message.contains(&format!("more than {declared} bytes")),
        "{message}"
    );
    assert!(written > 0);
}

/// An artifact longer than its manifest length, made a terabyte long as a
/// sparse file: mcpres must not read it through (it stops at the declared
/// length + 1, or sooner when the size already tells), so it finishes quickly.
#[test]
fn sparse_terabyte_artifact_is_not_read_through() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = unpack_valid(tmp.path());
    let declared = fs::metadata(dir.join(OBS)).unwrap().len();
    let file = fs::OpenOptions::new()
        .write(true)
        .open(dir.join(OBS))
        .unwrap();
    if let Err(e) = file.set_len(TERABYTE) {
        eprintln!("SKIPPED: this file system cannot hold a 1 TiB sparse file: {e}");
        return;
    }
    drop(file);
    let v = assert_dir_primary(&dir, "MCP_RES_ARTIFACT_DIGEST_MISMATCH");
    let message = v["findings"][0]["message"].as_str().unwrap();
    assert!(
        message.contains(&format!("more than {declared} bytes")),
        "{message}"
    );
}

/// The same for a raw (non-JSON) artifact whose declared length is large but
/// whose file is longer still: the stream stops at the declared length + 1.
#[test]
fn sparse_raw_artifact_longer_than_declared() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = unpack_valid(tmp.path());
    fs::create_dir_all(dir.join("raw")).unwrap();
    let path = dir.join("raw/big.bin");
    let file = fs::File::create(&path).unwrap();
    if let Err(e) = file.set_len(TERABYTE) {
        eprintln!("SKIPPED: this file system cannot hold a 1 TiB sparse file: {e}");
        return;
    }
    drop(file);
    push_artifact(
        &dir,
        json!({
            "path": "raw/big.bin",
            "mediaType": "application/octet-stream",
            "bytes": 4096,
            "sha256": mcpres::json::sha256_hex(&[0u8; 4096]),
        }),
    );
    let r = validate_with(&dir, &[]);
    let v = r.json();
    assert_eq!(r.code, 1, "{v}");
    let mismatches = findings_with(&v, "MCP_RES_ARTIFACT_DIGEST_MISMATCH");
    assert!(
        mismatches
            .iter()
            .any(|m| m.contains("raw/big.bin") && m.contains("more than 4096 bytes")),
        "{v}"
    );
}

/// A single-file input a terabyte long (sparse) is refused by its size before
/// a byte is read.
#[test]
fn sparse_terabyte_single_file_is_refused_unread() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("huge.json");
    let file = fs::File::create(&path).unwrap();
    if let Err(e) = file.set_len(TERABYTE) {
        eprintln!("SKIPPED: this file system cannot hold a 1 TiB sparse file: {e}");
        return;
    }
    drop(file);
    let r = validate_with(&path, &[]);
    let v = r.json();
    assert_eq!(r.code, 2, "{v}");
    assert_eq!(v["diagnostics"], json!([INPUT_INVALID]), "{v}");
    assert!(
        v["message"]
            .as_str()
            .unwrap()
            .contains("over the 16777216-byte document limit"),
        "{v}"
    );
}

/// `{"artifacts":[{"path":"x"}, ... 1,000,000 times]}` as a bundle manifest.
fn million_artifact_dir(tmp: &Path) -> PathBuf {
    let dir = tmp.join("million");
    fs::create_dir(&dir).unwrap();
    let mut text = String::with_capacity(14_000_000);
    text.push_str("{\"artifacts\":[");
    for i in 0..1_000_000 {
        if i > 0 {
            text.push(',');
        }
        text.push_str("{\"path\":\"x\"}");
    }
    text.push_str("]}");
    fs::write(dir.join(MANIFEST), text).unwrap();
    dir
}

/// A manifest listing 1,000,000 artifacts: with the default limits the reader
/// refuses it (over 250,000 values) before anything is allocated per entry.
#[test]
fn manifest_listing_a_million_artifacts_is_refused_by_the_node_limit() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = million_artifact_dir(tmp.path());
    let r = validate_with(&dir, &[]);
    let v = r.json();
    assert_eq!(r.code, 2, "{v}");
    assert_eq!(v["diagnostics"], json!([INPUT_INVALID]), "{v}");
    assert!(
        v["message"]
            .as_str()
            .unwrap()
            .contains("more than 250000 values"),
        "{v}"
    );
}

/// With the node limit raised, the manifest is read, and its artifact count
/// alone (over the schema's 256) ends the check before any file is looked up.
#[test]
fn manifest_listing_a_million_artifacts_is_refused_by_the_artifact_cap() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = million_artifact_dir(tmp.path());
    let r = validate_with(&dir, &["--max-nodes", "3000000"]);
    let v = r.json();
    assert_eq!(r.code, 1, "{v}");
    assert_eq!(v["diagnostics"], json!(["MCP_RES_SCHEMA_INVALID"]), "{v}");
    let message = v["findings"][0]["message"].as_str().unwrap();
    assert!(
        message.contains("lists 1000000 artifacts; the schema allows at most 256"),
        "{message}"
    );
    assert_eq!(v["findings"].as_array().unwrap().len(), 1, "{v}");
}

fn mkfifo(path: &Path) -> bool {
    let made = Command::new("mkfifo").arg(path).status();
    if matches!(made, Ok(s) if s.success()) {
        true
    } else {
        eprintln!("SKIPPED: mkfifo unavailable");
        false
    }
}

/// A FIFO in place of an artifact: reported, never opened (opening a FIFO
/// without a writer would block forever).
#[cfg(unix)]
#[test]
fn fifo_in_place_of_an_artifact_does_not_hang() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = unpack_valid(tmp.path());
    fs::remove_file(dir.join(OBS)).unwrap();
    if !mkfifo(&dir.join(OBS)) {
        return;
    }
    let v = assert_dir_primary(&dir, "MCP_RES_ARTIFACT_PATH_INVALID");
    let message = v["findings"][0]["message"].as_str().unwrap();
    assert!(
        message.contains(&format!("{OBS} is not a regular file")),
        "{message}"
    );
}

/// A FIFO in place of the evidence envelope (which is also reassembled into the
/// bundle): reported twice over, never opened.
#[cfg(unix)]
#[test]
fn fifo_in_place_of_the_evidence_envelope_does_not_hang() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = unpack_valid(tmp.path());
    let evidence = "evidence-envelope.json";
    fs::remove_file(dir.join(evidence)).unwrap();
    if !mkfifo(&dir.join(evidence)) {
        return;
    }
    let v = assert_dir_primary(&dir, "MCP_RES_ARTIFACT_PATH_INVALID");
    assert!(
        v["findings"][0]["message"]
            .as_str()
            .unwrap()
            .contains("evidence-envelope.json is not a regular file"),
        "{v}"
    );
    assert!(
        findings_with(&v, "MCP_RES_ARTIFACT_NON_CANONICAL")
            .iter()
            .any(|m| m.contains("neither a regular file nor a directory")),
        "{v}"
    );
}

/// Make a tree readable by everyone (so another user can walk it).
#[cfg(unix)]
fn open_up(path: &Path) {
    use std::os::unix::fs::PermissionsExt;
    let meta = fs::symlink_metadata(path).unwrap();
    let mode = if meta.is_dir() { 0o755 } else { 0o644 };
    fs::set_permissions(path, fs::Permissions::from_mode(mode)).unwrap();
    if meta.is_dir() {
        for entry in fs::read_dir(path).unwrap() {
            open_up(&entry.unwrap().path());
        }
    }
}

/// Run `mcpres validate --format json PATH` so that file modes bind: as is when
/// they already do; under `setpriv` as user `nobody` when running as root (root
/// ignores mode bits). `None` (with a printed reason) when neither is possible.
#[cfg(unix)]
fn validate_where_modes_bind(path: &Path, probe: &Path) -> Option<Run> {
    let args = [
        OsStr::new("validate"),
        OsStr::new("--format"),
        OsStr::new("json"),
        path.as_os_str(),
    ];
    if fs::File::open(probe).is_err() {
        return Some(run_within(args, QUICK));
    }
    // Mode bits do not bind this user (root or CAP_DAC_OVERRIDE): drop to nobody.
    let check = Command::new("setpriv")
        .args(["--reuid=65534", "--regid=65534", "--clear-groups", "cat"])
        .arg(probe)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status();
    match check {
        Ok(s) if !s.success() => {}
        _ => {
            eprintln!(
                "SKIPPED: running with privileges that ignore file modes and `setpriv` cannot drop them"
            );
            return None;
        }
    }
    let mut command = Command::new("setpriv");
    command
        .args(["--reuid=65534", "--regid=65534", "--clear-groups", BIN])
        .args(args);
    Some(run_command(command, QUICK))
}

/// An artifact nobody may read (mode 000): reported with the reason, exit 1.
#[cfg(unix)]
#[test]
fn unreadable_artifact() {
    use std::os::unix::fs::PermissionsExt;
    let tmp = tempfile::tempdir().unwrap();
    let dir = unpack_valid(tmp.path());
    open_up(tmp.path());
    let target = dir.join(OBS);
    fs::set_permissions(&target, fs::Permissions::from_mode(0o000)).unwrap();
    let Some(r) = validate_where_modes_bind(&dir, &target) else {
        return;
    };
    let v = r.json();
    assert_eq!(r.code, 1, "{v}");
    assert_eq!(
        v["findings"][0]["code"],
        json!("MCP_RES_ARTIFACT_PATH_INVALID"),
        "{v}"
    );
    let message = v["findings"][0]["message"].as_str().unwrap();
    assert!(
        message.contains(OBS)
            && message.contains("cannot be read safely")
            && message.contains("ermission denied"),
        "{message}"
    );
}

/// An unreadable single-file input and an unreadable manifest: exit 2.
#[cfg(unix)]
#[test]
fn unreadable_input_file_and_manifest() {
    use std::os::unix::fs::PermissionsExt;
    let tmp = tempfile::tempdir().unwrap();
    let dir = unpack_valid(tmp.path());
    let single = tmp.path().join("single.json");
    fs::copy(case(VALID_BUNDLE), &single).unwrap();
    open_up(tmp.path());
    fs::set_permissions(&single, fs::Permissions::from_mode(0o000)).unwrap();
    fs::set_permissions(dir.join(MANIFEST), fs::Permissions::from_mode(0o000)).unwrap();
    for (path, probe) in [
        (single.clone(), single.clone()),
        (dir.clone(), dir.join(MANIFEST)),
    ] {
        let Some(r) = validate_where_modes_bind(&path, &probe) else {
            return;
        };
        let v = r.json();
        assert_eq!(r.code, 2, "{v}");
        assert_eq!(v["diagnostics"], json!([INPUT_INVALID]), "{v}");
        let message = v["message"].as_str().unwrap();
        assert!(
            message.contains("cannot read") && message.contains("ermission denied"),
            "{message}"
        );
    }
}

// ---------------------------------------------------- configurable limits

#[test]
fn max_depth_flag_lowers_the_depth_limit() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("deep.json");
    fs::write(&path, nested_arrays(10)).unwrap();
    let r = validate_with(&path, &["--max-depth", "5"]);
    let v = r.json();
    assert_eq!(r.code, 2, "{v}");
    assert!(
        v["message"]
            .as_str()
            .unwrap()
            .contains("nesting deeper than 5 levels"),
        "{v}"
    );
}

#[test]
fn max_bytes_flag_lowers_the_size_limit() {
    let r = validate_with(&case(VALID_BUNDLE), &["--max-bytes", "100"]);
    let v = r.json();
    assert_eq!(r.code, 2, "{v}");
    assert!(
        v["message"]
            .as_str()
            .unwrap()
            .contains("over the 100-byte document limit"),
        "{v}"
    );
}

#[test]
fn max_nodes_and_string_units_flags() {
    let r = validate_with(&case(VALID_BUNDLE), &["--max-nodes", "10"]);
    assert_eq!(r.code, 2);
    assert!(
        r.json()["message"]
            .as_str()
            .unwrap()
            .contains("more than 10 values")
    );
    let r = validate_with(&case(VALID_BUNDLE), &["--max-string-units", "4"]);
    assert_eq!(r.code, 2);
    assert!(
        r.json()["message"]
            .as_str()
            .unwrap()
            .contains("string longer than 4 UTF-16 code units")
    );
}

/// Raised limits accept what the defaults refuse (depth 10,000 stays refused
/// by the default, passes the reader at --max-depth 20000 and fails validation).
#[test]
fn raised_limits_are_honoured() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("deep.json");
    fs::write(&path, nested_arrays(200)).unwrap();
    assert_eq!(validate_with(&path, &[]).code, 2);
    let r = validate_with(&path, &["--max-depth", "300"]);
    assert_eq!(r.code, 1, "{}", r.stdout);
}

/// A declared artifact length over --max-artifact-bytes: refused unread, exit 2.
#[test]
fn max_artifact_bytes_refuses_a_large_declared_artifact() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = unpack_valid(tmp.path());
    let r = validate_with(&dir, &["--max-artifact-bytes", "10"]);
    let v = r.json();
    assert_eq!(r.code, 2, "{v}");
    assert_eq!(v["findings"][0]["code"], json!(INPUT_INVALID), "{v}");
    assert!(
        v["findings"][0]["message"].as_str().unwrap().contains(
            "over the 10-byte artifact limit (--max-artifact-bytes); the file was not read"
        ),
        "{v}"
    );
}

/// A directory whose validation cannot finish in time (a raw artifact declared
/// and stored as one terabyte, allowed by a raised --max-artifact-bytes): the
/// global --timeout ends it with exit 2 and a clear message.
#[test]
fn timeout_ends_a_stuck_directory_validation() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = unpack_valid(tmp.path());
    fs::create_dir_all(dir.join("raw")).unwrap();
    let file = fs::File::create(dir.join("raw/huge.bin")).unwrap();
    if let Err(e) = file.set_len(TERABYTE) {
        eprintln!("SKIPPED: this file system cannot hold a 1 TiB sparse file: {e}");
        return;
    }
    drop(file);
    push_artifact(
        &dir,
        json!({
            "path": "raw/huge.bin",
            "mediaType": "application/octet-stream",
            "bytes": TERABYTE,
            "sha256": "0".repeat(64),
        }),
    );
    let start = Instant::now();
    let r = validate_with(
        &dir,
        &[
            "--max-artifact-bytes",
            &(2 * TERABYTE).to_string(),
            "--timeout",
            "2",
        ],
    );
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(
        r.stderr
            .contains("validation did not finish within 2 s (--timeout); giving up"),
        "{}",
        r.stderr
    );
    assert!(r.stderr.contains(INPUT_INVALID), "{}", r.stderr);
    assert!(start.elapsed() < QUICK);
}

/// --max-depth cannot be raised past the ceiling where recursion would
/// overflow a thread's stack: the flag is refused (exit 2), nothing crashes.
#[test]
fn max_depth_has_a_ceiling() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("deep.json");
    fs::write(&path, nested_arrays(10_000)).unwrap();
    let r = validate_with(&path, &["--max-depth", "100000"]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stdout.is_empty());
    assert!(r.stderr.contains("--max-depth"), "{}", r.stderr);
    let r = validate_with(&path, &["--max-depth", "512"]);
    assert_eq!(r.code, 2);
    assert!(
        r.json()["message"]
            .as_str()
            .unwrap()
            .contains("nesting deeper than 512 levels")
    );
    // Two inputs validated in parallel (on worker threads) at the ceiling.
    let at_ceiling = tmp.path().join("at-ceiling.json");
    fs::write(&at_ceiling, nested_arrays(512)).unwrap();
    let r = run_within(
        [
            OsStr::new("validate"),
            OsStr::new("--format"),
            OsStr::new("json"),
            OsStr::new("--max-depth"),
            OsStr::new("512"),
            at_ceiling.as_os_str(),
            at_ceiling.as_os_str(),
        ],
        QUICK,
    );
    assert_eq!(r.code, 1, "{}", r.stderr);
}

// ------------------------------------ hostile arguments (issue 15)

mod support;

/// Run `mcpres ARGS` in `dir` with the shared command (watchdog, no panic).
fn mcpres_in(dir: &Path, args: &[&OsStr]) -> Run {
    let mut command = support::command();
    command.args(args).current_dir(dir);
    run_command(command, WATCHDOG)
}

fn os(items: &[&str]) -> Vec<std::ffi::OsString> {
    items.iter().map(std::ffi::OsString::from).collect()
}

fn mcpres_str(dir: &Path, args: &[&str]) -> Run {
    let args = os(args);
    let refs: Vec<&OsStr> = args.iter().map(|a| a.as_os_str()).collect();
    mcpres_in(dir, &refs)
}

fn cli_input(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("cli-tests/inputs")
        .join(name)
}

/// The status of `mcpres ARGS` whose standard output (and standard error,
/// when `stderr_too`) is a pipe nobody reads any more; standard error
/// otherwise. A panic (exit 101, "failed printing to stdout") fails.
fn with_closed_pipe(args: &[&OsStr], stderr_too: bool) -> (std::process::ExitStatus, String) {
    let (reader, writer) = std::io::pipe().expect("a pipe");
    drop(reader);
    let mut command = support::command();
    command
        .args(args)
        .env("NO_COLOR", "1")
        .stdin(Stdio::null())
        .stderr(if stderr_too {
            Stdio::from(writer.try_clone().expect("clone the pipe"))
        } else {
            Stdio::piped()
        })
        .stdout(Stdio::from(writer));
    let out = command.output().expect("run mcpres");
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_ne!(out.status.code(), Some(101), "mcpres panicked: {stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(!stderr.contains("Broken pipe"), "{stderr}");
    (out.status, stderr)
}

/// The status a closed pipe ends a command with (as a shell reports a
/// process ended by SIGPIPE), quietly.
const CLOSED_PIPE: i32 = 141;

#[test]
fn closed_stdout_ends_listing_commands_quietly() {
    let v01 = cli_input("v01-bundle.json");
    let valid = case(VALID_BUNDLE);
    let mut cases: Vec<Vec<&OsStr>> = vec![
        vec![OsStr::new("explain"), OsStr::new("--list")],
        vec![OsStr::new("explain"), OsStr::new("WRONG_STOP_REASON")],
        vec![OsStr::new("profiles"), OsStr::new("list")],
        vec![
            OsStr::new("profiles"),
            OsStr::new("show"),
            OsStr::new("oauth-boundary"),
        ],
        vec![
            OsStr::new("digest"),
            OsStr::new("--kind"),
            OsStr::new("bundle"),
            valid.as_os_str(),
        ],
        vec![
            OsStr::new("migrate"),
            OsStr::new("v0.1"),
            OsStr::new("--dry-run"),
            OsStr::new("--input"),
            v01.as_os_str(),
        ],
        vec![OsStr::new("canonicalize"), valid.as_os_str()],
        vec![
            OsStr::new("validate"),
            OsStr::new("--format"),
            OsStr::new("sarif"),
            valid.as_os_str(),
        ],
    ];
    if cfg!(feature = "server") {
        cases.push(vec![OsStr::new("scenarios"), OsStr::new("list")]);
        cases.push(vec![
            OsStr::new("scenarios"),
            OsStr::new("show"),
            OsStr::new("reference-faults"),
        ]);
    }
    for args in &cases {
        let (status, stderr) = with_closed_pipe(args, false);
        assert_eq!(status.code(), Some(CLOSED_PIPE), "{args:?}: {stderr}");
        assert!(
            !stderr.contains("cannot write"),
            "{args:?} is not quiet: {stderr}"
        );
    }
}

/// `mcpres validate X 2>&1 | head -1`: stdout and stderr are the same
/// closed pipe; the summary on stderr must not panic either.
#[test]
fn closed_stdout_and_stderr_end_validate_quietly() {
    let invalid = cli_input("invalid-bundle.json");
    for format in ["human", "json"] {
        let (status, _) = with_closed_pipe(
            &[
                OsStr::new("validate"),
                OsStr::new("--format"),
                OsStr::new(format),
                invalid.as_os_str(),
                invalid.as_os_str(),
            ],
            true,
        );
        assert_eq!(status.code(), Some(CLOSED_PIPE), "{format}");
    }
}

/// The reader goes away after the first line (`| head -1`).
#[test]
fn reader_leaving_after_one_line_does_not_crash() {
    let mut child = support::command()
        .args(["explain", "--list"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn mcpres");
    let mut stdout = std::io::BufReader::new(child.stdout.take().expect("stdout"));
    let mut first = String::new();
    std::io::BufRead::read_line(&mut stdout, &mut first).expect("one line");
    assert!(first.starts_with("MCP_RES_"), "{first}");
    drop(stdout);
    let mut stderr = String::new();
    child
        .stderr
        .take()
        .expect("stderr")
        .read_to_string(&mut stderr)
        .expect("stderr");
    let status = child.wait().expect("wait");
    assert_ne!(status.code(), Some(101), "{stderr}");
    assert!(status.code().is_some(), "killed by a signal: {status:?}");
    assert!(!stderr.contains("panicked"), "{stderr}");
}

/// `mcpres run ... 2>&1 | head`: the run stops as if interrupted, cleans up
/// and ends quietly; no half-written output directory stays behind.
#[cfg(feature = "server")]
#[test]
fn closed_pipe_stops_a_run_quietly_and_leaves_no_partial_output() {
    let exe = support::exe();
    // One bundle, and a campaign of several (20 trials).
    for trials in ["2", "20"] {
        let tmp = tempfile::tempdir().unwrap();
        let out = tmp.path().join("r");
        let (status, _) = with_closed_pipe(
            &[
                OsStr::new("run"),
                OsStr::new("--trials"),
                OsStr::new(trials),
                OsStr::new("-o"),
                out.as_os_str(),
                OsStr::new("--"),
                exe.as_os_str(),
                OsStr::new("serve"),
            ],
            true,
        );
        assert_eq!(status.code(), Some(CLOSED_PIPE), "{trials} trials");
        let leftovers: Vec<_> = fs::read_dir(tmp.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert!(leftovers.is_empty(), "{trials} trials left {leftovers:?}");
    }
}

/// Every output path is checked before anything runs.
#[cfg(feature = "server")]
#[test]
fn run_output_in_a_missing_directory_is_refused_before_any_trial() {
    let tmp = tempfile::tempdir().unwrap();
    let exe = support::exe().display().to_string();
    let r = mcpres_str(
        tmp.path(),
        &["run", "-o", "missing/x/y", "--", &exe, "serve"],
    );
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("--output missing/x/y"), "{}", r.stderr);
    assert!(r.stderr.contains("missing/x"), "{}", r.stderr);
    assert!(!r.stderr.contains("trial"), "trials ran: {}", r.stderr);
    assert!(!tmp.path().join("missing").exists());
    let r = mcpres_str(
        tmp.path(),
        &["run", "--json", "-o", "missing/x/y", "--", &exe, "serve"],
    );
    assert_eq!(r.code, 2);
    let last: Value = serde_json::from_str(r.stdout.trim()).expect("one JSON event");
    assert_eq!(last["event"], "run-finished");
    assert_eq!(last["exitCode"], 2);
}

/// The file outputs of the other commands are checked the same way, before
/// any work: their directory must exist (nothing is created on the way).
#[test]
fn file_outputs_in_a_missing_directory_are_refused_before_any_work() {
    let tmp = tempfile::tempdir().unwrap();
    let valid = case(VALID_BUNDLE).display().to_string();
    let r = mcpres_str(tmp.path(), &["unpack", &valid, "-o", "u"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    for args in [
        vec!["canonicalize", valid.as_str(), "-o", "missing/c.json"],
        vec!["pack", "u", "-o", "missing/p.json"],
        vec!["unpack", valid.as_str(), "-o", "missing/u"],
        vec![
            "trust-policy",
            "init",
            "--id",
            "p",
            "--valid-from",
            "2026-01-01T00:00:00Z",
            "--valid-until",
            "2027-01-01T00:00:00Z",
            "-o",
            "missing/p.json",
        ],
        vec![
            "official",
            "import",
            "--capture",
            "c.json",
            "--checks",
            "k.json",
            "-o",
            "missing/a.json",
        ],
    ] {
        let r = mcpres_str(tmp.path(), &args);
        assert_eq!(r.code, 2, "{args:?}: {}", r.stderr);
        assert!(r.stderr.contains("missing"), "{args:?}: {}", r.stderr);
        assert!(!tmp.path().join("missing").exists(), "{args:?} created it");
    }
}

#[cfg(feature = "server")]
#[test]
fn demo_refuses_an_existing_attested_bundle_before_running() {
    let tmp = tempfile::tempdir().unwrap();
    fs::write(tmp.path().join("d.attested.json"), b"{}").unwrap();
    let r = mcpres_str(tmp.path(), &["demo", "-o", "d"]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(
        r.stderr.contains("d.attested.json already exists"),
        "{}",
        r.stderr
    );
    assert!(!tmp.path().join("d").exists(), "the bundle was written");
    let r = mcpres_str(tmp.path(), &["demo", "-o", "missing/d"]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("--output missing/d"), "{}", r.stderr);
}

fn keygen(dir: &Path, name: &str) -> PathBuf {
    let r = mcpres_str(dir, &["keygen", "--out", name]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    dir.join(format!("{name}.key"))
}

#[test]
fn sign_refuses_empty_and_overlong_identities_up_front() {
    let tmp = tempfile::tempdir().unwrap();
    keygen(tmp.path(), "k");
    let bundle = case(VALID_BUNDLE).display().to_string();
    let long = "a".repeat(100_000);
    for (identity, policy, flag, limit) in [
        ("", "p", "--identity", "1 to 256 characters"),
        (long.as_str(), "p", "--identity", "1 to 256 characters"),
        (
            "ci@example.org",
            "",
            "--trust-policy-id",
            "1 to 128 characters",
        ),
        (
            "ci@example.org",
            &"p".repeat(129),
            "--trust-policy-id",
            "1 to 128 characters",
        ),
    ] {
        let r = mcpres_str(
            tmp.path(),
            &[
                "sign",
                "--key",
                "k.key",
                "--identity",
                identity,
                "--trust-policy-id",
                policy,
                &bundle,
                "-o",
                "s.json",
            ],
        );
        assert_eq!(r.code, 2, "{}", r.stderr);
        assert!(r.stderr.contains(flag), "{}", r.stderr);
        assert!(r.stderr.contains(limit), "{}", r.stderr);
        assert!(!r.stderr.contains("bug in mcpres"), "{}", r.stderr);
        assert!(r.stderr.len() < 300, "the message repeats the value");
        assert!(!tmp.path().join("s.json").exists());
    }
    // At the limits, signing works.
    let r = mcpres_str(
        tmp.path(),
        &[
            "sign",
            "--key",
            "k.key",
            "--identity",
            &"i".repeat(256),
            "--trust-policy-id",
            &"p".repeat(128),
            &bundle,
            "-o",
            "s.json",
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
}

#[test]
fn a_directory_where_a_file_is_expected_is_named_as_a_directory() {
    let tmp = tempfile::tempdir().unwrap();
    fs::create_dir(tmp.path().join("d")).unwrap();
    let valid = case(VALID_BUNDLE).display().to_string();
    for (args, expected) in [
        (vec!["unpack", "d", "-o", "x"], "a single-file bundle"),
        (
            vec!["migrate", "v0.1", "--dry-run", "--input", "d"],
            "a v0.1 conformance bundle file",
        ),
        (
            vec!["verify", "--trust-policy", "d", &valid],
            "a trust policy file",
        ),
    ] {
        let r = mcpres_str(tmp.path(), &args);
        assert_eq!(r.code, 2, "{args:?}: {}", r.stderr);
        assert!(r.stderr.contains("d is a directory"), "{}", r.stderr);
        assert!(r.stderr.contains(expected), "{}", r.stderr);
        assert!(!r.stderr.contains("neither a regular file"), "{}", r.stderr);
    }
}

#[test]
fn a_bundle_given_as_trust_policy_is_an_unusable_option() {
    let tmp = tempfile::tempdir().unwrap();
    let valid = case(VALID_BUNDLE).display().to_string();
    fs::write(tmp.path().join("array.json"), b"[1]").unwrap();
    for policy in [valid.as_str(), "array.json"] {
        let r = mcpres_str(
            tmp.path(),
            &[
                "verify",
                "--format",
                "json",
                "--trust-policy",
                policy,
                &valid,
            ],
        );
        assert_eq!(r.code, 2, "{}", r.stderr);
        assert!(r.stdout.is_empty(), "the bundle was judged: {}", r.stdout);
        assert!(r.stderr.contains("--trust-policy"), "{}", r.stderr);
        assert!(r.stderr.contains("not a trust policy"), "{}", r.stderr);
    }
}

#[test]
fn keygen_refuses_directory_names_and_empty_names() {
    let tmp = tempfile::tempdir().unwrap();
    fs::create_dir(tmp.path().join("dir")).unwrap();
    for name in ["dir/", "dir", "dir/..", ""] {
        let r = mcpres_str(tmp.path(), &["keygen", "--out", name]);
        assert_eq!(r.code, 2, "{name:?}: {}", r.stderr);
        assert!(r.stderr.contains("--out"), "{}", r.stderr);
    }
    assert_eq!(fs::read_dir(tmp.path().join("dir")).unwrap().count(), 0);
    keygen(tmp.path(), "dir/release");
}

#[cfg(unix)]
#[test]
fn add_signer_never_replaces_a_read_only_policy_and_keeps_the_mode() {
    use std::os::unix::fs::PermissionsExt;
    let tmp = tempfile::tempdir().unwrap();
    keygen(tmp.path(), "k");
    let r = mcpres_str(
        tmp.path(),
        &[
            "trust-policy",
            "init",
            "--id",
            "p",
            "--valid-from",
            "2026-01-01T00:00:00Z",
            "--valid-until",
            "2027-01-01T00:00:00Z",
            "-o",
            "p.json",
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let policy = tmp.path().join("p.json");
    let before = fs::read(&policy).unwrap();
    fs::set_permissions(&policy, fs::Permissions::from_mode(0o444)).unwrap();
    let add = |identity: &str| {
        mcpres_str(
            tmp.path(),
            &[
                "trust-policy",
                "add-signer",
                "p.json",
                "--key",
                "k.pub",
                "--identity",
                identity,
            ],
        )
    };
    let r = add("ci@example.org");
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("read-only"), "{}", r.stderr);
    assert_eq!(fs::read(&policy).unwrap(), before);
    assert_eq!(
        fs::metadata(&policy).unwrap().permissions().mode() & 0o777,
        0o444
    );
    fs::set_permissions(&policy, fs::Permissions::from_mode(0o640)).unwrap();
    let r = add("ci@example.org");
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_ne!(fs::read(&policy).unwrap(), before);
    assert_eq!(
        fs::metadata(&policy).unwrap().permissions().mode() & 0o777,
        0o640,
        "the edit reset the policy's mode"
    );
    let r = add("");
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("--identity"), "{}", r.stderr);
}

#[cfg(unix)]
#[test]
fn control_characters_in_file_names_are_escaped_in_human_output() {
    let tmp = tempfile::tempdir().unwrap();
    let name = "x\n✔ fake.json: valid\r\u{1b}[2Kz.json";
    fs::copy(cli_input("invalid-bundle.json"), tmp.path().join(name)).unwrap();
    let r = mcpres_str(tmp.path(), &["validate", name]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(!r.stdout.contains('\r') && !r.stdout.contains('\u{1b}'));
    assert!(
        !r.stdout.lines().any(|l| l.starts_with("✔")),
        "a crafted name faked a valid line:\n{}",
        r.stdout
    );
    assert!(
        r.stdout
            .contains("x\\n✔ fake.json: valid\\r\\u{1b}[2Kz.json"),
        "{}",
        r.stdout
    );
    // The same for a name that cannot be read.
    let r = mcpres_str(tmp.path(), &["validate", "missing\n✔ ok.json"]);
    assert_eq!(r.code, 2);
    assert!(
        !r.stdout.lines().any(|l| l.starts_with("✔")),
        "{}",
        r.stdout
    );
}

#[test]
fn official_import_names_the_flag_and_its_form() {
    let tmp = tempfile::tempdir().unwrap();
    for (flag, value, expected) in [
        (
            "--leg",
            "client=BOGUS",
            "EXECUTED, NOT_EXECUTED, UNTESTABLE",
        ),
        ("--leg", "nobody=EXECUTED", "LEG one of client, server"),
        ("--leg", "client", "LEG=STATUS"),
        ("--pending", "nocolon", "SCENARIO:CHECK"),
        ("--not-scored", ":check", "SCENARIO:CHECK"),
        ("--coverage", "surface=MAYBE", "INSTRUMENTED"),
    ] {
        let r = mcpres_str(
            tmp.path(),
            &[
                "official",
                "import",
                "--capture",
                "c.json",
                "--checks",
                "k.json",
                flag,
                value,
                "-o",
                "a.json",
            ],
        );
        assert_eq!(r.code, 2, "{flag} {value}: {}", r.stderr);
        assert!(r.stderr.contains(flag), "{}", r.stderr);
        assert!(r.stderr.contains(expected), "{}", r.stderr);
        assert!(!r.stderr.contains("pattern"), "{}", r.stderr);
    }
    fs::create_dir(tmp.path().join("results")).unwrap();
    let r = mcpres_str(
        tmp.path(),
        &[
            "official",
            "import",
            "--results",
            "results",
            "--suite",
            "active",
            "-o",
            "a.json",
        ],
    );
    assert_eq!(r.code, 2, "{}", r.stderr);
    for flag in [
        "--package-version",
        "--package-sha256",
        "--repository-commit",
        "--protocol-revision",
        "--requirement-set-sha256",
        "--harness-exit-code",
    ] {
        assert!(r.stderr.contains(flag), "{flag} missing: {}", r.stderr);
    }
    assert!(!r.stderr.contains("--suite"), "{}", r.stderr);
}

#[test]
fn explain_accepts_a_rule_id_and_lists_its_codes() {
    let tmp = tempfile::tempdir().unwrap();
    let r = mcpres_str(tmp.path(), &["explain", "MCPRES-INT-001"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.contains("MCP_RES_DIGEST_MISMATCH"), "{}", r.stdout);
    assert!(
        r.stdout.contains("MCP_RES_PARTIAL_MANIFEST"),
        "{}",
        r.stdout
    );
    let r = mcpres_str(tmp.path(), &["explain", "mcpres-authn-002"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stdout.contains("MCP_RES_ATTESTATION_UNTRUSTED_SIGNER"),
        "{}",
        r.stdout
    );
    let r = mcpres_str(tmp.path(), &["explain", "MCPRES-NOPE-999"]);
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("rule MCPRES-NOPE-999"), "{}", r.stderr);
}

#[test]
fn explain_list_columns_are_aligned() {
    let tmp = tempfile::tempdir().unwrap();
    let r = mcpres_str(tmp.path(), &["explain", "--list"]);
    assert_eq!(r.code, 0);
    // The diagnostics, up to the blank line before the reason codes' section.
    let lines: Vec<&str> = r.stdout.lines().take_while(|l| !l.is_empty()).collect();
    assert!(lines.len() > 10);
    // Each title starts at the same column: the rule column is padded to its
    // widest entry, so the title column starts where the widest rule ends + 1.
    let column = |line: &str, title_chars: usize| line.chars().count() - title_chars;
    let titles: Vec<usize> = lines
        .iter()
        .map(|l| {
            let code = l.split(' ').next().unwrap();
            let title = mcpres::explain::lookup(code).expect("a code").title;
            assert!(l.ends_with(title), "{l}");
            column(l, title.chars().count())
        })
        .collect();
    assert!(titles.iter().all(|c| *c == titles[0]), "{titles:?}");
    // Then every reason code, one a line: code, family and kind, in aligned columns.
    let reasons: Vec<&str> = r.stdout.lines().skip(lines.len() + 2).collect();
    assert_eq!(reasons.len(), mcpres::explain::reasons().count());
    let kinds: Vec<usize> = reasons
        .iter()
        .zip(mcpres::explain::reasons())
        .map(|(l, reason)| {
            assert!(l.starts_with(reason.code), "{l}");
            assert!(l.ends_with(reason.kind.as_str()), "{l}");
            column(l, reason.kind.as_str().len())
        })
        .collect();
    assert!(kinds.iter().all(|c| *c == kinds[0]), "{kinds:?}");
}

#[test]
fn sarif_names_no_placeholder_home() {
    let r = run([
        OsStr::new("validate"),
        OsStr::new("--format"),
        OsStr::new("sarif"),
        case(VALID_BUNDLE).as_os_str(),
    ]);
    let v: Value = serde_json::from_str(&r.stdout).unwrap();
    let driver = &v["runs"][0]["tool"]["driver"];
    assert_eq!(driver["name"], "mcpres");
    assert!(driver.get("informationUri").is_none(), "{driver}");
}

#[cfg(feature = "server")]
#[test]
fn run_help_says_stdio_or_http() {
    let r = run(["--help"]);
    let line = r
        .stdout
        .lines()
        .find(|l| l.trim_start().starts_with("run "))
        .expect("run in the command list");
    assert!(line.contains("stdio") && line.contains("HTTP"), "{line}");
}

#[test]
fn at_is_read_once_as_an_instant() {
    let r = run([
        OsStr::new("verify"),
        OsStr::new("--at"),
        OsStr::new("2026-13-01T00:00:00Z"),
        case(VALID_BUNDLE).as_os_str(),
    ]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("--at"), "{}", r.stderr);
    assert!(r.stderr.contains("RFC 3339"), "{}", r.stderr);
    assert!(r.stdout.is_empty());
}

/// A canonical (one-line) document gets a trimmed excerpt around each of
/// its first findings, at the real line and column.
#[test]
fn one_line_json_gets_a_trimmed_excerpt() {
    let mut doc: Value = serde_json::from_slice(&fs::read(case(VALID_BUNDLE)).unwrap()).unwrap();
    doc["evidence"]["operations"][1]["negativeObservation"]["observedStopReason"] =
        json!("VERSION_UNSUPPORTED");
    doc["evidence"]["evidenceClassClaim"] = json!("X".repeat(3_000));
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("one-line.json");
    let bytes = mcpres::json::canonical::to_vec(&doc).unwrap();
    assert!(!bytes.contains(&b'\n'));
    fs::write(&path, &bytes).unwrap();
    let r = run([OsStr::new("validate"), path.as_os_str()]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    let excerpt = r
        .stdout
        .lines()
        .find(|l| l.contains("\"observedStopReason\":\"VERSION_UNSUPPORTED\""))
        .unwrap_or_else(|| panic!("no excerpt:\n{}", r.stdout));
    assert!(excerpt.chars().count() < 200, "{excerpt}");
    let text = std::str::from_utf8(&bytes).unwrap();
    let at = text
        .find("\"observedStopReason\":\"VERSION_UNSUPPORTED\"")
        .unwrap();
    let column = text[..at].chars().count() + "\"observedStopReason\":".len() + 1;
    assert!(
        r.stdout.contains(&format!("one-line.json:1:{column}]")),
        "column {column}:\n{}",
        r.stdout
    );
    assert!(r.stdout.lines().all(|l| l.chars().count() < 400));
}

/// On a terminal, `migrate` prints a summary for a reader (a pipe gets the
/// JSON line, as the transcripts show). Needs script(1) for a terminal.
#[test]
fn migrate_prints_a_human_summary_on_a_terminal() {
    let script = Path::new("/usr/bin/script");
    if !script.exists() {
        eprintln!("skipped: script(1) is not installed");
        return;
    }
    let command = format!(
        "{} migrate v0.1 --dry-run --input {}",
        support::exe().display(),
        cli_input("v01-bundle.json").display()
    );
    let out = Command::new(script)
        .args(["-qec", &command, "/dev/null"])
        .env("NO_COLOR", "1")
        .stdin(Stdio::null())
        .output()
        .expect("run script");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}");
    assert!(stdout.contains("migration"), "{stdout}");
    assert!(stdout.contains("dry run"), "{stdout}");
    assert!(stdout.contains("output sha256"), "{stdout}");
    assert!(!stdout.trim_start().starts_with('{'), "{stdout}");
}

/// The run summary's columns line up, also for client-fault controls with
/// long names and verdicts.
#[cfg(feature = "server")]
#[test]
fn run_summary_columns_are_aligned_for_client_faults() {
    let tmp = tempfile::tempdir().unwrap();
    let exe = support::exe().display().to_string();
    let r = mcpres_str(
        tmp.path(),
        &[
            "run",
            "--scenario",
            "client-faults",
            "-o",
            "out",
            "--",
            &exe,
            "serve",
        ],
    );
    assert!(r.code == 0 || r.code == 1, "{}", r.stderr);
    let table: Vec<&str> = r
        .stdout
        .lines()
        .take_while(|l| !l.starts_with("result "))
        .collect();
    assert!(table.len() > 2, "{}", r.stdout);
    assert!(table[0].ends_with(" mutant"), "{}", table[0]);
    // The mutant column (the last, without spaces) starts at one column.
    let last_column = |l: &str| l.chars().count() - l.rsplit(' ').next().unwrap().chars().count();
    let at = last_column(table[0]);
    for line in &table[1..] {
        assert_eq!(last_column(line), at, "misaligned:\n{}", table.join("\n"));
    }
}

// Issue 15: inputs that were refused wrongly or accepted wrongly.

#[test]
fn issue15_a_scenario_expecting_a_stop_reason_no_check_gives_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("bogus.toml");
    let text = fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("cli-tests/inputs/scenario-bogus-stop.toml"),
    )
    .unwrap();
    fs::write(&path, text).unwrap();
    let o = Command::new(BIN)
        .args(["scenarios", "check", path.to_str().unwrap()])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("\"BOGUS\" is not a stop reason"),
        "{stderr}"
    );
    assert!(stderr.contains("REQUEST_REFUSED"), "{stderr}");
}

#[test]
fn issue15_date_times_both_references_accept_are_accepted() {
    let tmp = tempfile::tempdir().unwrap();
    for (i, started) in [
        "2026-01-02 03:04:05.000Z",
        "2026-01-02T08:34:05.000+0530",
        "2026-01-02T08:04:05.000+05",
    ]
    .into_iter()
    .enumerate()
    {
        let mut doc = mcpres::produce::builder::synthetic_bundle(6).unwrap();
        doc["evidence"]["run"]["startedAt"] = json!(started);
        mcpres::produce::builder::finalize(&mut doc).unwrap();
        let path = tmp.path().join(format!("b{i}.json"));
        fs::write(&path, serde_json::to_vec(&doc).unwrap()).unwrap();
        let o = Command::new(BIN)
            .args(["validate", "--format", "json", path.to_str().unwrap()])
            .output()
            .unwrap();
        let report: Value = serde_json::from_slice(&o.stdout).unwrap();
        assert_eq!(o.status.code(), Some(0), "{started}: {report}");
    }
}

// Issue 15 items 14 and 2/12/13 live with their subjects (`validate_folders`,
// `harness_signals`, `harness_first_use`); the two inputs below are the folder and
// the policy a user hands to `validate` directly.

#[test]
fn issue15_a_trust_policy_given_to_validate_is_named_as_a_policy() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let r = mcpres_str(root, &["validate", "bundles/example-trust-policy.json"]);
    assert_eq!(r.code, 2, "{}\n{}", r.stdout, r.stderr);
    let text = format!("{}{}", r.stdout, r.stderr);
    assert!(text.contains("pass it with --trust-policy"), "{text}");
}

#[test]
fn issue15_a_folder_of_single_file_bundles_is_validated_file_by_file() {
    let tmp = tempfile::tempdir().unwrap();
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("bundles/example-fixture.json");
    for name in ["a.json", "b.json"] {
        fs::copy(&source, tmp.path().join(name)).unwrap();
    }
    let r = mcpres_str(tmp.path(), &["validate", "."]);
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    assert!(
        r.stderr.contains("checked 2 inputs: 2 valid"),
        "{}\n{}",
        r.stdout,
        r.stderr
    );
}
