//! `rolling-version-skew`: the subject's other version (the workload's `[versionSkew]`:
//! the next release, or the one before) started beside the running one, as a rolling
//! update does. A client that learned the running version's surface must find it on
//! the other: the same protocol revision, every tool it was shown; and the running
//! version must go on serving while the other starts. The record stores both
//! transcripts under `observation.ops`; its label is [`crate::judge::ops::reading`] of
//! that record.

use serde_json::{Value, json};

use super::checks::{
    record, reply_label, shim_over, shimmed_over, three_unless_unobserved, workload,
};
use super::recovery::{fresh_with, tools_line};
use crate::judge::ops as reading;
use crate::model::vocab::ProbeOutcome::*;
use crate::produce::drive::ident::artifact_digest;
use crate::produce::drive::spawn::resolve_executable;
use crate::produce::profile::check::{CheckRun, Ctx};
use crate::produce::profile::probe::{Launch, Reply};

/// The other version's launch: its program resolved as the subject's is, started with
/// the subject's environment and sandbox.
fn other_launch(ctx: &Ctx, command: &[String]) -> Result<Launch, String> {
    let base = ctx.stdio_launch();
    let (program, args) = command.split_first().ok_or("no command")?;
    let program = resolve_executable(program, program)?;
    Ok(Launch {
        program,
        args: args.to_vec(),
        env: base.env.clone(),
        sandbox: base.sandbox.clone(),
    })
}

fn skew(ctx: &Ctx, role: &str) -> Value {
    let w = workload(ctx);
    let v = w.version_skew.as_ref().expect("checked by the caller");
    let mut rec = record(ctx, "rolling-version-skew", role, "skew");
    let other = other_launch(ctx, &v.command);
    rec["otherVersion"] = json!({
        "label": v.label,
        "command": v.command,
        "artifactSha256": other.as_ref().ok().and_then(|l| artifact_digest(&l.program).ok()).map(|(d, _)| d),
    });
    if let Err(why) = &other {
        rec["otherNotStarted"] = json!(why);
        return json!({"observation": {"ops": rec}});
    }
    if ctx.web.is_some() {
        let launch = other.and_then(|l| shimmed_over(ctx, &l, &rec["injected"]));
        return super::http::skew(ctx, rec, launch);
    }
    // The running version: the subject as it is, nothing injected.
    let mut running = match ctx.start() {
        Ok(p) => p,
        Err(why) => {
            rec["startError"] = json!(why);
            return json!({"observation": {"ops": rec}});
        }
    };
    let open = ctx.open(&mut running);
    rec["open"] = json!(reply_label(&open));
    if matches!(open, Reply::Result(_)) {
        let (tools, line) = tools_line(ctx);
        running.send(line);
        let _ = running.reply(&tools, ctx.answer);
        rec["toolsId"] = tools;
        // The other version (with the role's injection) beside it; the running version
        // asked once more while the other still runs.
        let launch = other.and_then(|l| shim_over(&l, &rec["injected"]));
        let mut after = Value::Null;
        rec["other"] = fresh_with(ctx, launch, || {
            let (id, line) = ctx.live_line();
            running.send(line);
            let _ = running.reply(&id, ctx.answer);
            after = id;
        });
        rec["afterId"] = after;
    }
    ctx.finish(running, json!({"ops": rec}))
}

pub fn rolling_version_skew(ctx: &Ctx) -> CheckRun {
    let check = "rolling-version-skew";
    if workload(ctx).version_skew.is_none() {
        return CheckRun::not_observed(
            check,
            "the workload declares no other version of the subject ([versionSkew] command, label): nothing to run beside it",
        );
    }
    let held = reading::SKEW_COMPATIBLE;
    // A running version with no tools, or another server declared, leaves nothing to
    // compare: not observed, with what the positive's record says.
    three_unless_unobserved(
        check,
        held,
        (Reject, reading::SKEW_TOOL_REMOVED),
        (Accept, held),
        |role| skew(ctx, role),
    )
}
