//! Property tests for the strict reader, the `mcp-res-json-utf16-v1` canonical
//! writer and the digests built on it.
//!
//! The canonical writer is compared with a deliberately simple reference
//! implementation written here (keys sorted by collected UTF-16 code units,
//! strings escaped character by character as JavaScript's `JSON.stringify`
//! does), and digests with SHA-256 computed directly over that reference output.

use std::cmp::Ordering;
use std::fmt::Write as _;

use mcpres::json::canonical::{self, CanonicalError};
use mcpres::json::reader::MAX_SAFE_INTEGER;
use mcpres::json::{ReadErrorKind, parse_default};
use mcpres::validate::core::{bundle_digest, supporting_manifest_digest};
use proptest::collection::{btree_map, btree_set, vec};
use proptest::prelude::*;
use proptest::sample::select;
use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};

fn config() -> ProptestConfig {
    ProptestConfig {
        cases: 256,
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

// ------------------------------------------------ reference implementation

/// JavaScript's `JSON.stringify` for a string (Rust strings hold no lone surrogates).
fn ref_escape(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => {
                write!(out, "\\u{:04x}", c as u32).unwrap();
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

fn utf16_units(s: &str) -> Vec<u16> {
    s.encode_utf16().collect()
}

fn ref_cmp(a: &str, b: &str) -> Ordering {
    utf16_units(a).cmp(&utf16_units(b))
}

/// The canonical form, written the slow and obvious way.
fn ref_canon(v: &Value) -> String {
    match v {
        Value::Null => "null".into(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => {
            let i = n.as_i64().expect("test values hold only i64 numbers");
            assert!(i.abs() <= MAX_SAFE_INTEGER);
            i.to_string()
        }
        Value::String(s) => ref_escape(s),
        Value::Array(items) => {
            let parts: Vec<String> = items.iter().map(ref_canon).collect();
            format!("[{}]", parts.join(","))
        }
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort_by(|a, b| ref_cmp(a, b));
            let parts: Vec<String> = keys
                .into_iter()
                .map(|k| format!("{}:{}", ref_escape(k), ref_canon(&map[k])))
                .collect();
            format!("{{{}}}", parts.join(","))
        }
    }
}

fn ref_sha256(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Valid JSON for `v` with every non-ASCII character written as `\uXXXX`
/// escapes (surrogate pairs above U+FFFF), in upper or lower case hex, with
/// whitespace between tokens: a form the reader must read back as `v`.
fn escaped_form(v: &Value, upper: bool, out: &mut String) {
    let string = |s: &str, out: &mut String| {
        out.push('"');
        for unit_char in s.chars() {
            match unit_char {
                '"' => out.push_str("\\\""),
                '\\' => out.push_str("\\\\"),
                '/' => out.push_str("\\/"),
                c if (c as u32) < 0x20 || (c as u32) > 0x7e => {
                    let mut buf = [0u16; 2];
                    for unit in c.encode_utf16(&mut buf) {
                        if upper {
                            write!(out, "\\u{unit:04X}").unwrap();
                        } else {
                            write!(out, "\\u{unit:04x}").unwrap();
                        }
                    }
                }
                c => out.push(c),
            }
        }
        out.push('"');
    };
    match v {
        Value::String(s) => string(s, out),
        Value::Array(items) => {
            out.push_str("[ ");
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(" ,\n");
                }
                escaped_form(item, upper, out);
            }
            out.push_str(" ]");
        }
        Value::Object(map) => {
            out.push_str("{\t");
            for (i, (k, item)) in map.iter().enumerate() {
                if i > 0 {
                    out.push_str(",\r\n");
                }
                string(k, out);
                out.push_str(" : ");
                escaped_form(item, upper, out);
            }
            out.push('}');
        }
        other => out.push_str(&other.to_string()),
    }
}

// ------------------------------------------------------------- strategies

fn from_u32(c: u32) -> char {
    char::from_u32(c).expect("valid scalar value")
}

/// Characters chosen to hit every escaping and ordering edge.
fn interesting_char() -> impl Strategy<Value = char> {
    prop_oneof![
        4 => (0x20u32..0x7f).prop_map(from_u32),
        2 => (0u32..0x20).prop_map(from_u32),
        1 => select(vec!['"', '\\', '/', '\u{7f}', '\u{80}', '\u{2028}', '\u{2029}', '\u{feff}']),
        2 => (0x80u32..0xD800).prop_map(from_u32),
        2 => (0xE000u32..=0xFFFF).prop_map(from_u32),
        2 => (0x10000u32..=0x10FFFF).prop_map(from_u32),
        1 => any::<char>(),
    ]
}

fn arb_string() -> impl Strategy<Value = String> {
    vec(interesting_char(), 0..10).prop_map(|cs| cs.into_iter().collect())
}

/// Keys that straddle the UTF-16 / code point order difference.
fn ordering_key() -> impl Strategy<Value = String> {
    let c = prop_oneof![
        Just('a'),
        Just('b'),
        (0xE000u32..=0xFFFF).prop_map(from_u32),
        (0x10000u32..=0x10FFFF).prop_map(from_u32),
        select(vec![
            '\u{d7ff}',
            '\u{e000}',
            '\u{ffff}',
            '\u{10000}',
            '\u{10ffff}'
        ]),
    ];
    vec(c, 0..4).prop_map(|cs| cs.into_iter().collect())
}

fn safe_int() -> impl Strategy<Value = i64> {
    prop_oneof![
        -MAX_SAFE_INTEGER..=MAX_SAFE_INTEGER,
        -1000i64..1000,
        select(vec![
            0,
            1,
            -1,
            MAX_SAFE_INTEGER,
            -MAX_SAFE_INTEGER,
            MAX_SAFE_INTEGER - 1
        ]),
    ]
}

fn arb_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        safe_int().prop_map(Value::from),
        arb_string().prop_map(Value::String),
    ];
    leaf.prop_recursive(5, 96, 8, |inner| {
        prop_oneof![
            vec(inner.clone(), 0..8).prop_map(Value::Array),
            btree_map(prop_oneof![arb_string(), ordering_key()], inner, 0..8)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

fn canon(v: &Value) -> Vec<u8> {
    canonical::to_vec(v).expect("test values are canonicalizable")
}

// ----------------------------------------------------- canonical writer

proptest! {
    #![proptest_config(config())]

    #[test]
    fn canonical_form_is_idempotent(v in arb_json()) {
        let c = canon(&v);
        let back = parse_default(&c).expect("canonical bytes are strict JSON");
        prop_assert_eq!(&back, &v);
        prop_assert_eq!(canon(&back), c);
    }

    #[test]
    fn canonical_form_matches_the_reference(v in arb_json()) {
        let c = String::from_utf8(canon(&v)).expect("canonical bytes are UTF-8");
        prop_assert_eq!(c, ref_canon(&v));
    }

    #[test]
    fn strings_are_escaped_like_json_stringify(s in arb_string()) {
        let mut out = Vec::new();
        canonical::write_string(&s, &mut out);
        let out = String::from_utf8(out).unwrap();
        prop_assert_eq!(&out, &ref_escape(&s));
        // Another parser reads the same string back.
        let other: String = serde_json::from_str(&out).unwrap();
        prop_assert_eq!(&other, &s);
    }

    #[test]
    fn keys_are_sorted_by_utf16_code_units(keys in btree_set(ordering_key(), 0..10)) {
        let map: Map<String, Value> = keys.iter().map(|k| (k.clone(), Value::Null)).collect();
        let mut expected: Vec<&String> = keys.iter().collect();
        expected.sort_by(|a, b| ref_cmp(a, b));
        let expected = format!(
            "{{{}}}",
            expected
                .iter()
                .map(|k| format!("{}:null", ref_escape(k)))
                .collect::<Vec<_>>()
                .join(",")
        );
        let v = Value::Object(map);
        prop_assert_eq!(String::from_utf8(canon(&v)).unwrap(), expected);
        // The same order again when nested and after a round trip.
        let nested = json!({"outer": [v.clone()]});
        let c = canon(&nested);
        prop_assert_eq!(canon(&parse_default(&c).unwrap()), c);
    }

    #[test]
    fn astral_keys_sort_before_e000_to_ffff(
        bmp in (0xE000u32..=0xFFFF).prop_map(from_u32),
        astral in (0x10000u32..=0x10FFFF).prop_map(from_u32),
        prefix in "[a-z]{0,3}",
    ) {
        let (k_bmp, k_astral) = (format!("{prefix}{bmp}"), format!("{prefix}{astral}"));
        // Code point order says bmp < astral; UTF-16 order says astral (a lead surrogate) first.
        prop_assert!(k_bmp < k_astral);
        prop_assert_eq!(canonical::cmp_utf16(&k_astral, &k_bmp), Ordering::Less);
        let v = json!({ k_bmp.clone(): 1, k_astral.clone(): 2 });
        let expected = format!("{{{}:2,{}:1}}", ref_escape(&k_astral), ref_escape(&k_bmp));
        prop_assert_eq!(String::from_utf8(canon(&v)).unwrap(), expected);
    }

    #[test]
    fn cmp_utf16_agrees_with_the_reference(a in arb_string(), b in arb_string()) {
        prop_assert_eq!(canonical::cmp_utf16(&a, &b), ref_cmp(&a, &b));
    }
}

// ------------------------------------------------------------ the reader

proptest! {
    #![proptest_config(config())]

    #[test]
    fn reader_reads_other_writers_json(v in arb_json(), upper in any::<bool>()) {
        let compact = serde_json::to_vec(&v).unwrap();
        prop_assert_eq!(&parse_default(&compact).unwrap(), &v);
        let pretty = serde_json::to_vec_pretty(&v).unwrap();
        prop_assert_eq!(&parse_default(&pretty).unwrap(), &v);
        let mut escaped = String::new();
        escaped_form(&v, upper, &mut escaped);
        prop_assert_eq!(&parse_default(escaped.as_bytes()).unwrap(), &v);
    }

    #[test]
    fn every_safe_integer_round_trips(n in safe_int()) {
        let text = n.to_string();
        prop_assert_eq!(parse_default(text.as_bytes()).unwrap(), Value::from(n));
        prop_assert_eq!(canon(&Value::from(n)), text.clone().into_bytes());
        let doc = format!("{{\"n\": [ {text} ]}}");
        prop_assert_eq!(parse_default(doc.as_bytes()).unwrap(), json!({"n": [n]}));
    }

    #[test]
    fn unsafe_integers_are_refused(
        magnitude in prop_oneof![
            (MAX_SAFE_INTEGER + 1)..=i64::MAX,
            Just(MAX_SAFE_INTEGER + 1),
        ],
        negative in any::<bool>(),
    ) {
        let text = if negative { format!("-{magnitude}") } else { magnitude.to_string() };
        prop_assert_eq!(
            parse_default(text.as_bytes()).unwrap_err().kind,
            ReadErrorKind::UnsafeInteger
        );
        let n = if negative { -magnitude } else { magnitude };
        prop_assert!(matches!(
            canonical::to_vec(&Value::from(n)),
            Err(CanonicalError::NonCanonicalNumber(_))
        ));
    }

    #[test]
    fn long_digit_strings_are_refused(digits in "[1-9][0-9]{16,40}", negative in any::<bool>()) {
        let text = format!("[{}{digits}]", if negative { "-" } else { "" });
        prop_assert_eq!(
            parse_default(text.as_bytes()).unwrap_err().kind,
            ReadErrorKind::UnsafeInteger
        );
    }

    #[test]
    fn fraction_and_exponent_tokens_are_refused(
        int in safe_int(),
        fraction in proptest::option::of("[0-9]{1,5}"),
        exponent in proptest::option::of(("[eE]", "[+-]?", "[0-9]{1,3}")),
        wrap in 0usize..3,
    ) {
        prop_assume!(fraction.is_some() || exponent.is_some());
        let mut token = int.to_string();
        if let Some(f) = &fraction {
            write!(token, ".{f}").unwrap();
        }
        if let Some((e, sign, digits)) = &exponent {
            write!(token, "{e}{sign}{digits}").unwrap();
        }
        let doc = match wrap {
            0 => token.clone(),
            1 => format!("[1, {token}]"),
            _ => format!("{{\"k\": {token}}}"),
        };
        prop_assert_eq!(
            parse_default(doc.as_bytes()).unwrap_err().kind,
            ReadErrorKind::NonIntegerNumber,
            "token {}", token
        );
    }

    #[test]
    fn non_integral_floats_have_no_canonical_form(f in any::<f64>()) {
        prop_assume!(!(f.is_finite() && f.fract() == 0.0 && f.abs() <= MAX_SAFE_INTEGER as f64));
        if let Some(n) = serde_json::Number::from_f64(f) {
            prop_assert!(canonical::to_vec(&Value::Number(n)).is_err());
        }
    }

    #[test]
    fn reader_never_panics_on_arbitrary_bytes(bytes in vec(any::<u8>(), 0..512)) {
        if let Ok(v) = parse_default(&bytes) {
            let c = canon(&v);
            prop_assert_eq!(parse_default(&c).unwrap(), v);
        }
    }

    #[test]
    fn reader_never_panics_on_json_like_bytes(
        bytes in vec(select(b"{}[]\",:0123456789-+.eEtrufalsn \\/ubd8c\n\t\xc3\xa9\xf0\x9f\xed\xa0".to_vec()), 0..256)
    ) {
        if let Ok(v) = parse_default(&bytes) {
            let c = canon(&v);
            prop_assert_eq!(parse_default(&c).unwrap(), v);
        }
    }
}

// ------------------------------------- mutations of a valid document

const VALID_BUNDLE: &[u8] = include_bytes!("../testdata/hostile/valid-bundle.json");

#[derive(Debug, Clone)]
enum Mutation {
    Set(usize, u8),
    Insert(usize, u8),
    Delete(usize, usize),
    Duplicate(usize, usize),
    Truncate(usize),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    let interesting = prop_oneof![
        any::<u8>(),
        select(b"{}[]\",:\\0-.eu\x00\xff\xc3\xed\xef".to_vec()),
    ];
    prop_oneof![
        (any::<usize>(), interesting.clone()).prop_map(|(i, b)| Mutation::Set(i, b)),
        (any::<usize>(), interesting).prop_map(|(i, b)| Mutation::Insert(i, b)),
        (any::<usize>(), 1usize..64).prop_map(|(i, n)| Mutation::Delete(i, n)),
        (any::<usize>(), 1usize..64).prop_map(|(i, n)| Mutation::Duplicate(i, n)),
        any::<usize>().prop_map(Mutation::Truncate),
    ]
}

fn apply(doc: &mut Vec<u8>, m: &Mutation) {
    let len = doc.len().max(1);
    match *m {
        Mutation::Set(i, b) => {
            if !doc.is_empty() {
                doc[i % len] = b;
            }
        }
        Mutation::Insert(i, b) => doc.insert(i % (doc.len() + 1), b),
        Mutation::Delete(i, n) => {
            let start = i % len;
            let end = (start + n).min(doc.len());
            doc.drain(start.min(end)..end);
        }
        Mutation::Duplicate(i, n) => {
            let start = i % len;
            let end = (start + n).min(doc.len());
            let slice: Vec<u8> = doc[start.min(end)..end].to_vec();
            let at = end;
            doc.splice(at..at, slice);
        }
        Mutation::Truncate(i) => doc.truncate(i % len),
    }
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn reader_never_panics_on_mutated_bundles(mutations in vec(mutation(), 1..8)) {
        let mut doc = VALID_BUNDLE.to_vec();
        for m in &mutations {
            apply(&mut doc, m);
        }
        match parse_default(&doc) {
            Ok(v) => {
                let c = canon(&v);
                prop_assert_eq!(parse_default(&c).unwrap(), v);
            }
            Err(e) => {
                // Positions always point inside (or just past) the document.
                prop_assert!(e.offset <= doc.len());
                prop_assert!(e.line >= 1 && e.column >= 1);
            }
        }
    }

    #[test]
    fn reader_never_panics_on_mutated_canonical_values(
        v in arb_json(),
        mutations in vec(mutation(), 1..6),
    ) {
        let mut doc = canon(&v);
        for m in &mutations {
            apply(&mut doc, m);
        }
        if let Ok(back) = parse_default(&doc) {
            let c = canon(&back);
            prop_assert_eq!(parse_default(&c).unwrap(), back);
        }
    }
}

// ---------------------------------------------------------------- digests

fn leaf_value() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        safe_int().prop_map(Value::from),
        arb_string().prop_map(Value::String),
    ]
}

fn artifact(path: String) -> impl Strategy<Value = Value> {
    (
        select(vec![
            "application/json",
            "application/vnd.mcp-res.observation+json",
            "text/plain",
        ]),
        0i64..100_000,
        "[0-9a-f]{64}",
    )
        .prop_map(move |(media, bytes, sha)| {
            json!({"path": path.clone(), "mediaType": media, "bytes": bytes, "sha256": sha})
        })
}

fn artifact_list() -> impl Strategy<Value = Vec<Value>> {
    let path = prop_oneof![
        "observations/[a-z0-9-]{1,8}\\.json",
        ordering_key().prop_map(|k| format!("raw/{k}.bin")),
    ];
    btree_set(path, 0..10)
        .prop_flat_map(|paths| paths.into_iter().map(artifact).collect::<Vec<_>>())
}

fn sorted_manifest_digest(list: &[Value]) -> String {
    let mut sorted = list.to_vec();
    sorted.sort_by(|a, b| ref_cmp(a["path"].as_str().unwrap(), b["path"].as_str().unwrap()));
    ref_sha256(ref_canon(&json!({ "artifacts": sorted })).as_bytes())
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn digest_is_sha256_of_canonical_bytes(v in arb_json()) {
        let expected = match &v {
            // sha256(x) of a string is over its own UTF-8 bytes.
            Value::String(s) => ref_sha256(s.as_bytes()),
            other => ref_sha256(ref_canon(other).as_bytes()),
        };
        prop_assert_eq!(canonical::digest(&v).unwrap(), expected.clone());
        if !v.is_string() {
            prop_assert_eq!(canonical::sha256_hex(&canon(&v)), expected.clone());
            let (d, len) = canonical::digest_and_len(&v).unwrap();
            prop_assert_eq!(d, expected);
            prop_assert_eq!(len, ref_canon(&v).len());
        }
    }

    #[test]
    fn observation_digest_ignores_only_observation_sha256(
        fields in btree_map(arb_string(), arb_json(), 0..6),
        sha_a in leaf_value(),
        sha_b in leaf_value(),
        extra_key in arb_string(),
        extra_value in leaf_value(),
    ) {
        const KEY: &str = "observationSha256";
        let mut base: Map<String, Value> = fields.into_iter().collect();
        base.remove(KEY);
        let without = Value::Object(base.clone());
        let expected = ref_canon(&without).into_bytes();

        let mut with_a = base.clone();
        with_a.insert(KEY.into(), sha_a);
        let mut with_b = base.clone();
        with_b.insert(KEY.into(), sha_b);
        let a = canonical::to_vec_without_key(&Value::Object(with_a.clone()), KEY).unwrap();
        let b = canonical::to_vec_without_key(&Value::Object(with_b), KEY).unwrap();
        prop_assert_eq!(&a, &expected);
        prop_assert_eq!(&b, &expected);
        // Without the key there is nothing to leave out.
        prop_assert_eq!(canonical::to_vec_without_key(&without, KEY).unwrap(), expected.clone());

        // Any other key is covered.
        if extra_key != KEY && base.get(&extra_key) != Some(&extra_value) {
            let mut changed = with_a;
            changed.insert(extra_key, extra_value);
            let c = canonical::to_vec_without_key(&Value::Object(changed), KEY).unwrap();
            prop_assert_ne!(c, expected);
        }
    }

    #[test]
    fn bundle_digest_is_independent_of_manifest_order(
        (list, shuffled) in artifact_list().prop_flat_map(|l| {
            let s = Just(l.clone()).prop_shuffle();
            (Just(l), s)
        })
    ) {
        let expected = sorted_manifest_digest(&list);
        prop_assert_eq!(bundle_digest(&list), expected.clone());
        prop_assert_eq!(bundle_digest(&shuffled), expected);
    }

    #[test]
    fn supporting_manifest_digest_leaves_out_evidence_and_statement(
        (list, shuffled) in artifact_list().prop_flat_map(|l| {
            let mut with_core = l.clone();
            with_core.push(json!({"path": "evidence-envelope.json", "mediaType": "application/json", "bytes": 1, "sha256": "00"}));
            with_core.push(json!({"path": "conformance-statement.json", "mediaType": "application/json", "bytes": 2, "sha256": "11"}));
            (Just(l), Just(with_core).prop_shuffle())
        })
    ) {
        let expected = sorted_manifest_digest(&list);
        prop_assert_eq!(supporting_manifest_digest(&list), expected.clone());
        prop_assert_eq!(supporting_manifest_digest(&shuffled), expected.clone());
        // The bundle digest covers them.
        prop_assert_ne!(bundle_digest(&shuffled), expected);
    }
}

// ------------------------------------------------------- fixed examples

#[test]
fn examples_of_the_utf16_order() {
    // U+FF61 (one unit, 0xFF61) sorts after U+1F600 (lead unit 0xD83D).
    let v = json!({"\u{ff61}": 1, "\u{1f600}": 2, "\u{e000}": 3, "\u{d7ff}": 4, "a": 5});
    assert_eq!(
        String::from_utf8(canon(&v)).unwrap(),
        "{\"a\":5,\"\u{d7ff}\":4,\"\u{1f600}\":2,\"\u{e000}\":3,\"\u{ff61}\":1}"
    );
}

#[test]
fn examples_of_the_number_domain() {
    assert_eq!(parse_default(b"-0").unwrap(), json!(0));
    assert_eq!(canon(&parse_default(b"-0").unwrap()), b"0");
    assert_eq!(
        parse_default(b"9007199254740992").unwrap_err().kind,
        ReadErrorKind::UnsafeInteger
    );
    for token in ["1.0", "1e2", "0.0", "-0.0", "1E0", "1e-0"] {
        assert_eq!(
            parse_default(token.as_bytes()).unwrap_err().kind,
            ReadErrorKind::NonIntegerNumber,
            "{token}"
        );
    }
}
