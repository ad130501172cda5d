//! Seed 004: winning patterns when content is drafted; seeds as the
//! cold start.

use std::sync::Arc;

use crate::knowledge::{Body, Item};
use crate::protocol::Kind;
use crate::render::{Entry, Note, Section};
use crate::scoring::exemplar::{self, Candidate, MAX_COLD_START_SEEDS};
use crate::time::SECS_PER_DAY;

use super::super::Live;
use super::{dims, entry, top_k, QueryFacts};

/// Words that say the task drafts a piece of content, which is when seed
/// 004's winning patterns (or ideas from notes) are retrieved. The kinds of
/// the exemplars loaded count too.
const DRAFT_WORDS: &[&str] = &[
    "tweet",
    "reply",
    "post",
    "thread",
    "commit",
    "answer",
    "email",
    "announcement",
    "changelog",
    "comment",
    "draft",
    "newsletter",
    "blog",
];

/// Seed 004 retrieves when content is being drafted: the query asks for
/// exemplars or seeds, or its task names a kind of content.
pub(in crate::engine) fn drafting(facts: &QueryFacts<'_>, exemplars: &[&Live]) -> bool {
    let kinds = &facts.query.kinds;
    if kinds.contains(&Kind::Exemplar) || kinds.contains(&Kind::Seed) {
        return true;
    }
    if !kinds.is_empty() {
        return false;
    }
    let words = &facts.rubric.task_words;
    let names = |w: &str| {
        let singular = w.strip_suffix('s').unwrap_or(w);
        DRAFT_WORDS.contains(&w) || DRAFT_WORDS.contains(&singular)
    };
    words.iter().any(|w| names(w))
        || exemplars.iter().any(|live| match &live.item.body {
            Body::Exemplar(e) => e.kind.as_deref().is_some_and(|k| {
                words
                    .iter()
                    .any(|w| w.eq_ignore_ascii_case(k) || w.strip_suffix('s') == Some(k))
            }),
            _ => false,
        })
}

pub(super) fn winning_patterns(
    facts: &QueryFacts<'_>,
    exemplars: &[&Live],
    seeds: &[&Live],
    now: i64,
    out: &mut Vec<Entry>,
) {
    let candidates: Vec<Candidate<&Arc<Item>>> = exemplars
        .iter()
        .filter_map(|live| match &live.item.body {
            Body::Exemplar(e) => Some(Candidate {
                item: &live.item,
                performance_score: e.performance_score,
                days_since_posted: (now - e.posted_at) as f64 / SECS_PER_DAY,
            }),
            _ => None,
        })
        .collect();
    let any_retrievable =
        facts.wants(Kind::Exemplar) && !exemplar::retrieve(&candidates).is_empty();
    if any_retrievable {
        let retrieved = exemplar::retrieve_keeping(&candidates, |item| !facts.excluded(item));
        for r in retrieved {
            let d = dims(&[("engagement", r.engagement), ("decay", r.decay)]);
            out.push(entry(
                Section::WinningPatterns,
                r.item,
                r.weight,
                d,
                Note::None,
            ));
        }
        return;
    }
    if !facts.wants(Kind::Seed) {
        return;
    }
    let mut pending: Vec<(&Arc<Item>, f64)> = seeds
        .iter()
        .filter_map(|live| match &live.item.body {
            Body::Seed(s) if !facts.excluded(&live.item) => Some((&live.item, s.engagement_weight)),
            _ => None,
        })
        .collect();
    top_k(&mut pending, MAX_COLD_START_SEEDS, |a, b| {
        b.1.total_cmp(&a.1).then_with(|| a.0.id.cmp(&b.0.id))
    });
    for (item, weight) in pending.into_iter().take(MAX_COLD_START_SEEDS) {
        out.push(entry(
            Section::IdeasFromNotes,
            item,
            weight,
            dims(&[("engagement_weight", weight)]),
            Note::None,
        ));
    }
}
