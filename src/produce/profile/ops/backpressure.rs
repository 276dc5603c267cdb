//! `backpressure`: the runner stops reading the subject's output, sends requests whose
//! answers fill several pipes, waits, and reads again; every request must then be
//! answered and the subject still serve. Its raw record is stored under
//! `observation.ops`; its label is [`crate::judge::ops::reading`] of that record.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::checks::{live_after, record, started, three_unless_unobserved, workload};
use crate::judge::ops as reading;
use crate::model::vocab::ProbeOutcome::*;
use crate::produce::profile::check::{CheckRun, Ctx};
use crate::produce::profile::probe::Reply;

/// A pipe's usual capacity on Linux.
const PIPE_BYTES: usize = 64 << 10;
/// The answers sent for while the output is unread: this many pipes' worth (the reader
/// may take one more chunk before it stops, and the subject may buffer some).
const PIPES: usize = 3;
/// The most requests sent (when answers are tiny).
const MOST: usize = 6000;
/// How long the runner's reading is held: long enough for a subject to fill the pipes
/// (the verdict does not depend on it: the answers are waited for afterwards).
const HOLD: Duration = Duration::from_secs(1);
/// The requests go out in writes of at most this many bytes (each a stored chunk).
const WRITE_BYTES: usize = 32 << 10;
/// With the subject's places declared, the requests go out that many at a time, this
/// long apart: within its limit, so that its answers (not its refusals) fill the pipes.
const ROUND_GAP: Duration = Duration::from_millis(20);

fn flow(ctx: &Ctx, role: &str) -> Value {
    let mut rec = record(ctx, "backpressure", role, "backpressure");
    if ctx.web.is_some() {
        return super::http::backpressure(ctx, rec, HOLD, WRITE_BYTES);
    }
    let (mut probe, open) = match started(ctx, &mut rec) {
        Ok(p) => p,
        Err(observation) => return observation,
    };
    if matches!(open, Reply::Result(_)) {
        // The larger answer a subject gives to a request without arguments: its tool
        // list when it has one, else the liveness answer.
        let list = |ctx: &Ctx| {
            if ctx.modern() {
                ctx.live_line()
            } else {
                ctx.line("tools/list", json!({}))
            }
        };
        let (id, line) = list(ctx);
        probe.send(line);
        let (kind, size) = match probe.reply(&id, ctx.answer) {
            Reply::Result(m) => ("tools/list", m.to_string().len() + 1),
            _ => {
                let (id, line) = ctx.live_line();
                probe.send(line);
                match probe.reply(&id, ctx.answer) {
                    Reply::Result(m) => ("live", m.to_string().len() + 1),
                    _ => ("live", 0),
                }
            }
        };
        if size > 0 {
            let n = (PIPES * PIPE_BYTES).div_ceil(size).clamp(8, MOST);
            // A subject that declares its places gets no more at once than it takes.
            let round = workload(ctx)
                .subject
                .as_ref()
                .map_or(usize::MAX, |s| s.max_in_flight as usize);
            let mut ids = Vec::with_capacity(n);
            let mut writes: Vec<Vec<u8>> = vec![Vec::new()];
            let mut in_write = 0;
            for _ in 0..n {
                let (id, line) = if kind == "tools/list" {
                    list(ctx)
                } else {
                    ctx.live_line()
                };
                ids.push(id);
                if writes
                    .last()
                    .is_some_and(|w| w.len() + line.len() > WRITE_BYTES)
                    || in_write == round
                {
                    writes.push(Vec::new());
                    in_write = 0;
                }
                in_write += 1;
                writes.last_mut().expect("one write at least").extend(line);
            }
            let sent: usize = writes.iter().map(Vec::len).sum();
            probe.keep_more_stdin(sent + PIPE_BYTES);
            probe.keep_more_stdout(n * size * 2 + PIPE_BYTES);
            probe.pause_stdout(true);
            let paced = round != usize::MAX;
            for w in writes {
                probe.send(w);
                if paced {
                    std::thread::sleep(ROUND_GAP);
                }
            }
            // Held unread for a while: a subject that stops reading its input once its
            // output is full shows it as requests still waiting.
            std::thread::sleep(HOLD);
            rec["pendingAtResume"] = json!(probe.pending_write_bytes());
            probe.pause_stdout(false);
            let until = Instant::now() + ctx.answer + Duration::from_millis(n as u64);
            for id in &ids {
                let _ = probe.reply(id, until.saturating_duration_since(Instant::now()));
            }
            live_after(ctx, &mut probe, &mut rec);
            rec["requestKind"] = json!(kind);
            rec["answerBytes"] = json!(size);
            rec["requestIds"] = json!(ids);
        }
    }
    ctx.finish(probe, json!({"ops": rec}))
}

pub fn backpressure(ctx: &Ctx) -> CheckRun {
    // Answers that never filled the runner's pipe (refusals, or a subject that answers
    // little) exercised nothing: not observed, with what the positive's record says.
    three_unless_unobserved(
        "backpressure",
        reading::BACKPRESSURE_HELD,
        (NoEffect, reading::BACKPRESSURE_LOST),
        (Accept, reading::BACKPRESSURE_HELD),
        |role| flow(ctx, role),
    )
}
