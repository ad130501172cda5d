//! How often the judge contradicts itself, and the filter line that
//! implies.
//!
//! Seed 001 filters a lesson whose score (in the evaluator's unit) is below
//! -0.1 after 3 judged sessions. How far a relevant lesson's score wanders
//! below its mean depends on how often the judge is wrong: the seed's EMA
//! of verdicts that are each wrong with probability `e` has mean `1 - 2e`
//! for a relevant lesson and a standard deviation of
//! `sqrt(alpha / (2 - alpha)) x sqrt(1 - (1 - 2e)^2)` once it has a history.
//! With a judge wrong one time in five the seed's line is about two of
//! those standard deviations below a relevant lesson's mean; with a judge
//! wrong one time in three it is less than one, and the line filters
//! relevant lessons as often as irrelevant ones.
//!
//! memd does not know when the judge is wrong, but it sees how often the
//! judge disagrees with itself: two verdicts on one item in one context
//! (its own record there, on prompts that matched it well) disagree with
//! probability `2e(1 - e)` when the item's relevance there does not
//! change. (A verdict on a prompt that matched it only in passing also
//! says whether that prompt was about it, which changes from prompt to
//! prompt where the judge does not err; those are not counted.) From the
//! share of disagreeing pairs among all such pairs memd reads the judge's
//! noise, and filters only below [`NOISE_Z`] standard deviations under a
//! relevant lesson's mean, and never above the seed's line
//! ([`Agreement::filter_line`]). Until [`MIN_PAIRS`] pairs are seen the
//! seed's line holds as it is. Measured (the learning bench, every world):
//! BENCHMARKS.md, "Learning per context".

use super::tag_relevance::{TagScore, EMA_ALPHA, NEGATIVE_SCORE_THRESHOLD};

/// Pairs of verdicts on one item in one context needed before the judge's
/// noise moves the filter line.
pub const MIN_PAIRS: u64 = 100;

/// How many standard deviations of the judge's noise below a relevant
/// lesson's mean score the filter line sits: two, so that noise alone puts
/// a relevant lesson's score below it about one time in fifty.
pub const NOISE_Z: f64 = 2.0;

/// A judge wrong this share of the time or more is close to a coin: its
/// verdicts agree with the truth only `1 - 2e` = 0.1 more often than not,
/// the filter line falls below -0.7 and learning filters almost nothing
/// (`memctl doctor` says so). The error read from disagreement cannot
/// tell a judge wrong `e` of the time from one wrong `1 - e`: 0.5 is as
/// far as it goes.
pub const NEAR_COIN_ERROR: f64 = 0.45;

/// Pairs of verdicts on one item in one context, and how many of them
/// disagree, summed over the records counted ([`Agreement::of_record`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Agreement {
    /// Ordered pairs of distinct verdicts: `n (n - 1)` a record.
    pub pairs: u64,
    /// Of those, the pairs of one relevant and one irrelevant verdict:
    /// `2 p q` a record of `p` relevant and `q` irrelevant.
    pub disagreeing: u64,
}

impl Agreement {
    /// The pairs one record's verdicts make.
    pub fn of_record(score: &TagScore) -> Agreement {
        let (p, q) = (u64::from(score.positive), u64::from(score.negative));
        let n = p + q;
        Agreement {
            pairs: n * n.saturating_sub(1),
            disagreeing: 2 * p * q,
        }
    }

    /// Both counts of `other` added.
    pub fn plus(self, other: Agreement) -> Agreement {
        Agreement {
            pairs: self.pairs.saturating_add(other.pairs),
            disagreeing: self.disagreeing.saturating_add(other.disagreeing),
        }
    }

    /// Both counts of `other` taken away (it was counted in `self`).
    pub fn minus(self, other: Agreement) -> Agreement {
        Agreement {
            pairs: self.pairs.saturating_sub(other.pairs),
            disagreeing: self.disagreeing.saturating_sub(other.disagreeing),
        }
    }

    /// The share of pairs that disagree, once there are [`MIN_PAIRS`].
    pub fn disagreement(&self) -> Option<f64> {
        (self.pairs >= MIN_PAIRS).then(|| self.disagreeing as f64 / self.pairs as f64)
    }

    /// The judge's error rate `e` that gives this disagreement
    /// (`2e(1 - e)`), at most one half.
    pub fn judge_error(&self) -> Option<f64> {
        self.disagreement()
            .map(|d| (1.0 - (1.0 - 2.0 * d).max(0.0).sqrt()) / 2.0)
    }

    /// Whether the judge's error read is [`NEAR_COIN_ERROR`] or more:
    /// learning filters almost nothing on its word.
    pub fn near_coin(&self) -> bool {
        self.judge_error().is_some_and(|e| e >= NEAR_COIN_ERROR)
    }

    /// The line below which seed 001's rule filters: the seed's -0.1, or
    /// lower where the judge's noise would put a relevant lesson's score
    /// below it more often than [`NOISE_Z`] standard deviations allow.
    pub fn filter_line(&self) -> f64 {
        let Some(e) = self.judge_error() else {
            return NEGATIVE_SCORE_THRESHOLD;
        };
        let mean = 1.0 - 2.0 * e;
        let spread = (EMA_ALPHA / (2.0 - EMA_ALPHA)).sqrt() * (1.0 - mean * mean).sqrt();
        (mean - NOISE_Z * spread).min(NEGATIVE_SCORE_THRESHOLD)
    }
}

/// The judge's agreement and the filter line it gives, computed once a
/// change to it (queries read the line for every item with evidence).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Noise {
    agreement: Agreement,
    line: f64,
}

impl Default for Noise {
    /// Nothing seen: the seed's line.
    fn default() -> Self {
        Noise::of(Agreement::default())
    }
}

impl Noise {
    /// What `agreement` gives.
    pub fn of(agreement: Agreement) -> Noise {
        Noise {
            agreement,
            line: agreement.filter_line(),
        }
    }

    /// The pairs counted.
    pub fn agreement(&self) -> Agreement {
        self.agreement
    }

    /// [`Agreement::filter_line`].
    pub fn filter_line(&self) -> f64 {
        self.line
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The agreement of `pairs` pairs, `share` of them disagreeing.
    fn seen(pairs: u64, share: f64) -> Agreement {
        Agreement {
            pairs,
            disagreeing: (pairs as f64 * share).round() as u64,
        }
    }

    #[test]
    fn a_record_counts_its_pairs_of_verdicts() {
        let s = TagScore {
            positive: 3,
            negative: 1,
            ..TagScore::default()
        };
        // 4 verdicts: 12 ordered pairs, 6 of them one of each.
        assert_eq!(
            Agreement::of_record(&s),
            Agreement {
                pairs: 12,
                disagreeing: 6
            }
        );
        assert_eq!(Agreement::of_record(&TagScore::default()).pairs, 0);
        let two = Agreement::of_record(&s).plus(Agreement::of_record(&s));
        assert_eq!(
            two.minus(Agreement::of_record(&s)),
            Agreement::of_record(&s)
        );
    }

    #[test]
    fn the_seeds_line_holds_until_the_judge_is_seen_to_be_noisy() {
        // Too few pairs to say: the seed's line.
        assert_eq!(
            seen(MIN_PAIRS - 1, 0.5).filter_line(),
            NEGATIVE_SCORE_THRESHOLD
        );
        // A judge never contradicting itself, or wrong one time in five
        // (pairs disagree 2 x 0.2 x 0.8 = 0.32 of the time): the seed's.
        assert_eq!(seen(1000, 0.0).filter_line(), NEGATIVE_SCORE_THRESHOLD);
        assert_eq!(seen(1000, 0.32).filter_line(), NEGATIVE_SCORE_THRESHOLD);
        let e = seen(1000, 0.32).judge_error().unwrap();
        assert!((e - 0.2).abs() < 1e-9, "{e}");
        // Wrong about one time in three (0.455): a relevant lesson's mean
        // is 0.3 and its spread 0.40, so the line is two of those below.
        let line = seen(100_000, 0.455).filter_line();
        assert!((line + 0.501).abs() < 0.001, "{line}");
        // A judge no better than a coin: nothing is filtered on its word
        // short of the clamp.
        assert!(seen(1000, 0.5).filter_line() < -0.8);
        // Near a coin from a 45% judge on (pairs disagreeing 0.495).
        assert!(seen(1000, 0.5).near_coin());
        assert!(seen(1000, 0.497).near_coin());
        assert!(!seen(1000, 0.455).near_coin());
        assert!(!seen(MIN_PAIRS - 1, 0.5).near_coin());
    }
}
