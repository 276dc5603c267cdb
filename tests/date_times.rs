//! The `date-time` format, row by row of spec/conformance.md entry 17, on
//! both schema engines (the fast evaluator and the `jsonschema` engine), on
//! a trust policy's `validFrom` and a bundle's `run.startedAt`; and the
//! wall-clock rule applying the offsets (entry 18), through the binary
//! (issue 15, item 4). The expected answers were checked against both
//! reference validators: `ajv-formats` 3.0.1 (`date-time`, full mode) and the
//! Python validator's `datetime.fromisoformat` under Python 3.11.

mod support;

use mcpres::schema::{self, SchemaKind, fast};
use serde_json::{Value, json};

fn policy() -> Value {
    mcpres::attest::policy::init(
        "policy/date-times",
        "1.0.0",
        "2026-01-01T00:00:00Z",
        "2027-01-01T00:00:00Z",
    )
    .unwrap()
}

fn bundle() -> Value {
    mcpres::produce::builder::synthetic_bundle(6).unwrap()
}

/// Both engines decide `value` as `accepted` wherever a date-time goes.
fn decide(value: &str, accepted: bool) {
    let mut p = policy();
    p["validFrom"] = json!(value);
    let mut b = bundle();
    b["evidence"]["run"]["startedAt"] = json!(value);
    for (kind, doc) in [
        (SchemaKind::TrustPolicy, &p),
        (SchemaKind::ConformanceBundle, &b),
    ] {
        assert_eq!(
            fast::is_valid(kind, doc),
            Some(accepted),
            "fast evaluator, {kind:?}, {value:?}"
        );
        assert_eq!(
            schema::engine_is_valid(kind, doc),
            accepted,
            "jsonschema engine, {kind:?}, {value:?}"
        );
    }
    assert_eq!(
        mcpres::json::time::rfc3339_micros(value).is_some(),
        accepted,
        "wall-clock parser, {value:?}"
    );
}

fn row(accepted: &[&str], refused: &[&str]) {
    // The unchanged documents are valid, so a refusal is the date-time's.
    decide("2026-01-01T00:00:00.000Z", true);
    for v in accepted {
        decide(v, true);
    }
    for v in refused {
        decide(v, false);
    }
}

#[test]
fn row_lowercase_t_and_z() {
    row(
        &[
            "2026-08-27t12:00:00Z",
            "2026-08-27T12:00:00z",
            "2026-08-27t12:00:00.5z",
        ],
        &[],
    );
}

#[test]
fn row_leap_second_only_at_2359_utc() {
    row(
        &[
            "2016-12-31T23:59:60Z",
            "2016-12-31T18:59:60-05:00",
            "2016-12-31T23:59:60.5Z",
            "2017-01-01T05:29:60+0530",
        ],
        &["2026-06-30T12:00:60Z", "2016-12-31T23:59:60+01:00"],
    );
}

#[test]
fn row_year_0000() {
    row(&["0000-01-01T00:00:00Z", "0000-02-29T00:00:00Z"], &[]);
}

#[test]
fn row_iso_8601_forms_that_are_not_rfc_3339() {
    row(
        &[],
        &[
            "2026-08-27T18:05Z",
            "2026-08-27T18Z",
            "20260827T180500Z",
            "2026-W35-4T18:05:00Z",
            "2026-08-27T18:05:00,5Z",
        ],
    );
}

#[test]
fn row_separator_other_than_t_or_whitespace() {
    row(
        &[],
        &[
            "2026-08-27x12:00:00Z",
            "2026-08-27_12:00:00Z",
            "2026-08-27\u{85}12:00:00Z",
        ],
    );
}

#[test]
fn row_whitespace_separator() {
    let mut accepted: Vec<String> = [
        '\t', '\n', '\u{0B}', '\u{0C}', '\r', ' ', '\u{A0}', '\u{1680}', '\u{2028}', '\u{2029}',
        '\u{202F}', '\u{205F}', '\u{3000}', '\u{FEFF}',
    ]
    .iter()
    .map(|c| format!("2026-08-27{c}12:00:00Z"))
    .collect();
    accepted.extend((0x2000..=0x200A).map(|c| {
        format!(
            "2026-08-27{}12:00:00Z",
            char::from_u32(c).expect("a space character")
        )
    }));
    accepted.push("2026-08-27 12:00:00.000Z".into());
    let accepted: Vec<&str> = accepted.iter().map(String::as_str).collect();
    row(
        &accepted,
        &["2026-08-27  12:00:00Z", "2026-08-27 \t12:00:00Z"],
    );
}

#[test]
fn row_offsets_hhmm_and_hh() {
    row(
        &[
            "2026-08-27T12:00:00+0530",
            "2026-08-27T12:00:00+05",
            "2026-08-27T12:00:00-05",
            "2026-08-27T12:00:00-0000",
            "2026-08-27T12:00:00+23:59",
            "2026-08-27 12:00:00.000+05",
        ],
        &[
            "2026-08-27T12:00:00+053",
            "2026-08-27T12:00:00+05:",
            "2026-08-27T12:00:00+24:00",
            "2026-08-27T12:00:00+05:60",
            "2026-08-27T12:00:00+05:30:00",
            "2026-08-27T12:00:00+5",
        ],
    );
}

#[test]
fn row_fraction_of_any_length_hour_24_no_offset() {
    row(
        &["2026-08-27T12:00:00.1234567890123Z"],
        &["2026-08-27T24:00:00Z", "2026-08-27T12:00:00"],
    );
}

#[test]
fn row_empty_fraction() {
    row(&[], &["2026-08-27T12:00:00.Z"]);
}

#[test]
fn row_out_of_range_fields_of_a_leap_second() {
    row(
        &[],
        &["2016-12-31T24:59:60+01:00", "2016-12-31T23:75:60+00:16"],
    );
}

/// The wall-clock rule applies the offset: a resealed synthetic bundle
/// whose `run.startedAt` is written in another form, through `mcpres validate`.
#[test]
fn the_wall_clock_rule_applies_the_offset_through_the_binary() {
    let tmp = tempfile::tempdir().unwrap();
    // The synthetic run: 03:04:05Z to 03:05:05Z, 60000 ms monotonic.
    let cases = [
        ("2026-01-02 03:04:05.000Z", 0, None),
        ("2026-01-02T08:34:05.000+0530", 0, None),
        ("2026-01-02T08:04:05+05", 0, None),
        ("2026-01-01T22:04:05-05", 0, None),
        // 08:04:05 UTC, after the finish: a reversal, offset applied.
        (
            "2026-01-02T03:04:05.000-05",
            1,
            Some("MCP_RES_WALL_CLOCK_REVERSAL"),
        ),
        // 03:04:05.5 UTC: the monotonic duration no longer fits.
        (
            "2026-01-02 04:04:05.5+0100",
            1,
            Some("MCP_RES_WALL_CLOCK_REVERSAL"),
        ),
    ];
    for (i, (started, code, diagnostic)) in cases.into_iter().enumerate() {
        let mut doc = bundle();
        doc["evidence"]["run"]["startedAt"] = json!(started);
        mcpres::produce::builder::finalize(&mut doc).unwrap();
        let path = tmp.path().join(format!("b{i}.json"));
        std::fs::write(&path, serde_json::to_vec(&doc).unwrap()).unwrap();
        let o = support::mcpres(&["validate", "--format", "json", path.to_str().unwrap()]);
        let report: Value = serde_json::from_slice(&o.stdout).unwrap();
        assert_eq!(o.status.code(), Some(code), "{started:?}: {report}");
        match diagnostic {
            None => assert_eq!(report["valid"], true, "{started:?}: {report}"),
            Some(d) => assert_eq!(report["diagnostics"][0], d, "{started:?}: {report}"),
        }
    }
}
