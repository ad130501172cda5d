//! What memd has learned from use, as the scorers read it: per-(item, tag)
//! relevance (seed 001), applications and effectiveness (seed 003), and
//! pins. Never written back into the user's files. The transitions here are
//! pure; the daemon persists their results.

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

use crate::scoring::learning::update_effectiveness;
use crate::scoring::tag_relevance::{
    auto_pin_by_matches, auto_pin_by_relevance, auto_unpin, average_over_tags, TagScore,
};

/// A pin: by hand, or by one of seed 001's rules.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Pin {
    /// Pinned by a person: never auto-unpinned.
    pub manual: bool,
    /// The pin applies where the query has all these tags (the match-count
    /// rule pins for a tag subset); empty: everywhere.
    pub tags: Vec<String>,
}

/// One application of an item (seed 003's `ApplicationResult`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Application {
    pub task_id: Option<String>,
    /// Unix seconds.
    pub applied_at: i64,
    pub applied: bool,
    pub helpful: Option<bool>,
    pub effectiveness_score: Option<f64>,
    pub feedback: Option<String>,
}

/// Application record of one item (seed 003).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Applications {
    /// Times applied through `track`.
    pub times_applied: u32,
    /// Effectiveness EMA, once any score was given.
    pub effectiveness: Option<f64>,
    /// The most recent applications, newest last.
    pub history: Vec<Application>,
}

/// Applications kept per item.
pub const HISTORY_KEPT: usize = 50;

impl Applications {
    /// Records one application: `times_applied` counts it when applied, and
    /// a score (given, or 1.0 / 0.0 from helpful / not helpful) moves the
    /// effectiveness EMA (seed 003, alpha 0.3). The first score starts it.
    pub fn record(&mut self, application: Application) {
        if application.applied {
            self.times_applied += 1;
        }
        let score = application
            .effectiveness_score
            .or(application.helpful.map(|h| if h { 1.0 } else { 0.0 }));
        if let Some(score) = score {
            self.effectiveness = Some(match self.effectiveness {
                Some(current) => update_effectiveness(current, score),
                None => score,
            });
        }
        self.history.push(application);
        if self.history.len() > HISTORY_KEPT {
            self.history.remove(0);
        }
    }
}

/// What a judgement changed about pins.
#[derive(Debug, Clone, PartialEq)]
pub enum PinChange {
    Pinned,
    Unpinned,
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
    /// Times each item was shown for each tag set (sorted tags joined by
    /// `,`), for the match-count auto-pin.
    pub matches: HashMap<String, HashMap<String, u32>>,
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
        self.applications.get(item).cloned().unwrap_or_default()
    }

    /// Times `item` was applied through `track`.
    pub fn times_applied(&self, item: &str) -> u32 {
        if self.applications.is_empty() {
            return 0;
        }
        self.applications.get(item).map_or(0, |a| a.times_applied)
    }

    /// The learned effectiveness of `item`.
    pub fn effectiveness(&self, item: &str) -> Option<f64> {
        if self.applications.is_empty() {
            return None;
        }
        self.applications.get(item).and_then(|a| a.effectiveness)
    }

    /// Whether `item` is pinned for a query with `tags`.
    pub fn is_pinned(&self, item: &str, tags: &[String]) -> bool {
        if self.pins.is_empty() {
            return false;
        }
        self.pins
            .get(item)
            .is_some_and(|pin| pin.tags.iter().all(|t| tags.contains(t)))
    }

    /// `(avg, evals)` of `item` over `tags` (seed 001).
    pub fn average(&self, item: &str, tags: &[String]) -> (f64, u32) {
        let scores = self.tag_scores(item);
        average_over_tags(tags.iter().map(String::as_str), |tag| {
            scores.and_then(|s| s.get(tag).copied())
        })
    }

    /// Applies one judgement of `item` in a context with `tags`: `raw` in
    /// [-1, 1] with `weight` (1.0 evaluator, 2.0 direct feedback), to every
    /// tag. Then the tag-relevance auto-pin and auto-unpin rules run over
    /// the same tags. Returns the updated scores and any pin change.
    pub fn judge(
        &mut self,
        item: &str,
        tags: &[String],
        raw: f64,
        weight: f64,
    ) -> (Vec<(String, TagScore)>, Option<PinChange>) {
        let scores = self.tag_relevance.entry(item.to_string()).or_default();
        let mut updated = Vec::new();
        for tag in tags {
            let score = scores.entry(tag.clone()).or_default();
            *score = score.record(raw, weight);
            updated.push((tag.clone(), *score));
        }
        let (avg, evals) = self.average(item, tags);
        let change = match self.pins.get(item) {
            None if auto_pin_by_relevance(avg, evals) => {
                self.pins.insert(
                    item.to_string(),
                    Pin {
                        manual: false,
                        tags: Vec::new(),
                    },
                );
                Some(PinChange::Pinned)
            }
            Some(pin) if auto_unpin(avg, pin.manual) => {
                self.pins.remove(item);
                Some(PinChange::Unpinned)
            }
            _ => None,
        };
        (updated, change)
    }

    /// Counts one showing of `item` for a query with `tags`; at the seed's
    /// threshold the item is pinned for that tag subset. Returns the new
    /// count and whether it was pinned now.
    pub fn shown(&mut self, item: &str, tags: &[String]) -> (String, u32, bool) {
        let mut subset: Vec<String> = tags.to_vec();
        subset.sort();
        subset.dedup();
        let key = subset.join(",");
        let count = self
            .matches
            .entry(item.to_string())
            .or_default()
            .entry(key.clone())
            .or_default();
        *count += 1;
        let count = *count;
        let pin_now =
            auto_pin_by_matches(count) && !subset.is_empty() && !self.pins.contains_key(item);
        if pin_now {
            self.pins.insert(
                item.to_string(),
                Pin {
                    manual: false,
                    tags: subset,
                },
            );
        }
        (key, count, pin_now)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tags(t: &[&str]) -> Vec<String> {
        t.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn negative_evaluations_follow_the_seed() {
        let mut l = Learned::default();
        let (updated, _) = l.judge("L-1", &tags(&["python"]), -1.0, 1.0);
        assert!((updated[0].1.score + 0.3).abs() < 1e-9);
        let (updated, _) = l.judge("L-1", &tags(&["python"]), -1.0, 1.0);
        assert!((updated[0].1.score + 0.51).abs() < 1e-9);
        assert_eq!(updated[0].1.negative, 2);
    }

    #[test]
    fn relevance_pins_and_unpins_but_never_a_manual_pin() {
        let mut l = Learned::default();
        let t = tags(&["rust"]);
        let mut pinned_at = None;
        for i in 1..=8 {
            if let (_, Some(PinChange::Pinned)) = l.judge("L-2", &t, 1.0, 1.0) {
                pinned_at = Some(i);
            }
        }
        // 0.3, 0.51, 0.657, 0.76 (4 evals), 0.832 with 5 evals: pinned at 5.
        assert_eq!(pinned_at, Some(5));
        assert!(l.is_pinned("L-2", &t));
        let mut unpinned = false;
        for _ in 0..10 {
            if let (_, Some(PinChange::Unpinned)) = l.judge("L-2", &t, -1.0, 1.0) {
                unpinned = true;
                break;
            }
        }
        assert!(unpinned && !l.is_pinned("L-2", &t));
        l.pins.insert(
            "L-3".into(),
            Pin {
                manual: true,
                tags: vec![],
            },
        );
        for _ in 0..10 {
            l.judge("L-3", &t, -1.0, 2.0);
        }
        assert!(
            l.is_pinned("L-3", &t),
            "manual pins are never auto-unpinned"
        );
    }

    #[test]
    fn fifteen_matches_pin_for_the_tag_subset() {
        let mut l = Learned::default();
        let t = tags(&["rust", "cli"]);
        for i in 1..=14 {
            assert_eq!(l.shown("L-4", &t), ("cli,rust".to_string(), i, false));
        }
        assert_eq!(l.shown("L-4", &t), ("cli,rust".to_string(), 15, true));
        assert!(l.is_pinned("L-4", &tags(&["cli", "rust", "linux"])));
        assert!(!l.is_pinned("L-4", &tags(&["rust"])));
    }

    #[test]
    fn applications_feed_the_effectiveness_ema() {
        let mut a = Applications::default();
        let app = |helpful: Option<bool>, score: Option<f64>| Application {
            task_id: None,
            applied_at: 0,
            applied: true,
            helpful,
            effectiveness_score: score,
            feedback: None,
        };
        a.record(app(None, Some(0.5)));
        assert_eq!(a.effectiveness, Some(0.5));
        a.record(app(Some(true), None));
        assert!((a.effectiveness.unwrap() - 0.65).abs() < 1e-9);
        a.record(app(None, None));
        assert_eq!(a.times_applied, 3);
        assert!((a.effectiveness.unwrap() - 0.65).abs() < 1e-9);
    }
}
