//! MCP protocol vocabulary every producer shares: the protocol revisions a run
//! speaks and the `_meta` keys of the 2026-07-28 revision. Plain names only.

/// The protocol revision the built-in scenarios speak by default.
pub const PROTOCOL_REVISION: &str = "2025-11-25";

/// The MCP protocol revision a run speaks (`mcpres run --revision`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Revision {
    /// `initialize` handshake, then requests on that session.
    #[default]
    V2025_11_25,
    /// Stateless: `server/discover`, then requests that each carry their
    /// own `_meta` (version, client capabilities); no session.
    V2026_07_28,
}

impl Revision {
    pub fn as_str(self) -> &'static str {
        match self {
            Revision::V2025_11_25 => PROTOCOL_REVISION,
            Revision::V2026_07_28 => "2026-07-28",
        }
    }

    /// 2026-07-28: no handshake, no session.
    pub fn is_stateless(self) -> bool {
        self == Revision::V2026_07_28
    }
}

/// `_meta` key of the protocol version every 2026-07-28 request carries.
pub const META_PROTOCOL_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
/// `_meta` key of the client capabilities every 2026-07-28 request carries.
pub const META_CLIENT_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";
/// `_meta` key of the client identity (optional) on 2026-07-28 requests.
pub const META_CLIENT_INFO: &str = "io.modelcontextprotocol/clientInfo";
/// `_meta` key of the server identity in a `server/discover` result.
pub const META_SERVER_INFO: &str = "io.modelcontextprotocol/serverInfo";
