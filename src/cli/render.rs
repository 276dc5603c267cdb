//! Output renderers: human (miette, with spans into the source), JSON (the
//! reference result shape plus findings) and SARIF 2.1.0.

use std::io::Write;

use clap::ValueEnum;
use miette::{Diagnostic, GraphicalReportHandler, GraphicalTheme, LabeledSpan, NamedSource};
use serde_json::{Value, json};

use mcpres::api::{Checked, Outcome, load_error_finding as load_finding};
use mcpres::bundle::LoadError;
use mcpres::diag::{Finding, codes};
use mcpres::json::locate::locate;
use mcpres::json::reader::line_column;

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// Readable diagnostics with source excerpts.
    Human,
    /// One JSON object per input (one per line when there are several).
    Json,
    /// One SARIF 2.1.0 log covering every input.
    Sarif,
}

/// One input's JSON line (`--format json`): the library's report object.
pub fn json_line(o: &Outcome, out: &mut impl Write) -> std::io::Result<()> {
    serde_json::to_writer(&mut *out, &o.to_json())?;
    out.write_all(b"\n")
}

/// A load error for human output (control characters in the path escaped).
pub fn load_error_text(e: &LoadError) -> String {
    let text = super::output::escaped(&e.to_string());
    match e.detail_code() {
        Some(detail) => format!("{}: {text} [{detail}]", e.code()),
        None => format!("{}: {text}", e.code()),
    }
}

/// A finding with its source excerpt, for miette's graphical handler.
#[derive(Debug)]
struct Rendered {
    finding: Finding,
    primary: bool,
    src: Option<Src>,
    span: Option<(usize, usize)>,
}

/// The source a finding points into: the whole document (short lines), or
/// an excerpt of one long line (canonical one-line documents).
#[derive(Debug)]
enum Src {
    Whole(NamedSource<std::sync::Arc<str>>),
    Excerpt(Excerpt),
}

/// A window of one long line, reported at its real line and column.
#[derive(Debug)]
struct Excerpt {
    name: String,
    text: String,
    /// 0-based line of the window in the document.
    line: usize,
    /// 0-based column (in characters) where the window starts.
    column: usize,
}

impl miette::SourceCode for Excerpt {
    fn read_span<'a>(
        &'a self,
        span: &miette::SourceSpan,
        before: usize,
        after: usize,
    ) -> Result<Box<dyn miette::SpanContents<'a> + 'a>, miette::MietteError> {
        let inner = self.text.read_span(span, before, after)?;
        let column = if inner.line() == 0 {
            self.column + inner.column()
        } else {
            inner.column()
        };
        Ok(Box::new(miette::MietteSpanContents::new_named(
            self.name.clone(),
            inner.data(),
            *inner.span(),
            self.line + inner.line(),
            column,
            inner.line_count(),
        )))
    }
}

/// Characters shown on each side of a finding in a long line.
const EXCERPT_SIDE: usize = 60;
/// Findings of a document with long lines given an excerpt (each costs a scan).
const MAX_EXCERPTS: usize = 10;

/// An excerpt of the line holding `start..end` in `bytes` (a document that
/// was read, so valid UTF-8): at most [`EXCERPT_SIDE`] characters on each
/// side of the start, the label clipped to [`EXCERPT_SIDE`] characters.
/// Returns the excerpt and the label's span in it.
fn excerpt(
    name: &str,
    bytes: &[u8],
    start: usize,
    end: usize,
) -> Option<(Excerpt, (usize, usize))> {
    let text = std::str::from_utf8(bytes).ok()?;
    let start = start.min(text.len());
    if !text.is_char_boundary(start) {
        return None;
    }
    let line_start = text[..start].rfind('\n').map_or(0, |p| p + 1);
    let line_end = text[start..].find('\n').map_or(text.len(), |p| start + p);
    let back = |from: usize, chars: usize| {
        text[line_start..from]
            .char_indices()
            .rev()
            .nth(chars.saturating_sub(1))
            .map_or(line_start, |(i, _)| line_start + i)
    };
    let forward = |from: usize, chars: usize| {
        text[from..line_end]
            .char_indices()
            .nth(chars)
            .map_or(line_end, |(i, _)| from + i)
    };
    let window_start = back(start, EXCERPT_SIDE);
    let label_end = end.clamp(start, line_end).min(forward(start, EXCERPT_SIDE));
    let label_end = if text.is_char_boundary(label_end) {
        label_end
    } else {
        start
    };
    let window_end = forward(label_end, EXCERPT_SIDE);
    let line = text[..start].matches('\n').count();
    let column = text[line_start..window_start].chars().count();
    Some((
        Excerpt {
            name: name.to_owned(),
            text: text[window_start..window_end].to_owned(),
            line,
            column,
        },
        (start - window_start, label_end - start),
    ))
}

impl std::fmt::Display for Rendered {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.finding.message)
    }
}

impl std::error::Error for Rendered {}

impl Diagnostic for Rendered {
    fn code<'a>(&'a self) -> Option<Box<dyn std::fmt::Display + 'a>> {
        let tag = if self.primary { " primary" } else { "" };
        Some(Box::new(format!(
            "{} [{}]{tag}",
            self.finding.code, self.finding.rule
        )))
    }
    fn help<'a>(&'a self) -> Option<Box<dyn std::fmt::Display + 'a>> {
        if self.finding.hint.is_empty() {
            None
        } else {
            Some(Box::new(&self.finding.hint))
        }
    }
    fn source_code(&self) -> Option<&dyn miette::SourceCode> {
        match self.src.as_ref()? {
            Src::Whole(s) => Some(s as &dyn miette::SourceCode),
            Src::Excerpt(e) => Some(e as &dyn miette::SourceCode),
        }
    }
    fn labels(&self) -> Option<Box<dyn Iterator<Item = LabeledSpan> + '_>> {
        let (start, len) = self.span?;
        let label = if self.finding.pointer.is_empty() {
            "here".to_string()
        } else {
            self.finding.pointer.clone()
        };
        Some(Box::new(std::iter::once(LabeledSpan::new(
            Some(label),
            start,
            len,
        ))))
    }
}

fn handler() -> GraphicalReportHandler {
    let theme = if std::env::var_os("NO_COLOR").is_some() || !is_terminal() {
        GraphicalTheme::unicode_nocolor()
    } else {
        GraphicalTheme::unicode()
    };
    GraphicalReportHandler::new_themed(theme).with_context_lines(1)
}

fn is_terminal() -> bool {
    use std::io::IsTerminal;
    std::io::stdout().is_terminal()
}

/// One input in the human format.
pub fn human(o: &Outcome, quiet: bool, out: &mut impl Write) -> std::io::Result<()> {
    let name = super::output::shown(&o.path);
    match &o.result {
        Err(e) => {
            writeln!(out, "✘ {name}: unusable input")?;
            if let LoadError::Json { source, bytes, .. } = e {
                let text: std::sync::Arc<str> = String::from_utf8_lossy(bytes).into();
                let start = source.offset.min(text.len());
                let (src, span) = if has_long_lines(bytes) {
                    match excerpt(&name, bytes, start, start) {
                        Some((e, span)) => (Some(Src::Excerpt(e)), Some(span)),
                        None => (None, None),
                    }
                } else {
                    (
                        Some(Src::Whole(NamedSource::new(name.clone(), text))),
                        Some((start, 0)),
                    )
                };
                let r = Rendered {
                    finding: Finding::new(
                        codes::INPUT_INVALID,
                        "",
                        format!(
                            "{} (line {}, column {})",
                            source.kind, source.line, source.column
                        ),
                    ),
                    primary: true,
                    src,
                    span,
                };
                let mut s = String::new();
                let _ = handler().render_report(&mut s, &r);
                writeln!(out, "{s}")?;
            } else {
                writeln!(out, "  {}", load_error_text(e))?;
            }
        }
        Ok(Checked { report, source }) => {
            if report.valid {
                if !quiet {
                    writeln!(out, "✔ {name}: valid ({})", valid_detail(report))?;
                }
                return Ok(());
            }
            writeln!(
                out,
                "✘ {name}: invalid: {} ({} finding{})",
                report.primary().unwrap_or("?"),
                report.findings.len(),
                if report.findings.len() == 1 { "" } else { "s" }
            )?;
            // Source excerpts only where they help and stay cheap: files with short lines
            // (pretty-printed), and the first findings of a long list.
            let spans_ok = source.as_ref().is_some_and(|b| !has_long_lines(b));
            let text: Option<std::sync::Arc<str>> = source
                .as_ref()
                .filter(|_| spans_ok)
                .map(|b| String::from_utf8_lossy(b).into());
            for (i, f) in report.findings.iter().enumerate() {
                if i >= MAX_RENDERED {
                    writeln!(
                        out,
                        "  {} at {}: {}",
                        f.code,
                        pointer_or_root(&f.pointer),
                        f.message
                    )?;
                    continue;
                }
                let span = source.as_ref().filter(|_| spans_ok).and_then(|b| {
                    locate(b, &f.pointer).map(|r| {
                        // Keep the label to the first line of a long value.
                        let end = b[r.start..r.end]
                            .iter()
                            .position(|&c| c == b'\n')
                            .map_or(r.end, |p| r.start + p);
                        (r.start, end - r.start)
                    })
                });
                let (src, span) = match (source, span) {
                    (_, Some(span)) => (
                        text.clone()
                            .map(|t| Src::Whole(NamedSource::new(name.clone(), t))),
                        Some(span),
                    ),
                    // A long line (a canonical one-line document): a trimmed
                    // excerpt around the finding.
                    (Some(b), None) if !spans_ok && i < MAX_EXCERPTS => {
                        match locate(b, &f.pointer).and_then(|r| excerpt(&name, b, r.start, r.end))
                        {
                            Some((e, span)) => (Some(Src::Excerpt(e)), Some(span)),
                            None => (None, None),
                        }
                    }
                    _ => (None, None),
                };
                let r = Rendered {
                    finding: f.clone(),
                    primary: i == 0,
                    src,
                    span,
                };
                let mut s = String::new();
                let _ = handler().render_report(&mut s, &r);
                write!(out, "{s}")?;
                if span.is_none() {
                    writeln!(out, "  at {}", pointer_or_root(&f.pointer))?;
                }
            }
            if report.findings.len() > MAX_RENDERED {
                writeln!(
                    out,
                    "  ({} findings; the first {MAX_RENDERED} are shown with details)",
                    report.findings.len()
                )?;
            }
        }
    }
    Ok(())
}

/// Findings rendered with source excerpts (the rest get one line each).
const MAX_RENDERED: usize = 50;
/// Findings given a source region in SARIF (locating costs a scan of the document).
const MAX_LOCATED: usize = 200;
/// Lines longer than this (canonical one-line bundles) are not shown as excerpts.
const MAX_EXCERPT_LINE: usize = 2000;

fn has_long_lines(bytes: &[u8]) -> bool {
    bytes
        .split(|&b| b == b'\n')
        .any(|line| line.len() > MAX_EXCERPT_LINE)
}

fn pointer_or_root(pointer: &str) -> &str {
    if pointer.is_empty() {
        "the document root"
    } else {
        pointer
    }
}

/// A SARIF 2.1.0 log built one input at a time: each input's sources are
/// dropped once its results are taken, so only the results are held.
#[derive(Default)]
pub struct Sarif {
    rules: Vec<Value>,
    seen: std::collections::BTreeSet<mcpres::diag::Code>,
    results: Vec<Value>,
}

impl Sarif {
    /// Add one input's results (and the rules they name).
    pub fn add(&mut self, o: &Outcome) {
        let uri = o.path.display().to_string();
        let findings: Vec<(Finding, Option<(usize, usize)>)> = match &o.result {
            Err(e) => {
                let pos = match e {
                    LoadError::Json { source, .. } => Some((source.line, source.column)),
                    _ => None,
                };
                vec![(load_finding(e), pos)]
            }
            Ok(Checked { report, source }) => report
                .findings
                .iter()
                .enumerate()
                .map(|(i, f)| {
                    let pos = source
                        .as_ref()
                        .filter(|_| i < MAX_LOCATED)
                        .and_then(|b| locate(b, &f.pointer).map(|r| line_column(b, r.start)));
                    (f.clone(), pos)
                })
                .collect(),
        };
        for (i, (f, pos)) in findings.into_iter().enumerate() {
            if self.seen.insert(f.code) {
                let e = f.code.explanation();
                self.rules.push(json!({
                    "id": f.code,
                    "name": e.title,
                    "shortDescription": {"text": e.title},
                    "fullDescription": {"text": e.meaning},
                    "help": {"text": e.fix},
                    "properties": {"standardRule": f.rule},
                }));
            }
            let mut location = json!({
                "physicalLocation": {"artifactLocation": {"uri": uri}},
                "logicalLocations": [{"fullyQualifiedName": f.pointer, "kind": "object"}],
            });
            if let Some((line, column)) = pos {
                location["physicalLocation"]["region"] =
                    json!({"startLine": line, "startColumn": column});
            }
            self.results.push(json!({
                "ruleId": f.code,
                "level": "error",
                "message": {"text": f.message},
                "locations": [location],
                "properties": {"primary": i == 0, "standardRule": f.rule, "hint": f.hint},
            }));
        }
    }

    /// The whole log.
    pub fn finish(self) -> Value {
        json!({
            "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
            "version": "2.1.0",
            "runs": [{
                "tool": {"driver": {
                    "name": "mcpres",
                    "version": env!("CARGO_PKG_VERSION"),
                    "rules": self.rules,
                }},
                "results": self.results,
            }],
        })
    }
}

/// What a valid report says in human output: the evidence class, then the
/// family's decision fields (`authenticityClassification SIGNED`,
/// `importStatus INCOMPLETE`, ...).
fn valid_detail(report: &mcpres::diag::Report) -> String {
    let mut parts: Vec<String> = report.evidence_class.iter().cloned().collect();
    // An attested bundle: the classification its wrapper claims beside the
    // one the envelopes and the trust policy justify.
    let claimed = report.extra.get("claimedClassification");
    parts.extend(
        report
            .extra
            .iter()
            .filter_map(|(k, v)| match (k.as_str(), v) {
                ("claimedClassification", _) => None,
                ("authenticityClassification", Value::String(s)) if claimed.is_some() => {
                    Some(format!(
                        "authenticity claimed {}, derived {s}",
                        claimed.and_then(Value::as_str).unwrap_or("?")
                    ))
                }
                (_, Value::String(s)) => Some(format!("{k} {s}")),
                (_, other) => Some(format!("{k} {other}")),
            }),
    );
    if parts.is_empty() {
        return "no evidence class".to_string();
    }
    parts.join(", ")
}
