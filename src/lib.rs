//! mcpres: a validator, signer and evidence producer for MCP-RES v0.2,
//! the MCP Reliability Evidence Standard.
//!
//! The validator path (`json`, `diag`, `schema`, `model`, `attest`, `bundle`, `validate`) needs no
//! async runtime; the reference server sits behind the `server` feature.
#![forbid(unsafe_code)]

pub mod attest;
pub mod bundle;
pub mod diag;
pub mod explain;
pub mod fsio;
pub mod json;
pub mod model;
pub mod produce;
pub mod profiles;
pub mod schema;
pub mod validate;

#[cfg(feature = "server")]
pub mod server;
