//! What memd has learned from use, as the scorers read it: per-(item, tag)
//! relevance (seed 001), applications and effectiveness (seed 003), and
//! pins. Never written back into the user's files.

use std::collections::HashMap;

use crate::scoring::tag_relevance::TagScore;

/// A pin set by hand or by an auto-pin rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pin {
    /// Pinned by a person: never auto-unpinned.
    Manual,
    /// Pinned by a rule: unpinned when relevance drops.
    Auto,
}

/// Application record of one item (seed 003).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Applications {
    /// Times applied through `track`.
    pub times_applied: u32,
    /// Effectiveness EMA, when any score was given.
    pub effectiveness: Option<f64>,
}

/// Learned state, keyed by item id.
#[derive(Debug, Clone, Default)]
pub struct Learned {
    /// Relevance per item, then per tag.
    pub tag_relevance: HashMap<String, HashMap<String, TagScore>>,
    /// Applications per item.
    pub applications: HashMap<String, Applications>,
    /// Pins per item.
    pub pins: HashMap<String, Pin>,
}

impl Learned {
    /// The per-tag scores of `item`, if any were learned. Cheap when nothing
    /// has been learned at all (no hashing).
    pub fn tag_scores(&self, item: &str) -> Option<&HashMap<String, TagScore>> {
        if self.tag_relevance.is_empty() {
            return None;
        }
        self.tag_relevance.get(item)
    }

    /// The score of `item` for `tag`.
    pub fn tag_score(&self, item: &str, tag: &str) -> Option<TagScore> {
        self.tag_scores(item)?.get(tag).copied()
    }

    /// Recorded applications of `item`.
    pub fn applications(&self, item: &str) -> Applications {
        if self.applications.is_empty() {
            return Applications::default();
        }
        self.applications.get(item).copied().unwrap_or_default()
    }

    /// Whether `item` is pinned by learned state.
    pub fn is_pinned(&self, item: &str) -> bool {
        !self.pins.is_empty() && self.pins.contains_key(item)
    }
}
