//! The operational checks about faults a serving subject must get through:
//! `timeout` (a client that gives up on a request and cancels it), `duplicate-delivery`
//! (one request delivered twice), `process-crash` (killed with a request in flight,
//! then started afresh) and `restart` (ended through its input, started afresh, the
//! same surface declared). Each stores its raw record under `observation.ops` beside the
//! probe's own chunks and events; its label is [`crate::judge::ops::reading`] of that
//! record.

use std::time::Duration;

use serde_json::{Value, json};

use super::checks::{live_after, record, reply_label, shimmed, started, three, workload};
use crate::judge::ops as reading;
use crate::model::vocab::ProbeOutcome::*;
use crate::produce::profile::check::{CheckRun, Ctx, json_line};
use crate::produce::profile::probe::{Launch, Probe, Reply};

/// `notifications/cancelled` for request `id`, as a client that stops waiting sends it.
fn cancel(ctx: &Ctx, probe: &mut Probe, id: &Value, reason: &str) {
    let params = ctx.params(json!({"requestId": id, "reason": reason}));
    probe.send(json_line(&json!({
        "jsonrpc": "2.0",
        "method": "notifications/cancelled",
        "params": params,
    })));
}

fn timeout(ctx: &Ctx, role: &str) -> Value {
    let w = workload(ctx);
    let mut rec = record(ctx, "timeout", role, "timeout");
    if ctx.web.is_some() {
        let deadline = Duration::from_millis(w.budgets.request_timeout_ms);
        return super::http::timeout(ctx, rec, deadline);
    }
    let (mut probe, open) = match started(ctx, &mut rec) {
        Ok(p) => p,
        Err(observation) => return observation,
    };
    if matches!(open, Reply::Result(_)) {
        // The client's deadline: the workload's, never a guess at the machine's pace.
        let deadline = Duration::from_millis(w.budgets.request_timeout_ms);
        let (first, line) = ctx.live_line();
        probe.send(line);
        match probe.reply(&first, deadline) {
            Reply::Silent => {
                // Given up on: cancelled, as a client whose timeout passed does.
                cancel(ctx, &mut probe, &first, "request timed out");
                rec["timedOut"] = first.clone();
            }
            Reply::Closed => {}
            _ => {
                // A request cancelled at once: the subject may answer it or not, but
                // must go on serving.
                let (gone, line) = ctx.live_line();
                probe.send(line);
                cancel(ctx, &mut probe, &gone, "no longer needed");
                rec["cancelledAtOnce"] = gone;
            }
        }
        let (after, line) = ctx.live_line();
        probe.send(line);
        if matches!(probe.reply(&after, deadline), Reply::Silent) {
            cancel(ctx, &mut probe, &after, "request timed out");
        }
        rec["judgedIds"] = json!([first, after]);
    }
    ctx.finish(probe, json!({"ops": rec}))
}

pub fn timeout_check(ctx: &Ctx) -> CheckRun {
    let held = reading::ANSWERED_BY_DEADLINE;
    three(
        "timeout",
        held,
        (Reject, reading::DEADLINE_MISSED),
        (Accept, held),
        |role| timeout(ctx, role),
    )
}

fn duplicate(ctx: &Ctx, role: &str) -> Value {
    let mut rec = record(ctx, "duplicate-delivery", role, "duplicate");
    if ctx.web.is_some() {
        return super::http::duplicate(ctx, rec);
    }
    let (mut probe, open) = match started(ctx, &mut rec) {
        Ok(p) => p,
        Err(observation) => return observation,
    };
    if matches!(open, Reply::Result(_)) {
        let (dup, line) = ctx.live_line();
        let mut twice = line.clone();
        twice.extend(line);
        // One write: the same request delivered twice, as a transport that retries.
        probe.send(twice);
        let _ = probe.reply(&dup, ctx.answer);
        live_after(ctx, &mut probe, &mut rec);
        rec["duplicatedId"] = dup;
    }
    ctx.finish(probe, json!({"ops": rec}))
}

pub fn duplicate_delivery(ctx: &Ctx) -> CheckRun {
    let held = reading::DUPLICATE_BOUNDED;
    three(
        "duplicate-delivery",
        held,
        (NoEffect, reading::DUPLICATE_STALLED),
        (Accept, held),
        |role| duplicate(ctx, role),
    )
}

/// `tools/list` under the evaluated revision (at 2026-07-28 the liveness request is
/// that listing already).
pub(super) fn tools_line(ctx: &Ctx) -> (Value, Vec<u8>) {
    if ctx.modern() {
        ctx.live_line()
    } else {
        ctx.line("tools/list", json!({}))
    }
}

/// A fresh process of the subject from `launch`, opened and asked for its tools; its
/// transcript is kept whole.
fn fresh(ctx: &Ctx, launch: Result<Launch, String>) -> Value {
    fresh_with(ctx, launch, || {})
}

/// [`fresh`], with `meanwhile` done once it has listed its tools, before it ends (while
/// it still runs).
pub(super) fn fresh_with(
    ctx: &Ctx,
    launch: Result<Launch, String>,
    meanwhile: impl FnOnce(),
) -> Value {
    let mut r = json!({});
    match launch.and_then(|l| ctx.start_with(&l)) {
        Err(why) => r["startError"] = json!(why),
        Ok(mut probe) => {
            let open = ctx.open(&mut probe);
            r["open"] = json!(reply_label(&open));
            let (after, line) = tools_line(ctx);
            if matches!(open, Reply::Result(_)) {
                probe.send(line);
                let _ = probe.reply(&after, ctx.answer);
            }
            r["afterId"] = after;
            meanwhile();
            r["transcript"] = ctx.finish(probe, json!({}));
        }
    }
    r
}

fn restart(ctx: &Ctx, role: &str) -> Value {
    let w = workload(ctx);
    let mut rec = record(ctx, "restart", role, "restart");
    let end = Duration::from_millis(w.budgets.shutdown_ms * 2 + 1000);
    if ctx.web.is_some() {
        return super::http::restart(ctx, rec, end);
    }
    let (mut probe, open) = match started(ctx, &mut rec) {
        Ok(p) => p,
        Err(observation) => return observation,
    };
    let opened = matches!(open, Reply::Result(_));
    if opened {
        let (tools, line) = tools_line(ctx);
        probe.send(line);
        let _ = probe.reply(&tools, ctx.answer);
        rec["toolsId"] = tools;
        // MCP's stdio shutdown: the input closed, the exit waited for (how long it
        // took is `graceful-shutdown`'s to judge; the probe's end takes over after).
        probe.close_stdin();
        let _ = probe.wait_exit(end);
    }
    let injected = rec["injected"].clone();
    let mut artifact = ctx.finish(probe, json!({"ops": rec}));
    if opened {
        // The same subject, with the same injection, started afresh.
        artifact["observation"]["ops"]["restart"] = fresh(ctx, shimmed(ctx, &injected));
    }
    artifact
}

pub fn restart_check(ctx: &Ctx) -> CheckRun {
    let held = reading::RESTART_SAME_SURFACE;
    three(
        "restart",
        held,
        (Reject, reading::SURFACE_CHANGED),
        (Accept, held),
        |role| restart(ctx, role),
    )
}

/// How long a killed subject is given to be seen gone.
const CRASH_WAIT: Duration = Duration::from_secs(5);

fn crash(ctx: &Ctx, role: &str) -> Value {
    let mut rec = record(ctx, "process-crash", role, "crash");
    if ctx.web.is_some() {
        return super::http::crash(ctx, rec, role == "negative", CRASH_WAIT);
    }
    let (mut probe, open) = match started(ctx, &mut rec) {
        Ok(p) => p,
        Err(observation) => return observation,
    };
    let serving = matches!(open, Reply::Result(_));
    if serving {
        let (served, line) = ctx.live_line();
        probe.send(line);
        let _ = probe.reply(&served, ctx.answer);
        rec["servedId"] = served;
        let (in_flight, line) = ctx.live_line();
        probe.send(line);
        rec["inFlightId"] = in_flight;
        let _ = probe.crash(CRASH_WAIT);
    }
    let summary = json!({"ops": rec});
    // The crashed probe ends first, so what outlived it is found and recorded before
    // anything else starts.
    let mut artifact = if role == "negative" {
        ctx.finish_injected(probe, summary)
    } else {
        ctx.finish(probe, summary)
    };
    if serving {
        artifact["observation"]["ops"]["restart"] = fresh(ctx, Ok(ctx.stdio_launch().clone()));
    }
    artifact
}

pub fn process_crash(ctx: &Ctx) -> CheckRun {
    three(
        "process-crash",
        reading::CRASH_RECOVERED,
        (Reject, reading::CRASH_RESIDUE),
        (Accept, reading::CRASH_RECOVERED),
        |role| crash(ctx, role),
    )
}
