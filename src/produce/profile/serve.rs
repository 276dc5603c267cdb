//! The Streamable HTTP side of a check's context: start the subject's server
//! for one check (or take the one at the URL), post to it, and stop it. Apart
//! from `web` (the raw client) and `check` (the context), so neither of those
//! files imports the other.

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::check::Ctx;
use super::web::*;
use crate::model::mcp::Revision;
use crate::produce::drive::http::{Body, Request};
use crate::produce::drive::proc;

impl Ctx<'_> {
    /// The run's Streamable HTTP target.
    pub fn web(&self) -> &Web {
        self.web
            .as_ref()
            .expect("an HTTP check runs with an HTTP target")
    }

    /// Start the subject's server for one check (or take the one at the URL)
    /// and wait until it accepts connections.
    pub fn serve(&self) -> Server {
        self.serve_launch(self.launch)
    }

    /// [`Ctx::serve`] with `launch` in place of the run's own (an operational
    /// check's subject behind its injection shim); `None`: the server at the URL.
    pub fn serve_launch(&self, launch: Option<&super::probe::Launch>) -> Server {
        let web = self.web();
        let Some(launch) = launch else {
            let addr = SocketAddr::new(web.ip, web.port);
            return Server {
                probe: None,
                addr: addr.into(),
                authority: web.authority(web.port),
                failed: (!accepting(addr))
                    .then(|| format!("nothing accepts connections at {addr}")),
            };
        };
        // A port picked free may be taken by another process before the
        // subject binds it (other runs on a busy machine): the subject then
        // exits, while something else answers on the port. That is seen
        // (the listener's owners are none of the subject's processes) and
        // the server is started again on another port, at most three times.
        let mut taken: Vec<u16> = Vec::new();
        loop {
            let port = if web.port == 0 {
                match free_port(web.ip) {
                    Ok(p) => p,
                    Err(e) => {
                        return Server {
                            probe: None,
                            addr: SocketAddr::new(web.ip, 0).into(),
                            authority: String::new(),
                            failed: Some(format!("no free port: {e}")),
                        };
                    }
                }
            } else {
                web.port
            };
            let mut addr: Endpoint = SocketAddr::new(web.ip, port).into();
            let mut launch = with_port(launch, port);
            if let (Some(name), Some(b)) = (&web.bearer_env, &web.bearer) {
                launch.env.insert(name.clone(), b.value().to_string());
            }
            let mut server = Server {
                probe: None,
                addr: addr.clone(),
                authority: web.authority(port),
                failed: None,
            };
            let mut probe = match self.start_with(&launch) {
                Ok(p) => p,
                Err(why) => {
                    server.failed = Some(why);
                    return server;
                }
            };
            // In a network namespace of its own, the server is reached
            // through the namespace's door, and no other process can take
            // its port.
            addr = probe.endpoint(addr.addr);
            server.addr = addr.clone();
            for t in &taken {
                probe.note(&format!(
                    "port {t} was taken by another process before the server bound it; started again on {port}"
                ));
            }
            let until = Instant::now() + self.startup;
            let mut foreign = false;
            loop {
                if accepting(&addr) {
                    probe.sample_tree();
                    let owners = proc::listener_owners(Some(probe.pid()), port);
                    let ours = owners.is_empty()
                        || owners
                            .iter()
                            .any(|p| *p == probe.pid() || probe.descendants_seen().contains_key(p));
                    if ours || Instant::now() >= until {
                        break;
                    }
                    // Another process's listener: wait for the subject's own
                    // (a server may bind late) or its exit.
                    if probe.try_exit().is_some() {
                        foreign = true;
                        break;
                    }
                } else if probe.try_exit().is_some() {
                    server.failed = Some("the server exited before it accepted connections".into());
                    break;
                }
                if Instant::now() >= until || self.cancelled() {
                    server.failed = Some(format!(
                        "the server did not accept connections at {addr} within {} ms",
                        self.startup.as_millis()
                    ));
                    break;
                }
                std::thread::sleep(Duration::from_millis(20));
            }
            if foreign && web.port == 0 && taken.len() < 2 && !self.cancelled() {
                taken.push(port);
                let _ = self.finish(probe, json!({"addr": addr.to_string(), "portTaken": true}));
                continue;
            }
            if foreign {
                server.failed = Some(format!(
                    "another process took port {port} before the server bound it"
                ));
            }
            probe.note(&format!("listening checked at {addr}"));
            server.probe = Some(probe);
            return server;
        }
    }

    /// Stop a check's server: SIGTERM, then (by [`Ctx::finish`]) the group;
    /// a listener still accepting afterwards counts against cleanup. The
    /// server's transcript, or `None` when mcpres did not start it.
    pub fn stop(&self, server: Server) -> Option<Value> {
        self.stop_counted(server, false)
    }

    /// [`Ctx::stop`]; `injected`: the server was made to leave a process behind
    /// on purpose (an operational control), which is recorded as injected.
    pub fn stop_counted(&self, server: Server, injected: bool) -> Option<Value> {
        let mut probe = server.probe?;
        let exited = probe
            .signal_and_wait(
                rustix::process::Signal::TERM,
                "SIGTERM (end of check)",
                super::probe::TERM_GRACE,
            )
            .is_some();
        let listening_after_sigterm = accepting(&server.addr);
        let pid = probe.pid();
        let summary = json!({"addr": server.addr.to_string(), "exitedOnSigterm": exited, "listenerLeftOpen": listening_after_sigterm});
        let mut artifact = if injected {
            self.finish_injected(probe, summary)
        } else {
            self.finish(probe, summary)
        };
        // Once the group and every adopted descendant are gone, a listener
        // still on the port that is not another check's live server was
        // left behind by this one.
        if accepting(&server.addr) {
            let owners = proc::listener_owners(None, server.addr.port());
            let foreign = owners.iter().all(|p| proc::is_own_child(*p));
            artifact["observation"]["listenerAfterCleanup"] = json!(owners);
            if !foreign || owners.is_empty() {
                self.tally.lock().expect("tally lock").leaky.push(format!(
                    "a listener at {} still accepted connections after the server with pid {pid} and its group were stopped (held by {owners:?})",
                    server.addr
                ));
            }
        }
        Some(artifact)
    }

    /// The headers and body of a POST of `msg` shaped by `shape`.
    pub fn http_request(
        &self,
        server: &Server,
        session: &Session,
        msg: &Value,
        shape: &Shape,
    ) -> Vec<u8> {
        self.http_post(server, session, msg, shape).to_bytes()
    }

    /// The POST of `msg` shaped by `shape`, before it is written.
    pub fn http_post(
        &self,
        server: &Server,
        session: &Session,
        msg: &Value,
        shape: &Shape,
    ) -> Request {
        let web = self.web();
        let to = PostTo {
            path: &web.path,
            authority: &server.authority,
            revision: self.revision,
            session: session.id.as_deref(),
            bearer: web.bearer.as_ref().map(Bearer::value),
        };
        post_request(&to, msg, shape)
    }

    /// POST `msg` on `conn` and read its response.
    pub fn post(
        &self,
        conn: &mut Conn<'_>,
        server: &Server,
        session: &Session,
        msg: &Value,
        shape: &Shape,
    ) -> Resp {
        let bytes = self.http_request(server, session, msg, shape);
        if !conn.write(&bytes) {
            return Resp {
                eof: true,
                ..Resp::default()
            };
        }
        conn.response(self.answer)
    }

    /// POST `msg` on a fresh connection (closed afterwards).
    pub fn post_fresh(
        &self,
        rec: &Rec,
        server: &Server,
        session: &Session,
        msg: &Value,
        shape: &Shape,
    ) -> Resp {
        match Conn::open(rec, &server.addr) {
            Ok(mut c) => self.post(&mut c, server, session, msg, shape),
            Err(_) => Resp::default(),
        }
    }

    /// Open a conversation: `initialize` then `notifications/initialized`
    /// (2025-11-25, keeping the session id) or `server/discover` (2026-07-28).
    pub fn http_open(&self, rec: &Rec, server: &Server) -> Result<Session, String> {
        let (method, params) = self.open_request();
        let id = self.id();
        let msg = self.request(&id, method, params);
        let mut session = Session::default();
        // The opening is often the first request a fresh process gets: it
        // is judged on the start-up bound, not the answer bound.
        let resp = match Conn::open(rec, &server.addr) {
            Ok(mut c) => {
                let bytes = self.http_request(server, &session, &msg, &Shape::default());
                if c.write(&bytes) {
                    c.response(self.startup.max(self.answer))
                } else {
                    Resp {
                        eof: true,
                        ..Resp::default()
                    }
                }
            }
            Err(_) => Resp::default(),
        };
        let Some(answer) = resp.answer(&id).cloned() else {
            // A response came, but not the opening's answer (another status,
            // a body without it, one cut at the response limit): the
            // subject's own answer, unlike silence or a close.
            let answered = resp.status.is_some_and(|s| !(200..300).contains(&s))
                || (resp.status.is_some() && !resp.timed_out);
            if answered {
                return Err(format!(
                    "{}: the opening was answered without its result: {}",
                    super::check::OPEN_REFUSED,
                    resp.label()
                ));
            }
            return Err(format!("the opening was not answered: {}", resp.label()));
        };
        if self.modern() && answer.pointer("/error/code").and_then(Value::as_i64) == Some(-32601) {
            // Said as the reason code first, as the windows say theirs:
            // the observations read it off (`not_opened_http`).
            return Err(format!(
                "{}: the subject answered {method} with -32601 (method not found): it does not speak {}",
                super::check::REVISION_NOT_SPOKEN,
                self.revision.as_str()
            ));
        }
        if answer.get("result").is_none() {
            return Err(format!(
                "{}: the opening was refused: {}",
                super::check::OPEN_REFUSED,
                answer.get("error").cloned().unwrap_or(Value::Null)
            ));
        }
        if self.revision == Revision::V2025_11_25 {
            session.id = resp.header("mcp-session-id").map(str::to_string);
            let note = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
            let r = self.post_fresh(rec, server, &session, &note, &Shape::default());
            rec.event(
                None,
                "initialized-notification",
                json!({"status": r.status}),
            );
        }
        session.open = Some(answer);
        Ok(session)
    }

    /// A request that any serving subject answers: `ping` (2025-11-25) or
    /// `tools/list` (2026-07-28).
    pub fn live_request(&self) -> (Value, Value) {
        let id = self.id();
        let msg = if self.modern() {
            self.request(&id, "tools/list", json!({}))
        } else {
            self.request(&id, "ping", json!({}))
        };
        (id, msg)
    }

    /// Is the subject still serving (a fresh connection's request answered)?
    pub fn serving(&self, rec: &Rec, server: &Server, session: &Session) -> bool {
        let (id, msg) = self.live_request();
        let r = self.post_fresh(rec, server, session, &msg, &Shape::default());
        r.answer(&id).is_some()
    }
}

/// Where a POST goes and what it carries besides its message.
struct PostTo<'a> {
    path: &'a str,
    /// `Host` unless the shape says otherwise.
    authority: &'a str,
    revision: Revision,
    /// The session id (2025-11-25).
    session: Option<&'a str>,
    bearer: Option<&'a str>,
}

/// The POST of `msg` shaped by `shape`: `Host`, `Content-Type`, `Accept`,
/// the protocol headers of the revision and the credential, each replaced by
/// a shape's extra header of the same name; the body sized, or chunked in
/// the shape's parts.
fn post_request(to: &PostTo, msg: &Value, shape: &Shape) -> Request {
    let modern = to.revision.is_stateless();
    let body = shape
        .body
        .clone()
        .unwrap_or_else(|| serde_json::to_vec(msg).expect("serializes"));
    let mut request = Request::new(shape.method.as_deref().unwrap_or("POST"), to.path)
        .header("Host", shape.host.as_deref().unwrap_or(to.authority))
        .header(
            "Content-Type",
            shape.content_type.as_deref().unwrap_or("application/json"),
        )
        .header(
            "Accept",
            shape
                .accept
                .as_deref()
                .unwrap_or("application/json, text/event-stream"),
        );
    let method = msg.get("method").and_then(Value::as_str);
    let opening = method == Some("initialize");
    if modern || !opening {
        request.push("MCP-Protocol-Version", to.revision.as_str());
    }
    if !modern
        && !shape.no_session
        && let Some(id) = to.session
    {
        request.push("Mcp-Session-Id", id);
    }
    if modern && let Some(m) = method {
        request.push("Mcp-Method", m);
        if m == "tools/call"
            && let Some(n) = msg.pointer("/params/name").and_then(Value::as_str)
        {
            request.push("Mcp-Name", n);
        }
    }
    if !shape.no_auth
        && let Some(b) = to.bearer
    {
        request.push("Authorization", &format!("Bearer {b}"));
    }
    for (k, v) in &shape.extra {
        request.set(k, v);
    }
    request.body = match &shape.chunks {
        Some(parts) => Body::Chunked(parts.clone()),
        None => Body::Sized(body),
    };
    request
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::produce::drive::http::split_head;

    /// The bytes the hand-written POST wrote before the one writer.
    fn written_before(to: &PostTo, msg: &Value, shape: &Shape) -> Vec<u8> {
        let body = shape
            .body
            .clone()
            .unwrap_or_else(|| serde_json::to_vec(msg).unwrap());
        let modern = to.revision.is_stateless();
        let mut headers: Vec<(String, String)> = vec![
            (
                "Host".into(),
                shape.host.clone().unwrap_or_else(|| to.authority.into()),
            ),
            (
                "Content-Type".into(),
                shape
                    .content_type
                    .clone()
                    .unwrap_or_else(|| "application/json".into()),
            ),
            (
                "Accept".into(),
                shape
                    .accept
                    .clone()
                    .unwrap_or_else(|| "application/json, text/event-stream".into()),
            ),
        ];
        let method = msg.get("method").and_then(Value::as_str);
        if modern || method != Some("initialize") {
            headers.push(("MCP-Protocol-Version".into(), to.revision.as_str().into()));
        }
        if !modern
            && !shape.no_session
            && let Some(id) = to.session
        {
            headers.push(("Mcp-Session-Id".into(), id.into()));
        }
        if modern && let Some(m) = method {
            headers.push(("Mcp-Method".into(), m.into()));
            if m == "tools/call"
                && let Some(n) = msg.pointer("/params/name").and_then(Value::as_str)
            {
                headers.push(("Mcp-Name".into(), n.into()));
            }
        }
        if !shape.no_auth
            && let Some(b) = to.bearer
        {
            headers.push(("Authorization".into(), format!("Bearer {b}")));
        }
        for (k, v) in &shape.extra {
            headers.retain(|(h, _)| !h.eq_ignore_ascii_case(k));
            headers.push((k.clone(), v.clone()));
        }
        let mut out = format!(
            "{} {} HTTP/1.1\r\n",
            shape.method.as_deref().unwrap_or("POST"),
            to.path
        )
        .into_bytes();
        for (k, v) in &headers {
            out.extend_from_slice(format!("{k}: {v}\r\n").as_bytes());
        }
        match &shape.chunks {
            Some(parts) => {
                out.extend_from_slice(b"Transfer-Encoding: chunked\r\n\r\n");
                for p in parts {
                    out.extend_from_slice(format!("{:x}\r\n", p.len()).as_bytes());
                    out.extend_from_slice(p);
                    out.extend_from_slice(b"\r\n");
                }
                out.extend_from_slice(b"0\r\n\r\n");
            }
            None => {
                out.extend_from_slice(format!("Content-Length: {}\r\n\r\n", body.len()).as_bytes());
                out.extend_from_slice(&body);
            }
        }
        out
    }

    #[test]
    fn every_shape_of_post_is_written_byte_for_byte_as_before() {
        let open = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}});
        let call = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "echo", "arguments": {}}});
        let note = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        let shapes = [
            Shape::default(),
            Shape {
                body: Some(b"{not json".to_vec()),
                accept: Some("text/html".into()),
                content_type: Some("text/plain".into()),
                host: Some("evil.example:80".into()),
                method: Some("PUT".into()),
                ..Shape::default()
            },
            Shape {
                no_auth: true,
                no_session: true,
                extra: vec![
                    ("Origin".into(), "http://evil.example".into()),
                    (
                        "content-type".into(),
                        "application/json; charset=utf-8".into(),
                    ),
                    ("Authorization".into(), "Bearer other".into()),
                ],
                ..Shape::default()
            },
            Shape {
                chunks: Some(vec![b"{\"jsonrpc\":".to_vec(), Vec::new(), vec![b' '; 300]]),
                ..Shape::default()
            },
        ];
        let mut compared = 0;
        for revision in [Revision::V2025_11_25, Revision::V2026_07_28] {
            for session in [None, Some("s-1")] {
                for bearer in [None, Some("tok")] {
                    let to = PostTo {
                        path: "/mcp",
                        authority: "127.0.0.1:8080",
                        revision,
                        session,
                        bearer,
                    };
                    for msg in [&open, &call, &note] {
                        for shape in &shapes {
                            assert_eq!(
                                post_request(&to, msg, shape).to_bytes(),
                                written_before(&to, msg, shape),
                                "{revision:?} {session:?} {bearer:?} {msg}"
                            );
                            compared += 1;
                        }
                    }
                }
            }
        }
        assert_eq!(compared, 2 * 2 * 2 * 3 * 4);
        // The malformed-chunk probe: the chunked head, then a size line that
        // is no hex number (it spliced its bytes into the chunked head).
        for to in [
            PostTo {
                path: "/mcp",
                authority: "h:1",
                revision: Revision::V2025_11_25,
                session: Some("s"),
                bearer: Some("b"),
            },
            PostTo {
                path: "/mcp",
                authority: "h:1",
                revision: Revision::V2026_07_28,
                session: None,
                bearer: None,
            },
        ] {
            let body = serde_json::to_vec(&call).unwrap();
            let chunked = Shape {
                chunks: Some(vec![body.clone()]),
                ..Shape::default()
            };
            let (head, _) = split_head(&written_before(&to, &call, &chunked));
            let mut before = head;
            before.extend_from_slice(b"zz\r\n");
            before.extend_from_slice(&body);
            before.extend_from_slice(b"\r\n0\r\n\r\n");
            let mut request = post_request(&to, &call, &Shape::default());
            request.body = Body::ChunkedRaw([&b"zz\r\n"[..], &body, b"\r\n0\r\n\r\n"].concat());
            assert_eq!(request.to_bytes(), before);
        }
        // And one spelled out.
        let to = PostTo {
            path: "/mcp",
            authority: "h:1",
            revision: Revision::V2025_11_25,
            session: Some("s"),
            bearer: Some("b"),
        };
        assert_eq!(
            post_request(&to, &note, &Shape::default()).to_bytes(),
            [
                &b"POST /mcp HTTP/1.1\r\nHost: h:1\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2025-11-25\r\nMcp-Session-Id: s\r\nAuthorization: Bearer b\r\nContent-Length: 54\r\n\r\n"[..],
                &serde_json::to_vec(&note).unwrap(),
            ]
            .concat()
        );
    }
}
