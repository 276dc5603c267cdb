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
}

pub fn run(args: ReportArgs) -> CliResult {
    let Some(output) = args.output.clone() else {
        return check(&args);
    };
    super::check_new_file(&output, "mcpres report: --output")?;
    args.limits.start_timeout("report");
    // Each input is read, judged and rendered in parallel, and its documents dropped as soon
    // as its section is written: only the sections are kept until the page is assembled.
    let rendered: Vec<(report::Rendered, Exit)> = judge_each(&args, |index, j| {
        (section_of(index, &j), Exit::from(j.outcome.status()))
    })?;
    let exits: Vec<Exit> = rendered.iter().map(|(_, e)| *e).collect();
    let sections: Vec<report::Rendered> = rendered.into_iter().map(|(r, _)| r).collect();
    let page = report::assemble(&sections);
    drop(sections);
    mcpres::fsio::write_new_file(&output, page.as_bytes()).map_err(|e| {
        CliError::Unusable(format!(
            "mcpres report: cannot create {}: {e}",
            output::shown(&output)
        ))
    })?;
    let exit = exits.iter().copied().max().unwrap_or(Exit::Valid);
    let count = |e: Exit| exits.iter().filter(|x| **x == e).count();
    errln!(
        "mcpres: wrote {} ({} bytes) for {} input{}: {} valid, {} invalid, {} unreadable",
        output::shown(&output),
        page.len(),
        exits.len(),
        if exits.len() == 1 { "" } else { "s" },
        count(Exit::Valid),
        count(Exit::Failing),
        count(Exit::Unusable)
    );
    Ok(exit)
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
    };
    report::render_section(index, &section)
}

/// Read and validate every input (folders expanded as for `validate`), in parallel.
fn judge_all(args: &ReportArgs) -> Result<Vec<Judged>, CliError> {
    judge_each(args, |_, j| j)
}

/// Read and validate every input (folders expanded as for `validate`) in parallel, and hand
/// each, with its index, to `then`; the results in input order.
fn judge_each<T: Send>(
    args: &ReportArgs,
    then: impl Fn(usize, Judged) -> T + Sync,
) -> Result<Vec<T>, CliError> {
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
    Ok(expanded
        .inputs
        .par_iter()
        .enumerate()
        .map(|(index, path)| {
            let judged = match bundle::load_with(path, &limits, &dir_limits) {
                Ok(loaded) => {
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
                    }
                }
                Err(e) => Judged {
                    outcome: Outcome {
                        path: path.clone(),
                        result: Err(e),
                    },
                    doc: None,
                    run: None,
                },
            };
            then(index, judged)
        })
        .collect())
}

/// `--check PAGE BUNDLE...`: does the page state each bundle's recomputed digest?
fn check(args: &ReportArgs) -> CliResult {
    let Some(page_path) = &args.check else {
        return Err(CliError::Unusable(
            "mcpres report: give --output or --check".to_owned(),
        ));
    };
    args.limits.start_timeout("report");
    let limits = args.limits.json();
    let bytes = bundle::read_file(page_path, &limits).map_err(|e| {
        CliError::Unusable(format!(
            "mcpres report --check: page {}: {}",
            output::shown(page_path),
            render::load_error_text(&e)
        ))
    })?;
    let page = String::from_utf8_lossy(&bytes);
    let stated = report::page_digests(&page);
    if stated.is_empty() {
        return Err(CliError::Unusable(format!(
            "mcpres report --check: {} states no bundle digest: it is not a page `mcpres report` made from a bundle",
            output::shown(page_path)
        )));
    }
    let judged = judge_all(args)?;
    let mut exit = Exit::Valid;
    let mut lines = Vec::new();
    for j in &judged {
        let shown_path = output::shown(&j.outcome.path);
        let checked = match &j.outcome.result {
            Ok(c) => c,
            Err(e) => {
                errln!("{shown_path}: unreadable: {}", render::load_error_text(e));
                exit = exit.max(Exit::Unusable);
                continue;
            }
        };
        let Some(digest) = j.doc.as_ref().and_then(report::bundle_digest) else {
            errln!(
                "{shown_path}: not a conformance bundle (no integrity manifest): no bundle digest to compare"
            );
            exit = exit.max(Exit::Unusable);
            continue;
        };
        let belongs = stated.contains(&digest);
        let valid = checked.report.valid;
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
    // Pages are deterministic: the page these inputs give, byte for byte, or
    // not theirs. A page that names the right digests but was edited (a
    // verdict changed, a section cut to its digest line) fails here.
    if exit == Exit::Valid {
        let sections: Vec<report::Rendered> = judged
            .iter()
            .enumerate()
            .map(|(i, j)| section_of(i, j))
            .collect();
        let expected = report::assemble(&sections);
        if expected.as_bytes() != bytes.as_slice() {
            let at = expected
                .bytes()
                .zip(bytes.iter())
                .position(|(a, b)| a != *b)
                .unwrap_or(expected.len().min(bytes.len()));
            let line = expected.as_bytes()[..at.min(expected.len())]
                .iter()
                .filter(|b| **b == b'\n')
                .count()
                + 1;
            for l in &mut lines {
                *l = l.replacen(" belongs to ", " names the digest of ", 1);
            }
            lines.push(format!(
                "{} names the bundle digest{} but is not the page `mcpres report` makes from {} (first difference on line {line}: edited, or made from other inputs, paths or options)",
                output::shown(page_path),
                if judged.len() == 1 { "" } else { "s" },
                if judged.len() == 1 { "it" } else { "them, in this order" }
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
