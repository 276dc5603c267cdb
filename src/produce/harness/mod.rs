//! The evaluation harness behind `mcpres run` and `mcpres demo` (their flags,
//! printing and exit codes are in the binary's `cli/run.rs`): [`run_blocking`]
//! takes checked [`RunOptions`] and returns a [`RunOutcome`] or a [`HarnessError`].
//!
//! A run drives a subject process through a scenario's clean control and
//! negative controls for N trials, records every byte before judging it, and
//! writes a v0.2 bundle directory that is validated before the command returns.
//! More trials than one bundle holds become a campaign: several bundles plus
//! `campaign.json` (see `campaign`). See spec/harness.md.

pub mod campaign;
pub mod client;
pub mod contract;
pub mod evidence;
pub mod files;
pub mod http;
pub mod oracle;
pub mod privacy;
pub mod record;
pub mod recovery;
pub mod scenario;
pub mod scenario_file;
pub mod subject;
pub mod vocab;
pub mod wire;

use std::collections::BTreeMap;
use std::ops::RangeInclusive;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::json::time::{format_rfc3339_millis, now_millis};
use crate::produce::drive::ident::{artifact_digest, random_hex};
use crate::produce::drive::{end, proc, sandbox};
use crate::produce::progress::{self, Progress};
use campaign::{PartEntry, Stats, TrialStat};
use evidence::{
    ClientRecord, NegativeRecord, RecoveryRecord, RunFacts, SessionRecord, TrialRecord,
};
use privacy::PrivacyScanner;
use subject::Session;
use vocab::Scenario;

/// Grace period for a subject to exit on its own after stdin EOF.
const EXIT_GRACE: Duration = Duration::from_secs(3);

/// How long an HTTP subject may take to start listening.
const LISTEN_LIMIT: Duration = Duration::from_secs(20);

/// What a run needs, checked by the caller before any work: the command
/// line's `mcpres run` flags (see `cli/run.rs`) map onto these fields.
#[derive(Debug, Clone)]
pub struct RunOptions {
    /// Built-in scenario name or scenario file (default: `reference-faults`).
    pub scenario: Option<String>,
    /// Number of trials (default: the scenario's `defaults.trials`, else 1).
    pub trials: Option<usize>,
    /// Base seed (default: the scenario's `defaults.seed`, else 1).
    pub seed: Option<u32>,
    /// The subject's whole environment (see [`parse_env`]).
    pub env: BTreeMap<String, String>,
    /// File or directory whose SHA-256 is the subject's artifact digest.
    pub subject_artifact: Option<PathBuf>,
    /// Streamable HTTP target URL instead of stdio.
    pub http: Option<String>,
    /// Allowlist admitting a non-loopback `http` target.
    pub allow_remote: Option<PathBuf>,
    /// The protocol revision (default: the scenario's).
    pub revision: Option<vocab::Revision>,
    /// The bundle (or campaign) directory to create; must not exist.
    pub output: PathBuf,
    /// PROGRAM and its arguments; empty when `http` names a server the
    /// harness does not start.
    pub command: Vec<String>,
    /// The tool the generic clean control calls (`--tool`), instead of
    /// `echo` or a tool annotated read-only; `generic` scenarios only. With
    /// `tool-contracts`, the tools to exercise (several allowed).
    pub tools: Vec<String>,
    /// The named tool's arguments (`--tool-args`, a JSON object; default `{}`).
    pub tool_args: Option<String>,
    /// What a subject the harness starts runs in (`--sandbox`).
    pub sandbox: crate::produce::drive::sandbox::Mode,
}

/// Why the harness could not produce evidence.
#[derive(Debug, thiserror::Error)]
pub enum HarnessError {
    #[error("{0}")]
    Usage(String),
    #[error(transparent)]
    Subject(#[from] subject::SubjectError),
    #[error("cannot build the bundle: {0}")]
    Bundle(#[from] crate::produce::builder::FinalizeError),
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// A termination signal (SIGINT, SIGTERM or SIGHUP) ended the run: every
    /// subject was killed and reaped, the scratch directory and any
    /// unfinished output removed.
    #[error(
        "interrupted by {}; every subject process group was killed and reaped, and no output was kept",
        .0.name()
    )]
    Interrupted(Termination),
    #[error("cannot start the async runtime: {0}")]
    Runtime(#[source] std::io::Error),
    /// Signing or verifying the demo's bundle failed.
    #[error("{0}")]
    Sign(String),
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
    /// The scenario passed and the bundle is valid.
    pub fn passed(&self) -> bool {
        self.valid && self.result == "PASS"
    }
}

/// What a finished campaign produced (the parts are on disk; only their
/// summary entries are kept).
#[derive(Debug, Clone)]
pub struct CampaignSummary {
    pub output: PathBuf,
    /// The `campaign.json` document as written.
    pub doc: Value,
    pub parts: Vec<PartEntry>,
    pub result: &'static str,
    pub classification: &'static str,
}

impl CampaignSummary {
    /// Every part passed and is valid.
    pub fn passed(&self) -> bool {
        self.result == "PASS" && self.parts.iter().all(|p| p.valid)
    }
}

/// A finished run: one bundle, or a campaign of several.
#[derive(Debug, Clone)]
pub enum RunOutcome {
    Bundle(RunSummary),
    Campaign(CampaignSummary),
    /// A tool-contracts run: one bundle per tool.
    Contracts(ContractsSummary),
}

impl RunOutcome {
    /// The bundle, or every part of the campaign, passed and is valid.
    pub fn passed(&self) -> bool {
        match self {
            RunOutcome::Bundle(s) => s.passed(),
            RunOutcome::Campaign(c) => c.passed(),
            RunOutcome::Contracts(c) => c.passed(),
        }
    }
}

/// The subject's environment from `K=V` pairs (`--env`): a name is not
/// empty, and neither name nor value holds NUL.
pub fn parse_env(pairs: &[String]) -> Result<BTreeMap<String, String>, HarnessError> {
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

/// A termination signal the harness handles (see [`run_blocking`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Termination {
    /// SIGINT (Ctrl-C).
    Interrupt,
    /// SIGTERM (`kill PID`).
    Terminate,
    /// SIGHUP (the terminal went away).
    Hangup,
}

impl Termination {
    /// The signal's name.
    pub fn name(self) -> &'static str {
        match self {
            Termination::Interrupt => "SIGINT",
            Termination::Terminate => "SIGTERM",
            Termination::Hangup => "SIGHUP",
        }
    }

    /// The conventional exit status of a command ended by the signal:
    /// 128 + its number (130, 143, 129).
    pub fn exit_code(self) -> i32 {
        128 + match self {
            Termination::Interrupt => 2,
            Termination::Terminate => 15,
            Termination::Hangup => 1,
        }
    }
}

/// Resolves with the first of SIGINT, SIGTERM or SIGHUP. The handlers are
/// installed when this is called (inside the runtime, before the run starts),
/// not when the future is first polled.
pub fn termination() -> std::io::Result<impl std::future::Future<Output = Termination>> {
    use tokio::signal::unix::{SignalKind, signal};
    let mut int = signal(SignalKind::interrupt())?;
    let mut term = signal(SignalKind::terminate())?;
    let mut hup = signal(SignalKind::hangup())?;
    Ok(async move {
        tokio::select! {
            _ = int.recv() => Termination::Interrupt,
            _ = term.recv() => Termination::Terminate,
            _ = hup.recv() => Termination::Hangup,
        }
    })
}

/// Build a runtime and run, handling SIGINT, SIGTERM and SIGHUP alike: on
/// the signal the run's future is dropped, which kills every subject's process
/// group (their guards), removes the scratch directory and an unfinished
/// campaign directory; then every subject still unreaped is killed and reaped
/// here, and so is every escaped descendant (see [`end::sweep`]). The result
/// is then [`HarnessError::Interrupted`], and nothing is left in `-o DIR`.
///
/// The calling process becomes a child subreaper first (see
/// [`end::track_descendants`]): call this only from a process that starts no
/// children of its own besides the subjects (the `mcpres run` and `mcpres
/// demo` commands), because every other child it has is taken for an escaped
/// descendant of a subject.
pub fn run_blocking(args: RunOptions, reporter: &mut Progress) -> Result<RunOutcome, HarnessError> {
    if !args.command.is_empty()
        && let Err(e) = end::track_descendants()
    {
        progress::stderr_line(format!(
            "cannot become a child subreaper ({e}): descendants that leave a subject's process group are tracked only while their parent lives"
        ));
    }
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(HarnessError::Runtime)?;
    let outcome = rt.block_on(async move {
        let signalled = termination().map_err(HarnessError::Runtime)?;
        tokio::select! {
            biased;
            sig = signalled => Err(HarnessError::Interrupted(sig)),
            r = run(args, reporter) => r,
        }
    });
    // The runtime is shut down first, which waits for its blocking work: a
    // session being prepared ahead (`Spawner::prepare`) is finished and
    // discarded by then (its helper killed, its stage removed), so nothing
    // it makes outlives the cleanup below.
    drop(rt);
    // Every session is finished or dropped (its group killed) by now. After a
    // signal the dropped subjects are not reaped yet (tokio reaps them only
    // while its runtime runs): kill their groups again and reap them.
    if matches!(outcome, Err(HarnessError::Interrupted(_))) {
        let left = end::kill_and_reap_own(Duration::from_secs(2));
        if !left.is_empty() {
            progress::stderr_line(format!(
                "{} subject process(es) could not be reaped: {left:?}",
                left.len()
            ));
        }
    }
    // After an error or a signal, descendants that escaped their group are
    // still the harness's adopted children: kill and reap them before exiting,
    // since they would otherwise be handed to init and outlive the run.
    let swept = end::sweep();
    if !swept.killed.is_empty() {
        progress::stderr_line(format!(
            "killed {} descendant(s) of a subject that had left its process group",
            swept.killed.len()
        ));
    }
    // A subject killed while it was writing into its private temporary
    // directory may have finished that write after the scratch directory was
    // removed (and a session prepared ahead may have made its directories
    // there): remove again whatever is left now that nothing runs.
    for dir in scratch_registry().drain(..) {
        let _ = std::fs::remove_dir_all(&dir);
    }
    outcome
}

/// The scratch directories of the parts in progress (removed by
/// [`run_blocking`] once more after an interrupted run).
fn scratch_registry() -> std::sync::MutexGuard<'static, Vec<PathBuf>> {
    static DIRS: std::sync::Mutex<Vec<PathBuf>> = std::sync::Mutex::new(Vec::new());
    DIRS.lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Removes a campaign directory that this run created unless the campaign
/// was finished (`campaign.json` written): an interrupted or failed campaign
/// leaves no output, so that DIR is either complete or absent.
struct Unfinished(Option<PathBuf>);

impl Drop for Unfinished {
    fn drop(&mut self) {
        if let Some(dir) = self.0.take() {
            let _ = std::fs::remove_dir_all(&dir);
        }
    }
}

/// Removes the scratch directory on every exit path.
struct Scratch(PathBuf);

impl Scratch {
    /// Create the directory (exclusively) and register it.
    fn create(path: PathBuf) -> Result<Scratch, HarnessError> {
        std::fs::create_dir(&path).map_err(|source| HarnessError::Io {
            path: path.clone(),
            source,
        })?;
        scratch_registry().push(path.clone());
        Ok(Scratch(path))
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        // Still registered: a session prepared ahead may be writing below it
        // until the runtime has shut down, and `run_blocking` removes it
        // once more then.
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// What every part of a run shares: the scenario, the subject and its
/// environment, checked once before anything starts.
#[derive(Clone)]
struct Prepared {
    scenario: Scenario,
    /// Why the scenario was chosen, when `--scenario` was not given.
    scenario_note: Option<String>,
    env: BTreeMap<String, String>,
    http: Option<http::HttpTarget>,
    /// `None`: the server at `http` is not started by the harness.
    program: Option<PathBuf>,
    subject_args: Vec<String>,
    /// What is executed, observed: the program and every argument naming a
    /// regular file, hashed before the first session starts (empty for a
    /// server the harness did not start).
    executed: Vec<files::ExecutedFile>,
    /// `--subject-artifact`, declared by the operator.
    declared: Option<DeclaredArtifact>,
    /// `subject.artifactSha256`: the executed files' digest (observed), or,
    /// for a server the harness did not start, the declared artifact's.
    artifact_sha256: String,
    /// Most trials one bundle holds for this scenario and transport.
    per_bundle: usize,
    /// The protocol revision spoken: `--revision`, else the scenario's.
    revision: vocab::Revision,
    /// `--trials` and `--seed`, else the scenario's defaults, else 1.
    trials: usize,
    seed: u32,
    /// Values the privacy scan redacts besides the `--env` ones: the
    /// operator's `--tool-args` values of members that look secret (a
    /// tool-contracts run). Named for the report, never given to the subject.
    redact: BTreeMap<String, String>,
    /// No trial starts after this (the scenario's `scenarioDurationMs`).
    deadline: Instant,
    /// What each subject the harness starts runs in.
    sandbox: sandbox::Plan,
}

/// The artifact the operator named with `--subject-artifact` (declared, not
/// observed: nothing shows that the subject runs it).
#[derive(Debug, Clone)]
struct DeclaredArtifact {
    label: String,
    sha256: String,
    bytes: u64,
}

impl Prepared {
    /// What the subject is, for progress lines.
    fn subject_label(&self) -> String {
        match (&self.program, &self.http) {
            (Some(p), _) => p.display().to_string(),
            (None, Some(t)) => format!("the server at {} (not started by the harness)", t.addr),
            (None, None) => "?".into(),
        }
    }
}

/// Does the command start the reference server? PROGRAM, or a word of an
/// argument (a wrapper such as `sh -c "exec mcpres serve ..."`), is this
/// executable or a file named `mcpres`, and a later word is `serve`.
pub fn runs_reference_server(command: &[String]) -> bool {
    let this = std::env::current_exe()
        .ok()
        .and_then(|p| p.canonicalize().ok());
    let is_mcpres = |word: &str| {
        let path = Path::new(word);
        path.file_name().is_some_and(|n| n == "mcpres")
            || (this.is_some() && path.is_absolute() && path.canonicalize().ok() == this)
    };
    let words: Vec<&str> = command.iter().flat_map(|a| a.split_whitespace()).collect();
    words
        .iter()
        .position(|w| is_mcpres(w))
        .is_some_and(|at| words[at + 1..].contains(&"serve"))
}

/// The scenario of a run without `--scenario`, and a line saying why it was
/// chosen: the reference server's faults only for the reference server
/// (`--fault` is its flag), `generic` for any other subject.
fn default_scenario(command: &[String]) -> (&'static str, String) {
    if runs_reference_server(command) {
        (
            vocab::DEFAULT_SCENARIO,
            format!(
                "no --scenario given: the subject is mcpres's reference server, so scenario {} is used",
                vocab::DEFAULT_SCENARIO
            ),
        )
    } else {
        (
            vocab::DEFAULT_THIRD_PARTY_SCENARIO,
            format!(
                "no --scenario given: the subject is not `mcpres serve`, so scenario {} is used (any MCP server; {} needs the reference server's --fault flag; to exercise each safe tool against its input schema, use --scenario tool-contracts)",
                vocab::DEFAULT_THIRD_PARTY_SCENARIO,
                vocab::DEFAULT_SCENARIO
            ),
        )
    }
}

/// The tool named with `--tool` and `--tool-args`, checked: a generic
/// scenario, a non-empty name, arguments that are a JSON object.
fn named_tool(
    args: &RunOptions,
    scenario: &Scenario,
) -> Result<Option<vocab::NamedTool>, HarnessError> {
    let name = match args.tools.as_slice() {
        [] => {
            return match args.tool_args {
                Some(_) => Err(HarnessError::Usage(
                    "--tool-args needs --tool NAME: the tool they are for".into(),
                )),
                None => Ok(None),
            };
        }
        [one] => one,
        several => {
            if !scenario.tool_contracts {
                return Err(HarnessError::Usage(format!(
                    "--tool is given {} times: scenario {} calls one tool (several are for --scenario tool-contracts)",
                    several.len(),
                    scenario.name
                )));
            }
            if args.tool_args.is_some() {
                return Err(HarnessError::Usage(
                    "--tool-args goes with a single --tool: the arguments of that tool".into(),
                ));
            }
            if several.iter().any(String::is_empty) {
                return Err(HarnessError::Usage("--tool needs a tool name".into()));
            }
            return Ok(None);
        }
    };
    if !scenario.generic {
        return Err(HarnessError::Usage(format!(
            "--tool names the tool of the generic clean control; scenario {} calls its own tools (use --scenario generic)",
            scenario.name
        )));
    }
    if name.is_empty() {
        return Err(HarnessError::Usage("--tool needs a tool name".into()));
    }
    let arguments = match &args.tool_args {
        None => serde_json::json!({}),
        Some(text) => match serde_json::from_str::<serde_json::Value>(text) {
            Ok(v) if v.is_object() => v,
            Ok(_) => {
                return Err(HarnessError::Usage(
                    "--tool-args must be a JSON object (the call's arguments)".into(),
                ));
            }
            Err(e) => {
                return Err(HarnessError::Usage(format!("--tool-args is not JSON: {e}")));
            }
        },
    };
    Ok(Some(vocab::NamedTool {
        name: name.clone(),
        arguments,
    }))
}

async fn prepare(args: &RunOptions) -> Result<Prepared, HarnessError> {
    let (scenario_name, scenario_note) = match args.scenario.as_deref() {
        Some(name) => (name, None),
        None => {
            let (name, note) = default_scenario(&args.command);
            (name, Some(note))
        }
    };
    let mut scenario =
        scenario_file::resolve(scenario_name).map_err(|e| HarnessError::Usage(e.to_string()))?;
    scenario.named_tool = named_tool(args, &scenario)?;
    let revision = args.revision.unwrap_or(scenario.protocol_revision);
    if args.http.is_some() && !scenario.client_faults.is_empty() {
        return Err(HarnessError::Usage(format!(
            "scenario {} has client faults, which are driven over stdio only",
            scenario.name
        )));
    }
    let per_bundle = (crate::produce::builder::MAX_ARTIFACTS - evidence::FIXED_ARTIFACTS)
        / evidence::artifacts_per_trial(&scenario, args.http.is_some());
    let trials = args.trials.or(scenario.default_trials).unwrap_or(1);
    let seed = args.seed.or(scenario.default_seed).unwrap_or(1);
    if trials == 0 || trials > campaign::MAX_TRIALS {
        return Err(HarnessError::Usage(format!(
            "--trials must be between 1 and {} (one bundle holds {per_bundle} trials of scenario {}; more make a campaign of several bundles)",
            campaign::MAX_TRIALS,
            scenario.name
        )));
    }
    let env = args.env.clone();
    let http = args
        .http
        .as_deref()
        .map(|url| http::parse_target(url, args.allow_remote.as_deref()))
        .transpose()
        .map_err(HarnessError::Usage)?;
    let external = args.command.is_empty();
    if external {
        let Some(target) = &http else {
            return Err(HarnessError::Usage(
                "name the subject: -- PROGRAM [ARGS...], or --http URL for a server the harness does not start".into(),
            ));
        };
        if args.subject_artifact.is_none() {
            return Err(HarnessError::Usage(
                "a server the harness does not start needs --subject-artifact PATH: the artifact you claim it runs (the harness cannot check that it does)".into(),
            ));
        }
        if let Some(c) = scenario
            .negatives
            .iter()
            .find(|c| c.injector == vocab::Injector::SubjectFlag)
        {
            return Err(HarnessError::Usage(format!(
                "negative control {} of scenario {} needs the subject's --fault flag, so a subject the harness starts (use a scenario without subject faults, such as generic)",
                c.name, scenario.name
            )));
        }
        if !scenario.recoveries.is_empty() {
            return Err(HarnessError::Usage(format!(
                "scenario {} has recovery controls, which need a subject the harness starts",
                scenario.name
            )));
        }
        if !http::listening(&target.addr.into()).await {
            return Err(HarnessError::Usage(format!(
                "nothing accepts connections at {}: start the server first, or give -- PROGRAM",
                target.addr
            )));
        }
    }
    if args.output.symlink_metadata().is_ok() {
        return Err(HarnessError::Usage(format!(
            "{} already exists",
            args.output.display()
        )));
    }
    let (program, subject_args) = match args.command.split_first() {
        None => (None, &[][..]),
        Some((program_arg, rest)) => {
            let program = subject::resolve_program(program_arg)
                .ok_or_else(|| HarnessError::Usage(format!("PROGRAM {program_arg:?} is not an existing file (bare names are looked up in the harness's PATH)")))?;
            (Some(program), rest)
        }
    };
    // Whether the sandbox can be built here is tried for real once per
    // process (a stage and a short subject of its own): started now, it
    // runs while the command line's files are hashed.
    if program.is_some() {
        sandbox::warm(args.sandbox);
    }
    // Observed identity: the files of the command line, hashed now, just
    // before the first session starts them.
    let executed = match (&program, args.command.first()) {
        (Some(program), Some(given)) => files::observe_executed(given, program, subject_args)
            .map_err(|source| HarnessError::Io {
                path: program.clone(),
                source,
            })?,
        _ => Vec::new(),
    };
    let declared = match &args.subject_artifact {
        Some(path) => {
            let (sha256, bytes) = artifact_digest(path).map_err(|source| HarnessError::Io {
                path: path.clone(),
                source,
            })?;
            Some(DeclaredArtifact {
                label: path
                    .file_name()
                    .map_or("subject".into(), |n| n.to_string_lossy().into_owned()),
                sha256,
                bytes,
            })
        }
        None => None,
    };
    let artifact_sha256 = match (&declared, executed.is_empty()) {
        (_, false) => files::executed_digest(&executed),
        (Some(d), true) => d.sha256.clone(),
        (None, true) => {
            unreachable!("checked above: an external subject needs --subject-artifact")
        }
    };
    let deadline = Instant::now() + Duration::from_millis(scenario.scenario_duration_ms);
    let sandbox = if program.is_some() {
        sandbox::plan(args.sandbox).map_err(HarnessError::Usage)?
    } else {
        sandbox::Plan::Scoped {
            reason: "the server was not started by mcpres".into(),
            chosen: false,
        }
    };
    // A server the harness starts outside the sandbox shares this machine's
    // ports; in the sandbox it listens in a network namespace of its own,
    // where no other process holds its port.
    if let Some(target) = &http
        && program.is_some()
        && sandbox.tools().is_none()
        && http::listening(&target.addr.into()).await
    {
        return Err(HarnessError::Usage(format!(
            "{} already accepts connections: another process listens there",
            target.addr
        )));
    }
    Ok(Prepared {
        scenario,
        scenario_note,
        env,
        http,
        program,
        subject_args: subject_args.to_vec(),
        executed,
        declared,
        artifact_sha256,
        per_bundle,
        revision,
        trials,
        seed,
        deadline,
        sandbox,
        redact: BTreeMap::new(),
    })
}

/// The whole run: one bundle at `-o DIR`, or, when `--trials` exceeds what
/// one bundle holds, a campaign directory of parts and `campaign.json`.
pub async fn run(args: RunOptions, reporter: &mut Progress) -> Result<RunOutcome, HarnessError> {
    let prep = prepare(&args).await?;
    let run_id = format!("run-{}", random_hex(8));
    if prep.scenario.tool_contracts {
        return run_tool_contracts(&args, prep, run_id, reporter).await;
    }
    let parts = campaign::plan(prep.trials, prep.per_bundle);
    reporter.start(prep.trials);
    if let Some(note) = &prep.scenario_note {
        reporter.line(note);
    }
    if prep.program.is_some()
        && let sandbox::Plan::Scoped { reason, .. } = &prep.sandbox
    {
        reporter.line(format!(
            "no sandbox: {reason}; only each session's temporary directory and the top level of the working directory are observed (recorded in raw/filesystem-report.json)"
        ));
    }
    reporter.line(format!(
        "scenario {} against {} ({} trial(s), seed {}), run {run_id}{}",
        prep.scenario.name,
        prep.subject_label(),
        prep.trials,
        prep.seed,
        if parts.len() > 1 {
            format!(
                ", a campaign of {} bundles (at most {} trials each)",
                parts.len(),
                prep.per_bundle
            )
        } else {
            String::new()
        }
    ));
    reporter.event(json!({
        "event": "run-started", "runId": run_id, "scenario": prep.scenario.name,
        "trials": prep.trials, "seed": prep.seed, "parts": parts.len(),
        "trialsPerBundle": prep.per_bundle,
        "transport": if prep.http.is_some() { "streamable-http" } else { "stdio" },
        "output": args.output.display().to_string(),
    }));
    if parts.len() <= 1 {
        let spec = PartSpec {
            part: 1,
            run_id,
            trials: 1..=prep.trials,
            seed: prep.seed,
            output: args.output.clone(),
            keep_rows: true,
        };
        let done = run_part(&prep, &spec, reporter).await?;
        return Ok(RunOutcome::Bundle(done.summary));
    }

    // A campaign: the directory is created exclusively, the parts go inside it,
    // and campaign.json is written only once every part is written.
    let started_wall = now_millis();
    std::fs::create_dir(&args.output).map_err(|source| HarnessError::Io {
        path: args.output.clone(),
        source,
    })?;
    let mut unfinished = Unfinished(Some(args.output.clone()));
    let mut stats = Stats::default();
    let mut entries = Vec::new();
    let mut subject: Option<(String, String)> = None;
    let count = parts.len();
    for (k, trials) in parts.into_iter().enumerate() {
        let part = k + 1;
        if part > 1 && Instant::now() >= prep.deadline {
            reporter.line(format!(
                "scenario duration limit of {} ms reached: parts {part}-{count} are not run",
                prep.scenario.scenario_duration_ms
            ));
            break;
        }
        let name = campaign::part_dir_name(part);
        let spec = PartSpec {
            part,
            run_id: format!("{run_id}-p{part:03}"),
            trials: trials.clone(),
            seed: campaign::trial_seed(prep.seed, *trials.start()),
            output: args.output.join(&name),
            keep_rows: false,
        };
        reporter.line(format!(
            "part {part}/{count}: trials {}-{} -> {}",
            trials.start(),
            trials.end(),
            spec.output.display()
        ));
        // The part's records (raw bytes included) are dropped at the end of
        // this iteration; only the per-trial numbers survive. A campaign
        // stopped before its first part is written leaves no empty directory
        // (`remove_dir` removes only an empty one).
        let done = run_part(&prep, &spec, reporter).await.inspect_err(|_| {
            let _ = std::fs::remove_dir(&args.output);
        })?;
        let stop = done.stopped_early;
        for t in &done.stats {
            stats.add(t);
        }
        let s = done.summary;
        if subject.is_none() {
            subject = Some((
                s.doc["statement"]["subjectName"]
                    .as_str()
                    .unwrap_or("unknown")
                    .to_string(),
                s.doc["statement"]["subjectVersion"]
                    .as_str()
                    .unwrap_or("UNKNOWN")
                    .to_string(),
            ));
        }
        entries.push(PartEntry {
            part,
            path: name,
            run_id: spec.run_id.clone(),
            seeds: done.stats.iter().map(|t| t.seed).collect(),
            trials,
            result: s.result,
            classification: s.classification,
            valid: s.valid,
            primary: s.primary,
            evidence_class: s.evidence_class,
            scenario_fingerprint: done.fingerprint,
            bundle_digest: done.bundle_digest,
            success: done.stats.iter().filter(|t| t.success).count(),
            cleanup_passed: done.cleanup_passed,
            privacy_findings: s.privacy_findings,
        });
        if stop {
            if part < count {
                reporter.line(format!("parts {}-{count} are not run", part + 1));
            }
            break;
        }
    }
    let (subject_name, subject_version) =
        subject.unwrap_or_else(|| ("unknown".into(), "UNKNOWN".into()));
    let facts = campaign::CampaignFacts {
        campaign_id: run_id,
        scenario: prep.scenario.name.to_string(),
        transport: if prep.http.is_some() {
            "streamable-http"
        } else {
            "stdio"
        },
        subject_name,
        subject_version,
        artifact_sha256: prep.artifact_sha256.clone(),
        seed: prep.seed,
        planned_trials: prep.trials,
        trials_per_part_cap: prep.per_bundle,
        started_at: format_rfc3339_millis(started_wall),
        finished_at: format_rfc3339_millis(now_millis().max(started_wall)),
        tool: evidence::tool_identity(),
    };
    let doc = campaign::document(&facts, &entries, &stats);
    let path = args.output.join(campaign::FILE_NAME);
    let mut bytes = serde_json::to_vec_pretty(&doc).expect("a Value always serializes");
    bytes.push(b'\n');
    crate::bundle::dir::write_new(&path, &bytes).map_err(|source| HarnessError::Io {
        path: path.clone(),
        source,
    })?;
    // Finished: the campaign directory stays.
    unfinished.0 = None;
    reporter.line(format!("campaign summary written to {}", path.display()));
    Ok(RunOutcome::Campaign(CampaignSummary {
        output: args.output.clone(),
        result: if stats.trials < prep.trials {
            "FAIL"
        } else {
            campaign::result(&entries)
        },
        classification: stats.classification(),
        doc,
        parts: entries,
    }))
}

/// What a finished tool-contracts run produced: one bundle per exercised
/// tool below `output`, and `contracts.json`.
#[derive(Debug, Clone)]
pub struct ContractsSummary {
    pub output: PathBuf,
    /// The `contracts.json` document as written.
    pub doc: Value,
    /// Each exercised tool's bundle summary, by tool name.
    pub tools: Vec<(String, RunSummary)>,
    /// FAIL when a tool's bundle failed or is invalid, else INCOMPLETE when
    /// one was incomplete, no tool could be exercised, or a tool's contract
    /// could not be made; else PASS.
    pub result: &'static str,
}

impl ContractsSummary {
    pub fn passed(&self) -> bool {
        self.result == "PASS"
    }
}

/// The file a tool-contracts run writes beside its bundles.
pub const CONTRACTS_FILE: &str = "contracts.json";

/// The subject's tools, listed on a session of their own (sandboxed as the
/// run's sessions are; nothing of it is kept but the list).
async fn discover_tools(prep: &Prepared) -> Result<Vec<Value>, HarnessError> {
    let scratch_path = std::env::temp_dir().join(format!("mcpres-tools-{}", random_hex(8)));
    let _scratch = Scratch::create(scratch_path.clone())?;
    let temp_root = scratch_path.join("subject-tmp");
    let stage_root = scratch_path.join("sandbox");
    let journals = scratch_path.join("journals");
    let mut dirs = vec![&journals];
    if prep.program.is_some() {
        dirs.push(&temp_root);
        if prep.sandbox.tools().is_some() {
            dirs.push(&stage_root);
        }
    }
    for d in dirs {
        std::fs::create_dir(d).map_err(|source| HarnessError::Io {
            path: d.clone(),
            source,
        })?;
    }
    let spawner = subject::Spawner {
        epoch: Instant::now(),
        program: prep.program.as_deref(),
        args: &prep.subject_args,
        env: &prep.env,
        http: prep.http.as_ref(),
        listen_limit: LISTEN_LIMIT,
        revision: prep.revision,
        temp_root: prep.program.as_ref().map(|_| temp_root.as_path()),
        sandbox: prep.sandbox.tools().map(|t| (t, stage_root.as_path())),
        through: Some(&journals),
        prepared: &Default::default(),
    };
    let mut session = spawner.spawn("tools", &[]).await?;
    let base = scenario::fresh_id();
    let (method, message, check) = scenario::opening(prep.revision, base + 1);
    let opened = scenario::exchange(
        &mut session,
        &prep.scenario,
        method,
        base + 1,
        message,
        check,
    )
    .await
    .ok()
    .filter(|(step, _)| step.judgement.accepted());
    let mut listed = None;
    if opened.is_some() {
        if !prep.revision.is_stateless() {
            let note = serde_json::json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
            let _ = session.send(&note).await;
        }
        let check = oracle::check_tools_list(None);
        if let Ok((step, frames)) = scenario::exchange(
            &mut session,
            &prep.scenario,
            "tools/list",
            base + 2,
            scenario::rpc(prep.revision, base + 2, "tools/list", serde_json::json!({})),
            &check,
        )
        .await
        {
            listed = Some((step, frames));
        }
    }
    let _ = session.finish(EXIT_GRACE).await;
    let Some((step, frames)) = listed else {
        return Err(HarnessError::Usage(
            "the subject's tools could not be listed: it did not open a conversation (run `mcpres run --scenario generic` to see why)".into(),
        ));
    };
    if !step.judgement.accepted() {
        return Err(HarnessError::Usage(format!(
            "the subject's tools could not be listed: tools/list was {} ({})",
            step.judgement.stop_reason, step.judgement.detail
        )));
    }
    Ok(oracle::answer_of(&frames, base + 2)
        .and_then(|a| {
            a.pointer("/result/tools")
                .and_then(Value::as_array)
                .cloned()
        })
        .unwrap_or_default())
}

/// `input` with every string member whose value is one of `secrets`
/// replaced by a marker (a value the operator gave for a member that looks
/// secret).
fn redacted_input(input: &Value, secrets: &BTreeMap<String, String>) -> Value {
    let mut out = input.clone();
    if let Some(o) = out.as_object_mut() {
        for v in o.values_mut() {
            if v.as_str().is_some_and(|s| secrets.values().any(|x| x == s)) {
                *v = Value::from("[REDACTED:tool-argument]");
            }
        }
    }
    out
}

/// A tool-contracts run: list the tools, choose the safe ones
/// (`contract::safe_tools`), and for each write the bundle of its contract
/// scenario (`contract::for_tool`) below `-o DIR`, then `contracts.json`
/// with each tool's result and why every other tool was left alone.
async fn run_tool_contracts(
    args: &RunOptions,
    prep: Prepared,
    run_id: String,
    reporter: &mut Progress,
) -> Result<RunOutcome, HarnessError> {
    if prep.trials > prep.per_bundle {
        return Err(HarnessError::Usage(format!(
            "--trials: scenario tool-contracts writes one bundle per tool, of at most {} trials",
            prep.per_bundle
        )));
    }
    if let Some(note) = &prep.scenario_note {
        reporter.line(note);
    }
    reporter.line(format!(
        "scenario tool-contracts against {}: listing its tools",
        prep.subject_label()
    ));
    let tools = discover_tools(&prep).await?;
    let named = prep.scenario.named_tool.clone();
    let allow: Vec<&str> = args.tools.iter().map(String::as_str).collect();
    let (chosen, left) = contract::safe_tools(&tools, &allow);
    if let Some(missing) = allow
        .iter()
        .find(|n| !tools.iter().any(|t| t["name"] == **n))
    {
        return Err(HarnessError::Usage(format!(
            "--tool {missing}: the subject lists no such tool"
        )));
    }
    reporter.line(format!(
        "{} tool(s) listed; exercised: {}; left alone: {}",
        tools.len(),
        if chosen.is_empty() {
            "none".to_string()
        } else {
            chosen
                .iter()
                .filter_map(|t| t["name"].as_str())
                .collect::<Vec<_>>()
                .join(", ")
        },
        if left.is_empty() {
            "none".to_string()
        } else {
            left.iter()
                .map(|(n, why)| format!("{n} ({why})"))
                .collect::<Vec<_>>()
                .join("; ")
        }
    ));
    std::fs::create_dir(&args.output).map_err(|source| HarnessError::Io {
        path: args.output.clone(),
        source,
    })?;
    let mut unfinished = Unfinished(Some(args.output.clone()));
    let mut entries = Vec::new();
    let mut summaries = Vec::new();
    let mut dirs = std::collections::BTreeSet::new();
    let mut incomplete = chosen.is_empty();
    let mut failed = false;
    for (k, tool) in chosen.iter().enumerate() {
        let name = tool["name"].as_str().unwrap_or_default().to_string();
        let mut dir = contract::slug(&name, 60);
        if !dirs.insert(dir.clone()) {
            dir = format!("{dir}-{}", k + 1);
            dirs.insert(dir.clone());
        }
        let schema = tool.get("inputSchema").cloned().unwrap_or(Value::Null);
        // The operator's arguments for the named tool, else generated ones.
        let given = named
            .as_ref()
            .filter(|n| n.name == name && n.arguments.as_object().is_some_and(|o| !o.is_empty()))
            .map(|n| n.arguments.clone());
        let made = match &given {
            Some(g) => contract::contract_from(&schema, g),
            None => contract::contract(&schema, contract::Values::Small),
        };
        let c = match made {
            Ok(c) => c,
            Err(e) => {
                incomplete = true;
                reporter.line(format!("tool {name}: not exercised: {e}"));
                entries.push(serde_json::json!({
                    "tool": name, "result": "NOT_RUN", "reason": e.to_string(),
                }));
                continue;
            }
        };
        // Operator-given values of members that look secret are redacted
        // wherever the run stores them (the bundle's privacy scan, and
        // contracts.json below).
        let mut secrets = BTreeMap::new();
        if let Some(g) = &given {
            for member in &c.secret_like {
                if let Some(v) = g.get(member).and_then(Value::as_str) {
                    secrets.insert(format!("--tool-args {member}"), v.to_string());
                }
            }
        }
        let scenario = contract::for_tool(&prep.scenario, tool, &c);
        let invalid = c.invalid.len();
        // A tool with many members makes many controls: one bundle must
        // still hold every trial's artifacts.
        let per_bundle = (crate::produce::builder::MAX_ARTIFACTS - evidence::FIXED_ARTIFACTS)
            / evidence::artifacts_per_trial(&scenario, prep.http.is_some()).max(1);
        if per_bundle < prep.trials {
            incomplete = true;
            let why = format!(
                "its {} controls need more artifacts than one bundle holds for {} trial(s)",
                scenario.negatives.len(),
                prep.trials
            );
            reporter.line(format!("tool {name}: not exercised: {why}"));
            entries.push(serde_json::json!({"tool": name, "result": "NOT_RUN", "reason": why}));
            continue;
        }
        let mut part = prep.clone();
        part.scenario = scenario;
        part.redact.extend(secrets.clone());
        let spec = PartSpec {
            part: k + 1,
            run_id: format!("{run_id}-{dir}"),
            trials: 1..=prep.trials,
            seed: prep.seed,
            output: args.output.join(&dir),
            keep_rows: true,
        };
        reporter.line(format!(
            "tool {name}: a valid input and {invalid} invalid one(s) -> {}",
            spec.output.display()
        ));
        let done = run_part(&part, &spec, reporter).await?;
        let s = done.summary;
        failed |= !s.valid || s.result == "FAIL";
        incomplete |= s.result != "PASS";
        entries.push(serde_json::json!({
            "tool": name, "directory": dir, "result": s.result, "valid": s.valid,
            "evidenceClass": s.evidence_class,
            "validInput": redacted_input(&c.valid, &secrets),
            "invalidInputs": invalid, "leftOut": c.left_out,
            "bundleDigest": done.bundle_digest,
            "controls": s.rows.iter().filter(|r| r[1] != "clean").map(|r| serde_json::json!({
                "trial": r[0], "control": r[1], "as": r[2], "observed": r[3], "mutant": r[4],
            })).collect::<Vec<_>>(),
        }));
        summaries.push((name, s));
    }
    let result = if failed {
        "FAIL"
    } else if incomplete {
        "INCOMPLETE"
    } else {
        "PASS"
    };
    let doc = serde_json::json!({
        "schema": "mcpres.tool-contracts/1",
        "runId": run_id,
        // The subject as its bundles name it (serverInfo), never a path of
        // this machine: this file is outside every bundle's privacy scan.
        "subject": summaries.first().map_or(Value::Null, |(_, s)| serde_json::json!({
            "name": s.doc["statement"]["subjectName"],
            "version": s.doc["statement"]["subjectVersion"],
        })),
        "artifactSha256": prep.artifact_sha256,
        "transport": if prep.http.is_some() { "streamable-http" } else { "stdio" },
        "protocolRevision": prep.revision.as_str(),
        "result": result,
        "toolsListed": tools.len(),
        "tools": entries,
        "leftAlone": left.iter().map(|(n, why)| serde_json::json!({"tool": n, "why": why})).collect::<Vec<_>>(),
    });
    let path = args.output.join(CONTRACTS_FILE);
    let mut bytes = serde_json::to_vec_pretty(&doc).expect("a Value always serializes");
    bytes.push(b'\n');
    crate::bundle::dir::write_new(&path, &bytes).map_err(|source| HarnessError::Io {
        path: path.clone(),
        source,
    })?;
    unfinished.0 = None;
    reporter.line(format!("tool contracts written to {}", path.display()));
    Ok(RunOutcome::Contracts(ContractsSummary {
        output: args.output.clone(),
        doc,
        tools: summaries,
        result,
    }))
}

/// One bundle's worth of trials.
struct PartSpec {
    part: usize,
    run_id: String,
    /// Global trial numbers.
    trials: RangeInclusive<usize>,
    /// Seed of the first trial of the part (the bundle's deterministic seed).
    seed: u32,
    output: PathBuf,
    /// Keep the per-control rows for the summary table (single bundles only).
    keep_rows: bool,
}

/// A written part.
struct PartDone {
    summary: RunSummary,
    stats: Vec<TrialStat>,
    fingerprint: String,
    bundle_digest: String,
    cleanup_passed: bool,
    /// A clean control failed fatally: no further trial (or part) is run.
    stopped_early: bool,
}

/// Run the trials of one part, check cleanup, scan, assemble, validate and
/// write its bundle. Exactly what a whole run did before campaigns existed:
/// a part is the bundle `mcpres run --trials <its count> --seed <its first
/// seed>` would write, apart from the run id and the trial numbers.
async fn run_part(
    prep: &Prepared,
    spec: &PartSpec,
    reporter: &mut Progress,
) -> Result<PartDone, HarnessError> {
    let scenario = &prep.scenario;
    let env = &prep.env;
    let http = &prep.http;
    let program = &prep.program;
    let revision = prep.revision;
    let run_id = spec.run_id.clone();
    let planned = spec.trials.end() + 1 - spec.trials.start();
    let total = reporter_total(spec, reporter);
    let scratch_path = std::env::temp_dir().join(format!("mcpres-{run_id}"));
    let scratch = Scratch::create(scratch_path.clone())?;
    // Each started session gets a private temporary directory below this.
    let temp_root = scratch_path.join("subject-tmp");
    if program.is_some() {
        std::fs::create_dir(&temp_root).map_err(|source| HarnessError::Io {
            path: temp_root.clone(),
            source,
        })?;
    }
    // Each started session's sandbox stage (upper layers, private /dev/shm)
    // lies below this, inside the scratch directory.
    let stage_root = scratch_path.join("sandbox");
    if program.is_some() && prep.sandbox.tools().is_some() {
        std::fs::create_dir(&stage_root).map_err(|source| HarnessError::Io {
            path: stage_root.clone(),
            source,
        })?;
    }
    // The subject's working directory (the harness's), before any session.
    let workdir = program.as_ref().and_then(|_| std::env::current_dir().ok());
    let workdir_before = workdir.as_deref().map(files::DirLook::take);
    let started_wall = now_millis();
    let epoch = Instant::now();
    let ms = move || u64::try_from(epoch.elapsed().as_millis()).unwrap_or(u64::MAX);

    let mut trials = Vec::new();
    let mut stopped_early: Option<String> = None;
    // A session prepared ahead, carried from one trial to the next.
    let prepared = std::sync::Mutex::new(None);
    for index in spec.trials.clone() {
        // The scenario's duration limit: no trial starts after it (the
        // first trial of a bundle always runs, so that it records something).
        if index != *spec.trials.start() && Instant::now() >= prep.deadline {
            reporter.line(format!(
                "scenario duration limit of {} ms reached: trials {index}-{} are not run",
                scenario.scenario_duration_ms,
                spec.trials.end()
            ));
            break;
        }
        let seed = campaign::trial_seed(spec.seed, index + 1 - spec.trials.start());
        let mut control_progress = ControlProgress {
            reporter: &mut *reporter,
            lines: spec.keep_rows,
            trial: index,
            total,
            part: spec.part,
        };
        let trial = run_trial(
            &mut control_progress,
            scenario,
            index,
            seed,
            epoch,
            program.as_deref(),
            &prep.subject_args,
            env,
            &scratch_path,
            program.as_ref().map(|_| temp_root.as_path()),
            prep.sandbox.tools().map(|t| (t, stage_root.as_path())),
            http.as_ref(),
            revision,
            (index < *spec.trials.end()).then_some(index + 1),
            &prepared,
        )
        .await?;
        let duration = trial.end_ms - trial.start_ms;
        let behaved = trial.negatives.iter().filter(|n| n.behaved()).count();
        reporter.trial_finished(format!(
            "trial {index}/{total}: clean control {} ({}), negative controls {behaved}/{} as expected, {duration} ms",
            trial.clean.word(),
            trial.clean.stop_reason,
            trial.negatives.len(),
        ));
        reporter.event(json!({
            "event": "trial-finished", "trial": index, "of": total, "part": spec.part, "seed": seed,
            "clean": trial.clean.word(),
            "cleanStopReason": trial.clean.stop_reason,
            "negativesAsExpected": behaved, "negatives": trial.negatives.len(),
            "success": trial.success(), "durationMs": duration,
        }));
        if reporter.closed() {
            // Nobody reads the progress any more (a closed pipe): stop as
            // Ctrl-C does; the caller sees `closed()` and ends quietly.
            return Err(HarnessError::Interrupted(Termination::Interrupt));
        }
        let fatal = fatal_clean_failure(&trial);
        if let Some(why) = &fatal {
            report_fatal(reporter, why, &trial, env, index, prep.trials);
        }
        trials.push(trial);
        if fatal.is_some() {
            stopped_early = fatal;
            break;
        }
    }

    // Cleanup, measured: every process group is empty and the scratch directory is gone.
    let cleanup_start = ms();
    let groups: Vec<Value> = trials
        .iter()
        .flat_map(|t| t.sessions().map(move |s| (t.index, s)))
        // A server the harness did not start has no process group of ours.
        .filter_map(|(t, s)| {
            let pgid = s.rec.events.first().and_then(|e| e["processGroup"].as_u64()).and_then(|p| i32::try_from(p).ok()).filter(|p| *p > 0)?;
            Some((t, s, pgid))
        })
        .map(|(t, s, pgid)| {
            let (live, zombies) = proc::group_members(pgid);
            json!({"trial": t, "session": s.role, "liveAfterKill": s.ended.live_in_group, "liveNow": live, "zombiesNow": zombies})
        })
        .collect();
    drop(scratch);
    let scratch_gone = scratch_path.symlink_metadata().is_err();
    let groups_gone = groups
        .iter()
        .all(|g| g["liveNow"] == 0 && g["liveAfterKill"] == 0);
    // The harness's own subject must not listen any more; a server it did
    // not start is none of its business to stop.
    // (In the sandbox each session's server listened in a network namespace
    // of its own, ended with its session: a listener on this machine's port
    // now is another process's.)
    let listener_gone = match http {
        Some(target) if program.is_some() && prep.sandbox.tools().is_none() => {
            !http::listening(&target.addr.into()).await
        }
        _ => true,
    };
    // Temporary files: any file a subject held open at the end of its
    // session, under a temporary directory, created or changed during the
    // run, that still exists now that every subject is gone.
    let run_started =
        std::time::UNIX_EPOCH + Duration::from_millis(u64::try_from(started_wall).unwrap_or(0));
    let roots = subject::temp_roots();
    let mut temp_left: Vec<Value> = Vec::new();
    for t in &trials {
        for s in t.sessions() {
            for e in s.rec.events.iter().filter(|e| e["event"] == "open-files") {
                for f in e["files"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(Value::as_str)
                {
                    let path = Path::new(f);
                    let fresh = std::fs::metadata(path).is_ok_and(|m| {
                        m.created()
                            .or_else(|_| m.modified())
                            .is_ok_and(|at| at >= run_started)
                    });
                    if fresh && roots.iter().any(|r| path.starts_with(r)) {
                        temp_left.push(json!({"trial": t.index, "session": s.role, "path": f}));
                    }
                }
            }
        }
    }
    let temp_gone = temp_left.is_empty();
    // Escaped descendants and the files each session left in its private
    // temporary directory, measured by the session's end (see subject.rs).
    let mut escaped: Vec<Value> = Vec::new();
    let mut temp_dirs: Vec<Value> = Vec::new();
    let mut sandboxes: Vec<Value> = Vec::new();
    for t in &trials {
        for s in t.sessions() {
            for p in &s.ended.escaped {
                let mut p = p.clone();
                p["trial"] = json!(t.index);
                p["foundAfterSession"] = json!(s.role);
                escaped.push(p);
            }
            if program.is_some() {
                temp_dirs.push(
                    json!({"trial": t.index, "session": s.role, "entriesLeft": s.ended.temp_left}),
                );
            }
            if let Some(seen) = &s.ended.sandbox {
                sandboxes.push(json!({
                    "trial": t.index, "session": s.role,
                    "entriesLeft": seen["entriesLeft"], "runtimeCaches": seen["runtimeCaches"],
                    "truncated": seen["truncated"], "scope": seen["scope"],
                }));
            }
        }
    }
    let left_in = |sessions: &[Value]| {
        sessions
            .iter()
            .any(|d| d["entriesLeft"].as_array().is_some_and(|a| !a.is_empty()))
    };
    let subject_files_left = left_in(&temp_dirs) || left_in(&sandboxes);
    // The working directory, after every session: new entries are files the
    // subject wrote and left (nothing else should write there during a run).
    let workdir_change = match (&workdir, &workdir_before) {
        (Some(dir), Some(before)) => Some(before.diff(&files::DirLook::take(dir))),
        _ => None,
    };
    let workdir_new = workdir_change.as_ref().is_some_and(|c| !c.new.is_empty());
    let escaped_gone = escaped.is_empty();
    let cleanup_passed = scratch_gone
        && groups_gone
        && listener_gone
        && temp_gone
        && escaped_gone
        && !subject_files_left
        && !workdir_new;
    let cleanup_end = ms();
    let tracking = program.is_some() && proc::tracking();
    let cleanup_reason = cleanup_reason(&CleanupChecks {
        started: program.is_some(),
        tree_tracked: tracking,
        http: http.is_some(),
        escaped_gone,
        groups_gone,
        files_gone: temp_gone && !subject_files_left && !workdir_new,
        listener_gone,
        scratch_gone,
    });
    let cleanup = json!({
        "processGroups": groups,
        "escapedProcesses": escaped,
        "descendantTracking": if program.is_none() {
            "none: the harness did not start the server"
        } else if tracking {
            "child subreaper: descendants that left the process group were adopted by the harness, killed and reaped after each session"
        } else {
            "process groups only: the harness could not become a child subreaper"
        },
        "scratchDirectory": {"removed": scratch_gone, "name": scratch_path.file_name().map(|n| n.to_string_lossy().into_owned())},
        "listener": http.as_ref().map(|t| json!({"port": t.addr.port(), "acceptsConnections": !listener_gone})),
        "temporaryFilesLeft": temp_left,
        "subjectTemporaryDirectories": temp_dirs,
        "workingDirectoryNewEntries": workdir_change.as_ref().map(|c| json!(c.new)),
        "passed": cleanup_passed,
        "reasonCode": cleanup_reason,
        "method": if program.is_some() {
            "SIGKILL to each subject process group, then /proc scanned for members of the group; every other descendant (adopted by the harness as child subreaper) recorded, killed and reaped; each session's private temporary directory (TMPDIR, TMP, TEMP) must be empty when the session has ended; no new entry in the working directory; scratch directory removed and its absence checked; the files each subject held open at the end of its session (/proc/PID/fd) that lie under a temporary directory and were created or changed during the run must be gone"
        } else {
            "no process of the server is observed; the harness's scratch directory removed and its absence checked"
        },
    });
    let mut left = Vec::new();
    if !escaped_gone {
        left.push(format!("{} escaped process(es)", escaped.len()));
    }
    if subject_files_left || workdir_new {
        left.push("files the subject wrote".to_string());
    }
    reporter.line(format!(
        "cleanup: process groups gone {groups_gone}, scratch removed {scratch_gone}, temporary files left {}{}",
        temp_left.len(),
        if left.is_empty() {
            String::new()
        } else {
            format!(", left: {}", left.join(", "))
        }
    ));
    reporter.event(json!({
        "event": "cleanup", "part": spec.part, "passed": cleanup_passed,
        "processGroupsGone": groups_gone, "scratchRemoved": scratch_gone, "listenerGone": listener_gone, "temporaryFilesGone": temp_gone,
        "escapedProcessesGone": escaped_gone, "subjectFilesGone": !subject_files_left && !workdir_new,
    }));
    // Files the subject wrote, as observed (raw/filesystem-report.json).
    let filesystem = program.as_ref().map(|_| {
        files_report(
            &temp_dirs,
            workdir_change.as_ref(),
            &temp_left,
            &prep.sandbox,
            &sandboxes,
        )
    });
    let subject_wrote_files = filesystem
        .as_ref()
        .is_some_and(|f| f["subjectWroteFiles"] == true);
    // The executed files, hashed again after the last session.
    let executed_changes = files::rehash(&prep.executed);

    let first_clean = trials
        .iter()
        .find(|t| t.clean.server_name.is_some())
        .map(|t| &t.clean);
    let subject_name = first_clean
        .and_then(|c| c.server_name.clone())
        .unwrap_or_else(|| {
            program
                .as_deref()
                .and_then(Path::file_name)
                .map_or("unknown".into(), |n| n.to_string_lossy().into_owned())
        });
    let subject_version = first_clean
        .and_then(|c| c.server_version.clone())
        .unwrap_or_else(|| "UNKNOWN".into());
    if let Some(hint) = scenario_hint(scenario, &trials) {
        reporter.line(hint);
    }
    if let Some(t) = trials.iter().find(|t| t.clean.incomplete()) {
        reporter.line(format!(
            "trial {}: no tool could be called safely (the tools/call step of raw/trial-{}/clean.oracle.json says why): no tool call is shown, so the result is at best INCOMPLETE, not PASS; to call a tool, name it with --tool NAME --tool-args JSON",
            t.index, t.index
        ));
    }
    let scan_values: BTreeMap<String, String> = env
        .iter()
        .chain(prep.redact.iter())
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    let scanner = PrivacyScanner::new(&scan_values);
    let tool = evidence::tool_identity();
    let subject_name = truncate(&scrub(&scanner, &subject_name), 128);
    let subject_version = truncate(&scrub(&scanner, &subject_version), 96);
    let identity = identity_record(
        prep,
        first_clean.map(|_| (subject_name.as_str(), subject_version.as_str())),
        &executed_changes,
    );
    let facts = RunFacts {
        run_id,
        epoch,
        started_wall,
        subject_name,
        subject_version,
        artifact_sha256: prep.artifact_sha256.clone(),
        identity,
        executed_changed: !executed_changes.is_empty(),
        filesystem,
        subject_wrote_files,
        cleanup_reason,
        env_keys: env.keys().cloned().collect(),
        seed: spec.seed,
        planned_trials: planned,
        tool,
        cleanup,
        cleanup_passed,
        cleanup_span: (cleanup_start, cleanup_end),
        http: http.is_some(),
        target: http.as_ref().map(http::HttpTarget::to_json),
        revision,
        external: program.is_none(),
        stopped_early: stopped_early.clone(),
    };
    let assembled = evidence::assemble(scenario, &trials, &facts, &scanner)?;
    for f in &assembled.privacy {
        reporter.line(format!(
            "privacy: redacted {} x {} ({}) in {}",
            f.count, f.kind, f.form, f.path
        ));
    }
    let built = assembled.builder.build()?;
    let report = crate::validate::validate_document(&built.doc, &Default::default());
    built.write_dir(&spec.output)?;
    reporter.line(format!("bundle written to {}", spec.output.display()));
    let fingerprint = built.doc["evidence"]["scenario"]["fingerprint"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    let bundle_digest = built.sealed.bundle_digest.clone();
    reporter.event(json!({
        "event": "part-written", "part": spec.part, "path": spec.output.display().to_string(),
        "trials": {"first": spec.trials.start(), "last": spec.trials.end()},
        "result": assembled.result, "classification": assembled.classification,
        "valid": report.valid, "primaryDiagnostic": report.primary(),
        "evidenceClass": report.evidence_class, "bundleDigest": bundle_digest,
    }));
    let rows = if spec.keep_rows {
        summary_rows(&trials)
    } else {
        Vec::new()
    };
    let stats = trials.iter().map(TrialStat::of).collect();
    drop(trials);
    Ok(PartDone {
        summary: RunSummary {
            output: spec.output.clone(),
            valid: report.valid,
            primary: report.primary().map(String::from),
            evidence_class: report.evidence_class.clone(),
            result: assembled.result,
            classification: assembled.classification,
            doc: built.doc,
            rows,
            privacy_findings: assembled.privacy.len(),
        },
        stats,
        fingerprint,
        bundle_digest,
        cleanup_passed,
        stopped_early: stopped_early.is_some(),
    })
}

/// What the operator needs when the clean control failed fatally: why, how
/// the subject ended, the last lines of its stderr (already recorded; secrets
/// redacted) and that the run stops here.
fn report_fatal(
    reporter: &mut Progress,
    why: &str,
    trial: &TrialRecord,
    env: &BTreeMap<String, String>,
    index: usize,
    planned: usize,
) {
    reporter.line(format!("clean control failed: {why}"));
    let scanner = PrivacyScanner::new(env);
    let tail = last_lines(&scanner, &trial.clean_session.rec.stderr, 10);
    if tail.is_empty() {
        reporter.line("the subject wrote nothing to stderr");
    } else {
        reporter.line("last lines of the subject's stderr:");
        for l in tail {
            reporter.line(format!("  | {l}"));
        }
    }
    reporter.line("the bundle records this failure (result FAIL); it cannot validate, because no negative control could run (MCP_RES_VACUOUS_NEGATIVE_CONTROL)");
    let last = planned;
    if index < last {
        reporter.line(format!(
            "no other control can run on a subject that does not answer its opening request: trials {}-{last} are not run",
            index + 1
        ));
    } else {
        reporter.line("no other control of this trial can run on a subject that does not answer its opening request");
    }
}

/// A scenario written for the reference server (its faults are injected
/// with the reference server's `--fault` flag, or it calls the reference
/// server's tools) whose clean control failed against a server that reports
/// another name: say that `--scenario generic` is the one for any server.
fn scenario_hint(scenario: &Scenario, trials: &[TrialRecord]) -> Option<String> {
    let for_reference = scenario.name.starts_with("reference-")
        || scenario
            .negatives
            .iter()
            .any(|c| c.injector == vocab::Injector::SubjectFlag);
    if !for_reference || trials.iter().all(|t| t.clean.passed) {
        return None;
    }
    let name = trials.iter().find_map(|t| t.clean.server_name.clone())?;
    (name != vocab::REFERENCE_SERVER_NAME).then(|| {
        format!(
            "scenario {} is written for mcpres's reference server (`mcpres serve`), but the subject reports itself as {:?}: use `--scenario {}` for any other MCP server",
            scenario.name,
            name.chars().take(64).collect::<String>(),
            vocab::DEFAULT_THIRD_PARTY_SCENARIO
        )
    })
}

/// `raw/subject-artifact.json` without the target: what was executed
/// (observed), the declared artifact (`--subject-artifact`, the operator's
/// claim), and what the server reported about itself (`reported`, with
/// `identitySource` saying where that came from). See spec/harness.md.
fn identity_record(prep: &Prepared, reported: Option<(&str, &str)>, changes: &[Value]) -> Value {
    let observed = !prep.executed.is_empty();
    let stateless = prep.revision.is_stateless();
    json!({
        "executed": prep.executed.iter().map(files::ExecutedFile::to_json).collect::<Vec<_>>(),
        "executedSha256": observed.then(|| prep.artifact_sha256.clone()),
        "executedDigestRule": "SHA-256 of the canonical JSON list of {role, argvIndex, bytes, sha256} of the executed files, in argv order",
        "hashedAgainAfterLastSession": observed.then(|| json!({"unchanged": changes.is_empty(), "changed": changes})),
        "declaredArtifact": prep.declared.as_ref().map(|d| json!({
            "artifact": d.label, "bytes": d.bytes, "sha256": d.sha256,
            "declaredBy": "operator (--subject-artifact)", "observed": false,
        })),
        "artifactSha256Source": if observed { "OBSERVED_EXECUTED_FILES" } else { "DECLARED_BY_OPERATOR" },
        "reported": reported.map(|(name, version)| json!({"name": name, "version": version})),
        "identitySource": match (reported, stateless) {
            (None, _) => "none: the server reported no name and version; the name is the executable's file name",
            (Some(_), false) => "serverInfo of the initialize result",
            (Some(_), true) => "_meta[\"io.modelcontextprotocol/serverInfo\"] of the server/discover result",
        },
    })
}

/// What the cleanup check covered and what it found.
struct CleanupChecks {
    /// The harness started the subject (else only its scratch is checked).
    started: bool,
    /// Descendants outside the process group were tracked (child subreaper).
    tree_tracked: bool,
    http: bool,
    escaped_gone: bool,
    groups_gone: bool,
    files_gone: bool,
    listener_gone: bool,
    scratch_gone: bool,
}

/// The CLEANUP_CHECK reason code: on PASS it names what was checked, on FAIL
/// what was left.
fn cleanup_reason(c: &CleanupChecks) -> String {
    let mut left = Vec::new();
    for (gone, what) in [
        (c.escaped_gone, "ESCAPED_PROCESSES"),
        (c.groups_gone, "GROUP_MEMBERS"),
        (c.files_gone, "SUBJECT_FILES"),
        (c.listener_gone, "LISTENER"),
        (c.scratch_gone, "SCRATCH"),
    ] {
        if !gone {
            left.push(what);
        }
    }
    if !left.is_empty() {
        return format!("RESIDUE_{}", left.join("_"));
    }
    if !c.started {
        return "HARNESS_SCRATCH_REMOVED".into();
    }
    format!(
        "{}{}_TEMP_DIRS_WORKDIR_AND_SCRATCH_CLEAN",
        if c.tree_tracked {
            "PROCESS_TREES"
        } else {
            "PROCESS_GROUPS"
        },
        if c.http { "_LISTENER" } else { "" }
    )
}

/// Did every sandboxed session (at least one) see `dir` through an overlay:
/// its scope lists `dir`, or a directory above it, as overlaid?
fn overlaid_in_every_session(sandboxes: &[Value], dir: Option<&std::path::Path>) -> bool {
    let Some(dir) = dir else {
        return false;
    };
    !sandboxes.is_empty()
        && sandboxes.iter().all(|s| {
            s["scope"]["overlaid"].as_array().is_some_and(|o| {
                o.iter()
                    .filter_map(Value::as_str)
                    .any(|p| dir.starts_with(p))
            })
        })
}

/// `raw/filesystem-report.json`: the files the subjects wrote and left, as
/// observed (see spec/harness.md, "Files the subject wrote").
fn files_report(
    temp_dirs: &[Value],
    workdir: Option<&files::DirChange>,
    open_left: &[Value],
    plan: &sandbox::Plan,
    sandboxes: &[Value],
) -> Value {
    let left_in = |sessions: &[Value]| {
        sessions
            .iter()
            .any(|d| d["entriesLeft"].as_array().is_some_and(|a| !a.is_empty()))
    };
    let new = workdir.map_or(&[][..], |c| c.new.as_slice());
    let changed_files = workdir.map_or(0, |c| {
        c.changed.iter().filter(|e| e["kind"] == "file").count()
    });
    let sandboxed = plan.tools().is_some();
    // In the sandbox every session sees the working directory through an
    // overlay (its scope lists it, or a directory above it, as overlaid):
    // what the subject wrote there is in that session's upper layer, and a
    // change on the host is another process's (a shell's redirect, a run
    // beside this one), never the subject's.
    let cwd = std::env::current_dir().ok();
    let workdir_overlaid = sandboxed && overlaid_in_every_session(sandboxes, cwd.as_deref());
    let wrote = left_in(temp_dirs)
        || left_in(sandboxes)
        || (!workdir_overlaid && (!new.is_empty() || changed_files > 0))
        || !open_left.is_empty();
    json!({
        "sandbox": plan.to_json(),
        "sandboxSessions": sandboxed.then(|| json!({
            "rule": "every entry of a session's overlay upper layers and private /dev/shm once the session has ended was written by the subject and left (a host file it removed shows as `removed`; the host's files are untouched); paths as the subject saw them, with length and SHA-256, never the content; CPython bytecode whose header names a source file beside it on the host is listed under runtimeCaches and is not residue",
            "sessions": sandboxes,
        })),
        "temporaryDirectories": {
            "rule": "each session gets a private directory (TMPDIR, TMP and TEMP, unless passed with --env); every entry in it once the session has ended was written by the subject and left",
            "sessions": temp_dirs,
        },
        "workingDirectory": workdir.map(|c| json!({
            "rule": "the top level of the working directory (the harness's, which the subject shares), before the first and after the last session: new entries, entries whose modification time or length changed, entries removed",
            "newEntries": c.new, "changedEntries": c.changed, "removedEntries": c.removed,
            "attributedToSubject": !workdir_overlaid,
            "attribution": if workdir_overlaid {
                "not the subject's: every session saw the working directory through an overlay, whose upper layer (sandboxSessions) holds what the subject wrote there; these are changes other processes made on the host"
            } else {
                "the subject's: it wrote in the host's working directory itself"
            },
        })),
        "openTemporaryFilesLeft": open_left,
        "subjectWroteFiles": wrote,
        "notObserved": if sandboxed {
            "files written and removed again within a session; writes below the mount points each session's scope lists as writable and not covered (devices under /dev)"
        } else {
            "files written and removed again within a session; files written anywhere but the session's temporary directory and the top level of the working directory, except files still held open under a system temporary directory at the end of a session"
        },
    })
}

/// The number of trials the whole run plans (the `N` of `trial i/N`).
fn reporter_total(spec: &PartSpec, reporter: &Progress) -> usize {
    reporter.total().max(*spec.trials.end())
}

/// One request/response exchange through the harness's own machinery: the
/// request is recorded and written by [`Session::send`], and frames are read
/// (each recorded before it is parsed) until the one answering `id`, EOF or
/// `limit`. Returns the frames and how collection ended (`ANSWERED`, `EOF`,
/// `DEADLINE`). Public for `benches/harness.rs`, which times it against a raw
/// pipe round trip; the scenarios use the same `scenario::collect`.
pub async fn round_trip(
    session: &mut Session,
    message: &Value,
    id: i64,
    limit: Duration,
) -> Result<(Vec<record::Frame>, &'static str), subject::SubjectError> {
    session.send(message).await?;
    Ok(scenario::collect(session, id, Instant::now() + limit).await)
}

/// One row per control of every trial, for the summary table.
fn summary_rows(trials: &[TrialRecord]) -> Vec<[String; 5]> {
    let mut rows = Vec::new();
    for t in trials {
        rows.push([
            t.index.to_string(),
            "clean".into(),
            t.clean.word().into(),
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
        for c in &t.self_checks {
            rows.push([
                t.index.to_string(),
                format!("self-check {}", c.control.name),
                if c.behaved() {
                    "EXPECTED".into()
                } else {
                    "UNEXPECTED".into()
                },
                c.observed.as_ref().map_or("NOT_RUN".into(), |j| {
                    format!("{} {}", j.verdict, j.stop_reason)
                }),
                match &c.mutant {
                    None => "not run".into(),
                    Some(_) if c.mutant_killed() => "killed".into(),
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
    rows
}

fn scrub(scanner: &PrivacyScanner, s: &str) -> String {
    let mut bytes = s.as_bytes().to_vec();
    scanner.redact(&mut bytes);
    String::from_utf8_lossy(&bytes).into_owned()
}

fn truncate(s: &str, max: usize) -> String {
    let s = if s.is_empty() { "unknown" } else { s };
    s.chars().take(max).collect()
}

/// The subject's injection log at `path`, read and then removed (it lives
/// in the run's scratch directory). Read without following a symlink, and
/// bounded: past `files::INJECTION_LOG_LIMIT` bytes only the whole lines
/// before the limit are kept.
fn take_log(path: &Path) -> Option<Vec<u8>> {
    let read = files::read_subject_file(path, files::INJECTION_LOG_LIMIT);
    let _ = std::fs::remove_file(path);
    let (mut bytes, over) = read?;
    if over {
        let keep = bytes.iter().rposition(|b| *b == b'\n').map_or(0, |i| i + 1);
        bytes.truncate(keep);
    }
    Some(bytes)
}

/// Does the injection log record an injection of `fault`?
fn injection_logged(log: Option<&[u8]>, fault: &str) -> bool {
    log.is_some_and(|bytes| {
        bytes.split(|b| *b == b'\n').any(|line| {
            serde_json::from_slice::<Value>(line)
                .is_ok_and(|v| v["event"] == "injection" && v["fault"] == fault)
        })
    })
}

/// Per-control progress of one trial: a line per control (with its duration
/// and the run's elapsed time) for a single bundle, the bar's tail on a
/// terminal, and a `control-finished` event with `--json`.
struct ControlProgress<'a> {
    reporter: &'a mut Progress,
    /// Print a line per control (single bundles; a campaign prints per trial).
    lines: bool,
    trial: usize,
    total: usize,
    part: usize,
}

impl ControlProgress<'_> {
    fn done(&mut self, control: &str, outcome: &str, started: Instant) {
        let took = started.elapsed();
        let text = format!(
            "trial {}/{}: {control} {outcome} in {:.1} s (elapsed {})",
            self.trial,
            self.total,
            took.as_secs_f64(),
            progress::clock(self.reporter.elapsed())
        );
        if self.lines {
            self.reporter.line(text);
        } else {
            self.reporter.control_finished(text);
        }
        self.reporter.event(json!({
            "event": "control-finished", "trial": self.trial, "part": self.part,
            "control": control, "outcome": outcome,
            "durationMs": u64::try_from(took.as_millis()).unwrap_or(u64::MAX),
        }));
    }
}

/// The clean control failed fatally: its opening request (initialize or
/// server/discover) got no well-formed answer, because the subject exited,
/// closed its output or never answered. No other control can reach its
/// property then, so the run stops after this trial. Returns the reason.
fn fatal_clean_failure(trial: &TrialRecord) -> Option<String> {
    if trial.clean.round_trip {
        return None;
    }
    let ended = &trial.clean_session.ended;
    let how = match (ended.exit_code, ended.signal) {
        (Some(code), _) if ended.exited_on_its_own => {
            format!("the subject exited with status {code}")
        }
        (_, Some(sig)) if ended.exited_on_its_own => {
            format!("the subject was killed by signal {sig}")
        }
        _ => "the subject was still running and was killed".to_string(),
    };
    Some(format!(
        "the clean control of trial {} got no answer to its opening request ({}); {how}",
        trial.index, trial.clean.stop_reason
    ))
}

/// The last `n` non-empty lines of `bytes` (a subject's stderr), each cut to
/// 200 characters, with secrets redacted.
fn last_lines(scanner: &PrivacyScanner, bytes: &[u8], n: usize) -> Vec<String> {
    let text = scrub(scanner, &String::from_utf8_lossy(bytes));
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    lines[lines.len().saturating_sub(n)..]
        .iter()
        .map(|l| {
            let escaped: String = l.chars().flat_map(char::escape_debug).take(200).collect();
            escaped
        })
        .collect()
}

#[allow(clippy::too_many_arguments)]
async fn run_trial(
    progress: &mut ControlProgress<'_>,
    scenario: &Scenario,
    index: usize,
    seed: u32,
    epoch: Instant,
    program: Option<&Path>,
    args: &[String],
    env: &BTreeMap<String, String>,
    scratch: &Path,
    temp_root: Option<&Path>,
    sandbox: Option<(&sandbox::Tools, &Path)>,
    http: Option<&http::HttpTarget>,
    revision: vocab::Revision,
    next_trial: Option<usize>,
    prepared: &std::sync::Mutex<Option<subject::Pending>>,
) -> Result<TrialRecord, HarnessError> {
    let ms = || u64::try_from(epoch.elapsed().as_millis()).unwrap_or(u64::MAX);
    let start_ms = ms();
    // The reference server's injection journals (`--injection-log`): a
    // sandboxed subject writes them through to the host, where they are read.
    let journals = scratch.join("journals");
    std::fs::create_dir_all(&journals).map_err(|source| HarnessError::Io {
        path: journals.clone(),
        source,
    })?;
    let spawner = subject::Spawner {
        epoch,
        program,
        args,
        env,
        http,
        listen_limit: LISTEN_LIMIT,
        revision,
        temp_root,
        sandbox,
        through: Some(&journals),
        prepared,
    };
    let clean_started = Instant::now();
    if progress.lines && progress.trial == 1 {
        // The first exchange is where a subject that never answers costs time.
        progress.reporter.line(format!(
            "trial 1/{}: clean control: starting the subject; each request has up to {} ms for its answer",
            progress.total,
            2 * scenario.exchange_budget_ms
        ));
    }
    // The sessions after the clean control, in order (each control that
    // needs a subject, then the client faults' session): each is prepared
    // while the one before it runs (in the sandbox, its stage is set up
    // ahead; spec/harness.md).
    let planned: Vec<(String, Vec<String>)> = scenario
        .negatives
        .iter()
        .filter(|c| !c.injector.is_self_check())
        .map(|control| {
            let log = journals.join(format!("t{index}-{}.injection.jsonl", control.name));
            let extra = if control.injector == vocab::Injector::SubjectFlag {
                scenario::fault_args(control, u64::from(seed), &log)
            } else {
                Vec::new()
            };
            (format!("t{index}-{}", control.name), extra)
        })
        .chain(
            (!scenario.client_faults.is_empty()).then(|| (format!("t{index}-client"), Vec::new())),
        )
        .chain(next_trial.map(|next| (format!("t{next}-clean"), Vec::new())))
        .collect();
    let subject_negatives = scenario
        .negatives
        .iter()
        .filter(|c| !c.injector.is_self_check())
        .count();
    let prepare_next = |i: usize| {
        if let Some((name, extra)) = planned.get(i) {
            spawner.prepare(name, extra);
        }
    };
    let mut session = spawner.spawn(&format!("t{index}-clean"), &[]).await?;
    prepare_next(0);
    // A fresh random probe per trial: a subject that replays a recorded
    // transcript cannot know it.
    let probe = format!("mcpres-probe-{}", scenario::fresh_token());
    let mut clean = if scenario.generic {
        // The subject's environment: the --env pairs plus, for a subject the
        // harness started, the temporary-directory variables it provides.
        let mut keys: std::collections::BTreeSet<String> = env.keys().cloned().collect();
        if temp_root.is_some() {
            keys.extend(subject::TEMP_ENV_KEYS.iter().map(|k| k.to_string()));
        }
        wire::run_clean_generic(&mut session, scenario, &probe, &keys).await
    } else {
        scenario::run_clean(&mut session, scenario, &probe).await
    };
    // The session's private temporary directory differs per session: a
    // subject that reports it (get-env) must not make the trials differ.
    clean.volatile.extend(session.temp_dir_path());
    let (rec, ended) = session.finish(EXIT_GRACE).await;
    let clean_session = SessionRecord {
        role: "clean".into(),
        start_ms,
        rec,
        ended,
    };
    progress.done(
        "clean control",
        &format!("{} ({})", clean.word(), clean.stop_reason),
        clean_started,
    );
    // The harness's self-checks: its oracle on faulted copies of the clean
    // control's recorded tools/list answer (no subject process involved).
    let self_checks: Vec<wire::SelfCheckRecord> = scenario
        .negatives
        .iter()
        .filter(|c| c.injector.is_self_check())
        .map(|c| {
            wire::self_check(
                c,
                u64::from(seed),
                &clean,
                scenario.exchange_budget_ms,
                revision,
            )
        })
        .collect();
    if !clean.round_trip {
        // Fatal (see `fatal_clean_failure`): the subject's other controls are
        // not run (the self-checks above involve no subject process).
        return Ok(TrialRecord {
            index,
            seed,
            start_ms,
            end_ms: ms(),
            clean,
            clean_session,
            negatives: Vec::new(),
            self_checks,
            recoveries: Vec::new(),
            client: None,
            cancelled: true,
        });
    }
    let mut negatives = Vec::new();
    for (i, control) in scenario
        .negatives
        .iter()
        .filter(|c| !c.injector.is_self_check())
        .enumerate()
    {
        let log = journals.join(format!("t{index}-{}.injection.jsonl", control.name));
        let by_subject = control.injector == vocab::Injector::SubjectFlag;
        let (name, extra) = &planned[i];
        let start = ms();
        let started = Instant::now();
        let mut session = spawner.spawn(name, extra).await?;
        prepare_next(i + 1);
        let (outcome, harness_log) = if by_subject {
            (
                scenario::run_negative(&mut session, scenario, control).await,
                None,
            )
        } else {
            wire::run_request_negative(&mut session, scenario, control, (index, seed)).await
        };
        let (rec, ended) = session.finish(EXIT_GRACE).await;
        let injection_log = if by_subject {
            take_log(&log)
        } else {
            harness_log
        };
        let fault_injected = injection_logged(injection_log.as_deref(), &control.fault);
        progress.done(
            &format!("negative control {}", control.name),
            &outcome.observed.as_ref().map_or("NOT_REACHED".into(), |j| {
                format!("{} {}", j.verdict, j.stop_reason)
            }),
            started,
        );
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
    let mut recoveries = Vec::new();
    for control in &scenario.recoveries {
        let log = journals.join(format!("t{index}-{}.injection.jsonl", control.name));
        let started = Instant::now();
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
        let injection_log = take_log(&log);
        let fault_injected = injection_logged(injection_log.as_deref(), &control.fault);
        progress.done(
            &format!("recovery control {}", control.name),
            run.outcome.stop_reason,
            started,
        );
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
        let started = Instant::now();
        let mut session = spawner.spawn(&format!("t{index}-client"), &[]).await?;
        prepare_next(subject_negatives + 1);
        let outcome = client::run_client_faults(&mut session, scenario).await;
        progress.done(
            "client faults",
            if outcome.passed() {
                "HANDLED"
            } else {
                "MISHANDLED"
            },
            started,
        );
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
        self_checks,
        recoveries,
        client,
        cancelled: false,
    })
}

/// What `mcpres demo` wrote besides the bundle directory.
#[derive(Debug, Clone)]
pub struct DemoSigned {
    /// `<name>.attested.json`.
    pub attested: PathBuf,
    /// `<name>.pub`: the public half of the ephemeral key (SPKI PEM); the
    /// private half is never written.
    pub public_key: PathBuf,
    /// `<name>.trust-policy.json`: the trust policy that names that key.
    pub trust_policy: PathBuf,
    /// The classification the verification derived.
    pub classification: String,
    /// When the trust policy stops applying.
    pub valid_until: String,
}

/// The files `mcpres demo` writes beside the bundle directory `output`:
/// `<name>.attested.json`, `<name>.pub` and `<name>.trust-policy.json`.
pub fn demo_outputs(output: &Path) -> [PathBuf; 3] {
    let beside = |suffix: &str| {
        let mut name = output
            .file_name()
            .map(|n| n.to_os_string())
            .unwrap_or_default();
        name.push(suffix);
        output.with_file_name(name)
    };
    [
        beside(".attested.json"),
        beside(".pub"),
        beside(".trust-policy.json"),
    ]
}

/// How long the demo's trust policy applies: from an hour before signing to
/// 30 days after.
const DEMO_POLICY_DAYS: i64 = 30;

/// `mcpres demo`'s last step: sign the bundle document `doc` (written at
/// `output`) with an ephemeral key, verify it under a trust policy naming
/// only that key, and write beside `output` the attested bundle, the key's
/// public half and the trust policy (see [`demo_outputs`]), so that
/// `mcpres verify` reproduces the classification. The private key is never
/// written. Returns what was written and the authenticity classification.
pub fn sign_and_verify(doc: &Value, output: &Path) -> Result<DemoSigned, HarnessError> {
    sign_and_verify_inner(doc, output).map_err(HarnessError::Sign)
}

fn sign_and_verify_inner(doc: &Value, output: &Path) -> Result<DemoSigned, String> {
    use crate::attest::{keys::KeyPair, policy};
    use crate::produce::sign;
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
    let valid_until = format_rfc3339_millis(now + DEMO_POLICY_DAYS * 86_400_000);
    let mut trust = policy::init(
        "policy/mcpres-demo",
        "1.0.0",
        &format_rfc3339_millis(now - 3_600_000),
        &valid_until,
    )
    .map_err(|e| e.to_string())?;
    policy::add_signer(&mut trust, &key.public().fingerprint(), identity)
        .map_err(|e| e.to_string())?;
    let report = crate::validate::validate_document(
        &attested,
        &crate::validate::Options {
            trust_policy: Some(
                policy::VerifierPolicy::from_value(&trust).map_err(|e| e.to_string())?,
            ),
            ..Default::default()
        },
    );
    if !report.valid {
        return Err(format!(
            "verification failed: {}",
            report.primary().unwrap_or("?")
        ));
    }
    let [attested_path, pub_path, policy_path] = demo_outputs(output);
    let write = |path: &Path, bytes: &[u8]| {
        crate::bundle::dir::write_new(path, bytes).map_err(|e| format!("{}: {e}", path.display()))
    };
    let bytes = crate::produce::builder::to_file_bytes(&attested).map_err(|e| e.to_string())?;
    write(&attested_path, &bytes)?;
    let pem = key.public().to_pem().map_err(|e| e.to_string())?;
    write(&pub_path, pem.as_bytes())?;
    let mut policy_bytes = serde_json::to_vec_pretty(&trust).map_err(|e| e.to_string())?;
    policy_bytes.push(b'\n');
    write(&policy_path, &policy_bytes)?;
    let classification = report
        .extra
        .get("authenticityClassification")
        .and_then(Value::as_str)
        .unwrap_or("valid")
        .to_string();
    Ok(DemoSigned {
        attested: attested_path,
        public_key: pub_path,
        trust_policy: policy_path,
        classification,
        valid_until,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_working_directory_is_overlaid_only_when_every_session_says_so() {
        let session = |overlaid: &[&str]| json!({"scope": {"overlaid": overlaid}});
        let cwd = std::path::Path::new("/work/main");
        let both = [session(&["/etc", "/work"]), session(&["/work/main"])];
        assert!(overlaid_in_every_session(&both, Some(cwd)));
        // One session that did not overlay it (a mount that failed), none
        // at all, a sibling that only shares a prefix, or no directory.
        let one = [session(&["/work"]), session(&["/etc"])];
        assert!(!overlaid_in_every_session(&one, Some(cwd)));
        assert!(!overlaid_in_every_session(&[], Some(cwd)));
        assert!(!overlaid_in_every_session(
            &[session(&["/work/mai"])],
            Some(cwd)
        ));
        assert!(!overlaid_in_every_session(&both, None));
        assert!(!overlaid_in_every_session(
            &[json!({"scope": {}})],
            Some(cwd)
        ));
    }

    /// The harness's files, lowest first (spec/harness.md, "Source layout").
    const LAYERS: [(&str, &str); 15] = [
        ("files", include_str!("files.rs")),
        ("privacy", include_str!("privacy.rs")),
        ("vocab", include_str!("vocab.rs")),
        ("contract", include_str!("contract.rs")),
        ("record", include_str!("record.rs")),
        ("http", include_str!("http.rs")),
        ("subject", include_str!("subject.rs")),
        ("oracle", include_str!("oracle.rs")),
        ("scenario_file", include_str!("scenario_file.rs")),
        ("scenario", include_str!("scenario.rs")),
        ("wire", include_str!("wire.rs")),
        ("client", include_str!("client.rs")),
        ("recovery", include_str!("recovery.rs")),
        ("evidence", include_str!("evidence.rs")),
        ("campaign", include_str!("campaign.rs")),
    ];

    /// The module names a file's code (its tests left out) reaches through
    /// `super::NAME` or `harness::NAME`.
    fn reached(text: &str) -> Vec<String> {
        let code = text.split("#[cfg(test)]\nmod tests").next().unwrap_or(text);
        let mut names = Vec::new();
        for prefix in ["super::", "harness::"] {
            for (at, _) in code.match_indices(prefix) {
                let rest = &code[at + prefix.len()..];
                assert!(!rest.starts_with('{'), "grouped import {prefix}{{...}}");
                let name: String = rest
                    .chars()
                    .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                    .collect();
                names.push(name);
            }
        }
        names
    }

    #[test]
    fn harness_files_import_only_the_files_below_them() {
        let names: Vec<&str> = LAYERS.iter().map(|(n, _)| *n).collect();
        for (i, (name, text)) in LAYERS.iter().enumerate() {
            for reached in reached(text) {
                // Anything else is an item of `mod.rs`, which is above every file.
                let j = names.iter().position(|n| *n == reached);
                assert!(
                    j.is_some_and(|j| j < i),
                    "{name}.rs reaches harness::{reached}, which is not below it"
                );
            }
        }
        // The test sees every file of the harness.
        let on_disk =
            std::fs::read_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/src/produce/harness"))
                .unwrap()
                .filter_map(|e| e.ok()?.file_name().into_string().ok())
                .filter(|f| f != "mod.rs")
                .count();
        assert_eq!(on_disk, LAYERS.len());
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
