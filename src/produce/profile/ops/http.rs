//! Operational checks over Streamable HTTP (all 26): the process and leak checks,
//! whose controls act on the
//! process; the bad-input checks, whose controls are what the runner sends; and the
//! checks whose controls act on the conversation (answers held, requests over a limit
//! dropped or refused, a duplicate met, a call claimed, a failure repeated, the listed
//! tools changed) at the shim's front, `drive::front`. The subject (behind the same
//! injection shim as over stdio) serves on a port mcpres picks, and the runner talks to it
//! with the raw HTTP client of the `streamable-http` profile. Each observation's
//! transcript is the server process's own (its events, signals and end record, read as
//! over stdio) with the HTTP conversation's bytes under `http`.

use std::net::TcpListener;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::checks::shimmed;
use super::load::Soak;
use super::sample::Sampler;
use super::workload::Workload;
use crate::produce::profile::check::Ctx;
use crate::produce::profile::probe::Launch;
use crate::produce::profile::web::{Conn, Rec, Resp, Server, Session, Shape};

/// Why a check that mcpres runs over stdio only is not observed over Streamable HTTP.
pub const NOT_OVER_HTTP: &str = "mcpres does not yet drive this check over Streamable HTTP (it is run over stdio: give the subject's stdio command without --http); not observed";

/// The server for one observation, from `launch` (the subject behind its shim).
pub fn serve(ctx: &Ctx, launch: &Launch) -> Server {
    ctx.serve_launch(Some(launch))
}

/// The observation's transcript: the server's process record with the HTTP
/// conversation under `http`.
pub fn transcript(ctx: &Ctx, rec: &Rec, server: Server, injected: bool) -> Value {
    let http = rec.transcript();
    let mut t = ctx
        .stop_counted(server, injected)
        .unwrap_or_else(|| json!({}));
    if let Some(o) = t.as_object_mut() {
        o.remove("observation");
    }
    t["http"] = http;
    t
}

/// One start of the subject over Streamable HTTP: the server started from `launch`,
/// opened with a fresh connection, and stopped. The start's entry (`open`, `ms` from
/// the process's start to the opening's answer, on 2025-11-25 with the `initialized`
/// notification's acknowledgement) and the transcript.
pub fn start(ctx: &Ctx, launch: &Launch, warm_up: bool) -> (Value, Value) {
    let server = serve(ctx, launch);
    let rec = Rec::new(ctx.web().bearer.as_ref());
    let opened = match &server.failed {
        Some(why) => Err(("start-error", why.clone())),
        None => ctx
            .http_open(&rec, &server)
            .map_err(|why| ("no-result", why)),
    };
    let ms = server.probe.as_ref().map(|p| p.elapsed_ms());
    let mut entry = match opened {
        Ok(_) => json!({"open": "result", "ms": ms}),
        Err((label, why)) => json!({"open": label, "why": why}),
    };
    if warm_up {
        entry["warmUp"] = json!(true);
    }
    (entry, transcript(ctx, &rec, server, false))
}

/// The (shimmed) subject of `rec`'s injection served and opened: the server, its
/// conversation's record, and the session when the opening got its result (`rec` gets
/// `open` or `startError`). `Err`: no launch could be made (the observation says why).
fn opened(ctx: &Ctx, rec: &mut Value) -> Result<(Server, Rec, Option<Session>), Value> {
    opened_keeping(ctx, rec, 0)
}

/// [`opened`], the conversation's record storing up to `keep` bytes per direction in
/// full (at least what every record keeps).
fn opened_keeping(
    ctx: &Ctx,
    rec: &mut Value,
    keep: usize,
) -> Result<(Server, Rec, Option<Session>), Value> {
    opened_with(ctx, rec, keep, Vec::new())
}

/// [`opened_keeping`], the subject's sandbox (when it has one) given `faults`.
fn opened_with(
    ctx: &Ctx,
    rec: &mut Value,
    keep: usize,
    faults: Vec<crate::produce::drive::sandbox::Fault>,
) -> Result<(Server, Rec, Option<Session>), Value> {
    let launch = match shimmed(ctx, &rec["injected"]).map(|mut l| {
        if let Some(sandbox) = l.sandbox.as_mut() {
            sandbox.faults = faults;
        }
        l
    }) {
        Ok(l) => l,
        Err(why) => {
            rec["startError"] = json!(why);
            return Err(json!({"observation": {"ops": rec}}));
        }
    };
    Ok(served(ctx, &launch, rec, keep))
}

/// The server of `launch` served and opened: the server, its conversation's record
/// (storing up to `keep` bytes per direction in full), and the session when the opening
/// got its result (`rec` gets `open` or `startError`).
fn served(
    ctx: &Ctx,
    launch: &Launch,
    rec: &mut Value,
    keep: usize,
) -> (Server, Rec, Option<Session>) {
    let server = serve(ctx, launch);
    let web = match keep {
        PACKED => Rec::new(ctx.web().bearer.as_ref())
            .packing(crate::produce::profile::web::PACK_ALL_KEEP_BYTES),
        keep => Rec::new(ctx.web().bearer.as_ref()).keeping(keep),
    };
    let session = match &server.failed {
        Some(why) => {
            rec["startError"] = json!(why);
            None
        }
        None => match ctx.http_open(&web, &server) {
            Ok(session) => {
                rec["open"] = json!("result");
                Some(session)
            }
            Err(why) => {
                rec["open"] = json!(format!("no-result ({why})"));
                None
            }
        },
    };
    (server, web, session)
}

/// How an ending observation over HTTP ends its subject.
#[derive(Clone, Copy, PartialEq)]
pub enum End {
    /// SIGTERM once the requests are answered (`forced-shutdown`); the runner waits
    /// for the exit.
    Sigterm,
    /// The client's session ended first (`graceful-shutdown`): MCP's DELETE with the
    /// session id when the subject gave one, on a fresh connection, every connection
    /// closed; then SIGTERM, and the runner waits for the exit.
    SessionEnded,
    /// The end of every observation (`cleanup`): SIGTERM, then the group killed; the
    /// end record says what was left alive.
    Ordinary,
}

/// `forced-shutdown` and `cleanup` over Streamable HTTP: the (shimmed) subject
/// started and opened, the workload's in-flight requests posted (each on its own
/// connection, answered before the next), then ended as `how` says. `injected`: the
/// control leaves a process behind on purpose.
pub fn ending(ctx: &Ctx, mut rec: Value, how: End, injected: bool) -> Value {
    let w = ctx
        .ops
        .as_deref()
        .expect("an operational run has a workload");
    let (mut server, web, session) = match opened(ctx, &mut rec) {
        Ok(o) => o,
        Err(observation) => return observation,
    };
    if let Some(session) = session {
        let mut ids = Vec::new();
        for _ in 0..w.load.in_flight_at_shutdown {
            let (id, msg) = ctx.live_request();
            ids.push(id);
            let _ = ctx.post_fresh(&web, &server, &session, &msg, &Shape::default());
        }
        rec["inFlightIds"] = json!(ids);
        if how == End::SessionEnded {
            // Ended as MCP's Streamable HTTP transport ends a session: a DELETE with
            // the session id (a server may answer 405: reported, not judged); without
            // an id there is nothing to delete, and closing the connections ends it.
            if session.id.is_some() {
                let (_, msg) = ctx.live_request();
                let shape = Shape {
                    method: Some("DELETE".into()),
                    body: Some(Vec::new()),
                    ..Shape::default()
                };
                let _ = ctx.post_fresh(&web, &server, &session, &msg, &shape);
                rec["sessionEnd"] = json!("delete");
            } else {
                rec["sessionEnd"] = json!("no-session-id");
            }
        }
        let budget = match how {
            End::Sigterm => Some(w.budgets.term_ms),
            End::SessionEnded => Some(w.budgets.shutdown_ms),
            End::Ordinary => None,
        };
        if let (Some(budget), Some(probe)) = (budget, server.probe.as_mut()) {
            let wait = Duration::from_millis(budget * 2 + 1000);
            probe.signal_and_wait(rustix::process::Signal::TERM, "SIGTERM", wait);
        }
    }
    let mut t = transcript(ctx, &web, server, injected);
    t["observation"] = json!({"ops": rec});
    t
}

/// Keep every byte of the conversation, each chunk stored deflated ([`Rec::packing`]).
const PACKED: usize = usize::MAX;

/// How large a TCP socket's send buffer may grow on this machine (the kernel's
/// `net.ipv4.tcp_wmem` maximum), in bytes.
fn send_buffer_max() -> Option<u64> {
    std::fs::read_to_string("/proc/sys/net/ipv4/tcp_wmem")
        .ok()?
        .split_whitespace()
        .nth(2)?
        .parse()
        .ok()
}

/// What a `backpressure` observation over HTTP may store of the answers per direction:
/// beyond it the record could not show that every answer came whole.
const BACKPRESSURE_MOST_BYTES: u64 = 12 << 20;
/// The most requests a `backpressure` observation over HTTP sends (when answers are tiny).
const BACKPRESSURE_MOST_REQUESTS: usize = 20_000;

/// `backpressure` over Streamable HTTP. Each request on a connection of its own would be
/// held by the kernel's buffers alone, so the requests are pipelined on one connection
/// (HTTP/1.1 lets a client send requests without waiting for responses; the server
/// answers them in order): enough that their answers outgrow the subject's TCP send
/// buffer at its largest (the kernel's `tcp_wmem` maximum) by a MiB. A thread writes
/// them while the runner does not read; the runner reads again once the writes have
/// stalled (or ended) for `hold`, then reads every response in order, and posts a live
/// request on a fresh connection.
pub fn backpressure(ctx: &Ctx, mut rec: Value, hold: Duration, write_bytes: usize) -> Value {
    let (server, web, session) = match opened_keeping(ctx, &mut rec, PACKED) {
        Ok(o) => o,
        Err(observation) => return observation,
    };
    if let Some(session) = session {
        // An answer's size as the judge counts it: its JSON text and a byte (the
        // framing around it only adds to what the subject writes).
        let size = |r: &Resp, id: &Value| {
            r.result_for(id)
                .and_then(|_| r.answer(id))
                .map_or(0, |m| m.to_string().len() + 1)
        };
        let (id, msg) = request_of(ctx, "tools/list");
        let asked = Instant::now();
        let r = ctx.post_fresh(&web, &server, &session, &msg, &Shape::default());
        // How long the subject takes to write nothing while it still has answers to
        // give is judged against its own pace: twenty times this answer's time.
        let pace = asked.elapsed();
        let (kind, size) = match size(&r, &id) {
            0 => {
                let (id, msg) = request_of(ctx, "live");
                let r = ctx.post_fresh(&web, &server, &session, &msg, &Shape::default());
                ("live", size(&r, &id))
            }
            s => ("tools/list", s),
        };
        let most = send_buffer_max();
        rec["sendBufferMaxBytes"] = json!(most);
        if let (Some(most), true) = (most, size > 0) {
            let target = most + (1 << 20);
            let n = usize::try_from(target.div_ceil(size as u64))
                .unwrap_or(usize::MAX)
                .clamp(8, BACKPRESSURE_MOST_REQUESTS);
            rec["requestKind"] = json!(kind);
            rec["answerBytes"] = json!(size);
            if (n * size) as u64 > BACKPRESSURE_MOST_BYTES {
                rec["tooLarge"] = json!(format!(
                    "{n} answers of about {size} bytes would be more than the {BACKPRESSURE_MOST_BYTES} bytes the record keeps"
                ));
            } else {
                let stall = hold.max(pace * 20).min(Duration::from_secs(10));
                pipelined(
                    ctx,
                    &web,
                    &server,
                    &session,
                    (n, kind),
                    stall,
                    write_bytes,
                    &mut rec,
                );
                // Past a declared rate limit's window: the request after them is not over it.
                if let Some(r) = ctx.ops.as_deref().and_then(|w| w.rate_limit.as_ref()) {
                    std::thread::sleep(Duration::from_millis(r.window_ms));
                }
                rec["afterId"] = live(ctx, &web, &server, &session);
            }
        }
    }
    let mut t = transcript(ctx, &web, server, false);
    t["observation"] = json!({"ops": rec});
    t
}

/// A request of `kind` for [`backpressure`] (its id and message): the tool list, or the
/// live request.
fn request_of(ctx: &Ctx, kind: &str) -> (Value, Value) {
    if kind == "tools/list" {
        let id = ctx.id();
        let msg = ctx.request(&id, "tools/list", json!({}));
        (id, msg)
    } else {
        ctx.live_request()
    }
}

/// The kernel's queues of the TCP connection between local ports `ours` and `theirs`,
/// read from the network namespace of process `pid` (`/proc/PID/net/tcp` and `tcp6`,
/// where the subject's sockets are, and the runner's through the sandbox's door): the
/// bytes received at `ours` and not yet read, and those `theirs` holds unsent (or
/// unacknowledged).
fn queues(pid: u32, ours: u16, theirs: u16) -> Option<(u64, u64)> {
    let (mut unread, mut unsent) = (None, None);
    let port = |a: &str| {
        a.rsplit(':')
            .next()
            .and_then(|p| u16::from_str_radix(p, 16).ok())
    };
    for file in ["tcp", "tcp6"] {
        let Ok(table) = std::fs::read_to_string(format!("/proc/{pid}/net/{file}")) else {
            continue;
        };
        for line in table.lines().skip(1) {
            let f: Vec<&str> = line.split_whitespace().collect();
            let (Some(local), Some(remote)) = (
                f.get(1).and_then(|a| port(a)),
                f.get(2).and_then(|a| port(a)),
            ) else {
                continue;
            };
            let Some((tx, rx)) = f.get(4).and_then(|q| q.split_once(':')) else {
                continue;
            };
            let (Ok(tx), Ok(rx)) = (u64::from_str_radix(tx, 16), u64::from_str_radix(rx, 16))
            else {
                continue;
            };
            if (local, remote) == (ours, theirs) {
                unread = Some(rx);
            }
            if (local, remote) == (theirs, ours) {
                unsent = Some(tx);
            }
        }
    }
    Some((unread?, unsent?))
}

/// [`backpressure`]'s `n` requests of `kind`, pipelined on one connection. The runner
/// reads again once nothing has moved for `stall`: not its writes, not the bytes waiting
/// at its end, not those the subject's end holds unsent (at most a bound, after which it
/// reads again all the same and the record says the subject had not stalled).
#[allow(clippy::too_many_arguments)]
fn pipelined(
    ctx: &Ctx,
    web: &Rec,
    server: &Server,
    session: &Session,
    (n, kind): (usize, &str),
    stall: Duration,
    write_bytes: usize,
    rec: &mut Value,
) {
    // A subject that declares a rate limit gets nine tenths of it per window, a window
    // apart: so that its answers, not its refusals, fill the buffers.
    let per_window = ctx
        .ops
        .as_deref()
        .and_then(|w| w.rate_limit.as_ref())
        .map(|r| {
            (
                (r.requests as usize * 9 / 10).max(1),
                Duration::from_millis(r.window_ms),
            )
        });
    let mut ids = Vec::with_capacity(n);
    // Each write, with whether a window must pass before it.
    let mut writes: Vec<(bool, Vec<u8>)> = vec![(false, Vec::new())];
    for k in 0..n {
        let (id, msg) = request_of(ctx, kind);
        let bytes = ctx.http_request(server, session, &msg, &Shape::default());
        let next_window = per_window.is_some_and(|(per, _)| k > 0 && k % per == 0);
        if next_window {
            writes.push((true, Vec::new()));
        } else if writes
            .last()
            .is_some_and(|(_, w)| !w.is_empty() && w.len() + bytes.len() > write_bytes)
        {
            writes.push((false, Vec::new()));
        }
        writes
            .last_mut()
            .expect("one write at least")
            .1
            .extend(bytes);
        ids.push(id);
    }
    let total: usize = writes.iter().map(|(_, w)| w.len()).sum();
    let window = per_window.map_or(Duration::ZERO, |(_, w)| w);
    let paced = window * writes.iter().filter(|(wait, _)| *wait).count() as u32;
    // A pause between windows is no stall.
    let stall = stall.max(window * 3 / 2);
    rec["requestIds"] = json!(ids);
    let Ok(mut conn) = Conn::open(web, &server.addr) else {
        return;
    };
    let Some(mut writer) = conn.writer() else {
        return;
    };
    let written = AtomicU64::new(0);
    std::thread::scope(|sc| {
        web.event(Some(conn.id), "reading-paused", json!({}));
        sc.spawn(|| {
            for (wait, w) in &writes {
                if *wait {
                    std::thread::sleep(window);
                }
                if !writer.write(w) {
                    break;
                }
                written.fetch_add(w.len() as u64, Ordering::SeqCst);
            }
        });
        let pid = server.probe.as_ref().map(|p| p.pid());
        let (ours, theirs) = (conn.local_port(), server.addr.addr.port());
        let state = || {
            (
                written.load(Ordering::SeqCst),
                pid.and_then(|pid| queues(pid, ours, theirs)),
            )
        };
        let start = Instant::now();
        let most = paced + ctx.answer.max(Duration::from_secs(10)) + stall;
        let (mut seen, mut since) = (state(), Instant::now());
        while start.elapsed() < most && since.elapsed() < stall {
            std::thread::sleep(Duration::from_millis(20));
            let now = state();
            if now != seen {
                (seen, since) = (now, Instant::now());
            }
        }
        let stalled = since.elapsed();
        rec["pendingAtResume"] = json!(total as u64 - seen.0);
        web.event(
            Some(conn.id),
            "reading-resumed",
            json!({
                "unreadBytes": seen.1.map(|q| q.0),
                "subjectUnsentBytes": seen.1.map(|q| q.1),
                "stalledMs": u64::try_from(stalled.as_millis()).unwrap_or(u64::MAX),
                "stallMs": u64::try_from(stall.as_millis()).unwrap_or(u64::MAX),
            }),
        );
        let until = Instant::now() + ctx.answer + Duration::from_millis(n as u64);
        let mut read = 0;
        let mut end = "every response read";
        while read < n {
            let left = until.saturating_duration_since(Instant::now());
            let r = conn.response_unannounced(left);
            if r.status.is_some() {
                read += 1;
            }
            if r.eof || r.timed_out || r.status.is_none() {
                end = if r.eof {
                    "the subject closed the connection"
                } else {
                    "the runner's wait ran out"
                };
                break;
            }
        }
        web.event(
            Some(conn.id),
            "responses-read",
            json!({"responses": read, "of": n, "end": end}),
        );
        // The writer ends once its connection does.
        conn.close("the responses were read");
    });
}

/// A live request posted on a fresh connection of `server`'s conversation and
/// answered (or not) within the answer bound: its id.
fn live(ctx: &Ctx, web: &Rec, server: &Server, session: &Session) -> Value {
    let (id, msg) = ctx.live_request();
    let _ = ctx.post_fresh(web, server, session, &msg, &Shape::default());
    id
}

/// A fresh server of the subject from `launch`, opened and sent a live request (the
/// tool list at 2026-07-28); the record a fresh process's reading takes (`open`,
/// `afterId`, `transcript`, or `startError`).
pub fn fresh(ctx: &Ctx, launch: Result<Launch, String>) -> Value {
    fresh_with(ctx, launch, || {})
}

/// [`fresh`], with `meanwhile` done once it has listed its tools, before it is stopped
/// (while it still runs).
pub fn fresh_with(ctx: &Ctx, launch: Result<Launch, String>, meanwhile: impl FnOnce()) -> Value {
    let mut r = json!({});
    let launch = match launch {
        Ok(l) => l,
        Err(why) => {
            r["startError"] = json!(why);
            return r;
        }
    };
    let server = serve(ctx, &launch);
    let web = Rec::new(ctx.web().bearer.as_ref());
    if let Some(why) = &server.failed {
        r["startError"] = json!(why);
        let _ = ctx.stop(server);
        return r;
    }
    let tools = if ctx.modern() {
        ctx.live_request()
    } else {
        let id = ctx.id();
        let msg = ctx.request(&id, "tools/list", json!({}));
        (id, msg)
    };
    match ctx.http_open(&web, &server) {
        Ok(session) => {
            r["open"] = json!("result");
            let _ = ctx.post_fresh(&web, &server, &session, &tools.1, &Shape::default());
        }
        Err(why) => r["open"] = json!(format!("no-result ({why})")),
    }
    r["afterId"] = tools.0;
    meanwhile();
    r["transcript"] = transcript(ctx, &web, server, false);
    r
}

/// `process-crash` over Streamable HTTP: a request answered, a second posted and
/// not waited for, the server's process group killed at once; then a fresh server of
/// the subject (nothing injected) opened and sent a request.
pub fn crash(ctx: &Ctx, mut rec: Value, injected: bool, wait: Duration) -> Value {
    let (mut server, web, session) = match opened(ctx, &mut rec) {
        Ok(o) => o,
        Err(observation) => return observation,
    };
    let serving = session.is_some();
    if let Some(session) = session {
        rec["servedId"] = live(ctx, &web, &server, &session);
        let (in_flight, msg) = ctx.live_request();
        let bytes = ctx.http_request(&server, &session, &msg, &Shape::default());
        // Written, not waited for: the request is in flight when the kill comes.
        let conn = Conn::open(&web, &server.addr).ok().map(|mut c| {
            c.write(&bytes);
            c
        });
        rec["inFlightId"] = in_flight;
        if let Some(probe) = server.probe.as_mut() {
            let _ = probe.crash(wait);
        }
        if let Some(c) = conn {
            c.close("the subject was killed");
        }
    }
    let mut t = transcript(ctx, &web, server, injected);
    t["observation"] = json!({"ops": rec});
    if serving {
        t["observation"]["ops"]["restart"] = fresh(ctx, Ok(ctx.stdio_launch().clone()));
    }
    t
}

/// The workload's open-loop schedule over Streamable HTTP for `duration`: request `n`
/// is due at `n / rate` s and posted on a fresh connection when due, or as soon as one
/// of `concurrency` senders is free; its latency counts from when it was due (no
/// coordinated omission, as over stdio). The server's processes are sampled when
/// `sample` is set (its process must be one mcpres started). Each request's row is
/// the stdio generator's (`[id, kind, dueUs, sentUs, answeredUs | null, outcome]`,
/// from the soak's start); the answer is the one its connection brought, waited for up
/// to `drain`.
#[allow(clippy::too_many_arguments)]
pub fn soak(
    ctx: &Ctx,
    w: &Workload,
    server: &Server,
    web: &Rec,
    session: &Session,
    duration: Duration,
    drain: Duration,
    sample: bool,
) -> Soak {
    let rate = u64::from(w.load.rate_per_s).max(1);
    let total = duration.as_millis() as u64 * rate / 1000;
    let ops = Arc::new(AtomicU64::new(0));
    let start = Instant::now();
    let sampler = match (sample, &server.probe) {
        (true, Some(p)) => Some(Sampler::start(
            p.pid(),
            Duration::from_millis(w.load.sample_interval_ms),
            Arc::clone(&ops),
            start,
        )),
        _ => None,
    };
    let next = AtomicU64::new(0);
    let rows: Mutex<Vec<(u64, Value)>> = Mutex::new(Vec::with_capacity(total as usize));
    let late = Mutex::new((0u64, 0u64));
    let until = duration + drain;
    std::thread::scope(|scope| {
        for _ in 0..w.load.concurrency.max(1) {
            scope.spawn(|| {
                loop {
                    let n = next.fetch_add(1, Ordering::SeqCst);
                    if n >= total {
                        break;
                    }
                    let due = n * 1_000_000 / rate;
                    let kind = w.kind_of(n).to_string();
                    let now = start.elapsed().as_micros() as u64;
                    // A sender free before the request is due waits for it; one that
                    // comes late was held by the subject's earlier answers.
                    let free = now <= due;
                    if free {
                        std::thread::sleep(Duration::from_micros(due - now));
                    }
                    if start.elapsed() >= until {
                        rows.lock()
                            .expect("rows")
                            .push((n, json!([null, kind, due, null, null, "unsent"])));
                        continue;
                    }
                    let (id, msg) = match kind.as_str() {
                        "live" => ctx.live_request(),
                        other => {
                            let id = ctx.id();
                            let msg = ctx.request(&id, other, json!({}));
                            (id, msg)
                        }
                    };
                    let sent = start.elapsed().as_micros() as u64;
                    if free && sent.saturating_sub(due) > 5_000 {
                        let mut l = late.lock().expect("late");
                        l.0 += 1;
                        l.1 = l.1.max(sent - due);
                    }
                    // Each answer is waited for as long as the soak drains (the answer
                    // window, and an injected hold on top).
                    let resp = post_waiting(ctx, web, server, session, &msg, drain);
                    let at = start.elapsed().as_micros() as u64;
                    let row = match resp.answer(&id) {
                        Some(m) => {
                            ops.fetch_add(1, Ordering::SeqCst);
                            let outcome = match m.pointer("/error/code").and_then(Value::as_i64) {
                                Some(code) => format!("error:{code}"),
                                None => "result".into(),
                            };
                            json!([id, kind, due, sent, at, outcome])
                        }
                        None => json!([id, kind, due, sent, null, "none"]),
                    };
                    rows.lock().expect("rows").push((n, row));
                }
            });
        }
    });
    let mut rows = rows.into_inner().expect("rows");
    rows.sort_by_key(|(n, _)| *n);
    let (late_sends, max_lag_us) = late.into_inner().expect("late");
    Soak {
        requests: rows.into_iter().map(|(_, r)| r).collect(),
        samples: sampler.map(Sampler::stop).unwrap_or_default(),
        late_sends,
        max_lag_us,
        ended: false,
    }
}

/// The HTTP generator's own ceiling: requests per second it sustains, at the
/// workload's concurrency over `duration`, against a null server in this process
/// (loopback, answering every POST at once with an empty result and closing).
pub fn ceiling(ctx: &Ctx, w: &Workload, duration: Duration) -> Option<Value> {
    let listener = TcpListener::bind("127.0.0.1:0").ok()?;
    let addr = listener.local_addr().ok()?;
    let stop = Arc::new(AtomicBool::new(false));
    let stopping = Arc::clone(&stop);
    let acceptor = std::thread::spawn(move || {
        for conn in listener.incoming() {
            if stopping.load(Ordering::SeqCst) {
                break;
            }
            if let Ok(c) = conn {
                std::thread::spawn(move || null_answer(c));
            }
        }
    });
    let server = Server {
        probe: None,
        addr: addr.into(),
        authority: addr.to_string(),
        failed: None,
    };
    let web = Rec::new(None);
    let mut fast = w.clone();
    fast.load.rate_per_s = 10_000;
    let t = Instant::now();
    let s = soak(
        ctx,
        &fast,
        &server,
        &web,
        &Session::default(),
        duration,
        Duration::from_secs(2),
        false,
    );
    let secs = t.elapsed().as_secs_f64().max(1e-3);
    stop.store(true, Ordering::SeqCst);
    let _ = std::net::TcpStream::connect(addr);
    let _ = acceptor.join();
    Some(json!({
        "against": "mcpres's null HTTP server in the runner's process (answers every POST at once)",
        "transport": "streamable-http",
        "concurrency": w.load.concurrency,
        "durationMs": duration.as_millis() as u64,
        "served": s.served(),
        "ceilingPerS": (s.served() as f64 / secs) as u64,
    }))
}

/// The null server's answer to one connection: the request read (head, then as many
/// body bytes as it declares), answered with an empty result under its id, closed.
fn null_answer(mut c: std::net::TcpStream) {
    use std::io::Write;
    let _ = c.set_read_timeout(Some(Duration::from_secs(5)));
    let (buf, Some(body)) = crate::produce::drive::front::read_request(&mut c) else {
        return;
    };
    let id = serde_json::from_slice::<Value>(&buf[body])
        .ok()
        .and_then(|m| m.get("id").cloned())
        .unwrap_or(Value::Null);
    let body = json!({"jsonrpc": "2.0", "id": id, "result": {}}).to_string();
    let _ = c.write_all(
        format!(
            "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        )
        .as_bytes(),
    );
}

/// One soak observation over Streamable HTTP: the (shimmed) server of `rec`'s
/// injection started and opened, the workload's schedule run for `duration` and
/// sampled, the server stopped; `rec` gets the requests and samples as over stdio.
/// `every_answer`: the judge reads every answer from the stored bytes (`bounded-soak`,
/// whose stdio soak keeps 8 MiB of stdout), so the record keeps as much per direction.
pub fn soak_observation(
    ctx: &Ctx,
    w: &Workload,
    mut rec: Value,
    duration: Duration,
    every_answer: bool,
) -> Value {
    let keep = if every_answer { 8 << 20 } else { 0 };
    let (mut server, web, session) = match opened_keeping(ctx, &mut rec, keep) {
        Ok(o) => o,
        Err(observation) => return observation,
    };
    if let Some(session) = session {
        // Answers held at the front are waited for the hold on top of the answer window.
        let held = Duration::from_millis(rec["injected"]["responseDelayMs"].as_u64().unwrap_or(0));
        let s = soak(
            ctx,
            w,
            &server,
            &web,
            &session,
            duration,
            ctx.answer + held,
            true,
        );
        let gone = server
            .probe
            .as_mut()
            .is_some_and(|p| p.try_exit().is_some());
        Soak { ended: gone, ..s }.put(&mut rec, duration);
    }
    let mut t = transcript(ctx, &web, server, false);
    t["observation"] = json!({"ops": rec});
    t
}

/// `malformed-flood` over Streamable HTTP: the subject served and opened, then the
/// workload's flood posted as request bodies, each on a fresh connection and all
/// written before any answer is read (as the stdio flood is written at once): bodies
/// that are not JSON (`malformed(n)`) at the positive and the control, with a live
/// request every `floodValidEvery` at the positive; requests for a method no server
/// has at the mutant. Their answers share one deadline; then a live request on a
/// fresh connection (`afterFlood`). The record is the stdio flood's.
pub fn flood(ctx: &Ctx, mut rec: Value, role: &str, malformed: impl Fn(u64) -> Vec<u8>) -> Value {
    let w = ctx
        .ops
        .as_deref()
        .expect("an operational run has a workload");
    let (server, web, session) = match opened(ctx, &mut rec) {
        Ok(o) => o,
        Err(observation) => return observation,
    };
    let lines = u64::from(w.load.flood_lines);
    if let Some(session) = session {
        let mut valid = Vec::new();
        let mut flood_ids = Vec::new();
        let mut conns = Vec::new();
        let mut post = |msg: &Value, body: Option<Vec<u8>>| {
            let shape = Shape {
                body,
                ..Shape::default()
            };
            let bytes = ctx.http_request(&server, &session, msg, &shape);
            if let Ok(mut c) = Conn::open(&web, &server.addr) {
                if c.write(&bytes) {
                    conns.push(c);
                } else {
                    c.close("the subject took no more");
                }
            }
        };
        for n in 0..lines {
            if role == "mutant" {
                let id = ctx.id();
                let msg = ctx.request(
                    &id,
                    &crate::produce::profile::check::unknown_method(),
                    json!({}),
                );
                flood_ids.push(id);
                post(&msg, None);
            } else {
                let mut body = malformed(n);
                body.pop(); // the stdio line's newline
                post(&json!({}), Some(body));
            }
            if role == "positive" && (n + 1) % u64::from(w.load.flood_valid_every) == 0 {
                let (id, msg) = ctx.live_request();
                valid.push(id);
                post(&msg, None);
            }
        }
        // One deadline for the flood's answers: every body was written before any
        // was read.
        let until = Instant::now() + ctx.answer + Duration::from_millis(lines / 10);
        for mut c in conns {
            let left = until.saturating_duration_since(Instant::now());
            let _ = c.response(left.max(Duration::from_millis(1)));
            c.close("answered, or the flood's deadline passed");
        }
        // The request after the flood: answered, the subject is still serving.
        let (id, msg) = ctx.live_request();
        valid.push(id.clone());
        let after = ctx.post_fresh(&web, &server, &session, &msg, &Shape::default());
        rec["afterFlood"] = json!(answer_label(&after, &id));
        rec["validIds"] = json!(valid);
        rec["floodIds"] = json!(flood_ids);
    }
    rec["floodLines"] = json!(lines);
    let mut t = transcript(ctx, &web, server, false);
    t["observation"] = json!({"ops": rec});
    t
}

/// `oversized-input` over Streamable HTTP: one request body of the workload's size
/// (`body`, with `id` its request's id when it has one), its head and body written
/// as two chunks (so that a stored transcript too large to keep the body still keeps
/// the id at the body's head), its answer waited for (a second per MiB on top of the
/// answer window), then a live request on a fresh connection (`afterId`).
pub fn oversized(ctx: &Ctx, mut rec: Value, msg: &Value, body: Vec<u8>) -> Value {
    let (mut server, web, session) = match opened(ctx, &mut rec) {
        Ok(o) => o,
        Err(observation) => return observation,
    };
    if let Some(session) = session {
        let size = body.len() as u64;
        let shape = Shape {
            body: Some(body),
            ..Shape::default()
        };
        let bytes = ctx.http_request(&server, &session, msg, &shape);
        let head = bytes
            .windows(4)
            .position(|x| x == b"\r\n\r\n")
            .map_or(bytes.len(), |i| i + 4);
        if let Ok(mut c) = Conn::open(&web, &server.addr) {
            if c.write(&bytes[..head]) && c.write(&bytes[head..]) {
                let bound = ctx.answer + Duration::from_millis((size >> 20) * 1000);
                let r = c.response(bound);
                rec["oversizedStatus"] = json!(r.status);
            }
            c.close("the oversized request's exchange is over");
        }
        let (after, msg) = ctx.live_request();
        let reply = ctx.post_fresh(&web, &server, &session, &msg, &Shape::default());
        let label = answer_label(&reply, &after);
        gone_by_itself(ctx, &mut server, &label);
        rec["after"] = json!(label);
        rec["afterId"] = after;
    }
    let mut t = transcript(ctx, &web, server, false);
    t["observation"] = json!({"ops": rec});
    t
}

/// After an exchange that ended `closed` (its connection closed, or none made, without
/// an answer), the server process may be on its way out: its end is waited for up to
/// the answer window, so that the stop that follows finds it ended by itself (over
/// stdio the closed stdout is that end already). Whether it ended.
fn gone_by_itself(ctx: &Ctx, server: &mut Server, label: &str) -> bool {
    label == "closed"
        && server
            .probe
            .as_mut()
            .is_some_and(|p| p.wait_exit(ctx.answer).is_some())
}

/// The stdio records' label of request `id`'s answer in `resp`: `result`,
/// `error:CODE`, or how the exchange ended without one.
fn answer_label(resp: &Resp, id: &Value) -> String {
    match resp.answer(id) {
        Some(m) => match m.pointer("/error/code").and_then(Value::as_i64) {
            Some(code) => format!("error:{code}"),
            None => "result".into(),
        },
        None if resp.timed_out => "silent".into(),
        None => "closed".into(),
    }
}

/// `msg` posted on a fresh connection of `server`'s conversation, its response waited
/// for up to `wait` (not the answer window: a workload's deadline, or a hold on top).
fn post_waiting(
    ctx: &Ctx,
    web: &Rec,
    server: &Server,
    session: &Session,
    msg: &Value,
    wait: Duration,
) -> Resp {
    match Conn::open(web, &server.addr) {
        Ok(mut c) => {
            let bytes = ctx.http_request(server, session, msg, &Shape::default());
            if c.write(&bytes) {
                c.response(wait)
            } else {
                Resp {
                    eof: true,
                    ..Resp::default()
                }
            }
        }
        Err(_) => Resp::default(),
    }
}

/// `timeout` over Streamable HTTP, as over stdio: a request posted and waited for up
/// to the workload's request timeout (`deadline`); given up on, it is cancelled
/// (`notifications/cancelled` posted on a fresh connection); answered, a second request
/// is written on a fresh connection and cancelled at once, not waited for; then a
/// request after it, waited for up to the timeout (and cancelled when it passes).
pub fn timeout(ctx: &Ctx, mut rec: Value, deadline: Duration) -> Value {
    let (server, web, session) = match opened(ctx, &mut rec) {
        Ok(o) => o,
        Err(observation) => return observation,
    };
    if let Some(session) = session {
        let cancel = |id: &Value, reason: &str| {
            let params = ctx.params(json!({"requestId": id, "reason": reason}));
            let msg = json!({
                "jsonrpc": "2.0",
                "method": "notifications/cancelled",
                "params": params,
            });
            let _ = ctx.post_fresh(&web, &server, &session, &msg, &Shape::default());
        };
        let (first, msg) = ctx.live_request();
        let r = post_waiting(ctx, &web, &server, &session, &msg, deadline);
        if r.answer(&first).is_some() {
            // A request cancelled at once: the subject may answer it or not, but must
            // go on serving.
            let (gone, msg) = ctx.live_request();
            let bytes = ctx.http_request(&server, &session, &msg, &Shape::default());
            let conn = Conn::open(&web, &server.addr).ok().map(|mut c| {
                c.write(&bytes);
                c
            });
            cancel(&gone, "no longer needed");
            if let Some(c) = conn {
                c.close("the request was cancelled");
            }
            rec["cancelledAtOnce"] = gone;
        } else if r.timed_out {
            // Given up on: cancelled, as a client whose timeout passed does.
            cancel(&first, "request timed out");
            rec["timedOut"] = first.clone();
        }
        let (after, msg) = ctx.live_request();
        let r = post_waiting(ctx, &web, &server, &session, &msg, deadline);
        if r.answer(&after).is_none() && r.timed_out {
            cancel(&after, "request timed out");
        }
        rec["judgedIds"] = json!([first, after]);
    }
    let mut t = transcript(ctx, &web, server, false);
    t["observation"] = json!({"ops": rec});
    t
}

/// Each of `msgs` (an id and its request) posted on a fresh connection of `server`'s
/// conversation, all written before any answer is read; the answers read with one
/// deadline, `wait` from the last send, and each connection then closed with `why`.
/// How many got an answer under their id.
fn all_at_once(
    ctx: &Ctx,
    (web, server, session): (&Rec, &Server, &Session),
    msgs: &[(Value, Value)],
    wait: Duration,
    why: &str,
) -> usize {
    let conns = posted(ctx, (web, server, session), msgs);
    let until = Instant::now() + wait;
    let mut got = 0;
    for (id, mut c) in conns {
        let left = until.saturating_duration_since(Instant::now());
        if c.response(left.max(Duration::from_millis(1)))
            .answer(&id)
            .is_some()
        {
            got += 1;
        }
        c.close(why);
    }
    got
}

/// `bounded-concurrency` over Streamable HTTP: `n` live requests, each on a fresh
/// connection, all written before any answer is read (the stdio burst is one write),
/// their answers read with one deadline from the last send.
pub fn burst(ctx: &Ctx, mut rec: Value, n: u32) -> Value {
    let (server, web, session) = match opened(ctx, &mut rec) {
        Ok(o) => o,
        Err(observation) => return observation,
    };
    if let Some(session) = session {
        let msgs: Vec<(Value, Value)> = (0..n).map(|_| ctx.live_request()).collect();
        let ids: Vec<Value> = msgs.iter().map(|(id, _)| id.clone()).collect();
        let got = all_at_once(
            ctx,
            (&web, &server, &session),
            &msgs,
            ctx.answer,
            "answered, or the burst's deadline passed",
        );
        rec["burstIds"] = json!(ids);
        rec["answeredWithinWait"] = json!(got);
    }
    let mut t = transcript(ctx, &web, server, false);
    t["observation"] = json!({"ops": rec});
    t
}

/// `duplicate-delivery` over Streamable HTTP: one request posted twice, the same body
/// (the same id) on two fresh connections, both written before either answer is read
/// (a transport that delivers again), their answers read with one deadline; then a
/// request after it, waited for up to the answer window.
pub fn duplicate(ctx: &Ctx, mut rec: Value) -> Value {
    let (server, web, session) = match opened(ctx, &mut rec) {
        Ok(o) => o,
        Err(observation) => return observation,
    };
    if let Some(session) = session {
        let (dup, msg) = ctx.live_request();
        let twice = [(dup.clone(), msg.clone()), (dup.clone(), msg)];
        all_at_once(
            ctx,
            (&web, &server, &session),
            &twice,
            ctx.answer,
            "answered, or the deadline for both copies passed",
        );
        let (after, msg) = ctx.live_request();
        let _ = post_waiting(ctx, &web, &server, &session, &msg, ctx.answer);
        rec["duplicatedId"] = dup;
        rec["afterId"] = after;
    }
    let mut t = transcript(ctx, &web, server, false);
    t["observation"] = json!({"ops": rec});
    t
}

/// The storage checks' declared write over Streamable HTTP, as over stdio: in a fresh
/// server process whose sandbox has `faults`, the declared tool call posted on a fresh
/// connection and waited for up to the answer window, then (unless the connection was
/// closed without an answer) a liveness request on another. `rec` gets `writeId`,
/// `write` and `afterId`.
pub fn write_once(
    ctx: &Ctx,
    mut rec: Value,
    call: &Value,
    faults: Vec<crate::produce::drive::sandbox::Fault>,
) -> Value {
    let (mut server, web, session) = match opened_with(ctx, &mut rec, 0, faults) {
        Ok(o) => o,
        Err(observation) => return observation,
    };
    if let Some(session) = session {
        let id = ctx.id();
        let msg = ctx.request(&id, "tools/call", call.clone());
        let r = post_waiting(ctx, &web, &server, &session, &msg, ctx.answer);
        let label = answer_label(&r, &id);
        rec["writeId"] = id;
        rec["write"] = json!(label);
        if !gone_by_itself(ctx, &mut server, &label) {
            let (after, msg) = ctx.live_request();
            let _ = post_waiting(ctx, &web, &server, &session, &msg, ctx.answer);
            rec["afterId"] = after;
        }
    }
    let mut t = transcript(ctx, &web, server, false);
    t["observation"] = json!({"ops": rec});
    t
}

/// `queue-saturation` over Streamable HTTP: `n` of the declared hold calls (`call`),
/// each posted on a fresh connection, all written before any answer is read, their
/// answers read with one deadline (`wait` from the last send); then a request after
/// them, waited for up to the answer window. `rec` gets `holdIds` and `afterId`.
pub fn saturate(ctx: &Ctx, mut rec: Value, call: &Value, n: u32, wait: Duration) -> Value {
    let (server, web, session) = match opened(ctx, &mut rec) {
        Ok(o) => o,
        Err(observation) => return observation,
    };
    if let Some(session) = session {
        let msgs: Vec<(Value, Value)> = (0..n)
            .map(|_| {
                let id = ctx.id();
                let msg = ctx.request(&id, "tools/call", call.clone());
                (id, msg)
            })
            .collect();
        let ids: Vec<Value> = msgs.iter().map(|(id, _)| id.clone()).collect();
        all_at_once(
            ctx,
            (&web, &server, &session),
            &msgs,
            wait,
            "answered, or the hold calls' deadline passed",
        );
        let (after, msg) = ctx.live_request();
        let _ = post_waiting(ctx, &web, &server, &session, &msg, ctx.answer);
        rec["holdIds"] = json!(ids);
        rec["afterId"] = after;
    }
    let mut t = transcript(ctx, &web, server, false);
    t["observation"] = json!({"ops": rec});
    t
}

/// Each of `msgs` (an id and its request) posted on a fresh connection of `server`'s
/// conversation, all written before any answer is read; the connections written.
fn posted<'r>(
    ctx: &Ctx,
    (web, server, session): (&'r Rec, &Server, &Session),
    msgs: &[(Value, Value)],
) -> Vec<(Value, Conn<'r>)> {
    let mut conns = Vec::new();
    for (id, msg) in msgs {
        let bytes = ctx.http_request(server, session, msg, &Shape::default());
        if let Ok(mut c) = Conn::open(web, &server.addr)
            && c.write(&bytes)
        {
            conns.push((id.clone(), c));
        }
    }
    conns
}

/// Every connection of `conns` read on a thread of its own up to `until` (so that each
/// response's stored time is when it came, not when a reader got to it), then closed
/// with `why`; each request's id and response.
fn read_apart(conns: Vec<(Value, Conn<'_>)>, until: Instant, why: &str) -> Vec<(Value, Resp)> {
    std::thread::scope(|scope| {
        let readers: Vec<_> = conns
            .into_iter()
            .map(|(id, mut c)| {
                scope.spawn(move || {
                    let left = until.saturating_duration_since(Instant::now());
                    let r = c.response(left.max(Duration::from_millis(1)));
                    c.close(why);
                    (id, r)
                })
            })
            .collect();
        readers.into_iter().filter_map(|r| r.join().ok()).collect()
    })
}

/// The refusal in `resp` to request `id`: its JSON-RPC error, or (without an answer
/// under the id) its HTTP error status; with the retry hint in ms it carries
/// (`error.data.retryAfterMs` or `retryAfter`, else the `Retry-After` header in
/// seconds). `None`: not refused (served, or not answered).
fn refused(resp: &Resp, id: &Value) -> Option<Option<u64>> {
    let header = || crate::judge::ops::retry_header_ms(resp.header("retry-after"));
    match resp.answer(id) {
        Some(m) if m.get("error").is_some() => {
            Some(crate::judge::ops::retry_hint_ms(m).or_else(header))
        }
        Some(_) => None,
        None => resp.status.filter(|s| *s >= 400).map(|_| header()),
    }
}

/// The fewest ms between retries, whatever the hint says.
const RETRY_FLOOR: Duration = Duration::from_millis(10);
/// The most retries `retry-after` makes.
const MAX_RETRIES: usize = 50;

/// `overload-rejection` and `retry-after` over Streamable HTTP: the declared places
/// filled with `limit` of the declared hold calls (`call`, `hold` each), each on a
/// fresh connection and all written at once; half a hold later as many requests over
/// them, each on a fresh connection, all written at once. Every connection is read on
/// a thread of its own, so that the stored times bound when each request was in the
/// subject's hands: the judge reads a request as over the limit only when it was sent
/// and answered while every hold was provably running (`judge::ops`). `retry`: after
/// the refusals, a request is retried after each hint (at least the floor) until a
/// result or the holds are over. `rec` gets `holdIds`, `overIds` (and `retryIds`).
pub fn overload(
    ctx: &Ctx,
    mut rec: Value,
    call: &Value,
    limit: u32,
    hold: Duration,
    retry: bool,
) -> Value {
    let (server, web, session) = match opened(ctx, &mut rec) {
        Ok(o) => o,
        Err(observation) => return observation,
    };
    if let Some(session) = session {
        let trio = (&web, &server, &session);
        let holds: Vec<(Value, Value)> = (0..limit)
            .map(|_| {
                let id = ctx.id();
                let msg = ctx.request(&id, "tools/call", call.clone());
                (id, msg)
            })
            .collect();
        let overs: Vec<(Value, Value)> = (0..limit).map(|_| ctx.live_request()).collect();
        let retries = std::thread::scope(|scope| {
            let held = posted(ctx, trio, &holds);
            let until = Instant::now() + hold + ctx.answer;
            let holding = scope.spawn(move || {
                read_apart(held, until, "answered, or the hold calls' deadline passed")
            });
            std::thread::sleep(hold / 2);
            let over = posted(ctx, trio, &overs);
            // A request over the limit may be queued until a place is free.
            let until = Instant::now() + hold + ctx.answer;
            let answers = read_apart(over, until, "answered, or the deadline passed");
            let mut retries = Vec::new();
            let hints: Vec<Option<u64>> = answers
                .iter()
                .filter_map(|(id, r)| refused(r, id))
                .collect();
            if retry && !hints.is_empty() {
                let until = Instant::now() + hold + ctx.answer;
                let mut hint = hints.into_iter().flatten().max();
                while retries.len() < MAX_RETRIES && Instant::now() < until {
                    let wait = hint.map_or(RETRY_FLOOR, Duration::from_millis);
                    std::thread::sleep(wait.max(RETRY_FLOOR));
                    let (id, msg) = ctx.live_request();
                    let r = post_waiting(ctx, &web, &server, &session, &msg, ctx.answer);
                    retries.push(id.clone());
                    match refused(&r, &id) {
                        Some(h) => hint = h,
                        None => break,
                    }
                }
            }
            let _ = holding.join();
            retries
        });
        rec["holdIds"] = json!(holds.iter().map(|h| &h.0).collect::<Vec<_>>());
        rec["overIds"] = json!(overs.iter().map(|o| &o.0).collect::<Vec<_>>());
        if retry {
            rec["retryIds"] = json!(retries);
        }
    }
    let mut t = transcript(ctx, &web, server, false);
    t["observation"] = json!({"ops": rec});
    t
}

/// `rate-limiting` over Streamable HTTP, as over stdio: a window after the opening,
/// `total` live requests in rounds of `round`, each request on a fresh connection and
/// each round written at once once the one before was answered (every connection read
/// on a thread of its own, so that each answer's stored time is when it came), all by
/// `until`; a window after the last answer (and a little more), a request after them.
/// The conversation's record keeps 8 MiB per direction in full (the judge reads every
/// answer). `rec` gets `burstIds` and `afterId`.
pub fn rate(
    ctx: &Ctx,
    mut rec: Value,
    window: Duration,
    (round, total): (u32, u32),
    until: Duration,
) -> Value {
    let (server, web, session) = match opened_keeping(ctx, &mut rec, 8 << 20) {
        Ok(o) => o,
        Err(observation) => return observation,
    };
    if let Some(session) = session {
        // The opening's requests leave the window first.
        std::thread::sleep(window);
        let deadline = Instant::now() + until;
        let mut last = Instant::now();
        let mut ids: Vec<Value> = Vec::new();
        while ids.len() < total as usize {
            let n = round.max(1).min(total - ids.len() as u32);
            let batch: Vec<(Value, Value)> = (0..n).map(|_| ctx.live_request()).collect();
            let conns = posted(ctx, (&web, &server, &session), &batch);
            let answers = read_apart(conns, deadline, "answered, or the burst's deadline passed");
            if answers
                .iter()
                .any(|(id, r)| r.answer(id).is_some() || r.status.is_some_and(|s| s >= 400))
            {
                last = Instant::now();
            }
            ids.extend(batch.into_iter().map(|(id, _)| id));
        }
        // A window after the last answer (and a little more: the stored times are the
        // readers'), every place is free again.
        let due = last + window + Duration::from_millis(20);
        std::thread::sleep(due.saturating_duration_since(Instant::now()));
        rec["afterId"] = live(ctx, &web, &server, &session);
        rec["burstIds"] = json!(ids);
    }
    let mut t = transcript(ctx, &web, server, false);
    t["observation"] = json!({"ops": rec});
    t
}

/// The declared downstream call over Streamable HTTP, as over stdio: in a fresh server
/// process (its downstream stub in the phase `rec`'s injection names), `call` posted `n`
/// times, each on a fresh connection and waited for up to the answer window (no more
/// once one's connection closed without an answer), then a liveness request on another.
/// `rec` gets `callIds` (and `afterId`).
pub fn calls(ctx: &Ctx, mut rec: Value, call: &Value, n: usize) -> Value {
    let (mut server, web, session) = match opened(ctx, &mut rec) {
        Ok(o) => o,
        Err(observation) => return observation,
    };
    if let Some(session) = session {
        let mut ids = Vec::new();
        let mut closed = false;
        for _ in 0..n {
            let id = ctx.id();
            let msg = ctx.request(&id, "tools/call", call.clone());
            let r = post_waiting(ctx, &web, &server, &session, &msg, ctx.answer);
            closed = gone_by_itself(ctx, &mut server, &answer_label(&r, &id));
            ids.push(id);
            if closed {
                break;
            }
        }
        rec["callIds"] = json!(ids);
        if !closed {
            rec["afterId"] = live(ctx, &web, &server, &session);
        }
    }
    let mut t = transcript(ctx, &web, server, false);
    t["observation"] = json!({"ops": rec});
    t
}

/// `restart` over Streamable HTTP: the (shimmed) subject started and opened, its tools
/// listed on a fresh connection, then ended as a Streamable HTTP server is (SIGTERM, its
/// exit waited for up to `wait`: there is no input to close); then the same subject with
/// the same injection started afresh (`fresh`), opened and its tools listed.
pub fn restart(ctx: &Ctx, mut rec: Value, wait: Duration) -> Value {
    let injected = rec["injected"].clone();
    let (mut server, web, session) = match opened(ctx, &mut rec) {
        Ok(o) => o,
        Err(observation) => return observation,
    };
    let serving = session.is_some();
    if let Some(session) = session {
        let id = ctx.id();
        let msg = ctx.request(&id, "tools/list", json!({}));
        let _ = ctx.post_fresh(&web, &server, &session, &msg, &Shape::default());
        rec["toolsId"] = id;
        if let Some(probe) = server.probe.as_mut() {
            probe.signal_and_wait(rustix::process::Signal::TERM, "SIGTERM", wait);
        }
    }
    let mut t = transcript(ctx, &web, server, false);
    t["observation"] = json!({"ops": rec});
    if serving {
        t["observation"]["ops"]["restart"] = fresh(ctx, shimmed(ctx, &injected));
    }
    t
}

/// `rolling-version-skew` over Streamable HTTP: the running version (the subject as it
/// is, nothing injected) served, opened and its tools listed; the other version
/// (`other`, with the role's injection) served beside it on a port of its own, opened and
/// its tools listed; the running version sent a live request while the other still runs.
/// `rec` gets `toolsId`, `other` (the fresh server's record) and `afterId`.
pub fn skew(ctx: &Ctx, mut rec: Value, other: Result<Launch, String>) -> Value {
    let (server, web, session) = served(ctx, ctx.stdio_launch(), &mut rec, 0);
    if let Some(session) = session {
        let id = ctx.id();
        let msg = ctx.request(&id, "tools/list", json!({}));
        let _ = ctx.post_fresh(&web, &server, &session, &msg, &Shape::default());
        rec["toolsId"] = id;
        let mut after = Value::Null;
        rec["other"] = fresh_with(ctx, other, || {
            after = live(ctx, &web, &server, &session);
        });
        rec["afterId"] = after;
    }
    let mut t = transcript(ctx, &web, server, false);
    t["observation"] = json!({"ops": rec});
    t
}

/// Did `resp` answer request `id` with a result that is no failure (`isError`)?
fn succeeded(resp: &Resp, id: &Value) -> bool {
    resp.answer(id).is_some_and(|m| {
        m.get("result").is_some() && m.pointer("/result/isError") != Some(&json!(true))
    })
}

/// `partial-outage` over Streamable HTTP, as over stdio: one server process; the declared
/// call (`call`) with the downstream up (`beforeId`); when it succeeded, the stub moved
/// down (a control line on the server process's stdin, its move waited for on its
/// stderr), the call again (`duringId`) and a liveness request (`afterId`); the stub
/// moved up, and the call retried every tenth of the recovery time (at least 100 ms)
/// until it succeeds, for up to twice the recovery time (`retryIds`). Every request is
/// posted on a fresh connection and waited for up to the answer window.
pub fn outage(ctx: &Ctx, mut rec: Value, call: &Value, recovery: Duration) -> Value {
    let (mut server, web, session) = match opened(ctx, &mut rec) {
        Ok(o) => o,
        Err(observation) => return observation,
    };
    if let Some(session) = session {
        let call_once = |server: &Server| {
            let id = ctx.id();
            let msg = ctx.request(&id, "tools/call", call.clone());
            let r = post_waiting(ctx, &web, server, &session, &msg, ctx.answer);
            (id, r)
        };
        let (before, r) = call_once(&server);
        rec["before"] = json!(answer_label(&r, &before));
        let up = succeeded(&r, &before);
        rec["beforeId"] = before;
        if up {
            move_stub(ctx, &mut server, "down", 1);
            let (during, r) = call_once(&server);
            let label = answer_label(&r, &during);
            rec["during"] = json!(label);
            rec["duringId"] = during;
            let closed = gone_by_itself(ctx, &mut server, &label);
            if !closed {
                rec["afterId"] = live(ctx, &web, &server, &session);
            }
            move_stub(ctx, &mut server, "up", 2);
            let every = (recovery / 10).max(Duration::from_millis(100));
            let back = Instant::now();
            let mut retries = Vec::new();
            while !closed && back.elapsed() < recovery * 2 {
                let (id, r) = call_once(&server);
                let done = succeeded(&r, &id) || answer_label(&r, &id) == "closed";
                retries.push(id);
                if done {
                    break;
                }
                std::thread::sleep(every);
            }
            rec["retryIds"] = json!(retries);
        }
    }
    let mut t = transcript(ctx, &web, server, false);
    t["observation"] = json!({"ops": rec});
    t
}

/// The downstream stub beside `server` moved to `phase` (its `epoch`-th move): the
/// control line written to the server process's stdin (the shim's), and the stub's
/// acknowledgement waited for on its stderr, up to the answer window (the request that
/// follows goes by another way than the control line; the judge reads each of the
/// stub's answers with the moves before it, so a late move is seen, not guessed).
fn move_stub(ctx: &Ctx, server: &mut Server, phase: &str, epoch: u64) {
    let Some(probe) = server.probe.as_mut() else {
        return;
    };
    probe.send(crate::produce::drive::downstream::control_line(phase));
    let ack = crate::produce::drive::downstream::moved_line(phase, epoch);
    let ack = ack.trim_end().as_bytes();
    let until = Instant::now() + ctx.answer;
    while Instant::now() < until && !probe.stderr_bytes().windows(ack.len()).any(|w| w == ack) {
        std::thread::sleep(Duration::from_millis(5));
    }
}
