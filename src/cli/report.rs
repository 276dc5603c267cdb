//! `mcpres report PATH... -o report.html`: validate each input as `mcpres validate` does and
//! write one self-contained HTML page of what validation derived
//! ([`mcpres::produce::report`]). The exit code is `validate`'s (0 every input valid,
//! 1 a failing diagnostic, 2 an unreadable input); the page is written in every case, since
//! an invalid bundle is worth a page too. The output is never overwritten.

use std::path::PathBuf;

use rayon::prelude::*;
use serde_json::Value;

use mcpres::bundle::{self, profile_dir::RunFile};
use mcpres::produce::report::{self, Section};
use mcpres::validate;

use super::{CliError, CliResult, Exit, Outcome, Settings, check_loaded, limits, output, render};

#[derive(Debug, clap::Args)]
pub struct ReportArgs {
    /// Files or bundle directories to report on (one section each).
    #[arg(required = true)]
    paths: Vec<PathBuf>,
    /// The new HTML file (must not exist).
    #[arg(short, long, value_name = "REPORT.html")]
    output: PathBuf,
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
    super::check_new_file(&args.output, "mcpres report: --output")?;
    args.limits.start_timeout("report");
    let limits = args.limits.json();
    let dir_limits = args.limits.dir();
    let settings = Settings {
        validate: validate::Options::default(),
        require_attested: false,
    };
    // A folder of bundles stands for the bundles it holds, as for `validate`.
    let expanded = super::folders::expand(&args.paths);
    let judged: Vec<Judged> = expanded
        .inputs
        .par_iter()
        .map(|path| match bundle::load_with(path, &limits, &dir_limits) {
            Ok(loaded) => {
                let (doc, run) = match &loaded.profile_dir {
                    Some(dir) => (
                        Some(dir.evaluation.clone()),
                        match &dir.run {
                            RunFile::Read(v) => Some(v.clone()),
                            _ => None,
                        },
                    ),
                    None => (loaded.doc.clone(), None),
                };
                Judged {
                    outcome: Outcome {
                        path: path.clone(),
                        result: Ok(check_loaded(loaded, &settings)),
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
        })
        .collect();
    let labels: Vec<String> = judged
        .iter()
        .map(|j| j.outcome.path.display().to_string())
        .collect();
    let reasons: Vec<Option<String>> = judged
        .iter()
        .map(|j| j.outcome.result.as_ref().err().map(render::load_error_text))
        .collect();
    let sections: Vec<Section<'_>> = judged
        .iter()
        .zip(&labels)
        .zip(&reasons)
        .map(|((j, label), reason)| Section {
            label,
            report: j.outcome.result.as_ref().ok().map(|c| &c.report),
            unreadable: reason.as_deref(),
            doc: j.doc.as_ref(),
            run: j.run.as_ref(),
        })
        .collect();
    let page = report::render(&sections);
    mcpres::fsio::write_new_file(&args.output, page.as_bytes()).map_err(|e| {
        CliError::Unusable(format!(
            "mcpres report: cannot create {}: {e}",
            output::shown(&args.output)
        ))
    })?;
    let exit = judged
        .iter()
        .map(|j| j.outcome.exit())
        .max()
        .unwrap_or(Exit::Valid);
    let count = |e: Exit| judged.iter().filter(|j| j.outcome.exit() == e).count();
    errln!(
        "mcpres: wrote {} ({} bytes) for {} input{}: {} valid, {} invalid, {} unreadable",
        output::shown(&args.output),
        page.len(),
        judged.len(),
        if judged.len() == 1 { "" } else { "s" },
        count(Exit::Valid),
        count(Exit::Failing),
        count(Exit::Unusable)
    );
    Ok(exit)
}
