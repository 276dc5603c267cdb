//! What each protocol-profile check can record: for every profile, check and role
//! (positive, negative control, wrong-reason mutant), the observed reason codes its runner
//! can give and the observed outcomes each comes with (`vocabulary.tsv`, beside this file).
//!
//! It binds a label to the check that wrote it. A stored observation whose reason (or
//! outcome) its check's runner never gives for that role says what no reading of the bytes
//! produced: the runner holds every observation it makes to this table before it writes it
//! (one outside it is a programming error, and the check is not observed), and `mcpres
//! validate` refuses a stored label outside it. `MCP_RES_LABEL_NOT_IN_RECORD`, the judge's
//! own label for an observation the bytes contradict, is admitted everywhere.

use std::sync::OnceLock;

use serde_json::json;

use crate::diag::reasons::{LABEL_NOT_IN_RECORD, PARAMETER};
use crate::model::vocab::ProbeOutcome;

/// The table: `profile  check  role  reason  OUTCOME[,OUTCOME...]`, `#` comments.
const TABLE: &str = include_str!("vocabulary.tsv");

/// One line of the table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    pub profile: &'static str,
    pub check: &'static str,
    pub role: &'static str,
    /// A reason code, or a generated family ending in `{n}`.
    pub reason: &'static str,
    pub outcomes: Vec<ProbeOutcome>,
}

impl Entry {
    /// Does the code `reason` belong to this entry (for a family: its prefix and one to ten
    /// decimal digits)?
    pub fn matches(&self, reason: &str) -> bool {
        match self.reason.strip_suffix(PARAMETER) {
            None => self.reason == reason,
            Some(prefix) => reason.strip_prefix(prefix).is_some_and(|n| {
                (1..=10).contains(&n.len()) && n.bytes().all(|b| b.is_ascii_digit())
            }),
        }
    }
}

/// Every entry, in table order.
pub fn entries() -> &'static [Entry] {
    static PARSED: OnceLock<Vec<Entry>> = OnceLock::new();
    PARSED.get_or_init(|| {
        TABLE
            .lines()
            .filter(|l| !l.is_empty() && !l.starts_with('#'))
            .map(|line| {
                let cells: Vec<&'static str> = line.split('\t').collect();
                let [profile, check, role, reason, outcomes] = cells[..] else {
                    panic!("vocabulary.tsv: not five cells: {line}");
                };
                let outcomes = outcomes
                    .split(',')
                    .map(|o| {
                        serde_json::from_value(json!(o))
                            .unwrap_or_else(|_| panic!("vocabulary.tsv: no outcome {o}: {line}"))
                    })
                    .collect();
                Entry {
                    profile,
                    check,
                    role,
                    reason,
                    outcomes,
                }
            })
            .collect()
    })
}

/// The declared reasons (`expected.tsv`, generated from the check declarations): per
/// profile, check and revision, the reason its positive expects when the property holds and
/// the one its negative control expects when refused for the property's own reason.
const EXPECTED: &str = include_str!("expected.tsv");

/// The reasons `check`'s positive and negative control expect at `revision`, or `None` when
/// the declarations hold no such check at that revision.
pub fn expected(
    profile: &str,
    check: &str,
    revision: &str,
) -> Option<(&'static str, &'static str)> {
    EXPECTED
        .lines()
        .filter(|l| !l.starts_with('#'))
        .find_map(|line| {
            let cells: Vec<&'static str> = line.split('\t').collect();
            match cells[..] {
                [p, c, r, held, refused] if p == profile && c == check && r == revision => {
                    Some((held, refused))
                }
                _ => None,
            }
        })
}

/// Does the table speak for this profile's check (a check it does not know is not held to it)?
pub fn covers(profile: &str, check: &str) -> bool {
    entries()
        .iter()
        .any(|e| e.profile == profile && e.check == check)
}

/// May the check's `role` observation record `outcome` with `reason`? `None` when the table
/// does not speak for the check.
pub fn admits(
    profile: &str,
    check: &str,
    role: &str,
    outcome: ProbeOutcome,
    reason: &str,
) -> Option<bool> {
    if !covers(profile, check) {
        return None;
    }
    if reason == LABEL_NOT_IN_RECORD {
        return Some(true);
    }
    Some(entries().iter().any(|e| {
        e.profile == profile
            && e.check == check
            && e.role == role
            && e.matches(reason)
            && e.outcomes.contains(&outcome)
    }))
}

/// Why `admits` said no, in one sentence: what the role records with that reason, if
/// anything.
pub fn refusal(
    profile: &str,
    check: &str,
    role: &str,
    outcome: ProbeOutcome,
    reason: &str,
) -> String {
    let with: Vec<String> = entries()
        .iter()
        .filter(|e| e.profile == profile && e.check == check && e.role == role && e.matches(reason))
        .flat_map(|e| e.outcomes.iter().map(|o| o.to_string()))
        .collect();
    if with.is_empty() {
        format!(
            "check {check}: its {role}.json says {reason}, a reason the {profile} runner never records for this check's {role}"
        )
    } else {
        format!(
            "check {check}: its {role}.json says {outcome} with {reason}, which this check's {role} records only with {}",
            with.join(" or ")
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_reason_in_the_table_is_a_reason_code() {
        for e in entries() {
            assert!(
                crate::diag::reasons::Reason::parse(e.reason).is_some()
                    || crate::diag::reasons::ALL.iter().any(|r| r.code == e.reason),
                "{e:?}"
            );
            assert!(
                ["positive", "negative", "mutant"].contains(&e.role),
                "{e:?}"
            );
            assert!(!e.outcomes.is_empty(), "{e:?}");
        }
    }

    #[test]
    fn a_label_is_admitted_only_with_its_outcomes_and_role() {
        let p = "mcp-res/stdio-transport/v1";
        let quiet = crate::diag::reasons::SILENT_UNTIL_ASKED;
        assert_eq!(
            admits(
                p,
                "silent-process",
                "negative",
                ProbeOutcome::NoEffect,
                quiet
            ),
            Some(true)
        );
        assert_eq!(
            admits(p, "silent-process", "negative", ProbeOutcome::Accept, quiet),
            Some(false)
        );
        assert_eq!(
            admits(
                p,
                "silent-process",
                "negative",
                ProbeOutcome::NoEffect,
                crate::diag::reasons::TERMINATION_NEEDED_SIGKILL
            ),
            Some(false)
        );
        assert_eq!(
            admits(
                p,
                "silent-process",
                "positive",
                ProbeOutcome::NoEffect,
                quiet
            ),
            Some(false)
        );
        assert_eq!(
            admits(
                p,
                "silent-process",
                "negative",
                ProbeOutcome::Accept,
                LABEL_NOT_IN_RECORD
            ),
            Some(true)
        );
        assert_eq!(
            admits(p, "no-such-check", "negative", ProbeOutcome::Accept, quiet),
            None
        );
    }

    #[test]
    fn a_generated_family_admits_its_codes_only() {
        let e = entries()
            .iter()
            .find(|e| e.reason.ends_with(PARAMETER))
            .expect("the HTTP checks record generated codes");
        let prefix = e.reason.strip_suffix(PARAMETER).unwrap();
        assert!(e.matches(&format!("{prefix}400")));
        assert!(!e.matches(prefix));
        assert!(!e.matches(&format!("{prefix}4x")));
        assert!(!e.matches(&format!("{prefix}12345678901")));
    }
}
