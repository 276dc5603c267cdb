//! The downstream stub: a loopback HTTP server the injection shim runs beside a subject
//! that declares it calls a downstream (spec/operational.md, `downstream-failure` and
//! `partial-outage`). The shim gives the subject the stub's URL in the declared
//! environment variable; the stub answers every request by its phase: `up` with a 200,
//! `down` with a 503 (the taxonomy's dependency-failure, `return-unavailable`), `slow`
//! with a 200 after 75 ms (its delayed-response, `delay-75ms`). The runner moves it from
//! phase to phase with a control line on the shim's stdin (never passed to the subject).
//! Every request it answers is written to stderr as one JSON line (`mcpresDownstream`:
//! its phase, and its epoch, the number of control lines before it), which the runner
//! stores with the subject's stderr: the judge counts from it which phase the subject's
//! calls met.

use std::io::{BufRead, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicU8, AtomicU64, Ordering};
use std::time::Duration;

use serde_json::{Value, json};

/// The key of a control line (`{"mcpresDownstream":"down"}`) and of a log line.
pub const KEY: &str = crate::judge::ops::STUB_KEY;

/// The phases, as named in control and log lines.
pub const PHASES: [&str; 3] = ["up", "down", "slow"];

/// How long a `slow` answer is held.
pub const SLOW_MS: u64 = 75;

/// A running stub: its URL and its phase.
#[derive(Debug, Clone)]
pub struct Stub {
    pub url: String,
    phase: Arc<AtomicU8>,
    /// How many control lines have moved it (logged with every answer: the judge tells
    /// the first `up` from the one after an outage by it).
    epoch: Arc<AtomicU64>,
}

fn phase_index(name: &str) -> Option<u8> {
    PHASES.iter().position(|p| *p == name).map(|i| i as u8)
}

impl Stub {
    /// Serve on a fresh loopback port in `phase` (one of [`PHASES`]), until the process
    /// ends.
    pub fn serve(phase: &str) -> std::io::Result<Stub> {
        let listener = TcpListener::bind("127.0.0.1:0")?;
        let url = format!("http://{}/", listener.local_addr()?);
        let at = Arc::new(AtomicU8::new(phase_index(phase).unwrap_or(0)));
        let epoch = Arc::new(AtomicU64::new(0));
        let (shared, moved) = (at.clone(), epoch.clone());
        let count = Arc::new(AtomicU64::new(0));
        std::thread::spawn(move || {
            for conn in listener.incoming().flatten() {
                let (phase, epoch, count) = (shared.clone(), moved.clone(), count.clone());
                std::thread::spawn(move || answer(conn, &phase, &epoch, &count));
            }
        });
        Ok(Stub {
            url,
            phase: at,
            epoch,
        })
    }

    /// Handle `line` if it is a control line (true: it is not to be passed on).
    pub fn control(&self, line: &[u8]) -> bool {
        let Some(name) = control_phase(line) else {
            return false;
        };
        if let Some(i) = phase_index(&name) {
            self.phase.store(i, Ordering::SeqCst);
            let epoch = self.epoch.fetch_add(1, Ordering::SeqCst) + 1;
            // The move acknowledged on stderr (over HTTP the runner's next request does
            // not share the control line's pipe, so it waits for this line).
            let _ = std::io::stderr()
                .lock()
                .write_all(moved_line(&name, epoch).as_bytes());
        }
        true
    }
}

/// The phase a control line names (`None` when the line is not one).
pub fn control_phase(line: &[u8]) -> Option<String> {
    if !line.starts_with(b"{\"mcpresDownstream\"") {
        return None;
    }
    let v: Value = serde_json::from_slice(line).ok()?;
    v.get(KEY)?.as_str().map(str::to_string)
}

/// The stderr line that acknowledges the stub's move to `phase`, its `epoch`-th.
pub fn moved_line(phase: &str, epoch: u64) -> String {
    format!("{}\n", json!({ KEY: {"moved": phase, "epoch": epoch} }))
}

/// The control line that moves the stub to `phase`.
pub fn control_line(phase: &str) -> Vec<u8> {
    format!("{}\n", json!({ KEY: phase })).into_bytes()
}

/// Read one request (its head, and a body of its Content-Length, at most 1 MiB) and
/// answer it by the phase; the connection is closed after the answer.
fn answer(conn: TcpStream, phase: &AtomicU8, epoch: &AtomicU64, count: &AtomicU64) {
    let _ = conn.set_read_timeout(Some(Duration::from_secs(10)));
    let mut reader = std::io::BufReader::new(&conn);
    let mut length = 0usize;
    let mut head = 0usize;
    loop {
        let mut line = String::new();
        match reader.read_line(&mut line) {
            Ok(0) | Err(_) => return,
            Ok(n) => head += n,
        }
        if head > 64 << 10 {
            return;
        }
        let l = line.trim_end();
        if l.is_empty() {
            break;
        }
        if let Some((k, v)) = l.split_once(':')
            && k.eq_ignore_ascii_case("content-length")
        {
            length = v.trim().parse().unwrap_or(0).min(1 << 20);
        }
    }
    let mut body = vec![0u8; length];
    if reader.read_exact(&mut body).is_err() {
        return;
    }
    let n = count.fetch_add(1, Ordering::SeqCst) + 1;
    let name = PHASES[usize::from(phase.load(Ordering::SeqCst)).min(PHASES.len() - 1)];
    let moved = epoch.load(Ordering::SeqCst);
    let (status, text) = if name == "down" {
        (503, "Service Unavailable")
    } else {
        (200, "OK")
    };
    if name == "slow" {
        std::thread::sleep(Duration::from_millis(SLOW_MS));
    }
    // Logged before it is answered: the subject cannot have the answer before the
    // record has the line.
    let log = format!(
        "{}\n",
        json!({ KEY: {"n": n, "phase": name, "epoch": moved, "status": status} })
    );
    let _ = std::io::stderr().lock().write_all(log.as_bytes());
    let payload = if status == 200 {
        json!({"ok": true, "from": "mcpres downstream stub", "n": n})
    } else {
        json!({"ok": false, "error": "unavailable", "n": n})
    }
    .to_string();
    let reply = format!(
        "HTTP/1.1 {status} {text}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{payload}",
        payload.len()
    );
    let mut w = &conn;
    let _ = w.write_all(reply.as_bytes()).and_then(|()| w.flush());
    let _ = conn.shutdown(std::net::Shutdown::Both);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn get(url: &str) -> (u16, String) {
        let addr = url.trim_start_matches("http://").trim_end_matches('/');
        let mut s = TcpStream::connect(addr).unwrap();
        s.write_all(b"POST /x HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}")
            .unwrap();
        let mut out = String::new();
        s.read_to_string(&mut out).unwrap();
        let status = out[9..12].parse().unwrap();
        (status, out)
    }

    #[test]
    fn the_stub_answers_by_its_phase_and_control_lines_move_it() {
        let stub = Stub::serve("up").unwrap();
        let (status, body) = get(&stub.url);
        assert_eq!(status, 200);
        assert!(body.contains("\"ok\":true"), "{body}");
        assert!(stub.control(&control_line("down")));
        assert_eq!(get(&stub.url).0, 503);
        assert!(!stub.control(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\n"));
        assert_eq!(get(&stub.url).0, 503);
        assert!(stub.control(&control_line("up")));
        assert_eq!(get(&stub.url).0, 200);
        assert_eq!(
            control_phase(&control_line("slow")).as_deref(),
            Some("slow")
        );
    }
}
