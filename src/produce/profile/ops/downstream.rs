//! The operational checks about a downstream the subject declares it calls (the
//! workload's `[downstream]`: the environment variable it reads the URL from and a tool
//! call that makes a request there): `downstream-failure` and `partial-outage`. The
//! runner serves that URL itself, through the shim, with the downstream stub
//! ([`crate::produce::drive::downstream`]) on loopback beside the subject (in its
//! sandbox when it has one): nothing leaves the machine. Without the declaration each is
//! NOT_OBSERVED with the reason. Each stores its raw record under `observation.ops`;
//! its label is [`crate::judge::ops::reading`] of that record.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::checks::{
    live_after, record, reply_label, started, take_record, three_unless_unobserved, workload,
};
use super::workload::DownstreamDecl;
use crate::judge::ops as reading;
use crate::model::vocab::ProbeOutcome::*;
use crate::produce::drive::downstream::control_line;
use crate::produce::profile::check::{CheckRun, Ctx};
use crate::produce::profile::probe::{Probe, Reply};

/// The declared call, sent and waited for up to the answer window: its id, and how it
/// was answered.
fn call(ctx: &Ctx, probe: &mut Probe, d: &DownstreamDecl) -> (Value, Reply) {
    let (id, line) = ctx.line(
        "tools/call",
        json!({"name": d.call_tool, "arguments": d.call_arguments}),
    );
    probe.send(line);
    let reply = probe.reply(&id, ctx.answer);
    (id, reply)
}

fn succeeded(r: &Reply) -> bool {
    matches!(r, Reply::Result(m) if m.pointer("/result/isError") != Some(&json!(true)))
}

/// The declared call `n` times in a fresh process of the subject (the stub in the
/// phase `rec`'s injection names), then a liveness request: `rec` gets `callIds` and
/// `afterId`; the observation is returned.
fn calls_once(ctx: &Ctx, mut rec: Value, d: &DownstreamDecl, n: usize) -> Value {
    if ctx.web.is_some() {
        let call = json!({"name": d.call_tool, "arguments": d.call_arguments});
        return super::http::calls(ctx, rec, &call, n);
    }
    let (mut probe, open) = match started(ctx, &mut rec) {
        Ok(p) => p,
        Err(observation) => return observation,
    };
    if matches!(open, Reply::Result(_)) {
        let mut ids = Vec::new();
        let mut closed = false;
        for _ in 0..n {
            let (id, reply) = call(ctx, &mut probe, d);
            ids.push(id);
            if matches!(reply, Reply::Closed) {
                closed = true;
                break;
            }
        }
        rec["callIds"] = json!(ids);
        if !closed {
            live_after(ctx, &mut probe, &mut rec);
        }
    }
    ctx.finish(probe, json!({"ops": rec}))
}

/// The taxonomy's dependency-failure is triggered twice: the declared call is made
/// twice with the downstream down.
const TRIGGERS: usize = 2;

fn failure(ctx: &Ctx, role: &str) -> Value {
    let w = workload(ctx);
    let d = w.downstream.as_ref().expect("checked by the caller");
    let mut rec = record(ctx, "downstream-failure", role, "downstream");
    if role == "positive" {
        // The same call with the downstream up first, in a process of its own: it must
        // work, and reach the stub.
        let injected = json!({"downstreamEnv": d.url_env, "downstreamPhase": "up"});
        let mut transcript = calls_once(ctx, json!({"injected": injected}), d, 1);
        let base = take_record(&mut transcript);
        rec["baseline"] = json!({
            "injected": base["injected"],
            "callId": base["callIds"][0],
            "transcript": transcript,
        });
    }
    calls_once(ctx, rec, d, TRIGGERS)
}

/// One session through an outage: up, down, up again (see
/// [`crate::judge::ops`]'s outage reading for what each step must show).
fn outage(ctx: &Ctx, role: &str) -> Value {
    let w = workload(ctx);
    let d = w.downstream.as_ref().expect("checked by the caller");
    let mut rec = record(ctx, "partial-outage", role, "outage");
    if ctx.web.is_some() {
        let call = json!({"name": d.call_tool, "arguments": d.call_arguments});
        return super::http::outage(ctx, rec, &call, Duration::from_millis(d.recovery_ms));
    }
    let (mut probe, open) = match started(ctx, &mut rec) {
        Ok(p) => p,
        Err(observation) => return observation,
    };
    if matches!(open, Reply::Result(_)) {
        let (before, reply) = call(ctx, &mut probe, d);
        rec["beforeId"] = before;
        rec["before"] = json!(reply_label(&reply));
        if succeeded(&reply) {
            probe.send(control_line("down"));
            let (during, reply) = call(ctx, &mut probe, d);
            rec["duringId"] = during;
            rec["during"] = json!(reply_label(&reply));
            if !matches!(reply, Reply::Closed) {
                live_after(ctx, &mut probe, &mut rec);
            }
            probe.send(control_line("up"));
            // Retried every tenth of the recovery time (at least 100 ms) until it
            // succeeds, for up to twice the recovery time: a late success is told apart
            // from none.
            let recovery = Duration::from_millis(d.recovery_ms);
            let every = (recovery / 10).max(Duration::from_millis(100));
            let back = Instant::now();
            let mut retries = Vec::new();
            while !matches!(reply, Reply::Closed) && back.elapsed() < recovery * 2 {
                let (id, reply) = call(ctx, &mut probe, d);
                retries.push(id);
                if succeeded(&reply) || matches!(reply, Reply::Closed) {
                    break;
                }
                std::thread::sleep(every);
            }
            rec["retryIds"] = json!(retries);
        }
    }
    ctx.finish(probe, json!({"ops": rec}))
}

/// NOT_OBSERVED when the workload declares no downstream.
fn undeclared(ctx: &Ctx, check: &'static str) -> Option<CheckRun> {
    workload(ctx).downstream.is_none().then(|| {
        CheckRun::not_observed(
            check,
            "the workload declares no downstream for the subject ([downstream] urlEnv, callTool, callArguments, recoveryMs): nothing says what it calls",
        )
    })
}

pub fn downstream_failure(ctx: &Ctx) -> CheckRun {
    let check = "downstream-failure";
    if let Some(not) = undeclared(ctx, check) {
        return not;
    }
    // A declared call that fails with the downstream up, or never reaches it, leaves
    // nothing to read: not observed, with what the positive's record says.
    three_unless_unobserved(
        check,
        reading::DOWNSTREAM_FAILURE_REPORTED,
        (Reject, reading::DOWNSTREAM_FALSE_SUCCESS),
        (Accept, reading::DOWNSTREAM_CALL_SERVED),
        |role| failure(ctx, role),
    )
}

pub fn partial_outage(ctx: &Ctx) -> CheckRun {
    let check = "partial-outage";
    if let Some(not) = undeclared(ctx, check) {
        return not;
    }
    three_unless_unobserved(
        check,
        reading::OUTAGE_RECOVERED,
        (Reject, reading::OUTAGE_NOT_RECOVERED),
        (Accept, reading::OUTAGE_RECOVERED),
        |role| outage(ctx, role),
    )
}
