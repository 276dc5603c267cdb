//! `mcpres badge`: a small SVG badge of what validation derived for one valid bundle.
//!
//! The badge says the derived evidence class, the statement's result as validation accepted
//! it and the number of completed trials, nothing else; its metadata carries the bundle
//! digest (recomputed from the integrity manifest) so that a badge can be traced to its
//! bundle. The caller refuses invalid bundles: this module only draws.

use std::fmt::Write as _;

use super::report::escape;

/// What a badge states.
pub struct Badge<'a> {
    /// The evidence class validation derived.
    pub evidence_class: &'a str,
    /// The statement's result (of a valid bundle).
    pub result: &'a str,
    /// Completed trials, when the bundle has a trial summary.
    pub completed_trials: Option<u64>,
    /// The recomputed bundle digest.
    pub bundle_digest: &'a str,
}

/// Approximate width in pixels of `text` at 11 px in a sans-serif face (upper case and
/// digits are wider than lower case); generous so that text never overflows its box.
fn text_width(text: &str) -> u64 {
    text.chars()
        .map(|c| match c {
            'I' | 'i' | 'l' | '.' | ' ' | '·' | '-' => 4,
            c if c.is_ascii_uppercase() || c == '_' => 8,
            _ => 7,
        })
        .sum::<u64>()
        + 12
}

impl Badge<'_> {
    /// The right-hand text: `CLASS · RESULT · N trials`.
    pub fn message(&self) -> String {
        let mut text = format!("{} · {}", self.evidence_class, self.result);
        if let Some(n) = self.completed_trials {
            let _ = write!(text, " · {n} trial{}", if n == 1 { "" } else { "s" });
        }
        text
    }

    /// The SVG document.
    pub fn render(&self) -> String {
        let label = "MCP-RES";
        let message = self.message();
        let (lw, mw) = (text_width(label), text_width(&message));
        let width = lw + mw;
        let color = match self.result {
            "PASS" => "#2e7d32",
            "FAIL" => "#c62828",
            _ => "#8d6e00",
        };
        let (label_e, message_e, digest_e) =
            (escape(label), escape(&message), escape(self.bundle_digest));
        let mut svg = String::with_capacity(1024);
        let _ = writeln!(
            svg,
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{width}\" height=\"20\" role=\"img\" aria-label=\"{label_e}: {message_e}\">\
<title>{label_e}: {message_e} (bundle digest {digest_e})</title>\
<metadata><mcpres:badge xmlns:mcpres=\"urn:mcpres:badge\" bundle-digest=\"{digest_e}\" evidence-class=\"{}\" result=\"{}\"{}/></metadata>\
<rect width=\"{lw}\" height=\"20\" fill=\"#555\"/><rect x=\"{lw}\" width=\"{mw}\" height=\"20\" fill=\"{color}\"/>\
<g fill=\"#fff\" font-family=\"Verdana,DejaVu Sans,sans-serif\" font-size=\"11\" text-anchor=\"middle\">\
<text x=\"{}\" y=\"14\">{label_e}</text><text x=\"{}\" y=\"14\">{message_e}</text></g></svg>",
            escape(self.evidence_class),
            escape(self.result),
            self.completed_trials
                .map_or_else(String::new, |n| format!(" completed-trials=\"{n}\"")),
            lw / 2,
            lw + mw / 2,
        );
        svg
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn badge_states_class_result_trials_and_digest() {
        let svg = Badge {
            evidence_class: "GENUINE_RUNTIME",
            result: "PASS",
            completed_trials: Some(3),
            bundle_digest: "ab12",
        }
        .render();
        assert!(svg.contains(">GENUINE_RUNTIME · PASS · 3 trials</text>"));
        assert!(svg.contains("bundle-digest=\"ab12\""));
        assert!(svg.contains("completed-trials=\"3\""));
        assert!(svg.starts_with("<svg xmlns=\"http://www.w3.org/2000/svg\""));
    }

    #[test]
    fn one_trial_is_singular_and_markup_is_escaped() {
        let b = Badge {
            evidence_class: "<x>",
            result: "PASS",
            completed_trials: Some(1),
            bundle_digest: "\"",
        };
        assert_eq!(b.message(), "<x> · PASS · 1 trial");
        let svg = b.render();
        assert!(svg.contains("&lt;x&gt;") && !svg.contains("<x>"));
        assert!(svg.contains("bundle-digest=\"&quot;\""));
    }
}
