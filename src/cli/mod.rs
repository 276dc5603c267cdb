//! Command-line interface: raw flags become validated values before any work
//! (`--at` a [`Timestamp`], `--trust-policy` a parsed policy, names and
//! lengths checked); each command returns `Result<Exit, CliError>`, and
//! [`main`] alone renders errors and picks the exit status (0 valid,
//! 1 failing diagnostic, 2 unusable input; 141 when standard output was
//! closed). clap types stay in this module.

#[macro_use]
mod output;
mod attest;
#[cfg(feature = "server")]
mod field;
mod folders;
mod limits;
#[cfg(feature = "server")]
mod oauth;
mod official_cmd;
#[cfg(feature = "server")]
mod official_run;
#[cfg(feature = "server")]
mod profile_run;
mod profiles;
mod render;
mod report;
#[cfg(feature = "server")]
mod run;
#[cfg(feature = "server")]
mod serve;
mod stream;

use std::path::{Path, PathBuf};

use mcpres::attest::policy::VerifierPolicy;
use mcpres::json::time::Timestamp;

use clap::{Parser, Subcommand, ValueEnum};

use mcpres::api::{self, ValidateOptions};
use mcpres::bundle::{self, LoadError};
use mcpres::json::Limits;
use mcpres::produce::pack;

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

/// `mcpres profile ...`.
#[cfg(feature = "server")]
#[derive(Debug, Subcommand)]
enum ProfileAction {
    /// Run a profile's checks against a stdio MCP server and write an evaluation directory.
    Run(Box<profile_run::ProfileRunArgs>),
    /// Print the built-in operational-resilience workload (TOML), to copy and edit for
    /// `profile run operational-resilience --workload FILE`.
    Workload,
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
        #[command(flatten)]
        timeout: limits::TimeoutArg,
    },
    /// Write the single-file form of a bundle directory.
    Pack {
        /// The bundle directory.
        dir: PathBuf,
        /// The new single-file bundle (must not exist).
        #[arg(short, long)]
        output: PathBuf,
        #[command(flatten)]
        timeout: limits::TimeoutArg,
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
        #[command(flatten)]
        bounds: limits::UnpackLimitArgs,
    },
    /// Write one self-contained HTML page (no network; one inline script, hash-pinned) of what validation derives.
    Report(report::ReportArgs),
    /// Write a small SVG badge of what validation derived for one valid bundle.
    Badge(report::BadgeArgs),
    /// Explain a diagnostic code (what it means and how to fix it) or a reason code.
    Explain {
        /// A code such as MCP_RES_WRONG_STOP_REASON or MCP_RES_SYNTAX_GUARD (the MCP_RES_
        /// prefix may be left out), or a profile check id such as partial-line (its
        /// declaration and basis); `--list` prints every code.
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
    /// List the registered reliability profiles, or show one (or run one: `profiles run`).
    Profiles {
        #[command(subcommand)]
        action: profiles::ProfilesAction,
    },
    /// Produce a profile evaluation from a real run against a stdio MCP server.
    #[cfg(feature = "server")]
    Profile {
        #[command(subcommand)]
        action: ProfileAction,
    },
    /// Run a field evidence matrix (MCPRES-FIELD-001): legs of subject, profile, revision and transport.
    #[cfg(feature = "server")]
    Field {
        #[command(subcommand)]
        action: field::FieldAction,
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
    Serve(serve::ServeCli),
    /// OAuth-boundary tooling: the loopback authorization server fixture.
    #[cfg(feature = "server")]
    Oauth {
        #[command(subcommand)]
        action: oauth::OauthAction,
    },
    /// Run a scenario against an MCP server, over stdio or Streamable HTTP (`--http`), and write a validated evidence bundle.
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
    /// The new result file (required unless --dry-run): must not exist and must lie inside the workspace.
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
    /// Files or bundle directories to validate (checked in parallel). A bare
    /// `-` reads a list of inputs from standard input, as `--files-from -`
    /// does; a file named `-` is `./-`.
    #[arg(required_unless_present = "files_from")]
    paths: Vec<PathBuf>,
    /// Also validate the inputs listed in FILE, one path per line (after the
    /// arguments); `-` reads the list from standard input.
    #[arg(long, value_name = "FILE")]
    files_from: Option<PathBuf>,
    /// Write each result as soon as it is known, in completion order (the
    /// default is input order).
    #[arg(long)]
    unordered: bool,
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
    #[arg(long, value_name = "RFC3339", value_parser = parse_at)]
    at: Option<Timestamp>,
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

/// How a command ended when it ran to its end: the process exit code.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Exit {
    /// 0: valid, or the command did what it was asked.
    Valid,
    /// 1: a failing diagnostic.
    Failing,
    /// 2: unreadable or unusable input.
    Unusable,
}

impl Exit {
    pub fn code(self) -> u8 {
        match self {
            Exit::Valid => 0,
            Exit::Failing => 1,
            Exit::Unusable => 2,
        }
    }
}

/// The exit status after standard output was closed by its reader: what a
/// shell reports for a process ended by SIGPIPE (128 + 13), as other Unix
/// tools end in a pipeline; nothing is printed.
pub const CLOSED_PIPE_STATUS: u8 = 141;

/// Why a command stopped. Each variant's message is complete (it names the
/// command and what was wrong); it is rendered once, by [`main`].
#[derive(Debug, thiserror::Error, miette::Diagnostic)]
pub enum CliError {
    /// Unusable input or arguments (exit 2).
    #[error("{0}")]
    Unusable(String),
    /// The input breaks a rule, so the command refused to go on (exit 1).
    #[error("{0}")]
    Failing(String),
    /// Standard output was closed by its reader: end quietly.
    #[error("standard output was closed")]
    Closed,
    /// A termination signal stopped the command after it cleaned up; the status is
    /// 128 + the signal's number (130 SIGINT, 143 SIGTERM, 129 SIGHUP). Only the
    /// harness (feature `server`) handles signals.
    #[cfg_attr(not(feature = "server"), allow(dead_code))]
    #[error("{message}")]
    Signalled { message: String, status: u8 },
}

impl CliError {
    /// A failed write to standard output: a closed pipe ends the command
    /// quietly, anything else is reported.
    pub fn output(e: std::io::Error) -> CliError {
        if e.kind() == std::io::ErrorKind::BrokenPipe {
            CliError::Closed
        } else {
            CliError::Unusable(format!("mcpres: cannot write output: {e}"))
        }
    }

    fn status(&self) -> u8 {
        match self {
            CliError::Unusable(_) => Exit::Unusable.code(),
            CliError::Failing(_) => Exit::Failing.code(),
            CliError::Closed => CLOSED_PIPE_STATUS,
            CliError::Signalled { status, .. } => *status,
        }
    }
}

/// What every command returns.
pub type CliResult = Result<Exit, CliError>;

/// Renders a command's error on standard error: its message, then its help
/// (if any) on an indented line. One handler for every command.
struct PlainHandler;

impl miette::ReportHandler for PlainHandler {
    fn debug(
        &self,
        diagnostic: &dyn miette::Diagnostic,
        f: &mut std::fmt::Formatter<'_>,
    ) -> std::fmt::Result {
        write!(f, "{diagnostic}")?;
        if let Some(help) = diagnostic.help() {
            write!(f, "\n  help: {help}")?;
        }
        Ok(())
    }
}

struct Rendered<'a>(&'a CliError);

impl std::fmt::Display for Rendered<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        miette::ReportHandler::debug(&PlainHandler, self.0, f)
    }
}

/// Parse arguments, run the command, render its outcome; returns the
/// process exit status.
pub fn main() -> u8 {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            let code = if e.use_stderr() { 2 } else { 0 };
            // `--help | head -1`: a closed pipe is not worth a message.
            let _ = e.print();
            return code;
        }
    };
    match dispatch(cli.command) {
        Ok(exit) => exit.code(),
        Err(CliError::Closed) => CLOSED_PIPE_STATUS,
        Err(e) => {
            errln!("{}", Rendered(&e));
            e.status()
        }
    }
}

fn dispatch(command: Command) -> CliResult {
    match command {
        Command::Validate(args) => stream::run_validate(args, false),
        Command::Verify(args) => stream::run_validate(args, true),
        Command::Keygen(args) => attest::run_keygen(args.into_checked()?),
        Command::Sign(args) => attest::run_sign(args.into_checked()?),
        Command::TrustPolicy(command) => attest::run_trust_policy(command.into_checked()?),
        Command::Canonicalize { file, output } => run_canonicalize(&file, output.as_deref()),
        Command::Digest {
            file,
            kind,
            timeout,
        } => {
            timeout.start_for("digest", &file);
            run_digest(&file, kind)
        }
        Command::Pack {
            dir,
            output,
            timeout,
        } => {
            timeout.start_for("pack", &dir);
            run_pack(&dir, &output)
        }
        Command::Unpack {
            file,
            output,
            raw_from,
            bounds,
        } => run_unpack(&file, &output, raw_from.as_deref(), &bounds.bounds()),
        Command::Explain { code, list } => run_explain(code.as_deref(), list),
        Command::Report(args) => report::run(args),
        Command::Badge(args) => report::run_badge(args),
        Command::Profiles { action } => profiles::run(action),
        #[cfg(feature = "server")]
        Command::Profile {
            action: ProfileAction::Run(args),
        } => profile_run::main(*args),
        #[cfg(feature = "server")]
        Command::Profile {
            action: ProfileAction::Workload,
        } => {
            print!("{}", mcpres::produce::profile::ops::workload::DEFAULT_TOML);
            Ok(Exit::Valid)
        }
        #[cfg(feature = "server")]
        Command::Field { action } => field::main(action),
        Command::Official(cmd) => official_cmd::run(cmd),
        Command::Migrate {
            from: MigrateFrom::V01(args),
        } => run_migrate(&args),
        #[cfg(feature = "server")]
        Command::Serve(args) => match mcpres::server::run(args.into()) {
            Ok(()) => Ok(Exit::Valid),
            Err(e) => Err(CliError::Unusable(format!("mcpres serve: {e}"))),
        },
        #[cfg(feature = "server")]
        Command::Oauth { action } => oauth::main(action),
        #[cfg(feature = "server")]
        Command::Run(args) => run::main_run(args),
        #[cfg(feature = "server")]
        Command::Scenarios { action } => run::scenarios(&action),
        #[cfg(feature = "server")]
        Command::Demo(args) => run::main_demo(args),
    }
}

/// Refuse a directory where a file is expected: `who` names the command
/// and flag (`mcpres verify: --trust-policy`), `what` the file expected.
pub fn expect_file(path: &Path, who: &str, what: &str) -> Result<(), CliError> {
    if std::fs::symlink_metadata(path).is_ok_and(|m| m.is_dir()) {
        return Err(CliError::Unusable(format!(
            "{who} {} is a directory; expected {what}",
            output::shown(path)
        )));
    }
    Ok(())
}

/// What `validate` and `verify` pass to every document: the library's
/// options, read from the flags.
fn settings_from(
    args: &ValidateArgs,
    require_attested: bool,
    limits: &Limits,
) -> Result<ValidateOptions, CliError> {
    let command = if require_attested {
        "mcpres verify"
    } else {
        "mcpres validate"
    };
    let trust_policy = match &args.trust_policy {
        Some(path) => Some(read_trust_policy(path, limits, command)?),
        None => None,
    };
    let original_result = match &args.original_result {
        Some(path) => {
            expect_file(
                path,
                &format!("{command}: --original-result"),
                "the original result file",
            )?;
            Some(bundle::read_file(path, limits).map_err(|e| {
                CliError::Unusable(format!(
                    "mcpres: original result {}: {}",
                    output::shown(path),
                    render::load_error_text(&e)
                ))
            })?)
        }
        None => None,
    };
    Ok(ValidateOptions {
        limits: *limits,
        dir_limits: args.limits.dir(),
        trust_policy,
        at: args.at,
        original_result,
    })
}

/// `--trust-policy FILE`: read and checked once, before any document. A
/// directory or a document of another kind is an unusable option (exit 2);
/// a trust policy that breaks its schema is reported as findings of each
/// attested bundle, as the reference validators report it.
fn read_trust_policy(
    path: &Path,
    limits: &Limits,
    command: &str,
) -> Result<VerifierPolicy, CliError> {
    let flag = format!("{command}: --trust-policy");
    expect_file(
        path,
        &flag,
        "a trust policy file (mcp-res.trust-policy/0.2.0, as `mcpres trust-policy init` writes it)",
    )?;
    let (value, _) = bundle::read_json(path, limits).map_err(|e| {
        CliError::Unusable(format!(
            "mcpres: trust policy {}: {}",
            output::shown(path),
            render::load_error_text(&e)
        ))
    })?;
    VerifierPolicy::from_value(&value).map_err(|e| {
        CliError::Unusable(format!(
            "{flag} {}: {e}; give the trust policy file here, and the attested bundles as arguments",
            output::shown(path)
        ))
    })
}

/// `--at`: an RFC 3339 date-time, read once into an instant.
fn parse_at(text: &str) -> Result<Timestamp, String> {
    Timestamp::parse(text).ok_or_else(|| {
        format!("{text:?} is not an RFC 3339 date-time (for example 2026-11-30T12:00:00Z)")
    })
}

fn input_error(e: &LoadError) -> CliError {
    CliError::Unusable(render::load_error_text(e))
}

fn run_canonicalize(file: &Path, output: Option<&Path>) -> CliResult {
    expect_file(file, "mcpres canonicalize:", "a JSON file")?;
    if let Some(path) = output {
        check_new_file(path, "mcpres canonicalize: --output")?;
    }
    let bytes = api::canonicalize_path(file).map_err(|e| api_error(file, e))?;
    match output {
        Some(path) => bundle::dir::write_new(path, &bytes).map_err(|e| {
            CliError::Unusable(format!(
                "mcpres: cannot create {}: {e}",
                output::shown(path)
            ))
        })?,
        None => output::stdout_bytes(&bytes)?,
    }
    Ok(Exit::Valid)
}

/// A file to create: it must not exist, and its directory must exist.
/// Checked before any work, so that nothing is done for an output that
/// cannot be written.
pub fn check_new_file(path: &Path, who: &str) -> Result<(), CliError> {
    let shown = output::shown(path);
    if path.as_os_str().is_empty() {
        return Err(CliError::Unusable(format!("{who}: the path is empty")));
    }
    if std::fs::symlink_metadata(path).is_ok() {
        return Err(CliError::Unusable(format!(
            "{who} {shown} already exists; mcpres never overwrites"
        )));
    }
    let parent = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    match std::fs::metadata(parent) {
        Ok(m) if m.is_dir() => Ok(()),
        Ok(_) => Err(CliError::Unusable(format!(
            "{who} {shown}: {} is not a directory",
            output::shown(parent)
        ))),
        Err(e) => Err(CliError::Unusable(format!(
            "{who} {shown}: its directory {} cannot be used: {e}",
            output::shown(parent)
        ))),
    }
}

fn run_digest(file: &Path, kind: DigestKind) -> CliResult {
    let kind = match kind {
        DigestKind::Observation => api::DigestKind::Observation,
        DigestKind::Scenario => api::DigestKind::Scenario,
        DigestKind::Evidence => api::DigestKind::Evidence,
        DigestKind::Statement => api::DigestKind::Statement,
        DigestKind::Execution => api::DigestKind::Execution,
        DigestKind::Bundle => api::DigestKind::Bundle,
    };
    let d = api::digest_path(file, kind).map_err(|e| api_error(file, e))?;
    outln!("{d}")?;
    Ok(Exit::Valid)
}

/// An [`api::ApiError`] about `file` as the command reports it: a load error
/// with its code, anything else after the path.
fn api_error(file: &Path, e: api::ApiError) -> CliError {
    match e {
        api::ApiError::Load(e) => input_error(&e),
        // The canonical error alone, as before the API had this function.
        api::ApiError::Canonical(e) => {
            CliError::Unusable(format!("mcpres: {}: {e}", output::shown(file)))
        }
        e => CliError::Unusable(format!("mcpres: {}: {e}", output::shown(file))),
    }
}

fn run_pack(dir: &Path, out_path: &Path) -> CliResult {
    check_new_file(out_path, "mcpres pack: --output")?;
    if bundle::field_dir::is_field_dir(dir) {
        return Err(CliError::Unusable(format!(
            "mcpres pack: {} is a field matrix directory (spec/field.md), which has no single-file form; pack each of its legs/<id>/ evaluation directories instead",
            output::shown(dir)
        )));
    }
    if bundle::profile_dir::is_profile_dir(dir) {
        return run_pack_profile(dir, out_path);
    }
    match pack::pack(dir, out_path, &Limits::default()) {
        Ok(s) => {
            errln!(
                "mcpres: packed {} into {} (bundleDigest {})",
                output::shown(dir),
                output::shown(out_path),
                s.bundle_digest
            );
            if !s.raw_artifacts.is_empty() {
                const SHOWN: usize = 5;
                let mut listed = s
                    .raw_artifacts
                    .iter()
                    .take(SHOWN)
                    .map(|a| output::escaped(a))
                    .collect::<Vec<_>>()
                    .join(", ");
                if s.raw_artifacts.len() > SHOWN {
                    listed.push_str(&format!(" and {} more", s.raw_artifacts.len() - SHOWN));
                }
                errln!(
                    "mcpres: note: {} raw artifact(s) are bound by digest but their bytes are not carried by the single file; keep the directory: {listed}",
                    s.raw_artifacts.len(),
                );
            }
            Ok(Exit::Valid)
        }
        Err(e) => Err(pack_error(dir, "bundle directory", e)),
    }
}

/// A failed `pack`: a directory that is not intact fails (exit 1) with its
/// findings; anything else is unusable input (exit 2).
fn pack_error(dir: &Path, what: &str, e: pack::PackError) -> CliError {
    let pack::PackError::NotIntact(findings) = e else {
        return CliError::Unusable(format!("mcpres: {e}"));
    };
    let mut message = format!("mcpres: {} is not an intact {what}:", output::shown(dir));
    for f in findings {
        message.push_str(&format!("\n  {}: {}", f.code, f.message));
    }
    CliError::Failing(message)
}

/// `pack` on a profile evaluation directory: its evaluation.json, unchanged.
fn run_pack_profile(dir: &Path, out_path: &Path) -> CliResult {
    match pack::pack_profile_dir(dir, out_path, &Limits::default()) {
        Ok(s) => {
            errln!(
                "mcpres: packed {} into {} (its evaluation.json, {} bytes, evaluationSha256 {})",
                output::shown(dir),
                output::shown(out_path),
                s.bytes,
                s.evaluation_sha256
            );
            Ok(Exit::Valid)
        }
        Err(e) => Err(pack_error(dir, "profile evaluation directory", e)),
    }
}

fn run_unpack(
    file: &Path,
    out_path: &Path,
    raw_from: Option<&Path>,
    bounds: &pack::UnpackLimits,
) -> CliResult {
    expect_file(
        file,
        "mcpres unpack:",
        "a single-file bundle (JSON); a bundle directory is already unpacked (`mcpres pack DIR -o FILE` makes the single file)",
    )?;
    check_new_file(out_path, "mcpres unpack: --output")?;
    match pack::unpack_with(file, out_path, raw_from, &Limits::default(), bounds) {
        Err(e @ pack::PackError::PathRule { .. }) => Err(CliError::Failing(format!("mcpres: {e}"))),
        Ok(s) => {
            errln!(
                "mcpres: unpacked {} into {} ({} files, bundleDigest {})",
                output::shown(file),
                output::shown(out_path),
                s.files,
                s.bundle_digest
            );
            Ok(Exit::Valid)
        }
        Err(e) => Err(CliError::Unusable(format!("mcpres: {e}"))),
    }
}

fn run_explain(code: Option<&str>, list: bool) -> CliResult {
    use mcpres::explain;
    if list || code.is_none() {
        let all: Vec<_> = explain::explanations().collect();
        let code_width = all
            .iter()
            .map(|e| e.code.chars().count())
            .max()
            .unwrap_or(0);
        let rule_width = all
            .iter()
            .map(|e| e.rule.chars().count())
            .max()
            .unwrap_or(0);
        for e in all {
            outln!(
                "{:<code_width$} {:<rule_width$} {}",
                e.code,
                e.rule,
                e.title
            )?;
        }
        // Then the reason codes, in a section of their own: code, family, kind.
        let reasons: Vec<_> = explain::reasons().collect();
        let code_width = reasons
            .iter()
            .map(|r| r.code.chars().count())
            .max()
            .unwrap_or(0);
        let family_width = reasons
            .iter()
            .map(|r| r.family.as_str().len())
            .max()
            .unwrap_or(0);
        outln!(
            "\nReason codes (written by the producers into their observations; spec/reasons.md):"
        )?;
        for r in reasons {
            outln!(
                "{:<code_width$} {:<family_width$} {}",
                r.code,
                r.family.as_str(),
                r.kind.as_str()
            )?;
        }
        return Ok(Exit::Valid);
    }
    // A check id (released-message-framing): its declaration, with its basis.
    #[cfg(feature = "server")]
    if let Some(text) = mcpres::produce::catalogue::describe(code.unwrap_or_default().trim()) {
        output::stdout(format_args!("{text}"))?;
        return Ok(Exit::Valid);
    }
    let raw = code.unwrap_or_default().trim().to_ascii_uppercase();
    // A rule id (MCPRES-INT-001): the codes whose rule names it.
    if raw.starts_with("MCPRES-") {
        let of_rule: Vec<_> = explain::explanations()
            .filter(|e| {
                e.rule
                    .split(|c: char| !(c.is_ascii_alphanumeric() || c == '-'))
                    .any(|token| token == raw)
            })
            .collect();
        if of_rule.is_empty() {
            return Err(CliError::Unusable(format!(
                "mcpres: no diagnostic code belongs to rule {}; `mcpres explain --list` prints every code and its rule",
                output::escaped(&raw)
            )));
        }
        let width = of_rule
            .iter()
            .map(|e| e.code.chars().count())
            .max()
            .unwrap_or(0);
        outln!(
            "rule {raw}: {} code{}",
            of_rule.len(),
            if of_rule.len() == 1 { "" } else { "s" }
        )?;
        for e in &of_rule {
            outln!("  {:<width$}  {}  ({})", e.code, e.title, e.rule)?;
        }
        outln!("\n`mcpres explain CODE` explains one of them.")?;
        return Ok(Exit::Valid);
    }
    let full = if raw.starts_with("MCP_RES_") {
        raw
    } else {
        format!("MCP_RES_{raw}")
    };
    if let Some(e) = explain::lookup(&full) {
        outln!("{} ({})\n{}\n", e.code, e.rule, e.title)?;
        outln!("What it means:\n  {}\n", e.meaning)?;
        outln!("Example:\n  {}\n", e.example)?;
        outln!("How to fix it:\n  {}", e.fix)?;
        return Ok(Exit::Valid);
    }
    match explain::lookup_reason(&full) {
        Some(r) => {
            // A code of a generated family names its family; the family's template, itself.
            let member = r.is_generated() && r.matches(&full);
            let family = if member {
                format!("{}; one of {}", r.family, r.code)
            } else {
                r.family.to_string()
            };
            let code = if member { full.as_str() } else { r.code };
            outln!("{code} (reason code, {family})\n{}\n", r.kind.title())?;
            outln!("What it means:\n  {}", r.meaning)?;
            Ok(Exit::Valid)
        }
        None => Err(CliError::Unusable(format!(
            "mcpres: unknown diagnostic or reason code {}; `mcpres explain --list` prints every code",
            output::escaped(&full)
        ))),
    }
}

fn run_migrate(args: &MigrateArgs) -> CliResult {
    use mcpres::produce::migrate;
    expect_file(
        &args.input,
        "mcpres migrate: --input",
        "a v0.1 conformance bundle file (JSON)",
    )?;
    let request = migrate::Request {
        input: args.input.clone(),
        output: args.output.clone(),
        dry_run: args.dry_run,
        workspace: args.workspace.clone(),
    };
    let outcome = migrate::current_exe_sha256().and_then(|tool| migrate::run(&request, &tool));
    match outcome {
        Ok(outcome) if std::io::IsTerminal::is_terminal(&std::io::stdout()) => {
            migrate_summary(&outcome, &args.input)?;
            Ok(Exit::Valid)
        }
        Ok(outcome) => match serde_json::to_string(&outcome) {
            Ok(line) => {
                outln!("{line}")?;
                Ok(Exit::Valid)
            }
            Err(e) => Err(CliError::Unusable(format!(
                "mcpres migrate: cannot render the report: {e}"
            ))),
        },
        Err(e) => {
            let message = if matches!(e, migrate::MigrateError::Io(_)) {
                // The message names the path it is about.
                format!("{}: {e}", e.diagnostic())
            } else {
                format!("{}: {}: {e}", e.diagnostic(), output::shown(&args.input))
            };
            Err(if e.refuses_content() {
                CliError::Failing(message)
            } else {
                CliError::Unusable(message)
            })
        }
    }
}

/// `migrate` on a terminal: the report for a reader (a pipe or a file gets
/// the one JSON line).
fn migrate_summary(
    outcome: &mcpres::produce::migrate::Outcome,
    input: &Path,
) -> Result<(), CliError> {
    let r = &outcome.report;
    let what = match (&outcome.output, outcome.dry_run) {
        (_, true) => match &outcome.would_write {
            Some(Some(path)) => format!("dry run: would write {}", output::escaped(path)),
            _ => "dry run: nothing written".to_owned(),
        },
        (Some(path), false) => format!("wrote {}", output::escaped(path)),
        (None, false) => "nothing written".to_owned(),
    };
    outln!(
        "{}: migration {} ({what}{})",
        output::shown(input),
        r.status,
        if outcome.unchanged {
            "; already a migration result, returned unchanged"
        } else {
            ""
        }
    )?;
    outln!("  output sha256:        {}", outcome.output_sha256)?;
    outln!(
        "  preserved evidence:   {} ({})",
        r.preserved_evidence_sha256,
        r.preserved_evidence_class
    )?;
    outln!("  legacy assertions:    {}", r.legacy_assertion_count)?;
    if !r.unresolved_requirements.is_empty() {
        outln!("  unresolved requirements:")?;
        for u in &r.unresolved_requirements {
            outln!("    {}", output::escaped(u))?;
        }
    }
    for w in &r.warnings {
        outln!("  warning: {}", output::escaped(w))?;
    }
    outln!("  (the same report as one JSON line when the output is not a terminal)")?;
    Ok(())
}
