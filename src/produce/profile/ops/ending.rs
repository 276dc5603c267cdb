//! The operational checks about input that is too large and about how a subject ends:
//! `oversized-input`, `graceful-shutdown`, `forced-shutdown` and `cleanup`. Each stores
//! its raw record under `observation.ops` beside the probe's own events (stdin closed,
//! signals sent, exits, what was found alive at the end); its label is
//! [`crate::judge::ops::reading`] of that record.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::checks::{record, reply_label, started, three, workload};
use crate::judge::ops as reading;
use crate::model::vocab::ProbeOutcome::*;
use crate::produce::profile::check::{CheckRun, Ctx, unknown_method};
use crate::produce::profile::probe::Reply;

/// The key under `_meta` the positive's padding travels in.
const PADDING_KEY: &str = "dev.mcpres/padding";

/// One request line of exactly `bytes` bytes (newline included, or the shortest such
/// line when `bytes` is smaller), with its id written first so that a transcript that
/// keeps only the head of the line still names it.
fn padded_line(ctx: &Ctx, id: &Value, method: &str, bytes: u64) -> Vec<u8> {
    let params = ctx.params(json!({"_meta": {PADDING_KEY: ""}}));
    let params_text = serde_json::to_string(&params).expect("params serialize");
    let head = format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"{method}","params":"#);
    let bare = head.len() + params_text.len() + 2; // the closing brace and the newline
    let pad = usize::try_from(bytes)
        .unwrap_or(usize::MAX)
        .saturating_sub(bare);
    let empty = format!(r#""{PADDING_KEY}":"""#);
    let filled = format!(r#""{PADDING_KEY}":"{}""#, "a".repeat(pad));
    let params_text = params_text.replacen(&empty, &filled, 1);
    format!("{head}{params_text}}}\n").into_bytes()
}

/// `bytes` bytes that are not JSON (no id anywhere: an answer with a result is to
/// nothing mcpres sent), seeded, one line.
fn garbage_line(seed: u64, bytes: u64) -> Vec<u8> {
    let mut x = seed | 1;
    let mut out = Vec::with_capacity(bytes as usize);
    out.push(b'{');
    while (out.len() as u64) + 1 < bytes {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        // Printable bytes and, now and then, one that is not UTF-8.
        let b = (x % 96) as u8;
        out.push(if b == 95 { 0xC3 } else { b + 32 });
        if out.last() == Some(&b'\n') {
            out.pop();
        }
    }
    out.push(b'\n');
    out
}

fn oversized(ctx: &Ctx, role: &str) -> Value {
    let w = workload(ctx);
    let mut rec = record(ctx, "oversized-input", role, "oversized");
    if ctx.web.is_some() {
        rec["oversizedBytes"] = json!(w.load.oversized_bytes);
        let id = ctx.id();
        let (msg, body) = match role {
            "positive" => {
                let live = if ctx.modern() { "tools/list" } else { "ping" };
                (
                    ctx.request(&id, live, json!({})),
                    padded_line(ctx, &id, live, w.load.oversized_bytes),
                )
            }
            "mutant" => {
                let method = unknown_method();
                (
                    ctx.request(&id, &method, json!({})),
                    padded_line(ctx, &id, &method, w.load.oversized_bytes),
                )
            }
            _ => (
                json!({}),
                garbage_line(w.controls.seed, w.load.oversized_bytes),
            ),
        };
        rec["oversizedId"] = if role == "negative" { Value::Null } else { id };
        return super::http::oversized(ctx, rec, &msg, body);
    }
    let (mut probe, open) = match started(ctx, &mut rec) {
        Ok(p) => p,
        Err(observation) => return observation,
    };
    rec["oversizedBytes"] = json!(w.load.oversized_bytes);
    if matches!(open, Reply::Result(_)) {
        let big_id = ctx.id();
        let line = match role {
            "positive" => {
                let live = if ctx.modern() { "tools/list" } else { "ping" };
                padded_line(ctx, &big_id, live, w.load.oversized_bytes)
            }
            "mutant" => padded_line(ctx, &big_id, &unknown_method(), w.load.oversized_bytes),
            _ => garbage_line(w.controls.seed, w.load.oversized_bytes),
        };
        rec["oversizedId"] = if role == "negative" {
            Value::Null
        } else {
            big_id
        };
        probe.send(line);
        let (after, line) = ctx.live_line();
        probe.send(line);
        // Parsing a large line takes time: a second per MiB on top of the measured
        // answer window, so a slow parser is not read as a dead one.
        let bound = ctx.answer + Duration::from_millis((w.load.oversized_bytes >> 20) * 1000);
        let reply = probe.reply(&after, bound);
        rec["afterId"] = after;
        rec["after"] = json!(reply_label(&reply));
    }
    ctx.finish(probe, json!({"ops": rec}))
}

pub fn oversized_input(ctx: &Ctx) -> CheckRun {
    three(
        "oversized-input",
        reading::OVERSIZED_THROUGH,
        (Reject, reading::OVERSIZED_LINE_REFUSED),
        (Reject, reading::OVERSIZED_REQUEST_REFUSED),
        |role| oversized(ctx, role),
    )
}

fn burst(ctx: &Ctx, role: &str) -> Value {
    let w = workload(ctx);
    let mut rec = record(ctx, "bounded-concurrency", role, "burst");
    if ctx.web.is_some() {
        return super::http::burst(ctx, rec, w.load.concurrency * w.controls.defect_factor);
    }
    let (mut probe, open) = match started(ctx, &mut rec) {
        Ok(p) => p,
        Err(observation) => return observation,
    };
    if matches!(open, Reply::Result(_)) {
        let n = w.load.concurrency * w.controls.defect_factor;
        let mut ids = Vec::new();
        let mut bytes = Vec::new();
        for _ in 0..n {
            let (id, line) = ctx.live_line();
            ids.push(id);
            bytes.extend(line);
        }
        // One write: the requests arrive together.
        probe.send(bytes);
        // One deadline for the burst: every request was sent at once, so each is
        // waited for the answer bound from its send (not that bound once per lost one).
        let until = Instant::now() + ctx.answer;
        let mut got = 0;
        for id in &ids {
            let left = until.saturating_duration_since(Instant::now());
            if !matches!(probe.reply(id, left), Reply::Silent | Reply::Closed) {
                got += 1;
            }
        }
        rec["burstIds"] = json!(ids);
        rec["answeredWithinWait"] = json!(got);
    }
    ctx.finish(probe, json!({"ops": rec}))
}

pub fn bounded_concurrency(ctx: &Ctx) -> CheckRun {
    let held = reading::BURST_ANSWERED;
    three(
        "bounded-concurrency",
        held,
        (NoEffect, reading::BURST_UNANSWERED),
        (Accept, held),
        |role| burst(ctx, role),
    )
}

/// How one of the ending checks ends its subject.
#[derive(Clone, Copy, PartialEq)]
enum Ending {
    /// Requests sent, stdin closed; the runner waits for an exit by itself.
    StdinClosed,
    /// SIGTERM with stdin open; the runner waits for an exit on it.
    Sigterm,
    /// The probe's ordinary end (stdin closed, then SIGTERM, then the group killed);
    /// the end record says what was left alive.
    Ordinary,
}

fn ending(ctx: &Ctx, check: &str, role: &str, how: Ending) -> Value {
    let w = workload(ctx);
    let kind = match how {
        Ending::StdinClosed => "shutdown",
        Ending::Sigterm => "term",
        Ending::Ordinary => "cleanup",
    };
    let mut rec = record(ctx, check, role, kind);
    if ctx.web.is_some() {
        let end = match how {
            Ending::Sigterm => super::http::End::Sigterm,
            Ending::StdinClosed => super::http::End::SessionEnded,
            Ending::Ordinary => super::http::End::Ordinary,
        };
        return super::http::ending(ctx, rec, end, how == Ending::Ordinary && role == "negative");
    }
    let (mut probe, open) = match started(ctx, &mut rec) {
        Ok(p) => p,
        Err(observation) => return observation,
    };
    if matches!(open, Reply::Result(_)) {
        let mut ids = Vec::new();
        for _ in 0..w.load.in_flight_at_shutdown {
            let (id, line) = ctx.live_line();
            ids.push(id);
            probe.send(line);
        }
        match how {
            Ending::StdinClosed => {
                probe.close_stdin();
                // The wait is twice the budget and a second: the reading compares the
                // stored times with the budget; the wait only decides when to stop.
                let wait = Duration::from_millis(w.budgets.shutdown_ms * 2 + 1000);
                if probe.wait_exit(wait).is_none() {
                    probe.note(crate::judge::stdio::NO_EXIT_AFTER_STDIN_CLOSE);
                }
            }
            Ending::Sigterm => {
                // Answered first: the signal comes to a subject that is serving.
                if let Some(last) = ids.last() {
                    let _ = probe.reply(last, ctx.answer);
                }
                let wait = Duration::from_millis(w.budgets.term_ms * 2 + 1000);
                probe.signal_and_wait(rustix::process::Signal::TERM, "SIGTERM", wait);
            }
            Ending::Ordinary => {
                if let Some(last) = ids.last() {
                    let _ = probe.reply(last, ctx.answer);
                }
            }
        }
        rec["inFlightIds"] = json!(ids);
    }
    if how == Ending::Ordinary && role == "negative" {
        ctx.finish_injected(probe, json!({"ops": rec}))
    } else {
        ctx.finish(probe, json!({"ops": rec}))
    }
}

fn ending_check(
    ctx: &Ctx,
    check: &'static str,
    how: Ending,
    held: &'static str,
    refused: &'static str,
) -> CheckRun {
    three(check, held, (Reject, refused), (Accept, held), |role| {
        ending(ctx, check, role, how)
    })
}

pub fn graceful_shutdown(ctx: &Ctx) -> CheckRun {
    ending_check(
        ctx,
        "graceful-shutdown",
        Ending::StdinClosed,
        reading::SHUTDOWN_WITHIN_BUDGET,
        reading::SHUTDOWN_OVER_BUDGET,
    )
}

pub fn forced_shutdown(ctx: &Ctx) -> CheckRun {
    ending_check(
        ctx,
        "forced-shutdown",
        Ending::Sigterm,
        reading::TERM_WITHIN_BUDGET,
        reading::TERM_OVER_BUDGET,
    )
}

pub fn cleanup(ctx: &Ctx) -> CheckRun {
    ending_check(
        ctx,
        "cleanup",
        Ending::Ordinary,
        reading::CLEANUP_COMPLETE,
        reading::RESIDUE_LEFT,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_garbage_line_is_one_line_of_its_size_that_is_not_json() {
        let l = garbage_line(7, 5000);
        assert_eq!(l.len(), 5000);
        assert_eq!(l.iter().filter(|b| **b == b'\n').count(), 1);
        assert!(serde_json::from_slice::<Value>(&l).is_err());
        assert_eq!(garbage_line(7, 5000), l);
        assert_ne!(garbage_line(8, 5000), l);
    }
}
