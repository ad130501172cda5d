//! Seed 001: lessons behind the structural gate, ranked by RRF, filtered
//! or boosted by learned tag relevance; pinned lessons first.

use crate::knowledge::Body;
use crate::render::{Entry, Note, Section};
use crate::scoring::lesson::{self, MAX_LESSONS, MAX_PINNED, MIN_TASK_SIMILARITY};
use crate::scoring::tag_relevance::{average_over_tags, verdict, TagVerdict};

use super::{dims, entry, rank_by, top_k, QueryFacts};
use crate::engine::features::Features;
use crate::engine::{Engine, Live};

/// Seed 001: gate, rank lexically and by tag overlap, fuse with RRF, then
/// filter or boost by learned tag relevance. Pinned lessons that pass the
/// gate and the filter come first, whatever the task.
pub(super) fn lessons(
    engine: &Engine,
    facts: &QueryFacts<'_>,
    items: &[&Live],
    sim: &dyn Fn(&Live) -> f64,
    out: &mut Vec<Entry>,
) {
    let gate = facts.gate();
    let learned = engine.learned();
    let mut pinned = Vec::new();
    let mut pool = Vec::new();
    let learned_pins = !learned.pins.is_empty();
    for live in items {
        let s = sim(live);
        let file_pin = matches!(live.features, Features::Lesson { pinned: true });
        if !file_pin && !learned_pins && s < MIN_TASK_SIMILARITY {
            continue;
        }
        let Body::Lesson(l) = &live.item.body else {
            continue;
        };
        if facts.excluded(&live.item) {
            continue;
        }
        if lesson::check_structural(&l.prerequisites, &gate).is_err() {
            continue;
        }
        let id = &live.item.id;
        let scores = learned.tag_scores(id);
        let (avg, evals) = average_over_tags(facts.tags.iter().map(String::as_str), |tag| {
            scores.and_then(|s| s.get(tag).copied())
        });
        let TagVerdict::Boost(boost) = verdict(avg, evals) else {
            continue;
        };
        let overlap = l
            .prerequisites
            .tags
            .iter()
            .chain(&live.item.tags)
            .filter(|t| facts.tags.iter().any(|q| q.eq_ignore_ascii_case(t)))
            .count();
        let is_pinned = l.pinned || learned.is_pinned(id, &facts.tags);
        if is_pinned {
            pinned.push((live, s, avg, evals));
        } else if s >= MIN_TASK_SIMILARITY {
            pool.push((live, s, overlap, avg, evals, boost));
        }
    }
    top_k(&mut pinned, MAX_PINNED, |a, b| {
        b.1.total_cmp(&a.1)
            .then_with(|| a.0.item.id.cmp(&b.0.item.id))
    });
    for (live, s, avg, evals) in pinned.into_iter().take(MAX_PINNED) {
        let d = dims(&[
            ("similarity", s),
            ("tag_avg", avg),
            ("tag_evals", f64::from(evals)),
            ("pinned", 1.0),
        ]);
        out.push(entry(
            Section::PinnedLessons,
            &live.item,
            1.0,
            d,
            Note::None,
        ));
    }
    // Ranking 1: lexical. Ranking 2: overlap of the lesson's tags with the
    // environment's (only lessons with some overlap are ranked).
    let lexical_rank = rank_by(&pool, |c| c.1, |_| true);
    let tag_rank = rank_by(&pool, |c| c.2 as f64, |c| c.2 > 0);
    let mut fused: Vec<(usize, f64)> = (0..pool.len())
        .map(|i| (i, lesson::rrf(&[lexical_rank[i], tag_rank[i]]) + pool[i].5))
        .collect();
    top_k(&mut fused, MAX_LESSONS, |a, b| {
        b.1.total_cmp(&a.1)
            .then_with(|| pool[a.0].0.item.id.cmp(&pool[b.0].0.item.id))
    });
    for (i, score) in fused.into_iter().take(MAX_LESSONS) {
        let (live, s, _, avg, evals, boost) = pool[i];
        let d = dims(&[
            ("similarity", s),
            ("lexical_rank", lexical_rank[i].map_or(0.0, |r| r as f64)),
            ("tag_rank", tag_rank[i].map_or(0.0, |r| r as f64)),
            ("tag_avg", avg),
            ("tag_evals", f64::from(evals)),
            ("boost", boost),
        ]);
        out.push(entry(Section::Lessons, &live.item, score, d, Note::None));
    }
}
