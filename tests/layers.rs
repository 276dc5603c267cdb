//! The library's layers (ARCHITECTURE.md, "Layers"): a top-level module of `src/` may import
//! modules of its own layer or a lower one, never a higher one, and the import graph of
//! top-level modules has no cycle. An import is any `crate::NAME` path in a file of the
//! module, `use` lines and inline paths alike, outside a trailing `#[cfg(test)] mod tests`
//! (tests may reach anywhere); `python3 tools/modgraph.py src`-style scans see the same edges.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

/// Every top-level module and its layer, lowest first. A new module must be placed here.
const LAYERS: &[(&str, u8)] = &[
    ("json", 0),
    ("fsio", 0),
    ("diag", 1),
    ("explain", 2),
    ("schema", 2),
    ("model", 3),
    ("profiles", 3),
    ("judge", 4),
    ("attest", 4),
    ("bundle", 4),
    ("server", 4),
    ("validate", 5),
    ("produce", 6),
    ("api", 6),
    ("cli", 7),
];

/// Known upward imports still to be removed: (file under `src/`, imported module, why).
/// None are left: the test-vector generator that checked its vectors with the
/// validator now lives in `examples/gen_profile_vectors/`.
const EXCEPTIONS: &[(&str, &str, &str)] = &[];

/// Module names an import of `text` reaches (`crate::a::x`, `crate::{a::x, b}`).
fn imported(text: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let mut rest = text;
    while let Some(at) = rest.find("crate::") {
        rest = &rest[at + "crate::".len()..];
        if let Some(group) = rest.strip_prefix('{') {
            let mut depth = 0usize;
            let mut item_start = true;
            for (i, ch) in group.char_indices() {
                match ch {
                    '{' => depth += 1,
                    '}' if depth == 0 => {
                        rest = &group[i..];
                        break;
                    }
                    '}' => depth -= 1,
                    ',' if depth == 0 => item_start = true,
                    c if item_start && (c.is_alphanumeric() || c == '_') => {
                        let name: String = group[i..]
                            .chars()
                            .take_while(|c| c.is_alphanumeric() || *c == '_')
                            .collect();
                        out.insert(name);
                        item_start = false;
                    }
                    c if item_start && c.is_whitespace() => {}
                    _ => item_start = false,
                }
            }
        } else {
            let name: String = rest
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            if !name.is_empty() {
                out.insert(name);
            }
        }
    }
    out
}

/// The part of a file the scan reads: everything before a trailing `#[cfg(test)] mod tests`.
fn non_test_part(text: &str) -> &str {
    let mut from = 0;
    while let Some(at) = text[from..].find("#[cfg(test)]") {
        let start = from + at;
        let after = text[start + "#[cfg(test)]".len()..].trim_start();
        if after.starts_with("mod tests") {
            return &text[..start];
        }
        from = start + 1;
    }
    text
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// Edges between top-level modules: module -> imported module -> files (relative to `src/`).
fn edges() -> BTreeMap<String, BTreeMap<String, BTreeSet<String>>> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let modules: BTreeSet<String> = LAYERS.iter().map(|(m, _)| (*m).to_owned()).collect();
    let mut edges: BTreeMap<String, BTreeMap<String, BTreeSet<String>>> = BTreeMap::new();
    for path in files {
        let rel = path.strip_prefix(&src).unwrap();
        let rel_text = rel.to_string_lossy().replace('\\', "/");
        let parts: Vec<&str> = rel_text.split('/').collect();
        if parts == ["lib.rs"] || parts == ["main.rs"] || parts.last() == Some(&"tests.rs") {
            continue;
        }
        let module = if parts.len() == 1 {
            parts[0].trim_end_matches(".rs").to_owned()
        } else {
            parts[0].to_owned()
        };
        assert!(
            modules.contains(&module),
            "src/{rel_text}: module `{module}` has no layer in tests/layers.rs (and ARCHITECTURE.md)"
        );
        let text = fs::read_to_string(&path).unwrap();
        for target in imported(non_test_part(&text)) {
            if target != module && modules.contains(&target) {
                edges
                    .entry(module.clone())
                    .or_default()
                    .entry(target)
                    .or_default()
                    .insert(rel_text.clone());
            }
        }
    }
    edges
}

fn layer(module: &str) -> u8 {
    LAYERS.iter().find(|(m, _)| *m == module).unwrap().1
}

fn excepted(file: &str, target: &str) -> bool {
    EXCEPTIONS
        .iter()
        .any(|(f, t, _)| *f == file && *t == target)
}

#[test]
fn no_module_imports_a_higher_layer() {
    let mut upward = Vec::new();
    for (from, targets) in edges() {
        for (to, files) in targets {
            if layer(&to) > layer(&from) {
                for file in files.iter().filter(|f| !excepted(f, &to)) {
                    upward.push(format!(
                        "{from} (layer {}) -> {to} (layer {}) in src/{file}",
                        layer(&from),
                        layer(&to)
                    ));
                }
            }
        }
    }
    assert!(
        upward.is_empty(),
        "imports of a higher layer:\n{}",
        upward.join("\n")
    );
}

#[test]
fn the_module_graph_has_no_cycle() {
    // Drop the excepted files' edges, then look for a cycle by depth-first search.
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (from, targets) in edges() {
        for (to, files) in targets {
            if files.iter().any(|f| !excepted(f, &to)) {
                graph.entry(from.clone()).or_default().insert(to);
            }
        }
    }
    fn visit(
        node: &str,
        graph: &BTreeMap<String, BTreeSet<String>>,
        path: &mut Vec<String>,
        done: &mut BTreeSet<String>,
    ) -> Option<Vec<String>> {
        if let Some(at) = path.iter().position(|n| n == node) {
            let mut cycle = path[at..].to_vec();
            cycle.push(node.to_owned());
            return Some(cycle);
        }
        if done.contains(node) {
            return None;
        }
        path.push(node.to_owned());
        for next in graph.get(node).into_iter().flatten() {
            if let Some(cycle) = visit(next, graph, path, done) {
                return Some(cycle);
            }
        }
        path.pop();
        done.insert(node.to_owned());
        None
    }
    let mut done = BTreeSet::new();
    for (module, _) in LAYERS {
        let cycle = visit(module, &graph, &mut Vec::new(), &mut done);
        assert!(
            cycle.is_none(),
            "import cycle: {}",
            cycle.unwrap().join(" -> ")
        );
    }
}

#[test]
fn the_scan_sees_grouped_and_inline_imports() {
    let found = imported(
        "use crate::{json::canonical, diag::{Code, Finding}};\nlet x = crate::model::vocab::SURFACES;",
    );
    let expected: BTreeSet<String> = ["json", "diag", "model"]
        .into_iter()
        .map(str::to_owned)
        .collect();
    assert_eq!(found, expected);
    let cut = non_test_part("use crate::a;\n#[cfg(test)]\nmod tests {\n use crate::b;\n}\n");
    assert_eq!(imported(cut), BTreeSet::from(["a".to_owned()]));
}

#[test]
fn the_reference_server_never_imports_the_validator() {
    let edges = edges();
    let server = edges.get("server").cloned().unwrap_or_default();
    for forbidden in ["validate", "diag", "produce", "harness"] {
        assert!(
            !server.contains_key(forbidden),
            "server imports {forbidden}: {:?}",
            server.get(forbidden)
        );
    }
}

/// The non-test text of every `.rs` file below `src/<dir>`, by path relative to `src/`.
fn sources_below(dir: &str) -> Vec<(String, String)> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src.join(dir), &mut files);
    files
        .into_iter()
        .map(|p| {
            let rel = p
                .strip_prefix(&src)
                .unwrap()
                .to_string_lossy()
                .replace('\\', "/");
            let text = fs::read_to_string(&p).unwrap();
            (rel, non_test_part(&text).to_owned())
        })
        .collect()
}

/// The producers' rooms (ARCHITECTURE.md, "The producer floor"): the driver
/// (`produce/drive`) stands below every runner and imports none of them; the
/// profile, OAuth and field runners stand on the driver, not on the harness.
#[test]
fn the_producer_floor_stands_below_the_runners() {
    let runners = ["harness", "profile", "oauth", "field", "report", "official"];
    let mut wrong = Vec::new();
    for (rel, text) in sources_below("produce/drive") {
        for runner in runners {
            for form in [
                format!("produce::{runner}"),
                format!("super::super::{runner}"),
            ] {
                if text.contains(&form) {
                    wrong.push(format!("src/{rel} imports the runner {runner}"));
                }
            }
        }
    }
    let mut off_floor = sources_below("produce/profile");
    off_floor.extend(sources_below("produce/oauth"));
    off_floor.extend(
        sources_below("produce")
            .into_iter()
            .filter(|(rel, _)| rel == "produce/field.rs"),
    );
    for (rel, text) in off_floor {
        if text.contains("produce::harness") || text.contains("super::harness") {
            wrong.push(format!("src/{rel} imports the harness"));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// Subjects are started in one file (the driver's spawn), one re-exec into
/// a network namespace of its own (OAuth isolation) and the sandbox helper,
/// which sets the subject's mounts up and then executes it in its own place
/// (plus its availability probe, a shell writing one file); HTTP/1.1 requests are
/// written by one request writer. The reference server is not a producer. `main.rs`
/// starts no subject: a producer executes itself again there, with the allocator's
/// purge delay at 0. The operational runner's injection shim (`drive/shim.rs`)
/// starts the subject as its child on the same pipes (or executes it in its
/// own place), and leaves idle children of its own as the injected defect.
#[test]
fn subjects_are_spawned_and_requests_written_in_one_place() {
    let mut spawns = BTreeSet::new();
    let mut request_writers = BTreeSet::new();
    for (rel, text) in sources_below("") {
        let rel = rel.trim_start_matches('/').to_owned();
        if rel.starts_with("server/") {
            continue;
        }
        let code: Vec<&str> = text
            .lines()
            .filter(|l| !l.trim_start().starts_with("//"))
            .collect();
        if code.iter().any(|l| l.contains("Command::new(")) {
            spawns.insert(rel.clone());
        }
        // A request line ends `... HTTP/1.1\r\n`; a status line starts with it.
        if code.iter().any(|l| l.contains(" HTTP/1.1\\r\\n")) {
            request_writers.insert(rel);
        }
    }
    let expected_spawns: BTreeSet<String> = [
        "main.rs",
        "produce/drive/sandbox.rs",
        "produce/drive/shim.rs",
        "produce/drive/spawn.rs",
        "produce/oauth/isolate.rs",
    ]
    .into_iter()
    .map(str::to_owned)
    .collect();
    assert_eq!(spawns, expected_spawns);
    assert_eq!(
        request_writers,
        BTreeSet::from(["produce/drive/http.rs".to_owned()])
    );
}
