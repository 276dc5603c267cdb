//! The whole single-file validator: any bytes, read strictly and, when
//! readable, validated by the one dispatch (every document family).
#![no_main]

use libfuzzer_sys::fuzz_target;
use mcpres::validate::{Options, validate_document};

fuzz_target!(|data: &[u8]| {
    let Ok(doc) = mcpres::json::parse_default(data) else {
        return;
    };
    let report = validate_document(&doc, &Options::default());
    // A failing report always names its primary diagnostic.
    if !report.valid {
        assert!(
            report.primary().is_some(),
            "invalid report without a diagnostic"
        );
    }
});
