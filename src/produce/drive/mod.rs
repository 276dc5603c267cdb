//! The subject driver: the one floor every producer (the harness, the
//! profile, OAuth and field runners, and the runners still to come) stands on
//! to start, watch, talk to and end a subject, and to store what it saw.
//!
//! - `http`: the one raw HTTP/1.1 client (request writer, response parser,
//!   a blocking and an async face) that never repairs bytes.
//! - `spawn`: the one place a subject process is started (a launch, its
//!   own process group, exactly its environment), blocking or async.
//! - `end`: the one group kill, the one termination sequence (TERM, grace,
//!   KILL of the group, the group measured), the subreaper and the one sweep
//!   of adopted orphans.
//! - `proc`: the one reader of `/proc` (a process's state, parent and group,
//!   the process tree, the registry of the subjects started here, TCP
//!   sockets and who holds them).
//! - `ident`: a subject artifact's digest, fresh random names.
//! - `redact`: the one redactor every stored byte passes through.
//! - `sandbox`: the namespaces and overlays a subject runs in, and what it
//!   left there.
//! - `door`: how mcpres reaches a subject listening in a network namespace
//!   of its own (connections opened inside, handed over as sockets).
//! - `shim`: the injection shim an operational run starts a subject through
//!   (a start delay, or a defect of declared size beside the subject in its
//!   process tree, or its answers held), never changing the subject.
//! - `front`: the shim's HTTP front, between the runner and a subject that
//!   serves Streamable HTTP (each connection relayed, each response held).
//! - `downstream`: the loopback HTTP stub the shim serves beside a subject
//!   that declares a downstream (up, down or slow, moved by the runner).

pub mod cache_edit;
pub mod door;
pub mod downstream;
pub mod end;
pub mod front;
pub mod http;
pub mod ident;
pub mod proc;
pub mod redact;
pub mod sandbox;
pub mod shim;
pub mod spawn;
