//! The operational checks about the storage a subject declares it writes (the
//! workload's `[storage]`: a directory and a tool call that writes a file there):
//! `disk-full` and `permission-failure`. The sandbox makes that directory full (no room,
//! no inode) or read-only in the subject's own mount namespace, never on the host; the
//! declared write must then be answered as failed and the subject must go on serving.
//! Without the declaration, the sandbox, or the directory, each is NOT_OBSERVED with the
//! reason. Each stores its raw record under `observation.ops`; its label is
//! [`crate::judge::ops::reading`] of that record.

use serde_json::{Value, json};

use super::checks::{
    live_after, record, reply_label, started_with_faults, take_record, three_unless_unobserved,
    workload,
};
use super::workload::StorageDecl;
use crate::judge::ops as reading;
use crate::model::vocab::ProbeOutcome::*;
use crate::produce::drive::sandbox::Fault;
use crate::produce::profile::check::{CheckRun, Ctx};
use crate::produce::profile::probe::Reply;

/// The declared write in a fresh process of the subject with `fault` (and the role's
/// shim injection), then a liveness request: `rec` gets `writeId`, `write` and
/// `afterId`; the observation (its transcript, `rec` under `observation.ops`) is returned.
fn write_once(ctx: &Ctx, mut rec: Value, s: &StorageDecl, fault: Option<Fault>) -> Value {
    if ctx.web.is_some() {
        let call = json!({"name": s.write_tool, "arguments": s.write_arguments});
        return super::http::write_once(ctx, rec, &call, fault.into_iter().collect());
    }
    let (mut probe, open) = match started_with_faults(ctx, &mut rec, fault.into_iter().collect()) {
        Ok(p) => p,
        Err(observation) => return observation,
    };
    if matches!(open, Reply::Result(_)) {
        let (id, line) = ctx.line(
            "tools/call",
            json!({"name": s.write_tool, "arguments": s.write_arguments}),
        );
        probe.send(line);
        let reply = probe.reply(&id, ctx.answer);
        rec["writeId"] = id;
        rec["write"] = json!(reply_label(&reply));
        if !matches!(reply, Reply::Closed) {
            live_after(ctx, &mut probe, &mut rec);
        }
    }
    ctx.finish(probe, json!({"ops": rec}))
}

fn storage(ctx: &Ctx, check: &str, role: &str) -> Value {
    let w = workload(ctx);
    let s = w.storage.as_ref().expect("checked by the caller");
    let mut rec = record(ctx, check, role, "storage");
    let declared = reading::storage_fault(check, role, &w.to_json());
    rec["storageFault"] = declared.clone();
    let fault = match declared["fault"].as_str() {
        Some("disk-full") => Some(Fault::DiskFull {
            dir: s.path.clone().into(),
            bytes: 0,
        }),
        Some("read-only") => Some(Fault::ReadOnly {
            path: s.path.clone().into(),
        }),
        _ => None,
    };
    if role == "positive" {
        // The same write with no fault first, in a process of its own: it must work.
        let mut transcript = write_once(ctx, json!({"injected": {}}), s, None);
        let mut base = take_record(&mut transcript);
        if let Some(obj) = base.as_object_mut() {
            obj.remove("injected");
        }
        base["transcript"] = transcript;
        rec["baseline"] = base;
    }
    write_once(ctx, rec, s, fault)
}

fn storage_check(
    ctx: &Ctx,
    check: &'static str,
    (outcome, refused): (crate::model::vocab::ProbeOutcome, &'static str),
) -> CheckRun {
    let w = workload(ctx);
    let Some(s) = w.storage.as_ref() else {
        return CheckRun::not_observed(
            check,
            "the workload declares no storage for the subject ([storage] path, writeTool, writeArguments): nothing says what to fill",
        );
    };
    if ctx.stdio_launch().sandbox.is_none() {
        return CheckRun::not_observed(
            check,
            "the storage fault is a mount in the subject's own sandbox, and this run has none (see `mcpres sandbox check`)",
        );
    }
    if !std::path::Path::new(&s.path).is_dir() {
        return CheckRun::not_observed(
            check,
            format!(
                "the declared storage path {} is not an existing directory on this machine",
                s.path
            ),
        );
    }
    // A declared write that fails with no fault, or a fault the sandbox could not
    // inject, leaves nothing to read: not observed, with what the positive's record says.
    three_unless_unobserved(
        check,
        reading::STORAGE_FAILURE_REPORTED,
        (outcome, refused),
        (Accept, reading::STORAGE_WRITE_SERVED),
        |role| storage(ctx, check, role),
    )
}

pub fn disk_full(ctx: &Ctx) -> CheckRun {
    storage_check(ctx, "disk-full", (Reject, reading::STORAGE_WRITE_CLAIMED))
}

pub fn permission_failure(ctx: &Ctx) -> CheckRun {
    storage_check(
        ctx,
        "permission-failure",
        (Reject, reading::STORAGE_WRITE_CLAIMED),
    )
}
