//! Seed 001's automatic pins: by relevance (an average above 0.6 over
//! five judged sessions), by match count (shown fifteen times, in memd
//! only with positive evidence), and the unpin below 0.2; each scoped to
//! the tags that tell its context apart.

use serde::{Deserialize, Serialize};

use super::{context_key, spreads, Learned};
use crate::learning::tag_relevance::{auto_pin_by_matches, auto_pin_by_relevance, auto_unpin};

/// A pin: by hand, or by one of seed 001's rules.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Pin {
    /// Pinned by a person: never auto-unpinned.
    pub manual: bool,
    /// The pin applies where the query has all these tags: the informative
    /// tags of the context it was earned in. Empty: everywhere (only a
    /// manual pin).
    pub tags: Vec<String>,
}

/// What a judgement changed about pins.
#[derive(Debug, Clone, PartialEq)]
pub enum PinChange {
    /// Pinned for these tags.
    Pinned(Vec<String>),
    /// Unpinned for these tags.
    Unpinned(Vec<String>),
}

impl Learned {
    /// The [`crate::scoring::lesson::spread_of`] of every item with an
    /// automatic pin, for a session start to pass over the others without
    /// looking them up.
    pub fn pinned_spreads(&self) -> rustc_hash::FxHashSet<u64> {
        spreads(self.pins.keys().map(|id| id.as_str()))
    }

    /// The automatic pins of `item`.
    pub fn pins_of(&self, item: &str) -> &[Pin] {
        if self.pins.is_empty() {
            return &[];
        }
        self.pins.get(item).map_or(&[], Vec::as_slice)
    }

    /// Whether `item` is pinned for a query with `tags`: one of its pins'
    /// tags are all among them.
    pub fn is_pinned(&self, item: &str, tags: &[String]) -> bool {
        self.pins_of(item)
            .iter()
            .any(|pin| pin.tags.iter().all(|t| tags.contains(t)))
    }

    fn add_pin(&mut self, item: &str, tags: Vec<String>) {
        self.pins_entry(item).push(Pin {
            manual: false,
            tags,
        });
    }

    /// The pin rules after `item`'s evidence changed in a context with
    /// `tags`: each automatic pin whose tags are all here is dropped when
    /// its average falls below 0.2 (and its match counts start over, so an
    /// unpin holds until new evidence says otherwise); the tag-relevance
    /// rule pins for this context's informative tags.
    pub fn review_pins(&mut self, item: &str, tags: &[String]) -> Vec<PinChange> {
        let mut changes = Vec::new();
        let here: Vec<Pin> = self
            .pins_of(item)
            .iter()
            .filter(|p| p.tags.iter().all(|t| tags.contains(t)))
            .cloned()
            .collect();
        for pin in here {
            if auto_unpin(self.evidence(item, &pin.tags).avg, pin.manual) {
                if let Some(pins) = self.pins.get_mut(item) {
                    pins.retain(|p| p != &pin);
                    if pins.is_empty() {
                        self.pins.remove(item);
                    }
                }
                if let Some(counts) = self.matches.get_mut(item) {
                    for (key, count) in counts.iter_mut() {
                        let context: Vec<&str> = key.split(',').collect();
                        if pin.tags.iter().all(|t| context.contains(&t.as_str())) {
                            *count = 0;
                        }
                    }
                }
                changes.push(PinChange::Unpinned(pin.tags));
            }
        }
        let scope = self.informative(tags);
        if !scope.is_empty()
            && !self.is_pinned(item, &scope)
            && auto_pin_by_relevance(self.evidence(item, &scope), self.sessions_with(&scope))
        {
            self.add_pin(item, scope.clone());
            changes.push(PinChange::Pinned(scope));
        }
        changes
    }

    /// Counts one showing of `item` to a session in the context of `tags`;
    /// at the seed's threshold, and only with positive evidence there, the
    /// item is pinned for the context's informative tags. Returns the
    /// context's key, the new count and the pin made now, if any.
    pub fn shown(&mut self, item: &str, tags: &[String]) -> (String, u32, Option<Vec<String>>) {
        let key = context_key(tags);
        let count = self
            .matches
            .entry(item.to_string())
            .or_default()
            .entry(key.clone())
            .or_default();
        *count = count.saturating_add(1);
        let count = *count;
        let scope = self.informative(tags);
        let pin_now = !scope.is_empty()
            && !self.is_pinned(item, tags)
            && auto_pin_by_matches(
                count,
                self.evidence(item, &scope),
                self.sessions_with(&scope),
            );
        if pin_now {
            self.add_pin(item, scope.clone());
        }
        (key, count, pin_now.then_some(scope))
    }
}
