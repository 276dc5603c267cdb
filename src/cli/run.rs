//! The harness's commands: `mcpres run`, `mcpres scenarios list|show|check`
//! and `mcpres demo`. Their flags are parsed here and turned into the
//! library's checked [`RunOptions`] before any work; the library returns a
//! `Result`, and what is printed and the exit code are decided here.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use clap::{Args, Subcommand, ValueEnum};
use serde_json::{Value, json};

use super::output::shown;
use super::{CliError, CliResult, Exit};
use mcpres::produce::drive::ident::random_hex;
use mcpres::produce::harness::scenario::builtins;
use mcpres::produce::harness::vocab::{
    DEFAULT_SCENARIO, DEFAULT_THIRD_PARTY_SCENARIO, Revision, Scenario,
};
use mcpres::produce::harness::{
    CampaignSummary, ContractsSummary, HarnessError, RunOptions, RunOutcome, RunSummary, campaign,
    demo_outputs, parse_env, run_blocking, scenario_file, sign_and_verify,
};
use mcpres::produce::progress::Progress;

/// Arguments of `mcpres run`.
#[derive(Debug, Clone, Args)]
pub struct RunArgs {
    /// Built-in scenario name (see `mcpres scenarios list`), or a scenario file
    /// (TOML or JSON; a path containing `/` or ending in .toml/.json). Default:
    /// `reference-faults` when the subject is `mcpres serve`, else `generic`
    /// (any MCP server).
    #[arg(long)]
    pub scenario: Option<String>,
    /// Number of trials (each one clean control plus every negative control).
    /// More than one bundle holds (8 for the built-in scenarios over stdio)
    /// makes DIR a campaign directory of several bundles (at most 10000 trials).
    /// Default: the scenario's `defaults.trials`, else 1.
    #[arg(long)]
    pub trials: Option<usize>,
    /// Base seed; trial i uses seed + i - 1. Default: the scenario's
    /// `defaults.seed`, else 1.
    #[arg(long)]
    pub seed: Option<u32>,
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
    pub revision: Option<RevisionArg>,
    /// Progress events as JSON Lines on stdout (run-started, trial-finished,
    /// cleanup, part-written, run-finished) instead of the summary table.
    #[arg(long)]
    pub json: bool,
    /// The tool the `generic` clean control calls, instead of `echo` or a
    /// tool whose annotations declare it read-only (`readOnlyHint: true`,
    /// not destructive or open-world) without required arguments. You vouch
    /// that calling it is safe; the descriptor's side-effect model is then
    /// UNKNOWN. With `tool-contracts`: the tools to exercise, whatever their
    /// annotations (repeat it to name several).
    #[arg(long = "tool", value_name = "NAME")]
    pub tools: Vec<String>,
    /// The arguments of the `--tool` call: a JSON object (default `{}`).
    #[arg(long, value_name = "JSON", requires = "tools")]
    pub tool_args: Option<String>,
    /// What a subject mcpres starts runs in: `auto` (user, mount and, over
    /// stdio, network namespaces with every directory an overlay, where the
    /// machine allows it; else the scoped observation, said and recorded),
    /// `require` (refuse to run without it) or `off`.
    #[arg(long, value_enum, default_value = "auto")]
    pub sandbox: SandboxArg,
    /// The bundle directory to create (must not exist); a campaign directory
    /// when --trials exceeds what one bundle holds.
    #[arg(short, long, value_name = "DIR")]
    pub output: PathBuf,
    /// The subject: PROGRAM [ARGS...] after `--` (executed directly, no shell).
    /// Without PROGRAM, `--http URL` names a server the harness does not start
    /// (then `--subject-artifact` is required, and no process is observed).
    #[arg(last = true, value_name = "PROGRAM")]
    pub command: Vec<String>,
}

/// `--revision`: the MCP protocol revision to speak.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum RevisionArg {
    /// `initialize` handshake, then requests on that session.
    #[value(name = "2025-11-25")]
    V2025_11_25,
    /// Stateless: `server/discover`, then requests that each carry their
    /// own `_meta` (version, client capabilities); no session.
    #[value(name = "2026-07-28")]
    V2026_07_28,
}

/// `--sandbox`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum SandboxArg {
    Auto,
    Require,
    Off,
}

impl From<SandboxArg> for mcpres::produce::drive::sandbox::Mode {
    fn from(arg: SandboxArg) -> Self {
        use mcpres::produce::drive::sandbox::Mode;
        match arg {
            SandboxArg::Auto => Mode::Auto,
            SandboxArg::Require => Mode::Require,
            SandboxArg::Off => Mode::Off,
        }
    }
}

impl From<RevisionArg> for Revision {
    fn from(arg: RevisionArg) -> Self {
        match arg {
            RevisionArg::V2025_11_25 => Revision::V2025_11_25,
            RevisionArg::V2026_07_28 => Revision::V2026_07_28,
        }
    }
}

impl RunArgs {
    /// The checked options of the run (`--env` pairs parsed).
    fn into_options(self) -> Result<RunOptions, HarnessError> {
        Ok(RunOptions {
            env: parse_env(&self.env)?,
            scenario: self.scenario,
            trials: self.trials,
            seed: self.seed,
            subject_artifact: self.subject_artifact,
            http: self.http,
            allow_remote: self.allow_remote,
            revision: self.revision.map(Revision::from),
            output: self.output,
            command: self.command,
            tools: self.tools,
            tool_args: self.tool_args,
            sandbox: self.sandbox.into(),
        })
    }
}

/// Valid when the run passed and its evidence is valid, else Failing
/// (evidence written).
fn outcome_exit(passed: bool) -> Exit {
    if passed { Exit::Valid } else { Exit::Failing }
}

/// The exit code a `--json` `run-finished` event reports.
fn outcome_code(passed: bool) -> i32 {
    i32::from(outcome_exit(passed).code())
}

/// An output the run will create (a bundle directory, or a file beside
/// it): checked before anything starts, so that no trial runs for an
/// output that cannot be written. It must not exist, and its directory must
/// exist and accept new entries (probed with an empty directory that is
/// removed at once).
fn check_output(path: &Path, who: &str) -> Result<(), CliError> {
    super::check_new_file(path, who)?;
    let parent = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let probe = parent.join(format!(
        ".mcpres-probe-{}-{}",
        std::process::id(),
        random_hex(4)
    ));
    match std::fs::create_dir(&probe) {
        Ok(()) => {
            let _ = std::fs::remove_dir(&probe);
            Ok(())
        }
        Err(e) => Err(CliError::Unusable(format!(
            "{who} {}: cannot create anything in {}: {e}",
            shown(path),
            shown(parent)
        ))),
    }
}

/// `mcpres scenarios ...`.
#[derive(Debug, Subcommand)]
pub enum ScenariosAction {
    /// List the built-in scenarios and their controls.
    List,
    /// Print a built-in scenario's file (TOML): a starting point for your own.
    Show {
        /// Built-in scenario name.
        name: String,
    },
    /// Check a scenario file (TOML or JSON) against the scenario schema and rules.
    Check {
        /// The scenario file.
        file: PathBuf,
    },
}

/// Run a `scenarios` action.
pub fn scenarios(action: &ScenariosAction) -> CliResult {
    match action {
        ScenariosAction::List => list_scenarios(),
        ScenariosAction::Show { name } => show_scenario(name),
        ScenariosAction::Check { file } => check_scenario(file),
    }
}

/// `mcpres run`: Valid when the run passed and its evidence is valid,
/// Failing when it failed or is invalid with the bundle written, an error
/// when no evidence was produced.
pub fn main_run(args: RunArgs) -> CliResult {
    let mut reporter = Progress::new(args.json);
    if let Err(e) = check_output(&args.output, "mcpres run: --output") {
        let message = e.to_string();
        reporter.event(failed_event(
            message.strip_prefix("mcpres run: ").unwrap_or(&message),
            Exit::Unusable.code(),
        ));
        return Err(e);
    }
    let result = args
        .into_options()
        .and_then(|options| run_blocking(options, &mut reporter));
    reporter.finish();
    if reporter.closed() {
        // The reader of our output went away: the run stopped as if
        // interrupted (subjects killed, scratch removed); end quietly.
        return Err(CliError::Closed);
    }
    match result {
        Ok(outcome) => {
            let exit = outcome_exit(outcome.passed());
            if reporter.json() {
                reporter.event(finished_event(&outcome, outcome_code(outcome.passed())));
            } else {
                match &outcome {
                    RunOutcome::Bundle(s) => print_summary(s)?,
                    RunOutcome::Campaign(c) => print_campaign(c)?,
                    RunOutcome::Contracts(c) => print_contracts(c)?,
                }
            }
            Ok(exit)
        }
        Err(e) => {
            let code = error_code(&e);
            reporter.event(failed_event(&e.to_string(), code));
            Err(run_error(format!("mcpres run: error: {e}"), code))
        }
    }
}

/// The last `--json` event of a run that produced no output.
fn failed_event(error: &str, code: u8) -> Value {
    json!({
        "event": "run-finished", "result": null, "classification": null, "valid": false,
        "output": null, "error": error, "exitCode": code,
    })
}

/// The exit status of a run that produced no evidence: 128 + the signal's
/// number when a termination signal ended it (130 SIGINT, 143 SIGTERM,
/// 129 SIGHUP), else 2.
fn error_code(e: &HarnessError) -> u8 {
    match e {
        HarnessError::Interrupted(sig) => u8::try_from(sig.exit_code()).unwrap_or(2),
        _ => 2,
    }
}

/// The error a run that produced no evidence ends with.
fn run_error(message: String, status: u8) -> CliError {
    if status == Exit::Unusable.code() {
        CliError::Unusable(message)
    } else {
        CliError::Signalled { message, status }
    }
}

/// The last `--json` event of a run that produced output.
fn finished_event(outcome: &RunOutcome, code: i32) -> Value {
    match outcome {
        RunOutcome::Bundle(s) => json!({
            "event": "run-finished", "campaign": false, "result": s.result,
            "classification": s.classification, "valid": s.valid,
            "evidenceClass": s.evidence_class, "primaryDiagnostic": s.primary,
            "output": s.output.display().to_string(), "parts": 1,
            "privacyFindingsRedacted": s.privacy_findings, "exitCode": code,
        }),
        RunOutcome::Campaign(c) => json!({
            "event": "run-finished", "campaign": true, "result": c.result,
            "classification": c.classification, "valid": c.parts.iter().all(|p| p.valid),
            "output": c.output.display().to_string(),
            "summary": c.output.join(campaign::FILE_NAME).display().to_string(),
            "parts": c.parts.len(), "exitCode": code,
        }),
        RunOutcome::Contracts(c) => json!({
            "event": "run-finished", "campaign": false, "toolContracts": true,
            "result": c.result, "valid": c.tools.iter().all(|(_, s)| s.valid),
            "output": c.output.display().to_string(),
            "summary": c.output.join(mcpres::produce::harness::CONTRACTS_FILE).display().to_string(),
            "parts": c.tools.len(), "exitCode": code,
        }),
    }
}

/// A tool-contracts run: each tool's controls, then one line per tool.
fn print_contracts(c: &ContractsSummary) -> Result<(), CliError> {
    outln!(
        "{:<24} {:<40} {:<11} {:<34} mutant",
        "tool",
        "control",
        "outcome",
        "verdict / stop reason"
    )?;
    for (tool, s) in &c.tools {
        for r in &s.rows {
            outln!(
                "{:<24} {:<40} {:<11} {:<34} {}",
                tool,
                r[1],
                r[2],
                r[3],
                r[4]
            )?;
        }
    }
    for t in c.doc["tools"].as_array().into_iter().flatten() {
        outln!(
            "tool {}: {}{}",
            t["tool"].as_str().unwrap_or("?"),
            t["result"].as_str().unwrap_or("?"),
            match (t["directory"].as_str(), t["reason"].as_str()) {
                (Some(d), _) => format!(
                    " ({} invalid input(s); bundle {})",
                    t["invalidInputs"],
                    shown(&c.output.join(d))
                ),
                (None, Some(why)) => format!(" ({why})"),
                _ => String::new(),
            }
        )?;
    }
    for t in c.doc["leftAlone"].as_array().into_iter().flatten() {
        outln!(
            "tool {}: not called: {}",
            t["tool"].as_str().unwrap_or("?"),
            t["why"].as_str().unwrap_or("?")
        )?;
    }
    outln!(
        "tool contracts result {}  summary {}",
        c.result,
        shown(&c.output.join(mcpres::produce::harness::CONTRACTS_FILE))
    )?;
    Ok(())
}

fn print_summary(s: &RunSummary) -> Result<(), CliError> {
    // Each column as wide as its widest cell (client-fault controls have
    // long names and verdicts), at least the old fixed widths.
    let header = ["trial", "control", "outcome", "verdict / stop reason"];
    let mut width = [6, 28, 11, 32];
    for r in &s.rows {
        for (w, cell) in width.iter_mut().zip(r.iter()) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let [w0, w1, w2, w3] = width;
    outln!(
        "{:<w0$} {:<w1$} {:<w2$} {:<w3$} mutant",
        header[0],
        header[1],
        header[2],
        header[3]
    )?;
    for r in &s.rows {
        outln!(
            "{:<w0$} {:<w1$} {:<w2$} {:<w3$} {}",
            r[0],
            r[1],
            r[2],
            r[3],
            r[4]
        )?;
    }
    outln!(
        "result {}  stability {}  evidence class {}  bundle {} ({})  privacy findings redacted: {}",
        s.result,
        s.classification,
        s.evidence_class.as_deref().unwrap_or("-"),
        shown(&s.output),
        if s.valid {
            "valid".to_string()
        } else {
            format!("INVALID: {}", s.primary.as_deref().unwrap_or("?"))
        },
        s.privacy_findings
    )?;
    Ok(())
}

fn print_campaign(c: &CampaignSummary) -> Result<(), CliError> {
    outln!(
        "{:<9} {:<11} {:<23} {:<6} {:<22} bundle",
        "part",
        "trials",
        "seeds",
        "result",
        "stability"
    )?;
    for p in &c.parts {
        let seeds = match (p.seeds.first(), p.seeds.last()) {
            (Some(a), Some(b)) => format!("{a}-{b}"),
            _ => "-".into(),
        };
        outln!(
            "{:<9} {:<11} {:<23} {:<6} {:<22} {}",
            p.path,
            format!("{}-{}", p.trials.start(), p.trials.end()),
            seeds,
            p.result,
            p.classification,
            if p.valid {
                "valid".to_string()
            } else {
                format!("INVALID: {}", p.primary.as_deref().unwrap_or("?"))
            }
        )?;
    }
    let d = &c.doc["durationMs"];
    outln!(
        "campaign result {}  stability {}  trials {} ({} succeeded)  duration min/median/p95 {}/{}/{} ms  parts {} ({})  summary {}",
        c.result,
        c.classification,
        c.doc["completedTrials"],
        c.doc["counts"]["success"],
        d["minimum"],
        d["median"],
        d["p95"],
        c.parts.len(),
        if c.parts.iter().all(|p| p.valid) {
            "all valid"
        } else {
            "NOT all valid"
        },
        shown(&c.output.join(campaign::FILE_NAME))
    )?;
    Ok(())
}

/// `mcpres scenarios list`: each built-in scenario and its controls.
fn list_scenarios() -> CliResult {
    for s in builtins() {
        let default = if s.name == DEFAULT_SCENARIO {
            " (default for `mcpres serve`)"
        } else if s.name == DEFAULT_THIRD_PARTY_SCENARIO {
            " (default for any other subject)"
        } else {
            ""
        };
        outln!("{}{default}: {}", s.name, s.description)?;
        describe_controls(&s)?;
    }
    Ok(Exit::Valid)
}

fn describe_controls(s: &Scenario) -> Result<(), CliError> {
    for n in &s.negatives {
        outln!(
            "  negative control {}: fault {}@{} ({}) expects {} {}; mutant {}",
            n.name,
            n.fault,
            n.trigger,
            n.injector.method(),
            n.expected_verdict,
            n.expected_stop,
            n.mutant.id()
        )?;
    }
    for r in &s.recoveries {
        let p = &r.policy;
        outln!(
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
        )?;
    }
    for c in &s.client_faults {
        outln!(
            "  client fault {}: {} (HARNESS_CLIENT_INPUT) expects {}{}",
            c.name,
            c.kind.id(),
            c.expect_label(),
            c.error_code.map(|e| format!(" {e}")).unwrap_or_default()
        )?;
    }
    Ok(())
}

/// `mcpres scenarios show NAME`: the built-in scenario's file.
fn show_scenario(name: &str) -> CliResult {
    match scenario_file::builtin_text(name) {
        Some(text) => {
            super::output::stdout_bytes(text.as_bytes())?;
            Ok(Exit::Valid)
        }
        None => Err(CliError::Unusable(format!(
            "mcpres scenarios show: no built-in scenario {:?} (built-ins: {})",
            super::output::escaped(name),
            scenario_file::BUILTINS.map(|(n, _)| n).join(", ")
        ))),
    }
}

/// `mcpres scenarios check FILE`: 0 when the file is a usable scenario, 1 when
/// it breaks the schema or a rule, 2 when it cannot be read.
fn check_scenario(path: &Path) -> CliResult {
    match scenario_file::load(path) {
        Ok(s) => {
            outln!(
                "{}: scenario {} is valid ({} negative, {} recovery, {} client-fault controls)",
                shown(path),
                s.name,
                s.negatives.len(),
                s.recoveries.len(),
                s.client_faults.len()
            )?;
            describe_controls(&s)?;
            Ok(Exit::Valid)
        }
        Err(
            e @ (scenario_file::ScenarioError::Read { .. }
            | scenario_file::ScenarioError::TooLarge(_)),
        ) => Err(CliError::Unusable(format!("mcpres scenarios check: {e}"))),
        Err(e) => Err(CliError::Failing(format!("mcpres scenarios check: {e}"))),
    }
}

/// Arguments of `mcpres demo`.
#[derive(Debug, Clone, Args)]
pub struct DemoArgs {
    /// The bundle directory to create (default: ./mcpres-demo-<random>).
    #[arg(short, long, value_name = "DIR")]
    pub output: Option<PathBuf>,
}

/// `mcpres demo`: run the default scenario (3 trials) against this executable's
/// reference server, validate, sign with an ephemeral key and verify; the
/// key's public half and the trust policy are kept beside the bundle, and the
/// commands that reproduce the verification are printed.
pub fn main_demo(args: DemoArgs) -> CliResult {
    let exe = std::env::current_exe().map_err(|e| {
        CliError::Unusable(format!("mcpres demo: cannot locate this executable: {e}"))
    })?;
    let output = args
        .output
        .unwrap_or_else(|| PathBuf::from(format!("mcpres-demo-{}", random_hex(4))));
    // Every output is checked before the run: the bundle directory, and the
    // attested bundle, public key and trust policy written beside it.
    check_output(&output, "mcpres demo: --output")?;
    if let Some(taken) = demo_outputs(&output)
        .into_iter()
        .find(|p| p.symlink_metadata().is_ok())
    {
        return Err(CliError::Unusable(format!(
            "mcpres demo: error: {} already exists (the demo writes it beside {})",
            shown(&taken),
            shown(&output)
        )));
    }
    let options = RunOptions {
        scenario: None,
        trials: Some(3),
        seed: Some(1),
        env: BTreeMap::new(),
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
        tools: Vec::new(),
        tool_args: None,
        sandbox: Default::default(),
    };
    let mut reporter = Progress::new(false);
    let outcome = run_blocking(options, &mut reporter);
    reporter.finish();
    if reporter.closed() {
        return Err(CliError::Closed);
    }
    let summary = match outcome {
        Ok(RunOutcome::Bundle(s)) => s,
        Ok(RunOutcome::Campaign(_) | RunOutcome::Contracts(_)) => {
            return Err(CliError::Unusable(
                "mcpres demo: error: three trials fit one bundle, yet a campaign was written"
                    .to_owned(),
            ));
        }
        Err(e) => {
            return Err(run_error(
                format!("mcpres demo: error: {e}"),
                error_code(&e),
            ));
        }
    };
    print_summary(&summary)?;
    if !summary.valid || summary.result != "PASS" {
        errln!("mcpres demo: the run did not pass; not signing");
        return Ok(outcome_exit(summary.passed()));
    }
    match sign_and_verify(&summary.doc, &output) {
        Ok(signed) => {
            outln!("bundle:          {}", shown(&output))?;
            outln!("attested bundle: {}", shown(&signed.attested))?;
            outln!(
                "public key:      {} (the private half was never written)",
                shown(&signed.public_key)
            )?;
            outln!(
                "trust policy:    {} (trusts that key as mcpres-demo-ephemeral until {})",
                shown(&signed.trust_policy),
                signed.valid_until
            )?;
            outln!("verified:        {}", signed.classification)?;
            outln!("reproduce it with:")?;
            outln!("  mcpres validate {}", shell_word(&output))?;
            outln!(
                "  mcpres verify {} --trust-policy {}",
                shell_word(&signed.attested),
                shell_word(&signed.trust_policy)
            )?;
            Ok(Exit::Valid)
        }
        Err(e) => Err(CliError::Unusable(format!(
            "mcpres demo: signing failed: {e}"
        ))),
    }
}

/// A path as one shell word: as is when it holds only characters no shell
/// treats specially, else in single quotes.
fn shell_word(path: &Path) -> String {
    let text = path.display().to_string();
    if !text.is_empty()
        && text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "/._-+:,@%".contains(c))
    {
        text
    } else {
        format!("'{}'", text.replace('\'', "'\\''"))
    }
}
