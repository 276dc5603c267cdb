//! Ending subjects: the one group kill, the one termination sequence (the
//! leader's own exit, SIGTERM, grace, SIGKILL to the group, the group
//! measured), the subreaper, the one sweep of adopted orphans, and the kill
//! of every subject still running when the process is stopped.
//!
//! Everything here is synchronous; the async harness runs it on a blocking
//! thread ([`sweep_async`], [`end_group`] under `spawn_blocking`).
//!
//! A process that adopts orphans (see [`track_descendants`]) takes every
//! child it did not start itself for an escaped descendant of a subject: a
//! descendant whose parent dies is re-parented to it instead of to init, and
//! is found, killed and reaped by [`sweep`].

use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

use rustix::process::{Pid, Signal, WaitOptions};
use serde_json::Value;

use super::proc::{self, Proc};
use super::spawn::SPAWN_LOCK;

fn pid_of(pid: u32) -> Option<Pid> {
    i32::try_from(pid).ok().and_then(Pid::from_raw)
}

/// Send SIGKILL to the whole process group `pgid`; `Ok(false)` when no
/// process was left in it.
pub fn kill_group(pgid: i32) -> std::io::Result<bool> {
    let Some(pid) = Pid::from_raw(pgid) else {
        return Ok(false);
    };
    match rustix::process::kill_process_group(pid, Signal::KILL) {
        Ok(()) => Ok(true),
        Err(e) if e == rustix::io::Errno::SRCH => Ok(false),
        Err(e) => Err(e.into()),
    }
}

/// Send `signal` to process `pid` alone (not its group).
pub fn signal(pid: u32, signal: Signal) {
    if let Some(p) = pid_of(pid) {
        let _ = rustix::process::kill_process(p, signal);
    }
}

/// Make this process a child subreaper (`prctl(PR_SET_CHILD_SUBREAPER)`), so
/// that orphaned descendants of its subjects are re-parented to it. Called
/// once, before the first subject starts, by a process that starts no other
/// children: every child it did not start itself is an adopted descendant
/// of a subject. On failure, descendants that leave the process group are
/// tracked only as long as their parent lives (the `/proc` tree scans).
pub fn track_descendants() -> std::io::Result<()> {
    rustix::process::set_child_subreaper(Some(rustix::process::getpid()))?;
    proc::set_tracking();
    Ok(())
}

/// Send SIGKILL to the process group of every subject started and not reaped
/// yet, without waiting for them (their owners reap them).
pub fn kill_own_groups() {
    for pid in proc::own_children() {
        if let Some(p) = pid_of(pid) {
            let _ = rustix::process::kill_process_group(p, Signal::KILL);
        }
    }
}

/// After a termination signal: kill the process group of every subject
/// started and not reaped yet, then wait for each of them (at most `limit`
/// in all), so that none is left as a zombie or handed to init. An async
/// owner would reap them only while its runtime runs; the process is about
/// to exit, so they are reaped here. Returns the pids still unreaped.
pub fn kill_and_reap_own(limit: Duration) -> Vec<u32> {
    let pids = proc::own_children();
    for &pid in &pids {
        if let Some(p) = pid_of(pid) {
            // Each subject leads its own process group (pgid == pid).
            let _ = rustix::process::kill_process_group(p, Signal::KILL);
            let _ = rustix::process::kill_process(p, Signal::KILL);
        }
    }
    let until = Instant::now() + limit;
    let mut left: Vec<u32> = pids.into_iter().collect();
    while !left.is_empty() {
        left.retain(|&pid| {
            let Some(p) = pid_of(pid) else {
                return false;
            };
            // Reaped and unregistered under the spawn lock: a number freed
            // here may be given to a subject started meanwhile.
            let _spawning = SPAWN_LOCK
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            match rustix::process::waitpid(Some(p), WaitOptions::NOHANG) {
                // Still running: keep waiting.
                Ok(None) => true,
                // Reaped now: no longer ours.
                Ok(Some(_)) => {
                    proc::unregister_child(pid);
                    false
                }
                // Already reaped by its owner (ECHILD), which unregistered
                // it; the number may be another subject's by now.
                Err(_) => false,
            }
        });
        if left.is_empty() || Instant::now() >= until {
            break;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    left
}

/// What a sweep for adopted descendants found.
#[derive(Debug, Clone, Default)]
pub struct Swept {
    /// Alive when found: left behind by a subject, killed and reaped here.
    pub killed: Vec<Value>,
    /// Already exited (zombies) when found: reaped.
    pub exited: Vec<Value>,
    /// Still present when the sweep gave up (should stay empty).
    pub remaining: Vec<Value>,
}

/// How long a sweep keeps killing and reaping.
const SWEEP_LIMIT: Duration = Duration::from_secs(2);

/// Kill and reap every adopted descendant (and their descendants), each
/// recorded the first time it is seen; at most `SWEEP_LIMIT`. Does nothing
/// unless [`proc::tracking`]. Each pass holds the spawn lock, so a subject
/// another thread has just started is never taken for an orphan.
pub fn sweep() -> Swept {
    sweep_where(|_| true).0
}

/// [`sweep`] limited to the adopted descendants `ours` accepts (with
/// their own descendants); the others are left alone and returned (as
/// they were when first seen), for their owner or a later sweep.
pub fn sweep_where(ours: impl Fn(&Proc) -> bool) -> (Swept, Vec<Proc>) {
    let mut out = Swept::default();
    let mut others: BTreeMap<u32, Proc> = BTreeMap::new();
    if !proc::tracking() {
        return (out, Vec::new());
    }
    let mut seen = BTreeSet::new();
    let until = Instant::now() + SWEEP_LIMIT;
    loop {
        let spawning = SPAWN_LOCK
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let procs = proc::snapshot();
        let (orphans, not_ours): (Vec<Proc>, Vec<Proc>) =
            proc::adopted(&procs).into_iter().partition(|p| ours(p));
        for p in not_ours {
            others.entry(p.pid).or_insert(p);
        }
        if orphans.is_empty() {
            break;
        }
        let roots: Vec<u32> = orphans.iter().map(|p| p.pid).collect();
        let below = proc::descendants(&procs, &roots);
        for p in orphans.iter().chain(below.iter()) {
            if seen.insert(p.pid) {
                if p.zombie() {
                    out.exited.push(p.to_json());
                } else {
                    out.killed.push(p.to_json());
                }
            }
            if !p.zombie() {
                signal(p.pid, Signal::KILL);
            }
        }
        // Only adopted orphans are our children: reap those (their own
        // children are re-parented to this process when they die, and are
        // reaped on a later pass).
        for p in &orphans {
            if let Some(pid) = pid_of(p.pid) {
                let _ = rustix::process::waitpid(Some(pid), WaitOptions::NOHANG);
            }
        }
        if Instant::now() >= until {
            out.remaining = proc::adopted(&proc::snapshot())
                .iter()
                .filter(|p| ours(p))
                .map(Proc::to_json)
                .collect();
            break;
        }
        drop(spawning);
        std::thread::sleep(Duration::from_millis(10));
    }
    (out, others.into_values().collect())
}

/// [`sweep`] on a blocking thread, for an async caller.
pub async fn sweep_async() -> Swept {
    tokio::task::spawn_blocking(sweep).await.unwrap_or_default()
}

/// Pauses between polls of something about to happen (a process about to
/// be reaped): 250 µs at first, doubling up to 5 ms. A sandboxed subject's
/// stand-in ends a moment after the subject itself, so the first look
/// usually comes a little early; a fixed 5 ms pause made every such
/// session that much longer.
#[derive(Debug, Default)]
pub struct Backoff {
    polls: u32,
}

impl Backoff {
    /// The pause before the next poll.
    pub fn next_pause(&mut self) -> Duration {
        let pause =
            Duration::from_micros(250u64 << self.polls.min(5)).min(Duration::from_millis(5));
        self.polls = self.polls.saturating_add(1);
        pause
    }

    /// Sleep for [`Backoff::next_pause`], but never past `until`.
    pub fn pause_until(&mut self, until: Instant) {
        let pause = self.next_pause();
        std::thread::sleep(pause.min(until.saturating_duration_since(Instant::now())));
    }
}

/// The leader of a subject's process group, as the termination sequence
/// sees it: it can wait for it to exit, and is told each step before it is
/// taken (to record it).
pub trait Leader {
    fn pid(&self) -> u32;
    /// Wait at most `limit` for the leader to exit (and reap it); has it?
    fn wait_exit(&mut self, limit: Duration) -> bool;
    /// The sequence is about to take `step`.
    fn step(&mut self, _step: Step<'_>) {}
}

/// A step of the termination sequence.
#[derive(Debug)]
pub enum Step<'a> {
    /// SIGTERM is sent to the leader.
    Term,
    /// SIGKILL is sent to the group.
    Kill,
    /// The group kill was sent: its result.
    Killed(&'a std::io::Result<bool>),
}

/// How a subject is ended.
#[derive(Debug, Clone, Copy)]
pub struct Ending {
    /// How long the leader may take to exit on its own first (after its
    /// stdin was closed).
    pub own_grace: Duration,
    /// SIGTERM to the leader, then this long for it to exit; `None`: no SIGTERM.
    pub term_grace: Option<Duration>,
    /// SIGKILL to the group even when the leader exited (its descendants
    /// still in the group are killed with it); otherwise only when it did not.
    pub kill_always: bool,
    /// After the group kill, how long the leader may take to be reaped.
    pub reap_limit: Duration,
    /// After the group is measured, how long it may take to empty, killed
    /// again meanwhile.
    pub settle_limit: Duration,
}

/// What the termination sequence measured.
#[derive(Debug)]
pub struct GroupEnd {
    /// The leader exited on its own within `own_grace`.
    pub exited_on_its_own: bool,
    /// SIGTERM was sent and the leader exited within its grace.
    pub terminated: bool,
    /// The group kill's result, if it was sent.
    pub killed: Option<std::io::Result<bool>>,
    /// The leader was reaped.
    pub reaped: bool,
    /// The live processes still in the group once the leader ended (after
    /// the kill, if there was one), other subjects' leaders excluded: left
    /// behind, then killed with the group.
    pub left_in_group: Vec<Proc>,
    /// Processes still in the group after the settle: (live, zombies).
    pub members: (usize, usize),
}

/// End the subject whose process group `pgid` `leader` leads: up to
/// `own_grace` for it to exit on its own; then, if it runs, SIGTERM and up
/// to `term_grace`; then SIGKILL to the whole group (always, with
/// `kill_always`) and up to `reap_limit` to reap the leader; then what is
/// left in the group is measured, killed, and killed again until the group
/// is empty or `settle_limit` passed, and measured once more.
pub fn end_group(leader: &mut dyn Leader, pgid: i32, ending: Ending) -> GroupEnd {
    let mut exited = leader.wait_exit(ending.own_grace);
    let exited_on_its_own = exited;
    let mut terminated = false;
    if !exited && let Some(grace) = ending.term_grace {
        leader.step(Step::Term);
        signal(leader.pid(), Signal::TERM);
        exited = leader.wait_exit(grace);
        terminated = exited;
    }
    let mut killed = None;
    if !exited || ending.kill_always {
        leader.step(Step::Kill);
        let result = kill_group(pgid);
        leader.step(Step::Killed(&result));
        killed = Some(result);
        if !exited {
            exited = leader.wait_exit(ending.reap_limit);
        }
    }
    // A pid another subject leads is never one of ours, even in a group
    // number that repeats ours once ours is reaped; the spawn lock is held
    // meanwhile, so a subject being started now is registered or not born.
    let spawning = SPAWN_LOCK
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    // Once our leader is reaped, a group led by a registered subject is
    // another probe's (the number was reused): nothing in it is ours.
    let reused = exited && u32::try_from(pgid).is_ok_and(proc::is_own_child);
    let left_in_group: Vec<Proc> = proc::group(pgid)
        .into_iter()
        .filter(|p| !reused && !p.zombie() && !proc::is_own_child(p.pid))
        .collect();
    if !left_in_group.is_empty() {
        let _ = kill_group(pgid);
    }
    drop(spawning);
    let mut members = proc::group_members(pgid);
    let settle = Instant::now() + ending.settle_limit;
    while members.0 > 0 && Instant::now() < settle {
        let _ = kill_group(pgid);
        std::thread::sleep(Duration::from_millis(20));
        members = proc::group_members(pgid);
    }
    GroupEnd {
        exited_on_its_own,
        terminated,
        killed,
        reaped: exited,
        left_in_group,
        members,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_backoff_starts_short_and_is_capped() {
        let mut b = Backoff::default();
        let pauses: Vec<u128> = (0..8).map(|_| b.next_pause().as_micros()).collect();
        assert_eq!(pauses, vec![250, 500, 1000, 2000, 4000, 5000, 5000, 5000]);
    }
    use crate::produce::drive::spawn::{self, Launch, StdinMode};

    /// A std child as a group leader, recording the steps.
    struct Child {
        child: std::process::Child,
        steps: Vec<String>,
    }

    impl Leader for Child {
        fn pid(&self) -> u32 {
            self.child.id()
        }

        fn wait_exit(&mut self, limit: Duration) -> bool {
            let until = Instant::now() + limit;
            loop {
                if let Ok(Some(_)) = self.child.try_wait() {
                    proc::unregister_child(self.child.id());
                    return true;
                }
                if Instant::now() >= until {
                    return false;
                }
                std::thread::sleep(Duration::from_millis(5));
            }
        }

        fn step(&mut self, step: Step<'_>) {
            self.steps.push(match step {
                Step::Term => "term".into(),
                Step::Kill => "kill".into(),
                Step::Killed(r) => format!("killed {}", r.as_ref().is_ok_and(|b| *b)),
            });
        }
    }

    fn sh(script: &str) -> Child {
        let launch = Launch {
            program: "/bin/sh".into(),
            args: vec!["-c".into(), script.into()],
            env: Default::default(),
            sandbox: None,
        };
        let cmd = spawn::command(&launch.program, &launch.args, &launch.env, StdinMode::Piped);
        Child {
            child: spawn::spawn(cmd).expect("sh starts"),
            steps: Vec::new(),
        }
    }

    /// Wait until the group holds `n` live processes (the shell has started
    /// its children); the live members.
    fn members_reach(pgid: i32, n: usize) -> Vec<Proc> {
        let until = Instant::now() + Duration::from_secs(10);
        loop {
            let live: Vec<Proc> = proc::group(pgid)
                .into_iter()
                .filter(|p| !p.zombie())
                .collect();
            if live.len() >= n || Instant::now() >= until {
                return live;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    #[test]
    fn the_sequence_ends_a_whole_group_that_ignores_sigterm() {
        // The shell ignores SIGTERM, so only the group kill ends it and its
        // two sleeping children.
        let mut leader = sh("trap '' TERM; sleep 30 & sleep 30 & wait");
        let pid = leader.pid();
        let pgid = i32::try_from(pid).unwrap();
        assert!(proc::is_own_child(pid));
        let before = members_reach(pgid, 3);
        assert_eq!(before.len(), 3, "{before:?}");
        let end = end_group(
            &mut leader,
            pgid,
            Ending {
                own_grace: Duration::from_millis(50),
                term_grace: Some(Duration::from_millis(200)),
                kill_always: false,
                reap_limit: Duration::from_secs(5),
                settle_limit: Duration::from_secs(5),
            },
        );
        assert!(!end.exited_on_its_own);
        assert!(!end.terminated);
        assert!(matches!(end.killed, Some(Ok(true))));
        assert!(end.reaped);
        assert_eq!(leader.steps, ["term", "kill", "killed true"]);
        assert_eq!(end.members.0, 0, "{:?}", proc::group(pgid));
        assert!(!proc::is_own_child(pid));
        // Nothing of the group survives (its children are zombies at most,
        // waiting for their reaper).
        for p in before {
            assert!(!proc::alive(p.pid), "{p:?} survived");
        }
    }

    #[test]
    fn a_leader_that_obeys_sigterm_leaves_its_children_to_the_measure() {
        // The shell exits on SIGTERM; its sleeping children stay in the
        // group and are measured as left behind, then killed.
        let mut leader = sh("sleep 30 & sleep 30 & wait");
        let pgid = i32::try_from(leader.pid()).unwrap();
        let before = members_reach(pgid, 3);
        assert_eq!(before.len(), 3, "{before:?}");
        let end = end_group(
            &mut leader,
            pgid,
            Ending {
                own_grace: Duration::ZERO,
                term_grace: Some(Duration::from_secs(5)),
                kill_always: false,
                reap_limit: Duration::from_secs(5),
                settle_limit: Duration::from_secs(5),
            },
        );
        assert!(end.terminated);
        assert!(end.killed.is_none());
        assert_eq!(leader.steps, ["term"]);
        let left: BTreeSet<u32> = end.left_in_group.iter().map(|p| p.pid).collect();
        assert_eq!(left.len(), 2, "{:?}", end.left_in_group);
        assert!(left.iter().all(|p| before.iter().any(|b| b.pid == *p)));
        assert_eq!(end.members.0, 0);
        for p in before {
            assert!(!proc::alive(p.pid), "{p:?} survived");
        }
    }
}
