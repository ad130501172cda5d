//! Issue 33's bars, read off one team's arms as the bench ran them, so a
//! run says which hold instead of leaving the arithmetic to its reader.
//!
//! Read on the `evaluate` arm against `off` (and `feedback`, `ideal` and
//! `oracle` where they ran): precision at least half the way from `off`'s
//! to the oracle's (or, where the ideal learner itself gets less than
//! that far, at least 90% of the ideal learner's gain), read twice: against
//! the ideal learner as the issue defines it (`ideal`, a lesson ruled out
//! on one more irrelevant verdict than relevant ones), and against the
//! most precise ideal learner whose recall is not below `off`'s (`ideal2`,
//! `ideal3`: ruled out on two or three more), since the recall bar holds
//! the evaluator to that too; recall not below
//! `off`'s; direct feedback at least as good as the evaluator in both;
//! after the drift, two thirds of the stale lessons stopped within
//! [`super::STALE_STOP_BOUND`] sessions and all within
//! [`STALE_STOP_ALL`], two thirds of the fresh ones shown within
//! [`super::FRESH_SHOW_BOUND`] and all within [`FRESH_SHOW_ALL`].
//!
//! The bars read the figures over every seed, as the issue states them.
//! Where one arm is read against another (recall against `off`'s, feedback
//! against the evaluator), the difference is also given seed by seed, its
//! mean and standard error ([`paired`]): a bar missed by less than that
//! error is missed within what the seeds vary by.

use super::{Arm, FRESH_SHOW_BOUND, STALE_STOP_BOUND};

/// Every stale lesson stops showing (as a kept one) within this many
/// sessions after the drift...
pub const STALE_STOP_ALL: usize = 15;
/// ...and every newly relevant one shows within this many.
pub const FRESH_SHOW_ALL: usize = 20;

/// What one arm gave, over every seed it played.
#[derive(Debug, Clone)]
pub struct Summary {
    pub arm: Arm,
    pub precision: f64,
    pub recall: f64,
    /// For each stale lesson, the last drift session that showed it as a
    /// kept one (0: none did).
    pub stale_each: Vec<usize>,
    /// For each fresh lesson, the drift session that first showed it.
    pub fresh_first: Vec<Option<usize>>,
    /// Precision and recall on each seed, in the order the seeds ran.
    pub per_seed: Vec<(f64, f64)>,
}

impl Summary {
    /// The stale lessons last shown as kept ones by drift session `bound`.
    pub fn stale_within(&self, bound: usize) -> usize {
        self.stale_each.iter().filter(|&&n| n <= bound).count()
    }

    /// The last drift session that showed a stale lesson as a kept one.
    pub fn last_stale(&self) -> usize {
        self.stale_each.iter().max().copied().unwrap_or(0)
    }

    /// The fresh lessons first shown by drift session `bound`.
    pub fn fresh_within(&self, bound: usize) -> usize {
        self.fresh_first
            .iter()
            .filter(|n| n.is_some_and(|n| n <= bound))
            .count()
    }
}

/// The mean of `b - a` over the seeds both ran, and its standard error
/// (`None` with fewer than two seeds): how far a difference between two
/// arms stands out from how much it varies from seed to seed. The seeds
/// are the same worlds and judges for both arms, so the difference is
/// read seed by seed (paired).
pub fn paired(a: &[f64], b: &[f64]) -> Option<(f64, f64)> {
    let d: Vec<f64> = a.iter().zip(b).map(|(a, b)| b - a).collect();
    let n = d.len() as f64;
    if d.len() < 2 {
        return None;
    }
    let mean = d.iter().sum::<f64>() / n;
    let var = d.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0);
    Some((mean, (var / n).sqrt()))
}

/// `paired` as the bars print it: `+0.004 ± 0.002 a seed`.
fn paired_text(a: &[f64], b: &[f64]) -> String {
    match paired(a, b) {
        Some((mean, se)) => format!("{mean:+.3} ± {se:.3} a seed"),
        None => "one seed".to_string(),
    }
}

/// One bar: what it asks, what was measured, whether it holds.
pub struct Bar {
    pub what: String,
    pub holds: bool,
}

/// The precision `evaluate` must reach: half the way from `off` to the
/// oracle, or 90% of the ideal learner's gain where the ideal learner gets
/// less far than that. `None` without the oracle's figure.
pub fn precision_bar(off: f64, oracle: Option<f64>, ideal: Option<f64>) -> Option<f64> {
    let half = off + (oracle? - off) / 2.0;
    Some(match ideal {
        Some(ideal) if ideal < half => off + 0.9 * (ideal - off),
        _ => half,
    })
}

/// Issue 33's bars for one team, from the arms that ran: empty without
/// `evaluate`; without `off`, only direct feedback's, which reads the
/// evaluator alone.
pub fn bars(arms: &[Summary]) -> Vec<Bar> {
    let find = |arm: Arm| arms.iter().find(|s| s.arm == arm);
    let Some(eval) = find(Arm::Evaluate) else {
        return Vec::new();
    };
    let precision = |s: &Summary| s.per_seed.iter().map(|p| p.0).collect::<Vec<f64>>();
    let recall = |s: &Summary| s.per_seed.iter().map(|p| p.1).collect::<Vec<f64>>();
    let feedback = find(Arm::Feedback).map(|feedback| Bar {
        what: format!(
            "feedback {:.3} / {:.3} >= evaluate's (paired: {} / {})",
            feedback.precision,
            feedback.recall,
            paired_text(&precision(eval), &precision(feedback)),
            paired_text(&recall(eval), &recall(feedback))
        ),
        holds: feedback.precision >= eval.precision && feedback.recall >= eval.recall,
    });
    let Some(off) = find(Arm::Off) else {
        return feedback.into_iter().collect();
    };
    let mut out = Vec::new();
    let oracle = find(Arm::Oracle).map(|s| s.precision);
    match precision_bar(
        off.precision,
        oracle,
        find(Arm::Ideal(1)).map(|s| s.precision),
    ) {
        Some(bar) => out.push(Bar {
            what: format!("precision {:.3} >= {bar:.3}", eval.precision),
            holds: eval.precision >= bar,
        }),
        None => out.push(Bar {
            what: "precision: needs the oracle arm".to_string(),
            holds: false,
        }),
    }
    // The same bar read against the ideal learner that also keeps recall
    // at learning off's (the most precise of the margins that ran).
    let at_recall = arms
        .iter()
        .filter(|s| matches!(s.arm, Arm::Ideal(_)) && s.recall >= off.recall)
        .max_by(|a, b| a.precision.total_cmp(&b.precision));
    if let Some((ideal, bar)) =
        at_recall.and_then(|i| Some((i, precision_bar(off.precision, oracle, Some(i.precision))?)))
    {
        out.push(Bar {
            what: format!(
                "precision {:.3} >= {bar:.3} (against {}, {:.3} / {:.3}, the ideal learner with recall not below off's)",
                eval.precision,
                ideal.arm.name(),
                ideal.precision,
                ideal.recall
            ),
            holds: eval.precision >= bar,
        });
    }
    out.push(Bar {
        what: format!(
            "recall {:.3} >= off's {:.3} (paired: {})",
            eval.recall,
            off.recall,
            paired_text(&recall(off), &recall(eval))
        ),
        holds: eval.recall >= off.recall,
    });
    out.extend(feedback);
    let two_thirds = |n: usize| (2 * n).div_ceil(3);
    let stale = eval.stale_each.len();
    out.push(Bar {
        what: format!(
            "stale stopped by {STALE_STOP_BOUND}: {}/{stale} (needs {})",
            eval.stale_within(STALE_STOP_BOUND),
            two_thirds(stale)
        ),
        holds: eval.stale_within(STALE_STOP_BOUND) >= two_thirds(stale),
    });
    out.push(Bar {
        what: format!("all by {STALE_STOP_ALL}: last {}", eval.last_stale()),
        holds: eval.stale_within(STALE_STOP_ALL) == stale,
    });
    let fresh = eval.fresh_first.len();
    out.push(Bar {
        what: format!(
            "fresh shown by {FRESH_SHOW_BOUND}: {}/{fresh} (needs {})",
            eval.fresh_within(FRESH_SHOW_BOUND),
            two_thirds(fresh)
        ),
        holds: eval.fresh_within(FRESH_SHOW_BOUND) >= two_thirds(fresh),
    });
    out.push(Bar {
        what: format!(
            "all by {FRESH_SHOW_ALL}: {} later or never",
            fresh - eval.fresh_within(FRESH_SHOW_ALL)
        ),
        holds: eval.fresh_within(FRESH_SHOW_ALL) == fresh,
    });
    out
}
