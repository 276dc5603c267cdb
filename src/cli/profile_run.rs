//! `mcpres profile run PROFILE -o OUT -- PROGRAM [ARGS...]` (also `mcpres
//! profiles run`): produce a profile evaluation directory from a real run.

use std::path::PathBuf;
use std::time::Duration;

use clap::Args;
use serde_json::json;

use super::output::escaped;
use super::run::RevisionArg;
use super::{CliError, CliResult, Exit};

use mcpres::produce::drive::end;
use mcpres::produce::drive::spawn::resolve_executable;
use mcpres::produce::harness::parse_env;
use mcpres::produce::profile::probe::Launch;
use mcpres::produce::profile::{self, Options, ProfileError, Row};
use mcpres::produce::progress::{Progress, stderr_line};

#[derive(Debug, Args)]
pub struct ProfileRunArgs {
    /// The profile: mcp-res/stdio-transport/v1, mcp-res/protocol-revision/v1,
    /// mcp-res/streamable-http/v1, mcp-res/operational-resilience/v1 or
    /// mcp-res/cache-behavior/v1 (or just `stdio-transport`, ...).
    pub profile: String,
    /// The evaluation directory to create (must not exist).
    #[arg(short, long, value_name = "DIR")]
    pub output: PathBuf,
    /// The protocol revision to evaluate [default: 2025-11-25, or the one revision
    /// the profile covers (cache-behavior: 2026-07-28)].
    #[arg(long, value_enum)]
    pub revision: Option<RevisionArg>,
    /// Run only these checks (comma-separated or repeated): a bounded check set.
    #[arg(long, value_delimiter = ',', value_name = "ID")]
    pub checks: Vec<String>,
    /// How long the subject may take to give its first answer.
    #[arg(long, default_value_t = 10_000, value_name = "MS", value_parser = clap::value_parser!(u64).range(1..))]
    pub startup_timeout_ms: u64,
    /// How long any later answer may take.
    #[arg(long, default_value_t = 5_000, value_name = "MS", value_parser = clap::value_parser!(u64).range(1..))]
    pub answer_timeout_ms: u64,
    /// Checks run at once, each on its own fresh subject processes
    /// (child-tree-cleanup always runs alone). 1 runs them one by one.
    #[arg(long, default_value_t = 4, value_name = "N")]
    pub jobs: usize,
    /// What each subject process runs in: `auto` (user, mount and, over
    /// stdio, network namespaces with every directory an overlay, where the
    /// machine allows it; else no sandbox, said and recorded), `require`
    /// (refuse to run without it) or `off`.
    #[arg(long, value_enum, default_value = "auto")]
    pub sandbox: super::run::SandboxArg,
    /// Environment variable for the subject, K=V (repeatable). Nothing else is
    /// passed.
    #[arg(long = "env", value_name = "K=V")]
    pub env: Vec<String>,
    /// Streamable HTTP (mcp-res/streamable-http/v1): the loopback URL
    /// `http://127.0.0.1:PORT/PATH`. With PROGRAM, mcpres starts a server for
    /// each check; port 0 picks a free port each time, passed to the server
    /// where its arguments or --env say `{port}`. Without PROGRAM, the server
    /// at URL is evaluated as it runs (--subject-artifact required). With
    /// operational-resilience (PROGRAM required), thirteen of its checks run
    /// over Streamable HTTP (the process, leak, bad-input, soak, timeout and
    /// bounded-concurrency checks) and the others are not observed.
    #[arg(long, value_name = "URL")]
    pub http: Option<String>,
    /// The subject requires a bearer credential: mcpres makes a synthetic one
    /// for the run and hands it to the servers it starts in this environment
    /// variable (a server it does not start: read from mcpres's own
    /// environment). It is never written to the evaluation or its artifacts.
    #[arg(long, value_name = "NAME", requires = "http")]
    pub bearer_env: Option<String>,
    /// The `timeout` check's bound: how long a stalled request may stay open
    /// before the subject must close it.
    #[arg(long, default_value_t = 5_000, value_name = "MS", requires = "http", value_parser = clap::value_parser!(u64).range(1..))]
    pub idle_timeout_ms: u64,
    /// The subject's artifact (file or directory) for a server mcpres does
    /// not start; its digest names the subject.
    #[arg(long, value_name = "PATH", requires = "http")]
    pub subject_artifact: Option<PathBuf>,
    /// The declared workload of an operational-resilience run (TOML; see
    /// `mcpres profile workload` for the built-in default it replaces).
    #[arg(long, value_name = "FILE")]
    pub workload: Option<PathBuf>,
    /// Progress as JSON Lines on stdout (check-finished, run-finished)
    /// instead of the closing table.
    #[arg(long)]
    pub json: bool,
    /// The subject: PROGRAM [ARGS...] after `--`, an MCP server (executed
    /// directly, no shell). Required over stdio.
    #[arg(last = true, value_name = "PROGRAM")]
    pub command: Vec<String>,
}

fn full_id(id: &str) -> String {
    if id.contains('/') {
        id.to_string()
    } else {
        format!("mcp-res/{id}/v1")
    }
}

/// The revision asked for; without one, the one revision the profile covers, else
/// 2025-11-25.
fn revision_for(args: &ProfileRunArgs) -> mcpres::model::mcp::Revision {
    use mcpres::model::mcp::Revision;
    if let Some(r) = args.revision {
        return r.into();
    }
    let only = mcpres::profiles::Registry::builtin()
        .ok()
        .and_then(|r| r.get(&full_id(&args.profile)))
        .and_then(|p| match p.protocol_revisions.as_slice() {
            [one] => mcpres::produce::profile::decl::REVISIONS
                .into_iter()
                .find(|r| r.as_str() == one),
            _ => None,
        });
    only.unwrap_or(Revision::V2025_11_25)
}

/// Run the command.
pub fn main(args: ProfileRunArgs) -> CliResult {
    let who = "mcpres profile run";
    let env = parse_env(&args.env).map_err(|e| CliError::Unusable(format!("{who}: {e}")))?;
    // What to run is planned once, before anything about the subject.
    let checks = (!args.checks.is_empty()).then(|| args.checks.clone());
    let http = args.http.clone().map(|url| profile::HttpOptions {
        url,
        bearer_env: args.bearer_env.clone(),
        idle: Duration::from_millis(args.idle_timeout_ms),
        subject_artifact: args.subject_artifact.clone(),
    });
    let unresolved = args.command.split_first().map(|(program, rest)| Launch {
        program: PathBuf::from(program),
        args: rest.to_vec(),
        env: env.clone(),
        sandbox: None,
    });
    let revision = revision_for(&args);
    let plan = profile::prepare(
        &full_id(&args.profile),
        revision,
        checks.as_deref(),
        http.as_ref(),
        unresolved.as_ref(),
    )
    .map_err(|e| CliError::Unusable(format!("{who}: {e}")))?;
    let workload = match &args.workload {
        None => None,
        Some(_) if full_id(&args.profile) != profile::OPERATIONAL => {
            return Err(CliError::Unusable(format!(
                "{who}: --workload is for mcp-res/operational-resilience/v1 only"
            )));
        }
        Some(path) => {
            let text = std::fs::read_to_string(path).map_err(|e| {
                CliError::Unusable(format!("{who}: cannot read {}: {e}", path.display()))
            })?;
            Some(
                mcpres::produce::profile::ops::workload::Workload::parse(&text)
                    .map_err(|e| CliError::Unusable(format!("{who}: {}: {e}", path.display())))?,
            )
        }
    };
    let launch = match args.command.split_first() {
        None if args.http.is_some() => None,
        None => return Err(CliError::Unusable(format!("{who}: no PROGRAM after --"))),
        Some((program, rest)) => {
            let resolved = resolve_executable(program, &escaped(program))
                .map_err(|e| CliError::Unusable(format!("{who}: {e}")))?;
            Some(Launch {
                program: resolved,
                args: rest.to_vec(),
                env,
                sandbox: None,
            })
        }
    };
    let options = Options {
        profile: full_id(&args.profile),
        revision,
        checks,
        http,
        launch,
        out: args.output.clone(),
        startup: Duration::from_millis(args.startup_timeout_ms),
        answer: Duration::from_millis(args.answer_timeout_ms),
        jobs: args.jobs.max(1),
        cancel: std::sync::Arc::default(),
        sandbox: args.sandbox.into(),
        expanded: Default::default(),
        workload,
    };
    let cancel = options.cancel.clone();
    track_descendants(who);
    let mut progress = Progress::new(args.json).with_unit("mcpres profile run: check");
    if options.launch.is_some()
        && options.sandbox == mcpres::produce::drive::sandbox::Mode::Auto
        && let Err(reason) = mcpres::produce::drive::sandbox::available()
    {
        progress.line(format!(
            "no sandbox: {reason}; the subject's files are not observed (recorded in artifacts/cleanup.json)"
        ));
    }
    let json_mode = args.json;
    let out = options.out.clone();
    // The bar from the start, with the time since the command began.
    if !json_mode {
        progress.plan(plan.len());
    }
    let progress = std::cell::RefCell::new(progress);
    let result = run_cancellable_ticking(
        who,
        "no evaluation was written",
        cancel,
        &out,
        move |tx| {
            profile::run_planned(&options, plan, &mut |done, total, row| {
                let _ = tx.send((done, total, row.clone()));
            })
        },
        |(done, total, row): (usize, usize, Row)| {
            let mut progress = progress.borrow_mut();
            if progress.total() == 0 {
                progress.plan(total);
            }
            progress.event(json!({"event": "check-finished", "check": row.id, "verdict": row.verdict.as_str(), "reason": row.reason, "done": done, "total": total}));
            if !json_mode {
                progress.trial_finished(format!(
                    "check {done}/{total}: {} {} ({})",
                    row.id,
                    row.verdict.as_str(),
                    row.reason
                ));
            }
        },
        || progress.borrow_mut().tick(),
    );
    let mut progress = progress.into_inner();
    progress.finish();
    let outcome = match result? {
        Ok(o) => o,
        Err(e) => {
            let (message, failing) = match &e {
                ProfileError::NothingObserved(_) => (format!("{who}: {e}"), true),
                _ => (format!("{who}: {e}"), false),
            };
            if json_mode {
                progress.event(json!({"event": "run-finished", "result": null, "error": message}));
            }
            return Err(if failing {
                CliError::Failing(message)
            } else {
                CliError::Unusable(message)
            });
        }
    };
    // Check what was written with the validator, as any reader would.
    let report = std::fs::read(out.join("evaluation.json"))
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok())
        .map(|doc| mcpres::validate::profile::validate_profile_evaluation(&doc));
    let primary = report
        .as_ref()
        .and_then(|r| r.findings.first().map(|f| f.code.as_str().to_string()));
    if json_mode {
        progress.event(json!({
            "event": "run-finished",
            "result": outcome.result,
            "output": out.display().to_string(),
            "evaluationSha256": outcome.evaluation_sha256,
            "cleanupObserved": outcome.cleanup_observed,
            "identityChanged": outcome.identity_changed,
            "primaryDiagnostic": primary,
        }));
    } else {
        table(&outcome.rows)?;
        outln!(
            "{}: {} ({} check(s): {} passed, {} failed, {} not observed); cleanup observed: {}",
            out.display(),
            outcome.result,
            outcome.rows.len(),
            outcome
                .rows
                .iter()
                .filter(|r| r.verdict.as_str() == "PASS")
                .count(),
            outcome
                .rows
                .iter()
                .filter(|r| r.verdict.as_str() == "FAIL")
                .count(),
            outcome
                .rows
                .iter()
                .filter(|r| r.verdict.as_str() == "NOT_OBSERVED")
                .count(),
            outcome.cleanup_observed
        )?;
        if outcome.identity_changed {
            outln!(
                "{}: the subject changed during the run ({}): its program or a file its arguments name has other bytes than at the start (artifacts/identity.json)",
                out.display(),
                mcpres::judge::profile::SUBJECT_CHANGED
            )?;
        }
        // The run's word covers every check asked for; the evaluation's
        // result covers only the checks it claims (those observed), which
        // is what `mcpres validate` shows: say both.
        let claimed = outcome
            .rows
            .iter()
            .filter(|r| r.verdict.as_str() != "NOT_OBSERVED")
            .count();
        let evaluation_result = std::fs::read(out.join("evaluation.json"))
            .ok()
            .and_then(|b| serde_json::from_slice::<serde_json::Value>(&b).ok())
            .and_then(|d| d["result"].as_str().map(str::to_owned))
            .unwrap_or_else(|| "unknown".into());
        outln!(
            "evaluation.json: result {evaluation_result} over the {claimed} check(s) it claims (run: {}); sha256 {}; mcpres validate: {}",
            outcome.result,
            outcome.evaluation_sha256,
            primary.as_deref().unwrap_or("valid")
        )?;
    }
    Ok(if outcome.result == "FAIL" {
        Exit::Failing
    } else {
        Exit::Valid
    })
}

/// Become a child subreaper, so that descendants that leave a subject's
/// process group are still tracked (a warning when that is refused).
pub(super) fn track_descendants(who: &str) {
    if let Err(e) = end::track_descendants() {
        stderr_line(format!(
            "{who}: cannot become a child subreaper ({e}): descendants that leave a subject's process group are tracked only while their parent lives"
        ));
    }
}

/// Run the blocking `work` (which starts subjects) while watching for
/// termination signals; every message `work` sends goes to `on_message` as
/// it comes. A signal sets `cancel` (no subject starts any more), kills the
/// running subjects' groups and waits for `work` to remove what it wrote.
/// When the command is stopped (a signal, or `work` could not end), what is
/// left is killed and reaped, escaped descendants are swept, and `out` is
/// removed. `not_written` ends the message of a stop ("no evaluation was
/// written").
pub(super) fn run_cancellable<T, M>(
    who: &str,
    not_written: &str,
    cancel: std::sync::Arc<std::sync::atomic::AtomicBool>,
    out: &std::path::Path,
    work: impl FnOnce(tokio::sync::mpsc::UnboundedSender<M>) -> T + Send + 'static,
    on_message: impl FnMut(M),
) -> Result<T, CliError>
where
    T: Send + 'static,
    M: Send + 'static,
{
    run_cancellable_ticking(who, not_written, cancel, out, work, on_message, || {})
}

/// [`run_cancellable`], and `on_tick` once a second while the work runs
/// (progress that shows the time passing while a subject is slow).
pub(super) fn run_cancellable_ticking<T, M>(
    who: &str,
    not_written: &str,
    cancel: std::sync::Arc<std::sync::atomic::AtomicBool>,
    out: &std::path::Path,
    work: impl FnOnce(tokio::sync::mpsc::UnboundedSender<M>) -> T + Send + 'static,
    mut on_message: impl FnMut(M),
    mut on_tick: impl FnMut(),
) -> Result<T, CliError>
where
    T: Send + 'static,
    M: Send + 'static,
{
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| CliError::Unusable(format!("{who}: {e}")))?;
    let result = rt.block_on(async {
        let signalled = mcpres::produce::harness::termination()
            .map_err(|e| CliError::Unusable(format!("{who}: {e}")))?;
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<M>();
        let task = tokio::task::spawn_blocking(move || work(tx));
        tokio::pin!(signalled);
        tokio::pin!(task);
        let mut ticks = tokio::time::interval(Duration::from_secs(1));
        ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
        loop {
            tokio::select! {
                biased;
                sig = &mut signalled => {
                    // Stop starting subjects, end the running ones, and let
                    // the work remove what it wrote before anything else.
                    cancel.store(true, std::sync::atomic::Ordering::SeqCst);
                    end::kill_own_groups();
                    let _ = tokio::time::timeout(Duration::from_secs(20), &mut task).await;
                    return Err(CliError::Signalled {
                        message: format!("{who}: stopped by {}; {not_written}", sig.name()),
                        status: u8::try_from(sig.exit_code()).unwrap_or(2),
                    });
                }
                Some(message) = rx.recv() => on_message(message),
                _ = ticks.tick() => on_tick(),
                r = &mut task => {
                    while let Ok(message) = rx.try_recv() {
                        on_message(message);
                    }
                    return r.map_err(|e| CliError::Unusable(format!("{who}: the run stopped: {e}")));
                }
            }
        }
    });
    if result.is_err() {
        // Interrupted: kill and reap what is left, then remove the output.
        let left = end::kill_and_reap_own(Duration::from_secs(2));
        let _ = end::sweep();
        let _ = std::fs::remove_dir_all(out);
        if !left.is_empty() {
            stderr_line(format!(
                "{who}: {} subject process(es) could not be reaped",
                left.len()
            ));
        }
    }
    result
}

fn table(rows: &[Row]) -> Result<(), CliError> {
    outln!(
        "{:<44} {:<22} {:<22} {:<9} {:<13} REASON",
        "CHECK",
        "POSITIVE",
        "NEGATIVE",
        "MUTANT",
        "VERDICT"
    )?;
    for r in rows {
        outln!(
            "{:<44} {:<22} {:<22} {:<9} {:<13} {}",
            r.id,
            r.positive,
            r.negative,
            r.mutant,
            r.verdict.as_str(),
            r.reason
        )?;
    }
    Ok(())
}
