//! Seed 000's kinds: the agent's experience, patterns (with a bound
//! from inline features before exact scoring), anti-patterns, gotchas.

use std::collections::BTreeMap;
use std::sync::Arc;

use crate::knowledge::{Body, Item};
use crate::render::{Entry, Note, Section};
use crate::scoring::rubric::{
    self, match_gotcha, score_anti_pattern, score_pattern, MAX_ANTI_PATTERNS, MAX_GOTCHAS,
};

use super::{by_score_then_sim, dims, entry, top_k, QueryFacts};
use crate::engine::features::Features;
use crate::engine::{Engine, Live};

pub(super) fn experience(facts: &QueryFacts<'_>, items: &[&Live], out: &mut Vec<Entry>) {
    let Some(agent) = &facts.rubric.agent else {
        return;
    };
    // Not about any task: it belongs to the session's start.
    if facts.query.task_match {
        return;
    }
    let mut mine: Vec<&Arc<Item>> = items
        .iter()
        .map(|l| &l.item)
        .filter(|i| matches!(&i.body, Body::Experience(x) if &x.agent == agent))
        .filter(|i| !facts.excluded(i))
        .collect();
    mine.sort_by(|a, b| {
        (&a.source.file, a.source.pos.line).cmp(&(&b.source.file, b.source.pos.line))
    });
    for item in mine {
        out.push(entry(
            Section::Experience,
            item,
            1.0,
            BTreeMap::new(),
            Note::None,
        ));
    }
}

pub(super) fn patterns(
    engine: &Engine,
    facts: &QueryFacts<'_>,
    items: &[&Live],
    sim: &dyn Fn(&Live) -> f64,
    out: &mut Vec<Entry>,
) {
    let learned_applications = !engine.learned().applications.is_empty();
    // An upper bound of each pattern's total from its inline features (a
    // Bloom hit counts as a match), best first.
    let mut bounded: Vec<(u8, &Live)> = items
        .iter()
        .filter_map(|live| {
            let Features::Pattern(f) = &live.features else {
                return None;
            };
            let task = rubric::task_points(sim(live));
            // On a prompt, a pattern the prompt is not about is never shown.
            if facts.query.task_match && task == 0 {
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
            let bound = task
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
        let s = sim(live);
        let extra = engine.learned().times_applied(&live.item.id);
        let score = score_pattern(p, &live.item.tags, s, extra, &facts.rubric);
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
    sim: &dyn Fn(&Live) -> f64,
    out: &mut Vec<Entry>,
) {
    let mut scored: Vec<_> = items
        .iter()
        .filter_map(|live| {
            let s = sim(live);
            // Role fit gives at most 2: without task points the threshold
            // of 3 is out of reach.
            if rubric::task_points(s) + 2 < rubric::ANTI_PATTERN_THRESHOLD {
                return None;
            }
            let Body::AntiPattern(a) = &live.item.body else {
                return None;
            };
            let score = score_anti_pattern(a, s, &facts.rubric);
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

/// Seed 000's gotcha match, its task's technical area also met by a task
/// match of the gotcha's own text (the fused similarity at 1 task point or
/// more), so a gotcha is found by what it says, not only by its category's
/// word.
pub(in crate::engine) fn gotcha_match(
    category: Option<&str>,
    similarity: f64,
    facts: &QueryFacts<'_>,
) -> rubric::GotchaMatch {
    let mut m = match_gotcha(category, &facts.rubric);
    m.task_keyword |= rubric::task_points(similarity) >= 1;
    m
}

pub(super) fn gotchas(
    facts: &QueryFacts<'_>,
    items: &[&Live],
    sim: &dyn Fn(&Live) -> f64,
    out: &mut Vec<Entry>,
) {
    let mut scored: Vec<_> = items
        .iter()
        .filter_map(|live| {
            let s = sim(live);
            // Without a task match, the category must be one of the query's
            // words or domains: most gotchas leave here, unscored.
            if rubric::task_points(s) == 0 {
                match live.features {
                    Features::Gotcha { category: 0, .. } => return None,
                    Features::Gotcha {
                        category: h,
                        single_word: true,
                    } if !facts.gotcha_hashes.contains(&h) => return None,
                    _ => {}
                }
            }
            let Body::Gotcha(g) = &live.item.body else {
                return None;
            };
            let m = gotcha_match(g.category.as_deref(), s, facts);
            let about = m.task_keyword || !facts.query.task_match;
            (m.shown() && about && !facts.excluded(&live.item))
                .then(|| (m, f64::from(m.total()), s, &live.item))
        })
        .collect();
    top_k(&mut scored, MAX_GOTCHAS, by_score_then_sim);
    for (m, total, s, item) in scored {
        let d = dims(&[
            ("domain", f64::from(u8::from(m.domain))),
            ("task_keyword", f64::from(u8::from(m.task_keyword))),
            ("similarity", s),
        ]);
        out.push(entry(Section::Gotchas, item, total, d, Note::None));
    }
}
