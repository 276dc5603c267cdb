//! `mcpres profile run`: a protocol-profile evaluation produced from a real
//! run against a stdio MCP server (spec/profiles.md, "Producing an
//! evaluation").
//!
//! Each check of the profile that applies to the evaluated revision is run on
//! fresh subject processes: a positive observation, a reason-bound negative
//! control and a wrong-reason mutant. What each probe wrote and read becomes an
//! artifact file; `evaluation.json` cites the artifacts by digest and claims
//! only the checks that were observed; `run.json` (an mcpres extension) keeps
//! every check's verdict, the mutants and what could not be observed.

pub mod cache;
pub mod check;
pub mod decl;
pub mod ops;
pub mod probe;
pub mod revision;
pub mod serve;
pub mod stdio;
pub mod streamable;
pub mod web;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{Value, json};

use self::check::{CheckRun, Ctx, Obs, Verdict};
use self::decl::CheckDecl;
use self::probe::{Launch, Reply};
use crate::json::canonical;
use crate::judge::profile as judge;
use crate::model::mcp::Revision;
use crate::model::profile::{
    Check, Cleanup, Environment, EvaluatedSubject, ProfileEvaluation, ProfileReference, ProfileRun,
    RunArtifact, RunCheck, RunIdentity, RunProfile, Scope,
};
use crate::model::vocab::{
    ClaimScope, ImplementationLanguage, Outcome as ResultWord, Platform, ProtocolRevision,
    RuntimeName, TargetKind,
};
use crate::produce::drive::redact::Redactor;
use crate::produce::drive::sandbox;
use crate::produce::store::{Store, StoreError};
use crate::profiles::Registry;

/// The `schemaVersion` of `run.json`.
pub const RUN_SCHEMA: &str = crate::model::profile::PROFILE_RUN_SCHEMA;

/// The profiles this runner can produce, with their checks' declarations.
pub fn runnable(profile: &str) -> Option<&'static [CheckDecl]> {
    match profile {
        "mcp-res/stdio-transport/v1" => Some(stdio::CHECKS),
        "mcp-res/protocol-revision/v1" => Some(revision::CHECKS),
        "mcp-res/streamable-http/v1" => Some(streamable::CHECKS),
        OPERATIONAL => Some(crate::produce::profile::ops::checks::CHECKS),
        crate::judge::cache::PROFILE => Some(cache::CHECKS),
        _ => None,
    }
}

/// What a profile run needs.
#[derive(Debug, Clone)]
pub struct Options {
    pub profile: String,
    pub revision: Revision,
    /// Only these checks (a bounded check set); `None` for every applicable one.
    pub checks: Option<Vec<String>>,
    /// The subject's command: required over stdio; over Streamable HTTP,
    /// mcpres starts it for each check (without it, the server at the URL is
    /// one mcpres did not start).
    pub launch: Option<Launch>,
    /// Drive the subject over Streamable HTTP instead of stdio.
    pub http: Option<HttpOptions>,
    pub out: PathBuf,
    pub startup: Duration,
    pub answer: Duration,
    /// Checks run at once (each on its own processes).
    pub jobs: usize,
    /// Set it to stop the run: no further subject starts, the run ends with
    /// [`ProfileError::Cancelled`] and removes what it wrote.
    pub cancel: std::sync::Arc<std::sync::atomic::AtomicBool>,
    /// What each subject process runs in (`--sandbox`).
    pub sandbox: sandbox::Mode,
    /// Values mcpres expanded from its own environment into the subject's
    /// command (a field matrix's `${NAME}`), by name: redacted wherever they
    /// appear, as the subject's environment is.
    pub expanded: BTreeMap<String, String>,
    /// The declared workload of an operational-resilience run (`None`: the
    /// built-in default).
    pub workload: Option<crate::produce::profile::ops::workload::Workload>,
}

/// A Streamable HTTP target.
#[derive(Debug, Clone)]
pub struct HttpOptions {
    /// `http://HOST:PORT/PATH` on a loopback address. With a launch, port 0
    /// means: pick a free port for each server started, passed to it where
    /// its arguments or environment say `{port}`.
    pub url: String,
    /// The environment variable that carries the synthetic bearer
    /// credential: mcpres makes one per run and passes it to the servers it
    /// starts under this name (or, for a server it did not start, reads it
    /// from its own environment). Never written anywhere.
    pub bearer_env: Option<String>,
    /// How long a stalled request may stay open before the subject must
    /// close it (the `timeout` check's bound).
    pub idle: Duration,
    /// The subject's artifact (file or directory) when mcpres does not start
    /// the server: its digest is the evaluation's `artifactSha256`.
    pub subject_artifact: Option<PathBuf>,
}

/// The operational-resilience profile (its checks in `produce::profile::ops`).
pub const OPERATIONAL: &str = crate::judge::ops::PROFILE;

/// The profile that is evaluated over Streamable HTTP.
pub const STREAMABLE_HTTP: &str = "mcp-res/streamable-http/v1";

#[derive(Debug, thiserror::Error)]
pub enum ProfileError {
    #[error("{0}")]
    Usage(String),
    #[error("no check could be observed against this subject; nothing to evaluate ({})", .0.join("; "))]
    NothingObserved(Vec<String>),
    #[error("the run was cancelled; nothing was kept")]
    Cancelled,
    #[error("cannot write {path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// One finished check, for the closing table.
#[derive(Debug, Clone)]
pub struct Row {
    pub id: &'static str,
    pub positive: String,
    pub negative: String,
    pub mutant: String,
    pub verdict: Verdict,
    pub reason: String,
    pub detail: String,
}

/// What a run produced.
#[derive(Debug, Clone)]
pub struct Outcome {
    pub rows: Vec<Row>,
    /// PASS, FAIL or INCOMPLETE over the checks the run was asked for.
    pub result: &'static str,
    pub evaluation_sha256: String,
    pub cleanup_observed: bool,
    /// The subject's identity changed during the run (the run fails).
    pub identity_changed: bool,
}

/// Called after each check with (done, total, the check's row).
pub type Report<'a> = &'a mut dyn FnMut(usize, usize, &Row);

/// The checks of `profile` that apply at `revision`, in manifest order,
/// narrowed to `only` when given (an unknown or inapplicable name is refused).
pub fn plan(
    registry: &Registry,
    profile: &str,
    revision: Revision,
    only: Option<&[String]>,
) -> Result<Vec<(&'static CheckDecl, bool)>, ProfileError> {
    let p = registry
        .get(profile)
        .ok_or_else(|| ProfileError::Usage(format!("no profile {profile} is registered")))?;
    let decls = runnable(profile).ok_or_else(|| {
        let ops = crate::produce::profile::ops::checks::CHECKS.len();
        let ops = if ops == 26 {
            "all 26 of its checks".to_string()
        } else {
            format!("{ops} of its 26 checks")
        };
        ProfileError::Usage(format!(
            "mcpres can run mcp-res/stdio-transport/v1, mcp-res/protocol-revision/v1, mcp-res/streamable-http/v1, mcp-res/operational-resilience/v1 ({ops}) and mcp-res/cache-behavior/v1 (over stdio); not {profile}"
        ))
    })?;
    let rev = revision.as_str();
    if !p.supports_revision(rev) {
        return Err(ProfileError::Usage(format!(
            "{profile} does not cover revision {rev}"
        )));
    }
    let applicable = p.applicable_check_ids(rev);
    let mut planned = Vec::new();
    for decl in decls {
        if applicable.iter().any(|a| a == decl.id) {
            let required = p.required_checks.iter().any(|r| r == decl.id);
            planned.push((decl, required));
        }
    }
    if let Some(only) = only {
        for name in only {
            if !planned.iter().any(|(d, _)| d.id == name) {
                let why = if p.experimental_checks.contains(name) {
                    format!(
                        "check {name} of {profile} is experimental: it never enters a claim or a result, and mcpres does not run it"
                    )
                } else if applicable.contains(name) {
                    let runs: Vec<&str> = decls.iter().map(|d| d.id).collect();
                    format!(
                        "check {name} of {profile} is not run by mcpres yet (it runs {})",
                        runs.join(", ")
                    )
                } else if p.registered_check_ids().contains(name) {
                    format!("check {name} of {profile} does not apply at revision {rev}")
                } else {
                    format!("{profile} has no check {name}")
                };
                return Err(ProfileError::Usage(why));
            }
        }
        planned.retain(|(d, _)| only.iter().any(|o| o == d.id));
    }
    Ok(planned)
}

fn outcome_label(o: Option<&judge::Observation>) -> String {
    o.map_or("-".into(), |o| {
        if o.held() {
            format!("{} ok", o.observed)
        } else {
            format!("{} ({})", o.observed, o.observed_reason)
        }
    })
}

/// What a run will do, decided once before any subject starts: the planned
/// checks (with whether the profile requires each) and the Streamable HTTP
/// target. The CLI makes it before it resolves the subject's program, so a
/// usage error is reported before anything about the subject, and the run
/// uses the same plan ([`run_planned`]).
pub struct Plan {
    profile: &'static crate::profiles::Profile,
    checks: Vec<(&'static CheckDecl, bool)>,
    web: Option<web::Web>,
}

impl Plan {
    /// How many checks the run will report.
    pub fn len(&self) -> usize {
        self.checks.len()
    }

    /// No check planned.
    pub fn is_empty(&self) -> bool {
        self.checks.is_empty()
    }
}

/// Plan a run: the profile and revision are known and runnable, every
/// named check applies, the target fits the profile's transport (the
/// launch's program need not be resolved yet: only its arguments and
/// environment are read, for `{port}`).
pub fn prepare(
    profile: &str,
    revision: Revision,
    only: Option<&[String]>,
    http: Option<&HttpOptions>,
    launch: Option<&Launch>,
) -> Result<Plan, ProfileError> {
    let registry = Registry::builtin()
        .map_err(|e| ProfileError::Usage(format!("the built-in registry is unusable: {e}")))?;
    let checks = plan(registry, profile, revision, only)?;
    let web = check_target(profile, http, launch)?;
    Ok(Plan {
        profile: registry.get(profile).expect("planned above"),
        checks,
        web,
    })
}

/// Plan the run (see [`prepare`]) and carry it out (see [`run_planned`]).
pub fn run(options: &Options, report: Report<'_>) -> Result<Outcome, ProfileError> {
    let plan = prepare(
        &options.profile,
        options.revision,
        options.checks.as_deref(),
        options.http.as_ref(),
        options.launch.as_ref(),
    )?;
    run_planned(options, plan, report)
}

/// Run a planned profile and write the evaluation directory `options.out`
/// (which must not exist). Subjects are started as children of this process.
/// `plan` must have been made from `options` (its profile, revision, checks,
/// target and launch).
pub fn run_planned(
    options: &Options,
    plan: Plan,
    report: Report<'_>,
) -> Result<Outcome, ProfileError> {
    let Plan {
        profile,
        checks: planned,
        web,
    } = plan;
    if std::fs::symlink_metadata(&options.out).is_ok() {
        return Err(ProfileError::Usage(format!(
            "{} exists; mcpres never overwrites an evaluation",
            options.out.display()
        )));
    }
    let http = options.http.is_some();
    if !http && options.launch.is_none() {
        return Err(ProfileError::Usage(
            "a stdio profile run needs the subject's command after `--`".into(),
        ));
    }
    // Every process a check starts runs in a sandbox stage of its own below
    // `stages` (removed with it), where the machine allows it.
    let sandbox_plan = match &options.launch {
        Some(_) => sandbox::plan(options.sandbox).map_err(ProfileError::Usage)?,
        None => sandbox::Plan::Scoped {
            reason: "the server was not started by mcpres".into(),
            chosen: false,
        },
    };
    // A fixed port holds one server at a time, unless each server has a
    // network namespace of its own (the sandbox's).
    let jobs = if web.as_ref().is_some_and(|w| w.port != 0)
        && options.launch.is_some()
        && sandbox_plan.tools().is_none()
    {
        1
    } else {
        options.jobs
    };
    // HTTP subjects too have a network namespace of their own: reached
    // through the namespace's door.
    let (launch, _stages) = sandboxed(options.launch.as_ref(), &sandbox_plan, true)?;
    let mut ctx = Ctx::new(
        launch.as_ref(),
        options.revision,
        options.startup,
        options.answer,
    );
    ctx.web = web;
    ctx.cancel = options.cancel.clone();
    if options.profile == OPERATIONAL {
        ctx.ops = Some(std::sync::Arc::new(
            options
                .workload
                .clone()
                .unwrap_or_else(crate::produce::profile::ops::workload::Workload::builtin),
        ));
    }
    // The one redactor: every artifact, and every field derived from what
    // the subject said (its name and version, each check's reason and
    // detail), passes it before it is stored.
    let redactor = redactor_for(options, &ctx);
    // Preflight: open once, for the subject's name and version. A subject
    // that does not open is still evaluated: every check then fails on its
    // own evidence (nothing is skipped, nothing is passed).
    let (server_info, mut preflight) = if http {
        preflight_http(&mut ctx)
    } else {
        preflight(&mut ctx)
    };
    preflight["timing"] = ctx.timing_record();
    // The subject's identity is taken now and before and after every check.
    let watch = IdentityWatch::new(options);
    let mut store = Store::create(
        &options.out,
        std::sync::Arc::new(std::sync::Mutex::new(redactor)),
    )?;
    let preflight_sha = store.put("artifacts/preflight.json", &preflight)?.sha256;
    let total = planned.len();
    // One slot per planned check, filled as checks finish (in any order);
    // the records are assembled in manifest order afterwards.
    let mut slots: Vec<Option<(Row, RunLine, Option<Claimed>)>> = vec![None; total];
    let mut done = 0usize;
    let mut handle = |i: usize, c: CheckRun| -> Result<(), ProfileError> {
        let (decl, required) = planned[i];
        let id = decl.id;
        let mut paths: BTreeMap<&str, (String, String)> = BTreeMap::new();
        if let Some(server) = &c.server {
            store.put(&format!("artifacts/{id}/server.json"), server)?;
        }
        // The verdict is the judge's over the artifacts as written: what
        // `validate` re-judges the directory from.
        let mut stored: [Option<judge::Observation>; 3] = [None, None, None];
        for (k, (role, o)) in [
            ("positive", &c.positive),
            ("negative", &c.negative),
            ("mutant", &c.mutant),
        ]
        .into_iter()
        .enumerate()
        {
            if let Some(o) = o {
                let rel = judge::artifact_path(id, role);
                let mut doc = artifact_doc(id, role, o);
                // Judged as stored: redacted first.
                store.redactor().redact_artifact(&mut doc);
                let mut judged = judge::Observation::from_artifact(&doc, id, role)
                    .expect("an artifact the runner writes is an observation");
                // Where the stored bytes give another reading than the
                // classifier's, the artifact is labelled as they give it.
                if let Some((rederived, _)) = judge::rederive(id, role, &judged, &doc["transcript"])
                {
                    rederived.label(&mut doc);
                    judged = rederived;
                }
                let sha = store.put(&rel, &doc)?.sha256;
                stored[k] = Some(judged);
                paths.insert(role, (rel, sha));
            }
        }
        let judged = judge::check_verdict(
            stored[0].as_ref(),
            stored[1].as_ref(),
            stored[2].as_ref(),
            c.not_observed.as_deref(),
        );
        let (verdict, reason, detail) = (
            judged.verdict,
            store.redact_str(&judged.reason),
            store.redact_str(&judged.detail),
        );
        let row = Row {
            id,
            positive: outcome_label(stored[0].as_ref()),
            negative: outcome_label(stored[1].as_ref()),
            mutant: match judged.mutant_killed {
                Some(true) => "killed".into(),
                Some(false) => "survived".into(),
                None => "-".into(),
            },
            verdict,
            reason: reason.clone(),
            detail: detail.clone(),
        };
        done += 1;
        report(done, total, &row);
        let path_of = |role: &str| paths.get(role).map(|(p, _)| p.clone());
        let run_check = RunLine {
            id,
            kind: if required { "REQUIRED" } else { "CONDITIONAL" },
            verdict: verdict.as_str(),
            reason,
            detail: judge::truncate(&detail, judge::DETAIL_MAX),
            positive: path_of("positive"),
            negative: path_of("negative"),
            mutant: path_of("mutant"),
            mutant_killed: judged.mutant_killed,
        };
        // Only a check with both observations is claimed: the judge never
        // gives another verdict than NOT_OBSERVED when one is missing.
        let sha = |role: &str| paths.get(role).map(|(_, s)| s.clone()).unwrap_or_default();
        let evaluated = match stored {
            [Some(positive), Some(negative), _] if verdict != Verdict::NotObserved => {
                Some(Claimed {
                    id,
                    positive: (positive, sha("positive")),
                    negative: (negative, sha("negative")),
                })
            }
            _ => None,
        };
        slots[i] = Some((row, run_check, evaluated));
        Ok(())
    };
    // Checks run `jobs` at a time, each on its own fresh processes; a check
    // declared to run alone (child-tree-cleanup watches for orphaned
    // descendants) runs afterwards, so that no other probe's sweep can take
    // its orphans.
    let (alone, shared): (Vec<usize>, Vec<usize>) =
        (0..total).partition(|&i| planned[i].0.needs.alone);
    let workers = jobs.clamp(1, shared.len().max(1));
    let next = std::sync::atomic::AtomicUsize::new(0);
    let outcome: Result<(), ProfileError> = std::thread::scope(|scope| {
        let (tx, rx) = std::sync::mpsc::channel::<(usize, CheckRun)>();
        for _ in 0..workers {
            let tx = tx.clone();
            let (next, shared, planned, ctx, watch) = (&next, &shared, &planned, &ctx, &watch);
            scope.spawn(move || {
                loop {
                    if ctx.cancelled() {
                        break;
                    }
                    let k = next.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                    let Some(&i) = shared.get(k) else { break };
                    let c = watch.around(planned[i].0.id, || run_declared(planned[i].0, ctx));
                    if tx.send((i, c)).is_err() {
                        break;
                    }
                }
            });
        }
        drop(tx);
        for (i, c) in rx {
            handle(i, c)?;
        }
        Ok(())
    });
    outcome?;
    for i in alone {
        if ctx.cancelled() {
            break;
        }
        let c = watch.around(planned[i].0.id, || run_declared(planned[i].0, &ctx));
        handle(i, c)?;
    }
    let mut rows = Vec::new();
    let mut run_checks = Vec::new();
    let mut evaluated = Vec::new();
    for (row, run_check, ev) in slots.into_iter().flatten() {
        rows.push(row);
        run_checks.push(run_check);
        evaluated.extend(ev);
    }
    if ctx.cancelled() {
        return Err(ProfileError::Cancelled);
    }
    if evaluated.is_empty() {
        // Why each was not observed, in the check's own words.
        let why = run_checks
            .iter()
            .map(|c| format!("{}: {}", c.id, c.detail))
            .collect();
        return Err(ProfileError::NothingObserved(why));
    }
    // Cleanup: every probe ended with nothing of its tree left, and nothing
    // adopted is left now.
    let swept = crate::produce::drive::end::sweep().killed;
    let tally = ctx.tally.lock().expect("tally lock").clone();
    let mut cleanup = json!({
        "probes": tally.probes,
        "probesThatLeftProcesses": tally.leaky,
        "probesThatLeftFiles": tally.files_left,
        "sandbox": sandbox_plan.to_json(),
        "probesEndedBySigkill": tally.killed,
        "descendantsSeen": tally.descendants_seen,
        "adoptedAfterRun": swept,
        "adoptedUnattributed": tally.unattributed,
    });
    if !tally.declared_state.is_empty() {
        cleanup["declaredStateFiles"] = json!(tally.declared_state);
    }
    if !tally.injected.is_empty() {
        cleanup["injectedByControls"] = json!(tally.injected);
    }
    let cleanup_observed = judge::cleanup_from(&cleanup).unwrap_or(false);
    cleanup["observed"] = json!(cleanup_observed);
    let cleanup_sha = store.put(judge::CLEANUP_PATH, &cleanup)?.sha256;
    let identity_doc = watch.record();
    let identity_changed = judge::identity_changed(&identity_doc).unwrap_or(true);
    store.put(judge::IDENTITY_PATH, &identity_doc)?;
    if let Some(w) = &ctx.ops {
        store.put(crate::judge::ops::WORKLOAD_PATH, &w.to_json())?;
        let (ceiling, soak) = ctx.ops_shared.measured();
        let runtime = options.launch.as_ref().map_or_else(String::new, |l| {
            crate::produce::drive::spawn::runtime_version(&l.program)
        });
        store.put(
            crate::judge::ops::MEASUREMENT_PATH,
            &crate::produce::profile::ops::report::measurement(
                w,
                ceiling.as_ref(),
                soak.as_ref(),
                &runtime,
            ),
        )?;
    }
    let verdicts: Vec<Verdict> = rows.iter().map(|r| r.verdict).collect();
    let claimed: Vec<&str> = evaluated.iter().map(|c| c.id).collect();
    let rev = options.revision.as_str();
    let claim = judge::claim(&claimed, &profile.applicable_check_ids(rev));
    let identity = match (&options.launch, &options.http) {
        (Some(launch), h) => subject_identity(launch, h.as_ref().map(|h| h.url.as_str())),
        (None, Some(h)) => artifact_identity(h)?,
        (None, None) => unreachable!("checked above"),
    };
    let vocabulary = |what: &str, value: &str| {
        ProfileError::Usage(format!(
            "{what} {value} is not a word of the evaluation's vocabulary"
        ))
    };
    let protocol_revision =
        ProtocolRevision::parse(rev).ok_or_else(|| vocabulary("revision", rev))?;
    // Derived from what the subject said: through the one redactor.
    let subject_name = truncate(&store.redact_str(&server_info.0), 128);
    let subject_version = truncate(&store.redact_str(&server_info.1), 64);
    let runtime_version = truncate(&identity.runtime_version, 64);
    let evaluation = ProfileEvaluation {
        schema_version: crate::model::profile::PROFILE_EVALUATION_SCHEMA,
        subject: EvaluatedSubject {
            name: &subject_name,
            implementation_language: ImplementationLanguage::parse(identity.language)
                .ok_or_else(|| vocabulary("language", identity.language))?,
            version: &subject_version,
            artifact_sha256: &identity.artifact_sha256,
        },
        environment: Environment {
            platform: Platform::Linux,
            runtime_name: RuntimeName::parse(identity.runtime_name)
                .ok_or_else(|| vocabulary("runtime", identity.runtime_name))?,
            runtime_version: &runtime_version,
        },
        profile: ProfileReference {
            id: &profile.id,
            version: &profile.version,
            manifest_sha256: &profile.manifest_sha256,
            protocol_revision,
        },
        scope: Scope {
            claim: ClaimScope::parse(claim).ok_or_else(|| vocabulary("claim", claim))?,
            claimed_check_ids: claimed.clone(),
            target_kind: if http {
                TargetKind::LoopbackHttp
            } else {
                TargetKind::LocalStdio
            },
            target_sha256: &identity.target_sha256,
            remote_opt_in: false,
            allowlist_sha256: None,
            reviewed_target_sha256: None,
        },
        checks: evaluated.iter().map(Claimed::typed).collect(),
        cleanup: Cleanup {
            required: true,
            observed: cleanup_observed,
            observation_sha256: &cleanup_sha,
        },
        result: result_word(judge::evaluation_result(&verdicts))?,
        evaluation_sha256: "",
    };
    let mut evaluation = serde_json::to_value(&evaluation).expect("plain JSON");
    crate::validate::profile::seal(&mut evaluation);
    let eval_file = store.put_record("evaluation.json", &evaluation)?;
    let result = judge::run_result_with_identity(
        judge::run_result(&verdicts, cleanup_observed),
        identity_changed,
    );
    let manifest = store.rows().to_vec();
    let run_doc = ProfileRun {
        schema_version: RUN_SCHEMA,
        profile: RunProfile {
            id: &profile.id,
            protocol_revision,
        },
        evaluation_file_sha256: &eval_file.sha256,
        result: result_word(result)?,
        preflight_sha256: &preflight_sha,
        identity: Some(RunIdentity {
            changed: identity_changed,
            reason: identity_changed.then_some(judge::SUBJECT_CHANGED),
            record: judge::IDENTITY_PATH,
        }),
        checks: run_checks.iter().map(RunLine::typed).collect(),
        artifacts: manifest
            .iter()
            .map(|r| RunArtifact {
                path: &r.path,
                sha256: &r.sha256,
                bytes: r.bytes as u64,
            })
            .collect(),
    };
    store.put_record("run.json", &run_doc)?;
    store.finish();
    Ok(Outcome {
        rows,
        result,
        evaluation_sha256: evaluation["evaluationSha256"]
            .as_str()
            .unwrap_or_default()
            .to_string(),
        cleanup_observed,
        identity_changed,
    })
}

/// A result word (`PASS`, `FAIL`, `INCOMPLETE`) as the vocabulary's.
fn result_word(word: &str) -> Result<ResultWord, ProfileError> {
    ResultWord::parse(word).ok_or_else(|| {
        ProfileError::Usage(format!("result {word} is not a word of the vocabulary"))
    })
}

/// A check's line of run.json, kept until the record is written.
#[derive(Debug, Clone)]
struct RunLine {
    id: &'static str,
    kind: &'static str,
    verdict: &'static str,
    reason: String,
    detail: String,
    positive: Option<String>,
    negative: Option<String>,
    mutant: Option<String>,
    mutant_killed: Option<bool>,
}

impl RunLine {
    fn typed(&self) -> RunCheck<'_> {
        RunCheck {
            id: self.id,
            kind: self.kind,
            verdict: self.verdict,
            reason: &self.reason,
            detail: &self.detail,
            positive: self.positive.as_deref(),
            negative: self.negative.as_deref(),
            mutant: self.mutant.as_deref(),
            mutant_killed: self.mutant_killed,
        }
    }
}

/// An observed check as the evaluation records it: its positive and
/// negative control with their artifacts' digests.
#[derive(Debug, Clone)]
struct Claimed {
    id: &'static str,
    positive: (judge::Observation, String),
    negative: (judge::Observation, String),
}

impl Claimed {
    fn typed(&self) -> Check<'_> {
        Check {
            id: self.id,
            positive: self.positive.0.check_observation(&self.positive.1),
            negative_control: self.negative.0.check_observation(&self.negative.1),
        }
    }
}

/// Run one declared check: NOT_OBSERVED without running when the run cannot
/// meet a need the engine can see (a subject mcpres starts), otherwise its
/// runner's observations, held to the declaration ([`decl::conform`]).
fn run_declared(decl: &'static CheckDecl, ctx: &Ctx) -> CheckRun {
    if decl.needs.launch && ctx.launch.is_none() {
        return CheckRun::not_observed(decl.id, NEEDS_LAUNCH);
    }
    if ctx.ops.is_some() && ctx.web.is_some() && !decl.needs.http {
        return CheckRun::not_observed(decl.id, crate::produce::profile::ops::http::NOT_OVER_HTTP);
    }
    decl::conform(decl, ctx.revision, (decl.run)(ctx))
}

/// Why a check that needs a subject mcpres starts is not observed without one.
pub const NEEDS_LAUNCH: &str = "the server was not started by mcpres (no command after `--`), so its cleanup could not be observed";

/// The directory a run's sandbox stages are made in; removed when dropped.
/// `launch` set to run in the sandbox `plan` offers (every process in a
/// stage of its own below the returned folder, removed with it; a network
/// namespace of its own when `own_network`), or unchanged without one.
pub(crate) fn sandboxed(
    launch: Option<&Launch>,
    plan: &sandbox::Plan,
    own_network: bool,
) -> Result<(Option<Launch>, Option<StageDir>), ProfileError> {
    let stages = match plan.tools() {
        Some(_) => Some(StageDir::create()?),
        None => None,
    };
    let launch = launch.cloned().map(|mut l| {
        if let (Some(tools), Some(dir)) = (plan.tools(), &stages) {
            l.sandbox = Some(sandbox::LaunchSandbox {
                tools: tools.clone(),
                stages: dir.0.clone(),
                own_network,
                watched: sandbox::Watched::default(),
                faults: Vec::new(),
            });
        }
        l
    });
    Ok((launch, stages))
}

pub(crate) struct StageDir(pub(crate) PathBuf);

impl StageDir {
    pub(crate) fn create() -> Result<StageDir, ProfileError> {
        let dir = std::env::temp_dir().join(format!(
            "mcpres-profile-{}",
            crate::produce::drive::ident::random_hex(8)
        ));
        std::fs::create_dir(&dir)
            .map_err(|e| ProfileError::Usage(format!("cannot create {}: {e}", dir.display())))?;
        Ok(StageDir(dir))
    }
}

impl Drop for StageDir {
    fn drop(&mut self) {
        sandbox::force_remove(&self.0);
    }
}

/// The run's redactor: the operator's `--env` values (those of the launch,
/// before any `{port}` is filled in), mcpres's own secret-named values,
/// credential shapes, and the run's synthetic bearer credential.
fn redactor_for(options: &Options, ctx: &Ctx) -> Redactor {
    let mut env = options
        .launch
        .as_ref()
        .map(|l| l.env.clone())
        .unwrap_or_default();
    for (k, v) in &options.expanded {
        let mut name = k.clone();
        while env.get(&name).is_some_and(|x| x != v) {
            name.push('#');
        }
        env.insert(name, v.clone());
    }
    let mut redactor = Redactor::for_runner(&env);
    if let Some(bearer) = ctx.web.as_ref().and_then(|w| w.bearer.as_ref()) {
        redactor.add_synthetic(bearer.value());
    }
    redactor
}

pub(crate) fn truncate(s: &str, max: usize) -> String {
    judge::truncate(s, max)
}

fn artifact_doc(id: &str, role: &str, o: &Obs) -> Value {
    json!({
        "check": id,
        "role": role,
        "expectedOutcome": o.expected,
        "observedOutcome": o.observed,
        "expectedReasonCode": o.expected_reason,
        "observedReasonCode": o.observed_reason,
        "propertyReached": o.reached,
        "detail": o.detail,
        "transcript": o.artifact,
    })
}

/// Open once to learn the subject's name and version, and to refuse a
/// subject that does not speak the revision before any check runs.
///
/// It also measures the subject's pace: the time from its spawn to the
/// complete answer to the opening request, and the slowest of a few
/// answers to a liveness request once opened. Every window a check waits
/// in is derived from them ([`Ctx::fresh_window`], [`Ctx::settle_window`]).
fn preflight(ctx: &mut Ctx) -> ((String, String), Value) {
    /// Liveness requests timed after opening.
    const TIMED: usize = 3;
    let unknown = || ("unknown".to_string(), "unknown".to_string());
    let mut probe = match ctx.start() {
        Ok(p) => p,
        Err(why) => return (unknown(), json!({"startError": why})),
    };
    let open = ctx.open(&mut probe);
    let startup = Duration::from_millis(probe.elapsed_ms());
    let label = open.label();
    let mut answers = Vec::new();
    if matches!(open, Reply::Result(_)) {
        ctx.timing.startup = Some(startup);
        for _ in 0..TIMED {
            let (id, line) = ctx.live_line();
            let sent = std::time::Instant::now();
            probe.send(line);
            match probe.reply(&id, ctx.answer) {
                Reply::Result(_) | Reply::Error(..) => answers.push(sent.elapsed()),
                _ => break,
            }
        }
        // Only a complete set of answers is a measurement.
        if answers.len() == TIMED {
            ctx.timing.answer = answers.iter().max().copied();
        }
    }
    let summary = json!({
        "open": label,
        "startupMs": startup.as_millis() as u64,
        "answersMs": answers.iter().map(|d| d.as_millis() as u64).collect::<Vec<_>>(),
    });
    let artifact = ctx.finish(probe, summary);
    let Reply::Result(m) = open else {
        return (unknown(), artifact);
    };
    (server_info(ctx, &m), artifact)
}

/// The subject's identity (its program and the files its arguments name,
/// or the artifact of a server mcpres did not start) digested at the
/// run's start and before and after every check: a change anywhere fails
/// the run (`artifacts/identity.json`).
struct IdentityWatch<'a> {
    options: &'a Options,
    baseline: Option<String>,
    around: std::sync::Mutex<Vec<Value>>,
    cache: std::sync::Mutex<BTreeMap<PathBuf, (FileStamp, Option<String>)>>,
}

/// What changes whenever a file's bytes do (the change time cannot be set).
type FileStamp = (u64, u64, u64, i64, i64, i64, i64);

impl<'a> IdentityWatch<'a> {
    fn new(options: &'a Options) -> Self {
        let mut w = IdentityWatch {
            options,
            baseline: None,
            around: std::sync::Mutex::default(),
            cache: std::sync::Mutex::default(),
        };
        w.baseline = w.digest();
        w
    }

    /// A file's digest, recomputed only when its stamp changed.
    fn file(&self, path: &Path) -> Option<String> {
        use std::os::unix::fs::MetadataExt as _;
        let m = std::fs::metadata(path).ok()?;
        let stamp = (
            m.dev(),
            m.ino(),
            m.size(),
            m.mtime(),
            m.mtime_nsec(),
            m.ctime(),
            m.ctime_nsec(),
        );
        let mut cache = self.cache.lock().expect("identity cache");
        if let Some((s, sha)) = cache.get(path)
            && *s == stamp
        {
            return sha.clone();
        }
        let sha = crate::produce::drive::ident::artifact_digest(path)
            .ok()
            .map(|(sha, _)| sha);
        cache.insert(path.to_path_buf(), (stamp, sha.clone()));
        sha
    }

    /// The digest of everything that identifies the subject right now.
    fn digest(&self) -> Option<String> {
        let parts: Vec<Value> = match (&self.options.launch, &self.options.http) {
            (Some(launch), _) => {
                let program =
                    std::fs::canonicalize(&launch.program).unwrap_or(launch.program.clone());
                let mut parts = vec![json!({"program": self.file(&program)})];
                for a in &launch.args {
                    if std::fs::metadata(a).is_ok_and(|m| m.is_file()) {
                        parts.push(json!({"path": a, "sha256": self.file(Path::new(a))}));
                    }
                }
                parts
            }
            (None, Some(h)) => {
                let path = h.subject_artifact.as_ref()?;
                // A directory artifact has no single stamp: digested whole.
                let sha = if path.is_dir() {
                    crate::produce::drive::ident::artifact_digest(path)
                        .ok()
                        .map(|(sha, _)| sha)
                } else {
                    self.file(path)
                };
                vec![json!({"artifact": sha})]
            }
            (None, None) => return None,
        };
        Some(canonical::sha256_hex(
            &canonical::to_vec(&json!(parts)).expect("plain JSON"),
        ))
    }

    /// Run `check`, digesting the subject before and after it.
    fn around(&self, id: &str, check: impl FnOnce() -> CheckRun) -> CheckRun {
        let before = self.digest();
        let c = check();
        let after = self.digest();
        self.around
            .lock()
            .expect("identity record")
            .push(json!({"check": id, "before": before, "after": after}));
        c
    }

    /// The record: the baseline, each check's digests, the digest at the end.
    fn record(&self) -> Value {
        let mut checks = self.around.lock().expect("identity record").clone();
        checks.sort_by(|a, b| a["check"].as_str().cmp(&b["check"].as_str()));
        let end = self.digest();
        let mut doc = json!({
            "baselineSha256": self.baseline,
            "checks": checks,
            "endSha256": end,
        });
        doc["changed"] = json!(judge::identity_changed(&doc).unwrap_or(true));
        doc
    }
}

/// What the evaluation says about the subject it ran.
pub(crate) struct Identity {
    pub(crate) language: &'static str,
    pub(crate) runtime_name: &'static str,
    pub(crate) runtime_version: String,
    pub(crate) artifact_sha256: String,
    pub(crate) target_sha256: String,
}

/// The subject's identity: the program and every argument that names an
/// existing file, each by digest; its language and runtime from the
/// program's name (node: TYPESCRIPT/node, python: PYTHON/python, otherwise
/// OTHER/other).
pub(crate) fn subject_identity(launch: &Launch, url: Option<&str>) -> Identity {
    let digest = |p: &Path| {
        crate::produce::drive::ident::artifact_digest(p)
            .ok()
            .map(|(sha, _)| sha)
    };
    let program = std::fs::canonicalize(&launch.program).unwrap_or(launch.program.clone());
    let files: Vec<Value> = launch
        .args
        .iter()
        .filter(|a| std::fs::metadata(a).is_ok_and(|m| m.is_file()))
        .map(|a| json!({"path": a, "sha256": digest(Path::new(a))}))
        .collect();
    let name = program
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or("")
        .to_string();
    let (language, runtime_name) = if name.starts_with("python") {
        ("PYTHON", "python")
    } else if name == "node" || name.starts_with("node") {
        ("TYPESCRIPT", "node")
    } else {
        ("OTHER", "other")
    };
    let runtime_version = if runtime_name == "other" {
        format!("native ({name})")
    } else {
        crate::produce::drive::spawn::runtime_version(&program)
    };
    let artifact = json!({"program": digest(&program), "files": files});
    let target = json!({
        "url": url,
        "program": program.display().to_string(),
        "programSha256": digest(&program),
        "args": launch.args,
        "files": files,
        "environmentKeys": launch.env.keys().collect::<Vec<_>>(),
    });
    let sha = |v: &Value| canonical::sha256_hex(&canonical::to_vec(v).expect("plain JSON"));
    Identity {
        language,
        runtime_name,
        runtime_version,
        artifact_sha256: sha(&artifact),
        target_sha256: sha(&target),
    }
}

/// Does the target suit the profile (Streamable HTTP for its profile, stdio
/// for the others), and is it usable? The HTTP target, with its credential.
pub fn check_target(
    profile: &str,
    http: Option<&HttpOptions>,
    launch: Option<&Launch>,
) -> Result<Option<web::Web>, ProfileError> {
    if profile == OPERATIONAL && http.is_some() {
        if launch.is_none() {
            return Err(ProfileError::Usage(format!(
                "{profile} over Streamable HTTP starts, signals and restarts the subject: give its command after `--` (with {{port}} where the port goes)"
            )));
        }
        return http.map(|h| web_target(h, launch)).transpose();
    }
    let wants_http = profile == STREAMABLE_HTTP;
    if wants_http != http.is_some() {
        return Err(ProfileError::Usage(if wants_http {
            format!("{STREAMABLE_HTTP} is evaluated over Streamable HTTP: give --http URL")
        } else {
            format!("{profile} is evaluated over stdio: --http does not apply")
        }));
    }
    http.map(|h| web_target(h, launch)).transpose()
}

/// The Streamable HTTP target of a run, with its credential.
fn web_target(h: &HttpOptions, launch: Option<&Launch>) -> Result<web::Web, ProfileError> {
    let (ip, port, path) = web::parse_url(&h.url).map_err(ProfileError::Usage)?;
    if let Some(launch) = launch {
        if port == 0 && !web::names_port(launch) {
            return Err(ProfileError::Usage(format!(
                "--http {}: port 0 means mcpres picks a port for every server it starts; say where it goes with {{port}} in the subject's arguments or --env",
                h.url
            )));
        }
    } else {
        if port == 0 {
            return Err(ProfileError::Usage(format!(
                "--http {}: without a command to start, the URL must name the server's port",
                h.url
            )));
        }
        if h.subject_artifact.is_none() {
            return Err(ProfileError::Usage(
                "a server mcpres does not start needs --subject-artifact PATH (what the evaluation names as the subject)".into(),
            ));
        }
    }
    let bearer = match (&h.bearer_env, launch) {
        (None, _) => None,
        (Some(_), Some(_)) => Some(web::Bearer::fresh()),
        (Some(name), None) => match std::env::var(name) {
            Ok(v) if !v.is_empty() => Some(web::Bearer::given(v)),
            _ => {
                return Err(ProfileError::Usage(format!(
                    "--bearer-env {name}: the variable is not set in mcpres's environment"
                )));
            }
        },
    };
    Ok(web::Web {
        ip,
        port,
        path,
        bearer,
        bearer_env: h.bearer_env.clone(),
        idle: h.idle,
    })
}

/// The identity of a server mcpres did not start: its artifact's digest.
fn artifact_identity(h: &HttpOptions) -> Result<Identity, ProfileError> {
    let path = h.subject_artifact.as_ref().expect("checked in web_target");
    let (sha, _) = crate::produce::drive::ident::artifact_digest(path)
        .map_err(|e| ProfileError::Usage(format!("--subject-artifact {}: {e}", path.display())))?;
    let target = json!({"url": h.url, "artifactSha256": sha});
    Ok(Identity {
        language: "OTHER",
        runtime_name: "other",
        runtime_version: "unknown (not started by mcpres)".into(),
        artifact_sha256: sha,
        target_sha256: canonical::sha256_hex(&canonical::to_vec(&target).expect("plain JSON")),
    })
}

/// The HTTP preflight: start the server once, open a conversation, stop it.
/// For a server mcpres starts, it measures the time from the start to the
/// opening's answer and the slowest of three liveness answers (the windows
/// of the Streamable HTTP checks are derived from them).
fn preflight_http(ctx: &mut Ctx) -> ((String, String), Value) {
    let started = std::time::Instant::now();
    let server = ctx.serve();
    let rec = web::Rec::new(ctx.web().bearer.as_ref());
    let opened = match &server.failed {
        Some(why) => Err(why.clone()),
        None => ctx.http_open(&rec, &server),
    };
    if let Ok(session) = &opened {
        let startup = started.elapsed();
        let mut answers = Vec::new();
        for _ in 0..3 {
            let t = std::time::Instant::now();
            if !ctx.serving(&rec, &server, session) {
                break;
            }
            answers.push(t.elapsed());
        }
        if ctx.launch.is_some() {
            ctx.timing.startup = Some(startup);
        }
        if answers.len() == 3 {
            ctx.timing.answer = answers.iter().max().copied();
        }
    }
    let mut artifact = rec.transcript();
    artifact["server"] = ctx.stop(server).unwrap_or(Value::Null);
    let open = match opened {
        Ok(session) => session.open.unwrap_or(Value::Null),
        Err(why) => {
            artifact["open"] = json!(why);
            return (("unknown".into(), "unknown".into()), artifact);
        }
    };
    artifact["open"] = json!("result");
    (server_info(ctx, &open), artifact)
}

/// The subject's name and version from its opening answer.
fn server_info(ctx: &Ctx, m: &Value) -> (String, String) {
    let info = if ctx.modern() {
        m.pointer("/result/_meta")
            .and_then(|meta| meta.get(crate::model::mcp::META_SERVER_INFO))
            .cloned()
    } else {
        m.pointer("/result/serverInfo").cloned()
    }
    .unwrap_or(Value::Null);
    let field = |k: &str| {
        info.get(k)
            .and_then(Value::as_str)
            .unwrap_or("unknown")
            .to_string()
    };
    (field("name"), field("version"))
}
