//! `mcpres official run -o ATTACHMENT.json [--suite DIR] -- PROGRAM [ARGS...]`:
//! the installed official conformance suite against a server mcpres starts,
//! straight into a validated official-conformance attachment.

use std::path::{Path, PathBuf};
use std::time::Duration;

use clap::Args;

use super::output::{escaped, shown};
use super::{CliError, CliResult, Exit};

use mcpres::bundle::dir::write_new;
use mcpres::json::Limits;
use mcpres::produce::drive::spawn::resolve_executable;
use mcpres::produce::harness::parse_env;
use mcpres::produce::official::{self, OriginalRecord};
use mcpres::produce::official_run::{self as runner, Options, RunError};
use mcpres::produce::profile::probe::Launch;

#[derive(Debug, Args)]
pub struct RunArgs {
    /// The attachment to write (must not exist).
    #[arg(short, long, value_name = "ATTACHMENT.json")]
    pub output: PathBuf,
    /// The directory where the suite is installed (`npm install` was run
    /// there; see below). Default: MCPRES_OFFICIAL_SUITE_DIR, else the
    /// current directory.
    #[arg(long, value_name = "DIR")]
    pub suite: Option<PathBuf>,
    /// The suite version that must be installed there.
    #[arg(long, value_name = "V", default_value = runner::PINNED.version)]
    pub suite_version: String,
    /// The package tarball (default: the one `npm pack` left in the suite
    /// directory, else npm's cache); it must be what npm installed.
    #[arg(long, value_name = "FILE")]
    pub tarball: Option<PathBuf>,
    /// The suite's repository commit, for a version mcpres does not pin (the
    /// pinned one's is its release tag's).
    #[arg(long, value_name = "SHA")]
    pub repository_commit: Option<String>,
    /// The MCP revision to test (the suite's --spec-version).
    #[arg(long, default_value = "2025-11-25", value_name = "R")]
    pub revision: String,
    /// The suite's scenario set.
    #[arg(long, default_value = "active", value_parser = ["active", "all", "pending"])]
    pub set: String,
    /// Run one scenario instead of the set.
    #[arg(long, value_name = "NAME")]
    pub scenario: Option<String>,
    /// The suite's expected-failures baseline (its YAML file, or a JSON array
    /// of scenario:check references); handed to the suite and to the import.
    #[arg(long, value_name = "FILE")]
    pub expected_failures: Option<PathBuf>,
    /// The expected check set, a JSON array of scenario:check references:
    /// declared checks the run did not emit become pending. Default: the
    /// emitted checks.
    #[arg(long, value_name = "FILE")]
    pub declared: Option<PathBuf>,
    /// Where the server listens: a loopback http:// URL; port 0 is a free
    /// port, put where the command says `{port}`. Default: a command that
    /// names `{port}` serves Streamable HTTP at http://127.0.0.1:{port}/mcp;
    /// any other command speaks stdio, and the suite reaches it through
    /// mcpres's bridge (each session a fresh process; the suite's checks of
    /// the HTTP layer are then not scored). Without PROGRAM: the server
    /// already at this URL (its cleanup is then not observed).
    #[arg(long, value_name = "URL")]
    pub http: Option<String>,
    /// What the server runs in: `auto` (a sandbox of user, mount and PID
    /// namespaces on the host's loopback, where the machine allows it),
    /// `require` or `off`.
    #[arg(long, value_enum, default_value = "auto")]
    pub sandbox: super::run::SandboxArg,
    /// Environment variable for the server, K=V (repeatable). Nothing else is
    /// passed.
    #[arg(long = "env", value_name = "K=V")]
    pub env: Vec<String>,
    /// How long the server may take to accept connections.
    #[arg(long, default_value_t = 10_000, value_name = "MS", value_parser = clap::value_parser!(u64).range(1..))]
    pub startup_timeout_ms: u64,
    /// How long the suite may run before it is stopped.
    #[arg(long, default_value_t = 600_000, value_name = "MS", value_parser = clap::value_parser!(u64).range(1..))]
    pub suite_timeout_ms: u64,
    /// Also write the sanitized derivative of the original result (must not exist).
    #[arg(long, value_name = "FILE")]
    pub sanitized_out: Option<PathBuf>,
    /// Also write the original result, as the attachment's digest covers it
    /// (it holds the run's loopback ports; must not exist).
    #[arg(long, value_name = "FILE")]
    pub original_out: Option<PathBuf>,
    /// Keep the folder the suite wrote its results in (must not exist).
    #[arg(long, value_name = "DIR")]
    pub results_out: Option<PathBuf>,
    /// The run record: the suite's command line, the tarball and how it was
    /// checked, the requirement-set listing, the server's launch and cleanup
    /// (must not exist). Default: ATTACHMENT with `.run.json` for `.json`.
    #[arg(long, value_name = "FILE")]
    pub record: Option<PathBuf>,
    /// The server: PROGRAM [ARGS...] after `--` (executed directly, no shell).
    #[arg(last = true, value_name = "PROGRAM")]
    pub command: Vec<String>,
}

const WHO: &str = "mcpres official run";

fn unusable(msg: impl std::fmt::Display) -> CliError {
    CliError::Unusable(format!("{WHO}: {msg}"))
}

/// ATTACHMENT.json → ATTACHMENT.run.json (or ATTACHMENT.run.json for a name
/// without `.json`).
fn default_record(output: &Path) -> PathBuf {
    let name = output
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let stem = name.strip_suffix(".json").unwrap_or(&name);
    output.with_file_name(format!("{stem}.run.json"))
}

/// A folder of our own below the temporary directory, removed when dropped.
struct Scratch(PathBuf);

impl Scratch {
    fn create() -> Result<Scratch, CliError> {
        let dir = std::env::temp_dir().join(format!(
            "mcpres-official-{}",
            mcpres::produce::drive::ident::random_hex(8)
        ));
        std::fs::create_dir(&dir)
            .map_err(|e| unusable(format!("cannot create {}: {e}", dir.display())))?;
        Ok(Scratch(dir))
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

pub fn main(args: RunArgs) -> CliResult {
    let record_path = args
        .record
        .clone()
        .unwrap_or_else(|| default_record(&args.output));
    // Nothing is overwritten: every output is checked before anything runs.
    let mut outputs: Vec<(&str, &Path)> =
        vec![("--output", &args.output), ("--record", &record_path)];
    if let Some(p) = &args.sanitized_out {
        outputs.push(("--sanitized-out", p));
    }
    if let Some(p) = &args.original_out {
        outputs.push(("--original-out", p));
    }
    if let Some(p) = &args.results_out {
        outputs.push(("--results-out", p));
    }
    for (i, (flag, path)) in outputs.iter().enumerate() {
        if std::fs::symlink_metadata(path).is_ok() {
            return Err(unusable(format!(
                "{flag} {} already exists; mcpres never overwrites",
                shown(path)
            )));
        }
        if outputs[..i].iter().any(|(_, p)| p == path) {
            return Err(unusable(format!("{flag} {} is named twice", shown(path))));
        }
        if *flag != "--results-out" {
            super::check_new_file(path, &format!("{WHO}: {flag}"))?;
        }
    }
    let suite_dir = args
        .suite
        .clone()
        .or_else(|| std::env::var_os("MCPRES_OFFICIAL_SUITE_DIR").map(PathBuf::from))
        .unwrap_or_else(|| PathBuf::from("."));
    let suite = runner::find_suite(
        &suite_dir,
        Some(&args.suite_version),
        args.tarball.as_deref(),
        args.repository_commit.as_deref(),
    )
    .map_err(unusable)?;
    let baseline = match &args.expected_failures {
        None => None,
        Some(path) => Some(
            mcpres::bundle::read_file(path, &Limits::default())
                .map_err(|e| unusable(format!("--expected-failures {}: {e}", shown(path))))?,
        ),
    };
    let declared = match &args.declared {
        None => None,
        Some(path) => Some(
            super::official_cmd::read_refs(path)
                .map_err(|e| super::official_cmd::stop_as(WHO, &e))?,
        ),
    };
    let env = parse_env(&args.env).map_err(unusable)?;
    let launch = match args.command.split_first() {
        None => {
            if args
                .http
                .as_ref()
                .is_none_or(|u| u.contains(":0/") || u.ends_with(":0"))
            {
                return Err(unusable(
                    "give the server's command after `--` (with `{port}` where its port goes, for a Streamable HTTP server), or the URL of a server already running with --http",
                ));
            }
            None
        }
        Some((program, rest)) => Some(Launch {
            program: resolve_executable(program, &escaped(program)).map_err(unusable)?,
            args: rest.to_vec(),
            env,
            sandbox: None,
        }),
    };
    // The suite's results go to a fresh folder: the one asked for, or one of
    // our own that is removed afterwards.
    let scratch = Scratch::create()?;
    let results = match &args.results_out {
        Some(r) => std::path::absolute(r)
            .map_err(|e| unusable(format!("--results-out {}: {e}", shown(r))))?,
        None => scratch.0.join("results"),
    };
    let cancel = std::sync::Arc::<std::sync::atomic::AtomicBool>::default();
    let options = Options {
        suite,
        revision: args.revision.clone(),
        set: args.set.clone(),
        scenario: args.scenario.clone(),
        // Absolute: the suite runs in its own directory.
        expected_failures: match &args.expected_failures {
            Some(p) => Some(
                std::fs::canonicalize(p)
                    .map_err(|e| unusable(format!("--expected-failures {}: {e}", shown(p))))?,
            ),
            None => None,
        },
        url: match (&args.http, &launch) {
            (Some(u), _) => Some(u.clone()),
            (None, Some(l)) if mcpres::produce::profile::web::names_port(l) => {
                Some("http://127.0.0.1:0/mcp".into())
            }
            (None, _) => None,
        },
        launch,
        sandbox: args.sandbox.into(),
        startup: Duration::from_millis(args.startup_timeout_ms),
        limit: Duration::from_millis(args.suite_timeout_ms),
        results: results.clone(),
        cancel: cancel.clone(),
    };
    super::profile_run::track_descendants(WHO);
    let removed_on_stop = if args.results_out.is_some() {
        results.clone()
    } else {
        scratch.0.clone()
    };
    let ran = super::profile_run::run_cancellable(
        WHO,
        "no attachment was written",
        cancel,
        &removed_on_stop,
        move |tx| {
            runner::run(&options, &mut |line| {
                let _ = tx.send(line);
            })
        },
        |line: String| errln!("{WHO}: {line}"),
    )?;
    let ran = match ran {
        Ok(r) => r,
        Err(e) => {
            if args.results_out.is_none() || matches!(e, RunError::Cancelled) {
                let _ = std::fs::remove_dir_all(&results);
            }
            return Err(match e {
                RunError::Import(e) => super::official_cmd::stop_as(WHO, &e),
                other => unusable(other),
            });
        }
    };
    let mut options = ran.options;
    if let Some(path) = &declared {
        options.declared = Some(path.clone());
    }
    if let Some(bytes) = &baseline {
        let entries = official::read_baseline(bytes, "server")
            .map_err(|e| super::official_cmd::stop_as(WHO, &e))?;
        options.expected_failures = official::expand_baseline(&entries, &ran.original, &options)
            .map_err(|e| super::official_cmd::stop_as(WHO, &e))?;
    }
    // The record first (it holds no secret: the server's environment is not in it).
    let mut record_bytes = serde_json::to_vec_pretty(&ran.record)
        .map_err(|e| unusable(format!("the run record: {e}")))?;
    record_bytes.push(b'\n');
    let status = super::official_cmd::write_attachment(
        WHO,
        &ran.original,
        &options,
        &OriginalRecord::default(),
        true,
        &args.output,
        args.sanitized_out.as_deref(),
    )?;
    if let Err(e) = write_new(&record_path, &record_bytes) {
        return Err(unusable(format!(
            "cannot create {}: {e}",
            shown(&record_path)
        )));
    }
    if let Some(p) = &args.original_out
        && let Err(e) = write_new(p, &ran.original)
    {
        return Err(unusable(format!("cannot create {}: {e}", shown(p))));
    }
    errln!(
        "{WHO}: run record {}{}",
        shown(&record_path),
        args.results_out
            .as_ref()
            .map(|r| format!("; the suite's results kept in {}", shown(r)))
            .unwrap_or_default()
    );
    Ok(if status == "INVALID" {
        Exit::Failing
    } else {
        Exit::Valid
    })
}
