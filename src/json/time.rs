//! Date-times to microseconds since the Unix epoch, and the `date-time`
//! format both schema engines assert.
//!
//! The accepted strings are exactly those of spec/conformance.md, entry 17:
//! RFC 3339 `date-time` (upper- or lowercase `T` and `Z`, a leap second `:60`
//! only where it falls on 23:59 UTC, year `0000`), plus what both reference
//! validators accept beyond it: a whitespace separator (the characters
//! ECMAScript's `\s` matches) and the offsets `+hh` and `+hhmm`.
//!
//! The wall-clock rule compares instants at microsecond precision (the Python
//! reference's precision; see spec/conformance.md, entry 18), with the offset
//! applied. A leap second counts as the first instant of the next minute.
//! Digits beyond microseconds are truncated.

/// A separator between date and time: `T`, `t`, or a character ECMAScript's
/// `\s` matches (which the Python reference accepts as well).
fn is_separator(c: char) -> bool {
    matches!(
        c,
        'T' | 't'
            | '\t'
            | '\n'
            | '\u{0B}'
            | '\u{0C}'
            | '\r'
            | ' '
            | '\u{A0}'
            | '\u{1680}'
            | '\u{2000}'
            ..='\u{200A}'
                | '\u{2028}'
                | '\u{2029}'
                | '\u{202F}'
                | '\u{205F}'
                | '\u{3000}'
                | '\u{FEFF}'
    )
}

/// `n` ASCII digits as a number.
fn digits(b: &[u8]) -> Option<i64> {
    if b.is_empty() || !b.iter().all(u8::is_ascii_digit) {
        return None;
    }
    Some(b.iter().fold(0i64, |acc, d| acc * 10 + i64::from(d - b'0')))
}

/// Is `s` a `date-time` (the format both schema engines assert)?
pub fn is_date_time(s: &str) -> bool {
    rfc3339_micros(s).is_some()
}

/// Parse a `date-time` into epoch microseconds, or `None` if it is not one
/// (see the module documentation for what is accepted).
pub fn rfc3339_micros(s: &str) -> Option<i64> {
    // Date: YYYY-MM-DD, then one separator character, then the time.
    let date = s.as_bytes().get(..10)?;
    if date[4] != b'-' || date[7] != b'-' {
        return None;
    }
    let year = digits(&date[0..4])?;
    let month = digits(&date[5..7])?;
    let day = digits(&date[8..10])?;
    if !(1..=12).contains(&month) || day < 1 || day > days_in_month(year, month) {
        return None;
    }
    let rest = s.get(10..)?;
    let separator = rest.chars().next()?;
    if !is_separator(separator) {
        return None;
    }
    let b = &rest.as_bytes()[separator.len_utf8()..];
    // Time: hh:mm:ss, an optional fraction of at least one digit.
    if b.len() < 9 || b[2] != b':' || b[5] != b':' {
        return None;
    }
    let hour = digits(&b[0..2])?;
    let minute = digits(&b[3..5])?;
    let second = digits(&b[6..8])?;
    if hour > 23 || minute > 59 || second > 60 {
        return None;
    }
    let mut i = 8;
    let mut micros = 0i64;
    if b.get(i) == Some(&b'.') {
        i += 1;
        let start = i;
        while b.get(i).is_some_and(u8::is_ascii_digit) {
            i += 1;
        }
        if i == start {
            return None;
        }
        let frac = &b[start..i];
        for k in 0..6 {
            micros = micros * 10 + frac.get(k).map_or(0, |d| i64::from(d - b'0'));
        }
    }
    // Offset: Z, z, or +hh, +hhmm, +hh:mm (and -), at most 23:59.
    let offset_minutes = match b.get(i)? {
        b'Z' | b'z' if i + 1 == b.len() => 0,
        sign @ (b'+' | b'-') => {
            let tail = &b[i + 1..];
            let (oh, om) = match tail.len() {
                2 => (digits(tail)?, 0),
                4 => (digits(&tail[0..2])?, digits(&tail[2..4])?),
                5 if tail[2] == b':' => (digits(&tail[0..2])?, digits(&tail[3..5])?),
                _ => return None,
            };
            if oh > 23 || om > 59 {
                return None;
            }
            let m = oh * 60 + om;
            if *sign == b'-' { -m } else { m }
        }
        _ => return None,
    };
    // A leap second only where it falls on 23:59 UTC.
    if second == 60 && (hour * 60 + minute - offset_minutes).rem_euclid(1440) != 23 * 60 + 59 {
        return None;
    }
    let days = days_from_civil(year, month, day);
    let seconds = days * 86_400 + hour * 3600 + minute * 60 + second - offset_minutes * 60;
    Some(seconds * 1_000_000 + micros)
}

fn is_leap(year: i64) -> bool {
    (year % 4 == 0 && year % 100 != 0) || year % 400 == 0
}

fn days_in_month(year: i64, month: i64) -> i64 {
    match month {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        _ if is_leap(year) => 29,
        _ => 28,
    }
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// Epoch milliseconds, as the reference validators compare attestation times
/// (`Date.parse` in JavaScript, millisecond truncation in Python).
pub fn rfc3339_millis(s: &str) -> Option<i64> {
    rfc3339_micros(s).map(|us| us.div_euclid(1000))
}

/// The current time in epoch milliseconds.
pub fn now_millis() -> i64 {
    let now = std::time::SystemTime::now();
    match now.duration_since(std::time::UNIX_EPOCH) {
        Ok(d) => i64::try_from(d.as_millis()).unwrap_or(i64::MAX),
        Err(e) => -i64::try_from(e.duration().as_millis()).unwrap_or(i64::MAX),
    }
}

/// Format epoch milliseconds as `YYYY-MM-DDTHH:MM:SS.mmmZ` (UTC).
pub fn format_rfc3339_millis(ms: i64) -> String {
    let days = ms.div_euclid(86_400_000);
    let rem = ms.rem_euclid(86_400_000);
    // Civil date from days since 1970-01-01 (proleptic Gregorian calendar).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{:03}Z",
        rem / 3_600_000,
        rem / 60_000 % 60,
        rem / 1000 % 60,
        rem % 1000
    )
}

/// An instant read once from an RFC 3339 date-time (such as `--at`), kept at
/// the parser's microsecond precision; comparisons that need milliseconds
/// take [`Timestamp::millis`] from it instead of parsing the text again.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Timestamp {
    micros: i64,
}

impl Timestamp {
    /// The instant `s` denotes, or `None` if it is not an RFC 3339 date-time.
    pub fn parse(s: &str) -> Option<Self> {
        rfc3339_micros(s).map(|micros| Timestamp { micros })
    }

    /// The current time (millisecond precision).
    pub fn now() -> Self {
        Timestamp {
            micros: now_millis().saturating_mul(1000),
        }
    }

    /// Epoch microseconds.
    pub fn micros(self) -> i64 {
        self.micros
    }

    /// Epoch milliseconds (truncated towards negative infinity).
    pub fn millis(self) -> i64 {
        self.micros.div_euclid(1000)
    }
}

#[cfg(test)]
mod timestamp_tests {
    use super::*;

    #[test]
    fn a_timestamp_keeps_microseconds_and_gives_the_same_milliseconds() {
        for text in [
            "2026-08-27T12:00:01.234567Z",
            "1969-12-31T23:59:59.9995Z",
            "2026-08-27T14:00:00+02:00",
        ] {
            let t = Timestamp::parse(text).expect(text);
            assert_eq!(Some(t.micros()), rfc3339_micros(text), "{text}");
            assert_eq!(Some(t.millis()), rfc3339_millis(text), "{text}");
        }
        assert_eq!(Timestamp::parse("2026-13-01T00:00:00Z"), None);
        assert!(Timestamp::now() > Timestamp::parse("2020-01-01T00:00:00Z").unwrap());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_common_forms() {
        assert_eq!(rfc3339_micros("1970-01-01T00:00:00Z"), Some(0));
        assert_eq!(rfc3339_micros("1970-01-01t00:00:01.5z"), Some(1_500_000));
        assert_eq!(rfc3339_micros("1970-01-01T01:00:00+01:00"), Some(0));
        assert_eq!(
            rfc3339_micros("2026-08-27T12:00:01.000Z"),
            Some(1_787_832_001_000_000)
        );
        assert_eq!(
            rfc3339_micros("2026-08-27T12:00:00.1234567Z"),
            Some(1_787_832_000_123_456)
        );
        // A leap second is the first instant of the next minute.
        assert_eq!(
            rfc3339_micros("2016-12-31T23:59:60Z"),
            rfc3339_micros("2017-01-01T00:00:00Z")
        );
    }

    #[test]
    fn rejects_non_rfc3339() {
        for bad in [
            "2026-08-27T12:00:00",
            "2026-08-27x12:00:00Z",
            "2026-02-30T00:00:00Z",
            "2026-08-27T24:00:00Z",
            "2026-08-27T12:00:00.Z",
            "2026-08-27T12:00:00+010",
            "2026-08-27T12:00:00Zx",
        ] {
            assert_eq!(rfc3339_micros(bad), None, "{bad}");
        }
    }

    #[test]
    fn formats_and_reparses_milliseconds() {
        for ms in [
            0i64,
            1,
            951_782_400_000,   // 2000-02-29
            1_787_832_001_234, // 2026-08-27T12:00:01.234Z
            4_107_542_399_999, // 2100-02-28T23:59:59.999Z
            -86_400_001,
        ] {
            let text = format_rfc3339_millis(ms);
            assert_eq!(rfc3339_millis(&text), Some(ms), "{text}");
        }
        assert_eq!(
            format_rfc3339_millis(1_787_832_001_234),
            "2026-08-27T12:00:01.234Z"
        );
        assert_eq!(
            format_rfc3339_millis(951_782_400_000),
            "2000-02-29T00:00:00.000Z"
        );
    }
}
