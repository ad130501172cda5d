//! What memd has learned from use, as the scorers read it: per-(item, tag)
//! relevance (seed 001), applications and effectiveness (seed 003), and
//! pins. Never written back into the user's files. The transitions here are
//! pure; the daemon persists their results.
//!
//! Here: the state ([`Learned`]), the contexts it has seen and their
//! session clocks (how much each tag tells contexts apart), the judge's
//! noise as its records show it, and applying one verdict. Around it:
//!
//! - `keys`: the names an item's evidence is kept under: a tag, its
//!   weak-match evidence (`~tag`, [`Match`]), `!tag` where the item's own
//!   tag was absent, `*` everywhere, `@context` a context's own record;
//! - `assess`: what that evidence says about an item in one context
//!   ([`Assessment`]): which scope decides and what it decides;
//! - `pins`: seed 001's automatic pins (by relevance, by match count)
//!   and the unpin;
//! - `journal`: the verdicts in the order they were given
//!   ([`Judgement`]), and the scores replayed from them;
//! - `applications`: seed 003's record of each item's applications;
//! - `seen`: the workspace tags seen, as one query asks about them.

mod applications;
mod assess;
mod journal;
mod keys;
mod pins;
mod seen;

pub use applications::{Application, Applications, HISTORY_KEPT};
pub use assess::{Assessment, Context, Pooled};
pub use journal::{replay, Judgement};
pub use keys::{
    context_key, context_record, workspace_tag, Key, Match, ELSEWHERE, EVERYWHERE, WEAK_MATCH,
};
pub use pins::{Pin, PinChange};
pub use seen::SeenTags;

use keys::{is_context_record, WEAK_EVERYWHERE};

/// The maps of learned state: keyed by item ids and tags, hashed fast (FxHash;
/// ids and tags are not chosen by an adversary of the hash, and each query
/// looks up every candidate lesson).
pub type HashMap<K, V> = rustc_hash::FxHashMap<K, V>;

use super::noise::{Agreement, Noise};
use crate::learning::tag_relevance::{tag_weight, TagScore, CONTEXT_RECORD};

/// Whether an item's `scores` hold weak-match evidence: every judgement
/// since it was kept apart moves the weak-match record everywhere.
fn has_weak_evidence(scores: &HashMap<Key, TagScore>) -> bool {
    scores.contains_key(WEAK_EVERYWHERE)
}

/// The pairs of verdicts in an item's own records, one a context
/// ([`CONTEXT_RECORD`]), on showings that matched it well: a verdict on a
/// passing match also says whether the prompt was about it, which varies
/// from prompt to prompt where the judge does not err.
fn agreement_in(scores: &HashMap<Key, TagScore>) -> Agreement {
    let within = scores
        .iter()
        .filter(|(key, _)| key.starts_with(CONTEXT_RECORD))
        .fold(Agreement::default(), |sum, (_, s)| {
            sum.plus(Agreement::of_record(s))
        });
    within.across(
        scores
            .get(EVERYWHERE)
            .map(Agreement::of_record)
            .unwrap_or_default(),
    )
}

/// Learned state, keyed by item id.
#[derive(Debug, Clone, Default)]
pub struct Learned {
    /// Relevance per item, then per tag ([`Learned::tag_relevance`]).
    tag_relevance: HashMap<Key, HashMap<Key, TagScore>>,
    /// Applications per item.
    pub applications: HashMap<String, Applications>,
    /// Automatic pins per item, each for the tags it was earned on
    /// ([`Learned::pins`]).
    pins: HashMap<Key, Vec<Pin>>,
    /// The [`crate::scoring::lesson::spread_of`] of every item given tag
    /// scores or pins since the state was made: a superset of the items
    /// that have them now (an item keeps its spread when they go, which
    /// costs only the lookup it would have spared). A query passes over an
    /// item whose spread is not here without hashing its id: on 100,000
    /// lessons those lookups cost more than the rest of the query.
    known: rustc_hash::FxHashSet<u64>,
    /// Times each item was shown to a session in each context (a
    /// [`context_key`]), for the match-count auto-pin.
    pub matches: HashMap<String, HashMap<String, u32>>,
    /// Sessions seen per context ([`context_key`]).
    contexts: HashMap<String, u64>,
    /// Per tag: contexts that have it, and sessions seen with it (the tag's
    /// session clock). Derived from `contexts`.
    tag_stats: HashMap<String, (u32, u64)>,
    /// The teams of the projects that share their verdicts, by repository
    /// ([`super::team`]).
    pub teams: std::collections::BTreeMap<std::path::PathBuf, super::team::Team>,
    /// How often the judge's verdicts on one item in one context disagree,
    /// over every item's own records on prompts that matched it well, and
    /// the filter line that gives ([`Learned::recount_agreement`]):
    /// derived from `tag_relevance`, kept up to date by each committed
    /// [`super::Transaction`].
    noise: Noise,
}

/// The [`crate::scoring::lesson::spread_of`] of each of `ids`.
fn spreads<'a>(ids: impl Iterator<Item = &'a str>) -> rustc_hash::FxHashSet<u64> {
    ids.map(crate::scoring::lesson::spread_of).collect()
}

impl Learned {
    /// Relevance per item, then per tag.
    pub fn tag_relevance(&self) -> &HashMap<Key, HashMap<Key, TagScore>> {
        &self.tag_relevance
    }

    /// Automatic and manual pins per item, each for the tags it was made on.
    pub fn pins(&self) -> &HashMap<Key, Vec<Pin>> {
        &self.pins
    }

    /// `item`'s per-tag scores, made empty if it had none.
    pub fn scores_entry(&mut self, item: &str) -> &mut HashMap<Key, TagScore> {
        self.known.insert(crate::scoring::lesson::spread_of(item));
        self.tag_relevance.entry(Key::from(item)).or_default()
    }

    /// Sets `item`'s per-tag scores (`None`: it has none).
    pub fn set_scores(&mut self, item: &str, scores: Option<HashMap<Key, TagScore>>) {
        match scores {
            Some(scores) => {
                self.known.insert(crate::scoring::lesson::spread_of(item));
                self.tag_relevance.insert(Key::from(item), scores);
            }
            None => {
                self.tag_relevance.remove(item);
            }
        }
    }

    /// `item`'s pins, made empty if it had none; [`Learned::set_pins`]
    /// drops an empty list.
    pub fn pins_entry(&mut self, item: &str) -> &mut Vec<Pin> {
        self.known.insert(crate::scoring::lesson::spread_of(item));
        self.pins.entry(Key::from(item)).or_default()
    }

    /// Sets `item`'s pins (`None` or an empty list: it has none).
    pub fn set_pins(&mut self, item: &str, pins: Option<Vec<Pin>>) {
        match pins.filter(|p| !p.is_empty()) {
            Some(pins) => {
                self.known.insert(crate::scoring::lesson::spread_of(item));
                self.pins.insert(Key::from(item), pins);
            }
            None => {
                self.pins.remove(item);
            }
        }
    }

    /// Whether something may have been learned about the item whose
    /// [`crate::scoring::lesson::spread_of`] is `spread`: if not, nothing
    /// was, and [`Learned::learned_about`] need not hash its id.
    pub fn may_know(&self, spread: u64) -> bool {
        self.known.contains(&spread)
    }

    /// The per-tag scores of `item`, if any were learned. Cheap when nothing
    /// has been learned at all (no hashing).
    pub fn tag_scores(&self, item: &str) -> Option<&HashMap<Key, TagScore>> {
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

    /// Counts one session in the context of `tags`; returns the context's
    /// key and its session count, for the store.
    pub fn observe_session(&mut self, tags: &[String]) -> (String, u64) {
        let key = context_key(tags);
        let count = self.contexts.get(&key).copied().unwrap_or(0) + 1;
        self.set_context(key.clone(), count);
        (key, count)
    }

    /// Sets a context's session count (from the store, or a new session).
    pub fn set_context(&mut self, key: String, sessions: u64) {
        let before = self.contexts.insert(key.clone(), sessions);
        let added = sessions.saturating_sub(before.unwrap_or(0));
        for tag in key.split(',').filter(|t| !t.is_empty()) {
            let stats = self.tag_stats.entry(tag.to_string()).or_default();
            stats.0 += u32::from(before.is_none());
            stats.1 += added;
        }
    }

    /// The sessions seen in context `key`, if any.
    pub fn context_sessions(&self, key: &str) -> Option<u64> {
        self.contexts.get(key).copied()
    }

    /// Puts context `key`'s session count back to `before` (`None`: never
    /// seen), undoing [`Learned::set_context`] since.
    pub fn restore_context(&mut self, key: String, before: Option<u64>) {
        let Some(now) = self.contexts.get(&key).copied() else {
            return;
        };
        let removed = now.saturating_sub(before.unwrap_or(0));
        for tag in key.split(',').filter(|t| !t.is_empty()) {
            if let Some(stats) = self.tag_stats.get_mut(tag) {
                stats.0 -= u32::from(before.is_none());
                stats.1 = stats.1.saturating_sub(removed);
                if stats.0 == 0 {
                    self.tag_stats.remove(tag);
                }
            }
        }
        match before {
            Some(n) => self.contexts.insert(key, n),
            None => self.contexts.remove(&key),
        };
    }

    /// How much `tag` tells contexts apart ([`tag_weight`]).
    pub fn weight(&self, tag: &str) -> f64 {
        let df = self.tag_stats.get(tag).map_or(0, |s| s.0);
        tag_weight(df, self.contexts.len() as u32)
    }

    /// Whether some context has had `tag` (in any case): a workspace tag.
    pub fn seen_tag(&self, tag: &str) -> bool {
        if tag.chars().any(char::is_uppercase) {
            self.tag_stats.contains_key(&tag.to_lowercase())
        } else {
            self.tag_stats.contains_key(tag)
        }
    }

    /// The workspace tags seen so far, for the many look-ups of one query
    /// ([`SeenTags`]).
    pub fn seen_tags(&self) -> SeenTags<'_> {
        SeenTags::new(self.tag_stats.keys().map(String::as_str))
    }

    /// Sessions seen with `tag`.
    pub fn clock(&self, tag: &str) -> u64 {
        self.tag_stats.get(tag).map_or(0, |s| s.1)
    }

    /// The tags of `tags` that tell contexts apart; all of them when none
    /// does. Automatic pins are scoped to these.
    pub fn informative(&self, tags: &[String]) -> Vec<String> {
        let mut out: Vec<String> = tags
            .iter()
            .filter(|t| self.weight(t) > 0.0)
            .cloned()
            .collect();
        if out.is_empty() {
            out = tags.to_vec();
        }
        out.sort();
        out.dedup();
        out
    }

    /// Whether nothing was learned about any item (no tag scores, no
    /// automatic pins).
    pub fn nothing_at_all(&self) -> bool {
        self.tag_relevance.is_empty() && self.pins.is_empty()
    }

    /// Whether something was learned about `item` (tag scores or automatic
    /// pins): otherwise [`Learned::nothing_learned`] says all there is.
    /// Without hashing when nothing was learned at all.
    pub fn learned_about(&self, item: &str) -> bool {
        (!self.tag_relevance.is_empty() && self.tag_relevance.contains_key(item))
            || (!self.pins.is_empty() && self.pins.contains_key(item))
    }

    /// The tags whose evidence is read for every showing of `item` (with
    /// its `own` tags) in the context of `tags`: the context's, `!tag` for
    /// each of its own tags the context lacks ([`Learned::elsewhere`]), and
    /// [`EVERYWHERE`].
    fn context_tags(&self, own: &[String], tags: &[String]) -> Vec<String> {
        let mut out = tags.to_vec();
        out.extend(self.elsewhere(own, tags));
        out.push(EVERYWHERE.to_string());
        out.extend(context_record(tags));
        out
    }

    /// The tags a judgement of `item` (with its `own` tags) in the context
    /// of `tags` updates, shown on a match like `shown`: a strong one
    /// updates the context's tags, `!tag` for each of its own tags the
    /// context lacks ([`Learned::elsewhere`]) and `*` (its record
    /// everywhere), and their weak-match evidence (a verdict on a strong
    /// match speaks for weak ones too); a weak one only their weak-match
    /// evidence.
    pub fn judged_tags(&self, own: &[String], tags: &[String], shown: Match) -> Vec<String> {
        let plain = self.context_tags(own, tags);
        let weak = plain.iter().map(|t| Match::Weak.key(t).into_owned());
        match shown {
            Match::Strong => {
                let mut out = plain.clone();
                out.extend(weak);
                out
            }
            Match::Weak => weak.collect(),
        }
    }

    /// Counts one prompt `item` (with its `own` tags) matched but was held
    /// back from, filtered on its evidence in the context of `tags`: each
    /// of those tags' scores, and those of its evidence elsewhere, ages
    /// by one. Returns the scores changed, for the store.
    pub fn hold_back(
        &mut self,
        item: &str,
        own: &[String],
        tags: &[String],
    ) -> Vec<(String, TagScore)> {
        let aged = self.context_tags(own, tags);
        let Some(scores) = self.tag_relevance.get_mut(item) else {
            return Vec::new();
        };
        aged.iter()
            .filter_map(|tag| {
                let score = scores.get_mut(tag.as_str())?;
                *score = score.held_back();
                Some((tag.clone(), *score))
            })
            .collect()
    }

    /// Sessions seen in a context with all of `tags` (at most the fewest
    /// any of them saw).
    pub fn sessions_with(&self, tags: &[String]) -> u64 {
        tags.iter().map(|t| self.clock(t)).min().unwrap_or(0)
    }

    /// How often the judge's verdicts on one item in one context disagree
    /// ([`super::noise`]).
    pub fn agreement(&self) -> Agreement {
        self.noise.agreement()
    }

    /// The line seed 001's rule filters below: the seed's -0.1, lower
    /// once the judge is seen to be noisy ([`Agreement::filter_line`]).
    pub fn filter_line(&self) -> f64 {
        self.noise.filter_line()
    }

    /// The share of seed 001's boost a verdict adds: what the judge's
    /// noise leaves of it ([`super::noise::Agreement::boost_share`]).
    pub fn boost_share(&self) -> f64 {
        self.noise.boost_share()
    }

    /// Counts the judge's agreement over every item's records afresh (after
    /// the state is loaded).
    pub fn recount_agreement(&mut self) {
        self.noise = Noise::of(
            self.tag_relevance
                .values()
                .fold(Agreement::default(), |sum, scores| {
                    sum.plus(agreement_in(scores))
                }),
        );
    }

    /// Counts `item`'s records as they are now in place of what they were
    /// (`before`): a committed change to them.
    pub fn recount_item(&mut self, item: &str, before: Option<&HashMap<Key, TagScore>>) {
        let now = self
            .tag_relevance
            .get(item)
            .map(agreement_in)
            .unwrap_or_default();
        let was = before.map(agreement_in).unwrap_or_default();
        self.noise = Noise::of(self.noise.agreement().minus(was).plus(now));
    }

    /// Gives `item`, judged only before weak-match evidence was kept apart
    /// (it has scores, none of them weak-match evidence), weak-match
    /// evidence equal to its evidence for every showing: each of those
    /// verdicts counted for every showing. Returns the scores added, for
    /// the store; none once it has weak-match evidence.
    pub fn seed_weak(&mut self, item: &str) -> Vec<(String, TagScore)> {
        let Some(scores) = self.tag_relevance.get_mut(item) else {
            return Vec::new();
        };
        if has_weak_evidence(scores) {
            return Vec::new();
        }
        let seeded: Vec<(String, TagScore)> = scores
            .iter()
            .map(|(t, s)| (Match::Weak.key(t).into_owned(), *s))
            .collect();
        scores.extend(seeded.iter().map(|(t, s)| (Key::from(t.as_str()), *s)));
        seeded
    }

    /// Applies one judgement of `item` (with its `own` tags) in a context
    /// with `tags`, shown on a match like `shown`: `raw` in [-1, 1] with
    /// `weight` (1.0 evaluator, 2.0 direct feedback), once to each tag and
    /// to each of its own tags the context lacks ([`Learned::judged_tags`]);
    /// then the pin rules run ([`Learned::review_pins`]). An item judged
    /// only before weak-match evidence was kept apart gets it first
    /// ([`Learned::seed_weak`]). Returns the scores changed (judged or
    /// seeded) and any pin changes.
    pub fn judge(
        &mut self,
        item: &str,
        own: &[String],
        tags: &[String],
        shown: Match,
        raw: f64,
        weight: f64,
    ) -> (Vec<(String, TagScore)>, Vec<PinChange>) {
        let judged = self.judged_tags(own, tags, shown);
        let noise = self.noise;
        let seeded = self.seed_weak(item);
        let scores = self.scores_entry(item);
        let mut updated: Vec<(String, TagScore)> = seeded
            .into_iter()
            .filter(|(t, _)| !judged.contains(t))
            .collect();
        for tag in &judged {
            let score = scores.entry(Key::from(tag.as_str())).or_default();
            *score = apply(*score, tag, raw, weight, &noise);
            updated.push((tag.clone(), *score));
        }
        let changes = self.review_pins(item, tags);
        (updated, changes)
    }
}

/// One verdict (`raw` with `weight`) on the score an item keeps under
/// `key`, read with the judge's `noise`: the filter line in use, and
/// whether the early rule filters the record it names
/// ([`TagScore::record_at`]). What a judgement and its replay from the
/// journal both apply.
fn apply(score: TagScore, key: &str, raw: f64, weight: f64, noise: &Noise) -> TagScore {
    let early = noise.early_filters() && is_context_record(key);
    score.record_at(raw, weight, noise.filter_line(), early)
}

#[cfg(test)]
mod tests;
