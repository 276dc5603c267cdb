//! Strict reader and the `mcp-res-json-utf16-v1` canonical writer, shared by every command.

pub mod canonical;
pub mod doc;
pub mod layout;
pub mod locate;
pub mod reader;
pub(crate) mod scan;
pub mod time;

pub use canonical::{CanonicalError, digest, sha256_hex};
pub use doc::Doc;
pub use reader::{Limits, ReadError, ReadErrorKind, parse, parse_default};
