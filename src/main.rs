//! `mcpres`: runs the command line and ends with the status it returns.
#![forbid(unsafe_code)]

mod cli;

/// mimalloc serves the validator's many small allocations faster than the
/// system allocator, and scales across worker threads.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    std::process::ExitCode::from(cli::main())
}
