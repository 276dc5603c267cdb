//! A test-local loopback authorization server for `mcpres serve --auth
//! loopback`: RFC 8414 metadata, a JWKS with one Ed25519 key, and a
//! `/passthrough-probe` endpoint that records every `Authorization` header
//! it receives (the audit the `token-passthrough` defect shows up in). It
//! mints synthetic EdDSA `at+jwt` access tokens with a fixed test key.
//!
//! It stands in for the loopback authorization fixture (`server::oauth`)
//! until the two branches meet; it serves the same contract.
#![allow(dead_code)]

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::Duration;

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use ed25519_dalek::{Signer, SigningKey};
use serde_json::{Value, json};

/// The key id of the test key in the JWKS.
pub const KID: &str = "test-key-1";

/// A synthetic signing key (fixed seed; test material only).
pub fn test_key() -> SigningKey {
    SigningKey::from_bytes(&[42; 32])
}

/// Another synthetic key, not in the JWKS.
pub fn other_key() -> SigningKey {
    SigningKey::from_bytes(&[43; 32])
}

/// A running test authorization server; stopped on drop.
pub struct TestIssuer {
    pub issuer: String,
    /// Every `Authorization` header value `/passthrough-probe` received.
    pub audit: Arc<Mutex<Vec<String>>>,
    stop: Arc<AtomicBool>,
    thread: Option<thread::JoinHandle<()>>,
}

impl TestIssuer {
    /// Start on an ephemeral loopback port. `metadata_issuer` overrides the
    /// `issuer` the metadata names (a mix-up).
    pub fn start(metadata_issuer: Option<&str>) -> TestIssuer {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind the test issuer");
        listener.set_nonblocking(true).expect("nonblocking");
        let issuer = format!("http://{}", listener.local_addr().expect("addr"));
        let named = metadata_issuer.unwrap_or(&issuer).to_owned();
        let metadata = json!({
            "issuer": named,
            "authorization_endpoint": format!("{issuer}/authorize"),
            "token_endpoint": format!("{issuer}/token"),
            "jwks_uri": format!("{issuer}/jwks"),
            "response_types_supported": ["code"],
            "code_challenge_methods_supported": ["S256"],
        });
        let jwks = json!({"keys": [{
            "kty": "OKP", "crv": "Ed25519", "kid": KID, "alg": "EdDSA", "use": "sig",
            "x": URL_SAFE_NO_PAD.encode(test_key().verifying_key().as_bytes()),
        }]});
        let audit = Arc::new(Mutex::new(Vec::new()));
        let stop = Arc::new(AtomicBool::new(false));
        let (a, s) = (audit.clone(), stop.clone());
        let thread = thread::spawn(move || {
            while !s.load(Ordering::SeqCst) {
                match listener.accept() {
                    Ok((stream, _)) => answer(stream, &metadata, &jwks, &a),
                    Err(_) => thread::sleep(Duration::from_millis(5)),
                }
            }
        });
        TestIssuer {
            issuer,
            audit,
            stop,
            thread: Some(thread),
        }
    }

    pub fn audit(&self) -> Vec<String> {
        self.audit.lock().expect("audit").clone()
    }

    /// Claims of a good token for `resource`, valid for ten minutes.
    pub fn claims(&self, resource: &str, scope: &str) -> Value {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .expect("clock")
            .as_secs();
        json!({
            "iss": self.issuer, "sub": "synthetic-user", "aud": resource,
            "client_id": "synthetic-client", "scope": scope,
            "iat": now, "exp": now + 600, "jti": format!("jti-{now}-{scope}"),
        })
    }
}

impl Drop for TestIssuer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// A compact JWS over `header` and `claims`, signed by `key`.
pub fn sign(key: &SigningKey, header: &Value, claims: &Value) -> String {
    let input = format!(
        "{}.{}",
        URL_SAFE_NO_PAD.encode(header.to_string()),
        URL_SAFE_NO_PAD.encode(claims.to_string())
    );
    let sig = key.sign(input.as_bytes());
    format!("{input}.{}", URL_SAFE_NO_PAD.encode(sig.to_bytes()))
}

/// The header of a good access token.
pub fn header() -> Value {
    json!({"alg": "EdDSA", "typ": "at+jwt", "kid": KID})
}

fn answer(mut stream: TcpStream, metadata: &Value, jwks: &Value, audit: &Mutex<Vec<String>>) {
    let _ = stream.set_nonblocking(false);
    let _ = stream.set_read_timeout(Some(Duration::from_secs(5)));
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    while !buf.windows(4).any(|w| w == b"\r\n\r\n") {
        match stream.read(&mut chunk) {
            Ok(0) | Err(_) => return,
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
        }
    }
    let head = String::from_utf8_lossy(&buf).to_string();
    let path = head
        .lines()
        .next()
        .and_then(|l| l.split(' ').nth(1))
        .unwrap_or("")
        .to_owned();
    let (status, body) = match path.as_str() {
        "/.well-known/oauth-authorization-server" => ("200 OK", metadata.to_string()),
        "/jwks" => ("200 OK", jwks.to_string()),
        "/passthrough-probe" => {
            if let Some(v) = head.lines().find_map(|l| {
                l.split_once(':')
                    .filter(|(k, _)| k.eq_ignore_ascii_case("authorization"))
            }) {
                audit.lock().expect("audit").push(v.1.trim().to_owned());
            }
            ("200 OK", "{}".to_owned())
        }
        _ => ("404 Not Found", "{}".to_owned()),
    };
    let reply = format!(
        "HTTP/1.1 {status}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    let _ = stream.write_all(reply.as_bytes());
}
