//! `mcpres`: maps the command's result to the process exit code and nothing else.
#![forbid(unsafe_code)]

mod cli;

fn main() -> std::process::ExitCode {
    std::process::ExitCode::from(cli::main().clamp(0, 255) as u8)
}
