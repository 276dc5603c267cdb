//! `mcpres run`: the evaluation harness for stdio subjects, and `mcpres demo`.
//!
//! A run drives a subject process through a scenario's clean control and
//! negative controls for N trials, records every byte before judging it, and
//! writes a v0.2 bundle directory that is validated before the command returns.
//! See spec/harness.md.

pub mod client;
pub mod evidence;
pub mod http;
pub mod recovery;
pub mod scenario;
pub mod scenario_file;
pub mod subject;
pub mod wire;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::json::canonical;
use crate::validate::time::{format_rfc3339_millis, now_millis};
use evidence::{
    ClientRecord, NegativeRecord, PrivacyScanner, RecoveryRecord, RunFacts, SessionRecord,
    TrialRecord,
};
use scenario::Scenario;
use subject::Session;

/// Grace period for a subject to exit on its own after stdin EOF.
const EXIT_GRACE: Duration = Duration::from_secs(3);

/// How long an HTTP subject may take to start listening.
const LISTEN_LIMIT: Duration = Duration::from_secs(20);

/// Arguments of `mcpres run`.
#[derive(Debug, Clone, clap::Args)]
pub struct RunArgs {
    /// Built-in scenario name (see `mcpres scenarios list`), or a scenario file
    /// (TOML or JSON; a path containing `/` or ending in .toml/.json); default
    /// `reference-faults`.
    #[arg(long)]
    pub scenario: Option<String>,
    /// Number of trials (each one clean control plus every negative control).
    #[arg(long, default_value_t = 1)]
    pub trials: usize,
    /// Base seed; trial i uses seed + i - 1.
    #[arg(long, default_value_t = 1)]
    pub seed: u32,
    /// Environment variable for the subject, K=V (repeatable). Nothing else is
    /// passed: not even PATH (PROGRAM itself is resolved by the harness).
    #[arg(long = "env", value_name = "K=V")]
    pub env: Vec<String>,
    /// File or directory whose SHA-256 is the subject's artifact digest
    /// (default: the executable PROGRAM resolves to). A directory is hashed as
    /// the canonical list of its files (path, length, SHA-256).
    #[arg(long, value_name = "PATH")]
    pub subject_artifact: Option<PathBuf>,
    /// Drive the subject over Streamable HTTP at this loopback URL
    /// (`http://127.0.0.1:PORT/mcp`) instead of stdio. The harness still starts
    /// PROGRAM (which must listen there) and kills its process group.
    #[arg(long, value_name = "URL")]
    pub http: Option<String>,
    /// Allow a non-loopback `--http` target listed in this allowlist (JSON:
    /// `{"targets": [{"url": URL, "reviewedTargetSha256": HEX}]}`), whose
    /// reviewed digest must equal the target's digest.
    #[arg(long, value_name = "FILE", requires = "http")]
    pub allow_remote: Option<PathBuf>,
    /// The MCP protocol revision to speak: 2025-11-25 (initialize handshake)
    /// or 2026-07-28 (stateless: server/discover, per-request `_meta`).
    /// Default: the scenario's `protocolRevision`, else 2025-11-25.
    #[arg(long, value_enum)]
    pub revision: Option<scenario::Revision>,
    /// The bundle directory to create (must not exist).
    #[arg(short, long, value_name = "DIR")]
    pub output: PathBuf,
    /// The subject: PROGRAM [ARGS...] after `--` (executed directly, no shell).
    #[arg(last = true, required = true, value_name = "PROGRAM")]
    pub command: Vec<String>,
}

/// Why the harness could not produce evidence (exit 2).
#[derive(Debug, thiserror::Error)]
pub enum HarnessError {
    #[error("{0}")]
    Usage(String),
    #[error(transparent)]
    Subject(#[from] subject::SubjectError),
    #[error("cannot build the bundle: {0}")]
    Bundle(#[from] crate::bundle::builder::FinalizeError),
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("interrupted (Ctrl-C); every subject process group was killed")]
    Interrupted,
    #[error("cannot start the async runtime: {0}")]
    Runtime(#[source] std::io::Error),
}

/// What a finished run produced.
#[derive(Debug, Clone)]
pub struct RunSummary {
    pub output: PathBuf,
    pub doc: Value,
    pub valid: bool,
    pub primary: Option<String>,
    pub evidence_class: Option<String>,
    pub result: &'static str,
    pub classification: &'static str,
    pub rows: Vec<[String; 5]>,
    pub privacy_findings: usize,
}

impl RunSummary {
    /// 0: scenario passed and the bundle is valid; 1: the scenario failed
    /// (bundle written); 2 is reserved for harness errors.
    pub fn exit_code(&self) -> i32 {
        if self.valid && self.result == "PASS" {
            0
        } else {
            1
        }
    }
}

fn progress(line: impl AsRef<str>) {
    eprintln!("mcpres run: {}", line.as_ref());
}

fn parse_env(pairs: &[String]) -> Result<BTreeMap<String, String>, HarnessError> {
    let mut env = BTreeMap::new();
    for p in pairs {
        let Some((k, v)) = p.split_once('=') else {
            return Err(HarnessError::Usage(format!("--env {p:?}: expected K=V")));
        };
        if k.is_empty() || k.contains('\0') || v.contains('\0') {
            return Err(HarnessError::Usage(format!(
                "--env {p:?}: bad name or value"
            )));
        }
        env.insert(k.to_string(), v.to_string());
    }
    Ok(env)
}

fn random_hex(bytes: usize) -> String {
    let mut buf = vec![0u8; bytes];
    getrandom::fill(&mut buf).expect("the OS random source works");
    hex::encode(buf)
}

/// Run the harness: the entry point of `mcpres run`. Returns the exit code.
pub fn main_run(args: RunArgs) -> i32 {
    match run_blocking(args) {
        Ok(summary) => {
            print_summary(&summary);
            summary.exit_code()
        }
        Err(e) => {
            eprintln!("mcpres run: error: {e}");
            2
        }
    }
}

/// Build a runtime and run with Ctrl-C handling: on the signal the run's
/// future is dropped, which kills every subject's process group (their guards)
/// and removes the scratch directory.
pub fn run_blocking(args: RunArgs) -> Result<RunSummary, HarnessError> {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(HarnessError::Runtime)?;
    rt.block_on(async move {
        tokio::select! {
            r = run(args) => r,
            _ = tokio::signal::ctrl_c() => Err(HarnessError::Interrupted),
        }
    })
}

/// Removes the scratch directory on every exit path.
struct Scratch(PathBuf);

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// The whole run.
pub async fn run(args: RunArgs) -> Result<RunSummary, HarnessError> {
    let scenario_name = args
        .scenario
        .as_deref()
        .unwrap_or(scenario::DEFAULT_SCENARIO);
    let scenario =
        scenario_file::resolve(scenario_name).map_err(|e| HarnessError::Usage(e.to_string()))?;
    let revision = args.revision.unwrap_or(scenario.protocol_revision);
    if args.http.is_some() && !scenario.client_faults.is_empty() {
        return Err(HarnessError::Usage(format!(
            "scenario {} has client faults, which are driven over stdio only",
            scenario.name
        )));
    }
    let max_trials = (crate::bundle::builder::MAX_ARTIFACTS - evidence::FIXED_ARTIFACTS)
        / evidence::artifacts_per_trial(&scenario, args.http.is_some());
    if args.trials == 0 || args.trials > max_trials {
        return Err(HarnessError::Usage(format!(
            "--trials must be between 1 and {max_trials} for scenario {} (one bundle holds at most 256 artifacts)",
            scenario.name
        )));
    }
    let env = parse_env(&args.env)?;
    let http = args
        .http
        .as_deref()
        .map(|url| http::parse_target(url, args.allow_remote.as_deref()))
        .transpose()
        .map_err(HarnessError::Usage)?;
    if let Some(target) = &http
        && http::listening(target.addr).await
    {
        return Err(HarnessError::Usage(format!(
            "{} already accepts connections: another process listens there",
            target.addr
        )));
    }
    if args.output.symlink_metadata().is_ok() {
        return Err(HarnessError::Usage(format!(
            "{} already exists",
            args.output.display()
        )));
    }
    let (program_arg, subject_args) = args.command.split_first().expect("clap requires PROGRAM");
    let program = subject::resolve_program(program_arg)
        .ok_or_else(|| HarnessError::Usage(format!("PROGRAM {program_arg:?} is not an existing file (bare names are looked up in the harness's PATH)")))?;
    let artifact_path = args
        .subject_artifact
        .clone()
        // The file the program path finally names (PROGRAM itself is executed
        // under its own name, symlinks kept).
        .unwrap_or_else(|| std::fs::canonicalize(&program).unwrap_or_else(|_| program.clone()));
    let (artifact_sha256, artifact_len) =
        artifact_digest(&artifact_path).map_err(|source| HarnessError::Io {
            path: artifact_path.clone(),
            source,
        })?;

    let run_id = format!("run-{}", random_hex(8));
    let scratch_path = std::env::temp_dir().join(format!("mcpres-{run_id}"));
    std::fs::create_dir(&scratch_path).map_err(|source| HarnessError::Io {
        path: scratch_path.clone(),
        source,
    })?;
    let scratch = Scratch(scratch_path.clone());
    let started_wall = now_millis();
    let epoch = Instant::now();
    let ms = move || u64::try_from(epoch.elapsed().as_millis()).unwrap_or(u64::MAX);
    progress(format!(
        "scenario {} against {} ({} trial(s), seed {}), run {run_id}",
        scenario.name,
        program.display(),
        args.trials,
        args.seed
    ));

    let mut trials = Vec::new();
    for index in 1..=args.trials {
        let seed = args
            .seed
            .wrapping_add(u32::try_from(index - 1).unwrap_or(0));
        let trial = run_trial(
            &scenario,
            index,
            seed,
            epoch,
            &program,
            subject_args,
            &env,
            &scratch_path,
            http.as_ref(),
            revision,
        )
        .await?;
        progress(format!(
            "trial {index}/{}: clean control {} ({}), negative controls {}/{} as expected, {} ms",
            args.trials,
            if trial.clean.passed { "PASS" } else { "FAIL" },
            trial.clean.stop_reason,
            trial.negatives.iter().filter(|n| n.behaved()).count(),
            trial.negatives.len(),
            trial.end_ms - trial.start_ms
        ));
        trials.push(trial);
    }

    // Cleanup, measured: every process group is empty and the scratch directory is gone.
    let cleanup_start = ms();
    let groups: Vec<Value> = trials
        .iter()
        .flat_map(|t| t.sessions().map(move |s| (t.index, s)))
        .map(|(t, s)| {
            let (live, zombies) = subject::group_members(i32::try_from(s.rec.events.first().and_then(|e| e["processGroup"].as_u64()).unwrap_or(0)).unwrap_or(0));
            json!({"trial": t, "session": s.role, "liveAfterKill": s.ended.live_in_group, "liveNow": live, "zombiesNow": zombies})
        })
        .collect();
    drop(scratch);
    let scratch_gone = scratch_path.symlink_metadata().is_err();
    let groups_gone = groups
        .iter()
        .all(|g| g["liveNow"] == 0 && g["liveAfterKill"] == 0);
    let listener_gone = match &http {
        Some(target) => !http::listening(target.addr).await,
        None => true,
    };
    let cleanup_passed = scratch_gone && groups_gone && listener_gone;
    let cleanup_end = ms();
    let cleanup = json!({
        "processGroups": groups,
        "scratchDirectory": {"removed": scratch_gone, "name": scratch_path.file_name().map(|n| n.to_string_lossy().into_owned())},
        "listener": http.as_ref().map(|t| json!({"port": t.addr.port(), "acceptsConnections": !listener_gone})),
        "passed": cleanup_passed,
        "method": "SIGKILL to each subject process group, then /proc scanned for members of the group; scratch directory removed and its absence checked",
    });
    progress(format!(
        "cleanup: process groups gone {groups_gone}, scratch removed {scratch_gone}"
    ));

    let first_clean = trials
        .iter()
        .find(|t| t.clean.server_name.is_some())
        .map(|t| &t.clean);
    let subject_name = first_clean
        .and_then(|c| c.server_name.clone())
        .unwrap_or_else(|| {
            program
                .file_name()
                .map_or("unknown".into(), |n| n.to_string_lossy().into_owned())
        });
    let subject_version = first_clean
        .and_then(|c| c.server_version.clone())
        .unwrap_or_else(|| "UNKNOWN".into());
    let scanner = PrivacyScanner::new(&env);
    let tool = evidence::tool_identity();
    let facts = RunFacts {
        run_id,
        epoch,
        started_wall,
        subject_name: truncate(&scrub(&scanner, &subject_name), 128),
        subject_version: truncate(&scrub(&scanner, &subject_version), 96),
        artifact_sha256,
        artifact_bytes: artifact_len,
        artifact_label: artifact_path
            .file_name()
            .map_or("subject".into(), |n| n.to_string_lossy().into_owned()),
        env_keys: env.keys().cloned().collect(),
        seed: args.seed,
        planned_trials: args.trials,
        tool,
        cleanup,
        cleanup_passed,
        cleanup_span: (cleanup_start, cleanup_end),
        http: http.is_some(),
        target: http.as_ref().map(http::HttpTarget::to_json),
        revision,
        external: false,
    };
    let assembled = evidence::assemble(&scenario, &trials, &facts, &scanner)?;
    for f in &assembled.privacy {
        progress(format!(
            "privacy: redacted {} x {} in {}",
            f.count, f.kind, f.path
        ));
    }
    let built = assembled.builder.build()?;
    let report = crate::validate::validate_document(&built.doc, &Default::default());
    built.write_dir(&args.output)?;
    progress(format!("bundle written to {}", args.output.display()));
    let mut rows = Vec::new();
    for t in &trials {
        rows.push([
            t.index.to_string(),
            "clean".into(),
            if t.clean.passed {
                "PASS".into()
            } else {
                "FAIL".into()
            },
            t.clean.stop_reason.into(),
            "-".into(),
        ]);
        for n in &t.negatives {
            rows.push([
                t.index.to_string(),
                n.control.name.clone(),
                if n.behaved() {
                    "EXPECTED".into()
                } else {
                    "UNEXPECTED".into()
                },
                n.outcome
                    .observed
                    .as_ref()
                    .map_or("NOT_REACHED".into(), |j| {
                        format!("{} {}", j.verdict, j.stop_reason)
                    }),
                match &n.outcome.mutant {
                    None => "not run".into(),
                    Some(_) if n.mutant_killed() => "killed".into(),
                    Some(_) => "survived".into(),
                },
            ]);
        }
        for r in &t.recoveries {
            rows.push([
                t.index.to_string(),
                r.control.name.clone(),
                if r.behaved() {
                    "EXPECTED".into()
                } else {
                    "UNEXPECTED".into()
                },
                format!(
                    "{} after {} attempt(s)",
                    r.outcome.stop_reason,
                    r.outcome.attempts.len()
                ),
                "-".into(),
            ]);
        }
        if let Some(c) = &t.client {
            for r in &c.outcome.results {
                rows.push([
                    t.index.to_string(),
                    format!("client {}", r.fault.name),
                    if r.passed() {
                        "HANDLED".into()
                    } else {
                        "MISHANDLED".into()
                    },
                    format!("{} {}", r.judgement.stop_reason, r.answer),
                    "-".into(),
                ]);
            }
        }
    }
    Ok(RunSummary {
        output: args.output.clone(),
        valid: report.valid,
        primary: report.primary().map(String::from),
        evidence_class: report.evidence_class.clone(),
        result: assembled.result,
        classification: assembled.classification,
        doc: built.doc,
        rows,
        privacy_findings: assembled.privacy.len(),
    })
}

/// The subject's self-reported name and version go into the documents, which
/// are not raw artifacts: they get the same redaction.
fn scrub(scanner: &PrivacyScanner, s: &str) -> String {
    let mut bytes = s.as_bytes().to_vec();
    scanner.redact(&mut bytes);
    String::from_utf8_lossy(&bytes).into_owned()
}

/// SHA-256 and length of the subject artifact. A file is hashed as is; a
/// directory is hashed as the canonical JSON list of its regular files
/// (relative path, length, SHA-256), sorted by path; symlinks are refused.
pub fn artifact_digest(path: &Path) -> std::io::Result<(String, u64)> {
    let meta = std::fs::symlink_metadata(path)?;
    if meta.is_file() {
        let bytes = std::fs::read(path)?;
        return Ok((canonical::sha256_hex(&bytes), bytes.len() as u64));
    }
    if !meta.is_dir() {
        return Err(std::io::Error::other("not a regular file or directory"));
    }
    let mut files = Vec::new();
    let mut stack = vec![path.to_path_buf()];
    let mut total = 0u64;
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir)? {
            let entry = entry?;
            let kind = entry.file_type()?;
            let p = entry.path();
            if kind.is_dir() {
                stack.push(p);
            } else if kind.is_file() {
                let bytes = std::fs::read(&p)?;
                total += bytes.len() as u64;
                let rel = p
                    .strip_prefix(path)
                    .unwrap_or(&p)
                    .to_string_lossy()
                    .into_owned();
                files.push(json!({"path": rel, "bytes": bytes.len(), "sha256": canonical::sha256_hex(&bytes)}));
            } else {
                return Err(std::io::Error::other(format!(
                    "{} is neither a file nor a directory",
                    p.display()
                )));
            }
        }
    }
    files.sort_by(|a, b| {
        canonical::cmp_utf16(
            a["path"].as_str().unwrap_or(""),
            b["path"].as_str().unwrap_or(""),
        )
    });
    let digest = canonical::digest(&Value::Array(files)).map_err(std::io::Error::other)?;
    Ok((digest, total))
}

fn truncate(s: &str, max: usize) -> String {
    let s = if s.is_empty() { "unknown" } else { s };
    s.chars().take(max).collect()
}

#[allow(clippy::too_many_arguments)]
async fn run_trial(
    scenario: &Scenario,
    index: usize,
    seed: u32,
    epoch: Instant,
    program: &Path,
    args: &[String],
    env: &BTreeMap<String, String>,
    scratch: &Path,
    http: Option<&http::HttpTarget>,
    revision: scenario::Revision,
) -> Result<TrialRecord, HarnessError> {
    let ms = || u64::try_from(epoch.elapsed().as_millis()).unwrap_or(u64::MAX);
    let start_ms = ms();
    let mut session = Session::spawn(&format!("t{index}-clean"), epoch, program, args, env, http)?;
    session.set_revision(revision);
    session.wait_listening(LISTEN_LIMIT).await;
    let probe = format!("mcpres-probe-{seed}");
    let clean = if scenario.generic {
        let keys = env.keys().cloned().collect();
        wire::run_clean_generic(&mut session, scenario, &probe, &keys).await
    } else {
        scenario::run_clean(&mut session, scenario, &probe).await
    };
    let (rec, ended) = session.finish(EXIT_GRACE).await;
    let clean_session = SessionRecord {
        role: "clean".into(),
        start_ms,
        rec,
        ended,
    };
    let mut negatives = Vec::new();
    for control in &scenario.negatives {
        let log = scratch.join(format!("t{index}-{}.injection.jsonl", control.name));
        let by_subject = control.injector == scenario::Injector::SubjectFlag;
        let mut argv = args.to_vec();
        if by_subject {
            argv.extend(scenario::fault_args(control, u64::from(seed), &log));
        }
        let start = ms();
        let mut session = Session::spawn(
            &format!("t{index}-{}", control.name),
            epoch,
            program,
            &argv,
            env,
            http,
        )?;
        session.set_revision(revision);
        session.wait_listening(LISTEN_LIMIT).await;
        let (outcome, harness_log) = if by_subject {
            (
                scenario::run_negative(&mut session, scenario, control).await,
                None,
            )
        } else {
            wire::run_wire_negative(&mut session, scenario, control, u64::from(seed)).await
        };
        let (rec, ended) = session.finish(EXIT_GRACE).await;
        let injection_log = if by_subject {
            let bytes = std::fs::read(&log).ok();
            let _ = std::fs::remove_file(&log);
            bytes
        } else {
            harness_log
        };
        let fault_injected = injection_log.as_deref().is_some_and(|bytes| {
            bytes.split(|b| *b == b'\n').any(|line| {
                serde_json::from_slice::<Value>(line)
                    .is_ok_and(|v| v["event"] == "injection" && v["fault"] == control.fault)
            })
        });
        negatives.push(NegativeRecord {
            control: control.clone(),
            outcome,
            session: SessionRecord {
                role: control.name.clone(),
                start_ms: start,
                rec,
                ended,
            },
            injection_log,
            fault_injected,
        });
    }
    let spawner = recovery::Spawner {
        epoch,
        program,
        args,
        env,
        http,
        listen_limit: LISTEN_LIMIT,
        revision,
    };
    let mut recoveries = Vec::new();
    for control in &scenario.recoveries {
        let log = scratch.join(format!("t{index}-{}.injection.jsonl", control.name));
        let run = recovery::run_recovery(&spawner, scenario, control, index, seed, &log).await?;
        let mut sessions = Vec::new();
        for (i, session) in run.sessions.into_iter().enumerate() {
            let start = session.spawned_ms;
            let (rec, ended) = session.finish(EXIT_GRACE).await;
            sessions.push(SessionRecord {
                role: if i == 0 {
                    control.name.clone()
                } else {
                    format!("{}-restart", control.name)
                },
                start_ms: start,
                rec,
                ended,
            });
        }
        let injection_log = std::fs::read(&log).ok();
        let _ = std::fs::remove_file(&log);
        let fault_injected = injection_log.as_deref().is_some_and(|bytes| {
            bytes.split(|b| *b == b'\n').any(|line| {
                serde_json::from_slice::<Value>(line)
                    .is_ok_and(|v| v["event"] == "injection" && v["fault"] == control.fault)
            })
        });
        recoveries.push(RecoveryRecord {
            control: control.clone(),
            outcome: run.outcome,
            sessions,
            injection_log,
            fault_injected,
        });
    }
    let client = if scenario.client_faults.is_empty() {
        None
    } else {
        let start = ms();
        let mut session =
            Session::spawn(&format!("t{index}-client"), epoch, program, args, env, http)?;
        session.set_revision(revision);
        session.wait_listening(LISTEN_LIMIT).await;
        let outcome = client::run_client_faults(&mut session, scenario).await;
        let (rec, ended) = session.finish(EXIT_GRACE).await;
        Some(ClientRecord {
            outcome,
            session: SessionRecord {
                role: "client".into(),
                start_ms: start,
                rec,
                ended,
            },
        })
    };
    Ok(TrialRecord {
        index,
        seed,
        start_ms,
        end_ms: ms(),
        clean,
        clean_session,
        negatives,
        recoveries,
        client,
    })
}

fn print_summary(s: &RunSummary) {
    println!(
        "{:<6} {:<18} {:<11} {:<32} mutant",
        "trial", "control", "outcome", "verdict / stop reason"
    );
    for r in &s.rows {
        println!(
            "{:<6} {:<18} {:<11} {:<32} {}",
            r[0], r[1], r[2], r[3], r[4]
        );
    }
    println!(
        "result {}  stability {}  evidence class {}  bundle {} ({})  privacy findings redacted: {}",
        s.result,
        s.classification,
        s.evidence_class.as_deref().unwrap_or("-"),
        s.output.display(),
        if s.valid {
            "valid".to_string()
        } else {
            format!("INVALID: {}", s.primary.as_deref().unwrap_or("?"))
        },
        s.privacy_findings
    );
}

/// `mcpres scenarios list`: each built-in scenario and its controls.
pub fn list_scenarios() -> i32 {
    for s in scenario::builtins() {
        let default = if s.name == scenario::DEFAULT_SCENARIO {
            " (default)"
        } else {
            ""
        };
        println!("{}{default}: {}", s.name, s.description);
        describe_controls(&s);
    }
    0
}

fn describe_controls(s: &scenario::Scenario) {
    for n in &s.negatives {
        println!(
            "  negative control {}: fault {}@{} ({}) expects {} {}; mutant {}",
            n.name,
            n.fault,
            n.trigger,
            n.injector.method(),
            n.expected_verdict,
            n.expected_stop,
            n.mutant.id()
        );
    }
    for r in &s.recoveries {
        let p = &r.policy;
        println!(
            "  recovery control {}: fault {}@request-2 (SUBJECT_FAULT_FLAG); policy {} (retry limit {}, backoff {}..{} ms, attempt timeout {} ms, time limit {} ms, {}); expects {}",
            r.name,
            r.fault,
            p.id,
            p.retry_limit,
            p.initial_backoff_ms,
            p.max_backoff_ms,
            p.attempt_timeout_ms,
            p.time_limit_ms,
            p.side_effect_model,
            if r.expect_recovered {
                "recovery"
            } else {
                "no recovery"
            }
        );
    }
    for c in &s.client_faults {
        println!(
            "  client fault {}: {} (HARNESS_CLIENT_INPUT) expects {}{}",
            c.name,
            c.kind.id(),
            c.expect_label(),
            c.error_code.map(|e| format!(" {e}")).unwrap_or_default()
        );
    }
}

/// `mcpres scenarios show NAME`: the built-in scenario's file.
pub fn show_scenario(name: &str) -> i32 {
    match scenario_file::builtin_text(name) {
        Some(text) => {
            print!("{text}");
            0
        }
        None => {
            eprintln!(
                "mcpres scenarios show: no built-in scenario {name:?} (built-ins: {})",
                scenario_file::BUILTINS.map(|(n, _)| n).join(", ")
            );
            2
        }
    }
}

/// `mcpres scenarios check FILE`: 0 when the file is a usable scenario, 1 when
/// it breaks the schema or a rule, 2 when it cannot be read.
pub fn check_scenario(path: &Path) -> i32 {
    match scenario_file::load(path) {
        Ok(s) => {
            println!(
                "{}: scenario {} is valid ({} negative, {} recovery, {} client-fault controls)",
                path.display(),
                s.name,
                s.negatives.len(),
                s.recoveries.len(),
                s.client_faults.len()
            );
            describe_controls(&s);
            0
        }
        Err(
            e @ (scenario_file::ScenarioError::Read { .. }
            | scenario_file::ScenarioError::TooLarge(_)),
        ) => {
            eprintln!("mcpres scenarios check: {e}");
            2
        }
        Err(e) => {
            eprintln!("mcpres scenarios check: {e}");
            1
        }
    }
}

/// Arguments of `mcpres demo`.
#[derive(Debug, Clone, clap::Args)]
pub struct DemoArgs {
    /// The bundle directory to create (default: ./mcpres-demo-<random>).
    #[arg(short, long, value_name = "DIR")]
    pub output: Option<PathBuf>,
}

/// `mcpres demo`: run the default scenario (3 trials) against this executable's
/// reference server, validate, sign with an ephemeral key and verify.
pub fn main_demo(args: DemoArgs) -> i32 {
    let exe = match std::env::current_exe() {
        Ok(p) => p,
        Err(e) => {
            eprintln!("mcpres demo: cannot locate this executable: {e}");
            return 2;
        }
    };
    let output = args
        .output
        .unwrap_or_else(|| PathBuf::from(format!("mcpres-demo-{}", random_hex(4))));
    let run_args = RunArgs {
        scenario: None,
        trials: 3,
        seed: 1,
        env: Vec::new(),
        subject_artifact: None,
        http: None,
        allow_remote: None,
        revision: None,
        output: output.clone(),
        command: vec![
            exe.display().to_string(),
            "serve".into(),
            "--transport".into(),
            "stdio".into(),
        ],
    };
    let summary = match run_blocking(run_args) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("mcpres demo: error: {e}");
            return 2;
        }
    };
    print_summary(&summary);
    if !summary.valid || summary.result != "PASS" {
        eprintln!("mcpres demo: the run did not pass; not signing");
        return summary.exit_code();
    }
    match sign_and_verify(&summary.doc, &output) {
        Ok((path, classification)) => {
            println!("bundle:          {}", output.display());
            println!(
                "attested bundle: {} (ephemeral key, never written)",
                path.display()
            );
            println!("verified:        {classification}");
            0
        }
        Err(e) => {
            eprintln!("mcpres demo: signing failed: {e}");
            2
        }
    }
}

fn sign_and_verify(doc: &Value, output: &Path) -> Result<(PathBuf, String), String> {
    use crate::attest::{keys::KeyPair, policy, sign};
    let key = KeyPair::generate().map_err(|e| e.to_string())?;
    let now = now_millis();
    let identity = "mcpres-demo-ephemeral";
    let options = sign::SignOptions {
        signer_identity: identity.into(),
        trust_policy_id: "policy/mcpres-demo".into(),
        signing_time: format_rfc3339_millis(now),
        transparency: None,
        claim: None,
    };
    let attested = sign::attest(doc, &key, &options).map_err(|e| e.to_string())?;
    let mut trust = policy::init(
        "policy/mcpres-demo",
        "1.0.0",
        &format_rfc3339_millis(now - 3_600_000),
        &format_rfc3339_millis(now + 3_600_000),
    )
    .map_err(|e| e.to_string())?;
    policy::add_signer(&mut trust, &key.public().fingerprint(), identity)
        .map_err(|e| e.to_string())?;
    let report = crate::validate::validate_document(
        &attested,
        &crate::validate::Options {
            trust_policy: Some(trust),
            ..Default::default()
        },
    );
    if !report.valid {
        return Err(format!(
            "verification failed: {}",
            report.primary().unwrap_or("?")
        ));
    }
    let mut name = output
        .file_name()
        .map(|n| n.to_os_string())
        .unwrap_or_default();
    name.push(".attested.json");
    let path = output.with_file_name(name);
    let bytes = crate::bundle::builder::to_file_bytes(&attested).map_err(|e| e.to_string())?;
    crate::bundle::dir::write_new(&path, &bytes).map_err(|e| format!("{}: {e}", path.display()))?;
    let classification = report
        .extra
        .get("authenticityClassification")
        .and_then(Value::as_str)
        .unwrap_or("valid")
        .to_string();
    Ok((path, classification))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn artifact_digest_of_files_and_directories() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("pkg");
        std::fs::create_dir_all(dir.join("bin")).unwrap();
        std::fs::write(dir.join("bin/server"), b"#!server").unwrap();
        std::fs::write(dir.join("README"), b"hello").unwrap();
        let (file_sha, file_len) = artifact_digest(&dir.join("README")).unwrap();
        assert_eq!(file_sha, canonical::sha256_hex(b"hello"));
        assert_eq!(file_len, 5);
        let (a, len) = artifact_digest(&dir).unwrap();
        assert_eq!(len, 13);
        let listing = json!([
            {"path": "README", "bytes": 5, "sha256": canonical::sha256_hex(b"hello")},
            {"path": "bin/server", "bytes": 8, "sha256": canonical::sha256_hex(b"#!server")},
        ]);
        assert_eq!(a, canonical::digest(&listing).unwrap());
        std::fs::write(dir.join("bin/server"), b"#!server2").unwrap();
        assert_ne!(artifact_digest(&dir).unwrap().0, a);
        std::os::unix::fs::symlink(dir.join("README"), dir.join("link")).unwrap();
        assert!(artifact_digest(&dir).is_err());
    }

    #[test]
    fn env_pairs_are_parsed_strictly() {
        let env = parse_env(&["A=1".into(), "B=x=y".into(), "C=".into()]).unwrap();
        assert_eq!(env["B"], "x=y");
        assert_eq!(env["C"], "");
        assert!(parse_env(&["NOEQ".into()]).is_err());
        assert!(parse_env(&["=v".into()]).is_err());
    }
}
