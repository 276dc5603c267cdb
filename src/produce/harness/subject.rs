//! A stdio subject process: spawned from an argv (no shell) with a scrubbed
//! environment in its own process group, recorded byte for byte before anything
//! parses it, and killed with its whole process group on every exit path.
//!
//! Framing is our own (one JSON-RPC message per `\n`-terminated line, as the
//! MCP stdio transport defines it): the recorder sees the raw bytes in both
//! directions first; the oracles then judge those bytes. rmcp is not on this
//! path because an SDK client would repair or drop exactly the malformed frames
//! the negative controls exist to observe.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::process::{Child, ChildStdin};
use tokio::sync::mpsc;

use super::http::HttpTarget;
use super::record::*;
use super::vocab::Revision;
use crate::json::canonical;
use crate::produce::drive::end::{self, Ending, Leader, Step};
use crate::produce::drive::spawn::{self, StdinMode};
use crate::produce::drive::{proc, sandbox};

/// Why a subject could not be driven.
#[derive(Debug, thiserror::Error)]
pub enum SubjectError {
    #[error("cannot start {program}: {source}")]
    Spawn {
        program: String,
        #[source]
        source: std::io::Error,
    },
    #[error("writing to the subject failed: {0}")]
    Write(#[source] std::io::Error),
    #[error("cannot serialize a request: {0}")]
    Encode(#[from] canonical::CanonicalError),
}

/// What the reader saw next.
#[derive(Debug, Clone)]
pub enum Next {
    Frame(Frame),
    /// HTTP: the exchange of the request with this id is over and carried no answer.
    Unanswered(Value),
    /// stdout closed; trailing bytes without a newline come as the last frame.
    Eof,
    /// The deadline passed first.
    Deadline,
}

/// How a session ended, measured.
#[derive(Debug, Clone)]
pub struct Ended {
    pub exit_code: Option<i32>,
    pub signal: Option<i32>,
    /// Did the process exit on its own (stdin EOF) within the grace period?
    pub exited_on_its_own: bool,
    /// Processes (not yet reaped zombies excluded) still in the group after the kill.
    pub live_in_group: usize,
    /// Zombies left in the group, waiting for their reaper.
    pub zombies_in_group: usize,
    /// Descendants that had left the group and were still alive after the
    /// group kill (adopted by the harness, then killed and reaped by it):
    /// `pid`, `command`, `processGroup`, `sessionId`, ... (see `proc::Proc`).
    pub escaped: Vec<Value>,
    /// Every entry left in the session's private temporary directory
    /// (`path` relative to it, `kind`, `bytes`, `sha256`).
    pub temp_left: Vec<Value>,
    /// What the sandbox's upper layers held once the session had ended
    /// (`entriesLeft`, `truncated`, `scope`); `None` without a sandbox.
    pub sandbox: Option<Value>,
    pub end_ms: u64,
}

/// Kills a process group when dropped: the backstop for every exit path
/// (errors, panics, a cancelled future after Ctrl-C).
#[derive(Debug)]
pub struct GroupGuard {
    pgid: i32,
    /// Cleared once the group is measured empty and its leader reaped: from
    /// then on the number may be reused by an unrelated process group.
    armed: bool,
}

impl GroupGuard {
    pub fn pgid(&self) -> i32 {
        self.pgid
    }

    /// Send SIGKILL to the whole group; `Ok(false)` when no process was left.
    pub fn kill(&self) -> std::io::Result<bool> {
        end::kill_group(self.pgid)
    }
}

impl Drop for GroupGuard {
    fn drop(&mut self) {
        if self.armed {
            let _ = end::kill_group(self.pgid);
        }
    }
}

/// The variables that name a session's private temporary directory; the
/// harness sets each one the operator did not pass with `--env`.
pub const TEMP_ENV_KEYS: [&str; 3] = ["TMPDIR", "TMP", "TEMP"];

/// Directories where a file left behind is temporary-file residue: the
/// system temporary directory, `/tmp`, `/var/tmp` and `/dev/shm`.
pub fn temp_roots() -> Vec<PathBuf> {
    let mut roots = vec![
        std::env::temp_dir(),
        PathBuf::from("/tmp"),
        PathBuf::from("/var/tmp"),
        PathBuf::from("/dev/shm"),
    ];
    roots.sort();
    roots.dedup();
    roots
}

pub use crate::produce::drive::spawn::resolve_program;

/// How every session of a run starts: a fresh subject process (PROGRAM with
/// its arguments and exactly `env`), or, with no program, a session on the
/// server at `http` that the harness did not start. Either way the session
/// speaks `revision`, and an HTTP subject is given time to start listening.
pub struct Spawner<'a> {
    pub epoch: Instant,
    pub program: Option<&'a Path>,
    pub args: &'a [String],
    pub env: &'a BTreeMap<String, String>,
    pub http: Option<&'a HttpTarget>,
    pub listen_limit: Duration,
    pub revision: Revision,
    /// Where each started session gets its private temporary directory
    /// (`<temp_root>/<session>`, handed over as TMPDIR, TMP and TEMP).
    pub temp_root: Option<&'a Path>,
    /// The sandbox's tools and where each session's stage is made
    /// (`<stage root>/<session>`); `None`: no sandbox.
    pub sandbox: Option<(&'a sandbox::Tools, &'a Path)>,
    /// A host directory a sandboxed subject writes through to (the
    /// harness's injection journals).
    pub through: Option<&'a Path>,
    /// The session prepared ahead, if any ([`Spawner::prepare`]): a slot
    /// that may outlive this spawner (the next trial's first session is
    /// prepared while this trial's last one runs).
    pub prepared: &'a Mutex<Option<Pending>>,
}

impl Spawner<'_> {
    /// Start session `name`; `extra` is appended to the subject's arguments.
    /// A session [`Spawner::prepare`]d with the same name and arguments is
    /// let go instead of started afresh.
    pub async fn spawn(&self, name: &str, extra: &[String]) -> Result<Session, SubjectError> {
        let mut session = match (self.program, self.http) {
            (Some(program), http) => {
                let mut argv = self.args.to_vec();
                argv.extend_from_slice(extra);
                let ready = match self.take_pending(name, extra) {
                    Some(pending) => pending.task.await.ok().flatten(),
                    None => None,
                };
                let launched = match ready {
                    Some(prepared) => prepared.let_go(),
                    None => self.plan(program, argv.clone()).launch(name, false)?,
                };
                Session::begin(name, self.epoch, program, &argv, self.env, http, launched)
            }
            (None, Some(target)) => Session::connect(name, self.epoch, target),
            (None, None) => {
                return Err(SubjectError::Spawn {
                    program: "(none)".into(),
                    source: std::io::Error::other("no PROGRAM and no --http URL"),
                });
            }
        };
        session.set_revision(self.revision);
        session.wait_listening(self.listen_limit).await;
        Ok(session)
    }

    /// Prepare session `name` (with `extra`) ahead, when its subject will
    /// run in the sandbox: on a blocking thread (the caller goes on driving
    /// its session), its stage is made and its helper started, which sets
    /// everything up (mounts, network, watch) and starts the namespace's
    /// init, which then waits; the subject itself starts only when
    /// [`Spawner::spawn`] is called for it. A session prepared before and
    /// not used is discarded. Without a sandbox, or when preparing fails,
    /// nothing is prepared (the session is then started as usual).
    pub fn prepare(&self, name: &str, extra: &[String]) {
        let Some(program) = self.program else {
            return;
        };
        if self.sandbox.is_none() {
            return;
        }
        let mut argv = self.args.to_vec();
        argv.extend_from_slice(extra);
        let plan = self.plan(program, argv);
        let epoch = self.epoch;
        let session = name.to_string();
        let task = tokio::task::spawn_blocking(move || {
            let prepared_ms = ms_since(epoch);
            let mut launched = plan.launch(&session, true).ok()?;
            launched.prepared_ms = Some(prepared_ms);
            Some(Prepared {
                launched: Some(launched),
            })
        });
        let before = self
            .prepared
            .lock()
            .expect("prepared lock")
            .replace(Pending {
                name: name.to_string(),
                extra: extra.to_vec(),
                task,
            });
        // One prepared ahead and not used: discarded once it is ready.
        drop(before);
    }

    /// The session pending for `name` with `extra`, if that is the one.
    fn take_pending(&self, name: &str, extra: &[String]) -> Option<Pending> {
        let mut slot = self.prepared.lock().expect("prepared lock");
        if slot
            .as_ref()
            .is_some_and(|p| p.name == name && p.extra == extra)
        {
            slot.take()
        } else {
            None
        }
    }

    /// What starting `program` with `argv` takes, owned.
    fn plan(&self, program: &Path, argv: Vec<String>) -> LaunchPlan {
        LaunchPlan {
            program: program.to_path_buf(),
            argv,
            env: self.env.clone(),
            http: self.http.is_some(),
            temp_root: self.temp_root.map(Path::to_path_buf),
            sandbox: self
                .sandbox
                .map(|(tools, root)| (tools.clone(), root.to_path_buf())),
            through: self.through.map(Path::to_path_buf),
        }
    }
}

/// Everything a session's process is started from ([`Spawner::spawn`]).
struct LaunchPlan {
    program: PathBuf,
    argv: Vec<String>,
    env: BTreeMap<String, String>,
    http: bool,
    temp_root: Option<PathBuf>,
    sandbox: Option<(sandbox::Tools, PathBuf)>,
    through: Option<PathBuf>,
}

impl LaunchPlan {
    /// Start it for session `name`: its private temporary directory and, in
    /// the sandbox, its stage (held, with `hold`: the subject waits for the
    /// stage's go, [`sandbox::Stage::let_go`]).
    fn launch(&self, name: &str, hold: bool) -> Result<Launched, SubjectError> {
        let failed = |source| SubjectError::Spawn {
            program: self.program.display().to_string(),
            source,
        };
        let temp_dir = match &self.temp_root {
            Some(root) => {
                let dir = root.join(name);
                std::fs::create_dir_all(&dir).map_err(failed)?;
                Some(dir)
            }
            None => None,
        };
        if self.sandbox.is_some() {
            sandbox::can_execute(&self.program).map_err(failed)?;
        }
        let stage = match &self.sandbox {
            Some((tools, root)) => {
                let mut stage = sandbox::Stage::create_through(
                    root,
                    name,
                    // A network namespace of its own, HTTP subjects too
                    // (reached through its door).
                    true,
                    // The session's private temporary directory too: what
                    // is left there is measured as before.
                    &self
                        .through
                        .iter()
                        .cloned()
                        .chain(temp_dir.clone())
                        .collect::<Vec<_>>(),
                )
                .map_err(failed)?;
                if hold {
                    stage.hold().map_err(failed)?;
                }
                Some((tools, stage))
            }
            None => None,
        };
        Launched::start(
            &self.program,
            &self.argv,
            &self.env,
            self.http,
            temp_dir.as_deref(),
            stage,
        )
    }
}

/// A session being prepared ahead ([`Spawner::prepare`]), for `name` with
/// `extra`.
pub struct Pending {
    name: String,
    extra: Vec<String>,
    task: tokio::task::JoinHandle<Option<Prepared>>,
}

/// A session prepared ahead ([`Spawner::prepare`]): its helper is setting
/// up (or has set up) its stage, and its init waits for the stage's go.
/// Dropped unused, the helper is killed, then reaped and its stage removed
/// (closing the go unwritten, so the init ends without starting anything)
/// on the runtime.
pub struct Prepared {
    launched: Option<Launched>,
}

impl Prepared {
    /// Let the subject start: the process as started, for its session.
    fn let_go(mut self) -> Launched {
        let launched = self
            .launched
            .take()
            .expect("a prepared session is let go once");
        if let Some(stage) = &launched.stage {
            // A helper that is gone cannot be told; its session then
            // records how it ended.
            let _ = stage.let_go();
        }
        launched
    }
}

impl Drop for Prepared {
    fn drop(&mut self) {
        let Some(mut launched) = self.launched.take() else {
            return;
        };
        let _ = launched.child.start_kill();
        let pid = launched.child.id();
        let end = async move {
            let _ = launched.child.wait().await;
            if let Some(pid) = pid {
                crate::produce::drive::proc::unregister_child(pid);
            }
            // The stage (with its directories) goes last.
            drop(launched);
        };
        match tokio::runtime::Handle::try_current() {
            Ok(handle) => {
                handle.spawn(end);
            }
            Err(_) => drop(end),
        }
    }
}

/// How long an HTTP session's unanswered exchanges may still run once the
/// session ends.
const INFLIGHT_GRACE: Duration = Duration::from_secs(3);

/// A running subject with its recorder.
pub struct Session {
    pub name: String,
    epoch: Instant,
    /// `None` for a server the harness did not start (`Session::connect`).
    child: Option<Child>,
    stdin: Option<ChildStdin>,
    frames: mpsc::UnboundedReceiver<Pumped>,
    stdout_done: bool,
    rec: Arc<Mutex<Recording>>,
    /// `None` with `child`: there is no process group of ours to kill.
    guard: Option<GroupGuard>,
    pumps: Vec<tokio::task::JoinHandle<()>>,
    pub pid: u32,
    pub spawned_ms: u64,
    http: Option<HttpSession>,
    revision: Revision,
    /// The end-of-session snapshot (`open-files`, `process-tree`) was taken.
    open_files_recorded: bool,
    /// The session's private temporary directory (TMPDIR, TMP, TEMP).
    temp_dir: Option<PathBuf>,
    /// The session's sandbox stage, observed and removed when it ends.
    stage: Option<sandbox::Stage>,
}

/// The client side of a Streamable HTTP subject.
struct HttpSession {
    client: super::http::Client,
    tx: mpsc::UnboundedSender<Pumped>,
    inflight: Vec<tokio::task::JoinHandle<()>>,
    shutdown: Option<tokio::task::JoinHandle<()>>,
    /// Exchanges already handed to an oracle.
    judged: usize,
}

/// A subject's process as started, before its session is recorded.
struct Launched {
    child: Child,
    full_env: BTreeMap<String, String>,
    provided: Vec<&'static str>,
    temp_dir: Option<PathBuf>,
    stage: Option<sandbox::Stage>,
    /// When its sandbox was prepared ahead ([`Spawner::prepare`]).
    prepared_ms: Option<u64>,
}

impl Launched {
    /// Start `program` with `args` and exactly `env` (see
    /// [`Session::begin`]); in `stage` when given.
    fn start(
        program: &Path,
        args: &[String],
        env: &BTreeMap<String, String>,
        http: bool,
        temp_dir: Option<&Path>,
        stage: Option<(&sandbox::Tools, sandbox::Stage)>,
    ) -> Result<Launched, SubjectError> {
        let mut full_env = env.clone();
        let mut provided: Vec<&'static str> = Vec::new();
        if let Some(dir) = temp_dir {
            for key in TEMP_ENV_KEYS {
                if !env.contains_key(key) {
                    full_env.insert(key.to_string(), dir.display().to_string());
                    provided.push(key);
                }
            }
        }
        let cmd = spawn::command_in(
            stage.as_ref().map(|(tools, stage)| (stage, *tools)),
            program,
            args,
            &full_env,
            if http {
                StdinMode::Null
            } else {
                StdinMode::Piped
            },
        );
        let child = spawn::spawn_async(cmd).map_err(|source| SubjectError::Spawn {
            program: program.display().to_string(),
            source,
        })?;
        Ok(Launched {
            child,
            full_env,
            provided,
            temp_dir: temp_dir.map(Path::to_path_buf),
            stage: stage.map(|(_, s)| s),
            prepared_ms: None,
        })
    }
}

fn ms_since(epoch: Instant) -> u64 {
    u64::try_from(epoch.elapsed().as_millis()).unwrap_or(u64::MAX)
}

impl Session {
    /// The session of a started (or prepared, and now let go) process
    /// ([`Launched::start`]): `program` ran with `args`, and exactly `env`
    /// plus, with a private temporary directory, TMPDIR, TMP and TEMP naming
    /// it (each unless `env` has it already). With `http`, the subject is
    /// driven over Streamable HTTP at that target and its stdout is recorded
    /// as a plain capture; otherwise over stdio.
    fn begin(
        name: &str,
        epoch: Instant,
        program: &Path,
        args: &[String],
        env: &BTreeMap<String, String>,
        http: Option<&HttpTarget>,
        launched: Launched,
    ) -> Session {
        let Launched {
            mut child,
            full_env,
            provided,
            temp_dir,
            stage,
            prepared_ms,
        } = launched;
        let temp_dir = temp_dir.as_deref();
        let spawned_ms = ms_since(epoch);
        let leader = child.id().unwrap_or(0);
        // In the sandbox, the subject is the second process of its PID
        // namespace, and the process started here stands in for it (same
        // process group, same pipes, ends as it ends).
        let pid = stage
            .as_ref()
            .map_or(leader, |s| s.subject_pid(leader, sandbox::NAMING_LIMIT));
        let guard = GroupGuard {
            pgid: i32::try_from(leader).unwrap_or(0),
            armed: true,
        };
        let rec = Arc::new(Mutex::new(Recording::default()));
        rec.lock().expect("fresh lock").events.push(json!({
            "session": name, "event": "spawned", "offsetMs": spawned_ms, "pid": pid,
            "processGroup": leader, "standIn": (pid != leader).then_some(leader),
            "program": program.display().to_string(), "args": args,
            "environmentKeys": full_env.keys().collect::<Vec<_>>(),
            "harnessProvidedKeys": provided,
            "operatorKeys": env.keys().collect::<Vec<_>>(),
            "sandboxed": stage.is_some(),
            "ownNetwork": stage.as_ref().is_some_and(|s| s.own_network()),
            // Its sandbox was set up while the session before it ran, and
            // the subject started now (`offsetMs`), when it was let go.
            "sandboxPreparedAtMs": prepared_ms,
            "temporaryDirectory": temp_dir.map(|_| json!({
                "handedOverAs": provided,
                "overriddenByOperator": TEMP_ENV_KEYS.iter().filter(|k| env.contains_key(**k)).collect::<Vec<_>>(),
            })),
        }));
        let (tx, frames) = mpsc::unbounded_channel();
        let mut pumps = Vec::new();
        let frame_stdout = http.is_none();
        if let Some(mut out) = child.stdout.take() {
            let rec = Arc::clone(&rec);
            let session = name.to_string();
            let tx = tx.clone();
            pumps.push(tokio::spawn(async move {
                let mut buf = [0u8; 8192];
                let mut line: Vec<u8> = Vec::new();
                loop {
                    let n = match out.read(&mut buf).await {
                        Ok(0) | Err(_) => break,
                        Ok(n) => n,
                    };
                    let at_ms = ms_since(epoch);
                    let mut r = rec.lock().expect("recorder lock");
                    // The declared input limit is checked before a byte is
                    // kept: what fits is recorded, then reading stops (the
                    // pipe is closed; the subject's further output is never
                    // buffered).
                    let fits = (INPUT_LIMIT_BYTES - r.stdout.len()).min(n);
                    r.stdout.extend_from_slice(&buf[..fits]);
                    let mut stop = fits < n;
                    if frame_stdout {
                        for &b in &buf[..fits] {
                            if b != b'\n' {
                                line.push(b);
                                continue;
                            }
                            if !r.admit_frame(&session, at_ms) {
                                stop = true;
                                break;
                            }
                            let mut bytes = std::mem::take(&mut line);
                            if bytes.last() == Some(&b'\r') {
                                bytes.pop();
                            }
                            r.messages.push(message_entry(
                                &session,
                                "server-to-client",
                                at_ms,
                                &bytes,
                            ));
                            let _ = tx.send(Pumped::Frame(Frame { bytes, at_ms }));
                        }
                    }
                    if stop {
                        if fits < n {
                            r.limit_hit(&session, at_ms, "bytes", INPUT_LIMIT_BYTES);
                        }
                        // An unfinished line past a limit is not a frame.
                        line = Vec::new();
                        break;
                    }
                }
                let at_ms = ms_since(epoch);
                let mut r = rec.lock().expect("recorder lock");
                if !frame_stdout {
                    r.events.push(
                        json!({"session": session, "event": "stdout-closed", "offsetMs": at_ms}),
                    );
                    return;
                }
                if !line.is_empty() && r.admit_frame(&session, at_ms) {
                    r.messages
                        .push(message_entry(&session, "server-to-client", at_ms, &line));
                    let _ = tx.send(Pumped::Frame(Frame { bytes: line, at_ms }));
                }
                r.events
                    .push(json!({"session": session, "event": "stdout-closed", "offsetMs": at_ms}));
                let _ = tx.send(Pumped::End);
            }));
        }
        if let Some(mut err) = child.stderr.take() {
            let rec = Arc::clone(&rec);
            let session = name.to_string();
            pumps.push(tokio::spawn(async move {
                let mut buf = [0u8; 8192];
                let mut dropped = 0usize;
                while let Ok(n) = err.read(&mut buf).await {
                    if n == 0 {
                        break;
                    }
                    let mut r = rec.lock().expect("recorder lock");
                    let fits = STDERR_KEEP_BYTES.saturating_sub(r.stderr.len()).min(n);
                    r.stderr.extend_from_slice(&buf[..fits]);
                    dropped += n - fits;
                }
                if dropped > 0 {
                    rec.lock().expect("recorder lock").events.push(json!({
                        "session": session, "event": "stderr-truncated",
                        "keptBytes": STDERR_KEEP_BYTES, "droppedBytes": dropped,
                    }));
                }
            }));
        }
        let http = http.map(|target| HttpSession {
            client: {
                let mut c = super::http::Client::new(
                    target.clone(),
                    Arc::clone(&rec),
                    name.to_string(),
                    epoch,
                    tx.clone(),
                );
                if let Some(s) = &stage {
                    c.reach = s.endpoint(target.addr);
                }
                c
            },
            tx,
            inflight: Vec::new(),
            shutdown: None,
            judged: 0,
        });
        Session {
            name: name.to_string(),
            epoch,
            stdin: child.stdin.take(),
            child: Some(child),
            frames,
            stdout_done: false,
            rec,
            guard: Some(guard),
            pumps,
            pid,
            spawned_ms,
            http,
            revision: Revision::default(),
            open_files_recorded: false,
            temp_dir: temp_dir.map(Path::to_path_buf),
            stage,
        }
    }

    /// Drive an MCP server the harness did not start, over Streamable HTTP at
    /// `target`. There is no process to record, signal or reap: only the HTTP
    /// exchanges are observed.
    pub fn connect(name: &str, epoch: Instant, target: &HttpTarget) -> Session {
        let at = ms_since(epoch);
        let rec = Arc::new(Mutex::new(Recording::default()));
        rec.lock().expect("fresh lock").events.push(json!({
            "session": name, "event": "connected-to-external-server", "offsetMs": at,
            "port": target.addr.port(), "path": target.path,
        }));
        let (tx, frames) = mpsc::unbounded_channel();
        let http = HttpSession {
            client: super::http::Client::new(
                target.clone(),
                Arc::clone(&rec),
                name.to_string(),
                epoch,
                tx.clone(),
            ),
            tx,
            inflight: Vec::new(),
            shutdown: None,
            judged: 0,
        };
        Session {
            name: name.to_string(),
            epoch,
            child: None,
            stdin: None,
            frames,
            stdout_done: false,
            rec,
            guard: None,
            pumps: Vec::new(),
            pid: 0,
            spawned_ms: at,
            http: Some(http),
            revision: Revision::default(),
            open_files_recorded: false,
            temp_dir: None,
            stage: None,
        }
    }

    /// Did the subject write more than `INPUT_LIMIT_BYTES` to stdout (or in
    /// HTTP responses) or more than `SESSION_FRAME_LIMIT` frames? Then: which
    /// limit, in words.
    pub fn input_limit_exceeded(&self) -> Option<String> {
        let r = self.rec.lock().expect("recorder lock");
        r.input_limit_exceeded.then(|| {
            r.limit_detail
                .clone()
                .unwrap_or_else(|| "the subject exceeded an input limit".into())
        })
    }

    /// Reading stopped at an input limit: nothing the subject writes from
    /// now on is read, so its process group is killed at once (as the
    /// session's end would, after its grace period) and the session ends
    /// without waiting for a subject that may be blocked on a full pipe or
    /// ignore SIGPIPE. Recorded as a `group-sigkill` event.
    fn kill_after_limit(&mut self) {
        if self.input_limit_exceeded().is_none() {
            return;
        }
        let Some(guard) = self.guard.as_ref() else {
            return;
        };
        let killed = guard.kill();
        let at = self.now_ms();
        self.event(json!({
            "event": "group-sigkill", "offsetMs": at, "processGroup": guard.pgid(),
            "reason": "input limit exceeded",
            "result": match &killed { Ok(true) => "signalled".to_string(), Ok(false) => "no process left".to_string(), Err(e) => format!("error: {e}") },
        }));
    }

    /// A server the harness did not start?
    pub fn is_external(&self) -> bool {
        self.child.is_none()
    }

    /// Speak `revision` from now on (set right after the spawn). Over HTTP,
    /// 2026-07-28 sends its version header on every request and never a
    /// session id.
    pub fn set_revision(&mut self, revision: Revision) {
        self.revision = revision;
        if let Some(h) = &self.http
            && revision.is_stateless()
        {
            h.client.set_stateless(revision.as_str());
        }
    }

    /// The protocol revision this session speaks.
    pub fn revision(&self) -> Revision {
        self.revision
    }

    /// Has the subject process exited? Polls for up to `wait` (a crashed
    /// process may close its sockets a moment before it can be reaped).
    pub async fn exited(&mut self, wait: Duration) -> bool {
        let until = Instant::now() + wait;
        loop {
            if let Some(child) = self.child.as_mut()
                && matches!(child.try_wait(), Ok(Some(_)))
            {
                return true;
            }
            if self.child.is_none() {
                return false;
            }
            if Instant::now() >= until {
                return false;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// HTTP: the exchanges made since the last call (statuses, media types,
    /// connections), for an oracle to judge; empty over stdio.
    pub fn take_http_exchanges(&mut self) -> Vec<super::http::HttpExchange> {
        let Some(h) = self.http.as_mut() else {
            return Vec::new();
        };
        let state = h.client.state.lock().expect("http state lock");
        let new = state.exchanges[h.judged..].to_vec();
        h.judged = state.exchanges.len();
        new
    }

    /// HTTP subjects: wait until the target accepts connections (or the
    /// process exits, or `limit` passes); recorded as a lifecycle event.
    pub async fn wait_listening(&mut self, limit: Duration) {
        let Some(reach) = self.http.as_ref().map(|h| h.client.reach.clone()) else {
            return;
        };
        let addr = reach.addr;
        let until = Instant::now() + limit;
        let mut ready = false;
        while Instant::now() < until {
            if super::http::listening(&reach).await {
                ready = true;
                break;
            }
            if let Some(child) = self.child.as_mut()
                && matches!(child.try_wait(), Ok(Some(_)))
            {
                break;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        let at = self.now_ms();
        self.event(json!({
            "event": if ready { "listening" } else { "not-listening" }, "offsetMs": at,
            "port": addr.port(),
            "boundAddresses": proc::listening_addresses(
                (self.pid != 0).then_some(self.pid),
                addr.port(),
            ),
        }));
    }

    fn http_task(&self, out: super::http::Outgoing) -> Option<tokio::task::JoinHandle<()>> {
        let h = self.http.as_ref()?;
        let index = h.client.begin(&out);
        let client = h.client.clone();
        Some(tokio::spawn(
            async move { client.exchange(out, index).await },
        ))
    }

    /// HTTP: one exchange at a time, so the raw captures stay in order.
    async fn settle_http(&mut self) {
        if let Some(h) = self.http.as_mut() {
            for task in h.inflight.drain(..) {
                let _ = task.await;
            }
        }
    }

    /// HTTP: give up on every exchange still waiting for its answer (its
    /// connection is dropped), so that the next message does not wait for it.
    /// A client abandons a request this way; the recovery controls use it
    /// after an attempt timed out. Nothing happens over stdio.
    pub fn abandon_inflight(&mut self, reason: &str) {
        let Some(h) = self.http.as_mut() else {
            return;
        };
        let mut abandoned = 0usize;
        for task in h.inflight.drain(..) {
            if !task.is_finished() {
                task.abort();
                abandoned += 1;
            }
        }
        if abandoned > 0 {
            let at = self.now_ms();
            self.event(json!({
                "event": "http-exchange-abandoned", "offsetMs": at,
                "exchanges": abandoned, "reason": reason,
            }));
        }
    }

    /// Driven over Streamable HTTP?
    pub fn is_http(&self) -> bool {
        self.http.is_some()
    }

    pub fn now_ms(&self) -> u64 {
        ms_since(self.epoch)
    }

    /// The subject's process group; 0 for an external server (none of ours).
    pub fn pgid(&self) -> i32 {
        self.guard.as_ref().map_or(0, GroupGuard::pgid)
    }

    /// The session's private temporary directory, as the subject sees it.
    pub fn temp_dir_path(&self) -> Option<String> {
        self.temp_dir.as_ref().map(|d| d.display().to_string())
    }

    /// Write one message as a line; the bytes are recorded before they are sent.
    pub async fn send(&mut self, message: &Value) -> Result<u64, SubjectError> {
        if self.http.is_some() {
            self.settle_http().await;
            let bytes = serde_json::to_vec(message).expect("a Value always serializes");
            let at_ms = self.now_ms();
            self.rec
                .lock()
                .expect("recorder lock")
                .messages
                .push(message_entry(&self.name, "client-to-server", at_ms, &bytes));
            let out = super::http::Outgoing::post(bytes, message);
            let is_request = out.kind == super::http::Posted::Request;
            let task = self.http_task(out).expect("an HTTP session");
            if let Some(h) = self.http.as_mut() {
                h.inflight.push(task);
            }
            if !is_request {
                self.settle_http().await;
            }
            return Ok(at_ms);
        }
        let mut bytes = serde_json::to_vec(message).expect("a Value always serializes");
        let at_ms = self.now_ms();
        {
            let mut r = self.rec.lock().expect("recorder lock");
            r.messages
                .push(message_entry(&self.name, "client-to-server", at_ms, &bytes));
            bytes.push(b'\n');
            r.stdin.extend_from_slice(&bytes);
        }
        let stdin = self.stdin.as_mut().ok_or_else(|| {
            SubjectError::Write(std::io::Error::new(
                std::io::ErrorKind::BrokenPipe,
                "stdin already closed",
            ))
        })?;
        stdin.write_all(&bytes).await.map_err(SubjectError::Write)?;
        stdin.flush().await.map_err(SubjectError::Write)?;
        Ok(at_ms)
    }

    /// Write `bytes` as one line, unchanged (the client-to-server faults send
    /// broken frames this way); recorded before it is sent. Stdio only.
    pub async fn send_raw(&mut self, bytes: &[u8]) -> Result<u64, SubjectError> {
        if self.http.is_some() {
            return Err(SubjectError::Write(std::io::Error::new(
                std::io::ErrorKind::Unsupported,
                "raw frames are sent over stdio only",
            )));
        }
        let at_ms = self.now_ms();
        let mut line = bytes.to_vec();
        {
            let mut r = self.rec.lock().expect("recorder lock");
            r.messages
                .push(message_entry(&self.name, "client-to-server", at_ms, bytes));
            line.push(b'\n');
            r.stdin.extend_from_slice(&line);
        }
        let stdin = self.stdin.as_mut().ok_or_else(|| {
            SubjectError::Write(std::io::Error::new(
                std::io::ErrorKind::BrokenPipe,
                "stdin already closed",
            ))
        })?;
        stdin.write_all(&line).await.map_err(SubjectError::Write)?;
        stdin.flush().await.map_err(SubjectError::Write)?;
        Ok(at_ms)
    }

    /// Close the subject's stdin (the stdio transport's shutdown signal).
    /// For an HTTP subject this ends the MCP session instead: once the
    /// exchanges in flight are complete, a DELETE with the session id (when the
    /// subject issued one), then the end of the frame stream.
    pub fn close_stdin(&mut self) {
        self.snapshot_open_files();
        if self.http.as_ref().is_some_and(|h| h.shutdown.is_none()) {
            let at = self.now_ms();
            self.event(json!({"event": "http-session-close", "offsetMs": at}));
            let inflight: Vec<_> = self
                .http
                .as_mut()
                .map(|h| h.inflight.drain(..).collect())
                .unwrap_or_default();
            let (client, tx) = {
                let h = self.http.as_ref().expect("an HTTP session");
                (h.client.clone(), h.tx.clone())
            };
            let handle = tokio::spawn(async move {
                // Exchanges still waiting for an answer get a bounded grace;
                // one the subject never answers (a withheld response) is
                // abandoned and its connection dropped.
                let until = tokio::time::Instant::now() + INFLIGHT_GRACE;
                for mut task in inflight {
                    if tokio::time::timeout_at(until, &mut task).await.is_err() {
                        task.abort();
                        client.event(json!({
                            "event": "http-exchange-abandoned",
                            "offsetMs": client.ms(),
                            "reason": "still unanswered when the session ended",
                        }));
                    }
                }
                let has_session = {
                    let s = client.state.lock().expect("http state lock");
                    s.session_id.is_some() && !s.stateless
                };
                if has_session {
                    let out = super::http::Outgoing::delete();
                    let index = client.begin(&out);
                    client.exchange(out, index).await;
                }
                client.close_idle("the MCP session ended");
                let _ = tx.send(Pumped::End);
            });
            if let Some(h) = self.http.as_mut() {
                h.shutdown = Some(handle);
            }
            return;
        }
        if self.stdin.take().is_some() {
            let at = self.now_ms();
            self.event(json!({"event": "stdin-closed", "offsetMs": at}));
        }
    }

    /// Once, at the end of the session (before stdin EOF or the HTTP session
    /// close): record which files the subject's processes hold open, and the
    /// subject's whole process tree (by parent pid, so descendants outside
    /// its group too). The cleanup check later looks for open files under a
    /// temporary directory that outlive the subject.
    fn snapshot_open_files(&mut self) {
        if self.open_files_recorded || self.guard.is_none() {
            return;
        }
        self.open_files_recorded = true;
        let files = proc::open_files(self.pgid());
        let at = self.now_ms();
        self.event(json!({"event": "open-files", "offsetMs": at, "files": files}));
        if let Some(packets) = self
            .stage
            .as_ref()
            .and_then(|s| s.unroutable_packets(self.pid))
        {
            // The subject's own network namespace has loopback only: every
            // packet for any other address found no route (and was counted).
            self.event(json!({"event": "unroutable-packets", "offsetMs": at, "packets": packets}));
        }
        self.record_tree("session-end");
    }

    /// Record the subject's process tree now (lifecycle event `process-tree`).
    fn record_tree(&self, phase: &str) {
        record_tree(
            &self.rec,
            &self.name,
            self.epoch,
            self.pid,
            self.pgid(),
            phase,
        );
    }

    fn event(&self, event: Value) {
        push_event(&self.rec, &self.name, event);
    }

    /// The next frame, or EOF, or the deadline.
    pub async fn next(&mut self, deadline: Instant) -> Next {
        if self.stdout_done {
            return Next::Eof;
        }
        match tokio::time::timeout_at(deadline.into(), self.frames.recv()).await {
            Err(_) => Next::Deadline,
            Ok(Some(Pumped::Frame(frame))) => Next::Frame(frame),
            Ok(Some(Pumped::Unanswered(id))) => Next::Unanswered(id),
            Ok(Some(Pumped::End)) | Ok(None) => {
                self.stdout_done = true;
                self.kill_after_limit();
                Next::Eof
            }
        }
    }

    /// End the session: stdin EOF, up to `grace` for the process to exit on its
    /// own, then SIGKILL to the whole process group (always, to catch
    /// descendants), reap, and measure what is left in the group.
    pub async fn finish(mut self, grace: Duration) -> (Recording, Ended) {
        self.close_stdin();
        // An HTTP server does not exit when its session ends: once the session
        // is closed, it gets a short grace period before the group kill.
        let grace = match self.http.as_mut().and_then(|h| h.shutdown.take()) {
            Some(shutdown) => {
                let _ = tokio::time::timeout(Duration::from_secs(10), shutdown).await;
                Duration::from_millis(200)
            }
            None => grace,
        };
        let (Some(child), Some(mut guard)) = (self.child.take(), self.guard.take()) else {
            // An external server: its session is closed; nothing to signal.
            let end_ms = self.now_ms();
            self.event(json!({"event": "session-ended", "offsetMs": end_ms}));
            let rec = self.rec.lock().expect("recorder lock").clone();
            return (
                rec,
                Ended {
                    exit_code: None,
                    signal: None,
                    exited_on_its_own: false,
                    live_in_group: 0,
                    zombies_in_group: 0,
                    escaped: Vec::new(),
                    temp_left: Vec::new(),
                    sandbox: None,
                    end_ms,
                },
            );
        };
        // The termination sequence runs on a blocking thread: up to `grace`
        // for the process to exit on its own; the tree recorded; SIGKILL to
        // the whole process group (always, to catch descendants); the leader
        // reaped; the group killed again until it is empty (descendants may
        // need a moment to die and be reaped by their reaper), and measured.
        let pgid = guard.pgid();
        let mut leader = SessionLeader {
            child,
            status: None,
            pid: self.pid,
            pgid,
            name: self.name.clone(),
            epoch: self.epoch,
            rec: Arc::clone(&self.rec),
        };
        let ending = Ending {
            own_grace: grace,
            term_grace: None,
            kill_always: true,
            reap_limit: REAP_LIMIT,
            settle_limit: Duration::from_secs(2),
        };
        let (leader, group) = tokio::task::spawn_blocking(move || {
            let group = end::end_group(&mut leader, pgid, ending);
            (leader, group)
        })
        .await
        .expect("the termination sequence does not panic");
        let exited_on_its_own = group.exited_on_its_own;
        let status = leader.status;
        drop(leader);
        use std::os::unix::process::ExitStatusExt;
        let exit_code = status.and_then(|s| s.code());
        let signal = status.and_then(|s| s.signal());
        let at = self.now_ms();
        self.event(json!({"event": "reaped", "offsetMs": at, "exitCode": exit_code, "signal": signal, "exitedOnItsOwn": exited_on_its_own}));
        let members = group.members;
        for pump in self.pumps.drain(..) {
            let _ = tokio::time::timeout(Duration::from_secs(2), pump).await;
        }
        if members == (0, 0) {
            guard.armed = false;
        }
        let at = self.now_ms();
        self.event(json!({"event": "group-measured", "offsetMs": at, "liveProcesses": members.0, "zombies": members.1}));
        // Descendants that left the group survive its kill. In the sandbox,
        // every one of them is in the subject's PID namespace, wherever it
        // moved: listed, then killed with the namespace.
        let in_namespace = match self.stage.take() {
            Some(stage) => {
                let (ended, stage) = tokio::task::spawn_blocking(move || {
                    let ended = stage.end_namespace();
                    (ended, stage)
                })
                .await
                .expect("ending a namespace does not panic");
                self.stage = Some(stage);
                Some(ended)
            }
            None => None,
        };
        if let Some(ns) = &in_namespace {
            let at = self.now_ms();
            let mut e = ns.to_json();
            e["event"] = json!("pid-namespace-ended");
            e["offsetMs"] = json!(at);
            self.event(e);
        }
        // Outside a namespace (or adopted before it ended), the harness has
        // adopted them (child subreaper): record, kill and reap them.
        let swept = end::sweep_async().await;
        let at = self.now_ms();
        self.event(json!({
            "event": "escaped-processes", "offsetMs": at, "adoptsOrphans": proc::tracking(),
            "killed": swept.killed, "exitedBeforeSweep": swept.exited, "remaining": swept.remaining,
        }));
        let mut escaped: Vec<Value> = Vec::new();
        for p in in_namespace.iter().flat_map(|ns| &ns.left) {
            let mut v = p.to_json();
            v["foundIn"] = json!("pid-namespace");
            escaped.push(v);
        }
        // A process found in the namespace and adopted too is counted once.
        let listed: std::collections::BTreeSet<u64> =
            escaped.iter().filter_map(|p| p["pid"].as_u64()).collect();
        escaped.extend(
            swept
                .killed
                .into_iter()
                .chain(swept.remaining)
                .filter(|p| p["pid"].as_u64().is_none_or(|pid| !listed.contains(&pid))),
        );
        // Every entry left in the private temporary directory is a file the
        // subject wrote and did not remove.
        let temp_left = self
            .temp_dir
            .as_deref()
            .map(super::files::walk_entries)
            .unwrap_or_default();
        // Everything in the sandbox's upper layers was written by the subject
        // and left; the stage is then removed from the host.
        let sandbox = self.stage.take().map(|stage| {
            let seen = stage.observe();
            // Removing the stage (dozens of directories, some milliseconds)
            // is off the session's path: on a blocking thread, which the
            // runtime waits for before the run's last cleanup.
            drop(tokio::task::spawn_blocking(move || drop(stage)));
            seen
        });
        if let Some(seen) = &sandbox {
            let at = self.now_ms();
            self.event(json!({"event": "sandbox-measured", "offsetMs": at, "entriesLeft": seen["entriesLeft"], "truncated": seen["truncated"], "scope": seen["scope"]}));
            if let Some(outside) = seen.get("outsideDestinations") {
                // Its own network namespace: every address beyond loopback
                // was local to it, and each one the subject's processes
                // tried was seen on the loopback interface and refused there.
                self.event(json!({"event": "outside-destinations", "offsetMs": at, "destinations": outside}));
            }
        }
        let end_ms = self.now_ms();
        if self.temp_dir.is_some() {
            self.event(
                json!({"event": "temp-dir-measured", "offsetMs": end_ms, "entriesLeft": temp_left}),
            );
        }
        let rec = self.rec.lock().expect("recorder lock").clone();
        (
            rec,
            Ended {
                exit_code,
                signal,
                exited_on_its_own,
                live_in_group: members.0,
                zombies_in_group: members.1,
                escaped,
                temp_left,
                sandbox,
                end_ms,
            },
        )
    }
}

/// How long the leader may take to be reaped after the group kill.
const REAP_LIMIT: Duration = Duration::from_secs(10);

fn push_event(rec: &Mutex<Recording>, session: &str, mut event: Value) {
    event["session"] = json!(session);
    rec.lock().expect("recorder lock").events.push(event);
}

/// Record the subject's process tree now (lifecycle event `process-tree`).
fn record_tree(
    rec: &Mutex<Recording>,
    session: &str,
    epoch: Instant,
    pid: u32,
    pgid: i32,
    phase: &str,
) {
    let tree = proc::subject_tree(pid, pgid);
    let at = ms_since(epoch);
    push_event(
        rec,
        session,
        json!({
            "event": "process-tree", "offsetMs": at, "phase": phase,
            "adoptsOrphans": proc::tracking(), "descendants": tree,
        }),
    );
}

/// A session's subject as the leader of the termination sequence: waited
/// for by polling (the sequence runs on a blocking thread); the tree is
/// recorded before the group kill, and the kill's result after it.
struct SessionLeader {
    child: Child,
    status: Option<std::process::ExitStatus>,
    pid: u32,
    pgid: i32,
    name: String,
    epoch: Instant,
    rec: Arc<Mutex<Recording>>,
}

impl Leader for SessionLeader {
    fn pid(&self) -> u32 {
        self.pid
    }

    fn wait_exit(&mut self, limit: Duration) -> bool {
        let until = Instant::now() + limit;
        let mut backoff = end::Backoff::default();
        loop {
            if self.status.is_some() {
                return true;
            }
            if let Ok(Some(status)) = self.child.try_wait() {
                self.status = Some(status);
                proc::unregister_child(self.pgid.unsigned_abs());
                return true;
            }
            if Instant::now() >= until {
                return false;
            }
            backoff.pause_until(until);
        }
    }

    fn step(&mut self, step: Step<'_>) {
        match step {
            Step::Term => {}
            // Before the kill: descendants outside the group are recorded
            // even if they exit before the sweep.
            Step::Kill => record_tree(
                &self.rec,
                &self.name,
                self.epoch,
                self.pid,
                self.pgid,
                "before-group-kill",
            ),
            Step::Killed(killed) => push_event(
                &self.rec,
                &self.name,
                json!({
                    "event": "group-sigkill", "offsetMs": ms_since(self.epoch), "processGroup": self.pgid,
                    "result": match killed { Ok(true) => "signalled".to_string(), Ok(false) => "no process left".to_string(), Err(e) => format!("error: {e}") },
                }),
            ),
        }
    }
}
