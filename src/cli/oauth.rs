//! `mcpres oauth ...`: the loopback OAuth authorization fixture (and, later,
//! the OAuth-boundary evaluation runner beside it).

use std::net::IpAddr;
use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, Subcommand};

use mcpres::server::oauth::{FixtureConfig, run_until_signal};

use mcpres::produce::drive::spawn::resolve_executable;
use mcpres::produce::harness::parse_env;
use mcpres::produce::oauth::{self as runner, Event, OauthRunError, isolate};
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
    /// Every check of the profile (24 required and the conditional refresh-token rotation) is
    /// observed; exit 0 when the evaluation written is valid, 1 when `mcpres validate` finds
    /// anything in it (a failed check shows as its case's finding), 2 when the run is unusable.
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
    FollowCimdRedirects,
    UnrecordedCimdPolicy,
    FixedLoopbackPort,
    ConsentNotClientBound,
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
            FixtureDefect::FollowCimdRedirects => d.follow_cimd_redirects = true,
            FixtureDefect::UnrecordedCimdPolicy => d.unrecorded_cimd_policy = true,
            FixtureDefect::FixedLoopbackPort => d.fixed_loopback_port = true,
            FixtureDefect::ConsentNotClientBound => d.consent_not_client_bound = true,
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
    #[arg(long, default_value_t = 10_000, value_name = "MS", value_parser = clap::value_parser!(u64).range(1..))]
    pub startup_timeout_ms: u64,
    /// How long any answer may take.
    #[arg(long, default_value_t = 5_000, value_name = "MS", value_parser = clap::value_parser!(u64).range(1..))]
    pub answer_timeout_ms: u64,
    /// Environment variable for the subject, K=V (repeatable). Nothing else is passed.
    #[arg(long = "env", value_name = "K=V")]
    pub env: Vec<String>,
    /// Switch on a deliberate defect of the in-process authorization fixture (repeatable), to
    /// show that the runner notices it.
    #[arg(long = "fixture-defect", value_enum, value_name = "NAME")]
    pub fixture_defects: Vec<FixtureDefect>,
    /// Evaluate a subject mcpres does not start, at this loopback URL (`http://IP:PORT/mcp`).
    /// Start it with the issuer printed on stderr (see --issuer-port); checks that need its
    /// process are not observed. Needs --subject-artifact.
    #[arg(
        long,
        value_name = "URL",
        conflicts_with = "command",
        requires = "subject_artifact"
    )]
    pub resource: Option<String>,
    /// The artifact (file or directory) of the subject at --resource; its digest names the
    /// subject in the evaluation.
    #[arg(long, value_name = "PATH", requires = "resource")]
    pub subject_artifact: Option<PathBuf>,
    /// The loopback port of the in-process authorization fixture; 0 picks a free one. With
    /// --resource, a fixed port lets the subject be told its issuer in advance.
    #[arg(long, default_value_t = 0, value_name = "N")]
    pub issuer_port: u16,
    /// Run in a network namespace of its own whose only interface is loopback (`unshare -rn`);
    /// exit 2 when that is not possible. Default: isolate when possible, else say so and go on.
    #[arg(long, conflicts_with = "no_isolate_network")]
    pub isolate_network: bool,
    /// Do not isolate the run's network.
    #[arg(long)]
    pub no_isolate_network: bool,
    /// What each subject process runs in: `auto` (user and mount namespaces, every directory
    /// an overlay whose files are listed and searched for the run's credentials, where the
    /// machine allows it), `require` (refuse to run without it) or `off`.
    #[arg(long, value_enum, default_value = "auto")]
    pub sandbox: super::run::SandboxArg,
    /// The subject, started for each check: PROGRAM [ARGS...] after `--`; `{port}`, `{issuer}`
    /// and `{scope}` in its arguments are replaced by its port, the fixture's issuer and the
    /// scope it must require (without `{scope}`, scope-minimization is not observed), e.g.
    /// `-- mcpres serve --transport http --port {port} --auth loopback --auth-issuer {issuer}
    /// --auth-scope {scope}`.
    #[arg(
        last = true,
        value_name = "PROGRAM",
        required_unless_present = "resource"
    )]
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
    let launch = match a.command.split_first() {
        None if a.resource.is_some() => None,
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
    // Usage errors are reported before the run isolates itself.
    if launch
        .as_ref()
        .is_some_and(|l| !mcpres::produce::profile::web::names_port(l))
    {
        return Err(CliError::Unusable(format!(
            "{who}: the subject's command must say where its port goes ({{port}})"
        )));
    }
    if std::fs::symlink_metadata(&a.output).is_ok() {
        return Err(CliError::Unusable(format!(
            "{who}: {} exists; mcpres never overwrites an evaluation",
            a.output.display()
        )));
    }
    let network_namespace = isolation(who, &a)?;
    let options = runner::Options {
        launch,
        resource: a.resource.clone().map(|url| runner::Resource {
            url,
            artifact: a.subject_artifact.clone().unwrap_or_default(),
        }),
        issuer_port: a.issuer_port,
        network_namespace,
        cancel: std::sync::Arc::default(),
        revision: a.revision.into(),
        out: a.output.clone(),
        startup: Duration::from_millis(a.startup_timeout_ms),
        answer: Duration::from_millis(a.answer_timeout_ms),
        fixture_defects: defects(&a.fixture_defects),
        sandbox: a.sandbox.into(),
    };
    let cancel = options.cancel.clone();
    let resource_mode = options.resource.is_some();
    super::profile_run::track_descendants(who);
    // The check running and since when, and when a line was last printed:
    // a subject that never answers still shows the run moving.
    let running: std::cell::RefCell<(
        Option<(&'static str, std::time::Instant)>,
        std::time::Instant,
    )> = std::cell::RefCell::new((None, std::time::Instant::now()));
    let result = super::profile_run::run_cancellable_ticking(
        who,
        "no evaluation was written",
        cancel,
        &a.output,
        move |tx| {
            runner::run(&options, &mut |event| {
                let _ = tx.send(event);
            })
        },
        |event| match event {
            Event::CheckStarted(id) => {
                *running.borrow_mut() = (
                    Some((id, std::time::Instant::now())),
                    std::time::Instant::now(),
                );
            }
            Event::Started { issuer, redirect } => {
                eprintln!(
                    "{who}: fixture issuer {issuer}; redirect listener {redirect}; network namespace: {}",
                    if network_namespace { "yes" } else { "no" }
                );
                if resource_mode {
                    eprintln!(
                        "{who}: start the subject with the issuer {issuer} (e.g. --auth-issuer {issuer}); waiting for it"
                    );
                }
            }
            Event::Check(row) => {
                *running.borrow_mut() = (None, std::time::Instant::now());
                eprintln!(
                    "{who}: {} {} {} ({})",
                    row.id,
                    row.source.as_str(),
                    row.verdict.as_str(),
                    row.reason
                );
            }
        },
        || {
            let mut r = running.borrow_mut();
            if let (Some((id, since)), last) = *r
                && last.elapsed() >= Duration::from_secs(5)
            {
                eprintln!(
                    "{who}: {id}: running for {} s (the subject may take the start-up bound to answer)",
                    since.elapsed().as_secs()
                );
                r.1 = std::time::Instant::now();
            }
        },
    )?;
    let outcome = result.map_err(|e| match e {
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
    let missing = match outcome.not_implemented.len() {
        0 => String::new(),
        n => format!(", {n} not implemented"),
    };
    match outcome.refusals {
        (0, _) => eprintln!(
            "{who}: no refusal of the subject was observed, so its authorization errors are not claimed sanitized (authorizationErrorsSanitized: false)"
        ),
        (_, 0) => {}
        (seen, echoing) => eprintln!(
            "{who}: {echoing} of {seen} refusal(s) of the subject echoed credential material (authorizationErrorsSanitized: false)"
        ),
    }
    let not_observed = outcome
        .rows
        .iter()
        .filter(|r| r.verdict == mcpres::produce::profile::check::Verdict::NotObserved)
        .count();
    let missing = format!(
        "{}{missing}",
        match not_observed {
            0 => String::new(),
            n => format!(", {n} not observed"),
        }
    );
    eprintln!(
        "{who}: {}: {} of {} check(s) observed{missing}; evaluation.json sha256 {}; mcpres validate: {}",
        a.output.display(),
        outcome.rows.len() - not_observed,
        outcome.rows.len(),
        outcome.evaluation_sha256,
        primary.as_deref().unwrap_or("valid")
    );
    Ok(if primary.is_some() {
        Exit::Failing
    } else {
        Exit::Valid
    })
}

/// Decide the run's network isolation: `true` when this process already
/// runs inside its own network namespace (re-executed, `lo` brought up and
/// checked); otherwise, unless told not to, re-execute under `unshare -rn`
/// (this call then does not return). When isolation is not possible: exit
/// 2 if `--isolate-network` asked for it, else say so and go on without.
fn isolation(who: &str, a: &RunArgs) -> Result<bool, CliError> {
    if std::env::var_os(isolate::INSIDE_ENV).is_some() {
        return isolate::enter()
            .map(|_| true)
            .map_err(|e| CliError::Unusable(format!("{who}: network namespace: {e}")));
    }
    if a.no_isolate_network {
        return Ok(false);
    }
    let why = if a.resource.is_some() {
        "a subject mcpres does not start (--resource) lives outside any namespace the run could make, so it would be unreachable".to_string()
    } else {
        match isolate::available() {
            Ok(unshare) => {
                let e = isolate::reexec(&unshare);
                format!("cannot execute {}: {e}", unshare.display())
            }
            Err(why) => why,
        }
    };
    if a.isolate_network {
        return Err(CliError::Unusable(format!(
            "{who}: --isolate-network: the run cannot be isolated: {why}"
        )));
    }
    eprintln!(
        "{who}: the network is not isolated ({why}); external requests are counted from records only"
    );
    Ok(false)
}
