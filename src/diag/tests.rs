use std::collections::BTreeSet;

use super::codes as k;
use super::*;
use crate::validate::codes as c;

const SPEC: &str = include_str!("../../spec/diagnostics.md");

#[test]
fn codes_are_unique() {
    let mut seen = BTreeSet::new();
    for code in Code::ALL {
        assert!(seen.insert(code.as_str()), "duplicate code {code}");
    }
    assert_eq!(seen.len(), Code::ALL.len());
}

#[test]
fn codes_are_well_formed() {
    for code in Code::ALL {
        let s = code.as_str();
        assert!(s.starts_with("MCP_RES_"), "{s} lacks the MCP_RES_ prefix");
        assert!(
            s.bytes()
                .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_'),
            "{s} has characters outside A-Z 0-9 _"
        );
        assert_eq!(code.explanation().code, s);
        assert_eq!(Code::parse(s), Some(*code));
    }
    assert_eq!(Code::parse("MCP_RES_OAUTH_EARLY_SYNTAX_REJECTION"), None);
}

#[test]
fn every_field_is_filled() {
    for code in Code::ALL {
        let e = code.explanation();
        for (name, value) in [
            ("rule", e.rule),
            ("title", e.title),
            ("meaning", e.meaning),
            ("example", e.example),
            ("fix", e.fix),
        ] {
            assert!(!value.trim().is_empty(), "{code}: empty {name}");
            assert_eq!(value, value.trim(), "{code}: {name} has outer whitespace");
            assert!(!value.contains('\n'), "{code}: {name} spans lines");
        }
    }
}

#[test]
fn families_are_contiguous_in_table_order() {
    let order: Vec<CodeFamily> = Code::ALL.iter().map(|c| c.family()).collect();
    let mut seen: Vec<CodeFamily> = order.clone();
    seen.dedup();
    assert_eq!(
        seen,
        CodeFamily::ALL,
        "each family is one block, in family order"
    );
}

fn of(family: CodeFamily) -> Vec<&'static str> {
    Code::ALL
        .iter()
        .filter(|c| c.family() == family)
        .map(|c| c.as_str())
        .collect()
}

/// The reference kits' per-family lists are the table's families.
#[test]
fn kit_lists_follow_the_table() {
    let core: BTreeSet<_> = c::CORE.into_iter().collect();
    assert_eq!(core, of(CodeFamily::Core).into_iter().collect());
    let attested: BTreeSet<_> = c::ATTESTATION.into_iter().collect();
    assert_eq!(attested, of(CodeFamily::Attested).into_iter().collect());
    // PROFILE, OAUTH and OFFICIAL are the table's families themselves.
    for family in CodeFamily::ALL {
        assert_eq!(family.names().to_vec(), of(*family), "{family:?}");
        let names: Vec<&str> = family.codes().iter().map(|c| c.as_str()).collect();
        assert_eq!(names, of(*family), "{family:?}");
    }
    assert_eq!(c::PROFILE, CodeFamily::Profile.names());
    let migration = of(CodeFamily::Migration);
    assert!(c::MIGRATION.iter().all(|m| migration.contains(m)));
    let v01_only = of(CodeFamily::V01);
    for code in c::V01 {
        let family = Code::parse(code).map(Code::family);
        assert!(
            family == Some(CodeFamily::V01) || family == Some(CodeFamily::Core),
            "{code}: {family:?}"
        );
    }
    assert!(v01_only.iter().all(|v| c::V01.contains(v)));
}

#[test]
fn v01_codes_are_marked() {
    for code in Code::ALL.iter().filter(|c| c.family() == CodeFamily::V01) {
        let e = code.explanation();
        assert!(
            e.rule.contains("v0.1"),
            "{code}: rule {:?} not v0.1",
            e.rule
        );
        assert!(
            e.meaning.starts_with("v0.1 bundle"),
            "{code}: meaning not marked v0.1"
        );
    }
}

#[test]
fn own_families_have_their_rule_ids() {
    for code in Code::ALL {
        let rule = code.rule();
        assert_eq!(
            rule.starts_with("MCPRES-DIR-"),
            code.family() == CodeFamily::Directory,
            "{code}: {rule}"
        );
        assert_eq!(
            rule.starts_with("MCPRES-RESULT-"),
            code.family() == CodeFamily::CoreOwn,
            "{code}: {rule}"
        );
    }
    assert_eq!(of(CodeFamily::CoreOwn), [c::RESULT_CONTRADICTS_EVIDENCE]);
    assert_eq!(k::RESULT_CONTRADICTS_EVIDENCE.rule(), "MCPRES-RESULT-001");
}

#[test]
fn finding_takes_rule_and_hint_from_the_table() {
    let f = Finding::new(k::WRONG_STOP_REASON, "/x", "m");
    assert_eq!(f.rule, "MCPRES-NEG-002");
    assert_eq!(f.hint, k::WRONG_STOP_REASON.fix());
    assert_eq!(
        serde_json::to_value(&f).unwrap()["code"],
        "MCP_RES_WRONG_STOP_REASON"
    );
}

/// One `### CODE: Title` entry of the spec: its `##` section number, code, title and rule.
struct SpecEntry {
    section: usize,
    code: &'static str,
    title: &'static str,
    rule: Option<&'static str>,
}

fn spec_entries() -> Vec<SpecEntry> {
    let mut entries: Vec<SpecEntry> = Vec::new();
    let mut section = 0;
    let mut in_entry = false;
    for line in SPEC.lines() {
        if let Some(rest) = line.strip_prefix("### ") {
            let (code, title) = rest.split_once(": ").unwrap_or((rest, ""));
            in_entry = code.starts_with("MCP_RES_");
            if in_entry {
                entries.push(SpecEntry {
                    section,
                    code,
                    title,
                    rule: None,
                });
            }
        } else if line.starts_with("## ") {
            section += 1;
            in_entry = false;
        } else if let (true, Some(rule)) = (in_entry, line.strip_prefix("- **Rule:** ")) {
            let last = entries.last_mut().expect("an entry");
            assert!(last.rule.is_none(), "{}: two rules", last.code);
            last.rule = Some(rule.trim().trim_matches('`'));
        }
    }
    entries
}

/// spec/diagnostics.md lists the table's codes in table order, one `##` section per family,
/// with the table's title and rule.
#[test]
fn spec_matches_the_table() {
    let spec = spec_entries();
    let documented: Vec<&str> = spec.iter().map(|e| e.code).collect();
    let table: Vec<&str> = Code::ALL.iter().map(|c| c.as_str()).collect();
    assert_eq!(
        documented, table,
        "codes of spec/diagnostics.md vs the table"
    );
    let mut family_of_section = std::collections::BTreeMap::new();
    for (entry, code) in spec.iter().zip(Code::ALL) {
        let e = code.explanation();
        assert_eq!(entry.title, e.title, "title of {code}");
        assert_eq!(entry.rule, Some(e.rule), "rule of {code}");
        let family = family_of_section
            .entry(entry.section)
            .or_insert(code.family());
        assert_eq!(*family, code.family(), "{code} in another family's section");
    }
    assert_eq!(family_of_section.len(), CodeFamily::ALL.len());
}
