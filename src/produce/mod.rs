//! Producers: code that writes MCP-RES documents. A producer may call the validator to
//! check what it reads or writes; nothing below this layer imports it (see
//! `ARCHITECTURE.md`, "Layers").

pub mod sign;
