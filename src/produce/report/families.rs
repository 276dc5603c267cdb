//! The parts of a section that belong to one document family beyond the conformance bundle:
//! the signers of an attested bundle, the OAuth-boundary check grid, an official
//! attachment's inventories, a migration result (kept, legacy, unresolved) and a field
//! matrix's legs. Every string from the input goes through [`escape`].

use std::fmt::Write as _;

use serde_json::Value;

use super::{escape, num, probe_cell, shown, str_at};
use crate::attest::dsse::decode_base64;
use crate::diag::Report;

fn array<'v>(v: Option<&'v Value>, pointer: &str) -> &'v [Value] {
    v.and_then(|v| v.pointer(pointer))
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice)
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

/// An attested bundle: the classification validation derived against the claimed one, and
/// one row per signature with what its envelope's statement says of the signer.
pub(super) fn signers(html: &mut String, report: &Report, doc: &Value) {
    let auth = doc.get("authenticity");
    let claimed = str_at(auth, "/claimedClassification");
    let derived = report
        .extra
        .get("authenticityClassification")
        .and_then(Value::as_str);
    let envelopes = array(auth, "/envelopes");
    let _ = writeln!(
        html,
        "<h3>Authenticity</h3><table>\
<tr><th>Claimed classification</th><td><code>{}</code></td></tr>\
<tr><th>Classification derived by validation</th><td><span class=\"verdict {}\" id=\"authenticity\">{}</span></td></tr>\
<tr><th>Envelopes</th><td>{}</td></tr></table>",
        shown(claimed),
        if derived.is_some() && derived == claimed {
            "ok"
        } else {
            "warn"
        },
        derived.map_or_else(|| "not derived (see the findings)".to_owned(), escape),
        envelopes.len()
    );
    if envelopes.is_empty() {
        return;
    }
    html.push_str("<table class=\"sortable\" id=\"signers\"><tr><th>Envelope</th><th>Signer identity</th><th>Key fingerprint (keyid)</th><th>Algorithm</th><th>Signing time (statement)</th><th>Trust policy (statement)</th></tr>\n");
    for (i, envelope) in envelopes.iter().enumerate() {
        // The statement the envelope signs; shown only as it reads, validation judged it.
        let statement: Option<Value> = str_at(Some(envelope), "/payload")
            .and_then(decode_base64)
            .and_then(|bytes| serde_json::from_slice(&bytes).ok());
        let predicate = statement.as_ref().and_then(|s| s.get("predicate"));
        for signature in array(Some(envelope), "/signatures") {
            let _ = writeln!(
                html,
                "<tr class=\"signer\"><td>{}</td><td>{}</td><td class=\"digest\">{}</td><td><code>{}</code></td><td>{}</td><td><code>{}</code></td></tr>",
                i + 1,
                shown(str_at(Some(signature), "/signerIdentity")),
                shown(str_at(Some(signature), "/keyid")),
                shown(str_at(Some(signature), "/algorithm")),
                shown(str_at(predicate, "/signingTime")),
                shown(str_at(predicate, "/trustPolicyId"))
            );
        }
    }
    html.push_str("</table>\n");
}

/// An OAuth-boundary evaluation: one row per case, positive, negative and wrong-reason mutant.
pub(super) fn oauth_grid(html: &mut String, doc: &Value) {
    let d = Some(doc);
    let cases = array(d, "/cases");
    let _ = writeln!(
        html,
        "<h3>OAuth boundary checks ({})</h3><p>Profile <code>{}</code> {} · protocol revision <code>{}</code> · result <code>{}</code> · subject {} {}</p>\
<p>Evaluation digest <span class=\"digest\" id=\"evaluation-digest\">{}</span></p>\
<p>Fixture: loopback only <code>{}</code>, synthetic credentials <code>{}</code>, external requests {}, real authorization providers contacted {}.</p>",
        cases.len(),
        shown(str_at(d, "/profile/id")),
        shown(str_at(d, "/profile/version")),
        shown(str_at(d, "/profile/protocolRevision")),
        shown(str_at(d, "/result")),
        shown(str_at(d, "/subject/name")),
        shown(str_at(d, "/subject/version")),
        shown(str_at(d, "/evaluationSha256")),
        doc.pointer("/fixture/loopbackOnly")
            .map_or_else(|| "—".to_owned(), Value::to_string),
        doc.pointer("/fixture/syntheticCredentials")
            .map_or_else(|| "—".to_owned(), Value::to_string),
        num(d, "/fixture/externalNetworkRequests")
            .map_or_else(|| "—".to_owned(), |n| n.to_string()),
        num(d, "/fixture/realAuthorizationProvidersContacted")
            .map_or_else(|| "—".to_owned(), |n| n.to_string()),
    );
    html.push_str("<table class=\"sortable check-grid\"><tr><th>Check</th><th>Source</th><th>Positive</th><th>Negative</th><th>Mutant</th></tr>\n");
    for case in cases {
        let c = Some(case);
        let mutant = case.get("wrongReasonMutant");
        let mutant_cell = match mutant {
            None => "<td class=\"na\">—</td>".to_owned(),
            Some(m) => {
                let m = Some(m);
                let reached = m
                    .and_then(|m| m.get("propertyReached"))
                    .and_then(Value::as_bool)
                    .unwrap_or(false);
                format!(
                    "<td class=\"{}\">expected <code>{}</code><br>observed <code>{}</code>{}</td>",
                    if reached { "ok" } else { "bad" },
                    shown(str_at(m, "/expectedDiagnostic")),
                    shown(str_at(m, "/observedReasonCode")),
                    if reached {
                        ""
                    } else {
                        " · property not reached"
                    }
                )
            }
        };
        let _ = writeln!(
            html,
            "<tr><td><code>{}</code></td><td><code>{}</code></td>{}{}{}</tr>",
            shown(str_at(c, "/id")),
            shown(str_at(c, "/evidenceSource")),
            probe_cell(case.get("positive")),
            probe_cell(case.get("negative")),
            mutant_cell
        );
    }
    html.push_str("</table>\n");
}

/// An official-conformance attachment: what was declared, executed, skipped and so on.
pub(super) fn official(html: &mut String, report: &Report, doc: &Value) {
    let d = Some(doc);
    let _ = writeln!(
        html,
        "<h3>Official conformance import</h3><table>\
<tr><th>Import status (validation)</th><td><code>{}</code></td></tr>\
<tr><th>Suite</th><td><code>{}</code> {} · mode <code>{}</code> · suite <code>{}</code></td></tr>\
<tr><th>Protocol revision</th><td><code>{}</code></td></tr>\
<tr><th>Legs</th><td>server <code>{}</code> · client <code>{}</code></td></tr>\
<tr><th>Original result</th><td class=\"digest\">{}</td></tr></table>",
        shown(
            report
                .extra
                .get("importStatus")
                .and_then(Value::as_str)
                .or(str_at(d, "/importStatus"))
        ),
        shown(str_at(d, "/source/packageName")),
        shown(str_at(d, "/source/packageVersion")),
        shown(str_at(d, "/mode")),
        shown(str_at(d, "/suite")),
        shown(str_at(d, "/protocolRevision")),
        shown(str_at(d, "/legs/server")),
        shown(str_at(d, "/legs/client")),
        shown(str_at(d, "/originalResultArtifact/sha256"))
    );
    let inventories = doc.get("inventories").and_then(Value::as_object);
    html.push_str("<h3>Inventories</h3>");
    let Some(inventories) = inventories else {
        html.push_str("<p>None recorded.</p>\n");
        return;
    };
    html.push_str("<table class=\"sortable\" id=\"inventories\"><tr><th>Inventory</th><th>Count</th><th>Entries</th></tr>\n");
    for (name, list) in inventories {
        let entries = list.as_array().map_or(&[][..], Vec::as_slice);
        let _ = write!(
            html,
            "<tr class=\"inventory\"><td><code>{}</code></td><td>{}</td><td>",
            escape(name),
            entries.len()
        );
        for (i, e) in entries.iter().enumerate() {
            let _ = write!(
                html,
                "{}<code>{}</code>",
                if i == 0 { "" } else { "<br>" },
                e.as_str().map_or_else(|| escape(&e.to_string()), escape)
            );
        }
        html.push_str("</td></tr>\n");
    }
    html.push_str("</table>\n");
}

/// A migration result: what was kept from the v0.1 bundle, what stays a legacy assertion,
/// and what remains unresolved.
pub(super) fn migration(html: &mut String, report: &Report, doc: &Value) {
    let d = Some(doc);
    let _ = writeln!(
        html,
        "<h3>Migration {} → {}</h3><h4>Kept</h4><table>\
<tr><th>Status (validation)</th><td><code>{}</code></td></tr>\
<tr><th>Preserved evidence SHA-256</th><td class=\"digest\">{}</td></tr>\
<tr><th>Preserved evidence class</th><td><code>{}</code></td></tr>\
<tr><th>Authenticity</th><td><code>{}</code></td></tr>\
<tr><th>Stability</th><td><code>{}</code></td></tr></table>",
        shown(str_at(d, "/migration/from")),
        shown(str_at(d, "/migration/to")),
        shown(
            report
                .extra
                .get("status")
                .and_then(Value::as_str)
                .or(str_at(d, "/target/status"))
        ),
        shown(str_at(d, "/report/preservedEvidenceSha256")),
        shown(str_at(d, "/report/preservedEvidenceClass")),
        shown(str_at(d, "/target/authenticityClassification")),
        shown(str_at(d, "/target/stabilityClassification"))
    );
    let legacy = array(d, "/target/legacyAssertions");
    let _ = writeln!(
        html,
        "<h4>Legacy ({} assertion{})</h4><p class=\"muted\">Values the v0.1 producer asserted; nothing in the evidence derives them.</p>",
        legacy.len(),
        plural(legacy.len())
    );
    if !legacy.is_empty() {
        html.push_str("<table class=\"sortable\" id=\"legacy\"><tr><th>Assertion</th><th>Value</th><th>Strength</th></tr>\n");
        for a in legacy {
            let _ = writeln!(
                html,
                "<tr class=\"legacy\"><td><code>{}</code></td><td><code>{}</code></td><td><code>{}</code></td></tr>",
                shown(str_at(Some(a), "/name")),
                a.get("value")
                    .map_or_else(|| "—".to_owned(), |v| escape(&v.to_string())),
                shown(str_at(Some(a), "/strength"))
            );
        }
        html.push_str("</table>\n");
    }
    let unresolved = array(d, "/report/unresolvedRequirements");
    let _ = writeln!(
        html,
        "<h4>Unresolved ({} requirement{})</h4>",
        unresolved.len(),
        plural(unresolved.len())
    );
    if !unresolved.is_empty() {
        html.push_str("<ul id=\"unresolved\">");
        for u in unresolved {
            let _ = write!(html, "<li><code>{}</code></li>", shown(u.as_str()));
        }
        html.push_str("</ul>\n");
    }
    let warnings = array(d, "/report/warnings");
    if !warnings.is_empty() {
        html.push_str("<ul class=\"muted\">");
        for w in warnings {
            let _ = write!(html, "<li>{}</li>", shown(w.as_str()));
        }
        html.push_str("</ul>\n");
    }
}

/// A field matrix directory: one row per leg.
pub(super) fn field_matrix(html: &mut String, report: &Report, doc: &Value) {
    let d = Some(doc);
    let legs = array(d, "/legs");
    let _ = writeln!(
        html,
        "<h3>Field matrix ({} leg{})</h3><p>Result (validation) <code>{}</code> · matrix.json says <code>{}</code></p>",
        legs.len(),
        plural(legs.len()),
        shown(
            report
                .extra
                .get("fieldMatrixResult")
                .and_then(Value::as_str)
        ),
        shown(str_at(d, "/result"))
    );
    if legs.is_empty() {
        return;
    }
    html.push_str("<table class=\"sortable\" id=\"legs\"><tr><th>Leg</th><th>Subject</th><th>Transport</th><th>Revision</th><th>Result</th><th>Clean path</th><th>Expected failure</th><th>Wrong-reason mutants killed</th><th>Failed checks</th></tr>\n");
    let ratio = |leg: &Value, key: &str, held: &str| match (
        num(Some(leg), &format!("/{key}/{held}")),
        num(Some(leg), &format!("/{key}/total")),
    ) {
        (Some(h), Some(t)) => format!("{h}/{t}"),
        _ => "—".to_owned(),
    };
    for leg in legs {
        let l = Some(leg);
        let result = str_at(l, "/result");
        let _ = writeln!(
            html,
            "<tr class=\"leg\"><td><code>{}</code></td><td>{} {}</td><td><code>{}</code></td><td><code>{}</code></td><td class=\"{}\">{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            shown(str_at(l, "/id")),
            shown(str_at(l, "/subject/name")),
            shown(str_at(l, "/subject/version")),
            shown(str_at(l, "/transport")),
            shown(str_at(l, "/protocolRevision")),
            match result {
                Some("PASS") => "ok",
                Some("FAIL") => "bad",
                _ => "warn",
            },
            shown(result),
            ratio(leg, "cleanPath", "held"),
            ratio(leg, "expectedFailure", "held"),
            ratio(leg, "wrongReasonControl", "killed"),
            array(l, "/failedChecks").len()
        );
    }
    html.push_str("</table>\n");
}

/// An operational-resilience evaluation's measurement report (`artifacts/measurement.json`,
/// digest-bound in its directory): the positive soak's latency histogram, resident memory
/// and handles over the soak, errors by reason, and the generator's measured ceiling.
pub(super) fn operational(html: &mut String, m: &Value) {
    html.push_str("<h3>Measurement (one bounded run of the declared workload)</h3>\n");
    let us = |p: &str| {
        num(Some(m), p).map_or("-".to_string(), |v| format!("{:.1} ms", v as f64 / 1000.0))
    };
    let _ = writeln!(
        html,
        "<table><tr><th>scenario</th><td>{}</td></tr><tr><th>rate, concurrency</th><td>{}/s, {}</td></tr>\
         <tr><th>judged requests</th><td>{} ({} without a result)</td></tr>\
         <tr><th>min / median / p95 / p99 / max</th><td>{} / {} / {} / {} / {}</td></tr>\
         <tr><th>peak resident memory</th><td>{} KiB</td></tr>\
         <tr><th>generator ceiling</th><td>{}/s against mcpres's null subject</td></tr>\
         <tr><th>subject runtime, platform</th><td>{}, {} {}</td></tr></table>",
        shown(str_at(Some(m), "/scenario")),
        num(Some(m), "/ratePerS").unwrap_or(0),
        num(Some(m), "/concurrency").unwrap_or(0),
        num(Some(m), "/latency/judgedRequests").unwrap_or(0),
        num(Some(m), "/latency/withoutResult").unwrap_or(0),
        us("/latency/minUs"),
        us("/latency/medianUs"),
        us("/latency/p95Us"),
        us("/latency/p99Us"),
        us("/latency/maxUs"),
        num(Some(m), "/peakRssKib").unwrap_or(0),
        num(Some(m), "/generator/ceiling/ceilingPerS").map_or("-".into(), |c| c.to_string()),
        shown(str_at(Some(m), "/runtime")),
        shown(str_at(Some(m), "/platform")),
        shown(str_at(Some(m), "/architecture")),
    );
    // Latency histogram: one bar per power-of-two millisecond bucket.
    let buckets = array(Some(m), "/latency/histogram");
    if !buckets.is_empty() {
        let max = buckets
            .iter()
            .filter_map(|b| b[1].as_u64())
            .max()
            .unwrap_or(1)
            .max(1);
        let (w, h, bar) = (40 + 44 * buckets.len(), 130, 36);
        let _ = write!(
            html,
            "<h4>Latency from the due time (requests per bucket)</h4>\
             <svg width=\"{w}\" height=\"{h}\" role=\"img\" aria-label=\"latency histogram\">"
        );
        for (i, b) in buckets.iter().enumerate() {
            let (upper, n) = (b[0].as_u64().unwrap_or(0), b[1].as_u64().unwrap_or(0));
            let bh = (n * 90 / max).max(1);
            let x = 20 + 44 * i;
            let _ = write!(
                html,
                "<rect x=\"{x}\" y=\"{}\" width=\"{bar}\" height=\"{bh}\" fill=\"#4a78b0\"><title>≤ {upper} ms: {n}</title></rect>\
                 <text x=\"{}\" y=\"{}\" font-size=\"10\" text-anchor=\"middle\">{n}</text>\
                 <text x=\"{}\" y=\"125\" font-size=\"10\" text-anchor=\"middle\">≤{upper}ms</text>",
                100 - bh,
                x + bar / 2,
                (100 - bh).saturating_sub(2),
                x + bar / 2,
            );
        }
        html.push_str("</svg>\n");
    }
    // Resident memory over the soak, with the handles as a table of first and last.
    let samples = array(Some(m), "/positiveSoakSamples");
    let points: Vec<(u64, u64)> = samples
        .iter()
        .filter_map(|s| Some((s[0].as_u64()?, s[2].as_u64()?)))
        .collect();
    if points.len() >= 2 {
        let t_max = points.iter().map(|p| p.0).max().unwrap_or(1).max(1);
        let lo = points.iter().map(|p| p.1).min().unwrap_or(0);
        let hi = points.iter().map(|p| p.1).max().unwrap_or(0).max(lo + 1);
        let line: Vec<String> = points
            .iter()
            .map(|(t, r)| {
                format!(
                    "{},{}",
                    40 + t * 400 / t_max,
                    110 - (r - lo) * 100 / (hi - lo)
                )
            })
            .collect();
        let _ = writeln!(
            html,
            "<h4>Resident memory over the positive soak ({lo} to {hi} KiB)</h4>\
             <svg width=\"460\" height=\"130\" role=\"img\" aria-label=\"resident memory over the soak\">\
             <polyline fill=\"none\" stroke=\"#b05a4a\" stroke-width=\"1.5\" points=\"{}\"/>\
             <text x=\"40\" y=\"125\" font-size=\"10\">0 ms</text><text x=\"440\" y=\"125\" font-size=\"10\" text-anchor=\"end\">{t_max} ms</text></svg>",
            line.join(" ")
        );
    }
    let handle = |p: &str| num(Some(m), p).map_or("-".to_string(), |v| v.to_string());
    let _ = writeln!(
        html,
        "<table><tr><th></th><th>first sample</th><th>last sample</th></tr>\
         <tr><th>open descriptors</th><td>{}</td><td>{}</td></tr>\
         <tr><th>listening sockets</th><td>{}</td><td>{}</td></tr>\
         <tr><th>live descendants</th><td>{}</td><td>{}</td></tr></table>",
        handle("/handles/first/fds"),
        handle("/handles/last/fds"),
        handle("/handles/first/listeners"),
        handle("/handles/last/listeners"),
        handle("/handles/first/children"),
        handle("/handles/last/children"),
    );
    let errors = m.get("errorsByReason").and_then(Value::as_object);
    match errors.filter(|e| !e.is_empty()) {
        None => html.push_str("<p>Errors by reason: none.</p>\n"),
        Some(e) => {
            html.push_str("<table><tr><th>without a result</th><th>requests</th></tr>");
            for (k, v) in e {
                let _ = write!(
                    html,
                    "<tr><td><code>{}</code></td><td>{}</td></tr>",
                    escape(k),
                    v
                );
            }
            html.push_str("</table>\n");
        }
    }
    let _ = writeln!(
        html,
        "<p class=\"muted\">{}</p>",
        shown(str_at(Some(m), "/claims"))
    );
}
