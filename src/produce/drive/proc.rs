//! The one reader of `/proc` (Linux): a process's state, parent, group and
//! session; every process, the descendants of a subject, the descendants a
//! subreaper adopted; the files and sockets a process holds; the TCP
//! sockets of `/proc/net/tcp` and `/proc/net/tcp6`.
//!
//! Also the registry of the subject processes this process started and has
//! not reaped yet (their owners reap them: they are never waited on here),
//! and whether this process adopts orphaned descendants (see
//! `end::track_descendants`): together they say which children of
//! this process are adopted orphans.

use std::collections::{BTreeMap, BTreeSet};
use std::net::{IpAddr, SocketAddr};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

use serde_json::{Value, json};

/// Set once this process is a child subreaper.
static TRACKING: AtomicBool = AtomicBool::new(false);

/// The pids of the subject processes started here and not reaped yet.
static OWN_CHILDREN: Mutex<BTreeSet<u32>> = Mutex::new(BTreeSet::new());

/// This process became a child subreaper (see `end::track_descendants`).
pub(super) fn set_tracking() {
    TRACKING.store(true, Ordering::SeqCst);
}

/// Is this process a child subreaper (orphaned descendants are adopted)?
pub fn tracking() -> bool {
    TRACKING.load(Ordering::SeqCst)
}

/// A subject process started here; its owner reaps it.
pub fn register_child(pid: u32) {
    OWN_CHILDREN
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .insert(pid);
}

/// The subject process was reaped by its owner.
pub fn unregister_child(pid: u32) {
    OWN_CHILDREN
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .remove(&pid);
}

/// Is `pid` a subject started here and not reaped yet?
pub fn is_own_child(pid: u32) -> bool {
    OWN_CHILDREN
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .contains(&pid)
}

/// Every subject started here and not reaped yet.
pub fn own_children() -> BTreeSet<u32> {
    OWN_CHILDREN
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .clone()
}

/// One process, read from `/proc/PID/stat` (no environment, no argv).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Proc {
    pub pid: u32,
    pub ppid: u32,
    pub pgid: i32,
    pub sid: i32,
    pub comm: String,
    /// The `/proc` state letter (`R`, `S`, `Z`, ...).
    pub state: String,
}

impl Proc {
    pub fn zombie(&self) -> bool {
        self.state == "Z"
    }

    /// The record that goes into the evidence.
    pub fn to_json(&self) -> Value {
        json!({
            "pid": self.pid, "parentPid": self.ppid, "processGroup": self.pgid,
            "sessionId": self.sid, "command": self.comm, "state": self.state,
        })
    }
}

/// Parse one `/proc/PID/stat` line: `pid (comm) state ppid pgrp session ...`.
/// The command name may hold spaces and parentheses, so it runs from the
/// first `(` to the last `)`.
pub fn parse_stat(pid: u32, stat: &str) -> Option<Proc> {
    let open = stat.find('(')?;
    let close = stat.rfind(')')?;
    let comm = stat.get(open + 1..close)?.to_string();
    let mut fields = stat[close + 1..].split_whitespace();
    let state = fields.next()?.to_string();
    let ppid = fields.next()?.parse().ok()?;
    let pgid = fields.next()?.parse().ok()?;
    let sid = fields.next()?.parse().ok()?;
    Some(Proc {
        pid,
        ppid,
        pgid,
        sid,
        comm,
        state,
    })
}

/// Process `pid` right now, if it exists (a zombie included).
pub fn read(pid: u32) -> Option<Proc> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    parse_stat(pid, &stat)
}

/// What a process does with one signal, read from the masks in
/// `/proc/PID/status` (`SigIgn`, `SigCgt`, `SigBlk` of its main thread,
/// `ShdPnd`): the kernel's own record, not a guess from how long it took.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Disposition {
    /// `SIG_IGN`: the signal is discarded; waiting longer changes nothing.
    Ignored,
    /// A handler is installed; what it does is the subject's.
    Caught,
    /// The default action (for SIGTERM, SIGINT: the process ends once the
    /// kernel delivers it).
    Default,
}

impl Disposition {
    pub fn as_str(self) -> &'static str {
        match self {
            Disposition::Ignored => "ignored",
            Disposition::Caught => "caught",
            Disposition::Default => "default",
        }
    }
}

/// The masks of one `/proc/PID/status` text: (disposition of `signo`, still
/// pending for the process, blocked by its main thread).
pub fn parse_signal_masks(status: &str, signo: i32) -> Option<(Disposition, bool, bool)> {
    if !(1..=64).contains(&signo) {
        return None;
    }
    let bit = 1u64 << (signo - 1);
    let mask = |name: &str| -> Option<bool> {
        let line = status.lines().find(|l| l.starts_with(name))?;
        let hex = line[name.len()..].trim();
        u64::from_str_radix(hex, 16).ok().map(|m| m & bit != 0)
    };
    let disposition = if mask("SigIgn:")? {
        Disposition::Ignored
    } else if mask("SigCgt:")? {
        Disposition::Caught
    } else {
        Disposition::Default
    };
    Some((
        disposition,
        mask("ShdPnd:").unwrap_or(false),
        mask("SigBlk:").unwrap_or(false),
    ))
}

/// [`parse_signal_masks`] for process `pid` right now (`None` once it is
/// gone).
pub fn signal_masks(pid: u32, signo: i32) -> Option<(Disposition, bool, bool)> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    parse_signal_masks(&status, signo)
}

/// Is process `pid` running (not gone, not a zombie)?
pub fn alive(pid: u32) -> bool {
    read(pid).is_some_and(|p| !p.zombie())
}

/// Every process `/proc` shows, by pid.
pub fn snapshot() -> BTreeMap<u32, Proc> {
    let mut out = BTreeMap::new();
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return out;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name.to_str().and_then(|n| n.parse::<u32>().ok()) else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
            continue;
        };
        if let Some(p) = parse_stat(pid, &stat) {
            out.insert(pid, p);
        }
    }
    out
}

/// Is `p` the first process of a subject's PID namespace that the sandbox
/// started (`mcpres __sandbox-init`, see `sandbox::init_main`)? Its command
/// name says so, and the kernel confirms it: it is process 1 of a namespace
/// one level below this process's (`NSpid` has two numbers, the second 1).
/// A subject's descendant can take that name but not that place: every one
/// of them lives in that namespace or below it.
/// An init this process killed and has not seen gone (it may still be
/// tearing its namespaces down) is one too, by pid and start time.
pub fn is_sandbox_init(p: &Proc) -> bool {
    p.comm == super::sandbox::INIT_COMM
        && (std::fs::read_to_string(format!("/proc/{}/status", p.pid)).is_ok_and(|t| {
            t.lines()
                .find_map(|l| l.strip_prefix("NSpid:"))
                .is_some_and(|ids| {
                    let ids: Vec<&str> = ids.split_whitespace().collect();
                    ids.len() == 2 && ids[1] == "1"
                })
        }) || start_time(p.pid).is_some_and(|t| super::sandbox::was_ended_init(p.pid, t)))
}

/// The processes (zombies included) in the PID namespace whose first
/// process is `init` (which is left out), found by the namespace each
/// process is in (`/proc/PID/ns/pid`), not by who its parent is.
pub fn pid_namespace_members(init: u32) -> Vec<Proc> {
    pid_namespace(init).map_or_else(Vec::new, |ns| in_pid_namespace(&ns, init))
}

/// The PID namespace process `pid` is in (`/proc/PID/ns/pid`, as
/// `pid:[INODE]`).
pub fn pid_namespace(pid: u32) -> Option<std::path::PathBuf> {
    std::fs::read_link(format!("/proc/{pid}/ns/pid")).ok()
}

/// The processes (zombies included) in PID namespace `ns` (from
/// [`pid_namespace`]), `except` left out.
pub fn in_pid_namespace(ns: &std::path::Path, except: u32) -> Vec<Proc> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    // The namespace link first (one `readlink`), the status only of those
    // in it.
    entries
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter(|&pid| pid != except && pid_namespace(pid).is_some_and(|n| n == ns))
        .filter_map(read)
        .collect()
}

/// The descendants of `roots` in `procs` (by parent pid; the roots excluded),
/// in pid order. A sandbox's namespace init (see [`is_sandbox_init`]) is
/// walked through but never listed: it is mcpres's, not the subject's.
pub fn descendants(procs: &BTreeMap<u32, Proc>, roots: &[u32]) -> Vec<Proc> {
    let mut children: BTreeMap<u32, Vec<u32>> = BTreeMap::new();
    for p in procs.values() {
        children.entry(p.ppid).or_default().push(p.pid);
    }
    let mut seen = BTreeSet::new();
    let mut stack: Vec<u32> = roots.to_vec();
    while let Some(pid) = stack.pop() {
        for &c in children.get(&pid).into_iter().flatten() {
            if seen.insert(c) {
                stack.push(c);
            }
        }
    }
    let roots: BTreeSet<u32> = roots.iter().copied().collect();
    seen.into_iter()
        .filter(|p| !roots.contains(p))
        .filter_map(|p| procs.get(&p).cloned())
        .filter(|p| !is_sandbox_init(p))
        .collect()
}

/// Process `pid` and its descendants right now.
pub fn process_tree(pid: u32) -> Vec<u32> {
    let procs = snapshot();
    let mut pids = vec![pid];
    pids.extend(descendants(&procs, &[pid]).iter().map(|p| p.pid));
    pids
}

/// The children of process `me` in `procs` that are not in `own`: while
/// `me` is a child subreaper, descendants of its subjects adopted after
/// their parent died.
pub fn adopted_by(procs: &BTreeMap<u32, Proc>, me: u32, own: &BTreeSet<u32>) -> Vec<Proc> {
    procs
        .values()
        .filter(|p| p.ppid == me && !own.contains(&p.pid) && !is_sandbox_init(p))
        .cloned()
        .collect()
}

/// Children of this process that it did not start itself: descendants of a
/// subject, adopted after their parent died (only while [`tracking`]).
pub fn adopted(procs: &BTreeMap<u32, Proc>) -> Vec<Proc> {
    if !tracking() {
        return Vec::new();
    }
    let me = rustix::process::getpid()
        .as_raw_nonzero()
        .get()
        .unsigned_abs();
    adopted_by(procs, me, &own_children())
}

/// The process tree of a subject right now: every descendant of `root`, plus
/// every adopted orphan and its descendants (a subject that exited already
/// has handed its children to this process). Each entry says whether it is
/// outside the subject's process group `pgid`.
pub fn subject_tree(root: u32, pgid: i32) -> Vec<Value> {
    let procs = snapshot();
    let mut roots = vec![root];
    let orphans = adopted(&procs);
    roots.extend(orphans.iter().map(|p| p.pid));
    let mut found: BTreeMap<u32, Proc> = orphans.into_iter().map(|p| (p.pid, p)).collect();
    found.extend(descendants(&procs, &roots).into_iter().map(|p| (p.pid, p)));
    found
        .values()
        .map(|p| {
            let mut v = p.to_json();
            v["outsideGroup"] = json!(p.pgid != pgid);
            v
        })
        .collect()
}

/// The processes of group `pgid` right now (zombies included).
pub fn group(pgid: i32) -> Vec<Proc> {
    if pgid <= 0 {
        return Vec::new();
    }
    snapshot()
        .into_values()
        .filter(|p| p.pgid == pgid)
        .collect()
}

/// Processes whose process group is `pgid`: (live, zombies).
pub fn group_members(pgid: i32) -> (usize, usize) {
    let members = group(pgid);
    let zombies = members.iter().filter(|p| p.zombie()).count();
    (members.len() - zombies, zombies)
}

/// When process `pid` started, in clock ticks since boot (`/proc/PID/stat`
/// field 22): with its pid, it names one process, never a later one that
/// reuses the number.
pub fn start_time(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let close = stat.rfind(')')?;
    // After the command: state (field 3) .. starttime (field 22).
    stat[close + 1..].split_whitespace().nth(19)?.parse().ok()
}

/// The executable process `pid` runs (`/proc/PID/exe`).
pub fn exe(pid: u32) -> Option<std::path::PathBuf> {
    std::fs::read_link(format!("/proc/{pid}/exe")).ok()
}

/// The argument vector of process `pid` (`/proc/PID/cmdline`; empty
/// arguments left out).
pub fn cmdline(pid: u32) -> Vec<String> {
    std::fs::read(format!("/proc/{pid}/cmdline"))
        .map(|b| {
            b.split(|&c| c == 0)
                .filter(|s| !s.is_empty())
                .map(|s| String::from_utf8_lossy(s).into_owned())
                .collect()
        })
        .unwrap_or_default()
}

/// The targets of the file descriptors process `pid` holds open.
pub fn fd_targets(pid: u32) -> Vec<std::path::PathBuf> {
    let Ok(fds) = std::fs::read_dir(format!("/proc/{pid}/fd")) else {
        return Vec::new();
    };
    fds.flatten()
        .filter_map(|fd| std::fs::read_link(fd.path()).ok())
        .collect()
}

/// The regular files the live processes of group `pgid` hold open, read from
/// `/proc/PID/fd` (sorted, without duplicates): absolute paths that still
/// exist, outside `/dev` (except `/dev/shm`), `/proc` and `/sys`. An unlinked
/// file (`(deleted)`) cannot be left behind and is not listed.
pub fn open_files(pgid: i32) -> Vec<String> {
    let mut files = BTreeSet::new();
    for p in group(pgid) {
        if p.zombie() {
            continue;
        }
        for target in fd_targets(p.pid) {
            let Some(t) = target.to_str() else { continue };
            if !t.starts_with('/')
                || t.ends_with(" (deleted)")
                || (t.starts_with("/dev/") && !t.starts_with("/dev/shm/"))
                || t.starts_with("/proc/")
                || t.starts_with("/sys/")
            {
                continue;
            }
            if std::fs::metadata(&target).is_ok_and(|m| m.is_file()) {
                files.insert(t.to_string());
            }
        }
    }
    files.into_iter().collect()
}

/// The inodes of the sockets process `pid` holds (`socket:[INODE]`).
pub fn socket_inodes(pid: u32) -> BTreeSet<u64> {
    fd_targets(pid)
        .iter()
        .filter_map(|t| {
            t.to_str()?
                .strip_prefix("socket:[")?
                .strip_suffix(']')?
                .parse()
                .ok()
        })
        .collect()
}

/// The inode of a socket, the number `/proc/net/tcp` lists it by: it names
/// this very socket, where its port may be handed to another listener as
/// soon as it is closed.
pub fn socket_inode(socket: impl std::os::fd::AsFd) -> Option<u64> {
    rustix::fs::fstat(socket).ok().map(|st| st.st_ino)
}

/// The network interfaces of the calling process's network namespace, from
/// `/proc/self/net/dev`.
pub fn interfaces() -> Vec<String> {
    std::fs::read_to_string("/proc/self/net/dev")
        .unwrap_or_default()
        .lines()
        .skip(2)
        .filter_map(|l| l.split_once(':').map(|(name, _)| name.trim().to_string()))
        .filter(|n| !n.is_empty())
        .collect()
}

/// The `/proc/net/tcp` state of a listening socket.
pub const TCP_LISTEN: &str = "0A";

/// One row of `/proc/net/tcp` or `/proc/net/tcp6`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TcpSocket {
    pub local: SocketAddr,
    /// A listener's is the unspecified address with port 0.
    pub remote: SocketAddr,
    /// The state as the kernel writes it: `01` established, `08`
    /// close-wait, `0A` listen, ...
    pub state: String,
    pub inode: u64,
}

impl TcpSocket {
    pub fn listening(&self) -> bool {
        self.state == TCP_LISTEN
    }
}

/// An address as `/proc/net/tcp{,6}` writes it: the address's bytes as
/// 32-bit words in host byte order, in hex, then `:` and the port in hex.
/// Four bytes are an IPv4 address, sixteen an IPv6 one (an IPv4-mapped
/// address stays IPv6).
pub fn decode_addr(field: &str) -> Option<SocketAddr> {
    let (addr, port) = field.rsplit_once(':')?;
    let port = u16::from_str_radix(port, 16).ok()?;
    let mut bytes = Vec::with_capacity(16);
    for i in (0..addr.len()).step_by(8) {
        let word = u32::from_str_radix(addr.get(i..i + 8)?, 16).ok()?;
        bytes.extend_from_slice(&word.to_ne_bytes());
    }
    let ip = match bytes.len() {
        4 => IpAddr::from(<[u8; 4]>::try_from(bytes).ok()?),
        16 => IpAddr::from(<[u8; 16]>::try_from(bytes).ok()?),
        _ => return None,
    };
    Some(SocketAddr::new(ip, port))
}

/// The rows of one `/proc/net/tcp{,6}` table (its header line skipped;
/// a row that does not decode is left out).
pub fn parse_tcp_table(text: &str) -> Vec<TcpSocket> {
    text.lines()
        .skip(1)
        .filter_map(|line| {
            // sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode ...
            let f: Vec<&str> = line.split_whitespace().collect();
            if f.len() <= 9 {
                return None;
            }
            Some(TcpSocket {
                local: decode_addr(f[1])?,
                remote: decode_addr(f[2])?,
                state: f[3].to_string(),
                inode: f[9].parse().ok()?,
            })
        })
        .collect()
}

/// Every TCP socket of the caller's network namespace, IPv4 then IPv6.
pub fn tcp_sockets() -> Vec<TcpSocket> {
    tcp_sockets_in(None)
}

/// Every TCP socket of the network namespace process `of` is in (the
/// caller's own with `None`), IPv4 then IPv6: a sandboxed subject's sockets
/// are in a namespace of its own.
pub fn tcp_sockets_in(of: Option<u32>) -> Vec<TcpSocket> {
    let dir = of.map_or_else(|| "/proc/net".to_string(), |pid| format!("/proc/{pid}/net"));
    ["tcp", "tcp6"]
        .iter()
        .flat_map(|file| {
            parse_tcp_table(&std::fs::read_to_string(format!("{dir}/{file}")).unwrap_or_default())
        })
        .collect()
}

/// The listening TCP sockets on `port`, in the network namespace of
/// process `of` (the caller's own with `None`).
pub fn listening_on(of: Option<u32>, port: u16) -> Vec<TcpSocket> {
    tcp_sockets_in(of)
        .into_iter()
        .filter(|s| s.listening() && s.local.port() == port)
        .collect()
}

/// The local addresses with a listening TCP socket on `port` (in the
/// network namespace of process `of`), sorted and without duplicates: shows
/// whether a subject bound loopback only or every interface.
pub fn listening_addresses(of: Option<u32>, port: u16) -> Vec<String> {
    let mut out: Vec<String> = listening_on(of, port)
        .iter()
        .map(|s| s.local.ip().to_string())
        .collect();
    out.sort();
    out.dedup();
    out
}

/// Whether the listening TCP socket with this inode still exists (in this
/// network namespace). Closing a listener removes its row at once.
pub fn inode_listening(inode: u64) -> bool {
    tcp_sockets()
        .iter()
        .any(|s| s.listening() && s.inode == inode)
}

/// The processes that hold a listening TCP socket on `port` (in the
/// network namespace of process `of`).
pub fn listener_owners(of: Option<u32>, port: u16) -> Vec<u32> {
    let inodes: BTreeSet<u64> = listening_on(of, port).iter().map(|s| s.inode).collect();
    if inodes.is_empty() {
        return Vec::new();
    }
    snapshot()
        .into_keys()
        .filter(|&pid| !socket_inodes(pid).is_disjoint(&inodes))
        .collect()
}

/// The TCP sockets the processes `pids` hold, with the remote address:
/// (local port, remote address, state). A listener's remote address is the
/// unspecified address with port 0.
pub fn socket_peers(pids: &[u32]) -> Vec<(u16, SocketAddr, String)> {
    let inodes: BTreeSet<u64> = pids.iter().flat_map(|&pid| socket_inodes(pid)).collect();
    // Each network namespace the processes are in, read once (a sandboxed
    // subject's is its own).
    let mut spaces = BTreeMap::new();
    for &pid in pids {
        if let Ok(ns) = std::fs::read_link(format!("/proc/{pid}/ns/net")) {
            spaces.entry(ns).or_insert(pid);
        }
    }
    let tables: Vec<TcpSocket> = if spaces.is_empty() {
        tcp_sockets()
    } else {
        spaces
            .into_values()
            .flat_map(|pid| tcp_sockets_in(Some(pid)))
            .collect()
    };
    tables
        .into_iter()
        .filter(|s| inodes.contains(&s.inode))
        .map(|s| (s.local.port(), s.remote, s.state))
        .collect()
}

/// The TCP sockets the processes `pids` hold: (local port, remote port,
/// state).
pub fn sockets_of(pids: &[u32]) -> Vec<(u16, u16, String)> {
    socket_peers(pids)
        .into_iter()
        .map(|(local, remote, state)| (local, remote.port(), state))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_lines_with_odd_command_names_parse() {
        let p = parse_stat(42, "42 (a (b) c) S 7 42 40 0 -1 4194560").unwrap();
        assert_eq!(p.comm, "a (b) c");
        assert_eq!((p.ppid, p.pgid, p.sid), (7, 42, 40));
        assert!(!p.zombie());
        let p = parse_stat(9, "9 (x) y) Z 1 9 9 0").unwrap();
        assert_eq!(p.comm, "x) y");
        assert!(p.zombie());
        let p = parse_stat(5, "5 ( ) R 4 -1 3").unwrap();
        assert_eq!((p.comm.as_str(), p.pgid), (" ", -1));
        assert!(parse_stat(1, "garbage").is_none());
        assert!(parse_stat(1, "1 (cut) S 2").is_none());
        assert!(parse_stat(1, "1 (bad) S x 1 1").is_none());
    }

    #[test]
    fn signal_masks_read_the_bit_of_the_signal_asked_for() {
        // SIGTERM is 15: bit 14 (0x4000); SIGINT is 2: bit 1 (0x2).
        let status = "Name:\tx\nShdPnd:\t0000000000000000\nSigBlk:\t0000000000000002\n\
                      SigIgn:\t0000000000004000\nSigCgt:\t0000000000000002\n";
        assert_eq!(
            parse_signal_masks(status, 15),
            Some((Disposition::Ignored, false, false))
        );
        assert_eq!(
            parse_signal_masks(status, 2),
            Some((Disposition::Caught, false, true))
        );
        assert_eq!(
            parse_signal_masks(status, 1),
            Some((Disposition::Default, false, false))
        );
        assert_eq!(parse_signal_masks(status, 0), None);
        assert_eq!(parse_signal_masks(status, 65), None);
        assert_eq!(parse_signal_masks("Name:\tx\n", 15), None);
    }

    /// Real processes: `trap '' TERM` survives `exec` as SIG_IGN, a shell
    /// trap with a command is a handler, and `sleep` alone has the default.
    #[test]
    fn the_kernel_masks_of_real_processes_read_as_their_dispositions() {
        let start = |script: &str| {
            std::process::Command::new("sh")
                .args(["-c", script])
                .stdin(std::process::Stdio::null())
                .spawn()
                .expect("sh")
        };
        let wait_for = |pid: u32, want: Disposition| {
            for _ in 0..500 {
                if signal_masks(pid, 15).map(|m| m.0) == Some(want) {
                    return true;
                }
                std::thread::sleep(std::time::Duration::from_millis(10));
            }
            false
        };
        let mut ignored = start("trap '' TERM; exec sleep 30");
        let mut caught = start("trap 'exit 3' TERM; while :; do sleep 1; done");
        let mut default = std::process::Command::new("sleep")
            .arg("30")
            .spawn()
            .expect("sleep");
        assert!(wait_for(ignored.id(), Disposition::Ignored));
        assert!(wait_for(caught.id(), Disposition::Caught));
        assert!(wait_for(default.id(), Disposition::Default));
        for c in [&mut ignored, &mut caught, &mut default] {
            let _ = c.kill();
            let _ = c.wait();
        }
        assert_eq!(signal_masks(default.id(), 15), None);
    }

    #[test]
    fn this_process_reads_as_alive_in_its_own_group() {
        let me = std::process::id();
        let p = read(me).expect("this process in /proc");
        assert_eq!(p.pid, me);
        assert!(alive(me));
        assert!(snapshot().contains_key(&me));
        assert!(group(p.pgid).iter().any(|q| q.pid == me));
        assert_eq!(exe(me), std::env::current_exe().ok());
        assert!(!cmdline(me).is_empty());
    }

    fn mk(pid: u32, ppid: u32, pgid: i32) -> Proc {
        Proc {
            pid,
            ppid,
            pgid,
            sid: pgid,
            comm: "x".into(),
            state: "S".into(),
        }
    }

    #[test]
    fn descendants_follow_parent_pids_across_groups() {
        let procs: BTreeMap<u32, Proc> = [
            mk(10, 1, 10),
            mk(11, 10, 10),
            mk(12, 11, 12),
            mk(13, 12, 12),
            mk(20, 1, 20),
        ]
        .into_iter()
        .map(|p| (p.pid, p))
        .collect();
        let d: Vec<u32> = descendants(&procs, &[10]).iter().map(|p| p.pid).collect();
        assert_eq!(d, vec![11, 12, 13]);
        assert!(descendants(&procs, &[20]).is_empty());
        let d: Vec<u32> = descendants(&procs, &[10, 12])
            .iter()
            .map(|p| p.pid)
            .collect();
        assert_eq!(d, vec![11, 13]);
    }

    #[test]
    fn adopted_children_are_those_not_started_here() {
        // 100 is this process; 101 a subject it started; 102 and 103 were
        // re-parented to it; 104 is a grandchild, 105 someone else's.
        let procs: BTreeMap<u32, Proc> = [
            mk(100, 1, 100),
            mk(101, 100, 101),
            mk(102, 100, 101),
            mk(103, 100, 103),
            mk(104, 102, 101),
            mk(105, 1, 105),
        ]
        .into_iter()
        .map(|p| (p.pid, p))
        .collect();
        let own = BTreeSet::from([101]);
        let a: Vec<u32> = adopted_by(&procs, 100, &own)
            .iter()
            .map(|p| p.pid)
            .collect();
        assert_eq!(a, vec![102, 103]);
        assert!(adopted_by(&procs, 105, &own).is_empty());
    }

    /// A `/proc/net/tcp{,6}` address field for these bytes and port.
    fn field(bytes: &[u8], port: u16) -> String {
        let words: String = bytes
            .chunks(4)
            .map(|w| format!("{:08X}", u32::from_ne_bytes(w.try_into().unwrap())))
            .collect();
        format!("{words}:{port:04X}")
    }

    #[test]
    fn tcp_addresses_decode_for_ipv4_ipv6_and_v4_mapped() {
        let lo = decode_addr(&field(&[127, 0, 0, 1], 8080)).unwrap();
        assert_eq!(lo, "127.0.0.1:8080".parse().unwrap());
        assert_eq!(
            decode_addr(&field(&[0, 0, 0, 0], 0)).unwrap(),
            "0.0.0.0:0".parse().unwrap()
        );
        let mut one = [0u8; 16];
        one[15] = 1;
        assert_eq!(
            decode_addr(&field(&one, 443)).unwrap(),
            "[::1]:443".parse().unwrap()
        );
        let mut mapped = [0u8; 16];
        mapped[10] = 0xff;
        mapped[11] = 0xff;
        mapped[12..].copy_from_slice(&[127, 0, 0, 1]);
        let v6 = decode_addr(&field(&mapped, 443)).unwrap();
        assert_eq!(v6, "[::ffff:127.0.0.1]:443".parse().unwrap());
        assert_eq!(v6.ip().to_string(), "::ffff:127.0.0.1");
        assert_eq!(decode_addr("0100007F"), None);
        assert_eq!(decode_addr("XYZ:0050"), None);
        assert_eq!(decode_addr("0100007F0:0050"), None);
    }

    #[test]
    fn tcp_tables_give_state_and_inode() {
        let v4 = format!(
            "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n   \
             0: {} {} 0A 00000000:00000000 00:00000000 00000000  1000        0 4242 1 0000000000000000 100 0 0 10 0\n   \
             1: {} {} 01 00000000:00000000 00:00000000 00000000  1000        0 4343 1\n   \
             2: short row\n",
            field(&[127, 0, 0, 1], 3000),
            field(&[0, 0, 0, 0], 0),
            field(&[127, 0, 0, 1], 3000),
            field(&[127, 0, 0, 1], 41000),
        );
        let rows = parse_tcp_table(&v4);
        assert_eq!(rows.len(), 2);
        assert!(rows[0].listening());
        assert_eq!(rows[0].local, "127.0.0.1:3000".parse().unwrap());
        assert_eq!(rows[0].inode, 4242);
        assert!(!rows[1].listening());
        assert_eq!(rows[1].remote.port(), 41000);
        assert_eq!(rows[1].state, "01");
        let v6 = format!(
            "  sl  local_address                         remote_address                        st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n   \
             0: {} {} 0A 00000000:00000000 00:00000000 00000000  1000        0 77 1\n",
            field(&[0; 16], 8443),
            field(&[0; 16], 0),
        );
        let rows = parse_tcp_table(&v6);
        assert_eq!(rows.len(), 1);
        assert_eq!(rows[0].local, "[::]:8443".parse().unwrap());
        assert_eq!(rows[0].inode, 77);
    }

    #[test]
    fn a_listener_is_found_by_port_inode_and_owner() {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = l.local_addr().unwrap().port();
        let inode = socket_inode(&l).expect("an inode");
        assert!(inode_listening(inode));
        // Another listener does not answer for this one.
        let other = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        assert_ne!(socket_inode(&other), Some(inode));
        assert_eq!(
            listening_addresses(None, port),
            vec!["127.0.0.1".to_string()]
        );
        assert_eq!(listener_owners(None, port), vec![std::process::id()]);
        assert_eq!(
            listener_owners(Some(std::process::id()), port),
            vec![std::process::id()]
        );
        let held = sockets_of(&[std::process::id()]);
        assert!(
            held.contains(&(port, 0, TCP_LISTEN.to_string())),
            "{held:?}"
        );
        drop(l);
        assert!(!inode_listening(inode));
        assert!(inode_listening(socket_inode(&other).unwrap()));
        assert!(listener_owners(None, port).is_empty());
    }
}
