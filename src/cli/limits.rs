//! Resource limits (see `spec/limits.md`): for `validate` and `verify` the
//! per-document JSON limits, the per-artifact byte limit of the directory form,
//! and a global timeout that ends a stuck run with exit 2; the same timeout
//! for `pack`, `sign` and `digest`; the bounds of `unpack`.

use std::path::Path;
use std::time::Duration;

use mcpres::bundle::dir::{DEFAULT_MAX_ARTIFACT_BYTES, DirLimits};
use mcpres::json::Limits;
use mcpres::produce::pack::{DEFAULT_MAX_UNPACK_TOTAL_BYTES, UnpackLimits};

/// The highest `--max-depth` accepted: the reader, the canonicalizer and the
/// schema checks recurse once per level, and validation threads have 2 MiB
/// stacks; 512 levels keep a wide margin (a debug build overflows near 2,000).
pub const MAX_DEPTH_CEILING: u64 = 512;

/// Default for `--timeout`, in seconds.
pub const DEFAULT_TIMEOUT_SECS: u64 = 900;

#[derive(Debug, Clone, clap::Args)]
pub struct LimitArgs {
    /// Largest JSON document read, in bytes.
    #[arg(long, value_name = "BYTES", default_value_t = Limits::default().max_bytes)]
    pub max_bytes: usize,
    /// Deepest JSON nesting accepted (the top-level value is depth 0; at most 512).
    #[arg(
        long,
        value_name = "LEVELS",
        default_value_t = Limits::default().max_depth as u64,
        value_parser = clap::value_parser!(u64).range(0..=MAX_DEPTH_CEILING)
    )]
    pub max_depth: u64,
    /// Most JSON values (containers and scalars, not keys) in one document.
    #[arg(long, value_name = "COUNT", default_value_t = Limits::default().max_nodes)]
    pub max_nodes: usize,
    /// Longest JSON string (keys included), in UTF-16 code units after unescaping.
    #[arg(long, value_name = "UNITS", default_value_t = Limits::default().max_string_units)]
    pub max_string_units: usize,
    /// Largest declared length of one artifact of a bundle directory that is hashed.
    #[arg(long, value_name = "BYTES", default_value_t = DEFAULT_MAX_ARTIFACT_BYTES)]
    pub max_artifact_bytes: u64,
    /// Give up (exit 2) when the whole run takes longer than this many seconds; 0 = never.
    #[arg(long, value_name = "SECONDS", default_value_t = DEFAULT_TIMEOUT_SECS)]
    pub timeout: u64,
}

impl LimitArgs {
    /// The per-document JSON limits.
    pub fn json(&self) -> Limits {
        Limits {
            max_bytes: self.max_bytes,
            // At most MAX_DEPTH_CEILING (clap enforces the range), so this fits.
            max_depth: usize::try_from(self.max_depth).unwrap_or(usize::MAX),
            max_nodes: self.max_nodes,
            max_string_units: self.max_string_units,
        }
    }

    /// The directory-form limits.
    pub fn dir(&self) -> DirLimits {
        DirLimits {
            max_artifact_bytes: self.max_artifact_bytes,
        }
    }

    /// Start the global timeout: a watchdog thread that ends the process with
    /// exit 2 and a message if the run is still going when it fires. A
    /// watchdog (rather than checks between steps) also ends a run stuck inside
    /// a system call, such as a read from a hung network file system.
    pub fn start_timeout(&self, command: &'static str) {
        start_watchdog(command, "validation", self.timeout);
    }
}

/// Start a watchdog that ends the process with exit 2 after `seconds` (none for 0).
fn start_watchdog(command: &'static str, what: &'static str, seconds: u64) {
    if seconds == 0 {
        return;
    }
    let limit = Duration::from_secs(seconds);
    std::thread::spawn(move || {
        std::thread::sleep(limit);
        errln!(
            "mcpres {command}: MCP_RES_INPUT_INVALID: {what} did not finish within {seconds} s (--timeout); giving up"
        );
        std::process::exit(2);
    });
}

/// `--timeout` for the other commands that read a bundle directory (`pack`,
/// `sign`, `digest`): the same default and meaning as for `validate`.
#[derive(Debug, Clone, clap::Args)]
pub struct TimeoutArg {
    /// Give up (exit 2) when reading a bundle directory takes longer than this many seconds; 0 = never.
    #[arg(long, value_name = "SECONDS", default_value_t = DEFAULT_TIMEOUT_SECS)]
    pub timeout: u64,
}

impl TimeoutArg {
    /// Start the watchdog when `input` is a bundle directory (one file is
    /// bounded by the per-document limits and never blocks).
    pub fn start_for(&self, command: &'static str, input: &Path) {
        if std::fs::symlink_metadata(input).is_ok_and(|m| m.is_dir()) {
            start_watchdog(command, command, self.timeout);
        }
    }
}

/// The bounds of `unpack` (see `spec/limits.md`, "Writing outputs").
#[derive(Debug, Clone, clap::Args)]
pub struct UnpackLimitArgs {
    /// Largest declared length of one artifact that is written.
    #[arg(long, value_name = "BYTES", default_value_t = DEFAULT_MAX_ARTIFACT_BYTES)]
    pub max_artifact_bytes: u64,
    /// Most bytes written in all (the three documents included).
    #[arg(long, value_name = "BYTES", default_value_t = DEFAULT_MAX_UNPACK_TOTAL_BYTES)]
    pub max_total_bytes: u64,
}

impl UnpackLimitArgs {
    pub fn bounds(&self) -> UnpackLimits {
        UnpackLimits {
            max_artifact_bytes: self.max_artifact_bytes,
            max_total_bytes: self.max_total_bytes,
        }
    }
}
