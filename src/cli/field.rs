//! `mcpres field run MATRIX.toml -o DIR`: a field evidence matrix
//! (MCPRES-FIELD-001), one profile evaluation directory per leg plus
//! matrix.json. See spec/field.md.

use std::path::{Path, PathBuf};

use clap::{Args, Subcommand};
use serde_json::{Value, json};

use super::output::{escaped, escaped_lines, shown};
use super::profile_run::{run_cancellable, track_descendants};
use super::{CliError, CliResult, Exit};

use mcpres::produce::field::{self, Event, FieldError, RunOptions};
use mcpres::produce::progress::Progress;

/// `mcpres field ...`.
#[derive(Debug, Subcommand)]
pub enum FieldAction {
    /// Run a declared matrix of legs (subject, profile, revision, transport)
    /// with the profile runner and write the field evidence matrix directory.
    Run(FieldRunArgs),
}

#[derive(Debug, Args)]
pub struct FieldRunArgs {
    /// The matrix file (TOML, `[[leg]]` tables; see spec/field.md).
    pub matrix: PathBuf,
    /// The matrix directory to create (must not exist).
    #[arg(short, long, value_name = "DIR")]
    pub output: PathBuf,
    /// Checks each leg runs at once, each on its own fresh subject processes
    /// (legs themselves run one after another).
    #[arg(long, default_value_t = 4, value_name = "N")]
    pub jobs: usize,
    /// Progress as JSON Lines on stdout (leg-started, check-finished,
    /// leg-finished, run-finished) instead of the closing table.
    #[arg(long)]
    pub json: bool,
}

/// What the run reports while it goes, owned so it can cross threads.
enum Message {
    LegStarted {
        index: usize,
        total: usize,
        id: String,
    },
    Check {
        leg: String,
        done: usize,
        total: usize,
        check: &'static str,
        verdict: &'static str,
        reason: String,
    },
    LegFinished {
        index: usize,
        total: usize,
        entry: Value,
    },
}

/// Run the command.
pub fn main(action: FieldAction) -> CliResult {
    let FieldAction::Run(args) = action;
    let who = "mcpres field run";
    let matrix = field::load(&args.matrix)
        .map_err(|e| CliError::Unusable(format!("{who}: {}", escaped_lines(&e.to_string()))))?;
    if std::fs::symlink_metadata(&args.output).is_ok() {
        return Err(CliError::Unusable(format!(
            "{who}: {} exists; mcpres never overwrites a field matrix",
            shown(&args.output)
        )));
    }
    let exe = std::env::current_exe()
        .map_err(|e| CliError::Unusable(format!("{who}: cannot name the running mcpres: {e}")))?;
    let options = RunOptions {
        out: args.output.clone(),
        jobs: args.jobs.max(1),
        exe,
        cancel: std::sync::Arc::default(),
    };
    let cancel = options.cancel.clone();
    let out = options.out.clone();
    track_descendants(who);
    let json_mode = args.json;
    let mut progress = Progress::new(json_mode).with_unit("mcpres field run: leg");
    progress.start(matrix.legs.len());
    let result = run_cancellable(
        who,
        "no matrix was written",
        cancel,
        &out,
        move |tx| {
            field::run(&matrix, &options, &mut |event| {
                let message = match event {
                    Event::LegStarted { index, total, id } => Message::LegStarted {
                        index,
                        total,
                        id: id.to_string(),
                    },
                    Event::Check {
                        leg,
                        done,
                        total,
                        row,
                    } => Message::Check {
                        leg: leg.to_string(),
                        done,
                        total,
                        check: row.id,
                        verdict: row.verdict.as_str(),
                        reason: row.reason.clone(),
                    },
                    Event::LegFinished {
                        index,
                        total,
                        entry,
                    } => Message::LegFinished {
                        index,
                        total,
                        entry: entry.clone(),
                    },
                };
                let _ = tx.send(message);
            })
        },
        |message| match message {
            Message::LegStarted { index, total, id } => {
                progress.event(
                    json!({"event": "leg-started", "leg": id, "index": index, "total": total}),
                );
            }
            Message::Check {
                leg,
                done,
                total,
                check,
                verdict,
                reason,
            } => {
                progress.event(json!({"event": "check-finished", "leg": leg, "check": check, "verdict": verdict, "reason": reason, "done": done, "total": total}));
                progress.control_finished(format!(
                    "{}: check {done}/{total} {check} {verdict}",
                    escaped(&leg)
                ));
            }
            Message::LegFinished {
                index,
                total,
                entry,
            } => {
                progress.event(json!({
                    "event": "leg-finished",
                    "leg": entry["id"],
                    "index": index,
                    "total": total,
                    "result": entry["result"],
                    "evaluationSha256": entry["evaluation"]["evaluationSha256"],
                    "notRunReason": entry["notRunReason"],
                }));
                if !json_mode {
                    progress.trial_finished(format!(
                        "leg {index}/{total}: {} {} ({})",
                        escaped(entry["id"].as_str().unwrap_or("")),
                        entry["result"].as_str().unwrap_or(""),
                        escaped(&detail(&entry))
                    ));
                }
            }
        },
    );
    progress.finish();
    let outcome = match result? {
        Ok(o) => o,
        Err(e) => {
            let message = format!("{who}: {e}");
            if json_mode {
                progress.event(json!({"event": "run-finished", "result": null, "error": message}));
            }
            // On a terminal: no control character from the matrix.
            let message = escaped_lines(&message);
            return Err(match e {
                FieldError::Matrix(_)
                | FieldError::Usage(_)
                | FieldError::Cancelled
                | FieldError::Io { .. }
                | FieldError::Store(_) => CliError::Unusable(message),
            });
        }
    };
    // Check what was written with the validator, as any reader would.
    let primary = validate_written(&out);
    if json_mode {
        progress.event(json!({
            "event": "run-finished",
            "result": outcome.result,
            "summary": outcome.summary,
            "output": out.display().to_string(),
            "matrixFileSha256": outcome.matrix_file_sha256,
            "primaryDiagnostic": primary,
        }));
    } else {
        table(&outcome.legs)?;
        let s = &outcome.summary;
        outln!(
            "{}: {} ({} leg(s): {} PASS, {} FAIL, {} INCOMPLETE, {} NOT_RUN)",
            shown(&out),
            outcome.result,
            s["legs"],
            s["pass"],
            s["fail"],
            s["incomplete"],
            s["notRun"]
        )?;
        outln!(
            "matrix.json: sha256 {}; mcpres validate: {}",
            outcome.matrix_file_sha256,
            primary.as_deref().unwrap_or("valid")
        )?;
    }
    Ok(if outcome.result == "PASS" {
        Exit::Valid
    } else {
        Exit::Failing
    })
}

/// The primary diagnostic of the written directory, if any.
fn validate_written(out: &Path) -> Option<String> {
    let loaded = mcpres::bundle::field_dir::load(
        out,
        &mcpres::json::Limits::default(),
        &mcpres::bundle::dir::DirLimits::default(),
    );
    let report = mcpres::validate::field_dir::validate_field_dir(&loaded);
    report.findings.first().map(|f| f.code.as_str().to_string())
}

/// Why a leg is not PASS, in a few words.
fn detail(entry: &Value) -> String {
    if let Some(why) = entry["notRunReason"].as_str() {
        return why.to_string();
    }
    let mut parts = Vec::new();
    for m in entry["declarationMismatches"]
        .as_array()
        .into_iter()
        .flatten()
    {
        parts.push(format!(
            "declared {} {}, observed {}",
            m["field"].as_str().unwrap_or(""),
            m["declared"].as_str().unwrap_or(""),
            m["observed"].as_str().unwrap_or("")
        ));
    }
    for (key, label) in [
        ("failedChecks", "failed"),
        ("notObservedChecks", "not observed"),
    ] {
        let list: Vec<String> = entry[key]
            .as_array()
            .into_iter()
            .flatten()
            .map(|c| {
                format!(
                    "{} {}",
                    c["id"].as_str().unwrap_or(""),
                    c["reason"].as_str().unwrap_or("")
                )
            })
            .collect();
        if !list.is_empty() {
            parts.push(format!("{label}: {}", list.join(", ")));
        }
    }
    if entry["cleanup"]["observed"] == json!(false) {
        parts.push("cleanup not observed".into());
    }
    if parts.is_empty() {
        "every claimed check held".into()
    } else {
        parts.join("; ")
    }
}

fn ratio(v: &Value, a: &str) -> String {
    if v.is_null() {
        return "-".into();
    }
    format!("{}/{}", v[a], v["total"])
}

/// The closing table: every text from the matrix escaped (no control
/// character reaches the terminal), the leg column as wide as the longest id.
fn table(legs: &[Value]) -> Result<(), CliError> {
    let ids: Vec<String> = legs
        .iter()
        .map(|l| escaped(l["id"].as_str().unwrap_or("")))
        .collect();
    let w = ids
        .iter()
        .map(|i| i.chars().count())
        .max()
        .unwrap_or(0)
        .max(20);
    outln!(
        "{:<w$} {:<15} {:<10} {:<28} {:<7} {:<8} {:<8} {:<14} {:<7} {:<10} DETAIL",
        "LEG",
        "TRANSPORT",
        "REVISION",
        "PROFILE",
        "CLEAN",
        "EXPECTED",
        "MUTANTS",
        "INTERRUPTION",
        "CLEANUP",
        "RESULT"
    )?;
    for (l, id) in legs.iter().zip(&ids) {
        let interruption = if l["interruption"].is_null() {
            "-".to_string()
        } else if l["interruption"]["evaluated"] == json!(true) {
            l["interruption"]["checks"]
                .as_array()
                .into_iter()
                .flatten()
                .filter(|c| c["verdict"] != "NOT_EVALUATED")
                .map(|c| c["verdict"].as_str().unwrap_or("").to_string())
                .collect::<Vec<_>>()
                .join(",")
        } else {
            "not evaluated".to_string()
        };
        let cleanup = match l["cleanup"]["observed"].as_bool() {
            Some(true) => "yes",
            Some(false) => "no",
            None => "-",
        };
        outln!(
            "{:<w$} {:<15} {:<10} {:<28} {:<7} {:<8} {:<8} {:<14} {:<7} {:<10} {}",
            id,
            escaped(l["transport"].as_str().unwrap_or("")),
            escaped(l["protocolRevision"].as_str().unwrap_or("")),
            escaped(l["profile"]["id"].as_str().unwrap_or("")),
            ratio(&l["cleanPath"], "held"),
            ratio(&l["expectedFailure"], "held"),
            ratio(&l["wrongReasonControl"], "killed"),
            interruption,
            cleanup,
            escaped(l["result"].as_str().unwrap_or("")),
            escaped(&detail(l))
        )?;
    }
    Ok(())
}
