//! Streamable HTTP probes, below any HTTP library: the subject's server
//! process (started for each check when mcpres has its command), raw TCP
//! connections whose every byte is recorded with its time before it is
//! decoded, and the decoding of one response (status, headers, JSON body or
//! event stream, the JSON-RPC frames with their arrival times).
//!
//! Nothing here repairs what a subject sends: a malformed chunk, a body cut
//! short or a connection closed early is seen as it happened.

use std::collections::BTreeMap;
use std::net::{IpAddr, SocketAddr, TcpListener};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::probe::{CHUNK_ELIDE_BYTES, Launch, Probe, TRANSCRIPT_KEEP_BYTES, chunk_record};
pub use crate::produce::drive::door::Endpoint;
pub use crate::produce::drive::http::Reading;
use crate::produce::drive::http::{Blocking, Response, Tap};
use crate::produce::drive::redact::Redactor;

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
            crate::produce::drive::ident::random_hex(32),
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
        sandbox: launch.sandbox.clone(),
    }
}

/// Does the launch say where the port goes?
pub fn names_port(launch: &Launch) -> bool {
    launch.args.iter().any(|a| a.contains("{port}"))
        || launch.env.values().any(|v| v.contains("{port}"))
}

/// Does something accept connections at `to` right now?
pub fn accepting(to: impl Into<Endpoint>) -> bool {
    to.into().accepting()
}

/// One observation's record of every connection: opens, closes, and every
/// chunk sent and received with its time (the credential redacted).
pub struct Rec {
    start: Instant,
    /// The one redactor (`drive::redact`), when there is something to redact.
    redactor: Option<Redactor>,
    inner: Mutex<RecInner>,
    /// Per direction, the bytes stored in full ([`TRANSCRIPT_KEEP_BYTES`] unless
    /// [`Rec::keeping`] says more).
    keep: usize,
    /// Every chunk stored deflated, runs of them merged ([`Rec::packing`]).
    pack_all: bool,
}

#[derive(Default)]
struct RecInner {
    events: Vec<Entry>,
    kept: BTreeMap<&'static str, Kept>,
    connections: usize,
}

/// Per direction, the bytes a transcript stores in full (`plain`, up to
/// [`TRANSCRIPT_KEEP_BYTES`]) and, beyond them, deflated (`packed`, up to
/// [`PACKED_KEEP_BYTES`], for chunks that pack well: the filler of the
/// large-body checks), so that their judges read every byte.
#[derive(Clone, Copy, Default)]
struct Kept {
    plain: usize,
    packed: usize,
}

/// Per direction, the bytes beyond [`TRANSCRIPT_KEEP_BYTES`] a transcript
/// may store deflated: `slow-consumer`'s 1 MiB answer and the request that
/// carried it, and `oversized-event`'s 256 KiB (the 16 MiB body of its
/// control stays elided).
pub const PACKED_KEEP_BYTES: usize = 4 << 20;
/// The most bytes per direction a [`Rec::packing`] record stores deflated.
pub const PACK_ALL_KEEP_BYTES: usize = 16 << 20;
/// A [`Rec::packing`] record stores a run of chunks of one connection's direction, with
/// nothing recorded between them, as one chunk of up to this many bytes (each chunk
/// deflated alone would store its own dictionary and framing).
pub const PACK_MERGE_BYTES: usize = 1 << 20;

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
            keep: TRANSCRIPT_KEEP_BYTES,
            pack_all: false,
        }
    }

    /// A record that redacts with `redactor` (every stream as a whole).
    pub fn with_redactor(redactor: Redactor) -> Rec {
        Rec {
            start: Instant::now(),
            redactor: Some(redactor),
            inner: Mutex::default(),
            keep: TRANSCRIPT_KEEP_BYTES,
            pack_all: false,
        }
    }

    /// This record storing up to `bytes` per direction in full: a soak whose judge
    /// reads every answer (`bounded-soak`).
    pub fn keeping(mut self, bytes: usize) -> Rec {
        self.keep = self.keep.max(bytes);
        self
    }

    /// This record keeping up to `bytes` per direction, every chunk stored deflated
    /// (up to [`PACK_ALL_KEEP_BYTES`]): a conversation of many repeated answers whose
    /// judge reads them all (`backpressure`).
    pub fn packing(mut self, bytes: usize) -> Rec {
        self.keep = self.keep.max(bytes);
        self.pack_all = true;
        self
    }

    pub fn now_ms(&self) -> u64 {
        u64::try_from(self.start.elapsed().as_millis()).unwrap_or(u64::MAX)
    }

    fn chunk(&self, conn: usize, dir: &'static str, bytes: &[u8]) {
        let at = self.now_ms();
        let mut inner = self.inner.lock().expect("record lock");
        if self.pack_all
            && self.redactor.is_none()
            && let Some(Entry::Raw {
                at: a,
                conn: c,
                dir: d,
                bytes: b,
            }) = inner.events.last_mut()
            && (*c, *d) == (conn, dir)
            && b.len() + bytes.len() <= PACK_MERGE_BYTES
        {
            // One stored chunk for a run of them: what was sent keeps its first
            // piece's time (no later than it was sent), what came its last (no sooner
            // than it came).
            b.extend_from_slice(bytes);
            if dir != "sent" {
                *a = at;
            }
            return;
        }
        if self.redactor.is_some() || self.pack_all {
            inner.events.push(Entry::Raw {
                at,
                conn,
                dir,
                bytes: zeroize::Zeroizing::new(bytes.to_vec()),
            });
            return;
        }
        let v = Self::chunk_value(
            &mut inner.kept,
            (self.keep, self.pack_all),
            at,
            conn,
            dir,
            bytes,
        );
        inner.events.push(Entry::Done(v));
    }

    fn chunk_value(
        kept: &mut BTreeMap<&'static str, Kept>,
        (keep, pack_all): (usize, bool),
        at: u64,
        conn: usize,
        dir: &'static str,
        bytes: &[u8],
    ) -> Value {
        let kept = kept.entry(dir).or_default();
        let elide = kept.plain + bytes.len() > keep;
        if !elide {
            kept.plain += bytes.len();
        }
        let packed_limit = if pack_all {
            PACK_ALL_KEEP_BYTES
        } else {
            PACKED_KEEP_BYTES
        };
        let mut v = if (pack_all || elide || bytes.len() > CHUNK_ELIDE_BYTES)
            && kept.packed + bytes.len() <= packed_limit
            && let Some(packed) = crate::judge::http::deflated(bytes)
        {
            kept.packed += bytes.len();
            json!({"atMs": at, "stream": dir, "bytes": bytes.len(), "deflate": packed})
        } else {
            chunk_record(at, dir, bytes, elide)
        };
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
                Entry::Raw {
                    at,
                    conn,
                    dir,
                    bytes,
                } => {
                    let bytes = if self.redactor.is_some() {
                        redacted.remove(&k).unwrap_or_default()
                    } else {
                        bytes.to_vec()
                    };
                    Self::chunk_value(
                        &mut kept,
                        (self.keep, self.pack_all),
                        *at,
                        *conn,
                        dir,
                        &bytes,
                    )
                }
            })
            .collect();
        json!({"connections": inner.connections, "events": events})
    }
}

/// One raw TCP connection to the subject: the blocking face of the one
/// HTTP client, recording into a [`Rec`] under its connection number.
pub struct Conn<'r> {
    pub id: usize,
    io: Blocking<Tapped<'r>>,
    rec: &'r Rec,
}

/// A connection's tap: every byte and event into the record, under the
/// connection's number.
struct Tapped<'r> {
    rec: &'r Rec,
    id: usize,
}

impl Tap for Tapped<'_> {
    fn sent(&self, bytes: &[u8]) {
        self.rec.chunk(self.id, "sent", bytes);
    }

    fn received(&self, bytes: &[u8]) {
        self.rec.chunk(self.id, "received", bytes);
    }

    fn event(&self, what: &str, detail: Value) {
        self.rec.event(Some(self.id), what, detail);
    }

    fn now_ms(&self) -> u64 {
        self.rec.now_ms()
    }
}

/// [`Conn::writer`]: writes on a connection whose responses another thread reads.
pub struct Writer<'r> {
    stream: std::net::TcpStream,
    tap: Tapped<'r>,
}

impl Writer<'_> {
    /// Write `bytes` (recorded first); false when the write failed.
    pub fn write(&mut self, bytes: &[u8]) -> bool {
        crate::produce::drive::http::write_tapped(&mut self.stream, &self.tap, bytes)
    }
}

impl<'r> Conn<'r> {
    pub fn open(rec: &'r Rec, to: impl Into<Endpoint>) -> std::io::Result<Conn<'r>> {
        let id = rec.next_conn();
        let io = Blocking::connect(&to.into(), Duration::from_secs(2), Tapped { rec, id })?;
        Ok(Conn { id, io, rec })
    }

    /// Write `bytes` (recorded first); false when the write failed.
    pub fn write(&mut self, bytes: &[u8]) -> bool {
        self.io.write(bytes)
    }

    /// This end's port.
    pub fn local_port(&self) -> u16 {
        self.io.local_port()
    }

    /// A writer on this connection for another thread, each write recorded as this
    /// connection's (the reading stays here).
    pub fn writer(&self) -> Option<Writer<'r>> {
        Some(Writer {
            stream: self.io.stream_clone()?,
            tap: Tapped {
                rec: self.rec,
                id: self.id,
            },
        })
    }

    /// Write `bytes` from another thread while reading the response, so a
    /// subject that answers (and stops reading) before the whole body is
    /// written is still heard. The connection is closed afterwards.
    pub fn write_then_read(&mut self, bytes: &[u8], limit: Duration) -> Resp {
        let r = Resp::from(self.io.write_then_read(bytes, limit));
        self.read_done(&r);
        r
    }

    /// Stop writing (a FIN to the subject); reading goes on.
    pub fn shutdown_write(&mut self) {
        self.io.shutdown_write();
    }

    /// Close the connection from the client side.
    pub fn close(self, why: &str) {
        self.io.close(why);
    }

    /// Wait at most `limit` for the subject to close the connection; bytes
    /// that arrive meanwhile are recorded. True when it closed.
    pub fn wait_closed(&mut self, limit: Duration) -> bool {
        self.io.wait_closed(limit)
    }

    /// Read one response, for at most `limit`.
    pub fn response(&mut self, limit: Duration) -> Resp {
        self.response_with(limit, &Reading::default())
    }

    /// Read one response as `how` says.
    pub fn response_with(&mut self, limit: Duration, how: &Reading) -> Resp {
        let r = Resp::from(self.io.response(limit, how));
        self.read_done(&r);
        r
    }

    /// [`Conn::response`] without its `response-read` event: one of many pipelined
    /// responses whose reads the caller records as a whole.
    pub fn response_unannounced(&mut self, limit: Duration) -> Resp {
        Resp::from(self.io.response(limit, &Reading::default()))
    }

    /// Record that a response read ended and what it read: after every
    /// received chunk it read, so the judge knows which bytes the runner had
    /// when it decided (a `response-read` event on this connection).
    fn read_done(&self, r: &Resp) {
        self.rec.event(
            Some(self.id),
            "response-read",
            json!({
                "status": r.status,
                // The ids it answered (one with no canonical form, a number
                // beyond the safe range, is left out).
                "answered": r
                    .answers()
                    .iter()
                    .filter_map(|a| a.get("id"))
                    .filter(|id| id.is_string() || id.as_i64().is_some_and(|n| n.unsigned_abs() < 1 << 53))
                    .collect::<Vec<_>>(),
                // Those answered with a result (not an error).
                "results": r
                    .answers()
                    .iter()
                    .filter(|a| a.get("result").is_some())
                    .filter_map(|a| a.get("id"))
                    .filter(|id| id.is_string() || id.as_i64().is_some_and(|n| n.unsigned_abs() < 1 << 53))
                    .collect::<Vec<_>>(),
                "answers": r.answers().len(),
                "closedBySubject": r.eof,
                "timedOut": r.timed_out,
            }),
        );
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
    /// Frames that answer no request, past the reader's keep bound
    /// (`drive::http::FRAME_KEEP`): counted, not kept.
    pub frames_not_kept: usize,
    pub body: Vec<u8>,
    pub first_byte_ms: Option<u64>,
    pub complete: bool,
    pub eof: bool,
    pub timed_out: bool,
}

impl From<Response> for Resp {
    /// The frames that are JSON kept as values, the others counted.
    fn from(r: Response) -> Resp {
        let mut resp = Resp {
            status: r.status,
            headers: r.headers,
            media: r.media,
            frames: Vec::new(),
            bad_frames: 0,
            frames_not_kept: r.frames_not_kept,
            body: r.body,
            first_byte_ms: r.first_byte_ms,
            complete: r.complete,
            eof: r.eof,
            timed_out: r.timed_out,
        };
        for (at, bytes) in r.frames {
            match serde_json::from_slice::<Value>(&bytes) {
                Ok(v) => resp.frames.push((at, v)),
                Err(_) => resp.bad_frames += 1,
            }
        }
        resp
    }
}

impl Resp {
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
            "framesNotKept": self.frames_not_kept,
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
    /// Where the server is reached (through its network namespace's door
    /// when it runs in one of its own).
    pub addr: Endpoint,
    pub authority: String,
    /// Why the server could not be started or reached, if so.
    pub failed: Option<String>,
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

    /// A packing record stores a run of one connection's direction as one deflated
    /// chunk: its bytes whole, what was sent at its first piece's time, what came at its
    /// last's; anything recorded between two pieces ends the run.
    #[test]
    fn a_packing_record_merges_runs_and_keeps_their_bytes() {
        let rec = Rec::new(None).packing(PACK_ALL_KEEP_BYTES);
        let (one, two) = ([b'a'; 700], [b'b'; 700]);
        rec.chunk(1, "sent", &one);
        std::thread::sleep(Duration::from_millis(5));
        rec.chunk(1, "sent", &two);
        rec.chunk(1, "received", b"HTTP/1.1 200 ");
        std::thread::sleep(Duration::from_millis(5));
        rec.chunk(1, "received", b"OK");
        rec.event(Some(1), "reading-resumed", json!({}));
        rec.chunk(1, "received", b" and more");
        rec.chunk(2, "received", b"other");
        let t = rec.transcript();
        let events = t["events"].as_array().unwrap();
        let chunks: Vec<(&str, Vec<u8>)> = events
            .iter()
            .filter(|e| e.get("stream").is_some())
            .map(|e| {
                (
                    e["stream"].as_str().unwrap(),
                    crate::judge::http::chunk_bytes(e).unwrap(),
                )
            })
            .collect();
        // The merged run is large enough to be stored deflated (each piece alone is not).
        assert!(events[0].get("deflate").is_some(), "{}", events[0]);
        assert_eq!(
            chunks,
            [
                ("sent", [one, two].concat()),
                ("received", b"HTTP/1.1 200 OK".to_vec()),
                ("received", b" and more".to_vec()),
                ("received", b"other".to_vec()),
            ]
        );
        let at = |k: usize| events[k]["atMs"].as_u64().unwrap();
        // The sent run at its first piece (no later than it was sent); the received run
        // at its last (no sooner than it came): at least the 5 ms slept inside it.
        assert!(at(1) >= at(0) + 5, "{events:?}");
        assert_eq!(events[2]["event"], "reading-resumed");
    }
}
