//! The decision to show an item on a prompt: an estimate of the
//! probability that the item is about the prompt, from evidence that means
//! the same on every prompt and every corpus, and one threshold and cap
//! across kinds.
//!
//! The evidence for a candidate ([`Evidence`]):
//! - `lexical`: the idf-weighted share of the prompt's *known* words the
//!   item covers (the text index's similarity);
//! - `covered`: the same share of *all* the prompt's informative words,
//!   the ones no item holds counted as rare words: a prompt whose words the
//!   knowledge has never seen is about nothing in it, however well an item
//!   covers its one known word;
//! - `cosine`: the semantic tier's cosine (0 without the tier);
//! - `named`: the idf-weighted share of the item's headline (its title or
//!   name, a lesson's first sentence) that the prompt names;
//! - `lead`: the candidate's similarity over the best candidate's.
//!
//! They are combined by a logistic model whose weights ([`WEIGHTS`],
//! [`WEIGHTS_LEXICAL`] without the tier) were fitted by `cargo bench
//! --bench relevance -- fit` on the fit half of the man-page set (real
//! manual pages' pitfalls, notes and examples, 2,426 items, prompts judged
//! by pooling) and are reported on its other half and on the hand-written
//! set, which played no part in the fit.

use crate::knowledge::{Body, Item};
use crate::text::bm25::{PromptTerms, TextIndex};

/// What the decision reads of one candidate.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Evidence {
    pub lexical: f64,
    pub covered: f64,
    pub cosine: f64,
    pub named: f64,
    pub lead: f64,
}

impl Evidence {
    /// The features in the model's order.
    pub fn features(&self) -> [f64; FEATURES] {
        [
            self.lexical,
            self.covered,
            self.cosine,
            self.named,
            self.lead,
        ]
    }

    /// Names of the features, in the model's order (for explain and the
    /// bench).
    pub const NAMES: [&'static str; FEATURES] = ["lexical", "covered", "cosine", "named", "lead"];
}

/// Number of features.
pub const FEATURES: usize = 5;

/// A logistic model: the intercept, then one weight per feature.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Model {
    pub intercept: f64,
    pub weights: [f64; FEATURES],
}

impl Model {
    /// The estimated probability that the item is about the prompt.
    pub fn probability(&self, evidence: &Evidence) -> f64 {
        let z = self.intercept
            + self
                .weights
                .iter()
                .zip(evidence.features())
                .map(|(w, x)| w * x)
                .sum::<f64>();
        1.0 / (1.0 + (-z).exp())
    }
}

/// The model with the semantic tier on. Fitted on the man-page set's fit
/// half (see the module doc and BENCHMARKS.md).
pub const WEIGHTS: Model = Model {
    intercept: -7.377,
    weights: [0.653, 2.206, 3.641, 4.123, 1.618],
};

/// How the models were fitted, as `explain` says it.
pub const MODEL_FITTED: &str =
    "logistic, fitted on the fit half of the man-page set by `cargo bench --bench relevance -- fit`";

/// The model without the tier (no cosine), fitted the same way.
pub const WEIGHTS_LEXICAL: Model = Model {
    intercept: -4.782,
    weights: [0.201, 2.511, 0.0, 4.810, 1.414],
};

/// An item is shown on a prompt when its estimate reaches this: on the
/// fit half, the lowest threshold (of 0.05 to 0.5 by 0.05) at which at
/// least 90% of the prompts about nothing get no block, with the tier on
/// (0.2 left 30 of 36 without one, 0.25 left 34); without the tier it
/// leaves 35 of 36.
pub const SHOW_AT: f64 = 0.25;

/// At most this many items on a prompt, across kinds, best estimate first.
pub const MAX_SHOWN: usize = 2;

/// The decision weighs the prompt's this many items most similar to it
/// (of the kinds scored on the task), as the model was fitted on.
pub const CANDIDATES: usize = 10;

/// Seed 000's task dimension A read from the estimate when the decision
/// decides a prompt: 1 point at [`SHOW_AT`], 2 at 0.3, 3 at 0.35; below
/// [`SHOW_AT`], or outside the [`CANDIDATES`], 0. Chosen on the man-page
/// set's fit half (`cargo bench --bench relevance`, real hook, tier on):
/// of the level sets tried (3 / 2 at 0.5 / 0.35, 0.45 / 0.35, 0.4 / 0.3,
/// 0.35 / 0.3, 0.3 / 0.275, all at [`SHOW_AT`]), the highest hit rate with
/// block precision at least 0.75 and at least 90% of the prompts about
/// nothing without a block, the more prompts without a block on a tie.
pub const TASK_LEVELS: [(f64, u8); 3] = [(0.35, 3), (0.3, 2), (SHOW_AT, 1)];

/// The task points of an estimate ([`TASK_LEVELS`]).
pub fn task_points(estimate: f64) -> u8 {
    TASK_LEVELS
        .iter()
        .find(|(level, _)| estimate >= *level)
        .map_or(0, |&(_, points)| points)
}

/// The text that stands for an item's subject: its title or name, a
/// lesson's (or other untitled item's) first sentence.
pub fn headline(item: &Item) -> &str {
    fn first_sentence(text: &str) -> &str {
        let end = text
            .char_indices()
            .find(|&(i, c)| {
                matches!(c, '.' | '!' | '?' | '\n')
                    && text[i + c.len_utf8()..]
                        .chars()
                        .next()
                        .is_none_or(char::is_whitespace)
            })
            .map_or(text.len(), |(i, _)| i);
        &text[..end]
    }
    let subject = crate::knowledge::view::subject(item);
    match &item.body {
        Body::Lesson(_) | Body::Experience(_) | Body::Observation(_) | Body::Exemplar(_) => {
            first_sentence(subject)
        }
        _ => subject,
    }
}

/// The share of `item`'s headline (by idf) that `prompt` names.
pub fn named(index: &TextIndex, prompt: &PromptTerms, item: &Item) -> f64 {
    let mut all = 0f32;
    let mut hit = 0f32;
    for term in index.term_ids_of(headline(item)) {
        let idf = index.idf_of_df(index.doc_freq(term));
        all += idf;
        if prompt.idf(term).is_some() {
            hit += idf;
        }
    }
    if all > 0.0 {
        f64::from(hit / all)
    } else {
        0.0
    }
}

/// The evidence for a candidate whose lexical similarity and cosine are
/// given, on a prompt whose best candidate's similarity is `best`.
pub fn evidence(
    index: &TextIndex,
    prompt: &PromptTerms,
    item: &Item,
    (lexical, cosine, similarity): (f64, f64, f64),
    best: f64,
) -> Evidence {
    Evidence {
        lexical,
        covered: lexical * f64::from(prompt.known_share()),
        cosine,
        named: named(index, prompt, item),
        lead: if best > 0.0 { similarity / best } else { 0.0 },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_estimate_rises_with_each_piece_of_evidence() {
        let base = Evidence::default();
        let p0 = WEIGHTS.probability(&base);
        for i in 0..FEATURES {
            let mut f = base.features();
            f[i] = 1.0;
            let e = Evidence {
                lexical: f[0],
                covered: f[1],
                cosine: f[2],
                named: f[3],
                lead: f[4],
            };
            assert!(WEIGHTS.probability(&e) >= p0, "{}", Evidence::NAMES[i]);
        }
    }
}
