//! Seed 000's gotchas: the category matches the agent's domain or the
//! task, or the task matches the gotcha's own text.

use crate::knowledge::Body;
use crate::render::{Entry, Note, Section};
use crate::scoring::rubric::{self, match_gotcha, MAX_GOTCHAS};

use super::task::Task;
use super::{by_score_then_sim, dims, entry, top_k, QueryFacts};
use crate::engine::features::Features;
use crate::engine::Live;

/// Seed 000's gotcha match, its task's technical area also met by a task
/// match of the gotcha's own text (a task dimension of 1 point or more),
/// so a gotcha is found by what it says, not only by its category's word.
pub(in crate::engine) fn gotcha_match(
    category: Option<&str>,
    task: u8,
    facts: &QueryFacts<'_>,
) -> rubric::GotchaMatch {
    let mut m = match_gotcha(category, &facts.rubric);
    m.task_keyword |= task >= 1;
    m
}

pub(super) fn gotchas(
    facts: &QueryFacts<'_>,
    items: &[&Live],
    task: &Task<'_>,
    out: &mut Vec<Entry>,
) {
    if items.is_empty() {
        return;
    }
    let hashes = facts.gotcha_hashes();
    let mut scored: Vec<_> = items
        .iter()
        .filter_map(|live| {
            let s = task.similarity(live);
            let points = task.points(live);
            // Without a task match, the category must be one of the query's
            // words or domains: most gotchas leave here, unscored.
            if points == 0 {
                match live.features {
                    Features::Gotcha { category: 0, .. } => return None,
                    Features::Gotcha {
                        category: h,
                        single_word: true,
                    } if !hashes.contains(&h) => return None,
                    _ => {}
                }
            }
            let Body::Gotcha(g) = &live.item.body else {
                return None;
            };
            let m = gotcha_match(g.category.as_deref(), points, facts);
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
