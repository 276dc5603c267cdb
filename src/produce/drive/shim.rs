//! The injection shim: how an operational run injects a defect of declared size around a
//! subject without changing it (spec/operational.md, "Why the controls inject, and where").
//!
//! `mcpres __mcpres-ops-shim SPEC -- PROGRAM [ARGS...]` (never typed by a user: the
//! runner starts it as the subject's command) waits `delayMs` and then, with nothing else
//! asked, becomes the subject (`exec`: same process, same pipes). With a sidecar defect it
//! starts the subject as its child on the same pipes, gives its own copies of stdin and
//! stdout away, and stays in the subject's process tree doing the defect at a fixed rate
//! (memory kept, child processes or listeners left open), or once (`stepKib`, the
//! mutant's one-time allocation) until the subject ends, then ends what it injected and
//! exits with the subject's status. SIGTERM and SIGINT it gets go to the subject, so it
//! never ends before the subject does; every process it starts also dies with it (a
//! parent-death signal), so nothing it injects can outlive the probe.

use std::process::Command;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

/// The first argument that makes `mcpres` the shim.
pub const ARG: &str = "__mcpres-ops-shim";
/// The first argument of an idle child the shim leaves (it sleeps until its parent dies).
pub const IDLE_ARG: &str = "__mcpres-ops-idle";

/// What the shim injects.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields, rename_all = "camelCase")]
pub struct Spec {
    /// Wait this long before the subject starts.
    pub delay_ms: u64,
    /// Keep this much more memory resident every second.
    pub leak_kib_per_s: u64,
    /// Keep this much memory resident once, at the start (a step, not a slope).
    pub step_kib: u64,
    /// Leave this many idle child processes running every ten seconds.
    pub children_per_10s: u64,
    /// Start children that exit at once (reaped): churn, not a leak.
    pub transient_children: bool,
    /// Leave this many listening loopback sockets open every ten seconds.
    pub listeners_per_10s: u64,
    /// Open and close listening sockets (churn, not a leak).
    pub transient_listeners: bool,
    /// Hold each line the subject writes to stdout this long before passing it on (the
    /// taxonomy's `delayed-response`, at the transport's boundary).
    pub response_delay_ms: u64,
    /// Hold the subject's stdin open this long after the runner closed it (the
    /// subject sees its end of file late: a shutdown that takes longer).
    pub eof_delay_ms: u64,
    /// Pass SIGTERM and SIGINT on to the subject this long after they arrive (a
    /// subject slow to act on an ending signal).
    pub term_delay_ms: u64,
    /// Leave one idle process that outlives the subject: its own session, no
    /// parent-death signal, never ended by the shim (the taxonomy's cleanup failure:
    /// a residue the runner must find).
    pub orphan: bool,
    /// Forward at most this many requests in flight to the subject; drop (never
    /// answer) any request over it: a queue that loses work (the taxonomy's
    /// resource-exhaustion, unbounded for the client).
    pub drop_over_in_flight: u32,
    /// Forward at most this many requests in flight; answer any request over it at
    /// once with an overload error (`-32000`, `data.retryAfterMs`): a bounded queue.
    pub reject_over_in_flight: u32,
    /// With `rejectOverInFlight`: the overload error carries no retry hint.
    pub no_retry_hint: bool,
    /// Forward at most this many requests in any span of `rateWindowMs`; drop (never
    /// answer) any request over it: a rate limit that loses work.
    pub drop_over_rate: u32,
    /// Forward at most this many requests in any span of `rateWindowMs`; answer any
    /// request over it at once with a rate-limit error (`-32000`,
    /// `data.retryAfterMs`): a rate limit kept at the transport.
    pub reject_over_rate: u32,
    /// The window of `dropOverRate` and `rejectOverRate`, in ms.
    pub rate_window_ms: u64,
    /// Pass the subject's stdout on without ever waiting: a line that finds the
    /// runner's pipe full is dropped (a transport that loses output under
    /// backpressure).
    pub drop_when_full: bool,
    /// Answer every call of this tool with a success, whatever the subject answered
    /// (a write whose failure is swallowed: the taxonomy's forbidden partial-artifact
    /// claim).
    pub claim_tool: String,
    /// Stop passing stdin on to the subject once a request's id comes a second time
    /// (the subject never sees anything after it, and its stdin stays open): a
    /// transport, or a subject, that stalls on a duplicate delivery.
    pub deaf_after_duplicate: bool,
    /// Pass only the first copy of a request whose id came before (duplicate
    /// suppression at the transport).
    pub drop_duplicates: bool,
    /// Append this to the name of every tool the subject lists (`tools/list`
    /// answers): `random` draws one suffix per process (a declared surface that
    /// differs from one start to the next), anything else is appended as is (the same
    /// surface at every start).
    pub tool_suffix: String,
    /// Leave the first tool out of every `tools/list` answer (a version that removed a
    /// tool its clients used).
    pub drop_first_tool: bool,
    /// Add a tool of this name to every `tools/list` answer (a version that added one).
    pub extra_tool: String,
    /// Serve a downstream stub ([`super::downstream`]) on loopback and give the subject
    /// its URL in this environment variable; the runner moves its phase with control
    /// lines on stdin, which the shim keeps from the subject.
    pub downstream_env: String,
    /// The stub's first phase (`up`, `down` or `slow`; `up` when empty).
    pub downstream_phase: String,
    /// Once the subject answers a call of this tool as failed, answer every later call
    /// of it with that failure, whatever the subject said (a failure cached for ever:
    /// a subject that never recovers from a downstream outage).
    pub sticky_failure_tool: String,
    /// With `stickyFailureTool`: keep the failure this long only (a circuit breaker
    /// that closes again), in ms; 0 for ever.
    pub sticky_failure_ms: u64,
    /// Over Streamable HTTP: the address the runner connects to (`IP:{port}` in the
    /// launch, the port filled in by the runner). The shim listens there once the
    /// subject, given another port (`{backport}` in its arguments and environment),
    /// accepts connections, and relays each connection to it with `responseDelayMs`
    /// applied to each response instead of to stdout lines ([`super::front`]).
    pub http_front: String,
    /// A cache defect at the transport (`mcp-res/cache-behavior/v1`'s controls and
    /// mutants, named in `judge::cache::injection`): the answers to the cacheable
    /// requests are changed, or served from a cache the shim keeps ([`super::cache_edit`]).
    pub cache: String,
}

impl Spec {
    fn sidecar(&self) -> bool {
        self.leak_kib_per_s > 0
            || self.step_kib > 0
            || self.children_per_10s > 0
            || self.transient_children
            || self.listeners_per_10s > 0
            || self.transient_listeners
            || self.response_delay_ms > 0
            || self.eof_delay_ms > 0
            || self.term_delay_ms > 0
            || self.orphan
            || !self.http_front.is_empty()
            || self.gated()
            || self.deduped()
            || self.edits_surface()
            || self.claims()
            || self.drop_when_full
            || self.tooled()
            || self.cached()
    }

    /// Does the shim stand between the runner and the subject as a cache defect?
    fn cached(&self) -> bool {
        !self.cache.is_empty()
    }

    /// Does the shim change the listed tools (renamed, one left out, one added)?
    fn edits_surface(&self) -> bool {
        !self.tool_suffix.is_empty() || self.drop_first_tool || !self.extra_tool.is_empty()
    }

    /// Does the shim stand between the subject's stdout and the runner?
    fn relays_stdout(&self) -> bool {
        (self.response_delay_ms > 0 && self.http_front.is_empty())
            || self.stdio_gated()
            || (self.edits_surface() && self.http_front.is_empty())
            || self.tooled()
            || self.cached()
            || (self.drop_when_full && self.http_front.is_empty())
    }

    fn claims(&self) -> bool {
        !self.claim_tool.is_empty()
    }

    /// Does the shim read the requests line by line and rewrite answers to a tool's
    /// calls (a claim, a cached failure), or keep control lines from the subject? (Over
    /// HTTP the front makes the claim.)
    fn tooled(&self) -> bool {
        (self.claims() && self.http_front.is_empty())
            || !self.sticky_failure_tool.is_empty()
            || !self.downstream_env.is_empty()
    }

    /// How this process changes the tools the subject lists.
    fn edit(&self) -> Edit {
        Edit {
            suffix: self.suffix(),
            drop_first: self.drop_first_tool,
            extra: Some(self.extra_tool.clone()).filter(|t| !t.is_empty()),
        }
    }

    /// The suffix this process appends to tool names, if any.
    fn suffix(&self) -> Option<String> {
        match self.tool_suffix.as_str() {
            "" => None,
            "random" => {
                let mut b = [0u8; 4];
                getrandom::fill(&mut b).ok()?;
                Some(format!("-{}", hex::encode(b)))
            }
            fixed => Some(fixed.to_string()),
        }
    }

    fn deduped(&self) -> bool {
        self.deaf_after_duplicate || self.drop_duplicates
    }

    /// Does this spec inject a fault the HTTP front injects over Streamable HTTP
    /// (answers held, requests over a limit dropped or refused, a request delivered
    /// again met, a tool's calls answered with a success)?
    pub fn at_front(&self) -> bool {
        self.response_delay_ms > 0
            || self.drop_when_full
            || self.gated()
            || self.deduped()
            || self.claims()
            || self.edits_surface()
            || !self.sticky_failure_tool.is_empty()
    }

    /// Deduplicated on stdio (over HTTP the front meets each request delivered again
    /// instead).
    fn stdio_deduped(&self) -> bool {
        self.deduped() && self.http_front.is_empty()
    }

    /// Gated on stdio (over HTTP the front gates each request instead).
    fn stdio_gated(&self) -> bool {
        self.gated() && self.http_front.is_empty()
    }

    /// The front's limits: the gate's, per request.
    fn front_limits(&self) -> super::front::Limits {
        let (in_flight, reject) = if self.reject_over_in_flight > 0 {
            (self.reject_over_in_flight as usize, true)
        } else {
            (self.drop_over_in_flight as usize, false)
        };
        super::front::Limits {
            in_flight,
            reject,
            no_hint: self.no_retry_hint,
            rate: self.drop_over_rate.max(self.reject_over_rate) as usize,
            window: Duration::from_millis(self.rate_window_ms.max(1)),
            reject_rate: self.reject_over_rate > 0,
            claim_tool: self.claim_tool.clone(),
            edit: Some(self.edit()).filter(Edit::any),
            sticky_tool: self.sticky_failure_tool.clone(),
            sticky_for: Duration::from_millis(self.sticky_failure_ms),
            drop_when_full: self.drop_when_full,
            duplicate: if self.deaf_after_duplicate {
                Some(super::front::Duplicate::Deaf)
            } else if self.drop_duplicates {
                Some(super::front::Duplicate::Drop)
            } else {
                None
            },
        }
    }

    fn gated(&self) -> bool {
        self.drop_over_in_flight > 0
            || self.reject_over_in_flight > 0
            || self.drop_over_rate > 0
            || self.reject_over_rate > 0
    }

    /// The shim's arguments that run `program args` with this injection.
    pub fn args(&self, program: &std::path::Path, args: &[String]) -> Vec<String> {
        let mut out = vec![
            ARG.to_string(),
            serde_json::to_string(self).expect("a spec serializes"),
            "--".into(),
            program.to_string_lossy().into_owned(),
        ];
        out.extend(args.iter().cloned());
        out
    }
}

/// The shim's entry point (its exit status).
pub fn main(args: &[std::ffi::OsString]) -> u8 {
    let text: Vec<String> = args
        .iter()
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    let (spec, cmd) = match text.split_first() {
        Some((spec, rest)) if rest.first().map(String::as_str) == Some("--") && rest.len() > 1 => {
            match serde_json::from_str::<Spec>(spec) {
                Ok(s) => (s, &rest[1..]),
                Err(e) => {
                    eprintln!("mcpres ops shim: bad spec: {e}");
                    return 2;
                }
            }
        }
        _ => {
            eprintln!("mcpres ops shim: usage: {ARG} SPEC -- PROGRAM [ARGS...]");
            return 2;
        }
    };
    if spec.delay_ms > 0 {
        std::thread::sleep(Duration::from_millis(spec.delay_ms.min(600_000)));
    }
    let mut command = Command::new(&cmd[0]);
    let mut front = None;
    if spec.http_front.is_empty() {
        command.args(&cmd[1..]);
    } else {
        // The subject serves behind the front, on a port picked here.
        let addr: std::net::SocketAddr = match spec.http_front.parse() {
            Ok(a) => a,
            Err(e) => {
                eprintln!("mcpres ops shim: bad httpFront {:?}: {e}", spec.http_front);
                return 2;
            }
        };
        let back = match super::front::back_port(addr.ip()) {
            Ok(p) => p,
            Err(e) => {
                eprintln!("mcpres ops shim: no free port for the subject: {e}");
                return 2;
            }
        };
        let sub = |s: &str| s.replace(super::front::BACK_PORT, &back.to_string());
        command.args(cmd[1..].iter().map(|a| sub(a)));
        for (k, v) in std::env::vars() {
            if v.contains(super::front::BACK_PORT) {
                command.env(k, sub(&v));
            }
        }
        front = Some((addr, std::net::SocketAddr::new(addr.ip(), back)));
    }
    let mut stub = None;
    if !spec.downstream_env.is_empty() {
        let phase = match spec.downstream_phase.as_str() {
            "" => "up",
            p => p,
        };
        match super::downstream::Stub::serve(phase) {
            Ok(s) => {
                command.env(&spec.downstream_env, &s.url);
                stub = Some(s);
            }
            Err(e) => {
                eprintln!("mcpres ops shim: cannot serve the downstream stub: {e}");
                return 2;
            }
        }
    }
    if !spec.sidecar() {
        use std::os::unix::process::CommandExt;
        let e = command.exec();
        eprintln!("mcpres ops shim: cannot run {}: {e}", cmd[0]);
        return 127;
    }
    if spec.relays_stdout() {
        command.stdout(std::process::Stdio::piped());
    }
    if spec.eof_delay_ms > 0
        || spec.stdio_gated()
        || spec.stdio_deduped()
        || spec.tooled()
        || spec.cached()
    {
        command.stdin(std::process::Stdio::piped());
    }
    let mut child = match command.spawn() {
        Ok(c) => c,
        Err(e) => {
            eprintln!("mcpres ops shim: cannot run {}: {e}", cmd[0]);
            return 127;
        }
    };
    // The pipes are the subject's alone: its end of file is its own (stdout stays the
    // shim's when it passes the subject's lines on).
    if let Ok(null) = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open("/dev/null")
    {
        if spec.eof_delay_ms == 0
            && !spec.stdio_gated()
            && !spec.stdio_deduped()
            && !spec.tooled()
            && !spec.cached()
        {
            let _ = rustix::stdio::dup2_stdin(&null);
        }
        if !spec.relays_stdout() {
            let _ = rustix::stdio::dup2_stdout(&null);
        }
    }
    forward_signals(child.id(), Duration::from_millis(spec.term_delay_ms));
    if let Some((at, back)) = front {
        super::front::serve(
            at,
            back,
            Duration::from_millis(spec.response_delay_ms),
            spec.front_limits(),
        );
    }
    let mut relay = None;
    if spec.cached() {
        let (to, from) = (child.stdin.take(), child.stdout.take());
        match (super::cache_edit::Defect::parse(&spec.cache), to, from) {
            (Some(defect), Some(to), Some(from)) => {
                relay = Some(super::cache_edit::relay(to, from, defect));
            }
            (None, ..) => {
                eprintln!("mcpres ops shim: no cache defect {:?}", spec.cache);
                let _ = child.kill();
                let _ = child.wait();
                return 2;
            }
            _ => {}
        }
    } else if spec.tooled() {
        let (to, from) = (child.stdin.take(), child.stdout.take());
        if let (Some(to), Some(from)) = (to, from) {
            relay = Some(tool_relay(to, from, &spec, stub));
        }
    } else if spec.stdio_gated() {
        let (to, from) = (child.stdin.take(), child.stdout.take());
        if let (Some(to), Some(from)) = (to, from) {
            relay = Some(gate(to, from, &spec));
        }
    } else if spec.stdio_deduped()
        && let Some(to) = child.stdin.take()
    {
        let deaf = spec.deaf_after_duplicate;
        std::thread::spawn(move || dedupe_stdin(to, deaf));
    } else if let Some(to) = child.stdin.take() {
        let delay = Duration::from_millis(spec.eof_delay_ms);
        std::thread::spawn(move || relay_stdin(to, delay));
    }
    if spec.orphan {
        // Not kept: the shim never ends it.
        drop(orphan_child());
    }
    if relay.is_none() && spec.drop_when_full && spec.http_front.is_empty() {
        relay = child
            .stdout
            .take()
            .map(|out| std::thread::spawn(move || relay_dropping(out)));
    }
    if relay.is_none() {
        relay = child.stdout.take().map(|out| {
            let delay = Duration::from_millis(spec.response_delay_ms);
            let edit = spec.edit();
            std::thread::spawn(move || relay_delayed(out, delay, edit))
        });
    }
    let started = Instant::now();
    let mut kept: Vec<Vec<u8>> = Vec::new();
    let mut idle: Vec<std::process::Child> = Vec::new();
    let mut listeners: Vec<std::net::TcpListener> = Vec::new();
    if spec.step_kib > 0 {
        kept.push(resident(spec.step_kib));
    }
    let tick = Duration::from_millis(100);
    let mut ticks: u64 = 0;
    loop {
        if let Ok(Some(status)) = child.try_wait() {
            use std::os::unix::process::ExitStatusExt;
            if let Some(r) = relay.take() {
                let _ = r.join();
            }
            // What it injected ends with the subject, before the shim does: nothing
            // is left for the runner to find.
            for mut c in idle.drain(..) {
                let _ = c.kill();
                let _ = c.wait();
            }
            return status
                .code()
                .map_or_else(|| 128 + status.signal().unwrap_or(0) as u8, |c| c as u8);
        }
        ticks += 1;
        let secs = started.elapsed().as_secs_f64();
        // Each defect kept to its rate by elapsed time, not by ticks (a late tick
        // catches up).
        let want_kib = (spec.leak_kib_per_s as f64 * secs) as u64 + spec.step_kib;
        let mut have_kib: u64 = kept.iter().map(|k| k.len() as u64 / 1024).sum();
        // In blocks of 64 KiB, every byte written: resident, whatever the allocator
        // keeps for small blocks.
        while want_kib >= have_kib + 64 {
            kept.push(resident(64));
            have_kib += 64;
        }
        let want_children = (spec.children_per_10s as f64 * secs / 10.0) as usize;
        while idle.len() < want_children {
            match idle_child() {
                Some(c) => idle.push(c),
                None => break,
            }
        }
        let want_listeners = (spec.listeners_per_10s as f64 * secs / 10.0) as usize;
        while listeners.len() < want_listeners {
            match std::net::TcpListener::bind("127.0.0.1:0") {
                Ok(l) => listeners.push(l),
                Err(_) => break,
            }
        }
        if spec.transient_children
            && ticks.is_multiple_of(5)
            && let Some(mut c) = idle_child()
        {
            let _ = c.kill();
            let _ = c.wait();
        }
        if spec.transient_listeners && ticks.is_multiple_of(5) {
            drop(std::net::TcpListener::bind("127.0.0.1:0"));
        }
        std::thread::sleep(tick);
    }
}

/// SIGTERM and SIGINT sent to the shim go to the subject, its child: the shim ends when
/// the subject does (and ends what it injected first), never before it, so that a runner
/// ending the probe by a signal finds nothing of the subject's left behind.
fn forward_signals(child: u32, delay: Duration) {
    let Some(pid) = i32::try_from(child)
        .ok()
        .and_then(rustix::process::Pid::from_raw)
    else {
        return;
    };
    std::thread::spawn(move || {
        use tokio::signal::unix::{SignalKind, signal};
        let Ok(rt) = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
        else {
            return;
        };
        rt.block_on(async move {
            let (Ok(mut term), Ok(mut int)) = (
                signal(SignalKind::terminate()),
                signal(SignalKind::interrupt()),
            ) else {
                return;
            };
            loop {
                let sig = tokio::select! {
                    _ = term.recv() => rustix::process::Signal::TERM,
                    _ = int.recv() => rustix::process::Signal::INT,
                };
                if !delay.is_zero() {
                    tokio::time::sleep(delay).await;
                }
                let _ = rustix::process::kill_process(pid, sig);
            }
        });
    });
}

/// The lines of `from` (each with its newline, the last one perhaps without), until
/// its end or an error.
pub(super) fn lines(from: impl std::io::Read) -> impl Iterator<Item = Vec<u8>> {
    use std::io::BufRead;
    let mut reader = std::io::BufReader::new(from);
    std::iter::from_fn(move || {
        let mut line = Vec::new();
        match reader.read_until(b'\n', &mut line) {
            Ok(0) | Err(_) => None,
            Ok(_) => Some(line),
        }
    })
}

/// How the shim changes the tools a subject lists (in its stdout's lines, or over HTTP in
/// the front's responses).
#[derive(Debug, Default, Clone)]
pub struct Edit {
    /// Appended to every tool name.
    pub suffix: Option<String>,
    /// The first tool left out.
    pub drop_first: bool,
    /// A tool of this name added.
    pub extra: Option<String>,
}

impl Edit {
    pub fn any(&self) -> bool {
        self.suffix.is_some() || self.drop_first || self.extra.is_some()
    }

    /// `m` with its listed tools changed when it is a `tools/list` answer; whether it was.
    pub fn apply(&self, m: &mut serde_json::Value) -> bool {
        let Some(tools) = m
            .pointer_mut("/result/tools")
            .and_then(serde_json::Value::as_array_mut)
        else {
            return false;
        };
        if let Some(suffix) = &self.suffix {
            for t in tools.iter_mut() {
                if let Some(name) = t.get("name").and_then(serde_json::Value::as_str) {
                    t["name"] = serde_json::Value::from(format!("{name}{suffix}"));
                }
            }
        }
        if self.drop_first && !tools.is_empty() {
            tools.remove(0);
        }
        if let Some(extra) = &self.extra {
            tools.push(
                serde_json::json!({"name": extra, "description": "added by this version",
                "inputSchema": {"type": "object"}}),
            );
        }
        true
    }
}

/// `line` with the listed tools changed by `edit` when it is a `tools/list` answer
/// (unchanged when it is no such answer).
fn edited_tools(line: Vec<u8>, edit: &Edit) -> Vec<u8> {
    let Ok(mut m) = serde_json::from_slice::<serde_json::Value>(&line) else {
        return line;
    };
    if !edit.apply(&mut m) {
        return line;
    }
    let mut out = serde_json::to_vec(&m).expect("a value serializes");
    out.push(b'\n');
    out
}

/// Pass each line of `from` to stdout `delay` after it arrived, in order (with the
/// listed tools changed by `edit`).
fn relay_delayed(from: std::process::ChildStdout, delay: Duration, edit: Edit) {
    use std::io::Write;
    let (tx, rx) = std::sync::mpsc::channel::<(Instant, Vec<u8>)>();
    let writer = std::thread::spawn(move || {
        let mut out = std::io::stdout().lock();
        for (at, line) in rx {
            let due = at + delay;
            let now = Instant::now();
            if due > now {
                std::thread::sleep(due - now);
            }
            if out.write_all(&line).and_then(|()| out.flush()).is_err() {
                return;
            }
        }
    });
    for line in lines(from) {
        let line = if edit.any() {
            edited_tools(line, &edit)
        } else {
            line
        };
        if tx.send((Instant::now(), line)).is_err() {
            break;
        }
    }
    drop(tx);
    let _ = writer.join();
}

/// The gate: the shim's stdin passes to the subject line by line, and the subject's
/// stdout to the shim's; a request (a line with an id and a method) that would put more
/// than the limit in flight, or more than the rate limit in its window, is dropped or
/// answered with an error, per `spec`. A response on stdout takes one off the in-flight
/// count. The returned thread ends when the subject's stdout does.
fn gate(
    mut to: std::process::ChildStdin,
    from: std::process::ChildStdout,
    spec: &Spec,
) -> std::thread::JoinHandle<()> {
    use std::io::Write;
    use std::sync::{Arc, Mutex};
    let (limit, reject) = if spec.reject_over_in_flight > 0 {
        (spec.reject_over_in_flight as usize, true)
    } else if spec.drop_over_in_flight > 0 {
        (spec.drop_over_in_flight as usize, false)
    } else {
        (usize::MAX, false)
    };
    let mut rate = (spec.drop_over_rate > 0 || spec.reject_over_rate > 0).then(|| {
        crate::server::rate::RateLog::new(
            spec.drop_over_rate.max(spec.reject_over_rate) as usize,
            Duration::from_millis(spec.rate_window_ms.max(1)),
        )
    });
    let reject_rate = spec.reject_over_rate > 0;
    let no_hint = spec.no_retry_hint;
    let in_flight = Arc::new(Mutex::new(0usize));
    let out = Arc::new(Mutex::new(std::io::stdout()));
    let (count, answers) = (in_flight.clone(), out.clone());
    std::thread::spawn(move || {
        let refuse = |id: serde_json::Value, message: &str, hint: Option<u64>| {
            let mut error = serde_json::json!({"code": -32000, "message": message});
            if let Some(ms) = hint {
                error["data"] = serde_json::json!({"retryAfterMs": ms});
            }
            let refusal = serde_json::json!({"jsonrpc": "2.0", "id": id, "error": error});
            let mut o = answers.lock().expect("stdout lock");
            let _ = writeln!(o, "{refusal}").and_then(|()| o.flush());
        };
        for line in lines(std::io::stdin().lock()) {
            let msg: Option<serde_json::Value> = serde_json::from_slice(&line).ok();
            let id = msg
                .as_ref()
                .filter(|m| m.get("method").is_some())
                .and_then(|m| m.get("id").cloned());
            if let Some(id) = id {
                if let Some(r) = rate.as_mut()
                    && let Err(wait) = r.admit(Instant::now())
                {
                    if reject_rate {
                        let ms = u64::try_from(wait.as_millis()).unwrap_or(u64::MAX).max(1);
                        refuse(
                            id,
                            "rate limited: too many requests in the window",
                            Some(ms),
                        );
                    }
                    continue;
                }
                let mut n = count.lock().expect("count lock");
                if *n >= limit {
                    drop(n);
                    if reject {
                        let hint = (!no_hint).then_some(100);
                        refuse(id, "overloaded: too many requests in flight", hint);
                    }
                    continue;
                }
                *n += 1;
            }
            if to.write_all(&line).and_then(|()| to.flush()).is_err() {
                return;
            }
        }
        drop(to);
    });
    std::thread::spawn(move || {
        for line in lines(from) {
            let is_response = serde_json::from_slice::<serde_json::Value>(&line)
                .ok()
                .is_some_and(|m| m.get("id").is_some() && m.get("method").is_none());
            if is_response {
                let mut n = in_flight.lock().expect("count lock");
                *n = n.saturating_sub(1);
            }
            let mut o = out.lock().expect("stdout lock");
            if o.write_all(&line).and_then(|()| o.flush()).is_err() {
                break;
            }
        }
    })
}

/// Pass each line of `from` to stdout without waiting: stdout is made non-blocking, and
/// a line that finds the runner's pipe full is dropped. A line the pipe took part of is
/// finished (no line is cut); the lines that came meanwhile found the pipe full, and are
/// dropped too.
fn relay_dropping(from: std::process::ChildStdout) {
    use std::io::Write;
    use std::os::fd::AsFd;
    // The descriptor itself (a copy of it shares the open file and its flags): every
    // write is one system call, nothing held in a buffer.
    let Ok(fd) = std::io::stdout().as_fd().try_clone_to_owned() else {
        return;
    };
    let nonblocking = rustix::fs::fcntl_getfl(&fd)
        .and_then(|f| rustix::fs::fcntl_setfl(&fd, f | rustix::fs::OFlags::NONBLOCK))
        .is_ok();
    let mut out = std::fs::File::from(fd);
    let (tx, rx) = std::sync::mpsc::channel::<(Instant, Vec<u8>)>();
    let reader = std::thread::spawn(move || {
        for line in lines(from) {
            if tx.send((Instant::now(), line)).is_err() {
                return;
            }
        }
    });
    let mut full_until: Option<Instant> = None;
    for (came, line) in rx {
        if full_until.is_some_and(|t| came < t) {
            continue;
        }
        let mut at = 0;
        let mut waited = false;
        while at < line.len() {
            match out.write(&line[at..]) {
                Ok(0) => return,
                Ok(n) => at += n,
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                    if at == 0 && nonblocking {
                        break;
                    }
                    waited = true;
                    std::thread::sleep(Duration::from_millis(1));
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(_) => return,
            }
        }
        if waited {
            full_until = Some(Instant::now());
        }
    }
    let _ = reader.join();
}

/// The tool relay: stdin passes to the subject line by line (a downstream control
/// line goes to the stub instead), noting the ids of `tools/call` requests for the
/// claimed tool and the sticky one. The subject's answer to a claimed call goes out as a
/// success, whatever it was; once it answers a sticky call as failed, every later
/// answer to one is that failure (for `stickyFailureMs`, or for ever). The returned
/// thread ends when the subject's stdout does.
fn tool_relay(
    mut to: std::process::ChildStdin,
    from: std::process::ChildStdout,
    spec: &Spec,
    stub: Option<super::downstream::Stub>,
) -> std::thread::JoinHandle<()> {
    use serde_json::{Value, json};
    use std::collections::BTreeMap;
    use std::io::Write;
    use std::sync::{Arc, Mutex};
    // The id of each noted call, and whether it is the claimed tool's (else the sticky one's).
    let ids = Arc::new(Mutex::new(BTreeMap::<String, bool>::new()));
    let noted = ids.clone();
    let (claimed, sticky) = (spec.claim_tool.clone(), spec.sticky_failure_tool.clone());
    std::thread::spawn(move || {
        for line in lines(std::io::stdin().lock()) {
            if stub.as_ref().is_some_and(|s| s.control(&line)) {
                continue;
            }
            if let Ok(m) = serde_json::from_slice::<Value>(&line)
                && m.get("method").and_then(Value::as_str) == Some("tools/call")
                && let Some(name) = m.pointer("/params/name").and_then(Value::as_str)
                && let Some(id) = m.get("id")
            {
                if !claimed.is_empty() && name == claimed {
                    noted.lock().expect("ids lock").insert(id.to_string(), true);
                } else if !sticky.is_empty() && name == sticky {
                    noted
                        .lock()
                        .expect("ids lock")
                        .insert(id.to_string(), false);
                }
            }
            if to.write_all(&line).and_then(|()| to.flush()).is_err() {
                return;
            }
        }
        drop(to);
    });
    let keep = match spec.sticky_failure_ms {
        0 => None,
        ms => Some(Duration::from_millis(ms)),
    };
    std::thread::spawn(move || {
        let mut out = std::io::stdout();
        // The failure kept (its message without the id) and since when.
        let mut failure: Option<(Value, Instant)> = None;
        for line in lines(from) {
            let answer = serde_json::from_slice::<Value>(&line)
                .ok()
                .filter(|m| m.get("method").is_none());
            let noted = answer
                .as_ref()
                .and_then(|m| m.get("id").cloned())
                .and_then(|id| {
                    let kind = ids.lock().expect("ids lock").remove(&id.to_string())?;
                    Some((id, kind))
                });
            let line = match (noted, answer) {
                (Some((id, true)), _) => {
                    let ok = json!({"jsonrpc": "2.0", "id": id, "result": {
                        "content": [{"type": "text", "text": "stored"}]}});
                    format!("{ok}\n").into_bytes()
                }
                (Some((id, false)), Some(m)) => {
                    if failure
                        .as_ref()
                        .is_some_and(|(_, since)| keep.is_some_and(|k| since.elapsed() > k))
                    {
                        failure = None;
                    }
                    match &failure {
                        Some((kept, _)) => {
                            let mut again = kept.clone();
                            again["id"] = id;
                            format!("{again}\n").into_bytes()
                        }
                        None => {
                            let failed = m.get("error").is_some()
                                || m.pointer("/result/isError") == Some(&json!(true));
                            if failed {
                                failure = Some((m, Instant::now()));
                            }
                            line
                        }
                    }
                }
                _ => line,
            };
            if out.write_all(&line).and_then(|()| out.flush()).is_err() {
                break;
            }
        }
    })
}

/// Pass the shim's stdin on to the subject; at its end of file, wait `delay` before
/// closing the subject's.
fn relay_stdin(mut to: std::process::ChildStdin, delay: Duration) {
    use std::io::{Read, Write};
    let mut from = std::io::stdin().lock();
    let mut buf = vec![0u8; 64 << 10];
    loop {
        match from.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                if to.write_all(&buf[..n]).and_then(|()| to.flush()).is_err() {
                    return;
                }
            }
        }
    }
    std::thread::sleep(delay);
    drop(to);
}

/// Pass the shim's stdin on to the subject line by line; a request whose id came
/// before is dropped, and with `deaf` nothing after it is passed on (the subject's
/// stdin stays open until the shim's ends).
fn dedupe_stdin(mut to: std::process::ChildStdin, deaf: bool) {
    use std::io::Write;
    let mut seen = std::collections::BTreeSet::new();
    let mut stalled = false;
    for line in lines(std::io::stdin().lock()) {
        let id = serde_json::from_slice::<serde_json::Value>(&line)
            .ok()
            .filter(|m| m.get("method").is_some())
            .and_then(|m| m.get("id").map(ToString::to_string));
        if let Some(id) = id
            && !seen.insert(id)
        {
            stalled |= deaf;
            continue;
        }
        if stalled {
            continue;
        }
        if to.write_all(&line).and_then(|()| to.flush()).is_err() {
            return;
        }
    }
    drop(to);
}

/// `kib` KiB written (so that they are resident, not merely reserved).
fn resident(kib: u64) -> Vec<u8> {
    std::hint::black_box(vec![0x5Au8; (kib as usize) * 1024])
}

/// An idle child of this process that dies with it.
fn idle_child() -> Option<std::process::Child> {
    let me = std::env::current_exe().ok()?;
    Command::new(me)
        .arg(IDLE_ARG)
        .arg(std::process::id().to_string())
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .ok()
}

/// An idle process that outlives this one (see [`Spec::orphan`]).
fn orphan_child() -> Option<std::process::Child> {
    let me = std::env::current_exe().ok()?;
    Command::new(me)
        .arg(IDLE_ARG)
        .arg(ORPHAN)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .ok()
}

/// The idle child's argument that makes it an orphan to be.
const ORPHAN: &str = "orphan";
/// How long an orphan sleeps before it exits by itself: longer than any probe waits,
/// short enough that a runner that failed to find it leaves nothing for long.
const ORPHAN_LIFE: Duration = Duration::from_secs(300);

/// The idle child: dies with its parent (named by pid), else sleeps; an orphan
/// (`orphan`) moves to its own session and sleeps [`ORPHAN_LIFE`].
pub fn idle_main(args: &[std::ffi::OsString]) -> u8 {
    if args.first().and_then(|a| a.to_str()) == Some(ORPHAN) {
        let _ = rustix::process::setsid();
        std::thread::sleep(ORPHAN_LIFE);
        return 0;
    }
    let parent: Option<u32> = args.first().and_then(|a| a.to_str()?.parse().ok());
    let _ = rustix::process::set_parent_process_death_signal(Some(rustix::process::Signal::KILL));
    loop {
        let now = rustix::process::getppid().map(|p| p.as_raw_nonzero().get() as u32);
        if now != parent {
            return 0;
        }
        std::thread::sleep(Duration::from_millis(200));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_tools_list_answer_is_edited() {
        let line = br#"{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"a"},{"name":"b"}]}}
"#
        .to_vec();
        let renamed = Edit {
            suffix: Some("-x".into()),
            ..Edit::default()
        };
        let out: serde_json::Value =
            serde_json::from_slice(&edited_tools(line.clone(), &renamed)).unwrap();
        assert_eq!(out["result"]["tools"][0]["name"], "a-x");
        assert_eq!(out["result"]["tools"][1]["name"], "b-x");
        // The first left out, one added.
        let changed = Edit {
            drop_first: true,
            extra: Some("c".into()),
            ..Edit::default()
        };
        let out: serde_json::Value = serde_json::from_slice(&edited_tools(line, &changed)).unwrap();
        let names: Vec<&str> = out["result"]["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["name"].as_str().unwrap())
            .collect();
        assert_eq!(names, ["b", "c"]);
        let other = br#"{"jsonrpc":"2.0","id":1,"result":{}}
"#
        .to_vec();
        assert_eq!(edited_tools(other.clone(), &changed), other);
        assert_eq!(
            edited_tools(b"not json\n".to_vec(), &renamed),
            b"not json\n"
        );
    }

    #[test]
    fn a_random_suffix_differs_per_draw_and_a_fixed_one_does_not() {
        let random = Spec {
            tool_suffix: "random".into(),
            ..Spec::default()
        };
        assert_ne!(random.suffix(), random.suffix());
        let fixed = Spec {
            tool_suffix: "-v1".into(),
            ..Spec::default()
        };
        assert_eq!(fixed.suffix().as_deref(), Some("-v1"));
        assert_eq!(Spec::default().suffix(), None);
    }
}
