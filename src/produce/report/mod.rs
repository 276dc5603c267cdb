//! `mcpres report`: one self-contained HTML page built from what validation derived.
//!
//! The page needs nothing outside itself: inline CSS and SVG, one optional inline script
//! allowed by its hash in the CSP ([`SCRIPT`]), no font, no image, no link to any resource. Every string taken from an input is HTML-escaped ([`escape`]):
//! inputs are untrusted. The page shows, per input, the validator's verdict and every finding
//! with its explanation (the text of `mcpres explain`), then what the document family offers:
//! for a conformance bundle (or the bundle inside an attested one) the declared and derived
//! evidence class, the 14 observation surfaces, the trials, the negative controls, the digests
//! and the bundle digest the page was made from; for a profile evaluation directory a check
//! grid (positive, negative, mutant). The limits of a result are always stated.
//!
//! This module renders only; loading and validating stay with the caller, so the page shows
//! exactly what `mcpres validate` derived. It needs no async runtime.

mod families;

use std::fmt::Write as _;

use base64::Engine as _;
use serde_json::Value;
use sha2::{Digest as _, Sha256};

use crate::diag::Report;
use crate::explain;
use crate::model::digests;
use crate::model::vocab::SURFACES;

/// One input of the page: what was read and what validation said about it.
pub struct Section<'a> {
    /// How the input is named on the page (its path as given).
    pub label: &'a str,
    /// The validator's report; `None` when the input could not be read at all.
    pub report: Option<&'a Report>,
    /// Why the input could not be read (when `report` is `None`).
    pub unreadable: Option<&'a str>,
    /// The document (for a bundle directory, the reassembled bundle; for a profile
    /// evaluation directory, its evaluation.json and for a field matrix directory its
    /// matrix.json, each as the judge gives it from the stored artifacts,
    /// `crate::judge`).
    pub doc: Option<&'a Value>,
    /// A profile evaluation directory's run.json as the judge gives it (an OAuth-boundary
    /// evaluation's as recorded).
    pub run: Option<&'a Value>,
    /// An operational-resilience evaluation directory's measurement report
    /// (`artifacts/measurement.json`, as listed and digest-checked in its directory).
    pub measurement: Option<&'a Value>,
}

/// HTML-escape a string for text and double-quoted attribute values.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            // Neutralised, not only escaped: a control character or a
            // bidirectional override would reorder or hide what the page
            // shows (a verdict, a digest). Shown as its escape, visibly.
            c if c.is_control() && !matches!(c, '\n' | '\t')
                || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' | '\u{200e}' | '\u{200f}' | '\u{061c}') =>
            {
                out.push_str(&format!("\\u{{{:x}}}", u32::from(c)));
            }
            c => out.push(c),
        }
    }
    out
}

const STYLE: &str = "body{font-family:system-ui,sans-serif;margin:2em auto;max-width:70em;color:#1a1a1a;line-height:1.4;padding:0 1em}\
h1{font-size:1.5em}h2{font-size:1.25em;border-bottom:1px solid #ccc;padding-bottom:.2em;margin-top:2em}h3{font-size:1.05em}\
table{border-collapse:collapse;margin:.5em 0}td,th{border:1px solid #ccc;padding:.25em .5em;text-align:left;vertical-align:top}\
code,.digest{font-family:ui-monospace,monospace;font-size:.9em;word-break:break-all}\
.verdict{display:inline-block;padding:.2em .6em;border-radius:.3em;font-weight:bold}\
.ok{background:#d4f4d4;color:#0b4d0b}.bad{background:#f8d0d0;color:#7a0a0a}.warn{background:#fbeec0;color:#5a4300}.na{background:#e6e6e6;color:#444}.info{background:#d8e6f8;color:#0a2f5a}\
.surfaces{display:grid;grid-template-columns:repeat(auto-fill,minmax(13em,1fr));gap:.4em}\
.surface{padding:.4em;border-radius:.3em;font-size:.85em}.surface b{display:block;font-size:.95em}\
.finding{border-left:4px solid #c33;padding:.3em .8em;margin:.6em 0;background:#fdf6f6}\
.limits li{margin:.2em 0}.muted{color:#555}h4{font-size:.95em;margin-bottom:.2em}\
.copy{margin-left:.5em;font-size:.75em;cursor:pointer}th.sort{cursor:pointer}.legend td{font-size:.85em}";

/// The whole page for `sections`, in the order given.
pub fn render(sections: &[Section<'_>]) -> String {
    let rendered: Vec<Rendered> = sections
        .iter()
        .enumerate()
        .map(|(i, s)| render_section(i, s))
        .collect();
    assemble(&rendered)
}

/// One input's section, rendered on its own (so that a caller can render inputs in parallel
/// and drop each document as soon as its section is written), with what the page's head
/// and index need of it.
pub struct Rendered {
    /// The section's HTML.
    html: String,
    /// The input's name on the page, escaped.
    label: String,
    /// The verdict's style class and word.
    verdict: (&'static str, &'static str),
    /// The recomputed bundle digest, for a bundle.
    digest: Option<String>,
}

/// Render the section of input number `index` (from 0).
pub fn render_section(index: usize, s: &Section<'_>) -> Rendered {
    let mut html = String::with_capacity(8 * 1024);
    section(&mut html, index, s);
    Rendered {
        html,
        label: escape(s.label),
        verdict: verdict_of(s),
        digest: bundle_of(s.doc).and_then(recomputed_digest),
    }
}

/// What the page's head and inputs table need of one section: its label,
/// verdict and bundle digest (the section's HTML can be kept elsewhere).
#[derive(Debug, Clone)]
pub struct Summary {
    label: String,
    verdict: (&'static str, &'static str),
    digest: Option<String>,
}

impl Rendered {
    /// The section's HTML.
    pub fn html(&self) -> &str {
        &self.html
    }

    /// What the head needs of the section.
    pub fn summary(&self) -> Summary {
        Summary {
            label: self.label.clone(),
            verdict: self.verdict,
            digest: self.digest.clone(),
        }
    }
}

/// The page around sections rendered by [`render_section`], in the order given.
pub fn assemble(sections: &[Rendered]) -> String {
    let summaries: Vec<Summary> = sections.iter().map(Rendered::summary).collect();
    let body: usize = sections.iter().map(|s| s.html.len()).sum();
    let mut html = head(&summaries);
    html.reserve(body + tail().len());
    for s in sections {
        html.push_str(&s.html);
    }
    html.push_str(&tail());
    html
}

/// The page up to its first section: the head (with every bundle digest the
/// page states) and, for more than one input, the table of inputs. The page
/// is `head`, then each section's HTML in order, then [`tail`]: so it can be
/// written (or compared) one section at a time.
pub fn head(sections: &[Summary]) -> String {
    let mut html = String::with_capacity(16 * 1024 + sections.len() * 300);
    html.push_str("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">");
    html.push_str("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">");
    // Forbid every fetch: the page is self-contained and stays so when opened.
    // The one inline script is allowed by its hash, nothing else.
    let _ = write!(
        html,
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; script-src '{}'\">",
        script_hash()
    );
    // The digests of the bundles the page was made from, for a later check of the page.
    for digest in sections.iter().filter_map(|s| s.digest.as_deref()) {
        let _ = write!(
            html,
            "<meta name=\"{DIGEST_META}\" content=\"{}\">",
            escape(digest)
        );
    }
    html.push_str("<title>MCP-RES evidence report</title><style>");
    html.push_str(STYLE);
    html.push_str("</style></head><body>\n<h1>MCP-RES evidence report</h1>\n");
    let _ = writeln!(
        html,
        "<p class=\"muted\">Made by mcpres {} from {} input{}. Everything below was derived by validation; nothing a producer wrote is taken on trust.</p>",
        escape(env!("CARGO_PKG_VERSION")),
        sections.len(),
        if sections.len() == 1 { "" } else { "s" }
    );
    if sections.len() > 1 {
        html.push_str("<h2>Inputs</h2><table><tr><th>#</th><th>Input</th><th>Verdict</th></tr>\n");
        for (i, s) in sections.iter().enumerate() {
            let (class, word) = s.verdict;
            let _ = writeln!(
                html,
                "<tr><td><a href=\"#input-{i}\">{}</a></td><td><code>{}</code></td><td><span class=\"verdict {class}\">{word}</span></td></tr>",
                i + 1,
                s.label
            );
        }
        html.push_str("</table>\n");
    }
    html
}

/// The page after its last section.
pub fn tail() -> String {
    format!("<script>{SCRIPT}</script></body></html>\n")
}

/// The page's only script: copy buttons beside digests and sortable tables. Optional: the
/// page reads the same without it. Allowed by the CSP through its hash.
const SCRIPT: &str = "(function(){\
document.querySelectorAll('.digest').forEach(function(e){var v=e.textContent.trim();if(!/^[0-9a-f]{16,}$/.test(v))return;\
var b=document.createElement('button');b.type='button';b.className='copy';b.textContent='copy';\
b.addEventListener('click',function(){if(navigator.clipboard){navigator.clipboard.writeText(v).then(function(){b.textContent='copied';},function(){b.textContent='select and copy';});}});e.appendChild(b);});\
document.querySelectorAll('table.sortable').forEach(function(t){var h=t.rows[0];if(!h)return;\
Array.prototype.forEach.call(h.cells,function(th){th.className+=' sort';th.title='sort';th.addEventListener('click',function(){\
var i=th.cellIndex,up=th.getAttribute('data-up')!=='1',rows=Array.prototype.slice.call(t.rows,1);th.setAttribute('data-up',up?'1':'0');\
rows.sort(function(a,b){var x=a.cells[i]?a.cells[i].textContent:'',y=b.cells[i]?b.cells[i].textContent:'';var c=x.localeCompare(y,undefined,{numeric:true});return up?c:-c;});\
rows.forEach(function(r){r.parentNode.appendChild(r);});});});});\
document.documentElement.setAttribute('data-script','ran');})();";

/// `'sha256-...'` of [`SCRIPT`], the CSP source that allows it and nothing else.
fn script_hash() -> String {
    format!(
        "sha256-{}",
        base64::engine::general_purpose::STANDARD.encode(Sha256::digest(SCRIPT.as_bytes()))
    )
}

/// The name of the head's meta elements that carry the bundle digests a page was made from.
pub const DIGEST_META: &str = "mcpres-bundle-digest";

/// The bundle digests a page states it was made from (its `mcpres-bundle-digest` metas).
/// Only the head is read: input text is escaped, so it can never open a `<meta` there.
pub fn page_digests(page: &str) -> Vec<String> {
    let head = page.split("</head>").next().unwrap_or("");
    let open = format!("<meta name=\"{DIGEST_META}\" content=\"");
    head.match_indices(&open)
        .filter_map(|(at, _)| {
            let rest = &head[at + open.len()..];
            rest.find('"').map(|end| rest[..end].to_owned())
        })
        .collect()
}

/// The bundle digest of a document (a bundle, or the bundle an attested wrapper signs),
/// recomputed from its integrity manifest: what a page records and `--check` compares.
pub fn bundle_digest(doc: &Value) -> Option<String> {
    bundle_of(Some(doc)).and_then(recomputed_digest)
}

fn verdict_of(s: &Section<'_>) -> (&'static str, &'static str) {
    match s.report {
        None => ("bad", "UNREADABLE"),
        Some(r) if r.valid => ("ok", "VALID"),
        Some(_) => ("bad", "INVALID"),
    }
}

fn str_at<'v>(v: Option<&'v Value>, pointer: &str) -> Option<&'v str> {
    v.and_then(|v| v.pointer(pointer)).and_then(Value::as_str)
}

/// `text` escaped, or an em dash for a missing value.
fn shown(text: Option<&str>) -> String {
    text.map_or_else(|| "—".to_owned(), escape)
}

fn section(html: &mut String, index: usize, s: &Section<'_>) {
    let _ = writeln!(
        html,
        "<section id=\"input-{index}\"><h2>Input {}: <code>{}</code></h2>",
        index + 1,
        escape(s.label)
    );
    let (class, word) = verdict_of(s);
    let family = str_at(s.doc, "/schemaVersion");
    let _ = writeln!(
        html,
        "<p>Verdict: <span class=\"verdict {class}\" id=\"verdict-{index}\">{word}</span> · document: <code>{}</code></p>",
        shown(family)
    );
    let Some(report) = s.report else {
        let _ = writeln!(
            html,
            "<p class=\"finding\">This input could not be read: {}</p>",
            shown(s.unreadable)
        );
        limits(html, None, s);
        html.push_str("</section>\n");
        return;
    };
    findings(html, report);
    let bundle = bundle_of(s.doc);
    if let Some(d) = s.doc.filter(|d| d.get("authenticity").is_some()) {
        families::signers(html, report, d);
    }
    if let Some(b) = bundle {
        bundle_parts(html, report, b);
    }
    if s.run.is_some() || family.is_some_and(|f| f.starts_with("mcp-res.profile-evaluation/")) {
        check_grid(html, s.doc, s.run);
    }
    if let Some(m) = s.measurement {
        families::operational(html, m);
    }
    if let Some(d) = s.doc {
        match family.unwrap_or("") {
            f if f.starts_with("mcp-res.oauth-boundary-evaluation/") => {
                families::oauth_grid(html, d)
            }
            f if f.starts_with("mcp-res.official-conformance-attachment/") => {
                families::official(html, report, d);
            }
            f if f.starts_with("mcp-res.migration-result/") => families::migration(html, report, d),
            f if f.starts_with("mcpres.field-matrix/") => families::field_matrix(html, report, d),
            _ => {}
        }
    }
    limits(html, Some(report), s);
    html.push_str("</section>\n");
}

/// The conformance bundle a document is or carries (an attested bundle carries the one it signs).
fn bundle_of(doc: Option<&Value>) -> Option<&Value> {
    let is_bundle = |b: &&Value| b.get("evidence").is_some() && b.get("statement").is_some();
    let d = doc?;
    if is_bundle(&d) {
        Some(d)
    } else {
        d.get("bundle").filter(is_bundle)
    }
}

/// The bundle digest recomputed from the integrity manifest's artifact list.
fn recomputed_digest(bundle: &Value) -> Option<String> {
    bundle
        .pointer("/integrity/artifacts")
        .and_then(Value::as_array)
        .map(|a| digests::bundle_digest(a))
}

fn findings(html: &mut String, report: &Report) {
    if report.findings.is_empty() {
        html.push_str(
            "<h3>Findings</h3><p>No finding: every rule of this document family holds.</p>\n",
        );
        return;
    }
    let _ = writeln!(html, "<h3>Findings ({})</h3>", report.findings.len());
    for f in &report.findings {
        let code = f.code.as_str();
        let _ = write!(
            html,
            "<div class=\"finding\"><p><b><code>{}</code></b> at <code>{}</code> ({})</p><p>{}</p>",
            escape(code),
            escape(if f.pointer.is_empty() {
                "/"
            } else {
                &f.pointer
            }),
            escape(f.rule),
            escape(&f.message)
        );
        if !f.hint.is_empty() {
            let _ = write!(html, "<p class=\"muted\">Hint: {}</p>", escape(&f.hint));
        }
        if let Some(e) = explain::lookup(code) {
            let _ = write!(
                html,
                "<details><summary>{}</summary><p>{}</p><p>Fix: {}</p></details>",
                escape(e.title),
                escape(e.meaning),
                escape(e.fix)
            );
        }
        html.push_str("</div>\n");
    }
    for e in &report.schema_errors {
        let _ = writeln!(
            html,
            "<p class=\"muted\">Schema: <code>{}</code> ({}): {}</p>",
            escape(&e.instance_path),
            escape(&e.keyword),
            escape(&e.message)
        );
    }
}

fn bundle_parts(html: &mut String, report: &Report, b: &Value) {
    let evidence = b.get("evidence");
    let statement = b.get("statement");
    // Result and evidence class.
    let declared = str_at(statement, "/evidenceClass");
    let claimed = str_at(evidence, "/evidenceClassClaim");
    let derived = report.evidence_class.as_deref();
    let agree = derived.is_some() && derived == declared;
    let _ = writeln!(
        html,
        "<h3>Result and evidence class</h3><table><tr><th>Statement result</th><td><code>{}</code></td></tr>\
<tr><th>Subject</th><td>{} {} (<code>{}</code>)</td></tr>\
<tr><th>Profile</th><td><code>{}</code> {} · protocol revision <code>{}</code></td></tr>\
<tr><th>Declared evidence class (statement)</th><td><code>{}</code></td></tr>\
<tr><th>Claimed evidence class (evidence)</th><td><code>{}</code></td></tr>\
<tr><th>Derived evidence class (validator)</th><td><span class=\"verdict {}\">{}</span></td></tr></table>",
        shown(str_at(statement, "/result")),
        shown(str_at(statement, "/subjectName")),
        shown(str_at(statement, "/subjectVersion")),
        shown(str_at(statement, "/subjectType")),
        shown(str_at(statement, "/profileId")),
        shown(str_at(statement, "/profileVersion")),
        shown(str_at(statement, "/protocolRevision")),
        shown(declared),
        shown(claimed),
        if agree { "ok" } else { "warn" },
        shown(derived)
    );
    digests_table(html, b);
    coverage(html, evidence);
    timeline(html, evidence);
    timeline_legend(html, evidence);
    trials(html, evidence);
    negative_controls(html, b);
}

fn digests_table(html: &mut String, b: &Value) {
    let statement = b.get("statement");
    let declared_bundle = str_at(b.get("integrity"), "/bundleDigest");
    let computed = recomputed_digest(b);
    let _ = write!(
        html,
        "<h3>Digests</h3><table>\
<tr><th>Bundle digest (recomputed)</th><td class=\"digest\" id=\"bundle-digest\">{}</td></tr>",
        shown(computed.as_deref())
    );
    if declared_bundle != computed.as_deref() {
        let _ = write!(
            html,
            "<tr><th>Bundle digest (declared, differs)</th><td class=\"digest bad\">{}</td></tr>",
            shown(declared_bundle)
        );
    }
    let _ = writeln!(
        html,
        "<tr><th>Scenario fingerprint</th><td class=\"digest\">{}</td></tr>\
<tr><th>Execution instance digest</th><td class=\"digest\">{}</td></tr>\
<tr><th>Evidence SHA-256</th><td class=\"digest\">{}</td></tr></table>\
<p class=\"muted\">This page was made from the bundle whose digest is shown above.</p>",
        shown(
            str_at(statement, "/scenarioFingerprint")
                .or(str_at(b.get("evidence"), "/scenario/fingerprint"))
        ),
        shown(str_at(statement, "/executionInstanceDigest")),
        shown(str_at(statement, "/evidenceSha256"))
    );
}

fn status_class(status: &str) -> &'static str {
    match status {
        "INSTRUMENTED" => "ok",
        "OBSERVED_INDIRECTLY" => "info",
        "BYPASSED_INTENTIONALLY" | "UNKNOWN" => "warn",
        "UNINSTRUMENTED" => "bad",
        "NOT_APPLICABLE" => "na",
        _ => "bad",
    }
}

fn coverage(html: &mut String, evidence: Option<&Value>) {
    let listed: &[Value] = evidence
        .and_then(|e| e.pointer("/coverage/surfaces"))
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice);
    html.push_str("<h3>Observation surfaces</h3><div class=\"surfaces\">\n");
    for name in SURFACES {
        let entry = listed
            .iter()
            .find(|s| s.get("surface").and_then(Value::as_str) == Some(name));
        let status = entry
            .and_then(|s| s.get("status"))
            .and_then(Value::as_str)
            .unwrap_or("NOT LISTED");
        let required = entry
            .and_then(|s| s.get("required"))
            .and_then(Value::as_bool)
            .unwrap_or(false);
        let refs = entry
            .and_then(|s| s.get("observationRefs"))
            .and_then(Value::as_array)
            .map_or(0, Vec::len);
        let _ = writeln!(
            html,
            "<div class=\"surface {}\" data-surface=\"{name}\"><b>{name}</b>{}{} · {refs} observation{}</div>",
            status_class(status),
            escape(status),
            if required { " · required" } else { "" },
            if refs == 1 { "" } else { "s" }
        );
    }
    html.push_str("</div>\n");
}

/// Operations on the run's monotonic clock (`startedOffsetMs`, `durationMs`), one lane per
/// operation kind; negative controls and faulted operations marked; observations as ticks.
fn timeline(html: &mut String, evidence: Option<&Value>) {
    let list = |key: &str| -> &[Value] {
        evidence
            .and_then(|e| e.get(key))
            .and_then(Value::as_array)
            .map_or(&[], Vec::as_slice)
    };
    let (ops, obs) = (list("operations"), list("observations"));
    if ops.is_empty() {
        return;
    }
    let span = |v: &Value| {
        let start = num(Some(v), "/startedOffsetMs").unwrap_or(0);
        (
            start,
            start.saturating_add(num(Some(v), "/durationMs").unwrap_or(0)),
        )
    };
    let end = ops
        .iter()
        .chain(obs)
        .map(|v| span(v).1)
        .max()
        .unwrap_or(0)
        .max(1);
    // One lane per operation kind; recovery attempts get a lane per recovery policy, so
    // each policy's attempts sit together under its name.
    let lane_of = |o: &Value| -> String {
        let kind = o.get("kind").and_then(Value::as_str).unwrap_or("?");
        match o.get("recoveryPolicyId").and_then(Value::as_str) {
            Some(policy) if kind == "RECOVERY_ATTEMPT" => format!("{kind} · {policy}"),
            _ => kind.to_owned(),
        }
    };
    let mut kinds: Vec<String> = Vec::new();
    for o in ops {
        let lane = lane_of(o);
        if !kinds.contains(&lane) {
            kinds.push(lane);
        }
    }
    let (left, width, lane) = (190u64, 600u64, 22u64);
    let x = |t: u64| left + t.min(end) * width / end;
    let height = (kinds.len() as u64 + 1) * lane + 20;
    let _ = writeln!(
        html,
        "<h3>Timeline</h3><p class=\"muted\">{} operation{} and {} observation{} over {end} ms of the run's monotonic clock; red: negative control, orange outline: injected fault.</p>\
<svg width=\"{}\" height=\"{height}\" role=\"img\" aria-label=\"timeline\">",
        ops.len(),
        if ops.len() == 1 { "" } else { "s" },
        obs.len(),
        if obs.len() == 1 { "" } else { "s" },
        left + width + 10
    );
    for (i, kind) in kinds.iter().enumerate() {
        let y = i as u64 * lane;
        let _ = write!(
            html,
            "<text x=\"0\" y=\"{}\" font-size=\"11\">{}</text>",
            y + 14,
            escape(kind)
        );
    }
    for o in ops {
        let kind = o.get("kind").and_then(Value::as_str).unwrap_or("?");
        let lane_name = lane_of(o);
        let lane_index = kinds.iter().position(|k| *k == lane_name).unwrap_or(0) as u64;
        let (start, stop) = span(o);
        let fill = if kind == "NEGATIVE_CONTROL" {
            "#c0392b"
        } else {
            "#4a7bb7"
        };
        let stroke = if o.get("faultId").is_some_and(|f| !f.is_null()) {
            " stroke=\"#e67e22\" stroke-width=\"2\""
        } else {
            ""
        };
        let _ = write!(
            html,
            "<rect class=\"op{}\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"14\" fill=\"{fill}\"{stroke}><title>{} {} ({start}–{stop} ms){}</title></rect>",
            match kind {
                "NEGATIVE_CONTROL" => " negative",
                "RECOVERY_ATTEMPT" => " recovery",
                _ => "",
            },
            x(start),
            lane_index * lane + 3,
            (x(stop) - x(start)).max(2),
            shown(o.get("operationId").and_then(Value::as_str)),
            shown(o.get("outcome").and_then(Value::as_str)),
            match (
                o.get("parentOperationId").and_then(Value::as_str),
                num(Some(o), "/attempt"),
            ) {
                (Some(parent), Some(n)) => format!(", attempt {n} after {}", escape(parent)),
                _ => String::new(),
            }
        );
    }
    let y = kinds.len() as u64 * lane;
    let _ = write!(
        html,
        "<text x=\"0\" y=\"{}\" font-size=\"11\">observations</text>",
        y + 14
    );
    for v in obs {
        let (start, _) = span(v);
        let _ = write!(
            html,
            "<rect class=\"obs\" x=\"{}\" y=\"{}\" width=\"2\" height=\"14\" fill=\"#333\"><title>{} {}</title></rect>",
            x(start),
            y + 3,
            shown(v.get("id").and_then(Value::as_str)),
            shown(v.get("type").and_then(Value::as_str))
        );
    }
    let _ = writeln!(
        html,
        "<text x=\"{left}\" y=\"{}\" font-size=\"11\">0 ms</text><text x=\"{}\" y=\"{}\" font-size=\"11\" text-anchor=\"end\">{end} ms</text></svg>",
        height - 4,
        left + width,
        height - 4
    );
}

/// The scenario's faults (the mutants negative controls apply) and recovery policies.
fn descriptor_list<'v>(evidence: Option<&'v Value>, key: &str) -> &'v [Value] {
    evidence
        .and_then(|e| e.pointer(&format!("/scenario/descriptor/{key}")))
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice)
}

/// A legend under the timeline: each fault and each recovery policy of the scenario.
fn timeline_legend(html: &mut String, evidence: Option<&Value>) {
    let faults = descriptor_list(evidence, "faults");
    let policies = descriptor_list(evidence, "recoveryPolicies");
    if faults.is_empty() && policies.is_empty() {
        return;
    }
    html.push_str("<table class=\"legend\"><tr><th>Legend</th><th>Id</th><th>What</th></tr>\n");
    for f in faults {
        let f = Some(f);
        let _ = writeln!(
            html,
            "<tr class=\"fault\"><td>fault</td><td><code>{}</code></td><td><code>{}</code> on <code>{}</code>, expected effect <code>{}</code></td></tr>",
            shown(str_at(f, "/id")),
            shown(str_at(f, "/method")),
            shown(str_at(f, "/targetOperationClass")),
            shown(str_at(f, "/expectedEffect"))
        );
    }
    for p in policies {
        let p = Some(p);
        let _ = writeln!(
            html,
            "<tr class=\"policy\"><td>recovery policy</td><td><code>{}</code></td><td>at most {} retr{}, backoff up to {} ms, side effects <code>{}</code></td></tr>",
            shown(str_at(p, "/id")),
            num(p, "/retryLimit").map_or_else(|| "—".to_owned(), |n| n.to_string()),
            if num(p, "/retryLimit") == Some(1) {
                "y"
            } else {
                "ies"
            },
            num(p, "/maxBackoffMs").map_or_else(|| "—".to_owned(), |n| n.to_string()),
            shown(str_at(p, "/sideEffectModel"))
        );
    }
    html.push_str("</table>\n");
}

fn num(v: Option<&Value>, pointer: &str) -> Option<u64> {
    v.and_then(|v| v.pointer(pointer)).and_then(Value::as_u64)
}

fn trials(html: &mut String, evidence: Option<&Value>) {
    let t = evidence.and_then(|e| e.get("trialSummary"));
    let Some(t) = t else {
        html.push_str("<h3>Trials</h3><p>No trial summary.</p>\n");
        return;
    };
    let t = Some(t);
    let opt = |n: Option<u64>| n.map_or_else(|| "—".to_owned(), |n| n.to_string());
    let _ = writeln!(
        html,
        "<h3>Trials</h3><table><tr><th>Planned</th><th>Completed</th><th>Success</th><th>Failure</th><th>Incomplete</th><th>Stability</th></tr>\
<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td><code>{}</code></td></tr></table>",
        opt(num(t, "/plannedTrials")),
        opt(num(t, "/completedTrials")),
        opt(num(t, "/counts/success")),
        opt(num(t, "/counts/failure")),
        opt(num(t, "/counts/incomplete")),
        shown(str_at(t, "/classification"))
    );
    let bars = [
        ("minimum", num(t, "/durationMs/minimum")),
        ("median", num(t, "/durationMs/median")),
        ("p95", num(t, "/durationMs/p95")),
    ];
    let max = bars.iter().filter_map(|b| b.1).max().unwrap_or(0).max(1);
    let _ = write!(
        html,
        "<svg width=\"420\" height=\"90\" role=\"img\" aria-label=\"trial durations\">"
    );
    for (i, (name, value)) in bars.iter().enumerate() {
        let y = 8 + i * 26;
        let width = value.map_or(0, |v| (v * 260 / max).max(1));
        let _ = write!(
            html,
            "<text x=\"0\" y=\"{}\" font-size=\"12\">{name}</text><rect x=\"70\" y=\"{y}\" width=\"{width}\" height=\"18\" fill=\"#4a7bb7\"/><text x=\"{}\" y=\"{}\" font-size=\"12\">{} ms</text>",
            y + 13,
            75 + width,
            y + 13,
            opt(*value)
        );
    }
    html.push_str("</svg>\n");
}

fn negative_controls(html: &mut String, b: &Value) {
    let evidence = b.get("evidence");
    let faults = descriptor_list(evidence, "faults");
    let artifacts: &[Value] = b
        .pointer("/integrity/artifacts")
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice);
    let ops: Vec<&Value> = evidence
        .and_then(|e| e.get("operations"))
        .and_then(Value::as_array)
        .map(|ops| {
            ops.iter()
                .filter(|o| o.get("kind").and_then(Value::as_str) == Some("NEGATIVE_CONTROL"))
                .collect()
        })
        .unwrap_or_default();
    let _ = writeln!(html, "<h3>Negative controls ({})</h3>", ops.len());
    if ops.is_empty() {
        html.push_str("<p>None recorded.</p>\n");
        return;
    }
    html.push_str("<table><tr><th>Operation</th><th>Fault</th><th>Property under test</th><th>Expected verdict</th><th>Observed verdict</th><th>Expected stop reason</th><th>Observed stop reason</th></tr>\n");
    for o in ops {
        let n = o.get("negativeObservation");
        let verdict_ok = str_at(n, "/expectedVerdict") == str_at(n, "/observedVerdict");
        let reason_ok = str_at(n, "/expectedStopReason") == str_at(n, "/observedStopReason");
        let _ = writeln!(
            html,
            "<tr><td><code>{}</code></td><td><code>{}</code></td><td>{}</td><td>{}</td><td class=\"{}\">{}</td><td>{}</td><td class=\"{}\">{}</td></tr>\
<tr class=\"negative-detail\"><td></td><td colspan=\"6\">Mutant (the fault applied): {}<br>Oracle artifact: {}</td></tr>",
            shown(str_at(Some(o), "/operationId")),
            shown(str_at(Some(o), "/faultId")),
            shown(str_at(n, "/propertyUnderTest")),
            shown(str_at(n, "/expectedVerdict")),
            if verdict_ok { "ok" } else { "bad" },
            shown(str_at(n, "/observedVerdict")),
            shown(str_at(n, "/expectedStopReason")),
            if reason_ok { "ok" } else { "bad" },
            shown(str_at(n, "/observedStopReason")),
            mutant_of(faults, str_at(Some(o), "/faultId")),
            oracle_of(artifacts, str_at(n, "/oracleEvidenceRef"))
        );
    }
    html.push_str("</table>\n");
}

/// The fault a negative control applied, as the scenario describes it.
fn mutant_of(faults: &[Value], id: Option<&str>) -> String {
    let fault = faults
        .iter()
        .find(|f| id.is_some() && str_at(Some(f), "/id") == id);
    match fault {
        Some(f) => format!(
            "<code>{}</code> {} · seed {} · reproducibility <span class=\"digest\">{}</span>",
            shown(str_at(Some(f), "/method")),
            shown(str_at(Some(f), "/version")),
            num(Some(f), "/seed").map_or_else(|| "—".to_owned(), |n| n.to_string()),
            shown(str_at(Some(f), "/reproducibilitySha256"))
        ),
        None => format!("<code>{}</code> (not in the scenario)", shown(id)),
    }
}

/// The oracle artifact a negative control cites, with its digest from the integrity manifest.
fn oracle_of(artifacts: &[Value], path: Option<&str>) -> String {
    let artifact = artifacts
        .iter()
        .find(|a| path.is_some() && str_at(Some(a), "/path") == path);
    match artifact {
        Some(a) => format!(
            "<code>{}</code> ({} bytes, <code>{}</code>)<br><span class=\"digest\">{}</span>",
            shown(path),
            num(Some(a), "/bytes").map_or_else(|| "—".to_owned(), |n| n.to_string()),
            shown(str_at(Some(a), "/mediaType")),
            shown(str_at(Some(a), "/sha256"))
        ),
        None => format!(
            "<code>{}</code> (not in the integrity manifest)",
            shown(path)
        ),
    }
}

/// One cell of the check grid: expected against observed.
fn probe_cell(probe: Option<&Value>) -> String {
    let Some(p) = probe else {
        return "<td class=\"na\">—</td>".to_owned();
    };
    let expected = str_at(Some(p), "/expectedOutcome");
    let observed = str_at(Some(p), "/observedOutcome");
    let reached = p
        .get("propertyReached")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    let class = if expected.is_some() && expected == observed && reached {
        "ok"
    } else {
        "bad"
    };
    format!(
        "<td class=\"{class}\">{} (expected {}){}<br><code>{}</code></td>",
        shown(observed),
        shown(expected),
        if reached {
            ""
        } else {
            " · property not reached"
        },
        shown(str_at(Some(p), "/observedReasonCode"))
    )
}

fn check_grid(html: &mut String, evaluation: Option<&Value>, run: Option<&Value>) {
    let checks: &[Value] = evaluation
        .and_then(|e| e.get("checks"))
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice);
    let run_checks: &[Value] = run
        .and_then(|r| r.get("checks"))
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice);
    let _ = writeln!(
        html,
        "<h3>Profile checks ({})</h3><p>Profile <code>{}</code> {} · protocol revision <code>{}</code> · evaluation result <code>{}</code> · run result <code>{}</code> · claim <code>{}</code></p>",
        checks.len(),
        shown(str_at(evaluation, "/profile/id")),
        shown(str_at(evaluation, "/profile/version")),
        shown(str_at(evaluation, "/profile/protocolRevision")),
        shown(str_at(evaluation, "/result")),
        shown(str_at(run, "/result")),
        shown(str_at(evaluation, "/scope/claim"))
    );
    let _ = writeln!(
        html,
        "<p>Evaluation digest <span class=\"digest\" id=\"evaluation-digest\">{}</span>; evaluation file SHA-256 <span class=\"digest\">{}</span></p>",
        shown(str_at(evaluation, "/evaluationSha256")),
        shown(str_at(run, "/evaluationFileSha256"))
    );
    html.push_str("<table class=\"sortable check-grid\"><tr><th>Check</th><th>Kind</th><th>Verdict</th><th>Positive</th><th>Negative</th><th>Mutant</th></tr>\n");
    for c in checks {
        let id = str_at(Some(c), "/id");
        let r = run_checks
            .iter()
            .find(|r| id.is_some() && str_at(Some(r), "/id") == id);
        let verdict = str_at(r, "/verdict");
        let mutant = match r
            .and_then(|r| r.get("mutantKilled"))
            .and_then(Value::as_bool)
        {
            Some(true) => "<td class=\"ok\">killed</td>".to_owned(),
            Some(false) => "<td class=\"bad\">survived</td>".to_owned(),
            None => "<td class=\"na\">—</td>".to_owned(),
        };
        let _ = writeln!(
            html,
            "<tr><td><code>{}</code></td><td>{}</td><td class=\"{}\">{}</td>{}{}{}</tr>",
            shown(id),
            shown(str_at(r, "/kind")),
            match verdict {
                Some("PASS") => "ok",
                Some("FAIL") => "bad",
                _ => "warn",
            },
            shown(verdict),
            probe_cell(c.get("positive")),
            probe_cell(c.get("negativeControl")),
            mutant
        );
    }
    html.push_str("</table>\n");
}

/// What a result does not say, in plain words; always shown.
fn limits(html: &mut String, report: Option<&Report>, s: &Section<'_>) {
    html.push_str("<h3>Limits of this result</h3><ul class=\"limits\">\n");
    let mut items: Vec<String> = Vec::new();
    match report {
        None => items.push(
            "Nothing could be checked: an unreadable input is evidence of nothing.".to_owned(),
        ),
        Some(r) if !r.valid => items.push(
            "The document breaks rules of the standard (see the findings): none of its claims should be relied on until they are fixed.".to_owned(),
        ),
        Some(_) => {}
    }
    items.push(
        "A result speaks for the exact subject, profile version, protocol revision, scenario and environment it names, and nothing else: another build, configuration or deployment of the same server is not covered.".to_owned(),
    );
    items.push(
        "It describes a bounded experiment: the faults and checks that ran. Behaviour under inputs, faults or load the scenario did not exercise is unknown; a PASS is not a security review or a certification.".to_owned(),
    );
    let doc = s.doc.map(|d| d.get("bundle").unwrap_or(d));
    if let Some(class) = report.and_then(|r| r.evidence_class.as_deref()) {
        items.push(format!(
            "The derived evidence class is {}: only a GENUINE_RUNTIME bundle records a real run of the subject; fixture and other classes demonstrate the format, not the server.",
            escape(class)
        ));
    }
    if let Some(completed) = num(doc, "/evidence/trialSummary/completedTrials") {
        items.push(format!(
            "{completed} trial{} completed: {}.",
            if completed == 1 { "" } else { "s" },
            if completed <= 1 {
                "one observation says nothing about how often the outcome would repeat"
            } else {
                "the spread shown is that of these trials only, not a rate for other runs"
            }
        ));
    }
    if let Some(d) = doc
        && d.get("evidence").is_some()
    {
        items.push(
            "Surfaces that were not instrumented were not watched: what happened there is not in the evidence.".to_owned(),
        );
    }
    match str_at(s.doc, "/schemaVersion").unwrap_or("") {
        f if f.starts_with("mcp-res.oauth-boundary-evaluation/") => items.push(
            "The OAuth checks ran against a loopback fixture with synthetic credentials: they say how the server treats those tokens and redirects, not that any real authorization provider or deployment is secure.".to_owned(),
        ),
        f if f.starts_with("mcp-res.official-conformance-attachment/") => items.push(
            "An imported official result is the official suite's own verdict, kept as it was: it is no MCP-RES evidence class and no official certification; checks the suite skipped or could not test are in the inventories, not passed.".to_owned(),
        ),
        f if f.starts_with("mcp-res.migration-result/") => items.push(
            "A migrated v0.1 bundle keeps its old evidence as it was: legacy assertions are the old producer's word, and each unresolved requirement needs a fresh v0.2 run.".to_owned(),
        ),
        f if f.starts_with("mcpres.field-matrix/") => items.push(
            "A field matrix covers only the legs it lists (subject, transport, revision, runtime, platform): another combination is not covered.".to_owned(),
        ),
        _ => {}
    }
    if s.doc.is_some_and(|d| d.get("authenticity").is_none()) {
        items.push(
            "Integrity digests show the files were not altered after they were bound; they do not say who produced them. Only a signed (attested) bundle checked against a trust policy does.".to_owned(),
        );
    }
    for item in items {
        let _ = writeln!(html, "<li>{item}</li>");
    }
    html.push_str("</ul>\n");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escape_neutralises_markup() {
        assert_eq!(
            escape("<script>alert(\"x\")</script>&'"),
            "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&amp;&#39;"
        );
    }

    #[test]
    fn escape_neutralises_controls_and_direction_overrides() {
        assert_eq!(
            escape("pass\u{202e}LIAF\u{1b}[2J\u{7}\u{2066}x\tend"),
            "pass\\u{202e}LIAF\\u{1b}[2J\\u{7}\\u{2066}x\tend"
        );
    }

    #[test]
    fn page_digests_cannot_be_forged_by_input_text() {
        let forged = "<meta name=\"mcpres-bundle-digest\" content=\"forged\">";
        let page = render(&[Section {
            label: forged,
            report: None,
            unreadable: Some(forged),
            doc: None,
            run: None,
            measurement: None,
        }]);
        assert!(page_digests(&page).is_empty());
        // A digest in the head is read back.
        let head = format!(
            "<html><head><meta name=\"{DIGEST_META}\" content=\"ab\"><meta name=\"{DIGEST_META}\" content=\"cd\"></head><body>{forged}</body>"
        );
        assert_eq!(page_digests(&head), ["ab", "cd"]);
    }

    #[test]
    fn unreadable_input_still_states_limits() {
        let page = render(&[Section {
            label: "<b>x</b>",
            report: None,
            unreadable: Some("no such <file>"),
            doc: None,
            run: None,
            measurement: None,
        }]);
        assert!(page.contains("UNREADABLE"));
        assert!(page.contains("&lt;b&gt;x&lt;/b&gt;"));
        assert!(page.contains("no such &lt;file&gt;"));
        assert!(page.contains("Limits of this result"));
        assert!(!page.contains("<b>x</b>"));
    }
}
