//! What is achievable, played on the same sessions, so that every arm's
//! figures can be read as a share of it:
//!
//! - `oracle`: of what retrieval reaches (a prompt's top [`REACH`] search
//!   hits that are lessons, the set recall is read against), shows the
//!   relevant ones, at most [`MAX_LESSONS`] a prompt. Its precision is 1
//!   by construction; its recall is what the slots allow.
//! - `ideal`: a learner with a perfect memory and the evaluator arm's
//!   judge (the same wrong verdicts, session by session), over memd's own
//!   order with nothing learned (read from a daemon that never learns,
//!   [`ORDER_DEPTH`](super::ORDER_DEPTH) deep). It shows the first [`MAX_LESSONS`] its
//!   verdicts do not rule out: a lesson is skipped when its verdicts in
//!   this repository are on balance irrelevant or, with none here, when its
//!   verdicts in every repository are (`ideal`: one more irrelevant than
//!   relevant; `ideal2`, `ideal3`: two or three more, a learner that gives
//!   a lesson judged wrongly once another chance). After each session every lesson it
//!   showed is judged against the session's prompts, as `memctl evaluate`
//!   judges them. Its base is the `off` arm: the same order, nothing
//!   learned.
//! - `literal`: seed 001's rule alone, over the same order and with the same
//!   judge: each (lesson, repository) has the seed's EMA of its verdicts
//!   there ([`TagScore::record`], evaluator weight), and a lesson is
//!   skipped once that score is below the seed's -0.1 after its 3 judged
//!   sessions. Nothing else: no re-check of a skipped lesson, no wider
//!   scope, no line read from the judge's noise. What memd's departures
//!   from the seed (BENCHMARKS.md, "Learning per context") are read
//!   against.

use std::collections::{BTreeSet, HashMap};

use memd::engine::{Engine, GLOBAL};
use memd::learning::tag_relevance::{
    TagScore, EVALUATOR_WEIGHT, MIN_EVALS_FOR_FILTER, NEGATIVE_SCORE_THRESHOLD,
};
use memd::scoring::lesson::MAX_LESSONS;

use super::{judge, judge_error, relevant, Arm, Drift, Outcome, Run, REACH};
use crate::world::{Lesson, Repo};

/// One simulated arm and what it has learned.
pub struct Sim<'w> {
    arm: Arm,
    seed: u64,
    repos: &'w [Repo],
    lessons: &'w [Lesson],
    engine: &'w Engine,
    pub drift: Option<Drift>,
    /// Sum of verdicts (+1 relevant, -1 not) per (lesson, repository).
    here: HashMap<(String, usize), i32>,
    /// Sum of verdicts per lesson in every repository.
    everywhere: HashMap<String, i32>,
    /// Seed 001's score per (lesson, repository) (the `literal` arm).
    seed_scores: HashMap<(String, usize), TagScore>,
    /// The daemon that gives memd's order (the ideal learner's).
    order: Option<Run<'w>>,
}

impl<'w> Sim<'w> {
    pub fn new(
        arm: Arm,
        seed: u64,
        repos: &'w [Repo],
        lessons: &'w [Lesson],
        engine: &'w Engine,
        order: Option<Run<'w>>,
    ) -> Sim<'w> {
        Sim {
            arm,
            seed,
            repos,
            lessons,
            engine,
            drift: None,
            here: HashMap::new(),
            everywhere: HashMap::new(),
            seed_scores: HashMap::new(),
            order,
        }
    }

    pub fn stop(self) {
        if let Some(run) = self.order {
            run.stop();
        }
    }

    fn lesson(&self, id: &str) -> Option<&'w Lesson> {
        self.lessons.iter().find(|l| l.id == id)
    }

    fn relevant(&self, lesson: &Lesson, repo: usize, topic: usize) -> bool {
        relevant(self.drift.as_ref(), self.repos, lesson, repo, topic)
    }

    /// Whether the learner's verdicts rule `lesson` out in `repo`: they
    /// are its margin ([`Arm::Ideal`]) more irrelevant than relevant
    /// there or, with none there, everywhere; for the `literal` arm, the
    /// seed's filter on its score there.
    fn ruled_out(&self, lesson: &str, repo: usize) -> bool {
        let margin = match self.arm {
            Arm::Ideal(margin) => margin,
            Arm::Literal => {
                return self
                    .seed_scores
                    .get(&(lesson.to_string(), repo))
                    .is_some_and(|s| {
                        f64::from(s.evals()) >= MIN_EVALS_FOR_FILTER
                            && s.score < NEGATIVE_SCORE_THRESHOLD
                    })
            }
            _ => return false,
        };
        match self.here.get(&(lesson.to_string(), repo)) {
            Some(&sum) => sum <= -margin,
            None => self
                .everywhere
                .get(lesson)
                .is_some_and(|&sum| sum <= -margin),
        }
    }

    /// Plays one session: nothing at its start, up to [`MAX_LESSONS`] on
    /// each prompt, then the judge's verdicts (the learners).
    pub fn session(&mut self, n: usize, repo: usize, prompts: &[(usize, String)]) -> Outcome {
        let id = format!("{}-{}-{n}", self.arm.name(), self.seed);
        let mut out = Outcome::default();
        let mut reachable = BTreeSet::new();
        for (p, (topic, prompt)) in prompts.iter().enumerate() {
            let reached: Vec<&Lesson> = self
                .engine
                .search(prompt, REACH, GLOBAL)
                .iter()
                .filter_map(|hit| self.lesson(&hit.id))
                .collect();
            let shown: Vec<&Lesson> = match &self.order {
                Some(run) => run
                    .order(prompt, &run.cwd(repo), &format!("{id}-{p}"))
                    .iter()
                    .filter_map(|id| self.lesson(id))
                    .filter(|l| !self.ruled_out(&l.id, repo))
                    .take(MAX_LESSONS)
                    .collect(),
                None => reached
                    .iter()
                    .copied()
                    .filter(|l| self.relevant(l, repo, *topic))
                    .take(MAX_LESSONS)
                    .collect(),
            };
            out.misses.prompts += 1;
            out.misses.short += usize::from(shown.len() < MAX_LESSONS);
            for l in shown {
                out.shown_on_prompt(l, self.relevant(l, repo, *topic), *topic);
            }
            reachable.extend(
                reached
                    .iter()
                    .filter(|l| self.relevant(l, repo, *topic))
                    .map(|l| l.id.clone()),
            );
        }
        out.reachable = reachable.len();
        out.reached = reachable.iter().filter(|r| out.ids.contains(*r)).count();
        if matches!(self.arm, Arm::Ideal(_) | Arm::Literal) {
            for lesson in &out.ids {
                let l = self.lesson(lesson).unwrap();
                let truth = prompts.iter().any(|(t, _)| self.relevant(l, repo, *t));
                let verdict = if judge::verdict(&id, lesson, truth, judge_error()) {
                    1
                } else {
                    -1
                };
                if self.arm == Arm::Literal {
                    let score = self.seed_scores.entry((lesson.clone(), repo)).or_default();
                    *score = score.record(f64::from(verdict), EVALUATOR_WEIGHT);
                } else {
                    *self.here.entry((lesson.clone(), repo)).or_default() += verdict;
                    *self.everywhere.entry(lesson.clone()).or_default() += verdict;
                }
            }
        }
        out
    }
}
