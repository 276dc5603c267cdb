//! `mcpres oauth run`: an OAuth authorization-boundary evaluation
//! (`mcp-res.oauth-boundary-evaluation/0.2.0`) produced from a real run
//! against an OAuth-protected MCP resource server, with the loopback
//! authorization fixture started in process (spec/oauth-boundary.md).
//!
//! The pieces of `mcpres profile run` are reused: the subject is started per
//! check by [`Ctx::serve`], every exchange is a raw connection recorded by a
//! [`Rec`] that redacts every token of the observation, and each check's
//! positive, negative control and wrong-reason mutant are judged by
//! [`CheckRun::verdict`]. The evaluation lists only the checks observed.

pub mod canned;
pub mod checks;
pub mod flow;
pub mod isolate;

use std::collections::{BTreeMap, BTreeSet};
use std::net::{IpAddr, SocketAddr, TcpListener};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::profile::check::{CheckRun, Ctx, Verdict};
use super::profile::probe::Launch;
use super::profile::web::{self, Rec, Web};
use super::profile::{Identity, subject_identity, truncate};
use crate::diag::reasons::{self, Branch};
use crate::json::canonical;
use crate::judge::profile as judge;
use crate::model::mcp::Revision;
use crate::model::oauth::{
    Case, Fixture as FixtureRecord, Flow, ListenerCleanup, OauthEnvironment, OauthEvaluation,
    OauthProfile, OauthSubject, Privacy, Probe, WrongReasonMutant,
};
use crate::model::vocab::{ObservationSource, Outcome as ResultWord, Platform, ProbeOutcome};
use crate::model::vocab::{ProtocolRevision, RuntimeName};
use crate::produce::drive::redact::Redactor;
use crate::produce::store::{Store, StoreError};
use crate::profiles::{OAUTH_BOUNDARY_ID, Registry};
use crate::server::oauth::{Defects, Fixture, FixtureConfig};
use crate::validate::oauth::credential_material;

/// The `schemaVersion` of `run.json`.
pub const RUN_SCHEMA: &str = "mcpres.oauth-run/1";
/// The scope every synthetic token of a run carries.
pub const SCOPE: &str = "mcp";
/// What replaces a credential in every artifact.
pub const REDACTED: &str = "<synthetic-bearer>";

/// A subject mcpres does not start (`--resource URL`).
#[derive(Debug, Clone)]
pub struct Resource {
    /// Its loopback URL, `http://IP:PORT/mcp`.
    pub url: String,
    /// Its artifact (file or directory), whose digest names the subject.
    pub artifact: PathBuf,
}

/// What an OAuth run needs.
#[derive(Debug, Clone)]
pub struct Options {
    /// The subject's command; `{port}`, `{issuer}` and `{scope}` in its
    /// arguments and environment are replaced by the port it must listen on,
    /// the fixture's issuer and the scope it must require ([`SCOPE`]).
    /// `None` with [`Options::resource`].
    pub launch: Option<Launch>,
    /// A subject mcpres does not start (then `launch` is `None`).
    pub resource: Option<Resource>,
    /// The fixture's port; 0 picks an ephemeral one.
    pub issuer_port: u16,
    /// The run takes place in a network namespace of its own whose only
    /// interface is loopback (checked by the caller, see [`isolate`]).
    pub network_namespace: bool,
    /// Set by a termination signal: no check starts any more, the run ends
    /// with [`OauthRunError::Cancelled`] and nothing is kept.
    pub cancel: Arc<AtomicBool>,
    pub revision: Revision,
    pub out: PathBuf,
    pub startup: Duration,
    pub answer: Duration,
    /// Deliberate misbehaviour of the in-process fixture (negative controls
    /// of the runner itself).
    pub fixture_defects: Defects,
    /// What each subject process runs in (`--sandbox`).
    pub sandbox: crate::produce::drive::sandbox::Mode,
}

#[derive(Debug, thiserror::Error)]
pub enum OauthRunError {
    #[error("{0}")]
    Usage(String),
    #[error("the loopback authorization fixture could not start: {0}")]
    Fixture(String),
    #[error("no check could be observed against this subject; nothing to evaluate")]
    NothingObserved,
    #[error("the run was cancelled; nothing was kept")]
    Cancelled,
    #[error("nothing accepts connections at {0}: start the subject with the issuer printed above")]
    ResourceUnreachable(String),
    #[error(
        "refusing to evaluate: the subject's protected-resource metadata names the authorization server(s) {named:?}, not (only) the run's fixture {issuer}"
    )]
    ForeignAuthorizationServer { named: Vec<String>, issuer: String },
    #[error("cannot write {path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    /// The store refused a file (a credential left in it) or could not
    /// write it; nothing was kept.
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// Where a case's evidence comes from (the schema's `evidenceSource`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// A behaviour of the subject, observed at run time.
    RuntimeProbe,
    /// A behaviour of the fixture mcpres provides, not of the subject.
    TestFixture,
}

impl Source {
    pub fn as_str(self) -> &'static str {
        self.vocabulary().as_str()
    }

    /// The evidence source as the model's vocabulary names it.
    pub fn vocabulary(self) -> ObservationSource {
        match self {
            Source::RuntimeProbe => ObservationSource::RuntimeProbe,
            Source::TestFixture => ObservationSource::TestFixture,
        }
    }
}

/// One check's runner.
pub type Runner = fn(&OauthCtx) -> CheckRun;

/// Every connection attempt of the run that left the subject's own
/// listener: the metadata fetches the runner makes. Non-loopback targets are
/// refused before a socket exists and counted.
#[derive(Debug, Default)]
pub struct Network {
    /// (target, connected) of every attempt.
    pub attempts: Vec<(String, bool)>,
    /// Non-loopback targets refused before connect.
    pub refused: Vec<String>,
    /// How often the subject's sockets were sampled.
    pub subject_samples: usize,
    /// The remote addresses off loopback seen on the subject's sockets.
    pub subject_external: BTreeSet<String>,
}

/// The run's context: the profile runner's [`Ctx`] and the fixture.
pub struct OauthCtx<'a> {
    pub ctx: Ctx<'a>,
    pub fixture: Fixture,
    /// The synthetic client's id (a CIMD URL on the fixture).
    pub client_id: String,
    /// The redirect URI registered for it (the run's redirect listener).
    pub redirect_uri: String,
    /// A second registered client, for binding checks.
    pub other_client_id: String,
    /// A third document on the fixture that claims to be `client_id` (an
    /// impostor, for `cimd-identity`).
    pub impostor_client_id: String,
    /// The one redactor (`drive::redact`): the operator's `--env` values,
    /// mcpres's own secrets, credential shapes, and every credential the run
    /// minted or learned, redacted from every artifact.
    redactor: Arc<Mutex<Redactor>>,
    /// The same credentials, counted in the files a sandboxed subject leaves.
    watched: crate::produce::drive::sandbox::Watched,
    pub network: Mutex<Network>,
    /// (subject refusals seen, of which echoed the presented token or one
    /// of its claim values).
    pub refusals: Mutex<(usize, usize)>,
    /// The scope the subject was told to require (its command says
    /// `{scope}`); `None`: no scope requirement is known.
    pub required_scope: Option<String>,
    /// (requested, authorized) scopes of the grant `scope-minimization`
    /// observed: what the runner asked for and what the token endpoint
    /// answered.
    pub grant_scopes: Mutex<Option<(Vec<String>, Vec<String>)>>,
}

impl OauthCtx<'_> {
    /// Mint a token with the fixture's key, remembered for redaction.
    pub fn mint(&self, audience: &str, expires_in: i64) -> String {
        let t = self
            .fixture
            .mint_access_token(&self.client_id, audience, SCOPE, expires_in);
        self.remember(&t);
        t
    }

    /// Mint a token whose `iss` is `issuer`, signed with the fixture's key
    /// (another issuer's token), remembered for redaction.
    pub fn mint_as(&self, issuer: &str, audience: &str, expires_in: i64) -> String {
        let t =
            self.fixture
                .mint_access_token_as(issuer, &self.client_id, audience, SCOPE, expires_in);
        self.remember(&t);
        t
    }

    /// Remember a credential (or a damaged copy of one) for redaction, in
    /// every form the redactor knows: as it is, JSON-escaped, as it appears
    /// percent-encoded in a query or a `Location` (`-` and `_` of a
    /// base64url value become `%2D`/`%5F` or `%2d`/`%5f`), and in base64.
    pub fn remember(&self, secret: &str) {
        self.redactor
            .lock()
            .expect("redactor lock")
            .add_synthetic(secret);
        self.watched.add(secret);
    }

    /// A record that redacts every credential known so far.
    pub fn rec(&self) -> Rec {
        Rec::with_redactor(self.redactor.lock().expect("redactor lock").clone())
    }

    /// The loopback socket address of `url` (`http://IP:PORT/...`), or why
    /// it is refused; a refusal is recorded and no socket is made.
    pub fn guarded(&self, url: &str) -> Result<SocketAddr, String> {
        let mut net = self.network.lock().expect("network lock");
        // Recorded without its query, which may carry a state or a code.
        let target = url.split(['?', '#']).next().unwrap_or_default();
        match web::parse_url(url) {
            Ok((ip, port, _)) if !url.contains("://localhost") => {
                net.attempts.push((target.to_string(), true));
                Ok(SocketAddr::new(ip, port))
            }
            Ok(_) => {
                net.refused.push(target.to_string());
                Err(format!("{url}: a host name is never resolved"))
            }
            Err(e) => {
                net.refused.push(target.to_string());
                Err(e.replace(url, target))
            }
        }
    }

    /// Sample the sockets of the subject process of `server` (and its
    /// descendants): each remote address off loopback is an external
    /// request of the subject. Nothing is sampled for a subject mcpres did
    /// not start.
    pub fn sample_subject(&self, server: &web::Server) {
        let Some(probe) = &server.probe else {
            return;
        };
        let peers = isolate::external_peers(probe.pid());
        let mut net = self.network.lock().expect("network lock");
        net.subject_samples += 1;
        net.subject_external
            .extend(peers.iter().map(|a| a.to_string()));
    }

    /// Count a refusal of the subject, and whether its headers or body
    /// echoed the token it refused or a claim value of it (an unsanitized
    /// authorization error), judged on the bytes as they arrived, before
    /// any redaction.
    pub fn saw_refusal(&self, resp: &web::Resp, token: &str) {
        self.saw_refusal_of(resp, token, token);
    }

    /// [`OauthCtx::saw_refusal`] of `token`, whose claim values are those of
    /// `claims_from` (a malformed token's source).
    pub fn saw_refusal_of(&self, resp: &web::Resp, token: &str, claims_from: &str) {
        let echoed = checks::error_leak(resp, token, claims_from).is_some();
        let mut r = self.refusals.lock().expect("refusals lock");
        r.0 += 1;
        r.1 += usize::from(echoed);
    }

    /// Every string of `value` redacted (each recorded stream as a whole),
    /// and every base64 field decoded, redacted and encoded again.
    pub fn scrub(&self, value: &mut Value) {
        self.redactor
            .lock()
            .expect("redactor lock")
            .redact_value(value);
    }
}

/// [`credential_material`] over an artifact, where a `WWW-Authenticate`
/// challenge (`Bearer resource_metadata="..."`, `Bearer error="..."`) is an
/// auth-param list, not a bearer credential, and is not taken for one.
pub fn artifact_credential(value: &Value) -> Option<(String, &'static str)> {
    static CHALLENGE: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    let re = CHALLENGE.get_or_init(|| {
        regex::Regex::new(r#"(?i)\bbearer(\s+[A-Za-z][A-Za-z0-9_-]*=")"#).expect("regex")
    });
    fn neutral(v: &mut Value, re: &regex::Regex) {
        match v {
            Value::String(s) if re.is_match(s) => {
                *s = re.replace_all(s, "challenge$1").into_owned();
            }
            Value::Array(items) => items.iter_mut().for_each(|x| neutral(x, re)),
            Value::Object(map) => map.values_mut().for_each(|x| neutral(x, re)),
            _ => {}
        }
    }
    let mut copy = value.clone();
    neutral(&mut copy, re);
    credential_material(&copy, String::new())
}

fn contains(hay: &[u8], needle: &[u8]) -> bool {
    hay.windows(needle.len()).any(|w| w == needle)
}

/// What the run reports while it runs.
#[derive(Debug, Clone)]
pub enum Event {
    /// The fixture is listening: the issuer a subject must be given.
    Started {
        issuer: String,
        redirect: SocketAddr,
    },
    /// A check starts (its subject processes may take the start-up bound
    /// to answer, or never answer).
    CheckStarted(&'static str),
    /// A check finished.
    Check(Row),
}

/// One finished check, for the closing table.
#[derive(Debug, Clone)]
pub struct Row {
    pub id: &'static str,
    pub source: Source,
    pub verdict: Verdict,
    pub reason: String,
    pub detail: String,
}

/// What a run produced.
#[derive(Debug, Clone)]
pub struct Outcome {
    pub rows: Vec<Row>,
    /// The checks of the profile not yet implemented by this runner.
    pub not_implemented: Vec<String>,
    pub evaluation_sha256: String,
    /// Refusals of the subject seen, and how many of them echoed credential
    /// material: `authorizationErrorsSanitized` is claimed only when some
    /// were seen and none echoed.
    pub refusals: (usize, usize),
}

/// The reason code of a case's branch (`ACCEPTED` or `REJECTED`), from the reason table
/// (which lists both for every check of `checks::CHECKS`; a test holds them equal).
pub fn reason(id: &str, branch: &str) -> String {
    [Branch::Accepted, Branch::Rejected]
        .into_iter()
        .find(|b| b.as_str() == branch)
        .and_then(|b| reasons::oauth_case(id, b))
        .unwrap_or_else(|| panic!("the reason table has no {branch} code for check {id}"))
        .to_string()
}

/// The early (syntax) rejection every mutant must meet.
pub const EARLY: &str = reasons::OAUTH_EARLY_SYNTAX_REJECTION;

/// Does the subject's command say `{scope}` (in an argument or the
/// environment)?
pub fn names_scope(launch: &Launch) -> bool {
    launch.args.iter().any(|a| a.contains("{scope}"))
        || launch.env.iter().any(|(_, v)| v.contains("{scope}"))
}

/// `launch` with `{issuer}` and `{scope}` replaced.
fn with_issuer(launch: &Launch, issuer: &str) -> Launch {
    let sub = |s: &String| s.replace("{issuer}", issuer).replace("{scope}", SCOPE);
    Launch {
        program: launch.program.clone(),
        args: launch.args.iter().map(sub).collect(),
        env: launch
            .env
            .iter()
            .map(|(k, v)| (k.clone(), sub(v)))
            .collect(),
        sandbox: launch.sandbox.clone(),
    }
}

/// Run the checks this runner implements and write the evaluation directory
/// `options.out` (which must not exist).
pub fn run(options: &Options, report: &mut dyn FnMut(Event)) -> Result<Outcome, OauthRunError> {
    let registry = Registry::builtin()
        .map_err(|e| OauthRunError::Usage(format!("the built-in registry is unusable: {e}")))?;
    let profile = registry
        .get(OAUTH_BOUNDARY_ID)
        .ok_or_else(|| OauthRunError::Usage(format!("no {OAUTH_BOUNDARY_ID} is registered")))?;
    let rev = options.revision.as_str();
    if !profile.supports_revision(rev) {
        return Err(OauthRunError::Usage(format!(
            "{OAUTH_BOUNDARY_ID} does not cover revision {rev}"
        )));
    }
    if std::fs::symlink_metadata(&options.out).is_ok() {
        return Err(OauthRunError::Usage(format!(
            "{} exists; mcpres never overwrites an evaluation",
            options.out.display()
        )));
    }
    let (target_ip, target_port) = match (&options.launch, &options.resource) {
        (Some(launch), None) => {
            if !web::names_port(launch) {
                return Err(OauthRunError::Usage(
                    "the subject's command must say where its port goes ({port})".into(),
                ));
            }
            (IpAddr::from([127, 0, 0, 1]), 0)
        }
        (None, Some(r)) => {
            let (ip, port, path) = web::parse_url(&r.url)
                .map_err(|e| OauthRunError::Usage(e.replace("--http", "--resource")))?;
            if port == 0 || path != "/mcp" {
                return Err(OauthRunError::Usage(format!(
                    "--resource {}: the URL must name the subject's port and the path /mcp (the resource the runner's tokens are for)",
                    r.url
                )));
            }
            (ip, port)
        }
        _ => {
            return Err(OauthRunError::Usage(
                "give either the subject's command (after --) or --resource URL, not both".into(),
            ));
        }
    };
    let identity = match (&options.launch, &options.resource) {
        (Some(launch), _) => subject_identity(launch, None),
        (None, Some(r)) => resource_identity(r)?,
        (None, None) => unreachable!("checked above"),
    };
    // In the run's own network namespace every attempt to reach beyond
    // loopback is seen on its one interface: the runner and the fixture
    // connect to loopback only, so what is seen is the subjects'.
    let outside_watch = options
        .network_namespace
        .then(crate::produce::drive::sandbox::NamespaceWatch::start);
    let loopback = IpAddr::from([127, 0, 0, 1]);
    // The redirect listener: held for the run, released at its end.
    let redirect = TcpListener::bind(SocketAddr::new(loopback, 0))
        .map_err(|e| OauthRunError::Fixture(format!("cannot bind the redirect listener: {e}")))?;
    let redirect_addr = redirect
        .local_addr()
        .map_err(|e| OauthRunError::Fixture(e.to_string()))?;
    let redirect_uri = format!("http://{redirect_addr}/callback");
    let fixture = Fixture::start(FixtureConfig {
        port: options.issuer_port,
        allowed_scopes: vec![SCOPE.into()],
        defects: options.fixture_defects.clone(),
        ..FixtureConfig::default()
    })
    .map_err(|e| OauthRunError::Fixture(e.to_string()))?;
    let fixture_addr = fixture.local_addr();
    let client_id = fixture
        .register_client("mcpres-oauth-run", &[&redirect_uri])
        .map_err(|e| OauthRunError::Fixture(e.to_string()))?;
    let other_client_id = fixture
        .register_client("mcpres-oauth-run-other", &[&redirect_uri])
        .map_err(|e| OauthRunError::Fixture(e.to_string()))?;
    let impostor_client_id = fixture
        .register_impostor("mcpres-oauth-run-impostor", &[&redirect_uri], &client_id)
        .map_err(|e| OauthRunError::Fixture(e.to_string()))?;
    let issuer = fixture.issuer().to_string();
    report(Event::Started {
        issuer: issuer.clone(),
        redirect: redirect_addr,
    });
    // Every subject process in a sandbox stage of its own (its network
    // namespace is the runner's), where the machine allows it; the files it
    // leaves are searched for every credential the run presents.
    let sandbox_plan = match &options.launch {
        Some(_) => {
            crate::produce::drive::sandbox::plan(options.sandbox).map_err(OauthRunError::Usage)?
        }
        None => crate::produce::drive::sandbox::Plan::Scoped {
            reason: "the server was not started by mcpres".into(),
            chosen: false,
        },
    };
    let stages = match sandbox_plan.tools() {
        Some(_) => Some(
            crate::produce::profile::StageDir::create()
                .map_err(|e| OauthRunError::Usage(e.to_string()))?,
        ),
        None => None,
    };
    let watched = crate::produce::drive::sandbox::Watched::default();
    let launch = options.launch.as_ref().map(|l| {
        let mut l = with_issuer(l, &issuer);
        if let (Some(tools), Some(dir)) = (sandbox_plan.tools(), &stages) {
            l.sandbox = Some(crate::produce::drive::sandbox::LaunchSandbox {
                tools: tools.clone(),
                stages: dir.0.clone(),
                own_network: false,
                watched: watched.clone(),
                faults: Vec::new(),
            });
        }
        l
    });
    let mut ctx = Ctx::new(
        launch.as_ref(),
        options.revision,
        options.startup,
        options.answer,
    );
    ctx.cancel = options.cancel.clone();
    ctx.web = Some(Web {
        ip: target_ip,
        port: target_port,
        path: "/mcp".into(),
        bearer: None,
        bearer_env: None,
        idle: options.answer,
    });
    let octx = OauthCtx {
        ctx,
        fixture,
        client_id: client_id.clone(),
        redirect_uri: redirect_uri.clone(),
        other_client_id,
        impostor_client_id,
        // The operator's values as given: a value that names `{issuer}` or
        // `{port}` is a template, not a secret.
        redactor: Arc::new(Mutex::new(Redactor::for_runner(
            &options
                .launch
                .as_ref()
                .map(|l| l.env.clone())
                .unwrap_or_default(),
        ))),
        network: Mutex::default(),
        refusals: Mutex::default(),
        required_scope: options
            .launch
            .as_ref()
            .is_some_and(names_scope)
            .then(|| SCOPE.to_string()),
        grant_scopes: Mutex::default(),
        watched,
    };
    let redactor = octx.redactor.clone();
    if options.resource.is_some() {
        // The operator starts the subject with the issuer just reported; it
        // has the startup timeout to accept connections.
        let addr = SocketAddr::new(target_ip, target_port);
        let until = Instant::now() + options.startup;
        while !web::accepting(addr) {
            if Instant::now() >= until || options.cancel.load(Ordering::SeqCst) {
                return Err(OauthRunError::ResourceUnreachable(addr.to_string()));
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        // Only the run's fixture may be named: a token of any other
        // authorization server would be a credential the run did not mint.
        let prm = checks::fetch_json(
            &octx,
            &format!("http://{addr}/.well-known/oauth-protected-resource/mcp"),
        );
        if let Some(named) = prm.get("authorization_servers").and_then(Value::as_array) {
            let named: Vec<String> = named
                .iter()
                .map(|v| v.as_str().unwrap_or("(not a string)").to_string())
                .collect();
            if named
                .iter()
                .any(|n| n.trim_end_matches('/') != issuer.trim_end_matches('/'))
            {
                return Err(OauthRunError::ForeignAuthorizationServer { named, issuer });
            }
        }
    }
    // The one store: every file redacted with every credential the run
    // knows, then refused if a credential or credential material (a JSON
    // web token, a URI with a code, ...) is left in it.
    let mut store = Store::create(&options.out, redactor.clone())?.with_gate(artifact_credential);
    // Preflight: the subject's name, version and resource identifier.
    let pre = checks::preflight(&octx);
    store.put("artifacts/preflight.json", &pre.artifact)?;
    // The client ID metadata document, fetched over loopback as the
    // fixture serves it: its digest is the flow's cimdSha256.
    let cimd = checks::fetch_json(&octx, &client_id);
    let cimd_sha = store.put("artifacts/cimd.json", &cimd)?.sha256;

    let applicable = profile.applicable_check_ids(rev);
    let mut rows = Vec::new();
    let mut cases = Vec::new();
    let mut run_checks = Vec::new();
    for decl in checks::CHECKS {
        let id = decl.id;
        let source = &if decl.needs.fixture {
            Source::TestFixture
        } else {
            Source::RuntimeProbe
        };
        if !applicable.iter().any(|a| a == id) {
            continue;
        }
        if options.cancel.load(Ordering::SeqCst) {
            return Err(OauthRunError::Cancelled);
        }
        report(Event::CheckStarted(id));
        // A check that reads the subject's process (its stdout and stderr) is
        // not observed against a subject mcpres did not start.
        let c = if options.launch.is_none() && decl.needs.launch {
            CheckRun::not_observed(
                id,
                "the subject was not started by mcpres: its stdout and stderr cannot be read",
            )
        } else {
            crate::produce::profile::decl::conform(decl, options.revision, (decl.run)(&octx))
        };
        if let Some(server) = &c.server {
            store.put(&format!("artifacts/{id}/server.json"), server)?;
        }
        // The verdict is the judge's over the artifacts as stored (redacted,
        // and labelled as their bytes give them): what `validate` re-judges.
        let mut shas: BTreeMap<&str, String> = BTreeMap::new();
        let mut judged: [Option<judge::Observation>; 3] = [None, None, None];
        for (k, (role, o)) in [
            ("positive", &c.positive),
            ("negative", &c.negative),
            ("mutant", &c.mutant),
        ]
        .into_iter()
        .enumerate()
        {
            if let Some(o) = o {
                let mut doc = json!({
                    "check": id,
                    "role": role,
                    "expectedOutcome": o.expected,
                    "observedOutcome": o.observed,
                    "expectedReasonCode": o.expected_reason,
                    "observedReasonCode": o.observed_reason,
                    "propertyReached": o.reached,
                    "detail": o.detail,
                    "transcript": o.artifact,
                });
                store.redactor().redact_artifact(&mut doc);
                let mut j = judge::Observation::from_artifact(&doc, id, role)
                    .expect("an artifact the runner writes is an observation");
                if let Some((rederived, _)) =
                    crate::judge::oauth::reread(id, role, &j, &doc["transcript"])
                {
                    rederived.label(&mut doc);
                    j = rederived;
                }
                shas.insert(
                    role,
                    store
                        .put(&format!("artifacts/{id}/{role}.json"), &doc)?
                        .sha256,
                );
                judged[k] = Some(j);
            }
        }
        let v = judge::check_verdict(
            judged[0].as_ref(),
            judged[1].as_ref(),
            judged[2].as_ref(),
            c.not_observed.as_deref(),
        );
        let (verdict, why, detail) = (v.verdict, v.reason, store.redact_str(&v.detail));
        let row = Row {
            id,
            source: *source,
            verdict,
            reason: why.clone(),
            detail: detail.clone(),
        };
        report(Event::Check(row.clone()));
        run_checks.push(json!({
            "id": id,
            "evidenceSource": source.as_str(),
            "verdict": verdict.as_str(),
            "reason": why,
            "detail": truncate(&detail, 400),
            "mutantKilled": v.mutant_killed,
        }));
        if let [Some(p), Some(n), Some(m)] = &judged {
            cases.push(CaseLine {
                id,
                source: *source,
                positive: ProbeLine::of(p, &shas["positive"]),
                negative: ProbeLine::of(n, &shas["negative"]),
                mutant_reached: m.observed != ProbeOutcome::NotObserved,
                mutant_reason: m.observed_reason.clone(),
                mutant_sha: shas["mutant"].clone(),
            });
        }
        rows.push(row);
    }
    if options.cancel.load(Ordering::SeqCst) {
        return Err(OauthRunError::Cancelled);
    }
    if cases.is_empty() {
        return Err(OauthRunError::NothingObserved);
    }
    let implemented: Vec<&str> = checks::CHECKS.iter().map(|d| d.id).collect();
    let not_implemented: Vec<String> = applicable
        .iter()
        .filter(|a| !implemented.contains(&a.as_str()))
        .cloned()
        .collect();

    // The fixture's audit, then its stop; the listeners must be gone.
    let events = octx.fixture.events();
    let fixture_fetches_off_loopback = events
        .iter()
        .filter(|e| e.method == "FETCH" && e.status != 0 && web::parse_url(&e.path).is_err())
        .count();
    // The trust policy the fixture recorded for the run's client's document.
    let trust_policy = events
        .iter()
        .filter(|e| e.method == "FETCH" && e.path == client_id)
        .find_map(|e| e.note.as_deref()?.strip_prefix("fetched under policy "))
        .unwrap_or("none recorded")
        .to_string();
    let OauthCtx {
        fixture,
        network,
        refusals,
        grant_scopes,
        ..
    } = octx;
    // The flow's scopes as the observed grant answered them; without one,
    // the scope every authorization request of the run asked for (both),
    // and run.json says so.
    let (requested_scopes, authorized_scopes, scopes_from) =
        match grant_scopes.into_inner().expect("scopes lock") {
            Some((requested, authorized)) if !requested.is_empty() && !authorized.is_empty() => (
                requested,
                authorized,
                "the grant scope-minimization observed",
            ),
            _ => (
                vec![SCOPE.to_string()],
                vec![SCOPE.to_string()],
                "no grant observed: the scope every request of the run asked for",
            ),
        };
    let (refusals_seen, refusals_echoing) = refusals.into_inner().expect("refusals lock");
    // Closed means that very socket is gone: its port may already serve
    // another process's listener, which is not ours to count.
    let fixture_inode = fixture.listener_inode();
    let redirect_inode = crate::produce::drive::proc::socket_inode(&redirect);
    fixture.stop();
    drop(redirect);
    let gone = |inode: Option<u64>, addr| match inode {
        Some(i) => !crate::produce::drive::proc::inode_listening(i),
        None => !web::accepting(addr),
    };
    let listener_closed = gone(fixture_inode, fixture_addr);
    let redirect_released = gone(redirect_inode, redirect_addr);
    let network = network.into_inner().expect("network lock");
    // External requests, counted from records: the runner's own connections
    // (loopback IP literals only, by `OauthCtx::guarded`: any other target
    // is refused before a socket exists), the fixture's outbound fetches off
    // loopback, and the distinct remote addresses off loopback sampled on
    // the subject's sockets.
    let runner_off_loopback = network
        .attempts
        .iter()
        .filter(|(t, _)| web::parse_url(t).is_err())
        .count();
    let (outside, outside_watched) = match outside_watch {
        Some(Ok(w)) => {
            let filtered = match &w.filtered {
                Ok(()) => json!(true),
                Err(e) => json!(e),
            };
            (w.finish(), json!({"watched": true, "filtered": filtered}))
        }
        Some(Err(why)) => (Vec::new(), json!({"watched": why})),
        None => (
            Vec::new(),
            json!({"watched": "not isolated: no namespace of the run's own to watch"}),
        ),
    };
    let external = runner_off_loopback
        + fixture_fetches_off_loopback
        + network.subject_external.len()
        + outside.len();
    let listener_doc = json!({
        "issuer": issuer,
        "address": fixture_addr.to_string(),
        "defects": format!("{:?}", options.fixture_defects),
        "events": serde_json::to_value(&events).expect("events serialize"),
    });
    let listener_sha = store.put("artifacts/fixture.json", &listener_doc)?.sha256;
    let cleanup_doc = json!({
        "fixtureListener": fixture_addr.to_string(),
        "fixtureListenerClosed": listener_closed,
        "redirectListener": redirect_addr.to_string(),
        "redirectListenerReleased": redirect_released,
        "runnerConnections": network.attempts.iter().map(|(t, c)| json!({"target": t, "connected": c})).collect::<Vec<_>>(),
        "refusedBeforeConnect": network.refused,
        "subjectRefusalsSeen": refusals_seen,
        "subjectRefusalsEchoingTheToken": refusals_echoing,
        "outsideAttempts": outside,
        "outsideWatch": outside_watched,
        "sandbox": sandbox_plan.to_json(),
    });
    let cleanup_sha = store.put("artifacts/cleanup.json", &cleanup_doc)?.sha256;
    // The privacy flags: the store's scan of the artifacts as they were
    // written, with every credential form the run knows at its end.
    let left = store.residue();
    let tokens_left = Redactor::synthetic_matches(&left);
    let runtime = match identity.runtime_name {
        "node" => RuntimeName::Node,
        "python" => RuntimeName::Python,
        _ => RuntimeName::Other,
    };
    let protocol_revision = ProtocolRevision::parse(rev).ok_or_else(|| {
        OauthRunError::Usage(format!(
            "revision {rev} is not a word of the evaluation's vocabulary"
        ))
    })?;
    // Derived from what the subject said: through the one redactor.
    let subject_name = truncate(&store.redact_str(&pre.name), 128);
    let subject_version = truncate(&store.redact_str(&pre.version), 64);
    let resource_uri = store.redact_str(&pre.resource);
    let runtime_version = truncate(&identity.runtime_version, 64);
    let authorization_endpoint = format!("{issuer}/authorize");
    let token_endpoint = format!("{issuer}/token");
    // The standard derives the result from the evidence sources alone
    // (spec/oauth-boundary.md): a failed case is not a `FAIL` result but a
    // per-case finding that makes the document invalid. So the derived value
    // is written, and the verdicts live in run.json and the exit code.
    let fixture_evidence = rows.iter().any(|r| r.source == Source::TestFixture);
    let evaluation = OauthEvaluation {
        schema_version: crate::model::oauth::OAUTH_EVALUATION_SCHEMA,
        subject: OauthSubject {
            name: &subject_name,
            version: &subject_version,
            artifact_sha256: &identity.artifact_sha256,
        },
        environment: OauthEnvironment {
            platform: Platform::Linux,
            runtime,
            runtime_version: &runtime_version,
        },
        profile: OauthProfile {
            id: &profile.id,
            version: &profile.version,
            manifest_sha256: &profile.manifest_sha256,
            protocol_revision,
        },
        fixture: FixtureRecord {
            loopback_only: external == 0,
            synthetic_credentials: true,
            real_authorization_providers_contacted: 0,
            external_network_requests: external as u64,
            listener_sha256: &listener_sha,
        },
        flow: Flow {
            resource_uri: &resource_uri,
            authorization_server_issuer: &issuer,
            authorization_endpoint: &authorization_endpoint,
            token_endpoint: &token_endpoint,
            client_id: &client_id,
            redirect_uri: &redirect_uri,
            requested_scopes: requested_scopes.iter().map(String::as_str).collect(),
            authorized_scopes: authorized_scopes.iter().map(String::as_str).collect(),
            code_challenge_method: "S256",
            cimd_sha256: &cimd_sha,
            trust_policy_id: &trust_policy,
        },
        cases: cases.iter().map(CaseLine::typed).collect(),
        privacy: Privacy {
            token_material_persisted: tokens_left > 0,
            evidence_contains_credential_material: Redactor::credential_matches(&left) > 0,
            // Observed: no refusal of the subject echoed the token it refused
            // (and at least one refusal was seen); the fixture's error
            // descriptions are fixed texts.
            authorization_errors_sanitized: refusals_seen > 0 && refusals_echoing == 0,
        },
        cleanup: ListenerCleanup {
            listener_closed,
            redirect_listener_released: redirect_released,
            observation_sha256: &cleanup_sha,
        },
        result: if fixture_evidence {
            ResultWord::Incomplete
        } else {
            ResultWord::Pass
        },
        evaluation_sha256: "",
    };
    let mut evaluation = serde_json::to_value(&evaluation).expect("plain JSON");
    crate::validate::profile::seal(&mut evaluation);
    // A check passes only when the standard's rules hold for its case too:
    // the OAuth document asks more of a wrong-reason mutant than the
    // verdict does (it must be seen refused early, not merely not credited
    // with the negative's reason). A case the validator finds fault with is
    // not claimed as passed in run.json or on the console.
    let case_ids: Vec<&str> = cases.iter().map(|c| c.id).collect();
    for finding in crate::validate::oauth::validate_oauth_evaluation(&evaluation).findings {
        let Some(index) = finding
            .pointer
            .strip_prefix("/cases/")
            .and_then(|rest| rest.split('/').next())
            .and_then(|i| i.parse::<usize>().ok())
        else {
            continue;
        };
        let Some(id) = case_ids.get(index) else {
            continue;
        };
        if let Some(row) = rows
            .iter_mut()
            .find(|r| r.id == *id && r.verdict == Verdict::Pass)
        {
            row.verdict = Verdict::NotObserved;
            row.reason = finding.code.as_str().to_string();
            row.detail = format!("revised by the standard's rules: {}", finding.message);
            report(Event::Check(row.clone()));
            if let Some(c) = run_checks.iter_mut().find(|c| c["id"] == *id) {
                c["verdict"] = json!(row.verdict.as_str());
                c["reason"] = json!(row.reason);
                c["detail"] = json!(truncate(&row.detail, 400));
            }
        }
    }
    // The store refuses it if it holds credential material.
    let eval_file = store.put_record("evaluation.json", &evaluation)?;
    let sampling = if options.launch.is_some() {
        json!(
            "the sockets of the subject and its descendants, read from /proc after each exchange with it; a connection opened and closed between two samples is missed"
        )
    } else {
        json!("not observed: the subject was not started by mcpres, so its sockets cannot be read")
    };
    let run_doc = json!({
        "schemaVersion": RUN_SCHEMA,
        "profile": {"id": profile.id, "protocolRevision": rev},
        "subject": match &options.resource {
            Some(r) => json!({"resource": r.url, "startedByMcpres": false}),
            None => json!({"startedByMcpres": true}),
        },
        "networkNamespace": options.network_namespace,
        "networkInterfaces": isolate::interfaces(),
        "externalRequests": {
            "total": external,
            "runnerConnectionsOffLoopback": runner_off_loopback,
            "runnerRefusedBeforeConnect": network.refused.len(),
            "fixtureFetchesOffLoopback": fixture_fetches_off_loopback,
            "subjectPeersOffLoopback": network.subject_external.iter().collect::<Vec<_>>(),
            "subjectSocketSamples": network.subject_samples,
            "subjectOutsideAttempts": outside,
            "subjectSocketSampling": sampling,
            "how": if options.network_namespace {
                "the run took place in a network namespace of its own whose only interface is loopback, where every address beyond loopback is routed to loopback: an attempt to reach one never leaves the machine and is recorded from its opening packet on that interface (subjectOutsideAttempts); the counts above are what was recorded besides"
            } else {
                "not isolated: the counts above are what was recorded; a subject connection the sampling missed would not be counted"
            },
        },
        "evaluationFileSha256": eval_file.sha256,
        "checks": run_checks,
        "notImplemented": not_implemented,
        "flowScopesFrom": scopes_from,
        "artifacts": store.rows(),
    });
    store.put_record("run.json", &run_doc)?;
    store.finish();
    Ok(Outcome {
        rows,
        not_implemented,
        refusals: (refusals_seen, refusals_echoing),
        evaluation_sha256: evaluation["evaluationSha256"]
            .as_str()
            .unwrap_or_default()
            .to_string(),
    })
}

/// The identity of a subject mcpres did not start: its artifact's digest.
fn resource_identity(r: &Resource) -> Result<Identity, OauthRunError> {
    let (sha, _) = crate::produce::drive::ident::artifact_digest(&r.artifact).map_err(|e| {
        OauthRunError::Usage(format!("--subject-artifact {}: {e}", r.artifact.display()))
    })?;
    let target = json!({"url": r.url, "artifactSha256": sha});
    Ok(Identity {
        language: "OTHER",
        runtime_name: "other",
        runtime_version: "unknown (not started by mcpres)".into(),
        artifact_sha256: sha,
        target_sha256: canonical::sha256_hex(&canonical::to_vec(&target).expect("plain JSON")),
    })
}

/// A case of the evaluation, kept until it is written.
struct CaseLine {
    id: &'static str,
    source: Source,
    positive: ProbeLine,
    negative: ProbeLine,
    mutant_reached: bool,
    mutant_reason: String,
    mutant_sha: String,
}

impl CaseLine {
    fn typed(&self) -> Case<'_> {
        Case {
            id: self.id,
            evidence_source: self.source.vocabulary(),
            positive: self.positive.typed(),
            negative: self.negative.typed(),
            wrong_reason_mutant: WrongReasonMutant {
                property_reached: self.mutant_reached,
                observed_reason_code: &self.mutant_reason,
                expected_diagnostic: crate::diag::codes::OAUTH_WRONG_REASON.as_str(),
                artifact_sha256: &self.mutant_sha,
            },
        }
    }
}

/// An observation as the OAuth evaluation records it, with its artifact's
/// digest.
struct ProbeLine {
    reached: bool,
    expected: ProbeOutcome,
    observed: ProbeOutcome,
    expected_reason: String,
    observed_reason: String,
    sha: String,
}

impl ProbeLine {
    fn of(o: &judge::Observation, sha: &str) -> ProbeLine {
        ProbeLine {
            reached: o.reached,
            expected: o.expected,
            observed: o.observed,
            expected_reason: o.expected_reason.clone(),
            observed_reason: o.observed_reason.clone(),
            sha: sha.to_string(),
        }
    }

    fn typed(&self) -> Probe<'_> {
        Probe {
            property_reached: self.reached,
            expected_outcome: self.expected,
            observed_outcome: self.observed,
            expected_reason_code: &self.expected_reason,
            observed_reason_code: &self.observed_reason,
            artifact_sha256: &self.sha,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_secret_is_also_known_percent_encoded_in_either_hex_case() {
        let forms: Vec<String> = crate::produce::drive::redact::secret_forms("a-b_c", true)
            .into_iter()
            .collect();
        assert_eq!(forms, ["a%2Db%5Fc", "a%2db%5fc", "a-b_c"]);
        // Letters and digits only: nothing to escape, one form.
        assert_eq!(
            crate::produce::drive::redact::secret_forms("abc123", true).len(),
            1
        );
        let mut v = json!({
            "location": "http://127.0.0.1:9/cb?code=a%2db%5fc&state=x",
            "query": "code=a%2Db%5Fc",
        });
        Redactor::synthetic(&["a-b_c"]).redact_value(&mut v);
        assert_eq!(
            v["location"],
            json!(format!("http://127.0.0.1:9/cb?code={REDACTED}&state=x"))
        );
        assert_eq!(v["query"], json!(format!("code={REDACTED}")));
    }

    #[test]
    fn scrubbing_replaces_text_and_redacts_base64_holding_a_secret() {
        use base64::Engine as _;
        let secret = "eyJabc.eyJdef.sig";
        let b64 = base64::engine::general_purpose::STANDARD.encode(b"x Bearer eyJabc.eyJdef.sig y");
        let mut v = json!({"a": ["Bearer eyJabc.eyJdef.sig"], "base64": b64, "headBase64": "AAAA"});
        Redactor::synthetic(&[secret]).redact_value(&mut v);
        assert_eq!(v["a"][0], json!(format!("Bearer {REDACTED}")));
        let kept = base64::engine::general_purpose::STANDARD
            .decode(v["base64"].as_str().unwrap())
            .unwrap();
        assert_eq!(kept, format!("x Bearer {REDACTED} y").as_bytes());
        assert_eq!(v["headBase64"], json!("AAAA"));
        assert!(credential_material(&v, String::new()).is_none());
    }

    #[test]
    fn a_challenge_is_not_a_credential_but_a_bearer_token_is() {
        let challenge = json!({"h": "WWW-Authenticate: Bearer resource_metadata=\"http://127.0.0.1:9/x\", error=\"invalid_token\""});
        assert!(artifact_credential(&challenge).is_none());
        let token = json!({"h": "Authorization: Bearer abcdefgh12345678"});
        assert!(artifact_credential(&token).is_some());
        let both = json!(["Bearer error=\"x\"", "Bearer abcdefgh12345678="]);
        assert_eq!(
            artifact_credential(&both).map(|f| f.0),
            Some("/1".to_string())
        );
    }

    #[test]
    fn scope_is_substituted_and_its_presence_known() {
        let launch = Launch {
            program: "subject".into(),
            args: vec![
                "--issuer={issuer}".into(),
                "--scope".into(),
                "{scope}".into(),
            ],
            env: BTreeMap::from([("SCOPES".to_string(), "a {scope}".to_string())]),
            sandbox: None,
        };
        assert!(names_scope(&launch));
        let l = with_issuer(&launch, "http://127.0.0.1:7");
        assert_eq!(l.args, ["--issuer=http://127.0.0.1:7", "--scope", SCOPE]);
        assert_eq!(l.env["SCOPES"], format!("a {SCOPE}"));
        assert!(!names_scope(&l));
        let unscoped = Launch {
            env: BTreeMap::new(),
            ..l
        };
        assert!(!names_scope(&unscoped));
    }
}
