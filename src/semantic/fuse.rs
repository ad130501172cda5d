//! Fusing the lexical similarity (BM25F, normalised to `[0, 1]`) with the
//! embedding cosine into the one task similarity every kind is scored on.
//! The lexical score dominates: the cosine is a secondary signal that finds
//! paraphrases and reorders close calls, never a replacement (issue 12's
//! measurements: cosine alone, or rank fusion with equal weights, rank
//! worse than lexical alone). The constants were chosen on the labelled
//! set in `benches/relevance/` (`cargo bench --bench relevance`).

/// How the two similarities are fused.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Fusion {
    /// Weight of the lexical similarity.
    pub lexical: f32,
    /// Weight of the rescaled cosine.
    pub semantic: f32,
    /// Cosines at or below this say nothing: a static model's vectors all
    /// lean one way, so unrelated texts still have cosines well above 0.
    pub floor: f32,
}

/// Weight of the lexical similarity.
pub const LEXICAL_WEIGHT: f32 = 1.0;
/// Weight of the cosine above [`COSINE_FLOOR`], rescaled to `[0, 1]`.
pub const SEMANTIC_WEIGHT: f32 = 0.3;
/// The cosine below which texts are taken as unrelated.
pub const COSINE_FLOOR: f32 = 0.7;

// The lexical similarity dominates.
const _: () = assert!(SEMANTIC_WEIGHT < LEXICAL_WEIGHT);

impl Fusion {
    /// The fusion memd uses.
    pub const DEFAULT: Fusion = Fusion {
        lexical: LEXICAL_WEIGHT,
        semantic: SEMANTIC_WEIGHT,
        floor: COSINE_FLOOR,
    };

    /// The cosine's part, in `[0, 1]`: 0 at or below the floor, 1 at 1.
    pub fn semantic_part(&self, cosine: f32) -> f32 {
        ((cosine - self.floor) / (1.0 - self.floor)).clamp(0.0, 1.0)
    }

    /// The fused similarity, in `[0, 1]`.
    pub fn fuse(&self, lexical: f32, cosine: f32) -> f32 {
        (self.lexical * lexical + self.semantic * self.semantic_part(cosine)).clamp(0.0, 1.0)
    }
}

impl Default for Fusion {
    fn default() -> Self {
        Fusion::DEFAULT
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_lexical_similarity_dominates() {
        let f = Fusion::DEFAULT;
        // Unrelated by meaning: the lexical score stands as it is.
        assert_eq!(f.fuse(0.4, COSINE_FLOOR), 0.4 * LEXICAL_WEIGHT);
        // A paraphrase with no shared word can reach a task match, never
        // more than the semantic weight.
        assert!(f.fuse(0.0, 1.0) <= SEMANTIC_WEIGHT + 1e-6);
        assert!(f.fuse(0.0, 0.9) > 0.0);
        // The result stays a similarity.
        assert!(f.fuse(1.0, 1.0) <= 1.0 && f.fuse(0.0, -1.0) == 0.0);
    }
}
