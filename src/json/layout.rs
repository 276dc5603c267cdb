//! Where the values of a canonically written document stand in its bytes (the
//! reader records it, the canonical writer takes digests in place from it), and
//! the integer bound both share. Below both, so neither imports the other's file
//! for it.

/// The largest integer magnitude MCP-RES admits (JavaScript's `Number.MAX_SAFE_INTEGER`).
pub const MAX_SAFE_INTEGER: i64 = 9_007_199_254_740_991;

/// Where each value of a canonically written document stands in its bytes
/// (see [`parse_with_layout`](crate::json::reader::parse_with_layout)): one entry per value, in document order, the
/// document's own value first.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Layout {
    pub(super) entries: Vec<Entry>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Entry {
    /// The value's bytes: `start..end`.
    pub(super) start: u32,
    pub(super) end: u32,
    /// The index of the first entry after this value's descendants.
    pub(super) next: u32,
    /// Where the member's key (its opening quote) starts, for object members;
    /// [`NO_KEY`] for other values.
    pub(super) key: u32,
}

/// [`Entry::key`] of a value that is no object member.
pub(super) const NO_KEY: u32 = u32::MAX;

/// A byte offset or entry index as stored in an [`Entry`]: a layout is
/// recorded only for documents shorter than `u32::MAX` bytes, and a document
/// has fewer values than bytes, so every offset and index fits.
pub(super) fn narrow(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(NO_KEY)
}

impl Entry {
    fn key(&self) -> Option<usize> {
        (self.key != NO_KEY).then_some(self.key as usize)
    }
}

/// A document's bytes and their [`Layout`], as read together by
/// [`parse_with_layout`](crate::json::reader::parse_with_layout) (the layout describes exactly these bytes).
#[derive(Debug, Clone, Copy)]
pub struct Written<'a> {
    pub bytes: &'a [u8],
    pub layout: &'a Layout,
}

impl Layout {
    /// The document's own value.
    pub const ROOT: usize = 0;

    /// The byte range of the value at `index`.
    pub fn span(&self, index: usize) -> std::ops::Range<usize> {
        let e = &self.entries[index];
        e.start as usize..e.end as usize
    }

    /// The byte range of the member at `index` written whole (`"key":value`),
    /// `None` if it is no object member.
    pub fn member_span(&self, index: usize) -> Option<std::ops::Range<usize>> {
        let e = &self.entries[index];
        e.key().map(|k| k..e.end as usize)
    }

    /// The members of an object or the elements of an array, in order.
    pub fn children(&self, index: usize) -> impl Iterator<Item = usize> + '_ {
        let end = self.entries[index].next as usize;
        let mut at = index + 1;
        std::iter::from_fn(move || {
            (at < end).then(|| {
                let child = at;
                at = self.entries[at].next as usize;
                child
            })
        })
    }

    /// The value reached from the document's own value through the members
    /// named by `path` (names that need no escape), in `bytes`.
    pub fn at(&self, bytes: &[u8], path: &[&str]) -> Option<usize> {
        path.iter()
            .try_fold(Self::ROOT, |at, key| self.member(bytes, at, key))
    }

    /// The member of the object at `index` named `key` (a name that needs no
    /// escape), looked up in `bytes`, the document the layout was read from.
    pub fn member(&self, bytes: &[u8], index: usize, key: &str) -> Option<usize> {
        self.children(index).find(|&c| {
            let e = &self.entries[c];
            // Canonically, `"key":` stands right before the value.
            e.key().is_some_and(|k| {
                e.start as usize == k + key.len() + 3
                    && bytes.get(k + 1..k + 1 + key.len()) == Some(key.as_bytes())
            })
        })
    }
}
