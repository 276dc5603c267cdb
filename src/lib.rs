//! mcpres: a validator, signer and evidence producer for MCP-RES v0.2.
#![forbid(unsafe_code)]

pub mod explain;
pub mod json;
pub mod schema;
