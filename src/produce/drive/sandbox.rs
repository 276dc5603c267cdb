//! The sandbox a subject runs in (spec/harness.md, "The sandbox").
//!
//! A subject mcpres starts is run through `unshare -rmp[n]` (util-linux: a
//! new user namespace in which the caller is root, a new mount namespace, a
//! PID namespace for the caller's children, and a new network namespace,
//! reached through the door of `super::door` for an HTTP subject), which
//! executes this binary's hidden `__sandbox-exec`
//! entry: it sets the mounts up and starts the namespace's first process
//! (`__sandbox-init`, [`init_main`]), which starts the subject as the
//! second. The helper stays the process the driver started (same pid,
//! group and pipes until it lets them go) and stands in for the subject: it
//! names the subject's pid in the stage's `init.json`
//! ([`Stage::subject_pid`]) and ends as the subject ends. The init holds
//! every orphan of the namespace until [`Stage::end_namespace`] lists and
//! kills them.
//!
//! Inside, every directory at the top of the file system (but `/proc`,
//! `/sys` and `/dev`) is an overlay: the host's directory is the read-only
//! lower layer and a fresh directory of the stage (on the host, in the run's
//! scratch directory) the upper layer, so every file the subject creates,
//! changes or deletes anywhere lands in the stage and never on the host.
//! `/dev/shm` is a fresh directory of the stage; the root directory itself is
//! read-only. A directory that cannot be overlaid (one with a mount below it
//! that the user namespace may not reveal) is named in the scope the helper
//! records, never passed over in silence. In a network namespace of its own,
//! loopback is brought up and nothing else exists: the kernel counts every
//! packet it finds no route for, which is how an attempt to reach any other
//! address is seen.
//!
//! After the session, [`Stage::observe`] lists every entry of the upper
//! layers (path as the subject saw it, created or changed, length and
//! SHA-256, never the content; a deleted host file as a whiteout), and the
//! stage is removed.
//!
//! Where namespaces are refused, [`plan`] says why once and the run falls
//! back to the scoped observation it always had; the fallback is recorded in
//! the evidence, and `--sandbox require` refuses to run without it.

use std::ffi::{CString, OsString};
use std::io::Write as _;
use std::os::unix::ffi::OsStrExt as _;
use std::os::unix::fs::{
    FileTypeExt as _, MetadataExt as _, OpenOptionsExt as _, PermissionsExt as _,
};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;

use serde_json::{Value, json};

use super::ident;
use super::proc::{self, Proc};

/// The hidden first argument that makes `mcpres` the sandbox's helper.
pub const EXEC_ARG: &str = "__sandbox-exec";

/// The hidden first argument that makes `mcpres` the first process of a
/// subject's PID namespace (see [`init_main`]).
pub const INIT_ARG: &str = "__sandbox-init";

/// The command name (`/proc/PID/comm`) that first process takes.
pub const INIT_COMM: &str = "mcpres-ns-init";

/// Files up to this size left in the sandbox are hashed; larger ones are
/// recorded with their length only.
pub const HASH_LIMIT: u64 = 16 * 1024 * 1024;

/// At most this many entries of one stage are recorded.
pub const ENTRY_LIMIT: usize = 1000;

/// How long a driver waits for the process standing in for a subject to
/// name the subject's pid (it takes milliseconds; the bound is for a
/// machine under load).
pub const NAMING_LIMIT: std::time::Duration = std::time::Duration::from_secs(20);

/// Top-level directories never overlaid: kernel file systems and devices.
const NOT_OVERLAID: [&str; 3] = ["proc", "sys", "dev"];

/// What the operator asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Mode {
    /// The sandbox where the machine allows it, else the scoped observation
    /// (said once, recorded in the evidence).
    #[default]
    Auto,
    /// The sandbox or no run.
    Require,
    /// No sandbox (recorded in the evidence).
    Off,
}

/// The programs the sandbox is built with.
#[derive(Debug, Clone)]
pub struct Tools {
    unshare: PathBuf,
    exe: PathBuf,
}

/// What each process of a launch is started in: a fresh stage below
/// `stages`, with a network namespace of its own when `own_network`.
#[derive(Debug, Clone)]
pub struct LaunchSandbox {
    pub tools: Tools,
    pub stages: PathBuf,
    pub own_network: bool,
    /// Strings whose occurrences in the files a process leaves are counted
    /// (the credentials a run presents).
    pub watched: Watched,
    /// Controlled faults of the file system, injected into every process of
    /// the launch (recorded in each stage's scope).
    pub faults: Vec<Fault>,
}

/// Secrets whose occurrences in files left in a stage are counted, never
/// stored: each count is keyed by the SHA-256 of the secret.
#[derive(Clone, Default)]
pub struct Watched(std::sync::Arc<std::sync::Mutex<Vec<String>>>);

impl std::fmt::Debug for Watched {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Watched({} secret(s))", self.snapshot().len())
    }
}

impl Watched {
    /// Count `secret` from now on.
    pub fn add(&self, secret: &str) {
        let mut v = self
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if !secret.is_empty() && !v.iter().any(|s| s == secret) {
            v.push(secret.to_string());
        }
    }

    pub fn snapshot(&self) -> Vec<String> {
        self.0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    /// The key a secret's count is stored under.
    pub fn key(secret: &str) -> String {
        crate::json::canonical::sha256_hex(secret.as_bytes())
    }
}

impl LaunchSandbox {
    /// A fresh stage for the next process.
    pub fn stage(&self) -> std::io::Result<Stage> {
        static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(1);
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let mut stage = Stage::create(&self.stages, &format!("p{n}"), self.own_network)?;
        for f in &self.faults {
            stage.inject(f.clone());
        }
        Ok(stage)
    }
}

/// Would `exec` of `program` start? Checked before a sandboxed start, so
/// that a program that is absent or not executable is refused at once with
/// the error `exec` gives (the sandbox's own first program always starts).
pub fn can_execute(program: &Path) -> std::io::Result<()> {
    rustix::fs::access(program, rustix::fs::Access::EXEC_OK).map_err(std::io::Error::from)?;
    if std::fs::metadata(program)?.is_dir() {
        return Err(std::io::Error::from(std::io::ErrorKind::PermissionDenied));
    }
    Ok(())
}

/// What a run's subjects are started in, decided once per run.
#[derive(Debug, Clone)]
pub enum Plan {
    Sandbox(Tools),
    /// No sandbox: why, and whether the operator chose it.
    Scoped {
        reason: String,
        chosen: bool,
    },
}

impl Plan {
    /// The sandbox's tools, when there is one.
    pub fn tools(&self) -> Option<&Tools> {
        match self {
            Plan::Sandbox(t) => Some(t),
            Plan::Scoped { .. } => None,
        }
    }

    /// What the evidence says about where the subject ran.
    pub fn to_json(&self) -> Value {
        match self {
            Plan::Sandbox(_) => json!({
                "sandboxed": true,
                "namespaces": ["user", "mount", "network (an HTTP subject reached through its door; the OAuth runner's subjects share the runner's own)", "pid (every process the subject starts)"],
                "filesystem": "every top-level directory but /proc, /sys and /dev is an overlay whose upper layer mcpres lists and hashes after each session and then removes; /dev/shm is private; the root directory itself is read-only",
            }),
            Plan::Scoped { reason, chosen } => json!({
                "sandboxed": false,
                "reason": reason,
                "chosenByOperator": chosen,
                "filesystem": "scoped: only the session's temporary directory and the top level of the working directory are observed",
            }),
        }
    }
}

/// Decide, once per run, what the subjects run in.
pub fn plan(mode: Mode) -> Result<Plan, String> {
    match mode {
        Mode::Off => Ok(Plan::Scoped {
            reason: "the operator turned the sandbox off (--sandbox off)".into(),
            chosen: true,
        }),
        Mode::Auto => Ok(match available() {
            Ok(t) => Plan::Sandbox(t.clone()),
            Err(reason) => Plan::Scoped {
                reason,
                chosen: false,
            },
        }),
        Mode::Require => available().map(|t| Plan::Sandbox(t.clone())).map_err(|e| {
            format!("the sandbox was required (--sandbox require) but cannot be built here: {e}")
        }),
    }
}

static AVAILABLE: OnceLock<Result<Tools, String>> = OnceLock::new();

/// Start finding out whether the sandbox can be built here ([`available`])
/// on a thread of its own, unless `mode` is `off`: a caller with other
/// work to do before it asks [`plan`] does not wait for the check alone.
pub fn warm(mode: Mode) {
    if mode != Mode::Off && AVAILABLE.get().is_none() {
        std::thread::spawn(|| {
            let _ = available();
        });
    }
}

/// Can subjects run in the sandbox here? Tried for real, once per process: a
/// stage is built, `/bin/sh` writes a file to `/tmp` inside it, and the file
/// must be in the stage's upper layer and not on the host.
pub fn available() -> Result<&'static Tools, String> {
    AVAILABLE
        .get_or_init(try_build)
        .as_ref()
        .map_err(Clone::clone)
}

fn try_build() -> Result<Tools, String> {
    let exe = std::env::current_exe().map_err(|e| format!("cannot find mcpres itself: {e}"))?;
    tools_with(&exe)
}

/// [`available`], uncached, with `exe` as the `mcpres` binary whose
/// `__sandbox-exec` sets the mounts up (for a library caller, such as a test,
/// that is not itself that binary).
pub fn tools_with(exe: &Path) -> Result<Tools, String> {
    let unshare = find_tool("unshare").ok_or("`unshare` (util-linux) is not installed")?;
    let exe = exe.to_path_buf();
    let tools = Tools { unshare, exe };
    // Named by this process's pid and start time, so that a later process
    // removes what a process killed during its check (SIGKILL) left.
    remove_stale_probes(&std::env::temp_dir());
    let me = std::process::id();
    let parent = std::env::temp_dir().join(format!(
        "{PROBE_PREFIX}{me}-{}-{}",
        proc::start_time(me).unwrap_or(0),
        ident::random_hex(6)
    ));
    std::fs::create_dir(&parent).map_err(|e| format!("cannot create {}: {e}", parent.display()))?;
    let result = (|| {
        let stage = Stage::create(&parent, "probe", true)
            .map_err(|e| format!("cannot prepare a stage: {e}"))?;
        let name = format!("mcpres-sandbox-probe-{}", ident::random_hex(6));
        let (program, args) = stage.wrap(
            &tools,
            Path::new("/bin/sh"),
            &["-c".into(), format!(": > /tmp/{name}")],
        );
        let out = Command::new(program)
            .args(args)
            .env_clear()
            .current_dir("/")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .output()
            .map_err(|e| format!("cannot run {}: {e}", tools.unshare.display()))?;
        let landed = stage.upper().join("tmp").join(&name).is_file();
        // What could not be overlaid here is not tried again by later stages.
        if let Some(mut scope) = std::fs::read(stage.root.join("report").join("scope.json"))
            .ok()
            .and_then(|b| serde_json::from_slice::<Value>(&b).ok())
        {
            stage.learn_and_name_skipped(&mut scope);
        }
        let leaked = Path::new("/tmp").join(&name);
        if leaked.exists() {
            let _ = std::fs::remove_file(&leaked);
            return Err("a file written inside reached the host's /tmp".to_string());
        }
        if out.status.success() && landed {
            Ok(())
        } else {
            let why = String::from_utf8_lossy(&out.stderr);
            Err(format!(
                "user and mount namespaces with overlay mounts are refused here ({})",
                why.trim().lines().next().unwrap_or("no reason given")
            ))
        }
    })();
    force_remove(&parent);
    result.map(|()| tools)
}

/// The name of an availability check's directory in the temporary
/// directory: `mcpres-sandbox-probe-PID-START-RANDOM`.
const PROBE_PREFIX: &str = "mcpres-sandbox-probe-";

/// Remove the availability-check directories in `tmp` whose process (by
/// pid and start time in the name) is gone: it was killed before it could.
/// Nothing else is touched.
fn remove_stale_probes(tmp: &Path) {
    let Ok(entries) = std::fs::read_dir(tmp) else {
        return;
    };
    for e in entries.flatten() {
        let name = e.file_name();
        let Some(rest) = name.to_str().and_then(|n| n.strip_prefix(PROBE_PREFIX)) else {
            continue;
        };
        let mut it = rest.split('-');
        let (Some(Ok(pid)), Some(Ok(start)), Some(random), None) = (
            it.next().map(str::parse::<u32>),
            it.next().map(str::parse::<u64>),
            it.next(),
            it.next(),
        ) else {
            continue;
        };
        if random.len() != 12 || !random.bytes().all(|b| b.is_ascii_hexdigit()) {
            continue;
        }
        let owned = e
            .metadata()
            .is_ok_and(|m| m.is_dir() && m.uid() == rustix::process::geteuid().as_raw());
        if owned && proc::start_time(pid) != Some(start) {
            force_remove(&e.path());
        }
    }
}

/// `name` as an executable file: in `PATH`, else in the system directories
/// (`ip` lives in `/usr/sbin`, often not in an unprivileged user's `PATH`).
pub fn find_tool(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain(["/usr/sbin", "/sbin", "/usr/bin", "/bin"].map(PathBuf::from))
        .map(|d| d.join(name))
        .find(|p| {
            std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        })
}

/// One session's sandbox on the host: the upper and work directories of
/// every overlay, the private `/dev/shm`, and what the helper reported.
/// Removed when dropped.
#[derive(Debug)]
pub struct Stage {
    root: PathBuf,
    /// Host directories the subject writes through to, unchanged (the
    /// harness's injection journals).
    through: Vec<PathBuf>,
    /// The top-level directories given an overlay.
    dirs: Vec<String>,
    /// Top-level directories not given one: an earlier stage of this
    /// process could not overlay them (name, the kernel's reason then).
    skipped: Vec<(String, String)>,
    /// A network namespace of its own.
    net: bool,
    /// Empty top-level directories of the root file system, left to be
    /// read-only with it.
    read_only: Vec<String>,
    /// Controlled faults of the file system.
    faults: Vec<Fault>,
    /// The PID namespace was ended ([`Stage::end_namespace`]).
    namespace_ended: std::sync::atomic::AtomicBool,
    /// Prepared ahead ([`Stage::hold`]): the driver's end of the stage's
    /// `report/go` FIFO; the namespace's init starts the subject once
    /// [`Stage::let_go`] writes to it. Open (for reading and writing) as
    /// long as the stage lives, so what is written stays readable however
    /// late the init opens it; closed unwritten, the init reads end of file
    /// and ends without starting anything.
    go: Option<std::fs::File>,
}

/// What [`Stage::let_go`] writes.
const GO_WORD: &[u8] = b"go\n";

/// The FIFO a held stage's helper waits on, in its report directory.
const GO_FILE: &str = "go";

/// What ending a subject's PID namespace found.
#[derive(Debug, Clone, Default)]
pub struct NamespaceEnd {
    /// The init's pid, as the host sees it (`None`: no namespace was made).
    pub init: Option<u32>,
    /// The processes still alive in the namespace when it was ended (the
    /// init apart): left behind by the subject, wherever they moved (a
    /// session or group of their own), then killed with the namespace.
    pub left: Vec<Proc>,
    /// The namespace's init was gone before it was ended (its processes
    /// went with it).
    pub init_gone: bool,
}

impl NamespaceEnd {
    /// The record in the evidence.
    pub fn to_json(&self) -> Value {
        json!({
            "initPid": self.init,
            "initGoneBefore": self.init_gone,
            "left": self.left.iter().map(Proc::to_json).collect::<Vec<_>>(),
        })
    }
}

/// A file-system fault the sandbox injects, deterministic and recorded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Fault {
    /// An existing directory becomes an empty file system of `bytes` bytes
    /// (tmpfs `size=`): a write past it fails with "no space left on device".
    /// With `bytes` 0 it has no room at all: one page and no inode free, so
    /// creating any file there fails with "no space left on device".
    DiskFull { dir: PathBuf, bytes: u64 },
    /// An existing path becomes read-only: a write fails with "read-only file
    /// system".
    ReadOnly { path: PathBuf },
}

impl Stage {
    /// Prepare `<parent>/<name>`: an upper and a work directory for every
    /// top-level directory but `/proc`, `/sys` and `/dev`, and an empty
    /// `/dev/shm`. With `net`, the subject gets a network namespace of its
    /// own (loopback only).
    pub fn create(parent: &Path, name: &str, net: bool) -> std::io::Result<Stage> {
        Self::create_through(parent, name, net, &[])
    }

    /// [`Stage::create`], with `through`: host directories (absolute, no
    /// overlay-option characters) the subject sees and writes as they are.
    pub fn create_through(
        parent: &Path,
        name: &str,
        net: bool,
        through: &[PathBuf],
    ) -> std::io::Result<Stage> {
        let root = std::path::absolute(parent.join(name))?;
        let text = root.as_os_str().as_bytes();
        if text
            .iter()
            .any(|b| matches!(b, b',' | b':' | b'\\') || b.is_ascii_whitespace())
        {
            return Err(std::io::Error::other(format!(
                "the stage path {} cannot be named in overlay options",
                root.display()
            )));
        }
        std::fs::create_dir_all(&root)?;
        let mut dirs = Vec::new();
        let mut read_only = Vec::new();
        let mut skipped = Vec::new();
        let root_dev = std::fs::metadata("/")?.dev();
        for entry in std::fs::read_dir("/")?.flatten() {
            let Some(name) = entry.file_name().to_str().map(str::to_string) else {
                continue;
            };
            if NOT_OVERLAID.contains(&name.as_str())
                || name.contains([',', ':', '\\'])
                || !entry.file_type().is_ok_and(|t| t.is_dir())
            {
                continue;
            }
            // An empty directory of the root file system itself needs no
            // overlay: it is read-only with the root (each overlay costs the
            // session a mount).
            let path = entry.path();
            let empty = std::fs::read_dir(&path).is_ok_and(|mut d| d.next().is_none());
            if empty && std::fs::metadata(&path).is_ok_and(|m| m.dev() == root_dev) {
                read_only.push(format!("/{name}"));
                continue;
            }
            if let Some(why) = not_overlaid_here(&name) {
                skipped.push((name, why));
                continue;
            }
            dirs.push(name);
        }
        dirs.sort();
        read_only.sort();
        for d in &dirs {
            std::fs::create_dir_all(root.join("upper").join(d))?;
            std::fs::create_dir_all(root.join("work").join(d))?;
        }
        std::fs::create_dir_all(root.join("shm"))?;
        std::fs::create_dir_all(root.join("report"))?;
        let through = through
            .iter()
            .map(std::path::absolute)
            .collect::<std::io::Result<Vec<_>>>()?;
        Ok(Stage {
            root,
            through,
            read_only,
            dirs,
            skipped,
            net,
            faults: Vec::new(),
            namespace_ended: std::sync::atomic::AtomicBool::new(false),
            go: None,
        })
    }

    /// Prepare this stage ahead of its session: the helper started from
    /// [`Stage::wrap`] sets everything up (mounts, network, watch, door) and
    /// starts the namespace's init, which waits on the stage's `report/go`
    /// FIFO; the subject is started only once [`Stage::let_go`] is called.
    /// Call before [`Stage::wrap`].
    pub fn hold(&mut self) -> std::io::Result<()> {
        let path = self.root.join("report").join(GO_FILE);
        rustix::fs::mknodat(
            rustix::fs::CWD,
            &path,
            rustix::fs::FileType::Fifo,
            rustix::fs::Mode::from_raw_mode(0o600),
            0,
        )?;
        // Read and write: opening never blocks, the init's reads block
        // (rather than end) until this end writes or is closed, and a write
        // cannot fail for want of a reader.
        let fifo = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(&path)?;
        self.go = Some(fifo);
        Ok(())
    }

    /// Let a held stage's subject start ([`Stage::hold`]).
    pub fn let_go(&self) -> std::io::Result<()> {
        match &self.go {
            Some(fifo) => {
                let mut fifo: &std::fs::File = fifo;
                fifo.write_all(GO_WORD)
            }
            None => Ok(()),
        }
    }

    /// Inject `fault` into every process started in this stage (recorded in
    /// the scope as `injected`, or, when it could not be, in `notInjected`).
    pub fn inject(&mut self, fault: Fault) {
        self.faults.push(fault);
    }

    fn upper(&self) -> PathBuf {
        self.root.join("upper")
    }

    /// Has the subject a network namespace of its own?
    pub fn own_network(&self) -> bool {
        self.net
    }

    /// Where `addr` inside the subject's network namespace is reached from
    /// here: through the namespace's door, or directly when the subject
    /// shares this process's namespace.
    pub fn endpoint(&self, addr: std::net::SocketAddr) -> super::door::Endpoint {
        if self.net {
            super::door::Endpoint::through(
                addr,
                &self.root.join("report").join(super::door::DOOR_FILE),
            )
        } else {
            super::door::Endpoint::direct(addr)
        }
    }

    /// The program and arguments that run `program` with `args` in this
    /// stage (the working directory is the caller's).
    pub fn wrap(&self, tools: &Tools, program: &Path, args: &[String]) -> (PathBuf, Vec<OsString>) {
        // `-p` without `--fork`: `unshare` and the helper stay where they
        // are (same process), and the first process the helper starts, the
        // namespace's init, is the first of a new PID namespace that every
        // later descendant of the subject joins.
        let mut argv: Vec<OsString> = vec![if self.net { "-rmnp" } else { "-rmp" }.into()];
        argv.push("--".into());
        argv.push(tools.exe.clone().into_os_string());
        argv.push(EXEC_ARG.into());
        argv.push("--stage".into());
        argv.push(self.root.clone().into_os_string());
        argv.push("--cwd".into());
        argv.push(
            std::env::current_dir()
                .unwrap_or_else(|_| PathBuf::from("/"))
                .into_os_string(),
        );
        for dir in &self.through {
            argv.push("--through".into());
            argv.push(dir.clone().into_os_string());
        }
        for fault in &self.faults {
            match fault {
                Fault::DiskFull { dir, bytes } => {
                    argv.push("--disk-full".into());
                    argv.push(dir.clone().into_os_string());
                    argv.push(bytes.to_string().into());
                }
                Fault::ReadOnly { path } => {
                    argv.push("--read-only".into());
                    argv.push(path.clone().into_os_string());
                }
            }
        }
        if self.net {
            argv.push("--loopback".into());
        }
        if self.go.is_some() {
            argv.push("--await-go".into());
        }
        // The process the namespace's init watches: this one, named here, where it
        // is known (the helper's parent may already be gone, and another process
        // adopted it, by the time the helper asks).
        let me = std::process::id();
        if let Some(start) = proc::start_time(me) {
            argv.push("--driver".into());
            argv.push(me.to_string().into());
            argv.push(start.to_string().into());
        }
        argv.push("--".into());
        argv.push(program.as_os_str().to_owned());
        argv.extend(args.iter().map(OsString::from));
        (tools.unshare.clone(), argv)
    }

    /// What the subject left: every entry of the upper layers and of the
    /// private `/dev/shm` (`path` as the subject saw it, `kind`, `change`,
    /// `bytes`, `sha256`), CPython's bytecode of host sources apart
    /// (`runtimeCaches`), and the scope the helper reported.
    pub fn observe(&self) -> Value {
        self.observe_watching(&[])
    }

    /// [`Stage::observe`], and for each file that holds one of `watched`,
    /// `watched: {SHA-256 of the secret: occurrences}` (never the bytes).
    pub fn observe_watching(&self, watched: &[String]) -> Value {
        let mut entries = Vec::new();
        let mut truncated = false;
        for d in &self.dirs {
            walk(
                &self.upper().join(d),
                &format!("/{d}"),
                &mut entries,
                &mut truncated,
            );
        }
        walk(
            &self.root.join("shm"),
            "/dev/shm",
            &mut entries,
            &mut truncated,
        );
        for e in entries.iter_mut() {
            let Some(host) = e
                .as_object_mut()
                .and_then(|o| o.remove("hostPath"))
                .and_then(|h| h.as_str().map(PathBuf::from))
            else {
                continue;
            };
            if watched.is_empty() {
                continue;
            }
            let Ok(bytes) = std::fs::read(&host) else {
                continue;
            };
            let counts: serde_json::Map<String, Value> = watched
                .iter()
                .filter_map(|w| {
                    let n = occurrences(&bytes, w.as_bytes());
                    (n > 0).then(|| (Watched::key(w), json!(n)))
                })
                .collect();
            if !counts.is_empty() {
                e["watched"] = Value::Object(counts);
            }
        }
        entries.sort_by(|a, b| {
            crate::json::canonical::cmp_utf16(
                a["path"].as_str().unwrap_or(""),
                b["path"].as_str().unwrap_or(""),
            )
        });
        let mut scope = std::fs::read(self.root.join("report").join("scope.json"))
            .ok()
            .and_then(|b| serde_json::from_slice::<Value>(&b).ok())
            .unwrap_or_else(|| json!({"reported": false}));
        if scope["reported"] == true {
            scope["readOnlyWithRoot"] = json!(self.read_only);
            self.learn_and_name_skipped(&mut scope);
        }
        let (caches, left): (Vec<Value>, Vec<Value>) = entries
            .into_iter()
            .partition(|e| e.get("runtimeCache").is_some());
        let mut seen = json!({"entriesLeft": left, "runtimeCaches": caches, "truncated": truncated, "scope": scope});
        if let Some(outside) = self.outside_destinations() {
            seen["outsideDestinations"] = outside;
        }
        seen
    }

    /// Remember every top-level directory this stage could not overlay (a
    /// later stage of this process does not try again: each refused
    /// overlay costs the session milliseconds), and name the directories
    /// this stage did not try in the scope's `notCovered`, with the reason
    /// of the stage that found it.
    fn learn_and_name_skipped(&self, scope: &mut Value) {
        if let Some(list) = scope["notCovered"].as_array() {
            let mut known = NOT_OVERLAID_HERE
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            for e in list {
                let (Some(path), Some(why)) = (e["path"].as_str(), e["why"].as_str()) else {
                    continue;
                };
                if let Some(d) = path.strip_prefix('/')
                    && self.dirs.iter().any(|x| x == d)
                {
                    known
                        .entry(d.to_string())
                        .or_insert_with(|| why.to_string());
                }
            }
        }
        if self.skipped.is_empty() {
            return;
        }
        if !scope["notCovered"].is_array() {
            scope["notCovered"] = json!([]);
        }
        if let Some(list) = scope["notCovered"].as_array_mut() {
            for (d, why) in &self.skipped {
                list.push(json!({
                    "path": format!("/{d}"),
                    "why": format!("{why} (at an earlier stage of this process; not tried again)"),
                }));
            }
        }
    }

    /// How many packets the kernel found no route for in the subject's own
    /// network namespace (attempts to reach anything but loopback), read
    /// while process `pid` lives; `None` without a namespace of its own.
    pub fn unroutable_packets(&self, pid: u32) -> Option<Value> {
        if !self.net {
            return None;
        }
        let v4 = std::fs::read_to_string(format!("/proc/{pid}/net/snmp"))
            .ok()
            .and_then(|t| snmp_field(&t, "Ip:", "OutNoRoutes"));
        let v6 = std::fs::read_to_string(format!("/proc/{pid}/net/snmp6"))
            .ok()
            .and_then(|t| {
                t.lines().find_map(|l| {
                    let mut it = l.split_whitespace();
                    (it.next() == Some("Ip6OutNoRoutes"))
                        .then(|| it.next()?.parse::<u64>().ok())
                        .flatten()
                })
            });
        Some(json!({"ipv4": v4, "ipv6": v6}))
    }
}

impl Stage {
    /// Every destination beyond loopback the subject's processes tried while
    /// the subject lived (`protocol`, `address`, `port`; at most
    /// 256), as the process standing in for it saw them on the namespace's
    /// loopback interface; `None` without a network namespace of its own.
    /// Read after the session.
    pub fn outside_destinations(&self) -> Option<Value> {
        if !self.net {
            return None;
        }
        let text = std::fs::read_to_string(self.root.join("report").join("outside.jsonl"))
            .unwrap_or_default();
        // The helper named them while the subject lived, the init after
        // (each from its own start): each once, in the order first named.
        let mut list: Vec<Value> = Vec::new();
        for v in text
            .lines()
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        {
            if list.len() < OUTSIDE_LIMIT && !list.contains(&v) {
                list.push(v);
            }
        }
        Some(json!(list))
    }

    /// The namespace's init, as the helper reported it (pid, start time).
    fn init(&self) -> Option<(u32, u64)> {
        let text = std::fs::read(self.root.join("report").join("init.json")).ok()?;
        let v: Value = serde_json::from_slice(&text).ok()?;
        Some((
            u32::try_from(v["pid"].as_u64()?).ok()?,
            v["start"].as_u64()?,
        ))
    }

    /// The subject's pid (as the host sees it), once the process standing
    /// in for it (`leader`, the one mcpres started) has named it; `leader`
    /// itself when this stage has no PID namespace, or when the subject
    /// could not be started (the stand-in then ends at once). Waits at
    /// most `limit`.
    pub fn subject_pid(&self, leader: u32, limit: std::time::Duration) -> u32 {
        let until = std::time::Instant::now() + limit;
        loop {
            let named = std::fs::read(self.root.join("report").join("init.json"))
                .ok()
                .and_then(|t| serde_json::from_slice::<Value>(&t).ok());
            if let Some(v) = named {
                return v["subject"]
                    .as_u64()
                    .and_then(|p| u32::try_from(p).ok())
                    .unwrap_or(leader);
            }
            if proc::read(leader).is_none_or(|p| p.zombie()) || std::time::Instant::now() >= until {
                return leader;
            }
            std::thread::sleep(std::time::Duration::from_micros(250));
        }
    }

    /// The processes alive in the subject's PID namespace right now (its
    /// init apart): every descendant the subject still has, wherever it
    /// moved. Empty without a namespace.
    pub fn namespace_members(&self) -> Vec<Proc> {
        let Some((pid, start)) = self.init() else {
            return Vec::new();
        };
        if proc::start_time(pid) != Some(start) {
            return Vec::new();
        }
        proc::pid_namespace_members(pid)
            .into_iter()
            .filter(|p| !p.zombie())
            .collect()
    }

    /// End the subject's PID namespace, once: list the processes alive in
    /// it (the init apart), then kill its init, which makes the kernel kill
    /// every one of them, and reap the init where it is this process's
    /// child by now (the subject, its parent, has ended and this process
    /// adopts orphans). Called after the subject itself has ended.
    pub fn end_namespace(&self) -> NamespaceEnd {
        use std::sync::atomic::Ordering;
        if self.namespace_ended.swap(true, Ordering::SeqCst) {
            return NamespaceEnd::default();
        }
        reap_ended_inits();
        let Some((pid, start)) = self.init() else {
            return NamespaceEnd::default();
        };
        if proc::start_time(pid) != Some(start) || proc::read(pid).is_none_or(|p| p.zombie()) {
            return NamespaceEnd {
                init: Some(pid),
                left: Vec::new(),
                init_gone: true,
            };
        }
        let Some(ns) = proc::pid_namespace(pid) else {
            return NamespaceEnd {
                init: Some(pid),
                left: Vec::new(),
                init_gone: true,
            };
        };
        let left: Vec<Proc> = proc::in_pid_namespace(&ns, pid)
            .into_iter()
            .filter(|p| !p.zombie())
            .collect();
        super::end::signal(pid, rustix::process::Signal::KILL);
        ENDED_INITS
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .push((pid, start));
        // Killed, the init ends for certain, but only once every process of
        // its namespace is reaped and its mounts are torn down, which a
        // loaded machine can make slow: waited for generously.
        let until = std::time::Instant::now() + ENDING_LIMIT;
        let me = std::process::id();
        if left.is_empty() {
            // Nothing the subject started was alive: the init ends alone
            // (its namespaces torn down, what it holds released), which a
            // session need not wait for; it is reaped by a later session's
            // end, or by this process's parent once this process is gone.
            for p in proc::in_pid_namespace(&ns, pid) {
                if p.zombie() && p.ppid == me {
                    reap(p.pid);
                }
            }
            PENDING_INITS
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .push((pid, start));
            reap_ended_inits();
            return NamespaceEnd {
                init: Some(pid),
                left,
                init_gone: false,
            };
        }
        loop {
            // The init ends only once every process of its namespace is
            // reaped: those this process adopted (children of the subject,
            // which it outlived) are reaped here, as they die.
            for p in proc::in_pid_namespace(&ns, pid) {
                if p.zombie() && p.ppid == me {
                    reap(p.pid);
                }
            }
            // Reaped here (an adopted child), or gone, or a zombie another
            // process reaps.
            let reaped = reap(pid);
            let now = proc::read(pid).filter(|_| proc::start_time(pid) == Some(start));
            let done = reaped || now.as_ref().is_none_or(|p| p.zombie() && p.ppid != me);
            if done || std::time::Instant::now() >= until {
                break;
            }
            std::thread::sleep(std::time::Duration::from_micros(250));
        }
        NamespaceEnd {
            init: Some(pid),
            left,
            init_gone: false,
        }
    }
}

/// The namespace inits [`Stage::end_namespace`] killed (pid, start time):
/// one still ending is recognised as what it is ([`was_ended_init`]), not
/// taken for a process the subject left.
static ENDED_INITS: std::sync::Mutex<Vec<(u32, u64)>> = std::sync::Mutex::new(Vec::new());

/// Top-level directories a stage of this process could not overlay (name,
/// the kernel's reason): later stages leave them as they are.
static NOT_OVERLAID_HERE: std::sync::Mutex<std::collections::BTreeMap<String, String>> =
    std::sync::Mutex::new(std::collections::BTreeMap::new());

/// Why top-level directory `name` cannot be overlaid, when a stage of this
/// process found that it cannot.
fn not_overlaid_here(name: &str) -> Option<String> {
    NOT_OVERLAID_HERE
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .get(name)
        .cloned()
}

/// How long [`Stage::end_namespace`] waits for the killed init to end.
const ENDING_LIMIT: std::time::Duration = std::time::Duration::from_secs(10);

/// Inits [`Stage::end_namespace`] killed without waiting for their end
/// (pid, start time), each reaped once it has ended.
static PENDING_INITS: std::sync::Mutex<Vec<(u32, u64)>> = std::sync::Mutex::new(Vec::new());

/// Reap `pid` if it is this process's child and has ended.
fn reap(pid: u32) -> bool {
    i32::try_from(pid)
        .ok()
        .and_then(rustix::process::Pid::from_raw)
        .is_some_and(|p| {
            rustix::process::waitpid(Some(p), rustix::process::WaitOptions::NOHANG)
                .is_ok_and(|r| r.is_some())
        })
}

/// Reap every init killed earlier that has ended by now; forget those gone.
fn reap_ended_inits() {
    let me = std::process::id();
    let mut pending = PENDING_INITS
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    pending.retain(|&(pid, start)| {
        let Some(p) = proc::read(pid).filter(|_| proc::start_time(pid) == Some(start)) else {
            return false;
        };
        if p.ppid != me {
            // Another process's child (the stand-in may not have ended
            // yet): its parent reaps it.
            return !p.zombie();
        }
        !(p.zombie() && reap(pid))
    });
}

/// Is process `pid`, started at `start`, a namespace init that
/// [`Stage::end_namespace`] killed?
pub fn was_ended_init(pid: u32, start: u64) -> bool {
    ENDED_INITS
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .contains(&(pid, start))
}

impl Drop for Stage {
    fn drop(&mut self) {
        self.end_namespace();
        force_remove(&self.root);
    }
}

/// How often `needle` occurs in `hay` (overlapping matches not counted twice).
fn occurrences(hay: &[u8], needle: &[u8]) -> usize {
    if needle.is_empty() || hay.len() < needle.len() {
        return 0;
    }
    let mut n = 0;
    let mut i = 0;
    while i + needle.len() <= hay.len() {
        if &hay[i..i + needle.len()] == needle {
            n += 1;
            i += needle.len();
        } else {
            i += 1;
        }
    }
    n
}

/// `field` of the `prefix` table in `/proc/net/snmp` (a header line and a
/// value line).
fn snmp_field(text: &str, prefix: &str, field: &str) -> Option<u64> {
    let mut lines = text.lines().filter(|l| l.starts_with(prefix));
    let header = lines.next()?;
    let values = lines.next()?;
    let at = header.split_whitespace().position(|h| h == field)?;
    values.split_whitespace().nth(at)?.parse().ok()
}

/// Record every entry under `dir` (an upper layer shown at `shown`).
fn walk(dir: &Path, shown: &str, out: &mut Vec<Value>, truncated: &mut bool) {
    let mut stack = vec![(dir.to_path_buf(), shown.to_string())];
    while let Some((d, seen_as)) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for entry in entries.flatten() {
            if out.len() >= ENTRY_LIMIT {
                *truncated = true;
                return;
            }
            let path = entry.path();
            let Ok(meta) = std::fs::symlink_metadata(&path) else {
                continue;
            };
            let name = entry.file_name();
            let as_seen = format!("{seen_as}/{}", name.to_string_lossy());
            let on_host = std::fs::symlink_metadata(&as_seen).ok();
            let change = if on_host.is_some() {
                "changed"
            } else {
                "created"
            };
            let kind = meta.file_type();
            if kind.is_char_device() && meta.rdev() == 0 {
                // A whiteout: the subject removed a file of the host's (the
                // host's file is untouched).
                out.push(json!({"path": as_seen, "kind": "removed"}));
            } else if kind.is_dir() {
                if !on_host.is_some_and(|m| m.is_dir()) {
                    let mut v = json!({"path": as_seen, "kind": "directory", "change": change});
                    if name == "__pycache__" && only_bytecode(&path, &as_seen) {
                        v["runtimeCache"] = json!("python-bytecode");
                    }
                    out.push(v);
                }
                stack.push((path, as_seen));
            } else if kind.is_file() {
                let mut v =
                    json!({"path": as_seen, "kind": "file", "change": change, "bytes": meta.len()});
                if python_bytecode_of_host_source(&path, &as_seen) {
                    v["runtimeCache"] = json!("python-bytecode");
                }
                if meta.len() <= HASH_LIMIT
                    && let Ok((sha, _)) = ident::hash_file(&path)
                {
                    v["sha256"] = json!(sha);
                    // Where it lies in the stage, while the stage exists
                    // (taken out before anything is returned).
                    v["hostPath"] = json!(path.display().to_string());
                }
                out.push(v);
            } else if kind.is_symlink() {
                out.push(json!({"path": as_seen, "kind": "symlink", "change": change}));
            } else {
                out.push(json!({"path": as_seen, "kind": "other", "change": change}));
            }
        }
    }
}

/// Is `file` (seen by the subject at `as_seen`) CPython's compiled form of
/// a source file that exists on the host: `D/__pycache__/NAME.TAG.pyc`
/// beside `D/NAME.py`, whose header (flags 0) names that source's
/// modification time and length? Such a file is what the interpreter writes
/// by itself for code it imports: listed, never counted as residue.
fn python_bytecode_of_host_source(file: &Path, as_seen: &str) -> bool {
    let seen = Path::new(as_seen);
    let (Some(cache_dir), Some(name)) = (seen.parent(), seen.file_name().and_then(|n| n.to_str()))
    else {
        return false;
    };
    if cache_dir.file_name().and_then(|n| n.to_str()) != Some("__pycache__") {
        return false;
    }
    let Some((stem, _tag)) = name.strip_suffix(".pyc").and_then(|n| n.rsplit_once('.')) else {
        return false;
    };
    let Some(source_dir) = cache_dir.parent() else {
        return false;
    };
    let Ok(source) = std::fs::metadata(source_dir.join(format!("{stem}.py"))) else {
        return false;
    };
    let mut header = [0u8; 16];
    let read = std::fs::File::open(file).and_then(|mut f| {
        use std::io::Read as _;
        f.read_exact(&mut header)
    });
    if read.is_err() {
        return false;
    }
    let word = |at: usize| {
        u32::from_le_bytes([header[at], header[at + 1], header[at + 2], header[at + 3]])
    };
    // A CPython magic number ends in "\r\n"; flags 0 is the timestamp form.
    header[2..4] == *b"\r\n"
        && word(4) == 0
        && i64::from(word(8)) == source.mtime() & 0xffff_ffff
        && u64::from(word(12)) == source.len() & 0xffff_ffff
}

/// Does the new directory `dir` (seen at `as_seen`) hold only CPython
/// bytecode of host sources?
fn only_bytecode(dir: &Path, as_seen: &str) -> bool {
    std::fs::read_dir(dir).is_ok_and(|entries| {
        entries.flatten().all(|e| {
            let shown = format!("{as_seen}/{}", e.file_name().to_string_lossy());
            e.file_type().is_ok_and(|t| t.is_file())
                && python_bytecode_of_host_source(&e.path(), &shown)
        })
    })
}

/// Remove `dir` and everything in it, making directories searchable first
/// where the subject (or the overlay's own work directory) left them closed.
pub fn force_remove(dir: &Path) {
    if std::fs::remove_dir_all(dir).is_ok() || !dir.exists() {
        return;
    }
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let _ = std::fs::set_permissions(&d, std::fs::Permissions::from_mode(0o700));
        if let Ok(entries) = std::fs::read_dir(&d) {
            for e in entries.flatten() {
                if e.file_type().is_ok_and(|t| t.is_dir()) {
                    stack.push(e.path());
                }
            }
        }
    }
    let _ = std::fs::remove_dir_all(dir);
}

/// The helper, run as `mcpres __sandbox-exec --stage DIR --cwd DIR [--ip
/// IP] -- PROGRAM ARGS...` inside the namespaces `unshare` made: set the
/// mounts up, report what was covered to `<stage>/scope.json`, and execute
/// PROGRAM in place. Returns only when it cannot (the exit status).
pub fn exec_main(args: &[OsString]) -> u8 {
    let mut stage: Option<PathBuf> = None;
    let mut cwd: Option<PathBuf> = None;
    let mut loopback = false;
    let mut await_go = false;
    let mut through: Vec<PathBuf> = Vec::new();
    let mut faults: Vec<Fault> = Vec::new();
    let mut driver: Option<(u32, u64)> = None;
    let mut it = args.iter();
    let mut program: Option<&OsString> = None;
    while let Some(a) = it.next() {
        match a.to_str() {
            Some("--stage") => stage = it.next().map(PathBuf::from),
            Some("--cwd") => cwd = it.next().map(PathBuf::from),
            Some("--loopback") => loopback = true,
            Some("--await-go") => await_go = true,
            Some("--through") => through.extend(it.next().map(PathBuf::from)),
            Some("--driver") => {
                let pid = it.next().and_then(|p| p.to_str()?.parse::<u32>().ok());
                let start = it.next().and_then(|s| s.to_str()?.parse::<u64>().ok());
                match pid.zip(start) {
                    Some(d) => driver = Some(d),
                    None => {
                        eprintln!("mcpres sandbox: --driver needs PID START");
                        return 2;
                    }
                }
            }
            Some("--disk-full") => {
                let dir = it.next().map(PathBuf::from);
                let bytes = it.next().and_then(|b| b.to_str()?.parse::<u64>().ok());
                match (dir, bytes) {
                    (Some(dir), Some(bytes)) => faults.push(Fault::DiskFull { dir, bytes }),
                    _ => {
                        eprintln!("mcpres sandbox: --disk-full needs DIR BYTES");
                        return 2;
                    }
                }
            }
            Some("--read-only") => match it.next() {
                Some(p) => faults.push(Fault::ReadOnly {
                    path: PathBuf::from(p),
                }),
                None => {
                    eprintln!("mcpres sandbox: --read-only needs PATH");
                    return 2;
                }
            },
            Some("--") => {
                program = it.next();
                break;
            }
            _ => {
                eprintln!(
                    "mcpres sandbox: unexpected argument {}",
                    a.to_string_lossy()
                );
                return 2;
            }
        }
    }
    let (Some(stage), Some(program)) = (stage, program) else {
        eprintln!(
            "mcpres sandbox: usage: {EXEC_ARG} --stage DIR --cwd DIR [--loopback] [--driver PID START] -- PROGRAM ARGS..."
        );
        return 2;
    };
    let rest: Vec<&OsString> = it.collect();
    // Opened before the overlays (the stage may lie under a directory that
    // is about to become one, and the report must reach the host), through
    // a bind mount of its own: a file open for writing on the root mount
    // would keep that mount from becoming read-only.
    let report_dir = stage.join("report");
    let _ = rustix::mount::mount_change(
        "/",
        rustix::mount::MountPropagationFlags::REC | rustix::mount::MountPropagationFlags::PRIVATE,
    );
    let _ = rustix::mount::mount_bind(&report_dir, &report_dir);
    let mut report = match std::fs::File::create(report_dir.join("scope.json")) {
        Ok(f) => f,
        Err(e) => {
            eprintln!("mcpres sandbox: cannot write the scope report: {e}");
            return 125;
        }
    };
    let init_report = match std::fs::File::create(report_dir.join("init.json")) {
        Ok(f) => f,
        Err(e) => {
            eprintln!("mcpres sandbox: cannot write the init report: {e}");
            return 125;
        }
    };
    // A held stage's go signal, opened now for the same reason (reading,
    // without waiting for a writer: the driver holds one).
    let go = match await_go
        .then(|| {
            std::fs::OpenOptions::new()
                .read(true)
                .custom_flags(rustix::fs::OFlags::NONBLOCK.bits() as i32)
                .open(report_dir.join(GO_FILE))
        })
        .transpose()
    {
        Ok(go) => go,
        Err(e) => {
            eprintln!("mcpres sandbox: cannot open the go signal: {e}");
            return 125;
        }
    };
    let outside_log = loopback
        .then(|| std::fs::File::create(report_dir.join("outside.jsonl")))
        .transpose();
    let outside_log = match outside_log {
        Ok(f) => f,
        Err(e) => {
            eprintln!("mcpres sandbox: cannot write the outside-destination report: {e}");
            return 125;
        }
    };
    // The door into the network namespace (for an HTTP subject), bound
    // before the overlays hide the host's report directory; the init
    // serves it.
    let door = loopback.then(|| super::door::bind(&report_dir));
    let mut scope = set_up(&stage, loopback, &through);
    let door = match door {
        Some(Ok(listener)) => {
            scope["door"] = json!(true);
            Some(listener)
        }
        Some(Err(e)) => {
            scope["door"] = json!(format!("no door: {e}"));
            None
        }
        None => None,
    };
    // Opened before the subject starts, so no packet of its goes unseen.
    let mut watch = None;
    if let Some(log) = outside_log {
        match Watch::open(log) {
            Ok(w) => {
                scope["outsideWatched"] = json!(true);
                scope["outsideFiltered"] = match &w.filtered {
                    Ok(()) => json!(true),
                    Err(e) => json!(e),
                };
                watch = Some(w);
            }
            Err(e) => scope["outsideWatched"] = json!(e),
        }
    }
    let (injected, not_injected) = inject(&faults);
    if !faults.is_empty() {
        scope["injected"] = json!(injected);
        scope["notInjected"] = json!(not_injected);
    }
    if let Some(dir) = &cwd {
        // Again, through the new mounts: the old handle names the host's
        // directory, not its overlay.
        let _ = std::env::set_current_dir(dir);
    }
    // `unshare -p` made a PID namespace for this process's children, not
    // for itself (a process never changes its own), and a process in that
    // state may not start threads: the subject runs as the second process
    // of the namespace, started by its first (the init), and this process
    // stands in for it towards the driver until it ends, then ends the way
    // the subject did.
    // Prepared ahead: everything above is done, and the init is started
    // too; it starts the subject when the driver says so (end of file: it
    // never will). It reads the signal through this process's descriptor
    // (the FIFO's path is under an overlay by now), which stays open until
    // this process ends.
    let go_path = go.as_ref().map(|f| {
        use std::os::fd::AsRawFd as _;
        format!("/proc/{}/fd/{}", std::process::id(), f.as_raw_fd())
    });
    let channel = match Channel::bind() {
        Ok(c) => c,
        Err(e) => {
            eprintln!("mcpres sandbox: cannot open the init's channel: {e}");
            return 125;
        }
    };
    let init = match start_init(
        driver,
        &channel.name,
        door.is_some(),
        go_path.as_deref(),
        program,
        &rest,
    ) {
        Ok(init) => init,
        Err(e) => {
            eprintln!("mcpres sandbox: {e}");
            return 125;
        }
    };
    scope["pidNamespace"] = json!({"init": true, "subjectIsSecondProcess": true});
    if go.is_some() {
        scope["preparedAhead"] = json!(true);
    }
    let _ = report.write_all(scope.to_string().as_bytes());
    drop(report);
    let ended = stand_in(&channel, init, init_report, watch.as_mut(), door);
    drop(go);
    ended
}

/// Wait until the driver writes the go word on `fifo` (true), or closes its
/// end without it (false).
fn wait_for_go(fifo: std::fs::File) -> bool {
    use std::io::Read as _;
    if rustix::fs::fcntl_setfl(&fifo, rustix::fs::OFlags::empty()).is_err() {
        return false;
    }
    let mut got = Vec::new();
    let mut buf = [0u8; 8];
    let mut fifo = fifo;
    loop {
        match fifo.read(&mut buf) {
            Ok(0) => return false,
            Ok(n) => {
                got.extend_from_slice(&buf[..n]);
                if got.len() >= GO_WORD.len() {
                    return got.starts_with(GO_WORD);
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => return false,
        }
    }
}

/// The datagram socket the init tells this process about the subject on
/// (an abstract address: nothing in the file system, gone with the
/// processes).
struct Channel {
    name: String,
    socket: std::os::unix::net::UnixDatagram,
}

impl Channel {
    fn bind() -> std::io::Result<Channel> {
        use std::os::linux::net::SocketAddrExt as _;
        let name = format!("mcpres-init-{}", ident::random_hex(12));
        let addr = std::os::unix::net::SocketAddr::from_abstract_name(name.as_bytes())?;
        let socket = std::os::unix::net::UnixDatagram::bind_addr(&addr)?;
        Ok(Channel { name, socket })
    }

    /// The next message, waiting as long as process `init` (the sender)
    /// lives; `None` once it is gone without a word. Meanwhile, every
    /// packet `watch` sees is read.
    fn receive_from(&self, init: u32, mut watch: Option<&mut Watch>) -> Option<String> {
        use rustix::event::{PollFd, PollFlags, Timespec, poll};
        let _ = self.socket.set_nonblocking(true);
        let mut buf = [0u8; 64];
        let second = Timespec {
            tv_sec: 1,
            tv_nsec: 0,
        };
        loop {
            let (told, packets) = {
                let mut fds = vec![PollFd::new(&self.socket, PollFlags::IN)];
                if let Some(w) = watch.as_deref() {
                    fds.push(PollFd::new(&w.socket, PollFlags::IN));
                }
                match poll(&mut fds, Some(&second)) {
                    Ok(_) => (
                        !fds[0].revents().is_empty(),
                        fds.get(1).is_some_and(|f| !f.revents().is_empty()),
                    ),
                    Err(rustix::io::Errno::INTR) => (false, false),
                    Err(_) => return None,
                }
            };
            if packets && let Some(w) = watch.as_deref_mut() {
                w.drain();
            }
            if told {
                match self.socket.recv(&mut buf) {
                    Ok(n) => {
                        // What the subject sent just before it ended.
                        if let Some(w) = watch.as_deref_mut() {
                            w.drain();
                        }
                        return String::from_utf8(buf[..n].to_vec()).ok();
                    }
                    Err(e)
                        if matches!(
                            e.kind(),
                            std::io::ErrorKind::WouldBlock | std::io::ErrorKind::Interrupted
                        ) => {}
                    Err(_) => return None,
                }
            } else if !packets && proc::read(init).is_none_or(|p| p.zombie()) {
                return None;
            }
        }
    }
}

/// Tell the process standing in for the subject `message`, on `name`.
fn tell(name: &str, message: &str) {
    use std::os::linux::net::SocketAddrExt as _;
    let Ok(addr) = std::os::unix::net::SocketAddr::from_abstract_name(name.as_bytes()) else {
        return;
    };
    if let Ok(socket) = std::os::unix::net::UnixDatagram::unbound() {
        let _ = socket.send_to_addr(message.as_bytes(), &addr);
    }
}

/// Start the PID namespace's first process (`mcpres __sandbox-init`) with
/// this process's standard streams, environment and directory, which it
/// hands to the subject; the init watches the process that started the
/// sandbox: `driver` (its pid and start time) when the helper was told it, else this
/// process's parent. Its pid as the host sees it.
fn start_init(
    driver: Option<(u32, u64)>,
    channel: &str,
    door: bool,
    go: Option<&str>,
    program: &OsString,
    rest: &[&OsString],
) -> Result<u32, String> {
    let exe = std::env::current_exe().map_err(|e| format!("cannot find mcpres itself: {e}"))?;
    let (driver, driver_start) = match driver {
        Some(d) => d,
        None => {
            let parent = rustix::process::getppid()
                .map(|p| p.as_raw_nonzero().get().unsigned_abs())
                .ok_or("no parent to watch")?;
            let start = proc::start_time(parent).ok_or("the parent's start time is unreadable")?;
            (parent, start)
        }
    };
    let child = Command::new(exe)
        .arg(INIT_ARG)
        .arg(driver.to_string())
        .arg(driver_start.to_string())
        .arg(channel)
        .args(door.then_some("--door"))
        .args(go.into_iter().flat_map(|path| ["--go", path]))
        .arg("--")
        .arg(program)
        .args(rest)
        .spawn()
        .map_err(|e| format!("cannot start the namespace's init: {e}"))?;
    // Never waited for here: once this process ends, mcpres (the child
    // subreaper) adopts it, and ends it after listing its namespace.
    Ok(child.id())
}

/// Stand in for the subject: learn its pid from the init's children, name
/// it and the init in `init.json` (for the driver), let go of the standard
/// streams (the subject holds them), and end as the subject ends: with its
/// exit code, or by its signal.
fn stand_in(
    channel: &Channel,
    init: u32,
    mut report: std::fs::File,
    mut watch: Option<&mut Watch>,
    door: Option<std::os::unix::net::UnixListener>,
) -> u8 {
    let first = channel.receive_from(init, watch.as_deref_mut());
    // "started PID START": the subject as the host sees it, named by the
    // init before it could be reaped (a subject may end at once).
    let started = first.as_deref().and_then(|m| m.strip_prefix("started"));
    let mut record = json!({"pid": init, "start": proc::start_time(init)});
    if let Some(named) = started {
        let mut it = named.split_whitespace().map(|n| n.parse::<u64>().ok());
        if let (Some(Some(pid)), Some(Some(start))) = (it.next(), it.next()) {
            record["subject"] = json!(pid);
            record["subjectStart"] = json!(start);
        }
    }
    let _ = report.write_all(record.to_string().as_bytes());
    drop(report);
    // The init, which lives as long as the namespace, serves the door.
    if let Some(listener) = door
        && started.is_some()
    {
        send_fd(&door_name(&channel.name), &listener, b"door");
    }
    let_go_of_streams();
    let status = if started.is_some() {
        channel.receive_from(init, watch.as_deref_mut())
    } else {
        first
    };
    if let Some(w) = watch {
        hand_over(&channel.name, w);
    }
    let Some(status) = status else {
        return 125;
    };
    let number = |prefix: &str| {
        status
            .strip_prefix(prefix)
            .and_then(|n| n.parse::<i32>().ok())
    };
    if let Some(code) = number("exit ") {
        return u8::try_from(code & 0xff).unwrap_or(1);
    }
    if let Some(signo) = number("signal ") {
        // Die of it, without a core dump of this process.
        let _ = rustix::process::setrlimit(
            rustix::process::Resource::Core,
            rustix::process::Rlimit {
                current: Some(0),
                maximum: None,
            },
        );
        if let Some(sig) = rustix::process::Signal::from_named_raw(signo) {
            let _ = rustix::process::kill_process(rustix::process::getpid(), sig);
            std::thread::sleep(std::time::Duration::from_secs(1));
        }
        return u8::try_from((128 + signo) & 0xff).unwrap_or(1);
    }
    125
}

/// The address the namespace's init holds (never read) so that a socket
/// sent to it lives as long as the init does.
fn keeper_name(channel: &str) -> String {
    format!("{channel}-keeper")
}

/// Send the packet socket and the outside-destination log to the init's
/// keeper address before this process ends. The init goes on watching:
/// what a process the subject left behind tries after the subject ended is
/// named too, until the namespace is ended. And the kernel releases a
/// packet socket only after a grace period (8 to 16 ms here): released at
/// this process's end it would delay the subject's end as the driver sees
/// it; held by the init, it is released when the init is, after the session.
fn hand_over(channel: &str, watch: &Watch) {
    use rustix::fd::AsFd as _;
    send_fds(
        &keeper_name(channel),
        &[watch.socket.as_fd(), watch.log.as_fd()],
        b"keep",
    );
}

/// The init's side of [`hand_over`]: take the packet socket and the log
/// from `keeper`, and name every new outside destination until this process
/// is killed.
fn keep_watching(keeper: std::os::unix::net::UnixDatagram) {
    use rustix::net::{RecvAncillaryBuffer, RecvAncillaryMessage, RecvFlags, recvmsg};
    let mut word = [0u8; 16];
    let mut space = [std::mem::MaybeUninit::uninit(); rustix::cmsg_space!(ScmRights(2))];
    let mut control = RecvAncillaryBuffer::new(&mut space);
    if recvmsg(
        &keeper,
        &mut [std::io::IoSliceMut::new(&mut word)],
        &mut control,
        RecvFlags::CMSG_CLOEXEC,
    )
    .is_err()
    {
        return;
    }
    let mut fds = Vec::new();
    for message in control.drain() {
        if let RecvAncillaryMessage::ScmRights(got) = message {
            fds.extend(got);
        }
    }
    drop(control);
    let mut fds = fds.into_iter();
    let (Some(socket), Some(log)) = (fds.next(), fds.next()) else {
        return;
    };
    let mut watch = Watch {
        filtered: Ok(()),
        socket,
        log: std::fs::File::from(log),
        seen: Default::default(),
    };
    loop {
        let mut polled = [rustix::event::PollFd::new(
            &watch.socket,
            rustix::event::PollFlags::IN,
        )];
        match rustix::event::poll(&mut polled, None) {
            Ok(_) | Err(rustix::io::Errno::INTR) => watch.drain(),
            Err(_) => return,
        }
    }
}

/// The address the init takes the door's listener on.
fn door_name(channel: &str) -> String {
    format!("{channel}-door")
}

/// Send `fd` (with `word`) to the abstract datagram address `name`.
fn send_fd(name: &str, fd: &impl rustix::fd::AsFd, word: &[u8]) {
    send_fds(name, &[fd.as_fd()], word);
}

/// Send `fds` (at most two, with `word`) to the abstract datagram address
/// `name`.
fn send_fds(name: &str, fds: &[rustix::fd::BorrowedFd<'_>], word: &[u8]) {
    use rustix::net::{
        AddressFamily, SendAncillaryBuffer, SendAncillaryMessage, SendFlags, SocketAddrUnix,
        SocketType, sendmsg_addr, socket,
    };
    let Ok(addr) = SocketAddrUnix::new_abstract_name(name.as_bytes()) else {
        return;
    };
    let Ok(sock) = socket(AddressFamily::UNIX, SocketType::DGRAM, None) else {
        return;
    };
    let mut space = [std::mem::MaybeUninit::uninit(); rustix::cmsg_space!(ScmRights(2))];
    let mut control = SendAncillaryBuffer::new(&mut space);
    if control.push(SendAncillaryMessage::ScmRights(fds)) {
        let _ = sendmsg_addr(
            &sock,
            &addr,
            &[std::io::IoSlice::new(word)],
            &mut control,
            SendFlags::empty(),
        );
    }
}

/// The one socket sent to `socket` within `limit`, if any.
fn receive_fd(
    socket: &std::os::unix::net::UnixDatagram,
    limit: std::time::Duration,
) -> Option<rustix::fd::OwnedFd> {
    use rustix::net::{RecvAncillaryBuffer, RecvAncillaryMessage, RecvFlags, recvmsg};
    socket.set_read_timeout(Some(limit)).ok()?;
    let mut word = [0u8; 16];
    let mut space = [std::mem::MaybeUninit::uninit(); rustix::cmsg_space!(ScmRights(1))];
    let mut control = RecvAncillaryBuffer::new(&mut space);
    recvmsg(
        socket,
        &mut [std::io::IoSliceMut::new(&mut word)],
        &mut control,
        RecvFlags::CMSG_CLOEXEC,
    )
    .ok()?;
    let mut got = None;
    for message in control.drain() {
        if let RecvAncillaryMessage::ScmRights(fds) = message {
            for fd in fds {
                got.get_or_insert(fd);
            }
        }
    }
    got
}

/// Put `/dev/null` in place of this process's standard streams: the
/// subject's pipes are then held by the subject alone, and close when it
/// ends.
fn let_go_of_streams() {
    if let Ok(null) = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open("/dev/null")
    {
        let _ = rustix::stdio::dup2_stdin(&null);
        let _ = rustix::stdio::dup2_stdout(&null);
        let _ = rustix::stdio::dup2_stderr(&null);
    }
}

/// How often the namespace's init reaps and looks for its watched process
/// once the subject has ended.
const INIT_TICK: std::time::Duration = std::time::Duration::from_millis(100);

/// The first process of a subject's PID namespace, run as `mcpres
/// __sandbox-init DRIVER-PID DRIVER-START CHANNEL -- PROGRAM ARGS...`: it
/// starts the subject with its own standard streams, environment and
/// directory (the subject inherits the process group of the process that
/// stands in for it), tells that process, then leaves the group and
/// session, takes the command name [`INIT_COMM`] and lets go of the
/// streams. It reaps every orphan of the namespace (each is re-parented to
/// it, whatever session or group it moved to), tells how the subject ended
/// (`exit N`, `signal N`), and lives on until it is killed (by
/// [`Stage::end_namespace`], which lists the namespace's processes first)
/// or the process that started the sandbox is gone. When it ends, the
/// kernel kills every process left in the namespace.
pub fn init_main(args: &[OsString]) -> u8 {
    let number = |i: usize| {
        args.get(i)
            .and_then(|a| a.to_str())
            .and_then(|a| a.parse::<u64>().ok())
    };
    // `--door`: the subject is reached through the namespace's door, whose
    // listener the process standing in sends once the subject started.
    // `--go PATH`: prepared ahead; the subject starts once the driver's go
    // word is read from PATH.
    let mut door = false;
    let mut go: Option<&OsString> = None;
    let mut after = 3;
    loop {
        match args.get(after).and_then(|a| a.to_str()) {
            Some("--door") => door = true,
            Some("--go") => {
                after += 1;
                go = args.get(after);
            }
            _ => break,
        }
        after += 1;
    }
    let (Some(driver), Some(start), Some(channel), Some("--"), Some(program)) = (
        number(0).and_then(|d| u32::try_from(d).ok()),
        number(1),
        args.get(2).and_then(|a| a.to_str()),
        args.get(after).and_then(|a| a.to_str()),
        args.get(after + 1),
    ) else {
        eprintln!(
            "mcpres sandbox: usage: {INIT_ARG} DRIVER-PID DRIVER-START CHANNEL [--door] [--go PATH] -- PROGRAM ARGS..."
        );
        return 2;
    };
    let door_inbox = door
        .then(|| {
            use std::os::linux::net::SocketAddrExt as _;
            std::os::unix::net::SocketAddr::from_abstract_name(door_name(channel).as_bytes())
                .and_then(|a| std::os::unix::net::UnixDatagram::bind_addr(&a))
                .ok()
        })
        .flatten();
    // Takes what the process standing in for the subject hands over (its
    // packet socket and log) once the subject has ended.
    let keeper = {
        use std::os::linux::net::SocketAddrExt as _;
        std::os::unix::net::SocketAddr::from_abstract_name(keeper_name(channel).as_bytes())
            .and_then(|a| std::os::unix::net::UnixDatagram::bind_addr(&a))
            .ok()
    };
    if let Some(path) = go {
        let opened = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(rustix::fs::OFlags::NONBLOCK.bits() as i32)
            .open(path);
        if !opened.is_ok_and(wait_for_go) {
            // Never let go (the session was not run): nothing was started,
            // and the namespace ends with this process.
            tell(channel, "exit 125");
            return 125;
        }
    }
    let subject = match Command::new(program).args(&args[after + 2..]).spawn() {
        Ok(child) => {
            // Its host pid and start time, read before it can be reaped:
            // this process's /proc is the host's, where `self` is this
            // process's host pid and its only child is the subject.
            let host = std::fs::read_link("/proc/self")
                .ok()
                .and_then(|p| p.to_str()?.parse::<u32>().ok());
            let named = host
                .and_then(|me| {
                    std::fs::read_to_string(format!("/proc/{me}/task/{me}/children")).ok()
                })
                .and_then(|t| t.split_whitespace().next()?.parse::<u32>().ok())
                .and_then(|pid| Some((pid, proc::start_time(pid)?)));
            match named {
                Some((pid, start)) => tell(channel, &format!("started {pid} {start}")),
                None => tell(channel, "started"),
            }
            Some(child.id())
        }
        Err(e) => {
            eprintln!(
                "mcpres sandbox: cannot execute {}: {e}",
                Path::new(program).display()
            );
            tell(channel, "exit 127");
            None
        }
    };
    let _ = rustix::process::setsid();
    // This process is the first of its PID namespace, so unlike the
    // helper it may start a thread: it serves the door (a connection asked
    // for meanwhile waits in the listener's backlog).
    if let Some(keeper) = keeper {
        std::thread::spawn(move || keep_watching(keeper));
    }
    if subject.is_some()
        && let Some(inbox) = door_inbox
        && let Some(fd) = receive_fd(&inbox, std::time::Duration::from_secs(5))
    {
        let listener = std::os::unix::net::UnixListener::from(fd);
        std::thread::spawn(move || super::door::serve(listener));
    }
    if let Ok(name) = CString::new(INIT_COMM) {
        let _ = rustix::thread::set_name(&name);
    }
    let_go_of_streams();
    let _ = std::env::set_current_dir("/");
    // Until the subject ends: every child reaped as it dies.
    if let Some(subject) = subject {
        loop {
            match rustix::process::wait(rustix::process::WaitOptions::empty()) {
                Ok(Some((pid, status))) => {
                    if pid.as_raw_nonzero().get().unsigned_abs() != subject {
                        continue;
                    }
                    let told = match (status.exit_status(), status.terminating_signal()) {
                        (Some(code), _) => format!("exit {code}"),
                        (None, Some(signo)) => format!("signal {signo}"),
                        (None, None) => "exit 125".to_string(),
                    };
                    tell(channel, &told);
                    break;
                }
                Ok(None) => {}
                Err(e) if e == rustix::io::Errno::INTR => {}
                Err(_) => {
                    tell(channel, "exit 125");
                    break;
                }
            }
        }
    }
    loop {
        while let Ok(Some(_)) = rustix::process::wait(rustix::process::WaitOptions::NOHANG) {}
        if proc::start_time(driver) != Some(start) {
            return 0;
        }
        std::thread::sleep(INIT_TICK);
    }
}

/// The flags of the mount at `path` that a remount inside a user namespace
/// must keep (the kernel locks them): `nosuid`, `nodev`, `noexec` and the
/// access-time flags.
fn kept_flags(path: &str) -> rustix::mount::MountFlags {
    use rustix::fs::StatVfsMountFlags as St;
    use rustix::mount::MountFlags as Ms;
    let Ok(st) = rustix::fs::statvfs(path) else {
        return Ms::empty();
    };
    [
        (St::NOSUID, Ms::NOSUID),
        (St::NODEV, Ms::NODEV),
        (St::NOEXEC, Ms::NOEXEC),
        (St::NOATIME, Ms::NOATIME),
        (St::NODIRATIME, Ms::NODIRATIME),
        (St::RELATIME, Ms::RELATIME),
    ]
    .into_iter()
    .filter(|(st_flag, _)| st.f_flag.contains(*st_flag))
    .fold(Ms::empty(), |acc, (_, ms)| acc | ms)
}

/// The mount points still writable that are none of the sandbox's own
/// (overlays, `/dev/shm`, the report) and not a kernel file system
/// (`/proc`, `/sys`): where a write could still reach the host.
fn writable_mounts(overlaid: &[String], stage: &Path, through: &[PathBuf]) -> Vec<String> {
    let Ok(text) = std::fs::read_to_string("/proc/self/mountinfo") else {
        return vec!["(mount table unreadable)".into()];
    };
    let mut out: Vec<String> = text
        .lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split(' ').collect();
            let (point, options) = (*f.get(4)?, *f.get(5)?);
            options
                .split(',')
                .any(|o| o == "rw")
                .then(|| point.replace("\\040", " "))
        })
        .filter(|p| {
            !overlaid.contains(p)
                && p != "/dev/shm"
                && !Path::new(p).starts_with(stage)
                && !through.iter().any(|t| Path::new(p) == t)
                && !Path::new(p).starts_with("/proc")
                && !Path::new(p).starts_with("/sys")
        })
        .collect();
    out.sort();
    out.dedup();
    out
}

/// The controlled faults, after the overlays: what was injected and what
/// could not be (with why).
fn inject(faults: &[Fault]) -> (Vec<Value>, Vec<Value>) {
    use rustix::mount::{MountFlags, mount, mount_bind, mount_remount};
    let mut done = Vec::new();
    let mut not = Vec::new();
    for f in faults {
        let (record, result) = match f {
            Fault::DiskFull { dir, bytes } => {
                let record = json!({"fault": "disk-full", "path": dir.display().to_string(), "bytes": bytes});
                let result = if dir.is_dir() {
                    let room = if *bytes == 0 {
                        "size=4096,nr_inodes=1".to_string()
                    } else {
                        format!("size={bytes}")
                    };
                    CString::new(format!("{room},mode=0777"))
                        .map_err(|e| e.to_string())
                        .and_then(|data| {
                            mount(
                                "tmpfs",
                                dir,
                                "tmpfs",
                                MountFlags::empty(),
                                Some(data.as_c_str()),
                            )
                            .map_err(|e| e.to_string())
                        })
                } else {
                    Err("not an existing directory".to_string())
                };
                (record, result)
            }
            Fault::ReadOnly { path } => {
                let record = json!({"fault": "read-only", "path": path.display().to_string()});
                let result = mount_bind(path, path)
                    .and_then(|()| {
                        let keep = kept_flags(&path.display().to_string());
                        mount_remount(path, MountFlags::BIND | MountFlags::RDONLY | keep, "")
                    })
                    .map_err(|e| e.to_string());
                (record, result)
            }
        };
        match result {
            Ok(()) => done.push(record),
            Err(why) => {
                let mut r = record;
                r["why"] = json!(why);
                not.push(r);
            }
        }
    }
    (done, not)
}

/// Send one route netlink request and read the kernel's acknowledgement.
fn netlink_ask(fd: &rustix::fd::OwnedFd, msg: &[u8]) -> Result<(), String> {
    use rustix::net::{RecvFlags, SendFlags, recv, send};
    const NLMSG_ERROR: u16 = 2;
    send(fd, msg, SendFlags::empty()).map_err(|e| format!("netlink send: {e}"))?;
    let mut buf = [0u8; 512];
    let (_, n) =
        recv(fd, &mut buf[..], RecvFlags::empty()).map_err(|e| format!("netlink receive: {e}"))?;
    if n < 20 || u16::from_ne_bytes([buf[4], buf[5]]) != NLMSG_ERROR {
        return Err("netlink: no acknowledgement".into());
    }
    match i32::from_ne_bytes([buf[16], buf[17], buf[18], buf[19]]) {
        0 => Ok(()),
        e => Err(format!(
            "netlink: {}",
            std::io::Error::from_raw_os_error(e.saturating_neg())
        )),
    }
}

/// A route netlink socket (no protocol: `NETLINK_ROUTE`).
fn netlink() -> Result<rustix::fd::OwnedFd, String> {
    use rustix::net::{AddressFamily, SocketType, socket};
    socket(AddressFamily::NETLINK, SocketType::RAW, None)
        .map_err(|e| format!("no netlink socket: {e}"))
}

/// The 16-byte header of a netlink request of `len` bytes in all.
fn netlink_header(len: u32, kind: u16, flags: u16, seq: u32) -> Vec<u8> {
    let mut msg = Vec::with_capacity(len as usize);
    msg.extend_from_slice(&len.to_ne_bytes()); // nlmsg_len
    msg.extend_from_slice(&kind.to_ne_bytes());
    msg.extend_from_slice(&flags.to_ne_bytes());
    msg.extend_from_slice(&seq.to_ne_bytes()); // nlmsg_seq
    msg.extend_from_slice(&0u32.to_ne_bytes()); // nlmsg_pid: the kernel
    msg
}

const NLM_F_REQUEST: u16 = 1;
const NLM_F_ACK: u16 = 4;

/// Bring the loopback interface of this network namespace up, as `ip link
/// set lo up` would, over a route netlink socket: one `RTM_NEWLINK` for
/// interface 1 (loopback's index in every namespace) with `IFF_UP`, and the
/// kernel's acknowledgement. No program is started for it.
fn loopback_up() -> Result<(), String> {
    const RTM_NEWLINK: u16 = 16;
    const IFF_UP: u32 = 1;
    let fd = netlink()?;
    let mut msg = netlink_header(32, RTM_NEWLINK, NLM_F_REQUEST | NLM_F_ACK, 1);
    msg.extend_from_slice(&[0, 0]); // ifi_family AF_UNSPEC, padding
    msg.extend_from_slice(&0u16.to_ne_bytes()); // ifi_type
    msg.extend_from_slice(&1i32.to_ne_bytes()); // ifi_index: loopback
    msg.extend_from_slice(&IFF_UP.to_ne_bytes()); // ifi_flags
    msg.extend_from_slice(&IFF_UP.to_ne_bytes()); // ifi_change
    netlink_ask(&fd, &msg)
}

/// Make every address local to this network namespace, as `ip route add
/// local 0.0.0.0/0 dev lo table local` and `ip -6 route add local ::/0 dev
/// lo table local` would: a packet for an outside address then goes over
/// loopback (where [`Watch`] sees where it was going) instead of finding no
/// route, and, with nothing listening there, the kernel refuses it at once
/// (a connection gets "connection refused"). Nothing leaves the namespace
/// either way: it has no other interface.
fn outside_routes() -> Result<(), String> {
    const RTM_NEWROUTE: u16 = 24;
    const NLM_F_CREATE: u16 = 0x400;
    const RT_TABLE_LOCAL: u8 = 255;
    const RTPROT_BOOT: u8 = 3;
    const RT_SCOPE_HOST: u8 = 254;
    const RTN_LOCAL: u8 = 2;
    const RTA_OIF: u16 = 4;
    let fd = netlink()?;
    for (seq, family) in [(2u32, 2u8), (3, 10)] {
        let mut msg = netlink_header(
            36,
            RTM_NEWROUTE,
            NLM_F_REQUEST | NLM_F_ACK | NLM_F_CREATE,
            seq,
        );
        // rtmsg: family (AF_INET, AF_INET6), destination and source prefix
        // lengths 0, tos 0, table, protocol, scope, type; flags 0.
        msg.extend_from_slice(&[
            family,
            0,
            0,
            0,
            RT_TABLE_LOCAL,
            RTPROT_BOOT,
            RT_SCOPE_HOST,
            RTN_LOCAL,
        ]);
        msg.extend_from_slice(&0u32.to_ne_bytes());
        // One attribute: the output interface, loopback.
        msg.extend_from_slice(&8u16.to_ne_bytes());
        msg.extend_from_slice(&RTA_OIF.to_ne_bytes());
        msg.extend_from_slice(&1u32.to_ne_bytes());
        netlink_ask(&fd, &msg)
            .map_err(|e| format!("{} {e}", if family == 2 { "IPv4:" } else { "IPv6:" }))?;
    }
    Ok(())
}

/// Outside attempts in the calling process's own network namespace (the
/// isolated OAuth run's, which its subjects share): the namespace's routes
/// send every address beyond loopback to loopback, as in a sandbox stage,
/// and a [`Watch`] on a thread of its own records each new destination
/// until [`NamespaceWatch::finish`]. Only for a process that owns its
/// network namespace (it changes the namespace's routes).
pub struct NamespaceWatch {
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
    log: std::fs::File,
    /// Whether the packet filter was attached (or why not).
    pub filtered: Result<(), String>,
}

impl NamespaceWatch {
    /// Route every address beyond loopback to loopback and start watching;
    /// why not, when the namespace refuses either.
    pub fn start() -> Result<NamespaceWatch, String> {
        use std::sync::atomic::{AtomicBool, Ordering};
        outside_routes().map_err(|e| format!("no outside routes: {e}"))?;
        let log = rustix::fs::memfd_create("mcpres-outside", rustix::fs::MemfdFlags::CLOEXEC)
            .map(std::fs::File::from)
            .map_err(|e| format!("no log: {e}"))?;
        let reader = log.try_clone().map_err(|e| format!("no log: {e}"))?;
        let mut watch = Watch::open(log)?;
        let filtered = watch.filtered.clone();
        let stop = std::sync::Arc::new(AtomicBool::new(false));
        let stopping = stop.clone();
        let thread = std::thread::spawn(move || {
            let pause = rustix::event::Timespec {
                tv_sec: 0,
                tv_nsec: 50_000_000,
            };
            loop {
                let done = stopping.load(Ordering::Acquire);
                let mut polled = [rustix::event::PollFd::new(
                    &watch.socket,
                    rustix::event::PollFlags::IN,
                )];
                match rustix::event::poll(&mut polled, Some(&pause)) {
                    Ok(_) | Err(rustix::io::Errno::INTR) => watch.drain(),
                    Err(_) => return,
                }
                if done {
                    return;
                }
            }
        });
        Ok(NamespaceWatch {
            stop,
            thread: Some(thread),
            log: reader,
            filtered,
        })
    }

    /// Stop watching (after a last look at what is queued); every outside
    /// destination seen, in the order first seen (`protocol`, `address`,
    /// `port`).
    pub fn finish(mut self) -> Vec<Value> {
        use std::io::{Read as _, Seek as _};
        self.stop.store(true, std::sync::atomic::Ordering::Release);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
        let mut text = String::new();
        let _ = self.log.rewind();
        let _ = self.log.read_to_string(&mut text);
        text.lines()
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect()
    }
}

impl Drop for NamespaceWatch {
    fn drop(&mut self) {
        self.stop.store(true, std::sync::atomic::Ordering::Release);
    }
}

/// At most this many outside destinations are written to `outside.jsonl`.
const OUTSIDE_LIMIT: usize = 256;

/// Where the subject tried to go beyond loopback: a packet socket on the
/// network namespace's only interface (opened before the subject starts,
/// read by the process standing in for it), writing each new destination
/// (`protocol`, `address`, `port`) as one line of the stage's
/// `report/outside.jsonl`. A connection counts once, by its opening
/// segment (TCP `SYN` without `ACK`); a datagram (UDP) and an echo request
/// (ICMP) by themselves.
struct Watch {
    /// Whether the packet filter was attached (or why not).
    filtered: Result<(), String>,
    socket: rustix::fd::OwnedFd,
    log: std::fs::File,
    seen: std::collections::BTreeSet<(&'static str, std::net::IpAddr, Option<u16>)>,
}

impl Watch {
    fn open(log: std::fs::File) -> Result<Watch, String> {
        use rustix::net::{AddressFamily, SocketFlags, SocketType, eth, socket_with};
        // Cooked (`SOCK_DGRAM`): each packet without its link header.
        let socket = socket_with(
            AddressFamily::PACKET,
            SocketType::DGRAM,
            SocketFlags::NONBLOCK | SocketFlags::CLOEXEC,
            Some(eth::ALL),
        )
        .map_err(|e| format!("no packet socket: {e}"))?;
        // Only packets for an address beyond loopback are queued (and only
        // their first 128 bytes): an HTTP subject's traffic with mcpres,
        // all on loopback, neither wakes this process nor fills the
        // socket's buffer ahead of an outside attempt. Without the filter
        // every packet is read and sorted here, as before.
        let socket = socket2::Socket::from(socket);
        let filtered = socket
            .attach_filter(&outside_only())
            .map_err(|e| format!("no filter: {e}"));
        let socket = rustix::fd::OwnedFd::from(socket);
        Ok(Watch {
            filtered,
            socket,
            log,
            seen: Default::default(),
        })
    }

    /// Read every packet waiting; write each new outside destination.
    fn drain(&mut self) {
        let mut buf = [0u8; 128];
        while let Ok((_, n, _)) =
            rustix::net::recvfrom(&self.socket, &mut buf[..], rustix::net::RecvFlags::TRUNC)
        {
            let n = n.min(buf.len());
            let Some(dest) = outside_destination(&buf[..n]) else {
                continue;
            };
            if self.seen.len() >= OUTSIDE_LIMIT || !self.seen.insert(dest) {
                continue;
            }
            let (protocol, address, port) = dest;
            let line = json!({"protocol": protocol, "address": address.to_string(), "port": port});
            let _ = writeln!(self.log, "{line}");
        }
    }
}

/// A classic BPF program over a packet from its network header: keep the
/// first 128 bytes of an IPv4 packet whose destination is not in
/// 127.0.0.0/8 and of an IPv6 packet whose destination is not `::1`; drop
/// every other packet (and one too short to hold its destination). Each
/// instruction is (code, jump if true, jump if false, constant).
const OUTSIDE_ONLY: [(u16, u8, u8, u32); 17] = {
    const LDB: u16 = 0x30; // BPF_LD | BPF_B | BPF_ABS
    const LDW: u16 = 0x20; // BPF_LD | BPF_W | BPF_ABS
    const RSH: u16 = 0x74; // BPF_ALU | BPF_RSH | BPF_K
    const AND: u16 = 0x54; // BPF_ALU | BPF_AND | BPF_K
    const JEQ: u16 = 0x15; // BPF_JMP | BPF_JEQ | BPF_K
    const RET: u16 = 0x06; // BPF_RET | BPF_K
    [
        (LDB, 0, 0, 0),            // 0: A = version and header length
        (RSH, 0, 0, 4),            // 1: A = version
        (JEQ, 0, 3, 4),            // 2: IPv4? 3 : 6
        (LDW, 0, 0, 16),           // 3: A = IPv4 destination
        (AND, 0, 0, 0xff00_0000),  // 4: its first octet
        (JEQ, 10, 9, 0x7f00_0000), // 5: 127/8? drop : keep
        (JEQ, 0, 8, 6),            // 6: IPv6? 7 : keep
        (LDW, 0, 0, 24),           // 7: destination, word 1
        (JEQ, 0, 6, 0),            // 8: 0? 9 : keep
        (LDW, 0, 0, 28),           // 9: word 2
        (JEQ, 0, 4, 0),            // 10: 0? 11 : keep
        (LDW, 0, 0, 32),           // 11: word 3
        (JEQ, 0, 2, 0),            // 12: 0? 13 : keep
        (LDW, 0, 0, 36),           // 13: word 4
        (JEQ, 1, 0, 1),            // 14: ::1? drop : keep
        (RET, 0, 0, 128),          // 15: keep 128 bytes
        (RET, 0, 0, 0),            // 16: drop
    ]
};

fn outside_only() -> Vec<socket2::SockFilter> {
    OUTSIDE_ONLY
        .iter()
        .map(|&(code, jt, jf, k)| socket2::SockFilter::new(code, jt, jf, k))
        .collect()
}

/// Where `packet` (an IPv4 or IPv6 packet, maybe cut short) was going, when
/// that is beyond loopback and the packet opens something: a TCP `SYN`
/// without `ACK`, a UDP datagram, an ICMP echo request.
fn outside_destination(packet: &[u8]) -> Option<(&'static str, std::net::IpAddr, Option<u16>)> {
    use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
    let (protocol, dest, l4): (u8, IpAddr, &[u8]) = match packet.first()? >> 4 {
        4 => {
            let ihl = usize::from(packet[0] & 0x0f) * 4;
            let dest: [u8; 4] = packet.get(16..20)?.try_into().ok()?;
            (
                *packet.get(9)?,
                IpAddr::V4(Ipv4Addr::from(dest)),
                packet.get(ihl..)?,
            )
        }
        6 => {
            let dest: [u8; 16] = packet.get(24..40)?.try_into().ok()?;
            (
                *packet.get(6)?,
                IpAddr::V6(Ipv6Addr::from(dest)),
                packet.get(40..)?,
            )
        }
        _ => return None,
    };
    if dest.is_loopback() || dest.is_unspecified() {
        return None;
    }
    let port = || Some(u16::from_be_bytes(l4.get(2..4)?.try_into().ok()?));
    match protocol {
        // TCP: SYN set, ACK clear (flags at byte 13).
        6 => {
            let flags = *l4.get(13)?;
            (flags & 0x02 != 0 && flags & 0x10 == 0).then_some(("tcp", dest, Some(port()?)))
        }
        17 => Some(("udp", dest, Some(port()?))),
        // ICMP echo request (8), ICMPv6 echo request (128).
        1 if *l4.first()? == 8 => Some(("icmp", dest, None)),
        58 if *l4.first()? == 128 => Some(("icmp", dest, None)),
        _ => None,
    }
}

/// The mounts, in order; what was covered and what was not.
fn set_up(stage: &Path, loopback: bool, through: &[PathBuf]) -> Value {
    use rustix::mount::{
        MountFlags, MountPropagationFlags, mount, mount_bind, mount_change, mount_remount,
    };
    let mut overlaid = Vec::new();
    let mut not_covered = Vec::new();
    // (The mounts were made private before the report was opened.)
    let private = mount_change(
        "/",
        MountPropagationFlags::REC | MountPropagationFlags::PRIVATE,
    );
    if let Err(e) = private {
        return json!({"reported": true, "error": format!("mounts cannot be made private: {e}")});
    }
    let mut dirs: Vec<String> = std::fs::read_dir(stage.join("upper"))
        .map(|r| {
            r.flatten()
                .filter_map(|e| e.file_name().to_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default();
    dirs.sort();
    // The directory holding the stage goes last: once it is an overlay, the
    // stage's own paths would resolve through it.
    dirs.sort_by_key(|d| stage.starts_with(Path::new("/").join(d)));
    // The directories written through: held open now, bound over their own
    // overlaid paths once the overlays exist (through the descriptor, since
    // the host's path is then covered).
    let held: Vec<(PathBuf, std::io::Result<std::fs::File>)> = through
        .iter()
        .map(|d| (d.clone(), std::fs::File::open(d)))
        .collect();
    // /dev/shm first, for the same reason.
    let shm = match mount_bind(stage.join("shm"), "/dev/shm") {
        Ok(()) => json!("private"),
        Err(e) => {
            not_covered.push(json!({"path": "/dev/shm", "why": e.to_string()}));
            json!("host")
        }
    };
    for d in &dirs {
        let target = Path::new("/").join(d);
        let data = format!(
            "lowerdir={},upperdir={},workdir={}",
            target.display(),
            stage.join("upper").join(d).display(),
            stage.join("work").join(d).display()
        );
        // `volatile`: the overlay never syncs its upper layer (a stage is
        // thrown away after the session; syncing the host's file system
        // at every unmount would cost each session milliseconds). Kernels
        // without it take the plain form.
        let overlay = |options: String| {
            let Ok(options) = CString::new(options) else {
                return Err(rustix::io::Errno::INVAL);
            };
            mount(
                "overlay",
                &target,
                "overlay",
                MountFlags::empty(),
                Some(options.as_c_str()),
            )
        };
        match overlay(format!("{data},volatile")).or_else(|_| overlay(data)) {
            Ok(()) => overlaid.push(target.display().to_string()),
            Err(e) => not_covered
                .push(json!({"path": target.display().to_string(), "why": e.to_string()})),
        }
    }
    let mut passed = Vec::new();
    for (dir, file) in &held {
        let bound = file.as_ref().map_err(|e| e.to_string()).and_then(|f| {
            use std::os::fd::AsRawFd as _;
            mount_bind(format!("/proc/self/fd/{}", f.as_raw_fd()), dir).map_err(|e| e.to_string())
        });
        match bound {
            Ok(()) => passed.push(dir.display().to_string()),
            Err(e) => not_covered.push(json!({"path": dir.display().to_string(), "why": format!("not written through: {e}")})),
        }
    }
    drop(held);
    let root_read_only = match mount_remount(
        "/",
        MountFlags::BIND | MountFlags::RDONLY | kept_flags("/"),
        "",
    ) {
        Ok(()) => json!(true),
        Err(e) => json!(format!("not read-only: {e}")),
    };
    let up = loopback.then(loopback_up);
    let outside = match &up {
        Some(Ok(())) => Some(outside_routes().map_or_else(|e| json!(e), |()| json!(true))),
        _ => None,
    };
    let loopback = up.map(|r| r.map_or_else(|e| json!(e), |()| json!(true)));
    let writable = writable_mounts(&overlaid, stage, through);
    json!({
        "reported": true,
        "writableNotCovered": writable,
        "overlaid": overlaid,
        "writtenThrough": passed,
        "notCovered": not_covered,
        "devShm": shm,
        "rootReadOnly": root_read_only,
        "loopbackUp": loopback,
        "outsideLocal": outside,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The init watches the process that made the wrapper, named by it: the helper's
    /// parent may be gone (and the helper adopted by pid 1) before the helper asks, and
    /// an init watching pid 1 would never end. Found when an availability check's
    /// launcher was killed early.
    #[test]
    fn the_wrapper_names_its_maker_as_the_process_to_watch() {
        let tmp = tempfile::tempdir().unwrap();
        let stage = Stage::create(tmp.path(), "driver", false).unwrap();
        let tools = Tools {
            unshare: PathBuf::from("/usr/bin/unshare"),
            exe: PathBuf::from("/bin/mcpres"),
        };
        let (_, argv) = stage.wrap(&tools, Path::new("/bin/true"), &[]);
        let at = argv
            .iter()
            .position(|a| a == "--driver")
            .expect("a --driver");
        let me = std::process::id();
        assert_eq!(argv[at + 1], OsString::from(me.to_string()));
        assert_eq!(
            argv[at + 2],
            OsString::from(proc::start_time(me).unwrap().to_string())
        );
        // Before the subject's own arguments.
        let dashes = argv.iter().rposition(|a| a == "--").unwrap();
        assert!(at < dashes);
    }

    /// An IPv4 packet (20-byte header) to `dest` carrying `l4`.
    fn v4(protocol: u8, dest: [u8; 4], l4: &[u8]) -> Vec<u8> {
        let mut p = vec![0x45, 0, 0, 0, 0, 0, 0, 0, 64, protocol, 0, 0, 127, 0, 0, 1];
        p.extend_from_slice(&dest);
        p.extend_from_slice(l4);
        p
    }

    /// What the kernel's classic BPF does with `prog` over `packet`: the
    /// number of bytes kept (0: dropped; a load past the end drops).
    fn run_filter(prog: &[(u16, u8, u8, u32)], packet: &[u8]) -> u32 {
        let mut a: u32 = 0;
        let mut pc = 0usize;
        loop {
            let (code, jt, jf, k) = prog[pc];
            let at = k as usize;
            pc += 1;
            match code {
                0x30 => match packet.get(at) {
                    Some(b) => a = u32::from(*b),
                    None => return 0,
                },
                0x20 => match packet.get(at..at + 4) {
                    Some(w) => a = u32::from_be_bytes([w[0], w[1], w[2], w[3]]),
                    None => return 0,
                },
                0x74 => a >>= k,
                0x54 => a &= k,
                0x15 => pc += usize::from(if a == k { jt } else { jf }),
                0x06 => return k,
                other => panic!("unexpected instruction {other:#x}"),
            }
        }
    }

    /// An IPv6 packet (40-byte header) to `dest`.
    fn v6(dest: std::net::Ipv6Addr) -> Vec<u8> {
        let mut p = vec![0x60, 0, 0, 0, 0, 8, 17, 64];
        p.extend_from_slice(&std::net::Ipv6Addr::LOCALHOST.octets());
        p.extend_from_slice(&dest.octets());
        p.extend_from_slice(&[0; 8]);
        p
    }

    /// The watch's filter keeps what may be an outside attempt and drops
    /// loopback's own traffic (both directions) and what is too short.
    #[test]
    fn the_watch_filter_keeps_only_packets_for_outside_addresses() {
        let keep = |p: &[u8]| run_filter(&OUTSIDE_ONLY, p);
        assert_eq!(keep(&v4(6, [192, 0, 2, 1], &tcp(443, 0x02))), 128);
        assert_eq!(keep(&v4(17, [10, 0, 0, 1], &[0; 8])), 128);
        assert_eq!(keep(&v4(6, [127, 0, 0, 1], &tcp(80, 0x02))), 0);
        assert_eq!(keep(&v4(6, [127, 9, 8, 7], &tcp(80, 0x10))), 0);
        assert_eq!(keep(&v6("::1".parse().unwrap())), 0);
        assert_eq!(keep(&v6("2001:db8::53".parse().unwrap())), 128);
        assert_eq!(keep(&v6("::2".parse().unwrap())), 128);
        assert_eq!(keep(&v6("::ffff:127.0.0.1".parse().unwrap())), 128);
        assert_eq!(keep(&[0x45, 0, 0]), 0);
        let mut short = vec![0u8; 30];
        short[0] = 0x60;
        assert_eq!(keep(&short), 0);
        // Neither IPv4 nor IPv6: kept, and left to the parser.
        assert_eq!(keep(&[0x10; 40]), 128);
        assert_eq!(outside_only().len(), OUTSIDE_ONLY.len());
    }

    /// The stand-in hands its watch (socket and log) to the init's keeper,
    /// and the init goes on naming what arrives (a datagram socket stands in
    /// for the packet socket here: what it receives is read as packets).
    #[test]
    fn the_init_goes_on_watching_what_the_stand_in_hands_over() {
        let dir = tempfile::tempdir().unwrap();
        let channel = format!("mcpres-test-{}", ident::random_hex(8));
        let keeper = {
            use std::os::linux::net::SocketAddrExt as _;
            let a = std::os::unix::net::SocketAddr::from_abstract_name(
                keeper_name(&channel).as_bytes(),
            )
            .unwrap();
            std::os::unix::net::UnixDatagram::bind_addr(&a).unwrap()
        };
        let watching = std::thread::spawn(move || keep_watching(keeper));
        let (inside, outside) = std::os::unix::net::UnixDatagram::pair().unwrap();
        inside.set_nonblocking(true).unwrap();
        let log_path = dir.path().join("outside.jsonl");
        let mut watch = Watch {
            filtered: Ok(()),
            socket: rustix::fd::OwnedFd::from(inside),
            log: std::fs::File::create(&log_path).unwrap(),
            seen: Default::default(),
        };
        // Named by the stand-in while the subject lived.
        outside
            .send(&v4(6, [192, 0, 2, 1], &tcp(443, 0x02)))
            .unwrap();
        watch.drain();
        hand_over(&channel, &watch);
        drop(watch);
        // After the subject ended: named by the init.
        outside
            .send(&v4(6, [192, 0, 2, 2], &tcp(8443, 0x02)))
            .unwrap();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        let lines = loop {
            let text = std::fs::read_to_string(&log_path).unwrap();
            if text.lines().count() >= 2 || std::time::Instant::now() > deadline {
                break text;
            }
            std::thread::sleep(std::time::Duration::from_millis(5));
        };
        assert_eq!(
            lines,
            "{\"address\":\"192.0.2.1\",\"port\":443,\"protocol\":\"tcp\"}\n\
             {\"address\":\"192.0.2.2\",\"port\":8443,\"protocol\":\"tcp\"}\n"
        );
        assert!(!watching.is_finished());
    }

    /// A TCP header's first 14 bytes: source port 40000, `port`, `flags`.
    fn tcp(port: u16, flags: u8) -> Vec<u8> {
        let mut t = vec![0x9c, 0x40];
        t.extend_from_slice(&port.to_be_bytes());
        t.extend_from_slice(&[0; 9]);
        t.push(flags);
        t
    }

    #[test]
    fn outside_destinations_are_read_from_opening_packets_only() {
        use std::net::IpAddr;
        let addr = |s: &str| s.parse::<IpAddr>().unwrap();
        // A connection's SYN names its destination; its SYN-ACK, ACK and RST
        // do not.
        assert_eq!(
            outside_destination(&v4(6, [192, 0, 2, 1], &tcp(443, 0x02))),
            Some(("tcp", addr("192.0.2.1"), Some(443)))
        );
        for flags in [0x12, 0x10, 0x14, 0x04] {
            assert_eq!(
                outside_destination(&v4(6, [192, 0, 2, 1], &tcp(443, flags))),
                None
            );
        }
        // Loopback and the unspecified address are not outside.
        assert_eq!(
            outside_destination(&v4(6, [127, 0, 0, 1], &tcp(443, 0x02))),
            None
        );
        assert_eq!(
            outside_destination(&v4(17, [0, 0, 0, 0], &[0, 1, 0, 53])),
            None
        );
        // A UDP datagram, an ICMP echo request (not its reply).
        assert_eq!(
            outside_destination(&v4(17, [8, 8, 8, 8], &[0x9c, 0x40, 0, 53])),
            Some(("udp", addr("8.8.8.8"), Some(53)))
        );
        assert_eq!(
            outside_destination(&v4(1, [8, 8, 8, 8], &[8, 0])),
            Some(("icmp", addr("8.8.8.8"), None))
        );
        assert_eq!(outside_destination(&v4(1, [8, 8, 8, 8], &[0, 0])), None);
        // IPv6: a UDP datagram to 2001:db8::53 port 53.
        let mut p = vec![0x60, 0, 0, 0, 0, 8, 17, 64];
        p.extend_from_slice(&std::net::Ipv6Addr::LOCALHOST.octets());
        p.extend_from_slice(
            &"2001:db8::53"
                .parse::<std::net::Ipv6Addr>()
                .unwrap()
                .octets(),
        );
        p.extend_from_slice(&[0x9c, 0x40, 0, 53]);
        assert_eq!(
            outside_destination(&p),
            Some(("udp", addr("2001:db8::53"), Some(53)))
        );
        // Cut short or not IP at all: nothing.
        assert_eq!(outside_destination(&p[..30]), None);
        assert_eq!(outside_destination(&[]), None);
        assert_eq!(outside_destination(&[0x20, 1, 2]), None);
    }

    #[test]
    fn only_checks_of_processes_that_are_gone_are_removed() {
        let tmp = tempfile::tempdir().unwrap();
        let me = std::process::id();
        let mine = format!(
            "{PROBE_PREFIX}{me}-{}-0123456789ab",
            proc::start_time(me).unwrap()
        );
        // A process that has ended (reaped): its pid names no process with
        // that start time.
        let mut gone = std::process::Command::new("true").spawn().unwrap();
        let gone_pid = gone.id();
        gone.wait().unwrap();
        let stale = format!("{PROBE_PREFIX}{gone_pid}-1-abcdefabcdef");
        let other = format!("{PROBE_PREFIX}not-a-check");
        let file = format!("{PROBE_PREFIX}{gone_pid}-1-fedcbafedcba");
        for d in [&mine, &stale, &other] {
            std::fs::create_dir_all(tmp.path().join(d).join("probe/upper/tmp")).unwrap();
        }
        std::fs::write(tmp.path().join(&file), b"not a directory").unwrap();
        remove_stale_probes(tmp.path());
        assert!(tmp.path().join(&mine).is_dir());
        assert!(!tmp.path().join(&stale).exists());
        assert!(tmp.path().join(&other).is_dir());
        assert!(tmp.path().join(&file).is_file());
    }

    #[test]
    fn occurrences_are_counted_without_overlap() {
        assert_eq!(occurrences(b"abcabcab", b"abc"), 2);
        assert_eq!(occurrences(b"aaaa", b"aa"), 2);
        assert_eq!(occurrences(b"", b"a"), 0);
        assert_eq!(occurrences(b"abc", b""), 0);
    }

    #[test]
    fn the_snmp_table_is_read_by_its_header() {
        let text = "Ip: Forwarding DefaultTTL OutNoRoutes\nIp: 2 64 4\nUdp: InDatagrams\nUdp: 0\n";
        assert_eq!(snmp_field(text, "Ip:", "OutNoRoutes"), Some(4));
        assert_eq!(snmp_field(text, "Ip:", "Missing"), None);
        assert_eq!(snmp_field(text, "Tcp:", "OutNoRoutes"), None);
    }

    #[test]
    fn a_stage_path_that_overlay_options_cannot_name_is_refused() {
        let dir = std::env::temp_dir().join(format!("mcpres stage,{}", ident::random_hex(4)));
        let e = Stage::create(&dir, "s", false).expect_err("refused");
        assert!(e.to_string().contains("overlay options"), "{e}");
        assert!(!dir.exists());
    }
}
