//! `mcpres serve`: the reference server's flags, turned into the library's
//! [`ServeArgs`].

use std::net::IpAddr;
use std::path::PathBuf;

use clap::{Args, ValueEnum};

use mcpres::server::{AuthArgs, AuthDefect, FaultSpec, KNOWN_REVISIONS, ServeArgs, TransportKind};

/// `--transport`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum TransportArg {
    /// Newline-delimited JSON-RPC on stdin/stdout.
    Stdio,
    /// Streamable HTTP on a loopback address, endpoint `/mcp`.
    Http,
}

/// `--auth`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum AuthArg {
    /// An OAuth 2.1 protected resource whose access tokens a loopback
    /// authorization server (`--auth-issuer`) issues.
    Loopback,
}

/// `--auth-defect`: each switches off one property of the protected resource.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum AuthDefectArg {
    /// Tokens for another audience are accepted.
    AcceptWrongAudience,
    /// Expired tokens are accepted.
    AcceptExpired,
    /// Token signatures (and key ids) are not checked.
    SkipSignature,
    /// The client's Authorization header is forwarded to `{issuer}/passthrough-probe`.
    TokenPassthrough,
    /// Bearer tokens are written to stderr.
    LogToken,
    /// Bearer tokens are appended to /tmp/mcpres-token-store.log.
    StoreToken,
    /// The protected-resource metadata names http://192.0.2.1/ as an authorization server.
    OffOriginMetadata,
    /// A 401 carries no WWW-Authenticate header.
    NoWwwAuthenticate,
    /// The authorization server metadata's `issuer` is not compared at start.
    WrongIssuerMetadata,
    /// A token's `iss` is not compared with the configured issuer.
    AcceptWrongIssuer,
    /// The required scopes (`--auth-scope`) are not checked.
    IgnoreScope,
    /// A refusal echoes the presented token (body) and its client_id claim (challenge).
    EchoTokenInError,
}

impl From<AuthDefectArg> for AuthDefect {
    fn from(d: AuthDefectArg) -> AuthDefect {
        match d {
            AuthDefectArg::AcceptWrongAudience => AuthDefect::AcceptWrongAudience,
            AuthDefectArg::AcceptExpired => AuthDefect::AcceptExpired,
            AuthDefectArg::SkipSignature => AuthDefect::SkipSignature,
            AuthDefectArg::TokenPassthrough => AuthDefect::TokenPassthrough,
            AuthDefectArg::LogToken => AuthDefect::LogToken,
            AuthDefectArg::StoreToken => AuthDefect::StoreToken,
            AuthDefectArg::OffOriginMetadata => AuthDefect::OffOriginMetadata,
            AuthDefectArg::NoWwwAuthenticate => AuthDefect::NoWwwAuthenticate,
            AuthDefectArg::WrongIssuerMetadata => AuthDefect::WrongIssuerMetadata,
            AuthDefectArg::AcceptWrongIssuer => AuthDefect::AcceptWrongIssuer,
            AuthDefectArg::IgnoreScope => AuthDefect::IgnoreScope,
            AuthDefectArg::EchoTokenInError => AuthDefect::EchoTokenInError,
        }
    }
}

/// Arguments of `mcpres serve`.
#[derive(Debug, Clone, Args)]
pub struct ServeCli {
    /// Transport to serve on.
    #[arg(long, value_enum, default_value_t = TransportArg::Stdio)]
    pub transport: TransportArg,
    /// TCP port for `--transport http`; 0 picks an ephemeral port (printed on stderr).
    #[arg(long, default_value_t = 0)]
    pub port: u16,
    /// Address to bind for `--transport http`; must be a loopback address.
    #[arg(long, default_value = "127.0.0.1")]
    pub bind: IpAddr,
    /// Protocol revisions to accept (repeatable or comma-separated).
    #[arg(long = "revision", value_delimiter = ',', default_values_t = KNOWN_REVISIONS.map(String::from))]
    pub revisions: Vec<String>,
    /// Inject a fault: `ID[@TRIGGER]`, TRIGGER is `request-N` (default `request-2`),
    /// `method-NAME`, `tool-NAME` or `always`. Repeatable; the first match wins.
    #[arg(long = "fault", value_name = "ID[@TRIGGER]")]
    pub faults: Vec<FaultSpec>,
    /// Seed of every seeded effect (corrupted byte position, prefix length, ...).
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Write the injection log (JSON Lines) to this new file (must not exist).
    #[arg(long, value_name = "PATH")]
    pub injection_log: Option<PathBuf>,
    /// Operation budget in milliseconds (`cancellation` fires at half of it).
    #[arg(long, default_value_t = 1000)]
    pub budget_ms: u64,
    /// Delay of `delayed-response`, in milliseconds.
    #[arg(long, default_value_t = 75)]
    pub delay_ms: u64,
    /// Directory where `cleanup-failure` leaves its retained handle (default: system temp dir).
    #[arg(long, value_name = "DIR")]
    pub residue_dir: Option<PathBuf>,
    /// Largest accepted message (stdio line or HTTP body), in bytes.
    #[arg(long, default_value_t = 4 * 1024 * 1024)]
    pub max_message_bytes: usize,
    /// Most requests in flight at once; more are rejected as overloaded.
    #[arg(long, default_value_t = 64)]
    pub max_in_flight: usize,
    /// At most N requests (the opening excepted) served in any span of MS milliseconds;
    /// more are refused as rate limited (`-32000`, `data.retryAfterMs`; over HTTP, 429
    /// with `Retry-After`).
    #[arg(long, value_name = "N/MS", value_parser = mcpres::server::rate::parse)]
    pub rate_limit: Option<(usize, u64)>,
    /// List a `store` tool that writes files to DIR (an existing directory): a
    /// temporary file, synced, then renamed; a failed write answers isError with the
    /// system's reason and leaves nothing.
    #[arg(long, value_name = "DIR")]
    pub state_dir: Option<PathBuf>,
    /// List a `fetch` tool that POSTs to the downstream whose base URL (`http://` only)
    /// is in the environment variable VAR when it is called; a downstream that fails
    /// (refused, 2 s without an answer, or not 2xx) answers isError with the reason.
    #[arg(long, value_name = "VAR")]
    pub downstream_env: Option<String>,
    /// `--transport http`: milliseconds a connection may take to send a request's headers
    /// (an idle keep-alive connection is closed after it too).
    /// The default stays below `profile run`'s `--idle-timeout-ms` (5000), so
    /// a stalled request is closed within the bound the `timeout` check holds
    /// servers to.
    #[arg(long, value_name = "MS", default_value_t = 3_000)]
    pub header_read_timeout_ms: u64,
    /// `--transport http`: milliseconds a POST body may take to arrive once its headers are
    /// in; a slower body is answered 408 and its connection closed.
    #[arg(long, value_name = "MS", default_value_t = 30_000)]
    pub body_read_timeout_ms: u64,
    /// `--transport http`: most TCP connections served at once; further connections wait,
    /// unaccepted, until one closes.
    #[arg(long, value_name = "COUNT", default_value_t = 64)]
    pub max_connections: usize,
    /// `--transport http`: require a synthetic bearer credential, read at start from the
    /// environment variable NAME (at least 16 visible ASCII bytes). Every request without
    /// `Authorization: Bearer <it>` gets 401. The value is never printed or logged.
    #[arg(long, value_name = "NAME")]
    pub bearer_env: Option<String>,
    /// `--transport http`: serve as an OAuth 2.1 protected resource (RFC 9728 metadata at
    /// `/.well-known/oauth-protected-resource/mcp`; every other request needs an access token
    /// from `--auth-issuer`, in the Authorization header).
    #[arg(
        long,
        value_enum,
        requires = "auth_issuer",
        conflicts_with = "bearer_env"
    )]
    pub auth: Option<AuthArg>,
    /// With `--auth loopback`: the authorization server's issuer, an http:// URL on a loopback
    /// IP address. Its RFC 8414 metadata and JWKS are fetched at start; the metadata must name
    /// exactly this issuer.
    #[arg(long, value_name = "URL", requires = "auth")]
    pub auth_issuer: Option<String>,
    /// With `--auth loopback`: this resource's identifier, the audience its tokens must name
    /// (default `http://ADDR:PORT/mcp` of the bound listener).
    #[arg(long, value_name = "URI", requires = "auth")]
    pub auth_resource: Option<String>,
    /// With `--auth loopback`: a scope every request's token must grant (repeatable).
    #[arg(long = "auth-scope", value_name = "SCOPE", requires = "auth")]
    pub auth_scopes: Vec<String>,
    /// With `--auth loopback`: switch on a deliberate defect (repeatable), for tests that a
    /// runner notices it.
    #[arg(
        long = "auth-defect",
        value_enum,
        value_name = "NAME",
        requires = "auth"
    )]
    pub auth_defects: Vec<AuthDefectArg>,
}

impl From<ServeCli> for ServeArgs {
    fn from(a: ServeCli) -> ServeArgs {
        ServeArgs {
            transport: match a.transport {
                TransportArg::Stdio => TransportKind::Stdio,
                TransportArg::Http => TransportKind::Http,
            },
            port: a.port,
            bind: a.bind,
            revisions: a.revisions,
            faults: a.faults,
            seed: a.seed,
            injection_log: a.injection_log,
            budget_ms: a.budget_ms,
            delay_ms: a.delay_ms,
            residue_dir: a.residue_dir,
            max_message_bytes: a.max_message_bytes,
            max_in_flight: a.max_in_flight,
            rate_limit: a.rate_limit,
            state_dir: a.state_dir,
            downstream_env: a.downstream_env,
            header_read_timeout_ms: a.header_read_timeout_ms,
            body_read_timeout_ms: a.body_read_timeout_ms,
            max_connections: a.max_connections,
            bearer_env: a.bearer_env,
            auth: a.auth.map(|AuthArg::Loopback| AuthArgs {
                issuer: a.auth_issuer.unwrap_or_default(),
                resource: a.auth_resource,
                scopes: a.auth_scopes,
                defects: a.auth_defects.into_iter().map(AuthDefect::from).collect(),
            }),
        }
    }
}
