//! The committed field evidence matrix (`bundles/field/`, written by
//! `bundles/field/generate.sh` from `bundles/field/matrix.toml`): it validates
//! (its schema, every leg's evaluation by digest, the FIELD-001 items, no
//! collapsed leg), it holds every declared leg, three subjects over both
//! transports, and the README's table says of each leg what matrix.json says.

mod support;

use std::path::Path;

fn root() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("bundles/field")
}

#[test]
fn the_committed_matrix_validates() {
    let dir = root().join("evidence");
    let o = support::mcpres(&[Path::new("validate"), dir.as_path()]);
    assert_eq!(o.status.code(), Some(0), "{}", support::output_text(&o));
}

#[test]
fn the_committed_matrix_holds_every_declared_leg_and_keeps_each_apart() {
    let matrix = support::read_json(&root().join("evidence/matrix.json"));
    let declared: Vec<String> = std::fs::read_to_string(root().join("matrix.toml"))
        .unwrap()
        .lines()
        .filter_map(|l| l.strip_prefix("id = \""))
        .map(|l| l.trim_end_matches('"').to_string())
        .collect();
    let legs = matrix["legs"].as_array().unwrap();
    let ids: Vec<&str> = legs.iter().map(|l| l["id"].as_str().unwrap()).collect();
    assert_eq!(ids, declared.iter().map(String::as_str).collect::<Vec<_>>());
    let mut seen = std::collections::BTreeSet::new();
    for l in legs {
        // Every leg ran (a NOT_RUN leg would mean a subject was missing).
        assert_ne!(l["result"], "NOT_RUN", "{}", l["id"]);
        let subject = l["id"].as_str().unwrap().split('-').next().unwrap();
        seen.insert((
            subject.to_string(),
            l["transport"].as_str().unwrap().to_string(),
        ));
    }
    for subject in ["reference", "everything", "python"] {
        for transport in ["stdio", "streamable-http"] {
            assert!(
                seen.contains(&(subject.to_string(), transport.to_string())),
                "no {subject} leg over {transport}"
            );
        }
    }
    // A failing leg is never folded into an overall pass.
    let any_fail = legs.iter().any(|l| l["result"] == "FAIL");
    if any_fail {
        assert_eq!(matrix["result"], "FAIL");
    }
}

#[test]
fn the_readme_table_says_what_the_matrix_says() {
    let matrix = support::read_json(&root().join("evidence/matrix.json"));
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    for l in matrix["legs"].as_array().unwrap() {
        let id = l["id"].as_str().unwrap();
        let row = readme
            .lines()
            .find(|r| r.starts_with(&format!("| `{id}` |")))
            .unwrap_or_else(|| panic!("README has no row for {id}"));
        let cells: Vec<&str> = row.split(" | ").collect();
        assert_eq!(cells[4], l["result"].as_str().unwrap(), "{id}: {row}");
        for failed in l["failedChecks"].as_array().unwrap_or(&Vec::new()) {
            let check = failed["id"].as_str().unwrap();
            assert!(
                row.contains(&format!(
                    "{check} (`{}`)",
                    failed["reason"].as_str().unwrap()
                )),
                "{id}: the README does not name the failure of {check}"
            );
        }
    }
}
