//! Every descendant of a subject, including those that leave its process
//! group or session (`setsid`, `setpgid`).
//!
//! The harness process makes itself a *child subreaper*
//! (`prctl(PR_SET_CHILD_SUBREAPER)`, Linux) before it starts any subject, so a
//! descendant whose parent dies is re-parented to the harness instead of to
//! init. After each session's group kill and reap, every child of the harness
//! that is not a subject the harness itself started (and is still waiting for)
//! is such an orphaned descendant: it is recorded (pid, command name, process
//! group, session; never its environment), killed and reaped. Besides that, the
//! subject's process tree is read from `/proc` by parent pid before the kill,
//! so that descendants outside the group are recorded even when they exit.
//!
//! tokio reaps the children it spawned by their pid only, so waiting here on
//! the pids of adopted orphans (never on a pid tokio owns) does not disturb it.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

/// Set once the harness is a child subreaper.
static TRACKING: AtomicBool = AtomicBool::new(false);

/// The pids of the subject processes the harness started and has not reaped
/// yet (tokio owns them: they are never waited on here).
static OWN_CHILDREN: Mutex<BTreeSet<u32>> = Mutex::new(BTreeSet::new());

/// Make the harness a child subreaper, so that orphaned descendants of its
/// subjects are re-parented to it. Called once, before the first subject
/// starts, by the `mcpres run` process (a process that starts no other
/// children: every child it did not start itself is an adopted descendant of
/// a subject). On failure, descendants that leave the process group are
/// tracked only as long as their parent lives (the `/proc` tree scans).
pub fn track_descendants() -> std::io::Result<()> {
    rustix::process::set_child_subreaper(Some(rustix::process::getpid()))?;
    TRACKING.store(true, Ordering::SeqCst);
    Ok(())
}

/// Is the harness a child subreaper (orphaned descendants are adopted)?
pub fn tracking() -> bool {
    TRACKING.load(Ordering::SeqCst)
}

/// A subject process the harness started; tokio owns its reaping.
pub fn register_child(pid: u32) {
    OWN_CHILDREN.lock().expect("children lock").insert(pid);
}

/// The subject process was reaped by its owner (tokio).
pub fn unregister_child(pid: u32) {
    OWN_CHILDREN.lock().expect("children lock").remove(&pid);
}

/// Is `pid` a subject started here and not reaped yet?
pub fn is_own_child(pid: u32) -> bool {
    OWN_CHILDREN.lock().expect("children lock").contains(&pid)
}

fn own_children() -> BTreeSet<u32> {
    OWN_CHILDREN.lock().expect("children lock").clone()
}

/// Send SIGKILL to the process group of every subject started and not reaped
/// yet, without waiting for them (their owners reap them).
pub fn kill_own_groups() {
    for pid in own_children() {
        if let Some(p) = i32::try_from(pid)
            .ok()
            .and_then(rustix::process::Pid::from_raw)
        {
            let _ = rustix::process::kill_process_group(p, rustix::process::Signal::KILL);
        }
    }
}

/// After a termination signal: kill the process group of every subject the
/// harness started and has not reaped yet, then wait for each of them (at
/// most `limit` in all), so that none is left as a zombie or handed to init.
/// tokio would reap them only while its runtime runs; the process is about
/// to exit, so they are reaped here. Returns the pids still unreaped.
pub fn kill_and_reap_own(limit: Duration) -> Vec<u32> {
    let pids = own_children();
    for &pid in &pids {
        if let Some(p) = i32::try_from(pid)
            .ok()
            .and_then(rustix::process::Pid::from_raw)
        {
            // Each subject leads its own process group (pgid == pid).
            let _ = rustix::process::kill_process_group(p, rustix::process::Signal::KILL);
            let _ = rustix::process::kill_process(p, rustix::process::Signal::KILL);
        }
    }
    let until = Instant::now() + limit;
    let mut left: Vec<u32> = pids.into_iter().collect();
    while !left.is_empty() {
        left.retain(|&pid| {
            let Some(p) = i32::try_from(pid)
                .ok()
                .and_then(rustix::process::Pid::from_raw)
            else {
                return false;
            };
            match rustix::process::waitpid(Some(p), rustix::process::WaitOptions::NOHANG) {
                // Still running: keep waiting.
                Ok(None) => true,
                // Reaped now, or already reaped by tokio (ECHILD).
                Ok(Some(_)) | Err(_) => {
                    unregister_child(pid);
                    false
                }
            }
        });
        if left.is_empty() || Instant::now() >= until {
            break;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    left
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

/// Parse one `/proc/PID/stat` line: `pid (comm) state ppid pgrp session ...`
/// (comm may hold spaces and parentheses).
fn parse_stat(pid: u32, stat: &str) -> Option<Proc> {
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

/// The descendants of `roots` in `procs` (by parent pid; the roots excluded),
/// in pid order.
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
        .collect()
}

/// Children of the harness that it did not start itself: descendants of a
/// subject, adopted after their parent died (only while [`tracking`]).
pub fn adopted(procs: &BTreeMap<u32, Proc>) -> Vec<Proc> {
    if !tracking() {
        return Vec::new();
    }
    let me = rustix::process::getpid()
        .as_raw_nonzero()
        .get()
        .unsigned_abs();
    let own = own_children();
    procs
        .values()
        .filter(|p| p.ppid == me && !own.contains(&p.pid))
        .cloned()
        .collect()
}

/// The process tree of a subject right now: every descendant of `root`, plus
/// every adopted orphan and its descendants (a subject that exited already
/// has handed its children to the harness). Each entry says whether it is
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

/// What a sweep for adopted descendants found.
#[derive(Debug, Clone, Default)]
pub struct Swept {
    /// Alive when found: left behind by the subject, killed and reaped by the harness.
    pub killed: Vec<Value>,
    /// Already exited (zombies) when found: reaped.
    pub exited: Vec<Value>,
    /// Still present when the sweep gave up (should stay empty).
    pub remaining: Vec<Value>,
}

/// How long a sweep keeps killing and reaping.
const SWEEP_LIMIT: Duration = Duration::from_secs(2);

/// Kill and reap every adopted descendant (and their descendants), each
/// recorded the first time it is seen. Does nothing unless [`tracking`].
pub async fn sweep() -> Swept {
    let mut out = Swept::default();
    if !tracking() {
        return out;
    }
    let mut seen = BTreeSet::new();
    let until = Instant::now() + SWEEP_LIMIT;
    loop {
        let procs = snapshot();
        let orphans = adopted(&procs);
        if orphans.is_empty() {
            break;
        }
        let roots: Vec<u32> = orphans.iter().map(|p| p.pid).collect();
        let below = descendants(&procs, &roots);
        for p in orphans.iter().chain(below.iter()) {
            if seen.insert(p.pid) {
                if p.zombie() {
                    out.exited.push(p.to_json());
                } else {
                    out.killed.push(p.to_json());
                }
            }
            if !p.zombie()
                && let Some(pid) = rustix::process::Pid::from_raw(p.pid as i32)
            {
                let _ = rustix::process::kill_process(pid, rustix::process::Signal::KILL);
            }
        }
        // Only adopted orphans are our children: reap those (their own
        // children are re-parented to the harness when they die, and are
        // reaped on a later pass).
        for p in &orphans {
            if let Some(pid) = rustix::process::Pid::from_raw(p.pid as i32) {
                let _ = rustix::process::waitpid(Some(pid), rustix::process::WaitOptions::NOHANG);
            }
        }
        if Instant::now() >= until {
            out.remaining = adopted(&snapshot()).iter().map(Proc::to_json).collect();
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    out
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
        assert!(parse_stat(1, "garbage").is_none());
    }

    #[test]
    fn descendants_follow_parent_pids_across_groups() {
        let mk = |pid, ppid, pgid| Proc {
            pid,
            ppid,
            pgid,
            sid: pgid,
            comm: "x".into(),
            state: "S".into(),
        };
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
    }
}
