//! Shared vocabulary of MCP-RES v0.2 documents: bundle paths, media types, evidence classes
//! and observation surfaces. Producers write these values and rules check them.

/// Media type of an observation artifact.
pub const OBSERVATION_MEDIA_TYPE: &str = "application/vnd.mcp-res.observation+json";
/// Path of the evidence envelope inside a bundle directory.
pub const EVIDENCE_PATH: &str = "evidence-envelope.json";
/// Path of the conformance statement inside a bundle directory.
pub const STATEMENT_PATH: &str = "conformance-statement.json";

/// The evidence classes, strongest first.
pub const EVIDENCE_CLASSES: [&str; 5] = [
    "GENUINE_RUNTIME",
    "FIXTURE_BACKED_PROTOCOL",
    "FIXTURE_VERIFIED",
    "INSTALLATION_VERIFIED",
    "DOCUMENTED_ONLY",
];

/// The 14 observation surfaces every coverage record lists exactly once.
pub const SURFACES: [&str; 14] = [
    "MCP_WIRE_MESSAGES",
    "RAW_HTTP_REQUESTS",
    "RAW_HTTP_RESPONSES",
    "STDIO_INPUT_OUTPUT",
    "CHILD_PROCESS_LIFECYCLE",
    "TRANSPORT_DISCONNECTS",
    "RETRIES",
    "FILESYSTEM_OUTPUTS",
    "CLEANUP",
    "GENERATED_REGRESSION_EXECUTION",
    "AUTHORIZATION_REDIRECTS",
    "TOKEN_ENDPOINT",
    "CACHE_BEHAVIOR",
    "SOURCE_EVIDENCE",
];
