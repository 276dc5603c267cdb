//! Producers: code that writes MCP-RES documents. A producer may call the validator to
//! check what it reads or writes; nothing below this layer imports it (see
//! `ARCHITECTURE.md`, "Layers").

pub mod badge;
pub mod builder;
#[cfg(feature = "server")]
pub mod catalogue;
#[cfg(feature = "server")]
pub mod drive;
#[cfg(feature = "server")]
pub mod field;
#[cfg(feature = "server")]
pub mod harness;
pub mod migrate;
#[cfg(feature = "server")]
pub mod oauth;
pub mod official;
#[cfg(feature = "server")]
pub mod official_run;
pub mod pack;
#[cfg(feature = "server")]
pub mod profile;
pub mod progress;
pub mod report;
pub mod sign;
#[cfg(feature = "server")]
pub mod store;
