//! The diagnostics table: one entry per code (see the parent module).

use super::Explanation;

diagnostics! {
    /// Reading and canonical JSON (every family).
    Input {
        InputInvalid INPUT_INVALID "MCP_RES_INPUT_INVALID" {
            rule: "MCP-RES v0.2 §8",
            title: "Unreadable or unusable input",
            meaning: "The input could not be read as a document, so no rule was evaluated (exit code 2). Causes: the path is missing, a symlink or not a regular file; more than 16 MiB; not strict UTF-8; a leading byte order mark; malformed JSON; a duplicate key; trailing data; nesting, node or string limits exceeded; a lone surrogate or a number that is not a plain safe integer; or a document kind mcpres does not know.",
            example: "A file holding {\"a\":1,\"a\":2} (duplicate key), or one that starts with the bytes EF BB BF.",
            fix: "Write the document with a strict JSON encoder: UTF-8 without BOM, unique keys, integers only, within the documented limits. Pass the real file, not a link to it.",
        }
        InvalidUnicode INVALID_UNICODE "MCP_RES_INVALID_UNICODE" {
            rule: "MCP-RES v0.2 §8",
            title: "Lone UTF-16 surrogate",
            meaning: "A string holds an unpaired surrogate code unit, which has no UTF-8 form and therefore no canonical bytes or digest. The strict reader refuses such a document: the result is MCP_RES_INPUT_INVALID (exit 2) and the message names this code.",
            example: "A key or value written as \"\\ud800\" with no low surrogate after it.",
            fix: "Emit well-formed Unicode. A character above U+FFFF is either written literally in UTF-8 or escaped as a complete high and low surrogate pair.",
        }
        NonCanonicalNumber NON_CANONICAL_NUMBER "MCP_RES_NON_CANONICAL_NUMBER" {
            rule: "MCP-RES v0.2 §8",
            title: "Number outside the canonical set",
            meaning: "mcp-res-json-utf16-v1 admits only integers of magnitude at most 2^53-1, written without fraction or exponent. Any other number (1.0, 1e2, 9007199254740992) would not hash the same everywhere. The strict reader refuses it: the result is MCP_RES_INPUT_INVALID (exit 2) and the message names this code.",
            example: "{\"attempt\":1.0} or {\"seed\":9007199254740992}",
            fix: "Write integers in plain decimal. Carry larger identifiers, seeds or fractional values as strings.",
        }
    }
    /// v0.2 conformance bundle (reference `lib.mjs` DIAGNOSTICS), in reference rule order.
    Core {
        SelfAssertedClaim SELF_ASSERTED_CLAIM "MCP_RES_SELF_ASSERTED_CLAIM" {
            rule: "MCPRES-OBS-002",
            title: "Producer-asserted boolean",
            meaning: "The evidence carries a producer-written claim that v0.2 only derives from observations: a key actualRuntime, protocolMessagesExchanged, privacyScanPassed or cleanupCompleted at any depth, or the v0.1 shapes execution.{actualRuntime, protocolMessagesExchanged, installationExecuted, regressionExecuted}, privacy.scanPassed and cleanup.complete. This check runs before the schema.",
            example: "\"evidence\": {\"execution\": {\"actualRuntime\": true}, ...}",
            fix: "Delete the boolean. Record a PROCESS_EXECUTION, PROTOCOL_EXCHANGE, PRIVACY_SCAN or CLEANUP_CHECK observation bound to an artifact instead. Convert v0.1 bundles with mcpres migrate, not by hand.",
        }
        VacuousNegativeControl VACUOUS_NEGATIVE_CONTROL "MCP_RES_VACUOUS_NEGATIVE_CONTROL" {
            rule: "MCPRES-NEG-002; v0.1: MCPRES-NEG-001",
            title: "Negative control proves nothing",
            meaning: "v0.2: there is no NEGATIVE_CONTROL operation, one has no negativeObservation, or its observedVerdict differs from its expectedVerdict, so no broken case demonstrably failed. v0.1: there is no NEGATIVE_CONTROL, or it is not EXPECTED_FAILURE, or it names no fault.",
            example: "A NEGATIVE_CONTROL whose negativeObservation has \"expectedVerdict\":\"REJECT\" and \"observedVerdict\":\"PASS\".",
            fix: "Add a negative control that injects a real fault, and record its negativeObservation with the verdict the oracle actually saw.",
        }
        NegativePrerequisiteMissing NEGATIVE_PREREQUISITE_MISSING "MCP_RES_NEGATIVE_PREREQUISITE_MISSING" {
            rule: "MCPRES-NEG-002",
            title: "Negative control prerequisites missing",
            meaning: "A negative control's prerequisitesReached is absent, not an array, or empty, so nothing shows that the run got far enough to exercise the property under test.",
            example: "\"negativeObservation\": {\"prerequisitesReached\": [], ...}",
            fix: "List the prerequisite steps the negative case reached (for example initialize-complete, tool-listed), and make the harness actually reach them before the fault.",
        }
        PropertyNotReached PROPERTY_NOT_REACHED "MCP_RES_PROPERTY_NOT_REACHED" {
            rule: "MCPRES-NEG-002",
            title: "Target property not reached",
            meaning: "A negative control's propertyReached is not exactly true (false, \"UNKNOWN\" or absent): the case was rejected before the property under test, for example by an earlier version or syntax guard.",
            example: "\"negativeObservation\": {\"propertyReached\": \"UNKNOWN\", ...}",
            fix: "Build the negative input so that it passes every earlier guard and is rejected by the property itself; set propertyReached to true only when the oracle shows that.",
        }
        WrongStopReason WRONG_STOP_REASON "MCP_RES_WRONG_STOP_REASON" {
            rule: "MCPRES-NEG-002",
            title: "Negative control failed for another reason",
            meaning: "observedStopReason differs from expectedStopReason: the broken case failed, but not for the reason the control is about. Verdict equality alone does not count.",
            example: "\"expectedStopReason\": \"AUDIENCE_MISMATCH\", \"observedStopReason\": \"MALFORMED_TOKEN\"",
            fix: "Fix the control or the subject so the rejection happens at the intended check, and record the exact stop reason the oracle observed.",
        }
        NegativeMutantSurvived NEGATIVE_MUTANT_SURVIVED "MCP_RES_NEGATIVE_MUTANT_SURVIVED" {
            rule: "MCPRES-NEG-002",
            title: "Declared mutant survived",
            meaning: "A negative control names a mutantId but mutantKilled is not true: the deliberately broken implementation was not detected.",
            example: "\"mutantId\": \"skip-audience-check\", \"mutantKilled\": false",
            fix: "Strengthen the oracle until it kills the mutant, or drop the mutation claim. Never set mutantKilled without a run that shows it.",
        }
        SchemaInvalid SCHEMA_INVALID "MCP_RES_SCHEMA_INVALID" {
            rule: "MCP-RES v0.2 §3-§8; v0.1: CONFORMANCE step 3",
            title: "Schema violation",
            meaning: "The document does not match the closed JSON Schema 2020-12 schemas: an unknown key, a missing field, a wrong type, or a pattern, enum, range or format failure. schemaErrors lists each violation with its JSON pointer. For a v0.1 bundle the v0.1 schemas apply.",
            example: "An extra key \"notes\" inside evidence.run, or \"monotonicDurationMs\": -1.",
            fix: "Produce the document from the schemas: remove unknown keys, supply required fields, use the enumerated values. mcpres validate --format json lists every pointer.",
        }
        ScenarioFingerprintMismatch SCENARIO_FINGERPRINT_MISMATCH "MCP_RES_SCENARIO_FINGERPRINT_MISMATCH" {
            rule: "MCPRES-ID-003",
            title: "Scenario fingerprint mismatch",
            meaning: "scenario.fingerprint is not the SHA-256 of the canonical scenario.descriptor, or the descriptor's standardVersion, profileId, profileVersion, protocolRevision or subjectIdentityDigest differs from the same field of the evidence.",
            example: "The descriptor's deterministicSeed was changed after the fingerprint was computed.",
            fix: "Finish the descriptor first, then set fingerprint = sha256(canonical descriptor); copy the versions and subject digest from the evidence, never retype them.",
        }
        WallClockReversal WALL_CLOCK_REVERSAL "MCP_RES_WALL_CLOCK_REVERSAL" {
            rule: "MCP-RES v0.2 §7",
            title: "Impossible run timing",
            meaning: "run.finishedAt is earlier than run.startedAt, or run.monotonicDurationMs is longer than the wall-clock interval between them.",
            example: "startedAt \"2026-08-27T12:00:01Z\", finishedAt \"2026-08-27T12:00:00Z\"; or a one-second interval with monotonicDurationMs 1500.",
            fix: "Read both timestamps from the same clock at run start and end, and measure the monotonic duration inside that interval.",
        }
        CausalMismatch CAUSAL_MISMATCH "MCP_RES_CAUSAL_MISMATCH" {
            rule: "MCP-RES v0.2 §7, §8; v0.1: MCPRES-CAUSE-001",
            title: "Broken causal or statement binding",
            meaning: "Operations: an operationId repeats, a parentOperationId, faultId or recoveryPolicyId does not resolve (faults and policies come from the scenario descriptor), or an operation ends after the run. Statement: its versions, subject, scenario fingerprint, stability classification, evidenceSha256 or validator (which must equal descriptor.validatorPolicy) disagree with the evidence. v0.1: run, parent, fault or policy references, or the statement-to-envelope binding, differ.",
            example: "An operation with \"faultId\": \"fault-9\" when the descriptor only defines fault-1.",
            fix: "Generate identifiers once and reference them; derive every statement field from the evidence instead of writing it separately.",
        }
        CrossRunSubstitution CROSS_RUN_SUBSTITUTION "MCP_RES_CROSS_RUN_SUBSTITUTION" {
            rule: "MCPRES-ID-004",
            title: "Operation from another run",
            meaning: "An operation's runId differs from run.id: an operation recorded in a different run was reused in this evidence.",
            example: "run.id \"run-v02-0002\" with an operation whose runId is \"run-v02-0001\".",
            fix: "Record operations afresh in every run; never copy operations or observations between bundles.",
        }
        RetryLimitExceeded RETRY_LIMIT_EXCEEDED "MCP_RES_RETRY_LIMIT_EXCEEDED" {
            rule: "MCP-RES v0.2 §7",
            title: "Retry attempt above policy limit",
            meaning: "An operation's attempt number is greater than the retryLimit of the recovery policy it references.",
            example: "A policy with retryLimit 2 and an operation using it with attempt 3.",
            fix: "Make the harness stop at the policy limit, or declare the limit that was really applied.",
        }
        OperationParentCycle OPERATION_PARENT_CYCLE "MCP_RES_OPERATION_PARENT_CYCLE" {
            rule: "MCP-RES v0.2 §7",
            title: "Parent operations form a cycle",
            meaning: "Following parentOperationId links from some operation returns to an operation already visited, so the causal structure is not a tree.",
            example: "op-a has parentOperationId \"op-b\" and op-b has parentOperationId \"op-a\".",
            fix: "Give an operation only an earlier, already started parent; root operations have parentOperationId null.",
        }
        ObservationCausalMismatch OBSERVATION_CAUSAL_MISMATCH "MCP_RES_OBSERVATION_CAUSAL_MISMATCH" {
            rule: "MCPRES-OBS-001",
            title: "Observation not bound to this run",
            meaning: "An observation id repeats, its subjectRef is not subject.identityDigest, its operationRef names no operation, or it ends after the run; or a negative control's oracleEvidenceRef is not carried by a VALIDATOR_CHECK observation of that same negative control.",
            example: "The VALIDATOR_CHECK observation that carries the oracle artifact has the clean control as its operationRef.",
            fix: "Bind every observation to this subject and operation when it is recorded; record the oracle check against the negative control it judges.",
        }
        MissingObservationArtifact MISSING_OBSERVATION_ARTIFACT "MCP_RES_MISSING_OBSERVATION_ARTIFACT" {
            rule: "MCPRES-OBS-001",
            title: "Referenced artifact not in the manifest",
            meaning: "An observation's artifactRefs entry, or a negative control's oracleEvidenceRef, has no entry in integrity.artifacts.",
            example: "artifactRefs [\"observations/obs-process.json\"] while the manifest has no such path.",
            fix: "List every referenced artifact in the integrity manifest with its byte length and SHA-256, and write the manifest last.",
        }
        ObservationHashMismatch OBSERVATION_HASH_MISMATCH "MCP_RES_OBSERVATION_HASH_MISMATCH" {
            rule: "MCPRES-OBS-001",
            title: "Observation digest not bound",
            meaning: "observationSha256 is not the SHA-256 of the canonical observation without that key, or none of the artifacts the observation references has that digest together with the canonical byte length and media type application/vnd.mcp-res.observation+json.",
            example: "An observation's outcome was changed from \"FAIL\" to \"PASS\" after it was hashed.",
            fix: "Compute observationSha256 over the final observation and store those canonical bytes as observations/<id>.json, listed in the manifest.",
        }
        RequiredSurfaceUnobserved REQUIRED_SURFACE_UNOBSERVED "MCP_RES_REQUIRED_SURFACE_UNOBSERVED" {
            rule: "MCPRES-COV-001",
            title: "Required surface not observed",
            meaning: "coverage.surfaces does not name each of the 14 surfaces exactly once, or a required surface is UNINSTRUMENTED or UNKNOWN, or is INSTRUMENTED or OBSERVED_INDIRECTLY without observationRefs that all name observations of this evidence.",
            example: "{\"surface\": \"STDIO_INPUT_OUTPUT\", \"required\": true, \"status\": \"INSTRUMENTED\", \"observationRefs\": []}",
            fix: "Instrument the surface and reference the observations that cover it, or mark it not required with an honest status.",
        }
        TrialSummaryInconsistent TRIAL_SUMMARY_INCONSISTENT "MCP_RES_TRIAL_SUMMARY_INCONSISTENT" {
            rule: "MCPRES-TRIAL-001",
            title: "Trial summary does not add up",
            meaning: "The success, failure and incomplete counts do not sum to completedTrials; completed exceeds planned; the number of seeds differs from completed trials; completed trials lack outcome hashes or durations; durations are not minimum <= median <= p95; SINGLE_OBSERVATION does not have exactly one completed trial; or INCOMPLETE is claimed for a finished series with no incomplete trial.",
            example: "\"completedTrials\": 3 with counts {\"success\": 2, \"failure\": 0, \"incomplete\": 0}.",
            fix: "Compute the summary from the recorded trials instead of writing the numbers by hand.",
        }
        FalseStabilityClaim FALSE_STABILITY_CLAIM "MCP_RES_FALSE_STABILITY_CLAIM" {
            rule: "MCPRES-TRIAL-001",
            title: "Stability overclaimed",
            meaning: "REPEATED_STABLE is claimed without at least two completed trials that all succeeded and share exactly one distinct outcome hash.",
            example: "\"classification\": \"REPEATED_STABLE\" with \"completedTrials\": 1.",
            fix: "Run at least two seeded trials and claim REPEATED_STABLE only when all succeed with one outcome hash; otherwise use SINGLE_OBSERVATION or FLAKY.",
        }
        EvidenceClassPromotion EVIDENCE_CLASS_PROMOTION "MCP_RES_EVIDENCE_CLASS_PROMOTION" {
            rule: "MCPRES-OBS-002; v0.1: MCP-RES v0.1 §4",
            title: "Evidence class not supported",
            meaning: "v0.2: evidenceClassClaim or statement.evidenceClass differs from the class derived from passing INTEGRITY_BOUND observations (GENUINE_RUNTIME needs PROCESS_EXECUTION, PROTOCOL_EXCHANGE and non-empty sourceEvidenceRefs all in the manifest; then FIXTURE_BACKED_PROTOCOL, FIXTURE_VERIFIED, INSTALLATION_VERIFIED, DOCUMENTED_ONLY). v0.1: the execution fields do not support the asserted class.",
            example: "\"evidenceClassClaim\": \"GENUINE_RUNTIME\" with no sourceEvidenceRefs.",
            fix: "Claim exactly the derived class. To earn a stronger one, record and bind the missing observations and source evidence.",
        }
        CompletionUnobserved COMPLETION_UNOBSERVED "MCP_RES_COMPLETION_UNOBSERVED" {
            rule: "MCPRES-OBS-002",
            title: "PASS without cleanup and privacy evidence",
            meaning: "statement.result is PASS but there is no passing INTEGRITY_BOUND CLEANUP_CHECK observation or no passing INTEGRITY_BOUND PRIVACY_SCAN observation.",
            example: "A PASS bundle whose only PRIVACY_SCAN observation has outcome FAIL.",
            fix: "Run the cleanup check and the privacy scan and record them as observations; report INCOMPLETE or FAIL until both pass.",
        }
        DigestMismatch DIGEST_MISMATCH "MCP_RES_DIGEST_MISMATCH" {
            rule: "MCP-RES v0.2 §8; v0.1: MCPRES-INT-001",
            title: "Integrity digest mismatch",
            meaning: "A manifest path occurs twice; supportingArtifactManifestDigest is wrong; the evidence-envelope.json or conformance-statement.json entry lacks the canonical byte length and SHA-256 of the evidence or statement; or bundleDigest is not the SHA-256 of {\"artifacts\": all artifacts sorted by path}. v0.1: an evidence, statement, artifact or bundle digest differs.",
            example: "The evidence was edited after the manifest was written, so its manifest entry holds the old digest.",
            fix: "Seal the bundle last: compute every entry from the final canonical bytes, then bundleDigest. Never edit a sealed bundle.",
        }
        ExecutionDigestMismatch EXECUTION_DIGEST_MISMATCH "MCP_RES_EXECUTION_DIGEST_MISMATCH" {
            rule: "MCPRES-ID-004",
            title: "Execution instance digest mismatch",
            meaning: "statement.executionInstanceDigest is not the SHA-256 of {scenarioFingerprint, run, observationDigests, actualOutcome, supportingArtifactManifestDigest} computed from this evidence, with actualOutcome = statement.result.",
            example: "statement.result was changed from \"FAIL\" to \"PASS\" without recomputing the digest.",
            fix: "Compute the execution digest after the run record, the observations, the supporting manifest and the result are final.",
        }
    }
    /// v0.2 conformance bundle: mcpres's own last rule (spec/conformance.md).
    CoreOwn {
        ResultContradictsEvidence RESULT_CONTRADICTS_EVIDENCE "MCP_RES_RESULT_CONTRADICTS_EVIDENCE" {
            rule: "MCPRES-RESULT-001",
            title: "PASS contradicted by the evidence",
            meaning: "mcpres's own rule, run after every reference rule: the statement says PASS, but the bundle's own evidence shows a failure. A CLEAN_CONTROL operation failed; a FAULT_CASE failed and was neither recovered (its last RECOVERY_ATTEMPT passed) nor, under a recovery policy, confirmed by a passing VALIDATOR_CHECK as stopping where the policy declares; the last attempt of a recovery failed without such a confirmation; an integrity-bound observation failed that is a CLEANUP_CHECK or PRIVACY_SCAN beside a passing one, a VALIDATOR_CHECK of a FAULT_CASE or RECOVERY_ATTEMPT, or, unless it belongs to a NEGATIVE_CONTROL, FAULT_CASE or RECOVERY_ATTEMPT operation, a PROCESS_EXECUTION or PROTOCOL_EXCHANGE, an observation of the clean control or one named by a required coverage surface; or the trial summary has no successful trial or any failed one. Both reference validators accept such a bundle; MCPRES-OBS-001 does not.",
            example: "A FAIL bundle whose statement.result was rewritten to \"PASS\" and whose digests were all recomputed: its clean control still has \"outcome\": \"FAIL\" and its trial summary \"counts\": {\"success\": 0, \"failure\": 1, \"incomplete\": 0}.",
            fix: "State the result the run observed (FAIL or INCOMPLETE). If the failure was deliberate, bind its observation to the NEGATIVE_CONTROL or FAULT_CASE operation that caused it and record that operation's real outcome.",
        }
    }
    /// Bundle-directory form: mcpres's own codes (spec/bundle-layout.md).
    Directory {
        ArtifactPathInvalid ARTIFACT_PATH_INVALID "MCP_RES_ARTIFACT_PATH_INVALID" {
            rule: "MCPRES-DIR-001",
            title: "Unsafe artifact path",
            meaning: "A manifest path is not a safe relative path inside the bundle directory: it is absolute, has a . or .. segment, an empty segment, a backslash or NUL, a character outside A-Z a-z 0-9 . _ / -, more than 256 characters, names integrity-manifest.json, or resolves on disk to a symlink or non-regular file (a symlinked directory on the way included).",
            example: "\"path\": \"observations/../../etc/passwd\", or raw/log.txt where raw is a symlink.",
            fix: "Use plain relative paths made of safe segments, and store artifacts as regular files in real directories.",
        }
        ArtifactPathCollision ARTIFACT_PATH_COLLISION "MCP_RES_ARTIFACT_PATH_COLLISION" {
            rule: "MCPRES-DIR-002",
            title: "Artifact paths collide",
            meaning: "Two manifest entries have paths that are equal after ASCII case folding (exact duplicates included), so on a case-insensitive file system they would be the same file.",
            example: "\"raw/Trace.jsonl\" and \"raw/trace.jsonl\" in one manifest.",
            fix: "Give every artifact a path that is unique regardless of letter case.",
        }
        ArtifactMissing ARTIFACT_MISSING "MCP_RES_ARTIFACT_MISSING" {
            rule: "MCPRES-DIR-003",
            title: "Listed artifact absent",
            meaning: "A manifest entry has no file at its path in the bundle directory (or, for unpack, its bytes are neither carried by the single file nor found under --raw-from).",
            example: "The manifest lists raw/http-exchanges.jsonl but the directory has no such file.",
            fix: "Copy the complete bundle directory, or supply the raw artifacts with --raw-from.",
        }
        ArtifactDigestMismatch ARTIFACT_DIGEST_MISMATCH "MCP_RES_ARTIFACT_DIGEST_MISMATCH" {
            rule: "MCPRES-DIR-004",
            title: "Artifact bytes differ from the manifest",
            meaning: "The bytes stored at a manifest path do not have the byte length or the SHA-256 the manifest records for it.",
            example: "raw/stdio-client-to-server.bin was truncated in transit: 4096 bytes on disk, 8192 in the manifest.",
            fix: "Restore the original bytes; if the artifact really changed, regenerate and reseal the bundle.",
        }
        ArtifactNonCanonical ARTIFACT_NON_CANONICAL "MCP_RES_ARTIFACT_NON_CANONICAL" {
            rule: "MCPRES-DIR-005",
            title: "JSON artifact not canonical",
            meaning: "A JSON artifact (media type application/json or ending in +json, and integrity-manifest.json itself) is not stored in mcp-res-json-utf16-v1 canonical form, or is not readable by the strict reader at all.",
            example: "evidence-envelope.json saved pretty-printed with two-space indentation.",
            fix: "Write JSON artifacts with the canonical writer (mcpres unpack does); never reformat them.",
        }
        ArtifactUnlisted ARTIFACT_UNLISTED "MCP_RES_ARTIFACT_UNLISTED" {
            rule: "MCPRES-DIR-006",
            title: "File not in the manifest",
            meaning: "The bundle directory contains an entry (file, symlink, empty directory or other) that no manifest path accounts for. integrity-manifest.json itself is exempt.",
            example: "An editor backup evidence-envelope.json~ or a .DS_Store file next to the artifacts.",
            fix: "Remove stray files, or list the artifact in the manifest and reseal the bundle.",
        }
    }
    /// Attested bundle: authenticity and trust (AUTHENTICITY.md).
    Attested {
        AttestationSignatureMissing ATTESTATION_SIGNATURE_MISSING "MCP_RES_ATTESTATION_SIGNATURE_MISSING" {
            rule: "MCPRES-AUTHN-003",
            title: "No signature",
            meaning: "An envelope has no signatures (absent, empty or not an array), or the wrapper has no envelopes while claiming more than UNSIGNED_INTEGRITY_ONLY.",
            example: "\"claimedClassification\": \"SIGNED\", \"envelopes\": []",
            fix: "Sign the bundle with mcpres sign --key, or claim UNSIGNED_INTEGRITY_ONLY.",
        }
        AttestationAlgorithmUnsupported ATTESTATION_ALGORITHM_UNSUPPORTED "MCP_RES_ATTESTATION_ALGORITHM_UNSUPPORTED" {
            rule: "MCPRES-AUTHN-003",
            title: "Algorithm other than Ed25519",
            meaning: "A signature entry's algorithm, or the signed statement's predicate.signatureAlgorithm, is not Ed25519. v0.2 supports Ed25519 only and never guesses another algorithm.",
            example: "\"algorithm\": \"ES256\"",
            fix: "Sign with an Ed25519 key (mcpres keygen creates one).",
        }
        AttestationSchemaInvalid ATTESTATION_SCHEMA_INVALID "MCP_RES_ATTESTATION_SCHEMA_INVALID" {
            rule: "MCPRES-AUTHN-003",
            title: "Malformed attestation",
            meaning: "The attested wrapper, the supplied trust policy or the signed in-toto statement does not match its schema, or the decoded payload is not exactly the canonical mcp-res-json-utf16-v1 bytes of a JSON statement.",
            example: "An envelope whose payload is the pretty-printed statement instead of its canonical bytes.",
            fix: "Sign the canonical bytes of the statement and follow the wrapper and trust-policy schemas.",
        }
        AttestedEvidenceInvalid ATTESTED_EVIDENCE_INVALID "MCP_RES_ATTESTED_EVIDENCE_INVALID" {
            rule: "MCPRES-AUTHN-001",
            title: "Signed evidence is invalid",
            meaning: "The conformance bundle inside the wrapper fails core validation; a signature never repairs invalid evidence. diagnostics holds this code followed by the bundle's own primary diagnostic.",
            example: "A wrapper around a bundle with a stale bundleDigest gives [\"MCP_RES_ATTESTED_EVIDENCE_INVALID\", \"MCP_RES_DIGEST_MISMATCH\"].",
            fix: "Fix the bundle as the second diagnostic says, reseal it, and sign again.",
        }
        AuthenticityClassificationOverclaim AUTHENTICITY_CLASSIFICATION_OVERCLAIM "MCP_RES_AUTHENTICITY_CLASSIFICATION_OVERCLAIM" {
            rule: "MCPRES-AUTHN-002",
            title: "Authenticity overclaimed",
            meaning: "claimedClassification is stronger than the level the validator derives (for example WITNESSED with only one trusted key, or TRANSPARENCY_RECORDED without a transparency reference), or UNSIGNED_INTEGRITY_ONLY is claimed while envelopes are present.",
            example: "\"claimedClassification\": \"WITNESSED\" with a single trusted signature.",
            fix: "Claim the derived level or a lower one; add distinct trusted signers or a transparency reference to earn a higher one.",
        }
        TrustPolicyExpired TRUST_POLICY_EXPIRED "MCP_RES_TRUST_POLICY_EXPIRED" {
            rule: "MCPRES-AUTHN-002",
            title: "Trust policy not valid at that time",
            meaning: "The evaluation time lies outside the trust policy's validFrom..validUntil window, or a signature's signingTime lies outside that window or after the evaluation time.",
            example: "A policy with \"validUntil\": \"2026-01-01T00:00:00Z\" evaluated with --at 2026-08-27T00:00:00Z.",
            fix: "Use a current trust policy, or evaluate at the intended instant with --at; sign only while the policy is valid.",
        }
        AttestationDuplicateSigner ATTESTATION_DUPLICATE_SIGNER "MCP_RES_ATTESTATION_DUPLICATE_SIGNER" {
            rule: "MCPRES-AUTHN-002",
            title: "Duplicate or extra signer",
            meaning: "An envelope carries more than one signature, or two envelopes use the same key id. A key counts once, so repeating it cannot make a bundle WITNESSED.",
            example: "Two envelopes signed with the same Ed25519 key.",
            fix: "Use exactly one signature per envelope and a distinct key for every witness.",
        }
        AttestationSignatureInvalid ATTESTATION_SIGNATURE_INVALID "MCP_RES_ATTESTATION_SIGNATURE_INVALID" {
            rule: "MCPRES-AUTHN-003",
            title: "Signature does not verify",
            meaning: "The payload, public key or signature is not strict base64, the key is not a 32-byte Ed25519 SubjectPublicKeyInfo, or the signature over the DSSE pre-authentication encoding fails strict Ed25519 verification (small-order keys and non-canonical encodings are refused).",
            example: "One byte of the payload changed after signing.",
            fix: "Re-sign the unmodified payload; never re-encode the payload or the key after signing.",
        }
        AttestationIdentityMismatch ATTESTATION_IDENTITY_MISMATCH "MCP_RES_ATTESTATION_IDENTITY_MISMATCH" {
            rule: "MCPRES-AUTHN-002",
            title: "Signer or key identity mismatch",
            meaning: "keyid is not the SHA-256 of the public key's SPKI DER, the predicate's signerIdentity or signerKeyFingerprint differs from the signature entry, or predicate.trustPolicyId is not the id of the supplied trust policy.",
            example: "predicate.signerIdentity \"ci@example.org\" while the signature entry says \"release@example.org\".",
            fix: "Take keyid and identities from the signing key and the trust policy you will verify with; do not edit them afterwards.",
        }
        AttestationBindingMismatch ATTESTATION_BINDING_MISMATCH "MCP_RES_ATTESTATION_BINDING_MISMATCH" {
            rule: "MCPRES-AUTHN-003",
            title: "Statement binds other evidence",
            meaning: "The signed statement's subject name or SHA-256, evidenceBundleDigest, scenarioFingerprint, executionInstanceDigest, profile or validator differ from the wrapped bundle.",
            example: "An envelope signed for one bundle attached to a different bundle.",
            fix: "Sign the statement generated from the exact bundle you publish.",
        }
        AttestationKeyRevoked ATTESTATION_KEY_REVOKED "MCP_RES_ATTESTATION_KEY_REVOKED" {
            rule: "MCPRES-AUTHN-002",
            title: "Signing key revoked",
            meaning: "The signature's key id is listed in the trust policy's revokedKeyFingerprints.",
            example: "A bundle signed with a key that the policy revoked after a leak.",
            fix: "Sign again with a current, trusted key.",
        }
        TransparencyReferenceInvalid TRANSPARENCY_REFERENCE_INVALID "MCP_RES_TRANSPARENCY_REFERENCE_INVALID" {
            rule: "MCPRES-AUTHN-003",
            title: "Bad transparency reference",
            meaning: "predicate.transparencyReference.inclusionProofBase64 is not strict base64, or the SHA-256 of the decoded proof differs from inclusionProofSha256.",
            example: "inclusionProofSha256 computed over the base64 text instead of the decoded bytes.",
            fix: "Embed the exact inclusion-proof bytes and their SHA-256, or omit the reference.",
        }
        AttestationUntrustedSigner ATTESTATION_UNTRUSTED_SIGNER "MCP_RES_ATTESTATION_UNTRUSTED_SIGNER" {
            rule: "MCPRES-AUTHN-002",
            title: "Signer not trusted",
            meaning: "SIGNED_WITH_IDENTITY or a stronger level is claimed, but no trust policy was supplied or some signature's key fingerprint and signer identity are not a trustedSigners entry.",
            example: "\"claimedClassification\": \"SIGNED_WITH_IDENTITY\" verified without --trust-policy.",
            fix: "Verify with the trust policy that lists the signer, or claim SIGNED.",
        }
    }
    /// v0.1 -> v0.2 migration result and the migrate command (MIGRATION.md).
    Migration {
        MigrationSchemaInvalid MIGRATION_SCHEMA_INVALID "MCP_RES_MIGRATION_SCHEMA_INVALID" {
            rule: "MCPRES-MIG-001",
            title: "Migration result malformed",
            meaning: "The mcp-res.migration-result/0.2.0 document does not match its schema; schemaErrors lists the violations.",
            example: "A migration result whose target.status is \"PASS\" (only INCOMPLETE is allowed).",
            fix: "Regenerate the result with mcpres migrate v0.1 instead of editing it.",
        }
        MigrationSourceInvalid MIGRATION_SOURCE_INVALID "MCP_RES_MIGRATION_SOURCE_INVALID" {
            rule: "MCPRES-MIG-001",
            title: "Embedded v0.1 bundle is invalid",
            meaning: "The originalBundle inside the migration result, or the input given to mcpres migrate, fails v0.1 validation; migration never launders invalid, secret-bearing or oversized evidence.",
            example: "An originalBundle whose evidence was edited after its v0.1 digests were computed.",
            fix: "Fix or regenerate the v0.1 bundle until mcpres validate accepts it, then migrate.",
        }
        MigrationDigestMismatch MIGRATION_DIGEST_MISMATCH "MCP_RES_MIGRATION_DIGEST_MISMATCH" {
            rule: "MCPRES-MIG-001",
            title: "Original evidence digest not preserved",
            meaning: "source.evidenceSha256 differs from the original bundle's statement.evidenceSha256, or report.preservedEvidenceSha256 differs from source.evidenceSha256.",
            example: "report.preservedEvidenceSha256 recomputed in a different way than the original statement.",
            fix: "Copy the original evidence digest unchanged into source and report.",
        }
        MigrationClassPromotion MIGRATION_CLASS_PROMOTION "MCP_RES_MIGRATION_CLASS_PROMOTION" {
            rule: "MCPRES-MIG-001",
            title: "Migration changed the evidence class",
            meaning: "target.evidenceClass or report.preservedEvidenceClass differs from the original v0.1 evidence class; migration preserves the class and never upgrades it.",
            example: "A FIXTURE_VERIFIED v0.1 bundle migrated with \"evidenceClass\": \"GENUINE_RUNTIME\".",
            fix: "Keep the original class; a stronger class needs a fresh v0.2 run.",
        }
        MigrationFabrication MIGRATION_FABRICATION "MCP_RES_MIGRATION_FABRICATION" {
            rule: "MCPRES-MIG-001",
            title: "Migration fabricated evidence",
            meaning: "The result claims what migration cannot produce: fabricatedEvidence is not false, authenticity is not UNSIGNED_INTEGRITY_ONLY, stability is not SINGLE_OBSERVATION, status is not INCOMPLETE, a legacy assertion is not LEGACY_SELF_ASSERTED, legacyAssertionCount is wrong, or the report's unresolvedRequirements differ from the target's. mcpres also requires the legacy assertions and unresolved requirements to be exactly those the embedded original bundle yields, so a flipped or invented assertion is caught.",
            example: "target.legacyAssertions containing {\"name\": \"actualRuntime\", \"value\": true, \"strength\": \"LEGACY_SELF_ASSERTED\"} while the original evidence says actualRuntime is false.",
            fix: "Mark every producer boolean LEGACY_SELF_ASSERTED and leave the gaps unresolved; run v0.2 afresh to close them.",
        }
        MigrationAlreadyV02 MIGRATION_ALREADY_V02 "MCP_RES_MIGRATION_ALREADY_V02" {
            rule: "MCPRES-MIG-001",
            title: "Input is already v0.2",
            meaning: "mcpres migrate v0.1 was given a v0.2 conformance bundle; there is nothing to migrate. (A valid migration result given as input is returned unchanged; an invalid one is refused with its own diagnostic.)",
            example: "mcpres migrate v0.1 --input bundle.json -o new.json where bundle.json has schemaVersion mcp-res.conformance-bundle/0.2.0.",
            fix: "Validate the v0.2 bundle directly with mcpres validate.",
        }
        MigrationSourceVersionUnsupported MIGRATION_SOURCE_VERSION_UNSUPPORTED "MCP_RES_MIGRATION_SOURCE_VERSION_UNSUPPORTED" {
            rule: "MCPRES-MIG-001",
            title: "Not a v0.1 bundle",
            meaning: "The migration input's schemaVersion is not mcp-res.conformance-bundle/0.1.0 (or a migration result).",
            example: "An input with \"schemaVersion\": \"mcp-res.attested-conformance-bundle/0.2.0\".",
            fix: "Migrate only v0.1 conformance bundles.",
        }
        MigrationInputJsonInvalid MIGRATION_INPUT_JSON_INVALID "MCP_RES_MIGRATION_INPUT_JSON_INVALID" {
            rule: "MCPRES-MIG-001",
            title: "Migration input unreadable",
            meaning: "The file given to mcpres migrate is not readable by the strict JSON reader.",
            example: "A v0.1 bundle truncated in the middle of a string.",
            fix: "Pass the complete, original v0.1 bundle file.",
        }
        MigrationInputOverwriteForbidden MIGRATION_INPUT_OVERWRITE_FORBIDDEN "MCP_RES_MIGRATION_INPUT_OVERWRITE_FORBIDDEN" {
            rule: "MCPRES-MIG-001",
            title: "Output would overwrite the input",
            meaning: "The output path is the input path (also when spelled differently or reached through a symlinked directory); migration never modifies its input.",
            example: "mcpres migrate v0.1 --input old.json -o old.json",
            fix: "Write the result to a new file.",
        }
        MigrationOutputOutsideWorkspace MIGRATION_OUTPUT_OUTSIDE_WORKSPACE "MCP_RES_MIGRATION_OUTPUT_OUTSIDE_WORKSPACE" {
            rule: "MCPRES-MIG-001",
            title: "Output outside the workspace",
            meaning: "After resolving symlinks, the output's parent directory is not inside the workspace: the current working directory, or the directory given with --workspace.",
            example: "mcpres migrate v0.1 --input old.json -o ../elsewhere/new.json",
            fix: "Choose an output path under the directory you run the command from, or name the workspace with --workspace.",
        }
        MigrationOutputConflict MIGRATION_OUTPUT_CONFLICT "MCP_RES_MIGRATION_OUTPUT_CONFLICT" {
            rule: "MCPRES-MIG-001",
            title: "Output already exists",
            meaning: "The output file exists; migration creates its output exclusively and never replaces a file.",
            example: "Running the same migrate command twice with the same -o.",
            fix: "Remove the old output yourself or choose another name.",
        }
    }
    /// Official MCP conformance attachment (OFFICIAL_CONFORMANCE.md).
    Official {
        OfficialInputInvalid OFFICIAL_INPUT_INVALID "MCP_RES_OFFICIAL_INPUT_INVALID" {
            rule: "MCPRES-OFFICIAL-001",
            title: "Official output unusable",
            meaning: "mcpres official import was given output that is not a JSON array of at most 4096 check objects, each with a string id and a status of SUCCESS, FAILURE, WARNING, SKIPPED or INFO, with unique scenario:check references; or its capture record, baseline or declared-check file is unusable, or more values need sanitizing than an attachment can list (64). Exit code 2; nothing is written.",
            example: "A checks file holding {\"checks\": [...]} instead of a bare array.",
            fix: "Import the unmodified checks output of @modelcontextprotocol/conformance.",
        }
        OfficialCoverageIncomplete OFFICIAL_COVERAGE_INCOMPLETE "MCP_RES_OFFICIAL_COVERAGE_INCOMPLETE" {
            rule: "MCPRES-OFFICIAL-001",
            title: "Emitted check not declared",
            meaning: "During import, the official output contains a check that is not in the declared expected check set (--declared). Exit code 1; nothing is written.",
            example: "The suite emitted server-initialize:new-check but the declared list predates it.",
            fix: "Update the declared check list to the suite version you ran.",
        }
        OfficialAttachmentSchemaInvalid OFFICIAL_ATTACHMENT_SCHEMA_INVALID "MCP_RES_OFFICIAL_ATTACHMENT_SCHEMA_INVALID" {
            rule: "MCPRES-OFFICIAL-001",
            title: "Attachment malformed",
            meaning: "The official-conformance attachment does not match its schema; schemaErrors lists the violations.",
            example: "mappingBoundary.officialCertificationClaim set to true (it must be false).",
            fix: "Regenerate the attachment with mcpres official import.",
        }
        OfficialRequirementRevisionMismatch OFFICIAL_REQUIREMENT_REVISION_MISMATCH "MCP_RES_OFFICIAL_REQUIREMENT_REVISION_MISMATCH" {
            rule: "MCPRES-OFFICIAL-001",
            title: "Requirement set for another revision",
            meaning: "protocolRevision differs from requirementSet.revision.",
            example: "protocolRevision \"2025-11-25\" with requirementSet.revision \"2026-07-28\".",
            fix: "Pin the requirement set of the protocol revision you tested.",
        }
        OfficialLegNotExecuted OFFICIAL_LEG_NOT_EXECUTED "MCP_RES_OFFICIAL_LEG_NOT_EXECUTED" {
            rule: "MCPRES-OFFICIAL-001",
            title: "Active leg not executed",
            meaning: "The leg named by mode (client or server) is not EXECUTED.",
            example: "\"mode\": \"server\", \"legs\": {\"server\": \"NOT_EXECUTED\", ...}",
            fix: "Run the official suite for the active leg before importing.",
        }
        OfficialInventoryMismatch OFFICIAL_INVENTORY_MISMATCH "MCP_RES_OFFICIAL_INVENTORY_MISMATCH" {
            rule: "MCPRES-OFFICIAL-001",
            title: "Inventories disagree with the checks",
            meaning: "A check reference repeats or is not declared, or the executed, wireSchema, warnings, skipped, untestable or pending inventory differs from the sorted list the checks imply (sorted by UTF-16 code units; pending is the declared checks that were not emitted), or expectedFailureBaseline.sha256 is not the SHA-256 of its entries.",
            example: "A WARNING check missing from inventories.warnings.",
            fix: "Derive the inventories from the checks (mcpres official import does) and never edit them separately.",
        }
        OfficialExpectedFailureRewritten OFFICIAL_EXPECTED_FAILURE_REWRITTEN "MCP_RES_OFFICIAL_EXPECTED_FAILURE_REWRITTEN" {
            rule: "MCPRES-OFFICIAL-001",
            title: "Expected failure rewritten",
            meaning: "A check's baselineExpected flag is not exactly whether its reference is in the baseline and its outcome is FAILURE or WARNING; baseline entries never turn a failure into a success.",
            example: "\"outcome\": \"SUCCESS\", \"baselineExpected\": true",
            fix: "Keep official outcomes as emitted and set baselineExpected only for failing checks named in the baseline.",
        }
        OfficialStaleBaselineMismatch OFFICIAL_STALE_BASELINE_MISMATCH "MCP_RES_OFFICIAL_STALE_BASELINE_MISMATCH" {
            rule: "MCPRES-OFFICIAL-001",
            title: "Stale baseline entries misreported",
            meaning: "staleExpectedFailures is not exactly the baseline entries, in baseline order, whose check no longer fails.",
            example: "A fixed check left in the baseline while staleExpectedFailures is empty.",
            fix: "Report stale entries honestly (they force INCOMPLETE) and prune the baseline.",
        }
        OfficialResultDigestMismatch OFFICIAL_RESULT_DIGEST_MISMATCH "MCP_RES_OFFICIAL_RESULT_DIGEST_MISMATCH" {
            rule: "MCPRES-OFFICIAL-001",
            title: "Original result digest mismatch",
            meaning: "With --original-result, the supplied original file's byte length or SHA-256 differs from originalResultArtifact.",
            example: "Comparing the attachment with the sanitized derivative instead of the unsanitized original.",
            fix: "Pass the exact original output file whose digest the attachment recorded.",
        }
        OfficialMappingOverclaim OFFICIAL_MAPPING_OVERCLAIM "MCP_RES_OFFICIAL_MAPPING_OVERCLAIM" {
            rule: "MCPRES-OFFICIAL-001",
            title: "Official output mapped to an evidence class",
            meaning: "mappingBoundary.mcpResEvidenceClass is not null while explicitMapping is false; v0.2 maps no official result to an MCP-RES evidence class.",
            example: "\"mcpResEvidenceClass\": \"GENUINE_RUNTIME\", \"explicitMapping\": false",
            fix: "Leave mcpResEvidenceClass null.",
        }
        OfficialStatusMismatch OFFICIAL_STATUS_MISMATCH "MCP_RES_OFFICIAL_STATUS_MISMATCH" {
            rule: "MCPRES-OFFICIAL-001",
            title: "Import status not as derived",
            meaning: "importStatus differs from the derived status: INVALID when an unexpected FAILURE or WARNING remains; INCOMPLETE when stale baseline entries, skipped, untestable, pending or not-scored checks, a non-zero harness exit, or an UNINSTRUMENTED or UNKNOWN coverage surface exist; otherwise COMPLETE.",
            example: "\"importStatus\": \"COMPLETE\" with one pending check.",
            fix: "Report the derived status; finish the pending work to reach COMPLETE.",
        }
    }
    /// Reliability-profile evaluation (PROTOCOL_PROFILES.md).
    Profile {
        ProfileSchemaInvalid PROFILE_SCHEMA_INVALID "MCP_RES_PROFILE_SCHEMA_INVALID" {
            rule: "MCPRES-PROFILE-001",
            title: "Profile evaluation malformed",
            meaning: "The profile evaluation does not match its schema; schemaErrors lists the violations.",
            example: "A check whose positive observation has \"observedOutcome\": \"MAYBE\".",
            fix: "Produce the evaluation from the schema.",
        }
        ProfileManifestInvalid PROFILE_MANIFEST_INVALID "MCP_RES_PROFILE_MANIFEST_INVALID" {
            rule: "MCPRES-PROFILE-001",
            title: "Profile registry invalid",
            meaning: "A registered profile manifest fails its schema, has EXPERIMENTAL status without experimental provenance (or the reverse), or repeats a profile or check id. With the built-in registry this indicates a broken mcpres build.",
            example: "A manifest listing the same check id as required and conditional.",
            fix: "Report it; the built-in registry is fixed at build time.",
        }
        ProfileManifestUnknown PROFILE_MANIFEST_UNKNOWN "MCP_RES_PROFILE_MANIFEST_UNKNOWN" {
            rule: "MCPRES-PROFILE-001",
            title: "Unknown profile",
            meaning: "profile.id is not registered, or profile.version differs from the registered manifest's version.",
            example: "\"profile\": {\"id\": \"mcp-res/streamable-http/v1\", \"version\": \"9.0.0\", ...}",
            fix: "Name a registered profile and its exact version (mcpres lists them).",
        }
        ProfileRevisionUnsupported PROFILE_REVISION_UNSUPPORTED "MCP_RES_PROFILE_REVISION_UNSUPPORTED" {
            rule: "MCPRES-PROFILE-002",
            title: "Protocol revision not in the profile",
            meaning: "profile.protocolRevision is not one of the manifest's protocolRevisions; revisions are never treated as equivalent.",
            example: "mcp-res/async-operation/v1 evaluated for \"2025-11-25\".",
            fix: "Evaluate a revision the profile supports, or choose a profile for your revision.",
        }
        ProfileManifestDigestMismatch PROFILE_MANIFEST_DIGEST_MISMATCH "MCP_RES_PROFILE_MANIFEST_DIGEST_MISMATCH" {
            rule: "MCPRES-PROFILE-001",
            title: "Manifest digest differs",
            meaning: "profile.manifestSha256 is not the SHA-256 of the canonical registered manifest.",
            example: "An evaluation produced against an earlier draft of the manifest.",
            fix: "Recompute manifestSha256 from the registered manifest and re-run against it.",
        }
        ProfileDigestMismatch PROFILE_DIGEST_MISMATCH "MCP_RES_PROFILE_DIGEST_MISMATCH" {
            rule: "MCPRES-PROFILE-001",
            title: "Evaluation digest differs",
            meaning: "evaluationSha256 is not the SHA-256 of the canonical evaluation without that key.",
            example: "A check result edited after the evaluation was sealed.",
            fix: "Compute evaluationSha256 last, over the final evaluation.",
        }
        ProfileCoverageMismatch PROFILE_COVERAGE_MISMATCH "MCP_RES_PROFILE_COVERAGE_MISMATCH" {
            rule: "MCPRES-PROFILE-001",
            title: "Claimed checks do not match",
            meaning: "Check ids repeat, the claimed ids differ from the evaluated ids, a claimed id is not registered in the profile, or a FULL_PROFILE claim does not cover exactly every required and revision-applicable conditional check.",
            example: "A FULL_PROFILE claim that leaves out one required check.",
            fix: "Evaluate every applicable check, or claim BOUNDED_CHECK_SET with exactly the checks you ran.",
        }
        ProfileRemoteTargetUnreviewed PROFILE_REMOTE_TARGET_UNREVIEWED "MCP_RES_PROFILE_REMOTE_TARGET_UNREVIEWED" {
            rule: "MCPRES-PROFILE-002",
            title: "Remote target not reviewed",
            meaning: "targetKind is REMOTE_HTTP without remoteOptIn, an allowlistSha256 and a reviewedTargetSha256 equal to targetSha256.",
            example: "\"targetKind\": \"REMOTE_HTTP\", \"remoteOptIn\": false",
            fix: "Evaluate a loopback target, or opt in explicitly with a reviewed allowlist and target digest.",
        }
        ProfilePropertyNotReached PROFILE_PROPERTY_NOT_REACHED "MCP_RES_PROFILE_PROPERTY_NOT_REACHED" {
            rule: "MCPRES-PROFILE-001",
            title: "Check property not reached",
            meaning: "A check's positive or negative-control observation has propertyReached false.",
            example: "negativeControl: {\"propertyReached\": false, ...}",
            fix: "Drive the check until the property is really exercised.",
        }
        ProfileOutcomeMismatch PROFILE_OUTCOME_MISMATCH "MCP_RES_PROFILE_OUTCOME_MISMATCH" {
            rule: "MCPRES-PROFILE-001",
            title: "Positive outcome differs",
            meaning: "A check's positive observation was NOT_OBSERVED or its observedOutcome differs from expectedOutcome.",
            example: "positive: {\"expectedOutcome\": \"ACCEPT\", \"observedOutcome\": \"REJECT\", ...}",
            fix: "Fix the subject, or record the check as failed rather than claiming it.",
        }
        ProfileNegativeControlMissing PROFILE_NEGATIVE_CONTROL_MISSING "MCP_RES_PROFILE_NEGATIVE_CONTROL_MISSING" {
            rule: "MCPRES-PROFILE-001",
            title: "Negative control did not show the rejection",
            meaning: "A check's negative-control observation was NOT_OBSERVED or its observedOutcome differs from expectedOutcome.",
            example: "negativeControl: {\"expectedOutcome\": \"REJECT\", \"observedOutcome\": \"NOT_OBSERVED\", ...}",
            fix: "Run the negative case and record the outcome it produced.",
        }
        ProfileWrongReason PROFILE_WRONG_REASON "MCP_RES_PROFILE_WRONG_REASON" {
            rule: "MCPRES-PROFILE-001",
            title: "Outcome for the wrong reason",
            meaning: "A positive or negative observation's observedReasonCode differs from its expectedReasonCode: an earlier or unrelated rejection does not count.",
            example: "A negative that expected the session-binding reason code but observed an earlier parse-error reason code.",
            fix: "Make the negative case reach the intended check and record its exact reason code.",
        }
        ProfileCleanupIncomplete PROFILE_CLEANUP_INCOMPLETE "MCP_RES_PROFILE_CLEANUP_INCOMPLETE" {
            rule: "MCPRES-PROFILE-001",
            title: "Cleanup not observed",
            meaning: "cleanup.required is true but cleanup.observed is false.",
            example: "\"cleanup\": {\"required\": true, \"observed\": false, ...}",
            fix: "Observe and record that processes, listeners and files were released.",
        }
        ProfileTestFixtureOverclaim PROFILE_TEST_FIXTURE_OVERCLAIM "MCP_RES_PROFILE_TEST_FIXTURE_OVERCLAIM" {
            rule: "MCPRES-PROFILE-001",
            title: "Fixture observation claimed as PASS",
            meaning: "Some observation has source TEST_FIXTURE, which can only produce INCOMPLETE, yet result is PASS.",
            example: "result \"PASS\" with one positive observation from \"TEST_FIXTURE\".",
            fix: "Report INCOMPLETE, or replace fixture observations by runtime or sanitized official ones.",
        }
        ProfileResultMismatch PROFILE_RESULT_MISMATCH "MCP_RES_PROFILE_RESULT_MISMATCH" {
            rule: "MCPRES-PROFILE-001",
            title: "Result not as derived",
            meaning: "result differs from the derived result (FAIL when any positive or negative-control observation has a finding, else INCOMPLETE with any fixture observation, otherwise PASS) in a way other than a fixture overclaim.",
            example: "result \"INCOMPLETE\" when every observation came from runtime probes.",
            fix: "Report the derived result.",
        }
    }
    /// Profile evaluation directory: mcpres's own codes (spec/profiles.md, "The evaluation directory").
    ProfileDirectory {
        ProfileRunInvalid PROFILE_RUN_INVALID "MCP_RES_PROFILE_RUN_INVALID" {
            rule: "MCPRES-PROFILE-DIR-002",
            title: "Run record missing or malformed",
            meaning: "A profile evaluation directory (a directory holding evaluation.json) has no run.json, or its run.json is a symlink or not a regular file, cannot be read by the strict reader, or does not match the closed mcpres.profile-run/1 schema (one finding per violation). Nothing else of the directory is compared with it.",
            example: "A directory holding evaluation.json and artifacts/ but no run.json, or a run.json whose check has \"verdict\": \"SKIPPED\".",
            fix: "Keep the directory exactly as mcpres profile run wrote it, or pack it (mcpres pack DIR -o FILE) and pass the single evaluation file instead.",
        }
        ProfileRunInconsistent PROFILE_RUN_INCONSISTENT "MCP_RES_PROFILE_RUN_INCONSISTENT" {
            rule: "MCPRES-PROFILE-DIR-002",
            title: "Run record disagrees with the evaluation",
            meaning: "run.json does not describe the evaluation.json beside it: evaluationFileSha256 is not the SHA-256 of evaluation.json's bytes; its profile differs; the checks with verdict PASS or FAIL are not exactly the evaluated checks, a check is listed twice, or a NOT_OBSERVED check is evaluated; a check's positive or negative path is null, not listed, or names an artifact whose sha256 is not the one the evaluation cites, or another path given is not listed; a PASS check has mutantKilled other than true or has a failing observation; or result is not FAIL when a check fails, INCOMPLETE when one was not observed, PASS otherwise.",
            example: "run.json says \"result\": \"PASS\" while one of its checks has \"verdict\": \"FAIL\".",
            fix: "Do not edit run.json or evaluation.json by hand; run mcpres profile run again to get a consistent directory.",
        }
        ProfileArtifactUnresolved PROFILE_ARTIFACT_UNRESOLVED "MCP_RES_PROFILE_ARTIFACT_UNRESOLVED" {
            rule: "MCPRES-PROFILE-DIR-001",
            title: "Cited artifact not in the directory",
            meaning: "An artifactSha256 of a check's positive or negative-control observation, or cleanup.observationSha256, in evaluation.json is not the sha256 of any artifact that run.json lists, so the directory does not hold the observation the evaluation cites.",
            example: "A check whose negativeControl.artifactSha256 names bytes that no file under artifacts/ has.",
            fix: "Keep every artifact the run wrote; an evaluation must cite only observations stored beside it.",
        }
        VerdictNotFromRecord VERDICT_NOT_FROM_RECORD "MCP_RES_VERDICT_NOT_FROM_RECORD" {
            rule: "MCPRES-PROFILE-DIR-003",
            title: "Verdict not what the record gives",
            meaning: "mcpres validate judges a profile evaluation directory again from its digest-bound artifacts (artifacts/<check>/positive.json, negative.json and mutant.json, artifacts/cleanup.json) with the runner's own judge, and a recorded field is not what the judge gives: in run.json a check's verdict, reason, detail, kind, mutantKilled or artifact paths, or the result; in evaluation.json the evaluated checks, an observation's fields, the claimed checks, the claim, cleanup.observed or the result; the observed flag of artifacts/cleanup.json; in an OAuth-boundary evaluation directory, a check's verdict, reason, detail or mutantKilled in run.json or a case in evaluation.json; or, in a field matrix, a leg's evidence items or result, or the overall result, judged over its re-judged evaluation directory. Beside the artifacts' labels, a mutant's propertyReached, an observation credited MCP_RES_SYNTAX_GUARD without a -32700 or null-id answer in its stored stdout, a stdout-protocol-purity positive held although its stored stdout has a line that is not JSON-RPC, a Streamable HTTP control credited with its refusal (or labelled with a status or error code) whose answer on its own connection reads otherwise (or a mutant labelled otherwise than its answer there reads), an observation labelled as never opened whose stored bytes show its runner went on past the answered opening, a reading of silence, a close, an exit, the runner's own ending, an opening, an answered mutant, a twin's refusal or a probe never made that the waits and response reads its transcript keeps do not give (each stdio wait read again from the stdout prefix its runner had read when it decided), an observation whose reason (with its outcome) its check's runner never records for that role, an expected reason other than the check's declaration at the evaluated revision, and an OAuth token presentation labelled otherwise than its stored answer reads are reported too. An artifact the judge must read that is not a readable observation of its check and role is reported too.",
            example: "A check relabelled from NOT_OBSERVED to PASS with mutantKilled true in run.json and evaluation.json, digests recomputed, while its mutant.json shows the mutant met with the negative control's reason.",
            fix: "Do not relabel verdicts: a verdict is what the stored observations give. Run mcpres profile run (or field run) again to get a new evaluation.",
        }
    }
    /// Field evidence matrix directory: mcpres's own codes (spec/field.md).
    FieldMatrix {
        FieldMatrixInvalid FIELD_MATRIX_INVALID "MCP_RES_FIELD_MATRIX_INVALID" {
            rule: "MCPRES-FIELD-DIR-001",
            title: "Matrix document missing or malformed",
            meaning: "A field matrix directory (a directory holding matrix.json) has a matrix.json that is a symlink or not a regular file, cannot be read by the strict reader, or does not match the closed mcpres.field-matrix/1 schema (one finding per violation). Nothing else of the directory is compared with it.",
            example: "A matrix.json whose leg has \"result\": \"SKIPPED\", or a leg without its cleanPath.",
            fix: "Keep the directory exactly as mcpres field run wrote it; run the matrix again rather than editing matrix.json.",
        }
        FieldLegUnresolved FIELD_LEG_UNRESOLVED "MCP_RES_FIELD_LEG_UNRESOLVED" {
            rule: "MCPRES-FIELD-DIR-002",
            title: "Leg evaluation not found by digest",
            meaning: "A leg that ran names an evaluation directory that is missing, is not a profile evaluation directory, does not validate as one (its own codes are named), or whose evaluation.json or run.json does not have the digests the matrix records (evaluationSha256, evaluationFileSha256, runFileSha256).",
            example: "legs/ref-stdio/ was deleted, or its evaluation.json was replaced by another run's.",
            fix: "Keep every leg directory the run wrote, unchanged; run the matrix again to get a consistent directory.",
        }
        FieldLegInconsistent FIELD_LEG_INCONSISTENT "MCP_RES_FIELD_LEG_INCONSISTENT" {
            rule: "MCPRES-FIELD-001",
            title: "Leg disagrees with its evaluation",
            meaning: "A field evidence item of a leg is not what its evaluation directory shows: platform, runtime, language, subject, protocol revision, profile or its manifest digest, check set, clean path, expected failure, wrong-reason control, interruption verdicts, cleanup, failed or not-observed checks, the declaration mismatches, or the leg result (FAIL with any declaration mismatch, otherwise run.json's result); or a NOT_RUN leg names a profile whose id, version or manifest digest is not the built-in registry's.",
            example: "A leg whose language says PYTHON while its evaluation.json says OTHER.",
            fix: "Do not edit matrix.json by hand; declare what a leg is expected to be in the matrix file (language, runtime, subject-sha256) and run it again.",
        }
        FieldAggregateCollapsed FIELD_AGGREGATE_COLLAPSED "MCP_RES_FIELD_AGGREGATE_COLLAPSED" {
            rule: "MCPRES-FIELD-001",
            title: "Legs collapsed or the aggregate does not follow",
            meaning: "The matrix does not keep every leg apart, or its aggregate does not follow from them: two legs share an id or a directory, a leg's directory is not legs/ID, a directory under legs/ belongs to no leg that ran, the summary does not count the legs per result, or the overall result is not PASS when every leg is PASS, FAIL when any leg is FAIL, INCOMPLETE otherwise (judged on each leg's result as its evaluation shows it).",
            example: "\"result\": \"PASS\" over a leg whose evaluation failed.",
            fix: "Report every leg and the derived overall result; a failing or incomplete leg is never folded into a pass.",
        }
    }
    /// OAuth authorization-boundary evaluation (AUTHORIZATION.md).
    OAuth {
        OAuthSchemaInvalid OAUTH_SCHEMA_INVALID "MCP_RES_OAUTH_SCHEMA_INVALID" {
            rule: "MCPRES-OAUTH-002",
            title: "OAuth evaluation malformed",
            meaning: "The oauth-boundary evaluation does not match its schema (including format uri for endpoints); schemaErrors lists the violations.",
            example: "\"tokenEndpoint\": \"not a uri\"",
            fix: "Produce the evaluation from the schema.",
        }
        OAuthManifestInvalid OAUTH_MANIFEST_INVALID "MCP_RES_OAUTH_MANIFEST_INVALID" {
            rule: "MCPRES-OAUTH-002",
            title: "OAuth profile manifest unusable",
            meaning: "The mcp-res/oauth-boundary/v1 manifest is missing, invalid or not PROVISIONAL. With the built-in registry this indicates a broken mcpres build.",
            example: "A registry whose oauth-boundary manifest is marked EXPERIMENTAL.",
            fix: "Report it; the built-in registry is fixed at build time.",
        }
        OAuthRevisionUnsupported OAUTH_REVISION_UNSUPPORTED "MCP_RES_OAUTH_REVISION_UNSUPPORTED" {
            rule: "MCPRES-PROFILE-002",
            title: "Protocol revision not in the OAuth profile",
            meaning: "profile.protocolRevision is not one of the oauth-boundary manifest's protocolRevisions.",
            example: "An evaluation for protocol revision \"2024-11-05\".",
            fix: "Evaluate a supported revision.",
        }
        OAuthManifestDigestMismatch OAUTH_MANIFEST_DIGEST_MISMATCH "MCP_RES_OAUTH_MANIFEST_DIGEST_MISMATCH" {
            rule: "MCPRES-PROFILE-001",
            title: "OAuth manifest digest differs",
            meaning: "profile.manifestSha256 is not the SHA-256 of the canonical oauth-boundary manifest.",
            example: "An evaluation produced against an earlier draft of the manifest.",
            fix: "Recompute manifestSha256 from the registered manifest.",
        }
        OAuthDigestMismatch OAUTH_DIGEST_MISMATCH "MCP_RES_OAUTH_DIGEST_MISMATCH" {
            rule: "MCPRES-PROFILE-001",
            title: "OAuth evaluation digest differs",
            meaning: "evaluationSha256 is not the SHA-256 of the canonical evaluation without that key.",
            example: "A case result edited after sealing.",
            fix: "Compute evaluationSha256 last, over the final evaluation.",
        }
        OAuthCoverageMismatch OAUTH_COVERAGE_MISMATCH "MCP_RES_OAUTH_COVERAGE_MISMATCH" {
            rule: "MCPRES-OAUTH-002",
            title: "OAuth cases do not cover the profile",
            meaning: "Case ids repeat, or the sorted case ids are not exactly the required and revision-applicable conditional checks of the profile.",
            example: "An evaluation without the pkce-downgrade-refused case.",
            fix: "Evaluate every applicable check exactly once.",
        }
        OAuthExternalProviderContact OAUTH_EXTERNAL_PROVIDER_CONTACT "MCP_RES_OAUTH_EXTERNAL_PROVIDER_CONTACT" {
            rule: "MCPRES-OAUTH-001",
            title: "Real provider or network contacted",
            meaning: "fixture.loopbackOnly is false, or realAuthorizationProvidersContacted or externalNetworkRequests is not 0.",
            example: "\"externalNetworkRequests\": 3",
            fix: "Run the evaluation against the local synthetic fixture only.",
        }
        OAuthNonSyntheticCredential OAUTH_NON_SYNTHETIC_CREDENTIAL "MCP_RES_OAUTH_NON_SYNTHETIC_CREDENTIAL" {
            rule: "MCPRES-OAUTH-001",
            title: "Real credentials used",
            meaning: "fixture.syntheticCredentials is false.",
            example: "\"syntheticCredentials\": false",
            fix: "Use generated, disposable synthetic credentials.",
        }
        OAuthWrongReason OAUTH_WRONG_REASON "MCP_RES_OAUTH_WRONG_REASON" {
            rule: "MCPRES-OAUTH-003",
            title: "Wrong reason code",
            meaning: "A case's expected reason codes are not MCP_RES_OAUTH_<CHECK>_ACCEPTED and _REJECTED derived from its id, or an observation's observedReasonCode differs from the expected one.",
            example: "In the access-token-audience case, the negative observed MCP_RES_OAUTH_EARLY_SYNTAX_REJECTION instead of MCP_RES_OAUTH_ACCESS_TOKEN_AUDIENCE_REJECTED.",
            fix: "Make the negative reach the named binding and record the derived reason code.",
        }
        OAuthPropertyNotReached OAUTH_PROPERTY_NOT_REACHED "MCP_RES_OAUTH_PROPERTY_NOT_REACHED" {
            rule: "MCPRES-OAUTH-003",
            title: "OAuth property not reached",
            meaning: "A case's positive or negative observation has propertyReached false.",
            example: "negative: {\"propertyReached\": false, ...}",
            fix: "Drive the case until the boundary under test is exercised.",
        }
        OAuthOutcomeMismatch OAUTH_OUTCOME_MISMATCH "MCP_RES_OAUTH_OUTCOME_MISMATCH" {
            rule: "MCPRES-OAUTH-003",
            title: "OAuth outcome differs",
            meaning: "A case's positive or negative observation was NOT_OBSERVED or its observedOutcome differs from expectedOutcome.",
            example: "negative: {\"expectedOutcome\": \"REJECT\", \"observedOutcome\": \"ACCEPT\", ...}",
            fix: "Fix the subject, or record the case as failed.",
        }
        OAuthWrongReasonControlMissing OAUTH_WRONG_REASON_CONTROL_MISSING "MCP_RES_OAUTH_WRONG_REASON_CONTROL_MISSING" {
            rule: "MCPRES-OAUTH-003",
            title: "Wrong-reason mutant missing",
            meaning: "A case's wrongReasonMutant did not reach its property, did not observe MCP_RES_OAUTH_EARLY_SYNTAX_REJECTION (or observed the negative's own reason), or does not expect MCP_RES_OAUTH_WRONG_REASON.",
            example: "wrongReasonMutant: {\"propertyReached\": false, ...}",
            fix: "Add the early-syntax mutant for every case and record that the validator reports it as a wrong reason.",
        }
        OAuthSecretPersisted OAUTH_SECRET_PERSISTED "MCP_RES_OAUTH_SECRET_PERSISTED" {
            rule: "MCPRES-OAUTH-003",
            title: "Credential material persisted",
            meaning: "privacy.tokenMaterialPersisted or privacy.evidenceContainsCredentialMaterial is true, or (mcpres only) a string of the document itself carries a bearer credential, a JSON web token or a URI with a code, token, verifier, secret or state parameter.",
            example: "\"tokenMaterialPersisted\": true",
            fix: "Keep credentials in memory only and store digests, never raw tokens, codes or verifiers.",
        }
        OAuthUnsanitizedError OAUTH_UNSANITIZED_ERROR "MCP_RES_OAUTH_UNSANITIZED_ERROR" {
            rule: "MCPRES-OAUTH-002",
            title: "Authorization errors not sanitized",
            meaning: "privacy.authorizationErrorsSanitized is false.",
            example: "\"authorizationErrorsSanitized\": false",
            fix: "Return stable reason codes without verifiers, tokens or secrets in error bodies.",
        }
        OAuthCleanupIncomplete OAUTH_CLEANUP_INCOMPLETE "MCP_RES_OAUTH_CLEANUP_INCOMPLETE" {
            rule: "MCPRES-OAUTH-002",
            title: "Loopback listeners not released",
            meaning: "cleanup.listenerClosed or cleanup.redirectListenerReleased is false.",
            example: "\"redirectListenerReleased\": false",
            fix: "Close every listener on every exit path and record it.",
        }
        OAuthTestFixtureOverclaim OAUTH_TEST_FIXTURE_OVERCLAIM "MCP_RES_OAUTH_TEST_FIXTURE_OVERCLAIM" {
            rule: "MCPRES-PROFILE-001",
            title: "Fixture evidence claimed as PASS",
            meaning: "Some case has evidenceSource TEST_FIXTURE, which can only produce INCOMPLETE, yet result is PASS.",
            example: "result \"PASS\" with a case whose evidenceSource is \"TEST_FIXTURE\".",
            fix: "Report INCOMPLETE, or gather runtime evidence for every case.",
        }
        OAuthResultMismatch OAUTH_RESULT_MISMATCH "MCP_RES_OAUTH_RESULT_MISMATCH" {
            rule: "MCPRES-PROFILE-001",
            title: "OAuth result not as derived",
            meaning: "result differs from the derived result (INCOMPLETE with any fixture case, otherwise PASS) other than by a fixture overclaim.",
            example: "result \"INCOMPLETE\" when every case came from runtime evidence.",
            fix: "Report the derived result.",
        }
    }
    /// v0.1 bundles (v0.1 kit), evaluated with v0.1 semantics; codes shared with v0.2 are above.
    V01 {
        V01MissingCleanControl V01_MISSING_CLEAN_CONTROL "MCP_RES_MISSING_CLEAN_CONTROL" {
            rule: "MCPRES-CTRL-001 (v0.1)",
            title: "No clean control",
            meaning: "v0.1 bundle: no operation has kind CLEAN_CONTROL, so nothing shows the subject works without the fault.",
            example: "v0.1 evidence whose operations are only a FAULT_CASE and a NEGATIVE_CONTROL.",
            fix: "Record an uninjected CLEAN_CONTROL for the same subject and configuration.",
        }
        V01UnboundedRetry V01_UNBOUNDED_RETRY "MCP_RES_UNBOUNDED_RETRY" {
            rule: "MCPRES-REC-001 (v0.1)",
            title: "Unbounded retry",
            meaning: "v0.1 bundle: a recovery policy has retryLimit null or \"unbounded\".",
            example: "\"retryLimit\": \"unbounded\"",
            fix: "Declare a finite retry limit.",
        }
        V01CleanupIncomplete V01_CLEANUP_INCOMPLETE "MCP_RES_CLEANUP_INCOMPLETE" {
            rule: "MCPRES-CLEAN-001 (v0.1)",
            title: "Cleanup incomplete",
            meaning: "v0.1 bundle: cleanup is missing or not complete, child processes or listeners remain, or the target shows an unapproved change.",
            example: "\"cleanup\": {\"complete\": true, \"childProcessesRemaining\": 1, ...}",
            fix: "Release every process and listener and restore the target before publishing.",
        }
        V01PartialManifest V01_PARTIAL_MANIFEST "MCP_RES_PARTIAL_MANIFEST" {
            rule: "MCPRES-INT-001 (v0.1)",
            title: "Partial manifest",
            meaning: "v0.1 bundle: the integrity manifest is missing, not complete, not published MANIFEST_LAST, or lists a path twice.",
            example: "\"integrity\": {\"complete\": false, ...}",
            fix: "Publish a complete manifest last, with unique paths.",
        }
        V01SubjectAmbiguous V01_SUBJECT_AMBIGUOUS "MCP_RES_SUBJECT_AMBIGUOUS" {
            rule: "MCPRES-ID-001 (v0.1)",
            title: "Subject not identified",
            meaning: "v0.1 bundle: the subject lacks a name, a version or an artifact SHA-256.",
            example: "\"subject\": {\"name\": \"demo-server\", \"version\": \"1.0.0\", \"artifact\": {}}",
            fix: "Pin the exact subject: name, version and artifact digest.",
        }
        V01NondeterministicIdentity V01_NONDETERMINISTIC_IDENTITY "MCP_RES_NONDETERMINISTIC_IDENTITY" {
            rule: "MCPRES-ID-001 (v0.1)",
            title: "Environment-dependent identity",
            meaning: "v0.1 bundle: the subject carries absolutePath, workingDirectory or hostName, which vary between machines.",
            example: "\"subject\": {\"hostName\": \"ci-runner-17\", ...}",
            fix: "Identify the subject by portable names and digests only.",
        }
        V01EvidenceTooLarge V01_EVIDENCE_TOO_LARGE "MCP_RES_EVIDENCE_TOO_LARGE" {
            rule: "MCPRES-LIMIT-001 (v0.1)",
            title: "Evidence over the v0.1 limits",
            meaning: "v0.1 bundle: the serialized bundle exceeds 1 MiB, limits.inputBytes exceeds 16 MiB, or limits.stringBytes exceeds 1 MiB.",
            example: "A v0.1 bundle of 1.5 MiB with an embedded transcript.",
            fix: "Keep bulky material out of the bundle and declare limits within the v0.1 ceilings.",
        }
        V01AuthHeaderForbidden V01_AUTH_HEADER_FORBIDDEN "MCP_RES_AUTH_HEADER_FORBIDDEN" {
            rule: "MCPRES-PRIV-002 (v0.1)",
            title: "Raw authorization header",
            meaning: "v0.1 bundle: the serialized bundle contains an Authorization header with a Bearer or Basic credential.",
            example: "\"note\": \"Authorization: Bearer abc123\"",
            fix: "Omit credentials at the source; never record raw headers.",
        }
        V01SecretDetected V01_SECRET_DETECTED "MCP_RES_SECRET_DETECTED" {
            rule: "MCPRES-PRIV-002 (v0.1)",
            title: "Encoded secret",
            meaning: "v0.1 bundle: a base64-looking run of 24 or more characters decodes to text that looks like a bearer header, an API key or a token assignment.",
            example: "A field holding the base64 of 'api_key=...'.",
            fix: "Remove the secret at the source; redaction is not enough.",
        }
        V01ProfileUnsupported V01_PROFILE_UNSUPPORTED "MCP_RES_PROFILE_UNSUPPORTED" {
            rule: "MCP-RES v0.1 §5 (v0.1)",
            title: "Unsupported v0.1 profile",
            meaning: "v0.1 bundle: the profile id and version are not one of the three registered v0.1 profiles, or the subject type is not allowed by that profile.",
            example: "mcp-res/server-tool-call/v1 at \"2.0.0\".",
            fix: "Use a registered v0.1 profile and version matching the subject type.",
        }
        V01SideEffectRetryUnsafe V01_SIDE_EFFECT_RETRY_UNSAFE "MCP_RES_SIDE_EFFECT_RETRY_UNSAFE" {
            rule: "MCPRES-REC-002 (v0.1)",
            title: "Unsafe retry of side effects",
            meaning: "v0.1 bundle: a policy retries (retryLimit > 0) a SIDE_EFFECTING or UNKNOWN operation without a safety mechanism.",
            example: "\"sideEffectModel\": \"SIDE_EFFECTING\", \"retryLimit\": 3, \"safetyMechanism\": null",
            fix: "Name the idempotency key, transaction, compensation or exactly-once guard, or do not retry.",
        }
        V01RegressionInvalid V01_REGRESSION_INVALID "MCP_RES_REGRESSION_INVALID" {
            rule: "MCPRES-REG-001 (v0.1)",
            title: "Executable regression not proven",
            meaning: "v0.1 bundle: a provided regression lacks one of: generated without execution, contained output, deterministic dependencies, fails when broken, passes when fixed, secret scan passed, and a recorded regression execution.",
            example: "\"regression\": {\"provided\": true, \"brokenConditionFails\": false, ...}",
            fix: "Provide a regression that demonstrably fails on the broken condition and passes after the fix.",
        }
    }
}
