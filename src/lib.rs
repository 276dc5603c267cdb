//! mcpres: a validator, signer and evidence producer for MCP-RES v0.2,
//! the MCP Reliability Evidence Standard.
//!
//! The validator path (`json`, `diag`, `schema`, `model`, `attest`, `bundle`, `validate`) needs no
//! async runtime; the reference server sits behind the `server` feature.
//!
//! To check documents from your own program, start at [`api`]: [`validate()`],
//! [`verify()`], [`canonicalize()`] and [`digest()`] return what the `mcpres`
//! command prints.
#![forbid(unsafe_code)]

pub mod api;
pub mod attest;
pub mod bundle;
pub mod diag;
pub mod explain;
pub mod fsio;
pub mod json;
pub mod judge;
pub mod model;
pub mod produce;
pub mod profiles;
pub mod schema;
pub mod validate;

#[cfg(feature = "server")]
pub mod server;

pub use api::{canonicalize, digest, validate, verify};
