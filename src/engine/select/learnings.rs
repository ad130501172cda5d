//! Seed 003: learnings by keyword, context and error-type similarity.

use crate::knowledge::Body;
use crate::protocol::Kind;
use crate::render::{Entry, Note, Section};
use crate::scoring::learning::{self as learning_policy, MAX_LEARNINGS, MIN_SIMILARITY};
use crate::text::Field;

use super::{dims, entry, top_k, QueryFacts};
use crate::engine::features::Features;
use crate::engine::Engine;

/// Seed 003. Only a learning that shares a term with the query's context
/// (a superset of its keywords) can score above zero, so the candidates
/// come from the text index's postings, not from a scan.
pub(super) fn learnings(engine: &Engine, facts: &QueryFacts<'_>, out: &mut Vec<Entry>) {
    let (keyword_terms, context_terms) = (facts.keyword_terms(), facts.context_terms());
    let scope = engine.scope_of(facts.query);
    let docs = engine
        .index
        .docs_containing(context_terms, &[Field::Keywords, Field::Context]);
    let mut scored: Vec<_> = docs
        .into_iter()
        .filter_map(|doc| engine.live_by_doc(doc))
        .filter(|live| live.kind == Kind::Learning && !facts.excluded(&live.item))
        .filter(|live| engine.visible(live, scope))
        .filter_map(|live| {
            let (Body::Learning(l), Features::Learning(t)) = (&live.item.body, &live.features)
            else {
                return None;
            };
            let s = learning_policy::similarity(
                &t.keywords,
                &t.context,
                &t.error_type,
                keyword_terms,
                context_terms,
            );
            let total = s.total();
            // On a prompt, the prompt's words must be among its keywords.
            let about = s.keyword > 0.0 || !facts.query.task_match;
            (total >= MIN_SIMILARITY && about).then_some((live, s, total, l))
        })
        .collect();
    top_k(&mut scored, MAX_LEARNINGS, |a, b| {
        b.2.total_cmp(&a.2)
            .then(b.3.severity.cmp(&a.3.severity))
            .then_with(|| a.0.item.id.cmp(&b.0.item.id))
    });
    for (live, s, total, l) in scored.into_iter().take(MAX_LEARNINGS) {
        let effectiveness = facts
            .learned
            .applications(&live.item.id)
            .effectiveness
            .or(l.effectiveness);
        let mut d = dims(&[
            ("keyword", s.keyword),
            ("context", s.context),
            ("error_type", s.error_type),
        ]);
        if let Some(e) = effectiveness {
            d.insert("effectiveness".into(), e);
        }
        let note = Note::Learning {
            relevance: total,
            effectiveness,
        };
        out.push(entry(Section::Learnings, &live.item, total, d, note));
    }
}
