//! The operational checks about the limits a subject declares (the workload's
//! `[subject]`: how many requests it serves at once and a tool call that holds one of
//! those places): `overload-rejection`, `retry-after` and `queue-saturation`; and its
//! `[rateLimit]`: `rate-limiting`. Without that declaration each is NOT_OBSERVED with
//! the reason: nothing says what to overload.
//! Each stores its raw record under `observation.ops`; its label is
//! [`crate::judge::ops::reading`] of that record.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::checks::{live_after, record, started, three_unless_unobserved, workload};
use super::workload::SubjectDecl;
use crate::judge::ops as reading;
use crate::model::vocab::ProbeOutcome::*;
use crate::produce::profile::check::{CheckRun, Ctx};
use crate::produce::profile::probe::{Probe, Reply};

/// Why a limit check is not observed without a declaration.
const UNDECLARED: &str = "the workload declares no limit for the subject ([subject] maxInFlight, holdTool, holdArguments, holdMs): nothing says what to overload";

/// The most retries `retry-after` makes.
const MAX_RETRIES: usize = 50;
/// The shortest wait between retries, whatever the hint says.
const RETRY_FLOOR: Duration = Duration::from_millis(10);

/// `n` hold calls, written at once; their ids.
fn hold(ctx: &Ctx, probe: &mut Probe, s: &SubjectDecl, n: u32) -> Vec<Value> {
    let mut ids = Vec::new();
    let mut bytes = Vec::new();
    for _ in 0..n {
        let (id, line) = ctx.line(
            "tools/call",
            json!({"name": s.hold_tool, "arguments": s.hold_arguments}),
        );
        ids.push(id);
        bytes.extend(line);
    }
    probe.send(bytes);
    ids
}

fn overload(ctx: &Ctx, check: &str, role: &str) -> Value {
    let w = workload(ctx);
    let s = w.subject.as_ref().expect("checked by the caller");
    let mut rec = record(ctx, check, role, "overload");
    if ctx.web.is_some() {
        let call = json!({"name": s.hold_tool, "arguments": s.hold_arguments});
        let hold = Duration::from_millis(s.hold_ms);
        if check == "queue-saturation" {
            let n = s.max_in_flight * w.controls.defect_factor;
            let wait = hold * w.controls.defect_factor + ctx.answer;
            return super::http::saturate(ctx, rec, &call, n, wait);
        }
        let retry = check == "retry-after";
        return super::http::overload(ctx, rec, &call, s.max_in_flight, hold, retry);
    }
    let (mut probe, open) = match started(ctx, &mut rec) {
        Ok(p) => p,
        Err(observation) => return observation,
    };
    if matches!(open, Reply::Result(_)) {
        probe.keep_more_stdout(1 << 20);
        let hold_for = Duration::from_millis(s.hold_ms);
        if check == "queue-saturation" {
            let holds = hold(
                ctx,
                &mut probe,
                s,
                s.max_in_flight * w.controls.defect_factor,
            );
            let until = Instant::now() + hold_for * w.controls.defect_factor + ctx.answer;
            for id in &holds {
                let _ = probe.reply(id, until.saturating_duration_since(Instant::now()));
            }
            live_after(ctx, &mut probe, &mut rec);
            rec["holdIds"] = json!(holds);
        } else {
            let holds = hold(ctx, &mut probe, s, s.max_in_flight);
            // The holds reach the subject first.
            probe.flushed(ctx.answer);
            let mut over = Vec::new();
            let mut bytes = Vec::new();
            for _ in 0..s.max_in_flight {
                let (id, line) = ctx.live_line();
                over.push(id);
                bytes.extend(line);
            }
            probe.send(bytes);
            // One deadline for the requests over the limit, sent at once.
            let until = Instant::now() + ctx.answer;
            let mut refusals = Vec::new();
            for id in &over {
                let left = until.saturating_duration_since(Instant::now());
                if let Reply::Error(_, body) = probe.reply(id, left) {
                    refusals.push(body);
                }
            }
            if check == "retry-after" && !refusals.is_empty() {
                // Retried after each hint (at least the floor) until a result or the
                // holds are over.
                let until = Instant::now() + hold_for + ctx.answer;
                let mut hint = refusals
                    .iter()
                    .filter_map(reading::retry_hint_ms)
                    .max()
                    .map(Duration::from_millis);
                let mut retries = Vec::new();
                while retries.len() < MAX_RETRIES && Instant::now() < until {
                    std::thread::sleep(hint.unwrap_or(RETRY_FLOOR).max(RETRY_FLOOR));
                    let (id, line) = ctx.live_line();
                    probe.send(line);
                    let reply = probe.reply(&id, ctx.answer);
                    retries.push(id);
                    match reply {
                        Reply::Error(_, body) => {
                            hint = reading::retry_hint_ms(&body).map(Duration::from_millis);
                        }
                        _ => break,
                    }
                }
                rec["retryIds"] = json!(retries);
            }
            let until = Instant::now() + hold_for + ctx.answer;
            for id in &holds {
                let _ = probe.reply(id, until.saturating_duration_since(Instant::now()));
            }
            rec["holdIds"] = json!(holds);
            rec["overIds"] = json!(over);
        }
    }
    ctx.finish(probe, json!({"ops": rec}))
}

fn limit_check(
    ctx: &Ctx,
    check: &'static str,
    held: &'static str,
    refused: (crate::model::vocab::ProbeOutcome, &'static str),
) -> CheckRun {
    if workload(ctx).subject.is_none() {
        return CheckRun::not_observed(check, UNDECLARED);
    }
    // A subject that did not hold its places, or refused nothing over them, does not
    // offer what the check reads: not observed, with what the positive's record says.
    three_unless_unobserved(check, held, refused, (Accept, held), |role| {
        overload(ctx, check, role)
    })
}

pub fn overload_rejection(ctx: &Ctx) -> CheckRun {
    limit_check(
        ctx,
        "overload-rejection",
        reading::OVERLOAD_REJECTED,
        (NoEffect, reading::OVERLOAD_LOST),
    )
}

pub fn retry_after(ctx: &Ctx) -> CheckRun {
    limit_check(
        ctx,
        "retry-after",
        reading::RETRY_HONOURED,
        (Reject, reading::NO_RETRY_HINT),
    )
}

pub fn queue_saturation(ctx: &Ctx) -> CheckRun {
    limit_check(
        ctx,
        "queue-saturation",
        reading::QUEUE_BOUNDED,
        (NoEffect, reading::QUEUE_LOST),
    )
}

/// Why `rate-limiting` is not observed without a declaration.
const NO_RATE_LIMIT: &str = "the workload declares no rate limit for the subject ([rateLimit] requests, windowMs): nothing says what to exceed";

fn rate(ctx: &Ctx, role: &str) -> Value {
    let w = workload(ctx);
    let r = w.rate_limit.as_ref().expect("checked by the caller");
    let window = Duration::from_millis(r.window_ms);
    let mut rec = record(ctx, "rate-limiting", role, "rate");
    // The burst goes out in rounds of the workload's concurrency (no more than the
    // subject's declared places), each written at once once the round before was
    // answered: a rate is exceeded, never the places.
    let round = w
        .subject
        .as_ref()
        .map_or(w.load.concurrency, |s| {
            s.max_in_flight.min(w.load.concurrency)
        })
        .max(1);
    let total = r.requests * w.controls.defect_factor;
    // Refused at once, or served in this window or later ones: the last of them
    // within as many windows as the burst holds limits, and the answer window.
    let until = window * w.controls.defect_factor + ctx.answer;
    if ctx.web.is_some() {
        return super::http::rate(ctx, rec, window, (round, total), until);
    }
    let (mut probe, open) = match started(ctx, &mut rec) {
        Ok(p) => p,
        Err(observation) => return observation,
    };
    if matches!(open, Reply::Result(_)) {
        // Every answer of the burst is read: at 2026-07-28 the liveness request is the
        // tool list, a few KiB an answer.
        probe.keep_more_stdout(8 << 20);
        // The opening's requests leave the window first.
        std::thread::sleep(window);
        let until = Instant::now() + until;
        let mut last = Instant::now();
        let mut ids = Vec::new();
        while ids.len() < total as usize {
            let mut batch = Vec::new();
            let mut bytes = Vec::new();
            for _ in 0..round.min(total - ids.len() as u32) {
                let (id, line) = ctx.live_line();
                batch.push(id);
                bytes.extend(line);
            }
            probe.send(bytes);
            for id in &batch {
                if !matches!(
                    probe.reply(id, until.saturating_duration_since(Instant::now())),
                    Reply::Silent | Reply::Closed
                ) {
                    last = Instant::now();
                }
            }
            ids.extend(batch);
        }
        // A window after the last answer (and a little more: the stored times are the
        // reader's), every place is free again.
        let due = last + window + Duration::from_millis(20);
        std::thread::sleep(due.saturating_duration_since(Instant::now()));
        live_after(ctx, &mut probe, &mut rec);
        rec["burstIds"] = json!(ids);
    }
    ctx.finish(probe, json!({"ops": rec}))
}

pub fn rate_limiting(ctx: &Ctx) -> CheckRun {
    const CHECK: &str = "rate-limiting";
    if workload(ctx).rate_limit.is_none() {
        return CheckRun::not_observed(CHECK, NO_RATE_LIMIT);
    }
    // A subject too slow for the burst to reach its limit does not offer what the check
    // reads: not observed, with what the positive's record says.
    three_unless_unobserved(
        CHECK,
        reading::RATE_LIMIT_HELD,
        (NoEffect, reading::RATE_LIMIT_LOST),
        (Accept, reading::RATE_LIMIT_HELD),
        |role| rate(ctx, role),
    )
}
