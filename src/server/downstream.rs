//! The reference server's downstream client (`--downstream-env VAR`): the `fetch` tool
//! sends one HTTP/1.1 POST to the base URL it finds in `$VAR` when it is called, and
//! answers with what came back; a downstream that fails (refused, timed out, or any
//! status but 2xx) is answered with isError and the reason, never as a success. Plain
//! `http://` only, one request per connection, a bounded wait.

use std::io::{Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::time::Duration;

/// The most the client reads of an answer.
const MAX_ANSWER: u64 = 1 << 20;

/// What a call to the downstream got.
#[derive(Debug, PartialEq)]
pub enum Fetched {
    /// A 2xx answer and its body.
    Ok(u16, String),
    /// Anything else, said in words.
    Failed(String),
}

/// POST `body` to `url` (`http://host:port/path`) and wait at most `wait` for each step.
pub fn post(url: &str, body: &str, wait: Duration) -> Fetched {
    match try_post(url, body, wait) {
        Ok((status, text)) if (200..300).contains(&status) => Fetched::Ok(status, text),
        Ok((status, _)) => Fetched::Failed(format!("the downstream answered HTTP {status}")),
        Err(e) => Fetched::Failed(e),
    }
}

fn try_post(url: &str, body: &str, wait: Duration) -> Result<(u16, String), String> {
    let rest = url
        .strip_prefix("http://")
        .ok_or_else(|| format!("the downstream URL {url:?} is not http://"))?;
    let (authority, path) = match rest.find('/') {
        Some(i) => (&rest[..i], &rest[i..]),
        None => (rest, "/"),
    };
    let addr = authority
        .to_socket_addrs()
        .map_err(|e| format!("cannot resolve the downstream {authority}: {e}"))?
        .next()
        .ok_or_else(|| format!("the downstream {authority} has no address"))?;
    let mut conn = TcpStream::connect_timeout(&addr, wait)
        .map_err(|e| format!("cannot reach the downstream: {e}"))?;
    conn.set_read_timeout(Some(wait))
        .map_err(|e| e.to_string())?;
    conn.set_write_timeout(Some(wait))
        .map_err(|e| e.to_string())?;
    let request = format!(
        "POST {path} HTTP/1.1\r\nHost: {authority}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    conn.write_all(request.as_bytes())
        .map_err(|e| format!("cannot send to the downstream: {e}"))?;
    let mut answer = Vec::new();
    conn.take(MAX_ANSWER)
        .read_to_end(&mut answer)
        .map_err(|e| format!("no answer from the downstream: {e}"))?;
    let text = String::from_utf8_lossy(&answer);
    let (head, rest) = text
        .split_once("\r\n\r\n")
        .ok_or("the downstream's answer has no end of head")?;
    let status = head
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse::<u16>().ok())
        .filter(|_| head.starts_with("HTTP/1."))
        .ok_or("the downstream's answer has no HTTP status line")?;
    Ok((status, rest.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::TcpListener;

    fn one_answer(reply: &'static str) -> String {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}/x", l.local_addr().unwrap());
        std::thread::spawn(move || {
            let (mut c, _) = l.accept().unwrap();
            let mut buf = [0u8; 4096];
            let _ = c.read(&mut buf);
            c.write_all(reply.as_bytes()).unwrap();
        });
        url
    }

    #[test]
    fn a_2xx_is_a_success_and_anything_else_a_failure() {
        let url = one_answer("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok");
        assert_eq!(
            post(&url, "{}", Duration::from_secs(5)),
            Fetched::Ok(200, "ok".into())
        );
        let url = one_answer("HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\n\r\n");
        assert_eq!(
            post(&url, "{}", Duration::from_secs(5)),
            Fetched::Failed("the downstream answered HTTP 503".into())
        );
        // Nothing listening: refused, said as a failure.
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}/", l.local_addr().unwrap());
        drop(l);
        assert!(
            matches!(post(&url, "{}", Duration::from_secs(5)), Fetched::Failed(m) if m.contains("cannot reach"))
        );
        assert!(
            matches!(post("https://x/", "{}", Duration::from_secs(1)), Fetched::Failed(m) if m.contains("not http"))
        );
    }
}
