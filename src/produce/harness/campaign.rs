//! Campaigns: a `--trials N` larger than one bundle can hold, split into parts.
//!
//! A bundle holds at most 256 manifest artifacts, which caps the trials per
//! bundle (see `evidence::artifacts_per_trial`). A larger run becomes a
//! campaign directory: `part-001/`, `part-002/`, ..., each a complete v0.2
//! bundle with its own cleanup check and privacy scan, and `campaign.json`,
//! written last, which summarises the parts. Only a few numbers per trial are
//! kept once a part is written (`TrialStat`), so memory does not grow with the
//! trial records. See spec/harness.md, "Campaigns".

use std::collections::BTreeSet;
use std::ops::RangeInclusive;

use serde_json::{Value, json};

use super::evidence::TrialRecord;

/// `schemaVersion` of `campaign.json`.
pub const SCHEMA_VERSION: &str = "mcpres.campaign/1";
/// The file a campaign directory's summary is written to.
pub const FILE_NAME: &str = "campaign.json";
/// Most trials one `mcpres run` accepts (the trial summary schema's bound).
pub const MAX_TRIALS: usize = 10_000;

/// The directory name of part `n` (1-based).
pub fn part_dir_name(n: usize) -> String {
    format!("part-{n:03}")
}

/// Split trials `1..=trials` into the fewest parts of at most `cap` trials,
/// as even as possible (sizes differ by at most one; earlier parts take the
/// extra trial), so that no part is needlessly a single observation.
pub fn plan(trials: usize, cap: usize) -> Vec<RangeInclusive<usize>> {
    if trials == 0 || cap == 0 {
        return Vec::new();
    }
    let parts = trials.div_ceil(cap);
    let base = trials / parts;
    let extra = trials % parts;
    let mut first = 1;
    (0..parts)
        .map(|k| {
            let len = base + usize::from(k < extra);
            let r = first..=first + len - 1;
            first += len;
            r
        })
        .collect()
}

/// Seed of trial `index` (1-based) of a run with base seed `seed`.
pub fn trial_seed(seed: u32, index: usize) -> u32 {
    // `as` keeps the low 32 bits: the offset is taken modulo 2^32.
    seed.wrapping_add(index.saturating_sub(1) as u32)
}

/// The numbers of one trial a campaign keeps after its part is written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TrialStat {
    pub index: usize,
    pub seed: u32,
    pub duration_ms: u64,
    pub success: bool,
    pub outcome_hash: String,
}

impl TrialStat {
    pub fn of(t: &TrialRecord) -> Self {
        TrialStat {
            index: t.index,
            seed: t.seed,
            duration_ms: t.end_ms.saturating_sub(t.start_ms),
            success: t.success(),
            outcome_hash: t.outcome_hash(),
        }
    }
}

/// Campaign-wide statistics, accumulated part by part: counts, the set of
/// distinct outcome hashes and the trial durations (8 bytes per trial).
#[derive(Debug, Default, Clone)]
pub struct Stats {
    pub trials: usize,
    pub success: usize,
    pub hashes: BTreeSet<String>,
    pub durations: Vec<u64>,
}

impl Stats {
    pub fn add(&mut self, t: &TrialStat) {
        self.trials += 1;
        self.success += usize::from(t.success);
        if !self.hashes.contains(&t.outcome_hash) {
            self.hashes.insert(t.outcome_hash.clone());
        }
        self.durations.push(t.duration_ms);
    }

    /// Minimum, median and p95 of the durations, picked the way a bundle's
    /// trial summary picks them (the value at rank ceil(q * n)).
    pub fn durations(&self) -> Option<(u64, u64, u64)> {
        let mut d = self.durations.clone();
        if d.is_empty() {
            return None;
        }
        d.sort_unstable();
        let pick = |q: f64| d[((q * d.len() as f64).ceil() as usize).clamp(1, d.len()) - 1];
        Some((d[0], pick(0.5), pick(0.95)))
    }

    /// The stability classification, decided as for one bundle.
    pub fn classification(&self) -> &'static str {
        classify(self.trials, self.success, self.hashes.len())
    }
}

/// `SINGLE_OBSERVATION` for one trial; `FLAKY` when outcome hashes differ;
/// `REPEATED_STABLE` when every trial succeeded with one outcome hash;
/// `ENVIRONMENT_DEPENDENT` for repeated identical failures (the same rule as
/// the trial summary of a bundle, see spec/harness.md).
pub fn classify(trials: usize, success: usize, distinct_hashes: usize) -> &'static str {
    if trials == 1 {
        "SINGLE_OBSERVATION"
    } else if distinct_hashes > 1 {
        "FLAKY"
    } else if success == trials {
        "REPEATED_STABLE"
    } else {
        "ENVIRONMENT_DEPENDENT"
    }
}

/// What `campaign.json` records about one written part.
#[derive(Debug, Clone)]
pub struct PartEntry {
    pub part: usize,
    /// Directory name relative to the campaign directory (`part-001`).
    pub path: String,
    pub run_id: String,
    pub trials: RangeInclusive<usize>,
    pub seeds: Vec<u32>,
    pub result: &'static str,
    pub classification: &'static str,
    pub valid: bool,
    pub primary: Option<String>,
    pub evidence_class: Option<String>,
    pub scenario_fingerprint: String,
    pub bundle_digest: String,
    pub success: usize,
    pub cleanup_passed: bool,
    pub privacy_findings: usize,
}

impl PartEntry {
    pub fn passed(&self) -> bool {
        self.valid && self.result == "PASS"
    }

    fn to_json(&self) -> Value {
        let n = self.trials.end() + 1 - self.trials.start();
        json!({
            "part": self.part,
            "path": self.path,
            "runId": self.run_id,
            "trials": {"first": self.trials.start(), "last": self.trials.end(), "count": n},
            "seeds": self.seeds,
            "result": self.result,
            "stabilityClassification": self.classification,
            "valid": self.valid,
            "primaryDiagnostic": self.primary,
            "evidenceClass": self.evidence_class,
            "scenarioFingerprint": self.scenario_fingerprint,
            "bundleDigest": self.bundle_digest,
            "counts": {"success": self.success, "failure": self.seeds.len() - self.success, "notRun": n - self.seeds.len()},
            "cleanupPassed": self.cleanup_passed,
            "privacyFindingsRedacted": self.privacy_findings,
        })
    }
}

/// Run-wide facts of a campaign summary.
#[derive(Debug, Clone)]
pub struct CampaignFacts {
    pub campaign_id: String,
    pub scenario: String,
    pub transport: &'static str,
    pub subject_name: String,
    pub subject_version: String,
    pub artifact_sha256: String,
    pub seed: u32,
    pub planned_trials: usize,
    pub trials_per_part_cap: usize,
    pub started_at: String,
    pub finished_at: String,
    pub tool: Value,
}

/// Overall result: PASS only when every part passed and is valid;
/// INCOMPLETE when every part is valid and PASS or INCOMPLETE (a generic
/// run that could call no tool safely), else FAIL.
pub fn result(parts: &[PartEntry]) -> &'static str {
    if !parts.is_empty() && parts.iter().all(PartEntry::passed) {
        "PASS"
    } else if !parts.is_empty()
        && parts
            .iter()
            .all(|p| p.valid && (p.result == "PASS" || p.result == "INCOMPLETE"))
    {
        "INCOMPLETE"
    } else {
        "FAIL"
    }
}

/// The `campaign.json` document (schema `mcpres.campaign/1`, spec/harness.md).
pub fn document(facts: &CampaignFacts, parts: &[PartEntry], stats: &Stats) -> Value {
    let last_seed = trial_seed(facts.seed, facts.planned_trials);
    json!({
        "schemaVersion": SCHEMA_VERSION,
        "campaignId": facts.campaign_id,
        "tool": facts.tool,
        "scenario": facts.scenario,
        "transport": facts.transport,
        "subject": {"name": facts.subject_name, "version": facts.subject_version, "artifactSha256": facts.artifact_sha256},
        "plannedTrials": facts.planned_trials,
        "completedTrials": stats.trials,
        "trialsPerPartCap": facts.trials_per_part_cap,
        "seeds": {"first": facts.seed, "last": last_seed, "rule": "trial i uses seed + i - 1 (modulo 2^32)"},
        "startedAt": facts.started_at,
        "finishedAt": facts.finished_at,
        "bundleDigestKind": "integrity.bundleDigest",
        "parts": parts.iter().map(PartEntry::to_json).collect::<Vec<_>>(),
        "counts": {"success": stats.success, "failure": stats.trials - stats.success, "incomplete": facts.planned_trials.saturating_sub(stats.trials)},
        "distinctOutcomeHashes": stats.hashes.iter().collect::<Vec<_>>(),
        "durationMs": stats.durations().map(|(min, median, p95)| json!({"minimum": min, "median": median, "p95": p95})),
        "stabilityClassification": stats.classification(),
        "result": if stats.trials < facts.planned_trials { "FAIL" } else { result(parts) },
        "allPartsValid": parts.iter().all(|p| p.valid),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plans_cover_every_trial_once_in_balanced_parts() {
        assert_eq!(plan(8, 8), vec![1..=8]);
        assert_eq!(plan(10, 8), vec![1..=5, 6..=10]);
        assert_eq!(plan(9, 8), vec![1..=5, 6..=9]);
        assert_eq!(plan(17, 8), vec![1..=6, 7..=12, 13..=17]);
        assert!(plan(0, 8).is_empty());
        for (n, cap) in [(1000, 8), (1000, 7), (23, 7), (10_000, 8)] {
            let parts = plan(n, cap);
            assert_eq!(parts.len(), n.div_ceil(cap));
            let mut next = 1;
            for r in &parts {
                assert_eq!(*r.start(), next);
                let len = r.end() + 1 - r.start();
                assert!((1..=cap).contains(&len), "{r:?}");
                next = r.end() + 1;
            }
            assert_eq!(next, n + 1);
            let sizes: Vec<usize> = parts.iter().map(|r| r.end() + 1 - r.start()).collect();
            assert!(sizes.iter().max().unwrap() - sizes.iter().min().unwrap() <= 1);
        }
    }

    #[test]
    fn seeds_continue_across_parts_and_wrap() {
        assert_eq!(trial_seed(7, 1), 7);
        assert_eq!(trial_seed(7, 10), 16);
        assert_eq!(trial_seed(u32::MAX, 2), 0);
    }

    fn stat(index: usize, ms: u64, success: bool, hash: &str) -> TrialStat {
        TrialStat {
            index,
            seed: index as u32,
            duration_ms: ms,
            success,
            outcome_hash: hash.into(),
        }
    }

    #[test]
    fn statistics_and_classification_match_the_trial_summary_rules() {
        let mut s = Stats::default();
        for (i, ms) in [5u64, 1, 9, 3, 7, 2, 8, 4, 6, 10].into_iter().enumerate() {
            s.add(&stat(i + 1, ms, true, "a"));
        }
        // Ranks ceil(0.5 * 10) = 5 and ceil(0.95 * 10) = 10 of 1..=10.
        assert_eq!(s.durations(), Some((1, 5, 10)));
        assert_eq!(s.classification(), "REPEATED_STABLE");
        s.add(&stat(11, 11, false, "a"));
        assert_eq!(s.classification(), "ENVIRONMENT_DEPENDENT");
        s.add(&stat(12, 12, true, "b"));
        assert_eq!(s.classification(), "FLAKY");
        assert_eq!(s.hashes.len(), 2);
        assert_eq!(classify(1, 1, 1), "SINGLE_OBSERVATION");
        assert_eq!(Stats::default().durations(), None);
    }

    #[test]
    fn campaign_result_needs_every_part_valid_and_passing() {
        let entry = |part: usize, result: &'static str, valid: bool| PartEntry {
            part,
            path: part_dir_name(part),
            run_id: format!("run-0000-p{part:03}"),
            trials: 1..=2,
            seeds: vec![1, 2],
            result,
            classification: "REPEATED_STABLE",
            valid,
            primary: None,
            evidence_class: Some("GENUINE_RUNTIME".into()),
            scenario_fingerprint: "f".repeat(64),
            bundle_digest: "d".repeat(64),
            success: 2,
            cleanup_passed: true,
            privacy_findings: 0,
        };
        assert_eq!(
            result(&[entry(1, "PASS", true), entry(2, "PASS", true)]),
            "PASS"
        );
        assert_eq!(
            result(&[entry(1, "PASS", true), entry(2, "FAIL", true)]),
            "FAIL"
        );
        assert_eq!(
            result(&[entry(1, "PASS", true), entry(2, "PASS", false)]),
            "FAIL"
        );
        assert_eq!(
            result(&[entry(1, "PASS", true), entry(2, "INCOMPLETE", true)]),
            "INCOMPLETE"
        );
        assert_eq!(
            result(&[entry(1, "INCOMPLETE", true), entry(2, "FAIL", true)]),
            "FAIL"
        );
        assert_eq!(result(&[entry(1, "INCOMPLETE", false)]), "FAIL");
        assert_eq!(result(&[]), "FAIL");
        assert_eq!(part_dir_name(12), "part-012");
        let facts = CampaignFacts {
            campaign_id: "run-0000".into(),
            scenario: "reference-faults".into(),
            transport: "stdio",
            subject_name: "s".into(),
            subject_version: "1".into(),
            artifact_sha256: "a".repeat(64),
            seed: 1,
            planned_trials: 4,
            trials_per_part_cap: 2,
            started_at: "2026-01-01T00:00:00.000Z".into(),
            finished_at: "2026-01-01T00:00:01.000Z".into(),
            tool: json!({"name": "mcpres"}),
        };
        let mut stats = Stats::default();
        for i in 1..=4 {
            stats.add(&stat(i, 10 * i as u64, true, "h"));
        }
        let doc = document(
            &facts,
            &[entry(1, "PASS", true), entry(2, "PASS", true)],
            &stats,
        );
        assert_eq!(doc["schemaVersion"], SCHEMA_VERSION);
        assert_eq!(doc["seeds"]["last"], 4);
        assert_eq!(
            doc["counts"],
            json!({"success": 4, "failure": 0, "incomplete": 0})
        );
        assert_eq!(
            doc["durationMs"],
            json!({"minimum": 10, "median": 20, "p95": 40})
        );
        assert_eq!(doc["parts"][1]["trials"]["count"], 2);
        assert_eq!(doc["result"], "PASS");
        assert_eq!(doc["stabilityClassification"], "REPEATED_STABLE");
    }
}
