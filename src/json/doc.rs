//! A document read for judging: the strict reader's tree, with strings
//! borrowed from the input where they need no unescaping and one allocation per
//! object or array (issue 21). A [`serde_json::Value`] spends two allocations
//! and a B-tree node on every member; on the validator's path that was about
//! half of the work per bundle.
//!
//! An object's members are kept in byte order of their names, the order a
//! `serde_json::Map` iterates in, so whatever walks a [`Doc`] meets members as
//! it would in the [`Value`] read from the same bytes. [`Doc::from_value`] and
//! [`Doc::into_value`] convert both ways without changing anything.

use std::borrow::Cow;

use serde::de::{
    self, DeserializeSeed, Deserializer, IntoDeserializer, MapAccess, SeqAccess, Unexpected,
    Visitor, value::BorrowedStrDeserializer,
};
use serde_json::{Map, Number, Value};

/// One JSON value. See the module's documentation.
// A whole-word tag: each variant's content starts on a word, so moving a value
// copies whole words (with a one-byte tag the reader, which returns every value
// through its recursion, stalled on partial copies; measured, issue 21).
#[derive(Debug, Clone, PartialEq)]
#[repr(u64)]
pub enum Doc<'a> {
    Null,
    Bool(bool),
    Num(Number),
    Str(Cow<'a, str>),
    Arr(Vec<Doc<'a>>),
    /// Members in byte order of their names, each name once.
    Obj(Vec<(Cow<'a, str>, Doc<'a>)>),
}

impl<'a> Doc<'a> {
    /// The member named `key` of an object.
    pub fn get(&self, key: &str) -> Option<&Doc<'a>> {
        let members = self.as_object()?;
        members
            .binary_search_by(|(k, _)| super::scan::cmp_short(k.as_bytes(), key.as_bytes()))
            .ok()
            .map(|i| &members[i].1)
    }

    /// The value reached through the members named by `path`.
    pub fn at(&self, path: &[&str]) -> Option<&Doc<'a>> {
        path.iter().try_fold(self, |v, key| v.get(key))
    }

    pub fn as_object(&self) -> Option<&[(Cow<'a, str>, Doc<'a>)]> {
        match self {
            Doc::Obj(m) => Some(m),
            _ => None,
        }
    }

    pub fn as_array(&self) -> Option<&[Doc<'a>]> {
        match self {
            Doc::Arr(items) => Some(items),
            _ => None,
        }
    }

    pub fn as_str(&self) -> Option<&str> {
        match self {
            Doc::Str(s) => Some(s),
            _ => None,
        }
    }

    pub fn as_bool(&self) -> Option<bool> {
        match self {
            Doc::Bool(b) => Some(*b),
            _ => None,
        }
    }

    pub fn as_i64(&self) -> Option<i64> {
        match self {
            Doc::Num(n) => n.as_i64(),
            _ => None,
        }
    }

    pub fn is_null(&self) -> bool {
        matches!(self, Doc::Null)
    }

    /// The same value, borrowing the strings of `value`.
    pub fn from_value(value: &'a Value) -> Doc<'a> {
        match value {
            Value::Null => Doc::Null,
            Value::Bool(b) => Doc::Bool(*b),
            Value::Number(n) => Doc::Num(n.clone()),
            Value::String(s) => Doc::Str(Cow::Borrowed(s)),
            Value::Array(items) => Doc::Arr(items.iter().map(Doc::from_value).collect()),
            // A map iterates in byte order of its names: the members' order here.
            Value::Object(map) => Doc::Obj(
                map.iter()
                    .map(|(k, v)| (Cow::Borrowed(k.as_str()), Doc::from_value(v)))
                    .collect(),
            ),
        }
    }

    /// The same value as a [`Value`].
    pub fn into_value(self) -> Value {
        match self {
            Doc::Null => Value::Null,
            Doc::Bool(b) => Value::Bool(b),
            Doc::Num(n) => Value::Number(n),
            Doc::Str(s) => Value::String(s.into_owned()),
            Doc::Arr(items) => Value::Array(items.into_iter().map(Doc::into_value).collect()),
            Doc::Obj(members) => Value::Object(
                members
                    .into_iter()
                    .map(|(k, v)| (k.into_owned(), v.into_value()))
                    .collect::<Map<String, Value>>(),
            ),
        }
    }

    /// The same value owning its strings.
    pub fn into_owned(self) -> Doc<'static> {
        match self {
            Doc::Null => Doc::Null,
            Doc::Bool(b) => Doc::Bool(b),
            Doc::Num(n) => Doc::Num(n),
            Doc::Str(s) => Doc::Str(Cow::Owned(s.into_owned())),
            Doc::Arr(items) => Doc::Arr(items.into_iter().map(Doc::into_owned).collect()),
            Doc::Obj(members) => Doc::Obj(
                members
                    .into_iter()
                    .map(|(k, v)| (Cow::Owned(k.into_owned()), v.into_owned()))
                    .collect(),
            ),
        }
    }

    /// A copy as a [`Value`].
    pub fn to_value(&self) -> Value {
        self.clone().into_value()
    }

    fn unexpected(&self) -> Unexpected<'_> {
        match self {
            Doc::Null => Unexpected::Unit,
            Doc::Bool(b) => Unexpected::Bool(*b),
            Doc::Num(n) => match (n.as_u64(), n.as_i64(), n.as_f64()) {
                (Some(u), _, _) => Unexpected::Unsigned(u),
                (None, Some(i), _) => Unexpected::Signed(i),
                (None, None, f) => Unexpected::Float(f.unwrap_or(f64::NAN)),
            },
            Doc::Str(s) => Unexpected::Str(s),
            Doc::Arr(_) => Unexpected::Seq,
            Doc::Obj(_) => Unexpected::Map,
        }
    }
}

// Typed views (`model::Bundle`) are read from a `Doc` as `serde_json` reads
// them from a `Value`: the same visits, the same error messages.
impl<'de, 'a: 'de> Deserializer<'de> for &'de Doc<'a> {
    type Error = serde_json::Error;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Self::Error> {
        match self {
            Doc::Null => visitor.visit_unit(),
            Doc::Bool(b) => visitor.visit_bool(*b),
            Doc::Num(n) => {
                if let Some(u) = n.as_u64() {
                    visitor.visit_u64(u)
                } else if let Some(i) = n.as_i64() {
                    visitor.visit_i64(i)
                } else {
                    visitor.visit_f64(n.as_f64().unwrap_or(f64::NAN))
                }
            }
            Doc::Str(s) => visitor.visit_borrowed_str(s),
            Doc::Arr(items) => {
                let mut seq = Seq {
                    items: items.iter(),
                };
                let value = visitor.visit_seq(&mut seq)?;
                match seq.items.len() {
                    0 => Ok(value),
                    _ => Err(de::Error::invalid_length(
                        items.len(),
                        &"fewer elements in array",
                    )),
                }
            }
            Doc::Obj(members) => {
                let mut map = Members {
                    members: members.iter(),
                    value: None,
                };
                let value = visitor.visit_map(&mut map)?;
                match map.members.len() {
                    0 => Ok(value),
                    _ => Err(de::Error::invalid_length(
                        members.len(),
                        &"fewer elements in map",
                    )),
                }
            }
        }
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Self::Error> {
        match self {
            Doc::Null => visitor.visit_none(),
            _ => visitor.visit_some(self),
        }
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Self::Error> {
        // A variant written as its name, or as an object of one member (the
        // variant's name and its content), as `serde_json` reads them.
        let (name, content) = match self {
            Doc::Str(s) => (s, None),
            Doc::Obj(members) if members.len() == 1 => (&members[0].0, Some(&members[0].1)),
            Doc::Obj(_) => {
                return Err(de::Error::invalid_value(
                    Unexpected::Map,
                    &"map with a single key",
                ));
            }
            other => {
                return Err(de::Error::invalid_type(
                    other.unexpected(),
                    &"string or map",
                ));
            }
        };
        visitor.visit_enum(Variant { name, content })
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, Self::Error> {
        visitor.visit_newtype_struct(self)
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string
        bytes byte_buf unit unit_struct seq tuple tuple_struct map struct
        identifier ignored_any
    }
}

impl<'de, 'a: 'de> IntoDeserializer<'de, serde_json::Error> for &'de Doc<'a> {
    type Deserializer = Self;

    fn into_deserializer(self) -> Self {
        self
    }
}

struct Variant<'de, 'a> {
    name: &'de str,
    content: Option<&'de Doc<'a>>,
}

impl<'de, 'a: 'de> de::EnumAccess<'de> for Variant<'de, 'a> {
    type Error = serde_json::Error;
    type Variant = Self;

    fn variant_seed<V: DeserializeSeed<'de>>(
        self,
        seed: V,
    ) -> Result<(V::Value, Self), Self::Error> {
        let variant = seed.deserialize(BorrowedStrDeserializer::new(self.name))?;
        Ok((variant, self))
    }
}

impl<'de, 'a: 'de> de::VariantAccess<'de> for Variant<'de, 'a> {
    type Error = serde_json::Error;

    fn unit_variant(self) -> Result<(), Self::Error> {
        match self.content {
            Some(content) => de::Deserialize::deserialize(content),
            None => Ok(()),
        }
    }

    fn newtype_variant_seed<T: DeserializeSeed<'de>>(
        self,
        seed: T,
    ) -> Result<T::Value, Self::Error> {
        match self.content {
            Some(content) => seed.deserialize(content),
            None => Err(de::Error::invalid_type(
                Unexpected::UnitVariant,
                &"newtype variant",
            )),
        }
    }

    fn tuple_variant<V: Visitor<'de>>(
        self,
        _len: usize,
        visitor: V,
    ) -> Result<V::Value, Self::Error> {
        match self.content {
            Some(content @ Doc::Arr(_)) => content.deserialize_any(visitor),
            Some(other) => Err(de::Error::invalid_type(
                other.unexpected(),
                &"tuple variant",
            )),
            None => Err(de::Error::invalid_type(
                Unexpected::UnitVariant,
                &"tuple variant",
            )),
        }
    }

    fn struct_variant<V: Visitor<'de>>(
        self,
        _fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Self::Error> {
        match self.content {
            Some(content @ (Doc::Obj(_) | Doc::Arr(_))) => content.deserialize_any(visitor),
            Some(other) => Err(de::Error::invalid_type(
                other.unexpected(),
                &"struct variant",
            )),
            None => Err(de::Error::invalid_type(
                Unexpected::UnitVariant,
                &"struct variant",
            )),
        }
    }
}

struct Seq<'de, 'a> {
    items: std::slice::Iter<'de, Doc<'a>>,
}

impl<'de, 'a: 'de> SeqAccess<'de> for Seq<'de, 'a> {
    type Error = serde_json::Error;

    fn next_element_seed<T: DeserializeSeed<'de>>(
        &mut self,
        seed: T,
    ) -> Result<Option<T::Value>, Self::Error> {
        self.items.next().map(|v| seed.deserialize(v)).transpose()
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.items.len())
    }
}

struct Members<'de, 'a> {
    members: std::slice::Iter<'de, (Cow<'a, str>, Doc<'a>)>,
    value: Option<&'de Doc<'a>>,
}

impl<'de, 'a: 'de> MapAccess<'de> for Members<'de, 'a> {
    type Error = serde_json::Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, Self::Error> {
        match self.members.next() {
            Some((key, value)) => {
                self.value = Some(value);
                seed.deserialize(BorrowedStrDeserializer::new(key))
                    .map(Some)
            }
            None => Ok(None),
        }
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(
        &mut self,
        seed: V,
    ) -> Result<V::Value, Self::Error> {
        match self.value.take() {
            Some(value) => seed.deserialize(value),
            None => Err(de::Error::custom("value is missing")),
        }
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.members.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;
    use serde_json::json;

    #[test]
    fn converts_both_ways_and_keeps_the_map_order() {
        let value = json!({
            "b": [1, -2, true, null, "x\u{e000}"],
            "a": {"\u{ff61}": 1, "\u{10000}": 2, "z": {}},
            "": 18446744073709551615u64,
            "f": 1.5
        });
        let doc = Doc::from_value(&value);
        let names: Vec<&str> = doc.as_object().unwrap().iter().map(|(k, _)| &**k).collect();
        let expected: Vec<&str> = value
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        assert_eq!(names, expected);
        assert_eq!(doc.to_value(), value);
        assert_eq!(doc.get("a").unwrap().get("z"), Some(&Doc::Obj(Vec::new())));
        assert_eq!(doc.at(&["a", "\u{10000}"]).unwrap().as_i64(), Some(2));
        assert_eq!(doc.get("c"), None);
        assert_eq!(doc.get("b").unwrap().get("a"), None);
    }

    #[derive(Debug, PartialEq, Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct Shape<'a> {
        #[serde(borrow)]
        name: &'a str,
        count: i64,
        big: u64,
        ratio: f64,
        #[serde(default)]
        absent: Option<i64>,
        present_null: Option<i64>,
        kind: Kind,
        either: Vec<Either>,
        #[serde(borrow)]
        nested: Vec<Option<&'a str>>,
        pair: (i64, bool),
    }

    #[derive(Debug, PartialEq, Deserialize)]
    enum Kind {
        #[serde(rename = "ONE")]
        One,
    }

    #[derive(Debug, PartialEq, Deserialize)]
    #[serde(untagged)]
    enum Either {
        Flag(bool),
        Word(Kind),
    }

    fn both<'a, T: Deserialize<'a>>(
        value: &'a Value,
        doc: &'a Doc<'a>,
    ) -> (Result<T, String>, Result<T, String>) {
        (
            T::deserialize(value).map_err(|e| e.to_string()),
            T::deserialize(doc).map_err(|e| e.to_string()),
        )
    }

    #[test]
    fn typed_views_read_as_from_a_value() {
        let good = json!({
            "name": "n", "count": -3, "big": 18446744073709551615u64, "ratio": 0.5,
            "presentNull": null, "kind": "ONE", "either": [true, "ONE"],
            "nested": ["a", null], "pair": [1, false]
        });
        let doc = Doc::from_value(&good);
        let (a, b) = both::<Shape>(&good, &doc);
        assert!(a.is_ok(), "{a:?}");
        assert_eq!(a, b);
        // Refusals carry the same messages.
        let mut bad = Vec::new();
        for (field, wrong) in [
            ("name", json!(1)),
            ("count", json!("1")),
            ("count", json!(1.5)),
            ("big", json!(-1)),
            ("kind", json!("TWO")),
            ("kind", json!({"ONE": 1})),
            ("kind", json!({"ONE": null, "TWO": null})),
            ("kind", json!(["ONE"])),
            ("either", json!([1])),
            ("pair", json!([1, false, 3])),
            ("pair", json!([1])),
            ("nested", json!({})),
        ] {
            let mut v = good.clone();
            v[field] = wrong;
            bad.push(v);
        }
        let mut missing = good.clone();
        missing.as_object_mut().unwrap().remove("name");
        bad.push(missing);
        for v in &bad {
            let doc = Doc::from_value(v);
            let (a, b) = both::<Shape>(v, &doc);
            assert!(a.is_err(), "{v}");
            assert_eq!(a, b, "{v}");
        }
    }
}
