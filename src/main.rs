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
        if args.next().as_deref() == Some(std::ffi::OsStr::new(sandbox::EXEC_ARG)) {
            let rest: Vec<std::ffi::OsString> = args.collect();
            return std::process::ExitCode::from(sandbox::exec_main(&rest));
        }
    }
    std::process::ExitCode::from(cli::main())
}
