//! `mcpres run` campaigns and `--json` progress, end to end: the real binary
//! drives `mcpres serve --transport stdio`; every part is validated from disk
//! with `mcpres validate`, and campaign.json is recomputed from the parts.
#![cfg(feature = "server")]

mod support;

use std::collections::BTreeSet;
use std::io::BufRead;
use std::path::Path;
use std::process::{Command, Output, Stdio};

use serde_json::{Value, json};

use support::*;

/// `mcpres run ARGS -o OUT -- mcpres serve --transport stdio SUBJECT_ARGS`.
fn run_args(out: &Path, args: &[&str], subject_args: &[&str]) -> Vec<String> {
    let mut v: Vec<String> = vec!["run".into()];
    v.extend(args.iter().map(|s| s.to_string()));
    v.extend(["-o".into(), out.display().to_string(), "--".into()]);
    v.push(exe().display().to_string());
    v.extend(["serve", "--transport", "stdio"].map(String::from));
    v.extend(subject_args.iter().map(|s| s.to_string()));
    v
}

fn run_reference(out: &Path, args: &[&str], subject_args: &[&str]) -> Output {
    mcpres(&run_args(out, args, subject_args))
}

fn show(o: &Output) -> String {
    format!("stdout:\n{}\nstderr:\n{}", text(&o.stdout), text(&o.stderr))
}

/// Every stdout line is one JSON object with an `event` member.
fn events(stdout: &[u8]) -> Vec<Value> {
    text(stdout)
        .lines()
        .map(|l| {
            let v: Value = serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l:?}"));
            assert!(v["event"].is_string(), "{l}");
            v
        })
        .collect()
}

/// The events apart from the per-control ones, and the per-control ones.
fn split_controls(events: Vec<Value>) -> (Vec<Value>, Vec<Value>) {
    events
        .into_iter()
        .partition(|e| e["event"] != "control-finished")
}

fn kinds(events: &[Value]) -> Vec<&str> {
    events
        .iter()
        .map(|e| e["event"].as_str().unwrap())
        .collect()
}

/// `mcpres validate --format json DIR`: exit status and the report.
fn cli_validate(dir: &Path) -> (Option<i32>, Value) {
    let o = command()
        .args(["validate", "--format", "json"])
        .arg(dir)
        .output()
        .expect("run mcpres validate");
    let report: Value =
        serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{e}: {}", show(&o)));
    (o.status.code(), report)
}

/// The trial durations of a bundle: each trial's PROCESS_EXECUTION
/// observation spans the whole trial (`obs-tN-process`), keyed by N.
fn trial_durations(doc: &Value) -> Vec<(usize, u64)> {
    doc["evidence"]["observations"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|o| o["type"] == "PROCESS_EXECUTION")
        .map(|o| {
            let id = o["id"].as_str().unwrap();
            let n = id
                .strip_prefix("obs-t")
                .and_then(|r| r.strip_suffix("-process"))
                .unwrap()
                .parse()
                .unwrap();
            (n, o["durationMs"].as_u64().unwrap())
        })
        .collect()
}

/// Minimum, median and p95 as the trial summary defines them (rank ceil(q n)).
fn stats(mut d: Vec<u64>) -> Value {
    d.sort_unstable();
    let pick = |q: f64| d[((q * d.len() as f64).ceil() as usize).clamp(1, d.len()) - 1];
    json!({"minimum": d[0], "median": pick(0.5), "p95": pick(0.95)})
}

/// Check a campaign directory against its parts, recomputing every
/// campaign-wide number from the bundles on disk. Returns campaign.json.
fn check_campaign(out: &Path, trials: usize, seed: u64, parts: usize) -> Value {
    let mut names: Vec<String> = std::fs::read_dir(out)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    let mut want: Vec<String> = (1..=parts).map(|k| format!("part-{k:03}")).collect();
    want.insert(0, "campaign.json".into());
    assert_eq!(names, want);
    let campaign: Value =
        serde_json::from_slice(&std::fs::read(out.join("campaign.json")).unwrap()).unwrap();
    assert_eq!(campaign["schemaVersion"], "mcpres.campaign/1");
    assert_eq!(campaign["plannedTrials"], trials);
    assert_eq!(campaign["completedTrials"], trials);
    assert_eq!(campaign["trialsPerPartCap"], 8);
    assert_eq!(campaign["scenario"], "reference-faults");
    assert_eq!(campaign["seeds"]["first"], seed);
    assert_eq!(campaign["seeds"]["last"], seed + trials as u64 - 1);
    let entries = campaign["parts"].as_array().unwrap();
    assert_eq!(entries.len(), parts);

    let mut next_trial = 1usize;
    let mut success = 0u64;
    let mut failure = 0u64;
    let mut hashes = BTreeSet::new();
    let mut durations = Vec::new();
    let mut all_valid = true;
    let mut all_pass = true;
    for (k, entry) in entries.iter().enumerate() {
        let dir = out.join(entry["path"].as_str().unwrap());
        assert_eq!(entry["path"], format!("part-{:03}", k + 1));
        // Each part is a complete bundle that `mcpres validate` accepts as is.
        let (code, report) = cli_validate(&dir);
        let (doc, lib_report) = load(&dir);
        assert_eq!(report["valid"], lib_report.valid);
        assert_eq!(entry["valid"], lib_report.valid);
        all_valid &= lib_report.valid;
        assert_eq!(code, Some(if lib_report.valid { 0 } else { 1 }));
        assert_eq!(report["evidenceClass"], "GENUINE_RUNTIME");
        let summary = &doc["evidence"]["trialSummary"];
        // The recorded digest and fingerprint are those of the part on disk.
        assert_eq!(entry["bundleDigest"], doc["integrity"]["bundleDigest"]);
        assert_eq!(
            entry["scenarioFingerprint"],
            doc["evidence"]["scenario"]["fingerprint"]
        );
        assert_eq!(entry["result"], doc["statement"]["result"]);
        all_pass &= doc["statement"]["result"] == "PASS";
        assert_eq!(
            entry["stabilityClassification"],
            doc["statement"]["stabilityClassification"]
        );
        assert_eq!(entry["stabilityClassification"], summary["classification"]);
        // Trials are numbered globally and the seeds continue.
        let first = entry["trials"]["first"].as_u64().unwrap() as usize;
        let last = entry["trials"]["last"].as_u64().unwrap() as usize;
        assert_eq!(first, next_trial);
        next_trial = last + 1;
        let n = last + 1 - first;
        assert!((1..=8).contains(&n));
        assert_eq!(summary["completedTrials"], n);
        let seeds: Vec<u64> = (first..=last).map(|i| seed + i as u64 - 1).collect();
        assert_eq!(summary["seeds"], json!(seeds));
        assert_eq!(entry["seeds"], json!(seeds));
        let mut d = trial_durations(&doc);
        d.sort_unstable();
        assert_eq!(
            d.iter().map(|(i, _)| *i).collect::<Vec<_>>(),
            (first..=last).collect::<Vec<_>>()
        );
        for i in first..=last {
            assert!(dir.join(format!("raw/trial-{i}/messages.jsonl")).is_file());
        }
        // The part's own summary agrees with its observations.
        let own: Vec<u64> = d.iter().map(|(_, ms)| *ms).collect();
        assert_eq!(summary["durationMs"], stats(own.clone()));
        durations.extend(own);
        success += summary["counts"]["success"].as_u64().unwrap();
        failure += summary["counts"]["failure"].as_u64().unwrap();
        assert_eq!(
            entry["counts"],
            json!({"success": summary["counts"]["success"], "failure": summary["counts"]["failure"], "notRun": 0})
        );
        for h in summary["distinctOutcomeHashes"].as_array().unwrap() {
            hashes.insert(h.as_str().unwrap().to_string());
        }
    }
    assert_eq!(next_trial, trials + 1);
    // Campaign-wide numbers, recomputed from the parts.
    assert_eq!(
        campaign["counts"],
        json!({"success": success, "failure": failure, "incomplete": 0})
    );
    assert_eq!(campaign["distinctOutcomeHashes"], json!(hashes));
    assert_eq!(campaign["durationMs"], stats(durations));
    let classification = if hashes.len() > 1 {
        "FLAKY"
    } else if failure == 0 {
        "REPEATED_STABLE"
    } else {
        "ENVIRONMENT_DEPENDENT"
    };
    assert_eq!(campaign["stabilityClassification"], classification);
    assert_eq!(campaign["allPartsValid"], all_valid);
    assert_eq!(
        campaign["result"],
        if all_valid && all_pass {
            "PASS"
        } else {
            "FAIL"
        }
    );
    campaign
}

#[test]
fn ten_trials_make_a_campaign_of_two_valid_parts() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("campaign");
    let o = run_reference(&out, &["--trials", "10", "--seed", "5", "--json"], &[]);
    assert_eq!(o.status.code(), Some(0), "{}", show(&o));
    let campaign = check_campaign(&out, 10, 5, 2);
    assert_eq!(campaign["result"], "PASS");
    assert_eq!(campaign["stabilityClassification"], "REPEATED_STABLE");
    assert_eq!(
        campaign["parts"][0]["trials"],
        json!({"first": 1, "last": 5, "count": 5})
    );

    // The --json events tell the same story: a control-finished event for
    // each of the 10 trials' four controls (clean and three negatives).
    let (ev, controls) = split_controls(events(&o.stdout));
    assert_eq!(controls.len(), 40);
    let mut want = vec!["run-started"];
    for _part in 0..2 {
        want.extend(["trial-finished"; 5]);
        want.extend(["cleanup", "part-written"]);
    }
    want.push("run-finished");
    assert_eq!(kinds(&ev), want);
    assert_eq!(ev[0]["parts"], 2);
    assert_eq!(ev[0]["trials"], 10);
    let finished: Vec<&Value> = ev
        .iter()
        .filter(|e| e["event"] == "trial-finished")
        .collect();
    for (i, t) in finished.iter().enumerate() {
        assert_eq!(t["trial"], i + 1);
        assert_eq!(t["of"], 10);
        assert_eq!(t["seed"], 5 + i);
        assert_eq!(t["part"], if i < 5 { 1 } else { 2 });
        assert_eq!(t["clean"], "PASS");
        assert_eq!(t["negativesAsExpected"], 3);
        assert_eq!(t["negatives"], 3);
        assert!(t["durationMs"].is_u64());
    }
    let written: Vec<&Value> = ev.iter().filter(|e| e["event"] == "part-written").collect();
    for (k, w) in written.iter().enumerate() {
        let p = &campaign["parts"][k];
        assert_eq!(
            Path::new(w["path"].as_str().unwrap()),
            out.join(p["path"].as_str().unwrap())
        );
        assert_eq!(w["valid"], true);
        assert_eq!(w["result"], p["result"]);
        assert_eq!(w["bundleDigest"], p["bundleDigest"]);
    }
    let last = ev.last().unwrap();
    assert_eq!(last["campaign"], true);
    assert_eq!(last["result"], campaign["result"]);
    assert_eq!(last["classification"], campaign["stabilityClassification"]);
    assert_eq!(last["valid"], true);
    assert_eq!(last["exitCode"], 0);
    assert_eq!(Path::new(last["output"].as_str().unwrap()), out);
}

#[test]
fn json_events_of_a_single_bundle_run_agree_with_the_bundle() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("bundle");
    let o = run_reference(&out, &["--trials", "2", "--seed", "3", "--json"], &[]);
    assert_eq!(o.status.code(), Some(0), "{}", show(&o));
    // Up to the cap the output is one bundle at DIR, as before campaigns.
    assert!(out.join("evidence-envelope.json").is_file());
    assert!(!out.join("campaign.json").exists());
    let (ev, controls) = split_controls(events(&o.stdout));
    let names: Vec<&str> = controls
        .iter()
        .map(|c| c["control"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "clean control",
            "negative control schema-violation",
            "negative control reorder",
            "negative control malformed-message"
        ]
        .repeat(2)
    );
    assert!(controls.iter().all(|c| c["durationMs"].is_u64()));
    assert_eq!(controls[0]["outcome"], "PASS (COMPLETED)");
    assert_eq!(
        kinds(&ev),
        [
            "run-started",
            "trial-finished",
            "trial-finished",
            "cleanup",
            "part-written",
            "run-finished"
        ]
    );
    // No summary table on stdout: every line parsed as JSON above.
    assert!(!text(&o.stdout).contains("verdict / stop reason"));
    let (doc, report) = load(&out);
    assert!(report.valid, "{:?}", report.findings);
    let summary = &doc["evidence"]["trialSummary"];
    let durations: Vec<(usize, u64)> = trial_durations(&doc);
    for (i, t) in ev[1..3].iter().enumerate() {
        assert_eq!(t["trial"], i + 1);
        assert_eq!(t["seed"], summary["seeds"][i]);
        let d = durations.iter().find(|(n, _)| *n == i + 1).unwrap().1;
        assert_eq!(t["durationMs"], d);
    }
    assert_eq!(ev[3]["passed"], true);
    assert_eq!(ev[4]["bundleDigest"], doc["integrity"]["bundleDigest"]);
    let last = &ev[5];
    assert_eq!(last["campaign"], false);
    assert_eq!(last["result"], doc["statement"]["result"]);
    assert_eq!(last["classification"], summary["classification"]);
    assert_eq!(last["classification"], "REPEATED_STABLE");
    assert_eq!(last["valid"], report.valid);
    assert_eq!(last["evidenceClass"], "GENUINE_RUNTIME");
    assert_eq!(last["exitCode"], 0);
    assert_eq!(Path::new(last["output"].as_str().unwrap()), out);
    // Human progress still goes to stderr (stderr is not a terminal here:
    // one line per trial).
    let stderr = text(&o.stderr);
    assert!(
        stderr.contains("mcpres run: trial 1/2: clean control PASS"),
        "{stderr}"
    );
    assert!(
        stderr.contains("mcpres run: trial 2/2: clean control PASS"),
        "{stderr}"
    );
}

#[test]
fn failing_parts_make_the_campaign_fail_with_exit_1() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("campaign");
    // The subject's own fault breaks every clean control's echo call.
    let o = run_reference(
        &out,
        &["--trials", "9"],
        &["--fault", "dependency-failure@tool-echo"],
    );
    assert_eq!(o.status.code(), Some(1), "{}", show(&o));
    let campaign = check_campaign(&out, 9, 1, 2);
    assert_eq!(campaign["result"], "FAIL");
    assert_eq!(campaign["counts"]["success"], 0);
    // The same failure every time: not stable success, not flaky.
    assert_eq!(campaign["stabilityClassification"], "ENVIRONMENT_DEPENDENT");
    let stdout = text(&o.stdout);
    assert!(stdout.contains("campaign result FAIL"), "{stdout}");
    assert!(stdout.contains("part-002"), "{stdout}");
}

#[test]
fn an_interrupted_campaign_leaves_no_output_even_after_a_written_part() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("campaign");
    let mut child = command()
        .args(run_args(&out, &["--trials", "12", "--json"], &[]))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let mut lines = std::io::BufReader::new(stdout).lines();
    let mut seen = Vec::new();
    // Wait for the first part to be written, then interrupt during the second.
    for line in lines.by_ref() {
        let v: Value = serde_json::from_str(&line.unwrap()).unwrap();
        let done = v["event"] == "part-written";
        seen.push(v);
        if done {
            break;
        }
    }
    assert_eq!(seen.last().unwrap()["event"], "part-written");
    let status = Command::new("/bin/kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let rest: Vec<Value> = lines
        .map(|l| serde_json::from_str(&l.unwrap()).unwrap())
        .collect();
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(130), "stderr:\n{}", text(&o.stderr));
    let last = rest.last().expect("a run-finished event");
    assert_eq!(last["event"], "run-finished");
    assert_eq!(last["exitCode"], 130);
    assert!(
        last["error"]
            .as_str()
            .unwrap()
            .contains("interrupted by SIGINT")
    );
    // An unfinished campaign is not output: the directory, with the part
    // already written, is removed (spec/harness.md, "Signals").
    assert!(
        !out.exists(),
        "an interrupted campaign left {}",
        out.display()
    );
}

#[test]
fn trial_counts_out_of_range_are_harness_errors() {
    let tmp = tempfile::tempdir().unwrap();
    for n in ["0", "10001"] {
        let out = tmp.path().join(format!("out-{n}"));
        let o = run_reference(&out, &["--trials", n, "--json"], &[]);
        assert_eq!(o.status.code(), Some(2), "{}", show(&o));
        assert!(!out.exists());
        let ev = events(&o.stdout);
        assert_eq!(kinds(&ev), ["run-finished"]);
        assert_eq!(ev[0]["exitCode"], 2);
        assert!(ev[0]["error"].as_str().unwrap().contains("--trials"));
    }
    // An existing campaign directory is not reused.
    let out = tmp.path().join("existing");
    std::fs::create_dir(&out).unwrap();
    let o = run_reference(&out, &["--trials", "9"], &[]);
    assert_eq!(o.status.code(), Some(2), "{}", show(&o));
    assert_eq!(std::fs::read_dir(&out).unwrap().count(), 0);
}
