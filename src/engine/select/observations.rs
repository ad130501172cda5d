//! Seed 002: observations by recency, importance, agent and keywords.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use crate::knowledge::Body;
use crate::render::{Entry, Note, Section};
use crate::scoring::observation::{self, MAX_OBSERVATIONS};
use crate::time::SECS_PER_HOUR;

use super::super::Live;
use super::{dims, entry, top_k, QueryFacts};
use crate::engine::features::Features;

pub(super) fn observations(
    facts: &QueryFacts<'_>,
    items: &[&Live],
    now: i64,
    out: &mut Vec<Entry>,
) {
    let min = observation::min_score(facts.query.mode);
    // Each observation's score without the keyword match, which adds at
    // most its weight: those that cannot reach the threshold even with it
    // leave here.
    let bounded: Vec<_> = items
        .iter()
        .filter_map(|live| {
            let Features::Observation {
                created_at,
                kind,
                agent,
            } = &live.features
            else {
                return None;
            };
            let hours_ago = (now - created_at) as f64 / SECS_PER_HOUR;
            // Agents compare by the 64-bit hash of their normalised name.
            let same_agent = *agent != 0 && *agent == facts.agent_hash;
            let s = observation::score(*kind, hours_ago, same_agent, 0.0);
            let bound = s.total() + observation::KEYWORD_WEIGHT;
            (bound >= min && !facts.excluded(&live.item)).then_some(ByBound {
                bound,
                observation: (live, s, hours_ago),
            })
        })
        .collect();
    // The keyword match (a text search) in bound order, until no bound can
    // reach the fifth best total: a heap, as only the first few are read.
    let mut bounded = BinaryHeap::from(bounded);
    let mut scored = Vec::new();
    let mut best_totals: Vec<f64> = Vec::new();
    while let Some(ByBound {
        bound,
        observation: (live, mut s, hours_ago),
    }) = bounded.pop()
    {
        if best_totals.len() >= MAX_OBSERVATIONS && bound < best_totals[MAX_OBSERVATIONS - 1] {
            break;
        }
        let Body::Observation(o) = &live.item.body else {
            continue;
        };
        s.keyword = facts.observation_keywords().overlap(&o.content);
        let total = s.total();
        if total >= min {
            let at = best_totals.partition_point(|&t| t >= total);
            best_totals.insert(at, total);
            best_totals.truncate(MAX_OBSERVATIONS);
            scored.push((live, s, total, hours_ago));
        }
    }
    top_k(&mut scored, MAX_OBSERVATIONS, |a, b| {
        b.2.total_cmp(&a.2)
            .then_with(|| a.0.item.id.cmp(&b.0.item.id))
    });
    for (live, s, total, hours_ago) in scored {
        let d = dims(&[
            ("recency", s.recency),
            ("importance", s.importance),
            ("agent", s.agent),
            ("keyword", s.keyword),
        ]);
        out.push(entry(
            Section::RecentContext,
            &live.item,
            total,
            d,
            Note::Observation { hours_ago },
        ));
    }
}

/// An observation under its score's upper bound, ordered by that bound
/// alone.
struct ByBound<T> {
    bound: f64,
    observation: T,
}

impl<T> PartialEq for ByBound<T> {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl<T> Eq for ByBound<T> {}

impl<T> PartialOrd for ByBound<T> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl<T> Ord for ByBound<T> {
    fn cmp(&self, other: &Self) -> Ordering {
        self.bound.total_cmp(&other.bound)
    }
}
