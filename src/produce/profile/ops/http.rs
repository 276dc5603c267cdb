//! Operational checks over Streamable HTTP: the subject (behind the same injection
//! shim as over stdio, which only relays its standard streams here) serves on a port
//! mcpres picks, and the runner talks to it with the raw HTTP client of the
//! `streamable-http` profile. Each observation's transcript is the server process's
//! own (its events, signals and end record, read as over stdio) with the HTTP
//! conversation's bytes under `http`.

use std::time::Duration;

use serde_json::{Value, json};

use super::checks::shimmed;
use crate::produce::profile::check::Ctx;
use crate::produce::profile::probe::Launch;
use crate::produce::profile::web::{Conn, Rec, Server, Session, Shape};

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

/// How an ending observation over HTTP ends its subject.
#[derive(Clone, Copy, PartialEq)]
pub enum End {
    /// SIGTERM once the requests are answered (`forced-shutdown`); the runner waits
    /// for the exit.
    Sigterm,
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
    let launch = match shimmed(ctx, &rec["injected"]) {
        Ok(l) => l,
        Err(why) => {
            rec["startError"] = json!(why);
            return json!({"observation": {"ops": rec}});
        }
    };
    let mut server = serve(ctx, &launch);
    let web = Rec::new(ctx.web().bearer.as_ref());
    if let Some(why) = &server.failed {
        rec["startError"] = json!(why);
    } else {
        match ctx.http_open(&web, &server) {
            Err(why) => rec["open"] = json!(format!("no-result ({why})")),
            Ok(session) => {
                rec["open"] = json!("result");
                let mut ids = Vec::new();
                for _ in 0..w.load.in_flight_at_shutdown {
                    let (id, msg) = ctx.live_request();
                    ids.push(id);
                    let _ = ctx.post_fresh(&web, &server, &session, &msg, &Shape::default());
                }
                rec["inFlightIds"] = json!(ids);
                if how == End::Sigterm
                    && let Some(probe) = server.probe.as_mut()
                {
                    let wait = Duration::from_millis(w.budgets.term_ms * 2 + 1000);
                    probe.signal_and_wait(rustix::process::Signal::TERM, "SIGTERM", wait);
                }
            }
        }
    }
    let mut t = transcript(ctx, &web, server, injected);
    t["observation"] = json!({"ops": rec});
    t
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
    r["transcript"] = transcript(ctx, &web, server, false);
    r
}

/// `process-crash` over Streamable HTTP: a request answered, a second posted and
/// not waited for, the server's process group killed at once; then a fresh server of
/// the subject (nothing injected) opened and sent a request.
pub fn crash(ctx: &Ctx, mut rec: Value, injected: bool, wait: Duration) -> Value {
    let launch = match shimmed(ctx, &rec["injected"]) {
        Ok(l) => l,
        Err(why) => {
            rec["startError"] = json!(why);
            return json!({"observation": {"ops": rec}});
        }
    };
    let mut server = serve(ctx, &launch);
    let web = Rec::new(ctx.web().bearer.as_ref());
    let mut serving = false;
    if let Some(why) = &server.failed {
        rec["startError"] = json!(why);
    } else {
        match ctx.http_open(&web, &server) {
            Err(why) => rec["open"] = json!(format!("no-result ({why})")),
            Ok(session) => {
                rec["open"] = json!("result");
                serving = true;
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
        }
    }
    let mut t = transcript(ctx, &web, server, injected);
    t["observation"] = json!({"ops": rec});
    if serving {
        t["observation"]["ops"]["restart"] = fresh(ctx, Ok(ctx.stdio_launch().clone()));
    }
    t
}
