//! The semantic tier: a static embedding model (model2vec format) embeds
//! each item when it loads and the query when it is asked; the cosine is
//! fused with the lexical similarity into the task similarity.
//!
//! - [`model`]: loading a model (the built-in one or a directory) and
//!   embedding a text;
//! - [`vector`]: int8 unit vectors and their dot product;
//! - [`index`]: every document's vector, scanned per query;
//! - [`fuse`]: the pure fusion of the two similarities;
//! - `wordpiece`: a WordPiece tokenizer with a compact vocabulary.

pub mod fuse;
pub mod index;
pub mod model;
pub mod vector;
mod wordpiece;

use std::sync::Arc;

pub use fuse::Fusion;
pub use index::VectorIndex;
pub use model::{Model, ModelError};
pub use vector::Vector;

use crate::text::{DocId, Similarities};

/// The most items a query matches by meaning alone (no shared word), the
/// closest first: a static model finds many texts alike, and each match
/// is a candidate every kind scores.
pub const MAX_MATCHED_BY_MEANING: usize = 16;

/// A model and the vectors it gave the live documents.
pub struct Semantic {
    model: Arc<Model>,
    vectors: VectorIndex,
    fusion: Fusion,
}

impl Semantic {
    /// The tier with `model` and no documents yet.
    pub fn new(model: Arc<Model>) -> Self {
        Semantic {
            vectors: VectorIndex::new(model.dims()),
            model,
            fusion: Fusion::DEFAULT,
        }
    }

    /// The model.
    pub fn model(&self) -> &Arc<Model> {
        &self.model
    }

    /// How the similarities are fused.
    pub fn fusion(&self) -> Fusion {
        self.fusion
    }

    /// Fuses differently (for the relevance benchmark).
    pub fn set_fusion(&mut self, fusion: Fusion) {
        self.fusion = fusion;
    }

    /// Sets a document's vector (`None`: it has none).
    pub fn set(&mut self, doc: DocId, vector: Option<&Vector>) {
        self.vectors.set(doc, vector);
    }

    /// How many documents have a vector.
    pub fn vectors(&self) -> usize {
        self.vectors.len()
    }

    /// Releases spare capacity.
    pub fn shrink_to_fit(&mut self) {
        self.vectors.shrink_to_fit();
    }

    /// The lexical similarities of `query`, fused with its cosines.
    pub fn fuse(&self, query: &str, lexical: Similarities) -> Similarities {
        self.fuse_cosines(lexical, self.cosines(query))
    }

    /// The cosine of `query` with every document, by [`DocId`]; `None`
    /// when no token of it is known.
    pub fn cosines(&self, query: &str) -> Option<Vec<f32>> {
        self.model.embed(query).map(|q| self.vectors.cosines(&q))
    }

    /// `lexical` fused with `cosines` ([`Semantic::cosines`]).
    pub fn fuse_cosines(&self, lexical: Similarities, cosines: Option<Vec<f32>>) -> Similarities {
        match cosines {
            Some(cosines) => lexical.fused_with(
                cosines,
                |l, c| self.fusion.fuse(l, c),
                MAX_MATCHED_BY_MEANING,
                self.fusion.floor,
            ),
            None => lexical,
        }
    }
}
