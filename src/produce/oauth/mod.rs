//! `mcpres oauth run`: an OAuth authorization-boundary evaluation
//! (`mcp-res.oauth-boundary-evaluation/0.2.0`) produced from a real run
//! against an OAuth-protected MCP resource server, with the loopback
//! authorization fixture started in process (spec/oauth-boundary.md,
//! NOTES-oauthrun.md for the design and what is not done yet).
//!
//! The pieces of `mcpres profile run` are reused: the subject is started per
//! check by [`Ctx::serve`], every exchange is a raw connection recorded by a
//! [`Rec`] that redacts every token of the observation, and each check's
//! positive, negative control and wrong-reason mutant are judged by
//! [`CheckRun::verdict`]. The evaluation lists only the checks observed.

pub mod checks;
pub mod flow;

use std::collections::BTreeMap;
use std::net::{IpAddr, SocketAddr, TcpListener};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};

use super::profile::check::{CheckRun, Ctx, Obs, Verdict};
use super::profile::probe::Launch;
use super::profile::web::{self, Rec, Web};
use super::profile::{RemoveOnError, subject_identity, truncate};
use crate::fsio::DirHandle;
use crate::json::canonical;
use crate::model::vocab::ProbeOutcome;
use crate::produce::harness::vocab::Revision;
use crate::profiles::{OAUTH_BOUNDARY_ID, Registry};
use crate::server::oauth::{Defects, Fixture, FixtureConfig};
use crate::validate::oauth::credential_material;

/// The `schemaVersion` of `run.json`.
pub const RUN_SCHEMA: &str = "mcpres.oauth-run/1";
/// The scope every synthetic token of a run carries.
pub const SCOPE: &str = "mcp";
/// What replaces a credential in every artifact.
pub const REDACTED: &str = "<synthetic-bearer>";

/// What an OAuth run needs.
#[derive(Debug, Clone)]
pub struct Options {
    /// The subject's command; `{port}` and `{issuer}` in its arguments and
    /// environment are replaced by the port it must listen on and the
    /// fixture's issuer.
    pub launch: Launch,
    pub revision: Revision,
    pub out: PathBuf,
    pub startup: Duration,
    pub answer: Duration,
    /// Deliberate misbehaviour of the in-process fixture (negative controls
    /// of the runner itself).
    pub fixture_defects: Defects,
}

#[derive(Debug, thiserror::Error)]
pub enum OauthRunError {
    #[error("{0}")]
    Usage(String),
    #[error("the loopback authorization fixture could not start: {0}")]
    Fixture(String),
    #[error("no check could be observed against this subject; nothing to evaluate")]
    NothingObserved,
    #[error(
        "refusing to write {path}: it holds credential material ({what} at {pointer}); nothing was kept"
    )]
    CredentialMaterial {
        path: String,
        pointer: String,
        what: &'static str,
    },
    #[error("cannot write {path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
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
        match self {
            Source::RuntimeProbe => "RUNTIME_PROBE",
            Source::TestFixture => "TEST_FIXTURE",
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
    /// Every credential the run minted: redacted from every artifact.
    secrets: Arc<Mutex<Vec<zeroize::Zeroizing<String>>>>,
    pub network: Mutex<Network>,
    /// (subject refusals seen, of which echoed the presented token).
    pub refusals: Mutex<(usize, usize)>,
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

    /// Remember a credential (or a damaged copy of one) for redaction.
    pub fn remember(&self, secret: &str) {
        self.secrets
            .lock()
            .expect("secrets lock")
            .push(zeroize::Zeroizing::new(secret.to_string()));
    }

    /// A record that redacts every credential known so far.
    pub fn rec(&self) -> Rec {
        let secrets = self.secrets.lock().expect("secrets lock");
        let refs: Vec<&str> = secrets.iter().map(|s| s.as_str()).collect();
        Rec::redacting(&refs)
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

    /// Count a refusal of the subject, and whether its headers or body
    /// echoed the token it refused (an unsanitized authorization error).
    pub fn saw_refusal(&self, resp: &web::Resp, token: &str) {
        let echoed = contains(&resp.body, token.as_bytes())
            || resp.headers.iter().any(|(_, v)| v.contains(token));
        let mut r = self.refusals.lock().expect("refusals lock");
        r.0 += 1;
        r.1 += usize::from(echoed);
    }

    /// Every string of `value` with each known credential replaced, and
    /// every base64 field that decodes to bytes holding one dropped.
    pub fn scrub(&self, value: &mut Value) {
        scrub(&self.secrets, value);
    }
}

fn scrub(secrets: &Mutex<Vec<zeroize::Zeroizing<String>>>, value: &mut Value) {
    let secrets = secrets.lock().expect("secrets lock");
    scrub_with(value, &secrets);
}

fn scrub_with(value: &mut Value, secrets: &[zeroize::Zeroizing<String>]) {
    use base64::Engine as _;
    match value {
        Value::String(s) => {
            for secret in secrets.iter().filter(|x| !x.is_empty()) {
                if s.contains(secret.as_str()) {
                    *s = s.replace(secret.as_str(), REDACTED);
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|v| scrub_with(v, secrets)),
        Value::Object(map) => {
            for (k, v) in map.iter_mut() {
                if (k == "base64" || k == "headBase64")
                    && let Some(text) = v.as_str()
                    && let Ok(bytes) = base64::engine::general_purpose::STANDARD.decode(text)
                    && secrets
                        .iter()
                        .any(|x| !x.is_empty() && contains(&bytes, x.as_bytes()))
                {
                    *v = json!("<dropped: held a synthetic credential>");
                } else {
                    scrub_with(v, secrets);
                }
            }
        }
        _ => {}
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
}

/// The reason code of a case's branch.
pub fn reason(id: &str, branch: &str) -> String {
    crate::validate::oauth::reason_code(id, branch)
}

/// The early (syntax) rejection every mutant must meet.
pub const EARLY: &str = crate::validate::codes::OAUTH_EARLY_SYNTAX_REJECTION;

/// `launch` with `{issuer}` replaced.
fn with_issuer(launch: &Launch, issuer: &str) -> Launch {
    let sub = |s: &String| s.replace("{issuer}", issuer);
    Launch {
        program: launch.program.clone(),
        args: launch.args.iter().map(sub).collect(),
        env: launch
            .env
            .iter()
            .map(|(k, v)| (k.clone(), sub(v)))
            .collect(),
    }
}

/// Run the checks this runner implements and write the evaluation directory
/// `options.out` (which must not exist).
pub fn run(options: &Options, report: &mut dyn FnMut(&Row)) -> Result<Outcome, OauthRunError> {
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
    if !web::names_port(&options.launch) {
        return Err(OauthRunError::Usage(
            "the subject's command must say where its port goes ({port})".into(),
        ));
    }
    let loopback = IpAddr::from([127, 0, 0, 1]);
    // The redirect listener: held for the run, released at its end.
    let redirect = TcpListener::bind(SocketAddr::new(loopback, 0))
        .map_err(|e| OauthRunError::Fixture(format!("cannot bind the redirect listener: {e}")))?;
    let redirect_addr = redirect
        .local_addr()
        .map_err(|e| OauthRunError::Fixture(e.to_string()))?;
    let redirect_uri = format!("http://{redirect_addr}/callback");
    let fixture = Fixture::start(FixtureConfig {
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
    let launch = with_issuer(&options.launch, &issuer);
    let mut ctx = Ctx::new(
        Some(&launch),
        options.revision,
        options.startup,
        options.answer,
    );
    ctx.web = Some(Web {
        ip: loopback,
        port: 0,
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
        secrets: Arc::default(),
        network: Mutex::default(),
        refusals: Mutex::default(),
    };
    let secrets = octx.secrets.clone();
    let io = |path: &Path, source| OauthRunError::Io {
        path: path.to_path_buf(),
        source,
    };
    let dir = DirHandle::create_new(&options.out).map_err(|e| io(&options.out, e))?;
    let mut guard = RemoveOnError {
        path: options.out.clone(),
        armed: true,
    };
    let mut artifacts: Vec<Value> = Vec::new();
    let mut write = |rel: String, mut value: Value| -> Result<String, OauthRunError> {
        scrub(&secrets, &mut value);
        if let Some((pointer, what)) = artifact_credential(&value) {
            return Err(OauthRunError::CredentialMaterial {
                path: rel,
                pointer,
                what,
            });
        }
        let bytes = canonical::to_vec(&value).expect("artifacts are plain JSON");
        dir.write_new(Path::new(&rel), &bytes)
            .map_err(|e| io(&options.out.join(&rel), e))?;
        let sha = canonical::sha256_hex(&bytes);
        artifacts.push(json!({"path": rel, "sha256": sha, "bytes": bytes.len()}));
        Ok(sha)
    };
    // Preflight: the subject's name, version and resource identifier.
    let pre = checks::preflight(&octx);
    write("artifacts/preflight.json".into(), pre.artifact.clone())?;
    // The client ID metadata document, fetched over loopback as the
    // fixture serves it: its digest is the flow's cimdSha256.
    let cimd = checks::fetch_json(&octx, &client_id);
    let cimd_sha = write("artifacts/cimd.json".into(), cimd.clone())?;

    let applicable = profile.applicable_check_ids(rev);
    let mut rows = Vec::new();
    let mut cases = Vec::new();
    let mut run_checks = Vec::new();
    for (id, source, runner) in checks::CHECKS {
        if !applicable.iter().any(|a| a == id) {
            continue;
        }
        let c = runner(&octx);
        let (verdict, why, detail) = c.verdict();
        if let Some(server) = &c.server {
            write(format!("artifacts/{id}/server.json"), server.clone())?;
        }
        let mut shas: BTreeMap<&str, String> = BTreeMap::new();
        for (role, o) in [
            ("positive", &c.positive),
            ("negative", &c.negative),
            ("mutant", &c.mutant),
        ] {
            if let Some(o) = o {
                let doc = json!({
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
                shas.insert(role, write(format!("artifacts/{id}/{role}.json"), doc)?);
            }
        }
        let row = Row {
            id,
            source: *source,
            verdict,
            reason: why.clone(),
            detail: detail.clone(),
        };
        report(&row);
        run_checks.push(json!({
            "id": id,
            "evidenceSource": source.as_str(),
            "verdict": verdict.as_str(),
            "reason": why,
            "detail": truncate(&detail, 400),
            "mutantKilled": c.mutant_killed(),
        }));
        if let (Some(p), Some(n), Some(m)) = (&c.positive, &c.negative, &c.mutant) {
            cases.push(json!({
                "id": id,
                "evidenceSource": source.as_str(),
                "positive": observation(p, &shas["positive"]),
                "negative": observation(n, &shas["negative"]),
                "wrongReasonMutant": {
                    "propertyReached": m.observed != ProbeOutcome::NotObserved,
                    "observedReasonCode": m.observed_reason,
                    "expectedDiagnostic": crate::diag::codes::OAUTH_WRONG_REASON.as_str(),
                    "artifactSha256": shas["mutant"],
                },
            }));
        }
        rows.push(row);
    }
    if cases.is_empty() {
        return Err(OauthRunError::NothingObserved);
    }
    let implemented: Vec<&str> = checks::CHECKS.iter().map(|(id, _, _)| *id).collect();
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
    let OauthCtx {
        fixture,
        network,
        refusals,
        ..
    } = octx;
    let (refusals_seen, refusals_echoing) = refusals.into_inner().expect("refusals lock");
    fixture.stop();
    drop(redirect);
    let listener_closed = !web::accepting(fixture_addr);
    let redirect_released = !web::accepting(redirect_addr);
    let network = network.into_inner().expect("network lock");
    let external = fixture_fetches_off_loopback;
    let listener_doc = json!({
        "issuer": issuer,
        "address": fixture_addr.to_string(),
        "defects": format!("{:?}", options.fixture_defects),
        "events": serde_json::to_value(&events).expect("events serialize"),
    });
    let listener_sha = write("artifacts/fixture.json".into(), listener_doc)?;
    let cleanup_doc = json!({
        "fixtureListener": fixture_addr.to_string(),
        "fixtureListenerClosed": listener_closed,
        "redirectListener": redirect_addr.to_string(),
        "redirectListenerReleased": redirect_released,
        "runnerConnections": network.attempts.iter().map(|(t, c)| json!({"target": t, "connected": c})).collect::<Vec<_>>(),
        "refusedBeforeConnect": network.refused,
        "subjectRefusalsSeen": refusals_seen,
        "subjectRefusalsEchoingTheToken": refusals_echoing,
    });
    let cleanup_sha = write("artifacts/cleanup.json".into(), cleanup_doc)?;
    let identity = subject_identity(&options.launch, None);
    let runtime = match identity.runtime_name {
        "node" => "node",
        "python" => "python",
        _ => "other",
    };
    let mut evaluation = json!({
        "schemaVersion": "mcp-res.oauth-boundary-evaluation/0.2.0",
        "subject": {
            "name": truncate(&pre.name, 128),
            "version": truncate(&pre.version, 64),
            "artifactSha256": identity.artifact_sha256,
        },
        "environment": {
            "platform": "linux",
            "runtime": runtime,
            "runtimeVersion": truncate(&identity.runtime_version, 64),
        },
        "profile": {
            "id": profile.id,
            "version": profile.version,
            "manifestSha256": profile.manifest_sha256,
            "protocolRevision": rev,
        },
        "fixture": {
            "loopbackOnly": external == 0,
            "syntheticCredentials": true,
            "realAuthorizationProvidersContacted": 0,
            "externalNetworkRequests": external,
            "listenerSha256": listener_sha,
        },
        "flow": {
            "resourceUri": pre.resource,
            "authorizationServerIssuer": issuer,
            "authorizationEndpoint": format!("{issuer}/authorize"),
            "tokenEndpoint": format!("{issuer}/token"),
            "clientId": client_id,
            "redirectUri": redirect_uri,
            "requestedScopes": [SCOPE],
            "authorizedScopes": [SCOPE],
            "codeChallengeMethod": "S256",
            "cimdSha256": cimd_sha,
            "trustPolicyId": "loopback-http-only, no-redirects",
        },
        "cases": cases,
        "privacy": {
            "tokenMaterialPersisted": false,
            "evidenceContainsCredentialMaterial": false,
            // Observed: no refusal of the subject echoed the token it refused
            // (and at least one refusal was seen); the fixture's error
            // descriptions are fixed texts.
            "authorizationErrorsSanitized": refusals_seen > 0 && refusals_echoing == 0,
        },
        "cleanup": {
            "listenerClosed": listener_closed,
            "redirectListenerReleased": redirect_released,
            "observationSha256": cleanup_sha,
        },
        "result": "PASS",
        "evaluationSha256": "",
    });
    // The standard derives the result from the evidence sources alone
    // (spec/oauth-boundary.md): a failed case is not a `FAIL` result but a
    // per-case finding that makes the document invalid. So the derived value
    // is written, and the verdicts live in run.json and the exit code.
    let fixture_evidence = rows.iter().any(|r| r.source == Source::TestFixture);
    evaluation["result"] = json!(if fixture_evidence {
        "INCOMPLETE"
    } else {
        "PASS"
    });
    crate::validate::profile::seal(&mut evaluation);
    if let Some((pointer, what)) = credential_material(&evaluation, String::new()) {
        return Err(OauthRunError::CredentialMaterial {
            path: "evaluation.json".into(),
            pointer,
            what,
        });
    }
    let eval_bytes = canonical::to_vec(&evaluation).expect("plain JSON");
    dir.write_new(Path::new("evaluation.json"), &eval_bytes)
        .map_err(|e| io(&options.out.join("evaluation.json"), e))?;
    let run_doc = json!({
        "schemaVersion": RUN_SCHEMA,
        "profile": {"id": profile.id, "protocolRevision": rev},
        "evaluationFileSha256": canonical::sha256_hex(&eval_bytes),
        "checks": run_checks,
        "notImplemented": not_implemented,
        "artifacts": artifacts,
    });
    let run_bytes = canonical::to_vec(&run_doc).expect("plain JSON");
    dir.write_new(Path::new("run.json"), &run_bytes)
        .map_err(|e| io(&options.out.join("run.json"), e))?;
    guard.armed = false;
    Ok(Outcome {
        rows,
        not_implemented,
        evaluation_sha256: evaluation["evaluationSha256"]
            .as_str()
            .unwrap_or_default()
            .to_string(),
    })
}

/// An observation as the OAuth evaluation records it.
fn observation(o: &Obs, sha: &str) -> Value {
    json!({
        "propertyReached": o.reached,
        "expectedOutcome": o.expected,
        "observedOutcome": o.observed,
        "expectedReasonCode": o.expected_reason,
        "observedReasonCode": o.observed_reason,
        "artifactSha256": sha,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scrubbing_replaces_text_and_drops_base64_holding_a_secret() {
        use base64::Engine as _;
        let secret = zeroize::Zeroizing::new("eyJabc.eyJdef.sig".to_string());
        let b64 = base64::engine::general_purpose::STANDARD.encode(b"x Bearer eyJabc.eyJdef.sig y");
        let mut v = json!({"a": ["Bearer eyJabc.eyJdef.sig"], "base64": b64, "headBase64": "AAAA"});
        scrub_with(&mut v, std::slice::from_ref(&secret));
        assert_eq!(v["a"][0], json!(format!("Bearer {REDACTED}")));
        assert_eq!(v["base64"], json!("<dropped: held a synthetic credential>"));
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
}
