//! A small, fast evaluator for the JSON Schema vocabulary our closed schemas use.
//!
//! Why it exists: compiling the schemas with the `jsonschema` crate costs more
//! than ten milliseconds per process, which is most of the budget of a
//! whole-process validation (under 5 ms). This evaluator answers only the
//! accept/reject question, builds its node tree in well under a millisecond,
//! compiles each distinct `pattern` once, and delegates `format` checks to the
//! `jsonschema` crate itself so format semantics cannot drift. When a document
//! is rejected, the caller asks the `jsonschema` validator for the detailed
//! errors; the differential tests require both engines to agree on every
//! decision. A schema using any keyword outside the supported vocabulary makes
//! the evaluator decline (`None`), and the caller falls back to `jsonschema`.

use std::collections::HashMap;
use std::sync::OnceLock;

use regex::Regex;
use serde_json::Value;

use crate::json::Doc;
use crate::json::scan::{cmp_short, eq_short};

use super::SchemaKind;
use super::simple::Simple;

/// Keywords that only annotate; they never change a decision.
const ANNOTATIONS: [&str; 6] = [
    "$schema",
    "$id",
    "title",
    "description",
    "$comment",
    "$defs",
];

#[derive(Debug, Default)]
struct Node {
    types: Option<u8>,
    refs: Vec<usize>,
    constant: Option<Doc<'static>>,
    enumeration: Option<Vec<Doc<'static>>>,
    /// Declared properties sorted by name: (name, node, whether `required` names it).
    properties: Vec<(String, usize, bool)>,
    /// How many `required` names are declared properties (counted during the member walk).
    required_declared: usize,
    /// The `required` names that are not declared properties (looked up directly).
    required_undeclared: Vec<String>,
    closed: bool,
    additional: Option<usize>,
    items: Option<usize>,
    min_items: Option<usize>,
    max_items: Option<usize>,
    unique_items: bool,
    min_length: Option<usize>,
    max_length: Option<usize>,
    pattern: Option<usize>,
    format: Option<String>,
    minimum: Option<f64>,
    maximum: Option<f64>,
    any_of: Vec<usize>,
    one_of: Vec<usize>,
    all_of: Vec<usize>,
}

const T_NULL: u8 = 1;
const T_BOOL: u8 = 2;
const T_INT: u8 = 4;
const T_NUM: u8 = 8;
const T_STR: u8 = 16;
const T_ARR: u8 = 32;
const T_OBJ: u8 = 64;

struct Engine {
    nodes: Vec<Node>,
    patterns: Vec<LazyRegex>,
    root: usize,
}

struct Builder {
    nodes: Vec<Node>,
    done: HashMap<(&'static str, String), usize>,
    patterns: Vec<LazyRegex>,
    pattern_index: HashMap<String, usize>,
}

/// A pattern: matched by [`Simple`] when it has that plain shape, otherwise by
/// a regex compiled on first use (most documents exercise only a few of them).
struct LazyRegex {
    source: String,
    simple: Option<Simple>,
    compiled: OnceLock<Option<Regex>>,
}

impl LazyRegex {
    fn is_match(&self, s: &str) -> bool {
        if let Some(simple) = &self.simple {
            return simple.is_match(s);
        }
        self.compiled
            .get_or_init(|| Regex::new(&self.source).ok())
            .as_ref()
            .is_some_and(|re| re.is_match(s))
    }
}

/// The parsed embedded schema of one file, parsed on first use.
fn schema_doc(file: &str) -> Option<(&'static str, &'static Value)> {
    static DOCS: [OnceLock<Option<Value>>; 19] = [const { OnceLock::new() }; 19];
    let index = SchemaKind::ALL.iter().position(|k| k.file_name() == file)?;
    let kind = SchemaKind::ALL[index];
    let doc = DOCS[index]
        .get_or_init(|| serde_json::from_str(super::source(kind)).ok())
        .as_ref()?;
    Some((kind.file_name(), doc))
}

fn file_of(reference_base: &str) -> &str {
    reference_base.rsplit('/').next().unwrap_or(reference_base)
}

fn resolve_pointer<'v>(doc: &'v Value, pointer: &str) -> Option<&'v Value> {
    if pointer.is_empty() {
        Some(doc)
    } else {
        doc.pointer(pointer)
    }
}

impl Builder {
    /// Compile the subschema at `pointer` of `file`, memoized (cycles resolve to the same node).
    fn node(&mut self, file: &str, pointer: &str) -> Option<usize> {
        let (file, doc) = schema_doc(file)?;
        let key = (file, pointer.to_string());
        if let Some(&i) = self.done.get(&key) {
            return Some(i);
        }
        let index = self.nodes.len();
        self.nodes.push(Node::default());
        self.done.insert(key, index);
        let schema = resolve_pointer(doc, pointer)?;
        let node = self.build(file, pointer, schema)?;
        self.nodes[index] = node;
        Some(index)
    }

    fn child(&mut self, file: &'static str, pointer: &str, token: &str) -> Option<usize> {
        let escaped = token.replace('~', "~0").replace('/', "~1");
        self.node(file, &format!("{pointer}/{escaped}"))
    }
    fn build(&mut self, file: &'static str, pointer: &str, schema: &'static Value) -> Option<Node> {
        let obj = schema.as_object()?;
        let mut n = Node::default();
        // Only used here: folded into `properties` and `required_undeclared` below.
        let mut required: Vec<String> = Vec::new();
        for (key, value) in obj {
            match key.as_str() {
                k if ANNOTATIONS.contains(&k) => {}
                "type" => {
                    let list: Vec<&str> = match value {
                        Value::String(s) => vec![s.as_str()],
                        Value::Array(a) => a.iter().filter_map(Value::as_str).collect(),
                        _ => return None,
                    };
                    let mut mask = 0;
                    for t in list {
                        mask |= match t {
                            "null" => T_NULL,
                            "boolean" => T_BOOL,
                            "integer" => T_INT,
                            "number" => T_NUM | T_INT,
                            "string" => T_STR,
                            "array" => T_ARR,
                            "object" => T_OBJ,
                            _ => return None,
                        };
                    }
                    n.types = Some(mask);
                }
                "$ref" => {
                    let r = value.as_str()?;
                    let (base, fragment) = r.split_once('#').unwrap_or((r, ""));
                    let target_file = if base.is_empty() { file } else { file_of(base) };
                    n.refs.push(self.node(target_file, fragment)?);
                }
                "const" => n.constant = Some(Doc::from_value(value)),
                "enum" => {
                    n.enumeration = Some(value.as_array()?.iter().map(Doc::from_value).collect());
                }
                "required" => {
                    required = value
                        .as_array()?
                        .iter()
                        .map(|v| v.as_str().map(str::to_string))
                        .collect::<Option<_>>()?;
                }
                "properties" => {
                    for name in value.as_object()?.keys() {
                        let p = format!("{pointer}/properties");
                        let idx = self.child(file, &p, name)?;
                        n.properties.push((name.clone(), idx, false));
                    }
                }
                "additionalProperties" => match value {
                    Value::Bool(false) => n.closed = true,
                    Value::Bool(true) => {}
                    Value::Object(_) => {
                        n.additional = Some(self.child(file, pointer, "additionalProperties")?)
                    }
                    _ => return None,
                },
                "items" => n.items = Some(self.child(file, pointer, "items")?),
                "minItems" => n.min_items = Some(usize::try_from(value.as_u64()?).ok()?),
                "maxItems" => n.max_items = Some(usize::try_from(value.as_u64()?).ok()?),
                "uniqueItems" => n.unique_items = value.as_bool()?,
                "minLength" => n.min_length = Some(usize::try_from(value.as_u64()?).ok()?),
                "maxLength" => n.max_length = Some(usize::try_from(value.as_u64()?).ok()?),
                "pattern" => {
                    let p = value.as_str()?;
                    let idx = match self.pattern_index.get(p) {
                        Some(&i) => i,
                        None => {
                            self.patterns.push(LazyRegex {
                                source: p.to_string(),
                                simple: Simple::parse(p),
                                compiled: OnceLock::new(),
                            });
                            self.pattern_index
                                .insert(p.to_string(), self.patterns.len() - 1);
                            self.patterns.len() - 1
                        }
                    };
                    n.pattern = Some(idx);
                }
                "format" => {
                    let f = value.as_str()?;
                    if f != "date-time" {
                        return None;
                    }
                    n.format = Some(f.to_string());
                }
                "minimum" => n.minimum = Some(value.as_f64()?),
                "maximum" => n.maximum = Some(value.as_f64()?),
                "anyOf" | "oneOf" | "allOf" => {
                    let count = value.as_array()?.len();
                    let mut list = Vec::with_capacity(count);
                    for i in 0..count {
                        list.push(self.node(file, &format!("{pointer}/{key}/{i}"))?);
                    }
                    match key.as_str() {
                        "anyOf" => n.any_of = list,
                        "oneOf" => n.one_of = list,
                        _ => n.all_of = list,
                    }
                }
                // Anything else: decline, the caller uses the full engine.
                _ => return None,
            }
        }
        n.properties.sort_by(|a, b| a.0.cmp(&b.0));
        for name in &required {
            match n.properties.binary_search_by(|p| p.0.as_str().cmp(name)) {
                Ok(i) if !n.properties[i].2 => {
                    n.properties[i].2 = true;
                    n.required_declared += 1;
                }
                Ok(_) => {}
                Err(_) => n.required_undeclared.push(name.clone()),
            }
        }
        Some(n)
    }
}

/// The compiled evaluator of one kind, built on first use; `None` if the kind's
/// schemas use a keyword this evaluator does not implement.
fn engine(kind: SchemaKind) -> Option<&'static Engine> {
    static ENGINES: [OnceLock<Option<Engine>>; 19] = [const { OnceLock::new() }; 19];
    let index = SchemaKind::ALL.iter().position(|k| *k == kind)?;
    ENGINES[index]
        .get_or_init(|| {
            let mut b = Builder {
                nodes: Vec::new(),
                done: HashMap::new(),
                patterns: Vec::new(),
                pattern_index: HashMap::new(),
            };
            let root = b.node(kind.file_name(), "")?;
            let mut nodes = b.nodes;
            let root = collapse_refs(&mut nodes, root);
            Some(Engine {
                nodes,
                patterns: b.patterns,
                root,
            })
        })
        .as_ref()
}

impl Node {
    /// The node's one `$ref` when it asserts nothing else (`{"$ref": ...}`, with
    /// annotations at most): validating against it is validating against the target.
    fn only_ref(&self) -> Option<usize> {
        // Every field by name: a field added later must be considered here.
        let Node {
            types,
            refs,
            constant,
            enumeration,
            properties,
            required_declared,
            required_undeclared,
            closed,
            additional,
            items,
            min_items,
            max_items,
            unique_items,
            min_length,
            max_length,
            pattern,
            format,
            minimum,
            maximum,
            any_of,
            one_of,
            all_of,
        } = self;
        let nothing_else = types.is_none()
            && constant.is_none()
            && enumeration.is_none()
            && properties.is_empty()
            && *required_declared == 0
            && required_undeclared.is_empty()
            && !closed
            && additional.is_none()
            && items.is_none()
            && min_items.is_none()
            && max_items.is_none()
            && !unique_items
            && min_length.is_none()
            && max_length.is_none()
            && pattern.is_none()
            && format.is_none()
            && minimum.is_none()
            && maximum.is_none()
            && any_of.is_empty()
            && one_of.is_empty()
            && all_of.is_empty();
        match refs.as_slice() {
            [only] if nothing_else => Some(*only),
            _ => None,
        }
    }
}

/// Point every reference to a node that is only a `$ref` at the node it names
/// (followed through chains), so the evaluator takes one step per value where
/// it took one per reference. A chain that loops is left as it is (the
/// evaluator would not end on it either way, and no schema of ours has one).
/// Returns the root's index after the same resolution.
fn collapse_refs(nodes: &mut [Node], root: usize) -> usize {
    let resolved: Vec<usize> = (0..nodes.len())
        .map(|start| {
            let mut at = start;
            for _ in 0..nodes.len() {
                match nodes[at].only_ref() {
                    Some(next) => at = next,
                    None => return at,
                }
            }
            start
        })
        .collect();
    for node in nodes.iter_mut() {
        let lists = [
            &mut node.refs,
            &mut node.any_of,
            &mut node.one_of,
            &mut node.all_of,
        ];
        for list in lists {
            for i in list.iter_mut() {
                *i = resolved[*i];
            }
        }
        for p in &mut node.properties {
            p.1 = resolved[p.1];
        }
        for i in [&mut node.additional, &mut node.items]
            .into_iter()
            .flatten()
        {
            *i = resolved[*i];
        }
    }
    resolved[root]
}

/// `format` assertions, with the semantics of the `jsonschema` crate's checks
/// (the agreement tests hold the two to the same answers).
fn format_ok(format: &str, s: &str) -> bool {
    match format {
        "date-time" => is_date_time(s),
        _ => false,
    }
}

/// The `date-time` format: exactly the strings of spec/conformance.md, entry
/// 17 (see [`crate::json::time`]); the `jsonschema` engine is given the same
/// check, so the two engines agree by construction.
pub fn is_date_time(s: &str) -> bool {
    crate::json::time::is_date_time(s)
}

fn type_bit(v: &Doc<'_>) -> u8 {
    match v {
        Doc::Null => T_NULL,
        Doc::Bool(_) => T_BOOL,
        Doc::Num(n) => {
            if n.is_i64() || n.is_u64() || n.as_f64().is_some_and(|f| f.fract() == 0.0) {
                T_INT | T_NUM
            } else {
                T_NUM
            }
        }
        Doc::Str(_) => T_STR,
        Doc::Arr(_) => T_ARR,
        Doc::Obj(_) => T_OBJ,
    }
}

/// JSON Schema equality: numbers by value, objects regardless of key order
/// (a [`Doc`] keeps members in byte order of their names, so equal objects
/// list them alike).
fn json_equal(a: &Doc<'_>, b: &Doc<'_>) -> bool {
    match (a, b) {
        (Doc::Num(x), Doc::Num(y)) => match (x.as_i64(), y.as_i64()) {
            (Some(i), Some(j)) => i == j,
            _ => x.as_f64() == y.as_f64(),
        },
        (Doc::Arr(x), Doc::Arr(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| json_equal(p, q))
        }
        (Doc::Obj(x), Doc::Obj(y)) => {
            x.len() == y.len()
                && x.iter().zip(y).all(|((k, v), (l, w))| {
                    eq_short(k.as_bytes(), l.as_bytes()) && json_equal(v, w)
                })
        }
        (Doc::Str(x), Doc::Str(y)) => eq_short(x.as_bytes(), y.as_bytes()),
        _ => a == b,
    }
}

impl Engine {
    fn valid(&self, node: usize, v: &Doc<'_>) -> bool {
        let n = &self.nodes[node];
        if let Some(mask) = n.types
            && mask & type_bit(v) == 0
        {
            return false;
        }
        if let Some(c) = &n.constant
            && !json_equal(c, v)
        {
            return false;
        }
        if let Some(list) = &n.enumeration
            && !list.iter().any(|c| json_equal(c, v))
        {
            return false;
        }
        for &r in &n.refs {
            if !self.valid(r, v) {
                return false;
            }
        }
        match v {
            Doc::Obj(map) => {
                if n.required_undeclared.iter().any(|k| v.get(k).is_none()) {
                    return false;
                }
                // The members and the declared properties are both in byte order of
                // their names: one merged walk finds each member's declaration.
                let props = n.properties.as_slice();
                let mut next = 0;
                let mut required_seen = 0;
                for (k, child) in map.iter() {
                    let key = k.as_bytes();
                    // The member's declaration, with one comparison per name passed.
                    let declared = loop {
                        match props.get(next) {
                            Some(prop) => match cmp_short(prop.0.as_bytes(), key) {
                                std::cmp::Ordering::Less => next += 1,
                                std::cmp::Ordering::Equal => break Some(prop),
                                std::cmp::Ordering::Greater => break None,
                            },
                            None => break None,
                        }
                    };
                    match declared {
                        Some((_, p, required)) => {
                            next += 1;
                            required_seen += usize::from(*required);
                            if !self.valid(*p, child) {
                                return false;
                            }
                        }
                        _ => {
                            if n.closed {
                                return false;
                            }
                            if let Some(a) = n.additional
                                && !self.valid(a, child)
                            {
                                return false;
                            }
                        }
                    }
                }
                // Member names are unique, so every declared required name was seen
                // exactly when the count matches.
                if required_seen != n.required_declared {
                    return false;
                }
            }
            Doc::Arr(items) => {
                if n.min_items.is_some_and(|m| items.len() < m)
                    || n.max_items.is_some_and(|m| items.len() > m)
                {
                    return false;
                }
                if let Some(it) = n.items
                    && !items.iter().all(|x| self.valid(it, x))
                {
                    return false;
                }
                if n.unique_items {
                    for (i, a) in items.iter().enumerate() {
                        if items[..i].iter().any(|b| json_equal(a, b)) {
                            return false;
                        }
                    }
                }
            }
            Doc::Str(s) => {
                if n.min_length.is_some() || n.max_length.is_some() {
                    let len = s.chars().count();
                    if n.min_length.is_some_and(|m| len < m)
                        || n.max_length.is_some_and(|m| len > m)
                    {
                        return false;
                    }
                }
                if let Some(p) = n.pattern
                    && !self.patterns[p].is_match(s)
                {
                    return false;
                }
                if let Some(f) = &n.format
                    && !format_ok(f, s)
                {
                    return false;
                }
            }
            Doc::Num(num) => {
                let x = num.as_f64().unwrap_or(f64::NAN);
                if n.minimum.is_some_and(|m| x < m) || n.maximum.is_some_and(|m| x > m) {
                    return false;
                }
            }
            _ => {}
        }
        if !n.all_of.iter().all(|&s| self.valid(s, v)) {
            return false;
        }
        if !n.any_of.is_empty() && !n.any_of.iter().any(|&s| self.valid(s, v)) {
            return false;
        }
        if !n.one_of.is_empty() && n.one_of.iter().filter(|&&s| self.valid(s, v)).count() != 1 {
            return false;
        }
        true
    }
}

/// Accept/reject decision for `value` against `kind`, or `None` if the fast
/// evaluator cannot express the schemas (the caller then uses `jsonschema`).
pub fn is_valid(kind: SchemaKind, value: &Value) -> Option<bool> {
    is_valid_doc(kind, &Doc::from_value(value))
}

/// [`is_valid`] of a [`Doc`].
pub fn is_valid_doc(kind: SchemaKind, doc: &Doc<'_>) -> Option<bool> {
    let e = engine(kind)?;
    Some(e.valid(e.root, doc))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn engine_builds_for_every_kind_without_uri_formats() {
        for kind in SchemaKind::ALL {
            let uses_uri = super::super::source(kind).contains("\"uri\"");
            let decision = is_valid(kind, &Value::Null);
            if uses_uri {
                assert_eq!(decision, None, "{kind:?} uses format uri: declined");
            } else {
                // No MCP-RES document is `null`.
                assert_eq!(decision, Some(false), "fast evaluator declines {kind:?}");
            }
        }
    }

    #[test]
    fn date_time_matches_rfc3339_with_leap_seconds_on_2359_utc() {
        for ok in [
            "2026-08-27T12:00:00Z",
            "2026-08-27t12:00:00.123z",
            "2024-02-29T00:00:00+14:00",
            "2016-12-31T23:59:60Z",
            "2016-12-31T22:59:60-01:00",
        ] {
            assert!(is_date_time(ok), "{ok}");
        }
        for bad in [
            "2026-08-27T12:00:00",
            "2026-08-27x12:00:00Z",
            "2023-02-29T00:00:00Z",
            "2026-08-27T24:00:00Z",
            "2016-12-31T23:59:60+01:00",
            "2026-08-27T12:00:60Z",
            "2026-08-27T12:00:00.Z",
            "2026-08-27T12:00:00+010",
        ] {
            assert!(!is_date_time(bad), "{bad}");
        }
    }

    #[test]
    fn reference_only_nodes_are_skipped_through_chains() {
        let only_ref = |to: usize| Node {
            refs: vec![to],
            ..Node::default()
        };
        let mut nodes = vec![
            Node {
                properties: vec![("a".into(), 1, true)],
                items: Some(4),
                ..Node::default()
            },
            only_ref(2),
            only_ref(3),
            Node {
                types: Some(T_STR),
                refs: vec![6],
                ..Node::default()
            },
            // A loop of references only: left alone.
            only_ref(4),
            Node {
                min_length: Some(1),
                ..Node::default()
            },
            only_ref(5),
        ];
        let root = collapse_refs(&mut nodes, 1);
        assert_eq!(root, 3);
        assert_eq!(nodes[0].properties[0].1, 3);
        assert_eq!(nodes[0].items, Some(4));
        // A node that asserts more than its reference keeps it, resolved.
        assert_eq!(nodes[3].refs, vec![5]);
        assert_eq!(nodes[4].refs, vec![4]);
    }

    #[test]
    fn short_comparison_is_byte_order() {
        for (a, b) in [
            ("", ""),
            ("a", ""),
            ("ab", "abc"),
            ("b", "abc"),
            ("\u{e9}", "z"),
            ("x", "x"),
        ] {
            assert_eq!(
                cmp_short(a.as_bytes(), b.as_bytes()),
                a.cmp(b),
                "{a:?} {b:?}"
            );
            assert_eq!(
                cmp_short(b.as_bytes(), a.as_bytes()),
                b.cmp(a),
                "{b:?} {a:?}"
            );
        }
    }

    fn d(value: Value) -> Doc<'static> {
        Doc::from_value(&value).into_owned()
    }

    #[test]
    fn objects_compare_regardless_of_order() {
        let a = d(serde_json::json!({"b": 1, "a": [1, 2]}));
        let b = Doc::Obj(vec![
            (
                "a".into(),
                Doc::Arr(vec![d(serde_json::json!(1)), d(serde_json::json!(2.0))]),
            ),
            ("b".into(), d(serde_json::json!(1))),
        ]);
        assert!(json_equal(&a, &b));
        assert!(!json_equal(&a, &d(serde_json::json!({"b": 1}))));
    }

    #[test]
    fn numbers_compare_by_value() {
        assert!(json_equal(
            &d(serde_json::json!(1)),
            &d(serde_json::json!(1.0))
        ));
        assert!(json_equal(
            &d(serde_json::json!({"a": [1, {"b": null}]})),
            &d(serde_json::json!({"a": [1, {"b": null}]}))
        ));
        assert!(!json_equal(
            &d(serde_json::json!("1")),
            &d(serde_json::json!(1))
        ));
    }
}
