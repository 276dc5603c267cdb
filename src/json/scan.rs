//! Finding the end of a run of plain string bytes, eight bytes at a time.
//!
//! Both the reader and the canonical writer spend most of their time in
//! strings (digests, ids, paths), and almost every string byte is "plain": not
//! a quote, not a backslash, not a control character. [`plain_run`] finds the
//! first byte that is not, testing a whole `u64` word per step with the usual
//! bit tricks (no `unsafe`, no SIMD intrinsics), then finishing byte by byte.

const ONES: u64 = 0x0101_0101_0101_0101;
const HIGHS: u64 = 0x8080_8080_8080_8080;

/// A word whose high bit is set in each byte of `w` that is zero.
#[inline]
fn zero_bytes(w: u64) -> u64 {
    w.wrapping_sub(ONES) & !w & HIGHS
}

/// A word whose high bit is set in each byte of `w` that is below `n` (n <= 128).
#[inline]
fn bytes_below(w: u64, n: u8) -> u64 {
    w.wrapping_sub(ONES * u64::from(n)) & !w & HIGHS
}

/// Whether `b` ends a plain run: `"`, `\` or a control character (< 0x20).
#[inline]
pub fn is_special(b: u8) -> bool {
    b == b'"' || b == b'\\' || b < 0x20
}

/// The length of the longest prefix of `bytes` with no `"`, `\` or byte below
/// 0x20.
pub fn plain_run(bytes: &[u8]) -> usize {
    let mut chunks = bytes.chunks_exact(8);
    let mut done = 0;
    for chunk in &mut chunks {
        let mut word = [0u8; 8];
        word.copy_from_slice(chunk);
        let w = u64::from_le_bytes(word);
        // The tests may flag a byte after a real hit (borrows), never miss
        // one, and never flag a byte before the first hit: the lowest flagged
        // byte of a word is its first special byte.
        let hits = zero_bytes(w ^ (ONES * u64::from(b'"')))
            | zero_bytes(w ^ (ONES * u64::from(b'\\')))
            | bytes_below(w, 0x20);
        if hits != 0 {
            // The lowest flagged byte is the first special one (see above).
            return done + (hits.trailing_zeros() / 8) as usize;
        }
        done += 8;
    }
    done + bytes[done..]
        .iter()
        .position(|&b| is_special(b))
        .unwrap_or(bytes.len() - done)
}

/// Byte order of two short strings (member names, enumerated words),
/// compared in line, eight bytes at a time: a library `memcmp` call per
/// comparison cost more than the comparison itself.
#[inline]
pub fn cmp_short(a: &[u8], b: &[u8]) -> std::cmp::Ordering {
    let n = a.len().min(b.len());
    let mut i = 0;
    while i + 8 <= n {
        // Big-endian words compare as their bytes do, first byte first.
        let x = u64::from_be_bytes(word_at(a, i));
        let y = u64::from_be_bytes(word_at(b, i));
        if x != y {
            return x.cmp(&y);
        }
        i += 8;
    }
    for (x, y) in a[i..n].iter().zip(&b[i..n]) {
        if x != y {
            return x.cmp(y);
        }
    }
    a.len().cmp(&b.len())
}

/// Whether two short strings are the same bytes, compared as
/// [`cmp_short`] compares them.
#[inline]
pub fn eq_short(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && cmp_short(a, b).is_eq()
}

/// The eight bytes of `bytes` at `i..i + 8` (the caller has checked the length).
#[inline]
fn word_at(bytes: &[u8], i: usize) -> [u8; 8] {
    let mut word = [0u8; 8];
    word.copy_from_slice(&bytes[i..i + 8]);
    word
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn naive(bytes: &[u8]) -> usize {
        bytes
            .iter()
            .position(|&b| is_special(b))
            .unwrap_or(bytes.len())
    }

    #[test]
    fn every_special_byte_at_every_offset_is_found() {
        for special in (0u8..0x20).chain([b'"', b'\\']) {
            for len in 0..24 {
                for at in 0..len {
                    let mut v = vec![b'a'; len];
                    v[at] = special;
                    assert_eq!(plain_run(&v), at, "byte {special:#x} at {at} of {len}");
                }
            }
        }
        assert_eq!(plain_run(b""), 0);
        assert_eq!(plain_run("é😀ab€".as_bytes()), "é😀ab€".len());
        // Bytes just above the classes are plain: 0x20, 0x21, 0x23, 0x5b, 0x5d, 0x7f, 0xff.
        let plain = [
            0x20u8, 0x21, 0x23, 0x5b, 0x5d, 0x7f, 0x80, 0xa2, 0xdc, 0xff, 0x20, 0x21,
        ];
        assert_eq!(plain_run(&plain), plain.len());
    }

    proptest! {
        #[test]
        fn short_comparisons_agree_with_slice_order(
            a in proptest::collection::vec(prop_oneof![Just(0u8), Just(b'a'), Just(b'b'), Just(0xff)], 0..20),
            b in proptest::collection::vec(prop_oneof![Just(0u8), Just(b'a'), Just(b'b'), Just(0xff)], 0..20),
            shared in proptest::collection::vec(any::<u8>(), 0..20),
        ) {
            // A shared prefix of any length puts the first difference anywhere
            // in or after a word.
            let a = [shared.as_slice(), &a].concat();
            let b = [shared.as_slice(), &b].concat();
            prop_assert_eq!(cmp_short(&a, &b), a.cmp(&b));
            prop_assert_eq!(cmp_short(&b, &a), b.cmp(&a));
            prop_assert_eq!(eq_short(&a, &b), a == b);
            prop_assert!(eq_short(&a, &a.clone()));
            prop_assert_eq!(cmp_short(&a, &a.clone()), std::cmp::Ordering::Equal);
        }

        #[test]
        fn agrees_with_a_byte_by_byte_scan(bytes in proptest::collection::vec(any::<u8>(), 0..64)) {
            prop_assert_eq!(plain_run(&bytes), naive(&bytes));
        }

        #[test]
        fn agrees_on_mostly_plain_text(
            prefix in "[ -~]{0,40}",
            special in prop_oneof![Just(b'"'), Just(b'\\'), 0u8..0x20],
            suffix in proptest::collection::vec(any::<u8>(), 0..16),
        ) {
            let mut bytes = prefix.into_bytes();
            bytes.push(special);
            bytes.extend(suffix);
            prop_assert_eq!(plain_run(&bytes), naive(&bytes));
        }
    }
}
