//! Command-line interface: raw flags become validated arguments, each command
//! returns an exit code (0 valid, 1 failing diagnostic, 2 unusable input).

mod attest;
mod folders;
mod limits;
mod official_cmd;
mod profiles;
mod render;
#[cfg(feature = "server")]
mod run;

use std::io::Write;
use std::path::{Path, PathBuf};

use clap::{Parser, Subcommand, ValueEnum};
use rayon::prelude::*;
use serde_json::Value;

use mcpres::bundle::{self, LoadError};
use mcpres::diag::{Report, codes};
use mcpres::json::{self, Limits, canonical};
use mcpres::produce::pack;
use mcpres::validate;

pub use render::Format;

#[derive(Debug, Parser)]
#[command(
    name = "mcpres",
    version,
    about = "Validate, sign and produce MCP-RES v0.2 reliability evidence",
    long_about = "mcpres checks MCP-RES (MCP Reliability Evidence Standard) documents offline.\n\
                  Exit codes: 0 valid, 1 a failing diagnostic, 2 unreadable or unusable input."
)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Validate MCP-RES documents: single JSON files or bundle directories.
    Validate(ValidateArgs),
    /// Write the canonical (mcp-res-json-utf16-v1) bytes of a JSON file.
    Canonicalize {
        /// The JSON file.
        file: PathBuf,
        /// Write to this new file instead of standard output (never overwrites).
        #[arg(short, long)]
        output: Option<PathBuf>,
    },
    /// Print a digest the standard defines.
    Digest {
        /// A JSON file (the object itself, or a bundle containing it) or a bundle directory.
        file: PathBuf,
        /// Which digest to compute.
        #[arg(long, value_enum)]
        kind: DigestKind,
    },
    /// Write the single-file form of a bundle directory.
    Pack {
        /// The bundle directory.
        dir: PathBuf,
        /// The new single-file bundle (must not exist).
        #[arg(short, long)]
        output: PathBuf,
    },
    /// Write the directory form of a single-file bundle.
    Unpack {
        /// The single-file bundle.
        file: PathBuf,
        /// The new bundle directory (must not exist).
        #[arg(short, long)]
        output: PathBuf,
        /// Directory holding the raw artifacts the single file binds by digest only.
        #[arg(long)]
        raw_from: Option<PathBuf>,
    },
    /// Explain a diagnostic code: what it means and how to fix it.
    Explain {
        /// A code such as MCP_RES_WRONG_STOP_REASON (the MCP_RES_ prefix may be left out);
        /// `--list` prints every code.
        code: Option<String>,
        /// List every known code.
        #[arg(long)]
        list: bool,
    },
    /// Generate an Ed25519 signing key pair (NAME.key, NAME.pub).
    Keygen(attest::KeygenArgs),
    /// Sign a valid bundle into an attested bundle (DSSE, in-toto Statement v1), or add a witness.
    Sign(attest::SignArgs),
    /// Verify attested bundles: inner evidence, every envelope, the trust policy and the claim.
    Verify(ValidateArgs),
    /// Write and edit offline trust policies.
    #[command(subcommand)]
    TrustPolicy(attest::TrustPolicyCommand),
    /// List the registered reliability profiles, or show one.
    Profiles {
        #[command(subcommand)]
        action: profiles::ProfilesAction,
    },
    /// Work with results of the official MCP conformance suite.
    #[command(subcommand)]
    Official(official_cmd::OfficialCommand),
    /// Migrate older MCP-RES evidence (never overwrites, never invents evidence).
    Migrate {
        #[command(subcommand)]
        from: MigrateFrom,
    },
    /// Run the reference MCP server.
    #[cfg(feature = "server")]
    Serve(mcpres::server::ServeArgs),
    /// Run a scenario against a stdio MCP server and write a validated evidence bundle.
    #[cfg(feature = "server")]
    Run(run::RunArgs),
    /// List, show or check harness scenarios (built-in ones and scenario files).
    #[cfg(feature = "server")]
    Scenarios {
        #[command(subcommand)]
        action: run::ScenariosAction,
    },
    /// Run the default scenario against the reference server, validate, sign and verify.
    #[cfg(feature = "server")]
    Demo(run::DemoArgs),
}

#[derive(Debug, Subcommand)]
enum MigrateFrom {
    /// Turn a v0.1 conformance bundle into an mcp-res.migration-result/0.2.0.
    #[command(name = "v0.1")]
    V01(MigrateArgs),
}

#[derive(Debug, clap::Args)]
struct MigrateArgs {
    /// The v0.1 conformance bundle (a valid migration result is returned unchanged).
    #[arg(short, long)]
    input: PathBuf,
    /// The new result file: must not exist and must lie inside the workspace.
    #[arg(short, long, required_unless_present = "dry_run")]
    output: Option<PathBuf>,
    /// Print the report and the digest of the prospective output; write nothing.
    #[arg(long)]
    dry_run: bool,
    /// The directory the output must stay in (default: the current directory).
    #[arg(long)]
    workspace: Option<PathBuf>,
}

#[derive(Debug, clap::Args)]
struct ValidateArgs {
    /// Files or bundle directories to validate (checked in parallel).
    #[arg(required = true)]
    paths: Vec<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Human)]
    format: Format,
    /// Print only the summary line and problems (human format).
    #[arg(short, long)]
    quiet: bool,
    /// Trust policy (mcp-res.trust-policy/0.2.0) for attested bundles.
    #[arg(long, value_name = "POLICY.json")]
    trust_policy: Option<PathBuf>,
    /// Evaluation time for attested bundles, RFC 3339 (default: now).
    #[arg(long, value_name = "RFC3339")]
    at: Option<String>,
    /// The unsanitized original result an official-conformance attachment records
    /// (its length and SHA-256 are compared).
    #[arg(long, value_name = "FILE")]
    original_result: Option<PathBuf>,
    /// Resource limits (spec/limits.md).
    #[command(flatten)]
    limits: limits::LimitArgs,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum DigestKind {
    Observation,
    Scenario,
    Evidence,
    Statement,
    Execution,
    Bundle,
}

/// Parse arguments and run; returns the process exit code.
pub fn main() -> i32 {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            let code = if e.use_stderr() { 2 } else { 0 };
            let _ = e.print();
            return code;
        }
    };
    match cli.command {
        Command::Validate(args) => run_validate(&args, false),
        Command::Verify(args) => run_validate(&args, true),
        Command::Keygen(args) => attest::run_keygen(&args),
        Command::Sign(args) => attest::run_sign(&args),
        Command::TrustPolicy(command) => attest::run_trust_policy(&command),
        Command::Canonicalize { file, output } => run_canonicalize(&file, output.as_deref()),
        Command::Digest { file, kind } => run_digest(&file, kind),
        Command::Pack { dir, output } => run_pack(&dir, &output),
        Command::Unpack {
            file,
            output,
            raw_from,
        } => run_unpack(&file, &output, raw_from.as_deref()),
        Command::Explain { code, list } => run_explain(code.as_deref(), list),
        Command::Profiles { action } => profiles::run(&action),
        Command::Official(cmd) => official_cmd::run(cmd),
        Command::Migrate {
            from: MigrateFrom::V01(args),
        } => run_migrate(&args),
        #[cfg(feature = "server")]
        Command::Serve(args) => match mcpres::server::run(args) {
            Ok(()) => 0,
            Err(e) => {
                eprintln!("mcpres serve: {e}");
                2
            }
        },
        #[cfg(feature = "server")]
        Command::Run(args) => run::main_run(args),
        #[cfg(feature = "server")]
        Command::Scenarios { action } => run::scenarios(&action),
        #[cfg(feature = "server")]
        Command::Demo(args) => run::main_demo(args),
    }
}

/// The result of checking one input.
pub struct Outcome {
    pub path: PathBuf,
    pub result: Result<Checked, LoadError>,
}

/// A readable input and its report.
pub struct Checked {
    pub report: Report,
    pub source: Option<Vec<u8>>,
}

impl Outcome {
    pub fn exit_code(&self) -> i32 {
        match &self.result {
            Err(_) => 2,
            Ok(c) if c.report.valid => 0,
            Ok(c)
                if c.report
                    .findings
                    .iter()
                    .any(|f| f.code == codes::INPUT_INVALID) =>
            {
                2
            }
            Ok(_) => 1,
        }
    }
}

/// Validate one loaded document, storage findings first.
pub fn check_loaded(loaded: bundle::Loaded, options: &Settings) -> Checked {
    let Some(doc) = &loaded.doc else {
        return Checked {
            report: Report::from_findings(loaded.storage_findings, Vec::new(), None),
            source: loaded.source,
        };
    };
    let report = if options.require_attested {
        // `verify` judges every input as an attested wrapper, as the reference
        // attestation validators do; other documents fail its schema.
        let mut report = validate::attested::validate_attested(doc, &options.validate);
        let family = validate::family_of(doc);
        if family != validate::Family::Attested
            && doc.get("schemaVersion").is_some()
            && let Some(first) = report.findings.first_mut()
        {
            first.message = format!(
                "this is a {}, not an attested bundle (mcp-res.attested-conformance-bundle/0.2.0): {}",
                family.name(),
                first.message
            );
            first.hint =
                "Use `mcpres validate` for other documents, or `mcpres sign` to attest a bundle."
                    .to_owned();
        }
        report
    } else if doc.get("schemaVersion").and_then(Value::as_str) == Some(TRUST_POLICY_VERSION) {
        trust_policy_as_input()
    } else {
        validate::validate_document(doc, &options.validate)
    };
    let report = if loaded.storage_findings.is_empty() {
        report
    } else {
        let mut findings = loaded.storage_findings;
        findings.extend(report.findings);
        let mut merged =
            Report::from_findings(findings, report.schema_errors, report.evidence_class);
        merged.extra = report.extra;
        merged
    };
    Checked {
        report,
        source: loaded.source,
    }
}

/// The `schemaVersion` of a trust policy.
const TRUST_POLICY_VERSION: &str = "mcp-res.trust-policy/0.2.0";

/// A trust policy given as a document to validate: it is no evidence, and
/// judging it as a bundle would only list bundle findings. It is unusable
/// input (exit 2), named for what it is.
fn trust_policy_as_input() -> Report {
    let mut finding = mcpres::diag::Finding::new(
        codes::INPUT_INVALID,
        "/schemaVersion",
        "this is a trust policy (mcp-res.trust-policy/0.2.0), not a document to validate: pass it with --trust-policy",
    );
    finding.hint = "mcpres verify ATTESTED.json --trust-policy POLICY.json checks an attested bundle against it".to_owned();
    Report::from_findings(vec![finding], Vec::new(), None)
}

/// Load and validate one path, with the JSON and directory-form limits.
pub fn check_path_with(
    path: &Path,
    limits: &Limits,
    dir_limits: &bundle::dir::DirLimits,
    settings: &Settings,
) -> Outcome {
    Outcome {
        path: path.to_path_buf(),
        result: bundle::load_with(path, limits, dir_limits).map(|l| check_loaded(l, settings)),
    }
}

/// What `validate` and `verify` pass to every document.
pub struct Settings {
    pub validate: validate::Options,
    /// `verify`: anything but an attested bundle is unusable input.
    pub require_attested: bool,
}

fn settings_from(
    args: &ValidateArgs,
    require_attested: bool,
    limits: &Limits,
) -> Result<Settings, String> {
    let trust_policy = match &args.trust_policy {
        Some(path) => Some(
            bundle::read_json(path, limits)
                .map(|(v, _)| v)
                .map_err(|e| {
                    format!(
                        "trust policy {}: {}",
                        path.display(),
                        render::load_error_text(&e)
                    )
                })?,
        ),
        None => None,
    };
    if let Some(at) = &args.at
        && validate::time::rfc3339_micros(at).is_none()
    {
        return Err(format!(
            "--at {at:?} is not an RFC 3339 date-time (for example 2026-11-30T12:00:00Z)"
        ));
    }
    let original_result = match &args.original_result {
        Some(path) => Some(bundle::read_file(path, limits).map_err(|e| {
            format!(
                "original result {}: {}",
                path.display(),
                render::load_error_text(&e)
            )
        })?),
        None => None,
    };
    Ok(Settings {
        validate: validate::Options {
            trust_policy,
            at: args.at.clone(),
            original_result,
        },
        require_attested,
    })
}

fn run_validate(args: &ValidateArgs, require_attested: bool) -> i32 {
    // The global timeout guards directory validation and batches. One file is
    // bounded by --max-bytes and never blocks (FIFOs and devices are refused),
    // so it does not pay for the watchdog thread.
    let watched = args.paths.len() > 1
        || args
            .paths
            .iter()
            .any(|p| std::fs::symlink_metadata(p).is_ok_and(|m| m.is_dir()));
    if watched {
        args.limits.start_timeout(if require_attested {
            "verify"
        } else {
            "validate"
        });
    }
    let limits = args.limits.json();
    let dir_limits = args.limits.dir();
    let settings = match settings_from(args, require_attested, &limits) {
        Ok(s) => s,
        Err(message) => {
            eprintln!("mcpres: {message}");
            return 2;
        }
    };
    // A folder of bundles stands for the bundles it holds (see `folders`).
    let expanded = folders::expand(&args.paths);
    let paths = &expanded.inputs;
    let total = paths.len();
    let outcomes: Vec<Outcome> = if total == 1 {
        vec![check_path_with(&paths[0], &limits, &dir_limits, &settings)]
    } else {
        paths
            .par_iter()
            .map(|p| check_path_with(p, &limits, &dir_limits, &settings))
            .collect()
    };
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    let rendered = render::render_all(&outcomes, args.format, args.quiet, &mut out);
    let _ = out.flush();
    drop(out);
    if let Err(e) = rendered {
        eprintln!("mcpres: cannot write output: {e}");
        return 2;
    }
    let (mut valid, mut invalid, mut unreadable) = (0usize, 0usize, 0usize);
    for o in &outcomes {
        match o.exit_code() {
            0 => valid += 1,
            1 => invalid += 1,
            _ => unreadable += 1,
        }
    }
    if total > 1 || matches!(args.format, Format::Human) {
        eprintln!(
            "mcpres: checked {total} input{}: {valid} valid, {invalid} invalid, {unreadable} unreadable",
            if total == 1 { "" } else { "s" }
        );
    }
    let campaigns = folders::report_campaigns(&expanded.campaigns, &limits);
    outcomes
        .iter()
        .map(Outcome::exit_code)
        .max()
        .unwrap_or(0)
        .max(campaigns)
}

fn input_error(e: &LoadError) -> i32 {
    eprintln!("{}", render::load_error_text(e));
    2
}

fn run_canonicalize(file: &Path, output: Option<&Path>) -> i32 {
    let limits = Limits::default();
    let (value, _) = match bundle::read_json(file, &limits) {
        Ok(v) => v,
        Err(e) => return input_error(&e),
    };
    let bytes = match canonical::to_vec(&value) {
        Ok(b) => b,
        Err(e) => {
            eprintln!("mcpres: {}: {e}", file.display());
            return 2;
        }
    };
    match output {
        Some(path) => match bundle::dir::write_new(path, &bytes) {
            Ok(()) => 0,
            Err(e) => {
                eprintln!("mcpres: cannot create {}: {e}", path.display());
                2
            }
        },
        None => {
            let mut stdout = std::io::stdout().lock();
            if stdout
                .write_all(&bytes)
                .and_then(|()| stdout.flush())
                .is_err()
            {
                return 2;
            }
            0
        }
    }
}

fn pick<'a>(doc: &'a Value, pointers: &[&str]) -> Option<&'a Value> {
    pointers.iter().find_map(|p| doc.pointer(p))
}

fn run_digest(file: &Path, kind: DigestKind) -> i32 {
    let limits = Limits::default();
    let doc = match bundle::load(file, &limits) {
        Ok(bundle::Loaded { doc: Some(doc), .. }) => doc,
        Ok(_) => {
            eprintln!(
                "mcpres: {}: the bundle directory's evidence or statement cannot be read",
                file.display()
            );
            return 2;
        }
        Err(e) => return input_error(&e),
    };
    let is_bundle = doc.get("evidence").is_some();
    let result: Result<String, String> = match kind {
        DigestKind::Observation => {
            if doc.get("observationSha256").is_none()
                && doc.get("schemaVersion").and_then(Value::as_str)
                    != Some("mcp-res.observation/0.2.0")
            {
                Err("expected an observation object".into())
            } else {
                canonical::to_vec_without_key(&doc, "observationSha256")
                    .map(|b| json::sha256_hex(&b))
                    .map_err(|e| e.to_string())
            }
        }
        DigestKind::Scenario => pick(
            &doc,
            &[
                "/evidence/scenario/descriptor",
                "/scenario/descriptor",
                "/descriptor",
            ],
        )
        .or(
            if doc.get("evidence").is_none() && doc.get("scenario").is_none() {
                Some(&doc)
            } else {
                None
            },
        )
        .ok_or_else(|| "no scenario descriptor found".to_string())
        .and_then(|d| json::digest(d).map_err(|e| e.to_string())),
        DigestKind::Evidence => {
            let target = if is_bundle {
                doc.get("evidence")
            } else {
                Some(&doc)
            };
            target
                .ok_or_else(|| "no evidence found".to_string())
                .and_then(|d| json::digest(d).map_err(|e| e.to_string()))
        }
        DigestKind::Statement => {
            let target = if doc.get("statement").is_some() {
                doc.get("statement")
            } else {
                Some(&doc)
            };
            target
                .ok_or_else(|| "no statement found".to_string())
                .and_then(|d| json::digest(d).map_err(|e| e.to_string()))
        }
        DigestKind::Execution => match (
            doc.get("evidence"),
            doc.pointer("/statement/result").and_then(Value::as_str),
        ) {
            (Some(ev), Some(result)) => Ok(validate::core::execution_digest(ev, result)),
            _ => Err("the execution digest needs a bundle (evidence and statement.result)".into()),
        },
        DigestKind::Bundle => pick(&doc, &["/integrity/artifacts", "/artifacts"])
            .and_then(Value::as_array)
            .map(|a| validate::core::bundle_digest(a))
            .ok_or_else(|| "no integrity manifest artifacts found".to_string()),
    };
    match result {
        Ok(d) => {
            println!("{d}");
            0
        }
        Err(e) => {
            eprintln!("mcpres: {}: {e}", file.display());
            2
        }
    }
}

fn run_pack(dir: &Path, output: &Path) -> i32 {
    match pack::pack(dir, output, &Limits::default()) {
        Ok(s) => {
            eprintln!(
                "mcpres: packed {} into {} (bundleDigest {})",
                dir.display(),
                output.display(),
                s.bundle_digest
            );
            if !s.raw_artifacts.is_empty() {
                const SHOWN: usize = 5;
                let mut listed = s
                    .raw_artifacts
                    .iter()
                    .take(SHOWN)
                    .cloned()
                    .collect::<Vec<_>>()
                    .join(", ");
                if s.raw_artifacts.len() > SHOWN {
                    listed.push_str(&format!(" and {} more", s.raw_artifacts.len() - SHOWN));
                }
                eprintln!(
                    "mcpres: note: {} raw artifact(s) are bound by digest but their bytes are not carried by the single file; keep the directory: {listed}",
                    s.raw_artifacts.len(),
                );
            }
            0
        }
        Err(pack::PackError::NotIntact(findings)) => {
            eprintln!(
                "mcpres: {} is not an intact bundle directory:",
                dir.display()
            );
            for f in findings {
                eprintln!("  {}: {}", f.code, f.message);
            }
            1
        }
        Err(e) => {
            eprintln!("mcpres: {e}");
            2
        }
    }
}

fn run_unpack(file: &Path, output: &Path, raw_from: Option<&Path>) -> i32 {
    match pack::unpack(file, output, raw_from, &Limits::default()) {
        Err(e @ pack::PackError::PathRule { .. }) => {
            eprintln!("mcpres: {e}");
            1
        }
        Ok(s) => {
            eprintln!(
                "mcpres: unpacked {} into {} ({} files, bundleDigest {})",
                file.display(),
                output.display(),
                s.files,
                s.bundle_digest
            );
            0
        }
        Err(e) => {
            eprintln!("mcpres: {e}");
            2
        }
    }
}

fn run_explain(code: Option<&str>, list: bool) -> i32 {
    use mcpres::explain;
    if list || code.is_none() {
        for e in explain::explanations() {
            println!("{:<48} {:<18} {}", e.code, e.rule, e.title);
        }
        return 0;
    }
    let raw = code.unwrap_or_default().trim().to_ascii_uppercase();
    let full = if raw.starts_with("MCP_RES_") {
        raw
    } else {
        format!("MCP_RES_{raw}")
    };
    match explain::lookup(&full) {
        Some(e) => {
            println!("{} ({})\n{}\n", e.code, e.rule, e.title);
            println!("What it means:\n  {}\n", e.meaning);
            println!("Example:\n  {}\n", e.example);
            println!("How to fix it:\n  {}", e.fix);
            0
        }
        None => {
            eprintln!(
                "mcpres: unknown diagnostic code {full}; `mcpres explain --list` prints every code"
            );
            2
        }
    }
}

fn run_migrate(args: &MigrateArgs) -> i32 {
    use mcpres::produce::migrate;
    let request = migrate::Request {
        input: args.input.clone(),
        output: args.output.clone(),
        dry_run: args.dry_run,
        workspace: args.workspace.clone(),
    };
    let outcome = migrate::current_exe_sha256().and_then(|tool| migrate::run(&request, &tool));
    match outcome {
        Ok(outcome) => match serde_json::to_string(&outcome) {
            Ok(line) => {
                println!("{line}");
                0
            }
            Err(e) => {
                eprintln!("mcpres migrate: cannot render the report: {e}");
                2
            }
        },
        Err(e) => {
            if matches!(e, migrate::MigrateError::Io(_)) {
                // The message names the path it is about.
                eprintln!("{}: {e}", e.diagnostic());
            } else {
                eprintln!("{}: {}: {e}", e.diagnostic(), args.input.display());
            }
            e.exit_code()
        }
    }
}
