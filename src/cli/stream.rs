//! `mcpres validate` and `mcpres verify` as a stream: inputs come from the
//! arguments and from lists (`--files-from FILE`, `--files-from -` or a bare
//! `-` argument for standard input), are checked by a fixed set of worker
//! threads, and each result is written as soon as it is known: in input order
//! (a bounded reorder window), or in completion order with `--unordered`.
//! Nothing grows with the number of inputs but the counters (and, for
//! `--format sarif`, which is one document, the results it must hold).
//!
//! Three threads of roles: a producer reads the arguments and lists and hands
//! out numbered jobs, but only against a token (one per slot of the window);
//! the workers load, validate and render; the writer (the calling thread)
//! prints, counts, and gives a token back for each result written. At most
//! `window` inputs are therefore between the producer and standard output at
//! any time, whatever the order of completion.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::sync::mpsc::{self, Receiver, SyncSender, TryRecvError};
use std::sync::{Arc, Mutex};

use mcpres::api::{self, Outcome, Status, ValidateOptions};

use super::render::{self, Format, Sarif};
use super::{CliError, CliResult, Exit, ValidateArgs, folders, output};

/// Results held between the producer and standard output, per worker.
const WINDOW_PER_WORKER: usize = 64;
/// The window's bounds, whatever the worker count.
const WINDOW_MIN: usize = 64;
const WINDOW_MAX: usize = 1024;

impl From<Status> for Exit {
    fn from(s: Status) -> Exit {
        match s {
            Status::Valid => Exit::Valid,
            Status::Failing => Exit::Failing,
            Status::Unusable => Exit::Unusable,
        }
    }
}

/// Where inputs come from, in the order they are read.
enum Source {
    /// A command-line argument (a folder stands for the bundles it holds).
    Arg(PathBuf),
    /// A list, one path per line: `what` names it in messages.
    List {
        what: String,
        reader: Box<dyn BufRead + Send>,
    },
}

/// What the producer found besides the inputs.
#[derive(Default)]
struct Produced {
    /// Folders holding a `campaign.json`, checked after the inputs.
    campaigns: Vec<PathBuf>,
    /// A list that could not be read to its end.
    list_error: Option<String>,
}

/// One input's result, rendered by its worker.
enum Rendered {
    /// JSON line or human text.
    Text(Vec<u8>),
    /// SARIF is one document: the writer adds the outcome to it.
    Sarif(Box<Outcome>),
}

fn is_stdin(p: &Path) -> bool {
    p.as_os_str() == "-"
}

/// The sources of a run, in order: the arguments (a bare `-` is the list on
/// standard input, read at its place), then `--files-from`. A list file that
/// cannot be opened, or standard input named twice, is unusable (exit 2)
/// before any input is checked.
fn sources(args: &ValidateArgs, command: &str) -> Result<Vec<Source>, CliError> {
    let stdin_uses = args.paths.iter().filter(|p| is_stdin(p)).count()
        + usize::from(args.files_from.as_deref().is_some_and(is_stdin));
    if stdin_uses > 1 {
        return Err(CliError::Unusable(format!(
            "mcpres {command}: standard input is named more than once (`-` and `--files-from -` both read the list on standard input); name it once"
        )));
    }
    let stdin = || Source::List {
        what: "the list on standard input".to_owned(),
        reader: Box::new(BufReader::new(std::io::stdin())),
    };
    let mut out: Vec<Source> = args
        .paths
        .iter()
        .map(|p| {
            if is_stdin(p) {
                stdin()
            } else {
                Source::Arg(p.clone())
            }
        })
        .collect();
    if let Some(list) = &args.files_from {
        if is_stdin(list) {
            out.push(stdin());
        } else {
            let flag = format!("mcpres {command}: --files-from");
            super::expect_file(list, &flag, "a file listing one input path per line")?;
            let file = std::fs::File::open(list).map_err(|e| {
                CliError::Unusable(format!("{flag} {}: cannot read: {e}", output::shown(list)))
            })?;
            out.push(Source::List {
                what: format!("--files-from {}", output::shown(list)),
                reader: Box::new(BufReader::new(file)),
            });
        }
    }
    Ok(out)
}

/// A list line as a path: the bytes as they are (Unix paths are bytes), the
/// line feed removed; nothing else is trimmed.
fn line_path(mut line: Vec<u8>) -> Option<PathBuf> {
    if line.last() == Some(&b'\n') {
        line.pop();
    }
    if line.is_empty() {
        return None;
    }
    #[cfg(unix)]
    let name: OsString = std::os::unix::ffi::OsStringExt::from_vec(line);
    #[cfg(not(unix))]
    let name: OsString = String::from_utf8_lossy(&line).into_owned().into();
    Some(PathBuf::from(name))
}

/// The longest line of an input list: `PATH_MAX` on Linux (4,096 bytes, the
/// terminating NUL included), so no path that could be opened is refused.
/// A longer line is never held: reading stops at the first byte past it.
pub(crate) const MAX_LIST_LINE: usize = 4096;

/// One line of an input list, read without holding more than
/// [`MAX_LIST_LINE`] bytes of it.
enum ListLine {
    Line(Vec<u8>),
    TooLong,
    End,
}

fn read_list_line(reader: &mut dyn BufRead) -> std::io::Result<ListLine> {
    let mut line = Vec::new();
    loop {
        let buf = match reader.fill_buf() {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if buf.is_empty() {
            return Ok(if line.is_empty() {
                ListLine::End
            } else {
                ListLine::Line(line)
            });
        }
        let (take, done) = match buf.iter().position(|&b| b == b'\n') {
            Some(i) => (i + 1, true),
            None => (buf.len(), false),
        };
        // The line feed is not part of the path.
        let content = take - usize::from(done);
        if line.len() + content > MAX_LIST_LINE {
            return Ok(ListLine::TooLong);
        }
        line.extend_from_slice(&buf[..take]);
        reader.consume(take);
        if done {
            return Ok(ListLine::Line(line));
        }
    }
}

/// Read the sources and hand out numbered jobs, one per token. Stops early
/// when the writer has gone (no token left to take).
fn produce(
    sources: Vec<Source>,
    tokens: Receiver<()>,
    jobs: SyncSender<(u64, PathBuf)>,
) -> Produced {
    let mut produced = Produced::default();
    let mut next = 0u64;
    let mut send = |produced: &mut Produced, path: PathBuf| -> bool {
        // A folder stands for the bundles it holds, from a list as from the
        // command line.
        let expanded = folders::expand(std::slice::from_ref(&path));
        produced.campaigns.extend(expanded.campaigns);
        for input in expanded.inputs {
            if tokens.recv().is_err() || jobs.send((next, input)).is_err() {
                return false;
            }
            next += 1;
        }
        true
    };
    for source in sources {
        match source {
            Source::Arg(path) => {
                if !send(&mut produced, path) {
                    return produced;
                }
            }
            Source::List { what, mut reader } => {
                let mut number = 0u64;
                loop {
                    number += 1;
                    match read_list_line(&mut reader) {
                        Ok(ListLine::End) => break,
                        Ok(ListLine::Line(line)) => {
                            if let Some(path) = line_path(line)
                                && !send(&mut produced, path)
                            {
                                return produced;
                            }
                        }
                        Ok(ListLine::TooLong) => {
                            produced.list_error = Some(format!(
                                "{what}: line {number} is longer than {MAX_LIST_LINE} bytes, the longest path this system opens; the list is not read past it"
                            ));
                            return produced;
                        }
                        Err(e) => {
                            produced.list_error = Some(format!("{what}: cannot read: {e}"));
                            return produced;
                        }
                    }
                }
            }
        }
    }
    produced
}

/// Check and render inputs until the jobs run out or the writer is gone.
fn work(
    jobs: &Mutex<Receiver<(u64, PathBuf)>>,
    results: &mpsc::Sender<(u64, Status, Rendered)>,
    options: &ValidateOptions,
    require_attested: bool,
    format: Format,
    quiet: bool,
) {
    loop {
        let job = match jobs.lock() {
            Ok(rx) => rx.recv(),
            Err(_) => return,
        };
        let Ok((index, path)) = job else { return };
        let outcome = if require_attested {
            api::verify(&path, options)
        } else {
            api::validate(&path, options)
        };
        let status = outcome.status();
        let rendered = match format {
            Format::Sarif => Rendered::Sarif(Box::new(outcome)),
            Format::Json | Format::Human => {
                let mut text = Vec::new();
                // Writing into a Vec cannot fail.
                let _ = if format == Format::Json {
                    render::json_line(&outcome, &mut text)
                } else {
                    render::human(&outcome, quiet, &mut text)
                };
                Rendered::Text(text)
            }
        };
        if results.send((index, status, rendered)).is_err() {
            return;
        }
    }
}

/// Counts of the inputs written so far.
#[derive(Default)]
struct Tally {
    valid: usize,
    invalid: usize,
    unreadable: usize,
    exit: Option<Exit>,
}

impl Tally {
    fn add(&mut self, status: Status) {
        match status {
            Status::Valid => self.valid += 1,
            Status::Failing => self.invalid += 1,
            Status::Unusable => self.unreadable += 1,
        }
        let exit = Exit::from(status);
        self.exit = Some(self.exit.map_or(exit, |e| e.max(exit)));
    }

    fn total(&self) -> usize {
        self.valid + self.invalid + self.unreadable
    }
}

/// One worker per core, or `RAYON_NUM_THREADS` (the variable that sized the
/// thread pool batches used before they were streamed).
fn worker_count() -> usize {
    std::env::var("RAYON_NUM_THREADS")
        .ok()
        .and_then(|v| v.trim().parse::<usize>().ok())
        .filter(|&n| n > 0)
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}

pub fn run_validate(args: ValidateArgs, require_attested: bool) -> CliResult {
    let command = if require_attested {
        "verify"
    } else {
        "validate"
    };
    // The global timeout guards directory validation, batches and lists. One
    // file is bounded by --max-bytes and never blocks (FIFOs and devices are
    // refused), so it does not pay for the watchdog thread.
    let watched = args.paths.len() > 1
        || args.files_from.is_some()
        || args
            .paths
            .iter()
            .any(|p| is_stdin(p) || std::fs::symlink_metadata(p).is_ok_and(|m| m.is_dir()));
    if watched {
        args.limits.start_timeout(command);
    }
    let limits = args.limits.json();
    let options = Arc::new(super::settings_from(&args, require_attested, &limits)?);
    let sources = sources(&args, command)?;
    let workers = worker_count();
    let window = (workers * WINDOW_PER_WORKER).clamp(WINDOW_MIN, WINDOW_MAX);

    let (token_tx, token_rx) = mpsc::sync_channel::<()>(window);
    for _ in 0..window {
        // The channel holds exactly `window` tokens.
        let _ = token_tx.send(());
    }
    let (job_tx, job_rx) = mpsc::sync_channel::<(u64, PathBuf)>(window);
    let (result_tx, result_rx) = mpsc::channel::<(u64, Status, Rendered)>();
    // Detached threads: if standard output closes, the command returns at
    // once instead of waiting for a list on standard input to end.
    let producer = std::thread::spawn(move || produce(sources, token_rx, job_tx));
    let job_rx = Arc::new(Mutex::new(job_rx));
    for _ in 0..workers {
        let (jobs, results, options) = (job_rx.clone(), result_tx.clone(), options.clone());
        let (format, quiet) = (args.format, args.quiet);
        std::thread::spawn(move || {
            work(&jobs, &results, &options, require_attested, format, quiet)
        });
    }
    drop(result_tx);

    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    let mut tally = Tally::default();
    let mut sarif = Sarif::default();
    let mut pending: BTreeMap<u64, (Status, Rendered)> = BTreeMap::new();
    let mut next = 0u64;
    let mut emit = |status: Status,
                    rendered: Rendered,
                    out: &mut std::io::BufWriter<std::io::StdoutLock<'_>>|
     -> std::io::Result<()> {
        tally.add(status);
        match rendered {
            Rendered::Text(text) => out.write_all(&text)?,
            Rendered::Sarif(outcome) => sarif.add(&outcome),
        }
        // Room for one more input.
        let _ = token_tx.send(());
        Ok(())
    };
    loop {
        let (index, status, rendered) = match result_rx.try_recv() {
            Ok(r) => r,
            Err(TryRecvError::Empty) => {
                // Nothing ready: what was written reaches the reader now.
                out.flush().map_err(CliError::output)?;
                match result_rx.recv() {
                    Ok(r) => r,
                    Err(_) => break,
                }
            }
            Err(TryRecvError::Disconnected) => break,
        };
        if args.unordered {
            emit(status, rendered, &mut out).map_err(CliError::output)?;
            continue;
        }
        pending.insert(index, (status, rendered));
        while let Some((status, rendered)) = pending.remove(&next) {
            emit(status, rendered, &mut out).map_err(CliError::output)?;
            next += 1;
        }
    }
    if args.format == Format::Sarif {
        serde_json::to_writer_pretty(&mut out, &sarif.finish())
            .map_err(std::io::Error::from)
            .and_then(|()| out.write_all(b"\n"))
            .map_err(CliError::output)?;
    }
    out.flush().map_err(CliError::output)?;
    drop(out);
    let produced = producer.join().unwrap_or_default();
    let total = tally.total();
    if total != 1 || matches!(args.format, Format::Human) {
        errln!(
            "mcpres: checked {total} input{}: {} valid, {} invalid, {} unreadable",
            if total == 1 { "" } else { "s" },
            tally.valid,
            tally.invalid,
            tally.unreadable
        );
    }
    let mut exit = tally.exit.unwrap_or(Exit::Valid);
    if let Some(e) = produced.list_error {
        errln!("mcpres {command}: {e}");
        exit = Exit::Unusable;
    }
    let campaigns = folders::report_campaigns(&produced.campaigns, &limits);
    Ok(exit.max(campaigns))
}
