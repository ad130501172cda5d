//! Seed 002: observations by recency, importance, agent and keywords.

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
    let mut scored: Vec<_> = items
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
            let mut s = observation::score(*kind, hours_ago, same_agent, 0.0);
            // The keyword match adds at most its weight: skip the text
            // search when even a full match cannot reach the threshold.
            if s.total() + observation::KEYWORD_WEIGHT < min {
                return None;
            }
            let Body::Observation(o) = &live.item.body else {
                return None;
            };
            s.keyword = observation::keyword_overlap(&o.content, &facts.observation_keywords);
            let total = s.total();
            (total >= min && !facts.excluded(&live.item)).then_some((live, s, total, hours_ago))
        })
        .collect();
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
