//! Seed 000's rubric for patterns (with a bound from inline features
//! before exact scoring) and anti-patterns.

use crate::knowledge::item::Pattern;
use crate::knowledge::{Body, Item};
use crate::render::{Entry, Note, Section};
use crate::scoring::rubric::{
    self, score_anti_pattern, score_pattern, PatternScore, MAX_ANTI_PATTERNS,
};

use super::task::Task;
use super::{by_score_then_sim, dims, entry, top_k, QueryFacts};
use crate::engine::features::Features;
use crate::engine::Live;

/// Seed 000's rubric for one pattern with task dimension `task`, its
/// applications recorded through feedback counted (what selection ranks by
/// and `explain` shows).
pub(in crate::engine) fn score(
    facts: &QueryFacts<'_>,
    pattern: &Pattern,
    item: &Item,
    task: u8,
) -> PatternScore {
    let extra = facts.learned.times_applied(&item.id);
    score_pattern(pattern, &item.tags, task, extra, &facts.rubric)
}

pub(super) fn patterns(
    facts: &QueryFacts<'_>,
    items: &[&Live],
    task: &Task<'_>,
    out: &mut Vec<Entry>,
) {
    let learned_applications = !facts.learned.applications.is_empty();
    // An upper bound of each pattern's total from its inline features (a
    // Bloom hit counts as a match), best first.
    let mut bounded: Vec<(u8, &Live)> = items
        .iter()
        .filter_map(|live| {
            let Features::Pattern(f) = &live.features else {
                return None;
            };
            let points = task.points(live);
            // On a prompt, a pattern the prompt is not about is never shown.
            if facts.query.task_match && points == 0 {
                return None;
            }
            let product = if f.products & facts.product_bit != 0 {
                2
            } else if f.tags & facts.tag_bits != 0 {
                1
            } else {
                0
            };
            let role = if f.roles & facts.agent_bit != 0 || f.category & facts.domain_bits != 0 {
                2
            } else if f.adjacent & facts.agent_bit != 0 || f.category & facts.adjacent_bits != 0 {
                1
            } else {
                0
            };
            let times = if learned_applications {
                u32::MAX
            } else {
                f.times_applied
            };
            let bound = points
                + product
                + role
                + rubric::history_points(f.confidence, times)
                + rubric::recency_points(f.learned_on, facts.rubric.now);
            (bound >= rubric::FALLBACK_THRESHOLD).then_some((bound, *live))
        })
        .collect();
    bounded.sort_unstable_by_key(|b| std::cmp::Reverse(b.0));
    // Exact scores, in bound order, until no bound can reach the fifth best.
    let mut scored = Vec::new();
    let mut best_totals: Vec<u8> = Vec::new();
    for (bound, live) in bounded {
        if best_totals.len() >= rubric::MAX_PATTERNS
            && bound < best_totals[rubric::MAX_PATTERNS - 1]
        {
            break;
        }
        let Body::Pattern(p) = &live.item.body else {
            continue;
        };
        if facts.excluded(&live.item) {
            continue;
        }
        let s = task.similarity(live);
        let score = score(facts, p, &live.item, task.points(live));
        if score.total() < rubric::FALLBACK_THRESHOLD {
            continue;
        }
        let at = best_totals.partition_point(|&t| t >= score.total());
        best_totals.insert(at, score.total());
        scored.push((score, f64::from(score.total()), s, &live.item));
    }
    top_k(&mut scored, rubric::MAX_PATTERNS, by_score_then_sim);
    let ranked: Vec<(usize, u8)> = scored
        .iter()
        .enumerate()
        .map(|(i, c)| (i, c.0.total()))
        .collect();
    for (i, tier) in rubric::select_patterns(&ranked) {
        let (score, total, s, item) = &scored[i];
        let d = dims(&[
            ("task", f64::from(score.task)),
            ("product", f64::from(score.product)),
            ("role", f64::from(score.role)),
            ("history", f64::from(score.history)),
            ("recency", f64::from(score.recency)),
            ("similarity", *s),
        ]);
        out.push(entry(
            Section::Patterns,
            item,
            *total,
            d,
            Note::Pattern {
                total: score.total(),
                tier,
            },
        ));
    }
}

pub(super) fn anti_patterns(
    facts: &QueryFacts<'_>,
    items: &[&Live],
    task: &Task<'_>,
    out: &mut Vec<Entry>,
) {
    let mut scored: Vec<_> = items
        .iter()
        .filter_map(|live| {
            let s = task.similarity(live);
            let points = task.points(live);
            // Role fit gives at most 2: without task points the threshold
            // of 3 is out of reach.
            if points + 2 < rubric::ANTI_PATTERN_THRESHOLD {
                return None;
            }
            let Body::AntiPattern(a) = &live.item.body else {
                return None;
            };
            let score = score_anti_pattern(a, points, &facts.rubric);
            let about = score.task > 0 || !facts.query.task_match;
            (score.shown() && about && !facts.excluded(&live.item)).then_some((
                score,
                f64::from(score.total()),
                s,
                &live.item,
            ))
        })
        .collect();
    top_k(&mut scored, MAX_ANTI_PATTERNS, by_score_then_sim);
    for (score, total, s, item) in scored {
        let d = dims(&[
            ("task", f64::from(score.task)),
            ("role", f64::from(score.role)),
            ("similarity", s),
        ]);
        out.push(entry(Section::AntiPatterns, item, total, d, Note::None));
    }
}
