//! Writing to the terminal. Standard output is written through [`stdout`]:
//! a reader that goes away (`mcpres ... | head -1`) turns the write into
//! [`CliError::Closed`], and the command ends quietly. Standard error is
//! written through [`stderr`], which never fails the command (a closed
//! standard error has nobody left to tell).

use std::fmt;
use std::io::{self, Write};

use super::CliError;

/// Write to standard output.
pub fn stdout(args: fmt::Arguments<'_>) -> Result<(), CliError> {
    io::stdout()
        .lock()
        .write_fmt(args)
        .map_err(CliError::output)
}

/// Write bytes to standard output and flush them.
pub fn stdout_bytes(bytes: &[u8]) -> Result<(), CliError> {
    let mut out = io::stdout().lock();
    out.write_all(bytes)
        .and_then(|()| out.flush())
        .map_err(CliError::output)
}

/// Write to standard error; a failed write is ignored.
pub fn stderr(args: fmt::Arguments<'_>) {
    let _ = io::stderr().lock().write_fmt(args);
}

/// A path for human output: control characters (and the bidirectional
/// overrides that reorder what a terminal shows) are escaped, so a crafted
/// file name cannot start a new line or fake a verdict.
pub fn shown(path: &std::path::Path) -> String {
    escaped(&path.display().to_string())
}

/// [`shown`] for any text from outside (file names, arguments).
pub fn escaped(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if c.is_control() || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}') {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    out
}

/// [`escaped`] for a message of several lines (a parser's error with its
/// snippet): line feeds are kept, every other control character escaped.
#[cfg(feature = "server")]
pub fn escaped_lines(text: &str) -> String {
    text.split('\n').map(escaped).collect::<Vec<_>>().join("\n")
}

/// `outln!(...)`: one line on standard output; `?` it.
macro_rules! outln {
    () => { $crate::cli::output::stdout(format_args!("\n")) };
    ($($arg:tt)*) => {
        $crate::cli::output::stdout(format_args!("{}\n", format_args!($($arg)*)))
    };
}

/// `errln!(...)`: one line on standard error (never fails).
macro_rules! errln {
    ($($arg:tt)*) => {
        $crate::cli::output::stderr(format_args!("{}\n", format_args!($($arg)*)))
    };
}
