//! Strict reader and the `mcp-res-json-utf16-v1` canonical writer.
