//! The load generator: an open-loop schedule over one stdio subject (spec/operational.md,
//! "The load generator"). Request `n` is due at `n / rate` seconds from the soak's start;
//! it is sent then, or as soon as fewer than `concurrency` requests are in flight, and
//! its latency counts from when it was due, not from when it was sent, so a subject that
//! stalls cannot hide the requests it delayed (no coordinated omission). Every request's
//! due, sent and answered times (microseconds, from the reads that brought each answer)
//! and outcome are kept, raw; percentiles and slopes are the judge's
//! (`judge::ops`), from that record.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::sample::{Sample, Sampler};
use super::workload::Workload;
use crate::produce::profile::check::{Ctx, json_line};
use crate::produce::profile::probe::Probe;

/// How one soak went.
pub struct Soak {
    /// `[id, kind, dueUs, sentUs, answeredUs | null, outcome]` per request due during
    /// the soak (`outcome`: `result`, `error:CODE`, `none` for no answer, `unsent` for a
    /// request never sent because `concurrency` requests were still unanswered).
    pub requests: Vec<Value>,
    pub samples: Vec<Sample>,
    /// Sends that went out more than 5 ms after they were due while fewer than
    /// `concurrency` were in flight: the generator's own lateness.
    pub late_sends: u64,
    /// The largest such lateness (µs).
    pub max_lag_us: u64,
    /// The subject closed its stdout during the soak.
    pub ended: bool,
}

impl Soak {
    pub fn record(&self) -> Value {
        json!({
            "requests": self.requests,
            "samples": self.samples.iter().map(|s| s.to_json()).collect::<Vec<_>>(),
            "lateSends": self.late_sends,
            "maxLagUs": self.max_lag_us,
            "stdoutClosed": self.ended,
        })
    }

    /// Put the soak's record into an observation's `rec`, with its `duration`.
    pub fn put(&self, rec: &mut Value, duration: Duration) {
        let r = self.record();
        for k in [
            "requests",
            "samples",
            "lateSends",
            "maxLagUs",
            "stdoutClosed",
        ] {
            rec[k] = r[k].clone();
        }
        rec["durationMs"] = json!(duration.as_millis() as u64);
    }

    /// Answered with a result.
    pub fn served(&self) -> usize {
        self.requests.iter().filter(|r| r[5] == "result").count()
    }
}

/// The request line of kind `kind` under the run's revision.
pub fn request(ctx: &Ctx, kind: &str) -> (Value, Vec<u8>) {
    match kind {
        "live" => ctx.live_line(),
        other => ctx.line(other, json!({})),
    }
}

/// Run the workload's schedule for `duration` against an opened `probe`, sampling the
/// subject's processes when `sample` is set. `drain` bounds the wait for the last answers.
pub fn soak(
    ctx: &Ctx,
    probe: &mut Probe,
    w: &Workload,
    duration: Duration,
    drain: Duration,
    sample: bool,
) -> Soak {
    let rate = u64::from(w.load.rate_per_s);
    let concurrency = w.load.concurrency as usize;
    let total = duration.as_millis() as u64 * rate / 1000;
    let ops = Arc::new(AtomicU64::new(0));
    let t0 = probe.elapsed_us();
    let start = Instant::now();
    let sampler = sample.then(|| {
        Sampler::start(
            probe.pid(),
            Duration::from_millis(w.load.sample_interval_ms),
            Arc::clone(&ops),
            start,
        )
    });
    let mut requests: Vec<Value> = Vec::with_capacity(total as usize);
    let mut pending: HashMap<String, usize> = HashMap::new();
    let mut from = probe.stdout_bytes().len();
    let (mut late_sends, mut max_lag_us) = (0u64, 0u64);
    let mut next: u64 = 0;
    let mut ended = false;
    let until = duration + drain;
    loop {
        let now_us = probe.elapsed_us().saturating_sub(t0);
        let (lines, to) = probe.lines_since(from);
        from = to;
        for (at_us, line) in lines {
            let Ok(m) = serde_json::from_slice::<Value>(&line) else {
                continue;
            };
            let Some(id) = m.get("id") else { continue };
            if let Some(i) = pending.remove(&id.to_string()) {
                let outcome = if m.get("result").is_some() {
                    "result".to_string()
                } else {
                    format!(
                        "error:{}",
                        m.pointer("/error/code")
                            .and_then(Value::as_i64)
                            .unwrap_or(0)
                    )
                };
                requests[i][4] = json!(at_us.saturating_sub(t0));
                requests[i][5] = json!(outcome);
                ops.fetch_add(1, Ordering::SeqCst);
            }
        }
        while next < total && next * 1_000_000 / rate <= now_us && pending.len() < concurrency {
            let due = next * 1_000_000 / rate;
            let kind = w.kind_of(next).to_string();
            let (id, line) = request(ctx, &kind);
            let sent = probe.elapsed_us().saturating_sub(t0);
            let lag = sent.saturating_sub(due);
            if lag > 5_000 {
                late_sends += 1;
                max_lag_us = max_lag_us.max(lag);
            }
            probe.send(line);
            pending.insert(id.to_string(), requests.len());
            requests.push(json!([id, kind, due, sent, null, "none"]));
            next += 1;
        }
        if next >= total && pending.is_empty() {
            break;
        }
        if probe.stdout_closed() {
            ended = true;
            // What it wrote before it closed is read on the next pass.
            if probe.lines_since(from).0.is_empty() {
                break;
            }
            continue;
        }
        if start.elapsed() >= until {
            break;
        }
        std::thread::sleep(Duration::from_micros(500));
    }
    // A request that fell due during the soak and was never sent (the subject held
    // `concurrency` requests unanswered) is recorded as such: it counts against the
    // subject, never silently dropped.
    while next < total {
        let due = next * 1_000_000 / rate;
        requests.push(json!([null, w.kind_of(next), due, null, null, "unsent"]));
        next += 1;
    }
    let samples = sampler.map(Sampler::stop).unwrap_or_default();
    Soak {
        requests,
        samples,
        late_sends,
        max_lag_us,
        ended,
    }
}

/// The generator's own ceiling: requests per second it sustains against mcpres's null
/// subject (which answers every request at once) at the workload's concurrency, over
/// `duration`, closed-loop (`None` when the null subject could not be run).
pub fn ceiling(ctx: &Ctx, w: &Workload, duration: Duration) -> Option<Value> {
    let me = std::env::current_exe().ok()?;
    let launch = crate::produce::profile::probe::Launch {
        program: me,
        args: vec![super::NULL_ARG.into()],
        env: std::collections::BTreeMap::new(),
        sandbox: None,
    };
    let mut probe = Probe::start(&launch).ok()?;
    let mut fast = w.clone();
    fast.load.rate_per_s = 10_000;
    let t = Instant::now();
    let s = soak(
        ctx,
        &mut probe,
        &fast,
        duration,
        Duration::from_secs(2),
        false,
    );
    let secs = t.elapsed().as_secs_f64().max(1e-3);
    let (_, transcript) = probe.finish();
    drop(transcript);
    let served = s.served() as f64;
    Some(json!({
        "against": "mcpres's null subject (answers every request at once)",
        "concurrency": w.load.concurrency,
        "durationMs": duration.as_millis() as u64,
        "served": s.served(),
        "ceilingPerS": (served / secs) as u64,
    }))
}

/// mcpres's null subject: answers every JSON-RPC request on stdin with an empty result
/// (`tools/list`: an empty list), at once; the generator's ceiling is measured on it.
pub fn null_main() -> u8 {
    use std::io::{BufRead, Write};
    let stdin = std::io::stdin();
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    for line in stdin.lock().split(b'\n') {
        let Ok(line) = line else { return 0 };
        let Ok(m) = serde_json::from_slice::<Value>(&line) else {
            continue;
        };
        let (Some(id), Some(method)) = (m.get("id"), m.get("method").and_then(Value::as_str))
        else {
            continue;
        };
        let result = match method {
            "tools/list" => json!({"tools": []}),
            "initialize" => {
                json!({"protocolVersion": m.pointer("/params/protocolVersion").cloned().unwrap_or(json!("2025-11-25")), "capabilities": {}, "serverInfo": {"name": "mcpres-null", "version": env!("CARGO_PKG_VERSION")}})
            }
            _ => json!({}),
        };
        if out
            .write_all(&json_line(
                &json!({"jsonrpc": "2.0", "id": id, "result": result}),
            ))
            .is_err()
        {
            return 0;
        }
        if out.flush().is_err() {
            return 0;
        }
    }
    0
}
