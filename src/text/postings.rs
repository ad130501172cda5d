//! A term's posting list, compressed: each posting is the document's
//! distance from the previous one (zig-zag varint, so a reused low slot
//! costs a few bytes more, never breaks the list) and its per-field counts
//! (one byte when every field it occurs in counts once, which is most).
//! A posting takes 2 bytes typically instead of the 8 of a plain pair.

use super::bm25::DocId;

/// A term's count in each of up to six fields, 5 bits a field (counts
/// saturate at 31: BM25 saturates long before).
#[derive(Clone, Copy, Default, Debug, PartialEq, Eq)]
pub(crate) struct PackedTf(u32);

impl PackedTf {
    const BITS: u32 = 5;
    const MAX: u32 = (1 << Self::BITS) - 1;
    /// Fields a count can be kept for.
    pub(crate) const FIELDS: usize = 6;

    /// The count in `field`.
    pub(crate) fn get(self, field: usize) -> u32 {
        (self.0 >> (field as u32 * Self::BITS)) & Self::MAX
    }

    /// One more occurrence in `field`.
    pub(crate) fn bump(&mut self, field: usize) {
        if self.get(field) < Self::MAX {
            self.0 += 1 << (field as u32 * Self::BITS);
        }
    }
}

/// The first byte of a posting's counts: which fields it occurs in (bits
/// 0-5), and whether each of those counts once (this bit); if not, one
/// byte a present field follows with its count.
const ALL_ONES: u8 = 1 << 6;

/// The counts of a field mask whose fields each count once.
const ONES: [u32; 64] = {
    let mut table = [0u32; 64];
    let mut mask = 0;
    while mask < 64 {
        let mut f = 0;
        while f < PackedTf::FIELDS {
            if mask & (1 << f) != 0 {
                table[mask] |= 1 << (f as u32 * PackedTf::BITS);
            }
            f += 1;
        }
        mask += 1;
    }
    table
};

/// An append-only, compressed list of `(document, counts)`.
#[derive(Default)]
pub(crate) struct PostingList {
    bytes: Vec<u8>,
    /// The last document appended (the base of the next delta).
    last: DocId,
    len: u32,
}

impl PostingList {
    /// Number of postings (live or not).
    pub(crate) fn len(&self) -> usize {
        self.len as usize
    }

    /// Appends a posting.
    pub(crate) fn push(&mut self, doc: DocId, tf: PackedTf) {
        let delta = i64::from(doc) - i64::from(self.last);
        write_varint(&mut self.bytes, zigzag(delta));
        let mut mask = 0u8;
        let mut all_ones = true;
        for f in 0..PackedTf::FIELDS {
            let count = tf.get(f);
            if count > 0 {
                mask |= 1 << f;
                all_ones &= count == 1;
            }
        }
        if all_ones {
            self.bytes.push(mask | ALL_ONES);
        } else {
            self.bytes.push(mask);
            for f in 0..PackedTf::FIELDS {
                let count = tf.get(f);
                if count > 0 {
                    self.bytes.push(count as u8);
                }
            }
        }
        self.last = doc;
        self.len += 1;
    }

    /// The postings in the order they were appended.
    pub(crate) fn iter(&self) -> Postings<'_> {
        Postings {
            bytes: &self.bytes,
            last: 0,
        }
    }

    /// Keeps only the postings of documents for which `keep` is true.
    pub(crate) fn retain(&mut self, mut keep: impl FnMut(DocId) -> bool) {
        let mut kept = PostingList::default();
        for (doc, _, tf) in self.iter() {
            if keep(doc) {
                kept.push(doc, tf);
            }
        }
        *self = kept;
    }

    /// Releases spare capacity.
    pub(crate) fn shrink_to_fit(&mut self) {
        self.bytes.shrink_to_fit();
    }
}

/// Iterator over a [`PostingList`].
pub(crate) struct Postings<'a> {
    bytes: &'a [u8],
    last: DocId,
}

impl Iterator for Postings<'_> {
    /// A document, the fields it occurs in (bit `f` for field `f`), and
    /// its count in each: the fields as bits, so a reader visits only
    /// those.
    type Item = (DocId, u8, PackedTf);

    #[inline(always)]
    fn next(&mut self) -> Option<(DocId, u8, PackedTf)> {
        // The common posting: a one-byte delta and counts of one.
        if let [delta, head, rest @ ..] = self.bytes {
            if delta & 0x80 == 0 && head & ALL_ONES != 0 {
                self.bytes = rest;
                self.last = (i64::from(self.last) + unzigzag(u64::from(*delta))) as DocId;
                let mask = head & !ALL_ONES;
                return Some((self.last, mask, PackedTf(ONES[mask as usize])));
            }
        }
        if self.bytes.is_empty() {
            return None;
        }
        let delta = unzigzag(read_varint(&mut self.bytes));
        let doc = (i64::from(self.last) + delta) as DocId;
        self.last = doc;
        let (&head, rest) = self.bytes.split_first()?;
        self.bytes = rest;
        let mask = head & !ALL_ONES;
        if head & ALL_ONES != 0 {
            return Some((doc, mask, PackedTf(ONES[mask as usize])));
        }
        let mut tf = 0u32;
        for f in 0..PackedTf::FIELDS {
            if mask & (1 << f) != 0 {
                let (&count, rest) = self.bytes.split_first()?;
                self.bytes = rest;
                tf |= u32::from(count) << (f as u32 * PackedTf::BITS);
            }
        }
        Some((doc, mask, PackedTf(tf)))
    }
}

fn zigzag(n: i64) -> u64 {
    ((n << 1) ^ (n >> 63)) as u64
}

fn unzigzag(n: u64) -> i64 {
    (n >> 1) as i64 ^ -((n & 1) as i64)
}

fn write_varint(out: &mut Vec<u8>, mut n: u64) {
    while n >= 0x80 {
        out.push((n as u8) | 0x80);
        n >>= 7;
    }
    out.push(n as u8);
}

#[inline]
fn read_varint(bytes: &mut &[u8]) -> u64 {
    let mut n = 0u64;
    let mut shift = 0;
    while let Some((&b, rest)) = bytes.split_first() {
        *bytes = rest;
        n |= u64::from(b & 0x7f) << shift;
        if b & 0x80 == 0 {
            break;
        }
        shift += 7;
    }
    n
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tf(counts: [u32; PackedTf::FIELDS]) -> PackedTf {
        let mut tf = PackedTf::default();
        for (f, &c) in counts.iter().enumerate() {
            for _ in 0..c {
                tf.bump(f);
            }
        }
        tf
    }

    #[test]
    fn counts_saturate_at_31() {
        let t = tf([40, 0, 3, 0, 0, 1]);
        assert_eq!(t.get(0), 31);
        assert_eq!(t.get(2), 3);
        assert_eq!(t.get(5), 1);
    }

    #[test]
    fn postings_come_back_as_they_went_in() {
        // Ascending, repeated, descending (a reused slot), the largest id,
        // and every shape of counts.
        let docs = [0, 1, 5, 5, 300, 2, 70_000, 1, u32::MAX, 0, 12];
        let counts = [
            [1, 0, 0, 0, 0, 0],
            [0, 0, 0, 0, 0, 1],
            [1, 1, 1, 1, 1, 1],
            [2, 0, 0, 0, 0, 0],
            [0, 31, 0, 7, 0, 1],
            [31, 31, 31, 31, 31, 31],
            [0, 0, 1, 0, 0, 0],
        ];
        let mut list = PostingList::default();
        let mut expected = Vec::new();
        for (i, &doc) in docs.iter().enumerate() {
            let c = counts[i % counts.len()];
            let t = tf(c);
            list.push(doc, t);
            let mask = (0..PackedTf::FIELDS).fold(0u8, |m, f| m | (u8::from(c[f] > 0) << f));
            expected.push((doc, mask, t));
        }
        assert_eq!(list.len(), docs.len());
        assert_eq!(list.iter().collect::<Vec<_>>(), expected);
    }

    #[test]
    fn dense_single_counts_take_two_bytes_a_posting() {
        let mut list = PostingList::default();
        for doc in (0..10_000).step_by(3) {
            list.push(doc, tf([1, 0, 1, 0, 0, 0]));
        }
        assert_eq!(list.bytes.len(), 2 * list.len());
    }

    #[test]
    fn retain_keeps_order_and_counts() {
        let mut list = PostingList::default();
        for doc in [9, 3, 4, 100, 7] {
            list.push(doc, tf([0, doc % 5, 1, 0, 0, 0]));
        }
        list.retain(|doc| doc % 2 == 1);
        let docs: Vec<_> = list.iter().map(|(d, _, t)| (d, t.get(1))).collect();
        assert_eq!(docs, [(9, 4), (3, 3), (7, 2)]);
        assert_eq!(list.len(), 3);
        // Appending after a purge continues from the right base.
        list.push(2, tf([1, 0, 0, 0, 0, 0]));
        assert_eq!(list.iter().last().map(|(d, _, _)| d), Some(2));
    }
}
