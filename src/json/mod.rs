//! Strict reader and the `mcp-res-json-utf16-v1` canonical writer, shared by every command.

pub mod canonical;
pub mod locate;
pub mod reader;

pub use canonical::{digest, sha256_hex, CanonicalError};
pub use reader::{parse, parse_default, Limits, ReadError, ReadErrorKind};
