//! The digests a v0.2 bundle binds itself with, as pure functions of its documents.

use serde_json::Value;
use sha2::{Digest, Sha256};

use super::vocab::{EVIDENCE_PATH, STATEMENT_PATH};
use crate::json::canonical;
use crate::json::reader::Written;

/// The digest of `{"artifacts": list}` with the list sorted by path (UTF-16
/// order), written straight to canonical bytes (nothing cloned). Empty when an
/// artifact has no canonical form.
fn sorted_artifacts_digest(list: &mut [&Value]) -> String {
    list.sort_by(|a, b| canonical::cmp_utf16(path_of(a), path_of(b)));
    let mut out = Vec::with_capacity(64 + 160 * list.len());
    out.extend_from_slice(b"{\"artifacts\":[");
    for (i, artifact) in list.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        if canonical::write(artifact, &mut out).is_err() {
            return String::new();
        }
    }
    out.extend_from_slice(b"]}");
    canonical::sha256_hex(&out)
}

/// `supportingArtifactManifestDigest` over a manifest's artifact list.
pub fn supporting_manifest_digest(artifacts: &[Value]) -> String {
    let mut supporting: Vec<&Value> = artifacts
        .iter()
        .filter(|a| {
            let p = a.get("path").and_then(Value::as_str);
            p != Some(EVIDENCE_PATH) && p != Some(STATEMENT_PATH)
        })
        .collect();
    sorted_artifacts_digest(&mut supporting)
}

/// `integrity.bundleDigest` over a manifest's artifact list.
pub fn bundle_digest(artifacts: &[Value]) -> String {
    let mut all: Vec<&Value> = artifacts.iter().collect();
    sorted_artifacts_digest(&mut all)
}

/// Both manifest digests of one artifact list, `(supportingArtifactManifestDigest,
/// bundleDigest)`: what [`supporting_manifest_digest`] and [`bundle_digest`] give,
/// from one sort of the list and one serialization of each artifact (the
/// validator needs both). Each is empty exactly when the other functions give
/// an empty digest: an artifact of its list has no canonical form.
pub fn manifest_digests(artifacts: &[Value]) -> (String, String) {
    let paths: Vec<&str> = artifacts.iter().map(path_of).collect();
    manifest_digests_of(&paths, |index, out| {
        canonical::write(&artifacts[index], out).is_ok()
    })
}

/// [`manifest_digests`] of artifacts read from canonically written bytes:
/// `written[i]` is the canonical form of the artifact whose `path` is
/// `paths[i]`, as it stands in the input (nothing is serialized again). Both
/// digests are empty when the two lists differ in length.
pub fn manifest_digests_written(paths: &[&str], written: &[&[u8]]) -> (String, String) {
    if paths.len() != written.len() {
        return (String::new(), String::new());
    }
    manifest_digests_of(paths, |index, out| {
        out.extend_from_slice(written[index]);
        true
    })
}

/// Both digests of the artifacts whose paths are `paths`; `write(i, out)`
/// appends the canonical form of artifact `i` to `out` (`false`: it has none).
fn manifest_digests_of(
    paths: &[&str],
    mut write: impl FnMut(usize, &mut Vec<u8>) -> bool,
) -> (String, String) {
    let mut list: Vec<usize> = (0..paths.len()).collect();
    // Stable: filtering the sorted list keeps the order sorting the filtered one gives.
    list.sort_by(|&a, &b| canonical::cmp_utf16(paths[a], paths[b]));
    let opening = b"{\"artifacts\":[";
    let mut all = (Sha256::new(), true, true);
    let mut supporting = (Sha256::new(), true, true);
    all.0.update(opening);
    supporting.0.update(opening);
    let mut bytes = Vec::with_capacity(256);
    for index in list {
        let p = paths[index];
        let is_supporting = p != EVIDENCE_PATH && p != STATEMENT_PATH;
        bytes.clear();
        let ok = write(index, &mut bytes);
        for (target, wanted) in [(&mut all, true), (&mut supporting, is_supporting)] {
            if !wanted {
                continue;
            }
            let (hasher, first, all_ok) = target;
            *all_ok &= ok;
            if !*first {
                hasher.update(b",");
            }
            hasher.update(&bytes);
            *first = false;
        }
    }
    let finish = |(mut hasher, _, ok): (Sha256, bool, bool)| {
        if ok {
            hasher.update(b"]}");
            canonical::lower_hex(&hasher.finalize())
        } else {
            String::new()
        }
    };
    (finish(supporting), finish(all))
}

fn path_of(artifact: &Value) -> &str {
    artifact.get("path").and_then(Value::as_str).unwrap_or("")
}

/// `statement.executionInstanceDigest` of an evidence document and an outcome:
/// the digest of the object with members `actualOutcome`, `observationDigests`
/// (each observation's `observationSha256`, `null` where absent), `run`,
/// `scenarioFingerprint` and `supportingArtifactManifestDigest` (`null` where
/// absent), written straight to canonical bytes in that (UTF-16) key order.
/// Empty when a member has no canonical form.
pub fn execution_digest(evidence: &Value, actual_outcome: &str) -> String {
    let null = Value::Null;
    let member = |path: &[&str]| {
        path.iter()
            .try_fold(evidence, |v, k| v.get(k))
            .unwrap_or(&null)
    };
    let observations: &[Value] = evidence
        .get("observations")
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice);
    execution_material(
        actual_outcome,
        observations
            .iter()
            .map(|o| o.get("observationSha256").unwrap_or(&null)),
        [
            member(&["run"]),
            member(&["scenario", "fingerprint"]),
            member(&["supportingArtifactManifestDigest"]),
        ],
        |value, out| canonical::write(value, out).is_ok(),
    )
}

/// [`execution_digest`] of a bundle read from canonically written bytes: the
/// members are taken from the input as they stand (the evidence's `run`,
/// `scenario.fingerprint`, each observation's `observationSha256` and
/// `supportingArtifactManifestDigest`), nothing is serialized again.
pub fn execution_digest_written(w: Written<'_>, actual_outcome: &str) -> String {
    let (bytes, layout) = (w.bytes, w.layout);
    let null = &b"null"[..];
    let evidence = layout.at(bytes, &["evidence"]);
    let member = |path: &[&str]| {
        let at =
            evidence.and_then(|e| path.iter().try_fold(e, |at, k| layout.member(bytes, at, k)));
        at.map_or(null, |i| &bytes[layout.span(i)])
    };
    let observations = evidence
        .and_then(|e| layout.member(bytes, e, "observations"))
        .filter(|&i| bytes.get(layout.span(i).start) == Some(&b'['));
    execution_material(
        actual_outcome,
        observations
            .into_iter()
            .flat_map(|i| layout.children(i))
            .map(|o| {
                layout
                    .member(bytes, o, "observationSha256")
                    .map_or(null, |i| &bytes[layout.span(i)])
            }),
        [
            member(&["run"]),
            member(&["scenario", "fingerprint"]),
            member(&["supportingArtifactManifestDigest"]),
        ],
        |written, out| {
            out.extend_from_slice(written);
            true
        },
    )
}

/// The digest of the execution material, written straight to canonical bytes
/// in UTF-16 key order: `actualOutcome`, `observationDigests` (the
/// `observations`), then `run`, `scenarioFingerprint` and
/// `supportingArtifactManifestDigest` (`members`, in that order). `write`
/// appends a part's canonical form (`false`: it has none; then the digest is
/// empty).
fn execution_material<T>(
    actual_outcome: &str,
    observations: impl Iterator<Item = T>,
    members: [T; 3],
    mut write: impl FnMut(T, &mut Vec<u8>) -> bool,
) -> String {
    let mut out = Vec::with_capacity(512);
    out.extend_from_slice(b"{\"actualOutcome\":");
    canonical::write_string(actual_outcome, &mut out);
    out.extend_from_slice(b",\"observationDigests\":[");
    let mut ok = true;
    for (i, digest) in observations.enumerate() {
        if i > 0 {
            out.push(b',');
        }
        ok &= write(digest, &mut out);
    }
    out.push(b']');
    let names: [&[u8]; 3] = [
        b",\"run\":",
        b",\"scenarioFingerprint\":",
        b",\"supportingArtifactManifestDigest\":",
    ];
    for (name, member) in names.into_iter().zip(members) {
        out.extend_from_slice(name);
        ok &= write(member, &mut out);
    }
    out.push(b'}');
    if ok {
        canonical::sha256_hex(&out)
    } else {
        String::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// The digests as the standard defines them: built as documents, then canonicalized.
    fn by_document_execution(evidence: &Value, outcome: &str) -> String {
        let digests: Vec<Value> = evidence["observations"]
            .as_array()
            .map(|o| {
                o.iter()
                    .map(|x| x.get("observationSha256").cloned().unwrap_or(Value::Null))
                    .collect()
            })
            .unwrap_or_default();
        canonical::digest(&json!({
            "scenarioFingerprint": evidence.pointer("/scenario/fingerprint").cloned().unwrap_or(Value::Null),
            "run": evidence.get("run").cloned().unwrap_or(Value::Null),
            "observationDigests": digests,
            "actualOutcome": outcome,
            "supportingArtifactManifestDigest": evidence.get("supportingArtifactManifestDigest").cloned().unwrap_or(Value::Null),
        }))
        .unwrap()
    }

    fn by_document_artifacts(list: &[&Value]) -> String {
        let mut sorted: Vec<Value> = list.iter().map(|v| (*v).clone()).collect();
        sorted.sort_by(|a, b| {
            canonical::cmp_utf16(
                a["path"].as_str().unwrap_or(""),
                b["path"].as_str().unwrap_or(""),
            )
        });
        canonical::digest(&json!({ "artifacts": sorted })).unwrap()
    }

    #[test]
    fn execution_digest_is_the_digest_of_its_material_document() {
        let evidence = json!({
            "run": {"runId": "r\u{ff61}1", "startedAt": "2026-01-01T00:00:00Z", "n": 3},
            "scenario": {"fingerprint": "ab".repeat(32)},
            "observations": [{"observationSha256": "00"}, {"other": 1}, {"observationSha256": "\"q"}],
            "supportingArtifactManifestDigest": "cd".repeat(32)
        });
        let bundle = json!({ "evidence": evidence });
        let bytes = canonical::to_vec(&bundle).unwrap();
        let (_, layout) =
            crate::json::reader::parse_with_layout(&bytes, &Default::default()).unwrap();
        let written = Written {
            bytes: &bytes,
            layout: layout.as_ref().unwrap(),
        };
        for outcome in ["PASS", "FAIL", "\u{1f600}"] {
            assert_eq!(
                execution_digest(&evidence, outcome),
                by_document_execution(&evidence, outcome)
            );
            assert_eq!(
                execution_digest_written(written, outcome),
                by_document_execution(&evidence, outcome)
            );
        }
        let sparse = json!({"observations": "not a list"});
        assert_eq!(
            execution_digest(&sparse, "PASS"),
            by_document_execution(&json!({}), "PASS")
        );
        for sparse in [
            json!({"observations": "not a list"}),
            json!({"observations": {"observationSha256": "x"}}),
            json!({"observations": [1, [], {"a": 1}], "scenario": []}),
            json!({}),
        ] {
            let bytes = canonical::to_vec(&json!({ "evidence": sparse })).unwrap();
            let (_, layout) =
                crate::json::reader::parse_with_layout(&bytes, &Default::default()).unwrap();
            let written = Written {
                bytes: &bytes,
                layout: layout.as_ref().unwrap(),
            };
            assert_eq!(
                execution_digest_written(written, "PASS"),
                execution_digest(&sparse, "PASS"),
                "{sparse}"
            );
        }
        assert_eq!(execution_digest(&json!({"run": 1.5}), "PASS"), "");
    }

    #[test]
    fn manifest_digests_are_the_digests_of_their_documents() {
        let artifacts = vec![
            json!({"path": "z.json", "sha256": "1", "bytes": 2}),
            json!({"path": EVIDENCE_PATH, "sha256": "3", "bytes": 4}),
            json!({"path": "\u{ff61}", "sha256": "5", "bytes": 6}),
            json!({"path": "\u{1f600}", "sha256": "7", "bytes": 8}),
            json!({"path": STATEMENT_PATH, "sha256": "9", "bytes": 10}),
        ];
        let all: Vec<&Value> = artifacts.iter().collect();
        assert_eq!(bundle_digest(&artifacts), by_document_artifacts(&all));
        let supporting: Vec<&Value> = [0, 2, 3].iter().map(|&i| &artifacts[i]).collect();
        assert_eq!(
            supporting_manifest_digest(&artifacts),
            by_document_artifacts(&supporting)
        );
        assert_eq!(
            bundle_digest(&[]),
            canonical::digest(&json!({"artifacts": []})).unwrap()
        );
        assert_eq!(bundle_digest(&[json!({"path": "a", "n": 0.5})]), "");
    }

    #[test]
    fn both_manifest_digests_at_once_equal_each_alone() {
        let a = |path: &str, n: Value| json!({"path": path, "sha256": "ab", "bytes": n});
        let lists = [
            vec![],
            vec![a(EVIDENCE_PATH, json!(1))],
            vec![
                a("z", json!(1)),
                a("\u{1f600}", json!(2)),
                a("\u{ff61}", json!(3)),
            ],
            vec![
                a(STATEMENT_PATH, json!(1)),
                a("b", json!(2)),
                a(EVIDENCE_PATH, json!(3)),
                a("b", json!(4)),
                a("a", json!(5)),
                json!({"sha256": "no path"}),
                json!("not an object"),
            ],
            // No canonical form: in the evidence entry only the bundle digest is
            // empty; in a supporting entry both are.
            vec![a("x", json!(1)), a(EVIDENCE_PATH, json!(0.5))],
            vec![a("x", json!(0.5)), a(EVIDENCE_PATH, json!(1))],
        ];
        for list in &lists {
            let (supporting, bundle) = manifest_digests(list);
            assert_eq!(supporting, supporting_manifest_digest(list), "{list:?}");
            assert_eq!(bundle, bundle_digest(list), "{list:?}");
            // From the canonical bytes of each artifact, where they have them.
            if let Ok(bytes) = list
                .iter()
                .map(canonical::to_vec)
                .collect::<Result<Vec<_>, _>>()
            {
                let written: Vec<&[u8]> = bytes.iter().map(Vec::as_slice).collect();
                let paths: Vec<&str> = list.iter().map(path_of).collect();
                assert_eq!(
                    manifest_digests_written(&paths, &written),
                    (supporting, bundle)
                );
                if !written.is_empty() {
                    assert_eq!(
                        manifest_digests_written(&paths, &written[..written.len() - 1]),
                        (String::new(), String::new())
                    );
                }
            }
        }
        assert_eq!(manifest_digests(&lists[4]).1, "");
        assert_ne!(manifest_digests(&lists[4]).0, "");
        assert_eq!(manifest_digests(&lists[5]), (String::new(), String::new()));
    }
}
