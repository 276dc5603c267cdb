//! Streaming batches in `mcpres validate` (issue 21, item 1): results in input
//! order (or completion order with `--unordered`), inputs from arguments,
//! `--files-from FILE`, `--files-from -` and a bare `-`, each result written
//! before the list has ended, and the exit codes of a batch as before.

mod support;

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use serde_json::Value;
use support::*;

fn vector(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("cli-tests/inputs")
        .join(name)
}

/// A folder of `n` inputs: valid bundles, invalid bundles, a large valid
/// bundle now and then (so workers finish out of order) and missing paths;
/// returns the paths in order and how many of each kind there are
/// (valid, invalid, unreadable).
fn corpus(dir: &Path, n: usize) -> (Vec<PathBuf>, (usize, usize, usize)) {
    use mcpres::produce::builder::{synthetic_bundle, to_file_bytes};
    let valid = std::fs::read(vector("valid-bundle.json")).unwrap();
    let invalid = std::fs::read(vector("invalid-bundle.json")).unwrap();
    let large = to_file_bytes(&synthetic_bundle(254).unwrap()).unwrap();
    let mut paths = Vec::new();
    let mut counts = (0, 0, 0);
    for i in 0..n {
        let path = dir.join(format!("in-{i:04}.json"));
        match i % 7 {
            0 => {
                std::fs::write(&path, &large).unwrap();
                counts.0 += 1;
            }
            3 => {
                std::fs::write(&path, &invalid).unwrap();
                counts.1 += 1;
            }
            5 => counts.2 += 1, // never written: missing
            _ => {
                std::fs::write(&path, &valid).unwrap();
                counts.0 += 1;
            }
        }
        paths.push(path);
    }
    (paths, counts)
}

fn lines(stdout: &[u8]) -> Vec<Value> {
    text(stdout)
        .lines()
        .map(|l| serde_json::from_str(l).expect("one JSON object per line"))
        .collect()
}

fn files(objects: &[Value]) -> Vec<String> {
    objects
        .iter()
        .map(|o| o["file"].as_str().unwrap().to_owned())
        .collect()
}

fn shown(paths: &[PathBuf]) -> Vec<String> {
    paths.iter().map(|p| p.display().to_string()).collect()
}

fn list_file(dir: &Path, name: &str, paths: &[PathBuf]) -> PathBuf {
    let mut text = String::new();
    for p in paths {
        text.push_str(&p.display().to_string());
        text.push('\n');
    }
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

/// Run `mcpres ARGS` with `input` on standard input.
fn with_stdin(args: &[&str], input: &str, dir: Option<&Path>) -> std::process::Output {
    let mut cmd = command();
    cmd.args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    if let Some(d) = dir {
        cmd.current_dir(d);
    }
    let mut child = cmd.spawn().expect("run mcpres");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    output_within(
        child,
        Duration::from_secs(120),
        "mcpres validate with a list",
    )
}

#[test]
fn json_results_come_one_line_per_input_in_input_order() {
    let tmp = tempfile::tempdir().unwrap();
    let (paths, (valid, invalid, unreadable)) = corpus(tmp.path(), 300);
    let mut args = vec!["validate".to_owned(), "--format".into(), "json".into()];
    args.extend(shown(&paths));
    let o = mcpres(&args);
    assert_eq!(o.status.code(), Some(2), "{}", output_text(&o));
    let objects = lines(&o.stdout);
    assert_eq!(files(&objects), shown(&paths));
    for (object, path) in objects.iter().zip(&paths) {
        let expected = mcpres::validate(path, &Default::default()).to_json();
        assert_eq!(object, &expected, "{}", path.display());
    }
    assert!(
        text(&o.stderr).contains(&format!(
            "checked 300 inputs: {valid} valid, {invalid} invalid, {unreadable} unreadable"
        )),
        "{}",
        text(&o.stderr)
    );
}

#[test]
fn unordered_results_cover_every_input_once() {
    let tmp = tempfile::tempdir().unwrap();
    let (paths, (valid, invalid, unreadable)) = corpus(tmp.path(), 300);
    let list = list_file(tmp.path(), "list", &paths);
    let o = mcpres(&[
        "validate",
        "--unordered",
        "--format",
        "json",
        "--files-from",
        list.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", output_text(&o));
    let objects = lines(&o.stdout);
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    for f in files(&objects) {
        *seen.entry(f).or_default() += 1;
    }
    let expected: BTreeMap<String, usize> = shown(&paths).into_iter().map(|p| (p, 1)).collect();
    assert_eq!(seen, expected);
    let valid_lines = objects.iter().filter(|o| o["valid"] == true).count();
    assert_eq!(valid_lines, valid);
    assert!(
        text(&o.stderr).contains(&format!(
            "checked 300 inputs: {valid} valid, {invalid} invalid, {unreadable} unreadable"
        )),
        "{}",
        text(&o.stderr)
    );
}

#[test]
fn files_from_a_file_follows_the_arguments() {
    let tmp = tempfile::tempdir().unwrap();
    let (paths, _) = corpus(tmp.path(), 20);
    let list = list_file(tmp.path(), "list", &paths[5..]);
    let mut args = vec![
        "validate".to_owned(),
        "--format".into(),
        "json".into(),
        "--files-from".into(),
        list.display().to_string(),
    ];
    args.extend(shown(&paths[..5]));
    let o = mcpres(&args);
    assert_eq!(o.status.code(), Some(2), "{}", output_text(&o));
    assert_eq!(files(&lines(&o.stdout)), shown(&paths));
}

#[test]
fn files_from_standard_input_and_a_bare_dash_read_the_same_list() {
    let tmp = tempfile::tempdir().unwrap();
    let (paths, _) = corpus(tmp.path(), 20);
    let good: Vec<PathBuf> = paths
        .iter()
        .filter(|p| p.exists())
        .take(4)
        .cloned()
        .collect();
    let mut input = String::new();
    for p in &good {
        input.push_str(&format!("{}\n\n", p.display())); // blank lines are skipped
    }
    for args in [
        &["validate", "--format", "json", "--files-from", "-"][..],
        &["validate", "--format", "json", "-"][..],
    ] {
        let o = with_stdin(args, &input, None);
        let objects = lines(&o.stdout);
        assert_eq!(files(&objects), shown(&good), "{args:?}");
        let code = if objects.iter().all(|o| o["valid"] == true) {
            0
        } else {
            1
        };
        assert_eq!(o.status.code(), Some(code), "{args:?}: {}", output_text(&o));
    }
    // The bare `-` is read at its place among the arguments.
    let o = with_stdin(
        &[
            "validate",
            "--format",
            "json",
            good[0].to_str().unwrap(),
            "-",
            good[1].to_str().unwrap(),
        ],
        &format!("{}\n", good[2].display()),
        None,
    );
    assert_eq!(
        files(&lines(&o.stdout)),
        shown(&[good[0].clone(), good[2].clone(), good[1].clone()])
    );
}

#[test]
fn an_empty_list_checks_nothing_and_exits_zero() {
    let tmp = tempfile::tempdir().unwrap();
    let list = tmp.path().join("empty");
    std::fs::write(&list, "").unwrap();
    for format in ["json", "human"] {
        let o = mcpres(&[
            "validate",
            "--format",
            format,
            "--files-from",
            list.to_str().unwrap(),
        ]);
        assert_eq!(o.status.code(), Some(0), "{}", output_text(&o));
        assert!(o.stdout.is_empty(), "{}", output_text(&o));
        assert!(
            text(&o.stderr).contains("checked 0 inputs: 0 valid, 0 invalid, 0 unreadable"),
            "{}",
            text(&o.stderr)
        );
    }
    let o = with_stdin(&["validate", "-"], "", None);
    assert_eq!(o.status.code(), Some(0), "{}", output_text(&o));
}

#[test]
fn a_missing_listed_file_is_an_error_line_and_exit_two() {
    let tmp = tempfile::tempdir().unwrap();
    let missing = tmp.path().join("nowhere.json");
    let list = list_file(
        tmp.path(),
        "list",
        &[vector("valid-bundle.json"), missing.clone()],
    );
    let o = mcpres(&[
        "validate",
        "--format",
        "json",
        "--files-from",
        list.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", output_text(&o));
    let objects = lines(&o.stdout);
    assert_eq!(objects.len(), 2);
    assert_eq!(objects[0]["valid"], true);
    assert_eq!(objects[1]["file"], missing.display().to_string());
    assert_eq!(objects[1]["diagnostics"][0], "MCP_RES_INPUT_INVALID");
    // The human form names it too, and the valid one before it.
    let o = mcpres(&["validate", "--files-from", list.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "{}", output_text(&o));
    let out = text(&o.stdout);
    let ok = out.find("valid-bundle.json: valid").expect(&out);
    let bad = out.find("nowhere.json: unusable input").expect(&out);
    assert!(ok < bad, "{out}");
}

#[test]
fn a_mixture_of_arguments_lists_and_folders_keeps_the_exit_rules() {
    let tmp = tempfile::tempdir().unwrap();
    let folder = tmp.path().join("folder");
    std::fs::create_dir(&folder).unwrap();
    std::fs::copy(vector("valid-bundle.json"), folder.join("a.json")).unwrap();
    std::fs::copy(vector("valid-bundle.json"), folder.join("b.json")).unwrap();
    // Valid only: 0.
    let list = list_file(tmp.path(), "valid", std::slice::from_ref(&folder));
    let o = mcpres(&[
        "validate",
        "--format",
        "json",
        "--files-from",
        list.to_str().unwrap(),
        vector("valid-bundle.json").to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", output_text(&o));
    assert_eq!(
        files(&lines(&o.stdout)),
        shown(&[
            vector("valid-bundle.json"),
            folder.join("a.json"),
            folder.join("b.json")
        ])
    );
    // An invalid one: 1.
    let list = list_file(tmp.path(), "invalid", &[vector("invalid-bundle.json")]);
    let o = mcpres(&[
        "validate",
        "--files-from",
        list.to_str().unwrap(),
        folder.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", output_text(&o));
    assert!(
        text(&o.stderr).contains("checked 3 inputs: 2 valid, 1 invalid, 0 unreadable"),
        "{}",
        text(&o.stderr)
    );
    // An unreadable one as well: 2.
    let list = list_file(
        tmp.path(),
        "mixed",
        &[vector("invalid-bundle.json"), vector("bom.json")],
    );
    let o = mcpres(&[
        "validate",
        "--quiet",
        "--files-from",
        list.to_str().unwrap(),
        folder.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", output_text(&o));
    // `verify` reads lists too.
    let o = mcpres(&[
        "verify",
        "--format",
        "json",
        "--files-from",
        list.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", output_text(&o));
    assert_eq!(lines(&o.stdout).len(), 2);
}

#[test]
fn a_file_named_dash_is_reached_as_dot_slash_dash_and_listed_lines_are_literal() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::copy(vector("valid-bundle.json"), tmp.path().join("-")).unwrap();
    let o = mcpres_in(tmp.path(), &["validate", "--format", "json", "./-"]);
    assert_eq!(o.status.code(), Some(0), "{}", output_text(&o));
    assert_eq!(lines(&o.stdout)[0]["file"], "./-");
    // In a list, `-` is a path like any other.
    let o = with_stdin(
        &["validate", "--format", "json", "--files-from", "-"],
        "-\n",
        Some(tmp.path()),
    );
    assert_eq!(o.status.code(), Some(0), "{}", output_text(&o));
    assert_eq!(lines(&o.stdout)[0]["file"], "-");
}

#[test]
fn unusable_lists_are_refused_before_any_input() {
    let tmp = tempfile::tempdir().unwrap();
    let valid = vector("valid-bundle.json");
    let o = with_stdin(
        &["validate", "--files-from", "-", "-"],
        &format!("{}\n", valid.display()),
        None,
    );
    assert_eq!(o.status.code(), Some(2), "{}", output_text(&o));
    assert!(o.stdout.is_empty());
    assert!(
        text(&o.stderr).contains("standard input is named more than once"),
        "{}",
        text(&o.stderr)
    );
    let missing = tmp.path().join("no-list");
    let o = mcpres(&[
        "validate",
        "--files-from",
        missing.to_str().unwrap(),
        valid.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", output_text(&o));
    assert!(o.stdout.is_empty());
    assert!(
        text(&o.stderr).contains("--files-from") && text(&o.stderr).contains("cannot read"),
        "{}",
        text(&o.stderr)
    );
    let o = mcpres(&["validate", "--files-from", tmp.path().to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "{}", output_text(&o));
    assert!(
        text(&o.stderr).contains("is a directory"),
        "{}",
        text(&o.stderr)
    );
    // No input at all is a usage error, as before.
    let o = mcpres(&["validate"]);
    assert_eq!(o.status.code(), Some(2), "{}", output_text(&o));
}

/// Each result is written when it is known: the first line arrives while the
/// list on standard input is still open.
#[test]
fn a_result_is_written_before_the_list_ends() {
    for unordered in [false, true] {
        let mut cmd = command();
        cmd.args(["validate", "--format", "json", "-"]);
        if unordered {
            cmd.arg("--unordered");
        }
        let mut child = cmd
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("run mcpres");
        let mut stdin = child.stdin.take().unwrap();
        writeln!(stdin, "{}", vector("valid-bundle.json").display()).unwrap();
        stdin.flush().unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut line = String::new();
            let mut reader = BufReader::new(stdout);
            let _ = reader.read_line(&mut line);
            let _ = tx.send(line);
        });
        // A watchdog, not a timing: without streaming the line never comes
        // while standard input stays open.
        let line = match rx.recv_timeout(Duration::from_secs(60)) {
            Ok(line) => line,
            Err(_) => {
                let _ = child.kill();
                let _ = child.wait();
                panic!("no result before the list ended (unordered: {unordered})");
            }
        };
        let object: Value = serde_json::from_str(&line).unwrap();
        assert_eq!(object["valid"], true);
        drop(stdin);
        let status = child.wait().unwrap();
        assert_eq!(status.code(), Some(0));
    }
}

/// A reader that goes away ends the command quietly (141), as before.
#[test]
fn a_closed_standard_output_ends_a_long_list() {
    let tmp = tempfile::tempdir().unwrap();
    let valid = vector("valid-bundle.json");
    let list: Vec<PathBuf> = (0..2000).map(|_| valid.clone()).collect();
    let list = list_file(tmp.path(), "list", &list);
    let mut child = command()
        .args(["validate", "--format", "json", "--files-from"])
        .arg(&list)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut reader = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    reader.read_line(&mut line).unwrap();
    drop(reader);
    let o = output_within(
        child,
        Duration::from_secs(120),
        "mcpres with a closed stdout",
    );
    assert_eq!(o.status.code(), Some(141), "{}", output_text(&o));
}

/// A list line longer than any path (16 MiB of NUL bytes) is refused by its
/// number without being held or echoed; what came before it is checked.
#[test]
fn an_endless_list_line_is_refused_by_its_number() {
    let tmp = tempfile::tempdir().unwrap();
    let list = tmp.path().join("list");
    let mut bytes = format!("{}\n", vector("valid-bundle.json").display()).into_bytes();
    bytes.extend(std::iter::repeat_n(0u8, 16 << 20));
    bytes.extend(b"\nnever-read.json\n");
    std::fs::write(&list, &bytes).unwrap();
    let o = mcpres(&[
        "validate",
        "--format",
        "json",
        "--files-from",
        list.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", output_text(&o));
    let objects = lines(&o.stdout);
    assert_eq!(objects.len(), 1, "{}", output_text(&o));
    assert_eq!(objects[0]["valid"], true);
    let err = text(&o.stderr);
    assert!(err.contains("line 2 is longer than 4096 bytes"), "{err}");
    assert!(!err.contains("never-read"), "{err}");
    assert!(
        o.stdout.len() + o.stderr.len() < 64 * 1024,
        "{}",
        output_text(&o)
    );
    // A line of exactly the limit is read (and names no such file).
    let long = tmp.path().join("x".repeat(200)).join("y".repeat(4000));
    let at_limit = long.to_str().unwrap()[..4096].to_owned();
    let list = tmp.path().join("limit");
    std::fs::write(&list, format!("{at_limit}\n")).unwrap();
    let o = mcpres(&[
        "validate",
        "--format",
        "json",
        "--files-from",
        list.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", output_text(&o));
    assert_eq!(
        lines(&o.stdout)[0]["diagnostics"][0],
        "MCP_RES_INPUT_INVALID"
    );
    assert!(
        !text(&o.stderr).contains("longer than"),
        "{}",
        output_text(&o)
    );
}

/// `--files-from -` fed from `/dev/zero` (no line feed ever) ends with the
/// refusal instead of reading for ever.
#[test]
fn a_list_without_line_feeds_ends() {
    let o = command()
        .args(["validate", "--files-from", "-"])
        .stdin(std::fs::File::open("/dev/zero").unwrap())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", output_text(&o));
    assert!(
        text(&o.stderr).contains("line 1 is longer than 4096 bytes"),
        "{}",
        output_text(&o)
    );
}
