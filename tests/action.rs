//! The repository's CI action (`action.yml`, issue 20 item 3): its shell steps run here as a
//! script, the way a runner runs them (each step's `env:` with the action's inputs filled in,
//! `bash --noprofile --norc -eo pipefail`, `$GITHUB_ENV` and `$GITHUB_OUTPUT` carried between
//! steps), on sample bundles with the mcpres under test. The two steps that `uses:` GitHub's
//! own actions (SARIF upload, artifact upload) cannot run here; the test checks that what they
//! are given is the SARIF file and the HTML report the shell steps wrote.

mod support;

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;
use support::exe;

fn repo(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(rel)
}

/// One step of the composite action, as far as this test needs it.
#[derive(Debug, Default)]
struct Step {
    name: String,
    id: Option<String>,
    uses: Option<String>,
    run: Option<String>,
    env: BTreeMap<String, String>,
    with: BTreeMap<String, String>,
}

/// The action's inputs with their defaults, and its steps. A small reader for the shape of
/// this file (two-space indentation, `run: |` blocks), not a YAML parser.
fn read_action() -> (BTreeMap<String, String>, Vec<Step>) {
    let text = fs::read_to_string(repo("action.yml")).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let indent = |l: &str| l.len() - l.trim_start().len();
    let value = |l: &str| {
        let v = l.split_once(':').map_or("", |(_, v)| v).trim();
        v.trim_matches('"').to_owned()
    };
    let mut defaults = BTreeMap::new();
    let mut steps: Vec<Step> = Vec::new();
    let mut section = "";
    let mut current_input = String::new();
    let mut map: Option<&'static str> = None;
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        i += 1;
        if line.trim().is_empty() {
            continue;
        }
        if indent(line) == 0 {
            section = if line.starts_with("inputs:") {
                "inputs"
            } else if line.starts_with("runs:") {
                "runs"
            } else {
                ""
            };
            continue;
        }
        if section == "inputs" {
            if indent(line) == 2 {
                current_input = line.trim().trim_end_matches(':').to_owned();
            } else if line.trim_start().starts_with("default:") {
                defaults.insert(current_input.clone(), value(line));
            }
            continue;
        }
        if section != "runs" {
            continue;
        }
        let trimmed = line.trim_start();
        if indent(line) == 4 && trimmed.starts_with("- ") {
            steps.push(Step::default());
            map = None;
        }
        let Some(step) = steps.last_mut() else {
            continue;
        };
        let key_line = trimmed.trim_start_matches("- ");
        if indent(line) == 8 {
            if let Some(m) = map {
                let (k, _) = key_line.split_once(':').unwrap();
                let target = if m == "env" {
                    &mut step.env
                } else {
                    &mut step.with
                };
                target.insert(k.trim().to_owned(), value(key_line));
            }
            continue;
        }
        let (key, _) = key_line.split_once(':').unwrap_or((key_line, ""));
        map = None;
        match key {
            "name" => step.name = value(key_line),
            "id" => step.id = Some(value(key_line)),
            "uses" => step.uses = Some(value(key_line)),
            "env" => map = Some("env"),
            "with" => map = Some("with"),
            "run" => {
                let mut script = String::new();
                while i < lines.len() && (lines[i].trim().is_empty() || indent(lines[i]) >= 8) {
                    script.push_str(lines[i].get(8..).unwrap_or(""));
                    script.push('\n');
                    i += 1;
                }
                step.run = Some(script);
            }
            _ => {}
        }
    }
    (defaults, steps)
}

/// `${{ inputs.X }}` and `${{ steps.ID.outputs.Y }}` filled in.
fn expand(
    text: &str,
    inputs: &BTreeMap<String, String>,
    outputs: &BTreeMap<String, BTreeMap<String, String>>,
) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(open) = rest.find("${{") {
        out.push_str(&rest[..open]);
        let close = rest[open..].find("}}").unwrap() + open;
        let expr = rest[open + 3..close].trim();
        let parts: Vec<&str> = expr.split('.').collect();
        let value = match parts.as_slice() {
            ["inputs", name] => inputs
                .get(*name)
                .unwrap_or_else(|| panic!("unknown input {name}")),
            ["steps", id, "outputs", key] => outputs
                .get(*id)
                .and_then(|o| o.get(*key))
                .unwrap_or_else(|| panic!("no output {key} of step {id}")),
            _ => panic!("expression this test cannot evaluate: {expr}"),
        };
        out.push_str(value);
        rest = &rest[close + 2..];
    }
    out.push_str(rest);
    out
}

fn key_values(path: &Path) -> BTreeMap<String, String> {
    fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| l.split_once('='))
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .collect()
}

/// What running the action left: exit code of each shell step by name, and the `with:` of
/// each `uses:` step by action, expanded.
struct Ran {
    exits: Vec<(String, i32)>,
    uses: BTreeMap<String, BTreeMap<String, String>>,
    workspace: tempfile::TempDir,
}

/// Run every shell step of the action in a fresh workspace, with `given` inputs over the
/// defaults. Like a runner, the steps after a failed one do not run (the action's own
/// `if: always()` steps are the `uses:` steps, checked instead of run).
fn run_action(given: &[(&str, &str)]) -> Ran {
    let (mut inputs, steps) = read_action();
    for (k, v) in given {
        inputs.insert((*k).to_owned(), (*v).to_owned());
    }
    let workspace = tempfile::tempdir().unwrap();
    let ws = workspace.path();
    let github_env = ws.join(".github_env");
    fs::write(&github_env, "").unwrap();
    let mut outputs: BTreeMap<String, BTreeMap<String, String>> = BTreeMap::new();
    let mut exits = Vec::new();
    let mut uses = BTreeMap::new();
    let mut failed = false;
    for (n, step) in steps.iter().enumerate() {
        if let Some(action) = &step.uses {
            let with = step
                .with
                .iter()
                .map(|(k, v)| (k.clone(), expand(v, &inputs, &outputs)))
                .collect();
            uses.insert(action.clone(), with);
            continue;
        }
        let Some(script) = &step.run else { continue };
        if failed {
            continue;
        }
        let script_file = ws.join(format!(".step-{n}.sh"));
        fs::write(&script_file, expand(script, &inputs, &outputs)).unwrap();
        let output_file = ws.join(format!(".step-{n}.out"));
        fs::write(&output_file, "").unwrap();
        let mut cmd = Command::new("bash");
        cmd.args(["--noprofile", "--norc", "-eo", "pipefail"])
            .arg(&script_file)
            .current_dir(ws)
            .env("GITHUB_ACTION_PATH", env!("CARGO_MANIFEST_DIR"))
            .env("GITHUB_WORKSPACE", ws)
            .env("GITHUB_ENV", &github_env)
            .env("GITHUB_OUTPUT", &output_file)
            .env("RUNNER_TEMP", ws);
        for (k, v) in key_values(&github_env) {
            cmd.env(k, v);
        }
        for (k, v) in &step.env {
            cmd.env(k, expand(v, &inputs, &outputs));
        }
        let o = cmd.output().unwrap();
        let code = o.status.code().unwrap_or(-1);
        if let Some(id) = &step.id {
            outputs.insert(id.clone(), key_values(&output_file));
        }
        if code != 0 {
            eprintln!(
                "step {:?} exited {code}: {}{}",
                step.name,
                String::from_utf8_lossy(&o.stdout),
                String::from_utf8_lossy(&o.stderr)
            );
            failed = true;
        }
        exits.push((step.name.clone(), code));
    }
    Ran {
        exits,
        uses,
        workspace,
    }
}

fn binary() -> String {
    exe().to_str().unwrap().to_owned()
}

/// Upload steps are given exactly the files the shell steps wrote.
fn uploads(ran: &Ran) -> (PathBuf, PathBuf) {
    let sarif = &ran.uses["github/codeql-action/upload-sarif@v3"]["sarif_file"];
    let report = &ran.uses["actions/upload-artifact@v4"]["path"];
    (
        ran.workspace.path().join(sarif),
        ran.workspace.path().join(report),
    )
}

#[test]
fn action_validates_uploads_sarif_and_attaches_the_report() {
    let bundle = repo("bundles/example-genuine-runtime");
    let fixture = repo("bundles/example-fixture.json");
    let paths = format!("{}\n{}", bundle.display(), fixture.display());
    let ran = run_action(&[("paths", &paths), ("mcpres-binary", &binary())]);
    assert_eq!(ran.exits.len(), 3, "{:?}", ran.exits);
    assert!(ran.exits.iter().all(|(_, c)| *c == 0), "{:?}", ran.exits);
    let (sarif, report) = uploads(&ran);
    let sarif: Value = serde_json::from_slice(&fs::read(&sarif).unwrap()).unwrap();
    assert_eq!(sarif["version"], "2.1.0");
    assert_eq!(sarif["runs"][0]["tool"]["driver"]["name"], "mcpres");
    let page = fs::read_to_string(&report).unwrap();
    assert!(page.contains("id=\"verdict-0\">VALID<"));
    assert!(page.contains("id=\"verdict-1\">VALID<"));
}

#[test]
fn action_fails_on_invalid_evidence_after_writing_both_files() {
    let invalid = repo("cli-tests/inputs/invalid-bundle.json");
    let ran = run_action(&[
        ("paths", invalid.to_str().unwrap()),
        ("mcpres-binary", &binary()),
        ("sarif", "out.sarif"),
        ("report", "out.html"),
    ]);
    // Installation and validation succeed; the last step fails with validate's exit code.
    let codes: Vec<i32> = ran.exits.iter().map(|(_, c)| *c).collect();
    assert_eq!(codes, [0, 0, 1], "{:?}", ran.exits);
    let (sarif, report) = uploads(&ran);
    assert!(sarif.ends_with("out.sarif") && report.ends_with("out.html"));
    let sarif: Value = serde_json::from_slice(&fs::read(&sarif).unwrap()).unwrap();
    let results = sarif["runs"][0]["results"].as_array().unwrap();
    assert!(
        results
            .iter()
            .any(|r| r["ruleId"] == "MCP_RES_WRONG_STOP_REASON"),
        "{sarif}"
    );
    assert!(
        fs::read_to_string(&report)
            .unwrap()
            .contains("id=\"verdict-0\">INVALID<")
    );
}

#[test]
fn action_passes_the_trust_policy_to_attested_bundles() {
    let attested = repo("bundles/example-attested.json");
    let policy = repo("bundles/example-trust-policy.json");
    let ran = run_action(&[
        ("paths", attested.to_str().unwrap()),
        ("trust-policy", policy.to_str().unwrap()),
        ("mcpres-binary", &binary()),
    ]);
    assert!(ran.exits.iter().all(|(_, c)| *c == 0), "{:?}", ran.exits);
    let (_, report) = uploads(&ran);
    assert!(
        fs::read_to_string(&report)
            .unwrap()
            .contains("id=\"authenticity\">SIGNED_WITH_IDENTITY<")
    );
}

/// Issue 40: a path that starts with `-` is a path, never an option (the
/// action passes `--` before the paths), and a glob is taken literally.
#[test]
fn action_takes_paths_literally() {
    let ran = run_action(&[("paths", "-o"), ("mcpres-binary", &binary())]);
    // `-o` does not exist in the workspace: read as a path it is unreadable
    // (validate exits 2 after writing its SARIF), never taken for an option
    // (which would leave no SARIF and fail the validation step itself).
    let codes: Vec<i32> = ran.exits.iter().map(|(_, c)| *c).collect();
    assert_eq!(codes, [0, 0, 2], "{:?}", ran.exits);
    let sarif = ran.workspace.path().join("mcpres.sarif");
    let sarif: Value = serde_json::from_slice(&fs::read(&sarif).unwrap()).unwrap();
    let text = sarif.to_string();
    assert!(text.contains("MCP_RES_INPUT_INVALID"), "{text}");
    // A glob is not expanded.
    let ran = run_action(&[
        ("paths", &format!("{}/*.json", repo("bundles").display())),
        ("mcpres-binary", &binary()),
    ]);
    let codes: Vec<i32> = ran.exits.iter().map(|(_, c)| *c).collect();
    assert_eq!(codes, [0, 0, 2], "{:?}", ran.exits);
}
