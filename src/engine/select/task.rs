//! How a query's task matches an item, read once by every kind: the task
//! similarity (for order and the dimensions shown) and seed 000's task
//! dimension A (0..=3). A is [`task_points`] of the similarity, or, when
//! the decision to show decides a prompt, the level of the item's estimate
//! ([`relevance::TASK_LEVELS`](crate::engine::relevance::TASK_LEVELS)):
//! the rubric keeps its shape and its thresholds either way.
//!
//! Seed 001's lessons read their task band ([`Task::band`]) from the
//! similarity's cut-offs either way: the decision gates what seed 001
//! ordered, so learned relevance orders and filters the same pool as on
//! `memd query`, not only the decision's few candidates.

use crate::engine::Live;
use crate::scoring::rubric::task_points;
use crate::text::bm25::Similarities;
use crate::text::DocId;

use super::decision::Candidates;

pub(in crate::engine) struct Task<'a> {
    sims: &'a Similarities,
    /// The decision's candidates, when it decides the prompt.
    decided: Option<&'a Candidates<'a>>,
}

impl<'a> Task<'a> {
    /// The task as `sims` has it, the task dimension read from `decided`
    /// when given.
    pub(in crate::engine) fn new(
        sims: &'a Similarities,
        decided: Option<&'a Candidates<'a>>,
    ) -> Self {
        Task { sims, decided }
    }

    /// The task similarity of `live`.
    pub(in crate::engine) fn similarity(&self, live: &Live) -> f64 {
        f64::from(self.sims.get(live.doc))
    }

    /// The decision's candidates, when it reads the task dimension.
    pub(in crate::engine) fn decided(&self) -> Option<&'a Candidates<'a>> {
        self.decided
    }

    /// Seed 001's task band of a lesson, 0..=3 (0: not a candidate on
    /// this prompt): [`task_points`] of the similarity, also when the
    /// decision decides the prompt. Chosen on two worlds
    /// (BENCHMARKS.md, the decision to show): with the estimate's levels
    /// instead, learning moved the learning bench's precision of shown
    /// lessons by +0.025 over learning off, with these by +0.075.
    pub(in crate::engine) fn band(&self, live: &Live) -> u8 {
        self.band_of(live.doc)
    }

    /// [`Task::band`] of the item of text-index document `doc`.
    pub(in crate::engine) fn band_of(&self, doc: DocId) -> u8 {
        task_points(f64::from(self.sims.get(doc)))
    }

    /// Seed 000's task dimension A of `live`: 0..=3.
    pub(in crate::engine) fn points(&self, live: &Live) -> u8 {
        match self.decided {
            Some(candidates) => candidates.points(live),
            None => task_points(self.similarity(live)),
        }
    }
}
