//! Scenario files: `mcpres run --scenario FILE` (TOML or JSON) and the
//! built-in scenarios, which are scenario files compiled into the binary.
//!
//! A file is checked in three steps: it must parse (TOML, or strict JSON), it
//! must satisfy `schemas/mcpres-scenario.schema.json`, and it must make sense
//! as a whole (known faults for the injection kind, unique names, declared
//! policies, recovery only with the reference driver). The checked document,
//! as canonical JSON, is what the scenario descriptor records: it is the
//! experiment, and it holds nothing machine- or run-specific.

use std::collections::BTreeSet;
use std::path::Path;
use std::sync::OnceLock;

use serde::Deserialize;
use serde_json::Value;

use super::vocab::{
    ClientFault, ClientFaultKind, Injector, Mutant, NegativeControl, RecoveryControl,
    RecoveryPolicy, Scenario, WIRE_BOUNDARY, WIRE_TRIGGER,
};
use crate::server::fault::FaultId;

/// The schema every scenario file satisfies.
pub const SCHEMA_SOURCE: &str = include_str!("../../../schemas/mcpres-scenario.schema.json");

/// The version string a scenario file declares in `schema`.
pub const SCENARIO_SCHEMA: &str = "mcpres.scenario/1";

/// Largest scenario file read.
const MAX_FILE_BYTES: u64 = 1 << 20;

/// The built-in scenarios: (name, file text).
pub const BUILTINS: [(&str, &str); 5] = [
    (
        "reference-faults",
        include_str!("../../../scenarios/reference-faults.toml"),
    ),
    ("generic", include_str!("../../../scenarios/generic.toml")),
    (
        "tool-contracts",
        include_str!("../../../scenarios/tool-contracts.toml"),
    ),
    (
        "reference-recovery",
        include_str!("../../../scenarios/reference-recovery.toml"),
    ),
    (
        "client-faults",
        include_str!("../../../scenarios/client-faults.toml"),
    ),
];

/// Why a scenario cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum ScenarioError {
    #[error("{path}: {source}")]
    Read {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error("{0}: larger than 1 MiB")]
    TooLarge(String),
    #[error("{origin}: not valid TOML: {message}")]
    Toml { origin: String, message: String },
    #[error("{origin}: not valid JSON: {message}")]
    Json { origin: String, message: String },
    #[error("{origin}: does not satisfy the scenario schema:\n{}", .errors.join("\n"))]
    Schema { origin: String, errors: Vec<String> },
    #[error("{origin}: {message}")]
    Invalid { origin: String, message: String },
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct File {
    #[allow(dead_code)]
    schema: String,
    name: String,
    description: String,
    driver: String,
    protocol_revision: Option<String>,
    exchange_budget_ms: Option<u64>,
    #[serde(default)]
    defaults: Defaults,
    #[serde(default)]
    limits: Limits,
    negative_controls: Vec<NegativeEntry>,
    #[serde(default)]
    recovery_policies: Vec<PolicyEntry>,
    #[serde(default)]
    recovery_controls: Vec<RecoveryEntry>,
    #[serde(default)]
    client_faults: Vec<ClientEntry>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct Defaults {
    trials: Option<usize>,
    seed: Option<u32>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct Limits {
    scenario_duration_ms: Option<u64>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct NegativeEntry {
    name: String,
    fault: String,
    injection: String,
    property: String,
    expected_effect: Option<String>,
    expected_verdict: String,
    expected_stop_reason: String,
    mutant: String,
    prerequisites: Option<Vec<String>>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct PolicyEntry {
    id: String,
    retry_limit: u32,
    initial_backoff_ms: u64,
    max_backoff_ms: u64,
    attempt_timeout_ms: u64,
    time_limit_ms: u64,
    cancellation_boundary: String,
    side_effect_model: String,
    safety_mechanism: String,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct RecoveryEntry {
    name: String,
    fault: String,
    policy: String,
    expect_recovered: Option<bool>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct ClientEntry {
    name: String,
    fault: String,
    expect: String,
    error_code: Option<i64>,
}

fn schema_validator() -> &'static jsonschema::Validator {
    static VALIDATOR: OnceLock<jsonschema::Validator> = OnceLock::new();
    VALIDATOR.get_or_init(|| {
        let schema: Value =
            serde_json::from_str(SCHEMA_SOURCE).expect("the scenario schema is JSON");
        jsonschema::options()
            .with_draft(jsonschema::Draft::Draft202012)
            .build(&schema)
            .expect("the scenario schema compiles")
    })
}

/// Every built-in scenario, parsed.
pub fn builtins() -> Vec<Scenario> {
    BUILTINS
        .iter()
        .map(|(name, text)| {
            parse_toml(text, &format!("built-in scenario {name}"))
                .expect("built-in scenarios are valid")
        })
        .collect()
}

/// The text of a built-in scenario (`default` is an alias of the default one).
pub fn builtin_text(name: &str) -> Option<&'static str> {
    let name = if name == "default" {
        super::vocab::DEFAULT_SCENARIO
    } else {
        name
    };
    BUILTINS.iter().find(|(n, _)| *n == name).map(|(_, t)| *t)
}

/// A built-in scenario, parsed (`default` is an alias of the default one).
pub fn builtin(name: &str) -> Option<Scenario> {
    builtin_text(name).map(|text| {
        parse_toml(text, &format!("built-in scenario {name}"))
            .expect("built-in scenarios are valid")
    })
}

/// `--scenario` names a built-in scenario, or a file when it contains a `/`
/// or ends in `.toml` or `.json`.
pub fn resolve(arg: &str) -> Result<Scenario, ScenarioError> {
    let looks_like_path = arg.contains('/') || arg.ends_with(".toml") || arg.ends_with(".json");
    if !looks_like_path {
        if let Some(scenario) = builtin(arg) {
            return Ok(scenario);
        }
        return Err(ScenarioError::Invalid {
            origin: arg.to_string(),
            message: format!(
                "no built-in scenario of that name (built-ins: {}); a scenario file is named by a path containing '/' or ending in .toml or .json",
                BUILTINS.map(|(n, _)| n).join(", ")
            ),
        });
    }
    load(Path::new(arg))
}

/// Read and check a scenario file.
pub fn load(path: &Path) -> Result<Scenario, ScenarioError> {
    let origin = path.display().to_string();
    let read_err = |source| ScenarioError::Read {
        path: origin.clone(),
        source,
    };
    let meta = std::fs::metadata(path).map_err(read_err)?;
    if meta.len() > MAX_FILE_BYTES {
        return Err(ScenarioError::TooLarge(origin));
    }
    let bytes = std::fs::read(path).map_err(read_err)?;
    if path.extension().is_some_and(|e| e == "json") {
        let value =
            crate::json::reader::parse_default(&bytes).map_err(|e| ScenarioError::Json {
                origin: origin.clone(),
                message: e.to_string(),
            })?;
        from_value(value, &origin)
    } else {
        let text = std::str::from_utf8(&bytes).map_err(|e| ScenarioError::Toml {
            origin: origin.clone(),
            message: format!("not UTF-8 ({e})"),
        })?;
        parse_toml(text, &origin)
    }
}

/// Parse TOML text as a scenario.
pub fn parse_toml(text: &str, origin: &str) -> Result<Scenario, ScenarioError> {
    let value: Value = toml::from_str(text).map_err(|e| ScenarioError::Toml {
        origin: origin.to_string(),
        message: e.to_string().trim_end().to_string(),
    })?;
    from_value(value, origin)
}

/// Check a parsed scenario document and build the scenario.
pub fn from_value(value: Value, origin: &str) -> Result<Scenario, ScenarioError> {
    let errors: Vec<String> = schema_validator()
        .iter_errors(&value)
        .map(|e| {
            let at = e.instance_path().as_str().to_owned();
            // The schema's enum of stop reasons is long: name every allowed
            // value (the validator's own message lists only the first few).
            if at.ends_with("/expectedStopReason")
                && let Some(given) = e.instance().as_str()
                && !super::vocab::STOP_REASONS.contains(&given)
            {
                return format!(
                    "  at {at}: {given:?} is not a stop reason the harness's oracle gives, so the control could never behave; use one of: {}",
                    super::vocab::STOP_REASONS.join(", ")
                );
            }
            format!("  at {}: {e}", if at.is_empty() { "/" } else { &at })
        })
        .take(20)
        .collect();
    if !errors.is_empty() {
        return Err(ScenarioError::Schema {
            origin: origin.to_string(),
            errors,
        });
    }
    let file: File = serde_json::from_value(value.clone()).map_err(|e| ScenarioError::Invalid {
        origin: origin.to_string(),
        message: e.to_string(),
    })?;
    build(file, value, origin).map_err(|message| ScenarioError::Invalid {
        origin: origin.to_string(),
        message,
    })
}

fn mutant(id: &str) -> Mutant {
    match id {
        "oracle-skips-result-shape" => Mutant::SkipResultShape,
        "oracle-ignores-response-ids" => Mutant::IgnoreIds,
        "oracle-accepts-refusals" => Mutant::AcceptRefusals,
        _ => Mutant::LossyDecode,
    }
}

fn subject_fault(id: &str) -> Option<FaultId> {
    FaultId::ALL.into_iter().find(|f| f.as_str() == id)
}

/// Prerequisites a negative control of this injection kind can reach, in order.
pub fn natural_prerequisites(injector: Injector) -> Vec<String> {
    let target = if injector == Injector::SubjectFlag {
        "TOOL_CALL_SENT"
    } else {
        "TARGET_REQUEST_SENT"
    };
    let mut natural: Vec<String> = ["PROCESS_SPAWNED", "SESSION_INITIALIZED"]
        .map(String::from)
        .to_vec();
    // A tool-contract control's refusal is tied to its input only when the
    // valid input was accepted on the same session just before.
    if injector == Injector::RequestInvalidInput {
        natural.push("VALID_TWIN_ACCEPTED".into());
    }
    natural.extend([target, "SUBJECT_OUTPUT_COMPLETE", "FAULT_INJECTED"].map(String::from));
    natural
}

fn build(file: File, document: Value, origin: &str) -> Result<Scenario, String> {
    let _ = origin;
    let tool_contracts = file.driver == "tool-contracts";
    let generic = file.driver == "generic" || tool_contracts;
    let mut names: BTreeSet<String> = BTreeSet::from(["clean".to_string(), "client".to_string()]);
    let mut claim = |name: &str| -> Result<(), String> {
        // Session roles and artifact names derive from these names; a recovery
        // control's restarted process takes `<name>-restart`.
        for n in [name.to_string(), format!("{name}-restart")] {
            if !names.insert(n.clone()) {
                return Err(format!(
                    "the name {n:?} is used twice (control names, `clean`, `client` and `<recovery>-restart` must all differ)"
                ));
            }
        }
        Ok(())
    };
    let mut negatives = Vec::new();
    for n in &file.negative_controls {
        claim(&n.name)?;
        let (injector, boundary, trigger) = match n.injection.as_str() {
            "subject" => {
                let fault = subject_fault(&n.fault).ok_or_else(|| {
                    format!(
                        "negative control {:?}: {:?} is not a fault of the reference server's taxonomy (see spec/reference-server.md, Faults)",
                        n.name, n.fault
                    )
                })?;
                (
                    Injector::SubjectFlag,
                    fault.boundary().to_string(),
                    super::vocab::FAULT_TRIGGER.to_string(),
                )
            }
            "client-request" => {
                let injector = match n.fault.as_str() {
                    "request-unknown-method" => Injector::RequestUnknownMethod,
                    "request-unknown-tool" => Injector::RequestUnknownTool,
                    f if super::contract::template_violation(f).is_some() => {
                        if !tool_contracts {
                            return Err(format!(
                                "negative control {:?}: {f:?} is a tool-contract control, which needs driver = \"tool-contracts\"",
                                n.name
                            ));
                        }
                        Injector::RequestInvalidInput
                    }
                    other => {
                        return Err(format!(
                            "negative control {:?}: {other:?} is not a harness request fault (request-unknown-method, request-unknown-tool, tool-input-missing-required, tool-input-wrong-type, tool-input-unknown-member)",
                            n.name
                        ));
                    }
                };
                (
                    injector,
                    super::vocab::REQUEST_BOUNDARY.to_string(),
                    super::vocab::REQUEST_TRIGGER.to_string(),
                )
            }
            _ => {
                let injector = match n.fault.as_str() {
                    "wire-invalid-utf8" => Injector::WireCorruptUtf8,
                    "wire-duplicate-response" => Injector::WireDuplicate,
                    "wire-remove-tools" => Injector::WireStripResult,
                    other => {
                        return Err(format!(
                            "negative control {:?}: {other:?} is not a harness wire fault (wire-invalid-utf8, wire-duplicate-response, wire-remove-tools)",
                            n.name
                        ));
                    }
                };
                (
                    injector,
                    WIRE_BOUNDARY.to_string(),
                    WIRE_TRIGGER.to_string(),
                )
            }
        };
        let natural = natural_prerequisites(injector);
        let required = match &n.prerequisites {
            None => natural.clone(),
            Some(list) => {
                if let Some(bad) = list
                    .iter()
                    .find(|p| !natural.contains(p) && p.as_str() != "SERVER_DISCOVERED")
                {
                    return Err(format!(
                        "negative control {:?}: prerequisite {bad:?} cannot be reached with injection {:?} (reachable: {})",
                        n.name,
                        n.injection,
                        natural.join(", ")
                    ));
                }
                list.clone()
            }
        };
        negatives.push(NegativeControl {
            name: n.name.clone(),
            fault: n.fault.clone(),
            boundary,
            expected_effect: n
                .expected_effect
                .clone()
                .unwrap_or_else(|| format!("{} rejection", n.expected_stop_reason)),
            property: n.property.clone(),
            expected_verdict: n.expected_verdict.clone(),
            expected_stop: n.expected_stop_reason.clone(),
            mutant: mutant(&n.mutant),
            trigger,
            injector,
            prerequisites: required,
            input: None,
        });
    }
    let mut policies: Vec<RecoveryPolicy> = Vec::new();
    for p in &file.recovery_policies {
        if policies.iter().any(|q| q.id == p.id) {
            return Err(format!("recovery policy {:?} is declared twice", p.id));
        }
        if p.max_backoff_ms < p.initial_backoff_ms {
            return Err(format!(
                "recovery policy {:?}: maxBackoffMs is below initialBackoffMs",
                p.id
            ));
        }
        if p.attempt_timeout_ms > p.time_limit_ms {
            return Err(format!(
                "recovery policy {:?}: attemptTimeoutMs exceeds timeLimitMs",
                p.id
            ));
        }
        policies.push(RecoveryPolicy {
            id: p.id.clone(),
            retry_limit: p.retry_limit,
            initial_backoff_ms: p.initial_backoff_ms,
            max_backoff_ms: p.max_backoff_ms,
            attempt_timeout_ms: p.attempt_timeout_ms,
            time_limit_ms: p.time_limit_ms,
            cancellation_boundary: p.cancellation_boundary.clone(),
            side_effect_model: p.side_effect_model.clone(),
            safety_mechanism: p.safety_mechanism.clone(),
        });
    }
    let mut recoveries = Vec::new();
    for r in &file.recovery_controls {
        claim(&r.name)?;
        if generic {
            return Err(format!(
                "recovery control {:?}: recovery controls need driver \"reference\" (they use the reference server's --fault flag and its counter tool)",
                r.name
            ));
        }
        let policy = policies
            .iter()
            .find(|p| p.id == r.policy)
            .cloned()
            .ok_or_else(|| {
                format!(
                    "recovery control {:?}: policy {:?} is not declared in recoveryPolicies",
                    r.name, r.policy
                )
            })?;
        let fault = subject_fault(&r.fault).expect("the schema lists only taxonomy faults");
        recoveries.push(RecoveryControl {
            name: r.name.clone(),
            fault: r.fault.clone(),
            boundary: fault.boundary().to_string(),
            policy,
            expect_recovered: r.expect_recovered.unwrap_or(true),
        });
    }
    let mut client_faults = Vec::new();
    for c in &file.client_faults {
        if !names.insert(format!("client-{}", c.name)) {
            return Err(format!("client fault {:?} is declared twice", c.name));
        }
        let kind = match c.fault.as_str() {
            "client-truncated-json" => ClientFaultKind::TruncatedJson,
            "client-invalid-utf8" => ClientFaultKind::InvalidUtf8,
            "client-unknown-method" => ClientFaultKind::UnknownMethod,
            "client-call-without-name" => ClientFaultKind::CallWithoutName,
            _ => ClientFaultKind::NotJsonRpc,
        };
        client_faults.push(ClientFault {
            name: c.name.clone(),
            kind,
            error_required: c.expect == "ERROR",
            accept_allowed: c.expect == "SURVIVE",
            error_code: c.error_code,
        });
    }
    let clean_steps: Vec<String> = if generic {
        vec![
            "initialize",
            "notifications/initialized",
            "tools/list",
            "tools/call echo (when listed), else a tool annotated read-only without required arguments, or the tool named with --tool",
            "tools/call get-env (when listed)",
            "stdin EOF",
        ]
    } else {
        vec![
            "initialize",
            "notifications/initialized",
            "tools/list",
            "tools/call echo",
            "stdin EOF",
        ]
    }
    .into_iter()
    .map(String::from)
    .collect();
    Ok(Scenario {
        name: file.name,
        description: file.description,
        exchange_budget_ms: file.exchange_budget_ms.unwrap_or(2000),
        negatives,
        clean_steps,
        generic,
        protocol_revision: match file.protocol_revision.as_deref() {
            Some("2026-07-28") => super::vocab::Revision::V2026_07_28,
            _ => super::vocab::Revision::V2025_11_25,
        },
        default_trials: file.defaults.trials,
        default_seed: file.defaults.seed,
        scenario_duration_ms: file.limits.scenario_duration_ms.unwrap_or(3_600_000),
        recovery_policies: policies,
        recoveries,
        client_faults,
        document,
        named_tool: None,
        tool_contracts,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtins_parse_and_have_distinct_names() {
        let all = builtins();
        assert_eq!(all.len(), BUILTINS.len());
        let names: BTreeSet<&str> = all.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names.len(), all.len());
        for (s, (builtin, _)) in all.iter().zip(BUILTINS) {
            assert_eq!(s.name, builtin, "file name and declared name agree");
            assert!(!s.negatives.is_empty());
        }
        let recovery = all.iter().find(|s| s.name == "reference-recovery").unwrap();
        assert_eq!(recovery.recoveries.len(), 4);
        assert_eq!(recovery.recoveries[0].policy.retry_limit, 3);
        let client = all.iter().find(|s| s.name == "client-faults").unwrap();
        assert_eq!(client.client_faults.len(), 4);
        assert!(client.generic);
    }

    fn err(text: &str) -> String {
        parse_toml(text, "t.toml").unwrap_err().to_string()
    }

    #[test]
    fn a_stop_reason_no_check_gives_is_refused_naming_the_allowed_ones() {
        let bogus = format!(
            "{HEAD}driver = \"reference\"\n{}",
            negative("schema-violation", "subject")
        )
        .replace("\"SCHEMA_VIOLATION\"", "\"BOGUS\"");
        let e = err(&bogus);
        assert!(e.contains("scenario schema"), "{e}");
        assert!(e.contains("/negativeControls/0/expectedStopReason"), "{e}");
        assert!(e.contains("\"BOGUS\""), "{e}");
        for allowed in super::super::vocab::STOP_REASONS {
            assert!(e.contains(allowed), "{allowed} not named in {e}");
        }
        // Every allowed one is accepted.
        for allowed in super::super::vocab::STOP_REASONS {
            let text = format!(
                "{HEAD}driver = \"reference\"\n{}",
                negative("schema-violation", "subject")
            )
            .replace("\"SCHEMA_VIOLATION\"", &format!("\"{allowed}\""));
            assert!(parse_toml(&text, "t.toml").is_ok(), "{allowed}");
        }
    }

    #[test]
    fn the_schema_lists_exactly_the_stop_reasons_the_oracle_gives() {
        let schema: Value = serde_json::from_str(SCHEMA_SOURCE).unwrap();
        let listed: Vec<&str> = schema["$defs"]["stopReason"]["enum"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap())
            .collect();
        assert_eq!(listed, super::super::vocab::STOP_REASONS);
        // Every stop reason the oracle's code spells out is in the list.
        let oracle = include_str!("oracle.rs");
        let code = oracle.split("#[cfg(test)]").next().unwrap();
        let mut spelled = BTreeSet::new();
        for piece in code.split('"').skip(1).step_by(2) {
            if piece.len() > 2
                && piece
                    .chars()
                    .all(|c| c.is_ascii_uppercase() || c == '_' || c.is_ascii_digit())
            {
                spelled.insert(piece);
            }
        }
        assert!(!spelled.is_empty());
        for r in spelled {
            assert!(
                super::super::vocab::STOP_REASONS.contains(&r),
                "the oracle gives {r}, which the scenario schema does not allow"
            );
        }
    }

    const HEAD: &str = "schema = \"mcpres.scenario/1\"\nname = \"x\"\ndescription = \"d\"\n";

    fn negative(fault: &str, injection: &str) -> String {
        format!(
            "[[negativeControls]]\nname = \"n\"\nfault = \"{fault}\"\ninjection = \"{injection}\"\nproperty = \"p\"\nexpectedVerdict = \"REJECT\"\nexpectedStopReason = \"SCHEMA_VIOLATION\"\nmutant = \"oracle-skips-result-shape\"\n"
        )
    }

    #[test]
    fn files_are_checked_by_syntax_schema_and_meaning() {
        let ok = format!(
            "{HEAD}driver = \"reference\"\n{}",
            negative("schema-violation", "subject")
        );
        let s = parse_toml(&ok, "t.toml").unwrap();
        assert_eq!(s.exchange_budget_ms, 2000);
        assert_eq!(s.negatives[0].boundary, "schema validator");
        assert_eq!(
            s.negatives[0].prerequisites,
            natural_prerequisites(Injector::SubjectFlag)
        );
        // Syntax.
        assert!(err("name = ").contains("not valid TOML"));
        // Schema: unknown member, missing member, bad enum.
        assert!(err(&format!("{ok}extra = 1\n")).contains("scenario schema"));
        assert!(err(&format!("{HEAD}{}", negative("reorder", "subject"))).contains("driver"));
        assert!(
            err(&format!(
                "{HEAD}driver = \"reference\"\n{}",
                negative("reorder", "smoke-signals")
            ))
            .contains("scenario schema")
        );
        // Meaning: an unknown subject fault, a wire fault that does not exist,
        // a wire prerequisite on a subject fault, a policy never declared.
        assert!(
            err(&format!(
                "{HEAD}driver = \"reference\"\n{}",
                negative("no-such-fault", "subject")
            ))
            .contains("taxonomy")
        );
        assert!(
            err(&format!(
                "{HEAD}driver = \"generic\"\n{}",
                negative("schema-violation", "harness-wire")
            ))
            .contains("not a harness wire fault")
        );
        assert!(
            err(&format!("{ok}prerequisites = [\"TARGET_REQUEST_SENT\"]\n"))
                .contains("cannot be reached")
        );
        let recovery = "[[recoveryControls]]\nname = \"r\"\nfault = \"timeout\"\npolicy = \"p\"\n";
        assert!(err(&format!("{ok}{recovery}")).contains("not declared"));
        let twice = format!(
            "{HEAD}driver = \"reference\"\n{}{}",
            negative("reorder", "subject"),
            negative("duplicate", "subject")
        );
        assert!(err(&twice).contains("used twice"));
    }

    #[test]
    fn json_files_and_paths_resolve() {
        let tmp = tempfile::tempdir().unwrap();
        let value: Value = toml::from_str(builtin_text("generic").unwrap()).unwrap();
        let path = tmp.path().join("mine.json");
        std::fs::write(&path, serde_json::to_vec(&value).unwrap()).unwrap();
        let s = resolve(path.to_str().unwrap()).unwrap();
        assert_eq!(s.name, "generic");
        assert_eq!(s.document, value);
        assert!(resolve("default").is_ok());
        assert!(
            resolve("no-such-builtin")
                .unwrap_err()
                .to_string()
                .contains("built-ins")
        );
        let missing = tmp.path().join("missing.toml");
        assert!(matches!(
            resolve(missing.to_str().unwrap()),
            Err(ScenarioError::Read { .. })
        ));
    }
}
