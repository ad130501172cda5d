//! Seed 003, "Decisions - TASK-1769955706": keyword-based similarity of a
//! learning to the task, and the effectiveness EMA.

use std::collections::HashSet;

/// Weight of keyword Jaccard similarity.
pub const KEYWORD_WEIGHT: f64 = 0.50;
/// Weight of context similarity.
pub const CONTEXT_WEIGHT: f64 = 0.30;
/// Weight of error-type similarity.
pub const ERROR_TYPE_WEIGHT: f64 = 0.20;
/// Smoothing of the effectiveness EMA.
pub const EFFECTIVENESS_ALPHA: f64 = 0.3;
/// Learnings shown per query ("here are 3 relevant learning(s)").
pub const MAX_LEARNINGS: usize = 3;
/// A learning is shown at this similarity or above.
pub const MIN_SIMILARITY: f64 = 0.15;

/// `|a ∩ b| / |a ∪ b|`; 0 when both are empty.
pub fn jaccard(a: &HashSet<String>, b: &HashSet<String>) -> f64 {
    let union = a.union(b).count();
    if union == 0 {
        return 0.0;
    }
    a.intersection(b).count() as f64 / union as f64
}

/// The share of `part` found in `whole`; 0 when `part` is empty. Used for
/// context and error type, where the learning's few words are looked for
/// in the query's many.
pub fn containment(part: &HashSet<String>, whole: &HashSet<String>) -> f64 {
    if part.is_empty() {
        return 0.0;
    }
    part.intersection(whole).count() as f64 / part.len() as f64
}

/// The three similarities of one learning.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LearningSimilarity {
    pub keyword: f64,
    pub context: f64,
    pub error_type: f64,
}

impl LearningSimilarity {
    /// `0.5 keyword + 0.3 context + 0.2 error type`.
    pub fn total(&self) -> f64 {
        self.keyword * KEYWORD_WEIGHT
            + self.context * CONTEXT_WEIGHT
            + self.error_type * ERROR_TYPE_WEIGHT
    }
}

/// Scores a learning given its term sets and the query's.
pub fn similarity(
    learning_keywords: &HashSet<String>,
    learning_context: &HashSet<String>,
    learning_error_type: &HashSet<String>,
    query_keywords: &HashSet<String>,
    query_context: &HashSet<String>,
) -> LearningSimilarity {
    LearningSimilarity {
        keyword: jaccard(learning_keywords, query_keywords),
        context: containment(learning_context, query_context),
        error_type: containment(learning_error_type, query_context),
    }
}

/// `alpha * new + (1 - alpha) * current`.
pub fn update_effectiveness(current: f64, new_score: f64) -> f64 {
    EFFECTIVENESS_ALPHA * new_score + (1.0 - EFFECTIVENESS_ALPHA) * current
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(words: &[&str]) -> HashSet<String> {
        words.iter().map(|w| w.to_string()).collect()
    }

    #[test]
    fn weights_are_the_seeds() {
        let s = LearningSimilarity {
            keyword: 1.0,
            context: 1.0,
            error_type: 1.0,
        };
        assert!((s.total() - 1.0).abs() < 1e-12);
        let s = LearningSimilarity {
            keyword: 0.5,
            context: 0.0,
            error_type: 1.0,
        };
        assert!((s.total() - 0.45).abs() < 1e-12);
        let s = LearningSimilarity {
            keyword: 0.0,
            context: 1.0,
            error_type: 0.0,
        };
        assert!((s.total() - 0.3).abs() < 1e-12);
    }

    #[test]
    fn jaccard_and_containment() {
        assert!(
            (jaccard(
                &set(&["import", "path"]),
                &set(&["import", "path", "error"])
            ) - 2.0 / 3.0)
                .abs()
                < 1e-12
        );
        assert_eq!(jaccard(&set(&[]), &set(&[])), 0.0);
        assert_eq!(
            containment(&set(&["importerror"]), &set(&["importerror", "fix"])),
            1.0
        );
        assert_eq!(containment(&set(&[]), &set(&["x"])), 0.0);
    }

    #[test]
    fn similarity_combines_the_three() {
        let s = similarity(
            &set(&["import", "path"]),
            &set(&["python"]),
            &set(&["importerror"]),
            &set(&["import", "path", "error", "fix"]),
            &set(&["python", "fix", "import", "path", "error"]),
        );
        assert!((s.keyword - 0.5).abs() < 1e-12);
        assert_eq!(s.context, 1.0);
        assert_eq!(s.error_type, 0.0);
        assert!((s.total() - 0.55).abs() < 1e-12);
    }

    #[test]
    fn effectiveness_ema_alpha_point_three() {
        assert!((update_effectiveness(0.5, 1.0) - 0.65).abs() < 1e-12);
        assert!((update_effectiveness(0.65, 0.0) - 0.455).abs() < 1e-12);
        let mut e = 0.0;
        for _ in 0..60 {
            e = update_effectiveness(e, 0.9);
        }
        assert!((e - 0.9).abs() < 1e-6);
    }
}
