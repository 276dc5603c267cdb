//! JSON that keeps the member order of its source text, and the two-space pretty form
//! (`JSON.stringify(value, null, 2)` plus a newline) that migration results are written in.
//!
//! `serde_json::Value` sorts object members; a migration result embeds the original v0.1
//! bundle in the member order of the input file, so the output needs its own tree.

use std::fmt;

use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Number, Value};

use crate::json::canonical::write_string;

/// A JSON value whose objects keep their member order.
#[derive(Debug, Clone, PartialEq)]
pub enum Ordered {
    Null,
    Bool(bool),
    Number(Number),
    String(String),
    Array(Vec<Ordered>),
    Object(Vec<(String, Ordered)>),
}

impl Ordered {
    /// Parse JSON text keeping member order. Use only on text the strict reader accepted
    /// (it refuses duplicate members, which this parser would keep).
    pub fn parse(bytes: &[u8]) -> Result<Ordered, serde_json::Error> {
        serde_json::from_slice(bytes)
    }

    /// An object from `(key, value)` pairs, in the given order.
    pub fn object<K: Into<String>>(members: Vec<(K, Ordered)>) -> Ordered {
        Ordered::Object(members.into_iter().map(|(k, v)| (k.into(), v)).collect())
    }

    /// A string value.
    pub fn str(text: impl Into<String>) -> Ordered {
        Ordered::String(text.into())
    }

    /// The same value as a `serde_json::Value` (members sorted).
    pub fn to_value(&self) -> Value {
        match self {
            Ordered::Null => Value::Null,
            Ordered::Bool(b) => Value::Bool(*b),
            Ordered::Number(n) => Value::Number(n.clone()),
            Ordered::String(s) => Value::String(s.clone()),
            Ordered::Array(items) => Value::Array(items.iter().map(Ordered::to_value).collect()),
            Ordered::Object(members) => Value::Object(
                members
                    .iter()
                    .map(|(k, v)| (k.clone(), v.to_value()))
                    .collect(),
            ),
        }
    }

    /// The pretty form: two-space indentation, `"key": value`, `[]`/`{}` when empty, and a
    /// final newline.
    pub fn to_pretty(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(4096);
        self.write_pretty(0, &mut out);
        out.push(b'\n');
        out
    }

    fn write_pretty(&self, depth: usize, out: &mut Vec<u8>) {
        let indent = |out: &mut Vec<u8>, depth: usize| {
            out.extend(std::iter::repeat_n(b' ', depth * 2));
        };
        match self {
            Ordered::Null => out.extend_from_slice(b"null"),
            Ordered::Bool(true) => out.extend_from_slice(b"true"),
            Ordered::Bool(false) => out.extend_from_slice(b"false"),
            Ordered::Number(n) => out.extend_from_slice(js_number(n).as_bytes()),
            Ordered::String(s) => write_string(s, out),
            Ordered::Array(items) if items.is_empty() => out.extend_from_slice(b"[]"),
            Ordered::Object(members) if members.is_empty() => out.extend_from_slice(b"{}"),
            Ordered::Array(items) => {
                out.extend_from_slice(b"[\n");
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        out.extend_from_slice(b",\n");
                    }
                    indent(out, depth + 1);
                    item.write_pretty(depth + 1, out);
                }
                out.push(b'\n');
                indent(out, depth);
                out.push(b']');
            }
            Ordered::Object(members) => {
                out.extend_from_slice(b"{\n");
                for (i, (key, value)) in members.iter().enumerate() {
                    if i > 0 {
                        out.extend_from_slice(b",\n");
                    }
                    indent(out, depth + 1);
                    write_string(key, out);
                    out.extend_from_slice(b": ");
                    value.write_pretty(depth + 1, out);
                }
                out.push(b'\n');
                indent(out, depth);
                out.push(b'}');
            }
        }
    }
}

/// A number as JavaScript prints it for the values a valid document can hold: integers in
/// plain decimal (an integral `1.0` prints as `1`, `-0` as `0`).
fn js_number(n: &Number) -> String {
    if n.is_i64() || n.is_u64() {
        return n.to_string();
    }
    match n.as_f64() {
        Some(0.0) => "0".to_owned(),
        Some(f) if f.fract() == 0.0 && f.abs() < 1e21 => format!("{f:.0}"),
        _ => n.to_string(),
    }
}

impl<'de> Deserialize<'de> for Ordered {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(OrderedVisitor)
    }
}

struct OrderedVisitor;

impl<'de> Visitor<'de> for OrderedVisitor {
    type Value = Ordered;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_unit<E: de::Error>(self) -> Result<Ordered, E> {
        Ok(Ordered::Null)
    }

    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Ordered, E> {
        Ok(Ordered::Bool(v))
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Ordered, E> {
        Ok(Ordered::Number(v.into()))
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Ordered, E> {
        Ok(Ordered::Number(v.into()))
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Ordered, E> {
        Number::from_f64(v)
            .map(Ordered::Number)
            .ok_or_else(|| E::custom("non-finite number"))
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Ordered, E> {
        Ok(Ordered::String(v.to_owned()))
    }

    fn visit_string<E: de::Error>(self, v: String) -> Result<Ordered, E> {
        Ok(Ordered::String(v))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Ordered, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element()? {
            items.push(item);
        }
        Ok(Ordered::Array(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Ordered, A::Error> {
        let mut members = Vec::new();
        while let Some((key, value)) = map.next_entry::<String, Ordered>()? {
            members.push((key, value));
        }
        Ok(Ordered::Object(members))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_member_order_and_prints_like_json_stringify() {
        let parsed =
            Ordered::parse(br#"{"b":1,"a":[],"c":{"z":"\u0001\n","y":[true,null,1.0]},"d":{}}"#)
                .expect("parses");
        let text = String::from_utf8(parsed.to_pretty()).expect("utf-8");
        assert_eq!(
            text,
            "{\n  \"b\": 1,\n  \"a\": [],\n  \"c\": {\n    \"z\": \"\\u0001\\n\",\n    \"y\": [\n      true,\n      null,\n      1\n    ]\n  },\n  \"d\": {}\n}\n"
        );
        assert_eq!(parsed.to_value()["c"]["y"][0], Value::Bool(true));
    }
}
