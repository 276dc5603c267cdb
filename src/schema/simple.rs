//! Anchored patterns made of plain pieces, matched without a regex engine.
//!
//! Most `pattern`s in the MCP-RES schemas are a fixed shape: `^`, then ASCII
//! literals and ASCII character classes, each with an optional `{m}`, `{m,n}`,
//! `+` or `*`, then `$` (a digest is `^[a-f0-9]{64}$`). Such a pattern is
//! matched here in one pass over the bytes. [`Simple::parse`] accepts a pattern
//! only when that pass decides exactly what the regex would: every piece with a
//! choice of length is followed by a piece that must consume at least one
//! character outside its class (or by the end), so the greedy run is the only
//! possible one. Anything else (alternation, groups, negated classes, escapes
//! other than `\.`, non-ASCII, ambiguous neighbours) is left to `regex`. The
//! tests compare both on every schema pattern.

/// One piece: a set of ASCII bytes and how many of them in a row.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Piece {
    /// Bit `b` set when ASCII byte `b` belongs to the class.
    set: u128,
    /// The same set as a table indexed by byte (one load per byte when matching).
    table: [bool; 256],
    min: usize,
    max: usize,
}

impl Piece {
    fn new(set: u128, min: usize, max: usize) -> Piece {
        let mut table = [false; 256];
        for (b, slot) in table.iter_mut().enumerate().take(128) {
            *slot = set & (1u128 << b) != 0;
        }
        Piece {
            set,
            table,
            min,
            max,
        }
    }
}

/// A pattern of plain pieces (see the module documentation).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Simple {
    pieces: Vec<Piece>,
}

/// The repetition bound used for `+` and `*`.
const UNBOUNDED: usize = usize::MAX;

impl Simple {
    /// The plain-piece form of `pattern`, or `None` when it has another shape.
    pub fn parse(pattern: &str) -> Option<Simple> {
        let body = pattern.strip_prefix('^')?.strip_suffix('$')?;
        let bytes = body.as_bytes();
        let mut pieces: Vec<Piece> = Vec::new();
        let mut i = 0;
        while i < bytes.len() {
            let set = match bytes[i] {
                b'[' => {
                    let (set, next) = class(bytes, i + 1)?;
                    i = next;
                    set
                }
                b'\\' => {
                    // Only the escaped dot, the one escape the schemas use.
                    if bytes.get(i + 1) != Some(&b'.') {
                        return None;
                    }
                    i += 2;
                    1u128 << b'.'
                }
                b if is_literal(b) => {
                    i += 1;
                    1u128 << b
                }
                _ => return None,
            };
            let (min, max, next) = quantifier(bytes, i)?;
            i = next;
            pieces.push(Piece::new(set, min, max));
        }
        // Greedy matching is exact only when no piece can give characters back
        // to the next one.
        for (k, piece) in pieces.iter().enumerate() {
            if piece.min == piece.max {
                continue;
            }
            if let Some(next) = pieces.get(k + 1)
                && (next.min == 0 || next.set & piece.set != 0)
            {
                return None;
            }
        }
        Some(Simple { pieces })
    }

    /// Whether the whole of `s` matches.
    pub fn is_match(&self, s: &str) -> bool {
        let bytes = s.as_bytes();
        let mut at: usize = 0;
        for piece in &self.pieces {
            let limit = if piece.max == UNBOUNDED {
                bytes.len()
            } else {
                bytes.len().min(at.saturating_add(piece.max))
            };
            let run = bytes[at..limit]
                .iter()
                .take_while(|&&b| piece.table[usize::from(b)])
                .count();
            if run < piece.min {
                return false;
            }
            at += run;
        }
        at == bytes.len()
    }
}

/// Bytes that stand for themselves outside a class.
fn is_literal(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'/' | b'-' | b'_' | b':' | b'@' | b'=' | b',')
}

/// A class body starting after `[`: its set and the index after `]`.
fn class(bytes: &[u8], mut i: usize) -> Option<(u128, usize)> {
    if bytes.get(i) == Some(&b'^') {
        return None;
    }
    let mut set = 0u128;
    let member = |b: u8| -> Option<u8> {
        (b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'/' | b':' | b'-')).then_some(b)
    };
    loop {
        let b = *bytes.get(i)?;
        if b == b']' {
            return (set != 0).then_some((set, i + 1));
        }
        let low = member(b)?;
        // `x-y` is a range unless the `-` is last in the class.
        if bytes.get(i + 1) == Some(&b'-') && bytes.get(i + 2).is_some_and(|&c| c != b']') {
            let high = member(bytes[i + 2])?;
            if !low.is_ascii_alphanumeric() || !high.is_ascii_alphanumeric() || high < low {
                return None;
            }
            for c in low..=high {
                set |= 1u128 << c;
            }
            i += 3;
        } else {
            set |= 1u128 << low;
            i += 1;
        }
    }
}

/// An optional quantifier at `i`: (min, max, index after it).
fn quantifier(bytes: &[u8], i: usize) -> Option<(usize, usize, usize)> {
    match bytes.get(i) {
        Some(b'+') => Some((1, UNBOUNDED, i + 1)),
        Some(b'*') => Some((0, UNBOUNDED, i + 1)),
        Some(b'{') => {
            let close = i + bytes[i..].iter().position(|&b| b == b'}')?;
            let inner = std::str::from_utf8(&bytes[i + 1..close]).ok()?;
            let number = |t: &str| -> Option<usize> {
                if t.is_empty() || !t.bytes().all(|b| b.is_ascii_digit()) || t.len() > 6 {
                    return None;
                }
                t.parse().ok()
            };
            let (min, max) = match inner.split_once(',') {
                Some((a, b)) => (number(a)?, number(b)?),
                None => {
                    let n = number(inner)?;
                    (n, n)
                }
            };
            (min <= max).then_some((min, max, close + 1))
        }
        Some(b'?') => None,
        _ => Some((1, 1, i)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use regex::Regex;

    /// Every `pattern` string in the embedded schemas.
    fn schema_patterns() -> Vec<String> {
        fn walk(v: &serde_json::Value, out: &mut Vec<String>) {
            match v {
                serde_json::Value::Object(map) => {
                    for (k, x) in map {
                        if k == "pattern"
                            && let Some(p) = x.as_str()
                        {
                            out.push(p.to_owned());
                        }
                        walk(x, out);
                    }
                }
                serde_json::Value::Array(items) => items.iter().for_each(|x| walk(x, out)),
                _ => {}
            }
        }
        let mut out = Vec::new();
        for kind in super::super::SchemaKind::ALL {
            let doc: serde_json::Value = serde_json::from_str(super::super::source(kind)).unwrap();
            walk(&doc, &mut out);
        }
        out.sort();
        out.dedup();
        out
    }

    #[test]
    fn the_common_schema_patterns_take_the_plain_path() {
        let patterns = schema_patterns();
        for p in [
            "^[a-f0-9]{64}$",
            "^[a-z0-9][a-z0-9-]{1,95}$",
            "^mcp-res/[a-z0-9-]+/v1$",
            "^[1-9][0-9]*\\.[0-9]+\\.[0-9]+$",
            "^obs-[A-Za-z0-9._:-]+$",
            "^mcp-res/[a-z0-9-]+/v[1-9][0-9]*$",
        ] {
            assert!(patterns.iter().any(|x| x == p), "{p} is a schema pattern");
            assert!(Simple::parse(p).is_some(), "{p} is plain");
        }
        // Shapes left to the regex engine.
        for p in [
            "^[^\\n\\r\\u2028\\u2029]{1,192}:[^\\n\\r\\u2028\\u2029]{1,192}$",
            "^(a|b)$",
            "^a?$",
            "a$",
            "^[a-z]+[a-z0-9]$",
            "^[a-z]*[0-9]*$",
            "^\\d$",
        ] {
            assert_eq!(Simple::parse(p), None, "{p}");
        }
    }

    /// Strings near the patterns: their own characters, neighbours of the
    /// class bounds, a dot, a newline and non-ASCII characters.
    fn near(alphabet: Vec<char>) -> impl Strategy<Value = String> {
        proptest::collection::vec(proptest::sample::select(alphabet), 0..140)
            .prop_map(|cs| cs.into_iter().collect())
    }

    fn alphabet() -> Vec<char> {
        let mut cs: Vec<char> = "af09gzAZ-._/:@vobsmcpre1\n \u{e9}\u{2028}\u{1f600}`{[]"
            .chars()
            .collect();
        cs.extend(['0', '9', 'a', 'f', '/']);
        cs
    }

    fn agree(p: &str, s: &str) {
        let Some(simple) = Simple::parse(p) else {
            return;
        };
        let re = Regex::new(p).unwrap();
        assert_eq!(simple.is_match(s), re.is_match(s), "{p} on {s:?}");
    }

    #[test]
    fn agrees_with_regex_on_edges() {
        let hex = "0123456789abcdef".repeat(4);
        for p in schema_patterns() {
            for s in [
                "",
                "a",
                "ab",
                hex.as_str(),
                &hex[1..],
                &format!("{hex}0"),
                &hex.to_uppercase(),
                "mcp-res/x-1/v1",
                "mcp-res//v1",
                "1.0.0",
                "01.0.0",
                "1.0.",
                "obs-a:b.c",
                "obs-",
                "MCP_RES_ABC",
                "legs/a.b",
                &"a".repeat(96),
                &"a".repeat(97),
                &"a".repeat(256),
                "a\n",
                "\u{e9}",
            ] {
                agree(&p, s);
            }
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(3000))]
        #[test]
        fn agrees_with_regex_on_every_schema_pattern(s in near(alphabet())) {
            for p in schema_patterns() {
                agree(&p, &s);
            }
        }

        #[test]
        fn agrees_with_regex_on_made_up_patterns(
            pieces in proptest::collection::vec(
                (proptest::sample::select(vec!["a", "[a-c]", "[0-9.]", "\\.", "[xy_-]", "/"]),
                 proptest::sample::select(vec!["", "+", "*", "{2}", "{0,3}", "{1,2}"])),
                1..5),
            s in near("abcxy0159._-/\n\u{e9}".chars().collect()),
        ) {
            let p: String = std::iter::once("^".to_owned())
                .chain(pieces.iter().map(|(a, q)| format!("{a}{q}")))
                .chain(std::iter::once("$".to_owned()))
                .collect();
            agree(&p, &s);
        }
    }
}
