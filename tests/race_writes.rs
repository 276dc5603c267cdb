//! Issue 16, item 1: commands that write into a directory they were given
//! cannot be raced into writing outside it. While `migrate --workspace` and
//! `unpack` run in a loop for at least ten seconds, another thread swaps a
//! directory inside the target for a symlink to a directory outside (atomic
//! `RENAME_EXCHANGE` where the file system has it, with a decoy file left in
//! the real directory). Nothing may ever land outside.
//!
//! The loops call the library functions the binary calls (thousands of
//! attempts in ten seconds) and run the real binary alongside (fewer
//! attempts: `migrate` hashes its own executable each time).
#![cfg(unix)]

mod support;

use std::ffi::OsStr;
use std::fs;
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::thread;
use std::time::{Duration, Instant};

use mcpres::json::Limits;
use mcpres::produce::{migrate, pack};

/// How long each race runs.
const RACE: Duration = Duration::from_secs(10);

fn repo(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(rel)
}

/// Everything below `dir` (not following symlinks).
fn entries(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in fs::read_dir(dir).unwrap() {
        let e = e.unwrap();
        out.push(e.path());
        if e.file_type().unwrap().is_dir() {
            out.extend(entries(&e.path()));
        }
    }
    out
}

/// Swap `a` and `b` until `stop`: atomically with `RENAME_EXCHANGE`, else
/// with three renames. Returns how many swaps were made.
fn swap_until(a: PathBuf, b: PathBuf, stop: Arc<AtomicBool>) -> u64 {
    use rustix::fs::{CWD, RenameFlags, renameat_with};
    let tmp = a.with_extension("swap");
    let mut swaps = 0;
    while !stop.load(Ordering::Relaxed) {
        let atomic = renameat_with(CWD, &a, CWD, &b, RenameFlags::EXCHANGE).is_ok();
        if !atomic {
            let _ = fs::rename(&a, &tmp);
            let _ = fs::rename(&b, &a);
            let _ = fs::rename(&tmp, &b);
        }
        swaps += 1;
    }
    swaps
}

#[test]
fn migrate_workspace_never_writes_outside_under_a_symlink_swap_race() {
    let tmp = tempfile::tempdir().unwrap();
    let work = tmp.path().join("work");
    let outside = tmp.path().join("outside");
    fs::create_dir_all(work.join("sub")).unwrap();
    fs::create_dir(&outside).unwrap();
    // The decoy: the real directory is never empty, wherever it is.
    fs::write(work.join("sub/decoy.txt"), b"decoy").unwrap();
    symlink("../outside", work.join("sub.alt")).unwrap();
    let input = tmp.path().join("in.json");
    fs::copy(repo("testdata/migration/v01/valid.json"), &input).unwrap();

    let stop = Arc::new(AtomicBool::new(false));
    let swapper = {
        let (a, b, stop) = (work.join("sub"), work.join("sub.alt"), stop.clone());
        thread::spawn(move || swap_until(a, b, stop))
    };
    // The real binary, alongside.
    let binary = {
        let (work, input, stop) = (work.clone(), input.clone(), stop.clone());
        thread::spawn(move || {
            let (mut ok, mut refused) = (0u32, 0u32);
            let mut n = 0;
            while !stop.load(Ordering::Relaxed) {
                n += 1;
                let out = support::mcpres(
                    [
                        OsStr::new("migrate"),
                        OsStr::new("v0.1"),
                        OsStr::new("--input"),
                        input.as_os_str(),
                        OsStr::new("--output"),
                        work.join(format!("sub/bin-{n}.json")).as_os_str(),
                        OsStr::new("--workspace"),
                        work.as_os_str(),
                    ]
                    .as_slice(),
                );
                match out.status.code() {
                    Some(0) => ok += 1,
                    Some(2) => refused += 1,
                    other => panic!("unexpected exit {other:?}: {}", support::output_text(&out)),
                }
            }
            (ok, refused)
        })
    };
    let (mut ok, mut refused) = (0u32, 0u32);
    let start = Instant::now();
    let mut n = 0;
    while start.elapsed() < RACE {
        n += 1;
        let request = migrate::Request {
            input: input.clone(),
            output: Some(work.join(format!("sub/out-{n}.json"))),
            dry_run: false,
            workspace: Some(work.clone()),
        };
        match migrate::run(&request, &"0".repeat(64)) {
            Ok(_) => ok += 1,
            Err(
                migrate::MigrateError::OutsideWorkspace(_)
                | migrate::MigrateError::Io(_)
                | migrate::MigrateError::OutputConflict,
            ) => refused += 1,
            Err(e) => panic!("unexpected refusal: {e}"),
        }
    }
    stop.store(true, Ordering::Relaxed);
    let swaps = swapper.join().unwrap();
    let (bin_ok, bin_refused) = binary.join().unwrap();
    eprintln!(
        "{n} in-process attempts: {ok} written, {refused} refused; binary: {bin_ok} written, {bin_refused} refused; {swaps} swaps"
    );
    assert!(swaps > 0 && ok + refused > 0 && bin_ok + bin_refused > 0);
    assert!(
        refused > 0,
        "the swap never hit a migration: the race was not exercised"
    );
    assert_eq!(entries(&outside), Vec::<PathBuf>::new(), "written outside");
    // Every output that was reported written is inside, in the real directory.
    let real = if fs::symlink_metadata(work.join("sub")).unwrap().is_dir() {
        work.join("sub")
    } else {
        work.join("sub.alt")
    };
    let written = entries(&real).len() as u32;
    assert_eq!(
        written,
        ok + bin_ok + 1,
        "outputs (and the decoy) in {real:?}"
    );
}

#[test]
fn unpack_never_writes_outside_under_a_symlink_swap_race() {
    let tmp = tempfile::tempdir().unwrap();
    let outside = tmp.path().join("outside");
    let parent = tmp.path().join("u");
    fs::create_dir(&outside).unwrap();
    fs::create_dir(&parent).unwrap();
    let bundle = repo("testdata/hostile/valid-bundle.json");

    // The attacker watches the directory being unpacked and replaces its
    // `observations/` (moved aside, the decoy) with a symlink to `outside`.
    let current = Arc::new(AtomicUsize::new(0));
    let stop = Arc::new(AtomicBool::new(false));
    let attacker = {
        let (parent, outside, current, stop) = (
            parent.clone(),
            outside.clone(),
            current.clone(),
            stop.clone(),
        );
        thread::spawn(move || {
            let mut hits = 0u64;
            while !stop.load(Ordering::Relaxed) {
                let dir = parent.join(current.load(Ordering::Relaxed).to_string());
                let obs = dir.join("observations");
                if fs::symlink_metadata(&obs).is_ok_and(|m| m.is_dir())
                    && fs::rename(&obs, dir.join("moved")).is_ok()
                    && symlink(&outside, &obs).is_ok()
                {
                    hits += 1;
                }
            }
            hits
        })
    };
    let start = Instant::now();
    let (mut ok, mut refused, mut n) = (0u32, 0u32, 0usize);
    while start.elapsed() < RACE {
        n += 1;
        current.store(n, Ordering::Relaxed);
        let out = parent.join(n.to_string());
        // Every few rounds the real binary, otherwise the library call.
        let success = if n % 16 == 0 {
            let r = support::mcpres(
                [
                    OsStr::new("unpack"),
                    bundle.as_os_str(),
                    OsStr::new("-o"),
                    out.as_os_str(),
                ]
                .as_slice(),
            );
            assert!(
                matches!(r.status.code(), Some(0 | 2)),
                "{}",
                support::output_text(&r)
            );
            r.status.success()
        } else {
            pack::unpack(&bundle, &out, None, &Limits::default()).is_ok()
        };
        if success {
            ok += 1;
        } else {
            refused += 1;
        }
    }
    stop.store(true, Ordering::Relaxed);
    let hits = attacker.join().unwrap();
    eprintln!("{n} unpacks: {ok} written, {refused} refused; {hits} swaps landed");
    assert!(
        hits > 0,
        "the attacker never swapped a directory: the race was not exercised"
    );
    assert_eq!(entries(&outside), Vec::<PathBuf>::new(), "written outside");
}
