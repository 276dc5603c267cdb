//! What the subject's processes hold, sampled from `/proc` over a soak: resident memory,
//! open descriptors, listening sockets and live descendants, summed over the process and
//! every descendant, or in the sandbox over every process of the subject's PID namespace
//! (spec/operational.md, "Samples and leaks"). A leak is judged by the slope over
//! the soak (`judge::ops`), never by one sample.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::produce::drive::proc;

/// One reading of the subject's process tree.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sample {
    /// Milliseconds from the soak's start.
    pub at_ms: u64,
    /// Operations answered by then.
    pub ops: u64,
    pub rss_kib: u64,
    pub fds: u64,
    pub listeners: u64,
    /// Live descendants (the subject itself not counted).
    pub children: u64,
}

impl Sample {
    /// As stored: `[atMs, ops, rssKib, fds, listeners, children]`.
    pub fn to_json(self) -> Value {
        json!([
            self.at_ms,
            self.ops,
            self.rss_kib,
            self.fds,
            self.listeners,
            self.children
        ])
    }
}

/// The `VmRSS` of a process in KiB (0 when it is gone).
fn rss_kib(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("VmRSS:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        })
        .unwrap_or(0)
}

/// The subject's processes now: in a PID namespace of its own (the sandbox's), every
/// process of that namespace but its init (mcpres's), so that a process that left the
/// tree (a daemon that forked twice and called `setsid`) is still counted; else `pid`
/// and its descendants.
fn processes(pid: u32) -> Vec<u32> {
    let own = proc::pid_namespace(std::process::id());
    match proc::pid_namespace(pid) {
        Some(ns) if own.as_ref() != Some(&ns) => {
            let mut all: Vec<u32> = proc::in_pid_namespace(&ns, 0)
                .into_iter()
                .filter(|p| !proc::is_sandbox_init(p))
                .map(|p| p.pid)
                .collect();
            // The subject first, as in a tree.
            all.sort_by_key(|p| *p != pid);
            all
        }
        _ => proc::process_tree(pid),
    }
}

/// Read the subject's processes now ([`processes`]).
pub fn read(pid: u32, at_ms: u64, ops: u64) -> Sample {
    let tree = processes(pid);
    let listening: std::collections::BTreeSet<u64> = proc::tcp_sockets_in(Some(pid))
        .into_iter()
        .filter(|s| s.listening())
        .map(|s| s.inode)
        .collect();
    let mut s = Sample {
        at_ms,
        ops,
        rss_kib: 0,
        fds: 0,
        listeners: 0,
        children: tree.len().saturating_sub(1) as u64,
    };
    for p in &tree {
        s.rss_kib += rss_kib(*p);
        s.fds += proc::fd_targets(*p).len() as u64;
        s.listeners += proc::socket_inodes(*p)
            .iter()
            .filter(|i| listening.contains(i))
            .count() as u64;
    }
    s
}

/// A thread that samples the tree of `pid` every `interval` until stopped.
pub struct Sampler {
    stop: Arc<AtomicBool>,
    handle: std::thread::JoinHandle<Vec<Sample>>,
}

impl Sampler {
    /// Start sampling; `ops` is the count of operations answered so far.
    pub fn start(pid: u32, interval: Duration, ops: Arc<AtomicU64>, start: Instant) -> Sampler {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&stop);
        let handle = std::thread::spawn(move || {
            let mut out = Vec::new();
            let mut next = Instant::now();
            while !flag.load(Ordering::SeqCst) {
                let at = start.elapsed().as_millis() as u64;
                out.push(read(pid, at, ops.load(Ordering::SeqCst)));
                next += interval;
                let now = Instant::now();
                if next > now {
                    std::thread::sleep(next - now);
                } else {
                    next = now;
                }
            }
            out
        });
        Sampler { stop, handle }
    }

    /// Stop and return every sample.
    pub fn stop(self) -> Vec<Sample> {
        self.stop.store(true, Ordering::SeqCst);
        self.handle.join().unwrap_or_default()
    }
}
