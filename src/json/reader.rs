//! The strict reader: every document mcpres accepts goes through here.
//!
//! It accepts exactly the JSON that MCP-RES allows: strict UTF-8 without a
//! byte order mark, no duplicate object keys, no trailing data, no lone
//! surrogates, and only safe integers written without fraction or exponent.
//! Size, depth, node and string-length limits bound the work it can be made
//! to do. It never panics; every refusal carries a reason and a position.

use serde_json::{Number, Value};
use std::borrow::Cow;
use std::cmp::Ordering;
use std::collections::HashSet;
use std::fmt;

use super::layout::{Entry, NO_KEY, narrow};
pub use super::layout::{Layout, MAX_SAFE_INTEGER, Written};

pub use super::doc::Doc;

/// Resource limits applied to one document.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Maximum document size in bytes.
    pub max_bytes: usize,
    /// Maximum nesting depth; the top-level value is at depth 0.
    pub max_depth: usize,
    /// Maximum number of values (containers and scalars, not keys).
    pub max_nodes: usize,
    /// Maximum UTF-16 code units in any string, keys included, after unescaping.
    pub max_string_units: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_bytes: 16 * 1024 * 1024,
            max_depth: 128,
            max_nodes: 250_000,
            max_string_units: 1_048_576,
        }
    }
}

/// Why the reader refused a document.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReadErrorKind {
    TooLarge { bytes: usize, limit: usize },
    ByteOrderMark,
    InvalidUtf8,
    Empty,
    UnexpectedByte { found: u8, expected: &'static str },
    UnexpectedEnd { expected: &'static str },
    TrailingData,
    DuplicateKey(String),
    LoneSurrogate,
    InvalidEscape,
    ControlCharacterInString,
    NonIntegerNumber,
    UnsafeInteger,
    InvalidNumber,
    TooDeep { limit: usize },
    TooManyNodes { limit: usize },
    StringTooLong { limit: usize },
}

impl fmt::Display for ReadErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ReadErrorKind::TooLarge { bytes, limit } => {
                write!(f, "document is {bytes} bytes; the limit is {limit} bytes")
            }
            ReadErrorKind::ByteOrderMark => f.write_str("document starts with a byte order mark"),
            ReadErrorKind::InvalidUtf8 => f.write_str("document is not valid UTF-8"),
            ReadErrorKind::Empty => f.write_str("document is empty"),
            ReadErrorKind::UnexpectedByte { found, expected } => {
                if found.is_ascii_graphic() {
                    write!(f, "unexpected character '{}', expected {expected}", *found as char)
                } else {
                    write!(f, "unexpected byte 0x{found:02x}, expected {expected}")
                }
            }
            ReadErrorKind::UnexpectedEnd { expected } => {
                write!(f, "document ends early, expected {expected}")
            }
            ReadErrorKind::TrailingData => f.write_str("trailing data after the JSON value"),
            ReadErrorKind::DuplicateKey(key) => write!(f, "duplicate object key {key:?}"),
            ReadErrorKind::LoneSurrogate => {
                f.write_str("string contains a lone UTF-16 surrogate (MCP_RES_INVALID_UNICODE)")
            }
            ReadErrorKind::InvalidEscape => f.write_str("invalid escape sequence in string"),
            ReadErrorKind::ControlCharacterInString => {
                f.write_str("unescaped control character in string")
            }
            ReadErrorKind::NonIntegerNumber => f.write_str(
                "number has a fraction or exponent; only integers are allowed (MCP_RES_NON_CANONICAL_NUMBER)",
            ),
            ReadErrorKind::UnsafeInteger => f.write_str(
                "integer is outside the safe range ±9007199254740991 (MCP_RES_NON_CANONICAL_NUMBER)",
            ),
            ReadErrorKind::InvalidNumber => f.write_str("malformed number"),
            ReadErrorKind::TooDeep { limit } => {
                write!(f, "nesting deeper than {limit} levels")
            }
            ReadErrorKind::TooManyNodes { limit } => {
                write!(f, "document has more than {limit} values")
            }
            ReadErrorKind::StringTooLong { limit } => {
                write!(f, "string longer than {limit} UTF-16 code units")
            }
        }
    }
}

/// A refusal with its byte offset and 1-based line and column (columns count characters).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{kind} at line {line}, column {column}")]
pub struct ReadError {
    pub kind: ReadErrorKind,
    pub offset: usize,
    pub line: usize,
    pub column: usize,
}

impl ReadError {
    fn at(bytes: &[u8], offset: usize, kind: ReadErrorKind) -> Self {
        let offset = offset.min(bytes.len());
        let (line, column) = line_column(bytes, offset);
        ReadError {
            kind,
            offset,
            line,
            column,
        }
    }
}

/// 1-based line and column (in characters) of a byte offset.
pub fn line_column(bytes: &[u8], offset: usize) -> (usize, usize) {
    let offset = offset.min(bytes.len());
    let before = &bytes[..offset];
    let line = before.iter().filter(|&&b| b == b'\n').count() + 1;
    let line_start = before
        .iter()
        .rposition(|&b| b == b'\n')
        .map(|p| p + 1)
        .unwrap_or(0);
    // Count characters: every byte that is not a UTF-8 continuation byte.
    let column = bytes[line_start..offset]
        .iter()
        .filter(|&&b| (b & 0xC0) != 0x80)
        .count()
        + 1;
    (line, column)
}

/// Parse one document strictly with the given limits.
pub fn parse(bytes: &[u8], limits: &Limits) -> Result<Value, ReadError> {
    read(bytes, limits, false).map(|(doc, _)| doc.into_value())
}

/// [`parse`] into a [`Doc`] (strings borrowed from `bytes` where they need no
/// unescaping): the same checks, the same refusals.
pub fn parse_doc<'a>(bytes: &'a [u8], limits: &Limits) -> Result<Doc<'a>, ReadError> {
    read(bytes, limits, false).map(|(doc, _)| doc)
}

/// [`parse_with_layout`] into a [`Doc`].
pub fn parse_doc_with_layout<'a>(
    bytes: &'a [u8],
    limits: &Limits,
) -> Result<(Doc<'a>, Option<Layout>), ReadError> {
    read(bytes, limits, true)
}

/// [`parse`], and also the [`Layout`] of the document when its value is
/// written exactly in canonical form (`mcp-res-json-utf16-v1`): then the
/// canonical bytes of every value in it are a span of `bytes`, and digests can
/// be taken over the input as it stands instead of over a new serialization.
pub fn parse_with_layout(
    bytes: &[u8],
    limits: &Limits,
) -> Result<(Value, Option<Layout>), ReadError> {
    read(bytes, limits, true).map(|(doc, layout)| (doc.into_value(), layout))
}

fn read<'a>(
    bytes: &'a [u8],
    limits: &Limits,
    record: bool,
) -> Result<(Doc<'a>, Option<Layout>), ReadError> {
    if bytes.len() > limits.max_bytes {
        return Err(ReadError::at(
            bytes,
            0,
            ReadErrorKind::TooLarge {
                bytes: bytes.len(),
                limit: limits.max_bytes,
            },
        ));
    }
    if bytes.starts_with(&[0xEF, 0xBB, 0xBF]) {
        return Err(ReadError::at(bytes, 0, ReadErrorKind::ByteOrderMark));
    }
    let text = match std::str::from_utf8(bytes) {
        Ok(t) => t,
        Err(e) => {
            return Err(ReadError::at(
                bytes,
                e.valid_up_to(),
                ReadErrorKind::InvalidUtf8,
            ));
        }
    };
    // Offsets are kept as `u32` (see [`narrow`]).
    let recording = record && bytes.len() < u32::MAX as usize;
    let mut parser = Parser {
        text,
        bytes,
        pos: 0,
        nodes: 0,
        limits,
        layout: recording.then(Vec::new),
        canonical: recording,
        items: Vec::new(),
        members: Vec::new(),
    };
    parser.skip_ws();
    if parser.pos == bytes.len() {
        return Err(ReadError::at(bytes, 0, ReadErrorKind::Empty));
    }
    let mut value = Doc::Null;
    parser.value_into(0, |_, doc| value = doc).map_err(|e| *e)?;
    parser.skip_ws();
    if parser.pos != bytes.len() {
        return Err(*parser.err(ReadErrorKind::TrailingData));
    }
    let layout = match parser.layout {
        Some(entries) if parser.canonical => Some(Layout { entries }),
        _ => None,
    };
    Ok((value, layout))
}

/// Parse with the default limits.
pub fn parse_default(bytes: &[u8]) -> Result<Value, ReadError> {
    parse(bytes, &Limits::default())
}

struct Parser<'a, 'l> {
    /// The whole document, already checked to be UTF-8 (`bytes` is its byte view).
    text: &'a str,
    bytes: &'a [u8],
    pos: usize,
    nodes: usize,
    limits: &'l Limits,
    /// The layout being recorded (only for [`parse_with_layout`]).
    layout: Option<Vec<Entry>>,
    /// Whether everything read so far inside the value is in canonical form
    /// (only tracked while recording).
    canonical: bool,
    /// The elements of the arrays being read, innermost last: an array takes
    /// its own off the top when it closes (one allocation per array).
    items: Vec<Doc<'a>>,
    /// The same for the members of the objects being read.
    members: Vec<(Cow<'a, str>, Doc<'a>)>,
}

impl<'a> Parser<'a, '_> {
    // Errors are boxed inside the parser: every value is returned through a
    // `Result`, and a small error keeps that `Result` the size of a `Value`
    // (fewer bytes moved per value; measured, issue 21).
    #[cold]
    fn err(&self, kind: ReadErrorKind) -> Box<ReadError> {
        Box::new(ReadError::at(self.bytes, self.pos, kind))
    }

    #[cold]
    fn err_at(&self, offset: usize, kind: ReadErrorKind) -> Box<ReadError> {
        Box::new(ReadError::at(self.bytes, offset, kind))
    }

    #[inline]
    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.pos).copied()
    }

    #[inline]
    fn skip_ws(&mut self) {
        while let Some(b) = self.peek() {
            if matches!(b, b' ' | b'\t' | b'\n' | b'\r') {
                self.pos += 1;
            } else {
                break;
            }
        }
    }

    /// Whitespace between the tokens of a value: none is canonical.
    #[inline]
    fn skip_ws_in(&mut self) {
        let before = self.pos;
        self.skip_ws();
        if self.pos != before {
            self.canonical = false;
        }
    }

    #[cold]
    fn unexpected(&self, expected: &'static str) -> Box<ReadError> {
        match self.peek() {
            Some(found) => self.err(ReadErrorKind::UnexpectedByte { found, expected }),
            None => self.err(ReadErrorKind::UnexpectedEnd { expected }),
        }
    }

    fn count_node(&mut self) -> Result<(), Box<ReadError>> {
        self.nodes += 1;
        if self.nodes > self.limits.max_nodes {
            return Err(self.err(ReadErrorKind::TooManyNodes {
                limit: self.limits.max_nodes,
            }));
        }
        Ok(())
    }

    /// A value, handed to `put` where it is built. Taken in line where it is
    /// read (the top level, each element, each member), so a string, number or
    /// literal goes straight to its place; only arrays and objects go through
    /// a call ([`Self::container`]).
    #[inline(always)]
    fn value_into(
        &mut self,
        depth: usize,
        put: impl FnOnce(&mut Self, Doc<'a>),
    ) -> Result<(), Box<ReadError>> {
        if depth > self.limits.max_depth {
            return Err(self.err(ReadErrorKind::TooDeep {
                limit: self.limits.max_depth,
            }));
        }
        self.count_node()?;
        let entry = self.layout.as_mut().map(|layout| {
            layout.push(Entry {
                start: narrow(self.pos),
                end: narrow(self.pos),
                next: 0,
                key: NO_KEY,
            });
            layout.len() - 1
        });
        match self.peek() {
            Some(b'{' | b'[') => {
                let doc = self.container(depth)?;
                put(self, doc);
            }
            Some(b'"') => {
                let text = self.string()?;
                put(self, Doc::Str(text));
            }
            Some(b't') => {
                self.literal(b"true")?;
                put(self, Doc::Bool(true));
            }
            Some(b'f') => {
                self.literal(b"false")?;
                put(self, Doc::Bool(false));
            }
            Some(b'n') => {
                self.literal(b"null")?;
                put(self, Doc::Null);
            }
            Some(b'-' | b'0'..=b'9') => {
                let n = self.number()?;
                put(self, Doc::Num(Number::from(n)));
            }
            _ => return Err(self.unexpected("a JSON value")),
        }
        if let (Some(layout), Some(i)) = (self.layout.as_mut(), entry) {
            let next = narrow(layout.len());
            let e = &mut layout[i];
            e.end = narrow(self.pos);
            e.next = next;
        }
        Ok(())
    }

    #[inline(always)]
    fn literal(&mut self, word: &'static [u8]) -> Result<(), Box<ReadError>> {
        if self.bytes[self.pos..].starts_with(word) {
            self.pos += word.len();
            Ok(())
        } else {
            // Find the first differing byte for a precise position.
            let mut i = 0;
            while i < word.len() && self.bytes.get(self.pos + i) == Some(&word[i]) {
                i += 1;
            }
            self.pos += i;
            Err(self.unexpected(match word {
                b"true" => "'true'",
                b"false" => "'false'",
                _ => "'null'",
            }))
        }
    }

    /// An integer (the only numbers the reader takes).
    #[inline(always)]
    fn number(&mut self) -> Result<i64, Box<ReadError>> {
        let start = self.pos;
        let negative = self.peek() == Some(b'-');
        if negative {
            self.pos += 1;
        }
        let digits_start = self.pos;
        match self.peek() {
            Some(b'0') => {
                self.pos += 1;
                if matches!(self.peek(), Some(b'0'..=b'9')) {
                    return Err(self.err(ReadErrorKind::InvalidNumber));
                }
            }
            Some(b'1'..=b'9') => {
                while matches!(self.peek(), Some(b'0'..=b'9')) {
                    self.pos += 1;
                }
            }
            _ => return Err(self.unexpected("a digit")),
        }
        let digits_end = self.pos;
        if matches!(self.peek(), Some(b'.' | b'e' | b'E')) {
            // Validate the rest of the grammar only to give the better message.
            return Err(self.err_at(start, ReadErrorKind::NonIntegerNumber));
        }
        let digits = &self.bytes[digits_start..digits_end];
        if digits.len() > 16 {
            return Err(self.err_at(start, ReadErrorKind::UnsafeInteger));
        }
        let mut magnitude: i64 = 0;
        for &d in digits {
            magnitude = magnitude * 10 + i64::from(d - b'0');
        }
        if magnitude > MAX_SAFE_INTEGER {
            return Err(self.err_at(start, ReadErrorKind::UnsafeInteger));
        }
        if negative && magnitude == 0 {
            // Canonically written as `0`.
            self.canonical = false;
        }
        Ok(if negative { -magnitude } else { magnitude })
    }

    /// An array or an object (the recursion goes through here).
    #[inline(never)]
    fn container(&mut self, depth: usize) -> Result<Doc<'a>, Box<ReadError>> {
        if self.peek() == Some(b'{') {
            self.object(depth)
        } else {
            self.array(depth)
        }
    }

    fn array(&mut self, depth: usize) -> Result<Doc<'a>, Box<ReadError>> {
        self.pos += 1; // '['
        self.skip_ws_in();
        if self.peek() == Some(b']') {
            self.pos += 1;
            return Ok(Doc::Arr(Vec::new()));
        }
        let base = self.items.len();
        loop {
            self.skip_ws_in();
            self.value_into(depth + 1, |p, item| p.items.push(item))?;
            self.skip_ws_in();
            match self.peek() {
                Some(b',') => self.pos += 1,
                Some(b']') => {
                    self.pos += 1;
                    return Ok(Doc::Arr(self.items.split_off(base)));
                }
                _ => return Err(self.unexpected("',' or ']'")),
            }
        }
    }

    fn object(&mut self, depth: usize) -> Result<Doc<'a>, Box<ReadError>> {
        self.pos += 1; // '{'
        self.skip_ws_in();
        if self.peek() == Some(b'}') {
            self.pos += 1;
            return Ok(Doc::Obj(Vec::new()));
        }
        // Members gather on `self.members` above `base` in document order. A
        // duplicate is refused where it stands, right after its value. While
        // the names strictly ascend there can be none; from the first name out
        // of order on, each name is looked for among the object's others (lengths
        // first), over a set of them once there are more than `LOOK_BACK`.
        const LOOK_BACK: usize = 32;
        let base = self.members.len();
        let mut large: Option<HashSet<Cow<'a, str>>> = None;
        // Whether the names so far ascend in byte order (the order a `Doc`
        // keeps them in; otherwise they are sorted when the object closes).
        let mut ascending = true;
        loop {
            self.skip_ws_in();
            if self.peek() != Some(b'"') {
                return Err(self.unexpected("a string key"));
            }
            let key_start = self.pos;
            let key = self.string()?;
            self.skip_ws_in();
            if self.peek() != Some(b':') {
                return Err(self.unexpected("':'"));
            }
            self.pos += 1;
            self.skip_ws_in();
            let entry = self.layout.as_ref().map(Vec::len);
            self.value_into(depth + 1, move |p, value| p.members.push((key, value)))?;
            let (own, member) = self.members[base..].split_at(self.members.len() - base - 1);
            let key = &member[0].0;
            // The name's byte order and UTF-16 order after the one before it.
            let (after_bytes, after_units) = own
                .last()
                .map_or((Ordering::Less, Ordering::Less), |(p, _)| {
                    super::canonical::byte_and_utf16_order(p, key)
                });
            if let (Some(layout), Some(i)) = (self.layout.as_mut(), entry) {
                layout[i].key = narrow(key_start);
                // Canonically, names ascend in UTF-16 order.
                if after_units.is_ge() {
                    self.canonical = false;
                }
            }
            if after_bytes.is_ge() {
                ascending = false;
            }
            // Names that strictly ascend so far are all different: only from the
            // first one out of order on does a name need looking for among the
            // others (over a set once the object has more than `LOOK_BACK`).
            let duplicate = !ascending
                && match &mut large {
                    Some(names) => !names.insert(key.clone()),
                    None if own.len() >= LOOK_BACK => {
                        let mut names: HashSet<Cow<'a, str>> =
                            own.iter().map(|(k, _)| k.clone()).collect();
                        let fresh = names.insert(key.clone());
                        large = Some(names);
                        !fresh
                    }
                    None => own.iter().any(|(k, _)| k.len() == key.len() && k == key),
                };
            if duplicate {
                let key = key.to_string();
                return Err(self.err_at(key_start, ReadErrorKind::DuplicateKey(key)));
            }
            self.skip_ws_in();
            match self.peek() {
                Some(b',') => self.pos += 1,
                Some(b'}') => {
                    self.pos += 1;
                    let mut members = self.members.split_off(base);
                    if !ascending {
                        members.sort_unstable_by(|(a, _), (b, _)| a.as_bytes().cmp(b.as_bytes()));
                    }
                    return Ok(Doc::Obj(members));
                }
                _ => return Err(self.unexpected("',' or '}'")),
            }
        }
    }

    fn hex4(&mut self) -> Result<u16, Box<ReadError>> {
        let mut v: u16 = 0;
        for _ in 0..4 {
            let d = match self.peek() {
                Some(b @ b'0'..=b'9') => b - b'0',
                Some(b @ b'a'..=b'f') => b - b'a' + 10,
                Some(b @ b'A'..=b'F') => b - b'A' + 10,
                _ => return Err(self.err(ReadErrorKind::InvalidEscape)),
            };
            v = (v << 4) | u16::from(d);
            self.pos += 1;
        }
        Ok(v)
    }

    /// A string, the opening quote at `self.pos`. Most strings are one plain
    /// run and their closing quote: they are taken here, in line, borrowed
    /// from the input (a run has no more UTF-16 units than bytes, so a short
    /// one needs no counting); the rest go to [`Self::string_escaped`].
    #[inline(always)]
    fn string(&mut self) -> Result<Cow<'a, str>, Box<ReadError>> {
        let start = self.pos + 1;
        let end = start + super::scan::plain_run(self.bytes.get(start..).unwrap_or_default());
        if self.bytes.get(end) == Some(&b'"')
            && end - start <= self.limits.max_string_units
            && let Some(run) = self.text.get(start..end)
        {
            self.pos = end + 1;
            return Ok(Cow::Borrowed(run));
        }
        self.string_escaped()
    }

    /// A string with escapes (or a long one, or one that does not close).
    #[inline(never)]
    fn string_escaped(&mut self) -> Result<Cow<'a, str>, Box<ReadError>> {
        let open = self.pos;
        self.pos += 1; // opening quote
        let mut out = String::new();
        let mut units: usize = 0;
        let limit = self.limits.max_string_units;
        loop {
            // Fast path: copy a run of plain bytes.
            let run_start = self.pos;
            let rest = self.bytes.get(run_start..).unwrap_or_default();
            self.pos += super::scan::plain_run(rest);
            if self.pos > run_start {
                // The whole document is valid UTF-8 and a run starts and stops next to
                // ASCII bytes, so both ends are character boundaries.
                let run = self
                    .text
                    .get(run_start..self.pos)
                    .ok_or_else(|| self.err_at(run_start, ReadErrorKind::InvalidUtf8))?;
                units += utf16_len(run);
                if units > limit {
                    return Err(self.err_at(open, ReadErrorKind::StringTooLong { limit }));
                }
                // A long string of one run (within the limit) is borrowed too.
                if out.is_empty() && self.peek() == Some(b'"') {
                    self.pos += 1;
                    return Ok(Cow::Borrowed(run));
                }
                out.push_str(run);
            }
            match self.peek() {
                None => return Err(self.err(ReadErrorKind::UnexpectedEnd { expected: "'\"'" })),
                Some(b'"') => {
                    self.pos += 1;
                    return Ok(Cow::Owned(out));
                }
                Some(b'\\') => {
                    let escape_start = self.pos;
                    self.pos += 1;
                    let c = match self.peek() {
                        Some(b'"') => '"',
                        Some(b'\\') => '\\',
                        Some(b'/') => '/',
                        Some(b'b') => '\u{8}',
                        Some(b'f') => '\u{c}',
                        Some(b'n') => '\n',
                        Some(b'r') => '\r',
                        Some(b't') => '\t',
                        Some(b'u') => {
                            self.pos += 1;
                            let first = self.hex4()?;
                            self.pos -= 1; // compensate the common advance below
                            if (0xD800..0xDC00).contains(&first) {
                                // Needs a following low surrogate escape.
                                let after = self.pos + 1;
                                if self.bytes.get(after) == Some(&b'\\')
                                    && self.bytes.get(after + 1) == Some(&b'u')
                                {
                                    self.pos = after + 2;
                                    let second = self.hex4()?;
                                    if !(0xDC00..0xE000).contains(&second) {
                                        return Err(
                                            self.err_at(escape_start, ReadErrorKind::LoneSurrogate)
                                        );
                                    }
                                    self.pos -= 1;
                                    let cp = 0x10000
                                        + ((u32::from(first) - 0xD800) << 10)
                                        + (u32::from(second) - 0xDC00);
                                    char::from_u32(cp).ok_or_else(|| {
                                        self.err_at(escape_start, ReadErrorKind::LoneSurrogate)
                                    })?
                                } else {
                                    return Err(
                                        self.err_at(escape_start, ReadErrorKind::LoneSurrogate)
                                    );
                                }
                            } else if (0xDC00..0xE000).contains(&first) {
                                return Err(self.err_at(escape_start, ReadErrorKind::LoneSurrogate));
                            } else {
                                char::from_u32(u32::from(first)).ok_or_else(|| {
                                    self.err_at(escape_start, ReadErrorKind::InvalidEscape)
                                })?
                            }
                        }
                        _ => return Err(self.err_at(escape_start, ReadErrorKind::InvalidEscape)),
                    };
                    self.pos += 1;
                    if self.canonical
                        && !is_canonical_escape(c, &self.bytes[escape_start..self.pos])
                    {
                        self.canonical = false;
                    }
                    units += c.len_utf16();
                    if units > limit {
                        return Err(self.err_at(open, ReadErrorKind::StringTooLong { limit }));
                    }
                    out.push(c);
                }
                Some(_) => return Err(self.err(ReadErrorKind::ControlCharacterInString)),
            }
        }
    }
}

/// Whether `written` (an escape sequence standing for `c`) is how the canonical
/// writer writes `c`: it escapes only `"`, `\\` and control characters, each one way.
fn is_canonical_escape(c: char, written: &[u8]) -> bool {
    let mut text = [0u8; 4];
    let mut canonical = Vec::with_capacity(8);
    super::canonical::write_string(c.encode_utf8(&mut text), &mut canonical);
    // `canonical` is the quoted string; an escape is wanted when it is longer
    // than the character and its quotes.
    canonical.len() > c.len_utf8() + 2 && canonical[1..canonical.len() - 1] == *written
}

/// Number of UTF-16 code units needed for `s`.
#[inline]
pub fn utf16_len(s: &str) -> usize {
    if s.is_ascii() {
        return s.len();
    }
    // Every byte that starts a character counts one unit; four-byte sequences need two.
    s.bytes()
        .map(|b| {
            if (b & 0xC0) == 0x80 {
                0
            } else if b >= 0xF0 {
                2
            } else {
                1
            }
        })
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::canonical;
    use proptest::prelude::*;

    /// Every value's span holds its canonical bytes, every member's span its
    /// `"key":value`, and the children are the value's members or elements.
    fn assert_layout(bytes: &[u8], layout: &Layout, index: usize, value: &Value) {
        let span = layout.span(index);
        assert_eq!(bytes[span.clone()], canonical::to_vec(value).unwrap()[..]);
        let children: Vec<usize> = layout.children(index).collect();
        match value {
            Value::Object(map) => {
                assert_eq!(children.len(), map.len());
                for c in children {
                    let member = layout.member_span(c).expect("a member");
                    let key_text = &bytes[member.start..layout.span(c).start - 1];
                    assert_eq!(bytes[layout.span(c).start - 1], b':');
                    let key: String = serde_json::from_slice(key_text).unwrap();
                    if !key.contains(['"', '\\']) && !key.chars().any(char::is_control) {
                        assert_eq!(layout.member(bytes, index, &key), Some(c));
                    }
                    assert_layout(bytes, layout, c, &map[&key]);
                }
                assert_eq!(layout.member(bytes, index, "not a member name"), None);
            }
            Value::Array(items) => {
                assert_eq!(children.len(), items.len());
                for (c, item) in children.into_iter().zip(items) {
                    assert_eq!(layout.member_span(c), None);
                    assert_layout(bytes, layout, c, item);
                }
            }
            _ => assert!(children.is_empty()),
        }
    }

    fn any_value() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            (-MAX_SAFE_INTEGER..=MAX_SAFE_INTEGER).prop_map(Value::from),
            "(\\PC|[\\x00-\\x1f\"\\\\\u{e000}\u{ff61}\u{1f600}]){0,8}".prop_map(Value::String),
        ];
        leaf.prop_recursive(4, 40, 6, |inner| {
            prop_oneof![
                proptest::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
                proptest::collection::btree_map(
                    "(\\PC|[\\x00-\\x1f\"\\\\\u{e000}\u{ff61}\u{1f600}]){0,4}",
                    inner,
                    0..6
                )
                .prop_map(|m| Value::Object(m.into_iter().collect())),
            ]
        })
    }

    proptest! {
        #[test]
        fn canonical_bytes_have_a_layout_of_every_value(value in any_value()) {
            let bytes = canonical::to_vec(&value).unwrap();
            let (read, layout) = parse_with_layout(&bytes, &Limits::default()).unwrap();
            prop_assert_eq!(&read, &value);
            let layout = layout.expect("canonical bytes have a layout");
            assert_layout(&bytes, &layout, Layout::ROOT, &value);
            // Whitespace around the value changes nothing.
            let padded = [b" \n".as_slice(), &bytes, b"\n"].concat();
            let (_, around) = parse_with_layout(&padded, &Limits::default()).unwrap();
            let around = around.expect("outer whitespace is outside the value");
            prop_assert_eq!(&padded[around.span(Layout::ROOT)], &bytes[..]);
        }

        #[test]
        fn pretty_bytes_have_a_layout_only_when_nothing_was_spaced(value in any_value()) {
            let pretty = serde_json::to_vec_pretty(&value).unwrap();
            let (read, layout) = parse_with_layout(&pretty, &Limits::default()).unwrap();
            prop_assert_eq!(&read, &value);
            let canonical_bytes = canonical::to_vec(&value).unwrap();
            prop_assert_eq!(layout.is_some(), pretty == canonical_bytes);
        }
    }

    /// Names drawn from a few characters (ASCII, U+E000+, U+FF61, astral), so
    /// that objects repeat names and mix byte order with UTF-16 order. Some
    /// lists are put in UTF-16 order without repeats, then perhaps get one
    /// repeat or one swap somewhere (often past the reader's look-back size).
    fn any_names() -> impl Strategy<Value = Vec<String>> {
        let name = proptest::collection::vec(
            prop_oneof![
                Just('a'),
                Just('b'),
                Just('\u{e000}'),
                Just('\u{ff61}'),
                Just('\u{1f600}')
            ],
            0..5,
        )
        .prop_map(|chars| chars.into_iter().collect::<String>());
        (
            proptest::collection::vec(name, 0..80),
            0u8..4,
            any::<proptest::sample::Index>(),
            any::<proptest::sample::Index>(),
        )
            .prop_map(|(mut names, shape, a, b)| {
                if shape > 0 {
                    names.sort_by(|x, y| canonical::cmp_utf16(x, y));
                    names.dedup();
                }
                if shape > 1 && names.len() > 1 {
                    let (i, j) = (a.index(names.len()), b.index(names.len()));
                    if shape == 2 {
                        let repeated = names[i].clone();
                        names.insert(j, repeated);
                    } else {
                        names.swap(i, j);
                    }
                }
                names
            })
    }

    proptest! {
        // A name is refused exactly when it repeats an earlier one, at the first
        // such name; otherwise the object reads with its members byte-ordered,
        // and has a layout exactly when its names ascend in UTF-16 order. This
        // holds however long the object is (look-back, then a set) and wherever
        // its names first fall out of order.
        #[test]
        fn duplicates_and_member_order_agree_with_a_plain_model(names in any_names()) {
            let members: Vec<String> = names
                .iter()
                .enumerate()
                .map(|(i, n)| format!("{}:{i}", serde_json::to_string(n).unwrap()))
                .collect();
            let text = format!("{{{}}}", members.join(","));
            let first_repeat = names
                .iter()
                .enumerate()
                .find(|(i, n)| names[..*i].contains(n))
                .map(|(_, n)| n.clone());
            match (read(text.as_bytes(), &Limits::default(), true), first_repeat) {
                (Err(e), Some(repeated)) => {
                    prop_assert_eq!(e.kind, ReadErrorKind::DuplicateKey(repeated));
                }
                (Ok((doc, layout)), None) => {
                    let utf16_ascending = names
                        .windows(2)
                        .all(|w| canonical::cmp_utf16(&w[0], &w[1]).is_lt());
                    prop_assert_eq!(layout.is_some(), utf16_ascending);
                    let Doc::Obj(read) = doc else { panic!("not an object") };
                    let mut sorted = names.clone();
                    sorted.sort();
                    let read: Vec<&str> = read.iter().map(|(k, _)| k.as_ref()).collect();
                    prop_assert_eq!(read, sorted.iter().map(String::as_str).collect::<Vec<_>>());
                }
                (got, expected) => {
                    prop_assert!(false, "read {:?}, expected a repeat of {:?}", got.map(|_| ()), expected);
                }
            }
        }
    }

    #[test]
    fn written_forms_other_than_the_canonical_one_have_no_layout() {
        for text in [
            "{\"b\":1,\"a\":2}",
            "{\"a\": 1}",
            "[1, 2]",
            "[ ]",
            "-0",
            "[-0]",
            "\"\\/\"",
            "\"\\u0041\"",
            "\"\\u00e9\"",
            "\"\\u001F\"",
            "\"\\u0008\"",
            "\"\\u000a\"",
            "\"\\ud83d\\ude00\"",
            // U+FF61 after U+1F600 is UTF-16 order; the reverse is code point order.
            "{\"\u{ff61}\":1,\"\u{1f600}\":2}",
        ] {
            let (_, layout) = parse_with_layout(text.as_bytes(), &Limits::default()).unwrap();
            assert_eq!(layout, None, "{text}");
        }
        for text in [
            "{\"a\":[1,-2,\"\\b\\f\\n\\r\\t\\u001f\\\"\\\\\"]}",
            "{\"\u{1f600}\":2,\"\u{ff61}\":1}",
            "\"\u{7f}\u{2028}\"",
            "0",
        ] {
            let (_, layout) = parse_with_layout(text.as_bytes(), &Limits::default()).unwrap();
            assert!(layout.is_some(), "{text}");
        }
        // Objects past the look-back size keep their order check.
        let members = |order: &[usize]| {
            let inner: Vec<String> = order.iter().map(|i| format!("\"k{i:02}\":{i}")).collect();
            format!("{{{}}}", inner.join(","))
        };
        let sorted: Vec<usize> = (0..40).collect();
        let mut swapped = sorted.clone();
        swapped.swap(36, 37);
        assert!(
            parse_with_layout(members(&sorted).as_bytes(), &Limits::default())
                .unwrap()
                .1
                .is_some()
        );
        assert!(
            parse_with_layout(members(&swapped).as_bytes(), &Limits::default())
                .unwrap()
                .1
                .is_none()
        );
        // Without recording, nothing is kept.
        assert_eq!(
            read(b"{\"a\":1}", &Limits::default(), false).unwrap().1,
            None
        );
    }

    fn kind(input: &[u8]) -> ReadErrorKind {
        parse_default(input).unwrap_err().kind
    }

    /// Every object of a `Doc` lists its members in byte order of their names,
    /// whatever order they were written in (lookups search them by halves).
    fn assert_sorted(doc: &Doc<'_>) {
        match doc {
            Doc::Obj(members) => {
                assert!(
                    members
                        .windows(2)
                        .all(|w| w[0].0.as_bytes() < w[1].0.as_bytes()),
                    "{members:?}"
                );
                for (k, v) in members {
                    assert_eq!(doc.get(k), Some(v));
                    assert_sorted(v);
                }
            }
            Doc::Arr(items) => items.iter().for_each(assert_sorted),
            _ => {}
        }
    }

    #[test]
    fn doc_members_are_in_byte_order_whatever_the_written_order() {
        let many: Vec<String> = (0..40).rev().map(|i| format!("\"k{i:02}\":{i}")).collect();
        let input = format!(
            r#"{{"b":1,"a":{{"d":[{{"z":1,"y":2}}],"c":2}},"\ue000":1,"\ud800\udc00":2,"\uff61":3,"m":{{{}}}}}"#,
            many.join(",")
        );
        let doc = parse_doc(input.as_bytes(), &Limits::default()).unwrap();
        assert_sorted(&doc);
        assert_eq!(doc.at(&["m", "k07"]).and_then(Doc::as_i64), Some(7));
        assert_eq!(doc.at(&["a", "c"]).and_then(Doc::as_i64), Some(2));
        assert_eq!(doc.get("\u{10000}").and_then(Doc::as_i64), Some(2));
        assert_eq!(doc.get("x"), None);
        assert_eq!(
            doc.into_value(),
            parse(input.as_bytes(), &Limits::default()).unwrap()
        );
        // Duplicates are refused in objects past the look-back size too.
        let dup = format!("{{{},\"k05\":1}}", many.join(","));
        assert!(matches!(kind(dup.as_bytes()), ReadErrorKind::DuplicateKey(k) if k == "k05"));
    }

    #[test]
    fn accepts_plain_documents() {
        let v =
            parse_default(br#"{"a":[1,-2,true,false,null,"x\u00e9\ud83d\ude00"],"b":{}}"#).unwrap();
        assert_eq!(v["a"][5], Value::String("xé😀".into()));
        assert_eq!(v["a"][1], Value::from(-2));
    }

    #[test]
    fn refuses_bom_duplicates_trailing() {
        assert_eq!(kind(b"\xEF\xBB\xBF{}"), ReadErrorKind::ByteOrderMark);
        assert_eq!(
            kind(br#"{"a":{"b":1,"b":2}}"#),
            ReadErrorKind::DuplicateKey("b".into())
        );
        assert_eq!(kind(b"{} x"), ReadErrorKind::TrailingData);
        assert_eq!(kind(b"{}\0"), ReadErrorKind::TrailingData);
        assert_eq!(kind(b""), ReadErrorKind::Empty);
        assert_eq!(kind(b"\xff"), ReadErrorKind::InvalidUtf8);
    }

    #[test]
    fn refuses_non_integers_and_unsafe_integers() {
        assert_eq!(kind(b"1.0"), ReadErrorKind::NonIntegerNumber);
        assert_eq!(kind(b"1e2"), ReadErrorKind::NonIntegerNumber);
        assert_eq!(kind(b"9007199254740992"), ReadErrorKind::UnsafeInteger);
        assert_eq!(kind(b"-9007199254740992"), ReadErrorKind::UnsafeInteger);
        assert_eq!(kind(b"01"), ReadErrorKind::InvalidNumber);
        assert_eq!(
            parse_default(b"9007199254740991").unwrap(),
            Value::from(MAX_SAFE_INTEGER)
        );
        assert_eq!(parse_default(b"-0").unwrap(), Value::from(0));
    }

    #[test]
    fn refuses_lone_surrogates() {
        assert_eq!(kind(br#""\ud800""#), ReadErrorKind::LoneSurrogate);
        assert_eq!(kind(br#""\udc00x""#), ReadErrorKind::LoneSurrogate);
        assert_eq!(kind(br#"{"\ud800\u0041":1}"#), ReadErrorKind::LoneSurrogate);
    }

    #[test]
    fn depth_limit_is_exact() {
        let ok = format!("{}{}", "[".repeat(129), "]".repeat(129));
        assert!(parse_default(ok.as_bytes()).is_ok());
        let bad = format!("{}{}", "[".repeat(130), "]".repeat(130));
        assert_eq!(kind(bad.as_bytes()), ReadErrorKind::TooDeep { limit: 128 });
    }

    #[test]
    fn node_limit_is_exact() {
        let ok = format!("[{}]", vec!["0"; 249_999].join(","));
        assert!(parse_default(ok.as_bytes()).is_ok());
        let bad = format!("[{}]", vec!["0"; 250_000].join(","));
        assert_eq!(
            kind(bad.as_bytes()),
            ReadErrorKind::TooManyNodes { limit: 250_000 }
        );
    }

    #[test]
    fn string_limit_counts_utf16_units() {
        let ok = format!("\"{}\"", "a".repeat(1_048_576));
        assert!(parse_default(ok.as_bytes()).is_ok());
        let bad = format!("\"{}\"", "a".repeat(1_048_577));
        assert!(matches!(
            kind(bad.as_bytes()),
            ReadErrorKind::StringTooLong { .. }
        ));
        // 524,288 emoji = 1,048,576 units: passes; one more unit fails.
        let emoji_ok = format!("\"{}\"", "😀".repeat(524_288));
        assert!(parse_default(emoji_ok.as_bytes()).is_ok());
        let emoji_bad = format!("\"{}a\"", "😀".repeat(524_288));
        assert!(matches!(
            kind(emoji_bad.as_bytes()),
            ReadErrorKind::StringTooLong { .. }
        ));
    }

    #[test]
    fn size_limit_is_exact() {
        let limits = Limits {
            max_bytes: 4,
            ..Limits::default()
        };
        assert!(parse(b"[11]", &limits).is_ok());
        assert!(matches!(
            parse(b"[111]", &limits).unwrap_err().kind,
            ReadErrorKind::TooLarge { .. }
        ));
    }

    #[test]
    fn positions_are_line_and_character_columns() {
        let e = parse_default("{\n  \"é\": 1.5}".as_bytes()).unwrap_err();
        assert_eq!((e.line, e.column), (2, 8));
        assert_eq!(e.kind, ReadErrorKind::NonIntegerNumber);
    }

    #[test]
    fn control_characters_must_be_escaped() {
        assert_eq!(kind(b"\"a\x01\""), ReadErrorKind::ControlCharacterInString);
        assert_eq!(kind(b"\"a\0\""), ReadErrorKind::ControlCharacterInString);
    }
}
