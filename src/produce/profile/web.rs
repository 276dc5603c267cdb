//! Streamable HTTP probes, below any HTTP library: the subject's server
//! process (started for each check when mcpres has its command), raw TCP
//! connections whose every byte is recorded with its time before it is
//! decoded, and the decoding of one response (status, headers, JSON body or
//! event stream, the JSON-RPC frames with their arrival times).
//!
//! Nothing here repairs what a subject sends: a malformed chunk, a body cut
//! short or a connection closed early is seen as it happened.

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::net::{IpAddr, Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::probe::{Launch, Probe, TRANSCRIPT_KEEP_BYTES, chunk_record};
use crate::produce::drive::redact::Redactor;
use crate::produce::harness::http::ResponseParser;

/// What replaces the synthetic credential in every recorded byte.
pub const REDACTED: &[u8] = crate::produce::drive::redact::SYNTHETIC.as_bytes();

/// A synthetic bearer credential, made for one run and never written anywhere.
pub struct Bearer(zeroize::Zeroizing<String>);

impl std::fmt::Debug for Bearer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Bearer(<synthetic>)")
    }
}

impl Bearer {
    /// A fresh random credential (32 random bytes, hex).
    pub fn fresh() -> Bearer {
        Bearer(zeroize::Zeroizing::new(
            crate::produce::harness::random_hex(32),
        ))
    }

    /// A credential given by the operator (for a server mcpres did not start).
    pub fn given(value: String) -> Bearer {
        Bearer(zeroize::Zeroizing::new(value))
    }

    pub fn value(&self) -> &str {
        &self.0
    }
}

/// The Streamable HTTP target of a run.
#[derive(Debug)]
pub struct Web {
    pub ip: IpAddr,
    /// 0: pick a free port for every server started.
    pub port: u16,
    pub path: String,
    pub bearer: Option<Bearer>,
    /// The variable that hands the credential to the servers mcpres starts.
    pub bearer_env: Option<String>,
    /// How long a stalled request may stay open (the `timeout` check's bound).
    pub idle: Duration,
}

impl Web {
    /// `Host` as a client writes it for `port`.
    pub fn authority(&self, port: u16) -> String {
        match self.ip {
            IpAddr::V6(v6) => format!("[{v6}]:{port}"),
            IpAddr::V4(v4) => format!("{v4}:{port}"),
        }
    }
}

/// Parse the `--http` URL: `http://IP:PORT/PATH` on a loopback address.
pub fn parse_url(url: &str) -> Result<(IpAddr, u16, String), String> {
    let rest = url
        .strip_prefix("http://")
        .ok_or_else(|| format!("--http {url:?}: only http:// URLs are supported"))?;
    let (authority, path) = match rest.find('/') {
        Some(i) => (&rest[..i], &rest[i..]),
        None => (rest, "/"),
    };
    let (host, port) = match authority.strip_prefix('[') {
        Some(v6) => v6
            .split_once("]:")
            .ok_or_else(|| format!("--http {url:?}: a port is required"))?,
        None => authority
            .rsplit_once(':')
            .ok_or_else(|| format!("--http {url:?}: a port is required"))?,
    };
    let port: u16 = port
        .parse()
        .map_err(|_| format!("--http {url:?}: bad port"))?;
    let ip: IpAddr = if host.eq_ignore_ascii_case("localhost") {
        IpAddr::from([127, 0, 0, 1])
    } else {
        host.parse()
            .map_err(|_| format!("--http {url:?}: the host must be an IP address or localhost"))?
    };
    if !ip.is_loopback() {
        return Err(format!(
            "--http {url:?}: {ip} is not a loopback address; a profile run evaluates loopback targets only"
        ));
    }
    Ok((ip, port, path.to_string()))
}

/// A free TCP port on `ip` right now.
pub fn free_port(ip: IpAddr) -> std::io::Result<u16> {
    Ok(TcpListener::bind(SocketAddr::new(ip, 0))?
        .local_addr()?
        .port())
}

/// `{port}` replaced by `port` in the launch's arguments and environment.
pub fn with_port(launch: &Launch, port: u16) -> Launch {
    let sub = |s: &String| s.replace("{port}", &port.to_string());
    Launch {
        program: launch.program.clone(),
        args: launch.args.iter().map(sub).collect(),
        env: launch
            .env
            .iter()
            .map(|(k, v)| (k.clone(), sub(v)))
            .collect(),
    }
}

/// Does the launch say where the port goes?
pub fn names_port(launch: &Launch) -> bool {
    launch.args.iter().any(|a| a.contains("{port}"))
        || launch.env.values().any(|v| v.contains("{port}"))
}

/// Does something accept connections at `addr` right now?
pub fn accepting(addr: SocketAddr) -> bool {
    TcpStream::connect_timeout(&addr, Duration::from_millis(200)).is_ok()
}

/// The inode of a socket, the number `/proc/net/tcp` lists it by: it names
/// this very socket, where its port may be handed to another listener as
/// soon as it is closed.
pub fn socket_inode(socket: impl std::os::fd::AsFd) -> Option<u64> {
    rustix::fs::fstat(socket).ok().map(|st| st.st_ino)
}

/// Whether the listening TCP socket with this inode still exists (in this
/// network namespace). Closing a listener removes its row at once.
pub fn inode_listening(inode: u64) -> bool {
    ["/proc/net/tcp", "/proc/net/tcp6"].iter().any(|file| {
        std::fs::read_to_string(file)
            .unwrap_or_default()
            .lines()
            .skip(1)
            .any(|line| {
                let f: Vec<&str> = line.split_whitespace().collect();
                f.len() > 9 && f[3] == "0A" && f[9].parse::<u64>().ok() == Some(inode)
            })
    })
}

/// One observation's record of every connection: opens, closes, and every
/// chunk sent and received with its time (the credential redacted).
pub struct Rec {
    start: Instant,
    /// The one redactor (`drive::redact`), when there is something to redact.
    redactor: Option<Redactor>,
    inner: Mutex<RecInner>,
}

#[derive(Default)]
struct RecInner {
    events: Vec<Entry>,
    kept: BTreeMap<&'static str, usize>,
    connections: usize,
}

/// A recorded event, or a chunk held raw until the transcript is made.
enum Entry {
    Done(Value),
    /// With secrets to redact, a chunk is kept as it came: a credential may
    /// straddle two reads, and only the whole stream of a connection's
    /// direction shows it (memory only; never written so).
    Raw {
        at: u64,
        conn: usize,
        dir: &'static str,
        bytes: zeroize::Zeroizing<Vec<u8>>,
    },
}

impl Rec {
    pub fn new(bearer: Option<&Bearer>) -> Rec {
        Rec::redacting(bearer.map(Bearer::value).as_slice())
    }

    /// A record that replaces each of `secrets` (several credentials, e.g.
    /// every access token of an OAuth observation) in every recorded byte.
    pub fn redacting(secrets: &[&str]) -> Rec {
        let secrets: Vec<&str> = secrets.iter().copied().filter(|s| !s.is_empty()).collect();
        Rec {
            start: Instant::now(),
            redactor: (!secrets.is_empty()).then(|| Redactor::synthetic(&secrets)),
            inner: Mutex::default(),
        }
    }

    /// A record that redacts with `redactor` (every stream as a whole).
    pub fn with_redactor(redactor: Redactor) -> Rec {
        Rec {
            start: Instant::now(),
            redactor: Some(redactor),
            inner: Mutex::default(),
        }
    }

    pub fn now_ms(&self) -> u64 {
        u64::try_from(self.start.elapsed().as_millis()).unwrap_or(u64::MAX)
    }

    fn chunk(&self, conn: usize, dir: &'static str, bytes: &[u8]) {
        let at = self.now_ms();
        let mut inner = self.inner.lock().expect("record lock");
        if self.redactor.is_some() {
            inner.events.push(Entry::Raw {
                at,
                conn,
                dir,
                bytes: zeroize::Zeroizing::new(bytes.to_vec()),
            });
            return;
        }
        let v = Self::chunk_value(&mut inner.kept, at, conn, dir, bytes);
        inner.events.push(Entry::Done(v));
    }

    fn chunk_value(
        kept: &mut BTreeMap<&'static str, usize>,
        at: u64,
        conn: usize,
        dir: &'static str,
        bytes: &[u8],
    ) -> Value {
        let kept = kept.entry(dir).or_default();
        let elide = *kept + bytes.len() > TRANSCRIPT_KEEP_BYTES;
        if !elide {
            *kept += bytes.len();
        }
        let mut v = chunk_record(at, dir, bytes, elide);
        v["connection"] = json!(conn);
        v
    }

    /// The raw chunks redacted, each stream (a connection's direction) as a
    /// whole by the one redactor: a secret is replaced where it starts, and
    /// its bytes in later chunks of the stream are dropped.
    fn redacted_chunks(&self, events: &[Entry]) -> BTreeMap<usize, Vec<u8>> {
        let Some(redactor) = &self.redactor else {
            return BTreeMap::new();
        };
        let mut streams: BTreeMap<(usize, &'static str), Vec<usize>> = BTreeMap::new();
        for (k, e) in events.iter().enumerate() {
            if let Entry::Raw { conn, dir, .. } = e {
                streams.entry((*conn, *dir)).or_default().push(k);
            }
        }
        let mut out = BTreeMap::new();
        for members in streams.values() {
            let chunks: Vec<&[u8]> = members
                .iter()
                .map(|&k| match &events[k] {
                    Entry::Raw { bytes, .. } => bytes.as_slice(),
                    Entry::Done(_) => &[],
                })
                .collect();
            let (redacted, _) = redactor.redact_stream(&chunks);
            out.extend(members.iter().copied().zip(redacted));
        }
        out
    }

    /// Record a runner event (`what`, with `extra` fields).
    pub fn event(&self, conn: Option<usize>, what: &str, extra: Value) {
        let mut v = json!({"atMs": self.now_ms(), "event": what});
        if let Some(c) = conn {
            v["connection"] = json!(c);
        }
        if let Value::Object(m) = extra {
            for (k, x) in m {
                v[k] = x;
            }
        }
        self.inner
            .lock()
            .expect("record lock")
            .events
            .push(Entry::Done(v));
    }

    fn next_conn(&self) -> usize {
        let mut inner = self.inner.lock().expect("record lock");
        inner.connections += 1;
        inner.connections
    }

    /// The transcript: every event in order.
    pub fn transcript(&self) -> Value {
        let inner = self.inner.lock().expect("record lock");
        let mut redacted = self.redacted_chunks(&inner.events);
        let mut kept = inner.kept.clone();
        let events: Vec<Value> = inner
            .events
            .iter()
            .enumerate()
            .map(|(k, e)| match e {
                Entry::Done(v) => v.clone(),
                Entry::Raw { at, conn, dir, .. } => {
                    let bytes = redacted.remove(&k).unwrap_or_default();
                    Self::chunk_value(&mut kept, *at, *conn, dir, &bytes)
                }
            })
            .collect();
        json!({"connections": inner.connections, "events": events})
    }
}

/// One raw TCP connection to the subject.
pub struct Conn<'r> {
    pub id: usize,
    stream: TcpStream,
    rec: &'r Rec,
    /// Bytes read past the last response (a pipelined next one).
    pending: Vec<u8>,
    /// The subject closed its side.
    pub eof: bool,
    closed: bool,
}

impl<'r> Conn<'r> {
    pub fn open(rec: &'r Rec, addr: SocketAddr) -> std::io::Result<Conn<'r>> {
        let id = rec.next_conn();
        match TcpStream::connect_timeout(&addr, Duration::from_secs(2)) {
            Ok(stream) => {
                let _ = stream.set_nodelay(true);
                let local = stream.local_addr().map(|a| a.port()).unwrap_or(0);
                rec.event(Some(id), "connected", json!({"localPort": local}));
                Ok(Conn {
                    id,
                    stream,
                    rec,
                    pending: Vec::new(),
                    eof: false,
                    closed: false,
                })
            }
            Err(e) => {
                rec.event(Some(id), "connect-failed", json!({"error": e.to_string()}));
                Err(e)
            }
        }
    }

    /// Write `bytes` (recorded first); false when the write failed.
    pub fn write(&mut self, bytes: &[u8]) -> bool {
        self.rec.chunk(self.id, "sent", bytes);
        match self.stream.write_all(bytes) {
            Ok(()) => true,
            Err(e) => {
                self.rec.event(
                    Some(self.id),
                    "write-failed",
                    json!({"error": e.to_string()}),
                );
                false
            }
        }
    }

    /// This end's port.
    pub fn local_port(&self) -> u16 {
        self.stream.local_addr().map(|a| a.port()).unwrap_or(0)
    }

    /// Write `bytes` from another thread while reading the response, so a
    /// subject that answers (and stops reading) before the whole body is
    /// written is still heard. The connection is closed afterwards.
    pub fn write_then_read(&mut self, bytes: &[u8], limit: Duration) -> Resp {
        self.rec.chunk(self.id, "sent", bytes);
        let writer = self.stream.try_clone();
        let id = self.id;
        let rec = self.rec;
        std::thread::scope(|sc| {
            let handle = writer
                .ok()
                .map(|mut w| sc.spawn(move || w.write_all(bytes)));
            let r = self.response(limit);
            self.closed = true;
            let _ = self.stream.shutdown(Shutdown::Both);
            if let Some(h) = handle {
                let outcome = match h.join() {
                    Ok(Ok(())) => "the whole body was written".to_string(),
                    Ok(Err(e)) => format!("the body was cut short: {e}"),
                    Err(_) => "the writer failed".to_string(),
                };
                rec.event(Some(id), "body-written", json!({"outcome": outcome}));
            }
            rec.event(
                Some(id),
                "client-closed",
                json!({"why": "after the response"}),
            );
            r
        })
    }

    /// Stop writing (a FIN to the subject); reading goes on.
    pub fn shutdown_write(&mut self) {
        let _ = self.stream.shutdown(Shutdown::Write);
        self.rec
            .event(Some(self.id), "client-stopped-writing", json!({}));
    }

    /// Close the connection from the client side.
    pub fn close(mut self, why: &str) {
        self.closed = true;
        let _ = self.stream.shutdown(Shutdown::Both);
        self.rec
            .event(Some(self.id), "client-closed", json!({"why": why}));
    }

    /// Read what arrives within `limit` (at most `max` bytes per read);
    /// recorded; empty at EOF or when nothing came.
    fn read_chunk(&mut self, limit: Duration, max: usize) -> Option<Vec<u8>> {
        if self.eof {
            return None;
        }
        let _ = self
            .stream
            .set_read_timeout(Some(limit.max(Duration::from_millis(1))));
        let mut buf = vec![0u8; max];
        match self.stream.read(&mut buf) {
            Ok(0) => {
                self.eof = true;
                self.rec.event(Some(self.id), "subject-closed", json!({}));
                None
            }
            Ok(n) => {
                buf.truncate(n);
                self.rec.chunk(self.id, "received", &buf);
                Some(buf)
            }
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) =>
            {
                Some(Vec::new())
            }
            Err(e) => {
                self.eof = true;
                self.rec.event(
                    Some(self.id),
                    "read-failed",
                    json!({"error": e.to_string()}),
                );
                None
            }
        }
    }

    /// Wait at most `limit` for the subject to close the connection; bytes
    /// that arrive meanwhile are recorded. True when it closed.
    pub fn wait_closed(&mut self, limit: Duration) -> bool {
        let until = Instant::now() + limit;
        while !self.eof {
            let left = until.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return false;
            }
            if let Some(bytes) = self.read_chunk(left.min(Duration::from_millis(50)), 64 << 10) {
                self.pending.extend_from_slice(&bytes);
            }
        }
        true
    }

    /// Read one response, for at most `limit`.
    pub fn response(&mut self, limit: Duration) -> Resp {
        self.response_with(limit, &Reading::default())
    }

    /// Read one response as `how` says.
    pub fn response_with(&mut self, limit: Duration, how: &Reading) -> Resp {
        let started = self.rec.now_ms();
        let until = Instant::now() + limit;
        let mut parser = ResponseParser::default();
        let mut resp = Resp::default();
        let take = |parser: &mut ResponseParser, bytes: &[u8], resp: &mut Resp, at: u64| {
            if resp.first_byte_ms.is_none() && !bytes.is_empty() {
                resp.first_byte_ms = Some(at);
            }
            for f in parser.feed(bytes) {
                resp.push_frame(at, &f);
            }
        };
        let pending = std::mem::take(&mut self.pending);
        if !pending.is_empty() {
            let at = self.rec.now_ms().saturating_sub(started);
            take(&mut parser, &pending, &mut resp, at);
        }
        loop {
            if parser.complete() || how.stop(&resp) {
                break;
            }
            let left = until.saturating_duration_since(Instant::now());
            if left.is_zero() {
                resp.timed_out = true;
                break;
            }
            let wait = left.min(Duration::from_millis(50));
            match self.read_chunk(wait, how.read_size.unwrap_or(64 << 10)) {
                Some(bytes) => {
                    if !bytes.is_empty() {
                        let at = self.rec.now_ms().saturating_sub(started);
                        take(&mut parser, &bytes, &mut resp, at);
                        if let Some(pause) = how.pause {
                            std::thread::sleep(pause);
                        }
                    }
                }
                None => {
                    let at = self.rec.now_ms().saturating_sub(started);
                    for f in parser.finish() {
                        resp.push_frame(at, &f);
                    }
                    break;
                }
            }
        }
        resp.eof = self.eof;
        resp.complete = parser.complete();
        resp.status = parser.status();
        resp.headers = parser.headers().to_vec();
        resp.media = parser.media_type();
        resp.body = parser.body().to_vec();
        self.pending = parser.leftover().to_vec();
        resp
    }
}

impl Drop for Conn<'_> {
    fn drop(&mut self) {
        if !self.closed {
            let _ = self.stream.shutdown(Shutdown::Both);
            self.rec
                .event(Some(self.id), "client-closed", json!({"why": "done"}));
        }
    }
}

/// How a response is read.
#[derive(Default)]
pub struct Reading {
    /// Read at most this many bytes at a time.
    pub read_size: Option<usize>,
    /// Sleep this long after every read (a slow consumer).
    pub pause: Option<Duration>,
    /// Stop once this many frames have arrived.
    pub stop_after_frames: Option<usize>,
}

impl Reading {
    fn stop(&self, r: &Resp) -> bool {
        self.stop_after_frames.is_some_and(|n| r.frames.len() >= n)
    }
}

/// One response as it arrived.
#[derive(Debug, Clone, Default)]
pub struct Resp {
    pub status: Option<u16>,
    pub headers: Vec<(String, String)>,
    pub media: Option<String>,
    /// JSON-RPC frames with their arrival (ms after the read began).
    pub frames: Vec<(u64, Value)>,
    /// Frames that were not JSON.
    pub bad_frames: usize,
    pub body: Vec<u8>,
    pub first_byte_ms: Option<u64>,
    pub complete: bool,
    pub eof: bool,
    pub timed_out: bool,
}

impl Resp {
    fn push_frame(&mut self, at: u64, bytes: &[u8]) {
        match serde_json::from_slice::<Value>(bytes) {
            Ok(v) => self.frames.push((at, v)),
            Err(_) => self.bad_frames += 1,
        }
    }

    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// The frame answering `id` (a `result` or an `error` with that id).
    pub fn answer(&self, id: &Value) -> Option<&Value> {
        self.frames.iter().map(|(_, f)| f).find(|f| {
            f.get("id") == Some(id) && (f.get("result").is_some() || f.get("error").is_some())
        })
    }

    /// Frames that answer some request (have an id and a result or error).
    pub fn answers(&self) -> Vec<&Value> {
        self.frames
            .iter()
            .map(|(_, f)| f)
            .filter(|f| {
                f.get("id").is_some() && (f.get("result").is_some() || f.get("error").is_some())
            })
            .collect()
    }

    /// The JSON-RPC error codes in the response.
    pub fn error_codes(&self) -> Vec<i64> {
        self.frames
            .iter()
            .filter_map(|(_, f)| f.pointer("/error/code").and_then(Value::as_i64))
            .collect()
    }

    /// Did the subject meet the request with a JSON-RPC parse error?
    pub fn parse_error(&self) -> bool {
        self.error_codes().contains(&-32700)
    }

    /// Did the answer to `id` carry a result?
    pub fn result_for(&self, id: &Value) -> Option<&Value> {
        self.answer(id).and_then(|a| a.get("result"))
    }

    pub fn is_2xx(&self) -> bool {
        self.status.is_some_and(|s| (200..300).contains(&s))
    }

    pub fn label(&self) -> String {
        match self.status {
            Some(s) => format!(
                "{s} {}{}",
                self.media.as_deref().unwrap_or("(no media type)"),
                if self.frames.is_empty() {
                    String::new()
                } else {
                    format!(", {} frame(s)", self.frames.len())
                }
            ),
            None if self.eof => "closed without a response".into(),
            None => "no response".into(),
        }
    }

    pub fn summary(&self) -> Value {
        json!({
            "status": self.status,
            "mediaType": self.media,
            "frames": self.frames.len(),
            "frameTimesMs": self.frames.iter().map(|(t, _)| *t).collect::<Vec<_>>(),
            "nonJsonFrames": self.bad_frames,
            "bodyBytes": self.body.len(),
            "errorCodes": self.error_codes(),
            "complete": self.complete,
            "closedBySubject": self.eof,
            "timedOut": self.timed_out,
        })
    }
}

/// What a request looks like on the wire, beyond the usual.
#[derive(Default, Clone)]
pub struct Shape {
    /// Replace the body (the message is still used for the headers).
    pub body: Option<Vec<u8>>,
    pub accept: Option<String>,
    pub content_type: Option<String>,
    pub host: Option<String>,
    pub method: Option<String>,
    /// Leave the credential out.
    pub no_auth: bool,
    /// Leave the session id out (2025-11-25).
    pub no_session: bool,
    /// Headers to add (or, when the name is one of ours, to replace it).
    pub extra: Vec<(String, String)>,
    /// Send the body with chunked transfer coding, in these parts.
    pub chunks: Option<Vec<Vec<u8>>>,
}

/// The conversation a probe opened: the session (2025-11-25) and the
/// opening's answer.
#[derive(Debug, Clone, Default)]
pub struct Session {
    pub id: Option<String>,
    pub open: Option<Value>,
}

/// The server a check runs against: the process mcpres started for it (if
/// any) and where it listens.
pub struct Server {
    pub probe: Option<Probe>,
    pub addr: SocketAddr,
    pub authority: String,
    /// Why the server could not be started or reached, if so.
    pub failed: Option<String>,
}

/// The TCP sockets the processes `pids` hold: (local port, remote port,
/// state as `/proc/net/tcp` writes it: `01` established, `08` close-wait,
/// `0A` listen, ...).
pub fn sockets_of(pids: &[u32]) -> Vec<(u16, u16, String)> {
    socket_peers(pids)
        .into_iter()
        .map(|(local, remote, state)| (local, remote.port(), state))
        .collect()
}

/// The TCP sockets the processes `pids` hold, with the remote address:
/// (local port, remote address, state). A listener's remote address is the
/// unspecified address with port 0. Read from `/proc/net/tcp{,6}` of the
/// caller's network namespace.
pub fn socket_peers(pids: &[u32]) -> Vec<(u16, SocketAddr, String)> {
    let mut inodes = std::collections::BTreeSet::new();
    for pid in pids {
        let Ok(fds) = std::fs::read_dir(format!("/proc/{pid}/fd")) else {
            continue;
        };
        for fd in fds.flatten() {
            if let Ok(target) = std::fs::read_link(fd.path())
                && let Some(n) = target
                    .to_str()
                    .and_then(|t| t.strip_prefix("socket:["))
                    .and_then(|t| t.strip_suffix(']'))
            {
                inodes.insert(n.to_string());
            }
        }
    }
    let mut out = Vec::new();
    for file in ["/proc/net/tcp", "/proc/net/tcp6"] {
        let Ok(text) = std::fs::read_to_string(file) else {
            continue;
        };
        for line in text.lines().skip(1) {
            let f: Vec<&str> = line.split_whitespace().collect();
            if f.len() > 9 && inodes.contains(f[9]) {
                let local = proc_net_addr(f[1]).map_or(0, |a| a.port());
                let remote = proc_net_addr(f[2])
                    .unwrap_or_else(|| SocketAddr::new(IpAddr::from([0, 0, 0, 0]), 0));
                out.push((local, remote, f[3].to_string()));
            }
        }
    }
    out
}

/// An address as `/proc/net/tcp{,6}` writes it: the address's bytes as
/// 32-bit words in host byte order, in hex, then `:` and the port in hex.
pub fn proc_net_addr(field: &str) -> Option<SocketAddr> {
    let (addr, port) = field.rsplit_once(':')?;
    let port = u16::from_str_radix(port, 16).ok()?;
    let mut bytes = Vec::with_capacity(16);
    for i in (0..addr.len()).step_by(8) {
        let word = u32::from_str_radix(addr.get(i..i + 8)?, 16).ok()?;
        bytes.extend_from_slice(&word.to_ne_bytes());
    }
    let ip = match bytes.len() {
        4 => IpAddr::from(<[u8; 4]>::try_from(bytes).ok()?),
        16 => IpAddr::from(<[u8; 16]>::try_from(bytes).ok()?),
        _ => return None,
    };
    Some(SocketAddr::new(ip, port))
}

/// The subject process and its descendants right now.
pub fn process_tree(pid: u32) -> Vec<u32> {
    let procs = crate::produce::harness::tree::snapshot();
    let mut pids = vec![pid];
    pids.extend(
        crate::produce::harness::tree::descendants(&procs, &[pid])
            .iter()
            .map(|p| p.pid),
    );
    pids
}

/// Is process `pid` running (not gone, not a zombie)?
pub fn alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|stat| {
            stat.rsplit_once(')')
                .and_then(|(_, rest)| rest.split_whitespace().next().map(|s| s != "Z"))
        })
        .unwrap_or(false)
}

/// The processes that hold a listening TCP socket on `port`.
pub fn listener_owners(port: u16) -> Vec<u32> {
    let mut inodes = std::collections::BTreeSet::new();
    for file in ["/proc/net/tcp", "/proc/net/tcp6"] {
        for line in std::fs::read_to_string(file)
            .unwrap_or_default()
            .lines()
            .skip(1)
        {
            let f: Vec<&str> = line.split_whitespace().collect();
            let on_port = f
                .get(1)
                .and_then(|a| a.rsplit_once(':'))
                .and_then(|(_, p)| u16::from_str_radix(p, 16).ok())
                == Some(port);
            if f.len() > 9 && f[3] == "0A" && on_port {
                inodes.insert(format!("socket:[{}]", f[9]));
            }
        }
    }
    let mut owners = Vec::new();
    let Ok(procs) = std::fs::read_dir("/proc") else {
        return owners;
    };
    for entry in procs.flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<u32>().ok())
        else {
            continue;
        };
        let Ok(fds) = std::fs::read_dir(entry.path().join("fd")) else {
            continue;
        };
        if fds.flatten().any(|fd| {
            std::fs::read_link(fd.path())
                .is_ok_and(|t| t.to_str().is_some_and(|t| inodes.contains(t)))
        }) {
            owners.push(pid);
        }
    }
    owners
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_secret_split_across_two_reads_is_redacted_where_it_starts() {
        let rec = Rec::redacting(&["eyJsecret.token"]);
        rec.chunk(1, "received", b"Authorization: Bearer eyJsec");
        rec.chunk(2, "received", b"eyJsecret.token on another connection");
        rec.chunk(1, "received", b"ret.token\r\nnext");
        rec.chunk(1, "sent", b"eyJsecret.tok");
        let t = rec.transcript();
        let texts: Vec<&str> = t["events"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["text"].as_str().unwrap())
            .collect();
        assert_eq!(
            texts,
            [
                "Authorization: Bearer <synthetic-bearer>",
                "<synthetic-bearer> on another connection",
                "\r\nnext",
                // Another direction is another stream; a prefix alone is
                // not the secret.
                "eyJsecret.tok",
            ]
        );
        assert!(!t.to_string().contains("ret.token"));
    }

    #[test]
    fn a_closed_listener_is_known_gone_by_its_inode() {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let inode = socket_inode(&l).expect("an inode");
        assert!(inode_listening(inode));
        // Another listener does not answer for this one.
        let other = TcpListener::bind("127.0.0.1:0").unwrap();
        assert_ne!(socket_inode(&other), Some(inode));
        drop(l);
        assert!(!inode_listening(inode));
        assert!(inode_listening(socket_inode(&other).unwrap()));
    }
}
