//! The subject driver: the one floor every producer (the harness, the
//! profile, OAuth and field runners, and the runners still to come) stands on
//! to start, watch, talk to and end a subject, and to store what it saw.
//!
//! - `http`: the one raw HTTP/1.1 client (request writer, response parser,
//!   a blocking and an async face) that never repairs bytes.
//! - `proc`: the one reader of `/proc` (a process's state, parent and group,
//!   the process tree, listening sockets).
//! - `redact`: the one redactor every stored byte passes through.

pub mod http;
pub mod proc;
pub mod redact;
