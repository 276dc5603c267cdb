//! `mcpres serve`: the reference MCP server with seeded, deterministic fault injection.
//!
//! Layers, from the wire inwards:
//! - a transport pump (`stdio.rs`: raw lines on stdin/stdout; `http.rs`: Streamable HTTP
//!   on a loopback listener) that frames, bounds and parses raw bytes and applies the
//!   fault plan below the typed layer;
//! - the official Rust SDK (`rmcp`) for the protocol path, both revisions
//!   (`2025-11-25` with `initialize`, `2026-07-28` stateless with `server/discover`);
//! - the typed handler (`handler.rs`) with the deterministic tools, resources and prompts.
//!
//! With `--auth loopback`, `protected.rs` makes the HTTP transport an OAuth 2.1
//! protected resource: its access-token check sits in the HTTP pump, before the
//! fault plan.
//!
//! Diagnostics go to stderr only; stdout carries protocol frames only.

pub mod downstream;
pub mod fault;
pub mod handler;
pub mod http;
pub mod oauth;
pub mod protected;
pub mod rate;
pub mod stdio;

use std::net::IpAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use rmcp::model::ProtocolVersion;

pub use fault::{FaultId, FaultSpec, Trigger};
pub use protected::{AuthArgs, AuthDefect};

/// Revisions this server can speak.
pub const KNOWN_REVISIONS: [&str; 2] = ["2025-11-25", "2026-07-28"];

/// The transport `mcpres serve` speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TransportKind {
    /// Newline-delimited JSON-RPC on stdin/stdout.
    Stdio,
    /// Streamable HTTP on a loopback address, endpoint `/mcp`.
    Http,
}

/// What `mcpres serve` runs with (its flags are parsed in the binary's
/// `cli` module; see `mcpres serve --help` for each one).
#[derive(Debug, Clone)]
pub struct ServeArgs {
    pub transport: TransportKind,
    /// TCP port for HTTP; 0 picks an ephemeral port.
    pub port: u16,
    /// Address to bind for HTTP; must be a loopback address.
    pub bind: IpAddr,
    /// Protocol revisions to accept.
    pub revisions: Vec<String>,
    /// Faults to inject; the first match wins.
    pub faults: Vec<FaultSpec>,
    /// Seed of every seeded effect.
    pub seed: u64,
    /// Write the injection log (JSON Lines) to this new file.
    pub injection_log: Option<PathBuf>,
    /// Operation budget in milliseconds (`cancellation` fires at half of it).
    pub budget_ms: u64,
    /// Delay of `delayed-response`, in milliseconds.
    pub delay_ms: u64,
    /// Directory where `cleanup-failure` leaves its retained handle.
    pub residue_dir: Option<PathBuf>,
    /// Largest accepted message (stdio line or HTTP body), in bytes.
    pub max_message_bytes: usize,
    /// Most requests in flight at once.
    pub max_in_flight: usize,
    /// `--rate-limit N/MS`: at most N requests (the opening excepted) served in any
    /// span of MS milliseconds; more are refused as rate limited.
    pub rate_limit: Option<(usize, u64)>,
    /// `--state-dir DIR`: lists the `store` tool, which writes files there.
    pub state_dir: Option<PathBuf>,
    /// `--downstream-env VAR`: lists the `fetch` tool, which POSTs to the URL in `$VAR`.
    pub downstream_env: Option<String>,
    /// `--transport http`: milliseconds a connection may take to send a
    /// request's headers (counted from when the server starts waiting for
    /// them, so an idle keep-alive connection is closed after it too).
    pub header_read_timeout_ms: u64,
    /// `--transport http`: milliseconds a POST body may take to arrive once
    /// its headers are in; a slower body is answered 408 and its connection
    /// closed.
    pub body_read_timeout_ms: u64,
    /// `--transport http`: most TCP connections served at once; further
    /// connections wait, unaccepted, until one closes.
    pub max_connections: usize,
    /// `--transport http`: the name of an environment variable holding a
    /// synthetic bearer credential. When set, every request must carry
    /// `Authorization: Bearer <that value>`. Only the name is held here; the
    /// value is read (and reduced to its SHA-256) when the server starts.
    pub bearer_env: Option<String>,
    /// `--transport http`: `--auth loopback`, an OAuth 2.1 protected resource
    /// whose tokens a loopback authorization server issues (see
    /// [`protected`]). Excludes `bearer_env`.
    pub auth: Option<AuthArgs>,
}

impl Default for ServeArgs {
    fn default() -> Self {
        ServeArgs {
            transport: TransportKind::Stdio,
            port: 0,
            bind: IpAddr::from([127, 0, 0, 1]),
            revisions: KNOWN_REVISIONS.map(String::from).to_vec(),
            faults: Vec::new(),
            seed: 0,
            injection_log: None,
            budget_ms: 1000,
            delay_ms: 75,
            residue_dir: None,
            max_message_bytes: 4 * 1024 * 1024,
            max_in_flight: 64,
            rate_limit: None,
            state_dir: None,
            downstream_env: None,
            header_read_timeout_ms: 3_000,
            body_read_timeout_ms: 30_000,
            max_connections: 64,
            bearer_env: None,
            auth: None,
        }
    }
}

/// Errors of `mcpres serve`.
#[derive(Debug, thiserror::Error)]
pub enum ServerError {
    #[error("refusing to bind {0}: only loopback addresses are allowed")]
    NonLoopbackBind(IpAddr),
    #[error("unsupported protocol revision `{0}` (supported: 2025-11-25, 2026-07-28)")]
    UnsupportedRevision(String),
    #[error("no protocol revision selected")]
    NoRevision,
    #[error("invalid option: {0}")]
    InvalidOption(String),
    #[error("cannot create injection log {path}: {source}")]
    InjectionLog {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("cannot start the async runtime: {0}")]
    Runtime(std::io::Error),
    #[error("cannot listen on {addr}: {source}")]
    Bind {
        addr: std::net::SocketAddr,
        source: std::io::Error,
    },
    #[error("--auth loopback: {0}")]
    Auth(String),
    #[error("transport I/O error: {0}")]
    Io(#[from] std::io::Error),
}

/// Validated configuration shared by the transports.
#[derive(Debug)]
pub(crate) struct Config {
    pub args: ServeArgs,
    pub versions: Vec<ProtocolVersion>,
    pub engine: Arc<fault::FaultEngine>,
    pub shared: Arc<handler::SharedState>,
    /// The SHA-256 of the bearer credential every HTTP request must carry
    /// (`--bearer-env`), or `None` when the server requires none.
    pub bearer: Option<BearerDigest>,
    /// `--auth loopback`: the issuer, checked to be a loopback http URL.
    pub auth_issuer: Option<protected::LoopbackUrl>,
}

/// Shortest bearer credential `--bearer-env` accepts, in bytes.
pub const MIN_BEARER_BYTES: usize = 16;

/// The SHA-256 of the synthetic bearer credential. The credential itself is
/// dropped (and zeroed) once hashed; this digest is never printed, logged or
/// put in an error (its `Debug` form is redacted).
#[derive(Clone)]
pub(crate) struct BearerDigest([u8; 32]);

impl std::fmt::Debug for BearerDigest {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("BearerDigest(<redacted>)")
    }
}

impl BearerDigest {
    fn of(token: &[u8]) -> BearerDigest {
        use sha2::{Digest, Sha256};
        BearerDigest(Sha256::digest(token).into())
    }

    /// Does `presented` hash to this digest? The comparison of the two
    /// digests takes the same time wherever they differ.
    pub fn matches(&self, presented: &[u8]) -> bool {
        use subtle::ConstantTimeEq;
        let other = BearerDigest::of(presented);
        self.0.ct_eq(&other.0).into()
    }
}

/// Read the bearer credential from the environment variable `name`. Errors
/// name the variable, never its value.
fn read_bearer(name: &str) -> Result<BearerDigest, ServerError> {
    use std::os::unix::ffi::OsStringExt;
    use zeroize::Zeroize;
    let Some(value) = std::env::var_os(name) else {
        return Err(ServerError::InvalidOption(format!(
            "--bearer-env {name}: the variable is not set"
        )));
    };
    let mut bytes = value.into_vec();
    let problem = if bytes.len() < MIN_BEARER_BYTES {
        Some(format!("is shorter than {MIN_BEARER_BYTES} bytes"))
    } else if !bytes.iter().all(|b| b.is_ascii_graphic()) {
        Some("holds a byte that is not visible ASCII (a header cannot carry it)".to_owned())
    } else {
        None
    };
    let digest = BearerDigest::of(&bytes);
    bytes.zeroize();
    match problem {
        Some(p) => Err(ServerError::InvalidOption(format!(
            "--bearer-env {name}: the credential {p}"
        ))),
        None => Ok(digest),
    }
}

impl Config {
    pub fn modern_enabled(&self) -> bool {
        self.args.revisions.iter().any(|r| r == "2026-07-28")
    }

    /// A revision other than the preferred one (for the stale cache key).
    pub fn other_revision(&self) -> &'static str {
        if self.modern_enabled() {
            "2025-11-25"
        } else {
            "2026-07-28"
        }
    }

    pub fn handler(&self) -> handler::RefServer {
        handler::RefServer::new(self.shared.clone(), self.versions.clone())
    }
}

fn validate(args: ServeArgs) -> Result<Config, ServerError> {
    if !args.bind.is_loopback() {
        return Err(ServerError::NonLoopbackBind(args.bind));
    }
    if args.revisions.is_empty() {
        return Err(ServerError::NoRevision);
    }
    let mut versions = Vec::new();
    // Newest first: rmcp answers `initialize` with the first legacy version it supports.
    for known in KNOWN_REVISIONS.iter().rev() {
        if args.revisions.iter().any(|r| r == known) {
            versions.push(match *known {
                "2026-07-28" => ProtocolVersion::V_2026_07_28,
                _ => ProtocolVersion::V_2025_11_25,
            });
        }
    }
    if let Some(bad) = args
        .revisions
        .iter()
        .find(|r| !KNOWN_REVISIONS.contains(&r.as_str()))
    {
        return Err(ServerError::UnsupportedRevision(bad.clone()));
    }
    if args.max_message_bytes < 1024 {
        return Err(ServerError::InvalidOption(
            "--max-message-bytes must be at least 1024".into(),
        ));
    }
    if args.max_connections == 0 {
        return Err(ServerError::InvalidOption(
            "--max-connections must be at least 1".into(),
        ));
    }
    if args.header_read_timeout_ms == 0 || args.body_read_timeout_ms == 0 {
        return Err(ServerError::InvalidOption(
            "--header-read-timeout-ms and --body-read-timeout-ms must be at least 1".into(),
        ));
    }
    if let Some(dir) = &args.state_dir
        && !dir.is_dir()
    {
        return Err(ServerError::InvalidOption(format!(
            "--state-dir {}: not an existing directory",
            dir.display()
        )));
    }
    if let Some(var) = &args.downstream_env
        && (var.is_empty() || !var.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_'))
    {
        return Err(ServerError::InvalidOption(format!(
            "--downstream-env {var:?}: not an environment variable's name ([A-Za-z0-9_]+)"
        )));
    }
    if args.max_in_flight == 0 {
        return Err(ServerError::InvalidOption(
            "--max-in-flight must be at least 1".into(),
        ));
    }
    let auth_issuer = match (&args.auth, args.transport) {
        (None, _) => None,
        (Some(_), TransportKind::Stdio) => {
            return Err(ServerError::InvalidOption(
                "--auth needs --transport http".into(),
            ));
        }
        (Some(_), _) if args.bearer_env.is_some() => {
            return Err(ServerError::InvalidOption(
                "--auth and --bearer-env exclude each other".into(),
            ));
        }
        (Some(auth), TransportKind::Http) => Some(protected::validate_args(auth)?),
    };
    let bearer = match (&args.bearer_env, args.transport) {
        (None, _) => None,
        (Some(_), TransportKind::Stdio) => {
            return Err(ServerError::InvalidOption(
                "--bearer-env needs --transport http".into(),
            ));
        }
        (Some(name), TransportKind::Http) => Some(read_bearer(name)?),
    };
    let params = fault::FaultParams {
        budget_ms: args.budget_ms,
        delay_ms: args.delay_ms,
        residue_dir: args.residue_dir.clone().unwrap_or_else(std::env::temp_dir),
    };
    let transport = match args.transport {
        TransportKind::Stdio => "stdio",
        TransportKind::Http => "http",
    };
    let engine = fault::FaultEngine::new(
        args.faults.clone(),
        args.seed,
        params,
        args.injection_log.as_deref(),
        transport,
    )?;
    let shared = Arc::new(
        handler::SharedState::with_state_dir(args.state_dir.clone())
            .with_downstream_env(args.downstream_env.clone()),
    );
    Ok(Config {
        args,
        versions,
        engine: Arc::new(engine),
        shared,
        bearer,
        auth_issuer,
    })
}

/// Run `mcpres serve` until stdin EOF (stdio), SIGTERM or Ctrl-C. Blocking: builds its
/// own tokio runtime.
pub fn run(args: ServeArgs) -> Result<(), ServerError> {
    let config = Arc::new(validate(args)?);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(ServerError::Runtime)?;
    let result = runtime.block_on(async {
        match config.args.transport {
            TransportKind::Stdio => stdio::serve(config.clone()).await,
            TransportKind::Http => http::serve(config.clone()).await,
        }
    });
    config
        .engine
        .record_event("stop", serde_json::json!({"ok": result.is_ok()}));
    // The stdin reader may sit in a blocking read; do not wait for it.
    runtime.shutdown_timeout(Duration::from_millis(200));
    result
}

/// Resolves when SIGTERM or SIGINT (Ctrl-C) arrives. The handlers are installed when
/// this function is called (not when the future is first polled), so call it before
/// announcing readiness.
pub(crate) fn shutdown_signal() -> impl std::future::Future<Output = ()> {
    use tokio::signal::unix::{SignalKind, signal};
    let term = signal(SignalKind::terminate());
    let int = signal(SignalKind::interrupt());
    async move {
        match (term, int) {
            (Ok(mut term), Ok(mut int)) => {
                tokio::select! {
                    _ = term.recv() => {}
                    _ = int.recv() => {}
                }
            }
            _ => {
                eprintln!("mcpres serve: cannot install signal handlers; use stdin EOF to stop");
                std::future::pending::<()>().await
            }
        }
    }
}

/// A request whose `params` are not an object, or lack a member its method cannot do without
/// (`tools/call` and `prompts/get`: `name`; `resources/read`: `uri`; each a
/// string). The SDK would answer such a request with `-32601` (method not
/// found), because the request no longer matches its typed form; JSON-RPC
/// asks for `-32602` (invalid params), which the transport pumps answer
/// instead, before the fault plan counts the request.
pub(crate) fn invalid_params(msg: &serde_json::Value) -> Option<serde_json::Value> {
    let method = msg.get("method")?.as_str()?;
    msg.get("id")?;
    // MCP params are an object: anything else is refused here, under the
    // request's own id (the SDK would answer it without any id).
    if msg.get("params").is_some_and(|p| !p.is_object()) {
        return Some(fault::error_response(
            &msg["id"],
            -32602,
            &format!("Invalid params: {method} params must be an object"),
            Some(serde_json::json!({"method": method})),
        ));
    }
    let member = match method {
        "tools/call" | "prompts/get" => "name",
        "resources/read" => "uri",
        _ => return None,
    };
    let present = msg
        .get("params")
        .and_then(|p| p.get(member))
        .is_some_and(serde_json::Value::is_string);
    if present {
        return None;
    }
    Some(fault::error_response(
        &msg["id"],
        -32602,
        &format!("Invalid params: {method} needs a string {member}"),
        Some(serde_json::json!({"method": method, "missing": member})),
    ))
}
