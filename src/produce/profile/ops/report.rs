//! The measurement report of an operational run (`artifacts/measurement.json`,
//! spec/operational.md, "The measurement report"): the generator and its measured
//! ceiling, the scenario and workload, the clock, the positive soak's latency summary,
//! errors by reason, peak memory and handle snapshots, the runtime, platform,
//! architecture and runner. It claims no production capacity and no statistical
//! confidence: it describes one bounded run.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use super::workload::Workload;
use crate::judge::ops::{judged_latencies, quantile};

/// The report's `schemaVersion`.
pub const SCHEMA: &str = "mcpres.ops-measurement/1";

/// The report, from the workload, the generator's ceiling and the positive soak's
/// transcript (either may be missing when no soak check ran).
pub fn measurement(
    w: &Workload,
    ceiling: Option<&Value>,
    soak: Option<&Value>,
    runtime: &str,
) -> Value {
    let rec = soak.and_then(|t| t.pointer("/observation/ops"));
    let mut latency = Value::Null;
    let mut errors: BTreeMap<String, u64> = BTreeMap::new();
    let (mut peak_rss, mut first, mut last) = (0u64, Value::Null, Value::Null);
    if let Some(rec) = rec {
        let (lat, failed, total) = judged_latencies(rec);
        latency = json!({
            "judgedRequests": total,
            "withoutResult": failed,
            "minUs": lat.first().copied().unwrap_or(0),
            "medianUs": quantile(&lat, 0.5),
            "p95Us": quantile(&lat, 0.95),
            "p99Us": quantile(&lat, 0.99),
            "maxUs": lat.last().copied().unwrap_or(0),
            "histogram": histogram(&lat),
        });
        for r in rec["requests"].as_array().into_iter().flatten() {
            let o = r[5].as_str().unwrap_or("none");
            if o != "result" {
                *errors.entry(o.to_string()).or_default() += 1;
            }
        }
        let samples = rec["samples"].as_array().cloned().unwrap_or_default();
        peak_rss = samples
            .iter()
            .filter_map(|s| s[2].as_u64())
            .max()
            .unwrap_or(0);
        let snap = |s: Option<&Value>| {
            s.map_or(Value::Null, |s| {
                json!({"atMs": s[0], "ops": s[1], "rssKib": s[2], "fds": s[3], "listeners": s[4], "children": s[5]})
            })
        };
        first = snap(samples.first());
        last = snap(samples.last());
    }
    json!({
        "schemaVersion": SCHEMA,
        "generator": {
            "name": "mcpres ops load generator",
            "version": env!("CARGO_PKG_VERSION"),
            "model": "open loop: request n due at n / rate s; sent when due or when fewer than `concurrency` are in flight; latency from the due time (no coordinated omission)",
            "ceiling": ceiling.cloned().unwrap_or(Value::Null),
        },
        "scenario": w.scenario,
        "workloadSha256": w.sha256(),
        "operationMix": w.load.mix,
        "concurrency": w.load.concurrency,
        "ratePerS": w.load.rate_per_s,
        "durationMs": w.load.soak_ms,
        "warmupMs": w.load.warmup_ms,
        "clock": "CLOCK_MONOTONIC (Rust std::time::Instant), microseconds from each subject's start; answers timed by the read that brought them",
        "latency": latency,
        "errorsByReason": errors,
        "peakRssKib": peak_rss,
        "handles": {"first": first, "last": last},
        "runtime": runtime,
        "platform": std::env::consts::OS,
        "architecture": std::env::consts::ARCH,
        "runner": {"name": "mcpres", "version": env!("CARGO_PKG_VERSION")},
        "claims": "One bounded run of a declared workload on this machine. No production capacity, no statistical confidence, no exactly-once delivery follows from it.",
        "positiveSoakSamples": rec.map_or(Value::Null, |r| r["samples"].clone()),
    })
}

/// Latencies (µs) in power-of-two millisecond buckets: `[upper bound ms, count]`.
fn histogram(sorted_us: &[u64]) -> Value {
    let mut buckets: BTreeMap<u64, u64> = BTreeMap::new();
    for &us in sorted_us {
        let ms = us.div_ceil(1000).max(1);
        *buckets.entry(ms.next_power_of_two()).or_default() += 1;
    }
    json!(
        buckets
            .into_iter()
            .map(|(b, n)| json!([b, n]))
            .collect::<Vec<_>>()
    )
}
