//! The decision to show on a prompt ([`relevance`]): one list across the
//! kinds scored on the task, one threshold, one cap. Each candidate's
//! outcome is kept ([`Considered`]) for `explain` to format.

use crate::engine::relevance::{self, Evidence, CANDIDATES, MAX_SHOWN, SHOW_AT};
use crate::engine::{is_embedded, Decision, Engine, Live, ScopeId};
use crate::render::{Entry, Section};
use crate::text::bm25::Similarities;

/// The decision's view of a prompt: the [`CANDIDATES`] items of the kinds
/// scored on the task most similar to it, as the query's scope sees them,
/// each with its evidence and estimate, computed once; selection reads
/// their task dimension from it and `explain` their estimates.
pub(in crate::engine) struct Candidates<'a> {
    decision: Decision<'a>,
    /// Most similar first, each with its evidence and estimate.
    best: Vec<(&'a Live, Evidence, f64)>,
}

impl<'a> Candidates<'a> {
    pub(in crate::engine) fn new(
        engine: &'a Engine,
        task: &str,
        sims: &'a Similarities,
        scope: ScopeId,
    ) -> Self {
        Candidates::top(engine, task, sims, scope, CANDIDATES)
    }

    /// The `limit` items most similar to `task` (what the relevance bench
    /// fits the model on, and [`Candidates::new`] takes [`CANDIDATES`] of).
    pub(in crate::engine) fn top(
        engine: &'a Engine,
        task: &str,
        sims: &'a Similarities,
        scope: ScopeId,
        limit: usize,
    ) -> Self {
        let decision = engine.decision(task, sims);
        let best = engine
            .ranked(sims, limit, scope, |live| is_embedded(live.kind))
            .into_iter()
            .map(|(_, live)| {
                let (evidence, p) = decision.estimate(live);
                (live, evidence, p)
            })
            .collect();
        Candidates { decision, best }
    }

    /// The candidates, most similar first, each with its evidence and
    /// estimate.
    pub(in crate::engine) fn best(&self) -> &[(&'a Live, Evidence, f64)] {
        &self.best
    }

    /// `live`'s evidence and estimate, when it is a candidate.
    fn of(&self, live: &Live) -> Option<(Evidence, f64)> {
        self.best
            .iter()
            .find(|(c, _, _)| c.doc == live.doc)
            .map(|&(_, evidence, p)| (evidence, p))
    }

    /// The evidence for `live` and its estimate (a candidate's as it was
    /// computed; another's computed now).
    pub(in crate::engine) fn estimate(&self, live: &Live) -> (Evidence, f64) {
        self.of(live)
            .unwrap_or_else(|| self.decision.estimate(live))
    }

    /// Whether `live` is one of the candidates.
    pub(in crate::engine) fn has(&self, live: &Live) -> bool {
        self.of(live).is_some()
    }

    /// Seed 000's task dimension of `live` on this prompt: its estimate's
    /// level ([`relevance::TASK_LEVELS`]), 0 outside the candidates.
    pub(in crate::engine) fn points(&self, live: &Live) -> u8 {
        self.of(live).map_or(0, |(_, p)| relevance::task_points(p))
    }
}

/// What the decision made of one candidate.
#[derive(Debug, Clone)]
pub(in crate::engine) struct Considered {
    pub(in crate::engine) id: String,
    pub(in crate::engine) evidence: Evidence,
    /// The estimate that it is about the prompt.
    pub(in crate::engine) estimate: f64,
    /// Its place among the candidates, best estimate first (1-based).
    pub(in crate::engine) rank: usize,
    pub(in crate::engine) outcome: Outcome,
}

/// Whether the decision kept a candidate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(in crate::engine) enum Outcome {
    Shown,
    /// Its estimate is below [`SHOW_AT`].
    Below,
    /// [`MAX_SHOWN`] better candidates took the places.
    OverCap,
}

/// Whether the decision reads an entry of `section`: the kinds scored on
/// the task (patterns, anti-patterns, gotchas, lessons). Pinned lessons,
/// experience and the other seeds' kinds are left to their own rules.
fn decided(section: Section) -> bool {
    matches!(
        section,
        Section::Patterns | Section::AntiPatterns | Section::Gotchas | Section::Lessons
    )
}

/// Of what the kinds scored on the task selected, only those whose
/// estimate reaches [`SHOW_AT`] stay, at most [`MAX_SHOWN`] across kinds,
/// best estimate first. Each kept entry carries its estimate as the
/// `relevance` dimension. Returns every candidate's outcome.
pub(super) fn decide(
    engine: &Engine,
    candidates: &Candidates<'_>,
    scope: ScopeId,
    out: &mut Vec<Entry>,
) -> Vec<Considered> {
    if !out.iter().any(|e| decided(e.section)) {
        return Vec::new();
    }
    let mut estimates: Vec<(Evidence, f64, usize)> = out
        .iter()
        .enumerate()
        .filter(|(_, e)| decided(e.section))
        .map(|(i, e)| {
            let (evidence, p) = engine
                .live_in(&e.item.id, scope)
                .map_or((Evidence::default(), 0.0), |live| candidates.estimate(live));
            (evidence, p, i)
        })
        .collect();
    estimates.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.2.cmp(&b.2)));
    let mut keep: Vec<bool> = out.iter().map(|e| !decided(e.section)).collect();
    let mut considered = Vec::with_capacity(estimates.len());
    let mut shown = 0;
    for (rank, &(evidence, p, i)) in estimates.iter().enumerate() {
        let outcome = if p < SHOW_AT {
            Outcome::Below
        } else if shown >= MAX_SHOWN {
            Outcome::OverCap
        } else {
            shown += 1;
            keep[i] = true;
            out[i].dimensions.insert("relevance".to_string(), p);
            Outcome::Shown
        };
        considered.push(Considered {
            id: out[i].item.id.clone(),
            evidence,
            estimate: p,
            rank: rank + 1,
            outcome,
        });
    }
    let mut i = 0;
    out.retain(|_| {
        let k = keep[i];
        i += 1;
        k
    });
    considered
}

/// How the decision's threshold and cap read, for `explain`.
pub(in crate::engine) fn rule() -> String {
    format!(
        "the prompt's block keeps items whose estimate is at or above {SHOW_AT}, at most {MAX_SHOWN} across kinds, best estimate first (model: {})",
        relevance::MODEL_FITTED
    )
}
