//! Seed 003, "Decisions - TASK-1769955706": keyword-based similarity of a
//! learning to the task, and the effectiveness EMA.

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

/// Sets are sorted slices without repeats (of term ids, in the engine):
/// intersections are a merge, with no hashing.
fn intersection_len<T: Ord>(a: &[T], b: &[T]) -> usize {
    let (mut i, mut j, mut n) = (0, 0, 0);
    while i < a.len() && j < b.len() {
        match a[i].cmp(&b[j]) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                n += 1;
                i += 1;
                j += 1;
            }
        }
    }
    n
}

/// `|a ∩ b| / |a ∪ b|` of two sorted sets; 0 when both are empty.
pub fn jaccard<T: Ord>(a: &[T], b: &[T]) -> f64 {
    let common = intersection_len(a, b);
    let union = a.len() + b.len() - common;
    if union == 0 {
        return 0.0;
    }
    common as f64 / union as f64
}

/// The share of sorted set `part` found in sorted set `whole`; 0 when `part`
/// is empty. Used for context and error type, where the learning's few
/// words are looked for in the query's many.
pub fn containment<T: Ord>(part: &[T], whole: &[T]) -> f64 {
    if part.is_empty() {
        return 0.0;
    }
    intersection_len(part, whole) as f64 / part.len() as f64
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

/// Scores a learning given its term sets and the query's (sorted sets).
pub fn similarity<T: Ord>(
    learning_keywords: &[T],
    learning_context: &[T],
    learning_error_type: &[T],
    query_keywords: &[T],
    query_context: &[T],
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

    fn set(words: &[&'static str]) -> Vec<&'static str> {
        let mut v = words.to_vec();
        v.sort();
        v.dedup();
        v
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
