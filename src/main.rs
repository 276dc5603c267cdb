//! `mcpres`: runs the command line and ends with the status it returns.
#![forbid(unsafe_code)]

mod cli;

/// mimalloc serves the validator's many small allocations faster than the
/// system allocator, and scales across worker threads.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    // The sandbox's helper (src/produce/drive/sandbox.rs): a subject's first
    // step inside its namespaces, before anything else of mcpres runs.
    #[cfg(feature = "server")]
    {
        use mcpres::produce::drive::sandbox;
        let mut args = std::env::args_os().skip(1);
        let first = args.next();
        if first.as_deref() == Some(std::ffi::OsStr::new(sandbox::EXEC_ARG)) {
            let rest: Vec<std::ffi::OsString> = args.collect();
            return std::process::ExitCode::from(sandbox::exec_main(&rest));
        }
        // The operational runner's injection shim, its idle children and its
        // null subject (src/produce/profile/ops/).
        {
            use mcpres::produce::profile::ops;
            let is = |arg: &str| first.as_deref() == Some(std::ffi::OsStr::new(arg));
            if is(mcpres::produce::drive::shim::ARG) {
                let rest: Vec<std::ffi::OsString> = args.collect();
                return std::process::ExitCode::from(mcpres::produce::drive::shim::main(&rest));
            }
            if is(mcpres::produce::drive::shim::IDLE_ARG) {
                let rest: Vec<std::ffi::OsString> = args.collect();
                return std::process::ExitCode::from(mcpres::produce::drive::shim::idle_main(
                    &rest,
                ));
            }
            if is(ops::NULL_ARG) {
                return std::process::ExitCode::from(ops::load::null_main());
            }
        }
        // The first process of a subject's PID namespace.
        if first.as_deref() == Some(std::ffi::OsStr::new(sandbox::INIT_ARG)) {
            let rest: Vec<std::ffi::OsString> = args.collect();
            return std::process::ExitCode::from(sandbox::init_main(&rest));
        }
    }
    purging_producer();
    std::process::ExitCode::from(cli::main())
}

/// The allocator option the producers run with (see [`purging_producer`]).
const PURGE_DELAY: &str = "MIMALLOC_PURGE_DELAY";

/// The producers (`run`, `profile run`, `oauth run`, `field run`) read
/// subjects' output in bursts of megabytes on short-lived threads; mimalloc,
/// by default, returns such freed memory to the system only when the thread
/// that freed it allocates again, so their resident memory grows by what
/// they have already freed. Run with the purge delay at 0, freed memory goes
/// back at once (bench/memory.sh: an endless HTTP body 90 -> 44 MiB, a
/// stdout flood 84 -> 58 MiB). The option is read by mimalloc when the
/// process starts, so a producer started without it executes itself again
/// with it (same arguments, same process id); an operator's own setting is
/// kept, and the validator and everything else keep mimalloc's defaults.
/// Subjects never see it: they are started with a cleared environment.
fn purging_producer() {
    use std::os::unix::process::CommandExt as _;
    let mut args = std::env::args_os();
    let Some(first) = args.nth(1) else {
        return;
    };
    let producer = match first.to_str() {
        Some("run") => true,
        Some("profile" | "oauth" | "field") => args.next().as_deref() == Some("run".as_ref()),
        _ => false,
    };
    if !producer || std::env::var_os(PURGE_DELAY).is_some() {
        return;
    }
    let Ok(exe) = std::env::current_exe() else {
        return;
    };
    let mut argv = std::env::args_os();
    let argv0 = argv.next().unwrap_or_default();
    // Only returns when the exec failed: then run as is.
    let _ = std::process::Command::new(exe)
        .arg0(argv0)
        .args(argv)
        .env(PURGE_DELAY, "0")
        .exec();
}
