//! The verdicts on an item in the order they were given, which the state
//! can be replayed from: a session judged again (`memctl evaluate
//! --force`) replaces its verdicts instead of adding to them.

use serde::{Deserialize, Serialize};

use super::{apply, HashMap, Key, Learned, Match, PinChange, WEAK_MATCH};
use crate::learning::noise::Noise;
use crate::learning::tag_relevance::TagScore;

/// One judgement as it was applied to an item's scores. The store keeps
/// them in order (its journal), so a session judged again (`memctl
/// evaluate --force`) replaces its verdicts instead of adding to them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Judgement {
    /// The session judged; `None` for direct feedback.
    pub session: Option<String>,
    /// The tags it updated: the context's, `!tag` for the item's own tags
    /// the context lacked, and `*`; for a verdict on a weak match, their
    /// weak-match evidence (`~tag`) instead, and on any other, both. One
    /// recorded before weak-match evidence was kept apart has no `~tag`
    /// ([`replay`] reads it as both).
    pub tags: Vec<String>,
    pub raw: f64,
    pub weight: f64,
}

/// How close a replayed score must be to the stored one to count as the
/// same (both are sums of the same terms; only rounding may differ).
const REPLAY_TOLERANCE: f64 = 1e-9;

/// The scores a run of judgements gives, from nothing, with the judge's
/// `noise` as it is now (the filter line, [`Learned::filter_line`], and
/// whether a context's own record filters early,
/// [`Noise::early_filters`]). A judgement made before weak-match evidence
/// was kept apart (none of its tags is one) counted for every showing: it
/// moves each tag's weak-match evidence too, as [`Learned::seed_weak`] has
/// it.
pub fn replay(journal: &[Judgement], noise: &Noise) -> HashMap<Key, TagScore> {
    let mut scores: HashMap<Key, TagScore> = HashMap::default();
    for judgement in journal {
        let before_weak = !judgement.tags.iter().any(|t| t.starts_with(WEAK_MATCH));
        let weak = judgement
            .tags
            .iter()
            .filter(|_| before_weak)
            .map(|t| Match::Weak.key(t).into_owned());
        for tag in judgement.tags.iter().cloned().chain(weak) {
            let score = scores.entry(Key::from(tag.as_str())).or_default();
            *score = apply(*score, &tag, judgement.raw, judgement.weight, noise);
        }
    }
    scores
}

impl Learned {
    /// Whether `journal`, replayed, gives `item`'s scores as they are:
    /// every judgement that made them is in it.
    pub fn replays_to_current(&self, item: &str, journal: &[Judgement]) -> bool {
        let replayed = replay(journal, &self.noise);
        let current = self.tag_scores(item);
        let same = |a: &TagScore, b: &TagScore| {
            (a.score - b.score).abs() < REPLAY_TOLERANCE
                && a.positive == b.positive
                && a.negative == b.negative
        };
        match current {
            None => replayed.is_empty(),
            Some(current) => {
                current.len() == replayed.len()
                    && current
                        .iter()
                        .all(|(tag, s)| replayed.get(tag).is_some_and(|r| same(r, s)))
            }
        }
    }

    /// Sets `item`'s scores to what `journal` replays to (each tag keeps
    /// the prompts it was held back from), then runs the pin rules for the
    /// context of `tags`. Returns each tag's new score (`None`: no
    /// judgement touches it any more) and any pin changes.
    pub fn rejudge(
        &mut self,
        item: &str,
        journal: &[Judgement],
        tags: &[String],
    ) -> (Vec<(String, Option<TagScore>)>, Vec<PinChange>) {
        let before = self.tag_relevance.remove(item).unwrap_or_default();
        let mut after = replay(journal, &self.noise);
        for (tag, score) in after.iter_mut() {
            score.held = before.get(tag).map_or(0, |b| b.held);
        }
        let mut updated: Vec<(String, Option<TagScore>)> = before
            .keys()
            .filter(|t| !after.contains_key(*t))
            .map(|t| (t.to_string(), None))
            .collect();
        updated.extend(after.iter().map(|(t, s)| (t.to_string(), Some(*s))));
        if !after.is_empty() {
            self.set_scores(item, Some(after));
        }
        let changes = self.review_pins(item, tags);
        (updated, changes)
    }
}
