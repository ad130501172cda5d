//! What scoring needs of an item, computed once when it goes live and kept
//! inline in the engine's slot table, so that a query scans contiguous
//! memory and dereferences an item only when it may be selected.
//!
//! Sets of keywords are kept as 64-bit Bloom masks: a miss proves absence,
//! a hit is confirmed against the item itself by the exact policy. The
//! masks therefore only ever skip work, never change a score.

use std::hash::{DefaultHasher, Hash, Hasher};

use crate::knowledge::item::{normalize_role, Confidence, ObservationType};
use crate::knowledge::{Body, Item};
use crate::text::tokenize::terms;
use crate::text::TextIndex;

/// A stable, non-zero 64-bit hash of a normalised keyword (0 stands for
/// "none" in the compact features).
pub(crate) fn hash(text: &str) -> u64 {
    let mut h = DefaultHasher::new();
    text.hash(&mut h);
    h.finish().max(1)
}

/// The Bloom bit of a keyword.
pub(crate) fn bit(text: &str) -> u64 {
    1 << (hash(text) % 64)
}

/// The Bloom mask of a set of keywords.
pub(crate) fn mask<'a>(texts: impl IntoIterator<Item = &'a String>) -> u64 {
    texts.into_iter().fold(0, |m, t| m | bit(t))
}

/// A lesson's own tags as a query compares them: their
/// [`crate::scoring::lesson::tag_hash`]es, kept in place (a query reads
/// them for every lesson that shares a word with the prompt, so no pointer
/// to follow), or none: read the lesson's tags or text as written.
#[derive(Debug, Clone, Copy)]
pub(crate) struct TagHashes {
    hashes: [u64; TagHashes::MAX],
    /// How many; [`TagHashes::AS_WRITTEN`] for none.
    len: u8,
}

impl TagHashes {
    /// At most this many tags are kept hashed.
    pub(crate) const MAX: usize = 4;
    const AS_WRITTEN: u8 = u8::MAX;

    /// The hashes of `given` (a lesson's own tags, trimmed, none empty)
    /// when there are some, at most [`TagHashes::MAX`], all ASCII.
    fn of(given: &[&str]) -> TagHashes {
        let mut out = TagHashes {
            hashes: [0; TagHashes::MAX],
            len: TagHashes::AS_WRITTEN,
        };
        if !given.is_empty() && given.len() <= TagHashes::MAX && given.iter().all(|t| t.is_ascii())
        {
            for (slot, tag) in out.hashes.iter_mut().zip(given) {
                *slot = crate::scoring::lesson::tag_hash(tag);
            }
            out.len = given.len() as u8;
        }
        out
    }

    /// The hashes, or `None` when the tags are read as written.
    pub(crate) fn get(&self) -> Option<&[u64]> {
        (self.len != TagHashes::AS_WRITTEN).then(|| &self.hashes[..usize::from(self.len)])
    }
}

/// A pattern's rubric inputs.
pub(crate) struct PatternFeatures {
    /// `learned_from.product` and `applies_to`.
    pub products: u64,
    /// `stack` and `tags`.
    pub tags: u64,
    /// `roles`.
    pub roles: u64,
    /// `adjacent_roles`.
    pub adjacent: u64,
    /// `category` (0 when none).
    pub category: u64,
    pub confidence: Option<Confidence>,
    pub times_applied: u32,
    pub learned_on: Option<i64>,
}

/// A learning's term sets (sorted term ids), in one allocation.
pub(crate) struct LearningTerms {
    pub keywords: Vec<u32>,
    pub context: Vec<u32>,
    pub error_type: Vec<u32>,
}

/// Per-kind features.
pub(crate) enum Features {
    /// Nothing beyond the text index (anti-patterns, experience, exemplars,
    /// seeds).
    None,
    /// A pattern (seed 000).
    Pattern(Box<PatternFeatures>),
    /// A gotcha: its category's hash (0: none), and whether it is a single
    /// word (matched by hash; other categories are checked in full).
    Gotcha { category: u64, single_word: bool },
    /// A lesson, as a query reads it without its text: pinned in its
    /// file; held by structural prerequisites (os, repos, paths, MCP
    /// servers); its id's spread over sessions
    /// ([`crate::scoring::lesson::spread_of`]); its own tags'
    /// [`crate::scoring::lesson::tag_hash`]es when it was given tags, all
    /// ASCII and at most [`TagHashes::MAX`] (otherwise its tags or text
    /// are read as written).
    Lesson {
        pinned: bool,
        gated: bool,
        spread: u64,
        tags: TagHashes,
    },
    /// A learning's term sets for seed 003.
    Learning(Box<LearningTerms>),
    /// An observation's scoring inputs (seed 002).
    Observation {
        created_at: i64,
        kind: ObservationType,
        /// Hash of the normalised agent (0: none).
        agent: u64,
    },
}

impl Features {
    /// The features of `item`, whose text is already in `index`.
    pub(crate) fn of(item: &Item, index: &TextIndex) -> Features {
        match &item.body {
            Body::Pattern(p) => Features::Pattern(Box::new(PatternFeatures {
                products: mask(p.learned_from.product.iter().chain(&p.applies_to)),
                tags: mask(p.stack.iter().chain(&item.tags)),
                roles: mask(&p.roles),
                adjacent: mask(&p.adjacent_roles),
                category: p.category.as_deref().map_or(0, bit),
                confidence: p.confidence,
                times_applied: p.times_applied,
                learned_on: p.learned_from.date,
            })),
            Body::Gotcha(g) => Features::Gotcha {
                category: g.category.as_deref().map_or(0, hash),
                single_word: g
                    .category
                    .as_deref()
                    .is_some_and(|c| c.chars().all(char::is_alphanumeric)),
            },
            Body::Lesson(l) => {
                let pre = &l.prerequisites;
                let given: Vec<&str> = item
                    .tags
                    .iter()
                    .chain(&pre.tags)
                    .map(|t| t.trim())
                    .filter(|t| !t.is_empty())
                    .collect();
                Features::Lesson {
                    pinned: l.pinned,
                    gated: !(pre.os.is_empty()
                        && pre.repos.is_empty()
                        && pre.paths.is_empty()
                        && pre.mcp_servers.is_empty()),
                    spread: crate::scoring::lesson::spread_of(&item.id),
                    tags: TagHashes::of(&given),
                }
            }
            Body::Learning(l) => Features::Learning(Box::new(LearningTerms {
                keywords: term_ids(index, &l.keywords.join(" ")),
                context: term_ids(index, l.context.as_deref().unwrap_or("")),
                error_type: term_ids(index, l.error_type.as_deref().unwrap_or("")),
            })),
            Body::Observation(o) => Features::Observation {
                created_at: o.created_at,
                kind: o.kind,
                agent: o
                    .agent_type
                    .as_deref()
                    .map_or(0, |a| hash(&normalize_role(a))),
            },
            _ => Features::None,
        }
    }
}

/// The sorted, distinct ids of the terms of `text` (the rarest
/// [`crate::text::bm25::MAX_QUERY_TERMS`] when there are more); a term the
/// index has never seen gets an id from the top of the range, distinct per
/// term (as many at most), so it counts in set sizes but matches nothing.
pub(crate) fn term_ids(index: &TextIndex, text: &str) -> Vec<u32> {
    let mut ids: Vec<u32> = Vec::new();
    let mut unknown = rustc_hash::FxHashSet::default();
    for term in terms(text) {
        match index.term_id(&term) {
            Some(id) => ids.push(id),
            None => {
                unknown.insert(term);
            }
        }
    }
    ids.sort_unstable();
    ids.dedup();
    index.rarest(&mut ids);
    let unknown = unknown.len().min(crate::text::bm25::MAX_QUERY_TERMS) as u32;
    ids.extend((0..unknown).map(|i| u32::MAX - i));
    ids.sort_unstable();
    ids
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn masks_never_miss_a_member() {
        let set = vec!["fastify".to_string(), "postgres".to_string()];
        let m = mask(&set);
        assert_ne!(m & bit("fastify"), 0);
        assert_ne!(m & bit("postgres"), 0);
        assert_eq!(mask(&[]), 0);
        assert_eq!(hash("x"), hash("x"));
    }
}

#[cfg(test)]
mod tag_hash_tests {
    use super::TagHashes;
    use crate::scoring::lesson::tag_hash;

    #[test]
    fn a_few_ascii_tags_are_kept_hashed_others_are_read_as_written() {
        let three = TagHashes::of(&["react", "Billing", "go"]);
        assert_eq!(
            three.get(),
            Some(&[tag_hash("react"), tag_hash("billing"), tag_hash("go")][..])
        );
        assert_eq!(TagHashes::of(&[]).get(), None, "untagged: its text");
        assert_eq!(TagHashes::of(&["a", "b", "c", "d", "e"]).get(), None);
        assert_eq!(TagHashes::of(&["straße"]).get(), None);
    }
}
