//! `mcpres oauth ...`: the loopback OAuth authorization fixture (and, later,
//! the OAuth-boundary evaluation runner beside it).

use std::net::IpAddr;
use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, Subcommand};

use mcpres::server::oauth::{FixtureConfig, run_until_signal};

use mcpres::produce::harness::parse_env;
use mcpres::produce::harness::subject::resolve_program;
use mcpres::produce::oauth::{self as runner, OauthRunError};
use mcpres::produce::profile::probe::Launch;

use super::output::escaped;
use super::run::RevisionArg;
use super::{CliError, CliResult, Exit};

/// `mcpres oauth <action>`.
#[derive(Debug, Subcommand)]
pub enum OauthAction {
    /// Serve the loopback OAuth 2.1 authorization server fixture until SIGTERM or SIGINT.
    ///
    /// Synthetic credentials only, random per run and held in memory; none is ever printed.
    Fixture(FixtureArgs),
    /// Produce an OAuth-boundary evaluation (mcp-res/oauth-boundary/v1) from a real run against
    /// a protected MCP resource server, with the loopback authorization fixture in process.
    ///
    /// PARTIAL: only the checks listed in NOTES-oauthrun.md are implemented; the evaluation lists
    /// only the checks observed, so `mcpres validate` reports the coverage mismatch and this
    /// command exits 1 until all 25 are.
    Run(RunArgs),
}

/// A defect of the loopback authorization fixture (`server::oauth::Defects`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum FixtureDefect {
    IssueForAnyResource,
    AcceptPlainPkce,
    PrefixRedirectUri,
    WrongIssInResponse,
    MetadataIssuerMismatch,
    UnboundCode,
    NoRotation,
    IgnoreVerifier,
    IgnoreMissingResource,
    DropState,
    IgnoreCimdClientId,
    OffOriginTokenEndpoint,
}

fn defects(names: &[FixtureDefect]) -> mcpres::server::oauth::Defects {
    let mut d = mcpres::server::oauth::Defects::default();
    for n in names {
        match n {
            FixtureDefect::IssueForAnyResource => d.issue_for_any_resource = true,
            FixtureDefect::AcceptPlainPkce => d.accept_plain_pkce = true,
            FixtureDefect::PrefixRedirectUri => d.prefix_redirect_uri = true,
            FixtureDefect::WrongIssInResponse => d.wrong_iss_in_response = true,
            FixtureDefect::MetadataIssuerMismatch => d.metadata_issuer_mismatch = true,
            FixtureDefect::UnboundCode => d.unbound_code = true,
            FixtureDefect::NoRotation => d.no_rotation = true,
            FixtureDefect::IgnoreVerifier => d.ignore_verifier = true,
            FixtureDefect::IgnoreMissingResource => d.ignore_missing_resource = true,
            FixtureDefect::DropState => d.drop_state = true,
            FixtureDefect::IgnoreCimdClientId => d.ignore_cimd_client_id = true,
            FixtureDefect::OffOriginTokenEndpoint => d.off_origin_token_endpoint = true,
        }
    }
    d
}

/// Arguments of `mcpres oauth run`.
#[derive(Debug, Clone, Args)]
pub struct RunArgs {
    /// The evaluation directory to create (must not exist).
    #[arg(short, long, value_name = "DIR")]
    pub output: PathBuf,
    /// The protocol revision to evaluate.
    #[arg(long, value_enum, default_value = "2025-11-25")]
    pub revision: RevisionArg,
    /// How long the subject may take to accept connections.
    #[arg(long, default_value_t = 10_000, value_name = "MS")]
    pub startup_timeout_ms: u64,
    /// How long any answer may take.
    #[arg(long, default_value_t = 5_000, value_name = "MS")]
    pub answer_timeout_ms: u64,
    /// Environment variable for the subject, K=V (repeatable). Nothing else is passed.
    #[arg(long = "env", value_name = "K=V")]
    pub env: Vec<String>,
    /// Switch on a deliberate defect of the in-process authorization fixture (repeatable), to
    /// show that the runner notices it.
    #[arg(long = "fixture-defect", value_enum, value_name = "NAME")]
    pub fixture_defects: Vec<FixtureDefect>,
    /// The subject, started for each check: PROGRAM [ARGS...] after `--`; `{port}` and
    /// `{issuer}` in its arguments are replaced by its port and the fixture's issuer, e.g.
    /// `-- mcpres serve --transport http --port {port} --auth loopback --auth-issuer {issuer}`.
    #[arg(last = true, value_name = "PROGRAM", required = true)]
    pub command: Vec<String>,
}

/// Arguments of `mcpres oauth fixture`.
#[derive(Debug, Clone, Args)]
pub struct FixtureArgs {
    /// TCP port; 0 picks an ephemeral port. The issuer is printed on stderr.
    #[arg(long, default_value_t = 0)]
    pub port: u16,
    /// Address to bind; must be a loopback address.
    #[arg(long, default_value = "127.0.0.1")]
    pub bind: IpAddr,
    /// Access token lifetime in seconds.
    #[arg(long, default_value_t = 300, value_parser = clap::value_parser!(u64).range(1..=86_400))]
    pub token_lifetime_secs: u64,
    /// Scopes clients may request (repeatable or comma-separated).
    #[arg(long = "scope", value_delimiter = ',', default_values_t = ["mcp".to_string()])]
    pub scopes: Vec<String>,
}

pub fn main(action: OauthAction) -> CliResult {
    match action {
        OauthAction::Fixture(a) => {
            let config = FixtureConfig {
                bind: a.bind,
                port: a.port,
                token_lifetime: std::time::Duration::from_secs(a.token_lifetime_secs),
                allowed_scopes: a.scopes,
                ..FixtureConfig::default()
            };
            run_until_signal(config, |f| eprintln!("issuer: {}", f.issuer()))
                .map(|()| Exit::Valid)
                .map_err(|e| CliError::Unusable(format!("mcpres oauth fixture: {e}")))
        }
        OauthAction::Run(a) => run(a),
    }
}

fn run(a: RunArgs) -> CliResult {
    let who = "mcpres oauth run";
    let env = parse_env(&a.env).map_err(|e| CliError::Unusable(format!("{who}: {e}")))?;
    let (program, rest) = a
        .command
        .split_first()
        .ok_or_else(|| CliError::Unusable(format!("{who}: no PROGRAM after --")))?;
    let resolved = resolve_program(program).ok_or_else(|| {
        CliError::Unusable(format!(
            "{who}: PROGRAM {} is not an existing file (bare names are looked up in PATH)",
            escaped(program)
        ))
    })?;
    let options = runner::Options {
        launch: Launch {
            program: resolved,
            args: rest.to_vec(),
            env,
        },
        revision: a.revision.into(),
        out: a.output.clone(),
        startup: Duration::from_millis(a.startup_timeout_ms.max(1)),
        answer: Duration::from_millis(a.answer_timeout_ms.max(1)),
        fixture_defects: defects(&a.fixture_defects),
    };
    super::profile_run::track_descendants(who);
    let outcome = runner::run(&options, &mut |row| {
        eprintln!(
            "{who}: {} {} {} ({})",
            row.id,
            row.source.as_str(),
            row.verdict.as_str(),
            row.reason
        );
    })
    .map_err(|e| match e {
        OauthRunError::NothingObserved => CliError::Failing(format!("{who}: {e}")),
        _ => CliError::Unusable(format!("{who}: {e}")),
    })?;
    let report = std::fs::read(a.output.join("evaluation.json"))
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok())
        .map(|doc| mcpres::validate::oauth::validate_oauth_evaluation(&doc));
    let primary = report
        .as_ref()
        .and_then(|r| r.findings.first().map(|f| f.code.as_str().to_string()));
    eprintln!(
        "{who}: {}: {} check(s) observed, {} not implemented yet; evaluation.json sha256 {}; mcpres validate: {}",
        a.output.display(),
        outcome.rows.len(),
        outcome.not_implemented.len(),
        outcome.evaluation_sha256,
        primary.as_deref().unwrap_or("valid")
    );
    Ok(if primary.is_some() {
        Exit::Failing
    } else {
        Exit::Valid
    })
}
