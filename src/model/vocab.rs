//! Shared vocabulary of MCP-RES v0.2 documents: bundle paths, media types, evidence classes
//! and observation surfaces. Producers write these values and rules check them.

/// Media type of an observation artifact.
pub const OBSERVATION_MEDIA_TYPE: &str = "application/vnd.mcp-res.observation+json";
/// Path of the evidence envelope inside a bundle directory.
pub const EVIDENCE_PATH: &str = "evidence-envelope.json";
/// Path of the conformance statement inside a bundle directory.
pub const STATEMENT_PATH: &str = "conformance-statement.json";

/// The evidence classes, strongest first.
pub const EVIDENCE_CLASSES: &[&str] = EvidenceClass::NAMES;

/// The 14 observation surfaces every coverage record lists exactly once.
pub const SURFACES: &[&str] = Surface::NAMES;

/// An enumerated field of MCP-RES documents: a closed set of words, each written exactly as
/// the schema spells it. `ALL` and `NAMES` keep declaration order (the standard's order).
macro_rules! vocabulary {
    ($(#[$meta:meta])* $name:ident { $($variant:ident = $text:literal,)+ }) => {
        $(#[$meta])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize)]
        pub enum $name {
            $(#[serde(rename = $text)] $variant,)+
        }

        impl $name {
            /// Every value, in the standard's order.
            pub const ALL: &'static [$name] = &[$($name::$variant,)+];
            /// Every value as written in documents, in the standard's order.
            pub const NAMES: &'static [&'static str] = &[$($text,)+];

            /// The value as written in documents.
            pub const fn as_str(self) -> &'static str {
                match self {
                    $($name::$variant => $text,)+
                }
            }

            /// The value a document's text names, if any.
            pub fn parse(text: &str) -> Option<Self> {
                match text {
                    $($text => Some($name::$variant),)+
                    _ => None,
                }
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.as_str())
            }
        }
    };
}

vocabulary! {
    /// How strong the evidence of a bundle is (`evidenceClassClaim`, `evidenceClass`).
    EvidenceClass {
        GenuineRuntime = "GENUINE_RUNTIME",
        FixtureBackedProtocol = "FIXTURE_BACKED_PROTOCOL",
        FixtureVerified = "FIXTURE_VERIFIED",
        InstallationVerified = "INSTALLATION_VERIFIED",
        DocumentedOnly = "DOCUMENTED_ONLY",
    }
}

vocabulary! {
    /// What was tested (`subject.subjectType`, `subjectType`).
    SubjectType {
        McpServer = "MCP_SERVER",
        McpClient = "MCP_CLIENT",
        AgentRuntime = "AGENT_RUNTIME",
        GatewayProxy = "GATEWAY_PROXY",
        Adapter = "ADAPTER",
        TransportImplementation = "TRANSPORT_IMPLEMENTATION",
        TestHarness = "TEST_HARNESS",
    }
}

vocabulary! {
    /// What an operation of the experiment was (`operations[].kind`).
    OperationKind {
        CleanControl = "CLEAN_CONTROL",
        FaultCase = "FAULT_CASE",
        NegativeControl = "NEGATIVE_CONTROL",
        RecoveryAttempt = "RECOVERY_ATTEMPT",
    }
}

vocabulary! {
    /// How an operation ended (`operations[].outcome`).
    OperationOutcome {
        Pass = "PASS",
        ExpectedFailure = "EXPECTED_FAILURE",
        Fail = "FAIL",
        Cancelled = "CANCELLED",
        TimeLimit = "TIME_LIMIT",
    }
}

vocabulary! {
    /// An oracle's verdict on one input (`negativeObservation.expectedVerdict`, `observedVerdict`).
    Verdict {
        Pass = "PASS",
        Reject = "REJECT",
        Fail = "FAIL",
        Incomplete = "INCOMPLETE",
    }
}

vocabulary! {
    /// What an observation saw (`observations[].type`).
    ObservationType {
        ProcessExecution = "PROCESS_EXECUTION",
        ProtocolExchange = "PROTOCOL_EXCHANGE",
        FixtureExecution = "FIXTURE_EXECUTION",
        InstallationExecution = "INSTALLATION_EXECUTION",
        FilesystemEffect = "FILESYSTEM_EFFECT",
        ValidatorCheck = "VALIDATOR_CHECK",
        PrivacyScan = "PRIVACY_SCAN",
        CleanupCheck = "CLEANUP_CHECK",
        RegressionExecution = "REGRESSION_EXECUTION",
        TransportEvent = "TRANSPORT_EVENT",
        AuthorizationEvent = "AUTHORIZATION_EVENT",
        CacheEvent = "CACHE_EVENT",
    }
}

vocabulary! {
    /// Whether an observation is bound to bytes in the bundle (`observations[].strength`).
    Strength {
        IntegrityBound = "INTEGRITY_BOUND",
        LegacySelfAsserted = "LEGACY_SELF_ASSERTED",
    }
}

vocabulary! {
    /// How an observation ended (`observations[].outcome`).
    ObservationOutcome {
        Pass = "PASS",
        Fail = "FAIL",
        Incomplete = "INCOMPLETE",
        NotObserved = "NOT_OBSERVED",
    }
}

vocabulary! {
    /// The 14 observation surfaces every coverage record lists exactly once.
    Surface {
        McpWireMessages = "MCP_WIRE_MESSAGES",
        RawHttpRequests = "RAW_HTTP_REQUESTS",
        RawHttpResponses = "RAW_HTTP_RESPONSES",
        StdioInputOutput = "STDIO_INPUT_OUTPUT",
        ChildProcessLifecycle = "CHILD_PROCESS_LIFECYCLE",
        TransportDisconnects = "TRANSPORT_DISCONNECTS",
        Retries = "RETRIES",
        FilesystemOutputs = "FILESYSTEM_OUTPUTS",
        Cleanup = "CLEANUP",
        GeneratedRegressionExecution = "GENERATED_REGRESSION_EXECUTION",
        AuthorizationRedirects = "AUTHORIZATION_REDIRECTS",
        TokenEndpoint = "TOKEN_ENDPOINT",
        CacheBehavior = "CACHE_BEHAVIOR",
        SourceEvidence = "SOURCE_EVIDENCE",
    }
}

vocabulary! {
    /// How a surface was watched (`coverage.surfaces[].status`).
    CoverageStatus {
        Instrumented = "INSTRUMENTED",
        ObservedIndirectly = "OBSERVED_INDIRECTLY",
        BypassedIntentionally = "BYPASSED_INTENTIONALLY",
        Uninstrumented = "UNINSTRUMENTED",
        Unknown = "UNKNOWN",
        NotApplicable = "NOT_APPLICABLE",
    }
}

vocabulary! {
    /// What repeated trials showed (`trialSummary.classification`, `stabilityClassification`).
    Stability {
        SingleObservation = "SINGLE_OBSERVATION",
        RepeatedStable = "REPEATED_STABLE",
        Flaky = "FLAKY",
        Incomplete = "INCOMPLETE",
        EnvironmentDependent = "ENVIRONMENT_DEPENDENT",
    }
}

vocabulary! {
    /// The statement's verdict (`result`).
    Outcome {
        Pass = "PASS",
        Fail = "FAIL",
        Incomplete = "INCOMPLETE",
    }
}

vocabulary! {
    /// What the operations of an experiment may change (`descriptor.sideEffectModel`).
    SideEffectModel {
        ReadOnly = "READ_ONLY",
        Idempotent = "IDEMPOTENT",
        SideEffecting = "SIDE_EFFECTING",
        Unknown = "UNKNOWN",
    }
}

vocabulary! {
    /// The language a profile-evaluation subject is written in (`subject.implementationLanguage`).
    ImplementationLanguage {
        TypeScript = "TYPESCRIPT",
        Python = "PYTHON",
        Other = "OTHER",
    }
}

vocabulary! {
    /// The operating system an evaluation ran on (`environment.platform`).
    Platform {
        Linux = "linux",
        Windows = "win32",
        Darwin = "darwin",
    }
}

vocabulary! {
    /// The runtime an evaluation ran under (`environment.runtimeName`).
    RuntimeName {
        Node = "node",
        Python = "python",
        Other = "other",
    }
}

vocabulary! {
    /// A protocol revision a profile or OAuth-boundary evaluation is bound to.
    ProtocolRevision {
        R2025_11_25 = "2025-11-25",
        R2026_07_28 = "2026-07-28",
    }
}

vocabulary! {
    /// What a profile evaluation claims to cover (`scope.claim`).
    ClaimScope {
        FullProfile = "FULL_PROFILE",
        BoundedCheckSet = "BOUNDED_CHECK_SET",
    }
}

vocabulary! {
    /// Where the evaluated target ran (`scope.targetKind`).
    TargetKind {
        LocalStdio = "LOCAL_STDIO",
        LoopbackHttp = "LOOPBACK_HTTP",
        OfflineModel = "OFFLINE_MODEL",
        RemoteHttp = "REMOTE_HTTP",
    }
}

vocabulary! {
    /// Where a check observation came from (`checks[].positive.source`).
    ObservationSource {
        RuntimeProbe = "RUNTIME_PROBE",
        SanitizedOfficialOutput = "SANITIZED_OFFICIAL_OUTPUT",
        TestFixture = "TEST_FIXTURE",
    }
}

vocabulary! {
    /// What a probe did or was expected to do (`expectedOutcome`: the first four;
    /// `observedOutcome`: also `NOT_OBSERVED`).
    ProbeOutcome {
        Accept = "ACCEPT",
        Reject = "REJECT",
        Terminate = "TERMINATE",
        NoEffect = "NO_EFFECT",
        NotObserved = "NOT_OBSERVED",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;

    /// The enum list at `pointer` of the embedded schema `file`.
    fn schema_enum(file: &str, pointer: &str) -> Vec<String> {
        let path = format!("{}/schemas/{file}", env!("CARGO_MANIFEST_DIR"));
        let doc: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        doc.pointer(pointer)
            .and_then(Value::as_array)
            .unwrap_or_else(|| panic!("{file}{pointer} is no enum"))
            .iter()
            .map(|v| v.as_str().unwrap().to_string())
            .collect()
    }

    #[test]
    fn every_vocabulary_matches_its_schema_enum_in_order() {
        const P: &str = "profile-evaluation.schema.json";
        let cases: [(&[&str], &str, &str); 21] = [
            (
                EvidenceClass::NAMES,
                "evidence-envelope.schema.json",
                "/$defs/evidenceClass/enum",
            ),
            (
                SubjectType::NAMES,
                "evidence-envelope.schema.json",
                "/$defs/subjectType/enum",
            ),
            (
                OperationKind::NAMES,
                "evidence-envelope.schema.json",
                "/$defs/operation/properties/kind/enum",
            ),
            (
                OperationOutcome::NAMES,
                "evidence-envelope.schema.json",
                "/$defs/operation/properties/outcome/enum",
            ),
            (
                Verdict::NAMES,
                "evidence-envelope.schema.json",
                "/$defs/verdict/enum",
            ),
            (
                SideEffectModel::NAMES,
                "evidence-envelope.schema.json",
                "/$defs/sideEffectModel/enum",
            ),
            (
                ObservationType::NAMES,
                "observation.schema.json",
                "/$defs/observationType/enum",
            ),
            (
                Strength::NAMES,
                "observation.schema.json",
                "/properties/strength/enum",
            ),
            (
                ObservationOutcome::NAMES,
                "observation.schema.json",
                "/properties/outcome/enum",
            ),
            (
                Surface::NAMES,
                "observation-coverage.schema.json",
                "/$defs/surface/enum",
            ),
            (
                CoverageStatus::NAMES,
                "observation-coverage.schema.json",
                "/$defs/instrumentationStatus/enum",
            ),
            (
                Stability::NAMES,
                "trial-summary.schema.json",
                "/properties/classification/enum",
            ),
            (
                Outcome::NAMES,
                "conformance-statement.schema.json",
                "/properties/result/enum",
            ),
            (
                ImplementationLanguage::NAMES,
                P,
                "/properties/subject/properties/implementationLanguage/enum",
            ),
            (
                Platform::NAMES,
                P,
                "/properties/environment/properties/platform/enum",
            ),
            (
                RuntimeName::NAMES,
                P,
                "/properties/environment/properties/runtimeName/enum",
            ),
            (
                ProtocolRevision::NAMES,
                P,
                "/properties/profile/properties/protocolRevision/enum",
            ),
            (
                ClaimScope::NAMES,
                P,
                "/properties/scope/properties/claim/enum",
            ),
            (
                TargetKind::NAMES,
                P,
                "/properties/scope/properties/targetKind/enum",
            ),
            (
                ObservationSource::NAMES,
                P,
                "/$defs/checkObservation/properties/source/enum",
            ),
            (
                ProbeOutcome::NAMES,
                P,
                "/$defs/checkObservation/properties/observedOutcome/enum",
            ),
        ];
        for (names, file, pointer) in cases {
            assert_eq!(
                names,
                schema_enum(file, pointer).as_slice(),
                "{file}{pointer}"
            );
        }
        assert_eq!(SURFACES.len(), 14);
        // An expected outcome is an observed one that was observed.
        let expected = schema_enum(P, "/$defs/checkObservation/properties/expectedOutcome/enum");
        assert_eq!(&ProbeOutcome::NAMES[..4], expected.as_slice());
    }

    #[test]
    fn values_round_trip_through_text_and_serde() {
        for s in Surface::ALL {
            assert_eq!(Surface::parse(s.as_str()), Some(*s));
            let json = serde_json::to_value(s).unwrap();
            assert_eq!(json, Value::String(s.to_string()));
            assert_eq!(serde_json::from_value::<Surface>(json).unwrap(), *s);
        }
        assert_eq!(Verdict::parse("pass"), None);
        assert!(serde_json::from_value::<OperationKind>(Value::from("BOGUS")).is_err());
    }
}
