//! The workspace tags memd has seen, as one query asks about them.

/// The workspace tags memd has seen, as one query asks about them for
/// every word of every candidate lesson ([`Learned::seen_tag`](super::Learned::seen_tag) in any
/// case): a fast hash set of the tags (lower case, as they are kept) and
/// the lengths they come in, so most words are answered without hashing.
pub struct SeenTags<'a> {
    tags: rustc_hash::FxHashSet<&'a str>,
    /// The ASCII ones' [`crate::scoring::lesson::tag_hash`]es.
    hashes: rustc_hash::FxHashSet<u64>,
    /// Bit `n` set when some tag has `n` bytes (`n` < 64); longer tags set
    /// bit 63.
    lengths: u64,
    /// The [`crate::scoring::lesson::hash_bit`]s of `hashes`, four
    /// hashes' bits a word (so a few dozen tags leave most bits clear).
    hash_bits: [u64; 4],
}

impl<'a> SeenTags<'a> {
    /// The set of `tags` (each lower case).
    pub fn new(tags: impl IntoIterator<Item = &'a str>) -> Self {
        let mut lengths = 0u64;
        let tags: rustc_hash::FxHashSet<&str> = tags
            .into_iter()
            .inspect(|t| lengths |= 1 << t.len().min(63))
            .collect();
        // A tag kept with an upper-case letter matches no word (`seen_tag`
        // looks a word up as it is or in lower case).
        let hashes: rustc_hash::FxHashSet<u64> = tags
            .iter()
            .filter(|t| t.is_ascii() && !t.bytes().any(|b| b.is_ascii_uppercase()))
            .map(|t| crate::scoring::lesson::tag_hash(t))
            .collect();
        let mut hash_bits = [0u64; 4];
        for &hash in &hashes {
            let (word, bit) = Self::hash_bit(hash);
            hash_bits[word] |= bit;
        }
        SeenTags {
            tags,
            hashes,
            lengths,
            hash_bits,
        }
    }

    /// Those of `words` (an item's `Item::stack_words`) that name a
    /// workspace seen, lower case, each once: of an item's own tags, all
    /// that its evidence elsewhere ([`Learned::elsewhere`](super::Learned::elsewhere)) can read,
    /// without lower-casing the rest of a lesson's text.
    pub fn among<'w>(&self, words: impl IntoIterator<Item = &'w str>) -> Vec<String> {
        let mut out: Vec<String> = words
            .into_iter()
            .filter(|w| self.contains(w))
            .map(str::to_lowercase)
            .collect();
        out.sort();
        out.dedup();
        out
    }

    /// Whether the ASCII tag whose [`crate::scoring::lesson::tag_hash`] is
    /// `hash` is one of the tags.
    pub fn contains_hash(&self, hash: u64) -> bool {
        let (word, bit) = Self::hash_bit(hash);
        self.hash_bits[word] & bit != 0 && self.hashes.contains(&hash)
    }

    /// Where `hash` has its bit in [`SeenTags::hash_bits`]: its word, and
    /// the bit of it (another six bits of the hash than the one
    /// [`crate::scoring::lesson::hash_bit`] reads).
    fn hash_bit(hash: u64) -> (usize, u64) {
        (
            (hash >> 56) as usize & 3,
            crate::scoring::lesson::hash_bit(hash << 8),
        )
    }

    /// Whether `word` (in any case) is one of the tags.
    pub fn contains(&self, word: &str) -> bool {
        if !word.is_ascii() {
            // As `seen_tag`: lower-cased only when it has an upper-case
            // letter (lower case may change its length).
            return if word.chars().any(char::is_uppercase) {
                self.tags.contains(word.to_lowercase().as_str())
            } else {
                self.tags.contains(word)
            };
        }
        if self.lengths & (1 << word.len().min(63)) == 0 {
            return false;
        }
        if !word.bytes().any(|b| b.is_ascii_uppercase()) {
            return self.tags.contains(word);
        }
        if word.len() <= 64 {
            let mut buf = [0u8; 64];
            let lower = &mut buf[..word.len()];
            lower.copy_from_slice(word.as_bytes());
            lower.make_ascii_lowercase();
            // ASCII in, ASCII out.
            return std::str::from_utf8(lower).is_ok_and(|w| self.tags.contains(w));
        }
        self.tags.contains(word.to_lowercase().as_str())
    }
}
