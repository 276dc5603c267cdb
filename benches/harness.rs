//! The harness's own overhead per JSON-RPC exchange:
//! one `tools/call echo` round trip against `mcpres serve --transport stdio`,
//!
//!   1. over a raw pipe: the request line written to the child's stdin with
//!      `std::process`, the answer read back with a `BufReader` (nothing
//!      recorded, nothing judged: the floor);
//!   2. through the harness: `harness::round_trip`, i.e. `Session::send` (the
//!      request recorded, then written) and `scenario::collect` (every byte of
//!      stdout recorded, frames cut and logged before they are parsed), in a
//!      tokio runtime shaped like the harness's (multi-thread, 2 workers).
//!
//! The difference is the harness's overhead per exchange. Run with
//!
//!   cargo bench --features bench --bench harness
//!
//! The subject is this build's `mcpres` binary (`CARGO_BIN_EXE_mcpres`, which
//! cargo sets for benchmarks as for integration tests) unless `MCPRES_BIN`
//! names another one. Each criterion sample starts a fresh subject and
//! initializes it outside the timed section, so the harness's recording (it
//! keeps every byte of a session) stays the size of one sample.

use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};
use mcpres::produce::harness::round_trip;
use mcpres::produce::harness::subject::Session;
use serde_json::{Value, json};

const LIMIT: Duration = Duration::from_secs(5);

fn subject() -> PathBuf {
    std::env::var_os("MCPRES_BIN")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_BIN_EXE_mcpres")))
}

const ARGS: [&str; 3] = ["serve", "--transport", "stdio"];

fn initialize() -> Value {
    json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "mcpres-bench", "version": "0"}}})
}

fn initialized() -> Value {
    json!({"jsonrpc": "2.0", "method": "notifications/initialized"})
}

fn echo(id: i64) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
           "params": {"name": "echo", "arguments": {"text": format!("bench-{id}")}}})
}

/// The raw pipe: a child with piped stdin/stdout and nothing in between.
struct Raw {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    line: String,
}

impl Raw {
    fn start() -> Raw {
        let mut child = Command::new(subject())
            .args(ARGS)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("start the subject");
        let stdin = child.stdin.take().unwrap();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        let mut raw = Raw {
            child,
            stdin,
            stdout,
            line: String::new(),
        };
        raw.exchange(&initialize(), 0);
        raw.send(&initialized());
        raw
    }

    fn send(&mut self, message: &Value) {
        let mut bytes = serde_json::to_vec(message).unwrap();
        bytes.push(b'\n');
        self.stdin.write_all(&bytes).unwrap();
        self.stdin.flush().unwrap();
    }

    /// Write one request and read lines until the response with `id`.
    fn exchange(&mut self, message: &Value, id: i64) {
        self.send(message);
        loop {
            self.line.clear();
            let n = self.stdout.read_line(&mut self.line).unwrap();
            assert!(n > 0, "the subject closed stdout");
            let v: Value = serde_json::from_str(&self.line).unwrap();
            if v.get("method").is_none() && v["id"] == json!(id) {
                assert!(v["result"].is_object(), "{v}");
                return;
            }
        }
    }

    fn stop(mut self) {
        drop(self.stdin);
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

async fn harness_session(epoch: Instant) -> Session {
    let args: Vec<String> = ARGS.iter().map(|s| s.to_string()).collect();
    let mut session = Session::spawn(
        "bench",
        epoch,
        &subject(),
        &args,
        &Default::default(),
        None,
        None,
        None,
    )
    .expect("start the subject");
    let (_, how) = round_trip(&mut session, &initialize(), 0, LIMIT)
        .await
        .unwrap();
    assert_eq!(how, "ANSWERED");
    session.send(&initialized()).await.unwrap();
    session
}

fn bench_round_trip(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let mut group = c.benchmark_group("tools-call-echo-round-trip");
    group.bench_function("raw-pipe", |b| {
        b.iter_custom(|iters| {
            let mut raw = Raw::start();
            let start = Instant::now();
            for i in 0..iters {
                let id = i as i64 + 1;
                raw.exchange(&echo(id), id);
            }
            let elapsed = start.elapsed();
            raw.stop();
            elapsed
        })
    });
    group.bench_function("harness-session", |b| {
        b.iter_custom(|iters| {
            rt.block_on(async {
                let epoch = Instant::now();
                let mut session = harness_session(epoch).await;
                let start = Instant::now();
                for i in 0..iters {
                    let id = i as i64 + 1;
                    let (frames, how) = round_trip(&mut session, &echo(id), id, LIMIT)
                        .await
                        .unwrap();
                    assert_eq!(how, "ANSWERED");
                    std::hint::black_box(frames);
                }
                let elapsed = start.elapsed();
                let _ = session.finish(Duration::from_millis(500)).await;
                elapsed
            })
        })
    });
    group.finish();
}

fn config() -> Criterion {
    Criterion::default()
        .sample_size(50)
        .measurement_time(Duration::from_secs(5))
        .warm_up_time(Duration::from_secs(1))
}

criterion_group! {
    name = benches;
    config = config();
    targets = bench_round_trip
}
criterion_main!(benches);
