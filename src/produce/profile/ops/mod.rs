//! `mcpres profile run operational-resilience`: `mcp-res/operational-resilience/v1`
//! evaluated from a real run against a stdio MCP server under a declared workload
//! (spec/operational.md). The profile engine (`produce::profile`) runs the checks
//! ([`checks::CHECKS`]) as it runs every profile's; this module adds the workload
//! ([`workload`]), the load generator ([`load`]), the `/proc` sampler ([`sample`]), the
//! injection shim ([`shim`]) and the measurement report ([`report`]).

pub mod backpressure;
pub mod checks;
pub mod downstream;
pub mod ending;
pub mod http;
pub mod load;
pub mod overload;
pub mod recovery;
pub mod report;
pub mod sample;
pub mod skew;
pub mod storage;
pub mod workload;

use std::sync::{Mutex, OnceLock};

use serde_json::Value;

use crate::produce::profile::check::Ctx;

/// The first argument that makes `mcpres` the null subject the generator's ceiling is
/// measured on.
pub const NULL_ARG: &str = "__mcpres-ops-null";

/// What an operational run measures once and several checks read.
#[derive(Default)]
pub struct Shared {
    ceiling: OnceLock<Value>,
    soak: Mutex<Option<Value>>,
}

impl Shared {
    /// The generator's ceiling, measured on first use.
    pub fn ceiling(&self, ctx: &Ctx) -> Value {
        self.ceiling
            .get_or_init(|| {
                let w = ctx
                    .ops
                    .as_deref()
                    .expect("an operational run has a workload");
                let d = std::time::Duration::from_millis(1000);
                if ctx.web.is_some() {
                    http::ceiling(ctx, w, d)
                } else {
                    load::ceiling(ctx, w, d)
                }
                .unwrap_or(Value::Null)
            })
            .clone()
    }

    /// The positive soak's transcript, made by `make` on first use.
    pub fn positive_soak(&self, make: impl FnOnce() -> Value) -> Value {
        let mut s = self.soak.lock().expect("soak lock");
        if s.is_none() {
            *s = Some(make());
        }
        s.clone().expect("made above")
    }

    /// Everything measured once, for the measurement report.
    pub fn measured(&self) -> (Option<Value>, Option<Value>) {
        (
            self.ceiling.get().cloned(),
            self.soak.lock().expect("soak lock").clone(),
        )
    }
}

impl std::fmt::Debug for Shared {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ops::Shared")
    }
}
