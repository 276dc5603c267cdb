//! `mcpres`: runs the command line and ends with the status it returns.
#![forbid(unsafe_code)]

mod cli;

fn main() -> std::process::ExitCode {
    std::process::ExitCode::from(cli::main())
}
