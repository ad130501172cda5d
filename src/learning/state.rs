//! What memd has learned from use, as the scorers read it: per-(item, tag)
//! relevance (seed 001), applications and effectiveness (seed 003), and
//! pins. Never written back into the user's files. The transitions here are
//! pure; the daemon persists their results.

use std::borrow::Cow;
/// The maps of learned state: keyed by item ids and tags, hashed fast (FxHash;
/// ids and tags are not chosen by an adversary of the hash, and each query
/// looks up every candidate lesson).
pub type HashMap<K, V> = rustc_hash::FxHashMap<K, V>;

use serde::{Deserialize, Serialize};

use super::noise::{Agreement, Noise, MIN_OWN_SHARE};
use crate::learning::tag_relevance::{
    auto_pin_by_matches, auto_pin_by_relevance, auto_unpin, evidence, tag_weight, verdict_at,
    verdict_scoped, Evidence, Scope, TagEvidence, TagScore, TagVerdict, CONTEXT_RECORD,
    MIN_CONTEXTS_FOR_EVERYWHERE, MIN_EVALS_EARLY, MIN_EVALS_FOR_FILTER,
};
use crate::scoring::learning::update_effectiveness;

/// How well an item matched the prompt it was shown on, which decides the
/// showings a verdict on it speaks for (memd, not the seed). A lesson shown
/// on a prompt it matches only in passing (another topic that shares a
/// word) is rightly judged irrelevant there; counted against it across its
/// context, that verdict held it back from the prompts of its own topic
/// too. Measured (the learning bench, sixteen seeds): see BENCHMARKS.md.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Match {
    /// A prompt it matched well (a task band of
    /// `lesson::PROBATION_MIN_TASK_POINTS` or more), or no prompt at all
    /// (session start; direct feedback given with its tags): the verdict
    /// counts for every showing, as the seed counts it.
    Strong,
    /// A prompt it matched only in passing (a lower task band): the verdict
    /// counts only for showings like it, in the item's weak-match evidence
    /// (each tag as [`WEAK_MATCH`]`tag`).
    Weak,
}

/// The prefix of a tag's weak-match evidence ([`Match::Weak`]): `~python`.
/// No workspace tag starts with it ([`workspace_tag`]).
pub const WEAK_MATCH: &str = "~";

/// The prefix of an item's evidence where one of its own tags was absent
/// ([`Learned::elsewhere`]): `!go`.
pub const ELSEWHERE: &str = "!";

/// A query's or feedback's tag as memd learns under it: trimmed, lower
/// case; `None` for an empty one and for the names memd gives evidence of
/// its own (`*`, `!tag`, `~tag`, `@context`), so no tag a workspace reports can read
/// or write them.
pub fn workspace_tag(tag: &str) -> Option<String> {
    let tag = tag.trim();
    let reserved = tag.is_empty()
        || tag == EVERYWHERE
        || tag.starts_with(ELSEWHERE)
        || tag.starts_with(WEAK_MATCH)
        || tag.starts_with(CONTEXT_RECORD);
    (!reserved).then(|| tag.to_lowercase())
}

impl Match {
    /// How a showing at task `band` matched (0: no prompt).
    pub fn of_band(band: u8) -> Match {
        if band > 0 && band < crate::scoring::lesson::PROBATION_MIN_TASK_POINTS {
            Match::Weak
        } else {
            Match::Strong
        }
    }

    /// How `id` was shown, given the ids shown on a `weak` match.
    pub fn among(weak: &[String], id: &str) -> Match {
        if weak.iter().any(|w| w == id) {
            Match::Weak
        } else {
            Match::Strong
        }
    }

    /// The name `tag`'s evidence has for showings like this one.
    pub fn key(self, tag: &str) -> Cow<'_, str> {
        match self {
            Match::Strong => Cow::Borrowed(tag),
            Match::Weak => Cow::Owned(format!("{WEAK_MATCH}{tag}")),
        }
    }

    /// `tag`'s score in `scores` as showings like this one have it. The
    /// weak-match name is written into one buffer a thread, so a lookup
    /// allocates nothing (a query reads thousands).
    fn score_in<'s>(
        self,
        scores: &'s HashMap<String, TagScore>,
        tag: &str,
    ) -> Option<&'s TagScore> {
        thread_local! {
            static KEY: std::cell::RefCell<String> = const { std::cell::RefCell::new(String::new()) };
        }
        match self {
            Match::Strong => scores.get(tag),
            Match::Weak => KEY.with_borrow_mut(|key| {
                key.clear();
                key.push_str(WEAK_MATCH);
                key.push_str(tag);
                scores.get(key.as_str())
            }),
        }
    }
}

/// Whether an item's `scores` hold weak-match evidence: every judgement
/// since it was kept apart moves the weak-match record everywhere.
fn has_weak_evidence(scores: &HashMap<String, TagScore>) -> bool {
    scores.contains_key(WEAK_EVERYWHERE)
}

/// The pairs of verdicts in an item's own records, one a context
/// ([`CONTEXT_RECORD`]), on showings that matched it well: a verdict on a
/// passing match also says whether the prompt was about it, which varies
/// from prompt to prompt where the judge does not err.
fn agreement_in(scores: &HashMap<String, TagScore>) -> Agreement {
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
    /// Pinned for these tags.
    Pinned(Vec<String>),
    /// Unpinned for these tags.
    Unpinned(Vec<String>),
}

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

/// The scores a run of judgements gives, from nothing, with the filter
/// `line` in use ([`Learned::filter_line`]). A judgement made
/// before weak-match evidence was kept apart (none of its tags is one) counted
/// for every showing: it moves each tag's weak-match evidence too, as
/// [`Learned::seed_weak`] has it.
pub fn replay(journal: &[Judgement], line: f64) -> HashMap<String, TagScore> {
    let mut scores: HashMap<String, TagScore> = HashMap::default();
    for judgement in journal {
        let before_weak = !judgement.tags.iter().any(|t| t.starts_with(WEAK_MATCH));
        let weak = judgement
            .tags
            .iter()
            .filter(|_| before_weak)
            .map(|t| Match::Weak.key(t).into_owned());
        for tag in judgement.tags.iter().cloned().chain(weak) {
            let score = scores.entry(tag).or_default();
            *score = score.record_at(judgement.raw, judgement.weight, line);
        }
    }
    scores
}

/// The key of an item's own record in the context of `tags`
/// ([`CONTEXT_RECORD`] and the [`context_key`]); none without tags.
pub fn context_record(tags: &[String]) -> Option<String> {
    (!tags.is_empty()).then(|| format!("{CONTEXT_RECORD}{}", context_key(tags)))
}

/// A context: its sorted, distinct tags joined by `,`.
pub fn context_key(tags: &[String]) -> String {
    let mut sorted: Vec<&str> = tags.iter().map(String::as_str).collect();
    sorted.sort_unstable();
    sorted.dedup();
    sorted.join(",")
}

/// Learned state, keyed by item id.
#[derive(Debug, Clone, Default)]
pub struct Learned {
    /// Relevance per item, then per tag ([`Learned::tag_relevance`]).
    tag_relevance: HashMap<String, HashMap<String, TagScore>>,
    /// Applications per item.
    pub applications: HashMap<String, Applications>,
    /// Automatic pins per item, each for the tags it was earned on
    /// ([`Learned::pins`]).
    pins: HashMap<String, Vec<Pin>>,
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

/// [`evidence`] over `tags` from an item's per-tag `scores` as showings
/// like `read` have them ([`Match::key`]), each tag weighing `weight(tag)`.
fn evidence_over<'a>(
    scores: Option<&HashMap<String, TagScore>>,
    tags: impl IntoIterator<Item = &'a str>,
    read: Match,
    weight: impl Fn(&str) -> f64,
) -> Evidence {
    evidence(tags.into_iter().map(|tag| TagEvidence {
        weight: weight(tag),
        score: scores.and_then(|s| read.score_in(s, tag).copied()),
    }))
}

/// The [`crate::scoring::lesson::spread_of`] of each of `ids`.
fn spreads<'a>(ids: impl Iterator<Item = &'a String>) -> rustc_hash::FxHashSet<u64> {
    ids.map(|id| crate::scoring::lesson::spread_of(id))
        .collect()
}

/// A context as [`Learned::assess_in`] reads it for every item a query
/// assesses: its tags, each one's [`tag_weight`], and the key of its own
/// record ([`context_record`]).
pub struct Context<'c> {
    tags: &'c [String],
    weights: Vec<f64>,
    record: Option<&'c str>,
}

/// What was learned about an item in one context, and what it decides.
#[derive(Debug, Clone, PartialEq)]
pub struct Assessment {
    /// Over the context's tags.
    pub here: Evidence,
    /// Elsewhere ([`Learned::elsewhere`]): where its own tags were absent.
    pub elsewhere: Evidence,
    /// Those tags, as `!tag` (none when it has no evidence where any of
    /// its own tags was absent).
    pub elsewhere_tags: Vec<String>,
    /// Its record in every context ([`EVERYWHERE`]), where that record
    /// decided (judged irrelevant in enough contexts to count), or its
    /// verdicts in every context did ([`Scope::Pooled`]).
    pub everywhere: Option<Evidence>,
    /// Filtered, on probation, or kept with a boost.
    pub verdict: TagVerdict,
    /// The evidence that decided it.
    pub decided: Scope,
    /// The showings the evidence read was earned on: weak-match evidence
    /// for a weak match, once the item has any ([`Match::Weak`]).
    pub read: Match,
    /// memd: the item was never judged in this context (a tag of it has no
    /// evidence), so what its tags hold was earned elsewhere, through the
    /// tags this context shares with others (a language, a framework): it
    /// orders here but does not filter ([`Learned::assess`]).
    pub borrowed: bool,
    /// What the team's files say about it, where the project shares its
    /// verdicts ([`Assessment::with_team`]).
    pub team: Option<std::sync::Arc<super::team::TeamEvidence>>,
    /// Its own record in this context ([`CONTEXT_RECORD`]), once it has
    /// [`MIN_EVALS_FOR_FILTER`] judged sessions, or [`MIN_EVALS_EARLY`]
    /// that speak against it ([`Evidence::early`]): what decides here in
    /// place of the average over the context's tags ([`Scope::Context`]).
    pub record: Option<Evidence>,
    /// memd: on a prompt that matches it well, where what decides keeps
    /// it, its own record in this context over every showing (the
    /// weak-match record, [`WEAK_MATCH`] before [`CONTEXT_RECORD`], which
    /// every verdict moves) when that record filters it or is on trial
    /// ([`TagScore::trial`]): it is then a re-check
    /// ([`TagVerdict::Probation`]) until its next verdict on a strong match
    /// ([`Learned::assess_in`]) that leaves the record over the line and
    /// off trial.
    pub every_showing: Option<Evidence>,
    /// memd: where it decided ([`Scope::Pooled`]), its verdicts in every
    /// context it was judged in, read for this one.
    pub pooled: Option<Pooled>,
}

/// An item's verdicts in every context it was judged in, read for one
/// context ([`super::noise::Agreement::pooled`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Pooled {
    /// Its (relevant, irrelevant) verdicts in this context.
    pub here: (f64, f64),
    /// Its (relevant, irrelevant) verdicts in the other contexts, summed.
    pub elsewhere: (f64, f64),
    /// How many other contexts they came from.
    pub contexts: usize,
    /// How often an item's relevance differs between two contexts
    /// ([`super::noise::Agreement::relevance_differs`]).
    pub differs: f64,
    /// How likely it is to be relevant here: the share of relevant items,
    /// and after its verdicts.
    pub odds: super::noise::Odds,
}

impl Assessment {
    /// memd: evidence that the context changed. The item is filtered here,
    /// and its own record here ([`Assessment::record`]) holds at least the
    /// seed's [`MIN_EVALS_FOR_FILTER`] sessions that judged it relevant:
    /// it had helped here, and on its latest verdicts it no longer does.
    /// (A lesson filtered on its first verdicts, or never relevant here,
    /// says nothing about a change.)
    pub fn turned(&self) -> bool {
        self.verdict == TagVerdict::Filtered
            && self
                .record
                .is_some_and(|r| r.positive >= MIN_EVALS_FOR_FILTER)
    }

    /// memd: how old its evidence here is: the prompts it was held back
    /// from since its latest verdict here ([`Evidence::held`]), on its own
    /// record here where it has one, else over the context's tags.
    pub fn held(&self) -> f64 {
        self.record.map_or(self.here.held, |r| r.held)
    }

    /// The assessment with the team's evidence (`team`, read with the
    /// teammates' `weight`): where nothing here says the item is relevant
    /// and nothing here filters it, the team's evidence decides (it
    /// filters only when two members or more lean against the item) and
    /// its boost is added.
    pub fn with_team(
        mut self,
        team: std::sync::Arc<super::team::TeamEvidence>,
        weight: f64,
    ) -> Assessment {
        use super::team::TeamVerdict;
        if let TagVerdict::Boost(own) = self.verdict {
            if self.here.level <= 0.0 || self.borrowed {
                match team.verdict(weight) {
                    TeamVerdict::Filtered => {
                        self.verdict = TagVerdict::Filtered;
                        self.decided = Scope::Team;
                    }
                    TeamVerdict::Boost(boost) => self.verdict = TagVerdict::Boost(own + boost),
                }
            }
        }
        self.team = Some(team);
        self
    }
}

/// The workspace tags memd has seen, as one query asks about them for
/// every word of every candidate lesson ([`Learned::seen_tag`] in any
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
    /// that its evidence elsewhere ([`Learned::elsewhere`]) can read,
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

/// The pseudo-tag every judgement also updates: an item's record across
/// every context it was judged in ([`Scope::Everywhere`]).
pub const EVERYWHERE: &str = "*";

/// [`EVERYWHERE`] as weak matches have it (`Match::Weak.key("*")`).
const WEAK_EVERYWHERE: &str = "~*";

impl Learned {
    /// Relevance per item, then per tag.
    pub fn tag_relevance(&self) -> &HashMap<String, HashMap<String, TagScore>> {
        &self.tag_relevance
    }

    /// Automatic and manual pins per item, each for the tags it was made on.
    pub fn pins(&self) -> &HashMap<String, Vec<Pin>> {
        &self.pins
    }

    /// `item`'s per-tag scores, made empty if it had none.
    pub fn scores_entry(&mut self, item: &str) -> &mut HashMap<String, TagScore> {
        self.known.insert(crate::scoring::lesson::spread_of(item));
        self.tag_relevance.entry(item.to_string()).or_default()
    }

    /// Sets `item`'s per-tag scores (`None`: it has none).
    pub fn set_scores(&mut self, item: &str, scores: Option<HashMap<String, TagScore>>) {
        match scores {
            Some(scores) => {
                self.known.insert(crate::scoring::lesson::spread_of(item));
                self.tag_relevance.insert(item.to_string(), scores);
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
        self.pins.entry(item.to_string()).or_default()
    }

    /// Sets `item`'s pins (`None` or an empty list: it has none).
    pub fn set_pins(&mut self, item: &str, pins: Option<Vec<Pin>>) {
        match pins.filter(|p| !p.is_empty()) {
            Some(pins) => {
                self.known.insert(crate::scoring::lesson::spread_of(item));
                self.pins.insert(item.to_string(), pins);
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

    /// What was learned about `item` in the context of `tags` (its evidence
    /// for every showing, [`Match::Strong`]).
    pub fn evidence(&self, item: &str, tags: &[String]) -> Evidence {
        self.evidence_as(item, tags, Match::Strong)
    }

    /// [`Learned::evidence`] as showings like `read` have it.
    fn evidence_as(&self, item: &str, tags: &[String], read: Match) -> Evidence {
        evidence_over(
            self.tag_scores(item),
            tags.iter().map(String::as_str),
            read,
            |tag| self.weight(tag),
        )
    }

    /// Where an item's evidence counts besides this context's tags: each
    /// of its `own` tags that some context has had but `tags` lacks, as
    /// `!tag`: the contexts its author did not write it for. Tags no
    /// context ever had (`security`) say nothing here.
    pub fn elsewhere(&self, own: &[String], tags: &[String]) -> Vec<String> {
        own.iter()
            .filter(|t| self.tag_stats.contains_key(*t) && !tags.contains(t))
            .map(|t| format!("{ELSEWHERE}{t}"))
            .collect()
    }

    /// The assessment of an item nothing was learned about: no evidence
    /// either way (the common case on the query path, decided without a
    /// tag's weight).
    pub fn nothing_learned(&self, own: &[String], tags: &[String]) -> Assessment {
        let none = Evidence::default();
        Assessment {
            here: none,
            elsewhere: none,
            elsewhere_tags: self.elsewhere(own, tags),
            everywhere: None,
            verdict: TagVerdict::Boost(0.0),
            decided: Scope::Here,
            read: Match::Strong,
            borrowed: false,
            team: None,
            record: None,
            every_showing: None,
            pooled: None,
        }
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

    /// The [`crate::scoring::lesson::spread_of`] of every item with an
    /// automatic pin, for a session start to pass over the others without
    /// looking them up.
    pub fn pinned_spreads(&self) -> rustc_hash::FxHashSet<u64> {
        spreads(self.pins.keys())
    }

    /// What was learned about `item` (with its `own` tags) in the context
    /// of `tags` for a showing that matched as `shown` does, and the
    /// verdict ([`verdict_scoped`]). A weak match reads the item's
    /// weak-match evidence; an item judged only before that evidence was
    /// kept (it has none until its next verdict, [`Learned::seed_weak`]) is
    /// read from its evidence for every showing, which is the same.
    pub fn assess(&self, item: &str, own: &[String], tags: &[String], shown: Match) -> Assessment {
        let record = context_record(tags);
        let context = self.context(tags, record.as_deref());
        self.assess_in(item, || own.to_vec(), &context, shown)
    }

    /// The context of `tags` as [`Learned::assess_in`] reads it, with the
    /// key of its own record ([`context_record`] of `tags`): made once for
    /// a query that assesses many items in it.
    pub fn context<'c>(&self, tags: &'c [String], record: Option<&'c str>) -> Context<'c> {
        Context {
            tags,
            weights: tags.iter().map(|t| self.weight(t)).collect(),
            record,
        }
    }

    /// [`Learned::assess`] in a `context` made once for many items, its
    /// `own` tags read only when it has evidence where they were absent.
    pub fn assess_in(
        &self,
        item: &str,
        own: impl FnOnce() -> Vec<String>,
        context: &Context<'_>,
        shown: Match,
    ) -> Assessment {
        let tags = context.tags;
        let scores = self.tag_scores(item);
        let Some(scores) = scores else {
            return self.nothing_learned(&own(), tags);
        };
        let line = self.filter_line();
        let read = match shown {
            Match::Weak if has_weak_evidence(scores) => Match::Weak,
            _ => Match::Strong,
        };
        // Judged here: every tag of this context has evidence (a judgement
        // updates each tag of its context). Otherwise what the tags hold was
        // earned in other contexts that share some of them, and one
        // repository's verdicts do not filter a lesson in another that
        // only shares its language: here decides the order only, and a
        // wider scope filters where it has earned it (Everywhere: judged
        // irrelevant in two contexts or more).
        let mut borrowed = false;
        let here = evidence(tags.iter().zip(&context.weights).map(|(tag, &weight)| {
            let score = read.score_in(scores, tag).copied();
            borrowed |= score.is_none();
            TagEvidence { weight, score }
        }));
        let has_elsewhere = scores.keys().any(|k| {
            k.strip_prefix(WEAK_MATCH)
                .unwrap_or(k)
                .starts_with(ELSEWHERE)
        });
        let scores = Some(scores);
        // Without evidence where its own tags were absent, there is none
        // elsewhere to read (a lesson's own tags may be the words of its
        // text, which each query would read again).
        let elsewhere_tags = if has_elsewhere {
            self.elsewhere(&own(), tags)
        } else {
            Vec::new()
        };
        let elsewhere = evidence_over(
            scores,
            elsewhere_tags.iter().map(String::as_str),
            read,
            |_| 1.0,
        );
        let record = || evidence_over(scores, [EVERYWHERE], read, |_| 1.0);
        // Its record everywhere is looked at only when nothing narrower
        // decided, and the contexts it was judged in (a walk over them) are
        // counted only when that record would decide.
        let wider = [(Scope::Elsewhere, elsewhere)].into_iter().chain(
            std::iter::once_with(|| (Scope::Everywhere, record())).filter(|&(_, all)| {
                !matches!(verdict_at(all, line), TagVerdict::Boost(_))
                    && self.against_in_at_least(item, read, MIN_CONTEXTS_FOR_EVERYWHERE)
            }),
        );
        // A context with the seed's three judged sessions of its own
        // decides on its own record, not on what the tags it shares hold;
        // one with fewer, where its verdicts speak against the item clearly
        // enough ([`MIN_EVALS_EARLY`]).
        let own_record = context
            .record
            .map(|key| evidence_over(scores, [key], read, |_| 1.0))
            .and_then(|r| {
                if r.evals >= MIN_EVALS_FOR_FILTER {
                    return Some(r);
                }
                self.early(r, record).map(|odds| Evidence {
                    early: Some(odds),
                    ..r
                })
            });
        let deciding = match own_record {
            Some(own_record) => own_record,
            None if borrowed => Evidence { evals: 0.0, ..here },
            None => here,
        };
        let (outcome, decided) = match verdict_scoped(deciding, wider, line) {
            (outcome, Scope::Here) if own_record.is_some() => (outcome, Scope::Context),
            decided => decided,
        };
        // Kept on what is narrower, it is read on its verdicts in every
        // context it was judged in, where this context's own evidence is
        // not for it: the average over the tags is not positive, or no
        // verdict here found it relevant (what the tags hold beyond that
        // was earned in the contexts pooled, each read as far as it
        // predicts this one).
        let pooled = match (outcome, decided) {
            (TagVerdict::Boost(_), Scope::Here | Scope::Context) => self
                .pooled_in(item, context, read, deciding.level)
                .filter(|p| p.odds.against()),
            _ => None,
        };
        let (outcome, decided) = match pooled {
            Some(p) => (
                verdict_at(
                    Evidence {
                        early: Some(p.odds),
                        ..record()
                    },
                    line,
                ),
                Scope::Pooled,
            ),
            None => (outcome, decided),
        };
        // Kept on a strong match while its own record here over every
        // showing filters it: the verdicts on passing matches say it no
        // longer helps here (a drift), or that those prompts were not about
        // it, and its next verdict on a strong match tells which; until
        // then it is a re-check. One relevant verdict that lifts that record
        // over the line puts it on trial ([`TagScore::trial`]), as it does a
        // record that filters: a re-check still, until the next verdict
        // confirms it. (Measured, the learning bench, held-out seeds 9-16:
        // without the trial here a stale lesson came back as a kept one on
        // one wrong verdict, with the drift's verdicts read as a noisier
        // judge and the line lowered under its strong-match record; stale
        // lessons stopped by session 5 in stacks 32 -> 37 of 45, by 15 in
        // sparse 38 -> 43 of 45, precision and recall within 0.002.) Only
        // while a record's moves are more the lesson's than the judge's
        // noise ([`MIN_OWN_SHARE`]).
        let every_showing = context
            .record
            .filter(|_| read == Match::Strong && matches!(outcome, TagVerdict::Boost(_)))
            .filter(|_| self.boost_share() >= MIN_OWN_SHARE)
            .map(|key| evidence_over(scores, [key], Match::Weak, |_| 1.0))
            .filter(|all| all.evals >= MIN_EVALS_FOR_FILTER && (all.level < line || all.trial));
        let outcome = match outcome {
            TagVerdict::Boost(boost) if every_showing.is_some() => TagVerdict::Probation(boost),
            outcome => outcome,
        };
        // The seed's boost, in the share of it the judge's noise leaves.
        let outcome = outcome.boost_times(self.boost_share());
        let everywhere = matches!(decided, Scope::Everywhere | Scope::Pooled).then(record);
        Assessment {
            here,
            elsewhere,
            elsewhere_tags,
            everywhere,
            verdict: outcome,
            decided,
            read,
            borrowed,
            team: None,
            record: own_record,
            every_showing,
            pooled,
        }
    }

    /// The contexts `item` was shown and judged in, as showings like
    /// `read` have it: of those it was shown to a session in, the ones
    /// whose every tag has evidence for it (a judgement updates each tag of
    /// its context).
    pub fn contexts_judged(&self, item: &str, read: Match) -> usize {
        self.judged_contexts(item, read).count()
    }

    /// The contexts where `item` was shown and judged irrelevant on
    /// balance (as showings like `read` have it, its own record there,
    /// [`CONTEXT_RECORD`], is below 0; in a context without one, as in a
    /// store from before the records, the evidence over the context's
    /// tags): how many repositories its record everywhere speaks against
    /// it for.
    pub fn contexts_against(&self, item: &str, read: Match) -> usize {
        self.judged_contexts(item, read)
            .filter(|&against| against)
            .count()
    }

    /// The odds that filter an item on its own record in a context (`r`)
    /// before the seed's three judged sessions there ([`MIN_EVALS_EARLY`]),
    /// read with its record in every context (`all`, looked up only once
    /// `r` has enough sessions: this runs for every candidate judged
    /// here); `None` where they do not.
    fn early(&self, r: Evidence, all: impl FnOnce() -> Evidence) -> Option<super::noise::Odds> {
        if r.evals < MIN_EVALS_EARLY {
            return None;
        }
        let all = all();
        let here = (r.positive, r.evals - r.positive);
        let elsewhere = (
            (all.positive - here.0).max(0.0),
            (all.evals - all.positive - here.1).max(0.0),
        );
        self.noise
            .agreement()
            .odds(here, elsewhere)
            .filter(super::noise::Odds::against)
    }

    /// `item`'s verdicts in every context it was judged in, read for
    /// `context` ([`Scope::Pooled`]): only where it was judged here at
    /// least once (one repository's verdicts never filter it in another)
    /// and its evidence here is not for it (the average over the
    /// context's tags, `level`, is not positive, or no verdict here found
    /// it relevant), and on [`MIN_EVALS_EARLY`] judged sessions in all (as
    /// on its own record here, never on one verdict); `None` where
    /// [`super::noise::Agreement::pooled`] is.
    fn pooled_in(
        &self,
        item: &str,
        context: &Context<'_>,
        read: Match,
        level: f64,
    ) -> Option<Pooled> {
        let scores = self.tag_scores(item)?;
        let here = context
            .record
            .and_then(|key| read.score_in(scores, key))
            .map_or((0.0, 0.0), |s| {
                (f64::from(s.positive), f64::from(s.negative))
            });
        let judged_here = here.0 + here.1;
        if judged_here < 1.0 || (level > 0.0 && here.0 > 0.0) {
            return None;
        }
        let agreement = self.noise.agreement();
        let mut elsewhere = (0.0, 0.0);
        let mut contexts = 0;
        let others = self
            .records_in_contexts(item, read, context.record)
            .inspect(|&(p, q)| {
                elsewhere.0 += p;
                elsewhere.1 += q;
                contexts += 1;
            });
        let odds = agreement.pooled(here, others)?;
        if judged_here + elsewhere.0 + elsewhere.1 < MIN_EVALS_EARLY {
            return None;
        }
        Some(Pooled {
            here,
            elsewhere,
            contexts,
            differs: agreement.relevance_differs()?,
            odds,
        })
    }

    /// `item`'s (relevant, irrelevant) verdicts in each context it was
    /// shown and judged in that has its own record, as showings like
    /// `read` have it, but `except`.
    fn records_in_contexts<'a>(
        &'a self,
        item: &str,
        read: Match,
        except: Option<&'a str>,
    ) -> impl Iterator<Item = (f64, f64)> + 'a {
        let scores = self.tag_scores(item);
        let mut record = String::new();
        self.shown_in(item).filter_map(move |key| {
            record.clear();
            record.push_str(CONTEXT_RECORD);
            record.push_str(key);
            if except == Some(record.as_str()) {
                return None;
            }
            let s = read.score_in(scores?, &record)?;
            Some((f64::from(s.positive), f64::from(s.negative)))
        })
    }

    /// The contexts (their keys) `item` was shown to a session in.
    fn shown_in<'a>(&'a self, item: &str) -> impl Iterator<Item = &'a String> + 'a {
        self.matches
            .get(item)
            .into_iter()
            .flat_map(|shown| shown.keys())
    }

    /// Whether `item` was judged irrelevant on balance in at least `n`
    /// contexts ([`Learned::contexts_against`]), counting no further.
    fn against_in_at_least(&self, item: &str, read: Match, n: usize) -> bool {
        n == 0
            || self
                .judged_contexts(item, read)
                .filter(|&against| against)
                .nth(n - 1)
                .is_some()
    }

    /// For each context `item` was shown and judged in, whether it was
    /// judged irrelevant there on balance ([`Learned::contexts_against`]).
    /// One look-up of its record there, or one pass over the context's
    /// tags: a query asks this of every item its record everywhere would
    /// filter.
    fn judged_contexts<'a>(&'a self, item: &str, read: Match) -> impl Iterator<Item = bool> + 'a {
        let scores = self.tag_scores(item);
        let mut record = String::new();
        let mut tags = Vec::new();
        self.shown_in(item).filter_map(move |key| {
            let scores = scores?;
            // Its own record there, once it has one: the tags a context
            // shares with others hold their verdicts too.
            record.clear();
            record.push_str(CONTEXT_RECORD);
            record.push_str(key);
            if let Some(own) = read.score_in(scores, &record) {
                return Some(own.level() < 0.0);
            }
            tags.clear();
            for tag in key.split(',') {
                tags.push(TagEvidence {
                    weight: self.weight(tag),
                    score: Some(*read.score_in(scores, tag)?),
                });
            }
            Some(evidence(tags.iter().copied()).level < 0.0)
        })
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
                let score = scores.get_mut(tag)?;
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
    pub fn recount_item(&mut self, item: &str, before: Option<&HashMap<String, TagScore>>) {
        let now = self
            .tag_relevance
            .get(item)
            .map(agreement_in)
            .unwrap_or_default();
        let was = before.map(agreement_in).unwrap_or_default();
        self.noise = Noise::of(self.noise.agreement().minus(was).plus(now));
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
        scores.extend(seeded.iter().cloned());
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
        let line = self.filter_line();
        let seeded = self.seed_weak(item);
        let scores = self.scores_entry(item);
        let mut updated: Vec<(String, TagScore)> = seeded
            .into_iter()
            .filter(|(t, _)| !judged.contains(t))
            .collect();
        for tag in &judged {
            let score = scores.entry(tag.clone()).or_default();
            *score = score.record_at(raw, weight, line);
            updated.push((tag.clone(), *score));
        }
        let changes = self.review_pins(item, tags);
        (updated, changes)
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

    /// Whether `journal`, replayed, gives `item`'s scores as they are:
    /// every judgement that made them is in it.
    pub fn replays_to_current(&self, item: &str, journal: &[Judgement]) -> bool {
        let replayed = replay(journal, self.filter_line());
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
        let mut after = replay(journal, self.filter_line());
        for (tag, score) in after.iter_mut() {
            score.held = before.get(tag).map_or(0, |b| b.held);
        }
        let mut updated: Vec<(String, Option<TagScore>)> = before
            .keys()
            .filter(|t| !after.contains_key(*t))
            .map(|t| (t.clone(), None))
            .collect();
        updated.extend(after.iter().map(|(t, s)| (t.clone(), Some(*s))));
        if !after.is_empty() {
            self.set_scores(item, Some(after));
        }
        let changes = self.review_pins(item, tags);
        (updated, changes)
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::learning::tag_relevance::verdict;

    #[test]
    fn every_item_learned_about_may_be_known_by_its_spread() {
        use crate::scoring::lesson::spread_of;
        let mut learned = Learned::default();
        let tags = vec!["python".to_string()];
        assert!(!learned.may_know(spread_of("L-1")));
        learned.judge("L-1", &[], &tags, Match::Strong, 1.0, 2.0);
        learned.pins_entry("L-2").push(Pin {
            manual: true,
            tags: tags.clone(),
        });
        let mut restored = Learned::default();
        restored.set_scores("L-3", Some(learned.tag_relevance()["L-1"].clone()));
        restored.set_pins("L-4", Some(learned.pins()["L-2"].clone()));
        restored.set_pins("L-5", Some(Vec::new()));
        for (state, id, about) in [
            (&learned, "L-1", true),
            (&learned, "L-2", true),
            (&learned, "L-3", false),
            (&restored, "L-3", true),
            (&restored, "L-4", true),
            (&restored, "L-5", false),
        ] {
            assert_eq!(state.learned_about(id), about, "{id}");
            assert_eq!(state.may_know(spread_of(id)), about, "{id}");
        }
        assert!(!restored.pins().contains_key("L-5"));
        // Once its records are gone it may still be known by its spread,
        // never learned about.
        restored.set_scores("L-3", None);
        assert!(!restored.learned_about("L-3"));
        assert!(restored.may_know(spread_of("L-3")));
    }

    #[test]
    fn seen_tags_answer_as_seen_tag_does_in_any_case() {
        let mut learned = Learned::default();
        // "Java" kept with its capital (an old store) and a titlecase
        // letter (ǅ, not upper case, lower case ǆ).
        for tag in ["python", "go", "straße", "c++", "Java", "ǆango"] {
            learned.tag_stats.insert(tag.to_string(), (1, 1));
        }
        let seen = learned.seen_tags();
        for word in [
            "python", "Python", "PYTHON", "go", "Go", "STRASSE", "Straße", "c++", "C++", "rust",
            "pythons", "g", "", "İ", "Java", "java", "JAVA", "ǅango", "ǆango",
        ] {
            assert_eq!(seen.contains(word), learned.seen_tag(word), "{word}");
            if word.is_ascii() {
                assert_eq!(
                    seen.contains_hash(crate::scoring::lesson::tag_hash(word)),
                    learned.seen_tag(word),
                    "{word} by its hash"
                );
            }
        }
        assert!(seen.contains("GO") && seen.contains("Straße") && !seen.contains("java"));
    }

    fn tags(t: &[&str]) -> Vec<String> {
        t.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn negative_evaluations_follow_the_seed() {
        let mut l = Learned::default();
        let (updated, _) = l.judge("L-1", &[], &tags(&["python"]), Match::Strong, -1.0, 1.0);
        assert!((updated[0].1.score + 0.3).abs() < 1e-9);
        let (updated, _) = l.judge("L-1", &[], &tags(&["python"]), Match::Strong, -1.0, 1.0);
        assert!((updated[0].1.score + 0.51).abs() < 1e-9);
        assert_eq!(updated[0].1.negative, 2);
    }

    #[test]
    fn relevance_pins_at_five_sessions_for_the_context_and_unpins() {
        let mut l = Learned::default();
        let t = tags(&["acme", "linux", "rust"]);
        let mut pinned_at = None;
        for i in 1..=8 {
            let (_, changes) = l.judge("L-2", &[], &t, Match::Strong, 1.0, 1.0);
            if changes.iter().any(|c| matches!(c, PinChange::Pinned(_))) {
                pinned_at = Some(i);
            }
        }
        // 0.3, 0.51, 0.657, 0.76 (4 sessions), 0.832 with 5: pinned at 5,
        // one judged session counting once whatever its three tags.
        assert_eq!(pinned_at, Some(5));
        assert!(l.is_pinned("L-2", &t));
        assert!(!l.is_pinned("L-2", &tags(&["linux"])), "scoped, not global");
        let mut unpinned = false;
        for _ in 0..10 {
            let (_, changes) = l.judge("L-2", &[], &t, Match::Strong, -1.0, 1.0);
            if changes.iter().any(|c| matches!(c, PinChange::Unpinned(_))) {
                unpinned = true;
                break;
            }
        }
        assert!(unpinned && !l.is_pinned("L-2", &t));
    }

    #[test]
    fn a_pin_is_scoped_to_the_tags_that_tell_its_context_apart() {
        let mut l = Learned::default();
        let a = tags(&["acme", "linux", "python"]);
        let b = tags(&["linux", "other", "python"]);
        let c = tags(&["go", "linux", "third"]);
        for t in [&a, &b, &c] {
            l.observe_session(t);
        }
        for _ in 0..6 {
            l.judge("L-5", &[], &a, Match::Strong, 1.0, 1.0);
        }
        assert_eq!(l.pins_of("L-5")[0].tags, tags(&["acme", "python"]));
        assert!(l.is_pinned("L-5", &a));
        assert!(!l.is_pinned("L-5", &b));
        assert!(!l.is_pinned("L-5", &c));
        // A verdict elsewhere does not touch the pin.
        for _ in 0..6 {
            l.judge("L-5", &[], &c, Match::Strong, -1.0, 1.0);
        }
        assert!(l.is_pinned("L-5", &a));
    }

    #[test]
    fn matches_pin_only_with_positive_evidence_and_an_unpin_holds() {
        let mut l = Learned::default();
        let t = tags(&["cli", "rust"]);
        for i in 1..=40 {
            assert_eq!(l.shown("L-4", &t), ("cli,rust".to_string(), i, None));
        }
        assert!(!l.is_pinned("L-4", &t), "showings alone never pin");
        for _ in 0..3 {
            l.judge("L-4", &[], &t, Match::Strong, 1.0, 1.0);
        }
        assert!(
            !l.is_pinned("L-4", &t),
            "three sessions: not the relevance rule"
        );
        assert_eq!(
            l.shown("L-4", &t),
            ("cli,rust".to_string(), 41, Some(t.clone()))
        );
        assert!(l.is_pinned("L-4", &tags(&["cli", "rust", "linux"])));
        assert!(!l.is_pinned("L-4", &tags(&["rust"])));
        // Feedback unpins; the next showings do not pin it again.
        for _ in 0..3 {
            l.judge("L-4", &[], &t, Match::Strong, -1.0, 2.0);
        }
        assert!(!l.is_pinned("L-4", &t));
        for _ in 0..20 {
            assert_eq!(l.shown("L-4", &t).2, None);
        }
    }

    /// L-11 in a billing python context: relevant three times where its
    /// topic came up (strong matches), then irrelevant `passing` times on
    /// prompts about other topics that share a word.
    fn judged_in_passing(passing: usize) -> (Learned, Vec<String>) {
        let mut l = Learned::default();
        let here = tags(&["billing", "python"]);
        for _ in 0..3 {
            l.judge("L-11", &[], &here, Match::Strong, 1.0, 1.0);
        }
        for _ in 0..passing {
            l.judge("L-11", &[], &here, Match::Weak, -1.0, 1.0);
        }
        (l, here)
    }

    #[test]
    fn a_verdict_on_a_weak_match_counts_only_for_weak_matches() {
        let (mut l, here) = judged_in_passing(6);
        let strong = l.assess("L-11", &[], &here, Match::Strong);
        assert_eq!(strong.here.evals, 3.0, "the weak verdicts are not here");
        let weak = l.assess("L-11", &[], &here, Match::Weak);
        assert_eq!(weak.read, Match::Weak);
        assert_eq!(weak.verdict, TagVerdict::Filtered);
        assert_eq!(
            weak.here.evals, 9.0,
            "strong verdicts count for weak matches too"
        );
        // Its record here over every showing filters it: on strong matches
        // a re-check (with its boost), until a strong match's verdict.
        assert!(matches!(strong.verdict, TagVerdict::Probation(b) if b > 0.0));
        assert_eq!(strong.every_showing.map(|e| e.evals), Some(9.0));
        // One relevant verdict there: -0.805 -> -0.264 over every showing,
        // still a re-check; two: 0.115, over the line but on trial, still
        // a re-check; three: 0.380, kept.
        l.judge("L-11", &[], &here, Match::Strong, 1.0, 1.0);
        let strong = l.assess("L-11", &[], &here, Match::Strong);
        assert!(matches!(strong.verdict, TagVerdict::Probation(_)));
        assert!(!strong.every_showing.unwrap().trial);
        l.judge("L-11", &[], &here, Match::Strong, 1.0, 1.0);
        let strong = l.assess("L-11", &[], &here, Match::Strong);
        assert!(matches!(strong.verdict, TagVerdict::Probation(_)));
        let all = strong.every_showing.unwrap();
        assert!(all.trial && all.level > l.filter_line(), "{all:?}");
        l.judge("L-11", &[], &here, Match::Strong, 1.0, 1.0);
        let strong = l.assess("L-11", &[], &here, Match::Strong);
        assert!(matches!(strong.verdict, TagVerdict::Boost(b) if b > 0.0));
        assert_eq!(strong.every_showing, None);
        // The seed's arithmetic in each: three relevant, then six
        // irrelevant (0.657 x 0.7^6 - (1 - 0.7^6)) on weak matches only,
        // then three relevant on strong matches.
        let relevant = |s: f64| s * 0.7 + 0.3;
        let w = l.tag_score("L-11", "~python").unwrap();
        let weak_score = 0.657 * 0.7f64.powi(6) - (1.0 - 0.7f64.powi(6));
        assert!((w.score - relevant(relevant(relevant(weak_score)))).abs() < 1e-9);
        let strong_score = relevant(relevant(relevant(0.657)));
        assert!((l.tag_score("L-11", "python").unwrap().score - strong_score).abs() < 1e-9);
        // Irrelevant on strong matches: filtered for both.
        for _ in 0..4 {
            l.judge("L-11", &[], &here, Match::Strong, -1.0, 1.0);
        }
        assert_eq!(
            l.assess("L-11", &[], &here, Match::Strong).verdict,
            TagVerdict::Filtered
        );
        // Held-back prompts (strong matches) age only its evidence for them.
        let aged = l.hold_back("L-11", &[], &here);
        assert!(
            aged.iter().all(|(t, _)| !t.starts_with(WEAK_MATCH)),
            "{aged:?}"
        );
    }

    #[test]
    fn a_noisy_judges_passing_verdicts_do_not_make_a_re_check() {
        let (mut l, here) = judged_in_passing(10);
        assert!(matches!(
            l.assess("L-11", &[], &here, Match::Strong).verdict,
            TagVerdict::Probation(_)
        ));
        // A judge that contradicts itself on half the pairs of its verdicts
        // elsewhere (a coin): its noise is all of a score's spread.
        let elsewhere = tags(&["search", "go"]);
        for verdict in [1.0, -1.0].repeat(15) {
            l.judge("L-12", &[], &elsewhere, Match::Strong, verdict, 1.0);
        }
        l.recount_agreement();
        assert!(l.boost_share() < MIN_OWN_SHARE, "{}", l.boost_share());
        // Its record over every showing is still below the (lowered) line.
        let all = l.assess("L-11", &[], &here, Match::Weak);
        assert!(all.here.level < l.filter_line(), "{all:?}");
        let strong = l.assess("L-11", &[], &here, Match::Strong);
        assert!(matches!(strong.verdict, TagVerdict::Boost(_)), "{strong:?}");
        assert_eq!(strong.every_showing, None);
    }

    #[test]
    fn an_item_judged_before_weak_matches_were_kept_apart_reads_as_before() {
        let mut l = Learned::default();
        let here = tags(&["python"]);
        for _ in 0..3 {
            l.judge("L-12", &[], &here, Match::Strong, -1.0, 1.0);
        }
        // As an upgraded store has it: no weak-match evidence, no records
        // per context.
        l.tag_relevance
            .get_mut("L-12")
            .unwrap()
            .retain(|t, _| !t.starts_with(WEAK_MATCH) && !t.starts_with(CONTEXT_RECORD));
        let weak = l.assess("L-12", &[], &here, Match::Weak);
        assert_eq!(weak.read, Match::Strong);
        assert_eq!(weak.verdict, TagVerdict::Filtered);
        // Its next verdict, in another context, gives it weak-match evidence
        // equal to what it had: still filtered on weak matches here.
        let (updated, _) = l.judge("L-12", &[], &tags(&["go"]), Match::Strong, 1.0, 1.0);
        assert!(updated.iter().any(|(t, _)| t == "~python"), "{updated:?}");
        let weak = l.assess("L-12", &[], &here, Match::Weak);
        assert_eq!(weak.read, Match::Weak);
        assert_eq!(weak.verdict, TagVerdict::Filtered);
        assert_eq!(
            l.tag_score("L-12", "~python"),
            l.tag_score("L-12", "python")
        );
        // A journal of that era replays to the same: its judgements count
        // for every showing.
        let old = |raw: f64, t: &[&str]| Judgement {
            session: None,
            tags: tags(t),
            raw,
            weight: 1.0,
        };
        let mut journal = vec![old(-1.0, &["python", "*"]); 3];
        journal.push(Judgement {
            tags: l.judged_tags(&[], &tags(&["go"]), Match::Strong),
            ..old(1.0, &[])
        });
        assert!(l.replays_to_current("L-12", &journal));
        assert_eq!(Match::Weak.key(EVERYWHERE), WEAK_EVERYWHERE);
        assert_eq!(workspace_tag(" Python "), Some("python".to_string()));
        for reserved in ["", " ", "*", "!go", "~python", "@python,search"] {
            assert_eq!(workspace_tag(reserved), None, "{reserved:?}");
        }
        assert_eq!(Match::of_band(0), Match::Strong, "session start");
        assert_eq!(Match::of_band(1), Match::Weak);
        assert_eq!(Match::of_band(2), Match::Strong);
        assert_eq!(Match::of_band(3), Match::Strong);
    }

    #[test]
    fn held_back_prompts_age_only_the_evidence_that_held_it_back() {
        let mut l = Learned::default();
        let here = tags(&["billing", "python"]);
        assert!(l.hold_back("L-6", &[], &here).is_empty(), "nothing to age");
        for _ in 0..6 {
            l.judge("L-6", &[], &here, Match::Strong, -1.0, 1.0);
        }
        l.judge("L-6", &[], &tags(&["go"]), Match::Strong, 1.0, 1.0);
        assert_eq!(verdict(l.evidence("L-6", &here)), TagVerdict::Filtered);
        // Six judged sessions, all against it, wait 3 x 6 = 18 prompts.
        let mut aged = Vec::new();
        for _ in 0..17 {
            aged = l.hold_back("L-6", &[], &tags(&["billing", "linux", "python"]));
        }
        assert_eq!(aged.len(), 3, "only the tags with evidence: {aged:?}");
        assert!(aged.iter().any(|(t, _)| t == EVERYWHERE));
        assert_eq!(verdict(l.evidence("L-6", &here)), TagVerdict::Filtered);
        l.hold_back("L-6", &[], &here);
        assert!(matches!(
            verdict(l.evidence("L-6", &here)),
            TagVerdict::Probation(_)
        ));
        assert_eq!(l.tag_score("L-6", "go").unwrap().held, 0);
        // Judged again where it was held back: filtered again.
        l.judge("L-6", &[], &here, Match::Strong, -1.0, 1.0);
        assert_eq!(verdict(l.evidence("L-6", &here)), TagVerdict::Filtered);
    }

    #[test]
    fn a_context_counts_against_a_lesson_on_its_own_record() {
        let mut l = Learned::default();
        let search = tags(&["python", "django", "search"]);
        let billing = tags(&["python", "django", "billing"]);
        let fresh = tags(&["go", "gin", "cli"]);
        for t in [&search, &billing, &fresh, &tags(&["rust", "axum", "web"])] {
            l.observe_session(t);
        }
        // Irrelevant in one repository, often; then relevant once in
        // another on the same stack.
        for _ in 0..15 {
            l.shown("L-11", &search);
            l.judge("L-11", &[], &search, Match::Strong, -1.0, 1.0);
        }
        l.shown("L-11", &billing);
        l.judge("L-11", &[], &billing, Match::Strong, 1.0, 1.0);
        // Over the second's tags the first's verdicts outweigh it, but its
        // own record there says relevant: only the first is against it.
        assert!(l.evidence("L-11", &billing).level < 0.0);
        assert_eq!(l.contexts_judged("L-11", Match::Strong), 2);
        assert_eq!(l.contexts_against("L-11", Match::Strong), 1);
        // So its record everywhere, well below the seed's line, does not
        // decide in a third repository.
        assert!(l.evidence("L-11", &[EVERYWHERE.to_string()]).level < -0.1);
        let there = l.assess("L-11", &[], &fresh, Match::Strong);
        assert_eq!(there.everywhere, None);
        assert_eq!(there.verdict, TagVerdict::Boost(0.0));
    }

    /// `item` shown in the context of `t` and judged `raws` there, one
    /// session each, on strong matches; the judge's agreement recounted.
    fn verdicts(l: &mut Learned, item: &str, t: &[String], raws: &[f64]) {
        for &raw in raws {
            l.shown(item, t);
            l.judge(item, &[], t, Match::Strong, raw, 1.0);
        }
        l.recount_agreement();
    }

    #[test]
    fn two_irrelevant_verdicts_filter_on_the_own_record_once_the_judge_is_read() {
        let mut l = Learned::default();
        let here = tags(&["python", "django", "search"]);
        let other = tags(&["go", "gin", "cli"]);
        for t in [&here, &other] {
            l.observe_session(t);
        }
        verdicts(&mut l, "L-1", &here, &[-1.0, -1.0]);
        // Before the judge's error is read, the seed's three sessions.
        assert_eq!(l.agreement().judge_error(), None);
        let before = l.assess("L-1", &[], &here, Match::Strong);
        assert_eq!(before.verdict, TagVerdict::Boost(before.here.level / 300.0));
        assert_eq!(before.record, None);
        // Thirty other items judged four times each: ten relevant, ten
        // irrelevant, ten one time in four the other way (360 pairs, 60
        // of them disagreeing: a judge wrong about one time in eleven,
        // 0.6 of items relevant).
        for i in 0..30 {
            let raws: &[f64] = match i % 3 {
                0 => &[1.0; 4],
                1 => &[-1.0; 4],
                _ => &[1.0, 1.0, 1.0, -1.0],
            };
            verdicts(&mut l, &format!("F-{i}"), &other, raws);
        }
        let e = l.agreement().judge_error().unwrap();
        assert!((e - 0.0917).abs() < 0.001, "{e}");
        assert_eq!(l.filter_line(), -0.1);
        // Two irrelevant verdicts here: filtered on its own record.
        let now = l.assess("L-1", &[], &here, Match::Strong);
        assert_eq!(now.verdict, TagVerdict::Filtered);
        assert_eq!(now.decided, Scope::Context);
        let odds = now.record.unwrap().early.unwrap();
        assert!(
            (odds.prior - 0.6).abs() < 0.01 && odds.now < 0.02,
            "{odds:?}"
        );
        // One verdict, or one of each: kept.
        verdicts(&mut l, "L-2", &here, &[-1.0]);
        verdicts(&mut l, "L-3", &here, &[-1.0, 1.0]);
        for item in ["L-2", "L-3"] {
            let kept = l.assess(item, &[], &here, Match::Strong);
            assert!(matches!(kept.verdict, TagVerdict::Boost(_)), "{item}");
            assert_eq!(kept.record, None, "{item}");
        }
        // Held back from six prompts (three for each verdict against it), it
        // is on probation, to be judged anew.
        for _ in 0..5 {
            l.hold_back("L-1", &[], &here);
        }
        let held = l.assess("L-1", &[], &here, Match::Strong);
        assert_eq!(held.verdict, TagVerdict::Filtered);
        l.hold_back("L-1", &[], &here);
        let later = l.assess("L-1", &[], &here, Match::Strong);
        assert!(matches!(later.verdict, TagVerdict::Probation(_)));
    }

    #[test]
    fn a_lesson_judged_irrelevant_in_two_contexts_is_filtered_in_a_third() {
        let mut l = Learned::default();
        let repos: Vec<Vec<String>> = ["billing", "shop", "proxy", "search", "cli"]
            .iter()
            .map(|r| tags(&[r, "linux"]))
            .collect();
        for t in &repos {
            l.observe_session(t);
        }
        let fresh = &repos[4];
        // Judged irrelevant in one repository: however often, that never
        // filters it where it was never judged.
        for _ in 0..5 {
            l.shown("L-9", &repos[0]);
            l.judge("L-9", &[], &repos[0], Match::Strong, -1.0, 1.0);
        }
        assert_eq!(l.contexts_judged("L-9", Match::Strong), 1);
        let there = l.assess("L-9", &[], fresh, Match::Strong);
        assert_eq!(there.verdict, TagVerdict::Boost(0.0));
        assert_eq!(there.everywhere, None);
        // A second that agrees: its record everywhere decides where nothing
        // else does.
        l.shown("L-9", &repos[1]);
        l.judge("L-9", &[], &repos[1], Match::Strong, -1.0, 1.0);
        assert_eq!(l.contexts_judged("L-9", Match::Strong), 2);
        let there = l.assess("L-9", &[], fresh, Match::Strong);
        assert_eq!(there.here, Evidence::default());
        assert_eq!(there.verdict, TagVerdict::Filtered);
        assert_eq!(there.decided, Scope::Everywhere);
        assert_eq!(there.everywhere.unwrap().evals, 6.0);
        // A record that is not below the seed's line filters nowhere else:
        // judged relevant in a third context, the record climbs back.
        l.shown("L-9", &repos[2]);
        for _ in 0..3 {
            l.judge("L-9", &[], &repos[2], Match::Strong, 1.0, 1.0);
        }
        assert_eq!(
            l.assess("L-9", &[], fresh, Match::Strong).verdict,
            TagVerdict::Boost(0.0)
        );
        assert_eq!(
            l.contexts_against("L-9", Match::Strong),
            2,
            "relevant in the third"
        );
        // Where it was judged relevant, that context's evidence decides.
        let search = l.assess("L-9", &[], &repos[2], Match::Strong);
        assert!(matches!(search.verdict, TagVerdict::Boost(b) if b > 0.0));
        assert_eq!(search.decided, Scope::Context);
        // Judged without being shown there (direct feedback on a search
        // hit): not a context it was shown in, so it does not count.
        let other = tags(&["other", "linux"]);
        l.judge("L-10", &[], &other, Match::Strong, -1.0, 2.0);
        assert_eq!(l.contexts_judged("L-10", Match::Strong), 0);
    }

    /// Asserts `a` was filtered on its pooled verdicts, with `counts`
    /// (here, elsewhere, other contexts); returns them.
    fn filtered_pooled(a: &Assessment, counts: ((f64, f64), (f64, f64), usize)) -> Pooled {
        assert_eq!(a.verdict, TagVerdict::Filtered);
        assert_eq!(a.decided, Scope::Pooled);
        let p = a.pooled.unwrap();
        assert_eq!((p.here, p.elsewhere, p.contexts), counts);
        p
    }

    #[test]
    fn verdicts_in_contexts_that_predict_each_other_filter_with_one_here() {
        let mut l = Learned::default();
        let [x, y, here] = [
            ["billing", "python"],
            ["shop", "python"],
            ["search", "python"],
        ]
        .map(|t| tags(&t));
        for t in [&x, &y, &here] {
            l.observe_session(t);
        }
        // Thirty items judged twice in each of two contexts: ten relevant,
        // ten irrelevant, ten with one wrong verdict in the second (120
        // pairs within a context, 20 disagreeing: a judge wrong about one
        // time in eleven; 240 pairs across the two, 40 disagreeing, as
        // often as within one: an item is relevant in both or in neither).
        for i in 0..30 {
            let (first, second): (&[f64], &[f64]) = match i % 3 {
                0 => (&[1.0, 1.0], &[1.0, 1.0]),
                1 => (&[-1.0, -1.0], &[-1.0, -1.0]),
                _ => (&[1.0, 1.0], &[1.0, -1.0]),
            };
            verdicts(&mut l, &format!("F-{i}"), &x, first);
            verdicts(&mut l, &format!("F-{i}"), &y, second);
        }
        let a = l.agreement();
        assert_eq!((a.pairs, a.disagreeing), (120, 20));
        assert_eq!((a.pairs_across, a.disagreeing_across), (240, 40));
        assert!(a.relevance_differs().unwrap() < 1e-9);
        // Judged irrelevant once here and once in another context: both
        // speak for this one, and it is filtered here.
        verdicts(&mut l, "L-1", &x, &[-1.0]);
        verdicts(&mut l, "L-1", &here, &[-1.0]);
        let pooled = l.assess("L-1", &[], &here, Match::Strong);
        let p = filtered_pooled(&pooled, ((0.0, 1.0), (0.0, 1.0), 1));
        assert!(p.odds.now < p.odds.prior / 2.0, "{p:?}");
        // One verdict in all: kept, as on its own record.
        verdicts(&mut l, "L-2", &here, &[-1.0]);
        let one = l.assess("L-2", &[], &here, Match::Strong);
        assert!(matches!(one.verdict, TagVerdict::Boost(_)));
        assert_eq!(one.pooled, None);
        // Never judged here: another context's verdicts, however many,
        // order it but do not filter it.
        verdicts(&mut l, "L-3", &x, &[-1.0, -1.0]);
        let unjudged = l.assess("L-3", &[], &here, Match::Strong);
        assert!(matches!(unjudged.verdict, TagVerdict::Boost(_)));
        // Judged relevant in the other context: kept here.
        verdicts(&mut l, "L-4", &x, &[1.0, 1.0]);
        verdicts(&mut l, "L-4", &here, &[-1.0]);
        let trusted = l.assess("L-4", &[], &here, Match::Strong);
        assert!(matches!(trusted.verdict, TagVerdict::Boost(_)));
    }

    #[test]
    fn verdicts_here_filter_where_the_tags_hold_another_contexts_relevant_ones() {
        let mut l = Learned::default();
        let [x, y, here] = [
            ["billing", "django", "pytest", "python"],
            ["shop", "django", "pytest", "python"],
            ["search", "django", "pytest", "python"],
        ]
        .map(|t| tags(&t));
        for t in [&x, &y, &here] {
            l.observe_session(t);
        }
        // Four repositories of another stack: the stack's tags tell
        // contexts apart, and their verdicts weigh in the average.
        for name in ["cli", "proxy", "queue", "gateway"] {
            l.observe_session(&tags(&[name, "gin", "go"]));
        }
        // Thirty items judged twice in each of two contexts, two thirds of
        // them relevant in one and irrelevant in the other (a judge wrong
        // about one time in eleven within a context; across the two,
        // pairs disagree more often than a coin's: contexts that share
        // nothing, read as one half).
        for i in 0..30 {
            let (first, second): (&[f64], &[f64]) = match i % 3 {
                0 => (&[1.0, 1.0], &[-1.0, -1.0]),
                1 => (&[-1.0, -1.0], &[1.0, 1.0]),
                _ => (&[1.0, 1.0], &[-1.0, 1.0]),
            };
            verdicts(&mut l, &format!("F-{i}"), &x, first);
            verdicts(&mut l, &format!("F-{i}"), &y, second);
        }
        assert_eq!(l.agreement().relevance_differs(), Some(0.5));
        // Relevant five times in billing, which shares its stack with
        // search: the average over search's tags is positive after one
        // irrelevant verdict here, and billing's verdicts say nothing of
        // search. That verdict alone decides here, against the share of
        // relevant items, on six judged sessions in all.
        verdicts(&mut l, "L-5", &x, &[1.0; 5]);
        verdicts(&mut l, "L-5", &here, &[-1.0]);
        let a = l.assess("L-5", &[], &here, Match::Strong);
        assert!(a.here.level > 0.0, "{:?}", a.here);
        filtered_pooled(&a, ((0.0, 1.0), (5.0, 0.0), 1));
        // Still relevant in billing, where its own verdicts decide.
        let billing = l.assess("L-5", &[], &x, Match::Strong);
        assert!(matches!(billing.verdict, TagVerdict::Boost(b) if b > 0.0));
        // One relevant verdict here as well: the tags' average keeps it.
        verdicts(&mut l, "L-6", &x, &[1.0; 5]);
        verdicts(&mut l, "L-6", &here, &[1.0, -1.0]);
        let kept = l.assess("L-6", &[], &here, Match::Strong);
        assert!(matches!(kept.verdict, TagVerdict::Boost(_)), "{kept:?}");
        assert_eq!(kept.pooled, None);
    }

    #[test]
    fn own_tags_are_read_only_for_a_lesson_with_evidence_where_they_were_absent() {
        let mut l = Learned::default();
        let proxy = tags(&["go", "proxy"]);
        let billing = tags(&["billing", "python"]);
        for t in [&proxy, &billing] {
            l.observe_session(t);
        }
        let own = tags(&["go"]);
        for _ in 0..3 {
            l.judge("L-7", &own, &proxy, Match::Strong, -1.0, 1.0);
        }
        // Judged only where its own tag was: nothing elsewhere to read.
        let context = l.context(&billing, None);
        let read_own = std::cell::Cell::new(false);
        let there = l.assess_in(
            "L-7",
            || {
                read_own.set(true);
                own.clone()
            },
            &context,
            Match::Strong,
        );
        assert!(!read_own.get());
        assert_eq!(there.elsewhere, Evidence::default());
        assert!(there.elsewhere_tags.is_empty());
        // Once judged where it was absent, they are read.
        l.judge("L-7", &own, &billing, Match::Strong, -1.0, 1.0);
        let there = l.assess("L-7", &own, &proxy, Match::Strong);
        assert!(there.elsewhere_tags.is_empty(), "go is here");
        let elsewhere = l.assess("L-7", &own, &tags(&["billing"]), Match::Strong);
        assert_eq!(elsewhere.elsewhere_tags, tags(&["!go"]));
        assert!(elsewhere.elsewhere.evals > 0.0);
    }

    #[test]
    fn a_lesson_for_another_stack_learned_in_one_repo_is_filtered_in_the_next() {
        let mut l = Learned::default();
        let billing = tags(&["billing", "django", "python"]);
        let shop = tags(&["rails", "ruby", "shop"]);
        let proxy = tags(&["go", "proxy"]);
        for t in [&billing, &shop, &proxy] {
            l.observe_session(t);
        }
        let own = tags(&["go", "security"]);
        assert_eq!(
            l.elsewhere(&own, &billing),
            tags(&["!go"]),
            "security: no context had it"
        );
        for _ in 0..3 {
            l.judge("L-7", &own, &billing, Match::Strong, -1.0, 1.0);
        }
        // Never judged in the shop, yet filtered there: it lacks `go` too.
        let there = l.assess("L-7", &own, &shop, Match::Strong);
        assert_eq!(there.here, Evidence::default());
        assert_eq!(there.elsewhere_tags, tags(&["!go"]));
        assert_eq!(there.verdict, TagVerdict::Filtered);
        // Where its own tag is, nothing learned elsewhere applies.
        assert_eq!(
            l.assess("L-7", &own, &proxy, Match::Strong).verdict,
            TagVerdict::Boost(0.0)
        );
        // Judged relevant in the shop: the shop's evidence decides there.
        l.judge("L-7", &own, &shop, Match::Strong, 1.0, 1.0);
        assert!(
            matches!(l.assess("L-7", &own, &shop, Match::Strong).verdict, TagVerdict::Boost(b) if b > 0.0)
        );
        // No pin is ever scoped to a `!tag`.
        for _ in 0..10 {
            l.judge("L-7", &own, &shop, Match::Strong, 1.0, 1.0);
        }
        assert!(l
            .pins_of("L-7")
            .iter()
            .all(|p| p.tags.iter().all(|t| !t.starts_with('!'))));
    }

    #[test]
    fn sessions_tick_the_clocks_and_weigh_the_tags() {
        let mut l = Learned::default();
        for _ in 0..3 {
            l.observe_session(&tags(&["a", "linux"]));
        }
        l.observe_session(&tags(&["b", "linux"]));
        assert_eq!(l.clock("linux"), 4);
        assert_eq!(l.clock("a"), 3);
        assert_eq!(l.weight("linux"), 0.0);
        assert_eq!(l.weight("a"), 1.0);
        assert_eq!(l.informative(&tags(&["a", "linux"])), tags(&["a"]));
        assert_eq!(l.informative(&tags(&["linux"])), tags(&["linux"]));
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

    #[test]
    fn a_replayed_journal_puts_a_new_verdict_in_the_old_ones_place() {
        let mut l = Learned::default();
        let python = tags(&["python"]);
        let judged = l.judged_tags(&[], &python, Match::Strong);
        let judgement = |raw: f64| Judgement {
            session: Some("s".into()),
            tags: judged.clone(),
            raw,
            weight: 1.0,
        };
        l.judge("L-1", &[], &python, Match::Strong, -1.0, 1.0);
        l.judge("L-1", &[], &python, Match::Strong, -1.0, 1.0);
        let journal = vec![judgement(-1.0), judgement(-1.0)];
        assert!(l.replays_to_current("L-1", &journal));
        // A journal that misses a judgement does not account for the scores.
        assert!(!l.replays_to_current("L-1", &journal[..1]));
        let held = l.hold_back("L-1", &[], &python);
        assert_eq!(held[0].1.held, 1);
        // The first verdict turns: +1 then -1 is 0.21 * 0.7 ... = -0.09.
        let (updated, _) = l.rejudge("L-1", &[judgement(1.0), judgement(-1.0)], &python);
        let score = updated
            .iter()
            .find(|(t, _)| t == "python")
            .unwrap()
            .1
            .unwrap();
        assert!((score.score + 0.09).abs() < 1e-9);
        assert_eq!((score.positive, score.negative, score.held), (1, 1, 1));
        // A tag no judgement touches any more is removed.
        let go = Judgement {
            tags: tags(&["go"]),
            ..judgement(1.0)
        };
        let (updated, _) = l.rejudge("L-1", &[go], &python);
        assert!(updated.contains(&("python".to_string(), None)));
        assert_eq!(l.tag_score("L-1", "python"), None);
    }
}
