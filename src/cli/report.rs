//! `mcpres report PATH... -o report.html`: validate each input as `mcpres validate` does and
//! write one self-contained HTML page of what validation derived
//! ([`mcpres::produce::report`]). The exit code is `validate`'s (0 every input valid,
//! 1 a failing diagnostic, 2 an unreadable input); the page is written in every case, since
//! an invalid bundle is worth a page too. The output is never overwritten.

use std::path::PathBuf;

use rayon::prelude::*;
use serde_json::Value;

use mcpres::bundle::{
    self,
    profile_dir::{RunFile, is_oauth},
};
use mcpres::produce::report::{self, Section};
use mcpres::validate;

use mcpres::api::{Outcome, check_loaded};

use super::{CliError, CliResult, Exit, limits, output, render};

#[derive(Debug, clap::Args)]
pub struct ReportArgs {
    /// Files or bundle directories to report on (one section each); with --check, the
    /// bundles the page is checked against.
    #[arg(required = true)]
    paths: Vec<PathBuf>,
    /// The new HTML file (must not exist).
    #[arg(
        short,
        long,
        value_name = "REPORT.html",
        required_unless_present = "check",
        conflicts_with = "check"
    )]
    output: Option<PathBuf>,
    /// Do not write a page: tell whether this existing page was made from each given bundle
    /// (exit 0 it was, 1 it was not or the bundle is invalid, 2 unreadable).
    #[arg(long, value_name = "REPORT.html")]
    check: Option<PathBuf>,
    /// Trust policy (mcp-res.trust-policy/0.2.0) for attested bundles.
    #[arg(long, value_name = "POLICY.json")]
    trust_policy: Option<PathBuf>,
    /// Evaluation time for attested bundles, RFC 3339 (default: now).
    #[arg(long, value_name = "RFC3339", value_parser = super::parse_at)]
    at: Option<mcpres::json::time::Timestamp>,
    /// Resource limits (spec/limits.md).
    #[command(flatten)]
    limits: limits::LimitArgs,
}

/// One input read and judged, with the documents the page shows.
struct Judged {
    outcome: Outcome,
    doc: Option<Value>,
    run: Option<Value>,
    /// An operational evaluation's measurement report, as its directory lists it.
    measurement: Option<Value>,
}

pub fn run(args: ReportArgs) -> CliResult {
    let Some(output) = args.output.clone() else {
        return check(&args);
    };
    super::check_new_file(&output, "mcpres report: --output")?;
    args.limits.start_timeout("report");
    let created = |e: std::io::Error| {
        CliError::Unusable(format!(
            "mcpres report: cannot create {}: {e}",
            output::shown(&output)
        ))
    };
    // The sections are spooled beside the page (the page's head lists every
    // input, so it is written last but comes first): memory holds one batch
    // of inputs and a summary line per input, whatever the number of inputs.
    let parent = match output.parent() {
        Some(p) if !p.as_os_str().is_empty() => {
            std::fs::create_dir_all(p).map_err(created)?;
            p.to_path_buf()
        }
        _ => PathBuf::from("."),
    };
    let name = output
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut spool = Spool::create(&parent, &name).map_err(created)?;
    let (summaries, exits) = spool_sections(&args, &mut spool)?;
    let mut page = mcpres::fsio::create_new_file(&output).map_err(created)?;
    let written = write_page(&mut page, &summaries, &mut spool).and_then(|n| {
        page.sync_all()?;
        Ok(n)
    });
    let bytes = match written {
        Ok(n) => n,
        Err(e) => {
            // A page cut short is no page: nothing half-written is left.
            drop(page);
            let _ = std::fs::remove_file(&output);
            return Err(created(e));
        }
    };
    let exit = exits.iter().copied().max().unwrap_or(Exit::Valid);
    let count = |e: Exit| exits.iter().filter(|x| **x == e).count();
    errln!(
        "mcpres: wrote {} ({} bytes) for {} input{}: {} valid, {} invalid, {} unreadable",
        output::shown(&output),
        bytes,
        exits.len(),
        if exits.len() == 1 { "" } else { "s" },
        count(Exit::Valid),
        count(Exit::Failing),
        count(Exit::Unusable)
    );
    Ok(exit)
}

/// Inputs judged and rendered at a time (in parallel) before their sections
/// are spooled and their documents dropped.
const BATCH: usize = 64;

/// The most bytes of a page's head `--check` reads for the bundle digests it
/// states (each digest is one `<meta>` of about 110 bytes).
pub const CHECK_HEAD_LIMIT: usize = 64 << 20;

/// A file the sections go to until the page is written; removed when dropped.
struct Spool {
    dir: mcpres::fsio::DirHandle,
    name: PathBuf,
    file: std::io::BufWriter<std::fs::File>,
    written: u64,
}

impl Spool {
    /// A new hidden file in `dir` named after `page`.
    fn create(dir: &std::path::Path, page: &str) -> std::io::Result<Spool> {
        let dir = mcpres::fsio::DirHandle::open(dir)?;
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        let name = PathBuf::from(format!(
            ".{page}.sections-{}-{nanos:09}",
            std::process::id()
        ));
        let file = dir.create_scratch(&name)?;
        Ok(Spool {
            dir,
            name,
            file: std::io::BufWriter::new(file),
            written: 0,
        })
    }

    fn push(&mut self, html: &str) -> std::io::Result<()> {
        use std::io::Write as _;
        self.file.write_all(html.as_bytes())?;
        self.written += html.len() as u64;
        Ok(())
    }

    /// Copy every spooled byte, in order, to `out`.
    fn copy_to(&mut self, out: &mut impl std::io::Write) -> std::io::Result<u64> {
        use std::io::{Seek as _, Write as _};
        self.file.flush()?;
        let file = self.file.get_mut();
        file.seek(std::io::SeekFrom::Start(0))?;
        let copied = std::io::copy(&mut std::io::Read::take(&*file, self.written), out)?;
        if copied != self.written {
            return Err(std::io::Error::other("the spooled sections were cut short"));
        }
        Ok(copied)
    }
}

impl Drop for Spool {
    fn drop(&mut self) {
        let _ = self.dir.remove_file(&self.name);
    }
}

/// Judge and render every input, batch by batch, spooling each section in
/// input order: the summaries and exit codes in input order.
fn spool_sections(
    args: &ReportArgs,
    spool: &mut Spool,
) -> Result<(Vec<report::Summary>, Vec<Exit>), CliError> {
    let mut summaries = Vec::new();
    let mut exits = Vec::new();
    let spooled = |e: std::io::Error| {
        CliError::Unusable(format!(
            "mcpres report: cannot spool the page's sections: {e}"
        ))
    };
    judge_batches(
        args,
        |index, j| (section_of(index, &j), Exit::from(j.outcome.status())),
        |batch| {
            for (section, exit) in batch {
                spool.push(section.html()).map_err(spooled)?;
                summaries.push(section.summary());
                exits.push(exit);
            }
            Ok(())
        },
    )?;
    Ok((summaries, exits))
}

/// The page: its head for `summaries`, the spooled sections, its tail; the
/// bytes written.
fn write_page(
    out: &mut impl std::io::Write,
    summaries: &[report::Summary],
    spool: &mut Spool,
) -> std::io::Result<u64> {
    let head = report::head(summaries);
    let tail = report::tail();
    use std::io::Write as _;
    let mut out = std::io::BufWriter::new(out);
    out.write_all(head.as_bytes())?;
    let sections = spool.copy_to(&mut out)?;
    out.write_all(tail.as_bytes())?;
    std::io::Write::flush(&mut out)?;
    Ok(head.len() as u64 + sections + tail.len() as u64)
}

/// The page section of input `index` as judged.
fn section_of(index: usize, j: &Judged) -> report::Rendered {
    let label = j.outcome.path.display().to_string();
    let reason = j.outcome.result.as_ref().err().map(render::load_error_text);
    let section = Section {
        label: &label,
        report: j.outcome.result.as_ref().ok().map(|c| &c.report),
        unreadable: reason.as_deref(),
        doc: j.doc.as_ref(),
        run: j.run.as_ref(),
        measurement: j.measurement.as_ref(),
    };
    report::render_section(index, &section)
}

/// Read and validate every input (folders expanded as for `validate`): every document
/// kept (for `badge`, which has one input).
fn judge_all(args: &ReportArgs) -> Result<Vec<Judged>, CliError> {
    let mut all = Vec::new();
    judge_batches(
        args,
        |_, j| j,
        |batch| {
            all.extend(batch);
            Ok(())
        },
    )?;
    Ok(all)
}

/// Read and validate every input (folders expanded as for `validate`) in parallel, `BATCH`
/// at a time: each, with its index, goes through `then`, and each batch's results, in input
/// order, to `sink` before the next batch is read.
fn judge_batches<T: Send>(
    args: &ReportArgs,
    then: impl Fn(usize, Judged) -> T + Sync,
    mut sink: impl FnMut(Vec<T>) -> Result<(), CliError>,
) -> Result<(), CliError> {
    let limits = args.limits.json();
    let dir_limits = args.limits.dir();
    let trust_policy = match &args.trust_policy {
        Some(path) => Some(super::read_trust_policy(path, &limits, "mcpres report")?),
        None => None,
    };
    let rules = validate::Options {
        trust_policy,
        at: args.at,
        original_result: None,
    };
    // A folder of bundles stands for the bundles it holds, as for `validate`.
    let expanded = super::folders::expand(&args.paths);
    for (b, batch) in expanded.inputs.chunks(BATCH).enumerate() {
        let done: Vec<T> = batch
            .par_iter()
            .enumerate()
            .map(|(k, path)| {
                let index = b * BATCH + k;
                let judged = match bundle::load_with(path, &limits, &dir_limits) {
                    Ok(loaded) => {
                        let measurement = loaded.profile_dir.as_ref().and_then(|d| {
                            d.stored
                                .get(mcpres::judge::ops::MEASUREMENT_PATH)
                                .and_then(|m| m.as_ref().ok())
                                .cloned()
                        });
                        // A profile or field directory is shown as its artifacts judge it:
                        // the verdicts, flags and results the judge gives, never one that
                        // only run.json or matrix.json says.
                        let (doc, run) = match (&loaded.profile_dir, &loaded.field_dir) {
                            (Some(dir), _) => match validate::profile_dir::judge(dir) {
                                Some(judged) => (Some(judged.evaluation), Some(judged.run)),
                                // Nothing to judge from (no usable run record, or an
                                // OAuth-boundary evaluation, whose cases its own rules judge):
                                // no run verdict is shown.
                                None => (
                                    Some(dir.evaluation.clone()),
                                    match &dir.run {
                                        RunFile::Read(v) if is_oauth(&dir.evaluation) => {
                                            Some(v.clone())
                                        }
                                        _ => None,
                                    },
                                ),
                            },
                            // A field matrix directory is shown through its matrix.json.
                            (None, Some(field)) => (
                                validate::field_dir::judged_matrix(field)
                                    .or_else(|| field.matrix.as_ref().ok().cloned()),
                                None,
                            ),
                            (None, None) => (loaded.doc.clone(), None),
                        };
                        Judged {
                            outcome: Outcome {
                                path: path.clone(),
                                result: Ok(check_loaded(loaded, &rules, false)),
                            },
                            doc,
                            run,
                            measurement,
                        }
                    }
                    Err(e) => Judged {
                        outcome: Outcome {
                            path: path.clone(),
                            result: Err(e),
                        },
                        doc: None,
                        run: None,
                        measurement: None,
                    },
                };
                then(index, judged)
            })
            .collect();
        sink(done)?;
    }
    Ok(())
}

/// `--check PAGE BUNDLE...`: does the page state each bundle's recomputed digest, and is it,
/// byte for byte, the page these bundles give? The page is read as a stream (its head for
/// the digests it states, at most [`CHECK_HEAD_LIMIT`] bytes; then compared with the page
/// the inputs give, section by section), so a page of any size is checked in flat memory.
fn check(args: &ReportArgs) -> CliResult {
    let Some(page_path) = &args.check else {
        return Err(CliError::Unusable(
            "mcpres report: give --output or --check".to_owned(),
        ));
    };
    args.limits.start_timeout("report");
    let unreadable = |what: String| {
        CliError::Unusable(format!(
            "mcpres report --check: page {}: {what}",
            output::shown(page_path)
        ))
    };
    let page_file = open_page(page_path).map_err(unreadable)?;
    let stated = stated_digests(&page_file).map_err(unreadable)?;
    if stated.is_empty() {
        return Err(CliError::Unusable(format!(
            "mcpres report --check: {} states no bundle digest: it is not a page `mcpres report` made from a bundle",
            output::shown(page_path)
        )));
    }
    let spool_dir = std::env::temp_dir();
    let mut spool = Spool::create(&spool_dir, "mcpres-report-check").map_err(|e| {
        CliError::Unusable(format!(
            "mcpres report --check: cannot spool the expected page in {}: {e}",
            spool_dir.display()
        ))
    })?;
    let mut exit = Exit::Valid;
    let mut lines = Vec::new();
    let mut summaries = Vec::new();
    let spooled = |e: std::io::Error| {
        CliError::Unusable(format!(
            "mcpres report --check: cannot spool the expected page: {e}"
        ))
    };
    judge_batches(
        args,
        |index, j| {
            let shown_path = output::shown(&j.outcome.path);
            let line = match &j.outcome.result {
                Err(e) => Err(format!(
                    "{shown_path}: unreadable: {}",
                    render::load_error_text(e)
                )),
                Ok(checked) => match j.doc.as_ref().and_then(report::bundle_digest) {
                    None => Err(format!(
                        "{shown_path}: not a conformance bundle (no integrity manifest): no bundle digest to compare"
                    )),
                    Some(digest) => Ok((shown_path, digest, checked.report.valid)),
                },
            };
            (section_of(index, &j), line)
        },
        |batch| {
            for (section, line) in batch {
                spool.push(section.html()).map_err(spooled)?;
                summaries.push(section.summary());
                match line {
                    Err(text) => {
                        errln!("{text}");
                        exit = exit.max(Exit::Unusable);
                    }
                    Ok((shown_path, digest, valid)) => {
                        let belongs = stated.contains(&digest);
                        let verdict = match (belongs, valid) {
                            (true, true) => "belongs to",
                            (true, false) => "names the digest of, but the bundle is INVALID:",
                            (false, _) => "does NOT belong to",
                        };
                        lines.push(format!(
                            "{} {verdict} {shown_path} (bundle digest {digest})",
                            output::shown(page_path)
                        ));
                        if !(belongs && valid) {
                            exit = exit.max(Exit::Failing);
                        }
                    }
                }
            }
            Ok(())
        },
    )?;
    // Pages are deterministic: the page these inputs give, byte for byte, or
    // not theirs. A page that names the right digests but was edited (a
    // verdict changed, a section cut to its digest line) fails here.
    if exit == Exit::Valid {
        let mut compare = Compare::new(&page_file);
        write_page(&mut compare, &summaries, &mut spool)
            .and_then(|_| compare.finish())
            .map_err(|e| unreadable(e.to_string()))?;
        if let Some(line) = compare.first_difference_line() {
            for l in &mut lines {
                *l = l.replacen(" belongs to ", " names the digest of ", 1);
            }
            lines.push(format!(
                "{} names the bundle digest{} but is not the page `mcpres report` makes from {} (first difference on line {line}: edited, or made from other inputs, paths or options)",
                output::shown(page_path),
                if summaries.len() == 1 { "" } else { "s" },
                if summaries.len() == 1 { "it" } else { "them, in this order" }
            ));
            exit = Exit::Failing;
        }
    }
    for l in &lines {
        outln!("{l}")?;
    }
    if exit == Exit::Failing {
        errln!("the page states: {}", stated.join(", "));
    }
    Ok(exit)
}

/// The page to check, opened as a regular file (never through a symlink).
fn open_page(path: &std::path::Path) -> Result<std::fs::File, String> {
    use std::os::unix::fs::OpenOptionsExt as _;
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(rustix::fs::OFlags::NOFOLLOW.bits() as i32)
        .open(path)
        .map_err(|e| e.to_string())?;
    let meta = file.metadata().map_err(|e| e.to_string())?;
    if !meta.is_file() {
        return Err("not a regular file".into());
    }
    Ok(file)
}

/// The bundle digests the page's head states, read up to `</head>` (at most
/// [`CHECK_HEAD_LIMIT`] bytes).
fn stated_digests(page: &std::fs::File) -> Result<Vec<String>, String> {
    use std::io::Read as _;
    let mut head = Vec::new();
    let mut reader = std::io::Read::take(page, CHECK_HEAD_LIMIT as u64 + 1);
    let mut buf = vec![0u8; 64 << 10];
    loop {
        let n = reader.read(&mut buf).map_err(|e| e.to_string())?;
        if n == 0 {
            break;
        }
        let from = head.len().saturating_sub(6);
        head.extend_from_slice(&buf[..n]);
        if head[from..].windows(7).any(|w| w == b"</head>") {
            break;
        }
        if head.len() > CHECK_HEAD_LIMIT {
            return Err(format!(
                "its head runs past {} MiB without `</head>`: not a page `mcpres report` made",
                CHECK_HEAD_LIMIT >> 20
            ));
        }
    }
    Ok(report::page_digests(&String::from_utf8_lossy(&head)))
}

/// A writer that compares what is written with a file's bytes, from its
/// start: where they first differ (counted in lines), or whether the file
/// is longer.
struct Compare<'f> {
    file: std::io::BufReader<&'f std::fs::File>,
    started: bool,
    lines: usize,
    differs: bool,
    buf: Vec<u8>,
}

impl<'f> Compare<'f> {
    fn new(file: &'f std::fs::File) -> Compare<'f> {
        Compare {
            file: std::io::BufReader::with_capacity(256 << 10, file),
            started: false,
            lines: 1,
            differs: false,
            buf: Vec::new(),
        }
    }

    /// After everything was written: the file must end there too.
    fn finish(&mut self) -> std::io::Result<()> {
        use std::io::Read as _;
        if !self.differs {
            let mut one = [0u8; 1];
            if self.file.read(&mut one)? != 0 {
                self.differs = true;
            }
        }
        Ok(())
    }

    fn first_difference_line(&self) -> Option<usize> {
        self.differs.then_some(self.lines)
    }
}

impl std::io::Write for Compare<'_> {
    fn write(&mut self, data: &[u8]) -> std::io::Result<usize> {
        use std::io::{Read as _, Seek as _};
        if !self.started {
            self.file.rewind()?;
            self.started = true;
        }
        if self.differs {
            return Ok(data.len());
        }
        self.buf.resize(data.len(), 0);
        let mut got = 0;
        while got < data.len() {
            let n = self.file.read(&mut self.buf[got..])?;
            if n == 0 {
                break;
            }
            got += n;
        }
        let same = data[..got]
            .iter()
            .zip(&self.buf[..got])
            .position(|(a, b)| a != b)
            .unwrap_or(got);
        self.lines += data[..same].iter().filter(|b| **b == b'\n').count();
        if same < data.len() {
            self.differs = true;
        }
        Ok(data.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[derive(Debug, clap::Args)]
pub struct BadgeArgs {
    /// The bundle (file or directory; an attested bundle's inner bundle is shown).
    bundle: PathBuf,
    /// The new SVG file (must not exist).
    #[arg(short, long, value_name = "BADGE.svg")]
    output: PathBuf,
    /// Trust policy (mcp-res.trust-policy/0.2.0) for an attested bundle.
    #[arg(long, value_name = "POLICY.json")]
    trust_policy: Option<PathBuf>,
    /// Evaluation time for an attested bundle, RFC 3339 (default: now).
    #[arg(long, value_name = "RFC3339", value_parser = super::parse_at)]
    at: Option<mcpres::json::time::Timestamp>,
    /// Resource limits (spec/limits.md).
    #[command(flatten)]
    limits: limits::LimitArgs,
}

/// `mcpres badge BUNDLE -o badge.svg`: a badge of what validation derived; an invalid
/// bundle gets none (exit 1), and neither does a document that is no bundle (exit 2).
pub fn run_badge(args: BadgeArgs) -> CliResult {
    super::check_new_file(&args.output, "mcpres badge: --output")?;
    args.limits.start_timeout("badge");
    let as_report = ReportArgs {
        paths: vec![args.bundle.clone()],
        output: None,
        check: None,
        trust_policy: args.trust_policy.clone(),
        at: args.at,
        limits: args.limits.clone(),
    };
    let judged = judge_all(&as_report)?;
    let Some(j) = judged.first() else {
        return Err(CliError::Unusable(format!(
            "mcpres badge: {} holds no bundle",
            output::shown(&args.bundle)
        )));
    };
    let shown_path = output::shown(&j.outcome.path);
    let checked = match &j.outcome.result {
        Ok(c) => c,
        Err(e) => {
            return Err(CliError::Unusable(format!(
                "mcpres badge: {shown_path}: {}",
                render::load_error_text(e)
            )));
        }
    };
    let doc = j.doc.as_ref();
    let inner = doc.map(|d| d.get("bundle").unwrap_or(d));
    let (Some(digest), Some(inner)) = (doc.and_then(report::bundle_digest), inner) else {
        return Err(CliError::Unusable(format!(
            "mcpres badge: {shown_path} is no conformance bundle: a badge is made for bundles only"
        )));
    };
    if !checked.report.valid {
        errln!(
            "mcpres badge: {shown_path} is INVALID ({}): no badge is made for an invalid bundle; `mcpres validate` says why",
            checked.report.diagnostics.join(", ")
        );
        return Ok(Exit::Failing);
    }
    let (Some(class), Some(result)) = (
        checked.report.evidence_class.as_deref(),
        inner.pointer("/statement/result").and_then(Value::as_str),
    ) else {
        return Err(CliError::Unusable(format!(
            "mcpres badge: {shown_path}: validation derived no evidence class"
        )));
    };
    let badge = mcpres::produce::badge::Badge {
        evidence_class: class,
        result,
        completed_trials: inner
            .pointer("/evidence/trialSummary/completedTrials")
            .and_then(Value::as_u64),
        bundle_digest: &digest,
    };
    let svg = badge.render();
    mcpres::fsio::write_new_file(&args.output, svg.as_bytes()).map_err(|e| {
        CliError::Unusable(format!(
            "mcpres badge: cannot create {}: {e}",
            output::shown(&args.output)
        ))
    })?;
    errln!(
        "mcpres: wrote {}: MCP-RES · {} (bundle digest {digest})",
        output::shown(&args.output),
        badge.message()
    );
    Ok(Exit::Valid)
}
