//! Seed 001, "Evaluation & Tag Relevance Scoring": the per-(item, tag) EMA,
//! the average over the query's tags, the filter-or-boost decision, and the
//! auto-pin rules.

/// How fast scores adapt to new signal.
pub const EMA_ALPHA: f64 = 0.3;
/// Bounds that prevent runaway scores.
pub const SCORE_CLAMP: (f64, f64) = (-3.0, 3.0);
/// Weight of a judgement by the evaluator.
pub const EVALUATOR_WEIGHT: f64 = 1.0;
/// Weight of direct feedback.
pub const FEEDBACK_WEIGHT: f64 = 2.0;

/// Evidence needed before a lesson can be filtered.
pub const MIN_EVALS_FOR_FILTER: u32 = 3;
/// A lesson is filtered when its average is below this.
pub const NEGATIVE_SCORE_THRESHOLD: f64 = -0.1;
/// Boost/penalty weight applied to the RRF score.
pub const RELEVANCE_WEIGHT: f64 = 0.01;

/// Match-count auto-pin: shown this many times for a tag subset.
pub const AUTO_PIN_MATCHES: u32 = 15;
/// Tag-relevance auto-pin: average above this...
pub const AUTO_PIN_MIN_AVG: f64 = 0.6;
/// ...with at least this many evaluations.
pub const AUTO_PIN_MIN_EVALS: u32 = 5;
/// An auto-pinned lesson is unpinned when its average drops below this.
pub const AUTO_UNPIN_BELOW: f64 = 0.2;

/// What has been learned for one (item, tag).
#[derive(Debug, Clone, Copy, PartialEq, Default, serde::Serialize, serde::Deserialize)]
pub struct TagScore {
    /// EMA-smoothed relevance.
    pub score: f64,
    /// Times judged relevant with this tag.
    pub positive: u32,
    /// Times judged irrelevant with this tag.
    pub negative: u32,
}

impl TagScore {
    /// Evaluations in all.
    pub fn evals(&self) -> u32 {
        self.positive + self.negative
    }

    /// Applies one judgement: `raw` in `[-1, 1]` (positive means relevant)
    /// with `weight` ([`EVALUATOR_WEIGHT`] or [`FEEDBACK_WEIGHT`]).
    pub fn record(self, raw: f64, weight: f64) -> TagScore {
        TagScore {
            score: ema(self.score, raw, weight),
            positive: self.positive + u32::from(raw > 0.0),
            negative: self.negative + u32::from(raw < 0.0),
        }
    }
}

/// `new = old * (1 - alpha) + raw * alpha * weight`, clamped.
pub fn ema(old: f64, raw: f64, weight: f64) -> f64 {
    (old * (1.0 - EMA_ALPHA) + raw * EMA_ALPHA * weight).clamp(SCORE_CLAMP.0, SCORE_CLAMP.1)
}

/// `(avg_score, total_evals)` over the requested tags: the sum divided by the
/// number of requested tags, a tag without data counting 0.0. No tags: (0, 0).
pub fn average_over_tags<'a>(
    tags: impl IntoIterator<Item = &'a str>,
    lookup: impl Fn(&str) -> Option<TagScore>,
) -> (f64, u32) {
    let mut sum = 0.0;
    let mut evals = 0;
    let mut count = 0usize;
    for tag in tags {
        count += 1;
        if let Some(s) = lookup(tag) {
            sum += s.score;
            evals += s.evals();
        }
    }
    if count == 0 {
        (0.0, 0)
    } else {
        (sum / count as f64, evals)
    }
}

/// What tag relevance does to a lesson in search.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum TagVerdict {
    /// Enough evidence that it is irrelevant here.
    Filtered,
    /// Kept, with this added to its RRF score.
    Boost(f64),
}

/// Filter at `total_evals >= 3` and `avg < -0.1`; otherwise boost by
/// `avg / 3 * 0.01`.
pub fn verdict(avg: f64, total_evals: u32) -> TagVerdict {
    if total_evals >= MIN_EVALS_FOR_FILTER && avg < NEGATIVE_SCORE_THRESHOLD {
        TagVerdict::Filtered
    } else {
        TagVerdict::Boost(avg / 3.0 * RELEVANCE_WEIGHT)
    }
}

/// Match-count auto-pin.
pub fn auto_pin_by_matches(matches: u32) -> bool {
    matches >= AUTO_PIN_MATCHES
}

/// Tag-relevance auto-pin.
pub fn auto_pin_by_relevance(avg: f64, total_evals: u32) -> bool {
    avg > AUTO_PIN_MIN_AVG && total_evals >= AUTO_PIN_MIN_EVALS
}

/// Auto-unpin: only automatic pins, below 0.2.
pub fn auto_unpin(avg: f64, manually_pinned: bool) -> bool {
    !manually_pinned && avg < AUTO_UNPIN_BELOW
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) {
        assert!((a - b).abs() < 1e-3, "{a} != {b}");
    }

    #[test]
    fn ema_sequence_of_the_seed() {
        let one = TagScore::default().record(-1.0, EVALUATOR_WEIGHT);
        close(one.score, -0.300);
        let two = one.record(-1.0, EVALUATOR_WEIGHT);
        close(two.score, -0.510);
        assert_eq!((two.positive, two.negative), (0, 2));
        // Converges toward -1.0 and stays there.
        let mut s = TagScore::default();
        for _ in 0..100 {
            s = s.record(-1.0, EVALUATOR_WEIGHT);
        }
        close(s.score, -1.0);
        assert_eq!(s.negative, 100);
    }

    #[test]
    fn feedback_weighs_double_and_is_clamped() {
        close(TagScore::default().record(1.0, FEEDBACK_WEIGHT).score, 0.6);
        let mut s = TagScore {
            score: 2.9,
            ..TagScore::default()
        };
        for _ in 0..50 {
            s = s.record(1.0, 20.0);
        }
        close(s.score, 3.0);
    }

    #[test]
    fn first_worked_example_is_filtered() {
        let lookup = |tag: &str| match tag {
            "python" => Some(TagScore {
                score: -0.283,
                positive: 0,
                negative: 148,
            }),
            "github" => Some(TagScore {
                score: -0.584,
                positive: 0,
                negative: 197,
            }),
            _ => None,
        };
        let (avg, evals) = average_over_tags(["python", "github", "personal"], lookup);
        close(avg, -0.289);
        assert_eq!(evals, 345);
        assert_eq!(verdict(avg, evals), TagVerdict::Filtered);
    }

    #[test]
    fn second_worked_example_passes() {
        let lookup = |tag: &str| match tag {
            "acme" => Some(TagScore {
                score: 0.0,
                positive: 1,
                negative: 0,
            }),
            "frontend" => Some(TagScore::default()),
            _ => None,
        };
        let (avg, evals) = average_over_tags(["acme", "frontend"], lookup);
        close(avg, 0.0);
        assert_eq!(evals, 1);
        assert_eq!(verdict(avg, evals), TagVerdict::Boost(0.0));
    }

    #[test]
    fn state_table_of_the_seed() {
        assert_eq!(verdict(0.0, 0), TagVerdict::Boost(0.0));
        let TagVerdict::Boost(b) = verdict(0.9, 4) else {
            panic!()
        };
        close(b, 0.003);
        let TagVerdict::Boost(b) = verdict(-0.05, 10) else {
            panic!()
        };
        assert!(b < 0.0);
        assert_eq!(verdict(-0.5, 3), TagVerdict::Filtered);
        assert!(matches!(verdict(-0.5, 2), TagVerdict::Boost(_)));
        assert_eq!(average_over_tags([], |_| None), (0.0, 0));
    }

    #[test]
    fn auto_pin_rules() {
        assert!(!auto_pin_by_matches(14));
        assert!(auto_pin_by_matches(15));
        assert!(auto_pin_by_relevance(0.61, 5));
        assert!(!auto_pin_by_relevance(0.6, 5));
        assert!(!auto_pin_by_relevance(0.9, 4));
        assert!(auto_unpin(0.19, false));
        assert!(!auto_unpin(0.2, false));
        assert!(!auto_unpin(-1.0, true));
    }
}
