//! The declared workload of an operational-resilience run (spec/operational.md): what
//! load is sent, for how long, and the local budgets each check is held to. It is read
//! from a TOML file (`--workload`), or the built-in default a newcomer can run as is,
//! and bound into every observation of the run by its canonical digest.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::json::canonical;

/// The built-in workload, as a file a user can copy and edit.
pub const DEFAULT_TOML: &str = include_str!("default-workload.toml");

/// The `schemaVersion` of the workload as bound into the evidence.
pub const SCHEMA: &str = "mcpres.ops-workload/1";

/// A declared workload: the load, its timing, and the budgets.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Workload {
    /// A name for the scenario (free text, recorded).
    pub scenario: String,
    pub load: Load,
    pub budgets: Budgets,
    pub controls: Controls,
    /// What the subject declares of itself (optional): the checks that need it are
    /// NOT_OBSERVED without it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subject: Option<SubjectDecl>,
    /// The rate limit the subject declares (optional): `rate-limiting` is NOT_OBSERVED
    /// without it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate_limit: Option<RateLimitDecl>,
    /// The storage the subject writes (optional): `disk-full` and `permission-failure`
    /// are NOT_OBSERVED without it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub storage: Option<StorageDecl>,
    /// The downstream the subject calls (optional): `downstream-failure` and
    /// `partial-outage` are NOT_OBSERVED without it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub downstream: Option<DownstreamDecl>,
    /// The subject's other version (optional): `rolling-version-skew` is NOT_OBSERVED
    /// without it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version_skew: Option<VersionSkewDecl>,
}

/// The other version of the subject a rolling update runs beside it (the next release,
/// or the one before): started the way the subject is (its environment, its sandbox),
/// at the same time.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct VersionSkewDecl {
    /// The other version's command: its program (a path, or a name looked up in PATH)
    /// and arguments.
    pub command: Vec<String>,
    /// What the other version is (free text, recorded: `0.3.0`, `main at abc123`).
    pub label: String,
}

/// A downstream a subject declares it calls over HTTP: the environment variable it reads
/// the downstream's base URL from, and a tool call that makes one request to it. The
/// runner serves that URL itself (a loopback stub beside the subject, in its sandbox)
/// and makes it answer, fail or come back.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct DownstreamDecl {
    /// The environment variable that carries the downstream's base URL
    /// (`http://127.0.0.1:PORT/`).
    pub url_env: String,
    /// The tool whose call (`tools/call` with `callArguments`) calls the downstream.
    pub call_tool: String,
    /// The call's arguments (a table).
    #[serde(default = "empty_object")]
    pub call_arguments: Value,
    /// Once the downstream is back, how long the subject may take to serve the call
    /// again (its backoff or circuit breaker), in ms.
    pub recovery_ms: u64,
}

/// Storage a subject declares it writes: a directory, and a tool call that writes a
/// file there. The storage checks make that directory full, or read-only, in the
/// subject's sandbox (never on the host).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct StorageDecl {
    /// An absolute path of an existing directory (as the subject sees it).
    pub path: String,
    /// The tool whose call (`tools/call` with `writeArguments`) writes a file there.
    pub write_tool: String,
    /// The write call's arguments (a table).
    #[serde(default = "empty_object")]
    pub write_arguments: Value,
}

/// A rate limit a subject declares of itself: at most `requests` requests served in any
/// span of `windowMs`; more are to be refused (or served in a later window), never lost.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct RateLimitDecl {
    pub requests: u32,
    pub window_ms: u64,
}

/// What a subject declares of itself, for the checks about its limits
/// (`overload-rejection`, `retry-after`, `queue-saturation`): the workload's author says
/// it, the run holds the subject to it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct SubjectDecl {
    /// The most requests the subject serves at once; more are to be refused (or
    /// queued and served later), never lost.
    pub max_in_flight: u32,
    /// A tool whose call holds one of those places for a while (`tools/call` with
    /// `holdArguments`), so that the runner can fill them.
    pub hold_tool: String,
    /// The hold call's arguments (a table).
    #[serde(default = "empty_object")]
    pub hold_arguments: Value,
    /// How long one hold call takes, in ms: the runner's waits are derived from it.
    pub hold_ms: u64,
}

fn empty_object() -> Value {
    Value::Object(Default::default())
}

/// The load the generator sends.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Load {
    /// The operation mix: each entry a request kind and its weight. Kinds:
    /// `live` (`ping` at 2025-11-25, `tools/list` at 2026-07-28), `tools/list`,
    /// `resources/list`, `prompts/list`.
    pub mix: Vec<MixEntry>,
    /// Intended requests per second (an open-loop schedule).
    pub rate_per_s: u32,
    /// Most requests in flight at once; a send that would exceed it waits, and its
    /// latency still counts from its intended time.
    pub concurrency: u32,
    /// The first part of the soak, not judged (the subject settles).
    pub warmup_ms: u64,
    /// The soak the positives are judged on, warm-up included.
    pub soak_ms: u64,
    /// The soak of each negative control and mutant (they show the reading works).
    pub control_soak_ms: u64,
    /// Fresh starts measured for `cold-start`.
    pub cold_starts: u32,
    /// How often the subject's processes are sampled over a soak.
    pub sample_interval_ms: u64,
    /// Malformed lines in `malformed-flood`'s flood.
    pub flood_lines: u32,
    /// A valid request after every this many malformed lines (the positive).
    pub flood_valid_every: u32,
    /// The size of `oversized-input`'s one line, in bytes.
    pub oversized_bytes: u64,
    /// Requests sent right before stdin is closed in `graceful-shutdown` (each must be
    /// answered before the subject exits).
    pub in_flight_at_shutdown: u32,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct MixEntry {
    pub kind: String,
    pub weight: u32,
}

/// The declared local budgets: no universal threshold, only what this workload claims.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Budgets {
    /// The median time from spawn to the opening's answer, over the cold starts.
    pub cold_start_ms: u64,
    /// The time from spawn to the opening's answer on a start right after another.
    pub warm_start_ms: u64,
    /// Latency percentiles over the judged part of the soak (from intended send).
    pub p50_ms: u64,
    pub p95_ms: u64,
    pub p99_ms: u64,
    /// Largest share of judged requests that may end without a result (per mille).
    pub error_per_mille: u32,
    /// Growth of the subject's resident memory, KiB per 1,000 operations (slope).
    pub rss_kib_per_1000_ops: u64,
    /// Growth of the subject's open descriptors per 1,000 operations (slope).
    pub fds_per_1000_ops: u64,
    /// Growth of listening sockets per 1,000 operations (slope).
    pub listeners_per_1000_ops: u64,
    /// Growth of live descendant processes per 1,000 operations (slope).
    pub children_per_1000_ops: u64,
    /// From stdin closed to the subject's exit, without a signal (`graceful-shutdown`).
    pub shutdown_ms: u64,
    /// From SIGTERM to the subject's exit (`forced-shutdown`).
    pub term_ms: u64,
    /// From a request's send to its answer, past which the client gives up on it and
    /// cancels it (`timeout`).
    pub request_timeout_ms: u64,
}

/// How the negative controls and mutants are made.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Controls {
    /// An injected defect is this many times its budget.
    pub defect_factor: u32,
    /// The seed of every seeded injection (the flood's bytes).
    pub seed: u64,
}

#[derive(Debug, thiserror::Error)]
pub enum WorkloadError {
    #[error("not a workload file: {0}")]
    Toml(String),
    #[error("the workload is unusable: {0}")]
    Invalid(String),
}

/// The request kinds a mix may name.
pub const KINDS: [&str; 4] = ["live", "tools/list", "resources/list", "prompts/list"];

impl Workload {
    /// The built-in default.
    pub fn builtin() -> Workload {
        Workload::parse(DEFAULT_TOML).expect("the built-in workload parses")
    }

    /// Read a workload from TOML text (every field required, none unknown).
    pub fn parse(text: &str) -> Result<Workload, WorkloadError> {
        let w: Workload = toml::from_str(text).map_err(|e| WorkloadError::Toml(e.to_string()))?;
        w.check()?;
        Ok(w)
    }

    fn check(&self) -> Result<(), WorkloadError> {
        let bad = |s: &str| Err(WorkloadError::Invalid(s.into()));
        if self.load.mix.is_empty() || self.load.mix.iter().all(|m| m.weight == 0) {
            return bad("load.mix needs at least one kind with a weight above 0");
        }
        if let Some(m) = self
            .load
            .mix
            .iter()
            .find(|m| !KINDS.contains(&m.kind.as_str()))
        {
            return Err(WorkloadError::Invalid(format!(
                "load.mix: unknown kind {:?} (known: {})",
                m.kind,
                KINDS.join(", ")
            )));
        }
        if !(1..=10_000).contains(&self.load.rate_per_s) {
            return bad("load.ratePerS must be 1 to 10000");
        }
        if !(1..=1024).contains(&self.load.concurrency) {
            return bad("load.concurrency must be 1 to 1024");
        }
        if self.load.soak_ms > 3_600_000 || self.load.control_soak_ms > 3_600_000 {
            return bad("a soak longer than an hour is not a bounded soak");
        }
        if self.load.warmup_ms >= self.load.soak_ms {
            return bad("load.warmupMs must be shorter than load.soakMs");
        }
        if self.load.control_soak_ms < 1000 || self.load.control_soak_ms <= self.load.warmup_ms {
            return bad("load.controlSoakMs must be at least 1000 and longer than load.warmupMs");
        }
        if !(1..=50).contains(&self.load.cold_starts) {
            return bad("load.coldStarts must be 1 to 50");
        }
        if !(20..=10_000).contains(&self.load.sample_interval_ms) {
            return bad("load.sampleIntervalMs must be 20 to 10000");
        }
        // A slope needs samples: at least eight over the second half of the judged part
        // of each soak (what a leak is read from).
        let judged = self.load.control_soak_ms - self.load.warmup_ms;
        if judged / 2 / self.load.sample_interval_ms < 8 {
            return bad(
                "the second half of a control soak's judged part holds fewer than 8 samples",
            );
        }
        if !(1..=1_000_000).contains(&self.load.flood_lines) || self.load.flood_valid_every == 0 {
            return bad("load.floodLines must be 1 to 1000000 and load.floodValidEvery above 0");
        }
        if !(1024..=256 << 20).contains(&self.load.oversized_bytes) {
            return bad("load.oversizedBytes must be 1024 to 268435456");
        }
        if !(1..=1000).contains(&self.load.in_flight_at_shutdown) {
            return bad("load.inFlightAtShutdown must be 1 to 1000");
        }
        // Each is waited for as long as twice itself (and a second) before the runner
        // gives up: no more than a minute each.
        if !(1..=30_000).contains(&self.budgets.shutdown_ms)
            || !(1..=30_000).contains(&self.budgets.term_ms)
            || !(1..=30_000).contains(&self.budgets.request_timeout_ms)
        {
            return bad(
                "budgets.shutdownMs, budgets.termMs and budgets.requestTimeoutMs must be 1 to 30000",
            );
        }
        if self.budgets.p50_ms > self.budgets.p95_ms || self.budgets.p95_ms > self.budgets.p99_ms {
            return bad("budgets: p50Ms <= p95Ms <= p99Ms");
        }
        if self.budgets.error_per_mille > 1000 {
            return bad("budgets.errorPerMille is at most 1000");
        }
        if self.controls.seed >= 1 << 53 {
            return bad("controls.seed must be below 2^53 (a JSON-safe integer)");
        }
        if !(2..=100).contains(&self.controls.defect_factor) {
            return bad("controls.defectFactor must be 2 to 100");
        }
        if let Some(s) = &self.subject {
            if !(1..=256).contains(&s.max_in_flight) {
                return bad("subject.maxInFlight must be 1 to 256");
            }
            if !(100..=30_000).contains(&s.hold_ms) {
                return bad("subject.holdMs must be 100 to 30000");
            }
            if s.hold_tool.is_empty() || !s.hold_arguments.is_object() {
                return bad("subject.holdTool must be named and subject.holdArguments a table");
            }
        }
        if let Some(s) = &self.storage {
            let p = std::path::Path::new(&s.path);
            let special = ["/proc", "/sys", "/dev"].iter().any(|d| p.starts_with(d));
            if !p.is_absolute() || p.parent().is_none() || special {
                return bad(
                    "storage.path must be an absolute directory other than /, /proc, /sys and /dev",
                );
            }
            if s.write_tool.is_empty() || !s.write_arguments.is_object() {
                return bad("storage.writeTool must be named and storage.writeArguments a table");
            }
        }
        if let Some(d) = &self.downstream {
            let env_ok = !d.url_env.is_empty()
                && d.url_env
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'_');
            if !env_ok {
                return bad(
                    "downstream.urlEnv must be an environment variable's name ([A-Za-z0-9_]+)",
                );
            }
            if d.call_tool.is_empty() || !d.call_arguments.is_object() {
                return bad(
                    "downstream.callTool must be named and downstream.callArguments a table",
                );
            }
            if !(100..=60_000).contains(&d.recovery_ms) {
                return bad("downstream.recoveryMs must be 100 to 60000");
            }
        }
        if let Some(v) = &self.version_skew
            && (v.command.first().is_none_or(String::is_empty) || v.label.is_empty())
        {
            return bad(
                "versionSkew.command must name a program and versionSkew.label say which version it is",
            );
        }
        if let Some(r) = &self.rate_limit {
            if !(1..=1000).contains(&r.requests) {
                return bad("rateLimit.requests must be 1 to 1000");
            }
            if !(100..=30_000).contains(&r.window_ms) {
                return bad("rateLimit.windowMs must be 100 to 30000");
            }
        }
        Ok(())
    }

    /// The workload as it is bound into the evidence.
    pub fn to_json(&self) -> Value {
        let mut v = serde_json::to_value(self).expect("a workload serializes");
        v["schemaVersion"] = Value::String(SCHEMA.into());
        v
    }

    /// The SHA-256 of its canonical JSON.
    pub fn sha256(&self) -> String {
        canonical::sha256_hex(
            &canonical::to_vec(&self.to_json()).expect("a checked workload has a canonical form"),
        )
    }

    /// The request kind of the `n`th operation: a fixed interleaving of the mix by
    /// weight (deterministic, so a run can be repeated).
    pub fn kind_of(&self, n: u64) -> &str {
        let total: u64 = self.load.mix.iter().map(|m| u64::from(m.weight)).sum();
        let mut at = n % total;
        for m in &self.load.mix {
            if at < u64::from(m.weight) {
                return &m.kind;
            }
            at -= u64::from(m.weight);
        }
        &self.load.mix[0].kind
    }
}

/// The workload bound in an evidence record, read back (the judge's view).
pub fn from_json(v: &Value) -> Option<Workload> {
    let mut v = v.clone();
    v.as_object_mut()?.remove("schemaVersion");
    serde_json::from_value(v).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_builtin_workload_parses_and_round_trips_through_its_json() {
        let w = Workload::builtin();
        assert_eq!(from_json(&w.to_json()), Some(w.clone()));
        assert_eq!(w.sha256().len(), 64);
    }

    #[test]
    fn an_unknown_field_or_kind_or_a_bad_budget_is_refused() {
        let with = |from: &str, to: &str| DEFAULT_TOML.replacen(from, to, 1);
        assert!(matches!(
            Workload::parse(&format!("{DEFAULT_TOML}\nsurprise = 1\n")),
            Err(WorkloadError::Toml(_))
        ));
        let e = Workload::parse(&with("kind = \"tools/list\"", "kind = \"tools/call\""));
        assert!(matches!(e, Err(WorkloadError::Invalid(m)) if m.contains("unknown kind")));
        let e = Workload::parse(&with("p50Ms = ", "p50Ms = 99999 + "));
        assert!(e.is_err());
        let e = Workload::parse(&with("defectFactor = 4", "defectFactor = 1"));
        assert!(matches!(e, Err(WorkloadError::Invalid(m)) if m.contains("defectFactor")));
    }

    #[test]
    fn a_subject_declaration_is_optional_and_checked() {
        assert_eq!(Workload::builtin().subject, None);
        let declared = format!(
            "{DEFAULT_TOML}\n[subject]\nmaxInFlight = 8\nholdTool = \"slow\"\nholdArguments = {{ delayMs = 1500 }}\nholdMs = 1500\n"
        );
        let w = Workload::parse(&declared).unwrap();
        let s = w.subject.clone().unwrap();
        assert_eq!((s.max_in_flight, s.hold_ms), (8, 1500));
        assert_eq!(s.hold_arguments["delayMs"], 1500);
        assert_eq!(from_json(&w.to_json()), Some(w.clone()));
        let e = Workload::parse(&declared.replace("maxInFlight = 8", "maxInFlight = 0"));
        assert!(matches!(e, Err(WorkloadError::Invalid(m)) if m.contains("maxInFlight")));
    }

    #[test]
    fn a_rate_limit_declaration_is_optional_and_checked() {
        assert_eq!(Workload::builtin().rate_limit, None);
        let declared = format!("{DEFAULT_TOML}\n[rateLimit]\nrequests = 5\nwindowMs = 1000\n");
        let w = Workload::parse(&declared).unwrap();
        assert_eq!(
            w.rate_limit,
            Some(RateLimitDecl {
                requests: 5,
                window_ms: 1000
            })
        );
        assert_eq!(w.to_json()["rateLimit"]["windowMs"], 1000);
        assert_eq!(from_json(&w.to_json()), Some(w.clone()));
        let e = Workload::parse(&declared.replace("windowMs = 1000", "windowMs = 10"));
        assert!(matches!(e, Err(WorkloadError::Invalid(m)) if m.contains("windowMs")));
        let e = Workload::parse(&declared.replace("requests = 5", "requests = 5\nburst = 2"));
        assert!(matches!(e, Err(WorkloadError::Toml(_))));
    }

    #[test]
    fn a_storage_declaration_is_optional_and_checked() {
        assert_eq!(Workload::builtin().storage, None);
        let declared = format!(
            "{DEFAULT_TOML}\n[storage]\npath = \"/var/tmp\"\nwriteTool = \"store\"\nwriteArguments = {{ key = \"k\", bytes = 4096 }}\n"
        );
        let w = Workload::parse(&declared).unwrap();
        let s = w.storage.clone().unwrap();
        assert_eq!(
            (s.path.as_str(), s.write_tool.as_str()),
            ("/var/tmp", "store")
        );
        assert_eq!(w.to_json()["storage"]["writeArguments"]["bytes"], 4096);
        assert_eq!(from_json(&w.to_json()), Some(w.clone()));
        for bad in ["\"/\"", "\"var/tmp\"", "\"/proc/x\""] {
            let e = Workload::parse(&declared.replace("\"/var/tmp\"", bad));
            assert!(
                matches!(e, Err(WorkloadError::Invalid(m)) if m.contains("storage.path")),
                "{bad}"
            );
        }
    }

    #[test]
    fn a_downstream_declaration_is_optional_and_checked() {
        assert_eq!(Workload::builtin().downstream, None);
        let declared = format!(
            "{DEFAULT_TOML}\n[downstream]\nurlEnv = \"MCPRES_DOWNSTREAM_URL\"\ncallTool = \"fetch\"\ncallArguments = {{ path = \"/x\" }}\nrecoveryMs = 3000\n"
        );
        let w = Workload::parse(&declared).unwrap();
        let d = w.downstream.clone().unwrap();
        assert_eq!(
            (d.url_env.as_str(), d.call_tool.as_str(), d.recovery_ms),
            ("MCPRES_DOWNSTREAM_URL", "fetch", 3000)
        );
        assert_eq!(w.to_json()["downstream"]["callArguments"]["path"], "/x");
        assert_eq!(from_json(&w.to_json()), Some(w.clone()));
        for (from, to, says) in [
            ("\"MCPRES_DOWNSTREAM_URL\"", "\"A=B\"", "urlEnv"),
            ("\"fetch\"", "\"\"", "callTool"),
            ("recoveryMs = 3000", "recoveryMs = 10", "recoveryMs"),
        ] {
            let e = Workload::parse(&declared.replace(from, to));
            assert!(
                matches!(&e, Err(WorkloadError::Invalid(m)) if m.contains(says)),
                "{to}: {e:?}"
            );
        }
    }

    #[test]
    fn a_version_skew_declaration_is_optional_and_checked() {
        assert_eq!(Workload::builtin().version_skew, None);
        let declared = format!(
            "{DEFAULT_TOML}\n[versionSkew]\ncommand = [\"mcpres\", \"serve\"]\nlabel = \"next\"\n"
        );
        let w = Workload::parse(&declared).unwrap();
        assert_eq!(w.version_skew.clone().unwrap().command, ["mcpres", "serve"]);
        assert_eq!(w.to_json()["versionSkew"]["label"], "next");
        assert_eq!(from_json(&w.to_json()), Some(w.clone()));
        for bad in ["command = []", "command = [\"\"]"] {
            let e = Workload::parse(&declared.replace("command = [\"mcpres\", \"serve\"]", bad));
            assert!(
                matches!(&e, Err(WorkloadError::Invalid(m)) if m.contains("versionSkew")),
                "{bad}: {e:?}"
            );
        }
    }

    #[test]
    fn the_mix_interleaves_by_weight() {
        let mut w = Workload::builtin();
        w.load.mix = vec![
            MixEntry {
                kind: "live".into(),
                weight: 2,
            },
            MixEntry {
                kind: "tools/list".into(),
                weight: 1,
            },
        ];
        let kinds: Vec<&str> = (0..6).map(|n| w.kind_of(n)).collect();
        assert_eq!(
            kinds,
            ["live", "live", "tools/list", "live", "live", "tools/list"]
        );
    }
}
