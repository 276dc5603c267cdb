//! Find where a JSON pointer's value sits in the source bytes, for diagnostics
//! that point into the file. Only called on failures, so it re-scans the text.

use std::ops::Range;

/// Escape one JSON pointer token (`~` -> `~0`, `/` -> `~1`).
pub fn escape_token(token: &str) -> String {
    token.replace('~', "~0").replace('/', "~1")
}

fn unescape_token(token: &str) -> String {
    token.replace("~1", "/").replace("~0", "~")
}

/// Byte range of the value at `pointer` in `src` (a document the strict reader accepted).
/// Falls back to the deepest existing ancestor; `None` only if `src` is not JSON.
pub fn locate(src: &[u8], pointer: &str) -> Option<Range<usize>> {
    let tokens: Vec<String> = if pointer.is_empty() {
        Vec::new()
    } else {
        pointer
            .strip_prefix('/')?
            .split('/')
            .map(unescape_token)
            .collect()
    };
    let mut s = Scanner { src, pos: 0 };
    s.ws();
    let mut start = s.pos;
    for token in &tokens {
        match s.peek()? {
            b'{' => {
                s.pos += 1;
                let mut found = false;
                loop {
                    s.ws();
                    if s.peek()? == b'}' {
                        break;
                    }
                    let key_start = s.pos;
                    s.skip_string()?;
                    let key: String = serde_json::from_slice(&src[key_start..s.pos]).ok()?;
                    s.ws();
                    s.pos += 1; // ':'
                    s.ws();
                    if key == *token {
                        found = true;
                        break;
                    }
                    s.skip_value()?;
                    s.ws();
                    if s.peek()? == b',' {
                        s.pos += 1;
                    }
                }
                if !found {
                    return Some(start..end_of_value(src, start));
                }
            }
            b'[' => {
                let index: usize = match token.parse() {
                    Ok(i) => i,
                    Err(_) => return Some(start..end_of_value(src, start)),
                };
                s.pos += 1;
                let mut i = 0;
                loop {
                    s.ws();
                    if s.peek()? == b']' {
                        return Some(start..end_of_value(src, start));
                    }
                    if i == index {
                        break;
                    }
                    s.skip_value()?;
                    s.ws();
                    if s.peek()? == b',' {
                        s.pos += 1;
                    }
                    i += 1;
                }
            }
            _ => return Some(start..end_of_value(src, start)),
        }
        start = s.pos;
    }
    Some(start..end_of_value(src, start))
}

fn end_of_value(src: &[u8], start: usize) -> usize {
    let mut s = Scanner { src, pos: start };
    match s.skip_value() {
        Some(()) => s.pos,
        None => src.len(),
    }
}

struct Scanner<'a> {
    src: &'a [u8],
    pos: usize,
}

impl Scanner<'_> {
    fn peek(&self) -> Option<u8> {
        self.src.get(self.pos).copied()
    }

    fn ws(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.pos += 1;
        }
    }

    fn skip_string(&mut self) -> Option<()> {
        if self.peek()? != b'"' {
            return None;
        }
        self.pos += 1;
        loop {
            match self.peek()? {
                b'"' => {
                    self.pos += 1;
                    return Some(());
                }
                b'\\' => self.pos += 2,
                _ => self.pos += 1,
            }
        }
    }

    fn skip_value(&mut self) -> Option<()> {
        match self.peek()? {
            b'"' => self.skip_string(),
            b'{' | b'[' => {
                let mut depth = 0usize;
                loop {
                    match self.peek()? {
                        b'"' => {
                            self.skip_string()?;
                            continue;
                        }
                        b'{' | b'[' => depth += 1,
                        b'}' | b']' => {
                            depth -= 1;
                            if depth == 0 {
                                self.pos += 1;
                                return Some(());
                            }
                        }
                        _ => {}
                    }
                    self.pos += 1;
                }
            }
            _ => {
                while let Some(b) = self.peek() {
                    if matches!(b, b',' | b'}' | b']' | b' ' | b'\t' | b'\n' | b'\r') {
                        break;
                    }
                    self.pos += 1;
                }
                Some(())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_nested_values() {
        let src = br#"{ "a": [1, {"b/c": "x"}], "d": true }"#;
        let r = locate(src, "/a/1/b~1c").unwrap();
        assert_eq!(&src[r], br#""x""#);
        let r = locate(src, "/d").unwrap();
        assert_eq!(&src[r], b"true");
        let r = locate(src, "").unwrap();
        assert_eq!(r.start, 0);
        // Missing member: falls back to the parent object.
        let r = locate(src, "/a/1/zzz").unwrap();
        assert_eq!(&src[r], br#"{"b/c": "x"}"#);
    }
}
