//! A small loopback HTTP listener that answers every request with a canned
//! response chosen by its path, and records the paths it was asked for: the
//! misbehaving server of a check (one that redirects, or the target a
//! redirect points at, which must never be contacted).

use std::io::{Read, Write};
use std::net::{IpAddr, SocketAddr, TcpListener};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

/// How a request is answered: the raw response bytes for a request path.
pub type Answer = Box<dyn Fn(&str) -> Vec<u8> + Send + 'static>;

/// A running canned listener on `127.0.0.1`; dropping it stops it.
pub struct Canned {
    addr: SocketAddr,
    hits: Arc<Mutex<Vec<String>>>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

/// A complete `HTTP/1.1` response with `Content-Length` and
/// `Connection: close`.
pub fn response(status: &str, headers: &[(&str, &str)], body: &[u8]) -> Vec<u8> {
    let mut out = format!("HTTP/1.1 {status}\r\n");
    for (k, v) in headers {
        out.push_str(&format!("{k}: {v}\r\n"));
    }
    out.push_str(&format!(
        "Content-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    ));
    let mut bytes = out.into_bytes();
    bytes.extend_from_slice(body);
    bytes
}

impl Canned {
    /// Binds an ephemeral loopback port and answers on a thread of its own.
    pub fn start(answer: Answer) -> std::io::Result<Canned> {
        let listener = TcpListener::bind(SocketAddr::new(IpAddr::from([127, 0, 0, 1]), 0))?;
        listener.set_nonblocking(true)?;
        let addr = listener.local_addr()?;
        let hits: Arc<Mutex<Vec<String>>> = Arc::default();
        let stop = Arc::new(AtomicBool::new(false));
        let (h, s) = (hits.clone(), stop.clone());
        let thread = std::thread::Builder::new()
            .name("mcpres-oauth-canned".into())
            .spawn(move || {
                while !s.load(Ordering::SeqCst) {
                    match listener.accept() {
                        Ok((stream, _)) => serve_one(stream, &answer, &h),
                        Err(_) => std::thread::sleep(Duration::from_millis(10)),
                    }
                }
            })?;
        Ok(Canned {
            addr,
            hits,
            stop,
            thread: Some(thread),
        })
    }

    /// `http://127.0.0.1:PORT`.
    pub fn base(&self) -> String {
        format!("http://{}", self.addr)
    }

    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The request paths received so far, in order.
    pub fn hits(&self) -> Vec<String> {
        self.hits.lock().expect("hits lock").clone()
    }

    /// Stops listening (the port is released when this returns).
    pub fn stop(mut self) {
        self.shutdown();
    }

    fn shutdown(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl Drop for Canned {
    fn drop(&mut self) {
        self.shutdown();
    }
}

fn serve_one(mut stream: std::net::TcpStream, answer: &Answer, hits: &Mutex<Vec<String>>) {
    let _ = stream.set_nonblocking(false);
    let _ = stream.set_read_timeout(Some(Duration::from_secs(2)));
    let mut head = Vec::new();
    let mut buf = [0u8; 1024];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") && head.len() < 16 * 1024 {
        match stream.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => head.extend_from_slice(&buf[..n]),
        }
    }
    let line = String::from_utf8_lossy(&head);
    let path = line.split_whitespace().nth(1).unwrap_or("").to_string();
    // Recorded without its query, which may carry anything.
    let recorded = path.split('?').next().unwrap_or_default().to_string();
    hits.lock().expect("hits lock").push(recorded);
    let _ = stream.write_all(&answer(&path));
    let _ = stream.flush();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn it_answers_by_path_and_records_each_request() {
        let c = Canned::start(Box::new(|p: &str| {
            response("200 OK", &[("X-Path", p)], b"ok")
        }))
        .unwrap();
        let mut s = std::net::TcpStream::connect(c.addr()).unwrap();
        let request = crate::produce::drive::http::Request::to("GET", "/a?secret=1", "x");
        s.write_all(&request.to_bytes()).unwrap();
        let mut got = String::new();
        s.read_to_string(&mut got).unwrap();
        assert!(got.starts_with("HTTP/1.1 200 OK\r\n"), "{got}");
        assert!(got.contains("X-Path: /a?secret=1\r\n"));
        assert!(got.ends_with("\r\n\r\nok"));
        assert_eq!(c.hits(), vec!["/a".to_string()]);
        c.stop();
    }
}
